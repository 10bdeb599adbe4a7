// SPDX-License-Identifier: LGPL-2.1-or-later
// The CUDA driver. Here (no GPU) the plugin is built and loaded, declines,
// and the runtime runs CPU tasks as without it; the starpu_cublas_* and
// starpu_cusolver_* calls are harmless in every build. The tests that need
// a CUDA worker skip, saying why, and run where a device is (first run on
// an H200 on 4 December 2026). The other suites run with STARPU_NCUDA=0
// (tests/Makefile.am), as with STARPU_NOPENCL=0, so that their worker counts
// hold on a machine with a GPU; this suite is the CUDA one: it takes the
// device back.
#include <gtest/gtest.h>
#include <starpu.h>
#include <starpu_cublas.h>
#include <starpu_cusolver.h>
#ifdef STARPU_USE_CUDA
#include <starpu_cublas_v2.h>
#include <starpu_cublasLt.h>
#endif
#include "helpers.h"
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

using namespace astro_test;

#ifdef ASTRO_TEST_CUDA_KERNELS
extern "C" void astro_test_cuda_scale(float *v, unsigned n, float factor, cudaStream_t stream);
#endif

namespace {

const bool device_taken_back = unsetenv("STARPU_NCUDA") == 0;

std::atomic<int> cpu_runs{0};

void add_one_cpu(void *buffers[], void *)
{
	float *v = (float *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] += 1;
	cpu_runs++;
}

starpu_codelet add_one_codelet()
{
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cpu_funcs[0] = add_one_cpu;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_RW;
	return cl;
}

// Adds one to every element of v on CPU workers, n times, and waits.
void add_on_cpus(std::vector<float> &v, int n)
{
	starpu_codelet cl = add_one_codelet();
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), v.size(), sizeof(float));
	for (int i = 0; i < n; i++)
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, 0), 0);
	starpu_task_wait_for_all();
	starpu_data_unregister(h);
}

// Whether this build and this machine give CUDA workers; why not otherwise.
bool have_cuda_workers(std::string *why)
{
#ifndef STARPU_USE_CUDA
	*why = "built without the CUDA toolkit (configure found none: set CUDA_HOME)";
	return false;
#else
	if (starpu_cuda_worker_get_count() > 0)
		return true;
	*why = "no CUDA device here (the driver declined: no GPU, or no CUDA driver)";
	return false;
#endif
}

} // namespace

// ------------------------------------------------------------- any build

TEST(CudaHelpers, CublasCusolverAndCusparseCallsDoNothingWithoutCudaWorker)
{
	std::string err = stderr_of([] {
		// Before starpu_init, as after starpu_shutdown: nothing to act on.
		starpu_cublas_init();
		starpu_cublas_shutdown();
		ScopedEnv ncuda("STARPU_NCUDA", "0");
		Runtime rt(1);
		ASSERT_EQ(rt.ret(), 0);
		starpu_cublas_init();
		starpu_cublas_init();
		starpu_cublas_set_stream();
		starpu_cusolver_init();
		starpu_cusparse_init();
		starpu_cusparse_init();
		starpu_cublasLt_init();
		std::vector<float> v(16, 1.0f);
		add_on_cpus(v, 3);
		EXPECT_EQ(v[0], 4.0f);
		EXPECT_EQ(v[15], 4.0f);
		starpu_cusolver_shutdown();
		starpu_cusparse_shutdown();
		starpu_cublasLt_shutdown();
		starpu_cublas_shutdown();
		starpu_cublas_shutdown();
		EXPECT_EQ(starpu_cuda_worker_get_count(), 0u);
	});
	EXPECT_EQ(err, "");
}

#ifdef STARPU_USE_CUDA

// ------------------------------------------------ the toolkit, no device

class CudaNoDevice : public testing::Test
{
protected:
	void SetUp() override
	{
		Runtime probe(1);
		ASSERT_EQ(probe.ret(), 0);
		if (starpu_cuda_worker_get_count() > 0)
			GTEST_SKIP() << "a CUDA device is here: these tests are for a machine without one";
	}
};

TEST_F(CudaNoDevice, ThePluginIsLoadedAndDeclinesQuietly)
{
	std::string verbose = stderr_of([] {
		ScopedEnv v("STARPU_PLUGIN_VERBOSE", "1");
		Runtime rt(1);
		ASSERT_EQ(rt.ret(), 0);
	});
	EXPECT_TRUE(contains(verbose, "plugin driver_cuda (")) << verbose;
	EXPECT_TRUE(contains(verbose, "driver_cuda: not available here")) << verbose;

	std::string quiet = stderr_of([] {
		ScopedEnv ncuda("STARPU_NCUDA", nullptr);
		Runtime rt(2);
		ASSERT_EQ(rt.ret(), 0);
		EXPECT_EQ(starpu_cuda_worker_get_count(), 0u);
		EXPECT_EQ(starpu_worker_get_count_by_type(STARPU_CUDA_WORKER), 0);
		EXPECT_EQ(starpu_memory_nodes_get_count_by_kind(STARPU_CUDA_RAM), 0u);
		std::vector<float> v(1000, 0.0f);
		cpu_runs = 0;
		add_on_cpus(v, 20);
		EXPECT_EQ(cpu_runs.load(), 20);
		EXPECT_EQ(v[999], 20.0f);
	});
	EXPECT_EQ(quiet, "");
}

TEST_F(CudaNoDevice, AskedCudaWorkersAreSaidOnceAndCpuTasksStillRun)
{
	std::string err = stderr_of([] {
		ScopedEnv ncuda("STARPU_NCUDA", "2");
		Runtime rt(1);
		ASSERT_EQ(rt.ret(), 0);
		EXPECT_EQ(starpu_cuda_worker_get_count(), 0u);
		std::vector<float> v(8, 1.0f);
		add_on_cpus(v, 2);
		EXPECT_EQ(v[7], 3.0f);
	});
	EXPECT_TRUE(contains(err, "STARPU_NCUDA=2 but no CUDA device is usable here")) << err;
	EXPECT_EQ(err.find("STARPU_NCUDA"), err.rfind("STARPU_NCUDA")) << "said once: " << err;
}

TEST_F(CudaNoDevice, ACudaOnlyCodeletIsRefusedAndTheLocalGettersAreNull)
{
	ScopedEnv ncuda("STARPU_NCUDA", "0");
	Runtime rt(1);
	ASSERT_EQ(rt.ret(), 0);
	EXPECT_EQ(starpu_cuda_get_local_stream(), nullptr);
	EXPECT_EQ(starpu_cublas_get_local_handle(), nullptr);
	EXPECT_EQ(starpu_cusolverDn_get_local_handle(), nullptr);
	EXPECT_EQ(starpu_cusolverSp_get_local_handle(), nullptr);
	EXPECT_EQ(starpu_cusolverRf_get_local_handle(), nullptr);

	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cuda_funcs[0] = [](void **, void *) {};
	cl.nbuffers = 0;
	starpu_task *task = starpu_task_create();
	task->cl = &cl;
	task->detach = 0;
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_task_submit(task), -ENODEV); });
	EXPECT_TRUE(contains(err, "no worker can run task")) << err;
	starpu_task_destroy(task);

	// Inside a CPU task too: no CUDA worker, no stream.
	static std::atomic<bool> null_in_task{false};
	starpu_codelet probe;
	starpu_codelet_init(&probe);
	probe.cpu_funcs[0] = [](void **, void *) { null_in_task = starpu_cuda_get_local_stream() == nullptr; };
	probe.nbuffers = 0;
	ASSERT_EQ(starpu_task_insert(&probe, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_TRUE(null_in_task.load());
}

#endif /* STARPU_USE_CUDA */

// ------------------------------------------------------ a CUDA worker

class Cuda : public testing::Test
{
protected:
	void SetUp() override
	{
		rt_ = new Runtime(1);
		ASSERT_EQ(rt_->ret(), 0);
		std::string why;
		if (!have_cuda_workers(&why))
			GTEST_SKIP() << why;
	}
	void TearDown() override { delete rt_; }
	Runtime *rt_ = nullptr;
};

#if defined STARPU_USE_CUDA && defined ASTRO_TEST_CUDA_KERNELS

namespace {

std::atomic<int> cuda_runs{0};
std::atomic<bool> had_stream{false};

void scale_cuda(void *buffers[], void *arg)
{
	cudaStream_t stream = starpu_cuda_get_local_stream();
	had_stream = stream != nullptr;
	float factor;
	starpu_codelet_unpack_args(arg, &factor); /* STARPU_VALUE packs it */
	astro_test_cuda_scale((float *)STARPU_VECTOR_GET_PTR(buffers[0]), STARPU_VECTOR_GET_NX(buffers[0]), factor, stream);
	cuda_runs++;
}

starpu_codelet scale_codelet()
{
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cuda_funcs[0] = scale_cuda;
	cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_RW;
	return cl;
}

} // namespace

TEST_F(Cuda, VectorScalingRunsOnTheDeviceAndComesBack)
{
	std::vector<float> v(1 << 20);
	for (size_t i = 0; i < v.size(); i++)
		v[i] = (float)i;
	starpu_codelet cl = scale_codelet();
	float factor = 3;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), v.size(), sizeof(float));
	cuda_runs = 0;
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, STARPU_VALUE, &factor, sizeof(factor), 0), 0);
	starpu_task_wait_for_all();
	starpu_data_unregister(h);
	EXPECT_EQ(cuda_runs.load(), 1);
	EXPECT_TRUE(had_stream.load());
	for (size_t i = 0; i < v.size(); i += 4099)
		ASSERT_EQ(v[i], 3.0f * (float)i) << i;
}

bool registered_with_cuda(const void *p)
{
	cudaPointerAttributes a;
	if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
		cudaGetLastError();
		return false;
	}
	return a.type == cudaMemoryTypeHost;
}

// Pinned main memory (starpu_malloc, starpu_memory_pin) is registered with
// CUDA, whose copies then run at the bus's speed; freeing or unpinning it
// undoes that, and so does the shutdown for what is still pinned.
TEST_F(Cuda, PinnedMainMemoryIsRegisteredWithTheDevice)
{
	const size_t n = 1 << 18, size = n * sizeof(float);
	float *p = nullptr;
	ASSERT_EQ(starpu_malloc((void **)&p, size), 0);
	EXPECT_TRUE(registered_with_cuda(p));
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(i % 1000);
	starpu_codelet cl = scale_codelet();
	float factor = 2;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)p, n, sizeof(float));
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, STARPU_VALUE, &factor, sizeof(factor), 0), 0);
	starpu_data_unregister(h);
	for (size_t i = 0; i < n; i += 997)
		ASSERT_EQ(p[i], 2.0f * (float)(i % 1000)) << i;
	EXPECT_EQ(starpu_free_noflag(p, size), 0);

	ASSERT_EQ(starpu_malloc_flags((void **)&p, size, 0), 0);
	EXPECT_FALSE(registered_with_cuda(p)) << "not asked to be pinned";
	starpu_free_flags(p, size, 0);

	std::vector<char> v(size);
	ASSERT_EQ(starpu_memory_pin(v.data(), size), 0);
	EXPECT_TRUE(registered_with_cuda(v.data()));
	ASSERT_EQ(starpu_memory_unpin(v.data(), size), 0);
	EXPECT_FALSE(registered_with_cuda(v.data()));

	ASSERT_EQ(starpu_malloc((void **)&p, size), 0);
	delete rt_;
	rt_ = nullptr;
	EXPECT_FALSE(registered_with_cuda(p)) << "still pinned after starpu_shutdown()";
	memset(p, 1, size);
	starpu_free_noflag(p, size);
}

TEST_F(Cuda, AHandleWrittenInTurnOnCpuAndDeviceKeepsItsValue)
{
	std::vector<float> v(4096, 1.0f);
	starpu_codelet scale = scale_codelet(), add = add_one_codelet();
	float factor = 2;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), v.size(), sizeof(float));
	float expected = 1;
	for (int i = 0; i < 6; i++) {
		ASSERT_EQ(starpu_task_insert(&scale, STARPU_RW, h, STARPU_VALUE, &factor, sizeof(factor), 0), 0);
		ASSERT_EQ(starpu_task_insert(&add, STARPU_RW, h, 0), 0);
		expected = expected * 2 + 1;
	}
	starpu_task_wait_for_all();
	starpu_data_unregister(h);
	EXPECT_EQ(v[0], expected);
	EXPECT_EQ(v[4095], expected);
}

#endif

#ifndef STARPU_USE_CUDA
TEST_F(Cuda, NeedsTheToolkit)
{
	FAIL() << "a build without the toolkit has no CUDA worker: SetUp skips";
}
#else

TEST_F(Cuda, CusparseHandlesLiveFromInitToShutdown)
{
	static std::atomic<int> with_handle{0}, runs{0};
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cuda_funcs[0] = [](void **, void *) {
		with_handle += starpu_cusparse_get_local_handle() != nullptr;
		runs++;
	};
	cl.nbuffers = 0;
	starpu_cusparse_init();
	with_handle = runs = 0;
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(runs.load(), 1);
	EXPECT_EQ(with_handle.load(), 1);
	starpu_cusparse_shutdown();
	with_handle = runs = 0;
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(runs.load(), 1);
	EXPECT_EQ(with_handle.load(), 0);
	// Outside a CUDA worker there is no handle.
	EXPECT_EQ(starpu_cusparse_get_local_handle(), nullptr);
}

TEST_F(Cuda, CusolverHandlesLiveFromInitToShutdown)
{
	static std::atomic<int> with_dn{0}, with_sp{0}, with_rf{0}, runs{0};
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cuda_funcs[0] = [](void **, void *) {
		with_dn += starpu_cusolverDn_get_local_handle() != nullptr;
		with_sp += starpu_cusolverSp_get_local_handle() != nullptr;
		with_rf += starpu_cusolverRf_get_local_handle() != nullptr;
		runs++;
	};
	cl.nbuffers = 0;
	starpu_cusolver_init();
	with_dn = with_sp = with_rf = runs = 0;
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(runs.load(), 1);
	EXPECT_EQ(with_dn.load(), 1);
	EXPECT_EQ(with_sp.load(), 1);
	EXPECT_EQ(with_rf.load(), 1);
	starpu_cusolver_shutdown();
	with_dn = with_sp = with_rf = runs = 0;
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(runs.load(), 1);
	EXPECT_EQ(with_dn.load() + with_sp.load() + with_rf.load(), 0);
	EXPECT_EQ(starpu_cusolverRf_get_local_handle(), nullptr) << "outside a CUDA worker";
}

#ifdef STARPU_HAVE_LIBCUBLASLT
TEST_F(Cuda, CublasLtHandlesLiveFromInitToShutdown)
{
	static std::atomic<int> with_handle{0}, runs{0};
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cuda_funcs[0] = [](void **, void *) {
		with_handle += starpu_cublasLt_get_local_handle() != nullptr;
		runs++;
	};
	cl.nbuffers = 0;
	starpu_cublasLt_init();
	with_handle = runs = 0;
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(runs.load(), 1);
	EXPECT_EQ(with_handle.load(), 1);
	starpu_cublasLt_shutdown();
	with_handle = runs = 0;
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(runs.load(), 1);
	EXPECT_EQ(with_handle.load(), 0);
	EXPECT_EQ(starpu_cublasLt_get_local_handle(), nullptr) << "outside a CUDA worker";
}
#endif

TEST_F(Cuda, CublasHandlesLiveFromInitToShutdownOnEveryWorker)
{
	static std::atomic<int> with_handle{0}, runs{0};
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cuda_funcs[0] = [](void **, void *) {
		with_handle += starpu_cublas_get_local_handle() != nullptr;
		runs++;
	};
	cl.nbuffers = 0;
	starpu_cublas_init();
	with_handle = runs = 0;
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(runs.load(), 1);
	EXPECT_EQ(with_handle.load(), 1);
	starpu_cublas_shutdown();
	with_handle = runs = 0;
	ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(runs.load(), 1);
	EXPECT_EQ(with_handle.load(), 0);
}

#endif
