// SPDX-License-Identifier: LGPL-2.1-or-later
// The runtime's own buffers behind two access modes (issue 23):
// STARPU_REDUX accesses run alongside each other, each on its worker's
// reduction buffer, also on a device node, and are combined by the next
// access of another kind; STARPU_SCRATCH accesses get a buffer of the
// worker's, reused from one task to the next, also past STARPU_NMAXBUFS.
// And the interface methods about buffers the runtime honours: the
// allocation cache's (cache_data_on_node, reuse_data_on_node,
// alloc_footprint, alloc_compare) and pointer_is_inside (every built-in
// interface with a CPU address).
#include "helpers.h"
#include "opencl_helpers.h"

#include <set>

#ifdef STARPU_USE_OPENCL
#include <starpu_opencl.h>
#endif

using namespace astro_test;

namespace {

// --------------------------------------------------------------- codelets

std::atomic<int> g_cpu_inits{0}, g_device_inits{0}, g_device_contributions{0};

void init_cpu(void **buffers, void *arg)
{
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) = arg ? *(long *)arg : 0;
	g_cpu_inits++;
}

void add_cpu(void **buffers, void *)
{
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) += *(long *)STARPU_VARIABLE_GET_PTR(buffers[1]);
}

void contribute_cpu(void **buffers, void *)
{
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) += 1;
}

void read_cpu(void **buffers, void *arg)
{
	*(long *)arg = *(long *)STARPU_VARIABLE_GET_PTR(buffers[0]);
}

void double_cpu(void **buffers, void *)
{
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) *= 2;
}

starpu_codelet make_codelet(starpu_cpu_func_t f, const char *name, std::initializer_list<int> modes)
{
	starpu_codelet cl = cpu_codelet(f, (int)modes.size(), name);
	int i = 0;
	for (int m : modes)
		cl.modes[i++] = (starpu_data_access_mode)m;
	return cl;
}

// Static: the runtime may still use a codelet after a test body returns.
starpu_codelet init_cl = make_codelet(init_cpu, "init", { STARPU_W });
starpu_codelet add_cl = make_codelet(add_cpu, "add", { STARPU_RW, STARPU_R });
starpu_codelet contribute_cl = make_codelet(contribute_cpu, "contribute", { STARPU_REDUX });
starpu_codelet read_cl = make_codelet(read_cpu, "read", { STARPU_R });
starpu_codelet double_cl = make_codelet(double_cpu, "double", { STARPU_RW | STARPU_COMMUTE });

starpu_data_handle_t register_long(long *x)
{
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)x, sizeof(*x));
	return h;
}

int submit_on_worker(starpu_codelet *cl, starpu_data_handle_t h, int worker, void *arg = nullptr)
{
	return submit_on_handle(cl, h, arg, worker);
}

long acquired(starpu_data_handle_t h)
{
	EXPECT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	long v = *(long *)starpu_variable_get_local_ptr(h);
	starpu_data_release(h);
	return v;
}

class DataModes : public ::testing::Test
{
protected:
	void SetUp() override
	{
		g_cpu_inits = g_device_inits = g_device_contributions = 0;
	}
	void TearDown() override
	{
		if (started_)
			starpu_shutdown();
	}
	void start(int ncpus)
	{
		ASSERT_EQ(init_with_ncpus(ncpus), 0);
		started_ = true;
	}
	bool started_ = false;
};

// ------------------------------------------------------------- reductions

// Two contributions that each wait (bounded) for the other to start: they meet only if they run together.
std::atomic<int> g_arrived{0}, g_met{0};

void meet_and_contribute(void **buffers, void *)
{
	g_arrived++;
	if (wait_until([] { return g_arrived.load() >= 2; }, 30000))
		g_met++;
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) += 1;
}

starpu_codelet meet_cl = make_codelet(meet_and_contribute, "meet", { STARPU_REDUX });

TEST_F(DataModes, ReductionsOnOneHandleRunTogether)
{
	start(2);
	g_arrived = g_met = 0;
	long x = 100;
	starpu_data_handle_t h = register_long(&x);
	starpu_data_set_reduction_methods(h, &add_cl, &init_cl);
	ASSERT_EQ(submit_on_worker(&meet_cl, h, 0), 0);
	ASSERT_EQ(submit_on_worker(&meet_cl, h, 1), 0);
	long seen = -1;
	ASSERT_EQ(submit_on_worker(&read_cl, h, -1, &seen), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_met.load(), 2) << "the two STARPU_REDUX tasks ran one after the other";
	EXPECT_EQ(seen, 102) << "the read after them sees every contribution";
	starpu_data_unregister(h);
	EXPECT_EQ(x, 102);
}

TEST_F(DataModes, ReductionsCommutingWritesAndReadsKeepTheirOrder)
{
	start(2);
	long x = 10;
	starpu_data_handle_t h = register_long(&x);
	starpu_data_set_reduction_methods(h, &add_cl, &init_cl);
	const int n = 30;
	long reads[3] = { -1, -1, -1 };
	for (int i = 0; i < n; i++)
		ASSERT_EQ(starpu_task_insert(&contribute_cl, STARPU_REDUX, h, 0), 0);
	ASSERT_EQ(submit_on_worker(&read_cl, h, -1, &reads[0]), 0);
	ASSERT_EQ(submit_on_worker(&read_cl, h, -1, &reads[1]), 0); // two readers: one combination
	ASSERT_EQ(starpu_task_insert(&double_cl, STARPU_RW | STARPU_COMMUTE, h, 0), 0);
	for (int i = 0; i < n; i++)
		ASSERT_EQ(starpu_task_insert(&contribute_cl, STARPU_REDUX, h, 0), 0);
	ASSERT_EQ(starpu_task_insert(&double_cl, STARPU_RW | STARPU_COMMUTE, h, 0), 0);
	ASSERT_EQ(submit_on_worker(&read_cl, h, -1, &reads[2]), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(reads[0], 10 + n);
	EXPECT_EQ(reads[1], 10 + n);
	EXPECT_EQ(reads[2], ((10 + n) * 2 + n) * 2);
	starpu_data_unregister(h);
}

TEST_F(DataModes, UnregisterCombinesThePendingContributions)
{
	start(2);
	long x = 5, init_value = 0;
	starpu_data_handle_t h = register_long(&x);
	starpu_data_set_reduction_methods_with_args(h, &add_cl, nullptr, &init_cl, &init_value);
	for (int i = 0; i < 20; i++)
		ASSERT_EQ(starpu_task_insert(&contribute_cl, STARPU_REDUX, h, 0), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 25) << "the contributions still pending at the unregistration are the application's";
	EXPECT_GE(g_cpu_inits.load(), 1);
}

TEST_F(DataModes, InitCodeletGetsItsArgument)
{
	start(1);
	long x = 0, init_value = 1000;
	starpu_data_handle_t h = register_long(&x);
	// A neutral value that is not neutral shows that the init codelet got its argument.
	starpu_data_set_reduction_methods_with_args(h, &add_cl, nullptr, &init_cl, &init_value);
	ASSERT_EQ(submit_on_worker(&contribute_cl, h, 0), 0);
	EXPECT_EQ(acquired(h), 1001);
	starpu_data_unregister(h);
}

TEST_F(DataModes, MethodsSetWithoutArgsDropTheEarlierArgs)
{
	start(1);
	long x = 0, init_value = 1000;
	starpu_data_handle_t h = register_long(&x);
	starpu_data_set_reduction_methods_with_args(h, &add_cl, nullptr, &init_cl, &init_value);
	// Set again without arguments: init_cpu now gets NULL, the neutral value 0.
	starpu_data_set_reduction_methods(h, &add_cl, &init_cl);
	ASSERT_EQ(submit_on_worker(&contribute_cl, h, 0), 0);
	EXPECT_EQ(acquired(h), 1) << "the init codelet still got the argument of the _with_args call";
	starpu_data_unregister(h);
}

// ---------------------------------------------------------------- scratch

struct ScratchUse
{
	std::mutex lock;
	std::multiset<uintptr_t> ptrs;
	std::atomic<int> overwritten_ok{0};
};
ScratchUse g_scratch;

// Notes the scratch buffers of its handles (all but the first, read, one) and fills them.
void use_scratches(void **buffers, void *arg)
{
	unsigned n = *(unsigned *)arg;
	for (unsigned i = 1; i < n; i++) {
		double *v = (double *)STARPU_VECTOR_GET_PTR(buffers[i]);
		unsigned nx = STARPU_VECTOR_GET_NX(buffers[i]);
		for (unsigned k = 0; k < nx; k++) // every byte is ours (ASan checks the size)
			v[k] = -7.0;
		std::lock_guard<std::mutex> lock(g_scratch.lock);
		g_scratch.ptrs.insert((uintptr_t)v);
	}
}

TEST_F(DataModes, ScratchBuffersAreTheWorkersAndReused)
{
	start(1);
	g_scratch.ptrs.clear();
	const uint32_t nx = 64;
	std::vector<double> input(nx, 1.0), data(nx, 1.5);
	starpu_data_handle_t in, h;
	starpu_vector_data_register(&in, STARPU_MAIN_RAM, (uintptr_t)input.data(), nx, sizeof(double));
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)data.data(), nx, sizeof(double));
	static starpu_codelet cl = make_codelet(use_scratches, "scratch", { STARPU_R, STARPU_SCRATCH });
	static unsigned two = 2;
	const int ntasks = 20;
	for (int i = 0; i < ntasks; i++)
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_R, in, STARPU_SCRATCH, h, STARPU_CL_ARGS_NFREE, &two, sizeof(two), 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(g_scratch.ptrs.size(), (size_t)ntasks);
	EXPECT_EQ(std::set<uintptr_t>(g_scratch.ptrs.begin(), g_scratch.ptrs.end()).size(), 1u)
		<< "one worker: one scratch buffer, reused by each task";
	EXPECT_EQ(g_scratch.ptrs.count((uintptr_t)data.data()), 0u) << "never the application's buffer";
	starpu_data_unregister(h);
	starpu_data_unregister(in);
	for (uint32_t k = 0; k < nx; k++)
		ASSERT_EQ(data[k], 1.5) << k;
}

TEST_F(DataModes, ScratchBuffersPastNmaxbufsAreTheRuntimes)
{
	start(2);
	g_scratch.ptrs.clear();
	const unsigned n = STARPU_NMAXBUFS + 3;
	const uint32_t nx = 32;
	std::vector<std::vector<double>> data(n, std::vector<double>(nx, 2.5));
	std::vector<starpu_data_handle_t> handles(n);
	for (unsigned i = 0; i < n; i++)
		starpu_vector_data_register(&handles[i], STARPU_MAIN_RAM, (uintptr_t)data[i].data(), nx, sizeof(double));
	static starpu_codelet cl = [] {
		starpu_codelet c = cpu_codelet(use_scratches, STARPU_VARIABLE_NBUFFERS, "scratch_many");
		return c;
	}();
	static unsigned count = n;
	const int ntasks = 6;
	for (int t = 0; t < ntasks; t++) {
		std::vector<starpu_data_descr> descrs(n);
		for (unsigned i = 0; i < n; i++)
			descrs[i] = { handles[i], i == 0 ? STARPU_R : STARPU_SCRATCH };
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_DATA_MODE_ARRAY, descrs.data(), (int)n, STARPU_CL_ARGS_NFREE, &count,
					     sizeof(count), 0),
			  0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_scratch.ptrs.size(), (size_t)ntasks * (n - 1));
	for (unsigned i = 0; i < n; i++)
		EXPECT_EQ(g_scratch.ptrs.count((uintptr_t)data[i].data()), 0u) << "handle " << i << " got the application's buffer";
	// At most one buffer per worker and handle.
	EXPECT_LE(std::set<uintptr_t>(g_scratch.ptrs.begin(), g_scratch.ptrs.end()).size(), (size_t)2 * (n - 1));
	for (unsigned i = 0; i < n; i++)
		starpu_data_unregister(handles[i]);
	for (unsigned i = 0; i < n; i++)
		for (uint32_t k = 0; k < nx; k++)
			ASSERT_EQ(data[i][k], 2.5) << i << "," << k;
}

// ------------------------------------------------------ interface methods

TEST_F(DataModes, PointerIsInsideTellsWhereTheDataIs)
{
	start(1);
	double m[6][10];
	long x = 0;
	starpu_data_handle_t matrix, variable, vector;
	starpu_matrix_data_register(&matrix, STARPU_MAIN_RAM, (uintptr_t)m, 10, 4, 6, sizeof(double)); // 4 of each 10
	starpu_variable_data_register(&variable, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_vector_data_register(&vector, STARPU_MAIN_RAM, (uintptr_t)m[1], 10, sizeof(double));
	EXPECT_EQ(starpu_data_pointer_is_inside(matrix, STARPU_MAIN_RAM, &m[0][0]), 1);
	EXPECT_EQ(starpu_data_pointer_is_inside(matrix, STARPU_MAIN_RAM, &m[5][3]), 1);
	EXPECT_EQ(starpu_data_pointer_is_inside(matrix, STARPU_MAIN_RAM, &m[5][4]), 0) << "past the last row's elements";
	EXPECT_EQ(starpu_data_pointer_is_inside(variable, STARPU_MAIN_RAM, &x), 1);
	EXPECT_EQ(starpu_data_pointer_is_inside(variable, STARPU_MAIN_RAM, &x + 1), 0);
	EXPECT_EQ(starpu_data_pointer_is_inside(vector, STARPU_MAIN_RAM, &m[1][9]), 1);
	EXPECT_EQ(starpu_data_pointer_is_inside(vector, STARPU_MAIN_RAM, &m[2][0]), 0);
	// An interface without the method cannot tell.
	static starpu_data_interface_ops silent = starpu_interface_variable_ops;
	silent.pointer_is_inside = nullptr;
	starpu_data_handle_t unknown;
	starpu_data_register(&unknown, STARPU_MAIN_RAM, starpu_data_get_interface_on_node(variable, STARPU_MAIN_RAM), &silent);
	EXPECT_EQ(starpu_data_pointer_is_inside(unknown, STARPU_MAIN_RAM, &x), -1);
	for (auto h : { matrix, variable, vector, unknown })
		starpu_data_unregister(h);
}

TEST_F(DataModes, PointerIsInsideForDenseAndSparseInterfaces)
{
	start(1);
	// A 3x2x2 block, and a 3x2x2x2 tensor, in arrays with padding: 4 per row, 3 rows per plane, 2 planes per cube.
	static double a[2][2][3][4];
	starpu_data_handle_t block, tensor, ndim, csr, bcsr, coo;
	starpu_block_data_register(&block, STARPU_MAIN_RAM, (uintptr_t)a, 4, 12, 3, 2, 2, sizeof(double));
	starpu_tensor_data_register(&tensor, STARPU_MAIN_RAM, (uintptr_t)a, 4, 12, 24, 3, 2, 2, 2, sizeof(double));
	uint32_t nn[2] = { 3, 2 }, ldn[2] = { 1, 4 };
	starpu_ndim_data_register(&ndim, STARPU_MAIN_RAM, (uintptr_t)&a[1][1][1][0], ldn, nn, 2, sizeof(double));
	EXPECT_EQ(starpu_data_pointer_is_inside(block, STARPU_MAIN_RAM, &a[0][0][0][0]), 1);
	EXPECT_EQ(starpu_data_pointer_is_inside(block, STARPU_MAIN_RAM, &a[0][1][1][2]), 1) << "the last element";
	EXPECT_EQ(starpu_data_pointer_is_inside(block, STARPU_MAIN_RAM, &a[0][1][1][3]), 0) << "past the last element";
	EXPECT_EQ(starpu_data_pointer_is_inside(tensor, STARPU_MAIN_RAM, &a[1][1][1][2]), 1) << "the last element";
	EXPECT_EQ(starpu_data_pointer_is_inside(tensor, STARPU_MAIN_RAM, &a[1][1][1][3]), 0);
	EXPECT_EQ(starpu_data_pointer_is_inside(ndim, STARPU_MAIN_RAM, &a[1][1][0][3]), 0) << "before the first element";
	EXPECT_EQ(starpu_data_pointer_is_inside(ndim, STARPU_MAIN_RAM, &a[1][1][1][0]), 1);
	EXPECT_EQ(starpu_data_pointer_is_inside(ndim, STARPU_MAIN_RAM, &a[1][1][2][2]), 1) << "the last element";
	EXPECT_EQ(starpu_data_pointer_is_inside(ndim, STARPU_MAIN_RAM, &a[1][1][2][3]), 0);

	// A 2x3 sparse matrix with 3 values: each of its arrays counts, nothing between them does.
	static float values[3] = { 1, 2, 3 };
	static uint32_t colind[3] = { 0, 2, 1 }, rowptr[3] = { 0, 2, 3 }, rows[3] = { 0, 0, 1 };
	starpu_csr_data_register(&csr, STARPU_MAIN_RAM, 3, 2, (uintptr_t)values, colind, rowptr, 0, sizeof(float));
	starpu_bcsr_data_register(&bcsr, STARPU_MAIN_RAM, 3, 2, (uintptr_t)values, colind, rowptr, 0, 1, 1, sizeof(float));
	starpu_coo_data_register(&coo, STARPU_MAIN_RAM, 3, 2, 3, colind, rows, (uintptr_t)values, sizeof(float));
	for (auto h : { csr, bcsr }) {
		EXPECT_EQ(starpu_data_pointer_is_inside(h, STARPU_MAIN_RAM, &values[2]), 1);
		EXPECT_EQ(starpu_data_pointer_is_inside(h, STARPU_MAIN_RAM, &colind[0]), 1);
		EXPECT_EQ(starpu_data_pointer_is_inside(h, STARPU_MAIN_RAM, &rowptr[2]), 1);
		EXPECT_EQ(starpu_data_pointer_is_inside(h, STARPU_MAIN_RAM, &rows[0]), 0);
	}
	EXPECT_EQ(starpu_data_pointer_is_inside(coo, STARPU_MAIN_RAM, &rows[2]), 1);
	EXPECT_EQ(starpu_data_pointer_is_inside(coo, STARPU_MAIN_RAM, &colind[1]), 1);
	EXPECT_EQ(starpu_data_pointer_is_inside(coo, STARPU_MAIN_RAM, &values[1]), 1);
	EXPECT_EQ(starpu_data_pointer_is_inside(coo, STARPU_MAIN_RAM, &rowptr[0]), 0);
	for (auto h : { block, tensor, ndim, csr, bcsr, coo })
		starpu_data_unregister(h);
}

// ------------------------------------------------------ on a device node

#ifdef STARPU_USE_OPENCL

long device_long(void *buffer)
{
	cl_command_queue queue;
	starpu_opencl_get_current_queue(&queue);
	long v = 0;
	EXPECT_EQ(clEnqueueReadBuffer(queue, (cl_mem)STARPU_VARIABLE_GET_DEV_HANDLE(buffer), CL_TRUE, STARPU_VARIABLE_GET_OFFSET(buffer),
				      sizeof(v), &v, 0, NULL, NULL),
		  CL_SUCCESS);
	return v;
}

void set_device_long(void *buffer, long v)
{
	cl_command_queue queue;
	starpu_opencl_get_current_queue(&queue);
	EXPECT_EQ(clEnqueueWriteBuffer(queue, (cl_mem)STARPU_VARIABLE_GET_DEV_HANDLE(buffer), CL_TRUE, STARPU_VARIABLE_GET_OFFSET(buffer),
				       sizeof(v), &v, 0, NULL, NULL),
		  CL_SUCCESS);
}

void init_opencl(void **buffers, void *)
{
	g_device_inits++;
	set_device_long(buffers[0], 0);
}

void contribute_opencl(void **buffers, void *)
{
	g_device_contributions++;
	set_device_long(buffers[0], device_long(buffers[0]) + 1);
}

class DataModesOpenCL : public DataModes
{
protected:
	void SetUp() override
	{
		DataModes::SetUp();
		if (!start_with_opencl_worker(1, &started_))
			GTEST_SKIP() << ASTRO_NO_OPENCL_DEVICE;
		cpu_ = starpu_worker_get_by_type(STARPU_CPU_WORKER, 0);
		device_ = starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0);
	}
	// Contributions alternately on the CPU and on the device.
	void contribute(starpu_data_handle_t h, int n)
	{
		static starpu_codelet cl = [] {
			starpu_codelet c = make_codelet(contribute_cpu, "contribute_both", { STARPU_REDUX });
			c.opencl_funcs[0] = contribute_opencl;
			return c;
		}();
		for (int i = 0; i < n; i++)
			ASSERT_EQ(submit_on_worker(&cl, h, i % 2 ? device_ : cpu_), 0);
	}
	ScopedEnv on_cpus_{ "STARPU_OPENCL_ON_CPUS", "1" };
	int cpu_ = -1, device_ = -1;
};

TEST_F(DataModesOpenCL, DeviceContributionsInitialisedOnTheDevice)
{
	static starpu_codelet init_both = [] {
		starpu_codelet c = make_codelet(init_cpu, "init_both", { STARPU_W });
		c.opencl_funcs[0] = init_opencl;
		return c;
	}();
	long x = 7;
	starpu_data_handle_t h = register_long(&x);
	starpu_data_set_reduction_methods(h, &add_cl, &init_both);
	const int n = 20;
	contribute(h, n);
	EXPECT_EQ(acquired(h), 7 + n);
	EXPECT_EQ(g_device_contributions.load(), n / 2) << "the device tasks ran on the device";
	EXPECT_GE(g_device_inits.load(), 1) << "the device's reduction buffer was initialised there";
	// A second round, then the unregistration combines.
	contribute(h, n);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 7 + 2 * n);
}

TEST_F(DataModesOpenCL, DeviceContributionsWithACpuOnlyInitCodelet)
{
	long x = -3;
	starpu_data_handle_t h = register_long(&x);
	starpu_data_set_reduction_methods(h, &add_cl, &init_cl);
	const int n = 16;
	contribute(h, n);
	// A task on the device reads the combined value there.
	long seen = -1;
	static starpu_codelet read_both = [] {
		starpu_codelet c = make_codelet(read_cpu, "read_both", { STARPU_R });
		c.opencl_funcs[0] = [](void **buffers, void *arg) { *(long *)arg = device_long(buffers[0]); };
		return c;
	}();
	ASSERT_EQ(submit_on_worker(&read_both, h, device_, &seen), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen, -3 + n);
	EXPECT_EQ(g_device_inits.load(), 0);
	EXPECT_GE(g_cpu_inits.load(), 2) << "the device's buffer got the CPU's neutral value";
	starpu_data_unregister(h);
	EXPECT_EQ(x, -3 + n);
}

// A vector interface whose allocation-cache methods count their calls.
std::atomic<int> g_cached{0}, g_reused{0}, g_alloc_footprints{0}, g_alloc_compares{0};

starpu_data_interface_ops counting_vector_ops()
{
	starpu_data_interface_ops ops = starpu_interface_vector_ops;
	ops.cache_data_on_node = [](void *cached, void *src, unsigned) {
		g_cached++;
		memcpy(cached, src, sizeof(starpu_vector_interface));
		// The handle's interface loses its buffer: the cache owns it now.
		((starpu_vector_interface *)src)->dev_handle = 0;
	};
	ops.reuse_data_on_node = [](void *dst, const void *cached, unsigned) {
		g_reused++;
		auto *d = (starpu_vector_interface *)dst;
		auto *c = (const starpu_vector_interface *)cached;
		d->dev_handle = c->dev_handle;
		d->ptr = c->ptr;
		d->offset = c->offset;
	};
	ops.alloc_footprint = [](starpu_data_handle_t h) {
		g_alloc_footprints++;
		return starpu_hash_crc32c_be(starpu_vector_get_nx(h) * (uint32_t)starpu_vector_get_elemsize(h), 0);
	};
	ops.alloc_compare = [](void *a, void *b) {
		g_alloc_compares++;
		auto *x = (starpu_vector_interface *)a, *y = (starpu_vector_interface *)b;
		return (int)((size_t)x->nx * x->elemsize == (size_t)y->nx * y->elemsize);
	};
	return ops;
}

TEST_F(DataModesOpenCL, TheAllocationCacheUsesTheInterfaceMethods)
{
	static starpu_data_interface_ops ops = counting_vector_ops();
	static starpu_codelet touch = [] {
		starpu_codelet c;
		starpu_codelet_init(&c);
		c.opencl_funcs[0] = [](void **, void *) {};
		c.nbuffers = 1;
		c.modes[0] = STARPU_RW;
		c.name = "touch_on_device";
		return c;
	}();
	g_cached = g_reused = g_alloc_footprints = g_alloc_compares = 0;
	std::vector<float> a(256, 1.0f);
	std::vector<int> b(256, 2); // another shape of the same bytes: alloc_compare lets it reuse the buffer
	starpu_vector_interface va = { STARPU_VECTOR_INTERFACE_ID, (uintptr_t)a.data(), (uintptr_t)a.data(), 0, 256, sizeof(float), 0, 256 * sizeof(float) };
	starpu_data_handle_t ha, hb;
	starpu_data_register(&ha, STARPU_MAIN_RAM, &va, &ops);
	ASSERT_EQ(submit_on_worker(&touch, ha, device_), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(ha); // its device buffer goes to the cache
	EXPECT_EQ(g_cached.load(), 1);
	starpu_vector_interface vb = { STARPU_VECTOR_INTERFACE_ID, (uintptr_t)b.data(), (uintptr_t)b.data(), 0, 256, sizeof(int), 0, 256 * sizeof(int) };
	starpu_data_register(&hb, STARPU_MAIN_RAM, &vb, &ops);
	ASSERT_EQ(submit_on_worker(&touch, hb, device_), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_reused.load(), 1) << "the cached buffer went to the second handle";
	EXPECT_GE(g_alloc_footprints.load(), 2);
	EXPECT_GE(g_alloc_compares.load(), 1);
	starpu_data_unregister(hb);
	EXPECT_EQ(b[17], 2);
}

TEST(DataModesOpenCLShutdown, PendingDeviceContributionsComeHomeAtShutdown)
{
	ScopedEnv on_cpus("STARPU_OPENCL_ON_CPUS", "1");
	starpu_conf conf = conf_with_ncpus(1);
	conf.nopencl = 1;
	ASSERT_EQ(starpu_init(&conf), 0);
	if (starpu_opencl_worker_get_count() == 0) {
		starpu_shutdown();
		GTEST_SKIP() << "no OpenCL device here";
	}
	static starpu_codelet cl = [] {
		starpu_codelet c = make_codelet(contribute_cpu, "contribute_device", { STARPU_REDUX });
		c.opencl_funcs[0] = contribute_opencl;
		c.where = STARPU_OPENCL;
		return c;
	}();
	static long x;
	x = 40;
	starpu_data_handle_t h = register_long(&x);
	starpu_data_set_reduction_methods(h, &add_cl, &init_cl);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_REDUX, h, 0), 0);
	starpu_task_wait_for_all();
	starpu_shutdown(); // the handle is still registered: its value comes home
	EXPECT_EQ(x, 44);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 44);
}

#endif

} // namespace
