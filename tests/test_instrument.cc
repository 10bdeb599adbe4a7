// SPDX-License-Identifier: LGPL-2.1-or-later
// Instrumentation states and bursts (astrolabe/instrument.h), seen by an
// observer of the hub as the trace recorder sees them.
#include "helpers.h"
#include <astrolabe/instrument.h>
#include <astrolabe/observe.h>
#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

using namespace astro_test;

namespace {

std::mutex seen_lock;
std::vector<std::string> seen;

void record(const struct astro_event *e, void *)
{
	std::string what;
	switch (e->moment) {
	case ASTRO_MOMENT_STATE_BEGIN: what = std::string("+") + e->label; break;
	case ASTRO_MOMENT_STATE_END: what = std::string("-") + e->label; break;
	case ASTRO_MOMENT_BURST_BEGIN: what = std::string("burst ") + e->label + "=" + std::to_string(e->other_id); break;
	case ASTRO_MOMENT_BURST_END: what = std::string("burst ") + e->label + " end"; break;
	default: return;
	}
	std::lock_guard<std::mutex> g(seen_lock);
	seen.push_back(what);
}

class Instrument : public testing::Test
{
protected:
	void SetUp() override
	{
		ASSERT_TRUE(rt_.ok());
		seen.clear();
		id_ = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_STATE_BEGIN) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_STATE_END) |
						      ASTRO_MOMENT_BIT(ASTRO_MOMENT_BURST_BEGIN) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_BURST_END) |
						      ASTRO_OBSERVE_UNTIMED,
					      record, nullptr);
		ASSERT_GE(id_, 0);
	}
	void TearDown() override
	{
		astro_observe_unsubscribe(id_);
		while (astro_instr_state_current())
			astro_instr_state_close();
		astro_instr_state_enable();
		astro_instr_context_set(ASTRO_INSTR_CONTEXT_STACKED_STATES_AND_BURSTS);
	}
	std::vector<std::string> events()
	{
		std::lock_guard<std::mutex> g(seen_lock);
		return seen;
	}
	Runtime rt_{ 1 };
	int id_ = -1;
};

TEST_F(Instrument, StatesNestAndBurstsCarryTheirValue)
{
	ASSERT_EQ(astro_instr_state_open("compute"), 0);
	ASSERT_EQ(astro_instr_state_and_burst_open("cache", "cache-malloc", 4096), 0);
	EXPECT_STREQ(astro_instr_state_current(), "cache");
	ASSERT_EQ(astro_instr_state_and_burst_close("cache-malloc"), 0);
	ASSERT_EQ(astro_instr_state_close(), 0);
	EXPECT_EQ(astro_instr_state_current(), nullptr);
	EXPECT_EQ(events(), (std::vector<std::string>{ "+compute", "+cache", "burst cache-malloc=4096", "burst cache-malloc end",
						       "-cache", "-compute" }));
}

TEST_F(Instrument, DisabledStatesKeepTheirHistoryAndCatchUp)
{
	ASSERT_EQ(astro_instr_state_open("A"), 0);
	astro_instr_state_disable();
	ASSERT_EQ(astro_instr_state_open("B"), 0);
	ASSERT_EQ(astro_instr_state_close(), 0);
	ASSERT_EQ(astro_instr_state_close(), 0); // A ends while off
	ASSERT_EQ(astro_instr_state_open("C"), 0);
	ASSERT_EQ(astro_instr_state_open("D"), 0);
	EXPECT_STREQ(astro_instr_state_current(), "D") << "the stack changes while off";
	// Bursts are not state instrumentation: still emitted.
	ASSERT_EQ(astro_instr_burst_open("k", 7), 0);
	ASSERT_EQ(astro_instr_burst_close("k"), 0);
	EXPECT_EQ(events(), (std::vector<std::string>{ "+A", "burst k=7", "burst k end" }));
	astro_instr_state_enable();
	EXPECT_EQ(events(), (std::vector<std::string>{ "+A", "burst k=7", "burst k end", "-A", "+C", "+D" }))
		<< "on again: the observers end A and enter C then D";
}

TEST_F(Instrument, MisuseIsReported)
{
	std::string err = stderr_of([] { EXPECT_EQ(astro_instr_state_close(), -EINVAL); });
	EXPECT_TRUE(contains(err, "no state is open")) << err;
	err = stderr_of([] { EXPECT_EQ(astro_instr_burst_close("nope"), -EINVAL); });
	EXPECT_TRUE(contains(err, "astro_instr_burst_close(\"nope\")")) << err;
	err = stderr_of([] { EXPECT_EQ(astro_instr_state_open(nullptr), -EINVAL); });
	EXPECT_TRUE(contains(err, "NULL state")) << err;
	err = stderr_of([] {
		for (int i = 0; i < ASTRO_INSTR_MAX_DEPTH; i++)
			ASSERT_EQ(astro_instr_state_open("deep"), 0);
		EXPECT_EQ(astro_instr_state_open("deeper"), -ENOSPC);
	});
	EXPECT_TRUE(contains(err, "astro_instr_state_open(\"deeper\")")) << err;
	EXPECT_EQ(events().size(), size_t(ASTRO_INSTR_MAX_DEPTH));
}

// The per-task context: a state or burst a task leaves open ends when its worker leaves the task and
// comes back when a thread comes back to it (its callback, its next round); no other task carries it.
const char *in_callback = "unset";
const char *in_other = "unset";
const char *in_round2 = "unset";
int rounds;

void leaves_open(void **, void *)
{
	astro_instr_state_open("phase");
	astro_instr_burst_open("bytes", 100);
}

void sees_its_state(void *)
{
	in_callback = astro_instr_state_current();
}

void other_task(void **, void *)
{
	in_other = astro_instr_state_current();
}

void two_rounds(void **, void *)
{
	if (__atomic_fetch_add(&rounds, 1, __ATOMIC_RELAXED) == 0) {
		astro_instr_state_open("round");
		return;
	}
	in_round2 = astro_instr_state_current();
	astro_instr_state_close();
	starpu_task_get_current()->regenerate = 0;
}

TEST_F(Instrument, TaskStatesFollowTheirTask)
{
	static starpu_codelet open_cl = cpu_codelet(leaves_open, 0, "leaves_open");
	static starpu_codelet other_cl = cpu_codelet(other_task, 0, "other");
	static starpu_codelet rounds_cl = cpu_codelet(two_rounds, 0, "rounds");
	struct starpu_task *a = starpu_task_create();
	a->cl = &open_cl;
	a->callback_func = sees_its_state;
	ASSERT_EQ(starpu_task_submit(a), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(submit_detached(&other_cl), 0); // the same (only) worker, after a
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_STREQ(in_callback, "phase") << "the callback comes back to its task's state";
	EXPECT_EQ(in_other, nullptr) << "another task on the same worker does not carry it";
	EXPECT_EQ(events(), (std::vector<std::string>{ "+phase", "burst bytes=100", "-phase", "burst bytes end", // the task's run
						       "+phase", "burst bytes=100", "-phase", "burst bytes end" })) // its callback
		<< "the task's state and burst end when the worker leaves it and come back with its callback";

	rounds = 0;
	struct starpu_task *r = starpu_task_create();
	r->cl = &rounds_cl;
	r->regenerate = 1;
	ASSERT_EQ(starpu_task_submit(r), 0);
	ASSERT_TRUE(wait_until([] { return __atomic_load_n(&rounds, __ATOMIC_RELAXED) >= 2; }, 60000));
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_STREQ(in_round2, "round") << "the next round of a regenerated task finds the state its first round left open";
	std::vector<std::string> e = events();
	EXPECT_EQ(std::vector<std::string>(e.begin() + 8, e.end()), (std::vector<std::string>{ "+round", "-round", "+round", "-round" }));
	EXPECT_EQ(astro_instr_state_current(), nullptr);
}

// The replay a plugin chooses (astro_instr_context_set): a task leaves states A, B and bursts k=1, k=2,
// j=5 open; its callback gets back all of them or only the last state / the last burst of each key.
std::vector<std::string> replayed;
const char *replay_current;

void leaves_nested(void **, void *)
{
	astro_instr_state_open("A");
	astro_instr_state_open("B");
	astro_instr_burst_open("k", 1);
	astro_instr_burst_open("k", 2);
	astro_instr_burst_open("j", 5);
}

// The callback: what the observers saw when it got its task back, then what closing B and the last k shows.
void replay_callback(void *)
{
	std::lock_guard<std::mutex> g(seen_lock);
	replayed = seen;
	replay_current = astro_instr_state_current();
}

void closes_in_callback(void *)
{
	astro_instr_state_close();
	astro_instr_burst_close("k");
	std::lock_guard<std::mutex> g(seen_lock);
	replayed = seen;
	replay_current = astro_instr_state_current();
}

struct Replay
{
	enum astro_instr_context context;
	std::vector<std::string> at_callback;
};

// The mode's name in gtest's messages (not its bytes).
void PrintTo(const Replay &r, std::ostream *os)
{
	static const char *const names[] = { "plain", "stacked states", "stacked bursts", "stacked states and bursts" };
	*os << names[r.context & 3];
}

class InstrumentReplay : public Instrument, public testing::WithParamInterface<Replay>
{
};

std::vector<std::string> run_nested(void (*callback)(void *))
{
	static starpu_codelet cl = cpu_codelet(leaves_nested, 0, "nested");
	replayed.clear();
	replay_current = "unset";
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->callback_func = callback;
	EXPECT_EQ(starpu_task_submit(t), 0);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	const std::vector<std::string> run{ "+A", "+B", "burst k=1", "burst k=2", "burst j=5",
					    "-B", "-A", "burst k end", "burst k end", "burst j end" };
	EXPECT_GE(replayed.size(), run.size());
	if (replayed.size() < run.size())
		return {};
	EXPECT_EQ(std::vector<std::string>(replayed.begin(), replayed.begin() + run.size()), run) << "the task's own run, every mode";
	return std::vector<std::string>(replayed.begin() + run.size(), replayed.end());
}

TEST_P(InstrumentReplay, CallbackGetsWhatTheModeSays)
{
	ASSERT_EQ(astro_instr_context_set(GetParam().context), 0);
	EXPECT_EQ(astro_instr_context_get(), GetParam().context);
	EXPECT_EQ(run_nested(replay_callback), GetParam().at_callback);
	EXPECT_STREQ(replay_current, "B") << "the stack is whole whatever the observers were shown";
}

const Replay replays[] = {
	{ ASTRO_INSTR_CONTEXT_PLAIN, { "+B", "burst k=2", "burst j=5" } },
	{ ASTRO_INSTR_CONTEXT_STACKED_STATES, { "+A", "+B", "burst k=2", "burst j=5" } },
	{ ASTRO_INSTR_CONTEXT_STACKED_BURSTS, { "+B", "burst k=1", "burst k=2", "burst j=5" } },
	{ ASTRO_INSTR_CONTEXT_STACKED_STATES_AND_BURSTS, { "+A", "+B", "burst k=1", "burst k=2", "burst j=5" } },
};

std::string replay_name(const testing::TestParamInfo<Replay> &info)
{
	static const char *const names[] = { "Plain", "StackedStates", "StackedBursts", "StackedStatesAndBursts" };
	return names[info.param.context];
}

INSTANTIATE_TEST_SUITE_P(FourBehaviours, InstrumentReplay, testing::ValuesIn(replays), replay_name);

TEST_F(Instrument, ReplayDefaultsToStackedAndRefusesBadModes)
{
	EXPECT_EQ(astro_instr_context_get(), ASTRO_INSTR_CONTEXT_STACKED_STATES_AND_BURSTS);
	std::string err = stderr_of([] { EXPECT_EQ(astro_instr_context_set((enum astro_instr_context)4), -EINVAL); });
	EXPECT_TRUE(contains(err, "astro_instr_context_set(4)")) << err;
	err = stderr_of([] { EXPECT_EQ(astro_instr_context_set((enum astro_instr_context)-1), -EINVAL); });
	EXPECT_TRUE(contains(err, "no such replay")) << err;
	EXPECT_EQ(astro_instr_context_get(), ASTRO_INSTR_CONTEXT_STACKED_STATES_AND_BURSTS);
}

TEST_F(Instrument, PlainReplayShowsHiddenEntriesAsTheLastOnesClose)
{
	ASSERT_EQ(astro_instr_context_set(ASTRO_INSTR_CONTEXT_PLAIN), 0);
	EXPECT_EQ(run_nested(closes_in_callback),
		  (std::vector<std::string>{ "+B", "burst k=2", "burst j=5", "-B", "+A", "burst k end", "burst k=1" }))
		<< "closing B shows A, closing the last k shows the older k";
	EXPECT_STREQ(replay_current, "A");
}

// astro_instr_task_leave_cpu / enter_cpu: a task that gives its thread away while it runs.
std::vector<std::string> at_leave, at_enter;
const char *current_after_leave = "unset", *current_after_enter = "unset";
int leave_ret = 1, enter_ret = 1, second_leave_ret = 1;

void yields(void **, void *)
{
	struct starpu_task *self = starpu_task_get_current();
	astro_instr_state_open("work");
	astro_instr_burst_open("bytes", 64);
	leave_ret = astro_instr_task_leave_cpu(self);
	{
		std::lock_guard<std::mutex> g(seen_lock);
		at_leave = seen;
	}
	current_after_leave = astro_instr_state_current();
	second_leave_ret = astro_instr_task_leave_cpu(self); // nothing open: nothing to do
	enter_ret = astro_instr_task_enter_cpu(self);
	{
		std::lock_guard<std::mutex> g(seen_lock);
		at_enter = seen;
	}
	current_after_enter = astro_instr_state_current();
	astro_instr_burst_close("bytes");
	astro_instr_state_close();
}

TEST_F(Instrument, TaskLeavesAndEntersTheCpuOnRequest)
{
	static starpu_codelet cl = cpu_codelet(yields, 0, "yields");
	ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(leave_ret, 0);
	EXPECT_EQ(second_leave_ret, 0);
	EXPECT_EQ(enter_ret, 0);
	EXPECT_EQ(at_leave, (std::vector<std::string>{ "+work", "burst bytes=64", "-work", "burst bytes end" }))
		<< "leaving: the task's state and burst end for the observers";
	EXPECT_EQ(current_after_leave, nullptr) << "and leave the thread's stack";
	EXPECT_EQ(at_enter, (std::vector<std::string>{ "+work", "burst bytes=64", "-work", "burst bytes end", "+work", "burst bytes=64" }))
		<< "entering: they open again with their value";
	EXPECT_STREQ(current_after_enter, "work");
	EXPECT_EQ(events().size(), 8u) << "closed in the task: nothing left for the end of its run";
	EXPECT_EQ(astro_instr_state_current(), nullptr);
}

// Left with astro_instr_task_leave_cpu and not entered again before its end: what it raised meanwhile is held
// (the delayed event list) and its callback, coming back to it, gets both, in order.
void leaves_without_coming_back(void **, void *)
{
	astro_instr_state_open("outer");
	astro_instr_task_leave_cpu(starpu_task_get_current());
	astro_instr_state_open("inner");
}

TEST_F(Instrument, LeftTwiceKeepsBothInOrder)
{
	static starpu_codelet cl = cpu_codelet(leaves_without_coming_back, 0, "left_twice");
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->callback_func = replay_callback;
	replayed.clear();
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(replayed, (std::vector<std::string>{ "+outer", "-outer", "+outer", "+inner" }))
		<< "inner, opened off its CPU, is held until its callback comes back to it, then opens above outer";
	EXPECT_STREQ(replay_current, "inner");
	std::vector<std::string> e = events();
	EXPECT_EQ(std::count(e.begin(), e.end(), "+inner"), 1) << "emitted once";
	EXPECT_EQ(std::count(e.begin(), e.end(), "-inner"), 1) << "and ended once, when the callback returns";
}

// The delayed event list: a task leaves states A, B and bursts k=1, k=2 open, gives its CPU away, and raises
// while it is off: nothing is emitted then; at astro_instr_task_enter_cpu what it left comes back as the mode
// says, then what it raised, in order, none lost or twice.
struct OffCpu
{
	std::vector<int> rets;
	std::vector<std::string> before_off, while_off, at_enter;
	const char *current_off = "unset", *current_back = "unset";
} off_cpu;

std::vector<std::string> snapshot()
{
	std::lock_guard<std::mutex> g(seen_lock);
	return seen;
}

void raises_while_off(void **, void *)
{
	struct starpu_task *self = starpu_task_get_current();
	astro_instr_state_open("A");
	astro_instr_state_open("B");
	astro_instr_burst_open("k", 1);
	astro_instr_burst_open("k", 2);
	off_cpu.rets.push_back(astro_instr_task_leave_cpu(self));
	off_cpu.before_off = snapshot();
	off_cpu.rets.push_back(astro_instr_state_open("io"));
	off_cpu.rets.push_back(astro_instr_burst_open("x", 5));
	off_cpu.rets.push_back(astro_instr_burst_close("x"));
	off_cpu.rets.push_back(astro_instr_state_close()); // io
	off_cpu.rets.push_back(astro_instr_state_close()); // B, which it left open
	off_cpu.rets.push_back(astro_instr_burst_close("k")); // k=2, which it left open
	off_cpu.rets.push_back(astro_instr_burst_open("late", 9));
	off_cpu.rets.push_back(astro_instr_task_leave_cpu(self)); // off already: nothing to do
	off_cpu.current_off = astro_instr_state_current();
	off_cpu.while_off = snapshot();
	off_cpu.rets.push_back(astro_instr_task_enter_cpu(self));
	off_cpu.at_enter = snapshot();
	off_cpu.current_back = astro_instr_state_current();
	astro_instr_burst_close("late");
	astro_instr_burst_close("k");
	astro_instr_state_close(); // A
}

class InstrumentDelayed : public Instrument, public testing::WithParamInterface<Replay>
{
};

TEST_P(InstrumentDelayed, HeldWhileOffTheCpuAndEmittedInOrderWhenBack)
{
	static starpu_codelet cl = cpu_codelet(raises_while_off, 0, "off_cpu");
	ASSERT_EQ(astro_instr_context_set(GetParam().context), 0);
	off_cpu = OffCpu();
	ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(off_cpu.rets, std::vector<int>(10, 0));
	const std::vector<std::string> run{ "+A", "+B", "burst k=1", "burst k=2", "-B", "-A", "burst k end", "burst k end" };
	EXPECT_EQ(off_cpu.before_off, run) << "leaving: what it left open ends";
	EXPECT_EQ(off_cpu.while_off, run) << "nothing raised off its CPU is emitted then";
	EXPECT_EQ(off_cpu.current_off, nullptr) << "nor changes the thread's stack";
	ASSERT_GE(off_cpu.at_enter.size(), run.size());
	EXPECT_EQ(std::vector<std::string>(off_cpu.at_enter.begin() + run.size(), off_cpu.at_enter.end()), GetParam().at_callback)
		<< "back: what it left open as the mode says, then what it raised off its CPU, in order";
	EXPECT_STREQ(off_cpu.current_back, "A") << "io and B closed while it was off";
	std::vector<std::string> e = events();
	for (const char *once : { "+io", "-io", "burst x=5", "burst x end", "burst late=9", "burst late end" })
		EXPECT_EQ(std::count(e.begin(), e.end(), once), 1) << once << " is emitted once";
	EXPECT_EQ(e.back(), "-A") << "all closed in the task";
	EXPECT_EQ(astro_instr_state_current(), nullptr);
}

const Replay delayed_replays[] = {
	{ ASTRO_INSTR_CONTEXT_PLAIN,
	  { "+B", "burst k=2", "+io", "burst x=5", "burst x end", "-io", "-B", "+A", "burst k end", "burst k=1", "burst late=9" } },
	{ ASTRO_INSTR_CONTEXT_STACKED_STATES,
	  { "+A", "+B", "burst k=2", "+io", "burst x=5", "burst x end", "-io", "-B", "burst k end", "burst k=1", "burst late=9" } },
	{ ASTRO_INSTR_CONTEXT_STACKED_BURSTS,
	  { "+B", "burst k=1", "burst k=2", "+io", "burst x=5", "burst x end", "-io", "-B", "+A", "burst k end", "burst late=9" } },
	{ ASTRO_INSTR_CONTEXT_STACKED_STATES_AND_BURSTS,
	  { "+A", "+B", "burst k=1", "burst k=2", "+io", "burst x=5", "burst x end", "-io", "-B", "burst k end", "burst late=9" } },
};

INSTANTIATE_TEST_SUITE_P(FourBehaviours, InstrumentDelayed, testing::ValuesIn(delayed_replays), replay_name);

// A task that ends off its CPU, no callback to come back to it: what it raised is flushed when it is freed,
// each state or burst it opened closed at once; a close of what it left open is in the trace already.
void ends_off_cpu(void **, void *)
{
	astro_instr_state_open("outer");
	astro_instr_burst_open("k", 1);
	astro_instr_task_leave_cpu(starpu_task_get_current());
	astro_instr_state_open("inner");
	astro_instr_burst_open("k", 3);
	astro_instr_state_open("x");
	astro_instr_state_close();   // x
	astro_instr_burst_close("k"); // k=3
	astro_instr_burst_close("k"); // k=1, which it left open
	astro_instr_burst_open("j", 4);
}

TEST_F(Instrument, DelayedEventsOfATaskEndingOffItsCpuAreFlushed)
{
	static starpu_codelet cl = cpu_codelet(ends_off_cpu, 0, "ends_off");
	const std::vector<std::string> run{ "+outer", "burst k=1", "-outer", "burst k end" };
	const std::vector<std::string> flushed{ "+inner", "burst k=3", "+x", "-x", "burst k end", "burst j=4", "burst j end", "-inner" };
	// Kept by the application: held until starpu_task_destroy.
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->destroy = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(events(), run) << "held while the task lives";
	starpu_task_destroy(t);
	std::vector<std::string> both = run;
	both.insert(both.end(), flushed.begin(), flushed.end());
	EXPECT_EQ(events(), both) << "flushed when it is freed, balanced";
	// Destroyed at its end: flushed before wait_for_all returns.
	seen.clear();
	ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(events(), both) << "an auto-destroyed task flushes at its end";
	EXPECT_EQ(astro_instr_state_current(), nullptr);
}

// Bad input while off its CPU: refused with a message naming the task, held events untouched.
std::vector<std::string> misuse_errors;
std::vector<int> misuse_rets;
std::vector<std::string> misuse_at_enter;

void misuses_while_off(void **, void *)
{
	struct starpu_task *self = starpu_task_get_current();
	astro_instr_state_open("kept");
	astro_instr_task_leave_cpu(self);
	misuse_errors.push_back(stderr_of([] { misuse_rets.push_back(astro_instr_state_open(nullptr)); }));
	misuse_errors.push_back(stderr_of([] { misuse_rets.push_back(astro_instr_burst_open(nullptr, 1)); }));
	misuse_errors.push_back(stderr_of([] { misuse_rets.push_back(astro_instr_burst_close("never")); }));
	misuse_rets.push_back(astro_instr_state_close()); // kept: fine
	misuse_errors.push_back(stderr_of([] { misuse_rets.push_back(astro_instr_state_close()); }));
	misuse_errors.push_back(stderr_of([] {
		for (int i = 0; i < ASTRO_INSTR_MAX_DEPTH; i++)
			astro_instr_state_open("deep");
		misuse_rets.push_back(astro_instr_state_open("deeper"));
	}));
	for (int i = 0; i < ASTRO_INSTR_MAX_DEPTH; i++)
		astro_instr_state_close();
	misuse_errors.push_back(stderr_of([] { misuse_rets.push_back(astro_instr_task_enter_cpu(nullptr)); }));
	astro_instr_task_enter_cpu(self);
	misuse_at_enter = snapshot();
}

TEST_F(Instrument, DelayedEventMisuseIsReported)
{
	static starpu_codelet cl = cpu_codelet(misuses_while_off, 0, "misuse_off");
	misuse_errors.clear();
	misuse_rets.clear();
	ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(misuse_errors.size(), 6u);
	EXPECT_EQ(misuse_rets, (std::vector<int>{ -EINVAL, -EINVAL, -EINVAL, 0, -EINVAL, -ENOSPC, -EINVAL }));
	EXPECT_TRUE(contains(misuse_errors[0], "NULL state")) << misuse_errors[0];
	EXPECT_TRUE(contains(misuse_errors[1], "NULL key")) << misuse_errors[1];
	EXPECT_TRUE(contains(misuse_errors[2], "astro_instr_burst_close(\"never\"): task 'misuse_off' is off its CPU")) << misuse_errors[2];
	EXPECT_TRUE(contains(misuse_errors[2], "no such burst")) << misuse_errors[2];
	EXPECT_TRUE(contains(misuse_errors[3], "astro_instr_state_close(): task 'misuse_off' is off its CPU")) << misuse_errors[3];
	EXPECT_TRUE(contains(misuse_errors[3], "no state open")) << misuse_errors[3];
	EXPECT_TRUE(contains(misuse_errors[4], "astro_instr_state_open(\"deeper\")")) << misuse_errors[4];
	EXPECT_TRUE(contains(misuse_errors[5], "astro_instr_task_enter_cpu: NULL task")) << misuse_errors[5];
	std::vector<std::string> expect{ "+kept", "-kept", "+kept", "-kept" };
	for (int i = 0; i < ASTRO_INSTR_MAX_DEPTH; i++)
		expect.push_back("+deep");
	for (int i = 0; i < ASTRO_INSTR_MAX_DEPTH; i++)
		expect.push_back("-deep");
	EXPECT_EQ(misuse_at_enter, expect) << "what was accepted comes back in order; what was refused is not there";
	EXPECT_EQ(events().size(), expect.size());
}

TEST_F(Instrument, LeaveAndEnterCpuRefuseATaskNotRunningHere)
{
	std::string err = stderr_of([] { EXPECT_EQ(astro_instr_task_leave_cpu(nullptr), -EINVAL); });
	EXPECT_TRUE(contains(err, "astro_instr_task_leave_cpu: NULL task")) << err;
	struct starpu_task *t = starpu_task_create();
	err = stderr_of([t] { EXPECT_EQ(astro_instr_task_enter_cpu(t), -EINVAL); });
	EXPECT_TRUE(contains(err, "not the task this thread runs")) << err;
	starpu_task_destroy(t);
}

// The event-key dictionary (Nanos++'s getInstrumentorDictionary()).
TEST_F(Instrument, DictionaryNamesKeysAndValues)
{
	unsigned before = astro_instr_key_count();
	int k = astro_instr_key_register("dict-cache-malloc", "bytes the cache allocates");
	ASSERT_GE(k, 1);
	EXPECT_EQ(astro_instr_key_lookup("dict-cache-malloc"), k) << "getEventKey";
	EXPECT_EQ(astro_instr_key_register("dict-cache-malloc", nullptr), k) << "registered again: the same id";
	EXPECT_EQ(astro_instr_key_register("dict-cache-malloc", "bytes the cache allocates"), k);
	EXPECT_EQ(astro_instr_key_lookup("dict-unknown"), -ENOENT);
	int k2 = astro_instr_key_register("dict-phase", "");
	EXPECT_EQ(k2, k + 1);
	EXPECT_EQ(astro_instr_key_count(), before + 2);

	EXPECT_EQ(astro_instr_value_register("dict-phase", 1, "init"), 0);
	EXPECT_EQ(astro_instr_value_register("dict-phase", 2, "solve"), 0);
	EXPECT_EQ(astro_instr_value_register("dict-phase", 2, "solve"), 0) << "the same name again";
	uint64_t v = 0;
	EXPECT_EQ(astro_instr_value_lookup("dict-phase", "solve", &v), 0);
	EXPECT_EQ(v, 2u);
	EXPECT_EQ(astro_instr_value_lookup("dict-phase", "nope", &v), -ENOENT);
	EXPECT_EQ(astro_instr_value_lookup("dict-unknown", "solve", &v), -ENOENT);
	EXPECT_STREQ(astro_instr_value_name("dict-phase", 1), "init");
	EXPECT_EQ(astro_instr_value_name("dict-phase", 3), nullptr);
	EXPECT_EQ(astro_instr_value_name("dict-unknown", 1), nullptr);

	// Listing: every key by id, with its values in order.
	struct astro_instr_key_info info;
	ASSERT_EQ(astro_instr_key_get((unsigned)k, &info), 0);
	EXPECT_EQ(info.id, unsigned(k));
	EXPECT_STREQ(info.name, "dict-cache-malloc");
	EXPECT_STREQ(info.description, "bytes the cache allocates");
	EXPECT_EQ(info.nvalues, 0u);
	ASSERT_EQ(astro_instr_key_get((unsigned)k2, &info), 0);
	EXPECT_EQ(info.nvalues, 2u);
	const char *name = nullptr;
	ASSERT_EQ(astro_instr_value_get((unsigned)k2, 1, &v, &name), 0);
	EXPECT_EQ(v, 2u);
	EXPECT_STREQ(name, "solve");
	bool found = false;
	for (unsigned id = 1; id <= astro_instr_key_count(); id++)
		found |= astro_instr_key_get(id, &info) == 0 && std::string(info.name) == "dict-phase";
	EXPECT_TRUE(found);
}

TEST_F(Instrument, DictionaryMisuseIsReported)
{
	ASSERT_GE(astro_instr_key_register("dict-misuse", "first"), 1);
	std::string err = stderr_of([] { EXPECT_EQ(astro_instr_key_register("dict-misuse", "second"), -EEXIST); });
	EXPECT_TRUE(contains(err, "another description (\"first\")")) << err;
	err = stderr_of([] { EXPECT_EQ(astro_instr_key_register(nullptr, "x"), -EINVAL); });
	EXPECT_TRUE(contains(err, "empty key name")) << err;
	EXPECT_EQ(astro_instr_key_register("", "x"), -EINVAL); // the same message (printed once)
	err = stderr_of([] { EXPECT_EQ(astro_instr_value_register("dict-nokey", 1, "a"), -ENOENT); });
	EXPECT_TRUE(contains(err, "no such key")) << err;
	ASSERT_EQ(astro_instr_value_register("dict-misuse", 1, "one"), 0);
	err = stderr_of([] { EXPECT_EQ(astro_instr_value_register("dict-misuse", 1, "uno"), -EEXIST); });
	EXPECT_TRUE(contains(err, "(\"one\" = 1)")) << err;
	err = stderr_of([] { EXPECT_EQ(astro_instr_value_register("dict-misuse", 2, "one"), -EEXIST); });
	EXPECT_TRUE(contains(err, "taken already")) << err;
	err = stderr_of([] { EXPECT_EQ(astro_instr_value_register("dict-misuse", 2, nullptr), -EINVAL); });
	EXPECT_TRUE(contains(err, "empty name")) << err;
	struct astro_instr_key_info info;
	err = stderr_of([&info] { EXPECT_EQ(astro_instr_key_get(0, &info), -EINVAL); });
	EXPECT_TRUE(contains(err, "no such key")) << err;
	err = stderr_of([] { EXPECT_EQ(astro_instr_key_get(1, nullptr), -EINVAL); });
	EXPECT_TRUE(contains(err, "NULL info")) << err;
	int id = astro_instr_key_lookup("dict-misuse");
	err = stderr_of([id] { EXPECT_EQ(astro_instr_value_get((unsigned)id, 1, nullptr, nullptr), -EINVAL); });
	EXPECT_TRUE(contains(err, "no such key or value")) << err;
}

// astrolabe-perf-list lists the dictionary and the replay a plugin chose at its init (tests/plugins/instr_keys_test.c).
std::string perf_list(const std::string &args, int *status)
{
	std::string out;
	*status = run_command(env_or("ASTRO_TEST_TOOLS_DIR", "") + "/astrolabe-perf-list " + args, &out);
	return out;
}

TEST(InstrumentListing, PerfListShowsKeysValuesAndReplay)
{
	ASSERT_FALSE(env_or("ASTRO_TEST_TOOLS_DIR", "").empty()) << "ASTRO_TEST_TOOLS_DIR is not set: run through make check";
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("instr_keys_test.so"));
	const std::string plugins = build_plugin_path();
	ScopedEnv path("STARPU_PLUGIN_PATH", plugins + ":" + dir.path());
	int status;
	std::string text = perf_list("", &status);
	ASSERT_EQ(status, 0) << text;
	EXPECT_TRUE(contains(text, "instrumentation: task replay plain, event keys: 2\n")) << text;
	EXPECT_TRUE(contains(text, "  test-phase ") && contains(text, " the phase the test application is in\n")) << text;
	EXPECT_TRUE(contains(text, "                    1  setup\n") && contains(text, "                    2  solve\n")) << text;
	EXPECT_TRUE(contains(text, "  test-bytes ")) << text;
	if (!have_program("python3"))
		GTEST_SKIP() << "python3 missing";
	TempDir out;
	ASSERT_TRUE(out.write("list.json", perf_list("--json", &status)));
	ASSERT_EQ(status, 0);
	std::string listed;
	ASSERT_EQ(run_command("python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))[\"instrumentation\"];"
			      "print(i[\"replay\"], [(k[\"id\"], k[\"name\"], [(v[\"value\"], v[\"name\"]) for v in k[\"values\"]]) for k in i[\"keys\"]])' '" +
				      out.path() + "/list.json'",
			      &listed),
		  0)
		<< listed;
	EXPECT_EQ(listed, "plain [(1, 'test-phase', [(1, 'setup'), (2, 'solve')]), (2, 'test-bytes', [])]\n");

	// Without the plugin: the default replay, no keys.
	ScopedEnv plain("STARPU_PLUGIN_PATH", plugins);
	text = perf_list("", &status);
	ASSERT_EQ(status, 0) << text;
	EXPECT_TRUE(contains(text, "instrumentation: task replay stacked states and bursts, event keys: 0\n")) << text;
}

// Compiling the instrumentation out (ASTRO_DISABLE_INSTRUMENTATION, configure --disable-instrumentation): code in
// ASTRO_INSTRUMENT() / NANOS_INSTRUMENT() and the kernel's calls on the task path leave no astro_instr reference in
// the object, while the default build keeps them. Compiled with the build's compiler, checked with nm.
class CompiledOut : public testing::Test
{
protected:
	void SetUp() override
	{
		if (env_or("ASTRO_TEST_CC", "").empty())
			GTEST_SKIP() << "ASTRO_TEST_CC is not set: run through make check";
		if (sanitizer_build())
			GTEST_SKIP() << "compiled without the sanitizer's flags, as in the plain build, which runs it";
		if (!have_program("nm"))
			GTEST_SKIP() << "nm missing (Debian binutils)";
	}
	// The undefined symbols of source compiled with flags (and -DASTRO_DISABLE_INSTRUMENTATION when off).
	std::string undefined(const std::string &source, const std::string &flags, bool off)
	{
		std::string object = dir_.path() + "/object.o", out;
		int status = run_command(env_or("ASTRO_TEST_CC", "") + " -O0 -c " + flags + (off ? " -DASTRO_DISABLE_INSTRUMENTATION" : "") +
						 " '" + source + "' -o '" + object + "' 2>&1",
					 &out);
		EXPECT_EQ(status, 0) << source << ": " << out;
		out.clear();
		EXPECT_EQ(run_command("nm -u '" + object + "'", &out), 0);
		return out;
	}
	TempDir dir_;
};

TEST_F(CompiledOut, UserCodeInTheMacroVanishes)
{
	ASSERT_TRUE(dir_.write("user.c", "#include <astrolabe/instrument.h>\n"
					 "int user(void)\n{\n"
					 "\tASTRO_INSTRUMENT(int k = astro_instr_key_lookup(\"cache-malloc\"));\n"
					 "\tASTRO_INSTRUMENT(astro_instr_state_and_burst_open(\"cache\", \"cache-malloc\", 4096));\n"
					 "\tNANOS_INSTRUMENT(astro_instr_state_and_burst_close(\"cache-malloc\"));\n"
					 "\tASTRO_INSTRUMENT((void)k);\n"
					 "\treturn 0;\n}\n"));
	std::string flags = env_or("ASTRO_TEST_INCLUDES", "");
	std::string on = undefined(dir_.path() + "/user.c", flags, false);
	EXPECT_TRUE(contains(on, "astro_instr_key_lookup") && contains(on, "astro_instr_state_and_burst_open") &&
		    contains(on, "astro_instr_state_and_burst_close"))
		<< "built by default, the calls stay: " << on;
	std::string off = undefined(dir_.path() + "/user.c", flags, true);
	EXPECT_FALSE(contains(off, "astro_instr")) << "compiled out: " << off;
}

TEST_F(CompiledOut, KernelTaskPathCallsVanish)
{
	std::string flags = env_or("ASTRO_TEST_INCLUDES", "") + " " + env_or("ASTRO_TEST_KERNEL_CFLAGS", "");
	std::string kernel = env_or("ASTRO_TEST_SRCDIR", "") + "/../kernel/";
	for (const char *file : { "run/worker_loop.c", "tasks/task.c", "tasks/job.c", "tasks/instr_cpu.c" }) {
		std::string on = undefined(kernel + file, flags, false);
		EXPECT_TRUE(contains(on, "_astro_instr_")) << file << " built by default calls the instrumentation: " << on;
		std::string off = undefined(kernel + file, flags, true);
		EXPECT_FALSE(contains(off, "astro_instr")) << file << " compiled out: " << off;
	}
}

} // namespace
