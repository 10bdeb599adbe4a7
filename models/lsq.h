/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The built-in least-squares solver of multiple-regression models (lsq.c). */
#ifndef __ASTRO_MODELS_LSQ_H__
#define __ASTRO_MODELS_LSQ_H__

#include <stddef.h>

/**
 * Solves min ||a x - y|| for the m x n matrix a (row-major, m >= n >= 1) by
 * Householder QR, what LAPACK's dgels does for a full-rank a: on success
 * returns 0 with x in y[0..n-1] (a and the rest of y are overwritten). A
 * column that is (numerically) a combination of the others: -EDOM; m < n or
 * n == 0: -EINVAL; out of memory: -ENOMEM; each with why set.
 */
int _astro_lsq_solve(double *a, double *y, unsigned m, unsigned n, char *why, size_t whylen);

#endif
