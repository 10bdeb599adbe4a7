// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU-MPI's load balancer (mpi/lb.c, mpi/lb_heat.c, starpu_mpi_lb.h), run
// under mpirun -np 2 and 4 (tests/mpi_run.h): the "heat" policy moves data
// from a loaded rank to its cooler neighbours at phase boundaries, the tasks
// follow the data, the results stay those of a sequential run, and the data
// go home at shutdown; bad names, confs and data units are said on every
// rank and leave balancing off or the data where they are.
#include "helpers.h"

#ifdef STARPU_USE_MPI
#include <starpu_mpi.h>
#include <starpu_mpi_lb.h>
#include "mpi_run.h"

#include <atomic>
#include <unistd.h>
#include <vector>

using namespace astro_test;

namespace {

constexpr int kThreshold = 100;	// LB_HEAT_SLEEP_THRESHOLD: tags per phase
constexpr int kPhases = 4;

// The chain's cells: every rank registers all of them (so each may take any), rank 0 owns them first.
std::vector<int64_t> cells;
std::vector<starpu_data_handle_t> handles;
std::atomic<int> offers{ 0 };	// get_data_unit_to_migrate() calls on this rank
std::atomic<int> ran_here{ 0 };	// tasks this rank ran
starpu_data_handle_t offered_instead = nullptr;	// when set: what get_data_unit_to_migrate() gives

// c[i] = c[i] * 31 + c[i + 1] + phase, kept small; rank 0 is slow, the others are not.
void step_cpu(void *buffers[], void *cl_arg)
{
	int64_t phase;
	starpu_codelet_unpack_args(cl_arg, &phase, 0);
	int64_t *x = (int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	int64_t next = *(const int64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]);
	*x = (*x * 31 + next + phase) % 1000003;
	ran_here++;
	if (starpu_mpi_world_rank() == 0)
		usleep(2000);
}

starpu_codelet step_cl = [] {
	starpu_codelet cl{};
	cl.cpu_funcs[0] = step_cpu;
	cl.nbuffers = 2;
	cl.modes[0] = STARPU_RW;
	cl.modes[1] = STARPU_R;
	cl.name = "lb_step";
	return cl;
}();

// A ring: rank - 1 and rank + 1 (one neighbour on 2 ranks).
void ring_neighbors(int **ids, int *n)
{
	int me = starpu_mpi_world_rank(), size = starpu_mpi_world_size();
	*ids = (int *)malloc(2 * sizeof(int));
	(*ids)[0] = (me + 1) % size;
	(*ids)[1] = (me + size - 1) % size;
	*n = size > 2 ? 2 : 1;
}

// rank + 1 only.
void one_way_neighbors(int **ids, int *n)
{
	ring_neighbors(ids, n);
	*n = 1;
}

// The first cell this rank owns (or offered_instead).
void first_owned(starpu_data_handle_t **units, int *n, int)
{
	offers++;
	*n = 0;
	*units = (starpu_data_handle_t *)malloc(sizeof(starpu_data_handle_t));
	if (offered_instead) {
		(*units)[0] = offered_instead;
		*n = 1;
		return;
	}
	for (starpu_data_handle_t h : handles)
		if (starpu_mpi_data_get_rank(h) == starpu_mpi_world_rank()) {
			(*units)[0] = h;
			*n = 1;
			return;
		}
}

class MpiLb : public MpiRankTest
{
protected:
	void SetUp() override
	{
		MpiRankTest::SetUp();
		offers = 0;
		ran_here = 0;
		offered_instead = nullptr;
		int n = 2 * size_;
		cells.assign(n, 0);
		for (int i = 0; i < n; i++)
			cells[i] = 7 * i + 1;
		expected_ = cells;
		handles.assign(n, nullptr);
		for (int i = 0; i < n; i++)
			handles[i] = owned_variable(&cells[i], 0, 1000 + i);
	}
	void TearDown() override
	{
		for (starpu_data_handle_t h : handles)
			if (h)
				starpu_data_unregister(h);
		handles.clear();
		MpiRankTest::TearDown();
	}
	// kPhases phases over the chain, numbered with STARPU_TAG_ONLY; the sequential result in expected_.
	void run_phases()
	{
		int n = (int)handles.size();
		for (int64_t phase = 0; phase < kPhases; phase++)
			for (int i = 0; i < n; i++) {
				ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &step_cl, STARPU_RW, handles[i], STARPU_R, handles[(i + 1) % n],
								    STARPU_VALUE, &phase, sizeof(phase), STARPU_TAG_ONLY,
								    (starpu_tag_t)(phase * kThreshold + i), 0));
				expected_[i] = (expected_[i] * 31 + expected_[(i + 1) % n] + phase) % 1000003;
			}
		starpu_task_wait_for_all();
	}
	int moved_away() const
	{
		int moved = 0;
		for (starpu_data_handle_t h : handles)
			moved += starpu_mpi_data_get_rank(h) != 0;
		return moved;
	}
	void expect_results_at_home()
	{
		ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
		for (starpu_data_handle_t &h : handles) {
			EXPECT_EQ(0, starpu_mpi_data_get_rank(h)) << "the data went home at shutdown";
			starpu_data_unregister(h);
			h = nullptr;
		}
		if (rank_ == 0)
			EXPECT_EQ(expected_, cells);
	}
	void balance_with(starpu_mpi_lb_conf conf)
	{
		ScopedEnv sleep("LB_HEAT_SLEEP_THRESHOLD", std::to_string(kThreshold));
		ScopedEnv time("LB_HEAT_TIME_THRESHOLD", "500");
		ScopedEnv name("STARPU_MPI_LB", nullptr);
		ASSERT_EQ(0, starpu_mpi_lb_init("heat", &conf));
		run_phases();
		// At the first boundary rank 0 had worked 2 ms per task and the others not at all.
		if (rank_ == 0) {
			EXPECT_GE(offers.load(), 1);
		}
		EXPECT_GE(moved_away(), 1) << "every rank learnt the moves";
		if (rank_ == 1) {
			EXPECT_GE(ran_here.load(), 1) << "the tasks of the data rank 1 took ran there";
		}
		EXPECT_EQ(0, starpu_mpi_lb_shutdown());
		EXPECT_EQ(0, moved_away());
		expect_results_at_home();
	}
	std::vector<int64_t> expected_;
	starpu_mpi_lb_conf conf_lb_{ ring_neighbors, first_owned };
};

// Rank 0 runs everything and is slow, its neighbours idle: it gives them data,
// the tasks follow, and the results are those of a sequential run.
TEST_F(MpiLb, HeatMovesDataToTheCoolerNeighboursAndResultsStayRight)
{
	balance_with(conf_lb_);
}

// The same when each rank lists only the next one (rank 0 gives to rank 1, which never hears of rank 0's load).
TEST_F(MpiLb, OneWayNeighboursBalanceToo)
{
	balance_with({ one_way_neighbors, first_owned });
}

// The policy named by STARPU_MPI_LB wins over the program's; unknown names,
// missing ones and bad confs are said, and balancing stays off on every rank.
// Nothing moves: no phase boundary is crossed while a balancer runs.
TEST_F(MpiLb, BadNamesAndConfsAreSaidOnEveryRank)
{
	std::string err;
	int ret = 0;
	err = stderr_of([&] { ret = starpu_mpi_lb_init("nosuch", &conf_lb_); });
	EXPECT_EQ(-ENOENT, ret);
	EXPECT_TRUE(contains(err, "no load balancing policy is named 'nosuch'") && contains(err, "heat")) << err;
	{
		ScopedEnv name("STARPU_MPI_LB", "warm");
		err = stderr_of([&] { ret = starpu_mpi_lb_init("heat", &conf_lb_); });
		EXPECT_EQ(-ENOENT, ret);
		EXPECT_TRUE(contains(err, "'warm' (by STARPU_MPI_LB)")) << err;
	}
	{
		ScopedEnv name("STARPU_MPI_LB", "help");
		err = stderr_of([&] { ret = starpu_mpi_lb_init("heat", &conf_lb_); });
		EXPECT_EQ(0, ret);
		EXPECT_TRUE(contains(err, "policies are: heat")) << err;
	}
	ScopedEnv name("STARPU_MPI_LB", nullptr);
	err = stderr_of([&] { ret = starpu_mpi_lb_init(nullptr, &conf_lb_); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "no policy named")) << err;
	err = stderr_of([&] { ret = starpu_mpi_lb_init("heat", nullptr); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "conf is NULL")) << err;
	starpu_mpi_lb_conf half{ ring_neighbors, nullptr };
	err = stderr_of([&] { ret = starpu_mpi_lb_init("heat", &half); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "get_data_unit_to_migrate is NULL")) << err;

	// Only rank 1 names a rank that does not exist: every rank refuses, rank 1 says why.
	starpu_mpi_lb_conf far{ [](int **ids, int *n) {
				       ring_neighbors(ids, n);
				       if (starpu_mpi_world_rank() == 1)
					       (*ids)[0] = 99;
			       },
				first_owned };
	err = stderr_of([&] { ret = starpu_mpi_lb_init("heat", &far); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, rank_ == 1 ? "gave rank 99, which is not a rank" : "another rank's load balancer conf is wrong")) << err;
	// One way round the ring (StarPU's load_balancer test: rank r lists r + 1 only) is fine.
	starpu_mpi_lb_conf one_way{ one_way_neighbors, first_owned };
	EXPECT_EQ(0, starpu_mpi_lb_init("heat", &one_way));
	EXPECT_EQ(0, starpu_mpi_lb_shutdown());

	// Nothing runs after all this: the data stay, the results are right.
	EXPECT_EQ(0, starpu_mpi_lb_shutdown());
	run_phases();
	EXPECT_EQ(0, moved_away());
	EXPECT_EQ(0, offers.load());
	expect_results_at_home();
}

TEST_F(MpiLb, ASecondInitIsRefused)
{
	ScopedEnv name("STARPU_MPI_LB", nullptr);
	ASSERT_EQ(0, starpu_mpi_lb_init("heat", &conf_lb_));
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_mpi_lb_init("heat", &conf_lb_); });
	EXPECT_EQ(-EBUSY, ret);
	EXPECT_TRUE(contains(err, "call starpu_mpi_lb_shutdown() first")) << err;
	EXPECT_EQ(0, starpu_mpi_lb_shutdown());
	EXPECT_EQ(0, starpu_mpi_lb_shutdown()) << "a second shutdown has nothing to do";
	expect_results_at_home();
}

// Data units the balancer cannot move are said and stay: one its destination
// never registered, and one the giving rank does not own.
TEST_F(MpiLb, DataUnitsThatCannotMoveStay)
{
	ScopedEnv sleep("LB_HEAT_SLEEP_THRESHOLD", std::to_string(kThreshold));
	ScopedEnv time("LB_HEAT_TIME_THRESHOLD", "500");
	ScopedEnv name("STARPU_MPI_LB", nullptr);
	int64_t lone_mem = 5, other_mem = 6;
	starpu_data_handle_t lone = nullptr;	// registered on rank 0 only
	if (rank_ == 0) {
		starpu_variable_data_register(&lone, STARPU_MAIN_RAM, (uintptr_t)&lone_mem, sizeof(lone_mem));
		starpu_mpi_data_register(lone, 5000, 0);
	}
	starpu_data_handle_t other = owned_variable(&other_mem, 1, 5001);	// rank 1's, on every rank
	for (int round = 0; round < 2; round++) {
		offers = 0;
		offered_instead = round == 0 ? lone : other;
		ASSERT_EQ(0, starpu_mpi_lb_init("heat", &conf_lb_));
		std::string err = stderr_of([&] { run_phases(); });
		// Rank 0 works and its neighbours do not: it gives to the first of them, rank 1.
		if (rank_ == 0) {
			EXPECT_GE(offers.load(), 1);
		}
		if (round == 0 && rank_ == 1) {
			EXPECT_TRUE(contains(err, "tag 5000 should move to rank 1, which has none registered")) << err;
		}
		if (round == 1 && rank_ == 0) {
			EXPECT_TRUE(contains(err, "not registered on MPI_COMM_WORLD as owned by this rank")) << err;
		}
		EXPECT_EQ(0, moved_away());
		EXPECT_EQ(1, starpu_mpi_data_get_rank(other));
		EXPECT_EQ(0, starpu_mpi_lb_shutdown());
	}
	if (lone)
		starpu_data_unregister(lone);
	starpu_data_unregister(other);
	expect_results_at_home();
}

// ------------------------------------------------------ the launcher's side

const char kRankTests[] = "MpiLb.*";

// StarPU's MPI programs and tests (mpi/tests/load_balancer.c) test for StarPU-MPI's MPI back-end.
TEST(MpiRun, ConfigNamesTheMpiBackEnd)
{
#ifdef STARPU_USE_MPI_MPI
	SUCCEED();
#else
	FAIL() << "starpu_config.h defines STARPU_USE_MPI without STARPU_USE_MPI_MPI";
#endif
}

TEST(MpiRun, TwoRanks)
{
	run_ranks(2, kRankTests);
}

TEST(MpiRun, FourRanks)
{
	run_ranks(4, kRankTests);
}

} // namespace

int main(int argc, char **argv)
{
	return mpi_test_main(argc, argv, kRankTests, nullptr);
}
#else

TEST(MpiRun, NeedsMpi)
{
	GTEST_SKIP() << "built without MPI (configure found no Open MPI): install libopenmpi-dev and openmpi-bin, then configure again";
}

#endif
