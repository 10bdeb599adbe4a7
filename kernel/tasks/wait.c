/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Waiting for tasks: the tasks of a context, or the count of submitted tasks
 * not complete falling to n (starpu_task_wait_for_all and the others), which
 * completions signal (_astro_task_completed_count, task.c). Waiting for one
 * task is task.c's. A wait that sleeps looks every second whether it can
 * still end (idle_wait.c).
 */
#include "tasks/tasks.h"

__attribute__((noinline)) void _astro_wake_all_waiters(void)
{
	starpu_pthread_mutex_lock(&_astro_rt.wait_lock);
	starpu_pthread_cond_broadcast(&_astro_rt.wait_cond);
	starpu_pthread_mutex_unlock(&_astro_rt.wait_lock);
}

/* How often _astro_task_wait_for_n_unless() looks at its give_up(). */
#define GIVE_UP_POLL_NS 10000000L

void _astro_task_wait_for_n_unless(const char *call, unsigned n, bool (*give_up)(void))
{
	struct _astro_idle_watch watch;
	bool watching = false;
	starpu_pthread_mutex_lock(&_astro_rt.wait_lock);
	/* Set before the count is read (both seq_cst): a completer either sees us or we see its decrement. */
	if ((long)n > __atomic_load_n(&_astro_rt.wait_threshold, __ATOMIC_SEQ_CST))
		__atomic_store_n(&_astro_rt.wait_threshold, (long)n, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&_astro_rt.all_waiters, 1, __ATOMIC_SEQ_CST);
	while (_astro_nsubmitted() > (long)n) {
		if (give_up && give_up())
			break;
		if (!watching) {
			_astro_idle_watch_begin(&watch, call, NULL, NULL, NULL);
			watching = true;
		}
		uint64_t sleep_ns = _astro_idle_watch_sleep_ns(&watch);
		if (give_up && (!sleep_ns || sleep_ns > GIVE_UP_POLL_NS))
			sleep_ns = GIVE_UP_POLL_NS;
		if (!sleep_ns) {
			starpu_pthread_cond_wait(&_astro_rt.wait_cond, &_astro_rt.wait_lock);
			continue;
		}
		astro_cond_wait_for(&_astro_rt.wait_cond, &_astro_rt.wait_lock, sleep_ns);
		/* The look takes the locks of what it describes, which completers hold while they take ours. */
		starpu_pthread_mutex_unlock(&_astro_rt.wait_lock);
		_astro_idle_watch_look(&watch);
		starpu_pthread_mutex_lock(&_astro_rt.wait_lock);
	}
	if (__atomic_sub_fetch(&_astro_rt.all_waiters, 1, __ATOMIC_SEQ_CST) == 0)
		__atomic_store_n(&_astro_rt.wait_threshold, 0, __ATOMIC_SEQ_CST);
	starpu_pthread_mutex_unlock(&_astro_rt.wait_lock);
}

void _astro_wait_say_paused(const char *call)
{
	if (STARPU_LIKELY(!__atomic_load_n(&_astro_rt.paused, __ATOMIC_RELAXED)))
		return;
	_astro_warn("%s: the runtime is paused (starpu_pause): no task runs, so this waits until starpu_resume() is called, "
		    "from another thread", call);
}

/* A public wait for the count of tasks: says once if it is to wait while the runtime is paused. */
static void wait_for_n_public(const char *call, unsigned n)
{
	if (_astro_nsubmitted() > (long)n)
		_astro_wait_say_paused(call);
	_astro_task_wait_for_n(call, n);
}

/* Waits until at most n submitted tasks are not complete. */
void _astro_task_wait_for_n(const char *call, unsigned n)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_BEGIN, .workerid = -1);
	_astro_task_wait_for_n_unless(call, n, NULL);
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_END, .workerid = -1);
}

int starpu_task_wait_for_n_submitted(unsigned n)
{
	int ret = _astro_forbid_blocking("starpu_task_wait_for_n_submitted", NULL);
	if (ret)
		return ret;
	wait_for_n_public("starpu_task_wait_for_n_submitted", n);
	return 0;
}

static int wait_for_all(const char *call)
{
	int ret = _astro_forbid_blocking(call, NULL);
	if (ret)
		return ret;
	starpu_do_schedule();
	wait_for_n_public(call, 0);
	return 0;
}

int starpu_task_wait_for_all(void)
{
	return wait_for_all("starpu_task_wait_for_all");
}

int starpu_task_wait_for_no_ready(void)
{
	return wait_for_all("starpu_task_wait_for_no_ready");
}

int starpu_task_nsubmitted(void)
{
	return (int)_astro_nsubmitted();
}

int starpu_task_nready(void)
{
	return (int)_astro_nready();
}

/* What a wait on context c (not the global one) waits for, for the idle-wait report. Its worker count
 * is a snapshot read while another thread may add workers under the context's lock: racy on purpose,
 * so not instrumented (ThreadSanitizer stopped test_watchdog for it). */
__attribute__((no_sanitize("thread"))) static void describe_ctx(GString *out, const char *prefix, const void *arg)
{
	struct _astro_sched_ctx *c = (struct _astro_sched_ctx *)arg;
	starpu_pthread_mutex_lock(&c->wait_lock);
	int nwaiting = c->nwaiting;
	starpu_pthread_mutex_unlock(&c->wait_lock);
	unsigned nworkers = __atomic_load_n(&c->collection.nworkers, __ATOMIC_ACQUIRE);
	g_string_append_printf(out, "%sthe context waited for, %u '%s' (policy '%s', %u workers), has %ld tasks not complete, "
			       "%ld of them ready", prefix, _astro_ctx_id(c), c->name ? c->name : "(unnamed)",
			       c->policy && c->policy->policy_name ? c->policy->policy_name : "(none)", nworkers,
			       __atomic_load_n(&c->ntasks, __ATOMIC_SEQ_CST), __atomic_load_n(&c->nready, __ATOMIC_SEQ_CST));
	if (nworkers == 0)
		g_string_append_printf(out, ": it has no worker, its %d tasks pushed wait for starpu_sched_ctx_add_workers", nwaiting);
	else if (__atomic_load_n(&c->nready, __ATOMIC_SEQ_CST) > 0)
		g_string_append_printf(out, ": its policy '%s' gives them to none of its workers",
				       c->policy && c->policy->policy_name ? c->policy->policy_name : "(none)");
	g_string_append(out, "\n");
}

/* Waits until context c (not the global one) has at most n tasks left, looking every second whether it still can. */
static void ctx_wait_tasks(struct _astro_sched_ctx *c, unsigned n, const char *call)
{
	struct _astro_idle_watch watch;
	bool watching = false;
	starpu_pthread_mutex_lock(&c->wait_lock);
	/* Completions down to n wake us (a higher wait_above of another waiter wakes us too: we look again). */
	long above_before = c->wait_above;
	if ((long)n > c->wait_above)
		c->wait_above = (long)n;
	while (__atomic_load_n(&c->ntasks, __ATOMIC_SEQ_CST) > (long)n) {
		if (!watching) {
			_astro_idle_watch_begin(&watch, call, NULL, describe_ctx, c);
			watching = true;
		}
		uint64_t sleep_ns = _astro_idle_watch_sleep_ns(&watch);
		if (!sleep_ns) {
			starpu_pthread_cond_wait(&c->wait_cond, &c->wait_lock);
			continue;
		}
		astro_cond_wait_for(&c->wait_cond, &c->wait_lock, sleep_ns);
		starpu_pthread_mutex_unlock(&c->wait_lock);
		_astro_idle_watch_look(&watch);
		starpu_pthread_mutex_lock(&c->wait_lock);
	}
	/* Several waiters: the last one out may leave a higher wait_above behind: spare wake-ups only. */
	if (c->wait_above == (long)n)
		c->wait_above = above_before;
	starpu_pthread_mutex_unlock(&c->wait_lock);
}

int starpu_task_wait_for_all_in_ctx(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return -EINVAL;
	int ret = _astro_forbid_blocking("starpu_task_wait_for_all_in_ctx", NULL);
	if (ret)
		return ret;
	starpu_do_schedule();
	/* The global context's tasks are not counted apart (the task path stays as it was): all of them. */
	if (c == &_astro_ctxs[0]) {
		wait_for_n_public("starpu_task_wait_for_all_in_ctx", 0);
		return 0;
	}
	_astro_wait_say_paused("starpu_task_wait_for_all_in_ctx");
	ctx_wait_tasks(c, 0, "starpu_task_wait_for_all_in_ctx");
	/* Its masters hand tasks down to its nested contexts: those are its tasks too. */
	uint32_t children = __atomic_load_n(&c->children, __ATOMIC_SEQ_CST);
	for (unsigned id = 1; id < STARPU_NMAX_SCHED_CTXS; id++)
		if (children & (1u << id))
			starpu_task_wait_for_all_in_ctx(id);
	return 0;
}

int starpu_task_wait_for_n_submitted_in_ctx(unsigned sched_ctx_id, unsigned n)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return -EINVAL;
	int ret = _astro_forbid_blocking("starpu_task_wait_for_n_submitted_in_ctx", NULL);
	if (ret)
		return ret;
	/* The global context's tasks are not counted apart: all of them. */
	if (c == &_astro_ctxs[0]) {
		wait_for_n_public("starpu_task_wait_for_n_submitted_in_ctx", n);
		return 0;
	}
	if (__atomic_load_n(&c->ntasks, __ATOMIC_SEQ_CST) > (long)n)
		_astro_wait_say_paused("starpu_task_wait_for_n_submitted_in_ctx");
	ctx_wait_tasks(c, n, "starpu_task_wait_for_n_submitted_in_ctx");
	return 0;
}
