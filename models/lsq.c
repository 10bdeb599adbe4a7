/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The least-squares solver multiple-regression models are fitted with unless
 * configure was given --enable-mlr-system-blas (then LAPACKE_dgels, mlr.c):
 * StarPU's "lightweight dgels", written here as a Householder QR. Column k is
 * reflected onto its diagonal (R's k-th row), the same reflection applied to
 * the columns right of it and to y; then R x = (Q^T y)[0..n-1] is solved
 * upwards. A column whose part left after the reflections of the earlier ones
 * is below n * 64 * DBL_EPSILON of its own norm is taken as dependent: the
 * terms cannot be told apart on these samples.
 */
#include "lsq.h"
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define A(i, j) a[(size_t)(i) * n + (j)]

int _astro_lsq_solve(double *a, double *y, unsigned m, unsigned n, char *why, size_t whylen)
{
	if (n == 0 || m < n) {
		snprintf(why, whylen, "%u samples for %u coefficients: more samples than coefficients are needed", m, n);
		return -EINVAL;
	}
	double *norm0 = malloc(n * sizeof(*norm0));
	if (!norm0) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	for (unsigned j = 0; j < n; j++) {
		double s = 0;
		for (unsigned i = 0; i < m; i++)
			s += A(i, j) * A(i, j);
		norm0[j] = sqrt(s);
	}
	int ret = 0;
	for (unsigned k = 0; k < n && ret == 0; k++) {
		double s = 0;
		for (unsigned i = k; i < m; i++)
			s += A(i, k) * A(i, k);
		double norm = sqrt(s);
		if (!(norm > n * 64 * DBL_EPSILON * norm0[k])) {
			snprintf(why, whylen, "term %u is a combination of the others on these samples (the terms are linearly dependent)", k);
			ret = -EDOM;
			break;
		}
		/* v = column k from the diagonal down, minus alpha e_k: H v reflects the column onto alpha e_k. */
		double alpha = A(k, k) > 0 ? -norm : norm;
		double v0 = A(k, k) - alpha;
		double vv = v0 * v0 + (s - A(k, k) * A(k, k));
		for (unsigned j = k + 1; j <= n; j++) {
			/* Column j of a, or y as column n. */
			double d = v0 * (j < n ? A(k, j) : y[k]);
			for (unsigned i = k + 1; i < m; i++)
				d += A(i, k) * (j < n ? A(i, j) : y[i]);
			double f = 2 * d / vv;
			if (j < n) {
				A(k, j) -= f * v0;
				for (unsigned i = k + 1; i < m; i++)
					A(i, j) -= f * A(i, k);
			} else {
				y[k] -= f * v0;
				for (unsigned i = k + 1; i < m; i++)
					y[i] -= f * A(i, k);
			}
		}
		A(k, k) = alpha;
	}
	for (unsigned k = n; ret == 0 && k-- > 0;) {
		double s = y[k];
		for (unsigned j = k + 1; j < n; j++)
			s -= A(k, j) * y[j];
		y[k] = s / A(k, k);
	}
	free(norm0);
	return ret;
}
