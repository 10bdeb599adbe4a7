// SPDX-License-Identifier: LGPL-2.1-or-later
// The trace recorder (STARPU_FXT_TRACE=1) and starpu_fxt_tool, checked with
// the readers people use: otf2-print for the archive, pajeng's pj_dump,
// Graphviz's dot, recutils' recsel and a JSON parser for the conversions.
#include "helpers.h"
#include <astrolabe/instrument.h>
#include <astrolabe/observe.h>
#include <starpu_fxt.h>
#ifdef STARPU_PAPI
#include <sde_lib.h>
#endif
#include <csignal>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace astro_test;

namespace {

struct Output
{
	int status;
	std::string text;
};

// Runs a shell command, stdout and stderr together.
Output run(const std::string &cmd)
{
	Output out{ -1, "" };
	out.status = run_command(cmd + " 2>&1", &out.text);
	return out;
}

size_t count(const std::string &text, const std::string &needle)
{
	size_t n = 0;
	for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
		n++;
	return n;
}

// The events otf2-print lists, in its order: "KIND  LOCATION  DATE  the rest" (other lines left out).
struct Otf2Event
{
	std::string kind;
	unsigned long long location, date;
	std::string line;
};

std::vector<Otf2Event> otf2_events(const std::string &text)
{
	std::vector<Otf2Event> events;
	std::istringstream lines(text);
	for (std::string line; std::getline(lines, line);) {
		std::istringstream fields(line);
		Otf2Event e;
		if (fields >> e.kind >> e.location >> e.date) {
			e.line = line;
			events.push_back(e);
		}
	}
	return events;
}

std::string tool()
{
	return env_or("ASTRO_TRACE_TOOL", "./starpu_fxt_tool");
}

// A folder removed with everything under it (the archive is a tree).
class TraceDir
{
public:
	TraceDir()
	{
		std::string tmpl = env_or("TMPDIR", "/tmp") + "/astro-trace-XXXXXX";
		std::vector<char> buf(tmpl.begin(), tmpl.end());
		buf.push_back('\0');
		if (mkdtemp(buf.data()))
			path_ = buf.data();
		else
			ADD_FAILURE() << "mkdtemp failed";
	}
	~TraceDir()
	{
		if (!path_.empty())
			run("rm -rf '" + path_ + "'");
	}
	const std::string &path() const { return path_; }
	std::string archive() const { return path_ + "/prof_file_" + env_or("USER", "") + "_0"; }

private:
	std::string path_;
};

void noop(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

void user_event_in_task(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
	starpu_fxt_trace_user_event(7);
	astro_instr_state_and_burst_open("inner state", "cache-malloc", 4096);
	astro_instr_state_and_burst_close("cache-malloc");
}

constexpr int kChain = 20;

// chain: kChain "scal" tasks on one vector (implicit dependencies); then
// "first" -> "second" (declared), a tagged task, user events and a callback.
void workload()
{
	static double v[64];
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v, 64, sizeof(double));
	starpu_data_set_name(h, "vec");
	starpu_data_set_coordinates(h, 2, 1, 11);
	starpu_codelet scal = cpu_codelet(noop, 1, "scal");
	scal.modes[0] = STARPU_RW;
	// The event-key dictionary: the burst's key and the name of its value, shown by the converted outputs.
	ASSERT_GE(astro_instr_key_register("cache-malloc", "bytes the cache allocates"), 1);
	ASSERT_EQ(astro_instr_value_register("cache-malloc", 4096, "one page"), 0);
	starpu_fxt_trace_user_event(4242);
	starpu_fxt_trace_user_event_string("phase1-begin");
	astro_instr_state_open("submitting");
	// All submitted before the first runs: a scal whose predecessor had already ended when it was
	// submitted would wait for nothing and record no dependency (a slow submitter under TSan).
	starpu_pause();
	for (int i = 0; i < kChain; i++)
		EXPECT_EQ(starpu_task_insert(&scal, STARPU_RW, h, 0), 0);
	starpu_resume();

	starpu_codelet first = cpu_codelet(user_event_in_task, 0, "first");
	starpu_codelet second = cpu_codelet(noop, 0, "second");
	struct starpu_task *a = starpu_task_create();
	a->cl = &first;
	struct starpu_task *b = starpu_task_create();
	b->cl = &second;
	b->use_tag = 1;
	b->tag_id = 0x11;
	b->callback_func = [](void *) {};
	starpu_task_declare_deps(b, 1, a);
	starpu_iteration_push(3);
	starpu_iteration_push(1);
	ASSERT_EQ(starpu_task_submit(b), 0);
	starpu_iteration_pop();
	ASSERT_EQ(starpu_task_submit(a), 0);
	starpu_iteration_pop();
	astro_instr_state_close();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_tag_declare_deps(0x21, 1, (starpu_tag_t)0x20);
	starpu_tag_notify_from_apps(0x20);
	starpu_tag_notify_from_apps(0x21);
	starpu_data_unregister(h);
}

void traced_run(const std::string &dir, void (*body)() = workload);
void traced_run(const TraceDir &dir, void (*body)() = workload)
{
	traced_run(dir.path(), body);
}

void traced_run(const std::string &dir, void (*body)())
{
	ScopedEnv trace("STARPU_FXT_TRACE", "1");
	ScopedEnv prefix("STARPU_FXT_PREFIX", dir);
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	body();
}

TEST(Trace, ArchiveHoldsOneEnterAndLeavePerTask)
{
	if (!have_program("otf2-print"))
		GTEST_SKIP() << "otf2-print missing (Debian otf2-tools)";
	TraceDir dir;
	traced_run(dir);
	Output o = run("otf2-print '" + trace_anchor(dir.archive()) + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_EQ(count(o.text, "Region: \"scal\""), 2u * kChain) << "one ENTER and one LEAVE per task";
	EXPECT_EQ(count(o.text, "Region: \"first\""), 2u);
	EXPECT_EQ(count(o.text, "Region: \"second\""), 2u);
	EXPECT_TRUE(contains(o.text, "\"dependency\"")) << "dependencies recorded";
	EXPECT_TRUE(contains(o.text, "Value: 4242"));
	// The event-key dictionary in the definitions: the key's description and its value's name.
	o = run("otf2-print -G '" + trace_anchor(dir.archive()) + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_TRUE(contains(o.text, "\"astrolabe:key cache-malloc\"") && contains(o.text, "\"bytes the cache allocates\"")) << o.text;
	EXPECT_TRUE(contains(o.text, "\"astrolabe:value 4096 cache-malloc\"") && contains(o.text, "\"one page\"")) << o.text;
	// No temporary folder is left beside the archive (.prof_file_<user>_0) and the link to it named as StarPU's trace.
	Output ls = run("ls -A '" + dir.path() + "'");
	EXPECT_EQ(ls.text, ".prof_file_" + env_or("USER", "") + "_0\nprof_file_" + env_or("USER", "") + "_0\n");
}

TEST(Trace, SuffixAndProfilingIdNameTheArchive)
{
	TraceDir dir;
	{
		ScopedEnv suffix("STARPU_FXT_SUFFIX", "mytrace");
		starpu_profiling_set_id(3);
		traced_run(dir);
		starpu_profiling_set_id(0);
	}
	// As StarPU's trace file, <suffix>_<id>: a link to the archive's anchor, in the hidden folder .<suffix>_<id>.
	EXPECT_TRUE(file_exists(dir.path() + "/.mytrace_3/traces.otf2"));
	char target[256] = "";
	EXPECT_GT(readlink((dir.path() + "/mytrace_3").c_str(), target, sizeof(target) - 1), 0);
	EXPECT_STREQ(target, ".mytrace_3/traces.otf2");
}

// Each thread keeps STARPU_TRACE_BUFFER_SIZE MiB: more events than that are
// written while the run goes on (OTF2 marks each flush with a BUFFER_FLUSH event).
TEST(Trace, FullBuffersAreFlushedDuringTheRun)
{
	if (!have_program("otf2-print"))
		GTEST_SKIP() << "otf2-print missing (Debian otf2-tools)";
	TraceDir dir;
	{
		ScopedEnv buffer("STARPU_TRACE_BUFFER_SIZE", "2");
		traced_run(dir, [] {
			starpu_codelet cl = cpu_codelet(noop, 0, "many");
			for (int i = 0; i < 100000; i++)
				ASSERT_EQ(submit_detached(&cl), 0);
			ASSERT_EQ(starpu_task_wait_for_all(), 0);
		});
	}
	Output o = run("otf2-print '" + trace_anchor(dir.archive()) + "' | grep -c -e BUFFER_FLUSH -e 'Region: \"many\"'");
	Output flushes = run("otf2-print '" + trace_anchor(dir.archive()) + "' | grep -c BUFFER_FLUSH");
	EXPECT_GE(atoi(flushes.text.c_str()), 1) << "the application thread's 2 MiB filled up at least once";
	EXPECT_EQ(atoi(o.text.c_str()) - atoi(flushes.text.c_str()), 200000) << "and no task event was lost";
}

// A thread's records, past STARPU_TRACE_BUFFER_SIZE MiB (1, the least), go
// to its spill file while the run goes on, several times; at shutdown they
// are replayed into the archive before what stayed in memory. One worker runs
// tasks of 8 handles each (~400 bytes of records per task: each handle an
// event with two attributes): some 4 MiB, of which two buffers at least are
// in the file when the run ends (the helper may still be writing the last
// full one). Every task is there once, in submission order, with its
// attributes (a priority, an iteration, its handles), and no spill file is
// left.
constexpr int kSpillTasks = 10000;
constexpr int kSpillHandles = 8;
uint64_t spilled_bytes; // the worker's spill file's size at the end of the run, before shutdown

// The spill tests' data: kSpillHandles small vectors (unregistered when it goes), and their tasks, each reading all
// of them ("reader").
class ReaderTasks
{
public:
	ReaderTasks()
	{
		cl_ = cpu_codelet(noop, kSpillHandles, "reader");
		for (int k = 0; k < kSpillHandles; k++) {
			cl_.modes[k] = STARPU_R;
			starpu_vector_data_register(&h_[k], STARPU_MAIN_RAM, (uintptr_t)v_[k], 4, sizeof(double));
		}
	}
	~ReaderTasks()
	{
		for (int k = 0; k < kSpillHandles; k++)
			starpu_data_unregister(h_[k]);
	}
	struct starpu_task *task()
	{
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl_;
		for (int k = 0; k < kSpillHandles; k++)
			t->handles[k] = h_[k];
		return t;
	}

private:
	double v_[kSpillHandles][4] = {};
	starpu_data_handle_t h_[kSpillHandles];
	starpu_codelet cl_;
};

void spilling_run(const std::string &dir)
{
	ScopedEnv trace("STARPU_FXT_TRACE", "1");
	ScopedEnv prefix("STARPU_FXT_PREFIX", dir);
	ScopedEnv buffer("STARPU_TRACE_BUFFER_SIZE", "1");
	ScopedEnv events("STARPU_FXT_EVENTS", "TASK"); // fewer events to read back
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	ReaderTasks readers;
	for (int i = 0; i < kSpillTasks; i++) {
		struct starpu_task *t = readers.task();
		t->priority = i % 7 + 1;
		starpu_iteration_push(i);
		ASSERT_EQ(starpu_task_submit(t), 0);
		starpu_iteration_pop();
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	Output o = run("cat '" + dir + "'/.prof_file_*/raw.0 | wc -c");
	spilled_bytes = strtoull(o.text.c_str(), nullptr, 10);
}

TEST(Trace, SpilledRecordsAreReplayedOnceAndInOrder)
{
	if (!have_program("otf2-print"))
		GTEST_SKIP() << "otf2-print missing (Debian otf2-tools)";
	TraceDir dir;
	spilling_run(dir.path());
	EXPECT_GT(spilled_bytes, 1u << 20) << "the worker's 1 MiB was spilled at least twice";
	EXPECT_EQ(run("find '" + dir.path() + "' -name 'raw.*'").text, "") << "no spill file is left";

	Output o = run("otf2-print '" + trace_anchor(dir.archive()) + "'");
	ASSERT_EQ(o.status, 0) << o.text.substr(0, 2000);
	EXPECT_EQ(count(o.text, "Region: \"reader\""), 2u * kSpillTasks) << "one ENTER and one LEAVE per task";
	EXPECT_EQ(count(o.text, "Parameter: \"handle\""), (size_t)kSpillTasks * kSpillHandles);
	EXPECT_EQ(count(o.text, "(\"Mode\" <"), (size_t)kSpillTasks * kSpillHandles) << "each handle's attributes, also across spills";
	EXPECT_EQ(count(o.text, "(\"Size\" <"), (size_t)kSpillTasks * (kSpillHandles + 1) + kSpillHandles) << "each handle's, each task's, each registration's";
	// Each task's submission once, in order, and the dates never go back.
	long submits = 0, job = 0;
	unsigned long long last = 0;
	bool ordered = true;
	for (const Otf2Event &e : otf2_events(o.text)) {
		const std::string &line = e.line;
		if (e.date < last)
			ordered = false;
		last = e.date;
		size_t at = line.find("Parameter: \"submit\"");
		if (at != std::string::npos) {
			long value = atol(line.c_str() + line.find("Value: ", at) + 7);
			EXPECT_GT(value, job) << line;
			job = value;
			submits++;
		}
	}
	EXPECT_TRUE(ordered) << "events in time order";
	EXPECT_EQ(submits, kSpillTasks);

	Output c = run(tool() + " -no-counter -no-events -d '" + dir.path() + "/out' -i '" + dir.archive() + "'");
	ASSERT_EQ(c.status, 0) << c.text;
	EXPECT_FALSE(contains(c.text, "incomplete")) << c.text;
	std::string tasks = read_file(dir.path() + "/out/tasks.rec");
	EXPECT_EQ(count(tasks, "Parameters: "), (size_t)kSpillTasks);
	std::vector<bool> seen(kSpillTasks);
	size_t records = 0, twice = 0, wrong = 0;
	for (size_t at = tasks.find("Priority: "); at != std::string::npos; at = tasks.find("Priority: ", at + 1)) {
		long priority = atol(tasks.c_str() + at + 10);
		size_t end = std::min(tasks.find("\n\n", at), tasks.size()), it = tasks.find("\nIteration: ", at);
		// The iteration tells the task.
		long iteration = it < end ? atol(tasks.c_str() + it + 12) : -1;
		ASSERT_TRUE(iteration >= 0 && iteration < kSpillTasks) << "a task record without its iteration: " << tasks.substr(at, 200);
		records++;
		twice += seen[iteration];
		seen[iteration] = true;
		if (priority != iteration % 7 + 1 && wrong++ == 0)
			ADD_FAILURE() << "task " << iteration << ": priority " << priority;
	}
	EXPECT_EQ(records, (size_t)kSpillTasks);
	EXPECT_EQ(twice, 0u) << "each task once";
	EXPECT_EQ(wrong, 0u);
}

// A full buffer is written to its spill file by the recorder's helper thread
// while the thread that filled it goes on in its other buffer: a spill file
// that takes nothing more (a pipe nobody reads yet) does not hold the worker
// up. About 1.4 MiB of records on the worker: one full buffer of 1 MiB is
// handed over, and every task ends before anyone reads the pipe (were the
// worker writing it, the run would wait for the reader, which starts after
// the tasks, or after 20 s when they never end).
TEST(Trace, AStalledSpillFileDoesNotHoldTheTaskPathUp)
{
	TraceDir dir;
	std::atomic<bool> tasks_ended{ false }, stop{ false }, gave_up{ false };
	std::string err = stderr_of([&] {
		ScopedEnv trace("STARPU_FXT_TRACE", "1");
		ScopedEnv prefix("STARPU_FXT_PREFIX", dir.path());
		ScopedEnv buffer("STARPU_TRACE_BUFFER_SIZE", "1");
		ScopedEnv events("STARPU_FXT_EVENTS", "TASK");
		auto rt = std::make_unique<Runtime>(1);
		ASSERT_TRUE(rt->ok());
		std::string tmp;
		for (const auto &entry : std::filesystem::directory_iterator(dir.path()))
			if (entry.path().filename().string().find(".tmp") != std::string::npos)
				tmp = entry.path().string();
		ASSERT_NE(tmp, "") << "the archive's temporary folder";
		std::string fifo = tmp + "/raw.0"; // worker 0's spill file
		ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << strerror(errno);
		int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
		ASSERT_GE(fd, 0) << strerror(errno);
		std::thread reader([&] {
			auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
			char chunk[65536];
			while (!stop) {
				if (!tasks_ended && std::chrono::steady_clock::now() < deadline) {
					std::this_thread::sleep_for(std::chrono::milliseconds(5));
					continue;
				}
				gave_up = gave_up || !tasks_ended;
				if (read(fd, chunk, sizeof(chunk)) <= 0)
					std::this_thread::sleep_for(std::chrono::milliseconds(1));
			}
		});
		{
			ReaderTasks readers;
			for (int i = 0; i < 3500; i++)
				EXPECT_EQ(starpu_task_submit(readers.task()), 0);
			EXPECT_EQ(starpu_task_wait_for_all(), 0);
			tasks_ended = true;
		}
		rt.reset(); // starpu_shutdown() waits for the helper, which the reader now drains
		stop = true;
		reader.join();
		close(fd);
	});
	EXPECT_FALSE(gave_up) << "the tasks waited for the spill file's reader";
	EXPECT_EQ(run("find '" + dir.path() + "' -name 'raw.*'").text, "") << "no spill file is left";
}

TEST(Trace, OffLeavesNoFile)
{
	TraceDir dir;
	{
		ScopedEnv trace("STARPU_FXT_TRACE", nullptr);
		ScopedEnv prefix("STARPU_FXT_PREFIX", dir.path());
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		workload();
	}
	EXPECT_EQ(run("ls -A '" + dir.path() + "'").text, "");
}

TEST(Trace, UnusablePrefixGivesOneMessageAndTheRunGoesOn)
{
	TraceDir dir;
	ASSERT_EQ(run("touch '" + dir.path() + "/file'").status, 0);
	std::string bad = dir.path() + "/file/sub";
	std::string err = stderr_of([&] {
		ScopedEnv trace("STARPU_FXT_TRACE", "1");
		ScopedEnv prefix("STARPU_FXT_PREFIX", bad);
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		workload();
	});
	EXPECT_EQ(count(err, "[astrolabe]"), 1u) << err;
	EXPECT_TRUE(contains(err, "STARPU_FXT_PREFIX=" + bad)) << err;
	EXPECT_TRUE(contains(err, "cannot create the trace directory")) << err;
}

TEST(Trace, EventCategoriesLimitWhatIsRecorded)
{
	if (!have_program("otf2-print"))
		GTEST_SKIP() << "otf2-print missing (Debian otf2-tools)";
	TraceDir dir;
	{
		ScopedEnv events("STARPU_FXT_EVENTS", "USER");
		traced_run(dir);
	}
	Output o = run("otf2-print '" + trace_anchor(dir.archive()) + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_EQ(count(o.text, "Region: \"scal\""), 0u);
	EXPECT_TRUE(contains(o.text, "Value: 4242"));
}

// FetchingInput is a worker state recorded by default (WORKER), as StarPU
// does: the handbook's first Gantt diagnosis reads it. Without WORKER nor
// TASK_VERBOSE it is not; the verbose categories add the rest.
TEST(Trace, VerboseCategoriesAddFetchingAndScheduling)
{
	if (!have_program("otf2-print"))
		GTEST_SKIP() << "otf2-print missing (Debian otf2-tools)";
	TraceDir plain, verbose, task_only;
	traced_run(plain);
	{
		ScopedEnv events("STARPU_FXT_EVENTS", "task|task_verbose, WORKER_VERBOSE");
		traced_run(verbose);
	}
	{
		ScopedEnv events("STARPU_FXT_EVENTS", "TASK|SCHED");
		traced_run(task_only);
	}
	Output p = run("otf2-print '" + trace_anchor(plain.archive()) + "'");
	Output v = run("otf2-print '" + trace_anchor(verbose.archive()) + "'");
	Output t = run("otf2-print '" + trace_anchor(task_only.archive()) + "'");
	ASSERT_EQ(v.status, 0) << v.text;
	EXPECT_EQ(count(p.text, "Region: \"FetchingInput\""), 2u * (kChain + 2)) << "by default: one per task";
	EXPECT_EQ(count(p.text, "Region: \"PushingOutput\""), 0u) << "not by default: it is TASK_VERBOSE's";
	EXPECT_EQ(count(t.text, "Region: \"FetchingInput\""), 0u) << "neither WORKER nor TASK_VERBOSE";
	EXPECT_EQ(count(v.text, "Region: \"FetchingInput\""), 2u * (kChain + 2));
	EXPECT_GT(count(v.text, "Region: \"Scheduling\""), 0u);
	EXPECT_EQ(count(v.text, "Region: \"PushingOutput\""), 2u * kChain) << "the tasks with data";
	EXPECT_EQ(count(v.text, "Region: \"scal\""), 2u * kChain);
	EXPECT_FALSE(contains(v.text, "Value: 4242")) << "USER was not asked for";
}

// The recorder does not take DATA_FETCHED, which the kernel reports just
// before STARTED: FetchingInput ends at the task's start, the same date as
// the task's region begins, also when the tasks themselves (TASK) are not
// recorded.
TEST(Trace, FetchingInputEndsWhereTheTaskStarts)
{
	if (!have_program("otf2-print"))
		GTEST_SKIP() << "otf2-print missing (Debian otf2-tools)";
	TraceDir plain, worker_only;
	traced_run(plain);
	{
		ScopedEnv events("STARPU_FXT_EVENTS", "WORKER");
		traced_run(worker_only);
	}
	Output p = run("otf2-print '" + trace_anchor(plain.archive()) + "'");
	Output w = run("otf2-print '" + trace_anchor(worker_only.archive()) + "'");
	ASSERT_EQ(p.status, 0) << p.text;
	ASSERT_EQ(w.status, 0) << w.text;
	EXPECT_EQ(count(w.text, "Region: \"FetchingInput\""), 2u * (kChain + 2)) << "entered and left once per task";
	EXPECT_EQ(count(w.text, "Region: \"scal\""), 0u) << "TASK was not asked for";
	// In the default trace, each LEAVE of FetchingInput is followed on its location by the ENTER of the task's region,
	// at the same date.
	std::map<unsigned long long, unsigned long long> left; // location -> date of a FetchingInput left, waiting for its task's entry
	unsigned pairs = 0, unpaired = 0;
	for (const Otf2Event &e : otf2_events(p.text)) {
		if (e.kind != "ENTER" && e.kind != "LEAVE")
			continue;
		auto waiting = left.find(e.location);
		if (waiting != left.end()) {
			if (e.kind == "ENTER" && e.date == waiting->second && !contains(e.line, "FetchingInput"))
				pairs++;
			else
				unpaired++;
			left.erase(waiting);
		}
		if (e.kind == "LEAVE" && contains(e.line, "Region: \"FetchingInput\""))
			left[e.location] = e.date;
	}
	EXPECT_EQ(pairs, (unsigned)kChain + 2) << p.text.substr(0, 4000);
	EXPECT_EQ(unpaired, 0u);
}

// A tag dependency held back for its task's submission, then written by
// another task's submission more than 4.29 s later (the most a record's gap
// holds, raw.h): the submission after it is still at its own date.
void late_submission_after_held_tag_deps()
{
	starpu_tag_declare_deps(100, 1, (starpu_tag_t)99);
	std::this_thread::sleep_for(std::chrono::milliseconds(4500));
	starpu_codelet cl = cpu_codelet(noop, 0, "late");
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_tag_notify_from_apps(99);
	starpu_tag_remove(100);
	starpu_tag_remove(99);
}

TEST(Trace, AMomentLongAfterHeldTagDependenciesKeepsItsDate)
{
	if (!have_program("otf2-print"))
		GTEST_SKIP() << "otf2-print missing (Debian otf2-tools)";
	TraceDir dir;
	traced_run(dir, late_submission_after_held_tag_deps);
	Output o = run("otf2-print '" + trace_anchor(dir.archive()) + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	// The application thread's tag dependency (its declaration's date) and the submission that wrote it.
	unsigned long long dep = 0, submit = 0;
	for (const Otf2Event &e : otf2_events(o.text)) {
		if (e.kind != "PARAMETER_UINT64" || e.location != 1000)
			continue;
		if (contains(e.line, "\"tag_dependency\"") && contains(e.line, "Value: 99"))
			dep = e.date;
		else if (contains(e.line, "\"submit\"") && dep && !submit)
			submit = e.date;
	}
	ASSERT_NE(dep, 0u) << o.text.substr(0, 4000);
	ASSERT_NE(submit, 0u) << o.text.substr(0, 4000);
	EXPECT_GE(submit - dep, 4500000000ull) << "the submission lost the high bits of its gap";
	EXPECT_LT(submit - dep, 60000000000ull);
}

// One task that lasts, on two workers: the other worker polls for work and finds none (then sleeps, or is
// still polling at the end: that depends on the machine's load, and is not checked). Its polling is
// recorded as what it is, Idle (StarPU's "I" state, time without work), not as the runtime's Overhead; with
// ASTRO_SPIN_POLLS=0 a worker sleeps at once and there is no Idle.
void one_long_task()
{
	starpu_codelet cl = cpu_codelet([](void **, void *) { usleep(30000); }, 0, "long");
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

TEST(Trace, AWorkerPollingForWorkIsIdle)
{
	if (!have_program("otf2-print") || !have_program("pj_dump"))
		GTEST_SKIP() << "otf2-print or pj_dump missing (Debian otf2-tools, pajeng)";
	TraceDir dir, at_once;
	{
		ScopedEnv spin("ASTRO_SPIN_POLLS", nullptr);
		traced_run(dir, one_long_task);
	}
	{
		ScopedEnv spin("ASTRO_SPIN_POLLS", "0");
		traced_run(at_once, one_long_task);
	}
	Output o = run("otf2-print '" + trace_anchor(dir.archive()) + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	size_t idle = count(o.text, "Region: \"Idle\"");
	EXPECT_GE(idle, 2u) << "the worker without the task polled";
	EXPECT_EQ(idle % 2, 0u) << "each Idle entered is left";
	Output z = run("otf2-print '" + trace_anchor(at_once.archive()) + "'");
	EXPECT_EQ(count(z.text, "Region: \"Idle\""), 0u) << "no polling, no Idle";
	// Converted, it is the worker state Idle of StarPU's Paje types.
	std::string out = dir.path() + "/out";
	ASSERT_EQ(run(tool() + " -d '" + out + "' -i '" + dir.archive() + "'").status, 0);
	Output p = run("pj_dump '" + out + "/paje.trace'");
	ASSERT_EQ(p.status, 0) << p.text.substr(0, 2000);
	EXPECT_TRUE(contains(p.text, "Worker State, ") && contains(p.text, ", Idle\n")) << p.text.substr(0, 3000);
}

TEST(Trace, StoppedProfilingRecordsOnlyTheWindow)
{
	if (!have_program("otf2-print"))
		GTEST_SKIP() << "otf2-print missing (Debian otf2-tools)";
	TraceDir dir;
	starpu_fxt_autostart_profiling(0);
	traced_run(dir, [] {
		starpu_codelet cl = cpu_codelet(noop, 0, "outside");
		ASSERT_EQ(submit_detached(&cl), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		starpu_fxt_start_profiling();
		starpu_codelet in = cpu_codelet(noop, 0, "inside");
		ASSERT_EQ(submit_detached(&in), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		starpu_fxt_stop_profiling();
		ASSERT_EQ(submit_detached(&cl), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	starpu_fxt_autostart_profiling(1);
	Output o = run("otf2-print '" + trace_anchor(dir.archive()) + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_EQ(count(o.text, "Region: \"inside\""), 2u);
	EXPECT_EQ(count(o.text, "Region: \"outside\""), 0u);
	EXPECT_TRUE(contains(o.text, "\"start_profiling\""));
	EXPECT_TRUE(contains(o.text, "\"stop_profiling\""));
}

class Converted : public testing::Test
{
protected:
	void SetUp() override
	{
		traced_run(dir_);
		out_ = dir_.path() + "/out";
		Output o = run(tool() + " -d '" + out_ + "' -i '" + dir_.archive() + "'");
		ASSERT_EQ(o.status, 0) << o.text;
	}
	std::string file(const std::string &name) const { return out_ + "/" + name; }
	TraceDir dir_;
	std::string out_;
};

TEST_F(Converted, PajeIsAcceptedByPjDump)
{
	if (!have_program("pj_dump"))
		GTEST_SKIP() << "pj_dump missing (Debian pajeng)";
	Output o = run("pj_dump '" + file("paje.trace") + "'");
	ASSERT_EQ(o.status, 0) << o.text.substr(0, 2000);
	std::istringstream lines(o.text);
	size_t task_states = 0;
	for (std::string line; std::getline(lines, line);)
		if (line.rfind("State, CPU", 0) == 0 && contains(line, "Worker State") && line.size() > 6 &&
		    line.compare(line.size() - 6, 6, ", scal") == 0)
			task_states++;
	EXPECT_EQ(task_states, 2u * kChain) << "each task: a SetState (10) and an extended one (20)";
	EXPECT_TRUE(contains(o.text, "CPU0"));
	EXPECT_TRUE(contains(o.text, "phase1-begin"));
	EXPECT_TRUE(contains(o.text, "Event, program, user event type, ")) << "user events on the program container";
	// astro_instr_state_open(): on a worker and on the application's thread.
	EXPECT_TRUE(contains(o.text, "Worker State, ") && contains(o.text, ", inner state\n")) << o.text.substr(0, 3000);
	EXPECT_TRUE(contains(o.text, "User Thread State, ") && contains(o.text, ", submitting\n"));
	EXPECT_TRUE(contains(o.text, ", 4242\n"));
	// The burst of astro_instr_state_and_burst_open(): a variable of the program, its value while it lasts, then 0.
	EXPECT_TRUE(contains(o.text, "Variable, program, cache-malloc, ") && contains(o.text, ", 4096.000000\n")) << o.text.substr(0, 4000);
	// Its value's name from the event-key dictionary: an event of the program.
	EXPECT_TRUE(contains(o.text, "Event, program, cache-malloc value, ") && contains(o.text, ", one page\n")) << o.text.substr(0, 4000);
	// The extended state of a scal task: coordinates of the handle it writes (X Y), no iteration.
	EXPECT_TRUE(contains(read_file(file("paje.trace")), "\t1\t11\t-1\t-1\t\"-1\"\n"));
}

TEST_F(Converted, DagRendersWithDot)
{
	if (!have_program("dot"))
		GTEST_SKIP() << "dot missing (Debian graphviz)";
	Output o = run("dot -Tsvg '" + file("dag.dot") + "' -o '" + file("dag.svg") + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	std::string dag = read_file(file("dag.dot"));
	EXPECT_EQ(count(dag, "label=\"scal\""), size_t(kChain));
	EXPECT_EQ(count(dag, "\"tag_11\"->\"task_"), 1u);
	EXPECT_EQ(count(dag, "\"tag_20\"->\"tag_21\"\n"), 1u) << "tag dependency";
}

// The recorder leaves out what the converter can tell from a location's
// previous events (schema.h's shortcuts): a task's JobId after its pop, the
// name and model of the previous submit, the child tag of a dependency
// declared just before its task's submission. Nothing may be lost: names
// change and come back, a task without name follows named ones, tagged
// tasks wait for each other.
TEST(TraceTool, RecorderShortcutsLoseNothing)
{
	TraceDir dir;
	traced_run(dir, [] {
		static starpu_codelet alpha = cpu_codelet(noop, 0, "alpha");
		static starpu_codelet beta = cpu_codelet(noop, 0, "beta");
		static starpu_codelet nameless = cpu_codelet(noop, 0, nullptr);
		starpu_codelet *order[] = { &alpha, &alpha, &beta, &nameless, &alpha, &nameless, &nameless, &beta };
		for (int i = 0; i < 8; i++) {
			struct starpu_task *t = starpu_task_create();
			t->cl = order[i];
			t->use_tag = 1;
			t->tag_id = 0x100 + i;
			if (i)
				starpu_tag_declare_deps(t->tag_id, 1, (starpu_tag_t)(0x100 + i - 1));
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	std::string out = dir.path() + "/out";
	Output o = run(tool() + " -d '" + out + "' -i '" + dir.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	std::string tasks = read_file(out + "/tasks.rec");
	EXPECT_EQ(count(tasks, "\nTag: "), 8u) << "one record per task, no stray job: " << tasks;
	EXPECT_EQ(count(tasks, "StartTime: "), 8u) << tasks;
	EXPECT_EQ(count(tasks, "Name: alpha\n"), 3u) << tasks;
	EXPECT_EQ(count(tasks, "Name: beta\n"), 2u) << tasks;
	EXPECT_EQ(count(tasks, "Model: "), 5u) << "the nameless tasks have no model: " << tasks;
	// In submission order: each record's tag and name.
	std::string expected[] = { "alpha", "alpha", "beta", "", "alpha", "", "", "beta" };
	for (int i = 0; i < 8; i++) {
		char tag[32];
		snprintf(tag, sizeof(tag), "Tag: %x\n", 0x100 + i);
		size_t at = tasks.find(tag);
		ASSERT_NE(at, std::string::npos) << tag;
		size_t begin = tasks.rfind("\n\n", at);
		std::string record = tasks.substr(begin == std::string::npos ? 0 : begin, at - (begin == std::string::npos ? 0 : begin));
		if (expected[i].empty())
			EXPECT_FALSE(contains(record, "Model: ")) << record;
		else
			EXPECT_TRUE(contains(record, "Name: " + expected[i] + "\nModel: " + expected[i] + "\n")) << record;
	}
	std::string dag = read_file(out + "/dag.dot");
	for (int i = 1; i < 8; i++) {
		char edge[64];
		snprintf(edge, sizeof(edge), "\"tag_%x\"->\"tag_%x\"\n", 0x100 + i - 1, 0x100 + i);
		EXPECT_EQ(count(dag, edge), 1u) << edge << dag;
	}
	if (have_program("otf2-print")) {
		Output p = run("otf2-print '" + trace_anchor(dir.archive()) + "'");
		ASSERT_EQ(p.status, 0) << p.text.substr(0, 2000);
		EXPECT_EQ(count(p.text, "Parameter: \"tag_dependency\""), 7u) << p.text.substr(0, 4000);
		EXPECT_EQ(count(p.text, "Parameter: \"task_tag\""), 8u) << "each task's tag, an event after its submit: " << p.text.substr(0, 4000);
	}
}

// The counters sampler (ASTROLABE_SAMPLER=1) reports each value it reads:
// the archive holds them as OTF2 metrics, the converter as Paje variables
// of the program and Perfetto counter tracks. The sampler reads at its
// start and at its stop whatever the load: 20 tasks submitted, the last
// value of the runtime's submission counter is 20.
TEST(TraceCounters, SampledCountersBecomeSeries)
{
	TraceDir dir;
	{
		ScopedEnv on("ASTROLABE_SAMPLER", "1");
		ScopedEnv cmps("APAPI_CMPLIST", "astrolabe");
		ScopedEnv list("APAPI_EVENTLIST", nullptr);
		ScopedEnv ops("APAPI_EVENTOPS", nullptr);
		ScopedEnv intervals("ASTROLABE_SAMPLER_INTERVALS", "astrolabe:2000000");
		traced_run(dir, [] {
			static starpu_codelet cl = cpu_codelet(noop, 0, "counted");
			for (int i = 0; i < 20; i++)
				ASSERT_EQ(submit_detached(&cl), 0);
			ASSERT_EQ(starpu_task_wait_for_all(), 0);
		});
	}
	const std::string name = "astrolabe:::starpu.task.g_total_submitted";
	if (have_program("otf2-print")) {
		Output p = run("otf2-print '" + trace_anchor(dir.archive()) + "'");
		ASSERT_EQ(p.status, 0) << p.text.substr(0, 2000);
		EXPECT_GE(count(p.text, "METRIC "), 2u) << p.text.substr(0, 4000);
		Output d = run("otf2-print -G '" + trace_anchor(dir.archive()) + "'");
		EXPECT_TRUE(contains(d.text, name)) << "a metric member per counter: " << d.text.substr(0, 4000);
		std::istringstream lines(d.text);
		std::string member;
		for (std::string line; std::getline(lines, line);)
			if (line.rfind("METRIC_MEMBER ", 0) == 0 && contains(line, "\"" + name + "\""))
				member = line;
		EXPECT_TRUE(contains(member, "Unit: \"tasks\"")) << "the runtime counter's unit: " << d.text.substr(0, 4000);
	}
	std::string out = dir.path() + "/out";
	Output o = run(tool() + " -number-events -d '" + out + "' -i '" + dir.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_TRUE(contains(read_file(out + "/number_events.data"), "astro_counter_sample")) << read_file(out + "/number_events.data");
	if (have_program("pj_dump")) {
		Output d = run("pj_dump '" + out + "/paje.trace'");
		ASSERT_EQ(d.status, 0) << d.text.substr(0, 2000);
		std::istringstream lines(d.text);
		int values = 0;
		double last = -1;
		for (std::string line; std::getline(lines, line);)
			if (line.rfind("Variable, program, " + name + ", ", 0) == 0) {
				values++;
				last = std::stod(line.substr(line.rfind(',') + 1));
			}
		EXPECT_GE(values, 2) << d.text.substr(0, 4000);
		EXPECT_EQ(last, 20.0) << d.text.substr(0, 4000);
	}
	if (have_program("python3")) {
		Output j = run("python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))[\"traceEvents\"];"
			       "v=[x[\"args\"][sys.argv[2]] for x in e if x.get(\"ph\")==\"C\" and x.get(\"name\")==sys.argv[2]];"
			       "print(len(v)>=2, v[-1])' '" + out + "/trace.json' '" + name + "'");
		EXPECT_EQ(j.text, "True 20\n") << "a counter track: " << j.text;
	}
}

TEST_F(Converted, RecFilesAreReadByRecsel)
{
	if (!have_program("recsel"))
		GTEST_SKIP() << "recsel missing (Debian recutils)";
	for (const char *f : { "tasks.rec", "trace.rec", "data.rec", "sched_tasks.rec" }) {
		Output o = run(std::string("recsel -c '") + file(f) + "'");
		EXPECT_EQ(o.status, 0) << f << ": " << o.text;
		EXPECT_GT(atoi(o.text.c_str()), 0) << f;
	}
	Output tasks = run("recsel -c -e 'Name = \"scal\"' '" + file("tasks.rec") + "'");
	EXPECT_EQ(atoi(tasks.text.c_str()), kChain);
	// Every scal after the first waits for the one before (implicit data dependency).
	Output deps = run("recsel -c -e 'Name = \"scal\" && DependsOn' '" + file("tasks.rec") + "'");
	EXPECT_EQ(atoi(deps.text.c_str()), kChain - 1);
	Output second = run("recsel -p DependsOn,Tag -e 'Name = \"second\"' '" + file("tasks.rec") + "'");
	EXPECT_TRUE(contains(second.text, "Tag: 11")) << second.text;
	Output iterations = run("recsel -p Name,Iteration -e '#Iteration' '" + file("tasks.rec") + "'");
	// Records come as tasks end: first, then second.
	EXPECT_TRUE(contains(iterations.text, "Name: second\nIteration: 3 1\n")) << "starpu_iteration_push/pop: " << iterations.text;
	EXPECT_TRUE(contains(iterations.text, "Name: first\nIteration: 3\n")) << iterations.text;
	EXPECT_EQ(count(iterations.text, "Iteration: "), 2u) << iterations.text;
	Output data = run("recsel -e 'Name = \"vec\"' '" + file("data.rec") + "'");
	EXPECT_TRUE(contains(data.text, "Coordinates: 1 11")) << data.text;
	EXPECT_TRUE(contains(data.text, "Description: V64x8")) << data.text;
	EXPECT_TRUE(contains(data.text, "Size: 512")) << data.text;
	Output pushes = run("recsel -c -e 'Type = \"push\"' '" + file("sched_tasks.rec") + "'");
	EXPECT_EQ(atoi(pushes.text.c_str()), kChain + 2);
	Output events = run("recsel -p N -e 'E = \"ProgEvent\"' '" + file("trace.rec") + "'");
	EXPECT_TRUE(contains(events.text, "N: phase1-begin")) << events.text;
}

TEST_F(Converted, PerfettoJsonLoads)
{
	if (!have_program("python3"))
		GTEST_SKIP() << "python3 missing";
	Output o = run("python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d[\"traceEvents\"];"
		       "print(sum(1 for x in e if x.get(\"ph\")==\"X\" and x.get(\"name\")==\"scal\"),"
		       "sum(1 for x in e if x.get(\"ph\")==\"s\"), sum(1 for x in e if x.get(\"ph\")==\"C\")>0,"
		       "[x[\"args\"][\"value\"] for x in e if x.get(\"name\")==\"cache-malloc\"],"
		       "[(x[\"ph\"],x[\"args\"][\"key\"],x[\"args\"][\"value\"]) for x in e if x.get(\"name\")==\"one page\"])' '" +
		       file("trace.json") + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	int slices = 0, flows = 0;
	char counters[8] = "";
	ASSERT_EQ(sscanf(o.text.c_str(), "%d %d %7s", &slices, &flows, counters), 3) << o.text;
	EXPECT_EQ(slices, kChain);
	// One flow per task dependency dag.dot draws: first -> second always; a scal task that ended before the next one
	// was submitted (a loaded machine: the worker is faster than the submitting thread) leaves none to the next.
	size_t edges = 0;
	for (const std::string &line : lines_of(read_file(file("dag.dot"))))
		if (line.rfind("\t \"task_", 0) == 0 && contains(line, "\"->\"task_") && !contains(line, "\"->\"tag_"))
			edges++;
	EXPECT_GE(edges, 1u);
	EXPECT_EQ(size_t(flows), edges) << "the chain's dependencies and first -> second";
	EXPECT_STREQ(counters, "True");
	EXPECT_TRUE(contains(o.text, "[4096, 0]")) << "the burst as a counter: " << o.text;
	EXPECT_TRUE(contains(o.text, "[('i', 'cache-malloc', 4096)]")) << "its value's name, an instant: " << o.text;
}

TEST_F(Converted, OptionsAsStarPUs)
{
	std::string out2 = dir_.path() + "/opts";
	Output o = run(tool() + " -c -no-events -no-counter -label-deps -o mine.trace -d '" + out2 + "' -i '" + dir_.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	std::string paje = read_file(out2 + "/mine.trace");
	ASSERT_FALSE(paje.empty()) << "-o names the Paje file";
	EXPECT_FALSE(file_exists(out2 + "/paje.trace"));
	EXPECT_FALSE(contains(paje, "\tpu\tp\t")) << "-no-counter drops push/pop events";
	EXPECT_FALSE(contains(paje, "\tnsubmitted\t0")) << "-no-counter drops the counters";
	EXPECT_FALSE(contains(paje, "\tregister\tp\t")) << "-no-events drops data registrations";
	EXPECT_TRUE(contains(read_file(file("paje.trace")), "\tregister\tp\t")) << "by default they are there";
	EXPECT_TRUE(contains(read_file(file("paje.trace")), "\tpu\tp\t"));
	EXPECT_FALSE(contains(paje, "\"0.000000 0.600000 0.400000\"")) << "-c: hashed colours instead of green";
	EXPECT_TRUE(contains(read_file(out2 + "/dag.dot"), "[label=\"task\"]")) << "-label-deps";
	if (have_program("pj_dump")) {
		Output d = run("pj_dump '" + out2 + "/mine.trace'");
		EXPECT_EQ(d.status, 0) << d.text.substr(0, 2000);
	}
	Output bad = run(tool() + " -frobnicate -i '" + dir_.archive() + "'");
	EXPECT_NE(bad.status, 0);
	EXPECT_TRUE(contains(bad.text, "unknown option '-frobnicate'")) << bad.text;
}

// trace.html without a modular scheduler: the page says there is nothing to animate.
TEST_F(Converted, TraceHtmlWithoutComponentsSaysSo)
{
	std::string page = read_file(file("trace.html"));
	ASSERT_FALSE(page.empty());
	EXPECT_TRUE(contains(page, "var steps = [\n\n];")) << "lws has no components: no move";
	std::string dom;
	if (!dump_dom("file://" + file("trace.html"), &dom))
		GTEST_SKIP() << "chromium is not installed: the page is not checked in a browser";
	EXPECT_TRUE(contains(dom, "<p id=\"none\">No scheduling component in this trace")) << dom;
}

// Runs body traced, then converts its archive with -number-events into *out.
void traced_and_converted(const TraceDir &dir, void (*body)(), std::string *out)
{
	traced_run(dir, body);
	*out = dir.path() + "/out";
	Output o = run(tool() + " -number-events -d '" + *out + "' -i '" + dir.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
}

// tasks.rec's Tag is the task's tag however it was given (use_tag,
// STARPU_TAG_ONLY, a tag_id without use_tag); NumaNodes, with
// TASK_VERBOSE_EXTRA, is the NUMA node holding each handle (node 0 on a
// CPU-only run: the data is in main memory), and -1 without it.
void tagged_tasks()
{
	static double v[8];
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v, 8, sizeof(double));
	static starpu_codelet cl = cpu_codelet(noop, 1, "tagged");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, STARPU_TAG_ONLY, (starpu_tag_t)0xa1, 0), 0);
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, STARPU_TAG, (starpu_tag_t)0xa2, 0), 0);
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->handles[0] = h;
	t->tag_id = 0xa3;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
}

TEST(TraceTool, TasksRecTagAndNumaNodes)
{
	for (bool extra : { false, true }) {
		TraceDir dir;
		std::string out;
		{
			ScopedEnv events("STARPU_FXT_EVENTS", extra ? "TASK|TASK_VERBOSE_EXTRA" : "TASK");
			traced_and_converted(dir, tagged_tasks, &out);
		}
		std::string tasks = read_file(out + "/tasks.rec");
		for (const char *tag : { "Tag: a1\n", "Tag: a2\n", "Tag: a3\n" })
			EXPECT_EQ(count(tasks, tag), 1u) << tag << tasks;
		EXPECT_EQ(count(tasks, "NumaNodes: "), 3u) << tasks;
		EXPECT_EQ(count(tasks, extra ? "NumaNodes: 0\n" : "NumaNodes: -1\n"), 3u) << "extra " << extra << ": " << tasks;
	}
}

constexpr int kFlow = 6;

void independent_tasks()
{
	static starpu_codelet cl = cpu_codelet(noop, 0, "alpha");
	for (int i = 0; i < kFlow; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

std::string span(const std::string &dom, const std::string &id)
{
	std::string open = "<span id=\"" + id + "\">";
	size_t at = dom.find(open);
	if (at == std::string::npos)
		return "(no " + id + ")";
	at += open.size();
	return dom.substr(at, dom.find('<', at) - at);
}

// trace.html with modular-eager on two workers: the components of its tree
// (StarPU's names), each task pushed in by the policy, moved down, taken out
// by a worker; a browser replays the moves up to any step.
TEST(TraceHtml, AnimatesTheFlowBetweenComponents)
{
	TraceDir dir;
	std::string out;
	{
		ScopedEnv sched("STARPU_SCHED", "modular-eager");
		ASSERT_NO_FATAL_FAILURE(traced_and_converted(dir, independent_tasks, &out));
	}
	std::string numbers = read_file(out + "/number_events.data");
	EXPECT_TRUE(contains(numbers, "_STARPU_FUT_SCHED_COMPONENT_NEW")) << numbers;
	EXPECT_TRUE(contains(numbers, "_STARPU_FUT_SCHED_COMPONENT_CONNECT")) << numbers;
	EXPECT_TRUE(contains(numbers, "\t_STARPU_FUT_SCHED_COMPONENT_PUSH\n")) << numbers;
	std::string page = read_file(out + "/trace.html");
	EXPECT_FALSE(contains(page, "src=") || contains(page, "<link")) << "the page needs no network";
	EXPECT_TRUE(contains(page, "\"worker\":0}") && contains(page, "\"worker\":1}")) << "one worker component per worker";
	EXPECT_EQ(count(page, ",-2,0]"), size_t(kFlow)) << "each task taken out of the tree once: " << page.substr(0, 4000);
	EXPECT_EQ(count(page, ",-1,"), size_t(kFlow)) << "each task pushed in by the policy once";
	// A trace format: -no-format trace_html leaves it out, the rest as it was.
	std::string off = dir.path() + "/no-html";
	Output o = run(tool() + " -no-format trace_html -number-events -d '" + off + "' -i '" + dir.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_FALSE(file_exists(off + "/trace.html"));
	for (const char *f : { "sched_tasks.rec", "paje.trace", "number_events.data" })
		EXPECT_EQ(read_file(off + "/" + f), read_file(out + "/" + f)) << f;

	std::string url = "file://" + out + "/trace.html", dom;
	if (!dump_dom(url, &dom))
		GTEST_SKIP() << "chromium is not installed: the page is not checked in a browser";
	// At the last step every task went in and out, and no component holds one.
	int components = atoi(span(dom, "ncomponents").c_str());
	EXPECT_GE(components, 3) << "a queue, a decision and the worker components: " << dom.substr(0, 4000);
	EXPECT_EQ(span(dom, "entered"), std::to_string(kFlow)) << dom.substr(0, 4000);
	EXPECT_EQ(span(dom, "left"), std::to_string(kFlow));
	EXPECT_EQ(span(dom, "step"), span(dom, "nsteps"));
	EXPECT_EQ(count(dom, ">0 tasks</text>"), size_t(components)) << dom.substr(0, 6000);
	EXPECT_EQ(count(dom, "<g class=\"component\""), size_t(components));
	EXPECT_TRUE(contains(dom, ">worker 0</text>") && contains(dom, ">worker 1</text>")) << dom.substr(0, 6000);
	// After the first move, one task is in the tree: in the component the policy pushed it into.
	dom.clear();
	ASSERT_TRUE(dump_dom(url + "#step=1", &dom));
	EXPECT_EQ(span(dom, "step"), "1") << dom.substr(0, 4000);
	EXPECT_EQ(span(dom, "entered"), "1");
	EXPECT_EQ(span(dom, "left"), "0");
	EXPECT_EQ(count(dom, ">1 task</text>"), 1u) << dom.substr(0, 6000);
	EXPECT_TRUE(contains(dom, "went from the policy to ")) << dom.substr(0, 4000);
}

// No PAPI counted: no papi.rec (StarPU writes one only when it counted some).
TEST_F(Converted, NoPapiRecWithoutPapiValues)
{
	EXPECT_FALSE(file_exists(file("papi.rec")));
	EXPECT_TRUE(file_exists(file("trace.html")));
	// An older papi.rec in the output folder does not belong to this trace: removed.
	std::string out = dir_.path() + "/stale-papi";
	ASSERT_EQ(run("mkdir -p '" + out + "' && echo 'JobId: 1' > '" + out + "/papi.rec'").status, 0);
	Output o = run(tool() + " -d '" + out + "' -i '" + dir_.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_FALSE(file_exists(out + "/papi.rec"));
	EXPECT_EQ(read_file(out + "/tasks.rec"), read_file(file("tasks.rec")));
}

// An older papi.rec that cannot be removed (a folder here): one message naming papi_rec, exit status 1, the other
// outputs written.
TEST_F(Converted, AnOlderPapiRecThatStaysIsNamed)
{
	std::string out = dir_.path() + "/papi-folder";
	ASSERT_EQ(run("mkdir -p '" + out + "/papi.rec/x'").status, 0);
	Output o = run(tool() + " -d '" + out + "' -i '" + dir_.archive() + "'");
	EXPECT_EQ(o.status, 1) << o.text;
	EXPECT_EQ(count(o.text, "\n"), 1u) << o.text;
	EXPECT_TRUE(contains(o.text, "trace format 'papi_rec' (built in) cannot write in " + out + " (Is a directory)")) << o.text;
	for (const char *f : { "paje.trace", "tasks.rec", "sched_tasks.rec", "activity.data", "trace.html", "comms.rec" })
		EXPECT_EQ(read_file(out + "/" + f), read_file(file(f))) << f;
}

#ifdef STARPU_PAPI
long long papi_ops; // the test's software-defined PAPI event, which the tasks count

void count_ops(void **, void *arg)
{
	__atomic_fetch_add(&papi_ops, (long long)(intptr_t)arg, __ATOMIC_RELAXED);
}

// The tasks run one after the other (each writes the same vector): each worker's
// event set counts the process's SDE counter, so two tasks running together
// would each count both.
void papi_counted_tasks()
{
	static double v[4];
	static starpu_codelet cl = cpu_codelet(count_ops, 1, "counted");
	cl.modes[0] = STARPU_RW;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v, 4, sizeof(double));
	for (int i = 1; i <= 4; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->handles[0] = h;
		t->cl_arg = (void *)(intptr_t)(i * 10);
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
}
#endif

// papi.rec: one record per task and PAPI event (JobId, Event, Value), from the
// values counters_papi_task counted; exact with an event the tasks count
// themselves (PAPI reads no hardware counter in these machines).
TEST(TracePapi, PapiRecHoldsEachTasksCounters)
{
#ifndef STARPU_PAPI
	GTEST_SKIP() << "built without PAPI (libpapi-dev): no papi.rec";
#else
	static papi_handle_t handle = papi_sde_init("ASTROTRACE");
	static int registered = papi_sde_register_counter(handle, "ops", PAPI_SDE_RO | PAPI_SDE_DELTA, PAPI_SDE_long_long, &papi_ops);
	ASSERT_EQ(registered, SDE_OK);
	TraceDir dir;
	std::string out;
	{
		ScopedEnv profiling("STARPU_PROFILING", "1");
		ScopedEnv events("STARPU_PROF_PAPI_EVENTS", "sde:::ASTROTRACE::ops");
		ASSERT_NO_FATAL_FAILURE(traced_and_converted(dir, papi_counted_tasks, &out));
	}
	std::string rec = read_file(out + "/papi.rec");
	ASSERT_FALSE(rec.empty()) << "no papi.rec in " << out;
	EXPECT_EQ(count(rec, "Event: sde:::ASTROTRACE::ops\n"), 4u) << rec;
	for (int v : { 10, 20, 30, 40 })
		EXPECT_EQ(count(rec, "\nValue: " + std::to_string(v) + "\n"), 1u) << "task " << v / 10 << ": " << rec;
	// Each record names a job of tasks.rec.
	std::string tasks = read_file(out + "/tasks.rec");
	std::istringstream lines(rec);
	for (std::string line; std::getline(lines, line);)
		if (line.rfind("JobId: ", 0) == 0)
			EXPECT_TRUE(contains(tasks, "\n" + line + "\n")) << line << " is not in tasks.rec";
	EXPECT_TRUE(contains(read_file(out + "/number_events.data"), "\n0x5186\t4\t_STARPU_FUT_PAPI_TASK_EVENT_VALUE\n"));
	// -no-format papi_rec: none, the other outputs the same.
	std::string off = dir.path() + "/no-papi";
	Output o = run(tool() + " -no-format papi_rec -number-events -d '" + off + "' -i '" + dir.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_FALSE(file_exists(off + "/papi.rec"));
	for (const char *f : { "tasks.rec", "paje.trace", "number_events.data" })
		EXPECT_EQ(read_file(off + "/" + f), read_file(out + "/" + f)) << f;
	if (!have_program("recsel"))
		GTEST_SKIP() << "recsel missing (Debian recutils)";
	Output sel = run("recsel -c -e 'Value >= 30' '" + out + "/papi.rec'");
	ASSERT_EQ(sel.status, 0) << sel.text;
	EXPECT_EQ(sel.text, "2\n");
#endif
}

// -number-events: number_events.data as StarPU's, one line per kind of event,
// adding up to the events otf2-print lists; named by StarPU's script.
TEST_F(Converted, NumberEventsCountsEachKind)
{
	EXPECT_FALSE(file_exists(file("number_events.data"))) << "only with -number-events";
	std::string out2 = dir_.path() + "/numbers";
	Output o = run(tool() + " -number-events -d '" + out2 + "' -i '" + dir_.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	std::string data = read_file(out2 + "/number_events.data");
	const std::string header = "# Use starpu_fxt_number_events_to_names.py to convert event keys to event names.\n";
	ASSERT_EQ(data.compare(0, header.size(), header), 0) << data;
	std::istringstream lines(data.substr(header.size()));
	unsigned long total = 0, previous = 0;
	std::map<std::string, unsigned long> by_name;
	for (std::string line; std::getline(lines, line);) {
		unsigned long key = 0, n = 0;
		char name[128] = "";
		ASSERT_EQ(sscanf(line.c_str(), "0x%lx\t%lu\t%127s", &key, &n, name), 3) << line;
		EXPECT_GT(key, previous) << "sorted by key, each once: " << line;
		EXPECT_GT(n, 0u) << line;
		previous = key;
		total += n;
		by_name[name] = n;
	}
	const unsigned long tasks = kChain + 2;
	EXPECT_EQ(by_name["_STARPU_FUT_START_CODELET_BODY"], tasks) << data;
	EXPECT_EQ(by_name["_STARPU_FUT_END_CODELET_BODY"], tasks);
	EXPECT_EQ(by_name["_STARPU_FUT_TASK_SUBMIT"], tasks);
	EXPECT_EQ(by_name["_STARPU_FUT_JOB_PUSH"], tasks);
	EXPECT_EQ(by_name["_STARPU_FUT_JOB_POP"], tasks);
	EXPECT_EQ(by_name["_STARPU_FUT_CODELET_DATA_HANDLE"], unsigned(kChain)) << "one handle per scal";
	EXPECT_EQ(by_name["_STARPU_FUT_USER_EVENT"], 2u) << "4242 and 7";
	EXPECT_EQ(by_name["_STARPU_FUT_HANDLE_DATA_REGISTER"], 1u);
	EXPECT_EQ(by_name["_STARPU_FUT_HANDLE_DATA_UNREGISTER"], 1u);
	EXPECT_EQ(by_name["_STARPU_FUT_DATA_NAME"], 1u);
	EXPECT_EQ(by_name["_STARPU_FUT_TAG_DEPS"], 1u) << "0x20 -> 0x21";
	EXPECT_EQ(by_name["astro_instr_state_open"], 2u) << "submitting, inner state";
	EXPECT_EQ(by_name["astro_instr_state_close"], 2u);
	EXPECT_EQ(by_name["astro_instr_burst_begin"], 1u);
	EXPECT_EQ(by_name.count("astro_unknown_event"), 0u) << data;
	EXPECT_TRUE(contains(data, "\n0x5102\t22\t_STARPU_FUT_START_CODELET_BODY\n")) << "StarPU's codes: " << data;

	// Every event of the archive is counted once.
	if (!have_program("otf2-print") || !have_program("python3"))
		GTEST_SKIP() << "otf2-print or python3 missing (Debian otf2-tools, python3)";
	Output events = run("otf2-print '" + trace_anchor(dir_.archive()) + "' | grep -c -E '^(ENTER|LEAVE|PARAMETER_[A-Z0-9_]+) '");
	EXPECT_EQ(strtoul(events.text.c_str(), nullptr, 10), total) << events.text;

	// StarPU's script names the kinds and adds them up.
	const std::string src = env_or("ASTRO_TOP_SRCDIR", "../../..");
	Output named = run("PYTHONPATH='" + src + "/tools' python3 '" + src + "/tools/traces/starpu_fxt_number_events_to_names.py.in' '" +
			   out2 + "/number_events.data'");
	ASSERT_EQ(named.status, 0) << named.text;
	EXPECT_TRUE(contains(named.text, "22    _STARPU_FUT_START_CODELET_BODY\n")) << named.text;
	EXPECT_TRUE(contains(named.text, std::to_string(total) + "    TOTAL\n")) << named.text;

	// A failed conversion leaves no count behind.
	std::string out3 = dir_.path() + "/numbers-bad";
	Output bad = run(tool() + " -number-events -d '" + out3 + "' -i '" + dir_.path() + "/nothing'");
	EXPECT_NE(bad.status, 0);
	EXPECT_FALSE(file_exists(out3 + "/number_events.data"));
}

TEST_F(Converted, DistribDataHasOneLinePerExecution)
{
	std::string d = read_file(file("distrib.data"));
	EXPECT_EQ(count(d, "scal\t"), size_t(kChain)) << d.substr(0, 300);
	EXPECT_TRUE(contains(d, "scal\t0\t512\t") || contains(d, "scal\t1\t512\t")) << "name, worker, size, footprint, ms";
}

TEST_F(Converted, ActivityDataNamesTheWorkers)
{
	std::string a = read_file(file("activity.data"));
	EXPECT_TRUE(contains(a, "name\t0\tCPU 0\n")) << a.substr(0, 300);
	EXPECT_TRUE(contains(a, "cnt_submitted\t"));
	EXPECT_TRUE(contains(a, "cnt_ready\t"));
}

TEST(TraceTool, CorruptArchiveIsNamedAndFails)
{
	TraceDir dir;
	traced_run(dir);
	std::string anchor = trace_anchor(dir.archive());
	ASSERT_FALSE(anchor.empty());
	// Truncate every event file: the global reader cannot read them.
	ASSERT_EQ(run("for f in '" + anchor.substr(0, anchor.size() - 5) + "'/*.evt; do : > \"$f\"; done").status, 0);
	Output o = run(tool() + " -d '" + dir.path() + "/out' -i '" + dir.archive() + "'");
	EXPECT_NE(o.status, 0) << o.text;
	EXPECT_TRUE(contains(o.text, anchor)) << o.text;
	EXPECT_TRUE(contains(o.text, "truncated or corrupt")) << o.text;

	ASSERT_EQ(run("echo garbage > '" + anchor + "'").status, 0);
	o = run(tool() + " -d '" + dir.path() + "/out' -i '" + dir.archive() + "'");
	EXPECT_NE(o.status, 0);
	EXPECT_TRUE(contains(o.text, anchor)) << o.text;

	// A missing input, the output in the current folder by default: nothing is created there.
	o = run("cd '" + dir.path() + "' && " + tool() + " -i '" + dir.path() + "/missing'");
	EXPECT_NE(o.status, 0);
	EXPECT_TRUE(contains(o.text, dir.path() + "/missing: no such file")) << o.text;
	EXPECT_FALSE(file_exists(dir.path() + "/paje.trace")) << "outputs created before the input was checked";
}

// Two processes of one run (two sessions here, with their profiling ids):
// the converter merges their archives, each rank prefixed as StarPU does.
TEST(TraceTool, SeveralArchivesAreMergedWithRankPrefixes)
{
	TraceDir dir;
	for (int id : { 1, 0 }) {
		starpu_profiling_set_id(id);
		traced_run(dir);
	}
	starpu_profiling_set_id(0);
	std::string base = dir.path() + "/prof_file_" + env_or("USER", "") + "_";
	Output o = run(tool() + " -d '" + dir.path() + "/out' -i '" + base + "1' '" + base + "0'");
	ASSERT_EQ(o.status, 0) << o.text;
	std::string paje = read_file(dir.path() + "/out/paje.trace");
	EXPECT_TRUE(contains(paje, "\t0_p\tP\tMPIroot\t0_program\n")) << paje.substr(0, 4000);
	EXPECT_TRUE(contains(paje, "\t1_w0\tW\t1_t") && contains(paje, "\t1_CPU0\n")) << "rank 1's worker 0 in its thread container";
	if (have_program("pj_dump")) {
		Output d = run("pj_dump '" + dir.path() + "/out/paje.trace'");
		EXPECT_EQ(d.status, 0) << d.text.substr(0, 2000);
	}
	std::string tasks = read_file(dir.path() + "/out/tasks.rec");
	EXPECT_EQ(count(tasks, "MPIRank: 0\n"), count(tasks, "MPIRank: 1\n"));
	EXPECT_GT(count(tasks, "MPIRank: 0\n"), size_t(kChain));
	EXPECT_TRUE(contains(tasks, "JobId: 1_")) << "job ids carry the rank";
	EXPECT_TRUE(contains(read_file(dir.path() + "/out/dag.dot"), "\"task_0_")) << "dag nodes too";
	EXPECT_TRUE(contains(read_file(dir.path() + "/out/sched_tasks.rec"), "JobId: 1_"));
	// Rank 1 ran first: on the common time base its first task starts before rank 0's.
	if (have_program("python3")) {
		Output j = run("python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))[\"traceEvents\"];"
			       "t=[(x[\"ts\"],x[\"pid\"]) for x in e if x.get(\"name\")==\"scal\"]; print(min(t)[1], len(set(p for _,p in t)))' '" +
			       dir.path() + "/out/trace.json'");
		EXPECT_EQ(j.text, "1 2\n") << "earliest scal from rank 1, two processes";
	}
}

TEST(TraceTool, GenerateTraceConvertsAtShutdown)
{
	TraceDir dir;
	{
		ScopedEnv generate("STARPU_GENERATE_TRACE", "1");
		ScopedEnv options("STARPU_GENERATE_TRACE_OPTIONS", "-c -label-deps");
		traced_run(dir);
	}
	for (const char *f : { "paje.trace", "dag.dot", "tasks.rec", "trace.rec", "data.rec", "sched_tasks.rec", "activity.data", "trace.json" })
		EXPECT_TRUE(file_exists(dir.path() + "/" + f)) << f;
	EXPECT_TRUE(contains(read_file(dir.path() + "/dag.dot"), "[label=\"task\"]")) << "-label-deps was applied";
}

// Without STARPU_FXT_PREFIX the raw archive goes to the temporary folder and
// the generated files to the current directory, as the handbook says.
TEST(TraceTool, GenerateTraceWithoutPrefixWritesIntoTheCurrentDirectory)
{
	TraceDir raw, here;
	char cwd[4096];
	ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
	ASSERT_EQ(chdir(here.path().c_str()), 0);
	{
		ScopedEnv tmpdir("TMPDIR", raw.path());
		ScopedEnv prefix("STARPU_FXT_PREFIX", nullptr);
		ScopedEnv trace("STARPU_FXT_TRACE", "1");
		ScopedEnv generate("STARPU_GENERATE_TRACE", "1");
		Runtime rt(2);
		EXPECT_TRUE(rt.ok());
		if (rt.ok())
			workload();
	}
	ASSERT_EQ(chdir(cwd), 0);
	for (const char *f : { "paje.trace", "dag.dot", "tasks.rec", "trace.rec", "data.rec", "sched_tasks.rec", "activity.data" })
		EXPECT_TRUE(file_exists(here.path() + "/" + f)) << f;
	EXPECT_TRUE(!trace_anchor(raw.archive()).empty()) << "the raw archive stays in the temporary folder";
	EXPECT_FALSE(file_exists(raw.path() + "/paje.trace"));
}

// The trace format plugins built for these tests (test_formats/, test_formats_bad/): make check runs the test in their folder.
std::string formats_dir(const char *folder)
{
	char here[4096];
	return std::string(getcwd(here, sizeof(here)) ? here : ".") + "/" + folder + "/.libs";
}

// STARPU_PLUGIN_PATH with folder's format plugins added.
std::string plugin_path_with(const char *folder)
{
	return env_or("STARPU_PLUGIN_PATH", "") + ":" + formats_dir(folder);
}

// tasks.rec's tasks that ran, as the test plugin's tasks.csv writes them (JobId,Name,WorkerId,SubmitTime,StartTime,EndTime).
std::vector<std::string> ran_tasks_of(const std::string &tasks_rec)
{
	std::vector<std::string> rows;
	std::istringstream records(tasks_rec);
	std::map<std::string, std::string> r;
	for (std::string line;;) {
		bool more = static_cast<bool>(std::getline(records, line));
		if (more && !line.empty()) {
			size_t colon = line.find(": ");
			if (colon != std::string::npos)
				r[line.substr(0, colon)] = line.substr(colon + 2);
			continue;
		}
		if (r.count("StartTime"))
			rows.push_back(r["JobId"] + "," + r["Name"] + "," + r["WorkerId"] + "," + r["SubmitTime"] + "," + r["StartTime"] + "," +
				       r["EndTime"]);
		r.clear();
		if (!more)
			break;
	}
	return rows;
}

// tasks.csv's rows, cut to the columns tasks.rec has, and its last line (the counts of each callback).
std::vector<std::string> csv_rows(const std::string &csv, std::string *summary)
{
	std::vector<std::string> rows;
	std::istringstream lines(csv);
	std::string line;
	std::getline(lines, line); // the header
	while (std::getline(lines, line)) {
		if (line.rfind("# ", 0) == 0) {
			*summary = line;
			continue;
		}
		size_t cut = 0;
		for (int field = 0; field < 6 && cut != std::string::npos; field++)
			cut = line.find(',', cut + (field ? 1 : 0));
		rows.push_back(line.substr(0, cut));
	}
	return rows;
}

// One count of the summary line ("... tasks 23 ...").
long summary_count(const std::string &summary, const std::string &what)
{
	size_t at = summary.find(" " + what + " ");
	return at == std::string::npos ? -1 : atol(summary.c_str() + at + what.size() + 2);
}

// A format plugin (tasks.csv) gets the converter's stream: the same tasks, names and dates as tasks.rec, and every
// kind of event; -formats lists it, -no-format and -format turn formats off and on; trace.json does not change.
TEST_F(Converted, FormatPluginWritesWhatTasksRecSays)
{
	ScopedEnv path("STARPU_PLUGIN_PATH", plugin_path_with("test_formats"));
	std::string out = dir_.path() + "/csv";
	Output o = run(tool() + " -d '" + out + "' -i '" + dir_.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_EQ(o.text, "");
	std::vector<std::string> expected = ran_tasks_of(read_file(out + "/tasks.rec"));
	std::string summary;
	std::vector<std::string> rows = csv_rows(read_file(out + "/tasks.csv"), &summary);
	EXPECT_EQ(expected.size(), size_t(kChain + 2)) << read_file(out + "/tasks.rec").substr(0, 2000);
	EXPECT_EQ(rows, expected) << "tasks.csv lists the tasks that ran as tasks.rec does, in its order";
	EXPECT_EQ(summary_count(summary, "processes"), 1) << summary;
	EXPECT_GE(summary_count(summary, "locations"), 3) << "two workers and the application thread: " << summary;
	EXPECT_EQ(summary_count(summary, "entered"), summary_count(summary, "left")) << summary;
	EXPECT_GT(summary_count(summary, "left"), kChain) << summary;
	EXPECT_GT(summary_count(summary, "counters"), 0) << summary;
	EXPECT_GE(summary_count(summary, "dependencies"), 3 * (kChain - 1)) << "declared, left, reached: " << summary;
	EXPECT_GE(summary_count(summary, "instants"), 3) << "4242, 7, phase1-begin: " << summary;
	EXPECT_EQ(summary_count(summary, "tasks"), long(count(read_file(out + "/tasks.rec"), "JobId: "))) << summary;
	EXPECT_GE(summary_count(summary, "data"), 1) << summary;
	EXPECT_EQ(read_file(out + "/trace.json"), read_file(file("trace.json"))) << "trace.json is the same with a plugin beside it";
	EXPECT_FALSE(file_exists(out + "/data.csv")) << "data_csv is off by default";

	Output list = run(tool() + " -formats");
	ASSERT_EQ(list.status, 0) << list.text;
	EXPECT_TRUE(contains(list.text, "\njson ") && contains(list.text, "(built in)")) << list.text;
	EXPECT_TRUE(contains(list.text, "\ntasks_csv        on ") && contains(list.text, "format_tasks_csv.so)")) << list.text;
	EXPECT_TRUE(contains(list.text, "\ndata_csv         off ")) << list.text;

	std::string out2 = dir_.path() + "/csv2";
	o = run(tool() + " -no-format json -format data_csv -no-format tasks_csv -d '" + out2 + "' -i '" + dir_.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_FALSE(file_exists(out2 + "/trace.json")) << "-no-format json";
	EXPECT_FALSE(file_exists(out2 + "/tasks.csv")) << "-no-format tasks_csv";
	EXPECT_TRUE(contains(read_file(out2 + "/data.csv"), ",vec,512\n")) << "-format data_csv: " << read_file(out2 + "/data.csv");
	EXPECT_EQ(read_file(out2 + "/paje.trace"), read_file(file("paje.trace"))) << "paje.trace is not a format: there";

	std::string out3 = dir_.path() + "/none";
	Output bad = run(tool() + " -no-format jsn -d '" + out3 + "' -i '" + dir_.archive() + "'");
	EXPECT_EQ(bad.status, 1);
	// The built-in formats first (json, then StarPU's outputs), then the plugins'.
	EXPECT_TRUE(contains(bad.text, "-no-format jsn: no such format (the formats are json, tasks_rec, data_rec, distrib, trace_rec, dag, paje, ")) << bad.text;
	EXPECT_TRUE(contains(bad.text, ", tasks_csv, data_csv)")) << bad.text;
	EXPECT_EQ(count(bad.text, "\n"), 1u) << bad.text;
	EXPECT_FALSE(file_exists(out3)) << "nothing written";
	Output missing = run(tool() + " -i '" + dir_.archive() + "' -format");
	EXPECT_EQ(missing.status, 1);
	EXPECT_TRUE(contains(missing.text, "-format needs a format's name")) << missing.text;
}

// StarPU's outputs written as built-in formats: -formats lists each; -no-format NAME leaves exactly its file out, the
// others are byte for byte what a full conversion writes.
TEST_F(Converted, StarPUOutputsAreFormatsTurnedOffOneByOne)
{
	const std::vector<std::pair<std::string, std::string>> formats = {
		{ "tasks_rec", "tasks.rec" }, { "data_rec", "data.rec" }, { "distrib", "distrib.data" },
		{ "trace_rec", "trace.rec" }, { "dag", "dag.dot" }, { "paje", "paje.trace" }, { "sched_tasks_rec", "sched_tasks.rec" },
		{ "papi_rec", "papi.rec" }, { "comms_rec", "comms.rec" },
		{ "activity", "activity.data" }, { "trace_html", "trace.html" },
	};
	const std::vector<std::string> outputs = { "paje.trace", "dag.dot", "tasks.rec", "trace.rec", "data.rec", "distrib.data",
						   "sched_tasks.rec", "activity.data", "trace.json", "comms.rec", "trace.html" };
	Output list = run(tool() + " -formats");
	ASSERT_EQ(list.status, 0) << list.text;
	for (const auto &f : formats) // the names in a column 16 wide
		EXPECT_TRUE(contains(list.text, "\n" + f.first + std::string(17 - f.first.size(), ' ') +
						"on  " + f.second + ": "))
			<< f.first << ":\n" << list.text;
	for (const auto &f : formats) {
		std::string out = dir_.path() + "/no-" + f.first;
		Output o = run(tool() + " -no-format " + f.first + " -d '" + out + "' -i '" + dir_.archive() + "'");
		ASSERT_EQ(o.status, 0) << o.text;
		EXPECT_EQ(o.text, "");
		EXPECT_FALSE(file_exists(out + "/" + f.second)) << "-no-format " << f.first;
		for (const std::string &name : outputs)
			if (name != f.second)
				EXPECT_EQ(read_file(out + "/" + name), read_file(file(name))) << name << " with -no-format " << f.first;
	}
}

// paje.trace is the format "paje": -o names its file, -no-format paje leaves it out (under any name), and one that
// cannot be written is named once while the other outputs are written.
TEST_F(Converted, PajeIsAFormatNamedByMinusO)
{
	std::string out = dir_.path() + "/paje-off";
	Output o = run(tool() + " -no-format paje -o mine.trace -d '" + out + "' -i '" + dir_.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_EQ(o.text, "");
	EXPECT_FALSE(file_exists(out + "/mine.trace"));
	EXPECT_FALSE(file_exists(out + "/paje.trace"));
	EXPECT_EQ(read_file(out + "/tasks.rec"), read_file(file("tasks.rec")));
	std::string bad = dir_.path() + "/paje-unwritable";
	o = run(tool() + " -o no-such-folder/paje.trace -d '" + bad + "' -i '" + dir_.archive() + "'");
	EXPECT_EQ(o.status, 1) << "paje.trace could not be written: " << o.text;
	EXPECT_EQ(count(o.text, "\n"), 1u) << o.text;
	EXPECT_TRUE(contains(o.text, "trace format 'paje' (built in) cannot write in " + bad + " (No such file or directory)")) << o.text;
	for (const char *f : { "dag.dot", "tasks.rec", "trace.rec", "data.rec", "sched_tasks.rec", "activity.data", "trace.json" })
		EXPECT_EQ(read_file(bad + "/" + f), read_file(file(f))) << f;
}

// Format plugins that are wrong: one message each, naming the plugin; the other outputs are written.
TEST_F(Converted, BadFormatPluginsAreNamedAndTheRestIsWritten)
{
	ScopedEnv path("STARPU_PLUGIN_PATH", plugin_path_with("test_formats_bad"));
	std::string out = dir_.path() + "/bad";
	Output o = run(tool() + " -d '" + out + "' -i '" + dir_.archive() + "'");
	EXPECT_EQ(o.status, 1) << "a format could not write: " << o.text;
	EXPECT_EQ(count(o.text, "\n"), 3u) << o.text;
	EXPECT_EQ(count(o.text, "a trace format of plugin format_noname ("), 1u) << o.text;
	EXPECT_TRUE(contains(o.text, ") has no name: ")) << o.text;
	EXPECT_EQ(count(o.text, "trace format 'json' of plugin format_twice ("), 1u) << o.text;
	EXPECT_TRUE(contains(o.text, ") is registered already (built in): the second one is ignored")) << o.text;
	EXPECT_EQ(count(o.text, "trace format 'unwritable' ("), 1u) << o.text;
	EXPECT_TRUE(contains(o.text, "format_unwritable.so) cannot write in " + out + " (No such file or directory)")) << o.text;
	for (const char *f : { "paje.trace", "dag.dot", "tasks.rec", "trace.rec", "data.rec", "sched_tasks.rec", "activity.data" })
		EXPECT_EQ(read_file(out + "/" + f), read_file(file(f))) << f;
	EXPECT_EQ(read_file(out + "/trace.json"), read_file(file("trace.json"))) << "the built-in json stays";
}

// STARPU_GENERATE_TRACE=1 finds the format plugins too (in starpu_shutdown(), without starpu_fxt_tool).
TEST(TraceTool, GenerateTraceWritesFormatPlugins)
{
	TraceDir dir;
	{
		ScopedEnv path("STARPU_PLUGIN_PATH", plugin_path_with("test_formats"));
		ScopedEnv generate("STARPU_GENERATE_TRACE", "1");
		traced_run(dir);
	}
	std::string summary;
	std::vector<std::string> rows = csv_rows(read_file(dir.path() + "/tasks.csv"), &summary);
	EXPECT_EQ(rows.size(), size_t(kChain + 2)) << read_file(dir.path() + "/tasks.csv");
	EXPECT_EQ(rows, ran_tasks_of(read_file(dir.path() + "/tasks.rec")));
	EXPECT_TRUE(file_exists(dir.path() + "/trace.json"));
}

// A death test's folder: the child runs the test again from the start and
// finds the parent's folder in the environment (own is the parent's).
std::string death_test_dir(std::unique_ptr<TraceDir> &own)
{
	std::string dir = env_or("ASTRO_TRACE_DEATH_DIR", "");
	if (dir.empty()) {
		own.reset(new TraceDir);
		dir = own->path();
	}
	return dir;
}

void full_disk_run(const std::string &dir)
{
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit limit = { 64 * 1024, 64 * 1024 };
	setrlimit(RLIMIT_FSIZE, &limit);
	ScopedEnv buffer("STARPU_TRACE_BUFFER_SIZE", "2");
	traced_run(dir, [] {
		starpu_codelet cl = cpu_codelet(noop, 0, "many");
		for (int i = 0; i < 20000; i++)
			if (submit_detached(&cl) != 0)
				exit(2);
		starpu_task_wait_for_all();
	});
	fprintf(stderr, "run went on\n");
	exit(0);
}

// A disk that fills up: files may not grow past 64 KiB. The run goes on, says
// once that the trace is incomplete, and the converter warns about it.
TEST(TraceDeathTest, FullDiskLeavesAMessageAndAnIncompleteTrace)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	std::unique_ptr<TraceDir> own;
	std::string dir = death_test_dir(own);
	ScopedEnv shared("ASTRO_TRACE_DEATH_DIR", dir);
	EXPECT_EXIT(full_disk_run(dir), testing::ExitedWithCode(0),
		    "writing the trace failed .*incomplete \\(disk full\\?\\)(.|\n)*run went on");
	std::string archive = dir + "/prof_file_" + env_or("USER", "") + "_0";
	Output o = run(tool() + " -d '" + dir + "/out' -i '" + archive + "'");
	EXPECT_TRUE(contains(o.text, "incomplete") || contains(o.text, "truncated or corrupt")) << o.text;
	EXPECT_TRUE(contains(o.text, trace_anchor(archive))) << o.text;
}

void spill_failure_run(const std::string &dir)
{
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit limit = { 256 * 1024, 256 * 1024 };
	setrlimit(RLIMIT_FSIZE, &limit);
	ScopedEnv buffer("STARPU_TRACE_BUFFER_SIZE", "1");
	std::string err = stderr_of([&] {
		traced_run(dir, [] {
			// More than 1 MiB of records on this thread: its buffer is spilled, and the file may not grow that much.
			for (int i = 0; i < 200000; i++)
				starpu_fxt_trace_user_event(i);
			starpu_codelet cl = cpu_codelet(noop, 0, "after");
			for (int i = 0; i < 100; i++)
				if (submit_detached(&cl) != 0)
					exit(2);
			starpu_task_wait_for_all();
		});
	});
	fprintf(stderr, "%s[astrolabe] messages: %zu\nrun went on\n", err.c_str(), count(err, "[astrolabe]"));
	exit(0);
}

// The disk fills up while a full buffer is spilled during the run: one
// message (at shutdown, naming the spill file), the run goes on, and the
// converter says the archive is incomplete.
TEST(TraceDeathTest, FullDiskDuringASpillLeavesOneMessageAndAnIncompleteTrace)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	std::unique_ptr<TraceDir> own;
	std::string dir = death_test_dir(own);
	ScopedEnv shared("ASTRO_TRACE_DEATH_DIR", dir);
	EXPECT_EXIT(spill_failure_run(dir), testing::ExitedWithCode(0),
		    "writing the trace failed \\(writing [^\n]*raw\\.[0-9]+: [^\n]*\\): [^\n]*incomplete \\(disk full\\?\\)\n"
		    "\\[astrolabe\\] messages: 1\nrun went on");
	std::string archive = dir + "/prof_file_" + env_or("USER", "") + "_0";
	EXPECT_EQ(run("find '" + dir + "' -name 'raw.*'").text, "") << "no spill file is left";
	Output o = run(tool() + " -d '" + dir + "/out' -i '" + archive + "'");
	EXPECT_TRUE(contains(o.text, "incomplete")) << o.text;
	EXPECT_TRUE(contains(o.text, trace_anchor(archive))) << o.text;
}

// A traced run into dir/<size> with STARPU_TRACE_BUFFER_SIZE=size.
void bad_buffer_size_run(const std::string &dir, const char *size)
{
	std::string own = dir + "/" + size;
	mkdir(own.c_str(), 0700);
	ScopedEnv buffer("STARPU_TRACE_BUFFER_SIZE", size);
	traced_run(own);
	fprintf(stderr, "run went on\n");
	exit(0);
}

// STARPU_TRACE_BUFFER_SIZE out of 1..1024 MiB or not a number: one message
// naming the value, the range and the default, and a trace with the default
// 8 MiB. 1000000 asked GLib for a terabyte per thread (the process died on
// SIGTRAP); 0, -1 and abc silently became 8.
TEST(TraceDeathTest, BufferSizeOutOfRangeIsSaidAndTheDefaultUsed)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	std::unique_ptr<TraceDir> own;
	std::string dir = death_test_dir(own);
	ScopedEnv shared("ASTRO_TRACE_DEATH_DIR", dir);
	for (const char *size : { "1000000", "0", "-1" }) {
		SCOPED_TRACE(size);
		EXPECT_EXIT(bad_buffer_size_run(dir, size), testing::ExitedWithCode(0),
			    std::string("^\\[astrolabe\\] error: STARPU_TRACE_BUFFER_SIZE='") + size +
				    "' is out of range 1\\.\\.1024 \\(MiB\\): ignored, using 8\nrun went on\n$");
	}
	EXPECT_EXIT(bad_buffer_size_run(dir, "abc"), testing::ExitedWithCode(0),
		    "^\\[astrolabe\\] error: STARPU_TRACE_BUFFER_SIZE='abc' is not a number \\(give 1\\.\\.1024 \\(MiB\\)\\): "
		    "ignored, using 8\nrun went on\n$");
	for (const char *size : { "1000000", "0", "-1", "abc" })
		EXPECT_FALSE(trace_anchor(dir + "/" + size + "/prof_file_" + env_or("USER", "") + "_0").empty()) << size << ": traced";
}

// What session 12 added to the outputs: GFlop/s variables, the threads' OS ids,
// the submitting thread's states, the memory managers' states and the
// per-task instrumentation context. One traced run (with TASK_VERBOSE),
// converted once, checked with pj_dump, otf2-print and recsel.
constexpr int kFlopTasks = 6;
constexpr int kInserted = 3;
long worker_tid[2];

void note_tid(void **, void *)
{
	int w = starpu_worker_get_id();
	if (w >= 0 && w < 2)
		__atomic_store_n(&worker_tid[w], (long)syscall(SYS_gettid), __ATOMIC_RELAXED);
}

void leaves_phase_open(void **, void *)
{
	astro_instr_state_open("phase");
	astro_instr_burst_open("phase-bytes", 300);
}

void phase_callback(void *)
{
	// The worker came back to the task: its state and burst are there again; closed here.
	astro_instr_burst_close("phase-bytes");
	astro_instr_state_close();
}

void content_workload()
{
	static starpu_codelet flopper = cpu_codelet(note_tid, 0, "flopper");
	static starpu_codelet inserted = cpu_codelet(noop, 0, "inserted");
	static starpu_codelet writer = cpu_codelet(noop, 1, "writer");
	static starpu_codelet phased = cpu_codelet(leaves_phase_open, 0, "phased");
	writer.modes[0] = STARPU_W;
	// Each worker runs flop-counted tasks (and notes its thread id).
	for (int i = 0; i < kFlopTasks; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &flopper;
		t->flops = 2e6;
		t->execute_on_a_specific_worker = 1;
		t->workerid = (unsigned)(i % 2);
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	// Built by starpu_task_insert, then one waited for: Building, Submitting, Waiting task.
	for (int i = 0; i < kInserted; i++)
		ASSERT_EQ(starpu_task_insert(&inserted, 0), 0);
	struct starpu_task *waited = starpu_task_create();
	waited->cl = &inserted;
	waited->detach = 0;
	waited->destroy = 0;
	ASSERT_EQ(starpu_task_submit(waited), 0);
	ASSERT_EQ(starpu_task_wait(waited), 0);
	starpu_task_destroy(waited);
	// A buffer the runtime allocates (no home node), then frees.
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, -1, 0, 4096, sizeof(double));
	ASSERT_EQ(starpu_task_insert(&writer, STARPU_W, h, 0), 0);
	// A task that leaves a state and a burst open, closed by its callback.
	struct starpu_task *p = starpu_task_create();
	p->cl = &phased;
	p->callback_func = phase_callback;
	ASSERT_EQ(starpu_task_submit(p), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
}

class TraceContent : public testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		dir_ = new TraceDir;
		ScopedEnv events("STARPU_FXT_EVENTS", "TASK|TASK_VERBOSE|WORKER|SCHED|DATA|USER|EVENT");
		traced_and_converted(*dir_, content_workload, &out_);
		if (have_program("pj_dump")) {
			Output o = run("pj_dump '" + out_ + "/paje.trace'");
			dump_status_ = o.status;
			dump_ = o.text;
		}
	}
	static void TearDownTestSuite()
	{
		delete dir_;
		dir_ = nullptr;
	}
	void SetUp() override
	{
		if (!have_program("pj_dump"))
			GTEST_SKIP() << "pj_dump missing (Debian pajeng)";
		ASSERT_EQ(dump_status_, 0) << dump_.substr(0, 2000);
	}
	// pj_dump's rows that start with prefix and end with suffix.
	static std::vector<std::string> rows(const std::string &prefix, const std::string &suffix = "")
	{
		std::vector<std::string> found;
		std::istringstream lines(dump_);
		for (std::string line; std::getline(lines, line);)
			if (line.rfind(prefix, 0) == 0 && line.size() >= suffix.size() &&
			    line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0)
				found.push_back(line);
		return found;
	}
	// The largest value of the Variable rows that start with prefix (the value is the last field).
	static double largest(const std::string &prefix)
	{
		double most = 0.0;
		for (const std::string &row : rows(prefix))
			most = std::max(most, strtod(row.c_str() + row.rfind(", ") + 2, nullptr));
		return most;
	}
	static TraceDir *dir_;
	static std::string out_, dump_;
	static int dump_status_;
};
TraceDir *TraceContent::dir_;
std::string TraceContent::out_, TraceContent::dump_;
int TraceContent::dump_status_ = -1;

// StarPU's gf (each worker: its task's GFlop over its duration) and gft (their sum).
TEST_F(TraceContent, GFlopsOfEachWorkerAndTheirSum)
{
	EXPECT_GT(largest("Variable, CPU0, GFlop/s, "), 0.0) << dump_.substr(0, 3000);
	EXPECT_GT(largest("Variable, CPU1, GFlop/s, "), 0.0);
	EXPECT_GT(largest("Variable, scheduler, Total GFlop/s, "), 0.0);
	// -no-smooth: each task's own rate; -no-flops: none. Both still accepted by pj_dump.
	for (const char *option : { "-no-smooth", "-no-flops" }) {
		std::string out = dir_->path() + "/out" + option;
		Output o = run(tool() + " " + option + " -d '" + out + "' -i '" + dir_->archive() + "'");
		ASSERT_EQ(o.status, 0) << o.text;
		Output d = run("pj_dump '" + out + "/paje.trace'");
		ASSERT_EQ(d.status, 0) << d.text.substr(0, 2000);
		EXPECT_EQ(contains(d.text, "GFlop/s"), std::string(option) == "-no-smooth") << option;
	}
	std::string json = read_file(out_ + "/trace.json");
	EXPECT_TRUE(contains(json, "\"name\":\"GFlop/s\",\"ph\":\"C\"")) << "gft as a counter track";
	// Though known only at a task's end, they are not written behind later events: pj_dump silently stops reading a
	// container at an event dated before its last one. The events (a number, a tab, a date) come in time order.
	std::istringstream lines(read_file(out_ + "/paje.trace"));
	double last = 0.0;
	int timed = 0;
	for (std::string line; std::getline(lines, line);) {
		int id;
		double t;
		if (sscanf(line.c_str(), "%d\t%lf\t", &id, &t) != 2 || id < 7)
			continue; // the definitions: no date
		timed++;
		ASSERT_GE(t, last) << line;
		last = t;
	}
	EXPECT_GT(timed, 100);
}

// Each worker's thread container is StarPU's t<OS thread id>, named T<its CPU>; the archive keeps the id.
TEST_F(TraceContent, ThreadsAreNamedByTheirOsIds)
{
	std::string paje = read_file(out_ + "/paje.trace");
	for (int w = 0; w < 2; w++) {
		long tid = __atomic_load_n(&worker_tid[w], __ATOMIC_RELAXED);
		ASSERT_GT(tid, 0);
		EXPECT_TRUE(contains(paje, "\tt" + std::to_string(tid) + "\tT\tmn0\tT")) << w << " " << tid;
		EXPECT_TRUE(contains(paje, "\tw" + std::to_string(w) + "\tW\tt" + std::to_string(tid) + "\tCPU" + std::to_string(w) + "\n"));
	}
	if (!have_program("otf2-print"))
		GTEST_SKIP() << "otf2-print missing (Debian otf2-tools)";
	Output o = run("otf2-print -G '" + trace_anchor(dir_->archive()) + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_TRUE(contains(o.text, "OS thread id")) << o.text.substr(0, 3000);
	EXPECT_TRUE(contains(o.text, std::to_string(worker_tid[0]))) << o.text.substr(0, 3000);
}

// TASK_VERBOSE (as StarPU): the application thread's Building task, Submitting task and Waiting task.
TEST_F(TraceContent, SubmittingThreadStates)
{
	EXPECT_EQ(rows("State, UserThread", ", Building task").size(), size_t(kInserted + 1)) << "each starpu_task_insert";
	EXPECT_EQ(rows("State, UserThread", ", Submitting task").size(), size_t(kFlopTasks + kInserted + 3)) << "each submission";
	EXPECT_EQ(rows("State, UserThread", ", Waiting task").size(), 1u) << "starpu_task_wait";
	EXPECT_TRUE(contains(read_file(out_ + "/number_events.data"), "\n0x516e\t" + std::to_string(kFlopTasks + kInserted + 3) +
									  "\t_STARPU_FUT_TASK_SUBMIT_START\n"));
	if (!have_program("recsel"))
		GTEST_SKIP() << "recsel missing (Debian recutils)";
	Output o = run("recsel -c -e 'N = \"Submitting task\"' '" + out_ + "/trace.rec'");
	ASSERT_EQ(o.status, 0) << o.text;
	EXPECT_EQ(o.text, std::to_string(kFlopTasks + kInserted + 3) + "\n");
}

// The memory manager of RAM: Allocating then Freeing the runtime's buffer, its Used (MB) while it lives.
TEST_F(TraceContent, MemoryManagerStatesAndUse)
{
	EXPECT_GE(rows("State, MEMMANAGER0, Memory Node State, ", ", Allocating").size(), 1u) << dump_.substr(0, 3000);
	EXPECT_GE(rows("State, MEMMANAGER0, Memory Node State, ", ", Freeing").size(), 1u);
	EXPECT_NEAR(largest("Variable, MEMMANAGER0, Used (MB), "), 4096.0 * sizeof(double) / (1 << 20), 1e-5);
	std::string numbers = read_file(out_ + "/number_events.data");
	EXPECT_TRUE(contains(numbers, "\t_STARPU_FUT_START_ALLOC\n") && contains(numbers, "\t_STARPU_FUT_END_ALLOC\n") &&
		    contains(numbers, "\t_STARPU_FUT_START_FREE\n"))
		<< numbers;
}

// The task's state ends with the task and comes back with its callback (the per-task context): two intervals.
TEST_F(TraceContent, TaskStatesFollowTheirTask)
{
	std::vector<std::string> phase = rows("State, CPU", ", phase");
	EXPECT_EQ(phase.size(), 2u) << "its run and its callback";
	EXPECT_EQ(rows("Variable, program, phase-bytes, ", ", 300.000000").size(), 2u) << dump_.substr(0, 3000);
}

// Submission throttling (STARPU_LIMIT_MAX_SUBMITTED_TASKS): the held application thread's Th state, recorded with
// the default categories (StarPU's TASK). The held tasks end only once the submitter was seen held.
constexpr int kThrottled = 12;
std::atomic<bool> g_throttled{false};

void held_until_throttled(void **, void *)
{
	while (!g_throttled.load())
		sched_yield();
}

void throttled_workload()
{
	static starpu_codelet cl = cpu_codelet(held_until_throttled, 0, "held");
	g_throttled = false;
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_SUBMIT_THROTTLE_BEGIN) | ASTRO_OBSERVE_UNTIMED,
					 [](const astro_event *, void *) { g_throttled = true; }, nullptr);
	ASSERT_GE(id, 0);
	for (int i = 0; i < kThrottled; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	astro_observe_unsubscribe(id);
	EXPECT_TRUE(g_throttled.load());
}

TEST(TraceThrottle, HeldSubmitterIsInStateTh)
{
	TraceDir dir;
	std::string out;
	{
		ScopedEnv events("STARPU_FXT_EVENTS", nullptr);
		ScopedEnv max("STARPU_LIMIT_MAX_SUBMITTED_TASKS", "4"), min("STARPU_LIMIT_MIN_SUBMITTED_TASKS", "2");
		traced_and_converted(dir, throttled_workload, &out);
	}
	std::string paje = read_file(out + "/paje.trace");
	EXPECT_TRUE(contains(paje, "6\tTh\tUS\t\"Throttling task submission\"\t\".8 .6 .6\"")) << "StarPU's declaration";
	EXPECT_GE(count(paje, "\tUS\tTh\n"), 1u) << paje.substr(0, 3000);
	EXPECT_TRUE(contains(read_file(out + "/number_events.data"), "\t_STARPU_FUT_TASK_THROTTLE_START\n"));
	EXPECT_TRUE(contains(read_file(out + "/trace.json"), "\"name\":\"Throttling task submission\""));
	if (!have_program("pj_dump"))
		GTEST_SKIP() << "pj_dump missing (Debian pajeng)";
	Output d = run("pj_dump '" + out + "/paje.trace'");
	ASSERT_EQ(d.status, 0) << d.text.substr(0, 2000);
	size_t held = 0;
	std::istringstream lines(d.text);
	for (std::string line; std::getline(lines, line);)
		if (line.rfind("State, UserThread", 0) == 0 && contains(line, ", User Thread State, ") &&
		    line.size() > 28 && line.compare(line.size() - 28, 28, ", Throttling task submission") == 0)
			held++;
	EXPECT_GE(held, 1u) << d.text.substr(0, 3000);
	if (!have_program("recsel"))
		GTEST_SKIP() << "recsel missing (Debian recutils)";
	Output r = run("recsel -c -e 'N = \"Throttling task submission\"' '" + out + "/trace.rec'");
	ASSERT_EQ(r.status, 0) << r.text;
	EXPECT_GE(atoi(r.text.c_str()), 1) << r.text;
}

// ------------------------------------------------------------------ -memory-states, -no-acquire, -internal

// A disk node under a 1 MiB main memory: 2 MiB of data evicted to it and back (Reclaiming, WritingBack, DriverCopy); an
// acquisition that waits for a task (gated by a tag) and that a task waits for; an internal job waiting for that task
// (starpu_data_unregister_submit); starpu_data_wont_use and a prefetch to the disk.
std::string disk_folder;
std::atomic<bool> acquired{ false };
constexpr unsigned kDiskData = 8;
uintptr_t invalidated; // the handle starpu_data_invalidate() left with no valid copy

void disk_workload()
{
	int node = starpu_disk_register(&starpu_disk_unistd_ops, (void *)disk_folder.c_str(), STARPU_DISK_SIZE_MIN);
	ASSERT_GT(node, 0);
	static starpu_codelet fill = cpu_codelet(noop, 1, "fill");
	fill.modes[0] = STARPU_W;
	static starpu_codelet add = cpu_codelet(noop, 1, "add");
	add.modes[0] = STARPU_RW;
	const unsigned nx = 256 * 1024 / sizeof(int);
	starpu_data_handle_t h[kDiskData];
	for (unsigned d = 0; d < kDiskData; d++) {
		starpu_vector_data_register(&h[d], -1, 0, nx, sizeof(int));
		ASSERT_EQ(starpu_task_insert(&fill, STARPU_W, h[d], 0), 0);
	}
	for (unsigned round = 0; round < 2; round++)
		for (unsigned d = 0; d < kDiskData; d++)
			ASSERT_EQ(starpu_task_insert(&add, STARPU_RW, h[d], 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	// gate (waits for tag 0x30) -> the acquisition of h[1] -> next -> the unregistration of h[1].
	starpu_tag_declare_deps(0x31, 1, (starpu_tag_t)0x30);
	struct starpu_task *gate = starpu_task_create();
	gate->cl = &add;
	gate->handles[0] = h[1];
	gate->use_tag = 1;
	gate->tag_id = 0x31;
	ASSERT_EQ(starpu_task_submit(gate), 0);
	acquired = false;
	ASSERT_EQ(starpu_data_acquire_cb(h[1], STARPU_R, [](void *) { acquired = true; }, nullptr), 0);
	ASSERT_EQ(starpu_task_insert(&add, STARPU_RW, h[1], STARPU_NAME, "next", 0), 0);
	starpu_data_unregister_submit(h[1]);
	starpu_tag_notify_from_apps(0x30);
	ASSERT_TRUE(wait_until([] { return acquired.load(); }, 60000));
	starpu_data_release(h[1]);
	starpu_data_wont_use(h[2]);
	ASSERT_EQ(starpu_data_prefetch_on_node(h[3], (unsigned)node, 1), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_invalidate(h[5]);
	invalidated = (uintptr_t)h[5];
	for (unsigned d = 0; d < kDiskData; d++)
		if (d != 1)
			starpu_data_unregister(h[d]);
}

// A codelet, a state and an event named in Latin-1, not UTF-8 ("caf\xe9"): trace.json stays JSON, each name read back
// with U+FFFD in place of the byte that is not UTF-8; the name quoted and escaped too.

void latin1_workload()
{
	static starpu_codelet cl = cpu_codelet(noop, 0, "caf\xe9 \"quoted\"\\");
	ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_fxt_trace_user_event_string("user\xff\xfe" "event");
}

TEST(TraceJson, NamesThatAreNotUtf8StayJson)
{
	if (!have_program("python3"))
		GTEST_SKIP() << "python3 missing";
	TraceDir dir;
	std::string out;
	ASSERT_NO_FATAL_FAILURE(traced_and_converted(dir, latin1_workload, &out));
	Output j = run("python3 -c 'import json,sys; e=json.load(open(sys.argv[1], encoding=\"utf-8\"))[\"traceEvents\"];"
		       "print(ascii(sorted({x[\"name\"] for x in e if x.get(\"cat\") in (\"task\", \"event\")})))' '" + out + "/trace.json'");
	ASSERT_EQ(j.status, 0) << "trace.json is not JSON: " << j.text;
	EXPECT_EQ(j.text, "['caf\\ufffd \"quoted\"\\\\', 'user\\ufffd\\ufffdevent']\n");
}

class MemoryStates : public testing::Test
{
protected:
	static void SetUpTestSuite()
	{
		dir_ = new TraceDir;
		disk_folder = dir_->path() + "/swap";
		ScopedEnv limit("STARPU_LIMIT_CPU_MEM", "1");
		traced_run(*dir_, disk_workload);
	}
	static void TearDownTestSuite()
	{
		delete dir_;
		dir_ = nullptr;
	}
	// Converts the suite's archive with options into out/<name>; returns that folder.
	static std::string convert(const std::string &options, const std::string &name)
	{
		std::string out = dir_->path() + "/" + name;
		Output o = run(tool() + " " + options + " -d '" + out + "' -i '" + dir_->archive() + "'");
		EXPECT_EQ(o.status, 0) << o.text;
		return out;
	}
	// The dag.dot node of the job labelled label ("task_<job>"), "" when there is none.
	static std::string node_of(const std::string &dag, const std::string &label)
	{
		size_t at = dag.find("label=\"" + label + "\"");
		if (at == std::string::npos)
			return "";
		size_t open = dag.rfind("\"task_", at);
		return dag.substr(open + 1, dag.find('"', open + 1) - open - 1);
	}
	static TraceDir *dir_;
};
TraceDir *MemoryStates::dir_;

// paje.trace's lines, less those of the memory managers' containers (-memory-states may name a node first).
std::string without_node_containers(const std::string &paje)
{
	std::string kept;
	for (const std::string &line : lines_of(paje)) {
		if (line.rfind("7\t", 0) == 0 && (contains(line, "\tMn\t") || contains(line, "\tMm\t")))
			continue;
		if (line.rfind("13\t", 0) == 0 && contains(line, "\tmm") && contains(line, "\t0.000000") &&
		    (contains(line, "\tuse\t") || contains(line, "\tbwi_mm\t") || contains(line, "\tbwo_mm\t")))
			continue;
		kept += line + "\n";
	}
	return kept;
}

// The memory managers' states that need a second node: Reclaiming and WritingBack on main memory's as it evicts to the
// disk, DriverCopy on the disk's and back. Checked with pj_dump, with and without -memory-states.
TEST_F(MemoryStates, EvictionToADiskDrawsReclaimingWritingBackAndDriverCopy)
{
	if (!have_program("pj_dump"))
		GTEST_SKIP() << "pj_dump missing (Debian pajeng)";
	for (const char *options : { "", "-memory-states" }) {
		SCOPED_TRACE(options);
		std::string out = convert(options, std::string("states") + options);
		Output d = run("pj_dump '" + out + "/paje.trace'");
		ASSERT_EQ(d.status, 0) << d.text.substr(0, 2000);
		std::string dump = d.text;
		EXPECT_TRUE(contains(dump, "State, MEMMANAGER0, Memory Node State, ") && contains(dump, ", Reclaiming\n"))
			<< dump.substr(0, 4000);
		EXPECT_TRUE(contains(dump, ", WritingBack\n")) << dump.substr(0, 4000);
		EXPECT_TRUE(contains(dump, "State, MEMMANAGER1, Memory Node State, ")) << "copies to the disk";
		EXPECT_TRUE(contains(dump, ", DriverCopy\n"));
		EXPECT_TRUE(contains(dump, "Link, program, Intra-node data Fetch, ")) << "the transfers' links";
	}
}

// The memory managers' Bandwidth Out / In (MB/s) curves (StarPU's bwo_mm / bwi_mm, seed 004 section 4.1.1.3): while a copy
// is in flight, its bandwidth (0.001 x bytes / ms) is added to its source's Out and to its destination's In, and taken
// off at its end. So each curve never goes negative and ends at 0, and its area (MB/s x ms) is 0.001 x the bytes of the
// copies (pj_dump's Link rows: the same copies, same dates) that leave, or reach, that node.
TEST_F(MemoryStates, BandwidthCurvesOfTheCopiesBetweenNodes)
{
	if (!have_program("pj_dump"))
		GTEST_SKIP() << "pj_dump missing (Debian pajeng)";
	std::string out = convert("", "bandwidth");
	Output d = run("pj_dump -l 9 '" + out + "/paje.trace'");
	ASSERT_EQ(d.status, 0) << d.text.substr(0, 2000);
	std::map<std::string, double> bytes, area, highest, last_start, last; // "MEMMANAGER<n> In|Out" -> ...
	unsigned copies = 0;
	for (const std::string &line : lines_of(d.text)) {
		std::vector<std::string> f;
		for (size_t at = 0, comma; at <= line.size(); at = comma + 2) {
			comma = line.find(", ", at);
			if (comma == std::string::npos)
				comma = line.size();
			f.push_back(line.substr(at, comma - at));
		}
		if (f.size() == 10 && f[0] == "Link" && f[2] == "Intra-node data Fetch" && std::stod(f[5]) > 0) {
			bytes[f[7] + " Out"] += std::stod(f[6]);
			bytes[f[8] + " In"] += std::stod(f[6]);
			copies++;
		} else if (f.size() == 7 && f[0] == "Variable" && f[1].rfind("MEMMANAGER", 0) == 0 &&
			   f[2].rfind("Bandwidth ", 0) == 0) {
			std::string key = f[1] + (f[2] == "Bandwidth In (MB/s)" ? " In" : " Out");
			double start = std::stod(f[3]), value = std::stod(f[6]);
			EXPECT_GE(value, 0.0) << line;
			area[key] += value * std::stod(f[5]);
			highest[key] = std::max(highest[key], value);
			if (!last_start.count(key) || start >= last_start[key]) {
				last_start[key] = start;
				last[key] = value;
			}
		}
	}
	ASSERT_GT(copies, 0u) << "copies to the disk and back\n" << d.text.substr(0, 3000);
	for (const char *key : { "MEMMANAGER0 Out", "MEMMANAGER1 In", "MEMMANAGER1 Out", "MEMMANAGER0 In" }) {
		SCOPED_TRACE(key);
		EXPECT_GT(bytes[key], 0.0) << "main memory to the disk and back";
		EXPECT_GT(highest[key], 0.0) << d.text.substr(0, 3000);
		EXPECT_EQ(last[key], 0.0) << "back to 0 once the last copy ended";
		EXPECT_NEAR(area[key], 0.001 * bytes[key], 1e-4 * 0.001 * bytes[key]) << "the bytes of the copies";
	}
	// -no-bus: neither the copies nor their bandwidths.
	std::string quiet = read_file(convert("-no-bus", "no_bus") + "/paje.trace");
	ASSERT_FALSE(quiet.empty());
	for (const std::string &line : lines_of(quiet))
		EXPECT_FALSE((line.rfind("13\t", 0) == 0 && contains(line, "\tbw")) || contains(line, "\tcom_")) << line;
}

// starpu_fxt_stats (built beside starpu_fxt_tool) counts the bytes each way between main memory and the disk.
TEST_F(MemoryStates, FxtStatsCountsTheBytesBetweenTheNodes)
{
	std::string stats = tool().substr(0, tool().rfind('/') + 1) + "starpu_fxt_stats";
	Output o = run(stats + " -i '" + dir_->archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	std::vector<std::string> lines = lines_of(o.text);
	ASSERT_GE(lines.size(), 4u) << o.text;
	EXPECT_EQ(lines[0].rfind("Start : start time 0.000000e+00 end time ", 0), 0u) << o.text;
	double out_mb = 0, in_mb = 0;
	unsigned out_n = 0, in_n = 0;
	ASSERT_EQ(sscanf(lines[1].c_str(), "0 -> 1 \t %lf MB (%u transfers)", &out_mb, &out_n), 2) << o.text;
	ASSERT_EQ(sscanf(lines[2].c_str(), "1 -> 0 \t %lf MB (%u transfers)", &in_mb, &in_n), 2) << o.text;
	EXPECT_GT(out_mb, 0.0) << o.text;
	EXPECT_GT(in_n, 0u) << o.text;
	EXPECT_EQ(lines.back().rfind("There was ", 0), 0u) << o.text;
}

// -memory-states adds StarPU's event 22 definition, the memory managers' event types and, on them, the MSI states,
// wont-use, requests and the details of allocations, frees, write-backs and copies; nothing else changes.
TEST_F(MemoryStates, MemoryStatesAddTheDetailsAndNothingElse)
{
	std::string plain = read_file(convert("", "plain") + "/paje.trace");
	std::string out = convert("-memory-states", "detailed");
	std::string paje = read_file(out + "/paje.trace");
	ASSERT_FALSE(plain.empty());
	EXPECT_FALSE(contains(plain, "PajeNewEvent 22")) << "without the option: as before";
	EXPECT_FALSE(contains(plain, "\tMm\t\"data state owner\""));
	EXPECT_TRUE(contains(paje, "%EventDef PajeNewEvent 22\n%\tTime\tdate\n%\tType\tstring\n%\tContainer\tstring\n"
				   "%\tValue\tstring\n%\tHandle\tstring\n%\tInfo\tstring\n%\tSize\tstring\n%\tTid\tstring\n%EndEventDef\n"
				   "%EventDef PajeStartLink 23\n"));
	for (const char *type : { "2\tSI\tMm\t\"data state invalid\"", "2\tSO\tMm\t\"data state owner\"", "2\trc\tMm\t\"Request Created\"",
				  "2\tDCo\tMm\t\"DriverCopy Start\"", "2\tWbE\tMm\t\"WritingBack End\"" })
		EXPECT_TRUE(contains(paje, std::string(type) + "\t\"1.0 1.0 1.0\"\n")) << type;
	// Body lines: kind -> how many.
	std::map<std::string, int> lines;
	std::string kept;
	for (const std::string &line : lines_of(paje)) {
		std::vector<std::string> f;
		std::istringstream fields(line);
		for (std::string x; std::getline(fields, x, '\t');)
			f.push_back(x);
		if (f.size() == 9 && f[0] == "22") {
			lines[f[2]]++;
			EXPECT_EQ(f[3].rfind("mm", 0), 0u) << line;
			EXPECT_EQ(f[8].rfind("mm", 0), 0u) << line;
			if (f[2] == "rc") {
				EXPECT_NE(f[4], "0") << "the request's number: " << line;
				EXPECT_NE(f[5], "0") << "its handle: " << line;
			}
			if (f[2] == "DCo") {
				EXPECT_NE(f[5], "0") << line;
				EXPECT_NE(f[7], "0") << "the bytes copied: " << line;
			}
			continue;
		}
		if (f.size() == 5 && f[0] == "9" && (f[2] == "SI" || f[2] == "SS" || f[2] == "SO" || f[2] == "WU")) {
			lines[f[2]]++;
			continue;
		}
		kept += line + "\n";
	}
	for (const char *kind : { "SI", "SO", "WU", "rc", "Al", "AlE", "Fe", "FeE", "Wb", "WbE", "DCo", "DCoE" })
		EXPECT_GE(lines[kind], 1) << kind;
	EXPECT_EQ(lines["DCo"], lines["DCoE"]);
	EXPECT_EQ(lines["Wb"], lines["WbE"]);
	EXPECT_EQ(lines["WU"], 1) << "one starpu_data_wont_use";
	// The copies of the invalidated handle: each one's last state is invalid.
	char hex[32];
	snprintf(hex, sizeof(hex), "\t%lx", (unsigned long)invalidated);
	std::map<std::string, std::string> last; // memory manager -> its last state of the handle
	for (const std::string &line : lines_of(paje))
		if (line.rfind("9\t", 0) == 0 && line.size() > strlen(hex) && line.compare(line.size() - strlen(hex), strlen(hex), hex) == 0) {
			std::vector<std::string> f;
			std::istringstream fields(line);
			for (std::string x; std::getline(fields, x, '\t');)
				f.push_back(x);
			if (f.size() == 5 && f[3].rfind("mm", 0) == 0 && f[2] != "WU")
				last[f[3]] = f[2];
		}
	ASSERT_FALSE(last.empty()) << hex;
	for (const auto &node : last)
		EXPECT_EQ(node.second, "SI") << node.first;
	// The rest is the plain conversion's (the header's additions and the memory nodes' containers aside).
	std::string header_added;
	for (const std::string &line : lines_of(kept))
		if (!(line.rfind("2\t", 0) == 0 && contains(line, "\tMm\t")))
			header_added += line + "\n";
	size_t def = header_added.find("%EventDef PajeNewEvent 22\n");
	ASSERT_NE(def, std::string::npos);
	header_added.erase(def, header_added.find("%EndEventDef\n", def) + 13 - def);
	EXPECT_EQ(without_node_containers(header_added), without_node_containers(plain));
	if (have_program("pj_dump")) {
		Output d = run("pj_dump '" + out + "/paje.trace'");
		ASSERT_EQ(d.status, 0) << d.text.substr(0, 2000);
		EXPECT_TRUE(contains(d.text, "Event, MEMMANAGER0, data state owner, ")) << d.text.substr(0, 3000);
		EXPECT_TRUE(contains(d.text, "Event, MEMMANAGER0, Request Created, ") || contains(d.text, "Event, MEMMANAGER1, Request Created, "));
		EXPECT_TRUE(contains(d.text, "Event, MEMMANAGER1, DriverCopy Start, "));
	}
	if (have_program("recsel")) {
		for (const char *rec : { "tasks.rec", "data.rec", "trace.rec" }) {
			Output r = run(std::string("recsel -c '") + out + "/" + rec + "'");
			EXPECT_EQ(r.status, 0) << rec << ": " << r.text;
		}
		EXPECT_EQ(read_file(out + "/tasks.rec"), read_file(dir_->path() + "/plain/tasks.rec")) << "-memory-states: paje.trace only";
	}
}

// dag.dot draws acquisitions as StarPU does (grey, _starpu_data_acquire_*, with their dependencies) unless -no-acquire,
// and the runtime's internal jobs only with -internal. Each rendered by dot.
TEST_F(MemoryStates, AcquisitionsAndInternalJobsInTheDag)
{
	std::string dag = read_file(convert("", "dag") + "/dag.dot");
	std::string acquire = node_of(dag, "_starpu_data_acquire_cb_post");
	ASSERT_FALSE(acquire.empty()) << dag;
	EXPECT_TRUE(contains(dag, "\"" + acquire + "\" [ style=filled, label=\"_starpu_data_acquire_cb_post\", fillcolor=\"#aaaaaa\", fontcolor=\"white\"]\n"));
	std::string next = node_of(dag, "next");
	ASSERT_FALSE(next.empty()) << dag;
	EXPECT_TRUE(contains(dag, "->\"" + acquire + "\"\n")) << "the gate before it: " << dag;
	EXPECT_TRUE(contains(dag, "\"" + acquire + "\"->\"" + next + "\"\n")) << "the task after it: " << dag;
	EXPECT_FALSE(contains(dag, "starpu_data_unregister_submit")) << "internal jobs are left out by default";
	EXPECT_EQ(count(dag, "\"" + next + "\"->"), 0u) << "nor their edges: " << dag;

	std::string hidden = read_file(convert("-no-acquire", "noacquire") + "/dag.dot");
	EXPECT_FALSE(contains(hidden, "_starpu_data_acquire")) << hidden;
	EXPECT_FALSE(contains(hidden, "\"" + acquire + "\"")) << "nor its edges: " << hidden;
	EXPECT_TRUE(contains(hidden, "label=\"next\""));

	std::string internal = read_file(convert("-internal -label-deps", "internal") + "/dag.dot");
	std::string unregister = node_of(internal, "starpu_data_unregister_submit");
	ASSERT_FALSE(unregister.empty()) << internal;
	EXPECT_TRUE(contains(internal, "\"" + next + "\"->\"" + unregister + "\" [label=\"task\"]\n")) << internal;
	EXPECT_TRUE(contains(internal, "label=\"starpu_data_prefetch_on_node\"")) << internal;
	EXPECT_TRUE(contains(internal, "label=\"starpu_data_wont_use\"")) << internal;
	EXPECT_TRUE(contains(internal, "label=\"_starpu_data_acquire_cb_post\""));

	if (!have_program("dot"))
		GTEST_SKIP() << "dot missing (Debian graphviz)";
	for (const char *name : { "dag", "noacquire", "internal" }) {
		std::string path = dir_->path() + "/" + name + "/dag.dot";
		Output o = run("dot -Tsvg '" + path + "' -o '" + path + ".svg'");
		EXPECT_EQ(o.status, 0) << name << ": " << o.text;
		EXPECT_TRUE(contains(read_file(path + ".svg"), "</svg>")) << name;
	}
}

// -number-events counts the new kinds under StarPU's codes.
TEST_F(MemoryStates, NumberEventsNamesTheCoherencyEvents)
{
	std::string numbers = read_file(convert("-number-events", "numbers") + "/number_events.data");
	for (const char *kind : { "\t_STARPU_FUT_DATA_STATE_OWNER\n", "\t_STARPU_FUT_DATA_STATE_INVALID\n", "\t_STARPU_FUT_DATA_REQUEST_CREATED\n",
				  "\t_STARPU_FUT_DATA_WONT_USE\n", "\tastro_runtime_job\n", "\t_STARPU_FUT_START_WRITEBACK\n",
				  "\t_STARPU_FUT_START_MEMRECLAIM\n" })
		EXPECT_TRUE(contains(numbers, kind)) << kind << numbers;
	EXPECT_TRUE(contains(numbers, "0x512c\t1\t_STARPU_FUT_DATA_WONT_USE\n")) << numbers;
}

// An archive recorded without the DATA category has no details to draw: -memory-states still gives a paje.trace that
// pj_dump reads (the definitions, no detail line); -no-acquire and -internal change nothing there.
TEST(MemoryStatesInput, ArchiveWithoutDataCategoryConvertsWithTheOptions)
{
	TraceDir dir;
	{
		ScopedEnv events("STARPU_FXT_EVENTS", "TASK");
		traced_run(dir);
	}
	std::string out = dir.path() + "/out";
	Output o = run(tool() + " -memory-states -no-acquire -internal -d '" + out + "' -i '" + dir.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	std::string paje = read_file(out + "/paje.trace");
	EXPECT_TRUE(contains(paje, "%EventDef PajeNewEvent 22\n"));
	for (const std::string &line : lines_of(paje))
		EXPECT_NE(line.rfind("22\t", 0), 0u) << line;
	if (have_program("pj_dump")) {
		Output d = run("pj_dump '" + out + "/paje.trace'");
		EXPECT_EQ(d.status, 0) << d.text.substr(0, 2000);
	}
	// A missing archive with the options: one message naming it, nothing converted.
	Output bad = run(tool() + " -memory-states -internal -i '" + dir.path() + "/nothing-here'");
	EXPECT_NE(bad.status, 0);
	EXPECT_TRUE(contains(bad.text, "nothing-here")) << bad.text;
}


// Scheduling contexts: StarPU's InCtx<k> states. Worker 0 alone in one context, worker 1 in another; tasks reach the
// first through task->sched_ctx, the second through starpu_sched_ctx_set_context (the submitting thread's default),
// and one more runs in the default context (0), which has no Ctx state.
constexpr int kCtxTasks = 4;
unsigned g_ctx[2];

void two_contexts()
{
	static starpu_codelet in_a = cpu_codelet(noop, 0, "in_a");
	static starpu_codelet in_b = cpu_codelet(noop, 0, "in_b");
	static starpu_codelet plain = cpu_codelet(noop, 0, "plain");
	in_b.color = 0x3366ff;
	int w0[] = { 0 }, w1[] = { 1 };
	g_ctx[0] = starpu_sched_ctx_create(w0, 1, "ctx_a", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
	g_ctx[1] = starpu_sched_ctx_create(w1, 1, "ctx_b", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
	ASSERT_NE(g_ctx[0], g_ctx[1]);
	for (int i = 0; i < kCtxTasks; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &in_a;
		t->sched_ctx = g_ctx[0];
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	starpu_sched_ctx_set_context(&g_ctx[1]);
	for (int i = 0; i < kCtxTasks; i++)
		ASSERT_EQ(submit_detached(&in_b), 0);
	unsigned none = STARPU_NMAX_SCHED_CTXS;
	starpu_sched_ctx_set_context(&none);
	ASSERT_EQ(submit_detached(&plain), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_sched_ctx_delete(g_ctx[0]);
	starpu_sched_ctx_delete(g_ctx[1]);
}

// The rows of a pj_dump output that start with prefix and end with suffix.
std::vector<std::string> dump_rows(const std::string &dump, const std::string &prefix, const std::string &suffix)
{
	std::vector<std::string> found;
	for (const std::string &line : lines_of(dump))
		if (line.rfind(prefix, 0) == 0 && line.size() >= suffix.size() &&
		    line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0)
			found.push_back(line);
	return found;
}

TEST(TraceSchedCtx, TasksOfAContextAreInCtxStatesOfItsWorkers)
{
	if (!have_program("pj_dump"))
		GTEST_SKIP() << "pj_dump missing (Debian pajeng)";
	TraceDir dir;
	std::string out;
	ASSERT_NO_FATAL_FAILURE(traced_and_converted(dir, two_contexts, &out));
	std::string paje = read_file(out + "/paje.trace");
	const std::string a = std::to_string(g_ctx[0]), b = std::to_string(g_ctx[1]);
	// The header: StarPU's 9 state types and the worker states' values for each.
	for (int k = 1; k <= 9; k++) {
		std::string ctx = "Ctx" + std::to_string(k);
		EXPECT_TRUE(contains(paje, "3\t" + ctx + "\tW\t\"InCtx" + std::to_string(k) + "\"\n")) << k;
		EXPECT_TRUE(contains(paje, "6\tB\t" + ctx + "\t\"Overhead\"\t\".5 .18 .0\"\n")) << k;
		EXPECT_TRUE(contains(paje, "6\tin_a_" + std::to_string(k) + "\t" + ctx + "\tin_a\t\"")) << k;
	}
	EXPECT_TRUE(contains(paje, "6\tin_a_1\tCtx1\tin_a\t\"1.0 0.39 1.0\"\n")) << "StarPU's palette";
	EXPECT_TRUE(contains(paje, "6\tin_b_2\tCtx2\tin_b\t\".0 1.0 .0\"\n"));
	EXPECT_FALSE(contains(paje, "\tCtx0\t"));
	// Each task of a context: one 10 and one 21 line on its worker, for its context only.
	EXPECT_EQ(count(paje, "\tw0\tCtx" + a + "\tin_a\n"), (size_t)kCtxTasks) << paje.substr(0, 200);
	EXPECT_EQ(count(paje, "\tw1\tCtx" + b + "\tin_b\n"), (size_t)kCtxTasks);
	EXPECT_EQ(count(paje, "\n21\t"), (size_t)(2 * kCtxTasks));
	EXPECT_FALSE(contains(paje, "\tplain\n21\t")) << "the default context has no Ctx state";
	Output d = run("pj_dump '" + out + "/paje.trace'");
	ASSERT_EQ(d.status, 0) << d.text.substr(0, 2000);
	std::string ctx_rows;
	for (const std::string &row : dump_rows(d.text, "State, CPU", ""))
		if (contains(row, "InCtx"))
			ctx_rows += row + "\n";
	// Each task twice at its start, as its WS state: event 10 (a zero-length row), then 21 until the worker's next task in
	// that context (StarPU ends a Ctx state no other way).
	EXPECT_EQ(dump_rows(d.text, "State, CPU0, InCtx" + a + ", ", ", in_a").size(), (size_t)(2 * kCtxTasks)) << ctx_rows;
	EXPECT_EQ(dump_rows(d.text, "State, CPU1, InCtx" + b + ", ", ", in_b").size(), (size_t)(2 * kCtxTasks)) << ctx_rows;
	EXPECT_TRUE(dump_rows(d.text, "State, CPU1, InCtx" + a, "").empty()) << "worker 1 is not in the first context";
	EXPECT_TRUE(dump_rows(d.text, "State, CPU0, InCtx" + b, "").empty());
	EXPECT_TRUE(dump_rows(d.text, "State, CPU", ", plain").size() >= 1u) << "its WS state";
	EXPECT_EQ(dump_rows(d.text, "State, CPU0, InCtx", ", plain").size() + dump_rows(d.text, "State, CPU1, InCtx", ", plain").size(), 0u);

	// -use-task-color: the Ctx values take the task's colour (in_b's codelet colour, in_a's default green).
	std::string coloured = dir.path() + "/coloured";
	Output o = run(tool() + " -use-task-color -d '" + coloured + "' -i '" + dir.archive() + "'");
	ASSERT_EQ(o.status, 0) << o.text;
	std::string cpaje = read_file(coloured + "/paje.trace");
	for (int k = 1; k <= 9; k++) {
		EXPECT_TRUE(contains(cpaje, "6\tin_b_" + std::to_string(k) + "\tCtx" + std::to_string(k) + "\tin_b\t\"0.200000 0.400000 1.000000\"\n"))
			<< k;
		EXPECT_TRUE(contains(cpaje, "6\tin_a_" + std::to_string(k) + "\tCtx" + std::to_string(k) + "\tin_a\t\"0.000000 0.600000 0.400000\"\n"))
			<< k;
	}
	EXPECT_FALSE(contains(cpaje, "\"1.0 0.39 1.0\"")) << "no palette colour left";
	// Nothing else changes.
	std::string palette_free = paje, task_coloured = cpaje;
	for (std::string *text : { &palette_free, &task_coloured }) {
		std::string kept;
		for (const std::string &line : lines_of(*text))
			if (!(line.rfind("6\t", 0) == 0 && line.find("\tCtx") != std::string::npos))
				kept += line + "\n";
		*text = kept;
	}
	EXPECT_EQ(palette_free, task_coloured);
	Output cd = run("pj_dump '" + coloured + "/paje.trace'");
	EXPECT_EQ(cd.status, 0) << cd.text.substr(0, 2000);
}

// A run without contexts: the header declares the Ctx types as StarPU does, and no state of the body uses them.
TEST_F(Converted, NoContextNoCtxState)
{
	std::string paje = read_file(file("paje.trace"));
	EXPECT_TRUE(contains(paje, "3\tCtx9\tW\t\"InCtx9\"\n"));
	EXPECT_EQ(count(paje, "\n21\t"), 0u);
	for (const std::string &line : lines_of(paje))
		EXPECT_FALSE(line.rfind("10\t", 0) == 0 && line.find("\tCtx") != std::string::npos) << line;
}

// ------------------------------------------------------------------ golden files

// golden/archive, recorded once from golden/workload.c (a fixed workload: named data, data and tag dependencies,
// priorities, flops, an iteration, user events), converted here: every output the same, byte for byte, as
// golden/expected's, and no other. A change of an output's format shows here first; golden/README says how to
// make the expected outputs again when the change is meant.
TEST(Golden, TheCommittedArchiveConvertsToTheExpectedOutputs)
{
	std::string golden = env_or("ASTRO_TOP_SRCDIR", "../../..") + "/plugins/tools/trace/golden";
	TraceDir out;
	Output r = run("cd '" + out.path() + "' && '" + tool() + "' -number-events -i '" + golden + "/archive'");
	ASSERT_EQ(r.status, 0) << r.text;
	std::vector<std::string> expected, produced;
	for (const auto &f : std::filesystem::directory_iterator(golden + "/expected"))
		expected.push_back(f.path().filename().string());
	for (const auto &f : std::filesystem::directory_iterator(out.path()))
		produced.push_back(f.path().filename().string());
	std::sort(expected.begin(), expected.end());
	std::sort(produced.begin(), produced.end());
	ASSERT_GE(expected.size(), 10u) << "golden/expected is missing files";
	EXPECT_EQ(produced, expected);
	for (const std::string &name : expected) {
		std::string want = read_file(golden + "/expected/" + name), got = read_file(out.path() + "/" + name);
		if (want == got)
			continue;
		std::istringstream a(want), b(got);
		std::string la, lb;
		int line = 1;
		while (std::getline(a, la) && std::getline(b, lb) && la == lb)
			line++;
		ADD_FAILURE() << name << " differs from golden/expected/" << name << " first at line " << line << ":\n  expected: " << la
			      << "\n  got:      " << lb;
	}
}


// Issue 38: each worker's period in activity.data holds the time it executed and slept in it, so that the shares
// starpu_workers_activity and the HTML report print add up to 100% at most (the rest is the runtime's). A worker's
// first state was counted in a period said to start when that state ended (CPU 0: 145% in the golden archive).
TEST(Golden, ActivitySharesOfEachPeriodAddUpTo100PercentAtMost)
{
	std::string golden = env_or("ASTRO_TOP_SRCDIR", "../../..") + "/plugins/tools/trace/golden";
	TraceDir out;
	Output r = run("cd '" + out.path() + "' && '" + tool() + "' -i '" + golden + "/archive'");
	ASSERT_EQ(r.status, 0) << r.text;
	std::istringstream lines(read_file(out.path() + "/activity.data"));
	std::string line;
	int periods = 0;
	while (std::getline(lines, line)) {
		int worker;
		double end, elapsed, exec, sleep;
		if (sscanf(line.c_str(), "%d\t%lf\t%lf\t%lf\t%lf", &worker, &end, &elapsed, &exec, &sleep) != 5)
			continue;
		periods++;
		EXPECT_GT(elapsed, 0) << line;
		EXPECT_LE(exec + sleep, elapsed + 1e-6) << "worker " << worker << ": executing " << 100 * exec / elapsed
							<< "%, sleeping " << 100 * sleep / elapsed << "% (" << line << ")";
	}
	EXPECT_EQ(periods, 2) << "one period per worker of the golden archive";
}

} // namespace
