/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * omp_chain: the OpenMP-tasks equivalent of chain, for comparison with
 * libgomp: N empty tasks chained by depend(inout) on one object, created by
 * one thread of a team of -w + 1 threads (the -w workers and the creating
 * thread, which also runs tasks), then a taskwait. OpenMP cannot hold
 * the first task back, and libgomp runs tasks at once when too many are
 * queued, so "submit" here may include some execution; "total" is the
 * figure to compare.
 */
#define BENCH_NO_STARPU
#include "bench.h"
#include <omp.h>

static int chain_object;

/* Not inlined, so the task body is a real call as in the StarPU version. */
static __attribute__((noinline)) void empty_body(void)
{
	__asm__ volatile("" ::: "memory");
}

static void run_chain(long n, int threads, double *submit_us, double *exec_us)
{
	double t0 = 0, t1 = 0, t2 = 0;
#pragma omp parallel num_threads(threads)
#pragma omp single
	{
		t0 = bench_now_us();
		for (long i = 0; i < n; i++)
		{
#pragma omp task depend(inout: chain_object)
			empty_body();
		}
		t1 = bench_now_us();
#pragma omp taskwait
		t2 = bench_now_us();
	}
	*submit_us = (t1 - t0) / n;
	*exec_us = (t2 - t1) / n;
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 100000, 5, 0, NULL);
	/* W workers: a team of W + 1 threads, as StarPU's W workers plus the submitting thread. */
	int threads = (o.workers > 0 ? o.workers : omp_get_num_procs()) + 1;
	printf("# omp_chain: tasks chained with depend(inout) | libgomp (OpenMP %d) | %d worker(s) + the creating thread | %ld tasks x %d repetitions\n",
	       _OPENMP, threads - 1, o.ntasks, o.reps);

	double submit[BENCH_MAX_SAMPLES], exec[BENCH_MAX_SAMPLES], total[BENCH_MAX_SAMPLES], ignored;
	run_chain(o.ntasks < 100000 ? o.ntasks : 100000, threads, &ignored, &ignored);
	for (int r = 0; r < o.reps; r++)
	{
		run_chain(o.ntasks, threads, &submit[r], &exec[r]);
		total[r] = submit[r] + exec[r];
	}
	bench_report("chain.submit", "us/task", submit, o.reps);
	bench_report("chain.exec", "us/task", exec, o.reps);
	bench_report("chain.total", "us/task", total, o.reps);
	return 0;
}
