// SPDX-License-Identifier: LGPL-2.1-or-later
// The heteroprio component (starpu_sched_component_heteroprio_create) and
// the policies built on it: its order (a bucket's tasks by priority, the
// others kept while the component below is full), batch mode, the tree of
// modular-heteroprio, and modular-heteroprio-heft's two decisions chosen by
// the task's sched_data.
#include "helpers.h"
#include "tree_policy.h"

#include <astrolabe/observe.h>
#include <map>
#include <mutex>
#include <vector>

using namespace astro_test;

namespace {

// Every task costs the same on every worker: all of them share one bucket.
double same_cost(struct starpu_task *, unsigned)
{
	return 10.0;
}

struct starpu_perfmodel g_model = [] {
	struct starpu_perfmodel m;
	memset(&m, 0, sizeof(m));
	m.type = STARPU_COMMON;
	m.cost_function = same_cost;
	m.symbol = "test_heteroprio_cost";
	return m;
}();

std::atomic<int> g_ran{ 0 };
void count(void **, void *) { g_ran++; }

// The order tasks ran in, and the priority each carried when it ran.
struct Runs
{
	std::mutex lock;
	std::vector<int> order;
	std::vector<int> priority;
};
Runs *g_runs;

void record(void **, void *arg)
{
	std::lock_guard<std::mutex> guard(g_runs->lock);
	g_runs->order.push_back((int)(uintptr_t)arg);
	g_runs->priority.push_back(starpu_task_get_current()->priority);
}

// heteroprio at the root over a queue of one task above worker 0 (the test's batch setting).
unsigned g_batch;

void heteroprio_over_one_init(unsigned ctx)
{
	struct starpu_sched_tree *t = starpu_sched_tree_create(ctx);
	struct starpu_sched_component_heteroprio_data params = { nullptr, g_batch };
	struct starpu_sched_component_fifo_data one = { 1, 0.0, 0 };
	struct starpu_sched_component *below = starpu_sched_component_fifo_create(t, &one);
	t->root = starpu_sched_component_heteroprio_create(t, &params);
	starpu_sched_component_connect(t->root, below);
	starpu_sched_component_connect(below, starpu_sched_component_worker_get(ctx, 0));
	starpu_sched_tree_update_workers(t);
	starpu_sched_ctx_set_policy_data(ctx, t);
}

TREE_POLICY(heteroprio_over_one, "heteroprio-over-one", heteroprio_over_one_init);

class HeteroprioComponent : public ::testing::TestWithParam<unsigned>
{
};

// The queue below takes one task: the others wait in the bucket and go down highest priority first, first in first out
// among equals, each time the queue makes room. In batch mode they carry the highest priority down.
TEST_P(HeteroprioComponent, BucketGivesHighestPriorityFirstAsRoomComes)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	g_batch = GetParam();
	starpu_conf conf = conf_with_ncpus(1);
	conf.sched_policy = &heteroprio_over_one;
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	struct starpu_sched_tree *tree = starpu_sched_tree_get(0);
	ASSERT_NE(tree, nullptr);
	EXPECT_TRUE(starpu_sched_component_is_heteroprio(tree->root));
	EXPECT_FALSE(starpu_sched_component_is_heteroprio(tree->root->children[0]));
	Runs runs;
	g_runs = &runs;
	static starpu_codelet cl;
	cl = cpu_codelet(record, 0, "heteroprio_order");
	cl.model = &g_model;
	const int n = 30;
	{
		Gate gate(1);
		ASSERT_TRUE(gate.close());
		for (int i = 0; i < n; i++)
			ASSERT_EQ(submit_detached(&cl, (void *)(uintptr_t)i, i % 3), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	// The first went down at once, into the empty queue.
	std::vector<int> expected = { 0 };
	for (int priority = 2; priority >= 0; priority--)
		for (int i = 1; i < n; i++)
			if (i % 3 == priority)
				expected.push_back(i);
	EXPECT_EQ(runs.order, expected);
	ASSERT_EQ(runs.priority.size(), (size_t)n);
	for (int k = 0; k < n; k++)
		EXPECT_EQ(runs.priority[k], g_batch ? starpu_sched_get_max_priority() : runs.order[k] % 3) << "task " << runs.order[k];
	g_runs = nullptr;
}

INSTANTIATE_TEST_SUITE_P(Batch, HeteroprioComponent, ::testing::Values(0u, 1u),
			 [](const testing::TestParamInfo<unsigned> &info) { return info.param ? "batch" : "no_batch"; });

// ---------------------------------------------------- modular-heteroprio


// Whether a component named name lies at or under c.
bool holds(struct starpu_sched_component *c, bool (*is)(struct starpu_sched_component *))
{
	if (is(c))
		return true;
	for (unsigned i = 0; i < c->nchildren; i++)
		if (!starpu_sched_component_is_worker(c->children[i]) && holds(c->children[i], is))
			return true;
	return false;
}

bool is_heteroprio(struct starpu_sched_component *c)
{
	return starpu_sched_component_is_heteroprio(c);
}

bool is_heft(struct starpu_sched_component *c)
{
	return starpu_sched_component_is_heft(c);
}

TEST(ModularHeteroprio, TreeHasItsDecisionAndRunsTasksWithAndWithoutModels)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	starpu_conf conf = conf_with_ncpus(2);
	conf.sched_policy_name = "modular-heteroprio";
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	ASSERT_EQ(policy_name(), "modular-heteroprio");
	struct starpu_sched_tree *tree = starpu_sched_tree_get(0);
	ASSERT_NE(tree, nullptr);
	// As StarPU's: a prio queue, the perfmodel selection, heteroprio for the tasks with a model.
	EXPECT_TRUE(starpu_sched_component_is_prio(tree->root));
	ASSERT_EQ(tree->root->nchildren, 1u);
	EXPECT_TRUE(starpu_sched_component_is_perfmodel_select(tree->root->children[0]));
	EXPECT_TRUE(holds(tree->root, is_heteroprio));
	g_ran = 0;
	static starpu_codelet with_model, without;
	with_model = cpu_codelet(count, 0, "with_model");
	with_model.model = &g_model;
	without = cpu_codelet(count, 0, "without_model");
	const int n = 400;
	for (int i = 0; i < n; i++)
		ASSERT_EQ(submit_detached(i % 2 ? &with_model : &without, nullptr, i % 5 - 2), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ran.load(), n);
}

// ----------------------------------------------- modular-heteroprio-heft

// Which decision each task went through (the component the root pushed it to), and which it asked for.
struct Routes
{
	std::mutex lock;
	const void *root = nullptr;
	std::map<unsigned long, const void *> went;
	std::map<unsigned long, int> asked;
};
Routes *g_routes;

void see_push(const astro_event *e, void *arg)
{
	Routes *r = static_cast<Routes *>(arg);
	std::lock_guard<std::mutex> guard(r->lock);
	if (e->moment == ASTRO_MOMENT_COMPONENT_PUSH && e->nimpl == 0 && e->other_id == (unsigned long)(uintptr_t)r->root)
		r->went[e->job_id] = e->object;
}

void asked(void **, void *arg)
{
	std::lock_guard<std::mutex> guard(g_routes->lock);
	g_routes->asked[starpu_task_get_job_id(starpu_task_get_current())] = (int)(uintptr_t)arg;
	g_ran++;
}

TEST(ModularHeteroprioHeft, SchedDataChoosesTheDecision)
{
	ScopedEnv sched("STARPU_SCHED", nullptr);
	starpu_conf conf = conf_with_ncpus(2);
	conf.sched_policy_name = "modular-heteroprio-heft";
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	ASSERT_EQ(policy_name(), "modular-heteroprio-heft");
	struct starpu_sched_tree *tree = starpu_sched_tree_get(0);
	ASSERT_NE(tree, nullptr);
	EXPECT_EQ(std::string(tree->root->name), "userchoice");
	ASSERT_EQ(tree->root->nchildren, 2u);
	EXPECT_TRUE(holds(tree->root->children[0], is_heteroprio));
	EXPECT_FALSE(holds(tree->root->children[0], is_heft));
	EXPECT_TRUE(holds(tree->root->children[1], is_heft));
	// The two decisions meet above each worker.
	for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
		struct starpu_sched_component *worker = starpu_sched_component_worker_get(0, (int)w);
		ASSERT_EQ(worker->nparents, 1u);
		struct starpu_sched_component *impl = worker->parents[0];
		ASSERT_EQ(impl->nparents, 1u);
		EXPECT_EQ(impl->parents[0]->nparents, 2u) << "the stage of worker " << w;
	}

	g_ran = 0;
	Routes routes;
	routes.root = tree->root;
	g_routes = &routes;
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_COMPONENT_PUSH) | ASTRO_OBSERVE_UNTIMED, see_push, &routes);
	ASSERT_GE(id, 0);
	static starpu_codelet cl;
	cl = cpu_codelet(asked, 0, "choice");
	cl.model = &g_model;
	const int n = 300;
	for (int i = 0; i < n; i++)
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_TASK_SCHED_DATA, (void *)(uintptr_t)(i % 2), STARPU_CL_ARGS_NFREE, (void *)(uintptr_t)(i % 2),
					     (size_t)0, STARPU_PRIORITY, i % 3, 0),
			  0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(astro_observe_unsubscribe(id), 0);
	EXPECT_EQ(g_ran.load(), n);
	ASSERT_EQ(routes.asked.size(), (size_t)n);
	for (auto &a : routes.asked) {
		ASSERT_EQ(routes.went.count(a.first), 1u) << "job " << a.first;
		EXPECT_EQ(routes.went[a.first], tree->root->children[a.second]) << "job " << a.first << " asked for decision " << a.second;
	}

	// A choice out of range: said, and the task still runs (through the first decision).
	std::string err = stderr_of([&] {
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_TASK_SCHED_DATA, (void *)(uintptr_t)7, STARPU_CL_ARGS_NFREE, (void *)(uintptr_t)0, (size_t)0, 0), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	EXPECT_NE(err.find("decision 7 of 2"), std::string::npos) << err;
	EXPECT_EQ(g_ran.load(), n + 1);
	g_routes = nullptr;
}

} // namespace
