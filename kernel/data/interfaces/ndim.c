/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The n-dimensional dense array interface: nn[i] elements along dimension
 * i, ldn[i] elements between consecutive indices of dimension i. Each
 * node's interface holds its own nn and ldn arrays (a device's buffer is
 * packed, the application's may not be), allocated at registration and
 * freed at unregistration; and its filters, which cut or pick along one
 * dimension and may hand out the dedicated interface of the children's
 * dimension (tensor, block, matrix, vector, variable).
 */
#include "data/interfaces/interfaces.h"

#define NDIM_MAX _ASTRO_DENSE_MAXDIM

static struct starpu_ndim_interface *ndim_of(starpu_data_handle_t handle, unsigned node)
{
	return starpu_data_get_interface_on_node(handle, node);
}

static bool is_ndim(starpu_data_handle_t handle, const char *fn)
{
	if (!handle) {
		_astro_error("%s: NULL handle", fn);
		return false;
	}
	if (handle->ops->interfaceid != STARPU_NDIM_INTERFACE_ID) {
		_astro_error("%s: the handle is a %s, not an ndim array", fn, handle->ops->name ? handle->ops->name : "different interface");
		return false;
	}
	return true;
}

static size_t count_of(const uint32_t *nn, size_t ndim)
{
	size_t count = 1;
	for (size_t i = 0; i < ndim; i++)
		count *= nn[i];
	return count;
}

static uint32_t *dup_array(const uint32_t *a, size_t n)
{
	uint32_t *copy = malloc((n ? n : 1) * sizeof(*copy));
	if (n)
		memcpy(copy, a, n * sizeof(*copy));
	return copy;
}

/* ----------------------------------------------------------------- methods */

static void ndim_register(starpu_data_handle_t handle, int home_node, void *data_interface)
{
	struct starpu_ndim_interface *given = data_interface;
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		struct starpu_ndim_interface *local = ndim_of(handle, node);
		local->nn = dup_array(given->nn, given->ndim);
		local->ldn = dup_array(given->ldn, given->ndim);
		if ((int)node != home_node) {
			local->ptr = local->dev_handle = 0;
			local->offset = 0;
		}
	}
}

static void ndim_unregister(starpu_data_handle_t handle)
{
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		struct starpu_ndim_interface *local = ndim_of(handle, node);
		free(local->nn);
		free(local->ldn);
		local->nn = local->ldn = NULL;
	}
}

static int ndim_free_meta(void *data_interface)
{
	struct starpu_ndim_interface *n = data_interface;
	free(n->nn);
	free(n->ldn);
	n->nn = n->ldn = NULL;
	return 0;
}

static starpu_ssize_t ndim_allocate(void *data_interface, unsigned node)
{
	struct starpu_ndim_interface *n = data_interface;
	/* A fresh buffer is packed. */
	uint32_t stride = 1;
	for (size_t i = 0; i < n->ndim; i++) {
		n->ldn[i] = stride;
		stride *= n->nn[i];
	}
	n->offset = 0;
	n->allocsize = count_of(n->nn, n->ndim) * n->elemsize;
	return _astro_interface_alloc(node, n->allocsize, &n->ptr, &n->dev_handle);
}

static void ndim_free(void *data_interface, unsigned node)
{
	struct starpu_ndim_interface *n = data_interface;
	_astro_interface_free(node, &n->ptr, &n->dev_handle, n->allocsize);
}

static int ndim_copy(void *src, unsigned src_node, void *dst, unsigned dst_node, void *async)
{
	struct starpu_ndim_interface *s = src, *d = dst;
	return _astro_interface_copy_dense(s->ndim, s->nn, s->elemsize, s->dev_handle, s->offset, s->ldn, src_node,
					   d->dev_handle, d->offset, d->ldn, dst_node, async);
}

static void *ndim_to_pointer(void *data_interface, unsigned node)
{
	(void)node;
	return (void *)((struct starpu_ndim_interface *)data_interface)->ptr;
}

static size_t ndim_size(starpu_data_handle_t handle)
{
	struct starpu_ndim_interface *n = ndim_of(handle, STARPU_MAIN_RAM);
	return count_of(n->nn, n->ndim) * n->elemsize;
}

static size_t ndim_alloc_size(starpu_data_handle_t handle)
{
	return ndim_of(handle, STARPU_MAIN_RAM)->allocsize;
}

static uint32_t ndim_footprint(starpu_data_handle_t handle)
{
	struct starpu_ndim_interface *n = ndim_of(handle, STARPU_MAIN_RAM);
	uint32_t hash = 0;
	for (size_t i = 0; i < n->ndim; i++)
		hash = starpu_hash_crc32c_be(n->nn[i], hash);
	return hash;
}

static int ndim_compare(void *a, void *b)
{
	struct starpu_ndim_interface *x = a, *y = b;
	if (x->ndim != y->ndim || x->elemsize != y->elemsize)
		return 0;
	return x->ndim == 0 || memcmp(x->nn, y->nn, x->ndim * sizeof(*x->nn)) == 0;
}

static void ndim_display(starpu_data_handle_t handle, FILE *f)
{
	struct starpu_ndim_interface *n = ndim_of(handle, STARPU_MAIN_RAM);
	for (size_t i = 0; i < n->ndim; i++)
		fprintf(f, "%u\t", n->nn[i]);
}

static starpu_ssize_t ndim_describe(void *data_interface, char *buf, size_t size)
{
	struct starpu_ndim_interface *n = data_interface;
	size_t len = (size_t)snprintf(buf, size, "N");
	for (size_t i = 0; i < n->ndim; i++)
		len += (size_t)snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%ux", n->nn[i]);
	len += (size_t)snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%zu", n->elemsize);
	return (starpu_ssize_t)len;
}

static void ndim_layout(void *data_interface, struct _astro_dense *d)
{
	struct starpu_ndim_interface *n = data_interface;
	d->ndim = n->ndim;
	memcpy(d->nn, n->nn, n->ndim * sizeof(*n->nn));
	memcpy(d->ld, n->ldn, n->ndim * sizeof(*n->ldn));
	d->elemsize = n->elemsize;
	d->base = (char *)n->ptr;
}
_ASTRO_DENSE_PACK_METHODS(ndim, ndim_layout)

static const struct starpu_data_copy_methods ndim_copy_methods = { .any_to_any = ndim_copy };

struct starpu_data_interface_ops starpu_interface_ndim_ops = {
	.register_data_handle = ndim_register,
	.unregister_data_handle = ndim_unregister,
	.free_meta = ndim_free_meta,
	.allocate_data_on_node = ndim_allocate,
	.free_data_on_node = ndim_free,
	.copy_methods = &ndim_copy_methods,
	.to_pointer = ndim_to_pointer,
	.pointer_is_inside = ndim_pointer_is_inside,
	.get_size = ndim_size,
	.get_alloc_size = ndim_alloc_size,
	.footprint = ndim_footprint,
	.compare = ndim_compare,
	.display = ndim_display,
	.describe = ndim_describe,
	.pack_data = ndim_pack,
	.peek_data = ndim_peek,
	.unpack_data = ndim_unpack,
	/* A cached buffer would carry another handle's nn and ldn arrays. */
	.dontcache = 1,
	.interfaceid = STARPU_NDIM_INTERFACE_ID,
	.interface_size = sizeof(struct starpu_ndim_interface),
	.name = "STARPU_NDIM_INTERFACE",
};

void starpu_ndim_data_register(starpu_data_handle_t *handleptr, int home_node, uintptr_t ptr, uint32_t *ldn, uint32_t *nn, size_t ndim, size_t elemsize)
{
	if (!handleptr) {
		_astro_error("starpu_ndim_data_register: NULL handle pointer");
		return;
	}
	*handleptr = NULL;
	if (ndim > NDIM_MAX) {
		_astro_error("starpu_ndim_data_register: %zu dimensions: at most %d are supported", ndim, NDIM_MAX);
		return;
	}
	if (ndim && (!nn || !ldn)) {
		_astro_error("starpu_ndim_data_register: NULL %s array for %zu dimensions: give nn (sizes) and ldn (strides)",
			     nn ? "ldn" : "nn", ndim);
		return;
	}
	for (size_t i = 1; i < ndim; i++)
		if (ldn[i] < (uint64_t)ldn[i - 1] * nn[i - 1] && count_of(nn + i, ndim - i) > 1) {
			_astro_error("starpu_ndim_data_register: ldn[%zu] = %u is smaller than ldn[%zu] * nn[%zu] = %u * %u: the dimensions would overlap",
				     i, ldn[i], i - 1, i - 1, ldn[i - 1], nn[i - 1]);
			return;
		}
	size_t bytes = (ndim ? count_of(nn, ndim) : 1) * elemsize;
	if (home_node >= 0 && !ptr && bytes) {
		_astro_error("starpu_ndim_data_register: NULL pointer on node %d: give the data's address, or home node -1 to let the runtime allocate it", home_node);
		return;
	}
	struct starpu_ndim_interface n = {
		.id = STARPU_NDIM_INTERFACE_ID, .ptr = ptr, .dev_handle = ptr, .offset = 0, .allocsize = bytes,
		.nn = nn, .ldn = ldn, .ndim = ndim, .elemsize = elemsize,
	};
	starpu_data_register(handleptr, home_node, &n, &starpu_interface_ndim_ops);
}

void starpu_ndim_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset, uint32_t *ldn)
{
	if (!is_ndim(handle, __func__))
		return;
	struct starpu_ndim_interface *n = ndim_of(handle, node);
	if (!n || (n->ndim && !ldn)) {
		_astro_error("starpu_ndim_ptr_register: no node %u or NULL ldn", node);
		return;
	}
	if (!_astro_data_ptr_register(handle, node, __func__))
		return;
	n->ptr = ptr;
	n->dev_handle = dev_handle;
	n->offset = offset;
	memcpy(n->ldn, ldn, n->ndim * sizeof(*ldn));
}

uint32_t *starpu_ndim_get_nn(starpu_data_handle_t handle)
{
	return is_ndim(handle, __func__) ? ndim_of(handle, STARPU_MAIN_RAM)->nn : NULL;
}

uint32_t starpu_ndim_get_ni(starpu_data_handle_t handle, size_t i)
{
	if (!is_ndim(handle, __func__))
		return 0;
	struct starpu_ndim_interface *n = ndim_of(handle, STARPU_MAIN_RAM);
	if (i >= n->ndim) {
		_astro_error("starpu_ndim_get_ni: dimension %zu of an array of %zu dimensions", i, n->ndim);
		return 0;
	}
	return n->nn[i];
}

uint32_t *starpu_ndim_get_local_ldn(starpu_data_handle_t handle)
{
	return is_ndim(handle, __func__) ? ndim_of(handle, starpu_worker_get_local_memory_node())->ldn : NULL;
}

uint32_t starpu_ndim_get_local_ldi(starpu_data_handle_t handle, size_t i)
{
	if (!is_ndim(handle, __func__))
		return 0;
	struct starpu_ndim_interface *n = ndim_of(handle, starpu_worker_get_local_memory_node());
	if (i >= n->ndim) {
		_astro_error("starpu_ndim_get_local_ldi: dimension %zu of an array of %zu dimensions", i, n->ndim);
		return 0;
	}
	return n->ldn[i];
}

uintptr_t starpu_ndim_get_local_ptr(starpu_data_handle_t handle)
{
	return is_ndim(handle, __func__) ? ndim_of(handle, starpu_worker_get_local_memory_node())->ptr : 0;
}

size_t starpu_ndim_get_ndim(starpu_data_handle_t handle)
{
	return is_ndim(handle, __func__) ? ndim_of(handle, STARPU_MAIN_RAM)->ndim : 0;
}

size_t starpu_ndim_get_elemsize(starpu_data_handle_t handle)
{
	return is_ndim(handle, __func__) ? ndim_of(handle, STARPU_MAIN_RAM)->elemsize : 0;
}

/* ----------------------------------------------------------------- filters */

/* A piece of the father, before it becomes the child's interface. */
struct view
{
	size_t ndim;
	uint32_t nn[NDIM_MAX], ldn[NDIM_MAX];
	size_t elemsize;
	uintptr_t ptr, dev_handle;
	size_t offset;
};

static void view_of(const struct starpu_ndim_interface *father, struct view *v)
{
	STARPU_ASSERT_MSG(father->id == STARPU_NDIM_INTERFACE_ID, "an ndim filter applied to a handle that is not an ndim array");
	v->ndim = father->ndim;
	memcpy(v->nn, father->nn, father->ndim * sizeof(*father->nn));
	memcpy(v->ldn, father->ldn, father->ndim * sizeof(*father->ldn));
	v->elemsize = father->elemsize;
	v->ptr = father->ptr;
	v->dev_handle = father->dev_handle;
	v->offset = father->offset;
}

/* Part id of nparts along dim, with a shadow border. */
static void view_cut(struct view *v, unsigned dim, unsigned shadow, unsigned id, unsigned nparts)
{
	STARPU_ASSERT_MSG(dim < v->ndim, "ndim filter: dimension %u (filter_arg) of an array of %zu dimensions", dim, v->ndim);
	STARPU_ASSERT_MSG(v->nn[dim] >= 2 * shadow, "ndim dimension of %u too small for a shadow of %u", v->nn[dim], shadow);
	STARPU_ASSERT_MSG(nparts <= v->nn[dim] - 2 * shadow, "cannot cut %u elements into %u parts", v->nn[dim] - 2 * shadow, nparts);
	unsigned chunk;
	size_t offset;
	starpu_filter_nparts_compute_chunk_size_and_offset(v->nn[dim] - 2 * shadow, nparts, v->elemsize, id, v->ldn[dim], &chunk, &offset);
	v->nn[dim] = chunk + 2 * shadow;
	_ASTRO_VIEW_MOVE(v, v, offset);
}

/* The (n-1)-dimensional slice at index at of dim. */
static void view_pick(struct view *v, unsigned dim, uint32_t at)
{
	STARPU_ASSERT_MSG(dim < v->ndim, "ndim pick: dimension %u (filter_arg) of an array of %zu dimensions", dim, v->ndim);
	STARPU_ASSERT_MSG(at < v->nn[dim], "ndim pick: index %u along a dimension of %u", at, v->nn[dim]);
	size_t bytes = (size_t)at * v->ldn[dim] * v->elemsize;
	_ASTRO_VIEW_MOVE(v, v, bytes);
	memmove(v->nn + dim, v->nn + dim + 1, (v->ndim - dim - 1) * sizeof(*v->nn));
	memmove(v->ldn + dim, v->ldn + dim + 1, (v->ndim - dim - 1) * sizeof(*v->ldn));
	v->ndim--;
}

static void view_to_ndim(const struct view *v, struct starpu_ndim_interface *child)
{
	child->id = STARPU_NDIM_INTERFACE_ID;
	child->ndim = v->ndim;
	child->nn = dup_array(v->nn, v->ndim);
	child->ldn = dup_array(v->ldn, v->ndim);
	child->elemsize = v->elemsize;
	child->allocsize = count_of(v->nn, v->ndim) * v->elemsize;
	_ASTRO_VIEW_MOVE(child, v, 0);
}

/* The dedicated interface of a view of 0 to 4 dimensions. */
static void view_to_dedicated(const struct view *v, void *child_interface, size_t ndim, const char *fn)
{
	STARPU_ASSERT_MSG(v->ndim == ndim, "%s: the pieces have %zu dimensions, this filter makes %zu-dimensional ones", fn, v->ndim, ndim);
	switch (ndim) {
	case 4: {
		struct starpu_tensor_interface *t = child_interface;
		*t = (struct starpu_tensor_interface){ .id = STARPU_TENSOR_INTERFACE_ID, .nx = v->nn[0], .ny = v->nn[1], .nz = v->nn[2], .nt = v->nn[3],
						       .ldy = v->ldn[1], .ldz = v->ldn[2], .ldt = v->ldn[3], .elemsize = v->elemsize };
		_ASTRO_VIEW_MOVE(t, v, 0);
		break;
	}
	case 3: {
		struct starpu_block_interface *b = child_interface;
		*b = (struct starpu_block_interface){ .id = STARPU_BLOCK_INTERFACE_ID, .nx = v->nn[0], .ny = v->nn[1], .nz = v->nn[2],
						      .ldy = v->ldn[1], .ldz = v->ldn[2], .elemsize = v->elemsize };
		_ASTRO_VIEW_MOVE(b, v, 0);
		break;
	}
	case 2: {
		struct starpu_matrix_interface *m = child_interface;
		*m = (struct starpu_matrix_interface){ .id = STARPU_MATRIX_INTERFACE_ID, .nx = v->nn[0], .ny = v->nn[1], .ld = v->ldn[1],
						       .elemsize = v->elemsize, .allocsize = (size_t)v->nn[0] * v->nn[1] * v->elemsize };
		_ASTRO_VIEW_MOVE(m, v, 0);
		break;
	}
	case 1: {
		struct starpu_vector_interface *vec = child_interface;
		*vec = (struct starpu_vector_interface){ .id = STARPU_VECTOR_INTERFACE_ID, .nx = v->nn[0], .elemsize = v->elemsize,
							 .allocsize = (size_t)v->nn[0] * v->elemsize };
		_ASTRO_VIEW_MOVE(vec, v, 0);
		break;
	}
	default: {
		struct starpu_variable_interface *var = child_interface;
		*var = (struct starpu_variable_interface){ .id = STARPU_VARIABLE_INTERFACE_ID, .elemsize = v->elemsize };
		_ASTRO_VIEW_MOVE(var, v, 0);
		break;
	}
	}
}

void starpu_ndim_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	struct view v;
	view_of(father_interface, &v);
	view_cut(&v, f->filter_arg, 0, id, nparts);
	view_to_ndim(&v, child_interface);
}

void starpu_ndim_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	struct view v;
	view_of(father_interface, &v);
	view_cut(&v, f->filter_arg, _astro_filter_shadow(f), id, nparts);
	view_to_ndim(&v, child_interface);
}

void starpu_ndim_filter_pick_ndim(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	struct view v;
	view_of(father_interface, &v);
	view_pick(&v, f->filter_arg, (uint32_t)(uintptr_t)f->filter_arg_ptr + id);
	view_to_ndim(&v, child_interface);
}

/* Cuts along filter_arg into pieces of the dedicated interface of ndim dimensions. */
#define NDIM_FILTER_TO(name, dims) \
	void starpu_ndim_filter_to_##name(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts) \
	{ \
		struct view v; \
		view_of(father_interface, &v); \
		if (v.ndim) \
			view_cut(&v, v.ndim > 1 ? f->filter_arg : 0, 0, id, nparts); \
		view_to_dedicated(&v, child_interface, dims, __func__); \
	}
NDIM_FILTER_TO(tensor, 4)
NDIM_FILTER_TO(block, 3)
NDIM_FILTER_TO(matrix, 2)
NDIM_FILTER_TO(vector, 1)
NDIM_FILTER_TO(variable, 0)

/* Picks along filter_arg from the filter_arg_ptr value, into the dedicated interface of ndim - 1 dimensions. */
#define NDIM_FILTER_PICK(name, dims) \
	void starpu_ndim_filter_##name(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts) \
	{ \
		(void)nparts; \
		struct view v; \
		view_of(father_interface, &v); \
		STARPU_ASSERT_MSG(v.ndim == dims, "%s applies to %d-dimensional arrays, not %zu", __func__, dims, v.ndim); \
		view_pick(&v, dims > 1 ? f->filter_arg : 0, (uint32_t)(uintptr_t)f->filter_arg_ptr + id); \
		view_to_dedicated(&v, child_interface, dims - 1, __func__); \
	}
NDIM_FILTER_PICK(5d_pick_tensor, 5)
NDIM_FILTER_PICK(4d_pick_block, 4)
NDIM_FILTER_PICK(3d_pick_matrix, 3)
NDIM_FILTER_PICK(2d_pick_vector, 2)
NDIM_FILTER_PICK(1d_pick_variable, 1)

void starpu_ndim_filter_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	struct view v;
	view_of(father_interface, &v);
	const uint32_t *pos = f->filter_arg_ptr;
	STARPU_ASSERT_MSG(pos || v.ndim == 0, "starpu_ndim_filter_pick_variable: set filter_arg_ptr to a uint32_t[ndim] position");
	size_t at = 0;
	for (size_t i = 0; i < v.ndim; i++) {
		uint32_t x = pos[i] + (i == v.ndim - 1 ? id : 0);
		STARPU_ASSERT_MSG(x < v.nn[i], "starpu_ndim_filter_pick_variable: index %u along dimension %zu of %u", x, i, v.nn[i]);
		at += (size_t)x * v.ldn[i];
	}
	_ASTRO_VIEW_MOVE(&v, &v, at * v.elemsize);
	v.ndim = 0;
	view_to_dedicated(&v, child_interface, 0, __func__);
}

#define CHILD_OPS(name, ops) \
	struct starpu_data_interface_ops *starpu_ndim_filter_##name##_child_ops(struct starpu_data_filter *f, unsigned child) \
	{ \
		(void)f; \
		(void)child; \
		return &ops; \
	}
CHILD_OPS(pick_tensor, starpu_interface_tensor_ops)
CHILD_OPS(pick_block, starpu_interface_block_ops)
CHILD_OPS(pick_matrix, starpu_interface_matrix_ops)
CHILD_OPS(pick_vector, starpu_interface_vector_ops)
CHILD_OPS(pick_variable, starpu_interface_variable_ops)
CHILD_OPS(to_tensor, starpu_interface_tensor_ops)
CHILD_OPS(to_block, starpu_interface_block_ops)
CHILD_OPS(to_matrix, starpu_interface_matrix_ops)
CHILD_OPS(to_vector, starpu_interface_vector_ops)
CHILD_OPS(to_variable, starpu_interface_variable_ops)
