/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Accesses to handles outside the task path: the application's acquires and
 * releases (an uncontended one granted at once, tasks/accesses.c), the
 * runtime's own acquires (prefetches, fetches, wont_use), invalidation and
 * unregistration.
 */
#include "access/access.h"

/* ---------------------------------------------------------- acquire/release */

static int acquire_checks(starpu_data_handle_t handle, enum starpu_data_access_mode mode, const char *fn)
{
	if (!_astro_data_live(handle, fn))
		return -EINVAL;
	if (_astro_data_check_mode(mode) != 0 || (mode & (STARPU_SCRATCH | STARPU_REDUX))) {
		_astro_error("%s: invalid access mode 0x%x: use STARPU_R, STARPU_W or STARPU_RW", fn, (unsigned)mode);
		return -EINVAL;
	}
	if (handle->readonly && (mode & STARPU_W)) {
		_astro_error("%s: the handle is a read-only copy (starpu_data_dup_ro): acquire it with STARPU_R", fn);
		return -EINVAL;
	}
	return 0;
}

/* An acquire of handle: by the application (on its stack of acquires, released by
 * starpu_data_release) or by the runtime itself (a prefetch). Once its
 * dependencies are met, the data is brought to node (-1: left where it is). */
static struct _astro_job *acquire_submit(starpu_data_handle_t handle, enum starpu_data_access_mode mode, int node,
					 void (*callback)(void *), void *arg, bool sequential_consistency, bool by_application,
					 long *jobid)
{
	struct _astro_job *job = _astro_job_new_internal();
	if (jobid)
		*jobid = (long)job->id;
	job->acquire_callback = callback;
	/* The runtime's own callbacks get the job. */
	job->acquire_arg = by_application ? arg : job;
	job->acquire_node = node;
	job->acquire_evict = false;
	struct _astro_data_link *link = _astro_job_links(job, 1);
	link->job = job;
	link->handle = handle;
	link->mode = sequential_consistency ? mode : (mode | STARPU_SCRATCH);
	_ASTRO_OBSERVE(ASTRO_MOMENT_RUNTIME_JOB, .workerid = _astro_worker_id(), .job_id = job->id, .object = handle,
		       .nimpl = by_application, .label = !by_application ? "starpu_data_unregister_submit" : callback ? ACQUIRE_CB_LABEL : ACQUIRE_LABEL);
	if (by_application) {
		if (STARPU_UNLIKELY(__atomic_load_n(&_astro_plans, __ATOMIC_RELAXED)))
			_astro_plans_access(handle, mode);
		starpu_pthread_mutex_lock(&handle->lock);
		job->next_acquire = handle->acquires;
		handle->acquires = job;
		starpu_pthread_mutex_unlock(&handle->lock);
	}
	_astro_access_link(job, link, -1);
	_astro_job_release(job);
	return job;
}

/* The node an application acquire brings the data to: main memory unless it names one (or none). */
static int acquire_node(int node, const char *fn)
{
	if (node == STARPU_ACQUIRE_NO_NODE || node == STARPU_ACQUIRE_NO_NODE_LOCK_ALL)
		return -1;
	if (node < 0 || (unsigned)node >= starpu_memory_nodes_get_count()) {
		_astro_warn("%s: no memory node %d (there are %u): main memory is used", fn, node, starpu_memory_nodes_get_count());
		return STARPU_MAIN_RAM;
	}
	return node;
}

/* What a blocking acquire waits for, noted when it is called (the handle no longer tells once it is linked):
 * its idle-wait report names it. */
struct acquire_wait
{
	starpu_data_handle_t handle;
	enum starpu_data_access_mode mode;
	unsigned long writer_id;             /* the last writer's job, 0: none */
	char writer[96];
	unsigned nreaders;                   /* reads before it that a write waits for */
	unsigned nheld;                      /* acquires of it the application holds */
};

static void note_awaited(struct acquire_wait *aw)
{
	starpu_data_handle_t h = aw->handle;
	starpu_pthread_mutex_lock(&h->lock);
	struct _astro_job *w = h->last_writer;
	if (w) {
		aw->writer_id = w->id;
		const char *name = w->task ? starpu_task_get_name(w->task) : NULL;
		snprintf(aw->writer, sizeof(aw->writer), w->task ? "task '%s'" : "an acquire of it in write mode", name ? name : "(unnamed)");
	}
	if (aw->mode & STARPU_W)
		for (struct _astro_data_link *r = h->readers; r; r = r->next)
			aw->nreaders++;
	for (struct _astro_job *j = h->acquires; j; j = j->next_acquire)
		aw->nheld += __atomic_load_n(&j->acquire_ready, __ATOMIC_ACQUIRE) != 0;
	aw->nheld += h->fast_hold != 0;
	starpu_pthread_mutex_unlock(&h->lock);
}

static void describe_acquire(GString *out, const char *prefix, const void *arg)
{
	const struct acquire_wait *aw = arg;
	g_string_append_printf(out, "%sthe data acquired, handle %s (mode %s), waits for the accesses submitted before the acquire:",
			       prefix, aw->handle->name ? aw->handle->name : "(unnamed)",
			       (aw->mode & STARPU_RW) == STARPU_RW ? "STARPU_RW" : aw->mode & STARPU_W ? "STARPU_W" : "STARPU_R");
	if (aw->writer_id)
		g_string_append_printf(out, " its last writer, %s (job %lu), not complete;", aw->writer, aw->writer_id);
	if (aw->nreaders)
		g_string_append_printf(out, " %u reads of it;", aw->nreaders);
	if (aw->nheld)
		g_string_append_printf(out, " %u acquires of it the application holds (starpu_data_release them first);", aw->nheld);
	if (!aw->writer_id && !aw->nreaders && !aw->nheld)
		g_string_append(out, " none was left when it was called;");
	g_string_append(out, " what those wait for is said above and below\n");
}

static void release_granted(starpu_data_handle_t handle);

static int acquire_blocking(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode, const char *fn)
{
	if (_astro_forbid_blocking(fn, "use starpu_data_acquire_cb"))
		return -EDEADLK;
	if (node == STARPU_MAIN_RAM && _astro_hold_try(handle, mode, NULL)) {
		_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_BEGIN, .workerid = -1);
		_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_END, .workerid = -1);
		return 0;
	}
	int ret = acquire_checks(handle, mode, fn);
	if (ret)
		return ret;
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_BEGIN, .workerid = -1);
	struct acquire_wait aw = { .handle = handle, .mode = mode };
	note_awaited(&aw);
	node = acquire_node(node, fn);
	struct _astro_job *job = acquire_submit(handle, mode, node, NULL, NULL, true, true, NULL);
	if (!__atomic_load_n(&job->acquire_ready, __ATOMIC_ACQUIRE)) {
		struct _astro_idle_watch watch;
		_astro_idle_watch_begin(&watch, fn, NULL, describe_acquire, &aw);
		for (;;) {
			astro_futex_wait_for(&job->acquire_ready, 0, _astro_idle_watch_sleep_ns(&watch));
			if (__atomic_load_n(&job->acquire_ready, __ATOMIC_ACQUIRE))
				break; /* granted: nothing to look at */
			_astro_idle_watch_look(&watch);
		}
	}
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_END, .workerid = -1);
	if (STARPU_UNLIKELY(__atomic_load_n(&job->acquire_ready, __ATOMIC_ACQUIRE) == 2)) {
		/* Its data could not be brought where it is wanted (said): nothing is held. */
		release_granted(handle);
		_astro_error("%s: the data of handle %s could not be brought to memory node %d (see above): the acquire fails and "
			     "holds nothing; free some memory or raise the memory limit", fn, handle->name ? handle->name : "(unnamed)",
			     node);
		return -ENOMEM;
	}
	return 0;
}

int starpu_data_acquire_on_node(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode)
{
	return acquire_blocking(handle, node, mode, "starpu_data_acquire_on_node");
}

int starpu_data_acquire(starpu_data_handle_t handle, enum starpu_data_access_mode mode)
{
	return acquire_blocking(handle, STARPU_MAIN_RAM, mode, "starpu_data_acquire");
}

int starpu_data_acquire_cb_sequential_consistency(starpu_data_handle_t handle, enum starpu_data_access_mode mode,
						  void (*callback)(void *), void *arg, int sequential_consistency)
{
	if (callback && sequential_consistency && _astro_hold_try(handle, mode, callback)) {
		/* Granted at once: the callback runs here, as it does when the usual path finds the handle free. */
		enum _astro_call_context previous = _astro_context_enter(_ASTRO_CTX_CALLBACK);
		callback(arg);
		_astro_context_leave(previous);
		return 0;
	}
	int ret = acquire_checks(handle, mode, "starpu_data_acquire_cb");
	if (ret)
		return ret;
	if (!callback) {
		_astro_error("starpu_data_acquire_cb: NULL callback: use starpu_data_acquire for a blocking acquire");
		return -EINVAL;
	}
	acquire_submit(handle, mode, STARPU_MAIN_RAM, callback, arg, sequential_consistency != 0, true, NULL);
	return 0;
}

int starpu_data_acquire_cb(starpu_data_handle_t handle, enum starpu_data_access_mode mode, void (*callback)(void *), void *arg)
{
	return starpu_data_acquire_cb_sequential_consistency(handle, mode, callback, arg, 1);
}

static int acquire_on_node_cb(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode, void (*callback)(void *),
			      void *arg, int sequential_consistency, const char *fn, long *jobid)
{
	int ret = acquire_checks(handle, mode, fn);
	if (ret)
		return ret;
	if (!callback) {
		_astro_error("%s: NULL callback: use starpu_data_acquire_on_node for a blocking acquire", fn);
		return -EINVAL;
	}
	acquire_submit(handle, mode, acquire_node(node, fn), callback, arg, sequential_consistency != 0, true, jobid);
	return 0;
}

int starpu_data_acquire_on_node_cb(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode, void (*callback)(void *), void *arg)
{
	return acquire_on_node_cb(handle, node, mode, callback, arg, 1, "starpu_data_acquire_on_node_cb", NULL);
}

int starpu_data_acquire_on_node_cb_sequential_consistency(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode,
							  void (*callback)(void *), void *arg, int sequential_consistency)
{
	return acquire_on_node_cb(handle, node, mode, callback, arg, sequential_consistency,
				  "starpu_data_acquire_on_node_cb_sequential_consistency", NULL);
}

/* quick lets StarPU skip its synchronisation task when the data is there already: the
 * acquire here is one job either way, so the callback runs as it would without it. */
int starpu_data_acquire_on_node_cb_sequential_consistency_quick(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode,
								void (*callback)(void *), void *arg, int sequential_consistency, int quick)
{
	(void)quick;
	return acquire_on_node_cb(handle, node, mode, callback, arg, sequential_consistency,
				  "starpu_data_acquire_on_node_cb_sequential_consistency_quick", NULL);
}

/* The acquire is one job from its grant to its release: both synchronisation points are that job. */
int starpu_data_acquire_on_node_cb_sequential_consistency_sync_jobids(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode,
								      void (*callback)(void *), void *arg, int sequential_consistency,
								      int quick, long *pre_sync_jobid, long *post_sync_jobid)
{
	(void)quick;
	long id = -1;
	int ret = acquire_on_node_cb(handle, node, mode, callback, arg, sequential_consistency,
				     "starpu_data_acquire_on_node_cb_sequential_consistency_sync_jobids", &id);
	if (pre_sync_jobid)
		*pre_sync_jobid = ret ? -1 : id;
	if (post_sync_jobid)
		*post_sync_jobid = ret ? -1 : id;
	return ret;
}

/* Granted only when no access submitted before it is left: then the data is brought to node (a blocking transfer). */
static int acquire_try(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode, const char *fn)
{
	int ret = acquire_checks(handle, mode, fn);
	if (ret)
		return ret;
	starpu_pthread_mutex_lock(&handle->lock);
	bool free_now = !handle->last_writer && !(handle->fast_hold && _astro_mode_writes(handle->fast_hold)) &&
			(!_astro_mode_writes(mode) || (!handle->readers && !handle->fast_hold));
	starpu_pthread_mutex_unlock(&handle->lock);
	if (!free_now)
		return -EAGAIN;
	acquire_submit(handle, mode, acquire_node(node, fn), NULL, NULL, true, true, NULL);
	return 0;
}

int starpu_data_acquire_on_node_try(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode)
{
	return acquire_try(handle, node, mode, "starpu_data_acquire_on_node_try");
}

int starpu_data_acquire_try(starpu_data_handle_t handle, enum starpu_data_access_mode mode)
{
	return acquire_try(handle, STARPU_MAIN_RAM, mode, "starpu_data_acquire_try");
}

/* The most recent acquire of handle that was granted (requests still pending, of
 * starpu_data_acquire_cb, are not), NULL when none (handle->lock held). */
static struct _astro_job **granted_acquire(starpu_data_handle_t handle)
{
	struct _astro_job **link = &handle->acquires;
	while (*link && !__atomic_load_n(&(*link)->acquire_ready, __ATOMIC_ACQUIRE))
		link = &(*link)->next_acquire;
	return link;
}

/* Releases the most recent granted acquire of a handle known to be there (its unregistration
 * may be submitted already: it waits for this release). */
static void release_granted(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&handle->lock);
	if (_astro_hold_release(handle)) {
		starpu_pthread_mutex_unlock(&handle->lock);
		return;
	}
	struct _astro_job **link = granted_acquire(handle);
	struct _astro_job *job = *link;
	if (job) {
		*link = job->next_acquire;
		_astro_data_idle_wake(handle); /* an unregister may wait for the acquires */
	}
	starpu_pthread_mutex_unlock(&handle->lock);
	if (!job) {
		_astro_error("starpu_data_release: the handle is not acquired (or its requests are not granted yet): call starpu_data_acquire first");
		return;
	}
	_astro_job_terminate(job, -1);
	_astro_job_free(job);
}

void starpu_data_release_on_node(starpu_data_handle_t handle, int node)
{
	(void)node;
	/* A request submitted before starpu_data_unregister_submit() (a detached
	 * StarPU-MPI send, say) releases the handle that unregistration waits for. */
	if (_astro_handle_magic_live(handle) || (handle && __atomic_load_n(&handle->magic, __ATOMIC_ACQUIRE) == _ASTRO_HANDLE_UNREGISTERING) ||
	    _astro_data_live(handle, "starpu_data_release"))
		release_granted(handle);
}

void starpu_data_release(starpu_data_handle_t handle)
{
	starpu_data_release_on_node(handle, STARPU_MAIN_RAM);
}

void starpu_data_release_to_on_node(starpu_data_handle_t handle, enum starpu_data_access_mode down_to_mode, int node)
{
	if (down_to_mode == STARPU_NONE) {
		starpu_data_release_on_node(handle, node);
		return;
	}
	if (!_astro_data_live(handle, "starpu_data_release_to"))
		return;
	starpu_pthread_mutex_lock(&handle->lock);
	struct _astro_job *job = handle->fast_hold ? NULL : *granted_acquire(handle);
	enum starpu_data_access_mode held = handle->fast_hold ? handle->fast_hold
				     : job ? job->links[0].mode & (STARPU_R | STARPU_W) : STARPU_NONE;
	bool lower = down_to_mode == STARPU_R && (held & STARPU_W);
	if (lower && handle->fast_hold)
		handle->fast_hold = STARPU_R; /* granted on a free handle: no access waits for it */
	starpu_pthread_mutex_unlock(&handle->lock);
	if (held == STARPU_NONE)
		_astro_error("starpu_data_release_to: the handle is not acquired (or its requests are not granted yet): call "
			     "starpu_data_acquire first");
	else if (lower && job) {
		struct _astro_job **reads;
		unsigned n = _astro_access_downgrade(job, &job->links[0], &reads);
		for (unsigned i = 0; i < n; i++)
			_astro_job_release(reads[i]);
		free(reads);
	}
	else if (!lower && down_to_mode != held)
		_astro_error("starpu_data_release_to: an acquire in mode 0x%x cannot go to mode 0x%x: give STARPU_R (from "
			     "STARPU_W or STARPU_RW), STARPU_NONE to release it, or its own mode to keep it",
			     (unsigned)held, (unsigned)down_to_mode);
}

void starpu_data_release_to(starpu_data_handle_t handle, enum starpu_data_access_mode down_to_mode)
{
	starpu_data_release_to_on_node(handle, down_to_mode, STARPU_MAIN_RAM);
}

/* ------------------------------------------------------------ unregister */

static void handle_free(starpu_data_handle_t handle)
{
	__atomic_store_n(&handle->magic, _ASTRO_HANDLE_DEAD, __ATOMIC_RELEASE);
	_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_UNREGISTERED, .workerid = _astro_worker_id(), .object = handle);
	_astro_redux_drop(handle);
	_astro_scratch_drop(handle);
	if (handle->ops->is_multiformat)
		__atomic_sub_fetch(&_astro_multiformat_handles, 1, __ATOMIC_RELAXED);
	_astro_coherency_free_devices(handle);
	_astro_coherency_allocated(handle);
	starpu_pthread_mutex_destroy(&handle->coherency_lock);
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		if (handle->owns_alloc[node] && handle->ops->free_data_on_node) {
			size_t bytes = starpu_data_get_alloc_size(handle);
			_ASTRO_OBSERVE(ASTRO_MOMENT_MEMORY_STATE_BEGIN, .workerid = _astro_worker_id(), .dst_node = node, .bytes = bytes,
				       .object = handle, .nimpl = ASTRO_MEMORY_FREEING);
			handle->ops->free_data_on_node(handle->iface[node], node);
			_ASTRO_OBSERVE(ASTRO_MOMENT_MEMORY_STATE_END, .workerid = _astro_worker_id(), .dst_node = node, .bytes = bytes,
				       .object = handle, .nimpl = ASTRO_MEMORY_FREEING);
		}
	}
	/* The interface's own metadata in each node's interface (the buffers are gone). */
	if (handle->ops->unregister_data_handle)
		handle->ops->unregister_data_handle(handle);
	for (unsigned node = 0; node < STARPU_MAXNODES; node++)
		free(handle->iface[node]);
	starpu_pthread_mutex_destroy(&handle->lock);
	starpu_pthread_cond_destroy(&handle->idle_cond);
	starpu_pthread_cond_destroy(&handle->exec_cond);
	starpu_pthread_mutex_destroy(&handle->redux_lock);
	_astro_plans_forget(handle);
	_astro_arbiter_forget(handle);
	free(handle->name);
	_astro_data_quarantine(handle);
}

/* The checks, then the handle is unregistered for the application: false if refused (reported). */
static bool unregister_claim(starpu_data_handle_t handle, const char *fn)
{
	if (!_astro_data_live(handle, fn))
		return false;
	if (_astro_forbid_blocking(fn, "use starpu_data_unregister_submit; the call is ignored"))
		return false;
	/* Its partition plans give it the data back first (their switches still access it). */
	_astro_plans_gather(handle);
	starpu_pthread_mutex_lock(&handle->lock);
	/* Requests of starpu_data_acquire_cb() are waited for, as StarPU does: their callbacks release them. */
	for (;;) {
		bool only_requests = (handle->acquires != NULL || handle->fast_hold) && (!handle->fast_hold || handle->fast_hold_callback);
		for (struct _astro_job *j = handle->acquires; j; j = j->next_acquire)
			if (!j->acquire_callback)
				only_requests = false;
		if (!only_requests)
			break;
		_astro_data_idle_wait(handle);
	}
	bool acquired = handle->acquires != NULL || handle->fast_hold;
	starpu_pthread_mutex_unlock(&handle->lock);
	if (acquired) {
		_astro_error("%s: the handle is still acquired by the application: call starpu_data_release first", fn);
		return false;
	}
	/* Unregistered for the other data calls, still live for tasks (its magic stays) until it is unused. */
	return _astro_data_live_or_claim(handle, fn, _ASTRO_HANDLE_MAGIC);
}

static void unregister(starpu_data_handle_t handle, const char *fn, bool coherent)
{
	if (!unregister_claim(handle, fn))
		return;
	/* The children are views into this buffer: gather them first. */
	if (handle->nchildren)
		starpu_data_unpartition(handle, STARPU_MAIN_RAM);
	/* Every task already submitted on it completes first, whatever its consistency, and so do
	 * the tasks their callbacks submit on it meanwhile, as in StarPU; then it is dead for tasks too. */
	_astro_data_wait_unused(handle, _ASTRO_HANDLE_DEAD);
	if (coherent)
		_astro_data_write_back_home(handle);
	handle_free(handle);
}

void starpu_data_unregister(starpu_data_handle_t handle)
{
	unregister(handle, "starpu_data_unregister", true);
}

void starpu_data_unregister_no_coherency(starpu_data_handle_t handle)
{
	unregister(handle, "starpu_data_unregister_no_coherency", false);
}

/* Ends a runtime acquire from its own callback (arg: the job): its data was brought where it was asked. */
static void runtime_acquire_done(void *arg)
{
	struct _astro_job *job = arg;
	_astro_job_terminate(job, -1);
	_astro_job_free(job);
}

/* An asynchronous prefetch's data is accessible: the transfer thread moves it, then ends the acquire. */
static void prefetch_ready(void *arg)
{
	struct _astro_job *job = arg;
	_astro_transfer_submit(job->links[0].handle, (unsigned)job->prefetch_node, (enum starpu_is_prefetch)job->prefetch_level,
			       job->prefetch_prio, runtime_acquire_done, job);
}

/* A runtime acquire: once the accesses submitted before it are done, the
 * data is brought to node (evict: then the devices' copies are freed), and
 * the acquire ends. Waits for that unless async; an asynchronous one goes to
 * the transfer thread at level and prio. */
static int runtime_acquire(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode, bool evict,
			   unsigned async, enum starpu_is_prefetch level, int prio, const char *fn)
{
	if (!_astro_data_live(handle, fn))
		return -EINVAL;
	if (node < 0 || (unsigned)node >= starpu_memory_nodes_get_count()) {
		_astro_error("%s: no memory node %d (there are %u): use starpu_worker_get_memory_node()", fn, node,
			     starpu_memory_nodes_get_count());
		return -EINVAL;
	}
	if (!async && _astro_forbid_blocking(fn, "pass async=1"))
		return -EDEADLK;
	struct _astro_job *job = _astro_job_new_internal();
	_ASTRO_OBSERVE(ASTRO_MOMENT_RUNTIME_JOB, .workerid = _astro_worker_id(), .job_id = job->id, .object = handle, .label = fn);
	job->acquire_node = node;
	job->acquire_evict = evict;
	struct _astro_data_link *link = _astro_job_links(job, 1);
	link->job = job;
	link->handle = handle;
	link->mode = mode;
	if (async) {
		/* A prefetch moves its data on the transfer thread; the others (wont_use) are quick. */
		bool prefetch = !evict && node != STARPU_MAIN_RAM && _astro_rt.nmemory_nodes > 1;
		job->acquire_callback = prefetch ? prefetch_ready : runtime_acquire_done;
		job->acquire_arg = job;
		if (prefetch) {
			job->prefetch_node = node;
			job->prefetch_level = (unsigned char)level;
			job->prefetch_prio = (short)(prio > SHRT_MAX ? SHRT_MAX : prio < SHRT_MIN ? SHRT_MIN : prio);
			job->acquire_node = -1;
		}
	}
	_astro_access_link(job, link, -1);
	_astro_job_release(job);
	if (!async) {
		while (!__atomic_load_n(&job->acquire_ready, __ATOMIC_ACQUIRE))
			astro_futex_wait(&job->acquire_ready, 0);
		runtime_acquire_done(job);
	}
	return 0;
}

int starpu_data_fetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async)
{
	return runtime_acquire(handle, (int)node, STARPU_R, false, async, STARPU_FETCH, 0, "starpu_data_fetch_on_node");
}

int starpu_data_prefetch_on_node_prio(starpu_data_handle_t handle, unsigned node, unsigned async, int prio)
{
	return runtime_acquire(handle, (int)node, STARPU_R, false, async, STARPU_PREFETCH, prio, "starpu_data_prefetch_on_node_prio");
}

int starpu_data_prefetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async)
{
	return runtime_acquire(handle, (int)node, STARPU_R, false, async, STARPU_PREFETCH, 0, "starpu_data_prefetch_on_node");
}

int starpu_data_idle_prefetch_on_node_prio(starpu_data_handle_t handle, unsigned node, unsigned async, int prio)
{
	return runtime_acquire(handle, (int)node, STARPU_R, false, async, STARPU_IDLEFETCH, prio, "starpu_data_idle_prefetch_on_node_prio");
}

int starpu_data_idle_prefetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async)
{
	return runtime_acquire(handle, (int)node, STARPU_R, false, async, STARPU_IDLEFETCH, 0, "starpu_data_idle_prefetch_on_node");
}

static void unregister_when_ready(void *arg)
{
	struct _astro_job *job = arg;
	starpu_data_handle_t handle = job->links[0].handle;
	/* Our own acquire brought the data home: drop it, then free once idle. */
	_astro_job_terminate(job, -1);
	_astro_job_free(job);
	_astro_data_wait_idle(handle);
	/* A callback of a task that accessed it may still run (maybe on this thread, further up): the last frees it. */
	if (!_astro_data_free_when_done(handle, handle_free))
		handle_free(handle);
}

void starpu_data_unregister_submit(starpu_data_handle_t handle)
{
	if (!_astro_data_live_or_claim(handle, "starpu_data_unregister_submit", _ASTRO_HANDLE_UNREGISTERING))
		return;
	handle->unregistering = true;
	acquire_submit(handle, STARPU_RW, handle->home_node, unregister_when_ready, NULL, true, false, NULL);
}

static void invalidate_now(starpu_data_handle_t handle)
{
	/* Every copy stays allocated; none is valid any more (the next access finds undefined content). */
	_astro_redux_drop(handle);
	_astro_coherency_invalidate(handle);
	_astro_redux_invalidated(handle);
}

void starpu_data_invalidate(starpu_data_handle_t handle)
{
	if (_astro_data_live(handle, "starpu_data_invalidate"))
		invalidate_now(handle);
}

/* Invalidation keeps the buffers here: deinitializing is the same. */
void starpu_data_deinitialize(starpu_data_handle_t handle)
{
	if (_astro_data_live(handle, "starpu_data_deinitialize"))
		invalidate_now(handle);
}

/* The handle's unregistration may have been submitted since (starpu_data_partition_clean after
 * an invalidate_submit on a piece): it waits for this request, so the handle is still there. */
static void invalidate_when_ready(void *arg)
{
	starpu_data_handle_t handle = arg;
	invalidate_now(handle);
	release_granted(handle);
}

static void invalidate_submit(starpu_data_handle_t handle, const char *fn)
{
	if (!_astro_data_live(handle, fn))
		return;
	/* After the accesses submitted before it, which may still read the copies (a write access: nothing is fetched). */
	starpu_data_acquire_cb(handle, STARPU_W, invalidate_when_ready, handle);
}

void starpu_data_invalidate_submit(starpu_data_handle_t handle)
{
	invalidate_submit(handle, "starpu_data_invalidate_submit");
}

void starpu_data_deinitialize_submit(starpu_data_handle_t handle)
{
	invalidate_submit(handle, "starpu_data_deinitialize_submit");
}

void starpu_data_wont_use(starpu_data_handle_t handle)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_WONT_USE, .workerid = _astro_worker_id(), .object = handle);
	/* After the accesses submitted so far: back to main memory, the devices' room freed. */
	if (_astro_rt.nmemory_nodes > 1)
		runtime_acquire(handle, STARPU_MAIN_RAM, STARPU_R, true, 1, STARPU_FETCH, 0, "starpu_data_wont_use");
}

