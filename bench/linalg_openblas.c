/*
 * The rate the tiled examples are measured against: OpenBLAS's own
 * multithreaded dpotrf or dgemm on the same n x n matrix the examples build
 * (examples/linalg), with every core. Prints the examples' report.
 *
 *   linalg_openblas potrf|gemm N [threads]   (threads: default, every CPU)
 */
#include "../examples/linalg/linalg.h"

#include <cblas.h>
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void openblas_set_num_threads(int num_threads);

int main(int argc, char **argv)
{
	int potrf = argc > 1 && !strcmp(argv[1], "potrf"), gemm = argc > 1 && !strcmp(argv[1], "gemm");
	int n = argc > 2 ? atoi(argv[2]) : 0, threads = argc > 3 ? atoi(argv[3]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if ((!potrf && !gemm) || n <= 0 || threads <= 0 || argc > 4) {
		fprintf(stderr, "usage: %s potrf|gemm N [threads]\n", argv[0]);
		return 2;
	}
	openblas_set_num_threads(threads);

	real *a = linalg_matrix(n, potrf ? linalg_fill_spd : linalg_fill_random, NULL);
	real *b = gemm ? linalg_matrix(n, linalg_fill_random, NULL) : NULL, *c = gemm ? linalg_alloc(n) : NULL;
	if (!a || (gemm && (!b || !c)))
		return 1;
	if (c)
		memset(c, 0, (size_t)n * n * sizeof(real));

	double start = starpu_timing_now(), flop;
	if (potrf) {
		if (LAPACK(potrf)(LAPACK_COL_MAJOR, 'L', n, a, n) != 0) {
			fprintf(stderr, "%s: potrf failed\n", argv[0]);
			return 1;
		}
		flop = (double)n * n * n / 3.0;
	} else {
		CBLAS(gemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 1.0, c, n);
		flop = 2.0 * n * n * n;
	}
	linalg_report(n, starpu_timing_now() - start, flop);
	linalg_free(a);
	linalg_free(b);
	linalg_free(c);
	return 0;
}
