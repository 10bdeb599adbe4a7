/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watchdog (STARPU_WATCHDOG_TIMEOUT, in µs): a thread, started at init
 * only when the variable is set, looks a few times per timeout whether a task
 * completed. When none did for a whole timeout while tasks are pending, it
 * says what is stuck (or calls the hook of starpu_task_watchdog_set_hook()
 * instead), and the application goes on, unless STARPU_WATCHDOG_CRASH=1 asks
 * to abort. STARPU_WATCHDOG_DELAY (µs) lets the application start before the
 * watchdog looks.
 *
 * Progress is read from counts the task path keeps anyway: each worker's
 * executed count, and the pending count going down (codelet-less tasks). To
 * name the stuck tasks, the submitted jobs are listed while the watchdog runs:
 * one predictable branch at submission and termination when it does not.
 */
#include "tasks/tasks.h"
#include <time.h>

/* Tasks listed one by one in a report: the rest are counted. */
#define REPORT_MAX_TASKS 32

static starpu_pthread_mutex_t hook_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static void (*watchdog_hook)(void *);
static void *watchdog_hook_arg;

static struct
{
	starpu_pthread_t thread;
	bool started;
	bool stop;                           /* under lock */
	starpu_pthread_mutex_t lock;
	starpu_pthread_cond_t cond;                 /* CLOCK_MONOTONIC */
	double timeout_us, delay_us;
	bool crash;
} wd = { .lock = STARPU_PTHREAD_MUTEX_INITIALIZER };

void starpu_task_watchdog_set_hook(void (*hook)(void *), void *hook_arg)
{
	starpu_pthread_mutex_lock(&hook_lock);
	watchdog_hook = hook;
	watchdog_hook_arg = hook_arg;
	starpu_pthread_mutex_unlock(&hook_lock);
}

/* ---------------------------------------------------------------- report */

static const char *name_of(struct starpu_task *task)
{
	const char *name = task ? starpu_task_get_name(task) : NULL;
	return name ? name : "(unnamed)";
}

struct waits
{
	GHashTable *watched;                 /* job -> job: the live ones */
	GHashTable *preds;                   /* waiting job -> GString of the tasks it waits for */
	GHashTable *end_preds;               /* job whose end waits -> GString */
	struct _astro_job *pred;
};

static void note_waiter(struct _astro_job *waiter, bool is_end, void *arg)
{
	struct waits *w = arg;
	if (!g_hash_table_contains(w->watched, waiter))
		return; /* not submitted (a declared successor), or an application's acquire */
	if (!is_end && __atomic_load_n(&waiter->pending, __ATOMIC_ACQUIRE) == 0)
		return;
	GHashTable *table = is_end ? w->end_preds : w->preds;
	GString *s = g_hash_table_lookup(table, waiter);
	if (!s) {
		s = g_string_new(NULL);
		g_hash_table_insert(table, waiter, s);
	}
	g_string_append_printf(s, "%stask '%s' (job %lu)", s->len ? ", " : "", name_of(w->pred->task), w->pred->id);
}

static void string_free(gpointer s)
{
	g_string_free(s, TRUE);
}

/* What is stuck, as lines of text. Holds _astro_watched_lock: the listed jobs stay alive meanwhile. */
static GString *describe(double idle_us, long pending)
{
	const char *policy = _astro_ctxs[0].policy && _astro_ctxs[0].policy->policy_name ? _astro_ctxs[0].policy->policy_name : "(none)";
	GString *out = g_string_new(NULL);
	g_string_append_printf(out, "[astrolabe] watchdog: no task completed for %.3f s while %ld submitted tasks are not complete "
			       "(STARPU_WATCHDOG_TIMEOUT=%.0f us); scheduling policy '%s'. What is stuck:\n",
			       idle_us / 1e6, pending, wd.timeout_us, policy);
	if (__atomic_load_n(&_astro_rt.paused, __ATOMIC_RELAXED))
		g_string_append(out, "[astrolabe] watchdog: the runtime is paused (starpu_pause): no worker takes a task until "
				     "starpu_resume() is called, from another thread than the waiting one\n");

	starpu_pthread_mutex_lock(&_astro_watched_lock);
	struct waits w = {
		.watched = g_hash_table_new(NULL, NULL),
		.preds = g_hash_table_new_full(NULL, NULL, NULL, string_free),
		.end_preds = g_hash_table_new_full(NULL, NULL, NULL, string_free),
	};
	GHashTable *by_task = g_hash_table_new(NULL, NULL); /* task -> job */
	for (struct _astro_job *j = _astro_watched_head; j; j = j->watch_next) {
		g_hash_table_insert(w.watched, j, j);
		g_hash_table_insert(by_task, j->task, j);
	}
	for (struct _astro_job *j = _astro_watched_head; j; j = j->watch_next) {
		w.pred = j;
		_astro_job_for_each_waiter(j, note_waiter, &w);
	}

	/* The workers: what each runs, what waits in its local queue. */
	GHashTable *placed = g_hash_table_new(NULL, NULL); /* jobs running or in a local queue */
	for (unsigned i = 0; i < _astro_rt.nworkers; i++) {
		struct _astro_worker *worker = _astro_rt.workers[i];
		struct starpu_task *current = __atomic_load_n(&worker->current_task, __ATOMIC_RELAXED);
		struct _astro_job *running = current ? g_hash_table_lookup(by_task, current) : NULL;
		g_string_append_printf(out, "[astrolabe] watchdog:   worker %u (%s): ", i, worker->name);
		if (running) {
			g_string_append_printf(out, "runs task '%s' (job %lu)", name_of(current), running->id);
			g_hash_table_add(placed, running);
		} else {
			g_string_append(out, current ? "ends a task" : "runs no task");
		}
		starpu_pthread_mutex_lock(&worker->local_lock);
		unsigned nlocal = 0;
		for (struct starpu_task *t = starpu_task_list_begin(&worker->local_tasks); t; t = starpu_task_list_next(t))
			nlocal++;
		g_string_append_printf(out, "; %u tasks in its local queue", nlocal);
		unsigned listed = 0;
		for (struct starpu_task *t = starpu_task_list_begin(&worker->local_tasks); t; t = starpu_task_list_next(t)) {
			struct _astro_job *j = g_hash_table_lookup(by_task, t);
			if (j)
				g_hash_table_add(placed, j);
			if (listed++ < REPORT_MAX_TASKS)
				g_string_append_printf(out, "%s'%s' (job %lu)", listed == 1 ? ": " : ", ", name_of(t), _astro_job_of(t)->id);
		}
		starpu_pthread_mutex_unlock(&worker->local_lock);
		g_string_append_c(out, '\n');
	}

	/* Tasks blocked on tags. */
	GHashTable *tag_blocked = g_hash_table_new(NULL, NULL);
	_astro_tags_describe_blocked(out, "[astrolabe] watchdog:   ", tag_blocked);

	/* Each watched task: blocked (on what), or ready where no worker has it. */
	unsigned nblocked = 0, nlost = 0, listed = 0;
	GString *tasks = g_string_new(NULL);
	for (struct _astro_job *j = _astro_watched_head; j; j = j->watch_next) {
		int deps = __atomic_load_n(&j->pending, __ATOMIC_ACQUIRE);
		GString *line = g_string_new(NULL);
		if (deps > 0) {
			nblocked++;
			GString *preds = g_hash_table_lookup(w.preds, j);
			g_string_printf(line, "task '%s' (job %lu) is blocked, %d dependencies left:", name_of(j->task), j->id, deps);
			if (preds)
				g_string_append_printf(line, " waits for %s", preds->str);
			gpointer tag;
			if (g_hash_table_lookup_extended(tag_blocked, j, NULL, &tag))
				g_string_append_printf(line, "%s waits for the dependencies of its tag %llu (above)", preds ? ";" : "",
						       (unsigned long long)(uintptr_t)tag);
			else if (!preds)
				g_string_append(line, " waits for something outside the task graph: data the application holds "
						      "(starpu_data_acquire without release), a communication not complete (listed "
						      "below when there are), or an end dependency not released");
		} else if (!g_hash_table_contains(placed, j)) {
			GString *end = g_hash_table_lookup(w.end_preds, j);
			if (end) {
				g_string_printf(line, "task '%s' (job %lu) ran; its end waits for %s", name_of(j->task), j->id, end->str);
			} else {
				nlost++;
				g_string_printf(line, "task '%s' (job %lu) is ready, pushed to policy '%s', which gave it to no worker",
						name_of(j->task), j->id, policy);
			}
		}
		if (line->len && listed++ < REPORT_MAX_TASKS)
			g_string_append_printf(tasks, "[astrolabe] watchdog:   %s\n", line->str);
		g_string_free(line, TRUE);
	}
	starpu_pthread_mutex_unlock(&_astro_watched_lock);

	g_string_append(out, tasks->str);
	if (listed > REPORT_MAX_TASKS)
		g_string_append_printf(out, "[astrolabe] watchdog:   ... and %u more tasks\n", listed - REPORT_MAX_TASKS);
	_astro_wait_describe_outside(out, "[astrolabe] watchdog:   ");
	g_string_append_printf(out, "[astrolabe] watchdog: %ld ready tasks (nready), %u blocked, %u held by policy '%s' with no worker running them%s\n",
			       (long)_astro_nready(), nblocked, nlost, policy,
			       nlost && __atomic_load_n(&_astro_rt.paused, __ATOMIC_RELAXED) ? " (the runtime is paused: starpu_resume)" :
			       nlost ? " (a policy that keeps tasks from the workers hangs the application)" : "");
	g_string_append(out, "[astrolabe] watchdog: set STARPU_WATCHDOG_CRASH=1 to abort here (e.g. to get a core dump), or raise STARPU_WATCHDOG_TIMEOUT\n");

	g_string_free(tasks, TRUE);
	g_hash_table_destroy(tag_blocked);
	g_hash_table_destroy(placed);
	g_hash_table_destroy(by_task);
	g_hash_table_destroy(w.watched);
	g_hash_table_destroy(w.preds);
	g_hash_table_destroy(w.end_preds);
	return out;
}

static void report(double idle_us, long pending)
{
	starpu_pthread_mutex_lock(&hook_lock);
	void (*hook)(void *) = watchdog_hook;
	void *hook_arg = watchdog_hook_arg;
	starpu_pthread_mutex_unlock(&hook_lock);
	if (hook) {
		hook(hook_arg);
	} else {
		GString *text = describe(idle_us, pending);
		fputs(text->str, stderr);
		g_string_free(text, TRUE);
	}
	if (wd.crash) {
		fprintf(stderr, "[astrolabe] watchdog: no task completed for %.3f s: aborting, as STARPU_WATCHDOG_CRASH=1 asks\n", idle_us / 1e6);
		fflush(stderr);
		abort();
	}
}

/* ---------------------------------------------------------------- thread */

static double now_us(void)
{
	return (double)astro_clock_monotonic_ns() / 1e3;
}

/* Sleeps until the date (µs, CLOCK_MONOTONIC) or the stop; with wd.lock held. */
static void sleep_until(double date_us)
{
	while (!wd.stop && now_us() < date_us)
		if (astro_cond_wait_until(&wd.cond, &wd.lock, (uint64_t)(date_us * 1e3)) == ETIMEDOUT)
			break;
}

static void *watchdog_main(void *arg)
{
	(void)arg;
	/* A few looks per timeout: a stall is seen within a quarter of it. */
	double period = CLAMP(wd.timeout_us / 4, 1000.0, 1e6);
	starpu_pthread_mutex_lock(&wd.lock);
	sleep_until(now_us() + wd.delay_us);
	unsigned long last_executed = _astro_workers_executed();
	long last_pending = _astro_nsubmitted();
	double last_progress = now_us();
	while (!wd.stop) {
		sleep_until(now_us() + period);
		if (wd.stop)
			break;
		unsigned long executed = _astro_workers_executed();
		long pending = _astro_nsubmitted();
		double now = now_us();
		if (executed != last_executed || pending < last_pending || pending <= 0) {
			last_progress = now;
		} else if (now - last_progress >= wd.timeout_us) {
			starpu_pthread_mutex_unlock(&wd.lock);
			report(now - last_progress, pending);
			starpu_pthread_mutex_lock(&wd.lock);
			last_progress = now_us(); /* once per timeout while it stays stuck */
		}
		last_executed = executed;
		last_pending = pending;
	}
	starpu_pthread_mutex_unlock(&wd.lock);
	return NULL;
}

/* A duration in µs from the environment, 0..an hour (3.6e9): def when unset or refused (said). */
static double env_us(const char *name, double def)
{
	return astro_env_float(name, 0.0f, 3.6e9f, (float)def, "µs");
}

void _astro_watchdog_start(void)
{
	double timeout = env_us("STARPU_WATCHDOG_TIMEOUT", 0);
	double delay = env_us("STARPU_WATCHDOG_DELAY", 0);
	if (timeout <= 0 || delay < 0)
		return;
	wd.timeout_us = timeout;
	wd.delay_us = delay;
	wd.crash = astro_env_int("STARPU_WATCHDOG_CRASH", 0, 1, 0, NULL) > 0;
	wd.stop = false;
	astro_cond_init_monotonic(&wd.cond);
	__atomic_store_n(&_astro_watchdog_tracking, 1, __ATOMIC_RELAXED);
	int ret = starpu_pthread_create(&wd.thread, NULL, watchdog_main, NULL);
	if (ret) {
		_astro_error("STARPU_WATCHDOG_TIMEOUT: cannot start the watchdog thread (%s): running without it", strerror(ret));
		__atomic_store_n(&_astro_watchdog_tracking, 0, __ATOMIC_RELAXED);
		starpu_pthread_cond_destroy(&wd.cond);
		return;
	}
	wd.started = true;
}

void _astro_watchdog_stop(void)
{
	if (!wd.started)
		return;
	starpu_pthread_mutex_lock(&wd.lock);
	wd.stop = true;
	starpu_pthread_cond_signal(&wd.cond);
	starpu_pthread_mutex_unlock(&wd.lock);
	starpu_pthread_join(wd.thread, NULL);
	starpu_pthread_cond_destroy(&wd.cond);
	wd.started = false;
	__atomic_store_n(&_astro_watchdog_tracking, 0, __ATOMIC_RELAXED);
	/* All tasks completed (shutdown waited for them): only stuck ones could be left. */
	_astro_watched_clear();
}
