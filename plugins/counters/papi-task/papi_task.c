/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * counters_papi_task: STARPU_PROF_PAPI_EVENTS, as in StarPU 1.4: the PAPI
 * events it names (separated by spaces or commas) are counted around each
 * task's execution by its worker, in an event set of that worker's own, and
 * stored in the task's profiling info (papi_values, in the variable's order;
 * papi_event_set), so only while profiling is on (STARPU_PROFILING=1 or
 * starpu_profiling_status_set()).
 *
 * Where PAPI cannot count an event (these machines' PAPI sees no hardware
 * counter: PAPI_TOT_INS and the like fail), it says so once for the process
 * and the tasks run without papi_values (zero, papi_event_set PAPI_NULL).
 */
#include <astrolabe/observe.h>
#include <astrolabe/plugin.h>
#include <astrolabe/env.h>
#include <starpu_profiling.h>
#include <papi.h>
#include <errno.h>
#include <astrolabe/thread.h>
#include <stdlib.h>
#include <string.h>

#define MODULE "counters_papi_task"

/* One worker's event set: made, used and read by that worker's thread only. */
struct worker_set
{
	int state;                 /* 0: not made yet, 1: counting, -1: cannot */
	int set;
} __attribute__((aligned(64)));

static struct worker_set workers[STARPU_NMAXWORKERS];
static char *names[PAPI_MAX_HWCTRS];
static int nnames;
static int said;               /* the one message about what PAPI cannot count */
/* PAPI's event-set set-up shares tables whose locks are its own: one worker at a time (once per worker). */
static starpu_pthread_mutex_t setup_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

static void say_once(const char *fmt, const char *what, const char *why)
{
	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	astro_log_error(MODULE, fmt, what, why);
}

/* On the worker's thread, at its first task: its event set with every event, or none. */
static void make_set(struct worker_set *w)
{
	w->state = -1;
	w->set = PAPI_NULL;
	if (PAPI_register_thread() != PAPI_OK || PAPI_create_eventset(&w->set) != PAPI_OK) {
		say_once("STARPU_PROF_PAPI_EVENTS: %s%s: tasks go without papi_values", "PAPI cannot make an event set on a worker", "");
		return;
	}
	for (int i = 0; i < nnames; i++) {
		int ret = PAPI_add_named_event(w->set, names[i]);
		if (ret != PAPI_OK) {
			say_once("STARPU_PROF_PAPI_EVENTS: PAPI cannot count %s here (%s): tasks go without papi_values (papi_avail lists what it can count)",
				 names[i], PAPI_strerror(ret));
			goto fail;
		}
	}
	int ret = PAPI_start(w->set);
	if (ret != PAPI_OK) {
		say_once("STARPU_PROF_PAPI_EVENTS: PAPI cannot start the events %s(%s): tasks go without papi_values", "", PAPI_strerror(ret));
		goto fail;
	}
	w->state = 1;
	return;
fail:
	PAPI_cleanup_eventset(w->set);
	PAPI_destroy_eventset(&w->set);
	w->set = PAPI_NULL;
}

static void on_task(const struct astro_event *ev, void *arg)
{
	(void)arg;
	if (ev->workerid < 0 || ev->workerid >= STARPU_NMAXWORKERS)
		return;
	struct worker_set *w = &workers[ev->workerid];
	struct starpu_profiling_task_info *info = ev->task ? ev->task->profiling_info : NULL;
	if (ev->moment == ASTRO_MOMENT_WORKER_DEINIT_BEGIN) {
		if (w->state == 1) {
			long long ignored[PAPI_MAX_HWCTRS];
			starpu_pthread_mutex_lock(&setup_lock);
			PAPI_stop(w->set, ignored);
			PAPI_cleanup_eventset(w->set);
			PAPI_destroy_eventset(&w->set);
			PAPI_unregister_thread();
			starpu_pthread_mutex_unlock(&setup_lock);
		}
		w->state = 0;
		return;
	}
	if (!info)
		return;
	if (ev->moment == ASTRO_MOMENT_TASK_STARTED) {
		if (w->state == 0) {
			starpu_pthread_mutex_lock(&setup_lock);
			make_set(w);
			starpu_pthread_mutex_unlock(&setup_lock);
		}
		info->papi_event_set = w->state == 1 ? w->set : PAPI_NULL;
		if (w->state == 1)
			PAPI_reset(w->set);
	} else if (w->state == 1 && PAPI_read(w->set, info->papi_values) != PAPI_OK) {
		info->papi_event_set = PAPI_NULL;
	}
}

static void clear_names(void)
{
	for (int i = 0; i < nnames; i++)
		free(names[i]);
	nnames = 0;
}

static int init(void)
{
	/* PAPI copies an event's name into buffers of PAPI_MAX_STR_LEN characters: a longer one would overflow them
	 * inside libpapi, so such a list is refused with one message. */
	const char *events = astro_env_names("STARPU_PROF_PAPI_EVENTS", " ,\t", PAPI_MAX_STR_LEN - 1, NULL);
	if (!events || !*events)
		return ASTRO_PLUGIN_DECLINE;
	clear_names();
	char *copy = strdup(events), *save = NULL;
	for (char *e = copy ? strtok_r(copy, " ,\t", &save) : NULL; e; e = strtok_r(NULL, " ,\t", &save)) {
		if (nnames == PAPI_MAX_HWCTRS) {
			astro_log_error(MODULE, "STARPU_PROF_PAPI_EVENTS names more than %d events: the ones after %s are not counted",
					PAPI_MAX_HWCTRS, names[nnames - 1]);
			break;
		}
		names[nnames++] = strdup(e);
	}
	free(copy);
	if (!PAPI_is_initialized()) {
		int ret = PAPI_library_init(PAPI_VER_CURRENT);
		if (ret != PAPI_VER_CURRENT || PAPI_thread_init(astro_thread_id) != PAPI_OK) {
			astro_log_error(MODULE, "STARPU_PROF_PAPI_EVENTS: PAPI could not be initialised (%s): tasks go without papi_values",
					ret < 0 ? PAPI_strerror(ret) : "version mismatch");
			return ASTRO_PLUGIN_DECLINE;
		}
	}
	memset(workers, 0, sizeof(workers));
	said = 0;
	int sub = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED) |
				  ASTRO_MOMENT_BIT(ASTRO_MOMENT_WORKER_DEINIT_BEGIN),
				  on_task, NULL);
	return sub < 0 ? sub : 0;
}

static void fini(void)
{
	/* The kernel drops the subscription itself at shutdown. */
	clear_names();
}

ASTRO_PLUGIN_DEFINE(counters_papi_task, ASTRO_PLUGIN_COUNTERS, "STARPU_PROF_PAPI_EVENTS: PAPI events counted per task into its profiling info",
		    init, fini);
