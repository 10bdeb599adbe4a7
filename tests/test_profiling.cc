// SPDX-License-Identifier: LGPL-2.1-or-later
// On-line performance feedback (starpu_profiling.h): the profiling status,
// per-task timestamps, per-codelet counts, the per-worker time split (checked
// against tasks of known duration and idle periods), bus feedback, data and
// memory statistics, and the summaries printed at shutdown, parsed back.
#include "helpers.h"

#include <cinttypes>
#include <cmath>
#include <map>
#include <sstream>

using namespace astro_test;

namespace {

// ------------------------------------------------------------------ helpers

double us(const timespec &ts)
{
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

double ms(const timespec &ts)
{
	return us(ts) * 1e-3;
}

bool le(const timespec &a, const timespec &b)
{
	return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec <= b.tv_nsec);
}

// A task that spins for *arg microseconds and records what it really took, and where.
struct Busy
{
	double wanted_us = 0;
	std::atomic<int> runs{0};
	double measured_us[STARPU_NMAXWORKERS] = {};
	int per_worker[STARPU_NMAXWORKERS] = {};
	std::mutex lock;
};

void busy_func(void **, void *arg)
{
	auto *b = static_cast<Busy *>(arg);
	double t0 = starpu_timing_now();
	while (starpu_timing_now() - t0 < b->wanted_us)
		;
	double took = starpu_timing_now() - t0;
	std::lock_guard<std::mutex> g(b->lock);
	b->measured_us[starpu_worker_get_id()] += took;
	b->per_worker[starpu_worker_get_id()]++;
	b->runs++;
}

// Every test states its profiling status: it survives starpu_shutdown(), as in StarPU.
class Profiling : public ::testing::Test
{
protected:
	void SetUp() override
	{
		starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
		ASSERT_EQ(init_with_ncpus(2), 0);
		ASSERT_EQ(starpu_worker_get_count(), 2u);
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
		starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	}
	starpu_codelet busy_cl_ = cpu_codelet(busy_func, 0, "busy");

	int submit_busy(Busy *b, double flops = 0.0)
	{
		starpu_task *t = starpu_task_create();
		t->cl = &busy_cl_;
		t->cl_arg = b;
		t->flops = flops;
		int ret = starpu_task_submit(t);
		if (ret)
			starpu_task_destroy(t);
		return ret;
	}
};

// ------------------------------------------------------------------- status

TEST_F(Profiling, StatusSetReturnsThePreviousOne)
{
	EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_DISABLE);
	EXPECT_EQ(starpu_profiling_status_set(STARPU_PROFILING_ENABLE), STARPU_PROFILING_DISABLE);
	EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_ENABLE);
	EXPECT_EQ(starpu_profiling_status_set(STARPU_PROFILING_ENABLE), STARPU_PROFILING_ENABLE);
	EXPECT_EQ(starpu_profiling_status_set(STARPU_PROFILING_DISABLE), STARPU_PROFILING_ENABLE);
	EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_DISABLE);
}

TEST_F(Profiling, BadStatusIsRefusedWithAMessage)
{
	std::string err = stderr_of([] { EXPECT_EQ(starpu_profiling_status_set(7), -EINVAL); });
	EXPECT_TRUE(contains(err, "STARPU_PROFILING_ENABLE")) << err;
	EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_DISABLE);
}

TEST(ProfilingEnv, StarpuProfilingEnablesAtInit)
{
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	{
		ScopedEnv env("STARPU_PROFILING", "1");
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_ENABLE);
	}
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	{
		ScopedEnv env("STARPU_PROFILING", "0");
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_DISABLE);
	}
}

TEST_F(Profiling, ProfilingInitFollowsTheEnvironment)
{
	{
		ScopedEnv env("STARPU_PROFILING", nullptr);
		starpu_profiling_init();
		EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_DISABLE);
	}
	ScopedEnv env("STARPU_PROFILING", "1");
	starpu_profiling_init();
	EXPECT_EQ(starpu_profiling_status_get(), STARPU_PROFILING_ENABLE);
}

// ---------------------------------------------------------------- timespecs

TEST(ProfilingTime, TimespecHelpers)
{
	timespec a = { 1, 500000000 }, b = { 3, 250000000 };
	EXPECT_DOUBLE_EQ(starpu_timing_timespec_to_us(&a), 1.5e6);
	EXPECT_DOUBLE_EQ(starpu_timing_timespec_delay_us(&a, &b), 1.75e6);
	timespec sum, diff;
	starpu_timespec_add(&a, &b, &sum);
	EXPECT_EQ(sum.tv_sec, 4);
	EXPECT_EQ(sum.tv_nsec, 750000000);
	starpu_timespec_sub(&b, &a, &diff);
	EXPECT_EQ(diff.tv_sec, 1);
	EXPECT_EQ(diff.tv_nsec, 750000000);
	starpu_timespec_accumulate(&diff, &a);
	EXPECT_EQ(diff.tv_sec, 3);
	EXPECT_EQ(diff.tv_nsec, 250000000);
	EXPECT_TRUE(starpu_timespec_cmp(&a, &b, <));
	starpu_timespec_clear(&a);
	EXPECT_EQ(a.tv_sec, 0);
	EXPECT_EQ(a.tv_nsec, 0);
}

// ----------------------------------------------------------------- per task

struct Seen
{
	starpu_profiling_task_info info{};
	bool had_info = false;
	bool current_matches = false;
	timespec exp_end{};
	double callback_us = 0;
};

void seen_busy(void **, void *arg)
{
	auto *s = static_cast<Seen *>(arg);
	starpu_worker_get_current_task_exp_end((unsigned)starpu_worker_get_id(), &s->exp_end);
	double t0 = starpu_timing_now();
	while (starpu_timing_now() - t0 < 1000)
		;
}

void seen_callback(void *arg)
{
	auto *s = static_cast<Seen *>(arg);
	starpu_task *task = starpu_task_get_current();
	s->current_matches = task && task->callback_arg == arg;
	if (task && task->profiling_info) {
		s->had_info = true;
		s->info = *task->profiling_info;
	}
	double t0 = starpu_timing_now();
	while (starpu_timing_now() - t0 < 200)
		;
	s->callback_us = starpu_timing_now() - t0;
}

TEST_F(Profiling, TaskTimestampsAreOrderedAndReadableFromTheCallback)
{
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	starpu_codelet cl = cpu_codelet(seen_busy, 0, "seen");
	const int n = 20;
	std::vector<Seen> seen(n);
	std::vector<starpu_task *> tasks;
	double before_us = starpu_timing_now();
	for (int i = 0; i < n; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = &seen[i];
		t->callback_func = seen_callback;
		t->callback_arg = &seen[i];
		t->detach = 0;
		t->destroy = 0;
		ASSERT_EQ(starpu_task_submit(t), 0);
		tasks.push_back(t);
	}
	for (auto *t : tasks)
		ASSERT_EQ(starpu_task_wait(t), 0);
	for (int i = 0; i < n; i++) {
		starpu_task *t = tasks[i];
		ASSERT_NE(t->profiling_info, nullptr);
		const starpu_profiling_task_info &pi = *t->profiling_info;
		EXPECT_TRUE(seen[i].had_info);
		EXPECT_TRUE(seen[i].current_matches);
		EXPECT_GE(pi.workerid, 0);
		EXPECT_LT(pi.workerid, 2);
		// submit <= push <= pop <= fetch <= start <= end <= release <= callback
		EXPECT_TRUE(le(pi.submit_time, pi.push_start_time));
		EXPECT_TRUE(le(pi.push_start_time, pi.push_end_time));
		EXPECT_TRUE(le(pi.pop_start_time, pi.pop_end_time));
		EXPECT_TRUE(le(pi.push_end_time, pi.pop_end_time));
		EXPECT_TRUE(le(pi.pop_end_time, pi.acquire_data_start_time));
		EXPECT_TRUE(le(pi.acquire_data_start_time, pi.acquire_data_end_time));
		EXPECT_TRUE(le(pi.acquire_data_end_time, pi.start_time));
		EXPECT_TRUE(le(pi.start_time, pi.end_time));
		EXPECT_TRUE(le(pi.end_time, pi.release_data_start_time));
		EXPECT_TRUE(le(pi.release_data_start_time, pi.release_data_end_time));
		EXPECT_TRUE(le(pi.release_data_end_time, pi.callback_start_time));
		EXPECT_TRUE(le(pi.callback_start_time, pi.callback_end_time));
		// The implementation spun 1 ms, the callback 0.2 ms.
		EXPECT_GE(starpu_timing_timespec_delay_us(&t->profiling_info->start_time, &t->profiling_info->end_time), 1000.0);
		EXPECT_GE(starpu_timing_timespec_delay_us(&t->profiling_info->callback_start_time,
							  &t->profiling_info->callback_end_time), seen[i].callback_us);
		// The callback saw everything up to its own start.
		EXPECT_EQ(us(seen[i].info.start_time), us(pi.start_time));
		EXPECT_EQ(us(seen[i].info.callback_start_time), us(pi.callback_start_time));
		// Relative to starpu_init(): after the runtime started, before now.
		EXPECT_GT(us(pi.submit_time), 0.0);
		EXPECT_LE(starpu_timing_timespec_delay_us(&t->profiling_info->submit_time, &t->profiling_info->callback_end_time),
			  starpu_timing_now() - before_us);
		// Expected end, asked from the codelet: no model, so the date it asked at (after the start).
		EXPECT_TRUE(le(pi.start_time, seen[i].exp_end));
		EXPECT_TRUE(le(seen[i].exp_end, pi.end_time));
		EXPECT_EQ(pi.used_cycles, 0u);
		EXPECT_EQ(pi.energy_consumed, 0.0);
		starpu_task_destroy(t);
	}
}

// As in StarPU: callback times only for a task with a callback; releasing
// the data takes no time for a task without data, and is stamped for one with.
void nothing(void **, void *) {}

TEST_F(Profiling, CallbackAndReleaseTimesFollowWhatTheTaskHas)
{
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	starpu_codelet bare = cpu_codelet(nothing, 0, "bare");
	starpu_task *t = starpu_task_create();
	t->cl = &bare;
	t->detach = 0;
	t->destroy = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait(t), 0);
	ASSERT_NE(t->profiling_info, nullptr);
	const starpu_profiling_task_info &pi = *t->profiling_info;
	EXPECT_EQ(us(pi.callback_start_time), 0.0);
	EXPECT_EQ(us(pi.callback_end_time), 0.0);
	EXPECT_GT(us(pi.end_time), 0.0);
	EXPECT_EQ(us(pi.release_data_start_time), us(pi.end_time));
	EXPECT_EQ(us(pi.release_data_end_time), us(pi.end_time));
	starpu_task_destroy(t);

	int value = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));
	starpu_codelet with_data = cpu_codelet(nothing, 1, "with_data");
	with_data.modes[0] = STARPU_RW;
	t = starpu_task_create();
	t->cl = &with_data;
	t->handles[0] = h;
	t->detach = 0;
	t->destroy = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait(t), 0);
	const starpu_profiling_task_info &di = *t->profiling_info;
	EXPECT_TRUE(le(di.end_time, di.release_data_start_time));
	EXPECT_TRUE(le(di.release_data_start_time, di.release_data_end_time));
	EXPECT_GT(us(di.release_data_end_time), 0.0);
	EXPECT_EQ(us(di.callback_start_time), 0.0);
	starpu_task_destroy(t);
	starpu_data_unregister(h);
}

TEST_F(Profiling, NoTaskInfoWhileDisabled)
{
	Busy b;
	starpu_task *t = starpu_task_create();
	t->cl = &busy_cl_;
	t->cl_arg = &b;
	t->synchronous = 1;
	t->destroy = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);
	EXPECT_EQ(t->profiling_info, nullptr);
	starpu_task_destroy(t);
}

TEST_F(Profiling, StackTasksAndResubmissionsKeepOneInfo)
{
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	Busy b;
	starpu_task t;
	starpu_task_init(&t);
	t.cl = &busy_cl_;
	t.cl_arg = &b;
	t.synchronous = 1;
	ASSERT_EQ(starpu_task_submit(&t), 0);
	ASSERT_NE(t.profiling_info, nullptr);
	starpu_profiling_task_info *first = t.profiling_info;
	double first_submit = us(first->submit_time);
	ASSERT_EQ(starpu_task_submit(&t), 0);
	EXPECT_EQ(t.profiling_info, first);
	EXPECT_GT(us(t.profiling_info->submit_time), first_submit);
	starpu_task_clean(&t);
	EXPECT_EQ(t.profiling_info, nullptr);
}

// Many tasks from several threads while workers free them: the pools hand blocks back (ASan/TSan check this).
TEST_F(Profiling, ManyTasksFromSeveralThreads)
{
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	Busy b;
	const int per_thread = 2000, nthreads = 3;
	std::vector<std::thread> threads;
	for (int k = 0; k < nthreads; k++)
		threads.emplace_back([&] {
			for (int i = 0; i < per_thread; i++)
				ASSERT_EQ(submit_busy(&b), 0);
		});
	for (auto &th : threads)
		th.join();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(b.runs, per_thread * nthreads);
}

// --------------------------------------------------------------- per codelet

TEST_F(Profiling, PerWorkerStatsCountEveryExecution)
{
	Busy b;
	b.wanted_us = 50;
	starpu_codelet cl = cpu_codelet(busy_func, 0, "counted");
	const int n = 60;
	for (int i = 0; i < n; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = &b;
		if (i % 3 == 0) {
			t->execute_on_a_specific_worker = 1;
			t->workerid = 1;
		}
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(cl.per_worker_stats[0] + cl.per_worker_stats[1], (unsigned long)n);
	EXPECT_EQ(cl.per_worker_stats[0], (unsigned long)b.per_worker[0]);
	EXPECT_EQ(cl.per_worker_stats[1], (unsigned long)b.per_worker[1]);
	EXPECT_GE(cl.per_worker_stats[1], (unsigned long)n / 3);

	std::string out = stderr_of([&] { starpu_codelet_display_stats(&cl); });
	auto lines = lines_of(out);
	ASSERT_EQ(lines.size(), 3u) << out;
	EXPECT_EQ(lines[0], "Statistics for codelet counted");
	for (int w = 0; w < 2; w++) {
		char expected[128];
		snprintf(expected, sizeof(expected), "\tCPU %d -> %lu / %d (%2.2f %%)", w, cl.per_worker_stats[w], n,
			 100.0 * cl.per_worker_stats[w] / n);
		EXPECT_EQ(lines[1 + w], expected);
	}
}

TEST(ProfilingEnv, CodeletProfilingZeroCountsNothing)
{
	ScopedEnv env("STARPU_CODELET_PROFILING", "0");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	Busy b;
	starpu_codelet cl = cpu_codelet(busy_func, 0, "uncounted");
	for (int i = 0; i < 10; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = &b;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(b.runs, 10);
	EXPECT_EQ(cl.per_worker_stats[0] + cl.per_worker_stats[1], 0ul);
}

// ---------------------------------------------------------------- per worker

void expect_split_sums_to_total(const starpu_profiling_worker_info &info)
{
	double total = us(info.total_time);
	double split = us(info.executing_time) + us(info.callback_time) + us(info.waiting_time) + us(info.sleeping_time) +
		       us(info.scheduling_time);
	EXPECT_LE(split, total + 1.0) << "the split never exceeds the total";
	EXPECT_GE(split, 0.0);
	// The "all" view contains the split view.
	EXPECT_GE(us(info.all_executing_time) + 0.01, us(info.executing_time));
	EXPECT_GE(us(info.all_callback_time) + 0.01, us(info.callback_time));
	EXPECT_GE(us(info.all_waiting_time) + 0.01, us(info.waiting_time));
	EXPECT_GE(us(info.all_sleeping_time) + 0.01, us(info.sleeping_time));
	EXPECT_GE(us(info.all_scheduling_time) + 0.01, us(info.scheduling_time));
	EXPECT_NEAR(us(info.all_executing_time), us(info.executing_time), 0.01);
}

TEST_F(Profiling, ExecutingTimeIsTheTimeTasksTook)
{
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	Busy b;
	b.wanted_us = 2000;
	const int n = 40;
	std::vector<starpu_task *> tasks;
	for (int i = 0; i < n; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &busy_cl_;
		t->cl_arg = &b;
		t->flops = 2e6;
		t->destroy = 0;
		ASSERT_EQ(starpu_task_submit(t), 0);
		tasks.push_back(t);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(b.runs, n);
	// Each task's own dates, summed per worker: from its start to its end, and from the
	// start of the pop that found it to its end. No wall-clock expectation: a loaded
	// machine stretches both the tasks and the gaps, never these relations.
	double started_to_ended[2] = {}, popped_to_ended[2] = {};
	for (starpu_task *t : tasks) {
		ASSERT_NE(t->profiling_info, nullptr);
		starpu_profiling_task_info &pi = *t->profiling_info;
		ASSERT_TRUE(pi.workerid == 0 || pi.workerid == 1) << pi.workerid;
		started_to_ended[pi.workerid] += starpu_timing_timespec_delay_us(&pi.start_time, &pi.end_time);
		popped_to_ended[pi.workerid] += starpu_timing_timespec_delay_us(&pi.pop_start_time, &pi.end_time);
		starpu_task_destroy(t);
	}
	int executed = 0;
	for (int w = 0; w < 2; w++) {
		starpu_profiling_worker_info info;
		ASSERT_EQ(starpu_profiling_worker_get_info(w, &info), 0);
		EXPECT_EQ(info.executed_tasks, b.per_worker[w]) << "worker " << w;
		executed += info.executed_tasks;
		double executing = us(info.executing_time);
		// The worker executed exactly while its tasks ran (dates in ns: 1 ns of rounding per task),
		EXPECT_NEAR(executing, started_to_ended[w], 1e-3 * (b.per_worker[w] + 1)) << "worker " << w;
		// and the implementations' own measure lies within those dates.
		EXPECT_GE(executing, b.measured_us[w]) << "worker " << w;
		EXPECT_DOUBLE_EQ(info.flops, 2e6 * b.per_worker[w]);
		expect_split_sums_to_total(info);
		// From the pop that found a task to its end the worker is always in some state
		// (scheduling, waiting for data, executing): only the gaps between tasks may be uncategorised.
		double split = us(info.executing_time) + us(info.callback_time) + us(info.waiting_time) +
			       us(info.sleeping_time) + us(info.scheduling_time);
		EXPECT_GE(split + 1e-3 * (b.per_worker[w] + 1), popped_to_ended[w]) << "worker " << w;
	}
	EXPECT_EQ(executed, n);
}

TEST_F(Profiling, FlopsGivenToTaskInsertCount)
{
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	Busy b;
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(starpu_task_insert(&busy_cl_, STARPU_CL_ARGS_NFREE, &b, sizeof(b), STARPU_FLOPS, 5e6, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	double flops = 0;
	for (int w = 0; w < 2; w++) {
		starpu_profiling_worker_info info;
		ASSERT_EQ(starpu_profiling_worker_get_info(w, &info), 0);
		flops += info.flops;
	}
	EXPECT_DOUBLE_EQ(flops, 8 * 5e6);
}

// Both workers asleep: a worker out of work polls a while before it sleeps,
// and on a loaded machine that while may be a good part of a short interval.
bool workers_asleep()
{
	return wait_until([] { return starpu_worker_is_sleeping(0) && starpu_worker_is_sleeping(1); });
}

TEST_F(Profiling, SleepingTimeGrowsWhenWorkersLackWork)
{
	ASSERT_TRUE(workers_asleep());
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	for (int w = 0; w < 2; w++)
		ASSERT_EQ(starpu_profiling_worker_get_info(w, nullptr), 0);
	sleep_ms(150);
	for (int w = 0; w < 2; w++) {
		starpu_profiling_worker_info info;
		ASSERT_EQ(starpu_profiling_worker_get_info(w, &info), 0);
		EXPECT_GE(ms(info.total_time), 140.0);
		EXPECT_GE(us(info.sleeping_time), 0.9 * us(info.total_time)) << "worker " << w;
		EXPECT_EQ(info.executed_tasks, 0);
		EXPECT_EQ(us(info.executing_time), 0.0);
		expect_split_sums_to_total(info);
	}
	// Then some work, then idle again: sleeping grows with the idle period. (The
	// interval with the work is not compared with the idle one: on a loaded machine
	// it may last longer, and sleep longer, than the idle one.)
	Busy b;
	b.wanted_us = 1000;
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(submit_busy(&b), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_TRUE(workers_asleep());
	starpu_profiling_worker_info with_work[2], idle[2];
	for (int w = 0; w < 2; w++) {
		ASSERT_EQ(starpu_profiling_worker_get_info(w, &with_work[w]), 0);
		EXPECT_EQ(us(with_work[w].executing_time) > 0.0, b.per_worker[w] > 0) << "worker " << w;
		EXPECT_LE(us(with_work[w].sleeping_time), us(with_work[w].total_time) - us(with_work[w].executing_time) + 1.0);
	}
	sleep_ms(100);
	for (int w = 0; w < 2; w++) {
		ASSERT_EQ(starpu_profiling_worker_get_info(w, &idle[w]), 0);
		EXPECT_EQ(idle[w].executed_tasks, 0);
		EXPECT_GE(ms(idle[w].sleeping_time), 90.0) << "worker " << w;
		EXPECT_GE(us(idle[w].sleeping_time), 0.9 * us(idle[w].total_time)) << "worker " << w;
	}
}

TEST_F(Profiling, GetInfoResetsTheWorker)
{
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	Busy b;
	b.wanted_us = 1000;
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(submit_busy(&b), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_profiling_worker_info first[2], second[2];
	double before_first[2], after_second[2];
	for (int w = 0; w < 2; w++) {
		before_first[w] = starpu_timing_now();
		ASSERT_EQ(starpu_profiling_worker_get_info(w, &first[w]), 0);
	}
	for (int w = 0; w < 2; w++) {
		ASSERT_EQ(starpu_profiling_worker_get_info(w, &second[w]), 0);
		after_second[w] = starpu_timing_now();
		EXPECT_EQ(second[w].executed_tasks, 0);
		EXPECT_EQ(us(second[w].executing_time), 0.0);
		// Only the time between the two readings (bracketed: a loaded machine may stretch it).
		EXPECT_LE(us(second[w].total_time), after_second[w] - before_first[w] + 1.0);
		// The second interval starts where the first ended.
		EXPECT_NEAR(us(second[w].start_time), us(first[w].start_time) + us(first[w].total_time), 1.0);
	}
	EXPECT_EQ(first[0].executed_tasks + first[1].executed_tasks, 10);
}

TEST_F(Profiling, EnablingResetsAndDisablingKeepsItReadable)
{
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	Busy b;
	b.wanted_us = 1000;
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(submit_busy(&b), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);

	// Enabling again forgets it.
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	// Before the readings that start the interval measured below: its bound holds however loaded the machine is.
	double enabled_at = starpu_timing_now();
	for (int w = 0; w < 2; w++) {
		starpu_profiling_worker_info info;
		ASSERT_EQ(starpu_profiling_worker_get_info(w, &info), 0);
		EXPECT_EQ(info.executed_tasks, 0);
		EXPECT_EQ(us(info.executing_time), 0.0);
	}

	for (int i = 0; i < 10; i++)
		ASSERT_EQ(submit_busy(&b), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	double enabled_us = starpu_timing_now() - enabled_at;
	sleep_ms(60);
	// Disabled: what was measured before is still there, and time stopped at the disable.
	double executing = 0;
	int executed = 0;
	for (int w = 0; w < 2; w++) {
		starpu_profiling_worker_info info;
		ASSERT_EQ(starpu_profiling_worker_get_info(w, &info), 0);
		executed += info.executed_tasks;
		executing += us(info.executing_time);
		expect_split_sums_to_total(info);
		EXPECT_LE(us(info.total_time), enabled_us + 1.0) << "the 60 ms after the disable are not counted";
	}
	EXPECT_EQ(executed, 10);
	EXPECT_GE(executing, 10 * 1000.0);
}

// executed_tasks counts the tasks run while profiling was on, as StarPU does:
// none before the first enable, none after a disable.
TEST_F(Profiling, ExecutedTasksCountOnlyWhileProfiling)
{
	Busy b;
	b.wanted_us = 100;
	auto run = [&](int n) {
		for (int i = 0; i < n; i++)
			ASSERT_EQ(submit_busy(&b), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	};
	auto executed = [] {
		int n = 0;
		for (int w = 0; w < 2; w++) {
			starpu_profiling_worker_info info;
			EXPECT_EQ(starpu_profiling_worker_get_info(w, &info), 0);
			n += info.executed_tasks;
		}
		return n;
	};
	// Never enabled: nothing counts.
	run(6);
	EXPECT_EQ(executed(), 0);
	run(4);
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	run(10);
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	// The tasks run after the disable do not add to the 10.
	run(7);
	EXPECT_EQ(executed(), 10);
	run(3);
	EXPECT_EQ(executed(), 0);
	// Enabled again: counting starts from zero, without the tasks run while off.
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	run(5);
	EXPECT_EQ(executed(), 5);
}

TEST_F(Profiling, BadWorkerIsRefusedWithAMessage)
{
	starpu_profiling_worker_info info;
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_profiling_worker_get_info(-1, &info), -EINVAL);
		EXPECT_EQ(starpu_profiling_worker_get_info(2, &info), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "unknown worker 2")) << err;
}

// Profiling changes no result: the same computation with and without it.
void add_one(void **buffers, void *)
{
	unsigned *v = (unsigned *)STARPU_VECTOR_GET_PTR(buffers[0]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	for (unsigned i = 0; i < n; i++)
		v[i] = v[i] * 3u + 1u; /* wraps, as unsigned arithmetic may */
}

std::vector<int> compute(bool profiling)
{
	starpu_profiling_status_set(profiling ? STARPU_PROFILING_ENABLE : STARPU_PROFILING_DISABLE);
	std::vector<int> v(64);
	for (size_t i = 0; i < v.size(); i++)
		v[i] = (int)i;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), v.size(), sizeof(int));
	starpu_codelet cl = cpu_codelet(add_one, 1, "add_one");
	cl.modes[0] = STARPU_RW;
	for (int i = 0; i < 50; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->handles[0] = h;
		EXPECT_EQ(starpu_task_submit(t), 0);
	}
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	return v;
}

TEST_F(Profiling, ResultsDoNotDependOnProfiling)
{
	std::vector<int> off = compute(false), on = compute(true);
	EXPECT_EQ(off, on);
}

// -------------------------------------------------------------------- buses

TEST_F(Profiling, MainMemoryOnlyBuildHasNoBus)
{
	EXPECT_EQ(starpu_bus_get_count(), 0);
	EXPECT_EQ(starpu_bus_get_id(0, 0), -1);
	EXPECT_EQ(starpu_bus_get_id(-1, 99), -1);
	starpu_profiling_bus_info info;
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_bus_get_profiling_info(0, &info), -EINVAL);
		EXPECT_EQ(starpu_bus_get_src(0), -1);
		EXPECT_EQ(starpu_bus_get_dst(3), -1);
	});
	EXPECT_TRUE(contains(err, "unknown bus 0")) << err;
	char name[32];
	EXPECT_GT(starpu_memory_node_get_name(0, name, sizeof(name)), 0);
	EXPECT_STREQ(name, "NUMA 0");
	EXPECT_EQ(starpu_memory_node_get_name(5, name, sizeof(name)), -EINVAL);
}

// ---------------------------------------------------------------- summaries

struct SplitLine
{
	double total, parts[5], overhead;
};

// Parses "...time split: total T ms = executing: A ms + callback: B ms + ... + overhead O ms", per worker
// (no percentages) or global (each part followed by its percentage).
bool parse_split(const std::string &line, SplitLine *out, double *percent_sum = nullptr)
{
	size_t at = line.find("time split: ");
	if (at == std::string::npos)
		return false;
	const char *s = line.c_str() + at;
	double *p = out->parts;
	int n = sscanf(s, "time split: total %lf ms = executing: %lf ms + callback: %lf ms + waiting: %lf ms + "
		       "sleeping: %lf ms + scheduling: %lf ms + overhead %lf ms",
		       &out->total, &p[0], &p[1], &p[2], &p[3], &p[4], &out->overhead);
	if (n == 7)
		return true;
	double pct[6];
	n = sscanf(s, "time split: total %lf ms = executing: %lf ms (%lf%%) + callback: %lf ms (%lf%%) + waiting: %lf ms (%lf%%) + "
		   "sleeping: %lf ms (%lf%%) + scheduling: %lf ms (%lf%%) + overhead %lf ms (%lf%%)",
		   &out->total, &p[0], &pct[0], &p[1], &pct[1], &p[2], &pct[2], &p[3], &pct[3], &p[4], &pct[4], &out->overhead, &pct[5]);
	if (n != 13)
		return false;
	if (percent_sum) {
		*percent_sum = 0;
		for (double x : pct)
			*percent_sum += x;
	}
	return true;
}

TEST(ProfilingSummary, WorkerStatsAtShutdownInAFile)
{
	TempDir dir;
	std::string file = dir.file("workers.txt");
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	{
		ScopedEnv prof("STARPU_PROFILING", "1"), stats("STARPU_WORKER_STATS", "1"), to("STARPU_WORKER_STATS_FILE", file);
		Runtime rt(2);
		ASSERT_TRUE(rt.ok());
		Busy b;
		b.wanted_us = 1500;
		starpu_codelet cl = cpu_codelet(busy_func, 0, "summary");
		for (int i = 0; i < 20; i++) {
			starpu_task *t = starpu_task_create();
			t->cl = &cl;
			t->cl_arg = &b;
			t->flops = 3e6;
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	auto lines = lines_of(read_file(file));
	ASSERT_FALSE(lines.empty());
	ASSERT_EQ(lines[0], "Worker stats:");
	int tasks = 0, workers = 0, gflops_lines = 0;
	bool global = false;
	for (size_t i = 1; i < lines.size(); i++) {
		const std::string &l = lines[i];
		if (l == "CPU 0" || l == "CPU 1") {
			workers++;
			ASSERT_LT(i + 4, lines.size());
			int n = -1;
			ASSERT_EQ(sscanf(lines[i + 1].c_str(), "\t%d task(s)", &n), 1) << lines[i + 1];
			tasks += n;
			SplitLine s;
			ASSERT_EQ(lines[i + 2].rfind("\ttime split: ", 0), 0u) << lines[i + 2];
			ASSERT_TRUE(parse_split(lines[i + 2], &s)) << lines[i + 2];
			double sum = s.overhead;
			for (double p : s.parts)
				sum += p;
			EXPECT_NEAR(sum, s.total, 0.05) << lines[i + 2];
			EXPECT_GE(s.overhead, -0.01);
			double all[5];
			ASSERT_EQ(sscanf(lines[i + 3].c_str(),
					 "\tall time: executing: %lf ms callback: %lf ms waiting: %lf ms sleeping: %lf ms scheduling: %lf ms",
					 &all[0], &all[1], &all[2], &all[3], &all[4]), 5) << lines[i + 3];
			EXPECT_NEAR(all[0], s.parts[0], 0.011);
			double gflops = 0;
			if (n > 0) {
				ASSERT_EQ(sscanf(lines[i + 4].c_str(), "\t%lf GFlop/s", &gflops), 1) << lines[i + 4];
				EXPECT_NEAR(gflops, 3e6 * n / s.total / 1e6, 0.01 * gflops + 1e-4);
				gflops_lines++;
			}
		} else if (l.rfind("Global time split: ", 0) == 0) {
			global = true;
			SplitLine s;
			double percent = 0;
			ASSERT_TRUE(parse_split(l, &s, &percent)) << l;
			EXPECT_NEAR(percent, 100.0, 0.1) << l;
			EXPECT_NEAR(s.total, s.parts[0] + s.parts[1] + s.parts[2] + s.parts[3] + s.parts[4] + s.overhead, 0.05) << l;
		}
	}
	EXPECT_EQ(workers, 2);
	EXPECT_EQ(tasks, 20);
	EXPECT_GE(gflops_lines, 1);
	EXPECT_TRUE(global);
}

TEST(ProfilingSummary, WorkerStatsWithoutProfilingOnlyCountTasks)
{
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	ScopedEnv prof("STARPU_PROFILING", nullptr), stats("STARPU_WORKER_STATS", "1"), to("STARPU_WORKER_STATS_FILE", nullptr);
	std::string out = stderr_of([] {
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		Busy b;
		starpu_codelet cl = cpu_codelet(busy_func, 0, "count_only");
		for (int i = 0; i < 5; i++) {
			starpu_task *t = starpu_task_create();
			t->cl = &cl;
			t->cl_arg = &b;
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	EXPECT_EQ(out, "Worker stats:\nCPU 0\n\t5 task(s)\n");
}

TEST(ProfilingSummary, BusStatsPrintNoLinkOnMainMemoryOnly)
{
	TempDir dir;
	std::string file = dir.file("bus.txt");
	{
		ScopedEnv stats("STARPU_BUS_STATS", "1"), to("STARPU_BUS_STATS_FILE", file);
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
	}
	EXPECT_EQ(read_file(file), "Data transfer stats:\nTotal transfers: 0.00 B\n");
}

TEST(ProfilingSummary, DisplayStatsFollowsTheEnvironment)
{
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	{
		ScopedEnv bus("STARPU_BUS_STATS", nullptr), workers("STARPU_WORKER_STATS", nullptr);
		EXPECT_EQ(stderr_of([] { starpu_display_stats(); }), "");
	}
	ScopedEnv bus("STARPU_BUS_STATS", "1"), workers("STARPU_WORKER_STATS", "1");
	ScopedEnv bus_file("STARPU_BUS_STATS_FILE", nullptr), workers_file("STARPU_WORKER_STATS_FILE", nullptr);
	EXPECT_EQ(stderr_of([] { starpu_display_stats(); }),
		  "Data transfer stats:\nTotal transfers: 0.00 B\nWorker stats:\nCPU 0\n\t0 task(s)\n");
}

TEST(ProfilingSummary, UnwritableStatsFileFallsBackToStderr)
{
	ScopedEnv stats("STARPU_BUS_STATS", "1"), to("STARPU_BUS_STATS_FILE", "/nonexistent-dir/bus.txt");
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	std::string out = stderr_of([] { starpu_profiling_bus_helper_display_summary(); });
	EXPECT_TRUE(contains(out, "STARPU_BUS_STATS_FILE")) << out;
	EXPECT_TRUE(contains(out, "Data transfer stats:\nTotal transfers: 0.00 B\n")) << out;
}

// A full disk loses the statistics, and says so once, naming the file and the reason.
TEST(ProfilingSummary, WriteErrorsOnStatsFilesAreSaid)
{
	if (!file_exists("/dev/full"))
		GTEST_SKIP() << "no /dev/full here";
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	ScopedEnv bus("STARPU_BUS_STATS", "1"), bus_to("STARPU_BUS_STATS_FILE", "/dev/full");
	ScopedEnv workers("STARPU_WORKER_STATS", "1"), workers_to("STARPU_WORKER_STATS_FILE", "/dev/full");
	std::string err = stderr_of([] {
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
	});
	EXPECT_EQ(err, "[astrolabe] error: cannot write the statistics to STARPU_BUS_STATS_FILE='/dev/full' (" +
			       std::string(strerror(ENOSPC)) + "): they are lost; give a file on a disk with room\n"
			       "[astrolabe] error: cannot write the statistics to STARPU_WORKER_STATS_FILE='/dev/full' (" +
			       std::string(strerror(ENOSPC)) + "): they are lost; give a file on a disk with room\n");
}

// ----------------------------------------------------------- data statistics

void touch(void **, void *)
{
}

// n tasks reading h, n writing it, n reading it beside a scratch buffer (allocated, not fetched).
void run_data_tasks(starpu_data_handle_t h, starpu_data_handle_t scratch, int n)
{
	static starpu_codelet read_cl = cpu_codelet(touch, 1, "read"), rw_cl = cpu_codelet(touch, 1, "rw"),
			      scratch_cl = cpu_codelet(touch, 2, "scratch");
	read_cl.modes[0] = STARPU_R;
	rw_cl.modes[0] = STARPU_RW;
	scratch_cl.modes[0] = STARPU_R;
	scratch_cl.modes[1] = STARPU_SCRATCH;
	for (int i = 0; i < n; i++) {
		for (starpu_codelet *cl : { &read_cl, &rw_cl, &scratch_cl }) {
			starpu_task *t = starpu_task_create();
			t->cl = cl;
			t->handles[0] = h;
			if (cl == &scratch_cl)
				t->handles[1] = scratch;
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

// What two CPU workers print at shutdown after n rounds of run_data_tasks (stderr).
std::string stats_run(int n)
{
	return stderr_of([n] {
		Runtime rt(2);
		ASSERT_TRUE(rt.ok());
		int x = 0;
		starpu_data_handle_t h, scratch;
		starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
		starpu_vector_data_register(&scratch, -1, 0, 16, sizeof(double));
		run_data_tasks(h, scratch, n);
		starpu_data_unregister(h);
		starpu_data_unregister(scratch);
	});
}

TEST(ProfilingDataStats, MsiAndAllocationStatsCountWhatHappened)
{
	ScopedEnv enable("STARPU_ENABLE_STATS", "1"), stats("STARPU_STATS", nullptr), bus("STARPU_BUS_STATS", nullptr);
	std::string out = stats_run(10);
	// 10 R + 10 RW + 10 R (beside the scratch) accesses, all hits in main memory; one scratch buffer
	// per worker that ran a scratch task, reused by its next ones (the home-less handle itself, only
	// ever a scratch, never gets a buffer of its own).
	EXPECT_TRUE(contains(out, "#-----\nMSI cache stats :\nTOTAL MSI stats\thit 30 (100.00 %)\tmiss 0 (0.00 %)\n"
				  "memory node NUMA 0\n\thit : 30 (100.00 %)\n\tmiss : 0 (0.00 %)\n#-----\n")) << out;
	EXPECT_TRUE(contains(out, "#-----\nAllocation cache stats:\nmemory node NUMA 0\n\ttotal alloc : 1\n"
				  "\tcached alloc: 0 (0.00 %)\n#-----\n") ||
		    contains(out, "#-----\nAllocation cache stats:\nmemory node NUMA 0\n\ttotal alloc : 2\n"
				  "\tcached alloc: 0 (0.00 %)\n#-----\n")) << out;
	EXPECT_TRUE(contains(out, "Data transfer stats:\nTotal transfers: 0.00 B\n")) << out;
}

// STARPU_ENABLE_STATS' first block is the execution: every task each worker ran, profiling off.
TEST(ProfilingDataStats, ExecutionBlockCountsEveryTask)
{
	ScopedEnv enable("STARPU_ENABLE_STATS", "1"), stats("STARPU_STATS", nullptr), prof("STARPU_PROFILING", nullptr);
	std::string out = stats_run(4);
	size_t at = out.find("#-----\nExecution stats :\nTOTAL executed tasks 12\n");
	ASSERT_NE(at, std::string::npos) << out;
	// One line per worker, their counts adding up to the total, before the MSI block.
	unsigned sum = 0, lines = 0;
	std::istringstream in(out.substr(at));
	std::string line;
	while (std::getline(in, line) && line.rfind("MSI", 0) != 0) {
		unsigned n = 0;
		if (line.rfind("worker CPU ", 0) == 0 && sscanf(line.c_str() + line.find('\t'), "\t%u task(s)", &n) == 1) {
			sum += n;
			lines++;
		}
	}
	EXPECT_EQ(lines, 2u) << out;
	EXPECT_EQ(sum, 12u) << out;
	EXPECT_LT(at, out.find("MSI cache stats")) << out;
}

TEST(ProfilingDataStats, StatsZeroSilencesThem)
{
	ScopedEnv enable("STARPU_ENABLE_STATS", "1"), stats("STARPU_STATS", "0");
	std::string out = stderr_of([] {
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
	});
	EXPECT_FALSE(contains(out, "MSI cache stats")) << out;
	EXPECT_FALSE(contains(out, "Execution stats")) << out;
}

TEST(ProfilingDataStats, MemoryStatsPerHandle)
{
	ScopedEnv mem("STARPU_MEMORY_STATS", "1");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int x = 0;
	starpu_data_handle_t h, scratch;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_variable_data_register(&scratch, -1, 0, sizeof(int));
	run_data_tasks(h, scratch, 4);
	std::string out = stderr_of([] { starpu_data_display_memory_stats(); });
	char handle_line[64];
	snprintf(handle_line, sizeof(handle_line), "Data : %p\n", (void *)h);
	EXPECT_TRUE(contains(out, "#-----\nMemory stats :\n#-----\nData on Node #0\n#-----\n")) << out;
	EXPECT_TRUE(contains(out, std::string(handle_line) + "Size : 4\n\n#--\nData access stats\n/!\\ Work Underway\n"
				  "Node #0\n\tDirect access : 12\n\tLoaded (Owner) : 0\n\tLoaded (Shared) : 0\n"
				  "\tInvalidated (was Owner) : 0\n\n")) << out;
	starpu_data_unregister(h);
	starpu_data_unregister(scratch);
	// Unregistered handles are no longer listed.
	out = stderr_of([] { starpu_data_display_memory_stats(); });
	EXPECT_FALSE(contains(out, handle_line)) << out;
}

// Seed 004 section 4.10: the handles still registered at starpu_shutdown() have their statistics
// printed then; STARPU_MEMORY_STATS=0 turns that off.
TEST(ProfilingDataStats, HandlesLeftRegisteredAreListedAtShutdown)
{
	static int x = 0;
	char handle_line[64] = "";
	for (const char *setting : { "1", "0" }) {
		ScopedEnv mem("STARPU_MEMORY_STATS", setting);
		std::string out = stderr_of([&] {
			Runtime rt(1);
			ASSERT_TRUE(rt.ok());
			starpu_data_handle_t h, gone;
			starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
			starpu_variable_data_register(&gone, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
			starpu_data_unregister(gone);
			snprintf(handle_line, sizeof(handle_line), "Data : %p\n", (void *)h);
			// h is left registered: the shutdown lists it.
		});
		if (setting[0] == '1') {
			EXPECT_TRUE(contains(out, "Memory stats :")) << out;
			EXPECT_TRUE(contains(out, std::string(handle_line) + "Size : 4\n")) << out;
		} else {
			EXPECT_FALSE(contains(out, "Memory stats")) << out;
			EXPECT_FALSE(contains(out, handle_line)) << out;
		}
	}
}

TEST(ProfilingDataStats, MemoryStatsNotCollectedSaysHow)
{
	ScopedEnv mem("STARPU_MEMORY_STATS", nullptr);
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	std::string out = stderr_of([] { starpu_data_display_memory_stats(); });
	EXPECT_TRUE(contains(out, "STARPU_MEMORY_STATS=1")) << out;
}

// --------------------------------------------------------------- the tool

TEST(MachineDisplay, ListsWorkersTopologyAndBuses)
{
	const char *tool = "../tools/starpu_machine_display";
	if (!file_exists(tool))
		GTEST_SKIP() << tool << " is not built";
	std::string cmd = std::string("STARPU_NCPU=2 ") + tool + " 2>&1";
	FILE *p = popen(cmd.c_str(), "r");
	ASSERT_NE(p, nullptr);
	std::string out;
	char buf[512];
	while (fgets(buf, sizeof(buf), p))
		out += buf;
	ASSERT_EQ(pclose(p), 0) << out;
	EXPECT_TRUE(contains(out, "StarPU has found :\n2 CPU workers:\n\tCPU 0\n\tCPU 1\nNo CUDA worker\n")) << out;
	EXPECT_TRUE(contains(out, "No HIP worker\n")) << out;
	EXPECT_TRUE(contains(out, "topology ... (hwloc logical indexes)\nnuma  0\tpack  0\tcore 0     PU 0     CPU 0")) << out;
	EXPECT_TRUE(contains(out, "bandwidth (MB/s) and latency (us)...\nfrom/to\tNUMA 0\t\nNUMA 0\t0\t\n\nNUMA 0\t0\t\n")) << out;

	p = popen((std::string("STARPU_NCPU=2 ") + tool + " -c").c_str(), "r");
	ASSERT_NE(p, nullptr);
	out.clear();
	while (fgets(buf, sizeof(buf), p))
		out += buf;
	EXPECT_EQ(pclose(p), 0);
	EXPECT_EQ(out, "2\n");
}

// Issue 38: the buses between two memory nodes show the figures starpu_transfer_bandwidth() and
// starpu_transfer_latency() give (they printed nan). Two NUMA nodes from a synthetic hwloc topology.
TEST(MachineDisplay, BusesBetweenNodesShowTheirFigures)
{
	const char *tool = "../tools/starpu_machine_display";
	if (!file_exists(tool))
		GTEST_SKIP() << tool << " is not built";
	TempDir home; // the bus figures measured are saved there
	std::string cmd = "STARPU_HOME='" + home.path() + "' STARPU_USE_NUMA=1 HWLOC_SYNTHETIC='pack:2 numa:1 core:1 pu:1' STARPU_NCPU=2 " +
			  tool + " 2>&1";
	std::string out;
	int status = run_command(cmd, &out);
	EXPECT_EQ(system(("rm -rf '" + home.path() + "/.starpu'").c_str()), 0);
	ASSERT_EQ(status, 0) << out;
	EXPECT_FALSE(contains(out, "nan")) << out;
	size_t table = out.find("from/to\tNUMA 0\tNUMA 1\t\n");
	ASSERT_NE(table, std::string::npos) << out;
	// The bandwidth table's rows, then the latency table's: each node to itself 0, to the other a figure.
	size_t row = table;
	for (int r = 0; r < 4; r++) {
		row = out.find("NUMA " + std::to_string(r % 2) + "\t", out.find('\n', row) + 1);
		ASSERT_NE(row, std::string::npos) << out;
		double a = -1, b = -1;
		ASSERT_EQ(sscanf(out.c_str() + row + 7, "%lf\t%lf", &a, &b), 2) << out.substr(row, 40);
		EXPECT_EQ(r % 2 ? b : a, 0.0) << out.substr(row, 40);
		if (r < 2)
			EXPECT_GT(r % 2 ? a : b, 0.0) << "bandwidth: " << out.substr(row, 40);
		else
			EXPECT_GE(r % 2 ? a : b, 0.0) << "latency (under 0.5 us between NUMA nodes prints 0): " << out.substr(row, 40);
	}
}

} // namespace
