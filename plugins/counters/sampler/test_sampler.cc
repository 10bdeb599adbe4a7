// SPDX-License-Identifier: LGPL-2.1-or-later
// The sampler (the APAPI model): value0 with overflow correction, value1
// operations, statistics over scripted sequences, the configuration files
// and their errors, the timer thread, the plugin inside the runtime, atime.
#include "helpers.h"

#include "apapi_model.h"
#include "sources.h"

#include <algorithm>
#include <astrolabe/counters.h>
#include <atomic>
#include <cmath>
#include <linux/capability.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

using namespace astro_test;

namespace {

apapi_raw raw_u(uint64_t u)
{
	apapi_raw r;
	r.u = u;
	return r;
}

apapi_eventop make_op(uint64_t max_raw, APAPI_op1 op1 = APAPI_OP1_SAMPLE_DIFF, unsigned stats0 = APAPI_STAT_ALL,
		      unsigned stats1 = APAPI_STAT_ALL)
{
	apapi_eventop op = {};
	op.name = (char *)"test:::event";
	op.op1 = op1;
	op.stats[0] = stats0;
	op.stats[1] = stats1;
	op.max_raw = max_raw;
	op.type[0] = op.type[1] = (char *)"t";
	op.unit[0] = op.unit[1] = (char *)"u";
	op.factor[0] = op.factor[1] = 1.0;
	return op;
}

// What apapi_sampler_print_table() prints.
std::string table_of(apapi_sampler *sampler)
{
	char *text = nullptr;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	apapi_sampler_print_table(sampler, out);
	fclose(out);
	std::string table(text);
	free(text);
	return table;
}

// Feeds raw values at times into a fresh event and returns it (clear it after).
struct Scripted
{
	apapi_event ev;
	Scripted(const apapi_eventop &op, const std::vector<uint64_t> &raws, const std::vector<uint64_t> &times)
	{
		apapi_event_init(&ev, &op, 0);
		for (size_t i = 0; i < raws.size(); i++)
			apapi_event_sample(&ev, raw_u(raws[i]), times[i]);
	}
	~Scripted() { apapi_event_clear(&ev); }
};

TEST(SamplerModel, OverflowCorrectedAtTheCounterWidth)
{
	EXPECT_EQ(apapi_raw_diff(10, 25, 0xffffffffu), 15u);
	EXPECT_EQ(apapi_raw_diff(0xfffffff0u, 0x10u, 0xffffffffu), 0x20u);          // 32-bit wrap
	EXPECT_EQ(apapi_raw_diff(0xffffffffu, 0, 0xffffffffu), 1u);                 // exactly one step over
	EXPECT_EQ(apapi_raw_diff(UINT64_MAX - 4, 5, UINT64_MAX), 10u);              // 64-bit wrap
	EXPECT_EQ(apapi_raw_diff(1000, 1, 1023), 25u);                              // 10-bit counter: 23 steps to 1023, 1 to 0, 1 to 1

	// Through the event: an accumulating 32-bit counter that wraps twice.
	Scripted s(make_op(0xffffffffu), { 0xfffffff0u, 0x10u, 0x30u, 0xfffffff0u, 0x5u }, { 0, 10, 20, 30, 40 });
	EXPECT_EQ(s.ev.stats[0].count, 4u);
	EXPECT_EQ(s.ev.stats[0].acc, 32.0 + 32.0 + double(0xfffffff0u - 0x30u) + 21.0);
	EXPECT_EQ(s.ev.stats[0].min, 21.0); // 0xfffffff0 -> 0x5: 15 steps to the maximum, 6 more
	EXPECT_EQ(s.ev.value0[1], 21.0);
	EXPECT_EQ(s.ev.value0[0], double(0xfffffff0u - 0x30u));
	EXPECT_EQ(s.ev.raw[1].u, 0x5u);
	EXPECT_EQ(s.ev.raw[0].u, 0xfffffff0u);
}

TEST(SamplerModel, NonAccumulatingValueIsTheLastRawValue)
{
	Scripted s(make_op(0), { 7, 5, 1, 9 }, { 0, 10, 30, 60 });
	EXPECT_EQ(s.ev.value0[1], 9.0);
	EXPECT_EQ(s.ev.value0[0], 1.0);
	// Statistics of value0 over 5 (10 ns), 1 (20 ns), 9 (30 ns).
	EXPECT_EQ(s.ev.stats[0].count, 3u);
	EXPECT_EQ(s.ev.stats[0].min, 1.0);
	EXPECT_EQ(s.ev.stats[0].max, 9.0);
	EXPECT_EQ(s.ev.stats[0].acc, 15.0);
	EXPECT_DOUBLE_EQ(apapi_stats_avg(&s.ev.stats[0]), (5.0 * 10 + 1.0 * 20 + 9.0 * 30) / 60.0);
	// value1 = sample1 - sample0: -4 (20 ns), 8 (30 ns).
	EXPECT_EQ(s.ev.stats[1].count, 2u);
	EXPECT_EQ(s.ev.stats[1].min, -4.0);
	EXPECT_EQ(s.ev.stats[1].max, 8.0);
	EXPECT_EQ(s.ev.stats[1].acc, 4.0);
	EXPECT_DOUBLE_EQ(apapi_stats_avg(&s.ev.stats[1]), (-4.0 * 20 + 8.0 * 30) / 50.0);
}

TEST(SamplerModel, EveryOperationGivesItsValue1)
{
	// value0: 100 over [0,10], 300 over [10,30]: sample0 = 100, sample1 = 300, time1 - time0 = 20.
	const std::vector<uint64_t> raws = { 0, 100, 400 }, times = { 0, 10, 30 };
	struct
	{
		APAPI_op1 op;
		double value1;
	} cases[] = {
		{ APAPI_OP1_SAMPLE_DIFF, 200.0 },
		{ APAPI_OP1_SAMPLE1_MUL_DIFF_TIME, 300.0 * 20 },
		{ APAPI_OP1_AVG_SAMPLE_MUL_DIFF_TIME, (100.0 + 300.0) / 2.0 * 20 },
		{ APAPI_OP1_DIV_DIFF_TIME, 300.0 / 20 },
	};
	for (auto &c : cases) {
		Scripted s(make_op(UINT64_MAX, c.op), raws, times);
		EXPECT_EQ(s.ev.value1, c.value1) << apapi_op1_name(c.op);
		EXPECT_EQ(s.ev.stats[1].acc, c.value1) << apapi_op1_name(c.op);
	}
}

TEST(SamplerModel, StatisticsOverAKnownSequence)
{
	// An energy counter in nJ sampled every 10 ms, then once 20 ms later.
	std::vector<uint64_t> raws = { 1000, 3000, 4000, 9000, 11000 };
	std::vector<uint64_t> times = { 0, 10000000, 20000000, 30000000, 50000000 };
	Scripted s(make_op(0xffffffffu, APAPI_OP1_DIV_DIFF_TIME), raws, times);
	// value0: 2000, 1000, 5000 (10 ms each), 2000 (20 ms).
	EXPECT_EQ(s.ev.stats[0].min, 1000.0);
	EXPECT_EQ(s.ev.stats[0].max, 5000.0);
	EXPECT_EQ(s.ev.stats[0].acc, 10000.0);
	EXPECT_DOUBLE_EQ(apapi_stats_avg(&s.ev.stats[0]), (2000.0 + 1000 + 5000 + 2000 * 2) / 5);
	// value1 = value0 / dt (W): 1e-4, 5e-4 (10 ms each), 1e-4 (20 ms).
	EXPECT_DOUBLE_EQ(s.ev.stats[1].min, 1000.0 / 1e7);
	EXPECT_DOUBLE_EQ(s.ev.stats[1].max, 5000.0 / 1e7);
	EXPECT_DOUBLE_EQ(s.ev.stats[1].acc, 1000.0 / 1e7 + 5000.0 / 1e7 + 2000.0 / 2e7);
	EXPECT_DOUBLE_EQ(apapi_stats_avg(&s.ev.stats[1]), (1e-4 * 1e7 + 5e-4 * 1e7 + 1e-4 * 2e7) / 4e7);
	EXPECT_EQ(apapi_stats_avg(&s.ev.stats[1]) * 0, 0.0);
}

TEST(SamplerModel, WideCounterGoingDownRestarted)
{
	Scripted s(make_op(INT64_MAX), { 100, 160, 7 }, { 0, 10, 20 });
	EXPECT_EQ(s.ev.stats[0].acc, 60.0 + 7.0);
	Scripted narrow(make_op(0xffff), { 100, 160, 7 }, { 0, 10, 20 });
	EXPECT_EQ(narrow.ev.stats[0].acc, 60.0 + double(0xffff - 160 + 7 + 1));
}

TEST(SamplerModel, FloatingAccumulatingValues)
{
	apapi_event ev;
	apapi_eventop op = make_op(INT64_MAX);
	apapi_event_init(&ev, &op, 1);
	apapi_raw r;
	r.d = 1.5;
	apapi_event_sample(&ev, r, 0);
	r.d = 4.0;
	apapi_event_sample(&ev, r, 10);
	EXPECT_EQ(ev.value0[1], 2.5);
	r.d = 0.5; // restarted
	apapi_event_sample(&ev, r, 20);
	EXPECT_EQ(ev.value0[1], 0.5);
	EXPECT_EQ(ev.stats[0].acc, 3.0);
	apapi_event_clear(&ev);
}

// ------------------------------------------------------------------ files

TEST(SamplerFiles, EventOpsFileGivesDerivedValues)
{
	TempDir dir;
	ASSERT_TRUE(dir.write("ops.txt", "# energy of a package\n\n"
					 "rapl:::PACKAGE_ENERGY:PACKAGE0,APAPI_OP1_DIV_DIFF_TIME,APAPI_STAT_ACC,APAPI_STAT_MIN|APAPI_STAT_MAX|APAPI_STAT_AVG,0xffffffff,energy,Ws,1E9,power,W,1\n"
					 "x:::gauge,APAPI_OP1_AVG_SAMPLE_MUL_DIFF_TIME,APAPI_STAT_ALL,APAPI_STAT_NO,0,level,l,1,area,l.ns,1\r\n"));
	apapi_eventops ops = {};
	EXPECT_EQ(apapi_eventops_read(dir.file("ops.txt").c_str(), &ops), 0);
	ASSERT_EQ(ops.n, 2u);
	const apapi_eventop *rapl = apapi_eventops_find(&ops, "rapl:::PACKAGE_ENERGY:PACKAGE0");
	ASSERT_NE(rapl, nullptr);
	EXPECT_EQ(rapl->op1, APAPI_OP1_DIV_DIFF_TIME);
	EXPECT_EQ(rapl->stats[0], (unsigned)APAPI_STAT_ACC);
	EXPECT_EQ(rapl->stats[1], (unsigned)(APAPI_STAT_MIN | APAPI_STAT_MAX | APAPI_STAT_AVG));
	EXPECT_EQ(rapl->max_raw, 0xffffffffu);
	EXPECT_STREQ(rapl->type[0], "energy");
	EXPECT_STREQ(rapl->unit[0], "Ws");
	EXPECT_EQ(rapl->factor[0], 1e9);
	EXPECT_STREQ(rapl->type[1], "power");
	EXPECT_STREQ(rapl->unit[1], "W");
	EXPECT_EQ(rapl->factor[1], 1.0);
	const apapi_eventop *gauge = apapi_eventops_find(&ops, "x:::gauge");
	ASSERT_NE(gauge, nullptr);
	EXPECT_STREQ(gauge->unit[1], "l.ns");
	EXPECT_EQ(gauge->stats[1], (unsigned)APAPI_STAT_NO);

	// The derived value of the file's definition: 2 J over 1 s (wrapping) is 2 W.
	Scripted s(*rapl, { 0xffffffffu - 999999999u, 1000000000u }, { 0, 1000000000u });
	EXPECT_EQ(s.ev.value0[1], 2e9);
	Scripted g(*gauge, { 0, 4, 6 }, { 0, 10, 20 });
	EXPECT_EQ(g.ev.value1, (4.0 + 6.0) / 2 * 10);

	// The table prints value / factor, only the statistics asked for.
	apapi_sampler sampler;
	apapi_sampler_init(&sampler);
	apapi_component *c = apapi_sampler_add(&sampler, "rapl", 1000, [](apapi_component *, apapi_raw *) { return 0; }, nullptr);
	ASSERT_EQ(apapi_component_add_event(c, rapl, 0), 0);
	apapi_event_sample(&c->events[0], raw_u(0), 0);
	apapi_event_sample(&c->events[0], raw_u(3000000000u), 1000000000u);
	apapi_event_sample(&c->events[0], raw_u(4000000000u), 2000000000u);
	apapi_event_sample(&c->events[0], raw_u(1705032704u), 3000000000u); // 6e9 wrapped at 32 bits
	std::string table = table_of(&sampler);
	EXPECT_TRUE(contains(table, "value0  energy           Ws              3              -              -              -              6")) << table;
	EXPECT_TRUE(contains(table, "value1  power            W               2              1              2            1.5              -")) << table;
	apapi_sampler_clear(&sampler);
	apapi_eventops_clear(&ops);
}

TEST(SamplerFiles, EveryMalformedLineIsReportedWithItsNumber)
{
	TempDir dir;
	ASSERT_TRUE(dir.write("ops.txt",
			      "# comment\n"                                                                                       // 1
			      "a:::ok,APAPI_OP1_SAMPLE_DIFF,APAPI_STAT_ALL,APAPI_STAT_NO,0,t,u,1,t,u,1\n"                         // 2
			      "b:::few,APAPI_OP1_SAMPLE_DIFF,APAPI_STAT_ALL\n"                                                    // 3
			      "c:::op,APAPI_OP1_NOPE,APAPI_STAT_ALL,APAPI_STAT_NO,0,t,u,1,t,u,1\n"                                // 4
			      "\n"                                                                                                // 5
			      "d:::stat,APAPI_OP1_SAMPLE_DIFF,APAPI_STAT_MIN|APAPI_STAT_BAD,APAPI_STAT_NO,0,t,u,1,t,u,1\n"        // 6
			      "e:::max,APAPI_OP1_SAMPLE_DIFF,APAPI_STAT_ALL,APAPI_STAT_NO,-1,t,u,1,t,u,1\n"                       // 7
			      "f:::factor,APAPI_OP1_SAMPLE_DIFF,APAPI_STAT_ALL,APAPI_STAT_NO,0,t,u,0,t,u,1\n"                     // 8
			      "g:::many,APAPI_OP1_SAMPLE_DIFF,APAPI_STAT_ALL,APAPI_STAT_NO,0,t,u,1,t,u,1,extra\n"                 // 9
			      "h:::empty,APAPI_OP1_SAMPLE_DIFF,,APAPI_STAT_NO,0,t,u,1,t,u,1\n"                                    // 10
			      "i:::ok,APAPI_OP1_DIV_DIFF_TIME,APAPI_STAT_NO,APAPI_STAT_AVG,12,t,u,2.5,t,u,1e-9\n"));              // 11
	apapi_eventops ops = {};
	int bad = -1;
	std::string err = stderr_of([&] { bad = apapi_eventops_read(dir.file("ops.txt").c_str(), &ops); });
	EXPECT_EQ(bad, 7) << err;
	for (int line : { 3, 4, 6, 7, 8, 9, 10 })
		EXPECT_TRUE(contains(err, dir.file("ops.txt") + ":" + std::to_string(line) + ": ")) << line << "\n" << err;
	for (int line : { 1, 2, 5, 11 })
		EXPECT_FALSE(contains(err, dir.file("ops.txt") + ":" + std::to_string(line) + ": ")) << line << "\n" << err;
	// Nothing good is lost.
	ASSERT_EQ(ops.n, 2u);
	EXPECT_NE(apapi_eventops_find(&ops, "a:::ok"), nullptr);
	ASSERT_NE(apapi_eventops_find(&ops, "i:::ok"), nullptr);
	EXPECT_EQ(apapi_eventops_find(&ops, "i:::ok")->max_raw, 12u);
	EXPECT_EQ(apapi_eventops_find(&ops, "i:::ok")->factor[1], 1e-9);
	apapi_eventops_clear(&ops);

	ASSERT_TRUE(dir.write("list.txt", "# events\nrapl:::PACKAGE_ENERGY:PACKAGE0\n\nbad event\nPAPI_TOT_INS\nrapl:::PACKAGE_ENERGY:PACKAGE0\n"));
	apapi_eventlist list = {};
	err = stderr_of([&] { bad = apapi_eventlist_read(dir.file("list.txt").c_str(), &list); });
	EXPECT_EQ(bad, 1);
	EXPECT_TRUE(contains(err, dir.file("list.txt") + ":4: 'bad event'")) << err;
	ASSERT_EQ(list.n, 2u);
	EXPECT_TRUE(apapi_event_in_component(list.names[0], "rapl"));
	EXPECT_FALSE(apapi_event_in_component(list.names[0], "rap"));
	EXPECT_TRUE(apapi_event_in_component(list.names[1], APAPI_CPU_COMPONENT));
	apapi_eventlist_clear(&list);

	err = stderr_of([&] { bad = apapi_eventlist_read(dir.file("missing.txt").c_str(), &list); });
	EXPECT_EQ(bad, -ENOENT);
	EXPECT_TRUE(contains(err, "missing.txt")) << err;
}

TEST(SamplerFiles, DefaultFilesAreValid)
{
	apapi_eventops ops = {};
	apapi_eventlist list = {};
	std::string err = stderr_of([&] {
		EXPECT_EQ(apapi_eventops_read(SAMPLER_SRCDIR "/default_eventops.txt", &ops), 0);
		EXPECT_EQ(apapi_eventlist_read(SAMPLER_SRCDIR "/default_eventlist.txt", &list), 0);
	});
	EXPECT_EQ(err, "");
	// Every listed event has its definition.
	for (unsigned i = 0; i < list.n; i++)
		EXPECT_NE(apapi_eventops_find(&ops, list.names[i]), nullptr) << list.names[i];
	EXPECT_GE(list.n, 4u);
	apapi_eventops_clear(&ops);
	apapi_eventlist_clear(&list);
}

TEST(SamplerFiles, EnvironmentChoosesListsAndComponents)
{
	TempDir dir;
	ASSERT_TRUE(dir.write("list.txt", "astrolabe:::starpu.task.g_peak_ready\n"));
	ASSERT_TRUE(dir.write("ops.txt", "astrolabe:::starpu.task.g_total_submitted,APAPI_OP1_SAMPLE_DIFF,APAPI_STAT_MAX,APAPI_STAT_NO,0,a,b,1,c,d,1\n"));
	ScopedEnv list("APAPI_EVENTLIST", dir.file("list.txt"));
	ScopedEnv ops("APAPI_EVENTOPS", dir.file("ops.txt"));
	ScopedEnv cmps("APAPI_CMPLIST", "astrolabe:rapl");
	ScopedEnv soft("APAPI_SOFTFAIL", "1");
	apapi_config cfg;
	ASSERT_EQ(apapi_config_load(&cfg, SAMPLER_SRCDIR), 0);
	EXPECT_EQ(cfg.softfail, 1);
	ASSERT_EQ(cfg.ncomponents, 2u);
	EXPECT_STREQ(cfg.components[0], "astrolabe");
	EXPECT_STREQ(cfg.components[1], "rapl");
	const char **names;
	// The user's list wins for the component it names, the default list serves the others.
	ASSERT_EQ(apapi_config_events(&cfg, "astrolabe", &names), 1u);
	EXPECT_STREQ(names[0], "astrolabe:::starpu.task.g_peak_ready");
	free(names);
	ASSERT_EQ(apapi_config_events(&cfg, "rapl", &names), 2u);
	free(names);
	EXPECT_EQ(apapi_config_events(&cfg, "sde", &names), 0u);
	EXPECT_EQ(names, nullptr);
	// The user's definition replaces the default one; an undefined event gets the fallback.
	apapi_eventop op;
	apapi_config_op(&cfg, "astrolabe:::starpu.task.g_total_submitted", 1, "", &op);
	EXPECT_EQ(op.stats[0], (unsigned)APAPI_STAT_MAX);
	EXPECT_STREQ(op.unit[0], "b");
	apapi_eventop_clear(&op);
	apapi_config_op(&cfg, "astrolabe:::starpu.task.g_peak_ready", INT64_MAX, "tasks", &op);
	EXPECT_EQ(op.max_raw, (uint64_t)INT64_MAX);
	EXPECT_EQ(op.op1, APAPI_OP1_DIV_DIFF_TIME);
	EXPECT_STREQ(op.unit[1], "tasks/s");
	apapi_eventop_clear(&op);
	apapi_config_clear(&cfg);

	ScopedEnv missing("APAPI_EVENTOPS", dir.file("nothing.txt"));
	std::string err = stderr_of([&] { EXPECT_LT(apapi_config_load(&cfg, SAMPLER_SRCDIR), 0); });
	EXPECT_TRUE(contains(err, "nothing.txt")) << err;
	apapi_config_clear(&cfg);
}

TEST(SamplerFiles, Intervals)
{
	int bad = 0;
	const char *spec = "nvml:250000000:ipmi:3000000000";
	EXPECT_EQ(apapi_interval_for(spec, "nvml", 7, &bad), 250000000u);
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(apapi_interval_for(spec, "ipmi", 7, &bad), 3000000000u);
	EXPECT_EQ(apapi_interval_for(spec, "rapl", 7, &bad), 7u);
	EXPECT_EQ(apapi_intervals_check(spec), 0);
	// A bare number is every component's interval (atime -t 250000000).
	EXPECT_EQ(apapi_interval_for("250000000", "rapl", 7, &bad), 250000000u);
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(apapi_interval_for("250000000", "astrolabe", 7, &bad), 250000000u);
	EXPECT_EQ(apapi_intervals_check("250000000"), 0);
	for (const char *wrong : { "nvml", "nvml:", "nvml:abc", ":5", "nvml:5:", "nvml:0", "nvml:-5", "nvml:5x", "0", "5x",
				   "99999999999999999999999" }) {
		std::string err = stderr_of([&] { EXPECT_EQ(apapi_intervals_check(wrong), -EINVAL) << wrong; });
		EXPECT_TRUE(contains(err, "malformed")) << wrong;
		EXPECT_EQ(apapi_interval_for(wrong, "nvml", 7, &bad), 7u);
		EXPECT_EQ(bad, 1) << wrong;
	}
}

// ------------------------------------------------------------------ timer

struct ScriptedSource
{
	std::atomic<uint64_t> reads{ 0 };
	std::vector<uint64_t> times, deadlines;
};

int read_scripted(apapi_component *c, apapi_raw *raw)
{
	auto *src = static_cast<ScriptedSource *>(c->arg);
	// A counter that grows by 3 each read, wrapping at 8 bits.
	uint64_t n = src->reads.fetch_add(1) + 1;
	raw[0].u = (n * 3) & 0xff;
	src->times.push_back(apapi_now_ns());
	src->deadlines.push_back(c->deadline_ns);
	return 0;
}

// The schedule's arithmetic on a scripted clock: wake-ups on time, a little
// late, late by several intervals; each sample answers a deadline on the
// schedule start + k * interval (the latest passed), the skipped ones are
// counted, and after any number of wake-ups the next deadline is still on
// the schedule: no drift.
TEST(SamplerTimer, ScheduleNeverDrifts)
{
	const uint64_t start = 1000000000000ull, interval = 10000000; // 10 ms
	uint64_t next = start + interval, missed = 0, answered = 0, previous = start;
	uint64_t lcg = 12345;
	for (int tick = 0; tick < 100000; tick++) {
		lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t r = lcg >> 33; // 31 random bits
		// 60% within a tenth of the interval, 30% later within the interval, 10% up to 4 intervals late
		uint64_t late = r % 10 < 6 ? r % (interval / 10 + 1) : r % 10 < 9 ? r % interval : r % (4 * interval);
		uint64_t now = next + late;
		uint64_t before = missed, expected_next = next + (late / interval + 1) * interval;
		uint64_t deadline = apapi_schedule_advance(&next, interval, now, &missed);
		answered++;
		ASSERT_EQ((deadline - start) % interval, 0u) << "tick " << tick << ": off the schedule";
		ASSERT_LE(deadline, now);
		ASSERT_LT(now - deadline, interval) << "the sample answers the latest deadline passed";
		ASSERT_GT(deadline, previous) << "each deadline is answered once";
		ASSERT_EQ(missed - before, (deadline - previous) / interval - 1) << "the deadlines skipped are counted";
		ASSERT_EQ(next, deadline + interval);
		ASSERT_EQ(next, expected_next);
		previous = deadline;
	}
	// Every deadline up to the last is either answered or missed, none twice.
	EXPECT_EQ(next, start + (answered + missed + 1) * interval) << "the schedule drifted";
	// Wake-ups exactly on time answer every deadline.
	uint64_t exact = start + interval, none = 0;
	for (uint64_t k = 1; k <= 1000; k++)
		ASSERT_EQ(apapi_schedule_advance(&exact, interval, exact, &none), start + k * interval);
	EXPECT_EQ(none, 0u);
	EXPECT_EQ(exact, start + 1001 * interval);
}

TEST(SamplerTimer, SamplesAtItsIntervalAndCorrectsWraps)
{
	apapi_sampler sampler;
	apapi_sampler_init(&sampler);
	ScriptedSource src;
	const uint64_t interval = 5000000; // 5 ms
	apapi_component *c = apapi_sampler_add(&sampler, "scripted", interval, read_scripted, &src);
	apapi_eventop op = make_op(0xff, APAPI_OP1_DIV_DIFF_TIME);
	ASSERT_EQ(apapi_component_add_event(c, &op, 0), 0);
	ASSERT_EQ(apapi_sampler_start(&sampler), 0);
	EXPECT_GE(src.reads.load(), 1u); // the first sample is taken before start returns
	// The timer thread asked for the finest timer slack (its waits end at the deadline), and has its name.
	std::string slack = read_file("/proc/" + std::to_string(sampler.thread_id) + "/timerslack_ns");
	if (!slack.empty())
		EXPECT_EQ(std::stoul(slack), 1ul);
	EXPECT_EQ(read_file("/proc/" + std::to_string(sampler.thread_id) + "/comm"), APAPI_THREAD_NAME "\n");
	ASSERT_TRUE(wait_until([&] { return src.reads.load() >= 200; }, 60000));
	apapi_sampler_stop(&sampler);
	const uint64_t n = src.reads.load();
	// Every value0 is 3, across the 8-bit wraps: exact whatever the timing.
	EXPECT_EQ(c->events[0].stats[0].count, n - 1);
	EXPECT_EQ(c->events[0].stats[0].min, 3.0);
	EXPECT_EQ(c->events[0].stats[0].max, 3.0);
	EXPECT_EQ(c->events[0].stats[0].acc, 3.0 * double(n - 1));
	// Deadlines are absolute, start + k * interval: no sample is early (the
	// i-th scheduled one comes at least i intervals after the start), and
	// however late the thread wakes up, the schedule keeps its phase (the
	// next deadline is still on the grid, after the samples taken and the
	// deadlines missed). Both hold exactly on any machine.
	std::vector<uint64_t> &t = src.times;
	const uint64_t scheduled = t.size() - 2; // neither the start's sample nor the stop's
	for (uint64_t i = 1; i <= scheduled; i++)
		ASSERT_GE(t[i] - sampler.start_ns, i * interval) << "sample " << i << " came before its deadline";
	EXPECT_EQ(c->next_ns, sampler.start_ns + (scheduled + c->nmissed + 1) * interval) << "the schedule drifted";
	// Each sample is told the deadline it answers: the start for the first,
	// then deadlines on the schedule, each once, none after the sample was
	// read; none for the stop's. How late the samples are is the machine's
	// (bench/sampler measures it): nothing here depends on it.
	std::vector<uint64_t> &d = src.deadlines;
	EXPECT_EQ(d[0], sampler.start_ns);
	for (uint64_t i = 1; i <= scheduled; i++) {
		ASSERT_EQ((d[i] - sampler.start_ns) % interval, 0u) << "sample " << i << " answers a deadline off the schedule";
		ASSERT_GT(d[i], d[i - 1]) << "sample " << i;
		ASSERT_LE(d[i], t[i]) << "sample " << i;
	}
	EXPECT_EQ(d[scheduled], c->next_ns - interval);
	EXPECT_EQ(d[scheduled + 1], 0u);
	// The table ends with the timer's accuracy over its deadlines, as counted.
	EXPECT_EQ(c->nscheduled, scheduled);
	EXPECT_LE(c->nlate, c->nscheduled);
	std::string table = table_of(&sampler);
	const uint64_t deadlines = scheduled + c->nmissed;
	EXPECT_TRUE(contains(table, "timer: " + std::to_string(deadlines - c->nlate - c->nmissed) + " of " + std::to_string(deadlines) +
					    " deadlines sampled within 10% of their interval"))
		<< table;
	apapi_sampler_clear(&sampler);
}

// The table's last line, from the counts alone: samples on time over all the
// deadlines (late and skipped ones failed), and the way to keep the cadence
// when fewer than 90% were, unless a priority was already asked for.
TEST(SamplerTimer, TableSaysHowManyDeadlinesWereOnTime)
{
	apapi_sampler sampler;
	apapi_sampler_init(&sampler);
	ScriptedSource src;
	apapi_component *fast = apapi_sampler_add(&sampler, "fast", 1000, read_scripted, &src);
	apapi_component *slow = apapi_sampler_add(&sampler, "slow", 5000, read_scripted, &src);
	EXPECT_EQ(table_of(&sampler).find("timer:"), std::string::npos) << "no deadline came yet";
	fast->nscheduled = 90; // 4 late, 6 skipped
	fast->nlate = 4;
	fast->nmissed = 6;
	slow->nscheduled = 20; // 1 late
	slow->nlate = 1;
	std::string table = table_of(&sampler);
	EXPECT_TRUE(contains(table, "timer: 105 of 116 deadlines sampled within 10% of their interval (90.5%)\n")) << table;
	fast->nlate = 30;
	table = table_of(&sampler);
	EXPECT_TRUE(contains(table, "timer: 79 of 116 deadlines sampled within 10% of their interval (68.1%); the others late or "
				    "skipped, the machine being loaded: ASTROLABE_SAMPLER_PRIORITY=fifo keeps the cadence\n"))
		<< table;
	ASSERT_EQ(apapi_priority_parse("fifo", &sampler.priority), 0);
	table = table_of(&sampler);
	EXPECT_TRUE(contains(table, "(68.1%)\n")) << table;
	apapi_sampler_clear(&sampler);
}

TEST(SamplerTimer, StopsPromptlyWithLongIntervals)
{
	apapi_sampler sampler;
	apapi_sampler_init(&sampler);
	ScriptedSource src;
	apapi_component *c = apapi_sampler_add(&sampler, "slow", 3600ull * 1000000000ull, read_scripted, &src);
	apapi_eventop op = make_op(0xff);
	ASSERT_EQ(apapi_component_add_event(c, &op, 0), 0);
	ASSERT_EQ(apapi_sampler_start(&sampler), 0);
	apapi_sampler_stop(&sampler); // a last sample, not an hour's wait
	EXPECT_EQ(src.reads.load(), 2u);
	EXPECT_EQ(c->events[0].stats[0].acc, 3.0);
	apapi_sampler_clear(&sampler);
}

// --------------------------------------------------------------- priority

TEST(SamplerPriority, ParsesTheAskedScheduling)
{
	apapi_priority p;
	for (const char *none : { (const char *)nullptr, "", "default" }) {
		ASSERT_EQ(apapi_priority_parse(none, &p), 0);
		EXPECT_FALSE(p.asked);
	}
	struct
	{
		const char *spec;
		int policy, level;
	} good[] = { { "fifo", SCHED_FIFO, 1 }, { "fifo:50", SCHED_FIFO, 50 }, { "rr", SCHED_RR, 1 },
		     { "rr:99", SCHED_RR, 99 },  { "nice:-20", SCHED_OTHER, -20 }, { "nice:19", SCHED_OTHER, 19 } };
	for (const auto &g : good) {
		ASSERT_EQ(apapi_priority_parse(g.spec, &p), 0) << g.spec;
		EXPECT_TRUE(p.asked) << g.spec;
		EXPECT_EQ(p.policy, g.policy) << g.spec;
		EXPECT_EQ(p.level, g.level) << g.spec;
	}
	for (const char *bad : { "fifo:0", "fifo:100", "rr:x", "rr:", "nice", "nice:20", "nice:-21", "realtime", "fifo:1:2",
				 " fifo", "FIFO" }) {
		int ret = 0;
		std::string err = stderr_of([&] { ret = apapi_priority_parse(bad, &p); });
		EXPECT_EQ(ret, -EINVAL) << bad;
		EXPECT_FALSE(p.asked) << bad;
		EXPECT_TRUE(contains(err, std::string("ASTROLABE_SAMPLER_PRIORITY '") + bad + "' is malformed")) << err;
		EXPECT_TRUE(contains(err, "fifo[:1..99]")) << err;
	}
}

// Starts s at 1 ms, asking for spec; returns what the start said.
std::string start_with_priority(apapi_sampler &s, ScriptedSource &src, const char *spec)
{
	apapi_sampler_init(&s);
	apapi_component *c = apapi_sampler_add(&s, "scripted", 1000000, read_scripted, &src);
	apapi_eventop op = make_op(0xff);
	EXPECT_EQ(apapi_component_add_event(c, &op, 0), 0);
	EXPECT_EQ(apapi_priority_parse(spec, &s.priority), 0);
	return stderr_of([&] { EXPECT_EQ(apapi_sampler_start(&s), 0); });
}

// The sampler keeps sampling, whatever became of its priority.
void expect_sampling_goes_on(apapi_sampler &s, ScriptedSource &src)
{
	EXPECT_TRUE(wait_until([&] { return src.reads.load() >= 5; }, 60000));
	apapi_sampler_stop(&s);
	apapi_sampler_clear(&s);
}

size_t count_lines(const std::string &text)
{
	return size_t(std::count(text.begin(), text.end(), '\n'));
}

// Where the system allows it (root, CAP_SYS_NICE, RLIMIT_RTPRIO), the timer
// thread runs with what was asked; elsewhere one line says why not and how to
// allow it. Both outcomes are checked, whichever this machine gives.
TEST(SamplerPriority, GivesTheTimerThreadItsPriorityOrSaysWhy)
{
	for (const char *spec : { "fifo:1", "rr:2", "nice:-5", "nice:10" }) {
		SCOPED_TRACE(spec);
		apapi_sampler s;
		ScriptedSource src;
		std::string err = start_with_priority(s, src, spec);
		if (s.priority_error == 0) {
			EXPECT_EQ(err, "");
			if (s.priority.policy == SCHED_OTHER) {
				errno = 0;
				EXPECT_EQ(getpriority(PRIO_PROCESS, id_t(s.thread_id)), s.priority.level);
				EXPECT_EQ(errno, 0);
			} else {
				int policy = -1;
				sched_param param = {};
				ASSERT_EQ(pthread_getschedparam(s.thread, &policy, &param), 0);
				EXPECT_EQ(policy, s.priority.policy);
				EXPECT_EQ(param.sched_priority, s.priority.level);
			}
		} else {
			EXPECT_EQ(count_lines(err), 1u) << err;
			EXPECT_TRUE(contains(err, "cannot give the timer thread")) << err;
			EXPECT_TRUE(contains(err, "CAP_SYS_NICE")) << err;
		}
		// Raising one's own nice value is always allowed.
		if (std::string(spec) == "nice:10")
			EXPECT_EQ(s.priority_error, 0) << err;
		expect_sampling_goes_on(s, src);
	}
}

// Takes CAP_SYS_NICE out of this thread's effective set (threads it creates
// inherit it) and sets the soft RLIMIT_RTPRIO and RLIMIT_NICE to 0, so that
// raising a priority is refused here even as root; all restored at the end.
struct NoPriorityRights
{
	__user_cap_header_struct header{ _LINUX_CAPABILITY_VERSION_3, 0 };
	__user_cap_data_struct caps[2]{};
	rlimit rtprio{}, nice{};
	bool capset_done = false;
	NoPriorityRights()
	{
		getrlimit(RLIMIT_RTPRIO, &rtprio);
		getrlimit(RLIMIT_NICE, &nice);
		rlimit none = rtprio;
		none.rlim_cur = 0;
		EXPECT_EQ(setrlimit(RLIMIT_RTPRIO, &none), 0);
		none = nice;
		none.rlim_cur = 0;
		EXPECT_EQ(setrlimit(RLIMIT_NICE, &none), 0);
		if (syscall(SYS_capget, &header, caps) == 0) {
			__user_cap_data_struct dropped[2] = { caps[0], caps[1] };
			dropped[CAP_TO_INDEX(CAP_SYS_NICE)].effective &= ~CAP_TO_MASK(CAP_SYS_NICE);
			capset_done = syscall(SYS_capset, &header, dropped) == 0;
			EXPECT_TRUE(capset_done) << strerror(errno);
		}
	}
	~NoPriorityRights()
	{
		if (capset_done)
			syscall(SYS_capset, &header, caps);
		setrlimit(RLIMIT_RTPRIO, &rtprio);
		setrlimit(RLIMIT_NICE, &nice);
	}
};

TEST(SamplerPriority, RefusedPriorityIsSaidOnceAndSamplingGoesOn)
{
	for (const char *spec : { "fifo", "rr:3", "nice:-5" }) {
		SCOPED_TRACE(spec);
		apapi_sampler s;
		ScriptedSource src;
		std::string err;
		{
			NoPriorityRights none;
			err = start_with_priority(s, src, spec);
		}
		EXPECT_NE(s.priority_error, 0);
		EXPECT_EQ(count_lines(err), 1u) << err;
		EXPECT_TRUE(contains(err, "sampler: cannot give the timer thread")) << err;
		EXPECT_TRUE(contains(err, "ASTROLABE_SAMPLER_PRIORITY=" + std::string(spec[0] == 'f' ? "fifo:1" : spec))) << err;
		EXPECT_TRUE(contains(err, spec[0] == 'n' ? "RLIMIT_NICE of at least 25" : "RLIMIT_RTPRIO")) << err;
		EXPECT_TRUE(contains(err, "it samples at normal priority")) << err;
		int policy = -1;
		sched_param param = {};
		ASSERT_EQ(pthread_getschedparam(s.thread, &policy, &param), 0);
		EXPECT_EQ(policy, SCHED_OTHER);
		expect_sampling_goes_on(s, src);
	}
}

// ----------------------------------------------------------------- plugin

void nop_func(void **, void *) {}

void run_tasks(int n)
{
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "sampled");
	for (int i = 0; i < n; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	starpu_task_wait_for_all();
}

double read_stat(const std::string &name)
{
	int id = starpu_perf_counter_name_to_id(starpu_perf_counter_scope_global, name.c_str());
	union astro_counter_value v;
	if (id < 0 || astro_counter_read(id, nullptr, &v))
		return -1;
	return v.double_val;
}

// The rows of a CSV file as Python's csv module reads them: "event|value|column=value" per statistic.
std::string csv_rows(const std::string &path)
{
	std::string out;
	std::string cmd = "python3 -c 'import csv,sys\n"
			  "for r in csv.DictReader(open(sys.argv[1])):\n"
			  "  for k in (\"min\",\"max\",\"avg\",\"acc\"):\n"
			  "    print(\"%s|%s|%s=%s\" % (r[\"event\"], r[\"value\"], k, r[k]))' '" + path + "'";
	EXPECT_EQ(run_command(cmd, &out), 0) << cmd;
	return out;
}

class SamplerPlugin : public ::testing::Test
{
protected:
	void SetUp() override
	{
		ASSERT_FALSE(build_plugin_path().empty()) << "STARPU_PLUGIN_PATH is not set: run through make check";
		if (!have_program("python3"))
			GTEST_SKIP() << "python3 is needed to read the CSV back";
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	TempDir dir;
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
	ScopedEnv on_{"ASTROLABE_SAMPLER", "1"};
	ScopedEnv cmps_{"APAPI_CMPLIST", "astrolabe"};
	ScopedEnv list_{"APAPI_EVENTLIST", nullptr};
	ScopedEnv ops_{"APAPI_EVENTOPS", nullptr};
	ScopedEnv intervals_{"ASTROLABE_SAMPLER_INTERVALS", "astrolabe:2000000"};
	ScopedEnv csv_{"ASTROLABE_SAMPLER_CSV", dir.file("stats.csv")};
};

TEST_F(SamplerPlugin, SamplesTheRuntimeCounters)
{
	starpu_conf conf = conf_with_ncpus(2);
	ASSERT_EQ(starpu_init(&conf), 0);
	run_tasks(20);
	// The statistics are counters: the accumulated submissions reach 20 once sampled.
	const std::string acc = "starpu.sampler.g_astrolabe.starpu.task.g_total_submitted.value0_acc";
	EXPECT_TRUE(wait_until([&] { return read_stat(acc) == 20.0; }, 60000)) << read_stat(acc);
	EXPECT_GE(read_stat("starpu.sampler.g_astrolabe.starpu.task.g_total_submitted.value1_max"), 0.0);
	// Not asked for by the default event operations: not a counter.
	EXPECT_LT(starpu_perf_counter_name_to_id(starpu_perf_counter_scope_global,
						 "starpu.sampler.g_astrolabe.starpu.task.g_total_submitted.value0_min"), 0);
	std::string err = stderr_of([] { starpu_shutdown(); });
	EXPECT_TRUE(contains(err, "sampler: statistics of")) << err;
	EXPECT_TRUE(contains(err, "deadlines sampled within 10% of their interval")) << err;
	EXPECT_TRUE(contains(err, "astrolabe:::starpu.task.w_total_executed")) << err;
	EXPECT_TRUE(contains(err, "execution rate")) << err;
	std::string rows = csv_rows(dir.file("stats.csv"));
	EXPECT_TRUE(contains(rows, "astrolabe:::starpu.task.g_total_submitted|value0|acc=20\n")) << rows;
	EXPECT_TRUE(contains(rows, "astrolabe:::starpu.task.w_total_executed|value0|acc=20\n")) << rows;
	EXPECT_TRUE(contains(rows, "astrolabe:::starpu.task.g_total_submitted|value0|min=\n")) << rows;
}

TEST_F(SamplerPlugin, EveryCounterWithoutAList)
{
	ASSERT_TRUE(dir.write("list.txt", "# nothing of the runtime: all its counters\nrapl:::PACKAGE_ENERGY:PACKAGE0\n"));
	ScopedEnv list("APAPI_EVENTLIST", dir.file("list.txt"));
	ScopedEnv nodefault("ASTROLABE_SAMPLER_DATADIR", dir.path());
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	run_tasks(5);
	std::string err = stderr_of([] { starpu_shutdown(); });
	std::string rows = csv_rows(dir.file("stats.csv"));
	// The fallback definition: every statistic, a monotonic counter accumulates.
	EXPECT_TRUE(contains(rows, "astrolabe:::starpu.task.g_total_submitted|value0|acc=5\n")) << rows;
	EXPECT_TRUE(contains(rows, "astrolabe:::starpu.task.g_total_submitted|value0|min=")) << rows;
	EXPECT_TRUE(contains(rows, "astrolabe:::starpu.task.g_current_ready|value1|")) << rows;
	EXPECT_FALSE(contains(rows, "starpu.sampler.")) << rows;
}

TEST_F(SamplerPlugin, UnknownEventsAndComponentsAreSaidOnce)
{
	ASSERT_TRUE(dir.write("list.txt", "astrolabe:::starpu.task.g_total_submitted\nastrolabe:::no.such.counter\n"));
	ScopedEnv list("APAPI_EVENTLIST", dir.file("list.txt"));
	ScopedEnv cmps("APAPI_CMPLIST", "astrolabe:nosuchcomponent:rapl");
	starpu_conf conf = conf_with_ncpus(1);
	std::string err = stderr_of([&] { ASSERT_EQ(starpu_init(&conf), 0); });
	EXPECT_TRUE(contains(err, "astrolabe:::no.such.counter: no such global or per-worker counter")) << err;
	EXPECT_TRUE(contains(err, "components skipped: nosuchcomponent (not in this PAPI), rapl (")) << err;
	starpu_shutdown();
	{
		ScopedEnv soft("APAPI_SOFTFAIL", "1");
		err = stderr_of([&] { ASSERT_EQ(starpu_init(&conf), 0); });
		EXPECT_EQ(err, "");
		starpu_shutdown();
	}
}

TEST_F(SamplerPlugin, OffCostsNothing)
{
	ScopedEnv off("ASTROLABE_SAMPLER", nullptr);
	starpu_conf conf = conf_with_ncpus(1);
	std::string err = stderr_of([&] { ASSERT_EQ(starpu_init(&conf), 0); });
	EXPECT_EQ(err, "");
	EXPECT_LT(starpu_perf_counter_name_to_id(starpu_perf_counter_scope_global,
						 "starpu.sampler.g_astrolabe.starpu.task.g_total_submitted.value0_acc"), 0);
	err = stderr_of([] { starpu_shutdown(); });
	EXPECT_EQ(err, "");
	EXPECT_FALSE(file_exists(dir.file("stats.csv")));
}

TEST_F(SamplerPlugin, BadPriorityIsRefused)
{
	ScopedEnv priority("ASTROLABE_SAMPLER_PRIORITY", "urgent");
	starpu_conf conf = conf_with_ncpus(1);
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_init(&conf); });
	EXPECT_TRUE(contains(err, "ASTROLABE_SAMPLER_PRIORITY 'urgent' is malformed")) << err;
	if (ret == 0)
		starpu_shutdown();
}

TEST_F(SamplerPlugin, BadIntervalsAreRefused)
{
	ScopedEnv intervals("ASTROLABE_SAMPLER_INTERVALS", "astrolabe:soon");
	starpu_conf conf = conf_with_ncpus(1);
	std::string err = stderr_of([&] { starpu_init(&conf); });
	EXPECT_TRUE(contains(err, "intervals 'astrolabe:soon' are malformed")) << err;
	if (starpu_is_initialized())
		starpu_shutdown();
}

// PAPI's sde component reads the runtime's counters exported by counters_papi_sde.
TEST_F(SamplerPlugin, PapiComponentSde)
{
#ifndef HAVE_PAPI
	GTEST_SKIP() << "built without PAPI";
#endif
	if (!contains(build_plugin_path(), "papi-sde"))
		GTEST_SKIP() << "counters_papi_sde is not built";
	ASSERT_TRUE(dir.write("list.txt", "sde:::STARPU::starpu.task.g_total_submitted\n"));
	ScopedEnv list("APAPI_EVENTLIST", dir.file("list.txt"));
	ScopedEnv cmps("APAPI_CMPLIST", "sde");
	ScopedEnv intervals("ASTROLABE_SAMPLER_INTERVALS", "sde:2000000");
	starpu_conf conf = conf_with_ncpus(1);
	conf.start_perf_counter_collection = 1;
	ASSERT_EQ(starpu_init(&conf), 0);
	run_tasks(12);
	const std::string acc = "starpu.sampler.g_sde.STARPU.starpu.task.g_total_submitted.value0_acc";
	EXPECT_TRUE(wait_until([&] { return read_stat(acc) == 12.0; }, 60000)) << read_stat(acc);
	// counters_papi_sde's events read 0 once shutdown starts: a restart, not a wrap.
	std::string err = stderr_of([] { starpu_shutdown(); });
	std::string rows = csv_rows(dir.file("stats.csv"));
	EXPECT_TRUE(contains(rows, "sde:::STARPU::starpu.task.g_total_submitted|value0|acc=12\n")) << rows << err;
}

// What atime runs in SamplerAtime: an Astrolabe program.
TEST(SamplerChild, RunTasks)
{
	if (!getenv("SAMPLER_TEST_CHILD"))
		GTEST_SKIP() << "run by SamplerAtime through atime";
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	run_tasks(7);
	starpu_shutdown();
}

class SamplerAtime : public ::testing::Test
{
protected:
	void SetUp() override
	{
		atime_ = env_or("ATIME", "");
		if (atime_.empty() || !file_exists(atime_))
			GTEST_SKIP() << "atime is not built yet (make check builds it before the tests)";
	}
	std::string run(const std::string &args, int *status)
	{
		std::string out;
		*status = run_command("'" + atime_ + "' " + args + " 2>&1", &out);
		return out;
	}
	std::string atime_;
	ScopedEnv cmps_{"APAPI_CMPLIST", "astrolabe:rapl"};
	ScopedEnv on_{"ASTROLABE_SAMPLER", nullptr};
	ScopedEnv csv_{"ASTROLABE_SAMPLER_CSV", nullptr};
};

TEST_F(SamplerAtime, SamplesAnAstrolabeProgram)
{
	ScopedEnv child("SAMPLER_TEST_CHILD", "1");
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ASSERT_GT(len, 0);
	self[len] = '\0';
	int status = -1;
	std::string out = run(std::string("-t astrolabe:2000000 '") + self + "' --gtest_filter=SamplerChild.RunTasks", &status);
	EXPECT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "atime: ")) << out;
	EXPECT_TRUE(contains(out, ", exit status 0")) << out;
	EXPECT_TRUE(contains(out, "sampler: statistics of")) << out;
	EXPECT_TRUE(contains(out, "astrolabe:::starpu.task.g_total_submitted")) << out;
	// The components atime samples are not sampled (nor said skipped) a second time by the program.
	size_t first = out.find("components skipped: rapl");
	ASSERT_NE(first, std::string::npos) << out;
	EXPECT_TRUE(contains(out, "no energy is measured here")) << out;
	EXPECT_EQ(out.find("components skipped", first + 1), std::string::npos) << out;
}

TEST_F(SamplerAtime, ExitStatusAndErrors)
{
	int status = -1;
	run("false", &status);
	EXPECT_EQ(status, 1);
	std::string out = run("true", &status);
	EXPECT_EQ(status, 0);
	EXPECT_TRUE(contains(out, "atime: true ran ")) << out;
	out = run("", &status);
	EXPECT_EQ(status, 2);
	EXPECT_TRUE(contains(out, "Usage: atime")) << out;
	out = run("-t 50000000 true", &status);
	EXPECT_EQ(status, 0) << "a bare number: every component's interval";
	EXPECT_TRUE(contains(out, "atime: true ran ")) << out;
	out = run("-t rapl:x true", &status);
	EXPECT_EQ(status, 2);
	EXPECT_TRUE(contains(out, "malformed")) << out;
	out = run("/no/such/program", &status);
	EXPECT_EQ(status, 127);
	EXPECT_TRUE(contains(out, "cannot run /no/such/program")) << out;
	out = run("--help", &status);
	EXPECT_TRUE(contains(out, "ASTROLABE_SAMPLER_PRIORITY")) << out;
	{
		ScopedEnv priority("ASTROLABE_SAMPLER_PRIORITY", "asap");
		out = run("true", &status);
		EXPECT_EQ(status, 2);
		EXPECT_TRUE(contains(out, "ASTROLABE_SAMPLER_PRIORITY 'asap' is malformed")) << out;
	}
	{
		// Asked for, atime's timer thread gets it or says why not, and measures anyway.
		ScopedEnv priority("ASTROLABE_SAMPLER_PRIORITY", "fifo");
		out = run("true", &status);
		EXPECT_EQ(status, 0) << out;
		EXPECT_TRUE(contains(out, "atime: true ran ")) << out;
	}
}

// Issue 38: with the default components (APAPI_CMPLIST unset), a machine without energy counters is said once, in a
// short note, not as an error; atime prints no empty table; --version is answered, not run as a program.
TEST_F(SamplerAtime, DefaultComponentsMissingAreANoteAndVersionIsAnswered)
{
	ScopedEnv defaults("APAPI_CMPLIST", nullptr);
	int status = -1;
	std::string out = run("true", &status);
	EXPECT_EQ(status, 0) << out;
	EXPECT_FALSE(contains(out, "error")) << out;
	EXPECT_FALSE(contains(out, "(no event was sampled)")) << out;
	size_t note = out.find("note: sampler: no energy counter");
	if (note != std::string::npos) {
		EXPECT_EQ(out.find("energy", out.find('\n', note)), std::string::npos) << "said once: " << out;
		EXPECT_LT(out.find('\n', note) - note, 80u) << "a short note: " << out;
	}
	EXPECT_TRUE(contains(out, "atime: true ran ")) << out;

	out = run("--version", &status);
	EXPECT_EQ(status, 0) << out;
	EXPECT_EQ(out.rfind("atime (Astrolabe, StarPU ", 0), 0u) << out;
	EXPECT_FALSE(contains(out, "cannot run")) << out;
}

// The seed's debugging variable APAPI_VERBOSE=1: more messages. The default components this machine
// lacks (some of rapl, nvml, maxeler, micknc, ipmi always are) are all named, and a default file
// that is not there is said; without it, neither.
TEST_F(SamplerAtime, VerboseNamesWhatIsMissing)
{
	ScopedEnv defaults("APAPI_CMPLIST", nullptr);
	ScopedEnv datadir("ASTROLABE_SAMPLER_DATADIR", "/nonexistent-sampler-data");
	int status = -1;
	std::string quiet;
	{
		ScopedEnv verbose("APAPI_VERBOSE", nullptr);
		quiet = run("true", &status);
		EXPECT_EQ(status, 0) << quiet;
	}
	ScopedEnv verbose("APAPI_VERBOSE", "1");
	std::string out = run("true", &status);
	EXPECT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "components not available here: ")) << out;
	EXPECT_TRUE(contains(out, "no default file /nonexistent-sampler-data/default_eventlist.txt")) << out;
	EXPECT_FALSE(contains(quiet, "components not available here")) << quiet;
	EXPECT_FALSE(contains(quiet, "no default file")) << quiet;
}

} // namespace
