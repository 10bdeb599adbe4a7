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
	/** When non-zero, the fields below win over the STARPU_* variables. */
	int precedence_over_environment_variables;
	/** Number of CPU workers, as STARPU_NCPU; -1 for the default. */
	int ncpus;
	int reserve_ncpus;
	/** Number of CUDA workers, as STARPU_NCUDA; -1 for the default. */
	int ncuda;
	int nhip;
	int nopencl;
	int nmax_fpga;
	int nmpi_ms;
	int ntcpip_ms;
	unsigned use_explicit_workers_bindid;
	unsigned workers_bindid[STARPU_NMAXWORKERS];
	/** Choosing devices by number is not supported: a non-zero
	 * use_explicit_workers_*_gpuid or *_deviceid is refused at starpu_init()
	 * with a warning, and the devices are used in their order (limit them
	 * with STARPU_NCUDA, STARPU_NOPENCL...). */
	unsigned use_explicit_workers_cuda_gpuid;
	unsigned workers_cuda_gpuid[STARPU_NMAXWORKERS];
	unsigned use_explicit_workers_hip_gpuid;
	unsigned workers_hip_gpuid[STARPU_NMAXWORKERS];
	unsigned use_explicit_workers_opencl_gpuid;
	unsigned workers_opencl_gpuid[STARPU_NMAXWORKERS];
	unsigned use_explicit_workers_max_fpga_deviceid;
	unsigned workers_max_fpga_deviceid[STARPU_NMAXWORKERS];
	/** Maxeler FPGA files to load: this build has no Maxeler FPGA driver (a
	 * non-NULL value is said at starpu_init() and left unused). */
	void *max_fpga_load;
	unsigned use_explicit_workers_mpi_ms_deviceid;
	unsigned workers_mpi_ms_deviceid[STARPU_NMAXWORKERS];
	int bus_calibrate;
	int calibrate;
	/** As STARPU_DATA_LOCALITY_ENFORCE: not supported (a value of 1 is said at starpu_init()). */
	int data_locality_enforce;
	int single_combined_worker;
	/** As STARPU_DISABLE_ASYNCHRONOUS_COPY: every copy between memory nodes is synchronous; -1 for the default (0). */
	int disable_asynchronous_copy;
	/** As STARPU_DISABLE_ASYNCHRONOUS_CUDA_COPY: copies to and from CUDA devices are synchronous. */
	int disable_asynchronous_cuda_copy;
	/** As STARPU_DISABLE_ASYNCHRONOUS_HIP_COPY (this build has no HIP driver). */
	int disable_asynchronous_hip_copy;
	/** As STARPU_DISABLE_ASYNCHRONOUS_OPENCL_COPY: copies to and from OpenCL devices are synchronous. */
	int disable_asynchronous_opencl_copy;
	/** As STARPU_DISABLE_ASYNCHRONOUS_MPI_MS_COPY (this build has no MPI master-slave driver). */
	int disable_asynchronous_mpi_ms_copy;
	/** As STARPU_DISABLE_ASYNCHRONOUS_TCPIP_MS_COPY (this build has no TCP/IP master-slave driver). */
	int disable_asynchronous_tcpip_ms_copy;
	/** As STARPU_DISABLE_ASYNCHRONOUS_MAX_FPGA_COPY (this build has no Maxeler FPGA driver). */
	int disable_asynchronous_max_fpga_copy;
	/** As STARPU_ENABLE_MAP: mapping memory between nodes is not supported
	 * (data is copied); asking for it is said at starpu_init(), and
	 * starpu_map_enabled() returns 0. */
	int enable_map;
	/** CUDA/OpenGL interoperability: not supported (a non-empty array is said at starpu_init()). */
	unsigned *cuda_opengl_interoperability;
	unsigned n_cuda_opengl_interoperability;
	/** Workers the runtime starts no thread for: the application runs their
	 * loops (starpu_driver_run(), starpu_driver.h). NULL: none. */
	struct starpu_driver *not_launched_drivers;
	/** Number of entries of not_launched_drivers. */
	unsigned n_not_launched_drivers;
	uint64_t trace_buffer_size;
	int global_sched_ctx_min_priority;
	int global_sched_ctx_max_priority;
	void (*callback_worker_going_to_sleep)(unsigned workerid);
	void (*callback_worker_waking_up)(unsigned workerid);
	/** Install signal handlers (STARPU_CATCH_SIGNALS); -1 for the default. */
	int catch_signals;
	/** Start collecting performance counters at starpu_init() (see starpu_perf_counter_collection_start()). */
	unsigned start_perf_counter_collection;
	int driver_spinning_backoff_min;
	int driver_spinning_backoff_max;
	/** As STARPU_CUDA_ONLY_FAST_ALLOC_OTHER_MEMNODES: not supported (a value of 1 is said at starpu_init()). */
	int cuda_only_fast_alloc_other_memnodes;
	/** Start the workers paused: starpu_resume() lets them run. */
	int start_on_pause;
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
/** Returns 1 when copies to and from HIP devices are synchronous (starpu_conf.disable_asynchronous_hip_copy, or the general switch). */
int starpu_asynchronous_hip_copy_disabled(void);
/** Returns 1 when copies to and from OpenCL devices are synchronous (starpu_conf.disable_asynchronous_opencl_copy, or the general switch). */
int starpu_asynchronous_opencl_copy_disabled(void);
/** Returns 1 when copies to and from Maxeler FPGAs are synchronous (starpu_conf.disable_asynchronous_max_fpga_copy, or the general switch). */
int starpu_asynchronous_max_fpga_copy_disabled(void);
/** Returns 1 when copies to and from MPI master-slave devices are synchronous (starpu_conf.disable_asynchronous_mpi_ms_copy, or the general switch). */
int starpu_asynchronous_mpi_ms_copy_disabled(void);
/** Returns 1 when copies to and from TCP/IP master-slave devices are synchronous (starpu_conf.disable_asynchronous_tcpip_ms_copy, or the general switch). */
int starpu_asynchronous_tcpip_ms_copy_disabled(void);
/** Returns 1 when copies to and from memory nodes of the given kind are
 * synchronous; -EINVAL, with a message, for a kind that is not a memory
 * node kind. */
int starpu_asynchronous_copy_disabled_for(enum starpu_node_kind kind);
/** Returns 1 when memory mapping between memory nodes is on: never in this
 * build, which copies data between nodes (asking for it with
 * starpu_conf.enable_map or STARPU_ENABLE_MAP is said at starpu_init()). */
int starpu_map_enabled(void);
/** Prints the bus and worker profiling summaries (as STARPU_BUS_STATS and STARPU_WORKER_STATS do at shutdown). */
void starpu_display_stats(void);

#ifdef __cplusplus
}
#endif

#include <starpu_deprecated_api.h>

#endif /* __STARPU_H__ */
