/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reductions (STARPU_REDUX accesses, starpu_data_set_reduction_methods).
 *
 * A task accessing a handle in STARPU_REDUX mode works on its worker's own
 * reduction buffer (worker_buffers.c), on the worker's memory node, which the
 * handle's init codelet sets to the neutral value when it is created: so
 * reductions on one handle run alongside each other (data.c orders them only
 * against the other accesses). The init codelet runs on the worker itself
 * when its driver has an implementation, else on the CPU into main memory,
 * the value then copied to the device. The next access in another mode (a
 * task, an acquire, the unregistration) first combines every pending buffer
 * into the handle's main-memory copy with the reduction codelet's CPU
 * function, a device buffer being brought to main memory for it: that fold
 * needs the main copy, which lives there. When the handle's content is
 * undefined at that point (registered on no node, or invalidated), the init
 * codelet gives the main copy its neutral value first. */
#include "data/data.h"

#include <stdlib.h>
#include <string.h>

static void *cl_arg_of(starpu_data_handle_t h, struct starpu_codelet *cl)
{
	return cl == h->init_cl ? h->init_arg : h->redux_arg;
}

static int run_cpu(starpu_data_handle_t h, struct starpu_codelet *cl, void **buffers, const char *what)
{
	if (!cl->cpu_funcs[0]) {
		_astro_error("the %s codelet of a STARPU_REDUX handle%s%s has no CPU function: give it cpu_funcs[0]",
			     what, h->name ? " " : "", h->name ? h->name : "");
		return -ENOSYS;
	}
	struct _astro_foreign_call call;
	_astro_foreign_enter_fn(&call, (void *)cl->cpu_funcs[0], "cpu_funcs[0]",
				"the codelet's code crashed, not the runtime; debug that function (gdb, valgrind)",
				"the %s codelet '%s' of STARPU_REDUX handle %s", what, cl->name ? cl->name : "(unnamed)",
				h->name ? h->name : "(unnamed)");
	cl->cpu_funcs[0](buffers, cl_arg_of(h, cl));
	_astro_foreign_leave_fn(&call);
	return 0;
}

/* Runs cl through the calling worker's driver when it has an implementation of it: true if it ran. */
static bool run_on_worker(starpu_data_handle_t h, struct starpu_codelet *cl, void **buffers)
{
	struct _astro_worker *w = _astro_self;
	if (!w || !w->driver->has_impl(cl, 0) || (cl->where && !(cl->where & w->driver->where)))
		return false;
	struct starpu_task task;
	starpu_task_init(&task);
	task.cl = cl;
	task.cl_arg = cl_arg_of(h, cl);
	struct _astro_foreign_call call;
	_astro_foreign_enter_fn(&call, (void *)cl->cpu_funcs[0], "cpu_funcs[0]",
				"the codelet's code crashed, not the runtime; debug that function (gdb, valgrind)",
				"the %s codelet '%s' of STARPU_REDUX handle %s on worker %s", cl == h->init_cl ? "init" : "reduction",
				cl->name ? cl->name : "(unnamed)", h->name ? h->name : "(unnamed)", w->name);
	w->driver->execute(w->id, &task, buffers, 0);
	_astro_foreign_leave_fn(&call);
	return true;
}

/* A buffer of the handle's layout in main memory, the runtime's (NULL, said, when out of memory). */
static void *ram_buffer(starpu_data_handle_t h)
{
	void *iface = malloc(h->ops->interface_size);
	memcpy(iface, h->iface[STARPU_MAIN_RAM], h->ops->interface_size);
	if (h->ops->allocate_data_on_node(iface, STARPU_MAIN_RAM) < 0) {
		_astro_error("no room in main memory to combine a reduction of a %s handle (%zu bytes): free some memory",
			     h->ops->name ? h->ops->name : "data", starpu_data_get_alloc_size(h));
		free(iface);
		return NULL;
	}
	return iface;
}

static void ram_buffer_free(starpu_data_handle_t h, void *iface)
{
	h->ops->free_data_on_node(iface, STARPU_MAIN_RAM);
	free(iface);
}

/* Sets a new reduction buffer on node to the neutral value. */
static int init_buffer(starpu_data_handle_t h, void *iface, unsigned node)
{
	if (run_on_worker(h, h->init_cl, &iface))
		return 0;
	if (starpu_node_get_kind(node) == STARPU_CPU_RAM)
		return run_cpu(h, h->init_cl, &iface, "init");
	/* No implementation for this device: the neutral value is made in main memory, then copied. */
	void *tmp = ram_buffer(h);
	if (!tmp)
		return -ENOMEM;
	int ret = run_cpu(h, h->init_cl, &tmp, "init");
	if (ret == 0)
		ret = _astro_interface_transfer(h, tmp, STARPU_MAIN_RAM, iface, node);
	ram_buffer_free(h, tmp);
	return ret;
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

static const char *handle_name(starpu_data_handle_t h)
{
	return h->name ? h->name : "(unnamed)";
}

/* Takes buffer w out of set and frees it (its content not wanted: never initialised, or folded). */
static void drop_one(starpu_data_handle_t h, struct _astro_worker_buffers *set, unsigned w)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	void *iface = set->iface[w];
	set->iface[w] = NULL;
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	if (iface) {
		h->ops->free_data_on_node(iface, set->node[w]);
		free(iface);
	}
}

void *_astro_redux_buffer(starpu_data_handle_t h, unsigned node)
{
	bool fresh;
	void *iface = _astro_worker_buffer(h, &h->redux, node, &fresh);
	if (iface && fresh && init_buffer(h, iface, node) != 0) {
		/* Never set to the neutral value: it must not be folded into the result. */
		drop_one(h, __atomic_load_n(&h->redux, __ATOMIC_ACQUIRE), (unsigned)_astro_worker_id());
		iface = NULL;
	}
	return iface;
}

void _astro_redux_drop(starpu_data_handle_t h)
{
	starpu_pthread_mutex_lock(&h->coherency_lock);
	struct _astro_worker_buffers *set = __atomic_exchange_n(&h->redux, NULL, __ATOMIC_ACQ_REL);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	_astro_worker_buffers_free(h, set);
}

/* Folds one worker's contribution (on node) into the main copy main. */
static int fold(starpu_data_handle_t h, void *main, void *contribution, unsigned node)
{
	void *tmp = NULL;
	if (starpu_node_get_kind(node) != STARPU_CPU_RAM) {
		if (!(tmp = ram_buffer(h)))
			return -ENOMEM;
		if (_astro_interface_transfer(h, contribution, node, tmp, STARPU_MAIN_RAM) != 0) {
			ram_buffer_free(h, tmp);
			return -EIO;
		}
		contribution = tmp;
	}
	void *buffers[2] = { main, contribution };
	int ret = run_cpu(h, h->redux_cl, buffers, "reduction");
	if (tmp)
		ram_buffer_free(h, tmp);
	return ret;
}

/* The combination failed (what said first); the contributions not folded stay pending, the next access tries again. */
static __attribute__((cold)) int combine_failed(starpu_data_handle_t h, int ret, const char *what)
{
	_astro_error("the reduction of STARPU_REDUX handle %s could not be combined: %s; its contributions not folded yet are kept "
		     "and the next access tries again, the access that needed it fails (a task: STARPU_TASK_STOPPED): free some "
		     "memory or raise STARPU_LIMIT_CPU_MEM", handle_name(h), what);
	starpu_pthread_mutex_unlock(&h->redux_lock);
	return ret;
}

int _astro_redux_combine(starpu_data_handle_t h)
{
	/* Readers that may run together (tasks, acquires) each find the buffers pending: the first combines. */
	starpu_pthread_mutex_lock(&h->redux_lock);
	struct _astro_worker_buffers *set = __atomic_load_n(&h->redux, __ATOMIC_ACQUIRE);
	if (!set) {
		starpu_pthread_mutex_unlock(&h->redux_lock);
		return 0;
	}
	if (!h->redux_cl || !h->init_cl)
		return combine_failed(h, -EINVAL, "its reduction methods were unset while contributions were pending (set them again "
						  "with starpu_data_set_reduction_methods)");
	starpu_pthread_mutex_lock(&h->coherency_lock);
	bool fresh = undefined(h);
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	/* The main copy, valid there alone: the reduction writes it. */
	if (_astro_rt.nmemory_nodes > 1 ? _astro_coherency_fetch(h, STARPU_MAIN_RAM, STARPU_RW, false) != 0
					: (!h->replicates[STARPU_MAIN_RAM].allocated && !_astro_coherency_materialize(h, STARPU_MAIN_RAM)))
		return combine_failed(h, -ENOMEM, "its main-memory copy cannot be made");
	void *main = h->iface[STARPU_MAIN_RAM];
	if (fresh && run_cpu(h, h->init_cl, &main, "init") != 0)
		return combine_failed(h, -ENOSYS, "its init codelet cannot run");
	starpu_pthread_mutex_lock(&h->coherency_lock);
	h->valid[STARPU_MAIN_RAM] = true;
	starpu_pthread_mutex_unlock(&h->coherency_lock);
	/* Each contribution folded leaves the set at once: a failure part-way neither loses nor repeats one. */
	for (unsigned w = 0; w < STARPU_NMAXWORKERS; w++) {
		if (!set->iface[w])
			continue;
		int ret = fold(h, main, set->iface[w], set->node[w]);
		if (ret != 0)
			return combine_failed(h, ret, "a contribution cannot be folded into the main copy");
		drop_one(h, set, w);
	}
	_astro_redux_drop(h);
	starpu_pthread_mutex_unlock(&h->redux_lock);
	return 0;
}

void _astro_redux_invalidated(starpu_data_handle_t h)
{
	/* Any content is right for undefined data: the neutral one, where the next reduction starts
	 * (also with a single memory node, where later plain writes do not track validity). */
	if (!h->init_cl)
		return;
	if (!h->replicates[STARPU_MAIN_RAM].allocated && !(h->unallocated && _astro_coherency_materialize(h, STARPU_MAIN_RAM)))
		return;
	void *iface = h->iface[STARPU_MAIN_RAM];
	if (run_cpu(h, h->init_cl, &iface, "init") != 0)
		return;
	starpu_pthread_mutex_lock(&h->coherency_lock);
	h->valid[STARPU_MAIN_RAM] = true;
	starpu_pthread_mutex_unlock(&h->coherency_lock);
}

void starpu_data_set_reduction_methods_with_args(starpu_data_handle_t handle, struct starpu_codelet *redux_cl, void *redux_cl_arg,
						  struct starpu_codelet *init_cl, void *init_cl_arg)
{
	/* The checks, and the codelets, are starpu_data_set_reduction_methods()'s (data.c). */
	starpu_data_set_reduction_methods(handle, redux_cl, init_cl);
	if (!handle || handle->redux_cl != redux_cl || handle->init_cl != init_cl)
		return;
	handle->redux_arg = redux_cl_arg;
	handle->init_arg = init_cl_arg;
}

void starpu_data_set_reduction_methods(starpu_data_handle_t handle, struct starpu_codelet *redux_cl, struct starpu_codelet *init_cl)
{
	if (!handle)
		return;
	/* The runtime runs both on the CPU, in main memory (kernel/reduction.c). */
	struct starpu_codelet *cpuless = redux_cl && !redux_cl->cpu_funcs[0] ? redux_cl : init_cl && !init_cl->cpu_funcs[0] ? init_cl : NULL;
	if (cpuless) {
		_astro_error("starpu_data_set_reduction_methods: the %s codelet has no CPU function; the methods are not set "
			     "(STARPU_REDUX accesses stay read-write accesses): give it cpu_funcs[0]",
			     cpuless == redux_cl ? "reduction" : "init");
		return;
	}
	handle->redux_cl = redux_cl;
	handle->init_cl = init_cl;
	/* Codelets set without arguments get none, whatever the _with_args form gave before (reduction.c). */
	handle->redux_arg = NULL;
	handle->init_arg = NULL;
	/* Data registered on no node starts from the init codelet's value (also without a reduction codelet):
	 * a reader before any contribution reads it. */
	if (handle->unallocated)
		_astro_redux_invalidated(handle);
}

void astro_data_get_reduction_methods(starpu_data_handle_t handle, struct starpu_codelet **redux_cl, struct starpu_codelet **init_cl)
{
	if (redux_cl)
		*redux_cl = handle ? handle->redux_cl : NULL;
	if (init_cl)
		*init_cl = handle ? handle->init_cl : NULL;
}
