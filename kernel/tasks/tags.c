/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tags: application-chosen ids that tasks depend on. A tag with undone
 * dependency tags blocks the job associated with it; a tag is done when its
 * job completes or the application notifies it. Several tasks may carry a tag
 * without dependencies at once: it is done when the first completes.
 *
 * As in StarPU, a declared dependency stays: each time a dependency tag is
 * done it counts one completion for its successors, and a successor's job
 * runs once every dependency counted, which re-arms the count. So a
 * regenerated or restarted task graph waits again at every round.
 *
 * The table is sharded so concurrent submitters rarely share a lock; each
 * shard chains its tags in buckets (a GHashTable cost a chain of tasks some
 * 600 instructions per tag: hashing and comparing through pointers, and
 * resizing down as a chain's tags are removed).
 */
#include "tasks/tasks.h"
#include <stdarg.h>

/* The tags' short sections take astrolabe/thread.h's short lock (inline, a futex when
 * contended; a chain of tasks takes some eight locks per task). A tag has no condition: a
 * waiter sleeps on a futex of the tag. */

#define TAG_SHARDS 64

enum tag_state { TAG_INIT, TAG_ASSOCIATED, TAG_DONE };

struct _astro_tag
{
	starpu_tag_t id;
	uint64_t hash;                       /* tag_hash(id): its shard and bucket */
	astro_lock_t lock;
	int done_seq;                        /* bumped under lock when it is done with waiters, who sleep on its futex */
	enum tag_state state;
	unsigned ndeps;                      /* declared dependency tags */
	unsigned ndeps_completed;            /* completions counted since the job last ran */
	struct _astro_job *job;              /* associated job (the last submitted of those sharing it) */
	unsigned njobs;                      /* jobs carrying it, submitted and not completed */
	struct starpu_task *task;            /* the task that last carried it, kept once done until it is freed (starpu_tag_get_task) */
	bool job_blocked;                    /* job holds a dependency on this tag */
	struct _astro_tag **succs;           /* tags that depend on this one (inline_succs until it grows) */
	unsigned nsuccs, succs_cap;
	struct _astro_tag *inline_succs[2];
	int waiters;
	struct _astro_tag *hnext;            /* the next tag of its shard's bucket */
};

/* Each thread remembers the last tags it looked up: a chain declares and
 * attaches the same few tags in a row. Removing a tag bumps the generation,
 * which empties every cache. */
#define TAG_CACHE 2
_Static_assert(TAG_CACHE == 2, "tag_lookup() replaces the least recently used entry for two entries only");
static unsigned tags_generation;
static _ASTRO_TLS struct {
	unsigned generation;
	unsigned next;
	starpu_tag_t id[TAG_CACHE];
	struct _astro_tag *tag[TAG_CACHE];
} tag_cache;

struct shard
{
	astro_lock_t lock;
	struct _astro_tag **buckets;         /* nbuckets (a power of two, or 0) chains linked by hnext */
	unsigned nbuckets, count;
} __attribute__((aligned(_ASTRO_CACHELINE)));

static struct shard shards[TAG_SHARDS];

/* The low bits pick the shard, the next ones the bucket. */
static inline uint64_t tag_hash(starpu_tag_t id)
{
	uint64_t v = id;
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	return v;
}

static void tag_free(struct _astro_tag *tag)
{
	if (tag->succs != tag->inline_succs)
		free(tag->succs);
	_astro_recycled_free(_ASTRO_RECYCLED_TAG, tag);
}

static inline struct _astro_tag **bucket_of(struct shard *s, uint64_t hash)
{
	return &s->buckets[(hash / TAG_SHARDS) & (s->nbuckets - 1)];
}

/* Under s->lock. */
static struct _astro_tag *shard_find(struct shard *s, starpu_tag_t id, uint64_t hash)
{
	if (!s->nbuckets)
		return NULL;
	struct _astro_tag *tag = *bucket_of(s, hash);
	while (tag && tag->id != id)
		tag = tag->hnext;
	return tag;
}

static inline void bucket_push(struct shard *s, struct _astro_tag *tag)
{
	struct _astro_tag **head = bucket_of(s, tag->hash);
	tag->hnext = *head;
	*head = tag;
}

/* Under s->lock: adds tag (not there yet), doubling the buckets when there are as many tags. Without
 * memory for more buckets the chains only grow longer; false (nothing added) when there is none at all. */
static bool shard_insert(struct shard *s, struct _astro_tag *tag)
{
	if (s->count >= s->nbuckets) {
		unsigned old_n = s->nbuckets, n = old_n ? 2 * old_n : 16;
		struct _astro_tag **grown = calloc(n, sizeof(*grown)), **old = s->buckets;
		if (!grown && !old_n)
			return false;
		if (grown) {
			s->buckets = grown;
			s->nbuckets = n;
			for (unsigned b = 0; b < old_n; b++)
				for (struct _astro_tag *t = old[b], *next; t; t = next) {
					next = t->hnext;
					bucket_push(s, t);
				}
			free(old);
		}
	}
	bucket_push(s, tag);
	s->count++;
	return true;
}

/* Under s->lock: unlinks tag, which is there. */
static void shard_unlink(struct shard *s, struct _astro_tag *tag)
{
	struct _astro_tag **p = bucket_of(s, tag->hash);
	while (*p != tag)
		p = &(*p)->hnext;
	*p = tag->hnext;
	s->count--;
}

void _astro_tags_init(void)
{
	__atomic_store_n(&_astro_idle_describe_tags, _astro_tags_describe_blocked, __ATOMIC_RELEASE);
}

void _astro_tags_shutdown(void)
{
	for (unsigned i = 0; i < TAG_SHARDS; i++) {
		struct shard *s = &shards[i];
		astro_lock_acquire(&s->lock);
		for (unsigned b = 0; b < s->nbuckets; b++)
			for (struct _astro_tag *t = s->buckets[b], *next; t; t = next) {
				next = t->hnext;
				tag_free(t);
			}
		free(s->buckets);
		s->buckets = NULL;
		s->nbuckets = s->count = 0;
		__atomic_add_fetch(&tags_generation, 1, __ATOMIC_RELEASE);
		astro_lock_release(&s->lock);
	}
}

static struct shard *shard_of(uint64_t hash)
{
	return &shards[hash % TAG_SHARDS];
}

/* The table's part of tag_lookup(): out of line, so that a hit in the thread's cache pays no frame.
 * A tag made here gets ndeps declared dependencies (nobody can see it before the shard's lock is
 * released), and *made says so. */
static __attribute__((noinline)) struct _astro_tag *table_lookup(starpu_tag_t id, bool create, unsigned ndeps, bool *made)
{
	uint64_t hash = tag_hash(id);
	struct shard *s = shard_of(hash);
	astro_lock_acquire(&s->lock);
	struct _astro_tag *tag = shard_find(s, id, hash);
	if (!tag && create) {
		tag = _astro_recycled_alloc(_ASTRO_RECYCLED_TAG, sizeof(*tag));
		if (tag) {
			memset(tag, 0, sizeof(*tag)); /* its lock free */
			tag->id = id;
			tag->hash = hash;
			tag->succs = tag->inline_succs;
			tag->succs_cap = G_N_ELEMENTS(tag->inline_succs);
			tag->ndeps = ndeps;
			if (shard_insert(s, tag)) {
				*made = true;
			} else {
				tag_free(tag);
				tag = NULL;
			}
		}
		if (!tag)
			_astro_error("out of memory for tag %llu: what uses it fails (said by the call)", (unsigned long long)id);
	}
	astro_lock_release(&s->lock);
	return tag;
}

/* The tag id (made when missing if create; then with ndeps declared dependencies, and *made set). */
static inline struct _astro_tag *tag_lookup_made(starpu_tag_t id, bool create, unsigned ndeps, bool *made)
{
	unsigned generation = __atomic_load_n(&tags_generation, __ATOMIC_ACQUIRE);
	if (tag_cache.generation == generation) {
		for (unsigned i = 0; i < TAG_CACHE; i++)
			if (tag_cache.tag[i] && tag_cache.id[i] == id) {
				/* Least recently used goes first: a chain looks up i, then i-1, then attaches i, and
				 * i+1 must then evict i-1, not i (evicting in insertion order missed every i-1). */
				tag_cache.next = (i + 1) % TAG_CACHE;
				return tag_cache.tag[i];
			}
	} else {
		memset(&tag_cache, 0, sizeof(tag_cache));
		tag_cache.generation = generation;
	}
	struct _astro_tag *tag = table_lookup(id, create, ndeps, made);
	if (tag) {
		tag_cache.id[tag_cache.next] = id;
		tag_cache.tag[tag_cache.next] = tag;
		tag_cache.next = (tag_cache.next + 1) % TAG_CACHE;
	}
	return tag;
}

static inline struct _astro_tag *tag_lookup(starpu_tag_t id, bool create)
{
	bool made = false;
	return tag_lookup_made(id, create, 0, &made);
}

/* Counts completed more completions of tag's dependencies and uncounted fewer declared ones (counted
 * in advance, then not declared): its blocked job runs once all its dependencies completed. */
static void count_deps(struct _astro_tag *tag, unsigned completed, unsigned uncounted)
{
	struct _astro_job *release = NULL;
	astro_lock_acquire(&tag->lock);
	tag->ndeps_completed += completed;
	tag->ndeps -= uncounted;
	if (tag->job_blocked && tag->ndeps_completed >= tag->ndeps) {
		tag->job_blocked = false;
		tag->ndeps_completed = 0;
		release = tag->job;
	}
	astro_lock_release(&tag->lock);
	if (release)
		_astro_job_release(release);
}

/* One dependency of tag completed. */
static inline void count_completion(struct _astro_tag *tag)
{
	count_deps(tag, 1, 0);
}

/* tag's successor i (they are only appended): the snapshot's stand-in when there is no memory for one. */
static struct _astro_tag *succ_at(struct _astro_tag *tag, unsigned i)
{
	astro_lock_acquire(&tag->lock);
	struct _astro_tag *succ = tag->succs[i];
	astro_lock_release(&tag->lock);
	return succ;
}

/* Marks tag done and releases what depended on it; ended: the job of it that completed, if any. */
static void tag_set_done(struct _astro_tag *tag, struct _astro_job *ended)
{
	astro_lock_acquire(&tag->lock);
	if (ended) {
		tag->njobs--;
		if (tag->job == ended)
			tag->job = NULL;
	}
	if (tag->state == TAG_DONE) {
		astro_lock_release(&tag->lock);
		return;
	}
	tag->state = TAG_DONE;
	/* Notified while its job waits for the tag's dependencies: the job stays, they release it. */
	if (!tag->job_blocked)
		tag->job = NULL;
	/* The successors stay declared: notify a snapshot, the list may grow meanwhile. */
	unsigned n = tag->nsuccs;
	struct _astro_tag *succs_inline[8];
	struct _astro_tag **succs = succs_inline;
	if (tag->waiters) {
		__atomic_store_n(&tag->done_seq, tag->done_seq + 1, __ATOMIC_RELAXED);
		astro_futex_wake_all(&tag->done_seq);
	}
	if (STARPU_UNLIKELY(n > 8) && !(succs = malloc(n * sizeof(*succs)))) {
		astro_lock_release(&tag->lock);
		for (unsigned i = 0; i < n; i++)
			count_completion(succ_at(tag, i));
		return;
	}
	memcpy(succs, tag->succs, n * sizeof(*succs));
	astro_lock_release(&tag->lock);

	for (unsigned i = 0; i < n; i++)
		count_completion(succs[i]);
	if (succs != succs_inline)
		free(succs);
}

int _astro_tag_attach_job(struct _astro_job *job, starpu_tag_t id)
{
	struct _astro_tag *tag = tag_lookup(id, true);
	if (!tag)
		return -ENOMEM;
	astro_lock_acquire(&tag->lock);
	/* Several tasks may carry a tag at once (as in StarPU): it is done when the first
	 * of them completes. Not a tag with dependencies: those wake one task. */
	if (tag->state == TAG_ASSOCIATED && tag->job && tag->job != job && tag->ndeps) {
		/* The tag's job cannot go away while we hold the lock: it clears tag->job here first. */
		const char *other = tag->job->task ? starpu_task_get_name(tag->job->task) : NULL;
		const char *name = job->task ? starpu_task_get_name(job->task) : NULL;
		_astro_error("starpu_task_submit: task '%s' uses tag %llu, which task '%s' (job %lu) still holds, and the tag has "
			     "dependencies (starpu_tag_declare_deps), which wake one task only. Use another tag, or submit this task once that one completed",
			     name ? name : "(unnamed)", (unsigned long long)id, other ? other : "(unnamed)", tag->job->id);
		astro_lock_release(&tag->lock);
		return -EINVAL;
	}
	/* A done tag is reused by a new task (as after starpu_tag_restart()). */
	tag->njobs++;
	tag->state = TAG_ASSOCIATED;
	tag->job = job;
	__atomic_store_n(&tag->task, job->task, __ATOMIC_RELAXED);
	job->tag_generation = __atomic_load_n(&tags_generation, __ATOMIC_ACQUIRE);
	job->tag = tag;
	if (tag->ndeps_completed < tag->ndeps) {
		tag->job_blocked = true;
		__atomic_add_fetch(&job->pending, 1, __ATOMIC_ACQ_REL);
	} else {
		tag->ndeps_completed = 0; /* this round's dependencies are used up */
	}
	astro_lock_release(&tag->lock);
	return 0;
}

void _astro_tag_job_done(struct _astro_tag *tag, struct _astro_job *job)
{
	tag_set_done(tag, job);
}

/* Serialises declarations, so that two of them cannot close a cycle together unseen. */
static astro_lock_t declare_lock;

/* Would "root depends on deps[]" close a cycle? That is: does some dep
 * already depend, directly or not, on root (found by walking the successors
 * of root)? If so, returns the cycle "root -> dep -> ... -> root" (-> read
 * "depends on"), to g_free(); NULL otherwise. Called with declare_lock held,
 * through closes_cycle(): a tag nothing depends on yet (a chain's next tag)
 * costs one look there and no call. */
static __attribute__((noinline)) char *cycle_closed(struct _astro_tag *root, unsigned ndeps, const starpu_tag_t *deps)
{
	GHashTable *parent = g_hash_table_new(NULL, NULL); /* visited tag -> the tag it was reached from */
	GQueue queue = G_QUEUE_INIT;
	g_hash_table_insert(parent, root, root);
	g_queue_push_tail(&queue, root);
	struct _astro_tag *found = NULL;
	while (!found && !g_queue_is_empty(&queue)) {
		struct _astro_tag *t = g_queue_pop_head(&queue);
		astro_lock_acquire(&t->lock);
		for (unsigned k = 0; k < t->nsuccs && !found; k++) {
			struct _astro_tag *succ = t->succs[k];
			if (g_hash_table_contains(parent, succ))
				continue;
			g_hash_table_insert(parent, succ, t);
			g_queue_push_tail(&queue, succ);
			for (unsigned i = 0; i < ndeps; i++)
				if (succ->id == deps[i])
					found = succ;
		}
		astro_lock_release(&t->lock);
	}
	char *cycle = NULL;
	if (found) {
		/* found depends on its parent, which depends on ... on root. */
		GString *out = g_string_new(NULL);
		g_string_printf(out, "%llu", (unsigned long long)root->id);
		for (struct _astro_tag *t = found; t != root; t = g_hash_table_lookup(parent, t))
			g_string_append_printf(out, " -> %llu", (unsigned long long)t->id);
		g_string_append_printf(out, " -> %llu", (unsigned long long)root->id);
		cycle = g_string_free(out, FALSE);
	}
	g_queue_clear(&queue);
	g_hash_table_destroy(parent);
	return cycle;
}

static inline char *closes_cycle(struct _astro_tag *root, unsigned ndeps, const starpu_tag_t *deps)
{
	/* Successors are only appended by declarations, under declare_lock which we hold. */
	if (__atomic_load_n(&root->nsuccs, __ATOMIC_RELAXED) == 0)
		return NULL;
	return cycle_closed(root, ndeps, deps);
}

/* The declaration behind each call (inlined into each: a chain of tasks declares one per task). */
static inline __attribute__((always_inline)) int declare_deps(const char *fn, starpu_tag_t id, unsigned ndeps, starpu_tag_t *array)
{
	if (ndeps && !array) {
		_astro_error("%s: NULL deps for %u dependencies of tag %llu: nothing was declared; give an array of %u tags", fn, ndeps,
			     (unsigned long long)id, ndeps);
		return -EINVAL;
	}
	/* A tag depending on itself would never be released: nothing could notify it
	 * but the application, and its task would wait forever without a word. */
	for (unsigned i = 0; i < ndeps; i++)
		if (array[i] == id) {
			_astro_error("%s: tag %llu is among its own dependencies, so its task could never run: "
				     "nothing was declared; remove tag %llu from its dependency list",
				     fn, (unsigned long long)id, (unsigned long long)id);
			return -EINVAL;
		}
	astro_lock_acquire(&declare_lock);
	/* All the dependencies are counted first, so that a completion counted meanwhile never releases the
	 * job early; a tag made here (a chain's next one) counts them from the start, with no lock. */
	bool made = false;
	struct _astro_tag *tag = tag_lookup_made(id, true, ndeps, &made);
	if (!tag) {
		astro_lock_release(&declare_lock);
		return -ENOMEM;
	}
	if (!made && ndeps) {
		astro_lock_acquire(&tag->lock);
		tag->ndeps += ndeps;
		astro_lock_release(&tag->lock);
	}
	/* A cycle is allowed, as in StarPU (regenerated tasks looping, started by the
	 * application), but its tasks wait until one of its tags is notified: said once. */
	char *cycle = closes_cycle(tag, ndeps, array);
	if (cycle) {
		_astro_warn("%s: tag %llu closes the dependency cycle %s (a -> b: a depends on b): "
			    "its tasks run only once one of these tags is notified (starpu_tag_notify_from_apps)",
			    fn, (unsigned long long)id, cycle);
		g_free(cycle);
	}
	unsigned declared = 0;
	for (; declared < ndeps; declared++) {
		struct _astro_tag *dep = tag_lookup(array[declared], true);
		if (!dep)
			break;
		astro_lock_acquire(&dep->lock);
		if (dep->nsuccs == dep->succs_cap) {
			struct _astro_tag **grown = malloc(2 * dep->succs_cap * sizeof(*grown));
			if (!grown) {
				astro_lock_release(&dep->lock);
				_astro_error("%s: out of memory for the successors of tag %llu: tag %llu was not made to depend on it, nor on "
					     "the tags after it",
					     fn, (unsigned long long)dep->id, (unsigned long long)id);
				break;
			}
			memcpy(grown, dep->succs, dep->nsuccs * sizeof(*grown));
			if (dep->succs != dep->inline_succs)
				free(dep->succs);
			dep->succs = grown;
			dep->succs_cap *= 2;
		}
		dep->succs[dep->nsuccs++] = tag;
		bool already_done = dep->state == TAG_DONE;
		astro_lock_release(&dep->lock);
		if (already_done)
			count_completion(tag);
	}
	if (declared < ndeps)
		count_deps(tag, 0, ndeps - declared); /* the ones not declared do not count */
	astro_lock_release(&declare_lock);
	for (unsigned i = 0; i < declared; i++)
		_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_DEPENDENCY, .workerid = _astro_worker_id(), .job_id = (unsigned long)id,
			       .other_id = (unsigned long)array[i], .nimpl = ASTRO_DEP_TAG);
	return declared == ndeps ? 0 : -ENOMEM;
}

int _astro_tag_declare_deps(const char *fn, starpu_tag_t id, unsigned ndeps, starpu_tag_t *array)
{
	return declare_deps(fn, id, ndeps, array);
}

void starpu_tag_declare_deps_array(starpu_tag_t id, unsigned ndeps, starpu_tag_t *array)
{
	declare_deps("starpu_tag_declare_deps_array", id, ndeps, array);
}

void starpu_tag_declare_deps(starpu_tag_t id, unsigned ndeps, ...)
{
	starpu_tag_t deps[ndeps ? ndeps : 1];
	va_list ap;
	va_start(ap, ndeps);
	for (unsigned i = 0; i < ndeps; i++)
		deps[i] = va_arg(ap, starpu_tag_t);
	va_end(ap);
	declare_deps("starpu_tag_declare_deps", id, ndeps, deps);
}

/* What keeps the tag an application waits for (arg: its starpu_tag_t) from being done, for the idle-wait report. */
static void describe_waited(GString *out, const char *prefix, const void *arg)
{
	starpu_tag_t id = *(const starpu_tag_t *)arg;
	struct _astro_tag *tag = tag_lookup(id, false);
	if (!tag)
		return;
	astro_lock_acquire(&tag->lock);
	if (tag->state == TAG_ASSOCIATED && tag->job) {
		const char *name = tag->job->task ? starpu_task_get_name(tag->job->task) : NULL;
		g_string_append_printf(out, "%stag %llu, waited for, is carried by task '%s' (job %lu), not complete\n", prefix,
				       (unsigned long long)id, name ? name : "(unnamed)", tag->job->id);
	} else if (tag->state != TAG_DONE) {
		g_string_append_printf(out, "%stag %llu, waited for, is carried by no task and nobody notified it: submit a task with it "
				       "(use_tag, tag_id) or call starpu_tag_notify_from_apps(%llu) from another thread\n", prefix,
				       (unsigned long long)id, (unsigned long long)id);
	}
	astro_lock_release(&tag->lock);
}

int starpu_tag_wait_array(unsigned ntags, starpu_tag_t *ids)
{
	int ret = _astro_forbid_blocking(ntags == 1 ? "starpu_tag_wait" : "starpu_tag_wait_array", "use a task depending on the tag instead");
	if (ret)
		return ret;
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_BEGIN, .workerid = -1);
	for (unsigned i = 0; i < ntags; i++) {
		struct _astro_tag *tag = tag_lookup(ids[i], true);
		if (!tag) {
			ret = -ENOMEM;
			break;
		}
		astro_lock_acquire(&tag->lock);
		tag->waiters++;
		if (tag->state != TAG_DONE) {
			const char *call = ntags == 1 ? "starpu_tag_wait" : "starpu_tag_wait_array";
			_astro_wait_say_paused(call);
			struct _astro_idle_watch watch;
			_astro_idle_watch_begin(&watch, call, NULL, describe_waited, &ids[i]);
			while (tag->state != TAG_DONE) {
				/* A completion between the unlock and the sleep changed done_seq: no sleep then. */
				int seq = tag->done_seq;
				uint64_t sleep_ns = _astro_idle_watch_sleep_ns(&watch);
				astro_lock_release(&tag->lock);
				astro_futex_wait_for(&tag->done_seq, seq, sleep_ns);
				if (sleep_ns)
					_astro_idle_watch_look(&watch); /* it takes every tag's lock, this one's too */
				astro_lock_acquire(&tag->lock);
			}
		}
		tag->waiters--;
		astro_lock_release(&tag->lock);
	}
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_END, .workerid = -1);
	return ret;
}

int starpu_tag_wait(starpu_tag_t id)
{
	return starpu_tag_wait_array(1, &id);
}

void starpu_tag_notify_from_apps(starpu_tag_t id)
{
	struct _astro_tag *tag = tag_lookup(id, true);
	if (tag)
		tag_set_done(tag, NULL);
}

void starpu_tag_restart(starpu_tag_t id)
{
	struct _astro_tag *tag = tag_lookup(id, false);
	if (!tag)
		return;
	astro_lock_acquire(&tag->lock);
	if (tag->state == TAG_DONE)
		tag->state = TAG_INIT;
	astro_lock_release(&tag->lock);
}

void starpu_tag_notify_restart_from_apps(starpu_tag_t id)
{
	starpu_tag_notify_from_apps(id);
	starpu_tag_restart(id);
}

void starpu_tag_remove(starpu_tag_t id)
{
	uint64_t hash = tag_hash(id);
	struct shard *s = shard_of(hash);
	astro_lock_acquire(&s->lock);
	struct _astro_tag *tag = shard_find(s, id, hash);
	if (tag) {
		astro_lock_acquire(&tag->lock);
		bool busy = tag->waiters > 0 || tag->njobs || (tag->state == TAG_ASSOCIATED && tag->job);
		astro_lock_release(&tag->lock);
		if (busy)
			_astro_error("starpu_tag_remove: tag %llu is still in use (a task or a waiter): remove it once it is done",
				     (unsigned long long)id);
		else {
			__atomic_add_fetch(&tags_generation, 1, __ATOMIC_RELEASE);
			shard_unlink(s, tag);
			tag_free(tag);
		}
	}
	astro_lock_release(&s->lock);
}

struct starpu_task *starpu_tag_get_task(starpu_tag_t id)
{
	struct _astro_tag *tag = tag_lookup(id, false);
	if (!tag)
		return NULL;
	astro_lock_acquire(&tag->lock);
	struct starpu_task *task = tag->job ? tag->job->task : __atomic_load_n(&tag->task, __ATOMIC_RELAXED);
	astro_lock_release(&tag->lock);
	return task;
}

void _astro_tag_forget_task(struct _astro_job *job, struct starpu_task *task)
{
	/* The job's tag, while no tag was removed since it was attached; else looked up by id. */
	struct _astro_tag *tag = job && job->tag && job->tag_generation == __atomic_load_n(&tags_generation, __ATOMIC_ACQUIRE)
				 ? job->tag : tag_lookup(task->tag_id, false);
	if (tag)
		__atomic_compare_exchange_n(&tag->task, &task, NULL, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------- watchdog */

struct blocked_tag
{
	struct _astro_tag *tag;
	GString *waits;                      /* the undone tags it waits for */
};

/* Tags are never freed while the runtime runs tasks: starpu_tag_remove() refuses a tag in use. */
void _astro_tags_describe_blocked(GString *out, const char *prefix, GHashTable *blocked)
{
	GHashTable *waiting = g_hash_table_new(NULL, NULL); /* successor tag -> struct blocked_tag */
	GPtrArray *order = g_ptr_array_new();
	for (unsigned i = 0; i < TAG_SHARDS; i++) {
		astro_lock_acquire(&shards[i].lock);
		for (unsigned bk = 0; bk < shards[i].nbuckets; bk++)
		for (struct _astro_tag *dep = shards[i].buckets[bk]; dep; dep = dep->hnext) {
			astro_lock_acquire(&dep->lock);
			if (dep->state != TAG_DONE) {
				for (unsigned k = 0; k < dep->nsuccs; k++) {
					struct blocked_tag *b = g_hash_table_lookup(waiting, dep->succs[k]);
					if (!b) {
						b = g_new0(struct blocked_tag, 1);
						b->tag = dep->succs[k];
						b->waits = g_string_new(NULL);
						g_hash_table_insert(waiting, b->tag, b);
						g_ptr_array_add(order, b);
					}
					g_string_append_printf(b->waits, "%stag %llu", b->waits->len ? ", " : "", (unsigned long long)dep->id);
					if (dep->state == TAG_ASSOCIATED && dep->job) {
						const char *name = dep->job->task ? starpu_task_get_name(dep->job->task) : NULL;
						g_string_append_printf(b->waits, " (task '%s', job %lu, not complete)", name ? name : "(unnamed)", dep->job->id);
					} else {
						g_string_append(b->waits, " (no task with it yet: submit one or call starpu_tag_notify_from_apps)");
					}
				}
			}
			astro_lock_release(&dep->lock);
		}
		astro_lock_release(&shards[i].lock);
	}
	for (unsigned i = 0; i < order->len; i++) {
		struct blocked_tag *b = order->pdata[i];
		struct _astro_tag *tag = b->tag;
		astro_lock_acquire(&tag->lock);
		if (tag->job_blocked && tag->job) {
			const char *name = tag->job->task ? starpu_task_get_name(tag->job->task) : NULL;
			g_string_append_printf(out, "%stag %llu (task '%s', job %lu) waits for %s\n", prefix, (unsigned long long)tag->id,
					       name ? name : "(unnamed)", tag->job->id, b->waits->str);
			g_hash_table_insert(blocked, tag->job, (gpointer)(uintptr_t)tag->id);
		}
		astro_lock_release(&tag->lock);
		g_string_free(b->waits, TRUE);
		g_free(b);
	}
	g_ptr_array_free(order, TRUE);
	g_hash_table_destroy(waiting);
}
