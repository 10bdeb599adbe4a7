// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU's scheduler toolbox (starpu_scheduler_toolbox.h): the FIFO task
// queue and the priority deque, one function at a time on tasks that are
// never submitted (order, priorities, counters, readiness, workers that
// cannot run a task, NULL arguments), then two small policies written with
// the toolbox only, running a few hundred tasks on two CPU workers.
#include <gtest/gtest.h>
#include <starpu.h>
#include <schedulers/starpu_scheduler_toolbox.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <mutex>
#include <vector>

#include "helpers.h"

using namespace astro_test;

namespace {

void nothing(void **, void *) {}

double length_of(struct starpu_task *task, struct starpu_perfmodel_arch *, unsigned)
{
	return (double)(uintptr_t)task->cl_arg;
}

// Tasks lasting what their cl_arg says (µs).
struct starpu_perfmodel g_length_model = [] {
	struct starpu_perfmodel m;
	memset(&m, 0, sizeof(m));
	m.type = STARPU_PER_ARCH;
	m.arch_cost_function = length_of;
	m.symbol = "test_sched_toolbox_length";
	return m;
}();

// Implementation 0 refused everywhere: a worker runs implementation 1.
int only_impl_1(unsigned, struct starpu_task *, unsigned nimpl)
{
	return nimpl == 1;
}

class Toolbox : public ::testing::Test
{
protected:
	void SetUp() override
	{
		ASSERT_EQ(init_with_ncpus(2), 0);
		ASSERT_GE(starpu_worker_get_count(), 2u);
		cl_ = cpu_codelet(nothing, 0, "toolbox_nothing");
		cl_.model = &g_length_model;
		impl1_ = cpu_codelet(nothing, 0, "toolbox_impl1");
		impl1_.cpu_funcs[1] = nothing;
		impl1_.can_execute = only_impl_1;
		reader_ = cpu_codelet(nothing, 1, "toolbox_reader");
		reader_.modes[0] = STARPU_R;
		writer_ = cpu_codelet(nothing, 1, "toolbox_writer");
		writer_.modes[0] = STARPU_W;
		scratch_ = cpu_codelet(nothing, 1, "toolbox_scratch");
		scratch_.modes[0] = STARPU_SCRATCH;
		// One handle with its value in RAM, one with no value anywhere yet.
		starpu_vector_data_register(&here_, STARPU_MAIN_RAM, (uintptr_t)here_data_, 16, sizeof(double));
		starpu_vector_data_register(&nowhere_, -1, 0, 32, sizeof(double));
	}
	void TearDown() override
	{
		for (starpu_task *t : tasks_)
			starpu_task_destroy(t);
		if (here_)
			starpu_data_unregister(here_);
		if (nowhere_)
			starpu_data_unregister(nowhere_);
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	// A task (never submitted) of cl with priority, pinned to worker when not -1.
	starpu_task *task(int priority = 0, starpu_codelet *cl = nullptr, int worker = -1, uintptr_t length = 1)
	{
		starpu_task *t = starpu_task_create();
		t->cl = cl ? cl : &cl_;
		t->priority = priority;
		t->cl_arg = (void *)length;
		t->destroy = 0;
		if (worker >= 0) {
			t->execute_on_a_specific_worker = 1;
			t->workerid = (unsigned)worker;
		}
		tasks_.push_back(t);
		return t;
	}
	starpu_task *on(starpu_codelet *cl, starpu_data_handle_t h, int priority = 0)
	{
		starpu_task *t = task(priority, cl);
		t->handles[0] = h;
		return t;
	}
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
	starpu_codelet cl_, impl1_, reader_, writer_, scratch_;
	double here_data_[16] = {};
	starpu_data_handle_t here_ = nullptr, nowhere_ = nullptr;
	std::vector<starpu_task *> tasks_;
};

// What pop() gives until it gives NULL.
template <typename Pop> std::vector<starpu_task *> drain(Pop pop)
{
	std::vector<starpu_task *> out;
	while (starpu_task *t = pop())
		out.push_back(t);
	return out;
}

// ------------------------------------------------------- FIFO task queue

TEST_F(Toolbox, FifoStartsEmptyWithItsDatesNow)
{
	double before = starpu_timing_now();
	starpu_st_fifo_taskq_t fifo = starpu_st_fifo_taskq_create();
	double after = starpu_timing_now();
	ASSERT_NE(fifo, nullptr);
	EXPECT_EQ(starpu_st_fifo_taskq_empty(fifo), 1);
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 0u);
	EXPECT_EQ(starpu_st_fifo_nprocessed_get(fifo), 0u);
	EXPECT_GE(starpu_st_fifo_exp_start_get(fifo), before);
	EXPECT_LE(starpu_st_fifo_exp_start_get(fifo), after);
	EXPECT_EQ(starpu_st_fifo_exp_end_get(fifo), starpu_st_fifo_exp_start_get(fifo));
	EXPECT_EQ(starpu_st_fifo_exp_len_get(fifo), 0.0);
	EXPECT_EQ(starpu_st_fifo_pipeline_len_get(fifo), 0.0);
	EXPECT_EQ(starpu_st_fifo_ntasks_per_priority_get(fifo), nullptr);
	EXPECT_EQ(starpu_st_fifo_exp_len_per_priority_get(fifo), nullptr);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_local_task(fifo), nullptr);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_task(fifo, 0), nullptr);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task(fifo, 0, -1), nullptr);
	starpu_st_fifo_taskq_destroy(fifo);

	// A queue embedded in the policy's data.
	struct starpu_st_fifo_taskq embedded;
	memset(&embedded, 0xff, sizeof(embedded));
	starpu_st_fifo_taskq_init(&embedded);
	EXPECT_EQ(starpu_st_fifo_taskq_empty(&embedded), 1);
	EXPECT_EQ(embedded.pipeline_ntasks, 0u);
	EXPECT_EQ(embedded.ntasks_per_priority, nullptr);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_local_task(&embedded), nullptr);
}

TEST_F(Toolbox, FifoPushTaskKeepsOrderAndSortsPositivePriorities)
{
	starpu_st_fifo_taskq_t fifo = starpu_st_fifo_taskq_create();
	starpu_task *a = task(0), *b = task(2), *c = task(1), *d = task(2), *e = task(-1), *f = task(0);
	for (starpu_task *t : {a, b, c, d, e, f})
		ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, t), 0);
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 6u);
	EXPECT_EQ(starpu_st_fifo_nprocessed_get(fifo), 6u);
	EXPECT_EQ(starpu_st_fifo_taskq_empty(fifo), 0);
	// Above 0: by priority, oldest first among equals; 0 and below: at the back as they come.
	std::vector<starpu_task *> want{b, d, c, a, e, f};
	EXPECT_EQ(drain([&] { return starpu_st_fifo_taskq_pop_local_task(fifo); }), want);
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 0u);
	EXPECT_EQ(starpu_st_fifo_nprocessed_get(fifo), 6u) << "popping does not uncount what was pushed";
	starpu_st_fifo_taskq_destroy(fifo);
}

TEST_F(Toolbox, FifoPushSortedSortsEveryPriority)
{
	starpu_st_fifo_taskq_t fifo = starpu_st_fifo_taskq_create();
	starpu_task *a = task(0), *b = task(-3), *c = task(0), *d = task(4), *e = task(-3);
	for (starpu_task *t : {a, b, c, d, e})
		ASSERT_EQ(starpu_st_fifo_taskq_push_sorted_task(fifo, t), 0);
	std::vector<starpu_task *> want{d, a, c, b, e};
	EXPECT_EQ(drain([&] { return starpu_st_fifo_taskq_pop_local_task(fifo); }), want);
	EXPECT_EQ(starpu_st_fifo_nprocessed_get(fifo), 5u);
	starpu_st_fifo_taskq_destroy(fifo);
}

TEST_F(Toolbox, FifoPushBackGivesATaskBackToTheFront)
{
	starpu_st_fifo_taskq_t fifo = starpu_st_fifo_taskq_create();
	starpu_task *a = task(0), *b = task(0), *c = task(0), *p = task(3);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, a), 0);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, b), 0);
	ASSERT_EQ(starpu_st_fifo_taskq_pop_local_task(fifo), a);
	ASSERT_EQ(starpu_st_fifo_taskq_push_back_task(fifo, a), 0);
	ASSERT_EQ(starpu_st_fifo_taskq_push_back_task(fifo, c), 0);
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 3u);
	EXPECT_EQ(starpu_st_fifo_nprocessed_get(fifo), 2u) << "a task given back is not counted again";
	ASSERT_EQ(starpu_st_fifo_taskq_push_back_task(fifo, p), 0);
	EXPECT_EQ(starpu_st_fifo_nprocessed_get(fifo), 3u) << "a task above priority 0 is sorted (and counted) as StarPU does";
	std::vector<starpu_task *> want{p, c, a, b};
	EXPECT_EQ(drain([&] { return starpu_st_fifo_taskq_pop_local_task(fifo); }), want);
	starpu_st_fifo_taskq_destroy(fifo);
}

TEST_F(Toolbox, FifoPopTaskSkipsWhatTheWorkerCannotRun)
{
	starpu_st_fifo_taskq_t fifo = starpu_st_fifo_taskq_create();
	starpu_task *pinned = task(0, nullptr, 1), *any = task(0), *impl1 = task(0, &impl1_);
	for (starpu_task *t : {pinned, any, impl1})
		ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, t), 0);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_task(fifo, 0), any);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_task(fifo, 0), impl1);
	EXPECT_EQ(starpu_task_get_implementation(impl1), 1u) << "the implementation the worker can run is set";
	EXPECT_EQ(starpu_st_fifo_taskq_pop_task(fifo, 0), nullptr) << "worker 0 cannot run a task pinned to worker 1";
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 1u);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_task(fifo, 1), pinned);
	EXPECT_EQ(starpu_st_fifo_taskq_empty(fifo), 1);

	// A negative worker takes anything; pop_this_task says which it removed.
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, pinned), 0);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, impl1), 0);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_this_task(fifo, 0, pinned), 0);
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 2u);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_this_task(fifo, 1, impl1), 1);
	EXPECT_EQ(starpu_task_get_implementation(impl1), 1u);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_task(fifo, -1), pinned);
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 0u);
	starpu_st_fifo_taskq_destroy(fifo);
}

TEST_F(Toolbox, FifoCountersAndDates)
{
	starpu_st_fifo_taskq_t fifo = starpu_st_fifo_taskq_create();
	starpu_st_fifo_ntasks_inc(fifo, 3);
	starpu_st_fifo_ntasks_inc(fifo, -1);
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 2u);
	starpu_st_fifo_nprocessed_inc(fifo, 5);
	EXPECT_EQ(starpu_st_fifo_nprocessed_get(fifo), 5u);
	starpu_st_fifo_exp_start_set(fifo, 100.0);
	starpu_st_fifo_exp_end_set(fifo, 250.0);
	starpu_st_fifo_exp_len_set(fifo, 150.0);
	starpu_st_fifo_exp_len_inc(fifo, -50.0);
	starpu_st_fifo_pipeline_len_set(fifo, 7.0);
	starpu_st_fifo_pipeline_len_inc(fifo, 3.0);
	EXPECT_EQ(starpu_st_fifo_exp_start_get(fifo), 100.0);
	EXPECT_EQ(starpu_st_fifo_exp_end_get(fifo), 250.0);
	EXPECT_EQ(starpu_st_fifo_exp_len_get(fifo), 100.0);
	EXPECT_EQ(starpu_st_fifo_pipeline_len_get(fifo), 10.0);
	unsigned counts[3] = {};
	double lens[3] = {};
	fifo->ntasks_per_priority = counts;
	fifo->exp_len_per_priority = lens;
	EXPECT_EQ(starpu_st_fifo_ntasks_per_priority_get(fifo), counts);
	EXPECT_EQ(starpu_st_fifo_exp_len_per_priority_get(fifo), lens);
	starpu_st_fifo_taskq_destroy(fifo);
}

TEST_F(Toolbox, FifoExpectedLengthAheadOfATask)
{
	starpu_st_fifo_taskq_t fifo = starpu_st_fifo_taskq_create();
	starpu_st_fifo_pipeline_len_set(fifo, 5.0);
	fifo->pipeline_ntasks = 2;
	int n = -1;
	EXPECT_EQ(starpu_st_fifo_taskq_get_exp_len_prev_task_list(fifo, task(0), 0, 0, &n), 5.0) << "empty: the pipeline only";
	EXPECT_EQ(n, 2);

	starpu_task *hi = task(3, nullptr, -1, 100), *mid = task(1, nullptr, -1, 20), *low = task(0, nullptr, -1, 4);
	for (starpu_task *t : {hi, mid, low})
		ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, t), 0);
	starpu_st_fifo_exp_len_set(fifo, 124.0);
	EXPECT_DOUBLE_EQ(starpu_st_fifo_taskq_get_exp_len_prev_task_list(fifo, task(2), 0, 0, &n), 105.0) << "behind hi only";
	EXPECT_EQ(n, 3);
	EXPECT_DOUBLE_EQ(starpu_st_fifo_taskq_get_exp_len_prev_task_list(fifo, task(1), 0, 0, &n), 125.0) << "behind hi and mid";
	EXPECT_EQ(n, 4);
	EXPECT_EQ(starpu_st_fifo_taskq_get_exp_len_prev_task_list(fifo, task(-2), 0, 0, &n), 124.0) << "behind all: exp_len";
	EXPECT_EQ(n, 5);
	EXPECT_EQ(starpu_st_fifo_taskq_get_exp_len_prev_task_list(fifo, task(9), 0, 0, nullptr), 5.0) << "ahead of all";
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 3u) << "nothing was queued";
	drain([&] { return starpu_st_fifo_taskq_pop_local_task(fifo); });
	starpu_st_fifo_taskq_destroy(fifo);
}

TEST_F(Toolbox, FifoPopFirstReadyPrefersDataAlreadyThere)
{
	starpu_st_fifo_taskq_t fifo = starpu_st_fifo_taskq_create();
	starpu_task *missing = on(&reader_, nowhere_), *ready = on(&reader_, here_);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, missing), 0);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, ready), 0);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task(fifo, 0, -1), ready);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task(fifo, 0, -1), missing);
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 0u);

	// Priority first: a ready task of lower priority waits; readiness first takes it.
	starpu_task *urgent = on(&reader_, nowhere_, 2);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, urgent), 0);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, ready), 0);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task(fifo, 0, -1), urgent);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, urgent), 0);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task_ready_first(fifo, 0, -1), ready);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task_ready_first(fifo, 0, -1), urgent);

	// Readiness first, equally ready: the higher priority, wherever it sits.
	starpu_task *lower = task(-1), *higher = task(0);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, lower), 0);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, higher), 0);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task_ready_first(fifo, 0, -1), higher);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task(fifo, 0, -1), lower);

	// Only what the worker may run, its implementation set.
	starpu_task *pinned = task(0, nullptr, 1), *impl1 = task(0, &impl1_);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, pinned), 0);
	ASSERT_EQ(starpu_st_fifo_taskq_push_task(fifo, impl1), 0);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task(fifo, 0, -1), impl1);
	EXPECT_EQ(starpu_task_get_implementation(impl1), 1u);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task(fifo, 0, -1), nullptr);
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task_ready_first(fifo, 0, -1), nullptr);
	EXPECT_EQ(starpu_st_fifo_ntasks_get(fifo), 1u);

	// The per-priority counts of levels 0 to the task's (11 levels over -5..5: priority 0 is level 5).
	unsigned counts[11];
	for (unsigned &c : counts)
		c = 5;
	fifo->ntasks_per_priority = counts;
	EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task(fifo, 1, 11), pinned);
	for (int i = 0; i < 11; i++)
		EXPECT_EQ(counts[i], i <= 5 ? 4u : 5u) << "level " << i;
	starpu_st_fifo_taskq_destroy(fifo);
}

// ------------------------------------------------------------ helpers

TEST_F(Toolbox, NonReadyBuffers)
{
	size_t ready = 9, loading = 9, allocated = 9;
	starpu_st_non_ready_buffers_size(on(&reader_, here_), 0, &ready, &loading, &allocated);
	EXPECT_EQ(ready + loading + allocated, 0u);
	EXPECT_EQ(starpu_st_non_ready_buffers_count(on(&reader_, here_), 0), 0);

	size_t bytes = starpu_data_get_size(nowhere_);
	starpu_st_non_ready_buffers_size(on(&reader_, nowhere_), 0, &ready, &loading, &allocated);
	EXPECT_EQ(ready, bytes);
	EXPECT_EQ(loading, bytes);
	EXPECT_EQ(allocated, bytes);
	EXPECT_EQ(starpu_st_non_ready_buffers_count(on(&reader_, nowhere_), 0), 1);

	// Written, not read: only the room is missing.
	starpu_st_non_ready_buffers_size(on(&writer_, nowhere_), 0, &ready, &loading, &allocated);
	EXPECT_EQ(ready, 0u);
	EXPECT_EQ(loading, 0u);
	EXPECT_EQ(allocated, bytes);
	// Scratch: nothing to bring.
	starpu_st_non_ready_buffers_size(on(&scratch_, nowhere_), 0, &ready, &loading, &allocated);
	EXPECT_EQ(ready + loading + allocated, 0u);
	EXPECT_EQ(starpu_st_non_ready_buffers_count(on(&scratch_, nowhere_), 0), 0);
	EXPECT_EQ(starpu_st_non_ready_buffers_count(task(), 0), 0) << "no buffer";

	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_st_non_ready_buffers_count(on(&reader_, nowhere_), 999), -EINVAL);
		starpu_st_non_ready_buffers_size(on(&reader_, nowhere_), 999, &ready, &loading, &allocated);
	});
	EXPECT_TRUE(contains(err, "worker 999 does not exist")) << err;
	EXPECT_EQ(ready + loading + allocated, 0u);
}

TEST_F(Toolbox, NormalizePrio)
{
	// The global context spans STARPU_MIN_PRIO..STARPU_MAX_PRIO (-5..5).
	EXPECT_EQ(starpu_st_normalize_prio(-5, 11, STARPU_GLOBAL_SCHED_CTX), 0);
	EXPECT_EQ(starpu_st_normalize_prio(0, 11, STARPU_GLOBAL_SCHED_CTX), 5);
	EXPECT_EQ(starpu_st_normalize_prio(5, 11, STARPU_GLOBAL_SCHED_CTX), 10);
	EXPECT_EQ(starpu_st_normalize_prio(0, 3, STARPU_GLOBAL_SCHED_CTX), 1);
	EXPECT_EQ(starpu_st_normalize_prio(4, 3, STARPU_GLOBAL_SCHED_CTX), 1);
	EXPECT_EQ(starpu_st_normalize_prio(5, 3, STARPU_GLOBAL_SCHED_CTX), 2);
	EXPECT_EQ(starpu_st_normalize_prio(100, 11, STARPU_GLOBAL_SCHED_CTX), 10) << "above the context: the top level";
	EXPECT_EQ(starpu_st_normalize_prio(-100, 11, STARPU_GLOBAL_SCHED_CTX), 0);
	EXPECT_EQ(starpu_st_normalize_prio(3, 1, STARPU_GLOBAL_SCHED_CTX), 0) << "one level";
}

// ------------------------------------------------------- priority deque

TEST_F(Toolbox, DequeZeroedIsEmpty)
{
	struct starpu_st_prio_deque d;
	memset(&d, 0, sizeof(d));
	EXPECT_EQ(starpu_st_prio_deque_is_empty(&d), 1);
	EXPECT_EQ(starpu_st_prio_deque_pop_task(&d), nullptr);
	EXPECT_EQ(starpu_st_prio_deque_highest_task(&d), nullptr);
	EXPECT_EQ(starpu_st_prio_deque_pop_back_task(&d), nullptr);
	EXPECT_EQ(starpu_st_prio_deque_pop_task_for_worker(&d, 0, nullptr), nullptr);
	EXPECT_EQ(starpu_st_prio_deque_deque_task_for_worker(&d, 0, nullptr), nullptr);
	EXPECT_EQ(starpu_st_prio_deque_deque_first_ready_task(&d, 0), nullptr);
	starpu_st_prio_deque_destroy(&d);

	memset(&d, 0xff, sizeof(d));
	starpu_st_prio_deque_init(&d);
	EXPECT_EQ(starpu_st_prio_deque_is_empty(&d), 1);
	EXPECT_EQ(d.ntasks, 0u);
	EXPECT_EQ(d.exp_len, 0.0);
	starpu_st_prio_deque_destroy(&d);
}

TEST_F(Toolbox, DequeOrdersByPriorityThenAge)
{
	struct starpu_st_prio_deque d;
	starpu_st_prio_deque_init(&d);
	starpu_task *a = task(0), *b = task(2), *c = task(0), *e = task(-1), *f = task(2), *front = task(0);
	for (starpu_task *t : {a, b, c, e, f})
		ASSERT_EQ(starpu_st_prio_deque_push_back_task(&d, t), 0);
	ASSERT_EQ(starpu_st_prio_deque_push_front_task(&d, front), 0);
	EXPECT_EQ(d.ntasks, 6u);
	EXPECT_EQ(starpu_st_prio_deque_is_empty(&d), 0);
	EXPECT_EQ(starpu_st_prio_deque_highest_task(&d), b);
	EXPECT_EQ(d.ntasks, 6u) << "looking takes nothing";
	EXPECT_EQ(starpu_st_prio_deque_pop_back_task(&d), e) << "the back: lowest priority";
	EXPECT_EQ(starpu_st_prio_deque_pop_back_task(&d), c) << "then the newest of the next";
	std::vector<starpu_task *> want{b, f, front, a};
	EXPECT_EQ(drain([&] { return starpu_st_prio_deque_pop_task(&d); }), want);
	EXPECT_EQ(d.ntasks, 0u);
	EXPECT_EQ(starpu_st_prio_deque_is_empty(&d), 1);
	starpu_st_prio_deque_destroy(&d);
}

TEST_F(Toolbox, DequeKeepsEveryPriorityExact)
{
	// Far outside StarPU's default range, pushed while tasks are queued: the deque widens, never clamps.
	struct starpu_st_prio_deque d;
	starpu_st_prio_deque_init(&d);
	starpu_task *zero = task(0), *seven = task(7), *six = task(6), *big = task(1000), *small = task(-1000);
	starpu_task *top = task(INT_MAX), *bottom = task(INT_MIN), *one = task(1), *one_more = task(1), *top2 = task(INT_MAX);
	for (starpu_task *t : {zero, seven, six, big, small, top, bottom, one, one_more, top2})
		ASSERT_EQ(starpu_st_prio_deque_push_back_task(&d, t), 0);
	std::vector<starpu_task *> want{top, top2, big, seven, six, one, one_more, zero, small, bottom};
	EXPECT_EQ(drain([&] { return starpu_st_prio_deque_pop_task(&d); }), want);

	// Neighbouring priorities now share the widened deque's buckets: from the back of each priority still.
	for (starpu_task *t : {zero, one, one_more, seven, six})
		ASSERT_EQ(starpu_st_prio_deque_push_back_task(&d, t), 0);
	std::vector<starpu_task *> thief{seven, six, one_more, one, zero};
	EXPECT_EQ(drain([&] { return starpu_st_prio_deque_deque_task_for_worker(&d, 0, nullptr); }), thief);
	for (starpu_task *t : {zero, one, one_more, seven, six})
		ASSERT_EQ(starpu_st_prio_deque_push_front_task(&d, t), 0);
	std::vector<starpu_task *> fronts{seven, six, one_more, one, zero};
	EXPECT_EQ(drain([&] { return starpu_st_prio_deque_pop_task(&d); }), fronts);
	starpu_st_prio_deque_destroy(&d);
}

TEST_F(Toolbox, DequeForWorkerSkipsWhatItCannotRun)
{
	struct starpu_st_prio_deque d;
	starpu_st_prio_deque_init(&d);
	starpu_task *pinned = task(5, nullptr, 1), *old = task(1), *young = task(1), *impl1 = task(0, &impl1_);
	for (starpu_task *t : {pinned, old, young, impl1})
		ASSERT_EQ(starpu_st_prio_deque_push_back_task(&d, t), 0);

	starpu_task *skipped = task();
	EXPECT_EQ(starpu_st_prio_deque_pop_task_for_worker(&d, 0, &skipped), old);
	EXPECT_EQ(skipped, pinned);
	EXPECT_EQ(starpu_st_prio_deque_deque_task_for_worker(&d, 0, &skipped), young) << "newest first";
	EXPECT_EQ(skipped, pinned);
	EXPECT_EQ(starpu_st_prio_deque_pop_task_for_worker(&d, 0, &skipped), impl1);
	EXPECT_EQ(starpu_task_get_implementation(impl1), 1u);
	EXPECT_EQ(starpu_st_prio_deque_pop_task_for_worker(&d, 0, &skipped), nullptr);
	EXPECT_EQ(skipped, pinned);
	EXPECT_EQ(d.ntasks, 1u);
	EXPECT_EQ(starpu_st_prio_deque_deque_task_for_worker(&d, 1, &skipped), pinned);
	EXPECT_EQ(skipped, nullptr) << "nothing passed over";
	EXPECT_EQ(starpu_st_prio_deque_is_empty(&d), 1);

	// pop_this_task and erase.
	ASSERT_EQ(starpu_st_prio_deque_push_back_task(&d, pinned), 0);
	ASSERT_EQ(starpu_st_prio_deque_push_back_task(&d, old), 0);
	ASSERT_EQ(starpu_st_prio_deque_push_back_task(&d, impl1), 0);
	EXPECT_EQ(starpu_st_prio_deque_pop_this_task(&d, 0, pinned), 0);
	EXPECT_EQ(starpu_st_prio_deque_pop_this_task(&d, 1, impl1), 1);
	EXPECT_EQ(d.ntasks, 2u);
	starpu_st_prio_deque_erase(&d, pinned);
	EXPECT_EQ(d.ntasks, 1u);
	EXPECT_EQ(starpu_st_prio_deque_pop_this_task(&d, -1, old), 1);
	EXPECT_EQ(starpu_st_prio_deque_is_empty(&d), 1);

	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_st_prio_deque_pop_task_for_worker(&d, -1, &skipped), nullptr);
		EXPECT_EQ(starpu_st_prio_deque_deque_task_for_worker(&d, 999, nullptr), nullptr);
		EXPECT_EQ(starpu_st_prio_deque_deque_first_ready_task(&d, 999), nullptr);
		starpu_st_prio_deque_erase(&d, old);
	});
	EXPECT_TRUE(contains(err, "starpu_st_prio_deque_pop_task_for_worker: worker -1 does not exist")) << err;
	EXPECT_TRUE(contains(err, "starpu_st_prio_deque_deque_task_for_worker: worker 999 does not exist")) << err;
	EXPECT_TRUE(contains(err, "starpu_st_prio_deque_deque_first_ready_task: worker 999")) << err;
	EXPECT_TRUE(contains(err, "starpu_st_prio_deque_erase: the deque is empty")) << err;
	EXPECT_EQ(d.ntasks, 0u);
	starpu_st_prio_deque_destroy(&d);
}

TEST_F(Toolbox, DequeFirstReadyWithinTheHighestPriority)
{
	struct starpu_st_prio_deque d;
	starpu_st_prio_deque_init(&d);
	starpu_task *missing = on(&reader_, nowhere_, 1), *ready = on(&reader_, here_, 1), *low = on(&reader_, here_, 0);
	starpu_task *pinned = on(&reader_, here_, 3);
	pinned->execute_on_a_specific_worker = 1;
	pinned->workerid = 1;
	for (starpu_task *t : {pinned, missing, ready, low})
		ASSERT_EQ(starpu_st_prio_deque_push_back_task(&d, t), 0);
	EXPECT_EQ(starpu_st_prio_deque_deque_first_ready_task(&d, 0), ready);
	EXPECT_EQ(starpu_st_prio_deque_deque_first_ready_task(&d, 0), missing) << "the priority before readiness";
	EXPECT_EQ(starpu_st_prio_deque_deque_first_ready_task(&d, 0), low);
	EXPECT_EQ(starpu_st_prio_deque_deque_first_ready_task(&d, 0), nullptr);
	EXPECT_EQ(d.ntasks, 1u);
	EXPECT_EQ(starpu_st_prio_deque_deque_first_ready_task(&d, 1), pinned);
	starpu_st_prio_deque_push_back_task(&d, task());
	starpu_st_prio_deque_destroy(&d);
	EXPECT_EQ(d.queue, nullptr) << "destroyed with a task still in it: freed all the same";
	EXPECT_EQ(starpu_st_prio_deque_is_empty(&d), 1);
}

// ------------------------------------------------------------ bad input

TEST_F(Toolbox, NullArgumentsAreRefusedWithAMessage)
{
	starpu_st_fifo_taskq_t fifo = starpu_st_fifo_taskq_create();
	struct starpu_st_prio_deque d;
	starpu_st_prio_deque_init(&d);
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_st_fifo_taskq_push_task(nullptr, task()), -EINVAL);
		EXPECT_EQ(starpu_st_fifo_taskq_push_task(fifo, nullptr), -EINVAL);
		EXPECT_EQ(starpu_st_fifo_taskq_push_back_task(fifo, nullptr), -EINVAL);
		EXPECT_EQ(starpu_st_fifo_taskq_push_sorted_task(nullptr, task()), -EINVAL);
		EXPECT_EQ(starpu_st_fifo_taskq_pop_this_task(fifo, 0, nullptr), -EINVAL);
		EXPECT_EQ(starpu_st_fifo_taskq_pop_task(nullptr, 0), nullptr);
		EXPECT_EQ(starpu_st_fifo_taskq_pop_local_task(nullptr), nullptr);
		EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task(nullptr, 0, -1), nullptr);
		EXPECT_EQ(starpu_st_fifo_taskq_pop_first_ready_task_ready_first(nullptr, 0, -1), nullptr);
		EXPECT_EQ(starpu_st_fifo_taskq_empty(nullptr), 1);
		EXPECT_EQ(starpu_st_fifo_ntasks_get(nullptr), 0u);
		EXPECT_TRUE(std::isnan(starpu_st_fifo_exp_len_get(nullptr)));
		EXPECT_TRUE(std::isnan(starpu_st_fifo_taskq_get_exp_len_prev_task_list(fifo, nullptr, 0, 0, nullptr)));
		starpu_st_fifo_exp_len_inc(nullptr, 1.0);
		starpu_st_fifo_taskq_init(nullptr);
		starpu_st_fifo_taskq_destroy(nullptr);
		EXPECT_EQ(starpu_st_prio_deque_push_back_task(nullptr, task()), -EINVAL);
		EXPECT_EQ(starpu_st_prio_deque_push_front_task(&d, nullptr), -EINVAL);
		EXPECT_EQ(starpu_st_prio_deque_pop_task(nullptr), nullptr);
		EXPECT_EQ(starpu_st_prio_deque_pop_task_for_worker(nullptr, 0, nullptr), nullptr);
		EXPECT_EQ(starpu_st_prio_deque_pop_this_task(&d, 0, nullptr), -EINVAL);
		EXPECT_EQ(starpu_st_prio_deque_is_empty(nullptr), 1);
		starpu_st_prio_deque_erase(&d, nullptr);
		starpu_st_prio_deque_init(nullptr);
		EXPECT_EQ(starpu_st_non_ready_buffers_count(nullptr, 0), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "starpu_st_fifo_taskq_push_task: the queue is NULL")) << err;
	EXPECT_TRUE(contains(err, "starpu_st_fifo_taskq_push_task: the task is NULL")) << err;
	EXPECT_TRUE(contains(err, "starpu_st_prio_deque_push_front_task: the task is NULL")) << err;
	EXPECT_TRUE(contains(err, "starpu_st_prio_deque_pop_task: the deque is NULL")) << err;
	EXPECT_TRUE(contains(err, "starpu_st_non_ready_buffers_count: the task is NULL")) << err;
	EXPECT_EQ(lines_of(err).size(), 24u) << "one line per refusal (destroy(NULL) is a no-op, like free)\n" << err;
	EXPECT_EQ(starpu_st_fifo_taskq_empty(fifo), 1) << "nothing was queued";
	EXPECT_EQ(d.ntasks, 0u);
	starpu_st_fifo_taskq_destroy(fifo);
	starpu_st_prio_deque_destroy(&d);
}

// ---------------------------------------------- policies made of the toolbox

// Per-worker FIFO queues (the least loaded gets the task, as StarPU's
// libmy_dmda example does with its model), or one priority deque every worker
// takes from: only toolbox calls and StarPU's public API.
struct ToolboxPolicy
{
	std::mutex lock;
	starpu_st_fifo_taskq_t fifos[STARPU_NMAXWORKERS] = {};
	struct starpu_st_prio_deque deque;
	bool use_deque = false;
	std::atomic<int> pushed{0}, popped{0};
} g_policy;

void tb_init(unsigned) { starpu_st_prio_deque_init(&g_policy.deque); }
void tb_deinit(unsigned) { starpu_st_prio_deque_destroy(&g_policy.deque); }

void tb_add_workers(unsigned, int *ids, unsigned n)
{
	std::lock_guard<std::mutex> g(g_policy.lock);
	for (unsigned i = 0; i < n; i++)
		g_policy.fifos[ids[i]] = starpu_st_fifo_taskq_create();
}

void tb_remove_workers(unsigned, int *ids, unsigned n)
{
	std::lock_guard<std::mutex> g(g_policy.lock);
	for (unsigned i = 0; i < n; i++) {
		starpu_st_fifo_taskq_destroy(g_policy.fifos[ids[i]]);
		g_policy.fifos[ids[i]] = nullptr;
	}
}

int tb_push(struct starpu_task *task)
{
	{
		std::lock_guard<std::mutex> g(g_policy.lock);
		if (g_policy.use_deque) {
			if (starpu_st_prio_deque_push_back_task(&g_policy.deque, task))
				return -ENOMEM;
		} else {
			int best = -1;
			for (int w = 0; w < (int)starpu_worker_get_count(); w++)
				if (g_policy.fifos[w] && starpu_worker_can_execute_task_first_impl((unsigned)w, task, nullptr) &&
				    (best < 0 || starpu_st_fifo_ntasks_get(g_policy.fifos[w]) < starpu_st_fifo_ntasks_get(g_policy.fifos[best])))
					best = w;
			if (best < 0)
				return -ENODEV;
			starpu_st_fifo_taskq_push_task(g_policy.fifos[best], task);
		}
		g_policy.pushed++;
	}
	starpu_wake_all_blocked_workers();
	return 0;
}

struct starpu_task *tb_pop(unsigned)
{
	int w = starpu_worker_get_id();
	std::lock_guard<std::mutex> g(g_policy.lock);
	struct starpu_task *task = g_policy.use_deque ? starpu_st_prio_deque_pop_task_for_worker(&g_policy.deque, w, nullptr)
						      : starpu_st_fifo_taskq_pop_task(g_policy.fifos[w], w);
	if (task)
		g_policy.popped++;
	return task;
}

struct starpu_sched_policy g_toolbox_policy = [] {
	struct starpu_sched_policy p;
	memset(&p, 0, sizeof(p));
	p.init_sched = tb_init;
	p.deinit_sched = tb_deinit;
	p.add_workers = tb_add_workers;
	p.remove_workers = tb_remove_workers;
	p.push_task = tb_push;
	p.pop_task = tb_pop;
	p.policy_name = "toolbox";
	p.policy_description = "made of the scheduler toolbox";
	return p;
}();

struct Ran
{
	std::atomic<int> count{0};
	std::atomic<int> on_wrong_worker{0};
};
Ran g_ran;

void record(void **, void *arg)
{
	int want = (int)(intptr_t)arg;
	if (want >= 0 && starpu_worker_get_id() != want)
		g_ran.on_wrong_worker++;
	g_ran.count++;
}

void run_policy(bool use_deque)
{
	g_policy.use_deque = use_deque;
	g_policy.pushed = 0;
	g_policy.popped = 0;
	g_ran.count = 0;
	g_ran.on_wrong_worker = 0;
	ScopedEnv sched("STARPU_SCHED", nullptr);
	starpu_conf conf = conf_with_ncpus(2);
	conf.sched_policy = &g_toolbox_policy;
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	ASSERT_EQ(starpu_worker_get_count(), 2u);
	starpu_codelet cl = cpu_codelet(record, 0, "toolbox_record");
	const int n = 300;
	int npinned = 0;
	for (int i = 0; i < n; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->priority = i % 7 - 3;
		int pin = i % 10 == 0 ? (i / 10) % 2 : -1;
		t->cl_arg = (void *)(intptr_t)pin;
		if (pin >= 0) {
			npinned++;
			t->execute_on_a_specific_worker = 1;
			t->workerid = (unsigned)pin;
		}
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ran.count.load(), n);
	EXPECT_EQ(g_ran.on_wrong_worker.load(), 0);
	// A task pinned to a worker goes to that worker without the policy, as in StarPU.
	EXPECT_EQ(g_policy.pushed.load(), n - npinned);
	EXPECT_EQ(g_policy.popped.load(), n - npinned);
	EXPECT_EQ(starpu_st_prio_deque_is_empty(&g_policy.deque), 1);
}

TEST(ToolboxPolicy, PerWorkerFifosRunEveryTask)
{
	run_policy(false);
}

TEST(ToolboxPolicy, OnePriorityDequeRunsEveryTask)
{
	run_policy(true);
}

} // namespace
