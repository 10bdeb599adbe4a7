/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy toolkit (astrolabe/sched.h): setting up and freeing a priority
 * queue (its operations are inline in the header).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/sched.h>

/** Makes q empty, for priorities min_priority..max_priority. Returns 0 or -ENOMEM. */
int astro_sched_queue_init(struct astro_sched_queue *q, int min_priority, int max_priority)
{
	if (max_priority < min_priority)
	{
		int swap = min_priority;
		min_priority = max_priority;
		max_priority = swap;
	}
	q->min_priority = min_priority;
	q->max_priority = max_priority;
	q->nlevels = (long long)max_priority - min_priority + 1;
	q->nbuckets = q->nlevels > ASTRO_SCHED_QUEUE_MAX_BUCKETS ? ASTRO_SCHED_QUEUE_MAX_BUCKETS : (unsigned)q->nlevels;
	/* Zeroed lists are empty lists. */
	q->buckets = calloc(q->nbuckets, sizeof(*q->buckets));
	q->lowest = q->highest = 0;
	atomic_init(&q->ntasks, 0);
	return q->buckets ? 0 : -ENOMEM;
}

void astro_sched_queue_fini(struct astro_sched_queue *q)
{
	free(q->buckets);
	q->buckets = NULL;
}

void astro_sched_queue_push_front(struct astro_sched_queue *q, struct starpu_task *task)
{
	int priority = astro_sched_queue_priority_of(q, task);
	unsigned bucket = astro_sched_queue_bucket_of(q, priority);
	struct starpu_task_list *list = &q->buckets[bucket];
	struct starpu_task *before = list->head;

	while (before && astro_sched_queue_priority_of(q, before) > priority)
		before = before->next;
	if (before == list->head)
		starpu_task_list_push_front(list, task);
	else if (!before)
		starpu_task_list_push_back(list, task);
	else
	{
		task->next = before;
		task->prev = before->prev;
		before->prev->next = task;
		before->prev = task;
	}
	astro_sched_queue_count_push(q, bucket);
}

struct starpu_task *astro_sched_queue_take_first_if(struct astro_sched_queue *q, int (*accept)(struct starpu_task *task, void *arg), void *arg)
{
	if (atomic_load_explicit(&q->ntasks, memory_order_relaxed) == 0)
		return NULL;
	for (unsigned bucket = q->highest + 1; bucket-- > q->lowest; )
		for (struct starpu_task *task = q->buckets[bucket].head; task; task = task->next)
			if (accept(task, arg))
			{
				astro_sched_queue_erase(q, bucket, task);
				return task;
			}
	return NULL;
}
