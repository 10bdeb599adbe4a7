/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tiled LU factorization A = L U without pivoting (the matrix is diagonally
 * dominant, so LAPACK's partial pivoting does not pivot either and its getrf
 * is the reference), right-looking, dependencies inferred from the data.
 *
 *   [sd]lu_implicit [-size N] [-nblocks K] [-check] [-no-prio]
 */
#include "linalg.h"

#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lu_submit(struct linalg_tiles *t, int no_prio)
{
	const unsigned nb = t->nb, bs = t->bs;
	int ret;

	for (unsigned k = 0; k < nb; k++) {
		ret = starpu_task_insert(&linalg_getrf_cl, STARPU_PRIORITY, linalg_priority(t, k, 0, no_prio),
					 STARPU_RW, LINALG_TILE(t, k, k), STARPU_FLOPS, LINALG_FLOPS_GETRF(bs), 0);
		if (ret)
			return ret;
		for (unsigned i = k + 1; i < nb; i++) {
			/* U's row k, then L's column k */
			ret = starpu_task_insert(&linalg_trsm_llu_cl, STARPU_PRIORITY, linalg_priority(t, k, i - k, no_prio),
						 STARPU_R, LINALG_TILE(t, k, k), STARPU_RW, LINALG_TILE(t, k, i),
						 STARPU_FLOPS, LINALG_FLOPS_TRSM(bs), 0);
			if (ret)
				return ret;
			ret = starpu_task_insert(&linalg_trsm_run_cl, STARPU_PRIORITY, linalg_priority(t, k, i - k, no_prio),
						 STARPU_R, LINALG_TILE(t, k, k), STARPU_RW, LINALG_TILE(t, i, k),
						 STARPU_FLOPS, LINALG_FLOPS_TRSM(bs), 0);
			if (ret)
				return ret;
		}
		for (unsigned j = k + 1; j < nb; j++)
			for (unsigned i = k + 1; i < nb; i++) {
				ret = starpu_task_insert(&linalg_gemm_sub_cl,
							 STARPU_PRIORITY, linalg_priority(t, k, (i - k) + (j - k), no_prio),
							 STARPU_R, LINALG_TILE(t, i, k), STARPU_R, LINALG_TILE(t, k, j),
							 STARPU_RW, LINALG_TILE(t, i, j), STARPU_FLOPS, LINALG_FLOPS_GEMM(bs), 0);
				if (ret)
					return ret;
			}
	}
	return 0;
}

/* LAPACK's getrf on ref; 0 when it did not pivot (else the comparison would be meaningless). */
static int lu_reference(real *ref, unsigned n)
{
	lapack_int *ipiv = malloc(n * sizeof(*ipiv));
	int ret = ipiv ? (int)LAPACK(getrf)(LAPACK_COL_MAJOR, n, n, ref, n, ipiv) : -1;
	for (unsigned i = 0; ret == 0 && i < n; i++)
		if (ipiv[i] != (lapack_int)i + 1) {
			printf("result WRONG (LAPACK's getrf swapped rows %u and %d: the matrix is not diagonally dominant)\n", i + 1,
			       (int)ipiv[i]);
			ret = -1;
		}
	free(ipiv);
	return ret;
}

int main(int argc, char **argv)
{
	struct linalg_options opt = { .size = 2048, .nblocks = 8, .iter = 1 };
	int ret = linalg_start(argc, argv, &opt, LINALG_OPT_PRIO);
	if (ret >= 0)
		return ret;

	const unsigned n = opt.size;
	real *ref = NULL, *a = linalg_matrix(n, linalg_fill_dominant, opt.check ? &ref : NULL);
	if (!a) {
		starpu_shutdown();
		return 1;
	}
	double elapsed = linalg_run(a, &opt, lu_submit, &ret);
	int status = linalg_submit_status(argv[0], ret);
	if (status == 0) {
		linalg_report(n, elapsed, 2.0 * n * n * n / 3.0);
		if (ref)
			status = lu_reference(ref, n) ? 1 : linalg_compare(a, ref, n, 'A');
	}
	linalg_free(ref);
	linalg_free(a);
	return status;
}
