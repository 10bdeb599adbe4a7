/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unistd disk back-ends (starpu_disk_unistd_ops, starpu_disk_unistd_o_direct_ops):
 * one file per object, read and written with pread/pwrite, which need no lock.
 *
 * With O_DIRECT the kernel's page cache is bypassed, which asks the buffer,
 * the offset and the size to be aligned on the page size: a request that is
 * not goes through an aligned bounce buffer covering the pages it touches
 * (read, change, write back, under the object's lock). A file system that
 * refuses O_DIRECT (tmpfs) is said once at plug, and the page cache is used.
 */
#define _GNU_SOURCE /* O_DIRECT */
#include "memory/memory.h"
#include <starpu_disk.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

struct unistd_base
{
	struct _astro_disk_folder *folder;
	bool direct;                         /* files opened with O_DIRECT */
};

struct unistd_obj
{
	int fd;
	char *path;
	size_t size;
	bool opened;                         /* starpu_disk_open(): not ours to delete */
	starpu_pthread_mutex_t lock;                /* the bounce buffer's read-change-write */
};

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (size_t)p : 4096;
}

static int direct_flag(const struct unistd_base *b)
{
#ifdef O_DIRECT
	return b->direct ? O_DIRECT : 0;
#else
	(void)b;
	return 0;
#endif
}

/* ------------------------------------------------------------ plug */

static void *plug(void *parameter, bool direct)
{
	const char *name = direct ? "unistd_o_direct" : "unistd";
	struct _astro_disk_folder *folder = _astro_disk_folder_plug(name, parameter);
	if (!folder)
		return NULL;
	struct unistd_base *b = calloc(1, sizeof(*b));
	if (!b) {
		_astro_disk_folder_unplug(folder);
		return NULL;
	}
	b->folder = folder;
	b->direct = direct;
#ifdef O_DIRECT
	if (direct) {
		char *probe;
		int fd = _astro_disk_file_new(folder, 0, &probe);
		if (fd >= 0) {
			close(fd);
			fd = open(probe, O_RDWR | O_DIRECT);
			if (fd < 0) {
				_astro_warn("disk %s: the file system refuses O_DIRECT (%s): unistd_o_direct uses the page cache there",
					    folder->path, strerror(errno));
				b->direct = false;
			} else {
				close(fd);
			}
			unlink(probe);
			g_free(probe);
		}
	}
#else
	if (direct) {
		_astro_warn("disk %s: no O_DIRECT on this system: unistd_o_direct uses the page cache", folder->path);
		b->direct = false;
	}
#endif
	/* Main-memory buffers on page boundaries: whole pages go without the bounce buffer. */
	if (b->direct)
		starpu_malloc_set_align(page_size());
	return b;
}

static void *unistd_plug(void *parameter, starpu_ssize_t size)
{
	(void)size;
	return plug(parameter, false);
}

static void *unistd_o_direct_plug(void *parameter, starpu_ssize_t size)
{
	(void)size;
	return plug(parameter, true);
}

static void unistd_unplug(void *base)
{
	struct unistd_base *b = base;
	_astro_disk_folder_unplug(b->folder);
	free(b);
}

static int unistd_bandwidth(unsigned node, void *base)
{
	(void)node, (void)base;
	return 0; /* the kernel measures the transfers it makes */
}

/* ------------------------------------------------------------ objects */

static struct unistd_obj *obj_new(int fd, char *path, size_t size, bool opened)
{
	struct unistd_obj *o = calloc(1, sizeof(*o));
	if (!o) {
		close(fd);
		if (!opened)
			unlink(path);
		g_free(path);
		return NULL;
	}
	*o = (struct unistd_obj) { .fd = fd, .path = path, .size = size, .opened = opened };
	starpu_pthread_mutex_init(&o->lock, NULL);
	return o;
}

static void obj_free(struct unistd_obj *o)
{
	close(o->fd);
	starpu_pthread_mutex_destroy(&o->lock);
	g_free(o->path);
	free(o);
}

static void *unistd_alloc(void *base, size_t size)
{
	struct unistd_base *b = base;
	char *path;
	int fd = _astro_disk_file_new(b->folder, direct_flag(b), &path);
	if (fd < 0)
		return NULL;
	/* Sparse: the room is taken as data is written. */
	if (ftruncate(fd, (off_t)size) != 0) {
		_astro_error("disk %s: cannot size a file to %zu bytes (%s)", b->folder->path, size, strerror(errno));
		close(fd);
		unlink(path);
		g_free(path);
		return NULL;
	}
	return obj_new(fd, path, size, false);
}

static void unistd_free(void *base, void *obj, size_t size)
{
	(void)base, (void)size;
	struct unistd_obj *o = obj;
	unlink(o->path);
	obj_free(o);
}

static void *unistd_open(void *base, void *pos, size_t size)
{
	struct unistd_base *b = base;
	char *path;
	int fd = _astro_disk_file_open(b->folder, pos, direct_flag(b), &path);
	return fd < 0 ? NULL : obj_new(fd, path, size, true);
}

static void unistd_close(void *base, void *obj, size_t size)
{
	(void)base, (void)size;
	obj_free(obj);
}

/* ------------------------------------------------------------ transfers */

/* Whole-count pread/pwrite (they may do part of it); what lies past the end of the file reads as zeros. */
static int full_pread(int fd, void *buf, size_t size, off_t offset)
{
	char *p = buf;
	while (size) {
		ssize_t n = pread(fd, p, size, offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			memset(p, 0, size);
			return 0;
		}
		p += n, size -= (size_t)n, offset += n;
	}
	return 0;
}

static int full_pwrite(int fd, const void *buf, size_t size, off_t offset)
{
	const char *p = buf;
	while (size) {
		ssize_t n = pwrite(fd, p, size, offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n, size -= (size_t)n, offset += n;
	}
	return 0;
}

static bool aligned(const struct unistd_base *b, const void *buf, off_t offset, size_t size)
{
	if (!b->direct)
		return true;
	size_t page = page_size();
	return (uintptr_t)buf % page == 0 && (size_t)offset % page == 0 && size % page == 0;
}

/* An unaligned request on an O_DIRECT file: through an aligned copy of the pages it touches. */
static int bounce(struct unistd_obj *o, void *read_into, const void *write_from, off_t offset, size_t size)
{
	size_t page = page_size();
	off_t start = offset - (off_t)((size_t)offset % page);
	size_t span = ((size_t)(offset - start) + size + page - 1) / page * page;
	void *buf;
	if (posix_memalign(&buf, page, span) != 0)
		return -ENOMEM;
	starpu_pthread_mutex_lock(&o->lock);
	int ret = full_pread(o->fd, buf, span, start);
	if (!ret && read_into)
		memcpy(read_into, (char *)buf + (offset - start), size);
	if (!ret && write_from) {
		memcpy((char *)buf + (offset - start), write_from, size);
		struct stat st;
		if (fstat(o->fd, &st) != 0) {
			ret = -errno;
		} else {
			/* The last page is written whole: the file then keeps its length (or grows to the end written). */
			off_t end = offset + (off_t)size > st.st_size ? offset + (off_t)size : st.st_size;
			ret = full_pwrite(o->fd, buf, span, start);
			if (!ret && start + (off_t)span > end && ftruncate(o->fd, end) != 0)
				ret = -errno;
		}
	}
	starpu_pthread_mutex_unlock(&o->lock);
	free(buf);
	return ret;
}

static int unistd_read(void *base, void *obj, void *buf, off_t offset, size_t size)
{
	struct unistd_obj *o = obj;
	int ret = aligned(base, buf, offset, size) ? full_pread(o->fd, buf, size, offset) : bounce(o, buf, NULL, offset, size);
	if (ret)
		_astro_error("disk: reading %zu bytes of %s failed (%s)", size, o->path, strerror(-ret));
	return ret;
}

static int unistd_write(void *base, void *obj, const void *buf, off_t offset, size_t size)
{
	struct unistd_obj *o = obj;
	int ret = aligned(base, buf, offset, size) ? full_pwrite(o->fd, buf, size, offset) : bounce(o, NULL, buf, offset, size);
	if (ret)
		_astro_error("disk: writing %zu bytes to %s failed (%s): is the disk full?", size, o->path, strerror(-ret));
	return ret;
}

static int unistd_full_read(void *base, void *obj, void **ptr, size_t *size, unsigned dst_node)
{
	struct unistd_obj *o = obj;
	return _astro_disk_full_read(&starpu_disk_unistd_ops, base, obj, o->fd, ptr, size, dst_node);
}

static int unistd_full_write(void *base, void *obj, void *ptr, size_t size)
{
	struct unistd_obj *o = obj;
	return _astro_disk_full_write(&starpu_disk_unistd_ops, base, obj, o->fd, &o->size, ptr, size);
}

/* The two differ by their plug only. */
#define UNISTD_OPS(plug_method) { \
		.plug = plug_method, .unplug = unistd_unplug, .bandwidth = unistd_bandwidth, \
		.alloc = unistd_alloc, .free = unistd_free, .open = unistd_open, .close = unistd_close, \
		.read = unistd_read, .write = unistd_write, .full_read = unistd_full_read, .full_write = unistd_full_write, \
	}
struct starpu_disk_ops starpu_disk_unistd_ops = UNISTD_OPS(unistd_plug);
struct starpu_disk_ops starpu_disk_unistd_o_direct_ops = UNISTD_OPS(unistd_o_direct_plug);
