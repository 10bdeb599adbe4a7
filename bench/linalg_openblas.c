/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rates the tiled examples are measured against, on the same n x n
 * matrix the examples build (examples/linalg):
 *
 *   linalg_openblas potrf|gemm N [threads]   OpenBLAS's own dpotrf or dgemm
 *                                            on the whole matrix (threads:
 *                                            default, every CPU)
 *   linalg_openblas potrf|gemm N -tile B     the examples' tile kernels (their
 *                                            codelets' CPU functions) called
 *                                            one after the other in this one
 *                                            thread, in the examples' order,
 *                                            without a runtime
 *
 * Prints the examples' report, then the CPU time of the computation (every
 * thread of the process) and the rate per CPU second; with -tile, each tile
 * kernel's calls and CPU time per call too. That rate does not
 * depend on what else runs on the machine, so "-tile B" against the whole
 * routine on one thread says what the tiled algorithm can reach at best on
 * these cores, whatever the runtime (bench/linalg/run's "kernels" column).
 */
#include "../examples/linalg/linalg.h"

#include <cblas.h>
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void openblas_set_num_threads(int num_threads);

/* CPU seconds used so far by every thread of the process. */
static double cpu_seconds(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
}

/* Tile (i, j) of the n x n matrix a as a codelet sees it. */
static struct starpu_matrix_interface tile(real *a, unsigned n, unsigned bs, unsigned i, unsigned j)
{
	return (struct starpu_matrix_interface){ .id = STARPU_MATRIX_INTERFACE_ID,
						 .ptr = (uintptr_t)(a + (size_t)i * bs + (size_t)j * bs * n),
						 .nx = bs, .ny = bs, .ld = n, .elemsize = sizeof(real) };
}

/* This thread's CPU seconds so far. */
static double thread_cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The tile kernels called, with their calls and CPU seconds. */
static struct kernel_use
{
	struct starpu_codelet *cl;
	unsigned calls;
	double seconds;
} uses[4];

/* One call of cl's CPU function on up to three tiles, its CPU time added to cl's. */
static void call(struct starpu_codelet *cl, struct starpu_matrix_interface t0, struct starpu_matrix_interface t1,
		 struct starpu_matrix_interface t2)
{
	void *buffers[3] = { &t0, &t1, &t2 };
	struct kernel_use *u = uses;
	while (u->cl && u->cl != cl)
		u++;
	u->cl = cl;
	double start = thread_cpu_seconds();
	cl->cpu_funcs[0](buffers, NULL);
	u->seconds += thread_cpu_seconds() - start;
	u->calls++;
}

/* The examples' tasks, in their submission order, run in this thread. */
static void tiled(int potrf, real *a, real *b, real *c, unsigned n, unsigned bs)
{
	const unsigned nb = n / bs;
	struct starpu_matrix_interface none = { 0 };

	if (!potrf) {	/* gemm.c */
		for (unsigned j = 0; j < nb; j++)
			for (unsigned i = 0; i < nb; i++)
				for (unsigned k = 0; k < nb; k++)
					call(&linalg_gemm_cl, tile(a, n, bs, i, k), tile(b, n, bs, k, j), tile(c, n, bs, i, j));
		return;
	}
	for (unsigned k = 0; k < nb; k++) {	/* linalg_cholesky_submit */
		call(&linalg_potrf_cl, tile(a, n, bs, k, k), none, none);
		for (unsigned i = k + 1; i < nb; i++)
			call(&linalg_trsm_rlt_cl, tile(a, n, bs, k, k), tile(a, n, bs, i, k), none);
		for (unsigned i = k + 1; i < nb; i++) {
			call(&linalg_syrk_cl, tile(a, n, bs, i, k), tile(a, n, bs, i, i), none);
			for (unsigned j = k + 1; j < i; j++)
				call(&linalg_gemm_nt_cl, tile(a, n, bs, i, k), tile(a, n, bs, j, k), tile(a, n, bs, i, j));
		}
	}
}

int main(int argc, char **argv)
{
	int potrf = argc > 1 && !strcmp(argv[1], "potrf"), gemm = argc > 1 && !strcmp(argv[1], "gemm");
	int n = argc > 2 ? atoi(argv[2]) : 0, threads = (int)sysconf(_SC_NPROCESSORS_ONLN), bs = 0;
	if (argc == 5 && !strcmp(argv[3], "-tile")) {
		bs = atoi(argv[4]);
		threads = 1;
	} else if (argc == 4)
		threads = atoi(argv[3]);
	if ((!potrf && !gemm) || n <= 0 || threads <= 0 || argc > 5 || (argc == 5 && bs <= 0) || (bs && n % bs)) {
		fprintf(stderr, "usage: %s potrf|gemm N [threads | -tile B]   (B divides N)\n", argv[0]);
		return 2;
	}
	openblas_set_num_threads(threads);

	real *a = linalg_matrix(n, potrf ? linalg_fill_spd : linalg_fill_random, NULL);
	real *b = gemm ? linalg_matrix(n, linalg_fill_random, NULL) : NULL, *c = gemm ? linalg_alloc(n) : NULL;
	if (!a || (gemm && (!b || !c)))
		return 1;
	if (c)
		memset(c, 0, (size_t)n * n * sizeof(real));

	double start = starpu_timing_now(), cpu = cpu_seconds();
	double flop = potrf ? (double)n * n * n / 3.0 : 2.0 * n * n * n;
	if (bs)
		tiled(potrf, a, b, c, n, bs);
	else if (potrf && LAPACK(potrf)(LAPACK_COL_MAJOR, 'L', n, a, n) != 0) {
		fprintf(stderr, "%s: potrf failed\n", argv[0]);
		return 1;
	} else if (gemm)
		CBLAS(gemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 1.0, c, n);
	double elapsed = starpu_timing_now() - start;
	cpu = cpu_seconds() - cpu;
	linalg_report(n, elapsed, flop);
	printf("cpu\t%.0f ms\t%.1f GFlop/s per CPU second\n", cpu * 1e3, flop / cpu / 1e9);
	for (struct kernel_use *u = uses; u < uses + 4 && u->cl; u++)
		printf("kernel\t%s\t%u calls\t%.1f us per call\n", u->cl->name, u->calls, u->seconds / u->calls * 1e6);
	linalg_free(a);
	linalg_free(b);
	linalg_free(c);
	return 0;
}
