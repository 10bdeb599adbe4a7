// SPDX-License-Identifier: LGPL-2.1-or-later
// Tasks: submission, waiting, callbacks, validation of bad tasks, pinned
// tasks, regeneration, priorities, counts, statistics, duplication, and many
// tasks from several threads.
#include "helpers.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <atomic>

#include <astrolabe/observe.h>

#include <set>
#include <thread>
#include <type_traits>

#include <malloc.h>

using namespace astro_test;

namespace {

std::atomic<int> g_runs{0};
std::atomic<int> g_seq{0};

void count_func(void **, void *)
{
	g_runs++;
}

void count_func_cb(void *)
{
}

class Tasks : public ::testing::Test
{
protected:
	void SetUp() override
	{
		g_runs = 0;
		g_seq = 0;
		ASSERT_EQ(init_with_ncpus(2), 0);
		ASSERT_EQ(starpu_worker_get_count(), 2u);
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	starpu_codelet count_cl_ = cpu_codelet(count_func, 0, "count");
};

TEST_F(Tasks, SubmitAndWaitNonDetached)
{
	starpu_task *task = starpu_task_create();
	task->cl = &count_cl_;
	task->detach = 0;
	ASSERT_EQ(starpu_task_submit(task), 0);
	// destroy=1 (starpu_task_create): the wait frees it.
	ASSERT_EQ(starpu_task_wait(task), 0);
	EXPECT_EQ(g_runs, 1);

	starpu_task local;
	starpu_task_init(&local);
	EXPECT_EQ(local.detach, 1u);
	EXPECT_EQ(local.destroy, 0u);
	local.cl = &count_cl_;
	local.detach = 0;
	ASSERT_EQ(starpu_task_submit(&local), 0);
	ASSERT_EQ(starpu_task_wait(&local), 0);
	EXPECT_EQ(g_runs, 2);
	EXPECT_EQ(starpu_task_get_status(&local), STARPU_TASK_FINISHED);
	starpu_task_clean(&local);
}

void slow_count(void **, void *)
{
	sleep_ms(30);
	g_runs++;
}

TEST_F(Tasks, SynchronousTask)
{
	starpu_codelet cl = cpu_codelet(slow_count, 0, "slow");
	starpu_task task;
	starpu_task_init(&task);
	task.cl = &cl;
	task.synchronous = 1;
	ASSERT_EQ(starpu_task_submit(&task), 0);
	EXPECT_EQ(g_runs, 1); // no wait needed
	starpu_task_clean(&task);
}

struct CallbackRecord
{
	std::atomic<int> codelet_step{-1};
	std::atomic<int> callback_step{-1};
	std::atomic<starpu_task *> in_codelet{nullptr};
	std::atomic<starpu_task *> in_callback{nullptr};
};

void record_codelet(void **, void *arg)
{
	auto *r = static_cast<CallbackRecord *>(arg);
	sleep_ms(5);
	r->in_codelet = starpu_task_get_current();
	r->codelet_step = g_seq++;
}

void record_callback(void *arg)
{
	auto *r = static_cast<CallbackRecord *>(arg);
	r->in_callback = starpu_task_get_current();
	r->callback_step = g_seq++;
}

TEST_F(Tasks, CallbackRunsAfterCodelet)
{
	CallbackRecord rec;
	starpu_codelet cl = cpu_codelet(record_codelet, 0, "record");
	starpu_task task;
	starpu_task_init(&task);
	task.cl = &cl;
	task.cl_arg = &rec;
	task.callback_func = record_callback;
	task.callback_arg = &rec;
	task.detach = 0;
	ASSERT_EQ(starpu_task_submit(&task), 0);
	ASSERT_EQ(starpu_task_wait(&task), 0);
	EXPECT_EQ(rec.codelet_step, 0);
	EXPECT_EQ(rec.callback_step, 1);
	EXPECT_EQ(rec.in_codelet, &task);
	EXPECT_EQ(rec.in_callback, &task);
	EXPECT_EQ(starpu_task_get_current(), nullptr);
	starpu_task_clean(&task);
}

// A pop prologue runs with its task as the current one (as in StarPU: a parallel
// worker's create function reads it), for a codelet's task and a codelet-less one.
void record_current(void *arg)
{
	*static_cast<starpu_task **>(arg) = starpu_task_get_current();
}

TEST_F(Tasks, PopPrologueSeesItsTaskAsCurrent)
{
	for (bool with_codelet : { true, false }) {
		SCOPED_TRACE(with_codelet);
		starpu_task *seen = nullptr;
		starpu_task task;
		starpu_task_init(&task);
		task.cl = with_codelet ? &count_cl_ : nullptr;
		task.prologue_callback_pop_func = record_current;
		task.prologue_callback_pop_arg = &seen;
		task.detach = 0;
		ASSERT_EQ(starpu_task_submit(&task), 0);
		ASSERT_EQ(starpu_task_wait(&task), 0);
		EXPECT_EQ(seen, &task);
		starpu_task_clean(&task);
	}
	EXPECT_EQ(starpu_task_get_current(), nullptr);
}

void flag_callback(void *arg)
{
	static_cast<std::atomic<int> *>(arg)->fetch_add(1);
}

TEST_F(Tasks, NullCodeletTaskCompletes)
{
	std::atomic<int> called{0};
	starpu_task task;
	starpu_task_init(&task);
	task.cl = nullptr;
	task.callback_func = flag_callback;
	task.callback_arg = &called;
	task.detach = 0;
	ASSERT_EQ(starpu_task_submit(&task), 0);
	ASSERT_EQ(starpu_task_wait(&task), 0);
	EXPECT_EQ(called, 1);
	starpu_task_clean(&task);

	// Detached and freed by the runtime, too.
	starpu_task *t = starpu_task_create();
	t->callback_func = flag_callback;
	t->callback_arg = &called;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(called, 2);
}

struct SyncRecord
{
	std::atomic<int> runs_seen{-1};
};

void sync_callback(void *arg)
{
	static_cast<SyncRecord *>(arg)->runs_seen = g_runs.load();
}

TEST_F(Tasks, CreateSyncTask)
{
	const starpu_tag_t a = 0x5100, b = 0x5101, sync = 0x5200;
	SyncRecord rec;
	starpu_tag_t deps[2] = { a, b };
	starpu_create_sync_task(sync, 2, deps, sync_callback, &rec);
	starpu_codelet cl = cpu_codelet(slow_count, 0, "slow");
	for (starpu_tag_t tag : { a, b }) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->use_tag = 1;
		t->tag_id = tag;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_tag_wait(sync), 0);
	// The sync tag is done only once both tasks have run...
	EXPECT_EQ(g_runs, 2);
	// ...and its callback (run after the tag is notified, as in StarPU) saw both.
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(rec.runs_seen, 2);
}

// StarPU 1.4 declares it void: what goes wrong is said instead, and no task is left behind.
static_assert(std::is_same<decltype(starpu_create_sync_task(0, 0, nullptr, nullptr, nullptr)), void>::value,
	      "starpu_create_sync_task returns void, as in StarPU 1.4");

TEST_F(Tasks, CreateSyncTaskBadInputIsSaid)
{
	const starpu_tag_t sync = 0x5300;
	starpu_tag_t self[1] = { sync };
	SyncRecord rec;
	std::string err = stderr_of([&] {
		starpu_create_sync_task(sync, 2, nullptr, sync_callback, &rec);
		starpu_create_sync_task(sync, 1, self, sync_callback, &rec);
	});
	EXPECT_TRUE(contains(err, "starpu_create_sync_task: NULL deps for 2 dependencies of tag 21248")) << err;
	EXPECT_TRUE(contains(err, "starpu_create_sync_task: tag 21248 is among its own dependencies")) << err;
	// Checked where the tags are (starpu_tag_declare_deps_array's checks), said once each.
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << err;
	size_t first = err.find("nothing was declared");
	EXPECT_NE(first, std::string::npos) << err;
	EXPECT_NE(err.find("nothing was declared", first + 1), std::string::npos) << err;
	EXPECT_EQ(starpu_task_nsubmitted(), 0) << "a refused sync task was submitted";
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(rec.runs_seen.load(), -1) << "the callback of a refused sync task ran";
	// Once the runtime stopped, nothing is made and the call says so.
	starpu_shutdown();
	err = stderr_of([&] { starpu_create_sync_task(sync, 0, nullptr, sync_callback, &rec); });
	EXPECT_TRUE(contains(err, "starpu_create_sync_task: the runtime is not running: no task was made for tag 21248")) << err;
	EXPECT_EQ(rec.runs_seen.load(), -1);
}

// starpu_task_create_sync (issue 40): a task that runs nothing but takes its place among the
// accesses to a handle, so that an end dependency on it holds the later accesses.
TEST_F(Tasks, TaskCreateSyncOrdersAgainstTheData)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_task *sync = starpu_task_create_sync(h, STARPU_W);
	ASSERT_NE(sync, nullptr);
	EXPECT_EQ(sync->cl->where, (uint32_t)STARPU_NOWHERE);
	starpu_task_end_dep_add(sync, 1);
	ASSERT_EQ(starpu_task_submit(sync), 0);
	starpu_codelet cl = cpu_codelet(count_func, 1, "read");
	cl.modes[0] = STARPU_R;
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_R, h, 0), 0);
	starpu_usleep(20000);
	EXPECT_EQ(g_runs.load(), 0) << "the read ran before the sync task it follows ended";
	starpu_task_end_dep_release(sync);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_runs.load(), 1);
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_task_create_sync(nullptr, STARPU_R), nullptr);
		EXPECT_EQ(starpu_task_create_sync(h, STARPU_SCRATCH), nullptr);
	});
	EXPECT_TRUE(contains(err, "starpu_task_create_sync: NULL handle")) << err;
	EXPECT_TRUE(contains(err, "starpu_task_create_sync: invalid access mode 0x4")) << err;
	starpu_data_unregister(h);
}

void set_flag(void *arg)
{
	*(std::atomic<int> *)arg = 1;
}

// starpu_create_callback_task, starpu_task_set_destroy, starpu_task_status_get_as_string (issue 40).
TEST_F(Tasks, CallbackTaskSetDestroyAndStatusNames)
{
	std::atomic<int> flag{0};
	starpu_create_callback_task(set_flag, &flag);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(flag.load(), 1);

	starpu_codelet cl = cpu_codelet(count_func, 0, "count");
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->destroy = 0;
	starpu_task_set_destroy(t);
	EXPECT_EQ(t->destroy, 1u) << "not submitted yet: the flag is set";
	ASSERT_EQ(starpu_task_submit(t), 0);
	// Submitted without the flag: freed once complete (ASan's leak check sees it otherwise).
	starpu_task *u = starpu_task_create();
	u->cl = &cl;
	u->destroy = 0;
	ASSERT_EQ(starpu_task_submit(u), 0);
	starpu_task_set_destroy(u);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_runs.load(), 2);

	EXPECT_STREQ(starpu_task_status_get_as_string(STARPU_TASK_INIT), "STARPU_TASK_INIT");
	EXPECT_STREQ(starpu_task_status_get_as_string(STARPU_TASK_READY), "STARPU_TASK_READY");
	EXPECT_STREQ(starpu_task_status_get_as_string(STARPU_TASK_BLOCKED_ON_DATA), "STARPU_TASK_BLOCKED_ON_DATA");
	EXPECT_STREQ(starpu_task_status_get_as_string((enum starpu_task_status)42), "STARPU_TASK_unknown_status");
	std::string err = stderr_of([] { starpu_task_set_destroy(nullptr); });
	EXPECT_TRUE(contains(err, "starpu_task_set_destroy: NULL task")) << err;
}

// starpu_task_destroy() of a detached task while it runs: its completion frees it (ASan and TSan see a
// leak, a double free or a race otherwise); starpu_task_set_destroy() of one already complete frees it.
TEST_F(Tasks, DestroyWhileRunningAndSetDestroyOnceComplete)
{
	static std::atomic<int> started{0}, release{0};
	started = 0;
	release = 0;
	starpu_codelet slow = cpu_codelet([](void **, void *) {
		started = 1;
		while (!release.load())
			starpu_usleep(100);
	}, 0, "slow");
	starpu_task *t = starpu_task_create();
	t->cl = &slow;
	t->destroy = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);
	while (!started.load())
		starpu_usleep(100);
	starpu_task_destroy(t); // running: not freed now
	release = 1;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);

	starpu_codelet cl = cpu_codelet(count_func, 0, "count");
	starpu_task *u = starpu_task_create();
	u->cl = &cl;
	u->destroy = 0;
	ASSERT_EQ(starpu_task_submit(u), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(starpu_task_finished(u), 1);
	starpu_task_set_destroy(u); // complete: freed now
}

std::atomic<int> g_done{0};
void slow_done(void **, void *)
{
	starpu_usleep(10000);
}
void count_done(void *)
{
	g_done++;
}

// starpu_task_wait_for_n_submitted_in_ctx (issue 40): returns once at most n of the context's tasks are left.
TEST_F(Tasks, WaitForNSubmittedInCtx)
{
	int workers[2] = { 0, 1 };
	unsigned ctx = starpu_sched_ctx_create(workers, 2, "wait_n", 0);
	starpu_codelet cl = cpu_codelet(slow_done, 0, "slow");
	g_done = 0;
	for (int i = 0; i < 6; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->callback_func = count_done;
		ASSERT_EQ(starpu_task_submit_to_ctx(t, ctx), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_n_submitted_in_ctx(ctx, 2), 0);
	EXPECT_GE(g_done.load(), 4);
	ASSERT_EQ(starpu_task_wait_for_n_submitted_in_ctx(ctx, 0), 0);
	EXPECT_EQ(g_done.load(), 6);
	// The global context counts every task.
	for (int i = 0; i < 3; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->callback_func = count_done;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_n_submitted_in_ctx(0, 1), 0);
	EXPECT_GE(g_done.load(), 8);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_sched_ctx_delete(ctx);
	std::string err = stderr_of([] { EXPECT_EQ(starpu_task_wait_for_n_submitted_in_ctx(99, 1), -EINVAL); });
	EXPECT_FALSE(err.empty());
}

std::atomic<unsigned long> g_job_id_inside{0};

void record_job_id(void **, void *)
{
	g_job_id_inside = starpu_task_get_job_id(starpu_task_get_current());
}

TEST_F(Tasks, JobIdsAreUnique)
{
	std::set<unsigned long> ids;
	std::vector<starpu_task *> tasks;
	for (int i = 0; i < 100; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &count_cl_;
		t->detach = 0;
		t->destroy = 0;
		unsigned long id = starpu_task_get_job_id(t);
		EXPECT_NE(id, 0ul);
		EXPECT_EQ(starpu_task_get_job_id(t), id); // stable
		ids.insert(id);
		ASSERT_EQ(starpu_task_submit(t), 0);
		tasks.push_back(t);
	}
	EXPECT_EQ(ids.size(), 100u);
	for (starpu_task *t : tasks) {
		ASSERT_EQ(starpu_task_wait(t), 0);
		starpu_task_destroy(t);
	}

	starpu_codelet cl = cpu_codelet(record_job_id, 0, "job_id");
	starpu_task task;
	starpu_task_init(&task);
	task.cl = &cl;
	task.synchronous = 1;
	ASSERT_EQ(starpu_task_submit(&task), 0);
	EXPECT_EQ(g_job_id_inside, starpu_task_get_job_id(&task));
	EXPECT_EQ(ids.count(g_job_id_inside), 0u);
	starpu_task_clean(&task);
}

TEST_F(Tasks, DetachedDestroyedTasksAreFreed)
{
	// Run under ASan/LSan: every task, its job and its owned argument are freed.
	const int n = 2000;
	for (int i = 0; i < n; i++) {
		starpu_task *t = starpu_task_create();
		ASSERT_EQ(t->detach, 1u);
		ASSERT_EQ(t->destroy, 1u);
		t->cl = &count_cl_;
		t->cl_arg = malloc(16);
		t->cl_arg_size = 16;
		t->cl_arg_free = 1;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_runs, n);
}

TEST_F(Tasks, WaitOnDetachedTaskIsRefused)
{
	starpu_task task;
	starpu_task_init(&task);
	task.cl = &count_cl_;
	ASSERT_EQ(task.detach, 1u);
	ASSERT_EQ(starpu_task_submit(&task), 0);
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_task_wait(&task); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "detach")) << err;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_runs, 1);
	starpu_task_clean(&task);
}

// A task made but never submitted would be waited for forever: refused at once.
TEST_F(Tasks, WaitOnNeverSubmittedTaskIsRefused)
{
	starpu_codelet cl = cpu_codelet(count_func, 0, "never_submitted");
	starpu_task *created = starpu_task_create();
	created->cl = &cl;
	created->detach = 0;
	created->destroy = 0;
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_task_wait(created); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "[astrolabe] error: starpu_task_wait: task 'never_submitted' was never submitted")) << err;
	EXPECT_TRUE(contains(err, "submit it first")) << err;

	// A task of starpu_task_init() whose job exists (dependencies were declared on it).
	starpu_task inited;
	starpu_task_init(&inited);
	inited.cl = &cl;
	inited.name = "inited_never_submitted"; // another message than the first (a repeat would be counted, not printed)
	inited.detach = 0;
	starpu_task_declare_deps(&inited, 1, created);
	err = stderr_of([&] { ret = starpu_task_wait(&inited); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "was never submitted")) << err;

	// Once submitted, both are waited for as usual, and again once complete.
	ASSERT_EQ(starpu_task_submit(&inited), 0);
	ASSERT_EQ(starpu_task_submit(created), 0);
	EXPECT_EQ(starpu_task_wait(&inited), 0);
	EXPECT_EQ(starpu_task_wait(created), 0);
	err = stderr_of([&] { ret = starpu_task_wait(created); });
	EXPECT_EQ(ret, 0);
	EXPECT_EQ(err, "");
	EXPECT_EQ(g_runs, 2);
	starpu_task_clean(&inited);
	starpu_task_destroy(created);
}

struct WaitRegenState
{
	std::atomic<int> callbacks{0};
	std::atomic<bool> waiting{false};
	starpu_task *task = nullptr;
};

void note_wait_begins(const astro_event *, void *arg)
{
	static_cast<WaitRegenState *>(arg)->waiting = true;
}

void wait_regen_callback(void *arg)
{
	auto *s = static_cast<WaitRegenState *>(arg);
	if (++s->callbacks < 20)
		return;
	// Stop once the application waits (and has read the task's flags: no data race on the bitfield).
	if (!s->waiting)
		return;
	s->task->regenerate = 0;
}

// A regenerated task passes through "not submitted" between its rounds: waiting on it is no error.
TEST_F(Tasks, WaitOnRegeneratedTaskWaitsForTheLastRound)
{
	WaitRegenState state;
	int observer = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_APP_WAIT_BEGIN) | ASTRO_OBSERVE_UNTIMED, note_wait_begins, &state);
	ASSERT_GE(observer, 0);
	starpu_task task;
	starpu_task_init(&task);
	state.task = &task;
	task.cl = &count_cl_;
	task.callback_func = wait_regen_callback;
	task.callback_arg = &state;
	task.regenerate = 1;
	task.detach = 0;
	ASSERT_EQ(starpu_task_submit(&task), 0);
	ASSERT_TRUE(wait_until([&] { return state.callbacks >= 2; }));
	int ret = -1;
	std::string err = stderr_of([&] { ret = starpu_task_wait(&task); });
	EXPECT_EQ(ret, 0);
	EXPECT_EQ(err, "");
	EXPECT_GE(state.callbacks, 20);
	EXPECT_EQ(g_runs, state.callbacks);
	EXPECT_EQ(astro_observe_unsubscribe(observer), 0);
	starpu_task_clean(&task);
}

void cuda_only(void **, void *) {}

TEST_F(Tasks, CudaOnlyCodeletIsRefused)
{
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cuda_funcs[0] = cuda_only;
	cl.name = "cuda_only";
	for (uint32_t where : { 0u, (uint32_t)STARPU_CUDA }) {
		SCOPED_TRACE(where);
		cl.where = where;
		starpu_task task;
		starpu_task_init(&task);
		task.cl = &cl;
		int ret = 0;
		std::string err = stderr_of([&] { ret = starpu_task_submit(&task); });
		EXPECT_EQ(ret, -ENODEV);
		EXPECT_TRUE(contains(err, "cuda_only")) << err;
		starpu_task_clean(&task);
	}
	EXPECT_EQ(starpu_task_nsubmitted(), 0);
}

TEST_F(Tasks, NullHandleIsRefused)
{
	starpu_codelet cl = cpu_codelet(count_func, 1, "null_handle");
	cl.modes[0] = STARPU_R;
	starpu_task task;
	starpu_task_init(&task);
	task.cl = &cl;
	task.handles[0] = nullptr;
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_task_submit(&task); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "NULL handle")) << err;
	starpu_task_clean(&task);
	EXPECT_EQ(starpu_task_nsubmitted(), 0);
}

TEST_F(Tasks, InvalidAccessModeIsRefused)
{
	int x = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	ASSERT_NE(h, nullptr);
	starpu_codelet cl = cpu_codelet(count_func, 1, "bad_mode");
	for (unsigned mode : { (unsigned)STARPU_NONE, 0x4000u, (unsigned)STARPU_COMMUTE }) {
		SCOPED_TRACE(mode);
		cl.modes[0] = (starpu_data_access_mode)mode;
		starpu_task task;
		starpu_task_init(&task);
		task.cl = &cl;
		task.handles[0] = h;
		int ret = 0;
		std::string err = stderr_of([&] { ret = starpu_task_submit(&task); });
		EXPECT_EQ(ret, -EINVAL);
		EXPECT_TRUE(contains(err, "access mode")) << err;
		starpu_task_clean(&task);
	}
	// The handle is untouched: a valid access still works.
	cl.modes[0] = STARPU_RW;
	starpu_task *t = starpu_task_create();
	t->cl = &cl;
	t->handles[0] = h;
	ASSERT_EQ(starpu_task_submit(t), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(g_runs, 1);
	// The task may still be finishing (callbacks) after the unregister: cl lives on this stack.
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
}

TEST_F(Tasks, SpecificWorkerOutOfRange)
{
	for (unsigned id : { 2u, 1000u }) {
		starpu_task task;
		starpu_task_init(&task);
		task.cl = &count_cl_;
		task.execute_on_a_specific_worker = 1;
		task.workerid = id;
		int ret = 0;
		std::string err = stderr_of([&] { ret = starpu_task_submit(&task); });
		EXPECT_EQ(ret, -EINVAL) << id;
		EXPECT_TRUE(contains(err, "worker")) << err;
		starpu_task_clean(&task);
	}
	EXPECT_EQ(starpu_task_nsubmitted(), 0);
}

struct WorkerLog
{
	std::atomic<int> wrong{0};
	std::atomic<int> runs{0};
};

void check_worker(void **, void *arg)
{
	auto *log = static_cast<WorkerLog *>(arg);
	if (starpu_worker_get_id() != (int)starpu_task_get_current()->workerid)
		log->wrong++;
	log->runs++;
}

TEST_F(Tasks, SpecificWorkerRunsThere)
{
	WorkerLog log;
	starpu_codelet cl = cpu_codelet(check_worker, 0, "pinned");
	const int n = 200;
	for (int i = 0; i < n; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = &log;
		t->execute_on_a_specific_worker = 1;
		t->workerid = (unsigned)(i % 2);
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(log.runs, n);
	EXPECT_EQ(log.wrong, 0);
	EXPECT_EQ(cl.per_worker_stats[0], (unsigned long)n / 2);
	EXPECT_EQ(cl.per_worker_stats[1], (unsigned long)n / 2);
}

struct RegenState
{
	std::atomic<int> executions{0};
	std::atomic<int> callbacks{0};
	starpu_task *task = nullptr;
};

void regen_func(void **, void *arg)
{
	static_cast<RegenState *>(arg)->executions++;
}

void regen_callback(void *arg)
{
	auto *s = static_cast<RegenState *>(arg);
	if (++s->callbacks == 5)
		s->task->regenerate = 0;
}

TEST_F(Tasks, RegenerateUntilCallbackStops)
{
	RegenState state;
	starpu_codelet cl = cpu_codelet(regen_func, 0, "regen");
	starpu_task task;
	starpu_task_init(&task);
	state.task = &task;
	task.cl = &cl;
	task.cl_arg = &state;
	task.callback_func = regen_callback;
	task.callback_arg = &state;
	task.regenerate = 1;
	ASSERT_EQ(starpu_task_submit(&task), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(state.executions, 5);
	EXPECT_EQ(state.callbacks, 5);
	EXPECT_EQ(starpu_task_nsubmitted(), 0);
	starpu_task_clean(&task);
}

std::atomic<int> g_prio_inside{-100};

void record_priority(void **, void *)
{
	g_prio_inside = starpu_task_get_current()->priority;
}

TEST_F(Tasks, PriorityIsPreserved)
{
	starpu_codelet cl = cpu_codelet(record_priority, 0, "prio");
	for (int prio : { 3, STARPU_MAX_PRIO, STARPU_MIN_PRIO, 0 }) {
		starpu_task task;
		starpu_task_init(&task);
		task.cl = &cl;
		task.priority = prio;
		task.detach = 0;
		ASSERT_EQ(starpu_task_submit(&task), 0);
		ASSERT_EQ(starpu_task_wait(&task), 0);
		EXPECT_EQ(g_prio_inside, prio);
		EXPECT_EQ(task.priority, prio);
		starpu_task_clean(&task);
	}
	EXPECT_EQ(starpu_sched_get_min_priority(), STARPU_MIN_PRIO);
	EXPECT_EQ(starpu_sched_get_max_priority(), STARPU_MAX_PRIO);
}

TEST_F(Tasks, NsubmittedDropsToZero)
{
	EXPECT_EQ(starpu_task_nsubmitted(), 0);
	starpu_pause();
	sleep_ms(20);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(submit_detached(&count_cl_), 0);
	EXPECT_EQ(starpu_task_nsubmitted(), 10);
	EXPECT_EQ(starpu_task_nready(), 10);
	starpu_resume();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(starpu_task_nsubmitted(), 0);
	EXPECT_EQ(starpu_task_nready(), 0);
	EXPECT_EQ(g_runs, 10);
}

// Waiting while the runtime is paused waits for starpu_resume(), as in
// StarPU: each wait says so once, naming the call that resumes.
TEST_F(Tasks, WaitWhilePausedSaysSo)
{
	starpu_pause();
	starpu_task task;
	starpu_task_init(&task);
	task.cl = &count_cl_;
	task.detach = 0;
	ASSERT_EQ(submit_detached(&count_cl_), 0);
	ASSERT_EQ(starpu_task_submit(&task), 0);
	std::atomic<int> waits_done{0};
	std::string err = stderr_of([&] {
		std::thread waiter = blocked_thread([&] {
			EXPECT_EQ(starpu_task_wait(&task), 0);
			waits_done++;
			EXPECT_EQ(starpu_task_wait_for_all(), 0);
			waits_done++;
		});
		EXPECT_EQ(waits_done, 0);
		starpu_resume();
		waiter.join();
	});
	EXPECT_EQ(waits_done, 2);
	EXPECT_EQ(g_runs, 2);
	EXPECT_EQ(err, "[astrolabe] warning: starpu_task_wait: the runtime is paused (starpu_pause): no task runs, so this waits "
		       "until starpu_resume() is called, from another thread\n");

	// starpu_task_wait_for_all says it too, once.
	starpu_pause();
	ASSERT_EQ(submit_detached(&count_cl_), 0);
	err = stderr_of([&] {
		std::thread waiter = blocked_thread([] { EXPECT_EQ(starpu_task_wait_for_all(), 0); });
		starpu_resume();
		waiter.join();
	});
	EXPECT_EQ(err, "[astrolabe] warning: starpu_task_wait_for_all: the runtime is paused (starpu_pause): no task runs, so this "
		       "waits until starpu_resume() is called, from another thread\n");
	EXPECT_EQ(g_runs, 3);
	starpu_task_clean(&task);

	// Not paused: not a word.
	err = stderr_of([&] {
		ASSERT_EQ(submit_detached(&count_cl_), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	});
	EXPECT_EQ(err, "");
}

struct DeadlockRecord
{
	std::atomic<int> in_codelet{1};
	std::atomic<int> in_callback{1};
	std::atomic<int> wait_in_codelet{1};
	std::atomic<int> sync_submit{1};
};

void waits_for_all(void **, void *arg)
{
	auto *r = static_cast<DeadlockRecord *>(arg);
	r->in_codelet = starpu_task_wait_for_all();
	r->wait_in_codelet = starpu_task_wait(starpu_task_get_current());
	starpu_task t;
	starpu_task_init(&t);
	t.cl = nullptr;
	t.synchronous = 1;
	r->sync_submit = starpu_task_submit(&t);
	starpu_task_clean(&t);
}

void waits_for_all_cb(void *arg)
{
	static_cast<DeadlockRecord *>(arg)->in_callback = starpu_task_wait_for_all();
}

TEST_F(Tasks, WaitForAllFromTaskIsDeadlock)
{
	DeadlockRecord rec;
	starpu_codelet cl = cpu_codelet(waits_for_all, 0, "waiter");
	starpu_task task;
	starpu_task_init(&task);
	task.cl = &cl;
	task.cl_arg = &rec;
	task.callback_func = waits_for_all_cb;
	task.callback_arg = &rec;
	task.detach = 0;
	std::string err = stderr_of([&] {
		ASSERT_EQ(starpu_task_submit(&task), 0);
		ASSERT_EQ(starpu_task_wait(&task), 0);
	});
	EXPECT_EQ(rec.in_codelet, -EDEADLK);
	EXPECT_EQ(rec.in_callback, -EDEADLK);
	EXPECT_EQ(rec.wait_in_codelet, -EDEADLK);
	EXPECT_EQ(rec.sync_submit, -EDEADLK);
	EXPECT_TRUE(contains(err, "deadlock")) << err;
	starpu_task_clean(&task);
}

TEST_F(Tasks, SubmitTwiceBeforeCompletion)
{
	starpu_pause();
	sleep_ms(20);
	starpu_task task;
	starpu_task_init(&task);
	task.cl = &count_cl_;
	task.detach = 0;
	ASSERT_EQ(starpu_task_submit(&task), 0);
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_task_submit(&task); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "already submitted")) << err;
	EXPECT_EQ(starpu_task_nsubmitted(), 1);
	starpu_resume();
	ASSERT_EQ(starpu_task_wait(&task), 0);
	EXPECT_EQ(g_runs, 1);
	// Once complete, it may be submitted again.
	ASSERT_EQ(starpu_task_submit(&task), 0);
	ASSERT_EQ(starpu_task_wait(&task), 0);
	EXPECT_EQ(g_runs, 2);
	starpu_task_clean(&task);
}

TEST_F(Tasks, PerWorkerStats)
{
	starpu_codelet cl = cpu_codelet(count_func, 0, "stats");
	for (int i = 0; i < 17; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->execute_on_a_specific_worker = 1;
		t->workerid = i < 10 ? 0 : 1;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(cl.per_worker_stats[0], 10ul);
	EXPECT_EQ(cl.per_worker_stats[1], 7ul);
	EXPECT_EQ(cl.per_worker_stats[2], 0ul);
	// Unpinned tasks are all counted on some worker.
	for (int i = 0; i < 30; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(cl.per_worker_stats[0] + cl.per_worker_stats[1], 47ul);
}

struct DupRecord
{
	std::atomic<int> runs{0};
	std::atomic<int> sum{0};
};

void dup_func(void **, void *arg)
{
	auto *r = static_cast<DupRecord *>(arg);
	r->runs++;
	r->sum += starpu_task_get_current()->priority;
}

TEST_F(Tasks, TaskDup)
{
	DupRecord rec;
	starpu_codelet cl = cpu_codelet(dup_func, 0, "dup");
	starpu_task orig;
	starpu_task_init(&orig);
	orig.cl = &cl;
	orig.cl_arg = &rec;
	orig.priority = 4;
	orig.name = "original";
	orig.detach = 0;
	starpu_task *copy = starpu_task_dup(&orig);
	ASSERT_NE(copy, nullptr);
	EXPECT_NE(copy, &orig);
	EXPECT_EQ(copy->cl, &cl);
	EXPECT_EQ(copy->cl_arg, &rec);
	EXPECT_EQ(copy->priority, 4);
	EXPECT_STREQ(copy->name, "original");
	EXPECT_EQ(copy->detach, 0u);
	ASSERT_EQ(starpu_task_submit(&orig), 0);
	ASSERT_EQ(starpu_task_submit(copy), 0);
	ASSERT_EQ(starpu_task_wait(&orig), 0);
	EXPECT_NE(starpu_task_get_job_id(&orig), starpu_task_get_job_id(copy));
	ASSERT_EQ(starpu_task_wait(copy), 0); // destroy=1: freed by the wait
	EXPECT_EQ(rec.runs, 2);
	EXPECT_EQ(rec.sum, 8);
	starpu_task_clean(&orig);
}

std::vector<std::atomic<int>> *g_hits;

void hit_func(void **, void *arg)
{
	(*g_hits)[(uintptr_t)arg]++;
}

TEST_F(Tasks, ManyTasksFromTwoThreads)
{
	const unsigned per_thread = 5000, nthreads = 2;
	std::vector<std::atomic<int>> hits(per_thread * nthreads);
	g_hits = &hits;
	starpu_codelet cl = cpu_codelet(hit_func, 0, "tiny");
	std::atomic<int> failures{0};
	auto submitter = [&](unsigned first) {
		for (unsigned i = first; i < first + per_thread; i++)
			if (submit_detached(&cl, (void *)(uintptr_t)i) != 0)
				failures++;
	};
	std::vector<std::thread> threads;
	for (unsigned t = 0; t < nthreads; t++)
		threads.emplace_back(submitter, t * per_thread);
	for (auto &t : threads)
		t.join();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(failures, 0);
	unsigned wrong = 0;
	for (auto &h : hits)
		wrong += h != 1;
	EXPECT_EQ(wrong, 0u);
	EXPECT_EQ(cl.per_worker_stats[0] + cl.per_worker_stats[1], (unsigned long)(per_thread * nthreads));
	g_hits = nullptr;
}

TEST_F(Tasks, BadTasksAreRefused)
{
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_task_submit(nullptr); });
	EXPECT_EQ(ret, -EINVAL);
	starpu_task task;
	memset(&task, 0, sizeof(task)); // never initialised
	task.cl = &count_cl_;
	err = stderr_of([&] { ret = starpu_task_submit(&task); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "starpu_task_init")) << err;
	EXPECT_EQ(starpu_task_nsubmitted(), 0);
}

// Task memory is recycled between threads: a task made after many were
// destroyed elsewhere (by workers, by a thread that has exited) is as new.
TEST_F(Tasks, CreatedTasksAreFreshWhateverWasRecycled)
{
	auto dirty = [](starpu_task *t) {
		t->priority = 3;
		t->name = "dirty";
		t->cl_arg = t;
		t->callback_func = count_func_cb;
		t->workerid = 1;
	};
	auto fresh = [](const starpu_task *t) {
		return t->cl == nullptr && t->priority == 0 && t->name == nullptr && t->cl_arg == nullptr &&
		       t->callback_func == nullptr && t->destroy == 1 && t->detach == 1 && t->status == STARPU_TASK_INIT;
	};
	// Workers destroy detached tasks submitted by two application threads at once.
	std::vector<std::thread> submitters;
	for (int s = 0; s < 2; s++)
		submitters.emplace_back([&] {
			for (int i = 0; i < 3000; i++)
				ASSERT_EQ(submit_detached(&count_cl_), 0);
		});
	for (auto &t : submitters)
		t.join();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_runs.load(), 6000);
	// A thread creates and destroys tasks, then exits with its cache.
	std::thread([&] {
		std::vector<starpu_task *> tasks;
		for (int i = 0; i < 300; i++) {
			tasks.push_back(starpu_task_create());
			dirty(tasks.back());
		}
		for (starpu_task *t : tasks)
			starpu_task_destroy(t);
	}).join();
	std::vector<starpu_task *> live;
	for (int i = 0; i < 1000; i++) {
		starpu_task *t = starpu_task_create();
		ASSERT_NE(t, nullptr);
		EXPECT_TRUE(fresh(t)) << "task " << i << " kept fields of a recycled one";
		t->cl = &count_cl_;
		live.push_back(t);
	}
	EXPECT_EQ(std::set<starpu_task *>(live.begin(), live.end()).size(), live.size()) << "a live task's memory was handed out twice";
	for (starpu_task *t : live)
		ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_runs.load(), 7000);
}

// A burst of tasks submitted ahead of the workers, larger than the recycler's
// depot (32 MB): its blocks wait for the next burst instead of going back to
// malloc (whose pages the next burst would fault in again). Seen from malloc:
// the second burst allocates (almost) nothing.
TEST_F(Tasks, ABurstsTaskMemoryServesTheNextBurst)
{
#if defined(__SANITIZE_ADDRESS__)
	GTEST_SKIP() << "AddressSanitizer builds do not recycle task memory";
#else
	const int n = 100000; // some 100 MB of tasks
	auto burst = [&] {
		starpu_pause();
		for (int i = 0; i < n; i++)
			EXPECT_EQ(submit_detached(&count_cl_), 0);
	};
	burst();
	starpu_resume();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	size_t held = mallinfo2().uordblks;
	if (held == 0)
		GTEST_SKIP() << "mallinfo2() reports nothing here (a sanitizer's allocator)";
	burst();
	size_t grown = mallinfo2().uordblks - held;
	starpu_resume();
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_runs.load(), 2 * n);
	EXPECT_LT(grown, (size_t)n * sizeof(starpu_task) / 10) << "the second burst allocated " << grown << " bytes";
#endif
}

// The observation hub stamps a moment only for observers that want the time.
struct Stamps
{
	std::mutex mutex;
	std::vector<double> times;
};

void stamp(const astro_event *ev, void *arg)
{
	Stamps *s = static_cast<Stamps *>(arg);
	std::lock_guard<std::mutex> lock(s->mutex);
	s->times.push_back(ev->time_us);
}

TEST_F(Tasks, ObserversChooseWhetherMomentsAreStamped)
{
	const uint64_t ended = ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED);
	Stamps untimed, timed;
	int u = astro_observe_subscribe(ended | ASTRO_OBSERVE_UNTIMED, stamp, &untimed);
	ASSERT_GE(u, 0);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(submit_detached(&count_cl_), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(untimed.times.size(), 4u);
	for (double t : untimed.times)
		EXPECT_EQ(t, 0.0) << "an untimed observer alone made the moment read the clock";

	// With a timed observer of the same moment, both see the time.
	untimed.times.clear();
	int t = astro_observe_subscribe(ended, stamp, &timed);
	ASSERT_GE(t, 0);
	double before = starpu_timing_now();
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(submit_detached(&count_cl_), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	double after = starpu_timing_now();
	ASSERT_EQ(timed.times.size(), 4u);
	ASSERT_EQ(untimed.times.size(), 4u);
	for (size_t i = 0; i < 4; i++) {
		EXPECT_GE(timed.times[i], before);
		EXPECT_LE(timed.times[i], after);
		EXPECT_GT(untimed.times[i], 0.0);
	}

	// set_mask keeps the choice: once the timed one leaves, no stamps again.
	ASSERT_EQ(astro_observe_unsubscribe(t), 0);
	ASSERT_EQ(astro_observe_set_mask(u, ended | ASTRO_OBSERVE_UNTIMED), 0);
	untimed.times.clear();
	ASSERT_EQ(submit_detached(&count_cl_), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	ASSERT_EQ(untimed.times.size(), 1u);
	EXPECT_EQ(untimed.times[0], 0.0);
	ASSERT_EQ(astro_observe_unsubscribe(u), 0);
}

// The same stamps without the time-stamp counter (clock_gettime() throughout):
// a moment with one observer then goes through the hub's slow path, and so
// does a moment with two. Runs in a fresh process, where the clock is chosen.
static bool moments_stamped_with_gettime()
{
	setenv("ASTROLABE_TIMING", "clock_gettime", 1);
	if (init_with_ncpus(1) != 0)
		return false;
	const uint64_t started = ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED);
	const uint64_t ended = ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED);
	Stamps one, two_a, two_b;
	starpu_codelet cl = cpu_codelet([](void **, void *) {}, 0, "stamped");
	bool ok = astro_observe_subscribe(started, stamp, &one) >= 0 && astro_observe_subscribe(ended, stamp, &two_a) >= 0 &&
		  astro_observe_subscribe(ended, stamp, &two_b) >= 0;
	double before = starpu_timing_now();
	for (int i = 0; i < 3 && ok; i++)
		ok = submit_detached(&cl) == 0;
	ok = ok && starpu_task_wait_for_all() == 0;
	double after = starpu_timing_now();
	ok = ok && one.times.size() == 3 && two_a.times.size() == 3 && two_b.times == two_a.times;
	for (const Stamps *s : { &one, &two_a })
		for (double t : s->times)
			ok = ok && t >= before && t <= after;
	starpu_shutdown();
	return ok;
}

TEST(ObserveDeathTest, MomentsAreStampedWithEitherClock)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(exit(moments_stamped_with_gettime() ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

// An idle worker's search for work is one SCHED_BEGIN and, when it finds a
// task, one SCHED_END with it: its empty polls are not reported one by one.
struct SchedMoments
{
	std::atomic<int> begins{0}, ends{0}, ends_with_task{0};
};

void count_sched(const astro_event *ev, void *arg)
{
	SchedMoments *m = static_cast<SchedMoments *>(arg);
	if (ev->moment == ASTRO_MOMENT_WORKER_SCHED_BEGIN)
		m->begins++;
	else if (ev->task)
		m->ends_with_task++;
	else
		m->ends++;
}

TEST_F(Tasks, IdlePollsAreNotReportedOneByOne)
{
	SchedMoments m;
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_WORKER_SCHED_BEGIN) |
					 ASTRO_MOMENT_BIT(ASTRO_MOMENT_WORKER_SCHED_END) | ASTRO_OBSERVE_UNTIMED,
					 count_sched, &m);
	ASSERT_GE(id, 0);
	for (int i = 0; i < 20; i++) {
		ASSERT_EQ(submit_detached(&count_cl_), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		starpu_usleep(2000); // the workers poll (dozens of times), then sleep
	}
	ASSERT_EQ(astro_observe_unsubscribe(id), 0);
	EXPECT_EQ(m.ends_with_task.load(), 20);
	// Per search: one BEGIN, and one END (with the task, or NULL when the first poll is empty).
	EXPECT_LE(m.begins.load(), 2 * (20 + 2));
	EXPECT_LE(m.ends.load(), 2 * (20 + 2));
	EXPECT_GE(m.begins.load(), 20);
}

// Each observer gets the moments of its current mask, also after set_mask
// gave it a moment it did not observe before, and none it gave up.
struct MomentCounts
{
	std::atomic<int> n[ASTRO_NMOMENTS] = {};
};

void count_moment(const astro_event *ev, void *arg)
{
	static_cast<MomentCounts *>(arg)->n[ev->moment]++;
}

TEST_F(Tasks, ObserverMasksCanChange)
{
	const uint64_t started = ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED), ended = ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED);
	MomentCounts a, b;
	int ida = astro_observe_subscribe(ended | ASTRO_OBSERVE_UNTIMED, count_moment, &a);
	int idb = astro_observe_subscribe(started | ASTRO_OBSERVE_UNTIMED, count_moment, &b);
	ASSERT_GE(ida, 0);
	ASSERT_GE(idb, 0);
	auto run = [this](int n) {
		for (int i = 0; i < n; i++)
			ASSERT_EQ(submit_detached(&count_cl_), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	};
	run(3);
	EXPECT_EQ(a.n[ASTRO_MOMENT_TASK_ENDED].load(), 3);
	EXPECT_EQ(a.n[ASTRO_MOMENT_TASK_STARTED].load(), 0);
	EXPECT_EQ(b.n[ASTRO_MOMENT_TASK_STARTED].load(), 3);

	// a takes STARTED on (after b did), b gives it up.
	ASSERT_EQ(astro_observe_set_mask(ida, started | ended | ASTRO_OBSERVE_UNTIMED), 0);
	ASSERT_EQ(astro_observe_set_mask(idb, 0), 0);
	run(4);
	EXPECT_EQ(a.n[ASTRO_MOMENT_TASK_STARTED].load(), 4);
	EXPECT_EQ(a.n[ASTRO_MOMENT_TASK_ENDED].load(), 7);
	EXPECT_EQ(b.n[ASTRO_MOMENT_TASK_STARTED].load(), 3);

	// b comes back for STARTED and ENDED.
	ASSERT_EQ(astro_observe_set_mask(idb, started | ended | ASTRO_OBSERVE_UNTIMED), 0);
	run(2);
	EXPECT_EQ(b.n[ASTRO_MOMENT_TASK_STARTED].load(), 5);
	EXPECT_EQ(b.n[ASTRO_MOMENT_TASK_ENDED].load(), 2);
	EXPECT_EQ(a.n[ASTRO_MOMENT_TASK_ENDED].load(), 9);
	ASSERT_EQ(astro_observe_unsubscribe(ida), 0);
	ASSERT_EQ(astro_observe_unsubscribe(idb), 0);
	EXPECT_EQ(astro_observe_set_mask(-1, ended), -EINVAL);
}

// The callback moments surround callbacks, so a task without one has none;
// DATA_RELEASED follows the release of a task's data, so a task without data has none.
void noop_callback(void *) {}

void touch_buffer(void **, void *)
{
	g_runs++;
}

TEST_F(Tasks, CallbackAndReleaseMomentsOnlyWhenThereIsSomething)
{
	MomentCounts m;
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_CALLBACK_BEGIN) |
					 ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_CALLBACK_END) |
					 ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_DATA_RELEASED) | ASTRO_OBSERVE_UNTIMED,
					 count_moment, &m);
	ASSERT_GE(id, 0);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(submit_detached(&count_cl_), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(m.n[ASTRO_MOMENT_TASK_CALLBACK_BEGIN].load(), 0);
	EXPECT_EQ(m.n[ASTRO_MOMENT_TASK_CALLBACK_END].load(), 0);
	EXPECT_EQ(m.n[ASTRO_MOMENT_TASK_DATA_RELEASED].load(), 0);

	for (int i = 0; i < 2; i++) {
		starpu_task *t = starpu_task_create();
		t->cl = &count_cl_;
		t->callback_func = noop_callback;
		ASSERT_EQ(starpu_task_submit(t), 0);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(m.n[ASTRO_MOMENT_TASK_CALLBACK_BEGIN].load(), 2);
	EXPECT_EQ(m.n[ASTRO_MOMENT_TASK_CALLBACK_END].load(), 2);
	EXPECT_EQ(m.n[ASTRO_MOMENT_TASK_DATA_RELEASED].load(), 0);

	int value = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));
	starpu_codelet cl = cpu_codelet(touch_buffer, 1, "touch");
	cl.modes[0] = STARPU_RW;
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(m.n[ASTRO_MOMENT_TASK_DATA_RELEASED].load(), 4);
	EXPECT_EQ(m.n[ASTRO_MOMENT_TASK_CALLBACK_BEGIN].load(), 2);
	ASSERT_EQ(astro_observe_unsubscribe(id), 0);
}

TEST(TasksNoRuntime, SubmitBeforeInitIsRefused)
{
	starpu_task task;
	starpu_task_init(&task);
	starpu_codelet cl = cpu_codelet(count_func, 0, "early");
	task.cl = &cl;
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_task_submit(&task); });
	EXPECT_NE(ret, 0);
	EXPECT_TRUE(contains(err, "starpu_init")) << err;
	starpu_task_clean(&task);
}

// STARPU_TASK_INITIALIZER names the fields in their order (C++ refuses designators out of it) and
// gives what starpu_task_init() gives.
TEST(TasksNoRuntime, TheStaticInitializerIsStarpuTaskInit)
{
	starpu_task fixed = STARPU_TASK_INITIALIZER;
	starpu_task inited;
	memset(&inited, 0x5a, sizeof(inited));
	starpu_task_init(&inited);
	EXPECT_EQ(fixed.magic, 42);
	EXPECT_EQ(inited.magic, 42);
	EXPECT_EQ(fixed.where, -1);
	EXPECT_EQ(fixed.detach, 1u);
	EXPECT_EQ(fixed.sequential_consistency, 1u);
	EXPECT_EQ(fixed.sched_ctx, (unsigned)STARPU_NMAX_SCHED_CTXS);
	EXPECT_EQ(fixed.priority, STARPU_DEFAULT_PRIO);
	EXPECT_EQ(fixed.status, STARPU_TASK_INIT);
	EXPECT_TRUE(std::isnan(fixed.predicted));
	EXPECT_EQ(fixed.iterations[0], -1);
	// The pointers that open the struct (codelet to transaction) are all NULL in both.
	EXPECT_EQ(memcmp(&fixed, &inited, offsetof(starpu_task, transaction) + sizeof(void *)), 0);
	EXPECT_EQ(fixed.where, inited.where);
	EXPECT_EQ(fixed.priority, inited.priority);
	EXPECT_EQ(fixed.sched_ctx, inited.sched_ctx);
	EXPECT_EQ(fixed.status, inited.status);
	EXPECT_EQ(fixed.detach, inited.detach);
	EXPECT_EQ(fixed.sequential_consistency, inited.sequential_consistency);
	EXPECT_EQ(fixed.handles[0], inited.handles[0]);
	EXPECT_EQ(fixed.name, inited.name);
	EXPECT_EQ(fixed.iterations[1], inited.iterations[1]);
	EXPECT_TRUE(std::isnan(inited.predicted_start));
}

// What submitting, scheduling, running and ending any task reads lies in the struct's first 176
// bytes (ASTRO_TASK_HOT_BYTES, three or four cache lines, include/starpu_task.h): the
// submitting thread and the worker pass a task's lines to each other, and every line more is paid
// at every task (bench/README.md); a worker asks for those bytes of the task it takes next
// (astro_sched_task_prefetch()).
TEST(TasksNoRuntime, TheFieldsEveryTaskReadsComeFirst)
{
	const size_t hot[] = {
		offsetof(starpu_task, cl), offsetof(starpu_task, cl_arg), offsetof(starpu_task, starpu_private),
		offsetof(starpu_task, callback_func), offsetof(starpu_task, callback_arg), offsetof(starpu_task, prev),
		offsetof(starpu_task, next), offsetof(starpu_task, profiling_info), offsetof(starpu_task, prologue_callback_func),
		offsetof(starpu_task, prologue_callback_pop_func), offsetof(starpu_task, epilogue_callback_func),
		offsetof(starpu_task, bundle), offsetof(starpu_task, workerids), offsetof(starpu_task, transaction),
		offsetof(starpu_task, where), offsetof(starpu_task, nbuffers), offsetof(starpu_task, priority),
		offsetof(starpu_task, status), offsetof(starpu_task, magic), offsetof(starpu_task, sched_ctx),
		offsetof(starpu_task, workerid), offsetof(starpu_task, workerorder), offsetof(starpu_task, workerids_len),
		offsetof(starpu_task, possibly_parallel), offsetof(starpu_task, cl_arg_size), offsetof(starpu_task, tag_id),
	};
	for (size_t at : hot)
		EXPECT_LT(at, 176u) << "a field every task reads moved to byte " << at;
	EXPECT_GE(offsetof(starpu_task, handles), 176u);
}

// StarPU 1.0's codelets (issue 40): the deprecated cpu_func runs, and becomes cpu_funcs[0].
std::atomic<int> old_style_runs{0};

void old_style_cpu(void **, void *)
{
	old_style_runs++;
}

void other_cpu(void **, void *)
{
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_F(Tasks, DeprecatedCpuFuncRuns)
{
	old_style_runs = 0;
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.where = STARPU_CPU;
	cl.cpu_func = old_style_cpu;
	cl.name = "old_style";
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(submit_detached(&cl), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(old_style_runs, 3);
	EXPECT_EQ(cl.cpu_funcs[0], old_style_cpu);
	EXPECT_EQ(cl.cpu_func, STARPU_MULTIPLE_CPU_IMPLEMENTATIONS);
	// Already in the array: the marker changes nothing.
	starpu_codelet multi;
	starpu_codelet_init(&multi);
	multi.cpu_func = STARPU_MULTIPLE_CPU_IMPLEMENTATIONS;
	multi.cpu_funcs[0] = old_style_cpu;
	ASSERT_EQ(submit_detached(&multi), 0);
	starpu_task_wait_for_all();
	EXPECT_EQ(old_style_runs, 4);
	// Both given: the array wins, said once.
	starpu_codelet both;
	starpu_codelet_init(&both);
	both.cpu_func = other_cpu;
	both.cpu_funcs[0] = old_style_cpu;
	both.name = "both";
	std::string err = stderr_of([&] {
		ASSERT_EQ(submit_detached(&both), 0);
		ASSERT_EQ(submit_detached(&both), 0);
		starpu_task_wait_for_all();
	});
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	EXPECT_TRUE(contains(err, "codelet 'both' gives both cpu_func and cpu_funcs: cpu_funcs is used")) << err;
	EXPECT_EQ(old_style_runs, 6);
}
#pragma GCC diagnostic pop

} // namespace

// ---------------------------------------------------------------- fault tolerance

namespace {

std::atomic<int> g_ft_tries{0};
int g_ft_fail_first = 0; // how many tries fail before one succeeds

// y = x + 1, failing (and saying so) for the first g_ft_fail_first tries.
void ft_increment(void **buffers, void *)
{
	int x = *(int *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	int *y = (int *)STARPU_VARIABLE_GET_PTR(buffers[1]);
	int attempt = g_ft_tries++;
	if (attempt < g_ft_fail_first) {
		*y = -1000; // garbage: the retry must overwrite it
		starpu_task_ft_failed(starpu_task_get_current());
		EXPECT_EQ(starpu_task_get_current()->failed, 1u);
		return;
	}
	EXPECT_EQ(starpu_task_get_current()->failed, 0u);
	*y = x + 1;
}

std::atomic<int> g_ft_checks{0};

// A check function as an application writes it: retry on failure, success otherwise.
void ft_check(void *arg)
{
	auto *meta = (struct starpu_task *)arg;
	struct starpu_task *current = starpu_task_get_current();
	g_ft_checks++;
	if (!current->failed) {
		starpu_task_ft_success(meta);
		return;
	}
	struct starpu_task *retry = starpu_task_ft_create_retry(meta, current, ft_check);
	ASSERT_NE(retry, nullptr);
	EXPECT_EQ(retry->failed, 0u);
	EXPECT_EQ(retry->callback_arg, meta);
	ASSERT_EQ(starpu_task_submit_nodeps(retry), 0);
}

int g_ft_successor_saw = 0;
void ft_read_y(void **buffers, void *)
{
	g_ft_successor_saw = *(int *)STARPU_VARIABLE_GET_PTR(buffers[0]);
}

} // namespace

class FaultTolerance : public Tasks
{
protected:
	void SetUp() override
	{
		Tasks::SetUp();
		g_ft_tries = 0;
		g_ft_checks = 0;
		g_ft_successor_saw = 0;
		cl_.modes[0] = STARPU_R;
		cl_.modes[1] = STARPU_W;
		read_cl_.modes[0] = STARPU_R;
	}
	starpu_codelet cl_ = cpu_codelet(ft_increment, 2, "ft_increment");
	starpu_codelet read_cl_ = cpu_codelet(ft_read_y, 1, "ft_read_y");
};

// The meta task retries until a try succeeds; its successors see the successful result only.
TEST_F(FaultTolerance, CheckFunctionRetriesUntilSuccess)
{
	int x = 12, y = 1;
	starpu_data_handle_t hx, hy;
	starpu_variable_data_register(&hx, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_variable_data_register(&hy, STARPU_MAIN_RAM, (uintptr_t)&y, sizeof(y));
	g_ft_fail_first = 5;
	ASSERT_EQ(starpu_task_insert(&cl_, STARPU_PROLOGUE_CALLBACK, starpu_task_ft_prologue, STARPU_PROLOGUE_CALLBACK_ARG_NFREE,
				     (void *)ft_check, STARPU_R, hx, STARPU_W, hy, 0),
		  0);
	ASSERT_EQ(starpu_task_insert(&read_cl_, STARPU_R, hy, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ft_tries, 6);
	EXPECT_EQ(g_ft_checks, 6);
	EXPECT_EQ(g_ft_successor_saw, 13);
	starpu_data_unregister(hx);
	starpu_data_unregister(hy);
	EXPECT_EQ(x, 12);
	EXPECT_EQ(y, 13);
}

// Without a check function, the default one retries until a try does not fail.
TEST_F(FaultTolerance, DefaultCheckRetries)
{
	int x = 1, y = 0;
	starpu_data_handle_t hx, hy;
	starpu_variable_data_register(&hx, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_variable_data_register(&hy, STARPU_MAIN_RAM, (uintptr_t)&y, sizeof(y));
	g_ft_fail_first = 3;
	struct starpu_task *meta = starpu_task_create();
	meta->cl = &cl_;
	meta->handles[0] = hx;
	meta->handles[1] = hy;
	meta->prologue_callback_func = starpu_task_ft_prologue;
	meta->prologue_callback_arg = nullptr;
	meta->detach = 0;
	ASSERT_EQ(starpu_task_submit(meta), 0);
	ASSERT_EQ(starpu_task_insert(&read_cl_, STARPU_R, hy, 0), 0);
	ASSERT_EQ(starpu_task_wait(meta), 0); // ends only once a try succeeded
	EXPECT_EQ(g_ft_tries, 4);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ft_successor_saw, 2);
	starpu_data_unregister(hx);
	starpu_data_unregister(hy);
	EXPECT_EQ(y, 2);
}

// A task that never fails runs once, through one try.
TEST_F(FaultTolerance, NoFailureRunsOnce)
{
	int x = 5, y = 0;
	starpu_data_handle_t hx, hy;
	starpu_variable_data_register(&hx, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_variable_data_register(&hy, STARPU_MAIN_RAM, (uintptr_t)&y, sizeof(y));
	g_ft_fail_first = 0;
	ASSERT_EQ(starpu_task_insert(&cl_, STARPU_PROLOGUE_CALLBACK, starpu_task_ft_prologue, STARPU_R, hx, STARPU_W, hy, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ft_tries, 1);
	starpu_data_unregister(hx);
	starpu_data_unregister(hy);
	EXPECT_EQ(y, 6);
}

// starpu_task_submit_nodeps(): the task does not wait for the accesses before it
// (here the program's own acquire), and later accesses do not wait for it.
TEST_F(FaultTolerance, SubmitNodepsTakesNoDataDependencies)
{
	int v = 41, seen = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&v, sizeof(v));
	ASSERT_EQ(starpu_data_acquire(h, STARPU_RW), 0);
	starpu_codelet read = cpu_codelet([](void **buffers, void *arg) { *(int *)arg = *(int *)STARPU_VARIABLE_GET_PTR(buffers[0]); }, 1, "read");
	read.modes[0] = STARPU_R;
	struct starpu_task *task = starpu_task_create();
	task->cl = &read;
	task->handles[0] = h;
	task->cl_arg = &seen;
	task->detach = 0;
	ASSERT_EQ(starpu_task_submit_nodeps(task), 0);
	ASSERT_EQ(starpu_task_wait(task), 0); // with the acquire still held
	EXPECT_EQ(seen, 41);
	starpu_data_release(h);
	starpu_data_unregister(h);
}

// A task whose own where is STARPU_NOWHERE runs nothing, as a codelet's would (a meta task is one).
TEST_F(Tasks, TaskWhereNowhereRunsNothing)
{
	struct starpu_task *task = starpu_task_create();
	task->cl = &count_cl_;
	task->where = (int32_t)STARPU_NOWHERE;
	task->detach = 0;
	ASSERT_EQ(starpu_task_submit(task), 0);
	ASSERT_EQ(starpu_task_wait(task), 0);
	EXPECT_EQ(g_runs, 0);
}

// A retry copies its template, but not what belongs to the meta task's life.
TEST_F(FaultTolerance, CreateRetryCopiesTheTemplate)
{
	struct starpu_task *meta = starpu_task_create();
	meta->cl = &cl_;
	meta->priority = 3;
	meta->name = "meta";
	meta->use_tag = 1;
	meta->tag_id = 77;
	meta->prologue_callback_func = starpu_task_ft_prologue;
	struct starpu_task *retry = starpu_task_ft_create_retry(meta, meta, ft_check);
	ASSERT_NE(retry, nullptr);
	EXPECT_EQ(retry->cl, &cl_);
	EXPECT_EQ(retry->priority, 3);
	EXPECT_STREQ(retry->name, "meta");
	EXPECT_EQ(retry->use_tag, 0u);
	EXPECT_EQ(retry->prologue_callback_func, nullptr);
	EXPECT_EQ(retry->callback_func, ft_check);
	EXPECT_EQ(retry->callback_arg, meta);
	EXPECT_EQ(retry->destroy, 1u);
	EXPECT_NE(retry->starpu_private, meta->starpu_private);
	retry->destroy = 0;
	starpu_task_destroy(retry);
	meta->destroy = 0;
	starpu_task_destroy(meta);
}

// Bad input: NULL tasks, a failed STARPU_RW task (it cannot be retried), the prologue outside a prologue.
TEST_F(FaultTolerance, BadInputIsRefused)
{
	testing::internal::CaptureStderr();
	EXPECT_EQ(starpu_task_ft_create_retry(nullptr, nullptr, nullptr), nullptr);
	starpu_task_ft_failed(nullptr);
	starpu_task_ft_success(nullptr);
	starpu_task_ft_prologue(nullptr); // no current task
	starpu_codelet rw = cpu_codelet(count_func, 1, "rw");
	rw.modes[0] = STARPU_RW;
	int v = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&v, sizeof(v));
	struct starpu_task *task = starpu_task_create();
	task->cl = &rw;
	task->handles[0] = h;
	starpu_task_ft_failed(task);
	EXPECT_EQ(task->failed, 0u);
	// The prologue on a STARPU_RW task: it runs once, as a plain task.
	task->prologue_callback_func = starpu_task_ft_prologue;
	ASSERT_EQ(starpu_task_submit(task), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::string err = testing::internal::GetCapturedStderr();
	EXPECT_EQ(g_runs, 1);
	starpu_data_unregister(h);
	EXPECT_NE(err.find("starpu_task_ft_create_retry: NULL meta task"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_task_ft_failed: NULL task"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_task_ft_success: NULL meta task"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_task_ft_prologue: called outside a task's prologue"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_task_ft_failed: task 'rw' accesses its buffer 0 in mode"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_task_ft_prologue: task 'rw' accesses its buffer 0 in mode"), std::string::npos) << err;
}

// ---------------------------------------------------------------- transactions

namespace {

std::vector<int> g_trs_ran; // epochs whose tasks ran, in order
std::mutex g_trs_lock;
std::atomic<int> g_trs_decisions{0};

void trs_task(void **, void *arg)
{
	std::lock_guard<std::mutex> lock(g_trs_lock);
	g_trs_ran.push_back((int)(intptr_t)arg);
}

// Proceeds when the epoch's argument points at a nonzero int.
int trs_start(void *buffer, void *arg)
{
	EXPECT_EQ(buffer, nullptr);
	g_trs_decisions++;
	return *(int *)arg;
}

} // namespace

class Transactions : public Tasks
{
protected:
	void SetUp() override
	{
		Tasks::SetUp();
		g_trs_ran.clear();
		g_trs_decisions = 0;
		cl_.nbuffers = STARPU_VARIABLE_NBUFFERS;
	}
	int submit(struct starpu_transaction *trs, int epoch, starpu_data_handle_t h = nullptr)
	{
		if (h)
			return starpu_task_insert(&cl_, STARPU_TRANSACTION, trs, STARPU_CL_ARGS_NFREE, (void *)(intptr_t)epoch, (size_t)0,
						  STARPU_RW, h, 0);
		return starpu_task_insert(&cl_, STARPU_TRANSACTION, trs, STARPU_CL_ARGS_NFREE, (void *)(intptr_t)epoch, (size_t)0, 0);
	}
	starpu_codelet cl_ = cpu_codelet(trs_task, 0, "trs_task");
};

// Epochs whose start function says no are cancelled: their tasks end without running; the others run, in order.
TEST_F(Transactions, CancelledEpochsDoNotRun)
{
	int yes = 1, no = 0;
	struct starpu_transaction *trs = starpu_transaction_open(trs_start, &yes);
	ASSERT_NE(trs, nullptr);
	struct starpu_task *t = starpu_task_create();
	t->cl = &cl_;
	t->transaction = trs;
	t->cl_arg = (void *)(intptr_t)1;
	t->detach = 0;
	t->destroy = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);
	ASSERT_EQ(submit(trs, 1), 0);
	starpu_transaction_next_epoch(trs, &no);
	ASSERT_EQ(submit(trs, 2), 0);
	ASSERT_EQ(submit(trs, 2), 0);
	starpu_transaction_next_epoch(trs, &yes);
	ASSERT_EQ(submit(trs, 3), 0);
	starpu_transaction_close(trs);
	ASSERT_EQ(starpu_task_wait(t), 0);
	EXPECT_NE(t->trs_epoch, nullptr);
	EXPECT_EQ(starpu_task_get_current(), nullptr);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_trs_decisions, 3);
	std::vector<int> expected = {1, 1, 3};
	EXPECT_EQ(g_trs_ran, expected);
	starpu_task_destroy(t);
}

// Without a start function every epoch proceeds; tasks keep their own data accesses.
TEST_F(Transactions, NoStartFunctionProceeds)
{
	struct starpu_transaction *trs = starpu_transaction_open(nullptr, nullptr);
	ASSERT_NE(trs, nullptr);
	int v = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&v, sizeof(v));
	ASSERT_EQ(submit(trs, 1, h), 0);
	starpu_transaction_next_epoch(trs, nullptr);
	ASSERT_EQ(submit(trs, 2, h), 0);
	starpu_transaction_close(trs);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	std::vector<int> expected = {1, 2};
	EXPECT_EQ(g_trs_ran, expected);
}

// Bad input: a codelet with a fixed buffer count, a closed or NULL transaction.
TEST_F(Transactions, BadInputIsRefused)
{
	struct starpu_transaction *trs = starpu_transaction_open(nullptr, nullptr);
	ASSERT_NE(trs, nullptr);
	testing::internal::CaptureStderr();
	starpu_codelet fixed = cpu_codelet(trs_task, 0, "fixed");
	EXPECT_EQ(starpu_task_insert(&fixed, STARPU_TRANSACTION, trs, 0), -EINVAL);
	starpu_transaction_next_epoch(nullptr, nullptr);
	starpu_transaction_close(nullptr);
	starpu_transaction_close(trs);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	std::string err = testing::internal::GetCapturedStderr();
	EXPECT_NE(err.find("task 'fixed' is in a transaction, its codelet must set nbuffers to STARPU_VARIABLE_NBUFFERS"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_transaction_next_epoch: NULL transaction"), std::string::npos) << err;
	EXPECT_NE(err.find("starpu_transaction_close: NULL transaction"), std::string::npos) << err;
	EXPECT_TRUE(g_trs_ran.empty());
}

// ------------------------------------------- filling a task's handles one by one (starpu_task_insert_data_*)

namespace {

// Adds 1 to each of its variables (any number of buffers).
void add_one_to_each(void **buffers, void *)
{
	struct starpu_task *task = starpu_task_get_current();
	for (unsigned i = 0; i < STARPU_TASK_GET_NBUFFERS(task); i++)
		(*(int *)STARPU_VARIABLE_GET_PTR(buffers[i]))++;
}

} // namespace

// More handles than STARPU_NMAXBUFS, given one, an array and a mode array at a time, as a program building its
// own task does (Chameleon): every one is stored with its mode and the task runs on all of them.
TEST(TaskInsertData, FillsATaskPastTheStaticBuffers)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	constexpr int n = 3 * STARPU_NMAXBUFS;
	int values[n] = {};
	starpu_data_handle_t h[n];
	for (int i = 0; i < n; i++)
		starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&values[i], sizeof(int));
	starpu_codelet cl = cpu_codelet(add_one_to_each, STARPU_VARIABLE_NBUFFERS, "add_one_to_each");
	struct starpu_task *task = starpu_task_create();
	task->cl = &cl;
	int allocated = 0, current = 0;
	starpu_task_insert_data_make_room(&cl, task, &allocated, current, 2);
	EXPECT_EQ(task->dyn_handles, nullptr) << "room within the static buffers";
	for (int i = 0; i < STARPU_NMAXBUFS; i++)
		starpu_task_insert_data_process_arg(&cl, task, &allocated, &current, STARPU_RW, h[i]);
	std::vector<starpu_data_descr> descrs;
	for (int i = STARPU_NMAXBUFS; i < 2 * STARPU_NMAXBUFS; i++)
		descrs.push_back({ h[i], STARPU_RW });
	starpu_task_insert_data_process_mode_array_arg(&cl, task, &allocated, &current, (int)descrs.size(), descrs.data());
	for (int i = 2 * STARPU_NMAXBUFS; i < n; i++)
		starpu_task_insert_data_process_arg(&cl, task, &allocated, &current, STARPU_RW, h[i]);
	ASSERT_EQ(current, n);
	EXPECT_GE(allocated, n);
	ASSERT_NE(task->dyn_handles, nullptr);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(STARPU_TASK_GET_HANDLE(task, i), h[i]) << i;
		EXPECT_EQ(STARPU_TASK_GET_MODE(task, i), STARPU_RW) << i;
	}
	task->nbuffers = current;
	ASSERT_EQ(starpu_task_submit(task), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	for (int i = 0; i < n; i++) {
		starpu_data_unregister(h[i]);
		EXPECT_EQ(values[i], 1) << i;
	}
}

// An array takes the codelet's modes; a mode the codelet does not declare, a NULL handle or a NULL task is
// said, and nothing is stored.
TEST(TaskInsertData, ArraysTakeTheCodeletsModesAndBadArgumentsAreSaid)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	int a = 0, b = 0;
	starpu_data_handle_t h[2];
	starpu_variable_data_register(&h[0], STARPU_MAIN_RAM, (uintptr_t)&a, sizeof(int));
	starpu_variable_data_register(&h[1], STARPU_MAIN_RAM, (uintptr_t)&b, sizeof(int));
	starpu_codelet cl = cpu_codelet(add_one_to_each, 2, "add_one_to_two");
	cl.modes[0] = STARPU_RW;
	cl.modes[1] = STARPU_RW;
	struct starpu_task *task = starpu_task_create();
	task->cl = &cl;
	int allocated = 0, current = 0;
	std::string err = stderr_of([&] {
		starpu_task_insert_data_process_arg(&cl, task, &allocated, &current, STARPU_R, h[0]);
		starpu_task_insert_data_process_arg(&cl, task, &allocated, &current, STARPU_RW, nullptr);
		starpu_task_insert_data_make_room(&cl, nullptr, &allocated, 0, 1);
	});
	EXPECT_EQ(current, 0) << "nothing stored";
	EXPECT_TRUE(contains(err, "declares another access mode for buffer 0")) << err;
	EXPECT_TRUE(contains(err, "NULL handle")) << err;
	EXPECT_TRUE(contains(err, "starpu_task_insert_data_make_room: give a task")) << err;
	// Past the modes a codelet declares (STARPU_NMAXBUFS without dyn_modes), an array is refused where they end.
	starpu_codelet var = cpu_codelet(add_one_to_each, STARPU_VARIABLE_NBUFFERS, "variable");
	for (int i = 0; i < STARPU_NMAXBUFS; i++)
		var.modes[i] = STARPU_R;
	struct starpu_task *wide = starpu_task_create();
	wide->cl = &var;
	starpu_data_handle_t many[STARPU_NMAXBUFS + 2];
	for (starpu_data_handle_t &m : many)
		m = h[0];
	int wide_allocated = 0, wide_current = 0;
	err = stderr_of([&] {
		starpu_task_insert_data_process_array_arg(&var, wide, &wide_allocated, &wide_current, STARPU_NMAXBUFS + 2, many);
	});
	EXPECT_EQ(wide_current, STARPU_NMAXBUFS);
	EXPECT_TRUE(contains(err, "gives none for buffer " + std::to_string(STARPU_NMAXBUFS))) << err;
	starpu_task_destroy(wide);

	starpu_task_insert_data_process_array_arg(&cl, task, &allocated, &current, 2, h);
	ASSERT_EQ(current, 2);
	task->nbuffers = current;
	ASSERT_EQ(starpu_task_submit(task), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h[0]);
	starpu_data_unregister(h[1]);
	EXPECT_EQ(a, 1);
	EXPECT_EQ(b, 1);
}
