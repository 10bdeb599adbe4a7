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
 *   smpirun -np 4 -platform <smpi-platform's file> -hostfile <its hosts> .libs/sim_smpi.so [rounds]
 */
#include <starpu.h>
#include <starpu_mpi.h>
#include <stdio.h>
#include <stdlib.h>

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

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	struct starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncuda = 0;
	conf.nopencl = 0;
	int ret = starpu_mpi_init_conf(&argc, &argv, 1, MPI_COMM_WORLD, &conf);
	if (ret) {
		fprintf(stderr, "starpu_mpi_init_conf: %d\n", ret);
		return 1;
	}
	int rank, size;
	starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank);
	starpu_mpi_comm_size(MPI_COMM_WORLD, &size);
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
	starpu_mpi_wait_for_all(MPI_COMM_WORLD);
	double end = starpu_timing_now();
	for (int r = 0; r < size; r++)
		starpu_data_unregister(v[r]);
	if (rank == 0)
		printf("ranks=%d\nmakespan_us=%.3f\n", size, end - start);
	free(mine);
	starpu_mpi_shutdown();
	return ret ? 1 : 0;
}
