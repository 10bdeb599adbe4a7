/* Reductions (STARPU_REDUX accesses, starpu_data_set_reduction_methods).
 *
 * A task accessing a handle in STARPU_REDUX mode on a worker works on that
 * worker's own reduction buffer, which the handle's init codelet sets to the
 * neutral value when it is created. The next access in another mode (a task,
 * an acquire, the unregistration) first combines every pending buffer into
 * the handle's main-memory copy with the reduction codelet. When the handle's
 * content is undefined at that point (registered on no node, or invalidated),
 * the init codelet gives the main copy its neutral value first. The codelets
 * run on the CPU, in main memory. */
#include "kernel.h"

#include <stdlib.h>
#include <string.h>

struct _astro_redux
{
	void *bufs[STARPU_NMAXWORKERS];      /* each worker's interface, NULL when none */
};

static int run_cpu(starpu_data_handle_t h, struct starpu_codelet *cl, void **buffers, const char *what)
{
	if (!cl->cpu_funcs[0]) {
		_astro_error("the %s codelet of a STARPU_REDUX handle%s%s has no CPU function: give it cpu_funcs[0]",
			     what, h->name ? " " : "", h->name ? h->name : "");
		return -ENOSYS;
	}
	cl->cpu_funcs[0](buffers, NULL);
	return 0;
}

bool _astro_redux_private(starpu_data_handle_t h, unsigned node)
{
	return h->redux_cl && h->init_cl && starpu_node_get_kind(node) == STARPU_CPU_RAM && _astro_worker_id() >= 0;
}

/* Is the handle's content undefined (coherency_lock held)? */
static bool undefined(starpu_data_handle_t h)
{
	if (h->unallocated)
		return true;
	for (unsigned node = 0; node < STARPU_MAXNODES; node++)
		if (h->valid[node])
			return false;
	return true;
}

void *_astro_redux_buffer(starpu_data_handle_t h, unsigned node)
{
	int worker = _astro_worker_id();
	pthread_mutex_lock(&h->coherency_lock);
	if (!h->redux)
		__atomic_store_n(&h->redux, calloc(1, sizeof(*h->redux)), __ATOMIC_RELAXED);
	void *iface = h->redux->bufs[worker];
	pthread_mutex_unlock(&h->coherency_lock);
	if (iface)
		return iface;
	iface = malloc(h->ops->interface_size);
	memcpy(iface, h->iface[STARPU_MAIN_RAM], h->ops->interface_size);
	if (!h->ops->allocate_data_on_node || h->ops->allocate_data_on_node(iface, node) < 0) {
		_astro_error("no room for the reduction buffer of a %s handle (%zu bytes): free some memory",
			     h->ops->name ? h->ops->name : "data", starpu_data_get_alloc_size(h));
		abort();
	}
	if (run_cpu(h, h->init_cl, &iface, "init") != 0)
		abort();
	pthread_mutex_lock(&h->coherency_lock);
	h->redux->bufs[worker] = iface;
	pthread_mutex_unlock(&h->coherency_lock);
	return iface;
}

void _astro_redux_drop(starpu_data_handle_t h)
{
	pthread_mutex_lock(&h->coherency_lock);
	struct _astro_redux *r = __atomic_exchange_n(&h->redux, NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&h->coherency_lock);
	if (!r)
		return;
	for (unsigned w = 0; w < STARPU_NMAXWORKERS; w++) {
		if (!r->bufs[w])
			continue;
		h->ops->free_data_on_node(r->bufs[w], STARPU_MAIN_RAM);
		free(r->bufs[w]);
	}
	free(r);
}

void _astro_redux_combine(starpu_data_handle_t h)
{
	pthread_mutex_lock(&h->coherency_lock);
	bool fresh = undefined(h);
	pthread_mutex_unlock(&h->coherency_lock);
	/* The main copy, valid there alone: the reduction writes it. */
	if (_astro_rt.nmemory_nodes > 1 ? _astro_coherency_fetch(h, STARPU_MAIN_RAM, STARPU_RW, false) != 0
					: (!h->replicates[STARPU_MAIN_RAM].allocated && !_astro_coherency_materialize(h, STARPU_MAIN_RAM)))
		abort();
	pthread_mutex_lock(&h->coherency_lock);
	h->valid[STARPU_MAIN_RAM] = true;
	pthread_mutex_unlock(&h->coherency_lock);
	void *buffers[2] = { h->iface[STARPU_MAIN_RAM], NULL };
	if (fresh && run_cpu(h, h->init_cl, buffers, "init") != 0)
		abort();
	for (unsigned w = 0; w < STARPU_NMAXWORKERS; w++) {
		if (!h->redux->bufs[w])
			continue;
		buffers[1] = h->redux->bufs[w];
		if (run_cpu(h, h->redux_cl, buffers, "reduction") != 0)
			abort();
	}
	_astro_redux_drop(h);
}

void _astro_redux_invalidated(starpu_data_handle_t h)
{
	/* Any content is right for undefined data: the neutral one, where the next reduction starts
	 * (also with a single memory node, where later plain writes do not track validity). */
	if (!h->init_cl || !h->redux_cl || !h->replicates[STARPU_MAIN_RAM].allocated)
		return;
	void *iface = h->iface[STARPU_MAIN_RAM];
	if (run_cpu(h, h->init_cl, &iface, "init") != 0)
		return;
	pthread_mutex_lock(&h->coherency_lock);
	h->valid[STARPU_MAIN_RAM] = true;
	pthread_mutex_unlock(&h->coherency_lock);
}
