/*
 * eager: one central FIFO queue shared by all workers. A worker takes the
 * oldest task it can run; a task bound to a worker waits in that worker's
 * own queue. The simplest policy, and a good one when tasks are uniform.
 */
#include "../sched_util.h"

static void eager_init_sched(unsigned sched_ctx_id)
{
	/* A single priority level makes the central queue a plain FIFO. */
	sched_central_init(sched_ctx_id, "eager", 0, 0);
}

static struct starpu_sched_policy eager_policy =
{
	.init_sched = eager_init_sched,
	.deinit_sched = sched_central_deinit,
	.add_workers = sched_central_add_workers,
	.remove_workers = sched_central_remove_workers,
	.push_task = sched_central_push_task,
	.pop_task = sched_central_pop_task,
	.policy_name = "eager",
	.policy_description = "greedy policy: one central FIFO queue shared by all workers",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	return astro_sched_policy_register(&eager_policy);
}

ASTRO_PLUGIN_DEFINE(sched_eager, ASTRO_PLUGIN_SCHED, "eager: one central FIFO queue", init, NULL);
