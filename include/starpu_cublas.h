/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * cuBLAS on the CUDA workers, as StarPU. In every build: without CUDA
 * worker (no toolkit, no device, STARPU_NCUDA=0) these do nothing.
 */
#ifndef __STARPU_CUBLAS_H__
#define __STARPU_CUBLAS_H__

#ifdef __cplusplus
extern "C" {
#endif

/**
   Creates a cuBLAS handle on every CUDA worker of the running runtime, bound
   to the worker's stream (starpu_cublas_get_local_handle() in
   starpu_cublas_v2.h); returns when all are ready. Call it after
   starpu_init(). A second call keeps the handles there. A cuBLAS library
   that cannot be loaded is said once, and the handles stay NULL.
*/
void starpu_cublas_init(void);

/**
   For the cuBLAS v1 API (cublas.h): queues its kernels on the calling
   worker's stream. Call it from a CUDA codelet before v1 calls.
*/
void starpu_cublas_set_stream(void);

/** Destroys the handles starpu_cublas_init() created (before starpu_shutdown()). */
void starpu_cublas_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_CUBLAS_H__ */
