/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The jobs the watchdog (watchdog.c) watches: while it runs, the submitted
 * jobs not yet terminating are listed here, so that it can say which ones
 * are stuck; the task path pays one predictable branch at submission and
 * termination otherwise.
 */
#include "tasks/tasks.h"

int _astro_watchdog_tracking;
starpu_pthread_mutex_t _astro_watched_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
struct _astro_job *_astro_watched_head;

void _astro_watchdog_track(struct _astro_job *job)
{
	starpu_pthread_mutex_lock(&_astro_watched_lock);
	if (!job->watched) {
		job->watched = true;
		job->watch_prev = NULL;
		job->watch_next = _astro_watched_head;
		if (_astro_watched_head)
			_astro_watched_head->watch_prev = job;
		_astro_watched_head = job;
	}
	starpu_pthread_mutex_unlock(&_astro_watched_lock);
}

static void unlink_job(struct _astro_job *job)
{
	if (job->watch_prev)
		job->watch_prev->watch_next = job->watch_next;
	else
		_astro_watched_head = job->watch_next;
	if (job->watch_next)
		job->watch_next->watch_prev = job->watch_prev;
	job->watch_prev = job->watch_next = NULL;
	job->watched = false;
}

void _astro_watchdog_untrack(struct _astro_job *job)
{
	starpu_pthread_mutex_lock(&_astro_watched_lock);
	if (job->watched)
		unlink_job(job);
	starpu_pthread_mutex_unlock(&_astro_watched_lock);
}

void _astro_watched_clear(void)
{
	starpu_pthread_mutex_lock(&_astro_watched_lock);
	while (_astro_watched_head)
		unlink_job(_astro_watched_head);
	starpu_pthread_mutex_unlock(&_astro_watched_lock);
}
