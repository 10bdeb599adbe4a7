/*
 * Packing: a handle's data as one contiguous buffer and back
 * (starpu_data_pack/peek/unpack), for messages and for saving data. Each
 * interface packs its own layout; the dense ones (variable to ndim) share
 * the strided copy below.
 */
#include "data/data.h"

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

bool _astro_pack_node_ok(starpu_data_handle_t handle, unsigned node, const char *fn)
{
	if (!handle) {
		_astro_error("%s: NULL handle", fn);
		return false;
	}
	if (node >= starpu_memory_nodes_get_count() || starpu_node_get_kind(node) != STARPU_CPU_RAM) {
		_astro_error("%s: node %u is not a CPU memory node: pack on STARPU_MAIN_RAM (acquire the data there first)", fn, node);
		return false;
	}
	if (!handle->replicates[node].allocated) {
		_astro_error("%s: the handle has no buffer on node %u yet: acquire it there (or run a task on it) first", fn, node);
		return false;
	}
	return true;
}

static bool has_method(starpu_data_handle_t handle, void *method, const char *what, const char *fn)
{
	if (!handle) {
		_astro_error("%s: NULL handle", fn);
		return false;
	}
	if (!method) {
		_astro_error("%s: interface %s has no %s method: give its ops a %s", fn,
			     handle->ops->name ? handle->ops->name : "(unnamed)", what, what);
		return false;
	}
	return true;
}

int starpu_data_pack_node(starpu_data_handle_t handle, unsigned node, void **ptr, starpu_ssize_t *count)
{
	if (!has_method(handle, handle ? (void *)handle->ops->pack_data : NULL, "pack_data", __func__))
		return handle ? -ENOSYS : -EINVAL;
	if (!count) {
		_astro_error("%s: NULL count", __func__);
		return -EINVAL;
	}
	return handle->ops->pack_data(handle, node, ptr, count);
}

int starpu_data_pack(starpu_data_handle_t handle, void **ptr, starpu_ssize_t *count)
{
	return starpu_data_pack_node(handle, STARPU_MAIN_RAM, ptr, count);
}

int starpu_data_peek_node(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count)
{
	if (!has_method(handle, handle ? (void *)handle->ops->peek_data : NULL, "peek_data", __func__))
		return handle ? -ENOSYS : -EINVAL;
	if (!ptr && count) {
		_astro_error("%s: NULL buffer of %zu bytes", __func__, count);
		return -EINVAL;
	}
	return handle->ops->peek_data(handle, node, ptr, count);
}

int starpu_data_peek(starpu_data_handle_t handle, void *ptr, size_t count)
{
	return starpu_data_peek_node(handle, STARPU_MAIN_RAM, ptr, count);
}

int starpu_data_unpack_node(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count)
{
	if (!has_method(handle, handle ? (void *)handle->ops->unpack_data : NULL, "unpack_data", __func__))
		return handle ? -ENOSYS : -EINVAL;
	if (!ptr && count) {
		_astro_error("%s: NULL buffer of %zu bytes", __func__, count);
		return -EINVAL;
	}
	return handle->ops->unpack_data(handle, node, ptr, count);
}

int starpu_data_unpack(starpu_data_handle_t handle, void *ptr, size_t count)
{
	return starpu_data_unpack_node(handle, STARPU_MAIN_RAM, ptr, count);
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
