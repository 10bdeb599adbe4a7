/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The built-in data interfaces: variable, vector, matrix and void. Each one
 * is a struct starpu_data_interface_ops; they allocate with
 * starpu_malloc_on_node() and copy with starpu_interface_copy(), so they
 * work on any memory node a driver brings.
 */
#include "data/interfaces/interfaces.h"

static void *iface_of(starpu_data_handle_t handle)
{
	return starpu_data_get_interface_on_node(handle, STARPU_MAIN_RAM);
}

static bool check_handle(starpu_data_handle_t handle, enum starpu_data_interface_id id, const char *fn)
{
	if (!handle) {
		_astro_error("%s: NULL handle", fn);
		return false;
	}
	if (handle->ops->interfaceid != id) {
		_astro_error("%s: the handle is a %s, not the interface this function reads", fn,
			     handle->ops->name ? handle->ops->name : "different interface");
		return false;
	}
	return true;
}

/* Allocates bytes on node. dev_handle is what the node's driver knows the
 * buffer by; ptr the address a CPU may use, 0 where it has none (OpenCL's
 * cl_mem), as in StarPU. */
/* ---------------------------------------------------------------- variable */

static starpu_ssize_t variable_allocate(void *data_interface, unsigned node)
{
	struct starpu_variable_interface *v = data_interface;
	v->offset = 0;
	return _astro_interface_alloc(node, v->elemsize, &v->ptr, &v->dev_handle);
}

static void variable_free(void *data_interface, unsigned node)
{
	struct starpu_variable_interface *v = data_interface;
	_astro_interface_free(node, &v->ptr, &v->dev_handle, v->elemsize);
}

static int variable_copy(void *src, unsigned src_node, void *dst, unsigned dst_node, void *async)
{
	struct starpu_variable_interface *s = src, *d = dst;
	return starpu_interface_copy(s->dev_handle, s->offset, src_node, d->dev_handle, d->offset, dst_node, s->elemsize, async);
}

static void *variable_to_pointer(void *data_interface, unsigned node)
{
	(void)node;
	return (void *)((struct starpu_variable_interface *)data_interface)->ptr;
}

static size_t variable_size(starpu_data_handle_t handle)
{
	return ((struct starpu_variable_interface *)iface_of(handle))->elemsize;
}

static uint32_t variable_footprint(starpu_data_handle_t handle)
{
	return starpu_hash_crc32c_be((uint32_t)variable_size(handle), 0);
}

static int variable_compare(void *a, void *b)
{
	return ((struct starpu_variable_interface *)a)->elemsize == ((struct starpu_variable_interface *)b)->elemsize;
}

static void variable_display(starpu_data_handle_t handle, FILE *f)
{
	fprintf(f, "%zu\t", variable_size(handle));
}

static starpu_ssize_t variable_describe(void *data_interface, char *buf, size_t size)
{
	return snprintf(buf, size, "v%zu", ((struct starpu_variable_interface *)data_interface)->elemsize);
}

static void variable_layout(void *data_interface, struct _astro_dense *d)
{
	struct starpu_variable_interface *v = data_interface;
	*d = (struct _astro_dense){ .ndim = 0, .elemsize = v->elemsize, .base = (char *)v->ptr };
}
_ASTRO_DENSE_PACK_METHODS(variable, variable_layout)

static const struct starpu_data_copy_methods variable_copy_methods = { .any_to_any = variable_copy };

struct starpu_data_interface_ops starpu_interface_variable_ops = {
	.allocate_data_on_node = variable_allocate,
	.free_data_on_node = variable_free,
	.copy_methods = &variable_copy_methods,
	.to_pointer = variable_to_pointer,
	.pointer_is_inside = variable_pointer_is_inside,
	.get_size = variable_size,
	.footprint = variable_footprint,
	.compare = variable_compare,
	.display = variable_display,
	.describe = variable_describe,
	.pack_data = variable_pack,
	.peek_data = variable_peek,
	.unpack_data = variable_unpack,
	.interfaceid = STARPU_VARIABLE_INTERFACE_ID,
	.interface_size = sizeof(struct starpu_variable_interface),
	.name = "STARPU_VARIABLE_INTERFACE",
};

void starpu_variable_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, size_t size)
{
	struct starpu_variable_interface v = {
		.id = STARPU_VARIABLE_INTERFACE_ID, .ptr = ptr, .dev_handle = ptr, .offset = 0, .elemsize = size,
	};
	if (home_node >= 0 && !ptr) {
		_astro_error("starpu_variable_data_register: NULL pointer on node %d: give the data's address, or home node -1 to let the runtime allocate it", home_node);
		*handle = NULL;
		return;
	}
	starpu_data_register(handle, home_node, &v, &starpu_interface_variable_ops);
}

void starpu_variable_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset)
{
	if (!check_handle(handle, STARPU_VARIABLE_INTERFACE_ID, __func__) || !_astro_data_ptr_register(handle, node, __func__))
		return;
	struct starpu_variable_interface *v = starpu_data_get_interface_on_node(handle, node);
	v->ptr = ptr;
	v->dev_handle = dev_handle;
	v->offset = offset;
}

size_t starpu_variable_get_elemsize(starpu_data_handle_t handle)
{
	return check_handle(handle, STARPU_VARIABLE_INTERFACE_ID, __func__) ? variable_size(handle) : 0;
}

uintptr_t starpu_variable_get_local_ptr(starpu_data_handle_t handle)
{
	if (!check_handle(handle, STARPU_VARIABLE_INTERFACE_ID, __func__))
		return 0;
	return ((struct starpu_variable_interface *)starpu_data_get_interface_on_node(handle, starpu_worker_get_local_memory_node()))->ptr;
}

/* ------------------------------------------------------------------ vector */

static starpu_ssize_t vector_allocate(void *data_interface, unsigned node)
{
	struct starpu_vector_interface *v = data_interface;
	size_t bytes = v->allocsize ? v->allocsize : (size_t)v->nx * v->elemsize;
	v->offset = 0;
	v->allocsize = bytes;
	return _astro_interface_alloc(node, bytes, &v->ptr, &v->dev_handle);
}

static void vector_free(void *data_interface, unsigned node)
{
	struct starpu_vector_interface *v = data_interface;
	_astro_interface_free(node, &v->ptr, &v->dev_handle, v->allocsize);
}

static int vector_copy(void *src, unsigned src_node, void *dst, unsigned dst_node, void *async)
{
	struct starpu_vector_interface *s = src, *d = dst;
	return starpu_interface_copy(s->dev_handle, s->offset, src_node, d->dev_handle, d->offset, dst_node,
				     (size_t)s->nx * s->elemsize, async);
}

static void *vector_to_pointer(void *data_interface, unsigned node)
{
	(void)node;
	return (void *)((struct starpu_vector_interface *)data_interface)->ptr;
}

static size_t vector_size(starpu_data_handle_t handle)
{
	struct starpu_vector_interface *v = iface_of(handle);
	return (size_t)v->nx * v->elemsize;
}

static size_t vector_alloc_size(starpu_data_handle_t handle)
{
	return ((struct starpu_vector_interface *)iface_of(handle))->allocsize;
}

static uint32_t vector_footprint(starpu_data_handle_t handle)
{
	return starpu_hash_crc32c_be(((struct starpu_vector_interface *)iface_of(handle))->nx, 0);
}

static int vector_compare(void *a, void *b)
{
	struct starpu_vector_interface *x = a, *y = b;
	return x->nx == y->nx && x->elemsize == y->elemsize;
}

static void vector_display(starpu_data_handle_t handle, FILE *f)
{
	fprintf(f, "%u\t", ((struct starpu_vector_interface *)iface_of(handle))->nx);
}

static starpu_ssize_t vector_describe(void *data_interface, char *buf, size_t size)
{
	struct starpu_vector_interface *v = data_interface;
	return snprintf(buf, size, "V%ux%zu", v->nx, v->elemsize);
}

static void vector_layout(void *data_interface, struct _astro_dense *d)
{
	struct starpu_vector_interface *v = data_interface;
	*d = (struct _astro_dense){ .ndim = 1, .nn = { v->nx }, .ld = { 1 }, .elemsize = v->elemsize, .base = (char *)v->ptr };
}
_ASTRO_DENSE_PACK_METHODS(vector, vector_layout)

static const struct starpu_data_copy_methods vector_copy_methods = { .any_to_any = vector_copy };

struct starpu_data_interface_ops starpu_interface_vector_ops = {
	.allocate_data_on_node = vector_allocate,
	.free_data_on_node = vector_free,
	.copy_methods = &vector_copy_methods,
	.to_pointer = vector_to_pointer,
	.pointer_is_inside = vector_pointer_is_inside,
	.get_size = vector_size,
	.get_alloc_size = vector_alloc_size,
	.footprint = vector_footprint,
	.compare = vector_compare,
	.display = vector_display,
	.describe = vector_describe,
	.pack_data = vector_pack,
	.peek_data = vector_peek,
	.unpack_data = vector_unpack,
	.interfaceid = STARPU_VECTOR_INTERFACE_ID,
	.interface_size = sizeof(struct starpu_vector_interface),
	.name = "STARPU_VECTOR_INTERFACE",
};

void starpu_vector_data_register_allocsize(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t nx, size_t elemsize, size_t allocsize)
{
	struct starpu_vector_interface v = {
		.id = STARPU_VECTOR_INTERFACE_ID, .ptr = ptr, .dev_handle = ptr, .offset = 0,
		.nx = nx, .elemsize = elemsize, .slice_base = 0, .allocsize = allocsize,
	};
	if (home_node >= 0 && !ptr && nx) {
		_astro_error("starpu_vector_data_register: NULL pointer on node %d: give the data's address, or home node -1 to let the runtime allocate it", home_node);
		*handle = NULL;
		return;
	}
	starpu_data_register(handle, home_node, &v, &starpu_interface_vector_ops);
}

void starpu_vector_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t nx, size_t elemsize)
{
	starpu_vector_data_register_allocsize(handle, home_node, ptr, nx, elemsize, (size_t)nx * elemsize);
}

void starpu_vector_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset)
{
	if (!check_handle(handle, STARPU_VECTOR_INTERFACE_ID, __func__) || !_astro_data_ptr_register(handle, node, __func__))
		return;
	struct starpu_vector_interface *v = starpu_data_get_interface_on_node(handle, node);
	v->ptr = ptr;
	v->dev_handle = dev_handle;
	v->offset = offset;
}

uint32_t starpu_vector_get_nx(starpu_data_handle_t handle)
{
	return check_handle(handle, STARPU_VECTOR_INTERFACE_ID, __func__) ? ((struct starpu_vector_interface *)iface_of(handle))->nx : 0;
}

size_t starpu_vector_get_elemsize(starpu_data_handle_t handle)
{
	return check_handle(handle, STARPU_VECTOR_INTERFACE_ID, __func__) ? ((struct starpu_vector_interface *)iface_of(handle))->elemsize : 0;
}

size_t starpu_vector_get_allocsize(starpu_data_handle_t handle)
{
	return check_handle(handle, STARPU_VECTOR_INTERFACE_ID, __func__) ? vector_alloc_size(handle) : 0;
}

uintptr_t starpu_vector_get_local_ptr(starpu_data_handle_t handle)
{
	if (!check_handle(handle, STARPU_VECTOR_INTERFACE_ID, __func__))
		return 0;
	return ((struct starpu_vector_interface *)starpu_data_get_interface_on_node(handle, starpu_worker_get_local_memory_node()))->ptr;
}

/* ------------------------------------------------------------------ matrix */

static starpu_ssize_t matrix_allocate(void *data_interface, unsigned node)
{
	struct starpu_matrix_interface *m = data_interface;
	size_t bytes = m->allocsize ? m->allocsize : (size_t)m->nx * m->ny * m->elemsize;
	m->offset = 0;
	m->ld = m->nx;
	m->allocsize = bytes;
	return _astro_interface_alloc(node, bytes, &m->ptr, &m->dev_handle);
}

static void matrix_free(void *data_interface, unsigned node)
{
	struct starpu_matrix_interface *m = data_interface;
	_astro_interface_free(node, &m->ptr, &m->dev_handle, m->allocsize);
}

static int matrix_copy(void *src, unsigned src_node, void *dst, unsigned dst_node, void *async)
{
	struct starpu_matrix_interface *s = src, *d = dst;
	/* Rows of nx elements, ld apart on each side: one copy when both are packed. */
	return starpu_interface_copy2d(s->dev_handle, s->offset, src_node, d->dev_handle, d->offset, dst_node,
				       (size_t)s->nx * s->elemsize, s->ny, (size_t)s->ld * s->elemsize, (size_t)d->ld * d->elemsize, async);
}

static void *matrix_to_pointer(void *data_interface, unsigned node)
{
	(void)node;
	return (void *)((struct starpu_matrix_interface *)data_interface)->ptr;
}

static size_t matrix_size(starpu_data_handle_t handle)
{
	struct starpu_matrix_interface *m = iface_of(handle);
	return (size_t)m->nx * m->ny * m->elemsize;
}

static size_t matrix_alloc_size(starpu_data_handle_t handle)
{
	return ((struct starpu_matrix_interface *)iface_of(handle))->allocsize;
}

static uint32_t matrix_footprint(starpu_data_handle_t handle)
{
	struct starpu_matrix_interface *m = iface_of(handle);
	return starpu_hash_crc32c_be(m->nx, m->ny);
}

static int matrix_compare(void *a, void *b)
{
	struct starpu_matrix_interface *x = a, *y = b;
	return x->nx == y->nx && x->ny == y->ny && x->elemsize == y->elemsize;
}

static void matrix_display(starpu_data_handle_t handle, FILE *f)
{
	struct starpu_matrix_interface *m = iface_of(handle);
	fprintf(f, "%u\t%u\t", m->nx, m->ny);
}

static starpu_ssize_t matrix_describe(void *data_interface, char *buf, size_t size)
{
	struct starpu_matrix_interface *m = data_interface;
	return snprintf(buf, size, "M%ux%ux%zu", m->nx, m->ny, m->elemsize);
}

static void matrix_layout(void *data_interface, struct _astro_dense *d)
{
	struct starpu_matrix_interface *m = data_interface;
	*d = (struct _astro_dense){ .ndim = 2, .nn = { m->nx, m->ny }, .ld = { 1, m->ld }, .elemsize = m->elemsize, .base = (char *)m->ptr };
}
_ASTRO_DENSE_PACK_METHODS(matrix, matrix_layout)

static const struct starpu_data_copy_methods matrix_copy_methods = { .any_to_any = matrix_copy };

struct starpu_data_interface_ops starpu_interface_matrix_ops = {
	.allocate_data_on_node = matrix_allocate,
	.free_data_on_node = matrix_free,
	.copy_methods = &matrix_copy_methods,
	.to_pointer = matrix_to_pointer,
	.pointer_is_inside = matrix_pointer_is_inside,
	.get_size = matrix_size,
	.get_alloc_size = matrix_alloc_size,
	.footprint = matrix_footprint,
	.compare = matrix_compare,
	.display = matrix_display,
	.describe = matrix_describe,
	.pack_data = matrix_pack,
	.peek_data = matrix_peek,
	.unpack_data = matrix_unpack,
	.interfaceid = STARPU_MATRIX_INTERFACE_ID,
	.interface_size = sizeof(struct starpu_matrix_interface),
	.name = "STARPU_MATRIX_INTERFACE",
};

void starpu_matrix_data_register_allocsize(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ld, uint32_t nx, uint32_t ny, size_t elemsize, size_t allocsize)
{
	if (ld < nx && ny > 1) {
		_astro_error("starpu_matrix_data_register: leading dimension %u is smaller than nx %u: ld counts elements between columns, ld >= nx", ld, nx);
		*handle = NULL;
		return;
	}
	if (home_node >= 0 && !ptr && nx && ny) {
		_astro_error("starpu_matrix_data_register: NULL pointer on node %d: give the data's address, or home node -1 to let the runtime allocate it", home_node);
		*handle = NULL;
		return;
	}
	struct starpu_matrix_interface m = {
		.id = STARPU_MATRIX_INTERFACE_ID, .ptr = ptr, .dev_handle = ptr, .offset = 0,
		.nx = nx, .ny = ny, .ld = ld, .elemsize = elemsize, .allocsize = allocsize,
	};
	starpu_data_register(handle, home_node, &m, &starpu_interface_matrix_ops);
}

void starpu_matrix_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ld, uint32_t nx, uint32_t ny, size_t elemsize)
{
	starpu_matrix_data_register_allocsize(handle, home_node, ptr, ld, nx, ny, elemsize, (size_t)nx * ny * elemsize);
}

void starpu_matrix_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset, uint32_t ld)
{
	if (!check_handle(handle, STARPU_MATRIX_INTERFACE_ID, __func__) || !_astro_data_ptr_register(handle, node, __func__))
		return;
	struct starpu_matrix_interface *m = starpu_data_get_interface_on_node(handle, node);
	m->ptr = ptr;
	m->dev_handle = dev_handle;
	m->offset = offset;
	m->ld = ld;
}

#define MATRIX_GETTER(type, field) \
	type starpu_matrix_get_##field(starpu_data_handle_t handle) \
	{ \
		return check_handle(handle, STARPU_MATRIX_INTERFACE_ID, __func__) ? \
			((struct starpu_matrix_interface *)iface_of(handle))->field : 0; \
	}
MATRIX_GETTER(uint32_t, nx)
MATRIX_GETTER(uint32_t, ny)
MATRIX_GETTER(size_t, elemsize)
MATRIX_GETTER(size_t, allocsize)

uint32_t starpu_matrix_get_local_ld(starpu_data_handle_t handle)
{
	if (!check_handle(handle, STARPU_MATRIX_INTERFACE_ID, __func__))
		return 0;
	return ((struct starpu_matrix_interface *)starpu_data_get_interface_on_node(handle, starpu_worker_get_local_memory_node()))->ld;
}

uintptr_t starpu_matrix_get_local_ptr(starpu_data_handle_t handle)
{
	if (!check_handle(handle, STARPU_MATRIX_INTERFACE_ID, __func__))
		return 0;
	return ((struct starpu_matrix_interface *)starpu_data_get_interface_on_node(handle, starpu_worker_get_local_memory_node()))->ptr;
}

/* -------------------------------------------------------------------- void */

struct void_interface
{
	enum starpu_data_interface_id id;
};

static starpu_ssize_t void_allocate(void *data_interface, unsigned node)
{
	(void)data_interface;
	(void)node;
	return 0;
}

static void void_free(void *data_interface, unsigned node)
{
	(void)data_interface;
	(void)node;
}

static size_t void_size(starpu_data_handle_t handle)
{
	(void)handle;
	return 0;
}

/* Nothing to carry: StarPU-MPI sends a void handle as an empty message (a synchronisation). */
static int void_pack(starpu_data_handle_t handle, unsigned node, void **ptr, starpu_ssize_t *count)
{
	(void)handle;
	(void)node;
	if (ptr)
		*ptr = NULL;
	*count = 0;
	return 0;
}

static int void_peek(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count)
{
	(void)handle;
	(void)node;
	(void)ptr;
	(void)count;
	return 0;
}

/* As every unpack method, it frees the buffer it is given (a receive's, say). */
static int void_unpack(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count)
{
	(void)handle;
	if (ptr)
		starpu_free_on_node_flags(node, (uintptr_t)ptr, count ? count : 1, 0);
	return 0;
}

struct starpu_data_interface_ops starpu_interface_void_ops = {
	.allocate_data_on_node = void_allocate,
	.free_data_on_node = void_free,
	.get_size = void_size,
	.pack_data = void_pack,
	.peek_data = void_peek,
	.unpack_data = void_unpack,
	.interfaceid = STARPU_VOID_INTERFACE_ID,
	.interface_size = sizeof(struct void_interface),
	.name = "STARPU_VOID_INTERFACE",
};

void starpu_void_data_register(starpu_data_handle_t *handle)
{
	struct void_interface v = { .id = STARPU_VOID_INTERFACE_ID };
	starpu_data_register(handle, STARPU_MAIN_RAM, &v, &starpu_interface_void_ops);
}
