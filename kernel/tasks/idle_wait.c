/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an idle wait waits for. An application's wait that sleeps
 * (starpu_task_wait_for_all and the others, starpu_task_wait, starpu_tag_wait,
 * a throttled submission, starpu_shutdown) wakes once a second to look: when
 * no task completed, none was submitted or became ready since its last look,
 * every worker sleeps (or the runtime is paused) and no transfer is in flight,
 * nothing the runtime does can end the wait. It then says, once, what is
 * awaited: the pause, the policy holding ready tasks no worker gets, the tag
 * nobody notifies, dependencies only the application can release. Only a wait
 * that sleeps looks, so the task path pays nothing. While the watchdog runs
 * (STARPU_WATCHDOG_TIMEOUT), its report, which names every stuck task, says
 * it instead; STARPU_SILENT=1 silences it; a simulation build does not look.
 */
#include "tasks/tasks.h"

/* How long a wait sees nothing move before it looks at what it waits for. */
#define IDLE_LOOK_NS 1000000000ull
#define PREFIX "[astrolabe] idle wait: "

/* The stall said last, so that the other waiters of the same stall do not say it again. */
static starpu_pthread_mutex_t said_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static struct
{
	double session;                      /* _astro_rt.start_time */
	unsigned long executed;
	long nsubmitted, nready;
} said;

static void progress(struct _astro_idle_watch *watch)
{
	watch->executed = _astro_workers_executed();
	watch->nsubmitted = _astro_nsubmitted();
	watch->nready = _astro_nready();
}

void (*_astro_idle_describe_tags)(GString *out, const char *prefix, GHashTable *blocked);

static void (*wait_describer)(char *buf, size_t len);

void astro_wait_describer_set(void (*describe)(char *buf, size_t len))
{
	__atomic_store_n(&wait_describer, describe, __ATOMIC_RELEASE);
}

void _astro_wait_describe_outside(GString *out, const char *prefix)
{
	void (*describe)(char *, size_t) = __atomic_load_n(&wait_describer, __ATOMIC_ACQUIRE);
	if (!describe)
		return;
	char buf[4096];
	buf[0] = '\0';
	describe(buf, sizeof(buf));
	buf[sizeof(buf) - 1] = '\0';
	for (char *line = buf, *end; *line; line = end) {
		end = strchr(line, '\n');
		end = end ? end + 1 : line + strlen(line);
		g_string_append_printf(out, "%s%.*s", prefix, (int)(end - line), line);
		if (end[-1] != '\n')
			g_string_append_c(out, '\n');
	}
}

void _astro_idle_watch_begin(struct _astro_idle_watch *watch, const char *call, struct _astro_job *job,
			     void (*describe)(GString *out, const char *prefix, const void *arg), const void *describe_arg)
{
	watch->call = call;
	watch->job = job;
	watch->describe = describe;
	watch->describe_arg = describe_arg;
	watch->began_ns = astro_clock_monotonic_ns();
	watch->slept = false;
#ifdef STARPU_SIMGRID
	/* A simulation's waits are in virtual time: waking to look would add events to the run it simulates. */
	watch->next_ns = UINT64_MAX;
#else
	watch->next_ns = watch->began_ns + IDLE_LOOK_NS;
#endif
	progress(watch);
}

uint64_t _astro_idle_watch_sleep_ns(struct _astro_idle_watch *watch)
{
	if (watch->next_ns == UINT64_MAX)
		return 0;
	/* The first sleep follows the watch's begin at once: the whole interval, without a clock read
	 * (a synchronous round trip whose waiter sleeps pays one read, not three). */
	if (!watch->slept) {
		watch->slept = true;
		return watch->next_ns - watch->began_ns;
	}
	uint64_t now = astro_clock_monotonic_ns();
	return watch->next_ns > now ? watch->next_ns - now : 1;
}

/* Every worker sleeps, or waits for the pause to end, running nothing; no transfer is in flight. */
static bool all_idle(void)
{
	bool paused = __atomic_load_n(&_astro_rt.paused, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < _astro_rt.nworkers; i++) {
		struct _astro_worker *w = _astro_rt.workers[i];
		if (__atomic_load_n(&w->current_task, __ATOMIC_SEQ_CST) || (!paused && !__atomic_load_n(&w->sleeping, __ATOMIC_SEQ_CST)))
			return false;
	}
	return _astro_transfers_idle();
}

/* Whether this stall is new (not said by another waiter); notes it as said. */
static bool stall_is_new(const struct _astro_idle_watch *watch)
{
	starpu_pthread_mutex_lock(&said_lock);
	bool same = said.session == _astro_rt.start_time && said.executed == watch->executed &&
		    said.nsubmitted == watch->nsubmitted && said.nready == watch->nready;
	said.session = _astro_rt.start_time;
	said.executed = watch->executed;
	said.nsubmitted = watch->nsubmitted;
	said.nready = watch->nready;
	starpu_pthread_mutex_unlock(&said_lock);
	return !same;
}

static const char *name_of(struct starpu_task *task)
{
	const char *name = task ? starpu_task_get_name(task) : NULL;
	return name ? name : "(unnamed)";
}

/* What the task a starpu_task_wait() waits for is doing. Read while every worker sleeps: its status
 * is a snapshot that a worker waking meanwhile may change (not a race ThreadSanitizer should stop on). */
__attribute__((no_sanitize("thread"))) static void describe_job(GString *out, struct _astro_job *job, const char *policy)
{
	int deps = __atomic_load_n(&job->pending, __ATOMIC_ACQUIRE);
	g_string_append_printf(out, PREFIX "  the task waited for, '%s' (job %lu), ", name_of(job->task), job->id);
	if (deps > 0)
		g_string_append_printf(out, "is blocked: %d dependencies left\n", deps);
	else if (job->task->status == STARPU_TASK_RUNNING)
		g_string_append(out, "ran; its end waits for end dependencies not released (starpu_task_end_dep_release)\n");
	else
		g_string_append_printf(out, "is ready, held by policy '%s'\n", policy);
}

static void say(const struct _astro_idle_watch *watch, uint64_t now_ns)
{
	const char *policy = _astro_ctxs[0].policy && _astro_ctxs[0].policy->policy_name ? _astro_ctxs[0].policy->policy_name : "(none)";
	long nsubmitted = watch->nsubmitted, nready = watch->nready;
	GString *out = g_string_new(NULL);
	g_string_append_printf(out, PREFIX "%s has waited %.1f s while every worker is idle and nothing is in flight, "
			       "%ld submitted tasks not complete; what is awaited:\n",
			       watch->call, (double)(now_ns - watch->began_ns) / 1e9, nsubmitted);
	if (__atomic_load_n(&_astro_rt.paused, __ATOMIC_SEQ_CST))
		g_string_append(out, PREFIX "  the runtime is paused (starpu_pause): no worker takes a task until starpu_resume() "
				     "is called, from another thread than the waiting one\n");
	else if (nready > 0)
		g_string_append_printf(out, PREFIX "  %ld ready tasks are held by scheduling policy '%s', which gives them to no worker "
				       "(its push_task keeps them from its pop_task, or gives them to workers that cannot run them)\n",
				       nready, policy);
	if (watch->job)
		describe_job(out, watch->job, policy);
	if (watch->describe)
		watch->describe(out, PREFIX "  ", watch->describe_arg);
	_astro_wait_describe_outside(out, PREFIX "  ");
	GHashTable *tag_blocked = g_hash_table_new(NULL, NULL);
	void (*describe_tags)(GString *, const char *, GHashTable *) = __atomic_load_n(&_astro_idle_describe_tags, __ATOMIC_ACQUIRE);
	if (describe_tags)
		describe_tags(out, PREFIX "  ", tag_blocked);
	long blocked = nsubmitted - nready - (long)g_hash_table_size(tag_blocked);
	g_hash_table_destroy(tag_blocked);
	if (blocked > 0)
		g_string_append_printf(out, PREFIX "  %ld tasks are blocked on their dependencies: tasks not complete (above) or not "
				       "submitted yet, data the application holds (starpu_data_acquire without starpu_data_release), "
				       "communications not complete (listed above when there are), "
				       "end dependencies not released (starpu_task_end_dep_release)\n", blocked);
	g_string_append(out, PREFIX "said once; STARPU_WATCHDOG_TIMEOUT=<µs> names every stuck task, STARPU_SILENT=1 silences this\n");
	fputs(out->str, stderr);
	fflush(stderr);
	g_string_free(out, TRUE);
}

void _astro_idle_watch_look(struct _astro_idle_watch *watch)
{
	uint64_t now = astro_clock_monotonic_ns();
	if (now < watch->next_ns)
		return;
	unsigned long executed = watch->executed;
	long nsubmitted = watch->nsubmitted, nready = watch->nready;
	progress(watch);
	watch->next_ns = now + IDLE_LOOK_NS;
	if (watch->executed != executed || watch->nsubmitted != nsubmitted || watch->nready != nready || !_astro_running() ||
	    __atomic_load_n(&_astro_watchdog_tracking, __ATOMIC_RELAXED) || !all_idle())
		return;
	watch->next_ns = UINT64_MAX; /* once per wait */
	if (astro_env_int("STARPU_SILENT", 0, 1, 0, NULL) > 0 || !stall_is_new(watch))
		return;
	say(watch, now);
}
