// SPDX-License-Identifier: LGPL-2.1-or-later
// A device worker's pipeline (STARPU_OPENCL_PIPELINE) on a real OpenCL
// platform (PoCL here): the worker takes its next task while the one before
// runs and asks for its data at once, so the transfers overlap the
// execution; an asynchronous implementation's work (STARPU_OPENCL_ASYNC)
// runs on while the worker starts the next task. Seen through the
// observation moments and a user event gating the device's queue (never
// through timing):
// the next task's transfer begins before the running task starts, and ends
// (arrives) only when the next task is about to run. Every test skips where
// no OpenCL device exists.
#include <gtest/gtest.h>
#include <starpu.h>
#include <astrolabe/observe.h>
#include <algorithm>
#include <atomic>
#include <unistd.h>
#include <mutex>
#include <vector>
#include "opencl_helpers.h"

using namespace astro_test;

#ifdef STARPU_USE_OPENCL

namespace {

void add_cpu(void *buffers[], void *arg)
{
	int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] += arg ? *(int *)arg : 1;
}

void read_opencl(void *[], void *) {}

// Codelets the detached tasks may still read after a test body: static.
starpu_codelet add_cl, read_cl;

void make_codelets()
{
	starpu_codelet_init(&add_cl);
	add_cl.opencl_funcs[0] = add_opencl_by_copies;
	add_cl.cpu_funcs[0] = add_cpu;
	add_cl.nbuffers = 1;
	add_cl.modes[0] = STARPU_RW;
	add_cl.name = "add";
	starpu_codelet_init(&read_cl);
	read_cl.opencl_funcs[0] = read_opencl;
	read_cl.nbuffers = 1;
	read_cl.modes[0] = STARPU_R;
	read_cl.name = "read";
}

const uint64_t kMoments = ASTRO_MOMENT_BIT(ASTRO_MOMENT_TRANSFER_BEGIN) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TRANSFER_END) |
			  ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED);

// The runtime with ncpus CPU workers and one OpenCL worker on a CPU device
// (eager: no policy prefetch, so every transfer is a task's own fetch).
class Pipeline : public testing::Test
{
protected:
	void start(int ncpus, const char *pipeline)
	{
		ScopedEnv depth("STARPU_OPENCL_PIPELINE", pipeline);
		starpu_conf conf = conf_with_ncpus(ncpus);
		conf.nopencl = 1;
		conf.sched_policy_name = "eager";
		ASSERT_EQ(starpu_init(&conf), 0);
		started_ = true;
		if (starpu_opencl_worker_get_count() == 0)
			GTEST_SKIP() << "no OpenCL device here (install pocl-opencl-icd for a CPU one)";
		make_codelets();
		opencl_worker_ = starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0);
		cpu_worker_ = starpu_worker_get_by_type(STARPU_CPU_WORKER, 0);
		node_ = starpu_worker_get_memory_node((unsigned)opencl_worker_);
		subscription_ = astro_observe_subscribe(kMoments, EventLog::record, &log_);
		ASSERT_GE(subscription_, 0);
	}
	void TearDown() override
	{
		if (subscription_ >= 0)
			astro_observe_unsubscribe(subscription_);
		if (started_)
			starpu_shutdown();
	}
	starpu_task *task_on(starpu_codelet *cl, starpu_data_handle_t h, int worker, int *arg = nullptr)
	{
		starpu_task *t = starpu_task_create();
		t->cl = cl;
		t->handles[0] = h;
		t->cl_arg = arg;
		t->execute_on_a_specific_worker = 1;
		t->workerid = (unsigned)worker;
		return t;
	}
	// Runs A then B (each adding one to a vector of its own, of different
	// sizes so that their transfers tell apart) on the OpenCL worker, both
	// queued before the worker looks; returns the log's indexes of B's
	// transfer begin and end to the device and A's start and end.
	void run_two(long *b_begin, long *b_end, long *a_started, long *a_ended)
	{
		std::vector<int> a(1000, 0), b(3000, 0);
		starpu_data_handle_t ha, hb;
		starpu_vector_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)a.data(), a.size(), sizeof(int));
		starpu_vector_data_register(&hb, STARPU_MAIN_RAM, (uintptr_t)b.data(), b.size(), sizeof(int));
		starpu_pause();
		starpu_task *ta = task_on(&add_cl, ha, opencl_worker_), *tb = task_on(&add_cl, hb, opencl_worker_);
		ASSERT_EQ(starpu_task_submit(ta), 0);
		ASSERT_EQ(starpu_task_submit(tb), 0);
		starpu_resume();
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		starpu_data_unregister(ha);
		starpu_data_unregister(hb);
		EXPECT_EQ(a[999], 1);
		EXPECT_EQ(b[2999], 1);
		unsigned node = node_;
		auto b_to_device = [node](const astro_event &e) { return e.dst_node == node && e.bytes == 3000 * sizeof(int); };
		*b_begin = log_.find(ASTRO_MOMENT_TRANSFER_BEGIN, b_to_device);
		*b_end = log_.find(ASTRO_MOMENT_TRANSFER_END, b_to_device);
		*a_started = log_.find(ASTRO_MOMENT_TASK_STARTED, [ta](const astro_event &e) { return e.task == ta; });
		*a_ended = log_.find(ASTRO_MOMENT_TASK_ENDED, [ta](const astro_event &e) { return e.task == ta; });
		ASSERT_GE(*b_begin, 0);
		ASSERT_GE(*b_end, 0);
		ASSERT_GE(*a_started, 0);
		ASSERT_GE(*a_ended, 0);
	}

	EventLog log_;
	int subscription_ = -1;
	bool started_ = false;
	int opencl_worker_ = -1, cpu_worker_ = -1;
	unsigned node_ = 0;
};

TEST_F(Pipeline, TheNextTasksTransferOverlapsTheRunningTask)
{
	start(0, nullptr); // the default pipeline: 2
	if (IsSkipped() || HasFatalFailure())
		return;
	long b_begin, b_end, a_started, a_ended;
	run_two(&b_begin, &b_end, &a_started, &a_ended);
	// B's data was asked for before A ran, and arrived after A ended: under way meanwhile.
	EXPECT_LT(b_begin, a_started);
	EXPECT_GT(b_end, a_ended);
}

TEST_F(Pipeline, PipelineZeroFetchesEachTaskWhenItRuns)
{
	start(0, "0");
	if (IsSkipped() || HasFatalFailure())
		return;
	long b_begin, b_end, a_started, a_ended;
	run_two(&b_begin, &b_end, &a_started, &a_ended);
	EXPECT_GT(b_begin, a_ended);
	EXPECT_GT(b_end, b_begin);
}

TEST_F(Pipeline, ABadPipelineValueIsSaidAndTheDefaultUsed)
{
	testing::internal::CaptureStderr();
	start(0, "many");
	std::string err = testing::internal::GetCapturedStderr();
	if (IsSkipped() || HasFatalFailure())
		return;
	EXPECT_TRUE(contains(err, "STARPU_OPENCL_PIPELINE")) << err;
	long b_begin, b_end, a_started, a_ended;
	run_two(&b_begin, &b_end, &a_started, &a_ended);
	EXPECT_LT(b_begin, a_started);
}

// Tasks reading the same handle, in the pipeline together: one transfer, which both wait for.
TEST_F(Pipeline, ReadersOfOneHandleShareItsTransfer)
{
	start(0, "4");
	if (IsSkipped() || HasFatalFailure())
		return;
	const unsigned nhandles = 8, nreaders = 6;
	std::vector<std::vector<int>> data(nhandles, std::vector<int>(256, 7));
	std::vector<starpu_data_handle_t> handles(nhandles);
	for (unsigned i = 0; i < nhandles; i++)
		starpu_vector_data_register(&handles[i], STARPU_MAIN_RAM, (uintptr_t)data[i].data(), 256, sizeof(int));
	starpu_pause();
	for (unsigned r = 0; r < nreaders; r++)
		for (unsigned i = 0; i < nhandles; i++)
			ASSERT_EQ(starpu_task_submit(task_on(&read_cl, handles[i], opencl_worker_)), 0);
	starpu_resume();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	for (unsigned i = 0; i < nhandles; i++)
		starpu_data_unregister(handles[i]);
	// Read only: each handle went to the device once, and nothing came back.
	EXPECT_EQ(log_.count(ASTRO_MOMENT_TRANSFER_BEGIN), (long)nhandles);
	EXPECT_EQ(log_.count(ASTRO_MOMENT_TRANSFER_END), (long)nhandles);
	EXPECT_EQ(log_.count(ASTRO_MOMENT_TASK_ENDED), (long)(nhandles * nreaders));
}

// Handles written in turn on the CPU and the device, many tasks in flight:
// every value right, every transfer begun has ended, and exactly the
// transfers coherency needs (one per change of side, one home at the end).
TEST_F(Pipeline, AlternatingWritersLoseAndDoubleNoTransfer)
{
	start(1, "3");
	if (IsSkipped() || HasFatalFailure())
		return;
	if (cpu_worker_ < 0)
		GTEST_SKIP() << "no CPU worker";
	const unsigned nhandles = 6, nturns = 8, n = 512;
	std::vector<std::vector<int>> data(nhandles, std::vector<int>(n, 0));
	std::vector<starpu_data_handle_t> handles(nhandles);
	for (unsigned i = 0; i < nhandles; i++)
		starpu_vector_data_register(&handles[i], STARPU_MAIN_RAM, (uintptr_t)data[i].data(), n, sizeof(int));
	for (unsigned turn = 0; turn < nturns; turn++)
		for (unsigned i = 0; i < nhandles; i++)
			ASSERT_EQ(starpu_task_submit(task_on(&add_cl, handles[i], turn % 2 ? cpu_worker_ : opencl_worker_)), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	for (unsigned i = 0; i < nhandles; i++)
		starpu_data_unregister(handles[i]);
	for (unsigned i = 0; i < nhandles; i++) {
		EXPECT_EQ(data[i][0], (int)nturns) << "handle " << i;
		EXPECT_EQ(data[i][n - 1], (int)nturns) << "handle " << i;
	}
	// Device, CPU, device...: one transfer per turn (the first brings it, each
	// later one crosses over), the last turn on the CPU leaves it home.
	long begins = log_.count(ASTRO_MOMENT_TRANSFER_BEGIN), ends = log_.count(ASTRO_MOMENT_TRANSFER_END);
	EXPECT_EQ(begins, (long)(nhandles * nturns));
	EXPECT_EQ(ends, begins);
}

// A pipeline deeper than the device's room (8 tasks of 256 KiB, 1 MiB there):
// the tasks that find no room ahead fetch when they run, after eviction; no data lost.
TEST_F(Pipeline, APipelineDeeperThanTheDevicesRoomLosesNoData)
{
	ScopedEnv limit("STARPU_LIMIT_OPENCL_MEM", "1"); // MiB
	start(0, "8");
	if (IsSkipped() || HasFatalFailure())
		return;
	EXPECT_EQ(starpu_memory_get_total(node_), 1 << 20);
	const unsigned nvec = 8, n = 64 * 1024, rounds = 3;
	std::vector<std::vector<int>> data(nvec, std::vector<int>(n, 0));
	std::vector<starpu_data_handle_t> handles(nvec);
	for (unsigned i = 0; i < nvec; i++)
		starpu_vector_data_register(&handles[i], STARPU_MAIN_RAM, (uintptr_t)data[i].data(), n, sizeof(int));
	static int amount[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	starpu_pause();
	for (unsigned round = 0; round < rounds; round++)
		for (unsigned i = 0; i < nvec; i++)
			ASSERT_EQ(starpu_task_submit(task_on(&add_cl, handles[i], opencl_worker_, &amount[i])), 0);
	starpu_resume();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_LE(starpu_memory_get_total(node_) - starpu_memory_get_available(node_), 1 << 20);
	for (unsigned i = 0; i < nvec; i++)
		starpu_data_unregister(handles[i]);
	for (unsigned i = 0; i < nvec; i++) {
		EXPECT_EQ(data[i][0], (int)rounds * amount[i]) << "vector " << i;
		EXPECT_EQ(data[i][n - 1], (int)rounds * amount[i]) << "vector " << i;
	}
	EXPECT_EQ(log_.count(ASTRO_MOMENT_TRANSFER_END), log_.count(ASTRO_MOMENT_TRANSFER_BEGIN));
}

// ------------------------------------------ asynchronous implementations

// A's work waits in the device's queue for a user event the test completes;
// B counts its starts. Both on the OpenCL worker, queued before it looks.
std::atomic<cl_event> gate{nullptr};
std::atomic<int> b_started{0}, ends{0}, a_end{0}, b_end{0};

void gated_opencl(void *[], void *)
{
	cl_context context;
	cl_command_queue queue;
	starpu_opencl_get_current_context(&context);
	starpu_opencl_get_current_queue(&queue);
	cl_int err;
	cl_event user = clCreateUserEvent(context, &err);
	ASSERT_EQ(err, CL_SUCCESS);
	ASSERT_EQ(clEnqueueMarkerWithWaitList(queue, 1, &user, nullptr), CL_SUCCESS);
	gate = user;
}

void counted_opencl(void *[], void *)
{
	b_started++;
}

class AsyncPipeline : public Pipeline
{
protected:
	// Runs A (gated) then B; the gate opens once B started or after wait_ms.
	void run_gated(bool async, int wait_ms)
	{
		b_started = ends = a_end = b_end = 0;
		gate = nullptr;
		starpu_codelet a, b;
		starpu_codelet_init(&a);
		a.opencl_funcs[0] = gated_opencl;
		a.opencl_flags[0] = async ? STARPU_OPENCL_ASYNC : 0;
		a.name = "gated";
		starpu_codelet_init(&b);
		b.opencl_funcs[0] = counted_opencl;
		b.opencl_flags[0] = STARPU_OPENCL_ASYNC;
		b.name = "counted";
		starpu_pause();
		starpu_task *ta = task_on(&a, nullptr, opencl_worker_), *tb = task_on(&b, nullptr, opencl_worker_);
		ta->callback_func = [](void *) { a_end = ++ends; };
		tb->callback_func = [](void *) { b_end = ++ends; };
		ASSERT_EQ(starpu_task_submit(ta), 0);
		ASSERT_EQ(starpu_task_submit(tb), 0);
		starpu_resume();
		for (int ms = 0; ms < wait_ms && (!gate.load() || b_started.load() == 0); ms++)
			usleep(1000);
		opened_after_b_ = b_started.load() == 1;
		a_ended_before_ = a_end.load() != 0;
		while (!gate.load()) /* A's function always runs: it made the gate */
			usleep(1000);
		clSetUserEventStatus(gate.load(), CL_COMPLETE);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		clReleaseEvent(gate.load());
		EXPECT_EQ(a_end.load(), 1) << "A ends first";
		EXPECT_EQ(b_end.load(), 2);
	}
	bool opened_after_b_ = false, a_ended_before_ = false;
};

// STARPU_OPENCL_ASYNC: the worker starts B while A's work waits in the queue, and A ends only when its work is done.
TEST_F(AsyncPipeline, TheNextTaskStartsWhileAnAsynchronousOneRuns)
{
	start(0, nullptr);
	if (IsSkipped() || HasFatalFailure())
		return;
	run_gated(true, 30000);
	EXPECT_TRUE(opened_after_b_) << "B did not start while A's work waited";
	EXPECT_FALSE(a_ended_before_) << "A ended before its work was done";
}

// Without the flag the implementation's work is waited for: B starts only after A ended (looked at for 0.2 s).
TEST_F(AsyncPipeline, ASynchronousImplementationIsWaitedFor)
{
	start(0, nullptr);
	if (IsSkipped() || HasFatalFailure())
		return;
	run_gated(false, 200);
	EXPECT_FALSE(opened_after_b_) << "B started while A's work was under way";
	EXPECT_FALSE(a_ended_before_);
}

// One task at a time (STARPU_OPENCL_PIPELINE=0): an asynchronous implementation is waited for too.
TEST_F(AsyncPipeline, WithoutAPipelineAnAsynchronousImplementationIsWaitedFor)
{
	start(0, "0");
	if (IsSkipped() || HasFatalFailure())
		return;
	run_gated(true, 200);
	EXPECT_FALSE(opened_after_b_) << "B started while A's work was under way";
	EXPECT_FALSE(a_ended_before_);
}

} // namespace

#else

TEST(OpenCLPipeline, NotBuilt)
{
	GTEST_SKIP() << "Astrolabe was built without OpenCL (install opencl-headers and ocl-icd-opencl-dev, then configure again)";
}

#endif

int main(int argc, char **argv)
{
	return opencl_test_main(argc, argv, "test-opencl-pipeline");
}
