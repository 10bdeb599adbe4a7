/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A multiple-regression model (STARPU_MULTIPLE_REGRESSION_BASED, seed 003
 * section 3.3): the kernel's work grows with M*N*K and M*N, three parameters
 * the task carries (not its data), which the model's parameters function
 * extracts. With
 *
 *   T = a + b * M^1 N^1 K^1 + c * M^1 N^1 K^0
 *
 * in `combinations`, the runtime fits a, b, c by least squares over the
 * measured executions when the model is saved, and keeps the samples in
 * .starpu/sampling/codelets/tmp/mlr_example.out. A second model without
 * combinations only collects its samples (for starpu_mlr_analysis).
 *
 * Run it calibrating (STARPU_CALIBRATE=1): it submits the tasks, saves the
 * models (the fit), then prints the prediction for sizes never run, as
 * "expected length for M=.. N=.. K=..: X us" (or "not fitted" with why).
 *
 *   mlr [-ntasks T]
 */
#include <starpu.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void parameters(struct starpu_task *task, double *p)
{
	unsigned m, n, k;
	starpu_codelet_unpack_args(task->cl_arg, &m, &n, &k);
	p[0] = m, p[1] = n, p[2] = k;
}

/* M*N*K multiply-adds, plus M*N to write the result. */
static void mnk_kernel(void *buffers[], void *arg)
{
	(void)buffers;
	unsigned m, n, k;
	starpu_codelet_unpack_args(arg, &m, &n, &k);
	volatile double sink = 0;
	for (unsigned i = 0; i < m; i++)
		for (unsigned j = 0; j < n; j++) {
			double s = 0;
			for (unsigned l = 0; l < k; l++)
				s += (double)(i + l) * (double)(j + 1);
			sink += s;
		}
	(void)sink;
}

static const char *names[] = { "M", "N", "K" };
static unsigned mnk[3] = { 1, 1, 1 }, mn[3] = { 1, 1, 0 };
static unsigned *combinations[] = { mnk, mn };

static struct starpu_perfmodel fitted_model = {
	.type = STARPU_MULTIPLE_REGRESSION_BASED,
	.symbol = "mlr_example",
	.parameters = parameters,
	.nparameters = 3,
	.parameters_names = names,
	.ncombinations = 2,
	.combinations = combinations,
};

/* The same parameters, no equation: samples only, for an analysis to choose one. */
static struct starpu_perfmodel samples_model = {
	.type = STARPU_MULTIPLE_REGRESSION_BASED,
	.symbol = "mlr_example_samples",
	.parameters = parameters,
	.nparameters = 3,
	.parameters_names = names,
};

static struct starpu_codelet fitted_cl = {
	.cpu_funcs = { mnk_kernel }, .cpu_funcs_name = { "mnk_kernel" }, .nbuffers = 0, .model = &fitted_model, .name = "mlr_fitted",
};
static struct starpu_codelet samples_cl = {
	.cpu_funcs = { mnk_kernel }, .cpu_funcs_name = { "mnk_kernel" }, .nbuffers = 0, .model = &samples_model, .name = "mlr_samples",
};

int main(int argc, char **argv)
{
	unsigned long ntasks = 60;
	for (int i = 1; i < argc; i++) {
		char *end;
		if (!strcmp(argv[i], "-ntasks") && i + 1 < argc && (ntasks = strtoul(argv[i + 1], &end, 10)) > 0 && !*end) {
			i++;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s [-ntasks T]\n", argv[0]);
			return 0;
		} else {
			fprintf(stderr, "%s: bad option '%s' (usage: %s [-ntasks T], T > 0)\n", argv[0], argv[i], argv[0]);
			return 2;
		}
	}
	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");

	int status = 0;
	for (unsigned long t = 0; t < ntasks && status == 0; t++) {
		unsigned m = 8 + (unsigned)(t * 7 % 40), n = 8 + (unsigned)(t * 13 % 40), k = 4 + (unsigned)(t * 5 % 60);
		for (int c = 0; c < 2 && status == 0; c++) {
			ret = starpu_task_insert(c ? &samples_cl : &fitted_cl, STARPU_VALUE, &m, sizeof(m), STARPU_VALUE, &n, sizeof(n),
						 STARPU_VALUE, &k, sizeof(k), 0);
			if (ret) {
				fprintf(stderr, "%s: a task could not be submitted: %s\n", argv[0], strerror(-ret));
				status = ret == -ENODEV ? 77 : 1;
			}
		}
	}
	starpu_task_wait_for_all();
	/* The fit (as at shutdown), then predictions for sizes never run. */
	starpu_save_history_based_model(&fitted_model);
	starpu_save_history_based_model(&samples_model);
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, 0);
	static const unsigned probes[][3] = { { 64, 64, 64 }, { 100, 10, 50 } };
	for (unsigned p = 0; status == 0 && p < sizeof(probes) / sizeof(probes[0]); p++) {
		unsigned m = probes[p][0], n = probes[p][1], k = probes[p][2];
		struct starpu_task *task = starpu_task_create();
		task->cl = &fitted_cl;
		starpu_codelet_pack_args(&task->cl_arg, &task->cl_arg_size, STARPU_VALUE, &m, sizeof(m), STARPU_VALUE, &n, sizeof(n),
					 STARPU_VALUE, &k, sizeof(k), 0);
		task->cl_arg_free = 1;
		double us = starpu_task_expected_length(task, arch, 0);
		if (isnan(us))
			printf("expected length for M=%u N=%u K=%u: not fitted (see the message above; run with STARPU_CALIBRATE=1)\n", m, n, k);
		else
			printf("expected length for M=%u N=%u K=%u: %.3f us\n", m, n, k, us);
		starpu_task_destroy(task);
	}
	starpu_shutdown();
	return status;
}
