/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_task_notify_ready_soon_register(): a policy learns that a task
 * will be ready in about some microseconds, when the last task it waits for
 * starts and that task's duration is predicted. An observer of the
 * TASK_STARTED moment, subscribed only while a callback is registered: a
 * run without one pays nothing. The registration lasts for the run (a
 * policy makes it from its init_sched); starpu_init() forgets it.
 */
#include "tasks/tasks.h"

#include <math.h>

static starpu_pthread_mutex_t ready_soon_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_notify_ready_soon_func ready_soon_fn;
static void *ready_soon_data;
static int subscription = -1;

void _astro_ready_soon_reset(void)
{
	starpu_pthread_mutex_lock(&ready_soon_lock);
	/* The observers were all dropped at the last starpu_shutdown(). */
	subscription = -1;
	__atomic_store_n(&ready_soon_fn, NULL, __ATOMIC_RELEASE);
	ready_soon_data = NULL;
	starpu_pthread_mutex_unlock(&ready_soon_lock);
}

/* The successors of job that wait for nothing else: job is their last pending dependency. */
static unsigned last_waited_by(struct _astro_job *job, struct starpu_task **out, unsigned max)
{
	unsigned n = 0;
	astro_lock_acquire(&job->lock);
	for (unsigned i = 0; i < job->nsuccs && n < max; i++) {
		/* An end dependency does not make a task ready. */
		if ((uintptr_t)job->succs[i] & _ASTRO_END_DEP_BIT)
			continue;
		struct _astro_job *succ = job->succs[i];
		if (succ->task && __atomic_load_n(&succ->pending, __ATOMIC_ACQUIRE) == 1)
			out[n++] = succ->task;
	}
	astro_lock_release(&job->lock);
	return n;
}

static void task_started(const struct astro_event *event, void *arg)
{
	(void)arg;
	starpu_notify_ready_soon_func fn = __atomic_load_n(&ready_soon_fn, __ATOMIC_ACQUIRE);
	struct starpu_task *task = event->task;
	/* Only a predicted duration says when the successors will be ready. */
	if (!fn || !task || isnan(task->predicted) || task->predicted < 0)
		return;
	struct starpu_task *ready[16];
	unsigned n = last_waited_by(_astro_job_get(task), ready, sizeof(ready) / sizeof(ready[0]));
	for (unsigned i = 0; i < n; i++)
		fn(ready_soon_data, ready[i], task->predicted);
}

void starpu_task_notify_ready_soon_register(starpu_notify_ready_soon_func f, void *data)
{
	starpu_pthread_mutex_lock(&ready_soon_lock);
	if (f && __atomic_load_n(&ready_soon_fn, __ATOMIC_RELAXED) && f != ready_soon_fn) {
		starpu_pthread_mutex_unlock(&ready_soon_lock);
		_astro_error("starpu_task_notify_ready_soon_register: another function is registered already: one per run "
			     "(register NULL first to replace it)");
		return;
	}
	ready_soon_data = data;
	__atomic_store_n(&ready_soon_fn, f, __ATOMIC_RELEASE);
	if (f && subscription < 0) {
		subscription = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED) | ASTRO_OBSERVE_UNTIMED, task_started, NULL);
		if (subscription < 0)
			_astro_error("starpu_task_notify_ready_soon_register: no room left for one more observer of the runtime: the "
				     "function will not be called; use fewer tools at once");
	} else if (!f && subscription >= 0) {
		astro_observe_unsubscribe(subscription);
		subscription = -1;
	}
	starpu_pthread_mutex_unlock(&ready_soon_lock);
}
