/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starpu_data_cpy(): copying one handle's content into another handle of the
 * same interface, as a task (W on the destination, R on the source) ordered
 * with the other accesses of both handles. The task runs on a CPU worker,
 * which copies between the two main-memory buffers with the interface's own
 * copy method; the runtime brings both there as for any task. */
#include "access/access.h"

#include <errno.h>

static void copy_cpu(void *buffers[], void *arg)
{
	(void)arg;
	struct starpu_task *task = starpu_task_get_current();
	unsigned node = starpu_worker_get_local_memory_node();
	starpu_data_handle_t dst = STARPU_TASK_GET_HANDLE(task, 0), src = STARPU_TASK_GET_HANDLE(task, 1);
	const struct starpu_data_copy_methods *m = dst->ops->copy_methods;
	if ((!m || (!m->ram_to_ram && !m->any_to_any)) && dst->ops->pack_data && dst->ops->peek_data) {
		/* An interface without copy method (one made to move to disks packed): packed, then unpacked. */
		void *ptr = NULL;
		starpu_ssize_t count = 0;
		if (starpu_data_pack_node(src, node, &ptr, &count) == 0) {
			starpu_data_peek_node(dst, node, ptr, (size_t)count);
			starpu_free_on_node_flags(node, (uintptr_t)ptr, count ? (size_t)count : 1, 0);
		}
		return;
	}
	_astro_interface_transfer(dst, buffers[1], node, buffers[0], node);
}

static struct starpu_codelet copy_cl = {
	.name = "starpu_data_cpy",
	.where = STARPU_CPU,
	.cpu_funcs = {copy_cpu},
	.nbuffers = 2,
	.modes = {STARPU_W, STARPU_R},
};

int starpu_data_cpy_priority(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, int asynchronous,
			     void (*callback_func)(void *), void *callback_arg, int priority)
{
	if (!dst_handle || !src_handle) {
		_astro_error("starpu_data_cpy: NULL %s handle", dst_handle ? "source" : "destination");
		return -EINVAL;
	}
	if (dst_handle == src_handle) {
		_astro_error("starpu_data_cpy: the source and the destination are the same handle: give two handles");
		return -EINVAL;
	}
	if (dst_handle->ops->interfaceid != src_handle->ops->interfaceid) {
		_astro_error("starpu_data_cpy: the source is a %s and the destination a %s: both handles need the same interface",
			     src_handle->ops->name ? src_handle->ops->name : "different interface",
			     dst_handle->ops->name ? dst_handle->ops->name : "different interface");
		return -EINVAL;
	}
	if (starpu_data_get_size(dst_handle) != starpu_data_get_size(src_handle)) {
		_astro_error("starpu_data_cpy: the source holds %zu bytes and the destination %zu: register handles of the same shape",
			     starpu_data_get_size(src_handle), starpu_data_get_size(dst_handle));
		return -EINVAL;
	}
	struct starpu_task *task = starpu_task_create();
	task->cl = &copy_cl;
	task->handles[0] = dst_handle;
	task->handles[1] = src_handle;
	task->priority = priority;
	task->callback_func = callback_func;
	task->callback_arg = callback_arg;
	task->synchronous = !asynchronous;
	int ret = starpu_task_submit(task);
	if (ret) {
		if (ret == -ENODEV)
			_astro_error("starpu_data_cpy: no CPU worker to copy on: start at least one (STARPU_NCPU)");
		starpu_task_destroy(task);
	}
	return ret;
}

int starpu_data_cpy(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, int asynchronous,
		    void (*callback_func)(void *), void *callback_arg)
{
	return starpu_data_cpy_priority(dst_handle, src_handle, asynchronous, callback_func, callback_arg, STARPU_DEFAULT_PRIO);
}

int starpu_data_dup_ro(starpu_data_handle_t *dst_handle, starpu_data_handle_t src_handle, int asynchronous)
{
	if (!dst_handle) {
		_astro_error("starpu_data_dup_ro: NULL dst_handle: give where to put the new handle");
		return -EINVAL;
	}
	*dst_handle = NULL;
	if (!_astro_data_live(src_handle, "starpu_data_dup_ro"))
		return -EINVAL;
	/* A copy of its own (not src_handle itself, which may be written later): freed by its unregistration. */
	starpu_data_handle_t dup;
	starpu_data_register_same(&dup, src_handle);
	if (!dup)
		return -ENOMEM;
	int ret = starpu_data_cpy(dup, src_handle, asynchronous, NULL, NULL);
	if (ret) {
		starpu_data_unregister_no_coherency(dup);
		return ret;
	}
	dup->readonly = true;
	*dst_handle = dup;
	return 0;
}
