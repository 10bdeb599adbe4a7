/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unequal: independent tasks on two workers that are not equally fast, with
 * per-worker cost models (STARPU_PER_WORKER, so predictions are exact) and
 * tasks that really take that long: they sleep until their cost has passed
 * (as a CPU thread waits for a GPU kernel), so the figures hold on a machine
 * whose cores are busy. Prints the makespan of each policy and a lower bound
 * on any schedule's makespan.
 *
 *   kinds  two kinds of task, each fast on one worker and 10x slower on the
 *          other (as kernels are on a CPU and on a GPU), in a fixed random
 *          order, about half of each
 *   slow   one kind; worker 1 is 3x slower than worker 0 at it
 *
 * The bound is the fractional one: the best split of the work between the
 * two workers if tasks could be cut (for two workers, worker 0 takes the
 * tasks in the order of their cost ratio, worker 1 the rest, and the split
 * equalises their loads), and no less than the longest single task.
 *
 * Each measured run is also recorded for starpu_bound_compute() (the linear
 * program solved by GLPK, in integers: whole tasks): the makespan is reported
 * against that bound too, which must agree with the fractional one above or
 * exceed it a little (the integer rounding).
 *
 * Needs StarPU 1.4's per-worker models. -s POLICY runs one policy; by
 * default dmda, lws and eager run in turn. -x kinds|slow picks the setting
 * (default both). -n is the number of tasks (default 200), -w must be 2.
 */
#include "bench.h"
#include <math.h>

#define NKINDS 2
#define NWORKERS 2

struct setting
{
	const char *name;
	unsigned nkinds;
	/* µs of a task of each kind on each worker. */
	double cost[NKINDS][NWORKERS];
};

static const struct setting settings[] =
{
	{ "kinds", 2, { { 2000.0, 20000.0 }, { 20000.0, 2000.0 } } },
	{ "slow", 1, { { 2000.0, 6000.0 }, { 0.0, 0.0 } } },
};

static const struct setting *current;
/* Tasks of the last run that ran on a worker slower for them than the other. */
static long misplaced;

static double cost_of(struct starpu_task *task, unsigned workerid, unsigned nimpl)
{
	(void) nimpl;
	return current->cost[(uintptr_t) task->cl_arg][workerid % NWORKERS];
}

static void sleep_func(void *buffers[], void *cl_arg)
{
	(void) buffers;
	int workerid = starpu_worker_get_id();
	double cost = current->cost[(uintptr_t) cl_arg][workerid % NWORKERS];
	if (cost > current->cost[(uintptr_t) cl_arg][(workerid + 1) % NWORKERS])
		__atomic_add_fetch(&misplaced, 1, __ATOMIC_RELAXED);
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	long long ns = until.tv_nsec + (long long) (cost * 1000.0);
	until.tv_sec += ns / 1000000000;
	until.tv_nsec = ns % 1000000000;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

static struct starpu_perfmodel unequal_model =
{
	.type = STARPU_PER_WORKER,
	.worker_cost_function = cost_of,
	.symbol = "bench_unequal",
};

static struct starpu_codelet unequal_cl =
{
	.where = STARPU_CPU,
	.cpu_funcs = { sleep_func },
	.nbuffers = 0,
	.model = &unequal_model,
	.name = "unequal",
};

/* The kind of task i: a fixed pseudo-random sequence (an alternating one would
 * suit a round-robin policy by chance). */
static unsigned kind_of(const struct setting *s, long i)
{
	uint64_t x = (uint64_t) i * 0x9e3779b97f4a7c15ULL;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return (unsigned) (x % s->nkinds);
}

/* Fractional lower bound on the makespan of n tasks of s on the two workers (µs). */
static double lower_bound(const struct setting *s, long n)
{
	unsigned order[NKINDS];
	double count[NKINDS] = { 0 };
	double longest = 0.0;

	for (long i = 0; i < n; i++)
		count[kind_of(s, i)] += 1.0;
	for (unsigned k = 0; k < s->nkinds; k++)
	{
		order[k] = k;
		longest = fmax(longest, fmin(s->cost[k][0], s->cost[k][1]));
	}
	/* Kinds worker 0 is relatively best at first. */
	for (unsigned a = 0; a < s->nkinds; a++)
		for (unsigned b = a + 1; b < s->nkinds; b++)
			if (s->cost[order[b]][0] / s->cost[order[b]][1] < s->cost[order[a]][0] / s->cost[order[a]][1])
			{
				unsigned t = order[a];
				order[a] = order[b];
				order[b] = t;
			}
	/* Worker 0 takes a prefix of t tasks in that order; bisect t so both loads match. */
	double lo = 0.0, hi = (double) n, load = 0.0;
	for (int iter = 0; iter < 100; iter++)
	{
		double t = (lo + hi) / 2, left = t, load0 = 0.0, load1 = 0.0;
		for (unsigned j = 0; j < s->nkinds; j++)
		{
			unsigned k = order[j];
			double on0 = fmin(left, count[k]);
			load0 += on0 * s->cost[k][0];
			load1 += (count[k] - on0) * s->cost[k][1];
			left -= on0;
		}
		load = fmax(load0, load1);
		if (load0 < load1)
			lo = t;
		else
			hi = t;
	}
	return fmax(load, longest);
}

/* One run: n tasks submitted at once; returns the makespan in µs. */
static double run_once(const struct setting *s, long n)
{
	double start = bench_now_us();
	__atomic_store_n(&misplaced, 0, __ATOMIC_RELAXED);
	for (long i = 0; i < n; i++)
	{
		struct starpu_task *task = starpu_task_create();
		task->cl = &unequal_cl;
		task->cl_arg = (void *) (uintptr_t) kind_of(s, i);
		bench_check_submit(starpu_task_submit(task));
	}
	if (starpu_task_wait_for_all() != 0)
		bench_die("starpu_task_wait_for_all failed");
	return bench_now_us() - start;
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 200, 3, 'x', " [-x kinds|slow]");
	if (o.workers == 0)
		setenv("STARPU_NCPU", "2", 1);
	else if (o.workers != NWORKERS)
		bench_die("unequal needs exactly %d workers (-w %d)", NWORKERS, NWORKERS);
	const char *policies[] = { "dmda", "lws", "eager" };
	unsigned npolicies = 3;
	if (o.sched)
	{
		policies[0] = o.sched;
		npolicies = 1;
	}

	for (unsigned si = 0; si < sizeof(settings) / sizeof(settings[0]); si++)
	{
		const struct setting *s = &settings[si];
		if (o.extra && strcmp(o.extra, s->name) != 0)
			continue;
		current = s;
		double bound = lower_bound(s, o.ntasks);
		for (unsigned p = 0; p < npolicies; p++)
		{
			double makespan[BENCH_MAX_SAMPLES], ratio[BENCH_MAX_SAMPLES], lp_ratio[BENCH_MAX_SAMPLES];
			double lp_bound = 0.0, lp_integer = 0.0;
			long misplaced_total = 0;
			char metric[64];
			setenv("STARPU_SCHED", policies[p], 1);
			bench_starpu_init();
			if (starpu_worker_get_count() != NWORKERS)
				bench_die("got %u workers, not %d", starpu_worker_get_count(), NWORKERS);
			if (p == 0)
				bench_header("unequal: independent tasks, per-worker costs", &o);
			/* Warm-up: a tenth of the run. */
			run_once(s, o.ntasks / 10 + 1);
			for (int r = 0; r < o.reps; r++)
			{
				starpu_bound_start(0, 0);
				makespan[r] = run_once(s, o.ntasks) / 1000.0;
				starpu_bound_stop();
				ratio[r] = makespan[r] * 1000.0 / bound;
				misplaced_total += __atomic_load_n(&misplaced, __ATOMIC_RELAXED);
			}
			starpu_bound_compute(&lp_bound, &lp_integer, 1);
			starpu_shutdown();
			snprintf(metric, sizeof(metric), "unequal.%s.%s", s->name, policies[p]);
			bench_report(metric, "ms", makespan, o.reps);
			snprintf(metric, sizeof(metric), "unequal.%s.%s/bound", s->name, policies[p]);
			bench_report(metric, "x", ratio, o.reps);
			if (lp_integer > 0.0)
			{
				for (int r = 0; r < o.reps; r++)
					lp_ratio[r] = makespan[r] / lp_integer;
				snprintf(metric, sizeof(metric), "unequal.%s.%s/starpu_bound", s->name, policies[p]);
				bench_report(metric, "x", lp_ratio, o.reps);
				if (p == 0)
				{
					snprintf(metric, sizeof(metric), "unequal.%s.starpu_bound", s->name);
					bench_report(metric, "ms", &lp_integer, 1);
				}
			}
			else
				printf("# unequal.%s.%s: no starpu_bound_compute() figure (built without GLPK?)\n", s->name, policies[p]);
			printf("# unequal.%s.%s: %.1f of %ld tasks per run ran on their slower worker\n", s->name, policies[p],
			       (double) misplaced_total / o.reps, o.ntasks);
		}
		double bound_ms = bound / 1000.0;
		char metric[64];
		snprintf(metric, sizeof(metric), "unequal.%s.bound", s->name);
		bench_report(metric, "ms", &bound_ms, 1);
	}
	return 0;
}
