/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The policy toolkit: the building blocks of Astrolabe's scheduling policies,
 * public for the authors of new ones (an in-tree folder of schedulers/ or an
 * out-of-tree plugin, see examples/scheduler_plugin/). A plugin includes
 * this header and calls it: set-up, tear-down and the whole-policy helpers
 * are compiled once, in libastrolabe; the few operations every task goes
 * through (queue push and take, the hunger flags, the pop protocol) are
 * inline here, as a call into the library would cost more than they do.
 *
 *   astro_sched_queue       a task queue ordered by priority (higher first,
 *                           FIFO among equals), one bucket per priority
 *                           level; with a single level a plain FIFO deque
 *   astro_sched_workers     the workers of a context, and which of them are
 *                           hungry (found no task), so a push wakes one
 *   astro_sched_pop_task()  the pop protocol that keeps a push from missing
 *                           a worker on its way to sleep
 *   astro_sched_central_*   a whole policy around one central queue (eager,
 *                           prio)
 *   astro_sched_local_*     per-worker queues a policy pushes to, pops from
 *                           and steals from (random, ws, lws), and the
 *                           push_task of the work-stealing policies
 *   astro_sched_counters_*  a policy's push, pop and steal counts, exported
 *                           as performance counters of its plugin
 *
 * Tasks bound to a worker (execute_on_a_specific_worker) always go to a
 * queue only that worker reads, so no other worker ever scans past them.
 *
 * A policy made of these calls, in push_task, something that queues the
 * task (astro_sched_queue_push under the policy's lock) and then wakes a
 * worker it claimed (astro_sched_workers_claim*, then astro_sched_wake after
 * unlocking); in pop_task, astro_sched_pop_task() with a function that
 * takes a task for the worker. The header is for C (it uses C11 atomics).
 */
#ifndef __ASTROLABE_SCHED_H__
#define __ASTROLABE_SCHED_H__

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <starpu.h>
#include <astrolabe/plugin.h>
#include <astrolabe/counters.h>
#include <astrolabe/thread.h>

/** Shared state a policy keeps apart from what another thread writes sits on lines of this size. */
#define ASTRO_SCHED_CACHE_LINE 64

/* ------------------------------------------------------------------ tasks */

/** The worker task must run on, -1 when any capable worker may. */
static inline int astro_sched_task_bound_worker(const struct starpu_task *task)
{
	return task->execute_on_a_specific_worker ? (int)task->workerid : -1;
}

/** 1 when workerid may be handed task: it is the bound worker (if any) and can execute it. */
static inline int astro_sched_task_allowed_on(struct starpu_task *task, int workerid)
{
	if (task->execute_on_a_specific_worker && (int)task->workerid != workerid)
		return 0;
	return starpu_worker_can_execute_task((unsigned)workerid, task, 0);
}

/**
 * Asks for the lines of a queued task that running it reads and writes (its
 * first fields and its job's, astrolabe/plugin.h): a worker that takes it
 * next gets them from the thread that submitted it while it runs the task
 * before, instead of waiting for each in turn. Draining a worker's inbox
 * calls it on the two tasks taken next; each take then asks for those
 * lines of the tasks behind (astro_sched_local_take_own()).
 */
static inline void astro_sched_task_prefetch(const struct starpu_task *task)
{
	astro_prefetch_for_writing(task, ASTRO_TASK_HOT_BYTES);
	astro_prefetch_for_writing(task->starpu_private, ASTRO_JOB_HOT_BYTES);
}

/** The context a pushed task belongs to (the global one when it was left unset). */
static inline unsigned astro_sched_task_ctx(const struct starpu_task *task)
{
	return task->sched_ctx < STARPU_NMAX_SCHED_CTXS ? task->sched_ctx : STARPU_GLOBAL_SCHED_CTX;
}

/**
 * What the kernel keeps first in every task's job (task->starpu_private):
 * policies read only policy_data, through astro_sched_task_data().
 */
struct astro_sched_job_head
{
	void *reserved_task;
	unsigned long reserved_id;
	void *policy_data;
};

/**
 * The policy's word for a submitted task: its state while the policy holds
 * the task (e.g. where it queued it), NULL until a policy sets it, kept
 * across the task's scheduling. task->sched_data is the application's
 * (STARPU_TASK_SCHED_DATA), which a policy reads but never writes.
 */
static inline void **astro_sched_task_data(const struct starpu_task *task)
{
	return &((struct astro_sched_job_head *)task->starpu_private)->policy_data;
}

/** Policy data that must exist: aborts with a message naming the policy otherwise. */
void *astro_sched_alloc_policy_data(const char *policy_name, size_t size);

/* -------------------------------------------------------- priority queue */

/** Beyond this many priority levels, neighbouring levels share a bucket (kept sorted). */
#define ASTRO_SCHED_QUEUE_MAX_BUCKETS 1024

/**
 * Tasks by priority. Not thread-safe: the owner holds a lock around every
 * call, except astro_sched_queue_ntasks(), which may be read without it.
 */
struct astro_sched_queue
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
int astro_sched_queue_init(struct astro_sched_queue *q, int min_priority, int max_priority);

/** Frees what astro_sched_queue_init() allocated; q must be empty (its tasks are not touched). */
void astro_sched_queue_fini(struct astro_sched_queue *q);

/** Number of queued tasks; may be read without the lock, to skip an empty queue cheaply. */
static inline unsigned astro_sched_queue_ntasks(struct astro_sched_queue *q)
{
	/* Sequentially consistent: pairs with astro_sched_workers_announce_hunger() (see astro_sched_pop_task()). */
	return atomic_load(&q->ntasks);
}

/** task's priority, clamped to the queue's range. */
static inline int astro_sched_queue_priority_of(const struct astro_sched_queue *q, const struct starpu_task *task)
{
	if (task->priority < q->min_priority)
		return q->min_priority;
	if (task->priority > q->max_priority)
		return q->max_priority;
	return task->priority;
}

/** The bucket (index in the queue's array of lists) that holds tasks of the given priority. */
static inline unsigned astro_sched_queue_bucket_of(const struct astro_sched_queue *q, int priority)
{
	long long level = (long long)priority - q->min_priority;

	if ((long long)q->nbuckets == q->nlevels)
		return (unsigned)level;
	return (unsigned)(level * q->nbuckets / q->nlevels);
}

/** Counts n tasks just linked into bucket (for the functions that insert tasks). */
static inline void astro_sched_queue_count_pushed(struct astro_sched_queue *q, unsigned bucket, unsigned n)
{
	if (atomic_load_explicit(&q->ntasks, memory_order_relaxed) == 0)
		q->lowest = q->highest = bucket;
	else if (bucket > q->highest)
		q->highest = bucket;
	else if (bucket < q->lowest)
		q->lowest = bucket;
	atomic_fetch_add(&q->ntasks, n);
}

/** Counts a task just linked into bucket. */
static inline void astro_sched_queue_count_push(struct astro_sched_queue *q, unsigned bucket)
{
	astro_sched_queue_count_pushed(q, bucket, 1);
}

/** Queues task behind the tasks of the same or higher priority. */
static inline void astro_sched_queue_push(struct astro_sched_queue *q, struct starpu_task *task)
{
	int priority = astro_sched_queue_priority_of(q, task);
	unsigned bucket = astro_sched_queue_bucket_of(q, priority);
	struct starpu_task_list *list = &q->buckets[bucket];
	struct starpu_task *after = list->tail;

	/* A bucket holds several priorities only for very wide ranges; the walk
	 * stops at once when it holds one. */
	while (after && astro_sched_queue_priority_of(q, after) < priority)
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

	astro_sched_queue_count_push(q, bucket);
}

/** Unlinks task from bucket and updates the queue's counts (the task must be in that bucket). */
static inline void astro_sched_queue_erase(struct astro_sched_queue *q, unsigned bucket, struct starpu_task *task)
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
static inline struct starpu_task *astro_sched_queue_take_first(struct astro_sched_queue *q, int workerid)
{
	if (atomic_load_explicit(&q->ntasks, memory_order_relaxed) == 0)
		return NULL;
	for (unsigned bucket = q->highest + 1; bucket-- > q->lowest; )
		for (struct starpu_task *task = q->buckets[bucket].head; task; task = task->next)
			if (astro_sched_task_allowed_on(task, workerid))
			{
				astro_sched_queue_erase(q, bucket, task);
				return task;
			}
	return NULL;
}

/** The same from the other end (lowest priority, newest first): what a thief takes. */
static inline struct starpu_task *astro_sched_queue_take_last(struct astro_sched_queue *q, int workerid)
{
	if (atomic_load_explicit(&q->ntasks, memory_order_relaxed) == 0)
		return NULL;
	for (unsigned bucket = q->lowest; bucket <= q->highest; bucket++)
		for (struct starpu_task *task = q->buckets[bucket].tail; task; task = task->prev)
			if (astro_sched_task_allowed_on(task, workerid))
			{
				astro_sched_queue_erase(q, bucket, task);
				return task;
			}
	return NULL;
}
/** Queues task ahead of the tasks of the same or lower priority (a task taken, then given back). */
void astro_sched_queue_push_front(struct astro_sched_queue *q, struct starpu_task *task);

/** Removes and returns the first task, in priority order, that accept(task, arg) accepts; NULL if none. */
struct starpu_task *astro_sched_queue_take_first_if(struct astro_sched_queue *q, int (*accept)(struct starpu_task *task, void *arg), void *arg);

/** The same, newest first among equal priorities (still highest priority first). */
struct starpu_task *astro_sched_queue_take_newest_if(struct astro_sched_queue *q, int (*accept)(struct starpu_task *task, void *arg), void *arg);

/**
 * Widens q's range of priorities, when priority lies outside it, so that a
 * task of that priority keeps its exact place instead of being clamped; the
 * queued tasks keep their order. Returns 0, or -ENOMEM (q is then unchanged).
 */
int astro_sched_queue_cover(struct astro_sched_queue *q, int priority);

/** Removes and returns the task of highest priority (oldest first) whoever may run it; NULL if none. */
static inline struct starpu_task *astro_sched_queue_take_head(struct astro_sched_queue *q)
{
	struct starpu_task *task;

	if (atomic_load_explicit(&q->ntasks, memory_order_relaxed) == 0)
		return NULL;
	task = q->buckets[q->highest].head;
	astro_sched_queue_erase(q, q->highest, task);
	return task;
}

/** Priority of the task astro_sched_queue_take_first() would look at first; q must not be empty. */
static inline int astro_sched_queue_best_priority(const struct astro_sched_queue *q)
{
	return astro_sched_queue_priority_of(q, q->buckets[q->highest].head);
}

/**
 * Takes workerid's next task from its bound queue and a queue it shares:
 * the higher priority wins, the bound task on a tie (nobody else can run it).
 */
static inline struct starpu_task *astro_sched_queue_take_first_of(struct astro_sched_queue *bound, struct astro_sched_queue *shared, int workerid)
{
	struct starpu_task *task;
	unsigned nbound = atomic_load_explicit(&bound->ntasks, memory_order_relaxed);
	unsigned nshared = atomic_load_explicit(&shared->ntasks, memory_order_relaxed);

	if (nbound && (!nshared || astro_sched_queue_best_priority(bound) >= astro_sched_queue_best_priority(shared)))
	{
		task = astro_sched_queue_take_first(bound, workerid);
		if (task)
			return task;
	}
	task = astro_sched_queue_take_first(shared, workerid);
	return task ? task : astro_sched_queue_take_first(bound, workerid);
}

/* ---------------------------------------------------------------- workers */

/** One worker's hunger flag, on a line of its own. */
struct astro_sched_hunger
{
	atomic_uchar hungry;
} __attribute__((aligned(ASTRO_SCHED_CACHE_LINE)));

/**
 * The workers of a context (ids kept sorted, so neighbours by position are
 * neighbours by id) and which of them are hungry: their last look found no
 * task, so they may be asleep and need a wake-up. add/remove are called by
 * the kernel before tasks flow and after they stop.
 */
struct astro_sched_workers
{
	int ids[STARPU_NMAXWORKERS];
	/** Index of a worker in ids, -1 when it is not in the context. */
	int position[STARPU_NMAXWORKERS];
	unsigned count;
	/** Written as workers turn hungry and are claimed: on a line apart from the fields pushes only read. */
	atomic_uint nhungry __attribute__((aligned(ASTRO_SCHED_CACHE_LINE)));
	/** Where the next search for a worker starts, so that wake-ups and round-robin spread. */
	atomic_uint cursor __attribute__((aligned(ASTRO_SCHED_CACHE_LINE)));
	struct astro_sched_hunger hunger[STARPU_NMAXWORKERS];
};

/** Makes ws empty: no worker, none hungry. */
void astro_sched_workers_init(struct astro_sched_workers *ws);

/** Adds workerids to ws (ids out of range or already in are skipped). */
void astro_sched_workers_add(struct astro_sched_workers *ws, const int *workerids, unsigned nworkers);

/** Removes workerids from ws (ids not in are skipped). */
void astro_sched_workers_remove(struct astro_sched_workers *ws, const int *workerids, unsigned nworkers);

/** 1 when workerid belongs to the context. */
static inline int astro_sched_workers_contains(const struct astro_sched_workers *ws, int workerid)
{
	return workerid >= 0 && workerid < STARPU_NMAXWORKERS && ws->position[workerid] >= 0;
}

/** 1 while workerid announced its hunger and nobody claimed it. */
static inline int astro_sched_workers_is_hungry(struct astro_sched_workers *ws, int workerid)
{
	return atomic_load_explicit(&ws->hunger[workerid].hungry, memory_order_relaxed);
}

/** Called by workerid when it found no task, before it looks again. */
static inline void astro_sched_workers_announce_hunger(struct astro_sched_workers *ws, int workerid)
{
	if (!atomic_exchange(&ws->hunger[workerid].hungry, 1))
		atomic_fetch_add(&ws->nhungry, 1);
}

/** Called by workerid when it got a task after all. */
static inline void astro_sched_workers_retract_hunger(struct astro_sched_workers *ws, int workerid)
{
	if (atomic_exchange(&ws->hunger[workerid].hungry, 0))
		atomic_fetch_sub(&ws->nhungry, 1);
}

/** Takes workerid's hunger, if it is hungry: the caller then owes it a wake-up. Returns 1 if taken. */
static inline int astro_sched_workers_claim(struct astro_sched_workers *ws, int workerid)
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
static inline int astro_sched_workers_claim_one_for(struct astro_sched_workers *ws, struct starpu_task *task, int except)
{
	unsigned count = ws->count;

	if (!atomic_load(&ws->nhungry) || count == 0)
		return -1;
	unsigned start = atomic_fetch_add_explicit(&ws->cursor, 1, memory_order_relaxed) % count;
	for (unsigned i = 0; i < count; i++)
	{
		int workerid = ws->ids[(start + i) % count];

		if (workerid != except && astro_sched_workers_is_hungry(ws, workerid)
		    && astro_sched_task_allowed_on(task, workerid) && astro_sched_workers_claim(ws, workerid))
			return workerid;
	}
	return -1;
}

/** Wakes workerid (claimed above) if there is one; cheap when it is awake. Set
 * queued_for_it when the task sits where only workerid takes it: a spinning
 * worker then looks at once (astro_worker_wake_for_queued). */
static inline void astro_sched_wake(int workerid, int queued_for_it)
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
 * the hunger flags; a popper that finds nothing at its last look before it
 * sleeps (astro_worker_last_look()) announces its hunger, then looks again.
 * Both sides are sequentially consistent, so either the popper sees the task
 * or the pusher sees the hunger and wakes it: a task is never left behind a
 * sleeping worker. A worker still spinning is not hungry: it finds its work
 * by looking again, and pushers leave it alone. A worker already hungry looks
 * only once. take() returns a task for workerid or NULL.
 */
static inline struct starpu_task *astro_sched_pop_task(struct astro_sched_workers *ws, int workerid, void *policy_data,
						 struct starpu_task *(*take)(void *policy_data, int workerid))
{
	struct starpu_task *task;

	if (!astro_sched_workers_contains(ws, workerid))
		return NULL;
	if (!astro_sched_workers_is_hungry(ws, workerid))
	{
		task = take(policy_data, workerid);
		if (task)
			return task;
		if (!astro_worker_last_look(workerid))
			return NULL;
		astro_sched_workers_announce_hunger(ws, workerid);
	}
	task = take(policy_data, workerid);
	if (task)
		astro_sched_workers_retract_hunger(ws, workerid);
	return task;
}

/* ------------------------------------------------- one central queue */

/** A policy with one queue every worker takes from (eager, prio). */
struct astro_sched_central
{
	/** Guards shared and every bound queue (a short lock, as the per-worker queues'). */
	astro_lock_t lock;
	struct astro_sched_queue shared;
	/** Tasks bound to one worker. */
	struct astro_sched_queue bound[STARPU_NMAXWORKERS];
	struct astro_sched_workers workers;
	const char *policy_name;
};

/**
 * Initialises a queue lock. Queue locks are held for a few instructions while
 * the submitting thread and the workers push and pop, so a contender spins
 * briefly before it sleeps (glibc's adaptive mutex, where available) instead
 * of paying two system calls.
 */
void astro_sched_lock_init(starpu_pthread_mutex_t *lock);

/**
 * The directory performance models are written to (STARPU_PERF_MODEL_DIR, else
 * $STARPU_HOME/.starpu/sampling), into path: for a policy that keeps files of
 * its own beside them (heteroprio's automatic mode).
 */
void astro_sched_sampling_dir(char *path, size_t len);

/** Sets up a central-queue policy for sched_ctx_id with priority levels min..max (one level: FIFO). */
void astro_sched_central_init(unsigned sched_ctx_id, const char *policy_name, int min_priority, int max_priority);

/** deinit_sched of a central-queue policy: reports tasks left queued, frees everything. */
void astro_sched_central_deinit(unsigned sched_ctx_id);

/** add_workers of a central-queue policy. */
void astro_sched_central_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers);

/** remove_workers of a central-queue policy. */
void astro_sched_central_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers);

/**
 * push_task of a central-queue policy: a bound task goes to its worker's
 * queue (-EINVAL when that worker is not in the context), any other to the
 * shared one; a hungry worker that may run it is woken.
 */
int astro_sched_central_push_task(struct starpu_task *task);

/** pop_task of a central-queue policy: the calling worker's next task, by priority, NULL if none. */
struct starpu_task *astro_sched_central_pop_task(unsigned sched_ctx_id);

/* ------------------------------------------------- per-worker queues */

/**
 * One worker's queues, each under the worker's own lock (taken at every take
 * and at the pushes of the worker itself: a short lock). Other threads (the
 * application's) push into the inbox instead, with one atomic exchange on a
 * line of its own and no lock: the worker and the pusher no longer pass the
 * lock and the queue's lines back and forth at every task. Whoever takes
 * from the queues (the worker, or a thief) first moves the inbox's tasks in,
 * oldest first, under the lock.
 */
struct astro_sched_local_queue
{
	astro_lock_t lock;
	/** Tasks for this worker that another worker may steal. */
	struct astro_sched_queue tasks;
	/** Tasks bound to this worker. */
	struct astro_sched_queue bound;
	/** Tasks pushed by other threads, newest first, linked by their next field (atomic; NULL: empty). */
	struct starpu_task *inbox __attribute__((aligned(ASTRO_SCHED_CACHE_LINE)));
} __attribute__((aligned(ASTRO_SCHED_CACHE_LINE)));

/** Per-worker queues of a context (random, ws, lws). */
struct astro_sched_local
{
	struct astro_sched_local_queue queues[STARPU_NMAXWORKERS];
	struct astro_sched_workers workers;
	const char *policy_name;
};

/** Sets up per-worker queues for sched_ctx_id with priority levels min..max (one level: FIFO). */
struct astro_sched_local *astro_sched_local_init(unsigned sched_ctx_id, const char *policy_name, int min_priority, int max_priority);

/** deinit_sched of a per-worker-queue policy: reports tasks left queued, frees everything. */
void astro_sched_local_deinit(unsigned sched_ctx_id);

/** add_workers of a per-worker-queue policy. */
void astro_sched_local_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers);

/** remove_workers of a per-worker-queue policy. */
void astro_sched_local_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers);

/**
 * Queues task on workerid's queue (the bound one if task is bound) and wakes
 * workerid if it is hungry; when it is not and stealable is set, wakes a
 * hungry worker that may steal the task instead.
 */
void astro_sched_local_push(struct astro_sched_local *local, int workerid, struct starpu_task *task, int stealable);

/** 1 when tasks wait in queue's inbox. Sequentially consistent, as astro_sched_queue_ntasks(). */
static inline int astro_sched_local_inbox_filled(struct astro_sched_local_queue *queue)
{
	return __atomic_load_n(&queue->inbox, __ATOMIC_SEQ_CST) != NULL;
}

/**
 * Moves the tasks of queue's inbox into its queues, oldest first; the caller
 * holds queue's lock. For its own worker (workerid, -1 for anyone else), a
 * lone task found with the queues empty is not queued but returned, when that
 * worker may run it (or is disabled: see astro_sched_local_take_own()).
 * Returns NULL otherwise.
 */
struct starpu_task *astro_sched_local_drain_inbox(struct astro_sched_local_queue *queue, int workerid);

/** Takes workerid's next task from its own queues, NULL if none. */
static inline struct starpu_task *astro_sched_local_take_own(struct astro_sched_local *local, int workerid)
{
	struct astro_sched_local_queue *queue = &local->queues[workerid];
	struct starpu_task *task;

	if (!astro_sched_queue_ntasks(&queue->bound) && !astro_sched_queue_ntasks(&queue->tasks) && !astro_sched_local_inbox_filled(queue))
		return NULL;
	astro_lock_acquire(&queue->lock);
	if (astro_sched_local_inbox_filled(queue) && (task = astro_sched_local_drain_inbox(queue, workerid)))
	{
		astro_lock_release(&queue->lock);
		return task;
	}
	if (STARPU_UNLIKELY(!starpu_worker_is_enabled(workerid)))
	{
		/* Disabled (w_enable_worker_knob): starpu_worker_can_execute_task() now refuses it every task,
		 * but what was queued here before still runs here; nothing new comes. */
		task = astro_sched_queue_take_head(&queue->bound);
		if (!task)
			task = astro_sched_queue_take_head(&queue->tasks);
	}
	else
		task = astro_sched_queue_take_first_of(&queue->bound, &queue->tasks, workerid);
	/* Lines asked for ahead, to come from the submitting thread's core while this worker runs the
	 * tasks before (one task's run was too short for them, bench/README.md): the first bytes of the
	 * task two places behind, and the job of the next one, whose address lies in the bytes asked
	 * for at the take before. Not in a central queue, where the pushing thread still links the
	 * newest tasks. */
	if (atomic_load_explicit(&queue->tasks.ntasks, memory_order_relaxed))
	{
		struct starpu_task *next = queue->tasks.buckets[queue->tasks.highest].head;

		astro_prefetch_for_writing(next->starpu_private, ASTRO_JOB_HOT_BYTES);
		if (next->next)
			astro_prefetch_for_writing(next->next, ASTRO_TASK_HOT_BYTES);
	}
	astro_lock_release(&queue->lock);
	return task;
}

/** Steals from victim's stealable queue the task it needs least (lowest priority, newest) that thief may run. */
static inline struct starpu_task *astro_sched_local_steal(struct astro_sched_local *local, int victim, int thief)
{
	struct astro_sched_local_queue *queue = &local->queues[victim];
	struct starpu_task *task;

	if (!astro_sched_queue_ntasks(&queue->tasks) && !astro_sched_local_inbox_filled(queue))
		return NULL;
	astro_lock_acquire(&queue->lock);
	if (astro_sched_local_inbox_filled(queue))
		astro_sched_local_drain_inbox(queue, -1);
	task = astro_sched_queue_take_last(&queue->tasks, thief);
	astro_lock_release(&queue->lock);
	return task;
}

/**
 * The worker a task from the application thread goes to: the next worker in
 * round-robin order that may run it. Returns -1 when none may.
 */
int astro_sched_local_round_robin(struct astro_sched_local *local, struct starpu_task *task);

/**
 * push_task of the work-stealing policies (ws, lws): a bound task goes to its
 * worker; a task pushed by a worker of the context that may run it stays on
 * that worker (it likely released it, so its data is nearby); any other goes
 * to the next capable worker round-robin. Idle workers may steal it.
 */
int astro_sched_local_push_task_stealable(struct starpu_task *task);

/* ------------------------------------------------------ policy counters */

/** One thread's counts, on its own cache line: counting contends on nothing. */
struct astro_sched_counter_slot
{
	int64_t pushed;
	int64_t popped;
	int64_t stolen;
} __attribute__((aligned(ASTRO_SCHED_CACHE_LINE)));

/**
 * A policy's counts, exported as performance counters of its plugin:
 * starpu.sched.\<policy\>.g_total_pushed (tasks pushed to the policy),
 * starpu.sched.\<policy\>.w_total_popped (tasks a worker got from it) and,
 * for work-stealing policies, starpu.sched.\<policy\>.w_total_stolen (those
 * it took from another worker's queue). Each worker counts in its own slot,
 * application threads share the last one; nothing is counted while
 * collection is off.
 */
struct astro_sched_counters
{
	int id_pushed;
	int id_popped;
	int id_stolen;
	struct astro_sched_counter_slot slots[STARPU_NMAXWORKERS + 1];
};

/** The slot of the calling thread. */
static inline struct astro_sched_counter_slot *astro_sched_counters_slot(struct astro_sched_counters *c)
{
	int workerid = starpu_worker_get_id();

	return &c->slots[workerid >= 0 && workerid < STARPU_NMAXWORKERS ? workerid : STARPU_NMAXWORKERS];
}

/**
 * Registers c's counters for the plugin module (e.g. "sched_lws") and the
 * policy policy_name, from the plugin's init; with_steals adds
 * w_total_stolen. Counts start from zero. Returns 0 or a negative errno (the
 * error is printed; the policy works without its counters).
 */
int astro_sched_counters_register(struct astro_sched_counters *c, const char *module, const char *policy_name, int with_steals);

/** Counts one task pushed by the calling thread. */
static inline void astro_sched_counters_count_push(struct astro_sched_counters *c)
{
	if (astro_counter_collecting())
		astro_counter_add_int64(&astro_sched_counters_slot(c)->pushed, 1);
}

/** Counts one task the calling worker got; stolen when it came from another worker's queue. */
static inline void astro_sched_counters_count_pop(struct astro_sched_counters *c, int stolen)
{
	if (astro_counter_collecting())
	{
		struct astro_sched_counter_slot *slot = astro_sched_counters_slot(c);

		astro_counter_add_int64(&slot->popped, 1);
		if (stolen)
			astro_counter_add_int64(&slot->stolen, 1);
	}
}

#endif /* __ASTROLABE_SCHED_H__ */
