/*
 * The sampler's own cost and timer accuracy (Astrolabe only): goal, at a
 * 10 ms interval, at most 1% of one core.
 *
 *   sampler.cost        %core  process CPU time with the sampler on (every
 *                              counter of the runtime, idle workers) minus
 *                              off, over the wall time
 *   sampler.interval    ms     mean interval between samples over the run (asked: -x ms,
 *                              default 10): the accuracy goal, within 10% of the asked one
 *   sampler.interval_p50/p90/p99/max  ms  the distribution of single intervals
 *   sampler.on_time     %      single intervals within 10% of the asked one
 *   sampler.missed      %      deadlines skipped because the timer thread woke up too late
 *   papi_task.cost      us/task  STARPU_PROF_PAPI_EVENTS with one event PAPI
 *                              can read here (counters_papi_sde's
 *                              sde:::STARPU::starpu.task.g_total_submitted)
 *                              minus without, 20000 empty tasks, profiling on
 *
 * -r repetitions of -n milliseconds each (default 2000).
 */
#include "bench.h"
#include "apapi.h"

#include <pthread.h>

static uint64_t sample_times[100000];
static double gaps[100000];

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}
static unsigned nsample_times;

static int read_clock(struct apapi_component *c, union apapi_raw *raw)
{
	(void)c;
	raw[0].u = apapi_now_ns();
	if (nsample_times < sizeof(sample_times) / sizeof(sample_times[0]))
		sample_times[nsample_times++] = raw[0].u;
	return 0;
}

static double process_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* CPU seconds the process uses while the runtime idles for ms, with the sampler on or off. */
static double idle_cpu(int on, long ms, const char *intervals)
{
	if (on) {
		setenv("ASTROLABE_SAMPLER", "1", 1);
		setenv("APAPI_CMPLIST", "astrolabe", 1);
		setenv("ASTROLABE_SAMPLER_INTERVALS", intervals, 1);
		/* No event list, not even the default one: every counter of the runtime. */
		setenv("APAPI_EVENTLIST", "/dev/null", 1);
		setenv("ASTROLABE_SAMPLER_DATADIR", "/nonexistent", 1);
	} else {
		unsetenv("ASTROLABE_SAMPLER");
	}
	bench_starpu_init();
	starpu_task_wait_for_all();
	double cpu = process_cpu_s();
	struct timespec nap = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&nap, NULL);
	cpu = process_cpu_s() - cpu;
	FILE *saved = stderr;
	stderr = fopen("/dev/null", "w"); /* the statistics table */
	starpu_shutdown();
	fclose(stderr);
	stderr = saved;
	return cpu;
}

/* µs per empty task with profiling on, with or without a PAPI event counted per task. */
static double task_us(int papi)
{
	unsetenv("ASTROLABE_SAMPLER");
	setenv("STARPU_PROFILING", "1", 1);
	if (papi)
		setenv("STARPU_PROF_PAPI_EVENTS", "sde:::STARPU::starpu.task.g_total_submitted", 1);
	else
		unsetenv("STARPU_PROF_PAPI_EVENTS");
	bench_starpu_init();
	bench_warmup_async(1000);
	double submit, total;
	bench_run_async(20000, &submit, &total);
	starpu_shutdown();
	return total;
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 2000, 5, 'x', "-x ms: the sampling interval (default 10); -n: milliseconds per repetition");
	long interval_ms = o.extra ? bench_parse_long("-x", o.extra, 1) : 10;
	char intervals[64];
	snprintf(intervals, sizeof(intervals), "astrolabe:%ld", interval_ms * 1000000);
	bench_header("sampler", &o);

	double cost[BENCH_MAX_SAMPLES], mean[BENCH_MAX_SAMPLES], on_time[BENCH_MAX_SAMPLES], papi[BENCH_MAX_SAMPLES];
	double p50[BENCH_MAX_SAMPLES], p90[BENCH_MAX_SAMPLES], p99[BENCH_MAX_SAMPLES], pmax[BENCH_MAX_SAMPLES],
		missed[BENCH_MAX_SAMPLES];
	for (int r = 0; r < o.reps; r++) {
		double off = idle_cpu(0, o.ntasks, intervals);
		double on = idle_cpu(1, o.ntasks, intervals);
		cost[r] = (on - off) / ((double)o.ntasks / 1000.0) * 100.0;

		struct apapi_sampler s;
		apapi_sampler_init(&s);
		struct apapi_component *c = apapi_sampler_add(&s, "clock", (uint64_t)interval_ms * 1000000, read_clock, NULL);
		struct apapi_eventop op = { .name = "clock", .stats = { APAPI_STAT_ALL, APAPI_STAT_ALL }, .max_raw = UINT64_MAX,
					    .factor = { 1, 1 } };
		nsample_times = 0;
		if (!c || apapi_component_add_event(c, &op, 0) || apapi_sampler_start(&s))
			bench_die("cannot start the sampler");
		struct timespec nap = { o.ntasks / 1000, (o.ntasks % 1000) * 1000000 };
		nanosleep(&nap, NULL);
		apapi_sampler_stop(&s);
		/* The last sample is the one taken at stop, off the schedule. */
		unsigned n = nsample_times - 1, within = 0;
		double asked = (double)interval_ms * 1e6;
		for (unsigned i = 1; i < n; i++) {
			double d = (double)(sample_times[i] - sample_times[i - 1]);
			within += d >= 0.9 * asked && d <= 1.1 * asked;
		}
		mean[r] = n > 1 ? (double)(sample_times[n - 1] - sample_times[0]) / (n - 1) / 1e6 : 0;
		on_time[r] = n > 1 ? 100.0 * within / (n - 1) : 0;
		for (unsigned i = 1; i < n; i++)
			gaps[i - 1] = (double)(sample_times[i] - sample_times[i - 1]) / 1e6;
		qsort(gaps, n > 1 ? n - 1 : 0, sizeof(double), by_value);
		p50[r] = n > 1 ? gaps[(n - 2) / 2] : 0;
		p90[r] = n > 1 ? gaps[(n - 2) * 9 / 10] : 0;
		p99[r] = n > 1 ? gaps[(n - 2) * 99 / 100] : 0;
		pmax[r] = n > 1 ? gaps[n - 2] : 0;
		missed[r] = 100.0 * (double)c->nmissed / (double)(c->nmissed + (n > 1 ? n - 1 : 0) + 1);
		apapi_sampler_clear(&s);

		papi[r] = task_us(1) - task_us(0);
	}
	bench_report("sampler.cost", "%core", cost, o.reps);
	bench_report("sampler.interval", "ms", mean, o.reps);
	bench_report("sampler.interval_p50", "ms", p50, o.reps);
	bench_report("sampler.interval_p90", "ms", p90, o.reps);
	bench_report("sampler.interval_p99", "ms", p99, o.reps);
	bench_report("sampler.interval_max", "ms", pmax, o.reps);
	bench_report("sampler.on_time", "%", on_time, o.reps);
	bench_report("sampler.missed", "%", missed, o.reps);
	bench_report("papi_task.cost", "us/task", papi, o.reps);
	return 0;
}
