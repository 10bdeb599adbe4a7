// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU-MPI calls of StarPU 1.4 (issue 40): the cache entries a program sets and
// clears itself, the MPI tag of StarPU-MPI's own messages, and starpu_mpi_data_cpy().
// Rank tests of test_mpi_ext (its MpiRun tests run them under mpirun).
#include "mpi_run.h"

using namespace astro_test;

namespace {

class MpiExtApi : public MpiRankTest
{
};

TEST_F(MpiExtApi, CacheEntriesAreSetAndClearedByTheProgram)
{
	ASSERT_EQ(0, starpu_mpi_cache_set(1));
	int64_t v = 5;
	starpu_data_handle_t h = owned_variable(&v, 0, 900);
	if (rank_ != 0) {
		EXPECT_EQ(0, starpu_mpi_cached_receive(h));
		EXPECT_EQ(0, starpu_mpi_cached_receive_set(h)) << "noted now";
		EXPECT_EQ(1, starpu_mpi_cached_receive(h));
		EXPECT_EQ(1, starpu_mpi_cached_receive_set(h)) << "noted already";
		starpu_mpi_cached_receive_clear(h);
		EXPECT_EQ(0, starpu_mpi_cached_receive(h));
	} else {
		EXPECT_EQ(0, starpu_mpi_cached_send_set(h, 1));
		EXPECT_EQ(1, starpu_mpi_cached_send(h, 1));
		EXPECT_EQ(1, starpu_mpi_cached_send_set(h, 1));
		EXPECT_EQ(0, starpu_mpi_cached_send(h, size_ - 1 == 1 ? 0 : size_ - 1));
		starpu_mpi_cached_send_clear(h);
		EXPECT_EQ(0, starpu_mpi_cached_send(h, 1));
	}
	ASSERT_EQ(0, starpu_mpi_cache_set(0));
	EXPECT_EQ(0, starpu_mpi_cached_send_set(h, 1)) << "nothing is noted while the cache is off";
	EXPECT_EQ(0, starpu_mpi_cached_send(h, 1));
	ASSERT_EQ(0, starpu_mpi_cache_set(1));
	starpu_data_unregister(h);
	int64_t w = 0;
	starpu_data_handle_t plain;
	starpu_variable_data_register(&plain, STARPU_MAIN_RAM, (uintptr_t)&w, sizeof(w));
	int got = 1;
	std::string err = stderr_of([&] {
		got = starpu_mpi_cached_receive_set(plain);
		starpu_mpi_cached_send_clear(plain);
	});
	EXPECT_EQ(0, got);
	EXPECT_TRUE(contains(err, "starpu_mpi_cached_receive_set: data")) << err;
	EXPECT_TRUE(contains(err, "is not registered with starpu_mpi_data_register()")) << err;
	starpu_data_unregister(plain);
}

std::atomic<int> g_copied{0};

void count_copy(void *)
{
	g_copied++;
}

TEST_F(MpiExtApi, DataCpyMovesTheValueToTheDestinationsOwner)
{
	g_copied = 0;
	int last = size_ - 1;
	int64_t src = 41, dst = 0, same = 0;
	starpu_data_handle_t hsrc = owned_variable(&src, 0, 910), hdst = owned_variable(&dst, last, 911), hsame = owned_variable(&same, 0, 912);
	ASSERT_EQ(0, starpu_mpi_data_cpy(hdst, hsrc, MPI_COMM_WORLD, 1, count_copy, nullptr));
	ASSERT_EQ(0, starpu_mpi_data_cpy_priority(hsame, hsrc, MPI_COMM_WORLD, 0, count_copy, nullptr, 1)) << "one owner: a plain copy";
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == last)
		EXPECT_EQ(41, read_var(hdst));
	if (rank_ == 0)
		EXPECT_EQ(41, read_var(hsame));
	EXPECT_EQ(g_copied.load(), (rank_ == last) + (rank_ == 0)) << "the callbacks run on the destinations' owners";
	// Synchronous, back the other way.
	if (rank_ == last)
		*(int64_t *)starpu_variable_get_local_ptr(hdst) = 7;
	ASSERT_EQ(0, starpu_mpi_data_cpy(hsrc, hdst, MPI_COMM_WORLD, 0, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 0)
		EXPECT_EQ(7, read_var(hsrc));
	int64_t w = 0;
	starpu_data_handle_t plain;
	starpu_variable_data_register(&plain, STARPU_MAIN_RAM, (uintptr_t)&w, sizeof(w));
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_mpi_data_cpy(plain, hsrc, MPI_COMM_WORLD, 1, nullptr, nullptr); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "the destination has no owner")) << err;
	starpu_data_unregister(plain);
	starpu_data_unregister(hsrc);
	starpu_data_unregister(hdst);
	starpu_data_unregister(hsame);
}

TEST_F(MpiExtApi, CommunicationTagCarriesStarPUsOwnMessages)
{
	int *ub = nullptr, flag = 0;
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	ASSERT_TRUE(flag && ub);
	EXPECT_EQ(*ub, starpu_mpi_get_communication_tag());
	std::string err = stderr_of([] { starpu_mpi_set_communication_tag(77); });
	EXPECT_TRUE(contains(err, "StarPU-MPI is running")) << err;
	EXPECT_EQ(*ub, starpu_mpi_get_communication_tag());
	ASSERT_EQ(0, starpu_mpi_shutdown());
	started_ = false;
	err = stderr_of([] { starpu_mpi_set_communication_tag(-3); });
	EXPECT_TRUE(contains(err, "-3 is negative")) << err;
	starpu_mpi_set_communication_tag(77);
	ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf_));
	started_ = true;
	EXPECT_EQ(77, starpu_mpi_get_communication_tag());
	// A data tag equal to it, one beyond MPI's (enveloped on it) and a plain one, from each rank to the next.
	const starpu_mpi_tag_t tags[] = { 77, (starpu_mpi_tag_t)1 << 40, 5 };
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	int64_t out[3], in[3] = { -1, -1, -1 };
	starpu_data_handle_t hout[3], hin[3];
	for (int i = 0; i < 3; i++) {
		out[i] = rank_ * 10 + i;
		starpu_variable_data_register(&hout[i], STARPU_MAIN_RAM, (uintptr_t)&out[i], sizeof(int64_t));
		starpu_variable_data_register(&hin[i], STARPU_MAIN_RAM, (uintptr_t)&in[i], sizeof(int64_t));
		ASSERT_EQ(0, starpu_mpi_irecv_detached(hin[i], prev, tags[i], MPI_COMM_WORLD, nullptr, nullptr));
		ASSERT_EQ(0, starpu_mpi_isend_detached(hout[i], next, tags[i], MPI_COMM_WORLD, nullptr, nullptr));
	}
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	for (int i = 0; i < 3; i++) {
		starpu_data_unregister(hout[i]);
		starpu_data_unregister(hin[i]);
		EXPECT_EQ(prev * 10 + i, in[i]) << "tag " << tags[i];
	}
	// Back to MPI_TAG_UB for the tests after this one.
	ASSERT_EQ(0, starpu_mpi_shutdown());
	started_ = false;
	starpu_mpi_set_communication_tag(*ub);
	ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf_));
	started_ = true;
	EXPECT_EQ(*ub, starpu_mpi_get_communication_tag());
}


std::atomic<int> g_hooked{0};

void count_hooked(struct starpu_task *task)
{
	if (task->cl && task->cl->name && strcmp(task->cl->name, "hooked") == 0)
		g_hooked++;
}

void other_hook(struct starpu_task *) {}

void add_two(void **buffers, void *)
{
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]) += 2;
}

TEST_F(MpiExtApi, PreSubmitHookSeesTheTasksThisRankSubmits)
{
	g_hooked = 0;
	int64_t v = 1;
	starpu_data_handle_t h = owned_variable(&v, 0, 920);
	static starpu_codelet cl = cpu_codelet(add_two, 1, "hooked");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(0, starpu_mpi_pre_submit_hook_register(count_hooked));
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &cl, STARPU_RW, h, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	EXPECT_EQ(g_hooked.load(), rank_ == 0 ? 1 : 0) << "the owner of the written data runs the task";
	ASSERT_EQ(0, starpu_mpi_pre_submit_hook_unregister());
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &cl, STARPU_RW, h, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	EXPECT_EQ(g_hooked.load(), rank_ == 0 ? 1 : 0) << "no hook any more";
	if (rank_ == 0)
		EXPECT_EQ(5, read_var(h));
	int ret = 0;
	std::string err = stderr_of([&] {
		ret = starpu_mpi_pre_submit_hook_register(nullptr);
		starpu_mpi_pre_submit_hook_register(count_hooked);
		starpu_mpi_pre_submit_hook_register(other_hook);
	});
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "NULL function")) << err;
	EXPECT_TRUE(contains(err, "a hook was registered already: it is replaced")) << err;
	starpu_mpi_pre_submit_hook_unregister();
	starpu_data_unregister(h);
}


#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_F(MpiExtApi, DeprecatedInitialiseCallsStillStartStarPUMPI)
{
	ASSERT_EQ(0, starpu_mpi_shutdown());
	started_ = false;
	ASSERT_EQ(0, init_with_ncpus(1));
	ASSERT_EQ(0, starpu_mpi_initialize()) << "MPI was started by the program";
	EXPECT_EQ(rank_, starpu_mpi_world_rank());
	ASSERT_EQ(0, starpu_mpi_shutdown());
	int rank = -1, size = -1;
	ASSERT_EQ(0, starpu_mpi_initialize_extended(&rank, &size));
	EXPECT_EQ(rank_, rank);
	EXPECT_EQ(size_, size);
	ASSERT_EQ(0, starpu_mpi_shutdown());
	starpu_shutdown();
	ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf_));
	started_ = true;
}
#pragma GCC diagnostic pop

} // namespace
