/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * cuBLASLt on the CUDA workers, as StarPU. starpu_cublasLt_init() and
 * _shutdown() are in every build and do nothing without CUDA worker (no
 * toolkit, no device, STARPU_NCUDA=0); the handle getter needs the toolkit
 * with cuBLASLt (STARPU_USE_CUDA and STARPU_HAVE_LIBCUBLASLT).
 */
#ifndef __STARPU_CUBLASLT_H__
#define __STARPU_CUBLASLT_H__

#include <starpu_config.h>

#if defined STARPU_USE_CUDA && defined STARPU_HAVE_LIBCUBLASLT && !defined STARPU_DONT_INCLUDE_CUDA_HEADERS
#include <library_types.h>
#include <cublasLt.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
   Creates a cuBLASLt handle on every CUDA worker of the running runtime;
   returns when all are ready. A second call keeps the handles there. A
   cuBLASLt library that cannot be loaded is said once, and the handles stay
   NULL.
*/
void starpu_cublasLt_init(void);

/** Destroys the handles starpu_cublasLt_init() created (before starpu_shutdown()). */
void starpu_cublasLt_shutdown(void);

#if defined STARPU_USE_CUDA && defined STARPU_HAVE_LIBCUBLASLT && !defined STARPU_DONT_INCLUDE_CUDA_HEADERS
/** The calling CUDA worker's handle (give its kernels starpu_cuda_get_local_stream()); NULL outside a
 * CUDA worker or without starpu_cublasLt_init(). */
cublasLtHandle_t starpu_cublasLt_get_local_handle(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_CUBLASLT_H__ */
