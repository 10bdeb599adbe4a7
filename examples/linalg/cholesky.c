/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tiled Cholesky factorization A = L L^T of a symmetric positive definite
 * matrix, right-looking, one task per tile kernel (potrf, trsm, syrk, gemm).
 *
 * cholesky_implicit: the runtime infers every dependency from the tiles each
 * task reads and writes (linalg_cholesky_submit).
 * cholesky_tag (built with -DCHOLESKY_TAG): the data carry no dependency
 * (sequential consistency off); each task has a tag and declares the tags of
 * the tasks it waits for.
 *
 *   [sd]cholesky_implicit [-size N] [-nblocks K] [-check] [-no-prio]
 */
#include "linalg.h"

#include <lapacke.h>
#include <stdio.h>
#include <string.h>

#ifdef CHOLESKY_TAG
enum { POTRF = 1, TRSM, SYRK, GEMM };

/* The task that updated tile (i, j), i >= j, at step k - 1 (k > 0). */
static starpu_tag_t updated(unsigned k, unsigned i, unsigned j)
{
	return i == j ? linalg_tag(SYRK, k - 1, i, i) : linalg_tag(GEMM, k - 1, i, j);
}

static int cholesky_submit(struct linalg_tiles *t, int no_prio)
{
	const unsigned nb = t->nb, bs = t->bs;
	starpu_tag_t deps[3];
	int ret;

	linalg_tiles_ordered_by_tags(t); /* only the tags order the tasks */

	for (unsigned k = 0; k < nb; k++) {
		deps[0] = k ? updated(k, k, k) : 0;
		ret = linalg_submit_tagged(&linalg_potrf_cl, linalg_tag(POTRF, k, k, k), linalg_priority(t, k, 0, no_prio),
				    LINALG_FLOPS_POTRF(bs), k ? 1 : 0, deps, LINALG_TILE(t, k, k), NULL, NULL);
		if (ret)
			return ret;
		for (unsigned i = k + 1; i < nb; i++) {
			deps[0] = linalg_tag(POTRF, k, k, k);
			deps[1] = k ? updated(k, i, k) : 0;
			ret = linalg_submit_tagged(&linalg_trsm_rlt_cl, linalg_tag(TRSM, k, i, k), linalg_priority(t, k, i - k, no_prio),
					    LINALG_FLOPS_TRSM(bs), k ? 2 : 1, deps, LINALG_TILE(t, k, k), LINALG_TILE(t, i, k), NULL);
			if (ret)
				return ret;
		}
		for (unsigned i = k + 1; i < nb; i++) {
			deps[0] = linalg_tag(TRSM, k, i, k);
			deps[1] = k ? updated(k, i, i) : 0;
			ret = linalg_submit_tagged(&linalg_syrk_cl, linalg_tag(SYRK, k, i, i), linalg_priority(t, k, 2 * (i - k), no_prio),
					    LINALG_FLOPS_SYRK(bs), k ? 2 : 1, deps, LINALG_TILE(t, i, k), LINALG_TILE(t, i, i), NULL);
			if (ret)
				return ret;
			for (unsigned j = k + 1; j < i; j++) {
				deps[0] = linalg_tag(TRSM, k, i, k);
				deps[1] = linalg_tag(TRSM, k, j, k);
				deps[2] = k ? updated(k, i, j) : 0;
				ret = linalg_submit_tagged(&linalg_gemm_nt_cl, linalg_tag(GEMM, k, i, j),
						    linalg_priority(t, k, (i - k) + (j - k), no_prio), LINALG_FLOPS_GEMM(bs),
						    k ? 3 : 2, deps, LINALG_TILE(t, i, k), LINALG_TILE(t, j, k), LINALG_TILE(t, i, j));
				if (ret)
					return ret;
			}
		}
	}
	return starpu_tag_wait(linalg_tag(POTRF, nb - 1, nb - 1, nb - 1));
}
#else
static int cholesky_submit(struct linalg_tiles *t, int no_prio)
{
	return linalg_cholesky_submit(t, no_prio, NULL);
}
#endif

int main(int argc, char **argv)
{
	struct linalg_options opt = { .size = 2048, .nblocks = 8, .iter = 1 };
	int ret = linalg_start(argc, argv, &opt, LINALG_OPT_PRIO);
	if (ret >= 0)
		return ret;

	const unsigned n = opt.size;
	real *ref = NULL, *a = linalg_matrix(n, linalg_fill_spd, opt.check ? &ref : NULL);
	if (!a) {
		linalg_shutdown();
		return 1;
	}
	double elapsed = linalg_run(a, &opt, cholesky_submit, &ret);
	int status = linalg_submit_status(argv[0], ret);
	if (status == 0) {
		linalg_report(n, elapsed, (double)n * n * n / 3.0);
		if (ref) {
			LAPACK(potrf)(LAPACK_COL_MAJOR, 'L', n, ref, n);
			status = linalg_compare(a, ref, n, 'L');
		}
	}
	linalg_free(ref);
	linalg_free(a);
	return status;
}
