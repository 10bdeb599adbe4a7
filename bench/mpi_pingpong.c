/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * StarPU-MPI's message latency and bandwidth against a raw MPI ping-pong in
 * the same run (issue 24's goals: at most 1.5x the raw latency for small
 * messages, at least 90% of the raw bandwidth for large ones).
 *
 *   mpirun -np 2 ./mpi_pingpong [-r REPS] [-n ROUNDS] [-b BYTES]
 *
 * -b measures one message size only (8 and 4 MiB by default): -b 8 under
 * callgrind counts the small message's path alone.
 *
 * Rank 0 prints, per message size, the one-way time (half a round trip) of
 * MPI_Send/MPI_Recv and of starpu_mpi_send/starpu_mpi_recv on a vector
 * handle, and the bandwidth for the large size.
 */
#include "bench.h"
#include <starpu_mpi.h>

static void raw_round(int rank, char *buf, int bytes)
{
	if (rank == 0) {
		MPI_Send(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
		MPI_Recv(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
	}
}

static void runtime_round(int rank, starpu_data_handle_t h)
{
	if (rank == 0) {
		starpu_mpi_send(h, 1, 2, MPI_COMM_WORLD);
		starpu_mpi_recv(h, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		starpu_mpi_recv(h, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		starpu_mpi_send(h, 0, 2, MPI_COMM_WORLD);
	}
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 0, 5, 'b', " [-b BYTES] (-n: round trips per repetition; default 2000 small, 20 large; -b: one message size only, default 8 and 4 MiB)");
	int only = o.extra ? (int)bench_parse_long("message size (-b)", o.extra, 1) : 0;
	if (starpu_mpi_init_conf(&argc, &argv, 1, MPI_COMM_WORLD, NULL))
		bench_die("starpu_mpi_init_conf failed");
	int rank = starpu_mpi_world_rank(), size = starpu_mpi_world_size();
	if (size != 2)
		bench_die("run with mpirun -np 2 (%d ranks here)", size);
	const int sizes[] = { 8, 4 << 20 };
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int bytes = only ? only : sizes[s];
		if (only && s > 0)
			break;
		long rounds = o.ntasks > 0 ? o.ntasks : (bytes < 65536 ? 2000 : 20);
		char *buf = calloc(bytes, 1);
		starpu_data_handle_t h;
		starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)buf, bytes, 1);
		double raw[BENCH_MAX_SAMPLES], rt[BENCH_MAX_SAMPLES];
		for (int r = -1; r < o.reps; r++) { /* r = -1: warm-up */
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = bench_now_us();
			for (long i = 0; i < rounds; i++)
				raw_round(rank, buf, bytes);
			double t1 = bench_now_us();
			starpu_mpi_barrier(MPI_COMM_WORLD);
			double t2 = bench_now_us();
			for (long i = 0; i < rounds; i++)
				runtime_round(rank, h);
			double t3 = bench_now_us();
			if (r >= 0) {
				raw[r] = (t1 - t0) / rounds / 2;
				rt[r] = (t3 - t2) / rounds / 2;
			}
		}
		starpu_data_unregister(h);
		free(buf);
		if (rank != 0)
			continue;
		char metric[64];
		snprintf(metric, sizeof(metric), "mpi.raw.%dB", bytes);
		bench_report(metric, "us/msg", raw, o.reps);
		snprintf(metric, sizeof(metric), "mpi.starpu.%dB", bytes);
		bench_report(metric, "us/msg", rt, o.reps);
		printf("# %d B: StarPU-MPI / raw MPI one-way time: %.2f\n", bytes, bench_median(rt, o.reps) / bench_median(raw, o.reps));
		if (bytes >= 65536)
			printf("# %d B: bandwidth raw %.0f MB/s, StarPU-MPI %.0f MB/s (%.0f%%)\n", bytes, bytes / bench_median(raw, o.reps),
			       bytes / bench_median(rt, o.reps), 100 * bench_median(raw, o.reps) / bench_median(rt, o.reps));
	}
	starpu_mpi_shutdown();
	return 0;
}
