// SPDX-License-Identifier: LGPL-2.1-or-later
// Dependencies: tags, explicit task dependencies, end dependencies, and the
// implicit data dependencies of sequential consistency.
#include "helpers.h"

#include <algorithm>
#include <thread>

using namespace astro_test;

namespace {

class Deps : public ::testing::Test
{
protected:
	void SetUp() override { ASSERT_EQ(init_with_ncpus(2), 0); }
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
};

// ------------------------------------------------------------------- tags

struct Order
{
	std::atomic<int> next{0};
	std::vector<int> at;
	explicit Order(size_t n) : at(n, -1) {}
};

struct OrderArg
{
	Order *order;
	int index;
};

void record_order(void **, void *arg)
{
	auto *a = static_cast<OrderArg *>(arg);
	a->order->at[a->index] = a->order->next++;
}

TEST_F(Deps, TagChainRunsInOrder)
{
	const int n = 100;
	const starpu_tag_t base = 1000;
	Order order(n);
	std::vector<OrderArg> args(n);
	starpu_codelet cl = cpu_codelet(record_order, 0, "tag_chain");
	for (int i = 1; i < n; i++)
		starpu_tag_declare_deps(base + i, 1, (starpu_tag_t)(base + i - 1));
	// Submitted last first: only the tags order them.
	for (int i = n - 1; i >= 0; i--) {
		args[i] = { &order, i };
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = &args[i];
		t->use_tag = 1;
		t->tag_id = base + i;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_tag_wait(base + n - 1), 0);
	EXPECT_EQ(order.next, n);
	for (int i = 0; i < n; i++)
		EXPECT_EQ(order.at[i], i) << "task " << i;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

std::atomic<int> g_flag{0};

void slow_set_flag(void **, void *)
{
	sleep_ms(20);
	g_flag = 1;
}

TEST_F(Deps, TagWaitWaitsForTheTask)
{
	g_flag = 0;
	starpu_codelet cl = cpu_codelet(slow_set_flag, 0, "slow");
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->use_tag = 1;
	t->tag_id = 42;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_tag_wait(42), 0);
	EXPECT_EQ(g_flag, 1);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

void set_flag(void **, void *)
{
	g_flag = 1;
}

TEST_F(Deps, NotifyFromAppsReleasesDependent)
{
	g_flag = 0;
	const starpu_tag_t app = 7000, dependent = 7001;
	starpu_tag_declare_deps(dependent, 1, app);
	starpu_codelet cl = cpu_codelet(set_flag, 0, "dependent");
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->use_tag = 1;
	t->tag_id = dependent;
	ASSERT_EQ(starpu_task_submit(t), 0);
	sleep_ms(50);
	EXPECT_EQ(g_flag, 0);
	EXPECT_EQ(starpu_task_nsubmitted(), 1);
	starpu_tag_notify_from_apps(app);
	ASSERT_EQ(starpu_tag_wait(dependent), 0);
	EXPECT_EQ(g_flag, 1);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

std::atomic<int> g_tag_runs[4];

void count_tag_run(void **, void *arg)
{
	g_tag_runs[(uintptr_t)arg]++;
}

starpu_task *tagged_task(starpu_codelet *cl, starpu_tag_t tag, uintptr_t index, const char *name)
{
	starpu_task *t = starpu_task_create();
	t->cl = cl;
	t->cl_arg = (void *)index;
	t->use_tag = 1;
	t->tag_id = tag;
	t->name = name;
	return t;
}

// A second task with the tag of a blocked one would replace it, and shutdown
// would then wait for the first forever: refused, the first still runs.
TEST_F(Deps, TagOfABlockedTaskIsNotReused)
{
	for (auto &r : g_tag_runs)
		r = 0;
	starpu_codelet cl = cpu_codelet(count_tag_run, 0, "tagged");
	starpu_tag_declare_deps(7101, 1, (starpu_tag_t)7100);
	starpu_task *first = tagged_task(&cl, 7101, 0, "first");
	ASSERT_EQ(starpu_task_submit(first), 0);
	starpu_task *second = tagged_task(&cl, 7101, 1, "second");
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_task_submit(second); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "[astrolabe] error: starpu_task_submit: task 'second' uses tag 7101, which task 'first' (job ")) << err;
	EXPECT_TRUE(contains(err, "Use another tag")) << err;
	EXPECT_EQ(starpu_task_nsubmitted(), 1); // nothing of the second was queued
	EXPECT_EQ(starpu_tag_get_task(7101), first);
	starpu_task_destroy(second);
	starpu_tag_notify_from_apps(7100);
	ASSERT_EQ(starpu_tag_wait(7101), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_tag_runs[0], 1);
	EXPECT_EQ(g_tag_runs[1], 0);
}

std::atomic<bool> g_release{false};

void wait_for_release(void **, void *)
{
	while (!g_release)
		sleep_ms(1);
}

// A tag without dependencies may be carried by several tasks at once, as in
// StarPU (its tag_example4): it is done when the first completes, the others
// still run, and it cannot be removed while one of them has not completed.
TEST_F(Deps, TagWithoutDependenciesIsSharedByTasksInFlight)
{
	for (auto &r : g_tag_runs)
		r = 0;
	g_release = false;
	starpu_codelet blocking = cpu_codelet(wait_for_release, 0, "blocking");
	starpu_codelet cl = cpu_codelet(count_tag_run, 0, "tagged");
	// On two workers: the second runs while the first is held.
	starpu_task *first = tagged_task(&blocking, 7200, 0, "running");
	first->execute_on_a_specific_worker = 1;
	first->workerid = 0;
	ASSERT_EQ(starpu_task_submit(first), 0);
	starpu_task *second = tagged_task(&cl, 7200, 1, "late");
	second->execute_on_a_specific_worker = 1;
	second->workerid = 1;
	std::string err = stderr_of([&] { ASSERT_EQ(starpu_task_submit(second), 0); });
	EXPECT_EQ(err, "");
	// The second completes while the first is held: the tag is done.
	ASSERT_EQ(starpu_tag_wait(7200), 0);
	EXPECT_EQ(g_tag_runs[1], 1);
	err = stderr_of([] { starpu_tag_remove(7200); });
	EXPECT_TRUE(contains(err, "starpu_tag_remove: tag 7200 is still in use")) << err;
	g_release = true;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	// Once both completed, it goes.
	err = stderr_of([] { starpu_tag_remove(7200); });
	EXPECT_EQ(err, "");
}

struct RegenTag
{
	std::atomic<int> runs{0};
	starpu_task *task = nullptr;
};

void regen_tag_callback(void *arg)
{
	auto *r = static_cast<RegenTag *>(arg);
	if (++r->runs == 3)
		r->task->regenerate = 0;
}

// A tag is free again once its task completed: a new task, a task after
// starpu_tag_remove(), a regenerated task all take it.
TEST_F(Deps, TagIsReusedOnceItsTaskCompleted)
{
	for (auto &r : g_tag_runs)
		r = 0;
	starpu_codelet cl = cpu_codelet(count_tag_run, 0, "tagged");
	std::string err = stderr_of([&] {
		ASSERT_EQ(starpu_task_submit(tagged_task(&cl, 7300, 0, "one")), 0);
		ASSERT_EQ(starpu_tag_wait(7300), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		ASSERT_EQ(starpu_task_submit(tagged_task(&cl, 7300, 1, "two")), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		starpu_tag_remove(7300);
		ASSERT_EQ(starpu_task_submit(tagged_task(&cl, 7300, 2, "three")), 0);
		ASSERT_EQ(starpu_tag_wait(7300), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	EXPECT_EQ(err, "");
	EXPECT_EQ(g_tag_runs[0], 1);
	EXPECT_EQ(g_tag_runs[1], 1);
	EXPECT_EQ(g_tag_runs[2], 1);

	RegenTag regen;
	starpu_task task;
	starpu_task_init(&task);
	regen.task = &task;
	task.cl = &cl;
	task.cl_arg = (void *)(uintptr_t)3;
	task.use_tag = 1;
	task.tag_id = 7301;
	task.regenerate = 1;
	task.callback_func = regen_tag_callback;
	task.callback_arg = &regen;
	err = stderr_of([&] {
		ASSERT_EQ(starpu_task_submit(&task), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	EXPECT_EQ(err, "");
	EXPECT_EQ(g_tag_runs[3], 3);
	starpu_task_clean(&task);
}

// A tag among its own dependencies is refused with one error naming it:
// nothing is declared, so its task runs instead of waiting forever.
TEST_F(Deps, TagDependingOnItselfIsRefused)
{
	std::string err = stderr_of([] { starpu_tag_declare_deps(7400, 2, (starpu_tag_t)7401, (starpu_tag_t)7400); });
	EXPECT_TRUE(contains(err, "[astrolabe] error: starpu_tag_declare_deps: tag 7400 is among its own dependencies")) << err;
	EXPECT_TRUE(contains(err, "remove tag 7400 from its dependency list")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

	for (auto &r : g_tag_runs)
		r = 0;
	starpu_codelet cl = cpu_codelet(count_tag_run, 0, "tagged");
	ASSERT_EQ(starpu_task_submit(tagged_task(&cl, 7400, 0, "self")), 0);
	ASSERT_TRUE(wait_until([] { return g_tag_runs[0].load() == 1; }, 3000)) << "the task of a refused self-dependency hangs";
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_tag_runs[0], 1);

	// The task's own dependency array, through starpu_tag_declare_deps_array.
	starpu_tag_t deps[] = {7402};
	err = stderr_of([&] { starpu_tag_declare_deps_array(7402, 1, deps); });
	EXPECT_TRUE(contains(err, "tag 7402 is among its own dependencies")) << err;
}

// starpu_tag_wait while the runtime is paused waits for starpu_resume(): said once.
TEST_F(Deps, TagWaitWhilePausedSaysSo)
{
	for (auto &r : g_tag_runs)
		r = 0;
	starpu_codelet cl = cpu_codelet(count_tag_run, 0, "tagged");
	starpu_pause();
	ASSERT_EQ(starpu_task_submit(tagged_task(&cl, 7460, 0, "paused")), 0);
	std::string err = stderr_of([&] {
		std::thread waiter = blocked_thread([] { EXPECT_EQ(starpu_tag_wait(7460), 0); });
		EXPECT_EQ(g_tag_runs[0], 0);
		starpu_resume();
		waiter.join();
	});
	EXPECT_EQ(err, "[astrolabe] warning: starpu_tag_wait: the runtime is paused (starpu_pause): no task runs, so this waits "
		       "until starpu_resume() is called, from another thread\n");
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_tag_runs[0], 1);
}

// A cycle of tag dependencies is declared, as in StarPU: its tasks wait
// until one of its tags is notified, which a warning naming the cycle says.
TEST_F(Deps, TagCycleIsDeclaredWithAWarning)
{
	std::string err = stderr_of([] {
		starpu_tag_declare_deps(7501, 1, (starpu_tag_t)7500);
		starpu_tag_declare_deps(7500, 1, (starpu_tag_t)7501);
	});
	EXPECT_TRUE(contains(err, "[astrolabe] warning: starpu_tag_declare_deps: tag 7500 closes the dependency cycle 7500 -> 7501 -> 7500 ")) << err;
	EXPECT_TRUE(contains(err, "starpu_tag_notify_from_apps")) << err;

	// Longer, and closed by one dependency among several.
	err = stderr_of([] {
		starpu_tag_declare_deps(7601, 1, (starpu_tag_t)7600);
		starpu_tag_declare_deps(7602, 1, (starpu_tag_t)7601);
		starpu_tag_declare_deps(7603, 2, (starpu_tag_t)7602, (starpu_tag_t)7601);
		starpu_tag_declare_deps(7600, 2, (starpu_tag_t)7699, (starpu_tag_t)7603);
	});
	EXPECT_TRUE(contains(err, "tag 7600 closes the dependency cycle 7600 -> 7603 -> 760")) << err;
	EXPECT_TRUE(contains(err, "-> 7600 (a -> b: a depends on b)")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

	// Declared: the pair's tasks wait for each other until the application notifies one tag.
	for (auto &r : g_tag_runs)
		r = 0;
	starpu_codelet cl = cpu_codelet(count_tag_run, 0, "tagged");
	ASSERT_EQ(starpu_task_submit(tagged_task(&cl, 7500, 0, "pair")), 0);
	ASSERT_EQ(starpu_task_submit(tagged_task(&cl, 7501, 1, "pair")), 0);
	EXPECT_EQ(g_tag_runs[0] + g_tag_runs[1], 0);
	starpu_tag_notify_from_apps(7501);
	ASSERT_EQ(starpu_tag_wait(7500), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_tag_runs[0], 1);
	EXPECT_EQ(g_tag_runs[1], 1);

	// A diamond is no cycle.
	err = stderr_of([] {
		starpu_tag_declare_deps(7701, 1, (starpu_tag_t)7700);
		starpu_tag_declare_deps(7702, 1, (starpu_tag_t)7700);
		starpu_tag_declare_deps(7703, 2, (starpu_tag_t)7701, (starpu_tag_t)7702);
	});
	EXPECT_EQ(err, "");
}

// StarPU's subgraph_repeat_regenerate_tag_cycle, small: four regenerated tasks
// whose tags form a loop (A -> B, C -> D -> A), started by notifying D. Each
// round runs each task once, in the tags' order, until each stops regenerating.
struct CycleTask
{
	starpu_task task;
	std::atomic<int> runs{0};   // callbacks
	std::atomic<int> execs{0};  // executions
	std::atomic<int> *order;    // the executions of the task it waits for, read when it runs
	std::atomic<int> late{0};
};
CycleTask g_cycle[4];
const int g_cycle_rounds = 20;

void cycle_run(void **, void *arg)
{
	auto *c = static_cast<CycleTask *>(arg);
	// A task of round r runs after its predecessor's run of round r (A: after D's of round r - 1).
	if (c->order->load() < c->execs.load() + (c == &g_cycle[0] ? 0 : 1))
		c->late++;
	c->execs++;
}

void cycle_callback(void *arg)
{
	auto *c = static_cast<CycleTask *>(arg);
	if (++c->runs == g_cycle_rounds)
		c->task.regenerate = 0;
}

TEST_F(Deps, RegeneratedTagCycleRunsEachRound)
{
	const starpu_tag_t a = 7801, b = 7802, c = 7803, d = 7804;
	static starpu_codelet cl = cpu_codelet(cycle_run, 0, "cycle");
	for (int i = 0; i < 4; i++) {
		CycleTask &t = g_cycle[i];
		t.runs = 0;
		t.execs = 0;
		t.late = 0;
		starpu_task_init(&t.task);
		t.task.cl = &cl;
		t.task.cl_arg = &t;
		t.task.regenerate = 1;
		t.task.use_tag = 1;
		t.task.tag_id = a + i;
		t.task.callback_func = cycle_callback;
		t.task.callback_arg = &t;
	}
	g_cycle[0].order = &g_cycle[3].execs;
	g_cycle[1].order = &g_cycle[0].execs;
	g_cycle[2].order = &g_cycle[0].execs;
	g_cycle[3].order = &g_cycle[1].execs;
	std::string err = stderr_of([&] {
		starpu_tag_declare_deps(b, 1, a);
		starpu_tag_declare_deps(c, 1, a);
		starpu_tag_declare_deps(d, 2, b, c);
		starpu_tag_declare_deps(a, 1, d);
	});
	EXPECT_TRUE(contains(err, "warning: starpu_tag_declare_deps: tag 7801 closes the dependency cycle 7801 -> 7804 -> 780")) << err;
	EXPECT_FALSE(contains(err, "error")) << err;
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(starpu_task_submit(&g_cycle[i].task), 0);
	starpu_tag_notify_restart_from_apps(d);
	EXPECT_TRUE(wait_until([] { return g_cycle[3].runs.load() == g_cycle_rounds; }, 60000))
		<< "rounds of A, B, C, D: " << g_cycle[0].runs << ", " << g_cycle[1].runs << ", " << g_cycle[2].runs << ", " << g_cycle[3].runs;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(g_cycle[i].runs, g_cycle_rounds) << "task " << i;
		EXPECT_EQ(g_cycle[i].late, 0) << "task " << i << " ran before its dependency's run of the same round";
		starpu_task_clean(&g_cycle[i].task);
	}
}

std::atomic<int> g_done{0};
std::atomic<int> g_done_seen{-1};

void slow_done(void **, void *arg)
{
	sleep_ms((unsigned)(uintptr_t)arg);
	g_done++;
}

void read_done(void **, void *)
{
	g_done_seen = g_done.load();
}

TEST_F(Deps, TagWithSeveralDependencies)
{
	g_done = 0;
	g_done_seen = -1;
	const starpu_tag_t a = 300, b = 301, c = 302, joined = 310;
	starpu_tag_declare_deps(joined, 3, a, b, c);
	starpu_codelet slow = cpu_codelet(slow_done, 0, "slow_done");
	starpu_codelet reader = cpu_codelet(read_done, 0, "read_done");
	starpu_task *j = starpu_task_create();
	j->cl = &reader;
	j->use_tag = 1;
	j->tag_id = joined;
	ASSERT_EQ(starpu_task_submit(j), 0);
	unsigned delays[3] = { 30, 5, 15 };
	starpu_tag_t tags[3] = { a, b, c };
	for (int i = 0; i < 3; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &slow;
		t->cl_arg = (void *)(uintptr_t)delays[i];
		t->use_tag = 1;
		t->tag_id = tags[i];
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_tag_wait(joined), 0);
	EXPECT_EQ(g_done_seen, 3);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

TEST_F(Deps, TagDeclareDepsArray)
{
	g_done = 0;
	g_done_seen = -1;
	starpu_tag_t deps[2] = { 400, 401 };
	starpu_tag_declare_deps_array(410, 2, deps);
	starpu_codelet slow = cpu_codelet(slow_done, 0, "slow_done");
	starpu_codelet reader = cpu_codelet(read_done, 0, "read_done");
	starpu_task *j = starpu_task_create();
	j->cl = &reader;
	j->use_tag = 1;
	j->tag_id = 410;
	ASSERT_EQ(starpu_task_submit(j), 0);
	for (starpu_tag_t tag : deps) {
		starpu_task *t = starpu_task_create();
		t->cl = &slow;
		t->cl_arg = (void *)(uintptr_t)10;
		t->use_tag = 1;
		t->tag_id = tag;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_tag_wait(410), 0);
	EXPECT_EQ(g_done_seen, 2);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

// ------------------------------------------------------ explicit task deps

TEST_F(Deps, TaskDepsSuccessorSubmittedFirst)
{
	g_done = 0;
	g_done_seen = -1;
	starpu_codelet slow = cpu_codelet(slow_done, 0, "pred");
	starpu_codelet reader = cpu_codelet(read_done, 0, "succ");
	starpu_task *pred = starpu_task_create();
	pred->cl = &slow;
	pred->cl_arg = (void *)(uintptr_t)10;
	starpu_task *succ = starpu_task_create();
	succ->cl = &reader;
	starpu_task *deps[1] = { pred };
	starpu_task_declare_deps_array(succ, 1, deps);
	ASSERT_EQ(starpu_task_submit(succ), 0);
	sleep_ms(30);
	EXPECT_EQ(g_done_seen, -1); // still waiting for pred, which is not even submitted
	ASSERT_EQ(starpu_task_submit(pred), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_done_seen, 1);
}

// Declared dependencies persist, as in StarPU: a static graph submitted again
// and again (successor first each round) keeps waiting for its predecessor.
std::atomic<int> g_round_pred{0}, g_round_succ_ok{0};

void round_pred(void **, void *)
{
	sleep_ms(1);
	g_round_pred++;
}

void round_succ(void **, void *arg)
{
	int round = (int)(uintptr_t)arg;
	if (g_round_pred.load() == round + 1)
		g_round_succ_ok++;
}

// A predecessor and a successor kept by the test (not detached), resubmitted round after round.
struct RoundTasks
{
	starpu_codelet pcl = cpu_codelet(round_pred, 0, "round_pred");
	starpu_codelet scl = cpu_codelet(round_succ, 0, "round_succ");
	starpu_task pred, succ;
	RoundTasks()
	{
		g_round_pred = 0;
		g_round_succ_ok = 0;
		starpu_task_init(&pred);
		starpu_task_init(&succ);
		pred.cl = &pcl;
		succ.cl = &scl;
		pred.detach = succ.detach = 0;
	}
	~RoundTasks()
	{
		starpu_task_clean(&succ);
		starpu_task_clean(&pred);
	}
};

TEST_F(Deps, DeclaredDepsPersistAcrossResubmission)
{
	RoundTasks t;
	starpu_task &pred = t.pred, &succ = t.succ;
	starpu_task *deps[1] = { &pred };
	starpu_task_declare_deps_array(&succ, 1, deps);
	const int rounds = 50;
	for (int round = 0; round < rounds; round++) {
		succ.cl_arg = (void *)(uintptr_t)round;
		ASSERT_EQ(starpu_task_submit(&succ), 0);
		ASSERT_EQ(starpu_task_submit(&pred), 0);
		ASSERT_EQ(starpu_task_wait(&succ), 0);
		ASSERT_EQ(starpu_task_wait(&pred), 0);
	}
	EXPECT_EQ(g_round_pred.load(), rounds);
	EXPECT_EQ(g_round_succ_ok.load(), rounds); // every round, the successor ran after that round's predecessor
}

// The predecessor completed before the declaration (it terminated with no successor
// listed on it, the fast way): the declaration counts that completion, and from then on
// each completion of the predecessor counts again, round after round.
TEST_F(Deps, DeclaredDepsOnACompletedPredecessorPersist)
{
	RoundTasks t;
	starpu_task &pred = t.pred, &succ = t.succ;
	ASSERT_EQ(starpu_task_submit(&pred), 0);
	ASSERT_EQ(starpu_task_wait(&pred), 0);
	starpu_task *deps[1] = { &pred };
	starpu_task_declare_deps_array(&succ, 1, deps);
	const int rounds = 20;
	for (int round = 1; round <= rounds; round++) {
		// Round r's successor uses the completion of the predecessor's round r - 1 (the first one's: before the declaration).
		succ.cl_arg = (void *)(uintptr_t)(round - 1);
		ASSERT_EQ(starpu_task_submit(&succ), 0);
		ASSERT_EQ(starpu_task_wait(&succ), 0);
		ASSERT_EQ(starpu_task_submit(&pred), 0);
		ASSERT_EQ(starpu_task_wait(&pred), 0);
	}
	// One more successor: it needs the last round's completion of the predecessor, counted after its termination.
	succ.cl_arg = (void *)(uintptr_t)rounds;
	ASSERT_EQ(starpu_task_submit(&succ), 0);
	ASSERT_EQ(starpu_task_wait(&succ), 0);
	EXPECT_EQ(g_round_pred.load(), rounds + 1);
	EXPECT_EQ(g_round_succ_ok.load(), rounds + 1);
}

TEST_F(Deps, TaskDepsVariadic)
{
	g_done = 0;
	g_done_seen = -1;
	starpu_codelet slow = cpu_codelet(slow_done, 0, "pred");
	starpu_codelet reader = cpu_codelet(read_done, 0, "succ");
	starpu_task *p1 = starpu_task_create(), *p2 = starpu_task_create(), *succ = starpu_task_create();
	p1->cl = p2->cl = &slow;
	p1->cl_arg = (void *)(uintptr_t)20;
	p2->cl_arg = (void *)(uintptr_t)5;
	succ->cl = &reader;
	starpu_task_declare_deps(succ, 2, p1, p2);
	ASSERT_EQ(starpu_task_submit(p1), 0);
	ASSERT_EQ(starpu_task_submit(succ), 0);
	ASSERT_EQ(starpu_task_submit(p2), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_done_seen, 2);
}

void done_callback(void *arg)
{
	static_cast<std::atomic<int> *>(arg)->store(1);
}

TEST_F(Deps, TaskDepsOnCompletedPredecessor)
{
	starpu_codelet cl = cpu_codelet(set_flag, 0, "pred");
	starpu_task pred;
	starpu_task_init(&pred);
	pred.cl = &cl;
	pred.detach = 0;
	ASSERT_EQ(starpu_task_submit(&pred), 0);
	ASSERT_EQ(starpu_task_wait(&pred), 0);

	std::atomic<int> succ_done{0};
	starpu_task *succ = starpu_task_create();
	succ->cl = &cl;
	succ->callback_func = done_callback;
	succ->callback_arg = &succ_done;
	starpu_task *deps[1] = { &pred };
	starpu_task_declare_deps_array(succ, 1, deps);
	ASSERT_EQ(starpu_task_submit(succ), 0);
	// Nothing to wait for: it runs at once.
	EXPECT_TRUE(wait_until([&] { return succ_done.load() == 1; }, 5000));
	if (succ_done == 1) {
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}
	starpu_task_clean(&pred);
}

// A dependency on a task the runtime already freed (destroy=1, completed) is
// refused with one error, and the successor runs instead of waiting forever.
// The freed task is never read by the test; the runtime tells it without
// reading freed memory (its recycled block, or AddressSanitizer's shadow).
TEST_F(Deps, TaskDepsOnFreedTaskAreRefused)
{
	starpu_codelet cl = cpu_codelet(set_flag, 0, "freed_pred");
	std::atomic<int> succ_done{0}, end_done{0};
	// Made before the predecessor is freed, so that neither reuses its block.
	starpu_task *succ = starpu_task_create();
	starpu_task *end_succ = starpu_task_create();
	starpu_task *pred = starpu_task_create(); // destroy = 1
	pred->cl = &cl;
	ASSERT_EQ(starpu_task_submit(pred), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0); // pred completed, and is freed
	succ->cl = &cl;
	succ->name = "succ";
	succ->callback_func = done_callback;
	succ->callback_arg = &succ_done;
	end_succ->cl = &cl;
	end_succ->name = "end_succ";
	end_succ->callback_func = done_callback;
	end_succ->callback_arg = &end_done;
	starpu_task *deps[1] = { pred };
	std::string err = stderr_of([&] {
		starpu_task_declare_deps_array(succ, 1, deps);
		starpu_task_declare_end_deps_array(end_succ, 1, deps);
	});
	EXPECT_TRUE(contains(err, "[astrolabe] error: starpu_task_declare_deps_array: dependency 0 of task 'succ' was already freed")) << err;
	EXPECT_TRUE(contains(err, "[astrolabe] error: starpu_task_declare_end_deps_array: dependency 0 of task 'end_succ' was already freed")) << err;
	EXPECT_TRUE(contains(err, "set its destroy to 0")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << err;
	ASSERT_EQ(starpu_task_submit(succ), 0);
	ASSERT_EQ(starpu_task_submit(end_succ), 0);
	ASSERT_TRUE(wait_until([&] { return succ_done.load() == 1 && end_done.load() == 1; }, 3000))
		<< "a task depending on a freed task hangs";
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

// A task cannot end after itself: said, and ignored.
TEST_F(Deps, EndDependencyOnItselfIsRefused)
{
	starpu_codelet cl = cpu_codelet(set_flag, 0, "self_end");
	std::atomic<int> done{0};
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->name = "self_end";
	t->callback_func = done_callback;
	t->callback_arg = &done;
	std::string err = stderr_of([&] { starpu_task_declare_end_deps(t, 1, t); });
	EXPECT_TRUE(contains(err, "starpu_task_declare_end_deps_array: dependency 0 of task 'self_end' is the task itself: ignored")) << err;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_TRUE(wait_until([&] { return done.load() == 1; }, 3000)) << "a task ending after itself hangs";
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

struct EndDeps
{
	std::atomic<int> b_done{0};
	std::atomic<int> b_done_at_a_callback{-1};
	std::atomic<int> a_ran{0};
};

void end_a(void **, void *arg)
{
	static_cast<EndDeps *>(arg)->a_ran = 1;
}

void end_a_callback(void *arg)
{
	auto *e = static_cast<EndDeps *>(arg);
	e->b_done_at_a_callback = e->b_done.load();
}

void end_b(void **, void *arg)
{
	sleep_ms(50);
	static_cast<EndDeps *>(arg)->b_done = 1;
}

TEST_F(Deps, DeclareEndDeps)
{
	EndDeps e;
	starpu_codelet cla = cpu_codelet(end_a, 0, "end_a");
	starpu_codelet clb = cpu_codelet(end_b, 0, "end_b");
	starpu_task a, *b = starpu_task_create();
	starpu_task_init(&a);
	a.cl = &cla;
	a.cl_arg = &e;
	a.callback_func = end_a_callback;
	a.callback_arg = &e;
	a.detach = 0;
	b->cl = &clb;
	b->cl_arg = &e;
	starpu_task_declare_end_deps(&a, 1, b);
	ASSERT_EQ(starpu_task_submit(&a), 0);
	ASSERT_EQ(starpu_task_submit(b), 0);
	ASSERT_EQ(starpu_task_wait(&a), 0);
	// a's execution did not wait for b, its completion did.
	EXPECT_EQ(e.a_ran, 1);
	EXPECT_EQ(e.b_done, 1);
	EXPECT_EQ(e.b_done_at_a_callback, 1);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_task_clean(&a);
}

// As in StarPU, the epilogue callback runs before the task's successors are released (a
// successor never sees it unfinished, however long it takes), the callback after them.
struct EpilogueOrder
{
	std::atomic<bool> epilogue_done{false};
	std::atomic<int> successor_saw{-1};
	std::atomic<int> callbacks{0};
};

void slow_epilogue(void *arg)
{
	auto *o = static_cast<EpilogueOrder *>(arg);
	std::this_thread::sleep_for(std::chrono::milliseconds(30));
	EXPECT_NE(starpu_task_get_current(), nullptr) << "the epilogue runs as its task";
	o->epilogue_done = true;
	o->callbacks++;
}

void plain_callback(void *arg)
{
	static_cast<EpilogueOrder *>(arg)->callbacks++;
}

void no_work(void **, void *) {}

void see_epilogue(void **, void *arg)
{
	auto *o = static_cast<EpilogueOrder *>(arg);
	o->successor_saw = o->epilogue_done ? 1 : 0;
}

TEST_F(Deps, EpilogueCallbackRunsBeforeSuccessors)
{
	EpilogueOrder order;
	starpu_codelet first = cpu_codelet(no_work, 0, "epilogue_first");
	starpu_codelet second = cpu_codelet(see_epilogue, 0, "epilogue_second");
	starpu_task *a = starpu_task_create();
	a->cl = &first;
	a->epilogue_callback_func = slow_epilogue;
	a->epilogue_callback_arg = &order;
	a->callback_func = plain_callback;
	a->callback_arg = &order;
	a->detach = 0;
	starpu_task *b = starpu_task_create();
	b->cl = &second;
	b->cl_arg = &order;
	b->detach = 0;
	starpu_task_declare_deps(b, 1, a);
	ASSERT_EQ(starpu_task_submit(b), 0);
	ASSERT_EQ(starpu_task_submit(a), 0);
	ASSERT_EQ(starpu_task_wait(b), 0);
	ASSERT_EQ(starpu_task_wait(a), 0);
	EXPECT_EQ(order.successor_saw.load(), 1) << "the successor ran before the epilogue callback ended";
	EXPECT_EQ(order.callbacks.load(), 2) << "the epilogue and the callback each run once";
	// starpu_task_wait() destroyed both (starpu_task_create() sets destroy).
}

// StarPU's end dependencies as its programs use them: a task built with STARPU_TASK_END_DEPS_ARRAY
// ends (its wait returns) only after the task given, submitted after it, has run; and an end
// dependency declared on a task already waited for and destroyed holds nothing (task_end_dep).
std::atomic<int> g_end_dep_ran{0};

void end_dep_slow(void **, void *)
{
	std::this_thread::sleep_for(std::chrono::milliseconds(50));
	g_end_dep_ran = 1;
}

TEST_F(Deps, EndDepsArrayOfTaskInsertHoldTheTaskUntilTheyRan)
{
	g_end_dep_ran = 0;
	starpu_codelet quick = cpu_codelet(no_work, 0, "end_dep_quick");
	starpu_codelet slow = cpu_codelet(end_dep_slow, 0, "end_dep_slow");
	starpu_task *b = starpu_task_create();
	b->cl = &slow;
	starpu_task *deps[1] = { b };
	starpu_task *a = starpu_task_build(&quick, STARPU_TASK_END_DEPS_ARRAY, 1, deps, 0);
	ASSERT_NE(a, nullptr);
	a->detach = 0;
	ASSERT_EQ(starpu_task_submit(a), 0);
	ASSERT_EQ(starpu_task_submit(b), 0);
	ASSERT_EQ(starpu_task_wait(a), 0);
	EXPECT_EQ(g_end_dep_ran.load(), 1) << "the task ended before its end dependency ran";
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

TEST_F(Deps, EndDepOnATaskAlreadyWaitedForAndDestroyed)
{
	starpu_codelet quick = cpu_codelet(no_work, 0, "end_dep_quick");
	starpu_task *done = starpu_task_create();
	done->cl = &quick;
	done->detach = 0;
	done->destroy = 0;
	ASSERT_EQ(starpu_task_submit(done), 0);
	ASSERT_EQ(starpu_task_wait(done), 0);
	starpu_task *t = starpu_task_create();
	t->cl = &quick;
	t->detach = 0;
	starpu_task_declare_end_deps(t, 1, done);
	starpu_task_destroy(done);
	ASSERT_EQ(starpu_task_submit(t), 0);
	EXPECT_EQ(starpu_task_wait(t), 0);
}

// ------------------------------------------------------ implicit data deps

struct Shared
{
	int value = 0;
	std::atomic<int> observed{-1};
	std::atomic<int> reader_done{0};
	std::atomic<int> started{0};
	std::atomic<int> overlapped{0};
};

void writer_slow_42(void **buffers, void *)
{
	sleep_ms(20);
	*(int *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 42;
}

void reader_observe(void **buffers, void *arg)
{
	static_cast<Shared *>(arg)->observed = *(int *)STARPU_VARIABLE_GET_PTR(buffers[0]);
}

TEST_F(Deps, ReadAfterWrite)
{
	Shared s;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&s.value, sizeof(int));
	starpu_codelet w = cpu_codelet(writer_slow_42, 1, "writer");
	w.modes[0] = STARPU_W;
	starpu_codelet r = cpu_codelet(reader_observe, 1, "reader");
	r.modes[0] = STARPU_R;
	starpu_task *tw = starpu_task_create(), *tr = starpu_task_create();
	tw->cl = &w;
	tw->handles[0] = h;
	tr->cl = &r;
	tr->cl_arg = &s;
	tr->handles[0] = h;
	ASSERT_EQ(starpu_task_submit(tw), 0);
	ASSERT_EQ(starpu_task_submit(tr), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(s.observed, 42);
	starpu_data_unregister(h);
}

void reader_slow_done(void **, void *arg)
{
	sleep_ms(20);
	static_cast<Shared *>(arg)->reader_done = 1;
}

void writer_check_reader(void **buffers, void *arg)
{
	auto *s = static_cast<Shared *>(arg);
	s->observed = s->reader_done.load();
	*(int *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 7;
}

TEST_F(Deps, WriteAfterRead)
{
	Shared s;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&s.value, sizeof(int));
	starpu_codelet r = cpu_codelet(reader_slow_done, 1, "reader");
	r.modes[0] = STARPU_R;
	starpu_codelet w = cpu_codelet(writer_check_reader, 1, "writer");
	w.modes[0] = STARPU_W;
	starpu_task *tr = starpu_task_create(), *tw = starpu_task_create();
	tr->cl = &r;
	tr->cl_arg = &s;
	tr->handles[0] = h;
	tw->cl = &w;
	tw->cl_arg = &s;
	tw->handles[0] = h;
	ASSERT_EQ(starpu_task_submit(tr), 0);
	ASSERT_EQ(starpu_task_submit(tw), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(s.observed, 1);
	starpu_data_unregister(h);
	EXPECT_EQ(s.value, 7);
}

void writer_first(void **buffers, void *)
{
	sleep_ms(20);
	*(int *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 1;
}

void writer_second(void **buffers, void *arg)
{
	int *p = (int *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	static_cast<Shared *>(arg)->observed = *p;
	*p = 2;
}

TEST_F(Deps, WriteAfterWrite)
{
	Shared s;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&s.value, sizeof(int));
	starpu_codelet w1 = cpu_codelet(writer_first, 1, "w1");
	w1.modes[0] = STARPU_W;
	starpu_codelet w2 = cpu_codelet(writer_second, 1, "w2");
	w2.modes[0] = STARPU_W;
	starpu_task *t1 = starpu_task_create(), *t2 = starpu_task_create();
	t1->cl = &w1;
	t1->handles[0] = h;
	t2->cl = &w2;
	t2->cl_arg = &s;
	t2->handles[0] = h;
	ASSERT_EQ(starpu_task_submit(t1), 0);
	ASSERT_EQ(starpu_task_submit(t2), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(s.observed, 1);
	starpu_data_unregister(h);
	EXPECT_EQ(s.value, 2);
}

// Each of two tasks announces itself and waits (up to 1 s) for the other:
// both see the other only if they really run at the same time.
void meet_the_other(void **, void *arg)
{
	auto *s = static_cast<Shared *>(arg);
	s->started++;
	if (wait_until([&] { return s->started.load() >= 2; }, 1000))
		s->overlapped++;
}

TEST(DepsEnv, ConcurrentReadersOverlap)
{
	ScopedEnv ncpu("STARPU_NCPU", "2");
	Runtime rt(static_cast<starpu_conf *>(nullptr));
	ASSERT_TRUE(rt.ok());
	ASSERT_EQ(starpu_worker_get_count(), 2u);
	Shared s;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&s.value, sizeof(int));
	starpu_codelet r = cpu_codelet(meet_the_other, 1, "reader");
	r.modes[0] = STARPU_R;
	for (int i = 0; i < 2; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &r;
		t->cl_arg = &s;
		t->handles[0] = h;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(s.started, 2);
	EXPECT_EQ(s.overlapped, 2);
	starpu_data_unregister(h);
}

// Without sequential consistency a later writer does not wait for an earlier
// one: the first writer is held back by a tag the application notifies only
// once the second one has run. (Two writers still never run at the same
// time; only the submission order stops mattering.)
struct Overtake
{
	std::atomic<int> next{0};
	std::atomic<int> first_at{-1};
	std::atomic<int> second_at{-1};
};

void overtake_first(void **, void *arg)
{
	auto *o = static_cast<Overtake *>(arg);
	o->first_at = o->next++;
}

void overtake_second(void **, void *arg)
{
	auto *o = static_cast<Overtake *>(arg);
	o->second_at = o->next++;
}

// Submits the held-back writer then the free one; returns whether the second ran while the first was held.
bool second_writer_overtakes(starpu_data_handle_t h, Overtake &o, bool task_consistency, starpu_tag_t base)
{
	static starpu_codelet first = cpu_codelet(overtake_first, 1, "first_writer");
	static starpu_codelet second = cpu_codelet(overtake_second, 1, "second_writer");
	first.modes[0] = STARPU_RW;
	second.modes[0] = STARPU_RW;
	const starpu_tag_t gate = base, held = base + 1;
	starpu_tag_declare_deps(held, 1, gate);
	starpu_task *t1 = starpu_task_create(), *t2 = starpu_task_create();
	t1->cl = &first;
	t1->use_tag = 1;
	t1->tag_id = held;
	t2->cl = &second;
	for (starpu_task *t : { t1, t2 }) {
		t->cl_arg = &o;
		t->handles[0] = h;
		t->sequential_consistency = task_consistency;
	}
	EXPECT_EQ(starpu_task_submit(t1), 0);
	EXPECT_EQ(starpu_task_submit(t2), 0);
	bool overtook = wait_until([&] { return o.second_at.load() >= 0; }, task_consistency && starpu_data_get_sequential_consistency_flag(h) ? 50 : 5000);
	EXPECT_EQ(o.first_at, -1); // still held by the gate
	starpu_tag_notify_from_apps(gate);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	return overtook;
}

TEST_F(Deps, HandleWithoutSequentialConsistency)
{
	int value = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(int));
	EXPECT_EQ(starpu_data_get_sequential_consistency_flag(h), 1u);
	starpu_data_set_sequential_consistency_flag(h, 0);
	EXPECT_EQ(starpu_data_get_sequential_consistency_flag(h), 0u);
	Overtake o;
	EXPECT_TRUE(second_writer_overtakes(h, o, true, 8000));
	EXPECT_EQ(o.second_at, 0);
	EXPECT_EQ(o.first_at, 1);
	starpu_data_unregister(h);
}

TEST_F(Deps, TaskWithoutSequentialConsistency)
{
	int value = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(int));
	Overtake o;
	EXPECT_TRUE(second_writer_overtakes(h, o, false, 8100));
	EXPECT_EQ(o.second_at, 0);
	EXPECT_EQ(o.first_at, 1);
	starpu_data_unregister(h);
}

TEST_F(Deps, WritersKeepSubmissionOrderWithConsistency)
{
	// The control case: the second writer waits for the held-back first one.
	int value = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(int));
	Overtake o;
	EXPECT_FALSE(second_writer_overtakes(h, o, true, 8200));
	EXPECT_EQ(o.first_at, 0);
	EXPECT_EQ(o.second_at, 1);
	starpu_data_unregister(h);
}

struct Chain
{
	std::atomic<int> in_flight{0};
	std::atomic<int> overlaps{0};
};

void increment(void **buffers, void *arg)
{
	auto *c = static_cast<Chain *>(arg);
	if (c->in_flight++ != 0)
		c->overlaps++;
	int *p = (int *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	*p = *p + 1;
	c->in_flight--;
}

TEST_F(Deps, ChainOfReadWriteTasks)
{
	Chain c;
	int value = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(int));
	starpu_codelet cl = cpu_codelet(increment, 1, "increment");
	cl.modes[0] = STARPU_RW;
	for (int i = 0; i < 1000; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = &c;
		t->handles[0] = h;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	EXPECT_EQ(value, 1000);
	starpu_data_release(h);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(c.overlaps, 0);
	starpu_data_unregister(h);
	EXPECT_EQ(value, 1000);
}

} // namespace
