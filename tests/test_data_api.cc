// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU API items StarPU's own programs use (issue 23): buffers the program
// sets itself (starpu_data_ptr_register and the *_ptr_register helpers),
// copies between handles (starpu_data_cpy), the worker collections programs
// copy (starpu_worker_list, starpu_worker_tree) and data arbiters; and the
// rest of StarPU 1.4's data calls (issue 40): deinitialization, the status of
// a copy, eviction asked by the program, lowering an acquire
// (starpu_data_release_to), read-only copies (starpu_data_dup_ro), memory
// used, allocation hooks and starpu_seed.
#include "helpers.h"
#include "alone_headers.h"

#include <starpu_rand.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <vector>

using namespace astro_test;

namespace {

class DataApi : public ::testing::Test
{
protected:
	void SetUp() override { ASSERT_EQ(init_with_ncpus(2), 0); }
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
};

// Adds the task's cl_arg (an int) to each element of its vector.
void add_to_vector(void **buffers, void *arg)
{
	int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] += (int)(intptr_t)arg;
}

starpu_codelet add_cl = [] {
	starpu_codelet cl = cpu_codelet(add_to_vector, 1, "add");
	cl.modes[0] = STARPU_RW;
	return cl;
}();

// ----------------------------------------------------------- ptr_register

// A handle registered on no node gets the program's buffer: allocated there,
// used by tasks, never freed by the runtime.
TEST_F(DataApi, PtrRegisterGivesTheProgramsBuffer)
{
	const unsigned n = 16;
	std::vector<int> *buf = new std::vector<int>(n, 1);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, -1, 0, n, sizeof(int));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(h, STARPU_MAIN_RAM), 0u);
	uintptr_t ptr = (uintptr_t)buf->data();
	std::string err = stderr_of([&] { starpu_vector_ptr_register(h, STARPU_MAIN_RAM, ptr, ptr, 0); });
	EXPECT_EQ(err, "");
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(h, STARPU_MAIN_RAM), 1u);
	EXPECT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), buf->data());
	// Its content is the program's: a read-write task adds to it.
	ASSERT_EQ(submit_on_handle(&add_cl, h, (void *)(intptr_t)2), 0);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	EXPECT_EQ((void *)starpu_vector_get_local_ptr(h), (void *)buf->data());
	starpu_data_release(h);
	starpu_data_unregister(h);
	// Still the program's (ASan reports a free of it by the runtime, a mismatch with new[]).
	for (unsigned i = 0; i < n; i++)
		EXPECT_EQ((*buf)[i], 3) << i;
	delete buf;
}

// Every interface's helper marks the buffer, and the generic call works for a program's own helper.
TEST_F(DataApi, PtrRegisterOfEachInterface)
{
	static double d[4 * 4 * 4 * 2];
	starpu_data_handle_t var, mat, blk, ten, any;
	starpu_variable_data_register(&var, -1, 0, sizeof(double));
	starpu_matrix_data_register(&mat, -1, 0, 4, 4, 4, sizeof(double));
	starpu_block_data_register(&blk, -1, 0, 4, 16, 4, 4, 4, sizeof(double));
	starpu_tensor_data_register(&ten, -1, 0, 4, 16, 64, 4, 4, 4, 2, sizeof(double));
	starpu_variable_data_register(&any, -1, 0, sizeof(double));
	std::string err = stderr_of([&] {
		starpu_variable_ptr_register(var, STARPU_MAIN_RAM, (uintptr_t)d, (uintptr_t)d, 0);
		starpu_matrix_ptr_register(mat, STARPU_MAIN_RAM, (uintptr_t)d, (uintptr_t)d, 0, 4);
		starpu_block_ptr_register(blk, STARPU_MAIN_RAM, (uintptr_t)d, (uintptr_t)d, 0, 4, 16);
		starpu_tensor_ptr_register(ten, STARPU_MAIN_RAM, (uintptr_t)d, (uintptr_t)d, 0, 4, 16, 64);
		starpu_data_ptr_register(any, STARPU_MAIN_RAM);
	});
	EXPECT_EQ(err, "");
	for (starpu_data_handle_t h : {var, mat, blk, ten, any})
		EXPECT_EQ(starpu_data_test_if_allocated_on_node(h, STARPU_MAIN_RAM), 1u);
	EXPECT_EQ(starpu_data_handle_to_pointer(ten, STARPU_MAIN_RAM), (void *)d);
	for (starpu_data_handle_t h : {var, mat, blk, ten, any})
		starpu_data_unregister(h);
}

// Refused with one message each, the handle unchanged: a node that already
// has a buffer (its home), no such node, another interface, no handle.
TEST_F(DataApi, PtrRegisterBadInput)
{
	static int home[8], other[8];
	starpu_data_handle_t h, var;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)home, 8, sizeof(int));
	starpu_variable_data_register(&var, -1, 0, sizeof(int));
	std::string err = stderr_of([&] { starpu_vector_ptr_register(h, STARPU_MAIN_RAM, (uintptr_t)other, (uintptr_t)other, 0); });
	EXPECT_TRUE(contains(err, "error: starpu_vector_ptr_register: the handle already has a buffer on node 0")) << err;
	EXPECT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), (void *)home);
	err = stderr_of([&] { starpu_data_ptr_register(h, STARPU_MAIN_RAM); });
	EXPECT_TRUE(contains(err, "error: starpu_data_ptr_register: the handle already has a buffer on node 0")) << err;
	err = stderr_of([&] { starpu_data_ptr_register(var, STARPU_MAXNODES + 3); });
	EXPECT_TRUE(contains(err, "starpu_data_ptr_register: no memory node")) << err;
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(var, STARPU_MAIN_RAM), 0u);
	err = stderr_of([&] { starpu_vector_ptr_register(var, STARPU_MAIN_RAM, (uintptr_t)other, (uintptr_t)other, 0); });
	EXPECT_TRUE(contains(err, "starpu_vector_ptr_register: the handle is a")) << err;
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(var, STARPU_MAIN_RAM), 0u);
	err = stderr_of([&] { starpu_data_ptr_register(nullptr, STARPU_MAIN_RAM); });
	EXPECT_TRUE(contains(err, "starpu_data_ptr_register: NULL handle")) << err;
	starpu_data_unregister(h);
	starpu_data_unregister(var);
}

// --------------------------------------------------------------- data_cpy

std::atomic<int> g_copied{0};

void count_copy(void *arg)
{
	EXPECT_EQ(arg, (void *)&g_copied);
	g_copied++;
}

// The copy is a task ordered with the other accesses: after the tasks writing
// the source, before those using the destination; synchronous or not.
TEST_F(DataApi, DataCpyCopiesInTaskOrder)
{
	const unsigned n = 32;
	static int src[n], dst[n];
	for (unsigned i = 0; i < n; i++) {
		src[i] = (int)i;
		dst[i] = -1;
	}
	starpu_data_handle_t hs, hd;
	starpu_vector_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)src, n, sizeof(int));
	starpu_vector_data_register(&hd, STARPU_MAIN_RAM, (uintptr_t)dst, n, sizeof(int));
	ASSERT_EQ(starpu_data_cpy(hd, hs, 0, nullptr, nullptr), 0);
	ASSERT_EQ(starpu_data_acquire(hd, STARPU_R), 0);
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(dst[i], (int)i) << i;
	starpu_data_release(hd);

	g_copied = 0;
	ASSERT_EQ(submit_on_handle(&add_cl, hs, (void *)(intptr_t)100), 0);
	ASSERT_EQ(starpu_data_cpy_priority(hd, hs, 1, count_copy, &g_copied, STARPU_MAX_PRIO), 0);
	ASSERT_EQ(submit_on_handle(&add_cl, hd, (void *)(intptr_t)1000), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_copied, 1);
	starpu_data_unregister(hs);
	starpu_data_unregister(hd);
	for (unsigned i = 0; i < n; i++) {
		EXPECT_EQ(src[i], (int)i + 100) << i;
		EXPECT_EQ(dst[i], (int)i + 1100) << i;
	}
}

// Unsuitable handles: -EINVAL with one message, nothing copied.
TEST_F(DataApi, DataCpyBadInput)
{
	static int a[4] = {1, 2, 3, 4}, b[4] = {0, 0, 0, 0}, c[8], v = 7;
	starpu_data_handle_t ha, hb, hc, hv;
	starpu_vector_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)a, 4, sizeof(int));
	starpu_vector_data_register(&hb, STARPU_MAIN_RAM, (uintptr_t)b, 4, sizeof(int));
	starpu_vector_data_register(&hc, STARPU_MAIN_RAM, (uintptr_t)c, 8, sizeof(int));
	starpu_variable_data_register(&hv, STARPU_MAIN_RAM, (uintptr_t)&v, sizeof(int));
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_data_cpy(nullptr, ha, 0, nullptr, nullptr); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "starpu_data_cpy: NULL destination handle")) << err;
	err = stderr_of([&] { ret = starpu_data_cpy(hb, nullptr, 0, nullptr, nullptr); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "starpu_data_cpy: NULL source handle")) << err;
	err = stderr_of([&] { ret = starpu_data_cpy(ha, ha, 0, nullptr, nullptr); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "the same handle")) << err;
	err = stderr_of([&] { ret = starpu_data_cpy(hb, hv, 0, nullptr, nullptr); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "both handles need the same interface")) << err;
	err = stderr_of([&] { ret = starpu_data_cpy(hb, hc, 1, nullptr, nullptr); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "the source holds 32 bytes and the destination 16")) << err;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	for (starpu_data_handle_t h : {ha, hb, hc, hv})
		starpu_data_unregister(h);
	for (int x : b)
		EXPECT_EQ(x, 0);
}

// ----------------------------------------------------- worker collections

std::vector<int> walk(starpu_worker_collection *co)
{
	std::vector<int> ids;
	starpu_sched_ctx_iterator it;
	co->init_iterator(co, &it);
	while (co->has_next(co, &it))
		ids.push_back(co->get_next(co, &it));
	return ids;
}

// As StarPU's worker_list_example: a program's collection made of
// starpu_worker_list's methods holds the workers added, in that order.
TEST_F(DataApi, WorkerListCollection)
{
	int ids[STARPU_NMAXWORKERS];
	unsigned n = starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids, STARPU_NMAXWORKERS);
	ASSERT_EQ(n, 2u);
	starpu_worker_collection co = starpu_worker_list;
	co.init(&co);
	EXPECT_EQ(co.type, STARPU_WORKER_LIST);
	EXPECT_EQ(co.add(&co, ids[1]), ids[1]);
	EXPECT_EQ(co.add(&co, ids[0]), ids[0]);
	EXPECT_EQ(co.add(&co, ids[0]), -1); // already there
	EXPECT_EQ(walk(&co), (std::vector<int>{ids[1], ids[0]}));
	EXPECT_EQ(co.remove(&co, ids[1]), ids[1]);
	EXPECT_EQ(co.remove(&co, ids[1]), -1);
	EXPECT_EQ(walk(&co), std::vector<int>{ids[0]});
	EXPECT_EQ(co.nworkers, 1u);
	// Ids no collection can hold: refused with a message.
	int ret = 0;
	std::string err = stderr_of([&] { ret = co.add(&co, -1); });
	EXPECT_EQ(ret, -1);
	EXPECT_TRUE(contains(err, "no worker -1")) << err;
	err = stderr_of([&] { ret = co.remove(&co, STARPU_NMAXWORKERS); });
	EXPECT_EQ(ret, -1);
	EXPECT_TRUE(contains(err, "give an id below STARPU_NMAXWORKERS")) << err;
	EXPECT_EQ(co.nworkers, 1u);
	co.deinit(&co);
}

// starpu_worker_tree walks the same workers in topology order (by the unit each is bound to).
TEST_F(DataApi, WorkerTreeCollection)
{
	int ids[STARPU_NMAXWORKERS];
	unsigned n = starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids, STARPU_NMAXWORKERS);
	ASSERT_EQ(n, 2u);
	starpu_worker_collection co = starpu_worker_tree;
	co.init(&co);
	EXPECT_EQ(co.type, STARPU_WORKER_TREE);
	for (int i = (int)n - 1; i >= 0; i--)
		EXPECT_EQ(co.add(&co, ids[i]), ids[i]);
	std::vector<int> seen = walk(&co);
	ASSERT_EQ(seen.size(), n);
	std::vector<int> expected(ids, ids + n);
	std::sort(expected.begin(), expected.end(), [](int a, int b) {
		int ba = starpu_worker_get_bindid(a), bb = starpu_worker_get_bindid(b);
		return ba != bb ? ba < bb : a < b;
	});
	EXPECT_EQ(seen, expected);
	EXPECT_EQ(co.add(&co, ids[0]), -1);
	EXPECT_EQ(co.remove(&co, ids[0]), ids[0]);
	EXPECT_EQ(walk(&co).size(), n - 1);
	co.deinit(&co);
}

// --------------------------------------------------------------- arbiters

const int g_narb = 6;
int g_arb_values[g_narb];
std::atomic<int> g_arb_in_use[g_narb];
std::atomic<int> g_arb_overlaps{0};
std::atomic<int> g_arb_runs{0};

// Increments its two variables, checking that no other task holds them meanwhile.
void arbitrated(void **buffers, void *arg)
{
	(void)arg;
	int *x = (int *)STARPU_VARIABLE_GET_PTR(buffers[0]), *y = (int *)STARPU_VARIABLE_GET_PTR(buffers[1]);
	int ix = (int)(x - g_arb_values), iy = (int)(y - g_arb_values);
	if (g_arb_in_use[ix].exchange(1) || g_arb_in_use[iy].exchange(1))
		g_arb_overlaps++;
	(*x)++;
	(*y)++;
	std::this_thread::yield();
	g_arb_in_use[ix] = 0;
	g_arb_in_use[iy] = 0;
	g_arb_runs++;
}

// As StarPU's test_arbiter: commuting tasks on every pair of handles, the
// handles under one arbiter, then under two, then some under none; each
// task has its two handles to itself, every task runs, none waits forever.
TEST(DataApiArbiter, CommuteAccessesAreArbitrated)
{
	Runtime rt(4);
	ASSERT_TRUE(rt.ok());
	static starpu_codelet cl = [] {
		starpu_codelet c = cpu_codelet(arbitrated, 2, "arbitrated");
		c.modes[0] = (starpu_data_access_mode)(STARPU_RW | STARPU_COMMUTE);
		c.modes[1] = (starpu_data_access_mode)(STARPU_RW | STARPU_COMMUTE);
		return c;
	}();
	starpu_arbiter_t one = starpu_arbiter_create(), two = starpu_arbiter_create();
	ASSERT_NE(one, nullptr);
	ASSERT_NE(two, nullptr);
	for (int layout = 0; layout < 3; layout++) {
		g_arb_overlaps = 0;
		g_arb_runs = 0;
		starpu_data_handle_t h[g_narb];
		for (int i = 0; i < g_narb; i++) {
			g_arb_values[i] = 0;
			starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&g_arb_values[i], sizeof(int));
			starpu_arbiter_t a = layout == 0 ? one : layout == 1 ? (i % 2 ? one : two) : (i % 3 == 0 ? nullptr : i % 3 == 1 ? one : two);
			if (a)
				starpu_data_assign_arbiter(h[i], a);
		}
		int ntasks = 0;
		for (int i = 0; i < g_narb; i++)
			for (int j = 0; j < g_narb; j++)
				if (i != j) {
					starpu_task *t = starpu_task_create();
					t->cl = &cl;
					t->handles[0] = h[i];
					t->handles[1] = h[j];
					ASSERT_EQ(starpu_task_submit(t), 0);
					ntasks++;
				}
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		for (int i = 0; i < g_narb; i++)
			starpu_data_unregister(h[i]);
		EXPECT_EQ(g_arb_overlaps, 0) << "layout " << layout;
		EXPECT_EQ(g_arb_runs, ntasks) << "layout " << layout;
		for (int i = 0; i < g_narb; i++)
			EXPECT_EQ(g_arb_values[i], 2 * (g_narb - 1)) << "layout " << layout << ", handle " << i;
	}
	starpu_arbiter_destroy(one);
	starpu_arbiter_destroy(two);
}

// Refused with one message each: no handle, a handle in use, a second
// arbiter, destroying an arbiter whose handles are registered (kept).
TEST_F(DataApi, ArbiterBadInput)
{
	static int x, y;
	starpu_data_handle_t hx, hy;
	starpu_variable_data_register(&hx, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(int));
	starpu_variable_data_register(&hy, STARPU_MAIN_RAM, (uintptr_t)&y, sizeof(int));
	starpu_arbiter_t one = starpu_arbiter_create(), two = starpu_arbiter_create();
	std::string err = stderr_of([&] { starpu_data_assign_arbiter(nullptr, one); });
	EXPECT_TRUE(contains(err, "starpu_data_assign_arbiter: NULL handle")) << err;
	ASSERT_EQ(starpu_data_acquire(hx, STARPU_R), 0);
	err = stderr_of([&] { starpu_data_assign_arbiter(hx, one); });
	EXPECT_TRUE(contains(err, "tasks or acquires are using the handle")) << err;
	starpu_data_release(hx);
	err = stderr_of([&] {
		starpu_data_assign_arbiter(hx, one);
		starpu_data_assign_arbiter(hy, one);
	});
	EXPECT_EQ(err, "");
	err = stderr_of([&] { starpu_data_assign_arbiter(hx, two); });
	EXPECT_TRUE(contains(err, "the handle already has an arbiter")) << err;
	err = stderr_of([&] { starpu_arbiter_destroy(one); });
	EXPECT_TRUE(contains(err, "starpu_arbiter_destroy: 2 handle(s) assigned to the arbiter are still registered")) << err;
	err = stderr_of([&] { starpu_arbiter_destroy(nullptr); });
	EXPECT_TRUE(contains(err, "starpu_arbiter_destroy: NULL arbiter")) << err;
	// Taken off one handle, the other unregistered: the arbiter goes.
	starpu_data_assign_arbiter(hx, nullptr);
	starpu_data_unregister(hy);
	err = stderr_of([&] {
		starpu_arbiter_destroy(one);
		starpu_arbiter_destroy(two);
	});
	EXPECT_EQ(err, "");
	starpu_data_unregister(hx);
}

// ------------------------------------------------------------- issue 40

void set_to_arg(void **buffers, void *arg)
{
	int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] = (int)(intptr_t)arg;
}

starpu_codelet set_cl = [] {
	starpu_codelet cl = cpu_codelet(set_to_arg, 1, "set");
	cl.modes[0] = STARPU_W;
	return cl;
}();

// Deinitialized, no copy is valid, the buffer stays: the next write gives the value again.
TEST_F(DataApi, DeinitializeLeavesNoValidCopy)
{
	std::vector<int> v(8, 5);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), v.size(), sizeof(int));
	int allocated = -1, valid = -1, loading = -1, requested = -1;
	starpu_data_query_status2(h, STARPU_MAIN_RAM, &allocated, &valid, &loading, &requested);
	EXPECT_EQ(allocated, 1);
	EXPECT_EQ(valid, 1);
	EXPECT_EQ(loading, 0);
	EXPECT_EQ(requested, 0);
	starpu_data_deinitialize(h);
	starpu_data_query_status(h, STARPU_MAIN_RAM, &allocated, &valid, &requested);
	EXPECT_EQ(allocated, 1) << "the buffer stays";
	EXPECT_EQ(valid, 0);
	EXPECT_EQ(starpu_data_is_on_node(h, STARPU_MAIN_RAM), 0u);
	ASSERT_EQ(submit_on_handle(&set_cl, h, (void *)(intptr_t)9), 0);
	// Submitted: after the tasks before it.
	ASSERT_EQ(submit_on_handle(&add_cl, h, (void *)(intptr_t)1), 0);
	starpu_data_deinitialize_submit(h);
	starpu_task_wait_for_all();
	EXPECT_EQ(starpu_data_is_on_node(h, STARPU_MAIN_RAM), 0u);
	starpu_data_unregister(h);
	EXPECT_EQ(v[0], 10) << "the task before the deinitialization ran on the value";
	std::string err = stderr_of([] {
		starpu_data_deinitialize(nullptr);
		starpu_data_deinitialize_submit(nullptr);
	});
	EXPECT_TRUE(contains(err, "starpu_data_deinitialize: NULL handle")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_deinitialize_submit: NULL handle")) << err;
}

TEST_F(DataApi, QueryStatusBadInput)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_data_query_status2(h, STARPU_MAIN_RAM, nullptr, nullptr, nullptr, nullptr); // each pointer may be NULL
	int allocated = -1, valid = -1, loading = -1, requested = -1;
	std::string err = stderr_of([&] { starpu_data_query_status2(h, 42, &allocated, &valid, &loading, &requested); });
	EXPECT_TRUE(contains(err, "starpu_data_query_status: no memory node 42")) << err;
	EXPECT_EQ(allocated + valid + loading + requested, 0);
	err = stderr_of([&] { starpu_data_query_status(nullptr, 0, &allocated, &valid, &requested); });
	EXPECT_TRUE(contains(err, "starpu_data_query_status: NULL handle")) << err;
	starpu_data_unregister(h);
}

// With main memory only, nothing is the runtime's to evict: refused quietly; bad input said.
TEST_F(DataApi, EvictWithoutADeviceIsRefused)
{
	EXPECT_EQ(STARPU_FETCH, 0);
	EXPECT_EQ(STARPU_TASK_PREFETCH, 1);
	EXPECT_EQ(STARPU_PREFETCH, 2);
	EXPECT_EQ(STARPU_IDLEFETCH, 3);
	EXPECT_EQ(STARPU_NFETCH, 4);
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_data_can_evict(h, STARPU_MAIN_RAM, STARPU_FETCH), 0);
		EXPECT_EQ(starpu_data_evict_from_node(h, STARPU_MAIN_RAM), -1);
	});
	EXPECT_EQ(err, "");
	err = stderr_of([&] {
		EXPECT_EQ(starpu_data_can_evict(h, 7, STARPU_FETCH), 0);
		EXPECT_EQ(starpu_data_can_evict(h, STARPU_MAIN_RAM, STARPU_NFETCH), 0);
		EXPECT_EQ(starpu_data_evict_from_node(nullptr, STARPU_MAIN_RAM), -1);
	});
	EXPECT_TRUE(contains(err, "starpu_data_can_evict: no memory node 7")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_can_evict: no request urgency 4")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_evict_from_node: NULL handle")) << err;
	starpu_data_unregister(h);
}

std::atomic<int> reads_done{0};
std::atomic<int> writes_done{0};

void count_read(void **, void *)
{
	reads_done++;
}

void count_write(void **, void *)
{
	writes_done++;
}

starpu_codelet read_cl = [] {
	starpu_codelet cl = cpu_codelet(count_read, 1, "count_read");
	cl.modes[0] = STARPU_R;
	return cl;
}();

starpu_codelet write_cl = [] {
	starpu_codelet cl = cpu_codelet(count_write, 1, "count_write");
	cl.modes[0] = STARPU_RW;
	return cl;
}();

// A read task submitted while the program holds the data in write mode, waited for
// once the acquire is lowered to STARPU_R (without the lowering, the wait never ends).
void reads_go_on_after_release_to(starpu_data_handle_t h)
{
	reads_done = 0;
	writes_done = 0;
	struct starpu_task *reader = starpu_task_create();
	reader->cl = &read_cl;
	reader->handles[0] = h;
	reader->detach = 0;
	ASSERT_EQ(starpu_task_submit(reader), 0);
	starpu_data_release_to(h, STARPU_R);
	ASSERT_EQ(starpu_task_wait(reader), 0);
	EXPECT_EQ(reads_done, 1);
	// A write submitted now waits for the program's read: still waiting after a second read ran.
	ASSERT_EQ(submit_on_handle(&write_cl, h), 0);
	struct starpu_task *late_reader = starpu_task_create();
	late_reader->cl = &read_cl;
	late_reader->handles[0] = h;
	late_reader->detach = 0;
	ASSERT_EQ(starpu_task_submit(late_reader), 0);
	EXPECT_EQ(writes_done, 0);
	starpu_data_release(h);
	ASSERT_EQ(starpu_task_wait(late_reader), 0);
	EXPECT_EQ(writes_done, 1) << "the read submitted after the write runs after it";
	EXPECT_EQ(reads_done, 2);
}

TEST_F(DataApi, ReleaseToLetsReadsGoOn)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	// Granted at once on a free handle, then with a task before it.
	ASSERT_EQ(starpu_data_acquire(h, STARPU_RW), 0);
	reads_go_on_after_release_to(h);
	ASSERT_EQ(submit_on_handle(&write_cl, h), 0);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_W), 0);
	reads_go_on_after_release_to(h);
	starpu_task_wait_for_all();
	// Lowered before any task came: a read submitted then runs at once.
	ASSERT_EQ(starpu_data_acquire(h, STARPU_W), 0);
	starpu_data_release_to(h, STARPU_R);
	struct starpu_task *reader = starpu_task_create();
	reader->cl = &read_cl;
	reader->handles[0] = h;
	reader->detach = 0;
	ASSERT_EQ(starpu_task_submit(reader), 0);
	ASSERT_EQ(starpu_task_wait(reader), 0);
	starpu_data_release(h);
	// Its own mode keeps it, STARPU_NONE releases it.
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	std::string err = stderr_of([&] {
		starpu_data_release_to(h, STARPU_R);
		starpu_data_release_to(h, STARPU_NONE);
	});
	EXPECT_EQ(err, "");
	EXPECT_EQ(starpu_data_acquire_try(h, STARPU_W), 0) << "released";
	starpu_data_release(h);
	starpu_data_unregister(h);
}

TEST_F(DataApi, ReleaseToBadInput)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	std::string err = stderr_of([&] { starpu_data_release_to(h, STARPU_R); });
	EXPECT_TRUE(contains(err, "starpu_data_release_to: the handle is not acquired")) << err;
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	err = stderr_of([&] { starpu_data_release_to(h, STARPU_W); });
	EXPECT_TRUE(contains(err, "starpu_data_release_to: an acquire in mode 0x1 cannot go to mode 0x2")) << err;
	starpu_data_release(h);
	err = stderr_of([&] { starpu_data_release_to(nullptr, STARPU_R); });
	EXPECT_TRUE(contains(err, "starpu_data_release_to: NULL handle")) << err;
	starpu_data_unregister(h);
}

// The read-only copy keeps the value it was made with; writing it is refused.
TEST_F(DataApi, DupRoKeepsTheValueOfItsTime)
{
	std::vector<int> v(4, 3);
	starpu_data_handle_t h, ro = nullptr;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), v.size(), sizeof(int));
	ASSERT_EQ(submit_on_handle(&add_cl, h, (void *)(intptr_t)1), 0);
	ASSERT_EQ(starpu_data_dup_ro(&ro, h, 1), 0);
	ASSERT_NE(ro, nullptr);
	ASSERT_EQ(submit_on_handle(&add_cl, h, (void *)(intptr_t)10), 0);
	ASSERT_EQ(starpu_data_acquire(ro, STARPU_R), 0);
	const int *copy = (const int *)starpu_vector_get_local_ptr(ro);
	for (unsigned i = 0; i < v.size(); i++)
		EXPECT_EQ(copy[i], 4) << i;
	starpu_data_release(ro);
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_data_acquire(ro, STARPU_RW), -EINVAL); });
	EXPECT_TRUE(contains(err, "read-only copy (starpu_data_dup_ro)")) << err;
	starpu_data_unregister(ro);
	starpu_data_unregister(h);
	EXPECT_EQ(v[0], 14);
	err = stderr_of([&] {
		EXPECT_EQ(starpu_data_dup_ro(nullptr, h, 0), -EINVAL);
		EXPECT_EQ(starpu_data_dup_ro(&ro, nullptr, 0), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "starpu_data_dup_ro: NULL dst_handle")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_dup_ro: NULL handle")) << err;
	EXPECT_EQ(ro, nullptr);
}

TEST_F(DataApi, MemoryGetUsedCountsCountedAllocations)
{
	size_t before = starpu_memory_get_used(STARPU_MAIN_RAM);
	void *p = nullptr;
	ASSERT_EQ(starpu_malloc_flags(&p, 1 << 20, STARPU_MALLOC_COUNT), 0);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before + (1 << 20));
	EXPECT_GE(starpu_memory_get_used_all_nodes(), before + (1 << 20));
	starpu_free_flags(p, 1 << 20, STARPU_MALLOC_COUNT);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before);
	std::string err = stderr_of([] { EXPECT_EQ(starpu_memory_get_used(99), 0u); });
	EXPECT_TRUE(contains(err, "starpu_memory_get_used: no memory node 99")) << err;
}

// starpu_malloc_on_node_set_default_flags (issue 40): the flags of starpu_malloc_on_node(), as
// in StarPU PINNED|COUNT after starpu_init(). Without STARPU_MALLOC_COUNT nothing is counted, a
// registered handle's buffer neither; the flags given to _flags() are honoured the same way;
// a node that does not exist or bits that are no flag change nothing and are said.
TEST_F(DataApi, MallocOnNodeDefaultFlagsDecideWhatIsCounted)
{
	const size_t size = 1 << 20;
	size_t before = starpu_memory_get_used(STARPU_MAIN_RAM);
	uintptr_t a = starpu_malloc_on_node(STARPU_MAIN_RAM, size);
	ASSERT_NE(a, 0u);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before + size) << "counted by default";
	starpu_free_on_node(STARPU_MAIN_RAM, a, size);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before);

	uintptr_t b = starpu_malloc_on_node_flags(STARPU_MAIN_RAM, size, 0);
	ASSERT_NE(b, 0u);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before) << "STARPU_MALLOC_COUNT not given";
	starpu_free_on_node_flags(STARPU_MAIN_RAM, b, size, 0);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before);

	starpu_malloc_on_node_set_default_flags(STARPU_MAIN_RAM, STARPU_MALLOC_PINNED);
	a = starpu_malloc_on_node(STARPU_MAIN_RAM, size);
	ASSERT_NE(a, 0u);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before) << "the default flags lost STARPU_MALLOC_COUNT";
	starpu_free_on_node(STARPU_MAIN_RAM, a, size);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before);
	// The runtime's own buffers follow the node's flags too.
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, -1, 0, size, 1);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_W), 0);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before);
	starpu_data_release(h);
	starpu_data_unregister(h);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before);

	starpu_malloc_on_node_set_default_flags(STARPU_MAIN_RAM, STARPU_MALLOC_PINNED | STARPU_MALLOC_COUNT);
	starpu_vector_data_register(&h, -1, 0, size, 1);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_W), 0);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before + size) << "counted again";
	starpu_data_release(h);
	starpu_data_unregister(h);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before);

	std::string err = stderr_of([] { starpu_malloc_on_node_set_default_flags(99, STARPU_MALLOC_COUNT); });
	EXPECT_TRUE(contains(err, "starpu_malloc_on_node_set_default_flags: no memory node 99")) << err;
	err = stderr_of([] { starpu_malloc_on_node_set_default_flags(STARPU_MAIN_RAM, 1 << 20); });
	EXPECT_TRUE(contains(err, "no STARPU_MALLOC_* flag: nothing changed")) << err;
	a = starpu_malloc_on_node(STARPU_MAIN_RAM, size);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before + size) << "a refused call changed the flags";
	// Freeing on a node that does not exist frees nothing, counts nothing off, and says so.
	err = stderr_of([a] { starpu_free_on_node(99, a, size); });
	EXPECT_TRUE(contains(err, "starpu_free_on_node: no memory node 99")) << err;
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before + size);
	starpu_free_on_node(STARPU_MAIN_RAM, a, size);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), before);
	starpu_shutdown();
	err = stderr_of([] { starpu_malloc_on_node_set_default_flags(STARPU_MAIN_RAM, 0); });
	EXPECT_TRUE(contains(err, "call it after starpu_init()")) << err;
}

void touch_nothing(void **, void *) {}

// Counted allocations (STARPU_MALLOC_COUNT) respect STARPU_LIMIT_CPU_NUMA_MEM as in
// StarPU: with 99 MiB of data there under a 100 MiB limit, 99 MiB more is refused
// (-ENOMEM, twice), unless told to overflow (STARPU_MALLOC_NORECLAIM, or
// STARPU_MEMORY_OVERFLOW); uncounted allocations are not limited; once the data is
// gone, the same counted allocation is granted.
TEST(DataApiLimit, CountedAllocationsRespectTheMemoryLimit)
{
	ScopedEnv limit("STARPU_LIMIT_CPU_NUMA_MEM", "100");
	ASSERT_EQ(init_with_ncpus(1), 0);
	const size_t mib99 = (size_t)99 << 20;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, -1, 0, mib99, 1);
	starpu_codelet cl = cpu_codelet(touch_nothing, 1, "allocate");
	cl.modes[0] = STARPU_W;
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_W, h, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_GE(starpu_memory_get_used(STARPU_MAIN_RAM), mib99);
	size_t used = starpu_memory_get_used(STARPU_MAIN_RAM);

	void *p = (void *)1, *q = (void *)1;
	EXPECT_EQ(starpu_malloc_flags(&p, mib99, STARPU_MALLOC_COUNT), -ENOMEM);
	EXPECT_EQ(p, nullptr);
	EXPECT_EQ(starpu_malloc_flags(&q, mib99, STARPU_MALLOC_COUNT), -ENOMEM);
	EXPECT_EQ(q, nullptr);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used);
	// Told to overflow: counted beyond the limit.
	ASSERT_EQ(starpu_malloc_flags(&p, mib99, STARPU_MALLOC_COUNT | STARPU_MALLOC_NORECLAIM), 0);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used + mib99);
	starpu_free_flags(p, mib99, STARPU_MALLOC_COUNT | STARPU_MALLOC_NORECLAIM);
	ASSERT_EQ(starpu_malloc_flags(&p, mib99, STARPU_MALLOC_COUNT | STARPU_MEMORY_OVERFLOW), 0);
	starpu_free_flags(p, mib99, STARPU_MALLOC_COUNT);
	// Never fits: waiting would not help.
	EXPECT_EQ(starpu_malloc_flags(&p, (size_t)101 << 20, STARPU_MALLOC_COUNT | STARPU_MEMORY_WAIT), -ENOMEM);
	// Not counted: not limited.
	ASSERT_EQ(starpu_malloc_flags(&p, mib99, 0), 0);
	starpu_free_flags(p, mib99, 0);

	starpu_data_unregister(h);
	ASSERT_EQ(starpu_malloc_flags(&p, mib99, STARPU_MALLOC_COUNT), 0);
	starpu_free_flags(p, mib99, STARPU_MALLOC_COUNT);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), 0u);
	starpu_shutdown();
}

// The program's own accounting (starpu_memory_allocate and co., issue 40) under a 10 MiB
// limit: counted without eviction, refused beyond the limit unless told to overflow,
// waited for with STARPU_MEMORY_WAIT until a deallocation makes room.
TEST(DataApiLimit, MemoryAllocateAccountsUnderTheLimit)
{
	ScopedEnv limit("STARPU_LIMIT_CPU_NUMA_MEM", "10");
	ASSERT_EQ(init_with_ncpus(1), 0);
	const size_t mib6 = (size_t)6 << 20, mib3 = (size_t)3 << 20;
	size_t used = starpu_memory_get_used(STARPU_MAIN_RAM);
	starpu_ssize_t available = starpu_memory_get_available(STARPU_MAIN_RAM);
	ASSERT_GE(available, (starpu_ssize_t)mib6);
	EXPECT_EQ(starpu_memory_allocate(STARPU_MAIN_RAM, mib6, 0), 0);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used + mib6);
	EXPECT_EQ(starpu_memory_get_available(STARPU_MAIN_RAM), available - (starpu_ssize_t)mib6);
	EXPECT_EQ(starpu_memory_allocate(STARPU_MAIN_RAM, mib6, 0), -ENOMEM);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used + mib6);
	// Told to overflow: counted beyond the limit; given back in pieces.
	EXPECT_EQ(starpu_memory_allocate(STARPU_MAIN_RAM, mib6, STARPU_MEMORY_OVERFLOW), 0);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used + 2 * mib6);
	EXPECT_EQ(starpu_memory_get_available(STARPU_MAIN_RAM), 0);
	starpu_memory_deallocate(STARPU_MAIN_RAM, mib3);
	starpu_memory_deallocate(STARPU_MAIN_RAM, mib3);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used + mib6);

	// Waits until a deallocation makes room, then counts it at once.
	std::atomic<int> result{1};
	std::thread waiter([&] { result = starpu_memory_allocate(STARPU_MAIN_RAM, mib6, STARPU_MEMORY_WAIT); });
	starpu_usleep(20000);
	EXPECT_EQ(result.load(), 1) << "granted while the 6 MiB counted left only 4";
	starpu_memory_deallocate(STARPU_MAIN_RAM, mib6);
	waiter.join();
	EXPECT_EQ(result.load(), 0);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used + mib6);

	// starpu_memory_wait_available: waits for the room, counts nothing.
	std::atomic<bool> available_now{false};
	std::thread watcher([&] {
		starpu_memory_wait_available(STARPU_MAIN_RAM, mib6);
		available_now = true;
	});
	starpu_usleep(20000);
	EXPECT_FALSE(available_now.load());
	starpu_memory_deallocate(STARPU_MAIN_RAM, mib6);
	watcher.join();
	EXPECT_TRUE(available_now.load());
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used);
	starpu_memory_wait_available(STARPU_MAIN_RAM, mib6); // there now: returns at once

	// What can never fit is refused rather than waited for forever.
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_memory_allocate(STARPU_MAIN_RAM, (size_t)11 << 20, STARPU_MEMORY_WAIT), -ENOMEM);
		starpu_memory_wait_available(STARPU_MAIN_RAM, (size_t)11 << 20);
	});
	EXPECT_TRUE(contains(err, "starpu_memory_allocate: 11534336 bytes never fit on memory node 0")) << err;
	EXPECT_TRUE(contains(err, "starpu_memory_wait_available: 11534336 bytes never fit on memory node 0")) << err;
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used);
	starpu_shutdown();
}

// Without a limit every allocation is counted; bad nodes and too large deallocations are said.
TEST_F(DataApi, MemoryAllocateWithoutALimitAndBadInput)
{
	size_t used = starpu_memory_get_used(STARPU_MAIN_RAM);
	EXPECT_EQ(starpu_memory_allocate(STARPU_MAIN_RAM, (size_t)1 << 40, 0), 0);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used + ((size_t)1 << 40));
	starpu_memory_wait_available(STARPU_MAIN_RAM, (size_t)1 << 50); // no limit: nothing to wait for
	starpu_memory_deallocate(STARPU_MAIN_RAM, (size_t)1 << 40);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used);
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_memory_allocate(99, 10, 0), -EINVAL);
		starpu_memory_deallocate(99, 10);
		starpu_memory_wait_available(99, 10);
		starpu_memory_deallocate(STARPU_MAIN_RAM, used + 10);
	});
	EXPECT_TRUE(contains(err, "starpu_memory_allocate: no memory node 99")) << err;
	EXPECT_TRUE(contains(err, "starpu_memory_deallocate: no memory node 99")) << err;
	EXPECT_TRUE(contains(err, "starpu_memory_wait_available: no memory node 99")) << err;
	EXPECT_TRUE(contains(err, "starpu_memory_deallocate: " + std::to_string(used + 10) + " bytes given back on memory node 0")) << err;
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), 0u);
	// The deprecated names are the current functions.
	void *p = nullptr;
	ASSERT_EQ(starpu_data_malloc_pinned_if_possible(&p, 64), 0);
	EXPECT_NE(p, nullptr);
	EXPECT_EQ(starpu_data_free_pinned_if_possible(p), 0);
}

// A policy's pointer on a handle, apart from the application's (issue 40).
TEST_F(DataApi, SchedDataIsApartFromUserData)
{
	int x = 0, policy = 0, app = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	EXPECT_EQ(starpu_data_get_sched_data(h), nullptr);
	starpu_data_set_sched_data(h, &policy);
	starpu_data_set_user_data(h, &app);
	EXPECT_EQ(starpu_data_get_sched_data(h), &policy);
	EXPECT_EQ(starpu_data_get_user_data(h), &app);
	starpu_data_unregister(h);
	std::string err = stderr_of([&] {
		starpu_data_set_sched_data(nullptr, &policy);
		EXPECT_EQ(starpu_data_get_sched_data(nullptr), nullptr);
	});
	EXPECT_TRUE(contains(err, "starpu_data_set_sched_data: NULL handle")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_get_sched_data: NULL handle")) << err;
}

// The data with a buffer in main memory, whether valid there; an invalidated handle is listed, not valid.
TEST_F(DataApi, GetNodeDataListsTheBuffersOfANode)
{
	int a = 1, b = 2;
	starpu_data_handle_t ha, hb, hc;
	starpu_variable_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)&a, sizeof(a));
	starpu_variable_data_register(&hb, STARPU_MAIN_RAM, (uintptr_t)&b, sizeof(b));
	starpu_variable_data_register(&hc, -1, 0, sizeof(int)); // no buffer anywhere yet
	starpu_data_invalidate(hb);
	starpu_data_handle_t *handles = nullptr;
	int *valid = nullptr;
	unsigned n = 99;
	starpu_data_get_node_data(STARPU_MAIN_RAM, &handles, &valid, &n);
	ASSERT_EQ(n, 2u);
	std::map<starpu_data_handle_t, int> listed;
	for (unsigned i = 0; i < n; i++)
		listed[handles[i]] = valid[i];
	free(handles);
	free(valid);
	EXPECT_EQ(listed.count(hc), 0u);
	EXPECT_EQ(listed[ha], 1);
	EXPECT_EQ(listed[hb], 0);
	starpu_data_unregister(ha);
	starpu_data_unregister(hb);
	starpu_data_unregister(hc);
	starpu_data_get_node_data(STARPU_MAIN_RAM, &handles, &valid, &n);
	EXPECT_EQ(n, 0u);
	free(handles);
	free(valid);
	std::string err = stderr_of([&] {
		starpu_data_get_node_data(99, &handles, &valid, &n);
		starpu_data_get_node_data(STARPU_MAIN_RAM, nullptr, &valid, &n);
	});
	EXPECT_EQ(n, 0u);
	EXPECT_EQ(handles, nullptr);
	EXPECT_TRUE(contains(err, "starpu_data_get_node_data: no memory node 99")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_get_node_data: NULL handles")) << err;
}

void release_in_callback(void *arg)
{
	starpu_data_handle_t h = (starpu_data_handle_t)arg;
	starpu_data_release_on_node(h, STARPU_MAIN_RAM);
}

std::atomic<int> slow_runs{0};
void slow_increment(void **buffers, void *)
{
	starpu_usleep(50000);
	(*(int *)STARPU_VARIABLE_GET_PTR(buffers[0]))++;
	slow_runs++;
}

// The on-node forms of acquire_try and of the acquire without sequential consistency (issue 40).
TEST_F(DataApi, AcquireOnNodeTryAndWithoutConsistency)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	ASSERT_EQ(starpu_data_acquire_on_node_try(h, STARPU_MAIN_RAM, STARPU_RW), 0);
	EXPECT_EQ(starpu_data_acquire_on_node_try(h, STARPU_MAIN_RAM, STARPU_R), -EAGAIN) << "held for writing";
	starpu_data_release_on_node(h, STARPU_MAIN_RAM);
	starpu_codelet cl = cpu_codelet(slow_increment, 1, "slow");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, 0), 0);
	EXPECT_EQ(starpu_data_acquire_on_node_try(h, STARPU_MAIN_RAM, STARPU_R), -EAGAIN) << "a task before it is not done";
	// Without sequential consistency the acquire does not wait for the task (its callback may run before it ends).
	std::atomic<int> called{0};
	struct Arg { starpu_data_handle_t h; std::atomic<int> *called; } arg = { h, &called };
	ASSERT_EQ(starpu_data_acquire_on_node_cb_sequential_consistency(h, STARPU_MAIN_RAM, STARPU_R, [](void *p) {
		Arg *a = (Arg *)p;
		(*a->called)++;
		starpu_data_release_on_node(a->h, STARPU_MAIN_RAM);
	}, &arg, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_TRUE(wait_until([&] { return called.load() == 1; }));
	// With it, the callback comes after the task.
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, 0), 0);
	std::atomic<int> runs_seen{-1};
	struct Arg2 { starpu_data_handle_t h; std::atomic<int> *seen; } arg2 = { h, &runs_seen };
	ASSERT_EQ(starpu_data_acquire_on_node_cb_sequential_consistency(h, STARPU_MAIN_RAM, STARPU_R, [](void *p) {
		Arg2 *a = (Arg2 *)p;
		*a->seen = slow_runs.load();
		starpu_data_release_on_node(a->h, STARPU_MAIN_RAM);
	}, &arg2, 1), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_TRUE(wait_until([&] { return runs_seen.load() >= 0; }));
	EXPECT_EQ(runs_seen.load(), slow_runs.load()) << "the callback ran before the task it follows";
	starpu_data_unregister(h);
	EXPECT_EQ(x, 2);
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_data_acquire_on_node_try(nullptr, STARPU_MAIN_RAM, STARPU_R), -EINVAL);
		EXPECT_EQ(starpu_data_acquire_on_node_cb_sequential_consistency(nullptr, STARPU_MAIN_RAM, STARPU_R, release_in_callback, nullptr, 1), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "starpu_data_acquire_on_node_try: NULL handle")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_acquire_on_node_cb_sequential_consistency: NULL handle")) << err;
}

// With main memory only: a valid copy counts, nothing is mapped; bad input is said.
TEST_F(DataApi, IsOnNodeExcludingPrefetchAndMappedBadInput)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	EXPECT_EQ(starpu_data_is_on_node_excluding_prefetch(h, STARPU_MAIN_RAM), 1u);
	EXPECT_EQ(starpu_data_test_if_mapped_on_node(h, STARPU_MAIN_RAM), 0u);
	starpu_data_invalidate(h);
	EXPECT_EQ(starpu_data_is_on_node_excluding_prefetch(h, STARPU_MAIN_RAM), 0u);
	starpu_memchunk_tidy(STARPU_MAIN_RAM);
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_data_is_on_node_excluding_prefetch(h, 99), 0u);
		EXPECT_EQ(starpu_data_is_on_node_excluding_prefetch(nullptr, STARPU_MAIN_RAM), 0u);
		EXPECT_EQ(starpu_data_test_if_mapped_on_node(h, 99), 0u);
		starpu_memchunk_tidy(99);
	});
	EXPECT_TRUE(contains(err, "starpu_data_is_on_node_excluding_prefetch: no memory node 99")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_is_on_node_excluding_prefetch: NULL handle")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_test_if_mapped_on_node: no memory node 99")) << err;
	EXPECT_TRUE(contains(err, "starpu_memchunk_tidy: no memory node 99")) << err;
	starpu_data_unregister(h);
}

// starpu_interface_copynd (issue 40): a 3-dimensional sub-block copied between two layouts.
TEST_F(DataApi, InterfaceCopyndCopiesASubBlock)
{
	// Source 4 x 3 x 2 ints (ld 4, 12), destination 5 x 4 x 2 (ld 5, 20); the 3 x 2 x 2 block at the origin.
	std::vector<int> src(4 * 3 * 2), dst(5 * 4 * 2, -1);
	for (size_t i = 0; i < src.size(); i++)
		src[i] = (int)i;
	uint32_t nn[3] = { 3, 2, 2 }, ldn_src[3] = { 1, 4, 12 }, ldn_dst[3] = { 1, 5, 20 };
	ASSERT_EQ(starpu_interface_copynd((uintptr_t)src.data(), 0, STARPU_MAIN_RAM, (uintptr_t)dst.data(), 0, STARPU_MAIN_RAM, sizeof(int), 3, nn,
					  ldn_src, ldn_dst, NULL), 0);
	for (unsigned z = 0; z < 2; z++)
		for (unsigned y = 0; y < 4; y++)
			for (unsigned x = 0; x < 5; x++) {
				int expected = x < 3 && y < 2 ? src[x + 4 * y + 12 * z] : -1;
				ASSERT_EQ(dst[x + 5 * y + 20 * z], expected) << x << "," << y << "," << z;
			}
	// One dimension: contiguous; none: one element.
	std::vector<int> one(3, 0);
	ASSERT_EQ(starpu_interface_copynd((uintptr_t)src.data(), 4, STARPU_MAIN_RAM, (uintptr_t)one.data(), 0, STARPU_MAIN_RAM, sizeof(int), 1, nn,
					  nullptr, nullptr, NULL), 0);
	EXPECT_EQ(one, (std::vector<int>{ 1, 2, 3 }));
	ASSERT_EQ(starpu_interface_copynd((uintptr_t)src.data(), 20, STARPU_MAIN_RAM, (uintptr_t)one.data(), 0, STARPU_MAIN_RAM, sizeof(int), 0,
					  nullptr, nullptr, nullptr, NULL), 0);
	EXPECT_EQ(one[0], 5);
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_interface_copynd((uintptr_t)src.data(), 0, STARPU_MAIN_RAM, (uintptr_t)dst.data(), 0, STARPU_MAIN_RAM, sizeof(int), 2,
						  nn, nullptr, ldn_dst, NULL), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "starpu_interface_copynd: NULL ldn_src")) << err;
}

// starpu_data_print (issue 40) and the interfaces' SET macros.
TEST_F(DataApi, DataPrintAndInterfaceSetMacros)
{
	std::vector<float> v(10);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), 10, sizeof(float));
	starpu_data_set_name(h, "v");
	char *text = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	starpu_data_print(h, STARPU_MAIN_RAM, f);
	fclose(f);
	EXPECT_STREQ(text, "STARPU_VECTOR_INTERFACE v (40 bytes) on NUMA 0: valid\n");
	free(text);
	std::string err = stderr_of([&] {
		starpu_data_print(h, 99, stdout);
		starpu_data_print(nullptr, STARPU_MAIN_RAM, stdout);
	});
	EXPECT_TRUE(contains(err, "starpu_data_print: no memory node 99")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_print: NULL handle")) << err;
	starpu_data_unregister(h);

	starpu_vector_interface vi = {};
	STARPU_VECTOR_SET_NX(&vi, 7);
	EXPECT_EQ(STARPU_VECTOR_GET_NX(&vi), 7u);
	starpu_matrix_interface mi = {};
	STARPU_MATRIX_SET_NX(&mi, 3);
	STARPU_MATRIX_SET_NY(&mi, 4);
	STARPU_MATRIX_SET_LD(&mi, 5);
	EXPECT_EQ(STARPU_MATRIX_GET_NX(&mi), 3u);
	EXPECT_EQ(STARPU_MATRIX_GET_NY(&mi), 4u);
	EXPECT_EQ(STARPU_MATRIX_GET_LD(&mi), 5u);
}

std::atomic<int> hook_mallocs{0}, hook_frees{0};

int counting_malloc(unsigned node, void **A, size_t dim, int flags)
{
	(void)flags;
	EXPECT_EQ(node, (unsigned)STARPU_MAIN_RAM);
	hook_mallocs++;
	*A = malloc(dim ? dim : 1);
	return *A ? 0 : -ENOMEM;
}

int counting_free(unsigned node, void *A, size_t dim, int flags)
{
	(void)node, (void)dim, (void)flags;
	hook_frees++;
	free(A);
	return 0;
}

// The program's allocation functions serve starpu_malloc() and the runtime's own data buffers.
TEST_F(DataApi, MallocHooksServeTheRuntimesAllocations)
{
	hook_mallocs = hook_frees = 0;
	starpu_malloc_set_hooks(counting_malloc, counting_free);
	void *p = nullptr;
	ASSERT_EQ(starpu_malloc(&p, 100), 0);
	EXPECT_EQ(hook_mallocs, 1);
	starpu_free_noflag(p, 100);
	EXPECT_EQ(hook_frees, 1);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, -1, 0, 16, sizeof(int));
	ASSERT_EQ(submit_on_handle(&set_cl, h, (void *)(intptr_t)2), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(hook_mallocs, 2) << "the buffer of data registered on no node";
	starpu_data_unregister(h);
	EXPECT_EQ(hook_frees, 2);
	std::string err = stderr_of([] { starpu_malloc_set_hooks(counting_malloc, nullptr); });
	EXPECT_TRUE(contains(err, "starpu_malloc_set_hooks: only the malloc hook is given")) << err;
	starpu_malloc_set_hooks(nullptr, nullptr);
	ASSERT_EQ(starpu_malloc(&p, 100), 0);
	starpu_free_noflag(p, 100);
	EXPECT_EQ(hook_mallocs, 2) << "back to the runtime's own";
	EXPECT_EQ(hook_frees, 2);
}

TEST(DataApiSeed, SeedFromTheEnvironment)
{
	unsetenv("STARPU_RAND_SEED");
	EXPECT_EQ(starpu_seed(3), 3);
	setenv("STARPU_RAND_SEED", "7", 1);
	EXPECT_EQ(starpu_seed(3), 7);
	starpu_srand48(3);
	long first = starpu_lrand48();
	srand48(7);
	EXPECT_EQ(first, lrand48()) << "starpu_srand48 seeds with starpu_seed";
	unsetenv("STARPU_RAND_SEED");
}

} // namespace

// ---------------------------------------------------------------- map helpers, an interface's own async copies

// Between memories the CPU addresses, a map is the address itself; unmap and update_map follow it.
TEST_F(DataApi, InterfaceMapBetweenCpuMemories)
{
	char buf[64] = "mapped";
	int ret = -1;
	uintptr_t m = starpu_interface_map((uintptr_t)buf, 2, STARPU_MAIN_RAM, STARPU_MAIN_RAM, 4, &ret);
	EXPECT_EQ(ret, 0);
	EXPECT_EQ(m, (uintptr_t)buf + 2);
	EXPECT_EQ(starpu_interface_update_map((uintptr_t)buf, 2, STARPU_MAIN_RAM, m, 0, STARPU_MAIN_RAM, 4), 0);
	EXPECT_STREQ(buf, "mapped");
	// update_map of a copy elsewhere brings it up to date.
	char other[8] = {0};
	EXPECT_EQ(starpu_interface_update_map((uintptr_t)buf, 0, STARPU_MAIN_RAM, (uintptr_t)other, 1, STARPU_MAIN_RAM, 3), 0);
	EXPECT_EQ(std::string(other + 1, 3), "map");
	EXPECT_EQ(starpu_interface_unmap((uintptr_t)buf, 2, STARPU_MAIN_RAM, m, STARPU_MAIN_RAM, 4), 0);
}

// Bad nodes and an unmap of what was not mapped are refused with a message.
TEST_F(DataApi, InterfaceMapBadInput)
{
	char buf[8];
	int ret = 0;
	testing::internal::CaptureStderr();
	EXPECT_EQ(starpu_interface_map((uintptr_t)buf, 0, STARPU_MAIN_RAM, STARPU_MAXNODES + 3, 8, &ret), 0u);
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_EQ(starpu_interface_unmap((uintptr_t)buf, 0, STARPU_MAIN_RAM, (uintptr_t)buf + 1, STARPU_MAIN_RAM, 8), -EINVAL);
	EXPECT_EQ(starpu_interface_update_map((uintptr_t)buf, 0, 999, (uintptr_t)buf, 0, STARPU_MAIN_RAM, 8), -EINVAL);
	double start = 1.0;
	starpu_interface_start_driver_copy_async(999, STARPU_MAIN_RAM, &start);
	EXPECT_EQ(start, 0.0);
	starpu_interface_start_driver_copy_async(STARPU_MAIN_RAM, STARPU_MAIN_RAM, nullptr);
	std::string err = testing::internal::GetCapturedStderr();
	EXPECT_NE(err.find("starpu_interface_map: no memory node"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_interface_unmap: 0x"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_interface_update_map: no memory node 999"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_interface_start_driver_copy_async: no memory node 999"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_interface_start_driver_copy_async: NULL start"), std::string::npos) << err;
}

// A submission that took long is said once; a quick one is not.
TEST_F(DataApi, DriverCopyAsyncSaysASlowSubmissionOnce)
{
	testing::internal::CaptureStderr();
	double start;
	starpu_interface_start_driver_copy_async(STARPU_MAIN_RAM, STARPU_MAIN_RAM, &start);
	EXPECT_GT(start, 0.0);
	EXPECT_LE(start, starpu_timing_now());
	// Pretend the submission began a second ago (no sleeping: the test does not depend on timing).
	starpu_interface_end_driver_copy_async(STARPU_MAIN_RAM, STARPU_MAIN_RAM, start - 1e6);
	starpu_interface_end_driver_copy_async(STARPU_MAIN_RAM, STARPU_MAIN_RAM, start - 1e6);
	std::string err = testing::internal::GetCapturedStderr();
	size_t first = err.find("submitting an asynchronous transfer from");
	EXPECT_NE(first, std::string::npos) << err;
	EXPECT_EQ(err.find("submitting an asynchronous transfer from", first + 1), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_memory_pin()"), std::string::npos) << err;
}

namespace {

// Issue 40: the copy calls are declared in <starpu_data_interfaces.h> as in StarPU 1.4 (a C file
// that includes only that header calls them), and StarPU 1.4's other headers exist and compile
// alone, <starpu_task_dep.h> with the dependency calls.
TEST_F(DataApi, HeadersStarPUInstallsCompileAlone)
{
	std::vector<int> src(16), d1(16, -1), d2(16, -1), d3(16, -1), d4(16, -1);
	for (int i = 0; i < 16; i++)
		src[i] = i * 3;
	ASSERT_EQ(astro_alone_interface_copies(src.data(), d1.data(), d2.data(), d3.data(), d4.data()), 0);
	EXPECT_EQ(d1, src);
	EXPECT_EQ(d2, src);
	EXPECT_EQ(d3, src);
	EXPECT_EQ(d4, src);
	EXPECT_EQ(astro_alone_tag_chain(0x7100, 0x7101), 0);
	EXPECT_EQ(astro_alone_helper_max(), 4);
}

// starpu_get_pu_os_index and starpu_display_bindings (StarPU 1.4's starpu_helper.h).
TEST_F(DataApi, PuOsIndexAndBindings)
{
	unsigned nworkers = starpu_worker_get_count();
	EXPECT_GE(starpu_get_pu_os_index(0), 0);
	int bindid = starpu_worker_get_bindid(0);
	hwloc_obj_t pu = starpu_worker_get_hwloc_obj(0);
	if (bindid >= 0 && pu) {
		EXPECT_EQ(starpu_get_pu_os_index((unsigned)bindid), (int)pu->os_index) << "worker 0's unit";
	}
	testing::internal::CaptureStdout();
	starpu_display_bindings();
	std::string out = testing::internal::GetCapturedStdout();
	EXPECT_EQ(lines_of(out).size(), (size_t)nworkers) << out << "one line per worker";
	EXPECT_TRUE(contains(out, "worker 0 (")) << out;
	std::string err = stderr_of([] { EXPECT_EQ(starpu_get_pu_os_index(100000), -1); });
	EXPECT_TRUE(contains(err, "starpu_get_pu_os_index: no processing unit 100000")) << err;
	starpu_shutdown();
	err = stderr_of([] {
		EXPECT_EQ(starpu_get_pu_os_index(0), -1);
		starpu_display_bindings();
	});
	EXPECT_TRUE(contains(err, "starpu_get_pu_os_index: StarPU is not initialised")) << err;
	EXPECT_TRUE(contains(err, "starpu_display_bindings: StarPU is not initialised")) << err;
}

// starpu_data_request_allocation without a device (issue 40): with main memory only there is no
// transfer thread, the buffer of data registered on no node is made at once, counted there.
TEST_F(DataApi, RequestAllocationInMainMemory)
{
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, -1, 0, 4096, sizeof(int));
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(h, STARPU_MAIN_RAM), 0u);
	size_t used = starpu_memory_get_used(STARPU_MAIN_RAM);
	ASSERT_EQ(starpu_data_request_allocation(h, STARPU_MAIN_RAM), 0);
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(h, STARPU_MAIN_RAM), 1u);
	EXPECT_EQ(starpu_memory_get_used(STARPU_MAIN_RAM), used + 4096 * sizeof(int));
	ASSERT_EQ(submit_on_handle(&add_cl, h, (void *)(intptr_t)1), 0);
	starpu_data_unregister(h);
	std::string err = stderr_of([] { EXPECT_EQ(starpu_data_request_allocation(nullptr, STARPU_MAIN_RAM), -EINVAL); });
	EXPECT_TRUE(contains(err, "starpu_data_request_allocation: NULL handle")) << err;
}

} // namespace
