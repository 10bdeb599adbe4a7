// SPDX-License-Identifier: LGPL-2.1-or-later
// The real workloads of examples/: the tiled linear-algebra programs (GEMM,
// Cholesky with data and tag dependencies, LU, in both precisions) checked
// against LAPACK, their options, tasks_size_overhead and its plot, and the
// demo with its trace outputs. Each program runs at a small size, as a user
// runs it, from the build tree.
#include "helpers.h"

#include <sstream>

using namespace astro_test;

namespace {

std::string examples_dir()
{
	return env_or("ASTRO_TEST_EXAMPLES_DIR", "");
}

// Model files and anything else the programs write under $STARPU_HOME stay in this run's folder.
std::string scratch;

// Runs an example with args (stderr with stdout): its exit status, its output in *out.
int run_example(const std::string &program, const std::string &args, std::string *out, const std::string &env = "")
{
	std::string cmd = "STARPU_HOME=" + quote(scratch) + " STARPU_PERF_MODEL_DIR=" + quote(scratch + "/sampling") + " " + env +
			  " " + quote(examples_dir() + "/" + program) + " " + args + " 2>&1";
	return run_command(cmd, out);
}

// The line after `header` in out, split at tabs ({} when there is none).
std::vector<std::string> figures_after(const std::string &out, const std::string &header)
{
	std::vector<std::string> lines = lines_of(out), fields;
	for (size_t i = 0; i + 1 < lines.size(); i++)
		if (lines[i] == header) {
			std::istringstream row(lines[i + 1]);
			for (std::string f; std::getline(row, f, '\t');)
				fields.push_back(f);
			break;
		}
	return fields;
}

// How many times needle occurs in text.
int count_of(const std::string &text, const std::string &needle)
{
	int n = 0;
	for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size()))
		n++;
	return n;
}

#ifdef ASTRO_HAVE_LINALG
#define SKIP_WITHOUT_LINALG()
#else
#define SKIP_WITHOUT_LINALG() GTEST_SKIP() << "the linear-algebra examples are not built (install libopenblas-dev and liblapacke-dev, then configure again)"
#endif

#define SKIP_WITHOUT_EXAMPLES_DIR()                                                                        \
	do {                                                                                               \
		if (examples_dir().empty())                                                                \
			GTEST_SKIP() << "ASTRO_TEST_EXAMPLES_DIR is not set: run through make check";      \
	} while (0)

#define SKIP_WITHOUT_EXAMPLES()                                                                            \
	do {                                                                                               \
		SKIP_WITHOUT_LINALG();                                                                     \
		SKIP_WITHOUT_EXAMPLES_DIR();                                                               \
	} while (0)

struct Example
{
	const char *program;
	const char *header;	// the report's header line
};

class LinalgExample : public testing::TestWithParam<Example>
{
};

// Each program factorizes (multiplies) a 192 x 192 matrix in 4 x 4 tiles and agrees with LAPACK (BLAS).
TEST_P(LinalgExample, AgreesWithLapack)
{
	SKIP_WITHOUT_EXAMPLES();
	const Example &ex = GetParam();
	std::string out;
	int status = run_example(std::string("linalg/") + ex.program, "-size 192 -nblocks 4 -check", &out);
	if (status == 77)
		GTEST_SKIP() << "no worker: " << out;
	EXPECT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "result correct (relative error")) << out;
	EXPECT_FALSE(contains(out, "WRONG")) << out;
	std::vector<std::string> figures = figures_after(out, ex.header);
	ASSERT_GE(figures.size(), 3u) << "no line after '" << ex.header << "' in:\n" << out;
	EXPECT_EQ(figures[0], "192") << out;
	// ms and GFlop/s are numbers (a loaded machine may print 0.0 GFlop/s: no bound on speed here).
	for (size_t f = 1; f < figures.size(); f++) {
		char *end = nullptr;
		double v = strtod(figures[f].c_str(), &end);
		EXPECT_TRUE(end && *end == '\0' && !figures[f].empty() && v >= 0.0) << "figure " << f << " in:\n" << out;
	}
}

const Example examples[] = {
	{ "dgemm", "# x\ty\tz\tms\tGFlop/s" },
	{ "sgemm", "# x\ty\tz\tms\tGFlop/s" },
	{ "dcholesky_implicit", "# size\tms\tGFlop/s" },
	{ "scholesky_implicit", "# size\tms\tGFlop/s" },
	{ "dcholesky_tag", "# size\tms\tGFlop/s" },
	{ "scholesky_tag", "# size\tms\tGFlop/s" },
	{ "dlu_implicit", "# size\tms\tGFlop/s" },
	{ "slu_implicit", "# size\tms\tGFlop/s" },
	{ "dlu_tag", "# size\tms\tGFlop/s" },
	{ "slu_tag", "# size\tms\tGFlop/s" },
};
INSTANTIATE_TEST_SUITE_P(Programs, LinalgExample, testing::ValuesIn(examples),
			 [](const testing::TestParamInfo<Example> &info) { return std::string(info.param.program); });

// Under dmda (models calibrating), without priorities, with uneven work: still LAPACK's result.
TEST(LinalgExamples, CholeskyUnderDmdaWithoutPriorities)
{
	SKIP_WITHOUT_EXAMPLES();
	for (const char *program : { "linalg/dcholesky_implicit", "linalg/dcholesky_tag", "linalg/dlu_implicit" }) {
		std::string out;
		int status = run_example(program, "-size 210 -nblocks 7 -check -no-prio", &out, "STARPU_SCHED=dmda");
		if (status == 77)
			GTEST_SKIP() << "no worker: " << out;
		EXPECT_EQ(status, 0) << program << ":\n" << out;
		EXPECT_TRUE(contains(out, "result correct")) << program << ":\n" << out;
	}
}

// Seed 004 section 4.7: the LU example records its tasks between starpu_bound_start() and
// starpu_bound_stop(); -bound prints the bound starpu_bound_compute() solves (models calibrated
// first), -bounddeps writes the problem with its dependencies (lu.pl, lu.mps) and its graph (lu.dot),
// which glpsol and dot read. Still LAPACK's result.
TEST(LinalgExamples, LuBoundAsTheSeedCallsIt)
{
	SKIP_WITHOUT_EXAMPLES();
	std::string out;
	// One sample per size trusted, none thrown away on a loaded machine; the bound's runs use the models as they are.
	const std::string models = "STARPU_SCHED=dmda STARPU_CALIBRATE_MINIMUM=1 STARPU_HISTORY_MAX_ERROR=1000000";
	const std::string calibrate = models + " STARPU_CALIBRATE=0";
	int status = run_example("linalg/dlu_tag", "-size 128 -nblocks 4", &out, models + " STARPU_CALIBRATE=1");
	if (status == 77)
		GTEST_SKIP() << "no worker: " << out;
	ASSERT_EQ(status, 0) << out;
	ASSERT_EQ(run_example("linalg/dlu_tag", "-size 128 -nblocks 4 -bound -check", &out, calibrate), 0) << out;
	EXPECT_TRUE(contains(out, "result correct")) << out;
#ifdef ASTRO_HAVE_GLPK
	size_t at = out.find("theoretical min: ");
	ASSERT_NE(at, std::string::npos) << out;
	double min = strtod(out.c_str() + at + strlen("theoretical min: "), nullptr);
	EXPECT_GT(min, 0.0) << out;
#else
	EXPECT_TRUE(contains(out, "theoretical min: not solved")) << out;
#endif
	TempDir dir;
	ASSERT_EQ(run_example("linalg/dlu_tag", "-size 128 -nblocks 4 -bounddepsprio -directory " + quote(dir.path()), &out, calibrate), 0)
		<< out;
	for (const char *f : { "lu.pl", "lu.mps", "lu.dot" }) {
		EXPECT_TRUE(contains(out, "system printed to " + dir.file(f))) << out;
		EXPECT_FALSE(read_file(dir.file(f)).empty()) << f;
	}
	// 4 getrf, 6 + 6 trsm, 14 gemm: 30 tasks in the graph.
	EXPECT_EQ(count_of(read_file(dir.file("lu.dot")), "label="), 30) << read_file(dir.file("lu.dot"));
	if (have_program("glpsol")) {
		// The relaxed program (--nomip: the integer one takes long), as starpu_bound_compute solves it.
		EXPECT_EQ(run_command("glpsol --nomip --lp " + quote(dir.file("lu.pl")) + " -o " + quote(dir.file("lu.sol")) + " 2>&1", &out), 0)
			<< out;
		EXPECT_TRUE(contains(read_file(dir.file("lu.sol")), "Status:     OPTIMAL")) << read_file(dir.file("lu.sol"));
		EXPECT_EQ(run_command("glpsol --nomip --freemps " + quote(dir.file("lu.mps")) + " 2>&1", &out), 0) << out;
		EXPECT_TRUE(contains(out, "OPTIMAL")) << out;
	}
	if (have_program("dot")) {
		EXPECT_EQ(run_command("dot -Tsvg " + quote(dir.file("lu.dot")) + " -o /dev/null 2>&1", &out), 0) << out;
	}
	// The implicit variant records the same way.
	ASSERT_EQ(run_example("linalg/slu_implicit", "-size 128 -nblocks 4 -bounddeps -directory " + quote(dir.path()), &out, calibrate), 0)
		<< out;
	EXPECT_TRUE(contains(out, "system printed to " + dir.file("lu.dot"))) << out;
	// Where the files cannot go: said, exit status 1.
	EXPECT_EQ(run_example("linalg/dlu_tag", "-size 128 -nblocks 4 -bounddeps -directory /nonexistent/dir", &out, calibrate), 1) << out;
	EXPECT_TRUE(contains(out, "cannot write /nonexistent/dir/lu.pl")) << out;
	EXPECT_EQ(run_example("linalg/dlu_tag", "-directory", &out), 2) << out;
	EXPECT_TRUE(contains(out, "-directory needs a value")) << out;
}

// A product repeated with -iter accumulates, and the check knows it.
TEST(LinalgExamples, GemmIterations)
{
	SKIP_WITHOUT_EXAMPLES();
	std::string out;
	int status = run_example("linalg/sgemm", "-size 96 -nblocks 3 -iter 3 -check", &out);
	if (status == 77)
		GTEST_SKIP() << "no worker: " << out;
	EXPECT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "result correct")) << out;
}

// Every bad option: exit status 2, one line naming it, the usage; nothing is computed.
TEST(LinalgExamples, BadOptionsAreExplained)
{
	SKIP_WITHOUT_EXAMPLES();
	struct
	{
		const char *program, *args, *message;
	} cases[] = {
		{ "linalg/dcholesky_implicit", "-size 100 -nblocks 3", "-size 100 is not a multiple of -nblocks 3: tiles are equal squares (try -size 99)" },
		{ "linalg/dgemm", "-size x", "-size takes a positive integer up to 1048576, not 'x'" },
		{ "linalg/slu_implicit", "-nblocks 0", "-nblocks takes a positive integer up to 1048576, not '0'" },
		{ "linalg/scholesky_tag", "-nblocks", "-nblocks needs a value (a positive integer)" },
		{ "linalg/dlu_implicit", "-bogus", "unknown option '-bogus'" },
		{ "linalg/sgemm", "-no-prio", "unknown option '-no-prio'" },	// gemm has no priorities
		{ "linalg/dcholesky_implicit", "-iter 2", "unknown option '-iter'" },
	};
	for (const auto &c : cases) {
		std::string out;
		EXPECT_EQ(run_example(c.program, c.args, &out), 2) << c.program << " " << c.args << ":\n" << out;
		EXPECT_TRUE(contains(out, c.message)) << c.program << " " << c.args << ":\n" << out;
		EXPECT_TRUE(contains(out, "usage: ")) << out;
		EXPECT_FALSE(contains(out, "GFlop/s")) << out;
	}
	std::string out;
	EXPECT_EQ(run_example("linalg/dgemm", "-h", &out), 0) << out;
	EXPECT_TRUE(contains(out, "-iter I")) << out;
}

// tasks_size_overhead.sh: the table, the speedups per task length and worker count, and the PNG.
TEST(TasksSizeOverhead, SweepAndPlot)
{
	SKIP_WITHOUT_EXAMPLES_DIR();
	TempDir dir;
	std::string out;
	std::string cmd = "cd " + quote(dir.path()) + " && TASKS_SIZE_OVERHEAD=" +
			  quote(examples_dir() + "/tasks_size_overhead/tasks_size_overhead") + " " +
			  quote(env_or("ASTRO_TEST_SRCDIR", ".") + "/../examples/tasks_size_overhead/tasks_size_overhead.sh") + " -i 1 2>&1";
	int status = run_command(cmd, &out);
	if (status == 77)
		GTEST_SKIP() << "no worker: " << out;
	ASSERT_EQ(status, 0) << out;

	std::vector<std::string> table = lines_of(read_file(dir.file("tasks_size_overhead.output")));
	ASSERT_GE(table.size(), 4u) << read_file(dir.file("tasks_size_overhead.output"));
	EXPECT_EQ(table[0], "# tasks : 1 buffers : 0 total_nbuffers : 0");
	EXPECT_EQ(table[2].rfind("\"seq\"\t", 0), 0u) << table[2];
	size_t ncpus = table.size() - 3;

	// One row per task length, 4 to 4096 us, with a speedup per worker count (no bound: the machine may be loaded).
	std::vector<std::string> data = lines_of(read_file(dir.file("tasks_size_overhead.data")));
	ASSERT_EQ(data.size(), 12u) << read_file(dir.file("tasks_size_overhead.data"));
	unsigned length = 4;
	for (size_t i = 1; i < data.size(); i++, length *= 2) {
		std::istringstream row(data[i]);
		std::vector<double> f;
		for (std::string v; std::getline(row, v, '\t');)
			f.push_back(atof(v.c_str()));
		ASSERT_EQ(f.size(), ncpus + 1) << data[i];
		EXPECT_EQ(f[0], length) << data[i];
		for (size_t c = 1; c < f.size(); c++)
			EXPECT_GE(f[c], 0.0) << data[i];
	}

	if (!have_program("gnuplot"))
		GTEST_SKIP() << "gnuplot is not installed (gnuplot-nox): no plot to check";
	std::string png = read_file(dir.file("tasks_size_overhead.png"));
	ASSERT_GT(png.size(), 8u) << out;
	EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST(TasksSizeOverhead, BadOptionsAreExplained)
{
	SKIP_WITHOUT_EXAMPLES_DIR();
	struct
	{
		const char *args, *message;
	} cases[] = {
		{ "-i x", "-i takes an integer from 0 to 1048576, not 'x'" },
		{ "-i 0", "-i 0 runs no task: give at least 1" },
		{ "-b 9", "-b takes an integer from 0 to 8, not '9'" },
		{ "-b 4 -B 2", "-b 4 buffers per task need -B 4 or more registered buffers" },
		{ "-x", "unknown option '-x'" },
	};
	for (const auto &c : cases) {
		std::string out;
		EXPECT_EQ(run_example("tasks_size_overhead/tasks_size_overhead", c.args, &out), 2) << c.args << ":\n" << out;
		EXPECT_TRUE(contains(out, c.message)) << c.args << ":\n" << out;
	}
}

// The demo: both passes checked, the time split and the models' accuracy printed, and the trace outputs written.
TEST(Demo, TwoPassesWithTraceOutputs)
{
	SKIP_WITHOUT_EXAMPLES();
	TempDir tmp;
	std::string dir = tmp.path() + "/out", tools = env_or("ASTRO_TEST_TOOLS_DIR", "");
	std::string env = "ASTRO_DEMO_DIR=" + quote(dir) + " PATH=" + quote(tools) + ":\"$PATH\" PYTHONPATH=" +
			  quote(env_or("ASTRO_TEST_SRCDIR", ".") + "/../tools");
	// Pass 1's six dpotrf calibrate it for pass 2 (three samples suffice, none flushed however loaded the machine), so
	// that pass 2's tasks all have predictions and the demo solves their bound.
	env += " STARPU_CALIBRATE_MINIMUM=3 STARPU_HISTORY_MAX_ERROR=1000000";
	std::string out;
	int status = run_example("demo", "-size 384 -nblocks 6", &out, env);
	if (system(("rm -rf " + quote(dir)).c_str()) != 0)	// written before the checks: nothing is left behind
		ADD_FAILURE() << "could not remove " << dir;
	if (status == 77)
		GTEST_SKIP() << "no worker: " << out;
	EXPECT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "policy dmda on ")) << out;
	EXPECT_TRUE(contains(out, "pass 1 (the models calibrate): 56 tasks in ")) << out;
	EXPECT_TRUE(contains(out, "pass 2 (dmda uses the models): 56 tasks in ")) << out;
	EXPECT_TRUE(contains(out, "result correct: both passes agree with LAPACK")) << out;
	EXPECT_TRUE(contains(out, "time split per worker:")) << out;
	EXPECT_TRUE(contains(out, "    CPU 0 ")) << out;
	EXPECT_TRUE(contains(out, "median length") && contains(out, "median prediction") && contains(out, "median error")) << out;
	EXPECT_FALSE(contains(out, "mean length")) << "a mean inflated by the load's tail is not shown as the models' figure:\n" << out;
	EXPECT_TRUE(contains(out, "    dgemm_nt ")) << out;
#ifdef ASTRO_HAVE_GLPK
	// Pass 2's tasks against the bound: both passes measured against it, and neither far below it (a bound in the wrong
	// unit, us for ms, would put them a thousand times below).
	double bound = 0, r1 = 0, r2 = 0;
	size_t at = out.find("what the models can buy: no schedule of these 56 tasks on these ");
	ASSERT_NE(at, std::string::npos) << out;
	ASSERT_EQ(sscanf(out.c_str() + out.find("ends before ", at), "ends before %lf ms", &bound), 1) << out;
	ASSERT_EQ(sscanf(out.c_str() + out.find("pass 1 took ", at), "pass 1 took %lfx the bound, pass 2 %lfx", &r1, &r2), 2)
		<< out;
	EXPECT_GT(bound, 0) << out;
	EXPECT_GT(r1, 0.5) << out;
	EXPECT_GT(r2, 0.5) << out;
#else
	EXPECT_TRUE(contains(out, "the bound: not solved")) << out;
#endif
	if (contains(out, "no trace: this build has no trace recorder"))
		GTEST_SKIP() << "built without the trace recorder (OTF2)";
	EXPECT_TRUE(contains(out, "trace.json ")) << out;
	EXPECT_TRUE(contains(out, "summary.html ")) << out;
	EXPECT_TRUE(contains(out, "report.html ")) << out;
	if (have_program("gnuplot"))
		EXPECT_TRUE(contains(out, "activity.png ")) << out;
}

#ifdef STARPU_USE_OPENCL
// The demo on unequal workers: one CPU worker (OpenBLAS) and PoCL's OpenCL device on one thread, which runs the
// updates (gemm_nt, syrk, trsm_rlt) from examples/linalg/opencl.c. Pass 1 calibrates each update on both kinds of
// worker (the first tasks of each go to the device), both passes agree with LAPACK, and pass 2's tasks all have
// predictions on both kinds: the bound is solved.
TEST(Demo, UnequalWorkersCalibrateBothKindsAndAgreeWithLapack)
{
	SKIP_WITHOUT_EXAMPLES();
	TempDir tmp;
	std::string dir = tmp.path() + "/out";
	std::string env = "ASTRO_DEMO_DIR=" + quote(dir) + " STARPU_FXT_TRACE=0 STARPU_NCPU=1 STARPU_NOPENCL=1 " +
			  "STARPU_OPENCL_ON_CPUS=1 POCL_MAX_PTHREAD_COUNT=1 STARPU_CALIBRATE_MINIMUM=3 STARPU_HISTORY_MAX_ERROR=1000000";
	std::string out;
	int status = run_example("demo", "-size 384 -nblocks 6", &out, env);
	if (system(("rm -rf " + quote(dir)).c_str()) != 0)
		ADD_FAILURE() << "could not remove " << dir;
	if (status == 0 && !contains(out, " OpenCL)"))
		GTEST_SKIP() << "no OpenCL device here (install pocl-opencl-icd for a CPU one):\n" << out;
	ASSERT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "policy dmda on 2 workers (1 CPU, 1 OpenCL); tile kernels from OpenBLAS and OpenCL")) << out;
	EXPECT_TRUE(contains(out, "result correct: both passes agree with LAPACK")) << out;
	size_t pass1 = out.find("pass 1 "), pass2 = out.find("pass 2 ");
	ASSERT_NE(pass1, std::string::npos) << out;
	ASSERT_NE(pass2, std::string::npos) << out;
	unsigned on_device = 0;
	size_t line = out.find("    OpenCL 0 ", pass1);
	ASSERT_LT(line, pass2) << "pass 1 shows no OpenCL worker:\n" << out;
	ASSERT_EQ(sscanf(out.c_str() + line, " OpenCL 0 %u tasks", &on_device), 1) << out;
	EXPECT_GE(on_device, 9u) << "pass 1 calibrates each of the three updates on the device:\n" << out;
#ifdef ASTRO_HAVE_GLPK
	EXPECT_TRUE(contains(out, "what the models can buy: no schedule of these 56 tasks on these 2 workers ends before ")) << out;
#endif
}
#endif

// The trace the demo writes: Perfetto's JSON parses and holds the tasks, the summary is HTML.
TEST(Demo, TraceFilesAreReadable)
{
	SKIP_WITHOUT_EXAMPLES();
	if (!have_program("python3"))
		GTEST_SKIP() << "python3 is needed to read trace.json";
	TempDir tmp;
	std::string dir = tmp.path() + "/out", tools = env_or("ASTRO_TEST_TOOLS_DIR", "");
	std::string env = "ASTRO_DEMO_DIR=" + quote(dir) + " PATH=" + quote(tools) + ":\"$PATH\" PYTHONPATH=" +
			  quote(env_or("ASTRO_TEST_SRCDIR", ".") + "/../tools");
	std::string out, parsed;
	int status = run_example("demo", "-size 256 -nblocks 4", &out, env);
	bool traced = !contains(out, "no trace: this build has no trace recorder");
	int json = traced ? run_command("python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); "
					"ev=t[\"traceEvents\"] if isinstance(t, dict) else t; "
					"print(sum(1 for e in ev if e.get(\"ph\")==\"X\" and e.get(\"cat\")==\"task\"))' " +
						quote(dir + "/trace.json") + " 2>&1",
					&parsed)
			  : 0;
	std::string html = read_file(dir + "/summary.html"), report = read_file(dir + "/report.html");
	if (system(("rm -rf " + quote(dir)).c_str()) != 0)
		ADD_FAILURE() << "could not remove " << dir;
	if (status == 77)
		GTEST_SKIP() << "no worker: " << out;
	ASSERT_EQ(status, 0) << out;
	if (!traced)
		GTEST_SKIP() << "built without the trace recorder (OTF2)";
	EXPECT_EQ(json, 0) << parsed;
	// Two passes of 20 tasks each.
	EXPECT_EQ(atoi(parsed.c_str()), 40) << parsed;
	EXPECT_TRUE(contains(html, "<html")) << html.substr(0, 200);
	EXPECT_TRUE(contains(report, "<html")) << report.substr(0, 200);
}

#ifdef STARPU_OPENBLAS
// The Fortran entry point StarPU's BLAS examples declare (examples/common/blas.h) when starpu_config.h says OpenBLAS.
extern "C" void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
		       const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
		       const int *ldc);
#endif

// starpu_config.h names the BLAS configure found, with StarPU's macros, and a
// program that trusts them finds that BLAS; without one, it promises none.
TEST(StarpuConfig, NamesTheBlasFound)
{
#ifdef ASTRO_HAVE_OPENBLAS
#if !defined(STARPU_OPENBLAS) || !defined(STARPU_HAVE_BLAS)
	ADD_FAILURE() << "configure found OpenBLAS but starpu_config.h does not define STARPU_OPENBLAS and STARPU_HAVE_BLAS";
#else
	// Column-major 2x2: C = A * B.
	const double a[4] = {1, 3, 2, 4}, b[4] = {5, 7, 6, 8};
	double c[4] = {0, 0, 0, 0};
	const int n = 2;
	const double one = 1, zero = 0;
	dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
	EXPECT_EQ(c[0], 19);
	EXPECT_EQ(c[1], 43);
	EXPECT_EQ(c[2], 22);
	EXPECT_EQ(c[3], 50);
#endif
#else
#if defined(STARPU_OPENBLAS) || defined(STARPU_HAVE_BLAS)
	ADD_FAILURE() << "starpu_config.h names a BLAS that configure did not find";
#else
	GTEST_SKIP() << "configure found no OpenBLAS (install libopenblas-dev, then configure again)";
#endif
#endif
}

// ---------------------------------------------------- the seed's benchmarks

// local_pingpong (seed 004, section 2.2): the latency of a transfer between two memory nodes; here
// main memory and PoCL's OpenCL device on the CPU (the first two CUDA nodes on a machine with two GPUs).
TEST(LocalPingpong, PrintsTheLatency)
{
	SKIP_WITHOUT_EXAMPLES_DIR();
	std::string out;
	int status = run_example("local_pingpong/local_pingpong", "-i 50 -s 1024", &out,
				 "STARPU_NCPU=1 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1");
	if (status == 77)
		GTEST_SKIP() << "no OpenCL device here: " << out;
	ASSERT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, ": 50 round trips of 1024 bytes\n")) << out;
	double latency = -1;
	for (const std::string &line : lines_of(out))
		if (line.rfind("Latency: ", 0) == 0)
			latency = atof(line.c_str() + 9);
	EXPECT_GT(latency, 0.0) << out;
}

TEST(LocalPingpong, NothingToMeasureWithoutADeviceAndBadOptions)
{
	SKIP_WITHOUT_EXAMPLES_DIR();
	std::string out;
	EXPECT_EQ(run_example("local_pingpong/local_pingpong", "", &out, "STARPU_NCPU=1 STARPU_NOPENCL=0 STARPU_NCUDA=0"), 77) << out;
	EXPECT_TRUE(contains(out, "no device memory node")) << out;
	out.clear();
	EXPECT_EQ(run_example("local_pingpong/local_pingpong", "-i zero", &out), 1) << out;
	EXPECT_TRUE(contains(out, "-i takes an integer from 1 to")) << out;
}

// examples/profiling/profiling: each task's delay and length, each worker's profile and task count.
TEST(ProfilingExample, TasksAndWorkersProfiled)
{
	SKIP_WITHOUT_EXAMPLES_DIR();
	std::string out;
	ASSERT_EQ(run_example("profiling/profiling", "-n 20 -l 10", &out, "STARPU_NCPU=2 STARPU_NOPENCL=0 STARPU_NCUDA=0"), 0) << out;
	EXPECT_TRUE(contains(out, "Avg. delay : ")) << out;
	double length = -1;
	int tasks = 0, workers = 0;
	for (const std::string &line : lines_of(out)) {
		if (line.rfind("Avg. length : ", 0) == 0)
			length = atof(line.c_str() + 14);
		if (line.rfind("Worker CPU ", 0) == 0)
			workers++;
		int n;
		if (sscanf(line.c_str(), "\t%d task(s)", &n) == 1)
			tasks += n;
	}
	EXPECT_GE(length, 10.0) << "each task spins 10 us: " << out;
	EXPECT_EQ(workers, 2) << out;
	EXPECT_EQ(tasks, 20) << out;
	out.clear();
	EXPECT_EQ(run_example("profiling/profiling", "-n -3", &out), 1) << out;
	EXPECT_TRUE(contains(out, "-n takes an integer")) << out;
}

// make install puts the benchmarks in <prefix>/lib/starpu/examples/ under StarPU's names (seed 004, chapter 2).
TEST(Benchmarks, InstalledWhereTheSeedRunsThem)
{
	SKIP_WITHOUT_EXAMPLES_DIR();
	TempDir dest;
	std::string out;
	ASSERT_EQ(run_command("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C " + quote(examples_dir()) +
				      " install-exec DESTDIR=" + quote(dest.path()) + " 2>&1", &out), 0) << out;
	std::string found;
	run_command("cd " + quote(dest.path()) + " && find . -path '*/lib/starpu/examples/*' -type f | sed 's|.*/||' | sort", &found);
	std::vector<std::string> want = { "local_pingpong", "tasks_size_overhead", "tasks_size_overhead.gp", "tasks_size_overhead.sh" };
#ifdef ASTRO_HAVE_LINALG
	for (const char *p : { "cholesky_implicit", "cholesky_tag", "dcholesky_implicit", "dcholesky_tag", "dgemm", "sgemm",
			       "lu_implicit_example_double", "lu_implicit_example_float", "lu_example_double", "lu_example_float" })
		want.push_back(p);
#endif
	for (const std::string &name : want)
		EXPECT_TRUE(contains("\n" + found, "\n" + name + "\n")) << name << " not installed: " << found;
	std::string mode;
	run_command("cd " + quote(dest.path()) + " && find . -path '*/lib/starpu/examples/local_pingpong' -perm -u+x", &mode);
	EXPECT_FALSE(mode.empty()) << "local_pingpong is not executable";
	std::string uninstall;
	EXPECT_EQ(run_command("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C " + quote(examples_dir()) +
				      " uninstall DESTDIR=" + quote(dest.path()) + " 2>&1", &uninstall), 0) << uninstall;
	std::string left;
	run_command("cd " + quote(dest.path()) + " && find . -type f", &left);
	EXPECT_EQ(left, "") << "left after uninstall";
}

} // namespace

int main(int argc, char **argv)
{
	testing::InitGoogleTest(&argc, argv);
	scratch = env_or("TMPDIR", "/tmp") + "/astro-test-linalg-" + std::to_string(getpid());
	int ret = RUN_ALL_TESTS();
	if (system(("rm -rf " + quote(scratch)).c_str()) != 0)
		fprintf(stderr, "could not remove %s\n", scratch.c_str());
	return ret;
}
