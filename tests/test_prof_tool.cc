// SPDX-License-Identifier: LGPL-2.1-or-later
// The profiling-tool interface: real tool libraries loaded with
// STARPU_PROF_TOOL (two recording tools writing into proftool_shared_log
// below, a tool written for StarPU 1.4, broken tools), the tool plugins
// print and stats, and tools preloaded or linked into a program. Event
// counts, their order and their fields are checked against the work done.
#include "helpers.h"
#include "plugins/proftool_log.h"

#include <map>
#include <sstream>
#include <set>
#include <type_traits>

#include <sys/syscall.h>
#include <sys/wait.h>

// Exported (the test is linked with -export-dynamic): the recording tools write here.
extern "C" {
struct proftool_log proftool_shared_log;
}

using namespace astro_test;

namespace {

proftool_log &g_log = proftool_shared_log;

enum { TOOL_A = 0, TOOL_B = 1, TOOL_PLAIN = 2 };

void work(void **, void *)
{
	volatile int x = 0;
	for (int i = 0; i < 100; i++)
		x = x + i;
}

starpu_codelet g_work_cl = cpu_codelet(work, 0, "work");

int run_work(int n)
{
	for (int i = 0; i < n; i++)
		if (submit_detached(&g_work_cl) != 0)
			return -1;
	return starpu_task_wait_for_all();
}

int gettid_now()
{
	return (int)syscall(SYS_gettid);
}

// Records of the log, in the order they were written.
std::vector<proftool_record> records()
{
	int n = __atomic_load_n(&g_log.n, __ATOMIC_ACQUIRE);
	EXPECT_LE(n, PROFTOOL_LOG_CAPACITY);
	return std::vector<proftool_record>(g_log.records, g_log.records + std::min(n, PROFTOOL_LOG_CAPACITY));
}

std::vector<proftool_record> records_of(int tool, int callback)
{
	std::vector<proftool_record> out;
	for (const proftool_record &r : records())
		if (r.tool == tool && r.callback == callback)
			out.push_back(r);
	return out;
}

std::map<int, int> count_by_event(const std::vector<proftool_record> &recs)
{
	std::map<int, int> counts;
	for (const proftool_record &r : recs)
		counts[r.event]++;
	return counts;
}

int count_lines_with(const std::string &text, const std::string &needle)
{
	int n = 0;
	size_t pos = 0;
	while ((pos = text.find(needle, pos)) != std::string::npos) {
		n++;
		pos += needle.size();
	}
	return n;
}

class ProfTool : public ::testing::Test
{
protected:
	void SetUp() override
	{
		memset(&g_log, 0, sizeof(g_log));
		ASSERT_FALSE(test_plugin_dir().empty()) << "ASTRO_TEST_PLUGIN_DIR is not set: run through make check";
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}

	static std::string tool(const std::string &name) { return test_plugin(name + ".so"); }

	// starpu_init() with STARPU_PROF_TOOL=tools and ncpus workers; its stderr goes to *err.
	int start(const std::string &tools, int ncpus, std::string *err)
	{
		ScopedEnv prof_tool("STARPU_PROF_TOOL", tools);
		int ret = -1;
		*err = stderr_of([&] { ret = init_with_ncpus(ncpus); });
		return ret;
	}
	std::string stop()
	{
		return stderr_of([] { starpu_shutdown(); });
	}

	ScopedEnv prof_tool_{"STARPU_PROF_TOOL", nullptr};
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
	ScopedEnv silent_{"STARPU_SILENT", nullptr};
	ScopedEnv verbose_{"STARPU_PLUGIN_VERBOSE", nullptr};
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
};

// ----------------------------------------------------------- the workload

TEST_F(ProfTool, KnownWorkloadCountsAndOrder)
{
	const int W = 2, N = 40;
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), W, &err), 0) << err;
	EXPECT_EQ(err, "");
	std::vector<int> devids;
	for (int w = 0; w < W; w++)
		devids.push_back(starpu_worker_get_devid(w));
	ASSERT_EQ(run_work(N), 0);
	err = stop();
	EXPECT_EQ(err, "");

	EXPECT_EQ(g_log.handshakes[TOOL_A], 1);
	EXPECT_EQ(g_log.handshake_version[TOOL_A], (unsigned)ASTRO_PROF_TOOL_INTERFACE_VERSION);
	EXPECT_EQ(g_log.registered[TOOL_A], 1);
	EXPECT_EQ(g_log.finalized[TOOL_A], 1);

	std::vector<proftool_record> first = records_of(TOOL_A, 0);
	std::map<int, int> counts = count_by_event(first);
	std::map<int, int> expected = {
		{ starpu_prof_tool_event_init_begin, 1 }, { starpu_prof_tool_event_init, 1 },
		{ starpu_prof_tool_event_driver_init, W }, { starpu_prof_tool_event_driver_init_start, W },
		{ starpu_prof_tool_event_driver_init_end, W }, { starpu_prof_tool_event_init_end, 1 },
		{ starpu_prof_tool_event_start_cpu_exec, N }, { starpu_prof_tool_event_end_cpu_exec, N },
		{ starpu_prof_tool_event_driver_deinit, W }, { starpu_prof_tool_event_terminate, 1 },
		{ PROFTOOL_FINALIZE, 1 },
	};
	EXPECT_EQ(counts, expected);
	std::map<int, int> second = count_by_event(records_of(TOOL_A, 1));
	std::map<int, int> expected_second = { { starpu_prof_tool_event_start_cpu_exec, N }, { starpu_prof_tool_event_end_cpu_exec, N } };
	EXPECT_EQ(second, expected_second);

	// Order: init_begin, init, the drivers, init_end, the tasks, the drivers going, terminate, finalize.
	ASSERT_GE(first.size(), 4u);
	EXPECT_EQ(first[0].event, starpu_prof_tool_event_init_begin);
	EXPECT_EQ(first[1].event, starpu_prof_tool_event_init);
	EXPECT_EQ(first[first.size() - 2].event, starpu_prof_tool_event_terminate);
	EXPECT_EQ(first.back().event, PROFTOOL_FINALIZE);
	size_t init_end = 0, first_exec = first.size(), last_exec = 0, first_deinit = first.size();
	for (size_t i = 0; i < first.size(); i++) {
		int e = first[i].event;
		if (e == starpu_prof_tool_event_init_end)
			init_end = i;
		if (e == starpu_prof_tool_event_start_cpu_exec || e == starpu_prof_tool_event_end_cpu_exec) {
			first_exec = std::min(first_exec, i);
			last_exec = i;
		}
		if (e == starpu_prof_tool_event_driver_deinit)
			first_deinit = std::min(first_deinit, i);
	}
	for (size_t i = 0; i < first.size(); i++) {
		int e = first[i].event;
		if (e == starpu_prof_tool_event_driver_init || e == starpu_prof_tool_event_driver_init_start ||
		    e == starpu_prof_tool_event_driver_init_end) {
			EXPECT_LT(i, init_end) << "driver event " << e << " after init_end";
		}
	}
	EXPECT_LT(init_end, first_exec);
	EXPECT_LT(last_exec, first_deinit);

	const int app_tid = gettid_now();
	std::map<int, int> worker_tid;
	for (const proftool_record &r : first) {
		if (r.event == PROFTOOL_FINALIZE)
			continue;
		// StarPU's fields, and the Astrolabe ones, on every event.
		EXPECT_EQ(r.info.starpu_version[0], (unsigned)STARPU_MAJOR_VERSION);
		EXPECT_EQ(r.info.starpu_version[1], (unsigned)STARPU_MINOR_VERSION);
		EXPECT_EQ(r.info.starpu_version[2], (unsigned)STARPU_RELEASE_VERSION);
		EXPECT_EQ(r.info.event_type, r.event);
		EXPECT_EQ(r.event_info_type, r.event);
		EXPECT_EQ(r.ext.event_type, r.event);
		EXPECT_EQ(r.ext.interface_version, (unsigned)ASTRO_PROF_TOOL_INTERFACE_VERSION);
		EXPECT_NE(r.info.conf, nullptr);
		EXPECT_FALSE(r.api_info_null);
		EXPECT_GT(r.ext.time_us, 0.0);
		EXPECT_EQ(r.info.memnode, 0u);
		EXPECT_EQ(r.info.bytes_to_transfer, 0u);
		EXPECT_EQ(r.info.bytes_transfered, 0u);
		switch (r.event) {
		case starpu_prof_tool_event_init_begin:
		case starpu_prof_tool_event_init:
		case starpu_prof_tool_event_init_end:
		case starpu_prof_tool_event_terminate:
			EXPECT_EQ(r.info.worker_id, -1);
			EXPECT_EQ(r.info.thread_id, app_tid);
			EXPECT_EQ(r.info.fun_ptr, nullptr);
			EXPECT_EQ(r.info.task_name, nullptr);
			EXPECT_EQ(r.ext.task, nullptr);
			break;
		default:
			ASSERT_GE(r.info.worker_id, 0);
			ASSERT_LT(r.info.worker_id, W);
			EXPECT_NE(r.info.thread_id, app_tid);
			EXPECT_EQ(r.info.driver_type, starpu_prof_tool_driver_cpu);
			EXPECT_EQ(r.info.device_number, devids[r.info.worker_id]);
			// One thread per worker, the same from driver_init to driver_deinit.
			if (!worker_tid.count(r.info.worker_id))
				worker_tid[r.info.worker_id] = r.info.thread_id;
			EXPECT_EQ(r.info.thread_id, worker_tid[r.info.worker_id]);
			break;
		}
	}
	EXPECT_EQ(worker_tid.size(), (size_t)W);

	// Per worker: init, init_start, init_end, then start/end pairs of one job each, then deinit.
	std::set<unsigned long> jobs;
	for (int w = 0; w < W; w++) {
		std::vector<proftool_record> mine;
		for (const proftool_record &r : first)
			if (r.event != PROFTOOL_FINALIZE && r.info.worker_id == w)
				mine.push_back(r);
		ASSERT_GE(mine.size(), 4u);
		EXPECT_EQ(mine[0].event, starpu_prof_tool_event_driver_init);
		EXPECT_EQ(mine[1].event, starpu_prof_tool_event_driver_init_start);
		EXPECT_EQ(mine[2].event, starpu_prof_tool_event_driver_init_end);
		EXPECT_EQ(mine.back().event, starpu_prof_tool_event_driver_deinit);
		ASSERT_EQ((mine.size() - 4) % 2, 0u);
		for (size_t i = 3; i + 1 < mine.size(); i += 2) {
			const proftool_record &s = mine[i], &e = mine[i + 1];
			ASSERT_EQ(s.event, starpu_prof_tool_event_start_cpu_exec);
			ASSERT_EQ(e.event, starpu_prof_tool_event_end_cpu_exec);
			EXPECT_EQ(s.ext.job_id, e.ext.job_id);
			EXPECT_GE(e.ext.time_us, s.ext.time_us);
			for (const proftool_record *r : { &s, &e }) {
				EXPECT_EQ(r->info.fun_ptr, (void *)work);
				EXPECT_STREQ(r->info.task_name, "work");
				EXPECT_EQ(r->info.model_name, nullptr);
				EXPECT_STREQ(r->ext.codelet_name, "work");
				EXPECT_EQ(r->ext.nbuffers, 0u);
				EXPECT_EQ(r->ext.nimpl, 0u);
			}
			EXPECT_TRUE(jobs.insert(s.ext.job_id).second) << "job " << s.ext.job_id << " started twice";
		}
	}
	EXPECT_EQ(jobs.size(), (size_t)N);
}

void touch(void **buffers, void *)
{
	float *v = (float *)STARPU_VECTOR_GET_PTR(buffers[0]);
	v[0] += 1.0f;
}

TEST_F(ProfTool, TaskPayload)
{
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), 1, &err), 0) << err;
	std::vector<float> data(1000, 0.0f);
	starpu_data_handle_t handle;
	starpu_vector_data_register(&handle, STARPU_MAIN_RAM, (uintptr_t)data.data(), 1000, sizeof(float));
	starpu_codelet cl = cpu_codelet(touch, 1, "payload");
	cl.modes[0] = STARPU_RW;
	struct starpu_task *task = starpu_task_create();
	task->cl = &cl;
	task->handles[0] = handle;
	task->name = "payload-task";
	task->detach = 0;
	task->destroy = 0; // the records point into it until the checks are done
	ASSERT_EQ(starpu_task_submit(task), 0);
	ASSERT_EQ(starpu_task_wait(task), 0);

	int seen = 0;
	for (const proftool_record &r : records_of(TOOL_A, 0)) {
		if (r.event != starpu_prof_tool_event_start_cpu_exec && r.event != starpu_prof_tool_event_end_cpu_exec)
			continue;
		seen++;
		EXPECT_EQ(r.ext.task, task);
		EXPECT_NE(r.ext.job_id, 0ul);
		EXPECT_STREQ(r.info.task_name, "payload-task");
		EXPECT_STREQ(r.ext.codelet_name, "payload");
		EXPECT_EQ(r.info.fun_ptr, (void *)touch);
		EXPECT_EQ(r.ext.nbuffers, 1u);
		ASSERT_NE(r.ext.handles, nullptr);
		EXPECT_EQ(r.ext.handles[0], handle);
		EXPECT_EQ(r.ext.data_size, 1000 * sizeof(float));
	}
	EXPECT_EQ(seen, 2);
	starpu_task_destroy(task);
	starpu_data_unregister(handle);
}

// Each execution event names the context its task ran in; the other events name none.
TEST_F(ProfTool, ExecutionEventsNameTheTasksContext)
{
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), 2, &err), 0) << err;
	if (!policy_registered("eager") || !policy_registered("prio"))
		GTEST_SKIP() << "policies eager and prio are needed";
	int w0[] = {0}, w1[] = {1};
	unsigned c1 = starpu_sched_ctx_create(w0, 1, "first", STARPU_SCHED_CTX_POLICY_NAME, "eager", 0);
	unsigned c2 = starpu_sched_ctx_create(w1, 1, "second", STARPU_SCHED_CTX_POLICY_NAME, "prio", 0);
	ASSERT_LT(c1, (unsigned)STARPU_NMAX_SCHED_CTXS);
	ASSERT_LT(c2, (unsigned)STARPU_NMAX_SCHED_CTXS);
	static starpu_codelet in_c1 = cpu_codelet(work, 0, "in_c1");
	static starpu_codelet in_c2 = cpu_codelet(work, 0, "in_c2");
	const int N = 10;
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(submit_detached(&g_work_cl), 0);
		for (auto [cl, ctx] : { std::pair<starpu_codelet *, unsigned>{ &in_c1, c1 }, { &in_c2, c2 } }) {
			struct starpu_task *t = starpu_task_create();
			t->cl = cl;
			ASSERT_EQ(starpu_task_submit_to_ctx(t, ctx), 0);
		}
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(c1), 0);
	ASSERT_EQ(starpu_task_wait_for_all_in_ctx(c2), 0);
	starpu_sched_ctx_delete(c1);
	starpu_sched_ctx_delete(c2);

	std::map<std::string, std::set<unsigned>> ctx_of;
	std::map<std::string, int> seen;
	int others = 0;
	for (const proftool_record &r : records_of(TOOL_A, 0)) {
		if (r.event == PROFTOOL_FINALIZE)
			continue;
		if (r.event != starpu_prof_tool_event_start_cpu_exec && r.event != starpu_prof_tool_event_end_cpu_exec) {
			EXPECT_EQ(r.ext.sched_ctx, (unsigned)STARPU_NMAX_SCHED_CTXS) << "event " << r.event;
			others++;
			continue;
		}
		ASSERT_NE(r.ext.codelet_name, nullptr);
		ctx_of[r.ext.codelet_name].insert(r.ext.sched_ctx);
		seen[r.ext.codelet_name]++;
	}
	EXPECT_GT(others, 0);
	EXPECT_EQ(seen["work"], 2 * N);
	EXPECT_EQ(seen["in_c1"], 2 * N);
	EXPECT_EQ(seen["in_c2"], 2 * N);
	EXPECT_EQ(ctx_of["work"], std::set<unsigned>{ 0u });
	EXPECT_EQ(ctx_of["in_c1"], std::set<unsigned>{ c1 });
	EXPECT_EQ(ctx_of["in_c2"], std::set<unsigned>{ c2 });
}

void touch_nothing(void **, void *) {}

// The Astrolabe extension is for the tools that take part: a plain StarPU tool
// gets StarPU's fields and the event type only, and costs no clock reading;
// once a tool that did the handshake is loaded, every tool gets it.
TEST_F(ProfTool, ExtensionOnlyForToolsThatTakePart)
{
	starpu_codelet cl = cpu_codelet(touch_nothing, 0, "plain");
	for (bool with_a : { false, true }) {
		memset(&g_log, 0, sizeof(g_log));
		std::string err;
		ASSERT_EQ(start(tool("proftool_plain") + (with_a ? ":" + tool("proftool_a") : ""), 1, &err), 0) << err;
		for (int i = 0; i < 3; i++)
			ASSERT_EQ(submit_detached(&cl), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		stop();
		int execs = 0;
		for (const proftool_record &r : records_of(TOOL_PLAIN, 0)) {
			if (r.event == PROFTOOL_FINALIZE)
				continue;
			EXPECT_EQ(r.event_info_type, r.event);
			EXPECT_EQ(r.ext.event_type, r.event);
			if (with_a) {
				EXPECT_EQ(r.ext.interface_version, (unsigned)ASTRO_PROF_TOOL_INTERFACE_VERSION);
				EXPECT_GT(r.ext.time_us, 0.0);
			} else {
				EXPECT_EQ(r.ext.interface_version, 0u);
				EXPECT_EQ(r.ext.time_us, 0.0);
				EXPECT_EQ(r.ext.task, nullptr);
				EXPECT_EQ(r.ext.job_id, 0ul);
			}
			if (r.event == starpu_prof_tool_event_start_cpu_exec || r.event == starpu_prof_tool_event_end_cpu_exec) {
				execs++;
				EXPECT_EQ(r.info.fun_ptr, (void *)touch_nothing); // StarPU's fields, either way
				EXPECT_EQ(r.ext.task != nullptr, with_a);
			}
		}
		EXPECT_EQ(execs, 6) << (with_a ? "with proftool_a" : "alone");
		EXPECT_EQ(g_log.handshakes[TOOL_PLAIN], 0);
	}
}

TEST_F(ProfTool, TransferEvents)
{
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), 1, &err), 0) << err;
	std::vector<char> src(1000, 'x'), dst(1000, 0);
	ASSERT_EQ(starpu_interface_copy((uintptr_t)src.data(), 0, STARPU_MAIN_RAM, (uintptr_t)dst.data(), 0, STARPU_MAIN_RAM,
					1000, NULL), 0);
	EXPECT_EQ(dst[999], 'x');
	std::vector<proftool_record> t;
	for (const proftool_record &r : records_of(TOOL_A, 0))
		if (r.event == starpu_prof_tool_event_start_transfer || r.event == starpu_prof_tool_event_end_transfer)
			t.push_back(r);
	ASSERT_EQ(t.size(), 2u);
	EXPECT_EQ(t[0].event, starpu_prof_tool_event_start_transfer);
	EXPECT_EQ(t[1].event, starpu_prof_tool_event_end_transfer);
	for (const proftool_record &r : t) {
		EXPECT_EQ(r.info.worker_id, -1);
		EXPECT_EQ(r.info.memnode, (unsigned)STARPU_MAIN_RAM);
		EXPECT_EQ(r.info.bytes_to_transfer, 1000u);
		EXPECT_EQ(r.ext.bytes, 1000u);
		EXPECT_EQ(r.ext.src_node, (unsigned)STARPU_MAIN_RAM);
		EXPECT_EQ(r.info.fun_ptr, nullptr);
	}
	EXPECT_EQ(t[0].info.bytes_transfered, 0u);
	EXPECT_EQ(t[1].info.bytes_transfered, 1000u);
	EXPECT_EQ(t[1].info.bytes_transferred, 1000u);
}

// ------------------------------------------------------ several tools at once

TEST_F(ProfTool, TwoToolsTogetherInRegistrationOrder)
{
	const int N = 20;
	std::string err;
	ASSERT_EQ(start(tool("proftool_a") + ":" + tool("proftool_b"), 2, &err), 0) << err;
	EXPECT_EQ(err, "");
	ASSERT_EQ(run_work(N), 0);
	starpu_prof_tool_user_start("marks");
	starpu_prof_tool_user_end("marks");
	stop();

	for (int t : { TOOL_A, TOOL_B }) {
		EXPECT_EQ(g_log.registered[t], 1);
		EXPECT_EQ(g_log.finalized[t], 1);
		std::map<int, int> c = count_by_event(records_of(t, 0));
		EXPECT_EQ(c[starpu_prof_tool_event_start_cpu_exec], N);
		EXPECT_EQ(c[starpu_prof_tool_event_end_cpu_exec], N);
		EXPECT_EQ(c[starpu_prof_tool_event_driver_init], 2);
		EXPECT_EQ(c[starpu_prof_tool_event_user_start], 1);
		EXPECT_EQ(c[starpu_prof_tool_event_terminate], 1);
		std::map<int, int> c2 = count_by_event(records_of(t, 1));
		EXPECT_EQ(c2[starpu_prof_tool_event_start_cpu_exec], N);
		EXPECT_EQ(c2[starpu_prof_tool_event_user_end], 1);
	}

	// Every dispatch calls A's callbacks, then B's, each tool's in its registration order.
	std::map<std::pair<int, unsigned long>, std::vector<std::pair<int, int>>> calls;
	for (const proftool_record &r : records())
		if (r.event == starpu_prof_tool_event_start_cpu_exec || r.event == starpu_prof_tool_event_end_cpu_exec ||
		    r.event == starpu_prof_tool_event_user_start)
			calls[{ r.event, r.ext.job_id }].push_back({ r.tool, r.callback });
	const std::vector<std::pair<int, int>> order = { { TOOL_A, 0 }, { TOOL_A, 1 }, { TOOL_B, 0 }, { TOOL_B, 1 } };
	EXPECT_EQ(calls.size(), (size_t)(2 * N + 1));
	for (const auto &kv : calls)
		EXPECT_EQ(kv.second, order) << "event " << kv.first.first << " job " << kv.first.second;

	// The whole run: A's first callback sees init_begin before B's, and A finalizes first.
	std::vector<proftool_record> all = records();
	ASSERT_GE(all.size(), 2u);
	EXPECT_EQ(all[0].tool, TOOL_A);
	EXPECT_EQ(all[1].tool, TOOL_B);
	EXPECT_EQ(all[all.size() - 2].event, PROFTOOL_FINALIZE);
	EXPECT_EQ(all[all.size() - 2].tool, TOOL_A);
	EXPECT_EQ(all.back().event, PROFTOOL_FINALIZE);
	EXPECT_EQ(all.back().tool, TOOL_B);
}

TEST_F(ProfTool, StarpuToolWithRecordingToolAndPlugin)
{
	const int N = 15;
	std::string err;
	ASSERT_EQ(start(tool("proftool_starpu") + ":" + tool("proftool_a") + ":stats", 2, &err), 0) << err;
	EXPECT_EQ(err, "");
	ASSERT_EQ(run_work(N), 0);
	err = stop();
	EXPECT_TRUE(contains(err, "proftool_starpu: start_cpu_exec 15\n")) << err;
	EXPECT_TRUE(contains(err, "proftool_starpu: end_cpu_exec 15\n")) << err;
	EXPECT_TRUE(contains(err, "[stats] start_cpu_exec")) << err;
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_start_cpu_exec], N);
}

TEST_F(ProfTool, SameToolListedTwiceLoadsOnce)
{
	std::string err;
	ASSERT_EQ(start(tool("proftool_a") + ":" + tool("proftool_a"), 1, &err), 0) << err;
	EXPECT_EQ(count_lines_with(err, "[astrolabe]"), 1) << err;
	EXPECT_TRUE(contains(err, "loaded once")) << err;
	ASSERT_EQ(run_work(5), 0);
	stop();
	EXPECT_EQ(g_log.registered[TOOL_A], 1);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_start_cpu_exec], 5);
}

// ------------------------------------------------------- unreg and toggles

TEST_F(ProfTool, UnregRemovesExactlyThatCallback)
{
	const int N = 10, M = 7;
	std::string err;
	ASSERT_EQ(start(tool("proftool_a") + ":" + tool("proftool_b"), 1, &err), 0) << err;
	ASSERT_NE(g_log.unreg[TOOL_A], nullptr);
	g_log.unreg[TOOL_A](starpu_prof_tool_event_end_cpu_exec, g_log.callbacks[TOOL_A][0], starpu_prof_tool_command_reg);
	ASSERT_EQ(run_work(N), 0);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_start_cpu_exec], N);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_end_cpu_exec], 0);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 1))[starpu_prof_tool_event_end_cpu_exec], N);
	EXPECT_EQ(count_by_event(records_of(TOOL_B, 0))[starpu_prof_tool_event_end_cpu_exec], N);
	EXPECT_EQ(count_by_event(records_of(TOOL_B, 1))[starpu_prof_tool_event_end_cpu_exec], N);

	// Registered again, it comes last for that event.
	int before = __atomic_load_n(&g_log.n, __ATOMIC_ACQUIRE);
	g_log.reg[TOOL_A](starpu_prof_tool_event_end_cpu_exec, g_log.callbacks[TOOL_A][0], starpu_prof_tool_command_reg);
	ASSERT_EQ(run_work(M), 0);
	std::map<unsigned long, std::vector<std::pair<int, int>>> ends;
	std::vector<proftool_record> all = records();
	for (size_t i = before; i < all.size(); i++)
		if (all[i].event == starpu_prof_tool_event_end_cpu_exec)
			ends[all[i].ext.job_id].push_back({ all[i].tool, all[i].callback });
	EXPECT_EQ(ends.size(), (size_t)M);
	const std::vector<std::pair<int, int>> order = { { TOOL_A, 1 }, { TOOL_B, 0 }, { TOOL_B, 1 }, { TOOL_A, 0 } };
	for (const auto &kv : ends)
		EXPECT_EQ(kv.second, order) << "job " << kv.first;

	// Removing what is not registered says so and changes nothing.
	err = stderr_of([] {
		g_log.unreg[TOOL_A](starpu_prof_tool_event_terminate, g_log.callbacks[TOOL_A][1], starpu_prof_tool_command_reg);
	});
	EXPECT_EQ(count_lines_with(err, "[astrolabe]"), 1) << err;
	EXPECT_TRUE(contains(err, "not registered")) << err;
	stop();
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_terminate], 1);
}

TEST_F(ProfTool, ToggleDisablesAndEnablesForEveryThread)
{
	const int N = 12;
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), 2, &err), 0) << err;
	g_log.reg[TOOL_A](starpu_prof_tool_event_start_cpu_exec, g_log.callbacks[TOOL_A][0], starpu_prof_tool_command_toggle);
	ASSERT_EQ(run_work(N), 0);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_start_cpu_exec], 0);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_end_cpu_exec], N);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 1))[starpu_prof_tool_event_start_cpu_exec], N);

	g_log.reg[TOOL_A](starpu_prof_tool_event_start_cpu_exec, g_log.callbacks[TOOL_A][0], starpu_prof_tool_command_toggle);
	ASSERT_EQ(run_work(N), 0);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_start_cpu_exec], N);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_end_cpu_exec], 2 * N);
	// A toggle is not a registration: the callback is still called once per event.
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 1))[starpu_prof_tool_event_start_cpu_exec], 2 * N);
}

void mark_from_task(void **, void *)
{
	starpu_prof_tool_user_start("task");
	starpu_prof_tool_user_end("task");
}

TEST_F(ProfTool, TogglePerThreadAffectsOnlyTheCallingThread)
{
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), 1, &err), 0) << err;
	g_log.reg[TOOL_A](starpu_prof_tool_event_user_start, g_log.callbacks[TOOL_A][0], starpu_prof_tool_command_toggle_per_thread);
	starpu_prof_tool_user_start("app-off");
	static starpu_codelet cl = cpu_codelet(mark_from_task, 0, "marks");
	ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	g_log.reg[TOOL_A](starpu_prof_tool_event_user_start, g_log.callbacks[TOOL_A][0], starpu_prof_tool_command_toggle_per_thread);
	starpu_prof_tool_user_start("app-on");

	std::vector<std::string> first, second;
	for (const proftool_record &r : records()) {
		if (r.event != starpu_prof_tool_event_user_start)
			continue;
		std::string label = r.ext.user_label ? r.ext.user_label : "(null)";
		(r.callback == 0 ? first : second).push_back(label + "@" + std::to_string(r.info.worker_id));
	}
	EXPECT_EQ(first, (std::vector<std::string>{ "task@0", "app-on@-1" }));
	EXPECT_EQ(second, (std::vector<std::string>{ "app-off@-1", "task@0", "app-on@-1" }));
	// user_end was never toggled.
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_user_end], 1);
}

std::atomic<int> g_local_calls{0};

void local_callback(struct starpu_prof_tool_info *, union starpu_prof_tool_event_info *, struct starpu_prof_tool_api_info *)
{
	g_local_calls++;
}

TEST_F(ProfTool, AnyCommandOnANewCallbackRegistersIt)
{
	g_local_calls = 0;
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), 1, &err), 0) << err;
	// StarPU ignores the command; a tool passing toggle for a new callback must still get it registered.
	g_log.reg[TOOL_A](starpu_prof_tool_event_user_start, local_callback, starpu_prof_tool_command_toggle);
	starpu_prof_tool_user_start("one");
	EXPECT_EQ(g_local_calls, 1);
	g_log.reg[TOOL_A](starpu_prof_tool_event_user_start, local_callback, starpu_prof_tool_command_toggle);
	starpu_prof_tool_user_start("two");
	EXPECT_EQ(g_local_calls, 1);
	g_log.unreg[TOOL_A](starpu_prof_tool_event_user_start, local_callback, starpu_prof_tool_command_reg);
	g_log.reg[TOOL_A](starpu_prof_tool_event_user_start, local_callback, (enum starpu_prof_tool_command)0);
	starpu_prof_tool_user_start("three");
	EXPECT_EQ(g_local_calls, 2);
}

// Which of three local callbacks fired, in order, for one user_start fired from this thread.
std::string g_fired;

void fire_x(struct starpu_prof_tool_info *, union starpu_prof_tool_event_info *, struct starpu_prof_tool_api_info *)
{
	g_fired += 'x';
}

void fire_y(struct starpu_prof_tool_info *, union starpu_prof_tool_event_info *, struct starpu_prof_tool_api_info *)
{
	g_fired += 'y';
}

void fire_z(struct starpu_prof_tool_info *, union starpu_prof_tool_event_info *, struct starpu_prof_tool_api_info *)
{
	g_fired += 'z';
}

// The local callbacks a user_start fired now reaches, in call order.
std::string fired_by_one_event()
{
	g_fired.clear();
	starpu_prof_tool_user_start("probe");
	return g_fired;
}

// An unregistered callback leaves the dispatch list: unregistering it again
// is reported and changes nothing, registering it again puts it last, and a
// toggle then acts on the live registration, never on the removed one.
TEST_F(ProfTool, UnregisterTwiceThenRegisterAgainAndToggle)
{
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), 1, &err), 0) << err;
	auto reg = g_log.reg[TOOL_A];
	auto unreg = g_log.unreg[TOOL_A];
	ASSERT_NE(reg, nullptr);
	ASSERT_NE(unreg, nullptr);
	const auto ev = starpu_prof_tool_event_user_start;
	const auto cmd = starpu_prof_tool_command_reg;
	const auto toggle = starpu_prof_tool_command_toggle;

	reg(ev, fire_x, cmd);
	reg(ev, fire_y, cmd);
	reg(ev, fire_z, cmd);
	EXPECT_EQ(fired_by_one_event(), "xyz");

	err = stderr_of([&] { unreg(ev, fire_y, cmd); });
	EXPECT_EQ(err, "");
	EXPECT_EQ(fired_by_one_event(), "xz");
	err = stderr_of([&] { unreg(ev, fire_y, cmd); });
	EXPECT_EQ(count_lines_with(err, "[astrolabe]"), 1) << err;
	EXPECT_TRUE(contains(err, "not registered")) << err;
	EXPECT_EQ(fired_by_one_event(), "xz");

	// Registered again: called once, last.
	reg(ev, fire_y, cmd);
	EXPECT_EQ(fired_by_one_event(), "xzy");
	// The toggle reaches the live registration: off, then on again.
	reg(ev, fire_y, toggle);
	EXPECT_EQ(fired_by_one_event(), "xz");
	reg(ev, fire_y, toggle);
	EXPECT_EQ(fired_by_one_event(), "xzy");

	// Unregistered while toggled off: gone for good, and a second unregister is reported.
	reg(ev, fire_x, toggle);
	EXPECT_EQ(fired_by_one_event(), "zy");
	EXPECT_EQ(stderr_of([&] { unreg(ev, fire_x, cmd); }), "");
	EXPECT_EQ(fired_by_one_event(), "zy");
	err = stderr_of([&] { unreg(ev, fire_x, cmd); });
	EXPECT_TRUE(contains(err, "not registered")) << err;
	// A toggle on a callback no longer registered registers it anew (as StarPU does), enabled.
	reg(ev, fire_x, toggle);
	EXPECT_EQ(fired_by_one_event(), "zyx");
	reg(ev, fire_x, toggle);
	EXPECT_EQ(fired_by_one_event(), "zy");

	// Every one removed: nothing is called, each removal said nothing, a further one is reported.
	err = stderr_of([&] {
		unreg(ev, fire_x, cmd);
		unreg(ev, fire_y, cmd);
		unreg(ev, fire_z, cmd);
	});
	EXPECT_EQ(err, "");
	EXPECT_EQ(fired_by_one_event(), "");
	// Each is reported; x and y were reported before in this session, so only
	// z's line shows now (repeats are counted until shutdown).
	for (auto cb : { fire_x, fire_y, fire_z }) {
		err = stderr_of([&] { unreg(ev, cb, cmd); });
		EXPECT_EQ(count_lines_with(err, "not registered"), cb == fire_z ? 1 : 0) << err;
	}
	EXPECT_EQ(fired_by_one_event(), "");
	// The tool's own callbacks on that event were never touched: called by each of the 12 events.
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_user_start], 12);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 1))[starpu_prof_tool_event_user_start], 12);
}

// The same on a task event fired by the workers: unregistered twice, registered
// again and toggled, the callback fires exactly as often as its state says.
TEST_F(ProfTool, UnregisteredTaskCallbackIsNotCalledByWorkers)
{
	const int N = 9;
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), 2, &err), 0) << err;
	auto reg = g_log.reg[TOOL_A];
	auto unreg = g_log.unreg[TOOL_A];
	const auto ev = starpu_prof_tool_event_end_cpu_exec;
	starpu_prof_tool_cb_func first = g_log.callbacks[TOOL_A][0];
	auto ends = [] { return count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_end_cpu_exec]; };

	unreg(ev, first, starpu_prof_tool_command_reg);
	err = stderr_of([&] { unreg(ev, first, starpu_prof_tool_command_reg); });
	EXPECT_TRUE(contains(err, "not registered")) << err;
	ASSERT_EQ(run_work(N), 0);
	EXPECT_EQ(ends(), 0);
	reg(ev, first, starpu_prof_tool_command_reg);
	ASSERT_EQ(run_work(N), 0);
	EXPECT_EQ(ends(), N);
	reg(ev, first, starpu_prof_tool_command_toggle);
	ASSERT_EQ(run_work(N), 0);
	EXPECT_EQ(ends(), N);
	reg(ev, first, starpu_prof_tool_command_toggle);
	ASSERT_EQ(run_work(N), 0);
	EXPECT_EQ(ends(), 2 * N);
	// The second callback ran for every task throughout.
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 1))[starpu_prof_tool_event_end_cpu_exec], 4 * N);
}

TEST_F(ProfTool, BadRegisterCallsAreReported)
{
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), 1, &err), 0) << err;
	err = stderr_of([] { g_log.reg[TOOL_A]((enum starpu_prof_tool_event)99, local_callback, starpu_prof_tool_command_reg); });
	EXPECT_EQ(count_lines_with(err, "[astrolabe] error"), 1) << err;
	EXPECT_TRUE(contains(err, "unknown event 99")) << err;
	err = stderr_of([] { g_log.reg[TOOL_A](starpu_prof_tool_event_none, local_callback, starpu_prof_tool_command_reg); });
	EXPECT_TRUE(contains(err, "unknown event 0")) << err;
	err = stderr_of([] { g_log.reg[TOOL_A](starpu_prof_tool_event_init, nullptr, starpu_prof_tool_command_reg); });
	EXPECT_TRUE(contains(err, "NULL callback")) << err;
	err = stderr_of([] { g_log.reg[TOOL_A](starpu_prof_tool_event_user_end, local_callback, (enum starpu_prof_tool_command)7); });
	EXPECT_TRUE(contains(err, "unknown command 7")) << err;
	stop();
	// After shutdown, a kept register function refuses politely.
	err = stderr_of([] { g_log.reg[TOOL_A](starpu_prof_tool_event_init, local_callback, starpu_prof_tool_command_reg); });
	EXPECT_TRUE(contains(err, "outside starpu_init()")) << err;
	// Marks outside a session do nothing.
	starpu_prof_tool_user_start("nobody listens");
	starpu_prof_tool_user_end(nullptr);
}

TEST_F(ProfTool, EachInitStartsAFreshSession)
{
	std::string err;
	ASSERT_EQ(start(tool("proftool_a"), 1, &err), 0) << err;
	g_log.reg[TOOL_A](starpu_prof_tool_event_user_start, g_log.callbacks[TOOL_A][0], starpu_prof_tool_command_toggle_per_thread);
	ASSERT_EQ(run_work(3), 0);
	stop();
	memset(&g_log, 0, sizeof(g_log));
	ASSERT_EQ(start(tool("proftool_a"), 2, &err), 0) << err;
	EXPECT_EQ(g_log.registered[TOOL_A], 1);
	ASSERT_EQ(run_work(4), 0);
	// The previous session's per-thread toggle is gone.
	starpu_prof_tool_user_start("again");
	stop();
	std::map<int, int> c = count_by_event(records_of(TOOL_A, 0));
	EXPECT_EQ(c[starpu_prof_tool_event_init_begin], 1);
	EXPECT_EQ(c[starpu_prof_tool_event_driver_init], 2);
	EXPECT_EQ(c[starpu_prof_tool_event_start_cpu_exec], 4);
	EXPECT_EQ(c[starpu_prof_tool_event_user_start], 1);
	EXPECT_EQ(c[starpu_prof_tool_event_terminate], 1);
	EXPECT_EQ(g_log.finalized[TOOL_A], 1);
}

// ----------------------------------------------------------- bad tools

TEST_F(ProfTool, HandshakeDeclines)
{
	std::string err;
	ASSERT_EQ(start(tool("proftool_decline") + ":" + tool("proftool_a"), 1, &err), 0) << err;
	EXPECT_EQ(count_lines_with(err, "[astrolabe]"), 1) << err;
	EXPECT_TRUE(contains(err, tool("proftool_decline"))) << err;
	EXPECT_TRUE(contains(err, "declined")) << err;
	EXPECT_EQ(g_log.decline_registered, 0);
	ASSERT_EQ(run_work(3), 0);
	EXPECT_EQ(stop(), "");
	EXPECT_EQ(g_log.registered[TOOL_A], 1);
	EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_end_cpu_exec], 3);
}

TEST_F(ProfTool, BadToolsAreReportedAndSkipped)
{
	TempDir dir;
	ASSERT_TRUE(dir.write("libnotalib.so", "this is text, not a shared library\n"));
	struct Case
	{
		std::string entry, problem;
	};
	const std::vector<Case> cases = {
		{ dir.file("libmissing.so"), "does not exist" },
		{ dir.file("libnotalib.so"), "is not a loadable library" },
		{ dir.path(), "is not a loadable library" },
		{ tool("proftool_noentry"), "exports no starpu_prof_tool_library_register()" },
		{ "nosuchtool", "neither a tool plugin" },
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(c.entry);
		memset(&g_log, 0, sizeof(g_log));
		std::string err;
		ASSERT_EQ(start(c.entry + ":" + tool("proftool_a"), 1, &err), 0) << err;
		EXPECT_EQ(count_lines_with(err, "[astrolabe]"), 1) << err;
		EXPECT_TRUE(contains(err, c.entry)) << err;
		EXPECT_TRUE(contains(err, c.problem)) << err;
		EXPECT_TRUE(contains(err, "the program runs without it")) << err;
		// The application goes on, with the good tool.
		ASSERT_EQ(run_work(4), 0);
		EXPECT_EQ(stop(), "");
		EXPECT_EQ(count_by_event(records_of(TOOL_A, 0))[starpu_prof_tool_event_start_cpu_exec], 4);
	}
}

// A tool that crashes in its register function is named by the signal handler (STARPU_CATCH_SIGNALS is on by default).
TEST_F(ProfTool, CrashInRegisterFunctionNamesTheTool)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	ScopedEnv catch_signals("STARPU_CATCH_SIGNALS", nullptr);
	const std::string lib = tool("proftool_crash");
	ScopedEnv prof_tool("STARPU_PROF_TOOL", lib);
	EXPECT_DEATH(
		{
			if (init_with_ncpus(1) == 0)
				starpu_shutdown();
		},
		"\\[astrolabe\\] SIGSEGV while calling profiling tool " + lib + "'s starpu_prof_tool_library_register \\(" + lib +
			", starpu_prof_tool_library_register\\): the tool crashed; fix it or remove it from STARPU_PROF_TOOL");
}

// A tool's callback that crashes on the task path is named with the event it was called for.
TEST_F(ProfTool, CrashInCallbackNamesTheToolAndTheEvent)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	ScopedEnv catch_signals("STARPU_CATCH_SIGNALS", nullptr);
	const std::string lib = tool("proftool_crash");
	ScopedEnv prof_tool("STARPU_PROF_TOOL", lib);
	ScopedEnv crash_in("PROFTOOL_CRASH_IN", "start_cpu_exec");
	EXPECT_DEATH(
		{
			if (init_with_ncpus(1) == 0)
				run_work(1);
			_exit(3);
		},
		"\\[astrolabe\\] SIGSEGV while calling profiling tool " + lib + "'s start_cpu_exec callback \\(" + lib +
			", crashing_start_cpu_exec\\): the tool crashed, not the runtime; fix it or remove it from STARPU_PROF_TOOL");
}

TEST_F(ProfTool, EmptyEntriesAreIgnored)
{
	std::string err;
	ASSERT_EQ(start("::" + tool("proftool_a") + ":", 1, &err), 0) << err;
	EXPECT_EQ(err, "");
	EXPECT_EQ(g_log.registered[TOOL_A], 1);
}

// ---------------------------------------------------------- tool plugins

TEST_F(ProfTool, ToolPluginsStayQuietUnlessNamed)
{
	std::string err;
	ASSERT_EQ(start("", 2, &err), 0) << err;
	ASSERT_EQ(run_work(5), 0);
	err += stop();
	EXPECT_FALSE(contains(err, "[stats]")) << err;
	EXPECT_FALSE(contains(err, "[print]")) << err;
	EXPECT_EQ(err, "");
}

TEST_F(ProfTool, StatsPlugin)
{
	const int N = 30;
	std::string err;
	ASSERT_EQ(start("stats", 2, &err), 0) << err;
	ASSERT_EQ(run_work(N), 0);
	starpu_prof_tool_user_start("x");
	err = stop();
	EXPECT_TRUE(contains(err, "[stats] event")) << err;
	std::istringstream lines(err);
	std::string line;
	std::map<std::string, unsigned long> totals;
	unsigned long work_runs = 0;
	while (std::getline(lines, line)) {
		std::istringstream words(line);
		std::string tag, name;
		unsigned long total = 0;
		words >> tag >> name >> total;
		if (tag != "[stats]")
			continue;
		if (name == "work")
			work_runs = total;
		else
			totals[name] = total;
	}
	EXPECT_EQ(totals["start_cpu_exec"], (unsigned long)N);
	EXPECT_EQ(totals["end_cpu_exec"], (unsigned long)N);
	EXPECT_EQ(totals["driver_init"], 2ul);
	EXPECT_EQ(totals["init_begin"], 1ul);
	EXPECT_EQ(totals["user_start"], 1ul);
	EXPECT_EQ(totals["terminate"], 1ul);
	EXPECT_EQ(work_runs, (unsigned long)N);
}

TEST_F(ProfTool, PrintPlugin)
{
	std::string err;
	ASSERT_EQ(start("print", 1, &err), 0) << err;
	EXPECT_TRUE(contains(err, "[print]")) << err;
	EXPECT_TRUE(contains(err, "init_begin")) << err;
	EXPECT_TRUE(contains(err, "driver_init_end")) << err;
	err = stderr_of([] {
		ASSERT_EQ(run_work(3), 0);
		starpu_prof_tool_user_start("region");
		starpu_shutdown();
	});
	EXPECT_EQ(count_lines_with(err, " start_cpu_exec "), 3) << err;
	EXPECT_EQ(count_lines_with(err, " end_cpu_exec "), 3) << err;
	EXPECT_EQ(count_lines_with(err, "task work"), 6) << err;
	EXPECT_TRUE(contains(err, "'region'")) << err;
	EXPECT_TRUE(contains(err, "terminate")) << err;
}

// ------------------------------------------- a StarPU 1.4 tool, three ways

std::string expected_starpu_tool_lines(int ntasks, int nworkers, int user_marks)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "proftool_starpu: version %d.%d.%d\n"
		 "proftool_starpu: init 1\nproftool_starpu: terminate 1\nproftool_starpu: init_begin 1\nproftool_starpu: init_end 1\n"
		 "proftool_starpu: driver_init %d\nproftool_starpu: driver_deinit %d\n"
		 "proftool_starpu: driver_init_start %d\nproftool_starpu: driver_init_end %d\n"
		 "proftool_starpu: start_cpu_exec %d\nproftool_starpu: end_cpu_exec %d\n"
		 "proftool_starpu: start_gpu_exec 0\nproftool_starpu: end_gpu_exec 0\n"
		 "proftool_starpu: start_transfer 0\nproftool_starpu: end_transfer 0\n"
		 "proftool_starpu: user_start %d\nproftool_starpu: user_end %d\n"
		 "proftool_starpu: unpaired 0\nproftool_starpu: null_function 0\nproftool_starpu: bad_worker 0\n",
		 STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION, nworkers, nworkers, nworkers, nworkers,
		 ntasks, ntasks, user_marks, user_marks);
	return buf;
}

TEST_F(ProfTool, StarpuToolFromEnvironment)
{
	std::string err;
	ASSERT_EQ(start(tool("proftool_starpu"), 2, &err), 0) << err;
	EXPECT_EQ(err, "");
	ASSERT_EQ(run_work(25), 0);
	err = stop();
	// The terminate count is printed while terminate runs, so it includes itself.
	EXPECT_EQ(err, expected_starpu_tool_lines(25, 2, 0));
}

// Sections 4.2.2 and 4.3.2 on a device worker: tasks run by an OpenCL worker (PoCL's CPU device here;
// no CUDA on this machine) are framed by start_gpu_exec and end_gpu_exec, not the CPU events, and
// the driver events and task events carry the OpenCL driver type and the device number.
void nothing_on_device(void **, void *)
{
}

TEST_F(ProfTool, DeviceWorkerTasksAreGpuExecutions)
{
	const int N = 6;
	ScopedEnv on_cpus("STARPU_OPENCL_ON_CPUS", "1");
	ScopedEnv prof_tool("STARPU_PROF_TOOL", tool("proftool_a"));
	starpu_conf conf = conf_with_ncpus(0);
	conf.nopencl = 1;
	std::string err;
	int ret = -1;
	err = stderr_of([&] { ret = starpu_init(&conf); });
	if (ret == -ENODEV)
		GTEST_SKIP() << "no OpenCL device: " << err;
	ASSERT_EQ(ret, 0) << err;
	if (starpu_opencl_worker_get_count() != 1) {
		starpu_shutdown();
		GTEST_SKIP() << "no OpenCL worker";
	}
	int devid = starpu_worker_get_devid(0);
	static starpu_codelet cl = [] {
		starpu_codelet c;
		starpu_codelet_init(&c);
		c.opencl_funcs[0] = nothing_on_device;
		c.name = "on_device";
		return c;
	}();
	for (int i = 0; i < N; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	stop();
	std::vector<proftool_record> recs = records_of(TOOL_A, 0);
	std::map<int, int> counts = count_by_event(recs);
	ASSERT_EQ(g_log.registered[TOOL_A], 1) << err;
	EXPECT_EQ(counts[starpu_prof_tool_event_start_gpu_exec], N);
	EXPECT_EQ(counts[starpu_prof_tool_event_end_gpu_exec], N);
	EXPECT_EQ(counts[starpu_prof_tool_event_start_cpu_exec], 0);
	EXPECT_EQ(counts[starpu_prof_tool_event_end_cpu_exec], 0);
	EXPECT_EQ(counts[starpu_prof_tool_event_driver_init], 1);
	for (const proftool_record &r : recs)
		if (r.event == starpu_prof_tool_event_start_gpu_exec || r.event == starpu_prof_tool_event_end_gpu_exec ||
		    r.event == starpu_prof_tool_event_driver_init) {
			EXPECT_EQ(r.info.driver_type, starpu_prof_tool_driver_ocl) << "event " << r.event;
			EXPECT_EQ(r.info.device_number, devid) << "event " << r.event;
			EXPECT_EQ(r.info.worker_id, 0) << "event " << r.event;
		}
}

// Section 3's types: the entry point a tool defines is a starpu_prof_tool_entry_func taking the
// register and unregister functions, both of StarPU's register type.
TEST(ProfToolTypes, EntryFunctionTypesAreTheSeeds)
{
	static_assert(std::is_same<starpu_prof_tool_entry_func, void (*)(starpu_prof_tool_entry_register_func,
									  starpu_prof_tool_entry_unregister_func)>::value,
		      "entry: void (*)(reg, unreg)");
	static_assert(std::is_same<starpu_prof_tool_entry_unregister_func, starpu_prof_tool_entry_register_func>::value,
		      "unregister has register's signature");
	static_assert(std::is_same<starpu_prof_tool_entry_register_func,
				   void (*)(enum starpu_prof_tool_event, starpu_prof_tool_cb_func, enum starpu_prof_tool_command)>::value,
		      "register: (event, callback, command)");
	static_assert(std::is_same<decltype(&starpu_prof_tool_library_register), starpu_prof_tool_entry_func>::value,
		      "starpu_prof_tool_library_register is an entry function");
	SUCCEED();
}

// A tool written with the profiling-interface document's bare type names and
// its section 6.1 event names compiles (as C) and sees what they name: the
// driver events of each worker, and a start and an end per task.
TEST_F(ProfTool, ToolWrittenAsTheDocumentsExample)
{
	EXPECT_EQ(starpu_prof_tool_event_driver_start_cpu_exec, starpu_prof_tool_event_start_cpu_exec);
	EXPECT_EQ(starpu_prof_tool_event_driver_end_cpu_exec, starpu_prof_tool_event_end_cpu_exec);
	EXPECT_EQ(starpu_prof_tool_event_driver_start_gpu_exec, starpu_prof_tool_event_start_gpu_exec);
	EXPECT_EQ(starpu_prof_tool_event_driver_end_gpu_exec, starpu_prof_tool_event_end_gpu_exec);
	static_assert(std::is_same<starpu_event_tool_info, starpu_prof_tool_event_info>::value, "same union");
	static_assert(std::is_same<starpu_api_tool_info, starpu_prof_tool_api_info>::value, "same struct");
	std::string err;
	ASSERT_EQ(start(tool("proftool_seed"), 2, &err), 0) << err;
	EXPECT_EQ(err, "");
	ASSERT_EQ(run_work(9), 0);
	err = stop();
	EXPECT_EQ(err, "proftool_seed: driver_init 2 init_start 2 init_end 2 start 9 end 9 no_function 0\n");
}

// The test programs live next to the test tools' .libs folder.
std::string helper_program(const std::string &name)
{
	return test_plugin_dir() + "/../" + name;
}

// Child environment: no tool from the caller, no installed plugins, and (under
// AddressSanitizer) no complaint that a preloaded library comes before its runtime.
std::string child_env(int ncpus)
{
	return "STARPU_PROF_TOOL= STARPU_NCPU=" + std::to_string(ncpus) + " ASTROLABE_PLUGIN_DIR= " +
	       "ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\" ";
}

TEST_F(ProfTool, StarpuToolPreloaded)
{
	std::string app = helper_program("prof_tool_app");
	ASSERT_TRUE(file_exists(app)) << app;
	std::string out;
	int rc = run_command(child_env(2) + "LD_PRELOAD=" + tool("proftool_starpu") + " " + app + " 17 2>&1", &out);
	EXPECT_EQ(rc, 0) << out;
	EXPECT_TRUE(contains(out, expected_starpu_tool_lines(17, 2, 1))) << out;
	EXPECT_TRUE(contains(out, "prof_tool_app: 17 tasks done")) << out;
	EXPECT_FALSE(contains(out, "[astrolabe]")) << out;
}

TEST_F(ProfTool, StarpuToolPreloadedAndNamedLoadsOnce)
{
	std::string app = helper_program("prof_tool_app");
	std::string out;
	int rc = run_command(child_env(1) + "LD_PRELOAD=" + tool("proftool_starpu") + " STARPU_PROF_TOOL=" +
				     tool("proftool_starpu") + " " + app + " 5 2>&1",
			     &out);
	EXPECT_EQ(rc, 0) << out;
	EXPECT_TRUE(contains(out, expected_starpu_tool_lines(5, 1, 1))) << out;
	EXPECT_EQ(count_lines_with(out, "[astrolabe]"), 1) << out;
	EXPECT_TRUE(contains(out, "loaded once")) << out;
}

TEST_F(ProfTool, StarpuToolLinkedIn)
{
	std::string app = helper_program("prof_tool_linked");
	ASSERT_TRUE(file_exists(app)) << app;
	std::string out;
	int rc = run_command(child_env(2) + app + " 9 2>&1", &out);
	EXPECT_EQ(rc, 0) << out;
	EXPECT_TRUE(contains(out, expected_starpu_tool_lines(9, 2, 1))) << out;
	EXPECT_TRUE(contains(out, "prof_tool_app: 9 tasks done")) << out;
}

TEST_F(ProfTool, NoToolInTheProgramWithoutOne)
{
	std::string out;
	int rc = run_command(child_env(1) + helper_program("prof_tool_app") + " 3 2>&1", &out);
	EXPECT_EQ(rc, 0) << out;
	EXPECT_TRUE(contains(out, "prof_tool_app: 3 tasks done\n")) << out;
	EXPECT_FALSE(contains(out, "proftool_starpu")) << out;
	EXPECT_FALSE(contains(out, "[astrolabe]")) << out;
}

} // namespace
