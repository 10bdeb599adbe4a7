// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU-MPI (mpi/): one program, two roles. Run by `make check`, its
// MpiRun tests start it again under `mpirun -np N` and check that every rank
// passed; under mpirun (OMPI_COMM_WORLD_SIZE set) it runs the Mpi* tests,
// each rank the same ones in the same order, every rank calling the
// collective parts. MPI is initialised once per process (it cannot start
// twice), except for MpiInit where starpu_mpi_init_conf() does it.
#include "helpers.h"

#ifdef STARPU_USE_MPI
#include <starpu_mpi.h>
#include "mpi_run.h"

#include <cinttypes>
#include <fcntl.h>
#include <set>

using namespace astro_test;

namespace {


// --------------------------------------------------------- the rank's side

class Mpi : public MpiRankTest
{
};

TEST_F(Mpi, RankAndSizeAreMpis)
{
	int r, s;
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	MPI_Comm_size(MPI_COMM_WORLD, &s);
	EXPECT_EQ(r, rank_);
	EXPECT_EQ(s, size_);
	EXPECT_EQ(r, starpu_mpi_world_rank());
	EXPECT_EQ(s, starpu_mpi_world_size());
	// As MPI_Comm_get_attr() (and StarPU-MPI): the address of the value.
	int64_t *ub = nullptr;
	int flag = 0;
	EXPECT_EQ(0, starpu_mpi_comm_get_attr(MPI_COMM_WORLD, STARPU_MPI_TAG_UB, &ub, &flag));
	EXPECT_EQ(1, flag);
	ASSERT_NE(nullptr, ub);
	EXPECT_EQ(INT64_MAX, *ub);
	// A key without attribute: flag 0, no error (StarPU's attr.c passes NULL for the value).
	flag = 1;
	std::string err = stderr_of([&] { EXPECT_EQ(0, starpu_mpi_comm_get_attr(MPI_COMM_WORLD, 42, nullptr, &flag)); });
	EXPECT_EQ(0, flag);
	EXPECT_EQ("", err);
	err = stderr_of([&] { EXPECT_EQ(-EINVAL, starpu_mpi_comm_get_attr(MPI_COMM_WORLD, STARPU_MPI_TAG_UB, nullptr, &flag)); });
	EXPECT_TRUE(contains(err, "NULL attribute_val")) << err;
	EXPECT_EQ(0, flag);
	EXPECT_EQ(1, starpu_mpi_cache_is_enabled());
}

// Each rank sends a vector to the next and receives one from the previous.
TEST_F(Mpi, RingOfIsendIrecv)
{
	const int n = 1000;
	std::vector<int32_t> out(n), in(n, -1);
	for (int i = 0; i < n; i++)
		out[i] = rank_ * 100000 + i;
	starpu_data_handle_t hout, hin;
	starpu_vector_data_register(&hout, STARPU_MAIN_RAM, (uintptr_t)out.data(), n, sizeof(int32_t));
	starpu_vector_data_register(&hin, STARPU_MAIN_RAM, (uintptr_t)in.data(), n, sizeof(int32_t));
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	starpu_mpi_req sreq = nullptr, rreq = nullptr;
	ASSERT_EQ(0, starpu_mpi_irecv(hin, &rreq, prev, prev, MPI_COMM_WORLD));
	ASSERT_EQ(0, starpu_mpi_isend(hout, &sreq, next, rank_, MPI_COMM_WORLD));
	MPI_Status status;
	EXPECT_EQ(0, starpu_mpi_wait(&rreq, &status));
	EXPECT_EQ(nullptr, rreq);
	EXPECT_EQ(prev, status.MPI_SOURCE);
	int flag = 0;
	ASSERT_TRUE(wait_until([&] { return starpu_mpi_test(&sreq, &flag, MPI_STATUS_IGNORE) == 0 && flag; }, 60000));
	starpu_data_unregister(hin);
	starpu_data_unregister(hout);
	for (int i = 0; i < n; i++)
		ASSERT_EQ(prev * 100000 + i, in[i]) << "element " << i;
}

// A token goes round with blocking send/recv, each rank adding its rank.
TEST_F(Mpi, TokenRoundWithSendRecv)
{
	int64_t token = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&token, sizeof(token));
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	if (rank_ == 0) {
		token = 1000;
		ASSERT_EQ(0, starpu_mpi_send(h, next, 42, MPI_COMM_WORLD));
		ASSERT_EQ(0, starpu_mpi_recv(h, prev, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	} else {
		ASSERT_EQ(0, starpu_mpi_recv(h, prev, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		EXPECT_EQ(0, starpu_data_acquire(h, STARPU_RW));
		token += rank_;
		starpu_data_release(h);
		ASSERT_EQ(0, starpu_mpi_send(h, next, 42, MPI_COMM_WORLD));
	}
	starpu_data_unregister(h);
	if (rank_ == 0) {
		EXPECT_EQ(1000 + (int64_t)size_ * (size_ - 1) / 2, token);
	}
}

// A blocking send after a detached one to the same peer with the same tag
// arrives second, whichever thread makes the MPI call (rank 0 to rank 1).
TEST_F(Mpi, BlockingSendStaysBehindADetachedOne)
{
	int64_t first = 0, second = 0, got = -1;
	starpu_data_handle_t hf, hs, hg;
	starpu_variable_data_register(&hf, STARPU_MAIN_RAM, (uintptr_t)&first, sizeof(first));
	starpu_variable_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)&second, sizeof(second));
	starpu_variable_data_register(&hg, STARPU_MAIN_RAM, (uintptr_t)&got, sizeof(got));
	for (int64_t round = 0; round < 20; round++) {
		if (rank_ == 0) {
			ASSERT_EQ(0, starpu_data_acquire(hf, STARPU_W));
			first = 2 * round;
			starpu_data_release(hf);
			ASSERT_EQ(0, starpu_data_acquire(hs, STARPU_W));
			second = 2 * round + 1;
			starpu_data_release(hs);
			ASSERT_EQ(0, starpu_mpi_isend_detached(hf, 1, 43, MPI_COMM_WORLD, nullptr, nullptr));
			ASSERT_EQ(0, starpu_mpi_send(hs, 1, 43, MPI_COMM_WORLD));
		} else if (rank_ == 1) {
			ASSERT_EQ(0, starpu_mpi_recv(hg, 0, 43, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			EXPECT_EQ(2 * round, read_var(hg));
			ASSERT_EQ(0, starpu_mpi_recv(hg, 0, 43, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			EXPECT_EQ(2 * round + 1, read_var(hg));
		}
	}
	EXPECT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	for (auto h : { hf, hs, hg })
		starpu_data_unregister(h);
}

void count_call(void *arg)
{
	static_cast<std::atomic<int> *>(arg)->fetch_add(1);
}

// Detached requests call back once done; the unlock-tag forms release a tag.
TEST_F(Mpi, DetachedRequestsCallBackAndUnlockTags)
{
	static std::atomic<int> calls;
	calls = 0;
	int64_t a = 7 + rank_, b = -1, c = 100 + rank_, d = -1;
	starpu_data_handle_t ha, hb, hc, hd;
	starpu_variable_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)&a, sizeof(a));
	starpu_variable_data_register(&hb, STARPU_MAIN_RAM, (uintptr_t)&b, sizeof(b));
	starpu_variable_data_register(&hc, STARPU_MAIN_RAM, (uintptr_t)&c, sizeof(c));
	starpu_variable_data_register(&hd, STARPU_MAIN_RAM, (uintptr_t)&d, sizeof(d));
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	ASSERT_EQ(0, starpu_mpi_irecv_detached(hb, prev, 1, MPI_COMM_WORLD, count_call, &calls));
	ASSERT_EQ(0, starpu_mpi_isend_detached(ha, next, 1, MPI_COMM_WORLD, count_call, &calls));
	const starpu_tag_t tag = 0x4d5049;
	ASSERT_EQ(0, starpu_mpi_irecv_detached_unlock_tag(hd, prev, 2, MPI_COMM_WORLD, tag));
	ASSERT_EQ(0, starpu_mpi_issend_detached(hc, next, 2, MPI_COMM_WORLD, nullptr, nullptr));
	EXPECT_EQ(0, starpu_tag_wait(tag));
	EXPECT_EQ(100 + prev, read_var(hd));
	EXPECT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	EXPECT_EQ(2, calls.load());
	EXPECT_EQ(7 + prev, read_var(hb));
	for (auto h : { ha, hb, hc, hd })
		starpu_data_unregister(h);
}

// The array forms: the tag is notified once every message of the array has finished.
TEST_F(Mpi, ArraysOfDetachedMessagesUnlockATag)
{
	const unsigned n = 3;
	int64_t out[n], in[n];
	starpu_data_handle_t hout[n], hin[n];
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	int dests[n], sources[n];
	starpu_mpi_tag_t tags[n];
	MPI_Comm comms[n];
	for (unsigned i = 0; i < n; i++) {
		out[i] = rank_ * 10 + i;
		in[i] = -1;
		starpu_variable_data_register(&hout[i], STARPU_MAIN_RAM, (uintptr_t)&out[i], sizeof(int64_t));
		starpu_variable_data_register(&hin[i], STARPU_MAIN_RAM, (uintptr_t)&in[i], sizeof(int64_t));
		dests[i] = next;
		sources[i] = prev;
		tags[i] = 300 + i;
		comms[i] = MPI_COMM_WORLD;
	}
	const starpu_tag_t received = 0x415252, sent = 0x415253;
	ASSERT_EQ(0, starpu_mpi_irecv_array_detached_unlock_tag(n, hin, sources, tags, comms, received));
	ASSERT_EQ(0, starpu_mpi_isend_array_detached_unlock_tag(n, hout, dests, tags, comms, sent));
	EXPECT_EQ(0, starpu_tag_wait(received));
	EXPECT_EQ(0, starpu_tag_wait(sent));
	for (unsigned i = 0; i < n; i++)
		EXPECT_EQ(prev * 10 + (int64_t)i, read_var(hin[i])) << "message " << i;
	// Nothing to send: nothing posted, no error. A NULL array: refused, said.
	EXPECT_EQ(0, starpu_mpi_isend_array_detached_unlock_tag(0, nullptr, nullptr, nullptr, nullptr, sent));
	std::string err = stderr_of([&] { EXPECT_EQ(-EINVAL, starpu_mpi_irecv_array_detached_unlock_tag(n, hin, nullptr, tags, comms, received)); });
	EXPECT_TRUE(contains(err, "starpu_mpi_irecv_array_detached_unlock_tag: NULL array")) << err;
	EXPECT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	for (unsigned i = 0; i < n; i++) {
		starpu_data_unregister(hin[i]);
		starpu_data_unregister(hout[i]);
	}
}

// Many requests in flight at once: the progression thread polls them all.
TEST_F(Mpi, ManyDetachedMessagesInFlight)
{
	const int n = 64;
	static std::atomic<int> received;
	received = 0;
	std::vector<int64_t> out(n), in(n, -1);
	std::vector<starpu_data_handle_t> hout(n), hin(n);
	int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	for (int i = 0; i < n; i++) {
		out[i] = rank_ * 1000 + i;
		starpu_variable_data_register(&hout[i], STARPU_MAIN_RAM, (uintptr_t)&out[i], sizeof(int64_t));
		starpu_variable_data_register(&hin[i], STARPU_MAIN_RAM, (uintptr_t)&in[i], sizeof(int64_t));
	}
	// Receives posted in the reverse order of the sends: matching is by tag.
	for (int i = n - 1; i >= 0; i--)
		ASSERT_EQ(0, starpu_mpi_irecv_detached(hin[i], prev, 1000 + i, MPI_COMM_WORLD, count_call, &received));
	for (int i = 0; i < n; i++)
		ASSERT_EQ(0, starpu_mpi_isend_detached(hout[i], next, 1000 + i, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	EXPECT_EQ(n, received.load());
	for (int i = 0; i < n; i++) {
		starpu_data_unregister(hin[i]);
		starpu_data_unregister(hout[i]);
		EXPECT_EQ(prev * 1000 + i, in[i]) << "message " << i;
	}
}

// ------------------------------------------- a distributed 1-D stencil

const int64_t kPrime = 1000003;
const unsigned kElems = 16;

void stencil_cpu(void *buffers[], void *)
{
	const int64_t *l = (const int64_t *)STARPU_VECTOR_GET_PTR(buffers[0]);
	const int64_t *c = (const int64_t *)STARPU_VECTOR_GET_PTR(buffers[1]);
	const int64_t *r = (const int64_t *)STARPU_VECTOR_GET_PTR(buffers[2]);
	int64_t *out = (int64_t *)STARPU_VECTOR_GET_PTR(buffers[3]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[3]);
	for (unsigned i = 0; i < n; i++)
		out[i] = (l[i] + 2 * c[i] + r[i] + i) % kPrime;
}

starpu_codelet stencil_cl()
{
	starpu_codelet cl = cpu_codelet(stencil_cpu, 4, "stencil");
	cl.modes[0] = STARPU_R;
	cl.modes[1] = STARPU_R;
	cl.modes[2] = STARPU_R;
	cl.modes[3] = STARPU_W;
	return cl;
}

// Blocks b = 0 .. nb-1 on a ring, block b owned by rank b % size; steps of
// new[b] = l + 2c + r (+ index) computed on the owner, neighbours moved by
// starpu_mpi_task_insert. Every rank checks its blocks and rank 0 all of
// them (brought with starpu_mpi_get_data_on_node) against the serial run.
void run_stencil(int rank, int size, bool cache)
{
	static starpu_codelet cl = stencil_cl();
	const int nb = 3 * size, steps = 5;
	ASSERT_EQ(0, starpu_mpi_cache_set(cache ? 1 : 0));
	std::vector<std::vector<int64_t>> serial(nb, std::vector<int64_t>(kElems));
	for (int b = 0; b < nb; b++)
		for (unsigned i = 0; i < kElems; i++)
			serial[b][i] = b * 31 + i;
	std::vector<std::vector<int64_t>> mem_cur = serial, mem_nxt = serial;
	std::vector<starpu_data_handle_t> cur(nb), nxt(nb);
	for (int b = 0; b < nb; b++) {
		int owner = b % size;
		if (owner == rank) {
			starpu_vector_data_register(&cur[b], STARPU_MAIN_RAM, (uintptr_t)mem_cur[b].data(), kElems, sizeof(int64_t));
			starpu_vector_data_register(&nxt[b], STARPU_MAIN_RAM, (uintptr_t)mem_nxt[b].data(), kElems, sizeof(int64_t));
		} else {
			starpu_vector_data_register(&cur[b], -1, 0, kElems, sizeof(int64_t));
			starpu_vector_data_register(&nxt[b], -1, 0, kElems, sizeof(int64_t));
		}
		starpu_mpi_data_register(cur[b], b, owner);
		starpu_mpi_data_register(nxt[b], nb + b, owner);
	}
	for (int s = 0; s < steps; s++) {
		for (int b = 0; b < nb; b++)
			ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &cl, STARPU_R, cur[(b + nb - 1) % nb], STARPU_R, cur[b],
							    STARPU_R, cur[(b + 1) % nb], STARPU_W, nxt[b], 0));
		std::swap(cur, nxt);
		std::vector<std::vector<int64_t>> next(serial);
		for (int b = 0; b < nb; b++)
			for (unsigned i = 0; i < kElems; i++)
				next[b][i] = (serial[(b + nb - 1) % nb][i] + 2 * serial[b][i] + serial[(b + 1) % nb][i] + i) % kPrime;
		serial = next;
	}
	for (int b = 0; b < nb; b++)
		starpu_mpi_get_data_on_node(MPI_COMM_WORLD, cur[b], 0);
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	for (int b = 0; b < nb; b++) {
		if (rank != 0 && b % size != rank)
			continue;
		ASSERT_EQ(0, starpu_data_acquire(cur[b], STARPU_R));
		const int64_t *v = (const int64_t *)starpu_data_get_local_ptr(cur[b]);
		ASSERT_NE(nullptr, v);
		for (unsigned i = 0; i < kElems; i++)
			EXPECT_EQ(serial[b][i], v[i]) << "block " << b << " element " << i << " on rank " << rank;
		starpu_data_release(cur[b]);
	}
	for (int b = 0; b < nb; b++) {
		starpu_data_unregister(cur[b]);
		starpu_data_unregister(nxt[b]);
	}
	starpu_mpi_cache_set(1);
}

TEST_F(Mpi, StencilMatchesSerial)
{
	run_stencil(rank_, size_, true);
}

TEST_F(Mpi, StencilMatchesSerialWithoutCache)
{
	run_stencil(rank_, size_, false);
}

// ------------------------------------ receiving straight into the handle

// Contiguous data are received straight into the handle's buffer while a
// write acquire holds it. Each round, every block is rewritten by its owner
// and read on the next rank, which receives it in place into the same
// buffer as the round before; some rounds flush the cache first (the copies
// elsewhere are marked invalid, which once gave MPI a NULL buffer). A value
// that is wrong, torn or a round late is counted.
const unsigned kStressElems = 64;
int stress_mismatches;

void stress_fill_cpu(void *buffers[], void *cl_arg)
{
	int round, block;
	starpu_codelet_unpack_args(cl_arg, &round, &block, 0);
	int64_t *v = (int64_t *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] = (int64_t)round * 100000 + block * 1000 + i;
}

void stress_check_cpu(void *buffers[], void *cl_arg)
{
	int round, block;
	starpu_codelet_unpack_args(cl_arg, &round, &block, 0);
	const int64_t *v = (const int64_t *)STARPU_VECTOR_GET_PTR(buffers[0]);
	int64_t *sum = (int64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++) {
		if (v[i] != (int64_t)round * 100000 + block * 1000 + i)
			__atomic_add_fetch(&stress_mismatches, 1, __ATOMIC_RELAXED);
		*sum += v[i];
	}
}

TEST_F(Mpi, InPlaceReceivesKeepEveryRound)
{
	static starpu_codelet fill = cpu_codelet(stress_fill_cpu, 1, "stress_fill");
	fill.modes[0] = STARPU_W;
	static starpu_codelet check = cpu_codelet(stress_check_cpu, 2, "stress_check");
	check.modes[0] = STARPU_R;
	check.modes[1] = STARPU_RW;
	const int rounds = 60;
	__atomic_store_n(&stress_mismatches, 0, __ATOMIC_RELAXED);
	std::vector<std::vector<int64_t>> mem(size_, std::vector<int64_t>(kStressElems));
	std::vector<int64_t> sums(size_, 0);
	std::vector<starpu_data_handle_t> blocks(size_), hsums(size_);
	for (int b = 0; b < size_; b++) {
		if (b == rank_)
			starpu_vector_data_register(&blocks[b], STARPU_MAIN_RAM, (uintptr_t)mem[b].data(), kStressElems, sizeof(int64_t));
		else
			starpu_vector_data_register(&blocks[b], -1, 0, kStressElems, sizeof(int64_t));
		starpu_mpi_data_register(blocks[b], 600 + b, b);
		hsums[b] = owned_variable(&sums[b], b, 700 + b);
	}
	for (int round = 0; round < rounds; round++) {
		if (round % 7 == 3)
			for (int b = 0; b < size_; b++)
				starpu_mpi_cache_flush(MPI_COMM_WORLD, blocks[b]);
		for (int b = 0; b < size_; b++) {
			ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &fill, STARPU_W, blocks[b], STARPU_VALUE, &round, sizeof(round),
							    STARPU_VALUE, &b, sizeof(b), 0));
			ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &check, STARPU_R, blocks[b], STARPU_RW, hsums[(b + 1) % size_],
							    STARPU_VALUE, &round, sizeof(round), STARPU_VALUE, &b, sizeof(b), 0));
		}
	}
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	const int from = (rank_ + size_ - 1) % size_;
	int64_t expected = 0;
	for (int round = 0; round < rounds; round++)
		for (unsigned i = 0; i < kStressElems; i++)
			expected += (int64_t)round * 100000 + from * 1000 + i;
	EXPECT_EQ(expected, read_var(hsums[rank_])) << "on rank " << rank_;
	EXPECT_EQ(0, __atomic_load_n(&stress_mismatches, __ATOMIC_RELAXED)) << "values received wrong on rank " << rank_;
	for (int b = 0; b < size_; b++) {
		starpu_data_unregister(blocks[b]);
		starpu_data_unregister(hsums[b]);
	}
}

// ----------------------------------------------- a reduction across ranks

void fill_cpu(void *buffers[], void *cl_arg)
{
	int r;
	starpu_codelet_unpack_args(cl_arg, &r, 0);
	int64_t sum = 0;
	for (int i = 0; i < 100; i++)
		sum += (int64_t)r * 1000 + i;
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]) = sum;
}

void sum_cpu(void *buffers[], void *cl_arg)
{
	int n = (int)(intptr_t)cl_arg;
	int64_t total = 0;
	for (int i = 0; i < n; i++)
		total += *(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[i]);
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[n]) = total;
}

// Each rank fills its partial sum; the last rank adds them all (it owns the
// result); every rank then gets the result.
TEST_F(Mpi, ReductionAcrossRanks)
{
	static starpu_codelet fill = cpu_codelet(fill_cpu, 1, "fill");
	fill.modes[0] = STARPU_W;
	static starpu_codelet sum = cpu_codelet(sum_cpu, STARPU_VARIABLE_NBUFFERS, "sum");
	std::vector<int64_t> mem(size_, 0);
	int64_t result = 0;
	std::vector<starpu_data_handle_t> partial(size_);
	for (int r = 0; r < size_; r++)
		partial[r] = owned_variable(&mem[r], r, 100 + r);
	const int last = size_ - 1;
	starpu_data_handle_t hres = owned_variable(&result, last, 99);

	for (int r = 0; r < size_; r++)
		ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &fill, STARPU_W, partial[r], STARPU_VALUE, &r, sizeof(r), 0));
	std::vector<starpu_data_descr> descrs(size_ + 1);
	for (int r = 0; r < size_; r++)
		descrs[r] = { partial[r], STARPU_R };
	descrs[size_] = { hres, STARPU_W };
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &sum, STARPU_DATA_MODE_ARRAY, descrs.data(), size_ + 1,
					    STARPU_CL_ARGS_NFREE, (void *)(intptr_t)size_, (size_t)0, 0));
	starpu_mpi_get_data_on_all_nodes_detached(MPI_COMM_WORLD, hres);
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));

	int64_t expected = 0;
	for (int r = 0; r < size_; r++)
		for (int i = 0; i < 100; i++)
			expected += (int64_t)r * 1000 + i;
	EXPECT_EQ(expected, read_var(hres)) << "on rank " << rank_;
	for (auto h : partial)
		starpu_data_unregister(h);
	starpu_data_unregister(hres);
}

void times_ten_plus_one(void *buffers[], void *)
{
	int64_t *v = (int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	*v = *v * 10 + 1;
}

// A task run elsewhere (STARPU_EXECUTE_ON_NODE / _ON_DATA) gets the data and
// sends what it wrote back to the owner.
TEST_F(Mpi, WrittenDataGoesBackToItsOwner)
{
	static starpu_codelet cl = cpu_codelet(times_ten_plus_one, 1, "times10");
	cl.modes[0] = STARPU_RW;
	int64_t value = 5, other = 0;
	const int last = size_ - 1;
	starpu_data_handle_t h = owned_variable(&value, 0, 10);
	starpu_data_handle_t hother = owned_variable(&other, last, 11);
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &cl, STARPU_RW, h, STARPU_EXECUTE_ON_NODE, last, 0));
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &cl, STARPU_RW, h, STARPU_EXECUTE_ON_DATA, hother, 0));
	ASSERT_EQ(0, starpu_mpi_insert_task(MPI_COMM_WORLD, &cl, STARPU_RW, h, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 0) {
		EXPECT_EQ(5111, read_var(h));
	}
	starpu_data_unregister(h);
	starpu_data_unregister(hother);
}

// STARPU_SSEND says how the data travel, not how the task accesses them
// (StarPU's insert_task_count.c): a codelet declaring STARPU_RW takes STARPU_RW|STARPU_SSEND.
TEST_F(Mpi, SsendGoesWithTheCodeletsMode)
{
	static starpu_codelet cl = cpu_codelet(times_ten_plus_one, 1, "times10");
	cl.modes[0] = STARPU_RW;
	int64_t value = 1, expected = 1;
	starpu_data_handle_t h = owned_variable(&value, 0, 14);
	for (int r = 0; r < size_; r++) {
		ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &cl, STARPU_RW | STARPU_SSEND, h, STARPU_EXECUTE_ON_NODE, r, 0));
		expected = expected * 10 + 1;
	}
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 0) {
		EXPECT_EQ(expected, read_var(h));
	}
	starpu_data_unregister(h);
}

// starpu_mpi_task_build / _post_build: the task on its rank only.
TEST_F(Mpi, TaskBuildAndPostBuild)
{
	static starpu_codelet cl = cpu_codelet(times_ten_plus_one, 1, "times10");
	cl.modes[0] = STARPU_RW;
	int64_t value = 2;
	starpu_data_handle_t h = owned_variable(&value, 0, 12);
	struct starpu_task *task = starpu_mpi_task_build(MPI_COMM_WORLD, &cl, STARPU_RW, h, STARPU_EXECUTE_ON_NODE, 1, 0);
	EXPECT_EQ(rank_ == 1, task != nullptr);
	if (task) {
		ASSERT_EQ(0, starpu_task_submit(task));
	}
	ASSERT_EQ(0, starpu_mpi_task_post_build(MPI_COMM_WORLD, &cl, STARPU_RW, h, STARPU_EXECUTE_ON_NODE, 1, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 0) {
		EXPECT_EQ(21, read_var(h));
	}
	starpu_data_unregister(h);
}

// ------------------------------- ranks pass NULL for data they do not hold

void in_place_cpu(void *buffers[], void *cl_arg)
{
	int b;
	starpu_codelet_unpack_args(cl_arg, &b, 0);
	int64_t l = *(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	int64_t *c = (int64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]);
	int64_t r = *(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[2]);
	*c = (l + 2 * *c + r + b) % kPrime;
}

// StarPU's stencil5 pattern on a ring of blocks, three per rank: a rank
// registers its blocks and their neighbours, and passes NULL for the rest.
// A task in place on block b reads b-1 and b+1; a rank holding none of it
// passes NULL for all (not involved), the owner of a neighbour passes NULL
// for the far neighbour and must still send its own. Once, such a rank
// refused the insert and the owner of b waited for ever.
TEST_F(Mpi, RanksPassNullForDataTheyDoNotHold)
{
	static starpu_codelet cl = cpu_codelet(in_place_cpu, 3, "in_place");
	cl.modes[0] = STARPU_R;
	cl.modes[1] = STARPU_RW;
	cl.modes[2] = STARPU_R;
	const int nb = 3 * size_, steps = 3;
	auto owner = [&](int b) { return ((b + nb) % nb) / 3; };
	std::vector<int64_t> serial(nb), mem(nb);
	for (int b = 0; b < nb; b++)
		serial[b] = mem[b] = 7 * b + 1;
	std::vector<starpu_data_handle_t> h(nb, nullptr);
	int held = 0;
	for (int b = 0; b < nb; b++) {
		if (owner(b) == rank_)
			starpu_variable_data_register(&h[b], STARPU_MAIN_RAM, (uintptr_t)&mem[b], sizeof(int64_t));
		else if (owner(b - 1) == rank_ || owner(b + 1) == rank_)
			starpu_variable_data_register(&h[b], -1, 0, sizeof(int64_t));
		if (h[b]) {
			starpu_mpi_data_register(h[b], 300 + b, owner(b));
			held++;
		}
	}
	if (size_ >= 4) {
		EXPECT_LT(held, nb) << "some blocks must be NULL on this rank";
	}
	for (int s = 0; s < steps; s++)
		for (int b = 0; b < nb; b++) {
			int l = (b + nb - 1) % nb, r = (b + 1) % nb;
			std::string err;
			int ret = -1;
			err = stderr_of([&] {
				ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &cl, STARPU_R, h[l], STARPU_RW, h[b], STARPU_R, h[r],
							     STARPU_VALUE, &b, sizeof(b), 0);
			});
			ASSERT_EQ(0, ret) << "block " << b << " step " << s << " on rank " << rank_ << ": " << err;
			EXPECT_EQ("", err);
			serial[b] = (serial[l] + 2 * serial[b] + serial[r] + b) % kPrime;
		}
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	for (int b = 0; b < nb; b++)
		if (owner(b) == rank_) {
			EXPECT_EQ(serial[b], read_var(h[b])) << "block " << b << " on rank " << rank_;
		}
	for (int b = 0; b < nb; b++)
		if (h[b])
			starpu_data_unregister(h[b]);
}

// A starpu_mpi_task_build() on a rank with none of the data builds nothing, says nothing.
TEST_F(Mpi, TaskBuildOnARankWithoutTheDataBuildsNothing)
{
	static starpu_codelet cl = cpu_codelet(times_ten_plus_one, 1, "times10");
	cl.modes[0] = STARPU_RW;
	int64_t value = 3;
	starpu_data_handle_t h = nullptr;
	if (rank_ <= 1) {
		h = owned_variable(&value, 1, 13);
	}
	struct starpu_task *task = nullptr;
	std::string err = stderr_of([&] { task = starpu_mpi_task_build(MPI_COMM_WORLD, &cl, STARPU_RW, h, 0); });
	EXPECT_EQ("", err);
	EXPECT_EQ(rank_ == 1, task != nullptr);
	if (task) {
		ASSERT_EQ(0, starpu_task_submit(task));
	}
	EXPECT_EQ(0, starpu_mpi_task_post_build(MPI_COMM_WORLD, &cl, STARPU_RW, h, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 1) {
		EXPECT_EQ(31, read_var(h));
	}
	if (h)
		starpu_data_unregister(h);
}

// A task without codelet (StarPU's callback.c): its callback runs on the rank named, once.
void count_callback(void *arg)
{
	(*(int *)arg)++;
}

TEST_F(Mpi, TaskWithoutCodeletRunsItsCallbackOnItsRank)
{
	static int count;
	count = 0;
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, nullptr, STARPU_EXECUTE_ON_NODE, 1,
					    STARPU_CALLBACK_WITH_ARG_NFREE, count_callback, &count, 0));
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, nullptr, STARPU_CALLBACK_WITH_ARG_NFREE, count_callback, &count, 0));
	starpu_task_wait_for_all();
	// The second names no rank and takes no data: the node-selection policy's choice, rank 0.
	EXPECT_EQ((rank_ == 1) + (rank_ == 0), count);
}

// A rank that stops (here rank 0, which sends only once told to): rank 1's
// starpu_task_wait_for_all() waits for a task reading data it receives from
// rank 0. Its idle-wait report names the receive and its peer, not "data the
// application holds"; once the report was seen, rank 1 tells rank 0 (a plain
// MPI message, on another tag) to send, and the wait ends.
void read_int64(void **, void *)
{
}

// Rank 1 receives data_tag from rank 0 for a task and waits for all; rank 0 sends
// only once rank 1 saw every needle on its stderr (20 s at most), told by a plain
// MPI message on another tag. Returns rank 1's stderr meanwhile ("" elsewhere).
std::string receive_from_a_stopped_rank(int rank, int data_tag, const std::vector<std::string> &needles, bool *seen)
{
	const int go_tag = data_tag + 1;
	int64_t value = rank == 0 ? 42 : 0;
	std::string text;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));
	if (rank == 0) {
		int go = 0;
		MPI_Recv(&go, 1, MPI_INT, 1, go_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		EXPECT_EQ(0, starpu_mpi_send(h, 1, data_tag, MPI_COMM_WORLD));
	} else if (rank == 1) {
		TempDir dir;
		std::string path = dir.file("stderr");
		fflush(stderr);
		int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0600);
		int saved = dup(2);
		dup2(fd, 2);
		EXPECT_EQ(0, starpu_mpi_irecv_detached(h, 0, data_tag, MPI_COMM_WORLD, nullptr, nullptr));
		static starpu_codelet read_cl = [] {
			starpu_codelet cl = cpu_codelet(read_int64, 1, "reader");
			cl.modes[0] = STARPU_R;
			return cl;
		}();
		starpu_task *t = starpu_task_create();
		t->cl = &read_cl;
		t->handles[0] = h;
		EXPECT_EQ(0, starpu_task_submit(t));
		std::thread tell([&] {
			*seen = wait_until(
				[&] {
					std::string now = read_file(path);
					for (const std::string &n : needles)
						if (!contains(now, n))
							return false;
					return true;
				},
				20000);
			int go = 1;
			MPI_Send(&go, 1, MPI_INT, 0, go_tag, MPI_COMM_WORLD);
		});
		EXPECT_EQ(0, starpu_task_wait_for_all());
		tell.join();
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		close(fd);
		text = read_file(path);
	}
	starpu_data_unregister(h);
	EXPECT_EQ(rank <= 1 ? 42 : 0, value);
	return text;
}

TEST_F(Mpi, IdleWaitNamesThePendingReceiveAndItsPeer)
{
	ScopedEnv silent("STARPU_SILENT", nullptr);
	bool seen = false;
	std::string text = receive_from_a_stopped_rank(rank_, 31998,
		{ "[astrolabe] idle wait: starpu_task_wait_for_all has waited ",
		  "[astrolabe] idle wait:   StarPU-MPI: receiving from rank 0 (data tag 31998) for ",
		  " s, not complete: rank 0 has not sent the matching message: that rank stopped (SIGSTOP, a crash, a network "
		  "partition) or its program posts no such send\n" },
		&seen);
	if (rank_ == 1) {
		EXPECT_TRUE(seen) << text;
		EXPECT_FALSE(contains(text, "StarPU-MPI: sending")) << text;
	}
}

// The same with the watchdog on (STARPU_WATCHDOG_TIMEOUT, set before the start):
// its report names the receive and its peer too.
class MpiWatchdog : public Mpi
{
protected:
	ScopedEnv timeout_{"STARPU_WATCHDOG_TIMEOUT", "300000"};
};

TEST_F(MpiWatchdog, NamesThePendingReceiveAndItsPeer)
{
	bool seen = false;
	std::string text = receive_from_a_stopped_rank(rank_, 31996,
		{ "[astrolabe] watchdog: no task completed for ",
		  "a communication not complete (listed below when there are)",
		  "[astrolabe] watchdog:   StarPU-MPI: receiving from rank 0 (data tag 31996) for ",
		  " s, not complete: rank 0 has not sent the matching message" },
		&seen);
	if (rank_ == 1)
		EXPECT_TRUE(seen) << text;
}

// Detached requests, then starpu_data_unregister_submit() at once (StarPU's
// early_request.c): the unregistration waits for the requests, whose
// releases once found the handle unregistered and the ranks hung.
int64_t unregister_received[64];

void fill_rank_cpu(void *buffers[], void *cl_arg)
{
	int64_t v;
	starpu_codelet_unpack_args(cl_arg, &v, 0);
	int64_t *p = (int64_t *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		p[i] = v + i;
}

void keep_received_cpu(void *buffers[], void *cl_arg)
{
	int round;
	starpu_codelet_unpack_args(cl_arg, &round, 0);
	unregister_received[round] = *(int64_t *)STARPU_VECTOR_GET_PTR(buffers[0]);
}

TEST_F(Mpi, UnregisterSubmitWaitsForDetachedRequests)
{
	static starpu_codelet fill = cpu_codelet(fill_rank_cpu, 1, "fill");
	fill.modes[0] = STARPU_W;
	static starpu_codelet keep = cpu_codelet(keep_received_cpu, 1, "keep");
	keep.modes[0] = STARPU_R;
	const int rounds = 16, next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
	for (int round = 0; round < rounds; round++) {
		unregister_received[round] = -1;
		starpu_data_handle_t out, in;
		starpu_vector_data_register(&out, -1, 0, 4, sizeof(int64_t));
		starpu_vector_data_register(&in, -1, 0, 4, sizeof(int64_t));
		int64_t v = rank_ * 1000 + round;
		ASSERT_EQ(0, starpu_task_insert(&fill, STARPU_W, out, STARPU_VALUE, &v, sizeof(v), 0));
		ASSERT_EQ(0, starpu_mpi_isend_detached(out, next, 40 + round, MPI_COMM_WORLD, nullptr, nullptr));
		ASSERT_EQ(0, starpu_mpi_irecv_detached(in, prev, 40 + round, MPI_COMM_WORLD, nullptr, nullptr));
		ASSERT_EQ(0, starpu_task_insert(&keep, STARPU_R, in, STARPU_VALUE, &round, sizeof(round), 0));
		std::string err = stderr_of([&] {
			starpu_data_unregister_submit(out);
			starpu_data_unregister_submit(in);
		});
		EXPECT_EQ("", err);
	}
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	for (int round = 0; round < rounds; round++)
		EXPECT_EQ(prev * 1000 + round, unregister_received[round]) << "round " << round;
}

// A void handle travels as an empty message (StarPU's datatypes.c): a synchronisation.
TEST_F(Mpi, VoidHandleTravelsAsAnEmptyMessage)
{
	starpu_data_handle_t h;
	starpu_void_data_register(&h);
	if (rank_ == 0) {
		EXPECT_EQ(0, starpu_mpi_send(h, 1, 30, MPI_COMM_WORLD));
	} else if (rank_ == 1) {
		EXPECT_EQ(0, starpu_mpi_recv(h, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
	starpu_data_unregister(h);
}

void copy_cpu(void *buffers[], void *)
{
	*(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[1]) = *(int64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]);
}

// The cache: a value sent once is not sent again until written or flushed.
TEST_F(Mpi, CacheKeepsReceivedDataUntilWrittenOrFlushed)
{
	static starpu_codelet copy = cpu_codelet(copy_cpu, 2, "copy");
	copy.modes[0] = STARPU_R;
	copy.modes[1] = STARPU_W;
	static starpu_codelet bump = cpu_codelet(times_ten_plus_one, 1, "times10");
	bump.modes[0] = STARPU_RW;
	int64_t src = 3, dst = 0;
	starpu_data_handle_t hsrc = owned_variable(&src, 0, 20);
	starpu_data_handle_t hdst = owned_variable(&dst, 1, 21);

	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &copy, STARPU_R, hsrc, STARPU_W, hdst, 0));
	EXPECT_EQ(rank_ == 0, starpu_mpi_cached_send(hsrc, 1) == 1);
	EXPECT_EQ(rank_ == 1, starpu_mpi_cached_receive(hsrc) == 1);
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &copy, STARPU_R, hsrc, STARPU_W, hdst, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 1) {
		EXPECT_EQ(3, read_var(hdst));
	}

	// Written by its owner: the copy on rank 1 is stale, the next read brings the new value.
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &bump, STARPU_RW, hsrc, 0));
	EXPECT_EQ(0, starpu_mpi_cached_send(hsrc, 1));
	EXPECT_EQ(0, starpu_mpi_cached_receive(hsrc));
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &copy, STARPU_R, hsrc, STARPU_W, hdst, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 1) {
		EXPECT_EQ(31, read_var(hdst));
	}

	// Flushed: forgotten on every rank.
	starpu_mpi_cache_flush(MPI_COMM_WORLD, hsrc);
	EXPECT_EQ(0, starpu_mpi_cached_send(hsrc, 1));
	EXPECT_EQ(0, starpu_mpi_cached_receive(hsrc));
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &copy, STARPU_R, hsrc, STARPU_W, hdst, 0));
	starpu_mpi_cache_flush_all_data(MPI_COMM_WORLD);
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 1) {
		EXPECT_EQ(31, read_var(hdst));
	}
	starpu_data_unregister(hsrc);
	starpu_data_unregister(hdst);
}

// Migration: the new owner gets the value, and tasks then run there.
TEST_F(Mpi, DataMigrateMovesOwnership)
{
	static starpu_codelet bump = cpu_codelet(times_ten_plus_one, 1, "times10");
	bump.modes[0] = STARPU_RW;
	int64_t value = 4;
	starpu_data_handle_t h = owned_variable(&value, 0, 30);
	const int last = size_ - 1;
	starpu_mpi_data_migrate(MPI_COMM_WORLD, h, last);
	EXPECT_EQ(last, starpu_mpi_data_get_rank(h));
	EXPECT_EQ(30, starpu_mpi_data_get_tag(h));
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &bump, STARPU_RW, h, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == last) {
		EXPECT_EQ(41, read_var(h));
	}
	starpu_data_unregister(h);
}

// ------------------------------------------------------------------ errors

class MpiErrors : public Mpi
{
};

TEST_F(MpiErrors, TaskOnDataWithoutOwnerIsRefused)
{
	static starpu_codelet bump = cpu_codelet(times_ten_plus_one, 1, "times10");
	bump.modes[0] = STARPU_RW;
	int64_t value = 1;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &bump, STARPU_RW, h, 0); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "has no owner")) << err;
	EXPECT_TRUE(contains(err, "starpu_mpi_data_register")) << err;
	EXPECT_EQ(-1, starpu_mpi_data_get_rank(h));

	// An owner but no tag (StarPU's temporary data): fine where it stays, refused where it must travel.
	starpu_mpi_data_set_rank(h, 0);
	err = stderr_of([&] { ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &bump, STARPU_RW, h, 0); });
	EXPECT_EQ(0, ret);
	EXPECT_EQ("", err);
	err = stderr_of([&] { ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &bump, STARPU_RW, h, STARPU_EXECUTE_ON_NODE, 1, 0); });
	if (rank_ <= 1) {
		EXPECT_EQ(-EINVAL, ret);
		EXPECT_TRUE(contains(err, "must travel to rank 1 but has no tag")) << err;
	} else {
		EXPECT_EQ(0, ret);
	}
	starpu_task_wait_for_all();
	starpu_data_unregister(h);
	EXPECT_EQ(rank_ == 0 ? 11 : 1, value);
}

// NULL stays an error where the data is needed: on the rank that runs the
// task, on a rank that owns what the task reads but lacks what it writes (it
// cannot tell where to send), and where the node-selection policy decides.
TEST_F(MpiErrors, NullHandleWhereTheDataIsNeededIsRefused)
{
	static starpu_codelet bump = cpu_codelet(times_ten_plus_one, 1, "times10");
	bump.modes[0] = STARPU_RW;
	static starpu_codelet copy = cpu_codelet(copy_cpu, 2, "copy");
	copy.modes[0] = STARPU_R;
	copy.modes[1] = STARPU_W;
	static starpu_codelet reads = cpu_codelet(copy_cpu, 2, "reads");
	reads.modes[0] = STARPU_R;
	reads.modes[1] = STARPU_R;
	int64_t value = 4, out = 0;
	starpu_data_handle_t h = owned_variable(&value, 0, 20);
	starpu_data_handle_t none = nullptr;
	int ret = 0;

	std::string err = stderr_of([&] { ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &bump, STARPU_RW, none, STARPU_EXECUTE_ON_NODE, 1, 0); });
	if (rank_ == 1) {
		EXPECT_EQ(-EINVAL, ret);
		EXPECT_TRUE(contains(err, "buffer 0 of codelet 'times10' is a NULL handle on rank 1, which runs the task")) << err;
		EXPECT_TRUE(contains(err, "starpu_mpi_data_register")) << err;
	} else {
		EXPECT_EQ(0, ret);
		EXPECT_EQ("", err);
	}
	struct starpu_task *task = nullptr;
	err = stderr_of([&] { task = starpu_mpi_task_build(MPI_COMM_WORLD, &bump, STARPU_RW, none, STARPU_EXECUTE_ON_NODE, 1, 0); });
	EXPECT_EQ(nullptr, task);
	EXPECT_EQ(rank_ == 1, contains(err, "which runs the task")) << err;

	err = stderr_of([&] { ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &copy, STARPU_R, h, STARPU_W, none, 0); });
	if (rank_ == 0) {
		EXPECT_EQ(-EINVAL, ret);
		EXPECT_TRUE(contains(err, "buffer 1 of codelet 'copy' is written by the task but is a NULL handle on rank 0, which owns buffer 0")) << err;
		EXPECT_TRUE(contains(err, "STARPU_EXECUTE_ON_NODE")) << err;
	} else {
		EXPECT_EQ(0, ret);
		EXPECT_EQ("", err);
	}

	err = stderr_of([&] { ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &reads, STARPU_R, none, STARPU_R, h, 0); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "is left to the node-selection policy")) << err;

	// Nothing moved, nothing ran: the data are as they were, and usable.
	starpu_data_handle_t hout = owned_variable(&out, 0, 21);
	ASSERT_EQ(0, starpu_mpi_task_insert(MPI_COMM_WORLD, &copy, STARPU_R, h, STARPU_W, hout, 0));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	if (rank_ == 0) {
		EXPECT_EQ(4, read_var(h));
		EXPECT_EQ(4, read_var(hout));
	}
	starpu_data_unregister(h);
	starpu_data_unregister(hout);
}

TEST_F(MpiErrors, TagReusedForTwoHandlesIsRefused)
{
	int64_t a = 0, b = 0;
	starpu_data_handle_t ha, hb;
	starpu_variable_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)&a, sizeof(a));
	starpu_variable_data_register(&hb, STARPU_MAIN_RAM, (uintptr_t)&b, sizeof(b));
	starpu_mpi_data_register(ha, 7, 0);
	std::string err = stderr_of([&] { starpu_mpi_data_register(hb, 7, 0); });
	EXPECT_TRUE(contains(err, "tag 7 is already the tag of another data handle")) << err;
	EXPECT_EQ(7, starpu_mpi_data_get_tag(ha));
	EXPECT_EQ(-1, starpu_mpi_data_get_tag(hb));
	// Unregistering frees the tag for another handle.
	starpu_data_unregister(ha);
	err = stderr_of([&] { starpu_mpi_data_register(hb, 7, 0); });
	EXPECT_EQ("", err);
	EXPECT_EQ(7, starpu_mpi_data_get_tag(hb));
	starpu_data_unregister(hb);
}

TEST_F(MpiErrors, BadArgumentsAreRefused)
{
	int64_t a = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&a, sizeof(a));
	starpu_mpi_req req = nullptr;
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_mpi_isend(h, &req, size_, 1, MPI_COMM_WORLD); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "is not in the communicator")) << err;
	err = stderr_of([&] { ret = starpu_mpi_isend(h, &req, 0, -5, MPI_COMM_WORLD); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "tag -5 is negative")) << err;
	err = stderr_of([&] { ret = starpu_mpi_isend(h, nullptr, 0, 1, MPI_COMM_WORLD); });
	EXPECT_EQ(-EINVAL, ret);
	err = stderr_of([&] { ret = starpu_mpi_wait(&req, MPI_STATUS_IGNORE); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "no request")) << err;
	err = stderr_of([&] { starpu_mpi_data_register(h, 1, size_ + 3); });
	EXPECT_TRUE(contains(err, "is not in the communicator")) << err;
	EXPECT_EQ(-1, starpu_mpi_data_get_rank(h));
	// The blocking forms check before they acquire the handle: refused, it is left free.
	err = stderr_of([&] { ret = starpu_mpi_send(h, 0, 1, MPI_COMM_NULL); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "starpu_mpi_send: the communicator is MPI_COMM_NULL")) << err;
	err = stderr_of([&] { ret = starpu_mpi_recv(h, size_, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "starpu_mpi_recv: rank")) << err;
	EXPECT_TRUE(contains(err, "is not in the communicator")) << err;
	int rank = -1;
	err = stderr_of([&] { ret = starpu_mpi_comm_rank(MPI_COMM_NULL, &rank); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "MPI_COMM_NULL")) << err;
	EXPECT_EQ(0, starpu_data_acquire(h, STARPU_RW));
	starpu_data_release(h);
	starpu_data_unregister(h);
}

// A message whose size is not the receiving handle's is an error, not a silent overflow.
TEST_F(MpiErrors, SizeMismatchIsReported)
{
	std::vector<int32_t> small(4, 9), big(8, -1);
	starpu_data_handle_t h;
	if (rank_ == 0)
		starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)small.data(), small.size(), sizeof(int32_t));
	else
		starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)big.data(), big.size(), sizeof(int32_t));
	if (rank_ == 0) {
		EXPECT_EQ(0, starpu_mpi_send(h, 1, 5, MPI_COMM_WORLD));
	} else if (rank_ == 1) {
		int ret = 0;
		std::string err = stderr_of([&] { ret = starpu_mpi_recv(h, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE); });
		EXPECT_NE(0, ret);
		EXPECT_TRUE(contains(err, "received 16 bytes from rank 0")) << err;
		EXPECT_TRUE(contains(err, "packs to 32")) << err;
	}
	EXPECT_EQ(0, starpu_mpi_barrier(MPI_COMM_WORLD));
	starpu_data_unregister(h);
	if (rank_ == 1) {
		EXPECT_EQ(-1, big[7]);
	}
}

// Before starpu_mpi_init*(), and a second init while running.
TEST(MpiNotStarted, CallsAreRefused)
{
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_mpi_isend_detached(nullptr, 0, 1, MPI_COMM_WORLD, nullptr, nullptr); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "StarPU-MPI is not initialised")) << err;
	err = stderr_of([&] { ret = starpu_mpi_shutdown(); });
	EXPECT_EQ(-EINVAL, ret);
	err = stderr_of([&] { ret = starpu_mpi_init(nullptr, nullptr, 0); });
	EXPECT_EQ(-EINVAL, ret);
	EXPECT_TRUE(contains(err, "call starpu_init() first")) << err;

	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf));
	err = stderr_of([&] { ret = starpu_mpi_init(nullptr, nullptr, 0); });
	EXPECT_EQ(-EBUSY, ret);
	EXPECT_TRUE(contains(err, "already initialised")) << err;
	EXPECT_EQ(0, starpu_mpi_shutdown());
	EXPECT_FALSE(starpu_is_initialized());
}

// starpu_mpi_init() on a runtime the program started: shutdown leaves it running.
TEST(MpiNotStarted, InitOnARunningRuntime)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	ASSERT_EQ(0, starpu_mpi_init(nullptr, nullptr, 0));
	EXPECT_GE(starpu_mpi_world_size(), 2);
	EXPECT_EQ(0, starpu_mpi_barrier(MPI_COMM_WORLD));
	EXPECT_EQ(0, starpu_mpi_shutdown());
	EXPECT_TRUE(starpu_is_initialized());
}

// STARPU_MPI_STATS=1: the bytes sent to each rank, retrieved and printed at shutdown.
TEST(MpiStats, CommunicationMatrixIsPrintedAtShutdown)
{
	ScopedEnv stats("STARPU_MPI_STATS", "1");
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf));
	int rank = starpu_mpi_world_rank(), size = starpu_mpi_world_size();
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int64_t out[3] = { 1, 2, 3 }, in[3] = { 0, 0, 0 };
	starpu_data_handle_t hout, hin;
	starpu_vector_data_register(&hout, STARPU_MAIN_RAM, (uintptr_t)out, 3, sizeof(int64_t));
	starpu_vector_data_register(&hin, STARPU_MAIN_RAM, (uintptr_t)in, 3, sizeof(int64_t));
	ASSERT_EQ(0, starpu_mpi_irecv_detached(hin, prev, 3, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_isend_detached(hout, next, 3, MPI_COMM_WORLD, nullptr, nullptr));
	ASSERT_EQ(0, starpu_mpi_wait_for_all(MPI_COMM_WORLD));
	starpu_data_unregister(hin);
	starpu_data_unregister(hout);
	std::vector<size_t> amounts(size, 99);
	starpu_mpi_comm_amounts_retrieve(amounts.data());
	for (int r = 0; r < size; r++)
		EXPECT_EQ(r == next ? 24u : 0u, amounts[r]) << "to rank " << r;
	int ret = -1;
	std::string err = stderr_of([&] { ret = starpu_mpi_shutdown(); });
	EXPECT_EQ(0, ret);
	EXPECT_TRUE(contains(err, "[starpu_comm_stats][" + std::to_string(rank) + "] TOTAL:\t24.000000 B\t")) << err;
	EXPECT_TRUE(contains(err, "[starpu_comm_stats][" + std::to_string(rank) + ":" + std::to_string(next) + "]\t24.000000 B\t")) << err;
	EXPECT_FALSE(contains(err, ":" + std::to_string(rank) + "]") && next != rank) << err;
}

// STARPU_MPI_CACHE=0 turns the cache off; a value that is not 0 or 1 is said and leaves it on.
TEST(MpiStats, CacheVariable)
{
	starpu_conf conf = conf_with_ncpus(1);
	{
		ScopedEnv cache("STARPU_MPI_CACHE", "0");
		ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf));
		EXPECT_EQ(0, starpu_mpi_cache_is_enabled());
		int64_t v = 0;
		starpu_data_handle_t h;
		starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&v, sizeof(v));
		starpu_mpi_data_register(h, 1, 0);
		starpu_mpi_get_data_on_node(MPI_COMM_WORLD, h, 1);
		EXPECT_EQ(0, starpu_mpi_cached_receive(h));
		EXPECT_EQ(0, starpu_mpi_cached_send(h, 1));
		starpu_data_unregister(h);
		EXPECT_EQ(0, starpu_mpi_shutdown());
	}
	ScopedEnv cache("STARPU_MPI_CACHE", "maybe");
	conf = conf_with_ncpus(1);
	int ret = -1;
	std::string err = stderr_of([&] { ret = starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf); });
	ASSERT_EQ(0, ret);
	EXPECT_TRUE(contains(err, "STARPU_MPI_CACHE='maybe' is not 0 or 1")) << err;
	EXPECT_EQ(1, starpu_mpi_cache_is_enabled());
	EXPECT_EQ(0, starpu_mpi_shutdown());
}

// Run alone in its own mpirun: starpu_mpi_init_conf() initialises and finalises MPI.
TEST(MpiInit, InitConfInitialisesAndFinalisesMpi)
{
	int initialized = 1, finalized = 0;
	MPI_Initialized(&initialized);
	MPI_Finalized(&finalized);
	if (finalized)
		GTEST_SKIP() << "MPI starts once per process: only the first repetition checks it";
	ASSERT_EQ(0, initialized);
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 1, MPI_COMM_WORLD, &conf));
	int provided = 0;
	MPI_Query_thread(&provided);
	EXPECT_EQ(MPI_THREAD_MULTIPLE, provided);
	EXPECT_GE(starpu_mpi_world_size(), 2);
	EXPECT_EQ(0, starpu_mpi_shutdown());
	MPI_Finalized(&finalized);
	EXPECT_EQ(1, finalized);
	EXPECT_FALSE(starpu_is_initialized());
}

// ------------------------------------------------------ the launcher's side

TEST(MpiRun, TwoRanks)
{
	run_ranks(2, "Mpi.*:MpiWatchdog.*:MpiErrors.*:MpiNotStarted.*:MpiStats.*");
}

TEST(MpiRun, FourRanks)
{
	run_ranks(4, "Mpi.*:MpiWatchdog.*:MpiErrors.*:MpiNotStarted.*:MpiStats.*");
}

TEST(MpiRun, InitConfInitialisesMpi)
{
	run_ranks(2, "MpiInit.*");
}

} // namespace

int main(int argc, char **argv)
{
	return mpi_test_main(argc, argv, "Mpi.*:MpiWatchdog.*:MpiErrors.*:MpiNotStarted.*:MpiStats.*", "MpiInit");
}
#else

TEST(MpiRun, NeedsMpi)
{
	GTEST_SKIP() << "built without MPI (configure found no Open MPI): install libopenmpi-dev and openmpi-bin, then configure again";
}

#endif
