/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Data handles of the StarPU API: registration, access modes, acquire/release. */
#ifndef __STARPU_DATA_H__
#define __STARPU_DATA_H__

#include <stdint.h>
#include <stddef.h>
#include <starpu_config.h>

#ifdef __cplusplus
extern "C" {
#endif

struct _starpu_data_state;
struct starpu_codelet;
/** A piece of data managed by the runtime. */
typedef struct _starpu_data_state *starpu_data_handle_t;
/** A data access arbiter (starpu_arbiter_create()). */
typedef struct starpu_arbiter *starpu_arbiter_t;

/** How a task accesses a piece of data. */
enum starpu_data_access_mode
{
	STARPU_NONE = 0,
	STARPU_R = (1 << 0),
	STARPU_W = (1 << 1),
	STARPU_RW = (STARPU_R | STARPU_W),
	STARPU_SCRATCH = (1 << 2),
	STARPU_REDUX = (1 << 3),
	STARPU_COMMUTE = (1 << 4),
	STARPU_SSEND = (1 << 5),
	STARPU_LOCALITY = (1 << 6),
	STARPU_MPI_REDUX = (1 << 7),
	STARPU_NOPLAN = (1 << 8),
	STARPU_UNMAP = (1 << 9),
	STARPU_NOFOOTPRINT = (1 << 10),
	STARPU_ACCESS_MODE_MAX = (1 << 11)
};

/** The memory node of main RAM. */
#define STARPU_MAIN_RAM 0
/** "Whichever node the caller runs on", for acquire calls. */
#define STARPU_ACQUIRE_NO_NODE -1
#define STARPU_ACQUIRE_NO_NODE_LOCK_ALL -2

/** Memory node kinds. */
enum starpu_node_kind
{
	STARPU_UNUSED = 0,
	STARPU_CPU_RAM = 1,
	STARPU_CUDA_RAM = 2,
	STARPU_OPENCL_RAM = 3,
	STARPU_DISK_RAM = 4,
	STARPU_MAX_FPGA_RAM = 5,
	STARPU_HIP_RAM = 6,
	STARPU_MPI_MS_RAM = 7,
	STARPU_TCPIP_MS_RAM = 8,
	STARPU_MAX_RAM = 31
};

/** Returns the handle registered for ptr in main memory, NULL if none. */
starpu_data_handle_t starpu_data_lookup(const void *ptr);

/** Unregisters handle, waiting for the tasks using it; the data is brought back to its home node.
 * Refused, with a message, for a handle that is not registered (already
 * unregistered?), and from a task, a callback, a tool callback or a counter
 * listener (use starpu_data_unregister_submit() there). */
void starpu_data_unregister(starpu_data_handle_t handle);
/** Unregisters handle without bringing the data back. */
void starpu_data_unregister_no_coherency(starpu_data_handle_t handle);
/** Unregisters handle once the tasks using it have completed, without waiting. */
void starpu_data_unregister_submit(starpu_data_handle_t handle);
/** Drops every copy of handle: its content is undefined afterwards. */
void starpu_data_invalidate(starpu_data_handle_t handle);
/** As starpu_data_invalidate(), ordered after the tasks already submitted. */
void starpu_data_invalidate_submit(starpu_data_handle_t handle);
/** Tells the runtime the data will not be used again soon. */
void starpu_data_wont_use(starpu_data_handle_t handle);
/** Makes every copy of handle hold undefined content, as starpu_data_invalidate(),
 * keeping the buffers allocated: the next access must write (STARPU_W). */
void starpu_data_deinitialize(starpu_data_handle_t handle);
/** As starpu_data_deinitialize(), ordered after the tasks already submitted. */
void starpu_data_deinitialize_submit(starpu_data_handle_t handle);

/** How urgent a data request is, most urgent first: what a task needs now,
 * what a task will need soon, a prefetch, a fetch for when the bus is idle. */
enum starpu_is_prefetch
{
	STARPU_FETCH = 0,
	STARPU_TASK_PREFETCH = 1,
	STARPU_PREFETCH = 2,
	STARPU_IDLEFETCH = 3,
	STARPU_NFETCH
};

/** Frees the copy of handle on node now, written back first when it is the only
 * valid one. Returns 0, or -1 when it cannot be evicted (starpu_data_can_evict()
 * says why not: no such copy, a task uses it, the buffer is the program's). */
int starpu_data_evict_from_node(starpu_data_handle_t handle, unsigned node);
/** 1 when the copy of handle on node could be evicted now to make room for a
 * request of urgency is_prefetch, 0 otherwise. A prefetch or an idle fetch
 * does not evict the only valid copy (that would cost a write-back). */
int starpu_data_can_evict(starpu_data_handle_t handle, unsigned node, enum starpu_is_prefetch is_prefetch);

/** What a victim selector returns when nothing should be evicted from the node now: the
 * allocation waits a moment and asks again (a second at most, then it fails). */
#define STARPU_DATA_NO_VICTIM ((starpu_data_handle_t)-1)

/** A victim selector (starpu_data_register_victim_selector()): memory node node is full and
 * room is needed for handle toload (NULL when the runtime allocates a buffer of no handle,
 * e.g. to pack one) for a request of urgency is_prefetch. Returns the handle whose copy on
 * node to evict (one starpu_data_can_evict() accepts), NULL to let the runtime choose (least
 * recently used first), or ::STARPU_DATA_NO_VICTIM. data is what was registered with it. */
typedef starpu_data_handle_t starpu_data_victim_selector(starpu_data_handle_t toload, unsigned node,
							 enum starpu_is_prefetch is_prefetch, void *data);
/** Called when the handle a victim selector chose could not be evicted after all (a task or
 * the program holds it, it has no copy there...): the next call of the selector may choose
 * again. data is what was registered with it. */
typedef void starpu_data_victim_eviction_failed(starpu_data_handle_t victim, void *data);

/**
 * Has the runtime ask selector which copy to evict whenever a memory node is
 * full (after the buffers it keeps for reuse are freed), instead of taking
 * the least recently used; evicted is called (may be NULL) when the chosen
 * copy cannot be evicted. Both run on the thread that needs the memory and
 * must not wait for data. The last registration wins; a NULL selector gives
 * the choice back to the runtime. starpu_init() forgets any selector.
 */
void starpu_data_register_victim_selector(starpu_data_victim_selector selector, starpu_data_victim_eviction_failed evicted,
					  void *data);
/** The state of handle on memory_node: whether a buffer is allocated there,
 * whether it holds the current value, whether a copy to it is under way, and
 * whether a fetch or prefetch to it is queued. Each pointer may be NULL. */
void starpu_data_query_status2(starpu_data_handle_t handle, int memory_node, int *is_allocated, int *is_valid, int *is_loading,
			       int *is_requested);
/** As starpu_data_query_status2(), without is_loading. */
void starpu_data_query_status(starpu_data_handle_t handle, int memory_node, int *is_allocated, int *is_valid, int *is_requested);
/** Registers in *dst_handle a copy of src_handle's current value, for reading
 * only (a write acquire of it is refused). The copy is a task ordered after
 * the accesses submitted before; asynchronous unless asynchronous is 0.
 * Returns 0, or starpu_data_cpy()'s error. */
int starpu_data_dup_ro(starpu_data_handle_t *dst_handle, starpu_data_handle_t src_handle, int asynchronous);

/** Copies src_handle's content into dst_handle (same interface and size), as a
 * task writing dst_handle and reading src_handle, ordered with their other
 * accesses. Synchronous unless asynchronous; callback_func(callback_arg) runs
 * when the copy is done. Returns 0, -EINVAL for unsuitable handles, or
 * starpu_task_submit()'s error (-ENODEV without a CPU worker). */
int starpu_data_cpy(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, int asynchronous,
		    void (*callback_func)(void *), void *callback_arg);
/** Creates a data access arbiter: the handles assigned to it
 * (starpu_data_assign_arbiter()) are taken all at once by the accesses that
 * exclude each other as they run (STARPU_COMMUTE writes, accesses without
 * sequential consistency), when all of a task's are free, instead of one by
 * one in address order. NULL when out of memory. */
starpu_arbiter_t starpu_arbiter_create(void);
/** Puts the accesses to handle under arbiter (NULL takes it off): before any
 * task or acquire uses the handle, one arbiter per handle; refused with an
 * error otherwise. */
void starpu_data_assign_arbiter(starpu_data_handle_t handle, starpu_arbiter_t arbiter);
/** Frees arbiter once every handle assigned to it is unregistered (refused,
 * with an error, before). */
void starpu_arbiter_destroy(starpu_arbiter_t arbiter);
/** As starpu_data_cpy(), the copy task with the given priority. */
int starpu_data_cpy_priority(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, int asynchronous,
			     void (*callback_func)(void *), void *callback_arg, int priority);

/** Makes handle accessible from the application in main RAM with mode, waiting for prior tasks. Returns 0 or -EINVAL. */
int starpu_data_acquire(starpu_data_handle_t handle, enum starpu_data_access_mode mode);
/** As starpu_data_acquire(), on node. */
int starpu_data_acquire_on_node(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode);
/** Asynchronous acquire: callback(arg) is called once the data is accessible. */
int starpu_data_acquire_cb(starpu_data_handle_t handle, enum starpu_data_access_mode mode, void (*callback)(void *), void *arg);
/** As starpu_data_acquire_cb(), with the data made valid on node. */
int starpu_data_acquire_on_node_cb(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode, void (*callback)(void *), void *arg);
/** As starpu_data_acquire_cb(), honouring sequential consistency only when sequential_consistency is set. */
int starpu_data_acquire_cb_sequential_consistency(starpu_data_handle_t handle, enum starpu_data_access_mode mode, void (*callback)(void *), void *arg, int sequential_consistency);
/** As starpu_data_acquire_on_node_cb(), honouring sequential consistency only when sequential_consistency is set. */
int starpu_data_acquire_on_node_cb_sequential_consistency(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode,
							  void (*callback)(void *), void *arg, int sequential_consistency);
/** As starpu_data_acquire_on_node_cb_sequential_consistency(). quick lets StarPU skip its synchronisation
 * task when the data is already there; an acquire is one job here either way, so quick changes nothing. */
int starpu_data_acquire_on_node_cb_sequential_consistency_quick(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode,
								void (*callback)(void *), void *arg, int sequential_consistency, int quick);
/** As starpu_data_acquire_on_node_cb_sequential_consistency_quick(), also storing in *pre_sync_jobid and
 * *post_sync_jobid (either may be NULL) the job ids of the synchronisations before the acquire and after the
 * release: here one job, the acquire's, whose id both get (-1 when the acquire is refused). */
int starpu_data_acquire_on_node_cb_sequential_consistency_sync_jobids(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode,
								      void (*callback)(void *), void *arg, int sequential_consistency,
								      int quick, long *pre_sync_jobid, long *post_sync_jobid);
#ifdef __GCC__
/** starpu_data_acquire_cb() with the callback's body given as code, the handle released after it
 * (GCC nested functions; defined under the same condition as StarPU's). */
#define STARPU_DATA_ACQUIRE_CB(handle, mode, code) \
	do { \
		void callback(void *arg) \
		{ \
			(void)arg; \
			code; \
			starpu_data_release(handle); \
		} \
		starpu_data_acquire_cb(handle, mode, callback, NULL); \
	} while (0)
#endif
/** Acquires only if it can be done without waiting: 0 on success, -EAGAIN otherwise. */
int starpu_data_acquire_try(starpu_data_handle_t handle, enum starpu_data_access_mode mode);
/** As starpu_data_acquire_try(), with the data made valid on node (STARPU_ACQUIRE_NO_NODE: anywhere). */
int starpu_data_acquire_on_node_try(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode);
/** Releases a handle acquired by the application. */
void starpu_data_release(starpu_data_handle_t handle);
/** Releases a handle acquired with starpu_data_acquire_on_node() on node. */
void starpu_data_release_on_node(starpu_data_handle_t handle, int node);
/** Lowers the application's most recent acquire of handle to down_to_mode:
 * STARPU_R from STARPU_W or STARPU_RW lets the reads waiting for it go on
 * while the program keeps reading (writes still wait); STARPU_NONE releases
 * it (starpu_data_release()); its own mode keeps it. Other modes are refused. */
void starpu_data_release_to(starpu_data_handle_t handle, enum starpu_data_access_mode down_to_mode);
/** As starpu_data_release_to(), for an acquire made on node. */
void starpu_data_release_to_on_node(starpu_data_handle_t handle, enum starpu_data_access_mode down_to_mode, int node);

/** Turns implicit (sequential-consistency) dependencies on or off for handle. */
void starpu_data_set_sequential_consistency_flag(starpu_data_handle_t handle, unsigned flag);
/** The sequential-consistency flag of handle. */
unsigned starpu_data_get_sequential_consistency_flag(starpu_data_handle_t handle);
/** Default sequential-consistency flag for handles registered afterwards. */
void starpu_data_set_default_sequential_consistency_flag(unsigned flag);
/** The default sequential-consistency flag given to new handles. */
unsigned starpu_data_get_default_sequential_consistency_flag(void);

/** Sets the functions used by STARPU_REDUX accesses: init_cl sets a buffer
 * (its one STARPU_W buffer) to the neutral value, redux_cl folds its second
 * buffer (STARPU_R) into its first (STARPU_RW). Both need a CPU function.
 * Each codelet is called with a NULL cl_arg: arguments an earlier
 * starpu_data_set_reduction_methods_with_args() gave are dropped. */
void starpu_data_set_reduction_methods(starpu_data_handle_t handle, struct starpu_codelet *redux_cl, struct starpu_codelet *init_cl);
/** The same, each codelet called with its cl_arg. */
void starpu_data_set_reduction_methods_with_args(starpu_data_handle_t handle, struct starpu_codelet *redux_cl, void *redux_cl_arg,
						  struct starpu_codelet *init_cl, void *init_cl_arg);
/** Gives the handle a name shown in traces. */
void starpu_data_set_name(starpu_data_handle_t handle, const char *name);
/** Records the position of handle in the application's grid (dims[0..dimensions-1]), shown in traces. */
void starpu_data_set_coordinates_array(starpu_data_handle_t handle, unsigned dimensions, int dims[]);
/** As starpu_data_set_coordinates_array(), with the coordinates given as int arguments. */
void starpu_data_set_coordinates(starpu_data_handle_t handle, unsigned dimensions, ...);
/** Copies at most dimensions coordinates set by starpu_data_set_coordinates*() into dims; returns how many. */
unsigned starpu_data_get_coordinates_array(starpu_data_handle_t handle, unsigned dimensions, int dims[]);
/** Attaches an application pointer to handle. */
void starpu_data_set_user_data(starpu_data_handle_t handle, void *user_data);
/** The pointer attached with starpu_data_set_user_data(), NULL if none. */
void *starpu_data_get_user_data(starpu_data_handle_t handle);
/** Attaches a scheduling policy's pointer to handle (apart from the application's user data). */
void starpu_data_set_sched_data(starpu_data_handle_t handle, void *sched_data);
/** The pointer attached with starpu_data_set_sched_data(), NULL if none. */
void *starpu_data_get_sched_data(starpu_data_handle_t handle);
/** Whether main memory's copy of handle may be evicted to a disk node when memory is short
 * (1, the default) or never (0). */
void starpu_data_set_ooc_flag(starpu_data_handle_t handle, unsigned flag);
/** The flag set by starpu_data_set_ooc_flag(). */
unsigned starpu_data_get_ooc_flag(starpu_data_handle_t handle);
/** The handles with a buffer on memory node node, in a new array in *handles, whether
 * each is valid there in a new array in *valid, their number in *n (both arrays NULL
 * when there is none); free both with free(). A snapshot: copies may come and go meanwhile. */
void starpu_data_get_node_data(unsigned node, starpu_data_handle_t **handles, int **valid, unsigned *n);
/** Sets where the data is written back (node) after each modification; unsupported nodes are refused. */
void starpu_data_set_wt_mask(starpu_data_handle_t handle, uint32_t wt_mask);

/** Pointer of the local copy of handle on the calling worker's node (main RAM from the application). */
void *starpu_data_get_local_ptr(starpu_data_handle_t handle);
/** Pointer of handle on node, NULL if not allocated there. */
void *starpu_data_handle_to_pointer(starpu_data_handle_t handle, unsigned node);
/** Returns 1 if handle is on node or will be: it has a valid copy there, or a request to bring it
 * there (a fetch or a prefetch) is queued or under way. A hint, cheap enough for a policy to call
 * for every task; 0 for a NULL handle or a node out of range. */
unsigned starpu_data_is_on_node(starpu_data_handle_t handle, unsigned node);
/** Like starpu_data_is_on_node(), but a prefetch request (starpu_data_prefetch_on_node() and
 * the like) still queued does not count; a fetch queued does. Bad input is said and returns 0. */
unsigned starpu_data_is_on_node_excluding_prefetch(starpu_data_handle_t handle, unsigned node);
/** Returns 1 if handle's copy on memory_node is a mapping of another node's buffer: never
 * here, where each memory node holds a buffer of its own. */
unsigned starpu_data_test_if_mapped_on_node(starpu_data_handle_t handle, unsigned memory_node);
/** Size of the data in bytes. */
size_t starpu_data_get_size(starpu_data_handle_t handle);
/** Bytes allocated for a copy of handle (the interface's allocation size, else its data size); 0 for NULL. */
size_t starpu_data_get_alloc_size(starpu_data_handle_t handle);
/** Footprint (hash of the sizes) of the data. */
uint32_t starpu_data_get_footprint(starpu_data_handle_t handle);
/** Interface id (enum starpu_data_interface_id) of handle. */
int starpu_data_get_interface_id(starpu_data_handle_t handle);
/** Home node of handle. */
int starpu_data_get_home_node(starpu_data_handle_t handle);

/** Brings a valid copy of handle to node (as a read acquisition, once the tasks writing it
 * before are done), waiting unless async is set. Asynchronous requests are served by the
 * transfer thread by level (fetches, then prefetches, then idle prefetches), then by
 * priority (highest first), then in order. Returns 0, or -EINVAL (said) for a bad handle or node. */
int starpu_data_fetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async);
/** As starpu_data_fetch_on_node(), at the prefetch level: served after the fetches. */
int starpu_data_prefetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async);
/** As starpu_data_prefetch_on_node(), at priority prio among the prefetches (default 0). */
int starpu_data_prefetch_on_node_prio(starpu_data_handle_t handle, unsigned node, unsigned async, int prio);
/** As starpu_data_prefetch_on_node(), at the idle level: served after every other request. */
int starpu_data_idle_prefetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async);
/** As starpu_data_idle_prefetch_on_node(), at priority prio among the idle prefetches. */
int starpu_data_idle_prefetch_on_node_prio(starpu_data_handle_t handle, unsigned node, unsigned async, int prio);
/** Frees the buffers memory_node keeps for reuse (those of unregistered or evicted data),
 * giving their room back to the node. */
void starpu_memchunk_tidy(unsigned memory_node);
/** An eviction hint; accepted and ignored here (this runtime's eviction does not use it). */
void starpu_data_advise_as_important(starpu_data_handle_t handle, unsigned is_important);
/** Asks for handle's buffer on node to be allocated, without its data, so that a later fetch
 * there finds it (unless it is evicted meanwhile): asynchronous, at prefetch level, as in StarPU.
 * 0, or -EINVAL (said) for a bad handle or node; an allocation that finds no room is said then. */
int starpu_data_request_allocation(starpu_data_handle_t handle, unsigned node);

/** Number of memory nodes. */
unsigned starpu_memory_nodes_get_count(void);
/** Writes the name of memory node node ("NUMA 0"...) into name; returns its length or -EINVAL. */
int starpu_memory_node_get_name(unsigned node, char *name, size_t size);
/** The device index of memory node node within its kind (0 for main memory), -1 for no such node. */
int starpu_memory_node_get_devid(unsigned node);
/** How many memory nodes of that kind exist. */
unsigned starpu_memory_nodes_get_count_by_kind(enum starpu_node_kind kind);
/** How many RAM memory nodes there are: one per NUMA node with STARPU_USE_NUMA=1, else 1. */
unsigned starpu_memory_nodes_get_numa_count(void);
/** The RAM memory node of the NUMA node the system numbers osid; -1 when there is none. */
int starpu_memory_nodes_numa_id_to_devid(int osid);
/** The system's number of the NUMA node of RAM memory node id; -1 when id is not a RAM node. */
int starpu_memory_nodes_numa_devid_to_id(unsigned id);
/** The hwloc logical index of the NUMA node of RAM memory node id; -1 when id is not a RAM node. */
int starpu_memory_nodes_numa_id_to_hwloclogid(unsigned id);
/** The RAM memory node of the NUMA node of hwloc logical index logid; -1 when none. */
int starpu_memory_nodes_numa_hwloclogid_to_id(int logid);
/** Kind of memory node node. */
enum starpu_node_kind starpu_node_get_kind(unsigned node);
/** Memory node of the calling worker (STARPU_MAIN_RAM from the application). */
unsigned starpu_worker_get_local_memory_node(void);

/** Prints memory statistics of handle (when enabled). */
void starpu_data_display_memory_stats(void);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_DATA_H__ */
