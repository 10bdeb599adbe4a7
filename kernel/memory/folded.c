/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Folded memory (STARPU_MALLOC_SIMULATION_FOLDED, simulation builds only): a
 * simulation never reads the data of its tasks, so a region asked with that
 * flag is made of the same small block mapped again and again; a 5.9 GB
 * matrix then costs the pages of one block (STARPU_MALLOC_SIMULATION_FOLD
 * MiB, default 1), whatever the program writes into it.
 */
#define _GNU_SOURCE	/* memfd_create() */
#include "memory/memory.h"
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef STARPU_SIMGRID

static starpu_pthread_mutex_t lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *regions;	/* address -> size of each folded region */
static int block_fd = -1;
static size_t block_size;

static int block(void)
{
	if (block_fd >= 0)
		return 0;
	int mib = astro_env_int("STARPU_MALLOC_SIMULATION_FOLD", 1, 1024, 1, NULL);
	block_size = (size_t)mib << 20;
	int fd = memfd_create("astrolabe-folded", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)block_size) != 0) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		_astro_error("starpu_malloc: the folded block of STARPU_MALLOC_SIMULATION_FOLDED cannot be made (%s): "
			     "the memory is allocated for real", strerror(err));
		return -err;
	}
	block_fd = fd;
	regions = g_hash_table_new(g_direct_hash, g_direct_equal);
	return 0;
}

int _astro_folded_alloc(void **ptr, size_t size)
{
	starpu_pthread_mutex_lock(&lock);
	int ret = block();
	void *base = MAP_FAILED;
	if (ret == 0) {
		size_t total = (size + block_size - 1) / block_size * block_size;
		base = mmap(NULL, total ? total : block_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		for (size_t off = 0; base != MAP_FAILED && off < total; off += block_size)
			if (mmap((char *)base + off, block_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, block_fd, 0) == MAP_FAILED) {
				munmap(base, total);
				base = MAP_FAILED;
			}
		if (base != MAP_FAILED)
			g_hash_table_insert(regions, base, GSIZE_TO_POINTER(total ? total : block_size));
		else
			ret = -ENOMEM;
	}
	starpu_pthread_mutex_unlock(&lock);
	*ptr = base == MAP_FAILED ? NULL : base;
	return ret;
}

bool _astro_folded_free(void *ptr)
{
	starpu_pthread_mutex_lock(&lock);
	gpointer size = regions ? g_hash_table_lookup(regions, ptr) : NULL;
	if (size) {
		g_hash_table_remove(regions, ptr);
		munmap(ptr, GPOINTER_TO_SIZE(size));
	}
	starpu_pthread_mutex_unlock(&lock);
	return size != NULL;
}

#endif
