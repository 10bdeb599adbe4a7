/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The profiling API in one program (what StarPU's examples/profiling/ shows):
 * profiling is turned on with starpu_profiling_status_set(), tasks run, then
 * each task's starpu_profiling_task_info gives its delay (submission to
 * start) and its length (start to end), and each worker's
 * starpu_profiling_worker_get_info() its time split and task count.
 *
 *   profiling [-n ntasks] [-l length_us] [-h]
 *
 * ntasks (default 100) tasks each spin for length_us (default 50)
 * microseconds.
 */
#include <starpu.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void spin(void *buffers[], void *arg)
{
	(void)buffers;
	double length = *(double *)arg, start = starpu_timing_now();
	while (starpu_timing_now() - start < length)
		;
}

static struct starpu_codelet spin_cl = {
	.cpu_funcs = { spin }, .cpu_funcs_name = { "spin" }, .nbuffers = 0, .name = "spin",
};

static int parse(const char *prog, const char *opt, const char *value, long max, long *out)
{
	char *end;
	errno = 0;
	long v = value ? strtol(value, &end, 10) : -1;
	if (!value || errno || end == value || *end || v < 1 || v > max) {
		fprintf(stderr, "%s: %s takes an integer from 1 to %ld, not '%s'\n", prog, opt, max, value ? value : "");
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	long ntasks = 100, length_us = 50;
	for (int i = 1; i < argc; i++) {
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "-n")) {
			if (parse(argv[0], "-n", value, 1000000, &ntasks))
				return 1;
			i++;
		} else if (!strcmp(argv[i], "-l")) {
			if (parse(argv[0], "-l", value, 10000000, &length_us))
				return 1;
			i++;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("Usage: %s [-n ntasks] [-l length_us]\n"
			       "Runs ntasks tasks (default 100) of length_us microseconds (default 50) with profiling on,\n"
			       "then prints the tasks' average delay and length and each worker's profile.\n", argv[0]);
			return 0;
		} else {
			fprintf(stderr, "%s: unknown option '%s' (-h lists them)\n", argv[0], argv[i]);
			return 1;
		}
	}

	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	if (ret) {
		fprintf(stderr, "%s: starpu_init failed: %s\n", argv[0], strerror(-ret));
		return 1;
	}
	/* On from here: the measures of the workers start now. */
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);

	double length = (double)length_us;
	struct starpu_task **tasks = calloc((size_t)ntasks, sizeof(*tasks));
	if (!tasks) {
		starpu_shutdown();
		return 1;
	}
	for (long i = 0; i < ntasks; i++) {
		struct starpu_task *task = starpu_task_create();
		task->cl = &spin_cl;
		task->cl_arg = &length;
		task->cl_arg_size = sizeof(length);
		task->destroy = 0; /* read after completion */
		tasks[i] = task;
		ret = starpu_task_submit(task);
		if (ret) {
			fprintf(stderr, "%s: starpu_task_submit: %s\n", argv[0], strerror(-ret));
			ntasks = i;
			starpu_task_destroy(task);
			break;
		}
	}
	starpu_task_wait_for_all();

	double delay_sum = 0, length_sum = 0;
	for (long i = 0; i < ntasks; i++) {
		struct starpu_profiling_task_info *info = tasks[i]->profiling_info;
		if (info) {
			delay_sum += starpu_timing_timespec_delay_us(&info->submit_time, &info->start_time);
			length_sum += starpu_timing_timespec_delay_us(&info->start_time, &info->end_time);
		}
		starpu_task_destroy(tasks[i]);
	}
	free(tasks);
	if (ntasks > 0) {
		printf("Avg. delay : %2.2lf us\n", delay_sum / ntasks);
		printf("Avg. length : %2.2lf us\n", length_sum / ntasks);
	}

	for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
		struct starpu_profiling_worker_info info;
		if (starpu_profiling_worker_get_info((int)w, &info))
			continue;
		char name[64];
		starpu_worker_get_name((int)w, name, sizeof(name));
		double total = starpu_timing_timespec_to_us(&info.total_time) / 1000.0;
		double executing = starpu_timing_timespec_to_us(&info.executing_time) / 1000.0;
		double sleeping = starpu_timing_timespec_to_us(&info.sleeping_time) / 1000.0;
		double overhead = total - executing - sleeping;
		printf("Worker %s:\n", name);
		printf("\ttotal time : %.2lf ms\n", total);
		printf("\texec time  : %.2lf ms (%.2f %%)\n", executing, total > 0 ? 100.0 * executing / total : 0.0);
		printf("\tblocked time  : %.2lf ms (%.2f %%)\n", sleeping, total > 0 ? 100.0 * sleeping / total : 0.0);
		printf("\toverhead time: %.2lf ms (%.2f %%)\n", overhead, total > 0 ? 100.0 * overhead / total : 0.0);
		printf("\t%d task(s)\n", info.executed_tasks);
	}
	starpu_shutdown();
	return 0;
}
