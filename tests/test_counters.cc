// SPDX-License-Identifier: LGPL-2.1-or-later
// Performance monitoring counters: the StarPU 1.4 API (seed 000, section 6.2,
// steps 0-6, for each scope), exact totals and true peaks after known
// workloads, listeners set and unset while tasks run, collection start/stop,
// the runtime checks on bad calls, counters registered by plugins (a test
// plugin and the eager/lws policies), the atomic helpers under contention,
// and the astrolabe-perf-list tool (text and JSON).
#include "helpers.h"

#include <astrolabe/counters.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <sys/wait.h>

using namespace astro_test;

namespace {

const starpu_perf_counter_scope g_scope = starpu_perf_counter_scope_global;
const starpu_perf_counter_scope w_scope = starpu_perf_counter_scope_per_worker;
const starpu_perf_counter_scope c_scope = starpu_perf_counter_scope_per_codelet;

int id_of(starpu_perf_counter_scope scope, const char *name)
{
	return starpu_perf_counter_name_to_id(scope, name);
}

void nop_func(void **, void *) {}

void sleep_func(void **, void *arg)
{
	sleep_ms((unsigned)(uintptr_t)arg);
}

// Values seen by listeners, keyed by whatever the test wants (worker id, codelet...).
struct Seen
{
	std::mutex mutex;
	std::atomic<int> calls{0};
	std::map<long, std::map<int, int64_t>> ints;   // key -> counter id -> last int value
	std::map<long, std::map<int, double>> doubles; // key -> counter id -> last double value
	std::vector<int> int_ids, double_ids;
	std::atomic<bool> decreasing{false};           // an int counter went down between two calls
	std::set<void *> contexts;
	std::set<void *> user_args;
};

void record(Seen *seen, long key, starpu_perf_counter_sample *sample, void *context, void *user_arg)
{
	std::lock_guard<std::mutex> lock(seen->mutex);
	seen->calls++;
	seen->contexts.insert(context);
	seen->user_args.insert(user_arg);
	for (int id : seen->int_ids) {
		int64_t v = starpu_perf_counter_sample_get_int64_value(sample, id);
		auto &slot = seen->ints[key];
		if (slot.count(id) && v < slot[id])
			seen->decreasing = true;
		slot[id] = v;
	}
	for (int id : seen->double_ids)
		seen->doubles[key][id] = starpu_perf_counter_sample_get_double_value(sample, id);
}

Seen *g_seen;

void global_cb(starpu_perf_counter_listener *listener, starpu_perf_counter_sample *sample, void *context)
{
	record(g_seen, 0, sample, context, astro_perf_counter_listener_get_user_arg(listener));
}

void worker_cb(starpu_perf_counter_listener *listener, starpu_perf_counter_sample *sample, void *context)
{
	record(g_seen, starpu_worker_get_id(), sample, context, astro_perf_counter_listener_get_user_arg(listener));
}

void codelet_cb(starpu_perf_counter_listener *listener, starpu_perf_counter_sample *sample, void *context)
{
	record(g_seen, (long)(intptr_t)context, sample, context, astro_perf_counter_listener_get_user_arg(listener));
}

// One set + listener, freed at the end of the test.
struct Listening
{
	starpu_perf_counter_set *set = nullptr;
	starpu_perf_counter_listener *listener = nullptr;
	Listening(starpu_perf_counter_scope scope, const std::vector<int> &ids,
		  void (*cb)(starpu_perf_counter_listener *, starpu_perf_counter_sample *, void *), void *user_arg = nullptr)
	{
		set = starpu_perf_counter_set_alloc(scope);
		for (int id : ids)
			starpu_perf_counter_set_enable_id(set, id);
		listener = starpu_perf_counter_listener_init(set, cb, user_arg);
	}
	~Listening()
	{
		if (listener)
			starpu_perf_counter_listener_exit(listener);
		if (set)
			starpu_perf_counter_set_free(set);
	}
};

class Counters : public ::testing::Test
{
protected:
	void SetUp() override
	{
		ASSERT_FALSE(build_plugin_path().empty()) << "STARPU_PLUGIN_PATH is not set: run through make check";
		seen_.reset(new Seen);
		g_seen = seen_.get();
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
		g_seen = nullptr;
	}
	// Starts the runtime with ncpus workers, collection started or not.
	void start(int ncpus, bool collect = true)
	{
		starpu_conf conf = conf_with_ncpus(ncpus);
		conf.start_perf_counter_collection = collect ? 1 : 0;
		ASSERT_EQ(starpu_init(&conf), 0);
	}
	// Submits n tasks of cl and waits for them.
	void run(starpu_codelet *cl, int n, void *arg = nullptr)
	{
		for (int i = 0; i < n; i++)
			ASSERT_EQ(submit_detached(cl, arg), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}
	std::unique_ptr<Seen> seen_;
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
	ScopedEnv silent_{"STARPU_SILENT", nullptr};
};

// ------------------------------------------------------------ discovery

TEST_F(Counters, ScopesAndTypesByName)
{
	EXPECT_EQ(starpu_perf_counter_scope_global, 2);
	EXPECT_EQ(starpu_perf_counter_scope_per_worker, 4);
	EXPECT_EQ(starpu_perf_counter_scope_per_codelet, 6);
	EXPECT_EQ(starpu_perf_counter_scope_name_to_id("global"), g_scope);
	EXPECT_EQ(starpu_perf_counter_scope_name_to_id("per_worker"), w_scope);
	EXPECT_EQ(starpu_perf_counter_scope_name_to_id("per_codelet"), c_scope);
	EXPECT_STREQ(starpu_perf_counter_scope_id_to_name(c_scope), "per_codelet");
	EXPECT_EQ(starpu_perf_counter_type_name_to_id("int32"), starpu_perf_counter_type_int32);
	EXPECT_EQ(starpu_perf_counter_type_name_to_id("double"), starpu_perf_counter_type_double);
	EXPECT_STREQ(starpu_perf_counter_type_id_to_name(starpu_perf_counter_type_float), "float");

	std::string err = stderr_of([] {
		EXPECT_EQ(starpu_perf_counter_scope_name_to_id("per_node"), -1);
		EXPECT_EQ(starpu_perf_counter_scope_id_to_name((starpu_perf_counter_scope)3), nullptr);
		EXPECT_EQ(starpu_perf_counter_type_name_to_id("int16"), -1);
	});
	EXPECT_TRUE(contains(err, "'per_node' is not a scope")) << err;
	EXPECT_TRUE(contains(err, "'int16' is not a counter type")) << err;
}

// astro_counter_find: any scope, the scope said, and no message for a name that is not there.
TEST_F(Counters, FindTellsTheScopeAndMissesSilently)
{
	start(1);
	starpu_perf_counter_scope scope = c_scope;
	EXPECT_EQ(astro_counter_find("starpu.task.g_total_submitted", &scope), id_of(g_scope, "starpu.task.g_total_submitted"));
	EXPECT_EQ(scope, g_scope);
	EXPECT_EQ(astro_counter_find("starpu.task.w_total_executed", &scope), id_of(w_scope, "starpu.task.w_total_executed"));
	EXPECT_EQ(scope, w_scope);
	EXPECT_EQ(astro_counter_find("starpu.task.c_total_executed", nullptr), id_of(c_scope, "starpu.task.c_total_executed"));
	std::string err = stderr_of([&] {
		scope = g_scope;
		EXPECT_EQ(astro_counter_find("starpu.task.no_such_counter", &scope), -1);
		EXPECT_EQ(astro_counter_find(nullptr, &scope), -1);
	});
	EXPECT_EQ(scope, g_scope);
	EXPECT_EQ(err, "");
}

TEST_F(Counters, StarpuCountersWithTheirTypesAndIds)
{
	start(1);
	struct Expected { starpu_perf_counter_scope scope; const char *name; starpu_perf_counter_type type; };
	const Expected expected[] = {
		{ g_scope, "starpu.task.g_total_submitted", starpu_perf_counter_type_int64 },
		{ g_scope, "starpu.task.g_peak_submitted", starpu_perf_counter_type_int64 },
		{ g_scope, "starpu.task.g_peak_ready", starpu_perf_counter_type_int64 },
		{ w_scope, "starpu.task.w_total_executed", starpu_perf_counter_type_int64 },
		{ w_scope, "starpu.task.w_cumul_execution_time", starpu_perf_counter_type_double },
		{ c_scope, "starpu.task.c_total_submitted", starpu_perf_counter_type_int64 },
		{ c_scope, "starpu.task.c_peak_submitted", starpu_perf_counter_type_int64 },
		{ c_scope, "starpu.task.c_peak_ready", starpu_perf_counter_type_int64 },
		{ c_scope, "starpu.task.c_total_executed", starpu_perf_counter_type_int64 },
		{ c_scope, "starpu.task.c_cumul_execution_time", starpu_perf_counter_type_double },
	};
	std::map<int, int> rank; // StarPU registers them first: their rank in the scope is their order
	for (const Expected &e : expected) {
		int id = id_of(e.scope, e.name);
		ASSERT_GE(id, 0) << e.name;
		EXPECT_EQ(id & 0xf, (int)e.scope) << e.name;
		EXPECT_EQ(id >> 4, rank[e.scope]++) << e.name;
		EXPECT_EQ(starpu_perf_counter_get_type_id(id), (int)e.type) << e.name;
		EXPECT_STREQ(starpu_perf_counter_id_to_name(id), e.name);
		EXPECT_GT(strlen(starpu_perf_counter_get_help_string(id)), 10u) << e.name;
		EXPECT_STREQ(astro_counter_get_module(id), "kernel");
	}
	// The extras follow the same scheme.
	EXPECT_GE(id_of(g_scope, "starpu.task.g_current_ready"), 0);
	EXPECT_GE(id_of(w_scope, "starpu.worker.w_cumul_sleeping_time"), 0);
	EXPECT_EQ(astro_counter_get_kind(id_of(g_scope, "starpu.task.g_current_ready")), ASTRO_COUNTER_INSTANT);
	EXPECT_STREQ(astro_counter_get_unit(id_of(w_scope, "starpu.task.w_cumul_execution_time")), "us");

	for (starpu_perf_counter_scope scope : { g_scope, w_scope, c_scope }) {
		int n = starpu_perf_counter_nb(scope);
		ASSERT_GT(n, 0);
		for (int i = 0; i < n; i++)
			EXPECT_EQ(starpu_perf_counter_nth_to_id(scope, i), (i << 4) | scope);
	}
}

TEST_F(Counters, ListAvailPrintsStarpuFormat)
{
	start(1);
	testing::internal::CaptureStdout();
	starpu_perf_counter_list_all_avail();
	std::string out = testing::internal::GetCapturedStdout();
	EXPECT_EQ(out.rfind("scope: global\n", 0), 0u) << out;
	EXPECT_TRUE(contains(out, "scope: per_worker\n")) << out;
	EXPECT_TRUE(contains(out, "scope: per_codelet\n")) << out;
	EXPECT_TRUE(contains(out, "0x00000002:starpu.task.g_total_submitted [int64] - ")) << out;
	EXPECT_TRUE(contains(out, "0x00000014:starpu.task.w_cumul_execution_time [double] - ")) << out;
}

// starpu_perf_counter_list_avail(scope): that scope's counters only, in the same format.
TEST_F(Counters, ListAvailOfOneScope)
{
	start(1);
	testing::internal::CaptureStdout();
	starpu_perf_counter_list_avail(w_scope);
	std::string out = testing::internal::GetCapturedStdout();
	EXPECT_TRUE(contains(out, "0x00000014:starpu.task.w_cumul_execution_time [double] - ")) << out;
	EXPECT_TRUE(contains(out, ":starpu.task.w_total_executed [int64] - ")) << out;
	EXPECT_FALSE(contains(out, "g_total_submitted")) << out;
	EXPECT_FALSE(contains(out, "c_total_executed")) << out;
	EXPECT_FALSE(contains(out, "scope: ")) << "one scope: no scope header\n" << out;
}

// starpu_perf_counter_set_disable_id(): a counter enabled then disabled is not in the samples.
std::atomic<int> disable_calls{0};
std::atomic<int64_t> disable_enabled_value{0};
std::atomic<double> disable_disabled_value{0};
int disable_id_kept, disable_id_dropped;

void disable_cb(starpu_perf_counter_listener *, starpu_perf_counter_sample *sample, void *)
{
	disable_enabled_value = starpu_perf_counter_sample_get_int64_value(sample, disable_id_kept);
	disable_disabled_value = starpu_perf_counter_sample_get_double_value(sample, disable_id_dropped);
	disable_calls++;
}

TEST_F(Counters, DisabledIdIsNotSampled)
{
	start(1);
	disable_id_kept = id_of(w_scope, "starpu.task.w_total_executed");
	disable_id_dropped = id_of(w_scope, "starpu.task.w_cumul_execution_time");
	starpu_perf_counter_set *set = starpu_perf_counter_set_alloc(w_scope);
	starpu_perf_counter_set_enable_id(set, disable_id_kept);
	starpu_perf_counter_set_enable_id(set, disable_id_dropped);
	starpu_perf_counter_set_disable_id(set, disable_id_dropped);
	starpu_perf_counter_listener *l = starpu_perf_counter_listener_init(set, disable_cb, nullptr);
	starpu_perf_counter_set_all_per_worker_listeners(l);
	static starpu_codelet cl = cpu_codelet(sleep_func, 0, "disabled");
	std::string err = stderr_of([&] { run(&cl, 2, (void *)(uintptr_t)1); });
	starpu_perf_counter_unset_all_per_worker_listeners();
	EXPECT_GT(disable_calls.load(), 0);
	EXPECT_EQ(disable_enabled_value.load(), 2);
	EXPECT_TRUE(std::isnan(disable_disabled_value.load())) << "NaN: not in the sample";
	EXPECT_TRUE(contains(err, "'starpu.task.w_cumul_execution_time' is not enabled in the listener's set")) << err;
	starpu_perf_counter_listener_exit(l);
	starpu_perf_counter_set_free(set);
}

// ------------------------------------------- the seed's steps 0-6, per scope

int seed_id_w_total_executed, seed_id_w_cumul_execution_time;
std::atomic<int> seed_calls{0};
std::atomic<int> seed_bad{0};
std::mutex seed_mutex;
std::map<int, int32_t> seed_last;

// Step 4, as the seed writes it (it reads the int64 counter with the int32 getter).
void seed_w_listener_cb(starpu_perf_counter_listener *, starpu_perf_counter_sample *sample, void *)
{
	int32_t w_total_executed = starpu_perf_counter_sample_get_int32_value(sample, seed_id_w_total_executed);
	double w_cumul_execution_time = starpu_perf_counter_sample_get_double_value(sample, seed_id_w_cumul_execution_time);
	std::lock_guard<std::mutex> lock(seed_mutex);
	if (w_total_executed <= 0 || !(w_cumul_execution_time >= 0.0))
		seed_bad++;
	seed_last[starpu_worker_get_id()] = w_total_executed;
	seed_calls++;
}

TEST_F(Counters, SeedSequencePerWorker)
{
	// Step 0
	start(2, false);
	seed_calls = 0;
	seed_bad = 0;
	seed_last.clear();
	// Step 1
	enum starpu_perf_counter_scope scope = starpu_perf_counter_scope_per_worker;
	struct starpu_perf_counter_set *w_set = starpu_perf_counter_set_alloc(scope);
	ASSERT_NE(w_set, nullptr);
	// Step 2
	seed_id_w_total_executed = starpu_perf_counter_name_to_id(scope, "starpu.task.w_total_executed");
	seed_id_w_cumul_execution_time = starpu_perf_counter_name_to_id(scope, "starpu.task.w_cumul_execution_time");
	ASSERT_GE(seed_id_w_total_executed, 0);
	ASSERT_GE(seed_id_w_cumul_execution_time, 0);
	// Step 3
	starpu_perf_counter_set_enable_id(w_set, seed_id_w_total_executed);
	starpu_perf_counter_set_enable_id(w_set, seed_id_w_cumul_execution_time);
	// Step 5
	struct starpu_perf_counter_listener *w_listener = starpu_perf_counter_listener_init(w_set, seed_w_listener_cb, nullptr);
	ASSERT_NE(w_listener, nullptr);
	// Step 6: the seed starts no collection explicitly; setting the listener does.
	starpu_perf_counter_set_all_per_worker_listeners(w_listener);

	static starpu_codelet cl = cpu_codelet(sleep_func, 0, "seed");
	std::string err = stderr_of([&] { run(&cl, 40, (void *)(uintptr_t)1); });
	EXPECT_EQ(seed_calls.load(), 40);
	EXPECT_EQ(seed_bad.load(), 0);
	int total = 0;
	for (auto &kv : seed_last)
		total += kv.second;
	EXPECT_EQ(total, 40);
	// The int32 getter on an int64 counter reads the value (it fits) without a word, as with StarPU.
	EXPECT_EQ(err, "");

	starpu_perf_counter_unset_all_per_worker_listeners();
	starpu_perf_counter_listener_exit(w_listener);
	starpu_perf_counter_set_free(w_set);
}

TEST_F(Counters, SeedSequencePerWorkerExecutionTime)
{
	start(2);
	int id_exec = id_of(w_scope, "starpu.task.w_total_executed");
	int id_time = id_of(w_scope, "starpu.task.w_cumul_execution_time");
	seen_->int_ids = { id_exec };
	seen_->double_ids = { id_time };
	Listening l(w_scope, { id_exec, id_time }, worker_cb);
	starpu_perf_counter_set_all_per_worker_listeners(l.listener);
	static starpu_codelet cl = cpu_codelet(sleep_func, 0, "sleeper");
	run(&cl, 20, (void *)(uintptr_t)2);
	starpu_perf_counter_unset_all_per_worker_listeners();

	int64_t executed = 0;
	double time_us = 0;
	for (auto &kv : seen_->ints) {
		EXPECT_GE(kv.first, 0);
		executed += kv.second[id_exec];
		time_us += seen_->doubles[kv.first][id_time];
	}
	EXPECT_EQ(executed, 20);
	EXPECT_EQ(seen_->calls.load(), 20);
	EXPECT_GE(time_us, 20 * 2000.0 * 0.9);
	EXPECT_LT(time_us, 20 * 2000.0 * 50);
	EXPECT_FALSE(seen_->decreasing.load());
	// The per-worker context is the worker id.
	for (void *context : seen_->contexts)
		EXPECT_TRUE(astro_counter_context_worker(context) == 0 || astro_counter_context_worker(context) == 1);
}

// Where a worker's time goes: executing, sleeping, and the overhead between
// two tasks (the gap less the sleeping in it).
TEST_F(Counters, WorkerTimeSplitsIntoExecutionSleepingAndOverhead)
{
	double begin = starpu_timing_now(); // collection starts with the runtime
	start(1);
	int id_exec = id_of(w_scope, "starpu.task.w_cumul_execution_time");
	int id_sleep = id_of(w_scope, "starpu.worker.w_cumul_sleeping_time");
	int id_over = id_of(w_scope, "starpu.worker.w_cumul_overhead_time");
	ASSERT_GE(id_over, 0);
	seen_->double_ids = { id_exec, id_sleep, id_over };
	Listening l(w_scope, { id_exec, id_sleep, id_over }, worker_cb);
	starpu_perf_counter_set_all_per_worker_listeners(l.listener);
	static starpu_codelet cl = cpu_codelet(sleep_func, 0, "split");
	run(&cl, 10, (void *)(uintptr_t)2);
	// A long pause: the worker looks for work, then sleeps.
	starpu_usleep(100000);
	run(&cl, 1, (void *)(uintptr_t)2);
	double elapsed = starpu_timing_now() - begin;
	starpu_perf_counter_unset_all_per_worker_listeners();
	double exec = seen_->doubles[0][id_exec], sleeping = seen_->doubles[0][id_sleep], over = seen_->doubles[0][id_over];
	EXPECT_GE(exec, 11 * 2000.0 * 0.9);
	EXPECT_GT(over, 0.0);
	// The pause is split between overhead (the worker looks for work a while) and sleeping, each counted once.
	EXPECT_GE(over + sleeping, 100000.0 * 0.9);
	EXPECT_LE(exec + sleeping + over, elapsed + 100.0) << "time counted twice: overhead " << over << " us, sleeping " << sleeping << " us";
	EXPECT_FALSE(seen_->decreasing.load());
}

TEST_F(Counters, SeedSequenceGlobal)
{
	start(2, false);
	int id_total = id_of(g_scope, "starpu.task.g_total_submitted");
	int id_peak_sub = id_of(g_scope, "starpu.task.g_peak_submitted");
	int id_peak_ready = id_of(g_scope, "starpu.task.g_peak_ready");
	seen_->int_ids = { id_total, id_peak_sub, id_peak_ready };
	int marker = 0;
	Listening l(g_scope, { id_total, id_peak_sub, id_peak_ready }, global_cb, &marker);
	starpu_perf_counter_set_global_listener(l.listener);
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "global");
	run(&cl, 50);
	// One call per submission, one at the end of the wait.
	EXPECT_EQ(seen_->calls.load(), 51);
	EXPECT_EQ(seen_->ints[0][id_total], 50);
	EXPECT_GE(seen_->ints[0][id_peak_sub], 1);
	EXPECT_GE(seen_->ints[0][id_peak_ready], 1);
	EXPECT_FALSE(seen_->decreasing.load());
	EXPECT_EQ(seen_->contexts, std::set<void *>{ nullptr });
	EXPECT_EQ(seen_->user_args, std::set<void *>{ &marker });
	starpu_perf_counter_unset_global_listener();
}

TEST_F(Counters, SeedSequencePerCodelet)
{
	start(2);
	std::vector<int> ids = { id_of(c_scope, "starpu.task.c_total_submitted"), id_of(c_scope, "starpu.task.c_peak_submitted"),
				 id_of(c_scope, "starpu.task.c_peak_ready"), id_of(c_scope, "starpu.task.c_total_executed") };
	int id_time = id_of(c_scope, "starpu.task.c_cumul_execution_time");
	seen_->int_ids = ids;
	seen_->double_ids = { id_time };
	std::vector<int> all = ids;
	all.push_back(id_time);
	Listening l(c_scope, all, codelet_cb);
	static starpu_codelet watched = cpu_codelet(sleep_func, 0, "watched");
	static starpu_codelet other = cpu_codelet(sleep_func, 0, "other");
	starpu_perf_counter_set_per_codelet_listener(&watched, l.listener);
	EXPECT_NE(watched.perf_counter_sample, nullptr);
	EXPECT_NE(watched.perf_counter_values, nullptr);
	run(&watched, 30, (void *)(uintptr_t)1);
	run(&other, 10);
	// Contexts are the codelet, as in StarPU.
	EXPECT_EQ(seen_->contexts, std::set<void *>{ &watched });
	auto &last = seen_->ints[(long)(intptr_t)&watched];
	EXPECT_EQ(last[ids[0]], 30);
	EXPECT_EQ(last[ids[3]], 30);
	EXPECT_GE(seen_->doubles[(long)(intptr_t)&watched][id_time], 30 * 1000.0 * 0.9);
	// 30 submissions + 30 executions.
	EXPECT_EQ(seen_->calls.load(), 60);
	starpu_perf_counter_unset_per_codelet_listener(&watched);
	EXPECT_EQ(watched.perf_counter_sample, nullptr);
	EXPECT_EQ(watched.perf_counter_values, nullptr);
}

// ------------------------------------------------ exact totals and peaks

// Last values of a global listener, read at the end of the final wait.
struct GlobalValues
{
	int64_t total, peak_submitted, peak_ready;
};

TEST_F(Counters, SerialWorkloadExactTotals)
{
	start(2);
	int id_total = id_of(g_scope, "starpu.task.g_total_submitted");
	int id_peak_sub = id_of(g_scope, "starpu.task.g_peak_submitted");
	int id_peak_ready = id_of(g_scope, "starpu.task.g_peak_ready");
	int id_exec = id_of(w_scope, "starpu.task.w_total_executed");
	seen_->int_ids = { id_total, id_peak_sub, id_peak_ready };
	Listening g(g_scope, seen_->int_ids, global_cb);
	starpu_perf_counter_set_global_listener(g.listener);
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "serial");
	for (int i = 0; i < 25; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->synchronous = 1;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen_->ints[0][id_total], 25);
	EXPECT_EQ(seen_->ints[0][id_peak_sub], 1);
	EXPECT_EQ(seen_->ints[0][id_peak_ready], 1);
	// Read back without a listener too.
	int64_t executed = 0;
	for (int w = 0; w < 2; w++) {
		astro_counter_value v;
		ASSERT_EQ(astro_counter_read(id_exec, &w, &v), 0);
		executed += v.int64_val;
	}
	EXPECT_EQ(executed, 25);
	starpu_perf_counter_unset_global_listener();
}

TEST_F(Counters, PeakReadyIsExactWhileWorkersAreBusy)
{
	start(2);
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "queued");
	int id_peak_ready = id_of(g_scope, "starpu.task.g_peak_ready");
	int id_current_ready = id_of(g_scope, "starpu.task.g_current_ready");
	int id_c_peak_ready = id_of(c_scope, "starpu.task.c_peak_ready");
	Listening c(c_scope, { id_c_peak_ready }, codelet_cb);
	seen_->int_ids = { id_c_peak_ready };
	starpu_perf_counter_set_per_codelet_listener(&cl, c.listener);
	Gate gate(2);
	ASSERT_TRUE(gate.close());
	for (int i = 0; i < 40; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	astro_counter_value v;
	ASSERT_EQ(astro_counter_read(id_current_ready, nullptr, &v), 0);
	EXPECT_EQ(v.int64_val, 40); // the ready-queue length
	gate.open();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(astro_counter_read(id_peak_ready, nullptr, &v), 0);
	EXPECT_EQ(v.int64_val, 40);
	ASSERT_EQ(astro_counter_read(id_current_ready, nullptr, &v), 0);
	EXPECT_EQ(v.int64_val, 0);
	ASSERT_EQ(astro_counter_read(id_c_peak_ready, &cl, &v), 0);
	EXPECT_EQ(v.int64_val, 40);
	EXPECT_EQ(seen_->ints[(long)(intptr_t)&cl][id_c_peak_ready], 40);
	starpu_perf_counter_unset_per_codelet_listener(&cl);
}

TEST_F(Counters, PeakSubmittedIsExactBehindADependency)
{
	start(2);
	static starpu_codelet cl = cpu_codelet(nop_func, 1, "reader");
	cl.modes[0] = STARPU_R;
	int id_peak_sub = id_of(g_scope, "starpu.task.g_peak_submitted");
	int id_c_peak_sub = id_of(c_scope, "starpu.task.c_peak_submitted");
	int id_c_total = id_of(c_scope, "starpu.task.c_total_executed");
	Listening c(c_scope, { id_c_peak_sub, id_c_total }, codelet_cb);
	starpu_perf_counter_set_per_codelet_listener(&cl, c.listener);
	int value = 0;
	starpu_data_handle_t handle;
	starpu_variable_data_register(&handle, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));
	ASSERT_EQ(starpu_data_acquire(handle, STARPU_W), 0);
	for (int i = 0; i < 30; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->handles[0] = handle;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	starpu_data_release(handle);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	astro_counter_value v;
	ASSERT_EQ(astro_counter_read(id_peak_sub, nullptr, &v), 0);
	EXPECT_EQ(v.int64_val, 30);
	ASSERT_EQ(astro_counter_read(id_c_peak_sub, &cl, &v), 0);
	EXPECT_EQ(v.int64_val, 30);
	ASSERT_EQ(astro_counter_read(id_c_total, &cl, &v), 0);
	EXPECT_EQ(v.int64_val, 30);
	starpu_data_unregister(handle);
	starpu_perf_counter_unset_per_codelet_listener(&cl);
}

// A gauge that falls and rises again: its peak moves only when a rise passes
// the old peak (20, then 30 above it, then 10 below it: 20, 30, 30), for the
// ready and the submitted gauges, globally and per codelet, read back and as
// the listener saw it.
TEST_F(Counters, PeaksFollowRisesAfterFalls)
{
	start(2);
	static starpu_codelet ready_cl = cpu_codelet(nop_func, 0, "ready_waves");
	static starpu_codelet sub_cl = cpu_codelet(nop_func, 1, "submitted_waves");
	sub_cl.modes[0] = STARPU_R;
	int id_peak_ready = id_of(g_scope, "starpu.task.g_peak_ready");
	int id_current_ready = id_of(g_scope, "starpu.task.g_current_ready");
	int id_peak_sub = id_of(g_scope, "starpu.task.g_peak_submitted");
	int id_current_sub = id_of(g_scope, "starpu.task.g_current_submitted");
	int id_c_peak_ready = id_of(c_scope, "starpu.task.c_peak_ready");
	int id_c_peak_sub = id_of(c_scope, "starpu.task.c_peak_submitted");
	ASSERT_GE(id_current_sub, 0);
	seen_->int_ids = { id_c_peak_ready, id_c_peak_sub };
	Listening c(c_scope, seen_->int_ids, codelet_cb);
	starpu_perf_counter_set_per_codelet_listener(&ready_cl, c.listener);
	starpu_perf_counter_set_per_codelet_listener(&sub_cl, c.listener);
	auto read = [](int id, void *context) {
		astro_counter_value v;
		EXPECT_EQ(astro_counter_read(id, context, &v), 0);
		return v.int64_val;
	};
	int value = 0;
	starpu_data_handle_t handle;
	starpu_variable_data_register(&handle, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));

	const int waves[] = { 20, 30, 10 };
	const int64_t peaks[] = { 20, 30, 30 };
	for (int k = 0; k < 3; k++) {
		SCOPED_TRACE("wave of " + std::to_string(waves[k]));
		// Ready: queued behind busy workers, then run.
		{
			Gate gate(2);
			ASSERT_TRUE(gate.close());
			for (int i = 0; i < waves[k]; i++)
				ASSERT_EQ(submit_detached(&ready_cl), 0);
			EXPECT_EQ(read(id_current_ready, nullptr), waves[k]);
		}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		EXPECT_EQ(read(id_current_ready, nullptr), 0);
		EXPECT_EQ(read(id_peak_ready, nullptr), peaks[k]);
		EXPECT_EQ(read(id_c_peak_ready, &ready_cl), peaks[k]);
		EXPECT_EQ(seen_->ints[(long)(intptr_t)&ready_cl][id_c_peak_ready], peaks[k]);

		// Submitted: held behind a write acquire, then released.
		ASSERT_EQ(starpu_data_acquire(handle, STARPU_W), 0);
		for (int i = 0; i < waves[k]; i++) {
			struct starpu_task *t = starpu_task_create();
			t->cl = &sub_cl;
			t->handles[0] = handle;
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
		EXPECT_EQ(read(id_current_sub, nullptr), waves[k]);
		starpu_data_release(handle);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		EXPECT_EQ(read(id_current_sub, nullptr), 0);
		EXPECT_EQ(read(id_peak_sub, nullptr), peaks[k]);
		EXPECT_EQ(read(id_c_peak_sub, &sub_cl), peaks[k]);
		EXPECT_EQ(seen_->ints[(long)(intptr_t)&sub_cl][id_c_peak_sub], peaks[k]);
	}
	EXPECT_FALSE(seen_->decreasing.load());
	starpu_data_unregister(handle);
	starpu_perf_counter_unset_per_codelet_listener(&ready_cl);
	starpu_perf_counter_unset_per_codelet_listener(&sub_cl);
}

TEST_F(Counters, TwoConcurrentSubmittersGiveTruePeaks)
{
	start(2);
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "concurrent");
	int id_total = id_of(g_scope, "starpu.task.g_total_submitted");
	int id_peak_ready = id_of(g_scope, "starpu.task.g_peak_ready");
	seen_->int_ids = { id_total, id_peak_ready };
	Listening g(g_scope, seen_->int_ids, global_cb);
	starpu_perf_counter_set_global_listener(g.listener);
	const int per_thread = 300;
	Gate gate(2);
	ASSERT_TRUE(gate.close());
	std::atomic<int> failures{0};
	auto submitter = [&] {
		for (int i = 0; i < per_thread; i++)
			if (submit_detached(&cl) != 0)
				failures++;
	};
	std::thread a(submitter), b(submitter);
	a.join();
	b.join();
	EXPECT_EQ(failures.load(), 0);
	gate.open();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen_->ints[0][id_total], 2 * per_thread + 2);
	EXPECT_EQ(seen_->ints[0][id_peak_ready], 2 * per_thread);
	EXPECT_FALSE(seen_->decreasing.load());
	// One callback per submission (2 gates included), one per wait end.
	EXPECT_EQ(seen_->calls.load(), 2 * per_thread + 2 + 1);
	starpu_perf_counter_unset_global_listener();
}

TEST_F(Counters, DependentChain)
{
	start(2);
	static starpu_codelet cl = cpu_codelet(nop_func, 1, "chain");
	cl.modes[0] = STARPU_RW;
	int id_total = id_of(g_scope, "starpu.task.g_total_submitted");
	int id_c_peak_sub = id_of(c_scope, "starpu.task.c_peak_submitted");
	int id_c_peak_ready = id_of(c_scope, "starpu.task.c_peak_ready");
	int id_c_exec = id_of(c_scope, "starpu.task.c_total_executed");
	Listening c(c_scope, { id_c_peak_sub, id_c_peak_ready, id_c_exec }, codelet_cb);
	starpu_perf_counter_set_per_codelet_listener(&cl, c.listener);
	int value = 0;
	starpu_data_handle_t handle;
	starpu_variable_data_register(&handle, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));
	const int n = 20;
	{
		Gate gate(2);
		ASSERT_TRUE(gate.close());
		for (int i = 0; i < n; i++)
			ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, handle, 0), 0);
		// The head of the chain is ready, the others wait for their predecessor.
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	astro_counter_value v;
	ASSERT_EQ(astro_counter_read(id_c_peak_sub, &cl, &v), 0);
	EXPECT_EQ(v.int64_val, n - 1);
	ASSERT_EQ(astro_counter_read(id_c_peak_ready, &cl, &v), 0);
	EXPECT_EQ(v.int64_val, 1);
	ASSERT_EQ(astro_counter_read(id_c_exec, &cl, &v), 0);
	EXPECT_EQ(v.int64_val, n);
	ASSERT_EQ(astro_counter_read(id_total, nullptr, &v), 0);
	EXPECT_EQ(v.int64_val, n + 2);
	starpu_data_unregister(handle);
	starpu_perf_counter_unset_per_codelet_listener(&cl);
}

// ------------------------------------------------------------ collection

TEST_F(Counters, CollectionStartAndStop)
{
	start(2);
	EXPECT_TRUE(astro_counter_collecting());
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "collect");
	int id_total = id_of(g_scope, "starpu.task.g_total_submitted");
	seen_->int_ids = { id_total };
	Listening g(g_scope, seen_->int_ids, global_cb);
	starpu_perf_counter_set_global_listener(g.listener);
	run(&cl, 10);
	EXPECT_EQ(seen_->calls.load(), 11);

	starpu_perf_counter_collection_stop();
	EXPECT_FALSE(astro_counter_collecting());
	run(&cl, 7);
	EXPECT_EQ(seen_->calls.load(), 11) << "the listener was called while collection was stopped";

	starpu_perf_counter_collection_start();
	EXPECT_TRUE(astro_counter_collecting());
	run(&cl, 5);
	EXPECT_EQ(seen_->ints[0][id_total], 15);

	// Calls nest as in StarPU.
	starpu_perf_counter_collection_stop();
	starpu_perf_counter_collection_stop();
	starpu_perf_counter_collection_start();
	EXPECT_FALSE(astro_counter_collecting());
	starpu_perf_counter_collection_start();
	EXPECT_TRUE(astro_counter_collecting());
	starpu_perf_counter_unset_global_listener();
}

TEST_F(Counters, CollectionOffByDefaultAndStartedByAListener)
{
	start(1, false);
	EXPECT_FALSE(astro_counter_collecting());
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "implicit");
	run(&cl, 5);
	astro_counter_value v;
	int id_total = id_of(g_scope, "starpu.task.g_total_submitted");
	ASSERT_EQ(astro_counter_read(id_total, nullptr, &v), 0);
	EXPECT_EQ(v.int64_val, 0);
	Listening g(g_scope, { id_total }, global_cb);
	starpu_perf_counter_set_global_listener(g.listener);
	EXPECT_TRUE(astro_counter_collecting());
	run(&cl, 5);
	ASSERT_EQ(astro_counter_read(id_total, nullptr, &v), 0);
	EXPECT_EQ(v.int64_val, 5);
	starpu_perf_counter_unset_global_listener();
}

TEST_F(Counters, ExplicitStopIsNotOverriddenByAListener)
{
	start(1, false);
	starpu_perf_counter_collection_start();
	starpu_perf_counter_collection_stop();
	int id_total = id_of(g_scope, "starpu.task.g_total_submitted");
	Listening g(g_scope, { id_total }, global_cb);
	starpu_perf_counter_set_global_listener(g.listener);
	EXPECT_FALSE(astro_counter_collecting());
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "stopped");
	run(&cl, 5);
	EXPECT_EQ(seen_->calls.load(), 0);
	starpu_perf_counter_unset_global_listener();
}

TEST_F(Counters, CollectionCallsOutsideTheRuntimeFailCleanly)
{
	std::string err = stderr_of([] {
		starpu_perf_counter_collection_start();
		starpu_perf_counter_collection_stop();
		EXPECT_EQ(starpu_perf_counter_set_alloc(g_scope), nullptr);
	});
	EXPECT_TRUE(contains(err, "starpu_perf_counter_collection_start: the runtime is not running")) << err;
	EXPECT_TRUE(contains(err, "starpu_perf_counter_set_alloc")) << err;
}

// ------------------------------------- listeners set and unset while tasks run

TEST_F(Counters, ListenersComeAndGoWhileTasksRun)
{
	start(2);
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "churn");
	int id_total = id_of(g_scope, "starpu.task.g_total_submitted");
	int id_exec = id_of(w_scope, "starpu.task.w_total_executed");
	int id_c_sub = id_of(c_scope, "starpu.task.c_total_submitted");
	Listening g(g_scope, { id_total }, global_cb);
	Listening w(w_scope, { id_exec }, worker_cb);
	Listening c(c_scope, { id_c_sub }, codelet_cb);
	seen_->int_ids = {};
	std::atomic<bool> stop{false};
	std::thread submitter([&] {
		for (int i = 0; i < 3000 && !stop; i++)
			if (submit_detached(&cl) != 0)
				break;
	});
	std::string err = stderr_of([&] {
		for (int round = 0; round < 200; round++) {
			starpu_perf_counter_set_global_listener(g.listener);
			starpu_perf_counter_set_all_per_worker_listeners(w.listener);
			starpu_perf_counter_set_per_codelet_listener(&cl, c.listener);
			if (round % 3 == 0)
				std::this_thread::yield();
			starpu_perf_counter_unset_per_codelet_listener(&cl);
			starpu_perf_counter_unset_all_per_worker_listeners();
			starpu_perf_counter_unset_global_listener();
		}
	});
	stop = true;
	submitter.join();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(err, "");

	// Set once more with nothing in flight: the per-codelet values count from here, exactly.
	seen_->int_ids = { id_c_sub };
	starpu_perf_counter_set_per_codelet_listener(&cl, c.listener);
	run(&cl, 12);
	EXPECT_EQ(seen_->ints[(long)(intptr_t)&cl][id_c_sub], 12);
	starpu_perf_counter_unset_per_codelet_listener(&cl);
}

// --------------------------------------------------------- runtime checks

int checks_id_double, checks_id_other_scope, checks_id_disabled, checks_id_int64;
int32_t checks_as_int32 = 0;
int64_t checks_as_int64 = 0, checks_other_scope = 0, checks_disabled = 0;
double checks_int64_as_double = 0, checks_double = 0;
bool checks_tried_unset = false;
starpu_perf_counter_sample *checks_saved_sample;

void checks_cb(starpu_perf_counter_listener *listener, starpu_perf_counter_sample *sample, void *)
{
	checks_as_int32 = starpu_perf_counter_sample_get_int32_value(sample, checks_id_double);
	checks_double = starpu_perf_counter_sample_get_double_value(sample, checks_id_double);
	checks_as_int64 = starpu_perf_counter_sample_get_int64_value(sample, checks_id_int64);
	checks_int64_as_double = starpu_perf_counter_sample_get_double_value(sample, checks_id_int64);
	checks_other_scope = starpu_perf_counter_sample_get_int64_value(sample, checks_id_other_scope);
	checks_disabled = starpu_perf_counter_sample_get_int64_value(sample, checks_id_disabled);
	checks_saved_sample = sample;
	// Changing listeners from a callback is refused (the sample is locked).
	if (!checks_tried_unset) {
		checks_tried_unset = true;
		starpu_perf_counter_unset_all_per_worker_listeners();
	}
	(void)listener;
}

TEST_F(Counters, WrongTypeWrongScopeAndDisabledReads)
{
	start(1);
	checks_tried_unset = false;
	checks_id_double = id_of(w_scope, "starpu.task.w_cumul_execution_time");
	checks_id_int64 = id_of(w_scope, "starpu.task.w_total_executed");
	checks_id_other_scope = id_of(g_scope, "starpu.task.g_total_submitted");
	checks_id_disabled = id_of(w_scope, "starpu.worker.w_cumul_sleeping_time");
	Listening l(w_scope, { checks_id_double, checks_id_int64 }, checks_cb);
	starpu_perf_counter_set_all_per_worker_listeners(l.listener);
	static starpu_codelet cl = cpu_codelet(sleep_func, 0, "checks");
	std::string err = stderr_of([&] { run(&cl, 3, (void *)(uintptr_t)1); });
	// A double that is no integer cannot be read as int32: the error value.
	EXPECT_GT(checks_double, 0.0);
	if (checks_double == std::floor(checks_double))
		EXPECT_EQ(checks_as_int32, (int32_t)checks_double);
	else
		EXPECT_EQ(checks_as_int32, -1);
	EXPECT_TRUE(contains(err, "counter 'starpu.task.w_cumul_execution_time' is of type double: read it with "
				  "starpu_perf_counter_sample_get_double_value()")) << err;
	// An int64 read as double converts exactly, with the message.
	EXPECT_EQ(checks_as_int64, 3);
	EXPECT_EQ(checks_int64_as_double, 3.0);
	EXPECT_TRUE(contains(err, "read it with starpu_perf_counter_sample_get_int64_value()")) << err;
	EXPECT_EQ(checks_other_scope, -1);
	EXPECT_TRUE(contains(err, "counter 'starpu.task.g_total_submitted' belongs to scope global but the sample is of scope per_worker"))
		<< err;
	EXPECT_EQ(checks_disabled, -1);
	EXPECT_TRUE(contains(err, "'starpu.worker.w_cumul_sleeping_time' is not enabled in the listener's set")) << err;
	EXPECT_TRUE(contains(err, "starpu_perf_counter_unset_all_per_worker_listeners: called from a listener callback")) << err;

	// Each problem is reported once, not once per task.
	size_t lines = std::count(err.begin(), err.end(), '\n');
	EXPECT_EQ(lines, 5u) << err;

	// A sample kept past its callback is refused.
	err = stderr_of([] { EXPECT_EQ(starpu_perf_counter_sample_get_int64_value(checks_saved_sample, checks_id_int64), -1); });
	EXPECT_TRUE(contains(err, "read a sample only inside the listener callback")) << err;
	err = stderr_of([] { EXPECT_TRUE(std::isnan(starpu_perf_counter_sample_get_double_value(nullptr, checks_id_double))); });
	EXPECT_TRUE(contains(err, "starpu_perf_counter_sample_get_double_value")) << err;
	starpu_perf_counter_unset_all_per_worker_listeners();
}

TEST_F(Counters, BadIdsNamesSetsAndListeners)
{
	start(1);
	int w_id = id_of(w_scope, "starpu.task.w_total_executed");
	std::string err;

	err = stderr_of([] { EXPECT_EQ(starpu_perf_counter_name_to_id(g_scope, "starpu.task.no_such_counter"), -1); });
	EXPECT_TRUE(contains(err, "no counter named 'starpu.task.no_such_counter' in scope global")) << err;
	err = stderr_of([] { EXPECT_EQ(starpu_perf_counter_name_to_id(g_scope, "starpu.task.w_total_executed"), -1); });
	EXPECT_TRUE(contains(err, "belongs to scope per_worker, not global: pass starpu_perf_counter_scope_per_worker")) << err;
	err = stderr_of([] {
		EXPECT_EQ(starpu_perf_counter_id_to_name(12345), nullptr);
		EXPECT_EQ(starpu_perf_counter_get_type_id(-3), -1);
		EXPECT_EQ(starpu_perf_counter_get_help_string((99 << 4) | 2), nullptr);
		EXPECT_EQ(starpu_perf_counter_nth_to_id(g_scope, 1000), -1);
		EXPECT_EQ(starpu_perf_counter_nb((starpu_perf_counter_scope)1), -1);
	});
	EXPECT_TRUE(contains(err, "12345 is not a counter id")) << err;
	EXPECT_TRUE(contains(err, "out of range")) << err;

	// An id of another scope leaves the set unchanged.
	starpu_perf_counter_set *g_set = starpu_perf_counter_set_alloc(g_scope);
	err = stderr_of([&] { starpu_perf_counter_set_enable_id(g_set, w_id); });
	EXPECT_TRUE(contains(err, "counter 'starpu.task.w_total_executed' belongs to scope per_worker, the set to scope global")) << err;

	// A listener cannot go on a sample of another scope.
	starpu_perf_counter_listener *g_listener = starpu_perf_counter_listener_init(g_set, global_cb, nullptr);
	err = stderr_of([&] { starpu_perf_counter_set_all_per_worker_listeners(g_listener); });
	EXPECT_TRUE(contains(err, "reports a set of scope global, not per_worker: use starpu_perf_counter_set_global_listener()")) << err;
	err = stderr_of([&] { starpu_perf_counter_set_per_worker_listener(7, g_listener); });
	EXPECT_FALSE(err.empty());

	// Freed sets and listeners are recognised, never followed.
	starpu_perf_counter_listener_exit(g_listener);
	starpu_perf_counter_set_free(g_set);
	err = stderr_of([&] {
		starpu_perf_counter_set_enable_id(g_set, w_id);
		EXPECT_EQ(starpu_perf_counter_listener_init(g_set, global_cb, nullptr), nullptr);
		starpu_perf_counter_set_free(g_set);
		starpu_perf_counter_set_global_listener(g_listener);
		starpu_perf_counter_listener_exit(g_listener);
	});
	EXPECT_TRUE(contains(err, "starpu_perf_counter_set_enable_id: counter set")) << err;
	EXPECT_TRUE(contains(err, "was freed with starpu_perf_counter_set_free()")) << err;
	EXPECT_TRUE(contains(err, "was freed with starpu_perf_counter_listener_exit()")) << err;
	EXPECT_GE(std::count(err.begin(), err.end(), '\n'), 5) << err;

	// NULL everywhere.
	err = stderr_of([] {
		starpu_perf_counter_set_enable_id(nullptr, 2);
		EXPECT_EQ(starpu_perf_counter_listener_init(nullptr, global_cb, nullptr), nullptr);
		starpu_perf_counter_set_global_listener(nullptr);
		starpu_perf_counter_set_per_codelet_listener(nullptr, nullptr);
		starpu_perf_counter_unset_per_codelet_listener(nullptr);
		EXPECT_EQ(astro_perf_counter_listener_get_user_arg(nullptr), nullptr);
	});
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 6) << err;

	// Unsetting what is not set says so.
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "never-watched");
	err = stderr_of([] {
		starpu_perf_counter_unset_global_listener();
		starpu_perf_counter_unset_per_worker_listener(0);
		starpu_perf_counter_unset_per_worker_listener(99);
		starpu_perf_counter_unset_per_codelet_listener(&cl);
	});
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 4) << err;
	EXPECT_TRUE(contains(err, "worker 99 does not exist")) << err;
}

TEST_F(Counters, ListenerExitedWhileSetIsUnsetFirst)
{
	start(2);
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "exited");
	int id_exec = id_of(w_scope, "starpu.task.w_total_executed");
	starpu_perf_counter_set *set = starpu_perf_counter_set_alloc(w_scope);
	starpu_perf_counter_set_enable_id(set, id_exec);
	starpu_perf_counter_listener *listener = starpu_perf_counter_listener_init(set, worker_cb, nullptr);
	starpu_perf_counter_set_all_per_worker_listeners(listener);
	// The set may go first: the listener keeps what it needs.
	starpu_perf_counter_set_free(set);
	run(&cl, 10);
	std::string err = stderr_of([&] { starpu_perf_counter_listener_exit(listener); });
	EXPECT_TRUE(contains(err, "is still set on 2 sample(s)")) << err;
	int calls = seen_->calls.load();
	run(&cl, 10);
	EXPECT_EQ(seen_->calls.load(), calls);
}

TEST_F(Counters, SetsFromAnEarlierRunAreRefused)
{
	start(1);
	starpu_perf_counter_set *set = starpu_perf_counter_set_alloc(g_scope);
	starpu_shutdown();
	start(1);
	std::string err = stderr_of([&] {
		starpu_perf_counter_set_enable_id(set, 2);
		EXPECT_EQ(starpu_perf_counter_listener_init(set, global_cb, nullptr), nullptr);
	});
	EXPECT_TRUE(contains(err, "allocated before the last starpu_shutdown()")) << err;
	starpu_perf_counter_set_free(set);
}

TEST_F(Counters, RegistrationIsClosedOnceRunning)
{
	start(1);
	std::string err = stderr_of([] {
		EXPECT_EQ(astro_counter_register("test", g_scope, "test.late.g_counter", starpu_perf_counter_type_int64,
						 ASTRO_COUNTER_MONOTONIC, "tasks", "too late"), -EBUSY);
		EXPECT_EQ(astro_counter_register_updater("test", g_scope,
							 [](starpu_perf_counter_sample *, void *, void *) {}, nullptr), -EBUSY);
	});
	EXPECT_TRUE(contains(err, "counters are registered during starpu_init()")) << err;
	int id = id_of(g_scope, "starpu.task.g_total_submitted");
	astro_counter_value v;
	err = stderr_of([&] {
		EXPECT_EQ(astro_counter_read(id, nullptr, nullptr), -EINVAL);
		EXPECT_EQ(astro_counter_read(12345, nullptr, &v), -EINVAL);
		int bad_worker = 42;
		EXPECT_EQ(astro_counter_read(id_of(w_scope, "starpu.task.w_total_executed"), &bad_worker, &v), -EINVAL);
	});
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 3) << err;
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "unwatched");
	EXPECT_EQ(astro_counter_read(id_of(c_scope, "starpu.task.c_total_executed"), &cl, &v), -ENODATA);
	starpu_shutdown();
	err = stderr_of([&] { EXPECT_EQ(astro_counter_read(id, nullptr, &v), -ESRCH); });
	EXPECT_TRUE(contains(err, "not running")) << err;
}

// --------------------------------------------------------- plugin counters

TEST_F(Counters, PluginRegisteredCounters)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("counters_test.so"));
	ScopedEnv path("STARPU_PLUGIN_PATH", build_plugin_path() + ":" + dir.path());
	// The plugin tries the registrations that must fail: each says why.
	std::string err = stderr_of([&] { start(2); });
	EXPECT_TRUE(contains(err, "counter name 'test.counters.g_submitted' is already registered by counters_test")) << err;
	EXPECT_TRUE(contains(err, "counters_test already has an updater for scope global")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 5) << err;
	int id_submitted = id_of(g_scope, "test.counters.g_submitted");
	int id_answer = id_of(g_scope, "test.counters.g_answer");
	int id_failed = id_of(g_scope, "test.counters.g_failed_checks");
	int id_ended = id_of(w_scope, "test.counters.w_ended");
	int id_name = id_of(c_scope, "test.counters.c_name_length");
	ASSERT_GE(id_submitted, 0);
	ASSERT_GE(id_answer, 0);
	ASSERT_GE(id_ended, 0);
	ASSERT_GE(id_name, 0);
	EXPECT_EQ(starpu_perf_counter_get_type_id(id_submitted), starpu_perf_counter_type_int32);
	EXPECT_EQ(starpu_perf_counter_get_type_id(id_answer), starpu_perf_counter_type_float);
	EXPECT_EQ(starpu_perf_counter_get_type_id(id_name), starpu_perf_counter_type_double);
	EXPECT_STREQ(astro_counter_get_module(id_answer), "counters_test");
	EXPECT_STREQ(astro_counter_get_unit(id_answer), "");

	static starpu_codelet cl = cpu_codelet(nop_func, 0, "seven77");
	Listening c(c_scope, { id_name }, codelet_cb);
	seen_->double_ids = { id_name };
	starpu_perf_counter_set_per_codelet_listener(&cl, c.listener);
	run(&cl, 16);
	astro_counter_value v;
	ASSERT_EQ(astro_counter_read(id_failed, nullptr, &v), 0);
	EXPECT_EQ(v.int64_val, 0) << "a registration that should have failed did not";
	ASSERT_EQ(astro_counter_read(id_submitted, nullptr, &v), 0);
	EXPECT_EQ(v.int32_val, 16);
	ASSERT_EQ(astro_counter_read(id_answer, nullptr, &v), 0);
	EXPECT_EQ(v.float_val, 42.5f);
	int ended = 0;
	for (int w = 0; w < 2; w++) {
		ASSERT_EQ(astro_counter_read(id_ended, &w, &v), 0);
		ended += v.int32_val;
	}
	EXPECT_EQ(ended, 16);
	EXPECT_EQ(seen_->doubles[(long)(intptr_t)&cl][id_name], 7.0);
	starpu_perf_counter_unset_per_codelet_listener(&cl);
}

// A sample is filled as its listener reads it: the updater of a module runs
// once per refresh, at the first read of one of its counters, and not at all
// for a callback that reads none of them.
struct LazyReads
{
	int id_updates = -1, id_answer = -1;
	int refreshes = 0, reading_refreshes = 0;
	std::vector<int64_t> first, second;
	float answer = 0;
};
LazyReads *g_lazy;

void lazy_cb(starpu_perf_counter_listener *, starpu_perf_counter_sample *sample, void *)
{
	LazyReads *l = g_lazy; // global refreshes run on the submitting thread: no lock needed
	if (l->refreshes++ % 2)
		return;
	l->reading_refreshes++;
	l->first.push_back(starpu_perf_counter_sample_get_int64_value(sample, l->id_updates));
	l->answer = starpu_perf_counter_sample_get_float_value(sample, l->id_answer);
	l->second.push_back(starpu_perf_counter_sample_get_int64_value(sample, l->id_updates));
}

TEST_F(Counters, SamplesAreFilledAsTheListenerReadsThem)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("counters_test.so"));
	ScopedEnv path("STARPU_PLUGIN_PATH", build_plugin_path() + ":" + dir.path());
	ScopedEnv silent("STARPU_SILENT", "1");
	start(1);
	LazyReads lazy;
	g_lazy = &lazy;
	lazy.id_updates = id_of(g_scope, "test.counters.g_updates");
	lazy.id_answer = id_of(g_scope, "test.counters.g_answer");
	ASSERT_GE(lazy.id_updates, 0);
	ASSERT_GE(lazy.id_answer, 0);
	Listening g(g_scope, { lazy.id_updates, lazy.id_answer }, lazy_cb);
	starpu_perf_counter_set_global_listener(g.listener);
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "lazy");
	run(&cl, 20);
	starpu_perf_counter_unset_global_listener();
	g_lazy = nullptr;
	EXPECT_GE(lazy.refreshes, 20); // one per submission, and one per wait
	ASSERT_EQ(lazy.first.size(), (size_t)lazy.reading_refreshes);
	for (int k = 0; k < lazy.reading_refreshes; k++) {
		EXPECT_EQ(lazy.first[k], k + 1) << "the updater ran in a refresh whose callback read none of its counters";
		EXPECT_EQ(lazy.second[k], lazy.first[k]) << "the updater ran twice in one refresh";
	}
	EXPECT_EQ(lazy.answer, 42.5f);
}

class SchedulerCounters : public Counters, public ::testing::WithParamInterface<const char *> {};

TEST_P(SchedulerCounters, PushesAndPopsOfThePolicy)
{
	std::string policy = GetParam();
	ScopedEnv sched("STARPU_SCHED", policy.c_str());
	start(2);
	int id_pushed = id_of(g_scope, ("starpu.sched." + policy + ".g_total_pushed").c_str());
	int id_popped = id_of(w_scope, ("starpu.sched." + policy + ".w_total_popped").c_str());
	ASSERT_GE(id_pushed, 0);
	ASSERT_GE(id_popped, 0);
	EXPECT_STREQ(astro_counter_get_module(id_pushed), ("sched_" + policy).c_str());
	static starpu_codelet cl = cpu_codelet(nop_func, 0, "sched");
	run(&cl, 100);
	astro_counter_value v;
	ASSERT_EQ(astro_counter_read(id_pushed, nullptr, &v), 0);
	EXPECT_EQ(v.int64_val, 100);
	int64_t popped = 0;
	for (int w = 0; w < 2; w++) {
		ASSERT_EQ(astro_counter_read(id_popped, &w, &v), 0);
		popped += v.int64_val;
	}
	EXPECT_EQ(popped, 100);
	if (policy == "lws") {
		int id_stolen = id_of(w_scope, "starpu.sched.lws.w_total_stolen");
		ASSERT_GE(id_stolen, 0);
		int zero = 0;
		ASSERT_EQ(astro_counter_read(id_stolen, &zero, &v), 0);
		EXPECT_GE(v.int64_val, 0);
	}
	// Nothing counted while collection is off.
	starpu_perf_counter_collection_stop();
	run(&cl, 10);
	ASSERT_EQ(astro_counter_read(id_pushed, nullptr, &v), 0);
	EXPECT_EQ(v.int64_val, 100);
}

INSTANTIATE_TEST_SUITE_P(Policies, SchedulerCounters, ::testing::Values("eager", "lws"));

// ---------------------------------------------------------- atomic helpers

TEST(CounterHelpers, AtomicsUnderContention)
{
	const int nthreads = 4, per_thread = 100000;
	int64_t sum = 0, max = INT64_MIN, min = INT64_MAX, gauge = 0;
	int32_t max32 = INT32_MIN;
	double dsum = 0, dmax = -1e300;
	float fsum = 0;
	std::vector<std::thread> threads;
	for (int t = 0; t < nthreads; t++)
		threads.emplace_back([&, t] {
			for (int i = 0; i < per_thread; i++) {
				int64_t v = (int64_t)t * per_thread + i;
				astro_counter_add_int64(&sum, 1);
				astro_counter_max_int64(&max, v);
				astro_counter_min_int64(&min, v);
				astro_counter_max_int32(&max32, (int32_t)(v % 100003));
				astro_counter_add_double(&dsum, 0.5);
				astro_counter_max_double(&dmax, (double)v / 3.0);
				if (i < 1000)
					astro_counter_add_float(&fsum, 1.0f);
				astro_counter_add_int64(&gauge, 1);
				astro_counter_dec_positive_int64(&gauge);
				astro_counter_dec_positive_int64(&gauge); // one too many: never below zero
			}
		});
	for (auto &th : threads)
		th.join();
	EXPECT_EQ(sum, (int64_t)nthreads * per_thread);
	EXPECT_EQ(max, (int64_t)nthreads * per_thread - 1);
	EXPECT_EQ(min, 0);
	EXPECT_EQ(max32, 100002);
	EXPECT_EQ(dsum, nthreads * per_thread * 0.5);
	EXPECT_EQ(dmax, ((double)nthreads * per_thread - 1) / 3.0);
	EXPECT_EQ(fsum, nthreads * 1000.0f);
	EXPECT_EQ(gauge, 0);

	float fmin = 10.0f;
	astro_counter_min_float(&fmin, NAN);
	astro_counter_min_float(&fmin, 2.5f);
	EXPECT_EQ(fmin, 2.5f);
	double dmin = 1.0;
	astro_counter_min_double(&dmin, -4.0);
	EXPECT_EQ(dmin, -4.0);
}

// ------------------------------------------------------------ listing tool

// A JSON value: enough of JSON to read the tool's output.
struct Json
{
	enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
	double number = 0;
	bool boolean = false;
	std::string string;
	std::vector<Json> array;
	std::map<std::string, Json> object;
	const Json &operator[](const std::string &key) const
	{
		static const Json null;
		auto it = object.find(key);
		return it == object.end() ? null : it->second;
	}
};

class JsonParser
{
public:
	explicit JsonParser(const std::string &text) : s_(text) {}
	bool parse(Json *out)
	{
		if (!value(out))
			return false;
		skip();
		return pos_ == s_.size();
	}

private:
	void skip()
	{
		while (pos_ < s_.size() && isspace((unsigned char)s_[pos_]))
			pos_++;
	}
	bool literal(const char *word)
	{
		size_t n = strlen(word);
		if (s_.compare(pos_, n, word) != 0)
			return false;
		pos_ += n;
		return true;
	}
	bool str(std::string *out)
	{
		if (s_[pos_] != '"')
			return false;
		pos_++;
		while (pos_ < s_.size() && s_[pos_] != '"') {
			char c = s_[pos_++];
			if (c == '\\') {
				if (pos_ >= s_.size())
					return false;
				char e = s_[pos_++];
				switch (e) {
				case 'n': c = '\n'; break;
				case 't': c = '\t'; break;
				case 'r': c = '\r'; break;
				case 'u':
					if (pos_ + 4 > s_.size())
						return false;
					c = (char)strtol(s_.substr(pos_, 4).c_str(), nullptr, 16);
					pos_ += 4;
					break;
				default: c = e;
				}
			} else if ((unsigned char)c < 0x20) {
				return false;
			}
			out->push_back(c);
		}
		if (pos_ >= s_.size())
			return false;
		pos_++;
		return true;
	}
	bool value(Json *out)
	{
		skip();
		if (pos_ >= s_.size())
			return false;
		char c = s_[pos_];
		if (c == '{') {
			out->kind = Json::Object;
			pos_++;
			skip();
			if (s_[pos_] == '}') {
				pos_++;
				return true;
			}
			for (;;) {
				skip();
				std::string key;
				if (!str(&key))
					return false;
				skip();
				if (s_[pos_++] != ':')
					return false;
				if (!value(&out->object[key]))
					return false;
				skip();
				if (s_[pos_] == ',') {
					pos_++;
					continue;
				}
				if (s_[pos_] != '}')
					return false;
				pos_++;
				return true;
			}
		}
		if (c == '[') {
			out->kind = Json::Array;
			pos_++;
			skip();
			if (s_[pos_] == ']') {
				pos_++;
				return true;
			}
			for (;;) {
				out->array.emplace_back();
				if (!value(&out->array.back()))
					return false;
				skip();
				if (s_[pos_] == ',') {
					pos_++;
					continue;
				}
				if (s_[pos_] != ']')
					return false;
				pos_++;
				return true;
			}
		}
		if (c == '"') {
			out->kind = Json::String;
			return str(&out->string);
		}
		if (literal("true") || literal("false")) {
			out->kind = Json::Bool;
			out->boolean = s_[pos_ - 1] == 'e' && s_[pos_ - 2] == 'u';
			return true;
		}
		if (literal("null"))
			return true;
		char *end = nullptr;
		out->kind = Json::Number;
		out->number = strtod(s_.c_str() + pos_, &end);
		if (end == s_.c_str() + pos_)
			return false;
		pos_ = end - s_.c_str();
		return true;
	}
	const std::string &s_;
	size_t pos_ = 0;
};

// Runs the listing tool with args; returns its stdout, and its exit status in *status.
std::string run_tool(const std::string &args, int *status)
{
	std::string tool = env_or("ASTRO_TEST_TOOLS_DIR", "") + "/astrolabe-perf-list";
	std::string out;
	FILE *p = popen((tool + " " + args + " 2>/dev/null").c_str(), "r");
	if (!p) {
		*status = -1;
		return out;
	}
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

class ListingTool : public ::testing::Test
{
protected:
	void SetUp() override
	{
		ASSERT_FALSE(env_or("ASTRO_TEST_TOOLS_DIR", "").empty()) << "ASTRO_TEST_TOOLS_DIR is not set: run through make check";
		ASSERT_TRUE(file_exists(env_or("ASTRO_TEST_TOOLS_DIR", "") + "/astrolabe-perf-list"));
	}
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
};

TEST_F(ListingTool, JsonListsEveryCounterWithItsPlugins)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("counters_test.so"));
	ScopedEnv path("STARPU_PLUGIN_PATH", build_plugin_path() + ":" + dir.path());
	int status;
	std::string out = run_tool("--json", &status);
	ASSERT_EQ(status, 0) << out;
	Json doc;
	ASSERT_TRUE(JsonParser(out).parse(&doc)) << out;
	ASSERT_EQ(doc.kind, Json::Object);
	EXPECT_EQ(doc["starpu_api"].string, "1.4.12");
	const Json &counters = doc["counters"];
	ASSERT_EQ(counters.kind, Json::Array);
	std::map<std::string, const Json *> by_name;
	for (const Json &c : counters.array)
		by_name[c["name"].string] = &c;
	struct Expected { const char *name, *scope, *type, *module; };
	const Expected expected[] = {
		{ "starpu.task.g_total_submitted", "global", "int64", "kernel" },
		{ "starpu.task.g_peak_submitted", "global", "int64", "kernel" },
		{ "starpu.task.g_peak_ready", "global", "int64", "kernel" },
		{ "starpu.task.w_total_executed", "per_worker", "int64", "kernel" },
		{ "starpu.task.w_cumul_execution_time", "per_worker", "double", "kernel" },
		{ "starpu.task.c_total_submitted", "per_codelet", "int64", "kernel" },
		{ "starpu.task.c_peak_submitted", "per_codelet", "int64", "kernel" },
		{ "starpu.task.c_peak_ready", "per_codelet", "int64", "kernel" },
		{ "starpu.task.c_total_executed", "per_codelet", "int64", "kernel" },
		{ "starpu.task.c_cumul_execution_time", "per_codelet", "double", "kernel" },
		{ "starpu.sched.lws.g_total_pushed", "global", "int64", "sched_lws" },
		{ "starpu.sched.eager.w_total_popped", "per_worker", "int64", "sched_eager" },
		{ "test.counters.g_answer", "global", "float", "counters_test" },
		{ "test.counters.w_ended", "per_worker", "int32", "counters_test" },
	};
	for (const Expected &e : expected) {
		ASSERT_TRUE(by_name.count(e.name)) << e.name << " missing from:\n" << out;
		const Json &c = *by_name[e.name];
		EXPECT_EQ(c["scope"].string, e.scope) << e.name;
		EXPECT_EQ(c["type"].string, e.type) << e.name;
		EXPECT_EQ(c["module"].string, e.module) << e.name;
		EXPECT_FALSE(c["help"].string.empty()) << e.name;
		EXPECT_TRUE(c["kind"].string == "monotonic" || c["kind"].string == "instant") << e.name;
		EXPECT_EQ(c["unit"].kind, Json::String) << e.name;
		EXPECT_EQ(c["id"].kind, Json::Number) << e.name;
	}
	EXPECT_EQ((*by_name["starpu.task.g_total_submitted"])["id"].number, 2);
	EXPECT_EQ((*by_name["starpu.task.g_total_submitted"])["unit"].string, "tasks");
}

TEST_F(ListingTool, TextListsEveryScope)
{
	int status;
	std::string out = run_tool("", &status);
	ASSERT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "scope global:")) << out;
	EXPECT_TRUE(contains(out, "scope per_worker:")) << out;
	EXPECT_TRUE(contains(out, "scope per_codelet:")) << out;
	EXPECT_TRUE(contains(out, "  starpu.task.w_cumul_execution_time  [double, monotonic, us] (kernel)\n")) << out;
	EXPECT_TRUE(contains(out, "starpu.sched.lws.w_total_stolen")) << out;
	run_tool("--no-such-option", &status);
	EXPECT_EQ(status, 2);
}

} // namespace
