/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Coherency of a handle's copies across memory nodes (MSI): a node's copy is
 * valid (shared) or not; a write leaves one valid copy (modified), on the
 * writer's node. Before a task runs, the kernel makes each of its handles
 * valid on the worker's node, copying from a valid node with the
 * interface's copy methods; between two devices the data goes through main
 * memory. A handle's coherency_lock covers its copies' state and the
 * transfers that change it; implicit dependencies (data.c) already order the
 * accesses themselves.
 *
 * A device worker asks for its next tasks' data ahead (its pipeline, see
 * worker.c): the last copy to the device is then left under way, held by
 * the device's replicate (replicates[node].copy), which counts as valid and
 * pinned meanwhile. The task waits for it before it runs
 * (_astro_coherency_arrived); anything else that reads, writes or frees the
 * handle's copies waits for the copies under way first (arrive_all), so
 * that no copy ever reads or writes a buffer that changes under it.
 *
 * With a single memory node none of this runs: the task path tests one
 * already-loaded count (see _astro_data_fetch).
 */
#include "data/data.h"

/* Measured transfers per pair of nodes, for starpu_transfer_bandwidth/_latency (atomics). */
static double transfer_us[STARPU_MAXNODES][STARPU_MAXNODES];
static double transfer_bytes[STARPU_MAXNODES][STARPU_MAXNODES];
static unsigned long transfer_count[STARPU_MAXNODES][STARPU_MAXNODES];
static double small_transfer_us[STARPU_MAXNODES][STARPU_MAXNODES];  /* transfers of at most 4 KiB: the latency */
static double small_transfer_bytes[STARPU_MAXNODES][STARPU_MAXNODES];
static unsigned long small_transfer_count[STARPU_MAXNODES][STARPU_MAXNODES];
static starpu_pthread_mutex_t measure_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

int _astro_unallocated_handles;

void _astro_coherency_register(starpu_data_handle_t handle, int home)
{
	starpu_pthread_mutex_init(&handle->coherency_lock, NULL);
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		handle->replicates[node].handle = handle;
		handle->replicates[node].node = node;
	}
	if (home >= 0) {
		handle->replicates[home].allocated = true;
		handle->valid[home] = true;
	} else {
		/* Nowhere yet: the first use allocates (see allocate()). */
		handle->unallocated = true;
		__atomic_add_fetch(&_astro_unallocated_handles, 1, __ATOMIC_RELAXED);
	}
}

/* The handle has a buffer somewhere now (or is gone): one less to look for. */
void _astro_coherency_allocated(starpu_data_handle_t h)
{
	if (h->unallocated) {
		h->unallocated = false;
		__atomic_sub_fetch(&_astro_unallocated_handles, 1, __ATOMIC_RELAXED);
	}
}

/* ---------------------------------------------------------------- copies */

typedef int (*pair_copy_fn)(void *, unsigned, void *, unsigned);

/* The interface's method for this pair of node kinds, NULL when it has none. */
static pair_copy_fn pair_method(const struct starpu_data_copy_methods *m, enum starpu_node_kind s, enum starpu_node_kind d)
{
	if (s == STARPU_CPU_RAM) {
		switch (d) {
		case STARPU_CPU_RAM: return m->ram_to_ram;
		case STARPU_OPENCL_RAM: return m->ram_to_opencl;
		case STARPU_CUDA_RAM: return m->ram_to_cuda;
		case STARPU_HIP_RAM: return m->ram_to_hip;
		default: return NULL;
		}
	}
	if (d == STARPU_CPU_RAM) {
		switch (s) {
		case STARPU_OPENCL_RAM: return m->opencl_to_ram;
		case STARPU_CUDA_RAM: return m->cuda_to_ram;
		case STARPU_HIP_RAM: return m->hip_to_ram;
		default: return NULL;
		}
	}
	return NULL;
}

static void measure(unsigned src, unsigned dst, size_t bytes, double us)
{
	starpu_pthread_mutex_lock(&measure_lock);
	transfer_us[src][dst] += us;
	transfer_bytes[src][dst] += (double)bytes;
	transfer_count[src][dst]++;
	if (bytes <= 4096) {
		small_transfer_us[src][dst] += us;
		small_transfer_bytes[src][dst] += (double)bytes;
		small_transfer_count[src][dst]++;
	}
	starpu_pthread_mutex_unlock(&measure_lock);
}

/* Waits for the copy under way to node (coherency_lock held): 0, or a negative errno said. */
static int arrive(starpu_data_handle_t h, unsigned node)
{
	struct _astro_copy *c = h->replicates[node].copy;
	if (!c)
		return 0;
	h->replicates[node].copy = NULL;
	h->copies_arriving--;
	int ret = 0;
	for (unsigned i = 0; i < c->nparts; i++) {
		int err = c->parts[i].ops->copy_wait(c->parts[i].devid, c->parts[i].request);
		ret = ret ? ret : err;
	}
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_END, .workerid = _astro_worker_id(), .src_node = c->src, .dst_node = c->dst, .bytes = c->bytes,
		       .object = h);
	if (ret) {
		_astro_error("copying a %s handle from node %u to node %u failed (%d)", h->ops->name ? h->ops->name : "data", c->src, c->dst, ret);
		h->valid[node] = false;
	}
	free(c->parts);
	free(c);
	return ret;
}

/* Waits for the handle's copies under way, but the one to node except (coherency_lock held). */
static void arrive_all(starpu_data_handle_t h, unsigned except)
{
	for (unsigned node = 0; h->copies_arriving && node < _astro_rt.nmemory_nodes; node++)
		if (node != except)
			arrive(h, node);
}

/* Copies handle's data from node src to node dst (both allocated): one observed
 * transfer. With async, the copy may be left under way to a device: dst's
 * replicate holds it, and its end is observed when it arrives. */
static int transfer(starpu_data_handle_t h, unsigned src, unsigned dst, bool async)
{
	const struct starpu_data_copy_methods *m = h->ops->copy_methods;
	pair_copy_fn pair = m ? pair_method(m, starpu_node_get_kind(src), starpu_node_get_kind(dst)) : NULL;
	bool packed = !pair && (!m || !m->any_to_any) &&
		      (starpu_node_get_kind(src) == STARPU_DISK_RAM || starpu_node_get_kind(dst) == STARPU_DISK_RAM);
	if (!pair && (!m || !m->any_to_any) && !packed) {
		char s[32], d[32];
		starpu_memory_node_get_name(src, s, sizeof(s));
		starpu_memory_node_get_name(dst, d, sizeof(d));
		_astro_error("interface %s has no copy method from %s to %s: give its copy_methods an any_to_any",
			     h->ops->name ? h->ops->name : "(unnamed)", s, d);
		return -ENOSYS;
	}
	size_t bytes = starpu_data_get_size(h);
	int workerid = _astro_worker_id();
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_BEGIN, .workerid = workerid, .src_node = src, .dst_node = dst, .bytes = bytes, .object = h);
	double start = starpu_timing_now();
	bool outer = _astro_in_handle_copy;
	_astro_in_handle_copy = true;
	const struct astro_node_ops *ops = _astro_nodes[dst].ops;
	struct _astro_copy *copy = async && !pair && !packed && ops && ops->copy_wait && !starpu_asynchronous_copy_disabled() ? calloc(1, sizeof(*copy)) : NULL;
	int ret = packed ? _astro_disk_pack_transfer(h, src, dst)
		  : pair ? pair(h->iface[src], src, h->iface[dst], dst) : m->any_to_any(h->iface[src], src, h->iface[dst], dst, copy);
	_astro_in_handle_copy = outer;
	if (copy && copy->nparts) {
		copy->src = src;
		copy->dst = dst;
		copy->bytes = bytes;
		h->replicates[dst].copy = copy;
		h->copies_arriving++;
		if (ret >= 0 || ret == -EAGAIN)
			return 0;
		/* A piece failed to start: the others complete first, then the failure is said. */
		if (arrive(h, dst) == 0) /* else it said so */
			_astro_error("copying a %s handle from node %u to node %u failed (%d)", h->ops->name ? h->ops->name : "data", src, dst, ret);
		return ret;
	}
	free(copy); /* nothing was left under way */
	measure(src, dst, bytes, starpu_timing_now() - start);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_END, .workerid = workerid, .src_node = src, .dst_node = dst, .bytes = bytes, .object = h);
	if (ret < 0 && ret != -EAGAIN)
		_astro_error("copying a %s handle from node %u to node %u failed (%d)", h->ops->name ? h->ops->name : "data", src, dst, ret);
	return ret == -EAGAIN ? 0 : ret;
}

/* ------------------------------------------------------------ allocation */

/* Per-node allocation cache: the device buffers of unregistered handles,
 * kept (still counted as used) for a new handle of the same layout, since
 * device allocations are slow; freed first when the node is short of room. */
struct cached_alloc
{
	struct starpu_data_interface_ops *ops;
	uint32_t footprint;
	size_t alloc_size;
	struct cached_alloc *next;
	char iface[];                        /* the interface, holding the buffer */
};
static struct cached_alloc *alloc_cache[STARPU_MAXNODES];
static starpu_pthread_mutex_t cache_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* The cache's footprint of h's buffers. */
static uint32_t alloc_footprint(starpu_data_handle_t h)
{
	return h->ops->alloc_footprint ? h->ops->alloc_footprint(h) : starpu_data_get_footprint(h);
}

static void cache_put(starpu_data_handle_t h, unsigned node)
{
	struct cached_alloc *c = calloc(1, sizeof(*c) + h->ops->interface_size);
	if (!c || !(h->ops->alloc_compare || h->ops->compare) || h->ops->dontcache) {
		free(c);
		h->ops->free_data_on_node(h->iface[node], node);
		return;
	}
	c->ops = h->ops;
	c->footprint = alloc_footprint(h);
	c->alloc_size = starpu_data_get_alloc_size(h);
	if (h->ops->cache_data_on_node)
		h->ops->cache_data_on_node(c->iface, h->iface[node], node);
	else
		memcpy(c->iface, h->iface[node], h->ops->interface_size);
	starpu_pthread_mutex_lock(&cache_lock);
	c->next = alloc_cache[node];
	alloc_cache[node] = c;
	starpu_pthread_mutex_unlock(&cache_lock);
}

/* Takes a cached buffer of h's layout on node into h->iface[node]: true if there was one. */
static bool cache_take(starpu_data_handle_t h, unsigned node)
{
	if (!__atomic_load_n(&alloc_cache[node], __ATOMIC_RELAXED))
		return false;
	uint32_t footprint = alloc_footprint(h);
	size_t alloc_size = starpu_data_get_alloc_size(h);
	int (*fits)(void *, void *) = h->ops->alloc_compare ? h->ops->alloc_compare : h->ops->compare;
	starpu_pthread_mutex_lock(&cache_lock);
	struct cached_alloc **p = &alloc_cache[node], *c;
	for (; (c = *p); p = &c->next)
		if (c->ops == h->ops && c->footprint == footprint && c->alloc_size == alloc_size && fits(c->iface, h->iface[node]))
			break;
	if (c)
		*p = c->next;
	starpu_pthread_mutex_unlock(&cache_lock);
	if (!c)
		return false;
	if (h->ops->reuse_data_on_node)
		h->ops->reuse_data_on_node(h->iface[node], c->iface, node);
	else
		memcpy(h->iface[node], c->iface, h->ops->interface_size);
	free(c);
	return true;
}

bool _astro_alloc_cache_reclaim(unsigned node, bool all)
{
	bool freed = false;
	do {
		starpu_pthread_mutex_lock(&cache_lock);
		struct cached_alloc *c = alloc_cache[node];
		if (c)
			alloc_cache[node] = c->next;
		starpu_pthread_mutex_unlock(&cache_lock);
		if (!c)
			break;
		c->ops->free_data_on_node(c->iface, node);
		free(c);
		freed = true;
	} while (all);
	return freed;
}

void starpu_memchunk_tidy(unsigned memory_node)
{
	if (memory_node >= starpu_memory_nodes_get_count()) {
		_astro_error("starpu_memchunk_tidy: no memory node %u (there are %u)", memory_node, starpu_memory_nodes_get_count());
		return;
	}
	_astro_alloc_cache_reclaim(memory_node, true);
}

/* Allocates handle's buffer on node (coherency_lock held) for a request of urgency kind; the allocator may
 * evict other handles' copies. */
static int allocate(starpu_data_handle_t h, unsigned node, enum starpu_is_prefetch kind)
{
	struct _astro_replicate *r = &h->replicates[node];
	if (r->allocated)
		return 0;
	if (!h->ops->allocate_data_on_node) {
		_astro_error("interface %s cannot be allocated on node %u: give it allocate_data_on_node",
			     h->ops->name ? h->ops->name : "(unnamed)", node);
		return -ENOSYS;
	}
	/* A fresh layout from main memory's (a device's copy holds only its own addresses),
	 * unless the interface fills each node's interface itself (register_data_handle),
	 * where they may hold per-node metadata (the ndim interface's arrays). */
	if (!h->ops->register_data_handle)
		memcpy(h->iface[node], h->iface[STARPU_MAIN_RAM], h->ops->interface_size);
	r->allocated = true;
	h->owns_alloc[node] = true;
	if (node != STARPU_MAIN_RAM && cache_take(h, node))
		return 0;
	size_t bytes = starpu_data_get_alloc_size(h);
	_ASTRO_OBSERVE(ASTRO_MOMENT_MEMORY_STATE_BEGIN, .workerid = _astro_worker_id(), .dst_node = node, .bytes = bytes, .object = h,
		       .nimpl = ASTRO_MEMORY_ALLOCATING);
	struct _astro_alloc_for outer = _astro_alloc_for;	/* an eviction's write-back allocates within an allocation */
	_astro_alloc_for = (struct _astro_alloc_for){ .handle = h, .kind = kind };
	int failed = h->ops->allocate_data_on_node(h->iface[node], node) < 0;
	_astro_alloc_for = outer;
	_ASTRO_OBSERVE(ASTRO_MOMENT_MEMORY_STATE_END, .workerid = _astro_worker_id(), .dst_node = node, .bytes = bytes, .object = h,
		       .nimpl = ASTRO_MEMORY_ALLOCATING);
	if (failed) {
		r->allocated = h->owns_alloc[node] = false;
		return -ENOMEM;
	}
	_astro_coherency_allocated(h);
	_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_ALLOCATED, .workerid = _astro_worker_id(), .dst_node = node, .bytes = bytes);
	return 0;
}

/* Frees handle's buffer on node (into the node's cache when keep). */
static void release_buffer(starpu_data_handle_t h, unsigned node, bool keep)
{
	struct _astro_replicate *r = &h->replicates[node];
	arrive(h, node);
	if ((node != STARPU_MAIN_RAM || r->in_lru) && node < _astro_rt.nmemory_nodes)
		_astro_lru_remove(r);
	if (r->allocated && h->owns_alloc[node] && h->ops->free_data_on_node) {
		if (keep) {
			cache_put(h, node);
		} else {
			size_t bytes = starpu_data_get_alloc_size(h);
			_ASTRO_OBSERVE(ASTRO_MOMENT_MEMORY_STATE_BEGIN, .workerid = _astro_worker_id(), .dst_node = node, .bytes = bytes,
				       .object = h, .nimpl = ASTRO_MEMORY_FREEING);
			h->ops->free_data_on_node(h->iface[node], node);
			_ASTRO_OBSERVE(ASTRO_MOMENT_MEMORY_STATE_END, .workerid = _astro_worker_id(), .dst_node = node, .bytes = bytes,
				       .object = h, .nimpl = ASTRO_MEMORY_FREEING);
		}
	}
	r->allocated = false;
	h->owns_alloc[node] = false;
	h->valid[node] = false;
}

/* ------------------------------------------------------------------ MSI */

/* The MSI states observers see (DATA_STATE): a section that changes a handle's
 * valid copies takes the mask of them before (MSI_BEFORE, only when someone
 * observes: else one load and a branch) and reports each node whose state
 * changed after (MSI_AFTER). */
#define MSI_OBSERVED() STARPU_UNLIKELY(__atomic_load_n(&_astro_observe_mask, __ATOMIC_RELAXED) & \
				       ASTRO_MOMENT_BIT(ASTRO_MOMENT_DATA_STATE))
#define MSI_BEFORE(h) uint64_t msi_before = MSI_OBSERVED() ? valid_mask(h) | MSI_TAKEN : 0
#define MSI_AFTER(h) do { if (STARPU_UNLIKELY(msi_before)) msi_report(h, msi_before); } while (0)
#define MSI_TAKEN (UINT64_C(1) << 63) /* a mask was taken (the nodes are fewer than 63) */

static uint64_t valid_mask(starpu_data_handle_t h)
{
	uint64_t mask = 0;
	for (unsigned node = 0; node < _astro_rt.nmemory_nodes; node++)
		mask |= (uint64_t)h->valid[node] << node;
	return mask;
}

static enum astro_data_state msi_of(uint64_t mask, unsigned node)
{
	mask &= ~MSI_TAKEN;
	if (!(mask >> node & 1))
		return ASTRO_DATA_INVALID;
	return mask & ~(UINT64_C(1) << node) ? ASTRO_DATA_SHARED : ASTRO_DATA_OWNER;
}

static void msi_report(starpu_data_handle_t h, uint64_t before)
{
	uint64_t after = valid_mask(h);
	for (unsigned node = 0; node < _astro_rt.nmemory_nodes; node++) {
		enum astro_data_state state = msi_of(after, node);
		if (state != msi_of(before, node))
			_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_STATE, .workerid = _astro_worker_id(), .object = h, .dst_node = node,
				       .nimpl = state);
	}
}

/* The requests observers see (DATA_REQUEST): numbered from 1 as they are reported. */
static unsigned long nrequests;

static int valid_source(starpu_data_handle_t h, unsigned avoid)
{
	if (h->valid[STARPU_MAIN_RAM] && avoid != STARPU_MAIN_RAM)
		return STARPU_MAIN_RAM;
	for (unsigned node = 0; node < _astro_rt.nmemory_nodes; node++)
		if (node != avoid && h->valid[node])
			return (int)node;
	return -1;
}

/* Makes node's copy valid (coherency_lock held, node allocated); with async, the copy may still be under way. */
static int load(starpu_data_handle_t h, unsigned node, bool async, enum starpu_is_prefetch kind)
{
	int src = valid_source(h, node);
	if (src < 0)
		return 0; /* nothing valid anywhere (invalidated): the content is undefined */
	_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_REQUEST, .workerid = _astro_worker_id(), .object = h, .src_node = (unsigned)src,
		       .dst_node = node, .nimpl = (unsigned)kind, .other_id = __atomic_add_fetch(&nrequests, 1, __ATOMIC_RELAXED));
	if (src != STARPU_MAIN_RAM && node != STARPU_MAIN_RAM) {
		/* No direct path between two devices: through main memory, which keeps a valid copy. */
		int ret = allocate(h, STARPU_MAIN_RAM, kind);
		if (!ret)
			ret = transfer(h, (unsigned)src, STARPU_MAIN_RAM, false);
		if (ret)
			return ret;
		h->valid[STARPU_MAIN_RAM] = true;
		src = STARPU_MAIN_RAM;
	}
	return transfer(h, (unsigned)src, node, async);
}

static bool has_valid_copy(starpu_data_handle_t h)
{
	return valid_source(h, STARPU_MAXNODES) >= 0;
}

/* Main memory's copies are evicted only to a disk; a buffer the program gave
 * (starpu_data_ptr_register) is not the runtime's to evict. */
static void lru_track(starpu_data_handle_t h, unsigned node)
{
	if (h->owns_alloc[node] && (node != STARPU_MAIN_RAM || __atomic_load_n(&_astro_disk_count, __ATOMIC_RELAXED)))
		_astro_lru_touch(&h->replicates[node]);
}

/* With async, the copy to node may be left under way (pin must be set: the copy stays until it arrives).
 * kind: what asks, for the observers (STARPU_FETCH, STARPU_TASK_PREFETCH or STARPU_PREFETCH). */
static int fetch_copies(starpu_data_handle_t h, unsigned node, enum starpu_data_access_mode mode, bool pin, bool async, enum starpu_is_prefetch kind)
{
	bool reads = (mode & (STARPU_R | STARPU_REDUX)) || !(mode & STARPU_W);
	bool writes = (mode & (STARPU_W | STARPU_REDUX)) != 0;
	/* A copy still arriving to node serves an asynchronous fetch there too. */
	arrive_all(h, async ? node : STARPU_MAXNODES);
	int ret = allocate(h, node, kind);
	if (ret)
		return ret;
	if (reads && !h->valid[node]) {
		ret = load(h, node, async, kind);
		if (ret)
			return ret;
	}
	if (writes)
		for (unsigned other = 0; other < _astro_rt.nmemory_nodes; other++)
			h->valid[other] = false;
	if (reads || writes || !has_valid_copy(h))
		h->valid[node] = true;
	struct _astro_replicate *r = &h->replicates[node];
	if (pin) {
		r->pinned++;
		h->writers_running += writes;
	}
	lru_track(h, node);
	return 0;
}

static int fetch_locked(starpu_data_handle_t h, unsigned node, enum starpu_data_access_mode mode, bool pin, bool async, enum starpu_is_prefetch kind)
{
	MSI_BEFORE(h);
	int ret = fetch_copies(h, node, mode, pin, async, kind);
	MSI_AFTER(h);
	return ret;
}

int _astro_coherency_fetch(starpu_data_handle_t h, unsigned node, enum starpu_data_access_mode mode, bool pin)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	int ret = fetch_locked(h, node, mode, pin, false, STARPU_FETCH);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	if (ret == -ENOMEM) {
		char name[32];
		starpu_memory_node_get_name(node, name, sizeof(name));
		_astro_error("no room for %zu bytes of data on %s, even after evicting what no running task uses: "
			     "raise its limit (STARPU_LIMIT_*_MEM) or use smaller pieces", starpu_data_get_alloc_size(h), name);
	}
	return ret;
}

int _astro_coherency_fetch_async(starpu_data_handle_t h, unsigned node, enum starpu_data_access_mode mode)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	int ret = fetch_locked(h, node, mode, true, true, STARPU_TASK_PREFETCH);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	return ret;
}

int _astro_coherency_arrived(starpu_data_handle_t h, unsigned node)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	int ret = arrive(h, node);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	return ret;
}

/* Gives handle a buffer on node without bringing its data there: 0 or -ENOMEM. With nothing
 * valid anywhere, this fresh buffer is the (undefined) content. */
static int allocate_buffer(starpu_data_handle_t h, unsigned node)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	MSI_BEFORE(h);
	int ret = allocate(h, node, STARPU_FETCH);
	if (!ret) {
		if (!has_valid_copy(h))
			h->valid[node] = true;
		lru_track(h, node);
	}
	MSI_AFTER(h);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	return ret;
}

bool _astro_coherency_materialize(starpu_data_handle_t h, unsigned node)
{
	int ret = allocate_buffer(h, node);
	if (ret)
		_astro_error("no room for the first buffer of a %s handle registered on no node (%zu bytes on node %u)",
			     h->ops->name ? h->ops->name : "data", starpu_data_get_alloc_size(h), node);
	return ret == 0;
}

void _astro_coherency_invalidate(starpu_data_handle_t h)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	MSI_BEFORE(h);
	for (unsigned node = 0; node < STARPU_MAXNODES; node++)
		h->valid[node] = false;
	MSI_AFTER(h);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
}

void _astro_coherency_unpin(starpu_data_handle_t h, unsigned node, enum starpu_data_access_mode mode)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	h->replicates[node].pinned--;
	h->writers_running -= (mode & (STARPU_W | STARPU_REDUX)) != 0;
	starpu_pthread_mutex_unlock(&h->coherency_lock);
}

static bool evict(starpu_data_handle_t h, unsigned node)
{
	arrive_all(h, STARPU_MAXNODES);
	if (h->valid[node] && valid_source(h, node) < 0) {
		/* The only valid copy (dirty): main memory gets it first, or a disk gets main memory's. */
		int to = node == STARPU_MAIN_RAM ? _astro_disk_evict_target(h) : STARPU_MAIN_RAM;
		size_t bytes = starpu_data_get_size(h);
		_ASTRO_OBSERVE(ASTRO_MOMENT_MEMORY_STATE_BEGIN, .workerid = _astro_worker_id(), .dst_node = node, .bytes = bytes, .object = h,
			       .nimpl = ASTRO_MEMORY_WRITING_BACK);
		bool written = to >= 0 && allocate(h, (unsigned)to, STARPU_FETCH) == 0 && transfer(h, node, (unsigned)to, false) == 0;
		_ASTRO_OBSERVE(ASTRO_MOMENT_MEMORY_STATE_END, .workerid = _astro_worker_id(), .dst_node = node, .bytes = bytes, .object = h,
			       .nimpl = ASTRO_MEMORY_WRITING_BACK);
		if (written)
			h->valid[to] = true;
		else
			return false; /* keep it rather than lose the data */
	}
	release_buffer(h, node, false);
	return true;
}

bool _astro_coherency_evict(starpu_data_handle_t h, unsigned node)
{
	MSI_BEFORE(h);
	bool evicted = evict(h, node);
	MSI_AFTER(h);
	return evicted;
}

void _astro_coherency_free_devices(starpu_data_handle_t h)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	for (unsigned node = 1; node < STARPU_MAXNODES; node++)
		if (h->replicates[node].allocated) /* a disk's files are deleted at once, not cached */
			release_buffer(h, node, node < _astro_rt.nmemory_nodes && _astro_nodes[node].kind != STARPU_DISK_RAM);
	if (h->replicates[STARPU_MAIN_RAM].in_lru) /* with a disk: main memory's copy goes with the handle */
		_astro_lru_remove(&h->replicates[STARPU_MAIN_RAM]);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
}

int _astro_coherency_acquired(starpu_data_handle_t h, enum starpu_data_access_mode mode, int node, bool evict)
{
	if (__atomic_load_n(&h->redux, __ATOMIC_ACQUIRE) && _astro_redux_combine(h) != 0)
		return -ENOMEM;
	if (node < 0)
		return 0;
	if (_astro_rt.nmemory_nodes <= 1) {
		if (__atomic_load_n(&_astro_unallocated_handles, __ATOMIC_RELAXED) && !h->replicates[node].allocated &&
		    !_astro_coherency_materialize(h, (unsigned)node))
			return -ENOMEM;
		return 0;
	}
	mode &= ~STARPU_SCRATCH;
	if (_astro_coherency_fetch(h, (unsigned)node, mode, false) != 0)
		return -ENOMEM;
	if (evict) {
		/* starpu_data_wont_use(): main memory now holds it, the devices' room is free again. */
		starpu_pthread_mutex_lock(&h->coherency_lock);
		MSI_BEFORE(h);
		for (unsigned node = 1; node < _astro_rt.nmemory_nodes; node++)
			if (h->replicates[node].allocated && !h->replicates[node].pinned)
				release_buffer(h, node, false);
		MSI_AFTER(h);
		starpu_pthread_mutex_unlock(&h->coherency_lock);
	}
	return 0;
}

/* ------------------------------------------------------ the transfer thread */

/* Asynchronous prefetches: one thread moves the data while the workers
 * compute. A request holds its handle (busy) until it is done, or tells its
 * requester (a runtime acquire ends then). */
struct transfer_request
{
	starpu_data_handle_t handle;
	unsigned node;
	void (*done)(void *arg);             /* NULL: the request held the handle, which it lets go */
	void *arg;
	enum starpu_is_prefetch level;       /* served by level, then by priority */
	int prio;
	bool allocation;                     /* only allocates the buffer (starpu_data_request_allocation) */
	struct transfer_request *next;
};

/* Is a served before b (both queued)? */
static bool served_before(const struct transfer_request *a, const struct transfer_request *b)
{
	return a->level != b->level ? a->level < b->level : a->prio > b->prio;
}

static void transfer_done(starpu_data_handle_t h, void (*done)(void *arg), void *arg)
{
	if (done)
		done(arg);
	else
		_astro_data_unhold(h);
}
static starpu_pthread_mutex_t queue_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_cond_t queue_cond = STARPU_PTHREAD_COND_INITIALIZER;
static struct transfer_request *queue_head, *queue_tail;
static bool transfers_running;
static bool transfer_moving;             /* the thread moves a request's data (under queue_lock) */
static struct transfer_request *moving;  /* the request whose data it copies now, NULL when none (under queue_lock) */
static starpu_pthread_t transfer_thread;

/* A prefetch is a hint: while a writer of the handle runs, the data it would
 * copy is being changed, so it is skipped (the writer's task fetches later). */
static void prefetch_now(starpu_data_handle_t h, unsigned node)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	if (!h->writers_running)
		fetch_locked(h, node, STARPU_R, false, false, STARPU_PREFETCH);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
}

/* An allocation asked ahead: what could not be made is said (a later fetch tries again). */
static void allocate_now(starpu_data_handle_t h, unsigned node)
{
	if (allocate_buffer(h, node) == -ENOMEM) {
		char name[32];
		starpu_memory_node_get_name(node, name, sizeof(name));
		_astro_error("starpu_data_request_allocation: no room for %zu bytes of data on %s, even after evicting "
			     "what no running task uses: the allocation is left to the first fetch there",
			     starpu_data_get_alloc_size(h), name);
	}
}

/* The requests bringing data to the replicate (starpu_data_is_on_node reads them without the queue's lock). */
static unsigned *requests_of(const struct transfer_request *r)
{
	struct _astro_replicate *rep = &r->handle->replicates[r->node];
	return r->level == STARPU_FETCH ? &rep->fetches_requested : &rep->prefetches_requested;
}

static void *transfer_main(void *arg)
{
	(void)arg;
	starpu_pthread_mutex_lock(&queue_lock);
	for (;;) {
		while (!queue_head && transfers_running)
			starpu_pthread_cond_wait(&queue_cond, &queue_lock);
		struct transfer_request *r = queue_head;
		if (!r)
			break; /* stopped, and nothing left */
		queue_head = r->next;
		if (!queue_head)
			queue_tail = NULL;
		transfer_moving = true;
		moving = r;
		starpu_pthread_mutex_unlock(&queue_lock);
		if (r->allocation)
			allocate_now(r->handle, r->node);
		else
			prefetch_now(r->handle, r->node);
		starpu_pthread_mutex_lock(&queue_lock);
		moving = NULL;
		if (!r->allocation)
			__atomic_sub_fetch(requests_of(r), 1, __ATOMIC_RELAXED);
		starpu_pthread_mutex_unlock(&queue_lock);
		transfer_done(r->handle, r->done, r->arg);
		free(r);
		starpu_pthread_mutex_lock(&queue_lock);
		transfer_moving = false;
	}
	starpu_pthread_mutex_unlock(&queue_lock);
	return NULL;
}

void _astro_transfers_start(void)
{
	if (_astro_rt.nmemory_nodes <= 1)
		return;
	transfers_running = true;
	if (starpu_pthread_create(&transfer_thread, NULL, transfer_main, NULL) != 0) {
		_astro_warn("cannot start the transfer thread: prefetches are done at once by the thread asking");
		transfers_running = false;
	}
}

void _astro_transfers_stop(void)
{
	starpu_pthread_mutex_lock(&queue_lock);
	bool running = transfers_running;
	transfers_running = false;
	starpu_pthread_cond_signal(&queue_cond);
	starpu_pthread_mutex_unlock(&queue_lock);
	if (running)
		starpu_pthread_join(transfer_thread, NULL); /* after the requests left */
}

static void submit(starpu_data_handle_t h, unsigned node, enum starpu_is_prefetch level, int prio, bool allocation,
		   void (*done)(void *arg), void *arg)
{
	struct transfer_request *r = malloc(sizeof(*r));
	starpu_pthread_mutex_lock(&queue_lock);
	if (!r || !transfers_running) {
		starpu_pthread_mutex_unlock(&queue_lock);
		free(r);
		if (allocation)
			allocate_now(h, node);
		else
			prefetch_now(h, node);
		transfer_done(h, done, arg);
		return;
	}
	*r = (struct transfer_request) { .handle = h, .node = node, .done = done, .arg = arg, .level = level, .prio = prio,
					 .allocation = allocation };
	if (!allocation)
		__atomic_add_fetch(requests_of(r), 1, __ATOMIC_RELAXED);
	if (!queue_tail || !served_before(r, queue_tail)) {
		if (queue_tail)
			queue_tail->next = r;
		else
			queue_head = r;
		queue_tail = r;
	} else {
		/* Before the first request it is served before (there is one: the tail). */
		struct transfer_request **at = &queue_head;
		while (!served_before(r, *at))
			at = &(*at)->next;
		r->next = *at;
		*at = r;
	}
	starpu_pthread_cond_signal(&queue_cond);
	starpu_pthread_mutex_unlock(&queue_lock);
}

void _astro_transfer_submit(starpu_data_handle_t h, unsigned node, enum starpu_is_prefetch level, int prio, void (*done)(void *arg), void *arg)
{
	submit(h, node, level, prio, false, done, arg);
}

/* As StarPU, at prefetch level and priority 0. */
void _astro_transfer_submit_allocation(starpu_data_handle_t h, unsigned node)
{
	submit(h, node, STARPU_PREFETCH, 0, true, NULL, NULL);
}

/* Valid there, or a fetch (or also a prefetch, with prefetches) of the transfer thread is to bring it. */
unsigned _astro_data_on_node(starpu_data_handle_t h, unsigned node, bool prefetches)
{
	const struct _astro_replicate *r = &h->replicates[node];
	if (__atomic_load_n(&r->fetches_requested, __ATOMIC_RELAXED) ||
	    (prefetches && __atomic_load_n(&r->prefetches_requested, __ATOMIC_RELAXED)))
		return 1;
	/* The transfer thread may be changing it. */
	starpu_pthread_mutex_lock(&h->coherency_lock);
	unsigned valid = h->valid[node];
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	return valid;
}

bool _astro_transfers_idle(void)
{
	starpu_pthread_mutex_lock(&queue_lock);
	bool idle = !queue_head && !transfer_moving;
	starpu_pthread_mutex_unlock(&queue_lock);
	return idle;
}

static bool transfer_requested(starpu_data_handle_t h, unsigned node)
{
	starpu_pthread_mutex_lock(&queue_lock);
	bool requested = moving && moving->handle == h && moving->node == node;
	for (struct transfer_request *r = queue_head; r && !requested; r = r->next)
		requested = r->handle == h && r->node == node;
	starpu_pthread_mutex_unlock(&queue_lock);
	return requested;
}

void starpu_data_query_status2(starpu_data_handle_t handle, int memory_node, int *is_allocated, int *is_valid, int *is_loading,
			       int *is_requested)
{
	int allocated = 0, valid = 0, loading = 0, requested = 0;
	if (!_astro_data_live(handle, "starpu_data_query_status")) {
		/* reported */
	} else if (memory_node < 0 || (unsigned)memory_node >= starpu_memory_nodes_get_count()) {
		_astro_error("starpu_data_query_status: no memory node %d (there are %u): each status reads 0", memory_node,
			     starpu_memory_nodes_get_count());
	} else {
		starpu_pthread_mutex_lock(&handle->coherency_lock);
		allocated = handle->replicates[memory_node].allocated;
		valid = handle->valid[memory_node];
		loading = handle->replicates[memory_node].copy != NULL;
		starpu_pthread_mutex_unlock(&handle->coherency_lock);
		requested = transfer_requested(handle, (unsigned)memory_node);
	}
	if (is_allocated)
		*is_allocated = allocated;
	if (is_valid)
		*is_valid = valid;
	if (is_loading)
		*is_loading = loading;
	if (is_requested)
		*is_requested = requested;
}

void starpu_data_query_status(starpu_data_handle_t handle, int memory_node, int *is_allocated, int *is_valid, int *is_requested)
{
	starpu_data_query_status2(handle, memory_node, is_allocated, is_valid, NULL, is_requested);
}

void _astro_coherency_task_in_ram(struct starpu_task *task)
{
	unsigned n = _astro_task_nbuffers(task);
	for (unsigned i = 0; i < n; i++) {
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		if (!(mode & STARPU_SCRATCH))
			_astro_coherency_fetch(STARPU_TASK_GET_HANDLE(task, i), STARPU_MAIN_RAM, mode, false);
	}
}

/* ---------------------------------------------------- transfer prediction */

static bool valid_pair(unsigned src, unsigned dst)
{
	unsigned n = starpu_memory_nodes_get_count();
	return src < n && dst < n;
}

/* Until a transfer was measured: what a PCIe-like bus does. */
#define DEFAULT_BANDWIDTH_MBS 10000.0
#define DEFAULT_LATENCY_US 10.0

double starpu_transfer_bandwidth(unsigned src_node, unsigned dst_node)
{
	if (!valid_pair(src_node, dst_node))
		return 0.0;
	double bandwidth, latency;
	if (_astro_bus_figures(src_node, dst_node, &bandwidth, &latency))
		return bandwidth;
	/* Else from the transfers seen above 4 KiB, where the latency does not dominate. */
	starpu_pthread_mutex_lock(&measure_lock);
	double us = transfer_us[src_node][dst_node] - small_transfer_us[src_node][dst_node];
	double bytes = transfer_bytes[src_node][dst_node] - small_transfer_bytes[src_node][dst_node];
	starpu_pthread_mutex_unlock(&measure_lock);
	return us > 0 && bytes > 0 ? bytes / us : DEFAULT_BANDWIDTH_MBS; /* bytes per µs: MB/s */
}

double starpu_transfer_latency(unsigned src_node, unsigned dst_node)
{
	if (!valid_pair(src_node, dst_node) || src_node == dst_node)
		return 0.0;
	double bandwidth, latency;
	if (_astro_bus_figures(src_node, dst_node, &bandwidth, &latency))
		return latency;
	starpu_pthread_mutex_lock(&measure_lock);
	unsigned long n = small_transfer_count[src_node][dst_node];
	double us = n ? small_transfer_us[src_node][dst_node] / (double)n : DEFAULT_LATENCY_US;
	starpu_pthread_mutex_unlock(&measure_lock);
	return us;
}

double starpu_transfer_predict(unsigned src_node, unsigned dst_node, size_t size)
{
	if (!valid_pair(src_node, dst_node) || src_node == dst_node)
		return 0.0;
	/* Between two devices the data goes through main memory. */
	if (src_node != STARPU_MAIN_RAM && dst_node != STARPU_MAIN_RAM)
		return starpu_transfer_predict(src_node, STARPU_MAIN_RAM, size) + starpu_transfer_predict(STARPU_MAIN_RAM, dst_node, size);
	return starpu_transfer_latency(src_node, dst_node) + (double)size / starpu_transfer_bandwidth(src_node, dst_node);
}

double _astro_data_transfer_time(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode)
{
	if (_astro_rt.nmemory_nodes <= 1 || !handle || node >= _astro_rt.nmemory_nodes)
		return 0.0;
	if (!(mode & (STARPU_R | STARPU_REDUX)) && (mode & STARPU_W))
		return 0.0; /* written only: nothing to bring */
	starpu_pthread_mutex_lock(&handle->coherency_lock);
	int src = handle->valid[node] ? -1 : valid_source(handle, node);
	starpu_pthread_mutex_unlock(&handle->coherency_lock);
	return src < 0 ? 0.0 : starpu_transfer_predict((unsigned)src, node, starpu_data_get_size(handle));
}

/* The copy of a handle's data between two interfaces of its layout that are not
 * its replicates (a reduction's per-worker buffers): synchronous, observed as a transfer. */
int _astro_interface_transfer(starpu_data_handle_t h, void *src_iface, unsigned src, void *dst_iface, unsigned dst)
{
	const struct starpu_data_copy_methods *m = h->ops->copy_methods;
	pair_copy_fn pair = m ? pair_method(m, starpu_node_get_kind(src), starpu_node_get_kind(dst)) : NULL;
	if (!pair && (!m || !m->any_to_any)) {
		_astro_error("interface %s has no copy method between nodes %u and %u: give its copy_methods an any_to_any",
			     h->ops->name ? h->ops->name : "(unnamed)", src, dst);
		return -ENOSYS;
	}
	size_t bytes = starpu_data_get_size(h);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_BEGIN, .workerid = _astro_worker_id(), .src_node = src, .dst_node = dst, .bytes = bytes);
	int ret = pair ? pair(src_iface, src, dst_iface, dst) : m->any_to_any(src_iface, src, dst_iface, dst, NULL);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_END, .workerid = _astro_worker_id(), .src_node = src, .dst_node = dst, .bytes = bytes);
	if (ret < 0 && ret != -EAGAIN)
		_astro_error("copying a %s buffer from node %u to node %u failed (%d)", h->ops->name ? h->ops->name : "data", src, dst, ret);
	return ret == -EAGAIN ? 0 : ret;
}
