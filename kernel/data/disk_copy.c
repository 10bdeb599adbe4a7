/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A handle's copies to and from a disk memory node (memory/disk.c) when its
 * interface has no copy method for it: packed (pack_data, peek_data) and
 * moved through the back-end's whole-object reads and writes; and the disk a
 * copy evicted from main memory goes to.
 */
#include "data/data.h"
#include <starpu_disk.h>

int _astro_disk_evict_target(starpu_data_handle_t h)
{
	void *base;
	if (h->home_node >= 0 && _astro_disk_backend((unsigned)h->home_node, &base))
		return h->home_node;
	return _astro_disk_first_node();
}

/* The back-end object of h on disk node (its interface's to_pointer), NULL said when there is none. */
static void *disk_object(starpu_data_handle_t h, unsigned node)
{
	void *obj = h->ops->to_pointer ? h->ops->to_pointer(h->iface[node], node) : NULL;
	if (!obj)
		_astro_error("interface %s gives no object on disk node %u: give it a to_pointer method",
			     h->ops->name ? h->ops->name : "(unnamed)", node);
	return obj;
}

int _astro_disk_pack_transfer(starpu_data_handle_t h, unsigned src, unsigned dst)
{
	const char *name = h->ops->name ? h->ops->name : "(unnamed)";
	void *sbase = NULL, *dbase = NULL;
	const struct starpu_disk_ops *sd = _astro_disk_backend(src, &sbase), *dd = _astro_disk_backend(dst, &dbase);
	if (sd && dd)
		return -ENODEV; /* the kernel goes through main memory */
	if (dd) {
		if (!h->ops->pack_data || !dd->full_write) {
			_astro_error("interface %s has no copy method to disk node %u nor pack_data (or the back-end no full_write): give it an any_to_any",
				     name, dst);
			return -ENOSYS;
		}
		void *obj = disk_object(h, dst), *ptr = NULL;
		starpu_ssize_t count = 0;
		if (!obj)
			return -EINVAL;
		int ret = h->ops->pack_data(h, src, &ptr, &count);
		if (ret < 0)
			return ret;
		ret = dd->full_write(dbase, obj, ptr, (size_t)count) ? -EIO : 0;
		starpu_free_on_node_flags(src, (uintptr_t)ptr, count ? (size_t)count : 1, 0);
		return ret;
	}
	if (!h->ops->peek_data && !h->ops->unpack_data) {
		_astro_error("interface %s has no copy method from disk node %u nor peek_data: give it an any_to_any", name, src);
		return -ENOSYS;
	}
	if (!sd->full_read) {
		_astro_error("the back-end of disk node %u has no full_read, which interface %s needs (it has no copy method)", src, name);
		return -ENOSYS;
	}
	void *obj = disk_object(h, src), *ptr = NULL;
	size_t count = 0;
	if (!obj)
		return -EINVAL;
	if (sd->full_read(sbase, obj, &ptr, &count, dst) != 0 || (!ptr && count))
		return -EIO;
	if (!h->ops->peek_data)
		return h->ops->unpack_data(h, dst, ptr, count); /* frees ptr */
	int ret = h->ops->peek_data(h, dst, ptr, count);
	starpu_free_on_node_flags(dst, (uintptr_t)ptr, count ? count : 1, 0);
	return ret;
}
