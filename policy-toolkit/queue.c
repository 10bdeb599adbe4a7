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

/* The range to cover priority: the current one grown by doubling its width on the side priority lies, within int. */
static void widened_range(const struct astro_sched_queue *q, int priority, long long *min, long long *max)
{
	long long width = q->nlevels;

	*min = q->min_priority;
	*max = q->max_priority;
	while (priority < *min || priority > *max)
	{
		if (priority < *min)
			*min = *min - width < INT_MIN ? INT_MIN : *min - width;
		else
			*max = *max + width > INT_MAX ? INT_MAX : *max + width;
		width *= 2;
	}
}

int astro_sched_queue_cover(struct astro_sched_queue *q, int priority)
{
	struct astro_sched_queue wider;
	long long min, max;
	struct starpu_task *task;

	if (priority >= q->min_priority && priority <= q->max_priority)
		return 0;
	widened_range(q, priority, &min, &max);
	if (astro_sched_queue_init(&wider, (int)min, (int)max))
		return -ENOMEM;
	/* Taken in queue order and appended: the order among equals is kept. */
	while ((task = astro_sched_queue_take_head(q)))
		astro_sched_queue_push(&wider, task);
	astro_sched_queue_fini(q);
	*q = wider;
	return 0;
}

struct starpu_task *astro_sched_queue_take_newest_if(struct astro_sched_queue *q, int (*accept)(struct starpu_task *task, void *arg), void *arg)
{
	if (atomic_load_explicit(&q->ntasks, memory_order_relaxed) == 0)
		return NULL;
	for (unsigned bucket = q->highest + 1; bucket-- > q->lowest; )
	{
		/* A bucket may hold several priorities (highest first): each run of one priority, from its newest. */
		struct starpu_task *first = q->buckets[bucket].head;
		while (first)
		{
			int priority = astro_sched_queue_priority_of(q, first);
			struct starpu_task *last = first;
			while (last->next && astro_sched_queue_priority_of(q, last->next) == priority)
				last = last->next;
			struct starpu_task *after = last->next;
			for (struct starpu_task *task = last; task != first->prev; task = task->prev)
				if (accept(task, arg))
				{
					astro_sched_queue_erase(q, bucket, task);
					return task;
				}
			first = after;
		}
	}
	return NULL;
}
