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
 *   sampler.loaded.*           the same with 4 busy threads per core in the process
 *   sampler.loaded_fifo.*      the same, the timer thread asking for
 *                              ASTROLABE_SAMPLER_PRIORITY (default fifo); "refused"
 *                              when the system does not give it
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
#include <stddef.h>
#include <unistd.h>

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

/* The timer's figures over one run. */
struct timer_figures
{
	double mean, p50, p90, p99, max, on_time, missed;
	int refused;
};

static volatile int load_stop;

static void *busy(void *arg)
{
	(void)arg;
	volatile unsigned long spin = 0;
	while (!load_stop)
		spin++;
	return NULL;
}

/* Samples a clock every interval_ms for ms milliseconds, nload busy threads
 * competing for the cores, the timer thread asking for priority (NULL: none). */
static void timer_run(long interval_ms, long ms, int nload, const char *priority, struct timer_figures *f)
{
	pthread_t load[256];
	if (nload > 256)
		nload = 256;
	load_stop = 0;
	for (int i = 0; i < nload; i++)
		if (pthread_create(&load[i], NULL, busy, NULL))
			bench_die("cannot start a load thread");
	struct apapi_sampler s;
	apapi_sampler_init(&s);
	if (priority && apapi_priority_parse(priority, &s.priority))
		bench_die("bad ASTROLABE_SAMPLER_PRIORITY");
	struct apapi_component *c = apapi_sampler_add(&s, "clock", (uint64_t)interval_ms * 1000000, read_clock, NULL);
	struct apapi_eventop op = { .name = "clock", .stats = { APAPI_STAT_ALL, APAPI_STAT_ALL }, .max_raw = UINT64_MAX,
				    .factor = { 1, 1 } };
	nsample_times = 0;
	if (!c || apapi_component_add_event(c, &op, 0) || apapi_sampler_start(&s))
		bench_die("cannot start the sampler");
	f->refused = s.priority_error != 0;
	struct timespec nap = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&nap, NULL);
	apapi_sampler_stop(&s);
	load_stop = 1;
	for (int i = 0; i < nload; i++)
		pthread_join(load[i], NULL);
	/* The last sample is the one taken at stop, off the schedule. */
	unsigned n = nsample_times - 1, within = 0;
	double asked = (double)interval_ms * 1e6;
	for (unsigned i = 1; i < n; i++) {
		double d = (double)(sample_times[i] - sample_times[i - 1]);
		within += d >= 0.9 * asked && d <= 1.1 * asked;
	}
	f->mean = n > 1 ? (double)(sample_times[n - 1] - sample_times[0]) / (n - 1) / 1e6 : 0;
	f->on_time = n > 1 ? 100.0 * within / (n - 1) : 0;
	for (unsigned i = 1; i < n; i++)
		gaps[i - 1] = (double)(sample_times[i] - sample_times[i - 1]) / 1e6;
	qsort(gaps, n > 1 ? n - 1 : 0, sizeof(double), by_value);
	f->p50 = n > 1 ? gaps[(n - 2) / 2] : 0;
	f->p90 = n > 1 ? gaps[(n - 2) * 9 / 10] : 0;
	f->p99 = n > 1 ? gaps[(n - 2) * 99 / 100] : 0;
	f->max = n > 1 ? gaps[n - 2] : 0;
	f->missed = 100.0 * (double)c->nmissed / (double)(c->nmissed + (n > 1 ? n - 1 : 0) + 1);
	apapi_sampler_clear(&s);
}

static void timer_report(const char *prefix, const struct timer_figures *f, int reps)
{
	static const struct
	{
		const char *name, *unit;
		size_t offset;
	} fields[] = {
		{ "interval", "ms", offsetof(struct timer_figures, mean) },
		{ "interval_p50", "ms", offsetof(struct timer_figures, p50) },
		{ "interval_p90", "ms", offsetof(struct timer_figures, p90) },
		{ "interval_p99", "ms", offsetof(struct timer_figures, p99) },
		{ "interval_max", "ms", offsetof(struct timer_figures, max) },
		{ "on_time", "%", offsetof(struct timer_figures, on_time) },
		{ "missed", "%", offsetof(struct timer_figures, missed) },
	};
	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		double v[BENCH_MAX_SAMPLES];
		for (int r = 0; r < reps; r++)
			v[r] = *(const double *)((const char *)&f[r] + fields[k].offset);
		char metric[96];
		snprintf(metric, sizeof(metric), "%s.%s", prefix, fields[k].name);
		bench_report(metric, fields[k].unit, v, reps);
	}
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

	double cost[BENCH_MAX_SAMPLES], papi[BENCH_MAX_SAMPLES];
	static struct timer_figures timer[3][BENCH_MAX_SAMPLES];
	const char *priority = getenv("ASTROLABE_SAMPLER_PRIORITY");
	if (!priority || !*priority)
		priority = "fifo";
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nload = (int)(4 * (ncpus > 0 ? ncpus : 1));
	for (int r = 0; r < o.reps; r++) {
		double off = idle_cpu(0, o.ntasks, intervals);
		double on = idle_cpu(1, o.ntasks, intervals);
		cost[r] = (on - off) / ((double)o.ntasks / 1000.0) * 100.0;

		timer_run(interval_ms, o.ntasks, 0, NULL, &timer[0][r]);
		timer_run(interval_ms, o.ntasks, nload, NULL, &timer[1][r]);
		timer_run(interval_ms, o.ntasks, nload, priority, &timer[2][r]);

		papi[r] = task_us(1) - task_us(0);
	}
	bench_report("sampler.cost", "%core", cost, o.reps);
	timer_report("sampler", timer[0], o.reps);
	timer_report("sampler.loaded", timer[1], o.reps);
	char name[64];
	snprintf(name, sizeof(name), "sampler.loaded_%s", priority);
	for (char *c = name; *c; c++)
		if (*c == ':' || *c == '-')
			*c = '_';
	if (timer[2][0].refused)
		printf("%-34s refused: the system did not give the timer thread ASTROLABE_SAMPLER_PRIORITY=%s\n", name, priority);
	else
		timer_report(name, timer[2], o.reps);
	bench_report("papi_task.cost", "us/task", papi, o.reps);
	return 0;
}
