/* SPDX-License-Identifier: LGPL-2.1-or-later */
// What the OpenCL suites share (test_opencl, test_opencl_pipeline,
// test_opencl_devices): a log of observed moments, a device implementation
// that needs no kernel to build, and their main().
#ifndef ASTRO_TEST_OPENCL_HELPERS_H
#define ASTRO_TEST_OPENCL_HELPERS_H

#include "helpers.h"
#include <astrolabe/observe.h>
#include <algorithm>

namespace astro_test
{

// The moments a subscription saw, in the order they were observed
// (astro_observe_subscribe(moments, EventLog::record, &log)).
struct EventLog
{
	std::mutex lock;
	std::vector<astro_event> events;

	static void record(const astro_event *ev, void *arg)
	{
		EventLog *log = (EventLog *)arg;
		std::lock_guard<std::mutex> hold(log->lock);
		log->events.push_back(*ev);
	}
	// Index of the first event of moment m matching pred, -1 if none.
	template <typename P> long find(enum astro_moment m, P pred)
	{
		std::lock_guard<std::mutex> hold(lock);
		for (size_t i = 0; i < events.size(); i++)
			if (events[i].moment == m && pred(events[i]))
				return (long)i;
		return -1;
	}
	long count(enum astro_moment m)
	{
		std::lock_guard<std::mutex> hold(lock);
		return std::count_if(events.begin(), events.end(), [m](const astro_event &e) { return e.moment == m; });
	}
};

#ifdef STARPU_USE_OPENCL
// Adds *(int *)arg (1 without) to every element of the int vector buffers[0],
// with plain copies on the worker's queue: no kernel to build.
inline void add_opencl_by_copies(void *buffers[], void *arg)
{
	cl_mem v = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]);
	size_t n = STARPU_VECTOR_GET_NX(buffers[0]), offset = STARPU_VECTOR_GET_OFFSET(buffers[0]);
	cl_command_queue queue;
	starpu_opencl_get_current_queue(&queue);
	std::vector<int> host(n);
	ASSERT_EQ(clEnqueueReadBuffer(queue, v, CL_TRUE, offset, n * sizeof(int), host.data(), 0, NULL, NULL), CL_SUCCESS);
	for (int &x : host)
		x += arg ? *(int *)arg : 1;
	ASSERT_EQ(clEnqueueWriteBuffer(queue, v, CL_TRUE, offset, n * sizeof(int), host.data(), 0, NULL, NULL), CL_SUCCESS);
}

// starpu_init() with ncpus CPU workers and one OpenCL worker, in a fixture's SetUp: false when no OpenCL device
// exists (the test then skips) or starpu_init() failed (said); *started once it succeeded, for TearDown.
inline bool start_with_opencl_worker(int ncpus, bool *started)
{
	starpu_conf conf = conf_with_ncpus(ncpus);
	conf.nopencl = 1;
	int ret = starpu_init(&conf);
	EXPECT_EQ(ret, 0) << "starpu_init";
	*started = ret == 0;
	return ret == 0 && starpu_opencl_worker_get_count() > 0;
}
#define ASTRO_NO_OPENCL_DEVICE "no OpenCL device here (install pocl-opencl-icd for a CPU one)"

// main() of an OpenCL suite: PoCL's device is of type CPU, which StarPU takes
// only when asked (STARPU_OPENCL_ON_CPUS=1); the bus figures measured at each
// start and the model files go to a folder of this run, removed at the end (a
// death test's child, which crashes on purpose, uses its parent's).
inline int opencl_test_main(int argc, char **argv, const char *suite)
{
	testing::InitGoogleTest(&argc, argv);
	setenv("STARPU_OPENCL_ON_CPUS", "1", 1);
	if (const char *parents = getenv("ASTRO_TEST_OPENCL_SAMPLING")) {
		setenv("STARPU_PERF_MODEL_DIR", parents, 1);
		return RUN_ALL_TESTS();
	}
	std::string sampling = env_or("TMPDIR", "/tmp") + "/astro-" + suite + "-" + std::to_string(getpid());
	setenv("STARPU_PERF_MODEL_DIR", sampling.c_str(), 1);
	setenv("ASTRO_TEST_OPENCL_SAMPLING", sampling.c_str(), 1);
	int ret = RUN_ALL_TESTS();
	if (system(("rm -rf '" + sampling + "'").c_str()) != 0)
		fprintf(stderr, "could not remove %s\n", sampling.c_str());
	return ret;
}
#else
inline int opencl_test_main(int argc, char **argv, const char *)
{
	testing::InitGoogleTest(&argc, argv);
	return RUN_ALL_TESTS();
}
#endif

} // namespace astro_test

#endif
