/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chain: N empty tasks chained with tags (task i waits for task i-1), all
 * submitted before the first one runs: task 0 waits on a gate tag that the
 * program notifies (starpu_tag_notify_from_apps) once everything is
 * submitted. Prints the submission cost and the execution cost per task
 * separately, and their sum.
 */
#include "bench.h"

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 100000, 5, 0, NULL);
	bench_starpu_init();
	bench_header("chain: tasks chained with tags, all submitted before the first runs", &o);

	double submit[BENCH_MAX_SAMPLES], exec[BENCH_MAX_SAMPLES], total[BENCH_MAX_SAMPLES];
	/* Warm-up at full size: the timed runs find memory and free lists ready. */
	bench_warmup_chain(o.ntasks < 100000 ? o.ntasks : 100000);
	for (int r = 0; r < o.reps; r++)
	{
		bench_run_chain(o.ntasks, &submit[r], &exec[r], NULL);
		total[r] = submit[r] + exec[r];
	}
	bench_report("chain.submit", "us/task", submit, o.reps);
	bench_report("chain.exec", "us/task", exec, o.reps);
	bench_report("chain.total", "us/task", total, o.reps);
	starpu_shutdown();
	return 0;
}
