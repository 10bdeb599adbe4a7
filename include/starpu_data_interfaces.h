/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Data interfaces of the StarPU API: variable, vector, matrix, and the ops a new interface provides. */
#ifndef __STARPU_DATA_INTERFACES_H__
#define __STARPU_DATA_INTERFACES_H__

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <starpu_config.h>
#include <starpu_data.h>
#include <starpu_util.h>
#include <starpu_stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Interface identifiers. */
enum starpu_data_interface_id
{
	STARPU_UNKNOWN_INTERFACE_ID = -1,
	STARPU_MATRIX_INTERFACE_ID = 0,
	STARPU_BLOCK_INTERFACE_ID = 1,
	STARPU_VECTOR_INTERFACE_ID = 2,
	STARPU_CSR_INTERFACE_ID = 3,
	STARPU_BCSR_INTERFACE_ID = 4,
	STARPU_VARIABLE_INTERFACE_ID = 5,
	STARPU_VOID_INTERFACE_ID = 6,
	STARPU_MULTIFORMAT_INTERFACE_ID = 7,
	STARPU_COO_INTERFACE_ID = 8,
	STARPU_TENSOR_INTERFACE_ID = 9,
	STARPU_NDIM_INTERFACE_ID = 10,
	STARPU_MAX_INTERFACE_ID = 11
};

/* The completion objects of the asynchronous copy methods, declared without
 * the OpenCL and CUDA headers (the same types as cl_event and cudaStream_t). */
struct _cl_event;
struct CUstream_st;

/**
 * How an interface copies its data between two memory nodes. The kernel
 * uses the method of the pair of node kinds when the interface gives it,
 * any_to_any otherwise. Each returns 0 (or -EAGAIN from an asynchronous
 * form, whose copy then completes with its event or stream).
 */
struct starpu_data_copy_methods
{
	/** 0 when the pair of nodes cannot be copied between directly (NULL: it can). */
	int (*can_copy)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, unsigned handling_node);
	int (*ram_to_ram)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*ram_to_cuda)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*ram_to_hip)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*ram_to_opencl)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*ram_to_max_fpga)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*cuda_to_ram)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*cuda_to_cuda)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*hip_to_ram)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*hip_to_hip)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*opencl_to_ram)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*opencl_to_opencl)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*max_fpga_to_ram)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*ram_to_cuda_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, struct CUstream_st *stream);
	int (*cuda_to_ram_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, struct CUstream_st *stream);
	int (*cuda_to_cuda_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, struct CUstream_st *stream);
	int (*ram_to_hip_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, void *stream);
	int (*hip_to_ram_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, void *stream);
	int (*hip_to_hip_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, void *stream);
	int (*ram_to_opencl_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, struct _cl_event **event);
	int (*opencl_to_ram_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, struct _cl_event **event);
	int (*opencl_to_opencl_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, struct _cl_event **event);
	int (*ram_to_max_fpga_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*max_fpga_to_ram_async)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	/** Any pair of nodes, through starpu_interface_copy(); async_data NULL: synchronous. */
	int (*any_to_any)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node, void *async_data);
};

/**
 * What the runtime needs to know of a data layout. An interface struct is
 * interface_size bytes and starts with its enum starpu_data_interface_id.
 */
struct starpu_data_interface_ops
{
	/** Fills the interface of every node from the home node's one (ptr only on home_node). */
	void (*register_data_handle)(starpu_data_handle_t handle, int home_node, void *data_interface);
	/** Allocates the buffer on node (with starpu_malloc_on_node()); returns the bytes allocated or -ENOMEM. */
	starpu_ssize_t (*allocate_data_on_node)(void *data_interface, unsigned node);
	/** Frees the buffer on node. */
	void (*free_data_on_node)(void *data_interface, unsigned node);
	/** How the data is copied between nodes (the kernel picks the method of each pair of node kinds). */
	const struct starpu_data_copy_methods *copy_methods;
	/** Pointer to the data on node. */
	void *(*to_pointer)(void *data_interface, unsigned node);
	/** Size of the data in bytes. */
	size_t (*get_size)(starpu_data_handle_t handle);
	/** Bytes allocated for the data (may exceed get_size()). */
	size_t (*get_alloc_size)(starpu_data_handle_t handle);
	/** Hash of the sizes, for performance models. */
	uint32_t (*footprint)(starpu_data_handle_t handle);
	/** 1 when two interfaces describe the same layout. */
	int (*compare)(void *data_interface_a, void *data_interface_b);
	/** Prints a short description of the layout. */
	void (*display)(starpu_data_handle_t handle, FILE *f);
	/** Writes a short description into buf, returns its length. */
	starpu_ssize_t (*describe)(void *data_interface, char *buf, size_t size);
	/** The interface id. */
	enum starpu_data_interface_id interfaceid;
	/** Size of the interface struct. */
	size_t interface_size;
	/** Name of the interface, as shown by tools. */
	const char *name;

	/* Since issue 23: */
	/** Frees what register_data_handle allocated in the interfaces of every node (the buffers are already freed). */
	void (*unregister_data_handle)(starpu_data_handle_t handle);
	/** Called on the interface of every node at registration, before register_data_handle. */
	void (*init)(void *data_interface);
	/** Pointer to the data on node, where to_pointer is not given (deprecated in StarPU). */
	void *(*handle_to_pointer)(starpu_data_handle_t handle, unsigned node);
	/** Largest size the data may grow to (starpu_data_get_max_size()); get_size when not given. */
	size_t (*get_max_size)(starpu_data_handle_t handle);
	/** Non-zero: a freed device buffer is never kept for another handle (layouts with their own metadata). */
	char dontcache;
	/** Non-zero for the multiformat interface. */
	char is_multiformat;
	/** The multiformat ops of a multiformat interface. */
	struct starpu_multiformat_data_interface_ops *(*get_mf_ops)(void *data_interface);
	/**
	 * Packs the data on node into a new buffer from starpu_malloc_flags(ptr, count, 0),
	 * returned in *ptr with its size in *count; with ptr NULL, only sets *count.
	 */
	int (*pack_data)(starpu_data_handle_t handle, unsigned node, void **ptr, starpu_ssize_t *count);
	/** Reads the data on node from the count bytes at ptr, made by pack_data. */
	int (*peek_data)(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count);
	/** As peek_data; the caller frees ptr afterwards. */
	int (*unpack_data)(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count);
	/** Frees the metadata an interface struct holds that is not registered (e.g. a filter's scratch child interface). */
	int (*free_meta)(void *data_interface);
	/**
	 * A buffer of src_interface on node goes to the allocation cache: moves its
	 * pointers (and what the comparison needs) into cached_interface. Without it
	 * the whole interface is copied.
	 */
	void (*cache_data_on_node)(void *cached_interface, void *src_interface, unsigned node);
	/** Installs the cached buffer of cached_interface into dst_data_interface on node. Without it the whole interface is copied. */
	void (*reuse_data_on_node)(void *dst_data_interface, const void *cached_interface, unsigned node);
	/** The allocation cache's footprint of the handle's buffers (footprint when not given). */
	uint32_t (*alloc_footprint)(starpu_data_handle_t handle);
	/** 1 when a buffer allocated for one interface fits the other (compare when not given). */
	int (*alloc_compare)(void *data_interface_a, void *data_interface_b);
	/** 1 when ptr lies within the data of the interface on node, 0 when not (starpu_data_pointer_is_inside()). */
	int (*pointer_is_inside)(void *data_interface, unsigned node, void *ptr);
	/** Packs the interface itself (its dynamic description) into a new buffer; for master-slave runs, which Astrolabe has not. */
	int (*pack_meta)(void *data_interface, void **ptr, starpu_ssize_t *count);
	/** Unpacks an interface packed by pack_meta; for master-slave runs, which Astrolabe has not. */
	int (*unpack_meta)(void **data_interface, void *ptr, starpu_ssize_t *count);
	/** Mapping methods (StarPU maps data between nodes that share memory); Astrolabe copies instead, never calls them. */
	int (*map_data)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*unmap_data)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	int (*update_map)(void *src_interface, unsigned src_node, void *dst_interface, unsigned dst_node);
	/** Room for growth. */
	void *reserved[6];
};

/** Registers a handle of any interface; data_interface describes the data on home_node. */
void starpu_data_register(starpu_data_handle_t *handleptr, int home_node, void *data_interface, struct starpu_data_interface_ops *ops);
/** Tells the runtime that the program sets handle's buffer on node itself
 * (right after registering, before the interface's pointers are set there, as
 * the starpu_*_ptr_register() helpers do): the buffer counts as allocated on
 * node and stays the program's (never freed nor evicted). Refused, with an
 * error, when handle already has a buffer on node. */
void starpu_data_ptr_register(starpu_data_handle_t handle, unsigned node);
/** Registers a handle with the same layout as handlesrc, with no valid copy. */
void starpu_data_register_same(starpu_data_handle_t *handledst, starpu_data_handle_t handlesrc);
/** Interface struct of handle on node. */
void *starpu_data_get_interface_on_node(starpu_data_handle_t handle, unsigned memory_node);
/** 1 when handle has a buffer on memory_node (registered there or allocated since), else 0. */
unsigned starpu_data_test_if_allocated_on_node(starpu_data_handle_t handle, unsigned memory_node);
/** Interface ops of handle. */
struct starpu_data_interface_ops *starpu_data_get_interface_ops(starpu_data_handle_t handle);
/** Gives ops a fresh interface id when its interfaceid is STARPU_UNKNOWN_INTERFACE_ID (starpu_data_register() does it too). */
void starpu_data_register_ops(struct starpu_data_interface_ops *ops);
/** A new interface id, above the built-in ones, for an interface the application defines. */
int starpu_data_interface_get_next_id(void);
/** Prints on stream what handle is (its interface's name and size) and the state of its copy
 * on memory node node (valid, allocated only, or none), on one line. */
void starpu_data_print(starpu_data_handle_t handle, unsigned node, FILE *stream);
/** Copies size bytes from src + src_offset on src_node to dst + dst_offset on dst_node (e.g. in
 * an interface's any_to_any copy method): 0 when done, -EAGAIN when a device copy is left under
 * way in async_data (the kernel's, within a handle's transfer), a negative errno (said) otherwise. */
int starpu_interface_copy(uintptr_t src, size_t src_offset, unsigned src_node,
			  uintptr_t dst, size_t dst_offset, unsigned dst_node,
			  size_t size, void *async_data);
/** Copies numblocks blocks of blocksize bytes, ld_src bytes apart in the source and ld_dst
 * in the destination, with starpu_interface_copy() (one copy when both are contiguous):
 * 0 when done, -EAGAIN when left under way in async_data. */
int starpu_interface_copy2d(uintptr_t src, size_t src_offset, unsigned src_node,
			    uintptr_t dst, size_t dst_offset, unsigned dst_node,
			    size_t blocksize, size_t numblocks, size_t ld_src, size_t ld_dst, void *async_data);
/** starpu_interface_copy2d() repeated numblocks2 times, ld2_src / ld2_dst bytes apart. */
int starpu_interface_copy3d(uintptr_t src, size_t src_offset, unsigned src_node,
			    uintptr_t dst, size_t dst_offset, unsigned dst_node,
			    size_t blocksize, size_t numblocks1, size_t ld1_src, size_t ld1_dst,
			    size_t numblocks2, size_t ld2_src, size_t ld2_dst, void *async_data);
/** starpu_interface_copy3d() repeated numblocks3 times, ld3_src / ld3_dst bytes apart. */
int starpu_interface_copy4d(uintptr_t src, size_t src_offset, unsigned src_node,
			    uintptr_t dst, size_t dst_offset, unsigned dst_node,
			    size_t blocksize, size_t numblocks1, size_t ld1_src, size_t ld1_dst,
			    size_t numblocks2, size_t ld2_src, size_t ld2_dst,
			    size_t numblocks3, size_t ld3_src, size_t ld3_dst, void *async_data);
/** Tells the runtime that an interface's own copy method moved size bytes from
 * src_node to dst_node without starpu_interface_copy(): observers see the transfer. */
void starpu_interface_data_copy(unsigned src_node, unsigned dst_node, size_t size);
/** Copies nn[1] * ... * nn[ndim-1] blocks of nn[0] * elemsize contiguous bytes from
 * src_offset of src on src_node to dst_offset of dst on dst_node; along dimension i the
 * blocks start ldn_src[i] (ldn_dst[i]) elements apart. With starpu_interface_copy(): one
 * copy where the blocks are contiguous; -EAGAIN while an asynchronous copy (async_data) is
 * under way, 0 when done, a negative errno (said) on bad input. */
int starpu_interface_copynd(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset, unsigned dst_node,
			    size_t elemsize, size_t ndim, uint32_t *nn, uint32_t *ldn_src, uint32_t *ldn_dst, void *async_data);
/**
 * Packs handle's data on node into a new buffer (*ptr, freed with
 * starpu_free_flags(*ptr, *count, 0)) of *count bytes; with ptr NULL only
 * sets *count. The data must be valid on node (acquire it first). 0, or
 * -EINVAL / -ENOSYS when the interface has no pack_data.
 */
int starpu_data_pack_node(starpu_data_handle_t handle, unsigned node, void **ptr, starpu_ssize_t *count);
/** starpu_data_pack_node() on main memory. */
int starpu_data_pack(starpu_data_handle_t handle, void **ptr, starpu_ssize_t *count);
/** Reads handle's data on node from the count bytes at ptr (made by starpu_data_pack_node()). */
int starpu_data_peek_node(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count);
/** starpu_data_peek_node() on main memory. */
int starpu_data_peek(starpu_data_handle_t handle, void *ptr, size_t count);
/** As starpu_data_peek_node(), then frees ptr (count bytes, from starpu_data_pack_node()). */
int starpu_data_unpack_node(starpu_data_handle_t handle, unsigned node, void *ptr, size_t count);
/** starpu_data_unpack_node() on main memory. */
int starpu_data_unpack(starpu_data_handle_t handle, void *ptr, size_t count);
/** Largest size handle's data may grow to (its size for the fixed-size interfaces). */
starpu_ssize_t starpu_data_get_max_size(starpu_data_handle_t handle);
/** 1 when ptr lies within handle's data on node, 0 when not, -1 when its interface cannot tell (no pointer_is_inside). */
int starpu_data_pointer_is_inside(starpu_data_handle_t handle, unsigned node, void *ptr);

/* ---------------------------------------------------------------- variable */

/**
 * @name Mapping and an interface's own copies
 * Helpers for the map_data, unmap_data and update_map methods of
 * starpu_data_interface_ops, and for copy methods that start asynchronous
 * transfers themselves.
 * @{
 */
/** Address on dst_node of the size bytes at src + src_offset on src_node, for map_data;
 * *ret is 0, or -EIO when dst_node cannot address that memory in place (copy it then),
 * -EINVAL for a node that does not exist. */
uintptr_t starpu_interface_map(uintptr_t src, size_t src_offset, unsigned src_node, unsigned dst_node, size_t size, int *ret);
/** Undoes starpu_interface_map() (dst is what it returned), for unmap_data; 0 or a negative error. */
int starpu_interface_unmap(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, unsigned dst_node, size_t size);
/** Brings the mapped copy at dst + dst_offset on dst_node up to date with src + src_offset on
 * src_node, for update_map; 0 or a negative error. */
int starpu_interface_update_map(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset, unsigned dst_node, size_t size);
/** To call just before a copy method submits an asynchronous transfer from src_node to
 * dst_node; *start keeps the time, for starpu_interface_end_driver_copy_async(). */
void starpu_interface_start_driver_copy_async(unsigned src_node, unsigned dst_node, double *start);
/** To call just after the submission: a submission that took long (the data was not pinned,
 * so the transfer was synchronous) is said once. */
void starpu_interface_end_driver_copy_async(unsigned src_node, unsigned dst_node, double start);
/** @} */

/** A single element of elemsize bytes. */
struct starpu_variable_interface
{
	enum starpu_data_interface_id id;
	uintptr_t ptr;
	uintptr_t dev_handle;
	size_t offset;
	size_t elemsize;
};

extern struct starpu_data_interface_ops starpu_interface_variable_ops;
/** Registers the element at ptr (elemsize bytes) on home_node. A NULL ptr with home_node -1 lets the runtime allocate it. */
void starpu_variable_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, size_t size);
/** Sets the buffer of a variable handle on node (ptr, dev_handle, offset). */
void starpu_variable_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset);
/** Size in bytes of a variable handle's element. */
size_t starpu_variable_get_elemsize(starpu_data_handle_t handle);
/** Address of a variable handle's element on the calling worker's node. */
uintptr_t starpu_variable_get_local_ptr(starpu_data_handle_t handle);

/** Aborts, saying so, when interface is not a variable's (its id is not STARPU_VARIABLE_INTERFACE_ID); nothing with STARPU_NO_ASSERT. */
#define STARPU_VARIABLE_CHECK(interface) \
	STARPU_ASSERT_MSG(((struct starpu_variable_interface *)(interface))->id == STARPU_VARIABLE_INTERFACE_ID, "the data is not a variable")
#define STARPU_VARIABLE_GET_PTR(interface) (((struct starpu_variable_interface *)(interface))->ptr)
#define STARPU_VARIABLE_GET_ELEMSIZE(interface) (((struct starpu_variable_interface *)(interface))->elemsize)
#define STARPU_VARIABLE_GET_DEV_HANDLE(interface) (((struct starpu_variable_interface *)(interface))->dev_handle)
#define STARPU_VARIABLE_GET_OFFSET(interface) (((struct starpu_variable_interface *)(interface))->offset)

/* ------------------------------------------------------------------ vector */

/** nx elements of elemsize bytes. */
struct starpu_vector_interface
{
	enum starpu_data_interface_id id;
	uintptr_t ptr;
	uintptr_t dev_handle;
	size_t offset;
	uint32_t nx;
	size_t elemsize;
	uint32_t slice_base;
	size_t allocsize;
};

extern struct starpu_data_interface_ops starpu_interface_vector_ops;
/** Registers nx elements of elemsize bytes at ptr on home_node. */
void starpu_vector_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t nx, size_t elemsize);
/** As starpu_vector_data_register(), allocating allocsize bytes for each copy instead of nx * elemsize. */
void starpu_vector_data_register_allocsize(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t nx, size_t elemsize, size_t allocsize);
/** Sets the buffer of a vector handle on node. */
void starpu_vector_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset);
/** Number of elements of a vector handle. */
uint32_t starpu_vector_get_nx(starpu_data_handle_t handle);
/** Size in bytes of one element of a vector handle. */
size_t starpu_vector_get_elemsize(starpu_data_handle_t handle);
/** Bytes allocated for each copy of a vector handle. */
size_t starpu_vector_get_allocsize(starpu_data_handle_t handle);
/** Address of a vector handle's elements on the calling worker's node. */
uintptr_t starpu_vector_get_local_ptr(starpu_data_handle_t handle);

/** Aborts, saying so, when interface is not a vector's (its id is not STARPU_VECTOR_INTERFACE_ID); nothing with STARPU_NO_ASSERT. */
#define STARPU_VECTOR_CHECK(interface) \
	STARPU_ASSERT_MSG(((struct starpu_vector_interface *)(interface))->id == STARPU_VECTOR_INTERFACE_ID, "the data is not a vector")
#define STARPU_VECTOR_GET_PTR(interface) (((struct starpu_vector_interface *)(interface))->ptr)
#define STARPU_VECTOR_GET_DEV_HANDLE(interface) (((struct starpu_vector_interface *)(interface))->dev_handle)
#define STARPU_VECTOR_GET_OFFSET(interface) (((struct starpu_vector_interface *)(interface))->offset)
#define STARPU_VECTOR_GET_NX(interface) (((struct starpu_vector_interface *)(interface))->nx)
#define STARPU_VECTOR_GET_ELEMSIZE(interface) (((struct starpu_vector_interface *)(interface))->elemsize)
#define STARPU_VECTOR_GET_ALLOCSIZE(interface) (((struct starpu_vector_interface *)(interface))->allocsize)
#define STARPU_VECTOR_GET_SLICE_BASE(interface) (((struct starpu_vector_interface *)(interface))->slice_base)
/** Sets the number of elements of the vector interface (a partition filter's child, say). */
#define STARPU_VECTOR_SET_NX(interface, newnx) do { (((struct starpu_vector_interface *)(interface))->nx) = (newnx); } while (0)

/* ------------------------------------------------------------------ matrix */

/** nx x ny elements of elemsize bytes, column-major with leading dimension ld (in elements). */
struct starpu_matrix_interface
{
	enum starpu_data_interface_id id;
	uintptr_t ptr;
	uintptr_t dev_handle;
	size_t offset;
	uint32_t nx;
	uint32_t ny;
	uint32_t ld;
	size_t elemsize;
	size_t allocsize;
};

extern struct starpu_data_interface_ops starpu_interface_matrix_ops;
/** Registers an nx x ny matrix with leading dimension ld at ptr on home_node. */
void starpu_matrix_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ld, uint32_t nx, uint32_t ny, size_t elemsize);
/** As starpu_matrix_data_register(), allocating allocsize bytes for each copy. */
void starpu_matrix_data_register_allocsize(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ld, uint32_t nx, uint32_t ny, size_t elemsize, size_t allocsize);
/** Sets the buffer of a matrix handle on node, with its leading dimension there. */
void starpu_matrix_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset, uint32_t ld);
/** Number of rows (elements along x, the contiguous dimension) of a matrix handle. */
uint32_t starpu_matrix_get_nx(starpu_data_handle_t handle);
/** Number of columns (along y) of a matrix handle. */
uint32_t starpu_matrix_get_ny(starpu_data_handle_t handle);
/** Leading dimension (elements) of a matrix handle on the calling worker's node. */
uint32_t starpu_matrix_get_local_ld(starpu_data_handle_t handle);
/** Address of a matrix handle's elements on the calling worker's node. */
uintptr_t starpu_matrix_get_local_ptr(starpu_data_handle_t handle);
/** Size in bytes of one element of a matrix handle. */
size_t starpu_matrix_get_elemsize(starpu_data_handle_t handle);
/** Bytes allocated for each copy of a matrix handle. */
size_t starpu_matrix_get_allocsize(starpu_data_handle_t handle);

/** Aborts, saying so, when interface is not a matrix's (its id is not STARPU_MATRIX_INTERFACE_ID); nothing with STARPU_NO_ASSERT. */
#define STARPU_MATRIX_CHECK(interface) \
	STARPU_ASSERT_MSG(((struct starpu_matrix_interface *)(interface))->id == STARPU_MATRIX_INTERFACE_ID, "the data is not a matrix")
#define STARPU_MATRIX_GET_PTR(interface) (((struct starpu_matrix_interface *)(interface))->ptr)
#define STARPU_MATRIX_GET_DEV_HANDLE(interface) (((struct starpu_matrix_interface *)(interface))->dev_handle)
#define STARPU_MATRIX_GET_OFFSET(interface) (((struct starpu_matrix_interface *)(interface))->offset)
#define STARPU_MATRIX_GET_NX(interface) (((struct starpu_matrix_interface *)(interface))->nx)
#define STARPU_MATRIX_GET_NY(interface) (((struct starpu_matrix_interface *)(interface))->ny)
#define STARPU_MATRIX_GET_LD(interface) (((struct starpu_matrix_interface *)(interface))->ld)
#define STARPU_MATRIX_GET_ELEMSIZE(interface) (((struct starpu_matrix_interface *)(interface))->elemsize)
#define STARPU_MATRIX_GET_ALLOCSIZE(interface) (((struct starpu_matrix_interface *)(interface))->allocsize)
/** Set the number of elements along x, along y, and between the starts of two rows. */
#define STARPU_MATRIX_SET_NX(interface, newnx) do { (((struct starpu_matrix_interface *)(interface))->nx) = (newnx); } while (0)
#define STARPU_MATRIX_SET_NY(interface, newny) do { (((struct starpu_matrix_interface *)(interface))->ny) = (newny); } while (0)
#define STARPU_MATRIX_SET_LD(interface, newld) do { (((struct starpu_matrix_interface *)(interface))->ld) = (newld); } while (0)

/* ------------------------------------------------------------------- block */

/** nx x ny x nz elements of elemsize bytes; ldy elements between rows (y), ldz between planes (z). */
struct starpu_block_interface
{
	enum starpu_data_interface_id id;
	uintptr_t ptr;
	uintptr_t dev_handle;
	size_t offset;
	uint32_t nx;
	uint32_t ny;
	uint32_t nz;
	uint32_t ldy;
	uint32_t ldz;
	size_t elemsize;
};

extern struct starpu_data_interface_ops starpu_interface_block_ops;
/** Registers an nx x ny x nz block at ptr on home_node, with leading dimensions ldy (>= nx) and ldz (>= ldy * ny, in elements). */
void starpu_block_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ldy, uint32_t ldz, uint32_t nx, uint32_t ny, uint32_t nz, size_t elemsize);
/** Sets the buffer of handle on node. */
void starpu_block_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset, uint32_t ldy, uint32_t ldz);
/** Size along x (contiguous) of a block handle. */
uint32_t starpu_block_get_nx(starpu_data_handle_t handle);
/** Size along y of a block handle. */
uint32_t starpu_block_get_ny(starpu_data_handle_t handle);
/** Size along z of a block handle. */
uint32_t starpu_block_get_nz(starpu_data_handle_t handle);
/** Row stride (elements) on the calling worker's node. */
uint32_t starpu_block_get_local_ldy(starpu_data_handle_t handle);
/** Plane stride (elements) on the calling worker's node. */
uint32_t starpu_block_get_local_ldz(starpu_data_handle_t handle);
/** Address of a block handle's elements on the calling worker's node. */
uintptr_t starpu_block_get_local_ptr(starpu_data_handle_t handle);
/** Size in bytes of one element of a block handle. */
size_t starpu_block_get_elemsize(starpu_data_handle_t handle);

/** Aborts, saying so, when interface is not a block's (its id is not STARPU_BLOCK_INTERFACE_ID); nothing with STARPU_NO_ASSERT. */
#define STARPU_BLOCK_CHECK(interface) \
	STARPU_ASSERT_MSG(((struct starpu_block_interface *)(interface))->id == STARPU_BLOCK_INTERFACE_ID, "the data is not a block")
#define STARPU_BLOCK_GET_PTR(interface) (((struct starpu_block_interface *)(interface))->ptr)
#define STARPU_BLOCK_GET_DEV_HANDLE(interface) (((struct starpu_block_interface *)(interface))->dev_handle)
#define STARPU_BLOCK_GET_OFFSET(interface) (((struct starpu_block_interface *)(interface))->offset)
#define STARPU_BLOCK_GET_NX(interface) (((struct starpu_block_interface *)(interface))->nx)
#define STARPU_BLOCK_GET_NY(interface) (((struct starpu_block_interface *)(interface))->ny)
#define STARPU_BLOCK_GET_NZ(interface) (((struct starpu_block_interface *)(interface))->nz)
#define STARPU_BLOCK_GET_LDY(interface) (((struct starpu_block_interface *)(interface))->ldy)
#define STARPU_BLOCK_GET_LDZ(interface) (((struct starpu_block_interface *)(interface))->ldz)
#define STARPU_BLOCK_GET_ELEMSIZE(interface) (((struct starpu_block_interface *)(interface))->elemsize)

/* ------------------------------------------------------------------ tensor */

/** nx x ny x nz x nt elements of elemsize bytes; ldy, ldz and ldt elements between consecutive y, z and t. */
struct starpu_tensor_interface
{
	enum starpu_data_interface_id id;
	uintptr_t ptr;
	uintptr_t dev_handle;
	size_t offset;
	uint32_t nx;
	uint32_t ny;
	uint32_t nz;
	uint32_t nt;
	uint32_t ldy;
	uint32_t ldz;
	uint32_t ldt;
	size_t elemsize;
};

extern struct starpu_data_interface_ops starpu_interface_tensor_ops;
/** Registers an nx x ny x nz x nt tensor at ptr on home_node, with leading dimensions ldy >= nx, ldz >= ldy*ny, ldt >= ldz*nz (elements). */
void starpu_tensor_data_register(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ldy, uint32_t ldz, uint32_t ldt,
				 uint32_t nx, uint32_t ny, uint32_t nz, uint32_t nt, size_t elemsize);
/** Sets the buffer of handle on node. */
void starpu_tensor_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset,
				uint32_t ldy, uint32_t ldz, uint32_t ldt);
/** Size along x (contiguous) of a tensor handle. */
uint32_t starpu_tensor_get_nx(starpu_data_handle_t handle);
/** Size along y of a tensor handle. */
uint32_t starpu_tensor_get_ny(starpu_data_handle_t handle);
/** Size along z of a tensor handle. */
uint32_t starpu_tensor_get_nz(starpu_data_handle_t handle);
/** Size along t of a tensor handle. */
uint32_t starpu_tensor_get_nt(starpu_data_handle_t handle);
/** Strides (elements) on the calling worker's node. */
uint32_t starpu_tensor_get_local_ldy(starpu_data_handle_t handle);
/** Stride (elements) between z planes of a tensor handle on the calling worker's node. */
uint32_t starpu_tensor_get_local_ldz(starpu_data_handle_t handle);
/** Stride (elements) between t cubes of a tensor handle on the calling worker's node. */
uint32_t starpu_tensor_get_local_ldt(starpu_data_handle_t handle);
/** Address of a tensor handle's elements on the calling worker's node. */
uintptr_t starpu_tensor_get_local_ptr(starpu_data_handle_t handle);
/** Size in bytes of one element of a tensor handle. */
size_t starpu_tensor_get_elemsize(starpu_data_handle_t handle);

/** Aborts, saying so, when interface is not a tensor's (its id is not STARPU_TENSOR_INTERFACE_ID); nothing with STARPU_NO_ASSERT. */
#define STARPU_TENSOR_CHECK(interface) \
	STARPU_ASSERT_MSG(((struct starpu_tensor_interface *)(interface))->id == STARPU_TENSOR_INTERFACE_ID, "the data is not a tensor")
#define STARPU_TENSOR_GET_PTR(interface) (((struct starpu_tensor_interface *)(interface))->ptr)
#define STARPU_TENSOR_GET_DEV_HANDLE(interface) (((struct starpu_tensor_interface *)(interface))->dev_handle)
#define STARPU_TENSOR_GET_OFFSET(interface) (((struct starpu_tensor_interface *)(interface))->offset)
#define STARPU_TENSOR_GET_NX(interface) (((struct starpu_tensor_interface *)(interface))->nx)
#define STARPU_TENSOR_GET_NY(interface) (((struct starpu_tensor_interface *)(interface))->ny)
#define STARPU_TENSOR_GET_NZ(interface) (((struct starpu_tensor_interface *)(interface))->nz)
#define STARPU_TENSOR_GET_NT(interface) (((struct starpu_tensor_interface *)(interface))->nt)
#define STARPU_TENSOR_GET_LDY(interface) (((struct starpu_tensor_interface *)(interface))->ldy)
#define STARPU_TENSOR_GET_LDZ(interface) (((struct starpu_tensor_interface *)(interface))->ldz)
#define STARPU_TENSOR_GET_LDT(interface) (((struct starpu_tensor_interface *)(interface))->ldt)
#define STARPU_TENSOR_GET_ELEMSIZE(interface) (((struct starpu_tensor_interface *)(interface))->elemsize)

/* -------------------------------------------------------------------- ndim */

/**
 * An n-dimensional dense array: nn[i] elements along dimension i, ldn[i]
 * elements between consecutive indices of dimension i (ldn[0] is 1). The
 * runtime keeps its own copies of nn and ldn.
 */
struct starpu_ndim_interface
{
	enum starpu_data_interface_id id;
	uintptr_t ptr;
	uintptr_t dev_handle;
	size_t offset;
	size_t allocsize;
	uint32_t *nn;
	uint32_t *ldn;
	size_t ndim;
	size_t elemsize;
};

extern struct starpu_data_interface_ops starpu_interface_ndim_ops;
/** Registers the ndim-dimensional array at ptr on home_node (ndim up to 16; ldn[i] >= ldn[i-1] * nn[i-1]). */
void starpu_ndim_data_register(starpu_data_handle_t *handleptr, int home_node, uintptr_t ptr, uint32_t *ldn, uint32_t *nn, size_t ndim, size_t elemsize);
/** Sets the buffer of handle on node, with strides ldn. */
void starpu_ndim_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset, uint32_t *ldn);
/** The sizes along each dimension (the runtime's array: do not free). */
uint32_t *starpu_ndim_get_nn(starpu_data_handle_t handle);
/** The size along dimension i. */
uint32_t starpu_ndim_get_ni(starpu_data_handle_t handle, size_t i);
/** The strides on the calling worker's node. */
uint32_t *starpu_ndim_get_local_ldn(starpu_data_handle_t handle);
/** The stride of dimension i on the calling worker's node. */
uint32_t starpu_ndim_get_local_ldi(starpu_data_handle_t handle, size_t i);
/** Address of an ndim handle's elements on the calling worker's node. */
uintptr_t starpu_ndim_get_local_ptr(starpu_data_handle_t handle);
/** Number of dimensions of an ndim handle. */
size_t starpu_ndim_get_ndim(starpu_data_handle_t handle);
/** Size in bytes of one element of an ndim handle. */
size_t starpu_ndim_get_elemsize(starpu_data_handle_t handle);

/** Aborts, saying so, when interface is not a ndim's (its id is not STARPU_NDIM_INTERFACE_ID); nothing with STARPU_NO_ASSERT. */
#define STARPU_NDIM_CHECK(interface) \
	STARPU_ASSERT_MSG(((struct starpu_ndim_interface *)(interface))->id == STARPU_NDIM_INTERFACE_ID, "the data is not a ndim")
#define STARPU_NDIM_GET_PTR(interface) (((struct starpu_ndim_interface *)(interface))->ptr)
#define STARPU_NDIM_GET_DEV_HANDLE(interface) (((struct starpu_ndim_interface *)(interface))->dev_handle)
#define STARPU_NDIM_GET_OFFSET(interface) (((struct starpu_ndim_interface *)(interface))->offset)
#define STARPU_NDIM_GET_NN(interface) (((struct starpu_ndim_interface *)(interface))->nn)
#define STARPU_NDIM_GET_LDN(interface) (((struct starpu_ndim_interface *)(interface))->ldn)
#define STARPU_NDIM_GET_NDIM(interface) (((struct starpu_ndim_interface *)(interface))->ndim)
#define STARPU_NDIM_GET_ELEMSIZE(interface) (((struct starpu_ndim_interface *)(interface))->elemsize)

/* --------------------------------------------------------------------- CSR */

/**
 * A sparse matrix in compressed sparse row form: nnz values, colind[k] the
 * column of value k, rowptr[i] the index of row i's first value (rowptr[nrow]
 * = nnz), all indices counted from firstentry. On a device, nzval, colind and
 * rowptr are the device's handles; ram_colind and ram_rowptr stay the arrays
 * in main memory.
 */
struct starpu_csr_interface
{
	enum starpu_data_interface_id id;
	uint32_t nnz;
	uint32_t nrow;
	uintptr_t nzval;
	uint32_t *colind;
	uint32_t *rowptr;
	uint32_t *ram_colind;
	uint32_t *ram_rowptr;
	uint32_t firstentry;
	size_t elemsize;
};

extern struct starpu_data_interface_ops starpu_interface_csr_ops;
/** Registers the CSR matrix of nnz values of elemsize bytes at nzval, with colind (nnz) and rowptr (nrow + 1) arrays, on home_node. */
void starpu_csr_data_register(starpu_data_handle_t *handle, int home_node, uint32_t nnz, uint32_t nrow, uintptr_t nzval, uint32_t *colind,
			      uint32_t *rowptr, uint32_t firstentry, size_t elemsize);
/** Number of non-zero values of a CSR handle. */
uint32_t starpu_csr_get_nnz(starpu_data_handle_t handle);
/** Number of rows of a CSR handle. */
uint32_t starpu_csr_get_nrow(starpu_data_handle_t handle);
/** Index of the first entry (0 or 1 based numbering) of a CSR handle. */
uint32_t starpu_csr_get_firstentry(starpu_data_handle_t handle);
/** The arrays on the calling worker's node. */
uintptr_t starpu_csr_get_local_nzval(starpu_data_handle_t handle);
/** Column indices of a CSR handle on the calling worker's node. */
uint32_t *starpu_csr_get_local_colind(starpu_data_handle_t handle);
/** Row pointers of a CSR handle on the calling worker's node. */
uint32_t *starpu_csr_get_local_rowptr(starpu_data_handle_t handle);
/** Size in bytes of one value of a CSR handle. */
size_t starpu_csr_get_elemsize(starpu_data_handle_t handle);

#define STARPU_CSR_GET_NNZ(interface) (((struct starpu_csr_interface *)(interface))->nnz)
#define STARPU_CSR_GET_NROW(interface) (((struct starpu_csr_interface *)(interface))->nrow)
#define STARPU_CSR_GET_NZVAL(interface) (((struct starpu_csr_interface *)(interface))->nzval)
#define STARPU_CSR_GET_NZVAL_DEV_HANDLE(interface) (((struct starpu_csr_interface *)(interface))->nzval)
#define STARPU_CSR_GET_COLIND(interface) (((struct starpu_csr_interface *)(interface))->colind)
#define STARPU_CSR_GET_RAM_COLIND(interface) (((struct starpu_csr_interface *)(interface))->ram_colind)
#define STARPU_CSR_GET_COLIND_DEV_HANDLE(interface) (((struct starpu_csr_interface *)(interface))->colind)
#define STARPU_CSR_GET_ROWPTR(interface) (((struct starpu_csr_interface *)(interface))->rowptr)
#define STARPU_CSR_GET_RAM_ROWPTR(interface) (((struct starpu_csr_interface *)(interface))->ram_rowptr)
#define STARPU_CSR_GET_ROWPTR_DEV_HANDLE(interface) (((struct starpu_csr_interface *)(interface))->rowptr)
#define STARPU_CSR_GET_OFFSET 0
#define STARPU_CSR_GET_FIRSTENTRY(interface) (((struct starpu_csr_interface *)(interface))->firstentry)
#define STARPU_CSR_GET_ELEMSIZE(interface) (((struct starpu_csr_interface *)(interface))->elemsize)

/* -------------------------------------------------------------------- BCSR */

/**
 * A block-sparse matrix: as CSR, with nnz blocks of r x c elements (each
 * block row-major) instead of values, and nrow rows of blocks.
 */
struct starpu_bcsr_interface
{
	enum starpu_data_interface_id id;
	uint32_t nnz;
	uint32_t nrow;
	uintptr_t nzval;
	uint32_t *colind;
	uint32_t *rowptr;
	uint32_t *ram_colind;
	uint32_t *ram_rowptr;
	uint32_t firstentry;
	uint32_t r;
	uint32_t c;
	size_t elemsize;
};

extern struct starpu_data_interface_ops starpu_interface_bcsr_ops;
/** Registers the BCSR matrix of nnz r x c blocks at nzval, with colind (nnz) and rowptr (nrow + 1) arrays, on home_node. */
void starpu_bcsr_data_register(starpu_data_handle_t *handle, int home_node, uint32_t nnz, uint32_t nrow, uintptr_t nzval, uint32_t *colind,
			       uint32_t *rowptr, uint32_t firstentry, uint32_t r, uint32_t c, size_t elemsize);
/** Number of non-zero blocks of a BCSR handle. */
uint32_t starpu_bcsr_get_nnz(starpu_data_handle_t handle);
/** Number of block rows of a BCSR handle. */
uint32_t starpu_bcsr_get_nrow(starpu_data_handle_t handle);
/** Index of the first entry (0 or 1 based numbering) of a BCSR handle. */
uint32_t starpu_bcsr_get_firstentry(starpu_data_handle_t handle);
/** Address of the non-zero blocks of a BCSR handle on the calling worker's node. */
uintptr_t starpu_bcsr_get_local_nzval(starpu_data_handle_t handle);
/** Block column indices of a BCSR handle on the calling worker's node. */
uint32_t *starpu_bcsr_get_local_colind(starpu_data_handle_t handle);
/** Block row pointers of a BCSR handle on the calling worker's node. */
uint32_t *starpu_bcsr_get_local_rowptr(starpu_data_handle_t handle);
/** Rows of each block of a BCSR handle. */
uint32_t starpu_bcsr_get_r(starpu_data_handle_t handle);
/** Columns of each block of a BCSR handle. */
uint32_t starpu_bcsr_get_c(starpu_data_handle_t handle);
/** Size in bytes of one value of a BCSR handle. */
size_t starpu_bcsr_get_elemsize(starpu_data_handle_t handle);

#define STARPU_BCSR_GET_NNZ(interface) (((struct starpu_bcsr_interface *)(interface))->nnz)
#define STARPU_BCSR_GET_NROW(interface) (((struct starpu_bcsr_interface *)(interface))->nrow)
#define STARPU_BCSR_GET_NZVAL(interface) (((struct starpu_bcsr_interface *)(interface))->nzval)
#define STARPU_BCSR_GET_NZVAL_DEV_HANDLE(interface) (((struct starpu_bcsr_interface *)(interface))->nzval)
#define STARPU_BCSR_GET_COLIND(interface) (((struct starpu_bcsr_interface *)(interface))->colind)
#define STARPU_BCSR_GET_RAM_COLIND(interface) (((struct starpu_bcsr_interface *)(interface))->ram_colind)
#define STARPU_BCSR_GET_COLIND_DEV_HANDLE(interface) (((struct starpu_bcsr_interface *)(interface))->colind)
#define STARPU_BCSR_GET_ROWPTR(interface) (((struct starpu_bcsr_interface *)(interface))->rowptr)
#define STARPU_BCSR_GET_RAM_ROWPTR(interface) (((struct starpu_bcsr_interface *)(interface))->ram_rowptr)
#define STARPU_BCSR_GET_ROWPTR_DEV_HANDLE(interface) (((struct starpu_bcsr_interface *)(interface))->rowptr)
#define STARPU_BCSR_GET_FIRSTENTRY(interface) (((struct starpu_bcsr_interface *)(interface))->firstentry)
#define STARPU_BCSR_GET_R(interface) (((struct starpu_bcsr_interface *)(interface))->r)
#define STARPU_BCSR_GET_C(interface) (((struct starpu_bcsr_interface *)(interface))->c)
#define STARPU_BCSR_GET_ELEMSIZE(interface) (((struct starpu_bcsr_interface *)(interface))->elemsize)
#define STARPU_BCSR_GET_OFFSET 0

/* --------------------------------------------------------------------- COO */

/** An nx x ny sparse matrix in coordinate form: value k (elemsize bytes) is at column columns[k], row rows[k]. */
struct starpu_coo_interface
{
	enum starpu_data_interface_id id;
	uint32_t *columns;
	uint32_t *rows;
	uintptr_t values;
	uint32_t nx;
	uint32_t ny;
	uint32_t n_values;
	size_t elemsize;
};

extern struct starpu_data_interface_ops starpu_interface_coo_ops;
/** Registers the nx x ny COO matrix of n_values values at values, with their columns and rows, on home_node. */
void starpu_coo_data_register(starpu_data_handle_t *handleptr, int home_node, uint32_t nx, uint32_t ny, uint32_t n_values,
			      uint32_t *columns, uint32_t *rows, uintptr_t values, size_t elemsize);

#define STARPU_COO_GET_COLUMNS(interface) (((struct starpu_coo_interface *)(interface))->columns)
#define STARPU_COO_GET_COLUMNS_DEV_HANDLE(interface) (((struct starpu_coo_interface *)(interface))->columns)
#define STARPU_COO_GET_ROWS(interface) (((struct starpu_coo_interface *)(interface))->rows)
#define STARPU_COO_GET_ROWS_DEV_HANDLE(interface) (((struct starpu_coo_interface *)(interface))->rows)
#define STARPU_COO_GET_VALUES(interface) (((struct starpu_coo_interface *)(interface))->values)
#define STARPU_COO_GET_VALUES_DEV_HANDLE(interface) (((struct starpu_coo_interface *)(interface))->values)
#define STARPU_COO_GET_OFFSET 0
#define STARPU_COO_GET_NX(interface) (((struct starpu_coo_interface *)(interface))->nx)
#define STARPU_COO_GET_NY(interface) (((struct starpu_coo_interface *)(interface))->ny)
#define STARPU_COO_GET_NVALUES(interface) (((struct starpu_coo_interface *)(interface))->n_values)
#define STARPU_COO_GET_ELEMSIZE(interface) (((struct starpu_coo_interface *)(interface))->elemsize)

/* ------------------------------------------------------------- multiformat */

/**
 * How a multiformat datum looks on each kind of processing unit: the size
 * of one element in each format, and the codelets converting between the
 * CPU format and a device's. A conversion codelet gets one RW buffer, the
 * device's multiformat interface holding both formats (cpu_ptr and the
 * device's pointer), and its device implementation converts between them.
 */
struct starpu_multiformat_data_interface_ops
{
	size_t cpu_elemsize;
	size_t opencl_elemsize;
	struct starpu_codelet *cpu_to_opencl_cl;
	struct starpu_codelet *opencl_to_cpu_cl;
	size_t cuda_elemsize;
	struct starpu_codelet *cpu_to_cuda_cl;
	struct starpu_codelet *cuda_to_cpu_cl;
};

/** nx elements, in CPU format at cpu_ptr and in a device's format at its pointer (device handles on a device). */
struct starpu_multiformat_interface
{
	enum starpu_data_interface_id id;
	void *cpu_ptr;
	void *cuda_ptr;
	void *hip_ptr;
	void *opencl_ptr;
	uint32_t nx;
	struct starpu_multiformat_data_interface_ops *ops;
};

extern struct starpu_data_interface_ops starpu_interface_multiformat_ops;
/**
 * Registers nobjects elements in CPU format at ptr on home_node. A task on a
 * device gets them in that device's format: the runtime runs the format's
 * conversion codelet there after bringing the data, and the reverse one
 * after a task that wrote it.
 */
void starpu_multiformat_data_register(starpu_data_handle_t *handle, int home_node, void *ptr, uint32_t nobjects,
				      struct starpu_multiformat_data_interface_ops *format_ops);

#define STARPU_MULTIFORMAT_GET_CPU_PTR(interface) (((struct starpu_multiformat_interface *)(interface))->cpu_ptr)
#define STARPU_MULTIFORMAT_GET_CUDA_PTR(interface) (((struct starpu_multiformat_interface *)(interface))->cuda_ptr)
#define STARPU_MULTIFORMAT_GET_HIP_PTR(interface) (((struct starpu_multiformat_interface *)(interface))->hip_ptr)
#define STARPU_MULTIFORMAT_GET_OPENCL_PTR(interface) (((struct starpu_multiformat_interface *)(interface))->opencl_ptr)
#define STARPU_MULTIFORMAT_GET_NX(interface) (((struct starpu_multiformat_interface *)(interface))->nx)

/* -------------------------------------------------------------------- void */

extern struct starpu_data_interface_ops starpu_interface_void_ops;
/** Registers a handle with no content, used only to express dependencies. */
void starpu_void_data_register(starpu_data_handle_t *handle);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_DATA_INTERFACES_H__ */
