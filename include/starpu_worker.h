/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Workers of the StarPU API: queries and worker collections. */
#ifndef __STARPU_WORKER_H__
#define __STARPU_WORKER_H__

#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <starpu_config.h>
#include <starpu_thread.h>
#ifdef STARPU_HAVE_HWLOC
#include <hwloc.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_task;

/** Kinds of worker. */
enum starpu_worker_archtype
{
	STARPU_CPU_WORKER = 0,
	STARPU_CUDA_WORKER = 1,
	STARPU_OPENCL_WORKER = 2,
	STARPU_MAX_FPGA_WORKER = 4,
	STARPU_MPI_MS_WORKER = 5,
	STARPU_TCPIP_MS_WORKER = 6,
	STARPU_HIP_WORKER = 7,
	STARPU_NARCH = 8,
	STARPU_ANY_WORKER = 255
};

#define STARPU_UNKNOWN_WORKER ((enum starpu_worker_archtype)-1)

/** Kinds of worker collection. */
enum starpu_worker_collection_type
{
	STARPU_WORKER_TREE,
	STARPU_WORKER_LIST
};

/** Iterator over a worker collection. */
struct starpu_sched_ctx_iterator
{
	int cursor;
	void *value;
	void *possible_value;
	char visited[STARPU_NMAXWORKERS];
	int possibly_parallel;
};

/** The workers of a scheduling context. */
struct starpu_worker_collection
{
	int *workerids;
	void *collection_private;
	unsigned nworkers;
	void *unblocked_workers;
	unsigned nunblocked_workers;
	void *masters;
	unsigned nmasters;
	char present[STARPU_NMAXWORKERS];
	char is_unblocked[STARPU_NMAXWORKERS];
	char is_master[STARPU_NMAXWORKERS];
	enum starpu_worker_collection_type type;
	unsigned (*has_next)(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it);
	int (*get_next)(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it);
	int (*add)(struct starpu_worker_collection *workers, int worker);
	int (*remove)(struct starpu_worker_collection *workers, int worker);
	void (*init)(struct starpu_worker_collection *workers);
	void (*deinit)(struct starpu_worker_collection *workers);
	void (*init_iterator)(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it);
	void (*init_iterator_for_parallel_tasks)(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it, struct starpu_task *task);
};

/** Number of workers. */
unsigned starpu_worker_get_count(void);
/** Number of CPU workers. */
unsigned starpu_cpu_worker_get_count(void);
/** Number of CUDA workers (0 when no CUDA driver is loaded). */
unsigned starpu_cuda_worker_get_count(void);
/** Number of OpenCL workers. */
unsigned starpu_opencl_worker_get_count(void);
/** Number of HIP workers (0 unless a driver provides them). */
unsigned starpu_hip_worker_get_count(void);
/** Number of Maxeler FPGA workers (0 unless a driver provides them). */
unsigned starpu_max_fpga_worker_get_count(void);
/** Number of MPI master-slave workers (0 unless a driver provides them). */
unsigned starpu_mpi_ms_worker_get_count(void);
/** Number of TCP/IP master-slave workers (0 unless a driver provides them). */
unsigned starpu_tcpip_ms_worker_get_count(void);
/** Number of combined workers (groups of CPU workers for parallel tasks). */
unsigned starpu_combined_worker_get_count(void);
/** 1 when id is a combined worker's (starpu_worker_get_count() and up), 0 for a worker or no worker. */
unsigned starpu_worker_is_combined_worker(int id);
/** Number of workers of type. */
int starpu_worker_get_count_by_type(enum starpu_worker_archtype type);
/** Id of the calling worker, -1 from a thread that is not a worker. */
int starpu_worker_get_id(void);
/** As starpu_worker_get_id(), asserting the caller is a worker. */
unsigned starpu_worker_get_id_check(void);
#define STARPU_NONCOMBINED_WORKER_ID starpu_worker_get_id()
/** Inside a parallel task: the combined worker running it (else the worker's id), its size (else 1) and the caller's rank in it (else 0). */
int starpu_combined_worker_get_id(void);
/** Number of workers of the combined worker running the calling thread's parallel task (1 outside one). */
int starpu_combined_worker_get_size(void);
/** Rank of the calling worker in its combined worker (0 outside one). */
int starpu_combined_worker_get_rank(void);
/** Makes a combined worker of nworkers CPU workers (the first one runs rank 0); returns its id (starpu_worker_get_count() and up), or a negative errno with a message. */
int starpu_combined_worker_assign_workerid(int nworkers, int workerid_array[]);
/** The size and the workers (owned by the runtime) of combined worker workerid: 0, or -EINVAL with a message. */
int starpu_combined_worker_get_description(int workerid, int *worker_size, int **combined_workerid);
/** Fills workerids with up to maxsize workers of type; returns how many. */
unsigned starpu_worker_get_ids_by_type(enum starpu_worker_archtype type, int *workerids, unsigned maxsize);
/** The num-th worker of type, -1 if none. */
int starpu_worker_get_by_type(enum starpu_worker_archtype type, int num);
/** The worker of type running on device devid, -1 if none. */
int starpu_worker_get_by_devid(enum starpu_worker_archtype type, int devid);
/** Type of worker id. */
enum starpu_worker_archtype starpu_worker_get_type(int id);
/** Writes the name of worker id ("CPU 0") into dst. */
void starpu_worker_get_name(int id, char *dst, size_t maxlen);
/** Device number of worker id (its CPU index for CPU workers). */
int starpu_worker_get_devid(int id);
/** Memory node of worker id. */
unsigned starpu_worker_get_memory_node(unsigned workerid);
/** Processing unit worker id is bound to, -1 when not bound. */
int starpu_worker_get_bindid(int workerid);
/** Puts in devids the device ids of the workers of type, each once, at most num of them;
 * returns how many (-EINVAL, said, for a NULL array or a negative num). */
int starpu_worker_get_devids(enum starpu_worker_archtype type, int *devids, int num);
#ifdef STARPU_HAVE_HWLOC
/** The processing units workerid runs on: its unit, or the whole machine when unbound
 * (STARPU_WORKERS_NOBIND). A copy: free it with hwloc_bitmap_free(). NULL, with a message,
 * when there is no such worker. */
hwloc_cpuset_t starpu_worker_get_hwloc_cpuset(int workerid);
/** The hwloc object (the processing unit) workerid is bound to; NULL when unbound or no such worker. */
hwloc_obj_t starpu_worker_get_hwloc_obj(int workerid);
#endif
/** Name of a worker type ("CPU", "CUDA"...). */
const char *starpu_worker_get_type_as_string(enum starpu_worker_archtype type);
/** Worker type from its name, STARPU_UNKNOWN_WORKER when unknown. */
enum starpu_worker_archtype starpu_worker_get_type_from_string(const char *type);
/** A worker type as spelled in environment variable names ("CPU", "CUDA", "OPENCL"...), NULL when unknown. */
const char *starpu_worker_get_type_as_env_var(enum starpu_worker_archtype type);
/** 1 when worker id may be given tasks (see the enable-worker knob). */
int starpu_worker_is_enabled(int workerid);
/** Prints the workers of type to output. */
void starpu_worker_display_names(FILE *output, enum starpu_worker_archtype type);
/** Prints the names of the workers of each kind on output. */
void starpu_worker_display_all(FILE *output);
/** Points *sched_ctx at a new array (free() it) of the contexts worker belongs to, the global one first; returns how many. */
unsigned starpu_worker_get_sched_ctx_list(int worker, unsigned **sched_ctx);
/** 1 when worker id is blocked in a parallel task (never here). */
unsigned starpu_worker_is_blocked_in_parallel(int workerid);
/** Returns 0: workers here are never slaves of a parallel context. */
unsigned starpu_worker_is_slave_somewhere(int workerid);
/** Stores in *date when the task workerid runs is expected to end (relative to starpu_init(); now when unknown). */
void starpu_worker_get_current_task_exp_end(unsigned workerid, struct timespec *date);

/** Locks the scheduling mutex of workerid (policies use it to protect per-worker queues). */
void starpu_worker_lock(int workerid);
/** Tries to lock it: 0 on success. */
int starpu_worker_trylock(int workerid);
/** Releases the scheduling mutex of workerid. */
void starpu_worker_unlock(int workerid);
/** Takes the calling worker's scheduling mutex. */
void starpu_worker_lock_self(void);
/** Releases the calling worker's scheduling mutex. */
void starpu_worker_unlock_self(void);
/** The list worker collection: its methods, which a program copies into a
 * collection of its own (type STARPU_WORKER_LIST); workers in the order added. */
extern struct starpu_worker_collection starpu_worker_list;
/** The tree worker collection (type STARPU_WORKER_TREE): the same methods,
 * the workers walked in the machine's topology order (by the processing unit
 * each is bound to). */
extern struct starpu_worker_collection starpu_worker_tree;
/** Relax/unrelax the calling worker's state (no-ops kept for policies written for StarPU). */
void starpu_worker_relax_on(void);
/** Ends a relaxed section of the calling worker started by starpu_worker_relax_on(). */
void starpu_worker_relax_off(void);
/** Returns 1 if the calling worker is in a relaxed section (always 1 outside a worker). */
int starpu_worker_get_relax_state(void);
/** Mutex and condition workerid sleeps on. */
void starpu_worker_get_sched_condition(int workerid, starpu_pthread_mutex_t **sched_mutex, starpu_pthread_cond_t **sched_cond);
/** Returns 1 when workerid is sleeping. */
int starpu_worker_is_sleeping(int workerid);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_WORKER_H__ */
