// SPDX-License-Identifier: LGPL-2.1-or-later
// STARPU_PROF_PAPI_EVENTS: PAPI events counted per task into its profiling
// info, exact with a software-defined event the task itself counts; one line
// when PAPI cannot count an event (no hardware counter here).
#include "helpers.h"

#include <papi.h>
#include <sde_lib.h>
#include <starpu_profiling.h>

using namespace astro_test;

namespace {

long long ops; // the test's own SDE counter, counted by the tasks

void count_func(void **, void *arg)
{
	__atomic_fetch_add(&ops, (long long)(intptr_t)arg, __ATOMIC_RELAXED);
}

class PapiTask : public ::testing::Test
{
protected:
	void SetUp() override
	{
		ASSERT_FALSE(build_plugin_path().empty()) << "STARPU_PLUGIN_PATH is not set: run through make check";
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	ScopedEnv profiling_{"STARPU_PROFILING", "1"};
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
};

TEST_F(PapiTask, ValuesOfEachTaskInItsProfilingInfo)
{
	static papi_handle_t handle = papi_sde_init("ASTROTEST");
	static int registered = papi_sde_register_counter(handle, "ops", PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long, &ops);
	ASSERT_EQ(registered, SDE_OK);
	ScopedEnv events("STARPU_PROF_PAPI_EVENTS", "sde:::ASTROTEST::ops");
	starpu_conf conf = conf_with_ncpus(2);
	std::string err = stderr_of([&] { ASSERT_EQ(starpu_init(&conf), 0); });
	static starpu_codelet cl = cpu_codelet(count_func, 0, "counted");
	std::vector<starpu_task *> tasks;
	for (int i = 1; i <= 6; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = (void *)(intptr_t)(i * 10);
		t->detach = 0;
		t->destroy = 0;
		// One after the other: both workers' event sets count the same process-wide
		// counter, so tasks running at once would count each other's increments.
		if (!tasks.empty())
			starpu_task_declare_deps_array(t, 1, &tasks.back());
		ASSERT_EQ(starpu_task_submit(t), 0);
		tasks.push_back(t);
	}
	for (size_t i = 0; i < tasks.size(); i++) {
		ASSERT_EQ(starpu_task_wait(tasks[i]), 0);
		starpu_profiling_task_info *info = tasks[i]->profiling_info;
		ASSERT_NE(info, nullptr);
		EXPECT_NE(info->papi_event_set, PAPI_NULL) << err;
		EXPECT_EQ(info->papi_values[0], (long long)(i + 1) * 10) << "task " << i << err;
		starpu_task_destroy(tasks[i]);
	}
	EXPECT_EQ(err, "");
}

TEST_F(PapiTask, WhatPapiCannotCountIsSaidOnce)
{
	ScopedEnv events("STARPU_PROF_PAPI_EVENTS", "astro_no_such_event PAPI_TOT_INS");
	starpu_conf conf = conf_with_ncpus(2);
	ASSERT_EQ(starpu_init(&conf), 0);
	static starpu_codelet cl = cpu_codelet(count_func, 0, "uncounted");
	std::string err = stderr_of([&] {
		for (int i = 0; i < 8; i++)
			ASSERT_EQ(submit_detached(&cl, (void *)(intptr_t)1), 0);
		starpu_task_wait_for_all();
	});
	EXPECT_TRUE(contains(err, "PAPI cannot count astro_no_such_event here")) << err;
	EXPECT_EQ(err.find("STARPU_PROF_PAPI_EVENTS", err.find("STARPU_PROF_PAPI_EVENTS") + 1), std::string::npos) << err;
}

TEST_F(PapiTask, OffWithoutTheVariable)
{
	ScopedEnv events("STARPU_PROF_PAPI_EVENTS", nullptr);
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	static starpu_codelet cl = cpu_codelet(count_func, 0, "plain");
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->detach = 0;
	t->destroy = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait(t), 0);
	ASSERT_NE(t->profiling_info, nullptr);
	EXPECT_EQ(t->profiling_info->papi_values[0], 0);
	starpu_task_destroy(t);
}

// A run with STARPU_PROF_PAPI_EVENTS naming one 10,000-character event, then
// a real one: says "run went on" when it neither crashed nor failed.
void long_event_name_run()
{
	std::string name(10000, 'A');
	ScopedEnv events("STARPU_PROF_PAPI_EVENTS", name + ",PAPI_TOT_INS");
	ScopedEnv profiling("STARPU_PROFILING", "1");
	starpu_conf conf = conf_with_ncpus(1);
	if (starpu_init(&conf) != 0)
		exit(2);
	starpu_codelet cl = cpu_codelet(count_func, 0, "long");
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->detach = 0;
	t->destroy = 0;
	if (starpu_task_submit(t) != 0 || starpu_task_wait(t) != 0)
		exit(3);
	// The list is refused as a whole: the task counts nothing.
	if (!t->profiling_info || t->profiling_info->papi_values[0] != 0)
		exit(4);
	starpu_task_destroy(t);
	starpu_shutdown();
	fprintf(stderr, "run went on\n");
	exit(0);
}

// An event name longer than PAPI's buffers (PAPI_MAX_STR_LEN) aborted the
// process inside libpapi ("buffer overflow detected") without a word: now the
// list is refused with one message that names the limit, and the run goes on
// without counters.
TEST(PapiTaskDeathTest, TooLongAnEventNameIsSaidNotACrash)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	ASSERT_FALSE(build_plugin_path().empty()) << "STARPU_PLUGIN_PATH is not set: run through make check";
	EXPECT_EXIT(long_event_name_run(), testing::ExitedWithCode(0),
		    "^\\[astrolabe\\] error: STARPU_PROF_PAPI_EVENTS='A{32}\\.\\.\\.' \\(10013 characters\\) "
		    "is refused: its name 'A{32}\\.\\.\\.' \\(10000 characters\\) is too long \\(at most 127 characters a name\\): "
		    "ignored, as if it were unset\nrun went on\n$");
}

} // namespace
