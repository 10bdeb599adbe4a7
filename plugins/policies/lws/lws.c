/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lws: locality work stealing, the default policy. Like ws, each worker has
 * its own queue and keeps the tasks it releases, but queues are ordered by
 * priority, and an idle worker steals from its nearest neighbours first
 * (ids i+1, i-1, i+2, i-2...), taking the victim's lowest-priority task.
 */
#include <astrolabe/sched.h>

static struct astro_sched_counters lws_counters;

static void lws_init_sched(unsigned sched_ctx_id)
{
	astro_sched_local_init(sched_ctx_id, "lws", starpu_sched_ctx_get_min_priority(sched_ctx_id), starpu_sched_ctx_get_max_priority(sched_ctx_id));
}

static struct starpu_task *lws_steal(struct astro_sched_local *local, int thief)
{
	struct astro_sched_workers *ws = &local->workers;
	int count = (int)ws->count;
	int position = ws->position[thief];

	/* Offsets +1, -1, +2, -2... visit every other position exactly once. */
	for (int step = 1; step < count; step++)
	{
		int neighbour = position + (step & 1 ? (step + 1) / 2 : -(step / 2));
		struct starpu_task *task;

		if (neighbour >= count)
			neighbour -= count;
		else if (neighbour < 0)
			neighbour += count;
		task = astro_sched_local_steal(local, ws->ids[neighbour], thief);

		if (task)
			return task;
	}
	return NULL;
}

static struct starpu_task *lws_take(void *policy_data, int workerid)
{
	struct astro_sched_local *local = policy_data;
	struct starpu_task *task = astro_sched_local_take_own(local, workerid);

	if (task)
	{
		astro_sched_counters_count_pop(&lws_counters, 0);
		return task;
	}
	task = lws_steal(local, workerid);
	if (task)
		astro_sched_counters_count_pop(&lws_counters, 1);
	return task;
}

static int lws_push_task(struct starpu_task *task)
{
	int ret = astro_sched_local_push_task_stealable(task);

	if (ret == 0)
		astro_sched_counters_count_push(&lws_counters);
	return ret;
}

static struct starpu_task *lws_pop_task(unsigned sched_ctx_id)
{
	struct astro_sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	return astro_sched_pop_task(&local->workers, starpu_worker_get_id(), local, lws_take);
}

static struct starpu_sched_policy lws_policy =
{
	.init_sched = lws_init_sched,
	.deinit_sched = astro_sched_local_deinit,
	.add_workers = astro_sched_local_add_workers,
	.remove_workers = astro_sched_local_remove_workers,
	.push_task = lws_push_task,
	.pop_task = lws_pop_task,
	.policy_name = "lws",
	.policy_description = "locality work stealing: per-worker priority queues, steal from the nearest workers first",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	astro_sched_counters_register(&lws_counters, "sched_lws", "lws", 1);
	return astro_sched_policy_register(&lws_policy);
}

ASTRO_PLUGIN_DEFINE(sched_lws, ASTRO_PLUGIN_SCHED, "lws: locality work stealing with priorities (default)", init, NULL);
