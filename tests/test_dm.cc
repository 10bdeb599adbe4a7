// SPDX-License-Identifier: LGPL-2.1-or-later
// The model-based policies (plugins/policies/dm: dm, dmda, dmdas, dmdar, dmdap,
// heft). Every decision here is made by crafted models (per-worker cost and
// energy functions, so predictions are exact) while the workers are held in a
// Gate: what is queued stays observable and no assertion depends on timing.
#include "helpers.h"
#include <astrolabe/plugin.h>
#include <astrolabe/counters.h>
#include "dm_ready_probe.h"

#include <climits>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

using namespace astro_test;

namespace {

class Dm : public ::testing::Test
{
protected:
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}

	// Starts policy with ncpus workers; fails the test when it is not the policy in use.
	void start(const char *policy, int ncpus, std::string *err_out = nullptr)
	{
		starpu_conf conf = conf_with_ncpus(ncpus);
		conf.sched_policy_name = policy;
		int ret = -1;
		std::string err = stderr_of([&] { ret = starpu_init(&conf); });
		if (err_out)
			*err_out = err;
		ASSERT_EQ(ret, 0) << err;
		if (!policy_registered(policy)) {
			starpu_shutdown();
			GTEST_SKIP() << "the dm policies are not built here (--enable-plugins without sched_dm)";
		}
		ASSERT_EQ(policy_name(), policy) << err;
		ASSERT_EQ(starpu_worker_get_count(), (unsigned)ncpus);
	}
};

#define START_OR_RETURN(...) \
	do { \
		start(__VA_ARGS__); \
		if (IsSkipped() || HasFatalFailure()) \
			return; \
	} while (0)

// ------------------------------------------------------------ crafted models

// Per worker (and implementation) costs in µs, and energies in J; NaN: uncalibrated.
double g_cost[STARPU_NMAXWORKERS][STARPU_MAXIMPLEMENTATIONS];
double g_energy[STARPU_NMAXWORKERS];

double cost_of(struct starpu_task *, unsigned workerid, unsigned nimpl)
{
	return g_cost[workerid][nimpl];
}

double energy_of(struct starpu_task *, unsigned workerid, unsigned)
{
	return g_energy[workerid];
}

void set_costs(std::initializer_list<double> per_worker)
{
	unsigned w = 0;
	for (double c : per_worker) {
		for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; i++)
			g_cost[w][i] = c;
		w++;
	}
}

starpu_perfmodel per_worker_model(const char *symbol, double (*fn)(struct starpu_task *, unsigned, unsigned))
{
	starpu_perfmodel m;
	memset(&m, 0, sizeof(m));
	m.type = STARPU_PER_WORKER;
	m.worker_cost_function = fn;
	m.symbol = symbol;
	return m;
}

// Where each task ran: its arg is an index into g_ran_on.
std::mutex g_lock;
std::vector<int> g_ran_on;
std::vector<int> g_order;

void record(void **, void *arg)
{
	std::lock_guard<std::mutex> lock(g_lock);
	g_ran_on[(size_t)(uintptr_t)arg] = starpu_worker_get_id();
	g_order.push_back((int)(uintptr_t)arg);
}

void reset_records(size_t n)
{
	std::lock_guard<std::mutex> lock(g_lock);
	g_ran_on.assign(n, -1);
	g_order.clear();
}

int submit(starpu_codelet *cl, int i, int priority = 0)
{
	return submit_detached(cl, (void *)(uintptr_t)i, priority);
}

// Runs n tasks of cl queued while every worker is held, then returns where each ran.
std::vector<int> place_held(starpu_codelet *cl, int n)
{
	reset_records((size_t)n);
	{
		Gate gate(starpu_worker_get_count());
		EXPECT_TRUE(gate.close());
		for (int i = 0; i < n; i++)
			EXPECT_EQ(submit(cl, i), 0);
	}
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	return g_ran_on;
}

int count_on(const std::vector<int> &ran_on, int workerid)
{
	return (int)std::count(ran_on.begin(), ran_on.end(), workerid);
}

// ------------------------------------------------------------------ selection

TEST_F(Dm, EveryVariantIsSelectableWithoutWarning)
{
	for (const char *policy : { "dm", "dmda", "dmdas", "dmdar", "dmdap", "heft" }) {
		std::string err;
		start(policy, 2, &err);
		if (IsSkipped() || HasFatalFailure())
			return;
		EXPECT_FALSE(contains(err, "not found")) << policy << ": " << err;
		EXPECT_FALSE(contains(err, "[astrolabe]")) << policy << ": " << err;
		starpu_shutdown();
	}
}

TEST_F(Dm, StarpuSchedDmdaNoLongerFallsBack)
{
	ScopedEnv sched("STARPU_SCHED", "dmda");
	starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncpus = 2;
	int ret = -1;
	std::string err = stderr_of([&] { ret = starpu_init(&conf); });
	ASSERT_EQ(ret, 0) << err;
	if (!policy_registered("dmda"))
		GTEST_SKIP() << "the dm policies are not built here";
	EXPECT_EQ(policy_name(), "dmda");
	EXPECT_EQ(err, "");
}

// ------------------------------------------------------------------ placement

// One task at a time: it goes where its model says it is faster.
TEST_F(Dm, EachTaskGoesToItsFastestWorker)
{
	for (const char *policy : { "dm", "dmda" }) {
		START_OR_RETURN(policy, 2);
		static starpu_perfmodel model = per_worker_model("dm_fastest", cost_of);
		starpu_codelet cl = cpu_codelet(record, 0, "fastest");
		cl.model = &model;
		for (int fast : { 1, 0 }) {
			set_costs({ fast == 0 ? 10.0 : 1000.0, fast == 1 ? 10.0 : 1000.0 });
			reset_records(20);
			for (int i = 0; i < 20; i++) {
				ASSERT_EQ(submit(&cl, i), 0);
				ASSERT_EQ(starpu_task_wait_for_all(), 0);
			}
			EXPECT_EQ(count_on(g_ran_on, fast), 20) << policy << ", fast worker " << fast;
		}
		starpu_shutdown();
	}
}

// Queued work counts: with costs 100 and 230 µs, seven held tasks end first as
// w0 w0 w1 w0 w0 w1 w0 (ends 100 200 | 230 | 300 400 | 460 | 500).
TEST_F(Dm, QueuedWorkIsCountedInTheExpectedEnd)
{
	for (const char *policy : { "dm", "dmda", "dmdar" }) {
		START_OR_RETURN(policy, 2);
		static starpu_perfmodel model = per_worker_model("dm_queued", cost_of);
		starpu_codelet cl = cpu_codelet(record, 0, "queued");
		cl.model = &model;
		set_costs({ 100.0, 230.0 });
		std::vector<int> expected = { 0, 0, 1, 0, 0, 1, 0 };
		EXPECT_EQ(place_held(&cl, 7), expected) << policy;
		starpu_shutdown();
	}
}

// Among a codelet's implementations, the fastest on the chosen worker runs.
std::atomic<int> g_impl_runs[2];
void impl0(void **, void *) { g_impl_runs[0]++; }
void impl1(void **, void *) { g_impl_runs[1]++; }

TEST_F(Dm, FastestImplementationRuns)
{
	START_OR_RETURN("dmda", 2);
	static starpu_perfmodel model = per_worker_model("dm_impl", cost_of);
	starpu_codelet cl = cpu_codelet(impl0, 0, "impls");
	cl.cpu_funcs[1] = impl1;
	cl.model = &model;
	for (int fast : { 1, 0 }) {
		g_impl_runs[0] = g_impl_runs[1] = 0;
		for (int w = 0; w < 2; w++) {
			g_cost[w][0] = fast == 0 ? 10.0 : 500.0;
			g_cost[w][1] = fast == 1 ? 10.0 : 500.0;
		}
		for (int i = 0; i < 10; i++)
			ASSERT_EQ(submit_detached(&cl), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		EXPECT_EQ(g_impl_runs[fast].load(), 10) << "fast implementation " << fast;
		EXPECT_EQ(g_impl_runs[1 - fast].load(), 0);
	}
}

// --------------------------------------------------- alpha, beta, gamma, knobs

// Worker 0 is fast (100 µs) and costly (1 J), worker 1 slower (200 µs) and
// frugal (1 mJ). Fitness: w0 = gamma·1, w1 = alpha·100 + gamma·0.001.
// The runtime keeps the models it used until starpu_shutdown(): they outlive every test.
starpu_perfmodel g_energy_time = per_worker_model("dm_energy_time", cost_of);
starpu_perfmodel g_energy_energy = per_worker_model("dm_energy_energy", energy_of);

struct EnergyCase
{
	starpu_codelet cl = cpu_codelet(record, 0, "energy");
	EnergyCase()
	{
		cl.model = &g_energy_time;
		cl.energy_model = &g_energy_energy;
		set_costs({ 100.0, 200.0 });
		g_energy[0] = 1.0;
		g_energy[1] = 0.001;
	}
	// The worker one task goes to (the machine is idle).
	int place()
	{
		reset_records(1);
		EXPECT_EQ(submit(&cl, 0), 0);
		EXPECT_EQ(starpu_task_wait_for_all(), 0);
		return g_ran_on[0];
	}
};

int knob_id(const char *name)
{
	int scope = starpu_perf_knob_scope_name_to_id("per_scheduler");
	return starpu_perf_knob_name_to_id((starpu_perf_knob_scope)scope, name);
}

TEST_F(Dm, GammaWeighsEnergy)
{
	{
		START_OR_RETURN("dmda", 2);
		EnergyCase c;
		EXPECT_EQ(c.place(), 1) << "default gamma 1000 µs/J: 1000 against 100.001";
		starpu_shutdown();
	}
	{
		ScopedEnv gamma("STARPU_SCHED_GAMMA", "0");
		START_OR_RETURN("dmda", 2);
		EnergyCase c;
		EXPECT_EQ(c.place(), 0) << "gamma 0: time alone";
		starpu_shutdown();
	}
	{
		ScopedEnv alpha("STARPU_SCHED_ALPHA", "100");
		START_OR_RETURN("dmda", 2);
		EnergyCase c;
		EXPECT_EQ(c.place(), 0) << "alpha 100: 1000 against 10000.001";
		starpu_shutdown();
	}
	{
		// dm looks at time only.
		START_OR_RETURN("dm", 2);
		EnergyCase c;
		EXPECT_EQ(c.place(), 0);
	}
}

// A value that is not a number is reported once and the default used.
TEST_F(Dm, BadParameterIsReportedAndIgnored)
{
	ScopedEnv gamma("STARPU_SCHED_GAMMA", "lots");
	std::string err;
	START_OR_RETURN("dmda", 2, &err);
	EXPECT_TRUE(contains(err, "STARPU_SCHED_GAMMA")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	EnergyCase c;
	EXPECT_EQ(c.place(), 1) << "the default gamma (1000 µs/J) applies";
}

TEST_F(Dm, KnobsMultiplyTheirParameterPerPolicy)
{
	START_OR_RETURN("dmda", 2);
	int alpha = knob_id("starpu.dmda.s_alpha_knob");
	int gamma = knob_id("starpu.dmda.s_gamma_knob");
	ASSERT_GE(alpha, 0);
	ASSERT_GE(gamma, 0);
	ASSERT_GE(knob_id("starpu.dmda.s_beta_knob"), 0);
	ASSERT_GE(knob_id("starpu.dmda.s_idle_power_knob"), 0);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(alpha, "dmda"), 1.0);
	EnergyCase c;
	EXPECT_EQ(c.place(), 1);

	// Another policy's knob does not touch this instance.
	starpu_perf_knob_set_per_scheduler_double_value(gamma, "dmdas", 0.0);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(gamma, "dmdas"), 0.0);
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(gamma, "dmda"), 1.0);
	EXPECT_EQ(c.place(), 1);

	starpu_perf_knob_set_per_scheduler_double_value(gamma, "dmda", 0.0);
	EXPECT_EQ(c.place(), 0) << "gamma knob 0: time alone";
	starpu_perf_knob_set_per_scheduler_double_value(gamma, "dmda", 1.0);
	EXPECT_EQ(c.place(), 1);
	starpu_perf_knob_set_per_scheduler_double_value(alpha, "dmda", 100.0);
	EXPECT_EQ(c.place(), 0) << "alpha knob 100";
	// heft is dmda's other name: it shares dmda's knobs.
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(alpha, "heft"), 100.0);

	// Out of range: refused with a message, the value stays.
	std::string err = stderr_of([&] { starpu_perf_knob_set_per_scheduler_double_value(alpha, "dmda", -1.0); });
	EXPECT_TRUE(contains(err, "[astrolabe]")) << err;
	EXPECT_EQ(starpu_perf_knob_get_per_scheduler_double_value(alpha, "dmda"), 100.0);
}

// Idle power: the others burn it until the task ends, which favours the
// shorter end. w0: 100 µs, 0 J; w1: 50 µs, 0.1 J. Fitness w0 = 50 + 0.1·P,
// w1 = 100 + 0.05·P (gamma 1000): w1 wins beyond P = 1000 W.
TEST_F(Dm, IdlePowerFavoursTheEarlierEnd)
{
	static starpu_perfmodel time = per_worker_model("dm_idle_time", cost_of);
	static starpu_perfmodel energy = per_worker_model("dm_idle_energy", energy_of);
	starpu_codelet cl = cpu_codelet(record, 0, "idle");
	cl.model = &time;
	cl.energy_model = &energy;
	auto place = [&] {
		set_costs({ 100.0, 50.0 });
		g_energy[0] = 0.0;
		g_energy[1] = 0.1;
		reset_records(1);
		EXPECT_EQ(submit(&cl, 0), 0);
		EXPECT_EQ(starpu_task_wait_for_all(), 0);
		return g_ran_on[0];
	};
	{
		START_OR_RETURN("dmda", 2);
		EXPECT_EQ(place(), 0);
		starpu_shutdown();
	}
	ScopedEnv idle("STARPU_IDLE_POWER", "2000");
	START_OR_RETURN("dmda", 2);
	EXPECT_EQ(place(), 1);
	starpu_perf_knob_set_per_scheduler_double_value(knob_id("starpu.dmda.s_idle_power_knob"), "dmda", 0.1);
	EXPECT_EQ(place(), 0) << "idle power knob 0.1: 200 W";
}

// ----------------------------------------------------------- queue orders

TEST_F(Dm, PriorityOrderOnlyInTheSortedVariants)
{
	for (const char *policy : { "dmda", "dmdar", "dmdas", "dmdap" }) {
		starpu_conf conf = conf_with_ncpus(1);
		conf.sched_policy_name = policy;
		conf.global_sched_ctx_min_priority = 0;
		conf.global_sched_ctx_max_priority = 9;
		ASSERT_EQ(starpu_init(&conf), 0);
		if (!policy_registered(policy))
			GTEST_SKIP() << "the dm policies are not built here";
		static starpu_perfmodel model = per_worker_model("dm_prio", cost_of);
		starpu_codelet cl = cpu_codelet(record, 0, "prio");
		cl.model = &model;
		set_costs({ 10.0 });
		std::vector<int> prios = { 3, 7, 1, 9, 0, 5, 2, 8, 4, 6 };
		reset_records(10);
		{
			Gate gate(1);
			ASSERT_TRUE(gate.close());
			for (int i = 0; i < 10; i++)
				ASSERT_EQ(submit(&cl, i, prios[i]), 0);
		}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		std::vector<int> ran_prios;
		for (int i : g_order)
			ran_prios.push_back(prios[i]);
		bool sorted = std::string(policy) == "dmdas" || std::string(policy) == "dmdap";
		std::vector<int> expected = sorted ? std::vector<int>{ 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 } : prios;
		EXPECT_EQ(ran_prios, expected) << policy;
		starpu_shutdown();
	}
}

// Unless the application sets a priority range, dmdas and dmdap order every priority (StarPU sets INT_MIN..INT_MAX).
TEST_F(Dm, SortedVariantsTakeTheWholePriorityRange)
{
	for (const char *policy : { "dmdas", "dmdap", "dmda" }) {
		START_OR_RETURN(policy, 1);
		bool sorted = std::string(policy) != "dmda";
		if (sorted) {
			EXPECT_EQ(starpu_sched_get_min_priority(), INT_MIN) << policy;
			EXPECT_EQ(starpu_sched_get_max_priority(), INT_MAX) << policy;
		}
		static starpu_codelet cl = cpu_codelet(record, 0, "wide");
		std::vector<int> prios = { 100, -100, 7, 1000, INT_MIN, INT_MAX, 8 };
		reset_records(prios.size());
		{
			Gate gate(1);
			ASSERT_TRUE(gate.close());
			for (size_t i = 0; i < prios.size(); i++)
				ASSERT_EQ(submit(&cl, (int)i, prios[i]), 0);
		}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		std::vector<int> ran;
		for (int i : g_order)
			ran.push_back(prios[i]);
		std::vector<int> expected = sorted ? std::vector<int>{ INT_MAX, 1000, 100, 8, 7, -100, INT_MIN } : prios;
		EXPECT_EQ(ran, expected) << policy;
		starpu_shutdown();
	}
}

// dmdar and dmdas pop first, among the tasks of the head's priority, the one
// with the fewest input bytes missing on the worker's node.
TEST(DmReady, FewestMissingBytesFirstWithinTheHeadPriority)
{
	std::vector<int> order(4);
	{
		size_t missing[] = { 100, 0, 50, 0 };
		int prio[] = { 0, 0, 0, 0 };
		ASSERT_EQ(astro_test_dm_ready_order(missing, prio, 4, order.data()), 0);
		EXPECT_EQ(order, (std::vector<int>{ 1, 3, 2, 0 }));
	}
	{
		// A lower priority never overtakes, however ready.
		size_t missing[] = { 0, 100, 50, 0 };
		int prio[] = { 0, 5, 5, 0 };
		ASSERT_EQ(astro_test_dm_ready_order(missing, prio, 4, order.data()), 0);
		EXPECT_EQ(order, (std::vector<int>{ 2, 1, 0, 3 }));
	}
	{
		// All missing as much: first in, first out.
		size_t missing[] = { 8, 8, 8, 8 };
		int prio[] = { 1, 1, 1, 1 };
		ASSERT_EQ(astro_test_dm_ready_order(missing, prio, 4, order.data()), 0);
		EXPECT_EQ(order, (std::vector<int>{ 0, 1, 2, 3 }));
	}
}

// With one memory node every input is there: dmdar and dmdas keep the submission order.
TEST_F(Dm, ReadyPopKeepsOrderWhenAllDataIsThere)
{
	for (const char *policy : { "dmdar", "dmdas" }) {
		START_OR_RETURN(policy, 1);
		static float a[16], b[16];
		starpu_data_handle_t ha, hb;
		starpu_vector_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)a, 16, sizeof(float));
		starpu_vector_data_register(&hb, STARPU_MAIN_RAM, (uintptr_t)b, 16, sizeof(float));
		starpu_codelet cl = cpu_codelet(record, 1, "ready");
		cl.modes[0] = STARPU_R;
		reset_records(6);
		{
			Gate gate(1);
			ASSERT_TRUE(gate.close());
			for (int i = 0; i < 6; i++) {
				struct starpu_task *t = starpu_task_create();
				t->cl = &cl;
				t->handles[0] = i % 2 ? hb : ha;
				t->cl_arg = (void *)(uintptr_t)i;
				ASSERT_EQ(starpu_task_submit(t), 0);
			}
		}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		EXPECT_EQ(g_order, (std::vector<int>{ 0, 1, 2, 3, 4, 5 })) << policy;
		starpu_data_unregister(ha);
		starpu_data_unregister(hb);
		starpu_shutdown();
	}
}

// ------------------------------------------------ calibration and no model

// Without any model, the least loaded worker: held tasks alternate.
TEST_F(Dm, WithoutModelTheChoiceIsGreedy)
{
	START_OR_RETURN("dmda", 2);
	starpu_codelet cl = cpu_codelet(record, 0, "nomodel");
	std::vector<int> expected = { 0, 1, 0, 1, 0, 1 };
	EXPECT_EQ(place_held(&cl, 6), expected);
}

// On a tie, a task released by a worker stays on that worker (awake, with its data).
TEST_F(Dm, TiesGoToTheReleasingWorker)
{
	START_OR_RETURN("dmda", 2);
	static starpu_codelet cl = cpu_codelet(record, 0, "released");
	reset_records(20);
	for (int i = 0; i < 10; i++) {
		struct starpu_task *first = starpu_task_create();
		first->cl = &cl;
		first->cl_arg = (void *)(uintptr_t)(2 * i);
		first->execute_on_a_specific_worker = 1;
		first->workerid = 1;
		struct starpu_task *then = starpu_task_create();
		then->cl = &cl;
		then->cl_arg = (void *)(uintptr_t)(2 * i + 1);
		starpu_task_declare_deps_array(then, 1, &first);
		ASSERT_EQ(starpu_task_submit(then), 0);
		ASSERT_EQ(starpu_task_submit(first), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}
	EXPECT_EQ(count_on(g_ran_on, 1), 20);
}

// An uncalibrated (worker, implementation) is tried first, even when the
// calibrated one predicts a short time; uncalibrated ones share the work.
TEST_F(Dm, UncalibratedWorkersAreCalibratedFirst)
{
	START_OR_RETURN("dmda", 2);
	static starpu_perfmodel model = per_worker_model("dm_calibrating", cost_of);
	starpu_codelet cl = cpu_codelet(record, 0, "calibrating");
	cl.model = &model;
	set_costs({ 1.0, NAN });
	std::vector<int> ran = place_held(&cl, 4);
	EXPECT_EQ(count_on(ran, 1), 4) << "the uncalibrated worker gets them";

	// A worker without a value (0) is picked only when no worker is uncalibrated.
	set_costs({ 0.0, NAN });
	ran = place_held(&cl, 4);
	EXPECT_EQ(count_on(ran, 1), 4) << "the uncalibrated worker gets them";

	set_costs({ NAN, NAN });
	std::vector<int> expected = { 0, 1, 0, 1 };
	EXPECT_EQ(place_held(&cl, 4), expected) << "both uncalibrated: spread";
}

// A history model with no measurement yet: every worker gets tasks to calibrate on.
TEST_F(Dm, HistoryModelGetsCalibratedOnEveryWorker)
{
	TempDir home;
	ScopedEnv starpu_home("STARPU_HOME", home.path());
	ScopedEnv calibrate("STARPU_CALIBRATE", "1");
	START_OR_RETURN("dmda", 2);
	static starpu_perfmodel model;
	memset(&model, 0, sizeof(model));
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "dm_history_calibration";
	starpu_codelet cl = cpu_codelet(record, 0, "history");
	cl.model = &model;
	std::vector<int> ran;
	std::string err = stderr_of([&] { ran = place_held(&cl, 8); });
	EXPECT_EQ(count_on(ran, 0), 4) << err;
	EXPECT_EQ(count_on(ran, 1), 4) << err;
	starpu_shutdown(); // saves the model while its directory exists
}

// ------------------------------------------- bound tasks, disabled workers

std::atomic<bool> g_release{ false };
std::atomic<int> g_long_running{ 0 };
void long_task(void **, void *)
{
	g_long_running++;
	while (!g_release.load())
		std::this_thread::sleep_for(std::chrono::microseconds(100));
}

// A task bound to worker 0 counts in worker 0's expected end: the next task,
// equally fast everywhere, goes to worker 1.
TEST_F(Dm, BoundTasksCountInTheirWorkersQueue)
{
	START_OR_RETURN("dmda", 2);
	static starpu_perfmodel model = per_worker_model("dm_bound", cost_of);
	set_costs({ 1e9, 1e9 });
	static starpu_codelet long_cl = cpu_codelet(long_task, 0, "long");
	long_cl.model = &model;
	g_release = false;
	g_long_running = 0;
	// Released however the test ends: shutdown waits for it.
	struct Release { ~Release() { g_release = true; } } release;
	struct starpu_task *t = starpu_task_create();
	t->cl = &long_cl;
	t->execute_on_a_specific_worker = 1;
	t->workerid = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);

	static double equal_cost[STARPU_NMAXWORKERS];
	for (double &c : equal_cost)
		c = 100.0;
	static starpu_perfmodel equal = per_worker_model("dm_equal", [](struct starpu_task *, unsigned w, unsigned) { return equal_cost[w]; });
	static starpu_codelet cl = cpu_codelet(record, 0, "after_bound");
	cl.model = &equal;
	reset_records(4);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(submit(&cl, i), 0);
		ASSERT_TRUE(wait_until([&] { std::lock_guard<std::mutex> l(g_lock); return g_ran_on[(size_t)i] >= 0; }, 20000));
	}
	EXPECT_EQ(count_on(g_ran_on, 1), 4);
	g_release = true;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_long_running.load(), 1);
}

TEST_F(Dm, DisabledWorkerGetsNoNewTask)
{
	START_OR_RETURN("dmda", 2);
	static starpu_perfmodel model = per_worker_model("dm_disabled", cost_of);
	starpu_codelet cl = cpu_codelet(record, 0, "disabled");
	cl.model = &model;
	set_costs({ 1.0, 1000.0 });
	int scope = starpu_perf_knob_scope_name_to_id("per_worker");
	int enable = starpu_perf_knob_name_to_id((starpu_perf_knob_scope)scope, "starpu.worker.w_enable_worker_knob");
	ASSERT_GE(enable, 0);
	starpu_perf_knob_set_per_worker_int32_value(enable, 0, 0);
	std::vector<int> ran = place_held(&cl, 5);
	EXPECT_EQ(count_on(ran, 1), 5);
	starpu_perf_knob_set_per_worker_int32_value(enable, 0, 1);
	ran = place_held(&cl, 1);
	EXPECT_EQ(count_on(ran, 0), 1);
}

// ------------------------------------------------------------- counters

TEST_F(Dm, ExpectedQueueLengthCounter)
{
	START_OR_RETURN("dmda", 2);
	int scope = starpu_perf_counter_scope_name_to_id("per_worker");
	int id = starpu_perf_counter_name_to_id((starpu_perf_counter_scope)scope, "starpu.sched.dm.w_expected_queue_length");
	ASSERT_GE(id, 0);
	static starpu_perfmodel model = per_worker_model("dm_counter", cost_of);
	starpu_codelet cl = cpu_codelet(record, 0, "counted");
	cl.model = &model;
	set_costs({ 1e6, 1e9 });
	reset_records(3);
	{
		Gate gate(2);
		ASSERT_TRUE(gate.close());
		for (int i = 0; i < 3; i++)
			ASSERT_EQ(submit(&cl, i), 0);
		union astro_counter_value v;
		int w = 0;
		ASSERT_EQ(astro_counter_read(id, &w, &v), 0);
		// 3 s queued; the held gate task has no prediction.
		EXPECT_GE(v.double_val, 3e6 - 1.0);
		EXPECT_LE(v.double_val, 3e6 + 1.0);
		w = 1;
		ASSERT_EQ(astro_counter_read(id, &w, &v), 0);
		EXPECT_EQ(v.double_val, 0.0);
	}
	// Run (in far less than predicted), they no longer count.
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	union astro_counter_value v;
	int w = 0;
	ASSERT_EQ(astro_counter_read(id, &w, &v), 0);
	EXPECT_EQ(v.double_val, 0.0);
}

} // namespace

namespace {

void ignore_sample(struct starpu_perf_counter_listener *, struct starpu_perf_counter_sample *, void *) {}

// Tasks predicted at 1000 s that take far less: the mean gap is close to 1000 s.
TEST_F(Dm, MeanPredictionGapCounter)
{
	START_OR_RETURN("dmda", 2);
	starpu_perf_counter_collection_start();
	int scope = starpu_perf_counter_scope_name_to_id("per_codelet");
	int id = starpu_perf_counter_name_to_id((starpu_perf_counter_scope)scope, "starpu.sched.dm.c_mean_prediction_gap");
	ASSERT_GE(id, 0);
	static starpu_perfmodel model = per_worker_model("dm_gap", cost_of);
	starpu_codelet cl = cpu_codelet(record, 0, "gap");
	cl.model = &model;
	struct starpu_perf_counter_set *set = starpu_perf_counter_set_alloc((starpu_perf_counter_scope)scope);
	starpu_perf_counter_set_enable_id(set, id);
	struct starpu_perf_counter_listener *listener = starpu_perf_counter_listener_init(set, ignore_sample, nullptr);
	starpu_perf_counter_set_per_codelet_listener(&cl, listener);

	union astro_counter_value v;
	ASSERT_EQ(astro_counter_read(id, &cl, &v), 0);
	EXPECT_EQ(v.double_val, 0.0) << "nothing measured yet";
	set_costs({ 1e9, 1e9 });
	reset_records(20);
	for (int i = 0; i < 20; i++)
		ASSERT_EQ(submit(&cl, i), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(astro_counter_read(id, &cl, &v), 0);
	// Unless a task took more than a second.
	EXPECT_GT(v.double_val, 1e9 - 1e6);
	EXPECT_LE(v.double_val, 1e9);

	starpu_perf_counter_unset_per_codelet_listener(&cl);
	starpu_perf_counter_listener_exit(listener);
	starpu_perf_counter_set_free(set);
}

} // namespace
