/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Partitioning a handle at once (starpu_data_partition, starpu_data_unpartition,
 * starpu_data_map_filters): the children are views into the father's buffer
 * (data/filters.c makes them), and a partition waits for the accesses
 * before it; unpartitioning unregisters the children. The asynchronous
 * partition plans are partition_plans.c.
 */
#include "access/access.h"
#include <stdarg.h>

void starpu_data_partition(starpu_data_handle_t initial_handle, struct starpu_data_filter *f)
{
	if (!_astro_filter_checks(initial_handle, f, "starpu_data_partition"))
		return;
	if (initial_handle->nchildren) {
		_astro_error("starpu_data_partition: the handle is already partitioned: unpartition it first, or partition its children");
		return;
	}
	if (_astro_forbid_blocking("starpu_data_partition", "use starpu_data_partition_plan and starpu_data_partition_submit; the call is ignored"))
		return;
	/* The children alias the parent: the parent's pending tasks must be done before they exist. */
	_astro_data_wait_idle(initial_handle);
	/* The children are views into main memory's copy: it must hold the data, and be the only copy. */
	if (_astro_rt.nmemory_nodes > 1)
		_astro_coherency_fetch(initial_handle, STARPU_MAIN_RAM, STARPU_RW, false);
	unsigned nparts = _astro_filter_nparts(f, initial_handle);
	starpu_data_handle_t *children = calloc(nparts, sizeof(*children));
	for (unsigned i = 0; i < nparts; i++)
		children[i] = _astro_child_register(initial_handle, f, i, nparts);
	initial_handle->children = children;
	initial_handle->nchildren = nparts;
}

void starpu_data_unpartition(starpu_data_handle_t root_data, unsigned gathering_node)
{
	(void)gathering_node; /* everything already lives in main memory */
	if (!root_data) {
		_astro_error("starpu_data_unpartition: NULL handle");
		return;
	}
	if (!root_data->nchildren) {
		_astro_error("starpu_data_unpartition: the handle is not partitioned: call starpu_data_partition first");
		return;
	}
	if (_astro_forbid_blocking("starpu_data_unpartition", "use starpu_data_unpartition_submit; the call is ignored"))
		return;
	for (unsigned i = 0; i < root_data->nchildren; i++) {
		starpu_data_handle_t child = root_data->children[i];
		if (!child)
			continue;
		/* starpu_data_unregister() unpartitions a partitioned child first, then waits for its tasks. */
		starpu_data_unregister(child);
	}
	free(root_data->children);
	root_data->children = NULL;
	root_data->nchildren = 0;
}

starpu_data_handle_t starpu_data_get_child(starpu_data_handle_t handle, unsigned i)
{
	if (!handle || i >= handle->nchildren) {
		_astro_error("starpu_data_get_child: child %u does not exist (the handle has %u children)", i, handle ? handle->nchildren : 0);
		return NULL;
	}
	return handle->children[i];
}

int starpu_data_get_nb_children(starpu_data_handle_t handle)
{
	return handle ? (int)handle->nchildren : 0;
}

starpu_data_handle_t starpu_data_vget_sub_data(starpu_data_handle_t root_data, unsigned depth, va_list pa)
{
	starpu_data_handle_t handle = root_data;
	for (unsigned level = 0; level < depth && handle; level++)
		handle = starpu_data_get_child(handle, va_arg(pa, unsigned));
	return handle;
}

starpu_data_handle_t starpu_data_get_sub_data(starpu_data_handle_t root_data, unsigned depth, ...)
{
	va_list pa;
	va_start(pa, depth);
	starpu_data_handle_t handle = starpu_data_vget_sub_data(root_data, depth, pa);
	va_end(pa);
	return handle;
}

static void map_filters(starpu_data_handle_t handle, unsigned nfilters, struct starpu_data_filter **filters)
{
	if (nfilters == 0)
		return;
	starpu_data_partition(handle, filters[0]);
	for (unsigned i = 0; i < handle->nchildren; i++)
		map_filters(handle->children[i], nfilters - 1, filters + 1);
}

void starpu_data_map_filters_parray(starpu_data_handle_t root_data, int nfilters, struct starpu_data_filter **filters)
{
	if (nfilters > 0)
		map_filters(root_data, (unsigned)nfilters, filters);
}

void starpu_data_map_filters_array(starpu_data_handle_t root_data, int nfilters, struct starpu_data_filter *filters)
{
	struct starpu_data_filter *array[nfilters > 0 ? nfilters : 1];
	for (int i = 0; i < nfilters; i++)
		array[i] = &filters[i];
	starpu_data_map_filters_parray(root_data, nfilters, array);
}

void starpu_data_vmap_filters(starpu_data_handle_t root_data, unsigned nfilters, va_list pa)
{
	struct starpu_data_filter *array[nfilters ? nfilters : 1];
	for (unsigned i = 0; i < nfilters; i++)
		array[i] = va_arg(pa, struct starpu_data_filter *);
	starpu_data_map_filters_parray(root_data, (int)nfilters, array);
}

void starpu_data_map_filters(starpu_data_handle_t root_data, unsigned nfilters, ...)
{
	va_list pa;
	va_start(pa, nfilters);
	starpu_data_vmap_filters(root_data, nfilters, pa);
	va_end(pa);
}
