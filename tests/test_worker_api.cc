// SPDX-License-Identifier: LGPL-2.1-or-later
// The worker API of StarPU 1.4 that policies and resource managers use: the
// workers bound to a processing unit, the machine's tree (starpu_tree.h), the
// scheduling operation and relaxed sections of a worker, the sleep and
// wake-up callbacks set at run time, starpu_reset_scheduler(), and parallel
// tasks run StarPU's way (starpu_parallel_task_barrier_init and copies).
#include <gtest/gtest.h>
#include <starpu.h>
#include <hwloc.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <set>
#include <vector>

#include "helpers.h"

using namespace astro_test;

namespace {

class WorkerApi : public ::testing::Test
{
protected:
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
	ScopedEnv nobind_{"STARPU_WORKERS_NOBIND", nullptr};
};

// ---------------------------------------------------------------- bindids

TEST_F(WorkerApi, BindidGivesTheWorkersBoundToTheUnit)
{
	int *ids = nullptr;
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_bindid_get_workerids(0, &ids), -EINVAL); });
	EXPECT_TRUE(contains(err, "starpu_init")) << err;

	ASSERT_EQ(init_with_ncpus(2), 0);
	unsigned npus = hwloc_get_nbobjs_by_type(starpu_get_hwloc_topology(), HWLOC_OBJ_PU);
	std::multiset<int> seen;
	for (unsigned b = 0; b < npus; b++) {
		int n = starpu_bindid_get_workerids((int)b, &ids);
		ASSERT_GE(n, 0);
		for (int i = 0; i < n; i++) {
			EXPECT_EQ(starpu_worker_get_bindid(ids[i]), (int)b);
			seen.insert(ids[i]);
		}
	}
	for (unsigned w = 0; w < starpu_worker_get_count(); w++)
		EXPECT_EQ(seen.count((int)w), starpu_worker_get_bindid((int)w) >= 0 ? 1u : 0u) << "worker " << w;
	EXPECT_EQ(starpu_bindid_get_workerids((int)npus + 1000, &ids), 0) << "no unit there, no worker";

	err = stderr_of([&] { EXPECT_EQ(starpu_bindid_get_workerids(-1, &ids), -EINVAL); });
	EXPECT_TRUE(contains(err, "negative")) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_bindid_get_workerids(0, nullptr), -EINVAL); });
	EXPECT_TRUE(contains(err, "workerids is NULL")) << err;
}

TEST_F(WorkerApi, WorkersOnOneUnitAreAllGiven)
{
	starpu_conf conf = conf_with_ncpus(2);
	conf.use_explicit_workers_bindid = 1;
	conf.workers_bindid[0] = 0;
	conf.workers_bindid[1] = 0;
	ASSERT_EQ(starpu_init(&conf), 0);
	ASSERT_EQ(starpu_worker_get_bindid(0), 0);
	ASSERT_EQ(starpu_worker_get_bindid(1), 0);
	int *ids = nullptr;
	ASSERT_EQ(starpu_bindid_get_workerids(0, &ids), 2);
	EXPECT_EQ(std::set<int>(ids, ids + 2), (std::set<int>{0, 1}));
}

// ------------------------------------------------------------------ trees

// The leaves under t.
void leaves(starpu_tree *t, std::vector<starpu_tree *> &out)
{
	if (t->arity == 0) {
		out.push_back(t);
		return;
	}
	for (int i = 0; i < t->arity; i++) {
		EXPECT_EQ(t->nodes[i].father, t);
		leaves(&t->nodes[i], out);
	}
}

TEST_F(WorkerApi, MachineTreeHasTheUnitsAtItsLeaves)
{
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_workers_get_tree(), nullptr); });
	EXPECT_TRUE(contains(err, "starpu_init")) << err;

	ASSERT_EQ(init_with_ncpus(2), 0);
	starpu_tree *tree = starpu_workers_get_tree();
	ASSERT_NE(tree, nullptr);
	EXPECT_EQ(tree->father, nullptr);
	EXPECT_EQ(starpu_workers_get_tree(), tree) << "one tree for the run";
	std::vector<starpu_tree *> pus;
	leaves(tree, pus);
	unsigned npus = hwloc_get_nbobjs_by_type(starpu_get_hwloc_topology(), HWLOC_OBJ_PU);
	ASSERT_EQ(pus.size(), npus);
	std::set<int> ids;
	for (starpu_tree *leaf : pus) {
		EXPECT_TRUE(leaf->is_pu);
		ids.insert(leaf->id);
		EXPECT_EQ(starpu_tree_get(tree, leaf->id), leaf);
	}
	EXPECT_EQ(ids.size(), npus) << "each unit once";
	EXPECT_EQ(starpu_tree_get(tree, (int)npus + 7), nullptr);

	// Walking from neighbour to neighbour meets every bound worker once.
	char visited[STARPU_NMAXWORKERS] = {0}, present[STARPU_NMAXWORKERS] = {0};
	std::set<int> bound;
	for (unsigned w = 0; w < starpu_worker_get_count(); w++)
		if (starpu_worker_get_bindid((int)w) >= 0) {
			present[w] = 1;
			bound.insert((int)w);
		}
	std::multiset<int> met;
	starpu_tree *node = nullptr;
	for (unsigned round = 0; round <= npus; round++) {
		node = starpu_tree_get_neighbour(tree, node, visited, present);
		if (!node)
			break;
		int *wids;
		int n = starpu_bindid_get_workerids(node->id, &wids);
		ASSERT_GT(n, 0) << "a leaf given has a worker";
		for (int i = 0; i < n; i++) {
			met.insert(wids[i]);
			visited[wids[i]] = 1;
		}
	}
	EXPECT_EQ(node, nullptr) << "the walk ends";
	EXPECT_EQ(std::set<int>(met.begin(), met.end()), bound);
	EXPECT_EQ(met.size(), bound.size());
	starpu_tree_reset_visited(tree, visited);
	for (int w : bound)
		EXPECT_EQ(visited[w], 0);
	EXPECT_NE(starpu_tree_get_neighbour(tree, nullptr, visited, present), nullptr);

	err = stderr_of([&] { EXPECT_EQ(starpu_tree_get_neighbour(tree, nullptr, nullptr, present), nullptr); });
	EXPECT_TRUE(contains(err, "visited is NULL")) << err;
	err = stderr_of([&] { starpu_tree_reset_visited(nullptr, visited); });
	EXPECT_TRUE(contains(err, "tree is NULL")) << err;
}

TEST_F(WorkerApi, TreeBuiltByHandIsWalkedAndFreed)
{
	// Two workers on units 0 and 1 (bound there explicitly), under a root of two children.
	starpu_conf conf = conf_with_ncpus(2);
	conf.use_explicit_workers_bindid = 1;
	conf.workers_bindid[0] = 0;
	conf.workers_bindid[1] = 1;
	ASSERT_EQ(starpu_init(&conf), 0);
	if (starpu_worker_get_bindid(1) != 1)
		GTEST_SKIP() << "this machine has a single processing unit";
	starpu_tree root;
	starpu_tree_insert(&root, 0, 0, 0, 2, nullptr);
	starpu_tree_prepare_children(2, &root);
	ASSERT_NE(root.nodes, nullptr);
	ASSERT_EQ(root.arity, 2);
	starpu_tree_insert(&root.nodes[0], 0, 1, 1, 0, &root);
	starpu_tree_insert(&root.nodes[1], 1, 1, 1, 0, &root);
	EXPECT_EQ(starpu_tree_get(&root, 1), &root.nodes[1]);
	char visited[STARPU_NMAXWORKERS] = {0}, present[STARPU_NMAXWORKERS] = {0};
	present[0] = present[1] = 1;
	EXPECT_EQ(starpu_tree_get_neighbour(&root, &root.nodes[0], visited, present), &root.nodes[1]) << "the sibling first";
	visited[1] = 1;
	EXPECT_EQ(starpu_tree_get_neighbour(&root, &root.nodes[0], visited, present), nullptr) << "none left but itself";
	present[1] = 0;
	visited[1] = 0;
	EXPECT_EQ(starpu_tree_get_neighbour(&root, nullptr, visited, present), &root.nodes[0]) << "a unit not present is passed";
	starpu_tree_free(&root);
	EXPECT_EQ(root.nodes, nullptr);
	EXPECT_EQ(root.arity, 0);

	std::string err = stderr_of([&] { starpu_tree_prepare_children(2, nullptr); });
	EXPECT_TRUE(contains(err, "father is NULL")) << err;
	err = stderr_of([&] { starpu_tree_insert(&root, 0, 0, 0, -1, nullptr); });
	EXPECT_TRUE(contains(err, "negative")) << err;
}

// ------------------------------------------------- scheduling operations, relax

// A FIFO policy recording what its pop sees; one queue per worker for the copies of parallel tasks.
struct Recorder
{
	std::mutex lock;
	std::deque<starpu_task *> queue;
	std::deque<starpu_task *> own[STARPU_NMAXWORKERS];
	std::atomic<int> pops_in_op{0}, pops_not_in_op{0};
	std::atomic<int> relaxed_in_pop{0}, unrelaxed_in_pop{0}, relaxed_in_section{0}, relaxed_holding_other{0};
	std::atomic<int> resets{0};
	std::set<unsigned> reset_ctxs;
	int combined = -1;   // push: a parallel task is prepared for this combined worker ...
	int copies_to = 0;   // ... or for this many workers (starpu_parallel_task_barrier_init_n)
	int probe_seq = -1;  // a sequential task is offered to this combined worker (refused), then queued
	bool interleave = false; // copies made and given one by one, as StarPU's policies do
	std::atomic<int> dups_made{0}, dups_at_pop{-1};
	void clear()
	{
		std::lock_guard<std::mutex> g(lock);
		queue.clear();
		for (auto &q : own)
			q.clear();
		pops_in_op = pops_not_in_op = 0;
		relaxed_in_pop = unrelaxed_in_pop = relaxed_in_section = relaxed_holding_other = 0;
		resets = 0;
		reset_ctxs.clear();
		combined = -1;
		copies_to = 0;
		probe_seq = -1;
		interleave = false;
		dups_made = 0;
		dups_at_pop = -1;
	}
} g_rec;

int rec_push(starpu_task *task)
{
	if (task->cl && task->cl->type == STARPU_SEQ && g_rec.probe_seq >= 0)
		starpu_parallel_task_barrier_init(task, g_rec.probe_seq);
	if (task->cl && task->cl->type != STARPU_SEQ && (g_rec.combined >= 0 || g_rec.copies_to > 0)) {
		int size = 0, *ids = nullptr;
		int all[2] = {0, 1};
		if (g_rec.combined >= 0) {
			starpu_parallel_task_barrier_init(task, g_rec.combined);
			starpu_combined_worker_get_description(g_rec.combined, &size, &ids);
		} else {
			starpu_parallel_task_barrier_init_n(task, g_rec.copies_to);
			size = g_rec.copies_to;
			ids = all;
		}
		if (g_rec.interleave) {
			// StarPU's policies (peager, pheft) make each copy and give it at once. After the
			// first, wait a little for its member to take it: if the task itself started then,
			// it would be written while the next starpu_task_dup() reads it.
			for (int i = 0; i < size; i++) {
				starpu_task *copy = starpu_task_dup(task);
				g_rec.dups_made++;
				{
					std::lock_guard<std::mutex> g(g_rec.lock);
					g_rec.own[ids[i]].push_back(copy);
				}
				starpu_wake_worker(ids[i]);
				if (i == 0)
					wait_until([] { return g_rec.dups_at_pop.load() >= 0; }, 300);
			}
			return 0;
		}
		// Every copy is made before any is given (a policy may do so too).
		std::vector<starpu_task *> copies;
		for (int i = 0; i < size; i++)
			copies.push_back(starpu_task_dup(task));
		for (int i = 0; i < size; i++) {
			starpu_task *copy = copies[i];
			if (i == 1) {
				// One copy through the member's own queue, the others through pop_task.
				starpu_push_local_task(ids[i], copy, 0);
				continue;
			}
			std::lock_guard<std::mutex> g(g_rec.lock);
			g_rec.own[ids[i]].push_back(copy);
		}
		for (int i = 0; i < size; i++)
			starpu_wake_worker(ids[i]);
		return 0;
	}
	{
		std::lock_guard<std::mutex> g(g_rec.lock);
		g_rec.queue.push_back(task);
	}
	for (unsigned w = 0; w < starpu_worker_get_count(); w++)
		starpu_wake_worker((int)w);
	return 0;
}

starpu_task *rec_pop(unsigned)
{
	int me = starpu_worker_get_id();
	(starpu_worker_sched_op_pending() ? g_rec.pops_in_op : g_rec.pops_not_in_op)++;
	(starpu_worker_get_relax_state() ? g_rec.relaxed_in_pop : g_rec.unrelaxed_in_pop)++;
	starpu_worker_relax_on();
	starpu_worker_relax_on();
	starpu_worker_relax_off();
	if (starpu_worker_get_relax_state())
		g_rec.relaxed_in_section++;
	starpu_worker_relax_off();
	int other = (me + 1) % (int)starpu_worker_get_count();
	if (other != me) {
		starpu_worker_lock(other);
		if (starpu_worker_get_relax_state())
			g_rec.relaxed_holding_other++;
		starpu_worker_unlock(other);
	}
	std::lock_guard<std::mutex> g(g_rec.lock);
	if (me >= 0 && !g_rec.own[me].empty()) {
		starpu_task *t = g_rec.own[me].front();
		g_rec.own[me].pop_front();
		return t;
	}
	if (g_rec.queue.empty())
		return nullptr;
	starpu_task *t = g_rec.queue.front();
	g_rec.queue.pop_front();
	return t;
}

void rec_reset(unsigned ctx)
{
	std::lock_guard<std::mutex> g(g_rec.lock);
	g_rec.reset_ctxs.insert(ctx);
	g_rec.resets++;
}

starpu_sched_policy make_recorder()
{
	starpu_sched_policy p{};
	p.push_task = rec_push;
	p.pop_task = rec_pop;
	p.reset_scheduler = rec_reset;
	p.policy_name = "recorder";
	p.policy_description = "records what its pop sees";
	return p;
}
starpu_sched_policy g_recorder = make_recorder();

struct InTask
{
	std::atomic<int> in_op{0}, relaxed{0}, runs{0};
};

void look_in_task(void **, void *arg)
{
	auto *s = static_cast<InTask *>(arg);
	s->in_op += starpu_worker_sched_op_pending() ? 1 : 0;
	s->relaxed += starpu_worker_get_relax_state() ? 1 : 0;
	s->runs++;
}

void start_recorder(int ncpus = 2)
{
	g_rec.clear();
	starpu_conf conf = conf_with_ncpus(ncpus);
	conf.sched_policy = &g_recorder;
	ASSERT_EQ(starpu_init(&conf), 0);
}

TEST_F(WorkerApi, SchedOpIsPendingInThePolicysPopOnly)
{
	EXPECT_EQ(starpu_worker_sched_op_pending(), 0) << "the program's thread is no worker";
	EXPECT_NE(starpu_worker_get_relax_state(), 0);
	start_recorder();
	InTask s;
	starpu_codelet cl = cpu_codelet(look_in_task, 0, "look_in_task");
	for (int i = 0; i < 20; i++)
		ASSERT_EQ(submit_detached(&cl, &s), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(s.runs.load(), 20);
	EXPECT_EQ(s.in_op.load(), 0) << "a codelet is no scheduling operation";
	EXPECT_EQ(s.relaxed.load(), 20) << "a worker running a codelet may be observed";
	// Idle workers go on popping: the counts are compared once they stopped.
	starpu_shutdown();
	EXPECT_GT(g_rec.pops_in_op.load(), 0);
	EXPECT_EQ(g_rec.pops_not_in_op.load(), 0) << "pop_task is a scheduling operation";
	EXPECT_EQ(g_rec.relaxed_in_pop.load(), 0) << "a worker in its pop is not relaxed";
	EXPECT_EQ(g_rec.relaxed_in_section.load(), g_rec.pops_in_op.load()) << "nested relax_on sections count";
	EXPECT_EQ(g_rec.relaxed_holding_other.load(), g_rec.pops_in_op.load()) << "holding another worker's lock relaxes";
	EXPECT_EQ(starpu_worker_sched_op_pending(), 0);
}

void unpaired_relax_off(void **, void *arg)
{
	*static_cast<std::string *>(arg) = stderr_of([] { starpu_worker_relax_off(); });
}

TEST_F(WorkerApi, UnpairedRelaxOffIsRefused)
{
	start_recorder();
	std::string err;
	starpu_codelet cl = cpu_codelet(unpaired_relax_off, 0, "unpaired");
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->cl_arg = &err;
	t->synchronous = 1;
	ASSERT_EQ(starpu_task_submit(t), 0);
	EXPECT_TRUE(contains(err, "no relaxed section")) << err;
	// Still counted right: the next pops see an unrelaxed worker.
	g_rec.relaxed_in_pop = 0;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	InTask s;
	starpu_codelet look = cpu_codelet(look_in_task, 0, "look");
	ASSERT_EQ(submit_detached(&look, &s), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_rec.relaxed_in_pop.load(), 0);
}

// ------------------------------------------------------------ progression hooks

struct HookRecord
{
	std::atomic<int> calls{0}, from_elsewhere{0}; // all calls, and those not made by a worker
	std::atomic<unsigned> answer{1};
};

unsigned count_call(void *arg)
{
	auto *r = static_cast<HookRecord *>(arg);
	r->calls++;
	r->from_elsewhere += starpu_worker_get_id() < 0;
	return r->answer.load();
}

struct SeenByTasks
{
	HookRecord *hook;
	std::vector<int> seen; // the hook's calls each task saw (one worker: in order)
};

void note_hook_calls(void **, void *arg)
{
	auto *s = static_cast<SeenByTasks *>(arg);
	s->seen.push_back(s->hook->calls.load());
}

// starpu_progression_hook_register (issue 40): each worker calls the hook at each round, so
// between two tasks of one worker; once deregistered, never again.
TEST_F(WorkerApi, ProgressionHookRunsBetweenTasksUntilDeregistered)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	HookRecord rec;
	int id = starpu_progression_hook_register(count_call, &rec);
	ASSERT_GE(id, 0);
	SeenByTasks seen{&rec, {}};
	starpu_codelet cl = cpu_codelet(note_hook_calls, 0, "note_hook_calls");
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(submit_detached(&cl, &seen), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(seen.seen.size(), 5u);
	for (size_t i = 1; i < seen.seen.size(); i++)
		EXPECT_GT(seen.seen[i], seen.seen[i - 1]) << "no hook call between tasks " << i - 1 << " and " << i;
	EXPECT_GT(rec.calls.load(), 0);
	// Counted on its own: the idle worker keeps calling the hook, so two counters read one after the
	// other (all calls, the workers' calls) need not agree at any one moment.
	EXPECT_EQ(rec.from_elsewhere.load(), 0) << "called outside the workers";

	starpu_progression_hook_deregister(id);
	int after = rec.calls.load();
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(submit_detached(&cl, &seen), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(rec.calls.load(), after) << "called after its deregistration";
	std::string err = stderr_of([&] { starpu_progression_hook_deregister(id); });
	EXPECT_TRUE(contains(err, "progression hook " + std::to_string(id) + " is not registered")) << err;
}

std::atomic<int> g_hook_sleeps{0};
void hook_slept(unsigned) { g_hook_sleeps++; }

// A hook returning 0 keeps the idle workers polling (they never sleep, so they keep calling
// it); returning 1 again, or deregistered, lets them sleep.
TEST_F(WorkerApi, ProgressionHookReturningZeroKeepsWorkersAwake)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	starpu_worker_set_going_to_sleep_callback(hook_slept);
	HookRecord rec;
	rec.answer = 0;
	int id = starpu_progression_hook_register(count_call, &rec);
	ASSERT_GE(id, 0);
	// The registration woke the worker; from its first call on, it never sleeps.
	ASSERT_TRUE(wait_until([&] { return rec.calls.load() > 0; }, 20000));
	g_hook_sleeps = 0;
	int from = rec.calls.load();
	ASSERT_TRUE(wait_until([&] { return rec.calls.load() > from + 2000; }, 60000)) << "the idle worker stopped calling";
	EXPECT_EQ(g_hook_sleeps.load(), 0) << "a worker slept while a hook said it may not";
	rec.answer = 1;
	ASSERT_TRUE(wait_until([] {
		starpu_wake_worker(0);
		return g_hook_sleeps.load() > 0;
	}, 20000)) << "the worker never slept once the hook allowed it";
	starpu_progression_hook_deregister(id);
	starpu_worker_set_going_to_sleep_callback(nullptr);
}

// Bad input of the progression hooks: test_worker_api_rest.cc, with the idle hooks'.

// ------------------------------------------------------------ sleep callbacks

std::atomic<int> g_slept_a{0}, g_slept_b{0}, g_woke{0};
void slept_a(unsigned) { g_slept_a++; }
void slept_b(unsigned) { g_slept_b++; }
void woke(unsigned) { g_woke++; }

TEST_F(WorkerApi, SleepCallbacksAreSetAtRunTime)
{
	std::string err = stderr_of([] { starpu_worker_set_going_to_sleep_callback(slept_a); });
	EXPECT_TRUE(contains(err, "callback_worker_going_to_sleep")) << err;
	err = stderr_of([] { starpu_worker_set_waking_up_callback(woke); });
	EXPECT_TRUE(contains(err, "callback_worker_waking_up")) << err;

	ASSERT_EQ(init_with_ncpus(1), 0);
	g_slept_a = g_slept_b = g_woke = 0;
	starpu_worker_set_going_to_sleep_callback(slept_a);
	starpu_worker_set_waking_up_callback(woke);
	// Each wake-up of the idle worker: it wakes, finds nothing, sleeps again.
	ASSERT_TRUE(wait_until([] {
		starpu_wake_worker(0);
		return g_slept_a.load() > 0 && g_woke.load() > 0;
	}, 20000));
	starpu_worker_set_going_to_sleep_callback(slept_b);
	int a = g_slept_a;
	ASSERT_TRUE(wait_until([] {
		starpu_wake_worker(0);
		return g_slept_b.load() > 0;
	}, 20000));
	EXPECT_LE(g_slept_a.load(), a + 1) << "the first callback is replaced";
	starpu_worker_set_going_to_sleep_callback(nullptr);
	starpu_worker_set_waking_up_callback(nullptr);
}

// ------------------------------------------------------------ reset_scheduler

TEST_F(WorkerApi, ResetSchedulerCallsEachContextsPolicy)
{
	std::string err = stderr_of([] { starpu_reset_scheduler(); });
	EXPECT_TRUE(contains(err, "starpu_init")) << err;
	start_recorder();
	int ids[1] = {1};
	unsigned ctx = starpu_sched_ctx_create(ids, 1, "reset_ctx", STARPU_SCHED_CTX_POLICY_STRUCT, &g_recorder, 0);
	starpu_reset_scheduler();
	EXPECT_EQ(g_rec.resets.load(), 2);
	EXPECT_EQ(g_rec.reset_ctxs, (std::set<unsigned>{0, ctx}));
	starpu_sched_ctx_delete(ctx);
}

TEST_F(WorkerApi, ResetSchedulerSkipsPoliciesWithoutTheHook)
{
	starpu_conf conf = conf_with_ncpus(1);
	conf.sched_policy_name = "eager";
	ASSERT_EQ(starpu_init(&conf), 0);
	std::string err = stderr_of([] { starpu_reset_scheduler(); });
	EXPECT_EQ(err, "");
	InTask s;
	starpu_codelet cl = cpu_codelet(look_in_task, 0, "after_reset");
	ASSERT_EQ(submit_detached(&cl, &s), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(s.runs.load(), 1);
}

// ------------------------------------------- parallel tasks through copies

struct Parts
{
	std::mutex lock;
	std::vector<int> ranks, sizes, combined;
	std::atomic<int> callbacks{0};
};

void spmd_part(void **, void *arg)
{
	auto *p = static_cast<Parts *>(arg);
	std::lock_guard<std::mutex> g(p->lock);
	p->ranks.push_back(starpu_combined_worker_get_rank());
	p->sizes.push_back(starpu_combined_worker_get_size());
	p->combined.push_back(starpu_combined_worker_get_id());
}

void parts_done(void *arg)
{
	static_cast<Parts *>(arg)->callbacks++;
}

starpu_codelet g_spmd_cl = [] {
	starpu_codelet c = cpu_codelet(spmd_part, 0, "spmd_part");
	c.type = STARPU_SPMD;
	c.max_parallelism = 2;
	return c;
}();

// Submits one SPMD task of two parts (the recorder prepares it) and waits for it.
void run_spmd(Parts &parts, void (*pop_prologue)(void *) = nullptr)
{
	starpu_task *t = starpu_task_create();
	t->cl = &g_spmd_cl;
	t->prologue_callback_pop_func = pop_prologue;
	t->cl_arg = &parts;
	t->callback_func = parts_done;
	t->callback_arg = &parts;
	t->detach = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait(t), 0);
}

// Starts the recorder with a combined worker of both CPUs, for which it prepares parallel tasks.
void start_recorder_with_pair(int &combined)
{
	start_recorder();
	int both[2] = {0, 1};
	combined = starpu_combined_worker_assign_workerid(2, both);
	ASSERT_GE(combined, (int)starpu_worker_get_count());
	g_rec.combined = combined;
}

TEST_F(WorkerApi, BarrierInitRunsTheCopiesAsOneParallelTask)
{
	int combined = -1;
	ASSERT_NO_FATAL_FAILURE(start_recorder_with_pair(combined));
	for (int round = 0; round < 3; round++) {
		Parts parts;
		run_spmd(parts);
		std::sort(parts.ranks.begin(), parts.ranks.end());
		EXPECT_EQ(parts.ranks, (std::vector<int>{0, 1}));
		EXPECT_EQ(parts.sizes, (std::vector<int>{2, 2}));
		EXPECT_EQ(parts.combined, (std::vector<int>{combined, combined}));
		EXPECT_EQ(parts.callbacks.load(), 1) << "one task, one callback";
	}
	g_rec.combined = -1;
	g_rec.copies_to = 2;
	Parts parts;
	run_spmd(parts);
	std::sort(parts.ranks.begin(), parts.ranks.end());
	EXPECT_EQ(parts.ranks, (std::vector<int>{0, 1}));
	EXPECT_EQ(parts.sizes, (std::vector<int>{2, 2}));
	EXPECT_EQ(parts.callbacks.load(), 1);
}

void note_dups_at_pop(void *)
{
	g_rec.dups_at_pop = g_rec.dups_made.load();
}

// A policy giving each copy as soon as it is made (StarPU's way): the task itself (its pop
// prologue, its data, its status) starts only once the last copy was taken, so never while
// starpu_task_dup() still reads it for the next member (a data race TSan would report).
TEST_F(WorkerApi, BarrierInitTaskStartsAfterItsLastCopy)
{
	int combined = -1;
	ASSERT_NO_FATAL_FAILURE(start_recorder_with_pair(combined));
	g_rec.interleave = true;
	for (int round = 0; round < 3; round++) {
		g_rec.dups_made = 0;
		g_rec.dups_at_pop = -1;
		Parts parts;
		run_spmd(parts, note_dups_at_pop);
		EXPECT_EQ(g_rec.dups_at_pop.load(), 2) << "the task started before its last copy was made";
		std::sort(parts.ranks.begin(), parts.ranks.end());
		EXPECT_EQ(parts.ranks, (std::vector<int>{0, 1}));
	}
}

TEST_F(WorkerApi, BarrierInitRefusesBadArguments)
{
	start_recorder();
	std::string err = stderr_of([] { starpu_parallel_task_barrier_init(nullptr, 0); });
	EXPECT_TRUE(contains(err, "task is NULL")) << err;
	starpu_codelet seq = cpu_codelet(look_in_task, 0, "seq");
	starpu_task *t = starpu_task_create();
	t->cl = &seq;
	err = stderr_of([&] { starpu_parallel_task_barrier_init(t, 0); });
	EXPECT_TRUE(contains(err, "not submitted")) << err;
	err = stderr_of([&] { starpu_parallel_task_barrier_init(t, 1000); });
	EXPECT_TRUE(contains(err, "no worker or combined worker 1000")) << err;
	err = stderr_of([&] { starpu_parallel_task_barrier_init_n(t, 0); });
	EXPECT_TRUE(contains(err, "0 workers asked for")) << err;
	starpu_task_destroy(t);

	// A sequential task offered to two workers is refused, and runs once as it was.
	int both[2] = {0, 1};
	g_rec.probe_seq = starpu_combined_worker_assign_workerid(2, both);
	ASSERT_GE(g_rec.probe_seq, 0);
	InTask s;
	err = stderr_of([&] {
		ASSERT_EQ(submit_detached(&seq, &s), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	EXPECT_TRUE(contains(err, "codelet is sequential")) << err;
	EXPECT_EQ(s.runs.load(), 1);
}


// ------------------------------------------------- worker types and memory kinds (issue 40)

void noop_cpu(void **, void *) {}
void noop_device(void **, void *) {}

TEST_F(WorkerApi, WhereMasksAreTheWorkerTypesBits)
{
	EXPECT_EQ(STARPU_CPU, 1ULL << 1);
	EXPECT_EQ(STARPU_CUDA, 1ULL << 2);
	EXPECT_EQ(STARPU_OPENCL, 1ULL << 3);
	EXPECT_EQ(STARPU_MAX_FPGA, 1ULL << 5);
	EXPECT_EQ(STARPU_MPI_MS, 1ULL << 6);
	EXPECT_EQ(STARPU_TCPIP_MS, 1ULL << 7);
	EXPECT_EQ(STARPU_HIP, 1ULL << 8);
	for (unsigned t = 0; t < STARPU_NARCH; t++) {
		if (!starpu_worker_archtype_is_valid((enum starpu_worker_archtype)t))
			continue;
		unsigned mask = (unsigned)STARPU_WORKER_TO_MASK(t);
		EXPECT_EQ(starpu_arch_mask_to_worker_archtype(mask), (enum starpu_worker_archtype)t) << t;
	}
}

TEST_F(WorkerApi, ArchtypeValidityAndMasksNamingNoneOrSeveralTypes)
{
	EXPECT_TRUE(starpu_worker_archtype_is_valid(STARPU_CPU_WORKER));
	EXPECT_TRUE(starpu_worker_archtype_is_valid(STARPU_HIP_WORKER));
	EXPECT_TRUE(starpu_worker_archtype_is_valid(STARPU_TCPIP_MS_WORKER));
	EXPECT_FALSE(starpu_worker_archtype_is_valid((enum starpu_worker_archtype)3)) << "the value SCC used is none";
	EXPECT_FALSE(starpu_worker_archtype_is_valid(STARPU_ANY_WORKER));
	EXPECT_FALSE(starpu_worker_archtype_is_valid(STARPU_UNKNOWN_WORKER));
	EXPECT_FALSE(starpu_worker_archtype_is_valid(STARPU_NARCH));
	enum starpu_worker_archtype got = STARPU_CPU_WORKER;
	std::string err = stderr_of([&] { got = starpu_arch_mask_to_worker_archtype((unsigned)(STARPU_CPU | STARPU_CUDA)); });
	EXPECT_EQ(got, STARPU_UNKNOWN_WORKER);
	EXPECT_TRUE(contains(err, "does not name exactly one worker type")) << err;
	err = stderr_of([&] { got = starpu_arch_mask_to_worker_archtype(0); });
	EXPECT_EQ(got, STARPU_UNKNOWN_WORKER);
	EXPECT_FALSE(err.empty());
}

TEST_F(WorkerApi, TypeCanExecuteTaskFollowsTheCodeletAndTheWhereMasks)
{
	starpu_codelet cpu_only = cpu_codelet(noop_cpu, 0, "cpu_only");
	starpu_codelet hip_only;
	starpu_codelet_init(&hip_only);
	hip_only.where = STARPU_HIP;
	hip_only.hip_funcs[0] = noop_device;
	hip_only.name = "hip_only";
	struct starpu_task task;
	starpu_task_init(&task);
	task.cl = &cpu_only;
	EXPECT_EQ(starpu_worker_type_can_execute_task(STARPU_CPU_WORKER, &task), 1u);
	EXPECT_EQ(starpu_worker_type_can_execute_task(STARPU_CUDA_WORKER, &task), 0u);
	EXPECT_EQ(starpu_worker_type_can_execute_task(STARPU_HIP_WORKER, &task), 0u);
	task.where = (int32_t)STARPU_CUDA;
	EXPECT_EQ(starpu_worker_type_can_execute_task(STARPU_CPU_WORKER, &task), 0u) << "the task's where keeps CPUs out";
	task.where = -1;
	task.cl = &hip_only;
	EXPECT_EQ(starpu_worker_type_can_execute_task(STARPU_HIP_WORKER, &task), 1u) << "no HIP driver here: from the codelet";
	EXPECT_EQ(starpu_worker_type_can_execute_task(STARPU_CPU_WORKER, &task), 0u);
	task.cl = nullptr;
	EXPECT_EQ(starpu_worker_type_can_execute_task(STARPU_OPENCL_WORKER, &task), 1u) << "a task without codelet runs anywhere";
	unsigned got = 1;
	std::string err = stderr_of([&] { got = starpu_worker_type_can_execute_task(STARPU_CPU_WORKER, nullptr); });
	EXPECT_EQ(got, 0u);
	EXPECT_TRUE(contains(err, "NULL task")) << err;
	err = stderr_of([&] { got = starpu_worker_type_can_execute_task(STARPU_ANY_WORKER, &task); });
	EXPECT_EQ(got, 0u);
	EXPECT_TRUE(contains(err, "not a worker type")) << err;
	starpu_task_clean(&task);
}

TEST_F(WorkerApi, DevnumSubworkerAndStreamWorkers)
{
	Runtime rt(3);
	ASSERT_TRUE(rt.ok());
	int ids[STARPU_NMAXWORKERS];
	for (int w = 0; w < 3; w++) {
		EXPECT_EQ(starpu_worker_get_devnum(w), w);
		EXPECT_EQ(starpu_worker_get_subworkerid(w), 0);
		ASSERT_EQ(starpu_worker_get_stream_workerids((unsigned)starpu_worker_get_devid(w), ids, STARPU_CPU_WORKER), 1);
		EXPECT_EQ(ids[0], w);
	}
	EXPECT_EQ(starpu_worker_get_devnum(-1), -1);
	EXPECT_EQ(starpu_worker_get_subworkerid(3), -1);
	EXPECT_EQ(starpu_worker_get_stream_workerids(0, ids, STARPU_CUDA_WORKER), 0);
	int got = 0;
	std::string err = stderr_of([&] { got = starpu_worker_get_stream_workerids(0, nullptr, STARPU_CPU_WORKER); });
	EXPECT_EQ(got, -EINVAL);
	EXPECT_TRUE(contains(err, "NULL workerids")) << err;
}

TEST_F(WorkerApi, DisplayCountSaysHowManyOfAType)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(printed([](FILE *f) { starpu_worker_display_count(f, STARPU_CPU_WORKER); }), "2 CPU workers\n");
	EXPECT_EQ(printed([](FILE *f) { starpu_worker_display_count(f, STARPU_HIP_WORKER); }), "0 HIP workers\n");
	std::string out;
	std::string err = stderr_of([&] { out = printed([](FILE *f) { starpu_worker_display_count(f, STARPU_NARCH); }); });
	EXPECT_EQ(out, "");
	EXPECT_TRUE(contains(err, "not a worker type")) << err;
}

TEST_F(WorkerApi, WaitForInitialisationReturnsOnceTheWorkersAreUp)
{
	std::string err = stderr_of([] { starpu_worker_wait_for_initialisation(); });
	EXPECT_TRUE(contains(err, "StarPU is not initialised")) << err;
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	err = stderr_of([] { starpu_worker_wait_for_initialisation(); });
	EXPECT_EQ(err, "");
	EXPECT_EQ(starpu_worker_get_count(), 2u);
}

TEST_F(WorkerApi, MemoryKindsAndWorkerTypesMatch)
{
	EXPECT_EQ(starpu_memory_node_get_worker_archtype(STARPU_CPU_RAM), STARPU_CPU_WORKER);
	EXPECT_EQ(starpu_memory_node_get_worker_archtype(STARPU_CUDA_RAM), STARPU_CUDA_WORKER);
	EXPECT_EQ(starpu_memory_node_get_worker_archtype(STARPU_OPENCL_RAM), STARPU_OPENCL_WORKER);
	EXPECT_EQ(starpu_memory_node_get_worker_archtype(STARPU_HIP_RAM), STARPU_HIP_WORKER);
	EXPECT_EQ(starpu_memory_node_get_worker_archtype(STARPU_DISK_RAM), STARPU_CPU_WORKER);
	EXPECT_EQ(starpu_worker_get_memory_node_kind(STARPU_CPU_WORKER), STARPU_CPU_RAM);
	EXPECT_EQ(starpu_worker_get_memory_node_kind(STARPU_CUDA_WORKER), STARPU_CUDA_RAM);
	EXPECT_EQ(starpu_worker_get_memory_node_kind(STARPU_MAX_FPGA_WORKER), STARPU_MAX_FPGA_RAM);
	enum starpu_worker_archtype arch = STARPU_CPU_WORKER;
	std::string err = stderr_of([&] { arch = starpu_memory_node_get_worker_archtype(STARPU_UNUSED); });
	EXPECT_EQ(arch, STARPU_UNKNOWN_WORKER);
	EXPECT_TRUE(contains(err, "is not a memory node kind")) << err;
	enum starpu_node_kind kind = STARPU_CPU_RAM;
	err = stderr_of([&] { kind = starpu_worker_get_memory_node_kind(STARPU_ANY_WORKER); });
	EXPECT_EQ(kind, STARPU_UNUSED);
	EXPECT_TRUE(contains(err, "is not a worker type")) << err;
}

TEST_F(WorkerApi, MemoryNodesFoundByKindAndDevice)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	unsigned nram = starpu_memory_nodes_get_numa_count();
	EXPECT_EQ(starpu_memory_devid_find_node(0, STARPU_CPU_RAM), (unsigned)STARPU_MAIN_RAM);
	EXPECT_EQ(starpu_memory_devid_find_node(7, STARPU_CUDA_RAM), (unsigned)-1);
	unsigned ids[STARPU_MAXNODES];
	ASSERT_EQ(starpu_memory_node_get_ids_by_type(STARPU_CPU_RAM, ids, STARPU_MAXNODES), nram);
	EXPECT_EQ(ids[0], (unsigned)STARPU_MAIN_RAM);
	EXPECT_EQ(starpu_memory_node_get_ids_by_type(STARPU_CPU_RAM, ids, 0), (unsigned)-ERANGE) << "no room for the first";
	EXPECT_EQ(starpu_memory_node_get_ids_by_type(STARPU_HIP_RAM, ids, STARPU_MAXNODES), 0u);
	EXPECT_EQ(starpu_node_needs_offset(STARPU_MAIN_RAM), 0);
}

TEST_F(WorkerApi, BusFiguresArePrintedOnceStarted)
{
	std::string out;
	std::string err = stderr_of([&] { out = printed([](FILE *f) { starpu_bus_print_bandwidth(f); }); });
	EXPECT_EQ(out, "");
	EXPECT_TRUE(contains(err, "starpu_bus_print_bandwidth: StarPU is not initialised")) << err;
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	out = printed([](FILE *f) { starpu_bus_print_bandwidth(f); });
	EXPECT_TRUE(contains(out, "# bandwidth (MB/s)\nfrom/to")) << out;
	EXPECT_TRUE(contains(out, "# latency (us)")) << out;
	EXPECT_TRUE(contains(out, "NUMA 0")) << out;
	out = printed([](FILE *f) { starpu_bus_print_affinity(f); });
	EXPECT_EQ(lines_of(out).front(), "# device\tRAM nodes, best connected first");
	EXPECT_EQ(lines_of(out).size(), 1u + starpu_memory_nodes_get_count() - starpu_memory_nodes_get_numa_count())
		<< "one line per device" << out;
}


// ------------------------------------------------------ helpers policies call (issue 40)

std::atomic<int> g_traps{0};

void count_trap(int)
{
	g_traps++;
}

TEST_F(WorkerApi, TaskBreakRaisesSigtrapOnTheNamedJobOnly)
{
	ScopedEnv brk("STARPU_TASK_BREAK_ON_SCHED", nullptr);
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	struct starpu_task *other = starpu_task_create(), *named = starpu_task_create();
	named->name = "named";
	struct sigaction counting = {}, previous = {};
	counting.sa_handler = count_trap;
	sigemptyset(&counting.sa_mask);
	ASSERT_EQ(sigaction(SIGTRAP, &counting, &previous), 0);
	g_traps = 0;
	ScopedEnv set("STARPU_TASK_BREAK_ON_SCHED", std::to_string(starpu_task_get_job_id(named)));
	starpu_sched_task_break(other);
	starpu_sched_task_break(nullptr);
	EXPECT_EQ(g_traps.load(), 0);
	std::string err = stderr_of([&] { starpu_sched_task_break(named); });
	EXPECT_EQ(g_traps.load(), 1);
	EXPECT_TRUE(contains(err, "STARPU_TASK_BREAK_ON_SCHED: the policy has scheduled task 'named' (job ")) << err;
	sigaction(SIGTRAP, &previous, nullptr);
	starpu_task_destroy(other);
	starpu_task_destroy(named);
}

TEST_F(WorkerApi, SharesTasksListsChecksItsArguments)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	std::string err = stderr_of([] {
		starpu_sched_ctx_worker_shares_tasks_lists(1, 0);
		starpu_sched_ctx_worker_shares_tasks_lists(0, STARPU_NMAX_SCHED_CTXS);
	});
	EXPECT_EQ(err, "");
	err = stderr_of([] { starpu_sched_ctx_worker_shares_tasks_lists(5, 0); });
	EXPECT_TRUE(contains(err, "starpu_sched_ctx_worker_shares_tasks_lists: worker id 5 does not exist")) << err;
	err = stderr_of([] { starpu_sched_ctx_worker_shares_tasks_lists(0, 9); });
	EXPECT_TRUE(contains(err, "starpu_sched_ctx_worker_shares_tasks_lists")) << err;
}


struct ReadySoon
{
	std::mutex lock;
	std::vector<std::pair<std::string, double>> seen;
};

void note_ready_soon(void *data, struct starpu_task *task, double delay)
{
	ReadySoon *r = (ReadySoon *)data;
	std::lock_guard<std::mutex> guard(r->lock);
	r->seen.emplace_back(task->name ? task->name : "", delay);
}

void other_ready_soon(void *, struct starpu_task *, double) {}

void touch(void **, void *) {}

TEST_F(WorkerApi, ReadySoonNamesTheTaskWaitingOnlyForTheOneStarting)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	ReadySoon r;
	starpu_task_notify_ready_soon_register(note_ready_soon, &r);
	std::string err = stderr_of([] { starpu_task_notify_ready_soon_register(other_ready_soon, nullptr); });
	EXPECT_TRUE(contains(err, "another function is registered already")) << err;
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	static starpu_codelet rw = cpu_codelet(touch, 1, "rw");
	rw.modes[0] = STARPU_RW;
	static starpu_codelet none = cpu_codelet(touch, 0, "none");
	struct starpu_task *first = starpu_task_build(&rw, STARPU_RW, h, STARPU_NAME, "first", 0);
	ASSERT_NE(first, nullptr);
	first->predicted = 500.0;
	// Paused: the second is submitted (waiting for the first) before the first starts.
	starpu_pause();
	ASSERT_EQ(starpu_task_submit(first), 0);
	ASSERT_EQ(starpu_task_insert(&rw, STARPU_RW, h, STARPU_NAME, "second", 0), 0);
	ASSERT_EQ(starpu_task_insert(&none, STARPU_NAME, "alone", 0), 0);
	starpu_resume();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	starpu_task_notify_ready_soon_register(nullptr, nullptr);
	std::lock_guard<std::mutex> guard(r.lock);
	ASSERT_EQ(r.seen.size(), 1u) << "only the second waits for the first, whose duration is predicted";
	EXPECT_EQ(r.seen[0].first, "second");
	EXPECT_EQ(r.seen[0].second, 500.0);
}

} // namespace
