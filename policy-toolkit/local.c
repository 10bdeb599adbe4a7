/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy toolkit (astrolabe/sched.h): per-worker queues, stealing, and
 * the push_task of the work-stealing policies (random, ws, lws).
 */
#include <errno.h>
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

/**
 * Queues task on workerid's queue (the bound one if task is bound) and wakes
 * workerid if it is hungry; when it is not and stealable is set, wakes a
 * hungry worker that may steal the task instead.
 */
static inline __attribute__((always_inline)) void local_push(struct astro_sched_local *local, int workerid, struct starpu_task *task, int stealable)
{
	struct astro_sched_local_queue *queue = &local->queues[workerid];
	int bound = task->execute_on_a_specific_worker;
	int wake;

	/* Before the task is visible: once queued, a worker may run and free it. */
	starpu_push_task_end(task);
	astro_lock_acquire(&queue->lock);
	astro_sched_queue_push(bound ? &queue->bound : &queue->tasks, task);
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
	local_push(local, workerid, task, stealable);
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

	if (workerid >= 0)
	{
		if (!astro_sched_workers_contains(&local->workers, workerid))
			return -EINVAL;
	}
	else
	{
		workerid = starpu_worker_get_id();
		if (!astro_sched_workers_contains(&local->workers, workerid) || !astro_sched_task_allowed_on(task, workerid))
			workerid = local_round_robin(local, task);
		if (workerid < 0)
			return -ENODEV;
	}
	local_push(local, workerid, task, 1);
	return 0;
}
