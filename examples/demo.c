/*
 * The Astrolabe demo: a blocked matrix-vector product y = A x followed by a
 * few relaxation sweeps, written against the plain StarPU API.
 *
 * Every task names its data and how it uses it; the runtime derives the
 * dependencies (implicit, sequential consistency): the products that
 * accumulate into the same block of y run one after the other, different
 * blocks run in parallel. The result is checked against a sequential
 * computation, and the program prints which worker ran what.
 */
#include <starpu.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1024          /* matrix order */
#define NBLOCKS 8       /* blocks per dimension */
#define BS (N / NBLOCKS)
#define SWEEPS 4

/* y_i += A_ij x_j on one block (column-major A block, leading dimension ld). */
static void gemv_block(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	const double *a = (const double *)STARPU_MATRIX_GET_PTR(buffers[0]);
	unsigned nx = STARPU_MATRIX_GET_NX(buffers[0]), ny = STARPU_MATRIX_GET_NY(buffers[0]);
	unsigned ld = STARPU_MATRIX_GET_LD(buffers[0]);
	const double *x = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
	double *y = (double *)STARPU_VECTOR_GET_PTR(buffers[2]);
	for (unsigned col = 0; col < ny; col++)
		for (unsigned row = 0; row < nx; row++)
			y[row] += a[row + (size_t)col * ld] * x[col];
}

/* y_i = omega * y_i + (1 - omega) * x_i */
static void relax_block(void *buffers[], void *cl_arg)
{
	double omega;
	starpu_codelet_unpack_args(cl_arg, &omega, 0);
	const double *x = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
	double *y = (double *)STARPU_VECTOR_GET_PTR(buffers[1]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[1]);
	for (unsigned i = 0; i < n; i++)
		y[i] = omega * y[i] + (1.0 - omega) * x[i];
}

static struct starpu_codelet gemv_cl = {
	.cpu_funcs = { gemv_block },
	.cpu_funcs_name = { "gemv_block" },
	.nbuffers = 3,
	.modes = { STARPU_R, STARPU_R, STARPU_RW },
	.name = "gemv_block",
};

static struct starpu_codelet relax_cl = {
	.cpu_funcs = { relax_block },
	.cpu_funcs_name = { "relax_block" },
	.nbuffers = 2,
	.modes = { STARPU_R, STARPU_RW },
	.name = "relax_block",
};

int main(void)
{
	int ret = starpu_init(NULL);
	if (ret == -ENODEV) {
		fprintf(stderr, "no worker available: nothing to demonstrate\n");
		return 77;
	}
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");

	double *a, *x, *y;
	starpu_malloc((void **)&a, sizeof(double) * N * N);
	starpu_malloc((void **)&x, sizeof(double) * N);
	starpu_malloc((void **)&y, sizeof(double) * N);
	for (unsigned col = 0; col < N; col++)
		for (unsigned row = 0; row < N; row++)
			a[row + (size_t)col * N] = 1.0 / (1.0 + row + col);
	for (unsigned i = 0; i < N; i++) {
		x[i] = 1.0 + (i % 7);
		y[i] = 0.0;
	}

	starpu_data_handle_t ha[NBLOCKS][NBLOCKS], hx[NBLOCKS], hy[NBLOCKS];
	for (unsigned i = 0; i < NBLOCKS; i++) {
		starpu_vector_data_register(&hx[i], STARPU_MAIN_RAM, (uintptr_t)&x[i * BS], BS, sizeof(double));
		starpu_vector_data_register(&hy[i], STARPU_MAIN_RAM, (uintptr_t)&y[i * BS], BS, sizeof(double));
		for (unsigned j = 0; j < NBLOCKS; j++)
			starpu_matrix_data_register(&ha[i][j], STARPU_MAIN_RAM, (uintptr_t)&a[i * BS + (size_t)j * BS * N],
						    N, BS, BS, sizeof(double));
	}

	double start = starpu_timing_now();
	const double omega = 0.75;
	unsigned ntasks = 0;
	for (unsigned sweep = 0; sweep < SWEEPS; sweep++) {
		for (unsigned i = 0; i < NBLOCKS; i++) {
			for (unsigned j = 0; j < NBLOCKS; j++) {
				ret = starpu_task_insert(&gemv_cl, STARPU_R, ha[i][j], STARPU_R, hx[j], STARPU_RW, hy[i],
							 STARPU_FLOPS, 2.0 * BS * BS, 0);
				STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert gemv");
				ntasks++;
			}
			ret = starpu_task_insert(&relax_cl, STARPU_R, hx[i], STARPU_RW, hy[i],
						 STARPU_VALUE, &omega, sizeof(omega), 0);
			STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert relax");
			ntasks++;
		}
	}
	starpu_task_wait_for_all();
	double elapsed = starpu_timing_now() - start;

	for (unsigned i = 0; i < NBLOCKS; i++) {
		starpu_data_unregister(hx[i]);
		starpu_data_unregister(hy[i]);
		for (unsigned j = 0; j < NBLOCKS; j++)
			starpu_data_unregister(ha[i][j]);
	}

	/* The same computation, sequentially. */
	double *ref = calloc(N, sizeof(double));
	for (unsigned sweep = 0; sweep < SWEEPS; sweep++) {
		for (unsigned row = 0; row < N; row++) {
			double sum = 0.0;
			for (unsigned col = 0; col < N; col++)
				sum += a[row + (size_t)col * N] * x[col];
			ref[row] = omega * (ref[row] + sum) + (1.0 - omega) * x[row];
		}
	}
	double max_err = 0.0;
	for (unsigned i = 0; i < N; i++)
		max_err = fmax(max_err, fabs(ref[i] - y[i]) / fmax(1.0, fabs(ref[i])));

	printf("Astrolabe demo: blocked y = A x (%d x %d, %d x %d blocks), %d sweeps\n", N, N, NBLOCKS, NBLOCKS, SWEEPS);
	printf("policy %s, %u workers, %u tasks in %.1f ms\n", starpu_sched_get_sched_policy()->policy_name,
	       starpu_worker_get_count(), ntasks, elapsed / 1000.0);
	for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
		char name[64];
		starpu_worker_get_name((int)w, name, sizeof(name));
		printf("  %-8s ran %4lu gemv_block and %3lu relax_block tasks\n", name,
		       gemv_cl.per_worker_stats[w], relax_cl.per_worker_stats[w]);
	}
	int ok = max_err < 1e-12;
	printf("result %s (max relative error %.2e)\n", ok ? "correct" : "WRONG", max_err);

	free(ref);
	starpu_free_noflag(a, sizeof(double) * N * N);
	starpu_free_noflag(x, sizeof(double) * N);
	starpu_free_noflag(y, sizeof(double) * N);
	starpu_shutdown();
	return ok ? 0 : 1;
}
