// SPDX-License-Identifier: LGPL-2.1-or-later
// libapapi's public interface (apapi.h, APAPI's API): the installed header
// alone, timers with and without an event set (a C program of
// test_apapi_prog.c), real counters of PAPI's perf_event component where
// PAPI reads them, absent components, event definitions in CSV, the
// environment's files and lists, and the printed table.
#include "helpers.h"

#include "test_apapi_prog.h"

#include <apapi.h>
#include <cstring>
#ifdef HAVE_PAPI
#include <papi.h>
#endif

using namespace astro_test;

namespace {

std::string sh_quoted(const std::string &s)
{
	std::string q = "'";
	for (char c : s)
		q += c == '\'' ? std::string("'\\''") : std::string(1, c);
	return q + "'";
}

// The component number of a PAPI component, or a negative value (no PAPI: -1).
// The index of PAPI's component NAME, or -1 when this PAPI lacks it or has it disabled (perf_event
// in a VM or container without performance counters: papi_component_avail says why).
int component_index(const char *name)
{
#ifdef HAVE_PAPI
	int cidx = PAPI_get_component_index(name);
	const PAPI_component_info_t *info = cidx >= 0 ? PAPI_get_component_info(cidx) : nullptr;
	return info && !info->disabled ? cidx : -1;
#else
	(void)name;
	return -1;
#endif
}

// Why PAPI cannot give real counts of perf::TASK-CLOCK here, or "" when it can: PAPI_read
// must see the thread's task clock grow (in some VMs, it reads 0 where PAPI_stop does not).
std::string why_no_real_counts()
{
#ifdef HAVE_PAPI
	int set = PAPI_NULL;
	long long read_value = 0, stop_value = 0;
	if (PAPI_create_eventset(&set) != PAPI_OK || PAPI_add_named_event(set, "perf::TASK-CLOCK") != PAPI_OK)
		return "PAPI cannot count perf::TASK-CLOCK here";
	PAPI_start(set);
	volatile double x = 0;
	for (int i = 0; i < 20000000; i++)
		x += i * 0.5;
	PAPI_read(set, &read_value);
	PAPI_stop(set, &stop_value);
	PAPI_cleanup_eventset(set);
	PAPI_destroy_eventset(&set);
	if (read_value > 0)
		return "";
	return "PAPI_read reads 0 for perf::TASK-CLOCK here (PAPI_stop reads " + std::to_string(stop_value) +
	       "): the perf_event component's counts are unusable while running in this machine";
#else
	return "Astrolabe was built without PAPI";
#endif
}

struct ApapiPapi : public ::testing::Test
{
	int init = 0;
	void SetUp() override { init = APAPI_init(); }
	void TearDown() override { APAPI_destroy(); }
	bool papi_usable() const
	{
#ifdef HAVE_PAPI
		return init == PAPI_VER_CURRENT;
#else
		return false;
#endif
	}
};

std::string stdout_of(const std::function<void()> &f)
{
	testing::internal::CaptureStdout();
	f();
	return testing::internal::GetCapturedStdout();
}

} // namespace

TEST(ApapiHeader, CompilesAloneInCAndCxx)
{
	TempDir dir;
	ASSERT_TRUE(dir.write("alone.c", "#include <apapi.h>\nint main(void) { struct apapi_timer *t = 0; return APAPI_FIELDS + (t != 0); }\n"));
	std::string out;
	std::string inc = " -I" + sh_quoted(SAMPLER_SRCDIR) + " ";
	EXPECT_EQ(run_command(std::string(APAPI_TEST_CC) + " -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only" + inc +
				      sh_quoted(dir.path() + "/alone.c") + " 2>&1", &out), 0) << out;
	EXPECT_EQ(run_command(std::string(APAPI_TEST_CXX) + " -x c++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only" + inc +
				      sh_quoted(dir.path() + "/alone.c") + " 2>&1", &out), 0) << out;
}

TEST(ApapiTimer, WithoutAnEventSetCallsItsCallbackThenALastTime)
{
	apapi_prog_result r;
	apapi_prog_run(nullptr, 1000000, 5, &r);
	EXPECT_EQ(r.step, 0);
	EXPECT_GE(r.calls, 5);
	EXPECT_EQ(r.lasts, 1) << "one last measurement, at the stop";
	EXPECT_EQ(r.last_was_final, 1);
	EXPECT_EQ(r.state_after, APAPI_TIMER_STATE_DONE);
	EXPECT_EQ(r.destroyed_null, 1);
}

TEST(ApapiTimer, StatesAndBadArgumentsAreSaid)
{
	apapi_timer *t = nullptr;
	std::string err = stderr_of([&] { EXPECT_EQ(APAPI_create_timer(&t, 0, 0, nullptr, nullptr, nullptr), -1); });
	EXPECT_EQ(t, nullptr);
	EXPECT_TRUE(contains(err, "APAPI_create_timer: interval 0 s 0 ns is not positive")) << err;
	err = stderr_of([&] { EXPECT_EQ(APAPI_create_timer(&t, 0, 2000000000L, nullptr, nullptr, nullptr), -1); });
	EXPECT_TRUE(contains(err, "0 <= tv_nsec < 1000000000")) << err;

	ASSERT_EQ(APAPI_create_timer(&t, 0, 1000000, nullptr, nullptr, nullptr), 0);
	EXPECT_EQ(t->state, APAPI_TIMER_STATE_READY);
	err = stderr_of([&] { EXPECT_EQ(APAPI_stop_timer(t), -1); });
	EXPECT_TRUE(contains(err, "APAPI_callstop_timer: the timer is READY, not STARTED (start it first)")) << err;
	err = stderr_of([&] { EXPECT_EQ(APAPI_reset_timer(t, 0, 1000000, nullptr, nullptr, nullptr), -1); });
	EXPECT_TRUE(contains(err, "APAPI_reset_timer: the timer is READY, not DONE")) << err;
	EXPECT_EQ(APAPI_change_timer(t, 0, 2000000, nullptr, nullptr, nullptr), 0);
	EXPECT_EQ(t->interval.tv_nsec, 2000000);
	ASSERT_EQ(APAPI_start_timer(t), 0);
	EXPECT_EQ(t->state, APAPI_TIMER_STATE_STARTED);
	err = stderr_of([&] { EXPECT_EQ(APAPI_start_timer(t), -1); });
	EXPECT_TRUE(contains(err, "APAPI_start_timer: the timer is STARTED, not READY")) << err;
	ASSERT_EQ(APAPI_stop_timer(t), 0);
	EXPECT_EQ(t->state, APAPI_TIMER_STATE_DONE);
	// Reset, started again, then destroyed while running: no last measurement, no crash.
	ASSERT_EQ(APAPI_reset_timer(t, 0, 1000000, nullptr, nullptr, nullptr), 0);
	ASSERT_EQ(APAPI_start_timer(t), 0);
	EXPECT_EQ(APAPI_destroy_timer(&t), 0);
	EXPECT_EQ(t, nullptr);
	err = stderr_of([&] { EXPECT_EQ(APAPI_destroy_timer(&t), -1); });
	EXPECT_TRUE(contains(err, "APAPI_destroy_timer: no timer given")) << err;
}

TEST_F(ApapiPapi, AnAbsentComponentIsAnErrorNotACrash)
{
	apapi_eventset *set = reinterpret_cast<apapi_eventset *>(this);
	std::string err = stderr_of([&] { EXPECT_EQ(APAPI_init_apapi_eventset_cmp(&set, 9999, nullptr, nullptr), -1); });
	EXPECT_EQ(set, nullptr);
	EXPECT_TRUE(contains(err, "no event set of PAPI component 9999")) << err;
	// rapl (no energy counters here): PAPI_get_component_index refuses it, and so does libapapi its answer.
	int rapl = component_index("rapl");
	if (rapl < 0) {
		err = stderr_of([&] { EXPECT_EQ(APAPI_init_apapi_eventset_cmp(&set, rapl, nullptr, nullptr), -1); });
		EXPECT_TRUE(contains(err, "no event set of PAPI component " + std::to_string(rapl))) << err;
	}
	int eventset = 0, n = 0;
	err = stderr_of([&] { EXPECT_EQ(APAPI_create_eventset_cmp_all(9999, &eventset, &n), -1); });
	EXPECT_EQ(n, 0);
	EXPECT_FALSE(err.empty());
#ifdef HAVE_PAPI
	// A component this PAPI has but disabled (sde outside a program with SDEs, a GPU's without the GPU).
	for (int cidx = 0; cidx < PAPI_num_components(); cidx++) {
		const PAPI_component_info_t *info = PAPI_get_component_info(cidx);
		if (!info || !info->disabled)
			continue;
		err = stderr_of([&] { EXPECT_EQ(APAPI_init_apapi_eventset_cmp(&set, cidx, nullptr, nullptr), -1); });
		EXPECT_TRUE(contains(err, "disabled in this PAPI")) << info->short_name << ": " << err;
		break;
	}
#endif
	err = stderr_of([&] { EXPECT_EQ(APAPI_destroy_apapi_eventset(&set), -1); });
	EXPECT_TRUE(contains(err, "APAPI_destroy_apapi_eventset: no event set given")) << err;
}

TEST_F(ApapiPapi, ATimerOverPerfEventReadsItsCounters)
{
	if (!papi_usable())
		GTEST_SKIP() << "PAPI is not usable here (APAPI_init answered " << init << ")";
	int cidx = component_index("perf_event");
	if (cidx < 0)
		GTEST_SKIP() << "PAPI has no usable perf_event component here";
	char task_clock[] = "perf::TASK-CLOCK";
	char *names[] = { task_clock, nullptr };
	char busy[] = "busy", ms[] = "ms", rate[] = "share", none[] = "1";
	apapi_event_ops defs[2] = {};
	defs[0] = { task_clock, APAPI_OP1_DIV_DIFF_TIME, APAPI_STAT_ALL, APAPI_STAT_AVG, 0x7fffffffffffffffLL, busy, ms, 1e6, rate, none, 1 };
	apapi_eventset *set = nullptr;
	ASSERT_EQ(APAPI_init_apapi_eventset_cmp(&set, cidx, names, defs), 0);
	ASSERT_NE(set, nullptr);
	if (set->num_events == 0) {
		APAPI_destroy_apapi_eventset(&set);
		GTEST_SKIP() << "PAPI cannot count perf::TASK-CLOCK here";
	}
	EXPECT_STREQ(set->cmp_name, "perf_event");
	EXPECT_EQ(APAPI_apapi_eventset_find_event(set, task_clock), 0);
	EXPECT_EQ(APAPI_apapi_eventset_find_event(set, busy), -1);
	EXPECT_STREQ(set->event_ops[0].value0_unit, "ms") << "the definition given wins";
	EXPECT_EQ(set->values_op1[0], APAPI_OP1_DIV_DIFF_TIME);
	EXPECT_EQ(set->values1_stats[0], APAPI_STAT_AVG);
	EXPECT_EQ(set->max_counters[0], 0x7fffffffffffffffLL);

	apapi_prog_result r;
	apapi_prog_run(set, 2000000, 6, &r);
	EXPECT_EQ(r.step, 0);
	EXPECT_GE(r.calls, 6);
	EXPECT_EQ(r.lasts, 1);
	EXPECT_GE(set->count, 6) << "one reading per call";
	EXPECT_GT(set->last_time, set->first_time);
	EXPECT_GE(set->current_time, set->previous_time);
	std::string table = stdout_of([&] { APAPI_print_apapi_eventset(set); });
	EXPECT_TRUE(contains(table, "perf_event: 1 events")) << table;
	EXPECT_TRUE(contains(table, "perf::TASK-CLOCK")) << table;
	EXPECT_TRUE(contains(table, "busy")) << table;

	double busy_ns = set->values0[APAPI_ACC];
	long long last_count = set->current_counters[0];
	EXPECT_EQ(APAPI_destroy_apapi_eventset(&set), 0);
	EXPECT_EQ(set, nullptr);
	if (busy_ns > 0) {
		EXPECT_GT(last_count, 0) << "the last raw value is the task clock since the start";
		EXPECT_LE(busy_ns, (double)last_count) << "value0 adds up the growth of the raw value";
		return;
	}
	std::string why = why_no_real_counts();
	ASSERT_FALSE(why.empty()) << "PAPI reads the task clock here, but the timer's value0 did not grow";
	GTEST_SKIP() << why << " (the timer's readings, times and callbacks were checked)";
}

TEST_F(ApapiPapi, AnEventSetATimerUsesIsNotFreed)
{
	int cidx = component_index("perf_event");
	if (!papi_usable() || cidx < 0)
		GTEST_SKIP() << "PAPI or its perf_event component is not usable here";
	char task_clock[] = "perf::TASK-CLOCK";
	char *names[] = { task_clock, nullptr };
	apapi_eventset *set = nullptr;
	ASSERT_EQ(APAPI_init_apapi_eventset_cmp(&set, cidx, names, nullptr), 0);
	apapi_timer *t = nullptr, *other = nullptr;
	ASSERT_EQ(APAPI_create_timer(&t, 0, 1000000, nullptr, nullptr, set), 0);
	std::string err = stderr_of([&] { EXPECT_EQ(APAPI_destroy_apapi_eventset(&set), -1); });
	EXPECT_TRUE(contains(err, "a timer still uses the event set of perf_event")) << err;
	err = stderr_of([&] { EXPECT_EQ(APAPI_create_timer(&other, 0, 1000000, nullptr, nullptr, set), -1); });
	EXPECT_TRUE(contains(err, "one timer per event set")) << err;
	EXPECT_EQ(APAPI_destroy_timer(&t), 0);
	EXPECT_EQ(APAPI_destroy_apapi_eventset(&set), 0);
}

TEST(ApapiFiles, EventOperationsCsvGoodAndBad)
{
	char good[] = "# name,op1,...\n"
		      "\n"
		      "rapl:::PACKAGE_ENERGY:PACKAGE0,APAPI_OP1_DIV_DIFF_TIME,APAPI_STAT_ACC,APAPI_STAT_MIN|APAPI_STAT_MAX|APAPI_STAT_AVG,0xffffffff,energy,Ws,1E9,power,W,1\r\n"
		      "nvml:::x:temperature,APAPI_OP1_NOP,APAPI_STAT_ALL,APAPI_STAT_NO,0,temperature,C,1,none,none,1";
	apapi_event_ops *ops = nullptr;
	int n = -1;
	ASSERT_EQ(APAPI_read_event_ops_csv(good, ',', &ops, &n), 0);
	ASSERT_EQ(n, 2);
	EXPECT_STREQ(ops[0].event_name, "rapl:::PACKAGE_ENERGY:PACKAGE0");
	EXPECT_GE(ops[0].event_name, good) << "the strings point into the input";
	EXPECT_LT(ops[0].event_name, good + sizeof(good));
	EXPECT_EQ(ops[0].op1, APAPI_OP1_DIV_DIFF_TIME);
	EXPECT_EQ(ops[0].value0, APAPI_STAT_ACC);
	EXPECT_EQ(ops[0].value1, APAPI_STAT_MIN | APAPI_STAT_MAX | APAPI_STAT_AVG);
	EXPECT_EQ(ops[0].max_sample, 0xffffffffLL);
	EXPECT_STREQ(ops[0].value0_unit, "Ws");
	EXPECT_EQ(ops[0].value0_prefix, 1e9);
	EXPECT_STREQ(ops[0].value1_unit, "W") << "the carriage return is cut";
	EXPECT_EQ(ops[1].op1, APAPI_OP1_NOP);
	EXPECT_EQ(ops[1].value0, APAPI_STAT_ALL);
	EXPECT_EQ(ops[2].event_name, nullptr) << "a last definition without a name ends the array";
	free(ops);

	char semicolons[] = "a:::b;APAPI_OP1_SAMPLE_DIFF;APAPI_STAT_MAX;APAPI_STAT_NO;0;t;u;2;t;u;1\n";
	ASSERT_EQ(APAPI_read_event_ops_csv(semicolons, ';', &ops, &n), 0);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(ops[0].value0_prefix, 2);
	free(ops);

	char bad[] = "ok:::a,APAPI_OP1_SAMPLE_DIFF,APAPI_STAT_ALL,APAPI_STAT_NO,0,t,u,1,t,u,1\n"
		     "few:::b,APAPI_OP1_SAMPLE_DIFF\n"
		     "op:::c,APAPI_OP1_NOPE,APAPI_STAT_ALL,APAPI_STAT_NO,0,t,u,1,t,u,1\n";
	ops = reinterpret_cast<apapi_event_ops *>(bad);
	std::string err = stderr_of([&] { EXPECT_EQ(APAPI_read_event_ops_csv(bad, ',', &ops, &n), -1); });
	EXPECT_EQ(ops, nullptr);
	EXPECT_TRUE(contains(err, "event definitions:2: 2 fields where an event definition has 11")) << err;
	EXPECT_TRUE(contains(err, "event definitions:3: the operation is not APAPI_OP1_NOP")) << err;
	EXPECT_TRUE(contains(err, "2 malformed lines: no definition read")) << err;
	char empty[] = "";
	err = stderr_of([&] { EXPECT_EQ(APAPI_read_event_ops_csv(empty, ',', &ops, &n), -1); });
	EXPECT_TRUE(contains(err, "no event definition (the input is empty)")) << err;
	err = stderr_of([&] { EXPECT_EQ(APAPI_read_event_ops_csv(nullptr, ',', &ops, &n), -1); });
	EXPECT_TRUE(contains(err, "the input is NULL")) << err;
}

TEST(ApapiFiles, EnvironmentVariablesAreRead)
{
	TempDir dir;
	ASSERT_TRUE(dir.write("ops.csv", "x:::y,APAPI_OP1_SAMPLE_DIFF,APAPI_STAT_ACC,APAPI_STAT_NO,0,t,u,1,t,u,1\n"));
	ASSERT_TRUE(dir.write("bad.csv", "x:::y,APAPI_OP1_SAMPLE_DIFF\n"));
	ASSERT_TRUE(dir.write("list.txt", "# events\nrapl:::PACKAGE_ENERGY:PACKAGE0\n\nperf::TASK-CLOCK\nnvml:::gpu:power\n"
					  "rapl:::DRAM_ENERGY:PACKAGE0\n"));
	char *buffer = nullptr;
	apapi_event_ops *ops = nullptr;
	int n = 0;
	{
		ScopedEnv env("APAPI_EVENTOPS", dir.path() + "/ops.csv");
		ASSERT_EQ(APAPI_read_env_eventops(&buffer, &ops, &n), 0);
		EXPECT_EQ(n, 1);
		EXPECT_STREQ(ops[0].event_name, "x:::y");
		EXPECT_EQ(ops[0].value0, APAPI_STAT_ACC);
		free(ops);
		free(buffer);
	}
	{
		ScopedEnv env("APAPI_EVENTOPS", dir.path() + "/bad.csv");
		std::string err = stderr_of([&] { EXPECT_EQ(APAPI_read_env_eventops(&buffer, &ops, &n), -1); });
		EXPECT_EQ(buffer, nullptr);
		EXPECT_TRUE(contains(err, dir.path() + "/bad.csv:1: 2 fields")) << err;
	}
	{
		ScopedEnv env("APAPI_EVENTOPS", dir.path() + "/missing.csv");
		std::string err = stderr_of([&] { EXPECT_EQ(APAPI_read_env_eventops(&buffer, &ops, &n), -1); });
		EXPECT_TRUE(contains(err, "cannot read " + dir.path() + "/missing.csv")) << err;
	}
	{
		ScopedEnv env("APAPI_EVENTOPS", nullptr);
		EXPECT_EQ(APAPI_read_env_eventops(&buffer, &ops, &n), -1) << "not set";
	}

	char rapl[] = "rapl", perf[] = "perf_event", ipmi[] = "ipmi";
	char *cmps[] = { rapl, perf, ipmi, nullptr };
	char ***sorted = nullptr;
	char **used = nullptr;
	{
		ScopedEnv env("APAPI_EVENTLIST", dir.path() + "/list.txt");
		ASSERT_EQ(APAPI_read_env_eventlist(cmps, &buffer, &sorted, &used), 0);
		ASSERT_NE(used, nullptr);
		EXPECT_STREQ(used[0], "rapl");
		EXPECT_STREQ(used[1], "perf_event") << "a name without a component is the CPU's";
		EXPECT_EQ(used[2], nullptr) << "ipmi has no event; nvml is not asked for";
		EXPECT_STREQ(sorted[0][0], "rapl:::PACKAGE_ENERGY:PACKAGE0");
		EXPECT_STREQ(sorted[0][1], "rapl:::DRAM_ENERGY:PACKAGE0");
		EXPECT_EQ(sorted[0][2], nullptr);
		EXPECT_STREQ(sorted[1][0], "perf::TASK-CLOCK");
		EXPECT_EQ(sorted[1][1], nullptr);
		EXPECT_EQ(sorted[2], nullptr);
		for (int i = 0; sorted[i]; i++)
			free(sorted[i]);
		free(sorted);
		free(used);
		free(buffer);
	}
	{
		ScopedEnv env("APAPI_EVENTLIST", dir.path() + "/missing.txt");
		std::string err = stderr_of([&] { EXPECT_EQ(APAPI_read_env_eventlist(cmps, &buffer, &sorted, &used), -1); });
		EXPECT_TRUE(contains(err, "cannot read " + dir.path() + "/missing.txt")) << err;
		EXPECT_EQ(sorted, nullptr);
	}

	char **list = nullptr;
	{
		ScopedEnv env("APAPI_CMPLIST", "rapl::nvml:");
		ASSERT_EQ(APAPI_read_env_cmplist(&buffer, &list), 0);
		EXPECT_STREQ(list[0], "rapl");
		EXPECT_STREQ(list[1], "nvml");
		EXPECT_EQ(list[2], nullptr);
		EXPECT_EQ(APAPI_cmp_cmplist_index("nvml", list), 1);
		EXPECT_EQ(APAPI_cmp_cmplist_index("ipmi", list), -1);
		free(list);
		free(buffer);
	}
	{
		ScopedEnv env("APAPI_CMPLIST", nullptr);
		EXPECT_EQ(APAPI_read_env_cmplist(&buffer, &list), -1);
		EXPECT_EQ(list, nullptr);
	}
	EXPECT_EQ(APAPI_cmp_cmplist_index("rapl", APAPI_default_components), 0);
	EXPECT_GE(APAPI_cmp_cmplist_index("ipmi", APAPI_default_components), 0);
}
