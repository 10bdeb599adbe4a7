/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Disk memory nodes (out-of-core): a back-end's files hold data the runtime
 * moves out of main memory, or data the application opens there. A disk
 * node is a memory node no worker runs on; the runtime copies between it
 * and main memory through the back-end, and evicts main-memory copies to
 * it when main memory reaches its limit (STARPU_LIMIT_CPU_MEM). */
#ifndef __STARPU_DISK_H__
#define __STARPU_DISK_H__

#include <sys/types.h>
#include <starpu_config.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The operations of a disk back-end. The runtime calls plug() once at
 * starpu_disk_register() and passes the base it returns to every other
 * method; an object (obj) is what alloc() or open() returned. The
 * asynchronous methods and copy may be NULL: the runtime then uses the
 * synchronous ones.
 */
struct starpu_disk_ops
{
	/** Connects the disk at parameter (a folder for the file back-ends) of size bytes (negative: no limit); NULL on failure. */
	void *(*plug)(void *parameter, starpu_ssize_t size);
	/** Disconnects the disk base: what plug() made is freed. */
	void (*unplug)(void *base);
	/** Measures the bandwidth and latency between the disk and main memory for node; 1 when it could. */
	int (*bandwidth)(unsigned node, void *base);
	/** A new object of size bytes on the disk; NULL when it cannot. */
	void *(*alloc)(void *base, size_t size);
	/** Deletes an object alloc() returned. */
	void (*free)(void *base, void *obj, size_t size);
	/** Opens the existing object at pos (a file name within the folder, for the file back-ends) of size bytes; NULL when it cannot. */
	void *(*open)(void *base, void *pos, size_t size);
	/** Closes, without deleting it, an object open() returned. */
	void (*close)(void *base, void *obj, size_t size);
	/** Reads size bytes at offset of obj into buf; negative on failure. */
	int (*read)(void *base, void *obj, void *buf, off_t offset, size_t size);
	/** Writes size bytes from buf at offset of obj; 0 on success. */
	int (*write)(void *base, void *obj, const void *buf, off_t offset, size_t size);
	/** Reads all of obj into *ptr, allocated with starpu_malloc_on_node_flags(dst_node, *size, 0); 0 on success. */
	int (*full_read)(void *base, void *obj, void **ptr, size_t *size, unsigned dst_node);
	/** Writes size bytes from ptr as all of obj (which then has that size); 0 on success. */
	int (*full_write)(void *base, void *obj, void *ptr, size_t size);
	/** Starts write(): a request for the *_request methods, NULL when it could not start. */
	void *(*async_write)(void *base, void *obj, void *buf, off_t offset, size_t size);
	/** Starts read(): a request for the *_request methods, NULL when it could not start. */
	void *(*async_read)(void *base, void *obj, void *buf, off_t offset, size_t size);
	/** Starts full_read(): a request, NULL when it could not start. */
	void *(*async_full_read)(void *base, void *obj, void **ptr, size_t *size, unsigned dst_node);
	/** Starts full_write(): a request, NULL when it could not start. */
	void *(*async_full_write)(void *base, void *obj, void *ptr, size_t size);
	/** Starts a copy between two objects of disks of this back-end: a request, NULL when it could not start. */
	void *(*copy)(void *base_src, void *obj_src, off_t offset_src, void *base_dst, void *obj_dst, off_t offset_dst, size_t size);
	/** Waits for a request to complete. */
	void (*wait_request)(void *async_channel);
	/** 1 when a request completed, 0 while it is under way. */
	int (*test_request)(void *async_channel);
	/** Frees a completed request. */
	void (*free_request)(void *async_channel);
};

/** Files in a folder, one per object, through stdio (fopen, fread, fwrite). Synchronous only. */
extern struct starpu_disk_ops starpu_disk_stdio_ops;
/** Files in a folder, one per object, through unistd (pread, pwrite). */
extern struct starpu_disk_ops starpu_disk_unistd_ops;
/**
 * The same with O_DIRECT, bypassing the system's page cache (Linux): requests
 * that are not aligned on the page size go through an aligned bounce buffer.
 * On a file system that refuses O_DIRECT (tmpfs), it says so once and uses
 * the page cache.
 */
extern struct starpu_disk_ops starpu_disk_unistd_o_direct_ops;
/**
 * StarPU's HDF5 back-end (every object in one HDF5 file): not built in this
 * runtime; starpu_disk_register() refuses it with -ENOSYS and a message.
 */
extern struct starpu_disk_ops starpu_disk_hdf5_ops;
/**
 * StarPU's LevelDB back-end (objects in a key-value store): not built in this
 * runtime; starpu_disk_register() refuses it with -ENOSYS and a message.
 */
extern struct starpu_disk_ops starpu_disk_leveldb_ops;

/** Smallest size starpu_disk_register() accepts: 16 MiB. */
#define STARPU_DISK_SIZE_MIN (16*1024*1024)

/**
 * Registers a disk memory node after starpu_init(): ops->plug(parameter, size)
 * connects it (the file back-ends create the folder parameter when missing).
 * size is the room the runtime may use there, at least STARPU_DISK_SIZE_MIN
 * (negative: no limit). Returns the new memory node, or a negative errno said
 * on stderr: -EINVAL (NULL ops, a method missing, size too small, no runtime),
 * -ENOSYS (a back-end not built here: hdf5, leveldb),
 * -ENOSPC (no memory node left, STARPU_MAXNODES), -ENOENT (plug failed: the
 * folder cannot be created or written).
 */
int starpu_disk_register(struct starpu_disk_ops *func, void *parameter, starpu_ssize_t size);

/**
 * Opens an existing object of size bytes on disk node (pos is the back-end's
 * position: a file name within the folder for the file back-ends). Register
 * it with home node node to use it as a handle's data. Returns the object, or
 * NULL, said on stderr, when node is no disk node or the object cannot be opened.
 */
void *starpu_disk_open(unsigned node, void *pos, size_t size);

/** Closes an object starpu_disk_open() returned (unregister its handle first); the file stays. */
void starpu_disk_close(unsigned node, void *obj, size_t size);

/** The disk node STARPU_DISK_SWAP made at starpu_init(), -1 when none. */
extern int starpu_disk_swap_node;

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_DISK_H__ */
