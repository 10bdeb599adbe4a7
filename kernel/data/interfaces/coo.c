/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The COO (coordinate) sparse matrix data interface: n_values values with
 * their column and row, three arrays moved as they are between nodes.
 */
#include "data/interfaces/interfaces.h"

static struct starpu_coo_interface *coo_of(starpu_data_handle_t handle, unsigned node)
{
	return starpu_data_get_interface_on_node(handle, node);
}

static void coo_arrays(void *data_interface, struct _astro_arrays *a)
{
	struct starpu_coo_interface *c = data_interface;
	size_t indices = (size_t)c->n_values * sizeof(uint32_t);
	*a = (struct _astro_arrays){
		.n = 3,
		.addr = { c->values, (uintptr_t)c->columns, (uintptr_t)c->rows },
		.bytes = { (size_t)c->n_values * c->elemsize, indices, indices },
	};
}

static void coo_set_arrays(void *data_interface, const struct _astro_arrays *a)
{
	struct starpu_coo_interface *c = data_interface;
	c->values = a->addr[0];
	c->columns = (uint32_t *)a->addr[1];
	c->rows = (uint32_t *)a->addr[2];
}
_ASTRO_ARRAYS_METHODS(coo, coo_arrays, coo_set_arrays)

static void *coo_to_pointer(void *data_interface, unsigned node)
{
	(void)node;
	return (void *)((struct starpu_coo_interface *)data_interface)->values;
}

static uint32_t coo_footprint(starpu_data_handle_t handle)
{
	struct starpu_coo_interface *c = coo_of(handle, STARPU_MAIN_RAM);
	uint32_t hash = starpu_hash_crc32c_be(c->nx, 0);
	hash = starpu_hash_crc32c_be(c->ny, hash);
	return starpu_hash_crc32c_be(c->n_values, hash);
}

static int coo_compare(void *a, void *b)
{
	struct starpu_coo_interface *x = a, *y = b;
	return x->nx == y->nx && x->ny == y->ny && x->n_values == y->n_values && x->elemsize == y->elemsize;
}

static void coo_display(starpu_data_handle_t handle, FILE *f)
{
	struct starpu_coo_interface *c = coo_of(handle, STARPU_MAIN_RAM);
	fprintf(f, "%u\t%u\t%u\t", c->nx, c->ny, c->n_values);
}

static starpu_ssize_t coo_describe(void *data_interface, char *buf, size_t size)
{
	struct starpu_coo_interface *c = data_interface;
	return snprintf(buf, size, "c%ux%ux%ux%zu", c->nx, c->ny, c->n_values, c->elemsize);
}

struct starpu_data_interface_ops starpu_interface_coo_ops = {
	.allocate_data_on_node = coo_allocate,
	.free_data_on_node = coo_free,
	.copy_methods = &coo_copy_methods,
	.to_pointer = coo_to_pointer,
	.pointer_is_inside = coo_pointer_is_inside,
	.get_size = coo_size,
	.footprint = coo_footprint,
	.compare = coo_compare,
	.display = coo_display,
	.describe = coo_describe,
	.pack_data = coo_pack,
	.peek_data = coo_peek,
	.unpack_data = coo_unpack,
	.interfaceid = STARPU_COO_INTERFACE_ID,
	.interface_size = sizeof(struct starpu_coo_interface),
	.name = "STARPU_COO_INTERFACE",
};

void starpu_coo_data_register(starpu_data_handle_t *handleptr, int home_node, uint32_t nx, uint32_t ny, uint32_t n_values,
			      uint32_t *columns, uint32_t *rows, uintptr_t values, size_t elemsize)
{
	if (!handleptr) {
		_astro_error("starpu_coo_data_register: NULL handle pointer");
		return;
	}
	*handleptr = NULL;
	if (home_node >= 0 && n_values && (!columns || !rows || !values)) {
		_astro_error("starpu_coo_data_register: NULL %s on node %d: give the three arrays, or home node -1 to let the runtime allocate them",
			     !values ? "values" : !columns ? "columns" : "rows", home_node);
		return;
	}
	if (home_node == STARPU_MAIN_RAM)
		for (uint32_t k = 0; k < n_values; k++)
			if (columns[k] >= nx || rows[k] >= ny) {
				_astro_error("starpu_coo_data_register: value %u is at (column %u, row %u), outside the %u x %u matrix",
					     k, columns[k], rows[k], nx, ny);
				return;
			}
	struct starpu_coo_interface c = {
		.id = STARPU_COO_INTERFACE_ID, .columns = columns, .rows = rows, .values = values,
		.nx = nx, .ny = ny, .n_values = n_values, .elemsize = elemsize,
	};
	starpu_data_register(handleptr, home_node, &c, &starpu_interface_coo_ops);
}
