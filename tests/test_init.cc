// SPDX-License-Identifier: LGPL-2.1-or-later
// starpu_init() / starpu_shutdown(), the configuration and its environment
// variables, worker queries, binding, and pause/resume.
#include "helpers.h"

#include <algorithm>
#include <set>
#include <thread>

#include <sys/resource.h>

using namespace astro_test;

namespace {

std::atomic<int> g_count{0};

void count_func(void **, void *)
{
	g_count++;
}

// Each test states the variables it needs; none leaks in from the caller's shell.
class Init : public ::testing::Test
{
protected:
	void SetUp() override { g_count = 0; }
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
	ScopedEnv ncpus_{"STARPU_NCPUS", nullptr};
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
	ScopedEnv nobind_{"STARPU_WORKERS_NOBIND", nullptr};
	ScopedEnv silent_{"STARPU_SILENT", nullptr};
};

// Runs n tasks and returns how many ran.
int run_tasks(int n)
{
	static starpu_codelet cl = cpu_codelet(count_func, 0, "count");
	int before = g_count;
	for (int i = 0; i < n; i++)
		if (submit_detached(&cl) != 0)
			return -1;
	if (starpu_task_wait_for_all() != 0)
		return -1;
	return g_count - before;
}

// The threads get stacks of 64 TiB (the default for new threads, in a child): the
// workers' threads cannot all be made. starpu_init() says so in one error and
// returns -EAGAIN, the threads it made are joined; with the usual stacks, the
// next starpu_init() works. abort() ended the program before.
void worker_threads_cannot_be_made()
{
	pthread_attr_t huge, usual;
	pthread_attr_init(&huge);
	pthread_attr_init(&usual);
	size_t usual_size = 0;
	pthread_getattr_default_np(&usual);
	pthread_attr_getstacksize(&usual, &usual_size);
	pthread_attr_setstacksize(&huge, (size_t)1 << 46);
	if (pthread_setattr_default_np(&huge) != 0)
		exit(2);
	ScopedEnv ncpu("STARPU_NCPU", "4");
	int ret = starpu_init(nullptr);
	if (ret != -EAGAIN || starpu_is_initialized())
		exit(3);
	pthread_setattr_default_np(&usual);
	if (init_with_ncpus(2) != 0 || run_tasks(3) != 3)
		exit(4);
	starpu_shutdown();
	fprintf(stderr, "went on\n");
	exit(0);
}

TEST(InitDeathTest, WorkerThreadsThatCannotBeMadeFailTheInit)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(worker_threads_cannot_be_made(), testing::ExitedWithCode(0),
		    "\\[astrolabe\\] error: cannot create the thread of CPU [0-9]+ \\([^)]+\\): starpu_init\\(\\) fails with -EAGAIN; "
		    "lower STARPU_NCPU, or raise the limits on threads and memory of the process(.|\n)*went on\n");
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// The address space of the process (its current size, KiB, from /proc/self/status).
size_t address_space_kib()
{
	std::string status = read_file("/proc/self/status");
	size_t at = status.find("VmSize:");
	return at == std::string::npos ? 0 : strtoul(status.c_str() + at + 7, nullptr, 10);
}

// Stacks of 1 GiB and room for 2.5 GiB more in the address space: two workers'
// threads are made, the third is not; the two are joined, starpu_init() returns
// -EAGAIN, and with the limit lifted the next starpu_init() works.
void third_worker_thread_cannot_be_made()
{
	pthread_attr_t big, usual;
	pthread_attr_init(&big);
	pthread_getattr_default_np(&usual);
	pthread_attr_setstacksize(&big, (size_t)1 << 30);
	rlimit saved;
	getrlimit(RLIMIT_AS, &saved);
	size_t now = address_space_kib();
	if (now == 0 || pthread_setattr_default_np(&big) != 0)
		exit(2);
	rlimit limit = saved;
	limit.rlim_cur = (now + 2560 * 1024) * 1024;
	if (setrlimit(RLIMIT_AS, &limit) != 0)
		exit(2);
	ScopedEnv ncpu("STARPU_NCPU", "4");
	int ret = starpu_init(nullptr);
	setrlimit(RLIMIT_AS, &saved);
	pthread_setattr_default_np(&usual);
	if (ret != -EAGAIN || starpu_is_initialized())
		exit(3);
	if (init_with_ncpus(2) != 0 || run_tasks(3) != 3)
		exit(4);
	starpu_shutdown();
	fprintf(stderr, "went on\n");
	exit(0);
}

TEST(InitDeathTest, WorkerThreadsMadeBeforeOneThatCannotBeAreJoined)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(third_worker_thread_cannot_be_made(), testing::ExitedWithCode(0),
		    "\\[astrolabe\\] error: cannot create the thread of CPU 2 \\([^)]+\\): starpu_init\\(\\) fails with -EAGAIN(.|\n)*went on\n");
}
#endif

// Worker threads carry their worker's name, as StarPU's do (top, perf and gdb show it).
void record_thread_name(void **, void *arg)
{
	std::string *name = static_cast<std::string *>(arg);
	*name = read_file("/proc/thread-self/comm");
}

TEST_F(Init, WorkerThreadsAreNamedAfterTheirWorker)
{
	starpu_conf conf = conf_with_ncpus(2);
	ASSERT_EQ(starpu_init(&conf), 0);
	static starpu_codelet cl = cpu_codelet(record_thread_name, 0, "record_thread_name");
	for (int w = 0; w < 2; w++) {
		std::string name;
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = &name;
		t->execute_on_a_specific_worker = 1;
		t->workerid = (unsigned)w;
		t->synchronous = 1;
		ASSERT_EQ(starpu_task_submit(t), 0);
		EXPECT_EQ(name, "CPU " + std::to_string(w) + "\n");
	}
	starpu_shutdown();
}

TEST_F(Init, InitShutdownRepeated)
{
	for (int round = 0; round < 3; round++) {
		SCOPED_TRACE(round);
		ASSERT_EQ(starpu_is_initialized(), 0);
		ASSERT_EQ(starpu_init(nullptr), 0);
		EXPECT_EQ(starpu_is_initialized(), 1);
		EXPECT_GE(starpu_worker_get_count(), 1u);
		EXPECT_EQ(run_tasks(10), 10);
		starpu_shutdown();
		EXPECT_EQ(starpu_is_initialized(), 0);
	}
}

TEST_F(Init, NestedInitIsReferenceCounted)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	ASSERT_EQ(init_with_ncpus(2), 0);
	// The first configuration stays.
	EXPECT_EQ(starpu_worker_get_count(), 1u);
	starpu_shutdown();
	EXPECT_EQ(starpu_is_initialized(), 1);
	EXPECT_EQ(run_tasks(5), 5);
	starpu_shutdown();
	EXPECT_EQ(starpu_is_initialized(), 0);
}

TEST_F(Init, ShutdownWithoutInitIsReported)
{
	std::string err = stderr_of([] { starpu_shutdown(); });
	EXPECT_TRUE(contains(err, "starpu_shutdown")) << err;
	EXPECT_EQ(starpu_is_initialized(), 0);
}

TEST_F(Init, ConfInitDefaults)
{
	starpu_conf conf;
	memset(&conf, 0x5a, sizeof(conf));
	ASSERT_EQ(starpu_conf_init(&conf), 0);
	EXPECT_EQ(conf.magic, STARPU_CONF_MAGIC);
	EXPECT_EQ(conf.sched_policy_name, nullptr);
	EXPECT_EQ(conf.sched_policy, nullptr);
	EXPECT_EQ(conf.ncpus, -1);
	EXPECT_EQ(conf.reserve_ncpus, -1);
	EXPECT_EQ(conf.ncuda, -1);
	EXPECT_EQ(conf.nopencl, -1);
	EXPECT_EQ(conf.nhip, -1);
	EXPECT_EQ(conf.nmax_fpga, -1);
	EXPECT_EQ(conf.nmpi_ms, -1);
	EXPECT_EQ(conf.ntcpip_ms, -1);
	EXPECT_EQ(conf.calibrate, -1);
	EXPECT_EQ(conf.bus_calibrate, -1);
	EXPECT_EQ(conf.catch_signals, -1);
	EXPECT_EQ(conf.precedence_over_environment_variables, 0);
	EXPECT_EQ(conf.start_on_pause, 0);
	EXPECT_EQ(conf.use_explicit_workers_bindid, 0u);
	EXPECT_EQ(conf.callback_worker_going_to_sleep, nullptr);
	EXPECT_EQ(conf.global_sched_ctx_min_priority, -1);
	EXPECT_EQ(conf.global_sched_ctx_max_priority, -1);

	EXPECT_EQ(starpu_conf_noworker(&conf), 0);
	EXPECT_EQ(conf.ncpus, 0);
	EXPECT_EQ(conf.ncuda, 0);
	EXPECT_EQ(conf.nopencl, 0);
	EXPECT_EQ(conf.magic, STARPU_CONF_MAGIC);

	std::string err = stderr_of([] { EXPECT_EQ(starpu_conf_init(nullptr), -EINVAL); });
	EXPECT_TRUE(contains(err, "starpu_conf_init")) << err;
}

TEST_F(Init, OneCpu)
{
	starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncpus = 1;
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_worker_get_count(), 1u);
	EXPECT_EQ(starpu_cpu_worker_get_count(), 1u);
	EXPECT_EQ(run_tasks(20), 20);
}

TEST_F(Init, NoWorker)
{
	starpu_conf conf;
	starpu_conf_init(&conf);
	starpu_conf_noworker(&conf);
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok()) << rt.ret();
	EXPECT_EQ(starpu_worker_get_count(), 0u);
	EXPECT_EQ(starpu_cpu_worker_get_count(), 0u);

	starpu_codelet cl = cpu_codelet(count_func, 0, "nowhere_to_run");
	starpu_task task;
	starpu_task_init(&task);
	task.cl = &cl;
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_task_submit(&task); });
	EXPECT_EQ(ret, -ENODEV);
	EXPECT_TRUE(contains(err, "nowhere_to_run")) << err;
	starpu_task_clean(&task);

	// A task without codelet needs no worker.
	starpu_task sync;
	starpu_task_init(&sync);
	sync.cl = nullptr;
	sync.detach = 0;
	ASSERT_EQ(starpu_task_submit(&sync), 0);
	EXPECT_EQ(starpu_task_wait(&sync), 0);
	EXPECT_EQ(g_count, 0);
	starpu_task_clean(&sync);
}

TEST_F(Init, EnvNcpuOverridesConf)
{
	ScopedEnv ncpu("STARPU_NCPU", "1");
	starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncpus = 2;
	{
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		EXPECT_EQ(starpu_worker_get_count(), 1u);
	}
	conf.precedence_over_environment_variables = 1;
	{
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		EXPECT_EQ(starpu_worker_get_count(), 2u);
		EXPECT_EQ(run_tasks(10), 10);
	}
}

TEST_F(Init, EnvNcpusAlias)
{
	ScopedEnv ncpus("STARPU_NCPUS", "1");
	starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncpus = 2;
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_worker_get_count(), 1u);
}

TEST_F(Init, EnvNcpuWinsOverAlias)
{
	ScopedEnv ncpu("STARPU_NCPU", "2");
	ScopedEnv ncpus("STARPU_NCPUS", "1");
	Runtime rt(static_cast<starpu_conf *>(nullptr));
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_worker_get_count(), 2u);
}

TEST_F(Init, BadNcpuValueIsReportedAndIgnored)
{
	unsigned default_count;
	{
		Runtime rt(static_cast<starpu_conf *>(nullptr));
		ASSERT_TRUE(rt.ok());
		default_count = starpu_worker_get_count();
	}
	ScopedEnv ncpu("STARPU_NCPU", "abc");
	{
		int ret = -1;
		std::string err = stderr_of([&] { ret = starpu_init(nullptr); });
		ASSERT_EQ(ret, 0);
		EXPECT_TRUE(contains(err, "STARPU_NCPU")) << err;
		EXPECT_TRUE(contains(err, "abc")) << err;
		EXPECT_EQ(starpu_worker_get_count(), default_count);
		EXPECT_EQ(run_tasks(5), 5);
		starpu_shutdown();
	}
	{
		// The conf's value is used, not the bad variable.
		starpu_conf conf;
		starpu_conf_init(&conf);
		conf.ncpus = 1;
		int ret = -1;
		std::string err = stderr_of([&] { ret = starpu_init(&conf); });
		ASSERT_EQ(ret, 0);
		EXPECT_TRUE(contains(err, "abc")) << err;
		EXPECT_EQ(starpu_worker_get_count(), 1u);
		starpu_shutdown();
	}
}

int count_lines(const std::string &text)
{
	return (int)std::count(text.begin(), text.end(), '\n');
}

// A meaningless count is said once, naming the variable, its value and the count used instead.
TEST_F(Init, NegativeOrGarbageWorkerCountIsSaidOnce)
{
	unsigned default_count;
	{
		Runtime rt(static_cast<starpu_conf *>(nullptr));
		ASSERT_TRUE(rt.ok());
		default_count = starpu_worker_get_count();
	}
	struct Case
	{
		const char *var, *value, *why;
	} cases[] = {
		{ "STARPU_NCPU", "-5", "negative" },
		{ "STARPU_NCPUS", "-5", "negative" },
		{ "STARPU_NCPU", "abc", "not a number" },
		{ "STARPU_NCPUS", "4x", "not a number" },
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(std::string(c.var) + "=" + c.value);
		ScopedEnv var(c.var, c.value);
		int ret = -1;
		std::string err = stderr_of([&] { ret = starpu_init(nullptr); });
		ASSERT_EQ(ret, 0);
		EXPECT_EQ(err, std::string("[astrolabe] error: ") + c.var + "='" + c.value + "' is " + c.why + ": ignored, using " +
				       std::to_string(default_count) + "\n");
		EXPECT_EQ(starpu_worker_get_count(), default_count);
		EXPECT_EQ(run_tasks(5), 5);
		err = stderr_of([] { starpu_shutdown(); });
		EXPECT_EQ(err, "");
	}
}

TEST_F(Init, BadCalibrateIsSaidOnce)
{
	for (const char *bad : { "abc", "7", "-2" }) {
		SCOPED_TRACE(bad);
		ScopedEnv calibrate("STARPU_CALIBRATE", bad);
		int ret = -1;
		std::string err = stderr_of([&] { ret = init_with_ncpus(1); });
		ASSERT_EQ(ret, 0);
		EXPECT_EQ(count_lines(err), 1) << err;
		EXPECT_TRUE(contains(err, std::string("STARPU_CALIBRATE='") + bad + "' is ")) << err;
		EXPECT_TRUE(contains(err, ": ignored, using 0")) << err;
		starpu_shutdown();
	}
}

// ------------------------------------------------- repeated messages

// Submits a task pinned to worker `worker`, which does not exist: refused with one error naming it.
int submit_to_missing_worker(unsigned worker)
{
	static starpu_codelet cl = cpu_codelet(count_func, 0, "pinned");
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->execute_on_a_specific_worker = 1;
	t->workerid = worker;
	int ret = starpu_task_submit(t);
	if (ret)
		starpu_task_destroy(t);
	return ret;
}

std::string missing_worker_error(unsigned worker)
{
	return "[astrolabe] error: task 'pinned' asks for worker " + std::to_string(worker) +
	       " but there are only 1 workers: fix task->workerid";
}

// The same error from every task is printed once, and its repeats counted at shutdown.
TEST_F(Init, RepeatedErrorIsPrintedOnceThenCounted)
{
	for (int session = 0; session < 2; session++) {
		SCOPED_TRACE(session);
		ASSERT_EQ(init_with_ncpus(1), 0);
		std::string err = stderr_of([] {
			for (int i = 0; i < 200; i++)
				EXPECT_EQ(submit_to_missing_worker(7), -EINVAL);
		});
		// Each session starts afresh: the first one is printed again.
		EXPECT_EQ(err, missing_worker_error(7) + "\n");
		err = stderr_of([] { starpu_shutdown(); });
		EXPECT_EQ(err, missing_worker_error(7) + " (repeated 199 times)\n");
	}
}

TEST_F(Init, RepeatedErrorsAreCountedInTheOrderFirstSeen)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	std::string err = stderr_of([] {
		for (int i = 0; i < 3; i++) {
			EXPECT_EQ(submit_to_missing_worker(8), -EINVAL);
			EXPECT_EQ(submit_to_missing_worker(5), -EINVAL);
		}
		EXPECT_EQ(submit_to_missing_worker(9), -EINVAL);
	});
	EXPECT_EQ(err, missing_worker_error(8) + "\n" + missing_worker_error(5) + "\n" + missing_worker_error(9) + "\n");
	err = stderr_of([] { starpu_shutdown(); });
	// A message seen once has nothing to add.
	EXPECT_EQ(err, missing_worker_error(8) + " (repeated 2 times)\n" + missing_worker_error(5) + " (repeated 2 times)\n");
}

TEST_F(Init, RepeatedErrorFromSeveralThreads)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	std::string err = stderr_of([] {
		std::vector<std::thread> threads;
		for (int t = 0; t < 4; t++)
			threads.emplace_back([] {
				for (int i = 0; i < 50; i++)
					EXPECT_EQ(submit_to_missing_worker(6), -EINVAL);
			});
		for (std::thread &t : threads)
			t.join();
	});
	EXPECT_EQ(err, missing_worker_error(6) + "\n");
	err = stderr_of([] { starpu_shutdown(); });
	EXPECT_EQ(err, missing_worker_error(6) + " (repeated 199 times)\n");
}

// The memory is bounded: past a few hundred distinct messages, new ones are printed each time, not remembered.
TEST_F(Init, RepeatedMessagesAreTrackedWithinABound)
{
	const unsigned kDistinct = 1000;
	ASSERT_EQ(init_with_ncpus(1), 0);
	std::string err = stderr_of([&] {
		for (unsigned w = 0; w < kDistinct; w++)
			EXPECT_EQ(submit_to_missing_worker(10 + w), -EINVAL);
	});
	EXPECT_EQ(count_lines(err), (int)kDistinct);
	err = stderr_of([&] {
		EXPECT_EQ(submit_to_missing_worker(10), -EINVAL);		// tracked: counted
		EXPECT_EQ(submit_to_missing_worker(10 + kDistinct - 1), -EINVAL); // beyond the bound: printed again
	});
	EXPECT_EQ(err, missing_worker_error(10 + kDistinct - 1) + "\n");
	err = stderr_of([] { starpu_shutdown(); });
	EXPECT_EQ(err, missing_worker_error(10) + " (repeated 1 time)\n");
}

// Outside a session nothing is held back: each call is told.
TEST_F(Init, MessagesOutsideASessionAreAllPrinted)
{
	std::string err = stderr_of([] {
		starpu_shutdown();
		starpu_shutdown();
	});
	EXPECT_EQ(count_lines(err), 2) << err;
}

TEST_F(Init, UnknownSchedPolicyFallsBack)
{
	ScopedEnv sched("STARPU_SCHED", "nonexistent");
	int ret = -1;
	std::string err = stderr_of([&] { ret = init_with_ncpus(2); });
	ASSERT_EQ(ret, 0);
	EXPECT_TRUE(contains(err, "nonexistent")) << err;
	EXPECT_EQ(policy_name(), "lws");
	EXPECT_EQ(run_tasks(20), 20);
	starpu_shutdown();
}

TEST_F(Init, SchedHelpListsPolicies)
{
	ScopedEnv sched("STARPU_SCHED", "help");
	int ret = -1;
	std::string err = stderr_of([&] { ret = init_with_ncpus(1); });
	ASSERT_EQ(ret, 0);
	EXPECT_TRUE(contains(err, "STARPU_SCHED")) << err;
	EXPECT_TRUE(contains(err, "eager")) << err;
	EXPECT_TRUE(contains(err, "lws")) << err;
	EXPECT_EQ(policy_name(), "lws");
	EXPECT_EQ(run_tasks(3), 3);
	starpu_shutdown();
}

TEST_F(Init, ConfPolicyName)
{
	starpu_conf conf = conf_with_ncpus(1);
	conf.sched_policy_name = "eager";
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(policy_name(), "eager");
	EXPECT_EQ(run_tasks(3), 3);
}

int pushes(starpu_task *)
{
	return 0;
}

// A policy handed in conf.sched_policy is checked like a plugin's: one without
// pop_task is refused with one message, and the usual choice applies instead.
TEST_F(Init, ConfPolicyWithoutPopIsRefused)
{
	static starpu_sched_policy broken = {};
	broken.push_task = pushes;
	broken.policy_name = "nopop_conf";
	starpu_conf conf = conf_with_ncpus(1);
	conf.sched_policy = &broken;
	conf.sched_policy_name = "eager";
	std::string err = stderr_of([&] {
		ASSERT_EQ(starpu_init(&conf), 0);
	});
	EXPECT_EQ(count_lines(err), 1) << err;
	EXPECT_TRUE(contains(err, "scheduling policy 'nopop_conf' (conf.sched_policy) has no pop_task")) << err;
	EXPECT_EQ(policy_name(), "eager");
	EXPECT_EQ(run_tasks(3), 3);
	starpu_shutdown();
}

std::atomic<int> g_worker_seen{-2};

void record_worker(void **, void *)
{
	g_worker_seen = starpu_worker_get_id();
}

TEST_F(Init, WorkerQueries)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_worker_get_count(), 2u);
	EXPECT_EQ(starpu_cpu_worker_get_count(), 2u);
	EXPECT_EQ(starpu_cuda_worker_get_count(), 0u);
	EXPECT_EQ(starpu_opencl_worker_get_count(), 0u);
	EXPECT_EQ(starpu_worker_get_id(), -1);
	EXPECT_EQ(starpu_worker_get_count_by_type(STARPU_CPU_WORKER), 2);
	EXPECT_EQ(starpu_worker_get_count_by_type(STARPU_CUDA_WORKER), 0);
	EXPECT_EQ(starpu_worker_get_count_by_type(STARPU_ANY_WORKER), 2);

	char name[64];
	starpu_worker_get_name(0, name, sizeof(name));
	EXPECT_STREQ(name, "CPU 0");
	starpu_worker_get_name(1, name, sizeof(name));
	EXPECT_STREQ(name, "CPU 1");
	EXPECT_EQ(starpu_worker_get_type(0), STARPU_CPU_WORKER);
	EXPECT_EQ(starpu_worker_get_type(1), STARPU_CPU_WORKER);
	// As ints: STARPU_UNKNOWN_WORKER (-1) lies outside the enum's range in C++ (UBSan flags the enum load).
	EXPECT_EQ(static_cast<int>(starpu_worker_get_type(7)), static_cast<int>(STARPU_UNKNOWN_WORKER));
	EXPECT_EQ(starpu_worker_get_devid(1), 1);
	EXPECT_EQ(starpu_worker_get_memory_node(0), (unsigned)STARPU_MAIN_RAM);
	EXPECT_STREQ(starpu_worker_get_type_as_string(STARPU_CPU_WORKER), "CPU");
	// As in the names of environment variables (StarPU's heteroprio builds STARPU_LAHETEROPRIO_S_<this>).
	EXPECT_STREQ(starpu_worker_get_type_as_env_var(STARPU_CPU_WORKER), "CPU");
	EXPECT_STREQ(starpu_worker_get_type_as_env_var(STARPU_OPENCL_WORKER), "OPENCL");
	EXPECT_STREQ(starpu_worker_get_type_as_env_var(STARPU_MAX_FPGA_WORKER), "MAX_FPGA");
	EXPECT_EQ(starpu_worker_get_type_as_env_var(STARPU_ANY_WORKER), nullptr);

	EXPECT_EQ(starpu_worker_get_by_type(STARPU_CPU_WORKER, 0), 0);
	EXPECT_EQ(starpu_worker_get_by_type(STARPU_CPU_WORKER, 1), 1);
	EXPECT_EQ(starpu_worker_get_by_type(STARPU_CPU_WORKER, 2), -1);
	EXPECT_EQ(starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0), -1);
	EXPECT_EQ(starpu_worker_get_by_devid(STARPU_CPU_WORKER, 1), 1);

	int ids[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
	EXPECT_EQ(starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids, 8), 2u);
	EXPECT_EQ(ids[0], 0);
	EXPECT_EQ(ids[1], 1);
	EXPECT_EQ(ids[2], -1);
	EXPECT_EQ(starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, ids, 1), 1u);
	EXPECT_EQ(starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, 8), 0u);

	// Inside a codelet, the id of the worker running it.
	starpu_codelet cl = cpu_codelet(record_worker, 0, "record_worker");
	for (unsigned w = 0; w < 2; w++) {
		g_worker_seen = -2;
		starpu_task task;
		starpu_task_init(&task);
		task.cl = &cl;
		task.execute_on_a_specific_worker = 1;
		task.workerid = w;
		task.synchronous = 1;
		ASSERT_EQ(starpu_task_submit(&task), 0);
		EXPECT_EQ(g_worker_seen, (int)w);
		starpu_task_clean(&task);
	}
}

TEST_F(Init, WorkersAreBoundByDefault)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	int b0 = starpu_worker_get_bindid(0), b1 = starpu_worker_get_bindid(1);
	EXPECT_GE(b0, 0);
	EXPECT_GE(b1, 0);
	EXPECT_EQ(starpu_worker_get_bindid(5), -1);
}

TEST_F(Init, NoBind)
{
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", "1");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_worker_get_bindid(0), -1);
	EXPECT_EQ(starpu_worker_get_bindid(1), -1);
	EXPECT_EQ(run_tasks(10), 10);
}

TEST_F(Init, PauseHoldsTasksUntilResume)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_is_paused(), 0);
	starpu_pause();
	EXPECT_EQ(starpu_is_paused(), 1);
	sleep_ms(20); // let the workers notice
	const int n = 16;
	starpu_codelet cl = cpu_codelet(count_func, 0, "paused");
	for (int i = 0; i < n; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	sleep_ms(100);
	EXPECT_EQ(g_count, 0);
	EXPECT_EQ(starpu_task_nsubmitted(), n);
	starpu_resume();
	EXPECT_EQ(starpu_is_paused(), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_count, n);
	EXPECT_EQ(starpu_task_nsubmitted(), 0);
}

TEST_F(Init, StartOnPause)
{
	starpu_conf conf = conf_with_ncpus(1);
	conf.start_on_pause = 1;
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_is_paused(), 1);
	starpu_codelet cl = cpu_codelet(count_func, 0, "start_on_pause");
	ASSERT_EQ(submit_detached(&cl), 0);
	sleep_ms(50);
	EXPECT_EQ(g_count, 0);
	starpu_resume();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_count, 1);
}

TEST_F(Init, ConfWithoutMagicIsRefused)
{
	starpu_conf conf;
	memset(&conf, 0, sizeof(conf));
	conf.ncpus = 1;
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_init(&conf); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_EQ(starpu_is_initialized(), 0);
	EXPECT_TRUE(contains(err, "starpu_conf_init")) << err;
	// The failure leaves nothing behind: a correct init works.
	ASSERT_EQ(init_with_ncpus(1), 0);
	EXPECT_EQ(run_tasks(2), 2);
	starpu_shutdown();
}

TEST_F(Init, Version)
{
	int major = 0, minor = 0, release = -1;
	starpu_get_version(&major, &minor, &release);
	EXPECT_EQ(major, 1);
	EXPECT_EQ(minor, 4);
	EXPECT_GE(release, 0);
}


// ------------------------------------------ copy switches and what the runtime cannot do (issue 40)

class InitCopies : public Init
{
protected:
	ScopedEnv all_{"STARPU_DISABLE_ASYNCHRONOUS_COPY", nullptr};
	ScopedEnv opencl_{"STARPU_DISABLE_ASYNCHRONOUS_OPENCL_COPY", nullptr};
	ScopedEnv cuda_{"STARPU_DISABLE_ASYNCHRONOUS_CUDA_COPY", nullptr};
	ScopedEnv map_{"STARPU_ENABLE_MAP", nullptr};
	ScopedEnv locality_{"STARPU_DATA_LOCALITY_ENFORCE", nullptr};
	ScopedEnv fast_alloc_{"STARPU_CUDA_ONLY_FAST_ALLOC_OTHER_MEMNODES", nullptr};
};

TEST_F(InitCopies, ConfInitLeavesTheNewSwitchesToTheEnvironment)
{
	starpu_conf conf;
	starpu_conf_init(&conf);
	EXPECT_EQ(conf.disable_asynchronous_hip_copy, -1);
	EXPECT_EQ(conf.disable_asynchronous_opencl_copy, -1);
	EXPECT_EQ(conf.disable_asynchronous_mpi_ms_copy, -1);
	EXPECT_EQ(conf.disable_asynchronous_tcpip_ms_copy, -1);
	EXPECT_EQ(conf.disable_asynchronous_max_fpga_copy, -1);
	EXPECT_EQ(conf.data_locality_enforce, -1);
	EXPECT_EQ(conf.cuda_only_fast_alloc_other_memnodes, -1);
	EXPECT_EQ(conf.use_explicit_workers_opencl_gpuid, 0u);
	EXPECT_EQ(conf.max_fpga_load, nullptr);
	EXPECT_EQ(conf.n_cuda_opengl_interoperability, 0u);
}

TEST_F(InitCopies, CopiesAreAsynchronousByDefault)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_asynchronous_copy_disabled(), 0);
	EXPECT_EQ(starpu_asynchronous_cuda_copy_disabled(), 0);
	EXPECT_EQ(starpu_asynchronous_opencl_copy_disabled(), 0);
	EXPECT_EQ(starpu_asynchronous_hip_copy_disabled(), 0);
	EXPECT_EQ(starpu_asynchronous_max_fpga_copy_disabled(), 0);
	EXPECT_EQ(starpu_asynchronous_mpi_ms_copy_disabled(), 0);
	EXPECT_EQ(starpu_asynchronous_tcpip_ms_copy_disabled(), 0);
	EXPECT_EQ(starpu_asynchronous_copy_disabled_for(STARPU_OPENCL_RAM), 0);
	EXPECT_EQ(starpu_map_enabled(), 0);
}

TEST_F(InitCopies, OneKindOfDeviceFromTheConf)
{
	starpu_conf conf = conf_with_ncpus(1);
	conf.disable_asynchronous_opencl_copy = 1;
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_asynchronous_opencl_copy_disabled(), 1);
	EXPECT_EQ(starpu_asynchronous_copy_disabled_for(STARPU_OPENCL_RAM), 1);
	EXPECT_EQ(starpu_asynchronous_cuda_copy_disabled(), 0);
	EXPECT_EQ(starpu_asynchronous_copy_disabled_for(STARPU_CUDA_RAM), 0);
	EXPECT_EQ(starpu_asynchronous_copy_disabled(), 0);
}

TEST_F(InitCopies, TheGeneralSwitchFromTheEnvironmentTurnsEveryKindOn)
{
	ScopedEnv all("STARPU_DISABLE_ASYNCHRONOUS_COPY", "1");
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_asynchronous_copy_disabled(), 1);
	EXPECT_EQ(starpu_asynchronous_cuda_copy_disabled(), 1);
	EXPECT_EQ(starpu_asynchronous_hip_copy_disabled(), 1);
	EXPECT_EQ(starpu_asynchronous_tcpip_ms_copy_disabled(), 1);
	EXPECT_EQ(starpu_asynchronous_copy_disabled_for(STARPU_CPU_RAM), 1);
	EXPECT_EQ(starpu_asynchronous_copy_disabled_for(STARPU_MAX_FPGA_RAM), 1);
}

TEST_F(InitCopies, KindEnvironmentVariableAndBadKind)
{
	ScopedEnv cuda("STARPU_DISABLE_ASYNCHRONOUS_CUDA_COPY", "1");
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_asynchronous_cuda_copy_disabled(), 1);
	EXPECT_EQ(starpu_asynchronous_opencl_copy_disabled(), 0);
	int got = 0;
	std::string err = stderr_of([&] { got = starpu_asynchronous_copy_disabled_for(STARPU_UNUSED); });
	EXPECT_EQ(got, -EINVAL);
	EXPECT_TRUE(contains(err, "is not a memory node kind")) << err;
}

TEST_F(InitCopies, WhatTheRuntimeCannotDoIsSaidAtInit)
{
	int load = 0;
	unsigned devices[1] = {0};
	starpu_conf conf = conf_with_ncpus(1);
	conf.enable_map = 1;
	conf.data_locality_enforce = 1;
	conf.cuda_only_fast_alloc_other_memnodes = 1;
	conf.use_explicit_workers_opencl_gpuid = 1;
	conf.use_explicit_workers_hip_gpuid = 1;
	conf.max_fpga_load = &load;
	conf.cuda_opengl_interoperability = devices;
	conf.n_cuda_opengl_interoperability = 1;
	int ret = -1;
	std::string err = stderr_of([&] { ret = starpu_init(&conf); });
	ASSERT_EQ(ret, 0) << err;
	EXPECT_EQ(starpu_map_enabled(), 0) << "data is copied between nodes";
	starpu_shutdown();
	EXPECT_TRUE(contains(err, "mapping memory between nodes is not supported")) << err;
	EXPECT_TRUE(contains(err, "STARPU_DATA_LOCALITY_ENFORCE")) << err;
	EXPECT_TRUE(contains(err, "STARPU_CUDA_ONLY_FAST_ALLOC_OTHER_MEMNODES")) << err;
	EXPECT_TRUE(contains(err, "use_explicit_workers_opencl_gpuid: choosing devices by number is not supported")) << err;
	EXPECT_TRUE(contains(err, "no HIP, Maxeler FPGA or MPI master-slave driver")) << err;
	EXPECT_TRUE(contains(err, "max_fpga_load")) << err;
	EXPECT_TRUE(contains(err, "CUDA/OpenGL interoperability is not supported")) << err;
}

TEST_F(InitCopies, MapAskedByTheEnvironmentIsSaid)
{
	ScopedEnv map("STARPU_ENABLE_MAP", "1");
	int ret = -1;
	std::string err = stderr_of([&] { ret = init_with_ncpus(1); });
	ASSERT_EQ(ret, 0) << err;
	EXPECT_EQ(starpu_map_enabled(), 0);
	starpu_shutdown();
	EXPECT_TRUE(contains(err, "STARPU_ENABLE_MAP")) << err;
}

} // namespace
