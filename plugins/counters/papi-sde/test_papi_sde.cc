// SPDX-License-Identifier: LGPL-2.1-or-later
// counters_papi_sde seen from a PAPI client: the runtime's counters read as
// sde:::STARPU::<counter> events, exact after a known number of tasks.
#include "helpers.h"

#include <astrolabe/counters.h>
#include <papi.h>

using namespace astro_test;

namespace {

void nop_func(void **, void *) {}

class PapiSde : public ::testing::Test
{
protected:
	void SetUp() override
	{
		ASSERT_FALSE(build_plugin_path().empty()) << "STARPU_PLUGIN_PATH is not set: run through make check";
		starpu_conf conf = conf_with_ncpus(2);
		conf.start_perf_counter_collection = 1;
		ASSERT_EQ(starpu_init(&conf), 0);
		if (!PAPI_is_initialized())
			ASSERT_EQ(PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
};

TEST_F(PapiSde, CountersReadThroughPapi)
{
	int set = PAPI_NULL;
	ASSERT_EQ(PAPI_create_eventset(&set), PAPI_OK);
	const char *names[] = {
		"sde:::STARPU::starpu.task.g_total_submitted",
		"sde:::STARPU::starpu.task.w_total_executed",
		"sde:::STARPU::starpu.task.w_total_executed.worker0",
		"sde:::STARPU::starpu.task.w_total_executed.worker1",
		"sde:::STARPU::starpu.task.w_cumul_execution_time",
		"sde:::STARPU::starpu.sched.lws.g_total_pushed",
		"sde:::STARPU::starpu.task.c_total_executed",
	};
	for (const char *name : names)
		ASSERT_EQ(PAPI_add_named_event(set, name), PAPI_OK) << name;

	static starpu_codelet cl = cpu_codelet(nop_func, 0, "papi");
	static starpu_codelet watched = cpu_codelet(nop_func, 0, "papi-watched");
	starpu_perf_counter_set *cset = starpu_perf_counter_set_alloc(starpu_perf_counter_scope_per_codelet);
	starpu_perf_counter_listener *listener = starpu_perf_counter_listener_init(
		cset, [](starpu_perf_counter_listener *, starpu_perf_counter_sample *, void *) {}, nullptr);
	starpu_perf_counter_set_per_codelet_listener(&watched, listener);

	// Before PAPI_start: not counted (delta events).
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);

	ASSERT_EQ(PAPI_start(set), PAPI_OK);
	for (int i = 0; i < 40; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(submit_detached(&watched), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	long long values[7];
	ASSERT_EQ(PAPI_stop(set, values), PAPI_OK);

	EXPECT_EQ(values[0], 48);
	EXPECT_EQ(values[1], 48);
	EXPECT_EQ(values[2] + values[3], 48);
	double time_us;
	memcpy(&time_us, &values[4], sizeof(time_us));
	EXPECT_GT(time_us, 0.0);
	EXPECT_EQ(values[5], 48);
	EXPECT_EQ(values[6], 8);

	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	starpu_perf_counter_unset_per_codelet_listener(&watched);
	starpu_perf_counter_listener_exit(listener);
	starpu_perf_counter_set_free(cset);
}

TEST_F(PapiSde, EveryCounterIsAnEvent)
{
	for (starpu_perf_counter_scope scope :
	     { starpu_perf_counter_scope_global, starpu_perf_counter_scope_per_worker, starpu_perf_counter_scope_per_codelet })
		for (int i = 0; i < starpu_perf_counter_nb(scope); i++) {
			std::string name = std::string("sde:::STARPU::") + starpu_perf_counter_id_to_name(starpu_perf_counter_nth_to_id(scope, i));
			int code;
			EXPECT_EQ(PAPI_event_name_to_code(name.c_str(), &code), PAPI_OK) << name;
		}
}

// Each event carries its counter's help string (under ASan too, where the
// plugin describes events with leak detection off: see papi_sde.c).
TEST_F(PapiSde, EveryEventIsDescribedByItsCounterHelp)
{
	for (starpu_perf_counter_scope scope :
	     { starpu_perf_counter_scope_global, starpu_perf_counter_scope_per_worker, starpu_perf_counter_scope_per_codelet })
		for (int i = 0; i < starpu_perf_counter_nb(scope); i++) {
			int id = starpu_perf_counter_nth_to_id(scope, i);
			std::string name = std::string("sde:::STARPU::") + starpu_perf_counter_id_to_name(id);
			int code;
			ASSERT_EQ(PAPI_event_name_to_code(name.c_str(), &code), PAPI_OK) << name;
			PAPI_event_info_t info;
			ASSERT_EQ(PAPI_get_event_info(code, &info), PAPI_OK) << name;
			EXPECT_STREQ(info.long_descr, starpu_perf_counter_get_help_string(id)) << name;
		}
}

// Issue 39: a program that never asks for collection still counts once a PAPI tool reads the events: the first read
// (PAPI_start) starts it. Before that read, nothing is counted.
TEST(PapiSdeCollection, StartsWhenAPapiReaderAttaches)
{
	ASSERT_FALSE(build_plugin_path().empty()) << "STARPU_PLUGIN_PATH is not set: run through make check";
	ScopedEnv ncpu("STARPU_NCPU", nullptr);
	ScopedEnv sched("STARPU_SCHED", nullptr);
	starpu_conf conf = conf_with_ncpus(2);
	conf.start_perf_counter_collection = 0;
	ASSERT_EQ(starpu_init(&conf), 0);
	if (!PAPI_is_initialized())
		ASSERT_EQ(PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "papi-collect");
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_FALSE(astro_counter_collecting()) << "nothing asked for collection yet";

	int set = PAPI_NULL;
	ASSERT_EQ(PAPI_create_eventset(&set), PAPI_OK);
	ASSERT_EQ(PAPI_add_named_event(set, "sde:::STARPU::starpu.task.g_total_submitted"), PAPI_OK);
	ASSERT_EQ(PAPI_add_named_event(set, "sde:::STARPU::starpu.task.w_total_executed"), PAPI_OK);
	ASSERT_EQ(PAPI_start(set), PAPI_OK);
	EXPECT_TRUE(astro_counter_collecting()) << "the reader's first read starts collection";
	for (int i = 0; i < 11; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	long long values[2];
	ASSERT_EQ(PAPI_stop(set, values), PAPI_OK);
	EXPECT_EQ(values[0], 11);
	EXPECT_EQ(values[1], 11);
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	starpu_shutdown();

	// A new run starts without collection until its own first read.
	ASSERT_EQ(starpu_init(&conf), 0);
	EXPECT_FALSE(astro_counter_collecting());
	ASSERT_EQ(PAPI_create_eventset(&set), PAPI_OK);
	ASSERT_EQ(PAPI_add_named_event(set, "sde:::STARPU::starpu.task.g_total_submitted"), PAPI_OK);
	ASSERT_EQ(PAPI_start(set), PAPI_OK);
	EXPECT_TRUE(astro_counter_collecting());
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(PAPI_stop(set, values), PAPI_OK);
	EXPECT_EQ(values[0], 4);
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	starpu_shutdown();
}

} // namespace
