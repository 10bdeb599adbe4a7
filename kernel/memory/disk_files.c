/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the file back-ends of disk nodes share (disk_unistd.c, disk_stdio.c):
 * the folder a disk lives in, created at plug when missing (and removed at
 * unplug when it was created and is empty), and its files: one per
 * allocated object, made with a unique name, or opened by name.
 */
#include "memory/memory.h"
#include <starpu_disk.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p path; 0 or -errno. */
static int make_path(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	int ret = 0;
	for (char *s = p + 1; ; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = 0;
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			ret = -errno;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return ret;
}

struct _astro_disk_folder *_astro_disk_folder_plug(const char *backend, void *parameter)
{
	const char *path = parameter;
	if (!path || !*path) {
		_astro_error("starpu_disk_register (%s): NULL or empty folder: give the folder the disk's files go to", backend);
		return NULL;
	}
	struct stat st;
	bool existed = stat(path, &st) == 0;
	int err = existed ? (S_ISDIR(st.st_mode) ? 0 : -ENOTDIR) : make_path(path);
	if (!err && access(path, W_OK | X_OK) != 0)
		err = -errno;
	if (err) {
		_astro_error("starpu_disk_register (%s): cannot use folder %s (%s): give a folder this process can create and write",
			     backend, path, strerror(-err));
		return NULL;
	}
	struct _astro_disk_folder *f = calloc(1, sizeof(*f));
	if (f)
		f->path = strdup(path);
	if (!f || !f->path) {
		free(f);
		return NULL;
	}
	f->created = !existed;
	return f;
}

void _astro_disk_folder_unplug(struct _astro_disk_folder *f)
{
	if (f->created)
		(void)rmdir(f->path); /* only when the program left nothing there */
	free(f->path);
	free(f);
}

int _astro_disk_file_new(const struct _astro_disk_folder *f, int flags, char **path)
{
	*path = g_strdup_printf("%s/starpu-XXXXXX", f->path);
	int fd = g_mkstemp_full(*path, O_RDWR | flags, 0600);
	if (fd < 0) {
		_astro_error("disk %s: cannot create a file there (%s): free room or give another folder", f->path, strerror(errno));
		g_free(*path);
		*path = NULL;
	}
	return fd;
}

int _astro_disk_file_open(const struct _astro_disk_folder *f, const char *name, int flags, char **path)
{
	if (!name || !*name) {
		_astro_error("starpu_disk_open: NULL or empty file name on disk %s", f->path);
		return -1;
	}
	*path = name[0] == '/' ? g_strdup(name) : g_strdup_printf("%s/%s", f->path, name);
	int fd = open(*path, O_RDWR | flags);
	if (fd < 0) {
		_astro_error("starpu_disk_open: cannot open %s (%s): give the name of an existing, writable file in the disk's folder",
			     *path, strerror(errno));
		g_free(*path);
		*path = NULL;
	}
	return fd;
}

int _astro_disk_full_read(const struct starpu_disk_ops *ops, void *base, void *obj, int fd, void **ptr, size_t *size, unsigned dst_node)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -errno;
	*size = (size_t)st.st_size;
	*ptr = (void *)starpu_malloc_on_node_flags(dst_node, *size ? *size : 1, 0);
	if (!*ptr)
		return -ENOMEM;
	int ret = ops->read(base, obj, *ptr, 0, *size);
	if (ret) {
		starpu_free_on_node_flags(dst_node, (uintptr_t)*ptr, *size ? *size : 1, 0);
		*ptr = NULL;
	}
	return ret;
}

int _astro_disk_full_write(const struct starpu_disk_ops *ops, void *base, void *obj, int fd, size_t *obj_size, void *ptr, size_t size)
{
	int ret = ops->write(base, obj, ptr, 0, size);
	if (!ret && size != *obj_size) {
		if (ftruncate(fd, (off_t)size) != 0)
			return -errno;
		*obj_size = size;
	}
	return ret;
}
