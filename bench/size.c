/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * size: how long must a task be for the runtime's overhead to vanish?
 * Busy-wait tasks of 4, 16, 64, 256 and 1024 µs, all submitted then waited
 * for, on 1..ncpu workers (or on -w workers only). For each size and worker
 * count it prints
 *   size.<len>us.overhead  worker time lost per task, µs: (w*T - N*len) / N
 *   size.<len>us.efficiency  N*len / (w*T): 1.0 is perfect parallel use
 * where T is the wall time from the first submission to the end of
 * starpu_task_wait_for_all(). -t sets the busy work per point and worker.
 */
#include "bench.h"

static const double task_lengths_us[] = { 4, 16, 64, 256, 1024 };
#define NLENGTHS (sizeof(task_lengths_us) / sizeof(task_lengths_us[0]))

static void busy_wait_func(void *buffers[], void *cl_arg)
{
	(void) buffers;
	double end = bench_now_us() + *(const double *) cl_arg;
	while (bench_now_us() < end)
		;
}

static struct starpu_codelet busy_cl =
{
	.where = STARPU_CPU,
	.cpu_funcs = { busy_wait_func },
	.nbuffers = 0,
	.name = "bench_busy_wait",
};

struct size_setting
{
	const struct bench_options *options;
	long work_us;	/* busy work per point and worker */
	int workers;
};

static double run_point(const double *length_us, long n)
{
	double t0 = bench_now_us();
	for (long i = 0; i < n; i++)
	{
		struct starpu_task *task = starpu_task_create();
		task->cl = &busy_cl;
		/* cl_arg_size 0: the runtime passes the pointer, copies nothing. */
		task->cl_arg = (void *) length_us;
		bench_check_submit(starpu_task_submit(task));
	}
	starpu_task_wait_for_all();
	return bench_now_us() - t0;
}

static void run_workers(void *arg, int fd)
{
	const struct size_setting *s = arg;
	const struct bench_options *o = s->options;
	char text[16];
	snprintf(text, sizeof(text), "%d", s->workers);
	setenv("STARPU_NCPU", text, 1);
	bench_starpu_init();
	int w = (int) starpu_cpu_worker_get_count();
	bench_header("size: busy-wait tasks of 4..1024 us; overhead per task and parallel efficiency", o);

	for (unsigned k = 0; k < NLENGTHS; k++)
	{
		double len = task_lengths_us[k];
		long n = (long) (s->work_us * w / len);
		if (n < 32) n = 32;
		if (n > o->ntasks) n = o->ntasks;
		double overhead[BENCH_MAX_SAMPLES], efficiency[BENCH_MAX_SAMPLES];
		run_point(&task_lengths_us[k], n / 10 > 0 ? n / 10 : 1);
		for (int r = 0; r < o->reps; r++)
		{
			double wall = run_point(&task_lengths_us[k], n);
			overhead[r] = (w * wall - n * len) / n;
			efficiency[r] = n * len / (w * wall);
		}
		char metric[64];
		snprintf(metric, sizeof(metric), "size.%gus.overhead", len);
		bench_report(metric, "us/task", overhead, o->reps);
		snprintf(metric, sizeof(metric), "size.%gus.efficiency", len);
		bench_report(metric, "ratio", efficiency, o->reps);
	}
	starpu_shutdown();
	bench_write_all(fd, &w, sizeof(w));
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 50000, 3, 't',
		    " [-t MS]\n  -t MS           busy work per point and worker, in ms (default 100); -n caps the task count");
	struct size_setting s = { &o, 100000, 0 };
	if (o.extra)
		s.work_us = bench_parse_long("busy work (-t, ms)", o.extra, 1) * 1000;

	int first = o.workers, last = o.workers;
	if (o.workers == 0)
	{
		first = 1;
		last = (int) sysconf(_SC_NPROCESSORS_ONLN);
	}
	for (s.workers = first; s.workers <= last; s.workers++)
	{
		int started = 0;
		if (bench_in_child(run_workers, &s, &started, sizeof(started)) != sizeof(started))
			bench_die("the run on %d worker(s) failed", s.workers);
	}
	return 0;
}
