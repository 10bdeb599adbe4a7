// SPDX-License-Identifier: LGPL-2.1-or-later
// Every scheduling policy of plugins/policies/ through the same checks: each task
// runs exactly once, pinned tasks and can_execute are honoured, priorities
// order the work where the policy promises it, equal priorities run first in,
// first out, dependencies hold, tasks submitted from tasks run, idle workers
// wake up for new work, and where workers steal, an idle one takes what waits
// for a busy one.
#include "helpers.h"
#include <astrolabe/plugin.h>

#include <algorithm>
#include <mutex>
#include <random>

using namespace astro_test;

namespace {

class Policy : public ::testing::TestWithParam<const char *>
{
protected:
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}

	// Starts the policy under test; skips the test when this build lacks it.
	void start(starpu_conf conf)
	{
		conf.sched_policy_name = GetParam();
		conf.precedence_over_environment_variables = 1;
		int ret = -1;
		std::string err = stderr_of([&] { ret = starpu_init(&conf); });
		ASSERT_EQ(ret, 0) << err;
		if (policy_name() != GetParam()) {
			starpu_shutdown();
			GTEST_SKIP() << "policy " << GetParam() << " is not built here: " << err;
		}
	}
	void start(int ncpus) { start(conf_with_ncpus(ncpus)); }

	ScopedEnv sched_{"STARPU_SCHED", nullptr};
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
	ScopedEnv silent_{"STARPU_SILENT", nullptr};
};

// Starts the policy or leaves the test (skipped or failed).
#define START_OR_RETURN(arg) \
	do { \
		start(arg); \
		if (IsSkipped() || HasFatalFailure()) \
			return; \
	} while (0)

std::string policy_param_name(const testing::TestParamInfo<const char *> &info)
{
	std::string name = info.param;
	std::replace(name.begin(), name.end(), '-', '_');
	return name;
}

// One worker, the global context's priorities min..max.
starpu_conf conf_one_worker_priorities(int min, int max)
{
	starpu_conf conf = conf_with_ncpus(1);
	conf.global_sched_ctx_min_priority = min;
	conf.global_sched_ctx_max_priority = max;
	return conf;
}

// The policies whose queues are ordered by priority (one worker runs the highest first).
bool promises_priorities(const std::string &policy)
{
	for (const char *p : { "prio", "lws", "dmdas", "dmdap", "modular-prio", "modular-prio-prefetching", "modular-random-prio",
			       "modular-heteroprio" })
		if (policy == p)
			return true;
	return false;
}

// ------------------------------------------------------------ run once

struct Hits
{
	std::vector<std::atomic<int>> count;
	std::atomic<int> wrong_worker{0};
	explicit Hits(size_t n) : count(n) {}
};

Hits *g_hits;

void hit(void **, void *arg)
{
	(*g_hits).count[(uintptr_t)arg]++;
}

TEST_P(Policy, EveryTaskRunsOnce)
{
	for (int ncpus : { 1, 2 }) {
		SCOPED_TRACE(ncpus);
		START_OR_RETURN(ncpus);
		ASSERT_EQ(starpu_worker_get_count(), (unsigned)ncpus);
		const unsigned n = 2000;
		Hits hits(n);
		g_hits = &hits;
		starpu_codelet cl = cpu_codelet(hit, 0, "hit");
		for (unsigned i = 0; i < n; i++)
			ASSERT_EQ(submit_detached(&cl, (void *)(uintptr_t)i, (int)(i % 11) - 5), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		unsigned wrong = 0;
		for (auto &c : hits.count)
			wrong += c != 1;
		EXPECT_EQ(wrong, 0u);
		unsigned long total = 0;
		for (int w = 0; w < ncpus; w++)
			total += cl.per_worker_stats[w];
		EXPECT_EQ(total, (unsigned long)n);
		EXPECT_EQ(starpu_task_nsubmitted(), 0);
		starpu_shutdown();
		g_hits = nullptr;
	}
}

// A disabled worker (starpu.worker.w_enable_worker_knob = 0) gets no new task: every task runs on the other one.
TEST_P(Policy, DisabledWorkerGetsNoNewTask)
{
	START_OR_RETURN(2);
	int scope = starpu_perf_knob_scope_name_to_id("per_worker");
	int enable = starpu_perf_knob_name_to_id((starpu_perf_knob_scope)scope, "starpu.worker.w_enable_worker_knob");
	ASSERT_GE(enable, 0);
	starpu_perf_knob_set_per_worker_int32_value(enable, 0, 0);
	const unsigned n = 200;
	Hits hits(n);
	g_hits = &hits;
	starpu_codelet cl = cpu_codelet(hit, 0, "disabled");
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(submit_detached(&cl, (void *)(uintptr_t)i), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(cl.per_worker_stats[0], 0u);
	EXPECT_EQ(cl.per_worker_stats[1], (unsigned long)n);
	starpu_perf_knob_set_per_worker_int32_value(enable, 0, 1);
	g_hits = nullptr;
}

// ---------------------------------------------------------- placement

struct Placement
{
	std::atomic<int> runs{0};
	std::atomic<int> wrong{0};
	std::atomic<int> on_worker0{0};
};

void check_pinned(void **, void *arg)
{
	auto *p = static_cast<Placement *>(arg);
	if (starpu_worker_get_id() != (int)starpu_task_get_current()->workerid)
		p->wrong++;
	p->runs++;
}

TEST_P(Policy, PinnedTasksRunOnTheirWorker)
{
	START_OR_RETURN(2);
	Placement p;
	starpu_codelet cl = cpu_codelet(check_pinned, 0, "pinned");
	const int n = 300;
	for (int i = 0; i < n; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = &p;
		t->execute_on_a_specific_worker = 1;
		t->workerid = (unsigned)(i % 3 == 0 ? 0 : 1);
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(p.runs, n);
	EXPECT_EQ(p.wrong, 0);
	EXPECT_EQ(cl.per_worker_stats[0], 100ul);
	EXPECT_EQ(cl.per_worker_stats[1], 200ul);
}

int not_on_worker0(unsigned workerid, struct starpu_task *, unsigned)
{
	return workerid != 0;
}

void record_not0(void **, void *arg)
{
	auto *p = static_cast<Placement *>(arg);
	if (starpu_worker_get_id() == 0)
		p->on_worker0++;
	p->runs++;
}

TEST_P(Policy, CanExecuteIsHonoured)
{
	START_OR_RETURN(2);
	Placement p;
	starpu_codelet cl = cpu_codelet(record_not0, 0, "not_on_0");
	cl.can_execute = not_on_worker0;
	const int n = 400;
	std::string err = stderr_of([&] {
		for (int i = 0; i < n; i++)
			ASSERT_EQ(submit_detached(&cl, &p), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	EXPECT_EQ(p.runs, n);
	EXPECT_EQ(p.on_worker0, 0);
	EXPECT_EQ(cl.per_worker_stats[0], 0ul);
	EXPECT_EQ(cl.per_worker_stats[1], (unsigned long)n);
	// The policy itself never handed such a task to worker 0 (the kernel would complain).
	EXPECT_FALSE(contains(err, "cannot run it")) << err;
}

// ---------------------------------------------------------- priorities

std::mutex g_order_lock;
std::vector<int> g_order;

void record_priority(void **, void *)
{
	std::lock_guard<std::mutex> lock(g_order_lock);
	g_order.push_back(starpu_task_get_current()->priority);
}

TEST_P(Policy, PrioritiesOrderTheQueue)
{
	const std::string policy = GetParam();
	if (!promises_priorities(policy))
		GTEST_SKIP() << policy << " promises no priority order";
	START_OR_RETURN(conf_one_worker_priorities(0, 9));
	ASSERT_EQ(starpu_worker_get_count(), 1u);
	ASSERT_EQ(starpu_sched_get_min_priority(), 0);
	ASSERT_EQ(starpu_sched_get_max_priority(), 9);

	std::vector<int> prios(10);
	for (int i = 0; i < 10; i++)
		prios[i] = i;
	std::mt19937 rng(12345);
	std::shuffle(prios.begin(), prios.end(), rng);
	g_order.clear();
	starpu_codelet cl = cpu_codelet(record_priority, 0, "prio");
	{
		// The worker is held in a task while the others queue up (no timing involved).
		Gate gate(1);
		ASSERT_TRUE(gate.close());
		for (int prio : prios)
			ASSERT_EQ(submit_detached(&cl, nullptr, prio), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::vector<int> expected = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 };
	EXPECT_EQ(g_order, expected);
}

// ------------------------------------------- first in, first out among equals

std::mutex g_seq_lock;
std::vector<int> g_seq;

void record_seq(void **, void *arg)
{
	std::lock_guard<std::mutex> lock(g_seq_lock);
	g_seq.push_back((int)(intptr_t)arg);
}

size_t seq_size()
{
	std::lock_guard<std::mutex> lock(g_seq_lock);
	return g_seq.size();
}

// Submits tasks 0..n-1 with priorities prio(i) while the workers are held
// (what is submitted then stays queued), lets worker 0 alone run them, and
// returns the order it ran them in.
template <typename Prio> std::vector<int> run_queued_on_worker0(unsigned nworkers, int n, Prio prio)
{
	static starpu_codelet cl = cpu_codelet(record_seq, 0, "seq");
	g_seq.clear();
	Gate others([&] {
		std::vector<int> ids;
		for (unsigned w = 1; w < nworkers; w++)
			ids.push_back((int)w);
		return ids;
	}());
	{
		Gate worker0(1);
		EXPECT_TRUE(worker0.close());
		EXPECT_TRUE(others.close());
		for (int i = 0; i < n; i++)
			EXPECT_EQ(submit_detached(&cl, (void *)(intptr_t)i, prio(i)), 0);
	}
	// Worker 0 runs the queue; the others are still held.
	EXPECT_TRUE(wait_until([&] { return seq_size() == (size_t)n; }, 20000)) << "ran " << seq_size() << " of " << n;
	others.open();
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	return g_seq;
}

std::vector<int> iota(int n)
{
	std::vector<int> v(n);
	for (int i = 0; i < n; i++)
		v[i] = i;
	return v;
}

// One worker: whatever the policy, tasks of equal priority run in the order they were submitted.
TEST_P(Policy, EqualPrioritiesRunFirstInFirstOut)
{
	START_OR_RETURN(1);
	const int n = 64;
	EXPECT_EQ(run_queued_on_worker0(1, n, [](int) { return 0; }), iota(n));
	// Any other common priority too.
	EXPECT_EQ(run_queued_on_worker0(1, n, [](int) { return starpu_sched_get_max_priority(); }), iota(n));
}

// A central queue keeps that order with other workers around (eager, prio).
TEST_P(Policy, EqualPrioritiesRunFirstInFirstOutFromTheCentralQueue)
{
	const std::string policy = GetParam();
	if (policy != "eager" && policy != "prio" && policy != "modular-eager" && policy != "modular-prio")
		GTEST_SKIP() << policy << " has per-worker queues: with several workers, order is kept per queue only";
	START_OR_RETURN(2);
	const int n = 64;
	EXPECT_EQ(run_queued_on_worker0(2, n, [](int) { return 0; }), iota(n));
}

// Where priorities order the queue, equal priorities keep their submission order within a level.
TEST_P(Policy, PrioritiesThenSubmissionOrder)
{
	const std::string policy = GetParam();
	if (!promises_priorities(policy))
		GTEST_SKIP() << policy << " promises no priority order";
	START_OR_RETURN(1);
	const int n = 60;
	auto prio = [](int i) { return (i * 7) % 3; };
	std::vector<int> expected = iota(n);
	std::stable_sort(expected.begin(), expected.end(), [&](int a, int b) { return prio(a) > prio(b); });
	EXPECT_EQ(run_queued_on_worker0(1, n, prio), expected);
}

// A priority range wider than a queue's buckets makes neighbouring levels share
// a bucket, kept sorted: tasks queued at once, all of one priority, behind
// lower ones of their bucket still go first (lws splices such a batch whole,
// unless the bucket's last task has a lower priority).
struct Latch
{
	std::atomic<int> started{0}, open{0};
};

void latch_wait(void **, void *arg)
{
	auto *l = static_cast<Latch *>(arg);
	l->started = 1;
	while (!l->open.load())
		sleep_ms(1);
}

TEST_P(Policy, WidePriorityRangeKeepsOrderAcrossBatches)
{
	const std::string policy = GetParam();
	if (!promises_priorities(policy))
		GTEST_SKIP() << policy << " promises no priority order";
	if (policy == "modular-heteroprio")
		GTEST_SKIP() << policy << " hands the worker its next tasks ahead: a later batch cannot pass them";
	START_OR_RETURN(conf_one_worker_priorities(0, 99999));
	static starpu_codelet latch_cl = cpu_codelet(latch_wait, 0, "latch");
	static starpu_codelet seq_cl = cpu_codelet(record_seq, 0, "seq");
	g_seq.clear();
	Latch first, second;
	ASSERT_EQ(submit_detached(&latch_cl, &first, 0), 0);
	ASSERT_TRUE(wait_until([&] { return first.started.load() == 1; }, 20000));
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(submit_detached(&seq_cl, (void *)(intptr_t)i, 2), 0);
	ASSERT_EQ(submit_detached(&latch_cl, &second, 3), 0);
	first.open = 1;
	// The worker holds the second latch; tasks 0-2 (priority 2) wait in its queue.
	ASSERT_TRUE(wait_until([&] { return second.started.load() == 1; }, 20000));
	for (int i = 3; i < 6; i++)
		ASSERT_EQ(submit_detached(&seq_cl, (void *)(intptr_t)i, 5), 0);
	second.open = 1;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_seq, (std::vector<int>{ 3, 4, 5, 0, 1, 2 }));
}

// Where workers steal (ws, lws), an idle worker takes what waits for a busy
// one, even what the application thread handed that worker a moment ago (its
// queue's inbox, which the thief moves into the queue first).
void count_on_worker1(void **, void *arg)
{
	auto *p = static_cast<Placement *>(arg);
	if (starpu_worker_get_id() != 1)
		p->wrong++;
	p->runs++;
}

TEST_P(Policy, AnIdleWorkerStealsWhatWaitsForABusyOne)
{
	const std::string policy = GetParam();
	if (policy != "ws" && policy != "lws")
		GTEST_SKIP() << policy << " has no per-worker queues to steal from";
	START_OR_RETURN(2);
	Placement p;
	starpu_codelet cl = cpu_codelet(count_on_worker1, 0, "stolen");
	const int n = 40;
	Gate busy(std::vector<int>{ 0 });
	{
		Gate held(std::vector<int>{ 1 });
		ASSERT_TRUE(busy.close());
		ASSERT_TRUE(held.close());
		// Both workers are busy: round-robin hands half of these to each.
		for (int i = 0; i < n; i++)
			ASSERT_EQ(submit_detached(&cl, &p), 0);
	}
	// Worker 1 runs its half, then steals worker 0's while worker 0 is still held.
	EXPECT_TRUE(wait_until([&] { return p.runs.load() == n; }, 20000)) << "ran " << p.runs.load() << " of " << n;
	EXPECT_EQ(p.wrong.load(), 0);
	busy.open();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

// -------------------------------------------------------- dependencies

struct Guarded
{
	int value = 0;
	std::atomic<int> in_flight{0};
	std::atomic<int> overlaps{0};
	std::atomic<int> stale_reads{0};
};

void guarded_increment(void **buffers, void *arg)
{
	auto *g = static_cast<Guarded *>(arg);
	if (g->in_flight++ != 0)
		g->overlaps++;
	int *p = (int *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	*p += 1;
	g->in_flight--;
}

struct ReadCheck
{
	Guarded *g;
	int expected;
};

void check_read(void **buffers, void *arg)
{
	auto *rc = static_cast<ReadCheck *>(arg);
	if (*(int *)STARPU_VARIABLE_GET_PTR(buffers[0]) != rc->expected)
		rc->g->stale_reads++;
}

TEST_P(Policy, ImplicitDependenciesHold)
{
	START_OR_RETURN(2);
	Guarded g;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&g.value, sizeof(int));
	starpu_codelet inc = cpu_codelet(guarded_increment, 1, "inc");
	inc.modes[0] = STARPU_RW;
	starpu_codelet rd = cpu_codelet(check_read, 1, "read");
	rd.modes[0] = STARPU_R;
	const int rounds = 100, readers = 4;
	std::vector<ReadCheck> checks(rounds * readers);
	for (int r = 0; r < rounds; r++) {
		starpu_task *t = starpu_task_create();
		t->cl = &inc;
		t->cl_arg = &g;
		t->handles[0] = h;
		ASSERT_EQ(starpu_task_submit(t), 0);
		for (int k = 0; k < readers; k++) {
			ReadCheck &rc = checks[r * readers + k];
			rc = { &g, r + 1 };
			starpu_task *tr = starpu_task_create();
			tr->cl = &rd;
			tr->cl_arg = &rc;
			tr->handles[0] = h;
			ASSERT_EQ(starpu_task_submit(tr), 0);
		}
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(g.value, rounds);
	EXPECT_EQ(g.overlaps, 0);
	EXPECT_EQ(g.stale_reads, 0);
}

// ------------------------------------------------ tasks from tasks, wake-up

std::atomic<int> g_children{0};
std::atomic<int> g_child_submit_failures{0};

void child(void **, void *)
{
	g_children++;
}

void parent(void **, void *)
{
	static starpu_codelet child_cl = cpu_codelet(child, 0, "child");
	for (int i = 0; i < 10; i++)
		if (submit_detached(&child_cl) != 0)
			g_child_submit_failures++;
}

TEST_P(Policy, TasksSubmittedFromTasksRun)
{
	START_OR_RETURN(2);
	g_children = 0;
	g_child_submit_failures = 0;
	starpu_codelet cl = cpu_codelet(parent, 0, "parent");
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_child_submit_failures, 0);
	EXPECT_EQ(g_children, 1000);
}

void set_flag(void **, void *arg)
{
	static_cast<std::atomic<int> *>(arg)->store(1);
}

TEST_P(Policy, IdleWorkersWakeUpForNewWork)
{
	START_OR_RETURN(2);
	starpu_codelet cl = cpu_codelet(set_flag, 0, "wake");
	for (int round = 0; round < 20; round++) {
		sleep_ms(round % 4 == 0 ? 15 : 1); // let the workers fall asleep, sometimes
		std::atomic<int> flag{0};
		ASSERT_EQ(submit_detached(&cl, &flag), 0);
		ASSERT_TRUE(wait_until([&] { return flag.load() == 1; }, 5000)) << "round " << round << ": task never ran";
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}
}

// The application's task->sched_data (STARPU_TASK_SCHED_DATA) is the same when
// the task runs and in its callback: policies keep their state elsewhere.
// modular-heteroprio-heft reads it to choose its decision: 1, heft, there.
TEST_P(Policy, TheApplicationsSchedDataSurvivesScheduling)
{
	START_OR_RETURN(2);
	static int mine;
	void *value = std::string(GetParam()) == "modular-heteroprio-heft" ? (void *)(uintptr_t)1 : &mine;
	starpu_codelet cl = cpu_codelet(sched_data_kept, 0, "sched_data");
	EXPECT_EQ(sched_data_changes(&cl, 200, value), 0);
}

// A policy that queued a task for one worker alone wakes it with
// astro_worker_wake_for_queued(): a sleeping worker is woken (1), an unknown
// one is refused (0), and nothing is lost either way.
TEST(WakeForQueued, WakesASleepingWorkerAndRefusesUnknownOnes)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	EXPECT_EQ(astro_worker_wake_for_queued(-1), 0);
	EXPECT_EQ(astro_worker_wake_for_queued(2), 0);
	EXPECT_EQ(astro_worker_wake_for_queued(STARPU_NMAXWORKERS + 5), 0);
	// Idle workers spin a while, then sleep.
	ASSERT_TRUE(wait_until([] { return starpu_worker_is_sleeping(0) != 0; }, 5000)) << "worker 0 never went to sleep";
	EXPECT_EQ(astro_worker_wake_for_queued(0), 1);
	// Woken with no task: it finds nothing and goes back to sleep, and still runs what comes.
	ASSERT_TRUE(wait_until([] { return starpu_worker_is_sleeping(0) != 0; }, 5000)) << "worker 0 did not sleep again";
	starpu_codelet cl = cpu_codelet(set_flag, 0, "after");
	std::atomic<int> flag{0};
	ASSERT_EQ(submit_detached(&cl, &flag), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(flag.load(), 1);
	starpu_shutdown();
}

// astro_worker_last_look(): a worker running a task or still spinning is not
// at its last look (its hunger is not announced, pushers leave it alone); one
// that went to sleep said so first, and says it no more once it runs again.
// A worker that never spins (ASTRO_SPIN_POLLS=0) looks for the last time at
// every look. Unknown ids: 0.
TEST(LastLook, OnlyTheLookBeforeSleepingIsTheLast)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	EXPECT_EQ(astro_worker_last_look(-1), 0);
	EXPECT_EQ(astro_worker_last_look(STARPU_NMAXWORKERS + 5), 0);
	ASSERT_TRUE(wait_until([] { return starpu_worker_is_sleeping(0) != 0; }, 5000)) << "worker 0 never went to sleep";
	EXPECT_EQ(astro_worker_last_look(0), 1) << "worker 0 sleeps without having said its last look";
	{
		Gate gate({ 0 });
		ASSERT_TRUE(gate.close());
		EXPECT_EQ(astro_worker_last_look(0), 0) << "worker 0 runs a task and still says it looks for the last time";
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_shutdown();

	ScopedEnv nospin("ASTRO_SPIN_POLLS", "0");
	ASSERT_EQ(init_with_ncpus(2), 0);
	{
		Gate gate({ 0 });
		ASSERT_TRUE(gate.close());
		EXPECT_EQ(astro_worker_last_look(0), 1);
		EXPECT_EQ(astro_worker_last_look(1), 1);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_shutdown();
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Policy, ::testing::Values("eager", "prio", "random", "ws", "lws", "dm", "dmda", "dmdas", "dmdar", "dmdap",
							     "modular-eager", "modular-eager-prefetching", "modular-prio",
							     "modular-prio-prefetching", "modular-random", "modular-random-prio",
							     "modular-ws", "modular-heft", "modular-heft-prio", "modular-heft2",
							     "modular-heteroprio", "modular-heteroprio-heft", "modular-prandom",
							     "modular-prandom-prio", "modular-pheft", "heteroprio"),
			 policy_param_name);

} // namespace
