/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The link between scheduling contexts and a hypervisor
 * (starpu_sched_ctx_hypervisor.h): a context's performance counters are
 * callbacks, called from the kernel's observation moments.
 *
 * One observer serves every context; it is subscribed when a first context
 * gets counters and unsubscribed when the last one loses them (deletion or
 * NULL), so that without a hypervisor the task path pays nothing more than
 * the observation mask it already tests. The observer finds the context of
 * a task in task->sched_ctx and the contexts of a worker in their members.
 */
#include "sched/sched.h"

/* Per context: its counters (atomic pointer), the start of its resizing sample. */
static struct starpu_sched_ctx_performance_counters *counters[STARPU_NMAX_SCHED_CTXS];
static double start_sample[STARPU_NMAX_SCHED_CTXS];
static unsigned hypervisor_exists;
/* Per worker: when it began to sleep (0: not seen asleep since the subscription). */
static double sleep_since[STARPU_NMAXWORKERS];
/* The subscription (-1: none) and the number of contexts with counters, under lock. */
static starpu_pthread_mutex_t lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static int subscription = -1;
static unsigned nset;

#define BIT ASTRO_MOMENT_BIT
static const uint64_t moments = BIT(ASTRO_MOMENT_TASK_SUBMITTED) | BIT(ASTRO_MOMENT_TASK_PUSHED) |
	BIT(ASTRO_MOMENT_TASK_POPPED) | BIT(ASTRO_MOMENT_TASK_ENDED) |
	BIT(ASTRO_MOMENT_WORKER_SLEEP_BEGIN) | BIT(ASTRO_MOMENT_WORKER_SLEEP_END);

static struct starpu_sched_ctx_performance_counters *counters_of(unsigned ctx)
{
	if (ctx == STARPU_NMAX_SCHED_CTXS)
		ctx = 0;
	return ctx < STARPU_NMAX_SCHED_CTXS ? __atomic_load_n(&counters[ctx], __ATOMIC_ACQUIRE) : NULL;
}

static size_t data_size(struct starpu_task *task)
{
	size_t size = 0;
	int n = task->cl ? STARPU_TASK_GET_NBUFFERS(task) : 0;
	for (int i = 0; i < n; i++)
		size += starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, i));
	return size;
}

/* The worker slept: each context of it with counters hears for how long. */
static void idle_cycle(int worker, double idle_us)
{
	for (unsigned ctx = 0; ctx < STARPU_NMAX_SCHED_CTXS; ctx++) {
		struct starpu_sched_ctx_performance_counters *pc = counters_of(ctx);
		if (pc && pc->notify_idle_cycle && starpu_sched_ctx_contains_worker(worker, ctx))
			pc->notify_idle_cycle(ctx, worker, idle_us);
	}
}

static void observe(const struct astro_event *ev, void *arg)
{
	(void)arg;
	int w = ev->workerid;
	if (ev->moment == ASTRO_MOMENT_WORKER_SLEEP_BEGIN || ev->moment == ASTRO_MOMENT_WORKER_SLEEP_END) {
		if (w < 0 || w >= STARPU_NMAXWORKERS)
			return;
		/* Worker w's own slot (atomic: a new subscription clears them all). */
		double since, none = 0.0;
		if (ev->moment == ASTRO_MOMENT_WORKER_SLEEP_BEGIN)
			__atomic_store(&sleep_since[w], &ev->time_us, __ATOMIC_RELAXED);
		else if (__atomic_exchange(&sleep_since[w], &none, &since, __ATOMIC_RELAXED), since > 0.0)
			idle_cycle(w, ev->time_us - since);
		return;
	}
	struct starpu_task *task = ev->task;
	unsigned ctx = task->sched_ctx == STARPU_NMAX_SCHED_CTXS ? 0 : task->sched_ctx;
	struct starpu_sched_ctx_performance_counters *pc = counters_of(ctx);
	if (!pc)
		return;
	switch (ev->moment) {
	case ASTRO_MOMENT_TASK_SUBMITTED:
		if (pc->notify_submitted_job)
			pc->notify_submitted_job(task, starpu_task_data_footprint(task), data_size(task));
		break;
	case ASTRO_MOMENT_TASK_PUSHED:
		/* Only a push that names the worker whose queue took the task; a push from the
		 * application's thread is the policy's to tell (starpu_sched_ctx_call_pushed_task_cb). */
		if (pc->notify_pushed_task && w >= 0 && starpu_sched_ctx_contains_worker(w, ctx))
			pc->notify_pushed_task(ctx, w);
		break;
	case ASTRO_MOMENT_TASK_POPPED:
		if (pc->notify_poped_task)
			pc->notify_poped_task(ctx, w);
		break;
	case ASTRO_MOMENT_TASK_ENDED:
		if (pc->notify_post_exec_task)
			pc->notify_post_exec_task(task, data_size(task), starpu_task_data_footprint(task), task->hypervisor_tag, task->flops);
		break;
	default:
		break;
	}
}

/* Under lock: context ctx's counters become pc; the observer follows whether any are set. */
static void set_locked(unsigned ctx, struct starpu_sched_ctx_performance_counters *pc)
{
	struct starpu_sched_ctx_performance_counters *old = __atomic_exchange_n(&counters[ctx], pc, __ATOMIC_ACQ_REL);
	nset += (pc != NULL) - (old != NULL);
	if (nset > 0 && subscription < 0) {
		double none = 0.0;
		for (unsigned w = 0; w < STARPU_NMAXWORKERS; w++)
			__atomic_store(&sleep_since[w], &none, __ATOMIC_RELAXED);
		subscription = astro_observe_subscribe(moments, observe, NULL);
		if (subscription < 0)
			_astro_error("starpu_sched_ctx_set_perf_counters: no room left for one more observer of the runtime (%d): "
				     "the counters of context %u will not be called; use fewer tools at once", subscription, ctx);
	} else if (nset == 0 && subscription >= 0) {
		astro_observe_unsubscribe(subscription);
		subscription = -1;
	}
}

void starpu_sched_ctx_set_perf_counters(unsigned sched_ctx_id, void *perf_counters)
{
	if (!_astro_ctx_get(sched_ctx_id, __func__))
		return;
	if (sched_ctx_id == STARPU_NMAX_SCHED_CTXS)
		sched_ctx_id = 0;
	starpu_pthread_mutex_lock(&lock);
	set_locked(sched_ctx_id, perf_counters);
	starpu_pthread_mutex_unlock(&lock);
}

void starpu_sched_ctx_call_pushed_task_cb(int workerid, unsigned sched_ctx_id)
{
	if (!_astro_ctx_get(sched_ctx_id, __func__))
		return;
	if (workerid < 0 || (unsigned)workerid >= starpu_worker_get_count()) {
		_astro_error("starpu_sched_ctx_call_pushed_task_cb: worker %d does not exist (0 to %u - 1): name the worker the task was queued for",
			     workerid, starpu_worker_get_count());
		return;
	}
	struct starpu_sched_ctx_performance_counters *pc = counters_of(sched_ctx_id);
	if (pc && pc->notify_pushed_task)
		pc->notify_pushed_task(sched_ctx_id == STARPU_NMAX_SCHED_CTXS ? 0 : sched_ctx_id, workerid);
}

void starpu_sched_ctx_notify_hypervisor_exists(void)
{
	double now = starpu_timing_now();
	for (unsigned i = 0; i < STARPU_NMAX_SCHED_CTXS; i++)
		start_sample[i] = now;
	__atomic_store_n(&hypervisor_exists, 1, __ATOMIC_RELEASE);
}

unsigned starpu_sched_ctx_check_if_hypervisor_exists(void)
{
	return __atomic_load_n(&hypervisor_exists, __ATOMIC_ACQUIRE);
}

void starpu_sched_ctx_update_start_resizing_sample(unsigned sched_ctx_id, double start_sample_us)
{
	if (!_astro_ctx_get(sched_ctx_id, __func__))
		return;
	start_sample[sched_ctx_id == STARPU_NMAX_SCHED_CTXS ? 0 : sched_ctx_id] = start_sample_us;
}

void _astro_hyp_empty_ctx(unsigned ctx, struct starpu_task *task)
{
	struct starpu_sched_ctx_performance_counters *pc = counters_of(ctx);
	if (pc && pc->notify_empty_ctx)
		pc->notify_empty_ctx(ctx, task);
}

void _astro_hyp_ctx_deleted(unsigned ctx)
{
	struct starpu_sched_ctx_performance_counters *pc = counters_of(ctx);
	if (!pc)
		return;
	if (pc->notify_delete_context)
		pc->notify_delete_context(ctx);
	starpu_pthread_mutex_lock(&lock);
	if (counters[ctx] == pc)
		set_locked(ctx, NULL);
	starpu_pthread_mutex_unlock(&lock);
}

void _astro_hyp_reset(void)
{
	starpu_pthread_mutex_lock(&lock);
	memset(counters, 0, sizeof(counters));
	memset(start_sample, 0, sizeof(start_sample));
	nset = 0;
	if (subscription >= 0)
		astro_observe_unsubscribe(subscription);
	subscription = -1;
	__atomic_store_n(&hypervisor_exists, 0, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&lock);
}
