// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU's command-line tools under StarPU's names (issue 38): each run from
// the build tree (tools/) with StarPU 1.4's options, its output matched.
// --help, --version and the manual pages of every tool are test_docs's.
#include "helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>
#include <unistd.h>

using namespace astro_test;

namespace
{

std::string tool(const std::string &name)
{
	return env_or("ASTRO_TEST_TOOLS_DIR", "../tools") + "/" + name;
}

// Runs tool name with args in dir, env before it (VAR=value ...); its exit status, stdout and stderr in *out.
// The runtime's files go under dir: STARPU_HOME is dir, and XDG_CACHE_HOME (read first) is unset.
int run_tool(const TempDir &dir, const std::string &name, const std::string &args, std::string *out, const std::string &env = "")
{
	std::string cmd = "cd " + quote(dir.path()) + " && env -u XDG_CACHE_HOME -u STARPU_PERF_MODEL_DIR STARPU_HOME=" + quote(dir.path()) +
			  " STARPU_HOSTNAME=testhost PYTHONPATH=" + quote(env_or("ASTRO_TEST_SRCDIR", ".") + "/../tools") + " " + env + " " +
			  quote(tool(name)) + " " + args + " 2>&1";
	out->clear();
	return run_command(cmd, out);
}

// Removes what a run left under dir (TempDir removes files only).
void clean(const TempDir &dir)
{
	EXPECT_EQ(system(("rm -rf " + quote(dir.path()) + "/.starpu " + quote(dir.path()) + "/out").c_str()), 0);
}

class Tools : public ::testing::Test
{
protected:
	void SetUp() override
	{
		if (env_or("ASTRO_TEST_TOOLS_DIR", "").empty())
			GTEST_SKIP() << "ASTRO_TEST_TOOLS_DIR is not set: run through make check";
	}
	void TearDown() override { clean(dir); }
	// Whether tool name was built; a failure when not (each tool here is built in every configuration).
	static bool built(const std::string &name)
	{
		if (file_exists(tool(name)))
			return true;
		ADD_FAILURE() << tool(name) << " is missing: tools/Makefile.am builds it";
		return false;
	}
	TempDir dir;
};

} // namespace

// --------------------------------------------------- starpu_machine_display

TEST_F(Tools, MachineDisplayInfoNamesTheBusFiles)
{
	if (!built("starpu_machine_display"))
		return;
	std::string out;
	ASSERT_EQ(run_tool(dir, "starpu_machine_display", "-i -n", &out, "STARPU_NCPU=1"), 0) << out;
	std::string bus = dir.path() + "/.starpu/sampling/bus/testhost.";
	EXPECT_TRUE(contains(out, "bandwidth: " + bus + "bandwidth\n  latency: " + bus + "latency\n   config: " + bus + "config\n")) << out;
	EXPECT_TRUE(contains(out, "StarPU has found :\n1 CPU worker:\n\tCPU 0\n")) << out;
	EXPECT_FALSE(contains(out, "topology")) << "-n: no topology: " << out;
}

TEST_F(Tools, MachineDisplayForceMeasuresTheBus)
{
	if (!built("starpu_machine_display"))
		return;
	std::string out;
	// Two NUMA nodes of a synthetic topology: a bus to measure, written to the files -i names.
	ASSERT_EQ(run_tool(dir, "starpu_machine_display", "-f", &out,
			   "STARPU_USE_NUMA=1 HWLOC_SYNTHETIC='pack:2 numa:1 core:1 pu:1' STARPU_NCPU=2"), 0) << out;
	EXPECT_TRUE(contains(out, "from/to\tNUMA 0\tNUMA 1\t\n")) << out;
	EXPECT_TRUE(file_exists(dir.file(".starpu/sampling/bus/testhost.bandwidth"))) << out;
	EXPECT_TRUE(file_exists(dir.file(".starpu/sampling/bus/testhost.config"))) << out;

	// One memory node: nothing to measure, and it says so.
	ASSERT_EQ(run_tool(dir, "starpu_machine_display", "-f -n", &out, "STARPU_USE_NUMA=0 STARPU_NCPU=1"), 0) << out;
	EXPECT_TRUE(contains(out, "no bus to measure: main memory is the only memory node")) << out;
}

TEST_F(Tools, MachineDisplayWorkerTypeAndCount)
{
	if (!built("starpu_machine_display"))
		return;
	std::string out;
	ASSERT_EQ(run_tool(dir, "starpu_machine_display", "-w CPU -c", &out, "STARPU_NCPU=2"), 0) << out;
	EXPECT_EQ(out, "2\n");
	ASSERT_EQ(run_tool(dir, "starpu_machine_display", "-w CUDA -n", &out, "STARPU_NCPU=2"), 0) << out;
	EXPECT_TRUE(contains(out, "StarPU has found :\nNo CUDA worker\n")) << out;
	EXPECT_FALSE(contains(out, "CPU 0")) << out;
	EXPECT_EQ(run_tool(dir, "starpu_machine_display", "-w GPU", &out), 1) << out;
	EXPECT_TRUE(contains(out, "unknown worker type 'GPU': use CPU, CUDA")) << out;
}

// ----------------------------------------------------- starpu_calibrate_bus

TEST_F(Tools, CalibrateBusWritesTheBusFiles)
{
	if (!built("starpu_calibrate_bus"))
		return;
	std::string out;
	const std::string numa2 = "STARPU_USE_NUMA=1 HWLOC_SYNTHETIC='pack:2 numa:1 core:1 pu:1' STARPU_NCPU=2";
	ASSERT_EQ(run_tool(dir, "starpu_calibrate_bus", "", &out, numa2), 0) << out;
	EXPECT_EQ(out, "") << "silent when it worked, as StarPU's";
	std::string bandwidth = read_file(dir.file(".starpu/sampling/bus/testhost.bandwidth"));
	EXPECT_TRUE(contains(bandwidth, "# to 0\t\tto 1\t\t\n")) << bandwidth;
	EXPECT_TRUE(contains(read_file(dir.file(".starpu/sampling/bus/testhost.config")), "0\tNUMA 0\n1\tNUMA 1\n"));

	// Measured again each time: the files are rewritten (an older copy is replaced).
	ASSERT_TRUE(dir.write(".starpu/sampling/bus/testhost.bandwidth", "stale\n"));
	ASSERT_EQ(run_tool(dir, "starpu_calibrate_bus", "-i", &out, numa2), 0) << out;
	EXPECT_EQ(out, "bandwidth: " + dir.path() + "/.starpu/sampling/bus/testhost.bandwidth\n  latency: " + dir.path() +
			       "/.starpu/sampling/bus/testhost.latency\n   config: " + dir.path() + "/.starpu/sampling/bus/testhost.config\n");
	EXPECT_FALSE(contains(read_file(dir.file(".starpu/sampling/bus/testhost.bandwidth")), "stale"));
}

TEST_F(Tools, CalibrateBusWithoutABusSaysSo)
{
	if (!built("starpu_calibrate_bus"))
		return;
	std::string out;
	ASSERT_EQ(run_tool(dir, "starpu_calibrate_bus", "", &out, "STARPU_USE_NUMA=0 STARPU_NCPU=1"), 0) << out;
	EXPECT_EQ(out, "no bus to measure: main memory is the only memory node (set STARPU_USE_NUMA=1 on a NUMA machine)\n");
	EXPECT_EQ(run_tool(dir, "starpu_calibrate_bus", "now", &out), 1) << out;
	EXPECT_EQ(out, "starpu_calibrate_bus: unexpected argument 'now': it takes none (see starpu_calibrate_bus --help)\n");
}

// ------------------------------------------------------------ starpu_config

TEST_F(Tools, ConfigShowsTheParametersOfStarpuConfigH)
{
	if (!built("starpu_config"))
		return;
	std::string header = read_file(tool("../include/starpu_config.h"));
	ASSERT_TRUE(contains(header, "#define STARPU_MAJOR_VERSION 1\n")) << "the build's starpu_config.h";
	std::string defined, undefined;
	for (const std::string &line : lines_of(header)) {
		if (line.rfind("#define STARPU_", 0) == 0)
			defined += line + "\n";
		else if (line.rfind("/* #undef ", 0) == 0)
			undefined += "#undef " + line.substr(10, line.size() - 13) + "\n";
	}
	std::string out;
	ASSERT_EQ(run_tool(dir, "starpu_config", "-d", &out), 0) << out;
	std::string processing = "processing " + tool("starpu_config.cfg") + "\n";
	EXPECT_EQ(out.rfind(processing, 0), 0u) << out;
	EXPECT_EQ(out, processing + defined + "#define ASTROLABE 1\n") << "the defines in the header's order, no include guard";
	ASSERT_EQ(run_tool(dir, "starpu_config", "-u", &out), 0) << out;
	EXPECT_EQ(out, processing + undefined);

	// Names: the parameters holding each; one holding none is said (status 1).
	ASSERT_EQ(run_tool(dir, "starpu_config", "MAJOR_VERSION", &out), 0) << out;
	EXPECT_EQ(out, processing + "#define STARPU_MAJOR_VERSION 1\n");
	EXPECT_EQ(run_tool(dir, "starpu_config", "STARPU_MAXCPUS STARPU_NO_SUCH", &out), 1) << out;
	EXPECT_TRUE(contains(out, "#define STARPU_MAXCPUS ")) << out;
	EXPECT_TRUE(contains(out, "starpu_config: no configuration parameter holds 'STARPU_NO_SUCH': run starpu_config alone to list them\n")) << out;

	// Alone: every parameter, sorted.
	ASSERT_EQ(run_tool(dir, "starpu_config", "", &out), 0) << out;
	std::vector<std::string> lines = lines_of(out);
	ASSERT_GT(lines.size(), 20u) << out;
	EXPECT_TRUE(std::is_sorted(lines.begin() + 1, lines.end())) << out;
	EXPECT_EQ(run_tool(dir, "starpu_config", "-x", &out), 1) << out;
	EXPECT_TRUE(contains(out, "starpu_config: unknown option '-x': see starpu_config --help\n")) << out;
}

// --------------------------------------------------------------- starpu_env

// Sources starpu_env with args in bash, then prints what it set (and whether its helpers are gone).
static int source_env(const TempDir &dir, const std::string &args, std::string *out)
{
	std::string script = ". " + tool("starpu_env") + " " + args +
			     "; echo \"status=$? ROOT=$STARPU_ROOT PATH=${PATH%%:*} LD=$LD_LIBRARY_PATH PKG=$PKG_CONFIG_PATH MAN=$MANPATH\"; "
			     "set | grep -c '^_starpu_env' || true";
	out->clear();
	return run_command("cd " + quote(dir.path()) + " && env -u STARPU_ROOT -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH -u MANPATH bash -c " +
				   quote(script) + " 2>&1",
			   out);
}

TEST_F(Tools, EnvSetsTheVariablesOfAnInstallation)
{
	if (!built("starpu_env"))
		return;
	// An installation as Debian lays it out: the pkg-config file under lib/<triplet>.
	std::string root = dir.path() + "/out";
	ASSERT_EQ(system(("mkdir -p " + quote(root) + "/bin " + quote(root) + "/lib/x86_64-linux-gnu/pkgconfig " + quote(root) + "/share && touch " +
			  quote(root) + "/bin/starpu_machine_display " + quote(root) + "/lib/x86_64-linux-gnu/pkgconfig/starpu-1.4.pc")
				 .c_str()),
		  0);
	std::string out, lib = root + "/lib/x86_64-linux-gnu";
	ASSERT_EQ(source_env(dir, "-d " + quote(root), &out), 0) << out;
	EXPECT_EQ(out, "Setting StarPU environment for " + root + "\nstatus=0 ROOT=" + root + " PATH=" + root + "/bin LD=" + lib + " PKG=" + lib +
			       "/pkgconfig MAN=" + root + "/share/man:\n0\n")
		<< "the variables set, no helper left in the shell";

	// Not an installation: each thing missing is named, nothing is set, the shell goes on.
	ASSERT_EQ(source_env(dir, "-d " + quote(dir.path()), &out), 0) << out;
	EXPECT_TRUE(contains(out, "[Error] '" + dir.path() + "' is not a valid StarPU installation directory ...\n")) << out;
	EXPECT_TRUE(contains(out, "cannot find executable '" + dir.path() + "/bin/starpu_machine_display'")) << out;
	EXPECT_TRUE(contains(out, "cannot find file       '" + dir.path() + "/lib/pkgconfig/starpu-1.4.pc'")) << out;
	EXPECT_TRUE(contains(out, "status=1 ROOT= ")) << out;
	EXPECT_TRUE(contains(out, "\n0\n")) << "no helper left: " << out;

	// Run as a program (not sourced) it still answers --version and --help.
	ASSERT_EQ(run_tool(dir, "starpu_env", "--version", &out), 0) << out;
	EXPECT_EQ(out.rfind("starpu_env (Astrolabe, StarPU 1.4.", 0), 0u) << out;
}

// ----------------------------------------------------- starpu_sched_display

TEST_F(Tools, SchedDisplayListsThePoliciesStarpuSchedNames)
{
	if (!built("starpu_sched_display"))
		return;
	std::string names, described, help;
	// Whatever the environment asks of the workers: the list needs one CPU worker only.
	ASSERT_EQ(run_tool(dir, "starpu_sched_display", "", &names, "STARPU_NCPU=0 STARPU_SCHED=nosuch"), 0) << names;
	ASSERT_EQ(run_tool(dir, "starpu_sched_display", "--long", &described), 0) << described;
	// The runtime's own list (STARPU_SCHED=help): "name<TAB>-> description" lines.
	ASSERT_EQ(run_tool(dir, "starpu_machine_display", "-c", &help, "STARPU_SCHED=help STARPU_NCPU=1"), 0) << help;
	std::string from_help;
	for (const std::string &line : lines_of(help)) {
		size_t arrow = line.find("\t-> ");
		if (arrow != std::string::npos)
			from_help += line.substr(0, line.find_last_not_of(' ', arrow - 1) + 1) + "\n";
	}
	EXPECT_EQ(names, from_help) << "one name a line, as STARPU_SCHED=help lists them";
	for (const char *policy : { "eager", "prio", "lws", "ws", "dmda", "modular-heft" })
		EXPECT_TRUE(contains("\n" + names, std::string("\n") + policy + "\n")) << policy << " missing: " << names;
	EXPECT_EQ(lines_of(described).size(), lines_of(names).size()) << described;
	EXPECT_TRUE(contains(described, "\n" + std::string("lws") + std::string(17, ' ') + "\t-> ")) << described;
}

// --------------------------------------------------------- starpu_fxt_stats

// The committed golden trace (plugins/tools/trace/golden: 8 tasks on two CPU workers, main memory only).
TEST_F(Tools, FxtStatsOfTheGoldenTrace)
{
	if (!file_exists(tool("starpu_fxt_tool")))
		GTEST_SKIP() << "the trace plugin is not built (no OTF2: install libotf2-trace-dev)";
	if (!built("starpu_fxt_stats"))
		return;
	std::string archive = env_or("ASTRO_TEST_SRCDIR", ".") + "/../plugins/tools/trace/golden/archive";
	std::string out;
	ASSERT_EQ(run_tool(dir, "starpu_fxt_stats", "-i " + quote(archive), &out), 0) << out;
	// The last event at 0.411124 ms (trace.rec's last S:), no transfer, 8 tasks run (tasks.rec's).
	EXPECT_EQ(out, "Start : start time 0.000000e+00 end time 4.111240e-01 length 4.111240e-01\nThere was 8 tasks\n");
	ASSERT_EQ(run_tool(dir, "starpu_fxt_stats", "-o stats.txt -i " + quote(trace_anchor(archive)), &out), 0) << out;
	EXPECT_EQ(out, "");
	EXPECT_EQ(read_file(dir.file("stats.txt")), "Start : start time 0.000000e+00 end time 4.111240e-01 length 4.111240e-01\nThere was 8 tasks\n");

	EXPECT_EQ(run_tool(dir, "starpu_fxt_stats", "-i " + quote(dir.path() + "/none"), &out), 1) << out;
	EXPECT_TRUE(contains(out, "[astrolabe] starpu_fxt_stats: " + dir.path() + "/none: no such file or directory")) << out;
	EXPECT_EQ(run_tool(dir, "starpu_fxt_stats", "", &out), 1) << out;
	EXPECT_EQ(out, "starpu_fxt_stats: no trace given: use -i <the folder STARPU_FXT_TRACE=1 left>\n");
	EXPECT_EQ(run_tool(dir, "starpu_fxt_stats", "-i", &out), 1) << out;
	EXPECT_EQ(out, "starpu_fxt_stats: no file after '-i': see starpu_fxt_stats --help\n");
}

// ------------------------------------------------------ starpu_mlr_analysis

TEST_F(Tools, MlrAnalysisFindsTheEquationOfTheSamples)
{
	if (!built("starpu_mlr_analysis"))
		return;
	// The samples file of a model with parameters M, N, K whose codelet lasts 5 + 0.002 M N K us, as models/mlr.c writes it.
	std::string samples = "Duration, M, N, K\n";
	for (int m : { 16, 32, 64 })
		for (int n : { 8, 16, 32 })
			for (int k : { 4, 8 })
				samples += std::to_string(5 + 0.002 * m * n * k) + ", " + std::to_string(m) + ".000000, " + std::to_string(n) +
					   ".000000, " + std::to_string(k) + ".000000\n";
	ASSERT_TRUE(dir.write("mlr_init.out", samples));
	std::string out;
	ASSERT_EQ(run_tool(dir, "starpu_mlr_analysis", "mlr_init.out", &out), 0) << out;
	std::vector<std::string> lines = lines_of(out);
	ASSERT_GE(lines.size(), 4u) << out;
	EXPECT_EQ(lines[0], "mlr_init.out: 18 samples of Duration against M, N, K");
	EXPECT_EQ(lines[1].rfind("1. Duration = 5 + 0.002 * M*N*K  (R2 adjusted 1.0000, mean relative error 0.0 %", 0), 0u) << out;
	EXPECT_TRUE(contains(out, "\nbest: .ncombinations = 1, .combinations = { { 1, 1, 1 } }\nwrote mlr_analysis.html\n")) << out;
	std::string page = read_file(dir.file("mlr_analysis.html"));
	EXPECT_TRUE(contains(page, "<code>Duration = 5 + 0.002 * M*N*K</code>")) << page.substr(0, 2000);
	EXPECT_TRUE(contains(page, "<svg ")) << "the picture of the best fit";
	EXPECT_EQ(run_tool(dir, "starpu_mlr_analysis", "-o page.html mlr_init.out", &out), 0) << out;
	EXPECT_TRUE(file_exists(dir.file("page.html")));
}

TEST_F(Tools, MlrAnalysisNamesWhatIsWrongWithTheSamples)
{
	if (!built("starpu_mlr_analysis"))
		return;
	std::string out;
	ASSERT_TRUE(dir.write("bad.out", "Duration, M\n1.0, 2.0\n2.0, x\n"));
	EXPECT_EQ(run_tool(dir, "starpu_mlr_analysis", "bad.out", &out), 1) << out;
	EXPECT_EQ(out, "starpu_mlr_analysis: error: bad.out:3: 'x' is not a number\n");
	ASSERT_TRUE(dir.write("tasks.out", "JobId: 1\n"));
	EXPECT_EQ(run_tool(dir, "starpu_mlr_analysis", "tasks.out", &out), 1) << out;
	EXPECT_TRUE(contains(out, "tasks.out:1: expected the header 'Duration, <parameter>, ...'")) << out;
	EXPECT_EQ(run_tool(dir, "starpu_mlr_analysis", "none.out", &out), 1) << out;
	EXPECT_TRUE(contains(out, "cannot read 'none.out'")) << out;
	EXPECT_FALSE(file_exists(dir.file("mlr_analysis.html"))) << "no page from bad samples";
}

// ------------------------------------------------ starpu_mpi_comm_matrix.py

TEST_F(Tools, CommMatrixOfStarpuMpiStats)
{
	if (!built("starpu_mpi_comm_matrix.py"))
		return;
	// What three ranks print with STARPU_MPI_STATS=1 (mpi/stats.c's lines), among the program's own output.
	ASSERT_TRUE(dir.write("output_execution", "result ok\n"
						  "\n[starpu_comm_stats][1] TOTAL:\t456.000000 B\t0.000435 MB\t 0.000188 B/s\t 0.000000 MB/s\n"
						  "[starpu_comm_stats][1:0]\t456.000000 B\t0.000435 MB\t 0.000188 B/s\t 0.000000 MB/s\n"
						  "\n[starpu_comm_stats][0] TOTAL:\t3145728.000000 B\t3.000000 MB\t 1500.000000 B/s\t 1.500000 MB/s\n"
						  "[starpu_comm_stats][0:1]\t2097152.000000 B\t2.000000 MB\t 1000.000000 B/s\t 1.000000 MB/s\n"
						  "[starpu_comm_stats][0:2]\t1048576.000000 B\t1.000000 MB\t 500.000000 B/s\t 0.500000 MB/s\n"
						  "\n[starpu_comm_stats][2] TOTAL:\t0.000000 B\t0.000000 MB\t 0.000000 B/s\t 0.000000 MB/s\n"));
	std::string out;
	ASSERT_EQ(run_tool(dir, "starpu_mpi_comm_matrix.py", "-png output_execution", &out), 0) << out;
	EXPECT_EQ(out.substr(0, out.find("wrote")), "MB sent (rows: sender, columns: receiver)\n"
						     "from\\to\t0\t1\t2\n"
						     "0\t0.000000\t2.000000\t1.000000\n"
						     "1\t0.000435\t0.000000\t0.000000\n"
						     "2\t0.000000\t0.000000\t0.000000\n"
						     "bandwidth in MB/s (rows: sender, columns: receiver)\n"
						     "from\\to\t0\t1\t2\n"
						     "0\t0.000000\t1.000000\t0.500000\n"
						     "1\t0.000000\t0.000000\t0.000000\n"
						     "2\t0.000000\t0.000000\t0.000000\n");
	if (have_program("gnuplot")) {
		EXPECT_TRUE(contains(out, "wrote output_execution_bytes.png\nwrote output_execution_bandwidth.png\n")) << out;
		EXPECT_EQ(read_file(dir.file("output_execution_bytes.png")).compare(0, 4, "\x89PNG"), 0);
	}
	ASSERT_TRUE(dir.write("plain", "no statistics here\n"));
	EXPECT_EQ(run_tool(dir, "starpu_mpi_comm_matrix.py", "plain", &out), 1) << out;
	EXPECT_EQ(out, "starpu_mpi_comm_matrix.py: error: 'plain' holds no '[starpu_comm_stats][src:dst]' line: run the program with "
		       "STARPU_MPI_STATS=1 and give what it printed on its standard error\n");
}

// --------------------------------------------- starpu_send_recv_data_use.py

TEST_F(Tools, SendRecvDataUseTimesTheWaitBeforeATaskUsesTheData)
{
	if (!built("starpu_send_recv_data_use.py"))
		return;
	// Two messages: 0 -> 1 (sent at 1 ms from handle aa0, received at 1.5 ms into bb0), 1 -> 0 (bb0 at 2 ms into cc0 at 2.25 ms).
	ASSERT_TRUE(dir.write("comms.rec", "Src: 0\nDst: 1\nTag: 5\nSendTime: 1.000000000\nRecvTime: 1.500000000\nSendHandle: 0xaa0\n"
					   "RecvHandle: 0xbb0\nSize: 1024\nPriority: 0\nType: PointToPoint\n\n"
					   "Src: 1\nDst: 0\nTag: 6\nSendTime: 2.000000000\nRecvTime: 2.250000000\nSendHandle: 0xbb0\n"
					   "RecvHandle: 0xcc0\nSize: 1024\nPriority: 0\nType: PointToPoint\n\n"));
	// The first task of the rank after the message that uses the handle: 1.75 (not 1.2, before), 3.25, 4, 2.5.
	auto task = [](const char *name, int rank, int worker, double start, const char *handles) {
		return std::string("Name: ") + name + "\nWorkerId: " + std::to_string(worker) + "\nStartTime: " + std::to_string(start) +
		       "\nEndTime: " + std::to_string(start + 0.1) + "\nHandles: " + handles + "\nMPIRank: " + std::to_string(rank) + "\n\n";
	};
	ASSERT_TRUE(dir.write("tasks.rec", task("early", 1, 0, 1.2, "bb0") + task("use_recv", 1, 1, 1.75, "dd0 bb0") +
						   task("use_send", 0, 0, 4.0, "aa0") + task("use_cc", 0, 1, 3.25, "cc0") +
						   task("later_bb", 1, 0, 2.5, "bb0")));
	std::string out;
	ASSERT_EQ(run_tool(dir, "starpu_send_recv_data_use.py", ".", &out), 0) << out;
	std::string wrote_recv = have_program("gnuplot") ? "wrote ./recv_use.png\n" : "";
	std::string wrote_send = have_program("gnuplot") ? "wrote ./send_use.png\n" : "";
	EXPECT_EQ(out, "Elapsed time between recv and use (ms): 2 messages, wait min 0.250 ms, median 0.625 ms, mean 0.625 ms, max 1.000 ms\n"
		       "  worker 0-1: 1, mean 1.000 ms\n"
		       "  worker 1-1: 1, mean 0.250 ms\n" +
			       wrote_recv +
			       "Elapsed time between send and use (ms): 2 messages, wait min 0.500 ms, median 1.750 ms, mean 1.750 ms, max 3.000 ms\n"
			       "  worker 0-0: 1, mean 3.000 ms\n"
			       "  worker 1-0: 1, mean 0.500 ms\n" +
			       wrote_send);
	if (have_program("gnuplot"))
		EXPECT_EQ(read_file(dir.file("recv_use.png")).compare(0, 4, "\x89PNG"), 0);

	// A single archive converted: comms.rec is empty, and that is said.
	ASSERT_TRUE(dir.write("comms.rec", ""));
	EXPECT_EQ(run_tool(dir, "starpu_send_recv_data_use.py", ".", &out), 1) << out;
	EXPECT_TRUE(contains(out, "'./comms.rec' holds no message: it is written when the traces of the ranks of a StarPU-MPI run are "
				  "converted together")) << out;
}

// ------------------------------------------------------------ all of them

// Each tool's --help lists StarPU 1.4's options of that tool (its manual page is made from it).
TEST_F(Tools, EachHelpListsStarPUsOptions)
{
	const std::vector<std::pair<std::string, std::vector<std::string>>> tools = {
		{ "starpu_machine_display", { "-h, --help", "-v, --version", "-i, --info", "-f, --force", "-w, --worker", "-c, --count", "-n, --notopology" } },
		{ "starpu_calibrate_bus", { "-h, --help", "-v, --version" } },
		{ "starpu_sched_display", { "-h, --help", "-v, --version" } },
		{ "starpu_config", { "-h, --help", "-v, --version", "\t-d ", "\t-u " } },
		{ "starpu_env", { "-h, --help", "-v, --version", "-d directory" } },
		{ "starpu_mlr_analysis", { "-h, --help", "-v, --version" } },
		{ "starpu_mpi_comm_matrix.py", { "-h, --help", "-v, --version", "-png" } },
		{ "starpu_send_recv_data_use.py", { "-h, --help", "-v, --version", "<folder containing comms.rec and tasks.rec files>" } },
	};
	for (const auto &t : tools) {
		if (!built(t.first))
			continue;
		std::string out;
		EXPECT_EQ(run_tool(dir, t.first, "--help", &out), 0) << t.first << ": " << out;
		for (const std::string &option : t.second)
			EXPECT_TRUE(contains(out, option)) << t.first << " --help lacks " << option << ": " << out;
	}
	if (file_exists(tool("starpu_fxt_stats"))) {
		std::string out;
		EXPECT_EQ(run_tool(dir, "starpu_fxt_stats", "--help", &out), 0) << out;
		for (const char *option : { "-i <input file>", "-o <output file>", "-h, --help", "-v, --version" })
			EXPECT_TRUE(contains(out, option)) << "starpu_fxt_stats --help lacks " << option << ": " << out;
	}
}
