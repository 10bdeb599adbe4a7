/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * StarPU-MPI's load balancer: ranks compare their load at phase boundaries
 * and hand data (so the tasks that write them) from the more loaded ranks to
 * less loaded neighbours, with starpu_mpi_data_migrate(). The application
 * says who its neighbours are and which data may leave; a policy, chosen by
 * name ("heat"; STARPU_MPI_LB overrides the program's choice), decides when
 * and where. Phases follow the tags tasks get with STARPU_TAG_ONLY in
 * starpu_mpi_task_insert(). Link with `pkg-config --libs starpumpi-1.4`.
 */
#ifndef __STARPU_MPI_LB_H__
#define __STARPU_MPI_LB_H__

#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the application tells the load balancer. Both functions are called on the rank concerned. */
struct starpu_mpi_lb_conf
{
	/**
	 * Fills *neighbor_ids with a malloc'ed array of the ranks (of
	 * MPI_COMM_WORLD) this rank may exchange load and data with, and
	 * *nneighbors with their number (at least 1, this rank not counted).
	 * The relation may be one way. The balancer frees the array.
	 */
	void (*get_neighbors)(int **neighbor_ids, int *nneighbors);
	/**
	 * This rank is to hand data to rank dst_node: fills *handle_unit with
	 * a malloc'ed array of *nhandles handles it owns (the balancer frees
	 * it), or sets *nhandles to 0 to keep everything. The handles must be
	 * registered (starpu_mpi_data_register()) on dst_node too.
	 */
	void (*get_data_unit_to_migrate)(starpu_data_handle_t **handle_unit, int *nhandles, int dst_node);
};

/**
 * Starts load balancing with the policy named lb_policy_name ("heat"), or
 * the one STARPU_MPI_LB names when set ("help" there lists the policies and
 * leaves balancing off). Every rank calls it, after starpu_mpi_init*() and
 * with the same policy. Returns 0, or a negative errno said on stderr on
 * every rank (balancing then stays off): -ENOENT for an unknown policy,
 * -EINVAL for a missing name or a bad conf (NULL functions, no neighbours,
 * neighbours out of range), -EBUSY when one already runs.
 * (StarPU's returns nothing; a program ignoring the result is unaffected.)
 */
int starpu_mpi_lb_init(const char *lb_policy_name, struct starpu_mpi_lb_conf *);

/**
 * Stops load balancing: the data it moved go back to the ranks that owned
 * them before, so the application finds its data where it registered them.
 * Every rank calls it, after the tasks are done (starpu_task_wait_for_all())
 * and before unregistering the data. Returns 0 (also when balancing is off).
 */
int starpu_mpi_lb_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_MPI_LB_H__ */
