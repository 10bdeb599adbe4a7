// SPDX-License-Identifier: LGPL-2.1-or-later
// The driver API (starpu_driver.h): a worker named in
// starpu_conf.not_launched_drivers gets no thread of the runtime; the
// application runs its loop, with starpu_driver_run() or round by round.
#include "helpers.h"

#include <atomic>
#include <pthread.h>
#include <thread>

using namespace astro_test;

namespace {

// What a task saw where it ran.
struct Seen
{
	std::atomic<int> runs{ 0 };
	std::atomic<int> worker{ -2 };
	pthread_t thread{};
};

void note_where(void **, void *arg)
{
	Seen *seen = (Seen *)arg;
	seen->worker = starpu_worker_get_id();
	seen->thread = pthread_self();
	seen->runs++;
}

// Static: the runtime may still look at it after a test body returns.
struct starpu_codelet note_cl = cpu_codelet(note_where, 0, "note_where");

// The CPU driver of devid 0, and a conf with ncpus CPU workers of which that one is not launched.
struct starpu_driver cpu0 = { STARPU_CPU_WORKER, { 0 } };

starpu_conf conf_not_launching(int ncpus, struct starpu_driver *d)
{
	starpu_conf conf = conf_with_ncpus(ncpus);
	conf.not_launched_drivers = d;
	conf.n_not_launched_drivers = 1;
	return conf;
}

class DriverApi : public ::testing::Test
{
protected:
	// The application's thread is not bound to the worker's core: later tests share this process.
	ScopedEnv nobind{ "STARPU_WORKERS_NOBIND", "1" };
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
};

// The worker of devid 0 of kind type.
int worker_of(enum starpu_worker_archtype type, int devid)
{
	return starpu_worker_get_by_devid(type, devid);
}

struct starpu_task *pinned_task(Seen *seen, int workerid)
{
	struct starpu_task *t = starpu_task_create();
	t->cl = &note_cl;
	t->cl_arg = seen;
	t->detach = 0;
	t->destroy = 0;
	if (workerid >= 0) {
		t->execute_on_a_specific_worker = 1;
		t->workerid = (unsigned)workerid;
	}
	return t;
}

TEST_F(DriverApi, RunOnceRunsTheWorkersTasksOnTheCallingThread)
{
	starpu_conf conf = conf_not_launching(2, &cpu0);
	ASSERT_EQ(starpu_init(&conf), 0);
	ASSERT_EQ(starpu_cpu_worker_get_count(), 2u);
	int w = worker_of(STARPU_CPU_WORKER, 0);
	ASSERT_GE(w, 0);

	ASSERT_EQ(starpu_driver_init(&cpu0), 0);
	EXPECT_EQ(starpu_worker_get_id(), -1) << "the application's thread is a worker only inside a round";
	for (int i = 0; i < 4; i++) {
		Seen seen;
		struct starpu_task *t = pinned_task(&seen, w);
		ASSERT_EQ(starpu_task_submit(t), 0);
		// No thread of the runtime runs this worker: nothing runs the task until we do.
		sleep_ms(20);
		EXPECT_EQ(seen.runs.load(), 0);
		for (int round = 0; round < 1000000 && !starpu_task_finished(t); round++)
			ASSERT_EQ(starpu_driver_run_once(&cpu0), 0);
		ASSERT_EQ(starpu_task_wait(t), 0);
		starpu_task_destroy(t);
		EXPECT_EQ(seen.runs.load(), 1);
		EXPECT_EQ(seen.worker.load(), w);
		EXPECT_TRUE(pthread_equal(seen.thread, pthread_self()));
	}
	ASSERT_EQ(starpu_driver_deinit(&cpu0), 0);

	// The runtime's own worker still runs tasks pinned to it.
	Seen other;
	struct starpu_task *t = pinned_task(&other, 1 - w);
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait(t), 0);
	starpu_task_destroy(t);
	EXPECT_EQ(other.worker.load(), 1 - w);
	EXPECT_FALSE(pthread_equal(other.thread, pthread_self()));
}

// StarPU's init_run_deinit: the only worker is the application's; unpinned tasks run on it.
TEST_F(DriverApi, TheOnlyWorkerRunsWhenTheApplicationRunsIt)
{
	starpu_conf conf = conf_not_launching(1, &cpu0);
	ASSERT_EQ(starpu_init(&conf), 0);
	ASSERT_EQ(starpu_driver_init(&cpu0), 0);
	Seen seen;
	for (int i = 0; i < 8; i++) {
		struct starpu_task *t = pinned_task(&seen, -1);
		ASSERT_EQ(starpu_task_submit(t), 0);
		starpu_do_schedule();
		for (int round = 0; round < 1000000 && !starpu_task_finished(t); round++)
			ASSERT_EQ(starpu_driver_run_once(&cpu0), 0);
		ASSERT_EQ(starpu_task_wait(t), 0);
		starpu_task_destroy(t);
	}
	ASSERT_EQ(starpu_driver_deinit(&cpu0), 0);
	EXPECT_EQ(seen.runs.load(), 8);
}

int run_driver_ret;
void *run_driver(void *arg)
{
	run_driver_ret = starpu_driver_run((struct starpu_driver *)arg);
	return nullptr;
}

// StarPU's run_driver pattern: starpu_driver_run(&cpu0) on a thread of the program.
bool start_run_driver(pthread_t *thread)
{
	run_driver_ret = -1;
	return pthread_create(thread, nullptr, run_driver, &cpu0) == 0;
}

TEST_F(DriverApi, RunServesTasksUntilTerminationIsRequested)
{
	starpu_conf conf = conf_not_launching(1, &cpu0);
	ASSERT_EQ(starpu_init(&conf), 0);
	pthread_t thread;
	ASSERT_TRUE(start_run_driver(&thread));
	Seen seen;
	for (int i = 0; i < 5; i++) {
		struct starpu_task *t = pinned_task(&seen, -1);
		t->synchronous = 1;
		ASSERT_EQ(starpu_task_submit(t), 0);
		EXPECT_TRUE(pthread_equal(seen.thread, thread));
		starpu_task_destroy(t);
	}
	EXPECT_EQ(seen.runs.load(), 5);
	starpu_drivers_request_termination();
	ASSERT_EQ(pthread_join(thread, nullptr), 0);
	EXPECT_EQ(run_driver_ret, 0);
}

TEST_F(DriverApi, TerminationWaitsForTheTasksSubmittedBefore)
{
	starpu_conf conf = conf_not_launching(1, &cpu0);
	ASSERT_EQ(starpu_init(&conf), 0);
	static Seen seen;
	seen.runs = 0;
	for (int i = 0; i < 10; i++) {
		struct starpu_task *t = pinned_task(&seen, -1);
		t->detach = 1;
		t->destroy = 1;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	// Asked before the loop even starts: it still runs all ten first.
	starpu_drivers_request_termination();
	EXPECT_EQ(starpu_driver_run(&cpu0), 0);
	EXPECT_EQ(seen.runs.load(), 10);
	EXPECT_EQ(starpu_task_nsubmitted(), 0);
	// Cleared by the next starpu_init().
	starpu_shutdown();
	ASSERT_EQ(starpu_init(&conf), 0);
	pthread_t thread;
	ASSERT_TRUE(start_run_driver(&thread));
	Seen again;
	struct starpu_task *t = pinned_task(&again, -1);
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait(t), 0);
	starpu_task_destroy(t);
	EXPECT_EQ(again.runs.load(), 1);
	starpu_drivers_request_termination();
	ASSERT_EQ(pthread_join(thread, nullptr), 0);
}

TEST_F(DriverApi, ShutdownEndsALoopStillRunning)
{
	starpu_conf conf = conf_not_launching(2, &cpu0);
	ASSERT_EQ(starpu_init(&conf), 0);
	pthread_t thread;
	ASSERT_TRUE(start_run_driver(&thread));
	Seen seen;
	struct starpu_task *t = pinned_task(&seen, worker_of(STARPU_CPU_WORKER, 0));
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait(t), 0);
	starpu_task_destroy(t);
	starpu_shutdown();
	ASSERT_EQ(pthread_join(thread, nullptr), 0);
	EXPECT_EQ(run_driver_ret, 0);
	EXPECT_EQ(seen.runs.load(), 1);
}

TEST_F(DriverApi, BadCallsAreRefusedWithOneMessage)
{
	struct starpu_driver d = cpu0;
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_driver_init(&d), -EINVAL); });
	EXPECT_TRUE(contains(err, "starpu_init")) << err;

	starpu_conf conf = conf_not_launching(2, &cpu0);
	ASSERT_EQ(starpu_init(&conf), 0);
	err = stderr_of([&] { EXPECT_EQ(starpu_driver_init(nullptr), -EINVAL); });
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	EXPECT_TRUE(contains(err, "NULL")) << err;

	err = stderr_of([&] { EXPECT_EQ(starpu_driver_run_once(&d), -EINVAL); });
	EXPECT_TRUE(contains(err, "starpu_driver_init")) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_driver_deinit(&d), -EINVAL); });
	EXPECT_TRUE(contains(err, "not initialised")) << err;

	struct starpu_driver launched = { STARPU_CPU_WORKER, { 1 } };
	err = stderr_of([&] { EXPECT_EQ(starpu_driver_init(&launched), -EINVAL); });
	EXPECT_TRUE(contains(err, "not_launched_drivers")) << err;
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	struct starpu_driver absent = { STARPU_CPU_WORKER, { 7 } };
	err = stderr_of([&] { EXPECT_EQ(starpu_driver_run(&absent), -EINVAL); });
	EXPECT_TRUE(contains(err, "names no worker")) << err;
	struct starpu_driver bad_kind = { (enum starpu_worker_archtype)42, { 0 } };
	err = stderr_of([&] { EXPECT_EQ(starpu_driver_init(&bad_kind), -EINVAL); });
	EXPECT_TRUE(contains(err, "kind 42")) << err;

	ASSERT_EQ(starpu_driver_init(&d), 0);
	err = stderr_of([&] { EXPECT_EQ(starpu_driver_init(&d), -EINVAL); });
	EXPECT_TRUE(contains(err, "initialised already")) << err;
	ASSERT_EQ(starpu_driver_deinit(&d), 0);
	EXPECT_EQ(starpu_driver_deinit(&d), -EINVAL) << "deinitialised already";

	// Nothing was lost: the worker still runs when the application runs it.
	Seen seen;
	struct starpu_task *t = pinned_task(&seen, worker_of(STARPU_CPU_WORKER, 0));
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_driver_init(&d), 0);
	for (int round = 0; round < 1000000 && !starpu_task_finished(t); round++)
		ASSERT_EQ(starpu_driver_run_once(&d), 0);
	ASSERT_EQ(starpu_driver_deinit(&d), 0);
	ASSERT_EQ(starpu_task_wait(t), 0);
	starpu_task_destroy(t);
	EXPECT_EQ(seen.runs.load(), 1);
}

// From a task, the calls that would make a worker's thread run another worker are refused.
void call_driver_from_task(void **, void *arg)
{
	*(int *)arg = starpu_driver_run_once(&cpu0);
}

TEST_F(DriverApi, RefusedFromATask)
{
	starpu_conf conf = conf_not_launching(2, &cpu0);
	ASSERT_EQ(starpu_init(&conf), 0);
	ASSERT_EQ(starpu_driver_init(&cpu0), 0);
	static struct starpu_codelet cl = cpu_codelet(call_driver_from_task, 0, "call_driver");
	int ret = 0;
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->cl_arg = &ret;
	t->execute_on_a_specific_worker = 1;
	t->workerid = (unsigned)worker_of(STARPU_CPU_WORKER, 1);
	t->synchronous = 1;
	std::string err = stderr_of([&] { ASSERT_EQ(starpu_task_submit(t), 0); });
	EXPECT_EQ(ret, -EDEADLK);
	EXPECT_TRUE(contains(err, "starpu_driver_run_once")) << err;
	ASSERT_EQ(starpu_driver_deinit(&cpu0), 0);
}

TEST_F(DriverApi, ConfNamingNoWorkerIsSaidAndIgnored)
{
	struct starpu_driver absent = { STARPU_CPU_WORKER, { 9 } };
	starpu_conf conf = conf_not_launching(1, &absent);
	std::string err = stderr_of([&] { ASSERT_EQ(starpu_init(&conf), 0); });
	EXPECT_TRUE(contains(err, "not_launched_drivers[0]")) << err;
	Seen seen;
	struct starpu_task *t = pinned_task(&seen, -1);
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait(t), 0) << "the runtime runs the worker itself";
	starpu_task_destroy(t);
	starpu_shutdown();

	conf = conf_with_ncpus(1);
	conf.n_not_launched_drivers = 1;
	err = stderr_of([&] { ASSERT_EQ(starpu_init(&conf), 0); });
	EXPECT_TRUE(contains(err, "NULL")) << err;
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
}

#ifdef STARPU_USE_OPENCL
// An OpenCL driver names its worker by cl_device_id: the kernel asks the OpenCL helpers of
// libastrolabe, which tell it how once the driver opened its devices.
TEST_F(DriverApi, AnOpenCLDriverNamesItsWorkerByDevice)
{
	ScopedEnv on_cpus("STARPU_OPENCL_ON_CPUS", "1");
	starpu_conf conf = conf_with_ncpus(1);
	conf.nopencl = 1;
	ASSERT_EQ(starpu_init(&conf), 0);
	if (starpu_opencl_worker_get_count() == 0)
		GTEST_SKIP() << "no OpenCL device here (install pocl-opencl-icd for a CPU one)";
	struct starpu_driver opencl0 = { STARPU_OPENCL_WORKER, { 0 } };
	starpu_opencl_get_device(0, &opencl0.id.opencl_id);
	ASSERT_NE(opencl0.id.opencl_id, nullptr);
	starpu_shutdown();

	// The same device in the next starpu_init(): its worker is the application's.
	conf.not_launched_drivers = &opencl0;
	conf.n_not_launched_drivers = 1;
	std::string err = stderr_of([&] { ASSERT_EQ(starpu_init(&conf), 0); });
	EXPECT_FALSE(contains(err, "not_launched_drivers")) << err;
	ASSERT_EQ(starpu_driver_init(&opencl0), 0);
	EXPECT_EQ(starpu_driver_run_once(&opencl0), 0);
	ASSERT_EQ(starpu_driver_deinit(&opencl0), 0);
	starpu_shutdown();

	// A device the runtime does not use names no worker.
	struct starpu_driver other = { STARPU_OPENCL_WORKER, { 0 } };
	other.id.opencl_id = (cl_device_id)&other;
	conf.not_launched_drivers = &other;
	err = stderr_of([&] { ASSERT_EQ(starpu_init(&conf), 0); });
	EXPECT_TRUE(contains(err, "not_launched_drivers[0]")) << err;
}
#endif

// A program built without OpenCL (as StarPU's CPU programs) and the runtime built with it see one layout.
TEST(DriverStruct, TheLayoutDoesNotDependOnOpenCL)
{
	EXPECT_EQ(sizeof(((struct starpu_driver *)nullptr)->id), sizeof(void *));
	EXPECT_EQ(offsetof(struct starpu_driver, id), sizeof(void *));
	EXPECT_EQ(sizeof(struct starpu_driver), 2 * sizeof(void *));
}

} // namespace
