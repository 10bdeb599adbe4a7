/*
 * A scheduler plugin built for a plugin ABI this runtime does not speak
 * (abi_version 999): the loader must refuse it before calling init, say
 * "ABI" and name the file, and carry on without it.
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

static struct starpu_sched_policy wrong_abi_policy = {
	.push_task = push_nothing,
	.pop_task = pop_nothing,
	.policy_name = "wrong_abi",
	.policy_description = "must never be registered",
};

static int init(void)
{
	return astro_sched_policy_register(&wrong_abi_policy);
}

/* Written by hand: ASTRO_PLUGIN_DEFINE always stamps the current ABI. */
const struct astro_plugin astrolabe_plugin_sched_wrong_abi __attribute__((visibility("default"))) = {
	999, "sched_wrong_abi", ASTRO_PLUGIN_SCHED, "a plugin from a future ABI", init, NULL, { 0 }
};
