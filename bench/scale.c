/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * scale: the chain and async workloads at growing task counts (default 10k,
 * 100k, 1M). Per-task time and peak memory per pending task should stay
 * flat as the count grows. Each count runs in a fresh process so that the
 * peak resident memory (getrusage ru_maxrss) starts from scratch:
 *   scale.<workload>.<N>.total  µs per task, first submission to completion
 *   scale.<workload>.<N>.mem    peak RSS growth over the idle runtime, bytes
 *                               per pending task
 * All N tasks are pending at the peak: the chain waits on its gate tag, and
 * the async tasks are submitted while the workers are paused
 * (starpu_pause), then released with starpu_resume.
 */
#include "bench.h"

struct scale_setting
{
	const struct bench_options *options;
	const char *workload;
	long ntasks;
	int header;
};

static void run_async_held(long n, double *total_us, double *peak_rss)
{
	double t0 = bench_now_us();
	starpu_pause();
	for (long i = 0; i < n; i++)
		bench_check_submit(starpu_task_submit(bench_empty_task()));
	*peak_rss = bench_maxrss_bytes();
	starpu_resume();
	starpu_task_wait_for_all();
	*total_us = (bench_now_us() - t0) / n;
}

static void run_count(void *arg, int fd)
{
	const struct scale_setting *s = arg;
	const struct bench_options *o = s->options;
	int is_chain = strcmp(s->workload, "chain") == 0;
	bench_starpu_init();
	if (s->header)
		bench_header("scale: chain and async (held) at growing task counts; time and memory per task", o);

	double total[BENCH_MAX_SAMPLES], submit, exec, peak;
	if (is_chain) bench_warmup_chain(1000);
	else bench_warmup_async(1000);
	double baseline = bench_maxrss_bytes();
	double mem = 0;
	for (int r = 0; r < o->reps; r++)
	{
		if (is_chain)
		{
			bench_run_chain(s->ntasks, &submit, &exec, &peak);
			total[r] = submit + exec;
		}
		else
			run_async_held(s->ntasks, &total[r], &peak);
		/* ru_maxrss never goes down: only the first repetition tells the memory. */
		if (r == 0)
			mem = (peak - baseline) / s->ntasks;
	}
	char metric[64];
	snprintf(metric, sizeof(metric), "scale.%s.%ld.total", s->workload, s->ntasks);
	bench_report(metric, "us/task", total, o->reps);
	snprintf(metric, sizeof(metric), "scale.%s.%ld.mem", s->workload, s->ntasks);
	bench_report(metric, "B/task", &mem, 1);
	starpu_shutdown();
	int done = 1;
	bench_write_all(fd, &done, sizeof(done));
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 0, 1, 'l',
		    " [-l COUNTS]\n  -l COUNTS       comma-separated task counts (default 10k,100k,1M); -n N runs N only\n"
		    "  both workloads (chain, async) run for each count, each in a fresh process");
	char counts[256];
	if (o.extra) snprintf(counts, sizeof(counts), "%s", o.extra);
	else if (o.ntasks > 0) snprintf(counts, sizeof(counts), "%ld", o.ntasks);
	else snprintf(counts, sizeof(counts), "10k,100k,1M");

	const char *workloads[2] = { "chain", "async" };
	int header = 1;
	for (int w = 0; w < 2; w++)
	{
		char list[256], *save = NULL;
		snprintf(list, sizeof(list), "%s", counts);
		for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save))
		{
			struct scale_setting s = { &o, workloads[w], bench_parse_long("task count (-l)", item, 1), header };
			o.ntasks = s.ntasks;
			header = 0;
			int done = 0;
			if (bench_in_child(run_count, &s, &done, sizeof(done)) != sizeof(done))
				bench_die("%s with %ld tasks failed", s.workload, s.ntasks);
		}
	}
	return 0;
}
