/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * eager: one central FIFO queue shared by all workers. A worker takes the
 * oldest task it can run; a task bound to a worker waits in that worker's
 * own queue. The simplest policy, and a good one when tasks are uniform.
 */
#include <astrolabe/sched.h>

static struct astro_sched_counters eager_counters;

static void eager_init_sched(unsigned sched_ctx_id)
{
	/* A single priority level makes the central queue a plain FIFO. */
	astro_sched_central_init(sched_ctx_id, "eager", 0, 0);
}

static int eager_push_task(struct starpu_task *task)
{
	int ret = astro_sched_central_push_task(task);

	if (ret == 0)
		astro_sched_counters_count_push(&eager_counters);
	return ret;
}

static struct starpu_task *eager_pop_task(unsigned sched_ctx_id)
{
	struct starpu_task *task = astro_sched_central_pop_task(sched_ctx_id);

	if (task)
		astro_sched_counters_count_pop(&eager_counters, 0);
	return task;
}

static struct starpu_sched_policy eager_policy =
{
	.init_sched = eager_init_sched,
	.deinit_sched = astro_sched_central_deinit,
	.add_workers = astro_sched_central_add_workers,
	.remove_workers = astro_sched_central_remove_workers,
	.push_task = eager_push_task,
	.pop_task = eager_pop_task,
	.policy_name = "eager",
	.policy_description = "greedy policy: one central FIFO queue shared by all workers",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	astro_sched_counters_register(&eager_counters, "sched_eager", "eager", 0);
	return astro_sched_policy_register(&eager_policy);
}

ASTRO_PLUGIN_DEFINE(sched_eager, ASTRO_PLUGIN_SCHED, "eager: one central FIFO queue", init, NULL);
