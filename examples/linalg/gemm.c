/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tiled matrix product C = A B: one task per tile product C_ij += A_ik B_kj,
 * the products into one tile of C in order (dependencies from the data),
 * different tiles of C in parallel. -iter repeats it (C accumulates).
 *
 *   [sd]gemm [-size N] [-nblocks K] [-iter I] [-check]
 */
#include "linalg.h"

#include <cblas.h>
#include <stdio.h>
#include <string.h>

static int gemm_submit(struct linalg_tiles *a, struct linalg_tiles *b, struct linalg_tiles *c)
{
	const unsigned nb = c->nb;
	for (unsigned j = 0; j < nb; j++)
		for (unsigned i = 0; i < nb; i++)
			for (unsigned k = 0; k < nb; k++) {
				int ret = starpu_task_insert(&linalg_gemm_cl, STARPU_R, LINALG_TILE(a, i, k),
							     STARPU_R, LINALG_TILE(b, k, j), STARPU_RW, LINALG_TILE(c, i, j),
							     STARPU_FLOPS, LINALG_FLOPS_GEMM(c->bs), 0);
				if (ret)
					return ret;
			}
	return 0;
}

int main(int argc, char **argv)
{
	struct linalg_options opt = { .size = 2048, .nblocks = 8, .iter = 1 };
	int ret = linalg_start(argc, argv, &opt, LINALG_OPT_ITER);
	if (ret >= 0)
		return ret;

	const unsigned n = opt.size;
	real *a = linalg_matrix(n, linalg_fill_random, NULL), *b = linalg_alloc(n), *c = linalg_alloc(n);
	if (!a || !b || !c) {
		linalg_free(a);
		linalg_free(b);
		linalg_free(c);
		linalg_shutdown();
		return 1;
	}
	for (size_t e = 0; e < (size_t)n * n; e++)
		b[e] = a[(size_t)n * n - 1 - e] - (real)0.5;
	memset(c, 0, (size_t)n * n * sizeof(real));
	struct linalg_tiles ta, tb, tc;
	ret = linalg_tiles_register(&ta, a, n, opt.nblocks);
	ret = ret ? ret : linalg_tiles_register(&tb, b, n, opt.nblocks);
	ret = ret ? ret : linalg_tiles_register(&tc, c, n, opt.nblocks);
	STARPU_CHECK_RETURN_VALUE(ret, "linalg_tiles_register");

	double start = starpu_timing_now();
	for (unsigned it = 0; ret == 0 && it < opt.iter; it++)
		ret = gemm_submit(&ta, &tb, &tc);
	starpu_task_wait_for_all();
	double end = starpu_timing_now();
	linalg_tiles_unregister(&ta);
	linalg_tiles_unregister(&tb);
	linalg_tiles_unregister(&tc);
	linalg_shutdown();

	int status = linalg_submit_status(argv[0], ret);
	if (status == 0) {
		double timing = end - start, flop = 2.0 * n * n * n * opt.iter;
		printf("# x\ty\tz\tms\tGFlop/s\n");
		printf("%u\t%u\t%u\t%.0f\t%.1f\n", n, n, n, timing / 1000, flop / timing / 1000);
		if (opt.check) {
			real *ref = linalg_alloc(n);
			if (!ref)
				status = 1;
			else {
				CBLAS(gemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, (real)opt.iter, a, n, b, n, 0.0, ref, n);
				status = linalg_compare(c, ref, n, 'A');
				linalg_free(ref);
			}
		}
	}
	linalg_free(a);
	linalg_free(b);
	linalg_free(c);
	return status;
}
