/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Registering data (starpu_data_register and the interfaces' calls of it),
 * pointers registered on nodes, and the data going home at shutdown. A
 * handle's basics are handle.c's; its accesses are the tasks room's
 * (tasks/accesses.c); acquiring, releasing and unregistering are the access
 * room's (access/acquire.c).
 */
#include "data/data.h"

/* Multiformat handles registered (interfaces/multiformat.c): the task path checks their conversions while there are some. */
int _astro_multiformat_handles;

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
	h->sequential_consistency = starpu_data_get_default_sequential_consistency_flag();
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
	_astro_data_track(h);
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

static bool allocated_on(starpu_data_handle_t handle, unsigned node)
{
	starpu_pthread_mutex_lock(&handle->coherency_lock);
	bool allocated = handle->replicates[node].allocated;
	starpu_pthread_mutex_unlock(&handle->coherency_lock);
	return allocated;
}

bool _astro_data_ptr_register(starpu_data_handle_t handle, unsigned node, const char *fn)
{
	if (!_astro_data_live(handle, fn))
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
	if (!_astro_data_live(handle, "starpu_data_test_if_allocated_on_node") || memory_node >= STARPU_MAXNODES)
		return 0;
	return allocated_on(handle, memory_node);
}

/* As StarPU, a hint for policies (called per task): valid there, or a request to bring it there queued. */
unsigned starpu_data_is_on_node(starpu_data_handle_t handle, unsigned node)
{
	if (!handle || node >= STARPU_MAXNODES)
		return 0;
	return _astro_data_on_node(handle, node, true);
}

/* The same, a prefetch still queued left out (a fetch queued counts: the data is coming for sure). */
unsigned starpu_data_is_on_node_excluding_prefetch(starpu_data_handle_t handle, unsigned node)
{
	if (!_astro_data_live(handle, "starpu_data_is_on_node_excluding_prefetch"))
		return 0;
	if (node >= starpu_memory_nodes_get_count()) {
		_astro_error("starpu_data_is_on_node_excluding_prefetch: no memory node %u (there are %u)", node,
			     starpu_memory_nodes_get_count());
		return 0;
	}
	return _astro_data_on_node(handle, node, false);
}

/* Copies are never mapped from one node into another here (each node has its own buffer). */
unsigned starpu_data_test_if_mapped_on_node(starpu_data_handle_t handle, unsigned memory_node)
{
	if (!_astro_data_live(handle, "starpu_data_test_if_mapped_on_node"))
		return 0;
	if (memory_node >= starpu_memory_nodes_get_count())
		_astro_error("starpu_data_test_if_mapped_on_node: no memory node %u (there are %u)", memory_node,
			     starpu_memory_nodes_get_count());
	return 0;
}

void starpu_data_advise_as_important(starpu_data_handle_t handle, unsigned is_important)
{
	(void)handle;
	(void)is_important;
}

/* As StarPU: asynchronous, at prefetch level; a later fetch there finds the buffer (unless evicted meanwhile). */
int starpu_data_request_allocation(starpu_data_handle_t handle, unsigned node)
{
	if (!_astro_data_live(handle, "starpu_data_request_allocation"))
		return -EINVAL;
	if (node >= starpu_memory_nodes_get_count()) {
		_astro_error("starpu_data_request_allocation: no memory node %u (there are %u)", node, starpu_memory_nodes_get_count());
		return -EINVAL;
	}
	_astro_data_hold(handle);
	_astro_transfer_submit_allocation(handle, node);
	return 0;
}


/* --------------------------------------------------------------- going home */

/* The application gets its data back where it registered it. */
void _astro_data_write_back_home(starpu_data_handle_t handle)
{
	if (__atomic_load_n(&handle->redux, __ATOMIC_ACQUIRE))
		_astro_redux_combine(handle);
	if (handle->home_node >= 0 && _astro_rt.nmemory_nodes > 1)
		_astro_coherency_fetch(handle, (unsigned)handle->home_node, STARPU_R, false);
}

static void leave_devices(starpu_data_handle_t handle, void *arg)
{
	(void)arg;
	_astro_data_write_back_home(handle);
	_astro_scratch_drop(handle);
	_astro_coherency_free_devices(handle);
}

void _astro_data_leave_devices(void)
{
	if (_astro_rt.nmemory_nodes <= 1)
		return;
	_astro_data_for_each_live(leave_devices, NULL);
	/* Then the devices' allocation caches, before the memory nodes go. */
	for (unsigned node = 0; node < _astro_rt.nmemory_nodes; node++)
		if (node != STARPU_MAIN_RAM)
			_astro_alloc_cache_reclaim(node, true);
}
