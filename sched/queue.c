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
