// SPDX-License-Identifier: LGPL-2.1-or-later
// The acquire variants of StarPU 1.4 that take a quick flag and give the job
// ids of their synchronisations (issue 40).
#include "helpers.h"

using namespace astro_test;

namespace {

class DataApiAcquire : public ::testing::Test
{
protected:
	void SetUp() override { ASSERT_EQ(init_with_ncpus(2), 0); }
	void TearDown() override { starpu_shutdown(); }
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
};

struct Acquired
{
	starpu_data_handle_t h;
	std::atomic<int> calls{0};
	int seen = -1;
};

void note_and_release(void *arg)
{
	Acquired *a = (Acquired *)arg;
	a->seen = *(int *)starpu_variable_get_local_ptr(a->h);
	a->calls++;
	starpu_data_release_on_node(a->h, STARPU_MAIN_RAM);
}

void add_one(void **buffers, void *)
{
	(*(int *)STARPU_VARIABLE_GET_PTR(buffers[0]))++;
}

TEST_F(DataApiAcquire, QuickAcquireComesAfterTheTasksBeforeIt)
{
	int x = 0;
	Acquired a;
	starpu_variable_data_register(&a.h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	static starpu_codelet cl = cpu_codelet(add_one, 1, "add_one");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, a.h, 0), 0);
	ASSERT_EQ(starpu_data_acquire_on_node_cb_sequential_consistency_quick(a.h, STARPU_MAIN_RAM, STARPU_R, note_and_release, &a, 1, 1), 0);
	starpu_data_unregister(a.h);
	EXPECT_EQ(a.calls.load(), 1);
	EXPECT_EQ(a.seen, 1) << "the callback saw the data before the task wrote it";
}

TEST_F(DataApiAcquire, SyncJobidsAreTheAcquiresJob)
{
	int x = 0;
	Acquired a;
	starpu_variable_data_register(&a.h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	long pre = -2, post = -2;
	ASSERT_EQ(starpu_data_acquire_on_node_cb_sequential_consistency_sync_jobids(a.h, STARPU_MAIN_RAM, STARPU_RW, note_and_release, &a, 1, 0,
										     &pre, &post), 0);
	EXPECT_GT(pre, 0);
	EXPECT_EQ(pre, post);
	static starpu_codelet cl = cpu_codelet(add_one, 1, "add_one");
	cl.modes[0] = STARPU_RW;
	struct starpu_task *task = starpu_task_build(&cl, STARPU_RW, a.h, 0);
	ASSERT_NE(task, nullptr);
	task->detach = 0;
	ASSERT_EQ(starpu_task_submit(task), 0);
	EXPECT_GT((long)starpu_task_get_job_id(task), pre) << "a later task has a later job";
	ASSERT_EQ(starpu_task_wait(task), 0);
	starpu_data_unregister(a.h);
	EXPECT_EQ(a.calls.load(), 1);
	// Either pointer may be NULL; a refused acquire gives -1.
	starpu_variable_data_register(&a.h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	ASSERT_EQ(starpu_data_acquire_on_node_cb_sequential_consistency_sync_jobids(a.h, STARPU_MAIN_RAM, STARPU_R, note_and_release, &a, 1, 1,
										     nullptr, &post), 0);
	starpu_task_wait_for_all();
	int ret = 0;
	std::string err = stderr_of([&] {
		ret = starpu_data_acquire_on_node_cb_sequential_consistency_sync_jobids(a.h, STARPU_MAIN_RAM, STARPU_R, nullptr, nullptr, 1, 0,
										       &pre, &post);
	});
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_EQ(pre, -1);
	EXPECT_EQ(post, -1);
	EXPECT_TRUE(contains(err, "starpu_data_acquire_on_node_cb_sequential_consistency_sync_jobids: NULL callback")) << err;
	starpu_data_unregister(a.h);
	EXPECT_EQ(a.calls.load(), 2);
}

} // namespace
