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

} // namespace
