/*
 * Kernel internals shared by the kernel files. Nothing here is public: plugins see
 * the kernel only through include/astrolabe/.
 */
#ifndef __ASTRO_KERNEL_H__
#define __ASTRO_KERNEL_H__

#include "common/common.h"
#include "observe/observe.h"
#include "memory/memory.h"
#include "workers/workers.h"
#include "data/data.h"

/* On-line feedback (profiling.c): subscribes to the moments at init, prints the summaries at shutdown. */
void _astro_profiling_init(void);
/* STARPU_MEMORY_STATS: handles registered meanwhile get per-node access counts, listed by starpu_data_display_memory_stats(). */
extern bool _astro_memory_stats_enabled;

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

static inline struct _astro_job *_astro_job_of(struct starpu_task *task)
{
	return (struct _astro_job *)task->starpu_private;
}
/* A thread comes back to job, or leaves it (instrumentation states and bursts it left open, observe/instrument.c). */
#define _ASTRO_INSTR_TASK_ENTER(job) do { if (STARPU_UNLIKELY(__atomic_load_n(&(job)->instr_saved, __ATOMIC_ACQUIRE))) \
		_astro_instr_task_enter((job)->task, &(job)->instr_saved); } while (0)
#define _ASTRO_INSTR_TASK_LEAVE(job) do { if (STARPU_UNLIKELY(_astro_instr_task_open)) _astro_instr_task_leave((job)->task, &(job)->instr_saved); } while (0)
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

/* ------------------------------------------------------------ accesses */

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

/* One access of job to link->handle in implicit dependencies (consistency: the task's flag
 * for it, -1 for the handle's own), the links of job for n buffers (tasks/accesses.c). */
void _astro_access_link(struct _astro_job *job, struct _astro_data_link *link, int consistency);
struct _astro_data_link *_astro_job_links(struct _astro_job *job, unsigned n);
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

/* ----------------------------------------------------------- access room */

/* Partition plans (partition_plans.c). While some exist, a submission's accesses
 * switch the plans they need first (one load per task otherwise). */
extern int _astro_plans;
int _astro_plans_task_access(struct starpu_task *task);
/* An access in mode to handle outside a task (an acquire): the plans it needs. */
void _astro_plans_access(starpu_data_handle_t handle, enum starpu_data_access_mode mode);
/* handle goes: its plans are gathered first (unregister), its own plan forgets it (free). */
void _astro_plans_gather(starpu_data_handle_t handle);
void _astro_plans_forget(starpu_data_handle_t handle);


/* ------------------------------------------------------ parallel tasks */

/* Parallel tasks on combined workers (sched/parallel.c). */
/* Queues task on the members of combined worker combined_id. */
int _astro_parallel_push(int combined_id, struct starpu_task *task);
/* Under w->local_lock (released) with w->parallel_head set: the task to run as rank 0, or NULL once another rank ran its part. */
struct starpu_task *_astro_parallel_take(struct _astro_worker *w);
/* Rank 0 runs w->parallel's task with its members. */
void _astro_parallel_execute(struct _astro_worker *w, struct starpu_task *task, void **buffers, unsigned nimpl);
/* Rank 0, once the task's end was observed: no longer a combined worker. */
void _astro_parallel_ended(void);


/* ------------------------------------------------------------ run room */

int _astro_workers_start(void);
void _astro_workers_stop(void);
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


/* A task destroyed or cleaned leaves its bundle (bundle.c). */
void _astro_bundle_forget(struct starpu_task *task);

/* ----------------------------------------------------------- scheduling */

int _astro_sched_select(void);
void _astro_sched_deinit(void);
int _astro_sched_push(struct starpu_task *task);
/* again: the worker's previous pop found nothing (its empty polls are not observed). */
struct starpu_task *_astro_sched_pop(struct _astro_worker *w, bool again);

/* -------------------------------------------------------------- plugins */

int _astro_plugins_load(void);
void _astro_plugins_unload(void);
struct starpu_sched_policy *_astro_policy_lookup(const char *name);
/* STARPU_SCHED_LIB's entry points, which the loader found (sched/policies.c); forgetting every policy at unload. */
void _astro_policy_library_set(const char *from, struct starpu_sched_policy *(*get)(const char *name),
			       struct starpu_sched_policy **(*all)(void));
void _astro_policies_clear(void);
/* The one check of a policy wherever it comes from (from names it in the message): 0, or -EINVAL said. */
int _astro_policy_check(const struct starpu_sched_policy *policy, const char *from);
void _astro_policies_print(FILE *out);
/* Trace-format plugins (format_*), loaded by astro_trace_formats_load() (trace_format.c), not by starpu_init(). */
void _astro_format_plugins_load(void);

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

/* Every context: 0 is the global one, every worker's. */
extern struct _astro_sched_ctx _astro_ctxs[STARPU_NMAX_SCHED_CTXS];
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

/* ------------------------------------------------------------- counters */

/* counters/: registration opens before the plugins load (the runtime's own
 * counters first, ids as StarPU's), closes once the workers run; shutdown
 * after the workers stopped. */
void _astro_counters_init(void);
void _astro_counters_start(int start_collection);
void _astro_counters_shutdown(void);


/* --------------------------------------------------------------- models */

/* models/: performance models. Init once the workers exist (their
 * architectures); shutdown saves calibrated models, before the workers go. */
void _astro_models_init(void);
void _astro_models_shutdown(void);
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
#endif /* __ASTRO_KERNEL_H__ */
