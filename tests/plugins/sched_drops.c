/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A broken policy: "drops" forgets the tasks pushed to it (pop never sees
 * them), so an application using it hangs; the watchdog must say so. To let
 * a test end its run, starpu_do_schedule() (called by
 * starpu_task_wait_for_all()) hands the forgotten tasks to its central FIFO.
 */
#include <astrolabe/plugin.h>
#include "central_fifo.h"

static struct starpu_task_list forgotten;

static void drops_init(unsigned sched_ctx_id)
{
	fifo_init(sched_ctx_id);
	pthread_mutex_lock(&queue_lock);
	starpu_task_list_init(&forgotten);
	pthread_mutex_unlock(&queue_lock);
}

static int drops_push(struct starpu_task *task)
{
	pthread_mutex_lock(&queue_lock);
	starpu_task_list_push_back(&forgotten, task);
	pthread_mutex_unlock(&queue_lock);
	return 0;
}

static void drops_do_schedule(unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	pthread_mutex_lock(&queue_lock);
	struct starpu_task_list found = forgotten;
	starpu_task_list_init(&forgotten);
	pthread_mutex_unlock(&queue_lock);
	while (!starpu_task_list_empty(&found))
		fifo_push(starpu_task_list_pop_front(&found));
}

static struct starpu_sched_policy drops_policy = {
	.init_sched = drops_init,
	.push_task = drops_push,
	.pop_task = fifo_pop,
	.do_schedule = drops_do_schedule,
	.policy_name = "drops",
	.policy_description = "test policy: forgets its tasks until starpu_do_schedule()",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	return astro_sched_policy_register(&drops_policy);
}

ASTRO_PLUGIN_DEFINE(sched_drops, ASTRO_PLUGIN_SCHED, "test policy: loses tasks", init, NULL);
