/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Building a task from a starpu_task_insert() argument list, for the
 * libraries layered on the runtime (StarPU-MPI, mpi/): they read the task's
 * data and the arguments the single-process runtime ignores.
 */
#ifndef __ASTROLABE_TASK_BUILD_H__
#define __ASTROLABE_TASK_BUILD_H__

#include <stdarg.h>
#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The starpu_task_insert() arguments only StarPU-MPI reads. */
struct astro_mpi_task_args
{
	/** STARPU_EXECUTE_ON_NODE's rank; -1 when not given. */
	int execute_on_node;
	/** STARPU_EXECUTE_ON_DATA's handle; NULL when not given. */
	starpu_data_handle_t execute_on_data;
	/** STARPU_NODE_SELECTION_POLICY's policy; -1 when not given. */
	int node_selection_policy;
	/** Room for growth: zero. */
	void *reserved[4];
};

/**
 * Builds the task starpu_task_insert(cl, ...) would submit, without
 * submitting it, and fills *mpi (when not NULL) with the MPI-only arguments.
 * caller names the public function in messages. With mpi, a NULL data
 * handle is kept in the task (StarPU-MPI: a rank passes NULL for data it
 * does not hold), for the caller to judge before any submission.
 * NULL on a bad argument list
 * (said on stderr); the task is freed with starpu_task_destroy() if never submitted.
 */
struct starpu_task *astro_task_build_v(const char *caller, struct starpu_codelet *cl, struct astro_mpi_task_args *mpi, va_list ap);

/**
 * The codelets starpu_data_set_reduction_methods() gave handle (NULL when
 * none), for StarPU-MPI's reductions across ranks.
 */
void astro_data_get_reduction_methods(starpu_data_handle_t handle, struct starpu_codelet **redux_cl, struct starpu_codelet **init_cl);

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_TASK_BUILD_H__ */
