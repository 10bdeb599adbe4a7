/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stress run shared by tests/test_stress.cc (small, in make check) and
 * bench/stress.c (1M tasks, a benchmark): several threads submit tasks while
 * every kind of monitoring is on (STARPU_PROFILING=1, counter collection
 * with a listener on every counter of every scope, a tool with a callback on
 * every event), then every count is checked exactly against what was
 * submitted. Header-only C, using the StarPU API plus astro_counter_read().
 */
#ifndef ASTRO_TESTS_STRESS_H
#define ASTRO_TESTS_STRESS_H

#include <starpu.h>
#include <starpu_profiling.h>
#include <starpu_profiling_tool.h>
#include <astrolabe/counters.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct stress_config
{
	const char *policy;
	int nworkers;
	int nsubmitters;
	long ntasks;            /* in all, split among the submitters */
	const char *tool_path;  /* the proftool_count library */
};

struct stress_result
{
	double seconds;         /* from the first submission to the end of the final wait */
	long executed;          /* as counted by the tasks */
	long listener_calls[3]; /* global, per worker, per codelet */
	int nerrors;
	char errors[1024];      /* one line per failed check */
};

#define STRESS_NSCOPES 3
#define STRESS_NEVENTS (starpu_prof_tool_event_user_end + 1)

struct stress_state
{
	long executed;          /* atomic */
	long listener_calls[STRESS_NSCOPES];
	int64_t max_total_submitted; /* highest g_total_submitted a global listener saw */
	int id_g_total_submitted;
	struct starpu_codelet cl;
	long per_submitter;
	int submit_failures;    /* atomic */
};

static struct stress_state stress_state;

static void stress_fail(struct stress_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void stress_fail(struct stress_result *r, const char *fmt, ...)
{
	size_t used = strlen(r->errors);
	va_list ap;
	r->nerrors++;
	if (used + 2 >= sizeof(r->errors))
		return;
	va_start(ap, fmt);
	vsnprintf(r->errors + used, sizeof(r->errors) - used - 1, fmt, ap);
	va_end(ap);
	strcat(r->errors, "\n");
}

static void stress_task(void **buffers, void *arg)
{
	(void)buffers;
	(void)arg;
	__atomic_add_fetch(&stress_state.executed, 1, __ATOMIC_RELAXED);
}

static void stress_listener(struct starpu_perf_counter_listener *listener, struct starpu_perf_counter_sample *sample, void *context)
{
	long scope = (long)(intptr_t)astro_perf_counter_listener_get_user_arg(listener);
	(void)context;
	__atomic_add_fetch(&stress_state.listener_calls[scope], 1, __ATOMIC_RELAXED);
	if (scope == 0) {
		int64_t v = starpu_perf_counter_sample_get_int64_value(sample, stress_state.id_g_total_submitted);
		int64_t seen = __atomic_load_n(&stress_state.max_total_submitted, __ATOMIC_RELAXED);
		while (v > seen && !__atomic_compare_exchange_n(&stress_state.max_total_submitted, &seen, v, 1,
								 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
}

static void *stress_submitter(void *arg)
{
	(void)arg;
	starpu_prof_tool_user_start("stress submitter");
	for (long i = 0; i < stress_state.per_submitter; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &stress_state.cl;
		if (starpu_task_submit(t) != 0) {
			starpu_task_destroy(t);
			__atomic_add_fetch(&stress_state.submit_failures, 1, __ATOMIC_RELAXED);
		}
	}
	starpu_prof_tool_user_end("stress submitter");
	return NULL;
}

static int64_t stress_read(int id, const void *context)
{
	union astro_counter_value v;
	if (id < 0 || astro_counter_read(id, context, &v) != 0)
		return -1;
	return v.int64_val;
}

static double stress_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define STRESS_EXPECT_EQ(r, what, got, want) \
	do { \
		long long got_ = (long long)(got), want_ = (long long)(want); \
		if (got_ != want_) \
			stress_fail(r, "%s: %lld, expected %lld", what, got_, want_); \
	} while (0)

/* Runs one stress round in a fresh runtime; returns the number of failed checks (0: all exact). */
static int stress_run(const struct stress_config *c, struct stress_result *r)
{
	static const enum starpu_perf_counter_scope scopes[STRESS_NSCOPES] = {
		starpu_perf_counter_scope_global, starpu_perf_counter_scope_per_worker, starpu_perf_counter_scope_per_codelet,
	};
	struct starpu_perf_counter_set *sets[STRESS_NSCOPES];
	struct starpu_perf_counter_listener *listeners[STRESS_NSCOPES];
	char ncpu[16];
	long n = c->ntasks / c->nsubmitters * c->nsubmitters;

	memset(r, 0, sizeof(*r));
	memset(&stress_state, 0, sizeof(stress_state));
	starpu_codelet_init(&stress_state.cl);
	stress_state.cl.cpu_funcs[0] = stress_task;
	stress_state.cl.name = "stress";
	stress_state.per_submitter = n / c->nsubmitters;

	snprintf(ncpu, sizeof(ncpu), "%d", c->nworkers);
	setenv("STARPU_NCPU", ncpu, 1);
	setenv("STARPU_SCHED", c->policy, 1);
	setenv("STARPU_PROFILING", "1", 1);
	setenv("STARPU_PROF_TOOL", c->tool_path, 1);
	struct starpu_conf conf;
	starpu_conf_init(&conf);
	conf.start_perf_counter_collection = 1;
	int ret = starpu_init(&conf);
	unsetenv("STARPU_PROF_TOOL");
	unsetenv("STARPU_PROFILING");
	if (ret != 0) {
		stress_fail(r, "starpu_init() returned %d", ret);
		return r->nerrors;
	}
	/* Our own reference keeps the tool loaded past starpu_shutdown(), to read its counts. */
	void *tool = dlopen(c->tool_path, RTLD_NOW | RTLD_NOLOAD);
	unsigned long *events = tool ? (unsigned long *)dlsym(tool, "proftool_count_events") : NULL;
	if (!events)
		stress_fail(r, "the counting tool %s is not loaded: %s", c->tool_path, dlerror());
	const char *policy = starpu_sched_get_sched_policy() ? starpu_sched_get_sched_policy()->policy_name : "(none)";
	if (strcmp(policy, c->policy) != 0)
		stress_fail(r, "policy %s asked, %s running", c->policy, policy);
	STRESS_EXPECT_EQ(r, "starpu_profiling_status_get()", starpu_profiling_status_get(), 1);
	STRESS_EXPECT_EQ(r, "workers", starpu_worker_get_count(), c->nworkers);

	stress_state.id_g_total_submitted = starpu_perf_counter_name_to_id(scopes[0], "starpu.task.g_total_submitted");
	for (int s = 0; s < STRESS_NSCOPES; s++) {
		sets[s] = starpu_perf_counter_set_alloc(scopes[s]);
		for (int nth = 0; nth < starpu_perf_counter_nb(scopes[s]); nth++)
			starpu_perf_counter_set_enable_id(sets[s], starpu_perf_counter_nth_to_id(scopes[s], nth));
		listeners[s] = starpu_perf_counter_listener_init(sets[s], stress_listener, (void *)(intptr_t)s);
	}
	starpu_perf_counter_set_global_listener(listeners[0]);
	starpu_perf_counter_set_all_per_worker_listeners(listeners[1]);
	starpu_perf_counter_set_per_codelet_listener(&stress_state.cl, listeners[2]);

	pthread_t threads[64];
	int nthreads = c->nsubmitters < 64 ? c->nsubmitters : 64;
	double begin = stress_now();
	for (int i = 0; i < nthreads; i++)
		pthread_create(&threads[i], NULL, stress_submitter, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	STRESS_EXPECT_EQ(r, "starpu_task_wait_for_all()", starpu_task_wait_for_all(), 0);
	r->seconds = stress_now() - begin;
	r->executed = __atomic_load_n(&stress_state.executed, __ATOMIC_RELAXED);
	for (int s = 0; s < STRESS_NSCOPES; s++)
		r->listener_calls[s] = __atomic_load_n(&stress_state.listener_calls[s], __ATOMIC_RELAXED);

	/* Tasks and counters. */
	STRESS_EXPECT_EQ(r, "failed submissions", stress_state.submit_failures, 0);
	STRESS_EXPECT_EQ(r, "tasks executed", r->executed, n);
	STRESS_EXPECT_EQ(r, "g_total_submitted", stress_read(stress_state.id_g_total_submitted, NULL), n);
	STRESS_EXPECT_EQ(r, "g_total_submitted seen by the global listener", stress_state.max_total_submitted, n);
	STRESS_EXPECT_EQ(r, "g_current_submitted", stress_read(starpu_perf_counter_name_to_id(scopes[0], "starpu.task.g_current_submitted"), NULL), 0);
	STRESS_EXPECT_EQ(r, "g_current_ready", stress_read(starpu_perf_counter_name_to_id(scopes[0], "starpu.task.g_current_ready"), NULL), 0);
	STRESS_EXPECT_EQ(r, "c_total_submitted", stress_read(starpu_perf_counter_name_to_id(scopes[2], "starpu.task.c_total_submitted"), &stress_state.cl), n);
	STRESS_EXPECT_EQ(r, "c_total_executed", stress_read(starpu_perf_counter_name_to_id(scopes[2], "starpu.task.c_total_executed"), &stress_state.cl), n);
	int id_w_exec = starpu_perf_counter_name_to_id(scopes[1], "starpu.task.w_total_executed");
	long w_exec = 0, prof_exec = 0;
	for (int w = 0; w < c->nworkers; w++) {
		struct starpu_profiling_worker_info info;
		w_exec += stress_read(id_w_exec, &w);
		if (starpu_profiling_worker_get_info(w, &info) == 0)
			prof_exec += info.executed_tasks;
	}
	STRESS_EXPECT_EQ(r, "sum of w_total_executed", w_exec, n);
	STRESS_EXPECT_EQ(r, "sum of the profiling executed_tasks", prof_exec, n);
	/* One global call per submission and per wait end, one per-worker call per execution,
	 * one per-codelet call per submission and per execution. */
	STRESS_EXPECT_EQ(r, "global listener calls", r->listener_calls[0], n + 1);
	STRESS_EXPECT_EQ(r, "per-worker listener calls", r->listener_calls[1], n);
	STRESS_EXPECT_EQ(r, "per-codelet listener calls", r->listener_calls[2], 2 * n);

	starpu_perf_counter_unset_per_codelet_listener(&stress_state.cl);
	starpu_perf_counter_unset_all_per_worker_listeners();
	starpu_perf_counter_unset_global_listener();
	for (int s = 0; s < STRESS_NSCOPES; s++) {
		starpu_perf_counter_listener_exit(listeners[s]);
		starpu_perf_counter_set_free(sets[s]);
	}
	starpu_shutdown();

	/* Tool events, every one of them, once the runtime is down. */
	if (events) {
		static const struct { int event; const char *name; int per; } expected[] = {
			{ starpu_prof_tool_event_init_begin, "init_begin", 0 },
			{ starpu_prof_tool_event_init, "init", 0 },
			{ starpu_prof_tool_event_init_end, "init_end", 0 },
			{ starpu_prof_tool_event_terminate, "terminate", 0 },
			{ starpu_prof_tool_event_driver_init, "driver_init", 1 },
			{ starpu_prof_tool_event_driver_init_start, "driver_init_start", 1 },
			{ starpu_prof_tool_event_driver_init_end, "driver_init_end", 1 },
			{ starpu_prof_tool_event_driver_deinit, "driver_deinit", 1 },
			{ starpu_prof_tool_event_start_cpu_exec, "start_cpu_exec", 2 },
			{ starpu_prof_tool_event_end_cpu_exec, "end_cpu_exec", 2 },
			{ starpu_prof_tool_event_user_start, "user_start", 3 },
			{ starpu_prof_tool_event_user_end, "user_end", 3 },
			{ starpu_prof_tool_event_start_gpu_exec, "start_gpu_exec", 4 },
			{ starpu_prof_tool_event_end_gpu_exec, "end_gpu_exec", 4 },
			{ starpu_prof_tool_event_start_transfer, "start_transfer", 4 },
			{ starpu_prof_tool_event_end_transfer, "end_transfer", 4 },
		};
		for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
			long want = expected[i].per == 0 ? 1 : expected[i].per == 1 ? c->nworkers
				  : expected[i].per == 2 ? n : expected[i].per == 3 ? nthreads : 0;
			char what[64];
			snprintf(what, sizeof(what), "tool event %s", expected[i].name);
			STRESS_EXPECT_EQ(r, what, __atomic_load_n(&events[expected[i].event], __ATOMIC_RELAXED), want);
		}
	}
	if (tool)
		dlclose(tool);
	return r->nerrors;
}

#endif /* ASTRO_TESTS_STRESS_H */
