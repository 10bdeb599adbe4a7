/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tiled LU factorization A = L U without pivoting (the matrix is diagonally
 * dominant, so LAPACK's partial pivoting does not pivot either and its getrf
 * is the reference), right-looking, dependencies inferred from the data.
 * lu_tag (built with -DLU_TAG, StarPU's lu_example_*): the data carry no
 * dependency (sequential consistency off); each task has a tag and declares
 * the tags of the tasks it waits for.
 *
 * -bound records the tasks for the theoretical lower bound (starpu_bound_start
 * before the submission, starpu_bound_stop after the run, as StarPU's
 * examples/lu/lu_example.c) and prints what starpu_bound_compute finds;
 * -bounddeps (-bounddepsprio) records their dependencies (and priorities)
 * and writes the problem to lu.pl and lu.mps and its graph to lu.dot.
 *
 *   [sd]lu_implicit, [sd]lu_tag [-size N] [-nblocks K] [-check] [-no-prio]
 *       [-bound | -bounddeps | -bounddepsprio] [-directory D]
 */
#include "linalg.h"

#include <errno.h>
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LU_TAG
enum { GETRF = 1, TRSM_ROW, TRSM_COL, GEMM };

/* Step k: getrf of (k, k), then U's row k (k, i) and L's column k (i, k), then the
 * update of every (i, j) right of and below them; at k > 0 each waits for the update
 * of its tile at step k - 1. */
static int lu_submit(struct linalg_tiles *t, int no_prio)
{
	const unsigned nb = t->nb, bs = t->bs;
	starpu_tag_t deps[3];
	int ret;

	linalg_tiles_ordered_by_tags(t);

	for (unsigned k = 0; k < nb; k++) {
		deps[0] = k ? linalg_tag(GEMM, k - 1, k, k) : 0;
		ret = linalg_submit_tagged(&linalg_getrf_cl, linalg_tag(GETRF, k, k, k), linalg_priority(t, k, 0, no_prio), LINALG_FLOPS_GETRF(bs),
				    k ? 1 : 0, deps, LINALG_TILE(t, k, k), NULL, NULL);
		if (ret)
			return ret;
		for (unsigned i = k + 1; i < nb; i++) {
			deps[0] = linalg_tag(GETRF, k, k, k);
			deps[1] = k ? linalg_tag(GEMM, k - 1, k, i) : 0;
			ret = linalg_submit_tagged(&linalg_trsm_llu_cl, linalg_tag(TRSM_ROW, k, k, i), linalg_priority(t, k, i - k, no_prio),
					    LINALG_FLOPS_TRSM(bs), k ? 2 : 1, deps, LINALG_TILE(t, k, k), LINALG_TILE(t, k, i), NULL);
			if (ret)
				return ret;
			deps[1] = k ? linalg_tag(GEMM, k - 1, i, k) : 0;
			ret = linalg_submit_tagged(&linalg_trsm_run_cl, linalg_tag(TRSM_COL, k, i, k), linalg_priority(t, k, i - k, no_prio),
					    LINALG_FLOPS_TRSM(bs), k ? 2 : 1, deps, LINALG_TILE(t, k, k), LINALG_TILE(t, i, k), NULL);
			if (ret)
				return ret;
		}
		for (unsigned j = k + 1; j < nb; j++)
			for (unsigned i = k + 1; i < nb; i++) {
				deps[0] = linalg_tag(TRSM_COL, k, i, k);
				deps[1] = linalg_tag(TRSM_ROW, k, k, j);
				deps[2] = k ? linalg_tag(GEMM, k - 1, i, j) : 0;
				ret = linalg_submit_tagged(&linalg_gemm_sub_cl, linalg_tag(GEMM, k, i, j),
						    linalg_priority(t, k, (i - k) + (j - k), no_prio), LINALG_FLOPS_GEMM(bs), k ? 3 : 2,
						    deps, LINALG_TILE(t, i, k), LINALG_TILE(t, k, j), LINALG_TILE(t, i, j));
				if (ret)
					return ret;
			}
	}
	return starpu_tag_wait(linalg_tag(GETRF, nb - 1, nb - 1, nb - 1));
}
#else
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
#endif

static const char *prog;
static int bound_status;

/* What -bound asked for, once the tasks are done (linalg_options.finish): the recording stopped,
 * then the bound solved, or its problem and graph written in -directory. bound_status: 0, or 1
 * when a file cannot be written (said). */
static void bound_report(const struct linalg_options *opt)
{
	starpu_bound_stop();
	bound_status = 0;
	if (!opt->bound_deps) {
		double min = 0;
		starpu_bound_compute(&min, NULL, 0);
		if (min > 0)
			printf("theoretical min: %f ms\n", min);
		else
			printf("theoretical min: not solved (see the message above: calibrate the models with STARPU_CALIBRATE=1, "
			       "or build with GLPK; -bounddeps writes the problem for another solver)\n");
		return;
	}
	static const struct {
		const char *name;
		void (*print)(FILE *);
	} files[] = { { "lu.pl", starpu_bound_print_lp }, { "lu.mps", starpu_bound_print_mps }, { "lu.dot", starpu_bound_print_dot } };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", opt->directory ? opt->directory : ".", files[i].name);
		FILE *f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "%s: cannot write %s (%s): check -directory\n", prog, path, strerror(errno));
			bound_status = 1;
			return;
		}
		files[i].print(f);
		if (fclose(f) != 0) {
			fprintf(stderr, "%s: writing %s failed (%s)\n", prog, path, strerror(errno));
			bound_status = 1;
			return;
		}
		printf("system printed to %s\n", path);
	}
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
	int ret = linalg_start(argc, argv, &opt, LINALG_OPT_PRIO | LINALG_OPT_BOUND);
	if (ret >= 0)
		return ret;

	const unsigned n = opt.size;
	real *ref = NULL, *a = linalg_matrix(n, linalg_fill_dominant, opt.check ? &ref : NULL);
	if (!a) {
		linalg_shutdown();
		return 1;
	}
	prog = argv[0];
	if (opt.bound) {
		starpu_bound_start(opt.bound_deps, opt.bound_prio);
		opt.finish = bound_report;
	}
	double elapsed = linalg_run(a, &opt, lu_submit, &ret);
	int status = linalg_submit_status(argv[0], ret);
	if (status == 0) {
		linalg_report(n, elapsed, 2.0 * n * n * n / 3.0);
		status = bound_status;
		if (ref && status == 0)
			status = lu_reference(ref, n) ? 1 : linalg_compare(a, ref, n, 'A');
	}
	linalg_free(ref);
	linalg_free(a);
	return status;
}
