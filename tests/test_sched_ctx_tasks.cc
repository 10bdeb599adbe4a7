// SPDX-License-Identifier: LGPL-2.1-or-later
// The tasks of scheduling contexts (starpu_sched_ctx.h): a context without
// workers keeps its tasks until some come (and starpu_sched_ctx_stop_task_submission
// holds the later ones back), the close callback and the inheritor once the
// last task ended, ready counts and flops, tasks moved between contexts, the
// order a worker in several contexts serves them in (priorities and the
// policies' task counters), booking workers, and bad input.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "helpers.h"

using namespace astro_test;

namespace {

// What the tasks of a test saw.
struct Record
{
	std::atomic<int> ran{0};
	std::atomic<unsigned long long> workers{0}; // bit per worker that ran one
	std::atomic<bool> open{true};               // tasks wait (bounded) until it is
	std::mutex order_lock;                      // several workers may run tasks at once
	std::vector<char> order;                    // tags in the order they ran (under order_lock)
	void reset(bool opened)
	{
		ran = 0;
		workers = 0;
		open = opened;
		std::lock_guard<std::mutex> hold(order_lock);
		order.clear();
	}
};

struct Arg
{
	Record *r;
	char tag;
};

void record_kernel(void **, void *arg)
{
	Arg *a = static_cast<Arg *>(arg);
	wait_until([&] { return a->r->open.load(); }, 60000);
	a->r->workers |= 1ull << starpu_worker_get_id();
	{
		std::lock_guard<std::mutex> hold(a->r->order_lock);
		a->r->order.push_back(a->tag);
	}
	a->r->ran++;
}

starpu_codelet record_cl = cpu_codelet(record_kernel, 0, "ctx_tasks_record");

// Submits a task of record_cl to context ctx; its Arg lives as long as the process.
int submit_to(unsigned ctx, Record *r, char tag = 'x', double flops = 0.0)
{
	static Arg args[256];
	static std::atomic<unsigned> next{0};
	Arg *a = &args[next++ % 256];
	a->r = r;
	a->tag = tag;
	struct starpu_task *t = starpu_task_create();
	t->cl = &record_cl;
	t->cl_arg = a;
	t->flops = flops;
	return submit_to_ctx(t, ctx);
}

} // namespace

TEST(SchedCtxTasks, AContextWithoutWorkersKeepsItsTasksUntilSomeCome)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	unsigned ctx = create_ctx_without_policy(nullptr, 0, "empty");
	ASSERT_LT(ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(ctx), 0u);
	static Record r;
	r.reset(true);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(submit_to(ctx, &r), 0);
	// Later ones wait for the addition after the next.
	starpu_sched_ctx_stop_task_submission();
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(submit_to(ctx, &r), 0);
	EXPECT_EQ(r.ran.load(), 0) << "a task of a context without workers ran";
	EXPECT_EQ(starpu_sched_ctx_get_nready_tasks(ctx), 5);

	int one[] = {1};
	starpu_sched_ctx_add_workers(one, 1, ctx);
	ASSERT_TRUE(wait_until([&] { return r.ran.load() == 2; }, 60000));
	EXPECT_EQ(starpu_sched_ctx_get_nready_tasks(ctx), 3) << "the tasks after the stop did not wait";
	EXPECT_EQ(r.ran.load(), 2);

	int zero[] = {0};
	starpu_sched_ctx_add_workers(zero, 1, ctx);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
	EXPECT_EQ(r.ran.load(), 5);
	EXPECT_EQ(starpu_sched_ctx_get_nready_tasks(ctx), 0);
	starpu_sched_ctx_delete(ctx);
}

namespace {

struct Closing
{
	std::atomic<int> calls{0};
	std::atomic<unsigned> ctx{STARPU_NMAX_SCHED_CTXS};
	std::atomic<int> tasks_left{-1}; // the context's ready tasks when it was called
};

void on_close(unsigned sched_ctx_id, void *args)
{
	Closing *c = static_cast<Closing *>(args);
	c->ctx = sched_ctx_id;
	c->tasks_left = starpu_sched_ctx_get_nready_tasks(sched_ctx_id);
	c->calls++;
}

} // namespace

TEST(SchedCtxTasks, TheCloseCallbackRunsOnceTheLastTaskEndedAndTheInheritorGetsTheWorkers)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int zero[] = {0}, one[] = {1};
	unsigned a = create_ctx_without_policy(zero, 1, "closing");
	unsigned b = create_ctx_without_policy(one, 1, "heir");
	ASSERT_LT(a, (unsigned)STARPU_NMAX_SCHED_CTXS);
	ASSERT_LT(b, (unsigned)STARPU_NMAX_SCHED_CTXS);
	starpu_sched_ctx_set_inheritor(a, b);
	static Closing closing;
	closing.calls = 0;
	starpu_sched_ctx_register_close_callback(a, on_close, &closing);
	static Record r;
	r.reset(false);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(submit_to(a, &r), 0);
	starpu_sched_ctx_finished_submit(a);
	EXPECT_EQ(closing.calls.load(), 0) << "closed while its tasks are held";
	EXPECT_EQ(starpu_sched_ctx_contains_worker(0, b), 0u);
	r.open = true;
	ASSERT_TRUE(wait_until([&] { return starpu_sched_ctx_contains_worker(0, b) == 1; }, 60000));
	EXPECT_EQ(closing.calls.load(), 1);
	EXPECT_EQ(closing.ctx.load(), a);
	EXPECT_EQ(closing.tasks_left.load(), 0);
	EXPECT_EQ(r.ran.load(), 3);
	EXPECT_EQ(starpu_sched_ctx_contains_worker(0, a), 1u) << "the workers stay until the context is deleted";

	// A context without tasks closes at once; the callback runs once.
	static Closing idle;
	idle.calls = 0;
	starpu_sched_ctx_register_close_callback(b, on_close, &idle);
	starpu_sched_ctx_finished_submit(b);
	starpu_sched_ctx_finished_submit(b);
	EXPECT_EQ(idle.calls.load(), 1);
	starpu_sched_ctx_delete(a);
	starpu_sched_ctx_delete(b);

	std::string err = stderr_of([] { starpu_sched_ctx_register_close_callback(0, on_close, nullptr); });
	EXPECT_TRUE(contains(err, "global scheduling context is never closed")) << err;
}

TEST(SchedCtxTasks, ReadyTasksAndTheirFlopsAreCountedPerContext)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int one[] = {1};
	unsigned ctx = create_ctx_without_policy(one, 1, "counted");
	ASSERT_LT(ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	static Record r;
	r.reset(false);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(submit_to(ctx, &r, 'x', 10.0), 0);
	EXPECT_EQ(starpu_sched_ctx_get_nready_tasks(ctx), 4);
	EXPECT_DOUBLE_EQ(starpu_sched_ctx_get_nready_flops(ctx), 40.0);
	// The global context's ready tasks are the others.
	EXPECT_EQ(starpu_sched_ctx_get_nready_tasks(0), 0);
	r.open = true;
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
	EXPECT_EQ(starpu_sched_ctx_get_nready_tasks(ctx), 0);
	EXPECT_DOUBLE_EQ(starpu_sched_ctx_get_nready_flops(ctx), 0.0);
	starpu_sched_ctx_delete(ctx);

	std::string err = stderr_of([] { EXPECT_EQ(starpu_sched_ctx_get_nready_flops(0), 0.0); });
	EXPECT_TRUE(contains(err, "does not count the flops")) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_sched_ctx_get_nready_tasks(ctx), 0); });
	EXPECT_TRUE(contains(err, "does not exist")) << err;
}

namespace {

// A policy that hands every task to another context.
std::atomic<unsigned> forward_to{0};

int forward_push(struct starpu_task *task)
{
	unsigned from = task->sched_ctx;
	starpu_sched_ctx_move_task_to_ctx_locked(task, forward_to.load(), 1);
	starpu_sched_ctx_revert_task_counters_ctx_locked(from, task->flops);
	return 0;
}

struct starpu_task *forward_pop(unsigned)
{
	return nullptr;
}

// StarPU 1.4 never calls pop_every_task (documented unused): neither does Astrolabe.
std::atomic<int> pop_every_calls{0};

struct starpu_task *forward_pop_every(unsigned)
{
	pop_every_calls++;
	return nullptr;
}

struct starpu_sched_policy forward_policy = {};

} // namespace

TEST(SchedCtxTasks, APolicyMovesItsTasksToAnotherContext)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	forward_policy.push_task = forward_push;
	forward_policy.pop_task = forward_pop;
	forward_policy.pop_every_task = forward_pop_every;
	pop_every_calls = 0;
	forward_policy.policy_name = "forward";
	forward_policy.policy_description = "hands its tasks to another context";
	int zero[] = {0}, one[] = {1};
	unsigned target = create_ctx_without_policy(one, 1, "target");
	ASSERT_LT(target, (unsigned)STARPU_NMAX_SCHED_CTXS);
	forward_to = target;
	unsigned from = starpu_sched_ctx_create(zero, 1, "forwarding", STARPU_SCHED_CTX_POLICY_STRUCT, &forward_policy, 0);
	ASSERT_LT(from, (unsigned)STARPU_NMAX_SCHED_CTXS);
	static Record r;
	r.reset(true);
	for (int i = 0; i < 20; i++)
		ASSERT_EQ(submit_to(from, &r, 'x', 1.0), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(target), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(from), 0);
	EXPECT_EQ(r.ran.load(), 20);
	EXPECT_EQ(r.workers.load(), 1ull << 1) << "a moved task ran outside its new context";
	EXPECT_EQ(starpu_sched_ctx_get_nready_tasks(from), 0);
	EXPECT_EQ(starpu_sched_ctx_get_nready_tasks(target), 0);
	EXPECT_DOUBLE_EQ(starpu_sched_ctx_get_nready_flops(from), 0.0);
	starpu_sched_ctx_delete(from);
	EXPECT_EQ(pop_every_calls.load(), 0);

	// Pushing again into its own context is refused (its hook holds that context).
	struct starpu_task *t = starpu_task_create();
	t->sched_ctx = target;
	std::string err = stderr_of([&] { starpu_sched_ctx_move_task_to_ctx_locked(t, target, 1); });
	EXPECT_TRUE(contains(err, "already in scheduling context")) << err;
	starpu_task_destroy(t);
	starpu_sched_ctx_delete(target);
}

TEST(SchedCtxTasks, AWorkerServesFirstTheContextOfHighestPriorityWithTasksCountedForIt)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int zero[] = {0};
	unsigned a = create_ctx_without_policy(zero, 1, "a");
	unsigned b = create_ctx_without_policy(zero, 1, "b");
	ASSERT_LT(a, (unsigned)STARPU_NMAX_SCHED_CTXS);
	ASSERT_LT(b, (unsigned)STARPU_NMAX_SCHED_CTXS);
	static Record r;
	// Round 1: b first; round 2: a first. Taking them in turn would give the same order twice.
	for (int round = 0; round < 2; round++) {
		starpu_sched_ctx_set_priority(zero, 1, a, round == 0 ? 1 : 7);
		starpu_sched_ctx_set_priority(zero, 1, b, round == 0 ? 7 : 1);
		EXPECT_EQ(starpu_sched_ctx_get_priority(0, b), round == 0 ? 7u : 1u);
		r.reset(true);
		{
			Gate gate(std::vector<int>{0});
			ASSERT_TRUE(gate.close());
			ASSERT_EQ(submit_to(a, &r, 'a'), 0);
			ASSERT_EQ(submit_to(b, &r, 'b'), 0);
			starpu_sched_ctx_list_task_counters_increment(a, 0);
			starpu_sched_ctx_list_task_counters_increment(b, 0);
		}
		ASSERT_EQ(starpu_task_wait_for_all_in_ctx(a), 0);
		ASSERT_EQ(starpu_task_wait_for_all_in_ctx(b), 0);
		ASSERT_EQ(r.order.size(), 2u);
		EXPECT_EQ(r.order[0], round == 0 ? 'b' : 'a') << "round " << round;
		starpu_sched_ctx_list_task_counters_reset(a, 0);
		starpu_sched_ctx_list_task_counters_reset(b, 0);
	}
	// The _all forms count for each worker of the context; a decrement never goes below 0.
	starpu_sched_ctx_list_task_counters_increment_all_ctx_locked(nullptr, a);
	starpu_sched_ctx_list_task_counters_decrement_all_ctx_locked(nullptr, a);
	starpu_sched_ctx_list_task_counters_decrement_all_ctx_locked(nullptr, a);
	starpu_sched_ctx_list_task_counters_reset_all(nullptr, a);
	starpu_sched_ctx_delete(a);
	starpu_sched_ctx_delete(b);

	std::string err = stderr_of([] {
		int bad[] = {9};
		starpu_sched_ctx_set_priority(bad, 1, 0, 1);
		starpu_sched_ctx_list_task_counters_increment(0, -2);
		EXPECT_EQ(starpu_sched_ctx_get_priority(0, 7), 0u);
	});
	EXPECT_TRUE(contains(err, "worker id 9 does not exist")) << err;
	EXPECT_TRUE(contains(err, "worker id -2 does not exist")) << err;
	EXPECT_TRUE(contains(err, "context 7 does not exist")) << err;
}

TEST(SchedCtxTasks, BookedWorkersHoldTheirCoresUntilUnbooked)
{
	Runtime rt(3);
	ASSERT_TRUE(rt.ok());
	int all[] = {2, 0, 1};
	int master = starpu_sched_ctx_book_workers_for_task(0, all, 3);
	ASSERT_EQ(master, 0) << "the lowest worker is the master of a booking from the application";
	static Record r;
	r.reset(true);
	for (int i = 0; i < 30; i++)
		ASSERT_EQ(submit_to(0, &r), 0);
	ASSERT_TRUE(wait_until([&] { return r.ran.load() == 30; }, 60000));
	EXPECT_EQ(r.workers.load(), 1ull << 0) << "a booked worker ran a task";

	int two[] = {0, 1};
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_sched_ctx_book_workers_for_task(0, two, 2), -EBUSY); });
	EXPECT_TRUE(contains(err, "already has workers booked")) << err;

	starpu_sched_ctx_unbook_workers_for_task(0, master);
	starpu_task_wait_for_all();
	err = stderr_of([&] {
		starpu_sched_ctx_unbook_workers_for_task(0, master);
		EXPECT_LT(starpu_sched_ctx_book_workers_for_task(0, two, 0), 0);
	});
	EXPECT_TRUE(contains(err, "has no workers booked")) << err;
	EXPECT_TRUE(contains(err, "0 workers")) << err;
	// Free again: worker 1 runs what is pinned to it.
	Gate gate(std::vector<int>{1});
	EXPECT_TRUE(gate.close());
}
