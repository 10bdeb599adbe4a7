/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The block (3D dense array) data interface: nx x ny x nz elements, x
 * consecutive, ldy elements between rows and ldz between planes.
 */
#include "data/interfaces/interfaces.h"

static struct starpu_block_interface *block_of(starpu_data_handle_t handle, unsigned node)
{
	return starpu_data_get_interface_on_node(handle, node);
}

static bool is_block(starpu_data_handle_t handle, const char *fn)
{
	if (!handle) {
		_astro_error("%s: NULL handle", fn);
		return false;
	}
	if (handle->ops->interfaceid != STARPU_BLOCK_INTERFACE_ID) {
		_astro_error("%s: the handle is a %s, not a block", fn, handle->ops->name ? handle->ops->name : "different interface");
		return false;
	}
	return true;
}

static starpu_ssize_t block_allocate(void *data_interface, unsigned node)
{
	struct starpu_block_interface *b = data_interface;
	size_t bytes = (size_t)b->nx * b->ny * b->nz * b->elemsize;
	b->offset = 0;
	/* A fresh buffer is packed. */
	b->ldy = b->nx;
	b->ldz = b->nx * b->ny;
	return _astro_interface_alloc(node, bytes, &b->ptr, &b->dev_handle);
}

static void block_free(void *data_interface, unsigned node)
{
	struct starpu_block_interface *b = data_interface;
	_astro_interface_free(node, &b->ptr, &b->dev_handle, (size_t)b->nx * b->ny * b->nz * b->elemsize);
}

static int block_copy(void *src, unsigned src_node, void *dst, unsigned dst_node, void *async)
{
	struct starpu_block_interface *s = src, *d = dst;
	/* Rows of nx elements, ldy apart, in planes ldz apart: merged where they are packed. */
	return starpu_interface_copy3d(s->dev_handle, s->offset, src_node, d->dev_handle, d->offset, dst_node,
				       (size_t)s->nx * s->elemsize, s->ny, (size_t)s->ldy * s->elemsize, (size_t)d->ldy * d->elemsize,
				       s->nz, (size_t)s->ldz * s->elemsize, (size_t)d->ldz * d->elemsize, async);
}

static void *block_to_pointer(void *data_interface, unsigned node)
{
	(void)node;
	return (void *)((struct starpu_block_interface *)data_interface)->ptr;
}

static size_t block_size(starpu_data_handle_t handle)
{
	struct starpu_block_interface *b = block_of(handle, STARPU_MAIN_RAM);
	return (size_t)b->nx * b->ny * b->nz * b->elemsize;
}

static uint32_t block_footprint(starpu_data_handle_t handle)
{
	struct starpu_block_interface *b = block_of(handle, STARPU_MAIN_RAM);
	uint32_t hash = starpu_hash_crc32c_be(b->nx, 0);
	hash = starpu_hash_crc32c_be(b->ny, hash);
	return starpu_hash_crc32c_be(b->nz, hash);
}

static int block_compare(void *a, void *b)
{
	struct starpu_block_interface *x = a, *y = b;
	return x->nx == y->nx && x->ny == y->ny && x->nz == y->nz && x->elemsize == y->elemsize;
}

static void block_display(starpu_data_handle_t handle, FILE *f)
{
	struct starpu_block_interface *b = block_of(handle, STARPU_MAIN_RAM);
	fprintf(f, "%u\t%u\t%u\t", b->nx, b->ny, b->nz);
}

static starpu_ssize_t block_describe(void *data_interface, char *buf, size_t size)
{
	struct starpu_block_interface *b = data_interface;
	return snprintf(buf, size, "B%ux%ux%ux%zu", b->nx, b->ny, b->nz, b->elemsize);
}

static void block_layout(void *data_interface, struct _astro_dense *d)
{
	struct starpu_block_interface *b = data_interface;
	*d = (struct _astro_dense){ .ndim = 3, .nn = { b->nx, b->ny, b->nz }, .ld = { 1, b->ldy, b->ldz },
				    .elemsize = b->elemsize, .base = (char *)b->ptr };
}
_ASTRO_DENSE_PACK_METHODS(block, block_layout)

static const struct starpu_data_copy_methods block_copy_methods = { .any_to_any = block_copy };

struct starpu_data_interface_ops starpu_interface_block_ops = {
	.allocate_data_on_node = block_allocate,
	.free_data_on_node = block_free,
	.copy_methods = &block_copy_methods,
	.to_pointer = block_to_pointer,
	.pointer_is_inside = block_pointer_is_inside,
	.get_size = block_size,
	.footprint = block_footprint,
	.compare = block_compare,
	.display = block_display,
	.describe = block_describe,
	.pack_data = block_pack,
	.peek_data = block_peek,
	.unpack_data = block_unpack,
	.interfaceid = STARPU_BLOCK_INTERFACE_ID,
	.interface_size = sizeof(struct starpu_block_interface),
	.name = "STARPU_BLOCK_INTERFACE",
};

void starpu_block_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ldy, uint32_t ldz,
				uint32_t nx, uint32_t ny, uint32_t nz, size_t elemsize)
{
	if ((ldy < nx && ny * nz > 1) || (ldz < (uint64_t)ldy * ny && nz > 1)) {
		_astro_error("starpu_block_data_register: leading dimensions ldy=%u ldz=%u too small for %ux%ux%u: need ldy >= nx and ldz >= ldy*ny",
			     ldy, ldz, nx, ny, nz);
		*handle = NULL;
		return;
	}
	if (home_node >= 0 && !ptr && nx && ny && nz) {
		_astro_error("starpu_block_data_register: NULL pointer on node %d: give the data's address, or home node -1 to let the runtime allocate it", home_node);
		*handle = NULL;
		return;
	}
	struct starpu_block_interface b = {
		.id = STARPU_BLOCK_INTERFACE_ID, .ptr = ptr, .dev_handle = ptr, .offset = 0,
		.nx = nx, .ny = ny, .nz = nz, .ldy = ldy, .ldz = ldz, .elemsize = elemsize,
	};
	starpu_data_register(handle, home_node, &b, &starpu_interface_block_ops);
}

void starpu_block_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset, uint32_t ldy, uint32_t ldz)
{
	if (!is_block(handle, __func__) || !_astro_data_ptr_register(handle, node, __func__))
		return;
	struct starpu_block_interface *b = block_of(handle, node);
	b->ptr = ptr;
	b->dev_handle = dev_handle;
	b->offset = offset;
	b->ldy = ldy;
	b->ldz = ldz;
}

#define BLOCK_GETTER(type, name, field, node) \
	type starpu_block_get_##name(starpu_data_handle_t handle) \
	{ \
		return is_block(handle, __func__) ? block_of(handle, node)->field : 0; \
	}
BLOCK_GETTER(uint32_t, nx, nx, STARPU_MAIN_RAM)
BLOCK_GETTER(uint32_t, ny, ny, STARPU_MAIN_RAM)
BLOCK_GETTER(uint32_t, nz, nz, STARPU_MAIN_RAM)
BLOCK_GETTER(size_t, elemsize, elemsize, STARPU_MAIN_RAM)
BLOCK_GETTER(uint32_t, local_ldy, ldy, starpu_worker_get_local_memory_node())
BLOCK_GETTER(uint32_t, local_ldz, ldz, starpu_worker_get_local_memory_node())
BLOCK_GETTER(uintptr_t, local_ptr, ptr, starpu_worker_get_local_memory_node())
