/* Main-memory allocation (starpu_malloc and friends) and copies between nodes. */
#include "kernel.h"
#include <sys/mman.h>
#include <unistd.h>

static size_t malloc_align = 64;

void starpu_malloc_set_align(size_t align)
{
	if (align && (align & (align - 1)) == 0 && align > malloc_align)
		malloc_align = align;
}

int starpu_malloc_flags(void **A, size_t dim, int flags)
{
	if (!A) {
		_astro_error("starpu_malloc: NULL result pointer");
		return -EINVAL;
	}
	(void)flags;
	if (posix_memalign(A, malloc_align, dim ? dim : 1) != 0) {
		*A = NULL;
		return -ENOMEM;
	}
	return 0;
}

int starpu_malloc(void **A, size_t dim)
{
	return starpu_malloc_flags(A, dim, STARPU_MALLOC_PINNED);
}

int starpu_free_flags(void *A, size_t dim, int flags)
{
	(void)dim;
	(void)flags;
	free(A);
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

/* Pinning only matters to GPU drivers; on main memory it is a page lock we may be refused without harm. */
int starpu_memory_pin(void *addr, size_t size)
{
	if (!addr && size) {
		_astro_error("starpu_memory_pin: NULL address");
		return -EINVAL;
	}
	(void)size;
	return 0;
}

int starpu_memory_unpin(void *addr, size_t size)
{
	(void)addr;
	(void)size;
	return 0;
}

starpu_ssize_t starpu_memory_get_total(unsigned node)
{
	if (node != STARPU_MAIN_RAM)
		return -1;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	return pages > 0 && page > 0 ? (starpu_ssize_t)pages * page : -1;
}

starpu_ssize_t starpu_memory_get_available(unsigned node)
{
	if (node != STARPU_MAIN_RAM)
		return -1;
	long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	return pages > 0 && page > 0 ? (starpu_ssize_t)pages * page : -1;
}

int starpu_interface_copy(uintptr_t src, size_t src_offset, unsigned src_node,
			  uintptr_t dst, size_t dst_offset, unsigned dst_node,
			  size_t size, void *async_data)
{
	(void)async_data;
	if (src_node != STARPU_MAIN_RAM || dst_node != STARPU_MAIN_RAM) {
		_astro_error("starpu_interface_copy: no driver handles copies between nodes %u and %u", src_node, dst_node);
		return -ENODEV;
	}
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_BEGIN, .workerid = _astro_worker_id(), .src_node = src_node, .dst_node = dst_node, .bytes = size);
	memmove((char *)dst + dst_offset, (const char *)src + src_offset, size);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRANSFER_END, .workerid = _astro_worker_id(), .src_node = src_node, .dst_node = dst_node, .bytes = size);
	return 0;
}
