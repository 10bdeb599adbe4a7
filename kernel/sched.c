/*
 * Scheduling: selecting the policy, pushing ready tasks and popping them for
 * workers, and the helpers policies call (the global context, worker
 * collections, priorities, local queues).
 */
#include "kernel.h"

#define DEFAULT_POLICY "lws"

/* ------------------------------------------------------- the collection */

static unsigned list_has_next(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it)
{
	return (unsigned)it->cursor < workers->nworkers;
}

static int list_get_next(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it)
{
	return workers->workerids[it->cursor++];
}

static int list_add(struct starpu_worker_collection *workers, int worker)
{
	if (workers->present[worker])
		return -1;
	workers->present[worker] = 1;
	workers->is_unblocked[worker] = 1;
	workers->workerids[workers->nworkers++] = worker;
	return worker;
}

static int list_remove(struct starpu_worker_collection *workers, int worker)
{
	if (!workers->present[worker])
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

static void collection_setup(void)
{
	struct starpu_worker_collection *c = &_astro_rt.collection;
	memset(c, 0, sizeof(*c));
	c->type = STARPU_WORKER_LIST;
	c->has_next = list_has_next;
	c->get_next = list_get_next;
	c->add = list_add;
	c->remove = list_remove;
	c->init = list_init;
	c->deinit = list_deinit;
	c->init_iterator = list_init_iterator;
	c->init_iterator_for_parallel_tasks = list_init_iterator_for_parallel_tasks;
	c->init(c);
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		c->add(c, (int)i);
}

/* ------------------------------------------------------ policy selection */

static struct starpu_sched_policy *choose_policy(void)
{
	const struct starpu_conf *conf = &_astro_rt.conf;
	if (conf->sched_policy && _astro_policy_check(conf->sched_policy, "conf.sched_policy") == 0)
		return conf->sched_policy;
	const char *name = NULL;
	const char *env = getenv("STARPU_SCHED");
	if (conf->sched_policy_name && (conf->precedence_over_environment_variables || !env))
		name = conf->sched_policy_name;
	else if (env && *env)
		name = env;

	if (name && strcmp(name, "help") == 0) {
		_astro_policies_print(stderr);
		name = NULL;
	}
	if (name) {
		struct starpu_sched_policy *p = _astro_policy_lookup(name);
		if (p)
			return p;
		_astro_warn("scheduling policy '%s' was not found (STARPU_SCHED=help lists them): using '%s'",
			    name, DEFAULT_POLICY);
	}
	struct starpu_sched_policy *p = _astro_policy_lookup(DEFAULT_POLICY);
	if (!p) {
		struct starpu_sched_policy **all = starpu_sched_get_predefined_policies();
		p = all[0];
		if (p)
			_astro_warn("default policy '%s' is not available in this build: using '%s'", DEFAULT_POLICY, p->policy_name);
	}
	return p;
}

/* A call of one of the policy's hooks at init or shutdown (never one on the
 * task path), recorded so that a crash there names the policy. */
static void policy_call_enter(struct _astro_foreign_call *call, const struct starpu_sched_policy *policy, const char *hook, void *fn)
{
	_astro_foreign_enter_fn(call, fn, hook, "the policy crashed; fix it or choose another one with STARPU_SCHED",
				"scheduling policy %s's %s", policy->policy_name, hook);
}

int _astro_sched_select(void)
{
	struct starpu_sched_policy *policy = choose_policy();
	if (!policy) {
		_astro_error("no scheduling policy is available: check that the scheduler plugins are installed "
			     "(STARPU_PLUGIN_VERBOSE=1 shows where they are looked for)");
		return -ENODEV;
	}
	_astro_rt.policy = policy;
	_astro_rt.policy_data = NULL;
	collection_setup();
	struct _astro_foreign_call pc;
	if (policy->init_sched) {
		policy_call_enter(&pc, policy, "init_sched", (void *)policy->init_sched);
		policy->init_sched(0);
		_astro_foreign_leave_fn(&pc);
	}
	if (policy->add_workers && _astro_rt.nworkers) {
		int ids[STARPU_NMAXWORKERS];
		for (unsigned i = 0; i < _astro_rt.nworkers; i++)
			ids[i] = (int)i;
		policy_call_enter(&pc, policy, "add_workers", (void *)policy->add_workers);
		policy->add_workers(0, ids, _astro_rt.nworkers);
		_astro_foreign_leave_fn(&pc);
	}
	_astro_verbose("scheduling policy: %s", policy->policy_name);
	return 0;
}

void _astro_sched_deinit(void)
{
	struct starpu_sched_policy *policy = _astro_rt.policy;
	if (!policy)
		return;
	struct _astro_foreign_call pc;
	if (policy->remove_workers && _astro_rt.nworkers) {
		int ids[STARPU_NMAXWORKERS];
		for (unsigned i = 0; i < _astro_rt.nworkers; i++)
			ids[i] = (int)i;
		policy_call_enter(&pc, policy, "remove_workers", (void *)policy->remove_workers);
		policy->remove_workers(0, ids, _astro_rt.nworkers);
		_astro_foreign_leave_fn(&pc);
	}
	if (policy->deinit_sched) {
		policy_call_enter(&pc, policy, "deinit_sched", (void *)policy->deinit_sched);
		policy->deinit_sched(0);
		_astro_foreign_leave_fn(&pc);
	}
	_astro_rt.collection.deinit(&_astro_rt.collection);
	_astro_rt.policy = NULL;
}

/* ---------------------------------------------------------- push / pop */

int _astro_sched_push(struct starpu_task *task)
{
	task->status = STARPU_TASK_READY;
	if (task->execute_on_a_specific_worker) {
		/* Pinned tasks go straight to the worker's local queue, whatever the policy. */
		if (_astro_rt.policy->push_task_notify)
			_astro_rt.policy->push_task_notify(task, (int)task->workerid, (int)task->workerid, 0);
		return starpu_push_local_task((int)task->workerid, task, 1);
	}
	/* Observed before the push: once queued, a worker may run and free the task. */
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_PUSHED, .workerid = _astro_worker_id(), .task = task,
		       .job_id = _astro_job_of(task)->id);
	int ret = _astro_rt.policy->push_task(task);
	if (ret == 0)
		return 0;
	/* The policy refused it: a task is never lost, it goes to a worker that can run it. */
	for (unsigned w = 0; w < _astro_rt.nworkers; w++)
		if (_astro_worker_impl_for((int)w, task) >= 0) {
			_astro_warn("policy '%s' refused task '%s' (%s): it runs on worker %u instead",
				    _astro_rt.policy->policy_name, starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)",
				    strerror(-ret), w);
			return starpu_push_local_task((int)w, task, 1);
		}
	_astro_error("policy '%s' refused task '%s' and no worker can run it", _astro_rt.policy->policy_name,
		     starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)");
	return ret;
}

struct starpu_task *_astro_sched_pop(struct _astro_worker *w, bool again)
{
	struct starpu_task *task = NULL;
	if (__atomic_load_n(&w->nlocal, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&w->local_lock);
		/* A task given a workerorder waits for its turn: the ones before it on this worker ran (from 1). */
		for (task = starpu_task_list_begin(&w->local_tasks); task; task = starpu_task_list_next(task))
			if (!task->workerorder || task->workerorder == w->orders_done + 1)
				break;
		if (task) {
			starpu_task_list_erase(&w->local_tasks, task);
			if (task->workerorder)
				w->orders_done++;
			__atomic_sub_fetch(&w->nlocal, 1, __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&w->local_lock);
		if (task)
			return task;
	}
	/* A disabled worker still asks: policies give it only what was already queued to it (see
	 * starpu_worker_can_execute_task()), as StarPU's w_enable_worker_knob. */
	/* An idle worker polling again is not reported at each empty poll: only the pop that finds work ends its search. */
	if (!again)
		_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_SCHED_BEGIN, .workerid = w->id);
	task = _astro_rt.policy->pop_task(0);
	if (task || !again)
		_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_SCHED_END, .workerid = w->id, .task = task);
	return task;
}

int starpu_push_local_task(int workerid, struct starpu_task *task, int back)
{
	if (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers) {
		_astro_error("starpu_push_local_task: invalid worker id %d (%u workers)", workerid, _astro_rt.nworkers);
		return -EINVAL;
	}
	struct _astro_worker *w = _astro_rt.workers[workerid];
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_PUSHED, .workerid = workerid, .task = task, .job_id = _astro_job_of(task)->id);
	pthread_mutex_lock(&w->local_lock);
	if (back)
		starpu_task_list_push_back(&w->local_tasks, task);
	else
		starpu_task_list_push_front(&w->local_tasks, task);
	__atomic_add_fetch(&w->nlocal, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&w->local_lock);
	_astro_worker_wake(w);
	return 0;
}

int starpu_push_task_end(struct starpu_task *task)
{
	(void)task;
	return 0;
}

void starpu_do_schedule(void)
{
	if (_astro_rt.policy && _astro_rt.policy->do_schedule)
		_astro_rt.policy->do_schedule(0);
}

/* --------------------------------------------------------- can execute */

int _astro_worker_impl_for(int workerid, struct starpu_task *task)
{
	struct _astro_worker *w = _astro_rt.workers[workerid];
	struct starpu_codelet *cl = task->cl;
	if (!_astro_task_where(task, w->driver))
		return -1;
	if (task->execute_on_a_specific_worker && task->workerid != (unsigned)workerid)
		return -1;
	for (unsigned nimpl = 0; nimpl < STARPU_MAXIMPLEMENTATIONS; nimpl++) {
		if (!w->driver->has_impl(cl, nimpl))
			continue;
		if (cl->can_execute && !cl->can_execute((unsigned)workerid, task, nimpl))
			continue;
		return (int)nimpl;
	}
	return -1;
}

int starpu_worker_can_execute_task(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
	if (workerid >= _astro_rt.nworkers || !task || !task->cl)
		return 0;
	struct _astro_worker *w = _astro_rt.workers[workerid];
	struct starpu_codelet *cl = task->cl;
	/* Disabled by starpu.worker.w_enable_worker_knob: no policy hands it new tasks. */
	if (STARPU_UNLIKELY(!__atomic_load_n(&w->enabled, __ATOMIC_RELAXED)))
		return 0;
	if (!_astro_task_where(task, w->driver) || nimpl >= STARPU_MAXIMPLEMENTATIONS || !w->driver->has_impl(cl, nimpl))
		return 0;
	if (task->execute_on_a_specific_worker && task->workerid != workerid)
		return 0;
	return !cl->can_execute || cl->can_execute(workerid, task, nimpl);
}

int starpu_worker_can_execute_task_impl(unsigned workerid, struct starpu_task *task, unsigned *impl_mask)
{
	unsigned mask = 0;
	for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; i++)
		if (starpu_worker_can_execute_task(workerid, task, i))
			mask |= 1u << i;
	if (impl_mask)
		*impl_mask = mask;
	return mask != 0;
}

int starpu_worker_can_execute_task_first_impl(unsigned workerid, struct starpu_task *task, unsigned *nimpl)
{
	for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; i++)
		if (starpu_worker_can_execute_task(workerid, task, i)) {
			if (nimpl)
				*nimpl = i;
			return 1;
		}
	return 0;
}

int starpu_combined_worker_can_execute_task(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
	return starpu_worker_can_execute_task(workerid, task, nimpl);
}

/* ----------------------------------------------------- context helpers */

static bool valid_ctx(unsigned ctx, const char *fn)
{
	if (ctx == 0 || ctx == STARPU_NMAX_SCHED_CTXS)
		return true;
	_astro_error("%s: scheduling context %u does not exist: only the global context 0 exists here", fn, ctx);
	return false;
}

void *starpu_sched_ctx_get_policy_data(unsigned sched_ctx_id)
{
	return valid_ctx(sched_ctx_id, __func__) ? _astro_rt.policy_data : NULL;
}

void starpu_sched_ctx_set_policy_data(unsigned sched_ctx_id, void *policy_data)
{
	if (valid_ctx(sched_ctx_id, __func__))
		_astro_rt.policy_data = policy_data;
}

struct starpu_worker_collection *starpu_sched_ctx_get_worker_collection(unsigned sched_ctx_id)
{
	return valid_ctx(sched_ctx_id, __func__) ? &_astro_rt.collection : NULL;
}

struct starpu_sched_policy *starpu_sched_ctx_get_sched_policy(unsigned sched_ctx_id)
{
	return valid_ctx(sched_ctx_id, __func__) ? _astro_rt.policy : NULL;
}

struct starpu_sched_policy *starpu_sched_get_sched_policy_in_ctx(unsigned sched_ctx_id)
{
	return starpu_sched_ctx_get_sched_policy(sched_ctx_id);
}

struct starpu_sched_policy *starpu_sched_get_sched_policy(void)
{
	return _astro_rt.policy;
}

const char *starpu_sched_ctx_get_sched_policy_name(unsigned sched_ctx_id)
{
	struct starpu_sched_policy *p = starpu_sched_ctx_get_sched_policy(sched_ctx_id);
	return p ? p->policy_name : NULL;
}

unsigned starpu_sched_ctx_get_nworkers(unsigned sched_ctx_id)
{
	return valid_ctx(sched_ctx_id, __func__) ? _astro_rt.nworkers : 0;
}

unsigned starpu_sched_ctx_get_workers_list(unsigned sched_ctx_id, int **workerids)
{
	unsigned n = starpu_sched_ctx_get_nworkers(sched_ctx_id);
	*workerids = malloc((n ? n : 1) * sizeof(int));
	for (unsigned i = 0; i < n; i++)
		(*workerids)[i] = (int)i;
	return n;
}

unsigned starpu_sched_ctx_get_workers_list_raw(unsigned sched_ctx_id, int **workerids)
{
	*workerids = _astro_rt.collection.workerids;
	return starpu_sched_ctx_get_nworkers(sched_ctx_id);
}

unsigned starpu_sched_ctx_contains_worker(int workerid, unsigned sched_ctx_id)
{
	return sched_ctx_id == 0 && workerid >= 0 && (unsigned)workerid < _astro_rt.nworkers;
}

unsigned starpu_sched_ctx_get_context(void)
{
	return 0;
}

void starpu_sched_ctx_set_context(unsigned *sched_ctx_id)
{
	if (sched_ctx_id)
		valid_ctx(*sched_ctx_id, __func__);
}

int starpu_sched_ctx_get_min_priority(unsigned sched_ctx_id) { (void)sched_ctx_id; return _astro_rt.min_prio; }
int starpu_sched_ctx_get_max_priority(unsigned sched_ctx_id) { (void)sched_ctx_id; return _astro_rt.max_prio; }
int starpu_sched_ctx_min_priority_is_set(unsigned sched_ctx_id) { (void)sched_ctx_id; return _astro_rt.min_prio_set; }
int starpu_sched_ctx_max_priority_is_set(unsigned sched_ctx_id) { (void)sched_ctx_id; return _astro_rt.max_prio_set; }

int starpu_sched_ctx_set_min_priority(unsigned sched_ctx_id, int min_prio)
{
	if (!valid_ctx(sched_ctx_id, __func__))
		return -EINVAL;
	_astro_rt.min_prio = min_prio;
	_astro_rt.min_prio_set = true;
	return 0;
}

int starpu_sched_ctx_set_max_priority(unsigned sched_ctx_id, int max_prio)
{
	if (!valid_ctx(sched_ctx_id, __func__))
		return -EINVAL;
	_astro_rt.max_prio = max_prio;
	_astro_rt.max_prio_set = true;
	return 0;
}

int starpu_sched_get_min_priority(void) { return _astro_rt.min_prio; }
int starpu_sched_get_max_priority(void) { return _astro_rt.max_prio; }
int starpu_sched_set_min_priority(int min_prio) { return starpu_sched_ctx_set_min_priority(0, min_prio); }
int starpu_sched_set_max_priority(int max_prio) { return starpu_sched_ctx_set_max_priority(0, max_prio); }

int starpu_get_prefetch_flag(void)
{
	return _astro_env_int_in("STARPU_PREFETCH", 0, 1, 1);
}

/* A policy prefetches a task it queues: the transfer thread copies its read
 * inputs to node while the workers compute. */
static int prefetch_task_input(struct starpu_task *task, unsigned node, const char *fn)
{
	if (!task || node >= starpu_memory_nodes_get_count()) {
		_astro_error("%s: %s: give a task and a memory node below %u", fn, task ? "no such memory node" : "NULL task",
			     starpu_memory_nodes_get_count());
		return -EINVAL;
	}
	if (_astro_rt.nmemory_nodes <= 1 || !task->cl)
		return 0;
	unsigned n = _astro_task_nbuffers(task);
	for (unsigned i = 0; i < n; i++) {
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		if ((mode & STARPU_R) && !(mode & STARPU_SCRATCH)) {
			starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
			_astro_data_hold(h);
			_astro_transfer_submit(h, node, NULL);
		}
	}
	task->prefetched = 1;
	return 0;
}

int starpu_prefetch_task_input_on_node(struct starpu_task *task, unsigned node)
{
	return prefetch_task_input(task, node, "starpu_prefetch_task_input_on_node");
}

int starpu_prefetch_task_input_for(struct starpu_task *task, unsigned worker)
{
	return prefetch_task_input(task, starpu_worker_get_memory_node(worker), "starpu_prefetch_task_input_for");
}

int starpu_idle_prefetch_task_input_for(struct starpu_task *task, unsigned worker)
{
	return prefetch_task_input(task, starpu_worker_get_memory_node(worker), "starpu_idle_prefetch_task_input_for");
}

double starpu_data_expected_transfer_time(starpu_data_handle_t handle, unsigned memory_node, enum starpu_data_access_mode mode)
{
	if (!handle) {
		_astro_error("starpu_data_expected_transfer_time: NULL handle: pass a registered data handle");
		return NAN;
	}
	if (!(mode & STARPU_R))
		return 0.0;
	return _astro_data_transfer_time(handle, memory_node, mode);
}

double starpu_task_expected_data_transfer_time(unsigned memory_node, struct starpu_task *task)
{
	double total = 0.0;
	unsigned n = task && task->cl ? (unsigned)STARPU_TASK_GET_NBUFFERS(task) : 0;
	for (unsigned i = 0; i < n; i++)
		total += starpu_data_expected_transfer_time(STARPU_TASK_GET_HANDLE(task, i), memory_node, STARPU_TASK_GET_MODE(task, i));
	return total;
}

double starpu_task_expected_data_transfer_time_for(struct starpu_task *task, unsigned worker)
{
	if (worker >= starpu_worker_get_count()) {
		_astro_error("starpu_task_expected_data_transfer_time_for: no worker %u (there are %u)", worker, starpu_worker_get_count());
		return NAN;
	}
	return starpu_task_expected_data_transfer_time(starpu_worker_get_memory_node(worker), task);
}
