/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Regression-based performance models (StarPU's tests/perfmodels/
 * regression_based.c, our own): memset() on vectors of 8 sizes from 16 KiB to
 * 2 MiB is calibrated with a linear regression model (a * size^b) and a
 * non-linear one (a * size^b + c), both with an energy model beside them. Then,
 * as the seed shows, the models are asked for estimates without running
 * anything (in a second start, where the models are read back): a task on handles registered with no buffer (node -1), given to
 * starpu_task_expected_length(), starpu_task_expected_energy() and
 * starpu_task_footprint(), then destroyed.
 *
 *   regression_based
 *
 * The models' files are named memset_regression_based,
 * non_linear_memset_regression_based and their _energy twins
 * (starpu_perfmodel_display, starpu_perfmodel_plot -s ...). Exits with 0 when
 * every model gives a finite, non-negative estimate for every size, 1
 * otherwise, 77 without a CPU worker.
 */
#include <starpu.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSIZES 8
#define PER_SIZE 12

static void memset_cpu(void *buffers[], void *arg)
{
	(void)arg;
	memset((void *)STARPU_VECTOR_GET_PTR(buffers[0]), 42, STARPU_VECTOR_GET_NX(buffers[0]));
}

/* The energy: one joule per MiB written, what a meter would report for it. */
static double memset_energy(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	(void)arch;
	(void)nimpl;
	return starpu_data_get_size(task->handles[0]) / (1024.0 * 1024.0);
}

static struct starpu_perfmodel model = { .type = STARPU_REGRESSION_BASED, .symbol = "memset_regression_based" };
static struct starpu_perfmodel nl_model = { .type = STARPU_NL_REGRESSION_BASED, .symbol = "non_linear_memset_regression_based" };
static struct starpu_perfmodel energy_model = { .type = STARPU_REGRESSION_BASED, .symbol = "memset_regression_based_energy" };
static struct starpu_perfmodel nl_energy_model = { .type = STARPU_NL_REGRESSION_BASED,
						   .symbol = "non_linear_memset_regression_based_energy" };

static struct starpu_codelet memset_cl = {
	.cpu_funcs = { memset_cpu }, .cpu_funcs_name = { "memset_cpu" }, .nbuffers = 1, .modes = { STARPU_W },
	.model = &model, .energy_model = &energy_model, .name = "memset",
};
static struct starpu_codelet nl_memset_cl = {
	.cpu_funcs = { memset_cpu }, .cpu_funcs_name = { "memset_cpu" }, .nbuffers = 1, .modes = { STARPU_W },
	.model = &nl_model, .energy_model = &nl_energy_model, .name = "memset",
};

static unsigned size_of(unsigned s)
{
	return 16384u << s;
}

/* Runs PER_SIZE tasks of cl per size; the runtime measures each, the energy model's values are given. */
static int calibrate(struct starpu_codelet *cl, char *buffer)
{
	for (unsigned s = 0; s < NSIZES; s++) {
		starpu_data_handle_t handle;
		starpu_vector_data_register(&handle, STARPU_MAIN_RAM, (uintptr_t)buffer, size_of(s), 1);
		for (unsigned k = 0; k < PER_SIZE; k++) {
			struct starpu_task *task = starpu_task_create();
			task->cl = cl;
			task->handles[0] = handle;
			int ret = starpu_task_submit(task);
			if (ret) {
				fprintf(stderr, "regression_based: starpu_task_submit: %s\n", strerror(-ret));
				return 1;
			}
			/* The energy a meter would have measured for this run, given on a task of its own
			 * (the one submitted is destroyed when it completes). */
			struct starpu_task *twin = starpu_task_create();
			twin->cl = cl;
			twin->handles[0] = handle;
			twin->destroy = 0;
			int cpuid = starpu_worker_get_by_type(STARPU_CPU_WORKER, 0);
			struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(cpuid, STARPU_NMAX_SCHED_CTXS);
			starpu_perfmodel_update_history(cl->energy_model, twin, arch, (unsigned)cpuid, 0, memset_energy(twin, arch, 0));
			starpu_task_destroy(twin);
		}
		starpu_data_unregister(handle);
	}
	return starpu_task_wait_for_all() ? 1 : 0;
}

/* The seed's estimate without execution, for each size. */
static int estimate(struct starpu_codelet *cl, struct starpu_perfmodel_arch *arch)
{
	int failed = 0;
	for (unsigned s = 0; s < NSIZES; s++) {
		starpu_data_handle_t handle;
		starpu_vector_data_register(&handle, -1, 0, size_of(s), 1);
		struct starpu_task *task = starpu_task_create();
		task->cl = cl;
		task->handles[0] = handle;
		double length = starpu_task_expected_length(task, arch, 0), energy = starpu_task_expected_energy(task, arch, 0);
		uint32_t footprint = starpu_task_footprint(cl->model, task, arch, 0);
		printf("%s\t%u bytes\tfootprint %08x\texpected length %.3f us\texpected energy %.4f J\n", cl->model->symbol,
		       size_of(s), footprint, length, energy);
		if (!isfinite(length) || length < 0 || !isfinite(energy) || energy < 0) {
			fprintf(stderr, "regression_based: %s has no estimate for %u bytes after its calibration\n", cl->model->symbol,
				size_of(s));
			failed = 1;
		}
		starpu_task_destroy(task);
		starpu_data_unregister(handle);
	}
	return failed;
}

static int start(void)
{
	struct starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncuda = conf.nopencl = 0;
	conf.ncpus = 1;
	conf.calibrate = 1;
	int ret = starpu_init(&conf);
	if (ret && ret != -ENODEV)
		fprintf(stderr, "regression_based: starpu_init failed: %s\n", strerror(-ret));
	return ret;
}

int main(void)
{
	int ret = start();
	if (ret)
		return ret == -ENODEV ? 77 : 1;
	int cpuid = starpu_worker_get_by_type(STARPU_CPU_WORKER, 0);
	char *buffer = cpuid < 0 ? NULL : malloc(size_of(NSIZES - 1));
	if (!buffer) {
		starpu_shutdown();
		return cpuid < 0 ? 77 : 1;
	}
	int failed = calibrate(&memset_cl, buffer) || calibrate(&nl_memset_cl, buffer);
	free(buffer);
	/* The models are saved (the non-linear ones fitted) at shutdown and read again at the next start. */
	starpu_shutdown();
	if (failed)
		return 1;
	if (start())
		return 1;
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(cpuid, STARPU_NMAX_SCHED_CTXS);
	failed = estimate(&memset_cl, arch) | estimate(&nl_memset_cl, arch);
	starpu_shutdown();
	return failed;
}
