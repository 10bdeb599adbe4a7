/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The shared part of the tiled linear-algebra examples (see linalg.h): tile
 * kernels on OpenBLAS and LAPACKE, their codelets and models, options,
 * matrices, tiles, the tiled Cholesky, the check and the report.
 */
#include "linalg.h"

#include <cblas.h>
#include <lapacke.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OpenBLAS's own call (cblas.h declares it only when it is OpenBLAS's). */
void openblas_set_num_threads(int num_threads);

/* ------------------------------------------------------------ tile kernels */

#define TILE_PTR(b) ((real *)STARPU_MATRIX_GET_PTR(b))
#define TILE_NX(b) ((int)STARPU_MATRIX_GET_NX(b))
#define TILE_NY(b) ((int)STARPU_MATRIX_GET_NY(b))
#define TILE_LD(b) ((int)STARPU_MATRIX_GET_LD(b))

static void potrf_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	int info = LAPACK(potrf_work)(LAPACK_COL_MAJOR, 'L', TILE_NX(buffers[0]), TILE_PTR(buffers[0]), TILE_LD(buffers[0]));
	if (info != 0)
		fprintf(stderr, "potrf: the diagonal tile is not positive definite (LAPACK info %d): the result will be wrong\n", info);
}

static void trsm_rlt_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	CBLAS(trsm)(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, TILE_NX(buffers[1]), TILE_NY(buffers[1]),
		    1.0, TILE_PTR(buffers[0]), TILE_LD(buffers[0]), TILE_PTR(buffers[1]), TILE_LD(buffers[1]));
}

static void syrk_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	CBLAS(syrk)(CblasColMajor, CblasLower, CblasNoTrans, TILE_NX(buffers[1]), TILE_NY(buffers[0]),
		    -1.0, TILE_PTR(buffers[0]), TILE_LD(buffers[0]), 1.0, TILE_PTR(buffers[1]), TILE_LD(buffers[1]));
}

/* C += alpha A op(B), C being buffers[2]. */
static void gemm_tile(void *buffers[], enum CBLAS_TRANSPOSE transb, real alpha)
{
	CBLAS(gemm)(CblasColMajor, CblasNoTrans, transb, TILE_NX(buffers[2]), TILE_NY(buffers[2]), TILE_NY(buffers[0]),
		    alpha, TILE_PTR(buffers[0]), TILE_LD(buffers[0]), TILE_PTR(buffers[1]), TILE_LD(buffers[1]),
		    1.0, TILE_PTR(buffers[2]), TILE_LD(buffers[2]));
}

static void gemm_nt_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	gemm_tile(buffers, CblasTrans, -1.0);
}

static void gemm_sub_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	gemm_tile(buffers, CblasNoTrans, -1.0);
}

static void gemm_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	gemm_tile(buffers, CblasNoTrans, 1.0);
}

/* LU without pivoting (LAPACK's getrf always pivots): one column at a time. */
static void getrf_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	real *a = TILE_PTR(buffers[0]);
	int n = TILE_NX(buffers[0]), ld = TILE_LD(buffers[0]);
	for (int j = 0; j < n; j++) {
		real pivot = a[j + (size_t)j * ld];
		if (pivot == 0) {
			fprintf(stderr, "getrf: zero pivot at column %d of a diagonal tile (no pivoting): the result will be wrong\n", j);
			return;
		}
		CBLAS(scal)(n - j - 1, 1.0 / pivot, &a[j + 1 + (size_t)j * ld], 1);
		CBLAS(ger)(CblasColMajor, n - j - 1, n - j - 1, -1.0, &a[j + 1 + (size_t)j * ld], 1,
			   &a[j + (size_t)(j + 1) * ld], ld, &a[j + 1 + (size_t)(j + 1) * ld], ld);
	}
}

static void trsm_llu_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	CBLAS(trsm)(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, TILE_NX(buffers[1]), TILE_NY(buffers[1]),
		    1.0, TILE_PTR(buffers[0]), TILE_LD(buffers[0]), TILE_PTR(buffers[1]), TILE_LD(buffers[1]));
}

static void trsm_run_cpu(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	CBLAS(trsm)(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, TILE_NX(buffers[1]), TILE_NY(buffers[1]),
		    1.0, TILE_PTR(buffers[0]), TILE_LD(buffers[0]), TILE_PTR(buffers[1]), TILE_LD(buffers[1]));
}

/* A simulation build (STARPU_SIMGRID) may also give a task to a simulated GPU, which
 * runs no code: StarPU's placeholder declares that implementation. */
#ifdef STARPU_SIMGRID
#define LINALG_SIMULATED_GPU .cuda_funcs = {(starpu_cuda_func_t)1},
#else
#define LINALG_SIMULATED_GPU
#endif

/* The kernels with an OpenCL implementation (opencl.c) name it in LINALG_OPENCL_<kernel>. */
#ifdef LINALG_OPENCL
#define LINALG_OPENCL_trsm_rlt .opencl_funcs = {linalg_trsm_rlt_opencl},
#define LINALG_OPENCL_syrk .opencl_funcs = {linalg_syrk_opencl},
#define LINALG_OPENCL_gemm_nt .opencl_funcs = {linalg_gemm_nt_opencl},
#else
#define LINALG_OPENCL_trsm_rlt
#define LINALG_OPENCL_syrk
#define LINALG_OPENCL_gemm_nt
#endif
#define LINALG_OPENCL_potrf
#define LINALG_OPENCL_getrf
#define LINALG_OPENCL_trsm_llu
#define LINALG_OPENCL_trsm_run
#define LINALG_OPENCL_gemm_sub
#define LINALG_OPENCL_gemm

/* A codelet linalg_<kernel>_cl and its history-based model symbol, which also names its tasks. */
#define LINALG_CODELET(kernel, sym, n, ...)                                                                            \
	static struct starpu_perfmodel kernel##_model = {.type = STARPU_HISTORY_BASED, .symbol = sym};                \
	struct starpu_codelet linalg_##kernel##_cl = {                                                                \
		.cpu_funcs = {kernel##_cpu},                                                                          \
		.cpu_funcs_name = {#kernel "_cpu"},                                                                   \
		LINALG_SIMULATED_GPU                                                                                  \
		LINALG_OPENCL_##kernel                                                                                \
		.nbuffers = n,                                                                                        \
		.modes = {__VA_ARGS__},                                                                               \
		.model = &kernel##_model,                                                                             \
		.name = sym,                                                                                          \
	}

/* The single-precision Cholesky's models are StarPU's cholesky example's (chol_model_*), whose
 * measurements of real machines simulations use; the others are "<precision><kernel>". */
#ifdef LINALG_FLOAT
#define CHOLESKY_MODEL(kernel, starpu_name) "chol_model_" starpu_name
#else
#define CHOLESKY_MODEL(kernel, starpu_name) LINALG_PREC #kernel
#endif

LINALG_CODELET(potrf, CHOLESKY_MODEL(potrf, "potrf"), 1, STARPU_RW);
LINALG_CODELET(trsm_rlt, CHOLESKY_MODEL(trsm_rlt, "trsm"), 2, STARPU_R, STARPU_RW);
LINALG_CODELET(syrk, CHOLESKY_MODEL(syrk, "syrk"), 2, STARPU_R, STARPU_RW);
LINALG_CODELET(gemm_nt, CHOLESKY_MODEL(gemm_nt, "gemm"), 3, STARPU_R, STARPU_R, STARPU_RW);
LINALG_CODELET(getrf, LINALG_PREC "getrf", 1, STARPU_RW);
LINALG_CODELET(trsm_llu, LINALG_PREC "trsm_llu", 2, STARPU_R, STARPU_RW);
LINALG_CODELET(trsm_run, LINALG_PREC "trsm_run", 2, STARPU_R, STARPU_RW);
LINALG_CODELET(gemm_sub, LINALG_PREC "gemm_sub", 3, STARPU_R, STARPU_R, STARPU_RW);
LINALG_CODELET(gemm, LINALG_PREC "gemm", 3, STARPU_R, STARPU_R, STARPU_RW);

/* ---------------------------------------------------------------- options */

static void usage(FILE *out, const char *prog, int flags)
{
	fprintf(out, "usage: %s [-size N] [-nblocks K] [-check]%s%s%s [-h]\n"
		     "  -size N     matrix order (a multiple of K)\n"
		     "  -nblocks K  tiles per dimension: tiles of N/K x N/K\n"
		     "  -check      compare the result with LAPACK's (BLAS's)\n%s%s%s",
		prog, flags & LINALG_OPT_PRIO ? " [-no-prio]" : "", flags & LINALG_OPT_ITER ? " [-iter I]" : "",
		flags & LINALG_OPT_BOUND ? " [-bound] [-bounddeps] [-bounddepsprio] [-directory D]" : "",
		flags & LINALG_OPT_PRIO ? "  -no-prio    submit without priorities\n" : "",
		flags & LINALG_OPT_ITER ? "  -iter I     repeat the product I times\n" : "",
		flags & LINALG_OPT_BOUND ? "  -bound      print the theoretical lower bound of the run (starpu_bound_compute, GLPK)\n"
					   "  -bounddeps  the bound with the tasks' dependencies: write its problem to D/lu.pl (LP),\n"
					   "              D/lu.mps (MPS) and its graph to D/lu.dot\n"
					   "  -bounddepsprio  the same, with the tasks' priorities\n"
					   "  -directory D  where -bounddeps writes (default: the current directory)\n" : "");
}

static int parse_count(const char *prog, const char *name, const char *value, unsigned *out)
{
	char *end;
	unsigned long v;

	if (!value) {
		fprintf(stderr, "%s: %s needs a value (a positive integer)\n", prog, name);
		return -1;
	}
	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno || end == value || *end || value[0] == '-' || v == 0 || v > (1UL << 20)) {
		fprintf(stderr, "%s: %s takes a positive integer up to %lu, not '%s'\n", prog, name, 1UL << 20, value);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

int linalg_parse_options(int argc, char **argv, struct linalg_options *opt, int flags)
{
	const char *prog = argv[0];
	int ret = 0;

	for (int i = 1; i < argc && ret == 0; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "-size"))
			ret = parse_count(prog, arg, i + 1 < argc ? argv[++i] : NULL, &opt->size);
		else if (!strcmp(arg, "-nblocks"))
			ret = parse_count(prog, arg, i + 1 < argc ? argv[++i] : NULL, &opt->nblocks);
		else if ((flags & LINALG_OPT_ITER) && !strcmp(arg, "-iter"))
			ret = parse_count(prog, arg, i + 1 < argc ? argv[++i] : NULL, &opt->iter);
		else if (!strcmp(arg, "-check"))
			opt->check = 1;
		else if ((flags & LINALG_OPT_PRIO) && !strcmp(arg, "-no-prio"))
			opt->no_prio = 1;
		else if ((flags & LINALG_OPT_BOUND) && !strcmp(arg, "-bound"))
			opt->bound = 1;
		else if ((flags & LINALG_OPT_BOUND) && (!strcmp(arg, "-bounddeps") || !strcmp(arg, "-bounddepsprio")))
			opt->bound = opt->bound_deps = 1, opt->bound_prio |= !strcmp(arg, "-bounddepsprio");
		else if ((flags & LINALG_OPT_BOUND) && !strcmp(arg, "-directory")) {
			if (i + 1 < argc) {
				opt->directory = argv[++i];
			} else {
				fprintf(stderr, "%s: -directory needs a value (a folder)\n", prog);
				ret = -1;
			}
		}
		else if (!strcmp(arg, "-h") || !strcmp(arg, "-help") || !strcmp(arg, "--help")) {
			usage(stdout, prog, flags);
			return 1;
		} else {
			fprintf(stderr, "%s: unknown option '%s'\n", prog, arg);
			ret = -1;
		}
	}
	if (ret == 0 && opt->size % opt->nblocks) {
		unsigned fit = opt->size - opt->size % opt->nblocks;
		fprintf(stderr, "%s: -size %u is not a multiple of -nblocks %u: tiles are equal squares (try -size %u)\n", prog,
			opt->size, opt->nblocks, fit ? fit : opt->nblocks);
		ret = -1;
	}
	if (ret)
		usage(stderr, prog, flags);
	return ret;
}

int linalg_init(void)
{
	openblas_set_num_threads(1);
	int ret = starpu_init(NULL);
#ifdef LINALG_OPENCL
	if (ret == 0 && linalg_opencl_load() != 0) {
		starpu_shutdown();
		return -EINVAL;
	}
#endif
	return ret;
}

void linalg_shutdown(void)
{
#ifdef LINALG_OPENCL
	linalg_opencl_unload();
#endif
	starpu_shutdown();
}

int linalg_start(int argc, char **argv, struct linalg_options *opt, int flags)
{
	int ret = linalg_parse_options(argc, argv, opt, flags);
	if (ret)
		return ret > 0 ? 0 : 2;
	ret = linalg_init();
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	return -1;
}

int linalg_submit_status(const char *prog, int ret)
{
	if (!ret)
		return 0;
	fprintf(stderr, "%s: a task could not be submitted: %s\n", prog, strerror(-ret));
	return ret == -ENODEV ? 77 : 1;
}

/* --------------------------------------------------------------- matrices */

real *linalg_alloc(unsigned n)
{
	void *p = NULL;
	size_t bytes = (size_t)n * n * sizeof(real);
#ifdef STARPU_SIMGRID
	/* A simulation reads none of it: one small block mapped again and again (starpu_free() unmaps it). */
	if (starpu_malloc_flags(&p, bytes, STARPU_MALLOC_SIMULATION_FOLDED) == 0)
		return p;
#endif
	if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
		fprintf(stderr, "cannot allocate a %u x %u matrix (%.0f MB): pick a smaller -size\n", n, n, bytes / 1e6);
		return NULL;
	}
	return p;
}

void linalg_free(real *a)
{
#ifdef STARPU_SIMGRID
	starpu_free_noflag(a, 0);	/* folded or not, starpu_free_flags() knows */
#else
	free(a);
#endif
}

/* A value in [0, 1) that depends only on (i, j). */
static real entry(unsigned i, unsigned j)
{
	uint32_t h = i * 2654435761u ^ (j + 0x9e3779b9u) * 40503u;
	h ^= h >> 15;
	h *= 2246822519u;
	h ^= h >> 13;
	return (real)(h % 1000u) / 1000;
}

static void fill(real *a, unsigned n, int symmetric, real diag)
{
	for (unsigned j = 0; j < n; j++)
		for (unsigned i = 0; i < n; i++)
			a[i + (size_t)j * n] = (symmetric && i < j ? entry(j, i) : entry(i, j)) + (i == j ? diag : 0);
}

void linalg_fill_random(real *a, unsigned n)
{
	fill(a, n, 0, 0);
}

void linalg_fill_dominant(real *a, unsigned n)
{
	fill(a, n, 0, (real)n);
}

void linalg_fill_spd(real *a, unsigned n)
{
	fill(a, n, 1, (real)n);
}

static real *copy_of(const real *a, unsigned n)
{
	real *c = linalg_alloc(n);
	if (c)
		memcpy(c, a, (size_t)n * n * sizeof(real));
	return c;
}

real *linalg_matrix(unsigned n, void (*filler)(real *, unsigned), real **ref)
{
	real *a = linalg_alloc(n);
#ifndef STARPU_SIMGRID
	/* A simulation reads none of it: filling it would only cost the memory that folding saves. */
	if (a)
		filler(a, n);
#endif
	if (a && ref && !(*ref = copy_of(a, n))) {
		linalg_free(a);
		a = NULL;
	}
	return a;
}

int linalg_tiles_register(struct linalg_tiles *t, real *a, unsigned n, unsigned nb)
{
	t->n = n;
	t->nb = nb;
	t->bs = n / nb;
	t->handles = calloc((size_t)nb * nb, sizeof(*t->handles));
	if (!t->handles)
		return -ENOMEM;
	for (unsigned j = 0; j < nb; j++)
		for (unsigned i = 0; i < nb; i++)
			starpu_matrix_data_register(&LINALG_TILE(t, i, j), STARPU_MAIN_RAM,
						    (uintptr_t)(a + (size_t)i * t->bs + (size_t)j * t->bs * n), n, t->bs, t->bs,
						    sizeof(real));
	return 0;
}

void linalg_tiles_unregister(struct linalg_tiles *t)
{
	for (size_t k = 0; k < (size_t)t->nb * t->nb; k++)
		starpu_data_unregister(t->handles[k]);
	free(t->handles);
	t->handles = NULL;
}

int linalg_priority(const struct linalg_tiles *t, unsigned k, unsigned behind, int no_prio)
{
	if (no_prio)
		return 0;
	int prio = 2 * (int)(t->nb - k) - (int)behind;
	int max = starpu_sched_get_max_priority(), min = starpu_sched_get_min_priority();
	return prio > max ? max : prio < min ? min : prio;
}

starpu_tag_t linalg_tag(unsigned kernel, unsigned k, unsigned i, unsigned j)
{
	return (starpu_tag_t)kernel << 60 | (starpu_tag_t)k << 40 | (starpu_tag_t)i << 20 | j;
}

void linalg_tiles_ordered_by_tags(struct linalg_tiles *t)
{
	for (size_t h = 0; h < (size_t)t->nb * t->nb; h++)
		starpu_data_set_sequential_consistency_flag(t->handles[h], 0);
}

int linalg_submit_tagged(struct starpu_codelet *cl, starpu_tag_t id, int prio, double flops, unsigned ndeps,
			 starpu_tag_t *deps, starpu_data_handle_t h0, starpu_data_handle_t h1, starpu_data_handle_t h2)
{
	struct starpu_task *task = starpu_task_create();
	starpu_data_handle_t handles[3] = { h0, h1, h2 };

	task->cl = cl;
	for (int b = 0; b < cl->nbuffers; b++)
		task->handles[b] = handles[b];
	task->use_tag = 1;
	task->tag_id = id;
	task->priority = prio;
	task->flops = flops;
	if (ndeps)
		starpu_tag_declare_deps_array(id, ndeps, deps);
	int ret = starpu_task_submit(task);
	if (ret)
		starpu_task_destroy(task);
	return ret;
}

double linalg_run(real *a, const struct linalg_options *opt, int (*submit)(struct linalg_tiles *, int), int *ret)
{
	struct linalg_tiles tiles;
	double start = 0, end = 0;

	*ret = linalg_tiles_register(&tiles, a, opt->size, opt->nblocks);
	if (*ret == 0) {
		start = starpu_timing_now();
		*ret = submit(&tiles, opt->no_prio);
		starpu_task_wait_for_all();
		end = starpu_timing_now();
		if (*ret == 0 && opt->finish)
			opt->finish(opt);
		linalg_tiles_unregister(&tiles);
	}
	linalg_shutdown();
	return end - start;
}

/* --------------------------------------------------------------- Cholesky */

int linalg_cholesky_submit(struct linalg_tiles *t, int no_prio, void (*done)(void *))
{
	const unsigned nb = t->nb, bs = t->bs;
	int ret;

	for (unsigned k = 0; k < nb; k++) {
		ret = starpu_task_insert(&linalg_potrf_cl, STARPU_PRIORITY, linalg_priority(t, k, 0, no_prio),
					 STARPU_RW, LINALG_TILE(t, k, k), STARPU_FLOPS, LINALG_FLOPS_POTRF(bs), STARPU_CALLBACK, done, 0);
		if (ret)
			return ret;
		for (unsigned i = k + 1; i < nb; i++) {
			ret = starpu_task_insert(&linalg_trsm_rlt_cl, STARPU_PRIORITY, linalg_priority(t, k, i - k, no_prio),
						 STARPU_R, LINALG_TILE(t, k, k), STARPU_RW, LINALG_TILE(t, i, k),
						 STARPU_FLOPS, LINALG_FLOPS_TRSM(bs), STARPU_CALLBACK, done, 0);
			if (ret)
				return ret;
		}
		for (unsigned i = k + 1; i < nb; i++) {
			ret = starpu_task_insert(&linalg_syrk_cl, STARPU_PRIORITY, linalg_priority(t, k, 2 * (i - k), no_prio),
						 STARPU_R, LINALG_TILE(t, i, k), STARPU_RW, LINALG_TILE(t, i, i),
						 STARPU_FLOPS, LINALG_FLOPS_SYRK(bs), STARPU_CALLBACK, done, 0);
			if (ret)
				return ret;
			for (unsigned j = k + 1; j < i; j++) {
				ret = starpu_task_insert(&linalg_gemm_nt_cl,
							 STARPU_PRIORITY, linalg_priority(t, k, (i - k) + (j - k), no_prio),
							 STARPU_R, LINALG_TILE(t, i, k), STARPU_R, LINALG_TILE(t, j, k),
							 STARPU_RW, LINALG_TILE(t, i, j), STARPU_FLOPS, LINALG_FLOPS_GEMM(bs),
							 STARPU_CALLBACK, done, 0);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------- check and report */

int linalg_compare(const real *a, const real *ref, unsigned n, char uplo)
{
	double maxdiff = 0, maxref = 0;
	int nan = 0;

	for (unsigned j = 0; j < n; j++)
		for (unsigned i = uplo == 'L' ? j : 0; i < n; i++) {
			double d = fabs((double)a[i + (size_t)j * n] - ref[i + (size_t)j * n]);
			nan |= isnan(d);
			maxdiff = fmax(maxdiff, d);
			maxref = fmax(maxref, fabs((double)ref[i + (size_t)j * n]));
		}
	double err = nan ? NAN : maxref > 0 ? maxdiff / maxref : maxdiff;
	double tol = 16.0 * n * LINALG_EPS;
	int ok = err <= tol;
	printf("result %s (relative error %.2e against LAPACK, tolerance %.2e)\n", ok ? "correct" : "WRONG", err, tol);
	return ok ? 0 : 1;
}

void linalg_report(unsigned n, double timing_us, double flop)
{
	printf("# size\tms\tGFlop/s\n");
	printf("%u\t%.0f\t%.1f\n", n, timing_us / 1000, flop / timing_us / 1000);
}
