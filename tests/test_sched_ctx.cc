// SPDX-License-Identifier: LGPL-2.1-or-later
// Scheduling contexts (starpu_sched_ctx.h): contexts with their own policy
// and workers, tasks confined to them, workers moved under load, waits per
// context, priorities, queries, and bad input.
#include <gtest/gtest.h>
#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "helpers.h"

using namespace astro_test;

namespace {

std::string capture_stderr_end()
{
	return testing::internal::GetCapturedStderr();
}

// What the tasks of one context saw.
struct CtxRecord
{
	std::atomic<int> ran{0};
	std::atomic<unsigned long long> workers{0}; // bit per worker that ran one
	std::atomic<int> foreign{0};                // ran on a worker outside the allowed set
	unsigned long long allowed = 0;
	unsigned ctx = 0;
	std::atomic<int> wrong_ctx{0};              // starpu_sched_ctx_worker_get_id() said the worker is not in it
	// Static records live across --gtest_repeat runs: each test starts from zero.
	void reset(unsigned long long allowed_workers, unsigned context)
	{
		ran = 0;
		workers = 0;
		foreign = 0;
		wrong_ctx = 0;
		allowed = allowed_workers;
		ctx = context;
	}
};

void record_kernel(void **, void *arg)
{
	CtxRecord *r = static_cast<CtxRecord *>(arg);
	int w = starpu_worker_get_id();
	r->workers |= 1ull << w;
	if (!((r->allowed >> w) & 1))
		r->foreign++;
	if (starpu_sched_ctx_worker_get_id(r->ctx) != (unsigned)w)
		r->wrong_ctx++;
	r->ran++;
}

starpu_codelet record_cl = cpu_codelet(record_kernel, 0, "ctx_record");

int submit_to(unsigned ctx, CtxRecord *r, bool via_field)
{
	struct starpu_task *t = starpu_task_create();
	t->cl = &record_cl;
	t->cl_arg = r;
	int ret;
	if (via_field) {
		t->sched_ctx = ctx;
		ret = starpu_task_submit(t);
	} else {
		ret = starpu_task_submit_to_ctx(t, ctx);
	}
	if (ret)
		starpu_task_destroy(t);
	return ret;
}

unsigned long long mask_of(std::initializer_list<int> ids)
{
	unsigned long long m = 0;
	for (int w : ids)
		m |= 1ull << w;
	return m;
}

bool have_policies(std::initializer_list<const char *> names, std::string *missing)
{
	for (const char *n : names)
		if (!policy_registered(n)) {
			*missing = n;
			return false;
		}
	return true;
}

// Two tasks, one per context, meet: each waits (bounded) until the other runs.
struct Meeting
{
	std::atomic<int> arrived{0};
	std::atomic<int> met{0};
};

void meet_kernel(void **, void *arg)
{
	Meeting *m = static_cast<Meeting *>(arg);
	m->arrived++;
	if (wait_until([&] { return m->arrived.load() >= 2; }, 60000))
		m->met++;
}

starpu_codelet meet_cl = cpu_codelet(meet_kernel, 0, "ctx_meet");

} // namespace

TEST(SchedCtx, TwoContextsWithTheirOwnPoliciesRunAtOnceOnTheirOwnWorkers)
{
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	std::string missing;
	if (!have_policies({"eager", "lws"}, &missing))
		GTEST_SKIP() << "policy " << missing << " is not built";
	int w1[] = {0, 1}, w2[] = {2, 3};
	unsigned c1 = starpu_sched_ctx_create(w1, 2, "first", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
	unsigned c2 = starpu_sched_ctx_create(w2, 2, "second", STARPU_SCHED_CTX_POLICY_NAME, "lws", 0);
	ASSERT_LT(c1, (unsigned)STARPU_NMAX_SCHED_CTXS);
	ASSERT_LT(c2, (unsigned)STARPU_NMAX_SCHED_CTXS);
	ASSERT_NE(c1, c2);
	EXPECT_STREQ(starpu_sched_ctx_get_sched_policy(c1)->policy_name, "eager");
	EXPECT_STREQ(starpu_sched_ctx_get_sched_policy_name(c2), "lws");
	EXPECT_STREQ(starpu_sched_ctx_get_name(c1), "first");
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(c1), 2u);
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(c2), 2u);
	EXPECT_NE(starpu_sched_ctx_get_policy_data(c1), starpu_sched_ctx_get_policy_data(c2));

	// One task of each context runs while the other does: they wait for each other.
	static Meeting meeting;
	meeting.arrived = 0;
	meeting.met = 0;
	for (unsigned ctx : {c1, c2}) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &meet_cl;
		t->cl_arg = &meeting;
		ASSERT_EQ(starpu_task_submit_to_ctx(t, ctx), 0);
	}

	static CtxRecord r1, r2;
	r1.reset(mask_of({0, 1}), c1);
	r2.reset(mask_of({2, 3}), c2);
	const int n = 300;
	for (int i = 0; i < n; i++) {
		ASSERT_EQ(submit_to(c1, &r1, i % 2), 0);
		ASSERT_EQ(submit_to(c2, &r2, i % 2 == 0), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(c1), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(c2), 0);
	EXPECT_EQ(meeting.met.load(), 2) << "the two contexts' tasks did not run at the same time";
	EXPECT_EQ(r1.ran.load(), n);
	EXPECT_EQ(r2.ran.load(), n);
	EXPECT_EQ(r1.foreign.load(), 0);
	EXPECT_EQ(r2.foreign.load(), 0);
	EXPECT_EQ(r1.wrong_ctx.load(), 0);
	EXPECT_EQ(r2.wrong_ctx.load(), 0);
	starpu_sched_ctx_delete(c1);
	starpu_sched_ctx_delete(c2);
}

namespace {

struct Hold
{
	std::atomic<bool> open{false};
	std::atomic<int> started{0};
	std::atomic<int> done{0};
};

void hold_kernel(void **, void *arg)
{
	Hold *h = static_cast<Hold *>(arg);
	h->started++;
	wait_until([&] { return h->open.load(); }, 60000);
	h->done++;
}

starpu_codelet hold_cl = cpu_codelet(hold_kernel, 0, "ctx_hold");

} // namespace

TEST(SchedCtx, WaitForAllInCtxWaitsForThatContextOnly)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int w1[] = {0}, w2[] = {1};
	unsigned c1 = starpu_sched_ctx_create(w1, 1, "held", 0);
	unsigned c2 = starpu_sched_ctx_create(w2, 1, "quick", 0);
	ASSERT_LT(c1, (unsigned)STARPU_NMAX_SCHED_CTXS);
	ASSERT_LT(c2, (unsigned)STARPU_NMAX_SCHED_CTXS);
	static Hold hold;
	hold.open = false;
	hold.started = 0;
	hold.done = 0;
	struct starpu_task *t = starpu_task_create();
	t->cl = &hold_cl;
	t->cl_arg = &hold;
	ASSERT_EQ(starpu_task_submit_to_ctx(t, c1), 0);
	static CtxRecord r;
	r.reset(mask_of({1}), c2);
	for (int i = 0; i < 50; i++)
		ASSERT_EQ(submit_to(c2, &r, true), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(c2), 0);
	EXPECT_EQ(r.ran.load(), 50);
	EXPECT_EQ(r.foreign.load(), 0);
	EXPECT_EQ(hold.done.load(), 0) << "the held context's task ended before it was let go";
	hold.open = true;
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(c1), 0);
	EXPECT_EQ(hold.done.load(), 1);
	starpu_sched_ctx_delete(c1);
	starpu_sched_ctx_delete(c2);
}

class SchedCtxMoves : public testing::TestWithParam<const char *>
{
};

namespace {

void count_kernel(void **, void *arg)
{
	CtxRecord *r = static_cast<CtxRecord *>(arg);
	int w = starpu_worker_get_id();
	// A little work, so that tasks are still queued while the workers move.
	volatile unsigned sink = 0;
	for (unsigned i = 0; i < 2000; i++)
		sink = sink + i;
	r->workers |= 1ull << w;
	r->ran++;
}

starpu_codelet count_cl = cpu_codelet(count_kernel, 0, "ctx_count");

} // namespace

// Workers come and go while the context's tasks flow: every task runs once.
TEST_P(SchedCtxMoves, AddingAndRemovingWorkersUnderLoadLosesNoTask)
{
	const char *policy = GetParam();
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	if (!policy_registered(policy))
		GTEST_SKIP() << "policy " << policy << " is not built";
	int first[] = {0, 1};
	unsigned ctx = starpu_sched_ctx_create(first, 2, "moving", STARPU_SCHED_CTX_POLICY_NAME, policy, 0);
	ASSERT_LT(ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	static CtxRecord r;
	r.reset(0, ctx);
	const int n = 3000;
	int submitted = 0;
	// Each step keeps a worker in the context (removing the last one while tasks wait is refused).
	const std::vector<std::pair<bool, std::vector<int>>> steps = {
		{false, {0}}, {true, {2, 3}}, {false, {1}}, {false, {2}}, {true, {0, 1}}, {false, {3}}, {true, {2}}, {false, {0, 2}},
	};
	for (int round = 0; submitted < n; round++) {
		for (int i = 0; i < 50 && submitted < n; i++, submitted++) {
			struct starpu_task *t = starpu_task_create();
			t->cl = &count_cl;
			t->cl_arg = &r;
			t->sched_ctx = ctx;
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
		auto &step = steps[round % steps.size()];
		std::vector<int> ids = step.second;
		if (step.first)
			starpu_sched_ctx_add_workers(ids.data(), (unsigned)ids.size(), ctx);
		else
			starpu_sched_ctx_remove_workers(ids.data(), (unsigned)ids.size(), ctx);
		ASSERT_GT(starpu_sched_ctx_get_nworkers(ctx), 0u);
		for (int id : ids)
			EXPECT_EQ(starpu_sched_ctx_contains_worker(id, ctx), step.first ? 1u : 0u);
	}
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
	EXPECT_EQ(r.ran.load(), n);
	starpu_sched_ctx_delete(ctx);
}

INSTANTIATE_TEST_SUITE_P(Policies, SchedCtxMoves, testing::Values("eager", "prio", "lws", "ws", "random", "dmda", "heteroprio"),
			 [](const testing::TestParamInfo<const char *> &info) { return std::string(info.param); });

TEST(SchedCtx, DeleteWaitsForItsTasksAndGivesItsWorkersToTheInheritor)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int w1[] = {0}, w2[] = {1};
	unsigned c1 = starpu_sched_ctx_create(w1, 1, "leaving", 0);
	unsigned c2 = starpu_sched_ctx_create(w2, 1, "heir", 0);
	ASSERT_LT(c1, (unsigned)STARPU_NMAX_SCHED_CTXS);
	ASSERT_LT(c2, (unsigned)STARPU_NMAX_SCHED_CTXS);
	starpu_sched_ctx_set_inheritor(c1, c2);
	EXPECT_EQ(starpu_sched_ctx_get_inheritor(c1), c2);
	static CtxRecord r;
	r.reset(mask_of({0}), c1);
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(submit_to(c1, &r, true), 0);
	starpu_sched_ctx_finished_submit(c1);
	starpu_sched_ctx_delete(c1);
	EXPECT_EQ(r.ran.load(), 100);
	EXPECT_EQ(r.foreign.load(), 0);
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(c2), 2u);
	EXPECT_EQ(starpu_sched_ctx_contains_worker(0, c2), 1u);
	starpu_sched_ctx_delete(c2);
}

TEST(SchedCtx, TheThreadsContextTakesTasksLeftUnset)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int w[] = {1};
	unsigned ctx = starpu_sched_ctx_create(w, 1, "current", 0);
	ASSERT_LT(ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	// None chosen yet (StarPU's answer), and "no context" has a policy data slot of its own.
	EXPECT_EQ(starpu_sched_ctx_get_context(), (unsigned)STARPU_NMAX_SCHED_CTXS);
	static int slot;
	EXPECT_EQ(starpu_sched_ctx_get_policy_data(STARPU_NMAX_SCHED_CTXS), nullptr);
	starpu_sched_ctx_set_policy_data(STARPU_NMAX_SCHED_CTXS, &slot);
	EXPECT_EQ(starpu_sched_ctx_get_policy_data(STARPU_NMAX_SCHED_CTXS), &slot);
	EXPECT_NE(starpu_sched_ctx_get_policy_data(0), &slot);
	starpu_sched_ctx_set_context(&ctx);
	EXPECT_EQ(starpu_sched_ctx_get_context(), ctx);
	static CtxRecord r;
	r.reset(mask_of({1}), ctx);
	struct starpu_task *t = starpu_task_create();
	t->cl = &record_cl;
	t->cl_arg = &r;
	t->detach = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);
	EXPECT_EQ(t->sched_ctx, ctx);
	ASSERT_EQ(starpu_task_wait(t), 0); // destroys it (task->destroy)
	EXPECT_EQ(r.ran.load(), 1);
	EXPECT_EQ(r.foreign.load(), 0);
	unsigned global = 0;
	starpu_sched_ctx_set_context(&global);
	EXPECT_EQ(starpu_sched_ctx_get_context(), 0u);
	unsigned none = STARPU_NMAX_SCHED_CTXS;
	starpu_sched_ctx_set_context(&none);
	EXPECT_EQ(starpu_sched_ctx_get_context(), (unsigned)STARPU_NMAX_SCHED_CTXS);
	starpu_sched_ctx_delete(ctx);
}

namespace {

unsigned init_called_with = 12345;
void policy_init_fn(unsigned id)
{
	init_called_with = id;
}

} // namespace

TEST(SchedCtx, OptionsPrioritiesAndQueries)
{
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	int w[] = {3, 1};
	static int user_data;
	init_called_with = 12345;
	unsigned ctx = starpu_sched_ctx_create(w, 2, "queried", STARPU_SCHED_CTX_POLICY_MIN_PRIO, -3, STARPU_SCHED_CTX_POLICY_MAX_PRIO, 7,
					       STARPU_SCHED_CTX_USER_DATA, &user_data, STARPU_SCHED_CTX_POLICY_INIT, policy_init_fn,
					       STARPU_SCHED_CTX_HIERARCHY_LEVEL, 2u, 0);
	ASSERT_LT(ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	// The policy calls it if it wants it (StarPU: heteroprio does), never the kernel.
	EXPECT_EQ(init_called_with, 12345u);
	EXPECT_EQ(starpu_sched_ctx_get_min_priority(ctx), -3);
	EXPECT_EQ(starpu_sched_ctx_get_max_priority(ctx), 7);
	EXPECT_TRUE(starpu_sched_ctx_min_priority_is_set(ctx));
	EXPECT_NE(starpu_sched_ctx_get_max_priority(0), 7) << "the global context's range changed too";
	EXPECT_EQ(starpu_sched_ctx_get_user_data(ctx), &user_data);
	EXPECT_EQ(starpu_sched_ctx_get_sched_policy_init(ctx), &policy_init_fn);
	EXPECT_EQ(starpu_sched_ctx_get_hierarchy_level(ctx), 2u);
	// Without a policy option there is no scheduler (StarPU 1.4): the master, its lowest worker, runs its tasks.
	EXPECT_EQ(starpu_sched_ctx_get_sched_policy(ctx), nullptr);
	EXPECT_EQ(starpu_sched_ctx_has_starpu_scheduler(ctx, nullptr), 0u);
	EXPECT_EQ(starpu_sched_ctx_master_get_context(1), ctx);
	// A policy named "" is the global context's.
	unsigned named = starpu_sched_ctx_create(w, 2, "named", STARPU_SCHED_CTX_POLICY_NAME, "", 0);
	ASSERT_LT(named, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_EQ(starpu_sched_ctx_get_sched_policy(named), starpu_sched_get_sched_policy());
	EXPECT_EQ(starpu_sched_ctx_has_starpu_scheduler(named, nullptr), 1u);
	starpu_sched_ctx_delete(named);

	int *ids = nullptr;
	unsigned n = starpu_sched_ctx_get_workers_list(ctx, &ids);
	std::set<int> got(ids, ids + n);
	free(ids);
	EXPECT_EQ(got, (std::set<int>{1, 3}));

	struct starpu_worker_collection *coll = starpu_sched_ctx_get_worker_collection(ctx);
	ASSERT_NE(coll, nullptr);
	struct starpu_sched_ctx_iterator it;
	std::set<int> iterated;
	coll->init_iterator(coll, &it);
	while (coll->has_next(coll, &it))
		iterated.insert(coll->get_next(coll, &it));
	EXPECT_EQ(iterated, (std::set<int>{1, 3}));
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(0), 4u);

	EXPECT_EQ(starpu_sched_ctx_contains_worker(3, ctx), 1u);
	EXPECT_EQ(starpu_sched_ctx_contains_worker(0, ctx), 0u);
	EXPECT_EQ(starpu_sched_ctx_contains_worker(0, 0), 1u);
	EXPECT_EQ(starpu_sched_ctx_contains_type_of_worker(STARPU_CPU_WORKER, ctx), 1u);
	EXPECT_EQ(starpu_sched_ctx_get_nshared_workers(ctx, 0), 2u);
	EXPECT_EQ(starpu_sched_ctx_overlapping_ctxs_on_worker(1), 1u);
	EXPECT_EQ(starpu_sched_ctx_overlapping_ctxs_on_worker(0), 0u);
	EXPECT_EQ(starpu_sched_ctx_worker_get_id(ctx), (unsigned)-1) << "the application thread is no worker";

	unsigned *ctxs = nullptr;
	unsigned nctxs = starpu_worker_get_sched_ctx_list(3, &ctxs);
	std::set<unsigned> of3(ctxs, ctxs + nctxs);
	free(ctxs);
	EXPECT_EQ(of3, (std::set<unsigned>{0, ctx}));

	// Without overlap, workers 1 and 3 (in ctx) are left out.
	unsigned inside = starpu_sched_ctx_create_inside_interval("", "interval", 1, 3, 0, 0, 0);
	ASSERT_LT(inside, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(inside), 2u);
	EXPECT_EQ(starpu_sched_ctx_contains_worker(0, inside), 1u);
	EXPECT_EQ(starpu_sched_ctx_contains_worker(1, inside), 0u);
	starpu_sched_ctx_delete(inside);
	unsigned overlapping = starpu_sched_ctx_create_inside_interval("", "overlap", 1, 3, 0, 0, 1);
	ASSERT_LT(overlapping, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(overlapping), 3u);
	starpu_sched_ctx_delete(overlapping);

	// Every worker with a NULL list.
	unsigned all = starpu_sched_ctx_create(nullptr, -1, "all", 0);
	ASSERT_LT(all, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(all), 4u);
	starpu_sched_ctx_delete(all);
	starpu_sched_ctx_delete(ctx);
}

TEST(SchedCtx, BadInputGetsAClearError)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int w[] = {0};
	std::string err;

	testing::internal::CaptureStderr();
	unsigned bad = starpu_sched_ctx_create(w, 1, "x", STARPU_SCHED_CTX_POLICY_NAME, "no-such-policy", 0);
	err = capture_stderr_end();
	EXPECT_EQ(bad, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_TRUE(contains(err, "no-such-policy")) << err;

	int out_of_range[] = {0, 99};
	testing::internal::CaptureStderr();
	bad = starpu_sched_ctx_create(out_of_range, 2, "x", 0);
	err = capture_stderr_end();
	EXPECT_EQ(bad, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_TRUE(contains(err, "worker id 99")) << err;

	testing::internal::CaptureStderr();
	bad = starpu_sched_ctx_create(w, 1, "x", STARPU_SCHED_CTX_NESTED, (unsigned)STARPU_NMAX_SCHED_CTXS - 1, 0);
	err = capture_stderr_end();
	EXPECT_EQ(bad, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_TRUE(contains(err, "STARPU_SCHED_CTX_NESTED")) << err;

	testing::internal::CaptureStderr();
	bad = starpu_sched_ctx_create(w, 1, "x", 12345, 0);
	err = capture_stderr_end();
	EXPECT_EQ(bad, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_TRUE(contains(err, "unknown option 12345")) << err;

	unsigned ctx = starpu_sched_ctx_create(w, 1, "short-lived", 0);
	ASSERT_LT(ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	starpu_sched_ctx_delete(ctx);

	static CtxRecord r;
	r.reset(0, ctx);
	testing::internal::CaptureStderr();
	EXPECT_EQ(submit_to(ctx, &r, false), -EINVAL);
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(ctx), 0u);
	starpu_sched_ctx_add_workers(w, 1, ctx);
	starpu_sched_ctx_delete(ctx);
	err = capture_stderr_end();
	EXPECT_TRUE(contains(err, "does not exist")) << err;
	EXPECT_EQ(r.ran.load(), 0);

	testing::internal::CaptureStderr();
	EXPECT_EQ(submit_to(STARPU_NMAX_SCHED_CTXS + 3, &r, true), -EINVAL);
	starpu_sched_ctx_remove_workers(w, 1, 0);
	err = capture_stderr_end();
	EXPECT_TRUE(contains(err, "global scheduling context keeps every worker")) << err;
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(0), 2u);

	// A context deleted without workers gives the tasks that waited for some to the global context (said).
	unsigned empty = starpu_sched_ctx_create(w, 0, "empty", 0);
	ASSERT_LT(empty, (unsigned)STARPU_NMAX_SCHED_CTXS);
	r.reset(mask_of({0, 1}), 0);
	EXPECT_EQ(submit_to(empty, &r, true), 0);
	testing::internal::CaptureStderr();
	int bad_worker[] = {-1};
	starpu_sched_ctx_add_workers(bad_worker, 1, empty);
	starpu_sched_ctx_delete(empty);
	err = capture_stderr_end();
	EXPECT_TRUE(contains(err, "worker id -1")) << err;
	EXPECT_TRUE(contains(err, "1 tasks waiting for workers")) << err;
	starpu_task_wait_for_all();
	EXPECT_EQ(r.ran.load(), 1);
}

// STARPU_SCHED_CTX_SUB_CTXS records the sub-contexts, read back with starpu_sched_ctx_get_sub_ctxs().
TEST(SchedCtx, SubContextsAreRecorded)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int w0[] = {0}, w1[] = {1}, both[] = {0, 1};
	unsigned s1 = starpu_sched_ctx_create(w0, 1, "sub1", STARPU_SCHED_CTX_POLICY_NAME, "", 0);
	unsigned s2 = starpu_sched_ctx_create(w1, 1, "sub2", STARPU_SCHED_CTX_POLICY_NAME, "", 0);
	ASSERT_LT(s1, (unsigned)STARPU_NMAX_SCHED_CTXS);
	ASSERT_LT(s2, (unsigned)STARPU_NMAX_SCHED_CTXS);
	int subs[] = {(int)s2, (int)s1};
	unsigned parent = starpu_sched_ctx_create(both, 2, "parent", STARPU_SCHED_CTX_POLICY_NAME, "",
						  STARPU_SCHED_CTX_SUB_CTXS, subs, 2, 0);
	ASSERT_LT(parent, (unsigned)STARPU_NMAX_SCHED_CTXS);
	int got[STARPU_NMAX_SCHED_CTXS];
	ASSERT_EQ(starpu_sched_ctx_get_sub_ctxs(parent, got), 2);
	EXPECT_EQ(got[0], (int)s2);
	EXPECT_EQ(got[1], (int)s1);
	EXPECT_EQ(starpu_sched_ctx_get_sub_ctxs(s1, got), 0);
	EXPECT_EQ(starpu_sched_ctx_get_sub_ctxs(0, nullptr), 0);
	EXPECT_EQ(starpu_sched_ctx_get_nsms(parent), 0);
	EXPECT_EQ(starpu_sched_ctx_get_stream_worker(s2), 1);
	EXPECT_EQ(starpu_sched_ctx_get_stream_worker(s1), 0);

	// The parent schedules its tasks as any context.
	static CtxRecord r;
	r.reset(mask_of({0, 1}), parent);
	for (int i = 0; i < 20; i++)
		ASSERT_EQ(submit_to(parent, &r, i % 2), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(parent), 0);
	EXPECT_EQ(r.ran.load(), 20);
	EXPECT_EQ(r.foreign.load(), 0);

	// Its slot, used again, starts without sub-contexts.
	starpu_sched_ctx_delete(parent);
	unsigned again = starpu_sched_ctx_create(both, 2, "again", STARPU_SCHED_CTX_POLICY_NAME, "", 0);
	ASSERT_LT(again, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_EQ(starpu_sched_ctx_get_sub_ctxs(again, got), 0);

	// Bad input: a context that does not exist, a bad count, no array; each said, nothing made.
	std::string err;
	int ghost[] = {STARPU_NMAX_SCHED_CTXS - 1}; // never made: 4 contexts at most exist here
	testing::internal::CaptureStderr();
	unsigned bad = starpu_sched_ctx_create(both, 2, "x", STARPU_SCHED_CTX_SUB_CTXS, ghost, 1, 0);
	err = capture_stderr_end();
	EXPECT_EQ(bad, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_TRUE(contains(err, "names context " + std::to_string(STARPU_NMAX_SCHED_CTXS - 1) + ", which does not exist")) << err;
	testing::internal::CaptureStderr();
	bad = starpu_sched_ctx_create(both, 2, "x", STARPU_SCHED_CTX_SUB_CTXS, subs, -1, 0);
	EXPECT_EQ(bad, (unsigned)STARPU_NMAX_SCHED_CTXS);
	bad = starpu_sched_ctx_create(both, 2, "x", STARPU_SCHED_CTX_SUB_CTXS, nullptr, 2, 0);
	EXPECT_EQ(bad, (unsigned)STARPU_NMAX_SCHED_CTXS);
	err = capture_stderr_end();
	EXPECT_TRUE(contains(err, "gives -1 contexts")) << err;
	EXPECT_TRUE(contains(err, "gives 2 contexts and no array")) << err;
	testing::internal::CaptureStderr();
	EXPECT_EQ(starpu_sched_ctx_get_sub_ctxs(STARPU_NMAX_SCHED_CTXS - 1, got), -EINVAL);
	int start = 7, end = 7;
	starpu_sched_ctx_get_sms_interval(0, &start, &end);
	err = capture_stderr_end();
	EXPECT_TRUE(contains(err, "does not exist")) << err;
	EXPECT_TRUE(contains(err, "drives no share of a GPU")) << err;
	EXPECT_EQ(start, 0);
	EXPECT_EQ(end, 0);
	for (unsigned c : {again, s1, s2})
		starpu_sched_ctx_delete(c);
}

// Removing the last worker while tasks of the context wait is refused: they would never run.
TEST(SchedCtx, RemovingTheLastWorkerWithTasksPendingIsRefused)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int w[] = {0};
	unsigned ctx = starpu_sched_ctx_create(w, 1, "busy", 0);
	ASSERT_LT(ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	static Hold hold;
	hold.open = false;
	hold.started = 0;
	hold.done = 0;
	struct starpu_task *t = starpu_task_create();
	t->cl = &hold_cl;
	t->cl_arg = &hold;
	ASSERT_EQ(starpu_task_submit_to_ctx(t, ctx), 0);
	testing::internal::CaptureStderr();
	starpu_sched_ctx_remove_workers(w, 1, ctx);
	std::string err = capture_stderr_end();
	EXPECT_TRUE(contains(err, "without workers")) << err;
	EXPECT_EQ(starpu_sched_ctx_contains_worker(0, ctx), 1u);
	hold.open = true;
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
	EXPECT_EQ(hold.done.load(), 1);
	starpu_sched_ctx_delete(ctx);
}
