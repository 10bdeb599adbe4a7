/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The BCSR (block compressed sparse row) data interface: as CSR, with
 * r x c blocks of values (row-major) in place of single values; and its
 * filters: bands of block rows, or each block as a dense matrix.
 */
#include "data/interfaces/interfaces.h"

static struct starpu_bcsr_interface *bcsr_of(starpu_data_handle_t handle, unsigned node)
{
	return starpu_data_get_interface_on_node(handle, node);
}

static bool is_bcsr(starpu_data_handle_t handle, const char *fn)
{
	if (!handle) {
		_astro_error("%s: NULL handle", fn);
		return false;
	}
	if (handle->ops->interfaceid != STARPU_BCSR_INTERFACE_ID) {
		_astro_error("%s: the handle is a %s, not a BCSR matrix", fn, handle->ops->name ? handle->ops->name : "different interface");
		return false;
	}
	return true;
}

static size_t block_bytes(const struct starpu_bcsr_interface *b)
{
	return (size_t)b->r * b->c * b->elemsize;
}

static void bcsr_arrays(void *data_interface, struct _astro_arrays *a)
{
	struct starpu_bcsr_interface *b = data_interface;
	*a = (struct _astro_arrays){
		.n = 3,
		.addr = { b->nzval, (uintptr_t)b->colind, (uintptr_t)b->rowptr },
		.bytes = { (size_t)b->nnz * block_bytes(b), (size_t)b->nnz * sizeof(uint32_t), ((size_t)b->nrow + 1) * sizeof(uint32_t) },
	};
}

static void bcsr_set_arrays(void *data_interface, const struct _astro_arrays *a)
{
	struct starpu_bcsr_interface *b = data_interface;
	b->nzval = a->addr[0];
	b->colind = (uint32_t *)a->addr[1];
	b->rowptr = (uint32_t *)a->addr[2];
	/* The first buffers (main memory's, registered or allocated) are the ones in RAM. */
	if (!b->ram_colind) {
		b->ram_colind = b->colind;
		b->ram_rowptr = b->rowptr;
	}
}
_ASTRO_ARRAYS_METHODS(bcsr, bcsr_arrays, bcsr_set_arrays)

static void *bcsr_to_pointer(void *data_interface, unsigned node)
{
	(void)node;
	return (void *)((struct starpu_bcsr_interface *)data_interface)->nzval;
}

static uint32_t bcsr_footprint(starpu_data_handle_t handle)
{
	struct starpu_bcsr_interface *b = bcsr_of(handle, STARPU_MAIN_RAM);
	uint32_t hash = starpu_hash_crc32c_be(b->nnz, 0);
	hash = starpu_hash_crc32c_be(b->c, hash);
	return starpu_hash_crc32c_be(b->r, hash);
}

static int bcsr_compare(void *a, void *b)
{
	struct starpu_bcsr_interface *x = a, *y = b;
	return x->nnz == y->nnz && x->nrow == y->nrow && x->r == y->r && x->c == y->c && x->elemsize == y->elemsize;
}

static void bcsr_display(starpu_data_handle_t handle, FILE *f)
{
	struct starpu_bcsr_interface *b = bcsr_of(handle, STARPU_MAIN_RAM);
	fprintf(f, "%u\t%u\t%u\t%u\t", b->nnz, b->nrow, b->r, b->c);
}

static starpu_ssize_t bcsr_describe(void *data_interface, char *buf, size_t size)
{
	struct starpu_bcsr_interface *b = data_interface;
	return snprintf(buf, size, "b%ux%ux%ux%ux%zu", b->nnz, b->nrow, b->r, b->c, b->elemsize);
}

struct starpu_data_interface_ops starpu_interface_bcsr_ops = {
	.allocate_data_on_node = bcsr_allocate,
	.free_data_on_node = bcsr_free,
	.copy_methods = &bcsr_copy_methods,
	.to_pointer = bcsr_to_pointer,
	.pointer_is_inside = bcsr_pointer_is_inside,
	.get_size = bcsr_size,
	.footprint = bcsr_footprint,
	.compare = bcsr_compare,
	.display = bcsr_display,
	.describe = bcsr_describe,
	.pack_data = bcsr_pack,
	.peek_data = bcsr_peek,
	.unpack_data = bcsr_unpack,
	.interfaceid = STARPU_BCSR_INTERFACE_ID,
	.interface_size = sizeof(struct starpu_bcsr_interface),
	.name = "STARPU_BCSR_INTERFACE",
};

void starpu_bcsr_data_register(starpu_data_handle_t *handle, int home_node, uint32_t nnz, uint32_t nrow, uintptr_t nzval, uint32_t *colind,
			       uint32_t *rowptr, uint32_t firstentry, uint32_t r, uint32_t c, size_t elemsize)
{
	if (!handle) {
		_astro_error("starpu_bcsr_data_register: NULL handle pointer");
		return;
	}
	*handle = NULL;
	if (!r || !c) {
		_astro_error("starpu_bcsr_data_register: blocks of %u x %u elements: r and c must be at least 1", r, c);
		return;
	}
	if (!_astro_rows_check("starpu_bcsr_data_register", home_node, nnz, nrow, nzval, colind, rowptr, firstentry))
		return;
	struct starpu_bcsr_interface b = {
		.id = STARPU_BCSR_INTERFACE_ID, .nnz = nnz, .nrow = nrow, .nzval = nzval, .colind = colind, .rowptr = rowptr,
		.ram_colind = home_node == STARPU_MAIN_RAM ? colind : NULL, .ram_rowptr = home_node == STARPU_MAIN_RAM ? rowptr : NULL,
		.firstentry = firstentry, .r = r, .c = c, .elemsize = elemsize,
	};
	starpu_data_register(handle, home_node, &b, &starpu_interface_bcsr_ops);
}

#define BCSR_GETTER(type, name, expr, node) \
	type starpu_bcsr_get_##name(starpu_data_handle_t handle) \
	{ \
		return is_bcsr(handle, __func__) ? (type)bcsr_of(handle, node)->expr : 0; \
	}
BCSR_GETTER(uint32_t, nnz, nnz, STARPU_MAIN_RAM)
BCSR_GETTER(uint32_t, nrow, nrow, STARPU_MAIN_RAM)
BCSR_GETTER(uint32_t, firstentry, firstentry, STARPU_MAIN_RAM)
BCSR_GETTER(uint32_t, r, r, STARPU_MAIN_RAM)
BCSR_GETTER(uint32_t, c, c, STARPU_MAIN_RAM)
BCSR_GETTER(size_t, elemsize, elemsize, STARPU_MAIN_RAM)
BCSR_GETTER(uintptr_t, local_nzval, nzval, starpu_worker_get_local_memory_node())
BCSR_GETTER(uint32_t *, local_colind, colind, starpu_worker_get_local_memory_node())
BCSR_GETTER(uint32_t *, local_rowptr, rowptr, starpu_worker_get_local_memory_node())

/* ----------------------------------------------------------------- filters */

void starpu_bcsr_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)f;
	struct starpu_bcsr_interface *father = father_interface, *child = child_interface;
	STARPU_ASSERT_MSG(father->id == STARPU_BCSR_INTERFACE_ID, "starpu_bcsr_filter_vertical_block applied to a handle that is not a BCSR matrix");
	struct _astro_rows from = { father->nnz, father->nrow, father->nzval, father->ram_colind, father->ram_rowptr, father->firstentry }, to;
	_astro_rows_cut(&from, &to, block_bytes(father), id, nparts);
	*child = *father;
	child->nnz = to.nnz;
	child->nrow = to.nrow;
	child->nzval = to.nzval;
	child->colind = child->ram_colind = to.colind;
	child->rowptr = child->ram_rowptr = to.rowptr;
	child->firstentry = to.firstentry;
}

void starpu_bcsr_filter_canonical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)f;
	(void)nparts;
	struct starpu_bcsr_interface *father = father_interface;
	struct starpu_matrix_interface *child = child_interface;
	STARPU_ASSERT_MSG(father->id == STARPU_BCSR_INTERFACE_ID, "starpu_bcsr_filter_canonical_block applied to a handle that is not a BCSR matrix");
	STARPU_ASSERT_MSG(id < father->nnz, "starpu_bcsr_filter_canonical_block: block %u of %u", id, father->nnz);
	/* A block is r rows of c consecutive elements. */
	*child = (struct starpu_matrix_interface){
		.id = STARPU_MATRIX_INTERFACE_ID, .nx = father->c, .ny = father->r, .ld = father->c,
		.elemsize = father->elemsize, .allocsize = block_bytes(father),
	};
	struct { uintptr_t ptr, dev_handle; size_t offset; } base = { father->nzval, father->nzval, 0 };
	_ASTRO_VIEW_MOVE(child, &base, (size_t)id * block_bytes(father));
}

unsigned starpu_bcsr_filter_canonical_block_get_nchildren(struct starpu_data_filter *f, starpu_data_handle_t handle)
{
	(void)f;
	return starpu_bcsr_get_nnz(handle);
}

struct starpu_data_interface_ops *starpu_bcsr_filter_canonical_block_child_ops(struct starpu_data_filter *f, unsigned child)
{
	(void)f;
	(void)child;
	return &starpu_interface_matrix_ops;
}
