// SPDX-License-Identifier: LGPL-2.1-or-later
// A small stress run for every policy (tests/stress.h): four threads submit
// 50000 tasks in all to two workers with every kind of monitoring on
// (STARPU_PROFILING=1, a listener on every counter of every scope, a tool
// counting every event), and every count must come out exact. The large run
// (1M tasks) is the benchmark bench/stress.
#include "helpers.h"
#include "stress.h"

using namespace astro_test;

namespace {

class Stress : public ::testing::TestWithParam<const char *>
{
protected:
	void SetUp() override
	{
		ASSERT_FALSE(test_plugin_dir().empty()) << "ASTRO_TEST_PLUGIN_DIR is not set: run through make check";
		ASSERT_TRUE(file_exists(test_plugin("proftool_count.so"))) << test_plugin("proftool_count.so");
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
	ScopedEnv profiling_{"STARPU_PROFILING", nullptr};
	ScopedEnv tool_{"STARPU_PROF_TOOL", nullptr};
	ScopedEnv silent_{"STARPU_SILENT", nullptr};
};

TEST_P(Stress, EveryCountIsExactWithAllMonitoringOn)
{
	std::string tool = test_plugin("proftool_count.so");
	for (int nworkers : { 2, 1 }) {
		SCOPED_TRACE(std::to_string(nworkers) + " workers");
		stress_config config = { GetParam(), nworkers, 4, nworkers == 2 ? 50000 : 10000, tool.c_str() };
		stress_result result;
		std::string err = stderr_of([&] { stress_run(&config, &result); });
		EXPECT_EQ(result.nerrors, 0) << result.errors << err;
		EXPECT_EQ(err, "");
		EXPECT_FALSE(starpu_is_initialized());
	}
}

INSTANTIATE_TEST_SUITE_P(Policies, Stress, ::testing::Values("eager", "prio", "random", "ws", "lws", "dmda", "dmdas"),
			 [](const testing::TestParamInfo<const char *> &info) { return std::string(info.param); });

} // namespace
