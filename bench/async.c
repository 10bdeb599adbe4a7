/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * async: N independent empty tasks submitted, then starpu_task_wait_for_all().
 * Prints the submission cost and the total (submission to completion) cost
 * per task.
 */
#include "bench.h"

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 100000, 5, 0, NULL);
	bench_starpu_init();
	bench_header("async: independent tasks, then starpu_task_wait_for_all", &o);

	double submit[BENCH_MAX_SAMPLES], total[BENCH_MAX_SAMPLES];
	/* Warm-up at full size: the timed runs find memory and free lists ready. */
	bench_warmup_async(o.ntasks < 100000 ? o.ntasks : 100000);
	for (int r = 0; r < o.reps; r++)
		bench_run_async(o.ntasks, &submit[r], &total[r]);
	bench_report("async.submit", "us/task", submit, o.reps);
	bench_report("async.total", "us/task", total, o.reps);
	starpu_shutdown();
	return 0;
}
