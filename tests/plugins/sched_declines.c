/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A plugin with nothing to offer on this machine: init returns
 * ASTRO_PLUGIN_DECLINE without registering its policy. That is not an
 * error: nothing is printed (unless STARPU_PLUGIN_VERBOSE=1) and the
 * policy "declines" does not exist.
 */
#include <astrolabe/plugin.h>

static int push_nothing(struct starpu_task *task)
{
	(void)task;
	return -ENODEV;
}

static struct starpu_task *pop_nothing(unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	return NULL;
}

/* What it would register on a machine that has what it needs. */
static struct starpu_sched_policy declines_policy __attribute__((unused)) = {
	.push_task = push_nothing,
	.pop_task = pop_nothing,
	.policy_name = "declines",
	.policy_description = "never registered: the plugin declines",
};

static int init(void)
{
	/* A real plugin would probe for its hardware here, find none, and step aside. */
	return ASTRO_PLUGIN_DECLINE;
}

ASTRO_PLUGIN_DEFINE(sched_declines, ASTRO_PLUGIN_SCHED, "declines to load", init, NULL);
