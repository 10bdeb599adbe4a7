/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the tiled linear-algebra examples share: the precision, the options,
 * the matrix and its tiles, the tile kernels (OpenBLAS; OpenCL for the
 * Cholesky's updates, opencl.c) with their codelets and performance models,
 * the tiled Cholesky, the check against LAPACK and the GFlop/s report.
 *
 * One source serves both precisions: built with -DLINALG_FLOAT it is single
 * precision, otherwise double. Only the plain StarPU API is used, so the same
 * sources also build against StarPU itself (bench/linalg).
 *
 * A matrix is one column-major n x n array (leading dimension n); tile (i, j)
 * is the block of rows i*bs.. and columns j*bs.., registered as a matrix
 * handle pointing into the array, so LAPACK's reference runs on the very same
 * layout.
 */
#ifndef LINALG_H
#define LINALG_H

#include <starpu.h>
#include <float.h>
#include <stdint.h>

#ifdef LINALG_FLOAT
typedef float real;
#define LINALG_PREC "s"
#define CBLAS(f) cblas_s##f
#define LAPACK(f) LAPACKE_s##f
#define LINALG_EPS FLT_EPSILON
#else
typedef double real;
#define LINALG_PREC "d"
#define CBLAS(f) cblas_d##f
#define LAPACK(f) LAPACKE_d##f
#define LINALG_EPS DBL_EPSILON
#endif

/* The command line, with StarPU's examples' option names. */
struct linalg_options
{
	unsigned size;		/* -size N: matrix order */
	unsigned nblocks;	/* -nblocks K: tiles per dimension (tile size N/K) */
	unsigned iter;		/* -iter I: repetitions (gemm) */
	int check;		/* -check: compare with LAPACK's (BLAS's) result */
	int no_prio;		/* -no-prio: no task priorities */
	int bound;		/* -bound: record the tasks for the theoretical lower bound (starpu_bound_*) */
	int bound_deps;		/* -bounddeps: with their dependencies; -bounddepsprio: and priorities */
	int bound_prio;
	const char *directory;	/* -directory D: where -bounddeps writes lu.pl, lu.mps, lu.dot (default .) */
	/* Called by linalg_run() once the tasks are done, before starpu_shutdown() (NULL: nothing). */
	void (*finish)(const struct linalg_options *opt);
};

/* Fills opt from argv (defaults: the values opt holds), accepting -no-prio
 * and -iter when flags say so. 0: go on; 1: -h was answered; -1: a bad
 * option, explained on stderr in one line plus the usage (exit status 2). */
#define LINALG_OPT_PRIO 1
#define LINALG_OPT_ITER 2
#define LINALG_OPT_BOUND 4
int linalg_parse_options(int argc, char **argv, struct linalg_options *opt, int flags);

/* starpu_init() with the tile kernels single-threaded (the workers are the
 * parallelism), and the OpenCL kernels built when there are OpenCL workers:
 * 0, -ENODEV (no worker: exit 77), or starpu_init's error. */
int linalg_init(void);

/* starpu_shutdown(), the OpenCL kernels released first. */
void linalg_shutdown(void);

/* A program's start: the options (defaults in opt), then linalg_init().
 * -1: go on; else the exit status to return at once (0 after -h, 2 for a bad
 * option, 77 without a worker). */
int linalg_start(int argc, char **argv, struct linalg_options *opt, int flags);

/* The exit status after a run whose submission returned ret: 0; 77 for
 * -ENODEV (no worker can run the tasks) or 1, explained in one line. */
int linalg_submit_status(const char *prog, int ret);

/* An n x n matrix (64-byte aligned, free with linalg_free) and its fillings:
 * entries in [0, 1); plus n on the diagonal (diagonally dominant); symmetric
 * plus n on the diagonal (symmetric positive definite). */
real *linalg_alloc(unsigned n);
void linalg_free(real *a);
void linalg_fill_random(real *a, unsigned n);
void linalg_fill_dominant(real *a, unsigned n);
void linalg_fill_spd(real *a, unsigned n);

/* A program's matrix, filled by fill, and when ref is not NULL its copy in
 * *ref (for the check); NULL, after a message, when memory is short. */
real *linalg_matrix(unsigned n, void (*fill)(real *, unsigned), real **ref);

/* The handles of the nb x nb tiles of a. */
struct linalg_tiles
{
	unsigned n, nb, bs;
	starpu_data_handle_t *handles;
};
int linalg_tiles_register(struct linalg_tiles *t, real *a, unsigned n, unsigned nb);
void linalg_tiles_unregister(struct linalg_tiles *t);
#define LINALG_TILE(t, i, j) ((t)->handles[(size_t)(j) * (t)->nb + (i)])

/* A task priority for step k of a factorization, lowered by `behind`
 * (distance to the critical path), within the policy's range; 0 with no_prio. */
int linalg_priority(const struct linalg_tiles *t, unsigned k, unsigned behind, int no_prio);

/* The tag of kernel's task at step k on tile (i, j), for the tag-ordered
 * variants (cholesky_tag, lu_tag): 4 + 20 + 20 + 20 bits. */
starpu_tag_t linalg_tag(unsigned kernel, unsigned k, unsigned i, unsigned j);
/* For the tag-ordered variants: the tiles carry no dependency (sequential consistency off). */
void linalg_tiles_ordered_by_tags(struct linalg_tiles *t);
/* Submits a task of cl on up to three tiles (as many as cl has buffers) with
 * tag id, after the ndeps tags of deps; the data carry no dependency. */
int linalg_submit_tagged(struct starpu_codelet *cl, starpu_tag_t id, int prio, double flops, unsigned ndeps,
			 starpu_tag_t *deps, starpu_data_handle_t h0, starpu_data_handle_t h1, starpu_data_handle_t h2);

/* The tile kernels' codelets, each with a history-based model named after
 * the precision and the kernel (e.g. "dpotrf", "sgemm_nt"). */
extern struct starpu_codelet linalg_potrf_cl;	/* A = L L^T (lower) */
extern struct starpu_codelet linalg_trsm_rlt_cl;	/* B = B L^-T (R: L, RW: B) */
extern struct starpu_codelet linalg_syrk_cl;	/* C -= A A^T, lower (R: A, RW: C) */
extern struct starpu_codelet linalg_gemm_nt_cl;	/* C -= A B^T (R: A, R: B, RW: C) */
extern struct starpu_codelet linalg_getrf_cl;	/* A = L U, no pivoting, unit L */
extern struct starpu_codelet linalg_trsm_llu_cl;	/* B = L^-1 B, unit lower (R: A, RW: B) */
extern struct starpu_codelet linalg_trsm_run_cl;	/* B = B U^-1 (R: A, RW: B) */
extern struct starpu_codelet linalg_gemm_sub_cl;	/* C -= A B (R: A, R: B, RW: C) */
extern struct starpu_codelet linalg_gemm_cl;	/* C += A B (R: A, R: B, RW: C) */

/* OpenCL implementations of the Cholesky's updates (opencl.c), in the
 * codelets above when StarPU has OpenCL: built by linalg_init() when there
 * are OpenCL workers (an error when they do not build), released by
 * linalg_shutdown(). */
#if defined(STARPU_USE_OPENCL) && !defined(STARPU_SIMGRID)
#define LINALG_OPENCL 1
int linalg_opencl_load(void);
void linalg_opencl_unload(void);
void linalg_trsm_rlt_opencl(void *buffers[], void *cl_arg);
void linalg_syrk_opencl(void *buffers[], void *cl_arg);
void linalg_gemm_nt_opencl(void *buffers[], void *cl_arg);
#endif

/* Flops of one tile kernel on bs x bs tiles. */
#define LINALG_FLOPS_POTRF(bs) ((double)(bs) * (bs) * (bs) / 3.0)
#define LINALG_FLOPS_TRSM(bs) ((double)(bs) * (bs) * (bs))
#define LINALG_FLOPS_SYRK(bs) ((double)(bs) * (bs) * (bs))
#define LINALG_FLOPS_GEMM(bs) (2.0 * (bs) * (bs) * (bs))
#define LINALG_FLOPS_GETRF(bs) (2.0 * (bs) * (bs) * (bs) / 3.0)

/* A factorization's run: registers a's tiles, times submit(tiles, no_prio)
 * to the end of its tasks, unregisters the tiles and shuts the runtime down.
 * The elapsed time (us); submit's error, if any, in *ret. */
double linalg_run(real *a, const struct linalg_options *opt, int (*submit)(struct linalg_tiles *, int), int *ret);

/* Submits the right-looking tiled Cholesky of t (lower, in place), with
 * dependencies inferred from the data; done (may be NULL) is each task's
 * callback (argument NULL). Returns the first submission error. */
int linalg_cholesky_submit(struct linalg_tiles *t, int no_prio, void (*done)(void *));

/* Compares a with LAPACK's (or BLAS's) ref: the lower triangle (uplo 'L') or
 * everything ('A'), as max |a - ref| / max |ref|; prints "result correct" or
 * "result WRONG" with the error and the tolerance. 0 when correct. */
int linalg_compare(const real *a, const real *ref, unsigned n, char uplo);

/* StarPU's examples' report: "# size\tms\tGFlop/s" then the figures. */
void linalg_report(unsigned n, double timing_us, double flop);

#endif /* LINALG_H */
