/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tasks room: jobs and the life of a task from submission to completion
 * (task.c), a job's accesses to its handles (accesses.c, arbiter.c),
 * waiting for tasks (wait.c), tags, bundles, submission throttling,
 * starpu_task_insert, the watchdog and what an idle wait waits for (idle_wait.c).
 */
#ifndef __ASTRO_TASKS_H__
#define __ASTRO_TASKS_H__

#include "sched/sched.h"

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

/* A job's done word (a futex): running, a thread waits for it (starpu_task_wait), complete. */
/* JOB_DESTROY: starpu_task_destroy() of a detached task that runs: its completion frees it. */
enum { JOB_RUNNING = 0, JOB_WAITED = 1, JOB_DONE = 2, JOB_DESTROY = 3 };
/* A job's link_state: nobody ever listed a successor on it (most jobs), someone did (sticky), or it
 * terminated while unlinked, without taking its lock (release_successors, task.c); its next
 * submission makes a closed job unlinked again. */
enum { JOB_UNLINKED = 0, JOB_LINKED = 1, JOB_CLOSED = 2 };

struct _astro_job
{
	struct starpu_task *task;            /* NULL for internal (acquire) jobs */
	unsigned long id;
	void *policy_data;                   /* the policy's state for the task, NULL until one sets it (task->sched_data is the application's) */
	int runnable_on;                     /* see struct _astro_job_head */
	int pending;                         /* unreleased dependencies, +1 while being submitted */
	int end_pending;                     /* termination waits for these end dependencies (+1: execution) */
	astro_lock_t lock;                   /* guards terminated and succs (held briefly: nothing to destroy) */
	int done;                            /* futex word: JOB_RUNNING, JOB_WAITED, JOB_DONE or JOB_DESTROY */
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
	unsigned char link_state;            /* JOB_UNLINKED, JOB_LINKED or JOB_CLOSED: see _astro_job_link() */
	struct _astro_data_link *links;      /* nbuffers entries */
	int workerid;                        /* who ran it */
	/* acquire jobs: signalled (ready) when the data is accessible */
	int acquire_ready;                   /* futex word: 1 granted, 2 granted but its data could not be brought there */
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
	bool nodeps;                         /* submitted by starpu_task_submit_nodeps(): its accesses take no part in data dependencies */
	/* Acquires only, in what was padding (a task's job does not grow). */
	bool acquire_evict;                  /* starpu_data_wont_use(): drop the device copies once written back */
	short acquire_node;                  /* where an acquire wants the data (-1: nowhere, e.g. STARPU_ACQUIRE_NO_NODE) */
	short prefetch_node;                 /* an asynchronous prefetch: the transfer thread brings the data there */
	unsigned char prefetch_level;        /* ... at this level (enum starpu_is_prefetch) */
	short prefetch_prio;                 /* ... and priority */
	struct _astro_job *watch_prev, *watch_next;
	/* Last: _astro_job_init() leaves it as it is (_astro_job_links() clears what it uses). */
	struct _astro_data_link inline_links[4];
};

/* A worker asks for the job's first ASTRO_JOB_HOT_BYTES (astrolabe/plugin.h) before it takes
 * the task: what running and ending it touch, all but the inline links. */
_Static_assert(offsetof(struct _astro_job, inline_links) <= ASTRO_JOB_HOT_BYTES,
	       "the job's fields before its inline links are what a worker asks for ahead");
_Static_assert(ASTRO_TASK_HOT_BYTES == 176, "tests/test_tasks.cc (TheFieldsEveryTaskReadsComeFirst) checks 176 bytes");

/* _astro_job_id_of() (common/common.h) reads a job through its head. */
_Static_assert(offsetof(struct _astro_job, task) == offsetof(struct _astro_job_head, task) &&
	       offsetof(struct _astro_job, id) == offsetof(struct _astro_job_head, id) &&
	       offsetof(struct _astro_job, policy_data) == offsetof(struct _astro_job_head, policy_data) &&
	       offsetof(struct _astro_job, runnable_on) == offsetof(struct _astro_job_head, runnable_on), "a job begins with its head");

/* What starpu_task_create() allocates: the task with its job, one block (recycled). */
struct _astro_task_with_job
{
	struct starpu_task task;
	struct _astro_job job;
};

static inline struct _astro_job *_astro_job_of(struct starpu_task *task)
{
	return (struct _astro_job *)task->starpu_private;
}
/* A thread comes back to job, or leaves it (instrumentation states and bursts it left open, observe/instrument.c);
 * the job ends (forgets what it kept). Nothing with ASTRO_DISABLE_INSTRUMENTATION (configure --disable-instrumentation). */
#ifdef ASTRO_DISABLE_INSTRUMENTATION
#define _ASTRO_INSTR_TASK_ENTER(job) ((void)(job))
#define _ASTRO_INSTR_TASK_LEAVE(job) ((void)(job))
#define _ASTRO_INSTR_JOB_FORGET(job) ((void)(job))
#else
#define _ASTRO_INSTR_TASK_ENTER(job) do { if (STARPU_UNLIKELY(__atomic_load_n(&(job)->instr_saved, __ATOMIC_ACQUIRE))) \
		_astro_instr_task_enter((job)->task, &(job)->instr_saved); } while (0)
#define _ASTRO_INSTR_TASK_LEAVE(job) do { if (STARPU_UNLIKELY(_astro_instr_task_open)) _astro_instr_task_leave((job)->task, &(job)->instr_saved); } while (0)
#define _ASTRO_INSTR_JOB_FORGET(job) do { if (STARPU_UNLIKELY(__atomic_load_n(&(job)->instr_saved, __ATOMIC_RELAXED))) \
		_astro_instr_forget(&(job)->instr_saved); } while (0)
#endif
/* A job (job.c): initialised (an id of its own, one pending count: its submission), or
 * the task's (made when missing), or one of the runtime's own, without task. */
extern unsigned long _astro_next_job_id;
static inline void _astro_job_init(struct _astro_job *job)
{
	memset(job, 0, offsetof(struct _astro_job, inline_links));
	job->id = __atomic_add_fetch(&_astro_next_job_id, 1, __ATOMIC_RELAXED);
	job->pending = 1;
	job->end_pending = 1;
	job->workerid = -1;
}
struct _astro_job *_astro_job_get(struct starpu_task *task);
/* Where cl declares the mode of buffer i; NULL when cl has no room for it
 * (nbuffers > STARPU_NMAXBUFS without dyn_modes). */
static inline enum starpu_data_access_mode *_astro_codelet_mode_slot(struct starpu_codelet *cl, unsigned i)
{
	if (cl->dyn_modes)
		return &cl->dyn_modes[i];
	return i < STARPU_NMAXBUFS ? &cl->modes[i] : NULL;
}
/* task->magic once the runtime freed the task (destroy=1 after completion, starpu_task_destroy):
 * a recycled block keeps it until reused, so a dependency on a freed task can be told. */
#define _ASTRO_TASK_FREED_MAGIC 0x46524545
bool _astro_task_was_freed(const struct starpu_task *task);
struct _astro_job *_astro_job_new_internal(void);
void _astro_job_free(struct _astro_job *job);
struct _astro_dep_group
{
	struct _astro_job *succ;
	unsigned ndeps;
	unsigned remaining;                  /* under succ->lock */
	unsigned banked;                     /* completions of the group not yet used by a submission of succ (under succ->lock) */
	struct _astro_job **preds;           /* NULL once a predecessor is freed */
};

/* Serialises changes of the declared graph against freeing its jobs (never on the task path). */
extern starpu_pthread_mutex_t _astro_dep_graph_lock;

/* Successor entries with this low bit set are end dependencies (starpu_task_declare_end_deps). */
#define _ASTRO_END_DEP_BIT ((uintptr_t)1)
/* Declared dependencies (job.c): one more completion of a group's predecessors, returning the
 * job it releases (NULL: none); a submission uses up one completion of each of its groups. */
struct _astro_job *_astro_group_notify(struct _astro_dep_group *g);
/* Before listing a successor on pred (then under pred->lock): marks pred linked, so that its
 * termination takes the lock and releases what is listed. Returns true when pred had terminated
 * without the lock (closed): it counts as terminated even if pred->terminated does not say so yet. */
static inline bool _astro_job_link(struct _astro_job *pred)
{
	unsigned char state = __atomic_load_n(&pred->link_state, __ATOMIC_ACQUIRE);
	while (state != JOB_LINKED)
		if (__atomic_compare_exchange_n(&pred->link_state, &state, JOB_LINKED, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return state == JOB_CLOSED;
	return false;
}
/* Adds a successor entry (a job, or a job | _ASTRO_END_DEP_BIT) to pred unless it terminated: 1 if added. */
int _astro_job_add_succ_entry(struct _astro_job *pred, void *entry);
void _astro_groups_claim(struct _astro_job *job);
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

/* ---------------------------------------------------------------- tags */

void _astro_tags_init(void);
void _astro_tags_shutdown(void);
/* Links job to task->tag_id at submission (may add a dependency); -EINVAL,
 * with nothing changed, when another task still holds the tag. */
int _astro_tag_attach_job(struct _astro_job *job, starpu_tag_t id);
/* starpu_tag_declare_deps_array() for fn: 0, -EINVAL (a NULL array, id among its own dependencies:
 * nothing declared) or -ENOMEM, each said. */
int _astro_tag_declare_deps(const char *fn, starpu_tag_t id, unsigned ndeps, starpu_tag_t *array);
/* task (whose job is job) is freed: starpu_tag_get_task() no longer returns it. */
void _astro_tag_forget_task(struct _astro_job *job, struct starpu_task *task);
/* The tag of a terminating job is done. */
void _astro_tag_job_done(struct _astro_tag *tag, struct _astro_job *job);
/* The watchdog's report: one line per tag whose task waits for undone tags, each
 * line after prefix; adds each such job to blocked (job -> its tag id). */
void _astro_tags_describe_blocked(GString *out, const char *prefix, GHashTable *blocked);

/* ------------------------------------------------------------ watchdog */

/* watchdog.c: STARPU_WATCHDOG_TIMEOUT. While it runs, submitted jobs are listed
 * so that it can say which ones are stuck: a predictable branch at submission
 * and termination otherwise. */
extern int _astro_watchdog_tracking;
/* The submitted jobs not yet terminating, while it tracks them (watched.c), linked by watch_next. */
extern starpu_pthread_mutex_t _astro_watched_lock;
extern struct _astro_job *_astro_watched_head;
void _astro_watched_clear(void);
void _astro_watchdog_track(struct _astro_job *job);
void _astro_watchdog_untrack(struct _astro_job *job);
void _astro_watchdog_start(void);
void _astro_watchdog_stop(void);

/* ------------------------------------------------------------ accesses */

/* Registers job's accesses: implicit dependencies and busy counts. */
void _astro_data_submit_accesses(struct _astro_job *job, struct starpu_task *task);
/* Ends job's accesses (its successors may go). With held (room for job->nbuffers), the handles
 * stay held for the task's callbacks, which may submit more on them: returns how many handles it
 * put there, each to give to _astro_data_callback_done() once the callbacks returned. */
unsigned _astro_data_release_accesses(struct _astro_job *job, starpu_data_handle_t *held);
/* Interfaces a worker of memory node node passes to the implementation. */
int _astro_data_fetch(struct _astro_job *job, struct starpu_task *task, unsigned node, void **buffers);
/* The same for a task whose data _astro_data_fetch_start() asked for: waits for it to arrive. Both
 * return 0, or -ENOMEM when some could not be brought there (no room: told, what it pinned let go):
 * the task must not run (_astro_job_failed). */
int _astro_data_fetch_arrived(struct _astro_job *job, struct starpu_task *task, unsigned node, void **buffers);
/* Asks for task's data on node, asynchronously, ahead of its execution (a device worker's
 * pipeline): true when it did, false when the task fetches at its execution (accesses
 * that need their execution's order: commute, unordered, scratch, reduction, multiformat). */
bool _astro_data_fetch_start(struct _astro_job *job, struct starpu_task *task, unsigned node);
/* After the execution: frees the scratch buffers, lets the fetched copies be evicted again. */
void _astro_data_executed(struct _astro_job *job, struct starpu_task *task, unsigned node);

/* One access of job to link->handle in implicit dependencies (consistency: the task's flag
 * for it, -1 for the handle's own), the links of job for n buffers (tasks/accesses.c). */
void _astro_access_link(struct _astro_job *job, struct _astro_data_link *link, int consistency);
struct _astro_data_link *_astro_job_links(struct _astro_job *job, unsigned n);
/* A granted writing access of job (an application acquire) becomes a read (starpu_data_release_to):
 * the writes waiting for it still wait for its end; the reads no longer do: *waiters (to free) gets
 * them, each to release (_astro_job_release) by the caller, and their number is returned. */
unsigned _astro_access_downgrade(struct _astro_job *job, struct _astro_data_link *link, struct _astro_job ***waiters);
/* An application acquire of main memory on a free handle granted at once, without a job (false:
 * take the usual path); its end (handle->lock held; false: it became a job meanwhile). */
bool _astro_hold_try(starpu_data_handle_t handle, enum starpu_data_access_mode mode, void (*callback)(void *));
bool _astro_hold_release(starpu_data_handle_t handle);
/* What observers call an acquisition's job (StarPU's names for the tasks of its acquisitions, which
 * starpu_fxt_tool's -no-acquire hides from dag.dot). */
#define ACQUIRE_LABEL "_starpu_data_acquire_post"
#define ACQUIRE_CB_LABEL "_starpu_data_acquire_cb_post"

/* Data arbiters (arbiter.c): the execution locks of a task's n accesses to
 * handles of one arbiter, taken all at once (under the handles' lock, as
 * accesses.c's exec_lock); a released execution lock wakes the arbiter's waiters;
 * an unregistered handle leaves its arbiter. */
/* Takes link's execution lock if free (take), or only says whether it is (data.c). */
bool _astro_data_exec_try(struct _astro_data_link *link, bool take);
void _astro_arbiter_lock(struct starpu_arbiter *arbiter, struct _astro_data_link **links, unsigned n);
void _astro_arbiter_wake(struct starpu_arbiter *arbiter);
void _astro_arbiter_forget(starpu_data_handle_t handle);

/* Partition plans made (access/partition_plans.c counts them): while there are some, a
 * submission first switches the plans its accesses need, through the function the plans
 * room set before counting its first plan (one load per task otherwise). */
extern int _astro_plans;
extern int (*_astro_plans_task_switch)(struct starpu_task *task);

/* ---------------------------------------------------------------- waiting */

/* What an application's wait that sleeps waits for (idle_wait.c): the waiter
 * sleeps at most _astro_idle_watch_sleep_ns() at a time and then calls
 * _astro_idle_watch_look(), which says once what the wait waits for when
 * nothing moved for a second while every worker is idle. */
struct _astro_idle_watch
{
	const char *call;                    /* the application's call that waits */
	struct _astro_job *job;              /* the job it waits for (starpu_task_wait), or NULL */
	/* What it waits for besides tasks, in lines after prefix (a tag: tags.c), or NULL. */
	void (*describe)(GString *out, const char *prefix, const void *arg);
	const void *describe_arg;
	uint64_t began_ns, next_ns;          /* monotonic; next_ns UINT64_MAX: it does not look (any more) */
	bool slept;                          /* the first sleep (a whole look interval, clock not read again) is over */
	unsigned long executed;              /* the progress it saw at its last look */
	long nsubmitted, nready;
};
void _astro_idle_watch_begin(struct _astro_idle_watch *watch, const char *call, struct _astro_job *job,
			     void (*describe)(GString *out, const char *prefix, const void *arg), const void *describe_arg);
/* The tags blocked, for the report (_astro_tags_describe_blocked, which tags.c gives at init:
 * tags.c waits through the watch, which thus calls it by no name). */
extern void (*_astro_idle_describe_tags)(GString *out, const char *prefix, GHashTable *blocked);
/* What the application may wait for besides tasks (astro_wait_describer_set: StarPU-MPI's requests), in lines after prefix. */
void _astro_wait_describe_outside(GString *out, const char *prefix);
/* How long the waiter may sleep before it looks again (ns); 0: as long as it takes. */
uint64_t _astro_idle_watch_sleep_ns(struct _astro_idle_watch *watch);
/* Called with no lock held, when the waiter woke: looks if its time came. */
void _astro_idle_watch_look(struct _astro_idle_watch *watch);

/* Waits until at most n submitted tasks are not complete (no check of the calling thread); call: who waits. */
void _astro_task_wait_for_n(const char *call, unsigned n);
/* The application's wait call is to sleep: while the runtime is paused, says so (it waits for starpu_resume()). */
void _astro_wait_say_paused(const char *call);
/* The same, unobserved, and ending early when give_up() (looked at every few ms) is true. */
void _astro_task_wait_for_n_unless(const char *call, unsigned n, bool (*give_up)(void));

/* throttle.c: STARPU_LIMIT_MAX/MIN_SUBMITTED_TASKS. _astro_throttling: both are set (read at init). */
extern bool _astro_throttling;
void _astro_throttle_init(void);
/* Forgets STARPU_TASK_BREAK_ON_SCHED, read again at the next starpu_sched_task_break() (task_break.c). */
void _astro_task_break_init(void);
/* Forgets the starpu_task_notify_ready_soon_register() function of the last run (ready_soon.c). */
void _astro_ready_soon_reset(void);
/* Holds the calling application thread while the limit is reached (starpu_task_submit, when _astro_throttling). */
void _astro_throttle(void);
/* Submissions the runtime makes for itself under way on this thread (throttle.c never holds them). */
extern _ASTRO_TLS unsigned _astro_submit_internal_depth;
/* starpu_task_submit() for a task the runtime submits for itself during another submission: never held. */
int _astro_task_submit_internally(struct starpu_task *task);

/* A transaction and its epochs (access/transaction.c opens, moves and closes them). */
enum _astro_epoch_state { _ASTRO_EPOCH_WAITING, _ASTRO_EPOCH_CONFIRMED, _ASTRO_EPOCH_CANCELLED };

struct _starpu_trs_epoch
{
	int state; /* enum _astro_epoch_state: written by the task that decides, read by the epoch's tasks after it */
	void *do_start_arg;
	struct _starpu_trs_epoch *next;
};

struct starpu_transaction
{
	starpu_data_handle_t handle;
	int (*do_start_func)(void *buffer, void *arg);
	starpu_pthread_mutex_t lock; /* guards the epoch queue and closed */
	struct _starpu_trs_epoch *first, *last; /* the epoch being run or decided first, the one tasks join last */
	bool closed;
};

/* Transactions (transaction.c): a submitted task of a transaction joins its current epoch and reads
 * its handle (a refused one returns the error); whether its epoch was cancelled (its implementation is not run). */
int _astro_transaction_task_submitted(struct starpu_task *task);
bool _astro_transaction_cancelled(const struct starpu_task *task);

/* Called once all submitted tasks are complete, or one more completed. */
void _astro_task_completed_count(void);

/* The count of submitted tasks going down (common.h, _astro_nsubmitted()), and the waiters it may
 * satisfy woken (wait.c). Inline (each submission and each completion pays it): the count is read
 * again, and a call made, only when someone waits. */
void _astro_wake_all_waiters(void);
static inline __attribute__((always_inline)) void _astro_count_lowered(void)
{
	if (__atomic_load_n(&_astro_rt.all_waiters, __ATOMIC_SEQ_CST) &&
	    _astro_nsubmitted() <= __atomic_load_n(&_astro_rt.wait_threshold, __ATOMIC_SEQ_CST))
		_astro_wake_all_waiters();
}
/* A submitting thread gives back n of the counts it added (task.c, submit_enter), on its line. */
static inline __attribute__((always_inline)) void _astro_count_given_back(long n)
{
	__atomic_sub_fetch(&_astro_rt.nsubmitted_added, n, __ATOMIC_SEQ_CST);
	_astro_count_lowered();
}
/* n more tasks completed (or counts of a submission given back by a worker), on the completions' line. */
static inline __attribute__((always_inline)) void _astro_count_done(long n)
{
	__atomic_add_fetch(&_astro_rt.nsubmitted_done, n, __ATOMIC_SEQ_CST);
	_astro_count_lowered();
}

/* A task destroyed or cleaned leaves its bundle (bundle.c). */
void _astro_bundle_forget(struct starpu_task *task);


#endif /* __ASTRO_TASKS_H__ */
