/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A scheduler plugin whose policy has no pop_task: the registration must be
 * refused with one line naming the policy, the plugin, its file and the
 * missing hook, as for a STARPU_SCHED_LIB policy (schedlib_bad.c); selecting
 * it falls back to the default policy instead of crashing at the first task.
 */
#include <astrolabe/plugin.h>

static int push_nothing(struct starpu_task *task)
{
	(void)task;
	return -ENODEV;
}

static struct starpu_sched_policy nopop_policy = {
	.push_task = push_nothing,
	.policy_name = "nopop",
	.policy_description = "must never be registered: no pop_task",
};

static int init(void)
{
	return astro_sched_policy_register(&nopop_policy);
}

ASTRO_PLUGIN_DEFINE(sched_nopop, ASTRO_PLUGIN_SCHED, "a policy without pop_task", init, NULL);
