// SPDX-License-Identifier: LGPL-2.1-or-later
// Two OpenCL devices, hence two device memory nodes with no direct path
// between them: data written on one device and then used on the other goes
// through main memory (device -> RAM -> device), keeps its value, and every
// transfer the observation path reports has main memory at one end. PoCL
// gives two CPU devices when POCL_DEVICES names its pthread device twice; the
// variable is set before the first starpu_init of this process, so this
// suite has a binary of its own. Skips where fewer than two devices exist.
#include <gtest/gtest.h>
#include <starpu.h>
#include <astrolabe/observe.h>
#include <vector>
#include "opencl_helpers.h"

using namespace astro_test;

#ifdef STARPU_USE_OPENCL

TEST(OpenCLTwoDevices, DataGoesFromDeviceToDeviceThroughMainMemory)
{
	// Before PoCL starts in this process (it reads the variable once).
	ScopedEnv devices("POCL_DEVICES", "pthread pthread");
	starpu_conf conf = conf_with_ncpus(1);
	conf.nopencl = 2;
	ASSERT_EQ(starpu_init(&conf), 0);
	if (starpu_opencl_worker_get_count() < 2) {
		starpu_shutdown();
		GTEST_SKIP() << "fewer than two OpenCL devices here (PoCL with POCL_DEVICES=\"pthread pthread\" gives two)";
	}
	int workers[2] = { starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0), starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 1) };
	unsigned nodes[2] = { starpu_worker_get_memory_node((unsigned)workers[0]), starpu_worker_get_memory_node((unsigned)workers[1]) };
	ASSERT_NE(nodes[0], nodes[1]);
	ASSERT_NE(nodes[0], (unsigned)STARPU_MAIN_RAM);
	ASSERT_NE(nodes[1], (unsigned)STARPU_MAIN_RAM);

	EventLog log;
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_TRANSFER_BEGIN) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TRANSFER_END),
					 EventLog::record, &log);
	ASSERT_GE(id, 0);
	const unsigned n = 1000, rounds = 6;
	std::vector<int> v(n, 0);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), n, sizeof(int));
	static starpu_codelet cl; // read by the detached tasks until their end
	starpu_codelet_init(&cl);
	cl.opencl_funcs[0] = add_opencl_by_copies;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_RW;
	static int one = 1;
	for (unsigned r = 0; r < rounds; r++)
		ASSERT_EQ(submit_on_handle(&cl, h, &one, workers[r % 2]), 0);
	starpu_task_wait_for_all();
	starpu_data_unregister(h);
	astro_observe_unsubscribe(id);

	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(v[i], (int)rounds) << "element " << i;
	// Each round after the first moves the data device -> RAM -> device; the
	// first brings it from RAM, the unregister brings it home: 2 * rounds transfers.
	unsigned begins = 0, ends = 0, into[STARPU_MAXNODES] = {}, outof[STARPU_MAXNODES] = {};
	std::lock_guard<std::mutex> hold(log.lock);
	for (const astro_event &e : log.events) {
		EXPECT_TRUE(e.src_node == STARPU_MAIN_RAM || e.dst_node == STARPU_MAIN_RAM)
			<< "a transfer from node " << e.src_node << " to node " << e.dst_node << " bypassed main memory";
		EXPECT_EQ(e.bytes, n * sizeof(int));
		if (e.moment == ASTRO_MOMENT_TRANSFER_BEGIN) {
			begins++;
			if (e.dst_node < STARPU_MAXNODES)
				into[e.dst_node]++;
			if (e.src_node < STARPU_MAXNODES)
				outof[e.src_node]++;
		} else
			ends++;
	}
	EXPECT_EQ(begins, 2 * rounds);
	EXPECT_EQ(ends, begins);
	EXPECT_EQ(into[nodes[0]], rounds / 2);
	EXPECT_EQ(into[nodes[1]], rounds / 2);
	EXPECT_EQ(outof[nodes[0]], rounds / 2);
	EXPECT_EQ(outof[nodes[1]], rounds / 2);
	starpu_shutdown();
}

#else

TEST(OpenCLTwoDevices, NotBuilt)
{
	GTEST_SKIP() << "Astrolabe was built without OpenCL (install opencl-headers and ocl-icd-opencl-dev, then configure again)";
}

#endif

int main(int argc, char **argv)
{
	return opencl_test_main(argc, argv, "test-opencl-devices");
}
