/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * StarPU-MPI's start on the observation path (ASTRO_MOMENT_MPI_INIT), with
 * the offset of this rank's clock to rank 0's, so that the traces of several
 * ranks merge on one time base. Measured only when someone observes that
 * moment (a trace is recorded): each rank in turn does a few ping-pongs with
 * rank 0, which answers with its clock, and keeps the one with the shortest
 * round trip (the offset is rank 0's time minus the middle of the round
 * trip). Rank 0 talks to every rank once: O(ranks) messages at rank 0, none
 * between the others; besides, one reduction (does any rank trace?) and one
 * communicator duplicate.
 *
 * STARPU_MPI_TRACE_SYNC_CLOCKS=0 (StarPU's setting for its faster, less
 * precise alignment) replaces the exchange with one MPI barrier: every rank
 * takes its clock as it leaves it, and the ranks are taken to leave it at the
 * same time (rank 0's date is broadcast). If one rank asks for the barrier,
 * all use it (the same reduction says so), so that no rank waits for a
 * ping-pong the others skip.
 */
#include "mpi_private.h"

#include <astrolabe/env.h>
#include <astrolabe/observe.h>
#include <math.h>
#include <stdint.h>

#define ROUNDS 5

static int64_t measure_offset_ns(int rank, int size)
{
	MPI_Comm comm;
	if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
		_astro_mpi_error("warning: cannot duplicate MPI_COMM_WORLD to measure the clock offsets: the traces of the ranks are merged as if their clocks agreed");
		return 0;
	}
	int64_t offset = 0;
	if (rank == 0) {
		for (int peer = 1; peer < size; peer++)
			for (int k = 0; k < ROUNDS; k++) {
				char ping;
				MPI_Recv(&ping, 1, MPI_CHAR, peer, 0, comm, MPI_STATUS_IGNORE);
				double now = starpu_timing_now();
				MPI_Send(&now, 1, MPI_DOUBLE, peer, 1, comm);
			}
	} else {
		double best_rtt = INFINITY;
		for (int k = 0; k < ROUNDS; k++) {
			char ping = 0;
			double remote = 0, t0 = starpu_timing_now();
			MPI_Send(&ping, 1, MPI_CHAR, 0, 0, comm);
			MPI_Recv(&remote, 1, MPI_DOUBLE, 0, 1, comm, MPI_STATUS_IGNORE);
			double t1 = starpu_timing_now();
			if (t1 - t0 < best_rtt) {
				best_rtt = t1 - t0;
				offset = (int64_t)llround((remote - (t0 + t1) / 2) * 1000.0);
			}
		}
	}
	MPI_Comm_free(&comm);
	return offset;
}

/* One barrier, left by every rank at the same time as far as this method knows. */
static int64_t barrier_offset_ns(int rank)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double mine = starpu_timing_now(), root = mine;
	MPI_Bcast(&root, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	return rank == 0 ? 0 : (int64_t)llround((root - mine) * 1000.0);
}

void _astro_mpi_clock_report(void)
{
	/* Every rank measures if one traces (a rank may trace alone), by the barrier if one rank wants it:
	 * one reduction, O(log ranks). */
	int observed = ASTRO_OBSERVED(ASTRO_MOMENT_MPI_INIT);
	int mine[2] = { observed, observed && astro_env_int("STARPU_MPI_TRACE_SYNC_CLOCKS", 0, 1, 1, NULL) == 0 }, all[2] = { 0, 0 };
	if (MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS || !all[0])
		return;
	int rank = 0, size = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	bool synchronized = !all[1];
	int64_t offset = synchronized ? measure_offset_ns(rank, size) : barrier_offset_ns(rank);
	if (!observed)
		return;
	struct astro_event e = { .moment = ASTRO_MOMENT_MPI_INIT, .workerid = -1, .nimpl = (unsigned)rank, .bytes = (size_t)size,
				 .other_id = (unsigned long)offset, .src_node = synchronized };
	astro_observe_report(&e);
}
