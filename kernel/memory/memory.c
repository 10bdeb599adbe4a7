/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Memory nodes: the table (main memory is node 0, or nodes 0.. one per NUMA
 * node with STARPU_USE_NUMA=1, then one node per device a driver with node
 * ops brings), allocation on a node under its limit, with
 * eviction of the least recently used copies, and copies between nodes
 * through the drivers' node ops. Coherency lives in coherency.c.
 */
#include "memory/memory.h"
#include <sys/mman.h>
#include <unistd.h>

struct _astro_memory_node _astro_nodes[STARPU_MAXNODES];

static size_t malloc_align = 64;
/* Disk nodes registered (disk.c counts them): main memory may evict to them. */
int _astro_disk_count;

/* ------------------------------------------------------------ the table */

static const char *kind_name(enum starpu_node_kind kind)
{
	switch (kind) {
	case STARPU_CPU_RAM: return "NUMA";
	case STARPU_CUDA_RAM: return "CUDA";
	case STARPU_OPENCL_RAM: return "OpenCL";
	case STARPU_HIP_RAM: return "HIP";
	case STARPU_DISK_RAM: return "Disk";
	default: return "node";
	}
}

/* STARPU_LIMIT_<KIND>_<devid>_MEM, else STARPU_LIMIT_<KIND>_MEM (for main memory also
 * STARPU_LIMIT_CPU_NUMA_MEM), in MiB: bytes, 0 when unlimited. A disk's is its registered size. */
static size_t node_limit(enum starpu_node_kind kind, int devid)
{
	if (kind == STARPU_DISK_RAM)
		return 0;
	const char *what = kind == STARPU_CUDA_RAM ? "CUDA" : kind == STARPU_OPENCL_RAM ? "OPENCL" :
			   kind == STARPU_HIP_RAM ? "HIP" : "CPU";
	char name[64];
	int mib;
	if (kind == STARPU_CPU_RAM)
		snprintf(name, sizeof(name), "STARPU_LIMIT_CPU_NUMA_%d_MEM", devid);
	else
		snprintf(name, sizeof(name), "STARPU_LIMIT_%s_%d_MEM", what, devid);
	if (_astro_env_int(name, 0, INT_MAX, NULL, &mib) == 1)
		return (size_t)mib << 20;
	if (kind == STARPU_CPU_RAM && _astro_env_int("STARPU_LIMIT_CPU_NUMA_MEM", 0, INT_MAX, NULL, &mib) == 1)
		return (size_t)mib << 20;
	snprintf(name, sizeof(name), "STARPU_LIMIT_%s_MEM", what);
	if (_astro_env_int(name, 0, INT_MAX, NULL, &mib) == 1)
		return (size_t)mib << 20;
	return 0;
}

static void node_init(unsigned id, enum starpu_node_kind kind, int devid, const struct astro_driver *driver)
{
	struct _astro_memory_node *n = &_astro_nodes[id];
	starpu_pthread_mutex_init(&n->lru_lock, NULL);
	n->kind = kind;
	n->devid = devid;
	n->driver = driver;
	n->ops = driver ? driver->node_ops : NULL;
	n->used = 0;
	n->malloc_flags = STARPU_MALLOC_PINNED | STARPU_MALLOC_COUNT;
	n->limit = node_limit(kind, devid);
	n->lru_head = n->lru_tail = NULL;
}

void _astro_memory_nodes_init(void)
{
	unsigned nram = _astro_numa_nodes_init();
	for (unsigned i = 0; i < nram; i++)
		node_init(i, STARPU_CPU_RAM, (int)i, NULL);
	_astro_rt.nmemory_nodes = nram;
}

static int node_add(const struct astro_driver *driver, const struct astro_node_ops *ops, int devid)
{
	unsigned id = _astro_rt.nmemory_nodes;
	if (id >= STARPU_MAXNODES) {
		_astro_warn("%s %d needs a memory node but all %d are taken: it is not used (STARPU_MAXNODES is %d)",
			    driver ? driver->name : kind_name(ops->kind), devid, STARPU_MAXNODES, STARPU_MAXNODES);
		return -ENOSPC;
	}
	node_init(id, ops->kind, devid, driver);
	_astro_nodes[id].ops = ops;
	_astro_rt.nmemory_nodes = id + 1;
	return (int)id;
}

int _astro_memory_node_add(const struct astro_driver *driver, int devid)
{
	return node_add(driver, driver->node_ops, devid);
}

int _astro_memory_node_add_ops(const struct astro_node_ops *ops, int devid)
{
	return node_add(NULL, ops, devid);
}

void _astro_memory_nodes_shutdown(void)
{
	for (unsigned i = 0; i < _astro_rt.nmemory_nodes; i++) {
		if (_astro_nodes[i].used && i != STARPU_MAIN_RAM)
			_astro_verbose("%s %d: %zu bytes still allocated at shutdown (handles not unregistered)",
				       kind_name(_astro_nodes[i].kind), _astro_nodes[i].devid, _astro_nodes[i].used);
		starpu_pthread_mutex_destroy(&_astro_nodes[i].lru_lock);
	}
	memset(_astro_nodes, 0, sizeof(_astro_nodes));
	_astro_rt.nmemory_nodes = 0;
}

static bool valid_node(unsigned node)
{
	return node < starpu_memory_nodes_get_count();
}

unsigned starpu_memory_nodes_get_count(void)
{
	return _astro_rt.nmemory_nodes ? _astro_rt.nmemory_nodes : 1;
}

enum starpu_node_kind starpu_node_get_kind(unsigned node)
{
	if (node == STARPU_MAIN_RAM)
		return STARPU_CPU_RAM;
	return valid_node(node) ? _astro_nodes[node].kind : STARPU_UNUSED;
}

int starpu_memory_node_get_devid(unsigned node)
{
	return valid_node(node) ? _astro_nodes[node].devid : -1;
}

unsigned starpu_memory_nodes_get_count_by_kind(enum starpu_node_kind kind)
{
	unsigned n = 0;
	for (unsigned i = 0; i < starpu_memory_nodes_get_count(); i++)
		n += starpu_node_get_kind(i) == kind;
	return n;
}

int starpu_memory_node_get_name(unsigned node, char *name, size_t size)
{
	if (!name || !size) {
		_astro_error("starpu_memory_node_get_name: NULL or empty name buffer");
		return -EINVAL;
	}
	if (!valid_node(node)) {
		snprintf(name, size, "(invalid node %u)", node);
		return -EINVAL;
	}
	/* As StarPU: main memory is named after its NUMA node, a device's memory after the device. */
	return snprintf(name, size, "%s %d", kind_name(starpu_node_get_kind(node)), node == STARPU_MAIN_RAM ? 0 : _astro_nodes[node].devid);
}

/* --------------------------------------------------------- main memory */

void starpu_malloc_set_align(size_t align)
{
	if (align && (align & (align - 1)) == 0 && align > malloc_align)
		malloc_align = align;
}

/* Pinning matters to devices only (faster DMA); PoCL and a machine without
 * devices gain nothing from it, and mlock may be refused without harm. */
static bool pin_wanted(int flags)
{
	return (flags & STARPU_MALLOC_PINNED) && _astro_rt.nmemory_nodes > 1;
}

/* The node ops of node when it is its driver's first node (a driver's nodes
 * follow each other), NULL otherwise: each driver once. */
static const struct astro_node_ops *driver_ops(unsigned node)
{
	const struct astro_node_ops *ops = _astro_nodes[node].ops;
	return ops && (node == 0 || _astro_nodes[node - 1].ops != ops) ? ops : NULL;
}

/* Page-locks a buffer for the devices: each driver whose node ops register
 * main memory does (CUDA's cudaHostRegister: its copies then run at full
 * speed, asynchronously); with none, mlock. */
static void pin_host(void *addr, size_t size)
{
	bool registered = false;
	for (unsigned node = 0; node < _astro_rt.nmemory_nodes; node++) {
		const struct astro_node_ops *ops = driver_ops(node);
		if (ops && ops->host_register)
			registered |= ops->host_register(addr, size) == 0;
	}
	if (!registered)
		(void)mlock(addr, size);
}

static void unpin_host(void *addr, size_t size)
{
	for (unsigned node = 0; node < _astro_rt.nmemory_nodes; node++) {
		const struct astro_node_ops *ops = driver_ops(node);
		if (ops && ops->host_unregister)
			ops->host_unregister(addr);
	}
	if (size)
		(void)munlock(addr, size);
}

/* The program's allocation functions for main memory (starpu_malloc_set_hooks), NULL: ours. */
static starpu_malloc_hook malloc_hook;
static starpu_free_hook free_hook;

void starpu_malloc_set_hooks(starpu_malloc_hook new_malloc_hook, starpu_free_hook new_free_hook)
{
	if (!new_malloc_hook != !new_free_hook) {
		_astro_error("starpu_malloc_set_hooks: only the %s hook is given: give both (a buffer must be freed by the "
			     "function matching its allocation), or both NULL for the runtime's own; the hooks are unchanged",
			     new_malloc_hook ? "malloc" : "free");
		return;
	}
	__atomic_store_n(&malloc_hook, new_malloc_hook, __ATOMIC_RELEASE);
	__atomic_store_n(&free_hook, new_free_hook, __ATOMIC_RELEASE);
}

/* A main-memory (or NUMA) buffer on node, by the program's hook when it set one. */
static int malloc_on(unsigned node, void **A, size_t dim, int flags)
{
	starpu_malloc_hook hook = __atomic_load_n(&malloc_hook, __ATOMIC_ACQUIRE);
	if (hook) {
		*A = NULL;
		int ret = hook(node, A, dim, flags & ~STARPU_MALLOC_COUNT);
		if (ret == 0 && !*A) {
			_astro_error("starpu_malloc: the malloc hook returned 0 without a buffer: it must set *A, or return -ENOMEM");
			ret = -ENOMEM;
		}
		if (ret != 0)
			*A = NULL;
		return ret;
	}
	if (posix_memalign(A, malloc_align, dim ? dim : 1) != 0) {
		*A = NULL;
		return -ENOMEM;
	}
	if (pin_wanted(flags))
		pin_host(*A, dim);
	return 0;
}

static void free_on(unsigned node, void *A, size_t dim, int flags)
{
	starpu_free_hook hook = __atomic_load_n(&free_hook, __ATOMIC_ACQUIRE);
	if (hook) {
		hook(node, A, dim, flags & ~STARPU_MALLOC_COUNT);
		return;
	}
	if (pin_wanted(flags))
		unpin_host(A, dim); /* dim 0 (starpu_free): the drivers' registration still goes */
	free(A);
}

static int count_against_limit(unsigned node, size_t size, int flags, bool reclaim);

int starpu_malloc_flags(void **A, size_t dim, int flags)
{
	if (!A) {
		_astro_error("starpu_malloc: NULL result pointer");
		return -EINVAL;
	}
	if ((flags & STARPU_MALLOC_COUNT) && count_against_limit(STARPU_MAIN_RAM, dim, flags, true) != 0) {
		*A = NULL;
		return -ENOMEM;
	}
#ifdef STARPU_SIMGRID
	if ((flags & STARPU_MALLOC_SIMULATION_FOLDED) && _astro_folded_alloc(A, dim) == 0)
		return 0;
#endif
	int ret = malloc_on(STARPU_MAIN_RAM, A, dim, flags);
	if (ret && (flags & STARPU_MALLOC_COUNT))
		__atomic_sub_fetch(&_astro_nodes[STARPU_MAIN_RAM].used, dim, __ATOMIC_RELAXED);
	return ret;
}

int starpu_malloc(void **A, size_t dim)
{
	return starpu_malloc_flags(A, dim, STARPU_MALLOC_PINNED);
}

int starpu_free_flags(void *A, size_t dim, int flags)
{
	if (!A)
		return 0;
	if (flags & STARPU_MALLOC_COUNT)
		__atomic_sub_fetch(&_astro_nodes[STARPU_MAIN_RAM].used, dim, __ATOMIC_RELAXED);
#ifdef STARPU_SIMGRID
	if (_astro_folded_free(A))
		return 0;
#endif
	free_on(STARPU_MAIN_RAM, A, dim, flags);
	return 0;
}

int starpu_free_noflag(void *A, size_t dim)
{
	return starpu_free_flags(A, dim, STARPU_MALLOC_PINNED);
}

int starpu_free(void *A)
{
	return starpu_free_flags(A, 0, STARPU_MALLOC_PINNED);
}

int starpu_memory_pin(void *addr, size_t size)
{
	if (!addr && size) {
		_astro_error("starpu_memory_pin: NULL address");
		return -EINVAL;
	}
	if (pin_wanted(STARPU_MALLOC_PINNED) && size)
		pin_host(addr, size);
	return 0;
}

int starpu_memory_unpin(void *addr, size_t size)
{
	if (addr && size && pin_wanted(STARPU_MALLOC_PINNED))
		unpin_host(addr, size);
	return 0;
}

/* ---------------------------------------------------- totals and limits */

static starpu_ssize_t node_total(unsigned node)
{
	struct _astro_memory_node *n = &_astro_nodes[node];
	if (n->limit)
		return (starpu_ssize_t)n->limit;
	if (node == STARPU_MAIN_RAM) {
		long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
		return pages > 0 && page > 0 ? (starpu_ssize_t)pages * page : -1;
	}
	size_t size = n->ops && n->ops->memory_size ? n->ops->memory_size(n->devid) : n->ops ? 0 : _astro_numa_memory(node);
	return size ? (starpu_ssize_t)size : -1;
}

starpu_ssize_t starpu_memory_get_total(unsigned node)
{
	return valid_node(node) ? node_total(node) : -1;
}

/* The sum of per_node over the nodes that know their figure. */
static starpu_ssize_t sum_over_nodes(starpu_ssize_t (*per_node)(unsigned))
{
	starpu_ssize_t total = 0;
	for (unsigned i = 0; i < starpu_memory_nodes_get_count(); i++) {
		starpu_ssize_t v = per_node(i);
		if (v > 0)
			total += v;
	}
	return total;
}

size_t starpu_memory_get_used(unsigned node)
{
	if (!valid_node(node)) {
		_astro_error("starpu_memory_get_used: no memory node %u (there are %u)", node, starpu_memory_nodes_get_count());
		return 0;
	}
	return __atomic_load_n(&_astro_nodes[node].used, __ATOMIC_RELAXED);
}

size_t starpu_memory_get_used_all_nodes(void)
{
	size_t used = 0;
	for (unsigned node = 0; node < starpu_memory_nodes_get_count(); node++)
		used += __atomic_load_n(&_astro_nodes[node].used, __ATOMIC_RELAXED);
	return used;
}

starpu_ssize_t starpu_memory_get_total_all_nodes(void)
{
	return sum_over_nodes(starpu_memory_get_total);
}

starpu_ssize_t starpu_memory_get_available(unsigned node)
{
	if (!valid_node(node))
		return -1;
	struct _astro_memory_node *n = &_astro_nodes[node];
	if (node == STARPU_MAIN_RAM && !n->limit) {
		long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
		return pages > 0 && page > 0 ? (starpu_ssize_t)pages * page : -1;
	}
	starpu_ssize_t total = node_total(node);
	if (total < 0)
		return -1;
	starpu_ssize_t used = (starpu_ssize_t)__atomic_load_n(&n->used, __ATOMIC_RELAXED);
	return used < total ? total - used : 0;
}

starpu_ssize_t starpu_memory_get_available_all_nodes(void)
{
	return sum_over_nodes(starpu_memory_get_available);
}

/* ---------------------------------------------------- allocation on nodes */

/* What makes room on a full node (data/lru.c sets it); NULL: nothing. */
static bool (*reclaimer)(unsigned node, bool *busy);
_ASTRO_TLS bool _astro_evicting_ram;

void _astro_memory_set_reclaimer(bool (*reclaim)(unsigned node, bool *busy))
{
	reclaimer = reclaim;
}

/* Counts size against node's limit (starpu_malloc_flags with STARPU_MALLOC_COUNT), as StarPU does:
 * beyond the limit, room is reclaimed where it can be (as for a data buffer) when reclaim is set;
 * -ENOMEM when there is not enough. STARPU_MALLOC_NORECLAIM or STARPU_MEMORY_OVERFLOW count it
 * beyond the limit; STARPU_MEMORY_WAIT waits until frees make room (-ENOMEM at once if it can never fit). */
static int count_against_limit(unsigned node, size_t size, int flags, bool reclaim)
{
	struct _astro_memory_node *n = &_astro_nodes[node];
	for (;;) {
		size_t used = __atomic_add_fetch(&n->used, size, __ATOMIC_RELAXED);
		if (!n->limit || used <= n->limit || (flags & (STARPU_MALLOC_NORECLAIM | STARPU_MEMORY_OVERFLOW)))
			return 0;
		__atomic_sub_fetch(&n->used, size, __ATOMIC_RELAXED);
		bool busy = false;
		if (reclaim && reclaimer && (node != STARPU_MAIN_RAM || __atomic_load_n(&_astro_disk_count, __ATOMIC_ACQUIRE)) &&
		    reclaimer(node, &busy))
			continue;
		if (!(flags & STARPU_MEMORY_WAIT) || size > n->limit)
			return -ENOMEM;
		astro_sleep_ns(1000000);
	}
}

/* The program's own accounting (starpu_memory_allocate): no eviction, as in StarPU, only the count. */
int starpu_memory_allocate(unsigned node, size_t size, int flags)
{
	if (!valid_node(node)) {
		_astro_error("starpu_memory_allocate: no memory node %u (there are %u)", node, starpu_memory_nodes_get_count());
		return -EINVAL;
	}
	size_t limit = _astro_nodes[node].limit;
	if ((flags & STARPU_MEMORY_WAIT) && !(flags & STARPU_MEMORY_OVERFLOW) && limit && size > limit) {
		_astro_error("starpu_memory_allocate: %zu bytes never fit on memory node %u, limited to %zu bytes: waiting "
			     "would never end; raise its STARPU_LIMIT_*_MEM or pass STARPU_MEMORY_OVERFLOW", size, node, limit);
		return -ENOMEM;
	}
	return count_against_limit(node, size, flags & (STARPU_MEMORY_WAIT | STARPU_MEMORY_OVERFLOW), false);
}

void starpu_memory_deallocate(unsigned node, size_t size)
{
	if (!valid_node(node)) {
		_astro_error("starpu_memory_deallocate: no memory node %u (there are %u)", node, starpu_memory_nodes_get_count());
		return;
	}
	size_t *used = &_astro_nodes[node].used, now = __atomic_load_n(used, __ATOMIC_RELAXED);
	for (;;) {
		size_t after = size <= now ? now - size : 0;
		if (__atomic_compare_exchange_n(used, &now, after, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	if (size > now)
		_astro_error("starpu_memory_deallocate: %zu bytes given back on memory node %u, which counts only %zu: "
			     "give back what starpu_memory_allocate counted; the count is now 0", size, node, now);
}

void starpu_memory_wait_available(unsigned node, size_t size)
{
	if (!valid_node(node)) {
		_astro_error("starpu_memory_wait_available: no memory node %u (there are %u)", node, starpu_memory_nodes_get_count());
		return;
	}
	struct _astro_memory_node *n = &_astro_nodes[node];
	if (!n->limit)
		return;
	if (size > n->limit) {
		_astro_error("starpu_memory_wait_available: %zu bytes never fit on memory node %u, limited to %zu bytes: "
			     "not waiting; raise its STARPU_LIMIT_*_MEM", size, node, n->limit);
		return;
	}
	while (__atomic_load_n(&n->used, __ATOMIC_RELAXED) + size > n->limit)
		astro_sleep_ns(1000000);
}

static uintptr_t raw_allocate(unsigned node, size_t size, int flags)
{
	struct _astro_memory_node *n = &_astro_nodes[node];
	if (n->ops)
		return n->ops->allocate(n->devid, size);
	void *p = NULL;
#ifdef STARPU_SIMGRID
	/* Under SMPI, main memory's copies of other ranks' data (and StarPU-MPI's message buffers)
	 * are folded: tens of ranks share this process, and SMPI copies every message's bytes. */
	if (astro_sim_smpi())
		flags |= STARPU_MALLOC_SIMULATION_FOLDED;
	if (starpu_malloc_flags(&p, size, flags & ~STARPU_MALLOC_COUNT) != 0)
		return 0;
#else
	if (malloc_on(node, &p, size, flags) != 0)
		return 0;
#endif
	_astro_numa_bind_area(node, p, size);
	return (uintptr_t)p;
}

uintptr_t starpu_malloc_on_node_flags(unsigned dst_node, size_t size, int flags)
{
	if (!valid_node(dst_node)) {
		_astro_error("starpu_malloc_on_node: no memory node %u (there are %u)", dst_node, starpu_memory_nodes_get_count());
		return 0;
	}
	struct _astro_memory_node *n = &_astro_nodes[dst_node];
	/* Without STARPU_MALLOC_COUNT the node's count (and so its limit) is left alone, as in StarPU. */
	size_t counted = (flags & STARPU_MALLOC_COUNT) ? size : 0;
	for (unsigned waits = 0;;) {
		size_t used = __atomic_add_fetch(&n->used, counted, __ATOMIC_RELAXED);
		if (!counted || !n->limit || used <= n->limit || (_astro_evicting_ram && n->kind == STARPU_CPU_RAM)) {
			uintptr_t addr = raw_allocate(dst_node, size, flags);
			if (addr)
				return addr;
		}
		__atomic_sub_fetch(&n->used, counted, __ATOMIC_RELAXED);
		/* Full: make room, unless main memory without a disk to evict to (its copies are the
		 * last ones) or asked not to: the cached buffers first, then the least recently used copies. */
		if ((dst_node == STARPU_MAIN_RAM && !__atomic_load_n(&_astro_disk_count, __ATOMIC_ACQUIRE)) || (flags & STARPU_MALLOC_NORECLAIM) || !reclaimer)
			return 0;
		bool busy = false;
		_ASTRO_OBSERVE(ASTRO_MOMENT_MEMORY_STATE_BEGIN, .workerid = _astro_worker_id(), .dst_node = dst_node, .bytes = size,
			       .nimpl = ASTRO_MEMORY_RECLAIMING);
		bool room = reclaimer(dst_node, &busy);
		_ASTRO_OBSERVE(ASTRO_MOMENT_MEMORY_STATE_END, .workerid = _astro_worker_id(), .dst_node = dst_node, .bytes = size,
			       .nimpl = ASTRO_MEMORY_RECLAIMING);
		if (room)
			continue;
		/* The copies left were held by other threads for a moment (their transfers,
		 * their evictions): they may be free soon. A second at most. */
		if (!busy || ++waits > 1000)
			return 0;
		astro_sleep_ns(1000000);
	}
}

#define MALLOC_FLAGS_KNOWN (STARPU_MALLOC_PINNED | STARPU_MALLOC_COUNT | STARPU_MALLOC_NORECLAIM | STARPU_MALLOC_SIMULATION_FOLDED | \
			    STARPU_MALLOC_SIMULATION_UNIQUE)

void starpu_malloc_on_node_set_default_flags(unsigned node, int flags)
{
	if (!_astro_running()) {
		_astro_error("starpu_malloc_on_node_set_default_flags: StarPU is not initialised (starpu_init() sets every node's "
			     "flags to STARPU_MALLOC_PINNED|STARPU_MALLOC_COUNT): call it after starpu_init()");
		return;
	}
	if (!valid_node(node)) {
		_astro_error("starpu_malloc_on_node_set_default_flags: no memory node %u (there are %u): nothing changed", node,
			     starpu_memory_nodes_get_count());
		return;
	}
	if ((unsigned)flags & ~(unsigned)MALLOC_FLAGS_KNOWN) {
		_astro_error("starpu_malloc_on_node_set_default_flags: flags 0x%x hold bits 0x%x that are no STARPU_MALLOC_* flag: "
			     "nothing changed", (unsigned)flags, (unsigned)flags & ~(unsigned)MALLOC_FLAGS_KNOWN);
		return;
	}
	__atomic_store_n(&_astro_nodes[node].malloc_flags, flags, __ATOMIC_RELAXED);
}

uintptr_t starpu_malloc_on_node(unsigned dst_node, size_t size)
{
	if (!valid_node(dst_node))
		return starpu_malloc_on_node_flags(dst_node, size, 0);	/* says so */
	return starpu_malloc_on_node_flags(dst_node, size, __atomic_load_n(&_astro_nodes[dst_node].malloc_flags, __ATOMIC_RELAXED));
}

void starpu_free_on_node_flags(unsigned dst_node, uintptr_t addr, size_t size, int flags)
{
	if (!addr)
		return;
	if (!valid_node(dst_node)) {
		_astro_error("starpu_free_on_node: no memory node %u (there are %u): the buffer at %p was not freed; "
			     "give the node it was allocated on", dst_node, starpu_memory_nodes_get_count(), (void *)addr);
		return;
	}
	struct _astro_memory_node *n = &_astro_nodes[dst_node];
	if (n->ops)
		n->ops->free(n->devid, addr, size);
#ifdef STARPU_SIMGRID
	else
		starpu_free_flags((void *)addr, size, flags & ~STARPU_MALLOC_COUNT);
#else
	else
		free_on(dst_node, (void *)addr, size, flags);
#endif
	if (flags & STARPU_MALLOC_COUNT)
		__atomic_sub_fetch(&n->used, size, __ATOMIC_RELAXED);
}

void starpu_free_on_node(unsigned dst_node, uintptr_t addr, size_t size)
{
	if (!valid_node(dst_node))
		starpu_free_on_node_flags(dst_node, addr, size, 0);	/* says so */
	else
		starpu_free_on_node_flags(dst_node, addr, size, __atomic_load_n(&_astro_nodes[dst_node].malloc_flags, __ATOMIC_RELAXED));
}

/* ------------------------------------------------------------ copies */

/* Set while the kernel copies a whole handle: that copy is the transfer
 * observed, not each piece (a matrix row) the interface copies. */
_ASTRO_TLS bool _astro_in_handle_copy;

/* Copies numblocks blocks of blocksize bytes, ld_src / ld_dst bytes apart (numblocks 1: one run of blocksize
 * bytes), observed as one transfer; between main memory and a device whose node ops copy in 2D, as one command.
 * fn names the public call for the messages. */
static int copy_run(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset, unsigned dst_node,
		    size_t blocksize, size_t numblocks, size_t ld_src, size_t ld_dst, void *async_data, const char *fn)
{
	if (!valid_node(src_node) || !valid_node(dst_node)) {
		_astro_error("%s: no memory node %u: there are %u", fn, !valid_node(src_node) ? src_node : dst_node,
			     starpu_memory_nodes_get_count());
		return -EINVAL;
	}
	const struct _astro_memory_node *s = &_astro_nodes[src_node], *d = &_astro_nodes[dst_node];
	if (s->ops && d->ops) {
		_astro_error("%s: no direct path from %s %d to %s %d: copy through main memory", fn, kind_name(s->kind), s->devid,
			     kind_name(d->kind), d->devid);
		return -ENODEV;
	}
	size_t size = blocksize * numblocks;
	bool observed = !_astro_in_handle_copy;
	if (observed)
		_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_BEGIN, .workerid = _astro_worker_id(), .src_node = src_node, .dst_node = dst_node, .bytes = size);
	/* Within a handle's transfer, async_data is the kernel's (see coherency.c): a
	 * device copy may be left under way there, which says -EAGAIN. */
	const struct _astro_memory_node *dev = d->ops ? d : s->ops ? s : NULL;
	void *request = NULL, **requestp = async_data && !observed && dev && dev->ops->copy_wait ? &request : NULL;
	int ret = 0;
	if (d->ops && numblocks > 1)
		ret = d->ops->copy2d_from_ram(d->devid, (const char *)src + src_offset, ld_src, dst, dst_offset, ld_dst, blocksize,
					      numblocks, requestp);
	else if (d->ops)
		ret = d->ops->copy_from_ram(d->devid, (const char *)src + src_offset, dst, dst_offset, size, requestp);
	else if (s->ops && numblocks > 1)
		ret = s->ops->copy2d_to_ram(s->devid, src, src_offset, ld_src, (char *)dst + dst_offset, ld_dst, blocksize, numblocks,
					    requestp);
	else if (s->ops)
		ret = s->ops->copy_to_ram(s->devid, src, src_offset, (char *)dst + dst_offset, size, requestp);
	else
		for (size_t i = 0; i < numblocks; i++)
			memmove((char *)dst + dst_offset + i * ld_dst, (const char *)src + src_offset + i * ld_src, blocksize);
	if (request) {
		if (ret == 0 && _astro_copy_add(async_data, dev->ops, dev->devid, request))
			return -EAGAIN;
		int waited = dev->ops->copy_wait(dev->devid, request);
		ret = ret ? ret : waited;
	}
	if (observed)
		_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_END, .workerid = _astro_worker_id(), .src_node = src_node, .dst_node = dst_node, .bytes = size);
	return ret;
}

int starpu_interface_copy(uintptr_t src, size_t src_offset, unsigned src_node,
			  uintptr_t dst, size_t dst_offset, unsigned dst_node,
			  size_t size, void *async_data)
{
	return copy_run(src, src_offset, src_node, dst, dst_offset, dst_node, size, 1, size, size, async_data,
			"starpu_interface_copy");
}

/* Whether a copy of scattered blocks between these nodes can go as one 2D command of the device's. */
static bool copy_2d(unsigned src_node, unsigned dst_node)
{
	if (!valid_node(src_node) || !valid_node(dst_node))
		return false;
	const struct astro_node_ops *s = _astro_nodes[src_node].ops, *d = _astro_nodes[dst_node].ops;
	return (d && !s && d->copy2d_from_ram) || (s && !d && s->copy2d_to_ram);
}

/* Does a copy of scattered blocks between these nodes go as one transfer of their total size? In a
 * simulation build, when a simulated device is one end: its memory is never touched, and a transfer
 * costs its latency once, as the device's own 2D copies do. */
static bool copy_whole(unsigned src_node, unsigned dst_node)
{
#ifdef STARPU_SIMGRID
	return starpu_node_get_kind(src_node) != STARPU_CPU_RAM || starpu_node_get_kind(dst_node) != STARPU_CPU_RAM;
#else
	(void)src_node;
	(void)dst_node;
	return false;
#endif
}

/* Copies the blocks of a dims-dimensional arrangement: n[d] blocks along dimension d, ld_src[d] /
 * ld_dst[d] bytes apart, dimension 0 the innermost; runs that follow each other are merged. */
static int copy_blocks(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset, unsigned dst_node,
		       size_t blocksize, size_t dims, const size_t *n, const size_t *ld_src, const size_t *ld_dst, void *async_data)
{
	if (copy_whole(src_node, dst_node)) {
		for (size_t d = 0; d < dims; d++)
			blocksize *= n[d];
		return starpu_interface_copy(src, src_offset, src_node, dst, dst_offset, dst_node, blocksize, async_data);
	}
	while (dims && (n[0] <= 1 || (ld_src[0] == blocksize && ld_dst[0] == blocksize))) {
		blocksize *= n[0];
		n++, ld_src++, ld_dst++, dims--;
	}
	if (!dims)
		return starpu_interface_copy(src, src_offset, src_node, dst, dst_offset, dst_node, blocksize, async_data);
	if (ld_src[0] < blocksize || ld_dst[0] < blocksize) {
		_astro_error("starpu_interface_copy: blocks of %zu bytes overlap with ld_src %zu, ld_dst %zu: give ld at least blocksize",
			     blocksize, ld_src[0], ld_dst[0]);
		return -EINVAL;
	}
	if (dims == 1 && copy_2d(src_node, dst_node))
		return copy_run(src, src_offset, src_node, dst, dst_offset, dst_node, blocksize, n[0], ld_src[0], ld_dst[0],
				async_data, "starpu_interface_copy2d");
	/* The outermost dimension, each of its blocks a copy of the dims - 1 inner ones. */
	size_t last = dims - 1;
	int ret = 0;
	for (size_t i = 0; i < n[last]; i++) {
		int r = copy_blocks(src, src_offset + i * ld_src[last], src_node, dst, dst_offset + i * ld_dst[last], dst_node,
				    blocksize, last, n, ld_src, ld_dst, async_data);
		if (r && r != -EAGAIN)
			return r;
		ret = ret ? ret : r;
	}
	return ret;
}

int starpu_interface_copy2d(uintptr_t src, size_t src_offset, unsigned src_node,
			    uintptr_t dst, size_t dst_offset, unsigned dst_node,
			    size_t blocksize, size_t numblocks, size_t ld_src, size_t ld_dst, void *async_data)
{
	return copy_blocks(src, src_offset, src_node, dst, dst_offset, dst_node, blocksize, 1,
			   (size_t[]){ numblocks }, (size_t[]){ ld_src }, (size_t[]){ ld_dst }, async_data);
}

int starpu_interface_copy3d(uintptr_t src, size_t src_offset, unsigned src_node,
			    uintptr_t dst, size_t dst_offset, unsigned dst_node,
			    size_t blocksize, size_t numblocks1, size_t ld1_src, size_t ld1_dst,
			    size_t numblocks2, size_t ld2_src, size_t ld2_dst, void *async_data)
{
	return copy_blocks(src, src_offset, src_node, dst, dst_offset, dst_node, blocksize, 2, (size_t[]){ numblocks1, numblocks2 },
			   (size_t[]){ ld1_src, ld2_src }, (size_t[]){ ld1_dst, ld2_dst }, async_data);
}

int starpu_interface_copy4d(uintptr_t src, size_t src_offset, unsigned src_node,
			    uintptr_t dst, size_t dst_offset, unsigned dst_node,
			    size_t blocksize, size_t numblocks1, size_t ld1_src, size_t ld1_dst,
			    size_t numblocks2, size_t ld2_src, size_t ld2_dst,
			    size_t numblocks3, size_t ld3_src, size_t ld3_dst, void *async_data)
{
	return copy_blocks(src, src_offset, src_node, dst, dst_offset, dst_node, blocksize, 3,
			   (size_t[]){ numblocks1, numblocks2, numblocks3 }, (size_t[]){ ld1_src, ld2_src, ld3_src },
			   (size_t[]){ ld1_dst, ld2_dst, ld3_dst }, async_data);
}

/* Dimension 0 is contiguous (nn[0] elements); dimension i > 0 steps ldn[i] elements. */
int starpu_interface_copynd(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset, unsigned dst_node,
			    size_t elemsize, size_t ndim, uint32_t *nn, uint32_t *ldn_src, uint32_t *ldn_dst, void *async_data)
{
	if (ndim == 0)
		return starpu_interface_copy(src, src_offset, src_node, dst, dst_offset, dst_node, elemsize, async_data);
	if (!nn || (ndim > 1 && (!ldn_src || !ldn_dst))) {
		_astro_error("starpu_interface_copynd: NULL %s for %zu dimensions: give ndim sizes and leading dimensions",
			     !nn ? "nn" : !ldn_src ? "ldn_src" : "ldn_dst", ndim);
		return -EINVAL;
	}
	size_t outer = ndim - 1;
	size_t *n = malloc(3 * (outer ? outer : 1) * sizeof(size_t));
	if (!n) {
		_astro_error("starpu_interface_copynd: out of memory for %zu dimensions", ndim);
		return -ENOMEM;
	}
	size_t *ld_src = n + outer, *ld_dst = ld_src + outer;
	for (size_t d = 0; d < outer; d++) {
		n[d] = nn[d + 1];
		ld_src[d] = (size_t)ldn_src[d + 1] * elemsize;
		ld_dst[d] = (size_t)ldn_dst[d + 1] * elemsize;
	}
	int ret = copy_blocks(src, src_offset, src_node, dst, dst_offset, dst_node, (size_t)nn[0] * elemsize, outer, n, ld_src, ld_dst,
			      async_data);
	free(n);
	return ret;
}

void starpu_interface_data_copy(unsigned src_node, unsigned dst_node, size_t size)
{
	if (!valid_node(src_node) || !valid_node(dst_node)) {
		_astro_error("starpu_interface_data_copy: no memory node %u: there are %u", !valid_node(src_node) ? src_node : dst_node,
			     starpu_memory_nodes_get_count());
		return;
	}
	/* Within the kernel's own transfer of the handle, that transfer is the one observed. */
	if (_astro_in_handle_copy)
		return;
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_BEGIN, .workerid = _astro_worker_id(), .src_node = src_node, .dst_node = dst_node, .bytes = size);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_END, .workerid = _astro_worker_id(), .src_node = src_node, .dst_node = dst_node, .bytes = size);
}

bool _astro_copy_add(struct _astro_copy *copy, const struct astro_node_ops *ops, int devid, void *request)
{
	if (copy->nparts == copy->cap) {
		unsigned cap = copy->cap ? 2 * copy->cap : 4;
		struct _astro_copy_part *parts = realloc(copy->parts, cap * sizeof(*parts));
		if (!parts)
			return false;
		copy->parts = parts;
		copy->cap = cap;
	}
	copy->parts[copy->nparts++] = (struct _astro_copy_part) { .ops = ops, .devid = devid, .request = request };
	return true;
}

/* ------------------------------------------------------------ mapping */

/* Whether node is a memory the CPU addresses directly (main memory, a NUMA node): no device ops. */
static bool cpu_addressable(unsigned node)
{
	return _astro_nodes[node].ops == NULL;
}

/* Checks the nodes of a map call; false (with a message naming caller) when one does not exist. */
static bool map_nodes_valid(const char *caller, unsigned src_node, unsigned dst_node)
{
	if (valid_node(src_node) && valid_node(dst_node))
		return true;
	_astro_error("%s: no memory node %u: there are %u", caller, !valid_node(src_node) ? src_node : dst_node, starpu_memory_nodes_get_count());
	return false;
}

/* A mapping lets dst_node address src_node's copy in place. Between memories the
 * CPU addresses it is the same address; no device driver here maps main memory,
 * so towards a device the answer is StarPU's "cannot map" (-EIO), and the
 * interface copies instead. */
uintptr_t starpu_interface_map(uintptr_t src, size_t src_offset, unsigned src_node, unsigned dst_node, size_t size, int *ret)
{
	(void)size;
	int status = 0;
	uintptr_t mapped = 0;
	if (!map_nodes_valid("starpu_interface_map", src_node, dst_node))
		status = -EINVAL;
	else if (cpu_addressable(src_node) && cpu_addressable(dst_node))
		mapped = src + src_offset;
	else
		status = -EIO;
	if (ret)
		*ret = status;
	return mapped;
}

int starpu_interface_unmap(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, unsigned dst_node, size_t size)
{
	(void)size;
	if (!map_nodes_valid("starpu_interface_unmap", src_node, dst_node))
		return -EINVAL;
	if (!cpu_addressable(src_node) || !cpu_addressable(dst_node) || dst != src + src_offset) {
		_astro_error("starpu_interface_unmap: %#lx on node %u is no mapping of %#lx + %zu on node %u made by starpu_interface_map()",
			     (unsigned long)dst, dst_node, (unsigned long)src, src_offset, src_node);
		return -EINVAL;
	}
	return 0; /* the same memory: nothing was set up */
}

int starpu_interface_update_map(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset, unsigned dst_node,
				size_t size)
{
	if (!map_nodes_valid("starpu_interface_update_map", src_node, dst_node))
		return -EINVAL;
	if (!cpu_addressable(src_node) || !cpu_addressable(dst_node)) {
		_astro_error("starpu_interface_update_map: nodes %u and %u cannot be mapped (starpu_interface_map() said -EIO): copy the data instead",
			     src_node, dst_node);
		return -EIO;
	}
	/* A mapping is the data itself; a copy at another place is brought up to date. */
	if (src + src_offset != dst + dst_offset)
		memmove((char *)dst + dst_offset, (const char *)src + src_offset, size);
	return 0;
}

/* ------------------------------------------------- an interface's own asynchronous copies */

/* Submitting an asynchronous copy longer than this (µs) means it was not asynchronous. */
#define SLOW_ASYNC_SUBMIT_US 300.0

void starpu_interface_start_driver_copy_async(unsigned src_node, unsigned dst_node, double *start)
{
	if (!map_nodes_valid("starpu_interface_start_driver_copy_async", src_node, dst_node) || !start) {
		if (start)
			*start = 0.0;
		else
			_astro_error("starpu_interface_start_driver_copy_async: NULL start: pass where to keep the start time");
		return;
	}
	*start = starpu_timing_now();
}

void starpu_interface_end_driver_copy_async(unsigned src_node, unsigned dst_node, double start)
{
	if (!map_nodes_valid("starpu_interface_end_driver_copy_async", src_node, dst_node) || start == 0.0)
		return;
	double elapsed = starpu_timing_now() - start;
	static int warned;
	if (elapsed > SLOW_ASYNC_SUBMIT_US && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)) {
		char src_name[32], dst_name[32];
		starpu_memory_node_get_name(src_node, src_name, sizeof(src_name));
		starpu_memory_node_get_name(dst_node, dst_name, sizeof(dst_name));
		_astro_warn("submitting an asynchronous transfer from %s to %s took %.3f ms: it was probably not asynchronous; "
			    "allocate the data registered to the runtime with starpu_malloc() or pin it with starpu_memory_pin()",
			    src_name, dst_name, elapsed / 1000.0);
	}
}
