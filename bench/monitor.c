/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * monitor: what observing the runtime costs. The chain and async workloads
 * run under six settings, each in a fresh process:
 *   none       nothing
 *   profiling  STARPU_PROFILING=1
 *   counters   counter collection on (starpu_perf_counter_collection_start)
 *   listeners  collection on, and a no-op listener on every counter of the
 *              global, per-worker and per-codelet scopes
 *   tool       STARPU_PROF_TOOL=libbench_nooptool.so: a no-op callback on
 *              every event
 *   all        all of the above
 * For each setting it prints the cost per task and the cost added to
 * "none" (paired by round: the settings alternate within each round); a
 * setting's sample is the median of 3 runs of each workload in its process.
 * Settings whose API the headers lack (StarPU 1.3) are skipped.
 */
#include "bench.h"
#include "monitor_api.h"
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>

enum { NONE, PROFILING, COUNTERS, LISTENERS, TOOL, ALL, NSETTINGS };
#define RUNS_PER_SETTING 3
static const char *const setting_names[NSETTINGS] = { "none", "profiling", "counters", "listeners", "tool", "all" };

enum { WANT_PROFILING = 1, WANT_COUNTERS = 2, WANT_LISTENERS = 4, WANT_TOOL = 8 };
static const int setting_wants[NSETTINGS] =
{
	0, WANT_PROFILING, WANT_COUNTERS, WANT_COUNTERS | WANT_LISTENERS, WANT_TOOL,
	WANT_PROFILING | WANT_COUNTERS | WANT_LISTENERS | WANT_TOOL,
};

struct monitor_setting
{
	const struct bench_options *options;
	const char *tool_path;
	int setting;
	int header;	/* print the header line (first child only) */
};

/* What a child sends back. */
struct monitor_result
{
	int applied;	/* WANT_* bits that took effect */
	double chain_us;
	double async_us;
};

#ifdef BENCH_HAVE_PERF_MONITORING
static void noop_listener(struct starpu_perf_counter_listener *listener, struct starpu_perf_counter_sample *sample, void *context)
{
	(void) listener;
	(void) sample;
	(void) context;
}

static const enum starpu_perf_counter_scope scopes[3] =
{
	starpu_perf_counter_scope_global, starpu_perf_counter_scope_per_worker, starpu_perf_counter_scope_per_codelet,
};
static struct starpu_perf_counter_set *sets[3];
static struct starpu_perf_counter_listener *listeners[3];

static void listeners_start(void)
{
	for (int s = 0; s < 3; s++)
	{
		sets[s] = starpu_perf_counter_set_alloc(scopes[s]);
		if (!sets[s])
			bench_die("starpu_perf_counter_set_alloc(%s) returned NULL", starpu_perf_counter_scope_id_to_name(scopes[s]));
		int n = starpu_perf_counter_nb(scopes[s]);
		for (int nth = 0; nth < n; nth++)
			starpu_perf_counter_set_enable_id(sets[s], starpu_perf_counter_nth_to_id(scopes[s], nth));
		listeners[s] = starpu_perf_counter_listener_init(sets[s], noop_listener, NULL);
		if (!listeners[s])
			bench_die("starpu_perf_counter_listener_init returned NULL");
	}
	starpu_perf_counter_set_global_listener(listeners[0]);
	starpu_perf_counter_set_all_per_worker_listeners(listeners[1]);
	starpu_perf_counter_set_per_codelet_listener(&bench_empty_cl, listeners[2]);
}

static void listeners_stop(void)
{
	starpu_perf_counter_unset_global_listener();
	starpu_perf_counter_unset_all_per_worker_listeners();
	starpu_perf_counter_unset_per_codelet_listener(&bench_empty_cl);
	for (int s = 0; s < 3; s++)
	{
		starpu_perf_counter_listener_exit(listeners[s]);
		starpu_perf_counter_set_free(sets[s]);
	}
}
#endif

/* Declared weak: a runtime without profiling leaves it NULL instead of failing to link. */
extern int starpu_profiling_status_get(void) __attribute__((weak));

/* Did the runtime load and register the no-op tool? */
static int tool_registered(const char *path)
{
	void *handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (!handle)
		return 0;
	int *flag = (int *) dlsym(handle, "bench_nooptool_registered");
	int registered = flag && *flag;
	dlclose(handle);
	return registered;
}

static void run_setting(void *arg, int fd)
{
	const struct monitor_setting *m = arg;
	const struct bench_options *o = m->options;
	int wants = setting_wants[m->setting];
	struct monitor_result result = { 0, 0, 0 };

	if (wants & WANT_PROFILING) setenv("STARPU_PROFILING", "1", 1);
	else unsetenv("STARPU_PROFILING");
	if ((wants & WANT_TOOL) && m->tool_path) setenv("STARPU_PROF_TOOL", m->tool_path, 1);
	else unsetenv("STARPU_PROF_TOOL");

	bench_starpu_init();
	if (m->header)
		bench_header("monitor: chain and async under each monitoring setting (-n tasks, -r rounds)", o);
	if ((wants & WANT_PROFILING) && starpu_profiling_status_get && starpu_profiling_status_get() == STARPU_PROFILING_ENABLE)
		result.applied |= WANT_PROFILING;
	if ((wants & WANT_TOOL) && m->tool_path && tool_registered(m->tool_path))
		result.applied |= WANT_TOOL;
#ifdef BENCH_HAVE_PERF_MONITORING
	if ((wants & WANT_COUNTERS) && bench_have_counters())
	{
		starpu_perf_counter_collection_start();
		result.applied |= WANT_COUNTERS;
	}
	if ((wants & WANT_LISTENERS) && bench_have_listeners())
	{
		listeners_start();
		result.applied |= WANT_LISTENERS;
	}
#endif

	/* Each workload runs RUNS_PER_SETTING times in the process: its median is
	 * the setting's sample (one run alone varies more than what is measured). */
	double submit, exec, chain[RUNS_PER_SETTING], async[RUNS_PER_SETTING];
	long warmup = o->ntasks < 100000 ? o->ntasks : 100000;
	bench_warmup_chain(warmup);
	for (int i = 0; i < RUNS_PER_SETTING; i++)
	{
		bench_run_chain(o->ntasks, &submit, &exec, NULL);
		chain[i] = submit + exec;
	}
	bench_warmup_async(warmup);
	for (int i = 0; i < RUNS_PER_SETTING; i++)
		bench_run_async(o->ntasks, &submit, &async[i]);
	result.chain_us = bench_median(chain, RUNS_PER_SETTING);
	result.async_us = bench_median(async, RUNS_PER_SETTING);

#ifdef BENCH_HAVE_PERF_MONITORING
	if (result.applied & WANT_LISTENERS)
		listeners_stop();
	if (result.applied & WANT_COUNTERS)
		starpu_perf_counter_collection_stop();
#endif
	starpu_shutdown();
	bench_write_all(fd, &result, sizeof(result));
}

/* libbench_nooptool.so next to this program (or in its .libs/, for libtool builds). */
static const char *find_tool(void)
{
	static char path[PATH_MAX + 32];
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return NULL;
	exe[len] = '\0';
	const char *dir = dirname(exe);
	const char *candidates[] = { "%s/libbench_nooptool.so", "%s/.libs/libbench_nooptool.so" };
	for (unsigned i = 0; i < 2; i++)
	{
		snprintf(path, sizeof(path), candidates[i], dir);
		if (access(path, R_OK) == 0)
			return path;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 100000, 5, 't',
		    " [-t TOOL.so]\n  -t TOOL.so      the no-op tool library (default: libbench_nooptool.so next to this program)\n"
		    "  -r sets the number of rounds; each round runs every setting once");
	const char *tool = o.extra ? o.extra : getenv("BENCH_TOOL");
	if (!tool)
		tool = find_tool();
	if (tool && tool[0] != '/')
	{
		static char absolute[PATH_MAX];
		if (realpath(tool, absolute))
			tool = absolute;
	}

#ifdef BENCH_HAVE_PROF_TOOL
	int have_tool_api = 1;
#else
	int have_tool_api = 0;
#endif
	/* What this build can do; "all" runs with whatever there is. */
	int can = WANT_PROFILING | (bench_have_counters() ? WANT_COUNTERS : 0)
		| (bench_have_listeners() ? WANT_LISTENERS : 0) | (have_tool_api && tool ? WANT_TOOL : 0);
	int available[NSETTINGS];
	for (int s = 0; s < NSETTINGS; s++)
		available[s] = s == ALL || (setting_wants[s] & ~can) == 0;

	double chain[NSETTINGS][BENCH_MAX_SAMPLES], async[NSETTINGS][BENCH_MAX_SAMPLES];
	int applied[NSETTINGS] = { 0 };
	for (int round = 0; round < o.reps; round++)
		for (int s = 0; s < NSETTINGS; s++)
		{
			if (!available[s])
				continue;
			struct monitor_setting m = { &o, tool, s, round == 0 && s == 0 };
			struct monitor_result result;
			if (bench_in_child(run_setting, &m, &result, sizeof(result)) != sizeof(result))
				bench_die("the run with setting '%s' failed", setting_names[s]);
			chain[s][round] = result.chain_us;
			async[s][round] = result.async_us;
			applied[s] = result.applied;
		}

	for (int s = 1; s < NSETTINGS; s++)
	{
		int missing = setting_wants[s] & ~applied[s];
		if (!available[s])
			printf("# setting %s skipped: %s\n", setting_names[s],
			       (setting_wants[s] & WANT_TOOL) && have_tool_api && !tool ? "no tool library (-t)"
			       : "this build of the runtime lacks the API");
		else if (missing)
			printf("# setting %s: not in effect:%s%s%s%s\n", setting_names[s],
			       missing & WANT_PROFILING ? " STARPU_PROFILING=1 (starpu_profiling_status_get() says disabled)" : "",
			       missing & WANT_COUNTERS ? " counters (no starpu_perf_counter_collection_start)" : "",
			       missing & WANT_LISTENERS ? " listeners (no starpu_perf_counter listener API)" : "",
			       missing & WANT_TOOL ? " tool (not loaded: no profiling-tool API or STARPU_PROF_TOOL ignored)" : "");
	}
	const char *workloads[2] = { "chain", "async" };
	for (int w = 0; w < 2; w++)
		for (int s = 0; s < NSETTINGS; s++)
		{
			if (!available[s])
				continue;
			double *samples = w == 0 ? chain[s] : async[s];
			double *none = w == 0 ? chain[NONE] : async[NONE];
			char metric[64];
			snprintf(metric, sizeof(metric), "monitor.%s.%s", workloads[w], setting_names[s]);
			bench_report(metric, "us/task", samples, o.reps);
			if (s == NONE)
				continue;
			double added[BENCH_MAX_SAMPLES];
			for (int r = 0; r < o.reps; r++)
				added[r] = samples[r] - none[r];
			snprintf(metric, sizeof(metric), "monitor.%s.%s.added", workloads[w], setting_names[s]);
			bench_report(metric, "us/task", added, o.reps);
		}
	return 0;
}
