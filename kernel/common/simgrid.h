/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The thread layer of a simulation build, between its files: simgrid.c
 * (locks, conditions, semaphores, futexes) waits with what simgrid_actors.c
 * (the actors, their thread-locals, sleeps, transfers) gives each actor.
 */
#ifndef ASTRO_COMMON_SIMGRID_H
#define ASTRO_COMMON_SIMGRID_H

#include "common/common.h"
#include <simgrid/semaphore.h>

/* A thread that waits, in the queue of what it waits for: each actor has one. */
struct _starpu_sim_waiter
{
	struct _starpu_sim_waiter *next;
	sg_sem_t sem;		/* released once by whoever hands it what it waits for */
	int *futex;		/* the address it waits on, in the futex queue */
	bool writer;		/* in a read-write lock's queue: waits to write */
};

/* The calling actor's waiter (before the simulation runs: the one of the code outside it). */
struct _starpu_sim_waiter *_astro_sim_waiter(void);
/* The same, ready to be queued and to block: what names the caller when it is no actor. */
struct _starpu_sim_waiter *_astro_sim_ready_to_wait(const char *what);
/* Blocks until another actor hands w what it waits for (_astro_sim_hand_over). */
void _astro_sim_block(struct _starpu_sim_waiter *w);
/* The same, or until the virtual date deadline (seconds): true when the date came first. */
bool _astro_sim_block_until(struct _starpu_sim_waiter *w, double deadline);
void _astro_sim_hand_over(struct _starpu_sim_waiter *w);

/* Runs fn(argc, argv) as the simulation's actor "main" on the host named where (or the first
 * host) until the simulation ends; returns what fn returned. */
int _astro_sim_run_main(int (*fn)(int, char **), int argc, char **argv, const char *where);

/* Under smpirun (main() called in a rank's actor): runs fn(argc, argv) in a new actor "main" on
 * the rank's host, serves the MPI calls handed to the rank's actor until it returns. */
int _astro_sim_run_rank(int (*fn)(int, char **), int argc, char **argv);

#endif
