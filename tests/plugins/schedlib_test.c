/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Not a plugin: a plain library for STARPU_SCHED_LIB, exporting the two
 * StarPU entry points starpu_get_sched_lib_policy() and
 * starpu_get_sched_lib_policies(). Its one policy, "libfifo", is a central
 * FIFO queue.
 */
#include <starpu.h>
#include <string.h>
#include "central_fifo.h"

static struct starpu_sched_policy libfifo_policy = {
	.init_sched = fifo_init,
	.push_task = fifo_push,
	.pop_task = fifo_pop,
	.policy_name = "libfifo",
	.policy_description = "STARPU_SCHED_LIB test policy: a central FIFO",
	.worker_type = STARPU_WORKER_LIST,
};

static struct starpu_sched_policy *policies[] = { &libfifo_policy, NULL };

__attribute__((visibility("default"))) struct starpu_sched_policy *starpu_get_sched_lib_policy(const char *name)
{
	return name && strcmp(name, libfifo_policy.policy_name) == 0 ? &libfifo_policy : NULL;
}

__attribute__((visibility("default"))) struct starpu_sched_policy **starpu_get_sched_lib_policies(void)
{
	return policies;
}
