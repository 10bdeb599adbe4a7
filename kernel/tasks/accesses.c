/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A job's accesses to its handles: implicit dependencies, the execution
 * locks of accesses that exclude each other while they run, and fetching a
 * task's data before it runs.
 *
 * Implicit dependencies follow submission order per handle: a reader depends
 * on the last writer; a writer depends on the last writer and every reader
 * since. A handle only ever points at jobs that have not terminated: a
 * terminating job unlinks itself under the handle lock, so whoever finds a
 * job through the handle may link to it safely.
 */
#include "tasks/tasks.h"

int _astro_plans;
int (*_astro_plans_task_switch)(struct starpu_task *task);

/* ----------------------------------------------------- implicit dependencies */

static void data_dependency(struct _astro_job *pred, struct _astro_job *succ)
{
	if (_astro_job_add_succ(pred, succ))
		_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_DEPENDENCY, .workerid = _astro_worker_id(), .task = succ->task, .job_id = succ->id,
			       .other_id = pred->id, .nimpl = ASTRO_DEP_DATA);
}

static void hold_materialize(starpu_data_handle_t handle);

/* consistency: the task's flag for this handle (STARPU_HANDLES_SEQUENTIAL_CONSISTENCY), -1 for the handle's own. */
void _astro_access_link(struct _astro_job *job, struct _astro_data_link *link, int consistency)
{
	starpu_data_handle_t h = link->handle;
	starpu_pthread_mutex_lock(&h->lock);
	if (STARPU_UNLIKELY(h->fast_hold))
		hold_materialize(h);
	h->busy++;
	link->registered = true;
	if ((consistency < 0 ? h->sequential_consistency : (unsigned)consistency) && !(link->mode & STARPU_SCRATCH)) {
		if (h->last_writer)
			data_dependency(h->last_writer, job);
		/* Commuting writes run after the accesses before them, before the ones after
		 * them, and in any order among themselves (they exclude each other as they run). */
		link->commute = (link->mode & STARPU_COMMUTE) && _astro_mode_writes(link->mode);
		link->redux = (link->mode & STARPU_REDUX) && !link->commute && _astro_redux_private(h);
		if (_astro_mode_writes(link->mode) && !link->commute && !link->redux) {
			struct _astro_data_link *r = h->readers;
			while (r) {
				struct _astro_data_link *next = r->next;
				data_dependency(r->job, job);
				r->in_readers = false;
				r->prev = r->next = NULL;
				r = next;
			}
			h->readers = NULL;
			h->ncommute = 0;
			h->nredux = 0;
			h->last_writer = job;
			link->is_writer = true;
		} else {
			/* Reads, commuting writes and reductions each share the handle among themselves:
			 * an access waits for the accesses of the other kinds before it. */
			if (h->ncommute || h->nredux || link->commute || link->redux)
				for (struct _astro_data_link *r = h->readers; r; r = r->next)
					if (r->commute != link->commute || r->redux != link->redux)
						data_dependency(r->job, job);
			link->prev = NULL;
			link->next = h->readers;
			if (h->readers)
				h->readers->prev = link;
			h->readers = link;
			link->in_readers = true;
			if (link->commute)
				h->ncommute++;
			if (link->redux)
				h->nredux++;
		}
	}
	starpu_pthread_mutex_unlock(&h->lock);
}

/* finishing: the task's callbacks are still to run, the handle stays held for them (_astro_data_callback_done). */
static void un_astro_access_link(struct _astro_job *job, struct _astro_data_link *link, bool finishing)
{
	starpu_data_handle_t h = link->handle;
	starpu_pthread_mutex_lock(&h->lock);
	if (link->is_writer && h->last_writer == job)
		h->last_writer = NULL;
	if (link->in_readers) {
		if (link->prev)
			link->prev->next = link->next;
		else
			h->readers = link->next;
		if (link->next)
			link->next->prev = link->prev;
		link->in_readers = false;
		if (link->commute)
			h->ncommute--;
		if (link->redux)
			h->nredux--;
	}
	link->is_writer = false;
	link->registered = false;
	if (finishing)
		h->finishing++;
	if (--h->busy == 0)
		_astro_data_idle_wake(h);
	starpu_pthread_mutex_unlock(&h->lock);
}

/* Does waiter only read h (h->lock held)? Its first link to h holds the union of its modes for
 * it and was linked under that lock: the links before it are set too, and nothing after is read. */
static bool only_reads(struct _astro_job *waiter, starpu_data_handle_t h)
{
	for (unsigned i = 0; i < waiter->nbuffers; i++)
		if (waiter->links[i].handle == h)
			return !_astro_mode_writes(waiter->links[i].mode);
	return false;
}

unsigned _astro_access_downgrade(struct _astro_job *job, struct _astro_data_link *link, struct _astro_job ***waiters)
{
	starpu_data_handle_t h = link->handle;
	struct _astro_job **go = NULL;
	unsigned ngo = 0;
	starpu_pthread_mutex_lock(&h->lock);
	link->mode = (link->mode & ~(STARPU_W | STARPU_COMMUTE)) | STARPU_R;
	if (link->is_writer) {
		link->is_writer = false;
		if (h->last_writer == job) {
			/* The accesses submitted from now on see a reader: writes wait for it, reads do not. */
			h->last_writer = NULL;
			link->prev = NULL;
			link->next = h->readers;
			if (h->readers)
				h->readers->prev = link;
			h->readers = link;
			link->in_readers = true;
		}
		/* The reads submitted since wait for nothing else of it: they go. The writes
		 * submitted since (and the reads after them, through them) keep waiting. */
		astro_lock_acquire(&job->lock);
		go = malloc(job->nsuccs * sizeof(*go));
		unsigned kept = 0;
		for (unsigned i = 0; i < job->nsuccs; i++) {
			uintptr_t entry = (uintptr_t)job->succs[i];
			if (go && !(entry & _ASTRO_END_DEP_BIT) && only_reads((struct _astro_job *)entry, h))
				go[ngo++] = (struct _astro_job *)entry;
			else
				job->succs[kept++] = job->succs[i];
		}
		job->nsuccs = kept;
		astro_lock_release(&job->lock);
	}
	starpu_pthread_mutex_unlock(&h->lock);
	*waiters = go;
	return ngo;
}

struct _astro_data_link *_astro_job_links(struct _astro_job *job, unsigned n)
{
	if (n <= sizeof(job->inline_links) / sizeof(job->inline_links[0])) {
		if (job->links && job->links != job->inline_links)
			free(job->links);
		job->links = job->inline_links;
	} else {
		if (job->links == job->inline_links || job->nbuffers < n) {
			if (job->links != job->inline_links)
				free(job->links);
			job->links = malloc(n * sizeof(*job->links));
		}
	}
	memset(job->links, 0, n * sizeof(*job->links));
	job->nbuffers = n;
	return job->links;
}

void _astro_data_submit_accesses(struct _astro_job *job, struct starpu_task *task)
{
	unsigned n = _astro_task_nbuffers(task);
	if (STARPU_UNLIKELY(job->nodeps)) {
		/* starpu_task_submit_nodeps(): the accesses are only fetched (the submitter holds the data, e.g. a meta task). */
		job->nodeps = false;
		struct _astro_data_link *links = n ? _astro_job_links(job, n) : NULL;
		for (unsigned i = 0; i < n; i++) {
			links[i].job = job;
			links[i].handle = STARPU_TASK_GET_HANDLE(task, i);
			links[i].mode = STARPU_TASK_GET_MODE(task, i);
		}
		job->nbuffers = n;
		return;
	}
	if (n == 0) {
		job->nbuffers = 0;
		return;
	}
	struct _astro_data_link *links = _astro_job_links(job, n);
	bool consistency = task->sequential_consistency;
	for (unsigned i = 0; i < n; i++) {
		links[i].job = job;
		links[i].handle = STARPU_TASK_GET_HANDLE(task, i);
		links[i].mode = STARPU_TASK_GET_MODE(task, i);
		int handle_consistency = task->handles_sequential_consistency ? task->handles_sequential_consistency[i] : -1;
		links[i].unordered = !(links[i].mode & STARPU_SCRATCH) &&
				     (!consistency || !(handle_consistency < 0 ? links[i].handle->sequential_consistency : (unsigned)handle_consistency));
		if (!consistency)
			links[i].mode |= STARPU_SCRATCH; /* no ordering, only the busy count */
		/* The same handle twice in one task: one access, with the union of the modes. */
		bool repeated = false;
		for (unsigned j = 0; j < i; j++)
			if (links[j].handle == links[i].handle) {
				repeated = true;
				break;
			}
		if (repeated)
			continue;
		for (unsigned j = i + 1; j < n; j++)
			if (STARPU_TASK_GET_HANDLE(task, j) == links[i].handle)
				links[i].mode |= STARPU_TASK_GET_MODE(task, j);
		_astro_access_link(job, &links[i], handle_consistency);
	}
}

static void exec_unlock(struct _astro_data_link *link)
{
	starpu_data_handle_t h = link->handle;
	starpu_pthread_mutex_lock(&h->lock);
	if (_astro_mode_writes(link->mode))
		h->exec_writer = false;
	else
		h->exec_readers--;
	link->exec_locked = false;
	starpu_pthread_cond_broadcast(&h->exec_cond);
	struct starpu_arbiter *arbiter = h->arbiter;
	starpu_pthread_mutex_unlock(&h->lock);
	if (arbiter)
		_astro_arbiter_wake(arbiter);
}

unsigned _astro_data_release_accesses(struct _astro_job *job, starpu_data_handle_t *held)
{
	unsigned nheld = 0;
	for (unsigned i = 0; i < job->nbuffers; i++) {
		if (job->links[i].exec_locked)
			exec_unlock(&job->links[i]);
		if (job->links[i].registered) {
			un_astro_access_link(job, &job->links[i], held != NULL);
			if (held)
				held[nheld++] = job->links[i].handle;
		}
	}
	return nheld;
}

/* Takes link's execution lock if it is free (h->lock held): readers share, a writer owns. */
static bool exec_grab(struct _astro_data_link *link, bool take)
{
	starpu_data_handle_t h = link->handle;
	bool writes = _astro_mode_writes(link->mode);
	if (h->exec_writer || (writes && h->exec_readers))
		return false;
	if (take) {
		if (writes)
			h->exec_writer = true;
		else
			h->exec_readers++;
		link->exec_locked = true;
	}
	return true;
}

bool _astro_data_exec_try(struct _astro_data_link *link, bool take)
{
	starpu_pthread_mutex_lock(&link->handle->lock);
	bool free = exec_grab(link, take);
	starpu_pthread_mutex_unlock(&link->handle->lock);
	return free;
}

static void exec_lock(struct _astro_data_link *link)
{
	starpu_data_handle_t h = link->handle;
	starpu_pthread_mutex_lock(&h->lock);
	while (!exec_grab(link, true))
		starpu_pthread_cond_wait(&h->exec_cond, &h->lock);
	starpu_pthread_mutex_unlock(&h->lock);
}

/* The order execution locks are taken in: the handles of an arbiter together
 * (arbiters in address order, before the handles of none), then by address. */
static bool exec_before(const struct _astro_data_link *a, const struct _astro_data_link *b)
{
	uintptr_t aa = (uintptr_t)a->handle->arbiter, ba = (uintptr_t)b->handle->arbiter;
	if (aa != ba)
		return aa && (!ba || aa < ba);
	return (uintptr_t)a->handle < (uintptr_t)b->handle;
}

/* Takes the execution locks of the unordered accesses in one order (exec_before), so
 * two tasks cannot wait on each other; an arbiter takes those of its handles at once. */
static inline __attribute__((always_inline)) void exec_lock_unordered(struct _astro_job *job)
{
	unsigned n = 0;
	struct _astro_data_link *sorted[job->nbuffers ? job->nbuffers : 1];
	for (unsigned i = 0; i < job->nbuffers; i++) {
		struct _astro_data_link *link = &job->links[i];
		if (!link->registered || !(link->unordered || link->commute))
			continue;
		unsigned pos = n++;
		while (pos > 0 && exec_before(link, sorted[pos - 1])) {
			sorted[pos] = sorted[pos - 1];
			pos--;
		}
		sorted[pos] = link;
	}
	for (unsigned i = 0; i < n;) {
		struct starpu_arbiter *arbiter = sorted[i]->handle->arbiter;
		if (!arbiter) {
			exec_lock(sorted[i++]);
			continue;
		}
		unsigned end = i + 1;
		while (end < n && sorted[end]->handle->arbiter == arbiter)
			end++;
		_astro_arbiter_lock(arbiter, sorted + i, end - i);
		i = end;
	}
}

/* -------------------------------------------------------------- fetching */

bool _astro_data_fetch_start(struct _astro_job *job, struct starpu_task *task, unsigned node)
{
	unsigned n = _astro_task_nbuffers(task);
	for (unsigned i = 0; i < job->nbuffers; i++)
		if (job->links[i].unordered || job->links[i].commute)
			return false;
	for (unsigned i = 0; i < n; i++) {
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		if ((mode & (STARPU_SCRATCH | STARPU_REDUX)) || h->ops->is_multiformat || __atomic_load_n(&h->redux, __ATOMIC_RELAXED))
			return false;
	}
	for (unsigned i = 0; i < n; i++) {
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		if (_astro_coherency_fetch_async(h, node, mode) != 0) {
			/* No room yet (the running task's data is pinned there): the task fetches at its execution. */
			while (i-- > 0)
				_astro_coherency_unpin(STARPU_TASK_GET_HANDLE(task, i), node, STARPU_TASK_GET_MODE(task, i));
			return false;
		}
	}
	return true;
}

/* The data of task could not all be brought to node (told): its first npinned accesses, pinned
 * there, are let go; the task is not to run. -ENOMEM. */
static __attribute__((noinline, cold)) int fetch_failed(struct starpu_task *task, unsigned node, unsigned npinned)
{
	for (unsigned i = 0; i < npinned; i++) {
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		if ((mode & STARPU_SCRATCH) || ((mode & STARPU_REDUX) && _astro_redux_private(h)))
			continue;
		if (h->ops->is_multiformat)
			_astro_multiformat_executed(h, node, mode);
		_astro_coherency_unpin(h, node, mode);
	}
	_astro_error("task '%s' (job %lu) failed: its data could not be brought to memory node %u; it does not run, its status is "
		     "STARPU_TASK_STOPPED, its callback runs and the program goes on", starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)",
		     _astro_job_of(task)->id, node);
	return -ENOMEM;
}

/* Both entry points below, each its own copy: the common one pays nothing for the other. */
static inline __attribute__((always_inline)) int fetch(struct _astro_job *job, struct starpu_task *task, unsigned node, void **buffers,
						       bool started)
{
	unsigned n = _astro_task_nbuffers(task);
	/* One memory node: every copy is main memory's, nothing to move (the one branch this costs). */
	bool coherent = _astro_rt.nmemory_nodes > 1;
	/* Handles registered on no node get their buffer at their first use. */
	bool lazy = __atomic_load_n(&_astro_unallocated_handles, __ATOMIC_RELAXED) != 0;
	exec_lock_unordered(job);
	void **interfaces = task->dyn_handles ? NULL : task->interfaces;
	if (task->dyn_handles && !task->dyn_interfaces)
		task->dyn_interfaces = calloc(n, sizeof(void *));
	if (task->dyn_handles)
		interfaces = task->dyn_interfaces;
	for (unsigned i = 0; i < n; i++) {
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		if (STARPU_UNLIKELY(mode & STARPU_REDUX) && _astro_redux_private(h)) {
			if (STARPU_UNLIKELY(!(buffers[i] = interfaces[i] = _astro_redux_buffer(h, node))))
				return fetch_failed(task, node, coherent ? (started ? n : i) : 0);
			continue;
		}
		if (STARPU_UNLIKELY(__atomic_load_n(&h->redux, __ATOMIC_ACQUIRE) != NULL) && _astro_redux_combine(h) != 0)
			return fetch_failed(task, node, coherent ? (started ? n : i) : 0);
		if (STARPU_UNLIKELY(coherent) && !(mode & STARPU_SCRATCH) &&
		    (started ? _astro_coherency_arrived(h, node) : _astro_coherency_fetch(h, node, mode, true)) != 0)
			return fetch_failed(task, node, started ? n : i);
		if (STARPU_UNLIKELY(coherent) && h->ops->is_multiformat && !(mode & STARPU_SCRATCH) &&
		    _astro_multiformat_fetched(h, node, mode) != 0) {
			/* Not converted: nothing to convert back (never fetched ahead: the prefetch leaves multiformat data). */
			_astro_coherency_unpin(h, node, mode);
			return fetch_failed(task, node, i);
		}
		if (STARPU_UNLIKELY(lazy) && !coherent && !(mode & STARPU_SCRATCH) && !h->replicates[node].allocated &&
		    !_astro_coherency_materialize(h, node))
			return fetch_failed(task, node, 0);
		void *iface = h->iface[node];
		/* The worker's own buffer of that layout, never the application's data. */
		if (STARPU_UNLIKELY(mode & STARPU_SCRATCH) && !(iface = _astro_scratch_buffer(h, node)))
			return fetch_failed(task, node, coherent ? i : 0);
		buffers[i] = iface;
		interfaces[i] = iface;
	}
	return 0;
}

int _astro_data_fetch(struct _astro_job *job, struct starpu_task *task, unsigned node, void **buffers)
{
	return fetch(job, task, node, buffers, false);
}

int _astro_data_fetch_arrived(struct _astro_job *job, struct starpu_task *task, unsigned node, void **buffers)
{
	return fetch(job, task, node, buffers, true);
}

/* Out of line: the single-node path does not pay for its frame. */
static __attribute__((noinline)) void unpin_all(struct starpu_task *task, unsigned n, unsigned node)
{
	for (unsigned i = 0; i < n; i++) {
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
		if ((mode & STARPU_SCRATCH) || ((mode & STARPU_REDUX) && _astro_redux_private(h)))
			continue;
		if (h->ops->is_multiformat)
			_astro_multiformat_executed(h, node, mode);
		_astro_coherency_unpin(h, node, mode);
		/* Write-through (starpu_data_set_wt_mask): the new value goes to those nodes at once. */
		uint32_t wt = __atomic_load_n(&h->wt_mask, __ATOMIC_RELAXED);
		if ((mode & STARPU_W) && wt)
			for (unsigned other = 0; other < _astro_rt.nmemory_nodes; other++)
				if (other != node && (wt & (1u << other)))
					_astro_coherency_fetch(h, other, STARPU_R, false);
	}
}

void _astro_data_executed(struct _astro_job *job, struct starpu_task *task, unsigned node)
{
	(void)job;
	if (STARPU_UNLIKELY(_astro_rt.nmemory_nodes > 1))
		unpin_all(task, _astro_task_nbuffers(task), node);
}

/* ------------------------------------------------------- uncontended acquires */

/* An application acquire of main memory on a free handle (no access pending,
 * nothing to move: one memory node) is granted at once, without a job: the
 * handle records it in fast_hold, and its busy count keeps unregistration
 * waiting. The next access registered on the handle (link_access: a task, an
 * acquire, an unregistration) first turns that record into a granted acquire
 * job, so the access is ordered after it as if the acquire had taken the
 * usual path; the release of a record still there just clears it. One record
 * at a time: a second acquire takes the usual path. Liveness is read from the
 * handle's magic, as the task path does, not from the table of live handles
 * under its global lock; a handle that is not live goes the usual way, which
 * reports it. */

/* Records an acquire of handle in mode, by callback (NULL: a blocking acquire), if nothing stands in its way (false: take the usual path). */
bool _astro_hold_try(starpu_data_handle_t handle, enum starpu_data_access_mode mode, void (*callback)(void *))
{
	if ((mode != STARPU_R && mode != STARPU_W && mode != STARPU_RW) || !_astro_handle_magic_live(handle) || handle->readonly ||
	    _astro_rt.nmemory_nodes != 1 ||
	    __atomic_load_n(&_astro_unallocated_handles, __ATOMIC_RELAXED) || __atomic_load_n(&_astro_plans, __ATOMIC_RELAXED))
		return false;
	starpu_pthread_mutex_lock(&handle->lock);
	bool granted = handle->sequential_consistency && !handle->last_writer && !handle->readers && !handle->acquires && !handle->fast_hold &&
		       !__atomic_load_n(&handle->redux, __ATOMIC_RELAXED);
	if (granted) {
		handle->fast_hold = mode;
		handle->fast_hold_callback = callback;
		handle->busy++;
	}
	starpu_pthread_mutex_unlock(&handle->lock);
	return granted;
}

/* The record becomes a granted acquire job, the oldest of the handle's acquires (handle->lock held). */
static void hold_materialize(starpu_data_handle_t handle)
{
	struct _astro_job *job = _astro_job_new_internal();
	job->pending = 0;
	job->acquire_ready = 1;
	job->acquire_node = STARPU_MAIN_RAM;
	job->acquire_callback = handle->fast_hold_callback; /* already called: it tells unregistration what this acquire is */
	_ASTRO_OBSERVE(ASTRO_MOMENT_RUNTIME_JOB, .workerid = _astro_worker_id(), .job_id = job->id, .object = handle, .nimpl = 1,
		       .label = job->acquire_callback ? ACQUIRE_CB_LABEL : ACQUIRE_LABEL);
	struct _astro_data_link *link = _astro_job_links(job, 1);
	link->job = job;
	link->handle = handle;
	link->mode = handle->fast_hold;
	link->registered = true; /* the record's busy count is now this access's */
	/* Granted on a free handle, and every access since came through here: no writer, no reader. */
	if (_astro_mode_writes(link->mode)) {
		handle->last_writer = job;
		link->is_writer = true;
	} else {
		handle->readers = link;
		link->in_readers = true;
	}
	struct _astro_job **tail = &handle->acquires;
	while (*tail)
		tail = &(*tail)->next_acquire;
	*tail = job;
	handle->fast_hold = 0;
}

/* Ends the handle's record if it is still one (handle->lock held; false: there is none). */
bool _astro_hold_release(starpu_data_handle_t handle)
{
	if (!handle->fast_hold)
		return false;
	handle->fast_hold = 0;
	--handle->busy;
	_astro_data_idle_wake(handle); /* an unregistration may wait for it, or for the busy count */
	return true;
}

