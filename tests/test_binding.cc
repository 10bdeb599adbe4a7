// SPDX-License-Identifier: LGPL-2.1-or-later
// Where threads run: the workers' cpusets (starpu_worker_get_hwloc_cpuset)
// and units for the program's own threads (starpu_get_next_bindid,
// starpu_bind_thread_on, STARPU_THREAD_ACTIVE), and binding a thread where a
// unit, a worker or the main thread runs (starpu_bind_thread_on_cpu, _worker,
// _main).
#include "helpers.h"

#include <hwloc.h>
#include <sched.h>
#include <thread>

using namespace astro_test;

namespace {

unsigned machine_pus()
{
	hwloc_topology_t topo;
	hwloc_topology_init(&topo);
	hwloc_topology_load(topo);
	unsigned n = (unsigned)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	hwloc_topology_destroy(topo);
	return n;
}

// The OS index of processing unit logical index pu.
int os_index_of(unsigned pu)
{
	hwloc_topology_t topo;
	hwloc_topology_init(&topo);
	hwloc_topology_load(topo);
	hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, pu);
	int os = obj ? (int)obj->os_index : -1;
	hwloc_topology_destroy(topo);
	return os;
}

class Binding : public ::testing::Test
{
protected:
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
};

TEST_F(Binding, WorkerCpusetsAreTheirUnitsApart)
{
	ScopedEnv bind("STARPU_WORKERS_NOBIND", nullptr);
	ASSERT_EQ(init_with_ncpus(2), 0);
	hwloc_cpuset_t seen = hwloc_bitmap_alloc();
	for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
		hwloc_cpuset_t set = starpu_worker_get_hwloc_cpuset((int)w);
		ASSERT_NE(set, nullptr);
		EXPECT_FALSE(hwloc_bitmap_iszero(set));
		int bindid = starpu_worker_get_bindid((int)w);
		if (bindid >= 0) {
			EXPECT_EQ(hwloc_bitmap_weight(set), 1) << "one processing unit";
			EXPECT_TRUE(hwloc_bitmap_isset(set, (unsigned)os_index_of((unsigned)bindid)));
			hwloc_obj_t obj = starpu_worker_get_hwloc_obj((int)w);
			ASSERT_NE(obj, nullptr);
			EXPECT_EQ(obj->logical_index, (unsigned)bindid);
			if (machine_pus() >= starpu_worker_get_count())
				EXPECT_FALSE(hwloc_bitmap_intersects(seen, set)) << "two workers on one unit";
		}
		hwloc_bitmap_or(seen, seen, set);
		hwloc_bitmap_free(set);
	}
	hwloc_bitmap_free(seen);
}

TEST_F(Binding, AnUnboundWorkersCpusetIsTheMachine)
{
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", "1");
	ASSERT_EQ(init_with_ncpus(1), 0);
	hwloc_cpuset_t set = starpu_worker_get_hwloc_cpuset(0);
	ASSERT_NE(set, nullptr);
	EXPECT_EQ((unsigned)hwloc_bitmap_weight(set), machine_pus());
	hwloc_bitmap_free(set);
	EXPECT_EQ(starpu_worker_get_hwloc_obj(0), nullptr);
}

TEST_F(Binding, BadWorkerIdsAreSaid)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	std::string err = stderr_of([] { EXPECT_EQ(starpu_worker_get_hwloc_cpuset(5), nullptr); });
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	err = stderr_of([] { EXPECT_EQ(starpu_worker_get_hwloc_cpuset(-1), nullptr); });
	EXPECT_TRUE(contains(err, "no worker -1")) << err;
	err = stderr_of([] { EXPECT_EQ(starpu_worker_get_hwloc_obj(5), nullptr); });
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
}

// StarPU's bind test, on whatever units the machine has: an active thread gets a unit of its own.
TEST_F(Binding, ActiveThreadsGetAUnitOfTheirOwn)
{
	if (machine_pus() < 2)
		GTEST_SKIP() << "one processing unit only";
	ScopedEnv bind("STARPU_WORKERS_NOBIND", nullptr);
	ASSERT_EQ(init_with_ncpus(1), 0);
	int worker_unit = starpu_worker_get_bindid(0);
	unsigned active = starpu_get_next_bindid(STARPU_THREAD_ACTIVE, nullptr, 0);
	EXPECT_NE((int)active, worker_unit);
	unsigned passive1 = starpu_get_next_bindid(0, nullptr, 0);
	unsigned passive2 = starpu_get_next_bindid(0, nullptr, 0);
	EXPECT_NE(passive1, active);
	EXPECT_EQ(passive1, passive2) << "a passive thread reserves nothing";
	if (machine_pus() >= 3) {
		EXPECT_NE((int)passive1, worker_unit);
		EXPECT_NE(starpu_get_next_bindid(STARPU_THREAD_ACTIVE, nullptr, 0), active);
	}
	// A preference is honoured when the unit is free of workers and active threads.
	unsigned preferred[2] = { active, passive1 };
	EXPECT_EQ(starpu_get_next_bindid(0, preferred, 2), passive1);

	int ret = -2;
	cpu_set_t mask;
	CPU_ZERO(&mask);
	std::thread t([&] {
		ret = starpu_bind_thread_on((int)active, STARPU_THREAD_ACTIVE, "active");
		sched_getaffinity(0, sizeof(mask), &mask);
	});
	t.join();
	EXPECT_EQ(ret, 0);
	EXPECT_EQ(CPU_COUNT(&mask), 1);
	EXPECT_TRUE(CPU_ISSET(os_index_of(active), &mask));

	// The same name again is quiet; another active thread there is warned about, and bound all the same.
	std::string err = stderr_of([&] {
		std::thread again([&] { ret = starpu_bind_thread_on((int)active, STARPU_THREAD_ACTIVE, "active"); });
		again.join();
	});
	EXPECT_EQ(ret, 0);
	EXPECT_EQ(err, "");
	err = stderr_of([&] {
		std::thread other([&] { ret = starpu_bind_thread_on((int)active, 0, "other"); });
		other.join();
	});
	EXPECT_EQ(ret, -1);
	EXPECT_TRUE(contains(err, "active")) << err;
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	if (worker_unit >= 0) {
		err = stderr_of([&] {
			std::thread on_worker([&] { ret = starpu_bind_thread_on(worker_unit, STARPU_THREAD_ACTIVE, "busy"); });
			on_worker.join();
		});
		EXPECT_EQ(ret, -1);
		EXPECT_TRUE(contains(err, "worker")) << err;
	}
}

TEST_F(Binding, BadCallsAreSaid)
{
	std::string err = stderr_of([] { EXPECT_EQ(starpu_get_next_bindid(0, nullptr, 0), 0u); });
	EXPECT_TRUE(contains(err, "starpu_init")) << err;
	err = stderr_of([] { EXPECT_EQ(starpu_bind_thread_on(0, 0, "x"), -1); });
	EXPECT_TRUE(contains(err, "starpu_init")) << err;
	ASSERT_EQ(init_with_ncpus(1), 0);
	int ret = 0;
	err = stderr_of([&] {
		std::thread t([&] { ret = starpu_bind_thread_on(100000, 0, "far"); });
		t.join();
	});
	EXPECT_EQ(ret, -1);
	EXPECT_TRUE(contains(err, "does not exist")) << err;
	err = stderr_of([] { starpu_get_next_bindid(0, nullptr, 3); });
	EXPECT_TRUE(contains(err, "preferred is NULL")) << err;
}

// The processing units (OS indexes) the calling thread may run on, as hwloc reads them.
hwloc_bitmap_t my_cpuset()
{
	hwloc_topology_t topo;
	hwloc_topology_init(&topo);
	hwloc_topology_load(topo);
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
	hwloc_topology_destroy(topo);
	return set;
}

// Runs bind in a thread of its own (the test's thread stays where it was), returns where it ran then.
template <typename F> hwloc_bitmap_t cpuset_after(F &&bind)
{
	hwloc_bitmap_t set = nullptr;
	std::thread t([&] {
		bind();
		set = my_cpuset();
	});
	t.join();
	return set;
}

TEST_F(Binding, BindThreadOnCpuWorkerAndMain)
{
	if (machine_pus() < 2)
		GTEST_SKIP() << "one processing unit only";
	ScopedEnv bind("STARPU_WORKERS_NOBIND", nullptr);
	ASSERT_EQ(init_with_ncpus(1), 0);
	unsigned last = machine_pus() - 1;
	hwloc_bitmap_t set = cpuset_after([&] { starpu_bind_thread_on_cpu((int)last); });
	EXPECT_EQ(hwloc_bitmap_weight(set), 1);
	EXPECT_TRUE(hwloc_bitmap_isset(set, (unsigned)os_index_of(last)));
	hwloc_bitmap_free(set);

	hwloc_cpuset_t worker = starpu_worker_get_hwloc_cpuset(0);
	set = cpuset_after([] { starpu_bind_thread_on_worker(0); });
	EXPECT_TRUE(hwloc_bitmap_isequal(set, worker));
	hwloc_bitmap_free(set);

	set = cpuset_after([] { starpu_bind_thread_on_main(); });
	EXPECT_FALSE(hwloc_bitmap_iszero(set));
	EXPECT_FALSE(hwloc_bitmap_intersects(set, worker)) << "the worker's unit is not the main thread's";
	hwloc_bitmap_free(set);
	hwloc_bitmap_free(worker);
}

TEST_F(Binding, BindThreadOnBadInputIsSaid)
{
	std::string err = stderr_of([] { starpu_bind_thread_on_main(); });
	EXPECT_TRUE(contains(err, "starpu_bind_thread_on_main: StarPU is not initialised")) << err;
	ASSERT_EQ(init_with_ncpus(1), 0);
	err = stderr_of([] {
		starpu_bind_thread_on_cpu(-1);
		starpu_bind_thread_on_cpu(1 << 20);
		starpu_bind_thread_on_worker(99);
	});
	EXPECT_TRUE(contains(err, "starpu_bind_thread_on_cpu: processing unit -1 does not exist")) << err;
	EXPECT_TRUE(contains(err, "starpu_bind_thread_on_cpu: processing unit 1048576 does not exist")) << err;
	EXPECT_TRUE(contains(err, "starpu_bind_thread_on_worker: no worker 99 (there are 1)")) << err;
}

static_assert(STARPU_CACHELINE_SIZE >= 64 && (STARPU_CACHELINE_SIZE & (STARPU_CACHELINE_SIZE - 1)) == 0,
	      "a cache line is a power of two of at least 64 bytes");

} // namespace
