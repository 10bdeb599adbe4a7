/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A STARPU_SCHED_LIB library with two bad policies: "libnopop" has no
 * pop_task (refused like a plugin's policy, sched_nopop.c) and "libcrash"
 * crashes in init_sched (the signal handler must name the policy).
 */
#include <starpu.h>
#include <string.h>
#include <signal.h>

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

static void crash_init(unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	/* What a bad memory access does; a real one would be stopped first by UBSan in sanitizer builds. */
	raise(SIGSEGV);
}

static struct starpu_sched_policy libnopop_policy = {
	.push_task = push_nothing,
	.policy_name = "libnopop",
	.policy_description = "must be refused: no pop_task",
};

static struct starpu_sched_policy libcrash_policy = {
	.init_sched = crash_init,
	.push_task = push_nothing,
	.pop_task = pop_nothing,
	.policy_name = "libcrash",
	.policy_description = "crashes in init_sched",
};

static struct starpu_sched_policy *policies[] = { &libnopop_policy, &libcrash_policy, NULL };

__attribute__((visibility("default"))) struct starpu_sched_policy *starpu_get_sched_lib_policy(const char *name)
{
	for (struct starpu_sched_policy **p = policies; *p; p++)
		if (name && strcmp(name, (*p)->policy_name) == 0)
			return *p;
	return NULL;
}

__attribute__((visibility("default"))) struct starpu_sched_policy **starpu_get_sched_lib_policies(void)
{
	return policies;
}
