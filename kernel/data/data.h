/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The data room: handles (registration, the live table, the busy count,
 * attributes), coherency of their copies across memory nodes (MSI), the
 * transfer thread, the allocation cache, the LRU lists and eviction, per-worker
 * buffers, reductions, packing, partitioning filters and the built-in data
 * interfaces (interfaces/). Jobs and their accesses are the tasks room's.
 */
#ifndef __ASTRO_DATA_H__
#define __ASTRO_DATA_H__

#include "workers/workers.h"

struct _astro_job;
struct _astro_data_link;
struct _astro_plan;
struct _astro_memory_stats;

#define _ASTRO_HANDLE_MAGIC 0x4a7d1e5cu
/* A handle's magic once unregistered, and while its unregistration is submitted but not done
 * (the requests before it may still release the handle). */
#define _ASTRO_HANDLE_DEAD 0xdeadda7au
#define _ASTRO_HANDLE_UNREGISTERING 0xdeadb10cu

#define _ASTRO_MAX_COORDINATES 4

/* A handle's copy on one memory node (coherency.c): allocated or not, and in
 * its node's least-recently-used list while allocated on a device. */
struct _astro_replicate
{
	starpu_data_handle_t handle;
	unsigned node;
	bool allocated;                      /* the buffer exists on the node */
	bool in_lru;
	int pinned;                          /* running tasks using it: not evictable */
	struct _astro_replicate *lru_prev, *lru_next; /* under the node's lru_lock */
	struct _astro_copy *copy;            /* an asynchronous copy still arriving here (see _astro_coherency_fetch_async) */
	/* Requests of the transfer thread to bring the data here, queued or being served, by whether
	 * they are fetches (STARPU_FETCH) or prefetches: changed under its queue's lock, read without
	 * it (starpu_data_is_on_node, which policies call per task). Allocations are not counted. */
	unsigned fetches_requested, prefetches_requested;
};


struct _starpu_data_state
{
	unsigned magic;                      /* _ASTRO_HANDLE_MAGIC until unregistered (see data.c) */
	struct starpu_data_interface_ops *ops;
	int home_node;
	void *iface[STARPU_MAXNODES];        /* the interface on each node, NULL when never allocated */
	bool valid[STARPU_MAXNODES];         /* MSI: node holds an up-to-date copy */
	bool owns_alloc[STARPU_MAXNODES];    /* the runtime allocated the buffer there */
	bool unallocated;                    /* home -1 and no buffer anywhere yet (under coherency_lock) */
	/* Coherency (coherency.c): iface, valid and replicates change under it, and a transfer holds it. */
	starpu_pthread_mutex_t coherency_lock;
	struct _astro_replicate replicates[STARPU_MAXNODES];
	int writers_running;                 /* tasks writing it now (prefetches skip it meanwhile) */
	unsigned copies_arriving;            /* replicates with a copy under way */
	uint32_t wt_mask;                    /* write-through nodes (starpu_data_set_wt_mask), atomic */
	starpu_pthread_mutex_t lock;                /* implicit dependencies and busy count */
	starpu_pthread_cond_t idle_cond;     /* waited on through _astro_data_idle_wait(), woken by _astro_data_idle_wake() */
	unsigned idle_waiters;               /* threads waiting on idle_cond (under lock) */
	struct _astro_job *last_writer;
	struct _astro_data_link *readers;    /* accesses since the last writer: reads, and commuting writes */
	unsigned ncommute;                   /* commuting writes among the readers */
	unsigned sequential_consistency;
	int busy;                            /* submitted accesses not yet terminated */
	int finishing;                       /* terminated accesses whose task's callbacks still run (they may submit more on it) */
	void (*free_when_done)(starpu_data_handle_t); /* unregistration left to the last of them (_astro_data_callbacks_done) */
	/* Unordered accesses (sequential consistency off) still exclude each other while they run: readers share, writers own. */
	starpu_pthread_cond_t exec_cond;
	int exec_readers;
	bool exec_writer;
	struct starpu_arbiter *arbiter;      /* starpu_data_assign_arbiter(): takes the execution locks (arbiter.c) */
	struct _astro_job *acquires;         /* active application acquires, most recent first */
	enum starpu_data_access_mode fast_hold; /* an application acquire granted without a job (data.c), 0 when none */
	void (*fast_hold_callback)(void *);  /* its starpu_data_acquire_cb() callback, NULL for a blocking acquire */
	void *user_data;
	void *sched_data;                    /* starpu_data_set_sched_data(): the policy's */
	bool no_ooc;                         /* starpu_data_set_ooc_flag(handle, 0): main memory's copy never goes to a disk */
	char *name;
	int coordinates[_ASTRO_MAX_COORDINATES];	/* starpu_data_set_coordinates(), for traces */
	unsigned ncoordinates;
	unsigned nredux;                     /* reductions among the readers */
	struct starpu_codelet *redux_cl, *init_cl;
	void *redux_arg, *init_arg;          /* their cl_arg (starpu_data_set_reduction_methods_with_args) */
	struct _astro_worker_buffers *redux; /* the per-worker reduction buffers pending (reduction.c), NULL when none */
	starpu_pthread_mutex_t redux_lock;          /* one combination of them at a time */
	struct _astro_worker_buffers *scratch; /* the per-worker STARPU_SCRATCH buffers (worker_buffers.c), NULL when none */
	bool unregistering;
	bool readonly;                       /* a copy made by starpu_data_dup_ro(): write acquires are refused */
	/* partitioning (filters.c): children are views into this handle's buffer */
	struct _starpu_data_state *father;
	struct _starpu_data_state **children;    /* starpu_data_partition() */
	unsigned nchildren;
	/* partition plans (partition_plans.c), under their lock */
	struct _astro_plan *plan;                /* a planned child: its plan */
	struct _astro_plan **plans;              /* the plans made of this handle */
	unsigned nplans;
	struct _astro_plan **active;             /* the plans this handle is partitioned into now */
	unsigned nactive, active_cap;
	bool active_readonly;                    /* they are read-only partitions: the handle stays readable */
	bool plans_manual;                       /* starpu_data_partition_not_automatic() */
	struct _astro_memory_stats *memory_stats; /* accesses per node, when STARPU_MEMORY_STATS=1 (profiling.c) */
};

/* Is handle live (its magic set), read without the live handles' lock (the task path, uncontended acquires)? */
static inline bool _astro_handle_magic_live(starpu_data_handle_t handle)
{
	return handle && __atomic_load_n(&handle->magic, __ATOMIC_ACQUIRE) == _ASTRO_HANDLE_MAGIC;
}

/* Waits on the handle's idle_cond (handle->lock held). */
static inline void _astro_data_idle_wait(starpu_data_handle_t handle)
{
	handle->idle_waiters++;
	starpu_pthread_cond_wait(&handle->idle_cond, &handle->lock);
	handle->idle_waiters--;
}

/* Wakes whoever waits on the handle's idle_cond (handle->lock held): nothing when nobody does,
 * as on every uncontended release (the waiters count under the same lock, so none is missed). */
static inline void _astro_data_idle_wake(starpu_data_handle_t handle)
{
	if (handle->idle_waiters)
		starpu_pthread_cond_broadcast(&handle->idle_cond);
}

/* The least-recently-used lists of copies (lru.c): a copy used goes to its node's tail, a copy freed leaves. */
void _astro_lru_touch(struct _astro_replicate *r);
void _astro_lru_remove(struct _astro_replicate *r);
/* Eviction (evict.c): registered as the memory room's reclaimer at init (which forgets the program's victim selector). */
void _astro_lru_init(void);
/* What this thread allocates a buffer for (coherency.c sets it around each allocation of a handle's):
 * the handle and the request's urgency, given to the program's victim selector. */
struct _astro_alloc_for
{
	starpu_data_handle_t handle;         /* NULL: a buffer of no handle (a pack buffer) */
	enum starpu_is_prefetch kind;
};
extern _ASTRO_TLS struct _astro_alloc_for _astro_alloc_for;
/* Disks (disk_copy.c): the node a copy evicted from main memory goes to (-1: none); a handle's copy
 * between main memory and a disk for an interface without copy method: packed (-ENODEV between
 * two disks: go through main memory). */
int _astro_disk_evict_target(starpu_data_handle_t h);
int _astro_disk_pack_transfer(starpu_data_handle_t h, unsigned src, unsigned dst);

/* Partitioning (filters.c): the checks of a filter, its number of parts, child id of them. */
bool _astro_filter_checks(starpu_data_handle_t handle, struct starpu_data_filter *f, const char *fn);
unsigned _astro_filter_nparts(struct starpu_data_filter *f, starpu_data_handle_t handle);
starpu_data_handle_t _astro_child_register(starpu_data_handle_t father, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/* Per-worker buffers of a handle (worker_buffers.c): the runtime's own copies
 * of its layout, one per worker on the worker's memory node, made at their
 * first use and kept until freed (reductions' contributions, scratch data). */
struct _astro_worker_buffers
{
	void *iface[STARPU_NMAXWORKERS];     /* each worker's interface, NULL when none */
	unsigned char node[STARPU_NMAXWORKERS];
};
/* The calling worker's buffer of *set (created with the set when missing, under
 * handle's coherency_lock); *fresh tells a new one. NULL, said, when out of memory. */
void *_astro_worker_buffer(starpu_data_handle_t handle, struct _astro_worker_buffers **set, unsigned node, bool *fresh);
/* Frees the set and its buffers. */
void _astro_worker_buffers_free(starpu_data_handle_t handle, struct _astro_worker_buffers *set);
/* The calling worker's STARPU_SCRATCH buffer of handle on node (NULL, said, when out of memory: the task fails). */
void *_astro_scratch_buffer(starpu_data_handle_t handle, unsigned node);
/* Frees handle's scratch buffers. */
void _astro_scratch_drop(starpu_data_handle_t handle);
/* Copies a handle's data between two interfaces of its layout on nodes src and dst: one observed transfer. */
int _astro_interface_transfer(starpu_data_handle_t handle, void *src_iface, unsigned src, void *dst_iface, unsigned dst);

/* Reductions (reduction.c). Does a STARPU_REDUX access of handle use the worker's own buffer? */
static inline bool _astro_redux_private(starpu_data_handle_t handle)
{
	return handle->redux_cl && handle->init_cl;
}
/* The calling worker's reduction buffer of handle on node, initialised by the init codelet when created
 * (NULL, said, when it cannot be made or initialised: the task fails). */
void *_astro_redux_buffer(starpu_data_handle_t handle, unsigned node);
/* Combines the pending reduction buffers into the main-memory copy (once, whoever calls it first):
 * 0, or an error said (no room for the main copy...), the contributions not folded kept pending. */
int _astro_redux_combine(starpu_data_handle_t handle);
/* Frees the pending reduction buffers, their contributions lost. */
void _astro_redux_drop(starpu_data_handle_t handle);
/* After starpu_data_invalidate, or once reduction methods are set on data registered on no node:
 * a reduction handle's undefined content becomes the neutral value (in main memory). */
void _astro_redux_invalidated(starpu_data_handle_t handle);

/* Coherency (coherency.c). Sets up a new handle's replicates (home: its valid node, -1: none yet). */

void _astro_coherency_register(starpu_data_handle_t handle, int home);
/* Handles registered on no node (home -1) whose buffer does not exist yet: while
 * there are some, the single-node task path checks its handles (one load per task). */
extern int _astro_unallocated_handles;
/* Gives handle a buffer on node if it has none (its first use): true on success. */
bool _astro_coherency_materialize(starpu_data_handle_t handle, unsigned node);
/* No copy of handle is valid any more (starpu_data_invalidate): the next access finds undefined content. */
void _astro_coherency_invalidate(starpu_data_handle_t handle);
/* The handle has a buffer now, or is being freed (coherency.c). */
void _astro_coherency_allocated(starpu_data_handle_t handle);
/* Is handle registered? Reports it for fn when not (data.c). With claim_magic, it is
 * unregistered for the application at the same time (_ASTRO_HANDLE_DEAD or
 * _ASTRO_HANDLE_UNREGISTERING; its struct is freed later, once idle). */
bool _astro_data_live(starpu_data_handle_t handle, const char *fn);
bool _astro_data_live_or_claim(starpu_data_handle_t handle, const char *fn, unsigned claim_magic);
/* A handle registered joins the live ones (handle.c); fn(handle) for each live one, under their lock. */
void _astro_data_track(starpu_data_handle_t handle);
void _astro_data_for_each_live(void (*fn)(starpu_data_handle_t handle, void *arg), void *arg);
/* The struct of an unregistered handle, freed after a while (a use after unregistration reads a dead magic). */
void _astro_data_quarantine(starpu_data_handle_t handle);
/* The application gets its data back where it registered it (redux combined, copied home). */
void _astro_data_write_back_home(starpu_data_handle_t handle);
/* starpu_data_ptr_register() for fn: false (and an error) when refused. */
bool _astro_data_ptr_register(starpu_data_handle_t handle, unsigned node, const char *fn);
/* Makes handle valid on node for an access in mode (handle not locked); pin keeps
 * the copy there until _astro_coherency_unpin(). 0, or -ENOMEM said. */
int _astro_coherency_fetch(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode, bool pin);
void _astro_coherency_unpin(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode);
/* The same as _astro_coherency_fetch(..., pin true), quietly, but the copy to node may
 * still be under way on return: _astro_coherency_arrived() waits for it. 0 or a negative errno. */
int _astro_coherency_fetch_async(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode);
/* Waits for the copy arriving on node, if any: 0, or a negative errno said. */
int _astro_coherency_arrived(starpu_data_handle_t handle, unsigned node);
/* The transfer thread (asynchronous prefetches), while there are device nodes. A
 * request tells done(arg) once the copy is made; one without done holds the
 * handle meanwhile (_astro_data_hold) and lets it go then. Requests are served
 * by level (STARPU_FETCH first, STARPU_IDLEFETCH last), then by priority
 * (highest first), then in order of submission. */
void _astro_transfers_start(void);
void _astro_transfers_stop(void);
void _astro_transfer_submit(starpu_data_handle_t handle, unsigned node, enum starpu_is_prefetch level, int prio, void (*done)(void *arg), void *arg);
/* A request of the transfer thread that only allocates handle's buffer on node (held meanwhile),
 * at prefetch level: done at once when there is no transfer thread. */
void _astro_transfer_submit_allocation(starpu_data_handle_t handle, unsigned node);
/* Is handle valid on node, or is a fetch (or, with prefetches, any request) of the transfer thread
 * to bring it there? (starpu_data_is_on_node and its _excluding_prefetch form). */
unsigned _astro_data_on_node(starpu_data_handle_t handle, unsigned node, bool prefetches);
/* No prefetch or asynchronous acquire is queued or moving (the idle-wait report, tasks/idle_wait.c). */
bool _astro_transfers_idle(void);
/* data.c: a handle kept from being freed (busy) without an access. */
void _astro_data_hold(starpu_data_handle_t handle);
void _astro_data_unhold(starpu_data_handle_t handle);
/* Frees handle's copy on node, written back first when it is the only valid one: to main
 * memory, or from main memory to a disk node (coherency_lock held). False: kept, as the
 * write-back failed. */
bool _astro_coherency_evict(starpu_data_handle_t handle, unsigned node);
/* Frees every copy but main memory's (handle idle). */
/* data.c, at shutdown once the workers stopped: the handles still registered get
 * their data back home, and lose their device copies while the drivers are loaded. */
void _astro_data_leave_devices(void);
void _astro_coherency_free_devices(starpu_data_handle_t handle);
/* Frees one (or all) of the buffers node's allocation cache keeps: true if there was one. */
bool _astro_alloc_cache_reclaim(unsigned node, bool all);
/* An acquire of handle in mode is granted: its data goes to node (-1: stays where it is); evict:
 * then the devices' copies are dropped (starpu_data_wont_use). 0, or -ENOMEM (said) when the
 * data could not be brought there. */
int _astro_coherency_acquired(starpu_data_handle_t handle, enum starpu_data_access_mode mode, int node, bool evict);
/* Brings the handles of a task that runs nothing (a partition switch) to main memory. */
void _astro_coherency_task_in_ram(struct starpu_task *task);
/* Predicted time (µs) to make handle valid on node for an access in mode (0 when nothing moves). */
double _astro_data_transfer_time(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode);

/* The multiformat interface's conversions (interface_multiformat.c), on the worker of node:
 * to the device's format once a task's fetch brought the data (0, or -ENOSYS said: the task fails),
 * back after a task wrote it. */
int _astro_multiformat_fetched(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode);
/* Multiformat handles registered; a task's check that each device it may run on has its buffers' conversions (0, or -EINVAL said). */
extern int _astro_multiformat_handles;
int _astro_multiformat_check_task(struct starpu_task *task);
void _astro_multiformat_executed(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode);

/* Does an access in mode order like a write? Commuting and reduction accesses are serialised like
 * writes: a valid order among the allowed ones. */
static inline bool _astro_mode_writes(enum starpu_data_access_mode mode)
{
	return (mode & (STARPU_W | STARPU_REDUX)) != 0;
}
/* Waits until no submitted access to handle is left (whatever its consistency). */
void _astro_data_wait_idle(starpu_data_handle_t handle);

/* Synchronous unregistration: waits until no access is pending and no callback of a task
 * that accessed it runs (those may submit more tasks on it), then marks it magic (dead). */
void _astro_data_wait_unused(starpu_data_handle_t handle, unsigned magic);

/* A callback of a task that accessed handle returned (tasks/: it held it as finishing). */
void _astro_data_callback_done(starpu_data_handle_t handle);

/* An idle handle unregistered asynchronously: false when no callback holds it (free it now),
 * true when free_it is left to the last callback that does (it calls it). */
bool _astro_data_free_when_done(starpu_data_handle_t handle, void (*free_it)(starpu_data_handle_t));

/* 0 when mode is an access mode a task or an acquire may ask for (handle.c); -EINVAL otherwise. */
int _astro_data_check_mode(enum starpu_data_access_mode mode);

#endif /* __ASTRO_DATA_H__ */
