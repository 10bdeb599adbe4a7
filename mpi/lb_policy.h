/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The load balancer's policies (starpu_mpi_lb.h) and what lb.c lends them
 * (never installed). */
#ifndef __ASTRO_MPI_LB_POLICY_H__
#define __ASTRO_MPI_LB_POLICY_H__

#include "mpi_private.h"
#include <starpu_mpi_lb.h>

/* A policy. Every rank calls each function at the same point. */
struct _astro_mpi_lb_policy
{
	const char *name;
	/* Starts on comm (the balancer's own, a duplicate of MPI_COMM_WORLD):
	 * 0, or a negative errno said, the same on every rank. */
	int (*init)(const struct starpu_mpi_lb_conf *conf, MPI_Comm comm);
	/* starpu_mpi_task_insert() inserted a task with tag_id tag (0: none), run here when local. */
	void (*inserted)(starpu_tag_t tag, bool local);
	/* Gives back what it moved, and stops. */
	void (*shutdown)(void);
};

extern const struct _astro_mpi_lb_policy _astro_mpi_lb_heat;

/* A nonblocking MPI call of a policy: start(arg, &request). */
struct _astro_mpi_lb_call
{
	int (*start)(void *arg, MPI_Request *req);
	void *arg;
};
/* Makes the n calls on the progression thread (no other thread calls MPI
 * meanwhile) and waits for them all: 0, or -EIO said (naming fn). */
int _astro_mpi_lb_run(const struct _astro_mpi_lb_call *calls, int n, const char *fn);
/* The smallest of every rank's v over comm (collective): what all agree on (-EIO, said, when MPI fails). */
int _astro_mpi_lb_agree_min(MPI_Comm comm, int v, const char *fn);

#endif /* __ASTRO_MPI_LB_POLICY_H__ */
