/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The memory room: memory nodes (main memory, one per NUMA node with
 * STARPU_USE_NUMA, one per device, one per disk), allocation under each
 * node's limit (eviction is the data room's, through the reclaimer it
 * registers), copies between nodes through the drivers' node ops and their
 * completion, bus figures, disks and their file back-ends.
 */
#ifndef __ASTRO_MEMORY_H__
#define __ASTRO_MEMORY_H__

#include "common/common.h"
#include "observe/observe.h"

struct _astro_replicate;

/* One memory node (memory.c): main memory is node 0 (with STARPU_USE_NUMA,
 * nodes 0.. are the NUMA nodes: numa.c), then one per device. */
struct _astro_memory_node
{
	enum starpu_node_kind kind;
	int devid;
	const struct astro_driver *driver;   /* NULL for main memory (every RAM node) */
	const struct astro_node_ops *ops;    /* NULL for main memory (every RAM node) */
	size_t limit;                        /* bytes (STARPU_LIMIT_*_MEM), 0: none */
	size_t used;                         /* atomic: bytes the runtime allocated there */
	int malloc_flags;                    /* atomic: starpu_malloc_on_node()'s flags (starpu_malloc_on_node_set_default_flags) */
	starpu_pthread_mutex_t lru_lock;
	struct _astro_replicate *lru_head, *lru_tail; /* least recently used first */
};
extern struct _astro_memory_node _astro_nodes[STARPU_MAXNODES];
/* Node 0 at workers' start; one more per device worker of a driver with node ops (its id, or -ENOSPC said). */
void _astro_memory_nodes_init(void);
int _astro_memory_node_add(const struct astro_driver *driver, int devid);
void _astro_memory_nodes_shutdown(void);
/* A memory node served by ops without a driver (a disk: disk.c): its id, or -ENOSPC said. */
int _astro_memory_node_add_ops(const struct astro_node_ops *ops, int devid);

/* Disk memory nodes (disk.c). _astro_disk_count: disks registered (atomic; 0: none of
 * the hooks below runs). The swap disk of STARPU_DISK_SWAP at init; unplugging all at
 * shutdown, once no buffer is left on them. */
extern int _astro_disk_count;
void _astro_disk_swap_init(void);
void _astro_disks_shutdown(void);
/* The name of a disk back-end StarPU declares but this runtime does not build (disk_unbuilt.c: hdf5,
 * leveldb), NULL for any other. */
struct starpu_disk_ops;
const char *_astro_disk_unbuilt(const struct starpu_disk_ops *ops);
/* The back-end of disk node and what its plug() returned (*base); NULL when node is no disk. */
struct starpu_disk_ops;
const struct starpu_disk_ops *_astro_disk_backend(unsigned node, void **base);
/* The first disk's node (where main memory's copies are evicted to), -1 when there is none. */
int _astro_disk_first_node(void);
/* The file back-ends' folder (disk_files.c): made at plug when missing, removed at
 * unplug when made then and left empty; a new uniquely named file there, or an
 * existing one by name (a descriptor, -1 said; *path to g_free); the whole-object
 * reads and writes through the back-end's read/write (fd: the object's file). */
struct _astro_disk_folder
{
	char *path;
	bool created;
};
struct _astro_disk_folder *_astro_disk_folder_plug(const char *backend, void *parameter);
void _astro_disk_folder_unplug(struct _astro_disk_folder *f);
int _astro_disk_file_new(const struct _astro_disk_folder *f, int flags, char **path);
int _astro_disk_file_open(const struct _astro_disk_folder *f, const char *name, int flags, char **path);
int _astro_disk_full_read(const struct starpu_disk_ops *ops, void *base, void *obj, int fd, void **ptr, size_t *size, unsigned dst_node);
int _astro_disk_full_write(const struct starpu_disk_ops *ops, void *base, void *obj, int fd, size_t *obj_size, void *ptr, size_t size);
/* RAM nodes per NUMA node (numa.c): how many, from hwloc when STARPU_USE_NUMA=1
 * (1 otherwise); the RAM node of a processing unit (hwloc logical index, -1:
 * unbound); binding an allocation's pages to a RAM node; its bytes (0: unknown). */
unsigned _astro_numa_nodes_init(void);
unsigned _astro_numa_node_of_pu(int pu);
void _astro_numa_bind_area(unsigned node, void *addr, size_t size);
size_t _astro_numa_memory(unsigned node);
/* Allocation on a full node: what makes room there (data/lru.c registers it: true when it
 * freed something, *busy when a candidate was held by another thread for a moment). */
void _astro_memory_set_reclaimer(bool (*reclaim)(unsigned node, bool *busy));
/* Set while this thread evicts a copy from main memory: its write-back to a disk may pass main memory's limit. */
extern _ASTRO_TLS bool _astro_evicting_ram;
/* Set while the kernel copies a whole handle: that copy is the transfer observed, not each piece the interface copies. */
extern _ASTRO_TLS bool _astro_in_handle_copy;

/* An asynchronous copy of a handle (the async_data the interfaces' copy
 * methods pass to starpu_interface_copy()): the drivers' requests it is
 * made of, completed together. */
struct _astro_copy
{
	unsigned src, dst;
	size_t bytes;
	unsigned nparts, cap;
	struct _astro_copy_part
	{
		const struct astro_node_ops *ops;
		int devid;
		void *request;
	} *parts;
};
/* Adds a driver's request to copy (memory.c); false when out of memory (then wait for it yourself). */
bool _astro_copy_add(struct _astro_copy *copy, const struct astro_node_ops *ops, int devid, void *request);

/* Bus figures (bus.c): measured at the first start on a configuration of
 * memory nodes, then read back from the sampling directory. */
#ifdef STARPU_SIMGRID
/* A region of size bytes made of one small block mapped again and again (folded.c); 0 or -errno. */
int _astro_folded_alloc(void **ptr, size_t size);
/* Unmaps ptr if it is a folded region: false when it is not one. */
bool _astro_folded_free(void *ptr);
#endif
/* The simulated machine's host of memory node `node` ("RAM", "CUDA0", "OpenCL1"), as StarPU's
 * platform files name them; false for other kinds (platform.c). */
bool _astro_memory_node_host(unsigned node, char *host, size_t len);
#ifndef STARPU_SIMGRID
/* Writes this machine as a SimGrid platform to path (platform.c). */
void _astro_platform_save(const char *path);
#endif
void _astro_bus_init(void);
bool _astro_bus_figures(unsigned src, unsigned dst, double *bandwidth, double *latency);

#endif /* __ASTRO_MEMORY_H__ */
