/*
 * The performance-monitoring framework: the counter registry (filled during
 * starpu_init() by the runtime and the plugins, then frozen), counter sets,
 * listeners and samples, and the StarPU 1.4 API over them.
 *
 * Locks, in the order they may be taken:
 *   attach_lock    which sample each listener is set on
 *   sample->busy   one sample: held while it is refreshed and its listener runs
 *   handles_lock   the live sets and listeners, their references
 *   registry_lock  the registry (counters, updaters) and metadata look-ups
 *   collect_lock   the collection state
 *   report_lock    which errors were already reported
 * A listener callback runs under its sample's lock. It may look metadata up
 * and change sets, but attaching or detaching listeners from a callback is
 * refused, so no lock cycle can form; refreshes triggered from inside a
 * callback (a task submitted by it) are skipped rather than nested.
 *
 * While the runtime runs, the registry does not change: samples and the
 * typed getters index its frozen arrays without taking a lock.
 */
#include "framework.h"
#include <errno.h>
#include <float.h>
#include <glib.h>
#include <math.h>
#include <astrolabe/thread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSCOPES 3
#define ID_SCOPE_BITS 4
#define ID_SCOPE_MASK ((1 << ID_SCOPE_BITS) - 1)

#define SET_MAGIC 0x5e7c0a17u
#define LISTENER_MAGIC 0x115e7e55u
#define SAMPLE_MAGIC 0x5a3b1e00u
#define DEAD_MAGIC 0xdeadc0deu

/* Freed handles remembered to tell "freed" from "unknown" in messages. */
#define MAX_REMEMBERED_FREED 4096

#define TLS __thread __attribute__((tls_model("initial-exec")))

struct counter
{
	int id;
	int index;
	enum starpu_perf_counter_scope scope;
	enum starpu_perf_counter_type type;
	enum astro_counter_kind kind;
	char *name;
	char *unit;
	char *help;
	char *module;
	int updater;                 /* index of its module's updater in the scope, -1: none (frozen) */
};

struct updater
{
	char *module;
	astro_counter_updater_fn fn;
	void *arg;
};

struct starpu_perf_counter_set
{
	unsigned magic;
	enum starpu_perf_counter_scope scope;
	int n;
	unsigned generation;         /* the starpu_init() it was made under */
	int refs;                    /* the application's, plus one per listener */
	unsigned char *enabled;      /* n flags, read without lock by refreshes */
};

struct starpu_perf_counter_listener
{
	unsigned magic;
	struct starpu_perf_counter_set *set;
	void (*callback)(struct starpu_perf_counter_listener *listener, struct starpu_perf_counter_sample *sample, void *context);
	void *user_arg;
	int nattached;               /* samples it is set on */
};

struct starpu_perf_counter_sample
{
	unsigned magic;
	enum starpu_perf_counter_scope scope;
	bool busy;                   /* the sample's lock (sample_lock) */
	struct starpu_perf_counter_listener *listener; /* written under busy, read first without */
	void *context;
	int n;
	union astro_counter_value *values;
	unsigned char *enabled;      /* the listener's set, copied at each refresh */
	/* Filled on demand (sample_fill): refresh number r copies the set at the
	 * first read and runs the updater of a counter's module at the first read
	 * of one of its counters, so a callback pays only for what it reads. */
	uint64_t refresh;
	uint64_t enabled_refresh;
	uint64_t *updated_refresh;   /* by updater index */
} __attribute__((aligned(64)));	/* what a refresh writes and reads on one line, shared with no other sample */

/* The per-codelet state behind cl->perf_counter_sample / cl->perf_counter_values.
 * Kept until starpu_shutdown() once detached, since a worker may still hold it;
 * kept across runs while a codelet still points at it. */
struct codelet_monitor
{
	struct starpu_perf_counter_sample_cl_values values; /* first: cache-line aligned */
	struct starpu_perf_counter_sample sample;
	struct starpu_codelet *cl;
	bool attached;
	struct codelet_monitor *next;
};

enum registry_state { REGISTRY_CLOSED, REGISTRY_OPEN, REGISTRY_RUNNING };

static starpu_pthread_mutex_t attach_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_mutex_t handles_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_mutex_t registry_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_mutex_t collect_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_mutex_t report_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* registry (registry_lock) */
static enum registry_state registry_state;
static unsigned generation;
static GPtrArray *scope_counters[NSCOPES];   /* struct counter *, by index */
static GPtrArray *scope_updaters[NSCOPES];   /* struct updater * */
static GHashTable *counters_by_name;

/* frozen while running: read without lock */
static struct counter **frozen_counters[NSCOPES];
static int frozen_ncounters[NSCOPES];
static struct updater **frozen_updaters[NSCOPES];
static int frozen_nupdaters[NSCOPES];

/* samples (attach_lock) */
static struct starpu_perf_counter_sample global_sample;
static struct starpu_perf_counter_sample worker_samples[STARPU_NMAXWORKERS];
static int worker_ids[STARPU_NMAXWORKERS];
static unsigned nworker_samples;
static struct codelet_monitor *monitors;

/* handles (handles_lock) */
static GHashTable *live_sets, *live_listeners, *freed_handles;

/* collection (collect_lock) */
static int collect_depth = 1;
static bool collect_explicit;
int astro_counters_active;
double _astro_counters_since;

/* errors reported once (report_lock) */
static GHashTable *reported;

/* The sample whose listener this thread is running, if any. */
static TLS struct starpu_perf_counter_sample *current_sample;

/* ------------------------------------------------------------ helpers */

static int scope_index(int scope)
{
	switch (scope) {
	case starpu_perf_counter_scope_global: return 0;
	case starpu_perf_counter_scope_per_worker: return 1;
	case starpu_perf_counter_scope_per_codelet: return 2;
	default: return -1;
	}
}

static const enum starpu_perf_counter_scope scope_of_index[NSCOPES] = {
	starpu_perf_counter_scope_global, starpu_perf_counter_scope_per_worker, starpu_perf_counter_scope_per_codelet,
};

static const char *scope_name(int scope)
{
	switch (scope) {
	case starpu_perf_counter_scope_global: return "global";
	case starpu_perf_counter_scope_per_worker: return "per_worker";
	case starpu_perf_counter_scope_per_codelet: return "per_codelet";
	default: return NULL;
	}
}

static const char *type_name(int type)
{
	switch (type) {
	case starpu_perf_counter_type_int32: return "int32";
	case starpu_perf_counter_type_int64: return "int64";
	case starpu_perf_counter_type_float: return "float";
	case starpu_perf_counter_type_double: return "double";
	default: return NULL;
	}
}

static const char *scope_enum_hint = "starpu_perf_counter_scope_global, _per_worker or _per_codelet";

/* Prints msg once for key during this starpu_init(); errors inside listener
 * callbacks would otherwise repeat for every task. */
static void report_once(const char *what, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report_once(const char *what, const char *key, const char *fmt, ...)
{
	starpu_pthread_mutex_lock(&report_lock);
	if (!reported)
		reported = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	bool first = !g_hash_table_contains(reported, key);
	if (first)
		g_hash_table_add(reported, g_strdup(key));
	starpu_pthread_mutex_unlock(&report_lock);
	if (!first)
		return;
	char msg[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	astro_log_error(what, "%s", msg);
}

static void reports_forget(void)
{
	starpu_pthread_mutex_lock(&report_lock);
	if (reported)
		g_hash_table_remove_all(reported);
	starpu_pthread_mutex_unlock(&report_lock);
}

/* The counter of id while running (no lock: the registry is frozen), or NULL. */
static struct counter *frozen_counter(int id)
{
	if (id < 0)
		return NULL;
	int si = scope_index(id & ID_SCOPE_MASK);
	int index = id >> ID_SCOPE_BITS;
	if (si < 0 || !frozen_counters[si] || index >= frozen_ncounters[si])
		return NULL;
	return frozen_counters[si][index];
}

/* The counter of id in the registry (registry_lock held), or NULL. */
static struct counter *registry_counter(int id)
{
	if (id < 0)
		return NULL;
	int si = scope_index(id & ID_SCOPE_MASK);
	int index = id >> ID_SCOPE_BITS;
	if (si < 0 || !scope_counters[si] || index >= (int)scope_counters[si]->len)
		return NULL;
	return g_ptr_array_index(scope_counters[si], index);
}

/* Looks id up for a metadata call; prints the error and returns NULL when invalid. */
static struct counter *counter_for(const char *what, int id)
{
	starpu_pthread_mutex_lock(&registry_lock);
	struct counter *c = registry_counter(id);
	enum registry_state state = registry_state;
	starpu_pthread_mutex_unlock(&registry_lock);
	if (!c) {
		if (state == REGISTRY_CLOSED)
			astro_log_error(what, "counter id %d: the runtime is not running; counters exist between starpu_init() and starpu_shutdown()", id);
		else
			astro_log_error(what, "%d is not a counter id: get ids with starpu_perf_counter_name_to_id() or starpu_perf_counter_nth_to_id()", id);
	}
	return c;
}

static bool in_callback(const char *what)
{
	if (!current_sample)
		return false;
	astro_log_error(what, "called from a listener callback, which runs with its sample locked: call it outside the callback");
	return true;
}

/* ----------------------------------------------------------- samples */

static int sample_init(struct starpu_perf_counter_sample *s, enum starpu_perf_counter_scope scope, int n, void *context)
{
	s->magic = SAMPLE_MAGIC;
	s->scope = scope;
	s->listener = NULL;
	s->context = context;
	s->n = n;
	s->values = calloc(n > 0 ? n : 1, sizeof(*s->values));
	s->enabled = calloc(n > 0 ? n : 1, 1);
	int nupdaters = frozen_nupdaters[scope_index(scope)];
	s->updated_refresh = calloc(nupdaters > 0 ? nupdaters : 1, sizeof(*s->updated_refresh));
	s->refresh = s->enabled_refresh = 0;
	s->busy = false;
	return s->values && s->enabled && s->updated_refresh ? 0 : -ENOMEM;
}

static void sample_fini(struct starpu_perf_counter_sample *s)
{
	if (s->magic != SAMPLE_MAGIC)
		return;
	free(s->values);
	free(s->enabled);
	free(s->updated_refresh);
	s->values = NULL;
	s->enabled = NULL;
	s->updated_refresh = NULL;
	s->magic = DEAD_MAGIC;
}

/* A sample's lock, taken at every refresh: one atomic exchange to take it and
 * a store to give it back, where a mutex costs two atomic operations and two
 * calls. Held for one listener callback: a thread that finds it taken spins
 * a little (sample_wait), then yields until it is free. */
static void __attribute__((noinline)) sample_wait(struct starpu_perf_counter_sample *s)
{
	unsigned spins = 0;
	do {
		while (__atomic_load_n(&s->busy, __ATOMIC_RELAXED)) {
			if (spins++ < 64) {
#if defined(__x86_64__) || defined(__i386__)
				__builtin_ia32_pause();
#endif
			} else {
				astro_thread_yield();
			}
		}
	} while (__atomic_exchange_n(&s->busy, true, __ATOMIC_ACQUIRE));
}

static inline void sample_lock(struct starpu_perf_counter_sample *s)
{
	if (STARPU_UNLIKELY(__atomic_exchange_n(&s->busy, true, __ATOMIC_ACQUIRE)))
		sample_wait(s);
}

static void sample_unlock(struct starpu_perf_counter_sample *s)
{
	__atomic_store_n(&s->busy, false, __ATOMIC_RELEASE);
}

/* Gives sample to listener (NULL: detaches); attach_lock held. Waits for a running callback. */
static void sample_attach(struct starpu_perf_counter_sample *s, struct starpu_perf_counter_listener *listener)
{
	sample_lock(s);
	struct starpu_perf_counter_listener *old = s->listener;
	__atomic_store_n(&s->listener, listener, __ATOMIC_RELEASE);
	sample_unlock(s);
	if (old)
		old->nattached--;
	if (listener)
		listener->nattached++;
}

/* Makes c's value in s current for this refresh (s->busy held): the updaters
 * fill the sample lazily, as the callback reads it. Each counter has at most
 * one updater, its module's ("one updater per module and scope"). */
static void sample_fill(struct starpu_perf_counter_sample *s, const struct counter *c)
{
	if (s->enabled_refresh != s->refresh) {
		const unsigned char *enabled = s->listener->set->enabled;
		for (int i = 0; i < s->n; i++)
			s->enabled[i] = __atomic_load_n(&enabled[i], __ATOMIC_RELAXED);
		s->enabled_refresh = s->refresh;
	}
	if (c->updater >= 0 && s->updated_refresh[c->updater] != s->refresh) {
		s->updated_refresh[c->updater] = s->refresh;
		const struct updater *u = frozen_updaters[scope_index(s->scope)][c->updater];
		u->fn(s, s->context, u->arg);
	}
}

/* Calls the listener of s, if it has one, with a fresh sample. The path of every refresh. */
static void sample_refresh(struct starpu_perf_counter_sample *s)
{
	if (!__atomic_load_n(&s->listener, __ATOMIC_ACQUIRE) || current_sample)
		return;
	sample_lock(s);
	struct starpu_perf_counter_listener *listener = s->listener;
	if (listener) {
		s->refresh++;
		current_sample = s;
		/* The kernel refuses blocking calls from a listener (common/context.c). */
		enum _astro_call_context previous = _astro_context_enter(_ASTRO_CTX_LISTENER);
		listener->callback(listener, s, s->context);
		_astro_context_leave(previous);
		current_sample = NULL;
	}
	sample_unlock(s);
}

void _astro_counters_refresh_global(void)
{
	sample_refresh(&global_sample);
}

void _astro_counters_refresh_worker(int workerid)
{
	if (workerid >= 0 && (unsigned)workerid < nworker_samples)
		sample_refresh(&worker_samples[workerid]);
}

void _astro_counters_refresh_codelet(struct starpu_codelet *cl)
{
	struct starpu_perf_counter_sample *s = __atomic_load_n(&cl->perf_counter_sample, __ATOMIC_ACQUIRE);
	if (s)
		sample_refresh(s);
}

/* ------------------------------------------------------- registration */

static bool valid_counter_name(const char *name)
{
	if (!name || !*name)
		return false;
	for (const char *c = name; *c; c++)
		if (!g_ascii_isalnum(*c) && *c != '.' && *c != '_' && *c != '-')
			return false;
	return true;
}

int astro_counter_register(const char *module, enum starpu_perf_counter_scope scope, const char *name,
			   enum starpu_perf_counter_type type, enum astro_counter_kind kind,
			   const char *unit, const char *help)
{
	const char *what = "astro_counter_register";
	int si = scope_index(scope);
	if (!module || !*module) {
		astro_log_error(what, "counter '%s': no module name: pass the plugin's name", name ? name : "(null)");
		return -EINVAL;
	}
	if (!valid_counter_name(name)) {
		astro_log_error(what, "module %s: counter name '%s' is not valid: use letters, digits, '.', '_' and '-' (e.g. starpu.sched.mine.w_total_pushed)",
				module, name ? name : "(null)");
		return -EINVAL;
	}
	if (si < 0) {
		astro_log_error(what, "counter '%s': %d is not a scope: pass %s", name, (int)scope, scope_enum_hint);
		return -EINVAL;
	}
	if (!type_name(type)) {
		astro_log_error(what, "counter '%s': %d is not a counter type: pass starpu_perf_counter_type_int32, _int64, _float or _double", name, (int)type);
		return -EINVAL;
	}
	if (!astro_counter_kind_name(kind)) {
		astro_log_error(what, "counter '%s': %d is not a counter kind: pass ASTRO_COUNTER_MONOTONIC or ASTRO_COUNTER_INSTANT", name, (int)kind);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	if (registry_state != REGISTRY_OPEN) {
		starpu_pthread_mutex_unlock(&registry_lock);
		astro_log_error(what, "counter '%s' of %s: counters are registered during starpu_init() (from a plugin's init), not %s",
				name, module, registry_state == REGISTRY_RUNNING ? "once the runtime runs" : "outside starpu_init()");
		return -EBUSY;
	}
	struct counter *taken = g_hash_table_lookup(counters_by_name, name);
	if (taken) {
		starpu_pthread_mutex_unlock(&registry_lock);
		astro_log_error(what, "counter name '%s' is already registered by %s: %s must choose another name", name, taken->module, module);
		return -EEXIST;
	}
	struct counter *c = g_new0(struct counter, 1);
	c->index = (int)scope_counters[si]->len;
	c->id = (c->index << ID_SCOPE_BITS) | scope;
	c->scope = scope;
	c->type = type;
	c->kind = kind;
	c->name = g_strdup(name);
	c->unit = g_strdup(unit ? unit : "");
	c->help = g_strdup(help ? help : "");
	c->module = g_strdup(module);
	g_ptr_array_add(scope_counters[si], c);
	g_hash_table_insert(counters_by_name, c->name, c);
	starpu_pthread_mutex_unlock(&registry_lock);
	return c->id;
}

int astro_counter_register_updater(const char *module, enum starpu_perf_counter_scope scope,
				   astro_counter_updater_fn fn, void *arg)
{
	const char *what = "astro_counter_register_updater";
	int si = scope_index(scope);
	if (!module || !*module || !fn || si < 0) {
		astro_log_error(what, "%s: give a module name, a scope (%s) and an updater function",
				module && *module ? module : "(no module)", scope_enum_hint);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	int ret = 0;
	if (registry_state != REGISTRY_OPEN) {
		astro_log_error(what, "%s: updaters are registered during starpu_init() (from a plugin's init)", module);
		ret = -EBUSY;
		goto out;
	}
	for (guint i = 0; i < scope_updaters[si]->len; i++) {
		struct updater *u = g_ptr_array_index(scope_updaters[si], i);
		if (strcmp(u->module, module) == 0) {
			astro_log_error(what, "%s already has an updater for scope %s: one updater per module and scope fills all its counters",
					module, scope_name(scope));
			ret = -EEXIST;
			goto out;
		}
	}
	struct updater *u = g_new0(struct updater, 1);
	u->module = g_strdup(module);
	u->fn = fn;
	u->arg = arg;
	g_ptr_array_add(scope_updaters[si], u);
out:
	starpu_pthread_mutex_unlock(&registry_lock);
	return ret;
}

static void counter_free(gpointer p)
{
	struct counter *c = p;
	g_free(c->name);
	g_free(c->unit);
	g_free(c->help);
	g_free(c->module);
	g_free(c);
}

static void updater_free(gpointer p)
{
	struct updater *u = p;
	g_free(u->module);
	g_free(u);
}

/* ------------------------------------------------------- kernel hooks */

void _astro_counters_init(void)
{
	starpu_pthread_mutex_lock(&registry_lock);
	for (int si = 0; si < NSCOPES; si++) {
		scope_counters[si] = g_ptr_array_new_with_free_func(counter_free);
		scope_updaters[si] = g_ptr_array_new_with_free_func(updater_free);
	}
	counters_by_name = g_hash_table_new(g_str_hash, g_str_equal);
	__atomic_store_n(&registry_state, REGISTRY_OPEN, __ATOMIC_RELEASE);
	__atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&registry_lock);

	starpu_pthread_mutex_lock(&collect_lock);
	collect_depth = 1;
	collect_explicit = false;
	__atomic_store_n(&astro_counters_active, 0, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&collect_lock);
	reports_forget();

	_astro_task_counters_register();
	_astro_mpi_counters_register();
}

static void collect_apply_locked(void)
{
	bool on = collect_depth <= 0 && __atomic_load_n(&registry_state, __ATOMIC_ACQUIRE) == REGISTRY_RUNNING;
	if (on == (__atomic_load_n(&astro_counters_active, __ATOMIC_RELAXED) != 0))
		return;
	if (on)
		astro_counter_store_double(&_astro_counters_since, starpu_timing_now());
	__atomic_store_n(&astro_counters_active, on, __ATOMIC_RELEASE);
	_astro_task_counters_collect(on);
	_astro_mpi_counters_collect(on);
}

void _astro_counters_start(int start_collection)
{
	starpu_pthread_mutex_lock(&registry_lock);
	for (int si = 0; si < NSCOPES; si++) {
		frozen_counters[si] = (struct counter **)scope_counters[si]->pdata;
		frozen_ncounters[si] = (int)scope_counters[si]->len;
		frozen_updaters[si] = (struct updater **)scope_updaters[si]->pdata;
		frozen_nupdaters[si] = (int)scope_updaters[si]->len;
		for (int i = 0; i < frozen_ncounters[si]; i++) {
			struct counter *c = frozen_counters[si][i];
			c->updater = -1;
			for (int u = 0; u < frozen_nupdaters[si]; u++)
				if (strcmp(frozen_updaters[si][u]->module, c->module) == 0)
					c->updater = u;
		}
	}
	starpu_pthread_mutex_unlock(&registry_lock);

	starpu_pthread_mutex_lock(&attach_lock);
	sample_init(&global_sample, starpu_perf_counter_scope_global, frozen_ncounters[0], NULL);
	nworker_samples = starpu_worker_get_count();
	for (unsigned w = 0; w < nworker_samples; w++) {
		worker_ids[w] = (int)w;
		sample_init(&worker_samples[w], starpu_perf_counter_scope_per_worker, frozen_ncounters[1], &worker_ids[w]);
	}
	/* Codelets still pointing at a monitor from an earlier run: fresh values, this run's counters. */
	for (struct codelet_monitor *m = monitors; m; m = m->next) {
		sample_fini(&m->sample);
		sample_init(&m->sample, starpu_perf_counter_scope_per_codelet, frozen_ncounters[2], m->cl);
		memset(&m->values, 0, sizeof(m->values));
	}
	starpu_pthread_mutex_unlock(&attach_lock);

	starpu_pthread_mutex_lock(&registry_lock);
	__atomic_store_n(&registry_state, REGISTRY_RUNNING, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&registry_lock);

	starpu_pthread_mutex_lock(&collect_lock);
	if (start_collection) {
		collect_depth--;
		collect_explicit = true;
	}
	collect_apply_locked();
	starpu_pthread_mutex_unlock(&collect_lock);
}

void _astro_counters_shutdown(void)
{
	/* Closed first: calls racing with the teardown are refused rather than served half. */
	starpu_pthread_mutex_lock(&registry_lock);
	__atomic_store_n(&registry_state, REGISTRY_CLOSED, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&registry_lock);

	starpu_pthread_mutex_lock(&collect_lock);
	if (__atomic_load_n(&astro_counters_active, __ATOMIC_RELAXED)) {
		_astro_task_counters_collect(false);
		_astro_mpi_counters_collect(false);
	}
	__atomic_store_n(&astro_counters_active, 0, __ATOMIC_RELEASE);
	_astro_task_counters_shutdown();
	_astro_mpi_counters_shutdown();
	starpu_pthread_mutex_unlock(&collect_lock);

	starpu_pthread_mutex_lock(&attach_lock);
	if (global_sample.magic == SAMPLE_MAGIC) {
		sample_attach(&global_sample, NULL);
		sample_fini(&global_sample);
	}
	for (unsigned w = 0; w < nworker_samples; w++) {
		sample_attach(&worker_samples[w], NULL);
		sample_fini(&worker_samples[w]);
	}
	nworker_samples = 0;
	struct codelet_monitor **link = &monitors;
	while (*link) {
		struct codelet_monitor *m = *link;
		if (m->sample.magic == SAMPLE_MAGIC)
			sample_attach(&m->sample, NULL);
		if (m->attached) {
			link = &m->next;
			continue;
		}
		*link = m->next;
		sample_fini(&m->sample);
		free(m);
	}
	starpu_pthread_mutex_unlock(&attach_lock);

	starpu_pthread_mutex_lock(&registry_lock);
	for (int si = 0; si < NSCOPES; si++) {
		frozen_counters[si] = NULL;
		frozen_ncounters[si] = 0;
		frozen_updaters[si] = NULL;
		frozen_nupdaters[si] = 0;
		if (scope_counters[si])
			g_ptr_array_free(scope_counters[si], TRUE);
		if (scope_updaters[si])
			g_ptr_array_free(scope_updaters[si], TRUE);
		scope_counters[si] = scope_updaters[si] = NULL;
	}
	if (counters_by_name)
		g_hash_table_destroy(counters_by_name);
	counters_by_name = NULL;
	starpu_pthread_mutex_unlock(&registry_lock);
	reports_forget();
}

/* --------------------------------------------------------- collection */

static bool collection_call_allowed(const char *what)
{
	enum registry_state state = __atomic_load_n(&registry_state, __ATOMIC_ACQUIRE);
	if (state == REGISTRY_CLOSED) {
		astro_log_error(what, "the runtime is not running: call it between starpu_init() and starpu_shutdown() "
				"(or set starpu_conf.start_perf_counter_collection)");
		return false;
	}
	return true;
}

void starpu_perf_counter_collection_start(void)
{
	if (!collection_call_allowed("starpu_perf_counter_collection_start"))
		return;
	starpu_pthread_mutex_lock(&collect_lock);
	collect_depth--;
	collect_explicit = true;
	collect_apply_locked();
	starpu_pthread_mutex_unlock(&collect_lock);
}

void starpu_perf_counter_collection_stop(void)
{
	if (!collection_call_allowed("starpu_perf_counter_collection_stop"))
		return;
	starpu_pthread_mutex_lock(&collect_lock);
	collect_depth++;
	collect_explicit = true;
	collect_apply_locked();
	starpu_pthread_mutex_unlock(&collect_lock);
}

/* Setting a listener in a program that never asked for collection starts it:
 * the seeds promise reports once a listener is set. */
static void collection_start_implicitly(void)
{
	starpu_pthread_mutex_lock(&collect_lock);
	if (!collect_explicit) {
		collect_explicit = true;
		collect_depth--;
		collect_apply_locked();
	}
	starpu_pthread_mutex_unlock(&collect_lock);
}

/* ------------------------------------------------------ names and ids */

int starpu_perf_counter_scope_name_to_id(const char *name)
{
	for (int si = 0; si < NSCOPES; si++)
		if (name && strcmp(name, scope_name(scope_of_index[si])) == 0)
			return scope_of_index[si];
	astro_log_error("starpu_perf_counter_scope_name_to_id", "'%s' is not a scope: use \"global\", \"per_worker\" or \"per_codelet\"",
			name ? name : "(null)");
	return -1;
}

const char *starpu_perf_counter_scope_id_to_name(enum starpu_perf_counter_scope scope)
{
	const char *name = scope_name(scope);
	if (!name)
		astro_log_error("starpu_perf_counter_scope_id_to_name", "%d is not a scope: pass %s", (int)scope, scope_enum_hint);
	return name;
}

int starpu_perf_counter_type_name_to_id(const char *name)
{
	for (int type = starpu_perf_counter_type_int32; type <= starpu_perf_counter_type_double; type++)
		if (name && strcmp(name, type_name(type)) == 0)
			return type;
	astro_log_error("starpu_perf_counter_type_name_to_id", "'%s' is not a counter type: use \"int32\", \"int64\", \"float\" or \"double\"",
			name ? name : "(null)");
	return -1;
}

const char *starpu_perf_counter_type_id_to_name(enum starpu_perf_counter_type type)
{
	const char *name = type_name(type);
	if (!name)
		astro_log_error("starpu_perf_counter_type_id_to_name", "%d is not a counter type: pass starpu_perf_counter_type_int32, _int64, _float or _double",
				(int)type);
	return name;
}

const char *astro_counter_kind_name(enum astro_counter_kind kind)
{
	switch (kind) {
	case ASTRO_COUNTER_MONOTONIC: return "monotonic";
	case ASTRO_COUNTER_INSTANT: return "instant";
	default: return NULL;
	}
}

int starpu_perf_counter_nb(enum starpu_perf_counter_scope scope)
{
	int si = scope_index(scope);
	if (si < 0) {
		astro_log_error("starpu_perf_counter_nb", "%d is not a scope: pass %s", (int)scope, scope_enum_hint);
		return -1;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	int n = scope_counters[si] ? (int)scope_counters[si]->len : 0;
	starpu_pthread_mutex_unlock(&registry_lock);
	return n;
}

int starpu_perf_counter_name_to_id(enum starpu_perf_counter_scope scope, const char *name)
{
	const char *what = "starpu_perf_counter_name_to_id";
	int si = scope_index(scope);
	if (si < 0) {
		astro_log_error(what, "%d is not a scope: pass %s", (int)scope, scope_enum_hint);
		return -1;
	}
	if (!name) {
		astro_log_error(what, "NULL name: pass a counter name such as \"starpu.task.g_total_submitted\"");
		return -1;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	struct counter *c = counters_by_name ? g_hash_table_lookup(counters_by_name, name) : NULL;
	int id = c ? c->id : -1;
	int found_scope = c ? c->scope : 0;
	enum registry_state state = registry_state;
	starpu_pthread_mutex_unlock(&registry_lock);
	if (c && found_scope == (int)scope)
		return id;
	if (c)
		astro_log_error(what, "counter '%s' belongs to scope %s, not %s: pass starpu_perf_counter_scope_%s",
				name, scope_name(found_scope), scope_name(scope), scope_name(found_scope));
	else if (state == REGISTRY_CLOSED)
		astro_log_error(what, "counter '%s': the runtime is not running; counters exist between starpu_init() and starpu_shutdown()", name);
	else
		astro_log_error(what, "no counter named '%s' in scope %s: list them with starpu_perf_counter_list_all_avail() or astrolabe-perf-list",
				name, scope_name(scope));
	return -1;
}

int starpu_perf_counter_nth_to_id(enum starpu_perf_counter_scope scope, int nth)
{
	const char *what = "starpu_perf_counter_nth_to_id";
	int si = scope_index(scope);
	if (si < 0) {
		astro_log_error(what, "%d is not a scope: pass %s", (int)scope, scope_enum_hint);
		return -1;
	}
	int n = starpu_perf_counter_nb(scope);
	if (nth < 0 || nth >= n) {
		astro_log_error(what, "scope %s has %d counters: %d is out of range (0..%d)", scope_name(scope), n, nth, n - 1);
		return -1;
	}
	return (nth << ID_SCOPE_BITS) | scope;
}

const char *starpu_perf_counter_id_to_name(int id)
{
	struct counter *c = counter_for("starpu_perf_counter_id_to_name", id);
	return c ? c->name : NULL;
}

int starpu_perf_counter_get_type_id(int id)
{
	struct counter *c = counter_for("starpu_perf_counter_get_type_id", id);
	return c ? (int)c->type : -1;
}

const char *starpu_perf_counter_get_help_string(int id)
{
	struct counter *c = counter_for("starpu_perf_counter_get_help_string", id);
	return c ? c->help : NULL;
}

int astro_counter_get_kind(int id)
{
	struct counter *c = counter_for("astro_counter_get_kind", id);
	return c ? (int)c->kind : -1;
}

int astro_counter_find(const char *name, enum starpu_perf_counter_scope *scope)
{
	if (!name)
		return -1;
	starpu_pthread_mutex_lock(&registry_lock);
	struct counter *c = counters_by_name ? g_hash_table_lookup(counters_by_name, name) : NULL;
	int id = c ? c->id : -1;
	int found_scope = c ? c->scope : 0;
	starpu_pthread_mutex_unlock(&registry_lock);
	if (c && scope)
		*scope = (enum starpu_perf_counter_scope)found_scope;
	return id;
}

const char *astro_counter_get_unit(int id)
{
	struct counter *c = counter_for("astro_counter_get_unit", id);
	return c ? c->unit : NULL;
}

const char *astro_counter_get_module(int id)
{
	struct counter *c = counter_for("astro_counter_get_module", id);
	return c ? c->module : NULL;
}

void starpu_perf_counter_list_avail(enum starpu_perf_counter_scope scope)
{
	int si = scope_index(scope);
	if (si < 0) {
		astro_log_error("starpu_perf_counter_list_avail", "%d is not a scope: pass %s", (int)scope, scope_enum_hint);
		return;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	for (guint i = 0; scope_counters[si] && i < scope_counters[si]->len; i++) {
		struct counter *c = g_ptr_array_index(scope_counters[si], i);
		printf("0x%08x:%s [%s] - %s\n", (unsigned)c->id, c->name, type_name(c->type), c->help);
	}
	starpu_pthread_mutex_unlock(&registry_lock);
	fflush(stdout);
}

void starpu_perf_counter_list_all_avail(void)
{
	for (int si = 0; si < NSCOPES; si++) {
		printf("scope: %s\n", scope_name(scope_of_index[si]));
		starpu_perf_counter_list_avail(scope_of_index[si]);
	}
}

/* --------------------------------------------------- sets and listeners */

static void remember_freed(const void *handle)
{
	if (!freed_handles)
		freed_handles = g_hash_table_new(g_direct_hash, g_direct_equal);
	if (g_hash_table_size(freed_handles) >= MAX_REMEMBERED_FREED)
		g_hash_table_remove_all(freed_handles);
	g_hash_table_add(freed_handles, (gpointer)handle);
}

static void handles_create(void)
{
	if (!live_sets) {
		live_sets = g_hash_table_new(g_direct_hash, g_direct_equal);
		live_listeners = g_hash_table_new(g_direct_hash, g_direct_equal);
		freed_handles = g_hash_table_new(g_direct_hash, g_direct_equal);
	}
}

/* handles_lock held. Prints why set cannot be used and returns false. */
static bool set_usable(const char *what, const struct starpu_perf_counter_set *set, bool need_current)
{
	handles_create();
	if (!set) {
		astro_log_error(what, "NULL counter set: pass a set from starpu_perf_counter_set_alloc()");
		return false;
	}
	if (!g_hash_table_contains(live_sets, set)) {
		if (g_hash_table_contains(freed_handles, set))
			astro_log_error(what, "counter set %p was freed with starpu_perf_counter_set_free(): allocate a new one", (const void *)set);
		else
			astro_log_error(what, "%p is not a counter set: pass a set from starpu_perf_counter_set_alloc()", (const void *)set);
		return false;
	}
	if (need_current && set->generation != __atomic_load_n(&generation, __ATOMIC_ACQUIRE)) {
		astro_log_error(what, "counter set %p was allocated before the last starpu_shutdown(): its ids are stale, allocate a new one",
				(const void *)set);
		return false;
	}
	return true;
}

/* handles_lock held. */
static bool listener_usable(const char *what, const struct starpu_perf_counter_listener *listener)
{
	handles_create();
	if (!listener) {
		astro_log_error(what, "NULL listener: pass one from starpu_perf_counter_listener_init()");
		return false;
	}
	if (!g_hash_table_contains(live_listeners, listener)) {
		if (g_hash_table_contains(freed_handles, listener))
			astro_log_error(what, "listener %p was freed with starpu_perf_counter_listener_exit(): make a new one", (const void *)listener);
		else
			astro_log_error(what, "%p is not a counter listener: pass one from starpu_perf_counter_listener_init()", (const void *)listener);
		return false;
	}
	return true;
}

static void set_unref(struct starpu_perf_counter_set *set)
{
	if (--set->refs > 0)
		return;
	free(set->enabled);
	set->magic = DEAD_MAGIC;
	free(set);
}

struct starpu_perf_counter_set *starpu_perf_counter_set_alloc(enum starpu_perf_counter_scope scope)
{
	const char *what = "starpu_perf_counter_set_alloc";
	int si = scope_index(scope);
	if (si < 0) {
		astro_log_error(what, "%d is not a scope: pass %s", (int)scope, scope_enum_hint);
		return NULL;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	enum registry_state state = registry_state;
	int n = scope_counters[si] ? (int)scope_counters[si]->len : 0;
	unsigned gen = generation;
	starpu_pthread_mutex_unlock(&registry_lock);
	if (state != REGISTRY_RUNNING) {
		astro_log_error(what, "the runtime is not running: counters exist once starpu_init() has returned; call it first");
		return NULL;
	}
	struct starpu_perf_counter_set *set = calloc(1, sizeof(*set));
	unsigned char *enabled = calloc(n > 0 ? n : 1, 1);
	if (!set || !enabled) {
		free(set);
		free(enabled);
		astro_log_error(what, "out of memory");
		return NULL;
	}
	set->magic = SET_MAGIC;
	set->scope = scope;
	set->n = n;
	set->generation = gen;
	set->refs = 1;
	set->enabled = enabled;
	starpu_pthread_mutex_lock(&handles_lock);
	handles_create();
	g_hash_table_add(live_sets, set);
	g_hash_table_remove(freed_handles, set);
	starpu_pthread_mutex_unlock(&handles_lock);
	return set;
}

void starpu_perf_counter_set_free(struct starpu_perf_counter_set *set)
{
	if (!set)
		return;
	starpu_pthread_mutex_lock(&handles_lock);
	handles_create();
	if (g_hash_table_contains(freed_handles, set) && !g_hash_table_contains(live_sets, set))
		astro_log_error("starpu_perf_counter_set_free", "counter set %p was already freed: free each set once", (void *)set);
	else if (set_usable("starpu_perf_counter_set_free", set, false)) {
		g_hash_table_remove(live_sets, set);
		remember_freed(set);
		set_unref(set);
	}
	starpu_pthread_mutex_unlock(&handles_lock);
}

static void set_toggle(const char *what, struct starpu_perf_counter_set *set, int id, unsigned char on)
{
	starpu_pthread_mutex_lock(&handles_lock);
	if (!set_usable(what, set, true))
		goto out;
	starpu_pthread_mutex_lock(&registry_lock);
	struct counter *c = registry_counter(id);
	starpu_pthread_mutex_unlock(&registry_lock);
	if (!c) {
		astro_log_error(what, "%d is not a counter id: get ids with starpu_perf_counter_name_to_id()", id);
		goto out;
	}
	if (c->scope != set->scope) {
		astro_log_error(what, "counter '%s' belongs to scope %s, the set to scope %s: use a counter of the set's scope or a set of scope %s",
				c->name, scope_name(c->scope), scope_name(set->scope), scope_name(c->scope));
		goto out;
	}
	__atomic_store_n(&set->enabled[c->index], on, __ATOMIC_RELAXED);
out:
	starpu_pthread_mutex_unlock(&handles_lock);
}

void starpu_perf_counter_set_enable_id(struct starpu_perf_counter_set *set, int id)
{
	set_toggle("starpu_perf_counter_set_enable_id", set, id, 1);
}

void starpu_perf_counter_set_disable_id(struct starpu_perf_counter_set *set, int id)
{
	set_toggle("starpu_perf_counter_set_disable_id", set, id, 0);
}

struct starpu_perf_counter_listener *starpu_perf_counter_listener_init(struct starpu_perf_counter_set *set,
	void (*callback)(struct starpu_perf_counter_listener *listener, struct starpu_perf_counter_sample *sample, void *context),
	void *user_arg)
{
	const char *what = "starpu_perf_counter_listener_init";
	struct starpu_perf_counter_listener *listener = NULL;
	starpu_pthread_mutex_lock(&handles_lock);
	if (!set_usable(what, set, true))
		goto out;
	if (!callback) {
		astro_log_error(what, "NULL callback: pass the function to call with each sample");
		goto out;
	}
	listener = calloc(1, sizeof(*listener));
	if (!listener) {
		astro_log_error(what, "out of memory");
		goto out;
	}
	listener->magic = LISTENER_MAGIC;
	listener->set = set;
	listener->callback = callback;
	listener->user_arg = user_arg;
	set->refs++;
	g_hash_table_add(live_listeners, listener);
	g_hash_table_remove(freed_handles, listener);
out:
	starpu_pthread_mutex_unlock(&handles_lock);
	return listener;
}

void *astro_perf_counter_listener_get_user_arg(const struct starpu_perf_counter_listener *listener)
{
	/* Usually called from the callback: the handle was valid when it was set,
	 * and an exit from a callback is refused, so no lookup is needed there. */
	if (listener && current_sample && current_sample->listener == listener)
		return listener->user_arg;
	void *arg = NULL;
	starpu_pthread_mutex_lock(&handles_lock);
	if (listener_usable("astro_perf_counter_listener_get_user_arg", listener))
		arg = listener->user_arg;
	starpu_pthread_mutex_unlock(&handles_lock);
	return arg;
}

/* attach_lock held: detaches listener from every sample that uses it. */
static void listener_detach_everywhere(struct starpu_perf_counter_listener *listener)
{
	if (global_sample.magic == SAMPLE_MAGIC && global_sample.listener == listener)
		sample_attach(&global_sample, NULL);
	for (unsigned w = 0; w < nworker_samples; w++)
		if (worker_samples[w].listener == listener)
			sample_attach(&worker_samples[w], NULL);
	for (struct codelet_monitor *m = monitors; m; m = m->next)
		if (m->sample.magic == SAMPLE_MAGIC && m->sample.listener == listener)
			sample_attach(&m->sample, NULL);
	listener->nattached = 0;
}

void starpu_perf_counter_listener_exit(struct starpu_perf_counter_listener *listener)
{
	const char *what = "starpu_perf_counter_listener_exit";
	if (!listener || in_callback(what))
		return;
	/* attach_lock keeps it alive meanwhile: every exit and attach takes it. */
	starpu_pthread_mutex_lock(&attach_lock);
	starpu_pthread_mutex_lock(&handles_lock);
	bool usable = listener_usable(what, listener);
	starpu_pthread_mutex_unlock(&handles_lock);
	if (usable) {
		if (listener->nattached > 0) {
			astro_log_error(what, "listener %p is still set on %d sample(s): unsetting it there first (unset listeners before exiting them)",
					(void *)listener, listener->nattached);
			listener_detach_everywhere(listener);
		}
		starpu_pthread_mutex_lock(&handles_lock);
		g_hash_table_remove(live_listeners, listener);
		remember_freed(listener);
		set_unref(listener->set);
		listener->magic = DEAD_MAGIC;
		free(listener);
		starpu_pthread_mutex_unlock(&handles_lock);
	}
	starpu_pthread_mutex_unlock(&attach_lock);
}

/* attach_lock held: checks listener may go on a sample of scope. */
static const char *right_call_for(enum starpu_perf_counter_scope scope);

static bool attach_allowed(const char *what, struct starpu_perf_counter_listener *listener, enum starpu_perf_counter_scope scope)
{
	if (__atomic_load_n(&registry_state, __ATOMIC_ACQUIRE) != REGISTRY_RUNNING) {
		astro_log_error(what, "the runtime is not running: set listeners between starpu_init() and starpu_shutdown()");
		return false;
	}
	starpu_pthread_mutex_lock(&handles_lock);
	bool usable = listener_usable(what, listener);
	starpu_pthread_mutex_unlock(&handles_lock);
	if (!usable)
		return false;
	if (listener->set->scope != scope) {
		astro_log_error(what, "listener %p reports a set of scope %s, not %s: use %s",
				(void *)listener, scope_name(listener->set->scope), scope_name(scope), right_call_for(listener->set->scope));
		return false;
	}
	if (listener->set->generation != __atomic_load_n(&generation, __ATOMIC_ACQUIRE)) {
		astro_log_error(what, "listener %p was made before the last starpu_shutdown(): make a new set and listener", (void *)listener);
		return false;
	}
	return true;
}

static const char *right_call_for(enum starpu_perf_counter_scope scope)
{
	switch (scope) {
	case starpu_perf_counter_scope_global: return "starpu_perf_counter_set_global_listener()";
	case starpu_perf_counter_scope_per_worker: return "starpu_perf_counter_set_per_worker_listener()";
	default: return "starpu_perf_counter_set_per_codelet_listener()";
	}
}

void starpu_perf_counter_set_global_listener(struct starpu_perf_counter_listener *listener)
{
	const char *what = "starpu_perf_counter_set_global_listener";
	if (in_callback(what))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	bool ok = attach_allowed(what, listener, starpu_perf_counter_scope_global);
	if (ok)
		sample_attach(&global_sample, listener);
	starpu_pthread_mutex_unlock(&attach_lock);
	if (ok)
		collection_start_implicitly();
}

static bool worker_in_range(const char *what, unsigned workerid)
{
	if (workerid < nworker_samples)
		return true;
	astro_log_error(what, "worker %u does not exist: worker ids go from 0 to %u (starpu_worker_get_count() - 1)",
			workerid, nworker_samples ? nworker_samples - 1 : 0);
	return false;
}

void starpu_perf_counter_set_per_worker_listener(unsigned workerid, struct starpu_perf_counter_listener *listener)
{
	const char *what = "starpu_perf_counter_set_per_worker_listener";
	if (in_callback(what))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	bool ok = attach_allowed(what, listener, starpu_perf_counter_scope_per_worker)
		  && worker_in_range(what, workerid);
	if (ok)
		sample_attach(&worker_samples[workerid], listener);
	starpu_pthread_mutex_unlock(&attach_lock);
	if (ok)
		collection_start_implicitly();
}

void starpu_perf_counter_set_all_per_worker_listeners(struct starpu_perf_counter_listener *listener)
{
	const char *what = "starpu_perf_counter_set_all_per_worker_listeners";
	if (in_callback(what))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	bool ok = attach_allowed(what, listener, starpu_perf_counter_scope_per_worker);
	if (ok)
		for (unsigned w = 0; w < nworker_samples; w++)
			sample_attach(&worker_samples[w], listener);
	starpu_pthread_mutex_unlock(&attach_lock);
	if (ok)
		collection_start_implicitly();
}

/* attach_lock held: cl's monitor from this runtime, or NULL. */
static struct codelet_monitor *monitor_of(struct starpu_codelet *cl)
{
	struct starpu_perf_counter_sample *s = __atomic_load_n(&cl->perf_counter_sample, __ATOMIC_ACQUIRE);
	if (!s)
		return NULL;
	for (struct codelet_monitor *m = monitors; m; m = m->next)
		if (&m->sample == s && m->cl == cl && m->attached)
			return m;
	return NULL;
}

static const char *codelet_label(const struct starpu_codelet *cl)
{
	return cl->name ? cl->name : "(unnamed)";
}

void starpu_perf_counter_set_per_codelet_listener(struct starpu_codelet *cl, struct starpu_perf_counter_listener *listener)
{
	const char *what = "starpu_perf_counter_set_per_codelet_listener";
	if (in_callback(what))
		return;
	if (!cl) {
		astro_log_error(what, "NULL codelet: pass the codelet whose tasks to monitor");
		return;
	}
	starpu_pthread_mutex_lock(&attach_lock);
	bool ok = attach_allowed(what, listener, starpu_perf_counter_scope_per_codelet);
	if (!ok)
		goto out;
	struct codelet_monitor *m = monitor_of(cl);
	if (!m) {
		/* Pointers we did not make (a copied codelet) are replaced, never followed. */
		size_t size = (sizeof(*m) + 63) / 64 * 64;
		m = aligned_alloc(64, size);
		if (!m) {
			astro_log_error(what, "out of memory");
			ok = false;
			goto out;
		}
		memset(m, 0, sizeof(*m));
		sample_init(&m->sample, starpu_perf_counter_scope_per_codelet, frozen_ncounters[2], cl);
		m->cl = cl;
		m->attached = true;
		m->next = monitors;
		monitors = m;
		sample_attach(&m->sample, listener);
		__atomic_store_n(&cl->perf_counter_sample, &m->sample, __ATOMIC_RELEASE);
		__atomic_store_n(&cl->perf_counter_values, &m->values, __ATOMIC_RELEASE);
	} else {
		sample_attach(&m->sample, listener);
	}
out:
	starpu_pthread_mutex_unlock(&attach_lock);
	if (ok)
		collection_start_implicitly();
}

void starpu_perf_counter_unset_global_listener(void)
{
	const char *what = "starpu_perf_counter_unset_global_listener";
	if (in_callback(what))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	if (global_sample.magic != SAMPLE_MAGIC)
		astro_log_error(what, "the runtime is not running: nothing to unset");
	else if (!global_sample.listener)
		astro_log_error(what, "no listener is set on the global sample: nothing to unset");
	else
		sample_attach(&global_sample, NULL);
	starpu_pthread_mutex_unlock(&attach_lock);
}

void starpu_perf_counter_unset_per_worker_listener(unsigned workerid)
{
	const char *what = "starpu_perf_counter_unset_per_worker_listener";
	if (in_callback(what))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	if (worker_in_range(what, workerid)) {
		if (!worker_samples[workerid].listener)
			astro_log_error(what, "no listener is set on worker %u: nothing to unset", workerid);
		else
			sample_attach(&worker_samples[workerid], NULL);
	}
	starpu_pthread_mutex_unlock(&attach_lock);
}

void starpu_perf_counter_unset_all_per_worker_listeners(void)
{
	if (in_callback("starpu_perf_counter_unset_all_per_worker_listeners"))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	for (unsigned w = 0; w < nworker_samples; w++)
		if (worker_samples[w].listener)
			sample_attach(&worker_samples[w], NULL);
	starpu_pthread_mutex_unlock(&attach_lock);
}

void starpu_perf_counter_unset_per_codelet_listener(struct starpu_codelet *cl)
{
	const char *what = "starpu_perf_counter_unset_per_codelet_listener";
	if (in_callback(what))
		return;
	if (!cl) {
		astro_log_error(what, "NULL codelet: pass the codelet given to starpu_perf_counter_set_per_codelet_listener()");
		return;
	}
	starpu_pthread_mutex_lock(&attach_lock);
	struct codelet_monitor *m = monitor_of(cl);
	if (!m) {
		astro_log_error(what, "codelet '%s' has no listener: nothing to unset", codelet_label(cl));
	} else {
		sample_attach(&m->sample, NULL);
		__atomic_store_n(&cl->perf_counter_values, NULL, __ATOMIC_RELEASE);
		__atomic_store_n(&cl->perf_counter_sample, NULL, __ATOMIC_RELEASE);
		m->attached = false;
	}
	starpu_pthread_mutex_unlock(&attach_lock);
}

/* ------------------------------------------------------ sample values */

enum getter { GET_INT32, GET_INT64, GET_FLOAT, GET_DOUBLE };

static const enum starpu_perf_counter_type getter_type[] = {
	starpu_perf_counter_type_int32, starpu_perf_counter_type_int64, starpu_perf_counter_type_float, starpu_perf_counter_type_double,
};

static const char *const getter_names[] = {
	"starpu_perf_counter_sample_get_int32_value", "starpu_perf_counter_sample_get_int64_value",
	"starpu_perf_counter_sample_get_float_value", "starpu_perf_counter_sample_get_double_value",
};

/* Converts v from one counter type to another when no information is lost.
 * Integers are handled as int64, floating values as double: each holds
 * every value of its family exactly. */
static bool convert_exact(enum starpu_perf_counter_type from, union astro_counter_value v, enum starpu_perf_counter_type to,
			  union astro_counter_value *out)
{
	bool from_int = from == starpu_perf_counter_type_int32 || from == starpu_perf_counter_type_int64;
	int64_t i = from == starpu_perf_counter_type_int32 ? v.int32_val : v.int64_val;
	double d = from == starpu_perf_counter_type_float ? v.float_val : v.double_val;
	switch (to) {
	case starpu_perf_counter_type_int32:
		if (from_int) {
			if (i < INT32_MIN || i > INT32_MAX)
				return false;
			out->int32_val = (int32_t)i;
			return true;
		}
		if (isnan(d) || d != floor(d) || d < INT32_MIN || d > INT32_MAX)
			return false;
		out->int32_val = (int32_t)d;
		return true;
	case starpu_perf_counter_type_int64:
		if (from_int) {
			out->int64_val = i;
			return true;
		}
		if (isnan(d) || d != floor(d) || fabs(d) >= 9223372036854775808.0)
			return false;
		out->int64_val = (int64_t)d;
		return true;
	case starpu_perf_counter_type_float:
		if (from_int) {
			if (i < -(INT64_C(1) << 24) || i > (INT64_C(1) << 24))
				return false;
			out->float_val = (float)i;
			return true;
		}
		if (!isnan(d) && (fabs(d) > FLT_MAX || (double)(float)d != d))
			return false;
		out->float_val = (float)d;
		return true;
	default:
		if (from_int) {
			if (i < -(INT64_C(1) << 53) || i > (INT64_C(1) << 53))
				return false;
			out->double_val = (double)i;
			return true;
		}
		out->double_val = d;
		return true;
	}
}

/* Reads counter_id from sample for getter into *out; false (error reported) when it cannot. */
static bool sample_read(struct starpu_perf_counter_sample *sample, int counter_id, enum getter getter, union astro_counter_value *out)
{
	const char *what = getter_names[getter];
	char key[64];
	if (!sample || sample != current_sample) {
		snprintf(key, sizeof(key), "outside:%d:%d", counter_id, (int)getter);
		report_once(what, key, "sample %p is not being reported on this thread: read a sample only inside the listener callback that received it",
			    (void *)sample);
		return false;
	}
	struct counter *c = frozen_counter(counter_id);
	if (!c) {
		snprintf(key, sizeof(key), "id:%d:%d", counter_id, (int)getter);
		report_once(what, key, "%d is not a counter id: get ids with starpu_perf_counter_name_to_id()", counter_id);
		return false;
	}
	if (c->scope != sample->scope) {
		snprintf(key, sizeof(key), "scope:%d:%d", counter_id, (int)getter);
		report_once(what, key, "counter '%s' belongs to scope %s but the sample is of scope %s: read counters of the listener's scope",
			    c->name, scope_name(c->scope), scope_name(sample->scope));
		return false;
	}
	sample_fill(sample, c);
	if (!sample->enabled[c->index]) {
		snprintf(key, sizeof(key), "disabled:%d:%d", counter_id, (int)getter);
		report_once(what, key, "counter '%s' is not enabled in the listener's set: enable it with starpu_perf_counter_set_enable_id()",
			    c->name);
		return false;
	}
	union astro_counter_value v = sample->values[c->index];
	if (c->type == getter_type[getter]) {
		*out = v;
		return true;
	}
	bool converted = convert_exact(c->type, v, getter_type[getter], out);
	snprintf(key, sizeof(key), "type:%d:%d", counter_id, (int)getter);
	report_once(what, key, "counter '%s' is of type %s: read it with starpu_perf_counter_sample_get_%s_value()%s",
		    c->name, type_name(c->type), type_name(c->type),
		    converted ? " (its value is returned converted while it converts exactly)" : "");
	return converted;
}

int32_t starpu_perf_counter_sample_get_int32_value(struct starpu_perf_counter_sample *sample, const int counter_id)
{
	union astro_counter_value v;
	return sample_read(sample, counter_id, GET_INT32, &v) ? v.int32_val : -1;
}

int64_t starpu_perf_counter_sample_get_int64_value(struct starpu_perf_counter_sample *sample, const int counter_id)
{
	union astro_counter_value v;
	return sample_read(sample, counter_id, GET_INT64, &v) ? v.int64_val : -1;
}

float starpu_perf_counter_sample_get_float_value(struct starpu_perf_counter_sample *sample, const int counter_id)
{
	union astro_counter_value v;
	return sample_read(sample, counter_id, GET_FLOAT, &v) ? v.float_val : NAN;
}

double starpu_perf_counter_sample_get_double_value(struct starpu_perf_counter_sample *sample, const int counter_id)
{
	union astro_counter_value v;
	return sample_read(sample, counter_id, GET_DOUBLE, &v) ? v.double_val : NAN;
}

/* The slot of counter id in sample for an updater, NULL when not enabled or invalid (reported). */
static union astro_counter_value *sample_slot(struct starpu_perf_counter_sample *sample, int id, enum starpu_perf_counter_type type,
					      const char *what)
{
	struct counter *c = frozen_counter(id);
	char key[64];
	if (!sample || !c || c->scope != sample->scope || c->type != type) {
		snprintf(key, sizeof(key), "set:%d:%d", id, (int)type);
		if (!sample)
			report_once(what, key, "NULL sample: pass the sample the updater received");
		else if (!c)
			report_once(what, key, "%d is not a counter id: use the id astro_counter_register() returned", id);
		else if (c->scope != sample->scope)
			report_once(what, key, "counter '%s' belongs to scope %s, the sample to scope %s: set counters from the updater of their scope",
				    c->name, scope_name(c->scope), scope_name(sample->scope));
		else
			report_once(what, key, "counter '%s' is of type %s: set it with astro_counter_sample_set_%s()",
				    c->name, type_name(c->type), type_name(c->type));
		return NULL;
	}
	return sample->enabled[c->index] ? &sample->values[c->index] : NULL;
}

int astro_counter_sample_wants(const struct starpu_perf_counter_sample *sample, int id)
{
	struct counter *c = frozen_counter(id);
	return sample && c && c->scope == sample->scope && sample->enabled[c->index];
}

#define DEFINE_SETTER(NAME, CTYPE, TYPE, MEMBER)                                              \
	int NAME(struct starpu_perf_counter_sample *sample, int id, CTYPE value)              \
	{                                                                                     \
		struct counter *c = frozen_counter(id);                                       \
		/* Fast path: the counter exists, matches and is wanted. */                   \
		if (sample && c && c->scope == sample->scope && c->type == TYPE) {            \
			if (sample->enabled[c->index])                                        \
				sample->values[c->index].MEMBER = value;                      \
			return 0;                                                             \
		}                                                                             \
		union astro_counter_value *slot = sample_slot(sample, id, TYPE, #NAME);       \
		if (!slot)                                                                    \
			return -EINVAL;                                                       \
		slot->MEMBER = value;                                                         \
		return 0;                                                                     \
	}

DEFINE_SETTER(astro_counter_sample_set_int32, int32_t, starpu_perf_counter_type_int32, int32_val)
DEFINE_SETTER(astro_counter_sample_set_int64, int64_t, starpu_perf_counter_type_int64, int64_val)
DEFINE_SETTER(astro_counter_sample_set_float, float, starpu_perf_counter_type_float, float_val)
DEFINE_SETTER(astro_counter_sample_set_double, double, starpu_perf_counter_type_double, double_val)

/* ------------------------------------------------------------ reading */

int astro_counter_read(int id, const void *context, union astro_counter_value *value)
{
	const char *what = "astro_counter_read";
	if (!value) {
		astro_log_error(what, "NULL value: pass where to store the value");
		return -EINVAL;
	}
	if (__atomic_load_n(&registry_state, __ATOMIC_ACQUIRE) != REGISTRY_RUNNING) {
		astro_log_error(what, "counter id %d: the runtime is not running: read counters between starpu_init() and starpu_shutdown()", id);
		return -ESRCH;
	}
	struct counter *c = frozen_counter(id);
	if (!c) {
		astro_log_error(what, "%d is not a counter id: get ids with starpu_perf_counter_name_to_id()", id);
		return -EINVAL;
	}
	void *ctx = NULL;
	if (c->scope == starpu_perf_counter_scope_per_worker) {
		int workerid = astro_counter_context_worker(context);
		if (workerid < 0 || (unsigned)workerid >= nworker_samples) {
			astro_log_error(what, "counter '%s' is per worker: pass a pointer to a worker id from 0 to %u", c->name,
					nworker_samples ? nworker_samples - 1 : 0);
			return -EINVAL;
		}
		ctx = &worker_ids[workerid];
	} else if (c->scope == starpu_perf_counter_scope_per_codelet) {
		struct starpu_codelet *cl = (struct starpu_codelet *)context;
		if (!cl) {
			astro_log_error(what, "counter '%s' is per codelet: pass the codelet", c->name);
			return -EINVAL;
		}
		if (!__atomic_load_n(&cl->perf_counter_values, __ATOMIC_ACQUIRE))
			return -ENODATA;
		ctx = cl;
	}
	int si = scope_index(c->scope);
	struct starpu_perf_counter_sample sample;
	if (sample_init(&sample, c->scope, frozen_ncounters[si], ctx) != 0) {
		sample_fini(&sample);
		astro_log_error(what, "out of memory");
		return -ENOMEM;
	}
	sample.enabled[c->index] = 1;
	if (c->updater >= 0)
		frozen_updaters[si][c->updater]->fn(&sample, ctx, frozen_updaters[si][c->updater]->arg);
	*value = sample.values[c->index];
	sample_fini(&sample);
	return 0;
}

int astro_counter_foreach_codelet(void (*fn)(struct starpu_codelet *cl, void *arg), void *arg)
{
	if (!fn) {
		astro_log_error("astro_counter_foreach_codelet", "NULL function: pass the function to call for each codelet");
		return -EINVAL;
	}
	if (in_callback("astro_counter_foreach_codelet"))
		return -EDEADLK;
	int n = 0;
	starpu_pthread_mutex_lock(&attach_lock);
	for (struct codelet_monitor *m = monitors; m; m = m->next)
		if (m->attached) {
			fn(m->cl, arg);
			n++;
		}
	starpu_pthread_mutex_unlock(&attach_lock);
	return n;
}
