// SPDX-License-Identifier: LGPL-2.1-or-later
// Races and calls from the wrong place: submitting while another thread shuts
// the runtime down, blocking or terminal calls made from a task, a callback, a
// tool callback or a counter listener, and handles used after their
// unregistration.
#include "helpers.h"

#include <cerrno>

using namespace astro_test;

namespace {

// Counts the "cannot be called from" lines in err: each refusal says it once.
int refusals_in(const std::string &err)
{
	int n = 0;
	for (size_t pos = err.find("cannot be called from"); pos != std::string::npos; pos = err.find("cannot be called from", pos + 1))
		n++;
	return n;
}

// ------------------------------------------------------- shutdown vs submit

void mark_ran(void **, void *arg)
{
	static_cast<std::atomic<int> *>(arg)->fetch_add(1, std::memory_order_relaxed);
}

struct SubmitterLog
{
	static constexpr int kMax = 4000;
	std::atomic<int> ran[kMax];
	std::atomic<int> nsubmitted{ 0 }; // submissions attempted so far
	std::atomic<bool> finished{ false };
	int accepted = 0;
	int refusal = 0; // the first error, 0 if none
	SubmitterLog()
	{
		for (auto &r : ran)
			r.store(0, std::memory_order_relaxed);
	}
	int ran_total() const
	{
		int n = 0;
		for (const auto &r : ran)
			n += r.load();
		return n;
	}
};

// Submits detached tasks until one is refused (or kMax); each task marks its own slot.
void submit_until_refused(starpu_codelet *cl, SubmitterLog *log)
{
	for (int i = 0; i < SubmitterLog::kMax; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = cl;
		t->cl_arg = &log->ran[i];
		int ret = starpu_task_submit(t);
		log->nsubmitted.store(i + 1);
		if (ret) {
			starpu_task_destroy(t);
			log->refusal = ret;
			break;
		}
		log->accepted++;
	}
	log->finished.store(true);
}

// One submitter thread against starpu_shutdown(), again and again: every
// accepted task ran before shutdown returned, no refused one ran, no crash.
TEST(Races, SubmitRacesShutdown)
{
	static starpu_codelet cl = cpu_codelet(mark_ran, 0, "race");
	// 24 shutdown points, each met about 16 times (the race was caught within the first 24).
	const int cycles = 400;
	// The bound on the total time: a slow (sanitizer) build or a loaded machine runs fewer
	// cycles, the checks stay exact.
	const auto budget = std::chrono::seconds(8);
	auto start = std::chrono::steady_clock::now();
	int done = 0, raced = 0;
	std::string err = stderr_of([&] {
		// Every shutdown point at least once, however slow the machine; then more within the budget.
		for (int c = 0; c < cycles && (c < 24 || std::chrono::steady_clock::now() - start < budget); c++, done++) {
			ASSERT_EQ(init_with_ncpus(1 + c % 2), 0);
			std::unique_ptr<SubmitterLog> log(new SubmitterLog);
			std::thread submitter(submit_until_refused, &cl, log.get());
			// Shut down after a varying number of submissions: early, in the middle, or late.
			int target = c % 24;
			while (log->nsubmitted.load() < target && !log->finished.load())
				std::this_thread::yield();
			starpu_shutdown();
			int ran_at_shutdown = log->ran_total();
			submitter.join();
			ASSERT_EQ(ran_at_shutdown, log->accepted) << "cycle " << c << ": an accepted task did not run before starpu_shutdown() returned";
			for (int i = 0; i < SubmitterLog::kMax; i++)
				ASSERT_EQ(log->ran[i].load(), i < log->accepted ? 1 : 0) << "cycle " << c << ", task " << i;
			if (log->refusal) {
				ASSERT_TRUE(log->refusal == -ESHUTDOWN || log->refusal == -ESRCH) << "cycle " << c << ": " << log->refusal;
				if (log->refusal == -ESHUTDOWN)
					raced++;
			}
		}
	});
	if (raced) {
		EXPECT_TRUE(contains(err, "is refused: starpu_shutdown() is under way")) << err.substr(0, 2000);
	}
	RecordProperty("cycles", done);
	RecordProperty("refused_while_draining", raced);
}

// While shutdown drains, the application's other threads are refused (and nothing of theirs runs).
std::atomic<bool> g_gate_open{ false };

void wait_for_gate(void **, void *)
{
	wait_until([] { return g_gate_open.load(); }, 20000);
}

TEST(Races, ApplicationThreadRefusedWhileShutdownDrains)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	g_gate_open = false;
	static starpu_codelet gate_cl = cpu_codelet(wait_for_gate, 0, "gate");
	static starpu_codelet cl = cpu_codelet(mark_ran, 0, "late");
	ASSERT_EQ(submit_detached(&gate_cl), 0);
	std::atomic<bool> shutdown_returned{ false };
	std::thread closer([&] {
		starpu_shutdown();
		shutdown_returned = true;
	});
	// Submit until refused: the gate task holds shutdown in its drain meanwhile.
	std::unique_ptr<SubmitterLog> log(new SubmitterLog);
	std::string err = stderr_of([&] {
		for (int i = 0; i < SubmitterLog::kMax && !log->refusal; i++) {
			struct starpu_task *t = starpu_task_create();
			t->cl = &cl;
			t->cl_arg = &log->ran[i];
			int ret = starpu_task_submit(t);
			if (ret) {
				starpu_task_destroy(t);
				log->refusal = ret;
			} else {
				log->accepted++;
				sleep_ms(2);
			}
		}
	});
	bool refused_while_gated = !g_gate_open.load() && !shutdown_returned.load();
	g_gate_open = true;
	closer.join();
	EXPECT_EQ(log->refusal, -ESHUTDOWN);
	EXPECT_TRUE(refused_while_gated);
	EXPECT_TRUE(contains(err, "starpu_task_submit: task 'late' is refused: starpu_shutdown() is under way")) << err;
	EXPECT_EQ(log->ran_total(), log->accepted);
	EXPECT_EQ(starpu_is_initialized(), 0);
}

// Callbacks may still submit while shutdown drains (StarPU allows it): a chain
// where each callback submits the next task completes.
struct Chain
{
	std::atomic<int> ran{ 0 };
	std::atomic<int> refused{ 0 };
	int length = 0;
};
Chain *g_chain;
starpu_codelet g_chain_cl;

void chain_count(void **, void *)
{
	g_chain->ran++;
}

void chain_next(void *arg)
{
	intptr_t i = reinterpret_cast<intptr_t>(arg);
	if (i + 1 >= g_chain->length)
		return;
	struct starpu_task *t = starpu_task_create();
	t->cl = &g_chain_cl;
	t->callback_func = chain_next;
	t->callback_arg = reinterpret_cast<void *>(i + 1);
	if (starpu_task_submit(t) != 0) {
		starpu_task_destroy(t);
		g_chain->refused++;
	}
}

TEST(Races, CallbacksMaySubmitWhileShutdownDrains)
{
	Chain chain;
	chain.length = 200;
	g_chain = &chain;
	g_chain_cl = cpu_codelet(chain_count, 0, "chain");
	ASSERT_EQ(init_with_ncpus(2), 0);
	struct starpu_task *t = starpu_task_create();
	t->cl = &g_chain_cl;
	t->callback_func = chain_next;
	t->callback_arg = reinterpret_cast<void *>(intptr_t{ 0 });
	ASSERT_EQ(starpu_task_submit(t), 0);
	starpu_shutdown();
	EXPECT_EQ(chain.ran.load(), chain.length);
	EXPECT_EQ(chain.refused.load(), 0);
	g_chain = nullptr;
}

// ------------------------------------------------- calls from the wrong place

// What each call needs: a completed task, a completed tag, a free handle.
struct Targets
{
	starpu_task done_task;
	starpu_tag_t done_tag = 0x7ace;
	int value = 0;
	starpu_data_handle_t handle = nullptr;
	starpu_data_handle_t victim = nullptr; // unregister calls: must survive them
	int other_value = 0;
	starpu_data_handle_t other = nullptr;  // acquired with a callback
};
Targets *g_targets;

struct Call
{
	const char *name;	// as the message names it
	bool returns_error;	// else: a void call, ignored
	std::function<int()> run;
};

// One synchronous task, which the call would wait for.
int submit_synchronous()
{
	struct starpu_task *t = starpu_task_create();
	t->cl = nullptr;
	t->synchronous = 1;
	int ret = starpu_task_submit(t);
	if (ret)
		starpu_task_destroy(t);
	return ret;
}

// Every blocking or terminal call. Where the check is missing, most return at
// once with 0 (their targets are complete or free), so a broken build fails
// by value rather than by a hang.
std::vector<Call> blocking_calls()
{
	return {
		{ "starpu_shutdown", false, [] { starpu_shutdown(); return 0; } },
		{ "starpu_pause", false, [] { starpu_pause(); return 0; } },
		{ "starpu_task_wait", true, [] { return starpu_task_wait(&g_targets->done_task); } },
		{ "starpu_task_wait_for_all", true, [] { return starpu_task_wait_for_all(); } },
		{ "starpu_task_wait_for_n_submitted", true, [] { return starpu_task_wait_for_n_submitted(1000000); } },
		{ "starpu_task_wait_for_all_in_ctx", true, [] { return starpu_task_wait_for_all_in_ctx(0); } },
		{ "starpu_task_wait_for_no_ready", true, [] { return starpu_task_wait_for_no_ready(); } },
		{ "starpu_task_submit of a synchronous task", true, submit_synchronous },
		{ "starpu_tag_wait", true, [] { return starpu_tag_wait(g_targets->done_tag); } },
		{ "starpu_tag_wait_array", true, [] {
			 starpu_tag_t tags[2] = { g_targets->done_tag, g_targets->done_tag };
			 return starpu_tag_wait_array(2, tags);
		 } },
		{ "starpu_data_acquire", true, [] {
			 int ret = starpu_data_acquire(g_targets->handle, STARPU_R);
			 if (ret == 0)
				 starpu_data_release(g_targets->handle);
			 return ret;
		 } },
		{ "starpu_data_acquire_on_node", true, [] {
			 int ret = starpu_data_acquire_on_node(g_targets->handle, STARPU_MAIN_RAM, STARPU_R);
			 if (ret == 0)
				 starpu_data_release(g_targets->handle);
			 return ret;
		 } },
		{ "starpu_data_unregister", false, [] { starpu_data_unregister(g_targets->victim); return 0; } },
		{ "starpu_data_unregister_no_coherency", false, [] { starpu_data_unregister_no_coherency(g_targets->victim); return 0; } },
	};
}

// The call the current place makes, once.
std::atomic<const Call *> g_armed{ nullptr };
std::atomic<int> g_result{ 1 };
std::atomic<int> g_calls_made{ 0 };

void run_armed()
{
	const Call *call = g_armed.exchange(nullptr);
	if (!call)
		return;
	g_result = call->run();
	g_calls_made++;
}

void place_codelet(void **, void *)
{
	run_armed();
}

void place_callback(void *)
{
	run_armed();
}

// An acquire callback: on this thread when the data is free at once.
void place_acquire_callback(void *)
{
	run_armed();
	starpu_data_release(g_targets->other);
}

void place_listener(starpu_perf_counter_listener *, starpu_perf_counter_sample *, void *)
{
	run_armed();
}

// A profiling tool linked into this program (found at each starpu_init()): its
// user_start callback runs on the application thread that calls
// starpu_prof_tool_user_start().
void place_tool(struct starpu_prof_tool_info *, union starpu_prof_tool_event_info *, struct starpu_prof_tool_api_info *)
{
	run_armed();
}

} // namespace

extern "C" void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg, starpu_prof_tool_entry_register_func)
{
	reg(starpu_prof_tool_event_user_start, place_tool, starpu_prof_tool_command_reg);
}

namespace {

enum class Place { Task, Callback, AcquireCallback, ToolCallback, Listener };

const char *place_words(Place p)
{
	switch (p) {
	case Place::Task: return "a task";
	case Place::Callback: return "a callback";
	case Place::AcquireCallback: return "a callback";
	case Place::ToolCallback: return "a tool callback";
	case Place::Listener: return "a counter listener";
	}
	return "?";
}

class WrongPlace : public ::testing::TestWithParam<Place>
{
protected:
	void SetUp() override
	{
		ASSERT_FALSE(build_plugin_path().empty()) << "STARPU_PLUGIN_PATH is not set: run through make check";
		ASSERT_EQ(init_with_ncpus(1), 0);
		targets_.reset(new Targets);
		g_targets = targets_.get();
		starpu_task_init(&g_targets->done_task);
		g_targets->done_task.cl = nullptr;
		g_targets->done_task.detach = 0;
		ASSERT_EQ(starpu_task_submit(&g_targets->done_task), 0);
		ASSERT_EQ(starpu_task_wait(&g_targets->done_task), 0);
		starpu_tag_notify_from_apps(g_targets->done_tag);
		starpu_variable_data_register(&g_targets->handle, STARPU_MAIN_RAM, (uintptr_t)&g_targets->value, sizeof(int));
		starpu_variable_data_register(&g_targets->other, STARPU_MAIN_RAM, (uintptr_t)&g_targets->other_value, sizeof(int));
		cl_ = cpu_codelet(place_codelet, 0, "place");
		nop_cl_ = cpu_codelet([](void **, void *) {}, 0, "nop");
	}
	void TearDown() override
	{
		g_armed = nullptr;
		if (starpu_is_initialized()) {
			starpu_data_unregister(g_targets->handle);
			starpu_data_unregister(g_targets->other);
			starpu_task_clean(&g_targets->done_task);
			starpu_shutdown();
		}
		g_targets = nullptr;
	}
	// Makes call from the place under test, and waits for it to have been made.
	void call_from_place(const Call &call)
	{
		g_result = 1;
		int before = g_calls_made.load();
		g_armed = &call;
		switch (GetParam()) {
		case Place::Task:
			ASSERT_EQ(submit_detached(&cl_), 0);
			break;
		case Place::Callback: {
			struct starpu_task *t = starpu_task_create();
			t->cl = &nop_cl_;
			t->callback_func = place_callback;
			ASSERT_EQ(starpu_task_submit(t), 0);
			break;
		}
		case Place::AcquireCallback:
			ASSERT_EQ(starpu_data_acquire_cb(g_targets->other, STARPU_RW, place_acquire_callback, nullptr), 0);
			break;
		case Place::ToolCallback:
			starpu_prof_tool_user_start("wrong place");
			starpu_prof_tool_user_end("wrong place");
			break;
		case Place::Listener: {
			// The global listener runs at each submission, on this thread.
			int id = starpu_perf_counter_name_to_id(starpu_perf_counter_scope_global, "starpu.task.g_total_submitted");
			ASSERT_GE(id, 0);
			starpu_perf_counter_set *set = starpu_perf_counter_set_alloc(starpu_perf_counter_scope_global);
			starpu_perf_counter_set_enable_id(set, id);
			starpu_perf_counter_listener *l = starpu_perf_counter_listener_init(set, place_listener, nullptr);
			starpu_perf_counter_set_global_listener(l);
			EXPECT_EQ(submit_detached(&nop_cl_), 0);
			starpu_perf_counter_unset_global_listener();
			starpu_perf_counter_listener_exit(l);
			starpu_perf_counter_set_free(set);
			break;
		}
		}
		ASSERT_TRUE(wait_until([&] { return g_calls_made.load() > before; }, 20000)) << call.name << " was not called";
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}
	std::unique_ptr<Targets> targets_;
	starpu_codelet cl_, nop_cl_;
};

TEST_P(WrongPlace, BlockingCallsAreRefused)
{
	for (const Call &call : blocking_calls()) {
		SCOPED_TRACE(std::string(call.name) + " from " + place_words(GetParam()));
		starpu_variable_data_register(&g_targets->victim, STARPU_MAIN_RAM, (uintptr_t)&g_targets->value, sizeof(int));
		std::string err = stderr_of([&] { call_from_place(call); });
		if (HasFatalFailure())
			return;
		if (call.returns_error) {
			EXPECT_EQ(g_result.load(), -EDEADLK);
		}
		EXPECT_TRUE(contains(err, std::string(call.name) + " cannot be called from " + place_words(GetParam()) + ":")) << err;
		EXPECT_EQ(refusals_in(err), 1) << err;
		// The void calls did nothing: the runtime runs, unpaused, the handle is registered.
		ASSERT_EQ(starpu_is_initialized(), 1);
		EXPECT_EQ(starpu_is_paused(), 0);
		starpu_resume();
		std::string unregister_err = stderr_of([&] { starpu_data_unregister(g_targets->victim); });
		EXPECT_EQ(unregister_err, "");
	}
}

INSTANTIATE_TEST_SUITE_P(Places, WrongPlace, ::testing::Values(Place::Task, Place::Callback, Place::AcquireCallback, Place::ToolCallback, Place::Listener),
			 [](const testing::TestParamInfo<Place> &info) {
				 switch (info.param) {
				 case Place::Task: return "Task";
				 case Place::Callback: return "Callback";
				 case Place::AcquireCallback: return "AcquireCallback";
				 case Place::ToolCallback: return "ToolCallback";
				 case Place::Listener: return "Listener";
				 }
				 return "Unknown";
			 });

// The same calls from the application's own code still work.
TEST(RightPlace, BlockingCallsWorkFromTheApplication)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	std::string err = stderr_of([] {
		EXPECT_EQ(submit_synchronous(), 0);
		EXPECT_EQ(starpu_task_wait_for_all(), 0);
		starpu_prof_tool_user_start("nothing armed");
		starpu_pause();
		EXPECT_EQ(starpu_is_paused(), 1);
		starpu_resume();
	});
	EXPECT_EQ(refusals_in(err), 0) << err;
	starpu_shutdown();
	EXPECT_EQ(starpu_is_initialized(), 0);
}

// ------------------------------------------------------------ dead handles

class DeadHandles : public ::testing::Test
{
protected:
	void SetUp() override
	{
		ASSERT_FALSE(build_plugin_path().empty()) << "STARPU_PLUGIN_PATH is not set: run through make check";
		ASSERT_EQ(init_with_ncpus(1), 0);
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	starpu_data_handle_t registered()
	{
		starpu_data_handle_t h = nullptr;
		starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value_, sizeof(value_));
		return h;
	}
	static std::string dead_message(starpu_data_handle_t h)
	{
		char buf[64];
		snprintf(buf, sizeof(buf), "handle %p is not registered (already unregistered?)", (void *)h);
		return buf;
	}
	int value_ = 0;
};

TEST_F(DeadHandles, UnregisterTwiceIsReported)
{
	starpu_data_handle_t h = registered();
	starpu_data_unregister(h);
	std::string err = stderr_of([&] { starpu_data_unregister(h); });
	EXPECT_TRUE(contains(err, "starpu_data_unregister: " + dead_message(h))) << err;
	err = stderr_of([&] { starpu_data_unregister_no_coherency(h); });
	EXPECT_TRUE(contains(err, "starpu_data_unregister_no_coherency: " + dead_message(h))) << err;
	err = stderr_of([&] { starpu_data_unregister_submit(h); });
	EXPECT_TRUE(contains(err, "starpu_data_unregister_submit: " + dead_message(h))) << err;
}

TEST_F(DeadHandles, UnregisterAfterUnregisterSubmitIsReported)
{
	starpu_data_handle_t h = registered();
	starpu_data_unregister_submit(h);
	std::string err = stderr_of([&] { starpu_data_unregister(h); });
	EXPECT_TRUE(contains(err, "starpu_data_unregister: " + dead_message(h))) << err;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

void acquire_cb(void *)
{
}

TEST_F(DeadHandles, AcquireAndReleaseOfADeadHandleAreRefused)
{
	starpu_data_handle_t h = registered();
	starpu_data_unregister(h);
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_data_acquire(h, STARPU_R), -EINVAL);
		EXPECT_EQ(starpu_data_acquire_on_node(h, STARPU_MAIN_RAM, STARPU_RW), -EINVAL);
		EXPECT_EQ(starpu_data_acquire_try(h, STARPU_R), -EINVAL);
		EXPECT_EQ(starpu_data_acquire_cb(h, STARPU_R, acquire_cb, nullptr), -EINVAL);
		starpu_data_release(h);
	});
	EXPECT_TRUE(contains(err, "starpu_data_acquire: " + dead_message(h))) << err;
	EXPECT_TRUE(contains(err, "starpu_data_acquire_on_node: " + dead_message(h))) << err;
	EXPECT_TRUE(contains(err, "starpu_data_acquire_try: " + dead_message(h))) << err;
	EXPECT_TRUE(contains(err, "starpu_data_acquire_cb: " + dead_message(h))) << err;
	EXPECT_TRUE(contains(err, "starpu_data_release: " + dead_message(h))) << err;
}

std::atomic<int> g_dead_runs{ 0 };

void count_dead_run(void **, void *)
{
	g_dead_runs++;
}

TEST_F(DeadHandles, TaskOnADeadHandleIsRefused)
{
	g_dead_runs = 0;
	starpu_data_handle_t h = registered();
	starpu_data_unregister(h);
	static starpu_codelet cl = cpu_codelet(count_dead_run, 1, "on_dead");
	cl.modes[0] = STARPU_RW;
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->handles[0] = h;
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_task_submit(t); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "task 'on_dead': buffer 0: " + dead_message(h))) << err;
	starpu_task_destroy(t);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_dead_runs.load(), 0);
	EXPECT_EQ(starpu_task_nsubmitted(), 0);
}

// A pointer that never was a handle: refused the same way, its memory untouched by the data calls.
TEST_F(DeadHandles, ForeignHandleIsRefused)
{
	alignas(64) static unsigned char junk[4096] = {};
	starpu_data_handle_t h = reinterpret_cast<starpu_data_handle_t>(junk);
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_data_acquire(h, STARPU_R), -EINVAL);
		starpu_data_unregister(h);
	});
	EXPECT_TRUE(contains(err, "starpu_data_acquire: " + dead_message(h))) << err;
	EXPECT_TRUE(contains(err, "starpu_data_unregister: " + dead_message(h))) << err;
	static starpu_codelet cl = cpu_codelet(count_dead_run, 1, "on_foreign");
	cl.modes[0] = STARPU_R;
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->handles[0] = h;
	err = stderr_of([&] { EXPECT_EQ(starpu_task_submit(t), -EINVAL); });
	EXPECT_TRUE(contains(err, "buffer 0: " + dead_message(h))) << err;
	starpu_task_destroy(t);
}

// Many handles unregistered in between: the first one is still recognised as dead.
TEST_F(DeadHandles, LongDeadHandleIsReported)
{
	starpu_data_handle_t first = registered();
	starpu_data_unregister(first);
	for (int i = 0; i < 200; i++)
		starpu_data_unregister(registered());
	std::string err = stderr_of([&] { starpu_data_unregister(first); });
	EXPECT_TRUE(contains(err, "starpu_data_unregister: " + dead_message(first))) << err;
}

} // namespace
