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
