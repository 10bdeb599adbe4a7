/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy toolkit (astrolabe/sched.h): per-worker queues, stealing, and
 * the push_task of the work-stealing policies (random, ws, lws).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/sched.h>

/** Sets up per-worker queues for sched_ctx_id with priority levels min..max (one level: FIFO). */
struct astro_sched_local *astro_sched_local_init(unsigned sched_ctx_id, const char *policy_name, int min_priority, int max_priority)
{
	struct astro_sched_local *local = astro_sched_alloc_policy_data(policy_name, sizeof(*local));
	int ret = 0;

	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		astro_lock_init(&local->queues[i].lock);
		ret |= astro_sched_queue_init(&local->queues[i].tasks, min_priority, max_priority);
		ret |= astro_sched_queue_init(&local->queues[i].bound, min_priority, max_priority);
	}
	if (ret)
	{
		astro_log_error(policy_name, "cannot allocate the task queues");
		abort();
	}
	astro_sched_workers_init(&local->workers);
	local->policy_name = policy_name;
	starpu_sched_ctx_set_policy_data(sched_ctx_id, local);
	return local;
}

void astro_sched_local_deinit(unsigned sched_ctx_id)
{
	struct astro_sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	unsigned left = 0;

	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		struct astro_sched_local_queue *queue = &local->queues[i];

		astro_sched_local_drain_inbox(queue, -1);
		left += astro_sched_queue_ntasks(&queue->tasks) + astro_sched_queue_ntasks(&queue->bound);
		astro_sched_queue_fini(&queue->tasks);
		astro_sched_queue_fini(&queue->bound);
	}
	if (left)
		astro_log_error(local->policy_name, "%u tasks were still queued at shutdown", left);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, NULL);
	free(local);
}

void astro_sched_local_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct astro_sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	astro_sched_workers_add(&local->workers, workerids, nworkers);
}

void astro_sched_local_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct astro_sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	astro_sched_workers_remove(&local->workers, workerids, nworkers);
}

/*
 * Queues the chain oldest..newest (linked both ways), whose tasks all have the same priority,
 * behind those of that priority in q: one splice instead of a push per task.
 */
static bool queue_splice(struct astro_sched_queue *q, struct starpu_task *oldest, struct starpu_task *newest, unsigned n)
{
	int priority = astro_sched_queue_priority_of(q, oldest);
	unsigned bucket = astro_sched_queue_bucket_of(q, priority);
	struct starpu_task_list *list = &q->buckets[bucket];

	/* A bucket shared by several priorities (very wide ranges) is kept sorted: push one by one. */
	if (list->tail && astro_sched_queue_priority_of(q, list->tail) < priority)
		return false;
	oldest->prev = list->tail;
	if (list->tail)
		list->tail->next = oldest;
	else
		list->head = oldest;
	list->tail = newest;
	astro_sched_queue_count_pushed(q, bucket, n);
	return true;
}

/* The queue of queue's worker that task goes to: the bound one if task is bound. */
static inline struct astro_sched_queue *queue_for(struct astro_sched_local_queue *queue, const struct starpu_task *task)
{
	return task->execute_on_a_specific_worker ? &queue->bound : &queue->tasks;
}

/* Whether workerid, whose queues these are, takes task from its inbox at once: nothing is queued
 * before it, and the worker may run it (or is disabled: see astro_sched_local_take_own()). */
static inline bool taken_at_once(struct astro_sched_local_queue *queue, struct starpu_task *task, int workerid)
{
	return workerid >= 0 && !astro_sched_queue_ntasks(&queue->tasks) && !astro_sched_queue_ntasks(&queue->bound)
	       && (astro_sched_task_allowed_on(task, workerid) || !starpu_worker_is_enabled(workerid));
}

struct starpu_task *astro_sched_local_drain_inbox(struct astro_sched_local_queue *queue, int workerid)
{
	struct starpu_task *newest = __atomic_exchange_n(&queue->inbox, NULL, __ATOMIC_ACQUIRE);
	struct starpu_task *oldest = NULL, *first = NULL;
	int best = INT_MIN, worst = INT_MAX;
	unsigned nbound = 0, n = 0;

	if (!newest)
		return NULL;
	/* The usual case when the worker keeps up: one task, nothing queued. */
	if (!newest->next)
	{
		if (taken_at_once(queue, newest, workerid))
			return newest;
		astro_sched_queue_push(queue_for(queue, newest), newest);
		return NULL;
	}
	/* Newest first: reversed (and linked back), they queue in the order they were pushed. */
	for (struct starpu_task *task = newest; task; task = task->prev)
	{
		struct starpu_task *older = task->next;

		task->next = oldest;
		task->prev = older;
		oldest = task;
		if (task->priority > best)
			best = task->priority;
		if (task->priority < worst)
			worst = task->priority;
		nbound += task->execute_on_a_specific_worker;
		n++;
	}
	/* With nothing queued, the oldest is what the worker would take first unless a task behind
	 * it comes first by priority (or, on a tie, by being bound): it takes it without queueing it. */
	if (oldest->priority == best && (oldest->execute_on_a_specific_worker || !nbound) && taken_at_once(queue, oldest, workerid))
	{
		first = oldest;
		oldest = first->next;
		first->next = first->prev = NULL;
		nbound -= first->execute_on_a_specific_worker;
		if (!oldest)
			return first;
		oldest->prev = NULL;
		n--;
		/* The two tasks taken next, most likely (astro_sched_local_take_own() asks for the others). */
		astro_sched_task_prefetch(oldest);
		if (oldest->next)
			astro_sched_task_prefetch(oldest->next);
	}
	if (best == worst && (nbound == 0 || nbound == n) && queue_splice(nbound ? &queue->bound : &queue->tasks, oldest, newest, n))
		return first;
	while (oldest)
	{
		struct starpu_task *task = oldest;

		oldest = task->next;
		task->next = task->prev = NULL;
		astro_sched_queue_push(queue_for(queue, task), task);
	}
	return first;
}

/**
 * Pushes task into queue's inbox (see struct astro_sched_local_queue). Once
 * it is there, its worker may run and free it: the caller touches it no more.
 */
static inline void local_inbox_push(struct astro_sched_local_queue *queue, struct starpu_task *task)
{
	struct starpu_task *head = __atomic_load_n(&queue->inbox, __ATOMIC_RELAXED);

	do
		task->next = head;
	while (!__atomic_compare_exchange_n(&queue->inbox, &head, task, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}

/**
 * Queues task on workerid's queue (the bound one if task is bound) and wakes
 * workerid if it is hungry; when it is not and stealable is set, wakes a
 * hungry worker that may steal the task instead.
 */
static inline __attribute__((always_inline)) void local_push(struct astro_sched_local *local, int workerid, struct starpu_task *task, int stealable, int self)
{
	struct astro_sched_local_queue *queue = &local->queues[workerid];
	int bound = task->execute_on_a_specific_worker;
	int wake;

	/* Before the task is visible: once queued, a worker may run and free it. */
	starpu_push_task_end(task);
	/* From another thread, through the inbox, unless another worker is hungry and might steal the
	 * task: finding one reads the task, which must stay queued meanwhile (under the lock below).
	 * Another worker turning hungry during the push may miss the task: its own worker runs it. */
	if (workerid != self &&
	    (bound || !stealable || atomic_load_explicit(&local->workers.nhungry, memory_order_relaxed)
	     <= (unsigned)astro_sched_workers_is_hungry(&local->workers, workerid)))
	{
		local_inbox_push(queue, task);
		astro_sched_wake(astro_sched_workers_claim(&local->workers, workerid) ? workerid : -1, 1);
		return;
	}
	astro_lock_acquire(&queue->lock);
	astro_sched_queue_push(queue_for(queue, task), task);
	wake = astro_sched_workers_claim(&local->workers, workerid) ? workerid : -1;
	if (wake < 0 && stealable && !bound)
		wake = astro_sched_workers_claim_one_for(&local->workers, task, workerid);
	astro_lock_release(&queue->lock);
	astro_sched_wake(wake, wake == workerid);
}

/**
 * The worker a task from the application thread goes to: the next worker in
 * round-robin order that may run it. Returns -1 when none may.
 */
static inline __attribute__((always_inline)) int local_round_robin(struct astro_sched_local *local, struct starpu_task *task)
{
	struct astro_sched_workers *ws = &local->workers;
	unsigned count = ws->count;

	if (count == 0)
		return -1;
	/* Alone, a worker needs no turn taken (nor the shared cursor's atomic addition and division). */
	unsigned start = count == 1 ? 0 : atomic_fetch_add_explicit(&ws->cursor, 1, memory_order_relaxed) % count;
	for (unsigned i = 0; i < count; i++)
	{
		int workerid = ws->ids[(start + i) % count];

		if (astro_sched_task_allowed_on(task, workerid))
			return workerid;
	}
	return -1;
}

/* Exported for the policies; the toolkit calls the inlined forms on the task path. */
void astro_sched_local_push(struct astro_sched_local *local, int workerid, struct starpu_task *task, int stealable)
{
	local_push(local, workerid, task, stealable, starpu_worker_get_id());
}

int astro_sched_local_round_robin(struct astro_sched_local *local, struct starpu_task *task)
{
	return local_round_robin(local, task);
}

/**
 * push_task of the work-stealing policies (ws, lws): a bound task goes to its
 * worker; a task pushed by a worker of the context that may run it stays on
 * that worker (it likely released it, so its data is nearby); any other goes
 * to the next capable worker round-robin. Idle workers may steal it.
 */
int astro_sched_local_push_task_stealable(struct starpu_task *task)
{
	struct astro_sched_local *local = starpu_sched_ctx_get_policy_data(astro_sched_task_ctx(task));
	int workerid = astro_sched_task_bound_worker(task);
	int self = starpu_worker_get_id();

	if (workerid >= 0)
	{
		if (!astro_sched_workers_contains(&local->workers, workerid))
			return -EINVAL;
	}
	else
	{
		workerid = self;
		if (!astro_sched_workers_contains(&local->workers, workerid) || !astro_sched_task_allowed_on(task, workerid))
			workerid = local_round_robin(local, task);
		if (workerid < 0)
			return -ENODEV;
	}
	local_push(local, workerid, task, 1, self);
	return 0;
}
