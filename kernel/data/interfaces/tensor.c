/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tensor (4D dense array) data interface: nx x ny x nz x nt elements,
 * x consecutive, ldy elements between rows, ldz between planes, ldt between
 * cubes; and its filters (cuts along each axis, with or without a shadow
 * border, and picks of blocks or variables).
 */
#include "data/interfaces/interfaces.h"

static struct starpu_tensor_interface *tensor_of(starpu_data_handle_t handle, unsigned node)
{
	return starpu_data_get_interface_on_node(handle, node);
}

static bool is_tensor(starpu_data_handle_t handle, const char *fn)
{
	if (!handle) {
		_astro_error("%s: NULL handle", fn);
		return false;
	}
	if (handle->ops->interfaceid != STARPU_TENSOR_INTERFACE_ID) {
		_astro_error("%s: the handle is a %s, not a tensor", fn, handle->ops->name ? handle->ops->name : "different interface");
		return false;
	}
	return true;
}

static size_t tensor_bytes(const struct starpu_tensor_interface *t)
{
	return (size_t)t->nx * t->ny * t->nz * t->nt * t->elemsize;
}

static starpu_ssize_t tensor_allocate(void *data_interface, unsigned node)
{
	struct starpu_tensor_interface *t = data_interface;
	t->offset = 0;
	/* A fresh buffer is packed. */
	t->ldy = t->nx;
	t->ldz = t->nx * t->ny;
	t->ldt = t->nx * t->ny * t->nz;
	return _astro_interface_alloc(node, tensor_bytes(t), &t->ptr, &t->dev_handle);
}

static void tensor_free(void *data_interface, unsigned node)
{
	struct starpu_tensor_interface *t = data_interface;
	_astro_interface_free(node, &t->ptr, &t->dev_handle, tensor_bytes(t));
}

static int tensor_copy(void *src, unsigned src_node, void *dst, unsigned dst_node, void *async)
{
	struct starpu_tensor_interface *s = src, *d = dst;
	uint32_t nn[4] = { s->nx, s->ny, s->nz, s->nt };
	uint32_t sld[4] = { 1, s->ldy, s->ldz, s->ldt }, dld[4] = { 1, d->ldy, d->ldz, d->ldt };
	return _astro_interface_copy_dense(4, nn, s->elemsize, s->dev_handle, s->offset, sld, src_node,
					   d->dev_handle, d->offset, dld, dst_node, async);
}

static void *tensor_to_pointer(void *data_interface, unsigned node)
{
	(void)node;
	return (void *)((struct starpu_tensor_interface *)data_interface)->ptr;
}

static size_t tensor_size(starpu_data_handle_t handle)
{
	return tensor_bytes(tensor_of(handle, STARPU_MAIN_RAM));
}

static uint32_t tensor_footprint(starpu_data_handle_t handle)
{
	struct starpu_tensor_interface *t = tensor_of(handle, STARPU_MAIN_RAM);
	uint32_t hash = starpu_hash_crc32c_be(t->nx, 0);
	hash = starpu_hash_crc32c_be(t->ny, hash);
	hash = starpu_hash_crc32c_be(t->nz, hash);
	return starpu_hash_crc32c_be(t->nt, hash);
}

static int tensor_compare(void *a, void *b)
{
	struct starpu_tensor_interface *x = a, *y = b;
	return x->nx == y->nx && x->ny == y->ny && x->nz == y->nz && x->nt == y->nt && x->elemsize == y->elemsize;
}

static void tensor_display(starpu_data_handle_t handle, FILE *f)
{
	struct starpu_tensor_interface *t = tensor_of(handle, STARPU_MAIN_RAM);
	fprintf(f, "%u\t%u\t%u\t%u\t", t->nx, t->ny, t->nz, t->nt);
}

static starpu_ssize_t tensor_describe(void *data_interface, char *buf, size_t size)
{
	struct starpu_tensor_interface *t = data_interface;
	return snprintf(buf, size, "T%ux%ux%ux%ux%zu", t->nx, t->ny, t->nz, t->nt, t->elemsize);
}

static void tensor_layout(void *data_interface, struct _astro_dense *d)
{
	struct starpu_tensor_interface *t = data_interface;
	*d = (struct _astro_dense){ .ndim = 4, .nn = { t->nx, t->ny, t->nz, t->nt }, .ld = { 1, t->ldy, t->ldz, t->ldt },
				    .elemsize = t->elemsize, .base = (char *)t->ptr };
}
_ASTRO_DENSE_PACK_METHODS(tensor, tensor_layout)

static const struct starpu_data_copy_methods tensor_copy_methods = { .any_to_any = tensor_copy };

struct starpu_data_interface_ops starpu_interface_tensor_ops = {
	.allocate_data_on_node = tensor_allocate,
	.free_data_on_node = tensor_free,
	.copy_methods = &tensor_copy_methods,
	.to_pointer = tensor_to_pointer,
	.pointer_is_inside = tensor_pointer_is_inside,
	.get_size = tensor_size,
	.footprint = tensor_footprint,
	.compare = tensor_compare,
	.display = tensor_display,
	.describe = tensor_describe,
	.pack_data = tensor_pack,
	.peek_data = tensor_peek,
	.unpack_data = tensor_unpack,
	.interfaceid = STARPU_TENSOR_INTERFACE_ID,
	.interface_size = sizeof(struct starpu_tensor_interface),
	.name = "STARPU_TENSOR_INTERFACE",
};

void starpu_tensor_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ldy, uint32_t ldz, uint32_t ldt,
				 uint32_t nx, uint32_t ny, uint32_t nz, uint32_t nt, size_t elemsize)
{
	if (!handle) {
		_astro_error("starpu_tensor_data_register: NULL handle pointer");
		return;
	}
	if ((ldy < nx && ny * nz * nt > 1) || (ldz < (uint64_t)ldy * ny && nz * nt > 1) || (ldt < (uint64_t)ldz * nz && nt > 1)) {
		_astro_error("starpu_tensor_data_register: leading dimensions ldy=%u ldz=%u ldt=%u too small for %ux%ux%ux%u: "
			     "need ldy >= nx, ldz >= ldy*ny and ldt >= ldz*nz", ldy, ldz, ldt, nx, ny, nz, nt);
		*handle = NULL;
		return;
	}
	if (home_node >= 0 && !ptr && nx && ny && nz && nt) {
		_astro_error("starpu_tensor_data_register: NULL pointer on node %d: give the data's address, or home node -1 to let the runtime allocate it", home_node);
		*handle = NULL;
		return;
	}
	struct starpu_tensor_interface t = {
		.id = STARPU_TENSOR_INTERFACE_ID, .ptr = ptr, .dev_handle = ptr, .offset = 0,
		.nx = nx, .ny = ny, .nz = nz, .nt = nt, .ldy = ldy, .ldz = ldz, .ldt = ldt, .elemsize = elemsize,
	};
	starpu_data_register(handle, home_node, &t, &starpu_interface_tensor_ops);
}

void starpu_tensor_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset,
				uint32_t ldy, uint32_t ldz, uint32_t ldt)
{
	if (!is_tensor(handle, __func__) || !_astro_data_ptr_register(handle, node, __func__))
		return;
	struct starpu_tensor_interface *t = tensor_of(handle, node);
	t->ptr = ptr;
	t->dev_handle = dev_handle;
	t->offset = offset;
	t->ldy = ldy;
	t->ldz = ldz;
	t->ldt = ldt;
}

#define TENSOR_GETTER(type, name, field, node) \
	type starpu_tensor_get_##name(starpu_data_handle_t handle) \
	{ \
		return is_tensor(handle, __func__) ? tensor_of(handle, node)->field : 0; \
	}
TENSOR_GETTER(uint32_t, nx, nx, STARPU_MAIN_RAM)
TENSOR_GETTER(uint32_t, ny, ny, STARPU_MAIN_RAM)
TENSOR_GETTER(uint32_t, nz, nz, STARPU_MAIN_RAM)
TENSOR_GETTER(uint32_t, nt, nt, STARPU_MAIN_RAM)
TENSOR_GETTER(size_t, elemsize, elemsize, STARPU_MAIN_RAM)
TENSOR_GETTER(uint32_t, local_ldy, ldy, starpu_worker_get_local_memory_node())
TENSOR_GETTER(uint32_t, local_ldz, ldz, starpu_worker_get_local_memory_node())
TENSOR_GETTER(uint32_t, local_ldt, ldt, starpu_worker_get_local_memory_node())
TENSOR_GETTER(uintptr_t, local_ptr, ptr, starpu_worker_get_local_memory_node())

/* ----------------------------------------------------------------- filters */

/* Cuts along axis 0 (x) to 3 (t), with a shadow border on that axis. */
static void tensor_filter(struct starpu_tensor_interface *father, struct starpu_tensor_interface *child, unsigned axis, unsigned shadow,
			  unsigned id, unsigned nparts)
{
	uint32_t dims[4] = { father->nx, father->ny, father->nz, father->nt };
	unsigned strides[4] = { 1, father->ldy, father->ldz, father->ldt };
	unsigned chunk;
	size_t offset;
	STARPU_ASSERT_MSG(father->id == STARPU_TENSOR_INTERFACE_ID, "a tensor filter applied to a handle that is not a tensor");
	STARPU_ASSERT_MSG(dims[axis] >= 2 * shadow, "tensor dimension %u too small for a shadow of %u", dims[axis], shadow);
	STARPU_ASSERT_MSG(nparts <= dims[axis] - 2 * shadow, "cannot cut %u elements into %u parts", dims[axis] - 2 * shadow, nparts);
	starpu_filter_nparts_compute_chunk_size_and_offset(dims[axis] - 2 * shadow, nparts, father->elemsize, id, strides[axis], &chunk, &offset);
	dims[axis] = chunk + 2 * shadow;
	*child = *father;
	child->nx = dims[0];
	child->ny = dims[1];
	child->nz = dims[2];
	child->nt = dims[3];
	_ASTRO_VIEW_MOVE(child, father, offset);
}

#define TENSOR_FILTER(name, axis) \
	void starpu_tensor_filter_##name(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts) \
	{ \
		(void)f; \
		tensor_filter(father_interface, child_interface, axis, 0, id, nparts); \
	} \
	void starpu_tensor_filter_##name##_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts) \
	{ \
		tensor_filter(father_interface, child_interface, axis, _astro_filter_shadow(f), id, nparts); \
	}
TENSOR_FILTER(block, 0)
TENSOR_FILTER(vertical_block, 1)
TENSOR_FILTER(depth_block, 2)
TENSOR_FILTER(time_block, 3)

/* Picks the block at index (filter_arg_ptr's value + id) of axis 1 (y), 2 (z) or 3 (t); the block keeps the other axes in order. */
static void tensor_pick_block(struct starpu_tensor_interface *father, struct starpu_block_interface *child, unsigned axis,
			      struct starpu_data_filter *f, unsigned id)
{
	uint32_t dims[4] = { father->nx, father->ny, father->nz, father->nt };
	uint32_t strides[4] = { 1, father->ldy, father->ldz, father->ldt };
	uint32_t at = (uint32_t)(uintptr_t)f->filter_arg_ptr + id;
	STARPU_ASSERT_MSG(father->id == STARPU_TENSOR_INTERFACE_ID, "a tensor filter applied to a handle that is not a tensor");
	STARPU_ASSERT_MSG(at < dims[axis], "tensor pick: index %u along an axis of %u", at, dims[axis]);
	uint32_t keep[3], keep_ld[3];
	for (unsigned a = 0, k = 0; a < 4; a++)
		if (a != axis) {
			keep[k] = dims[a];
			keep_ld[k++] = strides[a];
		}
	child->id = STARPU_BLOCK_INTERFACE_ID;
	child->nx = keep[0];
	child->ny = keep[1];
	child->nz = keep[2];
	child->ldy = keep_ld[1];
	child->ldz = keep_ld[2];
	child->elemsize = father->elemsize;
	_ASTRO_VIEW_MOVE(child, father, (size_t)at * strides[axis] * father->elemsize);
}

void starpu_tensor_filter_pick_block_t(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	tensor_pick_block(father_interface, child_interface, 3, f, id);
}

void starpu_tensor_filter_pick_block_z(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	tensor_pick_block(father_interface, child_interface, 2, f, id);
}

void starpu_tensor_filter_pick_block_y(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	tensor_pick_block(father_interface, child_interface, 1, f, id);
}

struct starpu_data_interface_ops *starpu_tensor_filter_pick_block_child_ops(struct starpu_data_filter *f, unsigned child)
{
	(void)f;
	(void)child;
	return &starpu_interface_block_ops;
}

/* Picks nparts consecutive elements along t from the position filter_arg_ptr points to (uint32_t[4]: x, y, z, t). */
void starpu_tensor_filter_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	struct starpu_tensor_interface *father = father_interface;
	struct starpu_variable_interface *child = child_interface;
	const uint32_t *pos = f->filter_arg_ptr;
	STARPU_ASSERT_MSG(pos, "starpu_tensor_filter_pick_variable: set filter_arg_ptr to a uint32_t[4] position");
	uint32_t t = pos[3] + id;
	STARPU_ASSERT_MSG(pos[0] < father->nx && pos[1] < father->ny && pos[2] < father->nz && t < father->nt,
			  "starpu_tensor_filter_pick_variable: element (%u,%u,%u,%u) outside the %ux%ux%ux%u tensor",
			  pos[0], pos[1], pos[2], t, father->nx, father->ny, father->nz, father->nt);
	child->id = STARPU_VARIABLE_INTERFACE_ID;
	child->elemsize = father->elemsize;
	size_t at = pos[0] + (size_t)pos[1] * father->ldy + (size_t)pos[2] * father->ldz + (size_t)t * father->ldt;
	_ASTRO_VIEW_MOVE(child, father, at * father->elemsize);
}

struct starpu_data_interface_ops *starpu_tensor_filter_pick_variable_child_ops(struct starpu_data_filter *f, unsigned child)
{
	(void)f;
	(void)child;
	return &starpu_interface_variable_ops;
}
