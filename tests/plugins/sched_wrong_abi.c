/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A scheduler plugin built for a plugin ABI this runtime does not speak: the
 * loader must refuse it before calling init, say "ABI", the version and the
 * file, and carry on without it. Built twice: sched_wrong_abi (999, a future
 * ABI) and sched_old_abi (ASTRO_PLUGIN_ABI_VERSION - 1, an older one; the ABI
 * version is bumped on any incompatible change, so older is refused too).
 */
#include <astrolabe/plugin.h>

#ifndef WRONG_ABI_VERSION
#define WRONG_ABI_VERSION 999
#define WRONG_ABI_IDENT sched_wrong_abi
#define WRONG_ABI_POLICY "wrong_abi"
#endif

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define DESCRIPTOR_(ident) astrolabe_plugin_##ident
#define DESCRIPTOR(ident) DESCRIPTOR_(ident)

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
	.policy_name = WRONG_ABI_POLICY,
	.policy_description = "must never be registered",
};

static int init(void)
{
	return astro_sched_policy_register(&wrong_abi_policy);
}

/* Written by hand: ASTRO_PLUGIN_DEFINE always stamps the current ABI. */
const struct astro_plugin DESCRIPTOR(WRONG_ABI_IDENT) __attribute__((visibility("default"))) = {
	WRONG_ABI_VERSION, STRINGIFY(WRONG_ABI_IDENT), ASTRO_PLUGIN_SCHED, "a plugin from another ABI", init, NULL, { 0 }
};
