/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cost function of blas_model.h: 2 M N K flops at 1 GFlop/s, i.e. 2 M N K / 1000 µs. */
#include "blas_model.h"

double gemm_cost(struct starpu_task *task, unsigned nimpl)
{
	(void)nimpl;
	/* C (M x N) = A (M x K) B (K x N); StarPU's matrices: nx rows, ny columns. */
	double m = starpu_matrix_get_nx(STARPU_TASK_GET_HANDLE(task, 2));
	double n = starpu_matrix_get_ny(STARPU_TASK_GET_HANDLE(task, 2));
	double k = starpu_matrix_get_ny(STARPU_TASK_GET_HANDLE(task, 0));
	return 2 * m * n * k / 1000;
}
