/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * peager: eager for parallel tasks. One central FIFO queue, as eager; a
 * worker that takes a STARPU_SPMD or STARPU_FORKJOIN task gives it to the
 * largest combined worker it belongs to that the codelet's max_parallelism
 * allows (0: any size) and whose workers are all in the context: the kernel
 * then runs it there, on all of them at once (see kernel/parallel.c).
 */
#include <limits.h>
#include <astrolabe/sched.h>

static struct astro_sched_counters peager_counters;

static void peager_init_sched(unsigned sched_ctx_id)
{
	starpu_sched_find_all_worker_combinations();
	astro_sched_central_init(sched_ctx_id, "peager", 0, 0);
}

static int peager_push_task(struct starpu_task *task)
{
	int ret = astro_sched_central_push_task(task);

	if (ret == 0)
		astro_sched_counters_count_push(&peager_counters);
	return ret;
}

/* The largest combined worker with workerid that may run task in the context, -1 if none. */
static int peager_combined_for(struct starpu_task *task, int workerid, unsigned sched_ctx_id)
{
	int max = task->cl->max_parallelism > 0 ? task->cl->max_parallelism : INT_MAX;
	unsigned first = starpu_worker_get_count(), count = starpu_combined_worker_get_count();
	int best = -1, best_size = 1;

	for (unsigned id = first; id < first + count; id++)
	{
		int size, *ids, member = 0, inside = 1;

		if (starpu_combined_worker_get_description((int)id, &size, &ids) != 0 || size <= best_size || size > max)
			continue;
		for (int i = 0; i < size; i++)
		{
			member |= ids[i] == workerid;
			inside &= starpu_sched_ctx_contains_worker(ids[i], sched_ctx_id) != 0;
		}
		if (member && inside && starpu_combined_worker_can_execute_task(id, task, 0))
		{
			best = (int)id;
			best_size = size;
		}
	}
	return best;
}

static struct starpu_task *peager_pop_task(unsigned sched_ctx_id)
{
	struct starpu_task *task = astro_sched_central_pop_task(sched_ctx_id);

	if (!task)
		return NULL;
	astro_sched_counters_count_pop(&peager_counters, 0);
	if (task->cl && task->cl->type != STARPU_SEQ && !task->execute_on_a_specific_worker)
	{
		int combined = peager_combined_for(task, starpu_worker_get_id(), sched_ctx_id);

		/* This worker takes its part from its own queue, like the others. */
		if (combined >= 0 && starpu_push_local_task(combined, task, 1) == 0)
			return NULL;
	}
	return task;
}

static struct starpu_sched_policy peager_policy =
{
	.init_sched = peager_init_sched,
	.deinit_sched = astro_sched_central_deinit,
	.add_workers = astro_sched_central_add_workers,
	.remove_workers = astro_sched_central_remove_workers,
	.push_task = peager_push_task,
	.pop_task = peager_pop_task,
	.policy_name = "peager",
	.policy_description = "parallel eager policy: one central queue, parallel tasks on combined workers",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	astro_sched_counters_register(&peager_counters, "sched_peager", "peager", 0);
	return astro_sched_policy_register(&peager_policy);
}

ASTRO_PLUGIN_DEFINE(sched_peager, ASTRO_PLUGIN_SCHED, "peager: eager for parallel tasks on combined workers", init, NULL);
