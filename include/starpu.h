/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Astrolabe: a task-based runtime speaking the StarPU 1.4 C API. */
#ifndef __STARPU_H__
#define __STARPU_H__

#include <stdlib.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#include <starpu_config.h>
#include <starpu_util.h>
#include <starpu_thread.h>
#include <starpu_thread_util.h>
#include <starpu_hash.h>
#include <starpu_stdlib.h>
#include <starpu_data.h>
#include <starpu_data_interfaces.h>
#include <starpu_data_filters.h>
#include <starpu_perfmodel.h>
#include <starpu_worker.h>
#include <starpu_task.h>
#include <starpu_task_list.h>
#include <starpu_task_util.h>
#include <starpu_sched_ctx.h>
#include <starpu_sched_ctx_hypervisor.h>
#include <starpu_scheduler.h>
#include <starpu_bitmap.h>
#include <starpu_tree.h>
#include <starpu_profiling.h>
#include <starpu_rand.h>
#include <starpu_fxt.h>
#include <starpu_profiling_tool.h>
#include <starpu_perf_steering.h>
#include <starpu_perf_monitoring.h>
#include <starpu_opencl.h>
#include <starpu_cuda.h>
#include <starpu_cublas.h>
#include <starpu_hipblas.h>
#include <starpu_cusparse.h>
#include <starpu_bound.h>
#include <starpu_parallel_worker.h>
#include <starpu_disk.h>
#include <starpu_driver.h>
#include <starpu_simgrid_wrap.h>
/* StarPU 1.4's other headers (wrappers of the declarations above, or empty where
 * starpu_config.h leaves their feature out). */
#include <starpu_task_dep.h>
#include <starpu_helper.h>
#include <starpu_expert.h>
#include <starpu_hip.h>
#include <starpu_max_fpga.h>
#include <starpu_openmp.h>
#include <starpu_sink.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Magic value checked by starpu_init() to tell an initialised conf. */
#define STARPU_CONF_MAGIC 0x2e2e2e2e

/**
 * Runtime configuration given to starpu_init(). Initialise it with
 * starpu_conf_init(); a field left at -1 (or NULL) takes the environment
 * variable or the default. Environment variables override the fields unless
 * precedence_over_environment_variables is set.
 */
struct starpu_conf
{
	int magic;
	int will_use_mpi;
	/** Policy name, as STARPU_SCHED. */
	const char *sched_policy_name;
	/** Policy given directly (takes priority over sched_policy_name). */
	struct starpu_sched_policy *sched_policy;
	void (*sched_policy_callback)(unsigned);
	/** Number of CPU workers, as STARPU_NCPU; -1 for the default. */
	int ncpus;
	int reserve_ncpus;
	/** Number of CUDA workers, as STARPU_NCUDA; -1 for the default. */
	int ncuda;
	int nopencl;
	int nmax_fpga;
	int nmpi_ms;
	int ntcpip_ms;
	int nhip;
	unsigned use_explicit_workers_bindid;
	unsigned workers_bindid[STARPU_NMAXWORKERS];
	unsigned use_explicit_workers_cuda_gpuid;
	unsigned workers_cuda_gpuid[STARPU_NMAXWORKERS];
	int bus_calibrate;
	int calibrate;
	int single_combined_worker;
	int disable_asynchronous_copy;
	int disable_asynchronous_cuda_copy;
	int enable_map;
	/** When non-zero, the fields above win over the STARPU_* variables. */
	int precedence_over_environment_variables;
	/** Install signal handlers (STARPU_CATCH_SIGNALS); -1 for the default. */
	int catch_signals;
	/** Start collecting performance counters at starpu_init() (see starpu_perf_counter_collection_start()). */
	unsigned start_perf_counter_collection;
	/** Start the workers paused: starpu_resume() lets them run. */
	int start_on_pause;
	void (*callback_worker_going_to_sleep)(unsigned workerid);
	void (*callback_worker_waking_up)(unsigned workerid);
	int global_sched_ctx_min_priority;
	int global_sched_ctx_max_priority;
	uint64_t trace_buffer_size;
	int driver_spinning_backoff_min;
	int driver_spinning_backoff_max;
	/** Workers the runtime starts no thread for: the application runs their
	 * loops (starpu_driver_run(), starpu_driver.h). NULL: none. */
	struct starpu_driver *not_launched_drivers;
	/** Number of entries of not_launched_drivers. */
	unsigned n_not_launched_drivers;
	/** Room for growth. */
	void *reserved[6];
};

/** Fills conf with the defaults (every count -1: "decide at init"). */
int starpu_conf_init(struct starpu_conf *conf);
/** Sets every worker count of conf to 0, so only explicitly asked workers start. */
int starpu_conf_noworker(struct starpu_conf *conf);
/** Starts the runtime; conf may be NULL. Returns 0, or -ENODEV when no worker can start. Nested calls are reference-counted. */
int starpu_init(struct starpu_conf *conf) STARPU_WARN_UNUSED_RESULT;
/** As starpu_init(); argc/argv are accepted for compatibility and left unchanged. */
int starpu_initialize(struct starpu_conf *user_conf, int *argc, char ***argv);
/** Returns 1 when the runtime is initialised. */
int starpu_is_initialized(void);
/** Waits until a concurrent starpu_init() has finished. */
void starpu_wait_initialized(void);
/** Stops the runtime once the last starpu_init() reference is dropped: waits
 * for every submitted task (their callbacks may still submit more; other
 * threads' submissions are refused with -ESHUTDOWN from the moment it starts).
 * Refused, with a message, from a task, a callback, a tool callback or a
 * counter listener. */
void starpu_shutdown(void);
/** Suspends the workers after their current task. Refused, with a message,
 * from a task, a callback, a tool callback or a counter listener. */
void starpu_pause(void);
/** Lets paused workers run again. */
void starpu_resume(void);
/** Returns 1 when the workers are paused. */
int starpu_is_paused(void);
/** Flag of starpu_get_next_bindid() and starpu_bind_thread_on(): the thread
 * keeps its processing unit busy and should have it alone. */
#define STARPU_THREAD_ACTIVE (1 << 0)
/**
   A processing unit (hwloc logical index) for a thread of the program, to
   give to starpu_bind_thread_on(): the first of preferred (npreferred
   entries, may be 0), then of all units, that no worker and no active
   thread holds; failing that one no active thread holds. With
   STARPU_THREAD_ACTIVE the unit is kept for the caller: later calls do
   not give it again. Returns 0 and says so before starpu_init().
*/
unsigned starpu_get_next_bindid(unsigned flags, unsigned *preferred, unsigned npreferred);
/**
   Binds the calling thread to processing unit cpuid (unless
   STARPU_WORKERS_NOBIND), under name (one name per thread: binding again
   under the same name is quiet). Returns 0; -1 with a warning when a
   worker or another thread holds the unit in a way that makes them share
   it (the thread is bound all the same), or with an error when cpuid does
   not exist or StarPU is not initialised (not bound).
*/
int starpu_bind_thread_on(int cpuid, unsigned flags, const char *name);
/** Binds the calling thread where worker workerid runs: its processing unit,
 * or the whole machine for a worker bound nowhere (unless
 * STARPU_WORKERS_NOBIND). An error, and no binding, for a worker that does
 * not exist. */
void starpu_bind_thread_on_worker(unsigned workerid);
/** Binds the calling thread where the program's main thread runs: the
 * processing units no worker is bound on, or the whole machine when the
 * workers take them all (unless STARPU_WORKERS_NOBIND). */
void starpu_bind_thread_on_main(void);
/** Binds the calling thread to processing unit cpuid (an hwloc logical
 * index), without reserving it as starpu_bind_thread_on() does (unless
 * STARPU_WORKERS_NOBIND). An error, and no binding, for a unit that does
 * not exist. */
void starpu_bind_thread_on_cpu(int cpuid);
/** Fills the version numbers of the StarPU API this runtime speaks. */
void starpu_get_version(int *major, int *minor, int *release);
/** Prints the topology the runtime found. */
void starpu_topology_print(FILE *output);
/** Returns 1 when starpu_conf.disable_asynchronous_copy asked for synchronous copies only. */
int starpu_asynchronous_copy_disabled(void);
/** Returns 1 when starpu_conf.disable_asynchronous_cuda_copy asked for synchronous CUDA copies. */
int starpu_asynchronous_cuda_copy_disabled(void);
/** Prints the bus and worker profiling summaries (as STARPU_BUS_STATS and STARPU_WORKER_STATS do at shutdown). */
void starpu_display_stats(void);

#ifdef __cplusplus
}
#endif

#include <starpu_deprecated_api.h>

#endif /* __STARPU_H__ */
