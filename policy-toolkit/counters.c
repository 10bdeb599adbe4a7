/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy toolkit (astrolabe/sched.h): a policy's push, pop and steal
 * counts as performance counters of its plugin.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/sched.h>

static void astro_sched_counters_update_global(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	struct astro_sched_counters *c = arg;
	int64_t pushed = 0;

	(void)context;
	for (unsigned i = 0; i < starpu_worker_get_count() && i < STARPU_NMAXWORKERS; i++)
		pushed += astro_counter_load_int64(&c->slots[i].pushed);
	pushed += astro_counter_load_int64(&c->slots[STARPU_NMAXWORKERS].pushed);
	astro_counter_sample_set_int64(sample, c->id_pushed, pushed);
}

static void astro_sched_counters_update_worker(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	struct astro_sched_counters *c = arg;
	int workerid = astro_counter_context_worker(context);

	if (workerid < 0 || workerid >= STARPU_NMAXWORKERS)
		return;
	astro_counter_sample_set_int64(sample, c->id_popped, astro_counter_load_int64(&c->slots[workerid].popped));
	if (c->id_stolen >= 0)
		astro_counter_sample_set_int64(sample, c->id_stolen, astro_counter_load_int64(&c->slots[workerid].stolen));
}

static int astro_sched_counters_register_one(const char *module, enum starpu_perf_counter_scope scope, const char *policy_name,
					      const char *what, const char *help)
{
	char name[160], full_help[256];

	snprintf(name, sizeof(name), "starpu.sched.%s.%s", policy_name, what);
	snprintf(full_help, sizeof(full_help), "%s (policy %s)", help, policy_name);
	return astro_counter_register(module, scope, name, starpu_perf_counter_type_int64, ASTRO_COUNTER_MONOTONIC, "tasks", full_help);
}

/**
 * Registers c's counters for the plugin module (e.g. "sched_lws") and the
 * policy policy_name, from the plugin's init; with_steals adds
 * w_total_stolen. Counts start from zero. Returns 0 or a negative errno (the
 * error is printed; the policy works without its counters).
 */
int astro_sched_counters_register(struct astro_sched_counters *c, const char *module, const char *policy_name, int with_steals)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->id_stolen = -1;
	c->id_pushed = astro_sched_counters_register_one(module, starpu_perf_counter_scope_global, policy_name, "g_total_pushed",
						   "tasks pushed to the scheduling policy");
	c->id_popped = astro_sched_counters_register_one(module, starpu_perf_counter_scope_per_worker, policy_name, "w_total_popped",
						   "tasks this worker got from the scheduling policy");
	if (with_steals)
		c->id_stolen = astro_sched_counters_register_one(module, starpu_perf_counter_scope_per_worker, policy_name, "w_total_stolen",
							   "tasks this worker took from another worker's queue");
	if (c->id_pushed < 0 || c->id_popped < 0 || (with_steals && c->id_stolen < 0))
		return -EINVAL;
	ret = astro_counter_register_updater(module, starpu_perf_counter_scope_global, astro_sched_counters_update_global, c);
	if (ret == 0)
		ret = astro_counter_register_updater(module, starpu_perf_counter_scope_per_worker, astro_sched_counters_update_worker, c);
	return ret;
}
