// SPDX-License-Identifier: LGPL-2.1-or-later
// Nested scheduling contexts (STARPU_SCHED_CTX_NESTED, _AWAKE_WORKERS,
// _HIERARCHY_LEVEL, the master queries) and the parallel workers made of them
// (starpu_parallel_worker.h) on synthetic hwloc topologies.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "helpers.h"

using namespace astro_test;

namespace {

const unsigned NONE = STARPU_NMAX_SCHED_CTXS;

// What the tasks saw: per worker, how many ran there, in which context, with how many cores.
struct Seen
{
	std::atomic<int> ran{0};
	std::atomic<int> on_worker[STARPU_NMAXWORKERS];
	std::mutex lock;
	std::vector<unsigned> ctx_on_worker[STARPU_NMAXWORKERS];
	std::vector<int> ncpus_on_worker[STARPU_NMAXWORKERS];
	void reset()
	{
		ran = 0;
		std::lock_guard<std::mutex> g(lock);
		for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
			on_worker[w] = 0;
			ctx_on_worker[w].clear();
			ncpus_on_worker[w].clear();
		}
	}
	std::set<unsigned> contexts_on(int w)
	{
		std::lock_guard<std::mutex> g(lock);
		return std::set<unsigned>(ctx_on_worker[w].begin(), ctx_on_worker[w].end());
	}
	std::set<int> ncpus_on(int w)
	{
		std::lock_guard<std::mutex> g(lock);
		return std::set<int>(ncpus_on_worker[w].begin(), ncpus_on_worker[w].end());
	}
};

Seen seen;

void record_kernel(void **, void *)
{
	int w = starpu_worker_get_id();
	unsigned ctx = starpu_task_get_current()->sched_ctx;
	int *cpuids = nullptr, ncpuids = 0;
	starpu_sched_ctx_get_available_cpuids(ctx, &cpuids, &ncpuids);
	free(cpuids);
	{
		std::lock_guard<std::mutex> g(seen.lock);
		seen.ctx_on_worker[w].push_back(ctx);
		seen.ncpus_on_worker[w].push_back(ncpuids);
	}
	seen.on_worker[w]++;
	seen.ran++;
}

starpu_codelet record_cl = cpu_codelet(record_kernel, 0, "nested_record");

int submit(unsigned ctx, int n)
{
	for (int i = 0; i < n; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &record_cl;
		t->possibly_parallel = 1;
		int ret = starpu_task_submit_to_ctx(t, ctx);
		if (ret) {
			starpu_task_destroy(t);
			return ret;
		}
	}
	return 0;
}

// Tasks that each wait (bounded) until n of them run at once.
std::atomic<int> met_arrived{0}, met_count{0};
int met_target = 0;

void meet_kernel(void **, void *)
{
	met_arrived++;
	if (wait_until([] { return met_arrived.load() >= met_target; }, 60000))
		met_count++;
}

starpu_codelet meet_cl = cpu_codelet(meet_kernel, 0, "nested_meet");

bool have(const char *policy)
{
	return policy_registered(policy);
}

} // namespace

TEST(NestedCtx, ANestedContextWithoutPolicyRunsItsTasksOnItsMasterWithItsCores)
{
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	if (!have("eager"))
		GTEST_SKIP() << "policy eager is not built";
	int all[] = {0, 1, 2, 3}, part[] = {3, 2};
	unsigned parent = starpu_sched_ctx_create(all, 4, "parent", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
	ASSERT_NE(parent, NONE);
	unsigned child = starpu_sched_ctx_create(part, 2, "child", STARPU_SCHED_CTX_NESTED, parent, 0);
	ASSERT_NE(child, NONE);

	EXPECT_EQ(starpu_sched_ctx_get_hierarchy_level(parent), 0u);
	EXPECT_EQ(starpu_sched_ctx_get_hierarchy_level(child), 1u);
	EXPECT_EQ(starpu_sched_ctx_get_sched_policy(child), nullptr);
	unsigned awake = 7;
	EXPECT_EQ(starpu_sched_ctx_has_starpu_scheduler(child, &awake), 0u);
	EXPECT_EQ(awake, 0u);
	EXPECT_EQ(starpu_sched_ctx_has_starpu_scheduler(parent, &awake), 1u);
	// The master is the lowest worker.
	EXPECT_EQ(starpu_sched_ctx_worker_is_master_for_child_ctx(2, parent), child);
	EXPECT_EQ(starpu_sched_ctx_worker_is_master_for_child_ctx(3, parent), NONE);
	EXPECT_EQ(starpu_sched_ctx_worker_is_master_for_child_ctx(2, child), NONE);
	EXPECT_EQ(starpu_sched_ctx_master_get_context(2), child);
	EXPECT_EQ(starpu_sched_ctx_master_get_context(0), NONE);
	EXPECT_EQ(starpu_sched_ctx_master_get_context(-1), NONE);

	// Outside a worker, every core of the context.
	int *cpuids = nullptr, ncpuids = 0;
	starpu_sched_ctx_get_available_cpuids(child, &cpuids, &ncpuids);
	ASSERT_EQ(ncpuids, 2);
	std::set<int> cpus(cpuids, cpuids + ncpuids);
	free(cpuids);
	EXPECT_EQ(cpus, (std::set<int>{starpu_worker_get_bindid(2), starpu_worker_get_bindid(3)}));

	// Its own tasks: on the master, which has both cores.
	seen.reset();
	ASSERT_EQ(submit(child, 40), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(child), 0);
	EXPECT_EQ(seen.ran.load(), 40);
	EXPECT_EQ(seen.on_worker[2].load(), 40);
	EXPECT_EQ(seen.ncpus_on(2), std::set<int>{2});

	// The parent's: worker 3 is kept for the master, what it takes goes down to it.
	seen.reset();
	const int n = 400;
	ASSERT_EQ(submit(parent, n), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(parent), 0);
	EXPECT_EQ(seen.ran.load(), n);
	EXPECT_EQ(seen.on_worker[3].load(), 0);
	for (unsigned ctx : seen.contexts_on(2))
		EXPECT_EQ(ctx, child);
	for (int w : {0, 1})
		for (unsigned ctx : seen.contexts_on(w))
			EXPECT_EQ(ctx, parent);

	starpu_sched_ctx_delete(child);
	EXPECT_EQ(starpu_sched_ctx_worker_is_master_for_child_ctx(2, parent), NONE);
	EXPECT_EQ(starpu_sched_ctx_master_get_context(2), NONE);
	starpu_sched_ctx_delete(parent);
}

TEST(NestedCtx, AwakeWorkersKeepTakingTheParentsTasks)
{
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	if (!have("eager"))
		GTEST_SKIP() << "policy eager is not built";
	int all[] = {0, 1, 2, 3}, part[] = {2, 3};
	unsigned parent = starpu_sched_ctx_create(all, 4, "parent", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
	unsigned child = starpu_sched_ctx_create(part, 2, "awake", STARPU_SCHED_CTX_NESTED, parent, STARPU_SCHED_CTX_AWAKE_WORKERS, 0);
	ASSERT_NE(child, NONE);
	unsigned awake = 0;
	EXPECT_EQ(starpu_sched_ctx_has_starpu_scheduler(child, &awake), 0u);
	EXPECT_EQ(awake, 1u);
	// Four of the parent's tasks run at once: worker 3 takes one too.
	met_arrived = 0;
	met_count = 0;
	met_target = 4;
	for (int i = 0; i < 4; i++)
	{
		struct starpu_task *t = starpu_task_create();
		t->cl = &meet_cl;
		ASSERT_EQ(starpu_task_submit_to_ctx(t, parent), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(parent), 0);
	EXPECT_EQ(met_count.load(), 4);
	starpu_sched_ctx_delete(child);
	starpu_sched_ctx_delete(parent);
}

TEST(NestedCtx, ANestedContextWithAPolicySchedulesWhatItsMasterHandsDown)
{
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	if (!have("eager") || !have("lws"))
		GTEST_SKIP() << "policies eager and lws are not built";
	int all[] = {0, 1, 2, 3}, part[] = {0, 1};
	unsigned parent = starpu_sched_ctx_create(all, 4, "parent", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
	unsigned child = starpu_sched_ctx_create(part, 2, "scheduled", STARPU_SCHED_CTX_NESTED, parent, STARPU_SCHED_CTX_POLICY_NAME,
						 "lws", STARPU_SCHED_CTX_HIERARCHY_LEVEL, 5u, 0);
	ASSERT_NE(child, NONE);
	EXPECT_STREQ(starpu_sched_ctx_get_sched_policy_name(child), "lws");
	EXPECT_EQ(starpu_sched_ctx_has_starpu_scheduler(child, nullptr), 1u);
	EXPECT_EQ(starpu_sched_ctx_get_hierarchy_level(child), 5u);
	EXPECT_EQ(starpu_sched_ctx_master_get_context(0), child);

	seen.reset();
	const int n = 400;
	ASSERT_EQ(submit(parent, n), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(parent), 0);
	EXPECT_EQ(seen.ran.load(), n);
	// A task handed down runs on the child's workers only.
	for (int w : {2, 3})
		EXPECT_EQ(seen.contexts_on(w).count(child), 0u) << "worker " << w;
	starpu_sched_ctx_delete(parent); // first: the child stands on its own
	EXPECT_EQ(starpu_sched_ctx_master_get_context(0), NONE);
	seen.reset();
	ASSERT_EQ(submit(child, 20), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(child), 0);
	EXPECT_EQ(seen.ran.load(), 20);
	EXPECT_EQ(seen.on_worker[2].load() + seen.on_worker[3].load(), 0);
	starpu_sched_ctx_delete(child);
}

TEST(NestedCtx, WorkersMovedUnderLoadLoseNoTask)
{
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	if (!have("eager"))
		GTEST_SKIP() << "policy eager is not built";
	int all[] = {0, 1, 2, 3}, part[] = {1, 2};
	unsigned parent = starpu_sched_ctx_create(all, 4, "parent", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
	unsigned child = starpu_sched_ctx_create(part, 2, "child", STARPU_SCHED_CTX_NESTED, parent, 0);
	ASSERT_NE(child, NONE);
	seen.reset();
	const int rounds = 20, per_round = 50;
	for (int r = 0; r < rounds; r++) {
		ASSERT_EQ(submit(parent, per_round), 0);
		ASSERT_EQ(submit(child, per_round / 5), 0);
		int w3[] = {3}, w1[] = {1};
		if (r % 2) {
			starpu_sched_ctx_add_workers(w3, 1, child);
			starpu_sched_ctx_remove_workers(w1, 1, child);
		} else {
			starpu_sched_ctx_add_workers(w1, 1, child);
			starpu_sched_ctx_remove_workers(w3, 1, child);
		}
	}
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(parent), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(seen.ran.load(), rounds * (per_round + per_round / 5));
	starpu_sched_ctx_delete(child);
	starpu_sched_ctx_delete(parent);
}

TEST(NestedCtx, BadNestingGetsAClearError)
{
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	int two[] = {0, 1}, other[] = {2};
	unsigned parent = starpu_sched_ctx_create(two, 2, "parent", 0);
	ASSERT_NE(parent, NONE);

	std::string err = stderr_of([&] { EXPECT_EQ(starpu_sched_ctx_create(other, 1, "x", STARPU_SCHED_CTX_NESTED, parent, 0), NONE); });
	EXPECT_TRUE(contains(err, "worker 2 is not in context")) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_sched_ctx_create(two, 1, "x", STARPU_SCHED_CTX_NESTED, NONE - 1, 0), NONE); });
	EXPECT_TRUE(contains(err, "does not exist")) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_sched_ctx_create(two, 1, "x", STARPU_SCHED_CTX_NESTED, 4242u, 0), NONE); });
	EXPECT_TRUE(contains(err, "STARPU_SCHED_CTX_NESTED names context 4242")) << err;

	// A nested context takes only its parent's workers, later too.
	unsigned child = starpu_sched_ctx_create(two, 1, "child", STARPU_SCHED_CTX_NESTED, parent, 0);
	ASSERT_NE(child, NONE);
	err = stderr_of([&] { starpu_sched_ctx_add_workers(other, 1, child); });
	EXPECT_TRUE(contains(err, "worker 2 is not in context")) << err;
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(child), 1u);
	// Not a worker: no rank.
	EXPECT_EQ(starpu_sched_ctx_get_worker_rank(child), -1);
	err = stderr_of([&] { starpu_sched_ctx_bind_current_thread_to_cpuid(100000); });
	EXPECT_TRUE(contains(err, "processing unit 100000 does not exist")) << err;
	starpu_sched_ctx_delete(child);
	starpu_sched_ctx_delete(parent);
}

// ------------------------------------------------------- parallel workers

namespace {

// Two packages of two cores (one processing unit each).
const char *two_packages = "pack:2 core:2 pu:1";

std::atomic<int> created{0};
std::mutex created_lock;
std::set<int> created_on;

void on_create(void *arg)
{
	EXPECT_EQ(arg, &created);
	// As in StarPU, it runs as the pop prologue of a task, the current one.
	EXPECT_NE(starpu_task_get_current(), nullptr);
	std::lock_guard<std::mutex> g(created_lock);
	created_on.insert(starpu_worker_get_id());
	created++;
}

std::vector<std::string> printed_lines(starpu_parallel_worker_config *pw)
{
	testing::internal::CaptureStdout();
	EXPECT_EQ(starpu_parallel_worker_print(pw), 0);
	return lines_of(testing::internal::GetCapturedStdout());
}

} // namespace

TEST(ParallelWorker, OnePerPackageRunsTheTasksOnItsMasterWithItsCores)
{
	ScopedEnv synthetic("HWLOC_SYNTHETIC", two_packages);
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", nullptr);
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	if (!have("eager"))
		GTEST_SKIP() << "policy eager is not built";
	created = 0;
	created_on.clear();
	starpu_parallel_worker_config *pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_POLICY_NAME, "eager",
									 STARPU_PARALLEL_WORKER_CREATE_FUNC, on_create,
									 STARPU_PARALLEL_WORKER_CREATE_FUNC_ARG, &created, 0);
	ASSERT_NE(pw, nullptr);
	unsigned main_ctx = starpu_sched_ctx_get_context();
	EXPECT_NE(main_ctx, 0u);
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(main_ctx), 4u);
	EXPECT_STREQ(starpu_sched_ctx_get_sched_policy_name(main_ctx), "eager");
	// The creation function ran once on each master.
	EXPECT_EQ(created.load(), 2);
	EXPECT_EQ(created_on, (std::set<int>{0, 2}));
	std::vector<std::string> lines = printed_lines(pw);
	ASSERT_EQ(lines.size(), 3u);
	EXPECT_TRUE(contains(lines[0], "2 parallel workers")) << lines[0];
	EXPECT_TRUE(contains(lines[1], "processing units: 0 1")) << lines[1];
	EXPECT_TRUE(contains(lines[2], "processing units: 2 3")) << lines[2];
	unsigned first = starpu_sched_ctx_worker_is_master_for_child_ctx(0, main_ctx);
	unsigned second = starpu_sched_ctx_worker_is_master_for_child_ctx(2, main_ctx);
	ASSERT_NE(first, NONE);
	ASSERT_NE(second, NONE);
	EXPECT_EQ(starpu_sched_ctx_get_nworkers(first), 2u);

	// Tasks left unset go to the whole machine's context and run on the masters, each with two cores.
	seen.reset();
	const int n = 200;
	for (int i = 0; i < n; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &record_cl;
		t->prologue_callback_pop_func = starpu_openmp_prologue;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	starpu_task_wait_for_all();
	EXPECT_EQ(seen.ran.load(), n);
	EXPECT_EQ(seen.on_worker[1].load() + seen.on_worker[3].load(), 0);
	for (int w : {0, 2})
		for (int ncpus : seen.ncpus_on(w))
			EXPECT_EQ(ncpus, 2) << "worker " << w;
	EXPECT_EQ(starpu_parallel_worker_shutdown(pw), 0);
	EXPECT_EQ(starpu_sched_ctx_get_context(), 0u);
}

TEST(ParallelWorker, PartitionsFollowTheOptions)
{
	ScopedEnv synthetic("HWLOC_SYNTHETIC", two_packages);
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", nullptr);
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());

	// Two per package: four of one core.
	starpu_parallel_worker_config *pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_NB, 2, 0);
	ASSERT_NE(pw, nullptr);
	EXPECT_EQ(printed_lines(pw).size(), 5u);
	EXPECT_EQ(starpu_parallel_worker_shutdown(pw), 0);

	// The first package: one of one core given, the rest automatic; the second: one.
	pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_PARTITION_ONE, STARPU_PARALLEL_WORKER_NEW,
					 STARPU_PARALLEL_WORKER_NCORES, 1u, 0);
	ASSERT_NE(pw, nullptr);
	std::vector<std::string> lines = printed_lines(pw);
	ASSERT_EQ(lines.size(), 4u);
	EXPECT_TRUE(contains(lines[1], "processing units: 0")) << lines[1];
	EXPECT_TRUE(contains(lines[2], "processing units: 1")) << lines[2];
	EXPECT_TRUE(contains(lines[3], "processing units: 2 3")) << lines[3];
	EXPECT_EQ(starpu_parallel_worker_shutdown(pw), 0);

	// Between one and two per package, evenly: two (the more, by default).
	pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_MIN_NB, 1, STARPU_PARALLEL_WORKER_MAX_NB, 2,
					 STARPU_PARALLEL_WORKER_KEEP_HOMOGENEOUS, 1, 0);
	ASSERT_NE(pw, nullptr);
	EXPECT_EQ(printed_lines(pw).size(), 5u);
	EXPECT_EQ(starpu_parallel_worker_shutdown(pw), 0);
	// ... or the fewer.
	pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_MIN_NB, 1, STARPU_PARALLEL_WORKER_MAX_NB, 2,
					 STARPU_PARALLEL_WORKER_PREFERE_MIN, 1, 0);
	ASSERT_NE(pw, nullptr);
	EXPECT_EQ(printed_lines(pw).size(), 3u);
	EXPECT_EQ(starpu_parallel_worker_shutdown(pw), 0);

	// Awake workers: no creation prologue, and the other workers run tasks too.
	created = 0;
	pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_AWAKE_WORKERS, 1u, STARPU_PARALLEL_WORKER_CREATE_FUNC,
					 on_create, STARPU_PARALLEL_WORKER_CREATE_FUNC_ARG, &created, 0);
	ASSERT_NE(pw, nullptr);
	EXPECT_EQ(created.load(), 0);
	EXPECT_EQ(starpu_parallel_worker_shutdown(pw), 0);
}

// StarPU 1.3's names (issue 40): a machine's clusters are its parallel workers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(ParallelWorker, ClusterNamesOfStarPU13)
{
	ScopedEnv synthetic("HWLOC_SYNTHETIC", two_packages);
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", nullptr);
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	if (!have("eager"))
		GTEST_SKIP() << "policy eager is not built";
	struct starpu_cluster_machine *clusters = starpu_cluster_machine(HWLOC_OBJ_PACKAGE, STARPU_CLUSTER_POLICY_NAME, "eager",
									 STARPU_CLUSTER_TYPE, STARPU_CLUSTER_OPENMP, 0);
	ASSERT_NE(clusters, nullptr);
	unsigned main_ctx = starpu_sched_ctx_get_context();
	EXPECT_STREQ(starpu_sched_ctx_get_sched_policy_name(main_ctx), "eager");
	testing::internal::CaptureStdout();
	EXPECT_EQ(starpu_cluster_print(clusters), 0);
	std::vector<std::string> lines = lines_of(testing::internal::GetCapturedStdout());
	ASSERT_EQ(lines.size(), 3u);
	EXPECT_TRUE(contains(lines[0], "2 parallel workers")) << lines[0];
	seen.reset();
	ASSERT_EQ(starpu_task_insert(&record_cl, STARPU_PROLOGUE_CALLBACK_POP, &starpu_openmp_prologue, 0), 0);
	// StarPU 1.4's name of it, passed as a value as its parallel-worker example does.
	ASSERT_EQ(starpu_task_insert(&record_cl, STARPU_PROLOGUE_CALLBACK_POP, &starpu_parallel_worker_openmp_prologue, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(seen.ran.load(), 2);
	EXPECT_EQ(starpu_uncluster_machine(clusters), 0);
	EXPECT_EQ(starpu_sched_ctx_get_context(), 0u);
	EXPECT_EQ(starpu_uncluster_machine(nullptr), -1);
	EXPECT_EQ(starpu_cluster_print(nullptr), -1);
	std::string err = stderr_of([] { EXPECT_EQ(starpu_cluster_machine(HWLOC_OBJ_PACKAGE, STARPU_CLUSTER_NB, 0, 0), nullptr); });
	EXPECT_TRUE(contains(err, "give a number of parallel workers of at least 1")) << err;
}
#pragma GCC diagnostic pop

TEST(ParallelWorker, BadOptionsGetAClearErrorAndLeaveNothing)
{
	ScopedEnv synthetic("HWLOC_SYNTHETIC", two_packages);
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	starpu_parallel_worker_config *pw = nullptr;
	std::string err = stderr_of([&] { pw = starpu_parallel_worker_init(HWLOC_OBJ_PCI_DEVICE, 0); });
	EXPECT_EQ(pw, nullptr);
	EXPECT_TRUE(contains(err, "cannot group workers by")) << err;
	err = stderr_of([&] { pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, 4242, 0); });
	EXPECT_EQ(pw, nullptr);
	EXPECT_TRUE(contains(err, "unknown option 4242")) << err;
	err = stderr_of([&] { pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_NCORES, 2u, 0); });
	EXPECT_EQ(pw, nullptr);
	EXPECT_TRUE(contains(err, "STARPU_PARALLEL_WORKER_NEW")) << err;
	err = stderr_of([&] { pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_NB, 0, 0); });
	EXPECT_EQ(pw, nullptr);
	EXPECT_TRUE(contains(err, "STARPU_PARALLEL_WORKER_NB is 0")) << err;
	err = stderr_of([&] {
		pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_MIN_NB, 3, STARPU_PARALLEL_WORKER_MAX_NB, 2, 0);
	});
	EXPECT_EQ(pw, nullptr);
	EXPECT_TRUE(contains(err, "MIN_NB 3 exceeds")) << err;
	err = stderr_of([&] { pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_TYPE, 99, 0); });
	EXPECT_EQ(pw, nullptr);
	EXPECT_TRUE(contains(err, "STARPU_PARALLEL_WORKER_TYPE 99")) << err;
	err = stderr_of([&] { pw = starpu_parallel_worker_init(HWLOC_OBJ_PACKAGE, STARPU_PARALLEL_WORKER_POLICY_NAME, "no-such-policy", 0); });
	EXPECT_EQ(pw, nullptr);
	EXPECT_TRUE(contains(err, "no-such-policy")) << err;
	EXPECT_EQ(starpu_parallel_worker_shutdown(nullptr), -1);
	EXPECT_EQ(starpu_parallel_worker_print(nullptr), -1);
	// Nothing is left behind: the thread's context is the global one, and every context can be made again.
	EXPECT_EQ(starpu_sched_ctx_get_context(), 0u);
	std::vector<unsigned> made;
	for (unsigned i = 1; i < NONE; i++) {
		unsigned c = starpu_sched_ctx_create(nullptr, -1, "again", 0);
		EXPECT_NE(c, NONE);
		made.push_back(c);
	}
	for (unsigned c : made)
		if (c != NONE)
			starpu_sched_ctx_delete(c);
}

// --------------------------------------------------------- parallel code

namespace {

std::atomic<int> probe_ran{0};

void probe_kernel(void **, void *)
{
	probe_ran++;
}

starpu_codelet probe_cl = cpu_codelet(probe_kernel, 0, "parallel_code_probe");

struct CodeRun
{
	unsigned ctx;
	int ran_during = -1; // probe_ran when the code ended
	struct starpu_task *probe = nullptr;
};

void *parallel_code(void *arg)
{
	CodeRun *run = static_cast<CodeRun *>(arg);
	// Every worker of the context holds its core: a task of the context cannot start.
	run->probe = starpu_task_create();
	run->probe->cl = &probe_cl;
	run->probe->detach = 0;
	EXPECT_EQ(starpu_task_submit_to_ctx(run->probe, run->ctx), 0);
	run->ran_during = probe_ran.load();
	return run;
}

} // namespace

TEST(NestedCtx, ParallelCodeRunsWhileTheContextsWorkersHoldTheirCores)
{
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	int two[] = {1, 2};
	unsigned ctx = starpu_sched_ctx_create(two, 2, "parallel_code", 0);
	ASSERT_NE(ctx, NONE);
	probe_ran = 0;
	CodeRun run;
	run.ctx = ctx;
	EXPECT_EQ(starpu_sched_ctx_exec_parallel_code(parallel_code, &run, ctx), &run);
	EXPECT_EQ(run.ran_during, 0);
	ASSERT_NE(run.probe, nullptr);
	// Released: the workers run the context's tasks again.
	EXPECT_EQ(starpu_task_wait(run.probe), 0);
	EXPECT_EQ(probe_ran.load(), 1);
	seen.reset();
	ASSERT_EQ(submit(ctx, 20), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
	EXPECT_EQ(seen.ran.load(), 20);

	std::string err = stderr_of([&] { EXPECT_EQ(starpu_sched_ctx_exec_parallel_code(nullptr, nullptr, ctx), nullptr); });
	EXPECT_TRUE(contains(err, "no function")) << err;
	starpu_sched_ctx_delete(ctx);
}
