/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy toolkit (astrolabe/sched.h): a whole policy around one central
 * queue (eager, prio).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/sched.h>

/** Sets up a central-queue policy for sched_ctx_id with priority levels min..max (one level: FIFO). */
void astro_sched_central_init(unsigned sched_ctx_id, const char *policy_name, int min_priority, int max_priority)
{
	struct astro_sched_central *central = astro_sched_alloc_policy_data(policy_name, sizeof(*central));
	int ret = astro_sched_queue_init(&central->shared, min_priority, max_priority);

	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
		ret |= astro_sched_queue_init(&central->bound[i], min_priority, max_priority);
	if (ret)
	{
		astro_log_error(policy_name, "cannot allocate the task queues");
		abort();
	}
	astro_lock_init(&central->lock);
	astro_sched_workers_init(&central->workers);
	central->policy_name = policy_name;
	starpu_sched_ctx_set_policy_data(sched_ctx_id, central);
}

void astro_sched_central_deinit(unsigned sched_ctx_id)
{
	struct astro_sched_central *central = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	unsigned left = astro_sched_queue_ntasks(&central->shared);

	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		left += astro_sched_queue_ntasks(&central->bound[i]);
		astro_sched_queue_fini(&central->bound[i]);
	}
	if (left)
		astro_log_error(central->policy_name, "%u tasks were still queued at shutdown", left);
	astro_sched_queue_fini(&central->shared);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, NULL);
	free(central);
}

void astro_sched_central_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct astro_sched_central *central = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	astro_sched_workers_add(&central->workers, workerids, nworkers);
}

void astro_sched_central_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct astro_sched_central *central = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	astro_sched_workers_remove(&central->workers, workerids, nworkers);
}

int astro_sched_central_push_task(struct starpu_task *task)
{
	struct astro_sched_central *central = starpu_sched_ctx_get_policy_data(astro_sched_task_ctx(task));
	int bound_worker = astro_sched_task_bound_worker(task);
	int wake;

	if (bound_worker >= 0 && !astro_sched_workers_contains(&central->workers, bound_worker))
		return -EINVAL;
	/* Before the task is visible: once queued, a worker may run and free it. */
	starpu_push_task_end(task);
	astro_lock_acquire(&central->lock);
	if (bound_worker >= 0)
	{
		astro_sched_queue_push(&central->bound[bound_worker], task);
		wake = astro_sched_workers_claim(&central->workers, bound_worker) ? bound_worker : -1;
	}
	else
	{
		astro_sched_queue_push(&central->shared, task);
		wake = astro_sched_workers_claim_one_for(&central->workers, task, -1);
	}
	astro_lock_release(&central->lock);
	astro_sched_wake(wake, bound_worker >= 0);
	return 0;
}

static struct starpu_task *astro_sched_central_take(void *policy_data, int workerid)
{
	struct astro_sched_central *central = policy_data;
	struct starpu_task *task;

	if (!astro_sched_queue_ntasks(&central->bound[workerid]) && !astro_sched_queue_ntasks(&central->shared))
		return NULL;
	astro_lock_acquire(&central->lock);
	task = astro_sched_queue_take_first_of(&central->bound[workerid], &central->shared, workerid);
	astro_lock_release(&central->lock);
	return task;
}

struct starpu_task *astro_sched_central_pop_task(unsigned sched_ctx_id)
{
	struct astro_sched_central *central = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	return astro_sched_pop_task(&central->workers, starpu_worker_get_id(), central, astro_sched_central_take);
}
