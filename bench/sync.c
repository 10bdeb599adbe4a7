/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sync: N synchronous empty tasks, one at a time: starpu_task_submit()
 * returns once the task has run, so each task pays the whole round trip
 * (submission, scheduling, wake-up of a worker, execution, completion,
 * wake-up of the submitter).
 */
#include "bench.h"

static void run_sync(struct starpu_codelet *cl, long n, double *round_trip_us)
{
	double t0 = bench_now_us();
	for (long i = 0; i < n; i++)
	{
		struct starpu_task *task = bench_empty_task();
		task->cl = cl;
		task->synchronous = 1;
		bench_check_submit(starpu_task_submit(task));
		/* Checked warm-up: a synchronous submission returns after its task ran. */
		if (cl == &bench_check_cl && __atomic_load_n(&bench_check_ran, __ATOMIC_SEQ_CST) != i + 1)
			bench_die("RUNTIME BUG: synchronous task %ld: starpu_task_submit returned before it ran", i);
	}
	*round_trip_us = (bench_now_us() - t0) / n;
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 20000, 5, 0, NULL);
	bench_starpu_init();
	bench_header("sync: synchronous tasks, one at a time", &o);

	double round_trip[BENCH_MAX_SAMPLES] = { 0 }, ignored;
	bench_check_start(0);
	run_sync(&bench_check_cl, o.ntasks < 2000 ? o.ntasks : 2000, &ignored);
	for (int r = 0; r < o.reps; r++)
		run_sync(&bench_empty_cl, o.ntasks, &round_trip[r]);
	bench_report("sync.total", "us/task", round_trip, o.reps);
	starpu_task_wait_for_all();
	starpu_shutdown();
	return 0;
}
