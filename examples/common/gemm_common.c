/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GEMM tasks scheduled on the application's own estimate of their length
 * (blas_model.h's starpu_sgemm_model_common: STARPU_COMMON, gemm_cost):
 * C (M x N) is computed by one task per block of rows under the policy of
 * STARPU_SCHED (dmda uses the estimate). Prints the estimate of each task
 * and checks C against a plain product: exit status 0 when it agrees.
 *
 *   gemm_common [-m M] [-n N] [-k K] [-nblocks B]
 */
#include "blas_model.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sgemm_cpu(void *buffers[], void *arg)
{
	(void)arg;
	const float *a = (const float *)STARPU_MATRIX_GET_PTR(buffers[0]), *b = (const float *)STARPU_MATRIX_GET_PTR(buffers[1]);
	float *c = (float *)STARPU_MATRIX_GET_PTR(buffers[2]);
	unsigned m = STARPU_MATRIX_GET_NX(buffers[2]), n = STARPU_MATRIX_GET_NY(buffers[2]), k = STARPU_MATRIX_GET_NY(buffers[0]);
	unsigned lda = STARPU_MATRIX_GET_LD(buffers[0]), ldb = STARPU_MATRIX_GET_LD(buffers[1]), ldc = STARPU_MATRIX_GET_LD(buffers[2]);
	for (unsigned j = 0; j < n; j++)
		for (unsigned i = 0; i < m; i++) {
			float s = 0;
			for (unsigned l = 0; l < k; l++)
				s += a[i + l * lda] * b[l + j * ldb];
			c[i + j * ldc] = s;
		}
}

static struct starpu_codelet gemm_cl = {
	.cpu_funcs = { sgemm_cpu },
	.cpu_funcs_name = { "sgemm_cpu" },
	.nbuffers = 3,
	.modes = { STARPU_R, STARPU_R, STARPU_W },
	.model = &starpu_sgemm_model_common,
	.name = "sgemm_common",
};

static int option(const char *prog, const char *name, const char *value, unsigned *out)
{
	char *end;
	unsigned long v = value ? strtoul(value, &end, 10) : 0;
	if (!value || *end || v == 0 || v > 4096) {
		fprintf(stderr, "%s: %s takes an integer from 1 to 4096\n", prog, name);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned m = 96, n = 64, k = 80, nblocks = 4;
	for (int i = 1; i < argc; i++) {
		unsigned *dst = !strcmp(argv[i], "-m") ? &m : !strcmp(argv[i], "-n") ? &n : !strcmp(argv[i], "-k") ? &k
			      : !strcmp(argv[i], "-nblocks") ? &nblocks : NULL;
		if (!dst) {
			fprintf(stderr, "%s: unknown option '%s' (usage: %s [-m M] [-n N] [-k K] [-nblocks B])\n", argv[0], argv[i], argv[0]);
			return 2;
		}
		if (option(argv[0], argv[i], i + 1 < argc ? argv[i + 1] : NULL, dst))
			return 2;
		i++;
	}
	if (m % nblocks) {
		fprintf(stderr, "%s: -m %u is not a multiple of -nblocks %u\n", argv[0], m, nblocks);
		return 2;
	}
	float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n), *c = calloc((size_t)m * n, sizeof(float));
	if (!a || !b || !c) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	for (unsigned i = 0; i < m * k; i++)
		a[i] = (float)(i % 7) - 3;
	for (unsigned i = 0; i < k * n; i++)
		b[i] = (float)(i % 5) - 2;

	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	starpu_data_handle_t ha, hb, hc;
	starpu_matrix_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)a, m, m, k, sizeof(float));
	starpu_matrix_data_register(&hb, STARPU_MAIN_RAM, (uintptr_t)b, k, k, n, sizeof(float));
	starpu_matrix_data_register(&hc, STARPU_MAIN_RAM, (uintptr_t)c, m, m, n, sizeof(float));
	/* Row blocks of A and C. */
	struct starpu_data_filter rows = { .filter_func = starpu_matrix_filter_block, .nchildren = nblocks };
	starpu_data_partition(ha, &rows);
	starpu_data_partition(hc, &rows);
	int status = 0;
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, 0);
	for (unsigned p = 0; p < nblocks && status == 0; p++) {
		struct starpu_task *task = starpu_task_create();
		task->cl = &gemm_cl;
		task->handles[0] = starpu_data_get_sub_data(ha, 1, p);
		task->handles[1] = hb;
		task->handles[2] = starpu_data_get_sub_data(hc, 1, p);
		/* STARPU_COMMON: the cost function's estimate over the architecture's relative speedup. */
		printf("task %u: %u x %u x %u, expected %.3f us (gemm_cost %.3f us / relative speedup %g)\n", p, m / nblocks, n, k,
		       starpu_task_expected_length(task, arch, 0), gemm_cost(task, 0), starpu_worker_get_relative_speedup(arch));
		ret = starpu_task_submit(task);
		if (ret) {
			fprintf(stderr, "%s: a task could not be submitted: %s\n", argv[0], strerror(-ret));
			starpu_task_destroy(task);
			status = ret == -ENODEV ? 77 : 1;
		}
	}
	starpu_task_wait_for_all();
	starpu_data_unpartition(ha, STARPU_MAIN_RAM);
	starpu_data_unpartition(hc, STARPU_MAIN_RAM);
	starpu_data_unregister(ha);
	starpu_data_unregister(hb);
	starpu_data_unregister(hc);
	starpu_shutdown();

	for (unsigned j = 0; status == 0 && j < n; j++)
		for (unsigned i = 0; status == 0 && i < m; i++) {
			float s = 0;
			for (unsigned l = 0; l < k; l++)
				s += a[i + l * m] * b[l + j * k];
			if (s != c[i + j * m]) {
				fprintf(stderr, "%s: C(%u, %u) is %g, not %g\n", argv[0], i, j, c[i + j * m], s);
				status = 1;
			}
		}
	if (status == 0)
		printf("result correct\n");
	free(a);
	free(b);
	free(c);
	return status;
}
