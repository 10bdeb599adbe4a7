/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the benchmark programs: options, clock, statistics and
 * the one output format bench/run parses.
 *
 * The programs use only the public StarPU API, so the same sources build
 * against Astrolabe and against StarPU (1.3 or 1.4). Every figure is printed
 * as one line:
 *
 *   METRIC UNIT median M min A max B samples S1 S2 ...
 *
 * e.g. "chain.total us/task median 0.912 min 0.887 max 1.040 samples ...";
 * lines starting with '#' are comments.
 */
#ifndef BENCH_H
#define BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_NO_STARPU
#include <starpu.h>
#endif

#define BENCH_MAX_SAMPLES 256

/* Every program includes this header and uses part of it. */
#define BENCH_FN static __attribute__((unused))

/** Options every benchmark understands. */
struct bench_options
{
	long ntasks;		/* -n: tasks per repetition */
	int reps;		/* -r: timed repetitions */
	int workers;		/* -w: CPU workers (STARPU_NCPU); 0: the runtime's default */
	const char *sched;	/* -s: scheduling policy (STARPU_SCHED); NULL: the runtime's default */
	const char *extra;	/* the program's own option argument, if any */
};

static inline double bench_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void bench_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
BENCH_FN void bench_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

BENCH_FN long bench_parse_long(const char *what, const char *text, long min)
{
	char *end;
	errno = 0;
	long value = strtol(text, &end, 10);
	/* Accept 10k / 1M: task counts are easier to read that way. */
	if (end != text && (*end == 'k' || *end == 'K')) { value *= 1000; end++; }
	else if (end != text && (*end == 'm' || *end == 'M')) { value *= 1000000; end++; }
	if (errno || end == text || *end || value < min)
		bench_die("bad %s '%s': expected an integer >= %ld", what, text, min);
	return value;
}

/**
 * Parses -n, -r, -w, -s, -h and the program's own option letter (extra_opt,
 * taking an argument, 0 for none). Sets STARPU_NCPU / STARPU_SCHED from -w /
 * -s so that StarPU and Astrolabe both see them.
 */
BENCH_FN void bench_parse(int argc, char **argv, struct bench_options *o,
			long default_ntasks, int default_reps, char extra_opt, const char *usage_extra)
{
	char optstring[16] = "n:r:w:s:h";
	if (extra_opt)
	{
		size_t len = strlen(optstring);
		optstring[len] = extra_opt;
		optstring[len + 1] = ':';
		optstring[len + 2] = '\0';
	}
	o->ntasks = default_ntasks;
	o->reps = default_reps;
	o->workers = 0;
	o->sched = NULL;
	o->extra = NULL;
	int c;
	while ((c = getopt(argc, argv, optstring)) != -1)
	{
		if (c == 'n') o->ntasks = bench_parse_long("task count (-n)", optarg, 1);
		else if (c == 'r') o->reps = (int) bench_parse_long("repetition count (-r)", optarg, 1);
		else if (c == 'w') o->workers = (int) bench_parse_long("worker count (-w)", optarg, 1);
		else if (c == 's') o->sched = optarg;
		else if (extra_opt && c == extra_opt) o->extra = optarg;
		else
		{
			fprintf(c == 'h' ? stdout : stderr,
				"usage: %s [-n TASKS] [-r REPETITIONS] [-w WORKERS] [-s POLICY]%s\n"
				"  -n TASKS        tasks per repetition (default %ld; 10k, 1M accepted)\n"
				"  -r REPETITIONS  timed repetitions, after one warm-up (default %d)\n"
				"  -w WORKERS      CPU workers (sets STARPU_NCPU)\n"
				"  -s POLICY       scheduling policy (sets STARPU_SCHED)\n",
				argv[0], usage_extra ? usage_extra : "", default_ntasks, default_reps);
			exit(c == 'h' ? 0 : 2);
		}
	}
	if (optind < argc)
		bench_die("unexpected argument '%s' (see -h)", argv[optind]);
	if (o->reps > BENCH_MAX_SAMPLES)
		bench_die("at most %d repetitions", BENCH_MAX_SAMPLES);
	char text[32];
	if (o->workers > 0)
	{
		snprintf(text, sizeof(text), "%d", o->workers);
		setenv("STARPU_NCPU", text, 1);
	}
	if (o->sched)
		setenv("STARPU_SCHED", o->sched, 1);
	/* CPU workers only: a GPU would change what is measured. */
	setenv("STARPU_NCUDA", "0", 0);
	setenv("STARPU_NOPENCL", "0", 0);
	setenv("STARPU_NHIP", "0", 0);
	setenv("STARPU_NMPI_MS", "0", 0);
	setenv("STARPU_NTCPIP_MS", "0", 0);
}

BENCH_FN int bench_compare_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return (x > y) - (x < y);
}

/** Median of n values (n >= 1); values are left unchanged. */
BENCH_FN double bench_median(const double *values, int n)
{
	double sorted[BENCH_MAX_SAMPLES];
	if (n > BENCH_MAX_SAMPLES) n = BENCH_MAX_SAMPLES;
	memcpy(sorted, values, n * sizeof(*values));
	qsort(sorted, n, sizeof(*sorted), bench_compare_double);
	return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/** Prints one result line in the format described at the top of this file. */
BENCH_FN void bench_report(const char *metric, const char *unit, const double *samples, int n)
{
	double min = samples[0], max = samples[0];
	for (int i = 1; i < n; i++)
	{
		if (samples[i] < min) min = samples[i];
		if (samples[i] > max) max = samples[i];
	}
	printf("%-34s %-8s median %9.3f min %9.3f max %9.3f samples", metric, unit,
	       bench_median(samples, n), min, max);
	for (int i = 0; i < n; i++)
		printf(" %.4f", samples[i]);
	printf("\n");
	fflush(stdout);
}

/** Peak resident memory of this process so far, in bytes. */
BENCH_FN double bench_maxrss_bytes(void)
{
	struct rusage usage;
	getrusage(RUSAGE_SELF, &usage);
	return usage.ru_maxrss * 1024.0; /* Linux reports kilobytes */
}

#ifndef BENCH_NO_STARPU

/** Names the runtime these sources were built against. */
BENCH_FN const char *bench_runtime_name(void)
{
	static char name[64];
	int major, minor, release;
	starpu_get_version(&major, &minor, &release);
#ifdef ASTROLABE
	snprintf(name, sizeof(name), "Astrolabe (StarPU API %d.%d.%d)", major, minor, release);
#else
	snprintf(name, sizeof(name), "StarPU %d.%d.%d", major, minor, release);
#endif
	return name;
}

/** starpu_init(), or a readable reason and exit. */
BENCH_FN void bench_starpu_init(void)
{
	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		bench_die("starpu_init: no worker could start (-ENODEV); check STARPU_NCPU and the plugins");
	if (ret != 0)
		bench_die("starpu_init failed (%d)", ret);
}

/** Prints the "# ..." header line naming the benchmark and its setting. */
BENCH_FN void bench_header(const char *what, const struct bench_options *o)
{
	const char *sched = getenv("STARPU_SCHED");
	printf("# %s | %s | %u CPU worker(s) | policy %s | %ld tasks x %d repetitions\n",
	       what, bench_runtime_name(), starpu_cpu_worker_get_count(),
	       sched && *sched ? sched : "(default)", o->ntasks, o->reps);
	fflush(stdout);
}

BENCH_FN void bench_empty_func(void *buffers[], void *cl_arg)
{
	(void) buffers;
	(void) cl_arg;
}

/** The empty task every overhead benchmark submits: no data, no model. */
static struct starpu_codelet bench_empty_cl __attribute__((unused)) =
{
	.where = STARPU_CPU,
	.cpu_funcs = { bench_empty_func },
	.nbuffers = 0,
	.name = "bench_empty",
};

/*
 * The warm-up runs check the runtime too: their tasks count themselves
 * (and, in a chain, check their rank), so a lost, duplicated or misordered
 * task stops the benchmark with a message instead of a wrong figure.
 */
static long bench_check_ran __attribute__((unused));
static long bench_check_misordered __attribute__((unused));
static int bench_check_ordered __attribute__((unused));

BENCH_FN void bench_check_func(void *buffers[], void *cl_arg)
{
	(void) buffers;
	long rank = (long) (intptr_t) cl_arg;
	long seen = __atomic_fetch_add(&bench_check_ran, 1, __ATOMIC_SEQ_CST);
	if (bench_check_ordered && seen != rank)
		__atomic_fetch_add(&bench_check_misordered, 1, __ATOMIC_SEQ_CST);
}

static struct starpu_codelet bench_check_cl __attribute__((unused)) =
{
	.where = STARPU_CPU,
	.cpu_funcs = { bench_check_func },
	.nbuffers = 0,
	.name = "bench_check",
};

BENCH_FN void bench_check_start(int ordered)
{
	__atomic_store_n(&bench_check_ran, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&bench_check_misordered, 0, __ATOMIC_SEQ_CST);
	bench_check_ordered = ordered;
}

/** Stops the program when the checked run did not run each of its n tasks once (in order). */
BENCH_FN void bench_check_done(const char *workload, long n)
{
	long ran = __atomic_load_n(&bench_check_ran, __ATOMIC_SEQ_CST);
	long misordered = __atomic_load_n(&bench_check_misordered, __ATOMIC_SEQ_CST);
	if (ran != n)
		bench_die("RUNTIME BUG: %s of %ld tasks: %ld task executions once the wait returned", workload, n, ran);
	if (misordered)
		bench_die("RUNTIME BUG: %s of %ld tasks: %ld tasks ran before the task they depend on", workload, n, misordered);
}

BENCH_FN void bench_check_submit(int ret)
{
	if (ret == -ENODEV)
		bench_die("starpu_task_submit: no worker can run the task (-ENODEV)");
	if (ret != 0)
		bench_die("starpu_task_submit failed (%d)", ret);
}

BENCH_FN struct starpu_task *bench_empty_task(void)
{
	struct starpu_task *task = starpu_task_create();
	if (!task)
		bench_die("starpu_task_create returned NULL");
	task->cl = &bench_empty_cl;
	return task;
}

/*
 * Tags of a chain: each repetition uses its own range and removes it
 * afterwards, so the tag table does not grow from one repetition to the next.
 */
static starpu_tag_t bench_next_tag_base __attribute__((unused)) = 1;

/**
 * The chain workload: n empty tasks chained with tags, all submitted while
 * the first one waits on a gate tag that nothing has notified yet; then the
 * gate is notified and the chain runs. Returns the submission and execution
 * cost in µs per task. When peak_rss is not NULL, it receives the peak RSS
 * (bytes) measured while the whole chain is pending.
 */
BENCH_FN void bench_run_chain_of(struct starpu_codelet *cl, long n, double *submit_us, double *exec_us, double *peak_rss)
{
	starpu_tag_t gate = bench_next_tag_base;
	starpu_tag_t first = gate + 1;
	bench_next_tag_base += (starpu_tag_t) n + 1;

	double t0 = bench_now_us();
	for (long i = 0; i < n; i++)
	{
		struct starpu_task *task = bench_empty_task();
		task->cl = cl;
		task->cl_arg = (void *) (intptr_t) i;
		task->use_tag = 1;
		task->tag_id = first + (starpu_tag_t) i;
		starpu_tag_declare_deps(task->tag_id, 1, task->tag_id - 1);
		bench_check_submit(starpu_task_submit(task));
	}
	double t1 = bench_now_us();
	if (peak_rss)
		*peak_rss = bench_maxrss_bytes();
	starpu_tag_notify_from_apps(gate);
	starpu_task_wait_for_all();
	double t2 = bench_now_us();

	for (long i = 0; i <= n; i++)
		starpu_tag_remove(gate + (starpu_tag_t) i);
	*submit_us = (t1 - t0) / n;
	*exec_us = (t2 - t1) / n;
}

BENCH_FN void bench_run_chain(long n, double *submit_us, double *exec_us, double *peak_rss)
{
	bench_run_chain_of(&bench_empty_cl, n, submit_us, exec_us, peak_rss);
}

/** A chain of n checked tasks (the warm-up): stops the program if the runtime got it wrong. */
BENCH_FN void bench_warmup_chain(long n)
{
	double submit, exec;
	bench_check_start(1);
	bench_run_chain_of(&bench_check_cl, n, &submit, &exec, NULL);
	bench_check_done("chain", n);
}

/**
 * The async workload: n independent empty tasks, then
 * starpu_task_wait_for_all(). Returns the submission and the total cost in
 * µs per task.
 */
BENCH_FN void bench_run_async_of(struct starpu_codelet *cl, long n, double *submit_us, double *total_us)
{
	double t0 = bench_now_us();
	for (long i = 0; i < n; i++)
	{
		struct starpu_task *task = bench_empty_task();
		task->cl = cl;
		bench_check_submit(starpu_task_submit(task));
	}
	double t1 = bench_now_us();
	starpu_task_wait_for_all();
	double t2 = bench_now_us();
	*submit_us = (t1 - t0) / n;
	*total_us = (t2 - t0) / n;
}

BENCH_FN void bench_run_async(long n, double *submit_us, double *total_us)
{
	bench_run_async_of(&bench_empty_cl, n, submit_us, total_us);
}

/** n checked independent tasks (the warm-up): stops the program if the runtime lost or repeated one. */
BENCH_FN void bench_warmup_async(long n)
{
	double submit, total;
	bench_check_start(0);
	bench_run_async_of(&bench_check_cl, n, &submit, &total);
	bench_check_done("async", n);
}

#endif /* BENCH_NO_STARPU */

/**
 * Runs body(arg, fd) in a child process and waits for it; the child writes
 * its results to fd, read back into out (at most out_size bytes). Each
 * configuration gets a fresh process, so environment variables read at
 * starpu_init() take effect and peak memory starts from scratch.
 * Returns the number of bytes read, or -1 when the child failed.
 */
BENCH_FN long bench_in_child(void (*body)(void *arg, int fd), void *arg, void *out, size_t out_size)
{
	int fds[2];
	if (pipe(fds) != 0)
		bench_die("pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0)
	{
		close(fds[0]);
		body(arg, fds[1]);
		fflush(stdout);
		close(fds[1]);
		_exit(0);
	}
	close(fds[1]);
	size_t got = 0;
	while (got < out_size)
	{
		ssize_t r = read(fds[0], (char *) out + got, out_size - got);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		got += (size_t) r;
	}
	/* Drain whatever else the child writes, so it never blocks on the pipe. */
	char sink[256];
	while (read(fds[0], sink, sizeof(sink)) > 0)
		;
	close(fds[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
	{
		if (WIFSIGNALED(status))
			fprintf(stderr, "bench: child process killed by signal %d\n", WTERMSIG(status));
		return -1;
	}
	return (long) got;
}

BENCH_FN void bench_write_all(int fd, const void *data, size_t size)
{
	const char *p = data;
	while (size > 0)
	{
		ssize_t w = write(fd, p, size);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) bench_die("write to parent: %s", strerror(errno));
		p += w;
		size -= (size_t) w;
	}
}

#endif /* BENCH_H */
