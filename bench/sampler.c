/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sampler's own cost and its timer's accuracy (Astrolabe only): goals,
 * at a 10 ms interval, at most 1% of one core, and samples within 10% of the
 * interval of their deadlines under load.
 *
 *   sampler.cost        %core  process CPU time with the sampler on (every
 *                              counter of the runtime, idle workers) minus
 *                              off, over the wall time
 *   sampler.thread      %core  the timer thread's own CPU time (its
 *                              schedstat) over the wall time, same runs
 * The timer, sampling a clock every -x ms (default 10) for -n ms, measured
 * against its schedule (deadline k at start + k * interval):
 *   sampler.<how>.period       ms  mean period between samples (the time
 *                              the samples span over their number)
 *   sampler.<how>.late_p50/p90/p99/max  ms  how long after its deadline
 *                              each sample was taken (the wake-up's lateness)
 *   sampler.<how>.on_time      %   deadlines answered by a sample taken
 *                              within 10% of the interval after them, of all
 *                              the deadlines (those skipped count as failed):
 *                              the accuracy goal
 *   sampler.<how>.missed       %   deadlines skipped (woken up too late)
 *   sampler.<how>.steady       %   single intervals between consecutive
 *                              samples within 10% of the interval (session
 *                              10's measure: both ends' lateness, stricter)
 * <how>, in each repetition, in turn:
 *   quiet                      no load in the process
 *   loaded_before / loaded     2 busy threads per core in the process,
 *                              default priority; _before: the timer thread
 *                              with the slack it inherits (50 us) as before
 *                              session 11, else the sampler's 1 ns
 *   alone_before / alone       loaded, the bench's session (its autogroup)
 *                              given nice -20 for the run, as if no other
 *                              session used the machine: the timer thread
 *                              still at default priority among the busy
 *                              threads of its process ("refused" unless
 *                              the bench leads its own session, as under
 *                              setsid -w, and /proc/self/autogroup can be
 *                              written)
 *   loaded_fifo                loaded, the timer thread asking for
 *                              ASTROLABE_SAMPLER_PRIORITY (default fifo);
 *                              "refused" when the system does not give it
 *   papi_task.cost      us/task  STARPU_PROF_PAPI_EVENTS with one event PAPI
 *                              can read here (counters_papi_sde's
 *                              sde:::STARPU::starpu.task.g_total_submitted)
 *                              minus without, 20000 empty tasks, profiling on
 *
 * -r repetitions of -n milliseconds each (default 2000).
 */
#include "bench.h"
#include "apapi_model.h"

#include <dirent.h>
#include <pthread.h>
#include <stddef.h>
#include <unistd.h>

#define MAX_SAMPLES 100000
static uint64_t sample_times[MAX_SAMPLES], sample_deadlines[MAX_SAMPLES];
static double lateness[MAX_SAMPLES];
static unsigned nsample_times;

static int read_clock(struct apapi_component *c, union apapi_raw *raw)
{
	raw[0].u = apapi_now_ns();
	if (nsample_times < MAX_SAMPLES) {
		sample_times[nsample_times] = raw[0].u;
		sample_deadlines[nsample_times++] = c->deadline_ns;
	}
	return 0;
}

static double process_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* CPU seconds the timer thread (APAPI_THREAD_NAME) used so far; -1 when not found. */
static double sampler_thread_cpu_s(void)
{
	DIR *tasks = opendir("/proc/self/task");
	double cpu = -1;
	struct dirent *t;
	while (tasks && cpu < 0 && (t = readdir(tasks))) {
		char path[300], comm[64] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", t->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		int named = fgets(comm, sizeof(comm), f) && strncmp(comm, APAPI_THREAD_NAME "\n", sizeof(APAPI_THREAD_NAME)) == 0;
		fclose(f);
		unsigned long long ns;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", t->d_name);
		if (named && (f = fopen(path, "r"))) {
			if (fscanf(f, "%llu", &ns) == 1)
				cpu = (double)ns / 1e9;
			fclose(f);
		}
	}
	if (tasks)
		closedir(tasks);
	return cpu;
}

/* CPU seconds the process uses while the runtime idles for ms, with the sampler on or off;
 * *thread: those of the timer thread (on). */
static double idle_cpu(int on, long ms, const char *intervals, double *thread)
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
	double cpu = process_cpu_s(), timer = sampler_thread_cpu_s();
	struct timespec nap = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&nap, NULL);
	cpu = process_cpu_s() - cpu;
	if (thread)
		*thread = timer >= 0 ? sampler_thread_cpu_s() - timer : -1;
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
	double period, late_p50, late_p90, late_p99, late_max, on_time, missed, steady;
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

/* The bench's session's autogroup nice value, to give it the machine (-20) and back; 0 when refused
 * (the session is not the bench's own: the autogroup would give the machine to its other processes too). */
static int set_autogroup_nice(int nice, int *previous)
{
	if (getsid(0) != getpid())
		return 0;
	FILE *f = fopen("/proc/self/autogroup", "r");
	if (!f || fscanf(f, "/autogroup-%*d nice %d", previous) != 1) {
		if (f)
			fclose(f);
		return 0;
	}
	fclose(f);
	f = fopen("/proc/self/autogroup", "w");
	if (!f)
		return 0;
	int ok = fprintf(f, "%d", nice) > 0;
	return fclose(f) == 0 && ok;
}

#define ALONE_REFUSED "run the bench in a session of its own (setsid -w bench/sampler), with the right to lower its autogroup's nice value (root, CAP_SYS_NICE)"

/* Samples a clock every interval_ms for ms milliseconds, nload busy threads
 * competing for the cores, the timer thread asking for priority (NULL: none),
 * with its timer slack (0: inherited). */
static void timer_run(long interval_ms, long ms, int nload, const char *priority, unsigned long slack,
		      struct timer_figures *f)
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
	s.timer_slack_ns = slack;
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
	/* Samples 1 .. n-1 answer deadlines; 0 is the start's, the last the stop's. */
	unsigned n = nsample_times - 1, on_time = 0, steady = 0;
	if (n < 2)
		bench_die("the timer took no sample in %ld ms", ms);
	double asked = (double)interval_ms * 1e6;
	for (unsigned i = 1; i < n; i++) {
		lateness[i - 1] = (double)(sample_times[i] - sample_deadlines[i]);
		on_time += lateness[i - 1] <= 0.1 * asked;
		double d = (double)(sample_times[i] - sample_times[i - 1]);
		steady += d >= 0.9 * asked && d <= 1.1 * asked;
	}
	double deadlines = (double)(n - 1 + c->nmissed);
	f->period = (double)(sample_times[n - 1] - sample_times[0]) / (n - 1) / 1e6;
	f->on_time = 100.0 * on_time / deadlines;
	f->missed = 100.0 * (double)c->nmissed / deadlines;
	f->steady = 100.0 * steady / (n - 1);
	qsort(lateness, n - 1, sizeof(double), bench_compare_double);
	f->late_p50 = lateness[(n - 2) / 2] / 1e6;
	f->late_p90 = lateness[(n - 2) * 9 / 10] / 1e6;
	f->late_p99 = lateness[(n - 2) * 99 / 100] / 1e6;
	f->late_max = lateness[n - 2] / 1e6;
	apapi_sampler_clear(&s);
}

static void timer_report(const char *prefix, const struct timer_figures *f, int reps, const char *refused)
{
	static const struct
	{
		const char *name, *unit;
		size_t offset;
	} fields[] = {
		{ "period", "ms", offsetof(struct timer_figures, period) },
		{ "late_p50", "ms", offsetof(struct timer_figures, late_p50) },
		{ "late_p90", "ms", offsetof(struct timer_figures, late_p90) },
		{ "late_p99", "ms", offsetof(struct timer_figures, late_p99) },
		{ "late_max", "ms", offsetof(struct timer_figures, late_max) },
		{ "on_time", "%", offsetof(struct timer_figures, on_time) },
		{ "missed", "%", offsetof(struct timer_figures, missed) },
		{ "steady", "%", offsetof(struct timer_figures, steady) },
	};
	if (f[0].refused) {
		printf("%-34s refused: %s\n", prefix, refused);
		return;
	}
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

	double cost[BENCH_MAX_SAMPLES], thread[BENCH_MAX_SAMPLES], papi[BENCH_MAX_SAMPLES];
	enum { QUIET, LOADED_BEFORE, LOADED, ALONE_BEFORE, ALONE, FIFO, NRUNS };
	static struct timer_figures timer[NRUNS][BENCH_MAX_SAMPLES];
	const char *priority = getenv("ASTROLABE_SAMPLER_PRIORITY");
	if (!priority || !*priority)
		priority = "fifo";
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nload = (int)(2 * (ncpus > 0 ? ncpus : 1));
	for (int r = 0; r < o.reps; r++) {
		double off = idle_cpu(0, o.ntasks, intervals, NULL);
		double on = idle_cpu(1, o.ntasks, intervals, &thread[r]);
		if (thread[r] < 0)
			bench_die("no thread named %s: where is the timer thread?", APAPI_THREAD_NAME);
		cost[r] = (on - off) / ((double)o.ntasks / 1000.0) * 100.0;
		thread[r] *= 100.0 / ((double)o.ntasks / 1000.0);

		timer_run(interval_ms, o.ntasks, 0, NULL, 1, &timer[QUIET][r]);
		timer_run(interval_ms, o.ntasks, nload, NULL, 0, &timer[LOADED_BEFORE][r]);
		timer_run(interval_ms, o.ntasks, nload, NULL, 1, &timer[LOADED][r]);
		int previous = 0;
		if (set_autogroup_nice(-20, &previous)) {
			timer_run(interval_ms, o.ntasks, nload, NULL, 0, &timer[ALONE_BEFORE][r]);
			timer_run(interval_ms, o.ntasks, nload, NULL, 1, &timer[ALONE][r]);
			int ignored;
			set_autogroup_nice(previous, &ignored);
		} else {
			timer[ALONE_BEFORE][r].refused = timer[ALONE][r].refused = 1;
		}
		timer_run(interval_ms, o.ntasks, nload, priority, 1, &timer[FIFO][r]);

		papi[r] = task_us(1) - task_us(0);
	}
	bench_report("sampler.cost", "%core", cost, o.reps);
	bench_report("sampler.thread", "%core", thread, o.reps);
	timer_report("sampler.quiet", timer[QUIET], o.reps, NULL);
	timer_report("sampler.loaded_before", timer[LOADED_BEFORE], o.reps, NULL);
	timer_report("sampler.loaded", timer[LOADED], o.reps, NULL);
	timer_report("sampler.alone_before", timer[ALONE_BEFORE], o.reps,
		     ALONE_REFUSED);
	timer_report("sampler.alone", timer[ALONE], o.reps, ALONE_REFUSED);
	char name[64];
	snprintf(name, sizeof(name), "sampler.loaded_%s", priority);
	for (char *c = name; *c; c++)
		if (*c == ':' || *c == '-')
			*c = '_';
	char why[128];
	snprintf(why, sizeof(why), "the system did not give the timer thread ASTROLABE_SAMPLER_PRIORITY=%s", priority);
	timer_report(name, timer[FIFO], o.reps, why);
	bench_report("papi_task.cost", "us/task", papi, o.reps);
	return 0;
}
