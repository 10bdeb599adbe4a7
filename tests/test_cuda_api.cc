// SPDX-License-Identifier: LGPL-2.1-or-later
// The starpu_cuda_* copy and device helpers, and CUDA or OpenCL workers asked
// for by struct starpu_conf where none can start. Here (no GPU) the helpers
// must say that no CUDA worker runs, and bad arguments are said before
// anything is tried; the copies themselves run where a device is. Like
// test_cuda, this suite takes back the device that the others' STARPU_NCUDA=0
// (tests/Makefile.am) leaves out.
#include <gtest/gtest.h>
#include <starpu.h>
#include <starpu_cusolver.h>
#include "helpers.h"
#include <cerrno>
#include <vector>

using namespace astro_test;

namespace {

const bool device_taken_back = unsetenv("STARPU_NCUDA") == 0;

// Messages the runtime printed on stderr while fn ran.
template <typename F> std::string said(F fn)
{
	testing::internal::CaptureStderr();
	fn();
	return testing::internal::GetCapturedStderr();
}

unsigned lines(const std::string &text)
{
	unsigned n = 0;
	for (char c : text)
		n += c == '\n';
	return n;
}

// The runtime on one CPU worker, without CUDA and OpenCL workers unless asked.
class CudaApi : public testing::Test
{
protected:
	void SetUp() override
	{
		starpu_conf conf = conf_with_ncpus(1);
		ASSERT_EQ(starpu_init(&conf), 0);
		started_ = true;
	}
	void TearDown() override
	{
		if (started_)
			starpu_shutdown();
	}
	bool started_ = false;
};

#ifdef STARPU_USE_CUDA

TEST_F(CudaApi, CopiesWithoutACudaWorkerSaySo)
{
	if (starpu_cuda_worker_get_count() > 0)
		GTEST_SKIP() << "a CUDA worker runs here: the copies work (see CopiesRoundTripThroughTheDevice)";
	std::vector<char> a(64, 'a'), b(64, 'b');
	int ret = 0;
	std::string err = said([&] { ret = starpu_cuda_copy_async_sync(a.data(), 0, b.data(), 0, 64, NULL, cudaMemcpyHostToHost); });
	EXPECT_EQ(ret, -ENODEV);
	EXPECT_TRUE(contains(err, "starpu_cuda_copy_async_sync") && contains(err, "no CUDA worker runs")) << err;
	EXPECT_EQ(lines(err), 1u) << err;
	err = said([&] { ret = starpu_cuda_copy2d_async_sync(a.data(), 0, b.data(), 0, 8, 4, 16, 16, NULL, cudaMemcpyHostToHost); });
	EXPECT_EQ(ret, -ENODEV);
	EXPECT_TRUE(contains(err, "starpu_cuda_copy2d_async_sync")) << err;
	err = said([&] { ret = starpu_cuda_copy3d_async_sync(a.data(), 0, b.data(), 0, 4, 2, 8, 8, 2, 32, 32, NULL, cudaMemcpyHostToHost); });
	EXPECT_EQ(ret, -ENODEV);
	EXPECT_TRUE(contains(err, "starpu_cuda_copy3d_async_sync")) << err;
	err = said([] { starpu_cuda_set_device(0); });
	EXPECT_TRUE(contains(err, "starpu_cuda_set_device") && contains(err, "no CUDA worker runs")) << err;
	EXPECT_EQ(lines(err), 1u) << err;
	// Nothing was touched.
	EXPECT_EQ(b[0], 'b');
	EXPECT_EQ(b[63], 'b');
}

TEST_F(CudaApi, BadCopyArgumentsAreSaid)
{
	std::vector<char> a(64, 'a'), b(64, 'b');
	int ret = 0;
	std::string err = said([&] { ret = starpu_cuda_copy_async_sync(NULL, 0, b.data(), 0, 64, NULL, cudaMemcpyHostToHost); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "source pointer is NULL")) << err;
	EXPECT_EQ(lines(err), 1u) << err;
	err = said([&] { ret = starpu_cuda_copy2d_async_sync(a.data(), 0, b.data(), 0, 16, 4, 8, 16, NULL, cudaMemcpyHostToHost); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "overlap")) << err;
	err = said([&] { ret = starpu_cuda_copy3d_async_sync(a.data(), 0, b.data(), 0, 4, 2, 8, 8, 2, 8, 32, NULL, cudaMemcpyHostToHost); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "ld2")) << err;
	err = said([&] { ret = starpu_cuda_copy_async_sync(a.data(), 0, b.data(), 0, 64, NULL, (enum cudaMemcpyKind)42); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "42 is not a cudaMemcpyKind")) << err;
	EXPECT_EQ(b[0], 'b');
}

// Where a device is: to the device and back, synchronously (no stream) and on a worker's stream.
TEST_F(CudaApi, CopiesRoundTripThroughTheDevice)
{
	if (starpu_cuda_worker_get_count() == 0)
		GTEST_SKIP() << "no CUDA worker here (no device, or STARPU_NCUDA=0)";
	unsigned node = starpu_worker_get_memory_node((unsigned)starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0));
	const size_t n = 4096;
	std::vector<char> in(n), out(n, 0);
	for (size_t i = 0; i < n; i++)
		in[i] = (char)(i * 7);
	uintptr_t dev = starpu_malloc_on_node(node, n);
	ASSERT_NE(dev, 0u);
	EXPECT_EQ(starpu_cuda_copy_async_sync(in.data(), STARPU_MAIN_RAM, (void *)dev, node, n, NULL, cudaMemcpyHostToDevice), 0);
	// Rows of 16 bytes every 32: half the buffer comes back.
	EXPECT_EQ(starpu_cuda_copy2d_async_sync((void *)dev, node, out.data(), STARPU_MAIN_RAM, 16, n / 32, 32, 32, NULL,
						cudaMemcpyDeviceToHost), 0);
	for (size_t i = 0; i < n; i++)
		ASSERT_EQ(out[i], i % 32 < 16 ? in[i] : 0) << i;
	cudaStream_t stream;
	ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
	int ret = starpu_cuda_copy3d_async_sync((void *)dev, node, out.data(), STARPU_MAIN_RAM, 16, 2, 32, 32, n / 64, 64, 64, stream,
						cudaMemcpyDeviceToHost);
	EXPECT_TRUE(ret == -EAGAIN || ret == 0) << ret;
	EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
	cudaStreamDestroy(stream);
	starpu_cuda_set_device(0);
	starpu_free_on_node(node, dev, n);
}

// starpu_cuda_get_device_properties (issue 40): a CUDA worker's device, as CUDA gives it; NULL, said, otherwise.
TEST_F(CudaApi, DevicePropertiesOfCudaWorkersOnly)
{
	int cpu = starpu_worker_get_by_type(STARPU_CPU_WORKER, 0);
	ASSERT_GE(cpu, 0);
	const cudaDeviceProp *prop = nullptr;
	std::string err = said([&] { prop = starpu_cuda_get_device_properties((unsigned)cpu); });
	EXPECT_EQ(prop, nullptr);
	EXPECT_EQ(lines(err), 1u) << err;
	EXPECT_TRUE(contains(err, "starpu_cuda_get_device_properties")) << err;
	EXPECT_TRUE(starpu_cuda_worker_get_count() == 0 ? contains(err, "no CUDA worker runs") : contains(err, "is not a CUDA worker")) << err;
	if (starpu_cuda_worker_get_count() > 0) {
		err = said([&] { prop = starpu_cuda_get_device_properties(9999); });
		EXPECT_EQ(prop, nullptr);
		EXPECT_TRUE(contains(err, "no worker 9999")) << err;
	}
}

TEST(CudaWorkers, DevicePropertiesAreTheDevices)
{
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	unsigned n = starpu_cuda_worker_get_count();
	if (n == 0) {
		starpu_shutdown();
		GTEST_SKIP() << "no CUDA worker here (no device, or STARPU_NCUDA=0)";
	}
	for (unsigned i = 0; i < n; i++) {
		int w = starpu_worker_get_by_type(STARPU_CUDA_WORKER, (int)i);
		const cudaDeviceProp *prop = starpu_cuda_get_device_properties((unsigned)w);
		ASSERT_NE(prop, nullptr) << "worker " << w;
		cudaDeviceProp expected;
		ASSERT_EQ(cudaGetDeviceProperties(&expected, starpu_worker_get_devid(w)), cudaSuccess);
		EXPECT_STREQ(prop->name, expected.name);
		EXPECT_EQ(prop->totalGlobalMem, expected.totalGlobalMem);
		EXPECT_GT(prop->multiProcessorCount, 0);
	}
	starpu_shutdown();
}

cudaStream_t streams[STARPU_NMAXWORKERS];

void note_stream(void *)
{
	streams[starpu_worker_get_id()] = starpu_cuda_get_local_stream();
}

// Where a device is: STARPU_NWORKER_PER_CUDA=2 gives each device two workers, one memory node, two streams.
TEST(CudaWorkers, TwoWorkersPerDeviceShareItsNode)
{
	ScopedEnv two("STARPU_NWORKER_PER_CUDA", "2");
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	int n = (int)starpu_cuda_worker_get_count();
	if (n == 0) {
		starpu_shutdown();
		GTEST_SKIP() << "no CUDA worker here (no device, or STARPU_NCUDA=0)";
	}
	EXPECT_EQ(n % 2, 0);
	int a = starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0), b = starpu_worker_get_by_type(STARPU_CUDA_WORKER, 1);
	EXPECT_EQ(starpu_worker_get_devid(a), starpu_worker_get_devid(b));
	EXPECT_EQ(starpu_worker_get_memory_node((unsigned)a), starpu_worker_get_memory_node((unsigned)b));
	unsigned ids[2] = { (unsigned)a, (unsigned)b };
	starpu_execute_on_specific_workers(note_stream, NULL, 2, ids, "note_stream");
	EXPECT_NE(streams[a], (cudaStream_t)NULL);
	EXPECT_NE(streams[a], streams[b]);
	starpu_shutdown();
}

// STARPU_CUSOLVER_REPORT_ERROR says the status and where, then aborts (as StarPU).
TEST(CudaReport, CusolverErrorIsSaidThenAborts)
{
	testing::FLAGS_gtest_death_test_style = "threadsafe";
	EXPECT_DEATH(STARPU_CUSOLVER_REPORT_ERROR(CUSOLVER_STATUS_INVALID_VALUE),
		     "cuSOLVER.*TestBody \\(.*test_cuda_api.cc:[0-9]+\\): error 3 \\(cusolverStatus_t\\)");
}

#endif /* STARPU_USE_CUDA */

// conf.ncuda asks for CUDA workers where none can start: one message, and the runtime runs without.
TEST(CudaConf, CudaWorkersAskedByTheConfWithoutDeviceAreSaidOnce)
{
	ScopedEnv unset("STARPU_NCUDA", nullptr);
	starpu_conf conf = conf_with_ncpus(1);
	conf.ncuda = 2;
	int ret = -1;
	std::string err = said([&] { ret = starpu_init(&conf); });
	ASSERT_EQ(ret, 0);
	unsigned ncuda = starpu_cuda_worker_get_count();
	starpu_shutdown();
	if (ncuda > 0)
		GTEST_SKIP() << "a CUDA device is here";
	EXPECT_TRUE(contains(err, "starpu_conf.ncuda = 2") && contains(err, "no CUDA device")) << err;
	EXPECT_EQ(lines(err), 1u) << err;
}

// The same for conf.nopencl, where OpenCL gives no device (PoCL's CPU device is not taken unless asked).
TEST(CudaConf, OpenCLWorkersAskedByTheConfWithoutDeviceAreSaidOnce)
{
	ScopedEnv unset("STARPU_NOPENCL", nullptr), cpus("STARPU_OPENCL_ON_CPUS", nullptr), only("STARPU_OPENCL_ONLY_ON_CPUS", nullptr);
	starpu_conf conf = conf_with_ncpus(1);
	conf.nopencl = 1;
	int ret = -1;
	std::string err = said([&] { ret = starpu_init(&conf); });
	ASSERT_EQ(ret, 0);
	unsigned nopencl = starpu_opencl_worker_get_count();
	starpu_shutdown();
	if (nopencl > 0)
		GTEST_SKIP() << "an OpenCL device (not of type CPU) is here";
	EXPECT_TRUE(contains(err, "nopencl") || contains(err, "opencl")) << err;
	EXPECT_EQ(lines(err), 1u) << err;
}

} // namespace

int main(int argc, char **argv)
{
	testing::InitGoogleTest(&argc, argv);
	return RUN_ALL_TESTS();
}

// ------------------------------------------------------------------ HIP

namespace {

int g_hip_runs = 0;
void hip_or_cpu(void **, void *)
{
	g_hip_runs++;
}

} // namespace

// This build has no HIP driver: a HIP program's calls return quietly and its
// codelets run on their other implementations.
TEST_F(CudaApi, HipEntryPointsDeclineWithoutAHipDriver)
{
	EXPECT_EQ(starpu_hip_worker_get_count(), 0u);
	std::string err = said([] {
		starpu_hipblas_init();
		starpu_hipblas_shutdown();
	});
	EXPECT_EQ(err, "");
	starpu_codelet cl = cpu_codelet(hip_or_cpu, 0, "hip_or_cpu");
	cl.hip_funcs[0] = hip_or_cpu;
	cl.hip_flags[0] = STARPU_HIP_ASYNC;
	g_hip_runs = 0;
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_hip_runs, 1);
	// A codelet for HIP only has nowhere to run.
	starpu_codelet hip_only;
	starpu_codelet_init(&hip_only);
	hip_only.hip_funcs[0] = hip_or_cpu;
	err = said([&] { EXPECT_EQ(starpu_task_insert(&hip_only, 0), -ENODEV); });
	EXPECT_NE(err.find("no worker can run task"), std::string::npos) << err;
}
