/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scheduling contexts' table (starpu_sched_ctx.h) as every part of the
 * scheduling room reads it: the contexts, the calling thread's, their
 * worker collections, their queries, priorities and ready counts, and the
 * order a worker in several contexts serves them in. Creating, changing and
 * deleting contexts is ctx.c's.
 */
#include "sched/sched.h"
#include <astrolabe/counters.h>

struct _astro_sched_ctx _astro_ctxs[STARPU_NMAX_SCHED_CTXS];
_ASTRO_TLS unsigned _astro_ctx_current;
/* The thread chose its context (starpu_sched_ctx_set_context): else starpu_sched_ctx_get_context() says none. */
static _ASTRO_TLS bool ctx_chosen;
/* The policy data of "no context" (STARPU_NMAX_SCHED_CTXS, what starpu_sched_ctx_get_context() returns
 * when none was chosen): a slot of its own, as StarPU's. */
static void *no_ctx_policy_data;

/* ------------------------------------------------------- the collection */

static unsigned list_has_next(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it)
{
	return (unsigned)it->cursor < workers->nworkers;
}

static int list_get_next(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it)
{
	return workers->workerids[it->cursor++];
}

/* A worker id a collection can hold (programs add and remove ids themselves). */
static bool collection_id_ok(int worker, const char *fn)
{
	if (worker >= 0 && worker < STARPU_NMAXWORKERS)
		return true;
	_astro_error("%s: no worker %d: give an id below STARPU_NMAXWORKERS (%d)", fn, worker, STARPU_NMAXWORKERS);
	return false;
}

static int list_add(struct starpu_worker_collection *workers, int worker)
{
	if (!collection_id_ok(worker, "starpu_worker_collection add") || workers->present[worker])
		return -1;
	workers->present[worker] = 1;
	workers->is_unblocked[worker] = 1;
	workers->workerids[workers->nworkers++] = worker;
	return worker;
}

static int list_remove(struct starpu_worker_collection *workers, int worker)
{
	if (!collection_id_ok(worker, "starpu_worker_collection remove") || !workers->present[worker])
		return -1;
	unsigned j = 0;
	for (unsigned i = 0; i < workers->nworkers; i++)
		if (workers->workerids[i] != worker)
			workers->workerids[j++] = workers->workerids[i];
	workers->nworkers = j;
	workers->present[worker] = 0;
	return worker;
}

static void list_init(struct starpu_worker_collection *workers)
{
	workers->workerids = calloc(STARPU_NMAXWORKERS, sizeof(int));
	workers->nworkers = 0;
	memset(workers->present, 0, sizeof(workers->present));
}

static void list_deinit(struct starpu_worker_collection *workers)
{
	free(workers->workerids);
	workers->workerids = NULL;
	workers->nworkers = 0;
}

static void list_init_iterator(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it)
{
	(void)workers;
	it->cursor = 0;
	it->possibly_parallel = -1;
}

static void list_init_iterator_for_parallel_tasks(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it, struct starpu_task *task)
{
	(void)task;
	list_init_iterator(workers, it);
}

#define LIST_COLLECTION                                                                                          \
	{                                                                                                        \
		.type = STARPU_WORKER_LIST, .has_next = list_has_next, .get_next = list_get_next, .add = list_add, \
		.remove = list_remove, .init = list_init, .deinit = list_deinit,                                  \
		.init_iterator = list_init_iterator,                                                               \
		.init_iterator_for_parallel_tasks = list_init_iterator_for_parallel_tasks,                         \
	}

/* The list collection as programs find it (starpu_worker.h), to copy its methods from. */
struct starpu_worker_collection starpu_worker_list = LIST_COLLECTION;

void _astro_ctx_collection_setup(struct starpu_worker_collection *c)
{
	*c = (struct starpu_worker_collection)LIST_COLLECTION;
	c->init(c);
}

int _astro_check_workers(const int *ids, int n, const char *fn)
{
	if (n < 0 || (n > 0 && !ids) || n > STARPU_NMAXWORKERS) {
		_astro_error("%s: %d workers%s: give an array of worker ids and its length (at most %d)", fn, n,
			     ids ? "" : " and no array", STARPU_NMAXWORKERS);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++)
		if (ids[i] < 0 || (unsigned)ids[i] >= _astro_rt.nworkers) {
			_astro_error("%s: worker id %d does not exist: ids go from 0 to %u (starpu_worker_get_count() - 1)",
				     fn, ids[i], _astro_rt.nworkers - 1);
			return -EINVAL;
		}
	return 0;
}

void _astro_ctx_table_reset(void)
{
	_astro_ctx_current = 0;
	ctx_chosen = false;
	no_ctx_policy_data = NULL;
}

/* ---------------------------------------------------------- look-ups */

/* STARPU_NMAX_SCHED_CTXS (an unset task->sched_ctx) stands for the global context. */
struct _astro_sched_ctx *_astro_ctx_get(unsigned id, const char *fn)
{
	if (id == STARPU_NMAX_SCHED_CTXS)
		id = 0;
	if (id < STARPU_NMAX_SCHED_CTXS && __atomic_load_n(&_astro_ctxs[id].state, __ATOMIC_ACQUIRE) != _ASTRO_CTX_FREE)
		return &_astro_ctxs[id];
	_astro_error("%s: scheduling context %u does not exist (deleted or never created): %s", fn, id, _ASTRO_CTX_FIX);
	return NULL;
}

/* ------------------------------------------------------ the thread's */

void starpu_sched_ctx_set_context(unsigned *sched_ctx_id)
{
	if (!sched_ctx_id) {
		_astro_error("starpu_sched_ctx_set_context: NULL pointer: pass the address of a context id");
		return;
	}
	if (*sched_ctx_id == STARPU_NMAX_SCHED_CTXS) {
		_astro_ctx_current = 0;
		ctx_chosen = false;
		return;
	}
	if (_astro_ctx_get(*sched_ctx_id, __func__)) {
		_astro_ctx_current = *sched_ctx_id;
		ctx_chosen = true;
	}
}

unsigned starpu_sched_ctx_get_context(void)
{
	/* As StarPU: STARPU_NMAX_SCHED_CTXS until the thread chose one (its tasks go to the global context). */
	return ctx_chosen ? _astro_ctx_current : STARPU_NMAX_SCHED_CTXS;
}

/* ------------------------------------------------------------ queries */

void *starpu_sched_ctx_get_policy_data(unsigned sched_ctx_id)
{
	/* On the task path of every policy: the global context first, which lives as long as the workers. */
	if (STARPU_LIKELY(sched_ctx_id == 0))
		return _astro_ctxs[0].policy_data;
	if (STARPU_LIKELY(sched_ctx_id < STARPU_NMAX_SCHED_CTXS &&
			  __atomic_load_n(&_astro_ctxs[sched_ctx_id].state, __ATOMIC_RELAXED) != _ASTRO_CTX_FREE))
		return _astro_ctxs[sched_ctx_id].policy_data;
	if (sched_ctx_id == STARPU_NMAX_SCHED_CTXS)
		return __atomic_load_n(&no_ctx_policy_data, __ATOMIC_ACQUIRE);
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? c->policy_data : NULL;
}

void starpu_sched_ctx_set_policy_data(unsigned sched_ctx_id, void *policy_data)
{
	if (sched_ctx_id == STARPU_NMAX_SCHED_CTXS) {
		__atomic_store_n(&no_ctx_policy_data, policy_data, __ATOMIC_RELEASE);
		return;
	}
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (c)
		c->policy_data = policy_data;
}

void *starpu_sched_ctx_get_user_data(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? c->user_data : NULL;
}

void starpu_sched_ctx_set_user_data(unsigned sched_ctx_id, void *user_data)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (c)
		c->user_data = user_data;
}

void (*starpu_sched_ctx_get_sched_policy_init(unsigned sched_ctx_id))(unsigned)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? c->policy_init : NULL;
}

void (*starpu_sched_ctx_get_sched_policy_callback(unsigned sched_ctx_id))(unsigned)
{
	return starpu_sched_ctx_get_sched_policy_init(sched_ctx_id);
}

struct starpu_worker_collection *starpu_sched_ctx_get_worker_collection(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? &c->collection : NULL;
}

struct starpu_worker_collection *starpu_sched_ctx_create_worker_collection(unsigned sched_ctx_id, enum starpu_worker_collection_type type)
{
	(void)type; /* the kernel keeps a list for every context; a tree orders the same workers */
	return starpu_sched_ctx_get_worker_collection(sched_ctx_id);
}

void starpu_sched_ctx_delete_worker_collection(unsigned sched_ctx_id)
{
	/* The kernel's: freed with the context. */
	(void)_astro_ctx_get(sched_ctx_id, __func__);
}

struct starpu_sched_policy *starpu_sched_ctx_get_sched_policy(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	/* A nested context without a policy has none (its master runs its tasks). */
	return c && !c->no_scheduler ? c->policy : NULL;
}

struct starpu_sched_policy *starpu_sched_get_sched_policy_in_ctx(unsigned sched_ctx_id)
{
	return starpu_sched_ctx_get_sched_policy(sched_ctx_id);
}

struct starpu_sched_policy *starpu_sched_get_sched_policy(void)
{
	return _astro_ctxs[0].policy;
}

const char *starpu_sched_ctx_get_sched_policy_name(unsigned sched_ctx_id)
{
	struct starpu_sched_policy *p = starpu_sched_ctx_get_sched_policy(sched_ctx_id);
	return p ? p->policy_name : NULL;
}

const char *starpu_sched_ctx_get_name(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return NULL;
	return _astro_ctx_id(c) == 0 ? "global" : c->name;
}

int starpu_sched_ctx_get_sub_ctxs(unsigned sched_ctx, int *ctxs)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx, __func__);
	if (!c)
		return -EINVAL;
	if (c->nsub_ctxs && !ctxs) {
		_astro_error("%s: context %u has %d sub-contexts and ctxs is NULL: give an array of STARPU_NMAX_SCHED_CTXS ints",
			     __func__, _astro_ctx_id(c), c->nsub_ctxs);
		return -EINVAL;
	}
	for (int i = 0; i < c->nsub_ctxs; i++)
		ctxs[i] = c->sub_ctxs[i];
	return c->nsub_ctxs;
}

int starpu_sched_ctx_get_nsms(unsigned sched_ctx)
{
	/* No context holds a share of a GPU's multiprocessors (STARPU_SCHED_CTX_CUDA_NSMS is refused). */
	return _astro_ctx_get(sched_ctx, __func__) ? 0 : -EINVAL;
}

int starpu_sched_ctx_get_stream_worker(unsigned sub_ctx)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sub_ctx, __func__);
	if (!c)
		return -1;
	/* No lock, as starpu_sched_ctx_get_workers_list(): policies call these from their hooks. */
	return c->collection.nworkers ? c->collection.workerids[0] : -1;
}

void starpu_sched_ctx_get_sms_interval(int stream_workerid, int *start, int *end)
{
	_astro_error("%s: worker %d drives no share of a GPU's multiprocessors (STARPU_SCHED_CTX_CUDA_NSMS is not supported "
		     "here): do not ask for its interval", __func__, stream_workerid);
	if (start)
		*start = 0;
	if (end)
		*end = 0;
}

unsigned starpu_sched_ctx_get_nworkers(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? c->collection.nworkers : 0;
}

unsigned starpu_sched_ctx_get_workers_list(unsigned sched_ctx_id, int **workerids)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	unsigned n = 0;
	*workerids = malloc(STARPU_NMAXWORKERS * sizeof(int));
	if (!c)
		return 0;
	/* No lock: policies call it from their hooks, which run under the context's changes. */
	n = c->collection.nworkers;
	memcpy(*workerids, c->collection.workerids, n * sizeof(int));
	return n;
}

unsigned starpu_sched_ctx_get_workers_list_raw(unsigned sched_ctx_id, int **workerids)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	*workerids = c ? c->collection.workerids : NULL;
	return c ? c->collection.nworkers : 0;
}

unsigned starpu_sched_ctx_contains_worker(int workerid, unsigned sched_ctx_id)
{
	if (sched_ctx_id == STARPU_NMAX_SCHED_CTXS)
		sched_ctx_id = 0;
	if (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers || sched_ctx_id >= STARPU_NMAX_SCHED_CTXS)
		return 0;
	if (sched_ctx_id == 0)
		return _astro_ctxs[0].state != _ASTRO_CTX_FREE;
	return (__atomic_load_n(&_astro_rt.workers[workerid]->ctx_mask, __ATOMIC_RELAXED) >> sched_ctx_id) & 1;
}

unsigned starpu_sched_ctx_contains_type_of_worker(enum starpu_worker_archtype arch, unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return 0;
	for (unsigned i = 0; i < c->collection.nworkers; i++)
		if (_astro_rt.workers[c->collection.workerids[i]]->arch == arch)
			return 1;
	return 0;
}

unsigned starpu_sched_ctx_get_nshared_workers(unsigned sched_ctx_id, unsigned sched_ctx_id2)
{
	unsigned n = 0;
	for (unsigned w = 0; w < _astro_rt.nworkers; w++)
		n += starpu_sched_ctx_contains_worker((int)w, sched_ctx_id) && starpu_sched_ctx_contains_worker((int)w, sched_ctx_id2);
	return n;
}

unsigned starpu_sched_ctx_worker_get_id(unsigned sched_ctx_id)
{
	int w = _astro_worker_id();
	return w >= 0 && starpu_sched_ctx_contains_worker(w, sched_ctx_id) ? (unsigned)w : (unsigned)-1;
}

unsigned starpu_sched_ctx_overlapping_ctxs_on_worker(int workerid)
{
	if (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers)
		return 0;
	/* Every worker is in the global context: any other one overlaps it. */
	return __atomic_load_n(&_astro_rt.workers[workerid]->ctx_mask, __ATOMIC_RELAXED) != 0;
}

unsigned starpu_sched_ctx_get_ctx_for_task(struct starpu_task *task)
{
	return task && task->sched_ctx < STARPU_NMAX_SCHED_CTXS ? task->sched_ctx : _astro_ctx_current;
}

void starpu_sched_ctx_display_workers(unsigned sched_ctx_id, FILE *f)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c || !f)
		return;
	fprintf(f, "[sched_ctx %u]: %u worker%s\n", _astro_ctx_id(c), c->collection.nworkers, c->collection.nworkers == 1 ? "" : "s");
	for (unsigned i = 0; i < c->collection.nworkers; i++)
		fprintf(f, "\t%s\n", _astro_rt.workers[c->collection.workerids[i]]->name);
}

unsigned starpu_worker_get_sched_ctx_list(int worker, unsigned **sched_ctx)
{
	*sched_ctx = malloc(STARPU_NMAX_SCHED_CTXS * sizeof(unsigned));
	if (worker < 0 || (unsigned)worker >= _astro_rt.nworkers)
		return 0;
	unsigned n = 0;
	(*sched_ctx)[n++] = 0;
	uint32_t mask = __atomic_load_n(&_astro_rt.workers[worker]->ctx_mask, __ATOMIC_RELAXED);
	for (unsigned i = 1; i < STARPU_NMAX_SCHED_CTXS; i++)
		if (mask & (1u << i))
			(*sched_ctx)[n++] = i;
	return n;
}

/* ---------------------------------------------------------- priorities */

int starpu_sched_ctx_get_min_priority(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? c->min_prio : 0;
}

int starpu_sched_ctx_get_max_priority(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? c->max_prio : 0;
}

int starpu_sched_ctx_min_priority_is_set(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? c->min_prio_set : 0;
}

int starpu_sched_ctx_max_priority_is_set(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? c->max_prio_set : 0;
}

int starpu_sched_ctx_set_min_priority(unsigned sched_ctx_id, int min_prio)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return -EINVAL;
	c->min_prio = min_prio;
	c->min_prio_set = true;
	return 0;
}

int starpu_sched_ctx_set_max_priority(unsigned sched_ctx_id, int max_prio)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return -EINVAL;
	c->max_prio = max_prio;
	c->max_prio_set = true;
	return 0;
}

/* The calling thread's context, as StarPU's. */
int starpu_sched_get_min_priority(void) { return _astro_ctxs[_astro_ctx_current].min_prio; }
int starpu_sched_get_max_priority(void) { return _astro_ctxs[_astro_ctx_current].max_prio; }
int starpu_sched_set_min_priority(int min_prio) { return starpu_sched_ctx_set_min_priority(_astro_ctx_current, min_prio); }
int starpu_sched_set_max_priority(int max_prio) { return starpu_sched_ctx_set_max_priority(_astro_ctx_current, max_prio); }

/* ------------------------------------------------------ ready tasks */

int starpu_sched_ctx_get_nready_tasks(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return 0;
	if (_astro_ctx_id(c) != 0)
		return (int)__atomic_load_n(&c->nready, __ATOMIC_RELAXED);
	/* The global context's are not counted apart (its task path stays as it was): all but the others'. */
	long n = _astro_nready();
	for (unsigned id = 1; id < STARPU_NMAX_SCHED_CTXS; id++)
		n -= __atomic_load_n(&_astro_ctxs[id].nready, __ATOMIC_RELAXED);
	return n > 0 ? (int)n : 0;
}

double starpu_sched_ctx_get_nready_flops(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return 0.0;
	if (_astro_ctx_id(c) == 0) {
		_astro_error("%s: the global scheduling context does not count the flops of its ready tasks (its task path "
			     "stays light): ask a context you created", __func__);
		return 0.0;
	}
	return astro_counter_load_double(&c->nready_flops);
}

/* ------------------------------------- the order a worker serves them in */

/* 0, or -EINVAL said: workerid exists and context id exists. */
static int check_worker_ctx(int workerid, unsigned id, const char *fn)
{
	if (!_astro_ctx_get(id, fn))
		return -EINVAL;
	if (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers) {
		_astro_error("%s: worker id %d does not exist: ids go from 0 to %u (starpu_worker_get_count() - 1)", fn, workerid,
			     _astro_rt.nworkers - 1);
		return -EINVAL;
	}
	return 0;
}

/* A policy says its workers take tasks from lists they share. Every worker here asks the pop_task of
 * each context it belongs to, whatever lists the policy keeps: nothing more to arrange. */
void starpu_sched_ctx_worker_shares_tasks_lists(int workerid, int sched_ctx_id)
{
	(void)check_worker_ctx(workerid, (unsigned)sched_ctx_id, __func__);
}

void starpu_sched_ctx_set_priority(int *workers, int nworkers, unsigned sched_ctx_id, unsigned priority)
{
	if (nworkers == -1)
		return; /* StarPU's "no worker" */
	if (_astro_check_workers(workers, nworkers, __func__) != 0 || !_astro_ctx_get(sched_ctx_id, __func__))
		return;
	unsigned id = sched_ctx_id == STARPU_NMAX_SCHED_CTXS ? 0 : sched_ctx_id;
	for (int i = 0; i < nworkers; i++)
		__atomic_store_n(&_astro_rt.workers[workers[i]]->ctx_priority[id], priority, __ATOMIC_RELAXED);
}

unsigned starpu_sched_ctx_get_priority(int worker, unsigned sched_ctx_id)
{
	if (check_worker_ctx(worker, sched_ctx_id, __func__) != 0)
		return 0;
	unsigned id = sched_ctx_id == STARPU_NMAX_SCHED_CTXS ? 0 : sched_ctx_id;
	return __atomic_load_n(&_astro_rt.workers[worker]->ctx_priority[id], __ATOMIC_RELAXED);
}

static void list_counter_add(unsigned sched_ctx_id, int workerid, int delta, bool reset, const char *fn)
{
	if (check_worker_ctx(workerid, sched_ctx_id, fn) != 0)
		return;
	unsigned id = sched_ctx_id == STARPU_NMAX_SCHED_CTXS ? 0 : sched_ctx_id;
	int *n = &_astro_rt.workers[workerid]->ctx_ntasks[id];
	if (reset) {
		__atomic_store_n(n, 0, __ATOMIC_RELAXED);
		return;
	}
	/* Never below 0: a decrement without its increment does not hide the next task. */
	int v = __atomic_load_n(n, __ATOMIC_RELAXED);
	while (v + delta >= 0 && !__atomic_compare_exchange_n(n, &v, v + delta, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void starpu_sched_ctx_list_task_counters_increment(unsigned sched_ctx_id, int workerid)
{
	list_counter_add(sched_ctx_id, workerid, 1, false, __func__);
}

void starpu_sched_ctx_list_task_counters_decrement(unsigned sched_ctx_id, int workerid)
{
	list_counter_add(sched_ctx_id, workerid, -1, false, __func__);
}

void starpu_sched_ctx_list_task_counters_reset(unsigned sched_ctx_id, int workerid)
{
	list_counter_add(sched_ctx_id, workerid, 0, true, __func__);
}

/* Each worker of the context that can run task (every one without a task) counts it. */
static void list_counters_all(struct starpu_task *task, unsigned sched_ctx_id, int delta, bool reset, const char *fn)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, fn);
	if (!c)
		return;
	/* Called from the context's policy hooks, under its lock. */
	for (unsigned i = 0; i < c->collection.nworkers; i++) {
		int w = c->collection.workerids[i];
		if (!task || !task->cl || _astro_worker_impl_for(w, task) >= 0)
			list_counter_add(_astro_ctx_id(c), w, delta, reset, fn);
	}
}

void starpu_sched_ctx_list_task_counters_increment_all_ctx_locked(struct starpu_task *task, unsigned sched_ctx_id)
{
	list_counters_all(task, sched_ctx_id, 1, false, __func__);
}

void starpu_sched_ctx_list_task_counters_decrement_all_ctx_locked(struct starpu_task *task, unsigned sched_ctx_id)
{
	list_counters_all(task, sched_ctx_id, -1, false, __func__);
}

void starpu_sched_ctx_list_task_counters_reset_all(struct starpu_task *task, unsigned sched_ctx_id)
{
	list_counters_all(task, sched_ctx_id, 0, true, __func__);
}
