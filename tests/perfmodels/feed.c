/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Measurements provided by the application (StarPU's tests/perfmodels/feed.c,
 * our own): the lengths of tasks run elsewhere are given to the performance
 * models with starpu_perfmodel_update_history(), without running anything,
 * and the models then predict them. A history-based model gets 10 lengths per
 * vector size (after a first one it drops) (a 1024-byte vector takes 99.5 us, a 2048-byte one 199 us), a
 * regression-based one the same, and the predictions are printed and checked:
 * the history's are the means, the regression's the line through them.
 *
 *   feed
 *
 * Exits with 0 when each prediction is the expected one, 1 otherwise, 77
 * without a CPU worker.
 */
#include <starpu.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void never_run(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

static struct starpu_perfmodel history_model = { .type = STARPU_HISTORY_BASED, .symbol = "feed_history" };
static struct starpu_perfmodel regression_model = { .type = STARPU_REGRESSION_BASED, .symbol = "feed_regression" };

static struct starpu_codelet history_cl = {
	.cpu_funcs = { never_run }, .nbuffers = 1, .modes = { STARPU_W }, .model = &history_model, .name = "feed_history",
};
static struct starpu_codelet regression_cl = {
	.cpu_funcs = { never_run }, .nbuffers = 1, .modes = { STARPU_W }, .model = &regression_model, .name = "feed_regression",
};

/* A task of cl on a vector of size bytes that has no buffer anywhere: never submitted, only measured and predicted. */
static struct starpu_task *dummy_task(struct starpu_codelet *cl, unsigned size, starpu_data_handle_t *handle)
{
	starpu_vector_data_register(handle, -1, 0, size, 1);
	struct starpu_task *task = starpu_task_create();
	task->cl = cl;
	task->handles[0] = *handle;
	task->destroy = 0;
	return task;
}

static int feed_and_check(struct starpu_codelet *cl, struct starpu_perfmodel_arch *arch, int cpuid)
{
	static const unsigned sizes[2] = { 1024, 2048 };
	int failed = 0;
	/* All the measurements first, then the predictions. */
	for (unsigned s = 0; s < 2; s++) {
		starpu_data_handle_t handle;
		struct starpu_task *task = dummy_task(cl, sizes[s], &handle);
		/* A history drops the first measurement of each size (a cold run, as StarPU's do): 11 given, 10 kept. */
		for (int k = -1; k < 10; k++) {
			/* 99.05, 99.15, ... 99.95 us per KiB: the mean is 99.5 times the KiB. */
			double measured = (sizes[s] / 1024.0) * (k < 0 ? 99.5 : 99.05 + 0.1 * k);
			starpu_perfmodel_update_history(cl->model, task, arch, cpuid, 0, measured);
		}
		starpu_task_destroy(task);
		starpu_data_unregister(handle);
	}
	for (unsigned s = 0; s < 2; s++) {
		starpu_data_handle_t handle;
		struct starpu_task *task = dummy_task(cl, sizes[s], &handle);
		double expected = starpu_task_expected_length(task, arch, 0), want = (sizes[s] / 1024.0) * 99.5;
		printf("%s: %u bytes: expected length %.2f us\n", cl->model->symbol, sizes[s], expected);
		/* The history gives the mean; the regression a power law through both sizes, within 1%. */
		if (isnan(expected) || fabs(expected - want) > want / 100) {
			fprintf(stderr, "feed: %s predicts %f us for %u bytes, not %.2f\n", cl->model->symbol, expected, sizes[s], want);
			failed = 1;
		}
		starpu_task_destroy(task);
		starpu_data_unregister(handle);
	}
	return failed;
}

int main(void)
{
	struct starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncuda = conf.nopencl = 0;
	int ret = starpu_init(&conf);
	if (ret == -ENODEV)
		return 77;
	if (ret) {
		fprintf(stderr, "feed: starpu_init failed: %s\n", strerror(-ret));
		return 1;
	}
	int cpuid = starpu_worker_get_by_type(STARPU_CPU_WORKER, 0);
	if (cpuid < 0) {
		fprintf(stderr, "feed: no CPU worker\n");
		starpu_shutdown();
		return 77;
	}
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(cpuid, STARPU_NMAX_SCHED_CTXS);
	int failed = feed_and_check(&history_cl, arch, cpuid) | feed_and_check(&regression_cl, arch, cpuid);
	starpu_shutdown();
	return failed;
}
