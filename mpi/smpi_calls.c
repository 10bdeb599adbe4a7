/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program's own MPI calls under SimGrid's SMPI, in the archive an SMPI
 * program links (libstarpumpi_smpi.la; never in libstarpumpi-1.4).
 *
 * SMPI delivers what is sent to a rank to the rank's first actor, and keeps
 * MPI's state (initialised, finalised) per actor, while the program's main()
 * runs in an actor of its own (kernel/common/simgrid_actors.c). So the MPI
 * functions that exchange messages, or start, stop or ask about MPI, are
 * defined here, in the program itself, and hand the call to the rank's actor
 * (astro_sim_rank_call), which makes it through SMPI's PMPI_ entry points
 * (MPI's profiling interface, which SMPI's mpi.h declares for such
 * interposers, its MPI_ functions being weak). StarPU-MPI's own calls, made
 * on that actor, go straight through. They are protected symbols (the
 * header's declarations cannot say so, hence the assembler's directive): the
 * link of the module binds the program's calls to them, whatever the order in
 * which smpirun's loader would find libsimgrid's. Local calls (ranks, sizes, datatypes,
 * MPI_Wtime) stay SMPI's own.
 *
 * A blocking call holds the rank's actor, and so StarPU-MPI's progression,
 * until it returns (as a program's call would hold an MPI that serialises
 * its threads): all ranks make their collectives in the same order, and a
 * program does not block in MPI on a message that only StarPU-MPI would
 * post meanwhile.
 */
#include "mpi_private.h"

/* A call handed over: the addresses of its arguments (in the caller's frame, which waits for it) and its result. */
struct forwarded
{
	void *const *args;
	int ret;
};

/* Parameters as (type, name) pairs: the type, the name, and what each list of them becomes. */
#define TYPE_OF(t, n) t
#define NAME_OF(t, n) n
#define PARAM(i, p) TYPE_OF p NAME_OF p
#define ADDRESS(i, p) (void *)&NAME_OF p
#define ARGUMENT(i, p) *(TYPE_OF p *)f->args[i]

#define EACH_1(F, a) F(0, a)
#define EACH_2(F, a, b) EACH_1(F, a), F(1, b)
#define EACH_3(F, a, b, c) EACH_2(F, a, b), F(2, c)
#define EACH_4(F, a, b, c, d) EACH_3(F, a, b, c), F(3, d)
#define EACH_5(F, a, b, c, d, e) EACH_4(F, a, b, c, d), F(4, e)
#define EACH_6(F, a, b, c, d, e, g) EACH_5(F, a, b, c, d, e), F(5, g)
#define EACH_7(F, a, b, c, d, e, g, h) EACH_6(F, a, b, c, d, e, g), F(6, h)
#define EACH_8(F, a, b, c, d, e, g, h, i) EACH_7(F, a, b, c, d, e, g, h), F(7, i)
#define EACH_9(F, a, b, c, d, e, g, h, i, j) EACH_8(F, a, b, c, d, e, g, h, i), F(8, j)
#define EACH_10(F, a, b, c, d, e, g, h, i, j, k) EACH_9(F, a, b, c, d, e, g, h, i, j), F(9, k)
#define EACH_11(F, a, b, c, d, e, g, h, i, j, k, l) EACH_10(F, a, b, c, d, e, g, h, i, j, k), F(10, l)
#define EACH_12(F, a, b, c, d, e, g, h, i, j, k, l, m) EACH_11(F, a, b, c, d, e, g, h, i, j, k, l), F(11, m)
#define COUNT(...) COUNT_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define COUNT_(a, b, c, d, e, g, h, i, j, k, l, m, n, ...) n
#define EACH_N(n) EACH_##n
#define EACH_OF(n) EACH_N(n)
#define EACH(F, ...) EACH_OF(COUNT(__VA_ARGS__))(F, __VA_ARGS__)

/* MPI_name(type1 name1, ...), made by the rank's actor as PMPI_name(name1, ...). */
#define FORWARD(name, ...)                                                      \
	static void name##_on_rank(void *arg)                                   \
	{                                                                       \
		struct forwarded *f = arg;                                      \
		f->ret = P##name(EACH(ARGUMENT, __VA_ARGS__));                  \
	}                                                                       \
	__asm__(".protected " #name);                                           \
	int name(EACH(PARAM, __VA_ARGS__))                                      \
	{                                                                       \
		void *const args[] = { EACH(ADDRESS, __VA_ARGS__) };            \
		struct forwarded f = { args, MPI_ERR_OTHER };                   \
		astro_sim_rank_call(name##_on_rank, &f);                        \
		return f.ret;                                                   \
	}

#define BUF (void *, buf)
#define SENDBUF (const void *, sendbuf)
#define RECVBUF (void *, recvbuf)
#define COUNT_ARG (int, count)
#define TYPE (MPI_Datatype, datatype)
#define SENDTYPE (MPI_Datatype, sendtype)
#define RECVTYPE (MPI_Datatype, recvtype)
#define SENDCOUNT (int, sendcount)
#define RECVCOUNT (int, recvcount)
#define OP (MPI_Op, op)
#define ROOT (int, root)
#define COMM (MPI_Comm, comm)
#define TAG (int, tag)
#define STATUS (MPI_Status *, status)
#define REQUEST (MPI_Request *, request)

/* Starting, stopping and asking about MPI: the rank's actor's state. */
FORWARD(MPI_Init, (int *, argc), (char ***, argv))
FORWARD(MPI_Init_thread, (int *, argc), (char ***, argv), (int, required), (int *, provided))
FORWARD(MPI_Initialized, (int *, flag))
FORWARD(MPI_Finalized, (int *, flag))
FORWARD(MPI_Query_thread, (int *, provided))

static void finalize_on_rank(void *arg)
{
	*(int *)arg = PMPI_Finalize();
}

__asm__(".protected MPI_Finalize");
int MPI_Finalize(void)
{
	int ret = MPI_ERR_OTHER;
	astro_sim_rank_call(finalize_on_rank, &ret);
	return ret;
}

/* Collectives. */
FORWARD(MPI_Barrier, COMM)
FORWARD(MPI_Ibarrier, COMM, REQUEST)
FORWARD(MPI_Bcast, BUF, COUNT_ARG, TYPE, ROOT, COMM)
FORWARD(MPI_Ibcast, BUF, COUNT_ARG, TYPE, ROOT, COMM, REQUEST)
FORWARD(MPI_Reduce, SENDBUF, RECVBUF, COUNT_ARG, TYPE, OP, ROOT, COMM)
FORWARD(MPI_Allreduce, SENDBUF, RECVBUF, COUNT_ARG, TYPE, OP, COMM)
FORWARD(MPI_Iallreduce, SENDBUF, RECVBUF, COUNT_ARG, TYPE, OP, COMM, REQUEST)
FORWARD(MPI_Scan, SENDBUF, RECVBUF, COUNT_ARG, TYPE, OP, COMM)
FORWARD(MPI_Gather, SENDBUF, SENDCOUNT, SENDTYPE, RECVBUF, RECVCOUNT, RECVTYPE, ROOT, COMM)
FORWARD(MPI_Gatherv, SENDBUF, SENDCOUNT, SENDTYPE, RECVBUF, (const int *, recvcounts), (const int *, displs), RECVTYPE, ROOT, COMM)
FORWARD(MPI_Allgather, SENDBUF, SENDCOUNT, SENDTYPE, RECVBUF, RECVCOUNT, RECVTYPE, COMM)
FORWARD(MPI_Allgatherv, SENDBUF, SENDCOUNT, SENDTYPE, RECVBUF, (const int *, recvcounts), (const int *, displs), RECVTYPE, COMM)
FORWARD(MPI_Scatter, SENDBUF, SENDCOUNT, SENDTYPE, RECVBUF, RECVCOUNT, RECVTYPE, ROOT, COMM)
FORWARD(MPI_Scatterv, SENDBUF, (const int *, sendcounts), (const int *, displs), SENDTYPE, RECVBUF, RECVCOUNT, RECVTYPE, ROOT, COMM)
FORWARD(MPI_Alltoall, SENDBUF, SENDCOUNT, SENDTYPE, RECVBUF, RECVCOUNT, RECVTYPE, COMM)
FORWARD(MPI_Alltoallv, SENDBUF, (const int *, sendcounts), (const int *, senddisps), SENDTYPE, RECVBUF, (const int *, recvcounts),
	(const int *, recvdisps), RECVTYPE, COMM)

/* Point to point, and the requests' completion. */
FORWARD(MPI_Send, (const void *, buf), COUNT_ARG, TYPE, (int, dst), TAG, COMM)
FORWARD(MPI_Ssend, (const void *, buf), COUNT_ARG, TYPE, (int, dst), TAG, COMM)
FORWARD(MPI_Recv, BUF, COUNT_ARG, TYPE, (int, src), TAG, COMM, STATUS)
FORWARD(MPI_Sendrecv, SENDBUF, SENDCOUNT, SENDTYPE, (int, dst), (int, sendtag), RECVBUF, RECVCOUNT, RECVTYPE, (int, src), (int, recvtag), COMM,
	STATUS)
FORWARD(MPI_Isend, (const void *, buf), COUNT_ARG, TYPE, (int, dst), TAG, COMM, REQUEST)
FORWARD(MPI_Irecv, BUF, COUNT_ARG, TYPE, (int, src), TAG, COMM, REQUEST)
FORWARD(MPI_Wait, REQUEST, STATUS)
FORWARD(MPI_Waitall, COUNT_ARG, (MPI_Request *, requests), (MPI_Status *, statuses))
FORWARD(MPI_Test, REQUEST, (int *, flag), STATUS)
FORWARD(MPI_Testall, COUNT_ARG, (MPI_Request *, requests), (int *, flag), (MPI_Status *, statuses))
FORWARD(MPI_Probe, (int, src), TAG, COMM, STATUS)
FORWARD(MPI_Iprobe, (int, src), TAG, COMM, (int *, flag), STATUS)

/* Communicators, which all their ranks make or free together. */
FORWARD(MPI_Comm_dup, COMM, (MPI_Comm *, newcomm))
FORWARD(MPI_Comm_split, COMM, (int, color), (int, key), (MPI_Comm *, newcomm))
FORWARD(MPI_Comm_free, (MPI_Comm *, comm))
