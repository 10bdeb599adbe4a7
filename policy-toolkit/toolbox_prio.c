/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * StarPU's scheduler toolbox (starpu_scheduler_toolbox.h), second half: the
 * priority deque. It is the toolkit's priority queue (astro_sched_queue,
 * queue.c), made at the first push over StarPU's default priorities and
 * widened when a task's priority lies outside its range, so that no priority
 * is ever clamped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/plugin.h>
#include <astrolabe/sched.h>
#include "toolbox.h"

#define DEQUE_OR(pdeque, ret) _ASTRO_ST_OR(pdeque, "the deque", ret)

void starpu_st_prio_deque_init(struct starpu_st_prio_deque *pdeque)
{
	DEQUE_OR(pdeque, );
	memset(pdeque, 0, sizeof(*pdeque));
}

void starpu_st_prio_deque_destroy(struct starpu_st_prio_deque *pdeque)
{
	DEQUE_OR(pdeque, );
	if (pdeque->queue)
	{
		astro_sched_queue_fini(pdeque->queue);
		free(pdeque->queue);
	}
	memset(pdeque, 0, sizeof(*pdeque));
}

int starpu_st_prio_deque_is_empty(struct starpu_st_prio_deque *pdeque)
{
	DEQUE_OR(pdeque, 1);
	return pdeque->ntasks == 0;
}

/* ------------------------------------------------------------- pushing */

/* The deque's queue, made or widened so that priority has its exact place; NULL (after a message) when out of memory. */
static struct astro_sched_queue *queue_for(struct starpu_st_prio_deque *pdeque, int priority, const char *fn)
{
	struct astro_sched_queue *q = pdeque->queue;

	if (q)
	{
		if (astro_sched_queue_cover(q, priority) == 0)
			return q;
	}
	else if ((q = malloc(sizeof(*q))))
	{
		int min = priority < STARPU_MIN_PRIO ? priority : STARPU_MIN_PRIO;
		int max = priority > STARPU_MAX_PRIO ? priority : STARPU_MAX_PRIO;
		if (astro_sched_queue_init(q, min, max) == 0)
			return pdeque->queue = q;
		free(q);
	}
	astro_log_error(fn, "out of memory for a deque holding priority %d", priority);
	return NULL;
}

/* Queues task at the back (front 0) or the front (1) of its priority. */
static int push(struct starpu_st_prio_deque *pdeque, struct starpu_task *task, int front, const char *fn)
{
	struct astro_sched_queue *q = queue_for(pdeque, task->priority, fn);

	if (!q)
		return -ENOMEM;
	if (front)
		astro_sched_queue_push_front(q, task);
	else
		astro_sched_queue_push(q, task);
	pdeque->ntasks++;
	return 0;
}

int starpu_st_prio_deque_push_back_task(struct starpu_st_prio_deque *pdeque, struct starpu_task *task)
{
	DEQUE_OR(pdeque, -EINVAL);
	_ASTRO_ST_TASK_OR(task, -EINVAL);
	return push(pdeque, task, 0, __func__);
}

int starpu_st_prio_deque_push_front_task(struct starpu_st_prio_deque *pdeque, struct starpu_task *task)
{
	DEQUE_OR(pdeque, -EINVAL);
	_ASTRO_ST_TASK_OR(task, -EINVAL);
	return push(pdeque, task, 1, __func__);
}

/* --------------------------------------------------- taking, whoever runs */

/* The deque's queue when it holds a task, NULL otherwise. */
static struct astro_sched_queue *nonempty(struct starpu_st_prio_deque *pdeque)
{
	return pdeque->ntasks && pdeque->queue ? pdeque->queue : NULL;
}

static void erase(struct starpu_st_prio_deque *pdeque, struct starpu_task *task)
{
	struct astro_sched_queue *q = pdeque->queue;

	astro_sched_queue_erase(q, astro_sched_queue_bucket_of(q, astro_sched_queue_priority_of(q, task)), task);
	pdeque->ntasks--;
}

struct starpu_task *starpu_st_prio_deque_pop_task(struct starpu_st_prio_deque *pdeque)
{
	DEQUE_OR(pdeque, NULL);
	struct astro_sched_queue *q = nonempty(pdeque);

	if (!q)
		return NULL;
	pdeque->ntasks--;
	return astro_sched_queue_take_head(q);
}

struct starpu_task *starpu_st_prio_deque_highest_task(struct starpu_st_prio_deque *pdeque)
{
	DEQUE_OR(pdeque, NULL);
	struct astro_sched_queue *q = nonempty(pdeque);

	return q ? q->buckets[q->highest].head : NULL;
}

struct starpu_task *starpu_st_prio_deque_pop_back_task(struct starpu_st_prio_deque *pdeque)
{
	DEQUE_OR(pdeque, NULL);
	struct astro_sched_queue *q = nonempty(pdeque);

	if (!q)
		return NULL;
	/* The lowest bucket is sorted by priority too: its tail is the newest of the lowest priority. */
	struct starpu_task *task = q->buckets[q->lowest].tail;
	erase(pdeque, task);
	return task;
}

void starpu_st_prio_deque_erase(struct starpu_st_prio_deque *pdeque, struct starpu_task *task)
{
	DEQUE_OR(pdeque, );
	_ASTRO_ST_TASK_OR(task, );
	if (!nonempty(pdeque))
	{
		astro_log_error(__func__, "the deque is empty: task %p is not in it", (void *)task);
		return;
	}
	erase(pdeque, task);
}

int starpu_st_prio_deque_pop_this_task(struct starpu_st_prio_deque *pdeque, int workerid, struct starpu_task *task)
{
	DEQUE_OR(pdeque, -EINVAL);
	_ASTRO_ST_TASK_OR(task, -EINVAL);
	if (!nonempty(pdeque))
	{
		astro_log_error(__func__, "the deque is empty: task %p is not in it", (void *)task);
		return -EINVAL;
	}
	if (!_astro_st_claim(task, workerid))
		return 0;
	erase(pdeque, task);
	return 1;
}

/* ------------------------------------------------ taking for a worker */

/* 1 (after a message) when workerid is no worker. */
static int bad_worker(int workerid, const char *fn)
{
	if (workerid >= 0 && (unsigned)workerid < starpu_worker_get_count())
		return 0;
	astro_log_error(fn, "worker %d does not exist (%u workers): pass the id of the worker the task is for", workerid, starpu_worker_get_count());
	return 1;
}

/* What the take functions ask for each task, in the order they look. */
struct for_worker
{
	int workerid;
	struct starpu_task *skipped;
};

static int claim_or_skip(struct starpu_task *task, void *arg)
{
	struct for_worker *w = arg;

	if (_astro_st_claim(task, w->workerid))
		return 1;
	w->skipped = task;
	return 0;
}

/* The taking of the two _for_worker functions, from the front (newest 0) or the back (1) of each priority. */
static struct starpu_task *take_for_worker(struct starpu_st_prio_deque *pdeque, int workerid, struct starpu_task **skipped, int newest, const char *fn)
{
	struct for_worker w = { workerid, NULL };
	struct starpu_task *task = NULL;
	struct astro_sched_queue *q;

	if (skipped)
		*skipped = NULL;
	if (bad_worker(workerid, fn) || !(q = nonempty(pdeque)))
		return NULL;
	task = newest ? astro_sched_queue_take_newest_if(q, claim_or_skip, &w) : astro_sched_queue_take_first_if(q, claim_or_skip, &w);
	if (task)
		pdeque->ntasks--;
	if (skipped)
		*skipped = w.skipped;
	return task;
}

struct starpu_task *starpu_st_prio_deque_pop_task_for_worker(struct starpu_st_prio_deque *pdeque, int workerid, struct starpu_task **skipped)
{
	DEQUE_OR(pdeque, NULL);
	return take_for_worker(pdeque, workerid, skipped, 0, __func__);
}

struct starpu_task *starpu_st_prio_deque_deque_task_for_worker(struct starpu_st_prio_deque *pdeque, int workerid, struct starpu_task **skipped)
{
	DEQUE_OR(pdeque, NULL);
	return take_for_worker(pdeque, workerid, skipped, 1, __func__);
}

/* Among the tasks workerid may run of the highest priority it may run, the most ready one (the first on a tie); NULL if none. */
static struct starpu_task *most_ready(struct astro_sched_queue *q, unsigned workerid)
{
	struct starpu_task *best = NULL;
	struct _astro_st_readiness best_r = {0, 0, 0}, r;

	for (unsigned bucket = q->highest + 1; bucket-- > q->lowest; )
		for (struct starpu_task *task = q->buckets[bucket].head; task; task = task->next)
		{
			/* Tasks come by priority, highest first: past the best's priority, nothing is a candidate. */
			if (best && task->priority < best->priority)
				return best;
			if (!_astro_st_runnable(task, workerid))
				continue;
			_astro_st_readiness_of(task, workerid, &r);
			if (!best || _astro_st_more_ready(&r, &best_r))
			{
				best = task;
				best_r = r;
			}
			if (_astro_st_fully_ready(&best_r))
				return best;
		}
	return best;
}

struct starpu_task *starpu_st_prio_deque_deque_first_ready_task(struct starpu_st_prio_deque *pdeque, unsigned workerid)
{
	DEQUE_OR(pdeque, NULL);
	struct astro_sched_queue *q = nonempty(pdeque);

	if (bad_worker((int)workerid, __func__) || !q)
		return NULL;
	struct starpu_task *task = most_ready(q, workerid);
	if (!task)
		return NULL;
	_astro_st_claim(task, (int)workerid);
	erase(pdeque, task);
	return task;
}
