/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A StarPU-MPI program run by SimGrid's smpirun in a simulation build
 * (tests/test_simgrid.cc, SMPI): every rank owns one vector; a chain of tasks
 * goes round the ranks, each task on the rank that owns the vector it
 * writes and reading the previous rank's, so every step is a message
 * between simulated nodes and a task of 1000 us on the owner's simulated
 * CPU. Rank 0 prints the virtual makespan, "makespan_us=...", and
 * "ranks=N".
 *
 * With "mpi" after the rounds, the program also calls MPI itself, beside
 * StarPU-MPI: it starts and ends MPI (MPI_Init_thread, MPI_Finalize), meets
 * the others (MPI_Barrier) and, while the chain's messages are in flight,
 * asks its rank (MPI_Comm_rank), sums the ranks (MPI_Allreduce), takes rank
 * 0's value (MPI_Bcast) and passes its rank round a ring (MPI_Sendrecv). Rank 0 prints "mpi_calls=ok" when
 * every rank got the right values, and "allreduce=...".
 *
 *   smpirun -np 4 -platform <smpi-platform's file> -hostfile <its hosts> .libs/sim_smpi.so [rounds [mpi]]
 */
#include <starpu.h>
#include <starpu_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Never called in a simulation: the task lasts what the model says. */
static void step_cpu(void *buffers[], void *arg)
{
	(void)buffers, (void)arg, abort();
}

/* 1000 us on any worker. */
static double step_length(struct starpu_task *task, unsigned nimpl)
{
	return (void)task, (void)nimpl, 1000.0;
}

static struct starpu_perfmodel model = { .type = STARPU_COMMON, .cost_function = step_length, .symbol = "sim_smpi_step" };

static struct starpu_codelet step = {
	.cpu_funcs = { step_cpu },
	.nbuffers = 2,
	.modes = { STARPU_R, STARPU_RW },
	.model = &model,
	.name = "smpi_step",
};

/* The program's own collectives, made while StarPU-MPI's messages are in flight: whether every
 * rank got the right values (said on stderr when not); *sum: the ranks' sum plus their number. */
static int own_calls(int rank, int size, int *sum)
{
	int mine = rank + 1, root = rank == 0 ? 42 : -1, left = -1, local = -1;
	/* A local call, SMPI's own: the same rank as StarPU-MPI's. */
	int ok = MPI_Comm_rank(MPI_COMM_WORLD, &local) == MPI_SUCCESS && local == rank;
	ok = MPI_Allreduce(&mine, sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && *sum == size * (size + 1) / 2 && ok;
	ok = MPI_Bcast(&root, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS && root == 42 && ok;
	ok = MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &left, 1, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD,
			  MPI_STATUS_IGNORE) == MPI_SUCCESS &&
	     left == (rank + size - 1) % size && ok;
	if (!ok)
		fprintf(stderr, "rank %d: MPI_Comm_rank gave %d, MPI_Allreduce %d (not %d), MPI_Bcast %d (not 42), MPI_Sendrecv %d (not %d)\n",
			rank, local, *sum, size * (size + 1) / 2, root, left, (rank + size - 1) % size);
	int all = 0;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	return all;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	int own_mpi = argc > 2 && strcmp(argv[2], "mpi") == 0, provided = 0;
	if (own_mpi && MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
		fprintf(stderr, "MPI_Init_thread failed\n");
		return 1;
	}
	struct starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncuda = 0;
	conf.nopencl = 0;
	int ret = starpu_mpi_init_conf(&argc, &argv, !own_mpi, MPI_COMM_WORLD, &conf);
	if (ret) {
		fprintf(stderr, "starpu_mpi_init_conf: %d\n", ret);
		return 1;
	}
	int rank, size;
	starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank);
	starpu_mpi_comm_size(MPI_COMM_WORLD, &size);
	if (own_mpi)
		MPI_Barrier(MPI_COMM_WORLD);
	/* 1 MB per vector: each step sends one between two nodes. */
	enum { N = 1 << 17 };
	double *mine = calloc(N, sizeof(double));
	starpu_data_handle_t v[size];
	for (int r = 0; r < size; r++) {
		if (r == rank)
			starpu_vector_data_register(&v[r], STARPU_MAIN_RAM, (uintptr_t)mine, N, sizeof(double));
		else
			starpu_vector_data_register(&v[r], -1, 0, N, sizeof(double));
		starpu_mpi_data_register(v[r], r, r);
	}
	starpu_mpi_barrier(MPI_COMM_WORLD);
	double start = starpu_timing_now();
	for (int i = 1; i <= rounds * size && !ret; i++)
		ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &step, STARPU_R, v[(i - 1) % size], STARPU_RW, v[i % size], 0);
	int sum = 0, own_ok = own_mpi ? own_calls(rank, size, &sum) : 1;
	starpu_mpi_wait_for_all(MPI_COMM_WORLD);
	double end = starpu_timing_now();
	for (int r = 0; r < size; r++)
		starpu_data_unregister(v[r]);
	if (rank == 0)
		printf("ranks=%d\nmakespan_us=%.3f\n", size, end - start);
	if (rank == 0 && own_mpi && own_ok)
		printf("mpi_calls=ok\nallreduce=%d\n", sum);
	free(mine);
	starpu_mpi_shutdown();
	if (own_mpi) {
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Finalize();
	}
	return ret || !own_ok ? 1 : 0;
}
