/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "first ready" pop of dmdar and dmdas, apart so that a test can drive
 * it with crafted tasks (one memory node never has data missing).
 */
#ifndef __ASTROLABE_DM_READY_H__
#define __ASTROLABE_DM_READY_H__

#include <astrolabe/sched.h>

/**
 * Removes and returns, among the tasks of q that have the head's priority,
 * the first with the fewest bytes missing(task, node) (the head when all
 * miss as much). q is locked and not empty.
 */
static inline struct starpu_task *dm_queue_take_ready(struct astro_sched_queue *q, unsigned node,
						      size_t (*missing)(struct starpu_task *task, unsigned node))
{
	unsigned bucket = q->highest;
	struct starpu_task *head = q->buckets[bucket].head;
	int priority = astro_sched_queue_priority_of(q, head);
	struct starpu_task *best = head;
	size_t best_missing = (size_t)-1;

	for (struct starpu_task *task = head; task && astro_sched_queue_priority_of(q, task) == priority; task = task->next)
	{
		size_t bytes = missing(task, node);

		if (bytes < best_missing)
		{
			best = task;
			best_missing = bytes;
			if (bytes == 0)
				break;
		}
	}
	astro_sched_queue_erase(q, bucket, best);
	return best;
}

#endif /* __ASTROLABE_DM_READY_H__ */
