// SPDX-License-Identifier: LGPL-2.1-or-later
// Task bundles (starpu_task_bundle.h): tasks a program groups; they run as
// plain tasks, leave the bundle when removed or destroyed, and a closed
// bundle goes away with its last task. The estimates sum over the tasks.
#include "helpers.h"

#include <cmath>

using namespace astro_test;

namespace {

class Bundle : public ::testing::Test
{
protected:
	void SetUp() override { ASSERT_EQ(init_with_ncpus(2), 0); }
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
};

void scale(void **buffers, void *arg)
{
	float *x = (float *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	*x *= *(float *)arg;
}

struct starpu_codelet scale_cl = [] {
	struct starpu_codelet cl = cpu_codelet(scale, 1, "scale");
	cl.modes[0] = STARPU_RW;
	return cl;
}();

struct starpu_task *scale_task(starpu_data_handle_t h, float *factor)
{
	struct starpu_task *t = starpu_task_create();
	t->cl = &scale_cl;
	t->cl_arg = factor;
	t->handles[0] = h;
	return t;
}

// StarPU's starpu_task_bundle test: bundles of 5 tasks on one value, one put aside, all submitted.
TEST_F(Bundle, TasksOfABundleRunAsTasks)
{
	static float values[3], factors[3];
	for (int i = 0; i < 3; i++) {
		values[i] = (float)(i + 1);
		factors[i] = (float)(i + 2);
	}
	starpu_data_handle_t h[3];
	for (int i = 0; i < 3; i++)
		starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&values[i], sizeof(float));
	for (int i = 0; i < 3; i++) {
		starpu_task_bundle_t b;
		starpu_task_bundle_create(&b);
		ASSERT_NE(b, nullptr);
		struct starpu_task *t[5];
		for (int j = 0; j < 5; j++) {
			t[j] = scale_task(h[i], &factors[i]);
			ASSERT_EQ(starpu_task_bundle_insert(b, t[j]), 0);
			EXPECT_EQ(t[j]->bundle, b);
		}
		ASSERT_EQ(starpu_task_bundle_remove(b, t[2]), 0);
		EXPECT_EQ(t[2]->bundle, nullptr);
		for (int j = 0; j < 5; j++)
			ASSERT_EQ(starpu_task_submit(t[j]), 0);
		starpu_task_bundle_close(b);
	}
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	for (int i = 0; i < 3; i++) {
		starpu_data_unregister(h[i]);
		EXPECT_EQ(values[i], (i + 1) * std::pow(factors[i], 5.0f));
	}
}

TEST_F(Bundle, BadCallsAreRefusedWithOneMessage)
{
	static float value, factor;
	value = 1;
	factor = 2;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(float));
	starpu_task_bundle_t b, other;
	starpu_task_bundle_create(&b);
	starpu_task_bundle_create(&other);
	struct starpu_task *t = scale_task(h, &factor);
	t->detach = 0;
	t->destroy = 0; // starpu_task_wait() would free it

	std::string err = stderr_of([&] { EXPECT_EQ(starpu_task_bundle_insert(nullptr, t), -EINVAL); });
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_task_bundle_insert(b, nullptr), -EINVAL); });
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	err = stderr_of([&] { starpu_task_bundle_create(nullptr); });
	EXPECT_EQ(lines_of(err).size(), 1u) << err;

	ASSERT_EQ(starpu_task_bundle_insert(b, t), 0);
	err = stderr_of([&] { EXPECT_EQ(starpu_task_bundle_insert(other, t), -EINVAL); });
	EXPECT_TRUE(contains(err, "in a bundle already")) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_task_bundle_remove(other, t), -ENOENT); });
	EXPECT_TRUE(contains(err, "not in this bundle")) << err;
	EXPECT_EQ(t->bundle, b) << "a refused call changes nothing";

	ASSERT_EQ(starpu_task_submit(t), 0);
	struct starpu_task *late = scale_task(h, &factor);
	starpu_task_bundle_close(other);
	ASSERT_EQ(starpu_task_wait(t), 0);
	EXPECT_EQ(value, 2.0f);

	// A submitted task cannot join a bundle; a closed bundle takes no task.
	starpu_task_bundle_t third;
	starpu_task_bundle_create(&third);
	struct starpu_task *running = scale_task(h, &factor);
	running->detach = 0;
	running->destroy = 0;
	starpu_data_acquire(h, STARPU_R); // holds the task back: it stays submitted
	ASSERT_EQ(starpu_task_submit(running), 0);
	err = stderr_of([&] { EXPECT_EQ(starpu_task_bundle_insert(third, running), -EPERM); });
	EXPECT_TRUE(contains(err, "submitted already")) << err;
	starpu_data_release(h);
	ASSERT_EQ(starpu_task_wait(running), 0);
	starpu_task_destroy(running);

	ASSERT_EQ(starpu_task_bundle_insert(third, late), 0);
	starpu_task_bundle_close(third); // not freed yet: late is in it
	starpu_task_bundle_t closed;
	starpu_task_bundle_create(&closed);
	ASSERT_EQ(starpu_task_bundle_insert(closed, t), -EINVAL) << "t is still in b";
	ASSERT_EQ(starpu_task_bundle_remove(b, t), 0);
	struct starpu_task *extra = scale_task(h, &factor);
	ASSERT_EQ(starpu_task_bundle_insert(closed, extra), 0);
	starpu_task_bundle_close(closed);
	struct starpu_task *refused = scale_task(h, &factor);
	starpu_task_bundle_t kept;
	starpu_task_bundle_create(&kept);
	ASSERT_EQ(starpu_task_bundle_insert(kept, refused), 0);
	ASSERT_EQ(starpu_task_bundle_remove(kept, refused), 0);
	starpu_task_bundle_close(kept); // empty: freed at once

	// Destroying the last tasks frees the closed bundles (ASan would see a leak otherwise).
	starpu_task_destroy(late);
	starpu_task_destroy(extra);
	starpu_task_destroy(refused);
	starpu_task_destroy(t);
	starpu_task_bundle_close(b);
	starpu_data_unregister(h);
}

void nothing(void **, void *) {}

double length_of(struct starpu_task *task, struct starpu_perfmodel_arch *, unsigned)
{
	return (double)(uintptr_t)task->cl_arg;
}

// A codelet whose tasks last what their cl_arg says (µs), on every architecture.
struct starpu_perfmodel length_model = [] {
	struct starpu_perfmodel m;
	memset(&m, 0, sizeof(m));
	m.type = STARPU_PER_ARCH;
	m.arch_cost_function = length_of;
	m.symbol = "bundle_test_model";
	return m;
}();
struct starpu_codelet modelled_cl = [] {
	struct starpu_codelet c = cpu_codelet(nothing, 0, "modelled");
	c.model = &length_model;
	return c;
}();

TEST_F(Bundle, EstimatesSumOverTheTasks)
{
	starpu_task_bundle_t b;
	starpu_task_bundle_create(&b);
	struct starpu_task *t[3];
	for (int i = 0; i < 3; i++) {
		t[i] = starpu_task_create();
		t[i]->cl = &modelled_cl;
		t[i]->cl_arg = (void *)(uintptr_t)(10 * (i + 1));
		ASSERT_EQ(starpu_task_bundle_insert(b, t[i]), 0);
	}
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, STARPU_NMAX_SCHED_CTXS);
	ASSERT_NE(arch, nullptr);
	EXPECT_DOUBLE_EQ(starpu_task_bundle_expected_length(b, arch, 0), 60.0);
	ASSERT_EQ(starpu_task_bundle_remove(b, t[1]), 0);
	EXPECT_DOUBLE_EQ(starpu_task_bundle_expected_length(b, arch, 0), 40.0);
	EXPECT_EQ(starpu_task_bundle_expected_data_transfer_time(b, STARPU_MAIN_RAM), 0.0);
	std::string err = stderr_of([&] { EXPECT_TRUE(std::isnan(starpu_task_bundle_expected_length(nullptr, arch, 0))); });
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	for (int i = 0; i < 3; i++)
		starpu_task_destroy(t[i]);
	starpu_task_bundle_close(b);
}

// dmda places a task for its whole bundle (StarPU's heft rule), then takes it out of the bundle.
TEST(BundleDmda, APlacedTaskLeavesItsBundle)
{
	ScopedEnv sched("STARPU_SCHED", "dmda");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	starpu_task_bundle_t b;
	starpu_task_bundle_create(&b);
	struct starpu_task *t[2];
	for (int i = 0; i < 2; i++) {
		t[i] = starpu_task_create();
		t[i]->cl = &modelled_cl;
		t[i]->cl_arg = (void *)(uintptr_t)10;
		t[i]->detach = 0;
		t[i]->destroy = 0;
		ASSERT_EQ(starpu_task_bundle_insert(b, t[i]), 0);
	}
	ASSERT_EQ(starpu_task_submit(t[0]), 0);
	ASSERT_EQ(starpu_task_wait(t[0]), 0);
	EXPECT_EQ(t[0]->bundle, nullptr);
	EXPECT_EQ(t[1]->bundle, b);
	ASSERT_EQ(starpu_task_submit(t[1]), 0);
	ASSERT_EQ(starpu_task_wait(t[1]), 0);
	EXPECT_EQ(t[1]->bundle, nullptr);
	starpu_task_bundle_close(b); // empty: freed
	for (int i = 0; i < 2; i++)
		starpu_task_destroy(t[i]);
}

} // namespace
