// SPDX-License-Identifier: LGPL-2.1-or-later
// Instrumentation states and bursts (astrolabe/instrument.h), seen by an
// observer of the hub as the trace recorder sees them.
#include "helpers.h"
#include <astrolabe/instrument.h>
#include <astrolabe/observe.h>
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

} // namespace
