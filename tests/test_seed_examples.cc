// SPDX-License-Identifier: LGPL-2.1-or-later
// The example programs the seeds point to, run from the build tree as a user
// runs them: examples/mlr/mlr (a multiple-regression model fitted), examples/pi
// (size_base: the work of a task in the model's size), examples/common/blas_model
// (an application-given STARPU_COMMON cost, used by common/gemm_common),
// examples/filters/fblock (memory statistics of a partitioned block) and
// tests/datawizard/locality (per-architecture cost functions).
#include "helpers.h"

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace astro_test;

namespace {

class SeedExamples : public testing::Test
{
protected:
	void SetUp() override
	{
		if (env_or("ASTRO_TEST_EXAMPLES_DIR", "").empty() || env_or("ASTRO_TEST_TOOLS_DIR", "").empty())
			GTEST_SKIP() << "ASTRO_TEST_EXAMPLES_DIR or ASTRO_TEST_TOOLS_DIR is not set: run through make check";
	}
	// Runs program (a path) with args and env, its models under home_: exit status, stdout and stderr in *out.
	int run(const std::string &program, const std::string &args, std::string *out, const std::string &env = "")
	{
		return run_command("cd " + quote(home_.path()) + " && STARPU_HOME=" + quote(home_.path()) + " STARPU_HOSTNAME=seedhost " + env +
					   " " + quote(program) + " " + args + " 2>&1",
				   out);
	}
	int example(const std::string &name, const std::string &args, std::string *out, const std::string &env = "")
	{
		return run(env_or("ASTRO_TEST_EXAMPLES_DIR", "") + "/" + name, args, out, env);
	}
	int tool(const std::string &name, const std::string &args, std::string *out)
	{
		return run(env_or("ASTRO_TEST_TOOLS_DIR", "") + "/" + name, args, out);
	}
	TempDir home_;
};

// The number after prefix in out (NaN when prefix is not there).
double number_after(const std::string &out, const std::string &prefix)
{
	size_t at = out.find(prefix);
	return at == std::string::npos ? NAN : strtod(out.c_str() + at + prefix.size(), nullptr);
}

// examples/pi: 80000 darts in 8 tasks; the estimate is near pi (a fixed random sequence per task:
// the same figure every run), and the model keeps the 10000 darts of a task as its size (size_base).
TEST_F(SeedExamples, PiPutsTheDartsOfATaskInTheModelsSize)
{
	std::string out;
	int status = example("pi/pi", "-ntasks 8 -nshot 80000", &out, "STARPU_CALIBRATE=1");
	if (status == 77)
		GTEST_SKIP() << "no worker: " << out;
	ASSERT_EQ(status, 0) << out;
	double pi = number_after(out, "Pi approximation : ");
	EXPECT_NEAR(pi, M_PI, 0.05) << out;
	EXPECT_TRUE(contains(out, "/ 80000)")) << out;
	ASSERT_EQ(tool("starpu_perfmodel_display", "-s monte_carlo_pi", &out), 0) << out;
	EXPECT_TRUE(contains(out, "\t10000          \t")) << "one entry of 10000 darts:\n" << out;
	EXPECT_EQ(example("pi/pi", "-ntasks 0", &out), 2) << out;
	EXPECT_TRUE(contains(out, "-ntasks takes a positive integer")) << out;
	EXPECT_EQ(example("pi/pi", "-ntasks 10 -nshot 5", &out), 2) << out;
	EXPECT_TRUE(contains(out, "fewer darts than -ntasks")) << out;
}

// examples/mlr: calibrating, the fitted model predicts sizes it never ran; the samples of both models
// (with and without combinations) are in .starpu/sampling/codelets/tmp/, the coefficients in the model file.
TEST_F(SeedExamples, MlrFitsTheModelAndKeepsTheSamples)
{
	std::string out;
	int status = example("mlr/mlr", "-ntasks 40", &out, "STARPU_CALIBRATE=1");
	if (status == 77)
		GTEST_SKIP() << "no worker: " << out;
	ASSERT_EQ(status, 0) << out;
#ifdef ASTRO_TEST_MLR_MODEL
	EXPECT_TRUE(std::isfinite(number_after(out, "expected length for M=64 N=64 K=64: "))) << out;
	EXPECT_TRUE(std::isfinite(number_after(out, "expected length for M=100 N=10 K=50: "))) << out;
	std::string file = read_file(home_.file(".starpu/sampling/codelets/45/mlr_example.seedhost"));
	EXPECT_TRUE(contains(file, "# n\tintercept\tM*N*K\t\tM*N\t\t\n")) << file;
#else
	EXPECT_TRUE(contains(out, "not fitted")) << out;
#endif
	for (const char *symbol : { "mlr_example", "mlr_example_samples" }) {
		std::string samples = read_file(home_.file(std::string(".starpu/sampling/codelets/tmp/") + symbol + ".out"));
		EXPECT_EQ(samples.compare(0, 18, "Duration, M, N, K\n"), 0) << symbol << ":\n" << samples;
		// A header and a sample per recorded execution of the 40 (one run here recorded 39: not every execution need be).
		long lines = std::count(samples.begin(), samples.end(), '\n');
		EXPECT_GE(lines, 40) << symbol << ":\n" << samples;
		EXPECT_LE(lines, 41) << symbol << ":\n" << samples;
	}
	EXPECT_EQ(example("mlr/mlr", "-ntasks x", &out), 2) << out;
	EXPECT_TRUE(contains(out, "bad option '-ntasks'")) << out;
}

// examples/common/blas_model.[ch]: the application's GEMM cost (STARPU_COMMON) is what the runtime
// predicts, over the architecture's relative speedup; dmda schedules by it; the product is right.
TEST_F(SeedExamples, GemmCommonModelPredictsTheApplicationsCost)
{
	std::string out;
	int status = example("common/gemm_common", "-m 64 -n 32 -k 48 -nblocks 2", &out, "STARPU_SCHED=dmda");
	if (status == 77)
		GTEST_SKIP() << "no worker: " << out;
	ASSERT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "result correct")) << out;
	double expected = number_after(out, "task 0: 32 x 32 x 48, expected ");
	double cost = number_after(out, "(gemm_cost ");
	double speedup = number_after(out, "/ relative speedup ");
	EXPECT_DOUBLE_EQ(cost, 2.0 * 32 * 32 * 48 / 1000) << out;
	EXPECT_NEAR(expected, cost / speedup, 1e-3) << out;
	EXPECT_EQ(example("common/gemm_common", "-m 10 -nblocks 3", &out), 2) << out;
	EXPECT_TRUE(contains(out, "-m 10 is not a multiple of -nblocks 3")) << out;
}

// examples/filters/fblock: with STARPU_MEMORY_STATS=1, starpu_data_display_memory_stats() before
// unpartitioning lists the sub-blocks (the seed's output); every element is scaled.
TEST_F(SeedExamples, FblockShowsMemoryStatsOfThePartitionedBlock)
{
	std::string out;
	int status = example("filters/fblock", "", &out, "STARPU_MEMORY_STATS=1");
	if (status == 77)
		GTEST_SKIP() << "no worker: " << out;
	ASSERT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "2 sub-blocks")) << out;
	EXPECT_TRUE(contains(out, "Memory stats :")) << out;
	// Two sub-blocks of 3 and 2 planes of 4 x 3 ints... of 5 x 4 x 3 split along x: 3 x 4 x 3 and 2 x 4 x 3 ints.
	EXPECT_TRUE(contains(out, "Size : 144\n")) << out;
	EXPECT_TRUE(contains(out, "Size : 96\n")) << out;
	EXPECT_TRUE(contains(out, "every element scaled by 2")) << out;
}

// tests/datawizard/locality: the arch_cost_function and the CPU architecture's own cost function
// give the predictions; the tasks run under dmda.
TEST_F(SeedExamples, LocalityPredictionsAreTheCostFunctions)
{
	std::string out, program = env_or("ASTRO_TEST_PLUGIN_DIR", "") + "/../datawizard/locality";
	ASSERT_TRUE(file_exists(program)) << program;
	int status = run(program, "", &out, "STARPU_SCHED=dmda");
	if (status == 77)
		GTEST_SKIP() << "no CPU worker: " << out;
	ASSERT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "arch_cost 4096: expected 4.000 us\n")) << out;
	EXPECT_TRUE(contains(out, "per_arch_cost 4096: expected 13.000 us\n")) << out;
	EXPECT_TRUE(contains(out, "arch_cost 32768: expected 32.000 us\n")) << out;
	EXPECT_TRUE(contains(out, "per_arch_cost 32768: expected 69.000 us\n")) << out;
	EXPECT_TRUE(contains(out, "24 tasks run")) << out;
}

} // namespace
