/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CSR (compressed sparse row) data interface: three arrays (values,
 * column indices, row starts) moved as they are between nodes; and its
 * filter, which cuts bands of rows as views into the father's arrays. The
 * BCSR interface shares the band cut.
 */
#include "data/interfaces/interfaces.h"

static struct starpu_csr_interface *csr_of(starpu_data_handle_t handle, unsigned node)
{
	return starpu_data_get_interface_on_node(handle, node);
}

static bool is_csr(starpu_data_handle_t handle, const char *fn)
{
	if (!handle) {
		_astro_error("%s: NULL handle", fn);
		return false;
	}
	if (handle->ops->interfaceid != STARPU_CSR_INTERFACE_ID) {
		_astro_error("%s: the handle is a %s, not a CSR matrix", fn, handle->ops->name ? handle->ops->name : "different interface");
		return false;
	}
	return true;
}

static void csr_arrays(void *data_interface, struct _astro_arrays *a)
{
	struct starpu_csr_interface *c = data_interface;
	*a = (struct _astro_arrays){
		.n = 3,
		.addr = { c->nzval, (uintptr_t)c->colind, (uintptr_t)c->rowptr },
		.bytes = { (size_t)c->nnz * c->elemsize, (size_t)c->nnz * sizeof(uint32_t), ((size_t)c->nrow + 1) * sizeof(uint32_t) },
	};
}

static void csr_set_arrays(void *data_interface, const struct _astro_arrays *a)
{
	struct starpu_csr_interface *c = data_interface;
	c->nzval = a->addr[0];
	c->colind = (uint32_t *)a->addr[1];
	c->rowptr = (uint32_t *)a->addr[2];
	/* The first buffers (main memory's, registered or allocated) are the ones in RAM. */
	if (!c->ram_colind) {
		c->ram_colind = c->colind;
		c->ram_rowptr = c->rowptr;
	}
}
_ASTRO_ARRAYS_METHODS(csr, csr_arrays, csr_set_arrays)

static void *csr_to_pointer(void *data_interface, unsigned node)
{
	(void)node;
	return (void *)((struct starpu_csr_interface *)data_interface)->nzval;
}

static uint32_t csr_footprint(starpu_data_handle_t handle)
{
	struct starpu_csr_interface *c = csr_of(handle, STARPU_MAIN_RAM);
	return starpu_hash_crc32c_be(c->nnz, starpu_hash_crc32c_be(c->nrow, 0));
}

static int csr_compare(void *a, void *b)
{
	struct starpu_csr_interface *x = a, *y = b;
	return x->nnz == y->nnz && x->nrow == y->nrow && x->elemsize == y->elemsize;
}

static void csr_display(starpu_data_handle_t handle, FILE *f)
{
	struct starpu_csr_interface *c = csr_of(handle, STARPU_MAIN_RAM);
	fprintf(f, "%u\t%u\t", c->nnz, c->nrow);
}

static starpu_ssize_t csr_describe(void *data_interface, char *buf, size_t size)
{
	struct starpu_csr_interface *c = data_interface;
	return snprintf(buf, size, "C%ux%ux%zu", c->nnz, c->nrow, c->elemsize);
}

struct starpu_data_interface_ops starpu_interface_csr_ops = {
	.allocate_data_on_node = csr_allocate,
	.free_data_on_node = csr_free,
	.copy_methods = &csr_copy_methods,
	.to_pointer = csr_to_pointer,
	.pointer_is_inside = csr_pointer_is_inside,
	.get_size = csr_size,
	.footprint = csr_footprint,
	.compare = csr_compare,
	.display = csr_display,
	.describe = csr_describe,
	.pack_data = csr_pack,
	.peek_data = csr_peek,
	.unpack_data = csr_unpack,
	.interfaceid = STARPU_CSR_INTERFACE_ID,
	.interface_size = sizeof(struct starpu_csr_interface),
	.name = "STARPU_CSR_INTERFACE",
};

bool _astro_rows_check(const char *fn, int home_node, uint32_t nnz, uint32_t nrow, uintptr_t nzval, const uint32_t *colind,
		       const uint32_t *rowptr, uint32_t firstentry)
{
	if (home_node < 0)
		return true;
	if (!rowptr || (nnz && (!nzval || !colind))) {
		_astro_error("%s: NULL %s on node %d: give the three arrays (values, column indices, row starts), or home node -1 to let the runtime allocate them",
			     fn, !rowptr ? "rowptr" : !nzval ? "nzval" : "colind", home_node);
		return false;
	}
	if (home_node == STARPU_MAIN_RAM && rowptr[nrow] - firstentry != nnz) {
		_astro_error("%s: rowptr[nrow] - firstentry = %u but nnz is %u: rowptr has nrow + 1 entries, its last one ends the last row",
			     fn, rowptr[nrow] - firstentry, nnz);
		return false;
	}
	return true;
}

void starpu_csr_data_register(starpu_data_handle_t *handle, int home_node, uint32_t nnz, uint32_t nrow, uintptr_t nzval, uint32_t *colind,
			      uint32_t *rowptr, uint32_t firstentry, size_t elemsize)
{
	if (!handle) {
		_astro_error("starpu_csr_data_register: NULL handle pointer");
		return;
	}
	*handle = NULL;
	if (!_astro_rows_check("starpu_csr_data_register", home_node, nnz, nrow, nzval, colind, rowptr, firstentry))
		return;
	struct starpu_csr_interface c = {
		.id = STARPU_CSR_INTERFACE_ID, .nnz = nnz, .nrow = nrow, .nzval = nzval, .colind = colind, .rowptr = rowptr,
		.ram_colind = home_node == STARPU_MAIN_RAM ? colind : NULL, .ram_rowptr = home_node == STARPU_MAIN_RAM ? rowptr : NULL,
		.firstentry = firstentry, .elemsize = elemsize,
	};
	starpu_data_register(handle, home_node, &c, &starpu_interface_csr_ops);
}

#define CSR_GETTER(type, name, expr, node) \
	type starpu_csr_get_##name(starpu_data_handle_t handle) \
	{ \
		return is_csr(handle, __func__) ? (type)csr_of(handle, node)->expr : 0; \
	}
CSR_GETTER(uint32_t, nnz, nnz, STARPU_MAIN_RAM)
CSR_GETTER(uint32_t, nrow, nrow, STARPU_MAIN_RAM)
CSR_GETTER(uint32_t, firstentry, firstentry, STARPU_MAIN_RAM)
CSR_GETTER(size_t, elemsize, elemsize, STARPU_MAIN_RAM)
CSR_GETTER(uintptr_t, local_nzval, nzval, starpu_worker_get_local_memory_node())
CSR_GETTER(uint32_t *, local_colind, colind, starpu_worker_get_local_memory_node())
CSR_GETTER(uint32_t *, local_rowptr, rowptr, starpu_worker_get_local_memory_node())

/* ----------------------------------------------------------------- filters */

void _astro_rows_cut(const struct _astro_rows *father, struct _astro_rows *child, size_t entry_bytes, unsigned id, unsigned nparts)
{
	STARPU_ASSERT_MSG(nparts <= father->nrow, "cannot cut %u rows into %u bands", father->nrow, nparts);
	unsigned nrow;
	size_t first_row;
	starpu_filter_nparts_compute_chunk_size_and_offset(father->nrow, nparts, 1, id, 1, &nrow, &first_row);
	/* Entries are counted from the father's first entry; the child's arrays start at its first row's. */
	uint32_t first = father->rowptr[first_row] - father->firstentry;
	child->nrow = nrow;
	child->nnz = father->rowptr[first_row + nrow] - father->rowptr[first_row];
	child->nzval = father->nzval ? father->nzval + first * entry_bytes : 0;
	child->colind = father->colind ? father->colind + first : NULL;
	child->rowptr = father->rowptr + first_row;
	child->firstentry = father->rowptr[first_row];
}

void starpu_csr_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts)
{
	(void)f;
	struct starpu_csr_interface *father = father_interface, *child = child_interface;
	STARPU_ASSERT_MSG(father->id == STARPU_CSR_INTERFACE_ID, "starpu_csr_filter_vertical_block applied to a handle that is not a CSR matrix");
	struct _astro_rows from = { father->nnz, father->nrow, father->nzval, father->ram_colind, father->ram_rowptr, father->firstentry }, to;
	_astro_rows_cut(&from, &to, father->elemsize, id, nparts);
	*child = (struct starpu_csr_interface){
		.id = STARPU_CSR_INTERFACE_ID, .nnz = to.nnz, .nrow = to.nrow, .nzval = to.nzval, .colind = to.colind, .rowptr = to.rowptr,
		.ram_colind = to.colind, .ram_rowptr = to.rowptr, .firstentry = to.firstentry, .elemsize = father->elemsize,
	};
}
