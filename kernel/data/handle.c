/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the whole data room reads and keeps of a handle, below coherency: the
 * table of live handles (a handle used after its unregistration gets a
 * message, not a double free), its interface on each node, its sizes and
 * footprint, its attributes, looking it up by pointer, and the busy count
 * that keeps it from being freed while accesses are pending.
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

void _astro_data_track(starpu_data_handle_t handle)
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


void _astro_data_for_each_live(void (*fn)(starpu_data_handle_t handle, void *arg), void *arg)
{
	starpu_pthread_mutex_lock(&live_lock);
	if (live_handles) {
		GHashTableIter it;
		gpointer key;
		g_hash_table_iter_init(&it, live_handles);
		while (g_hash_table_iter_next(&it, &key, NULL))
			fn(key, arg);
	}
	starpu_pthread_mutex_unlock(&live_lock);
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

void starpu_data_print(starpu_data_handle_t handle, unsigned node, FILE *stream)
{
	if (!stream) {
		_astro_error("starpu_data_print: NULL stream");
		return;
	}
	if (!_astro_data_live(handle, "starpu_data_print"))
		return;
	if (node >= starpu_memory_nodes_get_count()) {
		_astro_error("starpu_data_print: no memory node %u (there are %u)", node, starpu_memory_nodes_get_count());
		return;
	}
	char where[64];
	starpu_memory_node_get_name(node, where, sizeof(where));
	starpu_pthread_mutex_lock(&handle->coherency_lock);
	bool allocated = handle->replicates[node].allocated, valid = handle->valid[node];
	starpu_pthread_mutex_unlock(&handle->coherency_lock);
	fprintf(stream, "%s %s (%zu bytes) on %s: %s\n", handle->ops->name ? handle->ops->name : "(unnamed interface)",
		handle->name ? handle->name : "(unnamed)", starpu_data_get_size(handle), where,
		valid ? "valid" : allocated ? "allocated, not valid" : "not allocated");
}

void starpu_data_set_sched_data(starpu_data_handle_t handle, void *sched_data)
{
	if (_astro_data_live(handle, "starpu_data_set_sched_data"))
		handle->sched_data = sched_data;
}

void *starpu_data_get_sched_data(starpu_data_handle_t handle)
{
	return _astro_data_live(handle, "starpu_data_get_sched_data") ? handle->sched_data : NULL;
}

void starpu_data_set_ooc_flag(starpu_data_handle_t handle, unsigned flag)
{
	if (_astro_data_live(handle, "starpu_data_set_ooc_flag"))
		__atomic_store_n(&handle->no_ooc, !flag, __ATOMIC_RELAXED);
}

unsigned starpu_data_get_ooc_flag(starpu_data_handle_t handle)
{
	return _astro_data_live(handle, "starpu_data_get_ooc_flag") ? !__atomic_load_n(&handle->no_ooc, __ATOMIC_RELAXED) : 0;
}

/* The handles with a buffer on one node, gathered for starpu_data_get_node_data. */
struct node_data
{
	unsigned node, n, cap;
	starpu_data_handle_t *handles;
	int *valid;
	bool failed;
};

/* A snapshot, as in StarPU: read without the handle's coherency lock (its order is below the live handles' lock). */
static void gather_node_data(starpu_data_handle_t h, void *arg)
{
	struct node_data *d = arg;
	if (d->failed || !__atomic_load_n(&h->replicates[d->node].allocated, __ATOMIC_RELAXED))
		return;
	if (d->n == d->cap) {
		unsigned cap = d->cap ? 2 * d->cap : 16;
		starpu_data_handle_t *handles = realloc(d->handles, cap * sizeof(*handles));
		if (handles)
			d->handles = handles;
		int *valid = handles ? realloc(d->valid, cap * sizeof(*valid)) : NULL;
		if (valid)
			d->valid = valid;
		if (!handles || !valid) {
			d->failed = true;
			return;
		}
		d->cap = cap;
	}
	d->handles[d->n] = h;
	d->valid[d->n++] = __atomic_load_n(&h->valid[d->node], __ATOMIC_RELAXED);
}

void starpu_data_get_node_data(unsigned node, starpu_data_handle_t **handles, int **valid, unsigned *n)
{
	if (handles)
		*handles = NULL;
	if (valid)
		*valid = NULL;
	if (n)
		*n = 0;
	if (!handles || !valid || !n) {
		_astro_error("starpu_data_get_node_data: NULL %s: give the addresses of the results", !handles ? "handles" : !valid ? "valid" : "n");
		return;
	}
	if (node >= starpu_memory_nodes_get_count()) {
		_astro_error("starpu_data_get_node_data: no memory node %u (there are %u): no data", node, starpu_memory_nodes_get_count());
		return;
	}
	struct node_data d = { .node = node };
	_astro_data_for_each_live(gather_node_data, &d);
	if (d.failed) {
		_astro_error("starpu_data_get_node_data: out of memory for the list of the data on node %u: no data", node);
		free(d.handles);
		free(d.valid);
		return;
	}
	*handles = d.handles;
	*valid = d.valid;
	*n = d.n;
}

void starpu_data_set_wt_mask(starpu_data_handle_t handle, uint32_t wt_mask)
{
	if (!handle_live(handle, "starpu_data_set_wt_mask"))
		return;
	__atomic_store_n(&handle->wt_mask, wt_mask, __ATOMIC_RELAXED);
}

/* Does handle have a buffer on node (valid or not)? A transfer may be changing it. */
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

/* -------------------------------------------------------------- busy count */

static void wait_idle(starpu_data_handle_t handle)
{
	starpu_pthread_mutex_lock(&handle->lock);
	while (handle->busy > 0)
		_astro_data_idle_wait(handle);
	starpu_pthread_mutex_unlock(&handle->lock);
}

void _astro_data_wait_idle(starpu_data_handle_t handle)
{
	wait_idle(handle);
}

void _astro_data_wait_unused(starpu_data_handle_t handle, unsigned magic)
{
	starpu_pthread_mutex_lock(&handle->lock);
	while (handle->busy > 0 || handle->finishing > 0)
		_astro_data_idle_wait(handle);
	__atomic_store_n(&handle->magic, magic, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&handle->lock);
}

void _astro_data_callback_done(starpu_data_handle_t handle)
{
	void (*free_it)(starpu_data_handle_t) = NULL;
	starpu_pthread_mutex_lock(&handle->lock);
	if (--handle->finishing == 0) {
		_astro_data_idle_wake(handle);
		free_it = handle->free_when_done;
	}
	starpu_pthread_mutex_unlock(&handle->lock);
	if (free_it)
		free_it(handle);
}

bool _astro_data_free_when_done(starpu_data_handle_t handle, void (*free_it)(starpu_data_handle_t))
{
	starpu_pthread_mutex_lock(&handle->lock);
	bool later = handle->finishing > 0;
	if (later)
		handle->free_when_done = free_it;
	starpu_pthread_mutex_unlock(&handle->lock);
	return later;
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
		_astro_data_idle_wake(handle);
	starpu_pthread_mutex_unlock(&handle->lock);
}
