/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * counters_papi_sde: exports every performance counter of the runtime and
 * of its plugins as a PAPI software-defined event, so PAPI-based tools read
 * them like any other event:
 *
 *   sde:::STARPU::starpu.task.g_total_submitted          a global counter
 *   sde:::STARPU::starpu.task.w_total_executed           summed over the workers
 *   sde:::STARPU::starpu.task.w_total_executed.worker1   one worker
 *   sde:::STARPU::starpu.task.c_total_executed           summed over the codelets that have a listener
 *
 * Monotonic counters are PAPI "delta" events (a read gives what happened
 * since PAPI_start), instant ones are read as they are; floating-point
 * counters are PAPI doubles. Events are made once every plugin has
 * registered its counters (the end of starpu_init()); read after
 * starpu_shutdown(), they give 0.
 *
 * The runtime counts only while collection is on (StarPU's rule:
 * starpu_conf.start_perf_counter_collection or
 * starpu_perf_counter_collection_start()). A PAPI tool reading these events
 * is asking for them: the first read of a run (PAPI_start() reads every
 * event of its set) starts collection when it is off, once, so the events
 * count from there without the program calling anything. A program that
 * wants counting off afterwards calls starpu_perf_counter_collection_stop().
 *
 * Memory under AddressSanitizer/LeakSanitizer: libsde (PAPI 7.0) gives every
 * event a default description, a copy of its name, and
 * papi_sde_describe_counter() replaces it without freeing it: one lost string
 * per event (33 events, 1,436 bytes, for a 2-worker run), once per process.
 * No call frees it afterwards: the pointer is lost inside libsde, and
 * papi_sde_shutdown() frees only what libsde still holds (and leaves the
 * freed library in libsde's list, where a later PAPI call would find it, so
 * this plugin never calls it: what libsde holds stays reachable, not leaked).
 * So, when the process runs under LeakSanitizer (ASan includes it; its
 * __lsan_disable() is found at run time, so this holds for a program built
 * with -fsanitize=address against an uninstrumented runtime too), events are
 * registered and described with leak detection disabled on this thread:
 * LSan's documented way to ignore a third party's known leak. The events keep their
 * descriptions, and a user's program built with ASan reports no leak of ours
 * without any suppression file.
 */
/* dladdr() */
#define _GNU_SOURCE
#include <astrolabe/counters.h>
#include <astrolabe/observe.h>
#include <astrolabe/plugin.h>
#include <sde_lib.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <astrolabe/thread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODULE "counters_papi_sde"
#define SDE_LIBRARY_NAME "STARPU"

/* One SDE event; kept for the life of the process (PAPI may hold it in an event set). */
struct event
{
	char *sde_name;
	char *counter_name;
	int workerid;        /* per-worker counter: one worker, or -1 for the sum */
	int id;              /* counter id in this run, -1 while it does not exist */
	enum starpu_perf_counter_scope scope;
	enum starpu_perf_counter_type type;
	struct event *next;
};

static starpu_pthread_mutex_t events_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
/* LeakSanitizer's own switches when the process runs under it (see the top), else NULL. */
static void (*lsan_disable)(void);
static void (*lsan_enable)(void);
static struct event *events;
static papi_handle_t sde_handle;
static int running;
/* 1 once a PAPI read of this run started collection (or found it on): reset at each starpu_init(). */
static int reader_seen;

static double value_as_double(enum starpu_perf_counter_type type, union astro_counter_value v)
{
	switch (type) {
	case starpu_perf_counter_type_int32: return v.int32_val;
	case starpu_perf_counter_type_int64: return (double)v.int64_val;
	case starpu_perf_counter_type_float: return v.float_val;
	default: return v.double_val;
	}
}

static bool is_floating(enum starpu_perf_counter_type type)
{
	return type == starpu_perf_counter_type_float || type == starpu_perf_counter_type_double;
}

struct codelet_sum
{
	const struct event *event;
	double sum;
};

static void add_codelet(struct starpu_codelet *cl, void *arg)
{
	struct codelet_sum *sum = arg;
	union astro_counter_value v;
	if (astro_counter_read(sum->event->id, cl, &v) == 0)
		sum->sum += value_as_double(sum->event->type, v);
}

/* The current value of e, as a double (exact for the integers PAPI users count). */
static double event_value(const struct event *e)
{
	union astro_counter_value v;
	double sum = 0.0;
	if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE) || e->id < 0)
		return 0.0;
	switch (e->scope) {
	case starpu_perf_counter_scope_global:
		return astro_counter_read(e->id, NULL, &v) == 0 ? value_as_double(e->type, v) : 0.0;
	case starpu_perf_counter_scope_per_worker:
		if (e->workerid >= 0)
			return astro_counter_read(e->id, &e->workerid, &v) == 0 ? value_as_double(e->type, v) : 0.0;
		for (int w = 0; w < (int)starpu_worker_get_count(); w++)
			if (astro_counter_read(e->id, &w, &v) == 0)
				sum += value_as_double(e->type, v);
		return sum;
	default: {
		struct codelet_sum codelets = { e, 0.0 };
		astro_counter_foreach_codelet(add_codelet, &codelets);
		return codelets.sum;
	}
	}
}

/* A PAPI reader is here: the runtime counts from now on (once a run; see the top). */
static void reader_attached(void)
{
	if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE) || __atomic_exchange_n(&reader_seen, 1, __ATOMIC_ACQ_REL))
		return;
	if (!astro_counter_collecting())
		starpu_perf_counter_collection_start();
}

/* SDE callback: an integer event returns its value, a floating one the bits of a double. */
static long long read_event(void *param)
{
	const struct event *e = param;
	reader_attached();
	double value = event_value(e);
	if (!is_floating(e->type))
		return (long long)value;
	long long bits;
	memcpy(&bits, &value, sizeof(bits));
	return bits;
}

static struct event *event_find(const char *sde_name)
{
	for (struct event *e = events; e; e = e->next)
		if (strcmp(e->sde_name, sde_name) == 0)
			return e;
	return NULL;
}

/* events_lock held. Makes (or revives) the SDE event sde_name for counter id. */
static void event_export(const char *sde_name, int id, int workerid)
{
	struct event *e = event_find(sde_name);
	enum starpu_perf_counter_type type = starpu_perf_counter_get_type_id(id);
	if (e && e->type == type) {
		e->id = id;
		return;
	}
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return;
		e->sde_name = strdup(sde_name);
		e->counter_name = strdup(starpu_perf_counter_id_to_name(id));
		e->workerid = workerid;
		e->next = events;
		events = e;
	}
	e->id = id;
	e->scope = id & 0xf;
	e->type = type;
	int mode = PAPI_SDE_RO | (astro_counter_get_kind(id) == ASTRO_COUNTER_INSTANT ? PAPI_SDE_INSTANT : PAPI_SDE_DELTA);
	int sde_type = is_floating(type) ? PAPI_SDE_double : PAPI_SDE_long_long;
	/* The default description that describing the event loses is allocated when it is registered. */
	if (lsan_disable)
		lsan_disable();
	int ret = papi_sde_register_counter_cb(sde_handle, e->sde_name, mode, sde_type, read_event, e);
	if (ret == SDE_OK)
		papi_sde_describe_counter(sde_handle, e->sde_name, starpu_perf_counter_get_help_string(id));
	if (lsan_enable)
		lsan_enable();
	if (ret != SDE_OK)
		astro_log_error(MODULE, "PAPI SDE refused the event %s: it cannot be read through PAPI", e->sde_name);
}

/* All plugins registered their counters: export them all. */
static void export_all(void)
{
	static const enum starpu_perf_counter_scope scopes[] = {
		starpu_perf_counter_scope_global, starpu_perf_counter_scope_per_worker, starpu_perf_counter_scope_per_codelet,
	};
	char sde_name[256];
	unsigned nworkers = starpu_worker_get_count();
	starpu_pthread_mutex_lock(&events_lock);
	for (struct event *e = events; e; e = e->next)
		e->id = -1;
	for (size_t s = 0; s < sizeof(scopes) / sizeof(scopes[0]); s++) {
		int n = starpu_perf_counter_nb(scopes[s]);
		for (int i = 0; i < n; i++) {
			int id = starpu_perf_counter_nth_to_id(scopes[s], i);
			const char *name = starpu_perf_counter_id_to_name(id);
			event_export(name, id, -1);
			if (scopes[s] != starpu_perf_counter_scope_per_worker)
				continue;
			for (unsigned w = 0; w < nworkers; w++) {
				snprintf(sde_name, sizeof(sde_name), "%s.worker%u", name, w);
				event_export(sde_name, id, (int)w);
			}
		}
	}
	starpu_pthread_mutex_unlock(&events_lock);
	__atomic_store_n(&reader_seen, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&running, 1, __ATOMIC_RELEASE);
}

static void on_event(const struct astro_event *ev, void *arg)
{
	(void)arg;
	if (ev->moment == ASTRO_MOMENT_RUNTIME_INIT_END)
		export_all();
	else if (ev->moment == ASTRO_MOMENT_RUNTIME_TERMINATE)
		__atomic_store_n(&running, 0, __ATOMIC_RELEASE);
}

/* PAPI finds libsde's functions in the global namespace: when this plugin is
 * loaded locally, so is libsde, and PAPI would not see our events. */
static void make_sde_global(void)
{
	Dl_info info;
	if (dladdr((void *)papi_sde_init, &info) && info.dli_fname && !dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL))
		astro_log_info(MODULE, "%s could not be made global: PAPI may not see the events", info.dli_fname);
}

static int init(void)
{
	if (!sde_handle) {
		make_sde_global();
		*(void **)&lsan_disable = dlsym(RTLD_DEFAULT, "__lsan_disable");
		*(void **)&lsan_enable = dlsym(RTLD_DEFAULT, "__lsan_enable");
		if (!lsan_disable || !lsan_enable)
			lsan_disable = lsan_enable = NULL;
		sde_handle = papi_sde_init(SDE_LIBRARY_NAME);
		if (!sde_handle) {
			astro_log_error(MODULE, "papi_sde_init failed: the counters are not exported to PAPI");
			return ASTRO_PLUGIN_DECLINE;
		}
	}
	int sub = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_RUNTIME_INIT_END) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_RUNTIME_TERMINATE),
					  on_event, NULL);
	return sub < 0 ? sub : 0;
}

ASTRO_PLUGIN_DEFINE(counters_papi_sde, ASTRO_PLUGIN_COUNTERS, "every performance counter as a PAPI SDE event (sde:::STARPU::...)",
		    init, NULL);
