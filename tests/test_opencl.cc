// SPDX-License-Identifier: LGPL-2.1-or-later
// The OpenCL driver on a real OpenCL platform (PoCL here: a device of type
// CPU, hence STARPU_OPENCL_ON_CPUS=1), and through it the kernel's memory
// nodes: coherency, transfers and their statistics, prefetch, eviction.
// Every test skips where no OpenCL device exists.
#include <gtest/gtest.h>
#include <starpu.h>
#include <astrolabe/observe.h>
#include <algorithm>
#include <atomic>
#include <mutex>
#include <fstream>
#include <sstream>
#include <vector>
#include "opencl_helpers.h"
#include "held_transfers.h"
#include <cmath>
#include <dirent.h>
#include <dlfcn.h>
#include <csignal>
#include <sys/wait.h>
#include <spawn.h>

using namespace astro_test;

#ifdef STARPU_USE_OPENCL

namespace {

const char *kernels_source = R"(
__kernel void scale(__global float *v, unsigned n, float factor)
{
	size_t i = get_global_id(0);
	if (i < n)
		v[i] *= factor;
}
__kernel void add(__global int *v, unsigned n, int what)
{
	size_t i = get_global_id(0);
	if (i < n)
		v[i] += what;
}
)";

starpu_opencl_program programs;

// Runs kernel `name` of the programs on the vector of buffers[0] with the extra argument arg.
template <typename T> void run_kernel(void *buffers[], const char *name, T arg)
{
	cl_mem v = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	int devid = starpu_worker_get_devid(starpu_worker_get_id());
	cl_kernel kernel;
	cl_command_queue queue;
	cl_int err = starpu_opencl_load_kernel(&kernel, &queue, &programs, name, devid);
	if (err != CL_SUCCESS)
		STARPU_OPENCL_REPORT_ERROR(err);
	clSetKernelArg(kernel, 0, sizeof(v), &v);
	clSetKernelArg(kernel, 1, sizeof(n), &n);
	clSetKernelArg(kernel, 2, sizeof(arg), &arg);
	size_t global = n;
	cl_event event;
	err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, &event);
	if (err != CL_SUCCESS)
		STARPU_OPENCL_REPORT_ERROR(err);
	clFinish(queue);
	EXPECT_EQ(starpu_opencl_collect_stats(event), CL_SUCCESS);
	clReleaseEvent(event);
	starpu_opencl_release_kernel(kernel);
}

void scale_opencl(void *buffers[], void *arg)
{
	run_kernel(buffers, "scale", *(float *)arg);
}

// Scales a vector in place on the OpenCL device by *(float *)cl_arg.
starpu_codelet scale_codelet()
{
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.opencl_funcs[0] = scale_opencl;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_RW;
	return cl;
}

std::atomic<int> ran_on_cpu{0}, ran_on_opencl{0};

void add_opencl(void *buffers[], void *arg)
{
	ran_on_opencl++;
	run_kernel(buffers, "add", arg ? *(int *)arg : 1);
}

void add_cpu(void *buffers[], void *arg)
{
	ran_on_cpu++;
	int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] += arg ? *(int *)arg : 1;
}

// The runtime with ncpus CPU workers and one OpenCL worker on a CPU device,
// the test kernels built; skipped cleanly without a device.
class OpenCL : public testing::Test
{
protected:
	void SetUp() override
	{
		ran_on_cpu = ran_on_opencl = 0;
		starpu_conf conf = conf_with_ncpus(1);
		conf.nopencl = 1;
		conf.sched_policy_name = policy();
		init_ret_ = starpu_init(&conf);
		ASSERT_EQ(init_ret_, 0);
		if (starpu_opencl_worker_get_count() == 0)
			GTEST_SKIP() << "no OpenCL device here (install pocl-opencl-icd for a CPU one)";
		ASSERT_EQ(starpu_opencl_load_opencl_from_string(kernels_source, &programs, NULL), CL_SUCCESS);
		loaded_ = true;
		starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
		cpu_worker_ = starpu_worker_get_by_type(STARPU_CPU_WORKER, 0);
		opencl_worker_ = starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0);
		opencl_node_ = starpu_worker_get_memory_node((unsigned)opencl_worker_);
	}
	virtual const char *policy() const { return nullptr; }
	void TearDown() override
	{
		if (loaded_)
			starpu_opencl_unload_opencl(&programs);
		if (init_ret_ == 0) {
			starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
			starpu_shutdown();
		}
	}

	// Bytes and transfers over the bus from src to dst since profiling started
	// (a read of the bus's profiling info restarts it, as in StarPU: summed here).
	std::pair<long long, int> bus(unsigned src, unsigned dst)
	{
		int id = starpu_bus_get_id((int)src, (int)dst);
		if (id < 0)
			return {0, 0};
		starpu_profiling_bus_info info;
		EXPECT_EQ(starpu_bus_get_profiling_info(id, &info), 0);
		std::pair<long long, int> &total = bus_totals_[src][dst];
		total.first += info.transferred_bytes;
		total.second += info.transfer_count;
		return total;
	}
	std::pair<long long, int> bus_totals_[STARPU_MAXNODES][STARPU_MAXNODES] = {};

	static int submit_on(starpu_codelet *cl, starpu_data_handle_t h, int worker, void *arg = nullptr)
	{
		return submit_on_handle(cl, h, arg, worker);
	}

	int init_ret_ = -1;
	bool loaded_ = false;
	int cpu_worker_ = -1, opencl_worker_ = -1;
	unsigned opencl_node_ = 0;
};

// ------------------------------------------------------------ memory nodes

TEST_F(OpenCL, TheDeviceIsAMemoryNodeOfItsOwn)
{
	EXPECT_EQ(starpu_memory_nodes_get_count(), 2u);
	EXPECT_EQ(starpu_node_get_kind(STARPU_MAIN_RAM), STARPU_CPU_RAM);
	EXPECT_EQ(opencl_node_, 1u);
	EXPECT_EQ(starpu_node_get_kind(opencl_node_), STARPU_OPENCL_RAM);
	EXPECT_EQ(starpu_worker_get_memory_node((unsigned)cpu_worker_), (unsigned)STARPU_MAIN_RAM);
	EXPECT_EQ(starpu_memory_node_get_devid(opencl_node_), 0);
	EXPECT_EQ(starpu_memory_nodes_get_count_by_kind(STARPU_OPENCL_RAM), 1u);
	char name[32];
	starpu_memory_node_get_name(opencl_node_, name, sizeof(name));
	EXPECT_STREQ(name, "OpenCL 0");
	starpu_memory_node_get_name(STARPU_MAIN_RAM, name, sizeof(name));
	EXPECT_STREQ(name, "NUMA 0");
	EXPECT_GT(starpu_memory_get_total(opencl_node_), 0);

	// Allocations on the node count against it.
	starpu_ssize_t before = starpu_memory_get_available(opencl_node_);
	uintptr_t buffer = starpu_malloc_on_node(opencl_node_, 1 << 20);
	ASSERT_NE(buffer, 0u);
	EXPECT_EQ(starpu_memory_get_available(opencl_node_), before - (1 << 20));
	starpu_free_on_node(opencl_node_, buffer, 1 << 20);
	EXPECT_EQ(starpu_memory_get_available(opencl_node_), before);

	// The helpers give this device's objects.
	cl_context context;
	cl_command_queue queue;
	cl_device_id device;
	starpu_opencl_get_context(0, &context);
	starpu_opencl_get_queue(0, &queue);
	starpu_opencl_get_device(0, &device);
	EXPECT_NE(context, nullptr);
	EXPECT_NE(queue, nullptr);
	EXPECT_NE(device, nullptr);
}

// --------------------------------------------------------- vector scaling

// libastrolabe links no OpenCL (its package needs no ICD loader): the loader is taken at the first
// need, here the OpenCL worker's start (the test program links it too, for its own kernels).
TEST_F(OpenCL, TheCoreLibraryLinksNoOpenCL)
{
	std::string library, needed = needed_libraries_of(reinterpret_cast<void *>(&starpu_opencl_load_kernel), &library);
	// A build with the plugins linked in (--enable-static-plugins, as distcheck's) holds the OpenCL driver itself,
	// which links the loader: its other plugins' libraries (OTF2's, PAPI's) are there too.
	if (contains(needed, "libopen-trace-format2") || contains(needed, "libpapi"))
		GTEST_SKIP() << "the plugins are linked into " << library;
	EXPECT_TRUE(contains(needed, "libglib")) << "the NEEDED entries of " << library << " were read: " << needed;
	EXPECT_FALSE(contains(needed, "OpenCL")) << library << " links OpenCL: " << needed;
	EXPECT_TRUE(contains(read_file("/proc/self/maps"), "libOpenCL")) << "the worker's start loaded the ICD loader";
	EXPECT_GE(opencl_worker_, 0);
}

TEST_F(OpenCL, VectorScalingRunsOnTheDeviceAndComesBack)
{
	const unsigned n = 1000;
	std::vector<float> v(n);
	for (unsigned i = 0; i < n; i++)
		v[i] = (float)i;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), n, sizeof(float));
	starpu_codelet cl = scale_codelet();
	cl.name = "scale";
	float factor = 3.0f;
	ASSERT_EQ(submit_on(&cl, h, -1, &factor), 0);
	starpu_task_wait_for_all();
	// The data is on the device only until the application gets it back.
	EXPECT_TRUE(starpu_data_is_on_node(h, opencl_node_));
	EXPECT_FALSE(starpu_data_is_on_node(h, STARPU_MAIN_RAM));
	EXPECT_EQ(bus(STARPU_MAIN_RAM, opencl_node_), std::make_pair((long long)n * 4, 1));
	starpu_data_unregister(h);
	EXPECT_EQ(bus(opencl_node_, STARPU_MAIN_RAM), std::make_pair((long long)n * 4, 1));
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(v[i], 3.0f * i) << "element " << i;
}

// --------------------------------------------------------------- coherency

TEST_F(OpenCL, AHandleWrittenInTurnOnCpuAndDeviceKeepsItsValue)
{
	const unsigned n = 256, rounds = 10;
	std::vector<int> v(n, 0);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), n, sizeof(int));
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cpu_funcs[0] = add_cpu;
	cl.opencl_funcs[0] = add_opencl;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_RW;
	for (unsigned r = 0; r < rounds; r++) {
		ASSERT_EQ(submit_on(&cl, h, cpu_worker_), 0);
		ASSERT_EQ(submit_on(&cl, h, opencl_worker_), 0);
	}
	starpu_task_wait_for_all();
	EXPECT_EQ(ran_on_cpu, (int)rounds);
	EXPECT_EQ(ran_on_opencl, (int)rounds);
	// Every change of side moves the data once: in 10 times, back 9 times (the last one at the acquire).
	EXPECT_EQ(bus(STARPU_MAIN_RAM, opencl_node_), std::make_pair((long long)rounds * n * 4, (int)rounds));
	EXPECT_EQ(bus(opencl_node_, STARPU_MAIN_RAM), std::make_pair((long long)(rounds - 1) * n * 4, (int)rounds - 1));
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	EXPECT_EQ(bus(opencl_node_, STARPU_MAIN_RAM).second, (int)rounds);
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(v[i], (int)(2 * rounds)) << "element " << i;
	starpu_data_release(h);
	// Reading on the CPU kept the device's copy valid: reading there again moves nothing.
	ASSERT_EQ(submit_on(&cl, h, cpu_worker_), 0);
	starpu_task_wait_for_all();
	starpu_data_unregister(h);
	EXPECT_EQ(bus(STARPU_MAIN_RAM, opencl_node_).second, (int)rounds);
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(v[i], (int)(2 * rounds + 1)) << "element " << i;
}

TEST_F(OpenCL, WhereAndCanExecuteChooseTheImplementation)
{
	std::vector<int> v(16, 0);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), 16, sizeof(int));
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cpu_funcs[0] = add_cpu;
	cl.opencl_funcs[0] = add_opencl;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_RW;
	cl.where = STARPU_OPENCL;
	for (int i = 0; i < 6; i++)
		ASSERT_EQ(submit_on(&cl, h, -1), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(ran_on_opencl, 6);
	EXPECT_EQ(ran_on_cpu, 0);
	cl.where = STARPU_CPU | STARPU_OPENCL;
	cl.can_execute = [](unsigned workerid, struct starpu_task *, unsigned) {
		return (int)(starpu_worker_get_type((int)workerid) == STARPU_CPU_WORKER);
	};
	for (int i = 0; i < 6; i++)
		ASSERT_EQ(submit_on(&cl, h, -1), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(ran_on_cpu, 6);
	EXPECT_EQ(ran_on_opencl, 6);
	starpu_data_unregister(h);
	EXPECT_EQ(v[0], 12);
}

// Two handles of a variable and a matrix go the same way as vectors (their interfaces' copy methods).
void bump_variable_opencl(void *buffers[], void *)
{
	// Through the helpers: read, change, write the device buffer from here.
	cl_mem m = (cl_mem)STARPU_VARIABLE_GET_DEV_HANDLE(buffers[0]);
	cl_command_queue queue;
	starpu_opencl_get_current_queue(&queue);
	int value;
	clEnqueueReadBuffer(queue, m, CL_TRUE, STARPU_VARIABLE_GET_OFFSET(buffers[0]), sizeof(value), &value, 0, NULL, NULL);
	value += 100;
	clEnqueueWriteBuffer(queue, m, CL_TRUE, STARPU_VARIABLE_GET_OFFSET(buffers[0]), sizeof(value), &value, 0, NULL, NULL);
}

TEST_F(OpenCL, VariablesTravelToo)
{
	int x = 5;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.opencl_funcs[0] = bump_variable_opencl;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(submit_on(&cl, h, -1), 0);
	ASSERT_EQ(submit_on(&cl, h, -1), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 205);
	starpu_task_wait_for_all(); // the detached tasks read cl (on this stack) until their end, after the data
}

// A device buffer outlives its handle, for the next handle of the same layout.
TEST_F(OpenCL, TheAllocationCacheReusesDeviceBuffers)
{
	starpu_ssize_t available = starpu_memory_get_available(opencl_node_);
	std::vector<float> a(4096, 1.0f), b(4096, 2.0f), c(1000, 3.0f);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)a.data(), 4096, sizeof(float));
	ASSERT_EQ(starpu_data_fetch_on_node(h, opencl_node_, 0), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(starpu_memory_get_available(opencl_node_), available - 4096 * 4) << "the buffer was not kept";
	// The same layout takes the kept buffer; another one allocates.
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)b.data(), 4096, sizeof(float));
	ASSERT_EQ(starpu_data_fetch_on_node(h, opencl_node_, 0), 0);
	EXPECT_EQ(starpu_memory_get_available(opencl_node_), available - 4096 * 4) << "the kept buffer was not reused";
	starpu_data_handle_t other;
	starpu_vector_data_register(&other, STARPU_MAIN_RAM, (uintptr_t)c.data(), 1000, sizeof(float));
	ASSERT_EQ(starpu_data_fetch_on_node(other, opencl_node_, 0), 0);
	EXPECT_EQ(starpu_memory_get_available(opencl_node_), available - 4096 * 4 - 1000 * 4);
	// The reused buffer holds b's data, not a's.
	starpu_codelet cl = scale_codelet();
	float factor = 5.0f;
	ASSERT_EQ(submit_on(&cl, h, -1, &factor), 0);
	starpu_data_unregister(h);
	starpu_data_unregister(other);
	EXPECT_EQ(b[4095], 10.0f);
	starpu_task_wait_for_all(); // the detached tasks read cl (on this stack) until their end, after the data
}

// ----------------------------------------------------------------- prefetch

TEST_F(OpenCL, PrefetchMovesTheDataBeforeTheTask)
{
	std::vector<float> v(512, 1.0f);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), 512, sizeof(float));
	EXPECT_FALSE(starpu_data_is_on_node(h, opencl_node_));
	ASSERT_EQ(starpu_data_prefetch_on_node(h, opencl_node_, 0), 0);
	EXPECT_TRUE(starpu_data_is_on_node(h, opencl_node_));
	EXPECT_TRUE(starpu_data_is_on_node(h, STARPU_MAIN_RAM)); // a read: both copies valid
	EXPECT_EQ(bus(STARPU_MAIN_RAM, opencl_node_).second, 1);
	starpu_codelet cl = scale_codelet();
	float factor = 2.0f;
	ASSERT_EQ(submit_on(&cl, h, -1, &factor), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(bus(STARPU_MAIN_RAM, opencl_node_).second, 1) << "the task fetched again what was prefetched";

	// wont_use: back to main memory, the device's room given back.
	starpu_ssize_t available = starpu_memory_get_available(opencl_node_);
	starpu_data_wont_use(h);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0); // ordered after the wont_use
	EXPECT_FALSE(starpu_data_is_on_node(h, opencl_node_));
	EXPECT_EQ(starpu_memory_get_available(opencl_node_), available + 512 * 4);
	EXPECT_EQ(v[10], 2.0f);
	starpu_data_release(h);
	starpu_data_unregister(h);

	// Asynchronous: the call returns at once, the transfer thread moves the data.
	std::vector<float> w(512, 1.0f);
	starpu_data_handle_t hw;
	starpu_vector_data_register(&hw, STARPU_MAIN_RAM, (uintptr_t)w.data(), 512, sizeof(float));
	ASSERT_EQ(starpu_data_prefetch_on_node(hw, opencl_node_, 1), 0);
	// Arrived (not only requested, which starpu_data_is_on_node counts too).
	EXPECT_TRUE(wait_until([&] { return starpu_data_is_on_node_excluding_prefetch(hw, opencl_node_) != 0; }));
	EXPECT_EQ(bus(STARPU_MAIN_RAM, opencl_node_).second, 2);
	ASSERT_EQ(submit_on(&cl, hw, -1, &factor), 0);
	starpu_data_unregister(hw); // waits for the task, brings the data back
	EXPECT_EQ(bus(STARPU_MAIN_RAM, opencl_node_).second, 2) << "the task fetched again what was prefetched";
	EXPECT_EQ(w[3], 2.0f);

	std::string err = stderr_of([&] { EXPECT_EQ(starpu_data_prefetch_on_node(nullptr, opencl_node_, 0), -EINVAL); });
	EXPECT_TRUE(contains(err, "starpu_data_prefetch_on_node: NULL handle")) << err;
	starpu_task_wait_for_all(); // the detached tasks read cl (on this stack) until their end, after the data
}

// Asynchronous requests (issue 40) are served by level (fetch, prefetch, idle prefetch),
// then by priority (highest first), then in order; a queued prefetch does not count as
// the data being on the node (starpu_data_is_on_node_excluding_prefetch).
TEST_F(OpenCL, AsyncRequestsAreServedByLevelThenPriority)
{
	std::vector<std::vector<float>> buffers(6, std::vector<float>(256, 1.0f));
	starpu_data_handle_t h[6];
	for (unsigned i = 0; i < 6; i++)
		starpu_vector_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)buffers[i].data(), 256, sizeof(float));
	HeldTransfers held;
	held.blocker = h[0];
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_DATA_REQUEST), HeldTransfers::observe, &held);
	ASSERT_GE(id, 0);
	ASSERT_EQ(starpu_data_prefetch_on_node(h[0], opencl_node_, 1), 0);
	ASSERT_TRUE(wait_until([&] { return held.holding.load(); }));
	ASSERT_EQ(starpu_data_prefetch_on_node_prio(h[1], opencl_node_, 1, 0), 0);
	ASSERT_EQ(starpu_data_idle_prefetch_on_node_prio(h[2], opencl_node_, 1, 10), 0);
	ASSERT_EQ(starpu_data_prefetch_on_node_prio(h[3], opencl_node_, 1, 5), 0);
	ASSERT_EQ(starpu_data_prefetch_on_node_prio(h[4], opencl_node_, 1, -1), 0);
	ASSERT_EQ(starpu_data_fetch_on_node(h[5], opencl_node_, 1), 0);
	EXPECT_EQ(starpu_data_is_on_node_excluding_prefetch(h[1], opencl_node_), 0u);
	// Queued, the data will be there: starpu_data_is_on_node counts every request, its
	// _excluding_prefetch form only the fetch.
	EXPECT_EQ(starpu_data_is_on_node(h[1], opencl_node_), 1u);
	EXPECT_EQ(starpu_data_is_on_node(h[2], opencl_node_), 1u) << "an idle prefetch queued";
	EXPECT_EQ(starpu_data_is_on_node_excluding_prefetch(h[5], opencl_node_), 1u) << "a fetch queued";
	int allocated = -1, valid = -1, requested = -1;
	starpu_data_query_status(h[1], (int)opencl_node_, &allocated, &valid, &requested);
	EXPECT_EQ(requested, 1);
	EXPECT_EQ(valid, 0);
	held.released = true;
	EXPECT_TRUE(wait_until([&] {
		for (unsigned i = 0; i < 6; i++)
			if (!starpu_data_is_on_node_excluding_prefetch(h[i], opencl_node_))
				return false;
		return true;
	}));
	astro_observe_unsubscribe(id);
	std::vector<const void *> expected = { h[5], h[3], h[1], h[4], h[2] };
	EXPECT_EQ(held.order, expected) << "fetch, prefetches by priority 5, 0, -1, then the idle prefetch";
	EXPECT_EQ(starpu_data_test_if_mapped_on_node(h[1], opencl_node_), 0u);

	// The data on the device, as a snapshot.
	starpu_data_handle_t *handles = nullptr;
	int *valids = nullptr;
	unsigned n = 0;
	starpu_data_get_node_data(opencl_node_, &handles, &valids, &n);
	ASSERT_EQ(n, 6u);
	std::vector<starpu_data_handle_t> listed(handles, handles + n);
	std::sort(listed.begin(), listed.end());
	std::vector<starpu_data_handle_t> all(h, h + 6);
	std::sort(all.begin(), all.end());
	EXPECT_EQ(listed, all);
	for (unsigned i = 0; i < n; i++)
		EXPECT_EQ(valids[i], 1);
	free(handles);
	free(valids);

	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_data_prefetch_on_node_prio(nullptr, opencl_node_, 1, 3), -EINVAL);
		EXPECT_EQ(starpu_data_idle_prefetch_on_node_prio(h[1], 99, 1, 3), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "starpu_data_prefetch_on_node_prio: NULL handle")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_idle_prefetch_on_node_prio: no memory node 99")) << err;
	for (unsigned i = 0; i < 6; i++)
		starpu_data_unregister(h[i]);
}

// Buffers of unregistered data stay on the device for reuse until starpu_memchunk_tidy gives them back.
TEST_F(OpenCL, MemchunkTidyGivesTheKeptBuffersBack)
{
	size_t before = starpu_memory_get_used(opencl_node_);
	std::vector<float> v(1024, 1.0f);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), 1024, sizeof(float));
	ASSERT_EQ(starpu_data_prefetch_on_node(h, opencl_node_, 0), 0);
	EXPECT_EQ(starpu_memory_get_used(opencl_node_), before + 4096);
	starpu_data_unregister(h);
	EXPECT_EQ(starpu_memory_get_used(opencl_node_), before + 4096) << "kept for reuse";
	starpu_memchunk_tidy(opencl_node_);
	EXPECT_EQ(starpu_memory_get_used(opencl_node_), before);
	std::string err = stderr_of([] { starpu_memchunk_tidy(99); });
	EXPECT_TRUE(contains(err, "starpu_memchunk_tidy: no memory node 99")) << err;
}

// Write-through: what a task writes on the device is copied to main memory at once.
TEST_F(OpenCL, WriteThroughMaskCopiesEachWrite)
{
	std::vector<float> v(100, 1.0f);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), 100, sizeof(float));
	starpu_data_set_wt_mask(h, 1u << STARPU_MAIN_RAM);
	starpu_codelet cl = scale_codelet();
	float factor = 4.0f;
	ASSERT_EQ(submit_on(&cl, h, -1, &factor), 0);
	starpu_task_wait_for_all();
	EXPECT_TRUE(starpu_data_is_on_node(h, STARPU_MAIN_RAM));
	EXPECT_TRUE(starpu_data_is_on_node(h, opencl_node_));
	EXPECT_EQ(v[99], 4.0f); // no acquire needed
	EXPECT_EQ(bus(opencl_node_, STARPU_MAIN_RAM).second, 1);
	starpu_data_unregister(h);
	EXPECT_EQ(bus(opencl_node_, STARPU_MAIN_RAM).second, 1) << "unregister moved again what was written through";
}

// A handle still registered at shutdown gets its data back from the device.
TEST(OpenCLShutdown, DataLeftOnTheDeviceComesHomeAtShutdown)
{
	ScopedEnv on_cpus("STARPU_OPENCL_ON_CPUS", "1");
	starpu_conf conf = conf_with_ncpus(1);
	conf.nopencl = 1;
	ASSERT_EQ(starpu_init(&conf), 0);
	if (starpu_opencl_worker_get_count() == 0) {
		starpu_shutdown();
		GTEST_SKIP() << "no OpenCL device here";
	}
	ASSERT_EQ(starpu_opencl_load_opencl_from_string(kernels_source, &programs, NULL), CL_SUCCESS);
	std::vector<float> v(64, 1.0f);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), 64, sizeof(float));
	starpu_codelet cl = scale_codelet();
	float factor = 6.0f;
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->handles[0] = h;
	t->cl_arg = &factor;
	ASSERT_EQ(starpu_task_submit(t), 0);
	starpu_task_wait_for_all(); // the result is on the device only
	EXPECT_FALSE(starpu_data_is_on_node(h, STARPU_MAIN_RAM));
	starpu_opencl_unload_opencl(&programs);
	starpu_shutdown();
	EXPECT_EQ(v[63], 6.0f);
	starpu_data_unregister(h); // after shutdown: nothing left to move or free on the device
	EXPECT_EQ(v[63], 6.0f);
}

// ----------------------------------------------------- statistics, events

TEST_F(OpenCL, TransferMomentsCountEveryByte)
{
	EventLog log;
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_TRANSFER_BEGIN) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TRANSFER_END),
					 EventLog::record, &log);
	ASSERT_GE(id, 0);
	std::vector<float> v(2000, 1.0f);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), 2000, sizeof(float));
	starpu_codelet cl = scale_codelet();
	float factor = 2.0f;
	ASSERT_EQ(submit_on(&cl, h, -1, &factor), 0);
	starpu_data_unregister(h);
	astro_observe_unsubscribe(id);
	ASSERT_EQ(log.events.size(), 4u);
	const unsigned src[] = { STARPU_MAIN_RAM, opencl_node_ }, dst[] = { opencl_node_, STARPU_MAIN_RAM };
	for (unsigned t = 0; t < 2; t++) {
		const astro_event &begin = log.events[2 * t], &end = log.events[2 * t + 1];
		EXPECT_EQ(begin.moment, ASTRO_MOMENT_TRANSFER_BEGIN);
		EXPECT_EQ(end.moment, ASTRO_MOMENT_TRANSFER_END);
		EXPECT_EQ(begin.src_node, src[t]);
		EXPECT_EQ(begin.dst_node, dst[t]);
		EXPECT_EQ(end.src_node, src[t]);
		EXPECT_EQ(end.dst_node, dst[t]);
		EXPECT_EQ(begin.bytes, 8000u);
		EXPECT_EQ(end.bytes, 8000u);
		EXPECT_LE(begin.time_us, end.time_us);
	}
	EXPECT_EQ(log.events[0].workerid, opencl_worker_); // fetched by the worker that runs the task
	EXPECT_EQ(log.events[2].workerid, -1);             // brought back by the application's unregister
	EXPECT_EQ(v[1999], 2.0f);
	// What was measured feeds the predictions.
	EXPECT_GT(starpu_transfer_bandwidth(STARPU_MAIN_RAM, opencl_node_), 0.0);
	EXPECT_GT(starpu_transfer_predict(STARPU_MAIN_RAM, opencl_node_, 1 << 20), 0.0);
	EXPECT_EQ(starpu_transfer_predict(STARPU_MAIN_RAM, STARPU_MAIN_RAM, 1 << 20), 0.0);
	starpu_task_wait_for_all(); // the detached tasks read cl (on this stack) until their end, after the data
}

void read_cpu(void *[], void *) {}

TEST_F(OpenCL, PoliciesPrefetchTaskInputsAndPredictTheirTransfers)
{
	std::vector<float> in(1024, 1.0f), out(1024, 0.0f);
	starpu_data_handle_t hin, hout;
	starpu_vector_data_register(&hin, STARPU_MAIN_RAM, (uintptr_t)in.data(), 1024, sizeof(float));
	starpu_vector_data_register(&hout, STARPU_MAIN_RAM, (uintptr_t)out.data(), 1024, sizeof(float));
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cpu_funcs[0] = read_cpu;
	cl.nbuffers = 2;
	cl.modes[0] = STARPU_R;
	cl.modes[1] = STARPU_W;
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->handles[0] = hin;
	t->handles[1] = hout;
	// Only the input has to move; the output is written.
	double predicted = starpu_task_expected_data_transfer_time(opencl_node_, t);
	EXPECT_GT(predicted, 0.0);
	EXPECT_EQ(starpu_task_expected_data_transfer_time(STARPU_MAIN_RAM, t), 0.0);
	EXPECT_EQ(starpu_prefetch_task_input_for(t, (unsigned)opencl_worker_), 0);
	// The transfer thread moves it meanwhile.
	EXPECT_TRUE(wait_until([&] { return starpu_data_is_on_node_excluding_prefetch(hin, opencl_node_) != 0; }));
	EXPECT_FALSE(starpu_data_is_on_node(hout, opencl_node_));
	EXPECT_EQ(starpu_task_expected_data_transfer_time(opencl_node_, t), 0.0);
	starpu_task_destroy(t);
	starpu_data_unregister(hin);
	starpu_data_unregister(hout);
}

TEST(OpenCLStats, BusStatsHaveOneLinePerBus)
{
	TempDir dir;
	std::string file = dir.file("bus.txt");
	{
		ScopedEnv on_cpus("STARPU_OPENCL_ON_CPUS", "1"), stats("STARPU_BUS_STATS", "1"), to("STARPU_BUS_STATS_FILE", file);
		starpu_conf conf = conf_with_ncpus(1);
		conf.nopencl = 1;
		ASSERT_EQ(starpu_init(&conf), 0);
		if (starpu_opencl_worker_get_count() == 0) {
			starpu_shutdown();
			GTEST_SKIP() << "no OpenCL device here";
		}
		std::vector<char> data(3000, 1);
		starpu_data_handle_t h;
		starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)data.data(), 3000, 1);
		EXPECT_EQ(starpu_data_prefetch_on_node(h, 1, 0), 0);
		starpu_data_invalidate(h); // nothing valid: the next read moves nothing
		EXPECT_EQ(starpu_data_fetch_on_node(h, 0, 0), 0);
		EXPECT_EQ(starpu_data_acquire_on_node(h, 1, STARPU_W), 0); // written on the device
		starpu_data_release(h);
		starpu_data_unregister(h);
		starpu_shutdown();
	}
	std::ifstream in(file);
	std::stringstream text;
	text << in.rdbuf();
	EXPECT_TRUE(contains(text.str(), "\tNUMA 0 -> OpenCL 0\t")) << text.str();
	EXPECT_TRUE(contains(text.str(), "(transfers : 1 - avg ")) << text.str();
	EXPECT_TRUE(contains(text.str(), "\tOpenCL 0 -> NUMA 0\t")) << text.str();
	EXPECT_TRUE(contains(text.str(), "Total transfers: 5.86 KB")) << text.str();
}

// The bus tests start one CPU and one OpenCL worker (PoCL's) on host "busbox", the sampling
// directory a fresh folder, the bus not forced to be measured again.
class OpenCLBus : public testing::Test
{
protected:
	TempDir dir;
	ScopedEnv on_cpus{ "STARPU_OPENCL_ON_CPUS", "1" }, where{ "STARPU_PERF_MODEL_DIR", dir.path() },
		host{ "STARPU_HOSTNAME", "busbox" }, calibrate{ "STARPU_BUS_CALIBRATE", nullptr };
	starpu_conf conf = conf_with_ncpus(1);

	void SetUp() override
	{
		conf.nopencl = 1;
		ASSERT_EQ(starpu_init(&conf), 0);
		if (starpu_opencl_worker_get_count() == 0) {
			starpu_shutdown();
			GTEST_SKIP() << "no OpenCL device here";
		}
	}
};

// The bus is measured at the first start on a configuration, kept in the
// sampling directory, and read back (not measured) by the next start.
TEST_F(OpenCLBus, BusFiguresAreWrittenAndReadBack)
{
	double measured = starpu_transfer_bandwidth(STARPU_MAIN_RAM, 1);
	EXPECT_GT(measured, 0.0);
	EXPECT_GT(starpu_transfer_latency(1, STARPU_MAIN_RAM), 0.0);
	starpu_shutdown();
	std::string bus_dir = dir.path() + "/bus/";
	std::ifstream config(bus_dir + "busbox.config");
	std::stringstream text;
	text << config.rdbuf();
	EXPECT_EQ(text.str(), "# Memory nodes the bus figures were measured on\n0\tNUMA 0\n1\tOpenCL 0\n");
	ASSERT_TRUE(file_exists(bus_dir + "busbox.latency"));
	// Figures of our own: the next start takes them as they are.
	{
		std::ofstream bw(bus_dir + "busbox.bandwidth");
		bw << "# to 0\t\tto 1\t\t\n0.000000\t1234.500000\t\n4321.000000\t0.000000\t\n";
	}
	ASSERT_EQ(starpu_init(&conf), 0);
	EXPECT_EQ(starpu_transfer_bandwidth(STARPU_MAIN_RAM, 1), 1234.5);
	EXPECT_EQ(starpu_transfer_bandwidth(1, STARPU_MAIN_RAM), 4321.0);
	EXPECT_NEAR(starpu_transfer_predict(STARPU_MAIN_RAM, 1, 1234500), starpu_transfer_latency(STARPU_MAIN_RAM, 1) + 1000.0, 1e-6);
	starpu_shutdown();
	// A file that does not parse is said, and the bus measured again.
	{
		std::ofstream bw(bus_dir + "busbox.bandwidth");
		bw << "garbage\n";
	}
	std::string err = stderr_of([&] {
		ASSERT_EQ(starpu_init(&conf), 0);
		starpu_shutdown();
	});
	EXPECT_TRUE(contains(err, "busbox.bandwidth does not parse")) << err;
	std::ifstream again(bus_dir + "busbox.bandwidth");
	std::stringstream fixed;
	fixed << again.rdbuf();
	EXPECT_FALSE(contains(fixed.str(), "garbage")) << fixed.str();
}

// The machine is also written as a SimGrid platform (what a simulation build simulates for this
// host name): a host per core, the device with its memory, RAM, and a link each way with the
// figures measured, in bytes/s and seconds.
TEST_F(OpenCLBus, MachineIsWrittenAsASimGridPlatform)
{
	double to_device = starpu_transfer_bandwidth(STARPU_MAIN_RAM, 1);
	starpu_ssize_t memsize = starpu_memory_get_total(1);
	starpu_shutdown();
	std::string path = dir.path() + "/bus/busbox.platform.xml";
	std::string xml = read_file(path);
	ASSERT_FALSE(xml.empty()) << path;
	EXPECT_TRUE(contains(xml, "<host id=\"CPU0\"")) << xml;
	EXPECT_TRUE(contains(xml, "<host id=\"OpenCL0\"")) << xml;
	EXPECT_TRUE(contains(xml, "<prop id=\"memsize\" value=\"" + std::to_string(memsize) + "\"/>")) << xml;
	EXPECT_TRUE(contains(xml, "<host id=\"RAM\"")) << xml;
	char link[128];
	snprintf(link, sizeof(link), "<link id=\"RAM-OpenCL0\" bandwidth=\"%.0fBps\"", to_device * 1e6);
	EXPECT_TRUE(contains(xml, link)) << xml;
	EXPECT_TRUE(contains(xml, "<route src=\"OpenCL0\" dst=\"RAM\" symmetrical=\"NO\"><link_ctn id=\"OpenCL0-RAM\"/></route>")) << xml;
	// Well-formed XML, as SimGrid's parser needs.
	std::string out;
	EXPECT_EQ(run_command("python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " + path + " 2>&1", &out), 0) << out;
}

// ----------------------------------------------------------------- eviction

// One CPU and one OpenCL device (STARPU_OPENCL_ON_CPUS): false, the runtime stopped again, when there is none.
bool start_cpu_and_opencl()
{
	starpu_conf conf = conf_with_ncpus(1);
	conf.nopencl = 1;
	EXPECT_EQ(starpu_init(&conf), 0);
	if (starpu_is_initialized() && starpu_opencl_worker_get_count() > 0)
		return true;
	if (starpu_is_initialized())
		starpu_shutdown();
	return false;
}

TEST(OpenCLLimits, EvictionUnderASmallLimitLosesNoData)
{
	ScopedEnv on_cpus("STARPU_OPENCL_ON_CPUS", "1"), limit("STARPU_LIMIT_OPENCL_MEM", "1"); // 1 MiB
	if (!start_cpu_and_opencl())
		GTEST_SKIP() << "no OpenCL device here";
	ASSERT_EQ(starpu_opencl_load_opencl_from_string(kernels_source, &programs, NULL), CL_SUCCESS);
	unsigned node = starpu_worker_get_memory_node((unsigned)starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0));
	EXPECT_EQ(starpu_memory_get_total(node), 1 << 20);
	// 8 vectors of 256 KiB: 2 MiB, twice the device's room.
	const unsigned nvec = 8, n = 64 * 1024;
	std::vector<std::vector<int>> data(nvec, std::vector<int>(n, 0));
	starpu_data_handle_t h[nvec];
	for (unsigned i = 0; i < nvec; i++)
		starpu_vector_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)data[i].data(), n, sizeof(int));
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.opencl_funcs[0] = add_opencl;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_RW;
	cl.where = STARPU_OPENCL;
	int amount[nvec];
	for (unsigned i = 0; i < nvec; i++)
		amount[i] = (int)i + 1;
	for (unsigned round = 0; round < 3; round++)
		for (unsigned i = 0; i < nvec; i++) {
			starpu_task *t = starpu_task_create();
			t->cl = &cl;
			t->handles[0] = h[i];
			t->cl_arg = &amount[i];
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
	starpu_task_wait_for_all();
	EXPECT_LE(starpu_memory_get_total(node) - starpu_memory_get_available(node), 1 << 20);
	for (unsigned i = 0; i < nvec; i++)
		starpu_data_unregister(h[i]);
	for (unsigned i = 0; i < nvec; i++) {
		EXPECT_EQ(data[i][0], 3 * (int)(i + 1)) << "vector " << i;
		EXPECT_EQ(data[i][n - 1], 3 * (int)(i + 1)) << "vector " << i;
	}
	starpu_opencl_unload_opencl(&programs);
	starpu_shutdown();
}

struct DeviceVictims
{
	starpu_data_handle_t choose = nullptr;
	std::atomic<int> calls{0};
	starpu_data_handle_t toload = nullptr;
	unsigned node = 99;
	std::vector<starpu_data_handle_t> refused;
};

starpu_data_handle_t choose_device_victim(starpu_data_handle_t toload, unsigned node, enum starpu_is_prefetch, void *arg)
{
	auto *v = static_cast<DeviceVictims *>(arg);
	if (v->calls++ == 0) {
		v->toload = toload;
		v->node = node;
	}
	starpu_data_handle_t chosen = v->choose;
	v->choose = nullptr;
	return chosen;
}

void device_victim_refused(starpu_data_handle_t victim, void *arg)
{
	static_cast<DeviceVictims *>(arg)->refused.push_back(victim);
}

// starpu_data_register_victim_selector on a device (issue 40): 256 KiB vectors fetched one
// by one to a 1 MiB device; when it is full the selector is asked, and its choice (not the
// least recently used copy) is the one evicted; the data stays right.
TEST(OpenCLLimits, VictimSelectorChoosesWhatLeavesTheDevice)
{
	ScopedEnv on_cpus("STARPU_OPENCL_ON_CPUS", "1"), limit("STARPU_LIMIT_OPENCL_MEM", "1"); // 1 MiB
	if (!start_cpu_and_opencl())
		GTEST_SKIP() << "no OpenCL device here";
	unsigned node = starpu_worker_get_memory_node((unsigned)starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0));
	const unsigned nvec = 8, n = 64 * 1024;
	std::vector<std::vector<int>> data(nvec, std::vector<int>(n));
	starpu_data_handle_t h[nvec];
	for (unsigned i = 0; i < nvec; i++) {
		std::fill(data[i].begin(), data[i].end(), (int)i);
		starpu_vector_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)data[i].data(), n, sizeof(int));
	}
	DeviceVictims victims;
	victims.choose = h[2];
	starpu_data_register_victim_selector(choose_device_victim, device_victim_refused, &victims);
	unsigned fetched = 0;
	for (; fetched < nvec && victims.calls.load() == 0; fetched++)
		ASSERT_EQ(starpu_data_fetch_on_node(h[fetched], node, 0), 0) << "vector " << fetched;
	ASSERT_LT(fetched, nvec) << "the selector was never asked";
	ASSERT_GE(fetched, 4u);
	EXPECT_EQ(victims.toload, h[fetched - 1]);
	EXPECT_EQ(victims.node, node);
	EXPECT_TRUE(victims.refused.empty());
	EXPECT_FALSE(starpu_data_is_on_node(h[2], node)) << "the chosen vector is still on the device";
	EXPECT_TRUE(starpu_data_is_on_node(h[0], node)) << "the least recently used vector left instead of the chosen one";
	EXPECT_TRUE(starpu_data_is_on_node(h[fetched - 1], node));
	starpu_data_register_victim_selector(nullptr, nullptr, nullptr);
	for (unsigned i = 0; i < nvec; i++) {
		ASSERT_EQ(starpu_data_acquire(h[i], STARPU_R), 0);
		EXPECT_EQ(data[i][0], (int)i);
		EXPECT_EQ(data[i][n - 1], (int)i);
		starpu_data_release(h[i]);
		starpu_data_unregister(h[i]);
	}
	starpu_shutdown();
}

TEST(OpenCLLimits, DataLargerThanTheDeviceIsSaid)
{
	ScopedEnv on_cpus("STARPU_OPENCL_ON_CPUS", "1"), limit("STARPU_LIMIT_OPENCL_MEM", "1");
	if (!start_cpu_and_opencl())
		GTEST_SKIP() << "no OpenCL device here";
	std::vector<char> big(2 << 20);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)big.data(), (uint32_t)big.size(), 1);
	std::string err = stderr_of([&] { starpu_data_fetch_on_node(h, 1, 0); });
	EXPECT_TRUE(contains(err, "no room for 2097152 bytes of data on OpenCL 0")) << err;
	EXPECT_FALSE(starpu_data_is_on_node(h, 1));
	starpu_data_unregister(h);
	starpu_shutdown();
}

// ------------------------------------------------------- helpers' errors

TEST_F(OpenCL, HelpersSayWhatIsWrong)
{
	cl_kernel kernel;
	cl_command_queue queue;
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_opencl_load_kernel(&kernel, &queue, &programs, "no_such_kernel", 0), CL_INVALID_KERNEL_NAME);
	});
	EXPECT_TRUE(contains(err, "no kernel 'no_such_kernel'")) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_opencl_load_kernel(&kernel, &queue, &programs, "scale", 7), CL_INVALID_VALUE); });
	EXPECT_TRUE(contains(err, "no OpenCL device 7")) << err;
	starpu_opencl_program other;
	err = stderr_of([&] { EXPECT_EQ(starpu_opencl_load_opencl_from_file("/nonexistent/k.cl", &other, NULL), -ENOENT); });
	EXPECT_TRUE(contains(err, "cannot read '/nonexistent/k.cl'")) << err;
	err = stderr_of([&] { EXPECT_NE(starpu_opencl_load_opencl_from_string("__kernel void broken( {", &other, NULL), CL_SUCCESS); });
	EXPECT_TRUE(contains(err, "does not build on OpenCL device 0")) << err;
	EXPECT_STREQ(starpu_opencl_error_string(CL_INVALID_KERNEL_NAME), "CL_INVALID_KERNEL_NAME");

	TempDir dir;
	ASSERT_TRUE(dir.write("k.cl", kernels_source));
	ScopedEnv where("STARPU_OPENCL_PROGRAM_DIR", dir.path());
	ASSERT_EQ(starpu_opencl_load_opencl_from_file("k.cl", &other, NULL), CL_SUCCESS);
	ASSERT_EQ(starpu_opencl_load_kernel(&kernel, &queue, &other, "add", 0), CL_SUCCESS);
	starpu_opencl_release_kernel(kernel);
	starpu_opencl_unload_opencl(&other);
}

// Sources are found as given or in STARPU_OPENCL_PROGRAM_DIR; binaries are compiled once into
// $STARPU_HOME/.starpu/opencl and loaded back without the source, with their includes found.
TEST_F(OpenCL, ProgramSourcesAndCompiledBinaries)
{
	TempDir dir, home;
	ASSERT_TRUE(dir.write("inc.h", "#define ADDED 1\n"));
	ASSERT_TRUE(dir.write("bin.cl", std::string("#include \"inc.h\"\n") + kernels_source));
	std::string path = std::string(dir.path()) + "/bin.cl";
	char *located = nullptr, *located_dir = nullptr, *source = nullptr;
	starpu_opencl_load_program_source_malloc(path.c_str(), &located, &located_dir, &source);
	ASSERT_NE(source, nullptr);
	EXPECT_STREQ(located, path.c_str());
	EXPECT_EQ(std::string(located_dir), std::string(dir.path()) + "/");
	EXPECT_NE(std::string(source).find("__kernel void scale"), std::string::npos);
	free(located);
	free(located_dir);
	free(source);

	ScopedEnv starpu_home("STARPU_HOME", home.path());
	ScopedEnv where("STARPU_OPENCL_PROGRAM_DIR", dir.path());
	// Found in STARPU_OPENCL_PROGRAM_DIR, its include found next to it.
	ASSERT_EQ(starpu_opencl_compile_opencl_from_file("bin.cl", NULL), 0);
	ASSERT_EQ(starpu_opencl_compile_opencl_from_string(kernels_source, "fromstring.cl", "-DUNUSED=1"), 0);
	std::string cache = std::string(home.path()) + "/.starpu/opencl";
	int binaries = 0;
	for (const char *prefix : {"bin.", "fromstring."}) {
		DIR *d = opendir(cache.c_str());
		ASSERT_NE(d, nullptr) << cache;
		while (struct dirent *e = readdir(d))
			if (std::string(e->d_name).rfind(prefix, 0) == 0 && std::string(e->d_name).find(".vendor_id_") != std::string::npos &&
			    std::string(e->d_name).find("_device_id_0") != std::string::npos)
				binaries++;
		closedir(d);
	}
	EXPECT_EQ(binaries, 2);

	starpu_opencl_program binary_programs;
	ASSERT_EQ(starpu_opencl_load_binary_opencl("bin.cl", &binary_programs), CL_SUCCESS);
	cl_kernel kernel;
	cl_command_queue queue;
	ASSERT_EQ(starpu_opencl_load_kernel(&kernel, &queue, &binary_programs, "add", 0), CL_SUCCESS);
	starpu_opencl_release_kernel(kernel);
	starpu_opencl_unload_opencl(&binary_programs);
}

// The buffer form of the source loader, and the copies between main memory and the device or within it (issue 40).
TEST_F(OpenCL, LoadProgramSourceIntoBuffersAndCopyHelpers)
{
	TempDir dir;
	ASSERT_TRUE(dir.write("k.cl", kernels_source));
	std::string path = std::string(dir.path()) + "/k.cl";
	std::vector<char> located(4096, 'x'), located_dir(4096, 'x'), source(4096, 'x');
	starpu_opencl_load_program_source(path.c_str(), located.data(), located_dir.data(), source.data());
	EXPECT_STREQ(located.data(), path.c_str());
	EXPECT_EQ(std::string(located_dir.data()), std::string(dir.path()) + "/");
	EXPECT_STREQ(source.data(), kernels_source);
	std::string err = stderr_of([&] {
		starpu_opencl_load_program_source("/nonexistent/k.cl", located.data(), located_dir.data(), source.data());
	});
	EXPECT_STREQ(located.data(), "");
	EXPECT_STREQ(located_dir.data(), "");
	EXPECT_STREQ(source.data(), "");
	EXPECT_TRUE(contains(err, "starpu_opencl_load_program_source: cannot read '/nonexistent/k.cl'")) << err;

	int devid = starpu_memory_node_get_devid(opencl_node_);
	cl_mem a, b;
	ASSERT_EQ(starpu_opencl_allocate_memory(devid, &a, 64 * sizeof(int), CL_MEM_READ_WRITE), CL_SUCCESS);
	ASSERT_EQ(starpu_opencl_allocate_memory(devid, &b, 64 * sizeof(int), CL_MEM_READ_WRITE), CL_SUCCESS);
	std::vector<int> in(64), out(64, -1);
	for (int i = 0; i < 64; i++)
		in[i] = i;
	EXPECT_EQ(starpu_opencl_copy_async_sync((uintptr_t)in.data(), 0, STARPU_MAIN_RAM, (uintptr_t)a, 0, opencl_node_, 64 * sizeof(int), NULL), 0);
	int ret = 1;
	// The upper half of a to the lower half of b.
	EXPECT_EQ(starpu_opencl_copy_opencl_to_opencl(a, opencl_node_, 32 * sizeof(int), b, opencl_node_, 0, 32 * sizeof(int), NULL, &ret), CL_SUCCESS);
	EXPECT_EQ(ret, 0);
	cl_event event;
	EXPECT_EQ(starpu_opencl_copy_async_sync((uintptr_t)b, 0, opencl_node_, (uintptr_t)out.data(), 0, STARPU_MAIN_RAM, 32 * sizeof(int), &event), -EAGAIN);
	ASSERT_EQ(clWaitForEvents(1, &event), CL_SUCCESS);
	clReleaseEvent(event);
	for (int i = 0; i < 32; i++)
		ASSERT_EQ(out[i], 32 + i);
	EXPECT_EQ(out[32], -1);
	err = stderr_of([&] {
		EXPECT_EQ(starpu_opencl_copy_async_sync((uintptr_t)in.data(), 0, STARPU_MAIN_RAM, (uintptr_t)out.data(), 0, STARPU_MAIN_RAM, 4, NULL),
			  CL_INVALID_VALUE);
		EXPECT_EQ(starpu_opencl_copy_opencl_to_opencl(a, STARPU_MAIN_RAM, 0, b, opencl_node_, 0, 4, NULL, &ret), CL_INVALID_VALUE);
	});
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "starpu_opencl_copy_async_sync: no OpenCL copy from memory node 0 to 0")) << err;
	EXPECT_TRUE(contains(err, "starpu_opencl_copy_opencl_to_opencl")) << err;
	clReleaseMemObject(a);
	clReleaseMemObject(b);
}

TEST_F(OpenCL, ProgramHelpersRefuseBadInput)
{
	TempDir home;
	ScopedEnv starpu_home("STARPU_HOME", home.path());
	char *located = (char *)"x", *located_dir = (char *)"x", *source = (char *)"x";
	starpu_opencl_program p;
	std::string err = stderr_of([&] {
		starpu_opencl_load_program_source_malloc("/nonexistent/k.cl", &located, &located_dir, &source);
		EXPECT_EQ(starpu_opencl_compile_opencl_from_file("/nonexistent/k.cl", NULL), -ENOENT);
		EXPECT_EQ(starpu_opencl_compile_opencl_from_string(NULL, "k.cl", NULL), -EINVAL);
		EXPECT_NE(starpu_opencl_compile_opencl_from_string("__kernel void broken( {", "broken.cl", NULL), 0);
		EXPECT_EQ(starpu_opencl_load_binary_opencl("never_compiled.cl", &p), -ENOENT);
		EXPECT_EQ(starpu_opencl_load_binary_opencl(NULL, &p), -EINVAL);
	});
	EXPECT_EQ(located, nullptr);
	EXPECT_EQ(located_dir, nullptr);
	EXPECT_EQ(source, nullptr);
	EXPECT_TRUE(contains(err, "starpu_opencl_load_program_source_malloc")) << err;
	EXPECT_TRUE(contains(err, "cannot read '/nonexistent/k.cl'")) << err;
	EXPECT_TRUE(contains(err, "does not build on OpenCL device 0")) << err;
	EXPECT_TRUE(contains(err, "compile it first with starpu_opencl_compile_opencl_from_file")) << err;
	EXPECT_TRUE(contains(err, "NULL kernel id or program")) << err;
}

// Models get the device for free: a history model calibrates on the OpenCL
// worker's own architecture and predicts for it.
TEST_F(OpenCL, HistoryModelsCalibrateOnTheDevice)
{
	// The runtime saves the model at shutdown (TearDown): it must outlive the test body.
	static starpu_perfmodel model;
	static std::string symbol;
	static int run = 0;	// a fresh model at each --gtest_repeat: the folder outlives one run
	symbol = "opencl_history_" + std::to_string(run++);
	model = starpu_perfmodel{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = symbol.c_str();
	starpu_codelet cl = scale_codelet();
	cl.model = &model;
	std::vector<float> v(4096, 1.0f);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), v.size(), sizeof(float));
	float factor = 1.0f;
	starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(opencl_worker_, 0);
	ASSERT_NE(arch, nullptr);
	char name[64];
	starpu_perfmodel_get_arch_name(arch, name, sizeof(name), 0);
	EXPECT_EQ(std::string(name).rfind("opencl", 0), 0u) << name;
	starpu_task *probe = starpu_task_create();
	probe->cl = &cl;
	probe->handles[0] = h;
	EXPECT_TRUE(std::isnan(starpu_task_expected_length(probe, arch, 0))) << "not calibrated yet";
	// STARPU_CALIBRATE_MINIMUM (10) kept samples make it calibrated; the first
	// run and the outliers of a busy machine are not kept, hence the margin.
	double length = NAN;
	int runs = 0;
	for (; runs < 500 && std::isnan(length); runs++) {
		ASSERT_EQ(submit_on(&cl, h, opencl_worker_, &factor), 0);
		starpu_task_wait_for_all();
		length = starpu_task_expected_length(probe, arch, 0);
	}
	EXPECT_GE(runs, 10) << "calibrated before STARPU_CALIBRATE_MINIMUM samples";
	EXPECT_FALSE(std::isnan(length)) << "not calibrated after " << runs << " runs";
	EXPECT_GT(length, 0.0);
	starpu_task_destroy(probe);
	starpu_data_unregister(h);
}

// --------------------------------------------------------- dmda and the device

class OpenCLDmda : public OpenCL
{
protected:
	const char *policy() const override { return "dmda"; }
};

std::atomic<bool> device_held{false}, device_release{false};

// Holds the OpenCL worker until device_release.
void hold_device(void *[], void *)
{
	device_held = true;
	wait_until([] { return device_release.load(); }, 60000);
}

// dmda prefetches a task's inputs to the worker it queues the task on: the data
// is on the device while the worker is still busy with the task before.
TEST_F(OpenCLDmda, QueuedTaskInputsArePrefetchedToItsWorker)
{
	device_held = device_release = false;
	starpu_codelet hold;
	starpu_codelet_init(&hold);
	hold.opencl_funcs[0] = hold_device;
	starpu_task *t = starpu_task_create();
	t->cl = &hold;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_TRUE(wait_until([] { return device_held.load(); }));

	std::vector<float> v(1024, 1.0f);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), 1024, sizeof(float));
	starpu_codelet cl = scale_codelet();
	float factor = 3.0f;
	ASSERT_EQ(submit_on(&cl, h, -1, &factor), 0);
	EXPECT_TRUE(wait_until([&] { return starpu_data_is_on_node(h, opencl_node_) != 0; }))
		<< "dmda queued the task without prefetching its input";
	device_release = true;
	starpu_task_wait_for_all();
	EXPECT_EQ(bus(STARPU_MAIN_RAM, opencl_node_).second, 1) << "the task fetched again what was prefetched";
	starpu_data_unregister(h);
	EXPECT_EQ(v[5], 3.0f);
}

std::atomic<int> read_on_cpu{0}, read_on_opencl{0};
void beta_read_cpu(void *[], void *) { read_on_cpu++; }
void beta_read_opencl(void *[], void *) { read_on_opencl++; }
double same_cost(starpu_task *, unsigned, unsigned) { return 1000.0; }

// With equal lengths everywhere, the predicted transfer alone decides (it delays
// the expected end, and counts again through beta): the worker whose node
// already holds the data gets the task.
TEST_F(OpenCLDmda, ThePredictedTransferSendsTheTaskWhereTheDataIs)
{
	read_on_cpu = read_on_opencl = 0;
	static starpu_perfmodel model; // the runtime holds it until shutdown (TearDown)
	model = starpu_perfmodel{};
	model.type = STARPU_PER_WORKER;
	model.worker_cost_function = same_cost;
	model.symbol = "opencl_beta";
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cpu_funcs[0] = beta_read_cpu;
	cl.opencl_funcs[0] = beta_read_opencl;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_R;
	cl.model = &model;
	std::vector<float> v(1 << 20, 1.0f);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), v.size(), sizeof(float));
	ASSERT_GT(starpu_data_expected_transfer_time(h, opencl_node_, STARPU_R), 0.0);

	ASSERT_EQ(submit_on(&cl, h, -1), 0); // in main memory only
	starpu_task_wait_for_all();
	EXPECT_EQ(read_on_cpu.load(), 1);
	EXPECT_EQ(read_on_opencl.load(), 0);

	starpu_codelet scale = scale_codelet();
	float factor = 2.0f;
	ASSERT_EQ(submit_on(&scale, h, opencl_worker_, &factor), 0);
	starpu_task_wait_for_all();
	ASSERT_FALSE(starpu_data_is_on_node(h, STARPU_MAIN_RAM)); // on the device only
	ASSERT_EQ(submit_on(&cl, h, -1), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(read_on_opencl.load(), 1);
	EXPECT_EQ(read_on_cpu.load(), 1);
	starpu_data_unregister(h);
	EXPECT_EQ(v[7], 2.0f);
}

} // namespace

// CPU devices are only used when asked, as StarPU does.
TEST(OpenCLDevices, CpuDevicesOnlyWhenAsked)
{
	{
		ScopedEnv on_cpus("STARPU_OPENCL_ON_CPUS", nullptr), only("STARPU_OPENCL_ONLY_ON_CPUS", nullptr),
			any("STARPU_NOPENCL", nullptr);
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		for (unsigned w = 0; w < starpu_worker_get_count(); w++)
			if (starpu_worker_get_type((int)w) == STARPU_OPENCL_WORKER) {
				cl_device_id device;
				cl_device_type type;
				starpu_opencl_get_device(starpu_worker_get_devid((int)w), &device);
				clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
				EXPECT_FALSE(type & CL_DEVICE_TYPE_CPU);
			}
	}
	ScopedEnv only("STARPU_OPENCL_ONLY_ON_CPUS", "1"), none("STARPU_NOPENCL", "0");
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_opencl_worker_get_count(), 0u); // STARPU_NOPENCL=0 wins
	EXPECT_EQ(starpu_memory_nodes_get_count(), 1u);
}

// A device's worker drives it from a core of its own: unless a count is
// given, the CPU workers leave it one (as StarPU), and none is bound there.
TEST(OpenCLDevices, TheDefaultCpuWorkersLeaveTheDeviceWorkerACore)
{
	ScopedEnv ncpu("STARPU_NCPU", nullptr), ncpus("STARPU_NCPUS", nullptr), reserve("STARPU_RESERVE_NCPU", nullptr),
		nobind("STARPU_WORKERS_NOBIND", nullptr), bind("STARPU_MAIN_THREAD_BIND", nullptr);
	unsigned cores;
	{
		ScopedEnv none("STARPU_NOPENCL", "0");
		ASSERT_EQ(starpu_init(nullptr), 0);
		cores = starpu_cpu_worker_get_count();
		starpu_shutdown();
	}
	ScopedEnv one("STARPU_NOPENCL", "1");
	ASSERT_EQ(starpu_init(nullptr), 0);
	if (starpu_opencl_worker_get_count() == 0) {
		starpu_shutdown();
		GTEST_SKIP() << "no OpenCL device here (install pocl-opencl-icd for a CPU one)";
	}
	EXPECT_EQ(starpu_cpu_worker_get_count(), cores - 1) << "one core per device worker";
	int device_core = starpu_worker_get_bindid(starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0));
	for (unsigned i = 0; i < starpu_cpu_worker_get_count(); i++)
		EXPECT_NE(starpu_worker_get_bindid(starpu_worker_get_by_type(STARPU_CPU_WORKER, (int)i)), device_core);
	starpu_shutdown();

	// A count given is kept: the device worker then shares a core.
	ScopedEnv asked("STARPU_NCPU", std::to_string(cores));
	ASSERT_EQ(starpu_init(nullptr), 0);
	EXPECT_EQ(starpu_cpu_worker_get_count(), cores);
	starpu_shutdown();
}

// StarPU's first example, as a user writes it (examples/vector_scal: the
// kernel loaded from its .cl file through STARPU_OPENCL_PROGRAM_DIR), run on
// the OpenCL worker alone.
TEST(OpenCLExample, VectorScalRunsOnTheOpenCLWorker)
{
	{
		starpu_conf conf = conf_with_ncpus(0);
		conf.nopencl = 1;
		ASSERT_EQ(starpu_init(&conf), 0);
		unsigned n = starpu_opencl_worker_get_count();
		starpu_shutdown();
		if (n == 0)
			GTEST_SKIP() << "no OpenCL device here";
	}
	std::string examples = env_or("ASTRO_TEST_EXAMPLES_DIR", "");
	std::string program = examples + "/vector_scal/vector_scal";
	if (examples.empty() || !file_exists(program))
		GTEST_SKIP() << "the examples are not built (" << program << ")";
	std::string out;
	int status = run_command("STARPU_NCPU=0 STARPU_NOPENCL=1 STARPU_OPENCL_PROGRAM_DIR='" + env_or("ASTRO_TEST_SRCDIR", ".") +
					 "/../examples/vector_scal' '" + program + "' 2>&1",
				 &out);
	EXPECT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "on 0 CPU, 1 OpenCL and 0 CUDA workers: correct")) << out;
}

extern "C" char **environ;

namespace
{

// In the death-test child: starts the runtime with its OpenCL worker (PoCL loads LLVM, which installs its own handlers
// on SIGSEGV, SIGINT and more), STARPU_CATCH_SIGNALS as given, then raises SIGSEGV from the program.
void raise_after_opencl_start(const char *catch_signals)
{
	setenv("STARPU_CATCH_SIGNALS", catch_signals, 1);
	starpu_conf conf = conf_with_ncpus(1);
	conf.nopencl = 1;
	if (starpu_init(&conf) != 0)
		_exit(3);
	if (starpu_opencl_worker_get_count() != 1)
		_exit(4);
	fputs("opencl-test: raising\n", stderr);
	fflush(stderr);
	raise(SIGSEGV);
	fputs("opencl-test: raise returned\n", stderr);
	_exit(0);
}

// Whether an OpenCL device is here, asked in a new process (this test program run again with
// ASTRO_TEST_OPENCL_PROBE set, see main()): this one stays without an OpenCL platform loaded. Not a fork: the
// child of a fork of this multi-threaded process may wait forever on a lock another thread held (ASan's allocator).
bool have_opencl_device()
{
	std::vector<std::string> env_strings{ "ASTRO_TEST_OPENCL_PROBE=1" };
	for (char **e = environ; *e; e++)
		env_strings.push_back(*e);
	std::vector<char *> envp;
	for (std::string &e : env_strings)
		envp.push_back(&e[0]);
	envp.push_back(nullptr);
	char self[] = "/proc/self/exe";
	char *argv[] = { self, nullptr };
	pid_t pid;
	if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) != 0)
		return false;
	int status = 0;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class OpenCLSignalsDeathTest : public testing::Test
{
protected:
	void SetUp() override
	{
		// threadsafe: each child runs the test in a process of its own, where no OpenCL platform was loaded yet.
		GTEST_FLAG_SET(death_test_style, "threadsafe");
		if (!have_opencl_device())
			GTEST_SKIP() << "no OpenCL device here";
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigaction(SIGSEGV, &dfl, &saved_);
	}
	void TearDown() override { sigaction(SIGSEGV, &saved_, nullptr); }
	struct sigaction saved_ = {};
};

} // namespace

// Probing the OpenCL platforms leaves the process's signal handlers as they were: with STARPU_CATCH_SIGNALS=0 a
// SIGSEGV kills the program, unreported; with it on, the runtime says it once, then the signal kills the program.
TEST_F(OpenCLSignalsDeathTest, ProbingKeepsTheSignalHandlers)
{
	EXPECT_EXIT(raise_after_opencl_start("0"), testing::KilledBySignal(SIGSEGV), "opencl-test: raising\n$");
	EXPECT_EXIT(raise_after_opencl_start("1"), testing::KilledBySignal(SIGSEGV),
		    "opencl-test: raising\n\\[astrolabe\\] caught signal 11 \\(SIGSEGV\\): passing it on[^\n]*\n$");
}

// In the death-test child (a process where no OpenCL platform was loaded yet): exits 0 when starting the runtime with
// its OpenCL worker left every signal's handler as it was, else names the first one changed and exits 1.
void start_opencl_and_compare_handlers()
{
	setenv("STARPU_CATCH_SIGNALS", "0", 1);
	static struct sigaction before[NSIG];
	static bool known[NSIG];
	for (int sig = 1; sig < NSIG; sig++)
		known[sig] = sigaction(sig, nullptr, &before[sig]) == 0;
	starpu_conf conf = conf_with_ncpus(1);
	conf.nopencl = 1;
	if (starpu_init(&conf) != 0 || starpu_opencl_worker_get_count() != 1)
		_exit(3);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction now;
		if (known[sig] && sig != SIGFPE && sigaction(sig, nullptr, &now) == 0 && now.sa_handler != before[sig].sa_handler) {
			fprintf(stderr, "signal %d (%s) has another handler after starting OpenCL\n", sig, strsignal(sig));
			_exit(1);
		}
	}
	starpu_shutdown();
	_exit(0);
}

// The handlers the program had before starpu_init() are the ones it has after: the OpenCL platform's crash reporter
// (LLVM's, under PoCL) is left on no signal but SIGFPE, which PoCL's CPU device catches.
TEST_F(OpenCLSignalsDeathTest, StartingLeavesEveryHandlerAsItWas)
{
	EXPECT_EXIT(start_opencl_and_compare_handlers(), testing::ExitedWithCode(0), "^$");
}

#else

TEST(OpenCL, NotBuilt)
{
	GTEST_SKIP() << "Astrolabe was built without OpenCL (install opencl-headers and ocl-icd-opencl-dev, then configure again)";
}

#endif

int main(int argc, char **argv)
{
#ifdef STARPU_USE_OPENCL
	if (getenv("ASTRO_TEST_OPENCL_PROBE")) { /* have_opencl_device()'s question */
		starpu_conf conf = conf_with_ncpus(0);
		conf.nopencl = 1;
		_exit(starpu_init(&conf) == 0 && starpu_opencl_worker_get_count() == 1 ? 0 : 1);
	}
#endif
	return opencl_test_main(argc, argv, "test-opencl");
}
