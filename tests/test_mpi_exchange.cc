// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU-MPI 1.4 calls of issue 40: the two halves of starpu_mpi_task_insert()
// for a task the program builds (starpu_mpi_task_exchange_data_before/after_execution),
// datatypes told the memory node, the receives with a priority, the
// communicators, shutdown and progression thread's binding, and the
// checkpoints of starpu_mpi_ft.h (declined: no fault-tolerance build). Rank tests of
// test_mpi_ext (its MpiRun tests run them under mpirun).
#include "mpi_run.h"

#include <starpu_mpi_ft.h>

using namespace astro_test;

namespace {

std::atomic<int> g_ran{0};	// tasks run on this rank

class MpiExchange : public MpiRankTest
{
protected:
	// The task the program builds on every rank: cl on h0 and h1 (modes from the codelet).
	static starpu_task *build(starpu_codelet *cl, starpu_data_handle_t h0, starpu_data_handle_t h1, int priority = 0)
	{
		starpu_task *task = starpu_task_create();
		task->cl = cl;
		task->handles[0] = h0;
		task->handles[1] = h1;
		task->priority = priority;
		return task;
	}
	// Variables a (owned by rank 0) and b (by the last rank), tags tag and tag + 1, and cl (f on them, modes mode0 and mode1).
	void two_variables(int64_t *a, int64_t *b, starpu_mpi_tag_t tag, starpu_codelet *cl, starpu_cpu_func_t f, const char *name,
			   starpu_data_access_mode mode0, starpu_data_access_mode mode1)
	{
		g_ran = 0;
		ha_ = owned_variable(a, 0, tag);
		hb_ = owned_variable(b, size_ - 1, tag + 1);
		*cl = cpu_codelet(f, 2, name);
		cl->modes[0] = mode0;
		cl->modes[1] = mode1;
	}
	starpu_data_handle_t ha_ = nullptr, hb_ = nullptr;
	// Submits task where params say, destroys it elsewhere, then the after half.
	static void run(starpu_task *task, starpu_data_descr *descrs, const starpu_mpi_task_exchange_params &params)
	{
		if (params.do_execute) {
			ASSERT_EQ(0, starpu_task_submit(task));
		} else {
			task->destroy = 0;
			starpu_task_destroy(task);
		}
		ASSERT_EQ(0, starpu_mpi_task_exchange_data_after_execution(MPI_COMM_WORLD, descrs, 2, params));
	}
};


// buffers[0] += buffers[1] (RW, R).
void accumulate(void **buffers, void *)
{
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]) += *(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]);
	g_ran++;
}

// Both + 1 (RW, RW).
void increment_both(void **buffers, void *)
{
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]) += 1;
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]) += 1;
	g_ran++;
}

TEST_F(MpiExchange, TheOwnerOfTheWrittenDataRunsTheTaskWithTheReadDataReceived)
{
	int64_t a = 10, b = 32;
	static starpu_codelet cl;
	two_variables(&a, &b, 1000, &cl, accumulate, "accumulate", STARPU_RW, STARPU_R);
	starpu_data_handle_t ha = ha_, hb = hb_;
	starpu_task *task = build(&cl, ha, hb, 3);
	starpu_data_descr descrs[2];
	starpu_mpi_task_exchange_params params;
	memset(&params, 0x5a, sizeof(params));
	ASSERT_EQ(0, starpu_mpi_task_exchange_data_before_execution(MPI_COMM_WORLD, task, descrs, &params));
	EXPECT_EQ(0, params.xrank) << "the owner of the written data";
	EXPECT_EQ(rank_ == 0 ? 1 : 0, params.do_execute);
	EXPECT_EQ(3, params.priority);
	EXPECT_EQ(ha, descrs[0].handle);
	EXPECT_EQ(STARPU_RW, descrs[0].mode);
	EXPECT_EQ(hb, descrs[1].handle);
	EXPECT_EQ(STARPU_R, descrs[1].mode);
	run(task, descrs, params);
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	EXPECT_EQ(rank_ == 0 ? 1 : 0, g_ran.load());
	if (rank_ == 0)
		EXPECT_EQ(42, read_var(ha));
	// Cached: a second task reading hb again receives nothing more, and still sees its value.
	if (rank_ == 0)
		EXPECT_EQ(1, starpu_mpi_cached_receive(hb));
	task = build(&cl, ha, hb);
	ASSERT_EQ(0, starpu_mpi_task_exchange_data_before_execution(MPI_COMM_WORLD, task, descrs, &params));
	run(task, descrs, params);
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 0)
		EXPECT_EQ(74, read_var(ha));
	starpu_data_unregister(ha);
	starpu_data_unregister(hb);
}

TEST_F(MpiExchange, WrittenDataGoBackToTheirOwnersAfterTheTask)
{
	int64_t a = 1, b = 100;
	static starpu_codelet cl;
	two_variables(&a, &b, 1010, &cl, increment_both, "increment_both", STARPU_RW, STARPU_RW);
	starpu_data_handle_t ha = ha_, hb = hb_;
	int last = size_ - 1;
	// Two owners write: the node-selection policy chooses, the same on every rank.
	starpu_task *task = build(&cl, ha, hb);
	starpu_data_descr descrs[2];
	starpu_mpi_task_exchange_params params;
	ASSERT_EQ(0, starpu_mpi_task_exchange_data_before_execution(MPI_COMM_WORLD, task, descrs, &params));
	ASSERT_GE(params.xrank, 0);
	ASSERT_LT(params.xrank, size_);
	EXPECT_EQ(rank_ == params.xrank ? 1 : 0, params.do_execute);
	run(task, descrs, params);
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	EXPECT_EQ(rank_ == params.xrank ? 1 : 0, g_ran.load());
	if (rank_ == 0)
		EXPECT_EQ(2, read_var(ha)) << "sent back to rank 0 when another rank ran the task";
	if (rank_ == last)
		EXPECT_EQ(101, read_var(hb));
	starpu_data_unregister(ha);
	starpu_data_unregister(hb);
}

TEST_F(MpiExchange, BadArgumentsAreRefused)
{
	int64_t a = 0, b = 0;
	starpu_data_handle_t ha = owned_variable(&a, 0, 1020), hb = owned_variable(&b, 0, 1021);
	static starpu_codelet cl = cpu_codelet(accumulate, 2, "accumulate");
	cl.modes[0] = STARPU_RW;
	cl.modes[1] = STARPU_R;
	starpu_data_descr descrs[2];
	starpu_mpi_task_exchange_params params;
	starpu_task *task = build(&cl, ha, hb);
	int r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0, r6 = 0;
	std::string err = stderr_of([&] {
		r1 = starpu_mpi_task_exchange_data_before_execution(MPI_COMM_WORLD, nullptr, descrs, &params);
		r2 = starpu_mpi_task_exchange_data_before_execution(MPI_COMM_WORLD, task, descrs, nullptr);
		r3 = starpu_mpi_task_exchange_data_before_execution(MPI_COMM_WORLD, task, nullptr, &params);
		r4 = starpu_mpi_task_exchange_data_after_execution(MPI_COMM_WORLD, nullptr, 2, params);
		starpu_mpi_task_exchange_params wrong;
		wrong.do_execute = 1;
		wrong.xrank = size_;
		wrong.priority = 0;
		r5 = starpu_mpi_task_exchange_data_after_execution(MPI_COMM_WORLD, descrs, 0, wrong);
		wrong.xrank = (rank_ + 1) % size_;
		r6 = starpu_mpi_task_exchange_data_after_execution(MPI_COMM_WORLD, descrs, 0, wrong);
	});
	EXPECT_EQ(-EINVAL, r1);
	EXPECT_EQ(-EINVAL, r2);
	EXPECT_EQ(-EINVAL, r3);
	EXPECT_EQ(-EINVAL, r4);
	EXPECT_EQ(-EINVAL, r5);
	EXPECT_EQ(-EINVAL, r6);
	EXPECT_TRUE(contains(err, "NULL task")) << err;
	EXPECT_TRUE(contains(err, "NULL params")) << err;
	EXPECT_TRUE(contains(err, "NULL descrs: pass an array of 2 struct starpu_data_descr")) << err;
	EXPECT_TRUE(contains(err, "NULL descrs with 2 data")) << err;
	EXPECT_TRUE(contains(err, "is not a rank of the communicator")) << err;
	EXPECT_TRUE(contains(err, "disagrees with params.xrank")) << err;
	// A data without owner: said, and the task stays the program's.
	int64_t c = 0;
	starpu_data_handle_t plain;
	starpu_variable_data_register(&plain, STARPU_MAIN_RAM, (uintptr_t)&c, sizeof(c));
	task->handles[1] = plain;
	int ret = 0;
	err = stderr_of([&] { ret = starpu_mpi_task_exchange_data_before_execution(MPI_COMM_WORLD, task, descrs, &params); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "starpu_mpi_task_exchange_data_before_execution")) << err;
	task->destroy = 0;
	starpu_task_destroy(task);
	starpu_data_unregister(plain);
	starpu_data_unregister(ha);
	starpu_data_unregister(hb);
}

// ------------------------------------------ datatypes told the memory node

std::atomic<int> g_node_types{0};
std::atomic<unsigned> g_seen_node{~0u};

// A vector of int32 in a strided type that skips nothing: the node is the one asked.
int node_vector_type(starpu_data_handle_t h, unsigned node, MPI_Datatype *type)
{
	g_node_types++;
	g_seen_node = node;
	MPI_Type_contiguous((int)starpu_vector_get_nx(h), MPI_INT32_T, type);
	MPI_Type_commit(type);
	return 0;
}

void free_node_type(MPI_Datatype *type)
{
	MPI_Type_free(type);
}

TEST_F(MpiExchange, NodeDatatypeFunctionIsToldTheNodeOfTheBuffer)
{
	int32_t v[5];
	for (int i = 0; i < 5; i++)
		v[i] = rank_ == 0 ? 7 * i : -1;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v, 5, sizeof(int32_t));
	g_node_types = 0;
	g_seen_node = ~0u;
	ASSERT_EQ(0, starpu_mpi_datatype_node_register(h, node_vector_type, free_node_type));
	if (rank_ == 0) {
		ASSERT_EQ(0, starpu_mpi_send(h, 1, 1030, MPI_COMM_WORLD));
	} else if (rank_ == 1) {
		ASSERT_EQ(0, starpu_mpi_recv_prio(h, 0, 1030, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
	starpu_data_unregister(h);
	if (rank_ <= 1) {
		EXPECT_EQ(1, g_node_types.load());
		EXPECT_EQ((unsigned)STARPU_MAIN_RAM, g_seen_node.load());
	}
	if (rank_ == 1)
		for (int i = 0; i < 5; i++)
			EXPECT_EQ(7 * i, v[i]);
	EXPECT_EQ(0, starpu_mpi_interface_datatype_unregister(STARPU_VECTOR_INTERFACE_ID)) << "one unregistration for both forms";
	int ret = 0;
	std::string err = stderr_of([&] {
		ret = starpu_mpi_interface_datatype_node_register(STARPU_VECTOR_INTERFACE_ID, nullptr, free_node_type);
	});
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "starpu_mpi_datatype_node_register: NULL allocate function")) << err;
	err = stderr_of([&] { ret = starpu_mpi_datatype_node_register(nullptr, node_vector_type, free_node_type); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "NULL data handle")) << err;
	ASSERT_EQ(0, starpu_mpi_barrier(MPI_COMM_WORLD));
}

// ------------------------------------------------- receives with a priority

std::atomic<int> g_received{0};

void count_received(void *)
{
	g_received++;
}

TEST_F(MpiExchange, DetachedReceiveWithPriorityCallsBack)
{
	g_received = 0;
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	int64_t out = 100 + rank_, in = -1;
	starpu_data_handle_t hout, hin;
	starpu_variable_data_register(&hout, STARPU_MAIN_RAM, (uintptr_t)&out, sizeof(out));
	starpu_variable_data_register(&hin, STARPU_MAIN_RAM, (uintptr_t)&in, sizeof(in));
	ASSERT_EQ(0, starpu_mpi_irecv_detached_prio(hin, prev, 1040, 2, MPI_COMM_WORLD, count_received, nullptr));
	ASSERT_EQ(0, starpu_mpi_isend_detached_prio(hout, next, 1040, 2, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	EXPECT_EQ(1, g_received.load());
	starpu_data_unregister(hout);
	starpu_data_unregister(hin);
	EXPECT_EQ(100 + prev, in);
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_mpi_irecv_detached_prio(nullptr, prev, 1041, 0, MPI_COMM_WORLD, nullptr, nullptr); });
	EXPECT_NE(0, ret);
	EXPECT_TRUE(contains(err, "starpu_mpi_irecv_detached_prio")) << err;
}

// ------------------------------- communicators, shutdown, the thread's binding

TEST_F(MpiExchange, CommunicatorsAreRegisteredAndShutdownMeetsOnOne)
{
	MPI_Comm dup;
	ASSERT_EQ(MPI_SUCCESS, MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	EXPECT_EQ(0, starpu_mpi_comm_register(dup));
	int rank = -1, size = -1;
	EXPECT_EQ(0, starpu_mpi_comm_rank(dup, &rank));
	EXPECT_EQ(0, starpu_mpi_comm_size(dup, &size));
	EXPECT_EQ(rank_, rank);
	EXPECT_EQ(size_, size);
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_mpi_comm_register(MPI_COMM_NULL); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "MPI_COMM_NULL")) << err;
	err = stderr_of([&] { ret = starpu_mpi_shutdown_comm(MPI_COMM_NULL); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "MPI_COMM_NULL")) << err;
	EXPECT_EQ(0, starpu_mpi_barrier(MPI_COMM_WORLD)) << "still running after the refused shutdown";
	ASSERT_EQ(0, starpu_mpi_shutdown_comm(dup));
	started_ = false;
	err = stderr_of([&] { ret = starpu_mpi_shutdown_comm(MPI_COMM_WORLD); });
	EXPECT_EQ(-EINVAL, ret) << "stopped already";
	MPI_Comm_free(&dup);
	ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf_));
	started_ = true;
}

TEST_F(MpiExchange, ProgressionThreadIsBoundWhereAsked)
{
	EXPECT_EQ(-1, starpu_mpi_get_thread_cpuid()) << "not bound unless asked";
	unsigned unit = starpu_get_next_bindid(0, nullptr, 0);
	ASSERT_EQ(0, starpu_mpi_shutdown());
	started_ = false;
	{
		ScopedEnv where("STARPU_MPI_THREAD_CPUID", std::to_string(unit).c_str());
		ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf_));
		started_ = true;
		EXPECT_EQ((int)unit, starpu_mpi_get_thread_cpuid());
		ASSERT_EQ(0, starpu_mpi_shutdown());
		started_ = false;
		EXPECT_EQ(-1, starpu_mpi_get_thread_cpuid()) << "forgotten at shutdown";
	}
	{
		ScopedEnv where("STARPU_MPI_THREAD_CPUID", "100000");
		std::string err = stderr_of([&] {
			ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf_));
			started_ = true;
		});
		EXPECT_EQ(-1, starpu_mpi_get_thread_cpuid());
		EXPECT_TRUE(contains(err, "processing unit 100000 does not exist")) << err;
	}
}

// ------------------------------------------------------------ checkpoints

TEST_F(MpiExchange, CheckpointsAreDeclinedWithoutFaultTolerance)
{
	starpu_mpi_checkpoint_template_t cp = (starpu_mpi_checkpoint_template_t)&cp;
	int64_t v = 0;
	starpu_data_handle_t h = owned_variable(&v, 0, 1050);
	int rets[10];
	std::string err = stderr_of([&] {
		rets[0] = starpu_mpi_checkpoint_init();
		rets[1] = starpu_mpi_checkpoint_template_create(&cp, 1, 0);
		rets[2] = starpu_mpi_checkpoint_template_add_entry(&cp, STARPU_R, h, 1, 0);
		rets[3] = starpu_mpi_checkpoint_template_freeze(&cp);
		rets[4] = starpu_mpi_checkpoint_template_submit(cp, 0);
		rets[5] = starpu_mpi_checkpoint_template_print(cp);
		rets[6] = starpu_mpi_checkpoint_template_register(&cp, 2, 0, STARPU_R, h, 1, 0);
		rets[7] = starpu_mpi_ft_turn_on();
		rets[8] = starpu_mpi_ft_turn_off();
		rets[9] = starpu_mpi_checkpoint_shutdown();
	});
	for (int i = 0; i < 10; i++)
		EXPECT_EQ(-ENOSYS, rets[i]) << "call " << i;
	EXPECT_EQ(nullptr, cp) << "no template is made";
	EXPECT_TRUE(contains(err, "starpu_mpi_checkpoint_template_submit: checkpoints need StarPU-MPI built with its fault tolerance (--enable-mpi-ft)")) << err;
	EXPECT_TRUE(contains(err, "starpu_mpi_ft_turn_on: checkpoints need")) << err;
	starpu_data_unregister(h);
}

} // namespace
