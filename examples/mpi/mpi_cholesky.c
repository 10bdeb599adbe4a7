/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A distributed tiled Cholesky factorization with StarPU-MPI: the tiles of
 * the lower triangle are spread over the ranks in 2-D block-cyclic order
 * (a p x q grid of ranks), every rank submits the whole task graph with
 * starpu_mpi_task_insert(), and each task runs where the tile it writes
 * lives, the tiles it reads travelling there. Rank 0 then gathers L,
 * prints its checksum (the same on any number of ranks: each tile sees the
 * same operations in the same order) and, with -check, compares it with
 * LAPACK's. The tile kernels are the linear-algebra examples' (linalg/).
 *
 *   mpirun -np 4 ./mpi_cholesky -size 1024 -nblocks 8 [-check] [-no-prio]
 */
#include "../linalg/linalg.h"

#include <lapacke.h>
#include <starpu_mpi.h>
#include <stdio.h>

/* The p x q grid of ranks, p the largest divisor of size not above its square root. */
static void grid(int size, int *p, int *q)
{
	*p = 1;
	for (int d = 1; d * d <= size; d++)
		if (size % d == 0)
			*p = d;
	*q = size / *p;
}

static int owner(unsigned i, unsigned j, int p, int q)
{
	return (int)(i % (unsigned)p) * q + (int)(j % (unsigned)q);
}

static int submit(starpu_data_handle_t *tiles, unsigned nb, unsigned bs, int no_prio)
{
	struct linalg_tiles t = { .n = nb * bs, .nb = nb, .bs = bs, .handles = tiles };
	int ret = 0;
	for (unsigned k = 0; k < nb && !ret; k++) {
		ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &linalg_potrf_cl, STARPU_PRIORITY, linalg_priority(&t, k, 0, no_prio),
					     STARPU_RW, LINALG_TILE(&t, k, k), STARPU_FLOPS, LINALG_FLOPS_POTRF(bs), 0);
		for (unsigned i = k + 1; i < nb && !ret; i++)
			ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &linalg_trsm_rlt_cl, STARPU_PRIORITY, linalg_priority(&t, k, i - k, no_prio),
						     STARPU_R, LINALG_TILE(&t, k, k), STARPU_RW, LINALG_TILE(&t, i, k),
						     STARPU_FLOPS, LINALG_FLOPS_TRSM(bs), 0);
		for (unsigned i = k + 1; i < nb && !ret; i++) {
			ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &linalg_syrk_cl, STARPU_PRIORITY, linalg_priority(&t, k, 2 * (i - k), no_prio),
						     STARPU_R, LINALG_TILE(&t, i, k), STARPU_RW, LINALG_TILE(&t, i, i),
						     STARPU_FLOPS, LINALG_FLOPS_SYRK(bs), 0);
			for (unsigned j = k + 1; j < i && !ret; j++)
				ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &linalg_gemm_nt_cl,
							     STARPU_PRIORITY, linalg_priority(&t, k, (i - k) + (j - k), no_prio),
							     STARPU_R, LINALG_TILE(&t, i, k), STARPU_R, LINALG_TILE(&t, j, k),
							     STARPU_RW, LINALG_TILE(&t, i, j), STARPU_FLOPS, LINALG_FLOPS_GEMM(bs), 0);
		}
		/* What this step read elsewhere is not needed any more: the cache forgets it. */
		for (unsigned i = k; i < nb; i++)
			starpu_mpi_cache_flush(MPI_COMM_WORLD, LINALG_TILE(&t, i, k));
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct linalg_options opt = { .size = 1024, .nblocks = 8, .iter = 1 };
	int ret = linalg_parse_options(argc, argv, &opt, LINALG_OPT_PRIO);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (opt.size % opt.nblocks) {
		fprintf(stderr, "%s: -size %u is not a multiple of -nblocks %u\n", argv[0], opt.size, opt.nblocks);
		return 2;
	}
	ret = linalg_init();
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	ret = starpu_mpi_init(&argc, &argv, 1);
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_mpi_init");
	int rank, size, p, q;
	starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank);
	starpu_mpi_comm_size(MPI_COMM_WORLD, &size);
	grid(size, &p, &q);

	/* Every rank makes the same matrix; rank 0 keeps all of it (it gathers L there), the others their tiles. */
	const unsigned n = opt.size, nb = opt.nblocks, bs = n / nb;
	real *ref = NULL, *a = linalg_matrix(n, linalg_fill_spd, rank == 0 && opt.check ? &ref : NULL);
	starpu_data_handle_t *tiles = calloc((size_t)nb * nb, sizeof(*tiles));
	if (!a || !tiles) {
		starpu_mpi_shutdown();
		starpu_shutdown();
		return 1;
	}
	for (unsigned j = 0; j < nb; j++)
		for (unsigned i = j; i < nb; i++) {
			int mine = owner(i, j, p, q) == rank || rank == 0;
			starpu_data_handle_t *h = &tiles[(size_t)j * nb + i];
			if (mine)
				starpu_matrix_data_register(h, STARPU_MAIN_RAM, (uintptr_t)&a[(size_t)j * bs * n + i * bs], n, bs, bs, sizeof(real));
			else
				starpu_matrix_data_register(h, -1, 0, bs, bs, bs, sizeof(real));
			starpu_mpi_data_register(*h, (starpu_mpi_tag_t)j * nb + i, owner(i, j, p, q));
		}

	starpu_mpi_barrier(MPI_COMM_WORLD);
	double start = starpu_timing_now();
	ret = submit(tiles, nb, bs, opt.no_prio);
	starpu_mpi_wait_for_all(MPI_COMM_WORLD);
	double elapsed = starpu_timing_now() - start;
	int status = linalg_submit_status(argv[0], ret);

	/* L to rank 0. */
	for (unsigned j = 0; j < nb; j++)
		for (unsigned i = j; i < nb; i++)
			starpu_mpi_get_data_on_node(MPI_COMM_WORLD, tiles[(size_t)j * nb + i], 0);
	starpu_mpi_wait_for_all(MPI_COMM_WORLD);
	for (size_t h = 0; h < (size_t)nb * nb; h++)
		if (tiles[h])
			starpu_data_unregister(tiles[h]);
	if (rank == 0 && status == 0) {
		printf("# %d ranks on a %d x %d grid\n", size, p, q);
		linalg_report(n, elapsed, (double)n * n * n / 3.0);
		double sum = 0;
		for (unsigned j = 0; j < n; j++)
			for (unsigned i = j; i < n; i++)
				sum += a[(size_t)j * n + i] * (1 + (i + 2 * j) % 7);
		printf("checksum %a\n", sum);
		if (ref) {
			LAPACK(potrf)(LAPACK_COL_MAJOR, 'L', n, ref, n);
			status = linalg_compare(a, ref, n, 'L');
		}
	}
	free(tiles);
	linalg_free(ref);
	linalg_free(a);
	starpu_mpi_shutdown();
	starpu_shutdown();
	return status;
}
