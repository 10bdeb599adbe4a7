/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A good out-of-tree scheduler: policy "testfifo", one central FIFO queue.
 * It counts the tasks pushed to it and prints "testfifo: N tasks" on stderr
 * when the policy is torn down, so a test can see it was really used.
 */
#include <astrolabe/plugin.h>
#include <stdio.h>
#include "central_fifo.h"

static void fifo_deinit(unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	fprintf(stderr, "testfifo: %lu tasks\n", npushed);
}

static struct starpu_sched_policy testfifo_policy = {
	.init_sched = fifo_init,
	.deinit_sched = fifo_deinit,
	.push_task = fifo_push,
	.pop_task = fifo_pop,
	.policy_name = "testfifo",
	.policy_description = "test policy: one central FIFO that counts its tasks",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	return astro_sched_policy_register(&testfifo_policy);
}

ASTRO_PLUGIN_DEFINE(sched_testfifo, ASTRO_PLUGIN_SCHED, "test policy: a central FIFO", init, NULL);
