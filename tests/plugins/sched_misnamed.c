/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A plugin whose file says sched_misnamed but whose descriptor says
 * sched_other (a renamed file, or a copied ASTRO_PLUGIN_DEFINE): the loader
 * must refuse it and name both. ASTRO_PLUGIN_DEFINE cannot produce the
 * mismatch, so the descriptor is written by hand.
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

static struct starpu_sched_policy misnamed_policy = {
	.push_task = push_nothing,
	.pop_task = pop_nothing,
	.policy_name = "misnamed",
	.policy_description = "must never be registered",
};

static int init(void)
{
	return astro_sched_policy_register(&misnamed_policy);
}

const struct astro_plugin astrolabe_plugin_sched_misnamed __attribute__((visibility("default"))) = {
	ASTRO_PLUGIN_ABI_VERSION, "sched_other", ASTRO_PLUGIN_SCHED, "descriptor name differs from the file name",
	init, NULL, { 0 }
};
