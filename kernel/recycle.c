/*
 * Recycled blocks of fixed size: the memory of tasks and of their profiling
 * infos, which the application thread allocates and a worker usually frees.
 * Through malloc both threads would contend for one arena at every task;
 * here each thread keeps up to CACHE_BLOCKS freed blocks per recycler, and a
 * full cache goes whole to the recycler's depot (one lock per CACHE_BLOCKS
 * blocks), where allocating threads take caches back. The depot keeps at most
 * DEPOT_CACHES caches; beyond, and when a thread exits, blocks go back to
 * malloc. AddressSanitizer builds use malloc and free directly, so that a
 * task used after it was freed is still caught (ThreadSanitizer builds
 * recycle, and check the hand-over).
 */
#include "kernel.h"

#define CACHE_BLOCKS 64
#define DEPOT_CACHES 64

#if defined(__SANITIZE_ADDRESS__)
#define RECYCLE 0
#else
#define RECYCLE 1
#endif

/* A free block: linked to the next in its cache; a cache's first block links the depot. */
struct free_block
{
	struct free_block *next;
	struct free_block *next_cache;
};

struct depot
{
	pthread_mutex_t lock;
	struct free_block *caches;
	unsigned ncaches;	/* written under lock, peeked at without */
};

static struct depot depots[_ASTRO_NRECYCLED] = {
	[0 ... _ASTRO_NRECYCLED - 1] = { PTHREAD_MUTEX_INITIALIZER, NULL, 0 },
};

static const size_t sizes[_ASTRO_NRECYCLED] = {
	[_ASTRO_RECYCLED_TASK] = sizeof(struct _astro_task_with_job),
	[_ASTRO_RECYCLED_PROFILING_INFO] = sizeof(struct starpu_profiling_task_info),
};

struct cache
{
	struct free_block *head;
	unsigned n;
};

static _ASTRO_TLS struct cache caches[_ASTRO_NRECYCLED];
static _ASTRO_TLS bool thread_known;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* Gives a full cache to the depot; false when the depot is full. */
static bool depot_put(struct depot *d, struct free_block *cache)
{
	bool kept = false;
	pthread_mutex_lock(&d->lock);
	if (d->ncaches < DEPOT_CACHES) {
		cache->next_cache = d->caches;
		d->caches = cache;
		__atomic_store_n(&d->ncaches, d->ncaches + 1, __ATOMIC_RELAXED);
		kept = true;
	}
	pthread_mutex_unlock(&d->lock);
	return kept;
}

static struct free_block *depot_take(struct depot *d)
{
	if (!__atomic_load_n(&d->ncaches, __ATOMIC_RELAXED))
		return NULL;
	pthread_mutex_lock(&d->lock);
	struct free_block *cache = d->caches;
	if (cache) {
		d->caches = cache->next_cache;
		__atomic_store_n(&d->ncaches, d->ncaches - 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&d->lock);
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

/* A thread exits: its full caches go to the depots, the others back to malloc. */
static void thread_exit(void *arg)
{
	(void)arg;
	for (int r = 0; r < _ASTRO_NRECYCLED; r++) {
		struct cache *c = &caches[r];
		if (!(c->n == CACHE_BLOCKS && depot_put(&depots[r], c->head)))
			free_chain(c->head);
		c->head = NULL;
		c->n = 0;
	}
}

static void exit_key_create(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

void *_astro_recycled_alloc(enum _astro_recycled what)
{
	if (!RECYCLE)
		return malloc(sizes[what]);
	struct cache *c = &caches[what];
	if (!c->head) {
		c->head = depot_take(&depots[what]);
		if (!c->head)
			return malloc(sizes[what]);
		c->n = CACHE_BLOCKS;
	}
	struct free_block *b = c->head;
	c->head = b->next;
	c->n--;
	return b;
}

void _astro_recycled_free(enum _astro_recycled what, void *block)
{
	if (!RECYCLE || !block) {
		free(block);
		return;
	}
	if (STARPU_UNLIKELY(!thread_known)) {
		pthread_once(&exit_key_once, exit_key_create);
		pthread_setspecific(exit_key, &thread_known);
		thread_known = true;
	}
	struct cache *c = &caches[what];
	if (c->n == CACHE_BLOCKS) {
		if (!depot_put(&depots[what], c->head)) {
			free(block);
			return;
		}
		c->head = NULL;
		c->n = 0;
	}
	struct free_block *b = block;
	b->next = c->head;
	c->head = b;
	c->n++;
}
