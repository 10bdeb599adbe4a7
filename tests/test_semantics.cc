// SPDX-License-Identifier: LGPL-2.1-or-later
// Data and task semantics as StarPU's own programs rely on them (issue 23):
// const codelets, sequential consistency in starpu_task_insert, regenerated
// tasks with declared dependencies, end dependencies, worker order, tags,
// commuting accesses, acquire callbacks, reductions, scratch buffers,
// partition plans, and the small helpers of the 1.4 headers.
#include "helpers.h"

#include <cinttypes>
#include <sstream>

using namespace astro_test;

namespace {

std::atomic<int> g_runs{0};

void count_func(void **, void *)
{
	g_runs++;
}

// A codelet the program declares const: constant-initialized, so the compiler
// places it in read-only memory (.rodata, or the part the loader makes
// read-only after relocation in a position-independent program).
const struct starpu_codelet const_cl = {
	.where = STARPU_CPU,
	.cpu_funcs = { count_func },
	.nbuffers = 0,
	.name = "const_codelet",
};

// Is address in a mapping the process may not write (from /proc/self/maps)?
bool mapped_read_only(const void *address)
{
	std::istringstream maps(read_file("/proc/self/maps"));
	std::string line;
	uintptr_t a = (uintptr_t)address;
	while (std::getline(maps, line)) {
		uintptr_t start, end;
		char perms[5] = "";
		if (sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %4s", &start, &end, perms) == 3 && a >= start && a < end)
			return perms[1] != 'w';
	}
	return false;
}

// A variable handle on x.
starpu_data_handle_t register_int(int *x)
{
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)x, sizeof(*x));
	return h;
}

// A CPU codelet with one buffer accessed in mode.
starpu_codelet one_buffer_codelet(starpu_cpu_func_t f, const char *name, int mode)
{
	starpu_codelet cl = cpu_codelet(f, 1, name);
	cl.modes[0] = (starpu_data_access_mode)mode;
	return cl;
}

class Semantics : public ::testing::Test
{
protected:
	void SetUp() override { g_runs = 0; }
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
};

// ------------------------------------------------------------ const codelet

TEST_F(Semantics, ConstCodeletInReadOnlyMemoryRunsAndIsCounted)
{
	ASSERT_TRUE(mapped_read_only(&const_cl)) << "the test's premise: the const codelet lies in read-only memory";
	ScopedEnv profiling("STARPU_CODELET_PROFILING", "1");
	ASSERT_EQ(init_with_ncpus(2), 0);
	const int n = 20;
	for (int i = 0; i < n; i++) {
		starpu_task *task = starpu_task_create();
		task->cl = const_cast<starpu_codelet *>(&const_cl);
		ASSERT_EQ(starpu_task_submit(task), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_runs, n);
	// The counts live in the runtime's own record: the display still sums them.
	std::string shown = stderr_of([] { starpu_codelet_display_stats(const_cast<starpu_codelet *>(&const_cl)); });
	EXPECT_TRUE(contains(shown, "Statistics for codelet const_codelet")) << shown;
	EXPECT_TRUE(contains(shown, "/ 20 (")) << shown;
}

TEST_F(Semantics, WritableCodeletGetsPerWorkerStats)
{
	ScopedEnv profiling("STARPU_CODELET_PROFILING", "1");
	ASSERT_EQ(init_with_ncpus(2), 0);
	starpu_codelet cl = cpu_codelet(count_func, 0, "writable");
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	unsigned long total = 0;
	for (unsigned w = 0; w < STARPU_NMAXWORKERS; w++)
		total += cl.per_worker_stats[w];
	EXPECT_EQ(total, 10u);
}

// ------------------------------------------- per-handle sequential consistency

std::atomic<int> g_released{0};
std::atomic<int> g_waited_ok{0};

// Waits (bounded) for a task that the program means to run meanwhile.
void wait_for_release(void **, void *)
{
	g_waited_ok = wait_until([] { return g_released.load() != 0; }, 30000) ? 1 : 0;
}

void release_func(void **, void *)
{
	g_released = 1;
}

TEST_F(Semantics, HandlesSequentialConsistencyOffLetsATaskOvertake)
{
	g_released = 0;
	g_waited_ok = 0;
	ASSERT_EQ(init_with_ncpus(2), 0);
	int x = 0;
	starpu_data_handle_t h = register_int(&x);
	starpu_codelet waiter = one_buffer_codelet(wait_for_release, "waiter", STARPU_RW);
	starpu_codelet releaser = one_buffer_codelet(release_func, "releaser", STARPU_RW);
	unsigned char no_consistency[1] = { 0 };
	ASSERT_EQ(starpu_task_insert(&waiter, STARPU_RW, h, 0), 0);
	// Without the flag the second writer would wait for the first, which waits for it.
	ASSERT_EQ(starpu_task_insert(&releaser, STARPU_RW, h, STARPU_HANDLES_SEQUENTIAL_CONSISTENCY, no_consistency, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_waited_ok, 1) << "the task inserted without consistency on its handle waited for the earlier writer";
	starpu_data_unregister(h);
}

std::atomic<int> g_order{0};
std::atomic<int> g_first_done_before_second{0};

void first_func(void **, void *)
{
	sleep_ms(20);
	g_order = 1;
}

void second_func(void **, void *)
{
	g_first_done_before_second = g_order.load();
}

TEST_F(Semantics, HandlesSequentialConsistencyOnKeepsTheOrder)
{
	g_order = 0;
	g_first_done_before_second = 0;
	ASSERT_EQ(init_with_ncpus(2), 0);
	int x = 0;
	starpu_data_handle_t h = register_int(&x);
	starpu_codelet first = one_buffer_codelet(first_func, "first", STARPU_RW);
	starpu_codelet second = one_buffer_codelet(second_func, "second", STARPU_RW);
	unsigned char consistency[1] = { 1 };
	ASSERT_EQ(starpu_task_insert(&first, STARPU_RW, h, 0), 0);
	ASSERT_EQ(starpu_task_insert(&second, STARPU_RW, h, STARPU_HANDLES_SEQUENTIAL_CONSISTENCY, consistency, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_first_done_before_second, 1);
	starpu_data_unregister(h);
}

// ------------------------------------------------- regenerated task pipeline

const unsigned kRounds = 300;
std::atomic<unsigned> g_stage_runs[3];
std::atomic<int> g_stages_done{0};

// The second stage's first run lasts until the first stage ran all its
// rounds: the completions it did not see yet must still each count once.
void stage_func(void **, void *arg)
{
	if ((intptr_t)arg == 1 && g_stage_runs[1] == 0)
		wait_until([] { return g_stage_runs[0].load() == kRounds; }, 30000);
}

// Each stage stops regenerating after kRounds runs.
void stage_callback(void *arg)
{
	std::atomic<unsigned> *runs = (std::atomic<unsigned> *)arg;
	if (++*runs == kRounds) {
		starpu_task_get_current()->regenerate = 0;
		g_stages_done++;
	}
}

TEST_F(Semantics, RegeneratedPipelineRunsEachStageOncePerRound)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	for (auto &r : g_stage_runs)
		r = 0;
	g_stages_done = 0;
	starpu_codelet cl = cpu_codelet(stage_func, 0, "stage");
	starpu_task stages[3];
	for (int i = 0; i < 3; i++) {
		starpu_task_init(&stages[i]);
		stages[i].cl = &cl;
		stages[i].cl_arg = (void *)(intptr_t)i;
		stages[i].regenerate = 1;
		stages[i].callback_func = stage_callback;
		stages[i].callback_arg = &g_stage_runs[i];
		if (i > 0) {
			starpu_task *pred = &stages[i - 1];
			starpu_task_declare_deps_array(&stages[i], 1, &pred);
		}
	}
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(starpu_task_submit(&stages[i]), 0);
	ASSERT_TRUE(wait_until([] { return g_stages_done.load() == 3; }, 30000))
		<< "runs: " << g_stage_runs[0] << " " << g_stage_runs[1] << " " << g_stage_runs[2];
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(g_stage_runs[i].load(), kRounds) << "stage " << i;
		starpu_task_clean(&stages[i]);
	}
}

// --------------------------------------------------------- end dependencies

std::atomic<int> g_body_ran{0};
std::atomic<int> g_end_ran{0};

void body_func(void **, void *)
{
	g_body_ran++;
}

void end_func(void **, void *)
{
	g_end_ran++;
}

// starpu_task_wait(task) on another thread: done turns true when it returned.
std::thread waiter_of(starpu_task *task, std::atomic<int> *done)
{
	return std::thread([task, done] {
		EXPECT_EQ(starpu_task_wait(task), 0);
		*done = 1;
	});
}

TEST_F(Semantics, EndDepAddHoldsTheTaskUntilReleased)
{
	g_body_ran = 0;
	ASSERT_EQ(init_with_ncpus(2), 0);
	starpu_codelet cl = cpu_codelet(body_func, 0, "body");
	starpu_task *task = starpu_task_create();
	task->cl = &cl;
	task->detach = 0;
	task->destroy = 0;
	starpu_task_end_dep_add(task, 1);
	ASSERT_EQ(starpu_task_submit(task), 0);
	ASSERT_TRUE(wait_until([] { return g_body_ran.load() == 1; }, 30000));
	std::atomic<int> done{0};
	std::thread t = waiter_of(task, &done);
	sleep_ms(100);
	EXPECT_EQ(done, 0) << "starpu_task_wait returned before the end dependency was released";
	starpu_task_end_dep_release(task);
	t.join();
	EXPECT_EQ(done, 1);
	starpu_task_destroy(task);
}

TEST_F(Semantics, EndDepsArrayHoldsTheTaskUntilThoseEnd)
{
	g_body_ran = 0;
	g_end_ran = 0;
	ASSERT_EQ(init_with_ncpus(2), 0);
	starpu_codelet body = cpu_codelet(body_func, 0, "body");
	starpu_codelet ender = cpu_codelet(end_func, 0, "ender");
	starpu_task *later = starpu_task_create();
	later->cl = &ender;
	starpu_task *task = starpu_task_build(&body, STARPU_TASK_END_DEPS_ARRAY, 1, &later, 0);
	ASSERT_NE(task, nullptr);
	task->detach = 0;
	task->destroy = 0;
	ASSERT_EQ(starpu_task_submit(task), 0);
	ASSERT_TRUE(wait_until([] { return g_body_ran.load() == 1; }, 30000));
	std::atomic<int> done{0};
	std::thread t = waiter_of(task, &done);
	sleep_ms(100);
	EXPECT_EQ(done, 0) << "starpu_task_wait returned before its end dependency ended";
	ASSERT_EQ(starpu_task_submit(later), 0);
	t.join();
	EXPECT_EQ(done, 1);
	EXPECT_EQ(g_end_ran, 1);
	starpu_task_destroy(task);
	// The task ends within later's termination, before later's own callbacks are
	// checked: later, whose codelet is on this stack, must be over before returning.
	starpu_task_wait_for_all();
}

// ------------------------------------------------------------- worker order

std::mutex g_order_lock;
std::vector<int> g_ran_order;

void record_order(void **, void *arg)
{
	std::lock_guard<std::mutex> guard(g_order_lock);
	g_ran_order.push_back((int)(intptr_t)arg);
}

TEST_F(Semantics, WorkerOrderIsHonouredOnASpecificWorker)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	g_ran_order.clear();
	starpu_codelet cl = cpu_codelet(record_order, 0, "ordered");
	const int n = 8;
	// Submitted in reverse order, pinned to worker 1: they run 1, 2, ... n.
	for (int order = n; order >= 1; order--) {
		starpu_task *task = starpu_task_create();
		task->cl = &cl;
		task->cl_arg = (void *)(intptr_t)order;
		task->execute_on_a_specific_worker = 1;
		task->workerid = 1;
		task->workerorder = (unsigned)order;
		ASSERT_EQ(starpu_task_submit(task), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::vector<int> expected;
	for (int order = 1; order <= n; order++)
		expected.push_back(order);
	EXPECT_EQ(g_ran_order, expected);
}

// --------------------------------------------------------------------- tags

TEST_F(Semantics, TagGetTaskReturnsTheTaskAlsoAfterItCompleted)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	starpu_codelet cl = cpu_codelet(count_func, 0, "tagged");
	starpu_task *task = starpu_task_create();
	task->cl = &cl;
	task->destroy = 0;
	task->use_tag = 1;
	task->tag_id = 0x4242;
	ASSERT_EQ(starpu_task_submit(task), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(starpu_tag_get_task(0x4242), task);
	starpu_task_destroy(task);
	EXPECT_EQ(starpu_tag_get_task(0x4242), nullptr) << "a freed task is never returned";
	EXPECT_EQ(starpu_tag_get_task(0x4243), nullptr);
}

// -------------------------------------------------------------- no worker

TEST_F(Semantics, InitWithNoWorkerAtAllGivesENODEV)
{
	ScopedEnv ncpu("STARPU_NCPU", "0");
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_init(nullptr); });
	EXPECT_EQ(ret, -ENODEV);
	EXPECT_EQ(starpu_is_initialized(), 0);
	EXPECT_TRUE(contains(err, "starpu_conf_noworker")) << err;
	starpu_shutdown(); // as StarPU's programs do after -ENODEV: harmless
	// A program that asks for no worker itself still starts.
	starpu_conf conf;
	starpu_conf_init(&conf);
	starpu_conf_noworker(&conf);
	ASSERT_EQ(starpu_init(&conf), 0);
	EXPECT_EQ(starpu_worker_get_count(), 0u);
	starpu_shutdown();
	ASSERT_EQ(init_with_ncpus(1), 0);
	EXPECT_EQ(starpu_worker_get_count(), 1u);
}

// ------------------------------------------------------------------ commute

void increment_slowly(void **buffers, void *)
{
	int *x = (int *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	int seen = *x;
	sleep_ms(2); // a peer running meanwhile would lose an increment
	*x = seen + 1;
}

std::atomic<int> g_read_value{-1};

void read_value(void **buffers, void *)
{
	g_read_value = *(int *)STARPU_VARIABLE_GET_PTR(buffers[0]);
}

TEST_F(Semantics, CommuteWithExplicitDependencyOnALaterPeer)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	int x = 0;
	starpu_data_handle_t h = register_int(&x);
	starpu_codelet inc = one_buffer_codelet(increment_slowly, "inc", STARPU_RW | STARPU_COMMUTE);
	starpu_task *first = starpu_task_create();
	first->cl = &inc;
	first->handles[0] = h;
	starpu_task *second = starpu_task_create();
	second->cl = &inc;
	second->handles[0] = h;
	// Submitted first, but waits for the second: commuting accesses let it.
	starpu_task_declare_deps_array(first, 1, &second);
	ASSERT_EQ(starpu_task_submit(first), 0);
	ASSERT_EQ(starpu_task_submit(second), 0);
	ASSERT_TRUE(wait_until([] { return starpu_task_nsubmitted() == 0; }, 30000)) << "the two commuting tasks hang";
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 2);
}

TEST_F(Semantics, CommutingWritesExcludeEachOtherAndPrecedeLaterReads)
{
	g_read_value = -1;
	ASSERT_EQ(init_with_ncpus(2), 0);
	int x = 0;
	starpu_data_handle_t h = register_int(&x);
	starpu_codelet inc = one_buffer_codelet(increment_slowly, "inc", STARPU_RW | STARPU_COMMUTE);
	starpu_codelet reader = one_buffer_codelet(read_value, "reader", STARPU_R);
	const int n = 10;
	for (int i = 0; i < n; i++)
		ASSERT_EQ(starpu_task_insert(&inc, STARPU_RW | STARPU_COMMUTE, h, 0), 0);
	ASSERT_EQ(starpu_task_insert(&reader, STARPU_R, h, 0), 0);
	for (int i = 0; i < n; i++)
		ASSERT_EQ(starpu_task_insert(&inc, STARPU_RW | STARPU_COMMUTE, h, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_read_value, n) << "the read ran beside or before the commuting writes submitted before it";
	starpu_data_unregister(h);
	EXPECT_EQ(x, 2 * n);
}

// ---------------------------------------------------------------- acquire_cb

struct acquire_step
{
	starpu_data_handle_t handle;
	int *x;
};

void increment_and_release(void *arg)
{
	acquire_step *step = (acquire_step *)arg;
	++*step->x;
	starpu_data_release(step->handle);
}

void sleep_a_while(void **, void *)
{
	sleep_ms(50); // the acquire requests are still pending when unregister is called
}

TEST_F(Semantics, UnregisterWaitsForPendingAcquireCallbacks)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	int x = 0;
	starpu_data_handle_t h = register_int(&x);
	starpu_codelet slow = one_buffer_codelet(sleep_a_while, "slow", STARPU_RW);
	ASSERT_EQ(starpu_task_insert(&slow, STARPU_RW, h, 0), 0);
	acquire_step step = { h, &x };
	// A chain of requests: each callback releases, which lets the next one in.
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(starpu_data_acquire_cb(h, STARPU_RW, increment_and_release, &step), 0);
	std::string err = stderr_of([&] { starpu_data_unregister(h); });
	EXPECT_FALSE(contains(err, "still acquired")) << err;
	EXPECT_EQ(x, 3);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
}

// --------------------------------------------------------------- reductions

std::atomic<int> g_inits{0};
std::atomic<int> g_private{0};
long *g_home = nullptr;

void redux_init(void **buffers, void *)
{
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 0;
	g_inits++;
}

void redux_add(void **buffers, void *)
{
	*(long *)STARPU_VARIABLE_GET_PTR(buffers[0]) += *(long *)STARPU_VARIABLE_GET_PTR(buffers[1]);
}

// A STARPU_REDUX contribution of 1, noting when it works on a buffer other than the handle's own.
void redux_contribute(void **buffers, void *)
{
	long *x = (long *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	if (x != g_home)
		g_private++;
	*x += 1;
}

void read_long(void **buffers, void *arg)
{
	*(long *)arg = *(long *)STARPU_VARIABLE_GET_PTR(buffers[0]);
}

struct ReduxCodelets
{
	starpu_codelet init = one_buffer_codelet(redux_init, "redux_init", STARPU_W);
	starpu_codelet redux = cpu_codelet(redux_add, 2, "redux_add");
	starpu_codelet contribute = one_buffer_codelet(redux_contribute, "contribute", STARPU_REDUX);
	starpu_codelet read = one_buffer_codelet(read_long, "read_long", STARPU_R);
	ReduxCodelets()
	{
		redux.modes[0] = STARPU_RW;
		redux.modes[1] = STARPU_R;
	}
};

void submit_contributions(starpu_codelet *cl, starpu_data_handle_t h, int n)
{
	for (int i = 0; i < n; i++)
		ASSERT_EQ(starpu_task_insert(cl, STARPU_REDUX, h, 0), 0);
}

long acquired_value(starpu_data_handle_t h)
{
	EXPECT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	long v = *(long *)starpu_variable_get_local_ptr(h);
	starpu_data_release(h);
	return v;
}

TEST_F(Semantics, ReduxContributionsGoToInitialisedBuffersAndAddToTheValue)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	ReduxCodelets cls;
	long x = 10;
	g_home = &x;
	g_inits = 0;
	g_private = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_data_set_reduction_methods(h, &cls.redux, &cls.init);
	const int n = 40;
	submit_contributions(&cls.contribute, h, n);
	// A task reading it next sees the reduced value.
	long seen = -1;
	ASSERT_EQ(starpu_task_insert(&cls.read, STARPU_R, h, STARPU_CL_ARGS_NFREE, &seen, sizeof(seen), 0), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(seen, 10 + n);
	EXPECT_EQ(g_private.load(), n) << "every STARPU_REDUX access works on a per-worker reduction buffer";
	EXPECT_GE(g_inits.load(), 1);
	EXPECT_LE(g_inits.load(), 2) << "one initialised buffer per worker";
	// A second phase, read by an acquire.
	submit_contributions(&cls.contribute, h, n);
	EXPECT_EQ(acquired_value(h), 10 + 2 * n);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 10 + 2 * n);
}

TEST_F(Semantics, ReductionMethodsWithoutACpuFunctionAreRefused)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	ReduxCodelets cls;
	long x = 10;
	g_home = &x;
	g_inits = 0;
	g_private = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_codelet no_cpu = cls.init;
	no_cpu.cpu_funcs[0] = nullptr;
	std::string err = stderr_of([&] { starpu_data_set_reduction_methods(h, &cls.redux, &no_cpu); });
	EXPECT_TRUE(contains(err, "init codelet has no CPU function")) << err;
	// The methods are not set: the contributions are plain read-write accesses to the value.
	submit_contributions(&cls.contribute, h, 5);
	EXPECT_EQ(acquired_value(h), 15);
	EXPECT_EQ(g_private.load(), 0);
	EXPECT_EQ(g_inits.load(), 0);
	starpu_data_unregister(h);
}

TEST_F(Semantics, ReduxAfterInvalidateStartsFromTheInitValue)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	ReduxCodelets cls;
	long x = 1000;
	g_home = &x;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_data_set_reduction_methods(h, &cls.redux, &cls.init);
	const int n = 16;
	for (int round = 0; round < 3; round++) {
		starpu_data_invalidate_submit(h);
		submit_contributions(&cls.contribute, h, n);
		EXPECT_EQ(acquired_value(h), n) << "round " << round;
	}
	// Contributions pending when the handle is invalidated are dropped.
	submit_contributions(&cls.contribute, h, n);
	starpu_task_wait_for_all();
	starpu_data_invalidate(h);
	submit_contributions(&cls.contribute, h, 1);
	EXPECT_EQ(acquired_value(h), 1);
	starpu_data_unregister(h);
}

TEST_F(Semantics, ReduxOnAHandleRegisteredNowhereAcquiresTheReducedValue)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	ReduxCodelets cls;
	g_home = nullptr;
	g_inits = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, -1, 0, sizeof(long));
	starpu_data_set_reduction_methods(h, &cls.redux, &cls.init);
	const int n = 25;
	submit_contributions(&cls.contribute, h, n);
	EXPECT_EQ(acquired_value(h), n);
	// The per-worker buffers, and the handle's own first buffer, start from the init codelet's value.
	EXPECT_GE(g_inits.load(), 2);
	submit_contributions(&cls.contribute, h, n);
	EXPECT_EQ(acquired_value(h), 2 * n);
	starpu_data_unregister(h);
}

// --------------------------------------------------------------- iterations

// A task submitted and kept (not destroyed) so that its fields can be read after it ran.
starpu_task *kept_task()
{
	static starpu_codelet cl = cpu_codelet(count_func, 0, "kept");
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->destroy = 0;
	EXPECT_EQ(starpu_task_submit(t), 0);
	return t;
}

TEST_F(Semantics, IterationPushAndPopStampTheTasksSubmittedMeanwhile)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	starpu_task *before = kept_task();
	starpu_iteration_push(3);
	starpu_task *outer = kept_task();
	starpu_iteration_push(7);
	starpu_task *inner = kept_task();
	starpu_iteration_push(9); // a third level is counted, not kept
	starpu_task *deeper = kept_task();
	starpu_iteration_pop();
	starpu_iteration_pop();
	starpu_task *outer_again = kept_task();
	starpu_iteration_pop();
	starpu_task *after = kept_task();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(before->iterations[0], -1);
	EXPECT_EQ(before->iterations[1], -1);
	EXPECT_EQ(outer->iterations[0], 3);
	EXPECT_EQ(outer->iterations[1], -1);
	EXPECT_EQ(inner->iterations[0], 3);
	EXPECT_EQ(inner->iterations[1], 7);
	EXPECT_EQ(deeper->iterations[0], 3);
	EXPECT_EQ(deeper->iterations[1], 7);
	EXPECT_EQ(outer_again->iterations[0], 3);
	EXPECT_EQ(outer_again->iterations[1], -1);
	EXPECT_EQ(after->iterations[0], -1);
	for (starpu_task *t : { before, outer, inner, deeper, outer_again, after })
		starpu_task_destroy(t);
	// A pop without its push is said, and changes nothing.
	std::string err = stderr_of([] { starpu_iteration_pop(); });
	EXPECT_TRUE(contains(err, "starpu_iteration_pop")) << err;
	starpu_task *none = kept_task();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(none->iterations[0], -1);
	starpu_task_destroy(none);
}

// -------------------------------------------------------- 1.4 helper names

TEST_F(Semantics, GetenvHelpersUnder14Names)
{
	ScopedEnv number("ASTRO_SEM_NUMBER", "42");
	ScopedEnv real("ASTRO_SEM_FLOAT", "2.5");
	ScopedEnv unset("ASTRO_SEM_UNSET", nullptr);
	EXPECT_EQ(starpu_getenv_number("ASTRO_SEM_NUMBER"), 42);
	EXPECT_EQ(starpu_getenv_number("ASTRO_SEM_UNSET"), -1);
	EXPECT_EQ(starpu_getenv_number_default("ASTRO_SEM_NUMBER", 7), 42);
	EXPECT_EQ(starpu_getenv_number_default("ASTRO_SEM_UNSET", 7), 7);
	EXPECT_FLOAT_EQ(starpu_getenv_float_default("ASTRO_SEM_FLOAT", 1.0f), 2.5f);
	EXPECT_FLOAT_EQ(starpu_getenv_float_default("ASTRO_SEM_UNSET", 1.0f), 1.0f);
	// A value that is not a number is said and replaced by the default.
	ScopedEnv bad("ASTRO_SEM_NUMBER", "forty");
	int v = 0;
	std::string err = stderr_of([&] { v = starpu_getenv_number_default("ASTRO_SEM_NUMBER", 7); });
	EXPECT_EQ(v, 7);
	EXPECT_TRUE(contains(err, "ASTRO_SEM_NUMBER")) << err;
}

// As StarPU 1.4 documents starpu_task::callback_func, the callback runs after the task's
// successors are released ("those might already be executing"): here a successor runs, on the
// other worker, while the callback waits for it (issue 40 said otherwise; StarPU's own header
// contradicts it). Were the successors released after the callback, the wait would end unmet.
struct CallbackOrder
{
	std::atomic<bool> successor_ran{false};
	std::atomic<int> callback_saw{-1};
};

void wait_for_successor(void *arg)
{
	auto *o = static_cast<CallbackOrder *>(arg);
	o->callback_saw = wait_until([&] { return o->successor_ran.load(); }, 30000) ? 1 : 0;
}

void mark_nothing(void **, void *) {}

void mark_successor(void **, void *arg)
{
	static_cast<CallbackOrder *>(arg)->successor_ran = true;
}

TEST_F(Semantics, CallbackRunsAfterSuccessorsAreReleased)
{
	ASSERT_EQ(init_with_ncpus(2), 0);
	CallbackOrder order;
	starpu_codelet first = cpu_codelet(mark_nothing, 0, "callback_first");
	starpu_codelet second = cpu_codelet(mark_successor, 0, "callback_second");
	starpu_task *a = starpu_task_create();
	a->cl = &first;
	a->callback_func = wait_for_successor;
	a->callback_arg = &order;
	a->detach = 0;
	starpu_task *b = starpu_task_create();
	b->cl = &second;
	b->cl_arg = &order;
	b->detach = 0;
	starpu_task_declare_deps(b, 1, a);
	ASSERT_EQ(starpu_task_submit(b), 0);
	ASSERT_EQ(starpu_task_submit(a), 0);
	ASSERT_EQ(starpu_task_wait(a), 0);
	ASSERT_EQ(starpu_task_wait(b), 0);
	EXPECT_EQ(order.callback_saw.load(), 1) << "the successor could not run before the callback ended";
}

} // namespace
