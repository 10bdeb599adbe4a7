// SPDX-License-Identifier: LGPL-2.1-or-later
// Several partition plans on one handle (issue 23): the plan API of StarPU
// 1.4 (starpu_data_partition_plan, _partition_submit, _unpartition_submit,
// the read-only variants, the read-write upgrade, _partition_clean) and the
// switches the runtime submits by itself when a task or an acquire reaches a
// handle in a state that does not allow it: switching between plans keeps
// the data right.
#include "helpers.h"

using namespace astro_test;

namespace {

const uint32_t N = 24;

void add_to_vector(void **buffers, void *arg)
{
	int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (uint32_t i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] += *(int *)arg;
}

void double_vector(void **buffers, void *)
{
	int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (uint32_t i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] *= 2;
}

void sum_vector(void **buffers, void *arg)
{
	long s = 0;
	const int *v = (const int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (uint32_t i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		s += v[i];
	*(long *)arg = s;
}

starpu_codelet codelet(starpu_cpu_func_t f, const char *name, starpu_data_access_mode mode)
{
	starpu_codelet cl = cpu_codelet(f, 1, name);
	cl.modes[0] = mode;
	return cl;
}

// Static: the runtime may still use them after a test body returns.
starpu_codelet add_cl = codelet(add_to_vector, "add", STARPU_RW);
starpu_codelet double_cl = codelet(double_vector, "double", STARPU_RW);
starpu_codelet sum_cl = codelet(sum_vector, "sum", STARPU_R);
int one = 1, hundred = 100;

int submit(starpu_codelet *cl, starpu_data_handle_t h, void *arg)
{
	return submit_on_handle(cl, h, arg);
}

starpu_data_filter blocks(unsigned n)
{
	starpu_data_filter f = {};
	f.filter_func = starpu_vector_filter_block;
	f.nchildren = n;
	return f;
}

class PartitionPlans : public ::testing::Test
{
protected:
	void SetUp() override
	{
		ASSERT_EQ(init_with_ncpus(2), 0);
		started_ = true;
		for (uint32_t i = 0; i < N; i++)
			v_[i] = (int)i;
		starpu_vector_data_register(&h_, STARPU_MAIN_RAM, (uintptr_t)v_, N, sizeof(int));
		starpu_data_filter fa = blocks(3), fb = blocks(4);
		starpu_data_partition_plan(h_, &fa, a_);
		starpu_data_partition_plan(h_, &fb, b_);
	}
	void TearDown() override
	{
		if (started_)
			starpu_shutdown();
	}
	void clean()
	{
		starpu_data_partition_clean(h_, 3, a_);
		starpu_data_partition_clean(h_, 4, b_);
		starpu_data_unregister(h_);
	}
	std::vector<int> expected(std::function<int(int)> f)
	{
		std::vector<int> e(N);
		for (uint32_t i = 0; i < N; i++)
			e[i] = f((int)i);
		return e;
	}
	std::vector<int> values() { return std::vector<int>(v_, v_ + N); }
	bool started_ = false;
	int v_[N];
	starpu_data_handle_t h_;
	starpu_data_handle_t a_[3], b_[4];
};

TEST_F(PartitionPlans, TwoPlansSubmittedInTurnKeepTheData)
{
	const int rounds = 3;
	for (int r = 0; r < rounds; r++) {
		starpu_data_partition_submit(h_, 3, a_);
		for (auto c : a_)
			ASSERT_EQ(submit(&add_cl, c, &one), 0);
		starpu_data_unpartition_submit(h_, 3, a_, STARPU_MAIN_RAM);
		ASSERT_EQ(submit(&add_cl, h_, &hundred), 0);
		starpu_data_partition_submit(h_, 4, b_);
		for (auto c : b_)
			ASSERT_EQ(submit(&double_cl, c, nullptr), 0);
		starpu_data_unpartition_submit(h_, 4, b_, STARPU_MAIN_RAM);
	}
	clean();
	EXPECT_EQ(values(), expected([&](int x) {
			  for (int r = 0; r < rounds; r++)
				  x = (x + 101) * 2;
			  return x;
		  }));
}

TEST_F(PartitionPlans, AccessesSwitchThePlansThemselves)
{
	// No partition submitted: each task's access makes the plan it needs.
	for (auto c : a_)
		ASSERT_EQ(submit(&add_cl, c, &one), 0);
	for (auto c : b_)
		ASSERT_EQ(submit(&double_cl, c, nullptr), 0);
	long sum = -1;
	ASSERT_EQ(submit(&sum_cl, h_, &sum), 0);
	for (auto c : a_)
		ASSERT_EQ(submit(&add_cl, c, &hundred), 0);
	// An acquire of the parent gathers too.
	ASSERT_EQ(starpu_data_acquire(h_, STARPU_R), 0);
	EXPECT_EQ(v_[5], (5 + 1) * 2 + 100);
	starpu_data_release(h_);
	long want = 0;
	for (uint32_t i = 0; i < N; i++)
		want += ((long)i + 1) * 2;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(sum, want);
	clean();
	EXPECT_EQ(values(), expected([](int x) { return (x + 1) * 2 + 100; }));
}

TEST_F(PartitionPlans, ReadOnlyPlansTogetherThenAnUpgrade)
{
	starpu_data_partition_readonly_submit(h_, 3, a_);
	starpu_data_partition_readonly_submit(h_, 4, b_);
	long sums[3 + 4 + 1];
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(submit(&sum_cl, a_[i], &sums[i]), 0);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(submit(&sum_cl, b_[i], &sums[3 + i]), 0);
	ASSERT_EQ(submit(&sum_cl, h_, &sums[7]), 0); // the parent stays readable
	starpu_data_unpartition_submit(h_, 4, b_, STARPU_MAIN_RAM);
	starpu_data_partition_readwrite_upgrade_submit(h_, 3, a_);
	for (auto c : a_)
		ASSERT_EQ(submit(&add_cl, c, &one), 0);
	starpu_data_unpartition_submit(h_, 3, a_, STARPU_MAIN_RAM);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	const long total = (long)N * (N - 1) / 2;
	EXPECT_EQ(sums[0] + sums[1] + sums[2], total);
	EXPECT_EQ(sums[3] + sums[4] + sums[5] + sums[6], total);
	EXPECT_EQ(sums[7], total);
	clean();
	EXPECT_EQ(values(), expected([](int x) { return x + 1; }));
}

// A reader of a read-only plan's child that stays until the test lets it go,
// noting whether the parent changed meanwhile.
std::atomic<bool> g_let_go{false};
std::atomic<int> g_reading{0}, g_changed_under_reader{0};

void slow_reader(void **buffers, void *)
{
	const int *v = (const int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	int first = v[0];
	g_reading++;
	wait_until([] { return g_let_go.load(); }, 30000);
	if (v[0] != first)
		g_changed_under_reader++;
}

TEST_F(PartitionPlans, AWriterOfTheParentWaitsForTheReadersOfItsReadOnlyPlans)
{
	static starpu_codelet reader = codelet(slow_reader, "slow_reader", STARPU_R);
	g_let_go = false;
	g_reading = g_changed_under_reader = 0;
	starpu_data_partition_readonly_submit(h_, 3, a_);
	ASSERT_EQ(submit(&reader, a_[0], nullptr), 0);
	ASSERT_TRUE(wait_until([] { return g_reading.load() == 1; }, 30000));
	// The write gathers the plan first, which waits for the reader.
	ASSERT_EQ(submit(&add_cl, h_, &hundred), 0);
	sleep_ms(100); // a wrong order would let the writer run meanwhile (the check cannot fail when right)
	g_let_go = true;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_changed_under_reader.load(), 0);
	clean();
	EXPECT_EQ(values(), expected([](int x) { return x + 100; }));
}

TEST_F(PartitionPlans, NestedPlansAreGatheredDeepestFirst)
{
	starpu_data_handle_t inner[2];
	starpu_data_filter f = blocks(2);
	starpu_data_partition_plan(a_[1], &f, inner);
	starpu_data_partition_submit(h_, 3, a_);
	starpu_data_partition_submit(a_[1], 2, inner);
	for (auto c : inner)
		ASSERT_EQ(submit(&add_cl, c, &one), 0);
	starpu_data_unpartition_submit_r(h_, STARPU_MAIN_RAM);
	ASSERT_EQ(submit(&double_cl, h_, nullptr), 0);
	starpu_data_partition_clean(a_[1], 2, inner);
	clean();
	// a_[1] is elements 8..15.
	EXPECT_EQ(values(), expected([](int x) { return (x >= 8 && x < 16 ? x + 1 : x) * 2; }));
}

// Checks that each element of a vector (a part starting at element first of the whole) is factor * its index.
std::atomic<int> g_mismatches{0}, g_checks{0};
struct Expect
{
	int first, factor;
};

void check_vector(void **buffers, void *arg)
{
	const Expect *e = (const Expect *)arg;
	const int *v = (const int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (uint32_t i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		if (v[i] != e->factor * (e->first + (int)i))
			g_mismatches++;
	g_checks++;
}

TEST_F(PartitionPlans, DowngradeReadOnlyPlansAndUpgradeInOneProgram)
{
	static starpu_codelet check_cl = codelet(check_vector, "check", STARPU_R);
	static Expect a_parts[4][3], b_parts[4][4], whole[4];
	g_mismatches = g_checks = 0;
	auto check_all = [&](int round, int factor) {
		for (int i = 0; i < 3; i++) {
			a_parts[round][i] = { i * 8, factor };
			ASSERT_EQ(submit(&check_cl, a_[i], &a_parts[round][i]), 0);
		}
		for (int i = 0; i < 4; i++) {
			b_parts[round][i] = { i * 6, factor };
			ASSERT_EQ(submit(&check_cl, b_[i], &b_parts[round][i]), 0);
		}
		whole[round] = { 0, factor };
		ASSERT_EQ(submit(&check_cl, h_, &whole[round]), 0);
	};
	// Written through a_ (partitioned by the accesses), then a_ read-only beside a read-only b_.
	for (auto c : a_)
		ASSERT_EQ(submit(&double_cl, c, nullptr), 0);
	starpu_data_partition_readonly_downgrade_submit(h_, 3, a_);
	starpu_data_partition_readonly_submit(h_, 4, b_);
	check_all(0, 2);
	starpu_data_unpartition_submit(h_, 4, b_, -1);
	starpu_data_unpartition_submit(h_, 3, a_, -1);
	ASSERT_EQ(submit(&double_cl, h_, nullptr), 0);
	starpu_data_partition_readonly_submit(h_, 3, a_);
	starpu_data_partition_readonly_submit(h_, 4, b_);
	check_all(1, 4);
	starpu_data_unpartition_submit(h_, 3, a_, -1);
	starpu_data_partition_readwrite_upgrade_submit(h_, 4, b_);
	for (auto c : b_)
		ASSERT_EQ(submit(&double_cl, c, nullptr), 0);
	starpu_data_unpartition_readonly_submit(h_, 4, b_, -1);
	starpu_data_partition_readonly_submit(h_, 3, a_);
	check_all(2, 8);
	starpu_data_unpartition_submit(h_, 3, a_, -1);
	starpu_data_unpartition_submit(h_, 4, b_, -1);
	ASSERT_EQ(submit(&double_cl, h_, nullptr), 0);
	check_all(3, 16); // every plan made again by the reads
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_checks.load(), 4 * 8);
	EXPECT_EQ(g_mismatches.load(), 0);
	clean();
	EXPECT_EQ(values(), expected([](int x) { return 16 * x; }));
}

TEST_F(PartitionPlans, WrongSwitchesAreSaidAndChangeNothing)
{
	starpu_data_partition_submit(h_, 3, a_);
	std::string err = stderr_of([&] { starpu_data_partition_submit(h_, 4, b_); });
	EXPECT_TRUE(contains(err, "partitioned into another plan")) << err;
	err = stderr_of([&] { starpu_data_partition_readonly_submit(h_, 4, b_); });
	EXPECT_TRUE(contains(err, "partitioned into another plan")) << err;
	err = stderr_of([&] { starpu_data_unpartition_submit(h_, 4, b_, STARPU_MAIN_RAM); });
	EXPECT_TRUE(contains(err, "not partitioned into this plan")) << err;
	err = stderr_of([&] { starpu_data_partition_readwrite_upgrade_submit(h_, 3, a_); });
	EXPECT_TRUE(contains(err, "read-only")) << err;
	starpu_data_handle_t mixed[3] = { a_[0], b_[1], a_[2] };
	err = stderr_of([&] { starpu_data_unpartition_submit(h_, 3, mixed, STARPU_MAIN_RAM); });
	EXPECT_TRUE(contains(err, "not a plan of the handle")) << err;
	err = stderr_of([&] { starpu_data_partition_submit(h_, 2, a_); });
	EXPECT_TRUE(contains(err, "not a plan of the handle")) << err;
	// The plan submitted first still works.
	for (auto c : a_)
		ASSERT_EQ(submit(&add_cl, c, &one), 0);
	starpu_data_unpartition_submit(h_, 3, a_, STARPU_MAIN_RAM);
	clean();
	EXPECT_EQ(values(), expected([](int x) { return x + 1; }));
}

TEST_F(PartitionPlans, NotAutomaticLeavesTheSwitchesToTheProgram)
{
	starpu_data_partition_not_automatic(h_);
	starpu_data_partition_submit(h_, 3, a_);
	for (auto c : a_)
		ASSERT_EQ(submit(&add_cl, c, &one), 0);
	// The program gathers the plan itself before reading the parent.
	starpu_data_unpartition_submit(h_, 3, a_, STARPU_MAIN_RAM);
	long sum = -1;
	ASSERT_EQ(submit(&sum_cl, h_, &sum), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(sum, (long)N * (N - 1) / 2 + N);
	clean();
}

TEST_F(PartitionPlans, UnregisteringTheParentGathersItsPlans)
{
	starpu_data_partition_submit(h_, 4, b_);
	for (auto c : b_)
		ASSERT_EQ(submit(&double_cl, c, nullptr), 0);
	starpu_data_unregister(h_); // the plan is gathered first: the data comes home
	EXPECT_EQ(values(), expected([](int x) { return 2 * x; }));
	// The children were not cleaned: they go on their own.
	for (auto c : a_)
		starpu_data_unregister(c);
	for (auto c : b_)
		starpu_data_unregister(c);
}

} // namespace
