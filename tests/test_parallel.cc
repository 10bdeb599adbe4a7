// SPDX-License-Identifier: LGPL-2.1-or-later
// Parallel tasks: combined workers, STARPU_SPMD and STARPU_FORKJOIN codelets
// run on all their workers at once, and the peager policy.
#include <gtest/gtest.h>
#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "helpers.h"

using namespace astro_test;

namespace {

// What the parts of one parallel execution saw.
struct Seen
{
	std::mutex lock;
	std::vector<int> ranks, sizes, workers, combined;
	std::atomic<int> arrived{0};
	std::atomic<int> all_met{0}; // parts that saw every other part arrive (they ran at the same time)
	std::atomic<int> calls{0};
	bool with_buffer = false; // the task has one vector, each rank writes its element
	void reset()
	{
		with_buffer = false;
		std::lock_guard<std::mutex> g(lock);
		ranks.clear();
		sizes.clear();
		workers.clear();
		combined.clear();
		arrived = 0;
		all_met = 0;
		calls = 0;
	}
};

void spmd_kernel(void **buffers, void *arg)
{
	Seen *s = static_cast<Seen *>(arg);
	int rank = starpu_combined_worker_get_rank(), size = starpu_combined_worker_get_size();
	{
		std::lock_guard<std::mutex> g(s->lock);
		s->ranks.push_back(rank);
		s->sizes.push_back(size);
		s->workers.push_back(starpu_worker_get_id());
		s->combined.push_back(starpu_combined_worker_get_id());
	}
	s->calls++;
	// A barrier with a generous bound: every part waits for all the others.
	s->arrived++;
	if (wait_until([&] { return s->arrived.load() >= size; }, 60000))
		s->all_met++;
	if (s->with_buffer) {
		int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
		v[rank] = rank + 1;
	}
}

starpu_codelet spmd_cl()
{
	starpu_codelet cl = cpu_codelet(spmd_kernel, 0, "spmd");
	cl.type = STARPU_SPMD;
	cl.max_parallelism = INT_MAX;
	return cl;
}

struct ForkJoin
{
	std::atomic<int> calls{0};
	std::atomic<int> size{0}, rank{-1}, threads_ran{0};
};

void forkjoin_kernel(void **, void *arg)
{
	ForkJoin *f = static_cast<ForkJoin *>(arg);
	f->calls++;
	f->size = starpu_combined_worker_get_size();
	f->rank = starpu_combined_worker_get_rank();
	// The kernel forks its own threads on the cores it was given.
	std::vector<std::thread> threads;
	for (int i = 1; i < f->size.load(); i++)
		threads.emplace_back([f] { f->threads_ran++; });
	for (auto &t : threads)
		t.join();
}

std::vector<int> first_workers(int n)
{
	std::vector<int> ids;
	for (int i = 0; i < n; i++)
		ids.push_back(i);
	return ids;
}

int submit_pinned(starpu_codelet *cl, void *arg, int workerid, starpu_data_handle_t h = nullptr)
{
	struct starpu_task *t = starpu_task_create();
	t->cl = cl;
	t->cl_arg = arg;
	t->execute_on_a_specific_worker = 1;
	t->workerid = (unsigned)workerid;
	if (h)
		t->handles[0] = h;
	int ret = starpu_task_submit(t);
	if (ret)
		starpu_task_destroy(t);
	return ret;
}

} // namespace

TEST(Parallel, CombinedWorkersAreMadeDescribedAndChecked)
{
	Runtime rt(3);
	ASSERT_TRUE(rt.ok());
	unsigned before = starpu_combined_worker_get_count();
	int ids[] = {1, 2};
	int id = starpu_combined_worker_assign_workerid(2, ids);
	ASSERT_GE(id, (int)starpu_worker_get_count());
	EXPECT_EQ(starpu_combined_worker_get_count(), before + 1);
	int size = 0, *members = nullptr;
	ASSERT_EQ(starpu_combined_worker_get_description(id, &size, &members), 0);
	ASSERT_EQ(size, 2);
	EXPECT_EQ(members[0], 1);
	EXPECT_EQ(members[1], 2);
	EXPECT_EQ(starpu_combined_worker_assign_workerid(2, ids), id) << "the same set is the same combined worker";
	// starpu_worker_is_combined_worker (issue 40): the combined ids only.
	EXPECT_EQ(starpu_worker_is_combined_worker(id), 1u);
	EXPECT_EQ(starpu_worker_is_combined_worker(0), 0u);
	EXPECT_EQ(starpu_worker_is_combined_worker((int)starpu_worker_get_count() + (int)starpu_combined_worker_get_count()), 0u);
	EXPECT_EQ(starpu_worker_is_combined_worker(-1), 0u);
	// starpu_worker_get_devids (issue 40): each CPU worker's device id once, at most num.
	int devids[8] = {};
	ASSERT_EQ(starpu_worker_get_devids(STARPU_CPU_WORKER, devids, 8), 3);
	for (int w = 0; w < 3; w++)
		EXPECT_EQ(devids[w], starpu_worker_get_devid(w));
	EXPECT_EQ(starpu_worker_get_devids(STARPU_CPU_WORKER, devids, 2), 2);
	EXPECT_EQ(starpu_worker_get_devids(STARPU_CUDA_WORKER, devids, 8), 0);
	std::string devids_err = stderr_of([] { EXPECT_EQ(starpu_worker_get_devids(STARPU_CPU_WORKER, nullptr, 8), -EINVAL); });
	EXPECT_TRUE(contains(devids_err, "starpu_worker_get_devids: NULL devids")) << devids_err;
	// Outside a parallel task: the worker alone.
	EXPECT_EQ(starpu_combined_worker_get_size(), 1);
	EXPECT_EQ(starpu_combined_worker_get_rank(), 0);

	testing::internal::CaptureStderr();
	int bad[] = {0, 99};
	EXPECT_LT(starpu_combined_worker_assign_workerid(2, bad), 0);
	int twice[] = {0, 0};
	EXPECT_LT(starpu_combined_worker_assign_workerid(2, twice), 0);
	EXPECT_LT(starpu_combined_worker_get_description(12345, &size, &members), 0);
	std::string err = testing::internal::GetCapturedStderr();
	EXPECT_TRUE(contains(err, "worker 99")) << err;
	EXPECT_TRUE(contains(err, "given twice")) << err;
	EXPECT_TRUE(contains(err, "12345")) << err;
	EXPECT_EQ(starpu_combined_worker_get_count(), before + 1);
}

class ParallelSpmd : public testing::TestWithParam<int>
{
};

// N parts, ranks 0..N-1, on N different workers, all running at once (more workers than cores is fine).
TEST_P(ParallelSpmd, RunsOnNWorkersAtOnceWithRanks)
{
	const int n = GetParam();
	Runtime rt(n);
	ASSERT_TRUE(rt.ok());
	ASSERT_EQ((int)starpu_worker_get_count(), n);
	std::vector<int> ids = first_workers(n);
	int combined = starpu_combined_worker_assign_workerid(n, ids.data());
	ASSERT_GE(combined, 0);
	static starpu_codelet cl = spmd_cl();
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_W;
	static Seen seen;
	seen.reset();
	seen.with_buffer = true;
	std::vector<int> v(n, 0);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), (uint32_t)n, sizeof(int));
	ASSERT_EQ(submit_pinned(&cl, &seen, combined, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(seen.calls.load(), n);
	EXPECT_EQ(seen.all_met.load(), n) << "the parts did not all run at the same time";
	std::lock_guard<std::mutex> g(seen.lock);
	EXPECT_EQ(std::set<int>(seen.ranks.begin(), seen.ranks.end()).size(), (size_t)n);
	EXPECT_EQ(*std::min_element(seen.ranks.begin(), seen.ranks.end()), 0);
	EXPECT_EQ(*std::max_element(seen.ranks.begin(), seen.ranks.end()), n - 1);
	EXPECT_EQ(std::set<int>(seen.workers.begin(), seen.workers.end()).size(), (size_t)n);
	for (int s : seen.sizes)
		EXPECT_EQ(s, n);
	for (int c : seen.combined)
		EXPECT_EQ(c, combined);
	for (int r = 0; r < n; r++)
		EXPECT_EQ(v[r], r + 1) << "rank " << r << " did not write its part of the shared buffer";
}

INSTANTIATE_TEST_SUITE_P(Sizes, ParallelSpmd, testing::Values(2, 4));

TEST(Parallel, ForkJoinRunsOnceGivenNWorkers)
{
	const int n = 3;
	Runtime rt(n);
	ASSERT_TRUE(rt.ok());
	std::vector<int> ids = first_workers(n);
	int combined = starpu_combined_worker_assign_workerid(n, ids.data());
	ASSERT_GE(combined, 0);
	static starpu_codelet cl = cpu_codelet(forkjoin_kernel, 0, "forkjoin");
	cl.type = STARPU_FORKJOIN;
	cl.max_parallelism = n;
	static ForkJoin fj;
	for (int round = 0; round < 5; round++) {
		fj.calls = 0;
		fj.threads_ran = 0;
		ASSERT_EQ(submit_pinned(&cl, &fj, combined), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		EXPECT_EQ(fj.calls.load(), 1);
		EXPECT_EQ(fj.size.load(), n);
		EXPECT_EQ(fj.rank.load(), 0);
		EXPECT_EQ(fj.threads_ran.load(), n - 1);
	}
}

TEST(Parallel, SequentialOrTooWideIsRefused)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int ids[] = {0, 1};
	int combined = starpu_combined_worker_assign_workerid(2, ids);
	ASSERT_GE(combined, 0);
	static starpu_codelet seq = cpu_codelet(spmd_kernel, 0, "sequential");
	static starpu_codelet narrow = spmd_cl();
	narrow.max_parallelism = 1;
	static Seen seen;
	seen.reset();
	testing::internal::CaptureStderr();
	EXPECT_EQ(submit_pinned(&seq, &seen, combined), -ENODEV);
	EXPECT_EQ(submit_pinned(&narrow, &seen, combined), -ENODEV);
	std::string err = testing::internal::GetCapturedStderr();
	EXPECT_TRUE(contains(err, "combined worker")) << err;
	EXPECT_EQ(seen.calls.load(), 0);
}

TEST(Parallel, PeagerRunsParallelTasksOnCombinedWorkers)
{
	starpu_conf conf = conf_with_ncpus(2);
	conf.sched_policy_name = "peager";
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	if (policy_name() != "peager")
		GTEST_SKIP() << "the peager policy is not built";
	EXPECT_GE(starpu_combined_worker_get_count(), 1u);
	static starpu_codelet cl = spmd_cl();
	cl.max_parallelism = 2;
	static Seen seen[4];
	for (auto &s : seen) {
		s.reset();
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = &s;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	// Sequential tasks still run as with eager.
	static std::atomic<int> seq_ran{0};
	seq_ran = 0;
	static starpu_codelet seq = cpu_codelet([](void **, void *) { seq_ran++; }, 0, "seq");
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(submit_detached(&seq), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seq_ran.load(), 100);
	for (auto &s : seen) {
		EXPECT_EQ(s.calls.load(), 2);
		EXPECT_EQ(s.all_met.load(), 2);
		std::lock_guard<std::mutex> g(s.lock);
		EXPECT_EQ(std::set<int>(s.ranks.begin(), s.ranks.end()), (std::set<int>{0, 1}));
	}
}
