/*
 * Kernel internals shared by the kernel files. Nothing here is public: plugins see
 * the kernel only through include/astrolabe/.
 */
#ifndef __ASTRO_KERNEL_H__
#define __ASTRO_KERNEL_H__

#include "config.h"
#include <starpu.h>
#include <astrolabe/plugin.h>
#include <astrolabe/observe.h>
#include <astrolabe/task_build.h>
#include <astrolabe/thread.h>
#include "envparse.h"
#include <glib.h>
#include <astrolabe/thread.h>
#include <stdbool.h>

#define _ASTRO_CACHELINE 64
/* Thread-locals of the kernel: initial-exec, so an access is one instruction, not a __tls_get_addr call. */
#define _ASTRO_TLS __thread __attribute__((tls_model("initial-exec")))

/* ------------------------------------------------------------- logging */

/* Error and info messages: one line, naming the thing and the fix. */
void _astro_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void _astro_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only when STARPU_PLUGIN_VERBOSE=1 (plugin loading details). */
void _astro_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int _astro_verbose_level;
/* From starpu_init() to the end of starpu_shutdown(), an error or warning
 * already printed is counted instead; the end says the repeated ones. */
void _astro_log_session_begin(void);
void _astro_log_session_end(void);

/* --------------------------------------------------------------- clock */

/* starpu_timing_now() inlined on the task path (util.c): the time-stamp
 * counter, converted with the rate calibrated at start-up, once the clock is
 * decided; util.c before that, or where the counter is not trusted. */
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define _ASTRO_HAVE_TSC 1
struct _astro_tsc_clock
{
	int state;		/* read without lock; the fields below are final once it is _ASTRO_CLOCK_TSC */
	double base_us;		/* a CLOCK_MONOTONIC reading ... */
	uint64_t base_tsc;	/* ... and the counter at that moment */
	double us_per_tick;
};
enum { _ASTRO_CLOCK_UNDECIDED, _ASTRO_CLOCK_CALIBRATING, _ASTRO_CLOCK_TSC, _ASTRO_CLOCK_GETTIME };
extern struct _astro_tsc_clock _astro_tsc_clock;
#endif
double _astro_timing_slow(void);

/* Is the inline clock (_astro_tsc_now()) the clock? */
static inline bool _astro_clock_is_tsc(void)
{
#ifdef _ASTRO_HAVE_TSC
	return __atomic_load_n(&_astro_tsc_clock.state, __ATOMIC_ACQUIRE) == _ASTRO_CLOCK_TSC;
#else
	return false;
#endif
}

#ifdef _ASTRO_HAVE_TSC
static inline double _astro_tsc_now(void)
{
	return _astro_tsc_clock.base_us + (double)(int64_t)(__rdtsc() - _astro_tsc_clock.base_tsc) * _astro_tsc_clock.us_per_tick;
}
#else
#define _astro_tsc_now() 0.0
#endif

static inline double _astro_now(void)
{
	return STARPU_LIKELY(_astro_clock_is_tsc()) ? _astro_tsc_now() : _astro_timing_slow();
}

/* --------------------------------------------------------- observation */

/* The hub's tables (observe.c): the inline firing below reads them. */
#define _ASTRO_MAX_OBSERVERS 64
struct _astro_observer
{
	uint64_t mask;
	astro_observer_fn fn;
	void *arg;
};
/* The slots that ever observed one moment: entries below n are final. */
struct _astro_moment_list
{
	unsigned n;	/* atomic */
	unsigned char slots[_ASTRO_MAX_OBSERVERS];
};
extern uint64_t _astro_observe_mask;		/* the moments someone observes */
extern uint64_t _astro_observe_timed_mask;	/* the moments an observer wants stamped */
extern struct _astro_observer _astro_observers[_ASTRO_MAX_OBSERVERS];
extern struct _astro_moment_list _astro_moment_lists[ASTRO_NMOMENTS];
void _astro_observe_fire_slow(struct astro_event *event);
void _astro_observe_reset(void);

/* Stamps the event if an observer wants it and calls its observers. Inline,
 * so that the moment is a constant at each site: the common case, one
 * observer and the clock calibrated, is a few loads and the call. */
static inline void _astro_observe_fire(struct astro_event *event)
{
	const uint64_t bit = ASTRO_MOMENT_BIT(event->moment);
	const struct _astro_moment_list *l = &_astro_moment_lists[event->moment];
	unsigned n = __atomic_load_n(&l->n, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&_astro_observe_timed_mask, __ATOMIC_RELAXED) & bit) {
		if (STARPU_UNLIKELY(!_astro_clock_is_tsc())) {
			_astro_observe_fire_slow(event);
			return;
		}
		event->time_us = _astro_tsc_now();
	}
	if (STARPU_UNLIKELY(n != 1)) {
		_astro_observe_fire_slow(event);
		return;
	}
	const struct _astro_observer *o = &_astro_observers[l->slots[0]];
	if (__atomic_load_n(&o->mask, __ATOMIC_ACQUIRE) & bit)
		o->fn(event, o->arg);
}

/* One predictable branch when nobody observes moment m. */
#define _ASTRO_OBSERVE(m, ...) do { \
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_observe_mask, __ATOMIC_RELAXED) & ASTRO_MOMENT_BIT(m))) { \
		struct astro_event _ev = { .moment = (m), __VA_ARGS__ }; \
		_astro_observe_fire(&_ev); \
	} } while (0)

/* ------------------------------------------------------------ recycling */

/* Memory that one thread allocates and another frees, at every task
 * (recycle.c): blocks of one fixed size per kind, recycled through per-thread
 * caches instead of malloc. */
enum _astro_recycled
{
	_ASTRO_RECYCLED_TASK,			/* struct _astro_task_with_job */
	_ASTRO_RECYCLED_PROFILING_INFO,		/* struct starpu_profiling_task_info */
	_ASTRO_NRECYCLED
};
void *_astro_recycled_alloc(enum _astro_recycled what);
void _astro_recycled_free(enum _astro_recycled what, void *block);

/* On-line feedback (profiling.c): subscribes to the moments at init, prints the summaries at shutdown. */
void _astro_profiling_init(void);
/* Frees task->profiling_info, giving pooled ones back to their pool. */
void _astro_profiling_task_info_free(struct starpu_task *task);
/* STARPU_MEMORY_STATS: handles registered meanwhile get per-node access counts, listed by starpu_data_display_memory_stats(). */
extern bool _astro_memory_stats_enabled;
void _astro_memory_stats_register(starpu_data_handle_t handle);
void _astro_memory_stats_unregister(starpu_data_handle_t handle);

/* ---------------------------------------------------------------- jobs */

struct _astro_job;
struct _astro_tag;
struct _astro_dep_group;

/* One access of a job to a handle, linked in the handle's reader list while it may be depended on. */
struct _astro_data_link
{
	struct _astro_job *job;
	starpu_data_handle_t handle;
	enum starpu_data_access_mode mode;
	struct _astro_data_link *prev, *next;
	bool in_readers;
	bool is_writer;
	bool registered; /* took part in implicit dependencies / busy count */
	bool unordered;  /* no implicit dependency: exclusion is enforced at execution instead */
	bool exec_locked; /* holds the handle's execution lock (see _astro_data_fetch) */
	bool commute;     /* a STARPU_COMMUTE write: ordered against the other accesses, not against its peers */
	bool redux;       /* a STARPU_REDUX access on per-worker buffers: runs alongside its peers */
};

struct _astro_job
{
	struct starpu_task *task;            /* NULL for internal (acquire) jobs */
	unsigned long id;
	int pending;                         /* unreleased dependencies, +1 while being submitted */
	int end_pending;                     /* termination waits for these end dependencies (+1: execution) */
	starpu_pthread_mutex_t lock;                /* guards terminated and succs */
	int done;                            /* futex word: JOB_RUNNING, JOB_WAITED or JOB_DONE */
	bool terminated;
	bool waiting_groups;                 /* submitted, holding one pending count for the groups */
	bool submitted;
	bool destroy_requested;              /* starpu_task_destroy() called while it ran */
	struct _astro_job **succs;           /* one-shot successors: implicit data dependencies, end dependencies */
	unsigned nsuccs, succs_cap;
	/* Declared dependencies (starpu_task_declare_deps) persist across submissions, see task.c. */
	struct _astro_dep_group **groups;    /* groups this job waits for */
	unsigned ngroups;
	unsigned ngroups_ready;              /* groups with a completion not yet used by a submission */
	struct _astro_dep_group **pred_of;   /* groups in which this job is a predecessor */
	unsigned npred_of, pred_of_cap;
	struct _astro_tag *tag;
	unsigned tag_generation;             /* the tags' generation when tag was attached: tag is still there while it is current */
	unsigned nbuffers;
	unsigned nimpl;
	bool impl_chosen;                    /* nimpl was set by the policy (starpu_task_set_implementation), for the next execution */
	bool instr_saved;                    /* instrumentation states or bursts it left open are kept for its next run (instrument.c) */
	struct _astro_data_link *links;      /* nbuffers entries */
	struct _astro_data_link inline_links[4];
	int workerid;                        /* who ran it */
	/* acquire jobs: signalled (ready) when the data is accessible */
	int acquire_ready;                   /* futex word */
	void (*acquire_callback)(void *);
	void *acquire_arg;
	struct _astro_job *next_acquire;     /* in the handle's active-acquire stack */
	struct _astro_job *next_free;        /* deferred-completion list */
	struct starpu_profiling_task_info *profiling_info_pooled; /* task->profiling_info, a recycled block */
	/* Profiling: dates kept until the worker that pops the task makes its info (profiling.c). */
	int64_t profiling_submit_ns, profiling_push_ns;
	bool profiling_pending;
	bool embedded;                       /* allocated with its task by starpu_task_create() */
	bool watched;                        /* in the watchdog's list (watchdog.c), under its lock */
	/* Acquires only, in what was padding (a task's job does not grow). */
	bool acquire_evict;                  /* starpu_data_wont_use(): drop the device copies once written back */
	short acquire_node;                  /* where an acquire wants the data (-1: nowhere, e.g. STARPU_ACQUIRE_NO_NODE) */
	short prefetch_node;                 /* an asynchronous prefetch: the transfer thread brings the data there */
	struct _astro_job *watch_prev, *watch_next;
};

/* What starpu_task_create() allocates: the task with its job, one block (recycled). */
struct _astro_task_with_job
{
	struct starpu_task task;
	struct _astro_job job;
};

/* Where task may run on a worker of driver d (0: nowhere). */
static inline uint32_t _astro_task_where(const struct starpu_task *task, const struct astro_driver *d)
{
	uint32_t where = task->cl->where ? task->cl->where : d->where;
	if (task->where != -1 && task->where != 0)
		where &= (uint32_t)task->where;
	return where & d->where;
}

static inline struct _astro_job *_astro_job_of(struct starpu_task *task)
{
	return (struct _astro_job *)task->starpu_private;
}
struct _astro_job *_astro_job_get(struct starpu_task *task);
struct _astro_job *_astro_job_new_internal(void);
void _astro_job_free(struct _astro_job *job);
/* Adds succ as a successor of pred unless pred already terminated. Returns 1 if added. */
int _astro_job_add_succ(struct _astro_job *pred, struct _astro_job *succ);
/* Drops one dependency of job; at zero the job becomes ready. */
void _astro_job_release(struct _astro_job *job);
/* Calls fn for each job that waits for pred: its successors (implicit data
 * dependencies; is_end: an end dependency) and the successors of the groups
 * declared with pred (starpu_task_declare_deps). Under pred's lock. */
void _astro_job_for_each_waiter(struct _astro_job *pred, void (*fn)(struct _astro_job *waiter, bool is_end, void *arg), void *arg);
/* Called by a worker once the implementation returned. */
void _astro_job_terminate(struct _astro_job *job, int workerid);
/* Implementation index usable by workerid for task, -1 when none. */
int _astro_worker_impl_for(int workerid, struct starpu_task *task);
unsigned _astro_task_nbuffers(const struct starpu_task *task);

/* ---------------------------------------------------------------- tags */

void _astro_tags_init(void);
void _astro_tags_shutdown(void);
/* Links job to task->tag_id at submission (may add a dependency); -EINVAL,
 * with nothing changed, when another task still holds the tag. */
int _astro_tag_attach_job(struct _astro_job *job, starpu_tag_t id);
/* task (whose job is job) is freed: starpu_tag_get_task() no longer returns it. */
void _astro_tag_forget_task(struct _astro_job *job, struct starpu_task *task);
/* The tag of a terminating job is done. */
void _astro_tag_job_done(struct _astro_tag *tag, struct _astro_job *job);
/* The watchdog's report: one line per tag whose task waits for undone tags;
 * adds each such job to blocked (job -> its tag id). */
void _astro_tags_describe_blocked(GString *out, GHashTable *blocked);

/* ------------------------------------------------------------ watchdog */

/* watchdog.c: STARPU_WATCHDOG_TIMEOUT. While it runs, submitted jobs are listed
 * so that it can say which ones are stuck: a predictable branch at submission
 * and termination otherwise. */
extern int _astro_watchdog_tracking;
void _astro_watchdog_track(struct _astro_job *job);
void _astro_watchdog_untrack(struct _astro_job *job);
void _astro_watchdog_start(void);
void _astro_watchdog_stop(void);

/* ---------------------------------------------------------------- data */

#define _ASTRO_HANDLE_MAGIC 0x4a7d1e5cu

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
};

/* An asynchronous copy of a handle (the async_data the interfaces' copy
 * methods pass to starpu_interface_copy()): the drivers' requests it is
 * made of, completed together. */
struct _astro_copy
{
	unsigned src, dst;
	size_t bytes;
	unsigned nparts, cap;
	struct _astro_copy_part
	{
		const struct astro_node_ops *ops;
		int devid;
		void *request;
	} *parts;
};
/* Adds a driver's request to copy (memory.c); false when out of memory (then wait for it yourself). */
bool _astro_copy_add(struct _astro_copy *copy, const struct astro_node_ops *ops, int devid, void *request);

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
	starpu_pthread_cond_t idle_cond;
	struct _astro_job *last_writer;
	struct _astro_data_link *readers;    /* accesses since the last writer: reads, and commuting writes */
	unsigned ncommute;                   /* commuting writes among the readers */
	unsigned sequential_consistency;
	int busy;                            /* submitted accesses not yet terminated */
	/* Unordered accesses (sequential consistency off) still exclude each other while they run: readers share, writers own. */
	starpu_pthread_cond_t exec_cond;
	int exec_readers;
	bool exec_writer;
	struct starpu_arbiter *arbiter;      /* starpu_data_assign_arbiter(): takes the execution locks (arbiter.c) */
	struct _astro_job *acquires;         /* active application acquires, most recent first */
	enum starpu_data_access_mode fast_hold; /* an application acquire granted without a job (data.c), 0 when none */
	void (*fast_hold_callback)(void *);  /* its starpu_data_acquire_cb() callback, NULL for a blocking acquire */
	void *user_data;
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

/* Partitioning (filters.c): the checks of a filter, its number of parts, child id of them. */
bool _astro_filter_checks(starpu_data_handle_t handle, struct starpu_data_filter *f, const char *fn);
unsigned _astro_filter_nparts(struct starpu_data_filter *f, starpu_data_handle_t handle);
starpu_data_handle_t _astro_child_register(starpu_data_handle_t father, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/* Partition plans (partition_plans.c). While some exist, a submission's accesses
 * switch the plans they need first (one load per task otherwise). */
extern int _astro_plans;
int _astro_plans_task_access(struct starpu_task *task);
/* An access in mode to handle outside a task (an acquire): the plans it needs. */
void _astro_plans_access(starpu_data_handle_t handle, enum starpu_data_access_mode mode);
/* handle goes: its plans are gathered first (unregister), its own plan forgets it (free). */
void _astro_plans_gather(starpu_data_handle_t handle);
void _astro_plans_forget(starpu_data_handle_t handle);

/* ------------------------------------------------------ memory nodes */

/* One memory node (memory.c): main memory is node 0 (with STARPU_USE_NUMA,
 * nodes 0.. are the NUMA nodes: numa.c), then one per device. */
struct _astro_memory_node
{
	enum starpu_node_kind kind;
	int devid;
	const struct astro_driver *driver;   /* NULL for main memory (every RAM node) */
	const struct astro_node_ops *ops;    /* NULL for main memory (every RAM node) */
	size_t limit;                        /* bytes (STARPU_LIMIT_*_MEM), 0: none */
	size_t used;                         /* atomic: bytes the runtime allocated there */
	starpu_pthread_mutex_t lru_lock;
	struct _astro_replicate *lru_head, *lru_tail; /* least recently used first */
};
extern struct _astro_memory_node _astro_nodes[STARPU_MAXNODES];
/* Node 0 at workers' start; one more per device worker of a driver with node ops (its id, or -ENOSPC said). */
void _astro_memory_nodes_init(void);
int _astro_memory_node_add(const struct astro_driver *driver, int devid);
void _astro_memory_nodes_shutdown(void);
/* A memory node served by ops without a driver (a disk: disk.c): its id, or -ENOSPC said. */
int _astro_memory_node_add_ops(const struct astro_node_ops *ops, int devid);

/* Disk memory nodes (disk.c). _astro_disk_count: disks registered (atomic; 0: none of
 * the hooks below runs). The swap disk of STARPU_DISK_SWAP at init; unplugging all at
 * shutdown, once no buffer is left on them. The node a copy evicted from main memory
 * goes to (-1: none). A handle's copy between main memory and a disk for an interface
 * without copy method: packed (-ENODEV between two disks: go through main memory). */
extern int _astro_disk_count;
void _astro_disk_swap_init(void);
void _astro_disks_shutdown(void);
int _astro_disk_evict_target(starpu_data_handle_t h);
int _astro_disk_pack_transfer(starpu_data_handle_t h, unsigned src, unsigned dst);
/* The file back-ends' folder (disk_files.c): made at plug when missing, removed at
 * unplug when made then and left empty; a new uniquely named file there, or an
 * existing one by name (a descriptor, -1 said; *path to g_free); the whole-object
 * reads and writes through the back-end's read/write (fd: the object's file). */
struct _astro_disk_folder
{
	char *path;
	bool created;
};
struct starpu_disk_ops;
struct _astro_disk_folder *_astro_disk_folder_plug(const char *backend, void *parameter);
void _astro_disk_folder_unplug(struct _astro_disk_folder *f);
int _astro_disk_file_new(const struct _astro_disk_folder *f, int flags, char **path);
int _astro_disk_file_open(const struct _astro_disk_folder *f, const char *name, int flags, char **path);
int _astro_disk_full_read(const struct starpu_disk_ops *ops, void *base, void *obj, int fd, void **ptr, size_t *size, unsigned dst_node);
int _astro_disk_full_write(const struct starpu_disk_ops *ops, void *base, void *obj, int fd, size_t *obj_size, void *ptr, size_t size);
/* RAM nodes per NUMA node (numa.c): how many, from hwloc when STARPU_USE_NUMA=1
 * (1 otherwise); the RAM node of a processing unit (hwloc logical index, -1:
 * unbound); binding an allocation's pages to a RAM node; its bytes (0: unknown). */
unsigned _astro_numa_nodes_init(void);
unsigned _astro_numa_node_of_pu(int pu);
void _astro_numa_bind_area(unsigned node, void *addr, size_t size);
size_t _astro_numa_memory(unsigned node);
void _astro_lru_touch(struct _astro_replicate *r);
void _astro_lru_remove(struct _astro_replicate *r);
extern _ASTRO_TLS bool _astro_in_handle_copy;

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
/* The calling worker's STARPU_SCRATCH buffer of handle on node (aborts, said, when out of memory). */
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
/* The calling worker's reduction buffer of handle on node, initialised by the init codelet when created. */
void *_astro_redux_buffer(starpu_data_handle_t handle, unsigned node);
/* Combines the pending reduction buffers into the main-memory copy (once, whoever calls it first). */
void _astro_redux_combine(starpu_data_handle_t handle);
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
/* Is handle registered? Reports it for fn when not (data.c). */
bool _astro_data_live(starpu_data_handle_t handle, const char *fn);
/* Data arbiters (arbiter.c): the execution locks of a task's n accesses to
 * handles of one arbiter, taken all at once (under the handles' lock, as
 * data.c's exec_lock); a released execution lock wakes the arbiter's waiters;
 * an unregistered handle leaves its arbiter. */
/* Takes link's execution lock if free (take), or only says whether it is (data.c). */
bool _astro_data_exec_try(struct _astro_data_link *link, bool take);
void _astro_arbiter_lock(struct starpu_arbiter *arbiter, struct _astro_data_link **links, unsigned n);
void _astro_arbiter_wake(struct starpu_arbiter *arbiter);
void _astro_arbiter_forget(starpu_data_handle_t handle);
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
 * request for job ends it once done; one without holds the handle meanwhile. */
void _astro_transfers_start(void);
void _astro_transfers_stop(void);
void _astro_transfer_submit(starpu_data_handle_t handle, unsigned node, struct _astro_job *job);
/* data.c: a handle kept from being freed (busy) without an access; the end of a runtime acquire. */
void _astro_data_hold(starpu_data_handle_t handle);
void _astro_data_unhold(starpu_data_handle_t handle);
void _astro_data_runtime_acquire_done(struct _astro_job *job);
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
/* An acquire job's data is ready: bring it to the node it asked for. */
void _astro_coherency_acquired(struct _astro_job *job);
/* Brings the handles of a task that runs nothing (a partition switch) to main memory. */
void _astro_coherency_task_in_ram(struct starpu_task *task);
/* Bus figures (bus.c): measured at the first start on a configuration of
 * memory nodes, then read back from the sampling directory. */
void _astro_bus_init(void);
bool _astro_bus_figures(unsigned src, unsigned dst, double *bandwidth, double *latency);
/* Predicted time (µs) to make handle valid on node for an access in mode (0 when nothing moves). */
double _astro_data_transfer_time(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode);

/* The built-in interfaces' buffers on a node (interfaces.c): dev_handle is the
 * driver's address, ptr the CPU's (0 on OpenCL). */
starpu_ssize_t _astro_interface_alloc(unsigned node, size_t bytes, uintptr_t *ptr, uintptr_t *dev_handle);
void _astro_interface_free(unsigned node, uintptr_t *ptr, uintptr_t *dev_handle, size_t bytes);
/* Does p lie in the extent bytes from base (a CPU address; 0 on a device, where nothing does)? */
static inline int _astro_inside(uintptr_t base, size_t extent, const void *p)
{
	return base && (uintptr_t)p >= base && (uintptr_t)p < base + extent;
}
/* An interface made of a few separate arrays (the sparse ones: values and
 * indices), each addr[i] on a node, bytes[i] long. */
#define _ASTRO_MAX_ARRAYS 3
struct _astro_arrays
{
	unsigned n;
	uintptr_t addr[_ASTRO_MAX_ARRAYS];
	size_t bytes[_ASTRO_MAX_ARRAYS];
};
/* Allocates every array on node into a (all or none); returns the bytes or -ENOMEM. */
starpu_ssize_t _astro_arrays_alloc(unsigned node, struct _astro_arrays *a);
void _astro_arrays_free(unsigned node, struct _astro_arrays *a);
int _astro_arrays_copy(const struct _astro_arrays *src, unsigned src_node, const struct _astro_arrays *dst, unsigned dst_node, void *async);
size_t _astro_arrays_size(const struct _astro_arrays *a);
/* 1 when p lies in one of the arrays on node, else 0 (the pointer_is_inside method). */
int _astro_arrays_contain(const struct _astro_arrays *a, unsigned node, const void *p);
/* The arrays one after the other in a new buffer from starpu_malloc_on_node_flags(node, *count, 0) (ptr NULL: only the size). */
int _astro_arrays_pack(const struct _astro_arrays *a, unsigned node, void **ptr, starpu_ssize_t *count);
/* Copies a packed buffer of count bytes into the arrays (name: the interface, for the error). */
int _astro_arrays_peek(const struct _astro_arrays *a, const void *ptr, size_t count, const char *name);
/* The allocate, free, copy, size, pointer_is_inside and pack methods prefix##_* of an interface whose get(iface,
 * struct _astro_arrays *) lists its arrays and set(iface, const struct _astro_arrays *) stores their addresses. */
#define _ASTRO_ARRAYS_METHODS(prefix, get, set) \
	static starpu_ssize_t prefix##_allocate(void *data_interface, unsigned node) \
	{ \
		struct _astro_arrays a; \
		get(data_interface, &a); \
		starpu_ssize_t ret = _astro_arrays_alloc(node, &a); \
		if (ret >= 0) \
			set(data_interface, &a); \
		return ret; \
	} \
	static void prefix##_free(void *data_interface, unsigned node) \
	{ \
		struct _astro_arrays a; \
		get(data_interface, &a); \
		_astro_arrays_free(node, &a); \
		set(data_interface, &a); \
	} \
	static int prefix##_copy(void *src, unsigned src_node, void *dst, unsigned dst_node, void *async) \
	{ \
		struct _astro_arrays s, d; \
		get(src, &s); \
		get(dst, &d); \
		return _astro_arrays_copy(&s, src_node, &d, dst_node, async); \
	} \
	static size_t prefix##_size(starpu_data_handle_t handle) \
	{ \
		struct _astro_arrays a; \
		get(starpu_data_get_interface_on_node(handle, STARPU_MAIN_RAM), &a); \
		return _astro_arrays_size(&a); \
	} \
	static int prefix##_pointer_is_inside(void *data_interface, unsigned node, void *p) \
	{ \
		struct _astro_arrays a; \
		get(data_interface, &a); \
		return _astro_arrays_contain(&a, node, p); \
	} \
	_ASTRO_PACK_METHODS(prefix, struct _astro_arrays, get, _astro_arrays_pack, _astro_arrays_peek) \
	static const struct starpu_data_copy_methods prefix##_copy_methods = { .any_to_any = prefix##_copy };

/* The multiformat interface's conversions (interface_multiformat.c), on the worker of node:
 * to the device's format once a task's fetch brought the data, back after a task wrote it. */
void _astro_multiformat_fetched(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode);
/* Multiformat handles registered; a task's check that each device it may run on has its buffers' conversions (0, or -EINVAL said). */
extern int _astro_multiformat_handles;
int _astro_multiformat_check_task(struct starpu_task *task);
void _astro_multiformat_executed(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode);

/* The compressed-row part of the CSR and BCSR interfaces (interface_csr.c), in main memory. */
struct _astro_rows
{
	uint32_t nnz, nrow;
	uintptr_t nzval;
	uint32_t *colind, *rowptr;
	uint32_t firstentry;
};
/* Band id of nparts of consecutive rows, as views into father's arrays (entry_bytes: bytes of one entry's values). */
void _astro_rows_cut(const struct _astro_rows *father, struct _astro_rows *child, size_t entry_bytes, unsigned id, unsigned nparts);
/* Checks the arrays a CSR or BCSR registration gives (reported under fn). */
bool _astro_rows_check(const char *fn, int home_node, uint32_t nnz, uint32_t nrow, uintptr_t nzval, const uint32_t *colind,
		       const uint32_t *rowptr, uint32_t firstentry);

/* Copies a dense array (ndim dimensions nn, strides src_ld / dst_ld in elements) between two
 * nodes' buffers with starpu_interface_copy(), packed runs in one copy each. */
int _astro_interface_copy_dense(size_t ndim, const uint32_t *nn, size_t elemsize,
				uintptr_t src, size_t src_offset, const uint32_t *src_ld, unsigned src_node,
				uintptr_t dst, size_t dst_offset, const uint32_t *dst_ld, unsigned dst_node, void *async);
/* Copies a dense array of ndim dimensions nn (elements), elemsize bytes each,
 * between two CPU-addressable layouts with strides src_ld and dst_ld
 * (elements between consecutive indices of each dimension; ld[0] is 1). */
void _astro_copy_strided(size_t ndim, const uint32_t *nn, size_t elemsize, const char *src, const uint32_t *src_ld,
			 char *dst, const uint32_t *dst_ld);
/* Checks a pack/peek/unpack call on node: the data must be in that node's CPU-addressable memory. */
bool _astro_pack_node_ok(starpu_data_handle_t handle, unsigned node, const char *fn);

/* A dense layout on a CPU node (pack.c): ndim dimensions of nn elements,
 * ld elements between consecutive indices of each (ld[0] = 1), at base. */
#define _ASTRO_DENSE_MAXDIM 16
struct _astro_dense
{
	size_t ndim;
	uint32_t nn[_ASTRO_DENSE_MAXDIM];
	uint32_t ld[_ASTRO_DENSE_MAXDIM];
	size_t elemsize;
	char *base;
};
/* Packs the layout into a new buffer from starpu_malloc_on_node_flags(node, *count, 0) (ptr NULL: only the size). */
int _astro_pack_dense(const struct _astro_dense *d, unsigned node, void **ptr, starpu_ssize_t *count);
/* Copies a packed buffer of count bytes into the layout (name: the interface, for the error). */
int _astro_peek_dense(const struct _astro_dense *d, const void *ptr, size_t count, const char *name);
/* The pack_data, peek_data and unpack_data methods prefix##_pack/_peek/_unpack of an
 * interface whose describe(iface, type *) fills a description that pack(desc, node, ptr,
 * count) and peek(desc, ptr, count, name) use. */
#define _ASTRO_PACK_METHODS(prefix, type, describe, pack, peek) \
	static int prefix##_pack(starpu_data_handle_t handle, unsigned node, void **ptr, starpu_ssize_t *count) \
	{ \
		type desc; \
		if (!_astro_pack_node_ok(handle, node, "starpu_data_pack")) \
			return -EINVAL; \
		describe(starpu_data_get_interface_on_node(handle, node), &desc); \
		return pack(&desc, node, ptr, count); \
	} \
	static int prefix##_peek(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count) \
	{ \
		type desc; \
		if (!_astro_pack_node_ok(handle, node, "starpu_data_peek")) \
			return -EINVAL; \
		describe(starpu_data_get_interface_on_node(handle, node), &desc); \
		return peek(&desc, ptr, count, handle->ops->name); \
	} \
	static int prefix##_unpack(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count) \
	{ \
		int ret = prefix##_peek(handle, node, ptr, count); \
		if (ret == 0) \
			starpu_free_on_node_flags(node, (uintptr_t)ptr, count ? count : 1, 0); \
		return ret; \
	}
/* 1 when p lies within the layout (between its first and last elements), else 0. */
int _astro_dense_contains(const struct _astro_dense *d, const void *p);
/* The pack methods of a dense interface whose layout(iface, struct _astro_dense *) describes a
 * node's copy, and its pointer_is_inside method prefix##_pointer_is_inside. */
#define _ASTRO_DENSE_PACK_METHODS(prefix, layout) \
	_ASTRO_PACK_METHODS(prefix, struct _astro_dense, layout, _astro_pack_dense, _astro_peek_dense) \
	static int prefix##_pointer_is_inside(void *data_interface, unsigned node, void *p) \
	{ \
		(void)node; \
		struct _astro_dense d; \
		layout(data_interface, &d); \
		return _astro_dense_contains(&d, p); \
	}

/* The shadow width a filter gets: the filter_arg_ptr value itself, cast to a pointer. */
static inline unsigned _astro_filter_shadow(struct starpu_data_filter *f)
{
	return (unsigned)(uintptr_t)f->filter_arg_ptr;
}

/* Moves a view by bytes, as every interface keeps ptr and offset side by side. */
#define _ASTRO_VIEW_MOVE(child, father, bytes) do { \
		(child)->dev_handle = (father)->dev_handle; \
		(child)->ptr = (father)->ptr ? (father)->ptr + (bytes) : 0; \
		(child)->offset = (father)->offset + (bytes); \
	} while (0)

/* Registers job's accesses: implicit dependencies and busy counts. */
void _astro_data_submit_accesses(struct _astro_job *job, struct starpu_task *task);
/* Drops them at termination. */
void _astro_data_release_accesses(struct _astro_job *job);
/* Interfaces a worker of memory node node passes to the implementation. */
void _astro_data_fetch(struct _astro_job *job, struct starpu_task *task, unsigned node, void **buffers);
/* The same for a task whose data _astro_data_fetch_start() asked for: waits for it to arrive. */
void _astro_data_fetch_arrived(struct _astro_job *job, struct starpu_task *task, unsigned node, void **buffers);
/* Asks for task's data on node, asynchronously, ahead of its execution (a device worker's
 * pipeline): true when it did, false when the task fetches at its execution (accesses
 * that need their execution's order: commute, unordered, scratch, reduction, multiformat). */
bool _astro_data_fetch_start(struct _astro_job *job, struct starpu_task *task, unsigned node);
/* After the execution: frees the scratch buffers, lets the fetched copies be evicted again. */
void _astro_data_executed(struct _astro_job *job, struct starpu_task *task, unsigned node);
int _astro_data_check_mode(enum starpu_data_access_mode mode);
/* Waits until no submitted access to handle is left (whatever its consistency). */
void _astro_data_wait_idle(starpu_data_handle_t handle);

/* ------------------------------------------------------------- workers */

/* A codelet a worker ran, and where its executions are counted: its own
 * per_worker_stats, or the runtime's record of a codelet in read-only memory. */
#define _ASTRO_CODELET_SLOTS 8
struct _astro_codelet_slot
{
	const struct starpu_codelet *cl;
	unsigned long *stats;
};
/* Resolves cl into slot: the counts, NULL when they cannot be kept (out of memory). */
unsigned long *_astro_codelet_slot_fill(struct _astro_codelet_slot *slot, struct starpu_codelet *cl);

/* Largest pipeline of a device worker (STARPU_*_PIPELINE). */
#define _ASTRO_PIPELINE_MAX 64

struct _astro_worker
{
	int id;
	int devid;
	int bindid;                          /* processing unit (hwloc logical index), -1 unbound */
	enum starpu_worker_archtype arch;
	const struct astro_driver *driver;
	unsigned memory_node;
	char name[48];
	starpu_pthread_t thread;
	pid_t tid;
	/* Sleeping: a waker sets wake_pending then signals if sleeping (see worker.c). */
	starpu_pthread_mutex_t sched_mutex;
	starpu_pthread_cond_t sched_cond;
	int sleeping;
	int wake_pending;
	int work_queued;                     /* a task was queued for this worker alone: stop pausing (astro_worker_wake_for_queued) */
	int enabled;
	int relax;
	struct starpu_task *current_task;
	unsigned pipeline;                   /* tasks it holds at once, their data asked for ahead (worker.c) */
	/* starpu_push_local_task() queue */
	starpu_pthread_mutex_t local_lock;
	struct starpu_task_list local_tasks;
	int nlocal;
	unsigned orders_done;                /* tasks with a workerorder it popped, under local_lock */
	unsigned long executed;
	struct _astro_participation *parallel_head, *parallel_tail; /* parts in parallel tasks, under local_lock, counted in nlocal */
	struct _astro_participation *parallel; /* the parallel task it runs as rank 0 (parallel.c) */
	uint32_t ctx_mask;                   /* atomic: the contexts other than 0 it belongs to (bit = id) */
	unsigned ctx_turn;                   /* the context it served last, to take them in turn */
	/* Per context: starpu_sched_ctx_set_priority()'s order and the tasks policies counted for it
	 * (starpu_sched_ctx_list_task_counters_*): a worker in several contexts serves first the one of
	 * highest priority that has tasks counted for it (ctx_pop in sched.c). Atomic. */
	unsigned ctx_priority[STARPU_NMAX_SCHED_CTXS];
	int ctx_ntasks[STARPU_NMAX_SCHED_CTXS];
	uint32_t master_of;                  /* atomic: the nested contexts it is the master of (bit = id) */
	uint32_t hands_down;                 /* atomic: the nested contexts it gives what it takes from their parent (bit = id) */
	struct _astro_codelet_slot codelet_slots[_ASTRO_CODELET_SLOTS]; /* where the codelets it ran count (codelet_stats.c) */
} __attribute__((aligned(_ASTRO_CACHELINE)));

extern _ASTRO_TLS struct _astro_worker *_astro_self;
extern _ASTRO_TLS struct starpu_task *_astro_current_task;

/* The per-task instrumentation context (instrument.c): how many of this thread's open states and bursts
 * belong to a task; a thread leaving a task with some (_astro_instr_task_leave) keeps them with its job,
 * a thread coming back to a job with instr_saved opens them again (_astro_instr_task_enter). */
extern _ASTRO_TLS unsigned _astro_instr_task_open;
void _astro_instr_task_leave(struct _astro_job *job);
void _astro_instr_task_enter(struct _astro_job *job);
void _astro_instr_job_forget(struct _astro_job *job);
#define _ASTRO_INSTR_TASK_ENTER(job) do { if (STARPU_UNLIKELY(__atomic_load_n(&(job)->instr_saved, __ATOMIC_ACQUIRE))) _astro_instr_task_enter(job); } while (0)
#define _ASTRO_INSTR_TASK_LEAVE(job) do { if (STARPU_UNLIKELY(_astro_instr_task_open)) _astro_instr_task_leave(job); } while (0)

/* ------------------------------------------------------- call context */

/* What the calling thread runs for the runtime, besides tasks on workers
 * (_astro_self): set around the code the runtime calls back, which may run on
 * an application thread too (a prologue or a tool callback during a
 * submission), so that blocking or terminal calls made from there are refused
 * instead of deadlocking. Counter listeners are known to counters/
 * (_astro_counters_in_listener). */
enum _astro_call_context
{
	_ASTRO_CTX_APPLICATION = 0,
	_ASTRO_CTX_CALLBACK,                 /* a task's callback, prologue or epilogue */
	_ASTRO_CTX_TOOL,                     /* a profiling-tool callback */
};
extern _ASTRO_TLS enum _astro_call_context _astro_call_context;

static inline enum _astro_call_context _astro_context_enter(enum _astro_call_context context)
{
	enum _astro_call_context previous = _astro_call_context;
	_astro_call_context = context;
	return previous;
}

static inline void _astro_context_leave(enum _astro_call_context previous)
{
	_astro_call_context = previous;
}

/* Is the calling thread inside the runtime: a worker, a callback, a tool callback or a listener? */
bool _astro_called_back(void);

/* Returns 0 when the calling thread may block. From a task, a callback, a tool
 * callback or a counter listener, prints one line saying that call cannot be
 * made from there (hint: what to do instead, or NULL) and returns -EDEADLK. */
int _astro_forbid_blocking(const char *call, const char *hint);

/* starpu_worker_get_id(), inlined on the task path. */
static inline int _astro_worker_id(void)
{
	return _astro_self ? _astro_self->id : -1;
}

int _astro_workers_start(void);
void _astro_workers_stop(void);
void _astro_worker_wake(struct _astro_worker *w);
void _astro_workers_free(void);
/* The calling thread becomes w's (its id, binding, the driver's set-up), and stops being it. */
void _astro_worker_thread_begin(struct _astro_worker *w);
void _astro_worker_thread_end(struct _astro_worker *w);
/* One round of w's scheduling loop; idle: its idle counts between rounds, { 0, 1 } at first. */
void _astro_worker_round(struct _astro_worker *w, unsigned idle[2]);

/* The driver API (driver_api.c): marks the workers starpu_conf.not_launched_drivers names
 * (before their threads start; returns how many), tells one, and waits at shutdown
 * (running is 0) for the application's threads to leave their loops. */
int _astro_drivers_mark_not_launched(void);
bool _astro_driver_not_launched(int workerid);
void _astro_drivers_wait_out(void);
/* Does an OpenCL driver name the worker of OpenCL device devid? The OpenCL API half
 * (plugins/drivers/opencl/opencl_api.c) sets this when it opens its devices: the kernel
 * names no OpenCL function, and without it no OpenCL driver names a worker. */
void _astro_driver_api_set_opencl_matcher(bool (*names)(const struct starpu_driver *driver, int devid));

/* Forgets which threads of the program hold which units (binding.c), at shutdown. */
void _astro_binding_reset(void);

/* A task destroyed or cleaned leaves its bundle (bundle.c). */
void _astro_bundle_forget(struct starpu_task *task);

/* One more execution of cl on w (STARPU_CODELET_PROFILING). */
static inline void _astro_codelet_count(struct _astro_worker *w, struct starpu_codelet *cl)
{
	struct _astro_codelet_slot *slot = &w->codelet_slots[((uintptr_t)cl >> 8) % _ASTRO_CODELET_SLOTS];
	unsigned long *stats = STARPU_LIKELY(slot->cl == cl) ? slot->stats : _astro_codelet_slot_fill(slot, cl);
	if (STARPU_LIKELY(stats != NULL))
		__atomic_add_fetch(&stats[w->id], 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------ parallel tasks */

/* parallel.c: combined workers and the execution of parallel tasks on them. */
struct _astro_participation;
bool _astro_is_combined_worker(int id);
/* Queues task on the members of combined worker combined_id. */
int _astro_parallel_push(int combined_id, struct starpu_task *task);
/* Under w->local_lock (released) with w->parallel_head set: the task to run as rank 0, or NULL once another rank ran its part. */
struct starpu_task *_astro_parallel_take(struct _astro_worker *w);
/* Rank 0 runs w->parallel's task with its members. */
void _astro_parallel_execute(struct _astro_worker *w, struct starpu_task *task, void **buffers, unsigned nimpl);
/* Rank 0, once the task's end was observed: no longer a combined worker. */
void _astro_parallel_ended(void);
void _astro_combined_workers_reset(void);

/* ----------------------------------------------------------- scheduling */

int _astro_sched_select(void);
void _astro_sched_deinit(void);
int _astro_sched_push(struct starpu_task *task);
/* starpu_worker_can_execute_task() but for task->workerids; and whether task->workerids allows worker or combined worker id. */
int _astro_worker_can_execute(unsigned workerid, struct starpu_task *task, unsigned nimpl);
int _astro_task_allows_worker(const struct starpu_task *task, unsigned id);
/* again: the worker's previous pop found nothing (its empty polls are not observed). */
struct starpu_task *_astro_sched_pop(struct _astro_worker *w, bool again);

/* -------------------------------------------------------------- plugins */

int _astro_plugins_load(void);
void _astro_plugins_unload(void);
struct starpu_sched_policy *_astro_policy_lookup(const char *name);
/* The one check of a policy wherever it comes from (from names it in the message): 0, or -EINVAL said. */
int _astro_policy_check(const struct starpu_sched_policy *policy, const char *from);
void _astro_policies_print(FILE *out);
const struct astro_driver *_astro_driver_nth(unsigned i);
unsigned _astro_driver_count(void);
void _astro_registries_clear(void);
/* Trace-format plugins (format_*), loaded by astro_trace_formats_load() (trace_format.c), not by starpu_init(). */
void _astro_format_plugins_load(void);
char *_astro_plugin_initialising(bool refused);

/* Profiling tools (prof_tool.c): loaded after the plugins, unloaded once the workers stopped. */
void _astro_prof_tool_load(void);
void _astro_prof_tool_unload(void);

/* ------------------------------------------------- scheduling contexts */

/* A scheduling context (sched_ctx.c): a set of workers running its own
 * instance of a policy. Context 0, the global one, holds every worker for the
 * whole run, so its push and pop take no lock; another context's push and pop
 * hold its lock for reading, and changing its workers holds it for writing. */
enum _astro_ctx_state
{
	_ASTRO_CTX_FREE = 0,
	_ASTRO_CTX_CREATING,                 /* its policy is being set up */
	_ASTRO_CTX_LIVE,
	_ASTRO_CTX_DELETING,                 /* refuses new tasks, waits for its own */
};
struct _astro_sched_ctx
{
	int state;                           /* atomic: an enum _astro_ctx_state */
	struct starpu_sched_policy *policy;
	void *policy_data;
	struct starpu_worker_collection collection;
	int min_prio, max_prio;
	bool min_prio_set, max_prio_set;
	/* Contexts other than 0 only: */
	char *name;
	starpu_pthread_rwlock_t lock;               /* read: push, pop, exec hooks; write: its workers change */
	long ntasks;                         /* atomic: submitted, not completed */
	starpu_pthread_mutex_t wait_lock;           /* starpu_task_wait_for_all_in_ctx, delete */
	starpu_pthread_cond_t wait_cond;
	unsigned inheritor;                  /* STARPU_NMAX_SCHED_CTXS: none */
	bool finished_submit;
	unsigned hierarchy_level;
	/* starpu_iteration_push(): the levels open in this context, the first two numbers (compat.c). */
	unsigned iteration_level;
	long iterations[2];
	void *user_data;
	void (*policy_init)(unsigned);
	/* Nesting (sched_ctx_nested.c), changed under the contexts' lock: */
	unsigned nesting;                    /* the context it is nested in, STARPU_NMAX_SCHED_CTXS: none */
	uint32_t children;                   /* atomic: the contexts nested in it (bit = id) */
	int master;                          /* atomic: a nested context's master (its lowest worker), -1: none */
	bool awake_workers;                  /* STARPU_SCHED_CTX_AWAKE_WORKERS */
	bool no_scheduler;                   /* nested without a policy: its tasks run on its master */
	/* Ready tasks (pushed, not completed) and their flops (starpu_sched_ctx_get_nready_tasks/_flops). Atomic. */
	long nready;
	double nready_flops;
	/* Tasks pushed while it had no worker, in order, under wait_lock: pushed once workers come
	 * (starpu_sched_ctx_add_workers); with nwaiting_release >= 0 (starpu_sched_ctx_stop_task_submission),
	 * only that many of them. */
	struct starpu_task_list waiting;
	int nwaiting, nwaiting_release;
	/* starpu_sched_ctx_register_close_callback(): called once its tasks ended after finished_submit. */
	void (*close_callback)(unsigned, void *);
	void *close_args;
	int closed;                          /* atomic: the close step ran */
	/* STARPU_SCHED_CTX_SUB_CTXS: the contexts given as its sub-contexts (starpu_sched_ctx_get_sub_ctxs). */
	int sub_ctxs[STARPU_NMAX_SCHED_CTXS];
	int nsub_ctxs;
	/* The priority caps of its policy (knobs starpu.task.s_*_priority_cap_knob), INT_MIN/INT_MAX until set. Atomic. */
	int prio_cap_min, prio_cap_max;
};

/* Sets up context 0 with the runtime's policy and every worker; tears every context down. */
void _astro_ctx_global_setup(struct starpu_sched_policy *policy);
void _astro_ctxs_teardown(void);
/* A task of context ctx (not 0) became ready / completed: its ready counts (not 0). */
void _astro_ctx_ready(unsigned ctx, const struct starpu_task *task, int sign);
/* A task of context ctx (not 0) is submitted: 0, or -EINVAL said when ctx cannot take tasks. */
int _astro_ctx_task_submitted(unsigned ctx, struct starpu_task *task);
/* ... or completed. */
void _astro_ctx_task_done(unsigned ctx);
/* The context unset tasks of the calling thread go to (starpu_sched_ctx_set_context). */
extern _ASTRO_TLS unsigned _astro_ctx_current;
/* Iteration levels open in any context (starpu_iteration_push): while there are
 * some, a submission stamps its task with its context's numbers (one load per task otherwise). */
extern unsigned _astro_iterations_open;
void _astro_iteration_stamp(struct starpu_task *task);
/* The policy hooks around an execution, in the task's context. */
void _astro_ctx_exec_hook(struct starpu_task *task, bool post);
/* Pushes task to context c (not 0) under its lock (sched.c). */
int _astro_ctx_push(struct _astro_sched_ctx *c, struct starpu_task *task);
/* Under c's lock (read): c has no worker, task waits in it until some come. */
void _astro_ctx_wait_for_workers(struct _astro_sched_ctx *c, struct starpu_task *task);
/* The hypervisor link (sched_ctx_hypervisor.c): context ctx got task while it has no worker;
 * context ctx is being deleted (its tasks ended; its counters go); the runtime stops. */
void _astro_hyp_empty_ctx(unsigned ctx, struct starpu_task *task);
void _astro_hyp_ctx_deleted(unsigned ctx);
void _astro_hyp_reset(void);
/* Queues task on w's own queue and wakes it, unobserved (starpu_push_local_task observes). */
void _astro_push_local(struct _astro_worker *w, struct starpu_task *task, int back);
/* The context id names (STARPU_NMAX_SCHED_CTXS: the global one), or NULL said in one line naming fn. */
struct _astro_sched_ctx *_astro_ctx_get(unsigned id, const char *fn);

/* Nested contexts (sched_ctx_nested.c). The policy of a context nested without one. */
extern struct starpu_sched_policy _astro_master_policy;
/* Under the contexts' lock, once contexts or their workers changed: the masters, and who hands tasks down. */
void _astro_ctx_nesting_update(void);
/* Under the contexts' lock: context id, being deleted, leaves its parent and its children. */
void _astro_ctx_nesting_cut(unsigned id);
/* Worker w popped task from context parent: when w hands tasks down to a context nested in it, the
 * task goes there (NULL returned), else it is returned. */
struct starpu_task *_astro_ctx_hand_down(struct _astro_worker *w, unsigned parent, struct starpu_task *task);

/* -------------------------------------------------------------- runtime */

struct _astro_runtime
{
	struct starpu_conf conf;
	int initialized;                     /* atomic: an enum _astro_state */
	unsigned nworkers;
	struct _astro_worker *workers[STARPU_NMAXWORKERS];
	unsigned nworkers_by_arch[STARPU_NARCH];
	uint32_t where_mask;                 /* union of the drivers' where bits with workers */
	const struct astro_driver *active_drivers[STARPU_NARCH]; /* drivers that started workers */
	unsigned nactive_drivers;
	struct _astro_sched_ctx ctxs[STARPU_NMAX_SCHED_CTXS]; /* 0: the global context, every worker's */
	int running;                         /* workers keep looping */
	int paused;
	starpu_pthread_mutex_t pause_lock;
	starpu_pthread_cond_t pause_cond;
	long nsubmitted;                     /* atomic: submitted, not completed (+1 per submission under way) */
	long nready;                         /* atomic */
	starpu_pthread_mutex_t wait_lock;           /* wait_for_all */
	starpu_pthread_cond_t wait_cond;
	int all_waiters;                     /* threads in starpu_task_wait_for_n_submitted() */
	long wait_threshold;                 /* largest n they wait for: completions above it wake nobody */
	bool nobind;
	bool codelet_profiling;
	int calibrate;                       /* STARPU_CALIBRATE; starpu.global.g_calibrate_knob */
	int prio_capped;                     /* a priority cap knob was set: submissions clamp priorities to their context's caps */
	void *topology;                      /* hwloc_topology_t */
	unsigned npus;
	unsigned ncores;
	double start_time;
	unsigned nmemory_nodes;
};

extern struct _astro_runtime _astro_rt;

/* The runtime's life (init.c). starpu_shutdown() drains in two steps: while
 * DRAINING only the runtime's own threads and callbacks may still submit
 * (StarPU lets callbacks submit during the final wait); once STOPPING nobody
 * may, and the last tasks accepted are waited for before anything is torn
 * down. A submission counts itself in nsubmitted before it reads the state
 * (task.c, submit_enter): either shutdown's wait sees it or it sees the state. */
enum _astro_state
{
	_ASTRO_STOPPED = 0,
	_ASTRO_RUNNING = 1,
	_ASTRO_STARTING = -1,
	_ASTRO_DRAINING = 2,
	_ASTRO_STOPPING = 3,
};

static inline struct _astro_worker *_astro_worker(int id)
{
	return _astro_rt.workers[id];
}

/* Running, or draining at shutdown: tasks still run. */
static inline bool _astro_running(void)
{
	int state = __atomic_load_n(&_astro_rt.initialized, __ATOMIC_ACQUIRE);
	return state == _ASTRO_RUNNING || state == _ASTRO_DRAINING;
}

/* One round of polite spinning: pause instructions first, then give the core away. */
void _astro_relax(unsigned round);


/* Waits until at most n submitted tasks are not complete (no check of the calling thread). */
void _astro_task_wait_for_n(unsigned n);
/* The same, unobserved, and ending early when give_up() (looked at every few ms) is true. */
void _astro_task_wait_for_n_unless(unsigned n, bool (*give_up)(void));

/* throttle.c: STARPU_LIMIT_MAX/MIN_SUBMITTED_TASKS. _astro_throttling: both are set (read at init). */
extern bool _astro_throttling;
void _astro_throttle_init(void);
/* Holds the calling application thread while the limit is reached (starpu_task_submit, when _astro_throttling). */
void _astro_throttle(void);
/* starpu_task_submit() for a task the runtime submits for itself during another submission: never held. */
int _astro_task_submit_internally(struct starpu_task *task);

/* Called once all submitted tasks are complete, or one more completed. */
void _astro_task_completed_count(void);

/* Environment resolution honouring conf->precedence_over_environment_variables. */
int _astro_conf_int(const char *env, const char *alias, int conf_value);
/* The same for a value that must lie in [min, max]: any other is said once and
 * replaced by conf_value, or fallback when the conf leaves it at -1. */
int _astro_conf_int_in(const char *env, const char *alias, int conf_value, int min, int max, int fallback);
/* Parses the integer variable name (util.c): 1 and *out when set to a number in
 * [min, max], 0 when unset, -1 when set to something else, which is said in
 * one line naming the variable, its value and what is used instead: *fallback,
 * or nothing (as if unset) when fallback is NULL. */
int _astro_env_int(const char *name, int min, int max, const int *fallback, int *out);
/* The variable's value when it lies in [min, max], fallback otherwise (saying why when it is set). */
int _astro_env_int_in(const char *name, int min, int max, int fallback);

/* ------------------------------------------------------------- counters */

/* counters/: registration opens before the plugins load (the runtime's own
 * counters first, ids as StarPU's), closes once the workers run; shutdown
 * after the workers stopped. */
void _astro_counters_init(void);
void _astro_counters_start(int start_collection);
void _astro_counters_shutdown(void);
/* Is the calling thread running a counter listener? */
bool _astro_counters_in_listener(void);


/* --------------------------------------------------------------- models */

/* models/: performance models. Init once the workers exist (their
 * architectures); shutdown saves calibrated models, before the workers go. */
void _astro_models_init(void);
void _astro_models_shutdown(void);
/* The directory the models and the bus files are written to (STARPU_PERF_MODEL_DIR,
 * else $STARPU_HOME/.starpu/sampling), and the host name their files carry (STARPU_HOSTNAME). */
void _astro_sampling_dir(char *path, size_t len);
void _astro_host_name(char *host, size_t len);
/* _astro_rt.calibrate changed (the knob): models start or stop measuring. */
void _astro_models_calibrate_changed(void);

/* ---------------------------------------------------------------- knobs */

/* knobs/: the steering framework, and the kernel's knobs declared before the plugins' (ids as StarPU's). */
void _astro_knobs_init(void);
void _astro_knobs_shutdown(void);
/* Clamps task->priority to the caps of its context's policy; called at submission when _astro_rt.prio_capped. */
void _astro_task_cap_priority(struct starpu_task *task);
/* Gives context c, being created with its policy set, the caps set for that policy (knobs/kernel_knobs.c). */
void _astro_ctx_caps_setup(struct _astro_sched_ctx *c);
/* signals.c: the runtime's handlers of SIGINT, SIGSEGV and SIGTRAP (STARPU_CATCH_SIGNALS). */
void _astro_signals_init(void);
void _astro_signals_shutdown(void);
int _astro_signals_catch(bool on);
int _astro_signals_caught(void);

/* A call into a plugin or a tool that is not on the task path (a plugin's
 * init and fini, a tool's register function, a policy's init_sched...),
 * recorded for the signal handler, which names the one that crashed. The
 * strings must outlive the call; calls nest (a tool's register function may
 * call into the runtime, which calls a plugin). */
struct _astro_foreign_call
{
	const char *what;			/* "plugin sched_eager's init" */
	const char *file;			/* the library it lives in */
	const char *symbol;			/* the symbol it was found by */
	const char *advice;			/* "the plugin crashed; fix or remove it" */
	struct _astro_foreign_call *outer;
	char *owned_what;			/* what, when _astro_foreign_enter_fn() formatted it */
};
extern _ASTRO_TLS struct _astro_foreign_call *_astro_foreign_call;
/* Sets call->file and call->symbol to where fn lives; symbol is fallback when fn is not exported. */
void _astro_foreign_locate(struct _astro_foreign_call *call, void *fn, const char *fallback);

/* Enters a call of fn, located with _astro_foreign_locate(), its what formatted
 * from fmt (freed by _astro_foreign_leave_fn()). */
void _astro_foreign_enter_fn(struct _astro_foreign_call *call, void *fn, const char *fallback, const char *advice,
			     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void _astro_foreign_leave_fn(struct _astro_foreign_call *call);

static inline void _astro_foreign_enter(struct _astro_foreign_call *call)
{
	call->outer = _astro_foreign_call;
	_astro_foreign_call = call;
	/* The handler runs on this thread: the compiler must not sink the store past the call. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void _astro_foreign_leave(struct _astro_foreign_call *call)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	_astro_foreign_call = call->outer;
}

#endif /* __ASTRO_KERNEL_H__ */
