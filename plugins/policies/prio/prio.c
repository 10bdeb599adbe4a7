/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * prio: one central queue ordered by task priority, higher first and FIFO
 * among equal priorities. Buckets per priority level of the context's range
 * (out-of-range priorities are clamped) keep push and pop O(1) amortised.
 */
#include <astrolabe/sched.h>

static void prio_init_sched(unsigned sched_ctx_id)
{
	astro_sched_central_init(sched_ctx_id, "prio", starpu_sched_ctx_get_min_priority(sched_ctx_id), starpu_sched_ctx_get_max_priority(sched_ctx_id));
}

static struct starpu_sched_policy prio_policy =
{
	.init_sched = prio_init_sched,
	.deinit_sched = astro_sched_central_deinit,
	.add_workers = astro_sched_central_add_workers,
	.remove_workers = astro_sched_central_remove_workers,
	.push_task = astro_sched_central_push_task,
	.pop_task = astro_sched_central_pop_task,
	.policy_name = "prio",
	.policy_description = "greedy policy with priorities: one central queue, highest priority first",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	return astro_sched_policy_register(&prio_policy);
}

ASTRO_PLUGIN_DEFINE(sched_prio, ASTRO_PLUGIN_SCHED, "prio: one central queue ordered by priority", init, NULL);
