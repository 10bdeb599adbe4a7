/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A plugin exporting counters in every scope and of every type, for
 * test_counters: what an out-of-tree counter module looks like.
 *
 *   test.counters.g_submitted      int32   tasks submitted (its own observer)
 *   test.counters.g_answer         float   always 42.5
 *   test.counters.w_ended          int32   tasks ended on this worker
 *   test.counters.c_name_length    double  length of the codelet's name
 *   test.counters.g_failed_checks  int64   registrations that did not fail as they should
 *   test.counters.g_updates        int64   times the global updater ran (this one included)
 *
 * At init it also makes the registrations that must fail (duplicate name,
 * bad type, second updater for a scope) and counts the surprises.
 */
#include <astrolabe/counters.h>
#include <astrolabe/observe.h>
#include <astrolabe/plugin.h>
#include <errno.h>
#include <string.h>

#define MODULE "counters_test"

static int id_submitted, id_answer, id_ended, id_name_length, id_failed_checks, id_updates;
static int32_t submitted;
static int32_t ended[STARPU_NMAXWORKERS];
static int64_t failed_checks;
static int64_t updates;

static void on_event(const struct astro_event *ev, void *arg)
{
	(void)arg;
	if (!astro_counter_collecting())
		return;
	if (ev->moment == ASTRO_MOMENT_TASK_SUBMITTED)
		astro_counter_add_int32(&submitted, 1);
	else if (ev->moment == ASTRO_MOMENT_TASK_ENDED && ev->workerid >= 0 && ev->workerid < STARPU_NMAXWORKERS)
		astro_counter_add_int32(&ended[ev->workerid], 1);
}

static void update_global(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	(void)context;
	(void)arg;
	astro_counter_sample_set_int32(sample, id_submitted, astro_counter_load_int32(&submitted));
	astro_counter_sample_set_float(sample, id_answer, 42.5f);
	astro_counter_sample_set_int64(sample, id_failed_checks, failed_checks);
	astro_counter_sample_set_int64(sample, id_updates, astro_counter_add_fetch_int64(&updates, 1));
}

static void update_worker(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	(void)arg;
	int workerid = astro_counter_context_worker(context);
	if (workerid >= 0 && workerid < STARPU_NMAXWORKERS)
		astro_counter_sample_set_int32(sample, id_ended, astro_counter_load_int32(&ended[workerid]));
}

static void update_codelet(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	(void)arg;
	const struct starpu_codelet *cl = context;
	if (astro_counter_sample_wants(sample, id_name_length))
		astro_counter_sample_set_double(sample, id_name_length, cl && cl->name ? (double)strlen(cl->name) : 0.0);
}

static void expect(int ret, int wanted)
{
	if (ret != wanted)
		failed_checks++;
}

static int init(void)
{
	const enum starpu_perf_counter_scope g = starpu_perf_counter_scope_global;
	submitted = 0;
	memset(ended, 0, sizeof(ended));
	failed_checks = 0;
	updates = 0;

	id_submitted = astro_counter_register(MODULE, g, "test.counters.g_submitted", starpu_perf_counter_type_int32,
					      ASTRO_COUNTER_MONOTONIC, "tasks", "tasks submitted, counted by the test plugin");
	id_answer = astro_counter_register(MODULE, g, "test.counters.g_answer", starpu_perf_counter_type_float,
					   ASTRO_COUNTER_INSTANT, NULL, "a constant: 42.5");
	id_failed_checks = astro_counter_register(MODULE, g, "test.counters.g_failed_checks", starpu_perf_counter_type_int64,
						  ASTRO_COUNTER_INSTANT, "checks", "registrations that did not fail as they should");
	id_updates = astro_counter_register(MODULE, g, "test.counters.g_updates", starpu_perf_counter_type_int64,
					    ASTRO_COUNTER_MONOTONIC, "calls", "times the global updater ran");
	id_ended = astro_counter_register(MODULE, starpu_perf_counter_scope_per_worker, "test.counters.w_ended",
					  starpu_perf_counter_type_int32, ASTRO_COUNTER_MONOTONIC, "tasks", "tasks ended on this worker");
	id_name_length = astro_counter_register(MODULE, starpu_perf_counter_scope_per_codelet, "test.counters.c_name_length",
						starpu_perf_counter_type_double, ASTRO_COUNTER_INSTANT, "characters",
						"length of the codelet's name");
	if (id_submitted < 0 || id_answer < 0 || id_failed_checks < 0 || id_updates < 0 || id_ended < 0 || id_name_length < 0)
		return -EINVAL;

	/* What must be refused. */
	expect(astro_counter_register(MODULE, g, "test.counters.g_submitted", starpu_perf_counter_type_int32,
				      ASTRO_COUNTER_MONOTONIC, "tasks", "duplicate"), -EEXIST);
	expect(astro_counter_register(MODULE, g, "test.counters.g_bad_type", (enum starpu_perf_counter_type)9,
				      ASTRO_COUNTER_MONOTONIC, "tasks", "bad type"), -EINVAL);
	expect(astro_counter_register(MODULE, (enum starpu_perf_counter_scope)5, "test.counters.x_bad_scope",
				      starpu_perf_counter_type_int32, ASTRO_COUNTER_MONOTONIC, "tasks", "bad scope"), -EINVAL);
	expect(astro_counter_register(MODULE, g, "test counters with spaces", starpu_perf_counter_type_int32,
				      ASTRO_COUNTER_MONOTONIC, "tasks", "bad name"), -EINVAL);

	expect(astro_counter_register_updater(MODULE, g, update_global, NULL), 0);
	expect(astro_counter_register_updater(MODULE, g, update_global, NULL), -EEXIST);
	expect(astro_counter_register_updater(MODULE, starpu_perf_counter_scope_per_worker, update_worker, NULL), 0);
	expect(astro_counter_register_updater(MODULE, starpu_perf_counter_scope_per_codelet, update_codelet, NULL), 0);

	int sub = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_SUBMITTED) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED),
					  on_event, NULL);
	return sub < 0 ? sub : 0;
}

ASTRO_PLUGIN_DEFINE(counters_test, ASTRO_PLUGIN_COUNTERS, "counters in every scope and type, for test_counters", init, NULL);
