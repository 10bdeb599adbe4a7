/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Counter sets (which counters of a scope a listener reports) and listener
 * handles: made, checked and freed here. Every handle the application
 * passes is looked up among the live ones before it is followed; freed
 * ones are remembered (up to MAX_REMEMBERED_FREED) to say "freed" rather
 * than "unknown". Uses registry.c and samples.c.
 */
#include "framework.h"
#include <glib.h>
#include <stdlib.h>

#define SET_MAGIC 0x5e7c0a17u
#define LISTENER_MAGIC 0x115e7e55u

/* Freed handles remembered to tell "freed" from "unknown" in messages. */
#define MAX_REMEMBERED_FREED 4096

static starpu_pthread_mutex_t handles_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
/* handles (handles_lock) */
static GHashTable *live_sets, *live_listeners, *freed_handles;

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
	if (need_current && set->generation != _astro_counters_generation()) {
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

bool _astro_counters_listener_usable(const char *what, const struct starpu_perf_counter_listener *listener)
{
	starpu_pthread_mutex_lock(&handles_lock);
	bool usable = listener_usable(what, listener);
	starpu_pthread_mutex_unlock(&handles_lock);
	return usable;
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
	int si = _astro_counters_scope_index(scope);
	if (si < 0) {
		astro_log_error(what, "%d is not a scope: pass %s", (int)scope, SCOPE_ENUM_HINT);
		return NULL;
	}
	int n;
	unsigned gen;
	enum registry_state state = _astro_counters_scope_state(si, &n, &gen);
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
	struct counter *c = _astro_counters_lookup(id);
	if (!c) {
		astro_log_error(what, "%d is not a counter id: get ids with starpu_perf_counter_name_to_id()", id);
		goto out;
	}
	if (c->scope != set->scope) {
		astro_log_error(what, "counter '%s' belongs to scope %s, the set to scope %s: use a counter of the set's scope or a set of scope %s",
				c->name, _astro_counters_scope_name(c->scope), _astro_counters_scope_name(set->scope), _astro_counters_scope_name(c->scope));
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
	if (_astro_counters_listener_running(listener))
		return listener->user_arg;
	void *arg = NULL;
	starpu_pthread_mutex_lock(&handles_lock);
	if (listener_usable("astro_perf_counter_listener_get_user_arg", listener))
		arg = listener->user_arg;
	starpu_pthread_mutex_unlock(&handles_lock);
	return arg;
}

void _astro_counters_listener_free(struct starpu_perf_counter_listener *listener)
{
	starpu_pthread_mutex_lock(&handles_lock);
	g_hash_table_remove(live_listeners, listener);
	remember_freed(listener);
	set_unref(listener->set);
	listener->magic = DEAD_MAGIC;
	free(listener);
	starpu_pthread_mutex_unlock(&handles_lock);
}
