/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The multiformat data interface: nx elements stored in a CPU format in
 * main memory, and in a device's own format on that device (an array of
 * structures on CPUs, a structure of arrays on a GPU, say). Between nodes
 * only the CPU format moves; on a device, the format's conversion codelets
 * run on the device's worker: to the device format before a task reads,
 * back to the CPU format after a task writes (so the CPU format a transfer
 * copies out of the device is always current).
 */
#include "data/interfaces/interfaces.h"

/* A node's interface: the public one, and whether the device format there is current. */
struct mf_state
{
	struct starpu_multiformat_interface pub;
	int device_current;
};

static size_t device_elemsize(const struct starpu_multiformat_interface *m, enum starpu_node_kind kind)
{
	switch (kind) {
	case STARPU_OPENCL_RAM: return m->ops->opencl_elemsize;
	case STARPU_CUDA_RAM: return m->ops->cuda_elemsize;
	default: return 0;
	}
}

static void **device_ptr(struct starpu_multiformat_interface *m, enum starpu_node_kind kind)
{
	switch (kind) {
	case STARPU_OPENCL_RAM: return &m->opencl_ptr;
	case STARPU_CUDA_RAM: return &m->cuda_ptr;
	case STARPU_HIP_RAM: return &m->hip_ptr;
	default: return NULL;
	}
}

static starpu_ssize_t mf_allocate(void *data_interface, unsigned node)
{
	struct mf_state *s = data_interface;
	struct starpu_multiformat_interface *m = &s->pub;
	enum starpu_node_kind kind = starpu_node_get_kind(node);
	size_t cpu_bytes = (size_t)m->nx * m->ops->cpu_elemsize, dev_bytes = (size_t)m->nx * device_elemsize(m, kind);
	/* On every node the CPU format (what moves); on a device also its own. */
	uintptr_t cpu = starpu_malloc_on_node(node, cpu_bytes ? cpu_bytes : 1);
	if (!cpu)
		return -ENOMEM;
	void **dev = device_ptr(m, kind);
	if (dev && dev_bytes) {
		uintptr_t d = starpu_malloc_on_node(node, dev_bytes);
		if (!d) {
			starpu_free_on_node(node, cpu, cpu_bytes ? cpu_bytes : 1);
			return -ENOMEM;
		}
		*dev = (void *)d;
	}
	m->cpu_ptr = (void *)cpu;
	s->device_current = 0;
	return (starpu_ssize_t)(cpu_bytes + dev_bytes);
}

static void mf_free(void *data_interface, unsigned node)
{
	struct starpu_multiformat_interface *m = data_interface;
	enum starpu_node_kind kind = starpu_node_get_kind(node);
	size_t cpu_bytes = (size_t)m->nx * m->ops->cpu_elemsize, dev_bytes = (size_t)m->nx * device_elemsize(m, kind);
	starpu_free_on_node(node, (uintptr_t)m->cpu_ptr, cpu_bytes ? cpu_bytes : 1);
	m->cpu_ptr = NULL;
	void **dev = device_ptr(m, kind);
	if (dev && *dev && dev_bytes)
		starpu_free_on_node(node, (uintptr_t)*dev, dev_bytes);
	if (dev)
		*dev = NULL;
}

static int mf_copy(void *src, unsigned src_node, void *dst, unsigned dst_node, void *async)
{
	struct mf_state *s = src, *d = dst;
	/* The device format on dst no longer matches the CPU format arriving there. */
	d->device_current = 0;
	return starpu_interface_copy((uintptr_t)s->pub.cpu_ptr, 0, src_node, (uintptr_t)d->pub.cpu_ptr, 0, dst_node,
				     (size_t)s->pub.nx * s->pub.ops->cpu_elemsize, async);
}

static void *mf_to_pointer(void *data_interface, unsigned node)
{
	(void)node;
	return ((struct starpu_multiformat_interface *)data_interface)->cpu_ptr;
}

static size_t mf_size(starpu_data_handle_t handle)
{
	struct starpu_multiformat_interface *m = starpu_data_get_interface_on_node(handle, STARPU_MAIN_RAM);
	return (size_t)m->nx * m->ops->cpu_elemsize;
}

static uint32_t mf_footprint(starpu_data_handle_t handle)
{
	return starpu_hash_crc32c_be(((struct starpu_multiformat_interface *)starpu_data_get_interface_on_node(handle, STARPU_MAIN_RAM))->nx, 0);
}

static int mf_compare(void *a, void *b)
{
	struct starpu_multiformat_interface *x = a, *y = b;
	return x->nx == y->nx && x->ops == y->ops;
}

static void mf_display(starpu_data_handle_t handle, FILE *f)
{
	fprintf(f, "%u\t", ((struct starpu_multiformat_interface *)starpu_data_get_interface_on_node(handle, STARPU_MAIN_RAM))->nx);
}

static starpu_ssize_t mf_describe(void *data_interface, char *buf, size_t size)
{
	struct starpu_multiformat_interface *m = data_interface;
	return snprintf(buf, size, "F%ux%zu", m->nx, m->ops->cpu_elemsize);
}

static struct starpu_multiformat_data_interface_ops *mf_get_ops(void *data_interface)
{
	return ((struct starpu_multiformat_interface *)data_interface)->ops;
}

static void mf_layout(void *data_interface, struct _astro_dense *d)
{
	struct starpu_multiformat_interface *m = data_interface;
	*d = (struct _astro_dense){ .ndim = 1, .nn = { m->nx }, .ld = { 1 }, .elemsize = m->ops->cpu_elemsize, .base = m->cpu_ptr };
}
_ASTRO_DENSE_PACK_METHODS(mf, mf_layout)

static const struct starpu_data_copy_methods mf_copy_methods = { .any_to_any = mf_copy };

/* Multiformat handles registered (data.c counts them): while there are some, submissions check their conversions. */


struct starpu_data_interface_ops starpu_interface_multiformat_ops = {
	.allocate_data_on_node = mf_allocate,
	.free_data_on_node = mf_free,
	.copy_methods = &mf_copy_methods,
	.to_pointer = mf_to_pointer,
	.pointer_is_inside = mf_pointer_is_inside,
	.get_size = mf_size,
	.footprint = mf_footprint,
	.compare = mf_compare,
	.display = mf_display,
	.describe = mf_describe,
	.pack_data = mf_pack,
	.peek_data = mf_peek,
	.unpack_data = mf_unpack,
	.is_multiformat = 1,
	.get_mf_ops = mf_get_ops,
	.interfaceid = STARPU_MULTIFORMAT_INTERFACE_ID,
	.interface_size = sizeof(struct mf_state),
	.name = "STARPU_MULTIFORMAT_INTERFACE",
};

void starpu_multiformat_data_register(starpu_data_handle_t *handle, int home_node, void *ptr, uint32_t nobjects,
				      struct starpu_multiformat_data_interface_ops *format_ops)
{
	if (!handle) {
		_astro_error("starpu_multiformat_data_register: NULL handle pointer");
		return;
	}
	*handle = NULL;
	if (!format_ops || !format_ops->cpu_elemsize) {
		_astro_error("starpu_multiformat_data_register: %s: give the formats (cpu_elemsize, and each device's elemsize and conversion codelets)",
			     format_ops ? "cpu_elemsize is 0" : "NULL format_ops");
		return;
	}
	if (home_node >= 0 && !ptr && nobjects) {
		_astro_error("starpu_multiformat_data_register: NULL pointer on node %d: give the data's address, or home node -1 to let the runtime allocate it", home_node);
		return;
	}
	struct mf_state s = {
		.pub = { .id = STARPU_MULTIFORMAT_INTERFACE_ID, .cpu_ptr = ptr, .nx = nobjects, .ops = format_ops },
	};
	starpu_data_register(handle, home_node, &s, &starpu_interface_multiformat_ops);
}

/* ------------------------------------------------------------- conversions */

/* The conversion codelet of format ops, for a device of kind, in one direction (NULL: none). */
static struct starpu_codelet *conversion(const struct starpu_multiformat_data_interface_ops *ops, enum starpu_node_kind kind, bool to_device)
{
	switch (kind) {
	case STARPU_OPENCL_RAM: return to_device ? ops->cpu_to_opencl_cl : ops->opencl_to_cpu_cl;
	case STARPU_CUDA_RAM: return to_device ? ops->cpu_to_cuda_cl : ops->cuda_to_cpu_cl;
	default: return NULL;
	}
}

/* The device implementation of a conversion codelet (NULL: none). */
static starpu_opencl_func_t conversion_func(const struct starpu_codelet *cl, enum starpu_node_kind kind)
{
	if (!cl)
		return NULL;
	return kind == STARPU_OPENCL_RAM ? cl->opencl_funcs[0] : kind == STARPU_CUDA_RAM ? cl->cuda_funcs[0] : NULL;
}

static const char *conversion_name(enum starpu_node_kind kind, bool to_device)
{
	if (kind == STARPU_OPENCL_RAM)
		return to_device ? "cpu_to_opencl_cl" : "opencl_to_cpu_cl";
	return to_device ? "cpu_to_cuda_cl" : "cuda_to_cpu_cl";
}

int _astro_multiformat_check_task(struct starpu_task *task)
{
	unsigned n = _astro_task_nbuffers(task);
	for (unsigned i = 0; i < n; i++) {
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
		if (!h->ops->is_multiformat)
			continue;
		const struct starpu_multiformat_interface *m = h->iface[STARPU_MAIN_RAM];
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		if (mode & STARPU_SCRATCH)
			continue;
		/* What an access needs on a device: the device format before it reads, the CPU format after it writes. */
		bool needs[2] = { (mode & STARPU_R) || !(mode & STARPU_W), (mode & (STARPU_W | STARPU_REDUX)) != 0 };
		for (unsigned w = 0; w < _astro_rt.nworkers; w++) {
			if (task->execute_on_a_specific_worker && w != task->workerid)
				continue;
			enum starpu_node_kind kind = starpu_node_get_kind(_astro_worker((int)w)->memory_node);
			if (kind == STARPU_CPU_RAM || _astro_worker_impl_for((int)w, task) < 0)
				continue;
			for (int dir = 0; dir < 2; dir++) {
				bool to_device = dir == 0;
				if (!needs[dir] || conversion_func(conversion(m->ops, kind, to_device), kind))
					continue;
				char worker[64];
				starpu_worker_get_name((int)w, worker, sizeof(worker));
				_astro_error("task '%s' may run on %s, but the format of its multiformat buffer %u has no %s codelet with an "
					     "implementation for that device: set it in the starpu_multiformat_data_interface_ops, or keep the "
					     "task off the device (its codelet's where)",
					     starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)", worker, i,
					     conversion_name(kind, to_device));
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* Runs the device implementation of cl on the interface (on the device's worker): 0, or -ENOSYS said. */
static int convert(starpu_data_handle_t handle, struct mf_state *s, enum starpu_node_kind kind, bool to_device)
{
	starpu_opencl_func_t func = conversion_func(conversion(s->pub.ops, kind, to_device), kind);
	if (!func) {
		/* Submission refuses a task that would need it: the format changed since. */
		_astro_error("multiformat data%s%s on a %s device: its format has no %s codelet with an implementation for that device, "
			     "so %s: set it in the starpu_multiformat_data_interface_ops", handle->name ? " " : "",
			     handle->name ? handle->name : "", kind == STARPU_OPENCL_RAM ? "OpenCL" : "CUDA", conversion_name(kind, to_device),
			     to_device ? "the task that needs it fails (STARPU_TASK_STOPPED)"
				       : "what the task wrote there stays in the device format and main memory keeps the former value");
		return -ENOSYS;
	}
	void *buffers[1] = { &s->pub };
	func(buffers, NULL);
	return 0;
}

int _astro_multiformat_fetched(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode)
{
	enum starpu_node_kind kind = starpu_node_get_kind(node);
	struct mf_state *s = starpu_data_get_interface_on_node(handle, node);
	if (kind == STARPU_CPU_RAM)
		return 0;
	int ret = 0;
	/* Readers on one device may fetch together: the first converts, the others find the device format current. */
	starpu_pthread_mutex_lock(&handle->coherency_lock);
	if (!s->device_current) {
		/* A write-only access overwrites the device format anyway. */
		if ((mode & STARPU_R) || !(mode & STARPU_W))
			ret = convert(handle, s, kind, true);
		if (ret == 0)
			s->device_current = 1;
	}
	starpu_pthread_mutex_unlock(&handle->coherency_lock);
	return ret;
}

void _astro_multiformat_executed(starpu_data_handle_t handle, unsigned node, enum starpu_data_access_mode mode)
{
	enum starpu_node_kind kind = starpu_node_get_kind(node);
	struct mf_state *s = starpu_data_get_interface_on_node(handle, node);
	if (kind == STARPU_CPU_RAM || !(mode & (STARPU_W | STARPU_REDUX)))
		return;
	/* The CPU format there is what a transfer takes away (when it cannot be made: said, the former one). */
	starpu_pthread_mutex_lock(&handle->coherency_lock);
	convert(handle, s, kind, false);
	s->device_current = 1;
	starpu_pthread_mutex_unlock(&handle->coherency_lock);
}
