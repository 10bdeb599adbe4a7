/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scheduling: pushing ready tasks to their context's policy and popping them
 * for workers, and the helpers policies call (local queues, prefetches,
 * expected transfer times). Choosing the policy: policies.c; the contexts
 * themselves: ctx.c and ctx_table.c.
 */
#include "sched/sched.h"

/* ---------------------------------------------------------- hook sites */

static const struct
{
	const char *name;
	size_t offset;                       /* of the hook in struct starpu_sched_policy */
} hooks[_ASTRO_NHOOKS] = {
	[_ASTRO_HOOK_PUSH_TASK] = { "push_task", offsetof(struct starpu_sched_policy, push_task) },
	[_ASTRO_HOOK_POP_TASK] = { "pop_task", offsetof(struct starpu_sched_policy, pop_task) },
	[_ASTRO_HOOK_PRE_EXEC] = { "pre_exec_hook", offsetof(struct starpu_sched_policy, pre_exec_hook) },
	[_ASTRO_HOOK_POST_EXEC] = { "post_exec_hook", offsetof(struct starpu_sched_policy, post_exec_hook) },
	[_ASTRO_HOOK_PUSH_NOTIFY] = { "push_task_notify", offsetof(struct starpu_sched_policy, push_task_notify) },
	[_ASTRO_HOOK_SUBMIT] = { "submit_hook", offsetof(struct starpu_sched_policy, submit_hook) },
	[_ASTRO_HOOK_DO_SCHEDULE] = { "do_schedule", offsetof(struct starpu_sched_policy, do_schedule) },
	[_ASTRO_HOOK_RESET] = { "reset_scheduler", offsetof(struct starpu_sched_policy, reset_scheduler) },
};

void _astro_ctx_hooks_set(struct _astro_sched_ctx *c)
{
	const struct starpu_sched_policy *policy = c->policy;
	for (unsigned h = 0; h < _ASTRO_NHOOKS; h++) {
		void *fn = *(void *const *)(const void *)((const char *)policy + hooks[h].offset);
		_astro_site_format(&c->hooks[h].site, c->hooks[h].what, sizeof(c->hooks[h].what), fn, hooks[h].name,
				   "the policy crashed, not the runtime; fix it or choose another one with STARPU_SCHED",
				   "scheduling policy %s's %s", policy->policy_name ? policy->policy_name : "(unnamed)",
				   hooks[h].name);
	}
}

/* ---------------------------------------------------------- push / pop */

/* Under c's lock (read, from a push): c has no worker, task waits for some. */
void _astro_ctx_wait_for_workers(struct _astro_sched_ctx *c, struct starpu_task *task)
{
	starpu_pthread_mutex_lock(&c->wait_lock);
	starpu_task_list_push_back(&c->waiting, task);
	c->nwaiting++;
	starpu_pthread_mutex_unlock(&c->wait_lock);
	_astro_hyp_empty_ctx(_astro_ctx_id(c), task);
}


/* The policy of c refused task (ret): a task is never lost, it goes to a worker of c that can run it. */
static int push_refused(struct _astro_sched_ctx *c, struct starpu_task *task, int ret)
{
	const char *name = starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)";
	for (unsigned i = 0; i < c->collection.nworkers; i++) {
		int w = c->collection.workerids[i];
		if (_astro_worker_impl_for(w, task) >= 0) {
			_astro_warn("policy '%s' refused task '%s' (%s): it runs on worker %d instead",
				    c->policy->policy_name, name, strerror(-ret), w);
			return starpu_push_local_task(w, task, 1);
		}
	}
	_astro_error("policy '%s' refused task '%s' and no worker of its scheduling context can run it", c->policy->policy_name, name);
	return ret;
}

/* Contexts other than the global one: their policy is called under their lock (see sched_ctx.c). */
int __attribute__((noinline)) _astro_ctx_push(struct _astro_sched_ctx *c, struct starpu_task *task)
{
	starpu_pthread_rwlock_rdlock(&c->lock);
	int ret = 0;
	if (STARPU_UNLIKELY(c->collection.nworkers == 0))
		_astro_ctx_wait_for_workers(c, task); /* until starpu_sched_ctx_add_workers */
	else {
		const struct _astro_foreign_call *outer = _astro_site_enter(_ASTRO_HOOK_SITE(c, PUSH_TASK));
		ret = c->policy->push_task(task);
		_astro_site_leave(outer);
		if (ret != 0)
			ret = push_refused(c, task, ret);
	}
	starpu_pthread_rwlock_unlock(&c->lock);
	return ret;
}

int _astro_sched_push(struct starpu_task *task)
{
	struct _astro_sched_ctx *c = &_astro_ctxs[0];
	task->status = STARPU_TASK_READY;
	if (task->execute_on_a_specific_worker) {
		c = &_astro_ctxs[task->sched_ctx];
		/* Pinned tasks go straight to the worker's local queue, whatever the policy. */
		if (c->policy->push_task_notify) {
			const struct _astro_foreign_call *outer = _astro_site_enter(_ASTRO_HOOK_SITE(c, PUSH_NOTIFY));
			c->policy->push_task_notify(task, (int)task->workerid, (int)task->workerid, task->sched_ctx);
			_astro_site_leave(outer);
		}
		return starpu_push_local_task((int)task->workerid, task, 1);
	}
	/* Observed before the push: once queued, a worker may run and free the task. */
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_PUSHED, .workerid = _astro_worker_id(), .task = task,
		       .job_id = _astro_job_id_of(task));
	if (STARPU_UNLIKELY(task->sched_ctx != 0))
		return _astro_ctx_push(&_astro_ctxs[task->sched_ctx], task);
	_astro_site_enter_top(_ASTRO_HOOK_SITE(c, PUSH_TASK));
	int ret = c->policy->push_task(task);
	_astro_site_leave_top();
	if (ret == 0)
		return 0;
	return push_refused(c, task, ret);
}

/* Pops from context id for w, a member; what a nested context's master (or kept worker) takes
 * from the parent goes down to it (NULL then). */
static struct starpu_task *ctx_pop_from(struct _astro_worker *w, unsigned id)
{
	struct starpu_task *task = NULL;
	struct _astro_sched_ctx *c = &_astro_ctxs[id];
	if (id == 0) {
		_astro_worker_site_enter(w, _ASTRO_HOOK_SITE(c, POP_TASK));
		task = c->policy->pop_task(0);
		_astro_worker_site_leave(w);
	} else {
		starpu_pthread_rwlock_rdlock(&c->lock);
		/* Still a member: membership changes under the write lock. */
		if (__atomic_load_n(&w->ctx_mask, __ATOMIC_RELAXED) & (1u << id)) {
			_astro_worker_site_enter(w, _ASTRO_HOOK_SITE(c, POP_TASK));
			task = c->policy->pop_task(id);
			_astro_worker_site_leave(w);
		}
		starpu_pthread_rwlock_unlock(&c->lock);
	}
	if (task && __atomic_load_n(&w->hands_down, __ATOMIC_RELAXED))
		task = _astro_ctx_hand_down(w, id, task);
	return task;
}

/* A worker that belongs to other contexts than the global one (mask) serves
 * first those whose policy counted tasks for it (starpu_sched_ctx_list_task_counters_*),
 * the highest priority first (starpu_sched_ctx_set_priority), then takes them
 * all in turn, from the one after the context it served last. */
static struct starpu_task *__attribute__((noinline)) ctx_pop(struct _astro_worker *w, uint32_t mask)
{
	mask |= 1u; /* the global context */
	uint32_t tried = 0;
	for (;;) {
		int best = -1;
		for (unsigned id = 0; id < STARPU_NMAX_SCHED_CTXS; id++)
			if ((mask & ~tried & (1u << id)) && __atomic_load_n(&w->ctx_ntasks[id], __ATOMIC_RELAXED) > 0 &&
			    (best < 0 || __atomic_load_n(&w->ctx_priority[id], __ATOMIC_RELAXED) >
						 __atomic_load_n(&w->ctx_priority[best], __ATOMIC_RELAXED)))
				best = (int)id;
		if (best < 0)
			break;
		tried |= 1u << best;
		struct starpu_task *task = ctx_pop_from(w, (unsigned)best);
		if (task) {
			w->ctx_turn = (unsigned)best;
			return task;
		}
	}
	for (unsigned i = 1; i <= STARPU_NMAX_SCHED_CTXS; i++) {
		unsigned id = (w->ctx_turn + i) % STARPU_NMAX_SCHED_CTXS;
		struct starpu_task *task = (mask & (1u << id)) ? ctx_pop_from(w, id) : NULL;
		if (task) {
			w->ctx_turn = id;
			return task;
		}
	}
	return NULL;
}

/* The worker's own queue: its parts in parallel tasks first, then the tasks pushed to it alone. */
static struct starpu_task *__attribute__((noinline)) pop_local(struct _astro_worker *w)
{
	struct starpu_task *task;
	starpu_pthread_mutex_lock(&w->local_lock);
	while (STARPU_UNLIKELY(w->parallel_head != NULL)) {
		/* A part in a parallel task comes first (see parallel.c): rank 0 gets the task, the others ran theirs. */
		task = _astro_parallel_take(w);
		if (task)
			return task;
		starpu_pthread_mutex_lock(&w->local_lock);
	}
	/* A task given a workerorder waits for its turn: the ones before it on this worker ran (from 1). */
	for (task = starpu_task_list_begin(&w->local_tasks); task; task = starpu_task_list_next(task))
		if (!task->workerorder || task->workerorder == w->orders_done + 1)
			break;
	if (task) {
		starpu_task_list_erase(&w->local_tasks, task);
		if (task->workerorder)
			w->orders_done++;
		__atomic_sub_fetch(&w->nlocal, 1, __ATOMIC_RELAXED);
	}
	starpu_pthread_mutex_unlock(&w->local_lock);
	return task;
}

/* A copy of a parallel task prepared StarPU's way (parallel.c): the task to run, or the next pop. */
static __attribute__((noinline, cold)) struct starpu_task *alias_popped(struct _astro_worker *w, struct starpu_task *alias, bool again)
{
	struct starpu_task *task = _astro_parallel_alias_take(w, alias);
	return task ? task : _astro_sched_pop(w, again);
}

struct starpu_task *_astro_sched_pop(struct _astro_worker *w, bool again)
{
	struct starpu_task *task = NULL;
	if (__atomic_load_n(&w->nlocal, __ATOMIC_RELAXED)) {
		task = pop_local(w);
		if (task)
			return STARPU_UNLIKELY(_astro_parallel_is_alias(task)) ? alias_popped(w, task, again) : task;
	}
	/* A disabled worker still asks: policies give it only what was already queued to it (see
	 * starpu_worker_can_execute_task()), as StarPU's w_enable_worker_knob. */
	/* An idle worker polling again is not reported at each empty poll: only the pop that finds work ends its search. */
	if (!again)
		_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_SCHED_BEGIN, .workerid = w->id);
	uint32_t mask = __atomic_load_n(&w->ctx_mask, __ATOMIC_RELAXED);
	if (STARPU_LIKELY(!mask)) {
		_astro_worker_site_enter(w, _ASTRO_HOOK_SITE(&_astro_ctxs[0], POP_TASK));
		task = _astro_ctxs[0].policy->pop_task(0);
		_astro_worker_site_leave(w);
	} else
		task = ctx_pop(w, mask);
	if (task || !again)
		_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_SCHED_END, .workerid = w->id, .task = task);
	if (task && STARPU_UNLIKELY(_astro_parallel_is_alias(task)))
		return alias_popped(w, task, again);
	return task;
}

int starpu_push_local_task(int workerid, struct starpu_task *task, int back)
{
	if (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers) {
		if (_astro_is_combined_worker(workerid))
			return _astro_parallel_push(workerid, task);
		_astro_error("starpu_push_local_task: invalid worker id %d (%u workers, %u combined workers)", workerid,
			     _astro_rt.nworkers, starpu_combined_worker_get_count());
		return -EINVAL;
	}
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_PUSHED, .workerid = workerid, .task = task, .job_id = _astro_job_id_of(task));
	_astro_push_local(_astro_rt.workers[workerid], task, back);
	return 0;
}

void _astro_push_local(struct _astro_worker *w, struct starpu_task *task, int back)
{
	starpu_pthread_mutex_lock(&w->local_lock);
	if (back)
		starpu_task_list_push_back(&w->local_tasks, task);
	else
		starpu_task_list_push_front(&w->local_tasks, task);
	__atomic_add_fetch(&w->nlocal, 1, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&w->local_lock);
	_astro_worker_wake(w);
}

int starpu_push_task_end(struct starpu_task *task)
{
	(void)task;
	return 0;
}

/* Calls the hook at offset (a void (*)(unsigned)) of every live context's policy that has one, in its site. */
static void each_ctx_hook(size_t offset, enum _astro_hook hook)
{
	for (unsigned id = 0; id < STARPU_NMAX_SCHED_CTXS; id++) {
		struct _astro_sched_ctx *c = &_astro_ctxs[id];
		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != _ASTRO_CTX_LIVE)
			continue;
		void (*fn)(unsigned) = *(void (*const *)(unsigned))(const void *)((const char *)c->policy + offset);
		if (!fn)
			continue;
		if (id)
			starpu_pthread_rwlock_rdlock(&c->lock);
		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == _ASTRO_CTX_LIVE) {
			const struct _astro_foreign_call *outer = _astro_site_enter(&c->hooks[hook].site);
			fn(id);
			_astro_site_leave(outer);
		}
		if (id)
			starpu_pthread_rwlock_unlock(&c->lock);
	}
}

void starpu_do_schedule(void)
{
	each_ctx_hook(offsetof(struct starpu_sched_policy, do_schedule), _ASTRO_HOOK_DO_SCHEDULE);
}

void starpu_reset_scheduler(void)
{
	if (!_astro_running()) {
		_astro_error("starpu_reset_scheduler: StarPU is not initialised: call starpu_init() first");
		return;
	}
	each_ctx_hook(offsetof(struct starpu_sched_policy, reset_scheduler), _ASTRO_HOOK_RESET);
}

/* ------------------------------------------------- the worker's scheduling operation */

/* A worker is in a scheduling operation while it is in a policy's pop_task (its site is that hook's). */
int starpu_worker_sched_op_pending(void)
{
	const struct _astro_worker *w = _astro_self;
	if (!w || !w->site)
		return 0;
	for (unsigned id = 0; id < STARPU_NMAX_SCHED_CTXS; id++)
		if (w->site == _ASTRO_HOOK_SITE(&_astro_ctxs[id], POP_TASK))
			return 1;
	return 0;
}

int starpu_worker_get_relax_state(void)
{
	const struct _astro_worker *w = _astro_self;
	return !w || w->relax > 0 || !starpu_worker_sched_op_pending();
}

int starpu_get_prefetch_flag(void)
{
	return _astro_env_int_in("STARPU_PREFETCH", 0, 1, 1);
}

/* A policy prefetches a task it queues: the transfer thread copies its read
 * inputs to node while the workers compute. */
/* As StarPU: a task with a worker order is prefetched in that order, before the others. */
/* The prio of the forms without one: the task's, worked out only when there is something to prefetch. */
#define TASK_PRIO INT_MIN

static int task_prio(const struct starpu_task *task)
{
	return !task ? 0 : task->workerorder ? INT_MAX - (int)task->workerorder : task->priority;
}

/* The requests for the data task reads (there is more than main memory). */
static __attribute__((noinline)) void prefetch_buffers(struct starpu_task *task, unsigned node, int prio, enum starpu_is_prefetch level)
{
	if (prio == TASK_PRIO)
		prio = task_prio(task);
	unsigned n = _astro_task_nbuffers(task);
	for (unsigned i = 0; i < n; i++) {
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		if ((mode & STARPU_R) && !(mode & STARPU_SCRATCH)) {
			starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
			_astro_data_hold(h);
			_astro_transfer_submit(h, node, level, prio, NULL, NULL);
		}
	}
	task->prefetched = 1;
}

/* Inlined in each form: with main memory only (policies call it for every task), a few tests. */
static inline __attribute__((always_inline)) int prefetch_task_input(struct starpu_task *task, unsigned node, int prio,
								     enum starpu_is_prefetch level, const char *fn)
{
	if (STARPU_UNLIKELY(!task || node >= starpu_memory_nodes_get_count())) {
		_astro_error("%s: %s: give a task and a memory node below %u", fn, task ? "no such memory node" : "NULL task",
			     starpu_memory_nodes_get_count());
		return -EINVAL;
	}
	if (_astro_rt.nmemory_nodes > 1 && task->cl)
		prefetch_buffers(task, node, prio, level);
	return 0;
}

int starpu_prefetch_task_input_on_node_prio(struct starpu_task *task, unsigned node, int prio)
{
	return prefetch_task_input(task, node, prio, STARPU_TASK_PREFETCH, "starpu_prefetch_task_input_on_node_prio");
}

int starpu_prefetch_task_input_on_node(struct starpu_task *task, unsigned node)
{
	return prefetch_task_input(task, node, TASK_PRIO, STARPU_TASK_PREFETCH, "starpu_prefetch_task_input_on_node");
}

int starpu_idle_prefetch_task_input_on_node_prio(struct starpu_task *task, unsigned node, int prio)
{
	return prefetch_task_input(task, node, prio, STARPU_IDLEFETCH, "starpu_idle_prefetch_task_input_on_node_prio");
}

int starpu_idle_prefetch_task_input_on_node(struct starpu_task *task, unsigned node)
{
	return prefetch_task_input(task, node, TASK_PRIO, STARPU_IDLEFETCH, "starpu_idle_prefetch_task_input_on_node");
}

int starpu_prefetch_task_input_for_prio(struct starpu_task *task, unsigned worker, int prio)
{
	return prefetch_task_input(task, starpu_worker_get_memory_node(worker), prio, STARPU_TASK_PREFETCH, "starpu_prefetch_task_input_for_prio");
}

int starpu_prefetch_task_input_for(struct starpu_task *task, unsigned worker)
{
	return prefetch_task_input(task, starpu_worker_get_memory_node(worker), TASK_PRIO, STARPU_TASK_PREFETCH, "starpu_prefetch_task_input_for");
}

int starpu_idle_prefetch_task_input_for_prio(struct starpu_task *task, unsigned worker, int prio)
{
	return prefetch_task_input(task, starpu_worker_get_memory_node(worker), prio, STARPU_IDLEFETCH, "starpu_idle_prefetch_task_input_for_prio");
}

int starpu_idle_prefetch_task_input_for(struct starpu_task *task, unsigned worker)
{
	return prefetch_task_input(task, starpu_worker_get_memory_node(worker), TASK_PRIO, STARPU_IDLEFETCH, "starpu_idle_prefetch_task_input_for");
}

double starpu_data_expected_transfer_time(starpu_data_handle_t handle, unsigned memory_node, enum starpu_data_access_mode mode)
{
	if (!handle) {
		_astro_error("starpu_data_expected_transfer_time: NULL handle: pass a registered data handle");
		return NAN;
	}
	if (!(mode & STARPU_R))
		return 0.0;
	return _astro_data_transfer_time(handle, memory_node, mode);
}

double starpu_task_expected_data_transfer_time(unsigned memory_node, struct starpu_task *task)
{
	double total = 0.0;
	unsigned n = task && task->cl ? (unsigned)STARPU_TASK_GET_NBUFFERS(task) : 0;
	for (unsigned i = 0; i < n; i++)
		total += starpu_data_expected_transfer_time(STARPU_TASK_GET_HANDLE(task, i), memory_node, STARPU_TASK_GET_MODE(task, i));
	return total;
}

double starpu_task_expected_data_transfer_time_for(struct starpu_task *task, unsigned worker)
{
	if (worker >= starpu_worker_get_count()) {
		_astro_error("starpu_task_expected_data_transfer_time_for: no worker %u (there are %u)", worker, starpu_worker_get_count());
		return NAN;
	}
	return starpu_task_expected_data_transfer_time(starpu_worker_get_memory_node(worker), task);
}
