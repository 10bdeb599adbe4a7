/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the built-in interfaces share: their buffers on a node, the dense
 * layouts (ndim dimensions with strides: variable to ndim) and the sparse
 * ones (a few separate arrays: CSR, BCSR, COO), copied between nodes,
 * packed and peeked, and asked whether a pointer lies inside.
 */
#include "data/interfaces/interfaces.h"

starpu_ssize_t _astro_interface_alloc(unsigned node, size_t bytes, uintptr_t *ptr, uintptr_t *dev_handle)
{
	uintptr_t addr = starpu_malloc_on_node(node, bytes ? bytes : 1);
	if (!addr)
		return -ENOMEM;
	*dev_handle = addr;
	*ptr = starpu_node_get_kind(node) == STARPU_OPENCL_RAM ? 0 : addr;
	return (starpu_ssize_t)bytes;
}

void _astro_interface_free(unsigned node, uintptr_t *ptr, uintptr_t *dev_handle, size_t bytes)
{
	starpu_free_on_node(node, *dev_handle, bytes ? bytes : 1);
	*ptr = *dev_handle = 0;
}

int _astro_interface_copy_dense(size_t ndim, const uint32_t *nn, size_t elemsize,
				uintptr_t src, size_t src_offset, const uint32_t *src_ld, unsigned src_node,
				uintptr_t dst, size_t dst_offset, const uint32_t *dst_ld, unsigned dst_node, void *async)
{
	size_t count = 1;
	for (size_t d = 0; d < ndim; d++)
		count *= nn[d];
	if (count == 0)
		return 0;
	/* starpu_interface_copynd() merges the packed dimensions into runs and gives a device that
	 * copies in 2D the first unpacked one as one command; it takes StarPU's non-const arrays, and
	 * only reads them. */
	return starpu_interface_copynd(src, src_offset, src_node, dst, dst_offset, dst_node, elemsize, ndim, (uint32_t *)nn,
				       (uint32_t *)src_ld, (uint32_t *)dst_ld, async);
}

starpu_ssize_t _astro_arrays_alloc(unsigned node, struct _astro_arrays *a)
{
	for (unsigned i = 0; i < a->n; i++) {
		a->addr[i] = starpu_malloc_on_node(node, a->bytes[i] ? a->bytes[i] : 1);
		if (!a->addr[i]) {
			a->n = i;
			_astro_arrays_free(node, a);
			return -ENOMEM;
		}
	}
	return (starpu_ssize_t)_astro_arrays_size(a);
}

void _astro_arrays_free(unsigned node, struct _astro_arrays *a)
{
	for (unsigned i = 0; i < a->n; i++) {
		if (a->addr[i])
			starpu_free_on_node(node, a->addr[i], a->bytes[i] ? a->bytes[i] : 1);
		a->addr[i] = 0;
	}
}

int _astro_arrays_copy(const struct _astro_arrays *src, unsigned src_node, const struct _astro_arrays *dst, unsigned dst_node, void *async)
{
	int ret = 0;
	for (unsigned i = 0; i < src->n; i++)
		if (src->bytes[i] && starpu_interface_copy(src->addr[i], 0, src_node, dst->addr[i], 0, dst_node, src->bytes[i], async) == -EAGAIN)
			ret = -EAGAIN;
	return ret;
}

size_t _astro_arrays_size(const struct _astro_arrays *a)
{
	size_t bytes = 0;
	for (unsigned i = 0; i < a->n; i++)
		bytes += a->bytes[i];
	return bytes;
}

int _astro_arrays_contain(const struct _astro_arrays *a, unsigned node, const void *p)
{
	/* On OpenCL an array's address is a cl_mem, no pointer lies in it. */
	if (starpu_node_get_kind(node) == STARPU_OPENCL_RAM)
		return 0;
	for (unsigned i = 0; i < a->n; i++)
		if (_astro_inside(a->addr[i], a->bytes[i], p))
			return 1;
	return 0;
}

void _astro_copy_strided(size_t ndim, const uint32_t *nn, size_t elemsize, const char *src, const uint32_t *src_ld,
			 char *dst, const uint32_t *dst_ld)
{
	for (size_t d = 0; d < ndim; d++)
		if (nn[d] == 0)
			return;
	if (ndim <= 1) {
		memcpy(dst, src, (ndim ? nn[0] : 1) * elemsize);
		return;
	}
	/* The rows (dimension 0) are contiguous: walk the others as an odometer. */
	uint32_t idx[ndim];
	memset(idx, 0, sizeof(idx));
	size_t row = (size_t)nn[0] * elemsize;
	for (;;) {
		size_t s = 0, t = 0;
		for (size_t d = 1; d < ndim; d++) {
			s += (size_t)idx[d] * src_ld[d];
			t += (size_t)idx[d] * dst_ld[d];
		}
		memcpy(dst + t * elemsize, src + s * elemsize, row);
		size_t d = 1;
		while (d < ndim && ++idx[d] == nn[d])
			idx[d++] = 0;
		if (d == ndim)
			return;
	}
}

/* ------------------------------------------- the dense interfaces' methods */

static void packed_ld(const struct _astro_dense *d, uint32_t *ld)
{
	uint32_t stride = 1;
	for (size_t i = 0; i < d->ndim; i++) {
		ld[i] = stride;
		stride *= d->nn[i];
	}
}

static size_t dense_bytes(const struct _astro_dense *d)
{
	size_t bytes = d->elemsize;
	for (size_t i = 0; i < d->ndim; i++)
		bytes *= d->nn[i];
	return bytes;
}

int _astro_dense_contains(const struct _astro_dense *d, const void *p)
{
	size_t last = 0; /* the last element's index */
	for (size_t i = 0; i < d->ndim; i++) {
		if (!d->nn[i])
			return 0;
		last += (size_t)(d->nn[i] - 1) * d->ld[i];
	}
	return _astro_inside((uintptr_t)d->base, (last + 1) * d->elemsize, p);
}

int _astro_pack_dense(const struct _astro_dense *d, unsigned node, void **ptr, starpu_ssize_t *count)
{
	size_t bytes = dense_bytes(d);
	*count = (starpu_ssize_t)bytes;
	if (!ptr)
		return 0;
	*ptr = (void *)starpu_malloc_on_node_flags(node, bytes ? bytes : 1, 0);
	if (!*ptr)
		return -ENOMEM;
	uint32_t packed[_ASTRO_DENSE_MAXDIM];
	packed_ld(d, packed);
	_astro_copy_strided(d->ndim, d->nn, d->elemsize, d->base, d->ld, *ptr, packed);
	return 0;
}

int _astro_peek_dense(const struct _astro_dense *d, const void *ptr, size_t count, const char *name)
{
	size_t bytes = dense_bytes(d);
	if (count != bytes) {
		_astro_error("unpacking a %s handle: the buffer holds %zu bytes but the handle is %zu bytes: unpack into a handle of the packed layout",
			     name, count, bytes);
		return -EINVAL;
	}
	uint32_t packed[_ASTRO_DENSE_MAXDIM];
	packed_ld(d, packed);
	_astro_copy_strided(d->ndim, d->nn, d->elemsize, ptr, packed, d->base, d->ld);
	return 0;
}

/* ------------------------------------------- the sparse interfaces' methods */

int _astro_arrays_pack(const struct _astro_arrays *a, unsigned node, void **ptr, starpu_ssize_t *count)
{
	size_t bytes = _astro_arrays_size(a);
	*count = (starpu_ssize_t)bytes;
	if (!ptr)
		return 0;
	char *out = (char *)starpu_malloc_on_node_flags(node, bytes ? bytes : 1, 0);
	if (!out)
		return -ENOMEM;
	*ptr = out;
	for (unsigned i = 0; i < a->n; i++) {
		if (a->bytes[i])
			memcpy(out, (const void *)a->addr[i], a->bytes[i]);
		out += a->bytes[i];
	}
	return 0;
}

int _astro_arrays_peek(const struct _astro_arrays *a, const void *ptr, size_t count, const char *name)
{
	size_t bytes = _astro_arrays_size(a);
	if (count != bytes) {
		_astro_error("unpacking a %s handle: the buffer holds %zu bytes but the handle is %zu bytes: unpack into a handle of the packed sizes",
			     name, count, bytes);
		return -EINVAL;
	}
	const char *in = ptr;
	for (unsigned i = 0; i < a->n; i++) {
		if (a->bytes[i])
			memcpy((void *)a->addr[i], in, a->bytes[i]);
		in += a->bytes[i];
	}
	return 0;
}
