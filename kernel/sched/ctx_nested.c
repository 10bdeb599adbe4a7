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
#include "kernel.h"
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

/* ------------------------------------------------- parallel code on a context */

/* CPU workers held on their cores, each by a task pinned to it, while someone
 * else uses those cores (parallel code, a booking). */
struct hold
{
	int started;                         /* futex word: workers holding */
	int release;                         /* futex word: 1 once they may go */
	int left;                            /* futex word: workers still reading this */
};

static void wait_until_at_least(int *word, int target)
{
	int v;
	while ((v = __atomic_load_n(word, __ATOMIC_ACQUIRE)) < target)
		astro_futex_wait(word, v);
}

static void hold_worker(void *buffers[], void *arg)
{
	(void)buffers;
	struct hold *h = arg;
	__atomic_add_fetch(&h->started, 1, __ATOMIC_ACQ_REL);
	astro_futex_wake_all(&h->started);
	wait_until_at_least(&h->release, 1);
	/* The last touch of h: the releaser frees it once every worker is past it. */
	__atomic_sub_fetch(&h->left, 1, __ATOMIC_ACQ_REL);
	astro_futex_wake_all(&h->left);
}

static struct starpu_codelet hold_cl = {
	.cpu_funcs = { hold_worker },
	.nbuffers = 0,
	.name = "parallel_code_hold",
};

/* Holds the CPU workers of ids but skip: each ends the task it runs, then holds its core. Returns once they all do. */
static struct hold *hold_workers(const int *ids, unsigned n, int skip)
{
	struct hold *h = calloc(1, sizeof(*h));
	int held = 0;
	for (unsigned i = 0; i < n; i++) {
		if (ids[i] == skip || _astro_rt.workers[ids[i]]->arch != STARPU_CPU_WORKER)
			continue;
		struct starpu_task *task = starpu_task_create();
		task->cl = &hold_cl;
		task->cl_arg = h;
		task->sched_ctx = STARPU_GLOBAL_SCHED_CTX;
		task->execute_on_a_specific_worker = 1;
		task->workerid = (unsigned)ids[i];
		__atomic_add_fetch(&h->left, 1, __ATOMIC_RELAXED);
		if (starpu_task_submit(task) != 0) {
			__atomic_sub_fetch(&h->left, 1, __ATOMIC_RELAXED);
			starpu_task_destroy(task);
			continue;
		}
		held++;
	}
	wait_until_at_least(&h->started, held);
	return h;
}

/* Lets the workers of h go, and frees it once none reads it. */
static void release_hold(struct hold *h)
{
	__atomic_store_n(&h->release, 1, __ATOMIC_RELEASE);
	astro_futex_wake_all(&h->release);
	int v;
	while ((v = __atomic_load_n(&h->left, __ATOMIC_ACQUIRE)) > 0)
		astro_futex_wait(&h->left, v);
	free(h);
}

void *starpu_sched_ctx_exec_parallel_code(void *(*func)(void *), void *param, unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return NULL;
	if (!func) {
		_astro_error("starpu_sched_ctx_exec_parallel_code: no function: give the code to run on the context's cores");
		return NULL;
	}
	if (_astro_forbid_blocking("starpu_sched_ctx_exec_parallel_code", "call it from the application thread") != 0)
		return NULL;
	int *ids;
	unsigned n = starpu_sched_ctx_get_workers_list(sched_ctx_id, &ids);
	/* Each CPU worker of the context ends what it runs, then holds its core until func returns. */
	struct hold *h = hold_workers(ids, n, -1);
	free(ids);
	void *ret = func(param);
	release_hold(h);
	return ret;
}

/* ---------------------------------------------------------- bookings */

/* starpu_sched_ctx_book_workers_for_task(): per context and master, the workers held for it. */
static struct hold *booked[STARPU_NMAX_SCHED_CTXS][STARPU_NMAXWORKERS];
static starpu_pthread_mutex_t booked_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static struct hold booking_coming;      /* a booking whose workers are not all held yet */

int starpu_sched_ctx_book_workers_for_task(unsigned sched_ctx_id, int *workerids, int nworkers)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return -EINVAL;
	if (nworkers <= 0 || !workerids || nworkers > STARPU_NMAXWORKERS) {
		_astro_error("%s: %d workers: give an array of worker ids and its length (1 to %d)", __func__, nworkers, STARPU_NMAXWORKERS);
		return -EINVAL;
	}
	int self = _astro_worker_id(), master = -1;
	for (int i = 0; i < nworkers; i++) {
		if (workerids[i] < 0 || (unsigned)workerids[i] >= _astro_rt.nworkers) {
			_astro_error("%s: worker id %d does not exist: ids go from 0 to %u", __func__, workerids[i], _astro_rt.nworkers - 1);
			return -EINVAL;
		}
		if (master < 0 || workerids[i] < master)
			master = workerids[i];
	}
	/* The calling worker, when it is one of them, is their master: it cannot hold itself. */
	for (int i = 0; i < nworkers; i++)
		if (workerids[i] == self)
			master = self;
	unsigned id = sched_ctx_id == STARPU_NMAX_SCHED_CTXS ? 0 : sched_ctx_id;
	starpu_pthread_mutex_lock(&booked_lock);
	if (booked[id][master]) {
		starpu_pthread_mutex_unlock(&booked_lock);
		_astro_error("%s: worker %d already has workers booked in context %u: unbook them first "
			     "(starpu_sched_ctx_unbook_workers_for_task)", __func__, master, id);
		return -EBUSY;
	}
	/* Taken while its workers come (another booking of them may hold them until it is unbooked). */
	booked[id][master] = &booking_coming;
	starpu_pthread_mutex_unlock(&booked_lock);
	struct hold *h = hold_workers(workerids, (unsigned)nworkers, master);
	starpu_pthread_mutex_lock(&booked_lock);
	booked[id][master] = h;
	starpu_pthread_mutex_unlock(&booked_lock);
	return master;
}

void starpu_sched_ctx_unbook_workers_for_task(unsigned sched_ctx_id, int master)
{
	if (!_astro_ctx_get(sched_ctx_id, __func__))
		return;
	unsigned id = sched_ctx_id == STARPU_NMAX_SCHED_CTXS ? 0 : sched_ctx_id;
	struct hold *h = NULL;
	starpu_pthread_mutex_lock(&booked_lock);
	if (master >= 0 && master < STARPU_NMAXWORKERS && booked[id][master] && booked[id][master] != &booking_coming) {
		h = booked[id][master];
		booked[id][master] = NULL;
	}
	starpu_pthread_mutex_unlock(&booked_lock);
	if (!h) {
		_astro_error("%s: worker %d has no workers booked in context %u: give the master "
			     "starpu_sched_ctx_book_workers_for_task() returned", __func__, master, id);
		return;
	}
	release_hold(h);
}
