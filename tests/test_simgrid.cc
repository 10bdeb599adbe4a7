/* SPDX-License-Identifier: LGPL-2.1-or-later */
// The simulation build (configure --enable-simgrid): unchanged StarPU programs
// (simgrid/machine.c) run on simulated machines, in virtual time. The
// hand-made machine of data/simgrid ("twoworkers": one CPU core, one GPU of
// 2.5 MB, 1 GB/s and 10 us each way) has makespans computed by hand; the
// machines StarPU ships (attila...) load. Each run is a process of its own:
// a simulation is one per process. The simulated GPUs are this suite's: it
// takes back the CUDA workers the others' STARPU_NCUDA=0 leaves out
// (tests/Makefile.am).
#include "helpers.h"

using namespace astro_test;

namespace {

const bool simulated_gpus_taken_back = unsetenv("STARPU_NCUDA") == 0;

std::string srcdir()
{
	const char *d = getenv("ASTRO_TEST_SRCDIR");
	return d ? d : ".";
}

// Runs the simulated program with env (env's arguments: VAR=value, -u VAR...) on the machine host described in dir; its exit
// status, and its stdout and stderr in *out.
int simulate(const std::string &args, const std::string &env = "", std::string *out = nullptr,
	     const std::string &host = "twoworkers", const std::string &dir = srcdir() + "/data/simgrid")
{
	std::string text;
	int ret = run_command("env " + env + " STARPU_HOSTNAME=" + host + " STARPU_PERF_MODEL_DIR='" + dir + "'" +
			      " ./sim_machine " + args + " 2>&1", &text);
	if (out)
		*out = text;
	return ret;
}

// The value printed as "name=value" by the program, NaN when absent.
double value_of(const std::string &out, const std::string &name)
{
	for (const std::string &line : lines_of(out))
		if (line.rfind(name + "=", 0) == 0)
			return std::stod(line.substr(name.size() + 1));
	return NAN;
}

// The seeds' Cholesky example (single precision) of this build.
std::string cholesky_program()
{
	return env_or("ASTRO_TEST_EXAMPLES_DIR", "../examples") + "/linalg/scholesky_implicit";
}

// The fields of a line of starpu_paje_state_stats.csv (separated by ", ").
std::vector<std::string> split(const std::string &line, const std::string &sep)
{
	std::vector<std::string> cells;
	size_t from = 0;
	for (size_t at; (at = line.find(sep, from)) != std::string::npos; from = at + sep.size())
		cells.push_back(line.substr(from, at - from));
	cells.push_back(line.substr(from));
	return cells;
}

// The suite of a simulation build: elsewhere its program is a native one.
class Simgrid : public testing::Test
{
protected:
	void SetUp() override
	{
#ifndef STARPU_SIMGRID
		GTEST_SKIP() << "not a simulation build (configure --enable-simgrid)";
#endif
	}
};

} // namespace

// Tasks only: one CPU worker runs 10 tasks of 1000 us one after the other.
TEST_F(Simgrid, TasksOnOneWorkerLastTheirModelsLength)
{
	std::string out;
	ASSERT_EQ(simulate("tasks 10", "STARPU_NCUDA=0", &out), 0) << out;
	EXPECT_EQ(value_of(out, "workers"), 1) << out;
	EXPECT_DOUBLE_EQ(value_of(out, "makespan_us"), 10000.0) << out;
}

// The thread calls in a simulation (issue 40): try-locks answer by the lock's state, and a
// wait woken by a queue's signal returns at the virtual date of the signal.
TEST_F(Simgrid, TryLocksAndQueuesWorkInVirtualTime)
{
	std::string out;
	ASSERT_EQ(simulate("threads", "STARPU_NCUDA=0", &out), 0) << out;
	EXPECT_TRUE(contains(out, "trylocks=ok")) << out;
	EXPECT_NEAR(value_of(out, "waited_us"), 500.0, 1.0) << out;
}

// Tasks on two workers: while the CPU runs one task (1000 us), the GPU runs four (250 us each).
TEST_F(Simgrid, TwoWorkersShareTasksByTheirSpeeds)
{
	std::string out;
	ASSERT_EQ(simulate("both 5", "STARPU_SCHED=eager", &out), 0) << out;
	EXPECT_EQ(value_of(out, "cpu"), 1) << out;
	EXPECT_EQ(value_of(out, "cuda"), 1) << out;
	EXPECT_DOUBLE_EQ(value_of(out, "makespan_us"), 1000.0) << out;
	// 40 tasks: 5 per millisecond between the two, 8 ms, with a policy that uses the models.
	ASSERT_EQ(simulate("both 40", "STARPU_SCHED=dmda", &out), 0) << out;
	EXPECT_DOUBLE_EQ(value_of(out, "makespan_us"), 8000.0) << out;
}

// One link: 1,000,000 bytes to the GPU (10 us + 1000 us), the task (250 us), and back at unregistration.
TEST_F(Simgrid, TransfersTakeTheTimeOfTheLink)
{
	std::string out;
	ASSERT_EQ(simulate("transfer", "STARPU_SCHED=eager", &out), 0) << out;
	EXPECT_DOUBLE_EQ(value_of(out, "tasks_us"), 1010.0 + 250.0) << out;
	EXPECT_DOUBLE_EQ(value_of(out, "with_unregister_us"), 1010.0 + 250.0 + 1010.0) << out;
}

// 2.5 MB of GPU memory holds two of the three vectors: the third task's data evicts the first
// one's, which the GPU modified, so it goes back to main memory first (1010 us more).
TEST_F(Simgrid, SmallDeviceMemoryEvicts)
{
	std::string out;
	ASSERT_EQ(simulate("evict", "STARPU_SCHED=eager", &out), 0) << out;
	EXPECT_DOUBLE_EQ(value_of(out, "tasks_us"), 3 * (1010.0 + 250.0) + 1010.0) << out;
	// Then the two vectors still on the GPU come back.
	EXPECT_DOUBLE_EQ(value_of(out, "with_unregister_us"), 3 * (1010.0 + 250.0) + 3 * 1010.0) << out;
}

// The same program, machine and policy give the same virtual makespan every run, whatever the policy.
TEST_F(Simgrid, Deterministic)
{
	for (const char *policy : { "dmda", "lws", "random", "modular-heft" }) {
		std::string first, again;
		ASSERT_EQ(simulate("both 40", std::string("STARPU_SCHED=") + policy, &first), 0) << first;
		for (int run = 0; run < 2; run++) {
			ASSERT_EQ(simulate("both 40", std::string("STARPU_SCHED=") + policy, &again), 0) << again;
			EXPECT_EQ(value_of(again, "makespan_us"), value_of(first, "makespan_us")) << policy;
		}
	}
}

// A task whose model has no measurement for the worker is an error naming the codelet, the
// architecture and the footprint, not a length of zero.
TEST_F(Simgrid, UncalibratedCodeletIsAnError)
{
	std::string out;
	EXPECT_NE(simulate("uncalibrated", "STARPU_NCUDA=0", &out), 0) << out;
	EXPECT_NE(out.find("codelet never_measured (model sim_never_measured) has no calibrated length for cpu0_impl0"),
		  std::string::npos) << out;
	EXPECT_NE(out.find("footprint 00000000"), std::string::npos) << out;
	EXPECT_NE(out.find("calibrate it natively"), std::string::npos) << out;
	EXPECT_EQ(out.find("makespan_us"), std::string::npos) << out;
}

// A machine nobody described: one line naming the machine, the folder and what to set.
TEST_F(Simgrid, UndescribedMachineIsAnError)
{
	std::string out;
	EXPECT_NE(simulate("tasks 1", "", &out, "nosuchmachine"), 0) << out;
	EXPECT_NE(out.find("no description of the machine 'nosuchmachine'"), std::string::npos) << out;
	EXPECT_NE(out.find("STARPU_HOSTNAME"), std::string::npos) << out;
}

// The machines StarPU ships for its users to simulate load, with their workers: attila has
// 12 CPU cores and 3 GPUs.
TEST_F(Simgrid, ShippedMachinesLoad)
{
	const std::string shipped = srcdir() + "/../simgrid/sampling";
	for (const char *host : { "attila", "mirage", "idgraf", "sirocco", "hannibal" }) {
		std::string out;
		ASSERT_EQ(simulate("tasks 0", "STARPU_NOPENCL=0", &out, host, shipped), 0) << host << ": " << out;
		EXPECT_GE(value_of(out, "cpu"), 8) << host << ": " << out;
		EXPECT_GE(value_of(out, "cuda"), 3) << host << ": " << out;
	}
	std::string out;
	// The suites run with STARPU_NOPENCL=0 (tests/Makefile.am): the machine's default here.
	ASSERT_EQ(simulate("tasks 0", "-u STARPU_NOPENCL", &out, "attila", shipped), 0) << out;
	EXPECT_EQ(value_of(out, "cpu"), 12) << out;
	EXPECT_EQ(value_of(out, "cuda"), 3) << out;
	EXPECT_EQ(value_of(out, "opencl"), 3) << out;
	ASSERT_EQ(simulate("tasks 0", "", &out, "idgraf", shipped), 0) << out;
	EXPECT_EQ(value_of(out, "cuda"), 8) << out;
}

// Everything observed is dated in virtual time: a simulated run's trace converts, and pj_dump reads
// the transfer (1010 us) and the GPU task (250 us) at their simulated dates.
TEST_F(Simgrid, SimulatedTraceConverts)
{
	if (!have_program("pj_dump"))
		GTEST_SKIP() << "pj_dump (Debian's pajeng) is not installed";
	char dir[] = "/tmp/astro-simtrace-XXXXXX";
	ASSERT_NE(mkdtemp(dir), nullptr);
	std::string out;
	ASSERT_EQ(simulate("transfer", std::string("STARPU_SCHED=eager STARPU_FXT_TRACE=1 STARPU_GENERATE_TRACE=1 STARPU_FXT_PREFIX=") + dir,
			   &out), 0) << out;
	std::string paje;
	ASSERT_EQ(run_command(std::string("pj_dump ") + dir + "/paje.trace 2>&1", &paje), 0) << paje;
	EXPECT_NE(paje.find("Link, program, Intra-node data Fetch, 0.000000, 1.010000, 1.010000, 1000000"), std::string::npos) << paje;
	EXPECT_NE(paje.find("State, CUDA0, Worker State, 1.010000, 1.260000, 0.250000, 0.000000, on_gpu"), std::string::npos) << paje;
	EXPECT_NE(paje.find("Link, program, Intra-node data Fetch, 1.260000, 2.270000, 1.010000, 1000000"), std::string::npos) << paje;
	std::string ignored;
	run_command(std::string("rm -rf ") + dir, &ignored);
}

// The seed's comparison of a native run with its simulation (chapter 4.5). data/simgrid/recorded
// holds what a native run of this machine left (its platform and calibrated models, in a sampling
// folder, and the paje.trace of the same Cholesky, 4 x 4 tiles of 480, dmda on two cores): the
// simulation of that run from those files is read with the native trace by the paje tools. Every
// simulated task lasts its model's mean, so each codelet's total is known from the models.
TEST_F(Simgrid, NativeAndSimulatedTracesCompare)
{
	std::string program = cholesky_program();
	if (!file_exists(program))
		GTEST_SKIP() << program << " is not built (the linear-algebra examples need OpenBLAS and LAPACKE)";
	TempDir dir;
	std::string recorded = srcdir() + "/data/simgrid/recorded";
	std::string out;
	ASSERT_EQ(run_command("cd '" + dir.path() + "' && env STARPU_PERF_MODEL_DIR='" + recorded + "/sampling' STARPU_HOSTNAME=benchbox " +
				      "STARPU_SCHED=dmda STARPU_NOPENCL=0 STARPU_NCUDA=0 STARPU_FXT_TRACE=1 STARPU_GENERATE_TRACE=1 " +
				      "STARPU_FXT_PREFIX='" + dir.path() + "' " + program + " -size 1920 -nblocks 4 2>&1 && " +
				      "mv paje.trace simgrid.trace && cp '" + recorded + "/native.trace' native.trace",
			      &out),
		  0)
		<< out;
	std::string tools = env_or("ASTRO_TEST_TOOLS_DIR", "../tools");
	std::string in_dir = "cd '" + dir.path() + "' && PYTHONPATH='" + srcdir() + "/../tools' " + tools + "/";
	ASSERT_EQ(run_command(in_dir + "starpu_paje_state_stats native.trace simgrid.trace 2>&1", &out), 0) << out;
	std::string csv = read_file(dir.file("starpu_paje_state_stats.csv"));
	EXPECT_NE(csv.find("\"Value\", \"Events_native.csv\", \"Duration_native.csv\", \"Events_simgrid.csv\", \"Duration_simgrid.csv\"\n"),
		  std::string::npos)
		<< csv;
	// Counts match; simulated totals are the models' means times the counts (483.25 us x 4...).
	const char *rows[][2] = {{"chol_model_potrf", "4"}, {"chol_model_trsm", "6"}, {"chol_model_syrk", "6"}, {"chol_model_gemm", "4"}};
	const double totals[] = {4 * 483.2529e-3, 6 * 1379.559e-3, 6 * 1159.610e-3, 4 * 2329.365e-3};
	for (int i = 0; i < 4; i++) {
		std::vector<std::string> cells;
		for (const std::string &line : lines_of(csv))
			if (line.rfind(std::string("\"") + rows[i][0] + "\",", 0) == 0)
				cells = split(line, ", ");
		ASSERT_EQ(cells.size(), 5u) << rows[i][0] << " in " << csv;
		EXPECT_EQ(cells[1], rows[i][1]) << rows[i][0] << " natively";
		EXPECT_GT(std::stod(cells[2]), 0) << rows[i][0] << " natively";
		EXPECT_EQ(cells[3], rows[i][1]) << rows[i][0] << " simulated";
		EXPECT_NEAR(std::stod(cells[4]), totals[i], 1e-3) << rows[i][0] << " simulated";
	}
	ASSERT_EQ(run_command(in_dir + "starpu_paje_summary native.trace simgrid.trace 2>&1", &out), 0) << out;
	std::string page = read_file(dir.file("summary.html"));
	EXPECT_NE(page.find("native.trace"), std::string::npos);
	EXPECT_NE(page.find("simgrid.trace"), std::string::npos);
	EXPECT_NE(page.find("<td>chol_model_gemm</td>"), std::string::npos) << page.substr(0, 3000);
	if (!have_program("gnuplot"))
		GTEST_SKIP() << "gnuplot is not installed: starpu_paje_draw_histogram is not run";
	ASSERT_EQ(run_command(in_dir + "starpu_paje_draw_histogram -n chol_model_potrf,chol_model_trsm,chol_model_gemm native.trace simgrid.trace 2>&1",
			      &out),
		  0)
		<< out;
	std::string pdf = read_file(dir.file("starpu_paje_draw_histogram.pdf"));
	EXPECT_EQ(pdf.compare(0, 5, "%PDF-"), 0) << "no PDF drawn: " << out;
}

// The seeds' example: the single-precision tiled Cholesky on attila (12 cores, 3 GPUs), with
// StarPU's measured models. It never touches its 1.5 GB matrix (folded), so its peak RSS stays
// small; it simulates the same makespan every run.
TEST_F(Simgrid, SeedCholeskyOnAttila)
{
	std::string program = cholesky_program();
	if (!file_exists(program))
		GTEST_SKIP() << program << " is not built (the linear-algebra examples need OpenBLAS and LAPACKE)";
	std::string cmd = "STARPU_PERF_MODEL_DIR='" + srcdir() + "/../simgrid/sampling' STARPU_HOSTNAME=attila STARPU_SCHED=dmda " +
			  program + " -size 19200 -nblocks 20";
	// Python runs it and says its exit status and the peak RSS of the processes it waited for (kB).
	std::string python = "import resource, subprocess, sys\n"
			     "p = subprocess.run(sys.argv[1], shell=True, capture_output=True, text=True)\n"
			     "print(p.stdout + p.stderr)\n"
			     "print('status=%d' % p.returncode)\n"
			     "print('rss_kb=%d' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n";
	double makespan[2];
	for (int run = 0; run < 2; run++) {
		std::string out;
		ASSERT_EQ(run_command("python3 -c \"" + python + "\" \"" + cmd + "\"", &out), 0) << out;
		EXPECT_EQ(value_of(out, "status"), 0) << out;
		size_t at = out.find("19200\t"); // "19200	<ms>	<GFlop/s>"
		ASSERT_NE(at, std::string::npos) << out;
		makespan[run] = std::stod(out.substr(at + 6));
		EXPECT_GT(makespan[run], 0) << out;
		EXPECT_LT(value_of(out, "rss_kb"), 300 * 1024) << out;
	}
	EXPECT_EQ(makespan[0], makespan[1]);
}

// smpirun with np ranks of an SMPI program (a shared module) on np simulated mirage nodes of
// simgrid/cluster.xml (simgrid/smpi-platform's files, in a folder of their own): its exit status,
// its output in *out.
static int smpirun(const std::string &program, int np, const std::string &args, std::string *out)
{
	char dir[] = "/tmp/astro-smpi-XXXXXX";
	if (!mkdtemp(dir)) {
		*out = "mkdtemp failed";
		return -1;
	}
	const std::string d = dir, n = std::to_string(np);
	int ret = run_command(srcdir() + "/../simgrid/smpi-platform " + n + " mirage --out " + d + "/p 2>&1", out);
	if (ret == 0)
		ret = run_command("env STARPU_HOSTNAME=mirage STARPU_PERF_MODEL_DIR='" + srcdir() + "/../simgrid/sampling' smpirun -np " + n +
					  " -platform " + d + "/p.xml -hostfile " + d + "/p.hosts " + program + " " + args + " 2>&1",
				  out);
	std::string ignored;
	run_command("rm -rf " + d, &ignored);
	return ret;
}

// StarPU-MPI over SimGrid's SMPI: smpirun runs 4 ranks of a StarPU-MPI program (simgrid/smpi.c) in
// this one process, each on a node of the cluster of simgrid/cluster.xml with a simulated mirage
// machine of its own (simgrid/smpi-platform). A chain of 12 tasks of 1000 us goes round the
// ranks, each reading the vector of 1 MB the previous rank wrote: the makespan is the 12 tasks
// and the 11 messages between nodes, the same every run.
TEST_F(Simgrid, SmpiWithFourRanks)
{
	const std::string program = ".libs/sim_smpi.so";
	if (!file_exists(program))
		GTEST_SKIP() << program << " is not built (configure found no SimGrid SMPI)";
	if (!have_program("smpirun"))
		GTEST_SKIP() << "smpirun (Debian's libsimgrid-dev) is not installed";
	std::string first, again;
	ASSERT_EQ(smpirun(program, 4, "3", &first), 0) << first;
	EXPECT_EQ(value_of(first, "ranks"), 4) << first;
	const double makespan = value_of(first, "makespan_us");
	EXPECT_GT(makespan, 12 * 1000.0) << first;
	EXPECT_LT(makespan, 12 * 1000.0 + 11 * 5000.0) << first;
	ASSERT_EQ(smpirun(program, 4, "3", &again), 0) << again;
	EXPECT_EQ(value_of(again, "makespan_us"), makespan) << again;
}

// A StarPU-MPI program's own MPI calls under SMPI (simgrid/smpi.c's "mpi"): it starts and ends MPI
// itself, and makes collectives and a ring of messages while StarPU-MPI's messages are in flight,
// from its main(), which runs beside the rank's actor that SMPI delivers to (mpi/smpi_calls.c hands
// them over). Every rank gets the right values, and the chain's makespan keeps its bounds and is the
// same on a second run.
TEST_F(Simgrid, SmpiProgramMakesItsOwnMpiCalls)
{
	const std::string program = ".libs/sim_smpi.so";
	if (!file_exists(program) || !have_program("smpirun"))
		GTEST_SKIP() << "no SMPI program or smpirun";
	std::string first, again;
	ASSERT_EQ(smpirun(program, 4, "3 mpi", &first), 0) << first;
	EXPECT_NE(first.find("mpi_calls=ok\n"), std::string::npos) << first;
	EXPECT_EQ(value_of(first, "allreduce"), 1 + 2 + 3 + 4) << first;
	const double makespan = value_of(first, "makespan_us");
	EXPECT_GT(makespan, 12 * 1000.0) << first;
	EXPECT_LT(makespan, 12 * 1000.0 + 11 * 5000.0) << first;
	ASSERT_EQ(smpirun(program, 4, "3 mpi", &again), 0) << again;
	EXPECT_EQ(value_of(again, "makespan_us"), makespan) << again;
	EXPECT_NE(again.find("mpi_calls=ok\n"), std::string::npos) << again;
}

// A platform without the ranks' machines (the bare cluster of simgrid/cluster.xml): each rank says
// which host it lacks and which script makes the platform, and the run fails.
TEST_F(Simgrid, SmpiWithoutMachinesIsAnError)
{
	const std::string program = ".libs/sim_smpi.so";
	if (!file_exists(program) || !have_program("smpirun"))
		GTEST_SKIP() << "no SMPI program or smpirun";
	std::string out;
	EXPECT_NE(run_command("env STARPU_HOSTNAME=mirage STARPU_PERF_MODEL_DIR='" + srcdir() + "/../simgrid/sampling' smpirun -np 2 -platform " +
				      srcdir() + "/../simgrid/cluster.xml -hostfile " + srcdir() + "/../simgrid/hostfile " + program + " 2>&1",
			      &out), 0) << out;
	EXPECT_NE(out.find("SMPI rank 1 has no machine: the platform has no host '1-CPU0'"), std::string::npos) << out;
	EXPECT_NE(out.find("simgrid/smpi-platform"), std::string::npos) << out;
	EXPECT_EQ(out.find("makespan_us"), std::string::npos) << out;
}

// The distributed Cholesky of examples/mpi on 4 simulated mirage nodes (2 x 2 ranks, 8 x 8 tiles of
// 960): it reports its simulated time, the same on a second run.
TEST_F(Simgrid, SmpiCholeskyOnFourNodes)
{
	const std::string program = env_or("ASTRO_TEST_EXAMPLES_DIR", "../examples") + "/mpi/.libs/mpi_cholesky_smpi.so";
	if (!file_exists(program) || !have_program("smpirun"))
		GTEST_SKIP() << program << " or smpirun is missing (SMPI, OpenBLAS and LAPACKE are needed)";
	std::string first, again;
	ASSERT_EQ(smpirun(program, 4, "-size 7680 -nblocks 8", &first), 0) << first;
	EXPECT_NE(first.find("# 4 ranks on a 2 x 2 grid"), std::string::npos) << first;
	// "7680 <ms> <GFlop/s>": the simulated time.
	double ms = NAN;
	for (const std::string &line : lines_of(first))
		if (line.rfind("7680\t", 0) == 0)
			ms = std::stod(line.substr(5));
	EXPECT_GT(ms, 0) << first;
	ASSERT_EQ(smpirun(program, 4, "-size 7680 -nblocks 8", &again), 0) << again;
	EXPECT_NE(again.find("7680\t" + std::to_string((long)ms) + "\t"), std::string::npos) << first << again;
}
