// SPDX-License-Identifier: LGPL-2.1-or-later
// The pheft policy (parallel HEFT): parallel tasks go to the worker or the
// combined worker the models say ends them first; the models predict and
// calibrate combined workers by their number of cores.
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <climits>
#include <cmath>
#include <mutex>
#include <set>
#include <string>

#include "helpers.h"

using namespace astro_test;

namespace {

std::mutex seen_lock;
std::multiset<int> sizes_seen; // the combined size each execution (rank 0) ran with
std::atomic<int> ran{0};

void record_size(void **, void *)
{
	if (starpu_combined_worker_get_rank() == 0) {
		std::lock_guard<std::mutex> g(seen_lock);
		sizes_seen.insert(starpu_combined_worker_get_size());
		ran++;
	}
}

void reset_seen()
{
	std::lock_guard<std::mutex> g(seen_lock);
	sizes_seen.clear();
	ran = 0;
}

// 1 ms of work, shared by the cores.
double split_cost(struct starpu_task *, struct starpu_perfmodel_arch *arch, unsigned)
{
	return 1000.0 / arch->devices[0].ncores;
}

struct starpu_perfmodel split_model = [] {
	struct starpu_perfmodel m;
	memset(&m, 0, sizeof(m));
	m.type = STARPU_PER_ARCH;
	m.arch_cost_function = split_cost;
	m.symbol = "pheft_split";
	return m;
}();

starpu_codelet parallel_cl(enum starpu_codelet_type type, int max_parallelism, struct starpu_perfmodel *model)
{
	starpu_codelet cl = cpu_codelet(record_size, 0, "pheft_parallel");
	cl.type = type;
	cl.max_parallelism = max_parallelism;
	cl.model = model;
	return cl;
}

// synchronous: one at a time, so that every decision finds the workers idle.
int submit(starpu_codelet *cl, int n, bool synchronous = false)
{
	for (int i = 0; i < n; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = cl;
		t->synchronous = synchronous;
		int ret = starpu_task_submit(t);
		if (ret) {
			starpu_task_destroy(t);
			return ret;
		}
	}
	return 0;
}

bool start_pheft(int ncpus, std::unique_ptr<Runtime> *rt)
{
	starpu_conf conf = conf_with_ncpus(ncpus);
	conf.sched_policy_name = "pheft";
	rt->reset(new Runtime(&conf));
	return (*rt)->ok() && policy_name() == "pheft";
}

} // namespace

TEST(Pheft, TheModelsPredictCombinedWorkersByTheirCores)
{
	std::unique_ptr<Runtime> rt;
	if (!start_pheft(4, &rt))
		GTEST_SKIP() << "the pheft policy is not built";
	ASSERT_GE(starpu_combined_worker_get_count(), 1u);
	static starpu_codelet cl = parallel_cl(STARPU_SPMD, INT_MAX, &split_model);
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl;
	int first = (int)starpu_worker_get_count();
	for (unsigned c = 0; c < starpu_combined_worker_get_count(); c++) {
		int size, *ids;
		ASSERT_EQ(starpu_combined_worker_get_description(first + (int)c, &size, &ids), 0);
		struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(first + (int)c, 0);
		ASSERT_NE(arch, nullptr);
		EXPECT_EQ(arch->devices[0].ncores, size);
		EXPECT_DOUBLE_EQ(starpu_task_worker_expected_length(t, (unsigned)(first + (int)c), 0, 0), 1000.0 / size);
	}
	EXPECT_DOUBLE_EQ(starpu_task_worker_expected_length(t, 0, 0, 0), 1000.0);
	starpu_task_destroy(t);
}

TEST(Pheft, ParallelTasksGoWhereTheyEndFirst)
{
	std::unique_ptr<Runtime> rt;
	if (!start_pheft(4, &rt))
		GTEST_SKIP() << "the pheft policy is not built";
	// All four cores together end a task 4 times sooner than one: every task takes them.
	static starpu_codelet wide = parallel_cl(STARPU_SPMD, INT_MAX, &split_model);
	reset_seen();
	ASSERT_EQ(submit(&wide, 20, true), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(ran.load(), 20);
	EXPECT_EQ(sizes_seen.count(4), 20u);

	// At most two cores: pairs.
	static starpu_codelet pairs = parallel_cl(STARPU_FORKJOIN, 2, &split_model);
	reset_seen();
	ASSERT_EQ(submit(&pairs, 20, true), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(ran.load(), 20);
	EXPECT_EQ(sizes_seen.count(2), 20u);

	// A sequential codelet stays on one worker, whatever the model says.
	static starpu_codelet seq = parallel_cl(STARPU_SEQ, 0, &split_model);
	reset_seen();
	ASSERT_EQ(submit(&seq, 20), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(sizes_seen.count(1), 20u);

	// Without a model: the least loaded, the largest on a tie; every task runs.
	static starpu_codelet plain = parallel_cl(STARPU_SPMD, INT_MAX, nullptr);
	reset_seen();
	ASSERT_EQ(submit(&plain, 50), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(ran.load(), 50);
}

// pheft keeps its charge in the job: the application's sched_data is left alone.
TEST(Pheft, TheApplicationsSchedDataSurvivesScheduling)
{
	std::unique_ptr<Runtime> rt;
	if (!start_pheft(4, &rt))
		GTEST_SKIP() << "the pheft policy is not built";
	static int mine;
	static starpu_codelet cl = cpu_codelet(sched_data_kept, 0, "sched_data");
	EXPECT_EQ(sched_data_changes(&cl, 200, &mine), 0);
}

TEST(Pheft, AParallelExecutionCalibratesItsCombinedArchitecture)
{
	TempDir home;
	ScopedEnv h("STARPU_HOME", home.path().c_str());
	ScopedEnv cache("XDG_CACHE_HOME", nullptr);
	ScopedEnv dir("STARPU_PERF_MODEL_DIR", nullptr);
	ScopedEnv calibrate("STARPU_CALIBRATE", "1");
	ScopedEnv minimum("STARPU_CALIBRATE_MINIMUM", "2");
	// Empty tasks' lengths vary a lot on a loaded machine: keep every sample.
	ScopedEnv max_error("STARPU_HISTORY_MAX_ERROR", "1000000");
	std::unique_ptr<Runtime> rt;
	if (!start_pheft(2, &rt))
		GTEST_SKIP() << "the pheft policy is not built";
	static struct starpu_perfmodel history;
	memset(&history, 0, sizeof(history));
	history.type = STARPU_HISTORY_BASED;
	history.symbol = "pheft_history";
	static starpu_codelet cl = parallel_cl(STARPU_SPMD, INT_MAX, &history);
	// pheft measures the candidates the model does not know yet, the pair first.
	reset_seen();
	ASSERT_EQ(submit(&cl, 30), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(ran.load(), 30);
	EXPECT_GE(sizes_seen.count(2), 2u);
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl;
	int pair = (int)starpu_worker_get_count();
	int size;
	ASSERT_EQ(starpu_combined_worker_get_description(pair, &size, nullptr), 0);
	ASSERT_EQ(size, 2);
	double predicted = starpu_task_worker_expected_length(t, (unsigned)pair, 0, 0);
	EXPECT_FALSE(std::isnan(predicted));
	EXPECT_GT(predicted, 0.0);
	starpu_task_destroy(t);
}

namespace {

std::atomic<unsigned long long> by_worker[2];

void count_worker(void **, void *)
{
	by_worker[starpu_worker_get_id()]++;
}

} // namespace

// Tasks a leaving worker had queued go to the workers that stay: the worker they
// were charged to is not charged any more (it would look busy for ever after).
TEST(Pheft, TasksTakenBackFromALeavingWorkerNoLongerLoadIt)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	if (!policy_registered("pheft"))
		GTEST_SKIP() << "the pheft policy is not built";
	static starpu_codelet cl = cpu_codelet(count_worker, 0, "pheft_count");
	int both[] = {0, 1}, one[] = {1};
	unsigned ctx = starpu_sched_ctx_create(both, 2, "pheft_moves", STARPU_SCHED_CTX_POLICY_NAME, "pheft", 0);
	ASSERT_LT(ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	auto submit_n = [&](int n) {
		for (int i = 0; i < n; i++) {
			struct starpu_task *t = starpu_task_create();
			t->cl = &cl;
			ASSERT_EQ(starpu_task_submit_to_ctx(t, ctx), 0);
		}
	};
	{
		// Without a model the least loaded gets each: 20 queued on each worker.
		Gate gate(2);
		ASSERT_TRUE(gate.close());
		submit_n(40);
		starpu_sched_ctx_remove_workers(one, 1, ctx);
	}
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
	starpu_sched_ctx_add_workers(one, 1, ctx);
	by_worker[0] = by_worker[1] = 0;
	{
		Gate gate(2);
		ASSERT_TRUE(gate.close());
		submit_n(10);
	}
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
	EXPECT_EQ(by_worker[0] + by_worker[1], 10u);
	EXPECT_GE(by_worker[1].load(), 4u) << "worker 1 still carries the load of the tasks taken back from it";
	starpu_sched_ctx_delete(ctx);
}

namespace {

std::atomic<int> wrong_combined{0};
std::atomic<int> combined_runs{0};
int wanted_combined = -1;

void check_combined(void **, void *)
{
	if (starpu_combined_worker_get_rank() != 0)
		return;
	if (starpu_combined_worker_get_id() != wanted_combined)
		wrong_combined++;
	combined_runs++;
}

} // namespace

// task->workerids naming a combined worker (made by hand): every task runs on it, not on a larger one.
TEST(Pheft, TheWorkeridsOfATaskMayNameACombinedWorker)
{
	std::unique_ptr<Runtime> rt;
	if (!start_pheft(4, &rt))
		GTEST_SKIP() << "the pheft policy is not built";
	int pair[] = {2, 3};
	wanted_combined = starpu_combined_worker_assign_workerid(2, pair);
	ASSERT_GE(wanted_combined, 4);
	static starpu_codelet cl = [] {
		starpu_codelet c = cpu_codelet(check_combined, 0, "pheft_named_combined");
		c.type = STARPU_FORKJOIN;
		c.max_parallelism = INT_MAX;
		return c;
	}();
	static uint32_t allowed[4];
	memset(allowed, 0, sizeof(allowed));
	allowed[wanted_combined / 32] |= 1u << (wanted_combined % 32);
	wrong_combined = 0;
	combined_runs = 0;
	for (int i = 0; i < 20; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->workerids = allowed;
		t->workerids_len = 4;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(combined_runs.load(), 20);
	EXPECT_EQ(wrong_combined.load(), 0);
	// A sequential task allowed on worker 1 only runs there.
	static uint32_t only1 = 1u << 1;
	static std::atomic<int> elsewhere{0};
	elsewhere = 0;
	static starpu_codelet seq = cpu_codelet([](void **, void *) { if (starpu_worker_get_id() != 1) elsewhere++; }, 0, "pheft_only1");
	for (int i = 0; i < 20; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &seq;
		t->workerids = &only1;
		t->workerids_len = 1;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(elsewhere.load(), 0);
	// A program may add the combined worker to a context's collection (StarPU's test does): the shutdown copes.
	struct starpu_worker_collection *coll = starpu_sched_ctx_get_worker_collection(0);
	coll->add(coll, wanted_combined);
}
