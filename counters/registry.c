/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The counter registry: the counters and updaters the runtime and the
 * plugins register during starpu_init() (astro_counter_register*), frozen
 * once the runtime runs so that samples index it without a lock; the
 * scopes and types by name, the ids, the metadata calls of the StarPU 1.4
 * API (starpu_perf_counter_name_to_id, _id_to_name, _list_avail...), and
 * the errors reported once. The bottom of the framework: it uses no other
 * file of it (framework.h says the order of the others).
 */
#include "framework.h"
#include <errno.h>
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static starpu_pthread_mutex_t registry_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_mutex_t report_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* registry (registry_lock) */
static enum registry_state registry_state;
static unsigned generation;
static GPtrArray *scope_counters[NSCOPES];   /* struct counter *, by index */
static GPtrArray *scope_updaters[NSCOPES];   /* struct updater * */
static GHashTable *counters_by_name;

/* frozen while running: read without lock */
struct counter **_astro_counters_frozen[NSCOPES];
int _astro_counters_nfrozen[NSCOPES];
struct updater **_astro_counters_frozen_updaters[NSCOPES];
int _astro_counters_nfrozen_updaters[NSCOPES];

/* Is collection on, and since when: written by perf_counters.c (collect_lock),
 * read without lock by the counter modules and plugins (astro_counter_collecting()). */
int astro_counters_active;
double _astro_counters_since;

/* errors reported once (report_lock) */
static GHashTable *reported;

/* ------------------------------------------------------------ helpers */

static const enum starpu_perf_counter_scope scope_of_index[NSCOPES] = {
	starpu_perf_counter_scope_global, starpu_perf_counter_scope_per_worker, starpu_perf_counter_scope_per_codelet,
};

const char *_astro_counters_scope_name(int scope)
{
	switch (scope) {
	case starpu_perf_counter_scope_global: return "global";
	case starpu_perf_counter_scope_per_worker: return "per_worker";
	case starpu_perf_counter_scope_per_codelet: return "per_codelet";
	default: return NULL;
	}
}

const char *_astro_counters_type_name(int type)
{
	switch (type) {
	case starpu_perf_counter_type_int32: return "int32";
	case starpu_perf_counter_type_int64: return "int64";
	case starpu_perf_counter_type_float: return "float";
	case starpu_perf_counter_type_double: return "double";
	default: return NULL;
	}
}

void _astro_counters_report_once(const char *what, const char *key, const char *fmt, ...)
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

/* The counter of id in the registry (registry_lock held), or NULL. */
static struct counter *registry_counter(int id)
{
	if (id < 0)
		return NULL;
	int si = _astro_counters_scope_index(id & ID_SCOPE_MASK);
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

enum registry_state _astro_counters_state(void)
{
	return __atomic_load_n(&registry_state, __ATOMIC_ACQUIRE);
}

unsigned _astro_counters_generation(void)
{
	return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

enum registry_state _astro_counters_scope_state(int si, int *n, unsigned *gen)
{
	starpu_pthread_mutex_lock(&registry_lock);
	enum registry_state state = registry_state;
	*n = scope_counters[si] ? (int)scope_counters[si]->len : 0;
	*gen = generation;
	starpu_pthread_mutex_unlock(&registry_lock);
	return state;
}

struct counter *_astro_counters_lookup(int id)
{
	starpu_pthread_mutex_lock(&registry_lock);
	struct counter *c = registry_counter(id);
	starpu_pthread_mutex_unlock(&registry_lock);
	return c;
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
	int si = _astro_counters_scope_index(scope);
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
		astro_log_error(what, "counter '%s': %d is not a scope: pass %s", name, (int)scope, SCOPE_ENUM_HINT);
		return -EINVAL;
	}
	if (!_astro_counters_type_name(type)) {
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
	int si = _astro_counters_scope_index(scope);
	if (!module || !*module || !fn || si < 0) {
		astro_log_error(what, "%s: give a module name, a scope (%s) and an updater function",
				module && *module ? module : "(no module)", SCOPE_ENUM_HINT);
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
					module, _astro_counters_scope_name(scope));
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

/* ------------------------------------------------------ its life */

void _astro_counters_registry_open(void)
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
	reports_forget();
}

void _astro_counters_registry_freeze(void)
{
	starpu_pthread_mutex_lock(&registry_lock);
	for (int si = 0; si < NSCOPES; si++) {
		_astro_counters_frozen[si] = (struct counter **)scope_counters[si]->pdata;
		_astro_counters_nfrozen[si] = (int)scope_counters[si]->len;
		_astro_counters_frozen_updaters[si] = (struct updater **)scope_updaters[si]->pdata;
		_astro_counters_nfrozen_updaters[si] = (int)scope_updaters[si]->len;
		for (int i = 0; i < _astro_counters_nfrozen[si]; i++) {
			struct counter *c = _astro_counters_frozen[si][i];
			c->updater = -1;
			for (int u = 0; u < _astro_counters_nfrozen_updaters[si]; u++)
				if (strcmp(_astro_counters_frozen_updaters[si][u]->module, c->module) == 0)
					c->updater = u;
		}
	}
	starpu_pthread_mutex_unlock(&registry_lock);
}

void _astro_counters_registry_run(void)
{
	starpu_pthread_mutex_lock(&registry_lock);
	__atomic_store_n(&registry_state, REGISTRY_RUNNING, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&registry_lock);
}

void _astro_counters_registry_close(void)
{
	starpu_pthread_mutex_lock(&registry_lock);
	__atomic_store_n(&registry_state, REGISTRY_CLOSED, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&registry_lock);
}

void _astro_counters_registry_drop(void)
{
	starpu_pthread_mutex_lock(&registry_lock);
	for (int si = 0; si < NSCOPES; si++) {
		_astro_counters_frozen[si] = NULL;
		_astro_counters_nfrozen[si] = 0;
		_astro_counters_frozen_updaters[si] = NULL;
		_astro_counters_nfrozen_updaters[si] = 0;
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

/* ------------------------------------------------------ names and ids */

int starpu_perf_counter_scope_name_to_id(const char *name)
{
	for (int si = 0; si < NSCOPES; si++)
		if (name && strcmp(name, _astro_counters_scope_name(scope_of_index[si])) == 0)
			return scope_of_index[si];
	astro_log_error("starpu_perf_counter_scope_name_to_id", "'%s' is not a scope: use \"global\", \"per_worker\" or \"per_codelet\"",
			name ? name : "(null)");
	return -1;
}

const char *starpu_perf_counter_scope_id_to_name(enum starpu_perf_counter_scope scope)
{
	const char *name = _astro_counters_scope_name(scope);
	if (!name)
		astro_log_error("starpu_perf_counter_scope_id_to_name", "%d is not a scope: pass %s", (int)scope, SCOPE_ENUM_HINT);
	return name;
}

int starpu_perf_counter_type_name_to_id(const char *name)
{
	for (int type = starpu_perf_counter_type_int32; type <= starpu_perf_counter_type_double; type++)
		if (name && strcmp(name, _astro_counters_type_name(type)) == 0)
			return type;
	astro_log_error("starpu_perf_counter_type_name_to_id", "'%s' is not a counter type: use \"int32\", \"int64\", \"float\" or \"double\"",
			name ? name : "(null)");
	return -1;
}

const char *starpu_perf_counter_type_id_to_name(enum starpu_perf_counter_type type)
{
	const char *name = _astro_counters_type_name(type);
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
	int si = _astro_counters_scope_index(scope);
	if (si < 0) {
		astro_log_error("starpu_perf_counter_nb", "%d is not a scope: pass %s", (int)scope, SCOPE_ENUM_HINT);
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
	int si = _astro_counters_scope_index(scope);
	if (si < 0) {
		astro_log_error(what, "%d is not a scope: pass %s", (int)scope, SCOPE_ENUM_HINT);
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
				name, _astro_counters_scope_name(found_scope), _astro_counters_scope_name(scope), _astro_counters_scope_name(found_scope));
	else if (state == REGISTRY_CLOSED)
		astro_log_error(what, "counter '%s': the runtime is not running; counters exist between starpu_init() and starpu_shutdown()", name);
	else
		astro_log_error(what, "no counter named '%s' in scope %s: list them with starpu_perf_counter_list_all_avail() or astrolabe-perf-list",
				name, _astro_counters_scope_name(scope));
	return -1;
}

int starpu_perf_counter_nth_to_id(enum starpu_perf_counter_scope scope, int nth)
{
	const char *what = "starpu_perf_counter_nth_to_id";
	int si = _astro_counters_scope_index(scope);
	if (si < 0) {
		astro_log_error(what, "%d is not a scope: pass %s", (int)scope, SCOPE_ENUM_HINT);
		return -1;
	}
	int n = starpu_perf_counter_nb(scope);
	if (nth < 0 || nth >= n) {
		astro_log_error(what, "scope %s has %d counters: %d is out of range (0..%d)", _astro_counters_scope_name(scope), n, nth, n - 1);
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
	int si = _astro_counters_scope_index(scope);
	if (si < 0) {
		astro_log_error("starpu_perf_counter_list_avail", "%d is not a scope: pass %s", (int)scope, SCOPE_ENUM_HINT);
		return;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	for (guint i = 0; scope_counters[si] && i < scope_counters[si]->len; i++) {
		struct counter *c = g_ptr_array_index(scope_counters[si], i);
		printf("0x%08x:%s [%s] - %s\n", (unsigned)c->id, c->name, _astro_counters_type_name(c->type), c->help);
	}
	starpu_pthread_mutex_unlock(&registry_lock);
	fflush(stdout);
}

void starpu_perf_counter_list_all_avail(void)
{
	for (int si = 0; si < NSCOPES; si++) {
		printf("scope: %s\n", _astro_counters_scope_name(scope_of_index[si]));
		starpu_perf_counter_list_avail(scope_of_index[si]);
	}
}
