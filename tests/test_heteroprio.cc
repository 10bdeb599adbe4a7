// SPDX-License-Identifier: LGPL-2.1-or-later
// The heteroprio policy (plugins/policies/heteroprio) and its set-up API
// (starpu_heteroprio.h): the policy's callback sets each architecture's
// buckets, the order it looks at them and the slow factors; every call
// checks its arguments and the moment it is made; the policy then runs tasks
// in each architecture's order, and a slower architecture leaves a bucket's
// tasks to the fastest one. The OpenCL cases use PoCL's CPU device.
#include <gtest/gtest.h>
#include <starpu.h>
#include <starpu_heteroprio.h>
#include <schedulers/starpu_heteroprio.h>
#include <astrolabe/heteroprio.h>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <unistd.h>
#include "opencl_helpers.h"

using namespace astro_test;

namespace {

// What the test's callback does, set before starpu_init; what starpu_init printed.
std::function<void(unsigned)> g_setup;
std::string g_setup_err;
unsigned g_callback_ctx = 12345;

void setup_callback(unsigned ctx)
{
	g_callback_ctx = ctx;
	if (g_setup)
		g_setup(ctx);
}

class Heteroprio : public ::testing::Test
{
protected:
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
		g_setup = nullptr;
		g_setup_err.clear();
	}

	// Starts heteroprio with ncpus CPU workers (and nopencl OpenCL ones) and
	// the callback running setup (none if null); the stderr of starpu_init in err.
	int start(int ncpus, std::function<void(unsigned)> setup, std::string *err = nullptr, int nopencl = 0)
	{
		g_setup = std::move(setup);
		starpu_conf conf = conf_with_ncpus(ncpus);
		conf.nopencl = nopencl;
		conf.sched_policy_name = "heteroprio";
		conf.sched_policy_callback = g_setup ? setup_callback : nullptr;
		int ret = -1;
		g_setup_err = stderr_of([&] { ret = starpu_init(&conf); });
		if (err)
			*err = g_setup_err;
		if (ret == 0 && policy_name() != "heteroprio") {
			starpu_shutdown();
			return -ENOENT;
		}
		return ret;
	}

	astro_heteroprio_setup running(unsigned ctx = 0)
	{
		astro_heteroprio_setup setup;
		EXPECT_EQ(astro_heteroprio_setup_get(ctx, &setup), 0);
		return setup;
	}

	ScopedEnv sched_{"STARPU_SCHED", nullptr};
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
	ScopedEnv auto_{"STARPU_HETEROPRIO_USE_AUTO_CALIBRATION", nullptr};
	ScopedEnv la_{"STARPU_HETEROPRIO_USE_LA", nullptr};
};

#define START_OR_SKIP(...) \
	do { \
		int ret_ = start(__VA_ARGS__); \
		if (ret_ == -ENOENT) \
			GTEST_SKIP() << "the heteroprio policy is not built here"; \
		ASSERT_EQ(ret_, 0); \
	} while (0)

// ------------------------------------------------------------- set-up API

TEST_F(Heteroprio, WithoutCallbackEveryArchitectureLooksAtEveryBucketFromZero)
{
	starpu_conf conf = conf_with_ncpus(1);
	conf.sched_policy_name = "heteroprio";
	ASSERT_EQ(starpu_init(&conf), 0);
	if (policy_name() != "heteroprio")
		GTEST_SKIP() << "the heteroprio policy is not built here";
	astro_heteroprio_setup s = running();
	EXPECT_EQ(s.nb_prios[STARPU_CPU_WORKER], (unsigned)STARPU_HETEROPRIO_MAX_PRIO);
	for (unsigned i = 0; i < STARPU_HETEROPRIO_MAX_PRIO; i++) {
		EXPECT_EQ(s.mapping[STARPU_CPU_WORKER][i], i);
		EXPECT_EQ(s.buckets[i].faster_arch, ASTRO_HETEROPRIO_NO_FASTER_ARCH);
	}
	// Task priorities are bucket numbers: the context's range covers them.
	EXPECT_LE(starpu_sched_get_min_priority(), 0);
	EXPECT_GE(starpu_sched_get_max_priority(), STARPU_HETEROPRIO_MAX_PRIO - 1);
}

TEST_F(Heteroprio, TheCallbackGetsItsContextAndSetsTheBuckets)
{
	START_OR_SKIP(1, [](unsigned ctx) {
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 3);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 7);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 1, 2);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 2, 40);
		starpu_heteroprio_set_faster_arch(ctx, STARPU_OPENCL_WORKER, 7);
		starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_WORKER, 7, 2.5f);
		starpu_heteroprio_set_use_locality(ctx, 0);
	});
	EXPECT_EQ(g_callback_ctx, 0u);
	EXPECT_EQ(g_setup_err, "");
	EXPECT_EQ((void *)starpu_sched_ctx_get_sched_policy_callback(0), (void *)setup_callback);
	astro_heteroprio_setup s = running();
	EXPECT_EQ(s.nb_prios[STARPU_CPU_WORKER], 3u);
	EXPECT_EQ(s.mapping[STARPU_CPU_WORKER][0], 7u);
	EXPECT_EQ(s.mapping[STARPU_CPU_WORKER][1], 2u);
	EXPECT_EQ(s.mapping[STARPU_CPU_WORKER][2], 40u);
	EXPECT_EQ(s.buckets[7].archs, 1u << STARPU_CPU_WORKER);
	EXPECT_EQ(s.buckets[0].archs, 0u);
	EXPECT_EQ(s.buckets[7].faster_arch, (int)STARPU_OPENCL_WORKER);
	EXPECT_EQ(s.buckets[7].slow_factor[STARPU_CPU_WORKER], 2.5f);
	EXPECT_EQ(s.buckets[2].faster_arch, ASTRO_HETEROPRIO_NO_FASTER_ARCH);
}

TEST_F(Heteroprio, RemappingAPositionFreesTheBucketItNamedBefore)
{
	START_OR_SKIP(1, [](unsigned ctx) {
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 1);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 5);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 6);
	});
	astro_heteroprio_setup s = running();
	EXPECT_EQ(s.mapping[STARPU_CPU_WORKER][0], 6u);
	EXPECT_EQ(s.buckets[5].archs, 0u);
	EXPECT_EQ(s.buckets[6].archs, 1u << STARPU_CPU_WORKER);
}

TEST_F(Heteroprio, SetFasterArchMakesItsSlowFactorZero)
{
	START_OR_SKIP(1, [](unsigned ctx) {
		starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_OPENCL_WORKER, 3, 4.0f);
		starpu_heteroprio_set_faster_arch(ctx, STARPU_OPENCL_WORKER, 3);
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 1);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 3);
	});
	astro_heteroprio_setup s = running();
	EXPECT_EQ(s.buckets[3].faster_arch, (int)STARPU_OPENCL_WORKER);
	EXPECT_EQ(s.buckets[3].slow_factor[STARPU_OPENCL_WORKER], 0.0f);
}

// Each bad argument: one error naming it, and the set-up keeps what it had.
TEST_F(Heteroprio, BadArgumentsAreRefusedOneByOne)
{
	START_OR_SKIP(1, [](unsigned ctx) {
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 2);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 1);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 1, 0);
		starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_WORKER, 1, 2.0f);
		// Now the bad ones.
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, STARPU_HETEROPRIO_MAX_PRIO + 1);
		starpu_heteroprio_set_nb_prios(ctx, (enum starpu_worker_archtype)42, 1);
		starpu_heteroprio_set_nb_prios(ctx, STARPU_ANY_WORKER, 1);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, STARPU_HETEROPRIO_MAX_PRIO);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, STARPU_HETEROPRIO_MAX_PRIO, 3);
		starpu_heteroprio_set_mapping(ctx, STARPU_UNKNOWN_WORKER, 0, 3);
		starpu_heteroprio_set_faster_arch(ctx, STARPU_CPU_WORKER, 1000);
		starpu_heteroprio_set_faster_arch(ctx, (enum starpu_worker_archtype)STARPU_NARCH, 1);
		starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_WORKER, 1, -1.0f);
		starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_WORKER, 1, NAN);
		starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_WORKER, 1, INFINITY);
		starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_WORKER, STARPU_HETEROPRIO_MAX_PRIO, 1.0f);
		starpu_heteroprio_set_use_locality(ctx, 2);
		// Another context than the one starting.
		starpu_heteroprio_set_nb_prios(ctx + 5, STARPU_CPU_WORKER, 1);
		starpu_heteroprio_set_nb_prios(STARPU_NMAX_SCHED_CTXS + 3, STARPU_CPU_WORKER, 1);
	});
	std::vector<std::string> errors = lines_of(g_setup_err);
	EXPECT_EQ(errors.size(), 15u) << g_setup_err;
	for (const char *what : { "101 buckets asked", "42 is no worker architecture", "255 is no worker architecture",
				  "bucket 100 does not exist", "position 100 is beyond", "4294967295 is no worker architecture",
				  "bucket 1000 does not exist", "8 is no worker architecture", "slow factor -1", "slow factor nan",
				  "slow factor inf", "neither 0 nor 1", "context 5 is not starting a heteroprio policy" })
		EXPECT_TRUE(contains(g_setup_err, what)) << what << " in\n" << g_setup_err;
	astro_heteroprio_setup s = running();
	EXPECT_EQ(s.nb_prios[STARPU_CPU_WORKER], 2u);
	EXPECT_EQ(s.mapping[STARPU_CPU_WORKER][0], 1u);
	EXPECT_EQ(s.mapping[STARPU_CPU_WORKER][1], 0u);
	EXPECT_EQ(s.buckets[1].slow_factor[STARPU_CPU_WORKER], 2.0f);
	EXPECT_EQ(s.buckets[1].faster_arch, ASTRO_HETEROPRIO_NO_FASTER_ARCH);
	EXPECT_EQ(s.buckets[3].archs, 0u);
}

TEST_F(Heteroprio, CallsOutsideTheCallbackAreRefused)
{
	// No heteroprio at all.
	ASSERT_EQ(init_with_ncpus(1), 0);
	std::string err = stderr_of([] { starpu_heteroprio_set_nb_prios(0, STARPU_CPU_WORKER, 1); });
	EXPECT_TRUE(contains(err, "context 0 is not starting a heteroprio policy")) << err;
	EXPECT_TRUE(contains(err, "STARPU_SCHED=heteroprio")) << err;
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	starpu_shutdown();

	// heteroprio running: its buckets are fixed.
	START_OR_SKIP(1, nullptr);
	err = stderr_of([] {
		starpu_heteroprio_set_nb_prios(0, STARPU_CPU_WORKER, 1);
		starpu_heteroprio_set_mapping(0, STARPU_CPU_WORKER, 0, 4);
		starpu_heteroprio_set_faster_arch(0, STARPU_CPU_WORKER, 4);
		starpu_heteroprio_set_arch_slow_factor(0, STARPU_CPU_WORKER, 4, 1.0f);
		starpu_heteroprio_set_use_locality(0, 0);
	});
	EXPECT_EQ(lines_of(err).size(), 5u) << err;
	EXPECT_TRUE(contains(err, "context 0 already runs its heteroprio policy")) << err;
	EXPECT_TRUE(contains(err, "sched_policy_callback")) << err;
	EXPECT_EQ(running().nb_prios[STARPU_CPU_WORKER], (unsigned)STARPU_HETEROPRIO_MAX_PRIO);
}

TEST_F(Heteroprio, InconsistentBucketsFallBackToTheDefaultWithAnError)
{
	struct Case
	{
		std::function<void(unsigned)> setup;
		const char *why;
	};
	std::vector<Case> cases = {
		{ [](unsigned ctx) {
			 starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 3);
			 starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 0);
			 starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 1, 1);
		 },
		  "bucket number 2 was never given" },
		{ [](unsigned ctx) {
			 starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 1);
			 starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 0);
			 starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 1, 1);
		 },
		  "beyond the 1 buckets they look at" },
		{ [](unsigned ctx) {
			 starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 2);
			 starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 9);
			 starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 1, 9);
		 },
		  "bucket 9 twice" },
	};
	for (Case &c : cases) {
		SCOPED_TRACE(c.why);
		std::string err;
		START_OR_SKIP(1, c.setup, &err);
		EXPECT_TRUE(contains(err, c.why)) << err;
		EXPECT_TRUE(contains(err, "uses its default")) << err;
		astro_heteroprio_setup s = running();
		EXPECT_EQ(s.nb_prios[STARPU_CPU_WORKER], (unsigned)STARPU_HETEROPRIO_MAX_PRIO);
		EXPECT_EQ(s.mapping[STARPU_CPU_WORKER][9], 9u);
		starpu_shutdown();
	}
}

// ------------------------------------------------------------- behaviour

std::mutex g_order_lock;
std::vector<int> g_order;

void record_priority(void **, void *)
{
	std::lock_guard<std::mutex> lock(g_order_lock);
	g_order.push_back(starpu_task_get_current()->priority);
}

// Submits tasks of the given priorities while worker 0 (the only one) is held, then lets it run them.
std::vector<int> run_order(const std::vector<int> &prios, unsigned ctx = 0)
{
	static starpu_codelet cl = cpu_codelet(record_priority, 0, "order");
	g_order.clear();
	{
		Gate gate(1);
		EXPECT_TRUE(gate.close());
		for (int prio : prios) {
			starpu_task *t = starpu_task_create();
			t->cl = &cl;
			t->priority = prio;
			t->sched_ctx = ctx;
			EXPECT_EQ(starpu_task_submit(t), 0);
		}
	}
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	std::lock_guard<std::mutex> lock(g_order_lock);
	return g_order;
}

TEST_F(Heteroprio, ByDefaultBucketZeroRunsFirst)
{
	START_OR_SKIP(1, nullptr);
	std::vector<int> prios = { 5, 0, 9, 3, 3, 1, 99, 0, 7 };
	std::vector<int> expected = prios;
	std::sort(expected.begin(), expected.end());
	EXPECT_EQ(run_order(prios), expected);
}

TEST_F(Heteroprio, AWorkerRunsItsBucketsInTheOrderOfItsMapping)
{
	START_OR_SKIP(1, [](unsigned ctx) {
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 3);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 2);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 1, 0);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 2, 1);
	});
	std::vector<int> prios;
	for (int i = 0; i < 30; i++)
		prios.push_back(i % 3);
	std::shuffle(prios.begin(), prios.end(), std::mt19937(7));
	std::vector<int> expected;
	for (int bucket : { 2, 0, 1 })
		for (int i = 0; i < 10; i++)
			expected.push_back(bucket);
	EXPECT_EQ(run_order(prios), expected);
}

// Out-of-range priorities go to the nearest bucket (0 or STARPU_HETEROPRIO_MAX_PRIO - 1).
TEST_F(Heteroprio, OutOfRangePrioritiesGoToTheEndBuckets)
{
	START_OR_SKIP(1, [](unsigned ctx) {
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 2);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, STARPU_HETEROPRIO_MAX_PRIO - 1);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 1, 0);
	});
	std::vector<int> order = run_order({ -7, 1000, 0, STARPU_HETEROPRIO_MAX_PRIO - 1 });
	EXPECT_EQ(order, (std::vector<int>{ 1000, STARPU_HETEROPRIO_MAX_PRIO - 1, -7, 0 }));
}

struct Count
{
	std::atomic<int> runs{0};
};

void count_run(void **, void *arg)
{
	static_cast<Count *>(arg)->runs++;
}

// A task whose bucket no worker looks at: one error for the bucket, and it runs anyway.
TEST_F(Heteroprio, ATaskInABucketNobodyLooksAtStillRunsWithAnError)
{
	START_OR_SKIP(2, [](unsigned ctx) {
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 1);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 0);
	});
	static starpu_codelet cl = cpu_codelet(count_run, 0, "lost_bucket");
	Count c;
	std::string err = stderr_of([&] {
		for (int i = 0; i < 5; i++)
			ASSERT_EQ(submit_detached(&cl, &c, 4), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	EXPECT_EQ(c.runs, 5);
	EXPECT_TRUE(contains(err, "task 'lost_bucket' has priority 4: bucket 4, which no worker of the context that can run it looks at")) << err;
	size_t reports = 0;
	for (const std::string &line : lines_of(err))
		reports += contains(line, "has priority 4");
	EXPECT_EQ(reports, 1u) << err;
}

// Two CPU workers, two tasks per worker at most taken at once: everything runs exactly once.
TEST_F(Heteroprio, ManyTasksOnTwoWorkersRunOnce)
{
	START_OR_SKIP(2, [](unsigned ctx) {
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 4);
		for (unsigned i = 0; i < 4; i++)
			starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, i, 3 - i);
	});
	static starpu_codelet cl = cpu_codelet(count_run, 0, "many");
	Count c;
	unsigned long before = cl.per_worker_stats[0] + cl.per_worker_stats[1];
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(submit_detached(&cl, &c, i % 4), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(c.runs, 1000);
	EXPECT_EQ(cl.per_worker_stats[0] + cl.per_worker_stats[1] - before, 1000ul);
}

// A context of its own, created with STARPU_SCHED_CTX_POLICY_NAME and STARPU_SCHED_CTX_POLICY_INIT.
TEST_F(Heteroprio, AContextGetsItsOwnBuckets)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	if (!policy_registered("heteroprio"))
		GTEST_SKIP() << "the heteroprio policy is not built here";
	g_setup = [](unsigned ctx) {
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 2);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 1);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 1, 0);
	};
	int workers[1] = { 1 };
	unsigned ctx = STARPU_NMAX_SCHED_CTXS;
	g_setup_err = stderr_of([&] {
		ctx = starpu_sched_ctx_create(workers, 1, "hp_ctx", STARPU_SCHED_CTX_POLICY_NAME, "heteroprio", STARPU_SCHED_CTX_POLICY_INIT,
					      setup_callback, 0);
	});
	ASSERT_LT(ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_EQ(g_callback_ctx, ctx);
	EXPECT_EQ(g_setup_err, "");
	astro_heteroprio_setup s = running(ctx);
	EXPECT_EQ(s.nb_prios[STARPU_CPU_WORKER], 2u);
	EXPECT_EQ(s.mapping[STARPU_CPU_WORKER][0], 1u);
	// The global context (lws) has no heteroprio set-up.
	astro_heteroprio_setup none;
	EXPECT_EQ(astro_heteroprio_setup_get(0, &none), -ENOENT);

	static starpu_codelet cl = cpu_codelet(record_priority, 0, "ctx_order");
	g_order.clear();
	{
		Gate gate(std::vector<int>{ 1 });
		ASSERT_TRUE(gate.close());
		for (int prio : { 0, 1, 0, 1 }) {
			starpu_task *t = starpu_task_create();
			t->cl = &cl;
			t->priority = prio;
			t->sched_ctx = ctx;
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
	}
	starpu_task_wait_for_all_in_ctx(ctx);
	{
		std::lock_guard<std::mutex> lock(g_order_lock);
		EXPECT_EQ(g_order, (std::vector<int>{ 1, 1, 0, 0 }));
	}
	starpu_sched_ctx_delete(ctx);
	EXPECT_EQ(astro_heteroprio_setup_get(ctx, &none), -ENOENT);
}


// --------------------------------------------------------- locality mode

// What starpu_heteroprio_print_wgroups() prints for ctx.
std::string wgroups_of(unsigned ctx)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	starpu_heteroprio_print_wgroups(f, ctx);
	fclose(f);
	std::string text(buf ? buf : "", len);
	free(buf);
	return text;
}

// The callback turns the mode on and maps the groups: no error; each worker
// is in the group of its memory node; tasks still run in the CPU's order.
TEST_F(Heteroprio, LocalityModeGroupsTheWorkersByMemoryNode)
{
	START_OR_SKIP(2, [](unsigned ctx) {
		starpu_heteroprio_set_use_locality(ctx, 1);
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 3);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 2);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 1, 0);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 2, 1);
		starpu_heteroprio_map_wgroup_memory_nodes(ctx);
	});
	EXPECT_EQ(g_setup_err, "");
	EXPECT_EQ(running().use_locality, 1);
	std::string groups = wgroups_of(0);
	EXPECT_TRUE(contains(groups, "[STARPU-LAHETEROPRIO] There are 1 groups")) << groups;
	EXPECT_TRUE(contains(groups, "Worker 0 => group 0")) << groups;
	EXPECT_TRUE(contains(groups, "Worker 1 => group 0")) << groups;
	EXPECT_TRUE(contains(groups, "Prio   0 (Bucket   2) => [ 0]")) << groups;
	EXPECT_TRUE(contains(groups, "Prio   2 (Bucket   1) => [ 2]")) << groups;
	starpu_shutdown();

	// The same from the variable, without a callback; one worker to see the order.
	ScopedEnv la("STARPU_HETEROPRIO_USE_LA", "1");
	START_OR_SKIP(1, nullptr);
	EXPECT_TRUE(contains(wgroups_of(0), "There are 1 groups"));
	std::vector<int> prios = { 5, 0, 9, 3, 3, 1, 99, 0, 7 };
	std::vector<int> expected = prios;
	std::sort(expected.begin(), expected.end());
	EXPECT_EQ(run_order(prios), expected);
}

TEST_F(Heteroprio, LocalityModeRefusesBadUseClearly)
{
	// Mapping groups with the mode off; printing them for a context without it.
	START_OR_SKIP(1, [](unsigned ctx) { starpu_heteroprio_map_wgroup_memory_nodes(ctx); });
	EXPECT_EQ(lines_of(g_setup_err).size(), 1u) << g_setup_err;
	EXPECT_TRUE(contains(g_setup_err, "starpu_heteroprio_set_use_locality(ctx, 1) first")) << g_setup_err;
	std::string err = stderr_of([] { EXPECT_EQ(wgroups_of(0), ""); });
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	EXPECT_TRUE(contains(err, "no heteroprio policy in the data locality mode")) << err;
	starpu_shutdown();

	// An unknown push strategy; the mode with the automatic one.
	TempDir dir;
	ScopedEnv la("STARPU_HETEROPRIO_USE_LA", "1");
	ScopedEnv push("STARPU_LAHETEROPRIO_PUSH", "NEAREST");
	START_OR_SKIP(1, nullptr, &err);
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	EXPECT_TRUE(contains(err, "STARPU_LAHETEROPRIO_PUSH=NEAREST")) << err;
	EXPECT_EQ(run_order({ 2, 1 }), (std::vector<int>{ 1, 2 }));
	starpu_shutdown();

	ScopedEnv automatic("STARPU_HETEROPRIO_USE_AUTO_CALIBRATION", "1");
	ScopedEnv file("STARPU_HETEROPRIO_DATA_FILE", dir.file("run.data").c_str());
	ScopedEnv no_push("STARPU_LAHETEROPRIO_PUSH", nullptr);
	START_OR_SKIP(1, nullptr, &err);
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	EXPECT_TRUE(contains(err, "cannot run together")) << err;
	EXPECT_EQ(run_order({ 2, 1 }).size(), 2u);
	// Before the data file's directory goes.
	starpu_shutdown();
}


// --------------------------------------------------------- automatic mode

// The codelets of the automatic mode's tests: "auto_a" by its performance
// model's symbol, "auto_b" by its name; each task records its codelet's name.
std::mutex g_ran_lock;
std::vector<std::string> g_ran;

void record_codelet(void **, void *)
{
	std::lock_guard<std::mutex> lock(g_ran_lock);
	g_ran.push_back(starpu_task_get_current()->cl->name);
}

void opencl_unused(void **, void *)
{
	ADD_FAILURE() << "no OpenCL worker runs in this test";
}

starpu_perfmodel g_model_a = [] {
	starpu_perfmodel m{};
	m.type = STARPU_HISTORY_BASED;
	m.symbol = "auto_a";
	return m;
}();
starpu_codelet g_auto_a = [] {
	starpu_codelet cl = cpu_codelet(record_codelet, 0, "auto_a_codelet");
	cl.model = &g_model_a;
	return cl;
}();
starpu_codelet g_auto_b = cpu_codelet(record_codelet, 0, "auto_b");

// The statistics a data file holds for codelet name: its line of ten values, then one line per architecture that runs it.
struct CodeletData
{
	std::vector<unsigned> can;
	std::vector<std::string> general;
	std::vector<std::vector<std::string>> per_arch;
};

std::vector<std::string> words(const std::string &line)
{
	std::istringstream in(line);
	std::vector<std::string> w;
	for (std::string x; in >> x;)
		w.push_back(x);
	return w;
}

// Parses a data file as StarPU lays it out: comment lines start with #.
bool parse_data_file(const std::string &text, std::vector<unsigned> *archs, std::map<std::string, CodeletData> *codelets)
{
	std::vector<std::string> lines;
	for (const std::string &l : lines_of(text))
		if (!l.empty() && l[0] != '#')
			lines.push_back(l);
	if (lines.size() < 2)
		return false;
	std::vector<std::string> head = words(lines[0]);
	if (head.empty() || std::stoul(head[0]) != head.size() - 1)
		return false;
	archs->clear();
	for (size_t i = 1; i < head.size(); i++)
		archs->push_back((unsigned)std::stoul(head[i]));
	if (words(lines[1]).size() != 2 * archs->size())
		return false;
	for (size_t i = 2; i < lines.size();) {
		std::vector<std::string> name = words(lines[i++]);
		if (name.size() != archs->size() + 1 || i >= lines.size())
			return false;
		CodeletData d;
		for (size_t k = 1; k < name.size(); k++)
			d.can.push_back((unsigned)std::stoul(name[k]));
		d.general = words(lines[i++]);
		if (d.general.size() != 10)
			return false;
		for (unsigned c : d.can) {
			if (!c)
				continue;
			if (i >= lines.size())
				return false;
			d.per_arch.push_back(words(lines[i++]));
			if (d.per_arch.back().size() != 4)
				return false;
		}
		(*codelets)[name[0]] = d;
	}
	return true;
}

class HeteroprioAuto : public Heteroprio
{
protected:
	void SetUp() override
	{
		g_ran.clear();
	}

	// Runs n tasks of each codelet, with priorities the automatic mode ignores.
	void run_tasks(int n)
	{
		for (int i = 0; i < n; i++) {
			ASSERT_EQ(submit_detached(&g_auto_a, nullptr, 500), 0);
			ASSERT_EQ(submit_detached(&g_auto_b, nullptr, -7), 0);
		}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}

	TempDir dir_;
	ScopedEnv on_{"STARPU_HETEROPRIO_USE_AUTO_CALIBRATION", "1"};
	ScopedEnv file_{"STARPU_HETEROPRIO_DATA_FILE", dir_.file("run.data").c_str()};
	ScopedEnv data_dir_{"STARPU_HETEROPRIO_DATA_DIR", nullptr};
	ScopedEnv freeze_{"STARPU_AUTOHETEROPRIO_FREEZE_GATHERING", nullptr};
	ScopedEnv ordering_{"STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY", nullptr};
	ScopedEnv grouping_{"STARPU_HETEROPRIO_CODELET_GROUPING_STRATEGY", nullptr};
};

// Without a callback, each codelet gets a bucket of its own that the CPU
// looks at; every task runs; the times measured are written to the data
// file, and the next run reads them back and adds its own.
TEST_F(HeteroprioAuto, EachCodeletGetsABucketAndTheDataFileIsWrittenAndReadBack)
{
	std::string err;
	START_OR_SKIP(2, nullptr, &err);
	EXPECT_EQ(err, "");
	run_tasks(20);
	EXPECT_EQ(g_ran.size(), 40u);
	starpu_shutdown();

	std::vector<unsigned> archs;
	std::map<std::string, CodeletData> codelets;
	std::string text = read_file(dir_.file("run.data"));
	ASSERT_TRUE(parse_data_file(text, &archs, &codelets)) << text;
	EXPECT_EQ(archs, std::vector<unsigned>{ (unsigned)STARPU_CPU_WORKER });
	ASSERT_EQ(codelets.size(), 2u) << text;
	// "auto_a" by its model's symbol, "auto_b" by its name.
	ASSERT_TRUE(codelets.count("auto_a")) << text;
	ASSERT_TRUE(codelets.count("auto_b")) << text;
	for (auto &c : codelets) {
		EXPECT_EQ(c.second.can, std::vector<unsigned>{ 1 });
		EXPECT_EQ(c.second.general[4], "20") << "tasks submitted, " << text;
		EXPECT_EQ(c.second.per_arch[0][2], "20") << "times measured on the CPU, " << text;
		EXPECT_GT(std::stod(c.second.per_arch[0][1]), 0.0) << text;
	}

	START_OR_SKIP(2, nullptr, &err);
	EXPECT_EQ(err, "");
	run_tasks(5);
	starpu_shutdown();
	codelets.clear();
	text = read_file(dir_.file("run.data"));
	ASSERT_TRUE(parse_data_file(text, &archs, &codelets)) << text;
	ASSERT_EQ(codelets.size(), 2u) << text;
	for (auto &c : codelets)
		EXPECT_EQ(c.second.per_arch[0][2], "25") << text;
}

// Without STARPU_HETEROPRIO_DATA_FILE the file is <STARPU_HETEROPRIO_DATA_DIR>/<program>.data.
TEST_F(HeteroprioAuto, TheDataFileIsNamedAfterTheProgramInTheDataDir)
{
	TempDir data;
	ScopedEnv no_file("STARPU_HETEROPRIO_DATA_FILE", nullptr);
	ScopedEnv in("STARPU_HETEROPRIO_DATA_DIR", (data.path() + "/sub").c_str());
	START_OR_SKIP(1, nullptr);
	run_tasks(3);
	starpu_shutdown();
	std::string file = data.path() + "/sub/" + program_invocation_short_name + ".data";
	std::vector<unsigned> archs;
	std::map<std::string, CodeletData> codelets;
	EXPECT_TRUE(parse_data_file(read_file(file), &archs, &codelets)) << file;
	EXPECT_EQ(codelets.size(), 2u);
	unlink(file.c_str());
	rmdir((data.path() + "/sub").c_str());
}

// A data file of an earlier run says auto_a's tasks take 1000 us on the CPU
// and 10 us on OpenCL, auto_b's the reverse. With gathering frozen, the CPU
// looks at auto_b's bucket first: all its tasks run before auto_a's.
const char g_hand_written[] =
	"# two architectures: CPU (0) and OpenCL (2)\n"
	"2 0 2\n"
	"# busy and free times\n"
	" 0.000000 0.000000 0.000000 0.000000\n"
	"auto_a 1 1\n"
	"0.000000 10 10 0.500000 10 10 0.000000 10 10.000000 10\n"
	"0.000000 1000.000000 100 0.500000\n"
	"0.000000 10.000000 100 0.500000\n"
	"#####\n"
	"auto_b 1 1\n"
	"0.000000 10 10 0.500000 10 10 0.000000 10 10.000000 10\n"
	"0.000000 10.000000 100 0.500000\n"
	"0.000000 1000.000000 100 0.500000\n"
	"#####\n";

starpu_codelet g_both_a = [] {
	starpu_codelet cl = g_auto_a;
	cl.opencl_funcs[0] = opencl_unused;
	return cl;
}();
starpu_codelet g_both_b = [] {
	starpu_codelet cl = g_auto_b;
	cl.opencl_funcs[0] = opencl_unused;
	return cl;
}();

TEST_F(HeteroprioAuto, MeasuredTimesOrderTheBucketsOfEachArchitecture)
{
	{
		std::ofstream out(dir_.file("run.data"));
		out << g_hand_written;
	}
	ScopedEnv frozen("STARPU_AUTOHETEROPRIO_FREEZE_GATHERING", "1");
	START_OR_SKIP(1, nullptr);
	{
		Gate gate(1);
		ASSERT_TRUE(gate.close());
		for (int i = 0; i < 10; i++) {
			ASSERT_EQ(submit_detached(&g_both_a), 0);
			ASSERT_EQ(submit_detached(&g_both_b), 0);
		}
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::vector<std::string> expected(10, "auto_b");
	expected.insert(expected.end(), 10, "auto_a_codelet");
	EXPECT_EQ(g_ran, expected);
	starpu_shutdown();
	// Frozen: the file is left as it was.
	EXPECT_EQ(read_file(dir_.file("run.data")), g_hand_written);
}

// A callback's buckets give way to the automatic mode, with a warning.
TEST_F(HeteroprioAuto, ACallbackIsOverriddenWithAWarning)
{
	std::string err;
	START_OR_SKIP(1, [](unsigned ctx) {
		starpu_heteroprio_set_nb_prios(ctx, STARPU_CPU_WORKER, 1);
		starpu_heteroprio_set_mapping(ctx, STARPU_CPU_WORKER, 0, 3);
	}, &err);
	EXPECT_TRUE(contains(err, "automatic mode")) << err;
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	run_tasks(4);
	EXPECT_EQ(g_ran.size(), 8u);
}

// A damaged data file: one error naming it; what was read before the damage
// is kept, every task runs, and the file is written anew at shutdown.
TEST_F(HeteroprioAuto, ADamagedDataFileIsReportedAndRewritten)
{
	std::string damaged = std::string(g_hand_written).substr(0, sizeof(g_hand_written) - 1 - 60) + "x y z\n";
	{
		std::ofstream out(dir_.file("run.data"));
		out << damaged;
	}
	std::string err;
	START_OR_SKIP(1, nullptr, &err);
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	EXPECT_TRUE(contains(err, dir_.file("run.data"))) << err;
	EXPECT_TRUE(contains(err, "damaged")) << err;
	run_tasks(3);
	EXPECT_EQ(g_ran.size(), 6u);
	starpu_shutdown();
	std::vector<unsigned> archs;
	std::map<std::string, CodeletData> codelets;
	std::string text = read_file(dir_.file("run.data"));
	EXPECT_TRUE(parse_data_file(text, &archs, &codelets)) << text;
	EXPECT_TRUE(codelets.count("auto_a")) << text;
	EXPECT_TRUE(codelets.count("auto_b")) << text;
}

// Values out of range: one error each, the default used, tasks run.
TEST_F(HeteroprioAuto, BadSettingsAreReportedAndTheDefaultsUsed)
{
	ScopedEnv ordering("STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY", "28");
	ScopedEnv grouping("STARPU_HETEROPRIO_CODELET_GROUPING_STRATEGY", "2");
	std::string err;
	START_OR_SKIP(1, nullptr, &err);
	EXPECT_EQ(lines_of(err).size(), 2u) << err;
	EXPECT_TRUE(contains(err, "STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY='28' is out of range 0..27: ignored, using 12")) << err;
	EXPECT_TRUE(contains(err, "STARPU_HETEROPRIO_CODELET_GROUPING_STRATEGY='2' is out of range 0..1: ignored, using 0")) << err;
	run_tasks(3);
	EXPECT_EQ(g_ran.size(), 6u);
}

// An unwritable data file: one error at shutdown naming it and the fix.
TEST_F(HeteroprioAuto, AnUnwritableDataFileIsReported)
{
	ScopedEnv file("STARPU_HETEROPRIO_DATA_FILE", (dir_.path() + "/no/such/dir/run.data").c_str());
	START_OR_SKIP(1, nullptr);
	run_tasks(2);
	std::string err = stderr_of([] { starpu_shutdown(); });
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	EXPECT_TRUE(contains(err, "no/such/dir/run.data")) << err;
	EXPECT_TRUE(contains(err, "STARPU_HETEROPRIO_DATA_FILE")) << err;
}

// Every ordering policy orders the buckets and runs every task.
TEST_F(HeteroprioAuto, EveryOrderingPolicyRunsEveryTask)
{
	for (int policy = 0; policy < STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY_COUNT; policy++) {
		ScopedEnv ordering("STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY", std::to_string(policy).c_str());
		ScopedEnv interval("STARPU_AUTOHETEROPRIO_ORDERING_INTERVAL", "1");
		g_ran.clear();
		std::string err;
		START_OR_SKIP(1, nullptr, &err);
		EXPECT_EQ(err, "") << policy;
		run_tasks(3);
		EXPECT_EQ(g_ran.size(), 6u) << policy;
		starpu_shutdown();
	}
}

// ------------------------------------------------ CPU and OpenCL workers

#ifdef STARPU_USE_OPENCL
struct Where
{
	std::atomic<int> cpu{0};
	std::atomic<int> opencl{0};
};

void on_cpu(void **, void *arg)
{
	static_cast<Where *>(arg)->cpu++;
}

void on_opencl(void **, void *arg)
{
	static_cast<Where *>(arg)->opencl++;
}

starpu_codelet both_codelet(const char *name)
{
	starpu_codelet cl = cpu_codelet(on_cpu, 0, name);
	cl.opencl_funcs[0] = on_opencl;
	return cl;
}

// Workers of kind arch look at bucket alone.
void look_only_at(unsigned ctx, enum starpu_worker_archtype arch, unsigned bucket)
{
	starpu_heteroprio_set_nb_prios(ctx, arch, 1);
	starpu_heteroprio_set_mapping(ctx, arch, 0, bucket);
}

class HeteroprioOpenCL : public Heteroprio
{
protected:
	// One CPU and one OpenCL worker, or skip.
	bool start_mixed(std::function<void(unsigned)> setup)
	{
		int ret = start(1, std::move(setup), nullptr, 1);
		if (ret == -ENOENT || (ret == 0 && starpu_opencl_worker_get_count() < 1)) {
			if (ret == 0)
				starpu_shutdown();
			return false;
		}
		EXPECT_EQ(ret, 0);
		return ret == 0;
	}
};

// The OpenCL worker is fastest for bucket 0 and the CPU 1000 times slower:
// with fewer than 1000 tasks per OpenCL worker waiting, the CPU takes none
// of them, but it still takes the tasks only it can run.
TEST_F(HeteroprioOpenCL, ASlowArchitectureLeavesTheBucketToTheFastestOne)
{
	if (!start_mixed([](unsigned ctx) {
		    look_only_at(ctx, STARPU_CPU_WORKER, 0);
		    look_only_at(ctx, STARPU_OPENCL_WORKER, 0);
		    starpu_heteroprio_set_faster_arch(ctx, STARPU_OPENCL_WORKER, 0);
		    starpu_heteroprio_set_arch_slow_factor(ctx, STARPU_CPU_WORKER, 0, 1000.0f);
	    }))
		GTEST_SKIP() << "no heteroprio or no OpenCL worker here";
	static starpu_codelet both = both_codelet("both");
	static starpu_codelet cpu_only = cpu_codelet(on_cpu, 0, "cpu_only");
	Where w, w_cpu;
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(submit_detached(&both, &w), 0);
		if (i % 10 == 0)
			ASSERT_EQ(submit_detached(&cpu_only, &w_cpu), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(w.opencl, 100);
	EXPECT_EQ(w.cpu, 0);
	EXPECT_EQ(w_cpu.cpu, 10);
}

// Each architecture looks at its own buckets: OpenCL only at bucket 1, the CPU only at bucket 0.
TEST_F(HeteroprioOpenCL, EachArchitectureTakesOnlyFromItsBuckets)
{
	if (!start_mixed([](unsigned ctx) {
		    look_only_at(ctx, STARPU_CPU_WORKER, 0);
		    look_only_at(ctx, STARPU_OPENCL_WORKER, 1);
	    }))
		GTEST_SKIP() << "no heteroprio or no OpenCL worker here";
	static starpu_codelet cl0 = both_codelet("bucket0");
	static starpu_codelet cl1 = both_codelet("bucket1");
	Where w0, w1;
	for (int i = 0; i < 50; i++) {
		ASSERT_EQ(submit_detached(&cl0, &w0, 0), 0);
		ASSERT_EQ(submit_detached(&cl1, &w1, 1), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(w0.cpu, 50);
	EXPECT_EQ(w0.opencl, 0);
	EXPECT_EQ(w1.opencl, 50);
	EXPECT_EQ(w1.cpu, 0);
}

// Automatic mode, with the hand-written data file of an earlier run: auto_a
// runs 100 times faster on OpenCL, auto_b 100 times faster on the CPU. With
// fewer than 100 tasks waiting per worker, each architecture leaves the
// other's codelet alone: every task runs where its codelet is fastest.
TEST_F(HeteroprioOpenCL, AutomaticModeRunsEachCodeletWhereItIsFastest)
{
	TempDir dir;
	{
		std::ofstream out(dir.file("run.data"));
		out << g_hand_written;
	}
	ScopedEnv on("STARPU_HETEROPRIO_USE_AUTO_CALIBRATION", "1");
	ScopedEnv file("STARPU_HETEROPRIO_DATA_FILE", dir.file("run.data").c_str());
	ScopedEnv frozen("STARPU_AUTOHETEROPRIO_FREEZE_GATHERING", "1");
	if (!start_mixed(nullptr))
		GTEST_SKIP() << "no heteroprio or no OpenCL worker here";
	static starpu_codelet a = [] {
		starpu_codelet cl = both_codelet("auto_a_codelet");
		cl.model = &g_model_a;
		return cl;
	}();
	static starpu_codelet b = both_codelet("auto_b");
	Where wa, wb;
	for (int i = 0; i < 40; i++) {
		ASSERT_EQ(submit_detached(&a, &wa), 0);
		ASSERT_EQ(submit_detached(&b, &wb), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(wa.opencl, 40);
	EXPECT_EQ(wa.cpu, 0);
	EXPECT_EQ(wb.cpu, 40);
	EXPECT_EQ(wb.opencl, 0);
}

// Locality mode on one CPU and one OpenCL worker (two memory nodes). x is
// only on the OpenCL device, y only in RAM: the tasks reading x go to the
// OpenCL group's list, those reading y to the CPU's. The CPU worker, held
// while they are submitted interleaved, then runs all those near its data
// before the others (the OpenCL worker is held meanwhile).
std::atomic<int> g_ocl_hold{0};

void write_on_opencl(void **, void *) {}

void hold_opencl(void **, void *)
{
	g_ocl_hold = 1;
	wait_until([] { return g_ocl_hold.load() == 2; }, 60000);
}

void record_x(void **, void *arg)
{
	std::lock_guard<std::mutex> lock(g_ran_lock);
	g_ran.push_back(static_cast<const char *>(arg));
}

TEST_F(HeteroprioOpenCL, LocalityModeRunsTasksNearTheirDataFirst)
{
	ScopedEnv la("STARPU_HETEROPRIO_USE_LA", "1");
	ScopedEnv push("STARPU_LAHETEROPRIO_PUSH", "LS_SDHB");
	g_ran.clear();
	if (!start_mixed(nullptr))
		GTEST_SKIP() << "no heteroprio or no OpenCL worker here";
	std::string groups = wgroups_of(0);
	EXPECT_TRUE(contains(groups, "There are 2 groups")) << groups;
	static float x[16], y[16];
	starpu_data_handle_t hx, hy;
	starpu_vector_data_register(&hx, STARPU_MAIN_RAM, (uintptr_t)x, 16, sizeof(float));
	starpu_vector_data_register(&hy, STARPU_MAIN_RAM, (uintptr_t)y, 16, sizeof(float));
	static starpu_codelet writer = [] {
		starpu_codelet cl{};
		cl.where = STARPU_OPENCL;
		cl.opencl_funcs[0] = write_on_opencl;
		cl.nbuffers = 1;
		cl.modes[0] = STARPU_W;
		cl.name = "write_on_opencl";
		return cl;
	}();
	static starpu_codelet holder = [] {
		starpu_codelet cl{};
		cl.where = STARPU_OPENCL;
		cl.opencl_funcs[0] = hold_opencl;
		cl.name = "hold_opencl";
		return cl;
	}();
	static starpu_codelet reader = [] {
		starpu_codelet cl = cpu_codelet(record_x, 1, "reader");
		cl.opencl_funcs[0] = record_x;
		cl.modes[0] = STARPU_R;
		return cl;
	}();
	ASSERT_EQ(starpu_task_insert(&writer, STARPU_W, hx, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_FALSE(starpu_data_is_on_node(hx, STARPU_MAIN_RAM));
	g_ocl_hold = 0;
	ASSERT_EQ(starpu_task_insert(&holder, 0), 0);
	ASSERT_TRUE(wait_until([] { return g_ocl_hold.load() == 1; }, 60000));
	// The premise, while every worker is held: x is on the OpenCL device only. A copy in main memory would make
	// both groups equally near for x (its readers then go where the application's thread pushes, in its order).
	bool x_in_ram = false;
	{
		Gate gate({ starpu_worker_get_by_type(STARPU_CPU_WORKER, 0) });
		ASSERT_TRUE(gate.close());
		for (int i = 0; i < 6; i++) {
			x_in_ram |= starpu_data_is_on_node(hx, STARPU_MAIN_RAM) != 0;
			ASSERT_EQ(starpu_task_insert(&reader, STARPU_R, hx, STARPU_CL_ARGS_NFREE, "x", (size_t)2, 0), 0);
			ASSERT_EQ(starpu_task_insert(&reader, STARPU_R, hy, STARPU_CL_ARGS_NFREE, "y", (size_t)2, 0), 0);
		}
		x_in_ram |= starpu_data_is_on_node(hx, STARPU_MAIN_RAM) != 0;
	}
	ASSERT_TRUE(wait_until([] { std::lock_guard<std::mutex> l(g_ran_lock); return g_ran.size() == 12; }, 60000));
	g_ocl_hold = 2;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(hx);
	starpu_data_unregister(hy);
	if (x_in_ram)
		GTEST_SKIP() << "x was copied to main memory while every worker was held: the premise of this test did not hold";
	std::vector<std::string> expected(6, "y");
	expected.insert(expected.end(), 6, "x");
	EXPECT_EQ(g_ran, expected) << groups;
}
#endif

} // namespace

int main(int argc, char **argv)
{
	return opencl_test_main(argc, argv, "heteroprio");
}
