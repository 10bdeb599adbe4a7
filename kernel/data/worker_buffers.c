/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-worker buffers of a handle: copies of its layout that belong to the
 * runtime, one per worker, on that worker's memory node. Reductions keep each
 * worker's contribution in one (reduction.c); STARPU_SCRATCH accesses get
 * one, never the application's data, made at the worker's first such access
 * and reused by its later ones until the handle is unregistered. A worker
 * runs one task at a time, so its buffer needs no lock: only the set's
 * creation and the recording of a new buffer take the coherency lock. */
#include "data/data.h"

#include <stdlib.h>
#include <string.h>

void *_astro_worker_buffer(starpu_data_handle_t h, struct _astro_worker_buffers **set, unsigned node, bool *fresh)
{
	int worker = _astro_worker_id();
	struct _astro_worker_buffers *s = __atomic_load_n(set, __ATOMIC_ACQUIRE);
	if (fresh)
		*fresh = false;
	if (STARPU_LIKELY(s != NULL && s->iface[worker] != NULL))
		return s->iface[worker];
	if (!h->ops->allocate_data_on_node) {
		_astro_error("interface %s has no allocate_data_on_node method: the runtime cannot make a buffer of its own "
			     "for a STARPU_SCRATCH or STARPU_REDUX access; give the interface one",
			     h->ops->name ? h->ops->name : "(unnamed)");
		return NULL;
	}
	/* The node's interface gives the layout; the allocation replaces its addresses. */
	void *iface = malloc(h->ops->interface_size);
	memcpy(iface, h->iface[node], h->ops->interface_size);
	if (h->ops->allocate_data_on_node(iface, node) < 0) {
		char name[32];
		starpu_memory_node_get_name(node, name, sizeof(name));
		_astro_error("no room on %s for a per-worker buffer of a %s handle (%zu bytes): free some memory or lower the worker count",
			     name, h->ops->name ? h->ops->name : "data", starpu_data_get_alloc_size(h));
		free(iface);
		return NULL;
	}
	_ASTRO_OBSERVE(ASTRO_MOMENT_DATA_ALLOCATED, .workerid = worker, .task = _astro_current_task, .dst_node = node,
		       .bytes = starpu_data_get_alloc_size(h));
	starpu_pthread_mutex_lock(&h->coherency_lock);
	s = *set;
	if (!s) {
		s = calloc(1, sizeof(*s));
		__atomic_store_n(set, s, __ATOMIC_RELEASE);
	}
	s->node[worker] = (unsigned char)node;
	s->iface[worker] = iface;
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	if (fresh)
		*fresh = true;
	return iface;
}

void _astro_worker_buffers_free(starpu_data_handle_t h, struct _astro_worker_buffers *set)
{
	if (!set)
		return;
	for (unsigned w = 0; w < STARPU_NMAXWORKERS; w++) {
		if (!set->iface[w])
			continue;
		h->ops->free_data_on_node(set->iface[w], set->node[w]);
		free(set->iface[w]);
	}
	free(set);
}

void *_astro_scratch_buffer(starpu_data_handle_t h, unsigned node)
{
	return _astro_worker_buffer(h, &h->scratch, node, NULL);
}

void _astro_scratch_drop(starpu_data_handle_t h)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	struct _astro_worker_buffers *set = __atomic_exchange_n(&h->scratch, NULL, __ATOMIC_ACQ_REL);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	_astro_worker_buffers_free(h, set);
}
