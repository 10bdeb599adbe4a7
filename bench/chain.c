/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * chain: N empty tasks chained with tags (task i waits for task i-1), all
 * submitted before the first one runs: task 0 waits on a gate tag that the
 * program notifies (starpu_tag_notify_from_apps) once everything is
 * submitted. Prints the submission cost and the execution cost per task
 * separately, and their sum.
 *
 * -t 1 (with STARPU_FXT_TRACE=1): what recording a trace adds, measured in
 * one process. Recording starts stopped (starpu_fxt_autostart_profiling(0));
 * the warm-up is recorded, then each repetition runs twice, recording
 * stopped for one and started for the other (starpu_fxt_stop_profiling(),
 * starpu_fxt_start_profiling()), in turn first and second. Prints
 * chain.total for the unrecorded runs, chain.traced.total for the recorded
 * ones and chain.trace_added, each repetition's difference: the two runs of
 * a pair share the process, its threads' places and the machine's moment.
 */
#include "bench.h"
#include <starpu_fxt.h>
#include <stdbool.h>

/* One repetition with the trace recorded (-t): its submission and execution per task. */
static double recorded_run(long ntasks)
{
	double submit, exec;
	starpu_fxt_start_profiling();
	bench_run_chain(ntasks, &submit, &exec, NULL);
	return submit + exec;
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 100000, 5, 't', "\n  -t 1            with STARPU_FXT_TRACE=1: each repetition unrecorded and recorded, in one process");
	bool alternate = o.extra && bench_parse_long("alternation (-t)", o.extra, 0) > 0;
	if (alternate)
		starpu_fxt_autostart_profiling(0);
	bench_starpu_init();
	bench_header("chain: tasks chained with tags, all submitted before the first runs", &o);

	double submit[BENCH_MAX_SAMPLES], exec[BENCH_MAX_SAMPLES], total[BENCH_MAX_SAMPLES];
	double traced[BENCH_MAX_SAMPLES], added[BENCH_MAX_SAMPLES];
	/* Warm-up at full size: the timed runs find memory and free lists ready (and, recorded, each thread its trace buffer). */
	if (alternate)
		starpu_fxt_start_profiling();
	bench_warmup_chain(o.ntasks < 100000 ? o.ntasks : 100000);
	for (int r = 0; r < o.reps; r++)
	{
		/* With -t, the recorded run comes first in odd repetitions, second in even ones. */
		if (alternate && r % 2)
			traced[r] = recorded_run(o.ntasks);
		if (alternate)
			starpu_fxt_stop_profiling();
		bench_run_chain(o.ntasks, &submit[r], &exec[r], NULL);
		total[r] = submit[r] + exec[r];
		if (alternate && !(r % 2))
			traced[r] = recorded_run(o.ntasks);
		if (alternate)
			added[r] = traced[r] - total[r];
	}
	bench_report("chain.submit", "us/task", submit, o.reps);
	bench_report("chain.exec", "us/task", exec, o.reps);
	bench_report("chain.total", "us/task", total, o.reps);
	if (alternate)
	{
		bench_report("chain.traced.total", "us/task", traced, o.reps);
		bench_report("chain.trace_added", "us/task", added, o.reps);
	}
	starpu_shutdown();
	return 0;
}
