/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A distributed 1-D heat stencil with StarPU-MPI: a ring of blocks, each
 * owned by one rank (contiguous ranges of blocks), new = l/4 + c/2 + r/4
 * element by element, the neighbours' edge values coming from the blocks
 * around. Every rank submits every step with starpu_mpi_task_insert(); a
 * step's task runs on the owner of the block it writes and the neighbour
 * blocks travel to it. A per-rank sum of the heat (STARPU_MPI_REDUX into a
 * variable owned by rank 0, starpu_mpi_redux_data()) is printed as a check
 * of the conservation of heat; rank 0 gathers the blocks and prints their
 * checksum, the same on any number of ranks.
 *
 *   mpirun -np 4 ./mpi_stencil [-nblocks 16] [-size 4096] [-iter 50]
 */
#include <starpu_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void stencil_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	const double *l = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
	const double *c = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
	const double *r = (const double *)STARPU_VECTOR_GET_PTR(buffers[2]);
	double *out = (double *)STARPU_VECTOR_GET_PTR(buffers[3]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[3]);
	for (unsigned i = 0; i < n; i++) {
		double left = i ? c[i - 1] : l[n - 1], right = i + 1 < n ? c[i + 1] : r[0];
		out[i] = 0.25 * left + 0.5 * c[i] + 0.25 * right;
	}
}

static struct starpu_codelet stencil_cl = {
	.cpu_funcs = { stencil_cpu },
	.nbuffers = 4,
	.modes = { STARPU_R, STARPU_R, STARPU_R, STARPU_W },
	.name = "stencil",
};

static void heat_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	const double *v = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	double sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	*(double *)STARPU_VARIABLE_GET_PTR(buffers[1]) += sum;
}

static struct starpu_codelet heat_cl = {
	.cpu_funcs = { heat_cpu },
	.nbuffers = 2,
	.modes = { STARPU_R, STARPU_RW | STARPU_COMMUTE },
	.name = "heat",
};

static void zero_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	*(double *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 0;
}

static struct starpu_codelet zero_cl = { .cpu_funcs = { zero_cpu }, .nbuffers = 1, .modes = { STARPU_W }, .name = "heat_zero" };

static void add_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	*(double *)STARPU_VARIABLE_GET_PTR(buffers[0]) += *(const double *)STARPU_VARIABLE_GET_PTR(buffers[1]);
}

static struct starpu_codelet add_cl = { .cpu_funcs = { add_cpu }, .nbuffers = 2, .modes = { STARPU_RW | STARPU_COMMUTE, STARPU_R }, .name = "heat_add" };

static unsigned option(int argc, char **argv, const char *name, unsigned value)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name)) {
			char *end;
			unsigned long v = strtoul(argv[i + 1], &end, 10);
			if (*end || v == 0 || v > 1u << 24) {
				fprintf(stderr, "%s: %s '%s' is not a count from 1 to %u\n", argv[0], name, argv[i + 1], 1u << 24);
				exit(2);
			}
			return (unsigned)v;
		}
	return value;
}

int main(int argc, char **argv)
{
	unsigned nb = option(argc, argv, "-nblocks", 16), bs = option(argc, argv, "-size", 4096), iter = option(argc, argv, "-iter", 50);
	int ret = starpu_mpi_init_conf(&argc, &argv, 1, MPI_COMM_WORLD, NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_mpi_init_conf");
	int rank, size;
	starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank);
	starpu_mpi_comm_size(MPI_COMM_WORLD, &size);

	/* Block b on rank b * size / nb; rank 0 keeps room for every block (it gathers them). */
	double *mem[2];
	starpu_data_handle_t *blocks[2];
	for (int g = 0; g < 2; g++) {
		mem[g] = calloc((size_t)nb * bs, sizeof(double));
		blocks[g] = calloc(nb, sizeof(starpu_data_handle_t));
		if (!mem[g] || !blocks[g]) {
			fprintf(stderr, "%s: out of memory\n", argv[0]);
			return 1;
		}
	}
	for (unsigned b = 0; b < nb; b++) {
		int owner = (int)((unsigned long)b * size / nb);
		for (unsigned i = 0; i < bs; i++) /* a hot spot in every eighth block */
			mem[0][(size_t)b * bs + i] = b % 8 == 0 ? 100.0 * (i % 5) : 1.0;
		for (int g = 0; g < 2; g++) {
			if (owner == rank || rank == 0)
				starpu_vector_data_register(&blocks[g][b], STARPU_MAIN_RAM, (uintptr_t)&mem[g][(size_t)b * bs], bs, sizeof(double));
			else
				starpu_vector_data_register(&blocks[g][b], -1, 0, bs, sizeof(double));
			starpu_mpi_data_register(blocks[g][b], (starpu_mpi_tag_t)g * nb + b, owner);
		}
	}
	double heat = 0;
	starpu_data_handle_t heat_h;
	starpu_variable_data_register(&heat_h, rank == 0 ? STARPU_MAIN_RAM : -1, rank == 0 ? (uintptr_t)&heat : 0, sizeof(heat));
	starpu_mpi_data_register(heat_h, 2 * (starpu_mpi_tag_t)nb, 0);
	starpu_data_set_reduction_methods(heat_h, &add_cl, &zero_cl);

	int cur = 0;
	for (unsigned s = 0; s < iter && !ret; s++) {
		for (unsigned b = 0; b < nb && !ret; b++)
			ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &stencil_cl, STARPU_R, blocks[cur][(b + nb - 1) % nb], STARPU_R, blocks[cur][b],
						     STARPU_R, blocks[cur][(b + 1) % nb], STARPU_W, blocks[1 - cur][b], 0);
		cur = 1 - cur;
	}
	/* The heat of each block, summed where the blocks are, then on rank 0. */
	for (unsigned b = 0; b < nb && !ret; b++)
		ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &heat_cl, STARPU_R, blocks[cur][b], STARPU_MPI_REDUX, heat_h,
					     STARPU_EXECUTE_ON_DATA, blocks[cur][b], 0);
	if (!ret)
		ret = starpu_mpi_redux_data(MPI_COMM_WORLD, heat_h);
	for (unsigned b = 0; b < nb; b++)
		starpu_mpi_get_data_on_node(MPI_COMM_WORLD, blocks[cur][b], 0);
	starpu_mpi_wait_for_all(MPI_COMM_WORLD);
	for (int g = 0; g < 2; g++)
		for (unsigned b = 0; b < nb; b++)
			starpu_data_unregister(blocks[g][b]);
	starpu_data_unregister(heat_h);
	if (ret)
		fprintf(stderr, "%s: a task could not be submitted: %s\n", argv[0], strerror(-ret));
	else if (rank == 0) {
		double sum = 0, initial = 0;
		for (size_t i = 0; i < (size_t)nb * bs; i++)
			sum += mem[cur][i] * (double)(1 + i % 13);
		for (unsigned b = 0; b < nb; b++)
			for (unsigned i = 0; i < bs; i++)
				initial += b % 8 == 0 ? 100.0 * (i % 5) : 1.0;
		printf("# %u blocks of %u, %u steps, %d ranks\n", nb, bs, iter, size);
		printf("heat %.6f (initially %.6f)\n", heat, initial);
		printf("checksum %a\n", sum);
	}
	for (int g = 0; g < 2; g++) {
		free(mem[g]);
		free(blocks[g]);
	}
	starpu_mpi_shutdown();
	return ret ? 1 : 0;
}
