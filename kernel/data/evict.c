/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Eviction: when an allocation on a node does not fit under its limit, the
 * memory room (memory/memory.c) asks this room's reclaimer, which frees the
 * node's cached buffers, then the least recently used copies no running
 * task uses (or the one the program's victim selector chooses), written back
 * first when they are the only valid ones; and the program's own evictions
 * (starpu_data_evict_from_node, starpu_data_can_evict).
 */
#include "data/data.h"

/* Frees the least recently used copy on node that no running task uses and
 * whose handle nobody holds (the caller holds its own handle's coherency
 * lock: trylock skips it), writing it back to main memory first when it is
 * the only valid copy. Returns true when something was freed. */
/* A main-memory copy (evicted to a disk) the application may be reading: acquired by
 * it, or the buffer under a partitioned handle's views; *busy when its lock is taken. */
static bool ram_copy_in_use(starpu_data_handle_t h, bool *busy)
{
	if (h->father || h->nchildren || h->nactive)
		return true;
	if (starpu_pthread_mutex_trylock(&h->lock) != 0) {
		*busy = true;
		return true;
	}
	bool acquired = h->acquires || h->fast_hold;
	starpu_pthread_mutex_unlock(&h->lock);
	return acquired;
}

/* Evicts h's copy on node (h's coherency_lock held). A write-back from main memory to disk may
 * pack: its buffer is let past main memory's limit. */
static bool evict_copy(starpu_data_handle_t h, unsigned node)
{
	bool outer = _astro_evicting_ram;
	_astro_evicting_ram = _astro_nodes[node].kind == STARPU_CPU_RAM;
	bool freed = _astro_coherency_evict(h, node);
	_astro_evicting_ram = outer;
	return freed;
}

/* *busy: a candidate was skipped as another thread held it for a moment. */
static bool evict_one(unsigned node, bool *busy)
{
	struct _astro_memory_node *n = &_astro_nodes[node];
	bool ram = n->kind == STARPU_CPU_RAM;
	starpu_pthread_mutex_lock(&n->lru_lock);
	struct _astro_replicate *r = n->lru_head;
	for (; r; r = r->lru_next) {
		starpu_data_handle_t h = r->handle;
		if (starpu_pthread_mutex_trylock(&h->coherency_lock) != 0) {
			*busy = true;
			continue;
		}
		if (r->pinned == 0 && !(ram && (__atomic_load_n(&h->no_ooc, __ATOMIC_RELAXED) || ram_copy_in_use(h, busy))))
			break;
		starpu_pthread_mutex_unlock(&h->coherency_lock);
	}
	starpu_pthread_mutex_unlock(&n->lru_lock);
	if (!r)
		return false;
	/* r's handle is locked: its copy cannot be used or freed meanwhile. */
	starpu_data_handle_t h = r->handle;
	bool freed = evict_copy(h, node);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	return freed;
}


static const char *not_evictable(starpu_data_handle_t h, unsigned node, enum starpu_is_prefetch kind);

_ASTRO_TLS struct _astro_alloc_for _astro_alloc_for;

/* The program's victim selector (starpu_data_register_victim_selector); set: whether there is one. */
static struct
{
	starpu_pthread_mutex_t lock;
	starpu_data_victim_selector *select;
	starpu_data_victim_eviction_failed *failed;
	void *data;
	bool set;                            /* atomic: select is not NULL */
} victim = { .lock = STARPU_PTHREAD_MUTEX_INITIALIZER };

void starpu_data_register_victim_selector(starpu_data_victim_selector selector, starpu_data_victim_eviction_failed evicted,
					  void *data)
{
	starpu_pthread_mutex_lock(&victim.lock);
	victim.select = selector;
	victim.failed = evicted;
	victim.data = data;
	__atomic_store_n(&victim.set, selector != NULL, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&victim.lock);
}

/* Evicts from node the copy the program's selector chooses: 1 when it was freed, 0 when not (the
 * selector said STARPU_DATA_NO_VICTIM, or its victim could not be evicted: *busy, the allocation
 * asks again in a moment), -1 when the selector left the choice to the runtime. */
static int evict_selected(unsigned node, bool *busy)
{
	starpu_pthread_mutex_lock(&victim.lock);
	starpu_data_victim_selector *select = victim.select;
	starpu_data_victim_eviction_failed *failed = victim.failed;
	void *data = victim.data;
	starpu_pthread_mutex_unlock(&victim.lock);
	if (!select)
		return -1;
	struct _astro_alloc_for for_what = _astro_alloc_for;
	starpu_data_handle_t v = select(for_what.handle, node, for_what.kind, data);
	if (!v)
		return -1;
	*busy = true;
	if (v == STARPU_DATA_NO_VICTIM)
		return 0;
	bool freed = false;
	if (_astro_data_live(v, "the victim selector (starpu_data_register_victim_selector)") &&
	    starpu_pthread_mutex_trylock(&v->coherency_lock) == 0) {
		/* Locked: the handle being loaded (its own lock is held) or one another thread uses is refused. */
		freed = !not_evictable(v, node, for_what.kind) && evict_copy(v, node);
		starpu_pthread_mutex_unlock(&v->coherency_lock);
	}
	if (!freed && failed)
		failed(v, data);
	return freed;
}

/* The memory room's reclaimer: the node's cached buffers first, then the copy the program's
 * selector chooses, or else the least recently used one. */
static bool reclaim(unsigned node, bool *busy)
{
	if (_astro_alloc_cache_reclaim(node, false))
		return true;
	if (__atomic_load_n(&victim.set, __ATOMIC_ACQUIRE)) {
		int selected = evict_selected(node, busy);
		if (selected >= 0)
			return selected;
	}
	return evict_one(node, busy);
}

void _astro_lru_init(void)
{
	starpu_data_register_victim_selector(NULL, NULL, NULL);
	_astro_memory_set_reclaimer(reclaim);
}

/* ------------------------------------------------- asked by the program */

/* Why handle's copy on node cannot be evicted now for a request of urgency kind, NULL when it
 * can (coherency_lock held: its replicates do not change meanwhile). */
static const char *not_evictable(starpu_data_handle_t h, unsigned node, enum starpu_is_prefetch kind)
{
	struct _astro_replicate *r = &h->replicates[node];
	bool busy = false;
	if (!r->allocated)
		return "it has no copy there";
	if (!h->owns_alloc[node])
		return "the buffer there is the program's";
	if (!r->in_lru)
		return "a main-memory copy is evicted only to a disk, and there is none";
	if (r->pinned)
		return "a running task uses it";
	if (_astro_nodes[node].kind == STARPU_CPU_RAM && __atomic_load_n(&h->no_ooc, __ATOMIC_RELAXED))
		return "the program keeps it out of the disks (starpu_data_set_ooc_flag)";
	if (_astro_nodes[node].kind == STARPU_CPU_RAM && ram_copy_in_use(h, &busy))
		return "the program acquired it, or it is partitioned";
	if (kind >= STARPU_PREFETCH && h->valid[node]) {
		bool elsewhere = false;
		for (unsigned other = 0; other < _astro_rt.nmemory_nodes && !elsewhere; other++)
			elsewhere = other != node && h->valid[other];
		if (!elsewhere)
			return "it is the only valid copy, and a prefetch does not pay a write-back";
	}
	return NULL;
}

/* The checks of both calls: false (reported) for a dead handle, a node or a kind that does not exist. */
static bool evict_checks(starpu_data_handle_t handle, unsigned node, enum starpu_is_prefetch kind, const char *fn)
{
	if (!_astro_data_live(handle, fn))
		return false;
	if (node >= starpu_memory_nodes_get_count()) {
		_astro_error("%s: no memory node %u (there are %u)", fn, node, starpu_memory_nodes_get_count());
		return false;
	}
	if ((int)kind < STARPU_FETCH || kind >= STARPU_NFETCH) {
		_astro_error("%s: no request urgency %d: give one of enum starpu_is_prefetch (STARPU_FETCH to STARPU_IDLEFETCH)", fn,
			     (int)kind);
		return false;
	}
	return true;
}

int starpu_data_can_evict(starpu_data_handle_t handle, unsigned node, enum starpu_is_prefetch is_prefetch)
{
	if (!evict_checks(handle, node, is_prefetch, "starpu_data_can_evict"))
		return 0;
	starpu_pthread_mutex_lock(&handle->coherency_lock);
	bool can = !not_evictable(handle, node, is_prefetch);
	starpu_pthread_mutex_unlock(&handle->coherency_lock);
	return can;
}

int starpu_data_evict_from_node(starpu_data_handle_t handle, unsigned node)
{
	if (!evict_checks(handle, node, STARPU_FETCH, "starpu_data_evict_from_node"))
		return -1;
	starpu_pthread_mutex_lock(&handle->coherency_lock);
	bool evicted = !not_evictable(handle, node, STARPU_FETCH) && evict_copy(handle, node);
	starpu_pthread_mutex_unlock(&handle->coherency_lock);
	return evicted ? 0 : -1;
}
