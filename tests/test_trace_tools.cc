// SPDX-License-Identifier: LGPL-2.1-or-later
// The offline trace tools (tools/traces/ and tools/starpu_tasks_rec_complete),
// run from the build tree on the fixtures of tests/data/traces/: reconstructions
// of StarPU 1.4.12's paje.trace, trace.rec, tasks.rec, data.rec, activity.data,
// distrib.data and number_events.data (see tests/data/traces/README). The
// figures expected are worked out by hand from the fixtures, in the comments.
#include "helpers.h"

#include <starpu.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <vector>

using namespace astro_test;

namespace
{

std::string fixture(const std::string &name)
{
	return env_or("ASTRO_TEST_SRCDIR", ".") + "/data/traces/" + name;
}

std::string tool(const std::string &name)
{
	return env_or("ASTRO_TEST_TOOLS_DIR", "") + "/" + name;
}

// Runs a tool of the build tree in dir (its Python module from the source tree);
// returns its exit status, with its stdout and stderr.
int run_in(const TempDir &dir, const std::string &name, const std::string &args, std::string *out,
	   std::string *err = nullptr, const std::string &env = "")
{
	std::string errfile = dir.file(".stderr");
	std::string cmd = "cd " + quote(dir.path()) + " && PYTHONPATH=" + quote(env_or("ASTRO_TEST_SRCDIR", ".") + "/../tools") +
			  " " + env + " " + quote(tool(name)) + " " + args + " 2>" + quote(errfile);
	std::string text;
	int status = run_command(cmd, &text);
	if (out)
		*out = text;
	if (err)
		*err = read_file(errfile);
	unlink(errfile.c_str());
	return status;
}

// A picture gnuplot drew: present, not empty, with the magic of its format.
void expect_picture(const std::string &path, const std::string &magic)
{
	std::string data = read_file(path);
	ASSERT_GT(data.size(), 1000u) << path << " is missing or almost empty";
	EXPECT_EQ(data.compare(0, magic.size(), magic), 0) << path << " does not start with " << magic;
}

const std::string kPng = "\x89PNG";

int count_lines(const std::string &s)
{
	int n = 0;
	for (char c : s)
		n += c == '\n';
	return n;
}

class TraceTools : public ::testing::Test
{
protected:
	void SetUp() override
	{
		if (env_or("ASTRO_TEST_TOOLS_DIR", "").empty())
			GTEST_SKIP() << "ASTRO_TEST_TOOLS_DIR is not set: run through make check";
		ASSERT_TRUE(file_exists(tool("starpu_paje_state_stats"))) << "tools not built in " << tool("");
	}
	void copy(const std::string &name, const std::string &as = "")
	{
		ASSERT_TRUE(dir_.write(as.empty() ? name : as, read_file(fixture(name))));
	}
	TempDir dir_;
};

// ------------------------------------------------------------- paje.trace

// Every tool is built under its StarPU name, answers -h with its usage, and a
// call without input is no crash.
TEST_F(TraceTools, EveryToolAnswersHelp)
{
	for (const char *t : { "starpu_workers_activity", "starpu_fxt_data_trace", "starpu_codelet_profile",
			       "starpu_codelet_histo_profile", "starpu_trace_state_stats.py", "starpu_paje_state_stats",
			       "starpu_paje_summary", "starpu_paje_draw_histogram", "starpu_paje_sort",
			       "starpu_fxt_number_events_to_names.py", "starpu_tasks_rec_complete", "astrolabe-trace-report" }) {
		std::string out, err;
		EXPECT_EQ(run_in(dir_, t, "-h", &out, &err), 0) << t << ": " << err;
		EXPECT_TRUE(contains(out, t)) << t << ": the usage names the tool: " << out;
		EXPECT_TRUE(err.empty()) << t << ": " << err;
	}
}


// Fixture timeline (ms): CPU0 In 1-2, B 2-3, Fi 3-3.5, B 3.5-5 (Sc pushed 4-4.5),
// tt_scal 5-7, B 7-7.5, Sl 7.5-10, axpy_named 10-12, B 12-13, D 13-14 (destroyed);
// CPU1 In 1-2, Sl 2-4, tt_scal 4-6, B 6-6.5, Sl 6.5-14; UserThread Su 1.5-2.5,
// WA 3-13.5; MEMMANAGER0 Co 8-9. Tasks are written 10 then 20, unsorted lines.
TEST_F(TraceTools, PajeStateStatsCountsEachStateOnce)
{
	copy("paje.trace");
	std::string out;
	ASSERT_EQ(run_in(dir_, "starpu_paje_state_stats", "paje.trace", &out), 0);
	std::string csv = read_file(dir_.file("starpu_paje_state_stats.csv"));
	EXPECT_TRUE(contains(csv, "\"Value\", \"Events_paje.csv\", \"Duration_paje.csv\"\n")) << csv;
	EXPECT_TRUE(contains(csv, "\"tt_scal\", 2, 4\n")) << csv;          // not 4 events: 10+20 count once
	EXPECT_TRUE(contains(csv, "\"axpy_named\", 1, 2\n")) << csv;
	EXPECT_TRUE(contains(csv, "\"Overhead\", 5, 4.5\n")) << csv;       // 1 + 1.5 + 0.5 + 1 + 0.5
	EXPECT_TRUE(contains(csv, "\"Scheduling\", 1, 0.5\n")) << csv;
	EXPECT_TRUE(contains(csv, "\"Sleeping\", 3, 12\n")) << csv;        // 2.5 + 2 + 7.5 (to the trace end)
	EXPECT_TRUE(contains(csv, "\"Deinitializing\", 1, 1\n")) << csv;   // ended by the container's destruction
	EXPECT_TRUE(contains(csv, "\"Waiting all tasks\", 1, 10.5\n")) << csv;
	EXPECT_TRUE(contains(csv, "\"DriverCopy\", 1, 1\n")) << csv;
	EXPECT_EQ(count_lines(csv), 12) << csv;
	EXPECT_TRUE(out.empty()) << "only -v prints: " << out;

	// -r is relative to the first state selected (Overhead at 2): [6, 12] ms.
	ASSERT_EQ(run_in(dir_, "starpu_paje_state_stats", "-v -r 4:10 -n Overhead,tt_scal paje.trace", &out), 0);
	csv = read_file(dir_.file("starpu_paje_state_stats.csv"));
	EXPECT_TRUE(contains(csv, "\"Overhead\", 2, 1\n")) << csv;
	EXPECT_FALSE(contains(csv, "tt_scal")) << csv;
	EXPECT_TRUE(contains(out, "\"Overhead\"")) << out;
}

// start/stop_profiling marks at 4.8 and 9.5: only that window counts; a second
// trace adds its columns, 0 where a state is absent.
TEST_F(TraceTools, PajeStateStatsProfilingWindowAndTwoTraces)
{
	copy("paje.trace");
	std::string text = read_file(fixture("paje.trace")) + "9\t9.500000000\tprog_event\tp\t\"stop_profiling\"\n" +
			   "9\t4.800000000\tprog_event\tp\t\"start_profiling\"\n";
	ASSERT_TRUE(dir_.write("window.trace", text));
	std::string out;
	ASSERT_EQ(run_in(dir_, "starpu_paje_state_stats", "paje.trace window.trace", &out), 0);
	std::string csv = read_file(dir_.file("starpu_paje_state_stats.csv"));
	EXPECT_TRUE(contains(csv, "\"Events_window.csv\", \"Duration_window.csv\"\n")) << csv;
	EXPECT_TRUE(contains(csv, "\"tt_scal\", 2, 4, 2, 3.2\n")) << csv;        // 2 + (6 - 4.8)
	EXPECT_TRUE(contains(csv, "\"Overhead\", 5, 4.5, 3, 1.2\n")) << csv;     // 0.2 + 0.5 + 0.5
	EXPECT_TRUE(contains(csv, "\"Sleeping\", 3, 12, 2, 5\n")) << csv;        // 2 + 3
	EXPECT_TRUE(contains(csv, "\"Waiting all tasks\", 1, 10.5, 1, 4.7\n")) << csv;
	EXPECT_TRUE(contains(csv, "\"Initializing\", 2, 2, 0, 0\n")) << csv;
	EXPECT_TRUE(contains(csv, "\"Scheduling\", 1, 0.5, 0, 0\n")) << csv;
}

// States of a container out of time order (here: the whole body reversed) are
// replayed sorted, with the same figures.
TEST_F(TraceTools, PajeStateStatsSameFiguresOnAReversedBody)
{
	std::istringstream in(read_file(fixture("paje.trace")));
	std::string line, head, body;
	while (std::getline(in, line)) {
		if (line[0] == '%' || atoi(line.c_str()) <= 7)
			head += line + "\n";
		else
			body = line + "\n" + body;
	}
	ASSERT_TRUE(dir_.write("paje.trace", head + body));
	std::string out;
	ASSERT_EQ(run_in(dir_, "starpu_paje_state_stats", "paje.trace", &out), 0);
	std::string csv = read_file(dir_.file("starpu_paje_state_stats.csv"));
	EXPECT_TRUE(contains(csv, "\"tt_scal\", 2, 4\n")) << csv;
	EXPECT_TRUE(contains(csv, "\"Overhead\", 5, 4.5\n")) << csv;
	EXPECT_TRUE(contains(csv, "\"Sleeping\", 3, 12\n")) << csv;
	EXPECT_EQ(count_lines(csv), 12) << csv;
}

// StarPU's user_user_event put on the program container (a type pj_dump rejects
// there) and a destruction line with an empty field do not stop the tools.
TEST_F(TraceTools, PajeStateStatsToleratesStarPUQuirks)
{
	std::string text = read_file(fixture("paje.trace"));
	size_t at = text.find("2       prog_event");
	ASSERT_NE(at, std::string::npos);
	text.insert(at, "2       user_user_event   UT       \"user event type\"\t\"1.0 1.0 1.0\"\n");
	text += "9\t2.200000000\tuser_user_event\tp\t4242\n8\t13.900000000\tt100\t\tUT\n";
	ASSERT_TRUE(dir_.write("paje.trace", text));
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "starpu_paje_state_stats", "paje.trace", &out, &err), 0) << err;
	std::string csv = read_file(dir_.file("starpu_paje_state_stats.csv"));
	EXPECT_TRUE(contains(csv, "\"tt_scal\", 2, 4\n")) << csv;
	EXPECT_TRUE(contains(csv, "\"Waiting all tasks\", 1, 10.5\n")) << csv;
}

TEST_F(TraceTools, PajeToolsRejectMissingAndForeignFiles)
{
	std::string out, err;
	for (const char *t : { "starpu_paje_state_stats", "starpu_paje_summary", "starpu_paje_draw_histogram", "starpu_paje_sort" }) {
		EXPECT_EQ(run_in(dir_, t, "missing.trace", &out, &err), 1) << t;
		EXPECT_TRUE(contains(err, "missing.trace")) << t << ": " << err;
		EXPECT_EQ(count_lines(err), 1) << t << ": one line: " << err;
	}
	copy("tasks.rec", "notpaje.trace");
	EXPECT_EQ(run_in(dir_, "starpu_paje_state_stats", "notpaje.trace", &out, &err), 1);
	EXPECT_TRUE(contains(err, "notpaje.trace:1:")) << err;
	EXPECT_EQ(count_lines(err), 1) << err;
	ASSERT_TRUE(dir_.write("empty.trace", ""));
	EXPECT_EQ(run_in(dir_, "starpu_paje_state_stats", "empty.trace", &out, &err), 1);
	EXPECT_TRUE(contains(err, "'empty.trace' is empty")) << err;
	EXPECT_EQ(run_in(dir_, "starpu_paje_state_stats", "-r nonsense paje.trace", &out, &err), 2);
	EXPECT_TRUE(contains(err, "bad range")) << err;
}

// starpu_paje_sort makes the file readable by pj_dump, which then agrees with
// our figures (its zero-length twin of each task aside).
TEST_F(TraceTools, PajeSortGivesWhatPjDumpReads)
{
	copy("paje.trace");
	std::string out;
	ASSERT_EQ(run_in(dir_, "starpu_paje_sort", "paje.trace", &out), 0);
	std::string sorted = read_file(dir_.file("paje.trace"));
	EXPECT_EQ(count_lines(sorted), count_lines(read_file(fixture("paje.trace"))));
	// The body after the definitions is in time order.
	std::istringstream in(sorted);
	std::string line;
	double last = -1;
	while (std::getline(in, line)) {
		int id = atoi(line.c_str());
		if (line[0] == '%' || id <= 7)
			continue;
		double t = strtod(line.c_str() + line.find_first_of(" \t"), nullptr);
		EXPECT_GE(t, last) << line;
		last = t;
	}
	ASSERT_EQ(run_in(dir_, "starpu_paje_state_stats", "paje.trace", &out), 0);
	EXPECT_TRUE(contains(read_file(dir_.file("starpu_paje_state_stats.csv")), "\"tt_scal\", 2, 4\n"));
	if (!have_program("pj_dump"))
		GTEST_SKIP() << "pj_dump (pajeng) is not installed: the cross-check with it is skipped";
	std::string dump;
	FILE *p = popen(("pj_dump -n " + quote(dir_.file("paje.trace")) + " 2>&1").c_str(), "r");
	ASSERT_NE(p, nullptr);
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		dump.append(buf, n);
	ASSERT_EQ(pclose(p), 0) << dump;
	int tasks = 0;
	double sum = 0;
	std::istringstream rows(dump);
	while (std::getline(rows, line)) {
		if (line.rfind("State,", 0) == 0 && contains(line, ", tt_scal")) {
			double d = atof(line.c_str() + line.find(", ", line.find(", ", line.find(", ", line.find(", ", 6) + 2) + 2) + 2) + 2);
			if (d > 0) {
				tasks++;
				sum += d;
			}
		}
	}
	EXPECT_EQ(tasks, 2) << dump;
	EXPECT_DOUBLE_EQ(sum, 4.0) << dump;
}

TEST_F(TraceTools, PajeSummaryWritesOneSelfContainedPage)
{
	copy("paje.trace");
	std::string out;
	ASSERT_EQ(run_in(dir_, "starpu_paje_summary", "paje.trace", &out), 0);
	EXPECT_TRUE(contains(out, "summary.html written: 1 traces, 11 states")) << out;
	std::string page = read_file(dir_.file("summary.html"));
	EXPECT_TRUE(contains(page, "<svg")) << "no Gantt chart";
	EXPECT_TRUE(contains(page, "<td>tt_scal</td>\n<td>2</td><td>4.000000</td><td>2.000000</td><td>2.000000</td>")) << page;
	EXPECT_TRUE(contains(page, "<td>Sleeping</td>\n<td>3</td><td>12.000000</td><td>4.000000</td><td>7.500000</td>")) << page;
	EXPECT_TRUE(contains(page, "fill=\"#3366ff\"")) << "axpy_named's colour, given in 0..255, is normalised";
	EXPECT_FALSE(contains(page, "src=") || contains(page, "<link")) << "the page needs no network";

	// A browser reads it whole: 19 state bars in the Gantt chart and 11 share bars.
	std::string dom;
	if (!dump_dom("file://" + dir_.file("summary.html"), &dom))
		GTEST_SKIP() << "chromium is not installed: the page is not checked in a browser";
	int rects = 0;
	for (size_t at = 0; (at = dom.find("<rect", at)) != std::string::npos; at++)
		rects++;
	EXPECT_EQ(rects, 30) << dom.substr(0, 2000);
	EXPECT_TRUE(contains(dom, "<td>Waiting all tasks</td>")) << dom.substr(0, 2000);
}

TEST_F(TraceTools, PajeDrawHistogramDrawsEachState)
{
	if (!have_program("gnuplot"))
		GTEST_SKIP() << "gnuplot is not installed";
	copy("paje.trace");
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "starpu_paje_draw_histogram", "-v -n Overhead,tt_scal,Nothing paje.trace", &out, &err), 0) << err;
	EXPECT_TRUE(contains(out, "Overhead\tpaje.trace\t5\tmean 0.900000\tmin 0.500000\tmax 1.500000\n")) << out;
	EXPECT_TRUE(contains(out, "tt_scal\tpaje.trace\t2\tmean 2.000000\tmin 2.000000\tmax 2.000000\n")) << out;
	EXPECT_TRUE(contains(err, "no state 'Nothing'")) << err;
	expect_picture(dir_.file("starpu_paje_draw_histogram.pdf"), "%PDF");
}

// ------------------------------------------------------------ the report

size_t occurrences(const std::string &text, const std::string &needle)
{
	size_t n = 0;
	for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
		n++;
	return n;
}

// The fixtures' run (3 tasks on CPU0 and CPU1) and a two-task graph: one page
// with the Gantt rows, the task bars, the activity and the codelets, which a
// browser reads whole; the graph is inline SVG when Graphviz is there.
TEST_F(TraceTools, ReportIsOneSelfContainedPage)
{
	copy("paje.trace");
	copy("tasks.rec");
	copy("activity.data");
	ASSERT_TRUE(dir_.write("dag.dot", "digraph G {\n\tcolor=white\n\trankdir=LR;\nsubgraph cluster_0 {\n\tcolor=black;\n"
					  "\t \"task_1\"->\"task_3\"\n"
					  "\t \"task_1\" [ style=filled, label=\"tt_scal\", fillcolor=\"/greens9/7\", fontcolor=\"white\"]\n"
					  "\t \"task_3\" [ style=filled, label=\"axpy_named\", fillcolor=\"/greens9/6\", fontcolor=\"white\"]\n}\n}\n"));
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "astrolabe-trace-report", ".", &out, &err), 0) << err;
	EXPECT_EQ(out, "./report.html written: 3 tasks\n");
	std::string page = read_file(dir_.file("report.html"));
	EXPECT_FALSE(contains(page, "src=") || contains(page, "<link") || contains(page, "<script")) << "the page needs no network";

	std::string dom;
	if (!dump_dom("file://" + dir_.file("report.html"), &dom))
		GTEST_SKIP() << "chromium is not installed: the page is not checked in a browser";
	for (const char *row : { "CPU0", "CPU1", "UserThread100", "MEMMANAGER0" })
		EXPECT_TRUE(contains(dom, std::string(">") + row + "</text>")) << row << " has no Gantt row: " << dom.substr(0, 3000);
	EXPECT_TRUE(dom.find(">CPU0</text>") < dom.find(">CPU1</text>") && dom.find(">CPU1</text>") < dom.find(">MEMMANAGER0</text>"))
		<< "workers come first, in order";
	EXPECT_EQ(occurrences(dom, "<rect class=\"task\""), 3u) << dom.substr(0, 3000);
	EXPECT_EQ(occurrences(dom, "<title>tt_scal: 2.000000 ms"), 2u) << dom.substr(0, 3000);
	EXPECT_TRUE(contains(dom, "<title>axpy_named: 2.000000 ms at 10.000000</title>")) << dom.substr(0, 3000);
	// activity.data: CPU 0 executed 150 of 390 ms, slept 150.
	EXPECT_TRUE(contains(dom, "<tr class=\"worker\"><td>CPU 0</td><td>38.5</td><td>23.1</td><td>38.5</td></tr>")) << dom;
	EXPECT_TRUE(contains(dom, "<tr class=\"worker\"><td>CPU 1</td>")) << dom;
	EXPECT_TRUE(contains(dom, "<tr class=\"codelet\"><td>tt_scal</td><td>2</td><td>4.000000</td><td>2.000000</td><td>2.000000</td><td>0 1</td></tr>"))
		<< dom;
	EXPECT_TRUE(contains(dom, "<tr class=\"codelet\"><td>axpy_named</td><td>1</td>")) << dom;
	if (!have_program("dot")) {
		EXPECT_TRUE(contains(dom, "install graphviz")) << dom;
		GTEST_SKIP() << "dot (graphviz) is not installed: the task graph is not checked";
	}
	EXPECT_EQ(occurrences(dom, "class=\"node\""), 2u) << dom;
	EXPECT_EQ(occurrences(dom, "class=\"edge\""), 1u) << dom;
	EXPECT_TRUE(contains(dom, "<title>task_1</title>") && contains(dom, "<title>task_3</title>")) << dom;
}

// ---------------------------------------------- what the report's pictures say

// Every match of re in text: its groups 1..n.
std::vector<std::vector<std::string>> matches(const std::string &text, const std::string &re)
{
	std::vector<std::vector<std::string>> out;
	std::regex pattern(re);
	for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator(); ++it) {
		std::vector<std::string> groups;
		for (size_t g = 1; g < it->size(); g++)
			groups.push_back((*it)[g].str());
		out.push_back(groups);
	}
	return out;
}

// The legend of the Gantt chart: value -> colour, for the keys of class cls ("task" or "state").
std::map<std::string, std::string> legend(const std::string &dom, const std::string &cls)
{
	std::map<std::string, std::string> out;
	for (auto &m : matches(dom, "<span class=\"key " + cls + "\" data-colour=\"(#[0-9a-f]{6})\"><svg[^>]*><rect[^>]*></rect></svg> ([^<]+)</span>"))
		out[m[1]] = m[0];
	return out;
}

// The colours of the Gantt's bars of each value (from their tooltips).
std::map<std::string, std::set<std::string>> bar_colours(const std::string &dom)
{
	std::map<std::string, std::set<std::string>> out;
	for (auto &m : matches(dom, "<rect(?: class=\"[a-z]+\")? x=\"[0-9.]+\" y=\"[0-9]+\" width=\"[0-9.]+\" height=\"[0-9]+\" "
				    "fill=\"(#[0-9a-f]{6})\"><title>([^<]+): [0-9.]+ ms at"))
		out[m[1]].insert(m[0]);
	return out;
}

// The page's time axes: (data-from, data-to, data-x0, data-x1) of each, in order (the Gantt's, the activity's).
std::vector<std::vector<std::string>> axes(const std::string &dom)
{
	return matches(dom, "<g class=\"axis\" data-from=\"([^\"]+)\" data-to=\"([^\"]+)\" data-x0=\"([^\"]+)\" data-x1=\"([^\"]+)\">");
}

// The tick labels of every axis of the page.
std::vector<std::string> ticks(const std::string &dom)
{
	std::vector<std::string> out;
	for (auto &m : matches(dom, "<text class=\"tick\"[^>]*>([^<]*)</text>"))
		out.push_back(m[0]);
	return out;
}

// The ticks of an axis are round: each "<number> ms", a step of 1, 2 or 5 times a power of ten apart, each a
// multiple of the step.
void expect_round_ticks(const std::vector<std::string> &labels)
{
	ASSERT_GE(labels.size(), 3u);
	std::vector<double> v;
	for (const std::string &l : labels) {
		ASSERT_TRUE(std::regex_match(l, std::regex("-?[0-9]+(\\.[0-9]+)? ms"))) << "tick '" << l << "'";
		v.push_back(std::stod(l));
	}
	double step = v[1] - v[0];
	ASSERT_GT(step, 0) << labels[0] << ", " << labels[1];
	double power = std::pow(10.0, std::floor(std::log10(step) + 1e-9)), mantissa = step / power;
	EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-6 || std::fabs(mantissa - 2) < 1e-6 || std::fabs(mantissa - 5) < 1e-6)
		<< "step " << step;
	for (size_t i = 0; i < v.size(); i++) {
		if (i && v[i] < v[i - 1])
			break; // the next axis of the page
		EXPECT_NEAR(v[i] / step, std::round(v[i] / step), 1e-6) << labels[i] << " is not a multiple of " << step;
		if (i)
			EXPECT_NEAR(v[i] - v[i - 1], step, step * 1e-6) << labels[i - 1] << " then " << labels[i];
	}
}

// The report's Gantt chart: each codelet in a colour of its own, each state in one of its own, none shared; a task
// without a colour takes one of the palette rather than StarPU's green, one with a colour (axpy_named's 0x3366ff in the
// fixture) keeps it; ticks at round times in ms; the activity on the same time axis as the Gantt.
TEST_F(TraceTools, ReportGivesEachCodeletAndStateItsColourAndOneTimeAxis)
{
	copy("paje.trace");
	copy("tasks.rec");
	copy("activity.data");
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "astrolabe-trace-report", ".", &out, &err), 0) << err;
	std::string dom;
	if (!dump_dom("file://" + dir_.file("report.html"), &dom))
		GTEST_SKIP() << "chromium is not installed: the page is not checked in a browser";
	std::map<std::string, std::string> tasks = legend(dom, "task"), states = legend(dom, "state");
	EXPECT_EQ(tasks.size(), 2u) << dom.substr(0, 3000);
	EXPECT_EQ(tasks["axpy_named"], "#3366ff") << "the codelet's own colour";
	EXPECT_NE(tasks["tt_scal"], "#009966") << "not StarPU's green for every task";
	for (const char *s : { "Sleeping", "Waiting all tasks", "Overhead", "Initializing", "Scheduling", "FetchingInput" })
		EXPECT_TRUE(states.count(s)) << s << " has no key: " << dom.substr(0, 3000);
	EXPECT_NE(states["Sleeping"], states["Waiting all tasks"]);
	std::map<std::string, std::string> owner;
	for (auto *keys : { &tasks, &states })
		for (auto &k : *keys) {
			EXPECT_FALSE(owner.count(k.second)) << k.first << " and " << owner[k.second] << " share " << k.second;
			owner[k.second] = k.first;
		}
	// Every bar in its value's colour.
	std::map<std::string, std::set<std::string>> bars = bar_colours(dom);
	EXPECT_EQ(bars.size(), tasks.size() + states.size());
	for (auto &b : bars) {
		std::string key = tasks.count(b.first) ? tasks[b.first] : states[b.first];
		EXPECT_EQ(b.second, std::set<std::string>{ key }) << b.first;
	}

	std::vector<std::vector<std::string>> a = axes(dom);
	ASSERT_EQ(a.size(), 2u) << "the Gantt's axis and the activity's";
	EXPECT_EQ(a[0], a[1]) << "the activity strip spans the Gantt's time axis";
	// The fixture: states from 1 to 14 ms, activity windows from 0 to 400 ms: the axis holds both, from a round value
	// (0) to the last date.
	EXPECT_EQ(a[0][0], "0.0");
	EXPECT_EQ(a[0][1], "400.0");
	expect_round_ticks(ticks(dom));
	EXPECT_TRUE(contains(dom, ">0 ms</text>") && contains(dom, ">50 ms</text>") && contains(dom, ">400 ms</text>"))
		<< dom.substr(0, 3000);
}

// starpu_paje_summary's Gantt charts share the report's colours: each value its own, none shared; round ticks.
TEST_F(TraceTools, PajeSummaryGivesEachValueItsColour)
{
	copy("paje.trace");
	std::string out;
	ASSERT_EQ(run_in(dir_, "starpu_paje_summary", "paje.trace", &out), 0);
	std::string page = read_file(dir_.file("summary.html"));
	std::map<std::string, std::set<std::string>> bars = bar_colours(page);
	EXPECT_EQ(bars.size(), 11u) << page.substr(0, 3000);
	std::map<std::string, std::string> owner;
	for (auto &b : bars) {
		ASSERT_EQ(b.second.size(), 1u) << b.first << " is drawn in several colours";
		const std::string &c = *b.second.begin();
		EXPECT_FALSE(owner.count(c)) << b.first << " and " << owner[c] << " share " << c;
		owner[c] = b.first;
	}
	EXPECT_EQ(*bars["axpy_named"].begin(), "#3366ff");
	expect_round_ticks(ticks(page));
}

void report_noop(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

// starpu_fxt_tool of the build tree, "" when it is not built.
std::string built_fxt_tool()
{
	std::string path = env_or("ASTRO_TEST_TRACE_TOOL", "");
	return file_exists(path) ? path : "";
}

// The trace recorder on while the object lives: the archive of the run is dir/SUFFIX_0.
class Traced
{
public:
	Traced(const TempDir &dir, const char *suffix) : prefix_("STARPU_FXT_PREFIX", dir.path()), suffix_("STARPU_FXT_SUFFIX", suffix) {}

private:
	ScopedEnv trace_{"STARPU_FXT_TRACE", "1"};
	ScopedEnv prefix_, suffix_;
};

// A run traced by the recorder, converted by starpu_fxt_tool, reported: four
// independent "alpha" tasks and an "omega" that waits for them, on two CPU
// workers. Which worker ran what varies; the rows, the bars, the codelets and
// the graph do not.
TEST_F(TraceTools, ReportOfATracedRun)
{
	std::string fxt_tool = built_fxt_tool();
	if (fxt_tool.empty())
		GTEST_SKIP() << "starpu_fxt_tool is not built (OTF2 missing: install libotf2-trace-dev)";
	TempDir traces;
	{
		Traced traced(traces, "report");
		ScopedEnv sched("STARPU_SCHED", "eager");
		Runtime rt(2);
		ASSERT_TRUE(rt.ok());
		static starpu_codelet alpha = cpu_codelet(report_noop, 0, "alpha");
		static starpu_codelet omega = cpu_codelet(report_noop, 0, "omega");
		omega.color = 0x3366ff; // its own colour, which the report keeps (alpha has none: a colour of the palette)
		struct starpu_task *before[4];
		for (auto &t : before) {
			t = starpu_task_create();
			t->cl = &alpha;
		}
		struct starpu_task *last = starpu_task_create();
		last->cl = &omega;
		starpu_task_declare_deps_array(last, 4, before);
		ASSERT_EQ(starpu_task_submit(last), 0);
		for (auto *t : before)
			ASSERT_EQ(starpu_task_submit(t), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}
	std::string archive = traces.file("report_0"), out, err;
	int status = run_command(quote(fxt_tool) + " -d " + quote(dir_.path()) + " -i " + quote(archive) + " 2>&1", &out);
	EXPECT_EQ(system(("rm -rf " + quote(archive)).c_str()), 0);
	ASSERT_EQ(status, 0) << out;
	ASSERT_EQ(run_in(dir_, "astrolabe-trace-report", ".", &out, &err), 0) << err;
	EXPECT_EQ(out, "./report.html written: 5 tasks\n") << err;

	std::string dom;
	if (!dump_dom("file://" + dir_.file("report.html"), &dom))
		GTEST_SKIP() << "chromium is not installed: the page is not checked in a browser";
	EXPECT_TRUE(contains(dom, ">CPU0</text>") && contains(dom, ">CPU1</text>")) << "one Gantt row per worker: " << dom.substr(0, 3000);
	EXPECT_EQ(occurrences(dom, "<rect class=\"task\""), 5u) << dom.substr(0, 3000);
	EXPECT_EQ(occurrences(dom, "<title>alpha: "), 4u) << dom.substr(0, 3000);
	EXPECT_EQ(occurrences(dom, "<title>omega: "), 1u) << dom.substr(0, 3000);
	EXPECT_TRUE(contains(dom, "<tr class=\"codelet\"><td>alpha</td><td>4</td>")) << dom;
	EXPECT_TRUE(contains(dom, "<tr class=\"codelet\"><td>omega</td><td>1</td>")) << dom;
	EXPECT_TRUE(contains(dom, "<tr class=\"worker\"><td>CPU 0</td>") && contains(dom, "<tr class=\"worker\"><td>CPU 1</td>")) << dom;
	std::map<std::string, std::string> tasks = legend(dom, "task"), states = legend(dom, "state");
	EXPECT_EQ(tasks["omega"], "#3366ff") << "the codelet's own colour";
	EXPECT_EQ(tasks["alpha"], "#e69f00") << "the first colour of the palette";
	std::map<std::string, std::set<std::string>> bars = bar_colours(dom);
	EXPECT_EQ(bars["alpha"], std::set<std::string>{ "#e69f00" });
	EXPECT_EQ(bars["omega"], std::set<std::string>{ "#3366ff" });
	std::set<std::string> seen;
	for (auto *keys : { &tasks, &states })
		for (auto &k : *keys)
			EXPECT_TRUE(seen.insert(k.second).second) << k.first << "'s colour " << k.second << " is another's too";
	std::vector<std::vector<std::string>> a = axes(dom);
	ASSERT_EQ(a.size(), 2u) << dom.substr(0, 3000);
	EXPECT_EQ(a[0], a[1]) << "the activity strip spans the Gantt's time axis";
	expect_round_ticks(ticks(dom));
	if (!have_program("dot"))
		GTEST_SKIP() << "dot (graphviz) is not installed: the task graph is not checked";
	EXPECT_EQ(occurrences(dom, "class=\"node\""), 5u) << dom;
	EXPECT_EQ(occurrences(dom, "class=\"edge\""), 4u) << dom;
}

// A FIFO in place of an archive's anchor (traces.otf2) or of one of its event files: starpu_fxt_tool says so in
// one line at once instead of waiting forever for a writer (it runs under timeout, so that a regression fails).
TEST_F(TraceTools, FxtToolRefusesAFifoInAnArchive)
{
	std::string fxt_tool = built_fxt_tool();
	if (fxt_tool.empty())
		GTEST_SKIP() << "starpu_fxt_tool is not built (OTF2 missing: install libotf2-trace-dev)";
	TempDir fake;
	ASSERT_EQ(mkfifo(fake.file("traces.otf2").c_str(), 0644), 0);
	std::string out;
	int status = run_command("timeout 20 " + quote(fxt_tool) + " -d " + quote(dir_.path()) + " -i " + quote(fake.path()) + " 2>&1", &out);
	EXPECT_NE(status, 124) << "starpu_fxt_tool hung on a FIFO anchor";
	EXPECT_EQ(status, 1) << out;
	EXPECT_EQ(occurrences(out, fake.file("traces.otf2") + ": a FIFO, not a regular file"), 1u) << out;
	EXPECT_EQ(count_lines(out), 1) << out;

	TempDir traces;
	{
		Traced traced(traces, "fifo");
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		static starpu_codelet noop = cpu_codelet(report_noop, 0, "noop");
		ASSERT_EQ(submit_detached(&noop), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}
	std::string archive = traces.file("fifo_0"), anchor = trace_anchor(archive), evt;
	ASSERT_FALSE(anchor.empty()) << archive;
	ASSERT_EQ(run_command("ls " + quote(anchor.substr(0, anchor.size() - 5)) + "/*.evt | head -1", &evt), 0);
	evt = evt.substr(0, evt.find('\n'));
	ASSERT_FALSE(evt.empty()) << "no event file in " << archive;
	ASSERT_EQ(unlink(evt.c_str()), 0);
	ASSERT_EQ(mkfifo(evt.c_str(), 0644), 0);
	out.clear();
	status = run_command("timeout 20 " + quote(fxt_tool) + " -d " + quote(dir_.path()) + " -i " + quote(archive) + " 2>&1", &out);
	EXPECT_EQ(system(("rm -rf " + quote(archive)).c_str()), 0);
	EXPECT_NE(status, 124) << "starpu_fxt_tool hung on a FIFO event file";
	EXPECT_EQ(status, 1) << out;
	EXPECT_EQ(occurrences(out, evt + ": a FIFO, not a regular file"), 1u) << out;
	EXPECT_EQ(count_lines(out), 1) << out;
}

// The JobId lines of a tasks.rec: its tasks.
size_t tasks_in(const std::string &rec)
{
	return occurrences(rec, "\nJobId: ") + (rec.compare(0, 7, "JobId: ") == 0);
}

// A truncated archive fails the conversion (status 1) and leaves no output under
// its real name: what was read is kept as NAME.incomplete, the outputs of an
// earlier conversion stay as they were, no temporary is left; converting the
// whole archive then writes every output and removes the .incomplete ones.
TEST_F(TraceTools, FxtToolMarksTheOutputsOfATruncatedTrace)
{
	std::string fxt_tool = built_fxt_tool();
	if (fxt_tool.empty())
		GTEST_SKIP() << "starpu_fxt_tool is not built (OTF2 missing: install libotf2-trace-dev)";
	TempDir traces;
	{
		Traced traced(traces, "cut");
		Runtime rt(2);
		ASSERT_TRUE(rt.ok());
		static starpu_codelet noop = cpu_codelet(report_noop, 0, "noop");
		// In waves that end before the next is submitted: wherever the cut falls in any
		// thread's file, the waves before it are complete (a slow worker, under a
		// sanitizer, otherwise left none complete before half the submissions).
		for (int wave = 0; wave < 20; wave++) {
			for (int i = 0; i < 20; i++)
				ASSERT_EQ(submit_detached(&noop), 0);
			ASSERT_EQ(starpu_task_wait_for_all(), 0);
		}
	}
	std::string archive = traces.file("cut_0"), whole = traces.file("whole"), out;
	std::string anchor = trace_anchor(archive);
	ASSERT_FALSE(anchor.empty()) << archive;
	ASSERT_EQ(run_command("cp -r " + quote(anchor.substr(0, anchor.rfind('/'))) + " " + quote(whole) + " && f=$(ls -S " +
				      quote(anchor.substr(0, anchor.size() - 5)) + "/*.evt | head -1) && truncate -s $(($(stat -c %s \"$f\") / 2)) \"$f\"",
			      &out), 0) << out;
	ASSERT_TRUE(dir_.write("tasks.rec", "earlier\n"));

	int status = run_command(quote(fxt_tool) + " -d " + quote(dir_.path()) + " -i " + quote(archive) + " 2>&1", &out);
	EXPECT_EQ(status, 1) << out;
	EXPECT_TRUE(contains(out, "truncated or corrupt")) << out;
	EXPECT_TRUE(contains(out, "the outputs of what was read are " + dir_.path() + "/*.incomplete")) << out;
	EXPECT_EQ(read_file(dir_.file("tasks.rec")), "earlier\n");
	EXPECT_FALSE(file_exists(dir_.file("paje.trace")));
	size_t partial = tasks_in(read_file(dir_.file("tasks.rec.incomplete")));
	EXPECT_GT(partial, 0u);
	EXPECT_LT(partial, 400u);
	EXPECT_TRUE(file_exists(dir_.file("paje.trace.incomplete")));
	std::string listing;
	ASSERT_EQ(run_command("ls -A " + quote(dir_.path()) + " | grep -v '\\.incomplete$'", &listing), 0);
	EXPECT_EQ(listing, "tasks.rec\n") << "nothing under its real name but the earlier tasks.rec, no temporary";

	status = run_command(quote(fxt_tool) + " -d " + quote(dir_.path()) + " -i " + quote(whole) + " 2>&1", &out);
	EXPECT_EQ(system(("rm -rf " + quote(archive) + " " + quote(whole)).c_str()), 0);
	EXPECT_EQ(status, 0) << out;
	EXPECT_EQ(tasks_in(read_file(dir_.file("tasks.rec"))), 400u);
	EXPECT_TRUE(file_exists(dir_.file("paje.trace")));
	ASSERT_EQ(run_command("ls -A " + quote(dir_.path()), &listing), 0);
	EXPECT_FALSE(contains(listing, ".incomplete")) << listing;
	EXPECT_FALSE(contains(listing, ".starpu_fxt_tool")) << listing;
}

// What is missing is said: no folder, no paje.trace (an error naming it), no
// activity.data or dot (the page is written, with a note).
TEST_F(TraceTools, ReportSaysWhatIsMissing)
{
	std::string out, err;
	EXPECT_EQ(run_in(dir_, "astrolabe-trace-report", "nothere", &out, &err), 1);
	EXPECT_EQ(err, "astrolabe-trace-report: error: 'nothere' is not a folder: give the folder starpu_fxt_tool wrote (its -d)\n");
	EXPECT_EQ(run_in(dir_, "astrolabe-trace-report", ".", &out, &err), 1);
	EXPECT_TRUE(contains(err, "no paje.trace in '.': convert the trace first")) << err;
	EXPECT_EQ(count_lines(err), 1) << err;
	EXPECT_FALSE(file_exists(dir_.file("report.html")));
	EXPECT_EQ(run_in(dir_, "astrolabe-trace-report", "-x", &out, &err), 2);

	copy("paje.trace");
	ASSERT_TRUE(dir_.write("dag.dot", "digraph G {\n}\n"));
	ASSERT_EQ(run_in(dir_, "astrolabe-trace-report", "-o r.html", &out, &err, "DOT=/nonexistent/dot"), 0) << err;
	EXPECT_EQ(out, "r.html written: 0 tasks; missing: tasks.rec, activity.data\n");
	EXPECT_TRUE(contains(err, "Graphviz's dot was not found")) << err;
	std::string page = read_file(dir_.file("r.html"));
	EXPECT_TRUE(contains(page, "install graphviz")) << page;
	EXPECT_EQ(occurrences(page, "<rect class=\"state\""), 19u) << "every state drawn, none a task without tasks.rec";
}

// --------------------------------------------------------------- trace.rec

// Same timeline as paje.trace; categories as StarPU writes them (the Overhead set
// at a codelet's end is "Other"). Worker time 12 + 13 = 25 ms: Runtime 4.5
// (Initializing 2, Overhead 2 with the pushed Scheduling cut out, FetchingInput
// 0.5), Scheduling 0.5, Task 6, Other 14.
TEST_F(TraceTools, TraceStateStatsFiguresTimesAndEfficiencies)
{
	copy("trace.rec");
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "starpu_trace_state_stats.py", "-te trace.rec", &out, &err), 0) << err;
	EXPECT_EQ(out, "\"Name\",\"Count\",\"Type\",\"Duration\"\n"
		       "\"Initializing\",2,\"Runtime\",2.0\n"
		       "\"Submitting task\",1,\"User\",1.0\n"
		       "\"Overhead\",2,\"Runtime\",2.0\n"
		       "\"Sleeping\",3,\"Other\",12.0\n"
		       "\"FetchingInput\",1,\"Runtime\",0.5\n"
		       "\"Waiting all tasks\",1,\"User\",10.5\n"
		       "\"tt_scal\",2,\"Task\",4.0\n"
		       "\"Scheduling\",1,\"Runtime\",0.5\n"
		       "\"Overhead\",3,\"Other\",2.0\n"
		       "\"axpy_named\",1,\"Task\",2.0\n");
	EXPECT_EQ(read_file(dir_.file("times.csv")), "\"Time\",\"Duration\"\n\"Runtime\",4.5\n\"Task\",6.0\n\"Other\",14.0\n\"Scheduling\",0.5\n");
	// es = 6/6.5, er = 6.5/11, ep = 11/25, e = 6/25.
	EXPECT_EQ(read_file(dir_.file("efficiencies.csv")),
		  "\"Efficiency\",\"Value\"\n\"Parallel\",0.24\n\"Task\",1.0\n\"Runtime\",0.590909\n\"Pipeline\",0.44\n\"Scheduling\",0.923077\n");
	EXPECT_TRUE(contains(err, "Task efficiency will be 1.0")) << err;

	// A sequential time of 3 ms halves the task efficiency.
	ASSERT_EQ(run_in(dir_, "starpu_trace_state_stats.py", "-s 3 trace.rec", &out, &err), 0) << err;
	EXPECT_TRUE(contains(read_file(dir_.file("efficiencies.csv")), "\"Parallel\",0.12\n\"Task\",0.5\n"));
}

// Records out of time order (reversed) give the same statistics.
TEST_F(TraceTools, TraceStateStatsSameFiguresOnReversedRecords)
{
	std::string text = read_file(fixture("trace.rec"));
	std::vector<std::string> records;
	size_t at = text.find("\n\n");
	std::string header = text.substr(0, at + 2);
	for (size_t next; at != std::string::npos; at = next) {
		next = text.find("\n\n", at + 2);
		records.push_back(text.substr(at + 2, next == std::string::npos ? std::string::npos : next - at - 2));
	}
	std::string reversed = header;
	for (auto r = records.rbegin(); r != records.rend(); ++r)
		reversed += *r + (r->back() == '\n' ? "\n" : "\n\n");
	ASSERT_TRUE(dir_.write("trace.rec", reversed));
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "starpu_trace_state_stats.py", "trace.rec", &out, &err), 0) << err;
	EXPECT_TRUE(contains(out, "\"tt_scal\",2,\"Task\",4.0\n")) << out;
	EXPECT_TRUE(contains(out, "\"Overhead\",2,\"Runtime\",2.0\n")) << out;
	EXPECT_TRUE(contains(out, "\"Overhead\",3,\"Other\",2.0\n")) << out;
	EXPECT_TRUE(contains(out, "\"Sleeping\",3,\"Other\",12.0\n")) << out;
	EXPECT_TRUE(contains(out, "\"Waiting all tasks\",1,\"User\",10.5\n")) << out;
}

TEST_F(TraceTools, TraceStateStatsProfilingWindow)
{
	std::string text = read_file(fixture("trace.rec")) +
			   "\nE: ProgEvent\nN: start_profiling\nC: Program\nW: -1\nT: 0\nS: 4.800000\n"
			   "\nE: ProgEvent\nN: stop_profiling\nC: Program\nW: -1\nT: 0\nS: 9.500000\n";
	ASSERT_TRUE(dir_.write("trace.rec", text));
	std::string out;
	ASSERT_EQ(run_in(dir_, "starpu_trace_state_stats.py", "trace.rec", &out), 0);
	// Inside [4.8, 9.5]: tt_scal 2 + 1.2 (CPU1's started at 4), Sleeping 2 + 3 (the
	// one of CPU1 from 2 to 4 is out), Initializing wholly out: count 0.
	EXPECT_TRUE(contains(out, "\"tt_scal\",2,\"Task\",3.2\n")) << out;
	EXPECT_TRUE(contains(out, "\"Sleeping\",2,\"Other\",5.0\n")) << out;
	EXPECT_TRUE(contains(out, "\"Initializing\",0,\"Runtime\",0.0\n")) << out;

	// A stop without start: profiling was on from the beginning, up to 4.8.
	ASSERT_TRUE(dir_.write("trace.rec", read_file(fixture("trace.rec")) +
						"\nE: ProgEvent\nN: stop_profiling\nC: Program\nW: -1\nT: 0\nS: 4.800000\n"));
	ASSERT_EQ(run_in(dir_, "starpu_trace_state_stats.py", "trace.rec", &out), 0);
	EXPECT_TRUE(contains(out, "\"tt_scal\",1,\"Task\",0.8\n")) << out;
	EXPECT_TRUE(contains(out, "\"Initializing\",2,\"Runtime\",2.0\n")) << out;
}

TEST_F(TraceTools, TraceStateStatsRejectsBadInput)
{
	std::string out, err;
	EXPECT_EQ(run_in(dir_, "starpu_trace_state_stats.py", "nothere.rec", &out, &err), 1);
	EXPECT_TRUE(contains(err, "nothere.rec")) << err;
	EXPECT_EQ(count_lines(err), 1) << err;
	ASSERT_TRUE(dir_.write("bad.rec", "E: SetState\nN: x\nW: 0\nS: soon\n"));
	EXPECT_EQ(run_in(dir_, "starpu_trace_state_stats.py", "bad.rec", &out, &err), 1);
	EXPECT_TRUE(contains(err, "bad.rec:1: 'S: soon' is not a number")) << err;
	copy("paje.trace", "paje.rec");
	EXPECT_EQ(run_in(dir_, "starpu_trace_state_stats.py", "paje.rec", &out, &err), 1);
	EXPECT_TRUE(contains(err, "paje.rec:")) << err;
	EXPECT_EQ(count_lines(err), 1) << err;
}

// ----------------------------------------------------------- activity.data

// Window from set_profiling 1 (100 ms) to 0 (400 ms); the line at 90 ms is out.
// CPU 0: elapsed 300, executing 30+45+30+45 = 150, sleeping 15+15+30+0 = 60.
// CPU 1: executing 0+15+75+60 = 150, sleeping 75+60 = 135.
TEST_F(TraceTools, WorkersActivityPicturesAndShares)
{
	if (!have_program("gnuplot"))
		GTEST_SKIP() << "gnuplot is not installed";
	copy("activity.data");
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "starpu_workers_activity", "activity.data", &out, &err), 0) << err;
	EXPECT_TRUE(contains(out, "START 0.1 END 0.4\n")) << out;
	EXPECT_TRUE(contains(out, "CPU 0: executing 50.0 %, overhead 30.0 %, sleeping 20.0 %\n")) << out;
	EXPECT_TRUE(contains(out, "CPU 1: executing 50.0 %, overhead 5.0 %, sleeping 45.0 %\n")) << out;
	expect_picture(dir_.file("activity.png"), kPng);
	expect_picture(dir_.file("activity.eps"), "%!PS-Adobe");

	// An explicit window, in ms: the lines at 175 and 250.
	ASSERT_EQ(run_in(dir_, "starpu_workers_activity", "activity.data 175 250", &out, &err), 0) << err;
	EXPECT_TRUE(contains(out, "START 0.175 END 0.25\n")) << out;
	EXPECT_TRUE(contains(out, "CPU 0: executing 50.0 %, overhead 30.0 %, sleeping 20.0 %\n")) << out;
	EXPECT_TRUE(contains(out, "CPU 1: executing 10.0 %, overhead 0.0 %, sleeping 90.0 %\n")) << out;
}

// A trace shorter than two periods: each worker's one line at the archive's
// end (30 ms, its period began at 0). The window is what the lines cover,
// never an error; profiling marks that enclose nothing give way to it.
TEST_F(TraceTools, WorkersActivityOfAShortTrace)
{
	if (!have_program("gnuplot"))
		GTEST_SKIP() << "gnuplot is not installed";
	const std::string lines = "name\t0\tCPU 0\nname\t1\tCPU 1\n0\t30.0\t30.0\t15.0\t6.0\n1\t30.0\t30.0\t3.0\t27.0\n";
	std::string out, err;
	for (const std::string &marks : { std::string(), std::string("set_profiling\t30.0\t1\n") }) {
		ASSERT_TRUE(dir_.write("short.data", lines + marks));
		ASSERT_EQ(run_in(dir_, "starpu_workers_activity", "short.data", &out, &err), 0) << err;
		EXPECT_TRUE(contains(out, "START 0 END 0.03\n")) << out;
		EXPECT_TRUE(contains(out, "CPU 0: executing 50.0 %, overhead 30.0 %, sleeping 20.0 %\n")) << out;
		EXPECT_TRUE(contains(out, "CPU 1: executing 10.0 %, overhead 0.0 %, sleeping 90.0 %\n")) << out;
		expect_picture(dir_.file("activity.png"), kPng);
	}
	// Lines of no length at one date: a millisecond's window ending there.
	ASSERT_TRUE(dir_.write("instant.data", "name\t0\tCPU 0\n0\t5.0\t0\t0\t0\n"));
	ASSERT_EQ(run_in(dir_, "starpu_workers_activity", "instant.data", &out, &err), 0) << err;
	EXPECT_TRUE(contains(out, "START 0.004 END 0.005\n")) << out;
	EXPECT_TRUE(contains(out, "CPU 0: no activity in the window\n")) << out;
	// A window given backwards is the user's mistake: said, with status 2.
	EXPECT_EQ(run_in(dir_, "starpu_workers_activity", "short.data 20 10", &out, &err), 2);
	EXPECT_TRUE(contains(err, "must come after its start")) << err;
}

TEST_F(TraceTools, WorkersActivityErrors)
{
	std::string out, err;
	EXPECT_EQ(run_in(dir_, "starpu_workers_activity", "nothere.data", &out, &err), 1);
	EXPECT_TRUE(contains(err, "nothere.data")) << err;
	EXPECT_EQ(count_lines(err), 1) << err;
	ASSERT_TRUE(dir_.write("bad.data", "name\t0\tCPU 0\n0\t10.0\tten\t0\t0\n"));
	EXPECT_EQ(run_in(dir_, "starpu_workers_activity", "bad.data", &out, &err), 1);
	EXPECT_TRUE(contains(err, "bad.data:2: 'ten' is not a number")) << err;
	// Without gnuplot: a clear failure, not a missing picture.
	copy("activity.data");
	EXPECT_EQ(run_in(dir_, "starpu_workers_activity", "activity.data", &out, &err, "GNUPLOT=/nonexistent/gnuplot"), 1);
	EXPECT_TRUE(contains(err, "gnuplot is needed")) << err;
	EXPECT_FALSE(file_exists(dir_.file("activity.png")));
}

// ----------------------------------------------------------------- tasks.rec

// Executed tasks: job 2 tt_scal on worker 1, 4-6 ms, 16384 bytes; job 1 tt_scal
// on worker 0, 5-7; job 3 axpy_named on 0, 10-12, 16384 + 16384 bytes. The
// acquire and ghost jobs never ran.
TEST_F(TraceTools, FxtDataTraceLengthAgainstSize)
{
	copy("tasks.rec");
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "starpu_fxt_data_trace", "tasks.rec", &out, &err), 0) << err;
	EXPECT_TRUE(contains(out, "3 tasks of 2 codelets")) << out;
	EXPECT_EQ(read_file(dir_.file("codelet_list")), "tt_scal\naxpy_named\n");
	EXPECT_EQ(read_file(dir_.file("tt_scal")), "2.000000 16384 1\n2.000000 16384 0\n");
	EXPECT_EQ(read_file(dir_.file("axpy_named")), "2.000000 32768 0\n");
	if (have_program("gnuplot"))
		expect_picture(dir_.file("data_trace.png"), kPng);
	else
		EXPECT_TRUE(contains(err, "gnuplot not found")) << err;

	// Only the codelets named; sizes from data.rec when tasks.rec has no Sizes.
	std::string text = read_file(fixture("tasks.rec"));
	for (size_t at; (at = text.find("Sizes:")) != std::string::npos;)
		text.erase(at, text.find('\n', at) + 1 - at);
	ASSERT_TRUE(dir_.write("tasks.rec", text));
	copy("data.rec");
	unlink(dir_.file("tt_scal").c_str());
	ASSERT_EQ(run_in(dir_, "starpu_fxt_data_trace", ". axpy_named", &out, &err, "GNUPLOT=/nonexistent"), 0) << err;
	EXPECT_EQ(read_file(dir_.file("codelet_list")), "axpy_named\n");
	EXPECT_EQ(read_file(dir_.file("axpy_named")), "2.000000 32768 0\n");
	EXPECT_FALSE(file_exists(dir_.file("tt_scal")));
}

TEST_F(TraceTools, FxtDataTraceWantsATraceOrTasksRec)
{
	std::string out, err;
	ASSERT_TRUE(dir_.write("prof_file_me_0", std::string("\0\1\2fxt raw", 10)));
	EXPECT_EQ(run_in(dir_, "starpu_fxt_data_trace", "prof_file_me_0", &out, &err), 1);
	EXPECT_TRUE(contains(err, "'prof_file_me_0' is neither a trace archive nor a tasks.rec")) << err;
	EXPECT_TRUE(contains(err, "STARPU_FXT_TRACE=1")) << err;
	EXPECT_EQ(count_lines(err), 1) << err;
	// An archive starpu_fxt_tool cannot read: its complaint, in one line.
	ASSERT_EQ(mkdir(dir_.file("prof_file_bad_0").c_str(), 0755), 0);
	ASSERT_TRUE(dir_.write("prof_file_bad_0/traces.otf2", "not otf2"));
	if (!built_fxt_tool().empty()) {
		EXPECT_EQ(run_in(dir_, "starpu_fxt_data_trace", "prof_file_bad_0", &out, &err), 1);
		EXPECT_TRUE(contains(err, "starpu_fxt_tool could not read 'prof_file_bad_0'")) << err;
		EXPECT_EQ(count_lines(err), 1) << err;
	}
	EXPECT_EQ(run_in(dir_, "starpu_fxt_data_trace", "nothere.rec", &out, &err), 1);
	EXPECT_TRUE(contains(err, "nothere.rec")) << err;
}

// What the seed runs (section 4.4): starpu_fxt_data_trace on the trace the run recorded, converted on
// the way. Three "small" tasks on a 1 KiB vector, two "large" ones on a 64 KiB one.
TEST_F(TraceTools, FxtDataTraceReadsTheRecordedTrace)
{
	if (built_fxt_tool().empty())
		GTEST_SKIP() << "starpu_fxt_tool is not built (OTF2 missing: install libotf2-trace-dev)";
	TempDir traces;
	{
		Traced traced(traces, "prof_file_seed");
		Runtime rt(2);
		ASSERT_TRUE(rt.ok());
		static std::vector<char> small(1024), large(65536);
		static starpu_codelet small_cl = cpu_codelet(report_noop, 1, "small");
		static starpu_codelet large_cl = cpu_codelet(report_noop, 1, "large");
		small_cl.modes[0] = large_cl.modes[0] = STARPU_RW;
		starpu_data_handle_t hs, hl;
		starpu_vector_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)small.data(), small.size(), 1);
		starpu_vector_data_register(&hl, STARPU_MAIN_RAM, (uintptr_t)large.data(), large.size(), 1);
		for (int i = 0; i < 5; i++) {
			starpu_task *t = starpu_task_create();
			t->cl = i < 3 ? &small_cl : &large_cl;
			t->handles[0] = i < 3 ? hs : hl;
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		starpu_data_unregister(hs);
		starpu_data_unregister(hl);
	}
	std::string archive = traces.file("prof_file_seed_0"), out, err;
	ASSERT_EQ(run_in(dir_, "starpu_fxt_data_trace", quote(archive), &out, &err, "GNUPLOT=/nonexistent"), 0) << err;
	EXPECT_TRUE(contains(out, "5 tasks of 2 codelets")) << out;
	std::string list = read_file(dir_.file("codelet_list"));
	EXPECT_TRUE(list == "small\nlarge\n" || list == "large\nsmall\n") << list;
	std::istringstream small_points(read_file(dir_.file("small"))), large_points(read_file(dir_.file("large")));
	std::string line;
	int n = 0;
	while (std::getline(small_points, line)) {
		EXPECT_TRUE(contains(line, " 1024 ")) << line;
		n++;
	}
	EXPECT_EQ(n, 3);
	n = 0;
	while (std::getline(large_points, line)) {
		EXPECT_TRUE(contains(line, " 65536 ")) << line;
		n++;
	}
	EXPECT_EQ(n, 2);
	EXPECT_TRUE(file_exists(dir_.file("data_trace.gp")));
	// The codelets named, from the anchor file: only those.
	unlink(dir_.file("small").c_str());
	ASSERT_EQ(run_in(dir_, "starpu_fxt_data_trace", quote(trace_anchor(archive)) + " large", &out, &err,
			 "GNUPLOT=/nonexistent"), 0) << err;
	EXPECT_EQ(read_file(dir_.file("codelet_list")), "large\n");
	EXPECT_FALSE(file_exists(dir_.file("small")));

	// StarPU's fxt_print (section 4.13) is otf2-print here (doc/observing.md): every event by hand,
	// each task an ENTER and a LEAVE of the region of its name, the times in nanoseconds from the start.
	if (have_program("otf2-print")) {
		out.clear();
		ASSERT_EQ(run_command("otf2-print --timestamps=offset " + quote(trace_anchor(archive)) + " 2>&1", &out), 0) << out;
		std::istringstream events(out);
		int enter_small = 0, leave_large = 0;
		while (std::getline(events, line)) {
			if (line.rfind("ENTER ", 0) == 0 && contains(line, "\"small\""))
				enter_small++;
			if (line.rfind("LEAVE ", 0) == 0 && contains(line, "\"large\""))
				leave_large++;
		}
		EXPECT_EQ(enter_small, 3) << out.substr(0, 4000);
		EXPECT_EQ(leave_large, 2) << out.substr(0, 4000);
		out.clear();
		ASSERT_EQ(run_command("otf2-print -G " + quote(trace_anchor(archive)) + " 2>&1", &out), 0) << out;
		EXPECT_TRUE(contains(out, "1000000000")) << "a clock of nanoseconds: " << out.substr(0, 4000);
	}
	EXPECT_EQ(system(("rm -rf " + quote(archive)).c_str()), 0);
}

// Seed 004 section 4.2: starpu_perfmodel_plot -s SYM -i <trace> plots, beside the model, the length of
// each execution of SYM's tasks the trace recorded (starpu_SYM.data, "Profiling <arch>" points), as
// StarPU's tool does with its FxT traces. One run, traced and calibrating: 4 tasks on 1 KiB, 3 on 64 KiB.
void touch_vector(void *buffers[], void *)
{
	auto *v = (volatile unsigned char *)STARPU_VECTOR_GET_PTR(buffers[0]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	for (unsigned i = 0; i < n; i++)
		v[i] = (unsigned char)(v[i] + 1);
}

TEST_F(TraceTools, PerfmodelPlotAddsTheTracesMeasurements)
{
	if (built_fxt_tool().empty())
		GTEST_SKIP() << "starpu_fxt_tool is not built (OTF2 missing: install libotf2-trace-dev): -i cannot read traces";
	TempDir traces, home;
	ScopedEnv starpu_home("STARPU_HOME", home.path());
	ScopedEnv hostname("STARPU_HOSTNAME", "plothost");
	{
		Traced traced(traces, "prof_file_plot");
		ScopedEnv calibrate("STARPU_CALIBRATE", "1");
		ScopedEnv sched("STARPU_SCHED", "dmda");
		Runtime rt(2);
		ASSERT_TRUE(rt.ok());
		static starpu_perfmodel model = {};
		model.type = STARPU_HISTORY_BASED;
		model.symbol = "plot_traced";
		static starpu_codelet cl = cpu_codelet(touch_vector, 1, "touch");
		static starpu_codelet other = cpu_codelet(touch_vector, 1, "other");
		cl.modes[0] = other.modes[0] = STARPU_RW;
		cl.model = &model;
		static std::vector<char> small(1024), large(65536);
		starpu_data_handle_t hs, hl;
		starpu_vector_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)small.data(), small.size(), 1);
		starpu_vector_data_register(&hl, STARPU_MAIN_RAM, (uintptr_t)large.data(), large.size(), 1);
		for (int i = 0; i < 8; i++) {
			starpu_task *t = starpu_task_create();
			t->cl = i == 7 ? &other : &cl;
			t->handles[0] = i < 4 ? hs : hl;
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		starpu_data_unregister(hs);
		starpu_data_unregister(hl);
	}
	std::string archive = traces.file("prof_file_plot_0"), out, err;
	std::string env = "STARPU_HOME=" + quote(home.path()) + " STARPU_HOSTNAME=plothost";
	ASSERT_EQ(run_in(dir_, "starpu_perfmodel_plot", "-s plot_traced -i " + quote(archive), &out, &err, env), 0) << err;
	// One line per execution of the model's tasks ("other" has no model: none of its), the size the model
	// gives the data, the length in ms; all on cpu0, the CPU workers' architecture.
	std::istringstream lines(read_file(dir_.file("starpu_plot_traced.data")));
	std::string line;
	int n1k = 0, n64k = 0;
	while (std::getline(lines, line)) {
		std::istringstream fields(line);
		std::string arch;
		double size = -1, ms = -1;
		ASSERT_TRUE(fields >> arch >> size >> ms) << line;
		EXPECT_EQ(arch, "cpu0") << line;
		EXPECT_GE(ms, 0.0) << line;
		n1k += size == 1024;
		n64k += size == 65536;
		EXPECT_TRUE(size == 1024 || size == 65536) << line;
	}
	EXPECT_EQ(n1k, 4);
	EXPECT_EQ(n64k, 3);
	std::string gp = read_file(dir_.file("starpu_plot_traced.gp"));
	EXPECT_TRUE(contains(gp, "plot\t\"starpu_plot_traced.data\" index 0 using 2:3 with points title \"Profiling cpu0\",\\\n"
				 "\t\"starpu_plot_traced_avg.data\" using 1:2:3 with errorlines title \"Average cpu0-impl0 (Comb0)\"\n")) << gp;
	// The anchor file and -o; several traces after one -i (the same one twice: each execution twice).
	TempDir plots;
	ASSERT_EQ(run_in(dir_, "starpu_perfmodel_plot", "-s plot_traced -i " + quote(trace_anchor(archive)) + " " +
			 quote(archive) + " -o " + quote(plots.path()), &out, &err, env), 0) << err;
	EXPECT_EQ(count_lines(read_file(plots.file("starpu_plot_traced.data"))), 14);

	// Bad input: each refused with one message naming it.
	EXPECT_NE(run_in(dir_, "starpu_perfmodel_plot", "-s plot_traced -i " + quote(traces.file("missing")), &out, &err, env), 0);
	EXPECT_TRUE(contains(err, "missing")) << err;
	EXPECT_NE(run_in(dir_, "starpu_perfmodel_plot", "-s plot_traced -i", &out, &err, env), 0);
	EXPECT_TRUE(contains(err, "option -i needs a trace")) << err;
	EXPECT_NE(run_in(dir_, "starpu_perfmodel_plot", "-s plot_traced -i -o " + quote(plots.path()), &out, &err, env), 0);
	EXPECT_TRUE(contains(err, "option -i needs a trace")) << err;
	EXPECT_NE(run_in(dir_, "starpu_perfmodel_plot", "-e -s plot_traced -i " + quote(archive), &out, &err, env), 0);
	EXPECT_TRUE(contains(err, "only a time plot")) << err;
	// A model the trace's tasks did not use: a copy of the calibrated one under another symbol.
	std::string models = home.file(".starpu/sampling/codelets/45/");
	std::string calibrated = read_file(models + "plot_traced.plothost");
	ASSERT_FALSE(calibrated.empty()) << "the run saved its model in " << models;
	ASSERT_TRUE(std::ofstream(models + "absent.plothost") << calibrated);
	EXPECT_NE(run_in(dir_, "starpu_perfmodel_plot", "-s absent -i " + quote(archive), &out, &err, env), 0);
	EXPECT_TRUE(contains(err, "no execution of a task of model absent")) << err;

	if (!have_program("gnuplot"))
		GTEST_SKIP() << "gnuplot is not installed: the script is not rendered";
	ASSERT_EQ(run_command("cd " + quote(dir_.path()) + " && gnuplot starpu_plot_traced.gp 2>&1", &out), 0) << out;
	expect_picture(dir_.file("starpu_plot_traced.png"), kPng);
}

// --------------------------------------------------------------- distrib.data

// tt_scal: worker 0 sizes 16384 (1.0, 1.1, 1.2, 1.3 ms) and 65536 (4.0), worker 1
// 16384 (2.0, 2.2); axpy_named: worker 0 (2.5, 2.7), worker 1 (3.0).
TEST_F(TraceTools, CodeletProfileSplitsPerWorker)
{
	copy("distrib.data");
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "starpu_codelet_profile", "distrib.data tt_scal", &out, &err), 0) << err;
	EXPECT_TRUE(contains(out, "worker 0: 5 executions of tt_scal\nworker 1: 2 executions of tt_scal\n")) << out;
	EXPECT_EQ(count_lines(read_file(dir_.file("distrib.data.0"))), 5);
	EXPECT_EQ(read_file(dir_.file("distrib.data.1")), "tt_scal\t1\t16384\t48e988e9\t2.000000000\ntt_scal\t1\t16384\t48e988e9\t2.200000000\n");
	EXPECT_TRUE(file_exists(dir_.file("distrib.data.gp")));
	if (have_program("gnuplot"))
		expect_picture(dir_.file("distrib.data.png"), kPng);

	EXPECT_EQ(run_in(dir_, "starpu_codelet_profile", "distrib.data chol", &out, &err), 1);
	EXPECT_TRUE(contains(err, "no task named 'chol' in 'distrib.data' (it holds: axpy_named, tt_scal)")) << err;
	EXPECT_EQ(run_in(dir_, "starpu_codelet_profile", "nothere.data tt_scal", &out, &err), 1);
	EXPECT_TRUE(contains(err, "nothere.data")) << err;
}

TEST_F(TraceTools, CodeletHistoProfileOneHistogramPerCodeletWorkerFootprint)
{
	copy("distrib.data");
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "starpu_codelet_histo_profile", "distrib.data", &out, &err), 0) << err;
	EXPECT_TRUE(contains(out, "tt_scal worker 0 footprint 48e988e9 size 16384: 4 executions, mean 1.150000 ms, min 1.000000, max 1.300000\n"
				  "tt_scal worker 0 footprint 8d2d8c7f size 65536: 1 executions, mean 4.000000 ms, min 4.000000, max 4.000000\n"
				  "tt_scal worker 1 footprint 48e988e9 size 16384: 2 executions, mean 2.100000 ms, min 2.000000, max 2.200000\n"
				  "axpy_named worker 0 footprint 20594624 size 32768: 2 executions, mean 2.600000 ms, min 2.500000, max 2.700000\n"
				  "axpy_named worker 1 footprint 20594624 size 32768: 1 executions, mean 3.000000 ms, min 3.000000, max 3.000000\n"))
		<< out;
	if (!have_program("gnuplot"))
		GTEST_SKIP() << "gnuplot is not installed: pictures not checked";
	expect_picture(dir_.file("distrib.data.tt_scal.0.48e988e9.16384.pdf"), "%PDF");
	expect_picture(dir_.file("distrib.data.tt_scal.0.48e988e9.16384.png"), kPng);
	expect_picture(dir_.file("distrib.data.axpy_named.1.20594624.32768.png"), kPng);

	ASSERT_TRUE(dir_.write("short.data", "tt_scal\t0\t16384\n"));
	EXPECT_EQ(run_in(dir_, "starpu_codelet_histo_profile", "short.data", &out, &err), 1);
	EXPECT_TRUE(contains(err, "short.data:1: expected 5 fields")) << err;
}

// ------------------------------------------------------- number_events.data

TEST_F(TraceTools, NumberEventsToNames)
{
	copy("number_events.data");
	std::string out, err;
	ASSERT_EQ(run_in(dir_, "starpu_fxt_number_events_to_names.py", "number_events.data", &out, &err), 0) << err;
	EXPECT_EQ(out, "27    _STARPU_FUT_JOB_PUSH\n"
		       "25    _STARPU_FUT_START_CODELET_BODY\n"
		       "25    _STARPU_FUT_END_CODELET_BODY\n"
		       " 3    0x5999\n"
		       " 2    _STARPU_FUT_WORKER_INIT_START\n"
		       " 1    astro_custom_event\n"
		       "83    TOTAL\n");
	ASSERT_TRUE(dir_.write("bad.data", "0x5100\tmany\n"));
	EXPECT_EQ(run_in(dir_, "starpu_fxt_number_events_to_names.py", "bad.data", &out, &err), 1);
	EXPECT_TRUE(contains(err, "bad.data:1:")) << err;
}

// ------------------------------------------------- starpu_tasks_rec_complete

class TasksRecComplete : public TraceTools
{
protected:
	void SetUp() override
	{
		TraceTools::SetUp();
		if (IsSkipped())
			return;
		models_ = dir_.file("models");
		env_.emplace_back(new ScopedEnv("STARPU_PERF_MODEL_DIR", models_));
		env_.emplace_back(new ScopedEnv("STARPU_HOSTNAME", "tracehost"));
		env_.emplace_back(new ScopedEnv("STARPU_CALIBRATE", nullptr));
		env_.emplace_back(new ScopedEnv("STARPU_CALIBRATE_MINIMUM", nullptr));
		env_.emplace_back(new ScopedEnv("STARPU_NCPU", "2"));
	}
	void TearDown() override
	{
		if (!models_.empty()) {
			EXPECT_EQ(system(("rm -rf " + quote(models_)).c_str()), 0);
		}
		env_.clear();
	}
	std::string models_;
	std::vector<std::unique_ptr<ScopedEnv>> env_;
};

void noop(void *[], void *) {}

// A history model tt_scal calibrated here for a vector of 4096 floats: the
// footprint StarPU gives it, 48e988e9, is the one in the fixture.
TEST_F(TasksRecComplete, AddsThePredictionOfEachWorker)
{
	ASSERT_EQ(mkdir(models_.c_str(), 0755), 0);
	ASSERT_EQ(init_with_ncpus(2), 0);
	{
		starpu_perfmodel model{};
		model.type = STARPU_HISTORY_BASED;
		model.symbol = "tt_scal";
		starpu_codelet cl{};
		cl.cpu_funcs[0] = noop;
		cl.nbuffers = 1;
		cl.modes[0] = STARPU_RW;
		cl.model = &model;
		std::vector<float> v(4096);
		starpu_data_handle_t h;
		starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), v.size(), sizeof(float));
		starpu_task *task = starpu_task_create();
		task->cl = &cl;
		task->handles[0] = h;
		task->destroy = 0;
		EXPECT_EQ(starpu_task_data_footprint(task), 0x48e988e9u);
		for (unsigned w = 0; w < starpu_worker_get_count(); w++)
			starpu_perfmodel_update_history_n(&model, task, starpu_worker_get_perf_archtype((int)w, 0), w, 0, 1009.094, 20);
		starpu_save_history_based_model(&model);
		starpu_task_destroy(task);
		starpu_data_unregister(h);
		starpu_perfmodel_deinit(&model);
	}
	starpu_shutdown();

	std::string out, err;
	ASSERT_EQ(run_in(dir_, "starpu_tasks_rec_complete", quote(fixture("tasks.rec")) + " done.rec", &out, &err), 0) << err;
	std::string done = read_file(dir_.file("done.rec"));
	std::string in = read_file(fixture("tasks.rec"));
	const std::string line = "EstimatedTime: 1.009094e+03 1.009094e+03\n";
	// Both tt_scal records end with it, right before their blank line; nothing else changes.
	EXPECT_TRUE(contains(done, "Modes: RW\nSizes: 16384\nNumaNodes: -1\nMPIRank: -1\n" + line + "\n")) << done;
	size_t first = done.find(line);
	ASSERT_NE(first, std::string::npos) << done;
	EXPECT_NE(done.find(line, first + 1), std::string::npos) << done;
	EXPECT_EQ(done.size(), in.size() + 2 * line.size());
	// tt_axpy has no model file here: said once, its record copied as is.
	EXPECT_TRUE(contains(err, "no performance model file for 'tt_axpy'")) << err;
	EXPECT_FALSE(contains(err, "tt_scal")) << err;
	EXPECT_EQ(count_lines(err), 1) << err;

	// A record already completed is left alone; stdin to stdout works.
	ASSERT_EQ(run_in(dir_, "starpu_tasks_rec_complete", "< done.rec", &out, &err), 0) << err;
	EXPECT_EQ(out, done);

	// recutils reads the result.
	if (!have_program("recsel"))
		GTEST_SKIP() << "recsel (recutils) is not installed";
	std::string sel;
	FILE *p = popen(("recsel -e '#EstimatedTime > 0' -p JobId " + quote(dir_.file("done.rec")) + " 2>&1").c_str(), "r");
	ASSERT_NE(p, nullptr);
	char buf[1024];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		sel.append(buf, n);
	EXPECT_EQ(pclose(p), 0) << sel;
	EXPECT_EQ(sel, "JobId: 2\n\nJobId: 1\n") << sel;
}

TEST_F(TasksRecComplete, BadInputIsNamed)
{
	std::string out, err;
	EXPECT_EQ(run_in(dir_, "starpu_tasks_rec_complete", "nothere.rec", &out, &err), 1);
	EXPECT_TRUE(contains(err, "cannot read 'nothere.rec'")) << err;
	EXPECT_EQ(count_lines(err), 1) << err;
	ASSERT_TRUE(dir_.write("bad.rec", "Name: x\nModel: tt_scal\nFootprint: zz\n"));
	EXPECT_EQ(run_in(dir_, "starpu_tasks_rec_complete", "bad.rec", &out, &err), 1);
	EXPECT_TRUE(contains(err, "bad.rec")) << err;
	EXPECT_TRUE(contains(err, "bad Footprint 'zz'")) << err;
	copy("paje.trace");
	EXPECT_EQ(run_in(dir_, "starpu_tasks_rec_complete", "paje.trace", &out, &err), 1);
	EXPECT_TRUE(contains(err, "paje.trace:1: not a recutils")) << err;
}

} // namespace
