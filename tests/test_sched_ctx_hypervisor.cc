// SPDX-License-Identifier: LGPL-2.1-or-later
// The hypervisor link of scheduling contexts (starpu_sched_ctx_hypervisor.h):
// the performance counters of one context hear about its tasks (submitted,
// pushed to a worker, popped, executed), its workers' idle time, its tasks
// waiting without workers and its deletion, with the right ids, and never
// about another context; bad input is said.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "helpers.h"

using namespace astro_test;

namespace {

struct Call
{
	unsigned ctx;
	int worker;
	double value;     // idle time, flops
	size_t data_size;
	uint32_t footprint;
	int tag;          // hypervisor_tag
};

// What the callbacks heard (one process-wide recorder: the callbacks have no argument).
struct Heard
{
	std::mutex lock;
	std::vector<Call> idle, popped, pushed, post_exec, submitted, empty, deleted;
	void clear()
	{
		std::lock_guard<std::mutex> hold(lock);
		for (auto *v : {&idle, &popped, &pushed, &post_exec, &submitted, &empty, &deleted})
			v->clear();
	}
	size_t count(std::vector<Call> &v)
	{
		std::lock_guard<std::mutex> hold(lock);
		return v.size();
	}
	void add(std::vector<Call> &v, Call c)
	{
		std::lock_guard<std::mutex> hold(lock);
		v.push_back(c);
	}
};
Heard heard;

void on_idle(unsigned ctx, int worker, double idle) { heard.add(heard.idle, {ctx, worker, idle, 0, 0, 0}); }
void on_popped(unsigned ctx, int worker) { heard.add(heard.popped, {ctx, worker, 0, 0, 0, 0}); }
void on_pushed(unsigned ctx, int worker) { heard.add(heard.pushed, {ctx, worker, 0, 0, 0, 0}); }
void on_post_exec(struct starpu_task *task, size_t size, uint32_t footprint, int tag, double flops)
{
	heard.add(heard.post_exec, {task->sched_ctx, starpu_worker_get_id(), flops, size, footprint, tag});
}
void on_submitted(struct starpu_task *task, uint32_t footprint, size_t size)
{
	heard.add(heard.submitted, {task->sched_ctx, -1, 0, size, footprint, 0});
}
void on_empty(unsigned ctx, struct starpu_task *) { heard.add(heard.empty, {ctx, -1, 0, 0, 0, 0}); }
void on_delete(unsigned ctx) { heard.add(heard.deleted, {ctx, -1, 0, 0, 0, 0}); }

struct starpu_sched_ctx_performance_counters counters = {on_idle, on_popped, on_pushed, on_post_exec,
							  on_submitted, on_empty, on_delete};

void nop(void **, void *) {}
starpu_codelet read_cl = [] {
	starpu_codelet cl = cpu_codelet(nop, 1, "hyp_read");
	cl.modes[0] = STARPU_R;
	return cl;
}();

int values[4];

// Submits a task reading h to ctx (pinned to worker when >= 0), with hypervisor tag and flops.
int submit(unsigned ctx, starpu_data_handle_t h, int worker = -1)
{
	struct starpu_task *t = starpu_task_create();
	t->cl = &read_cl;
	t->handles[0] = h;
	t->hypervisor_tag = 7;
	t->flops = 3.0;
	if (worker >= 0) {
		t->execute_on_a_specific_worker = 1;
		t->workerid = (unsigned)worker;
	}
	return submit_to_ctx(t, ctx);
}

} // namespace

TEST(SchedCtxHypervisor, TheCountersOfOneContextHearItsTasksAndWorkersOnly)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	heard.clear();
	int zero[] = {0}, one[] = {1};
	unsigned a = create_ctx_without_policy(zero, 1, "heard"), b = create_ctx_without_policy(one, 1, "unheard");
	ASSERT_LT(a, (unsigned)STARPU_NMAX_SCHED_CTXS);
	ASSERT_LT(b, (unsigned)STARPU_NMAX_SCHED_CTXS);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)values, 4, sizeof(int));
	starpu_sched_ctx_set_perf_counters(a, &counters);

	// Until a's worker was seen idle (it sleeps between rounds): a's tasks, some pinned to its worker; b's too.
	int na = 0, npinned = 0;
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
	do {
		ASSERT_EQ(submit(a, h), 0);
		ASSERT_EQ(submit(a, h, 0), 0);
		ASSERT_EQ(submit(b, h), 0);
		ASSERT_EQ(submit(b, h, 1), 0);
		na += 2;
		npinned++;
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	} while (heard.count(heard.idle) == 0 && std::chrono::steady_clock::now() < deadline);
	// The worker slept at least once between rounds.
	ASSERT_GT(heard.count(heard.idle), 0u) << "worker 0 of context " << a << " never reported idle";

	heard.lock.lock();
	EXPECT_EQ(heard.submitted.size(), (size_t)na);
	EXPECT_EQ(heard.popped.size(), (size_t)na);
	EXPECT_EQ(heard.post_exec.size(), (size_t)na);
	EXPECT_GE(heard.pushed.size(), (size_t)npinned) << "the pinned tasks' pushes were not heard";
	for (const Call &c : heard.submitted) {
		EXPECT_EQ(c.ctx, a);
		EXPECT_EQ(c.data_size, 4 * sizeof(int));
		EXPECT_EQ(c.footprint, starpu_hash_crc32c_be(starpu_data_get_footprint(h), 0));
	}
	for (const Call &c : heard.popped) {
		EXPECT_EQ(c.ctx, a);
		EXPECT_EQ(c.worker, 0);
	}
	for (const Call &c : heard.pushed) {
		EXPECT_EQ(c.ctx, a);
		EXPECT_EQ(c.worker, 0);
	}
	for (const Call &c : heard.post_exec) {
		EXPECT_EQ(c.ctx, a);
		EXPECT_EQ(c.worker, 0);
		EXPECT_EQ(c.tag, 7);
		EXPECT_EQ(c.value, 3.0);
		EXPECT_EQ(c.data_size, 4 * sizeof(int));
	}
	for (const Call &c : heard.idle) {
		EXPECT_EQ(c.ctx, a);
		EXPECT_EQ(c.worker, 0);
		EXPECT_GE(c.value, 0.0);
	}
	EXPECT_TRUE(heard.empty.empty());
	EXPECT_TRUE(heard.deleted.empty());
	heard.lock.unlock();

	// Unset: nothing more is heard.
	starpu_sched_ctx_set_perf_counters(a, nullptr);
	heard.clear();
	ASSERT_EQ(submit(a, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	heard.lock.lock();
	EXPECT_TRUE(heard.submitted.empty() && heard.popped.empty() && heard.post_exec.empty());
	heard.lock.unlock();
	starpu_data_unregister(h);
	starpu_sched_ctx_delete(a);
	starpu_sched_ctx_delete(b);
	EXPECT_TRUE(heard.deleted.empty()) << "a context without counters was announced deleted";
}

TEST(SchedCtxHypervisor, AWorklessContextAndItsDeletionAreHeard)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	heard.clear();
	int one[] = {1};
	unsigned c = create_ctx_without_policy(nullptr, 0, "workless"), other = create_ctx_without_policy(one, 1, "other");
	ASSERT_LT(c, (unsigned)STARPU_NMAX_SCHED_CTXS);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)values, 4, sizeof(int));
	starpu_sched_ctx_set_perf_counters(c, &counters);
	ASSERT_EQ(submit(c, h), 0);
	ASSERT_EQ(submit(other, h), 0);
	ASSERT_TRUE(wait_until([] { return heard.count(heard.empty) == 1; }, 60000));
	starpu_sched_ctx_add_workers(one, 1, c);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	{
		std::lock_guard<std::mutex> hold(heard.lock);
		EXPECT_EQ(heard.empty[0].ctx, c);
		ASSERT_EQ(heard.popped.size(), 1u);
		EXPECT_EQ(heard.popped[0].ctx, c);
		EXPECT_EQ(heard.popped[0].worker, 1);
	}
	starpu_sched_ctx_delete(other);
	EXPECT_EQ(heard.count(heard.deleted), 0u) << "another context's deletion was heard";
	starpu_sched_ctx_delete(c);
	ASSERT_EQ(heard.count(heard.deleted), 1u);
	EXPECT_EQ(heard.deleted[0].ctx, c);
	// The deleted context's counters went with it: a new context with its id hears nothing.
	unsigned again = create_ctx_without_policy(one, 1, "again");
	ASSERT_EQ(submit(again, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(heard.count(heard.popped), 1u);
	starpu_data_unregister(h);
	starpu_sched_ctx_delete(again);
}

TEST(SchedCtxHypervisor, PoliciesNameThePushesAndTheHypervisorSaysItExists)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	heard.clear();
	EXPECT_EQ(starpu_sched_ctx_check_if_hypervisor_exists(), 0u);
	starpu_sched_ctx_notify_hypervisor_exists();
	EXPECT_EQ(starpu_sched_ctx_check_if_hypervisor_exists(), 1u);
	int zero[] = {0}, one[] = {1};
	unsigned a = create_ctx_without_policy(zero, 1, "a"), b = create_ctx_without_policy(one, 1, "b");
	starpu_sched_ctx_set_perf_counters(a, &counters);
	starpu_sched_ctx_call_pushed_task_cb(0, a);
	starpu_sched_ctx_call_pushed_task_cb(1, b);
	ASSERT_EQ(heard.count(heard.pushed), 1u);
	EXPECT_EQ(heard.pushed[0].ctx, a);
	EXPECT_EQ(heard.pushed[0].worker, 0);
	starpu_sched_ctx_update_start_resizing_sample(a, starpu_timing_now());
	starpu_sched_ctx_delete(a);
	starpu_sched_ctx_delete(b);
}

TEST(SchedCtxHypervisor, BadInputIsSaid)
{
	{
		Runtime rt(2);
		ASSERT_TRUE(rt.ok());
		heard.clear();
		std::string err = stderr_of([] { starpu_sched_ctx_set_perf_counters(STARPU_NMAX_SCHED_CTXS - 1, &counters); });
		EXPECT_NE(err.find("does not exist"), std::string::npos) << err;
		err = stderr_of([] { starpu_sched_ctx_update_start_resizing_sample(STARPU_NMAX_SCHED_CTXS + 3, 1.0); });
		EXPECT_NE(err.find("does not exist"), std::string::npos) << err;
		err = stderr_of([] { starpu_sched_ctx_call_pushed_task_cb(0, STARPU_NMAX_SCHED_CTXS - 1); });
		EXPECT_NE(err.find("does not exist"), std::string::npos) << err;
		int zero[] = {0};
		unsigned a = create_ctx_without_policy(zero, 1, "a");
		starpu_sched_ctx_set_perf_counters(a, &counters);
		err = stderr_of([&] { starpu_sched_ctx_call_pushed_task_cb(99, a); });
		EXPECT_NE(err.find("worker 99 does not exist"), std::string::npos) << err;
		EXPECT_EQ(heard.count(heard.pushed), 0u);
		starpu_sched_ctx_notify_hypervisor_exists();
		// Left set at shutdown: the next runtime starts without.
	}
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_sched_ctx_check_if_hypervisor_exists(), 0u);
	heard.clear();
	// Nor with the counters of the last one's contexts.
	int zero[] = {0};
	unsigned a = create_ctx_without_policy(zero, 1, "a");
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)values, 4, sizeof(int));
	ASSERT_EQ(submit(a, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	starpu_sched_ctx_delete(a);
	std::lock_guard<std::mutex> hold(heard.lock);
	EXPECT_TRUE(heard.submitted.empty() && heard.popped.empty() && heard.deleted.empty());
}
