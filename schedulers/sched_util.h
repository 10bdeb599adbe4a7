/*
 * Helpers shared by the scheduling policies of schedulers/ (header-only:
 * every plugin gets its own static copy, so the plugins stay independent
 * modules and nothing here is exported).
 *
 *   sched_queue       a task queue ordered by priority (higher first, FIFO
 *                     among equals) made of one bucket per priority level;
 *                     with a single level it is a plain FIFO deque
 *   sched_workers     the workers of a context, and which of them are
 *                     hungry (found no task), so a push wakes one of those
 *   sched_pop_task()  the pop protocol that keeps a push from missing a
 *                     worker on its way to sleep
 *   sched_central_*   a whole policy around one central queue (eager, prio)
 *   sched_local_*     per-worker queues a policy pushes to, pops from and
 *                     steals from (random, ws, lws), and the push_task of
 *                     the work-stealing policies (ws, lws)
 *   sched_counters_*  a policy's push, pop and steal counts, exported as
 *                     performance counters of its plugin
 *
 * Tasks bound to a worker (execute_on_a_specific_worker) always go to a
 * queue only that worker reads, so no other worker ever scans past them.
 */
#ifndef __ASTROLABE_SCHED_UTIL_H__
#define __ASTROLABE_SCHED_UTIL_H__

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* glibc's adaptive mutexes (sched_lock_init): include this header first */
#endif
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <starpu.h>
#include <astrolabe/plugin.h>
#include <astrolabe/counters.h>
#include <stdio.h>

#define SCHED_CACHE_LINE 64

/* ------------------------------------------------------------------ tasks */

/** The worker task must run on, -1 when any capable worker may. */
static inline int sched_task_bound_worker(const struct starpu_task *task)
{
	return task->execute_on_a_specific_worker ? (int)task->workerid : -1;
}

/** 1 when workerid may be handed task: it is the bound worker (if any) and can execute it. */
static inline int sched_task_allowed_on(struct starpu_task *task, int workerid)
{
	if (task->execute_on_a_specific_worker && (int)task->workerid != workerid)
		return 0;
	return starpu_worker_can_execute_task((unsigned)workerid, task, 0);
}

/** The context a pushed task belongs to (the global one when it was left unset). */
static inline unsigned sched_task_ctx(const struct starpu_task *task)
{
	return task->sched_ctx < STARPU_NMAX_SCHED_CTXS ? task->sched_ctx : STARPU_GLOBAL_SCHED_CTX;
}

/** Policy data that must exist: aborts with a message naming the policy otherwise. */
static inline void *sched_alloc_policy_data(const char *policy_name, size_t size)
{
	void *data = NULL;

	/* Rounded up: aligned_alloc wants a multiple of the alignment. */
	size = (size + SCHED_CACHE_LINE - 1) / SCHED_CACHE_LINE * SCHED_CACHE_LINE;
	data = aligned_alloc(SCHED_CACHE_LINE, size);
	if (!data)
	{
		astro_log_error(policy_name, "cannot allocate %zu bytes for the policy state", size);
		abort();
	}
	memset(data, 0, size);
	return data;
}

/* -------------------------------------------------------- priority queue */

/** Beyond this many priority levels, neighbouring levels share a bucket (kept sorted). */
#define SCHED_QUEUE_MAX_BUCKETS 1024

/**
 * Tasks by priority. Not thread-safe: the owner holds a lock around every
 * call, except sched_queue_ntasks(), which may be read without it.
 */
struct sched_queue
{
	/** buckets[0] holds the lowest priorities. */
	struct starpu_task_list *buckets;
	unsigned nbuckets;
	int min_priority;
	int max_priority;
	long long nlevels;
	/** No task lies below bucket lowest or above bucket highest (meaningful when ntasks > 0). */
	unsigned lowest;
	unsigned highest;
	atomic_uint ntasks;
};

/** Makes q empty, for priorities min_priority..max_priority. Returns 0 or -ENOMEM. */
static inline int sched_queue_init(struct sched_queue *q, int min_priority, int max_priority)
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
	q->nbuckets = q->nlevels > SCHED_QUEUE_MAX_BUCKETS ? SCHED_QUEUE_MAX_BUCKETS : (unsigned)q->nlevels;
	/* Zeroed lists are empty lists. */
	q->buckets = calloc(q->nbuckets, sizeof(*q->buckets));
	q->lowest = q->highest = 0;
	atomic_init(&q->ntasks, 0);
	return q->buckets ? 0 : -ENOMEM;
}

static inline void sched_queue_fini(struct sched_queue *q)
{
	free(q->buckets);
	q->buckets = NULL;
}

/** Number of queued tasks; may be read without the lock, to skip an empty queue cheaply. */
static inline unsigned sched_queue_ntasks(struct sched_queue *q)
{
	/* Sequentially consistent: pairs with sched_workers_announce_hunger() (see sched_pop_task()). */
	return atomic_load(&q->ntasks);
}

/** task's priority, clamped to the queue's range. */
static inline int sched_queue_priority_of(const struct sched_queue *q, const struct starpu_task *task)
{
	if (task->priority < q->min_priority)
		return q->min_priority;
	if (task->priority > q->max_priority)
		return q->max_priority;
	return task->priority;
}

static inline unsigned sched_queue_bucket_of(const struct sched_queue *q, int priority)
{
	long long level = (long long)priority - q->min_priority;

	if ((long long)q->nbuckets == q->nlevels)
		return (unsigned)level;
	return (unsigned)(level * q->nbuckets / q->nlevels);
}

/** Queues task behind the tasks of the same or higher priority. */
static inline void sched_queue_push(struct sched_queue *q, struct starpu_task *task)
{
	int priority = sched_queue_priority_of(q, task);
	unsigned bucket = sched_queue_bucket_of(q, priority);
	struct starpu_task_list *list = &q->buckets[bucket];
	struct starpu_task *after = list->tail;

	/* A bucket holds several priorities only for very wide ranges; the walk
	 * stops at once when it holds one. */
	while (after && sched_queue_priority_of(q, after) < priority)
		after = after->prev;
	if (after == list->tail)
		starpu_task_list_push_back(list, task);
	else if (!after)
		starpu_task_list_push_front(list, task);
	else
	{
		task->prev = after;
		task->next = after->next;
		after->next->prev = task;
		after->next = task;
	}

	if (atomic_load_explicit(&q->ntasks, memory_order_relaxed) == 0)
		q->lowest = q->highest = bucket;
	else if (bucket > q->highest)
		q->highest = bucket;
	else if (bucket < q->lowest)
		q->lowest = bucket;
	atomic_fetch_add(&q->ntasks, 1);
}

static inline void sched_queue_erase(struct sched_queue *q, unsigned bucket, struct starpu_task *task)
{
	starpu_task_list_erase(&q->buckets[bucket], task);
	if (atomic_fetch_sub(&q->ntasks, 1) == 1)
		return;
	while (starpu_task_list_empty(&q->buckets[q->highest]))
		q->highest--;
	while (starpu_task_list_empty(&q->buckets[q->lowest]))
		q->lowest++;
}

/** Removes and returns the first task workerid may run, in priority order (highest first, oldest first); NULL if none. */
static inline struct starpu_task *sched_queue_take_first(struct sched_queue *q, int workerid)
{
	if (atomic_load_explicit(&q->ntasks, memory_order_relaxed) == 0)
		return NULL;
	for (unsigned bucket = q->highest + 1; bucket-- > q->lowest; )
		for (struct starpu_task *task = q->buckets[bucket].head; task; task = task->next)
			if (sched_task_allowed_on(task, workerid))
			{
				sched_queue_erase(q, bucket, task);
				return task;
			}
	return NULL;
}

/** The same from the other end (lowest priority, newest first): what a thief takes. */
static inline struct starpu_task *sched_queue_take_last(struct sched_queue *q, int workerid)
{
	if (atomic_load_explicit(&q->ntasks, memory_order_relaxed) == 0)
		return NULL;
	for (unsigned bucket = q->lowest; bucket <= q->highest; bucket++)
		for (struct starpu_task *task = q->buckets[bucket].tail; task; task = task->prev)
			if (sched_task_allowed_on(task, workerid))
			{
				sched_queue_erase(q, bucket, task);
				return task;
			}
	return NULL;
}

/** Priority of the task sched_queue_take_first() would look at first; q must not be empty. */
static inline int sched_queue_best_priority(const struct sched_queue *q)
{
	return sched_queue_priority_of(q, q->buckets[q->highest].head);
}

/**
 * Takes workerid's next task from its bound queue and a queue it shares:
 * the higher priority wins, the bound task on a tie (nobody else can run it).
 */
static inline struct starpu_task *sched_queue_take_first_of(struct sched_queue *bound, struct sched_queue *shared, int workerid)
{
	struct starpu_task *task;
	unsigned nbound = atomic_load_explicit(&bound->ntasks, memory_order_relaxed);
	unsigned nshared = atomic_load_explicit(&shared->ntasks, memory_order_relaxed);

	if (nbound && (!nshared || sched_queue_best_priority(bound) >= sched_queue_best_priority(shared)))
	{
		task = sched_queue_take_first(bound, workerid);
		if (task)
			return task;
	}
	task = sched_queue_take_first(shared, workerid);
	return task ? task : sched_queue_take_first(bound, workerid);
}

/* ---------------------------------------------------------------- workers */

struct sched_hunger
{
	atomic_uchar hungry;
} __attribute__((aligned(SCHED_CACHE_LINE)));

/**
 * The workers of a context (ids kept sorted, so neighbours by position are
 * neighbours by id) and which of them are hungry: their last look found no
 * task, so they may be asleep and need a wake-up. add/remove are called by
 * the kernel before tasks flow and after they stop.
 */
struct sched_workers
{
	int ids[STARPU_NMAXWORKERS];
	/** Index of a worker in ids, -1 when it is not in the context. */
	int position[STARPU_NMAXWORKERS];
	unsigned count;
	atomic_uint nhungry;
	/** Where the next search for a worker starts, so that wake-ups and round-robin spread. */
	atomic_uint cursor;
	struct sched_hunger hunger[STARPU_NMAXWORKERS];
};

static inline void sched_workers_init(struct sched_workers *ws)
{
	ws->count = 0;
	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		ws->position[i] = -1;
		atomic_init(&ws->hunger[i].hungry, 0);
	}
	atomic_init(&ws->nhungry, 0);
	atomic_init(&ws->cursor, 0);
}

static inline void sched_workers_reindex(struct sched_workers *ws)
{
	for (unsigned i = 0; i < ws->count; i++)
		ws->position[ws->ids[i]] = (int)i;
}

static inline void sched_workers_add(struct sched_workers *ws, const int *workerids, unsigned nworkers)
{
	for (unsigned n = 0; n < nworkers; n++)
	{
		int workerid = workerids[n];
		unsigned i;

		if (workerid < 0 || workerid >= STARPU_NMAXWORKERS || ws->position[workerid] >= 0)
			continue;
		for (i = ws->count; i > 0 && ws->ids[i - 1] > workerid; i--)
			ws->ids[i] = ws->ids[i - 1];
		ws->ids[i] = workerid;
		ws->count++;
	}
	sched_workers_reindex(ws);
}

static inline void sched_workers_remove(struct sched_workers *ws, const int *workerids, unsigned nworkers)
{
	for (unsigned n = 0; n < nworkers; n++)
	{
		int workerid = workerids[n];

		if (workerid < 0 || workerid >= STARPU_NMAXWORKERS || ws->position[workerid] < 0)
			continue;
		memmove(&ws->ids[ws->position[workerid]], &ws->ids[ws->position[workerid] + 1],
			(ws->count - ws->position[workerid] - 1) * sizeof(ws->ids[0]));
		ws->count--;
		ws->position[workerid] = -1;
		sched_workers_reindex(ws);
	}
}

/** 1 when workerid belongs to the context. */
static inline int sched_workers_contains(const struct sched_workers *ws, int workerid)
{
	return workerid >= 0 && workerid < STARPU_NMAXWORKERS && ws->position[workerid] >= 0;
}

static inline int sched_workers_is_hungry(struct sched_workers *ws, int workerid)
{
	return atomic_load_explicit(&ws->hunger[workerid].hungry, memory_order_relaxed);
}

/** Called by workerid when it found no task, before it looks again. */
static inline void sched_workers_announce_hunger(struct sched_workers *ws, int workerid)
{
	if (!atomic_exchange(&ws->hunger[workerid].hungry, 1))
		atomic_fetch_add(&ws->nhungry, 1);
}

/** Called by workerid when it got a task after all. */
static inline void sched_workers_retract_hunger(struct sched_workers *ws, int workerid)
{
	if (atomic_exchange(&ws->hunger[workerid].hungry, 0))
		atomic_fetch_sub(&ws->nhungry, 1);
}

/** Takes workerid's hunger, if it is hungry: the caller then owes it a wake-up. Returns 1 if taken. */
static inline int sched_workers_claim(struct sched_workers *ws, int workerid)
{
	if (!atomic_load(&ws->hunger[workerid].hungry) || !atomic_exchange(&ws->hunger[workerid].hungry, 0))
		return 0;
	atomic_fetch_sub(&ws->nhungry, 1);
	return 1;
}

/**
 * Claims a hungry worker other than except that may run task, searching from
 * a rotating start. Returns its id, or -1. Call it once task is queued, and
 * while it cannot be taken yet (task is read).
 */
static inline int sched_workers_claim_one_for(struct sched_workers *ws, struct starpu_task *task, int except)
{
	unsigned count = ws->count;

	if (!atomic_load(&ws->nhungry) || count == 0)
		return -1;
	unsigned start = atomic_fetch_add_explicit(&ws->cursor, 1, memory_order_relaxed) % count;
	for (unsigned i = 0; i < count; i++)
	{
		int workerid = ws->ids[(start + i) % count];

		if (workerid != except && sched_workers_is_hungry(ws, workerid)
		    && sched_task_allowed_on(task, workerid) && sched_workers_claim(ws, workerid))
			return workerid;
	}
	return -1;
}

/** Wakes workerid (claimed above) if there is one; cheap when it is awake. Set
 * queued_for_it when the task sits where only workerid takes it: a spinning
 * worker then looks at once (astro_worker_wake_for_queued). */
static inline void sched_wake(int workerid, int queued_for_it)
{
	if (workerid < 0)
		return;
	if (queued_for_it)
		astro_worker_wake_for_queued(workerid);
	else
		starpu_wake_worker_relax_light(workerid);
}

/**
 * The pop protocol of every policy here. A pusher queues the task, then reads
 * the hunger flags; a popper that finds nothing announces its hunger, then
 * looks again. Both sides are sequentially consistent, so either the popper
 * sees the task or the pusher sees the hunger and wakes it: a task is never
 * left behind a sleeping worker. A worker already hungry looks only once, so
 * the idle spin stays one cheap look. take() returns a task for workerid or NULL.
 */
static inline struct starpu_task *sched_pop_task(struct sched_workers *ws, int workerid, void *policy_data,
						 struct starpu_task *(*take)(void *policy_data, int workerid))
{
	struct starpu_task *task;

	if (!sched_workers_contains(ws, workerid))
		return NULL;
	if (!sched_workers_is_hungry(ws, workerid))
	{
		task = take(policy_data, workerid);
		if (task)
			return task;
		sched_workers_announce_hunger(ws, workerid);
	}
	task = take(policy_data, workerid);
	if (task)
		sched_workers_retract_hunger(ws, workerid);
	return task;
}

/* ------------------------------------------------- one central queue */

/** A policy with one queue every worker takes from (eager, prio). */
struct sched_central
{
	/** Guards shared and every bound queue. */
	starpu_pthread_mutex_t lock;
	struct sched_queue shared;
	/** Tasks bound to one worker. */
	struct sched_queue bound[STARPU_NMAXWORKERS];
	struct sched_workers workers;
	const char *policy_name;
};

/**
 * Initialises a queue lock. Queue locks are held for a few instructions while
 * the submitting thread and the workers push and pop, so a contender spins
 * briefly before it sleeps (glibc's adaptive mutex, where available) instead
 * of paying two system calls.
 */
static inline void sched_lock_init(pthread_mutex_t *lock)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	STARPU_PTHREAD_MUTEX_INIT(lock, &attr);
	pthread_mutexattr_destroy(&attr);
}

/** Sets up a central-queue policy for sched_ctx_id with priority levels min..max (one level: FIFO). */
static inline void sched_central_init(unsigned sched_ctx_id, const char *policy_name, int min_priority, int max_priority)
{
	struct sched_central *central = sched_alloc_policy_data(policy_name, sizeof(*central));
	int ret = sched_queue_init(&central->shared, min_priority, max_priority);

	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
		ret |= sched_queue_init(&central->bound[i], min_priority, max_priority);
	if (ret)
	{
		astro_log_error(policy_name, "cannot allocate the task queues");
		abort();
	}
	sched_lock_init(&central->lock);
	sched_workers_init(&central->workers);
	central->policy_name = policy_name;
	starpu_sched_ctx_set_policy_data(sched_ctx_id, central);
}

static inline void sched_central_deinit(unsigned sched_ctx_id)
{
	struct sched_central *central = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	unsigned left = sched_queue_ntasks(&central->shared);

	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		left += sched_queue_ntasks(&central->bound[i]);
		sched_queue_fini(&central->bound[i]);
	}
	if (left)
		astro_log_error(central->policy_name, "%u tasks were still queued at shutdown", left);
	sched_queue_fini(&central->shared);
	STARPU_PTHREAD_MUTEX_DESTROY(&central->lock);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, NULL);
	free(central);
}

static inline void sched_central_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct sched_central *central = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	sched_workers_add(&central->workers, workerids, nworkers);
}

static inline void sched_central_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct sched_central *central = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	sched_workers_remove(&central->workers, workerids, nworkers);
}

static inline int sched_central_push_task(struct starpu_task *task)
{
	struct sched_central *central = starpu_sched_ctx_get_policy_data(sched_task_ctx(task));
	int bound_worker = sched_task_bound_worker(task);
	int wake;

	if (bound_worker >= 0 && !sched_workers_contains(&central->workers, bound_worker))
		return -EINVAL;
	/* Before the task is visible: once queued, a worker may run and free it. */
	starpu_push_task_end(task);
	STARPU_PTHREAD_MUTEX_LOCK(&central->lock);
	if (bound_worker >= 0)
	{
		sched_queue_push(&central->bound[bound_worker], task);
		wake = sched_workers_claim(&central->workers, bound_worker) ? bound_worker : -1;
	}
	else
	{
		sched_queue_push(&central->shared, task);
		wake = sched_workers_claim_one_for(&central->workers, task, -1);
	}
	STARPU_PTHREAD_MUTEX_UNLOCK(&central->lock);
	sched_wake(wake, bound_worker >= 0);
	return 0;
}

static inline struct starpu_task *sched_central_take(void *policy_data, int workerid)
{
	struct sched_central *central = policy_data;
	struct starpu_task *task;

	if (!sched_queue_ntasks(&central->bound[workerid]) && !sched_queue_ntasks(&central->shared))
		return NULL;
	STARPU_PTHREAD_MUTEX_LOCK(&central->lock);
	task = sched_queue_take_first_of(&central->bound[workerid], &central->shared, workerid);
	STARPU_PTHREAD_MUTEX_UNLOCK(&central->lock);
	return task;
}

static inline struct starpu_task *sched_central_pop_task(unsigned sched_ctx_id)
{
	struct sched_central *central = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	return sched_pop_task(&central->workers, starpu_worker_get_id(), central, sched_central_take);
}

/* ------------------------------------------------- per-worker queues */

/** One worker's queues, each under the worker's own lock. */
struct sched_local_queue
{
	starpu_pthread_mutex_t lock;
	/** Tasks for this worker that another worker may steal. */
	struct sched_queue tasks;
	/** Tasks bound to this worker. */
	struct sched_queue bound;
} __attribute__((aligned(SCHED_CACHE_LINE)));

/** Per-worker queues of a context (random, ws, lws). */
struct sched_local
{
	struct sched_local_queue queues[STARPU_NMAXWORKERS];
	struct sched_workers workers;
	const char *policy_name;
};

/** Sets up per-worker queues for sched_ctx_id with priority levels min..max (one level: FIFO). */
static inline struct sched_local *sched_local_init(unsigned sched_ctx_id, const char *policy_name, int min_priority, int max_priority)
{
	struct sched_local *local = sched_alloc_policy_data(policy_name, sizeof(*local));
	int ret = 0;

	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		sched_lock_init(&local->queues[i].lock);
		ret |= sched_queue_init(&local->queues[i].tasks, min_priority, max_priority);
		ret |= sched_queue_init(&local->queues[i].bound, min_priority, max_priority);
	}
	if (ret)
	{
		astro_log_error(policy_name, "cannot allocate the task queues");
		abort();
	}
	sched_workers_init(&local->workers);
	local->policy_name = policy_name;
	starpu_sched_ctx_set_policy_data(sched_ctx_id, local);
	return local;
}

static inline void sched_local_deinit(unsigned sched_ctx_id)
{
	struct sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	unsigned left = 0;

	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		struct sched_local_queue *queue = &local->queues[i];

		left += sched_queue_ntasks(&queue->tasks) + sched_queue_ntasks(&queue->bound);
		sched_queue_fini(&queue->tasks);
		sched_queue_fini(&queue->bound);
		STARPU_PTHREAD_MUTEX_DESTROY(&queue->lock);
	}
	if (left)
		astro_log_error(local->policy_name, "%u tasks were still queued at shutdown", left);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, NULL);
	free(local);
}

static inline void sched_local_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	sched_workers_add(&local->workers, workerids, nworkers);
}

static inline void sched_local_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	sched_workers_remove(&local->workers, workerids, nworkers);
}

/**
 * Queues task on workerid's queue (the bound one if task is bound) and wakes
 * workerid if it is hungry; when it is not and stealable is set, wakes a
 * hungry worker that may steal the task instead.
 */
static inline void sched_local_push(struct sched_local *local, int workerid, struct starpu_task *task, int stealable)
{
	struct sched_local_queue *queue = &local->queues[workerid];
	int bound = task->execute_on_a_specific_worker;
	int wake;

	/* Before the task is visible: once queued, a worker may run and free it. */
	starpu_push_task_end(task);
	STARPU_PTHREAD_MUTEX_LOCK(&queue->lock);
	sched_queue_push(bound ? &queue->bound : &queue->tasks, task);
	wake = sched_workers_claim(&local->workers, workerid) ? workerid : -1;
	if (wake < 0 && stealable && !bound)
		wake = sched_workers_claim_one_for(&local->workers, task, workerid);
	STARPU_PTHREAD_MUTEX_UNLOCK(&queue->lock);
	sched_wake(wake, wake == workerid);
}

/** Removes and returns the task of highest priority (oldest first) whoever may run it; NULL if none. */
static inline struct starpu_task *sched_queue_take_head(struct sched_queue *q)
{
	struct starpu_task *task;

	if (atomic_load_explicit(&q->ntasks, memory_order_relaxed) == 0)
		return NULL;
	task = q->buckets[q->highest].head;
	sched_queue_erase(q, q->highest, task);
	return task;
}

/** Takes workerid's next task from its own queues, NULL if none. */
static inline struct starpu_task *sched_local_take_own(struct sched_local *local, int workerid)
{
	struct sched_local_queue *queue = &local->queues[workerid];
	struct starpu_task *task;

	if (!sched_queue_ntasks(&queue->bound) && !sched_queue_ntasks(&queue->tasks))
		return NULL;
	STARPU_PTHREAD_MUTEX_LOCK(&queue->lock);
	if (STARPU_UNLIKELY(!starpu_worker_is_enabled(workerid)))
	{
		/* Disabled (w_enable_worker_knob): starpu_worker_can_execute_task() now refuses it every task,
		 * but what was queued here before still runs here; nothing new comes. */
		task = sched_queue_take_head(&queue->bound);
		if (!task)
			task = sched_queue_take_head(&queue->tasks);
	}
	else
		task = sched_queue_take_first_of(&queue->bound, &queue->tasks, workerid);
	STARPU_PTHREAD_MUTEX_UNLOCK(&queue->lock);
	return task;
}

/** Steals from victim's stealable queue the task it needs least (lowest priority, newest) that thief may run. */
static inline struct starpu_task *sched_local_steal(struct sched_local *local, int victim, int thief)
{
	struct sched_local_queue *queue = &local->queues[victim];
	struct starpu_task *task;

	if (!sched_queue_ntasks(&queue->tasks))
		return NULL;
	STARPU_PTHREAD_MUTEX_LOCK(&queue->lock);
	task = sched_queue_take_last(&queue->tasks, thief);
	STARPU_PTHREAD_MUTEX_UNLOCK(&queue->lock);
	return task;
}

/**
 * The worker a task from the application thread goes to: the next worker in
 * round-robin order that may run it. Returns -1 when none may.
 */
static inline int sched_local_round_robin(struct sched_local *local, struct starpu_task *task)
{
	struct sched_workers *ws = &local->workers;
	unsigned count = ws->count;

	if (count == 0)
		return -1;
	unsigned start = atomic_fetch_add_explicit(&ws->cursor, 1, memory_order_relaxed) % count;
	for (unsigned i = 0; i < count; i++)
	{
		int workerid = ws->ids[(start + i) % count];

		if (sched_task_allowed_on(task, workerid))
			return workerid;
	}
	return -1;
}

/**
 * push_task of the work-stealing policies (ws, lws): a bound task goes to its
 * worker; a task pushed by a worker of the context that may run it stays on
 * that worker (it likely released it, so its data is nearby); any other goes
 * to the next capable worker round-robin. Idle workers may steal it.
 */
static inline int sched_local_push_task_stealable(struct starpu_task *task)
{
	struct sched_local *local = starpu_sched_ctx_get_policy_data(sched_task_ctx(task));
	int workerid = sched_task_bound_worker(task);

	if (workerid >= 0)
	{
		if (!sched_workers_contains(&local->workers, workerid))
			return -EINVAL;
	}
	else
	{
		workerid = starpu_worker_get_id();
		if (!sched_workers_contains(&local->workers, workerid) || !sched_task_allowed_on(task, workerid))
			workerid = sched_local_round_robin(local, task);
		if (workerid < 0)
			return -ENODEV;
	}
	sched_local_push(local, workerid, task, 1);
	return 0;
}

/* ------------------------------------------------------ policy counters */

/** One thread's counts, on its own cache line: counting contends on nothing. */
struct sched_counter_slot
{
	int64_t pushed;
	int64_t popped;
	int64_t stolen;
} __attribute__((aligned(SCHED_CACHE_LINE)));

/**
 * A policy's counts, exported as performance counters of its plugin:
 * starpu.sched.<policy>.g_total_pushed (tasks pushed to the policy),
 * starpu.sched.<policy>.w_total_popped (tasks a worker got from it) and,
 * for work-stealing policies, starpu.sched.<policy>.w_total_stolen (those
 * it took from another worker's queue). Each worker counts in its own slot,
 * application threads share the last one; nothing is counted while
 * collection is off.
 */
struct sched_counters
{
	int id_pushed;
	int id_popped;
	int id_stolen;
	struct sched_counter_slot slots[STARPU_NMAXWORKERS + 1];
};

/** The slot of the calling thread. */
static inline struct sched_counter_slot *sched_counters_slot(struct sched_counters *c)
{
	int workerid = starpu_worker_get_id();

	return &c->slots[workerid >= 0 && workerid < STARPU_NMAXWORKERS ? workerid : STARPU_NMAXWORKERS];
}

static inline void sched_counters_update_global(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	struct sched_counters *c = arg;
	int64_t pushed = 0;

	(void)context;
	for (unsigned i = 0; i < starpu_worker_get_count() && i < STARPU_NMAXWORKERS; i++)
		pushed += astro_counter_load_int64(&c->slots[i].pushed);
	pushed += astro_counter_load_int64(&c->slots[STARPU_NMAXWORKERS].pushed);
	astro_counter_sample_set_int64(sample, c->id_pushed, pushed);
}

static inline void sched_counters_update_worker(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	struct sched_counters *c = arg;
	int workerid = astro_counter_context_worker(context);

	if (workerid < 0 || workerid >= STARPU_NMAXWORKERS)
		return;
	astro_counter_sample_set_int64(sample, c->id_popped, astro_counter_load_int64(&c->slots[workerid].popped));
	if (c->id_stolen >= 0)
		astro_counter_sample_set_int64(sample, c->id_stolen, astro_counter_load_int64(&c->slots[workerid].stolen));
}

static inline int sched_counters_register_one(const char *module, enum starpu_perf_counter_scope scope, const char *policy_name,
					      const char *what, const char *help)
{
	char name[160], full_help[256];

	snprintf(name, sizeof(name), "starpu.sched.%s.%s", policy_name, what);
	snprintf(full_help, sizeof(full_help), "%s (policy %s)", help, policy_name);
	return astro_counter_register(module, scope, name, starpu_perf_counter_type_int64, ASTRO_COUNTER_MONOTONIC, "tasks", full_help);
}

/**
 * Registers c's counters for the plugin module (e.g. "sched_lws") and the
 * policy policy_name, from the plugin's init; with_steals adds
 * w_total_stolen. Counts start from zero. Returns 0 or a negative errno (the
 * error is printed; the policy works without its counters).
 */
static inline int sched_counters_register(struct sched_counters *c, const char *module, const char *policy_name, int with_steals)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->id_stolen = -1;
	c->id_pushed = sched_counters_register_one(module, starpu_perf_counter_scope_global, policy_name, "g_total_pushed",
						   "tasks pushed to the scheduling policy");
	c->id_popped = sched_counters_register_one(module, starpu_perf_counter_scope_per_worker, policy_name, "w_total_popped",
						   "tasks this worker got from the scheduling policy");
	if (with_steals)
		c->id_stolen = sched_counters_register_one(module, starpu_perf_counter_scope_per_worker, policy_name, "w_total_stolen",
							   "tasks this worker took from another worker's queue");
	if (c->id_pushed < 0 || c->id_popped < 0 || (with_steals && c->id_stolen < 0))
		return -EINVAL;
	ret = astro_counter_register_updater(module, starpu_perf_counter_scope_global, sched_counters_update_global, c);
	if (ret == 0)
		ret = astro_counter_register_updater(module, starpu_perf_counter_scope_per_worker, sched_counters_update_worker, c);
	return ret;
}

/** Counts one task pushed by the calling thread. */
static inline void sched_counters_count_push(struct sched_counters *c)
{
	if (astro_counter_collecting())
		astro_counter_add_int64(&sched_counters_slot(c)->pushed, 1);
}

/** Counts one task the calling worker got; stolen when it came from another worker's queue. */
static inline void sched_counters_count_pop(struct sched_counters *c, int stolen)
{
	if (astro_counter_collecting())
	{
		struct sched_counter_slot *slot = sched_counters_slot(c);

		astro_counter_add_int64(&slot->popped, 1);
		if (stolen)
			astro_counter_add_int64(&slot->stolen, 1);
	}
}

#endif /* __ASTROLABE_SCHED_UTIL_H__ */
