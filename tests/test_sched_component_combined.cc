// SPDX-License-Identifier: LGPL-2.1-or-later
// Combined workers in modular trees: the component of a combined worker
// (starpu_sched_component_parallel_worker_create, or worker_get with a
// combined worker's id), a parallel task given all the CPUs through a tree,
// and the modular-prandom and modular-pheft policies (STARPU_SCHED_SIMPLE_COMBINED_WORKERS).
#include "helpers.h"
#include "tree_policy.h"

#include <mutex>
#include <set>
#include <vector>

using namespace astro_test;

namespace {

// ------------------------------------------------ the component itself

TEST(ParallelWorkerComponent, MadeFromWorkersAndFoundByItsId)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	starpu_conf conf = conf_with_ncpus(4);
	conf.sched_policy_name = "eager";
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	// Context 0 runs eager, not a tree: the test builds one there by hand.
	struct starpu_sched_tree *tree = starpu_sched_tree_create(0);
	ASSERT_NE(tree, nullptr);
	unsigned members[2] = { 1, 2 };
	struct starpu_sched_component *c = starpu_sched_component_parallel_worker_create(tree, 2, members);
	ASSERT_NE(c, nullptr);
	EXPECT_TRUE(starpu_sched_component_is_combined_worker(c));
	EXPECT_TRUE(starpu_sched_component_is_worker(c));
	EXPECT_FALSE(starpu_sched_component_is_simple_worker(c));
	int id = starpu_sched_component_worker_get_workerid(c);
	EXPECT_GE(id, (int)starpu_worker_get_count());
	int size = 0, *ids = nullptr;
	ASSERT_EQ(starpu_combined_worker_get_description(id, &size, &ids), 0);
	ASSERT_EQ(size, 2);
	EXPECT_EQ(ids[0], 1);
	EXPECT_EQ(ids[1], 2);
	// Found again by its id, and made once for the same workers.
	EXPECT_EQ(starpu_sched_component_worker_get(0, id), c);
	EXPECT_EQ(starpu_sched_component_parallel_worker_create(tree, 2, members), c);
	// The parent of its members' components, as in StarPU.
	ASSERT_EQ(c->nchildren, 2u);
	EXPECT_EQ(c->children[0], starpu_sched_component_worker_get(0, 1));
	EXPECT_EQ(c->children[1], starpu_sched_component_worker_get(0, 2));
	EXPECT_TRUE(starpu_bitmap_get(c->workers, id));
	EXPECT_TRUE(starpu_sched_component_is_simple_worker(c->children[0]));

	// Counted by decisions only while all its members are in the context.
	tree->root = starpu_sched_component_eager_create(tree, nullptr);
	starpu_sched_component_connect(tree->root, c);
	starpu_sched_tree_update_workers(tree);
	static starpu_codelet spmd = cpu_codelet([](void **, void *) {}, 0, "spmd");
	spmd.type = STARPU_SPMD;
	static starpu_codelet seq = cpu_codelet([](void **, void *) {}, 0, "seq");
	struct starpu_task *t = starpu_task_create();
	t->cl = &spmd;
	t->destroy = 0;
	int all[4] = { 0, 1, 2, 3 };
	starpu_sched_tree_add_workers(0, all, 4);
	EXPECT_TRUE(starpu_sched_component_can_execute_task(c, t));
	t->cl = &seq;
	EXPECT_FALSE(starpu_sched_component_can_execute_task(c, t)) << "a sequential codelet runs on one worker";
	t->cl = &spmd;
	starpu_sched_tree_remove_workers(0, all + 1, 1);
	EXPECT_FALSE(starpu_sched_component_can_execute_task(c, t));
	starpu_task_destroy(t);
	starpu_sched_tree_destroy(tree);
}

TEST(ParallelWorkerComponent, BadWorkersAreRefusedWithAMessage)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	starpu_conf conf = conf_with_ncpus(2);
	conf.sched_policy_name = "eager";
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	struct starpu_sched_tree *tree = starpu_sched_tree_create(0);
	ASSERT_NE(tree, nullptr);
	unsigned twice[2] = { 0, 0 }, missing[2] = { 0, 99 };
	struct starpu_sched_component *c = nullptr;
	std::string err = stderr_of([&] { c = starpu_sched_component_parallel_worker_create(tree, 2, twice); });
	EXPECT_EQ(c, nullptr);
	EXPECT_NE(err.find("twice"), std::string::npos) << err;
	err = stderr_of([&] { c = starpu_sched_component_parallel_worker_create(tree, 2, missing); });
	EXPECT_EQ(c, nullptr);
	EXPECT_NE(err.find("99"), std::string::npos) << err;
	err = stderr_of([&] { c = starpu_sched_component_parallel_worker_create(tree, 0, missing); });
	EXPECT_EQ(c, nullptr);
	EXPECT_NE(err.find("1 to"), std::string::npos) << err;
	err = stderr_of([&] { c = starpu_sched_component_parallel_worker_create(nullptr, 1, missing); });
	EXPECT_EQ(c, nullptr);
	EXPECT_NE(err.find("no tree"), std::string::npos) << err;
	EXPECT_EQ(starpu_combined_worker_get_count(), 0u) << "nothing was made";
	starpu_sched_tree_destroy(tree);
}

// ------------------------------------- a parallel task through a tree

// What one parallel task saw: the ranks that ran it and the sizes they were told.
struct Parts
{
	std::mutex lock;
	std::multiset<int> ranks;
	std::set<int> sizes;
	std::set<int> workers;
};

void part(void **, void *arg)
{
	Parts *p = (Parts *)arg;
	std::lock_guard<std::mutex> guard(p->lock);
	p->ranks.insert(starpu_combined_worker_get_rank());
	p->sizes.insert(starpu_combined_worker_get_size());
	p->workers.insert(starpu_worker_get_id());
}

// A queue at the root over the combined worker of all the CPUs.
void all_cpus_init(unsigned ctx)
{
	struct starpu_sched_tree *t = starpu_sched_tree_create(ctx);
	unsigned ids[STARPU_NMAXWORKERS];
	unsigned n = starpu_worker_get_count();
	for (unsigned w = 0; w < n; w++)
		ids[w] = w;
	t->root = starpu_sched_component_fifo_create(t, nullptr);
	starpu_sched_component_connect(t->root, starpu_sched_component_parallel_worker_create(t, n, ids));
	starpu_sched_tree_update_workers(t);
	starpu_sched_ctx_set_policy_data(ctx, t);
}

TREE_POLICY(all_cpus_policy, "all-cpus-tree", all_cpus_init);

TEST(ParallelWorkerComponent, ParallelTaskGetsAllCoresThroughATree)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	const int n = 3;
	starpu_conf conf = conf_with_ncpus(n);
	conf.sched_policy = &all_cpus_policy;
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	for (enum starpu_codelet_type type : { STARPU_SPMD, STARPU_FORKJOIN }) {
		SCOPED_TRACE(type == STARPU_SPMD ? "spmd" : "forkjoin");
		static starpu_codelet cl;
		cl = cpu_codelet(part, 0, "parallel");
		cl.type = type;
		const int ntasks = 20;
		std::vector<Parts> parts(ntasks);
		for (int i = 0; i < ntasks; i++)
			ASSERT_EQ(submit_detached(&cl, &parts[i]), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		for (int i = 0; i < ntasks; i++) {
			SCOPED_TRACE(i);
			EXPECT_EQ(parts[i].sizes, std::set<int>{ n });
			if (type == STARPU_SPMD) {
				// Every member ran its rank once.
				EXPECT_EQ(parts[i].ranks, (std::multiset<int>{ 0, 1, 2 }));
				EXPECT_EQ(parts[i].workers.size(), (size_t)n);
			} else {
				EXPECT_EQ(parts[i].ranks, std::multiset<int>{ 0 });
			}
		}
	}
}

// ------------------------------ the modular-prandom and modular-pheft policies

class Prandom : public ::testing::TestWithParam<const char *>
{
};

TEST_P(Prandom, TasksRunOnceParallelOnesOnCombinedWorkers)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	starpu_conf conf = conf_with_ncpus(4);
	conf.sched_policy_name = GetParam();
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	ASSERT_EQ(policy_name(), GetParam());
	unsigned ncombined = starpu_combined_worker_get_count();
	EXPECT_GT(ncombined, 0u) << "the policy makes StarPU's default combined workers";
	// The decision (random; mct after the perfmodel selection) chooses among the workers and the combined workers.
	struct starpu_sched_tree *tree = starpu_sched_tree_get(0);
	ASSERT_NE(tree, nullptr);
	ASSERT_EQ(tree->root->nchildren, 1u);
	struct starpu_sched_component *decision = tree->root->children[0];
	if (starpu_sched_component_is_perfmodel_select(decision)) {
		ASSERT_GE(decision->nchildren, 1u);
		decision = decision->children[0];
		EXPECT_TRUE(starpu_sched_component_is_mct(decision));
	} else {
		EXPECT_TRUE(starpu_sched_component_is_random(decision));
	}
	EXPECT_EQ(decision->nchildren, starpu_worker_get_count() + ncombined);

	static starpu_codelet seq, spmd;
	seq = cpu_codelet(part, 0, "seq");
	spmd = cpu_codelet(part, 0, "spmd");
	spmd.type = STARPU_SPMD;
	const int nseq = 200, npar = 100;
	std::vector<Parts> seq_parts(nseq), par_parts(npar);
	for (int i = 0; i < npar; i++) {
		ASSERT_EQ(submit_detached(&seq, &seq_parts[i], i % 3), 0);
		ASSERT_EQ(submit_detached(&spmd, &par_parts[i], i % 3), 0);
	}
	for (int i = npar; i < nseq; i++)
		ASSERT_EQ(submit_detached(&seq, &seq_parts[i]), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	for (int i = 0; i < nseq; i++) {
		EXPECT_EQ(seq_parts[i].ranks, std::multiset<int>{ 0 }) << "sequential task " << i;
		EXPECT_EQ(seq_parts[i].sizes, std::set<int>{ 1 }) << "sequential task " << i;
	}
	int parallel = 0;
	for (int i = 0; i < npar; i++) {
		SCOPED_TRACE(i);
		ASSERT_EQ(par_parts[i].sizes.size(), 1u);
		int size = *par_parts[i].sizes.begin();
		std::multiset<int> ranks;
		for (int r = 0; r < size; r++)
			ranks.insert(r);
		EXPECT_EQ(par_parts[i].ranks, ranks);
		parallel += size > 1;
	}
	// prandom: a combined worker is a third of the weight of the choices (sizes 2, 2 and 4 against four
	// workers), a hundred tasks all on single workers would take a chance below 1e-40; pheft: tasks without
	// a model go round the workers and the combined workers (eager).
	EXPECT_GT(parallel, 0);
}

INSTANTIATE_TEST_SUITE_P(Policies, Prandom, ::testing::Values("modular-prandom", "modular-prandom-prio", "modular-pheft"),
			 [](const testing::TestParamInfo<const char *> &info) {
				 std::string name = info.param;
				 std::replace(name.begin(), name.end(), '-', '_');
				 return name;
			 });

} // namespace
