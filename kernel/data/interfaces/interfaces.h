/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the built-in data interfaces (this folder) and the filters share:
 * their buffers on a node, the dense layouts (variable to ndim) and the
 * sparse ones (arrays of values and indices), their pack methods, the
 * compressed rows of CSR and BCSR, views moved by an offset.
 */
#ifndef __ASTRO_INTERFACES_H__
#define __ASTRO_INTERFACES_H__

#include "data/data.h"

/* The built-in interfaces' buffers on a node (interfaces.c): dev_handle is the
 * driver's address, ptr the CPU's (0 on OpenCL). */
starpu_ssize_t _astro_interface_alloc(unsigned node, size_t bytes, uintptr_t *ptr, uintptr_t *dev_handle);
void _astro_interface_free(unsigned node, uintptr_t *ptr, uintptr_t *dev_handle, size_t bytes);
/* Does p lie in the extent bytes from base (a CPU address; 0 on a device, where nothing does)? */
static inline int _astro_inside(uintptr_t base, size_t extent, const void *p)
{
	return base && (uintptr_t)p >= base && (uintptr_t)p < base + extent;
}
/* An interface made of a few separate arrays (the sparse ones: values and
 * indices), each addr[i] on a node, bytes[i] long. */
#define _ASTRO_MAX_ARRAYS 3
struct _astro_arrays
{
	unsigned n;
	uintptr_t addr[_ASTRO_MAX_ARRAYS];
	size_t bytes[_ASTRO_MAX_ARRAYS];
};
/* Allocates every array on node into a (all or none); returns the bytes or -ENOMEM. */
starpu_ssize_t _astro_arrays_alloc(unsigned node, struct _astro_arrays *a);
void _astro_arrays_free(unsigned node, struct _astro_arrays *a);
int _astro_arrays_copy(const struct _astro_arrays *src, unsigned src_node, const struct _astro_arrays *dst, unsigned dst_node, void *async);
size_t _astro_arrays_size(const struct _astro_arrays *a);
/* 1 when p lies in one of the arrays on node, else 0 (the pointer_is_inside method). */
int _astro_arrays_contain(const struct _astro_arrays *a, unsigned node, const void *p);
/* The arrays one after the other in a new buffer from starpu_malloc_on_node_flags(node, *count, 0) (ptr NULL: only the size). */
int _astro_arrays_pack(const struct _astro_arrays *a, unsigned node, void **ptr, starpu_ssize_t *count);
/* Copies a packed buffer of count bytes into the arrays (name: the interface, for the error). */
int _astro_arrays_peek(const struct _astro_arrays *a, const void *ptr, size_t count, const char *name);
/* The allocate, free, copy, size, pointer_is_inside and pack methods prefix##_* of an interface whose get(iface,
 * struct _astro_arrays *) lists its arrays and set(iface, const struct _astro_arrays *) stores their addresses. */
#define _ASTRO_ARRAYS_METHODS(prefix, get, set) \
	static starpu_ssize_t prefix##_allocate(void *data_interface, unsigned node) \
	{ \
		struct _astro_arrays a; \
		get(data_interface, &a); \
		starpu_ssize_t ret = _astro_arrays_alloc(node, &a); \
		if (ret >= 0) \
			set(data_interface, &a); \
		return ret; \
	} \
	static void prefix##_free(void *data_interface, unsigned node) \
	{ \
		struct _astro_arrays a; \
		get(data_interface, &a); \
		_astro_arrays_free(node, &a); \
		set(data_interface, &a); \
	} \
	static int prefix##_copy(void *src, unsigned src_node, void *dst, unsigned dst_node, void *async) \
	{ \
		struct _astro_arrays s, d; \
		get(src, &s); \
		get(dst, &d); \
		return _astro_arrays_copy(&s, src_node, &d, dst_node, async); \
	} \
	static size_t prefix##_size(starpu_data_handle_t handle) \
	{ \
		struct _astro_arrays a; \
		get(starpu_data_get_interface_on_node(handle, STARPU_MAIN_RAM), &a); \
		return _astro_arrays_size(&a); \
	} \
	static int prefix##_pointer_is_inside(void *data_interface, unsigned node, void *p) \
	{ \
		struct _astro_arrays a; \
		get(data_interface, &a); \
		return _astro_arrays_contain(&a, node, p); \
	} \
	_ASTRO_PACK_METHODS(prefix, struct _astro_arrays, get, _astro_arrays_pack, _astro_arrays_peek) \
	static const struct starpu_data_copy_methods prefix##_copy_methods = { .any_to_any = prefix##_copy };

/* The compressed-row part of the CSR and BCSR interfaces (interface_csr.c), in main memory. */
struct _astro_rows
{
	uint32_t nnz, nrow;
	uintptr_t nzval;
	uint32_t *colind, *rowptr;
	uint32_t firstentry;
};
/* Band id of nparts of consecutive rows, as views into father's arrays (entry_bytes: bytes of one entry's values). */
void _astro_rows_cut(const struct _astro_rows *father, struct _astro_rows *child, size_t entry_bytes, unsigned id, unsigned nparts);
/* Checks the arrays a CSR or BCSR registration gives (reported under fn). */
bool _astro_rows_check(const char *fn, int home_node, uint32_t nnz, uint32_t nrow, uintptr_t nzval, const uint32_t *colind,
		       const uint32_t *rowptr, uint32_t firstentry);

/* Copies a dense array (ndim dimensions nn, strides src_ld / dst_ld in elements) between two
 * nodes' buffers: starpu_interface_copynd(), nothing for an empty one. */
int _astro_interface_copy_dense(size_t ndim, const uint32_t *nn, size_t elemsize,
				uintptr_t src, size_t src_offset, const uint32_t *src_ld, unsigned src_node,
				uintptr_t dst, size_t dst_offset, const uint32_t *dst_ld, unsigned dst_node, void *async);
/* Copies a dense array of ndim dimensions nn (elements), elemsize bytes each,
 * between two CPU-addressable layouts with strides src_ld and dst_ld
 * (elements between consecutive indices of each dimension; ld[0] is 1). */
void _astro_copy_strided(size_t ndim, const uint32_t *nn, size_t elemsize, const char *src, const uint32_t *src_ld,
			 char *dst, const uint32_t *dst_ld);
/* Checks a pack/peek/unpack call on node: the data must be in that node's CPU-addressable memory. */
bool _astro_pack_node_ok(starpu_data_handle_t handle, unsigned node, const char *fn);

/* A dense layout on a CPU node (pack.c): ndim dimensions of nn elements,
 * ld elements between consecutive indices of each (ld[0] = 1), at base. */
#define _ASTRO_DENSE_MAXDIM 16
struct _astro_dense
{
	size_t ndim;
	uint32_t nn[_ASTRO_DENSE_MAXDIM];
	uint32_t ld[_ASTRO_DENSE_MAXDIM];
	size_t elemsize;
	char *base;
};
/* Packs the layout into a new buffer from starpu_malloc_on_node_flags(node, *count, 0) (ptr NULL: only the size). */
int _astro_pack_dense(const struct _astro_dense *d, unsigned node, void **ptr, starpu_ssize_t *count);
/* Copies a packed buffer of count bytes into the layout (name: the interface, for the error). */
int _astro_peek_dense(const struct _astro_dense *d, const void *ptr, size_t count, const char *name);
/* The pack_data, peek_data and unpack_data methods prefix##_pack/_peek/_unpack of an
 * interface whose describe(iface, type *) fills a description that pack(desc, node, ptr,
 * count) and peek(desc, ptr, count, name) use. */
#define _ASTRO_PACK_METHODS(prefix, type, describe, pack, peek) \
	static int prefix##_pack(starpu_data_handle_t handle, unsigned node, void **ptr, starpu_ssize_t *count) \
	{ \
		type desc; \
		if (!_astro_pack_node_ok(handle, node, "starpu_data_pack")) \
			return -EINVAL; \
		describe(starpu_data_get_interface_on_node(handle, node), &desc); \
		return pack(&desc, node, ptr, count); \
	} \
	static int prefix##_peek(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count) \
	{ \
		type desc; \
		if (!_astro_pack_node_ok(handle, node, "starpu_data_peek")) \
			return -EINVAL; \
		describe(starpu_data_get_interface_on_node(handle, node), &desc); \
		return peek(&desc, ptr, count, handle->ops->name); \
	} \
	static int prefix##_unpack(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count) \
	{ \
		int ret = prefix##_peek(handle, node, ptr, count); \
		if (ret == 0) \
			starpu_free_on_node_flags(node, (uintptr_t)ptr, count ? count : 1, 0); \
		return ret; \
	}
/* 1 when p lies within the layout (between its first and last elements), else 0. */
int _astro_dense_contains(const struct _astro_dense *d, const void *p);
/* The pack methods of a dense interface whose layout(iface, struct _astro_dense *) describes a
 * node's copy, and its pointer_is_inside method prefix##_pointer_is_inside. */
#define _ASTRO_DENSE_PACK_METHODS(prefix, layout) \
	_ASTRO_PACK_METHODS(prefix, struct _astro_dense, layout, _astro_pack_dense, _astro_peek_dense) \
	static int prefix##_pointer_is_inside(void *data_interface, unsigned node, void *p) \
	{ \
		(void)node; \
		struct _astro_dense d; \
		layout(data_interface, &d); \
		return _astro_dense_contains(&d, p); \
	}

/* The shadow width a filter gets: the filter_arg_ptr value itself, cast to a pointer. */
static inline unsigned _astro_filter_shadow(struct starpu_data_filter *f)
{
	return (unsigned)(uintptr_t)f->filter_arg_ptr;
}

/* Moves a view by bytes, as every interface keeps ptr and offset side by side. */
#define _ASTRO_VIEW_MOVE(child, father, bytes) do { \
		(child)->dev_handle = (father)->dev_handle; \
		(child)->ptr = (father)->ptr ? (father)->ptr + (bytes) : 0; \
		(child)->offset = (father)->offset + (bytes); \
	} while (0)

#endif /* __ASTRO_INTERFACES_H__ */
