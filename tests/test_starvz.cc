// SPDX-License-Identifier: LGPL-2.1-or-later
// StarVZ (seed 004, section 4.8) on our traces, without R (not in Debian): the shell part of its phase 1
// (inst/tools/fxt2paje.sh, paje_sort.sh and phase1-workflow.sh of schnorr/starvz), its commands and options
// written out here, run on a recorded run. `starvz /path-to-fxt-files` lists the trace files as `ls -1
// prof_file_*` in that folder, converts them with `starpu_fxt_tool $STARPU_FXT_OPTIONS -i F1 -i F2 ... -o
// /dev/stdout | gzip`, sorts the Paje file (its definitions, events 0 to 7, first, then the rest by date),
// reads it with `pj_dump -o -n --user-defined --entity-hierarchy=entities.csv --type-hierarchy=types.csv`,
// data.rec / tasks.rec / papi.rec with rec2csv and dag.dot's edges with grep and sed; `starvz
// --use-paje-trace DIR` starts from paje.trace, tasks.rec, data.rec and dag.dot instead.
#include "helpers.h"

#include <starpu.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace astro_test;

namespace
{

// starpu_fxt_tool of the build tree, "" when it is not built.
std::string built_fxt_tool()
{
	std::string path = env_or("ASTRO_TEST_TRACE_TOOL", "");
	return file_exists(path) ? path : "";
}

void noop(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

// A run traced into dir (STARPU_FXT_PREFIX) as process id (starpu_profiling_set_id), under StarPU's default name
// prof_file_<user>_<id>: a chain of four "step" tasks on one vector of 4096 bytes.
void traced_chain(const TempDir &dir, int id)
{
	ScopedEnv trace("STARPU_FXT_TRACE", "1"), prefix("STARPU_FXT_PREFIX", dir.path()), suffix("STARPU_FXT_SUFFIX", "");
	starpu_profiling_set_id(id);
	{
		Runtime rt(2);
		ASSERT_TRUE(rt.ok());
		static std::vector<char> block(4096);
		static starpu_codelet step = cpu_codelet(noop, 1, "step");
		step.modes[0] = STARPU_RW;
		starpu_data_handle_t h;
		starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)block.data(), block.size(), 1);
		// A chain: each step depends on the one before. Paused while it is submitted: a step that
		// completed before the next was submitted would leave that next one no dependency (no edge).
		starpu_pause();
		for (int i = 0; i < 4; i++) {
			starpu_task *t = starpu_task_create();
			t->cl = &step;
			t->handles[0] = h;
			if (starpu_task_submit(t) != 0) {
				starpu_resume();
				FAIL() << "step " << i << " was refused";
			}
		}
		starpu_resume();
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		starpu_data_unregister(h);
	}
	starpu_profiling_set_id(0);
}

// The fields of a pj_dump CSV row ("a, b, c").
std::vector<std::string> fields_of(const std::string &line)
{
	std::vector<std::string> fields;
	std::istringstream in(line);
	for (std::string f; std::getline(in, f, ',');)
		fields.push_back(f.substr(std::min(f.size(), f.find_first_not_of(' '))));
	return fields;
}

class StarVZ : public ::testing::Test
{
protected:
	void SetUp() override
	{
		if (built_fxt_tool().empty())
			GTEST_SKIP() << "starpu_fxt_tool is not built (OTF2 missing: install libotf2-trace-dev)";
		if (!have_program("pj_dump") || !have_program("rec2csv"))
			GTEST_SKIP() << "pj_dump (pajeng) or rec2csv (recutils) is not installed: StarVZ's readers are missing";
	}
	// The text of dir's gzipped file name.
	static std::string zcat(const TempDir &dir, const std::string &name)
	{
		std::string out;
		EXPECT_EQ(run_command("zcat " + quote(dir.file(name)), &out), 0) << name;
		return out;
	}
	// The four steps of each process are Worker State states of the CPU workers in csv (pj_dump's rows) with
	// StarPU 1.4's 13 extra fields (Size ... NumaNodes), the JobId the 13th field: their JobIds.
	static std::set<std::string> step_jobs(const std::string &csv)
	{
		std::set<std::string> jobs;
		for (const std::string &line : lines_of(csv)) {
			if (line.rfind("State, ", 0) != 0 || !contains(line, ", Worker State, ") || !contains(line, ", step, "))
				continue;
			std::vector<std::string> f = fields_of(line);
			EXPECT_EQ(f.size(), 21u) << line;
			if (f.size() == 21) {
				EXPECT_EQ(f[8], "4096") << line; // Size
				jobs.insert(f[12]);
			}
		}
		return jobs;
	}
	TempDir dir_;
};

} // namespace

// `starvz /path-to-fxt-files` (phase 1, STARVZ_USE_PAJE_TRACE unset) on the folder two traced processes left, as
// they left it: each trace is prof_file_<user>_<id> (a link to its archive .prof_file_<user>_<id>/traces.otf2),
// which `ls -1 prof_file_*` lists as StarPU's files; starpu_fxt_tool takes StarVZ's options (-i per file, -o
// /dev/stdout, -memory-states of `starvz -m`) and writes every file the later steps read.
TEST_F(StarVZ, PhaseOneOnTheRawTraces)
{
	const std::string user = env_or("USER", "");
	// An older trace of the same name, a folder (the layout before the link): replaced.
	ASSERT_EQ(mkdir(dir_.file("prof_file_" + user + "_0").c_str(), 0755), 0);
	ASSERT_TRUE(dir_.write("prof_file_" + user + "_0/traces.otf2", "older"));
	ASSERT_NO_FATAL_FAILURE(traced_chain(dir_, 0));
	ASSERT_NO_FATAL_FAILURE(traced_chain(dir_, 1));
	std::string listing;
	ASSERT_EQ(run_command("cd " + quote(dir_.path()) + " && ls -1 prof_file_* | sort --version-sort", &listing), 0);
	EXPECT_EQ(listing, "prof_file_" + user + "_0\nprof_file_" + user + "_1\n") << "one file per process, as StarPU's";

	const std::string tools = built_fxt_tool().substr(0, built_fxt_tool().rfind('/'));
	for (const char *fxt_options : { "", "-memory-states" }) {
		SCOPED_TRACE(fxt_options);
		// fxt2paje.sh, then phase1-workflow.sh up to its R script, in the trace folder.
		const std::string def = "'^\\(\\(%\\)\\|\\(\\(0\\|1\\|2\\|3\\|4\\|5\\|6\\|7\\)\\>\\)\\)'";
		std::string script =
			"set -o pipefail\n"
			"export PATH=" + quote(tools) + ":$PATH STARPU_FXT_OPTIONS='" + fxt_options + "'\n"
			"cd " + quote(dir_.path()) + " || exit 10\n"
			"rm -f *.gz *.csv *.rec dag.dot\n"
			"command -v starpu_fxt_tool >/dev/null || exit 11\n"
			"ls -1 prof_file_* > /dev/null || exit 12\n"
			"FXTS=$(ls -1 prof_file_* | sort --version-sort)\n"
			"starpu_fxt_tool $STARPU_FXT_OPTIONS $(echo $FXTS | sed -e \"s/ / -i /g\" -e \"s/^/-i /\") -o /dev/stdout"
			" | gzip -c > paje.trace.gz || exit 13\n"
			"{ LC_ALL=C zgrep -e " + def + " paje.trace.gz; LC_ALL=C zgrep -e " + def +
			" -v paje.trace.gz | sort -S 50% --parallel=4 -T . -s -V --key=2,2; } | sed 's/\"\"/\"x\"/g' | gzip -c > paje.sorted.trace.gz"
			" || exit 14\n"
			"if [ -f data.rec ] && [ -s data.rec ]; then rec2csv -S Handle data.rec | sed 's/\"//g' | gzip -c > rec.data_handles.csv.gz"
			" || exit 15; fi\n"
			"rec2csv tasks.rec | sed 's/\"//g' | gzip -c > rec.tasks.csv.gz || exit 16\n"
			"if [ -f papi.rec ] && [ -s papi.rec ]; then rec2csv papi.rec | sed 's/\"//g' | gzip -c > rec.papi.csv.gz || exit 17; fi\n"
			"zcat paje.sorted.trace.gz | pj_dump -o -n --user-defined --entity-hierarchy=entities.csv --type-hierarchy=types.csv"
			" | gzip -c > paje.csv.gz || exit 18\n"
			"zgrep -a -e 'Worker State' paje.csv.gz | sed -e 's/\\(State\\)\\(,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*$\\)/\\1\\2,,,,,,,,,,,/g'"
			" | gzip -c > paje.worker_state.csv.gz\n"
			"zgrep -e 'Memory Node State' paje.csv.gz | gzip -c > paje.memory_state.csv.gz\n"
			"zgrep -E '^Variable' paje.csv.gz | gzip -c > paje.variable.csv.gz\n"
			"zgrep -E '^Event' paje.csv.gz | gzip -c > paje.events.csv.gz\n"
			"cat dag.dot | grep \"\\->\" | sed -e \"s/[[:space:]]//g\" -e \"s/\\\"//g\" -e \"s/task_//g\" -e \"s/->/,/\""
			" | sed -e \"s/[[:space:]]//g\" | sort | gzip -c > dag.csv.gz || exit 19\n";
		ASSERT_TRUE(dir_.write("phase1.sh", script));
		std::string out;
		ASSERT_EQ(run_command("bash " + quote(dir_.file("phase1.sh")) + " 2>&1", &out), 0) << out;

		// paje.trace.gz holds the Paje file alone (nothing else on stdout), as starpu_fxt_tool -d writes it.
		std::string paje = zcat(dir_, "paje.trace.gz");
		EXPECT_EQ(paje.rfind("%EventDef PajeDefineContainerType 1\n", 0), 0u) << paje.substr(0, 200);
		EXPECT_FALSE(file_exists(dir_.file("paje.trace"))) << "-o /dev/stdout: no paje.trace";
		std::string listed;
		ASSERT_EQ(run_command("ls -A " + quote(dir_.path()) + " | grep -c '^\\.paje\\|^\\.starpu_fxt_tool' || true", &listed), 0);
		EXPECT_EQ(listed, "0\n") << "no temporary left";
		// Both processes' steps, in the two ranks' prefixes.
		std::string csv = zcat(dir_, "paje.csv.gz");
		std::set<std::string> jobs = step_jobs(csv);
		EXPECT_EQ(jobs.size(), 8u) << csv.substr(0, 3000);
		for (const std::string &job : jobs)
			EXPECT_TRUE(job.rfind("0_", 0) == 0 || job.rfind("1_", 0) == 0) << job;
		EXPECT_EQ(step_jobs(zcat(dir_, "paje.worker_state.csv.gz")), jobs);
		EXPECT_FALSE(lines_of(read_file(dir_.file("entities.csv"))).empty());
		EXPECT_TRUE(contains(read_file(dir_.file("types.csv")), "Worker State")) << read_file(dir_.file("types.csv"));
		EXPECT_TRUE(contains(zcat(dir_, "paje.variable.csv.gz"), "Variable, ")) << "the scheduler's and workers' variables";
		EXPECT_EQ(contains(read_file(dir_.file("types.csv")), "data state owner"), *fxt_options != '\0') << "-memory-states' event types";
		// The .rec files as CSV: each step's JobId in tasks.rec, the handles of data.rec.
		std::string tasks = zcat(dir_, "rec.tasks.csv.gz");
		EXPECT_TRUE(contains(tasks, "Name,Model,JobId")) << tasks.substr(0, 500);
		for (const std::string &job : jobs)
			EXPECT_TRUE(contains(tasks, "step,step," + job + ",")) << job << "\n" << tasks.substr(0, 2000);
		std::string handles = zcat(dir_, "rec.data_handles.csv.gz");
		EXPECT_TRUE(contains(handles, "Handle,HomeNode,MPIRank,Size,")) << handles;
		EXPECT_EQ(lines_of(handles).size(), 3u) << "each process's vector: " << handles;
		// dag.dot's edges: each chain's three, as JobId pairs of one process.
		std::vector<std::string> edges = lines_of(zcat(dir_, "dag.csv.gz"));
		EXPECT_EQ(edges.size(), 6u) << read_file(dir_.file("dag.dot"));
		for (const std::string &e : edges) {
			size_t comma = e.find(',');
			ASSERT_NE(comma, std::string::npos) << e;
			EXPECT_TRUE(jobs.count(e.substr(0, comma)) && jobs.count(e.substr(comma + 1))) << e;
			EXPECT_EQ(e.substr(0, 2), e.substr(comma + 1, 2)) << "within one process: " << e;
		}
	}
}

// `starvz --use-paje-trace DIR` (STARVZ_USE_PAJE_TRACE=1): paje.trace, tasks.rec, data.rec and dag.dot that
// starpu_fxt_tool -d DIR wrote, sorted and read by the same steps.
TEST_F(StarVZ, PhaseOneReadsTheConvertedTrace)
{
	TempDir traces;
	ASSERT_NO_FATAL_FAILURE(traced_chain(traces, 0));
	std::string archive = traces.file("prof_file_" + env_or("USER", "") + "_0"), out;
	ASSERT_EQ(run_command(quote(built_fxt_tool()) + " -memory-states -d " + quote(dir_.path()) + " -i " + quote(archive) + " 2>&1", &out), 0)
		<< out;
	for (const char *f : { "paje.trace", "tasks.rec", "data.rec", "dag.dot" })
		ASSERT_TRUE(file_exists(dir_.file(f))) << f;
	const std::string defs = "'^\\(\\(%\\)\\|\\(\\(0\\|1\\|2\\|3\\|4\\|5\\|6\\|7\\)\\>\\)\\)'";
	std::string steps = "cd " + quote(dir_.path()) + " && { LC_ALL=C grep -e " + defs + " paje.trace; LC_ALL=C grep -v -e " + defs +
			    " paje.trace | sort -s -V --key=2,2; } | sed 's/\"\"/\"x\"/g' > paje.sorted.trace" +
			    " && pj_dump -o -n --user-defined --entity-hierarchy=entities.csv --type-hierarchy=types.csv paje.sorted.trace > paje.csv" +
			    " && rec2csv -S Handle data.rec > data.csv && rec2csv tasks.rec > tasks.csv" +
			    " && grep -- '->' dag.dot | sed -e 's/[[:space:]]//g' -e 's/\"//g' -e 's/task_//g' -e 's/->/,/' > dag.csv";
	out.clear();
	ASSERT_EQ(run_command(steps + " 2>&1", &out), 0) << out;
	std::set<std::string> jobs = step_jobs(read_file(dir_.file("paje.csv")));
	EXPECT_EQ(jobs.size(), 4u) << read_file(dir_.file("paje.csv"));
	std::string tasks = read_file(dir_.file("tasks.csv"));
	EXPECT_TRUE(contains(tasks, "\"Name\",\"Model\",\"JobId\"")) << tasks;
	for (const std::string &job : jobs)
		EXPECT_TRUE(contains(tasks, "\"step\",\"step\",\"" + job + "\"")) << job << "\n" << tasks;
	EXPECT_TRUE(contains(read_file(dir_.file("data.csv")), "\"Handle\",\"HomeNode\",\"Size\"")) << read_file(dir_.file("data.csv"));
	// The chain's three edges, as JobId pairs.
	std::vector<std::string> edges = lines_of(read_file(dir_.file("dag.csv")));
	EXPECT_EQ(edges.size(), 3u) << read_file(dir_.file("dag.dot"));
	for (const std::string &e : edges) {
		size_t comma = e.find(',');
		ASSERT_NE(comma, std::string::npos) << e;
		EXPECT_TRUE(jobs.count(e.substr(0, comma)) && jobs.count(e.substr(comma + 1))) << e;
	}
}
