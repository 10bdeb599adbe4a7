/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The OpenCL helpers of the StarPU API: programs loaded on every OpenCL
 * device the runtime uses, their kernels, and the device's context and
 * queues. Available when Astrolabe was built with OpenCL
 * (STARPU_USE_OPENCL); starpu.h includes it then.
 */
#ifndef __STARPU_OPENCL_H__
#define __STARPU_OPENCL_H__

#include <starpu_config.h>
#ifdef STARPU_USE_OPENCL
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A program built for each OpenCL device of the runtime (index: the device id). */
struct starpu_opencl_program
{
	cl_program programs[STARPU_MAXOPENCLDEVS];
};

/** Prints one line naming the failed call (func, file, line), msg and the OpenCL status, then aborts, as StarPU. */
void starpu_opencl_report_error(const char *func, const char *file, int line, const char *msg, cl_int status);
#define STARPU_OPENCL_REPORT_ERROR(status) starpu_opencl_report_error(__func__, __FILE__, __LINE__, NULL, status)
#define STARPU_OPENCL_REPORT_ERROR_WITH_MSG(msg, status) starpu_opencl_report_error(__func__, __FILE__, __LINE__, msg, status)
/** Prints the OpenCL status like starpu_opencl_report_error() without aborting. */
void starpu_opencl_display_error(const char *func, const char *file, int line, const char *msg, cl_int status);
#define STARPU_OPENCL_DISPLAY_ERROR(status) starpu_opencl_display_error(__func__, __FILE__, __LINE__, NULL, status)
/** The name of an OpenCL status ("CL_INVALID_VALUE"). */
const char *starpu_opencl_error_string(cl_int status);

/** Builds the source for every OpenCL device; 0, or the OpenCL error (the build log is printed). */
int starpu_opencl_load_opencl_from_string(const char *opencl_program_source, struct starpu_opencl_program *opencl_programs,
					  const char *build_options);
/** The same with the source read from a file (looked up as is, then in STARPU_OPENCL_PROGRAM_DIR). */
int starpu_opencl_load_opencl_from_file(const char *source_file_name, struct starpu_opencl_program *opencl_programs,
					const char *build_options);
/** Releases what starpu_opencl_load_opencl_from_string/_file built. */
int starpu_opencl_unload_opencl(struct starpu_opencl_program *opencl_programs);
/** Reads source_file_name (as given, else in STARPU_OPENCL_PROGRAM_DIR) into the caller's buffer
 * opencl_program_source, with the path it was read from in located_file_name and its folder in
 * located_dir_name; all three empty strings (said) when it cannot be read. The buffers must be
 * large enough, as in StarPU; starpu_opencl_load_program_source_malloc() allocates them. */
void starpu_opencl_load_program_source(const char *source_file_name, char *located_file_name, char *located_dir_name,
				       char *opencl_program_source);
/** Reads source_file_name (as given, else in STARPU_OPENCL_PROGRAM_DIR) into a new string
 * *opencl_program_source; *located_file_name and *located_dir_name (with its final slash,
 * or empty) say where it was found. All three are the caller's to free, NULL when the file
 * cannot be read (said on stderr). */
void starpu_opencl_load_program_source_malloc(const char *source_file_name, char **located_file_name, char **located_dir_name,
					      char **opencl_program_source);
/** Builds the OpenCL source file for every OpenCL device and stores the binaries in
 * $STARPU_HOME/.starpu/opencl, named after the file and the device, for
 * starpu_opencl_load_binary_opencl(); 0 or an error. */
int starpu_opencl_compile_opencl_from_file(const char *source_file_name, const char *build_options);
/** As starpu_opencl_compile_opencl_from_file(), with the source in a string and file_name naming the binaries. */
int starpu_opencl_compile_opencl_from_string(const char *opencl_program_source, const char *file_name, const char *build_options);
/** Loads on every OpenCL device the binaries compiled for kernel_id (the file name given to
 * the compile functions) into opencl_programs; CL_SUCCESS or an error. */
int starpu_opencl_load_binary_opencl(const char *kernel_id, struct starpu_opencl_program *opencl_programs);
/** Creates kernel kernel_name of the program built for device devid, and gives that device's queue; CL_SUCCESS or the error. */
int starpu_opencl_load_kernel(cl_kernel *kernel, cl_command_queue *queue, struct starpu_opencl_program *opencl_programs,
			      const char *kernel_name, int devid);
/** Releases a kernel from starpu_opencl_load_kernel(). */
int starpu_opencl_release_kernel(cl_kernel kernel);

/** The context, device and queue of OpenCL device devid (the worker's device id, starpu_worker_get_devid()). */
void starpu_opencl_get_context(int devid, cl_context *context);
/** Gives the cl_device_id of OpenCL device devid. */
void starpu_opencl_get_device(int devid, cl_device_id *device);
/** Gives the command queue of OpenCL device devid. */
void starpu_opencl_get_queue(int devid, cl_command_queue *queue);
/** The same for the device of the calling OpenCL worker. */
void starpu_opencl_get_current_context(cl_context *context);
/** Gives the command queue of the calling OpenCL worker's device. */
void starpu_opencl_get_current_queue(cl_command_queue *queue);

/** Accounts the execution of event (a kernel the task enqueued) to the running task; CL_SUCCESS or the error. */
int starpu_opencl_collect_stats(cl_event event);

/** Sets the kernel's arguments from (size, pointer) pairs ending with 0; returns how many were set, *err the first error. */
int starpu_opencl_set_kernel_args(cl_int *err, cl_kernel *kernel, ...);

/** Allocates a buffer of size bytes on device devid. */
cl_int starpu_opencl_allocate_memory(int devid, cl_mem *addr, size_t size, cl_mem_flags flags);
/** Copies size bytes from ptr in RAM to offset of buffer on OpenCL node dst_node; asynchronous when event is given.
 * Returns CL_SUCCESS or an OpenCL error; *ret (if not NULL) gets -EAGAIN (copy launched, wait for event), 0 (done) or -EIO. */
cl_int starpu_opencl_copy_ram_to_opencl(void *ptr, unsigned src_node, cl_mem buffer, unsigned dst_node, size_t size,
					size_t offset, cl_event *event, int *ret);
/** Copies size bytes at offset of buffer on OpenCL node src_node to ptr in RAM; asynchronous when event is given;
 * *ret (if not NULL) gets -EAGAIN (copy launched), 0 (done) or -EIO. */
cl_int starpu_opencl_copy_opencl_to_ram(cl_mem buffer, unsigned src_node, void *ptr, unsigned dst_node, size_t size,
					size_t offset, cl_event *event, int *ret);

/** Copies size bytes from src_offset of src on OpenCL node src_node to dst_offset of dst on
 * dst_node, the same device (two devices have no direct path here: CL_INVALID_CONTEXT, said);
 * asynchronous when event is given; *ret as starpu_opencl_copy_ram_to_opencl(). */
cl_int starpu_opencl_copy_opencl_to_opencl(cl_mem src, unsigned src_node, size_t src_offset, cl_mem dst, unsigned dst_node,
					   size_t dst_offset, size_t size, cl_event *event, int *ret);
/** Copies size bytes between main memory and an OpenCL device, or within one device, whichever
 * src_node and dst_node are (src and dst: a pointer in main memory, a cl_mem on a device).
 * Returns -EAGAIN when launched asynchronously (event given), 0 when done, an OpenCL error otherwise. */
cl_int starpu_opencl_copy_async_sync(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset,
				     unsigned dst_node, size_t size, cl_event *event);

#ifdef __cplusplus
}
#endif

#endif /* STARPU_USE_OPENCL */
#endif /* __STARPU_OPENCL_H__ */
