/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws: work stealing. Each worker has its own FIFO queue; a task released by
 * a worker stays on it, one from the application goes round-robin. A worker
 * with an empty queue steals, from the back, the queue of the most loaded
 * worker, so that stolen work is what its owner would have reached last.
 */
#include <astrolabe/sched.h>

static void ws_init_sched(unsigned sched_ctx_id)
{
	/* Priorities are ignored: one level makes every queue a FIFO. */
	astro_sched_local_init(sched_ctx_id, "ws", 0, 0);
}

static struct starpu_task *ws_steal(struct astro_sched_local *local, int thief)
{
	struct astro_sched_workers *ws = &local->workers;
	struct starpu_task *task;
	unsigned most_load = 0;
	int most_loaded = -1;

	for (unsigned i = 0; i < ws->count; i++)
	{
		int victim = ws->ids[i];
		/* What other threads pushed waits in the victim's inbox until someone moves it into its
		 * queue (a busy victim does not): at least one task, which the steal moves and takes. */
		unsigned load = astro_sched_queue_ntasks(&local->queues[victim].tasks) + (unsigned)astro_sched_local_inbox_filled(&local->queues[victim]);

		if (victim != thief && load > most_load)
		{
			most_load = load;
			most_loaded = victim;
		}
	}
	if (most_loaded < 0)
		return NULL;
	task = astro_sched_local_steal(local, most_loaded, thief);
	if (task)
		return task;
	/* Nothing there this worker may run (or it was taken meanwhile): try the others. */
	unsigned start = (unsigned)ws->position[thief];
	for (unsigned i = 1; i < ws->count; i++)
	{
		int victim = ws->ids[(start + i) % ws->count];

		if (victim != most_loaded && (task = astro_sched_local_steal(local, victim, thief)))
			return task;
	}
	return NULL;
}

static struct starpu_task *ws_take(void *policy_data, int workerid)
{
	struct astro_sched_local *local = policy_data;
	struct starpu_task *task = astro_sched_local_take_own(local, workerid);

	return task ? task : ws_steal(local, workerid);
}

static struct starpu_task *ws_pop_task(unsigned sched_ctx_id)
{
	struct astro_sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	return astro_sched_pop_task(&local->workers, starpu_worker_get_id(), local, ws_take);
}

static struct starpu_sched_policy ws_policy =
{
	.init_sched = ws_init_sched,
	.deinit_sched = astro_sched_local_deinit,
	.add_workers = astro_sched_local_add_workers,
	.remove_workers = astro_sched_local_remove_workers,
	.push_task = astro_sched_local_push_task_stealable,
	.pop_task = ws_pop_task,
	.policy_name = "ws",
	.policy_description = "work stealing: per-worker queues, idle workers steal from the most loaded",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	return astro_sched_policy_register(&ws_policy);
}

ASTRO_PLUGIN_DEFINE(sched_ws, ASTRO_PLUGIN_SCHED, "ws: work stealing from the most loaded worker", init, NULL);
