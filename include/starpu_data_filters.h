/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Data partitioning of the StarPU API: filters that cut a handle into children handles. */
#ifndef __STARPU_DATA_FILTERS_H__
#define __STARPU_DATA_FILTERS_H__

#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <starpu_config.h>
#include <starpu_data.h>

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_data_interface_ops;

/**
 * How to cut a handle into parts. filter_func fills the interface of child
 * id (of nparts) from the parent's interface; the children are views into
 * the parent's buffer, so they cost no copy.
 */
struct starpu_data_filter
{
	/** Fills child_interface, part id of nparts, from father_interface. */
	void (*filter_func)(void *father_interface, void *child_interface, struct starpu_data_filter *, unsigned id, unsigned nparts);
	/** Number of parts (unless get_nchildren is set). */
	unsigned nchildren;
	/** Number of parts computed from the data, instead of nchildren. */
	unsigned (*get_nchildren)(struct starpu_data_filter *, starpu_data_handle_t initial_handle);
	/** Interface of child id, when it differs from the parent's. */
	struct starpu_data_interface_ops *(*get_child_ops)(struct starpu_data_filter *, unsigned id);
	/** Integer argument of the filter (e.g. the picked index). */
	unsigned filter_arg;
	/** Pointer argument of the filter (e.g. the shadow width cast to a pointer, or a list of sizes). */
	void *filter_arg_ptr;
};

/* ------------------------------------------------------------ synchronous API */

/**
 * Cuts initial_handle into parts described by f. Waits for the tasks already
 * submitted on initial_handle; afterwards tasks use the children (see
 * starpu_data_get_sub_data()) and initial_handle must not be used until
 * starpu_data_unpartition().
 */
void starpu_data_partition(starpu_data_handle_t initial_handle, struct starpu_data_filter *f);
/** Waits for the tasks on the children of root_data, unregisters them and makes root_data usable again. */
void starpu_data_unpartition(starpu_data_handle_t root_data, unsigned gathering_node);
/** Child i of a partitioned handle, NULL when out of range. */
starpu_data_handle_t starpu_data_get_child(starpu_data_handle_t handle, unsigned i);
/** Number of children of handle (0 when not partitioned). */
int starpu_data_get_nb_children(starpu_data_handle_t handle);
/** Descends depth levels of partitioning, taking the child of each given index (unsigned varargs). */
starpu_data_handle_t starpu_data_get_sub_data(starpu_data_handle_t root_data, unsigned depth, ...);
/** As starpu_data_get_sub_data(), with a va_list. */
starpu_data_handle_t starpu_data_vget_sub_data(starpu_data_handle_t root_data, unsigned depth, va_list pa);
/** Applies nfilters filters (struct starpu_data_filter * varargs) recursively: the second one to every child of the first, and so on. */
void starpu_data_map_filters(starpu_data_handle_t root_data, unsigned nfilters, ...);
/** As starpu_data_map_filters(), with a va_list. */
void starpu_data_vmap_filters(starpu_data_handle_t root_data, unsigned nfilters, va_list pa);
/** As starpu_data_map_filters(), with an array of filters. */
void starpu_data_map_filters_parray(starpu_data_handle_t root_data, int nfilters, struct starpu_data_filter **filters);
/** As starpu_data_map_filters(), with an array of filter structures. */
void starpu_data_map_filters_array(starpu_data_handle_t root_data, int nfilters, struct starpu_data_filter *filters);

/* ----------------------------------------------------------- asynchronous API */

/**
 * Registers the children handles of f applied to initial_handle into
 * children (nparts entries), without switching to them: the switch is
 * ordered with the tasks by starpu_data_partition_submit() and
 * starpu_data_unpartition_submit().
 */
void starpu_data_partition_plan(starpu_data_handle_t initial_handle, struct starpu_data_filter *f, starpu_data_handle_t *children);
/** Switches from initial_handle to its planned children, after the tasks already submitted on it. */
void starpu_data_partition_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children);
/** As starpu_data_partition_submit(), choosing whether the switch is ordered with the tasks on initial_handle. */
void starpu_data_partition_submit_sequential_consistency(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children, int sequential_consistency);
/** Makes the children readable while initial_handle stays readable too: only reads may follow on both. */
void starpu_data_partition_readonly_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children);
/** As starpu_data_partition_readonly_submit(), choosing whether the switch is ordered with the tasks on initial_handle. */
void starpu_data_partition_readonly_submit_sequential_consistency(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children, int sequential_consistency);
/** Turns a read-write partitioning into a read-only one: initial_handle is readable again, the children stay readable. */
void starpu_data_partition_readonly_downgrade_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children);
/** Turns a read-only partitioning into a read-write one: the children may be written, initial_handle may not. */
void starpu_data_partition_readwrite_upgrade_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children);
/** Switches back from the children to initial_handle, after the tasks already submitted on the children. */
void starpu_data_unpartition_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children, int gathering_node);
/** As starpu_data_unpartition_submit(), choosing whether the switch is ordered with the tasks on initial_handle. */
void starpu_data_unpartition_submit_sequential_consistency(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children, int gathering_node, int sequential_consistency);
/** As starpu_data_unpartition_submit_sequential_consistency(), calling callback_func(callback_arg) once the switch is done. */
void starpu_data_unpartition_submit_sequential_consistency_cb(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children, int gathering_node, int sequential_consistency, void (*callback_func)(void *), void *callback_arg);
/** Makes initial_handle readable again while the children stay readable: only reads may follow on both. */
void starpu_data_unpartition_readonly_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children, int gathering_node);
/** Switches back to initial_handle from every plan submitted on it, recursively. */
void starpu_data_unpartition_submit_r(starpu_data_handle_t initial_handle, int gathering_node);
/** Unregisters the planned children once their tasks are done. */
void starpu_data_partition_clean(starpu_data_handle_t root_data, unsigned nparts, starpu_data_handle_t *children);
/** As starpu_data_partition_clean(), the data gathered on gather_node (main memory here, where the children's views live). */
void starpu_data_partition_clean_node(starpu_data_handle_t root_data, unsigned nparts, starpu_data_handle_t *children, int gather_node);
/** Kept for compatibility: switches are never inserted automatically here, so this does nothing. */
void starpu_data_partition_not_automatic(starpu_data_handle_t handle);

/* ------------------------------------------------------------------- helpers */

/**
 * Size (chunk_size elements) and byte offset of part id when n elements of
 * elemsize bytes, ld elements apart, are cut into nparts parts as evenly as
 * possible (the first n % nparts parts get one more element).
 */
void starpu_filter_nparts_compute_chunk_size_and_offset(unsigned n, unsigned nparts, size_t elemsize, unsigned id, unsigned ld, unsigned *chunk_size, size_t *offset);

/* ------------------------------------------------------------ vector filters */

/** Cuts a vector into nparts contiguous pieces of (almost) equal size. */
void starpu_vector_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_vector_filter_block() on nx - 2*shadow elements, each piece extended by shadow (filter_arg_ptr) elements on both sides. Read-only use. */
void starpu_vector_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a vector into pieces whose sizes are the uint32_t array filter_arg_ptr. */
void starpu_vector_filter_list(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a vector into pieces whose sizes are the long array filter_arg_ptr. */
void starpu_vector_filter_list_long(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a vector in two: the first filter_arg elements, then the rest. */
void starpu_vector_filter_divide_in_2(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Picks nparts consecutive elements as variables, from the index given as the filter_arg_ptr value (cast to a pointer). Set get_child_ops to starpu_vector_filter_pick_variable_child_ops. */
void starpu_vector_filter_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Child interface of starpu_vector_filter_pick_variable(): the variable interface. */
struct starpu_data_interface_ops *starpu_vector_filter_pick_variable_child_ops(struct starpu_data_filter *f, unsigned child);

/* ------------------------------------------------------------ matrix filters */

/** Cuts a matrix along x (rows of consecutive elements) into nparts sub-matrices sharing the leading dimension. */
void starpu_matrix_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_matrix_filter_block() with a shadow (filter_arg_ptr) border along x. Read-only use. */
void starpu_matrix_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a matrix along y into nparts sub-matrices. */
void starpu_matrix_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_matrix_filter_vertical_block() with a shadow (filter_arg_ptr) border along y. Read-only use. */
void starpu_matrix_filter_vertical_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Picks nparts rows (nx consecutive elements) as vectors, from the y given as the filter_arg_ptr value (cast to a pointer). Set get_child_ops to starpu_matrix_filter_pick_vector_child_ops. */
void starpu_matrix_filter_pick_vector_y(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Child interface of starpu_matrix_filter_pick_vector_y(): the vector interface. */
struct starpu_data_interface_ops *starpu_matrix_filter_pick_vector_child_ops(struct starpu_data_filter *f, unsigned child);
/** Picks nparts elements along y as variables, from the position filter_arg_ptr points to (uint32_t[2]: x, y). Set get_child_ops to starpu_matrix_filter_pick_variable_child_ops. */
void starpu_matrix_filter_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Child interface of starpu_matrix_filter_pick_variable(): the variable interface. */
struct starpu_data_interface_ops *starpu_matrix_filter_pick_variable_child_ops(struct starpu_data_filter *f, unsigned child);

/* ------------------------------------------------------------- block filters */

/** Cuts a block along x into nparts sub-blocks. */
void starpu_block_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_block_filter_block() with a shadow (filter_arg_ptr) border along x. Read-only use. */
void starpu_block_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a block along y into nparts sub-blocks. */
void starpu_block_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_block_filter_vertical_block() with a shadow (filter_arg_ptr) border along y. Read-only use. */
void starpu_block_filter_vertical_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a block along z into nparts sub-blocks. */
void starpu_block_filter_depth_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_block_filter_depth_block() with a shadow (filter_arg_ptr) border along z. Read-only use. */
void starpu_block_filter_depth_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Picks nparts planes as matrices, from the z given as the filter_arg_ptr value (cast to a pointer). Set get_child_ops to starpu_block_filter_pick_matrix_child_ops. */
void starpu_block_filter_pick_matrix_z(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Picks nparts x-z planes as matrices (nx by nz), from the y given as the filter_arg_ptr value (cast to a pointer). Set get_child_ops to starpu_block_filter_pick_matrix_child_ops. */
void starpu_block_filter_pick_matrix_y(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Child interface of starpu_block_filter_pick_matrix_z() and starpu_block_filter_pick_matrix_y(): the matrix interface. */
struct starpu_data_interface_ops *starpu_block_filter_pick_matrix_child_ops(struct starpu_data_filter *f, unsigned child);
/** Picks nparts elements along z as variables, from the position filter_arg_ptr points to (uint32_t[3]: x, y, z). Set get_child_ops to starpu_block_filter_pick_variable_child_ops. */
void starpu_block_filter_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Child interface of starpu_block_filter_pick_variable(): the variable interface. */
struct starpu_data_interface_ops *starpu_block_filter_pick_variable_child_ops(struct starpu_data_filter *f, unsigned child);

/* --------------------------------------------------------- sparse filters */

/** Cuts a CSR matrix into nparts bands of consecutive rows (views into the father's arrays, firstentry shifted). */
void starpu_csr_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a BCSR matrix into nparts bands of consecutive block rows. */
void starpu_bcsr_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a BCSR matrix into its nnz blocks, as c x r matrices (nx = c, ld = c). Set get_nchildren and get_child_ops to the two functions below. */
void starpu_bcsr_filter_canonical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Number of children of starpu_bcsr_filter_canonical_block(): the number of blocks. */
unsigned starpu_bcsr_filter_canonical_block_get_nchildren(struct starpu_data_filter *f, starpu_data_handle_t handle);
/** Child interface of starpu_bcsr_filter_canonical_block(): the matrix interface. */
struct starpu_data_interface_ops *starpu_bcsr_filter_canonical_block_child_ops(struct starpu_data_filter *f, unsigned child);

/* ------------------------------------------------------------ tensor filters */

/** Cuts a tensor along x into nparts sub-tensors (the last ones one element smaller when nparts does not divide nx). */
void starpu_tensor_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_tensor_filter_block() with a shadow (filter_arg_ptr) border along x. Read-only use. */
void starpu_tensor_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a tensor along y. */
void starpu_tensor_filter_vertical_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_tensor_filter_vertical_block() with a shadow (filter_arg_ptr) border along y. Read-only use. */
void starpu_tensor_filter_vertical_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a tensor along z. */
void starpu_tensor_filter_depth_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_tensor_filter_depth_block() with a shadow (filter_arg_ptr) border along z. Read-only use. */
void starpu_tensor_filter_depth_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a tensor along t. */
void starpu_tensor_filter_time_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_tensor_filter_time_block() with a shadow (filter_arg_ptr) border along t. Read-only use. */
void starpu_tensor_filter_time_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Picks nparts consecutive blocks (x, y, z) along t, from the t given as the filter_arg_ptr value (cast to a pointer). Set get_child_ops to starpu_tensor_filter_pick_block_child_ops. */
void starpu_tensor_filter_pick_block_t(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Picks nparts consecutive blocks (x, y, t) along z, from the z given as the filter_arg_ptr value. */
void starpu_tensor_filter_pick_block_z(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Picks nparts consecutive blocks (x, z, t) along y, from the y given as the filter_arg_ptr value. */
void starpu_tensor_filter_pick_block_y(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Child interface of the starpu_tensor_filter_pick_block_* filters: the block interface. */
struct starpu_data_interface_ops *starpu_tensor_filter_pick_block_child_ops(struct starpu_data_filter *f, unsigned child);
/** Picks nparts consecutive elements along t as variables, from the position filter_arg_ptr points to (uint32_t[4]: x, y, z, t). Set get_child_ops to starpu_tensor_filter_pick_variable_child_ops. */
void starpu_tensor_filter_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Child interface of starpu_tensor_filter_pick_variable(): the variable interface. */
struct starpu_data_interface_ops *starpu_tensor_filter_pick_variable_child_ops(struct starpu_data_filter *f, unsigned child);

/* -------------------------------------------------------------- ndim filters */

/** Cuts an ndim array into nparts along dimension filter_arg (the last parts one element smaller when nparts does not divide it). */
void starpu_ndim_filter_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_ndim_filter_block() with a shadow (filter_arg_ptr) border along that dimension. Read-only use. */
void starpu_ndim_filter_block_shadow(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a 4-dimensional array along dimension filter_arg into tensors. Set get_child_ops to starpu_ndim_filter_to_tensor_child_ops. */
void starpu_ndim_filter_to_tensor(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a 3-dimensional array along dimension filter_arg into blocks. Set get_child_ops to starpu_ndim_filter_to_block_child_ops. */
void starpu_ndim_filter_to_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a 2-dimensional array along dimension filter_arg into matrices. Set get_child_ops to starpu_ndim_filter_to_matrix_child_ops. */
void starpu_ndim_filter_to_matrix(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Cuts a 1-dimensional array into vectors. Set get_child_ops to starpu_ndim_filter_to_vector_child_ops. */
void starpu_ndim_filter_to_vector(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Turns a 0-dimensional array into a variable (nparts 1). Set get_child_ops to starpu_ndim_filter_to_variable_child_ops. */
void starpu_ndim_filter_to_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Picks nparts consecutive (n-1)-dimensional arrays along dimension filter_arg, from the index given as the filter_arg_ptr value (cast to a pointer). */
void starpu_ndim_filter_pick_ndim(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_ndim_filter_pick_ndim() on a 5-dimensional array, giving tensors. Set get_child_ops to starpu_ndim_filter_pick_tensor_child_ops. */
void starpu_ndim_filter_5d_pick_tensor(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_ndim_filter_pick_ndim() on a 4-dimensional array, giving blocks. Set get_child_ops to starpu_ndim_filter_pick_block_child_ops. */
void starpu_ndim_filter_4d_pick_block(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_ndim_filter_pick_ndim() on a 3-dimensional array, giving matrices. Set get_child_ops to starpu_ndim_filter_pick_matrix_child_ops. */
void starpu_ndim_filter_3d_pick_matrix(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** As starpu_ndim_filter_pick_ndim() on a 2-dimensional array, giving vectors. Set get_child_ops to starpu_ndim_filter_pick_vector_child_ops. */
void starpu_ndim_filter_2d_pick_vector(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Picks nparts consecutive elements of a 1-dimensional array as variables, from the index given as the filter_arg_ptr value. Set get_child_ops to starpu_ndim_filter_pick_variable_child_ops. */
void starpu_ndim_filter_1d_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Picks nparts consecutive elements along the last dimension as variables, from the position filter_arg_ptr points to (uint32_t[ndim]). Set get_child_ops to starpu_ndim_filter_pick_variable_child_ops. */
void starpu_ndim_filter_pick_variable(void *father_interface, void *child_interface, struct starpu_data_filter *f, unsigned id, unsigned nparts);
/** Child interfaces of the ndim filters that change the interface. */
struct starpu_data_interface_ops *starpu_ndim_filter_pick_tensor_child_ops(struct starpu_data_filter *f, unsigned child);
/** get_child_ops of the ndim filters that pick blocks: the block interface. */
struct starpu_data_interface_ops *starpu_ndim_filter_pick_block_child_ops(struct starpu_data_filter *f, unsigned child);
/** get_child_ops of the ndim filters that pick matrices: the matrix interface. */
struct starpu_data_interface_ops *starpu_ndim_filter_pick_matrix_child_ops(struct starpu_data_filter *f, unsigned child);
/** get_child_ops of the ndim filters that pick vectors: the vector interface. */
struct starpu_data_interface_ops *starpu_ndim_filter_pick_vector_child_ops(struct starpu_data_filter *f, unsigned child);
/** get_child_ops of the ndim filters that pick variables: the variable interface. */
struct starpu_data_interface_ops *starpu_ndim_filter_pick_variable_child_ops(struct starpu_data_filter *f, unsigned child);
/** get_child_ops of the filter that views a 4-dimensional ndim as a tensor. */
struct starpu_data_interface_ops *starpu_ndim_filter_to_tensor_child_ops(struct starpu_data_filter *f, unsigned child);
/** get_child_ops of the filter that views a 3-dimensional ndim as a block. */
struct starpu_data_interface_ops *starpu_ndim_filter_to_block_child_ops(struct starpu_data_filter *f, unsigned child);
/** get_child_ops of the filter that views a 2-dimensional ndim as a matrix. */
struct starpu_data_interface_ops *starpu_ndim_filter_to_matrix_child_ops(struct starpu_data_filter *f, unsigned child);
/** get_child_ops of the filter that views a 1-dimensional ndim as a vector. */
struct starpu_data_interface_ops *starpu_ndim_filter_to_vector_child_ops(struct starpu_data_filter *f, unsigned child);
/** get_child_ops of the filter that views a 0-dimensional ndim as a variable. */
struct starpu_data_interface_ops *starpu_ndim_filter_to_variable_child_ops(struct starpu_data_filter *f, unsigned child);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_DATA_FILTERS_H__ */
