/*
 * Internals of the performance-monitoring framework, shared by its files:
 * perf_counters.c (registry, sets, listeners, samples, the StarPU API) and
 * task_counters.c (the runtime's own counters, fed by the observation path)
 * and mpi_counters.c (StarPU-MPI's message counters, fed the same way).
 * A framework below the kernel's rooms: it uses the public headers and the
 * kernel's common room only (common/common.h: a listener runs in the call
 * context _ASTRO_CTX_LISTENER, so that the kernel refuses blocking calls from
 * there); the kernel reaches it through the three hooks below.
 */
#ifndef __ASTRO_COUNTERS_FRAMEWORK_H__
#define __ASTRO_COUNTERS_FRAMEWORK_H__

#include <stdbool.h>
#include <starpu.h>
#include <astrolabe/counters.h>
#include <astrolabe/observe.h>
#include <astrolabe/plugin.h>
#include "common/common.h"

/* ----------------------------------------------------- kernel hooks */

/* starpu_init(), before the plugins load: opens registration, registers the runtime's counters. */
void _astro_counters_init(void);
/* starpu_init(), once the workers run: closes registration, makes the samples, applies conf. */
void _astro_counters_start(int start_collection);
/* starpu_shutdown(), once the workers stopped: detaches listeners, drops the registry. */
void _astro_counters_shutdown(void);

/* ------------------------------------- framework -> counter modules */

/* Refresh a sample (updaters, then its listener) if a listener is attached. */
void _astro_counters_refresh_global(void);
void _astro_counters_refresh_worker(int workerid);
void _astro_counters_refresh_codelet(struct starpu_codelet *cl);

/* When collection starts, in starpu_timing_now() microseconds: moments
 * stamped earlier belong to an earlier collection period. */
extern double _astro_counters_since;

/* -------------------------------------- task_counters.c -> framework */

/* Registers the runtime's own counters and updaters (module "kernel"). */
void _astro_task_counters_register(void);
/* Follows the observation path while collection is on, and only then. */
void _astro_task_counters_collect(bool on);
/* Forgets the observation subscription (the kernel drops them all at shutdown). */
void _astro_task_counters_shutdown(void);

/* --------------------------------------- mpi_counters.c -> framework */

/* StarPU-MPI's message counters (module "mpi"): registered, switched and
 * forgotten with the runtime's own, at the same moments. */
void _astro_mpi_counters_register(void);
void _astro_mpi_counters_collect(bool on);
void _astro_mpi_counters_shutdown(void);

/* What one worker executed of one codelet: written by that worker only, summed when read. */
struct astro_cl_worker_values
{
	int64_t total_executed;
	double cumul_execution_time;
} __attribute__((aligned(64)));

/*
 * What the runtime counts for one codelet, reached from the codelet by
 * cl->perf_counter_values while a per-codelet listener is set. The gauges
 * share one cache line (a task that becomes ready on one worker and starts
 * on another moves one line); what workers execute is counted per worker,
 * without locked instructions.
 */
struct starpu_perf_counter_sample_cl_values
{
	int64_t total_submitted __attribute__((aligned(64)));
	int64_t current_submitted;
	int64_t peak_submitted;
	int64_t current_ready;
	int64_t peak_ready;
	struct astro_cl_worker_values executed[STARPU_NMAXWORKERS];
};

#endif /* __ASTRO_COUNTERS_FRAMEWORK_H__ */
