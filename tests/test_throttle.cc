// SPDX-License-Identifier: LGPL-2.1-or-later
// Submission throttling (STARPU_LIMIT_MAX_SUBMITTED_TASKS and
// STARPU_LIMIT_MIN_SUBMITTED_TASKS, kernel/tasks/throttle.c): the submitting thread
// is held while the submitted tasks not yet complete are at the maximum, and
// goes on once they are down to the minimum; submissions that could never be
// let go (from callbacks and tasks, or with nothing able to complete) are not
// held. Tasks are held in their codelets on purpose, so no test depends on
// how fast the machine is.
#include "helpers.h"

#include <astrolabe/observe.h>

using namespace astro_test;

namespace {

// The throttling moments and the tasks in flight, as the observers see them.
struct Seen
{
	std::atomic<int> begins{0}, ends{0};
	std::atomic<long> count_at_end{-1};  // the largest nsubmitted seen when a hold ended
	std::atomic<long> inflight{0};       // TASK_SUBMITTED minus TASK_COMPLETED (never above the real count)
	std::atomic<long> max_inflight{0};
};
Seen *g_seen;

void record_max(std::atomic<long> &max, long v)
{
	long m = max.load();
	while (v > m && !max.compare_exchange_weak(m, v)) {
	}
}

void observe(const astro_event *e, void *)
{
	Seen *s = g_seen;
	switch (e->moment) {
	case ASTRO_MOMENT_SUBMIT_THROTTLE_BEGIN:
		s->begins++;
		break;
	case ASTRO_MOMENT_SUBMIT_THROTTLE_END:
		record_max(s->count_at_end, starpu_task_nsubmitted());
		s->ends++;
		break;
	case ASTRO_MOMENT_TASK_SUBMITTED:
		record_max(s->max_inflight, ++s->inflight);
		break;
	case ASTRO_MOMENT_TASK_COMPLETED:
		s->inflight--;
		break;
	default:
		break;
	}
}

// Subscribes observe() for the life of the object (after starpu_init: subscriptions survive it).
class Observer
{
public:
	Observer()
	{
		g_seen = &seen;
		id_ = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_SUBMIT_THROTTLE_BEGIN) |
						      ASTRO_MOMENT_BIT(ASTRO_MOMENT_SUBMIT_THROTTLE_END) |
						      ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_SUBMITTED) |
						      ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_COMPLETED) | ASTRO_OBSERVE_UNTIMED,
					      observe, nullptr);
	}
	~Observer()
	{
		if (id_ >= 0)
			astro_observe_unsubscribe(id_);
	}
	bool ok() const { return id_ >= 0; }
	Seen seen;

private:
	int id_;
};

std::atomic<int> g_ran{0};
std::atomic<long> g_max_inflight_in_task{0};

// Counts its run and the tasks in flight as the observer counts them.
void count_task(void **, void *)
{
	if (g_seen)
		record_max(g_max_inflight_in_task, g_seen->inflight.load());
	g_ran++;
}
starpu_codelet count_cl = cpu_codelet(count_task, 0, "counted");

// Tasks that wait for a token each before they end.
std::mutex g_token_lock;
std::condition_variable g_token_cond;
long g_tokens;

void give_tokens(long n)
{
	std::lock_guard<std::mutex> lock(g_token_lock);
	g_tokens += n;
	g_token_cond.notify_all();
}

void held_task(void **, void *)
{
	{
		std::unique_lock<std::mutex> lock(g_token_lock);
		g_token_cond.wait(lock, [] { return g_tokens > 0; });
		g_tokens--;
	}
	g_ran++;
}
starpu_codelet held_cl = cpu_codelet(held_task, 0, "held");

class Throttle : public testing::Test
{
protected:
	void SetUp() override
	{
		g_ran = 0;
		g_max_inflight_in_task = 0;
		g_tokens = 0;
	}
	void TearDown() override { g_seen = nullptr; }
};

TEST_F(Throttle, SubmitterIsHeldAtTheMaximumAndGoesOnAtTheMinimum)
{
	ScopedEnv max("STARPU_LIMIT_MAX_SUBMITTED_TASKS", "6"), min("STARPU_LIMIT_MIN_SUBMITTED_TASKS", "2");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	Observer obs;
	ASSERT_TRUE(obs.ok());
	const int total = 30;
	std::atomic<int> returned{0};
	std::atomic<long> max_after_submit{0};
	std::thread submitter([&] {
		for (int i = 0; i < total; i++) {
			ASSERT_EQ(submit_detached(&held_cl), 0);
			record_max(max_after_submit, starpu_task_nsubmitted());
			returned++;
		}
	});
	// Whatever fails below, the tasks end and the submitter is joined before the runtime stops.
	struct Release
	{
		std::thread &t;
		~Release()
		{
			give_tokens(1000000);
			if (t.joinable())
				t.join();
		}
	} release{submitter};
	// Nothing completes: the seventh submission is held, with six tasks in flight.
	ASSERT_TRUE(wait_until([&] { return obs.seen.begins.load() == 1; }, 60000));
	EXPECT_EQ(returned.load(), 6);
	EXPECT_EQ(starpu_task_nsubmitted(), 6);
	// Above the minimum the submitter stays held, however many complete.
	for (int k = 1; k <= 3; k++) {
		give_tokens(1);
		ASSERT_TRUE(wait_until([&] { return starpu_task_nsubmitted() == 6 - k; }, 60000)) << k;
		EXPECT_EQ(obs.seen.ends.load(), 0) << "let go with " << 6 - k << " in flight";
		EXPECT_EQ(returned.load(), 6);
	}
	// At the minimum it goes on, up to the maximum again.
	give_tokens(1);
	ASSERT_TRUE(wait_until([&] { return obs.seen.ends.load() == 1; }, 60000));
	ASSERT_TRUE(wait_until([&] { return obs.seen.begins.load() == 2; }, 60000));
	EXPECT_EQ(returned.load(), 10);
	give_tokens(1000000);
	submitter.join();
	starpu_task_wait_for_all();
	EXPECT_EQ(g_ran.load(), total);
	EXPECT_LE(max_after_submit.load(), 6);
	EXPECT_LE(obs.seen.max_inflight.load(), 6);
	EXPECT_GE(obs.seen.ends.load(), 2);
	EXPECT_EQ(obs.seen.ends.load(), obs.seen.begins.load());
	EXPECT_LE(obs.seen.count_at_end.load(), 2);
}

TEST_F(Throttle, EveryTaskRunsAndTheLimitHolds)
{
	ScopedEnv max("STARPU_LIMIT_MAX_SUBMITTED_TASKS", "4"), min("STARPU_LIMIT_MIN_SUBMITTED_TASKS", "2");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	Observer obs;
	ASSERT_TRUE(obs.ok());
	const int total = 300;
	for (int i = 0; i < total; i++)
		ASSERT_EQ(submit_detached(&count_cl), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(g_ran.load(), total);
	EXPECT_LE(obs.seen.max_inflight.load(), 4);
	EXPECT_LE(g_max_inflight_in_task.load(), 4);
	EXPECT_EQ(obs.seen.ends.load(), obs.seen.begins.load());
}

// The program sets the limits itself (starpu_set_limit_*_submitted_tasks, issue 40): one alone does not
// throttle, both do, a negative value unsets; values that make no sense are said and not used.
TEST_F(Throttle, SettersThrottleLikeTheVariables)
{
	ScopedEnv max("STARPU_LIMIT_MAX_SUBMITTED_TASKS", nullptr), min("STARPU_LIMIT_MIN_SUBMITTED_TASKS", nullptr);
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	Observer obs;
	ASSERT_TRUE(obs.ok());
	starpu_set_limit_max_submitted_tasks(4);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(submit_detached(&held_cl), 0);
	EXPECT_EQ(starpu_task_nsubmitted(), 10) << "a maximum alone throttles nothing";
	give_tokens(10);
	starpu_task_wait_for_all();
	EXPECT_EQ(obs.seen.begins.load(), 0);

	starpu_set_limit_min_submitted_tasks(2);
	obs.seen.max_inflight = 0;
	g_max_inflight_in_task = 0;
	const int total = 300;
	for (int i = 0; i < total; i++)
		ASSERT_EQ(submit_detached(&count_cl), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(g_ran.load(), 10 + total);
	EXPECT_LE(obs.seen.max_inflight.load(), 4);
	EXPECT_LE(g_max_inflight_in_task.load(), 4);

	starpu_set_limit_max_submitted_tasks(-1);
	int begins = obs.seen.begins.load();
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(submit_detached(&held_cl), 0);
	EXPECT_EQ(starpu_task_nsubmitted(), 10) << "unset: no limit";
	give_tokens(10);
	starpu_task_wait_for_all();
	EXPECT_EQ(obs.seen.begins.load(), begins);

	std::string err = stderr_of([] { starpu_set_limit_max_submitted_tasks(0); });
	EXPECT_TRUE(contains(err, "starpu_set_limit_max_submitted_tasks: maximum 0 and minimum 2 of submitted tasks: submission is not throttled"))
		<< err;
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(submit_detached(&held_cl), 0);
	EXPECT_EQ(starpu_task_nsubmitted(), 10);
	give_tokens(10);
	starpu_task_wait_for_all();
}

TEST_F(Throttle, UnsetMeansNoLimit)
{
	ScopedEnv max("STARPU_LIMIT_MAX_SUBMITTED_TASKS", nullptr), min("STARPU_LIMIT_MIN_SUBMITTED_TASKS", nullptr);
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	Observer obs;
	ASSERT_TRUE(obs.ok());
	for (int i = 0; i < 20; i++)
		ASSERT_EQ(submit_detached(&held_cl), 0);
	EXPECT_EQ(starpu_task_nsubmitted(), 20);
	give_tokens(20);
	starpu_task_wait_for_all();
	EXPECT_EQ(g_ran.load(), 20);
	EXPECT_EQ(obs.seen.begins.load(), 0);
}

// Chains of tasks, each submitting the next one from its codelet (even links)
// or its callback (odd links): with two workers both could wait for the other.
const int chain_length = 40;
void chain_submit(long link);
void chain_callback(void *arg)
{
	long link = (long)(intptr_t)arg;
	if (link % 2 == 1 && link + 1 < chain_length)
		chain_submit(link + 1);
}
void chain_task(void **, void *arg)
{
	long link = (long)(intptr_t)arg;
	if (link % 2 == 0 && link + 1 < chain_length)
		chain_submit(link + 1);
	g_ran++;
}
starpu_codelet chain_cl = cpu_codelet(chain_task, 0, "chain");
void chain_submit(long link)
{
	struct starpu_task *t = starpu_task_create();
	t->cl = &chain_cl;
	t->cl_arg = (void *)(intptr_t)link;
	t->callback_func = chain_callback;
	t->callback_arg = (void *)(intptr_t)link;
	if (starpu_task_submit(t) != 0)
		starpu_task_destroy(t);
}

TEST_F(Throttle, TasksAndCallbacksSubmittingAreNotHeld)
{
	ScopedEnv max("STARPU_LIMIT_MAX_SUBMITTED_TASKS", "2"), min("STARPU_LIMIT_MIN_SUBMITTED_TASKS", "1");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	const int chains = 6;
	for (int c = 0; c < chains; c++)
		chain_submit(0);
	starpu_task_wait_for_all();
	EXPECT_EQ(g_ran.load(), chains * chain_length);
}

TEST_F(Throttle, TasksWaitingForTheApplicationDoNotHoldIt)
{
	// The tasks wait for a tag the application notifies only after submitting them all:
	// holding it until they complete would never end.
	ScopedEnv max("STARPU_LIMIT_MAX_SUBMITTED_TASKS", "3"), min("STARPU_LIMIT_MIN_SUBMITTED_TASKS", "1");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	Observer obs;
	ASSERT_TRUE(obs.ok());
	const starpu_tag_t go = 91000;
	const int total = 10;
	for (int i = 0; i < total; i++) {
		starpu_tag_t tag = go + 1 + i;
		starpu_tag_declare_deps(tag, 1, go);
		struct starpu_task *t = starpu_task_create();
		t->cl = &count_cl;
		t->use_tag = 1;
		t->tag_id = tag;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	EXPECT_EQ(obs.seen.begins.load(), 0);
	EXPECT_EQ(starpu_task_nsubmitted(), total);
	starpu_tag_notify_from_apps(go);
	starpu_task_wait_for_all();
	EXPECT_EQ(g_ran.load(), total);
}

TEST_F(Throttle, PausedRuntimeDoesNotHoldTheSubmitter)
{
	ScopedEnv max("STARPU_LIMIT_MAX_SUBMITTED_TASKS", "3"), min("STARPU_LIMIT_MIN_SUBMITTED_TASKS", "1");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	starpu_pause();
	const int total = 10;
	for (int i = 0; i < total; i++)
		ASSERT_EQ(submit_detached(&count_cl), 0);
	EXPECT_EQ(starpu_task_nsubmitted(), total);
	starpu_resume();
	starpu_task_wait_for_all();
	EXPECT_EQ(g_ran.load(), total);
}

// A bad setting is reported once at starpu_init and ignored: nothing is held.
void expect_ignored(const char *max_value, const char *min_value, const char *named)
{
	ScopedEnv max("STARPU_LIMIT_MAX_SUBMITTED_TASKS", max_value), min("STARPU_LIMIT_MIN_SUBMITTED_TASKS", min_value);
	std::string err = stderr_of([&] {
		Runtime rt(2);
		ASSERT_TRUE(rt.ok());
		for (int i = 0; i < 12; i++)
			ASSERT_EQ(submit_detached(&held_cl), 0);
		EXPECT_EQ(starpu_task_nsubmitted(), 12);
		give_tokens(12);
		starpu_task_wait_for_all();
	});
	int messages = 0;
	for (const std::string &line : lines_of(err))
		if (contains(line, "SUBMITTED_TASKS"))
			messages++;
	EXPECT_EQ(messages, named ? 1 : 0) << "MAX=" << (max_value ? max_value : "(unset)") << " MIN="
					   << (min_value ? min_value : "(unset)") << ": " << err;
	if (named)
		EXPECT_TRUE(contains(err, named)) << err;
}

TEST_F(Throttle, BadValuesGiveOneMessageAndAreIgnored)
{
	expect_ignored("lots", "2", "STARPU_LIMIT_MAX_SUBMITTED_TASKS='lots'");
	expect_ignored("8", "-4", "STARPU_LIMIT_MIN_SUBMITTED_TASKS='-4'");
	expect_ignored("8", nullptr, "set STARPU_LIMIT_MIN_SUBMITTED_TASKS");
	expect_ignored(nullptr, "3", "set STARPU_LIMIT_MAX_SUBMITTED_TASKS");
	expect_ignored("4", "6", "the minimum at most the maximum");
	expect_ignored("0", "0", "the maximum must be at least 1");
	// -1 is StarPU's "unset": no message.
	expect_ignored("-1", "-1", nullptr);
	EXPECT_EQ(g_ran.load(), 7 * 12);
}

} // namespace
