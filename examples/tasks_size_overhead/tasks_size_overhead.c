/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How long must a task be for the runtime's overhead not to matter? For task
 * lengths from 4 to 4096 us (doubling), runs ntasks tasks per worker that
 * spin for that long, with 1, 2, ... up to every CPU worker, and prints the
 * wall time of each run after the time the same tasks take called in a row
 * ("seq"). tasks_size_overhead.sh turns the table into the speedup plot.
 *
 *   tasks_size_overhead [-i ntasks] [-b nbuffers] [-B total_nbuffers] [-h]
 *
 * -b gives every task nbuffers read-only vector handles, taken among
 * total_nbuffers registered ones (-B, default nbuffers) in turn.
 */
#include <starpu.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_FIRST 4
#define SIZE_LAST 4096

static unsigned ntasks = 64, nbuffers, total_nbuffers;

static void spin(void *buffers[], void *cl_arg)
{
	(void)buffers;
	double length = (double)(uintptr_t)cl_arg, start = starpu_timing_now();
	while (starpu_timing_now() - start < length)
		;
}

static struct starpu_codelet spin_cl = {
	.cpu_funcs = { spin },
	.cpu_funcs_name = { "spin" },
	.modes = { STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_R },
	.name = "spin",
};

static int parse_count(const char *prog, char opt, const char *value, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = value ? strtoul(value, &end, 10) : 0;
	if (!value || errno || end == value || *end || value[0] == '-' || v > max) {
		fprintf(stderr, "%s: -%c takes an integer from 0 to %u, not '%s'\n", prog, opt, max, value ? value : "");
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int parse_args(int argc, char **argv)
{
	const char *prog = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
		int ret;
		if (!strcmp(arg, "-h")) {
			printf("usage: %s [-i ntasks] [-b nbuffers] [-B total_nbuffers] [-h]\n", prog);
			return 1;
		} else if (!strcmp(arg, "-i"))
			ret = parse_count(prog, 'i', value, 1u << 20, &ntasks);
		else if (!strcmp(arg, "-b"))
			ret = parse_count(prog, 'b', value, 8, &nbuffers);
		else if (!strcmp(arg, "-B"))
			ret = parse_count(prog, 'B', value, 1u << 16, &total_nbuffers);
		else {
			fprintf(stderr, "%s: unknown option '%s' (usage: %s [-i ntasks] [-b nbuffers] [-B total_nbuffers] [-h])\n",
				prog, arg, prog);
			return -1;
		}
		if (ret)
			return -1;
		i++;
	}
	if (ntasks == 0) {
		fprintf(stderr, "%s: -i 0 runs no task: give at least 1\n", prog);
		return -1;
	}
	if (nbuffers && total_nbuffers == 0)
		total_nbuffers = nbuffers;
	if (nbuffers > total_nbuffers) {
		fprintf(stderr, "%s: -b %u buffers per task need -B %u or more registered buffers\n", prog, nbuffers, nbuffers);
		return -1;
	}
	spin_cl.nbuffers = (int)nbuffers;
	return 0;
}

/* Submits ntasks * ncpus tasks of `length` us and waits: the wall time in us, or a negative error. */
static double run(unsigned ncpus, unsigned length, starpu_data_handle_t *handles)
{
	unsigned next = 0;
	double start = starpu_timing_now();
	for (unsigned t = 0; t < ntasks * ncpus; t++) {
		struct starpu_task *task = starpu_task_create();
		task->cl = &spin_cl;
		task->cl_arg = (void *)(uintptr_t)length;
		for (unsigned b = 0; b < nbuffers; b++)
			task->handles[b] = handles[next++ % total_nbuffers];
		int ret = starpu_task_submit(task);
		if (ret) {
			starpu_task_destroy(task);
			starpu_task_wait_for_all();
			return ret;
		}
	}
	starpu_task_wait_for_all();
	return starpu_timing_now() - start;
}

int main(int argc, char **argv)
{
	struct starpu_conf conf;
	int ret = parse_args(argc, argv);
	if (ret)
		return ret > 0 ? 0 : 2;

	starpu_conf_init(&conf);
	conf.ncuda = 0;
	conf.nopencl = 0;
	ret = starpu_init(&conf);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	unsigned totcpus = starpu_cpu_worker_get_count();
	starpu_shutdown();

	float *buffers = calloc(total_nbuffers ? total_nbuffers * 16 : 1, sizeof(float));
	starpu_data_handle_t *handles = calloc(total_nbuffers ? total_nbuffers : 1, sizeof(*handles));
	if (!buffers || !handles) {
		fprintf(stderr, "%s: out of memory for %u buffers\n", argv[0], total_nbuffers);
		return 1;
	}

	printf("# tasks : %u buffers : %u total_nbuffers : %u\n", ntasks, nbuffers, total_nbuffers);
	printf("# ncpus\t");
	for (unsigned size = SIZE_FIRST; size <= SIZE_LAST; size *= 2)
		printf("%u iters(us)\ttotal(s)\t", size);
	printf("\n\"seq\"\t");
	for (unsigned size = SIZE_FIRST; size <= SIZE_LAST; size *= 2) {
		double start = starpu_timing_now();
		for (unsigned t = 0; t < ntasks; t++)
			spin(NULL, (void *)(uintptr_t)size);
		double elapsed = starpu_timing_now() - start;
		printf("%.0f\t%f\t", elapsed / ntasks, elapsed / 1e6);
	}
	printf("\n");
	fflush(stdout);

	int status = 0;
	for (unsigned ncpus = 1; ncpus <= totcpus && status == 0; ncpus++) {
		conf.ncpus = (int)ncpus;
		ret = starpu_init(&conf);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
		for (unsigned b = 0; b < total_nbuffers; b++)
			starpu_vector_data_register(&handles[b], STARPU_MAIN_RAM, (uintptr_t)&buffers[b * 16], 16, sizeof(float));
		printf("%u\t", ncpus);
		for (unsigned size = SIZE_FIRST; size <= SIZE_LAST && status == 0; size *= 2) {
			double elapsed = run(ncpus, size, handles);
			if (elapsed < 0) {
				fprintf(stderr, "%s: task submission failed: %s\n", argv[0], strerror((int)-elapsed));
				status = 1;
			} else
				printf("%u\t%f\t", size, elapsed / 1e6);
			fflush(stdout);
		}
		printf("\n");
		for (unsigned b = 0; b < total_nbuffers; b++)
			starpu_data_unregister(handles[b]);
		starpu_shutdown();
	}
	free(handles);
	free(buffers);
	return status;
}
