/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * omp_async: the OpenMP-tasks equivalent of async, for comparison with
 * libgomp: N independent empty tasks created by one thread of a team of -w + 1
 * threads (the -w workers and the creating thread), then a taskwait.
 */
#define BENCH_NO_STARPU
#include "bench.h"
#include <omp.h>

static __attribute__((noinline)) void empty_body(void)
{
	__asm__ volatile("" ::: "memory");
}

static void run_async(long n, int threads, double *submit_us, double *total_us)
{
	double t0 = 0, t1 = 0, t2 = 0;
#pragma omp parallel num_threads(threads)
#pragma omp single
	{
		t0 = bench_now_us();
		for (long i = 0; i < n; i++)
		{
#pragma omp task
			empty_body();
		}
		t1 = bench_now_us();
#pragma omp taskwait
		t2 = bench_now_us();
	}
	*submit_us = (t1 - t0) / n;
	*total_us = (t2 - t0) / n;
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 100000, 5, 0, NULL);
	/* W workers: a team of W + 1 threads, as StarPU's W workers plus the submitting thread. */
	int threads = (o.workers > 0 ? o.workers : omp_get_num_procs()) + 1;
	printf("# omp_async: independent tasks, then taskwait | libgomp (OpenMP %d) | %d worker(s) + the creating thread | %ld tasks x %d repetitions\n",
	       _OPENMP, threads - 1, o.ntasks, o.reps);

	double submit[BENCH_MAX_SAMPLES], total[BENCH_MAX_SAMPLES], ignored;
	run_async(o.ntasks < 100000 ? o.ntasks : 100000, threads, &ignored, &ignored);
	for (int r = 0; r < o.reps; r++)
		run_async(o.ntasks, threads, &submit[r], &total[r]);
	bench_report("async.submit", "us/task", submit, o.reps);
	bench_report("async.total", "us/task", total, o.reps);
	return 0;
}
