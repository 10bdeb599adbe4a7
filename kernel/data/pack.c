/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Packing: a handle's data as one contiguous buffer and back
 * (starpu_data_pack/peek/unpack), for messages and for saving data. Each
 * interface packs its own layout; the dense ones (variable to ndim) share
 * the strided copy below.
 */
#include "data/interfaces/interfaces.h"

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

