/*
 * Data handles: registration, sequential consistency (implicit dependencies),
 * application acquire/release and unregistration.
 *
 * Implicit dependencies follow submission order per handle: a reader depends
 * on the last writer; a writer depends on the last writer and every reader
 * since. A handle only ever points at jobs that have not terminated: a
 * terminating job unlinks itself under the handle lock, so whoever finds a
 * job through the handle may link to it safely.
 */
#include "kernel.h"
#include <stdarg.h>

static unsigned default_sequential_consistency = 1;

/* ------------------------------------------------------ live handles */

/* A handle used after its unregistration must get a message, not a double
 * free: the data entry points look the handle up among the live ones (never
 * reading a dead handle's memory), and the task path and the uncontended
 * acquires and releases, which cannot afford a look-up, check its magic,
 * cleared at unregistration. The structs of the
 * last unregistered handles stay allocated (a quarantine), so that this read
 * finds the cleared magic rather than freed memory. */
#define HANDLE_DEAD 0xdeadda7au
/* Unregistration submitted, not done: the requests before it may still release the handle. */
#define HANDLE_UNREGISTERING 0xdeadb10cu
#define QUARANTINE_SIZE 64
static starpu_pthread_mutex_t live_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *live_handles;
static struct _starpu_data_state *quarantine[QUARANTINE_SIZE];
static unsigned quarantine_next;

static void handle_track(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&live_lock);
	if (!live_handles)
		live_handles = g_hash_table_new(g_direct_hash, g_direct_equal);
	handle->magic = _ASTRO_HANDLE_MAGIC;
	g_hash_table_add(live_handles, handle);
	starpu_pthread_mutex_unlock(&live_lock);
}

static void report_dead(starpu_data_handle_t handle, const char *fn)
{
	if (!handle)
		_astro_error("%s: NULL handle: register the data first", fn);
	else
		_astro_error("%s: handle %p is not registered (already unregistered?): register the data again to use it", fn, (void *)handle);
}

/* Is handle registered? Reports it when not. With claim, it is unregistered
 * for the application at the same time (its struct is freed later, once idle). */
static bool handle_live_or_claim(starpu_data_handle_t handle, const char *fn, unsigned claim_magic)
{
	bool live = false;
	if (handle) {
		starpu_pthread_mutex_lock(&live_lock);
		live = live_handles && (claim_magic ? g_hash_table_remove(live_handles, handle) : g_hash_table_contains(live_handles, handle));
		if (live && claim_magic)
			__atomic_store_n(&handle->magic, claim_magic, __ATOMIC_RELEASE);
		starpu_pthread_mutex_unlock(&live_lock);
	}
	if (!live)
		report_dead(handle, fn);
	return live;
}

static bool handle_live(starpu_data_handle_t handle, const char *fn)
{
	return handle_live_or_claim(handle, fn, 0);
}

bool _astro_data_live(starpu_data_handle_t handle, const char *fn)
{
	return handle_live(handle, fn);
}

static bool handle_claim(starpu_data_handle_t handle, const char *fn)
{
	return handle_live_or_claim(handle, fn, HANDLE_DEAD);
}

/* Frees the struct of an unregistered handle after a while. */
static void handle_quarantine(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&live_lock);
	struct _starpu_data_state *evicted = quarantine[quarantine_next];
	quarantine[quarantine_next] = handle;
	quarantine_next = (quarantine_next + 1) % QUARANTINE_SIZE;
	starpu_pthread_mutex_unlock(&live_lock);
	free(evicted);
}

int _astro_data_check_mode(enum starpu_data_access_mode mode)
{
	unsigned base = mode & (STARPU_RW | STARPU_SCRATCH | STARPU_REDUX);
	unsigned known = STARPU_RW | STARPU_SCRATCH | STARPU_REDUX | STARPU_COMMUTE | STARPU_SSEND |
			 STARPU_LOCALITY | STARPU_MPI_REDUX | STARPU_NOPLAN | STARPU_UNMAP | STARPU_NOFOOTPRINT;
	if (mode & ~known)
		return -EINVAL;
	if (base == STARPU_R || base == STARPU_W || base == STARPU_RW || base == STARPU_SCRATCH || base == STARPU_REDUX)
		return 0;
	return -EINVAL;
}

static bool mode_writes(enum starpu_data_access_mode mode)
{
	/* Commuting and reduction accesses are serialised like writes: a valid order among the allowed ones. */
	return (mode & (STARPU_W | STARPU_REDUX)) != 0;
}

/* ------------------------------------------------------------ registration */

void starpu_data_register(starpu_data_handle_t *handleptr, int home_node, void *data_interface, struct starpu_data_interface_ops *ops)
{
	if (!handleptr || !data_interface || !ops) {
		_astro_error("starpu_data_register: NULL handle pointer, interface or ops");
		return;
	}
	if (home_node >= STARPU_MAXNODES || home_node < -1) {
		_astro_error("starpu_data_register: invalid home node %d: use STARPU_MAIN_RAM or -1", home_node);
		*handleptr = NULL;
		return;
	}
	starpu_data_register_ops(ops);
	struct _starpu_data_state *h = calloc(1, sizeof(*h));
	h->ops = ops;
	h->home_node = home_node;
	starpu_pthread_mutex_init(&h->lock, NULL);
	starpu_pthread_cond_init(&h->idle_cond, NULL);
	starpu_pthread_cond_init(&h->exec_cond, NULL);
	starpu_pthread_mutex_init(&h->redux_lock, NULL);
	h->sequential_consistency = default_sequential_consistency;
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		h->iface[node] = calloc(1, ops->interface_size);
		memcpy(h->iface[node], data_interface, ops->interface_size);
		if (ops->init)
			ops->init(h->iface[node]);
	}
	/* The interface fills each node's interface (before any allocation uses them). */
	if (ops->register_data_handle)
		ops->register_data_handle(h, home_node, data_interface);
	/* No home: the buffer is allocated where the data is first used. */
	_astro_coherency_register(h, home_node);
	if (ops->is_multiformat)
		__atomic_add_fetch(&_astro_multiformat_handles, 1, __ATOMIC_RELAXED);
	if (_astro_memory_stats_enabled)
		_astro_memory_stats_register(h);
	handle_track(h);
	*handleptr = h;
	_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_REGISTERED, .workerid = _astro_worker_id(), .object = h,
		       .dst_node = (unsigned)home_node, .bytes = starpu_data_get_size(h));
}

/* Ids of the interfaces the application defines, past the built-in ones. */
static int next_interface_id = STARPU_MAX_INTERFACE_ID;

int starpu_data_interface_get_next_id(void)
{
	return __atomic_fetch_add(&next_interface_id, 1, __ATOMIC_RELAXED);
}

void starpu_data_register_ops(struct starpu_data_interface_ops *ops)
{
	if (!ops) {
		_astro_error("starpu_data_register_ops: NULL ops");
		return;
	}
	/* Two first registrations of the same ops at once must agree on one id. */
	int unknown = STARPU_UNKNOWN_INTERFACE_ID;
	if (__atomic_load_n((int *)&ops->interfaceid, __ATOMIC_RELAXED) == STARPU_UNKNOWN_INTERFACE_ID)
		__atomic_compare_exchange_n((int *)&ops->interfaceid, &unknown, starpu_data_interface_get_next_id(), false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void starpu_data_register_same(starpu_data_handle_t *handledst, starpu_data_handle_t handlesrc)
{
	void *iface = malloc(handlesrc->ops->interface_size);
	if (!iface) {
		_astro_error("starpu_data_register_same: out of memory");
		*handledst = NULL;
		return;
	}
	/* The source may be in use: a worker may be allocating its main-memory copy (coherency.c). */
	starpu_pthread_mutex_lock(&handlesrc->coherency_lock);
	memcpy(iface, handlesrc->iface[STARPU_MAIN_RAM], handlesrc->ops->interface_size);
	starpu_pthread_mutex_unlock(&handlesrc->coherency_lock);
	starpu_data_register(handledst, -1, iface, handlesrc->ops);
	free(iface);
}

void *starpu_data_get_interface_on_node(starpu_data_handle_t handle, unsigned memory_node)
{
	if (!handle || memory_node >= STARPU_MAXNODES)
		return NULL;
	return handle->iface[memory_node];
}

struct starpu_data_interface_ops *starpu_data_get_interface_ops(starpu_data_handle_t handle)
{
	return handle ? handle->ops : NULL;
}

int starpu_data_pointer_is_inside(starpu_data_handle_t handle, unsigned node, void *ptr)
{
	if (!handle_live(handle, "starpu_data_pointer_is_inside") || node >= STARPU_MAXNODES)
		return -1;
	if (!handle->ops->pointer_is_inside)
		return -1;
	return handle->ops->pointer_is_inside(handle->iface[node], node, ptr) ? 1 : 0;
}

/* ----------------------------------------------------- implicit dependencies */

static void data_dependency(struct _astro_job *pred, struct _astro_job *succ)
{
	if (_astro_job_add_succ(pred, succ))
		_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_DEPENDENCY, .workerid = _astro_worker_id(), .task = succ->task, .job_id = succ->id,
			       .other_id = pred->id, .nimpl = ASTRO_DEP_DATA);
}

static void hold_materialize(starpu_data_handle_t handle);

/* consistency: the task's flag for this handle (STARPU_HANDLES_SEQUENTIAL_CONSISTENCY), -1 for the handle's own. */
static void link_access(struct _astro_job *job, struct _astro_data_link *link, int consistency)
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
		link->commute = (link->mode & STARPU_COMMUTE) && mode_writes(link->mode);
		link->redux = (link->mode & STARPU_REDUX) && !link->commute && _astro_redux_private(h);
		if (mode_writes(link->mode) && !link->commute && !link->redux) {
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

static void unlink_access(struct _astro_job *job, struct _astro_data_link *link)
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
	if (--h->busy == 0)
		starpu_pthread_cond_broadcast(&h->idle_cond);
	starpu_pthread_mutex_unlock(&h->lock);
}

static struct _astro_data_link *job_links(struct _astro_job *job, unsigned n)
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
	if (n == 0) {
		job->nbuffers = 0;
		return;
	}
	struct _astro_data_link *links = job_links(job, n);
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
		link_access(job, &links[i], handle_consistency);
	}
}

static void exec_unlock(struct _astro_data_link *link)
{
	starpu_data_handle_t h = link->handle;
	starpu_pthread_mutex_lock(&h->lock);
	if (mode_writes(link->mode))
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

void _astro_data_release_accesses(struct _astro_job *job)
{
	for (unsigned i = 0; i < job->nbuffers; i++) {
		if (job->links[i].exec_locked)
			exec_unlock(&job->links[i]);
		if (job->links[i].registered)
			unlink_access(job, &job->links[i]);
	}
}

/* Takes link's execution lock if it is free (h->lock held): readers share, a writer owns. */
static bool exec_grab(struct _astro_data_link *link, bool take)
{
	starpu_data_handle_t h = link->handle;
	bool writes = mode_writes(link->mode);
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

/* Both entry points below, each its own copy: the common one pays nothing for the other. */
static inline __attribute__((always_inline)) void fetch(struct _astro_job *job, struct starpu_task *task, unsigned node, void **buffers,
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
			buffers[i] = interfaces[i] = _astro_redux_buffer(h, node);
			continue;
		}
		if (STARPU_UNLIKELY(__atomic_load_n(&h->redux, __ATOMIC_ACQUIRE) != NULL))
			_astro_redux_combine(h);
		if (STARPU_UNLIKELY(coherent) && !(mode & STARPU_SCRATCH) &&
		    (started ? _astro_coherency_arrived(h, node) : _astro_coherency_fetch(h, node, mode, true)) != 0) {
			_astro_error("task '%s' cannot run: its data could not be brought to memory node %u", starpu_task_get_name(task), node);
			abort();
		}
		if (STARPU_UNLIKELY(coherent) && h->ops->is_multiformat && !(mode & STARPU_SCRATCH))
			_astro_multiformat_fetched(h, node, mode);
		if (STARPU_UNLIKELY(lazy) && !coherent && !(mode & STARPU_SCRATCH) && !h->replicates[node].allocated &&
		    !_astro_coherency_materialize(h, node)) {
			_astro_error("task '%s' cannot run: its data has no buffer on memory node %u", starpu_task_get_name(task), node);
			abort();
		}
		void *iface = h->iface[node];
		/* The worker's own buffer of that layout, never the application's data. */
		if (STARPU_UNLIKELY(mode & STARPU_SCRATCH))
			iface = _astro_scratch_buffer(h, node);
		buffers[i] = iface;
		interfaces[i] = iface;
	}
}

void _astro_data_fetch(struct _astro_job *job, struct starpu_task *task, unsigned node, void **buffers)
{
	fetch(job, task, node, buffers, false);
}

void _astro_data_fetch_arrived(struct _astro_job *job, struct starpu_task *task, unsigned node, void **buffers)
{
	fetch(job, task, node, buffers, true);
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

static bool handle_magic_live(starpu_data_handle_t handle)
{
	return handle && __atomic_load_n(&handle->magic, __ATOMIC_ACQUIRE) == _ASTRO_HANDLE_MAGIC;
}

/* Records an acquire of handle in mode, by callback (NULL: a blocking acquire), if nothing stands in its way (false: take the usual path). */
static bool hold_try(starpu_data_handle_t handle, enum starpu_data_access_mode mode, void (*callback)(void *))
{
	if ((mode != STARPU_R && mode != STARPU_W && mode != STARPU_RW) || !handle_magic_live(handle) || _astro_rt.nmemory_nodes != 1 ||
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

/* What observers call an acquisition's job (StarPU's names for the tasks of its acquisitions, which starpu_fxt_tool's
 * -no-acquire hides from dag.dot). */
#define ACQUIRE_LABEL "_starpu_data_acquire_post"
#define ACQUIRE_CB_LABEL "_starpu_data_acquire_cb_post"

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
	struct _astro_data_link *link = job_links(job, 1);
	link->job = job;
	link->handle = handle;
	link->mode = handle->fast_hold;
	link->registered = true; /* the record's busy count is now this access's */
	/* Granted on a free handle, and every access since came through here: no writer, no reader. */
	if (mode_writes(link->mode)) {
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
static bool hold_release(starpu_data_handle_t handle)
{
	if (!handle->fast_hold)
		return false;
	handle->fast_hold = 0;
	--handle->busy;
	starpu_pthread_cond_broadcast(&handle->idle_cond); /* an unregistration may wait for it, or for the busy count */
	return true;
}

/* ---------------------------------------------------------- acquire/release */

static int acquire_checks(starpu_data_handle_t handle, enum starpu_data_access_mode mode, const char *fn)
{
	if (!handle_live(handle, fn))
		return -EINVAL;
	if (_astro_data_check_mode(mode) != 0 || (mode & (STARPU_SCRATCH | STARPU_REDUX))) {
		_astro_error("%s: invalid access mode 0x%x: use STARPU_R, STARPU_W or STARPU_RW", fn, (unsigned)mode);
		return -EINVAL;
	}
	return 0;
}

/* An acquire of handle: by the application (on its stack of acquires, released by
 * starpu_data_release) or by the runtime itself (a prefetch). Once its
 * dependencies are met, the data is brought to node (-1: left where it is). */
static struct _astro_job *acquire_submit(starpu_data_handle_t handle, enum starpu_data_access_mode mode, int node,
					 void (*callback)(void *), void *arg, bool sequential_consistency, bool by_application)
{
	struct _astro_job *job = _astro_job_new_internal();
	job->acquire_callback = callback;
	/* The runtime's own callbacks get the job. */
	job->acquire_arg = by_application ? arg : job;
	job->acquire_node = node;
	job->acquire_evict = false;
	struct _astro_data_link *link = job_links(job, 1);
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
	link_access(job, link, -1);
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

static int acquire_blocking(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode, const char *fn)
{
	if (_astro_forbid_blocking(fn, "use starpu_data_acquire_cb"))
		return -EDEADLK;
	if (node == STARPU_MAIN_RAM && hold_try(handle, mode, NULL)) {
		_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_BEGIN, .workerid = -1);
		_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_END, .workerid = -1);
		return 0;
	}
	int ret = acquire_checks(handle, mode, fn);
	if (ret)
		return ret;
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_BEGIN, .workerid = -1);
	struct _astro_job *job = acquire_submit(handle, mode, acquire_node(node, fn), NULL, NULL, true, true);
	while (!__atomic_load_n(&job->acquire_ready, __ATOMIC_ACQUIRE))
		astro_futex_wait(&job->acquire_ready, 0);
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_END, .workerid = -1);
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
	if (callback && sequential_consistency && hold_try(handle, mode, callback)) {
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
	acquire_submit(handle, mode, STARPU_MAIN_RAM, callback, arg, sequential_consistency != 0, true);
	return 0;
}

int starpu_data_acquire_cb(starpu_data_handle_t handle, enum starpu_data_access_mode mode, void (*callback)(void *), void *arg)
{
	return starpu_data_acquire_cb_sequential_consistency(handle, mode, callback, arg, 1);
}

int starpu_data_acquire_on_node_cb(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode, void (*callback)(void *), void *arg)
{
	int ret = acquire_checks(handle, mode, "starpu_data_acquire_on_node_cb");
	if (ret)
		return ret;
	if (!callback) {
		_astro_error("starpu_data_acquire_on_node_cb: NULL callback: use starpu_data_acquire_on_node for a blocking acquire");
		return -EINVAL;
	}
	acquire_submit(handle, mode, acquire_node(node, "starpu_data_acquire_on_node_cb"), callback, arg, true, true);
	return 0;
}

int starpu_data_acquire_try(starpu_data_handle_t handle, enum starpu_data_access_mode mode)
{
	int ret = acquire_checks(handle, mode, "starpu_data_acquire_try");
	if (ret)
		return ret;
	starpu_pthread_mutex_lock(&handle->lock);
	bool free_now = !handle->last_writer && !(handle->fast_hold && mode_writes(handle->fast_hold)) &&
			(!mode_writes(mode) || (!handle->readers && !handle->fast_hold));
	starpu_pthread_mutex_unlock(&handle->lock);
	if (!free_now)
		return -EAGAIN;
	acquire_submit(handle, mode, STARPU_MAIN_RAM, NULL, NULL, true, true);
	return 0;
}

/* Releases the most recent granted acquire of a handle known to be there (its unregistration
 * may be submitted already: it waits for this release). */
static void release_granted(starpu_data_handle_t handle)
{
	/* The most recent acquire that was granted: requests still pending (starpu_data_acquire_cb) stay. */
	starpu_pthread_mutex_lock(&handle->lock);
	if (hold_release(handle)) {
		starpu_pthread_mutex_unlock(&handle->lock);
		return;
	}
	struct _astro_job **link = &handle->acquires;
	while (*link && !__atomic_load_n(&(*link)->acquire_ready, __ATOMIC_ACQUIRE))
		link = &(*link)->next_acquire;
	struct _astro_job *job = *link;
	if (job) {
		*link = job->next_acquire;
		starpu_pthread_cond_broadcast(&handle->idle_cond); /* an unregister may wait for the acquires */
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
	if (handle_magic_live(handle) || (handle && __atomic_load_n(&handle->magic, __ATOMIC_ACQUIRE) == HANDLE_UNREGISTERING) ||
	    handle_live(handle, "starpu_data_release"))
		release_granted(handle);
}

void starpu_data_release(starpu_data_handle_t handle)
{
	starpu_data_release_on_node(handle, STARPU_MAIN_RAM);
}

/* ------------------------------------------------------------ unregister */

static void handle_free(starpu_data_handle_t handle)
{
	__atomic_store_n(&handle->magic, HANDLE_DEAD, __ATOMIC_RELEASE);
	_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_UNREGISTERED, .workerid = _astro_worker_id(), .object = handle);
	if (handle->memory_stats)
		_astro_memory_stats_unregister(handle);
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
	handle_quarantine(handle);
}

static void wait_idle(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&handle->lock);
	while (handle->busy > 0)
		starpu_pthread_cond_wait(&handle->idle_cond, &handle->lock);
	starpu_pthread_mutex_unlock(&handle->lock);
}

void _astro_data_wait_idle(starpu_data_handle_t handle)
{
	wait_idle(handle);
}

/* The checks, then the handle is unregistered for the application: false if refused (reported). */
static bool unregister_claim(starpu_data_handle_t handle, const char *fn)
{
	if (!handle_live(handle, fn))
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
		starpu_pthread_cond_wait(&handle->idle_cond, &handle->lock);
	}
	bool acquired = handle->acquires != NULL || handle->fast_hold;
	starpu_pthread_mutex_unlock(&handle->lock);
	if (acquired) {
		_astro_error("%s: the handle is still acquired by the application: call starpu_data_release first", fn);
		return false;
	}
	return handle_claim(handle, fn);
}

/* The application gets its data back where it registered it. */
static void write_back_home(starpu_data_handle_t handle)
{
	if (__atomic_load_n(&handle->redux, __ATOMIC_ACQUIRE))
		_astro_redux_combine(handle);
	if (handle->home_node >= 0 && _astro_rt.nmemory_nodes > 1)
		_astro_coherency_fetch(handle, (unsigned)handle->home_node, STARPU_R, false);
}

void _astro_data_leave_devices(void)
{
	if (_astro_rt.nmemory_nodes <= 1)
		return;
	starpu_pthread_mutex_lock(&live_lock);
	if (live_handles) {
		GHashTableIter it;
		gpointer key;
		g_hash_table_iter_init(&it, live_handles);
		while (g_hash_table_iter_next(&it, &key, NULL)) {
			write_back_home(key);
			_astro_scratch_drop(key);
			_astro_coherency_free_devices(key);
		}
	}
	starpu_pthread_mutex_unlock(&live_lock);
}

static void unregister(starpu_data_handle_t handle, const char *fn, bool coherent)
{
	if (!unregister_claim(handle, fn))
		return;
	/* The children are views into this buffer: gather them first. */
	if (handle->nchildren)
		starpu_data_unpartition(handle, STARPU_MAIN_RAM);
	/* Every task already submitted on it completes first, whatever its consistency. */
	wait_idle(handle);
	if (coherent)
		write_back_home(handle);
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
void _astro_data_runtime_acquire_done(struct _astro_job *job)
{
	_astro_job_terminate(job, -1);
	_astro_job_free(job);
}

static void runtime_acquire_done(void *arg)
{
	_astro_data_runtime_acquire_done(arg);
}

/* An asynchronous prefetch's data is accessible: the transfer thread moves it, then ends the acquire. */
static void prefetch_ready(void *arg)
{
	struct _astro_job *job = arg;
	_astro_transfer_submit(job->links[0].handle, (unsigned)job->prefetch_node, job);
}

void _astro_data_hold(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&handle->lock);
	handle->busy++;
	starpu_pthread_mutex_unlock(&handle->lock);
}

void _astro_data_unhold(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&handle->lock);
	if (--handle->busy == 0)
		starpu_pthread_cond_broadcast(&handle->idle_cond);
	starpu_pthread_mutex_unlock(&handle->lock);
}

/* A runtime acquire: once the accesses submitted before it are done, the
 * data is brought to node (evict: then the devices' copies are freed), and
 * the acquire ends. Waits for that unless async. */
static int runtime_acquire(starpu_data_handle_t handle, int node, enum starpu_data_access_mode mode, bool evict,
			   unsigned async, const char *fn)
{
	if (!handle_live(handle, fn))
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
	struct _astro_data_link *link = job_links(job, 1);
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
			job->acquire_node = -1;
		}
	}
	link_access(job, link, -1);
	_astro_job_release(job);
	if (!async) {
		while (!__atomic_load_n(&job->acquire_ready, __ATOMIC_ACQUIRE))
			astro_futex_wait(&job->acquire_ready, 0);
		runtime_acquire_done(job);
	}
	return 0;
}

static void unregister_when_ready(void *arg)
{
	struct _astro_job *job = arg;
	starpu_data_handle_t handle = job->links[0].handle;
	/* Our own acquire brought the data home: drop it, then free once idle. */
	_astro_job_terminate(job, -1);
	_astro_job_free(job);
	wait_idle(handle);
	handle_free(handle);
}

void starpu_data_unregister_submit(starpu_data_handle_t handle)
{
	if (!handle_live_or_claim(handle, "starpu_data_unregister_submit", HANDLE_UNREGISTERING))
		return;
	handle->unregistering = true;
	acquire_submit(handle, STARPU_RW, handle->home_node, unregister_when_ready, NULL, true, false);
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
	if (handle_live(handle, "starpu_data_invalidate"))
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

void starpu_data_invalidate_submit(starpu_data_handle_t handle)
{
	if (!handle_live(handle, "starpu_data_invalidate_submit"))
		return;
	/* After the accesses submitted before it, which may still read the copies (a write access: nothing is fetched). */
	starpu_data_acquire_cb(handle, STARPU_W, invalidate_when_ready, handle);
}

void starpu_data_wont_use(starpu_data_handle_t handle)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_WONT_USE, .workerid = _astro_worker_id(), .object = handle);
	/* After the accesses submitted so far: back to main memory, the devices' room freed. */
	if (_astro_rt.nmemory_nodes > 1)
		runtime_acquire(handle, STARPU_MAIN_RAM, STARPU_R, true, 1, "starpu_data_wont_use");
}

/* ------------------------------------------------------------- attributes */

void starpu_data_set_sequential_consistency_flag(starpu_data_handle_t handle, unsigned flag)
{
	if (!handle)
		return;
	starpu_pthread_mutex_lock(&handle->lock);
	handle->sequential_consistency = flag;
	starpu_pthread_mutex_unlock(&handle->lock);
}

unsigned starpu_data_get_sequential_consistency_flag(starpu_data_handle_t handle)
{
	return handle ? handle->sequential_consistency : 0;
}

void starpu_data_set_default_sequential_consistency_flag(unsigned flag)
{
	default_sequential_consistency = flag;
}

unsigned starpu_data_get_default_sequential_consistency_flag(void)
{
	return default_sequential_consistency;
}

void starpu_data_set_reduction_methods(starpu_data_handle_t handle, struct starpu_codelet *redux_cl, struct starpu_codelet *init_cl)
{
	if (!handle)
		return;
	/* The runtime runs both on the CPU, in main memory (kernel/reduction.c). */
	struct starpu_codelet *cpuless = redux_cl && !redux_cl->cpu_funcs[0] ? redux_cl : init_cl && !init_cl->cpu_funcs[0] ? init_cl : NULL;
	if (cpuless) {
		_astro_error("starpu_data_set_reduction_methods: the %s codelet has no CPU function; the methods are not set "
			     "(STARPU_REDUX accesses stay read-write accesses): give it cpu_funcs[0]",
			     cpuless == redux_cl ? "reduction" : "init");
		return;
	}
	handle->redux_cl = redux_cl;
	handle->init_cl = init_cl;
	/* Codelets set without arguments get none, whatever the _with_args form gave before (reduction.c). */
	handle->redux_arg = NULL;
	handle->init_arg = NULL;
	/* Data registered on no node starts from the init codelet's value (also without a reduction codelet):
	 * a reader before any contribution reads it. */
	if (handle->unallocated)
		_astro_redux_invalidated(handle);
}

void astro_data_get_reduction_methods(starpu_data_handle_t handle, struct starpu_codelet **redux_cl, struct starpu_codelet **init_cl)
{
	if (redux_cl)
		*redux_cl = handle ? handle->redux_cl : NULL;
	if (init_cl)
		*init_cl = handle ? handle->init_cl : NULL;
}

void starpu_data_set_name(starpu_data_handle_t handle, const char *name)
{
	if (!handle)
		return;
	free(handle->name);
	handle->name = name ? strdup(name) : NULL;
	_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_DESCRIBED, .workerid = _astro_worker_id(), .object = handle, .label = handle->name ? handle->name : "");
}

void starpu_data_set_coordinates_array(starpu_data_handle_t handle, unsigned dimensions, int dims[])
{
	if (!handle || (dimensions && !dims))
		return;
	if (dimensions > _ASTRO_MAX_COORDINATES)
		dimensions = _ASTRO_MAX_COORDINATES;
	for (unsigned i = 0; i < dimensions; i++)
		handle->coordinates[i] = dims[i];
	handle->ncoordinates = dimensions;
	_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_DESCRIBED, .workerid = _astro_worker_id(), .object = handle);
}

void starpu_data_set_coordinates(starpu_data_handle_t handle, unsigned dimensions, ...)
{
	int dims[_ASTRO_MAX_COORDINATES];
	va_list ap;
	va_start(ap, dimensions);
	for (unsigned i = 0; i < dimensions; i++) {
		int d = va_arg(ap, int);
		if (i < _ASTRO_MAX_COORDINATES)
			dims[i] = d;
	}
	va_end(ap);
	starpu_data_set_coordinates_array(handle, dimensions, dims);
}

unsigned starpu_data_get_coordinates_array(starpu_data_handle_t handle, unsigned dimensions, int dims[])
{
	if (!handle)
		return 0;
	unsigned n = handle->ncoordinates < dimensions ? handle->ncoordinates : dimensions;
	for (unsigned i = 0; i < n; i++)
		dims[i] = handle->coordinates[i];
	return n;
}

void starpu_data_set_user_data(starpu_data_handle_t handle, void *user_data)
{
	if (handle)
		handle->user_data = user_data;
}

void *starpu_data_get_user_data(starpu_data_handle_t handle)
{
	return handle ? handle->user_data : NULL;
}

void starpu_data_set_wt_mask(starpu_data_handle_t handle, uint32_t wt_mask)
{
	if (!handle_live(handle, "starpu_data_set_wt_mask"))
		return;
	__atomic_store_n(&handle->wt_mask, wt_mask, __ATOMIC_RELAXED);
}

/* Does handle have a buffer on node (valid or not)? A transfer may be changing it. */
static bool allocated_on(starpu_data_handle_t handle, unsigned node)
{
	starpu_pthread_mutex_lock(&handle->coherency_lock);
	bool allocated = handle->replicates[node].allocated;
	starpu_pthread_mutex_unlock(&handle->coherency_lock);
	return allocated;
}

bool _astro_data_ptr_register(starpu_data_handle_t handle, unsigned node, const char *fn)
{
	if (!handle_live(handle, fn))
		return false;
	if (node >= _astro_rt.nmemory_nodes) {
		_astro_error("%s: no memory node %u (there are %u): give a node of starpu_memory_nodes_get_count()", fn, node,
			     _astro_rt.nmemory_nodes);
		return false;
	}
	starpu_pthread_mutex_lock(&handle->coherency_lock);
	struct _astro_replicate *r = &handle->replicates[node];
	bool fresh = !r->allocated;
	if (fresh) {
		/* The program's buffer: never freed nor evicted by the runtime (owns_alloc stays false). */
		r->allocated = true;
		_astro_coherency_allocated(handle);
	}
	starpu_pthread_mutex_unlock(&handle->coherency_lock);
	if (!fresh)
		_astro_error("%s: the handle already has a buffer on node %u: call it right after registering, once per node", fn,
			     node);
	return fresh;
}

void starpu_data_ptr_register(starpu_data_handle_t handle, unsigned node)
{
	_astro_data_ptr_register(handle, node, "starpu_data_ptr_register");
}

void *starpu_data_handle_to_pointer(starpu_data_handle_t handle, unsigned node)
{
	/* Where a buffer exists, valid or not (as StarPU: after starpu_data_invalidate, a
	 * write acquire or a receive still writes there; with one memory node nothing marks it valid again). */
	if (!handle || node >= STARPU_MAXNODES || !allocated_on(handle, node))
		return NULL;
	if (handle->ops->to_pointer)
		return handle->ops->to_pointer(handle->iface[node], node);
	return handle->ops->handle_to_pointer ? handle->ops->handle_to_pointer(handle, node) : NULL;
}

void *starpu_data_get_local_ptr(starpu_data_handle_t handle)
{
	return starpu_data_handle_to_pointer(handle, starpu_worker_get_local_memory_node());
}

unsigned starpu_data_test_if_allocated_on_node(starpu_data_handle_t handle, unsigned memory_node)
{
	if (!handle_live(handle, "starpu_data_test_if_allocated_on_node") || memory_node >= STARPU_MAXNODES)
		return 0;
	return allocated_on(handle, memory_node);
}

unsigned starpu_data_is_on_node(starpu_data_handle_t handle, unsigned node)
{
	if (!handle || node >= STARPU_MAXNODES)
		return 0;
	/* The transfer thread may be changing it. */
	starpu_pthread_mutex_lock(&handle->coherency_lock);
	unsigned valid = handle->valid[node];
	starpu_pthread_mutex_unlock(&handle->coherency_lock);
	return valid;
}

size_t starpu_data_get_size(starpu_data_handle_t handle)
{
	return handle && handle->ops->get_size ? handle->ops->get_size(handle) : 0;
}

starpu_ssize_t starpu_data_get_max_size(starpu_data_handle_t handle)
{
	if (!handle)
		return -1;
	return (starpu_ssize_t)(handle->ops->get_max_size ? handle->ops->get_max_size(handle) : starpu_data_get_size(handle));
}

size_t starpu_data_get_alloc_size(starpu_data_handle_t handle)
{
	if (!handle)
		return 0;
	return handle->ops->get_alloc_size ? handle->ops->get_alloc_size(handle) : starpu_data_get_size(handle);
}

uint32_t starpu_data_get_footprint(starpu_data_handle_t handle)
{
	if (!handle)
		return 0;
	/* As StarPU 1.4: the interface's footprint chained on its id (0 for custom interfaces). */
	uint32_t id = (unsigned)handle->ops->interfaceid < STARPU_MAX_INTERFACE_ID ? (uint32_t)handle->ops->interfaceid : 0;
	return starpu_hash_crc32c_be(handle->ops->footprint ? handle->ops->footprint(handle) : 0, id);
}

int starpu_data_get_interface_id(starpu_data_handle_t handle)
{
	return handle ? (int)handle->ops->interfaceid : STARPU_UNKNOWN_INTERFACE_ID;
}

int starpu_data_get_home_node(starpu_data_handle_t handle)
{
	return handle ? handle->home_node : -1;
}

/* The handle whose main-memory buffer starts at ptr (registered there, or allocated there since):
 * of a partitioned handle and its piece starting at the same address, the piece. */
starpu_data_handle_t starpu_data_lookup(const void *ptr)
{
	starpu_data_handle_t found = NULL;
	if (!ptr)
		return NULL;
	starpu_pthread_mutex_lock(&live_lock);
	GHashTableIter it;
	gpointer key;
	if (live_handles)
		g_hash_table_iter_init(&it, live_handles);
	while (live_handles && g_hash_table_iter_next(&it, &key, NULL)) {
		starpu_data_handle_t h = key;
		if (!h->replicates[STARPU_MAIN_RAM].allocated || (found && !found->nchildren))
			continue;
		void *p = h->ops->to_pointer ? h->ops->to_pointer(h->iface[STARPU_MAIN_RAM], STARPU_MAIN_RAM)
			: h->ops->handle_to_pointer ? h->ops->handle_to_pointer(h, STARPU_MAIN_RAM) : NULL;
		if (p == ptr && (!found || !h->nchildren))
			found = h;
	}
	starpu_pthread_mutex_unlock(&live_lock);
	return found;
}

int starpu_data_prefetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async)
{
	return runtime_acquire(handle, (int)node, STARPU_R, false, async, "starpu_data_prefetch_on_node");
}

int starpu_data_fetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async)
{
	return runtime_acquire(handle, (int)node, STARPU_R, false, async, "starpu_data_fetch_on_node");
}

int starpu_data_idle_prefetch_on_node(starpu_data_handle_t handle, unsigned node, unsigned async)
{
	return runtime_acquire(handle, (int)node, STARPU_R, false, async, "starpu_data_idle_prefetch_on_node");
}

void starpu_data_advise_as_important(starpu_data_handle_t handle, unsigned is_important)
{
	(void)handle;
	(void)is_important;
}

int starpu_data_request_allocation(starpu_data_handle_t handle, unsigned node)
{
	(void)handle;
	(void)node;
	return 0;
}
