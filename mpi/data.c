/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Data ownership (the tag and owner rank of each handle) and the
 * communication cache: which ranks already hold the current value of a
 * handle. Every rank submits the same task graph, so each one keeps its own
 * view of the cache and they agree without talking. The state lives in two
 * hash tables (handle -> entry, communicator and tag -> entry) that follow
 * unregistrations through the observation path.
 */
#include "mpi_private.h"

#include <astrolabe/observe.h>
#include <errno.h>
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>

/* A few ranks, in the order they came. */
struct rank_set
{
	int *ranks;
	int n, cap;
};

struct tag_key
{
	MPI_Comm comm;
	starpu_mpi_tag_t tag;
};

struct mpi_data
{
	starpu_data_handle_t handle;
	struct tag_key key;		/* key.tag -1: no tag */
	int rank;			/* owner, STARPU_MPI_PER_NODE, or -1: none */
	bool received;			/* cache: this rank holds the owner's current value */
	struct rank_set sent;		/* cache: the ranks it was sent to (its readers: a few, whatever the number of ranks) */
	struct rank_set contributors;	/* the ranks other than the owner with a pending reduction contribution (redux.c) */
};

static starpu_pthread_mutex_t data_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *by_handle;	/* handle -> struct mpi_data (owned) */
static GHashTable *by_tag;	/* &entry->key -> entry */
static int observer = -1;
static bool cache_enabled = true;

static guint tag_hash(gconstpointer p)
{
	const struct tag_key *k = p;
	guint64 h = (guint64)k->tag * 0x9e3779b97f4a7c15ULL ^ (guint64)(uintptr_t)k->comm;
	return (guint)(h ^ (h >> 32));
}

static gboolean tag_equal(gconstpointer a, gconstpointer b)
{
	const struct tag_key *x = a, *y = b;
	return x->comm == y->comm && x->tag == y->tag;
}

static void entry_free(gpointer p)
{
	struct mpi_data *e = p;
	free(e->sent.ranks);
	free(e->contributors.ranks);
	free(e);
}

/* An unregistered handle takes its tag and rank with it. */
static void handle_unregistered(const struct astro_event *event, void *arg)
{
	(void)arg;
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = by_handle ? g_hash_table_lookup(by_handle, event->object) : NULL;
	if (e) {
		if (e->key.tag != -1)
			g_hash_table_remove(by_tag, &e->key);
		g_hash_table_remove(by_handle, event->object);
	}
	starpu_pthread_mutex_unlock(&data_lock);
}

int _astro_mpi_data_init(void)
{
	const char *env = getenv("STARPU_MPI_CACHE");
	cache_enabled = true;
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (*end || (v != 0 && v != 1))
			_astro_mpi_error("STARPU_MPI_CACHE='%s' is not 0 or 1: the cache stays on", env);
		else
			cache_enabled = v == 1;
	}
	starpu_pthread_mutex_lock(&data_lock);
	by_handle = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, entry_free);
	by_tag = g_hash_table_new(tag_hash, tag_equal);
	starpu_pthread_mutex_unlock(&data_lock);
	observer = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_DATA_UNREGISTERED) | ASTRO_OBSERVE_UNTIMED, handle_unregistered, NULL);
	if (observer < 0) {
		_astro_mpi_data_shutdown();
		return observer;
	}
	return 0;
}

void _astro_mpi_data_shutdown(void)
{
	if (observer >= 0)
		astro_observe_unsubscribe(observer);
	observer = -1;
	starpu_pthread_mutex_lock(&data_lock);
	if (by_tag)
		g_hash_table_destroy(by_tag);
	if (by_handle)
		g_hash_table_destroy(by_handle);
	by_tag = by_handle = NULL;
	starpu_pthread_mutex_unlock(&data_lock);
}

/* Sets what is given (tag, rank, comm) of handle's entry, refusing a tag another handle has. */
static void data_set(starpu_data_handle_t handle, bool set_tag, starpu_mpi_tag_t tag, bool set_rank, int rank, MPI_Comm comm, const char *fn)
{
	int me, size;
	if (!_astro_mpi_running(fn))
		return;
	if (!handle) {
		_astro_mpi_error("%s: NULL data handle: register the data with the runtime first", fn);
		return;
	}
	if (_astro_mpi_comm_info(comm, &me, &size, fn))
		return;
	if (set_rank && rank != STARPU_MPI_PER_NODE && (rank < 0 || rank >= size)) {
		_astro_mpi_error("%s: rank %d is not in the communicator (ranks 0 to %d, or STARPU_MPI_PER_NODE): the data keeps its previous owner", fn, rank, size - 1);
		return;
	}
	if (set_tag && tag < -1) {
		_astro_mpi_error("%s: tag %lld is negative: data tags go from 0 to %lld; the data keeps its previous tag", fn, (long long)tag, (long long)INT64_MAX);
		return;
	}
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = g_hash_table_lookup(by_handle, handle);
	struct tag_key key = { comm, set_tag ? tag : (e ? e->key.tag : -1) };
	if (key.tag != -1) {
		struct mpi_data *other = g_hash_table_lookup(by_tag, &key);
		if (other && other != e) {
			starpu_pthread_mutex_unlock(&data_lock);
			_astro_mpi_error("%s: tag %lld is already the tag of another data handle (%p) in this communicator: give each handle its own tag (this one keeps %s)",
					 fn, (long long)key.tag, (void *)other->handle, e && e->key.tag != -1 ? "its previous tag" : "no tag");
			return;
		}
	}
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			starpu_pthread_mutex_unlock(&data_lock);
			_astro_mpi_error("%s: out of memory", fn);
			return;
		}
		e->handle = handle;
		e->key.tag = -1;
		e->rank = -1;
		g_hash_table_insert(by_handle, handle, e);
	}
	if (e->key.tag != -1)
		g_hash_table_remove(by_tag, &e->key);
	e->key = key;
	if (key.tag != -1)
		g_hash_table_insert(by_tag, &e->key, e);
	if (set_rank)
		e->rank = rank;
	/* A new owner or tag: nothing sent or received before counts. */
	e->received = false;
	e->sent.n = 0;
	starpu_pthread_mutex_unlock(&data_lock);
}

void starpu_mpi_data_register_comm(starpu_data_handle_t data_handle, starpu_mpi_tag_t data_tag, int rank, MPI_Comm comm)
{
	data_set(data_handle, true, data_tag, true, rank, comm, "starpu_mpi_data_register");
}

void starpu_mpi_data_set_tag(starpu_data_handle_t handle, starpu_mpi_tag_t data_tag)
{
	MPI_Comm comm = MPI_COMM_WORLD;
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = by_handle ? g_hash_table_lookup(by_handle, handle) : NULL;
	if (e)
		comm = e->key.comm;
	starpu_pthread_mutex_unlock(&data_lock);
	data_set(handle, true, data_tag, false, -1, comm, "starpu_mpi_data_set_tag");
}

void starpu_mpi_data_set_rank_comm(starpu_data_handle_t handle, int rank, MPI_Comm comm)
{
	data_set(handle, false, -1, true, rank, comm, "starpu_mpi_data_set_rank");
}

static struct mpi_data *entry_of(starpu_data_handle_t handle)
{
	return by_handle ? g_hash_table_lookup(by_handle, handle) : NULL;
}

int starpu_mpi_data_get_rank(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(handle);
	int rank = e ? e->rank : -1;
	starpu_pthread_mutex_unlock(&data_lock);
	return rank;
}

starpu_mpi_tag_t starpu_mpi_data_get_tag(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(handle);
	starpu_mpi_tag_t tag = e ? e->key.tag : -1;
	starpu_pthread_mutex_unlock(&data_lock);
	return tag;
}

starpu_data_handle_t _astro_mpi_data_by_tag(MPI_Comm comm, starpu_mpi_tag_t tag)
{
	struct tag_key key = { comm, tag };
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = by_tag ? g_hash_table_lookup(by_tag, &key) : NULL;
	starpu_data_handle_t handle = e ? e->handle : NULL;
	starpu_pthread_mutex_unlock(&data_lock);
	return handle;
}

static bool data_owner(starpu_data_handle_t handle, MPI_Comm comm, int *rank, starpu_mpi_tag_t *tag, bool need_tag, const char *fn);

bool _astro_mpi_data_owner(starpu_data_handle_t handle, MPI_Comm comm, int *rank, starpu_mpi_tag_t *tag, const char *fn)
{
	return data_owner(handle, comm, rank, tag, true, fn);
}

bool _astro_mpi_data_owner_untagged(starpu_data_handle_t handle, MPI_Comm comm, int *rank, starpu_mpi_tag_t *tag, const char *fn)
{
	return data_owner(handle, comm, rank, tag, false, fn);
}

static bool data_owner(starpu_data_handle_t handle, MPI_Comm comm, int *rank, starpu_mpi_tag_t *tag, bool need_tag, const char *fn)
{
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(handle);
	struct mpi_data copy = e ? *e : (struct mpi_data){ .rank = -1, .key = { comm, -1 } };
	starpu_pthread_mutex_unlock(&data_lock);
	if (!handle) {
		_astro_mpi_error("%s: NULL data handle", fn);
		return false;
	}
	if (copy.rank == -1) {
		_astro_mpi_error("%s: data %p has no owner: give it one on every rank with starpu_mpi_data_register(handle, tag, rank)",
				 fn, (void *)handle);
		return false;
	}
	if (need_tag && copy.rank != STARPU_MPI_PER_NODE && copy.key.tag == -1) {
		_astro_mpi_error("%s: data %p (owned by rank %d) has no tag to travel with: give it one with starpu_mpi_data_register(handle, tag, rank)",
				 fn, (void *)handle, copy.rank);
		return false;
	}
	if (copy.key.comm != comm) {
		_astro_mpi_error("%s: data %p is registered in another communicator: use the one given to starpu_mpi_data_register_comm()",
				 fn, (void *)handle);
		return false;
	}
	*rank = copy.rank;
	*tag = copy.key.tag;
	return true;
}

/* ------------------------------------------------------------------ cache */

static bool rank_set_has(const struct rank_set *set, int rank)
{
	for (int i = 0; i < set->n; i++)
		if (set->ranks[i] == rank)
			return true;
	return false;
}

/* Adds rank unless there; false when memory ran out (then it is not recorded). */
static bool rank_set_add(struct rank_set *set, int rank)
{
	if (rank_set_has(set, rank))
		return true;
	if (set->n == set->cap) {
		int cap = set->cap ? 2 * set->cap : 4;
		int *grown = realloc(set->ranks, (size_t)cap * sizeof(*grown));
		if (!grown)
			return false;
		set->ranks = grown;
		set->cap = cap;
	}
	set->ranks[set->n++] = rank;
	return true;
}

bool _astro_mpi_cache_sent(starpu_data_handle_t handle, int dest)
{
	bool cached = false;
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(handle);
	if (cache_enabled && e) {
		cached = rank_set_has(&e->sent, dest);
		if (!cached)
			rank_set_add(&e->sent, dest); /* not recorded when out of memory: sent again next time */
	}
	starpu_pthread_mutex_unlock(&data_lock);
	return cached;
}

bool _astro_mpi_cache_received(starpu_data_handle_t handle)
{
	bool cached = false;
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(handle);
	if (cache_enabled && e) {
		cached = e->received;
		e->received = true;
	}
	starpu_pthread_mutex_unlock(&data_lock);
	return cached;
}

static void forget(struct mpi_data *e)
{
	e->received = false;
	e->sent.n = 0;
}

void _astro_mpi_cache_written(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(handle);
	if (e)
		forget(e);
	starpu_pthread_mutex_unlock(&data_lock);
}

int starpu_mpi_cache_is_enabled(void)
{
	return cache_enabled;
}

int starpu_mpi_cache_set(int enabled)
{
	starpu_pthread_mutex_lock(&data_lock);
	if (!enabled && by_handle) {
		GHashTableIter it;
		gpointer value;
		g_hash_table_iter_init(&it, by_handle);
		while (g_hash_table_iter_next(&it, NULL, &value))
			forget(value);
	}
	cache_enabled = enabled != 0;
	starpu_pthread_mutex_unlock(&data_lock);
	return 0;
}

void starpu_mpi_cache_flush(MPI_Comm comm, starpu_data_handle_t data_handle)
{
	int me, size;
	if (!_astro_mpi_running("starpu_mpi_cache_flush") || _astro_mpi_comm_info(comm, &me, &size, "starpu_mpi_cache_flush"))
		return;
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(data_handle);
	int owner = e ? e->rank : -1;
	if (e)
		forget(e);
	starpu_pthread_mutex_unlock(&data_lock);
	if (!e) {
		_astro_mpi_error("starpu_mpi_cache_flush: data %p is not registered with starpu_mpi_data_register(): nothing to flush", (void *)data_handle);
		return;
	}
	/* A copy that is not the owner's is dropped: it is stale once the owner writes. */
	if (owner >= 0 && owner != me)
		starpu_data_invalidate_submit(data_handle);
}

void starpu_mpi_cache_flush_all_data(MPI_Comm comm)
{
	if (!_astro_mpi_running("starpu_mpi_cache_flush_all_data"))
		return;
	GPtrArray *handles = g_ptr_array_new();
	starpu_pthread_mutex_lock(&data_lock);
	GHashTableIter it;
	gpointer key, value;
	g_hash_table_iter_init(&it, by_handle);
	while (g_hash_table_iter_next(&it, &key, &value))
		if (((struct mpi_data *)value)->key.comm == comm)
			g_ptr_array_add(handles, key);
	starpu_pthread_mutex_unlock(&data_lock);
	for (guint i = 0; i < handles->len; i++)
		starpu_mpi_cache_flush(comm, g_ptr_array_index(handles, i));
	g_ptr_array_free(handles, TRUE);
}

int starpu_mpi_cached_receive(starpu_data_handle_t data_handle)
{
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(data_handle);
	int cached = e && e->received;
	starpu_pthread_mutex_unlock(&data_lock);
	return cached;
}

int starpu_mpi_cached_send(starpu_data_handle_t data_handle, int dest)
{
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(data_handle);
	int cached = e && rank_set_has(&e->sent, dest);
	starpu_pthread_mutex_unlock(&data_lock);
	return cached;
}

/* The data's cache entry, said when there is none (the data was never given to starpu_mpi_data_register()). */
static struct mpi_data *registered_entry(starpu_data_handle_t handle, const char *fn)
{
	struct mpi_data *e = entry_of(handle);
	if (!e)
		_astro_mpi_error("%s: data %p is not registered with starpu_mpi_data_register(): the cache does not know it", fn,
				 (void *)handle);
	return e;
}

int starpu_mpi_cached_receive_set(starpu_data_handle_t data)
{
	starpu_pthread_mutex_lock(&data_lock);
	bool known = registered_entry(data, "starpu_mpi_cached_receive_set") != NULL;
	starpu_pthread_mutex_unlock(&data_lock);
	return known && _astro_mpi_cache_received(data);
}

void starpu_mpi_cached_receive_clear(starpu_data_handle_t data)
{
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = registered_entry(data, "starpu_mpi_cached_receive_clear");
	if (e)
		e->received = false;
	starpu_pthread_mutex_unlock(&data_lock);
}

int starpu_mpi_cached_send_set(starpu_data_handle_t data, int dest)
{
	starpu_pthread_mutex_lock(&data_lock);
	bool known = registered_entry(data, "starpu_mpi_cached_send_set") != NULL;
	starpu_pthread_mutex_unlock(&data_lock);
	return known && _astro_mpi_cache_sent(data, dest);
}

void starpu_mpi_cached_send_clear(starpu_data_handle_t data)
{
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = registered_entry(data, "starpu_mpi_cached_send_clear");
	if (e)
		e->sent.n = 0;
	starpu_pthread_mutex_unlock(&data_lock);
}

/* ------------------------------------------------------------- reductions */

int _astro_mpi_redux_contribute(starpu_data_handle_t handle, int rank)
{
	int ret = 0;
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(handle);
	if (!e)
		ret = -EINVAL;
	else if (rank_set_has(&e->contributors, rank))
		ret = 0;
	else
		ret = rank_set_add(&e->contributors, rank) ? 1 : -ENOMEM;
	starpu_pthread_mutex_unlock(&data_lock);
	return ret;
}

bool _astro_mpi_redux_pending(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(handle);
	bool pending = e && e->contributors.n > 0;
	starpu_pthread_mutex_unlock(&data_lock);
	return pending;
}

int _astro_mpi_redux_take(starpu_data_handle_t handle, int **ranks)
{
	starpu_pthread_mutex_lock(&data_lock);
	struct mpi_data *e = entry_of(handle);
	int n = 0;
	*ranks = NULL;
	if (e && e->contributors.n) {
		n = e->contributors.n;
		*ranks = e->contributors.ranks;
		e->contributors = (struct rank_set){ 0 };
	}
	starpu_pthread_mutex_unlock(&data_lock);
	return n;
}
