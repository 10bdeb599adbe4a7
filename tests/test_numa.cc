// SPDX-License-Identifier: LGPL-2.1-or-later
// Main memory per NUMA node (STARPU_USE_NUMA=1): one RAM memory node per NUMA
// node hwloc reports, CPU workers in the node of their processing unit, data
// moved between the nodes like a device's. This machine likely has one NUMA
// node: the tests with two use a synthetic hwloc topology (HWLOC_SYNTHETIC).
#include <gtest/gtest.h>
#include <starpu.h>
#include <hwloc.h>
#include "helpers.h"
#include <atomic>
#include <vector>

using namespace astro_test;

namespace {

// Two packages of one NUMA node, one core and one processing unit each.
const char *two_numa = "pack:2 numa:1 core:1 pu:1";

int hwloc_numa_count()
{
	hwloc_topology_t topo;
	hwloc_topology_init(&topo);
	hwloc_topology_load(topo);
	int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	hwloc_topology_destroy(topo);
	return n;
}

struct Seen
{
	std::atomic<uintptr_t> ptr{0};
	std::atomic<unsigned> node{~0u};
};
Seen seen[2];

// Adds 1 to a vector and records where it ran and which buffer it got.
void add_one(void *buffers[], void *)
{
	float *v = (float *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] += 1;
	int w = starpu_worker_get_id();
	if (w >= 0 && w < 2) {
		seen[w].ptr = (uintptr_t)v;
		seen[w].node = starpu_worker_get_local_memory_node();
	}
}

} // namespace

TEST(Numa, OneRamNodeByDefault)
{
	ScopedEnv numa("STARPU_USE_NUMA", nullptr);
	ScopedEnv synthetic("HWLOC_SYNTHETIC", two_numa);
	Runtime rt(2);
	ASSERT_EQ(rt.ret(), 0);
	EXPECT_EQ((int)starpu_memory_nodes_get_numa_count(), 1);
	EXPECT_EQ(starpu_memory_nodes_get_count_by_kind(STARPU_CPU_RAM), 1u);
	EXPECT_EQ(starpu_worker_get_memory_node(0), (unsigned)STARPU_MAIN_RAM);
	EXPECT_EQ(starpu_worker_get_memory_node(1), (unsigned)STARPU_MAIN_RAM);
}

TEST(Numa, WhatHwlocReportsHere)
{
	ScopedEnv numa("STARPU_USE_NUMA", "1");
	ScopedEnv synthetic("HWLOC_SYNTHETIC", nullptr);
	int expected = std::min(std::max(hwloc_numa_count(), 1), STARPU_MAXNUMANODES);
	Runtime rt(1);
	ASSERT_EQ(rt.ret(), 0);
	EXPECT_EQ((int)starpu_memory_nodes_get_numa_count(), expected);
	EXPECT_EQ(starpu_memory_nodes_get_count_by_kind(STARPU_CPU_RAM), (unsigned)expected);
	EXPECT_EQ(starpu_node_get_kind(STARPU_MAIN_RAM), STARPU_CPU_RAM);
	EXPECT_GE(starpu_memory_nodes_numa_devid_to_id(STARPU_MAIN_RAM), 0);
	EXPECT_EQ(starpu_memory_nodes_numa_id_to_devid(starpu_memory_nodes_numa_devid_to_id(STARPU_MAIN_RAM)), STARPU_MAIN_RAM);
}

TEST(Numa, OneRamNodePerNumaNodeAndWorkersInTheirs)
{
	ScopedEnv numa("STARPU_USE_NUMA", "1");
	ScopedEnv synthetic("HWLOC_SYNTHETIC", two_numa);
	Runtime rt(2);
	ASSERT_EQ(rt.ret(), 0);
	ASSERT_EQ((int)starpu_memory_nodes_get_numa_count(), 2);
	EXPECT_EQ(starpu_memory_nodes_get_count_by_kind(STARPU_CPU_RAM), 2u);
	EXPECT_EQ(starpu_node_get_kind(1), STARPU_CPU_RAM);
	char name[32];
	starpu_memory_node_get_name(1, name, sizeof(name));
	EXPECT_STREQ(name, "NUMA 1");
	EXPECT_EQ(starpu_worker_get_memory_node(0), 0u);
	EXPECT_EQ(starpu_worker_get_memory_node(1), 1u);
	// The synthetic topology numbers its NUMA nodes 0 and 1 for the system too.
	EXPECT_EQ(starpu_memory_nodes_numa_devid_to_id(1), 1);
	EXPECT_EQ(starpu_memory_nodes_numa_id_to_devid(1), 1);
	EXPECT_EQ(starpu_memory_nodes_numa_id_to_hwloclogid(1), 1);
	EXPECT_EQ(starpu_memory_nodes_numa_hwloclogid_to_id(1), 1);
	// Bad ids: -1, not a node.
	EXPECT_EQ(starpu_memory_nodes_numa_id_to_devid(7), -1);
	EXPECT_EQ(starpu_memory_nodes_numa_devid_to_id(5), -1);
	EXPECT_EQ(starpu_memory_nodes_numa_id_to_hwloclogid(5), -1);
	EXPECT_EQ(starpu_memory_nodes_numa_hwloclogid_to_id(-3), -1);
}

TEST(Numa, AHandleWrittenInTurnOnBothNodesKeepsItsValue)
{
	ScopedEnv numa("STARPU_USE_NUMA", "1");
	ScopedEnv synthetic("HWLOC_SYNTHETIC", two_numa);
	Runtime rt(2);
	ASSERT_EQ(rt.ret(), 0);
	ASSERT_EQ((int)starpu_memory_nodes_get_numa_count(), 2);
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cpu_funcs[0] = add_one;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_RW;
	std::vector<float> v(1000, 0.0f);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), v.size(), sizeof(float));
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, STARPU_EXECUTE_ON_WORKER, i % 2, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(starpu_data_get_interface_on_node(h, 1) != nullptr, true);
	starpu_data_unregister(h);
	EXPECT_EQ(v[0], 10.0f);
	EXPECT_EQ(v[999], 10.0f);
	// Worker 0 worked on the registered buffer in node 0, worker 1 on a copy of its own in node 1.
	EXPECT_EQ(seen[0].node.load(), 0u);
	EXPECT_EQ(seen[1].node.load(), 1u);
	EXPECT_EQ(seen[0].ptr.load(), (uintptr_t)v.data());
	EXPECT_NE(seen[1].ptr.load(), (uintptr_t)v.data());
	EXPECT_NE(seen[1].ptr.load(), 0u);
}

TEST(Numa, ABadValueIsSaidAndMeansOneNode)
{
	ScopedEnv numa("STARPU_USE_NUMA", "yes");
	ScopedEnv synthetic("HWLOC_SYNTHETIC", two_numa);
	std::string err = stderr_of([] {
		Runtime rt(2);
		ASSERT_EQ(rt.ret(), 0);
		EXPECT_EQ((int)starpu_memory_nodes_get_numa_count(), 1);
	});
	EXPECT_TRUE(contains(err, "STARPU_USE_NUMA='yes' is not a number")) << err;
}
