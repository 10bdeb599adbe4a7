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
	// A preference is honoured when the unit is free of workers and active threads.
	unsigned preferred[2] = { active, passive1 };
	EXPECT_EQ(starpu_get_next_bindid(0, preferred, 2), passive1);
	if (machine_pus() >= 3) {
		EXPECT_NE((int)passive1, worker_unit);
		/* Takes passive1's unit (the first free one): asked after the preference above. */
		EXPECT_NE(starpu_get_next_bindid(STARPU_THREAD_ACTIVE, nullptr, 0), active);
	}

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

// ------------------------------------------- the application thread and the default placement

namespace {

// hwloc's view of the machine for the tests below.
struct Machine
{
	hwloc_topology_t topo;
	Machine()
	{
		hwloc_topology_init(&topo);
		hwloc_topology_load(topo);
	}
	~Machine() { hwloc_topology_destroy(topo); }
	unsigned cores() const { return (unsigned)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE); }
	unsigned pus() const { return (unsigned)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU); }
	// The processing units of the core of unit pu (logical index).
	hwloc_const_cpuset_t core_of(unsigned pu) const
	{
		hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, pu);
		hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, obj);
		return core ? core->cpuset : obj->cpuset;
	}
	hwloc_const_cpuset_t unit(unsigned pu) const { return hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, pu)->cpuset; }
};

// Runs body on a thread of its own, bound to unit pu first (-1: left unbound), so that
// what starpu_init() does to its caller's binding stays on that thread.
template <typename F> void on_thread_at(const Machine &m, int pu, F &&body)
{
	std::thread t([&] {
		if (pu >= 0)
			ASSERT_EQ(hwloc_set_cpubind(m.topo, m.unit((unsigned)pu), HWLOC_CPUBIND_THREAD), 0);
		body();
	});
	t.join();
}

// The calling thread's binding, as hwloc sees it (a copy to free).
hwloc_bitmap_t own_binding(const Machine &m)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	EXPECT_EQ(hwloc_get_cpubind(m.topo, set, HWLOC_CPUBIND_THREAD), 0);
	return set;
}

} // namespace

// One worker and a free core: the worker leaves the core the application thread runs on alone,
// whichever core the OS (here the test) put that thread on.
TEST_F(Binding, TheDefaultPlacementLeavesTheApplicationThreadsCoreFree)
{
	Machine m;
	if (m.cores() < 2)
		GTEST_SKIP() << "one core only";
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", nullptr);
	ScopedEnv cpuid("STARPU_WORKERS_CPUID", nullptr);
	ScopedEnv coreid("STARPU_WORKERS_COREID", nullptr);
	for (unsigned pu : { 0u, m.pus() - 1 }) {
		on_thread_at(m, (int)pu, [&] {
			ASSERT_EQ(init_with_ncpus(1), 0);
			hwloc_cpuset_t set = starpu_worker_get_hwloc_cpuset(0);
			ASSERT_NE(set, nullptr);
			EXPECT_EQ(hwloc_bitmap_weight(set), 1);
			EXPECT_FALSE(hwloc_bitmap_intersects(set, m.core_of(pu))) << "the worker is on the application thread's core " << pu;
			hwloc_bitmap_free(set);
			// The application thread itself is left where it was (StarPU binds it only when asked).
			hwloc_bitmap_t mine = own_binding(m);
			EXPECT_TRUE(hwloc_bitmap_isequal(mine, m.unit(pu)));
			hwloc_bitmap_free(mine);
			starpu_shutdown();
		});
	}
	// As many workers as cores: each on a core of its own all the same.
	on_thread_at(m, 0, [&] {
		ASSERT_EQ(init_with_ncpus((int)m.cores()), 0);
		hwloc_bitmap_t seen = hwloc_bitmap_alloc();
		for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
			int bindid = starpu_worker_get_bindid((int)w);
			ASSERT_GE(bindid, 0);
			EXPECT_FALSE(hwloc_bitmap_intersects(seen, m.core_of((unsigned)bindid))) << "two workers on one core";
			hwloc_bitmap_or(seen, seen, m.core_of((unsigned)bindid));
		}
		hwloc_bitmap_free(seen);
		starpu_shutdown();
	});
}

// An explicit list still wins over the default placement.
TEST_F(Binding, AnExplicitListKeepsTheApplicationThreadsCore)
{
	Machine m;
	if (m.cores() < 2)
		GTEST_SKIP() << "one core only";
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", nullptr);
	ScopedEnv cpuid("STARPU_WORKERS_CPUID", "0");
	on_thread_at(m, 0, [&] {
		ASSERT_EQ(init_with_ncpus(1), 0);
		EXPECT_EQ(starpu_worker_get_bindid(0), 0);
		starpu_shutdown();
	});
}

// STARPU_MAIN_THREAD_CPUID binds the thread calling starpu_init() there (and the workers avoid it);
// STARPU_MAIN_THREAD_COREID the same with a core.
TEST_F(Binding, MainThreadCpuidBindsTheCaller)
{
	Machine m;
	if (m.cores() < 2)
		GTEST_SKIP() << "one core only";
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", nullptr);
	unsigned last = m.pus() - 1;
	{
		ScopedEnv main("STARPU_MAIN_THREAD_CPUID", std::to_string(last));
		on_thread_at(m, 0, [&] {
			ASSERT_EQ(init_with_ncpus(1), 0);
			hwloc_bitmap_t mine = own_binding(m);
			EXPECT_TRUE(hwloc_bitmap_isequal(mine, m.unit(last)));
			hwloc_bitmap_free(mine);
			EXPECT_FALSE(hwloc_bitmap_isset(m.core_of(last), (unsigned)os_index_of((unsigned)starpu_worker_get_bindid(0))));
			starpu_shutdown();
		});
	}
	{
		ScopedEnv main("STARPU_MAIN_THREAD_COREID", "0");
		on_thread_at(m, (int)last, [&] {
			ASSERT_EQ(init_with_ncpus(1), 0);
			hwloc_bitmap_t mine = own_binding(m);
			hwloc_obj_t core0 = hwloc_get_obj_by_type(m.topo, HWLOC_OBJ_CORE, 0);
			hwloc_obj_t first = hwloc_get_obj_inside_cpuset_by_type(m.topo, core0->cpuset, HWLOC_OBJ_PU, 0);
			EXPECT_TRUE(hwloc_bitmap_isequal(mine, first->cpuset));
			hwloc_bitmap_free(mine);
			EXPECT_FALSE(hwloc_bitmap_intersects(m.core_of(first->logical_index),
							     m.unit((unsigned)starpu_worker_get_bindid(0))));
			starpu_shutdown();
		});
	}
}

// STARPU_MAIN_THREAD_BIND=1: the caller gets a unit of its own, taken from the CPU workers by default.
TEST_F(Binding, MainThreadBindReservesAUnit)
{
	Machine m;
	if (m.cores() < 2)
		GTEST_SKIP() << "one core only";
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", nullptr);
	ScopedEnv ncpu("STARPU_NCPU", nullptr);
	ScopedEnv ncpus("STARPU_NCPUS", nullptr);
	ScopedEnv bind("STARPU_MAIN_THREAD_BIND", "1");
	on_thread_at(m, -1, [&] {
		starpu_conf conf;
		starpu_conf_init(&conf);
		conf.ncuda = 0;
		conf.nopencl = 0;
		ASSERT_EQ(starpu_init(&conf), 0);
		EXPECT_EQ(starpu_cpu_worker_get_count(), m.cores() - 1);
		hwloc_bitmap_t mine = own_binding(m);
		EXPECT_EQ(hwloc_bitmap_weight(mine), 1);
		for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
			hwloc_cpuset_t set = starpu_worker_get_hwloc_cpuset((int)w);
			EXPECT_FALSE(hwloc_bitmap_intersects(set, mine)) << "worker " << w << " on the application thread's unit";
			hwloc_bitmap_free(set);
		}
		// Active: no other active thread is given it.
		unsigned next = starpu_get_next_bindid(STARPU_THREAD_ACTIVE, nullptr, 0);
		EXPECT_FALSE(hwloc_bitmap_isset(mine, (unsigned)os_index_of(next)));
		hwloc_bitmap_free(mine);
		starpu_shutdown();
	});
}

TEST_F(Binding, BadMainThreadSettingsAreSaid)
{
	Machine m;
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", nullptr);
	{
		ScopedEnv main("STARPU_MAIN_THREAD_CPUID", "100000");
		on_thread_at(m, 0, [&] {
			std::string err = stderr_of([] { ASSERT_EQ(init_with_ncpus(1), 0); });
			EXPECT_TRUE(contains(err, "STARPU_MAIN_THREAD_CPUID")) << err;
			EXPECT_EQ(lines_of(err).size(), 1u) << err;
			hwloc_bitmap_t mine = own_binding(m);
			EXPECT_TRUE(hwloc_bitmap_isequal(mine, m.unit(0))) << "left where it was";
			hwloc_bitmap_free(mine);
			starpu_shutdown();
		});
	}
	{
		ScopedEnv main("STARPU_MAIN_THREAD_CPUID", "0");
		ScopedEnv core("STARPU_MAIN_THREAD_COREID", "0");
		on_thread_at(m, -1, [&] {
			std::string err = stderr_of([] { ASSERT_EQ(init_with_ncpus(1), 0); });
			EXPECT_TRUE(contains(err, "STARPU_MAIN_THREAD_COREID is ignored")) << err;
			starpu_shutdown();
		});
	}
	{
		ScopedEnv bind("STARPU_MAIN_THREAD_BIND", "yes");
		on_thread_at(m, -1, [&] {
			std::string err = stderr_of([] { ASSERT_EQ(init_with_ncpus(1), 0); });
			EXPECT_TRUE(contains(err, "STARPU_MAIN_THREAD_BIND")) << err;
			starpu_shutdown();
		});
	}
}

// ------------------------------------------- the cores the workers may take (STARPU_WORKERS_GETBIND, STARPU_RESERVE_NCPU)

namespace {

// No CPU worker count and no explicit placement: the default placement decides.
struct DefaultPlacement
{
	ScopedEnv nobind{ "STARPU_WORKERS_NOBIND", nullptr }, ncpu{ "STARPU_NCPU", nullptr }, ncpus{ "STARPU_NCPUS", nullptr },
		cpuid{ "STARPU_WORKERS_CPUID", nullptr }, coreid{ "STARPU_WORKERS_COREID", nullptr };
};

// Run in a death test's child (a process of its own): binds the whole process to core 0, starts the
// runtime with no CPU worker count given, and exits with the number of CPU workers (100 + n), or
// 1 when a worker is bound outside core 0 and the process binding is to be followed.
[[noreturn]] void start_bound_to_core0(bool followed)
{
	Machine m;
	hwloc_obj_t core0 = hwloc_get_obj_by_type(m.topo, HWLOC_OBJ_CORE, 0);
	if (hwloc_set_cpubind(m.topo, core0->cpuset, HWLOC_CPUBIND_PROCESS) != 0)
		_exit(2);
	starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncuda = 0;
	conf.nopencl = 0;
	if (starpu_init(&conf) != 0)
		_exit(3);
	unsigned n = starpu_cpu_worker_get_count();
	for (unsigned w = 0; followed && w < starpu_worker_get_count(); w++) {
		int bindid = starpu_worker_get_bindid((int)w);
		if (bindid < 0 || !hwloc_bitmap_isincluded(m.unit((unsigned)bindid), core0->cpuset))
			_exit(1);
	}
	starpu_shutdown();
	_exit(100 + (int)n);
}

} // namespace

// As StarPU: by default the process's binding (taskset, a batch scheduler, an MPI launcher) says how
// many CPU workers start and where; STARPU_WORKERS_GETBIND=0 takes every core of the machine.
TEST_F(Binding, TheProcessBindingDecidesTheDefaultCpuWorkers)
{
	Machine m;
	if (m.cores() < 2)
		GTEST_SKIP() << "one core only";
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	DefaultPlacement unset;
	ScopedEnv reserve("STARPU_RESERVE_NCPU", nullptr);
	{
		ScopedEnv getbind("STARPU_WORKERS_GETBIND", nullptr);
		EXPECT_EXIT(start_bound_to_core0(true), ::testing::ExitedWithCode(101), "");
	}
	{
		ScopedEnv getbind("STARPU_WORKERS_GETBIND", "0");
		EXPECT_EXIT(start_bound_to_core0(false), ::testing::ExitedWithCode(100 + (int)m.cores()), "");
	}
	{
		ScopedEnv getbind("STARPU_WORKERS_GETBIND", "maybe");
		EXPECT_EXIT(start_bound_to_core0(true), ::testing::ExitedWithCode(101), "STARPU_WORKERS_GETBIND");
	}
}

// STARPU_RESERVE_NCPU leaves cores to the program's own threads: fewer CPU workers by default, none
// on the reserved cores, which starpu_get_next_bindid() gives; a CPU worker count given overrides it.
TEST_F(Binding, ReservedCoresAreLeftToTheProgram)
{
	Machine m;
	if (m.cores() < 2)
		GTEST_SKIP() << "one core only";
	DefaultPlacement unset;
	ScopedEnv getbind("STARPU_WORKERS_GETBIND", "0");
	auto start = [](int conf_ncpus, int conf_reserve) {
		starpu_conf conf;
		starpu_conf_init(&conf);
		conf.ncuda = 0;
		conf.nopencl = 0;
		conf.ncpus = conf_ncpus;
		conf.reserve_ncpus = conf_reserve;
		return starpu_init(&conf);
	};
	{
		ScopedEnv reserve("STARPU_RESERVE_NCPU", "1");
		on_thread_at(m, -1, [&] {
			ASSERT_EQ(start(-1, -1), 0);
			EXPECT_EQ(starpu_cpu_worker_get_count(), m.cores() - 1);
			hwloc_bitmap_t used = hwloc_bitmap_alloc();
			for (unsigned w = 0; w < starpu_worker_get_count(); w++)
				hwloc_bitmap_or(used, used, m.core_of((unsigned)starpu_worker_get_bindid((int)w)));
			unsigned next = starpu_get_next_bindid(STARPU_THREAD_ACTIVE, nullptr, 0);
			EXPECT_FALSE(hwloc_bitmap_intersects(used, m.unit(next))) << "the unit given to the program holds a worker";
			hwloc_bitmap_free(used);
			starpu_shutdown();
		});
		on_thread_at(m, -1, [&] {
			ASSERT_EQ(start(2, -1), 0);
			EXPECT_EQ(starpu_cpu_worker_get_count(), 2u) << "a count given overrides the reservation";
			starpu_shutdown();
		});
	}
	on_thread_at(m, -1, [&] {
		ASSERT_EQ(start(-1, 1), 0);
		EXPECT_EQ(starpu_cpu_worker_get_count(), m.cores() - 1) << "starpu_conf.reserve_ncpus";
		starpu_shutdown();
	});
	{
		ScopedEnv reserve("STARPU_RESERVE_NCPU", std::to_string(m.cores()));
		on_thread_at(m, -1, [&] {
			std::string err = stderr_of([&] { EXPECT_EQ(start(-1, -1), -ENODEV); });
			EXPECT_TRUE(contains(err, "STARPU_RESERVE_NCPU")) << err;
			if (starpu_is_initialized())
				starpu_shutdown();
		});
	}
}
