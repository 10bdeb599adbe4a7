/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bounded variables (include/astrolabe/env.h): each numeric one with the
 * range and default its reader states, each string one with its maximum
 * length, as doc/environment.md's table documents them. The env fuzz targets run every
 * input through each of these bounds and check that the value the runtime
 * would use (the parsed one, or the default after a refusal) is in range. */
#ifndef ASTRO_FUZZ_BOUNDS_H
#define ASTRO_FUZZ_BOUNDS_H

#include <limits.h>

struct fuzz_int_bound
{
	const char *name;
	int min, max, def;
};

static const struct fuzz_int_bound fuzz_int_bounds[] = {
	{ "STARPU_TRACE_BUFFER_SIZE", 1, 1024, 8 },
	{ "STARPU_FXT_TRACE", 0, 1, 0 },
	{ "STARPU_GENERATE_TRACE", 0, 1, 0 },
	{ "STARPU_MIN_PRIO", -1000000, 1000000, -5 },
	{ "STARPU_MAX_PRIO", -1000000, 1000000, 5 },
	{ "STARPU_PLUGIN_VERBOSE", 0, 1, 0 },
	{ "STARPU_WORKERS_NOBIND", 0, 1, 0 },
	{ "STARPU_CODELET_PROFILING", 0, 1, 1 },
	{ "STARPU_PROFILING", 0, 1, 0 },
	{ "STARPU_STATS", 0, 1, 1 },
	{ "STARPU_SILENT", 0, 1, 0 },
	{ "STARPU_CATCH_SIGNALS", 0, 1, 1 },
	{ "STARPU_WATCHDOG_CRASH", 0, 1, 0 },
	{ "STARPU_CALIBRATE_MINIMUM", 1, 1000000, 10 },
	{ "STARPU_HISTORY_MAX_ERROR", 1, INT_MAX, 50 },
	{ "STARPU_PERF_MODEL_HOMOGENEOUS_CPU", 0, 1, 1 },
	{ "STARPU_HETEROPRIO_USE_LA", 0, 1, 0 },
	{ "STARPU_LAHETEROPRIO_S_CPU", 0, 1000000, 1 },
	{ "STARPU_HETEROPRIO_USE_AUTO_CALIBRATION", 0, 1, 0 },
	{ "STARPU_HETEROPRIO_CODELET_GROUPING_STRATEGY", 0, 1, 0 },
	{ "STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY", 0, 27, 12 },
	{ "STARPU_AUTOHETEROPRIO_ORDERING_INTERVAL", 0, 1000000, 32 },
	{ "STARPU_AUTOHETEROPRIO_TIME_ESTIMATION_POLICY", 0, 1, 0 },
};

struct fuzz_float_bound
{
	const char *name;
	float min, max, def;
};

static const struct fuzz_float_bound fuzz_float_bounds[] = {
	{ "STARPU_IDLE_POWER", 0.0f, 1e6f, 0.0f },
	{ "STARPU_SCHED_ALPHA", 0.0f, 1e9f, 1.0f },
	{ "STARPU_SCHED_GAMMA", 0.0f, 1e9f, 1000.0f },
	{ "STARPU_WATCHDOG_TIMEOUT", 0.0f, 3.6e9f, 0.0f },
	{ "STARPU_HETEROPRIO_URT_2_ARCH_NEED_MULTIPLIER", 0.0f, 1000.0f, 2.0f },
};

struct fuzz_string_bound
{
	const char *name;
	const char *separators;	/* a list of names, each at most max long; NULL: one string */
	size_t max;
};

static const struct fuzz_string_bound fuzz_string_bounds[] = {
	{ "STARPU_PROF_PAPI_EVENTS", " ,\t", 127 },
	{ "STARPU_SCHED", NULL, 255 },
	{ "STARPU_HOSTNAME", NULL, 255 },
	{ "STARPU_PERF_MODEL_DIR", NULL, 4095 },
	{ "STARPU_PERF_MODEL_PATH", ":,", 4095 },
	{ "STARPU_PLUGIN_PATH", ":", 4095 },
	{ "STARPU_FXT_EVENTS", NULL, 4096 },
	{ "STARPU_LAHETEROPRIO_PUSH", NULL, 255 },
	{ "STARPU_WORKER_STATS_FILE", NULL, 4095 },
	{ "STARPU_PROF_TOOL", ":", 4095 },
};

#define FUZZ_COUNT(a) (sizeof(a) / sizeof((a)[0]))

#endif
