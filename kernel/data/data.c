/*
 * Data handles: the table of live handles (a handle used after its
 * unregistration gets a message, not a double free), registration, the busy
 * count that keeps a handle from being freed, and the handle's attributes.
 * The accesses of tasks to handles (implicit dependencies) are the tasks
 * room's (tasks/accesses.c); acquiring, releasing and unregistering are the
 * access room's (access/acquire.c).
 */
#include "data/data.h"
#include <stdarg.h>

static unsigned default_sequential_consistency = 1;

/* ------------------------------------------------------ live handles */

/* A handle used after its unregistration must get a message, not a double
 * free: the data entry points look the handle up among the live ones (never
 * reading a dead handle's memory), and the task path and the uncontended
 * acquires and releases, which cannot afford a look-up, check its magic,
 * cleared at unregistration (_ASTRO_HANDLE_DEAD). The structs of the
 * last unregistered handles stay allocated (a quarantine), so that this read
 * finds the cleared magic rather than freed memory. */
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
bool _astro_data_live_or_claim(starpu_data_handle_t handle, const char *fn, unsigned claim_magic)
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
	return _astro_data_live_or_claim(handle, fn, 0);
}

bool _astro_data_live(starpu_data_handle_t handle, const char *fn)
{
	return handle_live(handle, fn);
}

/* Frees the struct of an unregistered handle after a while. */
void _astro_data_quarantine(starpu_data_handle_t handle)
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


/* -------------------------------------------------------------- busy count */

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

/* --------------------------------------------------------------- going home */

/* The application gets its data back where it registered it. */
void _astro_data_write_back_home(starpu_data_handle_t handle)
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
			_astro_data_write_back_home(key);
			_astro_scratch_drop(key);
			_astro_coherency_free_devices(key);
		}
	}
	starpu_pthread_mutex_unlock(&live_lock);
	/* Then the devices' allocation caches, before the memory nodes go. */
	for (unsigned node = 0; node < _astro_rt.nmemory_nodes; node++)
		if (node != STARPU_MAIN_RAM)
			_astro_alloc_cache_reclaim(node, true);
}

