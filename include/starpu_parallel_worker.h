/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parallel workers of the StarPU API: groups of CPU workers, one per hwloc object of a level (or parts of one), each a context nested in a context of the whole machine. */
#ifndef __STARPU_PARALLEL_WORKER_H__
#define __STARPU_PARALLEL_WORKER_H__

#include <starpu_config.h>

#if defined(STARPU_PARALLEL_WORKER) && defined(STARPU_HAVE_HWLOC)

#include <hwloc.h>
#include <starpu_task_util.h>
#include <starpu_util.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Options of starpu_parallel_worker_init(), each followed by its value (but
 * _PARTITION_ONE and _NEW); the list ends with 0. An option applies to the
 * machine, or after _PARTITION_ONE to the next hwloc object (a group), or
 * after _NEW to the next parallel worker of the current group.
 */
/** The least number of parallel workers per group (int), with _MAX_NB. */
#define STARPU_PARALLEL_WORKER_MIN_NB (1 << STARPU_MODE_SHIFT)
/** The most parallel workers per group (int), with _MIN_NB. */
#define STARPU_PARALLEL_WORKER_MAX_NB (2 << STARPU_MODE_SHIFT)
/** The number of parallel workers per group (int): wins over _MIN_NB and _MAX_NB. */
#define STARPU_PARALLEL_WORKER_NB (3 << STARPU_MODE_SHIFT)
/** Between _MIN_NB and _MAX_NB, prefer the fewer (int, 0 or 1; default: the more). */
#define STARPU_PARALLEL_WORKER_PREFERE_MIN (4 << STARPU_MODE_SHIFT)
/** Between _MIN_NB and _MAX_NB, prefer a number that splits the group's cores evenly (int, 0 or 1). */
#define STARPU_PARALLEL_WORKER_KEEP_HOMOGENEOUS (5 << STARPU_MODE_SHIFT)
/** The policy (const char *) of the context of the whole machine; default: the global context's. */
#define STARPU_PARALLEL_WORKER_POLICY_NAME (6 << STARPU_MODE_SHIFT)
/** The same, as a policy (struct starpu_sched_policy *). */
#define STARPU_PARALLEL_WORKER_POLICY_STRUCT (7 << STARPU_MODE_SHIFT)
/** A function (void (*)(void *)) each parallel worker's master runs once at creation, as the prologue of a task. */
#define STARPU_PARALLEL_WORKER_CREATE_FUNC (8 << STARPU_MODE_SHIFT)
/** Its argument (void *). */
#define STARPU_PARALLEL_WORKER_CREATE_FUNC_ARG (9 << STARPU_MODE_SHIFT)
/** The thread team the tasks run (enum starpu_parallel_worker_types): which prologue runs at creation without _CREATE_FUNC. */
#define STARPU_PARALLEL_WORKER_TYPE (10 << STARPU_MODE_SHIFT)
/** Whether the other workers of a parallel worker keep running tasks (unsigned; default 0: they are kept for its master). */
#define STARPU_PARALLEL_WORKER_AWAKE_WORKERS (11 << STARPU_MODE_SHIFT)
/** No value: the options that follow apply to the next group (hwloc object) only. */
#define STARPU_PARALLEL_WORKER_PARTITION_ONE (12 << STARPU_MODE_SHIFT)
/** No value: a parallel worker of its own in the current group; the options that follow apply to it. */
#define STARPU_PARALLEL_WORKER_NEW (13 << STARPU_MODE_SHIFT)
/** The number of cores (unsigned) of the parallel worker made by the last _NEW. */
#define STARPU_PARALLEL_WORKER_NCORES (14 << STARPU_MODE_SHIFT)

/** The thread teams a parallel worker's master may run its tasks with. */
enum starpu_parallel_worker_types
{
	STARPU_PARALLEL_WORKER_OPENMP,           /**< OpenMP: starpu_openmp_prologue() */
	STARPU_PARALLEL_WORKER_INTEL_OPENMP_MKL, /**< MKL over Intel's OpenMP: the same prologue */
};

/** What starpu_parallel_worker_init() made. */
struct starpu_parallel_worker_config;

/**
 * Groups the CPU workers by the hwloc objects of type parallel_worker_level
 * (HWLOC_OBJ_PACKAGE, HWLOC_OBJ_NUMANODE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_CORE...),
 * splits each group into parallel workers as the options say (one per group by
 * default), creates a context of every worker (the options' policy) and, nested
 * in it, a context without a policy per parallel worker: a task submitted to
 * the first runs on a parallel worker's master, with the parallel worker's
 * cores (starpu_sched_ctx_get_available_cpuids). Makes the first context the
 * calling thread's (starpu_sched_ctx_set_context). Returns NULL with a message
 * on bad options or when there is no CPU worker.
 */
struct starpu_parallel_worker_config *starpu_parallel_worker_init(hwloc_obj_type_t parallel_worker_level, ...);
/** Deletes the contexts of parallel_workers (once their tasks ended) and frees it; the calling thread's context is the global one again. 0, or -1 for NULL. */
int starpu_parallel_worker_shutdown(struct starpu_parallel_worker_config *parallel_workers);
/** Prints the parallel workers and their processing units (hwloc logical indexes) on stdout. 0, or -1 for NULL. */
int starpu_parallel_worker_print(struct starpu_parallel_worker_config *parallel_workers);

/**
 * A prologue (STARPU_PROLOGUE_CALLBACK_POP) for tasks of a parallel worker that
 * run an OpenMP team: binds the master to the parallel worker's cores (to its
 * own when the task is not possibly_parallel) and sizes the OpenMP team to
 * them (omp_set_num_threads, when the program links an OpenMP runtime).
 */
void starpu_openmp_prologue(void *);
#define starpu_intel_openmp_mkl_prologue starpu_openmp_prologue
/** StarPU 1.4's names of the same prologue, which programs pass as a value
    (STARPU_PROLOGUE_CALLBACK_POP, &starpu_parallel_worker_openmp_prologue). */
#define starpu_parallel_worker_openmp_prologue starpu_openmp_prologue
#define starpu_parallel_worker_intel_openmp_mkl_prologue starpu_openmp_prologue

/** @name StarPU 1.3's names (deprecated), which StarPU 1.4 keeps
 * @{ */
#define STARPU_CLUSTER_MIN_NB STARPU_PARALLEL_WORKER_MIN_NB
#define STARPU_CLUSTER_MAX_NB STARPU_PARALLEL_WORKER_MAX_NB
#define STARPU_CLUSTER_NB STARPU_PARALLEL_WORKER_NB
#define STARPU_CLUSTER_PREFERE_MIN STARPU_PARALLEL_WORKER_PREFERE_MIN
#define STARPU_CLUSTER_KEEP_HOMOGENEOUS STARPU_PARALLEL_WORKER_KEEP_HOMOGENEOUS
#define STARPU_CLUSTER_POLICY_NAME STARPU_PARALLEL_WORKER_POLICY_NAME
#define STARPU_CLUSTER_POLICY_STRUCT STARPU_PARALLEL_WORKER_POLICY_STRUCT
#define STARPU_CLUSTER_CREATE_FUNC STARPU_PARALLEL_WORKER_CREATE_FUNC
#define STARPU_CLUSTER_CREATE_FUNC_ARG STARPU_PARALLEL_WORKER_CREATE_FUNC_ARG
#define STARPU_CLUSTER_TYPE STARPU_PARALLEL_WORKER_TYPE
#define STARPU_CLUSTER_AWAKE_WORKERS STARPU_PARALLEL_WORKER_AWAKE_WORKERS
#define STARPU_CLUSTER_PARTITION_ONE STARPU_PARALLEL_WORKER_PARTITION_ONE
#define STARPU_CLUSTER_NEW STARPU_PARALLEL_WORKER_NEW
#define STARPU_CLUSTER_NCORES STARPU_PARALLEL_WORKER_NCORES

/** @deprecated enum starpu_parallel_worker_types under its old name. */
enum starpu_cluster_types
{
	STARPU_CLUSTER_OPENMP,           /**< STARPU_PARALLEL_WORKER_OPENMP */
	STARPU_CLUSTER_INTEL_OPENMP_MKL, /**< STARPU_PARALLEL_WORKER_INTEL_OPENMP_MKL */
};

/** @deprecated struct starpu_parallel_worker_config under its old name. */
struct starpu_cluster_machine;
/** @deprecated starpu_parallel_worker_init(). */
struct starpu_cluster_machine *starpu_cluster_machine(hwloc_obj_type_t cluster_level, ...) STARPU_DEPRECATED;
/** @deprecated starpu_parallel_worker_shutdown(). */
int starpu_uncluster_machine(struct starpu_cluster_machine *clusters) STARPU_DEPRECATED;
/** @deprecated starpu_parallel_worker_print(). */
int starpu_cluster_print(struct starpu_cluster_machine *clusters) STARPU_DEPRECATED;
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* STARPU_PARALLEL_WORKER && STARPU_HAVE_HWLOC */

#endif /* __STARPU_PARALLEL_WORKER_H__ */
