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
#include <starpu_data.h>
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
/** For a policy that runs a parallel task (STARPU_SPMD, STARPU_FORKJOIN) on combined worker workerid
 * the way StarPU's do: the task is prepared to be run by the combined worker's members, each
 * through one copy of the task (starpu_task_dup()) that the policy then gives to a member (its own
 * queue, or its pop_task). Each member runs its part with its rank, the first one to start runs the
 * task's life (data, callbacks); the copies are freed by the runtime. A bad task or workerid is
 * said, and the task is left as it was. */
void starpu_parallel_task_barrier_init(struct starpu_task *task, int workerid);
/** The same for worker_size members that no combined worker names: whichever workers run the
 * worker_size copies (starpu_combined_worker_get_id() gives -1 in the task). */
void starpu_parallel_task_barrier_init_n(struct starpu_task *task, int worker_size);
/** Points *workerids at the workers bound to processing unit bindid (an hwloc logical index, as
 * starpu_worker_get_bindid() gives; the array is the runtime's, valid until starpu_shutdown()) and
 * returns how many: 0 for a unit no worker is bound to, or past the machine's units. -EINVAL, with
 * a message, for a negative bindid, a NULL workerids or a runtime not initialised. */
int starpu_bindid_get_workerids(int bindid, int **workerids);
/** The machine's tree of processing units (from hwloc; see starpu_tree.h), which the workers are
 * bound to: levels with a single child are skipped, a leaf is a processing unit (id: its bindid).
 * Owned by the runtime, valid until starpu_shutdown(); NULL, with a message, before starpu_init(). */
struct starpu_tree *starpu_workers_get_tree(void);
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
/** Non-zero when the calling worker is in a scheduling operation: inside a policy's pop_task
 * (the worker asking for its next task). 0 elsewhere (running a codelet, a callback) and from a
 * thread that is not a worker. */
int starpu_worker_sched_op_pending(void);
/** Lets others observe the calling worker while it is in a scheduling operation, before a call that
 * may block (taking a lock other than its own): nested calls count, each ended by
 * starpu_worker_relax_off(). Nothing from a thread that is not a worker. */
void starpu_worker_relax_on(void);
/** Ends a relaxed section started by starpu_worker_relax_on() (one without a matching
 * starpu_worker_relax_on() is refused with a message). */
void starpu_worker_relax_off(void);
/** Non-zero when the calling worker may be observed: it is in no scheduling operation, or in a relaxed
 * section of one; always non-zero outside a worker. */
int starpu_worker_get_relax_state(void);
#ifdef STARPU_WORKER_CALLBACKS
/** Sets the function a worker calls when it goes to sleep (no task for it), as
 * starpu_conf::callback_worker_going_to_sleep; NULL removes it. After starpu_init() (before it,
 * refused with a message: set the starpu_conf field instead). */
void starpu_worker_set_going_to_sleep_callback(void (*callback)(unsigned workerid));
/** The same for the function a worker calls when it wakes up (starpu_conf::callback_worker_waking_up). */
void starpu_worker_set_waking_up_callback(void (*callback)(unsigned workerid));
#endif
/** The scheduling mutex of workerid (the one starpu_worker_lock() takes) and its condition. The worker
 * sleeps on neither (signalling the condition alone wakes nobody): wake it with starpu_wake_worker()
 * or, holding that mutex, starpu_wake_worker_locked(). */
void starpu_worker_get_sched_condition(int workerid, starpu_pthread_mutex_t **sched_mutex, starpu_pthread_cond_t **sched_cond);
/** Returns 1 when workerid is sleeping. */
int starpu_worker_is_sleeping(int workerid);

/** Waits until every worker is initialised. The workers the runtime starts
 * are by the time starpu_init() returns, so this returns at once then, and
 * waits for a starpu_init() under way in another thread; before any
 * starpu_init() (or after starpu_shutdown()) it is refused with a message. */
void starpu_worker_wait_for_initialisation(void);
/** 1 when type is one of the worker types (STARPU_CPU_WORKER... STARPU_HIP_WORKER), 0 otherwise
 * (STARPU_ANY_WORKER, STARPU_UNKNOWN_WORKER, an unused value). */
unsigned starpu_worker_archtype_is_valid(enum starpu_worker_archtype type);
/** The worker type of a "where" mask naming exactly one type (STARPU_CPU, STARPU_CUDA...);
 * STARPU_UNKNOWN_WORKER, with a message, for a mask naming none or several. */
enum starpu_worker_archtype starpu_arch_mask_to_worker_archtype(unsigned mask);
/** 1 when workers of worker_type may run task: its codelet has an implementation for them and
 * the task's and the codelet's where masks allow them (a task without codelet runs anywhere);
 * 0 otherwise, or for a NULL task or an invalid type. */
unsigned starpu_worker_type_can_execute_task(enum starpu_worker_archtype worker_type, const struct starpu_task *task);
/** Prints on output how many workers of type there are ("2 CPU workers"). */
void starpu_worker_display_count(FILE *output, enum starpu_worker_archtype type);
/** The rank of worker id's device among the devices of its type that the runtime uses (0 for
 * the first one), its CPU index for a CPU worker; -1 for no such worker. */
int starpu_worker_get_devnum(int id);
/** The rank of worker id among the workers sharing its device (0 when it has the device alone:
 * STARPU_NWORKER_PER_CUDA and alike give several); -1 for no such worker. */
int starpu_worker_get_subworkerid(int id);
/** Fills workerids with the workers of type running on device devid (at most STARPU_NMAXWORKERS)
 * and returns how many; -EINVAL, with a message, for a NULL array. */
int starpu_worker_get_stream_workerids(unsigned devid, int *workerids, enum starpu_worker_archtype type);
/** The memory node of kind kind serving device devid; -1 (as unsigned) when there is none. */
unsigned starpu_memory_devid_find_node(int devid, enum starpu_node_kind kind);
/** Fills memory_nodes_ids with the memory nodes of kind kind and returns how many; when
 * maxsize is too small, the array gets the maxsize first ones and -ERANGE (as unsigned) is
 * returned. */
unsigned starpu_memory_node_get_ids_by_type(enum starpu_node_kind kind, unsigned *memory_nodes_ids, unsigned maxsize);
/** 1 when data on node is reached through a handle and an offset rather than a pointer (an
 * OpenCL device's), 0 otherwise. */
int starpu_node_needs_offset(unsigned node);
/** The type of worker that computes in memory of kind node_kind (main memory and disks:
 * STARPU_CPU_WORKER); STARPU_UNKNOWN_WORKER, with a message, for an invalid kind. */
enum starpu_worker_archtype starpu_memory_node_get_worker_archtype(enum starpu_node_kind node_kind);
/** The kind of memory workers of type compute in; STARPU_UNUSED, with a message, for an invalid type. */
enum starpu_node_kind starpu_worker_get_memory_node_kind(enum starpu_worker_archtype type);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_WORKER_H__ */
