/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * heteroprio: ready tasks wait in buckets, one per priority (0..99); each
 * kind of worker looks at its own buckets in its own order, set by the
 * application's callback (starpu_heteroprio.h, kept by libastrolabe:
 * astrolabe/heteroprio.h). A worker takes up to STARPU_HETEROPRIO_MAX_PREFETCH
 * tasks at once into a queue of its own, which workers of its kind steal
 * from when the buckets hold nothing for them. A bucket may name its fastest
 * kind of worker: a slower one takes its tasks only while the bucket holds at
 * least its slow factor times as many tasks as there are fastest workers.
 *
 * One lock guards the buckets and the workers' queues (a worker takes from
 * several buckets at once). Counts read without it let an idle worker see
 * there is nothing for it without taking the lock.
 *
 * Where heteroprio lives:
 * - this folder: the policy (this file; auto.c, the automatic mode; la.c, the
 *   data locality mode), the plugin sched_heteroprio;
 * - this folder's API half, heteroprio_api.c (libapi.la, in libastrolabe in
 *   every build): the application's starpu_heteroprio_* calls and the set-up
 *   they write for the policy;
 * - the public headers: starpu_heteroprio.h (StarPU's calls), its alias
 *   schedulers/starpu_heteroprio.h, and astrolabe/heteroprio.h (the set-up,
 *   between the API half and the policy);
 * - policy-toolkit/component_heteroprio.c: the modular heteroprio
 *   *component* (starpu_sched_component_heteroprio_create), another policy
 *   made of the same idea, which plugins/policies/modular builds into
 *   modular-heteroprio; it shares no code with this one.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/sched.h>
#include <astrolabe/heteroprio.h>
#include "auto.h"
#include "la.h"

/* A bucket's tasks; its architectures, fastest one and slow factors are in the policy's layout. */
struct hp_bucket
{
	/* One list per worker group in the data locality mode (la.h), else only the first. */
	struct starpu_task_list tasks[HP_LA_MAX_GROUPS];
	unsigned ntasks;
	/* Of them, those no worker of the fastest architecture can run (a slower worker takes them at once). */
	unsigned nfor_slower_only;
};

struct hp_worker
{
	/* Tasks the worker took from the buckets and has not run yet. */
	struct starpu_task_list queue;
	atomic_uint nqueued;
	int arch;
} __attribute__((aligned(ASTRO_SCHED_CACHE_LINE)));

struct hp_policy
{
	starpu_pthread_mutex_t lock;
	struct astro_sched_workers workers;
	/* Which buckets each architecture looks at, in which order; each bucket's fastest architecture and slow factors. */
	struct astro_heteroprio_setup layout;
	/* The automatic mode (auto.h), which changes the layout as tasks come; NULL when off. */
	struct hp_auto *autom;
	/* The data locality mode (la.h); NULL when off. */
	struct hp_la *la;
	struct hp_bucket buckets[STARPU_HETEROPRIO_MAX_PRIO];
	/* Tasks in the buckets that workers of each architecture may take. */
	atomic_uint in_buckets[STARPU_NARCH];
	/* Tasks in the queues of the workers of each architecture. */
	atomic_uint in_queues[STARPU_NARCH];
	unsigned nworkers_of[STARPU_NARCH];
	/* Buckets whose tasks no worker could run, reported once each. */
	unsigned char reported[STARPU_HETEROPRIO_MAX_PRIO];
	struct hp_worker w[STARPU_NMAXWORKERS];
};

static struct astro_sched_counters hp_counters;
static struct starpu_sched_policy heteroprio_policy;
static void hp_pre_exec(struct starpu_task *task, unsigned sched_ctx_id);
static void hp_post_exec(struct starpu_task *task, unsigned sched_ctx_id);

/*
 * While the policy holds a task, its word (astro_sched_task_data()) keeps the architectures that
 * may run it (1 << arch), its bucket, its worker group and, for the locality
 * mode's AUTO push, the group each strategy chose.
 */
#define AT_BUCKET STARPU_NARCH
#define AT_GROUP (AT_BUCKET + 7)
#define AT_AUTO (AT_GROUP + 4)

static inline void *queued_as(unsigned bucket, unsigned archs, unsigned group, const unsigned auto_groups[HP_LA_NAUTO])
{
	uint64_t v = (uint64_t)archs | (uint64_t)bucket << AT_BUCKET | (uint64_t)group << AT_GROUP;

	for (unsigned p = 0; p < HP_LA_NAUTO; p++)
		v |= (uint64_t)auto_groups[p] << (AT_AUTO + 4 * p);
	return (void *)(uintptr_t)v;
}

static inline unsigned task_archs(const struct starpu_task *task)
{
	return (unsigned)((uintptr_t)*astro_sched_task_data(task) & ((1u << STARPU_NARCH) - 1));
}

static inline unsigned task_bucket(const struct starpu_task *task)
{
	return (unsigned)(((uintptr_t)*astro_sched_task_data(task) >> AT_BUCKET) & 127);
}

static inline unsigned task_group(const struct starpu_task *task)
{
	return (unsigned)(((uintptr_t)*astro_sched_task_data(task) >> AT_GROUP) & 15);
}

static inline void task_auto_groups(const struct starpu_task *task, unsigned auto_groups[HP_LA_NAUTO])
{
	for (unsigned p = 0; p < HP_LA_NAUTO; p++)
		auto_groups[p] = (unsigned)(((uint64_t)(uintptr_t)*astro_sched_task_data(task) >> (AT_AUTO + 4 * p)) & 15);
}

static inline unsigned bucket_of(const struct starpu_task *task)
{
	if (task->priority < 0)
		return 0;
	if (task->priority >= STARPU_HETEROPRIO_MAX_PRIO)
		return STARPU_HETEROPRIO_MAX_PRIO - 1;
	return (unsigned)task->priority;
}

static int arch_of(int workerid)
{
	enum starpu_worker_archtype arch = starpu_worker_get_type(workerid);

	return (unsigned)arch < STARPU_NARCH ? (int)arch : -1;
}

static void hp_init_sched(unsigned sched_ctx_id)
{
	struct hp_policy *hp = astro_sched_alloc_policy_data("heteroprio", sizeof(*hp));
	void (*callback)(unsigned) = starpu_sched_ctx_get_sched_policy_callback(sched_ctx_id);

	/* Task priorities are bucket numbers. */
	if (starpu_sched_ctx_get_max_priority(sched_ctx_id) < STARPU_HETEROPRIO_MAX_PRIO - 1)
		starpu_sched_ctx_set_max_priority(sched_ctx_id, STARPU_HETEROPRIO_MAX_PRIO - 1);
	if (starpu_sched_ctx_get_min_priority(sched_ctx_id) > 0)
		starpu_sched_ctx_set_min_priority(sched_ctx_id, 0);

	if (astro_heteroprio_setup_open(sched_ctx_id) == 0)
	{
		if (callback)
			callback(sched_ctx_id);
		else
			astro_heteroprio_setup_default(sched_ctx_id);
	}
	astro_heteroprio_setup_close(sched_ctx_id, &hp->layout);
	/* The automatic mode replaces what the callback set, as StarPU's does (with a warning). */
	if ((hp->autom = hp_auto_open(&hp->layout)) && callback)
		astro_log_error("heteroprio", "automatic mode (STARPU_HETEROPRIO_USE_AUTO_CALIBRATION): it orders the buckets itself, "
				"what the policy's callback set is not used (set the variable to 0 to use it)");
	/* The hooks that measure execution times: installed once a context needs them, so that they cost nothing before. */
	if (hp->autom && !heteroprio_policy.pre_exec_hook)
	{
		__atomic_store_n(&heteroprio_policy.pre_exec_hook, hp_pre_exec, __ATOMIC_RELEASE);
		__atomic_store_n(&heteroprio_policy.post_exec_hook, hp_post_exec, __ATOMIC_RELEASE);
	}

	hp->la = hp_la_open(sched_ctx_id, &hp->layout);
	if (hp->la && hp->autom)
	{
		astro_log_error("heteroprio", "the data locality mode and the automatic mode cannot run together (the locality mode's access orders "
				"rest on fixed buckets): heteroprio runs the automatic mode only; unset STARPU_HETEROPRIO_USE_LA or "
				"STARPU_HETEROPRIO_USE_AUTO_CALIBRATION");
		hp_la_close(hp->la, sched_ctx_id);
		hp->la = NULL;
	}

	for (unsigned b = 0; b < STARPU_HETEROPRIO_MAX_PRIO; b++)
		for (unsigned g = 0; g < HP_LA_MAX_GROUPS; g++)
			starpu_task_list_init(&hp->buckets[b].tasks[g]);
	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		starpu_task_list_init(&hp->w[i].queue);
		hp->w[i].arch = -1;
	}
	astro_sched_lock_init(&hp->lock);
	astro_sched_workers_init(&hp->workers);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, hp);
}

static void hp_deinit_sched(unsigned sched_ctx_id)
{
	struct hp_policy *hp = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	unsigned left = 0;

	for (unsigned b = 0; b < STARPU_HETEROPRIO_MAX_PRIO; b++)
		left += hp->buckets[b].ntasks;
	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
		left += atomic_load(&hp->w[i].nqueued);
	if (left)
		astro_log_error("heteroprio", "%u tasks were still queued at shutdown", left);
	hp_auto_close(hp->autom, &hp->layout);
	hp_la_close(hp->la, sched_ctx_id);
	astro_heteroprio_setup_release(sched_ctx_id);
	STARPU_PTHREAD_MUTEX_DESTROY(&hp->lock);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, NULL);
	free(hp);
}

static void hp_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct hp_policy *hp = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	STARPU_PTHREAD_MUTEX_LOCK(&hp->lock);
	for (unsigned i = 0; i < nworkers; i++)
	{
		int id = workerids[i];
		int arch;

		if (id < 0 || id >= STARPU_NMAXWORKERS || astro_sched_workers_contains(&hp->workers, id) || (arch = arch_of(id)) < 0)
			continue;
		hp->w[id].arch = arch;
		hp->nworkers_of[arch]++;
		if (hp->autom)
			hp_auto_worker_added(hp->autom, id, starpu_timing_now());
		astro_sched_workers_add(&hp->workers, &id, 1);
	}
	STARPU_PTHREAD_MUTEX_UNLOCK(&hp->lock);
}

/* Queues task at the head (given back) or tail of its bucket, counted for the architectures that may take it; hp->lock held. */
static void bucket_put(struct hp_policy *hp, unsigned b, struct starpu_task *task, int at_head)
{
	struct hp_bucket *bucket = &hp->buckets[b];
	int faster = hp->layout.buckets[b].faster_arch;
	unsigned archs = task_archs(task);

	if (at_head)
		starpu_task_list_push_front(&bucket->tasks[task_group(task)], task);
	else
		starpu_task_list_push_back(&bucket->tasks[task_group(task)], task);
	bucket->ntasks++;
	if (faster >= 0 && !(archs & (1u << faster)))
		bucket->nfor_slower_only++;
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		if (archs & (1u << arch))
			atomic_fetch_add(&hp->in_buckets[arch], 1);
}

/* Unlinks task from bucket and uncounts it; hp->lock held. */
static void bucket_erase(struct hp_policy *hp, unsigned b, struct starpu_task *task)
{
	struct hp_bucket *bucket = &hp->buckets[b];
	int faster = hp->layout.buckets[b].faster_arch;
	unsigned archs = task_archs(task);

	starpu_task_list_erase(&bucket->tasks[task_group(task)], task);
	bucket->ntasks--;
	if (faster >= 0 && !(archs & (1u << faster)))
		bucket->nfor_slower_only--;
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		if (archs & (1u << arch))
			atomic_fetch_sub(&hp->in_buckets[arch], 1);
}

static void hp_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct hp_policy *hp = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	STARPU_PTHREAD_MUTEX_LOCK(&hp->lock);
	for (unsigned i = 0; i < nworkers; i++)
	{
		int id = workerids[i];
		struct hp_worker *w;
		struct starpu_task *task;

		if (!astro_sched_workers_contains(&hp->workers, id))
			continue;
		w = &hp->w[id];
		astro_sched_workers_remove(&hp->workers, &id, 1);
		/* What it took and did not run goes back to the buckets, in order. */
		while ((task = starpu_task_list_pop_back(&w->queue)))
		{
			atomic_fetch_sub(&w->nqueued, 1);
			atomic_fetch_sub(&hp->in_queues[w->arch], 1);
			bucket_put(hp, task_bucket(task), task, 1);
		}
		hp->nworkers_of[w->arch]--;
		w->arch = -1;
	}
	STARPU_PTHREAD_MUTEX_UNLOCK(&hp->lock);
}

/* The architectures of archs with a worker in the context that may run task; hp->lock held. */
static unsigned archs_that_run(struct hp_policy *hp, struct starpu_task *task, unsigned archs)
{
	unsigned found = 0;

	for (unsigned i = 0; i < hp->workers.count && (archs & ~found); i++)
	{
		int id = hp->workers.ids[i];
		unsigned bit = 1u << hp->w[id].arch;

		if ((archs & bit) && !(found & bit) && astro_sched_task_allowed_on(task, id))
			found |= bit;
	}
	return found;
}

/* Claims a hungry worker of architecture arch that may run task; -1 if none. */
static int claim_of_arch(struct hp_policy *hp, struct starpu_task *task, int arch)
{
	struct astro_sched_workers *ws = &hp->workers;

	if (!atomic_load(&ws->nhungry))
		return -1;
	for (unsigned i = 0; i < ws->count; i++)
	{
		int id = ws->ids[i];

		if (hp->w[id].arch == arch && astro_sched_workers_is_hungry(ws, id) && astro_sched_task_allowed_on(task, id)
		    && astro_sched_workers_claim(ws, id))
			return id;
	}
	return -1;
}

/* Counts again the tasks of bucket b no worker of its fastest architecture can run, after the automatic mode changed it; hp->lock held. */
static void recount_for_slower_only(struct hp_policy *hp, unsigned b)
{
	struct hp_bucket *bucket = &hp->buckets[b];
	int faster = hp->layout.buckets[b].faster_arch;

	bucket->nfor_slower_only = 0;
	if (faster < 0)
		return;
	for (unsigned g = 0; g < HP_LA_MAX_GROUPS; g++)
		for (struct starpu_task *t = starpu_task_list_begin(&bucket->tasks[g]); t; t = starpu_task_list_next(t))
			if (!(task_archs(t) & (1u << faster)))
				bucket->nfor_slower_only++;
}

/* The bucket the automatic mode gives task (it may change the layout); -1 when none. hp->lock held. */
static int auto_bucket(struct hp_policy *hp, struct starpu_task *task)
{
	int faster[STARPU_HETEROPRIO_MAX_PRIO];
	int b;

	for (unsigned i = 0; i < STARPU_HETEROPRIO_MAX_PRIO; i++)
		faster[i] = hp->layout.buckets[i].faster_arch;
	b = hp_auto_push(hp->autom, &hp->layout, task);
	for (unsigned i = 0; i < STARPU_HETEROPRIO_MAX_PRIO; i++)
		if (faster[i] != hp->layout.buckets[i].faster_arch && hp->buckets[i].ntasks)
			recount_for_slower_only(hp, i);
	return b;
}

static int hp_push_task(struct starpu_task *task)
{
	struct hp_policy *hp = starpu_sched_ctx_get_policy_data(astro_sched_task_ctx(task));
	int wake[STARPU_NARCH];
	unsigned auto_groups[HP_LA_NAUTO] = { 0 };
	unsigned archs, b, group = 0;

	/* Where the task's data are, before the lock. */
	if (hp->la)
		group = hp_la_push_group(hp->la, task, auto_groups);
	STARPU_PTHREAD_MUTEX_LOCK(&hp->lock);
	if (hp->autom)
	{
		int ab = auto_bucket(hp, task);

		if (ab < 0)
		{
			STARPU_PTHREAD_MUTEX_UNLOCK(&hp->lock);
			return -EINVAL;
		}
		b = (unsigned)ab;
	}
	else
		b = bucket_of(task);
	archs = archs_that_run(hp, task, hp->layout.buckets[b].archs);
	if (!archs)
	{
		int first = !hp->reported[b];

		hp->reported[b] = 1;
		STARPU_PTHREAD_MUTEX_UNLOCK(&hp->lock);
		if (first)
			astro_log_error("heteroprio", "task '%s' has priority %d: bucket %u, which no worker of the context that can run it looks at; "
					"map the bucket for those workers' architecture (starpu_heteroprio_set_mapping in the policy's callback)",
					starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)", task->priority, b);
		return -EINVAL;
	}
	*astro_sched_task_data(task) = queued_as(b, archs, group, auto_groups);
	/* Before the task is visible: once queued, a worker may run and free it. */
	starpu_push_task_end(task);
	bucket_put(hp, b, task, 0);
	for (int arch = 0; arch < STARPU_NARCH; arch++)
		wake[arch] = archs & (1u << arch) ? claim_of_arch(hp, task, arch) : -1;
	STARPU_PTHREAD_MUTEX_UNLOCK(&hp->lock);
	astro_sched_counters_count_push(&hp_counters);
	for (int arch = 0; arch < STARPU_NARCH; arch++)
		astro_sched_wake(wake[arch], 0);
	return 0;
}

/*
 * Whether a worker of architecture arch may take any task of bucket: the
 * bucket's fastest workers always may; a slower one only while the bucket
 * holds at least its slow factor times as many tasks as there are fastest
 * workers. Otherwise it takes only the tasks no fastest worker can run.
 */
static int slow_factor_allows(struct hp_policy *hp, unsigned b, int arch)
{
	const struct astro_heteroprio_bucket_setup *cfg = &hp->layout.buckets[b];
	int faster = cfg->faster_arch;

	if (faster < 0 || faster == arch)
		return 1;
	return (float)hp->buckets[b].ntasks / (float)hp->nworkers_of[faster] >= cfg->slow_factor[arch];
}

/* Moves up to want tasks workerid may take from the list of group in bucket b into its queue; what is left to take. hp->lock held. */
static unsigned take_from_list(struct hp_policy *hp, int workerid, unsigned b, unsigned group, unsigned want)
{
	struct hp_worker *w = &hp->w[workerid];
	unsigned bit = 1u << w->arch;
	struct hp_bucket *bucket = &hp->buckets[b];
	struct starpu_task *task = starpu_task_list_begin(&bucket->tasks[group]);
	int faster = hp->layout.buckets[b].faster_arch;
	unsigned faster_bit = faster >= 0 ? 1u << faster : 0;

	while (want && task)
	{
		struct starpu_task *next = starpu_task_list_next(task);
		int any = slow_factor_allows(hp, b, w->arch);

		if (!any && !bucket->nfor_slower_only)
			break;
		if ((task_archs(task) & bit) && (any || !(task_archs(task) & faster_bit)) && astro_sched_task_allowed_on(task, workerid))
		{
			bucket_erase(hp, b, task);
			starpu_task_list_push_back(&w->queue, task);
			atomic_fetch_add(&w->nqueued, 1);
			atomic_fetch_add(&hp->in_queues[w->arch], 1);
			want--;
		}
		task = next;
	}
	return want;
}

/*
 * Moves up to want tasks workerid may take from its buckets, in its order,
 * into its queue: in the locality mode, one task, in its group's access
 * order. hp->lock held.
 */
static void take_from_buckets(struct hp_policy *hp, int workerid, unsigned want)
{
	int arch = hp->w[workerid].arch;

	if (hp->la)
	{
		unsigned n;
		const struct hp_la_access *order = hp_la_order(hp->la, workerid, &n);

		for (unsigned i = 0; want && i < n; i++)
			if (order[i].prio_idx < hp->layout.nb_prios[arch])
				want = take_from_list(hp, workerid, hp->layout.mapping[arch][order[i].prio_idx], order[i].group, want ? 1 : 0);
		return;
	}
	for (unsigned i = 0; want && i < hp->layout.nb_prios[arch]; i++)
		want = take_from_list(hp, workerid, hp->layout.mapping[arch][i], 0, want);
}

/* Takes a task from the queue of another worker of thief's architecture, the one it took last; hp->lock held. */
static struct starpu_task *steal(struct hp_policy *hp, int thief)
{
	struct astro_sched_workers *ws = &hp->workers;
	unsigned count = ws->count;
	unsigned position = (unsigned)ws->position[thief];

	/* From the worker after the thief, around. */
	for (unsigned step = 1; step < count; step++)
	{
		int victim = ws->ids[(position + step) % count];
		struct hp_worker *v = &hp->w[victim];

		if (v->arch != hp->w[thief].arch || !atomic_load_explicit(&v->nqueued, memory_order_relaxed))
			continue;
		for (struct starpu_task *task = starpu_task_list_back(&v->queue); task; task = task->prev)
			if (astro_sched_task_allowed_on(task, thief))
			{
				starpu_task_list_erase(&v->queue, task);
				atomic_fetch_sub(&v->nqueued, 1);
				atomic_fetch_sub(&hp->in_queues[v->arch], 1);
				return task;
			}
	}
	return NULL;
}

static struct starpu_task *hp_take(void *policy_data, int workerid)
{
	struct hp_policy *hp = policy_data;
	struct hp_worker *w = &hp->w[workerid];
	struct starpu_task *task = NULL;
	int arch = w->arch;
	int stolen = 0;
	int thief = -1;

	if (arch < 0 || (!atomic_load(&w->nqueued) && !atomic_load(&hp->in_buckets[arch]) && !atomic_load(&hp->in_queues[arch])))
		return NULL;
	STARPU_PTHREAD_MUTEX_LOCK(&hp->lock);
	unsigned available = atomic_load_explicit(&hp->in_buckets[arch], memory_order_relaxed);
	if (available)
	{
		unsigned queued = atomic_load_explicit(&w->nqueued, memory_order_relaxed);
		unsigned want = queued < STARPU_HETEROPRIO_MAX_PREFETCH ? STARPU_HETEROPRIO_MAX_PREFETCH - queued : 0;

		if (want > available)
			want = available;
		/* Fewer tasks than workers, or the locality mode (no prefetch): one each, so that none waits behind another's queue. */
		if (available < hp->workers.count || hp->la)
			want = queued ? 0 : 1;
		take_from_buckets(hp, workerid, want);
	}
	if (atomic_load_explicit(&w->nqueued, memory_order_relaxed))
	{
		task = starpu_task_list_pop_front(&w->queue);
		atomic_fetch_sub(&w->nqueued, 1);
		atomic_fetch_sub(&hp->in_queues[arch], 1);
		/* What stays queued here while this worker runs task: an idle worker of its kind may steal it. */
		if (atomic_load_explicit(&w->nqueued, memory_order_relaxed))
			thief = claim_of_arch(hp, starpu_task_list_front(&w->queue), arch);
	}
	else if (atomic_load_explicit(&hp->in_queues[arch], memory_order_relaxed))
	{
		task = steal(hp, workerid);
		stolen = task != NULL;
	}
	STARPU_PTHREAD_MUTEX_UNLOCK(&hp->lock);
	astro_sched_wake(thief, 0);
	if (task)
	{
		if (hp->la)
		{
			unsigned auto_groups[HP_LA_NAUTO];

			task_auto_groups(task, auto_groups);
			hp_la_taken(hp->la, task, auto_groups);
		}
		*astro_sched_task_data(task) = NULL;
		astro_sched_counters_count_pop(&hp_counters, stolen);
	}
	return task;
}

static struct starpu_task *hp_pop_task(unsigned sched_ctx_id)
{
	struct hp_policy *hp = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	return astro_sched_pop_task(&hp->workers, starpu_worker_get_id(), hp, hp_take);
}

/* The automatic mode measures the time each worker spends running tasks and between them. */
static void hp_pre_exec(struct starpu_task *task, unsigned sched_ctx_id)
{
	struct hp_policy *hp = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	int workerid = starpu_worker_get_id();

	(void)task;
	if (!hp || !hp->autom || workerid < 0 || hp->w[workerid].arch < 0)
		return;
	STARPU_PTHREAD_MUTEX_LOCK(&hp->lock);
	hp_auto_task_started(hp->autom, workerid, hp->w[workerid].arch, starpu_timing_now());
	STARPU_PTHREAD_MUTEX_UNLOCK(&hp->lock);
}

static void hp_post_exec(struct starpu_task *task, unsigned sched_ctx_id)
{
	struct hp_policy *hp = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	int workerid = starpu_worker_get_id();

	if (!hp || !hp->autom || workerid < 0 || hp->w[workerid].arch < 0)
		return;
	STARPU_PTHREAD_MUTEX_LOCK(&hp->lock);
	hp_auto_task_ended(hp->autom, &hp->layout, task, workerid, hp->w[workerid].arch, starpu_timing_now());
	STARPU_PTHREAD_MUTEX_UNLOCK(&hp->lock);
}

static struct starpu_sched_policy heteroprio_policy =
{
	.init_sched = hp_init_sched,
	.deinit_sched = hp_deinit_sched,
	.add_workers = hp_add_workers,
	.remove_workers = hp_remove_workers,
	.push_task = hp_push_task,
	.pop_task = hp_pop_task,
	.policy_name = "heteroprio",
	.policy_description = "heteroprio: priority buckets looked at in a different order by each kind of worker, with slow factors",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	astro_sched_counters_register(&hp_counters, "sched_heteroprio", "heteroprio", 1);
	return astro_sched_policy_register(&heteroprio_policy);
}

ASTRO_PLUGIN_DEFINE(sched_heteroprio, ASTRO_PLUGIN_SCHED, "heteroprio: per-architecture priority buckets with slow factors", init, NULL);
