// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU-MPI beyond point-to-point, run under mpirun -np 2 and 4
// (tests/mpi_run.h): reductions across ranks (mpi/redux.c: STARPU_MPI_REDUX
// and STARPU_REDUX contributions of starpu_mpi_task_insert(), folded into
// the owner by starpu_mpi_redux_data(), flat or along a tree, or by the next
// access in another mode), node-selection policies (select.c), scatter and
// gather (collective.c).
#include "helpers.h"

#ifdef STARPU_USE_MPI
#include <starpu_mpi.h>
#include <astrolabe/counters.h>
#include <astrolabe/observe.h>
#include "mpi_run.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

using namespace astro_test;

namespace {

void zero_cpu(void *buffers[], void *)
{
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 0;
}

void add_cpu(void *buffers[], void *)
{
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]) += *(const int64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]);
}

void contribute_cpu(void *buffers[], void *cl_arg)
{
	int64_t v;
	starpu_codelet_unpack_args(cl_arg, &v, 0);
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]) += v;
}

void copy_cpu(void *buffers[], void *)
{
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]) = *(const int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]);
}

starpu_codelet make_cl(starpu_cpu_func_t f, int n, const char *name, int m0, int m1)
{
	starpu_codelet cl = cpu_codelet(f, n, name);
	cl.modes[0] = (starpu_data_access_mode)m0;
	cl.modes[1] = (starpu_data_access_mode)m1;
	return cl;
}

// The codelets outlive every test (the runtime may use them after a body returns).
starpu_codelet init_cl = make_cl(zero_cpu, 1, "redux_zero", STARPU_W, STARPU_NONE);
starpu_codelet redux_cl = make_cl(add_cpu, 2, "redux_add", STARPU_RW | STARPU_COMMUTE, STARPU_R);
starpu_codelet contribute_mpi_cl = make_cl(contribute_cpu, 1, "contribute_mpi", STARPU_RW | STARPU_COMMUTE, STARPU_NONE);
starpu_codelet contribute_cl = make_cl(contribute_cpu, 1, "contribute", STARPU_REDUX, STARPU_NONE);
starpu_codelet copy_cl = make_cl(copy_cpu, 2, "copy", STARPU_R, STARPU_W);

class MpiRedux : public MpiRankTest
{
protected:
	MpiRedux() : MpiRankTest(2) {}
	// The sum, owned by owner (starting at 1000 there), with the reduction methods.
	starpu_data_handle_t sum_variable(int64_t *mem, int owner, starpu_mpi_tag_t tag)
	{
		*mem = 1000;
		starpu_data_handle_t h = owned_variable(mem, owner, tag);
		starpu_data_set_reduction_methods(h, &redux_cl, &init_cl);
		return h;
	}
	// Every rank r adds (r + 1) * 10 + k for k < per_rank, running on r, in mode.
	int64_t contribute(starpu_data_handle_t h, enum starpu_data_access_mode mode, int per_rank)
	{
		int64_t expected = 0;
		for (int r = 0; r < size_; r++)
			for (int k = 0; k < per_rank; k++) {
				int64_t v = (r + 1) * 10 + k;
				expected += v;
				EXPECT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, mode == STARPU_REDUX ? &contribute_cl : &contribute_mpi_cl,
								    mode, h, STARPU_VALUE, &v, sizeof(v), STARPU_EXECUTE_ON_NODE, r, 0));
			}
		return expected;
	}
	int64_t owner_value(starpu_data_handle_t h)
	{
		EXPECT_EQ(0, starpu_data_acquire(h, STARPU_R));
		int64_t v = *(int64_t *)starpu_data_get_local_ptr(h);
		starpu_data_release(h);
		return v;
	}
	void check_sum(enum starpu_data_access_mode mode, int arity, int owner)
	{
		int64_t mem;
		starpu_data_handle_t h = sum_variable(&mem, owner, 7);
		// Each round adds to the value the previous one reduced.
		for (int round = 0; round < 3; round++) {
			int64_t expected = 1000 + (round + 1) * contribute(h, mode, 4);
			ASSERT_EQ(0, starpu_mpi_redux_data_tree(MPI_COMM_WORLD, h, arity));
			ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
			if (rank_ == owner) {
				EXPECT_EQ(expected, owner_value(h)) << "round " << round;
			}
		}
		starpu_data_unregister(h);
	}
};

TEST_F(MpiRedux, MpiReduxContributionsReachTheOwner)
{
	check_sum(STARPU_MPI_REDUX, 0, 0);
}

TEST_F(MpiRedux, ReduxContributionsReachTheOwner)
{
	check_sum(STARPU_REDUX, 0, 0);
}

TEST_F(MpiRedux, TreeOfArityTwoToTheLastRank)
{
	check_sum(STARPU_MPI_REDUX, 2, size_ - 1);
}

TEST_F(MpiRedux, RankOrderedTreeWithReduxMode)
{
	check_sum(STARPU_REDUX, 3, 1);
}

// No starpu_mpi_redux_data(): a task reading the data elsewhere completes the reduction first.
TEST_F(MpiRedux, AReadCompletesThePendingReduction)
{
	int64_t mem, out = -1;
	starpu_data_handle_t h = sum_variable(&mem, 0, 11);
	const int reader = size_ - 1;
	starpu_data_handle_t hout;
	if (rank_ == reader)
		starpu_variable_data_register(&hout, STARPU_MAIN_RAM, (uintptr_t)&out, sizeof(out));
	else
		starpu_variable_data_register(&hout, -1, 0, sizeof(out));
	starpu_mpi_data_register(hout, 12, reader);
	int64_t expected = 1000 + contribute(h, STARPU_MPI_REDUX, 3);
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &copy_cl, STARPU_R, h, STARPU_W, hout, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	starpu_data_unregister(hout);
	starpu_data_unregister(h);
	if (rank_ == reader) {
		EXPECT_EQ(expected, out);
	}
	if (rank_ == 0) {
		EXPECT_EQ(expected, mem);
	}
}

// Without reduction methods, a contribution from another rank is refused on every rank, clearly.
TEST_F(MpiRedux, NoReductionMethodsIsSaid)
{
	int64_t mem = 5;
	starpu_data_handle_t h;
	if (rank_ == 0)
		starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&mem, sizeof(mem));
	else
		starpu_variable_data_register(&h, -1, 0, sizeof(mem));
	starpu_mpi_data_register(h, 21, 0);
	int64_t v = 1;
	int ret = 0;
	std::string err = stderr_of([&] {
		ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &contribute_mpi_cl, STARPU_MPI_REDUX, h, STARPU_VALUE, &v, sizeof(v),
					     STARPU_EXECUTE_ON_NODE, 1, 0);
	});
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "has no reduction methods")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_set_reduction_methods")) << err;
	// Nothing was recorded: there is nothing to reduce.
	EXPECT_EQ(0, starpu_mpi_redux_data(MPI_COMM_WORLD, h));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	starpu_data_unregister(h);
	if (rank_ == 0) {
		EXPECT_EQ(5, mem);
	}
}

TEST_F(MpiRedux, DataWithoutOwnerIsRefused)
{
	starpu_data_handle_t h;
	int64_t mem = 0;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&mem, sizeof(mem));
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_mpi_redux_data(MPI_COMM_WORLD, h); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "has no owner")) << err;
	starpu_data_unregister(h);
}

// ------------------------------------------------------ node selection

class MpiExt : public MpiRedux
{
};

// A policy that picks the last rank, whatever the data.
int last_rank_policy(int, int nb_nodes, starpu_data_descr *, int)
{
	return nb_nodes - 1;
}

int bad_policy(int, int nb_nodes, starpu_data_descr *, int)
{
	return nb_nodes + 5;
}

void where_cpu(void *buffers[], void *)
{
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]) = starpu_mpi_world_rank();
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]) = starpu_mpi_world_rank();
}

void where_second_cpu(void *buffers[], void *)
{
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]) = starpu_mpi_world_rank();
}

// A task writing data of two owners runs where the policy says: the current one, or the task's own.
TEST_F(MpiExt, NodeSelectionPolicies)
{
	static starpu_codelet where = make_cl(where_cpu, 2, "where", STARPU_W, STARPU_W);
	EXPECT_EQ(STARPU_MPI_NODE_SELECTION_MOST_R_DATA, starpu_mpi_node_selection_get_current_policy());
	int last = starpu_mpi_node_selection_register_policy(last_rank_policy);
	ASSERT_GT(last, 0);
	int bad = starpu_mpi_node_selection_register_policy(bad_policy);
	ASSERT_GT(bad, last);
	int64_t a = -1, b = -1;
	starpu_data_handle_t ha, hb;
	starpu_variable_data_register(&ha, rank_ == 0 ? STARPU_MAIN_RAM : -1, rank_ == 0 ? (uintptr_t)&a : 0, sizeof(a));
	starpu_variable_data_register(&hb, rank_ == 1 ? STARPU_MAIN_RAM : -1, rank_ == 1 ? (uintptr_t)&b : 0, sizeof(b));
	starpu_mpi_data_register(ha, 31, 0);
	starpu_mpi_data_register(hb, 32, 1);
	// The built-in policy: no data read, rank 0.
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &where, STARPU_W, ha, STARPU_W, hb, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ <= 1) {
		EXPECT_EQ(0, rank_ == 0 ? a : b);
	}
	// The built-in policy counts what is written too, as StarPU's (policy_selection.c):
	// reading hb (rank 1) weighs less than writing ha and hc (rank 0).
	static starpu_codelet pick = make_cl(where_second_cpu, 3, "pick", STARPU_R, STARPU_W);
	pick.modes[2] = STARPU_W;
	int64_t c = -1;
	starpu_data_handle_t hc;
	starpu_variable_data_register(&hc, rank_ == 0 ? STARPU_MAIN_RAM : -1, rank_ == 0 ? (uintptr_t)&c : 0, sizeof(c));
	starpu_mpi_data_register(hc, 33, 0);
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &pick, STARPU_R, hb, STARPU_W, ha, STARPU_W, hc, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 0) {
		EXPECT_EQ(0, a);
	}
	starpu_data_unregister(hc);
	// This task's policy.
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &where, STARPU_W, ha, STARPU_W, hb, STARPU_NODE_SELECTION_POLICY, last, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ <= 1) {
		EXPECT_EQ(size_ - 1, rank_ == 0 ? a : b);
	}
	// The current policy.
	ASSERT_EQ(0, starpu_mpi_node_selection_set_current_policy(last));
	EXPECT_EQ(last, starpu_mpi_node_selection_get_current_policy());
	ASSERT_EQ(0, starpu_mpi_node_selection_set_current_policy(STARPU_MPI_NODE_SELECTION_MOST_R_DATA));
	// A policy choosing no rank, an unknown one: said, nothing submitted.
	int ret = 0;
	std::string err = stderr_of([&] {
		ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &where, STARPU_W, ha, STARPU_W, hb, STARPU_NODE_SELECTION_POLICY, bad, 0);
	});
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "chose rank " + std::to_string(size_ + 5))) << err;
	err = stderr_of([&] { ret = starpu_mpi_node_selection_set_current_policy(23); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "23 is not a registered policy")) << err;
	EXPECT_EQ(0, starpu_mpi_node_selection_unregister_policy(bad));
	EXPECT_EQ(0, starpu_mpi_node_selection_unregister_policy(last));
	err = stderr_of([&] { ret = starpu_mpi_node_selection_unregister_policy(last); });
	EXPECT_EQ(-EINVAL, ret);
	starpu_data_unregister(ha);
	starpu_data_unregister(hb);
}

// ------------------------------------------------------- scatter / gather

// The root scatters blocks to their owners, each owner adds its rank, and the root gathers them back.
TEST_F(MpiExt, ScatterThenGather)
{
	static std::atomic<int> scattered, gathered;
	scattered = gathered = 0;
	const int root = size_ - 1, nb = 3 * size_;
	std::vector<int64_t> mem(nb);
	std::vector<starpu_data_handle_t> h(nb);
	for (int i = 0; i < nb; i++) {
		mem[i] = rank_ == root ? 100 * i : -1;
		starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&mem[i], sizeof(int64_t));
		starpu_mpi_data_register(h[i], 200 + i, i % size_);
	}
	auto bump = [](void *arg) { static_cast<std::atomic<int> *>(arg)->fetch_add(1); };
	ASSERT_EQ(0, starpu_mpi_scatter_detached(h.data(), nb, root, MPI_COMM_WORLD, bump, &scattered, bump, &scattered));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	EXPECT_EQ(1, scattered.load()) << "one callback per rank, once all its requests are done";
	for (int i = 0; i < nb; i++) {
		if (i % size_ != rank_)
			continue;
		ASSERT_EQ(0, starpu_data_acquire(h[i], STARPU_RW));
		EXPECT_EQ(100 * i, mem[i]) << "block " << i;
		mem[i] += rank_;
		starpu_data_release(h[i]);
	}
	ASSERT_EQ(0, starpu_mpi_gather_detached(h.data(), nb, root, MPI_COMM_WORLD, bump, &gathered, bump, &gathered));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	EXPECT_EQ(1, gathered.load());
	for (int i = 0; i < nb; i++)
		starpu_data_unregister(h[i]);
	if (rank_ == root) {
		for (int i = 0; i < nb; i++)
			EXPECT_EQ(100 * i + i % size_, mem[i]) << "block " << i;
	}
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_mpi_scatter_detached(nullptr, 2, 0, MPI_COMM_WORLD, nullptr, nullptr, nullptr, nullptr); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "NULL array")) << err;
	err = stderr_of([&] { ret = starpu_mpi_gather_detached(h.data(), 0, size_, MPI_COMM_WORLD, nullptr, nullptr, nullptr, nullptr); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "is not a rank")) << err;
}

// --------------------------------------------------------- user datatypes

std::atomic<int> g_types_made, g_types_freed;

// A matrix of int32 with its leading dimension: ny rows of nx, ld apart.
int matrix_type(starpu_data_handle_t h, MPI_Datatype *type)
{
	g_types_made++;
	MPI_Type_vector((int)starpu_matrix_get_ny(h), (int)starpu_matrix_get_nx(h), (int)starpu_matrix_get_local_ld(h), MPI_INT32_T, type);
	MPI_Type_commit(type);
	return 0;
}

void free_type(MPI_Datatype *type)
{
	g_types_freed++;
	MPI_Type_free(type);
}

int failing_type(starpu_data_handle_t, MPI_Datatype *)
{
	return -1;
}

// Rank 0 sends a strided matrix to rank 1 (other strides there): the datatype carries it, the gaps stay.
void send_matrix(int rank, int ld0, int ld1, bool expect_datatype)
{
	const int nx = 3, ny = 4, ld = rank == 0 ? ld0 : ld1;
	std::vector<int32_t> mem(ld * ny, -7);
	for (int j = 0; j < ny; j++)
		for (int i = 0; i < nx; i++)
			if (rank == 0)
				mem[j * ld + i] = 10 * j + i;
	starpu_data_handle_t h;
	starpu_matrix_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)mem.data(), ld, nx, ny, sizeof(int32_t));
	g_types_made = g_types_freed = 0;
	if (rank == 0) {
		ASSERT_EQ(0, starpu_mpi_send(h, 1, 41, MPI_COMM_WORLD));
	} else if (rank == 1) {
		ASSERT_EQ(0, starpu_mpi_recv(h, 0, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
	starpu_data_unregister(h);
	if (rank <= 1) {
		EXPECT_EQ(expect_datatype ? 1 : 0, g_types_freed.load());
	}
	if (rank != 1)
		return;
	for (int j = 0; j < ny; j++)
		for (int i = 0; i < ld; i++)
			EXPECT_EQ(i < nx ? 10 * j + i : -7, mem[j * ld + i]) << "row " << j << " column " << i;
}

TEST_F(MpiExt, UserDatatypeCarriesStridedData)
{
	starpu_data_handle_t probe;
	int32_t x[4];
	starpu_matrix_data_register(&probe, STARPU_MAIN_RAM, (uintptr_t)x, 2, 2, 2, sizeof(int32_t));
	ASSERT_EQ(0, starpu_mpi_datatype_register(probe, matrix_type, free_type));
	send_matrix(rank_, 5, 8, true);
	ASSERT_EQ(0, starpu_mpi_barrier(MPI_COMM_WORLD));
	// A datatype function that fails: said, and the data is packed instead.
	ASSERT_EQ(0, starpu_mpi_interface_datatype_register(STARPU_MATRIX_INTERFACE_ID, failing_type, free_type));
	std::string err = stderr_of([&] { send_matrix(rank_, 6, 3, false); });
	if (rank_ <= 1) {
		EXPECT_TRUE(contains(err, "the data is packed instead")) << err;
	}
	ASSERT_EQ(0, starpu_mpi_barrier(MPI_COMM_WORLD));
	EXPECT_EQ(0, starpu_mpi_datatype_unregister(probe));
	// Unregistered: packed, no datatype made.
	send_matrix(rank_, 4, 3, false);
	EXPECT_EQ(0, g_types_made.load());
	int ret = 0;
	err = stderr_of([&] { ret = starpu_mpi_datatype_unregister(probe); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "has no datatype registered")) << err;
	err = stderr_of([&] { ret = starpu_mpi_datatype_register(probe, nullptr, free_type); });
	EXPECT_EQ(-EINVAL, ret);
	starpu_data_unregister(probe);
}

// ------------------------------------------------- tags beyond MPI's

// Tags from MPI_TAG_UB up to INT64_MAX travel in envelopes: receives posted
// before and after their messages, in any order, the same tag twice in order.
TEST_F(MpiExt, TagsBeyondMpisTagUpperBound)
{
	int *ub = nullptr, flag = 0;
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	ASSERT_TRUE(flag && ub);
	int64_t *attr = nullptr;
	ASSERT_EQ(0, starpu_mpi_comm_get_attr(MPI_COMM_WORLD, STARPU_MPI_TAG_UB, &attr, &flag));
	ASSERT_TRUE(flag && attr);
	EXPECT_EQ(INT64_MAX, *attr);
	const std::vector<starpu_mpi_tag_t> tags = { (starpu_mpi_tag_t)*ub, (starpu_mpi_tag_t)*ub + 1, (starpu_mpi_tag_t)1 << 40, INT64_MAX,
						     INT64_MAX, (starpu_mpi_tag_t)*ub - 1 };
	const int n = (int)tags.size();
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	std::vector<int64_t> out(n), in(n, -1);
	std::vector<starpu_data_handle_t> hout(n), hin(n);
	for (int i = 0; i < n; i++) {
		out[i] = rank_ * 100 + i;
		starpu_variable_data_register(&hout[i], STARPU_MAIN_RAM, (uintptr_t)&out[i], sizeof(int64_t));
		starpu_variable_data_register(&hin[i], STARPU_MAIN_RAM, (uintptr_t)&in[i], sizeof(int64_t));
	}
	// The first receive waits for its message; the others come after theirs, in reverse order but for the repeated tag.
	ASSERT_EQ(0, starpu_mpi_irecv_detached(hin[0], prev, tags[0], MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_barrier(MPI_COMM_WORLD));
	for (int i = 0; i < n; i++)
		ASSERT_EQ(0, starpu_mpi_isend_detached(hout[i], next, tags[i], MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_barrier(MPI_COMM_WORLD));
	ASSERT_EQ(0, starpu_mpi_irecv_detached(hin[3], prev, tags[3], MPI_COMM_WORLD, nullptr, nullptr));
	for (int i = n - 1; i >= 1; i--) {
		if (i != 3) {
			ASSERT_EQ(0, starpu_mpi_irecv_detached(hin[i], prev, tags[i], MPI_COMM_WORLD, nullptr, nullptr));
		}
	}
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	for (int i = 0; i < n; i++) {
		starpu_data_unregister(hout[i]);
		starpu_data_unregister(hin[i]);
		EXPECT_EQ(prev * 100 + i, in[i]) << "tag " << tags[i];
	}
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_mpi_isend_detached(hout[0], next, -3, MPI_COMM_WORLD, nullptr, nullptr); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "tag -3 is negative")) << err;
}

// Data registered with huge tags move with starpu_mpi_task_insert like the others.
TEST_F(MpiExt, TaskInsertWithHugeTags)
{
	int64_t a = 0, b = 0;
	starpu_data_handle_t ha, hb;
	starpu_variable_data_register(&ha, rank_ == 0 ? STARPU_MAIN_RAM : -1, rank_ == 0 ? (uintptr_t)&a : 0, sizeof(a));
	starpu_variable_data_register(&hb, rank_ == 1 ? STARPU_MAIN_RAM : -1, rank_ == 1 ? (uintptr_t)&b : 0, sizeof(b));
	starpu_mpi_data_register(ha, INT64_MAX - 1, 0);
	starpu_mpi_data_register(hb, (starpu_mpi_tag_t)3 << 50, 1);
	EXPECT_EQ(INT64_MAX - 1, starpu_mpi_data_get_tag(ha));
	if (rank_ == 0)
		a = 4242;
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &copy_cl, STARPU_R, ha, STARPU_W, hb, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	starpu_data_unregister(ha);
	starpu_data_unregister(hb);
	if (rank_ == 1) {
		EXPECT_EQ(4242, b);
	}
}

// ------------------------------------------------------------ observation

struct SeenMessage
{
	astro_moment moment;
	unsigned src, dst;
	size_t bytes;
	unsigned long tag;
	const void *handle;
};

std::mutex g_seen_lock;
std::vector<SeenMessage> g_seen;

void see_message(const astro_event *e, void *)
{
	std::lock_guard<std::mutex> hold(g_seen_lock);
	g_seen.push_back({ e->moment, e->src_node, e->dst_node, e->bytes, e->other_id, e->object });
}

// Each message is a moment of the observation path: its ranks, bytes, tag and handle.
TEST_F(MpiExt, MessagesAreObserved)
{
	{
		std::lock_guard<std::mutex> hold(g_seen_lock);
		g_seen.clear();
	}
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_MPI_SEND) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_MPI_RECV), see_message, nullptr);
	ASSERT_GE(id, 0);
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	int64_t out[4] = { 1, 2, 3, 4 }, in[4] = { 0, 0, 0, 0 };
	starpu_data_handle_t hout, hin;
	starpu_vector_data_register(&hout, STARPU_MAIN_RAM, (uintptr_t)out, 4, sizeof(int64_t));
	starpu_vector_data_register(&hin, STARPU_MAIN_RAM, (uintptr_t)in, 4, sizeof(int64_t));
	const starpu_mpi_tag_t tag = ((starpu_mpi_tag_t)1 << 33) + 5; /* in an envelope: observed the same */
	ASSERT_EQ(0, starpu_mpi_irecv_detached(hin, prev, tag, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_isend_detached(hout, next, tag, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	EXPECT_EQ(0, astro_observe_unsubscribe(id));
	std::vector<SeenMessage> seen;
	{
		std::lock_guard<std::mutex> hold(g_seen_lock);
		seen = g_seen;
	}
	ASSERT_EQ(2u, seen.size());
	for (const SeenMessage &m : seen) {
		bool send = m.moment == ASTRO_MOMENT_MPI_SEND;
		EXPECT_EQ(send ? (unsigned)rank_ : (unsigned)prev, m.src);
		EXPECT_EQ(send ? (unsigned)next : (unsigned)rank_, m.dst);
		EXPECT_EQ(4 * sizeof(int64_t), m.bytes);
		EXPECT_EQ((unsigned long)tag, m.tag);
		EXPECT_EQ(send ? (const void *)hout : (const void *)hin, m.handle);
	}
	EXPECT_NE(seen[0].moment, seen[1].moment);
	starpu_data_unregister(hout);
	starpu_data_unregister(hin);
}

// StarPU-MPI's message counters (counters/mpi_counters.c): each message of
// each kind (isend/irecv, detached, blocking send and receive) is counted
// once with its bytes while collection is on, and only then; a tool
// subscribed to the moments sees the same messages.
int64_t read_counter(int id)
{
	astro_counter_value v{};
	EXPECT_EQ(0, astro_counter_read(id, nullptr, &v));
	return v.int64_val;
}

int g_sends_seen, g_recvs_seen;

void count_message(const astro_event *e, void *)
{
	__atomic_add_fetch(e->moment == ASTRO_MOMENT_MPI_SEND ? &g_sends_seen : &g_recvs_seen, 1, __ATOMIC_RELAXED);
}

TEST_F(MpiExt, MessagesAreCounted)
{
	const char *names[4] = { "starpu.mpi.g_total_messages_sent", "starpu.mpi.g_total_bytes_sent", "starpu.mpi.g_total_messages_received",
				 "starpu.mpi.g_total_bytes_received" };
	int ids[4];
	for (int i = 0; i < 4; i++) {
		ids[i] = starpu_perf_counter_name_to_id(starpu_perf_counter_scope_global, names[i]);
		ASSERT_GE(ids[i], 0) << names[i];
	}
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	static int64_t out[4] = { 1, 2, 3, 4 }, in[4];
	starpu_data_handle_t hout[4], hin[4];
	for (int n = 1; n <= 4; n++) {
		starpu_vector_data_register(&hout[n - 1], STARPU_MAIN_RAM, (uintptr_t)out, n, sizeof(int64_t));
		starpu_vector_data_register(&hin[n - 1], STARPU_MAIN_RAM, (uintptr_t)in, n, sizeof(int64_t));
	}
	// Before collection: not counted.
	ASSERT_EQ(0, starpu_mpi_irecv_detached(hin[0], prev, 90, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_isend_detached(hout[0], next, 90, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(0, read_counter(ids[i])) << names[i];

	__atomic_store_n(&g_sends_seen, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g_recvs_seen, 0, __ATOMIC_RELAXED);
	int tool = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_MPI_SEND) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_MPI_RECV), count_message, nullptr);
	ASSERT_GE(tool, 0);
	starpu_perf_counter_collection_start();
	starpu_mpi_req rreq, sreq;
	// 32 bytes: isend / irecv / wait.
	ASSERT_EQ(0, starpu_mpi_irecv(hin[3], &rreq, prev, 91, MPI_COMM_WORLD));
	ASSERT_EQ(0, starpu_mpi_isend(hout[3], &sreq, next, 91, MPI_COMM_WORLD));
	EXPECT_EQ(0, starpu_mpi_wait(&sreq, MPI_STATUS_IGNORE));
	EXPECT_EQ(0, starpu_mpi_wait(&rreq, MPI_STATUS_IGNORE));
	// 8 bytes: detached.
	ASSERT_EQ(0, starpu_mpi_irecv_detached(hin[0], prev, 92, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_isend_detached(hout[0], next, 92, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	// 16 bytes: a blocking send (its receive posted first).
	ASSERT_EQ(0, starpu_mpi_irecv(hin[1], &rreq, prev, 93, MPI_COMM_WORLD));
	EXPECT_EQ(0, starpu_mpi_send(hout[1], next, 93, MPI_COMM_WORLD));
	EXPECT_EQ(0, starpu_mpi_wait(&rreq, MPI_STATUS_IGNORE));
	// 24 bytes: a blocking receive.
	ASSERT_EQ(0, starpu_mpi_isend(hout[2], &sreq, next, 94, MPI_COMM_WORLD));
	EXPECT_EQ(0, starpu_mpi_recv(hin[2], prev, 94, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	EXPECT_EQ(0, starpu_mpi_wait(&sreq, MPI_STATUS_IGNORE));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	const int64_t expected[4] = { 4, 80, 4, 80 };
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(expected[i], read_counter(ids[i])) << names[i] << " on rank " << rank_;
	EXPECT_EQ(4, __atomic_load_n(&g_sends_seen, __ATOMIC_RELAXED)) << "sends the tool saw";
	EXPECT_EQ(4, __atomic_load_n(&g_recvs_seen, __ATOMIC_RELAXED)) << "receives the tool saw";

	// Stopped: no longer counted (the tool still sees them).
	starpu_perf_counter_collection_stop();
	ASSERT_EQ(0, starpu_mpi_irecv_detached(hin[0], prev, 95, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_isend_detached(hout[0], next, 95, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(expected[i], read_counter(ids[i])) << names[i] << " after collection stopped";
	EXPECT_EQ(5, __atomic_load_n(&g_sends_seen, __ATOMIC_RELAXED));
	EXPECT_EQ(5, __atomic_load_n(&g_recvs_seen, __ATOMIC_RELAXED));
	EXPECT_EQ(0, astro_observe_unsubscribe(tool));
	for (int n = 0; n < 4; n++) {
		starpu_data_unregister(hout[n]);
		starpu_data_unregister(hin[n]);
	}
}

// Run traced by the launcher (MpiRun.TracesOfTheRanksMerge): a few messages around the ring.
TEST_F(MpiExt, TracedRing)
{
	if (!getenv("STARPU_FXT_TRACE"))
		GTEST_SKIP() << "run by MpiRun.TracesOfTheRanksMerge, with STARPU_FXT_TRACE=1";
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	int64_t out = rank_, in = -1;
	starpu_data_handle_t hout, hin;
	starpu_variable_data_register(&hout, STARPU_MAIN_RAM, (uintptr_t)&out, sizeof(out));
	starpu_variable_data_register(&hin, STARPU_MAIN_RAM, (uintptr_t)&in, sizeof(in));
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(0, starpu_mpi_irecv_detached(hin, prev, 70 + round, MPI_COMM_WORLD, nullptr, nullptr));
		ASSERT_EQ(0, starpu_mpi_isend_detached(hout, next, 70 + round, MPI_COMM_WORLD, nullptr, nullptr));
		ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	}
	starpu_data_unregister(hout);
	starpu_data_unregister(hin);
	EXPECT_EQ(prev, in);
}

// The alignment of the ranks' clocks for their traces (seed 004, section 4.12): StarPU-MPI's start is
// observed with its offset and the method that measured it, the synchronized exchange by default, one
// plain barrier with STARPU_MPI_TRACE_SYNC_CLOCKS=0. Run by MpiRun.ClockAlignmentFollowsSyncClocks.
struct SeenInit
{
	int count;
	unsigned synchronized, rank, size;
	int64_t offset;
} g_init;

void see_init(const astro_event *e, void *)
{
	g_init.count++;
	g_init.synchronized = e->src_node;
	g_init.rank = e->nimpl;
	g_init.size = (unsigned)e->bytes;
	g_init.offset = (int64_t)e->other_id;
}

TEST(MpiClock, AlignmentMethod)
{
	const char *want = getenv("ASTRO_TEST_EXPECT_SYNC");
	if (!want)
		GTEST_SKIP() << "run by MpiRun.ClockAlignmentFollowsSyncClocks";
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(0, starpu_init(&conf));
	g_init = SeenInit{};
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_MPI_INIT), see_init, nullptr);
	ASSERT_GE(id, 0);
	ASSERT_EQ(0, starpu_mpi_init(nullptr, nullptr, 0));
	int rank = -1, size = 0;
	starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank);
	starpu_mpi_comm_size(MPI_COMM_WORLD, &size);
	EXPECT_EQ(1, g_init.count);
	EXPECT_EQ((unsigned)atoi(want), g_init.synchronized);
	EXPECT_EQ((unsigned)rank, g_init.rank);
	EXPECT_EQ((unsigned)size, g_init.size);
	if (rank == 0)
		EXPECT_EQ(0, g_init.offset);
	else // one machine, one monotonic clock: whatever the method, far below a minute
		EXPECT_LT(std::llabs(g_init.offset), 60LL * 1000000000LL) << g_init.offset;
	EXPECT_EQ(0, astro_observe_unsubscribe(id));
	EXPECT_EQ(0, starpu_mpi_shutdown());
	starpu_shutdown();
}

// ------------------------------------------------------ the launcher's side

const char kRankTests[] = "MpiRedux.*:MpiExt.*:MpiExtApi.*:MpiExchange.*";

TEST(MpiRun, TwoRanks)
{
	run_ranks(2, kRankTests);
}

TEST(MpiRun, FourRanks)
{
	run_ranks(4, kRankTests);
}

TEST(MpiRun, ClockAlignmentFollowsSyncClocks)
{
	{
		ScopedEnv sync("STARPU_MPI_TRACE_SYNC_CLOCKS", nullptr), want("ASTRO_TEST_EXPECT_SYNC", "1");
		run_ranks(3, "MpiClock.*");
	}
	{
		ScopedEnv sync("STARPU_MPI_TRACE_SYNC_CLOCKS", "0"), want("ASTRO_TEST_EXPECT_SYNC", "0");
		run_ranks(3, "MpiClock.*");
	}
}

// The line of output that starts with prefix ("" when none).
std::string line_of(const std::string &output, const std::string &prefix)
{
	size_t at = output.rfind("\n" + prefix);
	size_t start = at == std::string::npos ? (output.compare(0, prefix.size(), prefix) == 0 ? 0 : std::string::npos) : at + 1;
	if (start == std::string::npos)
		return "";
	return output.substr(start, output.find('\n', start) - start);
}

// StarPU-MPI's examples (examples/mpi/) give the same result on 1, 2 and 4 ranks.
TEST(MpiRun, ExamplesGiveTheSameResultOnOneTwoAndFourRanks)
{
	std::string dir = env_or("ASTRO_TEST_EXAMPLES_DIR", "") + "/mpi";
	if (!have_program("mpirun"))
		GTEST_SKIP() << "mpirun not found: install openmpi-bin";
	const struct
	{
		const char *program, *args;
	} examples[] = {
		{ "mpi_stencil", "-nblocks 8 -size 256 -iter 12" },
		{ "mpi_cholesky", "-size 192 -nblocks 6 -check" },
	};
	TempDir tmp;
	MpiSanitizerEnv sanitizers(tmp);
	int ran = 0;
	for (const auto &ex : examples) {
		std::string program = dir + "/" + ex.program;
		if (!file_exists(program))
			continue; /* mpi_cholesky needs LAPACKE: not built without it */
		ran++;
		std::string reference;
		for (int np : { 1, 2, 4 }) {
			std::string output;
			int status = run_command(mpirun_command() + " -np " + std::to_string(np) + " '" + program + "' " + ex.args + " 2>&1", &output);
			ASSERT_EQ(0, status) << ex.program << " on " << np << " ranks:\n" << output;
			std::string checksum = line_of(output, "checksum ");
			ASSERT_FALSE(checksum.empty()) << ex.program << " on " << np << " ranks:\n" << output;
			if (reference.empty())
				reference = checksum;
			EXPECT_EQ(reference, checksum) << ex.program << " on " << np << " ranks:\n" << output;
			if (std::string(ex.program) == "mpi_cholesky") {
				EXPECT_TRUE(contains(output, "result correct")) << output;
			} else {
				std::string heat = line_of(output, "heat ");
				EXPECT_TRUE(heat.find("heat ") == 0 && heat.substr(5, heat.find(' ', 5) - 5) == heat.substr(heat.find("initially ") + 10, heat.find(')') - heat.find("initially ") - 10))
					<< "the heat is conserved: " << heat;
			}
		}
	}
	if (!ran)
		GTEST_SKIP() << "the MPI examples are not built in " << dir;
}

std::string trim(const std::string &s)
{
	size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
	return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Each rank records its trace (named by its rank); starpu_fxt_tool merges them
// on one time base, and comms.rec pairs every send with its receive.
TEST(MpiRun, TracesOfTheRanksMerge)
{
	std::string fxt_tool = env_or("ASTRO_TEST_TRACE_TOOL", "");
	if (fxt_tool.empty() || !file_exists(fxt_tool))
		GTEST_SKIP() << "starpu_fxt_tool is not built (OTF2 missing: install libotf2-trace-dev)";
	const int np = 3;
	TempDir traces;
	{
		ScopedEnv trace("STARPU_FXT_TRACE", "1");
		ScopedEnv prefix("STARPU_FXT_PREFIX", traces.path());
		ScopedEnv suffix("STARPU_FXT_SUFFIX", "rank");
		run_ranks(np, "MpiExt.TracedRing");
	}
	std::string inputs, output;
	for (int r = 0; r < np; r++) {
		ASSERT_TRUE(!trace_anchor(traces.file("rank_" + std::to_string(r))).empty()) << "rank " << r << "'s trace";
		inputs += " '" + traces.file("rank_" + std::to_string(r)) + "'";
	}
	std::string out = traces.file("out");
	ASSERT_EQ(0, run_command("'" + fxt_tool + "' -d '" + out + "' -i" + inputs + " 2>&1", &output)) << output;
	std::string comms = read_file(out + "/comms.rec");
	// Three rounds around the ring: np * 3 messages, each once, the ranks and tags right.
	if (have_program("recsel")) {
		std::string count;
		ASSERT_EQ(0, run_command("recsel -c '" + out + "/comms.rec'", &count));
		EXPECT_EQ(std::to_string(np * 3), trim(count)) << comms;
		for (int r = 0; r < np; r++)
			for (int round = 0; round < 3; round++) {
				std::string one;
				ASSERT_EQ(0, run_command("recsel -c -e 'Src = " + std::to_string(r) + " && Dst = " + std::to_string((r + 1) % np) +
								 " && Tag = " + std::to_string(70 + round) + " && Size = 8' '" + out + "/comms.rec'",
							 &one));
				EXPECT_EQ("1", trim(one)) << "from rank " << r << " round " << round << "\n" << comms;
			}
	}
	EXPECT_TRUE(contains(comms, "Type: PointToPoint")) << comms;
	// comms.rec is a trace format: -no-format comms_rec leaves it out, and the rest as it was.
	std::string off = traces.file("no-comms"), off_output;
	ASSERT_EQ(0, run_command("'" + fxt_tool + "' -no-format comms_rec -d '" + off + "' -i" + inputs + " 2>&1", &off_output)) << off_output;
	EXPECT_FALSE(file_exists(off + "/comms.rec"));
	for (const char *f : { "paje.trace", "tasks.rec", "trace.json" })
		EXPECT_EQ(read_file(off + "/" + f), read_file(out + "/" + f)) << f << " with -no-format comms_rec";
	// One timeline: every rank's containers in the one paje.trace.
	std::string paje = read_file(out + "/paje.trace");
	for (int r = 0; r < np; r++)
		EXPECT_TRUE(contains(paje, "\t" + std::to_string(r) + "_p\t")) << "rank " << r << " in paje.trace";
	// Each message is a Paje link between the ranks' MPI containers, as in StarPU's paje.trace.
	if (!have_program("pj_dump"))
		GTEST_SKIP() << "pj_dump missing (Debian pajeng): the MPI links are not checked";
	std::string dump;
	ASSERT_EQ(0, run_command("pj_dump '" + out + "/paje.trace' 2>&1", &dump)) << dump.substr(0, 3000);
	std::istringstream lines(dump);
	std::map<std::string, int> links; // "<from> <to> <size>" -> how many
	int nlinks = 0;
	for (std::string line; std::getline(lines, line);) {
		if (line.rfind("Link, ", 0) != 0 || !contains(line, ", MPI communication, "))
			continue;
		// Link, container, type, start, end, duration, value, start container, end container, key
		std::vector<std::string> f;
		std::istringstream fields(line);
		for (std::string x; std::getline(fields, x, ',');)
			f.push_back(trim(x));
		ASSERT_EQ(f.size(), 10u) << line;
		EXPECT_GE(std::stod(f[5]), 0.0) << "received before sent: " << line;
		links[f[7] + " " + f[8] + " " + f[6]]++;
		nlinks++;
	}
	EXPECT_EQ(nlinks, np * 3) << dump.substr(0, 3000);
	for (int r = 0; r < np; r++)
		EXPECT_EQ(links[std::to_string(r) + "_mpict " + std::to_string((r + 1) % np) + "_mpict 8"], 3)
			<< "three 8-byte messages from rank " << r << " to the next\n" << dump.substr(0, 3000);
	// StarPU's bwo_mpi / bwi_mpi: each rank's bandwidth of its messages in flight, never negative, positive while a
	// message that took time is in flight (one received at the date of its send, a clock offset's error, has none).
	std::istringstream variables(dump);
	std::map<std::string, int> bandwidths; // "<rank>_mpict <type>" -> values
	double highest = 0;
	for (std::string line; std::getline(variables, line);) {
		if (line.rfind("Variable, ", 0) != 0 || !contains(line, "_mpict, Bandwidth "))
			continue;
		double value = std::stod(line.substr(line.rfind(',') + 1));
		EXPECT_GE(value, 0.0) << line;
		highest = std::max(highest, value);
		bandwidths[line.substr(10, line.find(", ", 10) - 10) + (contains(line, "Bandwidth Out") ? " out" : " in")]++;
	}
	for (int r = 0; r < np; r++) {
		EXPECT_GE(bandwidths[std::to_string(r) + "_mpict out"], 1) << dump.substr(0, 3000);
		EXPECT_GE(bandwidths[std::to_string(r) + "_mpict in"], 1) << dump.substr(0, 3000);
	}
	std::string later;
	if (have_program("recsel") && run_command("recsel -e 'RecvTime > SendTime' -P Size '" + out + "/comms.rec'", &later) == 0 &&
	    !trim(later).empty())
		EXPECT_GT(highest, 0.0) << "a message that took time has a bandwidth\n" << dump.substr(0, 3000);
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
