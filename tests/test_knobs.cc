// SPDX-License-Identifier: LGPL-2.1-or-later
// Performance steering knobs (starpu_perf_knob_*): scope and type names, the
// kernel's knobs with StarPU's ids, every accessor and the errors they give
// (wrong type, wrong scope, out of range, unknown id, worker or policy), and
// each exported knob's effect observed by running tasks: a disabled worker
// gets no new task, capped priorities on executed tasks, a rebound worker
// thread, the signal handlers. Knob groups are declared by a test plugin
// and by the test itself through <astrolabe/knobs.h>.
#include "helpers.h"

#include <astrolabe/knobs.h>
#include <hwloc.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include <sched.h>
#include <signal.h>

using namespace astro_test;

namespace {

constexpr starpu_perf_knob_scope kGlobal = starpu_perf_knob_scope_global;
constexpr starpu_perf_knob_scope kWorker = starpu_perf_knob_scope_per_worker;
constexpr starpu_perf_knob_scope kSched = starpu_perf_knob_scope_per_scheduler;

const char *const kCalibrate = "starpu.global.g_calibrate_knob";
const char *const kCatchSignals = "starpu.global.g_enable_catch_signal_knob";
const char *const kBindToPu = "starpu.worker.w_bind_to_pu_knob";
const char *const kEnableWorker = "starpu.worker.w_enable_worker_knob";
const char *const kMaxPrioCap = "starpu.task.s_max_priority_cap_knob";
const char *const kMinPrioCap = "starpu.task.s_min_priority_cap_knob";

// The stderr of f must be one "[astrolabe] error:" line containing needle.
template <typename F> void expect_one_error(F &&f, const std::string &needle)
{
	std::string err = stderr_of(f);
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	EXPECT_TRUE(contains(err, "[astrolabe] error: ")) << err;
	EXPECT_TRUE(contains(err, needle)) << "expected '" << needle << "' in: " << err;
}

// The same error as one f's session already printed: counted, said again at shutdown (kernel/common/log.c).
template <typename F> void expect_repeat_counted(F &&f)
{
	std::string err = stderr_of(f);
	EXPECT_EQ(err, "") << "an error already printed in this session must only be counted";
}

template <typename F> void expect_silent(F &&f)
{
	std::string err = stderr_of(f);
	EXPECT_EQ(err, "");
}

// ------------------------------------------------------- tasks that count

std::array<std::atomic<int>, STARPU_NMAXWORKERS> g_ran_on;

void reset_counts()
{
	for (auto &c : g_ran_on)
		c = 0;
}

// Counts the worker it runs on, then keeps it busy for cl_arg microseconds.
void count_worker(void **, void *arg)
{
	g_ran_on[starpu_worker_get_id()]++;
	double until = starpu_timing_now() + (double)(uintptr_t)arg;
	while (starpu_timing_now() < until)
		;
}

starpu_codelet g_count_cl = cpu_codelet(count_worker, 0, "count_worker");

void run_counted(int ntasks, unsigned busy_us = 0)
{
	for (int i = 0; i < ntasks; i++)
		ASSERT_EQ(submit_detached(&g_count_cl, (void *)(uintptr_t)busy_us), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

// Times each worker went to sleep (conf.callback_worker_going_to_sleep).
std::array<std::atomic<int>, STARPU_NMAXWORKERS> g_sleeps;

void note_sleep(unsigned workerid)
{
	if (workerid < STARPU_NMAXWORKERS)
		g_sleeps[workerid]++;
}

// Returns once worker w has looked at the queues after this call began and
// found nothing to take (it went to sleep afterwards); false if it did not
// within the bound. A sleep counted after one wake-up may follow a look taken
// just before the call: the second wake-up counts only a look taken after
// that sleep began, so after this call. The worker is asleep when it returns.
bool worker_looked_and_slept(int w)
{
	for (int round = 0; round < 2; round++) {
		int before = g_sleeps[w];
		starpu_wake_worker(w);
		if (!wait_until([&] { return g_sleeps[w].load() > before; }, 20000))
			return false;
	}
	return true;
}

class Knobs : public ::testing::Test
{
protected:
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}

	// Starts policy with ncpus CPU workers; skips the test when the policy is not built.
	void start(const char *policy, int ncpus = 2)
	{
		starpu_conf conf = conf_with_ncpus(ncpus);
		conf.sched_policy_name = policy;
		conf.callback_worker_going_to_sleep = note_sleep;
		for (auto &c : g_sleeps)
			c = 0;
		int ret = -1;
		std::string err = stderr_of([&] { ret = starpu_init(&conf); });
		ASSERT_EQ(ret, 0) << err;
		if (policy_name() != policy) {
			starpu_shutdown();
			GTEST_SKIP() << "policy " << policy << " is not built here: " << err;
		}
		ASSERT_EQ(starpu_worker_get_count(), (unsigned)ncpus);
	}

	ScopedEnv sched_{"STARPU_SCHED", nullptr};
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
	ScopedEnv silent_{"STARPU_SILENT", nullptr};
	ScopedEnv catch_{"STARPU_CATCH_SIGNALS", nullptr};
	ScopedEnv calibrate_{"STARPU_CALIBRATE", nullptr};
	ScopedEnv nobind_{"STARPU_WORKERS_NOBIND", nullptr};
	ScopedEnv min_prio_{"STARPU_MIN_PRIO", nullptr};
	ScopedEnv max_prio_{"STARPU_MAX_PRIO", nullptr};
};

#define START_OR_RETURN(...) \
	do { \
		start(__VA_ARGS__); \
		if (IsSkipped() || HasFatalFailure()) \
			return; \
	} while (0)

// ------------------------------------------------------------- naming

TEST_F(Knobs, ScopeAndTypeNamesMatchStarPU)
{
	EXPECT_EQ(starpu_perf_knob_scope_name_to_id("global"), 1);
	EXPECT_EQ(starpu_perf_knob_scope_name_to_id("per_worker"), 3);
	EXPECT_EQ(starpu_perf_knob_scope_name_to_id("per_scheduler"), 5);
	EXPECT_STREQ(starpu_perf_knob_scope_id_to_name(kGlobal), "global");
	EXPECT_STREQ(starpu_perf_knob_scope_id_to_name(kWorker), "per_worker");
	EXPECT_STREQ(starpu_perf_knob_scope_id_to_name(kSched), "per_scheduler");
	const char *types[] = { "int32", "int64", "float", "double" };
	for (int t = 1; t <= 4; t++) {
		EXPECT_EQ(starpu_perf_knob_type_name_to_id(types[t - 1]), t);
		EXPECT_STREQ(starpu_perf_knob_type_id_to_name((starpu_perf_knob_type)t), types[t - 1]);
	}

	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_scope_name_to_id("per_codelet"), -1); }, "'per_codelet' is not a knob scope");
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_scope_name_to_id(nullptr), -1); }, "not a knob scope");
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_scope_id_to_name((starpu_perf_knob_scope)2), nullptr); }, "not a knob scope id");
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_type_name_to_id("int16"), -1); }, "'int16' is not a knob type");
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_type_id_to_name((starpu_perf_knob_type)9), nullptr); }, "not a knob type id");
}

TEST_F(Knobs, KernelKnobsHaveStarPUIds)
{
	START_OR_RETURN("lws");
	struct { starpu_perf_knob_scope scope; const char *name; int id; } expected[] = {
		{ kGlobal, kCalibrate, 0x01 }, { kGlobal, kCatchSignals, 0x11 },
		{ kWorker, kBindToPu, 0x03 }, { kWorker, kEnableWorker, 0x13 },
		{ kSched, kMaxPrioCap, 0x05 }, { kSched, kMinPrioCap, 0x15 },
	};
	for (auto &e : expected) {
		SCOPED_TRACE(e.name);
		EXPECT_EQ(starpu_perf_knob_name_to_id(e.scope, e.name), e.id);
		EXPECT_STREQ(starpu_perf_knob_id_to_name(e.id), e.name);
		EXPECT_EQ(starpu_perf_knob_get_type_id(e.id), starpu_perf_knob_type_int32);
		ASSERT_NE(starpu_perf_knob_get_help_string(e.id), nullptr);
		EXPECT_GT(strlen(starpu_perf_knob_get_help_string(e.id)), 10u);
		struct astro_knob_info info;
		ASSERT_EQ(astro_knob_get_info(e.id, &info), 0);
		EXPECT_STREQ(info.module, "kernel");
		EXPECT_EQ(info.scope, e.scope);
		EXPECT_EQ(info.read_only, 0);
	}
	// The dm policies' plugin adds StarPU's starpu.dmda.* knobs, with StarPU's ids, after the kernel's.
	const char *dmda_knobs[] = { "starpu.dmda.s_alpha_knob", "starpu.dmda.s_beta_knob", "starpu.dmda.s_gamma_knob",
				     "starpu.dmda.s_idle_power_knob" };
	bool with_dm = policy_registered("dmda");
	for (int k = 0; with_dm && k < 4; k++) {
		SCOPED_TRACE(dmda_knobs[k]);
		EXPECT_EQ(starpu_perf_knob_name_to_id(kSched, dmda_knobs[k]), ((k + 2) << 4) | kSched);
		EXPECT_EQ(starpu_perf_knob_get_type_id(((k + 2) << 4) | kSched), starpu_perf_knob_type_double);
	}
	for (starpu_perf_knob_scope scope : { kGlobal, kWorker, kSched }) {
		ASSERT_EQ(starpu_perf_knob_nb(scope), scope == kSched && with_dm ? 6 : 2);
		for (int nth = 0; nth < starpu_perf_knob_nb(scope); nth++)
			EXPECT_EQ(starpu_perf_knob_nth_to_id(scope, nth), (nth << 4) | scope);
	}

	testing::internal::CaptureStdout();
	starpu_perf_knob_list_all_avail();
	fflush(stdout);
	std::string out = testing::internal::GetCapturedStdout();
	EXPECT_TRUE(contains(out, "scope: global\n0x00000001:starpu.global.g_calibrate_knob [int32] - ")) << out;
	EXPECT_TRUE(contains(out, "\n0x00000011:starpu.global.g_enable_catch_signal_knob [int32] - ")) << out;
	EXPECT_TRUE(contains(out, "scope: per_worker\n0x00000003:starpu.worker.w_bind_to_pu_knob [int32] - ")) << out;
	EXPECT_TRUE(contains(out, "scope: per_scheduler\n0x00000005:starpu.task.s_max_priority_cap_knob [int32] - ")) << out;
	EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), with_dm ? 13 : 9) << out;

	testing::internal::CaptureStdout();
	starpu_perf_knob_list_avail(kWorker);
	fflush(stdout);
	out = testing::internal::GetCapturedStdout();
	EXPECT_EQ(out.rfind("0x00000003:starpu.worker.w_bind_to_pu_knob [int32] - ", 0), 0u) << out;
	EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2) << out;
}

TEST_F(Knobs, UnknownNamesAndIdsAreErrors)
{
	START_OR_RETURN("lws");
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_name_to_id(kGlobal, "starpu.global.g_nothing_knob"), -1); },
			 "no knob named 'starpu.global.g_nothing_knob'");
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_name_to_id(kWorker, kCalibrate), -1); }, "is in scope global, not per_worker");
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_name_to_id((starpu_perf_knob_scope)4, kCalibrate), -1); }, "not a knob scope id");
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_nb((starpu_perf_knob_scope)0), 0); }, "not a knob scope id");
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_nth_to_id(kGlobal, 2), -1); }, "scope global has 2 knobs");
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_nth_to_id(kGlobal, -1), -1); }, "not a rank");
	for (int id : { -1, 0, 0x21, 0x12, 0x7fffffff }) {
		SCOPED_TRACE(id);
		expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_id_to_name(id), nullptr); }, "is not a knob id");
		expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_get_type_id(id), -1); }, "is not a knob id");
		expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_get_help_string(id), nullptr); }, "is not a knob id");
		expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), 0); }, "is not a knob id");
		expect_one_error([&] { starpu_perf_knob_set_per_worker_double_value(id, 0, 1.0); }, "is not a knob id");
		expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int64_value(id, "lws"), 0); }, "is not a knob id");
		struct astro_knob_info info;
		EXPECT_EQ(astro_knob_get_info(id, &info), -EINVAL);
	}
	testing::internal::CaptureStdout();
	std::string err = stderr_of([] { starpu_perf_knob_list_avail((starpu_perf_knob_scope)7); });
	fflush(stdout);
	EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
	EXPECT_TRUE(contains(err, "not a knob scope id")) << err;
}

TEST_F(Knobs, KnobsExistBetweenInitAndShutdown)
{
	EXPECT_EQ(starpu_perf_knob_nb(kGlobal), 0);
	expect_one_error([] { EXPECT_EQ(starpu_perf_knob_name_to_id(kGlobal, kCalibrate), -1); }, "between starpu_init() and starpu_shutdown()");
	START_OR_RETURN("lws");
	int id = starpu_perf_knob_name_to_id(kWorker, kEnableWorker);
	ASSERT_GE(id, 0);
	EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, 0), 1);
	starpu_shutdown();
	expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, 0), 0); }, "is not a knob id");
	expect_one_error([&] { starpu_perf_knob_set_per_worker_int32_value(id, 0, 0); }, "is not a knob id");
	// Declared again, with the same ids, at the next starpu_init().
	START_OR_RETURN("lws");
	EXPECT_EQ(starpu_perf_knob_name_to_id(kWorker, kEnableWorker), id);
}

// --------------------------------------------------- w_enable_worker_knob

class EnableWorker : public Knobs, public ::testing::WithParamInterface<const char *>
{
};

// Counts the worker it runs on, then waits (bounded) until both workers ran one.
void count_until_both_ran(void **, void *)
{
	g_ran_on[starpu_worker_get_id()]++;
	wait_until([] { return g_ran_on[0].load() > 0 && g_ran_on[1].load() > 0; }, 20000);
}

starpu_codelet g_both_cl = cpu_codelet(count_until_both_ran, 0, "count_until_both_ran");

// Disables worker `off`, holds worker `on` in a task while n tasks are queued,
// makes sure `off` looked at them (woken, it went back to sleep), then lets
// `on` run them: `off` never runs one. Deterministic: with the rule broken,
// `off` takes a task at its look, whatever the timing.
void expect_disabled_worker_takes_nothing(int id, int on, int off, int n)
{
	reset_counts();
	starpu_perf_knob_set_per_worker_int32_value(id, off, 0);
	starpu_perf_knob_set_per_worker_int32_value(id, on, 1);
	EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, off), 0);
	EXPECT_EQ(starpu_worker_is_enabled(off), 0);
	{
		Gate gate(std::vector<int>{ on });
		ASSERT_TRUE(gate.close());
		for (int i = 0; i < n; i++)
			ASSERT_EQ(submit_detached(&g_count_cl), 0);
		ASSERT_TRUE(worker_looked_and_slept(off)) << "worker " << off << " never went back to sleep";
		EXPECT_EQ(g_ran_on[off], 0) << "a disabled worker ran new tasks";
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ran_on[off], 0) << "a disabled worker ran new tasks";
	EXPECT_EQ(g_ran_on[on], n);
}

// The seed's sequence ("disable worker 5"), with the two workers available here.
TEST_P(EnableWorker, DisabledWorkerGetsNoNewTaskAndReenablingRestoresIt)
{
	START_OR_RETURN(GetParam(), 2);
	reset_counts();

	int w_scope = starpu_perf_knob_scope_name_to_id("per_worker");
	int w_enable_id = starpu_perf_knob_name_to_id((starpu_perf_knob_scope)w_scope, "starpu.worker.w_enable_worker_knob");
	ASSERT_GE(w_enable_id, 0);
	int32_t val = starpu_perf_knob_get_per_worker_int32_value(w_enable_id, 1);
	EXPECT_EQ(val, 1);

	expect_disabled_worker_takes_nothing(w_enable_id, 0, 1, 100);
	if (HasFatalFailure())
		return;
	expect_disabled_worker_takes_nothing(w_enable_id, 1, 0, 100);
	if (HasFatalFailure())
		return;

	// Both enabled again: both get work (each task waits, bounded, until both workers ran one).
	starpu_perf_knob_set_per_worker_int32_value(w_enable_id, 0, 1);
	EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(w_enable_id, 0), 1);
	EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(w_enable_id, 1), 1);
	reset_counts();
	for (int i = 0; i < 40; i++)
		ASSERT_EQ(submit_detached(&g_both_cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_GT(g_ran_on[0], 0);
	EXPECT_GT(g_ran_on[1], 0);
	EXPECT_EQ(g_ran_on[0] + g_ran_on[1], 40);
}

// A worker re-enabled while work is queued and the other worker is busy is
// woken and runs that work: worker 0 stays held until worker 1 ran all of it
// (bounded: a worker left asleep fails the test instead of hanging it).
TEST_P(EnableWorker, ReenabledWorkerWakesForQueuedWork)
{
	const std::string policy = GetParam();
	if (policy == "random" || policy.compare(0, 2, "dm") == 0)
		GTEST_SKIP() << policy << " never moves a queued task: the re-enabled worker has nothing it may take";
	START_OR_RETURN(GetParam(), 2);
	int id = starpu_perf_knob_name_to_id(kWorker, kEnableWorker);
	ASSERT_GE(id, 0);
	const int n = 20;
	reset_counts();
	starpu_perf_knob_set_per_worker_int32_value(id, 1, 0);
	{
		Gate gate(std::vector<int>{ 0 });
		ASSERT_TRUE(gate.close());
		for (int i = 0; i < n; i++)
			ASSERT_EQ(submit_detached(&g_count_cl), 0);
		// Worker 1 saw the queued work, refused it, and sleeps: only the knob can wake it now.
		ASSERT_TRUE(worker_looked_and_slept(1)) << "worker 1 never went back to sleep";
		ASSERT_EQ(g_ran_on[1], 0);
		starpu_perf_knob_set_per_worker_int32_value(id, 1, 1);
		EXPECT_TRUE(wait_until([&] { return g_ran_on[1].load() == n; }, 20000))
			<< "the re-enabled worker ran " << g_ran_on[1] << " of the " << n << " queued tasks";
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ran_on[0], 0);
	EXPECT_EQ(g_ran_on[1], n);
}

// Any non-zero value is "on"; the worker id is checked.
TEST_P(EnableWorker, OnOffValuesAndUnknownWorkers)
{
	START_OR_RETURN(GetParam(), 2);
	int id = starpu_perf_knob_name_to_id(kWorker, kEnableWorker);
	expect_silent([&] { starpu_perf_knob_set_per_worker_int32_value(id, 0, -7); });
	EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, 0), 1);
	expect_one_error([&] { starpu_perf_knob_set_per_worker_int32_value(id, 2, 0); }, "worker 2 does not exist (there are 2 workers)");
	expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, 5), 0); }, "worker 5 does not exist");
	EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, 0), 1);
	EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, 1), 1);
}

INSTANTIATE_TEST_SUITE_P(Policies, EnableWorker, ::testing::Values("eager", "prio", "random", "ws", "lws", "dmda", "dmdas"),
			 [](const testing::TestParamInfo<const char *> &info) { return std::string(info.param); });

TEST_F(Knobs, DisabledWorkerStillRunsWhatWasQueuedToItAndTasksPinnedToIt)
{
	// random never moves a task once queued: the disabled worker must run its share itself.
	START_OR_RETURN("random", 2);
	int id = starpu_perf_knob_name_to_id(kWorker, kEnableWorker);
	reset_counts();
	starpu_pause();
	for (int i = 0; i < 64; i++)
		ASSERT_EQ(submit_detached(&g_count_cl), 0);
	starpu_perf_knob_set_per_worker_int32_value(id, 1, 0);
	starpu_resume();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ran_on[0] + g_ran_on[1], 64);
	EXPECT_GT(g_ran_on[1], 0) << "random queued no task to worker 1 out of 64?";

	reset_counts();
	struct starpu_task *task = starpu_task_create();
	task->cl = &g_count_cl;
	task->execute_on_a_specific_worker = 1;
	task->workerid = 1;
	ASSERT_EQ(starpu_task_submit(task), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ran_on[1], 1);
}

// ------------------------------------------------------ priority caps

std::mutex g_prio_lock;
std::map<uintptr_t, int> g_ran_with_priority;

void record_priority(void **, void *arg)
{
	std::lock_guard<std::mutex> lock(g_prio_lock);
	g_ran_with_priority[(uintptr_t)arg] = starpu_task_get_current()->priority;
}

starpu_codelet g_prio_cl = cpu_codelet(record_priority, 0, "record_priority");

// Submits one task per (tag, priority) and returns the priority each ran with.
std::map<uintptr_t, int> run_with_priorities(const std::vector<std::pair<uintptr_t, int>> &tasks)
{
	{
		std::lock_guard<std::mutex> lock(g_prio_lock);
		g_ran_with_priority.clear();
	}
	for (auto &t : tasks)
		EXPECT_EQ(submit_detached(&g_prio_cl, (void *)t.first, t.second), 0);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	std::lock_guard<std::mutex> lock(g_prio_lock);
	return g_ran_with_priority;
}

TEST_F(Knobs, PriorityCapsClampTasksSubmittedAfterwards)
{
	START_OR_RETURN("prio", 2);
	int max_id = starpu_perf_knob_name_to_id(kSched, kMaxPrioCap);
	int min_id = starpu_perf_knob_name_to_id(kSched, kMinPrioCap);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(max_id, "prio"), starpu_sched_get_max_priority());
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(min_id, "prio"), starpu_sched_get_min_priority());

	// Submitted before the caps (held back by the pause): it keeps its priority.
	starpu_pause();
	ASSERT_EQ(submit_detached(&g_prio_cl, (void *)100, 5), 0);
	expect_silent([&] {
		starpu_perf_knob_set_per_scheduler_int32_value(max_id, "prio", 2);
		starpu_perf_knob_set_per_scheduler_int32_value(min_id, "prio", -1);
	});
	starpu_resume();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	{
		std::lock_guard<std::mutex> lock(g_prio_lock);
		EXPECT_EQ(g_ran_with_priority[100], 5);
	}
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(max_id, "prio"), 2);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(min_id, "prio"), -1);

	std::vector<std::pair<uintptr_t, int>> tasks;
	for (int p = -5; p <= 5; p++)
		tasks.push_back({ (uintptr_t)(p + 5), p });
	auto ran = run_with_priorities(tasks);
	ASSERT_EQ(ran.size(), tasks.size());
	for (int p = -5; p <= 5; p++)
		EXPECT_EQ(ran[(uintptr_t)(p + 5)], std::min(2, std::max(-1, p))) << "submitted with priority " << p;

	// Caps kept for another policy cap nothing here.
	std::string err = stderr_of([&] { starpu_perf_knob_set_per_scheduler_int32_value(max_id, "eager", -3); });
	EXPECT_TRUE(contains(err, "no scheduling context runs policy 'eager'")) << err;
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(max_id, "eager"), -3);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(min_id, "eager"), starpu_sched_get_min_priority());
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(max_id, "prio"), 2);
	ran = run_with_priorities({ { 1, 5 }, { 2, -5 } });
	EXPECT_EQ(ran[1], 2);
	EXPECT_EQ(ran[2], -1);

	// Bad values leave the caps as they were.
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_int32_value(max_id, "prio", -2); }, "below the minimum priority cap -1");
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_int32_value(min_id, "prio", 3); }, "above the maximum priority cap 2");
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_int32_value(max_id, "prio", 6); }, "outside the range [-5, 5]");
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_int32_value(min_id, "nosuch", 0); }, "no scheduling policy named 'nosuch'");
	expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(min_id, nullptr), 0); }, "no scheduling policy named '(null)'");
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_int64_value(max_id, "prio", 1); }, "is a per_scheduler int32 knob");
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(max_id, "prio"), 2);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(min_id, "prio"), -1);

	// StarPU's own check: both caps to 0 make every task priority 0.
	starpu_perf_knob_set_per_scheduler_int32_value(max_id, "prio", 0);
	starpu_perf_knob_set_per_scheduler_int32_value(min_id, "prio", 0);
	ran = run_with_priorities({ { 1, 5 }, { 2, -5 }, { 3, 0 } });
	EXPECT_EQ(ran[1], 0);
	EXPECT_EQ(ran[2], 0);
	EXPECT_EQ(ran[3], 0);
}

// The caps name a policy: they clamp the tasks of every context running it, and only those.
TEST_F(Knobs, PriorityCapsActOnTheContextsRunningTheirPolicy)
{
	START_OR_RETURN("prio", 2);
	if (!policy_registered("eager"))
		GTEST_SKIP() << "policy eager is not built";
	int max_id = starpu_perf_knob_name_to_id(kSched, kMaxPrioCap);
	int min_id = starpu_perf_knob_name_to_id(kSched, kMinPrioCap);
	int lo = starpu_sched_get_min_priority(), hi = starpu_sched_get_max_priority();
	ASSERT_LE(lo + 2, hi) << "the test needs a few priority levels";
	int w0[] = {0}, w1[] = {1};
	unsigned eager_ctx = starpu_sched_ctx_create(w0, 1, "eager-ctx", STARPU_SCHED_CTX_POLICY_NAME, "eager",
						     STARPU_SCHED_CTX_POLICY_MIN_PRIO, lo, STARPU_SCHED_CTX_POLICY_MAX_PRIO, hi, 0);
	unsigned prio_ctx = starpu_sched_ctx_create(w1, 1, "prio-ctx", STARPU_SCHED_CTX_POLICY_NAME, "prio", 0);
	ASSERT_LT(eager_ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	ASSERT_LT(prio_ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);

	// Eager runs in a context only: capping it is no longer a cap of nothing.
	expect_silent([&] {
		starpu_perf_knob_set_per_scheduler_int32_value(max_id, "eager", lo);
		starpu_perf_knob_set_per_scheduler_int32_value(max_id, "prio", lo + 1);
	});
	unsigned late_eager = starpu_sched_ctx_create(w1, 1, "late-eager", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
	ASSERT_LT(late_eager, (unsigned)STARPU_NMAX_SCHED_CTXS);

	{
		std::lock_guard<std::mutex> lock(g_prio_lock);
		g_ran_with_priority.clear();
	}
	const unsigned ctxs[] = {0, eager_ctx, prio_ctx, late_eager};
	for (uintptr_t i = 0; i < 4; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &g_prio_cl;
		t->cl_arg = (void *)i;
		t->priority = hi;
		t->sched_ctx = ctxs[i];
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	for (unsigned c : {eager_ctx, prio_ctx, late_eager})
		ASSERT_EQ(starpu_task_wait_for_all_in_ctx(c), 0);
	{
		std::lock_guard<std::mutex> lock(g_prio_lock);
		EXPECT_EQ(g_ran_with_priority[0], lo + 1) << "the global context runs prio";
		EXPECT_EQ(g_ran_with_priority[1], lo) << "context " << eager_ctx << " runs eager";
		EXPECT_EQ(g_ran_with_priority[2], lo + 1) << "context " << prio_ctx << " runs prio";
		EXPECT_EQ(g_ran_with_priority[3], lo) << "context " << late_eager << ", made after the cap, runs eager";
	}
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(max_id, "eager"), lo);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(min_id, "eager"), lo);
	for (unsigned c : {eager_ctx, prio_ctx, late_eager})
		starpu_sched_ctx_delete(c);
}

TEST_F(Knobs, PriorityCapsLastUntilShutdown)
{
	START_OR_RETURN("lws", 1);
	int max_id = starpu_perf_knob_name_to_id(kSched, kMaxPrioCap);
	starpu_perf_knob_set_per_scheduler_int32_value(max_id, "lws", 1);
	EXPECT_EQ(run_with_priorities({ { 1, 4 } })[1], 1);
	starpu_shutdown();
	START_OR_RETURN("lws", 1);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(max_id, "lws"), starpu_sched_get_max_priority());
	EXPECT_EQ(run_with_priorities({ { 1, 4 } })[1], 4);
}

TEST_F(Knobs, PriorityCapRangeFollowsTheContextRange)
{
	ScopedEnv min_prio("STARPU_MIN_PRIO", "-20");
	ScopedEnv max_prio("STARPU_MAX_PRIO", "20");
	START_OR_RETURN("prio", 1);
	int max_id = starpu_perf_knob_name_to_id(kSched, kMaxPrioCap);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(max_id, "prio"), 20);
	starpu_perf_knob_set_per_scheduler_int32_value(max_id, "prio", 12);
	EXPECT_EQ(run_with_priorities({ { 1, 18 }, { 2, 9 } })[1], 12);
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_int32_value(max_id, "prio", 21); }, "outside the range [-20, 20]");
}

// ------------------------------------------------------ w_bind_to_pu_knob

struct Topology
{
	hwloc_topology_t topo;
	Topology()
	{
		hwloc_topology_init(&topo);
		hwloc_topology_load(topo);
	}
	~Topology() { hwloc_topology_destroy(topo); }
	int npus() const { return hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU); }
	unsigned os_index(int pu) const { return hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)pu)->os_index; }
};

std::mutex g_affinity_lock;
cpu_set_t g_affinity;

void read_affinity(void **, void *)
{
	std::lock_guard<std::mutex> lock(g_affinity_lock);
	CPU_ZERO(&g_affinity);
	sched_getaffinity(0, sizeof(g_affinity), &g_affinity);
}

// The CPUs the thread of workerid may run on, read by a task running there.
std::vector<int> worker_cpus(int workerid)
{
	static starpu_codelet cl = cpu_codelet(read_affinity, 0, "read_affinity");
	struct starpu_task *task = starpu_task_create();
	task->cl = &cl;
	task->execute_on_a_specific_worker = 1;
	task->workerid = (unsigned)workerid;
	task->synchronous = 1;
	EXPECT_EQ(starpu_task_submit(task), 0);
	std::vector<int> cpus;
	std::lock_guard<std::mutex> lock(g_affinity_lock);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &g_affinity))
			cpus.push_back(c);
	return cpus;
}

TEST_F(Knobs, BindToPuMovesTheWorkerThread)
{
	START_OR_RETURN("lws", 2);
	Topology topology;
	int npus = topology.npus();
	int id = starpu_perf_knob_name_to_id(kWorker, kBindToPu);
	for (int w = 0; w < 2; w++) {
		EXPECT_GE(starpu_perf_knob_get_per_worker_int32_value(id, w), 0);
		EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, w), starpu_worker_get_bindid(w));
		EXPECT_EQ(worker_cpus(w), std::vector<int>{ (int)topology.os_index(starpu_worker_get_bindid(w)) });
	}
	int last = npus - 1;
	expect_silent([&] { starpu_perf_knob_set_per_worker_int32_value(id, 0, last); });
	EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, 0), last);
	EXPECT_EQ(starpu_worker_get_bindid(0), last);
	EXPECT_EQ(worker_cpus(0), std::vector<int>{ (int)topology.os_index(last) });

	starpu_perf_knob_set_per_worker_int32_value(id, 0, 0);
	EXPECT_EQ(starpu_worker_get_bindid(0), 0);
	EXPECT_EQ(worker_cpus(0), std::vector<int>{ (int)topology.os_index(0) });

	expect_one_error([&] { starpu_perf_knob_set_per_worker_int32_value(id, 0, npus); },
			 "outside the range [0, " + std::to_string(npus - 1) + "]");
	expect_one_error([&] { starpu_perf_knob_set_per_worker_int32_value(id, 0, -1); }, "outside the range");
	expect_one_error([&] { starpu_perf_knob_set_per_worker_int32_value(id, 7, 0); }, "worker 7 does not exist");
	expect_one_error([&] { starpu_perf_knob_set_per_worker_float_value(id, 0, 0.0f); }, "use starpu_perf_knob_set_per_worker_int32_value()");
	EXPECT_EQ(starpu_worker_get_bindid(0), 0);
	EXPECT_EQ(worker_cpus(0), std::vector<int>{ (int)topology.os_index(0) });
	run_counted(20);
}

TEST_F(Knobs, BindToPuBindsAnUnboundWorker)
{
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", "1");
	START_OR_RETURN("lws", 1);
	Topology topology;
	int id = starpu_perf_knob_name_to_id(kWorker, kBindToPu);
	EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, 0), -1);
	int last = topology.npus() - 1;
	starpu_perf_knob_set_per_worker_int32_value(id, 0, last);
	EXPECT_EQ(starpu_worker_get_bindid(0), last);
	EXPECT_EQ(worker_cpus(0), std::vector<int>{ (int)topology.os_index(last) });
}

// ------------------------------------------------------- g_calibrate_knob

TEST_F(Knobs, CalibrateIsStoredAndValidated)
{
	START_OR_RETURN("lws", 1);
	int id = starpu_perf_knob_name_to_id(kGlobal, kCalibrate);
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), 0);
	for (int32_t v : { 1, 2, 0 }) {
		starpu_perf_knob_set_global_int32_value(id, v);
		EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), v);
	}
	starpu_perf_knob_set_global_int32_value(id, 2);
	expect_one_error([&] { starpu_perf_knob_set_global_int32_value(id, 3); }, "3 is not one of the values of knob 'starpu.global.g_calibrate_knob' (0, 1, 2)");
	expect_one_error([&] { starpu_perf_knob_set_global_int32_value(id, -1); }, "not one of the values");
	expect_one_error([&] { starpu_perf_knob_set_global_double_value(id, 1.0); }, "is a global int32 knob");
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), 2);
	starpu_shutdown();

	ScopedEnv calibrate("STARPU_CALIBRATE", "1");
	START_OR_RETURN("lws", 1);
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), 1);
	struct astro_knob_info info;
	ASSERT_EQ(astro_knob_get_info(id, &info), 0);
	EXPECT_EQ(info.decl.has_default, 1);
	EXPECT_EQ(info.decl.default_value.int32_val, 1);
	EXPECT_EQ(info.decl.check, ASTRO_KNOB_CHECK_SET);
	EXPECT_EQ(info.decl.nvalues, 3u);
}

// --------------------------------------------- g_enable_catch_signal_knob

const int kCaughtSignals[] = { SIGINT, SIGSEGV, SIGTRAP };

void (*handler_of(int sig))(int)
{
	struct sigaction current;
	sigaction(sig, nullptr, &current);
	return current.sa_handler;
}

// The caught signals at their default disposition while it lives: a runner
// that starts the suite in the background (SIGINT ignored, as a non-interactive
// shell does) must not change what these tests see.
class DefaultSignals
{
public:
	DefaultSignals()
	{
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		for (size_t i = 0; i < std::size(kCaughtSignals); i++)
			sigaction(kCaughtSignals[i], &dfl, &saved_[i]);
	}
	~DefaultSignals()
	{
		for (size_t i = 0; i < std::size(kCaughtSignals); i++)
			sigaction(kCaughtSignals[i], &saved_[i], nullptr);
	}

private:
	struct sigaction saved_[std::size(kCaughtSignals)];
};

TEST_F(Knobs, CatchSignalKnobInstallsAndRemovesTheHandlers)
{
	DefaultSignals dfl;
	std::map<int, void (*)(int)> before;
	for (int sig : kCaughtSignals)
		before[sig] = handler_of(sig);
	START_OR_RETURN("lws", 1);
	int id = starpu_perf_knob_name_to_id(kGlobal, kCatchSignals);
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), 1) << "caught by default, as in StarPU";
	for (int sig : kCaughtSignals)
		EXPECT_NE(handler_of(sig), before[sig]) << sig;
	starpu_perf_knob_set_global_int32_value(id, 0);
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), 0);
	for (int sig : kCaughtSignals)
		EXPECT_EQ(handler_of(sig), before[sig]) << sig;
	starpu_perf_knob_set_global_int32_value(id, 1);
	for (int sig : kCaughtSignals)
		EXPECT_NE(handler_of(sig), before[sig]) << sig;
	starpu_shutdown();
	for (int sig : kCaughtSignals)
		EXPECT_EQ(handler_of(sig), before[sig]) << "not restored at shutdown: " << sig;

	ScopedEnv off("STARPU_CATCH_SIGNALS", "0");
	START_OR_RETURN("lws", 1);
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), 0);
	for (int sig : kCaughtSignals)
		EXPECT_EQ(handler_of(sig), before[sig]) << sig;
	starpu_shutdown();

	starpu_conf conf = conf_with_ncpus(1);
	conf.catch_signals = 1;
	ASSERT_EQ(starpu_init(&conf), 0);
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), 1) << "conf.catch_signals wins with precedence_over_environment_variables";
}

TEST_F(Knobs, IgnoredSignalStaysIgnored)
{
	struct sigaction ignore, saved;
	memset(&ignore, 0, sizeof(ignore));
	ignore.sa_handler = SIG_IGN;
	sigaction(SIGTRAP, &ignore, &saved);
	start("lws", 1);
	EXPECT_EQ(handler_of(SIGTRAP), SIG_IGN);
	if (starpu_is_initialized())
		starpu_shutdown();
	EXPECT_EQ(handler_of(SIGTRAP), SIG_IGN);
	sigaction(SIGTRAP, &saved, nullptr);
}

void raise_from_task(void **, void *arg)
{
	raise((int)(uintptr_t)arg);
}

// In the death-test child: starts the runtime, optionally switches the knob, then a task raises sig.
void run_raising_task(int sig, int catch_knob)
{
	if (init_with_ncpus(1) != 0)
		_exit(3);
	if (catch_knob >= 0)
		starpu_perf_knob_set_global_int32_value(starpu_perf_knob_name_to_id(kGlobal, kCatchSignals), catch_knob);
	static starpu_codelet cl = cpu_codelet(raise_from_task, 0, "raise");
	struct starpu_task *task = starpu_task_create();
	task->cl = &cl;
	task->cl_arg = (void *)(uintptr_t)sig;
	task->synchronous = 1;
	fputs("knobs-test: raising\n", stderr);
	fflush(stderr);
	int ret = starpu_task_submit(task);
	_exit(4 + ret);
}

class KnobsDeathTest : public Knobs
{
protected:
	void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
	DefaultSignals dfl_;
};

TEST_F(KnobsDeathTest, CaughtSignalIsReportedThenRaisedAgain)
{
	EXPECT_EXIT(run_raising_task(SIGINT, -1), testing::KilledBySignal(SIGINT),
		    "knobs-test: raising\n\\[astrolabe\\] caught signal 2 \\(SIGINT\\): passing it on");
	EXPECT_DEATH(run_raising_task(SIGSEGV, -1), "\\[astrolabe\\] caught signal 11 \\(SIGSEGV\\)");
}

TEST_F(KnobsDeathTest, SignalsAreNotCaughtOnceTheKnobIsOff)
{
	// The line before the raise is the last one: nothing reports the signal.
	EXPECT_EXIT(run_raising_task(SIGINT, 0), testing::KilledBySignal(SIGINT), "knobs-test: raising\n$");
}

// ---------------------------------------- groups declared by the test itself

// Values of the test's own knobs: index 0..3 is int32, int64, float, double.
struct SelfStore
{
	std::mutex lock;
	std::array<astro_knob_value, 4> global;
	std::array<std::array<astro_knob_value, 4>, STARPU_NMAXWORKERS> worker;
	std::map<std::string, std::array<astro_knob_value, 4>> sched;
	int sets = 0;
};
SelfStore *g_self;

astro_knob_value &self_slot(const astro_knob_context *ctx, starpu_perf_knob_scope scope)
{
	if (scope == kGlobal)
		return g_self->global[ctx->index];
	if (scope == kWorker)
		return g_self->worker[ctx->workerid][ctx->index];
	return g_self->sched[ctx->sched_policy_name][ctx->index];
}

template <starpu_perf_knob_scope S> int self_get(const astro_knob_context *ctx, astro_knob_value *value, void *arg)
{
	EXPECT_EQ(arg, (void *)g_self);
	std::lock_guard<std::mutex> lock(g_self->lock);
	*value = self_slot(ctx, S);
	return 0;
}

template <starpu_perf_knob_scope S> int self_set(const astro_knob_context *ctx, const astro_knob_value *value, void *arg)
{
	std::lock_guard<std::mutex> lock(g_self->lock);
	self_slot(ctx, S) = *value;
	g_self->sets++;
	return 0;
}

// Declares, in each scope, one knob of each type; returns their ids [scope][type].
std::map<starpu_perf_knob_scope, std::array<int, 4>> declare_self_knobs()
{
	static const char *const lws_and_eager[] = { "lws", "eager", nullptr };
	static const astro_knob_value i64_set[] = { { .int64_val = 1 }, { .int64_val = INT64_C(1) << 40 }, { .int64_val = -7 } };
	std::map<starpu_perf_knob_scope, std::array<int, 4>> ids;
	for (starpu_perf_knob_scope scope : { kGlobal, kWorker, kSched }) {
		astro_knob_group_decl gd = {};
		gd.module = "test_knobs";
		gd.scope = scope;
		gd.get = scope == kGlobal ? self_get<kGlobal> : scope == kWorker ? self_get<kWorker> : self_get<kSched>;
		gd.set = scope == kGlobal ? self_set<kGlobal> : scope == kWorker ? self_set<kWorker> : self_set<kSched>;
		gd.arg = g_self;
		gd.policies = scope == kSched ? lws_and_eager : nullptr;
		int group = astro_knob_group_declare(&gd);
		EXPECT_GE(group, 0);
		std::string prefix = std::string("test.self.") + starpu_perf_knob_scope_id_to_name(scope) + ".";

		astro_knob_decl d = {};
		std::string name = prefix + "i32";
		d.name = name.c_str();
		d.type = starpu_perf_knob_type_int32;
		d.help = "an int32 in [-10, 10]";
		d.check = ASTRO_KNOB_CHECK_RANGE;
		d.min.int32_val = -10;
		d.max.int32_val = 10;
		ids[scope][0] = astro_knob_declare(group, &d);

		d = {};
		name = prefix + "i64";
		d.name = name.c_str();
		d.type = starpu_perf_knob_type_int64;
		d.help = "an int64 among 1, 2^40, -7";
		d.check = ASTRO_KNOB_CHECK_SET;
		d.values = i64_set;
		d.nvalues = 3;
		ids[scope][1] = astro_knob_declare(group, &d);

		d = {};
		name = prefix + "f32";
		d.name = name.c_str();
		d.type = starpu_perf_knob_type_float;
		d.help = "a float in [0.25, 4]";
		d.check = ASTRO_KNOB_CHECK_RANGE;
		d.min.float_val = 0.25f;
		d.max.float_val = 4.0f;
		ids[scope][2] = astro_knob_declare(group, &d);

		d = {};
		name = prefix + "f64";
		d.name = name.c_str();
		d.type = starpu_perf_knob_type_double;
		d.help = "any finite double";
		ids[scope][3] = astro_knob_declare(group, &d);
		for (int t = 0; t < 4; t++)
			EXPECT_GE(ids[scope][t], 0);
	}
	return ids;
}

TEST_F(Knobs, EveryAccessorOfEveryTypeAndScope)
{
	START_OR_RETURN("lws", 2);
	SelfStore store;
	g_self = &store;
	auto ids = declare_self_knobs();
	// After the kernel's two knobs of each scope (and dmda's four per_scheduler ones), in declaration order.
	EXPECT_EQ(ids[kGlobal][0], 0x21);
	EXPECT_EQ(ids[kWorker][3], 0x53);
	EXPECT_EQ(ids[kSched][1], policy_registered("dmda") ? 0x75 : 0x35);
	EXPECT_EQ(starpu_perf_knob_nb(kGlobal), 6);
	EXPECT_STREQ(starpu_perf_knob_id_to_name(ids[kSched][2]), "test.self.per_scheduler.f32");
	EXPECT_EQ(starpu_perf_knob_get_type_id(ids[kWorker][1]), starpu_perf_knob_type_int64);

	// Global.
	expect_silent([&] {
		starpu_perf_knob_set_global_int32_value(ids[kGlobal][0], -10);
		starpu_perf_knob_set_global_int64_value(ids[kGlobal][1], INT64_C(1) << 40);
		starpu_perf_knob_set_global_float_value(ids[kGlobal][2], 0.25f);
		starpu_perf_knob_set_global_double_value(ids[kGlobal][3], -1e300);
	});
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(ids[kGlobal][0]), -10);
	EXPECT_EQ(starpu_perf_knob_get_global_int64_value(ids[kGlobal][1]), INT64_C(1) << 40);
	EXPECT_EQ(starpu_perf_knob_get_global_float_value(ids[kGlobal][2]), 0.25f);
	EXPECT_EQ(starpu_perf_knob_get_global_double_value(ids[kGlobal][3]), -1e300);

	// Per worker: each worker its own value.
	for (unsigned w = 0; w < 2; w++) {
		starpu_perf_knob_set_per_worker_int32_value(ids[kWorker][0], w, (int32_t)w + 3);
		starpu_perf_knob_set_per_worker_int64_value(ids[kWorker][1], w, w ? -7 : 1);
		starpu_perf_knob_set_per_worker_float_value(ids[kWorker][2], w, 1.5f + (float)w);
		starpu_perf_knob_set_per_worker_double_value(ids[kWorker][3], w, 0.125 * w);
	}
	for (unsigned w = 0; w < 2; w++) {
		EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(ids[kWorker][0], w), (int32_t)w + 3);
		EXPECT_EQ(starpu_perf_knob_get_per_worker_int64_value(ids[kWorker][1], w), w ? -7 : 1);
		EXPECT_EQ(starpu_perf_knob_get_per_worker_float_value(ids[kWorker][2], w), 1.5f + (float)w);
		EXPECT_EQ(starpu_perf_knob_get_per_worker_double_value(ids[kWorker][3], w), 0.125 * w);
	}

	// Per scheduler: each listed policy its own value.
	for (const char *policy : { "lws", "eager" }) {
		bool lws = strcmp(policy, "lws") == 0;
		starpu_perf_knob_set_per_scheduler_int32_value(ids[kSched][0], policy, lws ? 7 : -7);
		starpu_perf_knob_set_per_scheduler_int64_value(ids[kSched][1], policy, lws ? 1 : -7);
		starpu_perf_knob_set_per_scheduler_float_value(ids[kSched][2], policy, lws ? 4.0f : 2.0f);
		starpu_perf_knob_set_per_scheduler_double_value(ids[kSched][3], policy, lws ? 3.5 : -3.5);
	}
	for (const char *policy : { "lws", "eager" }) {
		bool lws = strcmp(policy, "lws") == 0;
		EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(ids[kSched][0], policy), lws ? 7 : -7);
		EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int64_value(ids[kSched][1], policy), lws ? 1 : -7);
		EXPECT_EQ(starpu_perf_knob_get_per_scheduler_float_value(ids[kSched][2], policy), lws ? 4.0f : 2.0f);
		EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(ids[kSched][3], policy), lws ? 3.5 : -3.5);
	}
	int sets = store.sets;

	// Every mismatch of type or scope: an error, a zero, the value kept, the setter never called.
	const int types_checked = 4;
	for (starpu_perf_knob_scope scope : { kGlobal, kWorker, kSched }) {
		for (int t = 0; t < types_checked; t++) {
			int id = ids[scope][t];
			SCOPED_TRACE(starpu_perf_knob_id_to_name(id));
			for (int wrong = 0; wrong < 4; wrong++) {
				if (wrong != t || scope != kGlobal) {
					expect_one_error([&] {
						switch (wrong) {
						case 0: EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), 0); break;
						case 1: EXPECT_EQ(starpu_perf_knob_get_global_int64_value(id), 0); break;
						case 2: EXPECT_EQ(starpu_perf_knob_get_global_float_value(id), 0.0f); break;
						default: EXPECT_EQ(starpu_perf_knob_get_global_double_value(id), 0.0); break;
						}
					}, "use starpu_perf_knob_get_");
					expect_one_error([&] {
						switch (wrong) {
						case 0: starpu_perf_knob_set_global_int32_value(id, 1); break;
						case 1: starpu_perf_knob_set_global_int64_value(id, 1); break;
						case 2: starpu_perf_knob_set_global_float_value(id, 1.0f); break;
						default: starpu_perf_knob_set_global_double_value(id, 1.0); break;
						}
					}, "is unchanged");
				}
				if (wrong != t || scope != kWorker) {
					expect_one_error([&] {
						switch (wrong) {
						case 0: EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(id, 0), 0); break;
						case 1: EXPECT_EQ(starpu_perf_knob_get_per_worker_int64_value(id, 0), 0); break;
						case 2: EXPECT_EQ(starpu_perf_knob_get_per_worker_float_value(id, 0), 0.0f); break;
						default: EXPECT_EQ(starpu_perf_knob_get_per_worker_double_value(id, 0), 0.0); break;
						}
					}, "use starpu_perf_knob_get_");
					expect_one_error([&] {
						switch (wrong) {
						case 0: starpu_perf_knob_set_per_worker_int32_value(id, 0, 1); break;
						case 1: starpu_perf_knob_set_per_worker_int64_value(id, 0, 1); break;
						case 2: starpu_perf_knob_set_per_worker_float_value(id, 0, 1.0f); break;
						default: starpu_perf_knob_set_per_worker_double_value(id, 0, 1.0); break;
						}
					}, "is unchanged");
				}
				if (wrong != t || scope != kSched) {
					expect_one_error([&] {
						switch (wrong) {
						case 0: EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int32_value(id, "lws"), 0); break;
						case 1: EXPECT_EQ(starpu_perf_knob_get_per_scheduler_int64_value(id, "lws"), 0); break;
						case 2: EXPECT_EQ(starpu_perf_knob_get_per_scheduler_float_value(id, "lws"), 0.0f); break;
						default: EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(id, "lws"), 0.0); break;
						}
					}, "use starpu_perf_knob_get_");
					expect_one_error([&] {
						switch (wrong) {
						case 0: starpu_perf_knob_set_per_scheduler_int32_value(id, "lws", 1); break;
						case 1: starpu_perf_knob_set_per_scheduler_int64_value(id, "lws", 1); break;
						case 2: starpu_perf_knob_set_per_scheduler_float_value(id, "lws", 1.0f); break;
						default: starpu_perf_knob_set_per_scheduler_double_value(id, "lws", 1.0); break;
						}
					}, "is unchanged");
				}
			}
		}
	}

	// Values outside the declaration.
	const double inf = std::numeric_limits<double>::infinity();
	expect_one_error([&] { starpu_perf_knob_set_global_int32_value(ids[kGlobal][0], 11); }, "11 is outside the range [-10, 10]");
	expect_one_error([&] { starpu_perf_knob_set_global_int64_value(ids[kGlobal][1], 2); }, "2 is not one of the values of knob 'test.self.global.i64' (1, 1099511627776, -7)");
	expect_one_error([&] { starpu_perf_knob_set_global_float_value(ids[kGlobal][2], 0.2f); }, "outside the range [0.25, 4]");
	expect_one_error([&] { starpu_perf_knob_set_global_float_value(ids[kGlobal][2], NAN); }, "is not a finite number");
	expect_one_error([&] { starpu_perf_knob_set_global_double_value(ids[kGlobal][3], inf); }, "is not a finite number");
	expect_one_error([&] { starpu_perf_knob_set_global_double_value(ids[kGlobal][3], NAN); }, "is not a finite number");
	expect_one_error([&] { starpu_perf_knob_set_per_worker_int32_value(ids[kWorker][0], 0, -11); }, "outside the range");
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_float_value(ids[kSched][2], "lws", 4.5f); }, "outside the range");

	// Unknown worker or policy, and a policy the group does not serve.
	expect_one_error([&] { starpu_perf_knob_set_per_worker_double_value(ids[kWorker][3], 2, 1.0); }, "worker 2 does not exist");
	expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_get_per_worker_int64_value(ids[kWorker][1], 99), 0); }, "worker 99 does not exist");
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_int32_value(ids[kSched][0], "nosuch", 1); }, "no scheduling policy named 'nosuch'");
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_int32_value(ids[kSched][0], "prio", 1); }, "exists for the policies lws, eager, not for 'prio'");
	expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(ids[kSched][3], "random"), 0.0); }, "not for 'random'");

	// Nothing reached a setter, and every value is as it was.
	EXPECT_EQ(store.sets, sets);
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(ids[kGlobal][0]), -10);
	EXPECT_EQ(starpu_perf_knob_get_global_int64_value(ids[kGlobal][1]), INT64_C(1) << 40);
	EXPECT_EQ(starpu_perf_knob_get_global_float_value(ids[kGlobal][2]), 0.25f);
	EXPECT_EQ(starpu_perf_knob_get_global_double_value(ids[kGlobal][3]), -1e300);
	EXPECT_EQ(starpu_perf_knob_get_per_worker_int32_value(ids[kWorker][0], 0), 3);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_float_value(ids[kSched][2], "lws"), 4.0f);
	run_counted(10);
	starpu_shutdown();
	g_self = nullptr;
}

int never_get(const astro_knob_context *, astro_knob_value *value, void *)
{
	value->int32_val = 42;
	return 0;
}

TEST_F(Knobs, BadDeclarationsAreRefused)
{
	astro_knob_group_decl gd = {};
	gd.scope = kGlobal;
	gd.get = never_get;
	std::string err = stderr_of([&] { EXPECT_EQ(astro_knob_group_declare(&gd), -EBUSY); });
	EXPECT_TRUE(contains(err, "not before starpu_init()")) << err;

	START_OR_RETURN("lws", 1);
	expect_one_error([&] { EXPECT_EQ(astro_knob_group_declare(nullptr), -EINVAL); }, "needs a scope");
	astro_knob_group_decl bad = gd;
	bad.get = nullptr;
	// The same message as for NULL.
	expect_repeat_counted([&] { EXPECT_EQ(astro_knob_group_declare(&bad), -EINVAL); });
	bad = gd;
	bad.scope = (starpu_perf_knob_scope)2;
	expect_repeat_counted([&] { EXPECT_EQ(astro_knob_group_declare(&bad), -EINVAL); });
	static const char *const only_lws[] = { "lws", nullptr };
	bad = gd;
	bad.policies = only_lws;
	expect_one_error([&] { EXPECT_EQ(astro_knob_group_declare(&bad), -EINVAL); }, "only per_scheduler groups");

	// A read-only group.
	int group = astro_knob_group_declare(&gd);
	ASSERT_GE(group, 0);
	astro_knob_decl d = {};
	d.name = "test.bad.g_answer";
	d.type = starpu_perf_knob_type_int32;
	int id = astro_knob_declare(group, &d);
	ASSERT_GE(id, 0);
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(id), 42);
	expect_one_error([&] { starpu_perf_knob_set_global_int32_value(id, 1); }, "knob 'test.bad.g_answer' is read-only");
	struct astro_knob_info info;
	ASSERT_EQ(astro_knob_get_info(id, &info), 0);
	EXPECT_EQ(info.read_only, 1);
	EXPECT_STREQ(info.decl.help, "");

	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group, &d), -EEXIST); }, "a knob named 'test.bad.g_answer' already exists");
	d.name = kCalibrate;
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group, &d), -EEXIST); }, "already exists");
	d.name = "";
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group, &d), -EINVAL); }, "needs a name");
	d.name = "test.bad.g_type";
	d.type = (starpu_perf_knob_type)5;
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group, &d), -EINVAL); }, "type id 5");
	d.type = starpu_perf_knob_type_double;
	d.check = ASTRO_KNOB_CHECK_ONOFF;
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group, &d), -EINVAL); }, "must be of type int32");
	d.check = ASTRO_KNOB_CHECK_RANGE;
	d.min.double_val = 2;
	d.max.double_val = 1;
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group, &d), -EINVAL); }, "empty or non-finite range");
	d.max.double_val = 3;
	d.has_default = 1;
	d.default_value.double_val = 5;
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group, &d), -EINVAL); }, "the default value 5 is outside the range [2, 3]");
	d.check = ASTRO_KNOB_CHECK_SET;
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group, &d), -EINVAL); }, "gives none");
	d.check = (astro_knob_check)9;
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group, &d), -EINVAL); }, "has the check 9");
	expect_repeat_counted([&] { EXPECT_EQ(astro_knob_declare(-1, &d), -EINVAL); });
	d.check = ASTRO_KNOB_CHECK_NONE;
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(-1, &d), -EINVAL); }, "names no group");
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group + 1000, &d), -EINVAL); }, "names no group");
	EXPECT_EQ(starpu_perf_knob_nb(kGlobal), 3);

	// A group of an earlier starpu_init() is gone.
	err = stderr_of([] { starpu_shutdown(); });
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << err;
	EXPECT_TRUE(contains(err, "and a getter (repeated 2 times)\n")) << err;
	EXPECT_TRUE(contains(err, "has the check 9: use an ASTRO_KNOB_CHECK_* constant (repeated 1 time)\n")) << err;
	START_OR_RETURN("lws", 1);
	d.name = "test.bad.g_late";
	expect_one_error([&] { EXPECT_EQ(astro_knob_declare(group, &d), -EINVAL); }, "names no group declared since this starpu_init()");
}

// ---------------------------------------------- a group declared by a plugin

TEST_F(Knobs, PluginDeclaredKnobGroup)
{
	ASSERT_FALSE(test_plugin_dir().empty()) << "ASTRO_TEST_PLUGIN_DIR is not set: run through make check";
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("knobs_testgroup.so"));
	ScopedEnv path("STARPU_PLUGIN_PATH", build_plugin_path() + ":" + dir.path());
	START_OR_RETURN("lws", 2);

	int count_on = starpu_perf_knob_name_to_id(kGlobal, "test.knobs.g_count_tasks_knob");
	int counted = starpu_perf_knob_name_to_id(kGlobal, "test.knobs.g_tasks_counted");
	int weight = starpu_perf_knob_name_to_id(kSched, "test.knobs.s_eager_weight_knob");
	ASSERT_EQ(count_on, 0x21);
	ASSERT_EQ(counted, 0x31);
	// After the kernel's two per_scheduler knobs and dmda's four.
	ASSERT_EQ(weight, policy_registered("dmda") ? 0x65 : 0x25);
	struct astro_knob_info info;
	ASSERT_EQ(astro_knob_get_info(counted, &info), 0);
	EXPECT_STREQ(info.module, "knobs_testgroup");
	EXPECT_EQ(info.read_only, 1);
	EXPECT_EQ(info.decl.type, starpu_perf_knob_type_int64);
	ASSERT_EQ(astro_knob_get_info(weight, &info), 0);
	ASSERT_NE(info.policies, nullptr);
	EXPECT_STREQ(info.policies[0], "eager");
	EXPECT_EQ(info.policies[1], nullptr);

	// The plugin's knob acts: tasks are counted only while it is on.
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(count_on), 1);
	EXPECT_EQ(starpu_perf_knob_get_global_int64_value(counted), 0);
	run_counted(20);
	EXPECT_EQ(starpu_perf_knob_get_global_int64_value(counted), 20);
	starpu_perf_knob_set_global_int32_value(count_on, 0);
	run_counted(20);
	EXPECT_EQ(starpu_perf_knob_get_global_int64_value(counted), 20);
	starpu_perf_knob_set_global_int32_value(count_on, 5);
	EXPECT_EQ(starpu_perf_knob_get_global_int32_value(count_on), 1);
	run_counted(10);
	EXPECT_EQ(starpu_perf_knob_get_global_int64_value(counted), 30);
	expect_one_error([&] { starpu_perf_knob_set_global_int64_value(counted, 0); }, "is read-only");
	expect_one_error([&] { EXPECT_EQ(starpu_perf_knob_get_global_int32_value(counted), 0); }, "is a global int64 knob");

	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(weight, "eager"), 1.0);
	starpu_perf_knob_set_per_scheduler_double_value(weight, "eager", 1.5);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(weight, "eager"), 1.5);
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_double_value(weight, "eager", 3.0); }, "outside the range [0.5, 2]");
	expect_one_error([&] { starpu_perf_knob_set_per_scheduler_double_value(weight, "lws", 1.0); }, "exists for the policies eager, not for 'lws'");
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(weight, "eager"), 1.5);

	// Declared again at the next starpu_init(), with the same ids and fresh values.
	starpu_shutdown();
	START_OR_RETURN("lws", 2);
	EXPECT_EQ(starpu_perf_knob_name_to_id(kGlobal, "test.knobs.g_tasks_counted"), counted);
	EXPECT_EQ(starpu_perf_knob_get_global_int64_value(counted), 0);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(weight, "eager"), 1.0);
}

// ------------------------------------------------------ the listing tool

// Runs astrolabe-perf-list with args (stderr dropped); returns its stdout, its exit status in *status.
std::string run_perf_list(const std::string &args, int *status)
{
	std::string out;
	FILE *p = popen((env_or("ASTRO_TEST_TOOLS_DIR", "") + "/astrolabe-perf-list " + args + " 2>/dev/null").c_str(), "r");
	if (!p) {
		*status = -1;
		return out;
	}
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

TEST_F(Knobs, ListingToolShowsEveryKnobWithItsValues)
{
	std::string tool = env_or("ASTRO_TEST_TOOLS_DIR", "") + "/astrolabe-perf-list";
	if (env_or("ASTRO_TEST_TOOLS_DIR", "").empty() || !file_exists(tool))
		GTEST_SKIP() << "astrolabe-perf-list is not built here (ASTRO_TEST_TOOLS_DIR)";
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("knobs_testgroup.so"));
	ScopedEnv path("STARPU_PLUGIN_PATH", build_plugin_path() + ":" + dir.path());
	ScopedEnv ncpu("STARPU_NCPU", "2");
	ScopedEnv calibrate("STARPU_CALIBRATE", "2");

	int status;
	std::string text = run_perf_list("", &status);
	ASSERT_EQ(status, 0) << text;
	EXPECT_TRUE(contains(text, "\nscope global: 4 knobs\n  starpu.global.g_calibrate_knob  [int32, one of 0, 1, 2, default 2] (kernel)\n")) << text;
	EXPECT_TRUE(contains(text, "  starpu.worker.w_enable_worker_knob  [int32, on/off, default 1] (kernel)\n")) << text;
	EXPECT_TRUE(contains(text, "      value: worker 0: 1, worker 1: 1\n")) << text;
	EXPECT_TRUE(contains(text, "  starpu.task.s_max_priority_cap_knob  [int32, in [-5, 5], default 5] (kernel)\n")) << text;
	EXPECT_TRUE(contains(text, "      value: lws: 5\n")) << text;
	EXPECT_TRUE(contains(text, "  test.knobs.g_tasks_counted  [int64, any value, default 0, read-only] (knobs_testgroup)\n")) << text;
	EXPECT_TRUE(contains(text, "  test.knobs.s_eager_weight_knob  [double, in [0.5, 2], default 1] (knobs_testgroup)\n"
				   "      a weight that only eager has\n      value: eager: 1\n")) << text;

	// The JSON, read by Python's json module: each knob written back on a line of its own, as json.dumps writes it.
	if (!have_program("python3"))
		GTEST_SKIP() << "python3 is needed to read the JSON";
	std::string json = run_perf_list("--json | python3 -c 'import json,sys; d=json.load(sys.stdin); "
					 "[print(json.dumps(k)) for k in d[\"knobs\"]]'",
					 &status);
	ASSERT_EQ(status, 0) << json;
	EXPECT_EQ(json.find("{\"id\": 1, \"name\": \"starpu.global.g_calibrate_knob\", \"scope\": \"global\", \"type\": \"int32\", "
			    "\"module\": \"kernel\", \"help\": \""),
		  0u)
		<< "the knobs in order: " << json;
	EXPECT_TRUE(contains(json, "\"read_only\": false, \"check\": \"set\", \"values\": [0, 1, 2], \"default\": 2, \"value\": 2}")) << json;
	EXPECT_TRUE(contains(json, "\"check\": \"range\", \"min\": 0, \"max\": ")) << json;
	EXPECT_TRUE(contains(json, "\"check\": \"onoff\", \"default\": 1, \"value\": [{\"worker\": 0, \"value\": 1}, {\"worker\": 1, \"value\": 1}]}"))
		<< json;
	EXPECT_TRUE(contains(json, "\"name\": \"test.knobs.g_tasks_counted\", \"scope\": \"global\", \"type\": \"int64\", "
				   "\"module\": \"knobs_testgroup\"")) << json;
	EXPECT_TRUE(contains(json, "\"read_only\": true, \"check\": \"any\", \"default\": 0, \"value\": 0}")) << json;
	// A help given in Latin-1 reads back with U+FFFD where the byte that is not UTF-8 was.
	EXPECT_TRUE(contains(json, "\"name\": \"test.knobs.g_count_tasks_knob\", \"scope\": \"global\", \"type\": \"int32\", "
				   "\"module\": \"knobs_testgroup\", \"help\": \"count the tasks that start, in caf\\ufffds (Latin-1"))
		<< json;
	// A double knob's figures are doubles.
	EXPECT_TRUE(contains(json, "\"min\": 0.5, \"max\": 2.0, \"default\": 1.0, \"value\": [{\"policy\": \"eager\", \"value\": 1.0}]}"))
		<< json;
}

} // namespace
