/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Memory allocation of the StarPU API. */
#ifndef __STARPU_STDLIB_H__
#define __STARPU_STDLIB_H__

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STARPU_MALLOC_PINNED ((1ULL) << 1)
#define STARPU_MALLOC_COUNT ((1ULL) << 2)
#define STARPU_MALLOC_NORECLAIM ((1ULL) << 3)
#define STARPU_MEMORY_WAIT ((1ULL) << 4)
#define STARPU_MEMORY_OVERFLOW ((1ULL) << 5)
#define STARPU_MALLOC_SIMULATION_FOLDED ((1ULL) << 6)
#define STARPU_MALLOC_SIMULATION_UNIQUE ((1ULL) << 7)

/**
 * Allocates size bytes on memory node dst_node (main memory or a device's:
 * then the address is the driver's, e.g. a cl_mem), with the node's default
 * flags (starpu_malloc_on_node_set_default_flags(); STARPU_MALLOC_PINNED |
 * STARPU_MALLOC_COUNT unless changed): counted, the allocation respects the
 * node's limit (STARPU_LIMIT_*_MEM), evicting data to make room. Returns 0
 * when the node is full.
 */
uintptr_t starpu_malloc_on_node(unsigned dst_node, size_t size);
/** starpu_malloc_on_node() with STARPU_MALLOC_* flags: only with STARPU_MALLOC_COUNT is the
 * allocation counted on the node (starpu_memory_get_used()) and held to its limit. */
uintptr_t starpu_malloc_on_node_flags(unsigned dst_node, size_t size, int flags);
/** Frees what starpu_malloc_on_node() returned, with the node's default flags (which must
 * be the ones it was allocated with). */
void starpu_free_on_node(unsigned dst_node, uintptr_t addr, size_t size);
/**
 * Sets the flags starpu_malloc_on_node() and starpu_free_on_node() use on
 * memory node node, the runtime's own data buffers included (without
 * STARPU_MALLOC_COUNT they are not counted, so no limit makes them evicted).
 * starpu_init() sets every node's to STARPU_MALLOC_PINNED |
 * STARPU_MALLOC_COUNT: call it after, while nothing allocated with the old
 * flags is left to free. A node that does not exist, flags that are not
 * STARPU_MALLOC_* ones, or a call before starpu_init() change nothing and
 * are said.
 */
void starpu_malloc_on_node_set_default_flags(unsigned node, int flags);
/** Frees what starpu_malloc_on_node_flags() returned, with the same flags. */
void starpu_free_on_node_flags(unsigned dst_node, uintptr_t addr, size_t size, int flags);
/** Sets the flags used by starpu_malloc(). */
void starpu_malloc_set_align(size_t align);
/** Allocates dim bytes in main memory, aligned, pinned when a driver can use it. Returns 0 or -ENOMEM. */
int starpu_malloc(void **A, size_t dim);
/** Frees memory from starpu_malloc() (the size is not needed). */
int starpu_free(void *A);
/** starpu_malloc() with explicit STARPU_MALLOC_* flags. */
int starpu_malloc_flags(void **A, size_t dim, int flags);
/** Frees memory from starpu_malloc_flags() with the same size and flags. */
int starpu_free_flags(void *A, size_t dim, int flags);
/** Frees memory from starpu_malloc() given its size and flags. */
int starpu_free_noflag(void *A, size_t dim);
/** Pins (page-locks) memory so drivers can transfer it asynchronously. */
int starpu_memory_pin(void *addr, size_t size);
/** Undoes starpu_memory_pin(). */
int starpu_memory_unpin(void *addr, size_t size);
/** Total memory of node in bytes, -1 when unknown. */
starpu_ssize_t starpu_memory_get_total(unsigned node);
/** Available memory of node in bytes, -1 when unknown. */
starpu_ssize_t starpu_memory_get_available(unsigned node);
/** The same summed over all memory nodes. */
starpu_ssize_t starpu_memory_get_total_all_nodes(void);
/** Sum of starpu_memory_get_available() over all memory nodes. */
starpu_ssize_t starpu_memory_get_available_all_nodes(void);
/** Bytes the runtime counts as used on node (its data, and what was allocated
 * with STARPU_MALLOC_COUNT); 0, with an error, for a node that does not exist. */
size_t starpu_memory_get_used(unsigned node);
/** The same summed over all memory nodes. */
size_t starpu_memory_get_used_all_nodes(void);

/** Counts size bytes as used on memory node node without allocating anything (for memory
 * the program allocates its own way, so that the runtime's eviction knows of it). Returns 0,
 * or -ENOMEM when node has a memory limit (STARPU_LIMIT_*_MEM) and the bytes do not fit under
 * it; with STARPU_MEMORY_WAIT, waits until they fit, then counts them at once (-ENOMEM, said,
 * when they never can); with STARPU_MEMORY_OVERFLOW, counts them beyond the limit. -EINVAL,
 * said, for a node that does not exist. */
int starpu_memory_allocate(unsigned node, size_t size, int flags);
/** Gives back size bytes counted with starpu_memory_allocate() on node, in one call or in
 * several pieces. */
void starpu_memory_deallocate(unsigned node, size_t size);
/** Waits until size bytes are available under node's memory limit (returns at once when it
 * has none). Another thread may take them meanwhile: use starpu_memory_allocate() with
 * STARPU_MEMORY_WAIT to wait and count them at once. */
void starpu_memory_wait_available(unsigned node, size_t size);

/** @deprecated Same as starpu_malloc(). */
#define starpu_data_malloc_pinned_if_possible starpu_malloc
/** @deprecated Same as starpu_free(). */
#define starpu_data_free_pinned_if_possible starpu_free

/** An allocation function for starpu_malloc_set_hooks(): puts in *A a buffer of
 * dim bytes on memory node dst_node (pinned if flags has STARPU_MALLOC_PINNED),
 * returns 0, or -ENOMEM. */
typedef int (*starpu_malloc_hook)(unsigned dst_node, void **A, size_t dim, int flags);
/** The matching free function: frees A, of dim bytes, on dst_node. */
typedef int (*starpu_free_hook)(unsigned dst_node, void *A, size_t dim, int flags);
/** Makes starpu_malloc(), starpu_malloc_flags(), starpu_malloc_on_node() (main
 * memory and NUMA nodes) and the data buffers the runtime allocates there call
 * malloc_hook, and their frees free_hook. Give both, or both NULL to go back
 * to the runtime's own allocation (one alone is refused, with an error). */
void starpu_malloc_set_hooks(starpu_malloc_hook malloc_hook, starpu_free_hook free_hook);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_STDLIB_H__ */
