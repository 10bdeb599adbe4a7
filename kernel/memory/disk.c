/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Disk memory nodes (starpu_disk.h): each registered disk is one more memory
 * node, of kind STARPU_DISK_RAM, whose node ops call the back-end's methods,
 * so that allocation, copies with offsets (the interfaces' any_to_any),
 * eviction and coherency are the kernel's as for a device. What is the
 * disk's own:
 *  - an interface without a copy method moves whole, packed: pack_data then
 *    the back-end's full_write, full_read then peek_data (_astro_disk_pack_transfer);
 *  - main memory under its limit (STARPU_LIMIT_CPU_MEM) evicts its copies to
 *    a disk node (_astro_disk_evict_target) instead of refusing;
 *  - STARPU_DISK_SWAP registers a swap disk at starpu_init().
 * With no disk registered none of this runs.
 */
#include "memory/memory.h"
#include <starpu_disk.h>

struct disk
{
	struct starpu_disk_ops *ops;
	void *base;                          /* what plug() returned */
	unsigned node;
	starpu_ssize_t size;                 /* negative: no limit */
};
/* Indexed by the node's devid; filled at registration, cleared at shutdown (application thread). */
static struct disk disks[STARPU_MAXNODES];
static unsigned ndisks;
int starpu_disk_swap_node = -1;

static struct disk *disk_of(unsigned node)
{
	if (node >= starpu_memory_nodes_get_count() || _astro_nodes[node].kind != STARPU_DISK_RAM)
		return NULL;
	return &disks[_astro_nodes[node].devid];
}

/* ------------------------------------------------------------ node ops */

static uintptr_t disk_allocate(int devid, size_t size)
{
	struct disk *d = &disks[devid];
	return (uintptr_t)d->ops->alloc(d->base, size);
}

static void disk_free(int devid, uintptr_t addr, size_t size)
{
	struct disk *d = &disks[devid];
	d->ops->free(d->base, (void *)addr, size);
}

/* Completes an asynchronous request of the back-end: 0, or -EIO when it could not start. */
static int disk_wait(const struct disk *d, void *request)
{
	if (!request)
		return -EIO;
	d->ops->wait_request(request);
	if (d->ops->free_request)
		d->ops->free_request(request);
	return 0;
}

static int disk_copy_from_ram(int devid, const void *src, uintptr_t dst, size_t dst_offset, size_t size, void **request)
{
	(void)request; /* no copy_wait in the node ops: every copy completes here */
	const struct disk *d = &disks[devid];
	if (d->ops->write)
		return d->ops->write(d->base, (void *)dst, src, (off_t)dst_offset, size) < 0 ? -EIO : 0;
	return disk_wait(d, d->ops->async_write(d->base, (void *)dst, (void *)src, (off_t)dst_offset, size));
}

static int disk_copy_to_ram(int devid, uintptr_t src, size_t src_offset, void *dst, size_t size, void **request)
{
	(void)request;
	const struct disk *d = &disks[devid];
	if (d->ops->read)
		return d->ops->read(d->base, (void *)src, dst, (off_t)src_offset, size) < 0 ? -EIO : 0;
	return disk_wait(d, d->ops->async_read(d->base, (void *)src, dst, (off_t)src_offset, size));
}

static size_t disk_memory_size(int devid)
{
	return disks[devid].size > 0 ? (size_t)disks[devid].size : 0;
}

static const struct astro_node_ops disk_node_ops = {
	.kind = STARPU_DISK_RAM,
	.allocate = disk_allocate,
	.free = disk_free,
	.copy_from_ram = disk_copy_from_ram,
	.copy_to_ram = disk_copy_to_ram,
	.memory_size = disk_memory_size,
};

/* ------------------------------------------------------------ registration */

/* The methods the kernel cannot do without, NULL when all are there. */
static const char *missing_method(const struct starpu_disk_ops *ops)
{
	if (!ops->plug || !ops->unplug)
		return "plug and unplug";
	if (!ops->alloc || !ops->free)
		return "alloc and free";
	if (!ops->read && !(ops->async_read && ops->wait_request))
		return "read (or async_read and wait_request)";
	if (!ops->write && !(ops->async_write && ops->wait_request))
		return "write (or async_write and wait_request)";
	return NULL;
}

int starpu_disk_register(struct starpu_disk_ops *func, void *parameter, starpu_ssize_t size)
{
	if (!func) {
		_astro_error("starpu_disk_register: NULL ops: give a back-end such as &starpu_disk_unistd_ops");
		return -EINVAL;
	}
	const char *unbuilt = _astro_disk_unbuilt(func);
	if (unbuilt) {
		_astro_error("starpu_disk_register: the %s back-end is not built in this runtime: use starpu_disk_unistd_ops, "
			     "starpu_disk_unistd_o_direct_ops or starpu_disk_stdio_ops", unbuilt);
		return -ENOSYS;
	}
	const char *missing = missing_method(func);
	if (missing) {
		_astro_error("starpu_disk_register: the back-end has no %s method: fill them in its struct starpu_disk_ops", missing);
		return -EINVAL;
	}
	if (size >= 0 && size < STARPU_DISK_SIZE_MIN) {
		_astro_error("starpu_disk_register: a disk of %zd bytes is below the minimum of %d (STARPU_DISK_SIZE_MIN): give more, or -1 for no limit",
			     size, STARPU_DISK_SIZE_MIN);
		return -EINVAL;
	}
	if (!_astro_rt.nmemory_nodes) { /* set from starpu_init() on to the end of starpu_shutdown() */
		_astro_error("starpu_disk_register: the runtime is not running: call starpu_init() first");
		return -EINVAL;
	}
	if (_astro_rt.nmemory_nodes >= STARPU_MAXNODES) {
		_astro_error("starpu_disk_register: all %d memory nodes are taken (STARPU_MAXNODES): register fewer disks", STARPU_MAXNODES);
		return -ENOSPC;
	}
	void *base = func->plug(parameter, size);
	if (!base)
		return -ENOENT; /* the back-end said why */
	unsigned devid = ndisks;
	disks[devid] = (struct disk) { .ops = func, .base = base, .size = size }; /* before the node can be used */
	int node = _astro_memory_node_add_ops(&disk_node_ops, (int)devid);
	if (node < 0) {
		func->unplug(base);
		memset(&disks[devid], 0, sizeof(disks[devid]));
		return node;
	}
	disks[devid].node = (unsigned)node;
	ndisks++;
	_astro_nodes[node].limit = size > 0 ? (size_t)size : 0;
	__atomic_store_n(&_astro_disk_count, (int)ndisks, __ATOMIC_RELEASE);
	if (func->bandwidth)
		(void)func->bandwidth((unsigned)node, base);
	return node;
}

void *starpu_disk_open(unsigned node, void *pos, size_t size)
{
	struct disk *d = disk_of(node);
	if (!d) {
		_astro_error("starpu_disk_open: node %u is not a disk node: give the node starpu_disk_register() returned", node);
		return NULL;
	}
	if (!d->ops->open) {
		_astro_error("starpu_disk_open: the back-end of disk node %u cannot open existing objects (no open method)", node);
		return NULL;
	}
	return d->ops->open(d->base, pos, size);
}

void starpu_disk_close(unsigned node, void *obj, size_t size)
{
	struct disk *d = disk_of(node);
	if (!d) {
		_astro_error("starpu_disk_close: node %u is not a disk node: give the node the object was opened on", node);
		return;
	}
	if (!obj) {
		_astro_error("starpu_disk_close: NULL object on disk node %u", node);
		return;
	}
	if (d->ops->close)
		d->ops->close(d->base, obj, size);
}

void _astro_disks_shutdown(void)
{
	for (unsigned i = 0; i < ndisks; i++)
		disks[i].ops->unplug(disks[i].base);
	memset(disks, 0, sizeof(disks));
	ndisks = 0;
	__atomic_store_n(&_astro_disk_count, 0, __ATOMIC_RELEASE);
	starpu_disk_swap_node = -1;
}

/* ------------------------------------------------------------ swap disk */

static struct starpu_disk_ops *backend_named(const char *name)
{
	if (!strcmp(name, "unistd"))
		return &starpu_disk_unistd_ops;
	if (!strcmp(name, "unistd_o_direct"))
		return &starpu_disk_unistd_o_direct_ops;
	if (!strcmp(name, "stdio"))
		return &starpu_disk_stdio_ops;
	return NULL;
}

void _astro_disk_swap_init(void)
{
	const char *folder = astro_env_string("STARPU_DISK_SWAP", ASTRO_ENV_PATH_MAX, NULL);
	if (!folder || !*folder)
		return;
	const char *name = astro_env_string("STARPU_DISK_SWAP_BACKEND", ASTRO_ENV_NAME_MAX, NULL);
	struct starpu_disk_ops *ops = backend_named(name && *name ? name : "unistd");
	if (!ops) {
		_astro_error("STARPU_DISK_SWAP_BACKEND=%s is no back-end here: use unistd, unistd_o_direct or stdio (leveldb and hdf5 are not built); "
			     "no swap disk", name);
		return;
	}
	int mib;
	starpu_ssize_t size = -1;
	if (_astro_env_int("STARPU_DISK_SWAP_SIZE", STARPU_DISK_SIZE_MIN >> 20, INT_MAX, NULL, &mib) == 1)
		size = (starpu_ssize_t)mib << 20;
	int node = starpu_disk_register(ops, (void *)folder, size);
	if (node < 0)
		_astro_error("STARPU_DISK_SWAP=%s: no swap disk (%s)", folder, strerror(-node));
	else
		starpu_disk_swap_node = node;
}

/* ------------------------------------------------------------ the disks */

const struct starpu_disk_ops *_astro_disk_backend(unsigned node, void **base)
{
	struct disk *d = disk_of(node);
	if (!d)
		return NULL;
	*base = d->base;
	return d->ops;
}

int _astro_disk_first_node(void)
{
	/* The count is published after its disk (a worker may evict while the program registers another). */
	return __atomic_load_n(&_astro_disk_count, __ATOMIC_ACQUIRE) ? (int)disks[0].node : -1;
}
