// SPDX-License-Identifier: LGPL-2.1-or-later
// Data: registration of the built-in interfaces and their accessors,
// application acquire/release, unregistration, scratch buffers and memory
// allocation.
#include "helpers.h"

#include <astrolabe/observe.h>

#include <mutex>
#include <thread>
#include <vector>

using namespace astro_test;

namespace {

class Data : public ::testing::Test
{
protected:
	void SetUp() override { ASSERT_EQ(init_with_ncpus(2), 0); }
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
};

// Submits one task of cl on h (mode from the codelet) with arg.
int submit_on(starpu_codelet *cl, starpu_data_handle_t h, void *arg = nullptr)
{
	starpu_task *t = starpu_task_create();
	t->cl = cl;
	t->handles[0] = h;
	t->cl_arg = arg;
	int ret = starpu_task_submit(t);
	if (ret)
		starpu_task_destroy(t);
	return ret;
}

// ---------------------------------------------------------------- variable

struct VariableSeen
{
	uintptr_t ptr = 0;
	size_t elemsize = 0;
	int value = 0;
};

void variable_func(void **buffers, void *arg)
{
	auto *seen = static_cast<VariableSeen *>(arg);
	seen->ptr = STARPU_VARIABLE_GET_PTR(buffers[0]);
	seen->elemsize = STARPU_VARIABLE_GET_ELEMSIZE(buffers[0]);
	int *p = (int *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	seen->value = *p;
	*p = *p * 2;
}

TEST_F(Data, Variable)
{
	int x = 21;
	starpu_data_handle_t h = nullptr;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_variable_get_elemsize(h), sizeof(int));
	EXPECT_EQ(starpu_variable_get_local_ptr(h), (uintptr_t)&x);
	EXPECT_EQ(starpu_data_get_size(h), sizeof(int));
	EXPECT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), (void *)&x);
	EXPECT_EQ(starpu_data_get_local_ptr(h), (void *)&x);
	EXPECT_EQ(starpu_data_get_interface_id(h), STARPU_VARIABLE_INTERFACE_ID);
	EXPECT_EQ(starpu_data_get_home_node(h), STARPU_MAIN_RAM);
	EXPECT_EQ(starpu_data_get_interface_ops(h), &starpu_interface_variable_ops);
	EXPECT_EQ(starpu_data_is_on_node(h, STARPU_MAIN_RAM), 1u);
	auto *iface = static_cast<starpu_variable_interface *>(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM));
	ASSERT_NE(iface, nullptr);
	EXPECT_EQ(iface->id, STARPU_VARIABLE_INTERFACE_ID);
	EXPECT_EQ(STARPU_VARIABLE_GET_PTR(iface), (uintptr_t)&x);

	VariableSeen seen;
	starpu_codelet cl = cpu_codelet(variable_func, 1, "variable");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(submit_on(&cl, h, &seen), 0);
	starpu_data_unregister(h);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen.ptr, (uintptr_t)&x);
	EXPECT_EQ(seen.elemsize, sizeof(int));
	EXPECT_EQ(seen.value, 21);
	EXPECT_EQ(x, 42);
}

// StarPU-MPI's receives write through this pointer after starpu_mpi_cache_flush
// invalidated the handle: the buffer is still there, so is its pointer.
TEST_F(Data, PointerOfAnInvalidatedCopyStaysUntilWritten)
{
	int x = 5;
	starpu_data_handle_t h = nullptr;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	ASSERT_NE(h, nullptr);
	starpu_data_invalidate(h);
	EXPECT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), (void *)&x);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_W), 0);
	EXPECT_EQ(starpu_data_get_local_ptr(h), (void *)&x);
	*(int *)starpu_data_get_local_ptr(h) = 9;
	starpu_data_release(h);
	EXPECT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), (void *)&x);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 9);
}

TEST_F(Data, AccessorOfAnotherInterfaceIsAnError)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	uint32_t nx = 99;
	std::string err = stderr_of([&] { nx = starpu_vector_get_nx(h); });
	EXPECT_EQ(nx, 0u);
	EXPECT_TRUE(contains(err, "starpu_vector_get_nx")) << err;
	err = stderr_of([&] { nx = starpu_matrix_get_nx(nullptr); });
	EXPECT_EQ(nx, 0u);
	EXPECT_TRUE(contains(err, "NULL handle")) << err;
	starpu_data_unregister(h);
}

TEST_F(Data, NullPointerOnHomeNodeIsRefused)
{
	starpu_data_handle_t h = reinterpret_cast<starpu_data_handle_t>(0x1);
	std::string err = stderr_of([&] { starpu_variable_data_register(&h, STARPU_MAIN_RAM, 0, sizeof(int)); });
	EXPECT_EQ(h, nullptr);
	EXPECT_TRUE(contains(err, "NULL pointer")) << err;
}

// ------------------------------------------------------------------ vector

struct VectorSeen
{
	uint32_t nx = 0;
	size_t elemsize = 0;
	uintptr_t ptr = 0;
};

void vector_scale(void **buffers, void *arg)
{
	auto *seen = static_cast<VectorSeen *>(arg);
	seen->nx = STARPU_VECTOR_GET_NX(buffers[0]);
	seen->elemsize = STARPU_VECTOR_GET_ELEMSIZE(buffers[0]);
	seen->ptr = STARPU_VECTOR_GET_PTR(buffers[0]);
	float *v = (float *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (uint32_t i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] *= 3.0f;
}

TEST_F(Data, Vector)
{
	float v[10];
	for (int i = 0; i < 10; i++)
		v[i] = (float)i;
	starpu_data_handle_t h = nullptr;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v, 10, sizeof(float));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_vector_get_nx(h), 10u);
	EXPECT_EQ(starpu_vector_get_elemsize(h), sizeof(float));
	EXPECT_EQ(starpu_vector_get_allocsize(h), 10 * sizeof(float));
	EXPECT_EQ(starpu_vector_get_local_ptr(h), (uintptr_t)v);
	EXPECT_EQ(starpu_data_get_size(h), 10 * sizeof(float));
	EXPECT_EQ(starpu_data_get_alloc_size(h), 10 * sizeof(float));
	EXPECT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), (void *)v);
	EXPECT_EQ(starpu_data_get_interface_id(h), STARPU_VECTOR_INTERFACE_ID);
	auto *iface = static_cast<starpu_vector_interface *>(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM));
	EXPECT_EQ(STARPU_VECTOR_GET_NX(iface), 10u);
	EXPECT_EQ(STARPU_VECTOR_GET_OFFSET(iface), 0u);

	VectorSeen seen;
	starpu_codelet cl = cpu_codelet(vector_scale, 1, "scale");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(submit_on(&cl, h, &seen), 0);
	starpu_data_unregister(h);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen.nx, 10u);
	EXPECT_EQ(seen.elemsize, sizeof(float));
	EXPECT_EQ(seen.ptr, (uintptr_t)v);
	for (int i = 0; i < 10; i++)
		EXPECT_EQ(v[i], 3.0f * i) << i;
}

void fill_squares(void **buffers, void *)
{
	int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (uint32_t i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] = (int)(i * i);
}

TEST_F(Data, VectorAllocatedByTheRuntime)
{
	starpu_data_handle_t h = nullptr;
	starpu_vector_data_register(&h, -1, 0, 16, sizeof(int));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_data_get_home_node(h), -1);
	EXPECT_EQ(starpu_vector_get_nx(h), 16u);
	EXPECT_EQ(starpu_data_get_size(h), 16 * sizeof(int));
	starpu_codelet cl = cpu_codelet(fill_squares, 1, "fill");
	cl.modes[0] = STARPU_W;
	ASSERT_EQ(submit_on(&cl, h), 0);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	int *v = (int *)starpu_vector_get_local_ptr(h);
	ASSERT_NE(v, nullptr);
	EXPECT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), (void *)v);
	for (int i = 0; i < 16; i++)
		EXPECT_EQ(v[i], i * i) << i;
	starpu_data_release(h);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
}

// ------------------------------------------------------------------ matrix

struct MatrixSeen
{
	uint32_t nx = 0, ny = 0, ld = 0;
	size_t elemsize = 0;
	uintptr_t ptr = 0;
};

// Adds 1 to every element of the nx x ny matrix (column-major, leading dimension ld).
void matrix_add_one(void **buffers, void *arg)
{
	auto *seen = static_cast<MatrixSeen *>(arg);
	seen->nx = STARPU_MATRIX_GET_NX(buffers[0]);
	seen->ny = STARPU_MATRIX_GET_NY(buffers[0]);
	seen->ld = STARPU_MATRIX_GET_LD(buffers[0]);
	seen->elemsize = STARPU_MATRIX_GET_ELEMSIZE(buffers[0]);
	seen->ptr = STARPU_MATRIX_GET_PTR(buffers[0]);
	double *m = (double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	for (uint32_t j = 0; j < seen->ny; j++)
		for (uint32_t i = 0; i < seen->nx; i++)
			m[j * seen->ld + i] += 1.0;
}

TEST_F(Data, Matrix)
{
	const uint32_t nx = 4, ny = 3;
	double m[nx * ny];
	for (uint32_t k = 0; k < nx * ny; k++)
		m[k] = k;
	starpu_data_handle_t h = nullptr;
	starpu_matrix_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)m, nx, nx, ny, sizeof(double));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_matrix_get_nx(h), nx);
	EXPECT_EQ(starpu_matrix_get_ny(h), ny);
	EXPECT_EQ(starpu_matrix_get_local_ld(h), nx);
	EXPECT_EQ(starpu_matrix_get_elemsize(h), sizeof(double));
	EXPECT_EQ(starpu_matrix_get_local_ptr(h), (uintptr_t)m);
	EXPECT_EQ(starpu_matrix_get_allocsize(h), nx * ny * sizeof(double));
	EXPECT_EQ(starpu_data_get_size(h), nx * ny * sizeof(double));
	EXPECT_EQ(starpu_data_get_interface_id(h), STARPU_MATRIX_INTERFACE_ID);
	auto *iface = static_cast<starpu_matrix_interface *>(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM));
	EXPECT_EQ(STARPU_MATRIX_GET_LD(iface), nx);
	EXPECT_EQ(STARPU_MATRIX_GET_NY(iface), ny);

	MatrixSeen seen;
	starpu_codelet cl = cpu_codelet(matrix_add_one, 1, "add_one");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(submit_on(&cl, h, &seen), 0);
	starpu_data_unregister(h);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen.nx, nx);
	EXPECT_EQ(seen.ny, ny);
	EXPECT_EQ(seen.ld, nx);
	EXPECT_EQ(seen.elemsize, sizeof(double));
	EXPECT_EQ(seen.ptr, (uintptr_t)m);
	for (uint32_t k = 0; k < nx * ny; k++)
		EXPECT_EQ(m[k], k + 1.0) << k;
}

TEST_F(Data, MatrixWithPadding)
{
	const uint32_t nx = 4, ny = 3, ld = 6;
	std::vector<double> m(ld * ny, -1.0);
	for (uint32_t j = 0; j < ny; j++)
		for (uint32_t i = 0; i < nx; i++)
			m[j * ld + i] = 10.0 * j + i;
	starpu_data_handle_t h = nullptr;
	starpu_matrix_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)m.data(), ld, nx, ny, sizeof(double));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_matrix_get_local_ld(h), ld);
	EXPECT_EQ(starpu_data_get_size(h), nx * ny * sizeof(double));

	MatrixSeen seen;
	starpu_codelet cl = cpu_codelet(matrix_add_one, 1, "add_one");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(submit_on(&cl, h, &seen), 0);
	starpu_data_unregister(h);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen.ld, ld);
	for (uint32_t j = 0; j < ny; j++)
		for (uint32_t i = 0; i < ld; i++) {
			double expected = i < nx ? 10.0 * j + i + 1.0 : -1.0; // padding untouched
			EXPECT_EQ(m[j * ld + i], expected) << "i=" << i << " j=" << j;
		}
}

TEST_F(Data, MatrixLdSmallerThanNxIsRefused)
{
	double m[12];
	starpu_data_handle_t h = reinterpret_cast<starpu_data_handle_t>(0x1);
	std::string err = stderr_of([&] { starpu_matrix_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)m, 2, 4, 3, sizeof(double)); });
	EXPECT_EQ(h, nullptr);
	EXPECT_TRUE(contains(err, "leading dimension")) << err;
}

// ------------------------------------------------------------------- void

struct VoidOrder
{
	std::atomic<int> first_done{0};
	std::atomic<int> seen_by_second{-1};
};

void void_first(void **, void *arg)
{
	sleep_ms(20);
	static_cast<VoidOrder *>(arg)->first_done = 1;
}

void void_second(void **, void *arg)
{
	auto *o = static_cast<VoidOrder *>(arg);
	o->seen_by_second = o->first_done.load();
}

TEST_F(Data, VoidHandleCarriesDependencies)
{
	starpu_data_handle_t h = nullptr;
	starpu_void_data_register(&h);
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_data_get_size(h), 0u);
	EXPECT_EQ(starpu_data_get_interface_id(h), STARPU_VOID_INTERFACE_ID);
	EXPECT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), nullptr);
	VoidOrder o;
	starpu_codelet c1 = cpu_codelet(void_first, 1, "first");
	c1.modes[0] = STARPU_RW;
	starpu_codelet c2 = cpu_codelet(void_second, 1, "second");
	c2.modes[0] = STARPU_R;
	ASSERT_EQ(submit_on(&c1, h, &o), 0);
	ASSERT_EQ(submit_on(&c2, h, &o), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(o.seen_by_second, 1);
	starpu_data_unregister(h);
}

// --------------------------------------------------------- acquire/release

void slow_write_5(void **buffers, void *)
{
	sleep_ms(50);
	*(int *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 5;
}

TEST_F(Data, AcquireWaitsForPendingWriter)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_codelet cl = cpu_codelet(slow_write_5, 1, "slow_writer");
	cl.modes[0] = STARPU_W;
	ASSERT_EQ(submit_on(&cl, h), 0);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	EXPECT_EQ(x, 5);
	starpu_data_release(h);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
}

struct AfterRelease
{
	std::atomic<int> ran{0};
	std::atomic<int> seen{-1};
};

void add_one_record(void **buffers, void *arg)
{
	auto *a = static_cast<AfterRelease *>(arg);
	int *p = (int *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	a->seen = *p;
	*p += 1;
	a->ran = 1;
}

TEST_F(Data, AcquireReadWriteBlocksTasksUntilRelease)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	ASSERT_EQ(starpu_data_acquire(h, STARPU_RW), 0);
	AfterRelease a;
	starpu_codelet cl = cpu_codelet(add_one_record, 1, "after_release");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(submit_on(&cl, h, &a), 0);
	sleep_ms(50);
	EXPECT_EQ(a.ran, 0);
	x = 10; // the application owns the data
	starpu_data_release(h);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(a.ran, 1);
	EXPECT_EQ(a.seen, 10);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 11);
}

struct AcquireCb
{
	std::atomic<int> called{0};
	std::atomic<int> value{-1};
	int *x = nullptr;
};

void acquire_callback(void *arg)
{
	auto *a = static_cast<AcquireCb *>(arg);
	a->value = *a->x;
	a->called++;
}

TEST_F(Data, AcquireCallback)
{
	int x = 3;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	AcquireCb a;
	a.x = &x;
	ASSERT_EQ(starpu_data_acquire_cb(h, STARPU_R, acquire_callback, &a), 0);
	ASSERT_TRUE(wait_until([&] { return a.called.load() == 1; }));
	EXPECT_EQ(a.value, 3);
	starpu_data_release(h);

	// Behind a pending writer, the callback sees what it wrote.
	starpu_codelet cl = cpu_codelet(slow_write_5, 1, "slow_writer");
	cl.modes[0] = STARPU_W;
	ASSERT_EQ(submit_on(&cl, h), 0);
	ASSERT_EQ(starpu_data_acquire_cb(h, STARPU_RW, acquire_callback, &a), 0);
	ASSERT_TRUE(wait_until([&] { return a.called.load() == 2; }));
	EXPECT_EQ(a.value, 5);
	starpu_data_release(h);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
}

// An acquire of a free handle is granted without a job (data.c, uncontended
// acquires): whatever comes next still finds it there.
TEST_F(Data, AcquireOfAFreeHandleOrdersWhatFollows)
{
	int x = 3;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));

	// Held for reading: another read is granted, a write is not.
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	EXPECT_EQ(starpu_data_acquire_try(h, STARPU_W), -EAGAIN);
	ASSERT_EQ(starpu_data_acquire_try(h, STARPU_R), 0);
	starpu_data_release(h);
	starpu_data_release(h);
	std::string err = stderr_of([&] { starpu_data_release(h); });
	EXPECT_TRUE(contains(err, "not acquired")) << err;

	// Held for writing: a callback acquire waits for the release.
	AcquireCb a;
	a.x = &x;
	ASSERT_EQ(starpu_data_acquire(h, STARPU_W), 0);
	EXPECT_EQ(starpu_data_acquire_try(h, STARPU_R), -EAGAIN);
	ASSERT_EQ(starpu_data_acquire_cb(h, STARPU_R, acquire_callback, &a), 0);
	sleep_ms(20);
	EXPECT_EQ(a.called.load(), 0);
	x = 4;
	starpu_data_release(h);
	ASSERT_TRUE(wait_until([&] { return a.called.load() == 1; }));
	EXPECT_EQ(a.value, 4);
	starpu_data_release(h);

	// Still held: unregistering is refused, and works after the release.
	ASSERT_EQ(starpu_data_acquire(h, STARPU_RW), 0);
	err = stderr_of([&] { starpu_data_unregister(h); });
	EXPECT_TRUE(contains(err, "still acquired")) << err;
	starpu_data_release(h);
	starpu_data_unregister(h);
	err = stderr_of([&] { EXPECT_EQ(starpu_data_acquire(h, STARPU_R), -EINVAL); });
	EXPECT_TRUE(contains(err, "not registered")) << err;
}

// A callback acquire granted at once is a request: unregistering waits for its release.
TEST_F(Data, UnregisterWaitsForACallbackAcquireGrantedAtOnce)
{
	int x = 3;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	AcquireCb a;
	a.x = &x;
	ASSERT_EQ(starpu_data_acquire_cb(h, STARPU_R, acquire_callback, &a), 0);
	ASSERT_TRUE(wait_until([&] { return a.called.load() == 1; }));
	std::thread releaser([&] {
		sleep_ms(20);
		starpu_data_release(h);
	});
	std::string err = stderr_of([&] { starpu_data_unregister(h); });
	releaser.join();
	EXPECT_EQ(err, "");
	err = stderr_of([&] { starpu_data_release(h); });
	EXPECT_TRUE(contains(err, "not registered")) << err;
}

TEST_F(Data, AcquireBadArguments)
{
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_data_acquire(nullptr, STARPU_R); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "NULL handle")) << err;
	err = stderr_of([&] { ret = starpu_data_acquire_cb(nullptr, STARPU_R, acquire_callback, nullptr); });
	EXPECT_EQ(ret, -EINVAL);

	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	err = stderr_of([&] { ret = starpu_data_acquire(h, STARPU_SCRATCH); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "access mode")) << err;
	err = stderr_of([&] { ret = starpu_data_acquire(h, (starpu_data_access_mode)0x4000); });
	EXPECT_EQ(ret, -EINVAL);
	starpu_data_unregister(h);
}

std::atomic<int> g_acquire_in_task{0};

void acquire_in_task(void **, void *arg)
{
	g_acquire_in_task = starpu_data_acquire(static_cast<starpu_data_handle_t>(arg), STARPU_R);
}

TEST_F(Data, AcquireFromTaskIsDeadlock)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_codelet cl = cpu_codelet(acquire_in_task, 0, "acquirer");
	g_acquire_in_task = 0;
	std::string err = stderr_of([&] {
		ASSERT_EQ(submit_detached(&cl, h), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	EXPECT_EQ(g_acquire_in_task, -EDEADLK);
	EXPECT_TRUE(contains(err, "starpu_data_acquire_cb")) << err;
	starpu_data_unregister(h);
}

TEST_F(Data, ReleaseWithoutAcquireIsReported)
{
	int x = 1;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	std::string err = stderr_of([&] { starpu_data_release(h); });
	EXPECT_TRUE(contains(err, "starpu_data_release")) << err;
	EXPECT_TRUE(contains(err, "not acquired")) << err;
	err = stderr_of([&] { starpu_data_release(nullptr); });
	EXPECT_TRUE(contains(err, "NULL handle")) << err;
	// The handle still works.
	AfterRelease a;
	starpu_codelet cl = cpu_codelet(add_one_record, 1, "after");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(submit_on(&cl, h, &a), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(a.seen, 1);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 2);
}

// ------------------------------------------------------------ unregister

std::atomic<int> g_finished{0};

void sleep_1ms(void **, void *)
{
	sleep_ms(1);
	g_finished++;
}

TEST_F(Data, UnregisterWaitsForPendingTasks)
{
	g_finished = 0;
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_codelet cl = cpu_codelet(sleep_1ms, 1, "sleeper");
	cl.modes[0] = STARPU_RW;
	for (int i = 0; i < 20; i++)
		ASSERT_EQ(submit_on(&cl, h), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(g_finished, 20);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

TEST_F(Data, UnregisterWaitsEvenWithoutConsistency)
{
	g_finished = 0;
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_data_set_sequential_consistency_flag(h, 0);
	starpu_codelet cl = cpu_codelet(sleep_1ms, 1, "sleeper");
	cl.modes[0] = STARPU_RW;
	for (int i = 0; i < 20; i++)
		ASSERT_EQ(submit_on(&cl, h), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(g_finished, 20);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

// Tasks submitted on a handle by the callbacks of its tasks while the main thread is in
// starpu_data_unregister() are accepted and waited for, as in StarPU: 10 tasks, each
// callback submits 4 more, 50 increments in all before unregister returns.
std::atomic<int> g_open{0}, g_refused{0};
starpu_data_handle_t g_counted;

void increment_after_gate(void **buffers, void *)
{
	// The first tasks wait until the main thread is about to unregister, so their callbacks run meanwhile.
	while (!g_open.load())
		sleep_ms(1);
	(*(int *)STARPU_VARIABLE_GET_PTR(buffers[0]))++;
}

starpu_codelet g_increment_cl = [] {
	starpu_codelet cl = cpu_codelet(increment_after_gate, 1, "increment");
	cl.modes[0] = STARPU_RW;
	return cl;
}();

void submit_four_more(void *arg)
{
	if (arg == nullptr)
		return; // the tasks this callback submits submit nothing more
	for (int i = 0; i < 4; i++)
		if (starpu_task_insert(&g_increment_cl, STARPU_RW, g_counted, STARPU_CALLBACK_WITH_ARG_NFREE, submit_four_more, nullptr, 0) != 0)
			g_refused++;
}

TEST_F(Data, UnregisterWaitsForWhatCallbacksSubmitMeanwhile)
{
	int x = 0;
	g_open = 0;
	g_refused = 0;
	starpu_variable_data_register(&g_counted, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(starpu_task_insert(&g_increment_cl, STARPU_RW, g_counted, STARPU_CALLBACK_WITH_ARG_NFREE, submit_four_more, &x, 0), 0);
	std::thread opener([] {
		sleep_ms(20); // most likely inside starpu_data_unregister by now; the result is the same either way
		g_open = 1;
	});
	starpu_data_unregister(g_counted);
	EXPECT_EQ(x, 50);
	EXPECT_EQ(g_refused.load(), 0);
	opener.join();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(x, 50);
	// Dead for tasks once unregistered.
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_task_insert(&g_increment_cl, STARPU_RW, g_counted, 0), -EINVAL); });
	EXPECT_NE(err.find("not registered"), std::string::npos) << err;
}

// A task's callback may run after its handle's unregistration was submitted (even on the
// thread that frees it): the handle is freed once the callback returned, without deadlock.
void slow_callback(void *arg)
{
	sleep_ms(2);
	(*(std::atomic<int> *)arg)++;
}

TEST_F(Data, UnregisterSubmitWaitsForTheCallbacks)
{
	std::atomic<int> called{0};
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	g_open = 1;
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(starpu_task_insert(&g_increment_cl, STARPU_RW, h, STARPU_CALLBACK_WITH_ARG_NFREE, slow_callback, &called, 0), 0);
	starpu_data_unregister_submit(h);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(called.load(), 5);
	EXPECT_EQ(x, 5);
}

TEST_F(Data, UnregisterSubmit)
{
	g_finished = 0;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, -1, 0, 64, sizeof(double));
	starpu_codelet cl = cpu_codelet(sleep_1ms, 1, "sleeper");
	cl.modes[0] = STARPU_RW;
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(submit_on(&cl, h), 0);
	starpu_data_unregister_submit(h); // returns at once; freed after the tasks (ASan checks)
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_finished, 5);
}

// ---------------------------------------------------------------- scratch

struct ScratchSeen
{
	uintptr_t ptr = 0;
	uint32_t nx = 0;
	size_t elemsize = 0;
};

void use_scratch(void **buffers, void *arg)
{
	auto *seen = static_cast<ScratchSeen *>(arg);
	seen->ptr = STARPU_VECTOR_GET_PTR(buffers[0]);
	seen->nx = STARPU_VECTOR_GET_NX(buffers[0]);
	seen->elemsize = STARPU_VECTOR_GET_ELEMSIZE(buffers[0]);
	double *v = (double *)seen->ptr;
	for (uint32_t i = 0; i < seen->nx; i++) // every byte of it is ours (ASan checks the size)
		v[i] = -7.0;
}

TEST_F(Data, ScratchGetsPrivateBuffer)
{
	const uint32_t n = 100;
	std::vector<double> data(n, 1.5);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)data.data(), n, sizeof(double));
	ScratchSeen seen;
	starpu_codelet cl = cpu_codelet(use_scratch, 1, "scratch");
	cl.modes[0] = STARPU_SCRATCH;
	ASSERT_EQ(submit_on(&cl, h, &seen), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_NE(seen.ptr, 0u);
	EXPECT_NE(seen.ptr, (uintptr_t)data.data());
	EXPECT_EQ(seen.nx, n);
	EXPECT_EQ(seen.elemsize, sizeof(double));
	starpu_data_unregister(h);
	for (uint32_t i = 0; i < n; i++)
		EXPECT_EQ(data[i], 1.5) << i;
}

// ----------------------------------------------------------------- memory

TEST_F(Data, MallocAndPinning)
{
	void *p = nullptr;
	ASSERT_EQ(starpu_malloc(&p, 4096), 0);
	ASSERT_NE(p, nullptr);
	EXPECT_EQ((uintptr_t)p % 16, 0u);
	memset(p, 0xab, 4096);
	EXPECT_EQ(starpu_free_noflag(p, 4096), 0);

	ASSERT_EQ(starpu_malloc_flags(&p, 100, STARPU_MALLOC_PINNED | STARPU_MALLOC_COUNT), 0);
	ASSERT_NE(p, nullptr);
	memset(p, 0, 100);
	EXPECT_EQ(starpu_free_flags(p, 100, STARPU_MALLOC_PINNED | STARPU_MALLOC_COUNT), 0);

	ASSERT_EQ(starpu_malloc(&p, 0), 0);
	EXPECT_EQ(starpu_free(p), 0);

	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_malloc(nullptr, 10); });
	EXPECT_EQ(ret, -EINVAL);

	std::vector<char> buf(8192);
	EXPECT_EQ(starpu_memory_pin(buf.data(), buf.size()), 0);
	EXPECT_EQ(starpu_memory_unpin(buf.data(), buf.size()), 0);

	EXPECT_GT(starpu_memory_get_total(STARPU_MAIN_RAM), 0);
	EXPECT_EQ(starpu_memory_nodes_get_count(), 1u);
	EXPECT_EQ(starpu_node_get_kind(STARPU_MAIN_RAM), STARPU_CPU_RAM);
}

TEST_F(Data, DataSizes)
{
	char c[3];
	starpu_data_handle_t var, vec, mat, v;
	starpu_variable_data_register(&var, STARPU_MAIN_RAM, (uintptr_t)c, 3);
	std::vector<int16_t> vv(33);
	starpu_vector_data_register(&vec, STARPU_MAIN_RAM, (uintptr_t)vv.data(), 33, sizeof(int16_t));
	std::vector<float> mm(10 * 7);
	starpu_matrix_data_register(&mat, STARPU_MAIN_RAM, (uintptr_t)mm.data(), 10, 8, 7, sizeof(float));
	starpu_void_data_register(&v);
	EXPECT_EQ(starpu_data_get_size(var), 3u);
	EXPECT_EQ(starpu_data_get_size(vec), 66u);
	EXPECT_EQ(starpu_data_get_size(mat), 8u * 7u * sizeof(float));
	EXPECT_EQ(starpu_data_get_size(v), 0u);
	EXPECT_EQ(starpu_data_get_size(nullptr), 0u);
	EXPECT_EQ(starpu_data_handle_to_pointer(var, STARPU_MAIN_RAM), (void *)c);
	EXPECT_EQ(starpu_data_handle_to_pointer(vec, STARPU_MAIN_RAM), (void *)vv.data());
	EXPECT_EQ(starpu_data_handle_to_pointer(mat, STARPU_MAIN_RAM), (void *)mm.data());
	EXPECT_EQ(starpu_data_handle_to_pointer(nullptr, STARPU_MAIN_RAM), nullptr);
	// Different sizes, different footprints; same sizes, same footprint.
	starpu_data_handle_t vec2;
	std::vector<int16_t> vv2(33);
	starpu_vector_data_register(&vec2, STARPU_MAIN_RAM, (uintptr_t)vv2.data(), 33, sizeof(int16_t));
	EXPECT_EQ(starpu_data_get_footprint(vec), starpu_data_get_footprint(vec2));
	for (starpu_data_handle_t h : { var, vec, mat, v, vec2 })
		starpu_data_unregister(h);
}

TEST_F(Data, UserDataAndName)
{
	int x = 0, tag = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	EXPECT_EQ(starpu_data_get_user_data(h), nullptr);
	starpu_data_set_user_data(h, &tag);
	EXPECT_EQ(starpu_data_get_user_data(h), &tag);
	starpu_data_set_name(h, "x"); // freed at unregister (ASan checks)
	starpu_data_unregister(h);
}

// ------------------------------------------- StarPU's own programs' calls

TEST_F(Data, FindsTheHandleOfAPointerAndThePieceOfAPartition)
{
	static int a[12], b[3];
	starpu_data_handle_t va, vb, lazy;
	starpu_vector_data_register(&va, STARPU_MAIN_RAM, (uintptr_t)a, 12, sizeof(int));
	starpu_variable_data_register(&vb, STARPU_MAIN_RAM, (uintptr_t)b, sizeof(b));
	EXPECT_EQ(starpu_data_lookup(a), va);
	EXPECT_EQ(starpu_data_lookup(b), vb);
	EXPECT_EQ(starpu_data_lookup(&a[1]), nullptr) << "only a buffer's start is looked up";
	// Partitioned: each piece, the first included, is found rather than the whole.
	starpu_data_filter f = {};
	f.filter_func = starpu_vector_filter_block;
	f.nchildren = 3;
	starpu_data_partition(va, &f);
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(starpu_data_lookup(&a[4 * i]), starpu_data_get_sub_data(va, 1, i));
	starpu_data_unpartition(va, STARPU_MAIN_RAM);
	EXPECT_EQ(starpu_data_lookup(a), va);
	EXPECT_EQ(starpu_data_lookup(&a[4]), nullptr);
	// Registered on no node: found once its buffer exists, gone once unregistered.
	starpu_vector_data_register(&lazy, -1, 0, 5, sizeof(int));
	ASSERT_EQ(starpu_data_acquire(lazy, STARPU_W), 0);
	void *p = starpu_data_get_local_ptr(lazy);
	ASSERT_NE(p, nullptr);
	EXPECT_EQ(starpu_data_lookup(p), lazy);
	starpu_data_release(lazy);
	starpu_data_unregister(lazy);
	EXPECT_EQ(starpu_data_lookup(p), nullptr);
	starpu_data_unregister(va);
	EXPECT_EQ(starpu_data_lookup(a), nullptr);
	starpu_data_unregister(vb);
}

void init_42(void **buffers, void *)
{
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 42;
}

void add_long(void **buffers, void *)
{
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) += *(long *)STARPU_VARIABLE_GET_PTR(buffers[1]);
}

starpu_codelet init_42_cl = [] {
	starpu_codelet cl = cpu_codelet(init_42, 1, "init_42");
	cl.modes[0] = STARPU_W;
	return cl;
}();
starpu_codelet add_long_cl = [] {
	starpu_codelet cl = cpu_codelet(add_long, 2, "add_long");
	cl.modes[0] = STARPU_RW;
	cl.modes[1] = STARPU_R;
	return cl;
}();

TEST_F(Data, HandleRegisteredOnNoNodeReadsTheNeutralValue)
{
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, -1, 0, sizeof(long));
	starpu_data_set_reduction_methods(h, &add_long_cl, &init_42_cl);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	long *x = (long *)starpu_data_get_local_ptr(h);
	ASSERT_NE(x, nullptr);
	EXPECT_EQ(*x, 42) << "no contribution yet: the content is the init codelet's";
	starpu_data_release(h);
	starpu_data_unregister(h);
}

void increment_long(void **buffers, void *)
{
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) += 1;
}

starpu_codelet increment_long_cl = [] {
	starpu_codelet cl = cpu_codelet(increment_long, 1, "increment_long");
	cl.modes[0] = STARPU_RW;
	return cl;
}();

TEST_F(Data, InitCodeletAloneStartsDataRegisteredOnNoNodeAndInvalidated)
{
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, -1, 0, sizeof(long));
	starpu_data_set_reduction_methods(h, nullptr, &init_42_cl);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 5; i++)
			ASSERT_EQ(submit_on(&increment_long_cl, h), 0);
		ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
		long *x = (long *)starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM);
		ASSERT_NE(x, nullptr);
		EXPECT_EQ(*x, 42 + 5) << "round " << round << ": the writers start from the init codelet's value";
		starpu_data_release(h);
		starpu_data_invalidate(h);
	}
	starpu_data_unregister(h);
}

std::atomic<bool> g_hold_go{false};

// Writes its handle once told to (60 s at most).
void hold_until_go(void **, void *)
{
	for (int i = 0; i < 6000 && !g_hold_go; i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

starpu_codelet hold_cl = [] {
	starpu_codelet cl = cpu_codelet(hold_until_go, 1, "hold");
	cl.modes[0] = STARPU_W;
	return cl;
}();

TEST_F(Data, InvalidateSubmitThenUnregisterSubmitCompletes)
{
	// StarPU's tests/datawizard/temporary_partition: a piece's invalidation is still pending when
	// partition_clean submits its unregistration; both must complete, without a complaint.
	struct Seen
	{
		std::atomic<bool> unregistered{false};
		starpu_data_handle_t h = nullptr;
	} seen;
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_DATA_UNREGISTERED),
					 [](const astro_event *ev, void *arg) {
						 Seen *s = (Seen *)arg;
						 if (ev->object == s->h)
							 s->unregistered = true;
					 }, &seen);
	ASSERT_GE(id, 0);
	static long x;
	starpu_variable_data_register(&seen.h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_data_handle_t h = seen.h;
	std::string err = stderr_of([&] {
		g_hold_go = false;
		ASSERT_EQ(submit_on(&hold_cl, h), 0); // holds the handle: the invalidation waits for it
		starpu_data_invalidate_submit(h);
		starpu_data_unregister_submit(h);
		g_hold_go = true;
		for (int i = 0; i < 6000 && !seen.unregistered; i++)
			std::this_thread::sleep_for(std::chrono::milliseconds(10));
	});
	astro_observe_unsubscribe(id);
	EXPECT_TRUE(seen.unregistered) << "the unregistration never completed: " << err;
	EXPECT_FALSE(contains(err, "not registered")) << err;
}

TEST_F(Data, TellsWhereAHandleHasABuffer)
{
	static long x;
	starpu_data_handle_t home, lazy;
	starpu_variable_data_register(&home, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_variable_data_register(&lazy, -1, 0, sizeof(long));
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(home, STARPU_MAIN_RAM), 1u);
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(lazy, STARPU_MAIN_RAM), 0u);
	ASSERT_EQ(starpu_data_acquire(lazy, STARPU_W), 0);
	starpu_data_release(lazy);
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(lazy, STARPU_MAIN_RAM), 1u);
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(home, STARPU_MAXNODES), 0u);
	starpu_data_unregister(home);
	starpu_data_unregister(lazy);
}

TEST_F(Data, StridedCopiesMoveEveryBlockAndNothingElse)
{
	// Source: 2 x 3 x 4 ints with padding (rows of 5, planes of 4 rows); destination packed.
	int src[2][4][5], dst2[3][4], dst3[2][3][4], dst4[2][3][4];
	for (int i = 0; i < 2 * 4 * 5; i++)
		(&src[0][0][0])[i] = i;
	memset(dst2, -1, sizeof(dst2));
	const size_t e = sizeof(int);
	EXPECT_EQ(starpu_interface_copy2d((uintptr_t)src, 0, STARPU_MAIN_RAM, (uintptr_t)dst2, 0, STARPU_MAIN_RAM,
					  4 * e, 3, 5 * e, 4 * e, nullptr), 0);
	for (int y = 0; y < 3; y++)
		for (int x = 0; x < 4; x++)
			EXPECT_EQ(dst2[y][x], src[0][y][x]);
	memset(dst3, -1, sizeof(dst3));
	EXPECT_EQ(starpu_interface_copy3d((uintptr_t)src, 0, STARPU_MAIN_RAM, (uintptr_t)dst3, 0, STARPU_MAIN_RAM,
					  4 * e, 3, 5 * e, 4 * e, 2, 20 * e, 12 * e, nullptr), 0);
	// The same as one 4-D copy of a single outer block.
	memset(dst4, -1, sizeof(dst4));
	EXPECT_EQ(starpu_interface_copy4d((uintptr_t)src, 0, STARPU_MAIN_RAM, (uintptr_t)dst4, 0, STARPU_MAIN_RAM,
					  4 * e, 3, 5 * e, 4 * e, 2, 20 * e, 12 * e, 1, 40 * e, 24 * e, nullptr), 0);
	for (int z = 0; z < 2; z++)
		for (int y = 0; y < 3; y++)
			for (int x = 0; x < 4; x++) {
				EXPECT_EQ(dst3[z][y][x], src[z][y][x]);
				EXPECT_EQ(dst4[z][y][x], src[z][y][x]);
			}
	// Overlapping blocks are refused, with one message.
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_interface_copy2d((uintptr_t)src, 0, STARPU_MAIN_RAM, (uintptr_t)dst2, 0, STARPU_MAIN_RAM,
						  4 * e, 3, 2 * e, 4 * e, nullptr), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "overlap")) << err;
}

TEST_F(Data, DataCopyIsObservedAsATransfer)
{
	struct Seen
	{
		std::mutex lock;
		std::vector<astro_event> events;
	} seen;
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_TRANSFER_BEGIN) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TRANSFER_END),
					 [](const astro_event *ev, void *arg) {
						 Seen *s = (Seen *)arg;
						 std::lock_guard<std::mutex> hold(s->lock);
						 s->events.push_back(*ev);
					 }, &seen);
	ASSERT_GE(id, 0);
	starpu_interface_data_copy(STARPU_MAIN_RAM, STARPU_MAIN_RAM, 1234);
	astro_observe_unsubscribe(id);
	std::lock_guard<std::mutex> hold(seen.lock);
	ASSERT_EQ(seen.events.size(), 2u);
	EXPECT_EQ(seen.events[0].moment, ASTRO_MOMENT_TRANSFER_BEGIN);
	EXPECT_EQ(seen.events[1].moment, ASTRO_MOMENT_TRANSFER_END);
	EXPECT_EQ(seen.events[1].bytes, 1234u);
}

} // namespace
