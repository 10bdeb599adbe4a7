/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime's own counters (module "kernel"): the StarPU 1.4 starpu.task.*
 * counters and a few more, fed by the observation path.
 *
 * While collection is on, one observer follows the moments below; while it
 * is off there is no subscription at all, so the task path pays one branch.
 *
 *   TASK_SUBMITTED   total and waiting-for-dependencies count; then the
 *                    global and per-codelet samples are refreshed
 *   TASK_READY       waiting -> ready (tasks that will run on a worker)
 *   TASK_STARTED     ready -> running; the worker notes the start time and
 *                    the overhead since its previous task (the gap, less
 *                    the sleeping in it)
 *   TASK_ENDED       executed count and time; per-worker and per-codelet
 *                    samples are refreshed, between two executions
 *   APP_WAIT_END     the global sample is refreshed after blocking calls
 *   WORKER_SLEEP_*   per-worker sleeping time
 * Only STARTED and ENDED (and the rare sleeps) read the clock; the other
 * moments are observed untimed.
 *
 * Global values are shared atomics; per-worker values are written by their
 * worker only; per-codelet values live behind cl->perf_counter_values (what
 * workers executed, per worker, summed by the updater). The
 * "current" gauges never go below zero: a task already in flight when
 * collection started is not counted when it moves on.
 */
#include "framework.h"
#include <errno.h>
#include <stdio.h>

#define MODULE "kernel"
#define TIME_UNIT "us"

static int id_g_total_submitted, id_g_peak_submitted, id_g_peak_ready, id_g_current_submitted, id_g_current_ready;
static int id_w_total_executed, id_w_cumul_execution_time, id_w_cumul_sleeping_time, id_w_cumul_overhead_time;
static int id_c_total_submitted, id_c_peak_submitted, id_c_peak_ready, id_c_total_executed, id_c_cumul_execution_time;

/* Shared by every submitter and worker, on one cache line: a task that becomes
 * ready on one worker and starts on another moves one line, not two. */
static struct
{
	int64_t total_submitted;
	int64_t current_submitted;
	int64_t peak_submitted;
	int64_t current_ready;
	int64_t peak_ready;
} global __attribute__((aligned(64)));

/* Written by its worker only (single writer), read by updaters anywhere. */
struct worker_values
{
	int64_t total_executed;
	double cumul_execution_time;
	double cumul_sleeping_time;
	double cumul_overhead_time;
	double exec_begin, sleep_begin;
	double last_end, sleeping_at_end;	/* the previous task's end, and the sleeping total then */
} __attribute__((aligned(64)));

static struct worker_values workers[STARPU_NMAXWORKERS];

static int subscriptions[2] = { -1, -1 }; /* timed, untimed */

/* ---------------------------------------------------------- updaters */

static void update_global(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	astro_counter_sample_set_int64(sample, id_g_total_submitted, astro_counter_load_int64(&global.total_submitted));
	astro_counter_sample_set_int64(sample, id_g_peak_submitted, astro_counter_load_int64(&global.peak_submitted));
	astro_counter_sample_set_int64(sample, id_g_peak_ready, astro_counter_load_int64(&global.peak_ready));
	astro_counter_sample_set_int64(sample, id_g_current_submitted, astro_counter_load_int64(&global.current_submitted));
	astro_counter_sample_set_int64(sample, id_g_current_ready, astro_counter_load_int64(&global.current_ready));
}

static void update_worker(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	int workerid = astro_counter_context_worker(context);
	if (workerid < 0 || workerid >= STARPU_NMAXWORKERS)
		return;
	struct worker_values *w = &workers[workerid];
	astro_counter_sample_set_int64(sample, id_w_total_executed, astro_counter_load_int64(&w->total_executed));
	astro_counter_sample_set_double(sample, id_w_cumul_execution_time, astro_counter_load_double(&w->cumul_execution_time));
	astro_counter_sample_set_double(sample, id_w_cumul_sleeping_time, astro_counter_load_double(&w->cumul_sleeping_time));
	astro_counter_sample_set_double(sample, id_w_cumul_overhead_time, astro_counter_load_double(&w->cumul_overhead_time));
}

static void update_codelet(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	struct starpu_codelet *cl = context;
	struct starpu_perf_counter_sample_cl_values *v = cl ? __atomic_load_n(&cl->perf_counter_values, __ATOMIC_ACQUIRE) : NULL;
	if (!v)
		return;
	astro_counter_sample_set_int64(sample, id_c_total_submitted, astro_counter_load_int64(&v->total_submitted));
	astro_counter_sample_set_int64(sample, id_c_peak_submitted, astro_counter_load_int64(&v->peak_submitted));
	astro_counter_sample_set_int64(sample, id_c_peak_ready, astro_counter_load_int64(&v->peak_ready));
	int64_t executed = 0;
	double execution_time = 0.0;
	unsigned nworkers = starpu_worker_get_count();
	for (unsigned w = 0; w < nworkers && w < STARPU_NMAXWORKERS; w++) {
		executed += astro_counter_load_int64(&v->executed[w].total_executed);
		execution_time += astro_counter_load_double(&v->executed[w].cumul_execution_time);
	}
	astro_counter_sample_set_int64(sample, id_c_total_executed, executed);
	astro_counter_sample_set_double(sample, id_c_cumul_execution_time, execution_time);
}

/* ------------------------------------------------------------ events */

static inline bool runs_on_a_worker(const struct starpu_task *task)
{
	return task->cl && task->cl->where != STARPU_NOWHERE;
}

static inline struct starpu_perf_counter_sample_cl_values *codelet_values(const struct starpu_task *task)
{
	return task && task->cl ? __atomic_load_n(&task->cl->perf_counter_values, __ATOMIC_ACQUIRE) : NULL;
}

/* A gauge moves up and its peak follows: the peak is the largest value the gauge ever held. */
static inline void gauge_up(int64_t *current, int64_t *peak)
{
	astro_counter_max_int64(peak, astro_counter_add_fetch_int64(current, 1));
}

/* Time since begin, or 0 when begin belongs to an earlier collection period (or was never set). */
static inline double elapsed_since(double begin, double now)
{
	return begin > 0.0 && begin >= astro_counter_load_double(&_astro_counters_since) ? now - begin : 0.0;
}

static void on_submitted(const struct astro_event *ev)
{
	astro_counter_add_int64(&global.total_submitted, 1);
	gauge_up(&global.current_submitted, &global.peak_submitted);
	struct starpu_perf_counter_sample_cl_values *v = codelet_values(ev->task);
	if (v) {
		astro_counter_add_int64(&v->total_submitted, 1);
		gauge_up(&v->current_submitted, &v->peak_submitted);
	}
	_astro_counters_refresh_global();
	if (v)
		_astro_counters_refresh_codelet(ev->task->cl);
}

static void on_ready(const struct astro_event *ev)
{
	bool runs = runs_on_a_worker(ev->task);
	astro_counter_dec_positive_int64(&global.current_submitted);
	if (runs)
		gauge_up(&global.current_ready, &global.peak_ready);
	struct starpu_perf_counter_sample_cl_values *v = codelet_values(ev->task);
	if (v) {
		astro_counter_dec_positive_int64(&v->current_submitted);
		if (runs)
			gauge_up(&v->current_ready, &v->peak_ready);
	}
}

static void on_started(const struct astro_event *ev)
{
	astro_counter_dec_positive_int64(&global.current_ready);
	struct starpu_perf_counter_sample_cl_values *v = codelet_values(ev->task);
	if (v)
		astro_counter_dec_positive_int64(&v->current_ready);
	if (ev->workerid < 0 || ev->workerid >= STARPU_NMAXWORKERS)
		return;
	struct worker_values *w = &workers[ev->workerid];
	double gap = elapsed_since(w->last_end, ev->time_us);
	double slept = w->cumul_sleeping_time - w->sleeping_at_end;
	if (gap > slept)
		astro_counter_local_add_double(&w->cumul_overhead_time, gap - slept);
	astro_counter_store_double(&w->exec_begin, ev->time_us);
}

static void on_ended(const struct astro_event *ev)
{
	if (ev->workerid < 0 || ev->workerid >= STARPU_NMAXWORKERS)
		return;
	struct worker_values *w = &workers[ev->workerid];
	double duration = elapsed_since(astro_counter_load_double(&w->exec_begin), ev->time_us);
	astro_counter_local_add_int64(&w->total_executed, 1);
	astro_counter_local_add_double(&w->cumul_execution_time, duration);
	w->last_end = ev->time_us;
	w->sleeping_at_end = w->cumul_sleeping_time;
	struct starpu_perf_counter_sample_cl_values *v = codelet_values(ev->task);
	if (v) {
		astro_counter_local_add_int64(&v->executed[ev->workerid].total_executed, 1);
		astro_counter_local_add_double(&v->executed[ev->workerid].cumul_execution_time, duration);
	}
	_astro_counters_refresh_worker(ev->workerid);
	if (v)
		_astro_counters_refresh_codelet(ev->task->cl);
}

/* The worker starts or stops sleeping: accumulates the sleep's length. */
static void on_sleep(const struct astro_event *ev, bool ends)
{
	if (ev->workerid < 0 || ev->workerid >= STARPU_NMAXWORKERS)
		return;
	struct worker_values *w = &workers[ev->workerid];
	if (!ends) {
		astro_counter_store_double(&w->sleep_begin, ev->time_us);
		return;
	}
	astro_counter_local_add_double(&w->cumul_sleeping_time, elapsed_since(astro_counter_load_double(&w->sleep_begin), ev->time_us));
	astro_counter_store_double(&w->sleep_begin, 0.0);
}

static void on_event(const struct astro_event *ev, void *arg)
{
	(void)arg;
	switch (ev->moment) {
	case ASTRO_MOMENT_TASK_SUBMITTED:
		on_submitted(ev);
		break;
	case ASTRO_MOMENT_TASK_READY:
		on_ready(ev);
		break;
	case ASTRO_MOMENT_TASK_STARTED:
		on_started(ev);
		break;
	case ASTRO_MOMENT_TASK_ENDED:
		on_ended(ev);
		break;
	case ASTRO_MOMENT_APP_WAIT_END:
		_astro_counters_refresh_global();
		break;
	case ASTRO_MOMENT_WORKER_SLEEP_BEGIN:
	case ASTRO_MOMENT_WORKER_SLEEP_END:
		on_sleep(ev, ev->moment == ASTRO_MOMENT_WORKER_SLEEP_END);
		break;
	default:
		break;
	}
}

/* The moments whose time matters, and those counted only: the latter do not read the clock. */
#define TIMED_MOMENTS                                                                                              \
	(ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED) |                \
	 ASTRO_MOMENT_BIT(ASTRO_MOMENT_WORKER_SLEEP_BEGIN) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_WORKER_SLEEP_END))
#define COUNTED_MOMENTS                                                                                            \
	(ASTRO_OBSERVE_UNTIMED | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_SUBMITTED) |                                   \
	 ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_READY) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_APP_WAIT_END))

void _astro_task_counters_collect(bool on)
{
	static const uint64_t masks[2] = { TIMED_MOMENTS, COUNTED_MOMENTS };
	/* Subscribed once per run, then switched by their masks: the kernel never reuses observer slots before shutdown. */
	for (int i = 0; i < 2; i++) {
		if (on && subscriptions[i] < 0) {
			subscriptions[i] = astro_observe_subscribe(masks[i], on_event, NULL);
			if (subscriptions[i] < 0)
				astro_log_error("performance counters", "cannot follow the task moments (%d): the runtime's counters stay at zero",
						subscriptions[i]);
		} else if (subscriptions[i] >= 0) {
			astro_observe_set_mask(subscriptions[i], on ? masks[i] : 0);
		}
	}
}

void _astro_task_counters_shutdown(void)
{
	subscriptions[0] = subscriptions[1] = -1;
}

/* ------------------------------------------------------- registration */

static int reg(enum starpu_perf_counter_scope scope, const char *name, enum starpu_perf_counter_type type,
	       enum astro_counter_kind kind, const char *unit, const char *help)
{
	return astro_counter_register(MODULE, scope, name, type, kind, unit, help);
}

void _astro_task_counters_register(void)
{
	const enum starpu_perf_counter_scope g = starpu_perf_counter_scope_global;
	const enum starpu_perf_counter_scope w = starpu_perf_counter_scope_per_worker;
	const enum starpu_perf_counter_scope c = starpu_perf_counter_scope_per_codelet;
	const enum starpu_perf_counter_type i64 = starpu_perf_counter_type_int64;
	const enum starpu_perf_counter_type dbl = starpu_perf_counter_type_double;

	memset(&global, 0, sizeof(global));
	memset(workers, 0, sizeof(workers));
	subscriptions[0] = subscriptions[1] = -1;

	/* StarPU 1.4's counters first, in its order, so their ids match StarPU's. */
	id_g_total_submitted = reg(g, "starpu.task.g_total_submitted", i64, ASTRO_COUNTER_MONOTONIC, "tasks",
				   "tasks submitted since collection started");
	id_g_peak_submitted = reg(g, "starpu.task.g_peak_submitted", i64, ASTRO_COUNTER_MONOTONIC, "tasks",
				  "largest number of tasks submitted and waiting for their dependencies at the same time");
	id_g_peak_ready = reg(g, "starpu.task.g_peak_ready", i64, ASTRO_COUNTER_MONOTONIC, "tasks",
			      "largest number of tasks ready and waiting for a worker at the same time");
	id_w_total_executed = reg(w, "starpu.task.w_total_executed", i64, ASTRO_COUNTER_MONOTONIC, "tasks",
				  "tasks this worker executed");
	id_w_cumul_execution_time = reg(w, "starpu.task.w_cumul_execution_time", dbl, ASTRO_COUNTER_MONOTONIC, TIME_UNIT,
					"time this worker spent executing tasks, in microseconds");
	id_c_total_submitted = reg(c, "starpu.task.c_total_submitted", i64, ASTRO_COUNTER_MONOTONIC, "tasks",
				   "tasks of this codelet submitted since its listener was set");
	id_c_peak_submitted = reg(c, "starpu.task.c_peak_submitted", i64, ASTRO_COUNTER_MONOTONIC, "tasks",
				  "largest number of tasks of this codelet waiting for their dependencies at the same time");
	id_c_peak_ready = reg(c, "starpu.task.c_peak_ready", i64, ASTRO_COUNTER_MONOTONIC, "tasks",
			      "largest number of tasks of this codelet ready and waiting for a worker at the same time");
	id_c_total_executed = reg(c, "starpu.task.c_total_executed", i64, ASTRO_COUNTER_MONOTONIC, "tasks",
				  "tasks of this codelet executed since its listener was set");
	id_c_cumul_execution_time = reg(c, "starpu.task.c_cumul_execution_time", dbl, ASTRO_COUNTER_MONOTONIC, TIME_UNIT,
					"time spent executing tasks of this codelet, in microseconds");

	/* What a user wants next: the queues now, and where worker time goes. */
	id_g_current_submitted = reg(g, "starpu.task.g_current_submitted", i64, ASTRO_COUNTER_INSTANT, "tasks",
				     "tasks submitted and waiting for their dependencies now");
	id_g_current_ready = reg(g, "starpu.task.g_current_ready", i64, ASTRO_COUNTER_INSTANT, "tasks",
				 "tasks ready and waiting for a worker now (the ready-queue length)");
	id_w_cumul_sleeping_time = reg(w, "starpu.worker.w_cumul_sleeping_time", dbl, ASTRO_COUNTER_MONOTONIC, TIME_UNIT,
				       "time this worker slept for lack of work, in microseconds");
	id_w_cumul_overhead_time = reg(w, "starpu.worker.w_cumul_overhead_time", dbl, ASTRO_COUNTER_MONOTONIC, TIME_UNIT,
				       "time this worker spent awake between two tasks (finding the next one, fetching its data, "
				       "callbacks, releasing dependencies), in microseconds");

	astro_counter_register_updater(MODULE, g, update_global, NULL);
	astro_counter_register_updater(MODULE, w, update_worker, NULL);
	astro_counter_register_updater(MODULE, c, update_codelet, NULL);
}
