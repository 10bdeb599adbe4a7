// SPDX-License-Identifier: LGPL-2.1-or-later
// The theoretical lower bound (starpu_bound.h): small task sets whose optimum
// is known by hand, with per-worker models whose predictions the test sets;
// the LP and MPS files read by glpsol; starpu_lp2paje's trace read by pj_dump;
// the bound against a real run; and the bad inputs.
#include <gtest/gtest.h>
#include <starpu.h>

#include <cmath>
#include <cstdio>
#include <dlfcn.h>
#include <regex>

#include "helpers.h"

using namespace astro_test;

namespace {

// Each task's cl_arg: its length (µs) on worker 0 and worker 1.
struct lengths
{
	double us[2];
};

double per_task_cost(struct starpu_task *task, unsigned workerid, unsigned)
{
	return static_cast<const lengths *>(task->cl_arg)->us[workerid < 2 ? workerid : 1];
}

// Runs as long as predicted, so that a real run can never beat the bound.
void sleep_predicted(void **, void *arg)
{
	int w = starpu_worker_get_id();
	auto us = static_cast<const lengths *>(arg)->us[w >= 0 && w < 2 ? w : 1];
	std::this_thread::sleep_for(std::chrono::microseconds((long)us));
}

struct Fixture : testing::Test
{
	starpu_perfmodel model;
	starpu_codelet cl;
	void SetUp() override
	{
		memset(&model, 0, sizeof(model));
		model.type = STARPU_PER_WORKER;
		model.worker_cost_function = per_task_cost;
		model.symbol = "bound_test";
		cl = cpu_codelet(sleep_predicted, 0, "work");
		cl.model = &model;
	}
	starpu_task *task(const lengths *l, int prio = 0)
	{
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = const_cast<lengths *>(l);
		t->priority = prio;
		return t;
	}
	void submit(starpu_task *t) { ASSERT_EQ(starpu_task_submit(t), 0); }
	// What starpu_bound_compute() (integer too) printed, checking that it gave no number.
	std::string compute_refused()
	{
		double res = -1, ires = -1;
		std::string err = stderr_of([&] { starpu_bound_compute(&res, &ires, 1); });
		EXPECT_EQ(res, 0.0);
		EXPECT_EQ(ires, 0.0);
		return err;
	}
};

bool have_glpk()
{
#ifdef ASTRO_HAVE_GLPK
	return true;
#else
	return false;
#endif
}

#define NEED_GLPK() \
	do { \
		if (!have_glpk()) \
			GTEST_SKIP() << "built without GLPK (libglpk-dev): starpu_bound_compute cannot solve"; \
	} while (0)

// glpsol's objective value in its report file ("Objective:  obj = 12 (MINimum)").
double glpsol_objective(const std::string &report)
{
	std::smatch m;
	std::regex re("Objective:\\s+obj = ([-0-9.eE+]+)");
	return std::regex_search(report, m, re) ? std::stod(m[1]) : NAN;
}

const lengths fast_slow = { { 4000, 8000 } };	// 4 ms on worker 0, 8 ms on worker 1

// Independent tasks on unequal workers: 4 tasks of 4 ms on worker 0 and 8 ms on worker 1.
// Relaxed: x0 + x1 = 4 tasks, 4 x0 = 8 x1 = T -> T = 4 / (1/4 + 1/8) = 32/3 ms.
// Integer: 3 on worker 0 (12 ms) and 1 on worker 1 (8 ms) -> 12 ms.
TEST_F(Fixture, IndependentTasksOnUnequalWorkers)
{
	NEED_GLPK();
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	starpu_bound_start(0, 0);
	for (int i = 0; i < 4; i++)
		submit(task(&fast_slow));
	starpu_bound_stop();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	double res = -1, ires = -1;
	starpu_bound_compute(&res, &ires, 1);
	EXPECT_NEAR(res, 32.0 / 3, 1e-6);
	EXPECT_NEAR(ires, 12.0, 1e-6);
	res = -1;
	starpu_bound_compute(&res, nullptr, 0);	// relaxed only: integer_res is not needed
	EXPECT_NEAR(res, 32.0 / 3, 1e-6);
}

// Issue 38: the core library linked GLPK, so its package pulled GLPK in for the bound alone. The
// library names no GLPK among what it needs; the first solve loads it, and the solve above works.
TEST_F(Fixture, GlpkIsLoadedAtTheFirstSolveNotLinked)
{
	NEED_GLPK();
	std::string library, needed = needed_libraries_of(reinterpret_cast<void *>(&starpu_bound_compute), &library);
	EXPECT_TRUE(contains(needed, "libglib")) << "the NEEDED entries of " << library << " were read: " << needed;
	EXPECT_FALSE(contains(needed, "glpk")) << library << " links GLPK: " << needed;

	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	starpu_bound_start(0, 0);
	submit(task(&fast_slow));
	starpu_bound_stop();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	double res = -1;
	starpu_bound_compute(&res, nullptr, 0);
	EXPECT_NEAR(res, 4.0, 1e-6); // one task: no shorter than on the faster worker
	EXPECT_TRUE(contains(read_file("/proc/self/maps"), "libglpk")) << "the solve loaded GLPK";
}

// 64 tasks recorded with dependencies: the integer program (a start, an end, a worker and an order
// for every pair) takes GLPK far longer than 1 s; its time limit (ASTROLABE_BOUND_TIME_LIMIT, 1 s
// here) ends the search with the best integer schedule found, or the relaxed bound, and says which.
TEST_F(Fixture, IntegerSearchStopsAtItsTimeLimit)
{
	NEED_GLPK();
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	const int n = 64;
	std::vector<lengths> l(n);
	starpu_bound_start(1, 0);
	for (int i = 0; i < n; i++) {
		l[i] = { { 100.0 + 37 * (i % 7) + 11 * (i % 5), 160.0 + 23 * (i % 3) + 13 * (i % 11) } };
		submit(task(&l[i]));
	}
	starpu_bound_stop();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	setenv("ASTROLABE_BOUND_TIME_LIMIT", "1", 1);
	double res = -1, ires = -1;
	auto start = std::chrono::steady_clock::now();
	std::string err = stderr_of([&] { starpu_bound_compute(&res, &ires, 1); });
	double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	std::string report = printed([](FILE *f) { starpu_bound_print(f, 1); });
	unsetenv("ASTROLABE_BOUND_TIME_LIMIT");
	EXPECT_LT(took, 60.0) << "the search ran past its limit of 1 s";
	EXPECT_TRUE(contains(err, "stopped at its time limit (1 s, ASTROLABE_BOUND_TIME_LIMIT)")) << err;
	EXPECT_GT(res, 0.0);
	EXPECT_GE(ires, res - 1e-6) << "an integer result below the relaxed bound";
	EXPECT_TRUE(contains(report, "the integer search stopped at its time limit (ASTROLABE_BOUND_TIME_LIMIT)")) << report;
}

const lengths two_four = { { 2000, 4000 } };

// A chain through one handle (implicit data dependencies): 3 tasks of 2 ms on worker 0, 4 ms on worker 1.
// With dependencies they run one after the other on worker 0: 6 ms. Without: 3 / (1/2 + 1/4) = 4 ms.
TEST_F(Fixture, ChainThroughData)
{
	NEED_GLPK();
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_RW;
	for (int deps = 1; deps >= 0; deps--) {
		starpu_bound_start(deps, 0);
		for (int i = 0; i < 3; i++) {
			starpu_task *t = task(&two_four);
			t->handles[0] = h;
			submit(t);
		}
		starpu_bound_stop();
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		double res = -1, ires = -1;
		starpu_bound_compute(&res, &ires, 1);
		EXPECT_NEAR(res, deps ? 6.0 : 4.0, 1e-6) << "deps " << deps;
		EXPECT_NEAR(ires, deps ? 6.0 : 4.0, 1e-6) << "deps " << deps;
	}
	starpu_data_unregister(h);
}

const lengths one_ms = { { 1000, 1000 } };
const lengths four_twelve = { { 4000, 12000 } };

// Fork-join through tags: A (1 ms) -> B1, B2 (4 ms on worker 0, 12 ms on worker 1) -> C (1 ms).
// Integer: both B on worker 0, one after the other: 1 + 4 + 4 + 1 = 10 ms (B2 on worker 1 would give 14).
// Relaxed: a fraction a of each B on worker 0 loads it 8a and makes the path 2 + 4a + 12(1 - a):
// balanced at a = 7/8, 7 ms.
TEST_F(Fixture, ForkJoinThroughTags)
{
	NEED_GLPK();
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	starpu_bound_start(1, 0);
	starpu_tag_declare_deps(2, 1, (starpu_tag_t)1);
	starpu_tag_declare_deps(3, 1, (starpu_tag_t)1);
	starpu_tag_declare_deps(4, 2, (starpu_tag_t)2, (starpu_tag_t)3);
	const lengths *len[] = { &one_ms, &four_twelve, &four_twelve, &one_ms };
	for (int i = 0; i < 4; i++) {
		starpu_task *t = task(len[i]);
		t->use_tag = 1;
		t->tag_id = (starpu_tag_t)(i + 1);
		submit(t);
	}
	starpu_bound_stop();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	double res = -1, ires = -1;
	starpu_bound_compute(&res, &ires, 1);
	EXPECT_NEAR(res, 7.0, 1e-6);
	EXPECT_NEAR(ires, 10.0, 1e-6);
	std::string report = printed([](FILE *f) { starpu_bound_print(f, 0); });
	EXPECT_TRUE(contains(report, "Theoretical lower bound (relaxed, with dependencies): 7.000 ms")) << report;
	EXPECT_TRUE(contains(report, "Actual execution: 4 of 4 tasks ran")) << report;
	std::string dot = printed(starpu_bound_print_dot);
	EXPECT_EQ(std::count(dot.begin(), dot.end(), '>'), 4) << dot;	// A->B1, A->B2, B1->C, B2->C
	EXPECT_TRUE(contains(dot, "digraph")) << dot;
	EXPECT_TRUE(contains(dot, "[label=\"work\"]")) << dot;
}

// Fork-join through starpu_task_declare_deps, equal workers: A (1) -> B1, B2 (4) -> C (1): 6 ms.
TEST_F(Fixture, ForkJoinThroughTaskDeps)
{
	NEED_GLPK();
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	const lengths four = { { 4000, 4000 } };
	starpu_bound_start(1, 0);
	starpu_task *a = task(&one_ms), *b1 = task(&four), *b2 = task(&four), *c = task(&one_ms);
	for (starpu_task *t : { a, b1, b2, c })
		t->detach = 0;
	starpu_task_declare_deps(b1, 1, a);
	starpu_task_declare_deps(b2, 1, a);
	starpu_task_declare_deps(c, 2, b1, b2);
	for (starpu_task *t : { a, b1, b2, c })
		submit(t);
	starpu_bound_stop();
	for (starpu_task *t : { a, b1, b2, c })
		ASSERT_EQ(starpu_task_wait(t), 0);
	double res = -1, ires = -1;
	starpu_bound_compute(&res, &ires, 1);
	EXPECT_NEAR(res, 6.0, 1e-6);
	EXPECT_NEAR(ires, 6.0, 1e-6);
}

// The files glpsol reads give the same optimum; starpu_lp2paje turns glpsol's solution into a Paje trace pj_dump reads.
TEST_F(Fixture, FilesForGlpsolAndLp2paje)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	starpu_bound_start(1, 1);
	starpu_tag_declare_deps(12, 1, (starpu_tag_t)11);
	starpu_tag_declare_deps(13, 1, (starpu_tag_t)11);
	const lengths *len[] = { &one_ms, &four_twelve, &four_twelve };
	for (int i = 0; i < 3; i++) {
		starpu_task *t = task(len[i], i);
		t->use_tag = 1;
		t->tag_id = (starpu_tag_t)(11 + i);
		submit(t);
	}
	starpu_bound_stop();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::string lp = printed(starpu_bound_print_lp), mps = printed(starpu_bound_print_mps);
	EXPECT_TRUE(contains(lp, "Minimize")) << lp;
	EXPECT_TRUE(contains(lp, "General")) << lp;
	EXPECT_TRUE(std::regex_search(lp, std::regex(" p[0-9]+_[0-9]+:"))) << "priority rows\n" << lp;	// B2 (prio 2) before B1 (prio 1)
	EXPECT_TRUE(contains(mps, "'INTORG'")) << mps;
	if (!have_program("glpsol"))
		GTEST_SKIP() << "glpsol (glpk-utils) is not installed: the files are not checked with it";
	TempDir dir;
	ASSERT_TRUE(dir.write("bound.lp", lp));
	ASSERT_TRUE(dir.write("bound.mps", mps));
	std::string out;
	ASSERT_EQ(run_command("glpsol --lp " + dir.file("bound.lp") + " -o " + dir.file("lp.sol") + " 2>&1", &out), 0) << out;
	ASSERT_EQ(run_command("glpsol --freemps " + dir.file("bound.mps") + " -o " + dir.file("mps.sol") + " 2>&1", &out), 0) << out;
	double lp_obj = glpsol_objective(read_file(dir.file("lp.sol"))), mps_obj = glpsol_objective(read_file(dir.file("mps.sol")));
	// B1 and B2 both on worker 0 after A: 1 + 4 + 4 = 9 ms.
	EXPECT_NEAR(lp_obj, 9.0, 1e-6) << read_file(dir.file("lp.sol"));
	EXPECT_NEAR(mps_obj, 9.0, 1e-6) << read_file(dir.file("mps.sol"));
	if (have_glpk()) {
		double res, ires;
		starpu_bound_compute(&res, &ires, 1);
		EXPECT_NEAR(ires, lp_obj, 1e-6);
	}

	std::string tool = env_or("ASTRO_TEST_TOOLS_DIR", ".") + "/starpu_lp2paje";
	out.clear();
	ASSERT_EQ(run_command(tool + " " + dir.file("lp.sol") + " > " + dir.file("paje.trace") + " 2>&1", &out), 0)
		<< read_file(dir.file("paje.trace"));
	if (!have_program("pj_dump"))
		GTEST_SKIP() << "pj_dump (pajeng) is not installed: the trace is not checked with it";
	std::string dump;
	ASSERT_EQ(run_command("pj_dump " + dir.file("paje.trace") + " 2>&1", &dump), 0) << dump << read_file(dir.file("paje.trace"));
	// Three tasks, each a Running state; B1 and B2 on worker 0 one after the other, ending at 9 ms.
	std::regex running("State, Worker ([01]), Worker State, ([0-9.]+), ([0-9.]+), [0-9.]+, [0-9.]+, Running_t[0-9]+");
	auto begin = std::sregex_iterator(dump.begin(), dump.end(), running);
	double last_end = 0;
	int n = 0, on_worker0 = 0;
	for (auto it = begin; it != std::sregex_iterator(); ++it, n++) {
		last_end = std::max(last_end, std::stod((*it)[3]));
		on_worker0 += (*it)[1] == "0";
	}
	EXPECT_EQ(n, 3) << dump;
	EXPECT_GE(on_worker0, 2) << dump;
	EXPECT_NEAR(last_end, 9.0, 1e-6) << dump;

	// lp_solve's report (name, value): a task on worker 1 from 2 to 5 ms.
	TempDir dir3;
	ASSERT_TRUE(dir3.write("lp_solve.out", "\nValue of objective function: 5.00000000\n\nActual values of the variables:\n"
					       "tmax                            5\nt7s                             2\nt7e                             5\n"
					       "t7w0                            0\nt7w1                            1\n"));
	out.clear();
	ASSERT_EQ(run_command(tool + " < " + dir3.file("lp_solve.out") + " > " + dir3.file("paje.trace") + " 2>&1", &out), 0) << out;
	dump.clear();
	ASSERT_EQ(run_command("pj_dump " + dir3.file("paje.trace") + " 2>&1", &dump), 0) << dump;
	EXPECT_TRUE(contains(dump, "State, Worker 1, Worker State, 2.000000, 5.000000, 3.000000, 0.000000, Running_t7")) << dump;

	// Without dependencies the solution has no times: a clear error, no trace.
	TempDir dir2;
	ASSERT_TRUE(dir2.write("empty.sol", "tmax 3\nn0w0 2\n"));
	out.clear();
	EXPECT_EQ(run_command(tool + " " + dir2.file("empty.sol") + " 2>&1", &out), 1);
	EXPECT_TRUE(contains(out, "starpu_bound_start(1, prio)")) << out;
	out.clear();
	EXPECT_EQ(run_command(tool + " " + dir2.file("missing.sol") + " 2>&1", &out), 1);
	EXPECT_TRUE(contains(out, "cannot open")) << out;
}

// The bound of a real run (tasks last at least their prediction, scheduled by dmda) is never above its makespan.
TEST_F(Fixture, NeverAboveTheMakespanOfARealRun)
{
	NEED_GLPK();
	starpu_conf conf = conf_with_ncpus(2);
	conf.sched_policy_name = "dmda";
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	const lengths mixed[] = { { { 3000, 5000 } }, { { 1000, 1500 } }, { { 6000, 2000 } } };
	starpu_bound_start(0, 0);
	double begin = starpu_timing_now();
	for (int i = 0; i < 9; i++)
		submit(task(&mixed[i % 3]));
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	double makespan_ms = (starpu_timing_now() - begin) / 1000.0;
	starpu_bound_stop();
	double res = -1, ires = -1;
	starpu_bound_compute(&res, &ires, 1);
	EXPECT_GT(res, 0);
	EXPECT_LE(res, ires + 1e-9);
	EXPECT_LE(ires, makespan_ms);
	std::string report = printed([](FILE *f) { starpu_bound_print(f, 1); });
	EXPECT_TRUE(contains(report, "Theoretical lower bound (integer, without dependencies)")) << report;
	EXPECT_TRUE(contains(report, "Actual execution: 9 of 9 tasks ran")) << report;
	EXPECT_TRUE(contains(report, "work")) << report;	// the kinds' table names the codelet
}

#ifndef ASTRO_HAVE_GLPK
// Built without GLPK: the bound is 0 and the message says why and what to do; the files are still written.
TEST_F(Fixture, WithoutGlpkComputeSaysSo)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	starpu_bound_start(0, 0);
	submit(task(&one_ms));
	starpu_bound_stop();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::string err = compute_refused();
	EXPECT_TRUE(contains(err, "-ENOSYS")) << err;
	EXPECT_TRUE(contains(err, "libglpk-dev")) << err;
	EXPECT_TRUE(contains(printed(starpu_bound_print_lp), "Minimize"));
}
#endif

// A history model never calibrated: the codelet is named, no bound, and the program is not written.
TEST_F(Fixture, UncalibratedModelIsNamed)
{
	TempDir home;
	ScopedEnv env_home("STARPU_HOME", home.path());
	ScopedEnv env_calibrate("STARPU_CALIBRATE", nullptr);
	starpu_perfmodel history;
	memset(&history, 0, sizeof(history));
	history.type = STARPU_HISTORY_BASED;
	history.symbol = "bound_never_calibrated";
	starpu_codelet raw = cpu_codelet(sleep_predicted, 0, "uncalibrated_kernel");
	raw.model = &history;
	starpu_codelet none = cpu_codelet(sleep_predicted, 0, "modelless_kernel");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	starpu_bound_start(0, 0);
	for (starpu_codelet *c : { &raw, &none, &cl }) {
		starpu_task *t = task(&one_ms);
		t->cl = c;
		submit(t);
	}
	starpu_bound_stop();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::string err = compute_refused();
	EXPECT_TRUE(contains(err, "uncalibrated_kernel")) << err;
	EXPECT_TRUE(contains(err, "modelless_kernel")) << err;
	EXPECT_FALSE(contains(err, " work")) << err;
	EXPECT_TRUE(contains(err, "STARPU_CALIBRATE=1")) << err;
	std::string lp;
	err = stderr_of([&] { lp = printed(starpu_bound_print_lp); });
	EXPECT_EQ(lp, "");
	EXPECT_TRUE(contains(err, "uncalibrated_kernel")) << err;
	err = stderr_of([&] { lp = printed([](FILE *f) { starpu_bound_print(f, 0); }); });
	EXPECT_EQ(lp, "");
	EXPECT_TRUE(contains(err, "uncalibrated_kernel")) << err;
}

TEST_F(Fixture, BadCallsAreReported)
{
	std::string err = stderr_of([] { starpu_bound_start(0, 0); });
	EXPECT_TRUE(contains(err, "starpu_init")) << err;
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	double res = -1, ires = -1;
	err = stderr_of([] { starpu_bound_stop(); });
	EXPECT_TRUE(contains(err, "starpu_bound_stop: no recording")) << err;
	err = stderr_of([&] { starpu_bound_compute(&res, &ires, 1); });
	EXPECT_TRUE(contains(err, "starpu_bound_start()")) << err;
	EXPECT_EQ(res, 0.0);
	EXPECT_EQ(ires, 0.0);

	starpu_bound_start(0, 0);
	submit(task(&one_ms));
	res = ires = -1;
	err = stderr_of([&] { starpu_bound_compute(&res, &ires, 1); });
	EXPECT_TRUE(contains(err, "call starpu_bound_stop() first")) << err;
	EXPECT_EQ(res, 0.0);
	err = stderr_of([] { EXPECT_EQ(printed(starpu_bound_print_mps), ""); });
	EXPECT_TRUE(contains(err, "call starpu_bound_stop() first")) << err;
	err = stderr_of([] { starpu_bound_print_lp(nullptr); });
	EXPECT_TRUE(contains(err, "NULL output")) << err;
	err = stderr_of([] { starpu_bound_compute(nullptr, nullptr, 0); });
	EXPECT_TRUE(contains(err, "NULL result")) << err;
	starpu_bound_stop();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);

	// Nothing submitted in between: said so, no number.
	starpu_bound_start(1, 0);
	starpu_bound_stop();
	res = -1;
	err = stderr_of([&] { starpu_bound_compute(&res, nullptr, 0); });
	EXPECT_TRUE(contains(err, "no task was submitted")) << err;
	EXPECT_EQ(res, 0.0);
}

// A recording survives a restart of the runtime as nothing: starpu_shutdown() forgets it.
TEST_F(Fixture, ShutdownForgetsTheRecording)
{
	{
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		starpu_bound_start(0, 0);
		submit(task(&one_ms));
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	std::string err = stderr_of([] { starpu_bound_stop(); });
	EXPECT_TRUE(contains(err, "no recording")) << err;
}

} // namespace
