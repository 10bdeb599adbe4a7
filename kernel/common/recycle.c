/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Recycled blocks of fixed size: the memory of tasks and of their profiling
 * infos, which the application thread allocates and a worker usually frees,
 * and of tags (a chain makes one per task, starpu_tag_remove frees them in bulk).
 * Through malloc both threads would contend for one arena at every task;
 * here each thread keeps up to CACHE_BLOCKS freed blocks per recycler, and a
 * full cache goes whole to the recycler's depot (one lock per CACHE_BLOCKS
 * blocks), where allocating threads take caches back. Caches and depots are
 * first in, first out: blocks come back in the order they were freed, so
 * tasks created in address order stay in address order, round after round
 * (the workers then walk them as the prefetchers like; last in, first out
 * reversed them at each round and cost a chain of tasks 15%). A depot keeps up to
 * DEPOT_BYTES (tens of thousands of tasks pending at once are recycled: a
 * chain of 20000 tasks submits 20% faster than with 4096). What a burst frees
 * beyond that waits in the depot's reserve, up to RESERVE_BYTES more, taken
 * only when the depot is empty: the next burst takes no page faults for it
 * (100,000 tasks submitted ahead: 0.43-0.52 us per task instead of
 * 0.83-0.88, bench/scale), while the blocks that circulate from one task to
 * the next stay DEPOT_BYTES (async, 1 worker: 1.04x slower when the depot
 * itself held 256 MB). Beyond the reserve, blocks go back to malloc, and so
 * do the caches of a thread that exits when both are full. AddressSanitizer builds use malloc and free directly, so that a
 * task used after it was freed is still caught (ThreadSanitizer builds
 * recycle, and check the hand-over).
 *
 * Taking a block asks for the next one's lines for writing: they come while
 * the caller fills this one (a block comes back from the worker that freed
 * it, or from memory).
 */
#include "common/common.h"

#define CACHE_BLOCKS 64
#define DEPOT_BYTES (32u << 20)
#define RESERVE_BYTES (224u << 20)

#if defined(__SANITIZE_ADDRESS__)
#define RECYCLE 0
#else
#define RECYCLE 1
#endif

/* A free block: linked to the next in its cache; a cache's first block
 * knows the cache's last one, and links the next cache of the depot. */
struct free_block
{
	struct free_block *next;
	struct free_block *last;
	struct free_block *next_cache;
};

struct depot
{
	starpu_pthread_mutex_t lock;
	struct free_block *caches, *last;
	unsigned ncaches;	/* written under lock, peeked at without */
	size_t size;		/* of a block: known from the first allocation, which always misses the caches */
	/* Full caches beyond DEPOT_BYTES, up to RESERVE_BYTES: taken only when the depot is empty. */
	struct free_block *reserve;
	unsigned nreserve;	/* written under lock, peeked at without */
};

static struct depot depots[_ASTRO_NRECYCLED] = {
	[_ASTRO_RECYCLED_TASK] = { STARPU_PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0 },
	[_ASTRO_RECYCLED_PROFILING_INFO] = { STARPU_PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0 },
	[_ASTRO_RECYCLED_TAG] = { STARPU_PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0 },
};

struct cache
{
	struct free_block *head, *tail;
	unsigned n;
};

static _ASTRO_TLS struct cache caches[_ASTRO_NRECYCLED];
static _ASTRO_TLS bool thread_known;
static starpu_pthread_key_t exit_key;
static starpu_pthread_once_t exit_key_once = STARPU_PTHREAD_ONCE_INIT;

/* Gives a full cache to the depot; false when the depot is full. */
static __attribute__((noinline)) bool depot_put(struct depot *d, struct free_block *cache)
{
	bool kept = false;
	starpu_pthread_mutex_lock(&d->lock);
	size_t size = __atomic_load_n(&d->size, __ATOMIC_RELAXED);
	if (size && d->ncaches < DEPOT_BYTES / (CACHE_BLOCKS * size)) {
		cache->next_cache = NULL;
		if (d->caches)
			d->last->next_cache = cache;
		else
			d->caches = cache;
		d->last = cache;
		__atomic_store_n(&d->ncaches, d->ncaches + 1, __ATOMIC_RELAXED);
		kept = true;
	} else if (size && d->nreserve < RESERVE_BYTES / (CACHE_BLOCKS * size)) {
		cache->next_cache = d->reserve;
		d->reserve = cache;
		__atomic_store_n(&d->nreserve, d->nreserve + 1, __ATOMIC_RELAXED);
		kept = true;
	}
	starpu_pthread_mutex_unlock(&d->lock);
	return kept;
}

static __attribute__((noinline)) struct free_block *depot_take(struct depot *d)
{
	if (!__atomic_load_n(&d->ncaches, __ATOMIC_RELAXED) && !__atomic_load_n(&d->nreserve, __ATOMIC_RELAXED))
		return NULL;
	starpu_pthread_mutex_lock(&d->lock);
	struct free_block *cache = d->caches;
	if (cache) {
		d->caches = cache->next_cache;
		__atomic_store_n(&d->ncaches, d->ncaches - 1, __ATOMIC_RELAXED);
	} else if ((cache = d->reserve) != NULL) {
		d->reserve = cache->next_cache;
		__atomic_store_n(&d->nreserve, d->nreserve - 1, __ATOMIC_RELAXED);
	}
	starpu_pthread_mutex_unlock(&d->lock);
	return cache;
}

static void free_chain(struct free_block *b)
{
	while (b) {
		struct free_block *next = b->next;
		free(b);
		b = next;
	}
}

/* A thread exits: its full caches go to the depots, the others back to malloc
 * (a thread that only took blocks from a depot gives back what it did not use). */
static void thread_exit(void *arg)
{
	(void)arg;
	for (int r = 0; r < _ASTRO_NRECYCLED; r++) {
		struct cache *c = &caches[r];
		if (c->head)
			c->head->last = c->tail;
		if (!(c->n == CACHE_BLOCKS && depot_put(&depots[r], c->head)))
			free_chain(c->head);
		c->head = NULL;
		c->n = 0;
	}
	thread_known = false; /* blocks kept by later destructors of this thread register again */
}

static void exit_key_create(void)
{
	starpu_pthread_key_create(&exit_key, thread_exit);
}

/* The first time this thread keeps blocks: they will be handed back when it exits. */
static __attribute__((noinline, cold)) void thread_attach(void)
{
	starpu_pthread_once(&exit_key_once, exit_key_create);
	starpu_pthread_setspecific(exit_key, &thread_known);
	thread_known = true;
}

void *_astro_recycled_alloc(enum _astro_recycled what, size_t size)
{
	if (!RECYCLE)
		return malloc(size);
	struct cache *c = &caches[what];
	if (!c->head) {
		c->head = depot_take(&depots[what]);
		if (!c->head) {
			__atomic_store_n(&depots[what].size, size, __ATOMIC_RELAXED);
			return malloc(size);
		}
		if (STARPU_UNLIKELY(!thread_known))
			thread_attach();
		c->tail = c->head->last;
		c->n = CACHE_BLOCKS;
	}
	struct free_block *b = c->head;
	c->head = b->next;
	c->n--;
	if (c->head)
		astro_prefetch_for_writing(c->head, size);
	return b;
}

/* This thread's cache of what is full: it goes to the depot (emptied, true), or stays when the depot is full (false). */
static __attribute__((noinline)) bool cache_hand_over(enum _astro_recycled what, struct cache *c)
{
	c->head->last = c->tail;
	if (!depot_put(&depots[what], c->head))
		return false;
	c->head = NULL;
	c->n = 0;
	return true;
}

void _astro_recycled_free(enum _astro_recycled what, void *block)
{
	if (!RECYCLE || !block) {
		free(block);
		return;
	}
	if (STARPU_UNLIKELY(!thread_known))
		thread_attach();
	struct cache *c = &caches[what];
	if (STARPU_UNLIKELY(c->n == CACHE_BLOCKS) && !cache_hand_over(what, c)) {
		free(block);
		return;
	}
	struct free_block *b = block;
	b->next = NULL;
	if (c->head)
		c->tail->next = b;
	else
		c->head = b;
	c->tail = b;
	c->n++;
}
