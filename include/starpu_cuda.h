/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The CUDA helpers of the StarPU API that name CUDA types: the calling
 * worker's stream, and the error reports. Available when Astrolabe was built
 * with the CUDA toolkit (STARPU_USE_CUDA), unless the program defines
 * STARPU_DONT_INCLUDE_CUDA_HEADERS; starpu.h includes it.
 */
#ifndef __STARPU_CUDA_H__
#define __STARPU_CUDA_H__

#include <starpu_config.h>

#if defined STARPU_USE_CUDA && !defined STARPU_DONT_INCLUDE_CUDA_HEADERS
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
   The stream of the calling CUDA worker: a CUDA codelet queues its kernels
   and copies there (with STARPU_CUDA_ASYNC in cuda_flags, the task ends when
   they complete; otherwise too, the worker waits for the stream before it
   ends the task). NULL outside a CUDA worker.
*/
cudaStream_t starpu_cuda_get_local_stream(void);

/**
   Copies ssize bytes from src_ptr on memory node src_node to dst_ptr on
   dst_node (kind says which way, as for cudaMemcpy). Queued on stream and
   left under way when stream is not NULL and the launch succeeds: returns
   -EAGAIN, and the copy is complete once the stream is. Otherwise (stream
   NULL, or the launch failed) copies synchronously: returns 0. Returns a
   negative errno, said in one line, when the copy fails, when a node or a
   pointer is invalid, or when no CUDA worker runs (-ENODEV: no device here,
   STARPU_NCUDA=0, or outside starpu_init()/starpu_shutdown()).
*/
int starpu_cuda_copy_async_sync(void *src_ptr, unsigned src_node, void *dst_ptr, unsigned dst_node, size_t ssize, cudaStream_t stream,
				enum cudaMemcpyKind kind);

/**
   The same for numblocks blocks of blocksize bytes, which start ld_src bytes
   apart in the source and ld_dst bytes apart in the destination.
*/
int starpu_cuda_copy2d_async_sync(void *src_ptr, unsigned src_node, void *dst_ptr, unsigned dst_node, size_t blocksize, size_t numblocks,
				  size_t ld_src, size_t ld_dst, cudaStream_t stream, enum cudaMemcpyKind kind);

/**
   The same for numblocks_2 groups, ld2_src (ld2_dst) bytes apart, of
   numblocks_1 blocks of blocksize bytes, ld1_src (ld1_dst) bytes apart.
*/
int starpu_cuda_copy3d_async_sync(void *src_ptr, unsigned src_node, void *dst_ptr, unsigned dst_node, size_t blocksize,
				  size_t numblocks_1, size_t ld1_src, size_t ld1_dst, size_t numblocks_2, size_t ld2_src, size_t ld2_dst,
				  cudaStream_t stream, enum cudaMemcpyKind kind);

/**
   The properties (cudaGetDeviceProperties()) of the device of CUDA worker
   workerid. NULL, said in one line, when workerid is not a CUDA worker or
   no CUDA worker runs (no device here, STARPU_NCUDA=0).
*/
const struct cudaDeviceProp *starpu_cuda_get_device_properties(unsigned workerid);

/**
   Makes devid the calling thread's current CUDA device (cudaSetDevice()).
   Says in one line when it cannot: no CUDA worker runs (no device here,
   STARPU_NCUDA=0), or CUDA refuses the device.
*/
void starpu_cuda_set_device(unsigned devid);

/** Prints one line naming the failed call (func, file, line) and the CUDA status, then aborts, as StarPU. */
void starpu_cuda_report_error(const char *func, const char *file, int line, cudaError_t status);
#define STARPU_CUDA_REPORT_ERROR(status) starpu_cuda_report_error(__func__, __FILE__, __LINE__, status)

/** The same for a cuBLAS status. */
void starpu_cublas_report_error(const char *func, const char *file, int line, int status);
#define STARPU_CUBLAS_REPORT_ERROR(status) starpu_cublas_report_error(__func__, __FILE__, __LINE__, status)

#ifdef __cplusplus
}
#endif

#endif /* STARPU_USE_CUDA && !STARPU_DONT_INCLUDE_CUDA_HEADERS */
#endif /* __STARPU_CUDA_H__ */
