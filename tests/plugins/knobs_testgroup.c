/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A plugin that declares knob groups from its init, as any plugin would:
 *
 *   test.knobs.g_count_tasks_knob    global, int32 on/off (default on): counts
 *                                    the tasks that start, through the
 *                                    observation path; off unsubscribes
 *   test.knobs.g_tasks_counted       global, int64, read-only: the count
 *   test.knobs.s_eager_weight_knob   per_scheduler, double in [0.5, 2],
 *                                    exists for the policy "eager" only
 */
#include <astrolabe/plugin.h>
#include <astrolabe/observe.h>
#include <astrolabe/knobs.h>
#include <errno.h>

#define MODULE "knobs_testgroup"

static int64_t tasks_counted;
static int subscription = -1;
static int counting;
static double eager_weight;

static void on_task_started(const struct astro_event *event, void *arg)
{
	(void)event;
	(void)arg;
	__atomic_add_fetch(&tasks_counted, 1, __ATOMIC_RELAXED);
}

static int switch_get(const struct astro_knob_context *ctx, union astro_knob_value *value, void *arg)
{
	value->int32_val = __atomic_load_n(&counting, __ATOMIC_RELAXED);
	return 0;
}

static int switch_set(const struct astro_knob_context *ctx, const union astro_knob_value *value, void *arg)
{
	int ret = astro_observe_set_mask(subscription, value->int32_val ? ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED) : 0);
	if (ret != 0) {
		astro_log_error(ctx->knob_name, "cannot change the observation mask (%d)", ret);
		return ret;
	}
	__atomic_store_n(&counting, value->int32_val, __ATOMIC_RELAXED);
	return 0;
}

static int count_get(const struct astro_knob_context *ctx, union astro_knob_value *value, void *arg)
{
	value->int64_val = __atomic_load_n(&tasks_counted, __ATOMIC_RELAXED);
	return 0;
}

static int weight_get(const struct astro_knob_context *ctx, union astro_knob_value *value, void *arg)
{
	value->double_val = eager_weight;
	return 0;
}

static int weight_set(const struct astro_knob_context *ctx, const union astro_knob_value *value, void *arg)
{
	eager_weight = value->double_val;
	return 0;
}

static int init(void)
{
	static const char *const eager_only[] = { "eager", NULL };
	tasks_counted = 0;
	counting = 1;
	eager_weight = 1.0;
	subscription = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED), on_task_started, NULL);
	if (subscription < 0)
		return subscription;

	int g_switch = astro_knob_group_declare(&(struct astro_knob_group_decl){
		.module = MODULE, .scope = starpu_perf_knob_scope_global, .get = switch_get, .set = switch_set });
	int g_count = astro_knob_group_declare(&(struct astro_knob_group_decl){
		.module = MODULE, .scope = starpu_perf_knob_scope_global, .get = count_get });
	int g_weight = astro_knob_group_declare(&(struct astro_knob_group_decl){
		.module = MODULE, .scope = starpu_perf_knob_scope_per_scheduler, .get = weight_get, .set = weight_set,
		.policies = eager_only });
	if (g_switch < 0 || g_count < 0 || g_weight < 0)
		return -EINVAL;
	if (astro_knob_declare(g_switch, &(struct astro_knob_decl){
		    .name = "test.knobs.g_count_tasks_knob", .type = starpu_perf_knob_type_int32,
		    .help = "count the tasks that start, in caf\xe9s (Latin-1, not UTF-8: JSON shows U+FFFD)", .has_default = 1, .default_value.int32_val = 1,
		    .check = ASTRO_KNOB_CHECK_ONOFF }) < 0)
		return -EINVAL;
	if (astro_knob_declare(g_count, &(struct astro_knob_decl){
		    .name = "test.knobs.g_tasks_counted", .type = starpu_perf_knob_type_int64,
		    .help = "tasks counted since starpu_init()", .has_default = 1, .default_value.int64_val = 0 }) < 0)
		return -EINVAL;
	if (astro_knob_declare(g_weight, &(struct astro_knob_decl){
		    .name = "test.knobs.s_eager_weight_knob", .type = starpu_perf_knob_type_double,
		    .help = "a weight that only eager has", .has_default = 1, .default_value.double_val = 1.0,
		    .check = ASTRO_KNOB_CHECK_RANGE, .min.double_val = 0.5, .max.double_val = 2.0 }) < 0)
		return -EINVAL;
	return 0;
}

ASTRO_PLUGIN_DEFINE(knobs_testgroup, ASTRO_PLUGIN_OTHER, "test plugin: knob groups with a real effect", init, NULL);
