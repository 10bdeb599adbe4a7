/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filters: a filter cuts a handle into children handles whose interfaces
 * point into the parent's buffer (the built-in interfaces' filters below).
 * Data lives in main memory only, so a partition moves nothing: what it must
 * get right is the order between the tasks on the parent and the tasks on
 * the children, which is the access room's (access/partition.c waits for
 * them, access/partition_plans.c orders them asynchronously).
 */
#include "data/interfaces/interfaces.h"

/* -------------------------------------------------------------- children */

unsigned _astro_filter_nparts(struct starpu_data_filter *f, starpu_data_handle_t handle)
{
	return f->get_nchildren ? f->get_nchildren(f, handle) : f->nchildren;
}

bool _astro_filter_checks(starpu_data_handle_t handle, struct starpu_data_filter *f, const char *fn)
{
	if (!handle || !f || !f->filter_func) {
		_astro_error("%s: NULL handle, filter or filter_func: set .filter_func (e.g. starpu_vector_filter_block) and .nchildren", fn);
		return false;
	}
	if (_astro_filter_nparts(f, handle) == 0) {
		_astro_error("%s: the filter gives 0 parts: set .nchildren", fn);
		return false;
	}
	return true;
}

/* Child id of nparts: a handle registered on the view filter_func computes. */
starpu_data_handle_t _astro_child_register(starpu_data_handle_t father, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	struct starpu_data_interface_ops *ops = f->get_child_ops ? f->get_child_ops(f, id) : father->ops;
	/* A father registered on no node gets its buffer: the children are views into it. */
	if (!father->replicates[STARPU_MAIN_RAM].allocated && !_astro_coherency_materialize(father, STARPU_MAIN_RAM))
		return NULL;
	void *iface = calloc(1, ops->interface_size);
	f->filter_func(father->iface[STARPU_MAIN_RAM], iface, f, id, nparts);
	starpu_data_handle_t child = NULL;
	/* Main memory holds the buffer (the father's), whatever the father's home node. */
	starpu_data_register(&child, STARPU_MAIN_RAM, iface, ops);
	/* The registration copied what the filter allocated in the scratch interface. */
	if (ops->free_meta)
		ops->free_meta(iface);
	free(iface);
	if (!child)
		return NULL;
	child->father = father;
	child->sequential_consistency = father->sequential_consistency;
	child->redux_cl = father->redux_cl;
	child->init_cl = father->init_cl;
	child->redux_arg = father->redux_arg;
	child->init_arg = father->init_arg;
	return child;
}

/* ------------------------------------------------------------- filters */

void starpu_filter_nparts_compute_chunk_size_and_offset(unsigned n, unsigned nparts, size_t elemsize, unsigned id, unsigned ld,
						      unsigned *chunk_size, size_t *offset)
{
	/* The first n % nparts parts take one element more. */
	unsigned base = n / nparts, extra = n % nparts;
	if (chunk_size)
		*chunk_size = base + (id < extra);
	if (offset)
		*offset = ((size_t)id * base + STARPU_MIN(id, extra)) * ld * elemsize;
}

static unsigned shadow_of(struct starpu_data_filter *f)
{
	return _astro_filter_shadow(f);
}

#define VIEW_MOVE _ASTRO_VIEW_MOVE

static void vector_cut(struct starpu_vector_interface *father, struct starpu_vector_interface *child, uint32_t start, uint32_t nx)
{
	size_t bytes = (size_t)start * father->elemsize;
	child->id = father->id;
	child->nx = nx;
	child->elemsize = father->elemsize;
	child->slice_base = father->slice_base + start;
	child->allocsize = (size_t)nx * father->elemsize;
	VIEW_MOVE(child, father, bytes);
}

void starpu_vector_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)f;
	struct starpu_vector_interface *father = father_interface;
	unsigned chunk;
	size_t offset;
	starpu_filter_nparts_compute_chunk_size_and_offset(father->nx, nparts, 1, id, 1, &chunk, &offset);
	vector_cut(father, child_interface, (uint32_t)offset, chunk);
}

void starpu_vector_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	struct starpu_vector_interface *father = father_interface;
	unsigned shadow = shadow_of(f), chunk;
	size_t offset;
	STARPU_ASSERT_MSG(father->nx >= 2 * shadow, "vector of %u elements too small for a shadow of %u", father->nx, shadow);
	starpu_filter_nparts_compute_chunk_size_and_offset(father->nx - 2 * shadow, nparts, 1, id, 1, &chunk, &offset);
	vector_cut(father, child_interface, (uint32_t)offset, chunk + 2 * shadow);
}

void starpu_vector_filter_list(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	const uint32_t *sizes = f->filter_arg_ptr;
	uint32_t start = 0;
	for (unsigned i = 0; i < id; i++)
		start += sizes[i];
	vector_cut(father_interface, child_interface, start, sizes[id]);
}

void starpu_vector_filter_list_long(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	const long *sizes = f->filter_arg_ptr;
	long start = 0;
	for (unsigned i = 0; i < id; i++)
		start += sizes[i];
	vector_cut(father_interface, child_interface, (uint32_t)start, (uint32_t)sizes[id]);
}

void starpu_vector_filter_divide_in_2(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	struct starpu_vector_interface *father = father_interface;
	uint32_t first = f->filter_arg;
	STARPU_ASSERT_MSG(id < 2 && first <= father->nx, "divide_in_2: part %u, split at %u of %u", id, first, father->nx);
	if (id == 0)
		vector_cut(father, child_interface, 0, first);
	else
		vector_cut(father, child_interface, first, father->nx - first);
}

static void variable_at(void *child_interface, uintptr_t ptr, uintptr_t dev_handle, size_t offset, size_t elemsize)
{
	struct starpu_variable_interface *child = child_interface;
	child->id = STARPU_VARIABLE_INTERFACE_ID;
	child->ptr = ptr;
	child->dev_handle = dev_handle;
	child->offset = offset;
	child->elemsize = elemsize;
}

void starpu_vector_filter_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	struct starpu_vector_interface *father = father_interface;
	uint32_t index = (uint32_t)(uintptr_t)f->filter_arg_ptr + id;
	STARPU_ASSERT_MSG(index < father->nx, "pick_variable: element %u of a vector of %u", index, father->nx);
	size_t bytes = (size_t)index * father->elemsize;
	variable_at(child_interface, father->ptr ? father->ptr + bytes : 0, father->dev_handle, father->offset + bytes, father->elemsize);
}

struct starpu_data_interface_ops *starpu_vector_filter_pick_variable_child_ops(struct starpu_data_filter *f, unsigned child)
{
	(void)f;
	(void)child;
	return &starpu_interface_variable_ops;
}

static void matrix_cut(struct starpu_matrix_interface *father, struct starpu_matrix_interface *child, size_t bytes, uint32_t nx, uint32_t ny)
{
	child->id = father->id;
	child->nx = nx;
	child->ny = ny;
	child->ld = father->ld;
	child->elemsize = father->elemsize;
	child->allocsize = (size_t)nx * ny * father->elemsize;
	VIEW_MOVE(child, father, bytes);
}

void starpu_matrix_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)f;
	struct starpu_matrix_interface *father = father_interface;
	unsigned chunk;
	size_t offset;
	starpu_filter_nparts_compute_chunk_size_and_offset(father->nx, nparts, father->elemsize, id, 1, &chunk, &offset);
	matrix_cut(father, child_interface, offset, chunk, father->ny);
}

void starpu_matrix_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	struct starpu_matrix_interface *father = father_interface;
	unsigned shadow = shadow_of(f), chunk;
	size_t offset;
	STARPU_ASSERT_MSG(father->nx >= 2 * shadow, "matrix nx %u too small for a shadow of %u", father->nx, shadow);
	starpu_filter_nparts_compute_chunk_size_and_offset(father->nx - 2 * shadow, nparts, father->elemsize, id, 1, &chunk, &offset);
	matrix_cut(father, child_interface, offset, chunk + 2 * shadow, father->ny);
}

void starpu_matrix_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)f;
	struct starpu_matrix_interface *father = father_interface;
	unsigned chunk;
	size_t offset;
	starpu_filter_nparts_compute_chunk_size_and_offset(father->ny, nparts, father->elemsize, id, father->ld, &chunk, &offset);
	matrix_cut(father, child_interface, offset, father->nx, chunk);
}

void starpu_matrix_filter_vertical_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	struct starpu_matrix_interface *father = father_interface;
	unsigned shadow = shadow_of(f), chunk;
	size_t offset;
	STARPU_ASSERT_MSG(father->ny >= 2 * shadow, "matrix ny %u too small for a shadow of %u", father->ny, shadow);
	starpu_filter_nparts_compute_chunk_size_and_offset(father->ny - 2 * shadow, nparts, father->elemsize, id, father->ld, &chunk, &offset);
	matrix_cut(father, child_interface, offset, father->nx, chunk + 2 * shadow);
}

void starpu_matrix_filter_pick_vector_y(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	struct starpu_matrix_interface *father = father_interface;
	struct starpu_vector_interface *child = child_interface;
	uint32_t y = (uint32_t)(uintptr_t)f->filter_arg_ptr + id;
	STARPU_ASSERT_MSG(y < father->ny, "pick_vector_y: row %u of a matrix of %u", y, father->ny);
	child->id = STARPU_VECTOR_INTERFACE_ID;
	child->nx = father->nx;
	child->elemsize = father->elemsize;
	child->slice_base = 0;
	child->allocsize = (size_t)father->nx * father->elemsize;
	VIEW_MOVE(child, father, (size_t)y * father->ld * father->elemsize);
}

struct starpu_data_interface_ops *starpu_matrix_filter_pick_vector_child_ops(struct starpu_data_filter *f, unsigned child)
{
	(void)f;
	(void)child;
	return &starpu_interface_vector_ops;
}

void starpu_matrix_filter_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	struct starpu_matrix_interface *father = father_interface;
	const uint32_t *pos = f->filter_arg_ptr;
	uint32_t x = pos ? pos[0] : 0, y = (pos ? pos[1] : 0) + id;
	STARPU_ASSERT_MSG(x < father->nx && y < father->ny, "pick_variable: (%u, %u) outside a %ux%u matrix", x, y, father->nx, father->ny);
	size_t bytes = ((size_t)y * father->ld + x) * father->elemsize;
	variable_at(child_interface, father->ptr ? father->ptr + bytes : 0, father->dev_handle, father->offset + bytes, father->elemsize);
}

struct starpu_data_interface_ops *starpu_matrix_filter_pick_variable_child_ops(struct starpu_data_filter *f, unsigned child)
{
	(void)f;
	(void)child;
	return &starpu_interface_variable_ops;
}

static void block_cut(struct starpu_block_interface *father, struct starpu_block_interface *child, size_t bytes,
		      uint32_t nx, uint32_t ny, uint32_t nz)
{
	child->id = father->id;
	child->nx = nx;
	child->ny = ny;
	child->nz = nz;
	child->ldy = father->ldy;
	child->ldz = father->ldz;
	child->elemsize = father->elemsize;
	VIEW_MOVE(child, father, bytes);
}

/* Cuts along axis 0 (x), 1 (y) or 2 (z), with a shadow border on that axis. */
static void block_filter(struct starpu_block_interface *father, struct starpu_block_interface *child, unsigned axis, unsigned shadow,
			 unsigned id, unsigned nparts)
{
	uint32_t dims[3] = { father->nx, father->ny, father->nz };
	unsigned strides[3] = { 1, father->ldy, father->ldz };
	unsigned chunk;
	size_t offset;
	STARPU_ASSERT_MSG(dims[axis] >= 2 * shadow, "block dimension %u too small for a shadow of %u", dims[axis], shadow);
	starpu_filter_nparts_compute_chunk_size_and_offset(dims[axis] - 2 * shadow, nparts, father->elemsize, id, strides[axis], &chunk, &offset);
	dims[axis] = chunk + 2 * shadow;
	block_cut(father, child, offset, dims[0], dims[1], dims[2]);
}

void starpu_block_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)f;
	block_filter(father_interface, child_interface, 0, 0, id, nparts);
}

void starpu_block_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	block_filter(father_interface, child_interface, 0, shadow_of(f), id, nparts);
}

void starpu_block_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)f;
	block_filter(father_interface, child_interface, 1, 0, id, nparts);
}

void starpu_block_filter_vertical_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	block_filter(father_interface, child_interface, 1, shadow_of(f), id, nparts);
}

void starpu_block_filter_depth_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)f;
	block_filter(father_interface, child_interface, 2, 0, id, nparts);
}

void starpu_block_filter_depth_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	block_filter(father_interface, child_interface, 2, shadow_of(f), id, nparts);
}

/* The plane at index along y (axis 1: an x-z matrix) or z (axis 2: an x-y matrix) of a block. */
static void block_pick_matrix(struct starpu_block_interface *father, struct starpu_matrix_interface *child, unsigned axis, uint32_t index)
{
	child->id = STARPU_MATRIX_INTERFACE_ID;
	child->nx = father->nx;
	child->ny = axis == 1 ? father->nz : father->ny;
	child->ld = axis == 1 ? father->ldz : father->ldy;
	child->elemsize = father->elemsize;
	child->allocsize = (size_t)child->nx * child->ny * father->elemsize;
	VIEW_MOVE(child, father, (size_t)index * (axis == 1 ? father->ldy : father->ldz) * father->elemsize);
}

void starpu_block_filter_pick_matrix_z(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	struct starpu_block_interface *father = father_interface;
	uint32_t z = (uint32_t)(uintptr_t)f->filter_arg_ptr + id;
	STARPU_ASSERT_MSG(z < father->nz, "pick_matrix_z: plane %u of a block of %u", z, father->nz);
	block_pick_matrix(father, child_interface, 2, z);
}

void starpu_block_filter_pick_matrix_y(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	struct starpu_block_interface *father = father_interface;
	uint32_t y = (uint32_t)(uintptr_t)f->filter_arg_ptr + id;
	STARPU_ASSERT_MSG(y < father->ny, "pick_matrix_y: plane %u of a block of %u", y, father->ny);
	block_pick_matrix(father, child_interface, 1, y);
}

void starpu_block_filter_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)nparts;
	struct starpu_block_interface *father = father_interface;
	const uint32_t *pos = f->filter_arg_ptr;
	uint32_t x = pos ? pos[0] : 0, y = pos ? pos[1] : 0, z = (pos ? pos[2] : 0) + id;
	STARPU_ASSERT_MSG(x < father->nx && y < father->ny && z < father->nz, "pick_variable: (%u, %u, %u) outside a %ux%ux%u block",
			  x, y, z, father->nx, father->ny, father->nz);
	size_t bytes = ((size_t)z * father->ldz + (size_t)y * father->ldy + x) * father->elemsize;
	variable_at(child_interface, father->ptr ? father->ptr + bytes : 0, father->dev_handle, father->offset + bytes, father->elemsize);
}

struct starpu_data_interface_ops *starpu_block_filter_pick_variable_child_ops(struct starpu_data_filter *f, unsigned child)
{
	(void)f;
	(void)child;
	return &starpu_interface_variable_ops;
}

struct starpu_data_interface_ops *starpu_block_filter_pick_matrix_child_ops(struct starpu_data_filter *f, unsigned child)
{
	(void)f;
	(void)child;
	return &starpu_interface_matrix_ops;
}
