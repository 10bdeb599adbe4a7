/* Data interfaces of the StarPU API: variable, vector, matrix, and the ops a new interface provides. */
#ifndef __STARPU_DATA_INTERFACES_H__
#define __STARPU_DATA_INTERFACES_H__

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <starpu_config.h>
#include <starpu_data.h>

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
	/** Room for growth. */
	void *reserved[8];
};

/** Registers a handle of any interface; data_interface describes the data on home_node. */
void starpu_data_register(starpu_data_handle_t *handleptr, int home_node, void *data_interface, struct starpu_data_interface_ops *ops);
/** Registers a handle with the same layout as handlesrc, with no valid copy. */
void starpu_data_register_same(starpu_data_handle_t *handledst, starpu_data_handle_t handlesrc);
/** Interface struct of handle on node. */
void *starpu_data_get_interface_on_node(starpu_data_handle_t handle, unsigned memory_node);
/** Interface ops of handle. */
struct starpu_data_interface_ops *starpu_data_get_interface_ops(starpu_data_handle_t handle);

/* ---------------------------------------------------------------- variable */

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
void starpu_variable_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset);
size_t starpu_variable_get_elemsize(starpu_data_handle_t handle);
uintptr_t starpu_variable_get_local_ptr(starpu_data_handle_t handle);

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
void starpu_vector_data_register_allocsize(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t nx, size_t elemsize, size_t allocsize);
void starpu_vector_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset);
uint32_t starpu_vector_get_nx(starpu_data_handle_t handle);
size_t starpu_vector_get_elemsize(starpu_data_handle_t handle);
size_t starpu_vector_get_allocsize(starpu_data_handle_t handle);
uintptr_t starpu_vector_get_local_ptr(starpu_data_handle_t handle);

#define STARPU_VECTOR_GET_PTR(interface) (((struct starpu_vector_interface *)(interface))->ptr)
#define STARPU_VECTOR_GET_DEV_HANDLE(interface) (((struct starpu_vector_interface *)(interface))->dev_handle)
#define STARPU_VECTOR_GET_OFFSET(interface) (((struct starpu_vector_interface *)(interface))->offset)
#define STARPU_VECTOR_GET_NX(interface) (((struct starpu_vector_interface *)(interface))->nx)
#define STARPU_VECTOR_GET_ELEMSIZE(interface) (((struct starpu_vector_interface *)(interface))->elemsize)
#define STARPU_VECTOR_GET_ALLOCSIZE(interface) (((struct starpu_vector_interface *)(interface))->allocsize)
#define STARPU_VECTOR_GET_SLICE_BASE(interface) (((struct starpu_vector_interface *)(interface))->slice_base)

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
void starpu_matrix_data_register_allocsize(starpu_data_handle_t *handle, int home_node, uintptr_t ptr, uint32_t ld, uint32_t nx, uint32_t ny, size_t elemsize, size_t allocsize);
void starpu_matrix_ptr_register(starpu_data_handle_t handle, unsigned node, uintptr_t ptr, uintptr_t dev_handle, size_t offset, uint32_t ld);
uint32_t starpu_matrix_get_nx(starpu_data_handle_t handle);
uint32_t starpu_matrix_get_ny(starpu_data_handle_t handle);
uint32_t starpu_matrix_get_local_ld(starpu_data_handle_t handle);
uintptr_t starpu_matrix_get_local_ptr(starpu_data_handle_t handle);
size_t starpu_matrix_get_elemsize(starpu_data_handle_t handle);
size_t starpu_matrix_get_allocsize(starpu_data_handle_t handle);

#define STARPU_MATRIX_GET_PTR(interface) (((struct starpu_matrix_interface *)(interface))->ptr)
#define STARPU_MATRIX_GET_DEV_HANDLE(interface) (((struct starpu_matrix_interface *)(interface))->dev_handle)
#define STARPU_MATRIX_GET_OFFSET(interface) (((struct starpu_matrix_interface *)(interface))->offset)
#define STARPU_MATRIX_GET_NX(interface) (((struct starpu_matrix_interface *)(interface))->nx)
#define STARPU_MATRIX_GET_NY(interface) (((struct starpu_matrix_interface *)(interface))->ny)
#define STARPU_MATRIX_GET_LD(interface) (((struct starpu_matrix_interface *)(interface))->ld)
#define STARPU_MATRIX_GET_ELEMSIZE(interface) (((struct starpu_matrix_interface *)(interface))->elemsize)
#define STARPU_MATRIX_GET_ALLOCSIZE(interface) (((struct starpu_matrix_interface *)(interface))->allocsize)

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
uint32_t starpu_block_get_nx(starpu_data_handle_t handle);
uint32_t starpu_block_get_ny(starpu_data_handle_t handle);
uint32_t starpu_block_get_nz(starpu_data_handle_t handle);
/** Row stride (elements) on the calling worker's node. */
uint32_t starpu_block_get_local_ldy(starpu_data_handle_t handle);
/** Plane stride (elements) on the calling worker's node. */
uint32_t starpu_block_get_local_ldz(starpu_data_handle_t handle);
uintptr_t starpu_block_get_local_ptr(starpu_data_handle_t handle);
size_t starpu_block_get_elemsize(starpu_data_handle_t handle);

#define STARPU_BLOCK_GET_PTR(interface) (((struct starpu_block_interface *)(interface))->ptr)
#define STARPU_BLOCK_GET_DEV_HANDLE(interface) (((struct starpu_block_interface *)(interface))->dev_handle)
#define STARPU_BLOCK_GET_OFFSET(interface) (((struct starpu_block_interface *)(interface))->offset)
#define STARPU_BLOCK_GET_NX(interface) (((struct starpu_block_interface *)(interface))->nx)
#define STARPU_BLOCK_GET_NY(interface) (((struct starpu_block_interface *)(interface))->ny)
#define STARPU_BLOCK_GET_NZ(interface) (((struct starpu_block_interface *)(interface))->nz)
#define STARPU_BLOCK_GET_LDY(interface) (((struct starpu_block_interface *)(interface))->ldy)
#define STARPU_BLOCK_GET_LDZ(interface) (((struct starpu_block_interface *)(interface))->ldz)
#define STARPU_BLOCK_GET_ELEMSIZE(interface) (((struct starpu_block_interface *)(interface))->elemsize)

/* -------------------------------------------------------------------- void */

extern struct starpu_data_interface_ops starpu_interface_void_ops;
/** Registers a handle with no content, used only to express dependencies. */
void starpu_void_data_register(starpu_data_handle_t *handle);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_DATA_INTERFACES_H__ */
