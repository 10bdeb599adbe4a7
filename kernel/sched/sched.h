/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scheduling room: the policies' registry, selecting the policy, pushing
 * ready tasks to their context's policy and popping them for workers,
 * parallel tasks on combined workers, scheduling contexts (ctx.c), nested
 * contexts, the hypervisor link, worker collections, iterations and
 * predictions over a context. It knows tasks by their public struct; their
 * jobs and their life are the tasks room's, above it.
 */
#ifndef __ASTRO_SCHED_H__
#define __ASTRO_SCHED_H__

#include "data/data.h"

/* ------------------------------------------------------- parallel tasks (parallel.c) */

/* Parallel tasks on combined workers (sched/parallel.c). */
/* Queues task on the members of combined worker combined_id. */
int _astro_parallel_push(int combined_id, struct starpu_task *task);
/* Under w->local_lock (released) with w->parallel_head set: the task to run as rank 0, or NULL once another rank ran its part. */
struct starpu_task *_astro_parallel_take(struct _astro_worker *w);
/* starpu_task_dup() of a task prepared by starpu_parallel_task_barrier_init(): the job its copies
 * share (NULL for any other task). */
void *_astro_parallel_alias_job(const struct starpu_task *task);
/* A worker popped alias, such a copy (its job's task is another): it frees it and returns the task
 * to run as rank 0, or runs its part as another rank and returns NULL. */
struct starpu_task *_astro_parallel_alias_take(struct _astro_worker *w, struct starpu_task *alias);
static inline bool _astro_parallel_is_alias(const struct starpu_task *task)
{
	return STARPU_UNLIKELY(((const struct _astro_job_head *)task->starpu_private)->task != task);
}
/* Rank 0 runs w->parallel's task with its members. */
void _astro_parallel_execute(struct _astro_worker *w, struct starpu_task *task, void **buffers, unsigned nimpl);
/* Rank 0, once the task's end was observed: no longer a combined worker. */
void _astro_parallel_ended(void);


/* ------------------------------------------------------------- push and pop (sched.c) */

int _astro_sched_select(void);
void _astro_sched_deinit(void);
int _astro_sched_push(struct starpu_task *task);
/* again: the worker's previous pop found nothing (its empty polls are not observed). */
struct starpu_task *_astro_sched_pop(struct _astro_worker *w, bool again);


/* The policies' registry (policies.c). */
struct starpu_sched_policy *_astro_policy_lookup(const char *name);
/* STARPU_SCHED_LIB's entry points, which the loader found (sched/policies.c); forgetting every policy at unload. */
void _astro_policy_library_set(const char *from, struct starpu_sched_policy *(*get)(const char *name),
			       struct starpu_sched_policy **(*all)(void));
void _astro_policies_clear(void);
/* The registered policies, in registration order, at most max - 1 of them then NULL: returns how many. */
unsigned _astro_policies_list(struct starpu_sched_policy **list, unsigned max);
/* The runtime's policy: the conf's, STARPU_SCHED's, or the default (lws); NULL when none is available. */
struct starpu_sched_policy *_astro_policy_choose(void);
/* The one check of a policy wherever it comes from (from names it in the message): 0, or -EINVAL said. */
int _astro_policy_check(const struct starpu_sched_policy *policy, const char *from);
void _astro_policies_print(FILE *out);


/* ------------------------------------------------------- scheduling contexts (ctx.c) */

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
/* The policy's hooks called per task: each call enters its context's site
 * (_astro_site_enter()), so that a crash there names the policy and the hook. */
enum _astro_hook
{
	_ASTRO_HOOK_PUSH_TASK,
	_ASTRO_HOOK_POP_TASK,
	_ASTRO_HOOK_PRE_EXEC,
	_ASTRO_HOOK_POST_EXEC,
	_ASTRO_HOOK_PUSH_NOTIFY,
	_ASTRO_HOOK_SUBMIT,
	_ASTRO_HOOK_DO_SCHEDULE,
	_ASTRO_HOOK_RESET,
	_ASTRO_NHOOKS
};
struct _astro_hook_site
{
	struct _astro_foreign_call site;
	char what[112];                      /* "scheduling policy lws's push_task" */
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
	long wait_above;                     /* under wait_lock: completions down to this count are signalled (0: the last only) */
	unsigned inheritor;                  /* STARPU_NMAX_SCHED_CTXS: none */
	bool finished_submit;
	unsigned hierarchy_level;
	/* starpu_iteration_push(): the levels open in this context, the first two numbers (iterations.c). */
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
	struct _astro_hook_site hooks[_ASTRO_NHOOKS]; /* set with its policy (_astro_ctx_hooks_set) */
};

/* The fix a message about a context that does not exist suggests. */
#define _ASTRO_CTX_FIX "create it with starpu_sched_ctx_create() (contexts 0 to " G_STRINGIFY(STARPU_NMAX_SCHED_CTXS) " - 1)"
/* Every context (ctx_table.c): 0 is the global one, every worker's. */
extern struct _astro_sched_ctx _astro_ctxs[STARPU_NMAX_SCHED_CTXS];
/* Names c's policy in c's hook sites: called before the policy is first called. */
void _astro_ctx_hooks_set(struct _astro_sched_ctx *c);
/* The site of c's hook, for _astro_site_enter() around the call. */
#define _ASTRO_HOOK_SITE(c, hook) (&(c)->hooks[_ASTRO_HOOK_##hook].site)
static inline unsigned _astro_ctx_id(const struct _astro_sched_ctx *c)
{
	return (unsigned)(c - _astro_ctxs);
}
/* The ids of n workers given to fn: 0, or -EINVAL said; the calling thread's context and the
 * "no context" slot forgotten (the runtime stops). */
int _astro_check_workers(const int *ids, int n, const char *fn);
void _astro_ctx_table_reset(void);
/* Sets up the worker collection of a context (a list in the workers' order). */
void _astro_ctx_collection_setup(struct starpu_worker_collection *c);
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
/* Iteration levels open in any context (starpu_iteration_push, iterations.c): while there are
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

/* Priority caps (prio_caps.c; the knobs starpu.task.s_*_priority_cap_knob): clamps task->priority to
 * the caps of its context's policy, at submission when _astro_rt.prio_capped; gives context c, being
 * created with its policy set, the caps set for that policy; a policy's cap (max or min), its change
 * (0, or -EINVAL said under knob_name); the table from starpu_init() (the default caps: the global
 * context's priorities) to starpu_shutdown(). */
void _astro_task_cap_priority(struct starpu_task *task);
void _astro_ctx_caps_setup(struct _astro_sched_ctx *c);
int32_t _astro_prio_cap_get(const char *policy, bool max);
int _astro_prio_cap_set(const char *policy, bool max, int32_t cap, const char *knob_name);
void _astro_prio_caps_open(int32_t *min, int32_t *max);
void _astro_prio_caps_close(void);
/* Waits until context c (not 0) has no task left. */
void _astro_ctx_wait_tasks(struct _astro_sched_ctx *c);

#endif /* __ASTRO_SCHED_H__ */
