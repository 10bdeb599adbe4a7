/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Drives dmdar's and dmdas's "first ready" pop (plugins/policies/dm/ready.h) with
 * crafted tasks, for test_dm: with one memory node no data is ever missing.
 */
#include "../plugins/policies/dm/ready.h"
#include "dm_ready_probe.h"

static const size_t *probe_missing;

static size_t probe_missing_bytes(struct starpu_task *task, unsigned node)
{
	(void)node;
	return probe_missing[(uintptr_t)task->cl_arg];
}

int astro_test_dm_ready_order(const size_t *missing, const int *priorities, int n, int *order)
{
	struct astro_sched_queue q;
	struct starpu_task *tasks = calloc((size_t)n, sizeof(*tasks));

	if (!tasks || astro_sched_queue_init(&q, 0, 9) != 0)
	{
		free(tasks);
		return -ENOMEM;
	}
	probe_missing = missing;
	for (int i = 0; i < n; i++)
	{
		tasks[i].priority = priorities[i];
		tasks[i].cl_arg = (void *)(uintptr_t)i;
		astro_sched_queue_push(&q, &tasks[i]);
	}
	for (int i = 0; i < n; i++)
		order[i] = (int)(uintptr_t)dm_queue_take_ready(&q, 0, probe_missing_bytes)->cl_arg;
	astro_sched_queue_fini(&q);
	free(tasks);
	return 0;
}
