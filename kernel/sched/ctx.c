/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scheduling contexts (starpu_sched_ctx.h): sets of workers, each running its
 * own instance of a policy. Context 0, the global one, is set up at init with
 * the runtime's policy and every worker, and keeps them to the end: its push
 * and pop stay lock-free (sched.c). The others are created, changed and
 * deleted here, under ctxs_lock; their push, pop and execution hooks hold
 * their lock for reading, so a change of their workers (write) never meets a
 * policy call in flight. Their table and queries: ctx_table.c.
 */
#include "sched/sched.h"
#include <astrolabe/counters.h>
#include <stdarg.h>

/* Serialises creations, deletions and worker changes. */
static starpu_pthread_mutex_t ctxs_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* One of the policy's hooks outside the task path, recorded so that a crash there names the policy. */
static void policy_call_enter(struct _astro_foreign_call *call, const struct starpu_sched_policy *policy, const char *hook, void *fn)
{
	_astro_foreign_enter_fn(call, fn, hook, "the policy crashed; fix it or choose another one with STARPU_SCHED",
				"scheduling policy %s's %s", policy->policy_name, hook);
}

static void policy_init(struct _astro_sched_ctx *c)
{
	struct _astro_foreign_call pc;
	_astro_ctx_hooks_set(c);
	if (c->policy->init_sched) {
		policy_call_enter(&pc, c->policy, "init_sched", (void *)c->policy->init_sched);
		c->policy->init_sched(_astro_ctx_id(c));
		_astro_foreign_leave_fn(&pc);
	}
	/* c->policy_init (STARPU_SCHED_CTX_POLICY_INIT, starpu_conf.sched_policy_callback) is the policy's to
	 * call, as StarPU's: heteroprio calls it from its init_sched (starpu_sched_ctx_get_sched_policy_callback). */
}

static void policy_add_workers(struct _astro_sched_ctx *c, int *ids, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		c->collection.add(&c->collection, ids[i]);
	if (c->policy->add_workers && n) {
		struct _astro_foreign_call pc;
		policy_call_enter(&pc, c->policy, "add_workers", (void *)c->policy->add_workers);
		c->policy->add_workers(_astro_ctx_id(c), ids, n);
		_astro_foreign_leave_fn(&pc);
	}
}

static void policy_remove_workers(struct _astro_sched_ctx *c, int *ids, unsigned n)
{
	if (c->policy->remove_workers && n) {
		struct _astro_foreign_call pc;
		policy_call_enter(&pc, c->policy, "remove_workers", (void *)c->policy->remove_workers);
		c->policy->remove_workers(_astro_ctx_id(c), ids, n);
		_astro_foreign_leave_fn(&pc);
	}
	for (unsigned i = 0; i < n; i++)
		c->collection.remove(&c->collection, ids[i]);
}

static void policy_deinit(struct _astro_sched_ctx *c)
{
	if (c->policy->deinit_sched) {
		struct _astro_foreign_call pc;
		policy_call_enter(&pc, c->policy, "deinit_sched", (void *)c->policy->deinit_sched);
		c->policy->deinit_sched(_astro_ctx_id(c));
		_astro_foreign_leave_fn(&pc);
	}
	c->collection.deinit(&c->collection);
}

/* ------------------------------------------------ the global context */

void _astro_ctx_global_setup(struct starpu_sched_policy *policy)
{
	for (unsigned i = 1; i < STARPU_NMAX_SCHED_CTXS; i++) {
		/* Locks live as long as the runtime: a worker may still take one of a context it just left. */
		/* Workers poll their contexts all the time: a change of workers must not wait behind them forever. */
		astro_rwlock_init_writer_preferred(&_astro_ctxs[i].lock);
		starpu_pthread_mutex_init(&_astro_ctxs[i].wait_lock, NULL);
		starpu_pthread_cond_init(&_astro_ctxs[i].wait_cond, NULL);
		_astro_ctxs[i].state = _ASTRO_CTX_FREE;
	}
	struct _astro_sched_ctx *c = &_astro_ctxs[0];
	c->policy = policy;
	c->policy_data = NULL;
	c->policy_init = _astro_rt.conf.sched_policy_callback;
	c->inheritor = STARPU_NMAX_SCHED_CTXS;
	c->nesting = STARPU_NMAX_SCHED_CTXS;
	c->master = -1;
	_astro_ctx_collection_setup(&c->collection);
	__atomic_store_n(&c->state, _ASTRO_CTX_LIVE, __ATOMIC_RELEASE);
	_astro_ctx_caps_setup(c);
	policy_init(c);
	int ids[STARPU_NMAXWORKERS];
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		ids[i] = (int)i;
	policy_add_workers(c, ids, _astro_rt.nworkers);
	_astro_verbose("scheduling policy: %s", policy->policy_name);
}

static void ctx_teardown(struct _astro_sched_ctx *c)
{
	int copy[STARPU_NMAXWORKERS];
	unsigned n = 0;
	/* An application may have added a combined worker to the collection (workers->add): only workers have a mask and a policy's view. */
	for (unsigned i = 0; i < c->collection.nworkers; i++)
		if ((unsigned)c->collection.workerids[i] < _astro_rt.nworkers)
			copy[n++] = c->collection.workerids[i];
	for (unsigned i = 0; i < n; i++)
		__atomic_and_fetch(&_astro_rt.workers[copy[i]]->ctx_mask, ~(1u << _astro_ctx_id(c)), __ATOMIC_RELAXED);
	policy_remove_workers(c, copy, n);
	policy_deinit(c);
	/* A context made later with this id starts without the order its workers had for this one. */
	for (unsigned w = 0; w < _astro_rt.nworkers; w++) {
		__atomic_store_n(&_astro_rt.workers[w]->ctx_priority[_astro_ctx_id(c)], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&_astro_rt.workers[w]->ctx_ntasks[_astro_ctx_id(c)], 0, __ATOMIC_RELAXED);
	}
	free(c->name);
	c->name = NULL;
	c->policy = NULL;
	c->policy_data = NULL;
	/* Iterations left open end with the context. */
	__atomic_sub_fetch(&_astro_iterations_open, c->iteration_level, __ATOMIC_RELAXED);
	c->iteration_level = 0;
	c->iterations[0] = c->iterations[1] = -1;
	__atomic_store_n(&c->state, _ASTRO_CTX_FREE, __ATOMIC_RELEASE);
}

/* At shutdown, once the workers stopped: every context goes, the global one last. */
void _astro_ctxs_teardown(void)
{
	if (!_astro_ctxs[0].policy)
		return;
	for (unsigned i = 1; i < STARPU_NMAX_SCHED_CTXS; i++) {
		if (_astro_ctxs[i].state != _ASTRO_CTX_FREE)
			ctx_teardown(&_astro_ctxs[i]);
		starpu_pthread_rwlock_destroy(&_astro_ctxs[i].lock);
		starpu_pthread_mutex_destroy(&_astro_ctxs[i].wait_lock);
		starpu_pthread_cond_destroy(&_astro_ctxs[i].wait_cond);
	}
	ctx_teardown(&_astro_ctxs[0]);
	_astro_hyp_reset();
	_astro_ctx_table_reset();
}

/* The runtime's policy chosen, the global context set up with it; torn down with the others at shutdown. */
int _astro_sched_select(void)
{
	struct starpu_sched_policy *policy = _astro_policy_choose();
	if (!policy) {
		_astro_error("no scheduling policy is available: check that the scheduler plugins are installed "
			     "(STARPU_PLUGIN_VERBOSE=1 shows where they are looked for)");
		return -ENODEV;
	}
	_astro_ctx_global_setup(policy);
	return 0;
}

void _astro_sched_deinit(void)
{
	_astro_ctxs_teardown();
}

/* --------------------------------------------------------- the tasks */

int _astro_ctx_task_submitted(unsigned id, struct starpu_task *task)
{
	const char *name = starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)";
	if (id >= STARPU_NMAX_SCHED_CTXS) {
		_astro_error("starpu_task_submit: task '%s' names scheduling context %u, which does not exist: %s", name, id, _ASTRO_CTX_FIX);
		return -EINVAL;
	}
	struct _astro_sched_ctx *c = &_astro_ctxs[id];
	/* Counted before the state is read (both seq_cst): a deletion either waits for it or is seen. */
	__atomic_add_fetch(&c->ntasks, 1, __ATOMIC_SEQ_CST);
	int state = __atomic_load_n(&c->state, __ATOMIC_SEQ_CST);
	/* A context without workers keeps its ready tasks until some come (_astro_ctx_push). */
	if (state == _ASTRO_CTX_LIVE)
		return 0;
	_astro_ctx_task_done(id);
	_astro_error("starpu_task_submit: task '%s' goes to scheduling context %u, which %s: %s", name, id,
		     state == _ASTRO_CTX_DELETING ? "is being deleted" : "does not exist", _ASTRO_CTX_FIX);
	return -EINVAL;
}

void _astro_ctx_ready(unsigned id, const struct starpu_task *task, int sign)
{
	struct _astro_sched_ctx *c = &_astro_ctxs[id];
	__atomic_add_fetch(&c->nready, sign, __ATOMIC_RELAXED);
	if (task->flops != 0.0)
		astro_counter_add_double(&c->nready_flops, sign * task->flops);
}

static void ctx_close(struct _astro_sched_ctx *c);

void _astro_ctx_task_done(unsigned id)
{
	struct _astro_sched_ctx *c = &_astro_ctxs[id];
	/* All under wait_lock: once ntasks is 0, a waiter may delete c and starpu_sched_ctx_create
	 * reuse its slot, so nothing of c may be read after that unless the application said
	 * finished_submit (then it closes c, and c stays until deleted). Only tasks of created contexts come here. */
	starpu_pthread_mutex_lock(&c->wait_lock);
	long left = __atomic_sub_fetch(&c->ntasks, 1, __ATOMIC_SEQ_CST);
	bool last = left == 0;
	bool close = last && __atomic_load_n(&c->finished_submit, __ATOMIC_SEQ_CST);
	if (left <= c->wait_above)
		starpu_pthread_cond_broadcast(&c->wait_cond);
	starpu_pthread_mutex_unlock(&c->wait_lock);
	if (close)
		ctx_close(c);
}

/* Pushes task to c's policy, under c's write lock: a task is never lost, when the policy refuses it
 * the first of c's workers that can run it takes it (fallback: that worker otherwise). */
static void ctx_repush(struct _astro_sched_ctx *c, struct starpu_task *task, int fallback)
{
	const struct _astro_foreign_call *outer = _astro_site_enter(_ASTRO_HOOK_SITE(c, PUSH_TASK));
	int ret = c->policy->push_task(task);
	_astro_site_leave(outer);
	if (ret == 0)
		return;
	int w = -1;
	for (unsigned i = 0; i < c->collection.nworkers && w < 0; i++)
		if (_astro_worker_impl_for(c->collection.workerids[i], task) >= 0)
			w = c->collection.workerids[i];
	starpu_push_local_task(w < 0 ? fallback : w, task, 1);
}

/* Workers came to c: the tasks that waited for them are pushed (all of them, or those before
 * starpu_sched_ctx_stop_task_submission()'s mark). */
static void ctx_flush_waiting(struct _astro_sched_ctx *c)
{
	struct starpu_task_list flushed;
	starpu_task_list_init(&flushed);
	starpu_pthread_rwlock_wrlock(&c->lock);
	if (c->collection.nworkers == 0) {
		starpu_pthread_rwlock_unlock(&c->lock);
		return;
	}
	starpu_pthread_mutex_lock(&c->wait_lock);
	int n = c->nwaiting_release >= 0 ? c->nwaiting_release : c->nwaiting;
	for (int i = 0; i < n; i++)
		starpu_task_list_push_back(&flushed, starpu_task_list_pop_front(&c->waiting));
	c->nwaiting -= n;
	c->nwaiting_release = -1;
	starpu_pthread_mutex_unlock(&c->wait_lock);
	while (!starpu_task_list_empty(&flushed))
		ctx_repush(c, starpu_task_list_pop_front(&flushed), c->collection.workerids[0]);
	starpu_pthread_rwlock_unlock(&c->lock);
}

void _astro_ctx_wait_tasks(struct _astro_sched_ctx *c)
{
	starpu_pthread_mutex_lock(&c->wait_lock);
	while (__atomic_load_n(&c->ntasks, __ATOMIC_SEQ_CST) > 0)
		starpu_pthread_cond_wait(&c->wait_cond, &c->wait_lock);
	starpu_pthread_mutex_unlock(&c->wait_lock);
}

void _astro_ctx_exec_hook(struct starpu_task *task, bool post)
{
	struct _astro_sched_ctx *c = &_astro_ctxs[task->sched_ctx];
	starpu_pthread_rwlock_rdlock(&c->lock);
	const struct _astro_foreign_call *outer = _astro_foreign_call;
	if (post && c->policy->post_exec_hook) {
		_astro_site_enter(_ASTRO_HOOK_SITE(c, POST_EXEC));
		c->policy->post_exec_hook(task, task->sched_ctx);
	} else if (!post && c->policy->pre_exec_hook) {
		_astro_site_enter(_ASTRO_HOOK_SITE(c, PRE_EXEC));
		c->policy->pre_exec_hook(task, task->sched_ctx);
	}
	_astro_site_leave(outer);
	starpu_pthread_rwlock_unlock(&c->lock);
}

/* -------------------------------------------------------- the workers */

/* Checks the workers a call names: 0, or -EINVAL said naming fn. */
/* Adds to c those of ids it lacks; under ctxs_lock. */
static void ctx_add_workers(struct _astro_sched_ctx *c, const int *ids, unsigned n)
{
	int added[STARPU_NMAXWORKERS];
	unsigned nadded = 0;
	unsigned id = _astro_ctx_id(c);
	starpu_pthread_rwlock_wrlock(&c->lock);
	for (unsigned i = 0; i < n; i++) {
		bool dup = c->collection.present[ids[i]];
		for (unsigned j = 0; j < nadded && !dup; j++)
			dup = added[j] == ids[i];
		if (!dup)
			added[nadded++] = ids[i];
	}
	policy_add_workers(c, added, nadded);
	for (unsigned i = 0; i < nadded; i++)
		__atomic_or_fetch(&_astro_rt.workers[added[i]]->ctx_mask, 1u << id, __ATOMIC_RELAXED);
	starpu_pthread_rwlock_unlock(&c->lock);
	/* They look at their new context's tasks at once. */
	for (unsigned i = 0; i < nadded; i++)
		_astro_worker_wake(_astro_rt.workers[added[i]]);
}

/* Removes ids from c, under ctxs_lock. What the policy queued for them is
 * taken out as each of them would pop it, and pushed again to the workers
 * that stay: no task is lost. 0, or -EBUSY said when that would leave the
 * context without workers while tasks of it are pending. */
static int ctx_remove_workers(struct _astro_sched_ctx *c, const int *ids, unsigned n, const char *fn)
{
	int removed[STARPU_NMAXWORKERS];
	unsigned nremoved = 0;
	unsigned id = _astro_ctx_id(c);
	starpu_pthread_rwlock_wrlock(&c->lock);
	for (unsigned i = 0; i < n; i++) {
		bool dup = !c->collection.present[ids[i]];
		for (unsigned j = 0; j < nremoved && !dup; j++)
			dup = removed[j] == ids[i];
		if (!dup)
			removed[nremoved++] = ids[i];
	}
	if (nremoved && nremoved == c->collection.nworkers && __atomic_load_n(&c->ntasks, __ATOMIC_SEQ_CST) > 0) {
		starpu_pthread_rwlock_unlock(&c->lock);
		_astro_error("%s: removing these workers would leave scheduling context %u ('%s') without workers while %ld of its tasks "
			     "are pending: wait for them first (starpu_task_wait_for_all_in_ctx) or keep a worker", fn, id,
			     c->name ? c->name : "", __atomic_load_n(&c->ntasks, __ATOMIC_RELAXED));
		return -EBUSY;
	}
	struct starpu_task_list drained;
	starpu_task_list_init(&drained);
	struct _astro_worker *self = _astro_self;
	/* Entered while this thread poses as those workers: a crash names the policy, never what they run. */
	const struct _astro_foreign_call *outer = _astro_site_enter(_ASTRO_HOOK_SITE(c, POP_TASK));
	for (unsigned i = 0; i < nremoved; i++) {
		/* Pops as that worker: the policy hands over what it queued for it (the write lock keeps the worker out). */
		_astro_self = _astro_rt.workers[removed[i]];
		struct starpu_task *task;
		while ((task = c->policy->pop_task(id)))
			starpu_task_list_push_back(&drained, task);
	}
	_astro_self = self;
	_astro_site_leave(outer);
	for (unsigned i = 0; i < nremoved; i++)
		__atomic_and_fetch(&_astro_rt.workers[removed[i]]->ctx_mask, ~(1u << id), __ATOMIC_RELAXED);
	policy_remove_workers(c, removed, nremoved);
	while (!starpu_task_list_empty(&drained))
		ctx_repush(c, starpu_task_list_pop_front(&drained), removed[0]);
	starpu_pthread_rwlock_unlock(&c->lock);
	return 0;
}

/* The context for a change named by fn: a live one other than the global one. */
static struct _astro_sched_ctx *ctx_changeable(unsigned id, const char *fn)
{
	if (id == 0 || id == STARPU_NMAX_SCHED_CTXS) {
		_astro_error("%s: the global scheduling context keeps every worker: create a context with the workers you want "
			     "(starpu_sched_ctx_create) and change that one", fn);
		return NULL;
	}
	struct _astro_sched_ctx *c = _astro_ctx_get(id, fn);
	if (c && __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != _ASTRO_CTX_LIVE) {
		_astro_error("%s: scheduling context %u is being deleted", fn, id);
		return NULL;
	}
	return c;
}

/* Under ctxs_lock: a context of workers ids may nest in parent: 0, or -EINVAL said naming fn. */
static int nest_check(unsigned parent, const int *ids, int n, const char *fn)
{
	const struct _astro_sched_ctx *p = &_astro_ctxs[parent];
	if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != _ASTRO_CTX_LIVE) {
		_astro_error("%s: STARPU_SCHED_CTX_NESTED names context %u, which does not exist or is being deleted: "
			     "create the parent context first", fn, parent);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++)
		if (!starpu_sched_ctx_contains_worker(ids[i], parent)) {
			_astro_error("%s: worker %d is not in context %u, which the new context nests in: a nested context "
				     "takes some of its parent's workers", fn, ids[i], parent);
			return -EINVAL;
		}
	return 0;
}

void starpu_sched_ctx_add_workers(int *workerids_ctx, unsigned nworkers_ctx, unsigned sched_ctx_id)
{
	starpu_pthread_mutex_lock(&ctxs_lock);
	struct _astro_sched_ctx *c = ctx_changeable(sched_ctx_id, __func__);
	if (c && _astro_check_workers(workerids_ctx, (int)nworkers_ctx, __func__) == 0 &&
	    (c->nesting == STARPU_NMAX_SCHED_CTXS || nest_check(c->nesting, workerids_ctx, (int)nworkers_ctx, __func__) == 0)) {
		ctx_add_workers(c, workerids_ctx, nworkers_ctx);
		_astro_ctx_nesting_update();
		ctx_flush_waiting(c);
	}
	starpu_pthread_mutex_unlock(&ctxs_lock);
}

void starpu_sched_ctx_remove_workers(int *workerids_ctx, unsigned nworkers_ctx, unsigned sched_ctx_id)
{
	starpu_pthread_mutex_lock(&ctxs_lock);
	struct _astro_sched_ctx *c = ctx_changeable(sched_ctx_id, __func__);
	if (c && _astro_check_workers(workerids_ctx, (int)nworkers_ctx, __func__) == 0 &&
	    ctx_remove_workers(c, workerids_ctx, nworkers_ctx, __func__) == 0)
		_astro_ctx_nesting_update();
	starpu_pthread_mutex_unlock(&ctxs_lock);
}

/* ------------------------------------------------- creation, deletion */

struct ctx_options
{
	struct starpu_sched_policy *policy;
	bool policy_given;                   /* a policy option, even "" (the global context's) */
	unsigned nesting;                    /* STARPU_SCHED_CTX_NESTED's parent, STARPU_NMAX_SCHED_CTXS: none */
	bool hierarchy_level_set;
	bool awake_workers;
	int min_prio, max_prio;
	bool min_prio_set, max_prio_set;
	unsigned hierarchy_level;
	void *user_data;
	void (*policy_init)(unsigned);
	const int *sub_ctxs;
	int nsub_ctxs;
};

/* Reads the variadic options of starpu_sched_ctx_create(): 0, or -EINVAL said. */
static int read_options(va_list ap, struct ctx_options *o)
{
	int arg;
	while ((arg = va_arg(ap, int)) != 0) {
		switch (arg) {
		case STARPU_SCHED_CTX_POLICY_NAME: {
			const char *name = va_arg(ap, const char *);
			o->policy_given = true;
			if (!name || !*name) {
				o->policy = NULL; /* the default: the global context's */
				break;
			}
			o->policy = _astro_policy_lookup(name);
			if (!o->policy) {
				_astro_error("starpu_sched_ctx_create: scheduling policy '%s' was not found: STARPU_SCHED=help lists them", name);
				return -EINVAL;
			}
			break;
		}
		case STARPU_SCHED_CTX_POLICY_STRUCT:
			o->policy = va_arg(ap, struct starpu_sched_policy *);
			o->policy_given = true;
			if (!o->policy || _astro_policy_check(o->policy, "STARPU_SCHED_CTX_POLICY_STRUCT") != 0) {
				if (!o->policy)
					_astro_error("starpu_sched_ctx_create: STARPU_SCHED_CTX_POLICY_STRUCT is NULL: give a policy");
				return -EINVAL;
			}
			break;
		case STARPU_SCHED_CTX_POLICY_MIN_PRIO:
			o->min_prio = va_arg(ap, int);
			o->min_prio_set = true;
			break;
		case STARPU_SCHED_CTX_POLICY_MAX_PRIO:
			o->max_prio = va_arg(ap, int);
			o->max_prio_set = true;
			break;
		case STARPU_SCHED_CTX_HIERARCHY_LEVEL:
			o->hierarchy_level = va_arg(ap, unsigned);
			o->hierarchy_level_set = true;
			break;
		case STARPU_SCHED_CTX_POLICY_INIT:
			o->policy_init = va_arg(ap, void (*)(unsigned));
			break;
		case STARPU_SCHED_CTX_USER_DATA:
			o->user_data = va_arg(ap, void *);
			break;
		case STARPU_SCHED_CTX_NESTED:
			o->nesting = va_arg(ap, unsigned);
			if (o->nesting >= STARPU_NMAX_SCHED_CTXS) {
				_astro_error("starpu_sched_ctx_create: STARPU_SCHED_CTX_NESTED names context %u: give the id of the "
					     "context to nest in (0 to %d)", o->nesting, STARPU_NMAX_SCHED_CTXS - 1);
				return -EINVAL;
			}
			break;
		case STARPU_SCHED_CTX_AWAKE_WORKERS:
			o->awake_workers = true;
			break;
		case STARPU_SCHED_CTX_CUDA_NSMS:
			_astro_error("starpu_sched_ctx_create: STARPU_SCHED_CTX_CUDA_NSMS is not supported here (no partition of a GPU's multiprocessors): drop it");
			return -EINVAL;
		case STARPU_SCHED_CTX_SUB_CTXS:
			o->sub_ctxs = va_arg(ap, const int *);
			o->nsub_ctxs = va_arg(ap, int);
			if (o->nsub_ctxs < 0 || o->nsub_ctxs > STARPU_NMAX_SCHED_CTXS || (o->nsub_ctxs > 0 && !o->sub_ctxs)) {
				_astro_error("starpu_sched_ctx_create: STARPU_SCHED_CTX_SUB_CTXS gives %d contexts%s: give an array "
					     "of 0 to %d context ids, then their number", o->nsub_ctxs,
					     o->sub_ctxs ? "" : " and no array", STARPU_NMAX_SCHED_CTXS);
				return -EINVAL;
			}
			break;
		default:
			_astro_error("starpu_sched_ctx_create: unknown option %d (0x%x): the options are the STARPU_SCHED_CTX_* constants, "
				     "each followed by its value, and the list ends with 0", arg, (unsigned)arg);
			return -EINVAL;
		}
	}
	if (o->min_prio_set && o->max_prio_set && o->min_prio > o->max_prio) {
		_astro_error("starpu_sched_ctx_create: minimum priority %d exceeds maximum priority %d: give min <= max", o->min_prio, o->max_prio);
		return -EINVAL;
	}
	return 0;
}

static unsigned ctx_create(const int *ids, int n, const char *name, struct ctx_options *o)
{
	int all[STARPU_NMAXWORKERS];
	if (n == -1) {
		/* StarPU's convention: -1 workers means every worker (NULL and 0: none yet). */
		n = (int)_astro_rt.nworkers;
		for (int i = 0; i < n; i++)
			all[i] = i;
		ids = all;
	}
	if (!_astro_running()) {
		_astro_error("starpu_sched_ctx_create: the runtime is not running: call starpu_init() first");
		return STARPU_NMAX_SCHED_CTXS;
	}
	if (_astro_check_workers(ids, n, "starpu_sched_ctx_create") != 0)
		return STARPU_NMAX_SCHED_CTXS;
	starpu_pthread_mutex_lock(&ctxs_lock);
	if (o->nesting != STARPU_NMAX_SCHED_CTXS && nest_check(o->nesting, ids, n, "starpu_sched_ctx_create") != 0) {
		starpu_pthread_mutex_unlock(&ctxs_lock);
		return STARPU_NMAX_SCHED_CTXS;
	}
	for (int i = 0; i < o->nsub_ctxs; i++) {
		int sub = o->sub_ctxs[i];
		if (sub < 0 || sub >= STARPU_NMAX_SCHED_CTXS || _astro_ctxs[sub].state == _ASTRO_CTX_FREE) {
			starpu_pthread_mutex_unlock(&ctxs_lock);
			_astro_error("starpu_sched_ctx_create: STARPU_SCHED_CTX_SUB_CTXS names context %d, which does not exist: "
				     "create the sub-contexts first", sub);
			return STARPU_NMAX_SCHED_CTXS;
		}
	}
	unsigned id = 1;
	while (id < STARPU_NMAX_SCHED_CTXS && _astro_ctxs[id].state != _ASTRO_CTX_FREE)
		id++;
	if (id == STARPU_NMAX_SCHED_CTXS) {
		starpu_pthread_mutex_unlock(&ctxs_lock);
		_astro_error("starpu_sched_ctx_create: all %d scheduling contexts are in use: delete one first (starpu_sched_ctx_delete)",
			     STARPU_NMAX_SCHED_CTXS);
		return STARPU_NMAX_SCHED_CTXS;
	}
	struct _astro_sched_ctx *c = &_astro_ctxs[id];
	const struct _astro_sched_ctx *global = &_astro_ctxs[0];
	c->policy = o->policy ? o->policy : global->policy;
	c->policy_data = NULL;
	c->min_prio = o->min_prio_set ? o->min_prio : global->min_prio;
	c->max_prio = o->max_prio_set ? o->max_prio : global->max_prio;
	c->min_prio_set = o->min_prio_set;
	c->max_prio_set = o->max_prio_set;
	c->name = strdup(name ? name : "");
	c->ntasks = 0;
	c->wait_above = 0;
	c->inheritor = STARPU_NMAX_SCHED_CTXS;
	c->finished_submit = false;
	c->hierarchy_level = o->hierarchy_level;
	c->user_data = o->user_data;
	c->policy_init = o->policy_init;
	c->nesting = o->nesting;
	c->children = 0;
	c->master = -1;
	c->awake_workers = o->awake_workers;
	c->nready = 0;
	c->nready_flops = 0.0;
	starpu_task_list_init(&c->waiting);
	c->nwaiting = 0;
	c->nwaiting_release = -1;
	c->close_callback = NULL;
	c->close_args = NULL;
	c->closed = 0;
	c->nsub_ctxs = o->nsub_ctxs;
	if (o->nsub_ctxs)
		memcpy(c->sub_ctxs, o->sub_ctxs, (size_t)o->nsub_ctxs * sizeof(int));
	/* Without a policy option, no scheduler: its master runs its tasks, as StarPU 1.4 (its parallel
	 * workers are made of such contexts). A policy named "" is the global context's. */
	c->no_scheduler = !o->policy_given;
	if (c->no_scheduler)
		c->policy = &_astro_master_policy;
	if (o->nesting != STARPU_NMAX_SCHED_CTXS && !o->hierarchy_level_set)
		c->hierarchy_level = _astro_ctxs[o->nesting].hierarchy_level + 1;
	_astro_ctx_collection_setup(&c->collection);
	__atomic_store_n(&c->state, _ASTRO_CTX_CREATING, __ATOMIC_RELEASE);
	_astro_ctx_caps_setup(c);
	policy_init(c);
	ctx_add_workers(c, ids, (unsigned)n);
	__atomic_store_n(&c->state, _ASTRO_CTX_LIVE, __ATOMIC_SEQ_CST);
	if (o->nesting != STARPU_NMAX_SCHED_CTXS)
		__atomic_or_fetch(&_astro_ctxs[o->nesting].children, 1u << id, __ATOMIC_RELAXED);
	_astro_ctx_nesting_update();
	starpu_pthread_mutex_unlock(&ctxs_lock);
	_astro_verbose("scheduling context %u '%s': policy %s, %d workers", id, c->name, c->policy->policy_name, n);
	return id;
}

unsigned starpu_sched_ctx_create(int *workerids_ctx, int nworkers_ctx, const char *sched_ctx_name, ...)
{
	struct ctx_options o = { .nesting = STARPU_NMAX_SCHED_CTXS };
	va_list ap;
	va_start(ap, sched_ctx_name);
	int ret = read_options(ap, &o);
	va_end(ap);
	if (ret)
		return STARPU_NMAX_SCHED_CTXS;
	return ctx_create(workerids_ctx, nworkers_ctx, sched_ctx_name, &o);
}

unsigned starpu_sched_ctx_create_inside_interval(const char *policy_name, const char *sched_ctx_name, int min_ncpus, int max_ncpus,
						 int min_ngpus, int max_ngpus, unsigned allow_overlap)
{
	if (min_ncpus < 0 || max_ncpus < min_ncpus || min_ngpus < 0 || max_ngpus < min_ngpus) {
		_astro_error("starpu_sched_ctx_create_inside_interval: bad intervals [%d, %d] CPUs, [%d, %d] GPUs: give 0 <= min <= max",
			     min_ncpus, max_ncpus, min_ngpus, max_ngpus);
		return STARPU_NMAX_SCHED_CTXS;
	}
	/* The most workers each interval allows, from the first ones of each kind. */
	int ids[STARPU_NMAXWORKERS];
	int n = 0, ncpus = 0, ngpus = 0;
	for (unsigned w = 0; w < _astro_rt.nworkers; w++) {
		enum starpu_worker_archtype arch = _astro_rt.workers[w]->arch;
		/* Without overlap: none already in a context besides the global one. */
		if (!allow_overlap && __atomic_load_n(&_astro_rt.workers[w]->ctx_mask, __ATOMIC_RELAXED))
			continue;
		if (arch == STARPU_CPU_WORKER && ncpus < max_ncpus) {
			ids[n++] = (int)w;
			ncpus++;
		} else if (arch != STARPU_CPU_WORKER && ngpus < max_ngpus) {
			ids[n++] = (int)w;
			ngpus++;
		}
	}
	if (ncpus < min_ncpus || ngpus < min_ngpus) {
		_astro_error("starpu_sched_ctx_create_inside_interval: at least %d CPU and %d GPU workers are asked for, %d and %d exist: "
			     "lower the minimums", min_ncpus, min_ngpus, ncpus, ngpus);
		return STARPU_NMAX_SCHED_CTXS;
	}
	struct ctx_options o = { .nesting = STARPU_NMAX_SCHED_CTXS, .policy_given = true };
	if (policy_name && *policy_name && !(o.policy = _astro_policy_lookup(policy_name))) {
		_astro_error("starpu_sched_ctx_create_inside_interval: scheduling policy '%s' was not found: STARPU_SCHED=help lists them", policy_name);
		return STARPU_NMAX_SCHED_CTXS;
	}
	return ctx_create(ids, n, sched_ctx_name, &o);
}

static int ctx_move_task(struct starpu_task *task, unsigned to, bool push);

/* c, being deleted, has no worker: the tasks waiting for some go to context heir (said). */
static void ctx_give_waiting(struct _astro_sched_ctx *c, unsigned heir)
{
	struct starpu_task_list given;
	starpu_task_list_init(&given);
	starpu_pthread_rwlock_wrlock(&c->lock);
	starpu_pthread_mutex_lock(&c->wait_lock);
	int n = c->collection.nworkers == 0 ? c->nwaiting : 0;
	if (n) {
		given = c->waiting;
		starpu_task_list_init(&c->waiting);
		c->nwaiting = 0;
		c->nwaiting_release = -1;
	}
	starpu_pthread_mutex_unlock(&c->wait_lock);
	starpu_pthread_rwlock_unlock(&c->lock);
	if (n)
		_astro_warn("starpu_sched_ctx_delete: scheduling context %u ('%s') is deleted with %d tasks waiting for workers: "
			    "they run in context %u instead (add workers before deleting it to run them there)", _astro_ctx_id(c),
			    c->name ? c->name : "", n, heir);
	while (!starpu_task_list_empty(&given)) {
		struct starpu_task *task = starpu_task_list_pop_front(&given);
		unsigned from = task->sched_ctx;
		if (ctx_move_task(task, heir, false) != 0)
			ctx_move_task(task, 0, false);
		starpu_sched_ctx_revert_task_counters_ctx_locked(from, task->flops);
		_astro_sched_push(task);
	}
}

void starpu_sched_ctx_delete(unsigned sched_ctx_id)
{
	if (_astro_forbid_blocking("starpu_sched_ctx_delete", "delete it from the application thread") != 0)
		return;
	starpu_pthread_mutex_lock(&ctxs_lock);
	struct _astro_sched_ctx *c = ctx_changeable(sched_ctx_id, __func__);
	if (!c) {
		starpu_pthread_mutex_unlock(&ctxs_lock);
		return;
	}
	/* Refuses new tasks (seq_cst, against _astro_ctx_task_submitted), then lets its own end. */
	__atomic_store_n(&c->state, _ASTRO_CTX_DELETING, __ATOMIC_SEQ_CST);
	unsigned heir = c->inheritor < STARPU_NMAX_SCHED_CTXS && _astro_ctxs[c->inheritor].state == _ASTRO_CTX_LIVE ? c->inheritor : 0;
	starpu_pthread_mutex_unlock(&ctxs_lock);
	ctx_give_waiting(c, heir);
	_astro_ctx_wait_tasks(c);
	_astro_hyp_ctx_deleted(sched_ctx_id);
	starpu_pthread_mutex_lock(&ctxs_lock);
	int ids[STARPU_NMAXWORKERS];
	unsigned n = c->collection.nworkers;
	memcpy(ids, c->collection.workerids, n * sizeof(int));
	unsigned inheritor = c->inheritor;
	_astro_ctx_nesting_cut(sched_ctx_id);
	starpu_pthread_rwlock_wrlock(&c->lock);
	ctx_teardown(c);
	starpu_pthread_rwlock_unlock(&c->lock);
	if (inheritor < STARPU_NMAX_SCHED_CTXS && inheritor != 0 && _astro_ctxs[inheritor].state == _ASTRO_CTX_LIVE)
		ctx_add_workers(&_astro_ctxs[inheritor], ids, n);
	_astro_ctx_nesting_update();
	starpu_pthread_mutex_unlock(&ctxs_lock);
}

void starpu_sched_ctx_set_inheritor(unsigned sched_ctx_id, unsigned inheritor)
{
	starpu_pthread_mutex_lock(&ctxs_lock);
	struct _astro_sched_ctx *c = ctx_changeable(sched_ctx_id, __func__);
	if (c && inheritor == sched_ctx_id)
		_astro_error("%s: context %u cannot inherit its own workers: name another context", __func__, inheritor);
	else if (c && (inheritor == STARPU_NMAX_SCHED_CTXS || _astro_ctx_get(inheritor, __func__)))
		c->inheritor = inheritor;
	starpu_pthread_mutex_unlock(&ctxs_lock);
}

unsigned starpu_sched_ctx_get_inheritor(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? c->inheritor : STARPU_NMAX_SCHED_CTXS;
}

unsigned starpu_sched_ctx_get_hierarchy_level(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	return c ? c->hierarchy_level : 0;
}

/* Once the application said it submits no more to c and c's tasks ended (the
 * thread that ended the last one, or the one that said so): c's close callback
 * runs, then its workers join its inheritor, once. */
static void ctx_close(struct _astro_sched_ctx *c)
{
	if (__atomic_exchange_n(&c->closed, 1, __ATOMIC_ACQ_REL))
		return;
	unsigned id = _astro_ctx_id(c);
	if (c->close_callback) {
		enum _astro_call_context previous = _astro_context_enter(_ASTRO_CTX_CALLBACK);
		c->close_callback(id, c->close_args);
		_astro_context_leave(previous);
	}
	starpu_pthread_mutex_lock(&ctxs_lock);
	unsigned heir = c->inheritor;
	if (c->state == _ASTRO_CTX_LIVE && heir != 0 && heir < STARPU_NMAX_SCHED_CTXS && _astro_ctxs[heir].state == _ASTRO_CTX_LIVE) {
		int ids[STARPU_NMAXWORKERS];
		starpu_pthread_rwlock_rdlock(&c->lock);
		unsigned n = c->collection.nworkers;
		memcpy(ids, c->collection.workerids, n * sizeof(int));
		starpu_pthread_rwlock_unlock(&c->lock);
		ctx_add_workers(&_astro_ctxs[heir], ids, n);
		_astro_ctx_nesting_update();
		ctx_flush_waiting(&_astro_ctxs[heir]);
	}
	starpu_pthread_mutex_unlock(&ctxs_lock);
}

/* Tasks are counted per context from their submission: once the last one
 * ended, the close callback runs and the workers join the inheritor (they
 * stay in the context too, until it is deleted). */
void starpu_sched_ctx_finished_submit(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return;
	__atomic_store_n(&c->finished_submit, true, __ATOMIC_SEQ_CST);
	if (_astro_ctx_id(c) != 0 && __atomic_load_n(&c->ntasks, __ATOMIC_SEQ_CST) == 0)
		ctx_close(c);
}

void starpu_sched_ctx_register_close_callback(unsigned sched_ctx_id, void (*close_callback)(unsigned sched_ctx_id, void *args), void *args)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return;
	if (_astro_ctx_id(c) == 0) {
		_astro_error("%s: the global scheduling context is never closed: register the callback on a context you created", __func__);
		return;
	}
	starpu_pthread_mutex_lock(&ctxs_lock);
	c->close_callback = close_callback;
	c->close_args = args;
	starpu_pthread_mutex_unlock(&ctxs_lock);
}

void starpu_sched_ctx_stop_task_submission(void)
{
	for (unsigned id = 1; id < STARPU_NMAX_SCHED_CTXS; id++) {
		struct _astro_sched_ctx *c = &_astro_ctxs[id];
		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == _ASTRO_CTX_FREE)
			continue;
		starpu_pthread_mutex_lock(&c->wait_lock);
		if (c->nwaiting_release < 0)
			c->nwaiting_release = c->nwaiting;
		starpu_pthread_mutex_unlock(&c->wait_lock);
	}
}

/* task, ready, is counted in context to (not yet in its former one, see the revert) and pushed there if push. */
static int ctx_move_task(struct starpu_task *task, unsigned to, bool push)
{
	struct _astro_sched_ctx *t = &_astro_ctxs[to];
	if (to != 0) {
		/* Counted before its state is read, as a submission (see _astro_ctx_task_submitted). */
		__atomic_add_fetch(&t->ntasks, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&t->state, __ATOMIC_SEQ_CST) != _ASTRO_CTX_LIVE) {
			_astro_ctx_task_done(to);
			return -EINVAL;
		}
		_astro_ctx_ready(to, task, 1);
	}
	task->sched_ctx = to;
	return push ? _astro_sched_push(task) : 0;
}

void starpu_sched_ctx_move_task_to_ctx_locked(struct starpu_task *task, unsigned sched_ctx, unsigned with_repush)
{
	if (!task || !_astro_ctx_get(sched_ctx, __func__))
		return;
	if (sched_ctx == STARPU_NMAX_SCHED_CTXS)
		sched_ctx = 0;
	if (with_repush && sched_ctx == task->sched_ctx) {
		/* Its policy's hook holds that context's lock: pushing there again would wait for itself. */
		_astro_error("%s: task '%s' is already in scheduling context %u: give another context, or no repush", __func__,
			     starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)", sched_ctx);
		return;
	}
	if (ctx_move_task(task, sched_ctx, with_repush) != 0)
		_astro_error("%s: scheduling context %u is being deleted: the task stays in context %u", __func__, sched_ctx,
			     task->sched_ctx);
}

void starpu_sched_ctx_revert_task_counters_ctx_locked(unsigned sched_ctx_id, double flops)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c || _astro_ctx_id(c) == 0)
		return; /* the global context's tasks are counted all together */
	__atomic_sub_fetch(&c->nready, 1, __ATOMIC_RELAXED);
	if (flops != 0.0)
		astro_counter_add_double(&c->nready_flops, -flops);
	_astro_ctx_task_done(_astro_ctx_id(c));
}

