// SPDX-License-Identifier: LGPL-2.1-or-later
// The watchdog (STARPU_WATCHDOG_TIMEOUT, _CRASH, _DELAY, the hook): when no
// task completes for the timeout while tasks are pending, it says what is
// stuck; without it, an idle wait says what it waits for (IdleWait). Every stall here is made on purpose (a task waiting for a flag, a tag
// never notified, a policy that forgets tasks) and undone once the report was
// seen, so no test depends on how fast the machine is.
#include "helpers.h"

#include <fcntl.h>
#include <sstream>

using namespace astro_test;

namespace {

// stderr (fd 2) goes to a file while the object lives, readable at any time:
// the report comes from the watchdog's thread while the test waits for it.
class StderrFile
{
public:
	StderrFile()
	{
		fflush(stderr);
		path_ = dir_.file("stderr");
		fd_ = open(path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0600);
		saved_ = dup(2);
		dup2(fd_, 2);
	}
	~StderrFile() { stop(); }
	std::string text() const
	{
		std::ifstream in(path_);
		std::stringstream ss;
		ss << in.rdbuf();
		return ss.str();
	}
	// Waits (20 s at most) until every needle was printed.
	bool wait_for(const std::vector<std::string> &needles) const
	{
		return wait_until(
			[&] {
				std::string t = text();
				for (const std::string &n : needles)
					if (!contains(t, n))
						return false;
				return true;
			},
			20000);
	}
	std::string stop()
	{
		if (saved_ >= 0) {
			fflush(stderr);
			dup2(saved_, 2);
			close(saved_);
			close(fd_);
			saved_ = -1;
		}
		return text();
	}

private:
	TempDir dir_;
	std::string path_;
	int fd_ = -1, saved_ = -1;
};

std::atomic<bool> g_release{false};
std::atomic<bool> g_started{false};
std::atomic<int> g_runs{0};

void wait_for_release(void **, void *)
{
	g_started = true;
	while (!g_release)
		sleep_ms(1);
	g_runs++;
}

void count_run(void **, void *)
{
	g_runs++;
}

starpu_codelet g_blocking_cl = cpu_codelet(wait_for_release, 0, "blocker");
starpu_codelet g_count_cl = cpu_codelet(count_run, 0, "count");

starpu_task *named_task(starpu_codelet *cl, const char *name)
{
	starpu_task *t = starpu_task_create();
	t->cl = cl;
	t->name = name;
	return t;
}

// Starts the runtime with 2 workers on the policy "drops" (plugins/sched_drops.c), linked into dir.
void init_on_drops(TempDir &dir)
{
	ASSERT_TRUE(dir.link_test_plugin("sched_drops.so"));
	ScopedEnv path("STARPU_PLUGIN_PATH", build_plugin_path() + ":" + dir.path());
	ScopedEnv sched("STARPU_SCHED", "drops");
	ASSERT_EQ(init_with_ncpus(2), 0);
	ASSERT_EQ(policy_name(), "drops");
}

class Watchdog : public ::testing::Test
{
protected:
	void SetUp() override
	{
		g_release = false;
		g_started = false;
		g_runs = 0;
	}
	void TearDown() override
	{
		g_release = true;
		starpu_task_watchdog_set_hook(nullptr, nullptr);
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	ScopedEnv timeout_{"STARPU_WATCHDOG_TIMEOUT", "200000"};
	ScopedEnv crash_{"STARPU_WATCHDOG_CRASH", nullptr};
	ScopedEnv delay_{"STARPU_WATCHDOG_DELAY", nullptr};
	ScopedEnv sched_{"STARPU_SCHED", "eager"};
};

// A task runs long, one waits for it, one waits for a tag nobody notifies, one
// waits in the worker's local queue: the report names each.
TEST_F(Watchdog, ReportsWhatIsStuck)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	starpu_task *blocker = named_task(&g_blocking_cl, "blocker");
	ASSERT_EQ(starpu_task_submit(blocker), 0);
	ASSERT_TRUE(wait_until([] { return g_started.load(); }, 20000));
	starpu_task *after = named_task(&g_count_cl, "after_blocker");
	starpu_task_declare_deps(after, 1, blocker);
	ASSERT_EQ(starpu_task_submit(after), 0);
	starpu_tag_declare_deps(8101, 1, (starpu_tag_t)8100);
	starpu_task *tagged = named_task(&g_count_cl, "tagged");
	tagged->use_tag = 1;
	tagged->tag_id = 8101;
	ASSERT_EQ(starpu_task_submit(tagged), 0);
	starpu_task *queued = named_task(&g_count_cl, "queued");
	queued->execute_on_a_specific_worker = 1;
	queued->workerid = 0;
	ASSERT_EQ(starpu_task_submit(queued), 0);

	bool seen = err.wait_for({
		"[astrolabe] watchdog: no task completed for ",
		" while 4 submitted tasks are not complete (STARPU_WATCHDOG_TIMEOUT=200000 us); scheduling policy 'eager'. What is stuck:\n",
		"[astrolabe] watchdog:   worker 0 (CPU 0): runs task 'blocker' (job ",
		"1 tasks in its local queue: 'queued' (job ",
		"[astrolabe] watchdog:   tag 8101 (task 'tagged', job ",
		") waits for tag 8100 (no task with it yet: submit one or call starpu_tag_notify_from_apps)\n",
		"task 'after_blocker' (job ",
		") is blocked, 1 dependencies left: waits for task 'blocker' (job ",
		"task 'tagged' (job ",
		") is blocked, 1 dependencies left: waits for the dependencies of its tag 8101 (above)\n",
		"[astrolabe] watchdog: 2 ready tasks (nready), 2 blocked, 0 held by policy 'eager' with no worker running them\n",
		"[astrolabe] watchdog: set STARPU_WATCHDOG_CRASH=1 to abort here",
	});
	g_release = true;
	starpu_tag_notify_from_apps(8100);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::string text = err.stop();
	EXPECT_TRUE(seen) << text;
	EXPECT_EQ(g_runs, 4);
}

// A policy that loses its tasks hangs the application: the report says which
// policy holds them. (This one gives them back at starpu_do_schedule(), so
// that the test ends.)
TEST_F(Watchdog, NamesThePolicyThatHoldsTasks)
{
	TempDir dir;
	ASSERT_NO_FATAL_FAILURE(init_on_drops(dir));
	StderrFile err;
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(starpu_task_submit(named_task(&g_count_cl, "dropped")), 0);
	bool seen = err.wait_for({
		"scheduling policy 'drops'. What is stuck:\n",
		"[astrolabe] watchdog:   worker 0 (CPU 0): runs no task; 0 tasks in its local queue\n",
		"[astrolabe] watchdog:   task 'dropped' (job ",
		") is ready, pushed to policy 'drops', which gave it to no worker\n",
		"[astrolabe] watchdog: 3 ready tasks (nready), 0 blocked, 3 held by policy 'drops' with no worker running them "
		"(a policy that keeps tasks from the workers hangs the application)\n",
	});
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::string text = err.stop();
	EXPECT_TRUE(seen) << text;
	EXPECT_EQ(g_runs, 3);
}

// A paused runtime runs no task: the report says it is paused, and what resumes it.
TEST_F(Watchdog, SaysTheRuntimeIsPaused)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	starpu_pause();
	ASSERT_EQ(starpu_task_submit(named_task(&g_count_cl, "paused")), 0);
	bool seen = err.wait_for({
		"scheduling policy 'eager'. What is stuck:\n"
		"[astrolabe] watchdog: the runtime is paused (starpu_pause): no worker takes a task until starpu_resume() is called, "
		"from another thread than the waiting one\n",
	});
	starpu_resume();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::string text = err.stop();
	EXPECT_TRUE(seen) << text;
	EXPECT_EQ(g_runs, 1);
}

std::atomic<int> g_hook_calls{0};

void count_hook(void *arg)
{
	if (arg == &g_hook_calls)
		g_hook_calls++;
}

// starpu_task_watchdog_set_hook(): the hook is called instead of the report.
TEST_F(Watchdog, HookReplacesTheReport)
{
	g_hook_calls = 0;
	starpu_task_watchdog_set_hook(count_hook, &g_hook_calls);
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	ASSERT_EQ(starpu_task_submit(named_task(&g_blocking_cl, "blocker")), 0);
	bool called = wait_until([] { return g_hook_calls > 0; }, 20000);
	g_release = true;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::string text = err.stop();
	EXPECT_TRUE(called);
	EXPECT_EQ(text, "");
}

// Nothing pending, nothing to say; and nothing before STARPU_WATCHDOG_DELAY.
TEST_F(Watchdog, QuietWhenIdleAndDuringTheDelay)
{
	ScopedEnv timeout("STARPU_WATCHDOG_TIMEOUT", "20000");
	{
		ASSERT_EQ(init_with_ncpus(1), 0);
		StderrFile err;
		sleep_ms(300);
		starpu_shutdown();
		EXPECT_EQ(err.stop(), "");
	}
	ScopedEnv delay("STARPU_WATCHDOG_DELAY", "600000000"); // 10 minutes
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	ASSERT_EQ(starpu_task_submit(named_task(&g_blocking_cl, "blocker")), 0);
	sleep_ms(300);
	g_release = true;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_shutdown();
	EXPECT_EQ(err.stop(), "");
}

TEST_F(Watchdog, NegativeTimeoutIsRefused)
{
	ScopedEnv timeout("STARPU_WATCHDOG_TIMEOUT", "-5");
	std::string err = stderr_of([] { ASSERT_EQ(init_with_ncpus(1), 0); });
	EXPECT_EQ(err, "[astrolabe] error: STARPU_WATCHDOG_TIMEOUT='-5' is out of range 0..3.6e+09 (µs): ignored, using 0\n");
}

// Beyond an hour is out of range too (a typo of a few zeros), said once; 0 (off) is used.
TEST_F(Watchdog, TimeoutBeyondAnHourIsRefused)
{
	ScopedEnv timeout("STARPU_WATCHDOG_TIMEOUT", "1e12");
	std::string err = stderr_of([] { ASSERT_EQ(init_with_ncpus(1), 0); });
	EXPECT_EQ(err, "[astrolabe] error: STARPU_WATCHDOG_TIMEOUT='1e12' is out of range 0..3.6e+09 (µs): ignored, using 0\n");
}

// Without any setting: an application's wait that can no longer end on its own
// (every worker idle, nothing in flight, tasks remain) says once, after a second
// or so, what it waits for. Each stall is undone from another thread once the
// report was seen (or after 20 s, when it never comes), so the wait returns.
class IdleWait : public Watchdog
{
protected:
	ScopedEnv timeout_{"STARPU_WATCHDOG_TIMEOUT", nullptr};
	ScopedEnv silent_{"STARPU_SILENT", nullptr};
};

// A policy whose push_task keeps tasks from its pop_task: starpu_task_wait names
// it, and the task waited for.
TEST_F(IdleWait, NamesThePolicyThatHoldsTasks)
{
	TempDir dir;
	ASSERT_NO_FATAL_FAILURE(init_on_drops(dir));
	StderrFile err;
	starpu_task *waited = named_task(&g_count_cl, "dropped");
	waited->detach = 0;
	ASSERT_EQ(starpu_task_submit(waited), 0);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(starpu_task_submit(named_task(&g_count_cl, "dropped")), 0);
	bool seen = false;
	std::thread undo([&] {
		seen = err.wait_for({
			"[astrolabe] idle wait: starpu_task_wait has waited ",
			" s while every worker is idle and nothing is in flight, 3 submitted tasks not complete; what is awaited:\n",
			"[astrolabe] idle wait:   3 ready tasks are held by scheduling policy 'drops', which gives them to no worker "
			"(its push_task keeps them from its pop_task, or gives them to workers that cannot run them)\n",
			"[astrolabe] idle wait:   the task waited for, 'dropped' (job ",
			"), is ready, held by policy 'drops'\n",
			"[astrolabe] idle wait: said once; STARPU_WATCHDOG_TIMEOUT=<µs> names every stuck task",
		});
		starpu_do_schedule(); // the policy gives its tasks back
	});
	EXPECT_EQ(starpu_task_wait(waited), 0);
	undo.join();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::string text = err.stop();
	EXPECT_TRUE(seen) << text;
	EXPECT_EQ(g_runs, 3);
}

// starpu_tag_wait on a tag no task carries and nobody notifies: the tag is named,
// with the call that ends the wait.
TEST_F(IdleWait, NamesTheTagNobodyNotifies)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	bool seen = false;
	std::thread undo([&] {
		seen = err.wait_for({
			"[astrolabe] idle wait: starpu_tag_wait has waited ",
			"[astrolabe] idle wait:   tag 9001, waited for, is carried by no task and nobody notified it: submit a task with it "
			"(use_tag, tag_id) or call starpu_tag_notify_from_apps(9001) from another thread\n",
		});
		starpu_tag_notify_from_apps(9001);
	});
	EXPECT_EQ(starpu_tag_wait(9001), 0);
	undo.join();
	std::string text = err.stop();
	EXPECT_TRUE(seen) << text;
}

// starpu_task_wait_for_all while a task waits for a tag nobody notifies.
TEST_F(IdleWait, NamesTheTagATaskWaitsFor)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	starpu_tag_declare_deps(9101, 1, (starpu_tag_t)9100);
	starpu_task *tagged = named_task(&g_count_cl, "tagged");
	tagged->use_tag = 1;
	tagged->tag_id = 9101;
	ASSERT_EQ(starpu_task_submit(tagged), 0);
	bool seen = false;
	std::thread undo([&] {
		seen = err.wait_for({
			"[astrolabe] idle wait: starpu_task_wait_for_all has waited ",
			"1 submitted tasks not complete; what is awaited:\n",
			"[astrolabe] idle wait:   tag 9101 (task 'tagged', job ",
			") waits for tag 9100 (no task with it yet: submit one or call starpu_tag_notify_from_apps)\n",
		});
		starpu_tag_notify_from_apps(9100);
	});
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	undo.join();
	std::string text = err.stop();
	EXPECT_TRUE(seen) << text;
	EXPECT_EQ(g_runs, 1);
	EXPECT_FALSE(contains(text, "ready tasks are held")) << text;
}

// starpu_data_acquire of data whose writer waits for a tag nobody notifies: the
// handle and its writer are named, and what the writer waits for.
TEST_F(IdleWait, NamesTheWriterAnAcquireWaitsFor)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	int value = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));
	starpu_data_set_name(h, "result");
	static starpu_codelet write_cl = [] {
		starpu_codelet cl = cpu_codelet(count_run, 1, "write");
		cl.modes[0] = STARPU_W;
		return cl;
	}();
	starpu_tag_declare_deps(9301, 1, (starpu_tag_t)9300);
	starpu_task *writer = named_task(&write_cl, "writer");
	writer->handles[0] = h;
	writer->use_tag = 1;
	writer->tag_id = 9301;
	ASSERT_EQ(starpu_task_submit(writer), 0);
	bool seen = false;
	std::thread undo([&] {
		seen = err.wait_for({
			"[astrolabe] idle wait: starpu_data_acquire has waited ",
			"1 submitted tasks not complete; what is awaited:\n",
			"[astrolabe] idle wait:   the data acquired, handle result (mode STARPU_R), waits for the accesses submitted before "
			"the acquire: its last writer, task 'writer' (job ",
			"), not complete; what those wait for is said above and below\n",
			"[astrolabe] idle wait:   tag 9301 (task 'writer', job ",
			") waits for tag 9300 (no task with it yet: submit one or call starpu_tag_notify_from_apps)\n",
		});
		starpu_tag_notify_from_apps(9300);
	});
	EXPECT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	starpu_data_release(h);
	undo.join();
	starpu_data_unregister(h);
	std::string text = err.stop();
	EXPECT_TRUE(seen) << text;
	EXPECT_EQ(g_runs, 1);
}

// starpu_data_acquire in one thread while another holds the data: the acquire
// the application holds is named.
TEST_F(IdleWait, NamesTheAcquireTheApplicationHolds)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	int value = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));
	starpu_data_set_name(h, "held");
	ASSERT_EQ(starpu_data_acquire(h, STARPU_RW), 0);
	std::atomic<int> second{-1};
	std::thread other([&] {
		second = starpu_data_acquire(h, STARPU_RW);
		starpu_data_release(h);
	});
	bool seen = err.wait_for({
		"[astrolabe] idle wait: starpu_data_acquire has waited ",
		"[astrolabe] idle wait:   the data acquired, handle held (mode STARPU_RW), waits for the accesses submitted before the "
		"acquire: 1 acquires of it the application holds (starpu_data_release them first);",
	});
	starpu_data_release(h);
	other.join();
	starpu_data_unregister(h);
	std::string text = err.stop();
	EXPECT_TRUE(seen) << text;
	EXPECT_EQ(second, 0);
}

// starpu_task_wait_for_all_in_ctx on a context without worker: the context is
// named, with the call that gives it workers.
TEST_F(IdleWait, NamesTheContextWithoutWorkers)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	int none = 0;
	unsigned ctx = starpu_sched_ctx_create(&none, 0, "empty", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
	ASSERT_LT(ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	starpu_task *t = named_task(&g_count_cl, "in_ctx");
	t->sched_ctx = ctx;
	ASSERT_EQ(starpu_task_submit(t), 0);
	bool seen = false;
	std::thread undo([&] {
		seen = err.wait_for({
			"[astrolabe] idle wait: starpu_task_wait_for_all_in_ctx has waited ",
			"[astrolabe] idle wait:   the context waited for, 1 'empty' (policy 'eager', 0 workers), has 1 tasks not complete",
			": it has no worker, its 1 tasks pushed wait for starpu_sched_ctx_add_workers\n",
		});
		int worker = 0;
		starpu_sched_ctx_add_workers(&worker, 1, ctx);
	});
	EXPECT_EQ(starpu_task_wait_for_all_in_ctx(ctx), 0);
	undo.join();
	starpu_sched_ctx_delete(ctx);
	std::string text = err.stop();
	EXPECT_TRUE(seen) << text;
	EXPECT_EQ(g_runs, 1);
}

// A task that runs long keeps its worker busy: nothing to say, however long the wait.
TEST_F(IdleWait, QuietWhileATaskRuns)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	ASSERT_EQ(starpu_task_submit(named_task(&g_blocking_cl, "long")), 0);
	std::thread undo([] {
		wait_until([] { return g_started.load(); }, 20000);
		sleep_ms(2500);
		g_release = true;
	});
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	undo.join();
	EXPECT_EQ(err.stop(), "");
	EXPECT_EQ(g_runs, 1);
}

// STARPU_SILENT=1 silences it.
TEST_F(IdleWait, SilentSaysNothing)
{
	ScopedEnv silent("STARPU_SILENT", "1");
	ASSERT_EQ(init_with_ncpus(1), 0);
	StderrFile err;
	std::thread undo([] {
		sleep_ms(2500);
		starpu_tag_notify_from_apps(9201);
	});
	EXPECT_EQ(starpu_tag_wait(9201), 0);
	undo.join();
	EXPECT_EQ(err.stop(), "");
}

void stuck_forever()
{
	if (init_with_ncpus(1) != 0)
		exit(3);
	starpu_task *t = starpu_task_create();
	t->cl = &g_blocking_cl;
	t->name = "stuck";
	if (starpu_task_submit(t) != 0)
		exit(4);
	sleep(60); // the watchdog aborts long before
	exit(5);
}

TEST(WatchdogDeathTest, CrashAbortsAfterTheReport)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	ScopedEnv timeout("STARPU_WATCHDOG_TIMEOUT", "200000");
	ScopedEnv crash("STARPU_WATCHDOG_CRASH", "1");
	EXPECT_DEATH(stuck_forever(), "What is stuck:\n.*runs task 'stuck' \\(job [0-9]+\\).*\n"
				      "\\[astrolabe\\] watchdog: no task completed for [0-9.]+ s: aborting, as STARPU_WATCHDOG_CRASH=1 asks\n");
}

} // namespace
