/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stdio disk back-end (starpu_disk_stdio_ops): one file per object, read
 * and written through a FILE stream, which holds a position: each object's
 * seek and transfer go together under its lock. Synchronous only.
 */
#include "memory/memory.h"
#include <starpu_disk.h>
#include <unistd.h>

struct stdio_obj
{
	FILE *f;
	char *path;
	size_t size;
	starpu_pthread_mutex_t lock;
};

static void *stdio_plug(void *parameter, starpu_ssize_t size)
{
	(void)size;
	return _astro_disk_folder_plug("stdio", parameter);
}

static void stdio_unplug(void *base)
{
	_astro_disk_folder_unplug(base);
}

static int stdio_bandwidth(unsigned node, void *base)
{
	(void)node, (void)base;
	return 0; /* the kernel measures the transfers it makes */
}

static struct stdio_obj *obj_new(int fd, char *path, size_t size, bool opened)
{
	struct stdio_obj *o = calloc(1, sizeof(*o));
	FILE *f = o ? fdopen(fd, "r+b") : NULL;
	if (!f) {
		_astro_error("disk: cannot open a stream on %s (%s)", path, strerror(errno));
		close(fd);
		if (!opened)
			unlink(path);
		g_free(path);
		free(o);
		return NULL;
	}
	*o = (struct stdio_obj) { .f = f, .path = path, .size = size };
	starpu_pthread_mutex_init(&o->lock, NULL);
	return o;
}

static void obj_free(struct stdio_obj *o)
{
	fclose(o->f);
	starpu_pthread_mutex_destroy(&o->lock);
	g_free(o->path);
	free(o);
}

static void *stdio_alloc(void *base, size_t size)
{
	char *path;
	int fd = _astro_disk_file_new(base, 0, &path);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)size) != 0) {
		_astro_error("disk %s: cannot size a file to %zu bytes (%s)", path, size, strerror(errno));
		close(fd);
		unlink(path);
		g_free(path);
		return NULL;
	}
	return obj_new(fd, path, size, false);
}

static void stdio_free(void *base, void *obj, size_t size)
{
	(void)base, (void)size;
	struct stdio_obj *o = obj;
	unlink(o->path);
	obj_free(o);
}

static void *stdio_open(void *base, void *pos, size_t size)
{
	char *path;
	int fd = _astro_disk_file_open(base, pos, 0, &path);
	return fd < 0 ? NULL : obj_new(fd, path, size, true);
}

static void stdio_close(void *base, void *obj, size_t size)
{
	(void)base, (void)size;
	obj_free(obj);
}

static int stdio_read(void *base, void *obj, void *buf, off_t offset, size_t size)
{
	(void)base;
	struct stdio_obj *o = obj;
	starpu_pthread_mutex_lock(&o->lock);
	size_t n = 0;
	int ret = fseeko(o->f, offset, SEEK_SET);
	if (!ret) {
		n = fread(buf, 1, size, o->f);
		ret = ferror(o->f) ? -EIO : 0;
		clearerr(o->f);
	}
	starpu_pthread_mutex_unlock(&o->lock);
	if (ret) {
		_astro_error("disk: reading %zu bytes of %s failed", size, o->path);
		return -EIO;
	}
	memset((char *)buf + n, 0, size - n); /* past the end of the file */
	return 0;
}

static int stdio_write(void *base, void *obj, const void *buf, off_t offset, size_t size)
{
	(void)base;
	struct stdio_obj *o = obj;
	starpu_pthread_mutex_lock(&o->lock);
	int ret = fseeko(o->f, offset, SEEK_SET) != 0 || fwrite(buf, 1, size, o->f) != size || fflush(o->f) != 0 ? -EIO : 0;
	clearerr(o->f);
	starpu_pthread_mutex_unlock(&o->lock);
	if (ret)
		_astro_error("disk: writing %zu bytes to %s failed (%s): is the disk full?", size, o->path, strerror(errno));
	return ret;
}

static int stdio_full_read(void *base, void *obj, void **ptr, size_t *size, unsigned dst_node)
{
	struct stdio_obj *o = obj;
	return _astro_disk_full_read(&starpu_disk_stdio_ops, base, obj, fileno(o->f), ptr, size, dst_node);
}

static int stdio_full_write(void *base, void *obj, void *ptr, size_t size)
{
	struct stdio_obj *o = obj;
	return _astro_disk_full_write(&starpu_disk_stdio_ops, base, obj, fileno(o->f), &o->size, ptr, size);
}

struct starpu_disk_ops starpu_disk_stdio_ops = {
	.plug = stdio_plug,
	.unplug = stdio_unplug,
	.bandwidth = stdio_bandwidth,
	.alloc = stdio_alloc,
	.free = stdio_free,
	.open = stdio_open,
	.close = stdio_close,
	.read = stdio_read,
	.write = stdio_write,
	.full_read = stdio_full_read,
	.full_write = stdio_full_write,
};
