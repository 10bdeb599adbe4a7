/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Nested scheduling contexts (STARPU_SCHED_CTX_NESTED): a context made of
 * some of its parent's workers. Its master, its lowest worker, hands every
 * task it takes from the parent down to it: a nested context with a policy
 * schedules them among its workers; one created without a policy has no
 * scheduler and its master runs them, with the cores of the context at its
 * disposal (starpu_sched_ctx_get_available_cpuids): unless created with
 * STARPU_SCHED_CTX_AWAKE_WORKERS, its other workers are kept for it: whatever
 * the parent's policy gives them goes to the master too. This is what
 * StarPU's parallel workers are made of (starpu_parallel_worker.h).
 *
 * All of it changes under the contexts' lock (sched_ctx.c); the workers read
 * their hands_down word, which only a worker that belongs to a context
 * besides the global one looks at (ctx_pop in sched.c): the global context's
 * path is unchanged.
 */
#include "sched/sched.h"
#include <hwloc.h>

/* ------------------------------------------------- the master's policy */

static int master_push(struct starpu_task *task)
{
	int master = __atomic_load_n(&_astro_ctxs[task->sched_ctx].master, __ATOMIC_ACQUIRE);
	if (master < 0)
		return -ENODEV;
	_astro_push_local(_astro_rt.workers[master], task, 1);
	return 0;
}

static struct starpu_task *master_pop(unsigned sched_ctx_id)
{
	(void)sched_ctx_id; /* everything went to the master's own queue */
	return NULL;
}

struct starpu_sched_policy _astro_master_policy = {
	.push_task = master_push,
	.pop_task = master_pop,
	.policy_name = "(none)",
	.policy_description = "a nested context without a policy: its master runs its tasks",
	.worker_type = STARPU_WORKER_LIST,
};

/* ------------------------------------------------ masters, kept workers */

void _astro_ctx_nesting_update(void)
{
	uint32_t master_of[STARPU_NMAXWORKERS] = { 0 }, hands_down[STARPU_NMAXWORKERS] = { 0 };
	for (unsigned id = 1; id < STARPU_NMAX_SCHED_CTXS; id++) {
		struct _astro_sched_ctx *c = &_astro_ctxs[id];
		int master = -1;
		/* A context without a policy has a master too, nested or not. */
		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == _ASTRO_CTX_LIVE && (c->nesting != STARPU_NMAX_SCHED_CTXS || c->no_scheduler)) {
			for (unsigned i = 0; i < c->collection.nworkers; i++)
				if (master < 0 || c->collection.workerids[i] < master)
					master = c->collection.workerids[i];
			if (master >= 0) {
				master_of[master] |= 1u << id;
				hands_down[master] |= 1u << id;
			}
			/* Kept for the master: what the parent's policy gives them goes to it. */
			for (unsigned i = 0; i < c->collection.nworkers && c->no_scheduler && !c->awake_workers; i++)
				hands_down[c->collection.workerids[i]] |= 1u << id;
		}
		__atomic_store_n(&c->master, master, __ATOMIC_RELEASE);
	}
	for (unsigned w = 0; w < _astro_rt.nworkers; w++) {
		__atomic_store_n(&_astro_rt.workers[w]->master_of, master_of[w], __ATOMIC_RELEASE);
		__atomic_store_n(&_astro_rt.workers[w]->hands_down, hands_down[w], __ATOMIC_RELEASE);
	}
}

void _astro_ctx_nesting_cut(unsigned id)
{
	struct _astro_sched_ctx *c = &_astro_ctxs[id];
	if (c->nesting != STARPU_NMAX_SCHED_CTXS)
		__atomic_and_fetch(&_astro_ctxs[c->nesting].children, ~(1u << id), __ATOMIC_RELAXED);
	c->nesting = STARPU_NMAX_SCHED_CTXS;
	/* Its children stand on their own from now on. */
	uint32_t children = __atomic_exchange_n(&c->children, 0, __ATOMIC_ACQ_REL);
	for (unsigned child = 1; child < STARPU_NMAX_SCHED_CTXS; child++)
		if (children & (1u << child))
			_astro_ctxs[child].nesting = STARPU_NMAX_SCHED_CTXS;
}

struct starpu_task *_astro_ctx_hand_down(struct _astro_worker *w, unsigned parent, struct starpu_task *task)
{
	uint32_t mine = __atomic_load_n(&w->hands_down, __ATOMIC_ACQUIRE) &
			__atomic_load_n(&_astro_ctxs[parent].children, __ATOMIC_ACQUIRE);
	/* A task pinned to this worker, or a part of a parallel task, stays where it is. */
	if (!mine || task->execute_on_a_specific_worker)
		return task;
	unsigned child = (unsigned)__builtin_ctz(mine);
	struct _astro_sched_ctx *c = &_astro_ctxs[child];
	/* Counted before its state is read, as a submission (see _astro_ctx_task_submitted). */
	__atomic_add_fetch(&c->ntasks, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->state, __ATOMIC_SEQ_CST) != _ASTRO_CTX_LIVE) {
		_astro_ctx_task_done(child);
		return task;
	}
	task->sched_ctx = child;
	/* Ready in the child, no longer in the parent: counted before the push, after which
	 * another worker may run the task and free it. */
	_astro_ctx_ready(child, task, 1);
	if (parent != 0)
		_astro_ctx_ready(parent, task, -1);
	if (_astro_ctx_push(c, task) != 0) {
		/* The nested context cannot take it (said): it runs here, in its parent. */
		task->sched_ctx = parent;
		_astro_ctx_ready(child, task, -1);
		if (parent != 0)
			_astro_ctx_ready(parent, task, 1);
		_astro_ctx_task_done(child);
		return task;
	}
	if (parent != 0)
		_astro_ctx_task_done(parent);
	return NULL;
}

/* ------------------------------------------------------------ queries */

unsigned starpu_sched_ctx_worker_is_master_for_child_ctx(int workerid, unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c || workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers)
		return STARPU_NMAX_SCHED_CTXS;
	uint32_t mine = __atomic_load_n(&_astro_rt.workers[workerid]->master_of, __ATOMIC_ACQUIRE) &
			__atomic_load_n(&c->children, __ATOMIC_ACQUIRE);
	return mine ? (unsigned)__builtin_ctz(mine) : STARPU_NMAX_SCHED_CTXS;
}

unsigned starpu_sched_ctx_master_get_context(int masterid)
{
	if (masterid < 0 || (unsigned)masterid >= _astro_rt.nworkers)
		return STARPU_NMAX_SCHED_CTXS;
	uint32_t mine = __atomic_load_n(&_astro_rt.workers[masterid]->master_of, __ATOMIC_ACQUIRE);
	return mine ? (unsigned)__builtin_ctz(mine) : STARPU_NMAX_SCHED_CTXS;
}

int starpu_sched_ctx_get_worker_rank(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	int self = _astro_worker_id();
	for (unsigned i = 0; c && self >= 0 && i < c->collection.nworkers; i++)
		if (c->collection.workerids[i] == self)
			return (int)i;
	return -1;
}

unsigned starpu_sched_ctx_has_starpu_scheduler(unsigned sched_ctx_id, unsigned *awake_workers)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return 0;
	if (awake_workers)
		*awake_workers = c->awake_workers;
	return !c->no_scheduler;
}

void starpu_sched_ctx_get_available_cpuids(unsigned sched_ctx_id, int **cpuids, int *ncpuids)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	int self = _astro_worker_id();
	*cpuids = malloc(STARPU_NMAXWORKERS * sizeof(int));
	*ncpuids = 0;
	if (!c)
		return;
	int master = __atomic_load_n(&c->master, __ATOMIC_ACQUIRE);
	/* Called from tasks, not from policy hooks: its workers may change meanwhile (the global context's never do). */
	if (c != &_astro_ctxs[0])
		starpu_pthread_rwlock_rdlock(&c->lock);
	/* The master (or a thread that is no worker) has every core of the context; another worker its own. */
	for (unsigned i = 0; i < c->collection.nworkers; i++) {
		int w = c->collection.workerids[i];
		if (self < 0 || self == master || self == w)
			(*cpuids)[(*ncpuids)++] = _astro_rt.workers[w]->bindid;
	}
	if (c != &_astro_ctxs[0])
		starpu_pthread_rwlock_unlock(&c->lock);
}

void starpu_sched_ctx_bind_current_thread_to_cpuid(unsigned cpuid)
{
	hwloc_topology_t topo = (hwloc_topology_t)_astro_rt.topology;
	hwloc_obj_t pu = topo ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, cpuid) : NULL;
	if (!pu) {
		_astro_error("starpu_sched_ctx_bind_current_thread_to_cpuid: processing unit %u does not exist: give a cpu id "
			     "that starpu_sched_ctx_get_available_cpuids() or starpu_worker_get_bindid() returned", cpuid);
		return;
	}
	if (hwloc_set_cpubind(topo, pu->cpuset, HWLOC_CPUBIND_THREAD) != 0)
		_astro_warn("starpu_sched_ctx_bind_current_thread_to_cpuid: the thread could not be bound to processing unit %u (%s)",
			    cpuid, strerror(errno));
}
