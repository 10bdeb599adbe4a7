/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The calling CUDA worker's cuBLAS handle. Available when Astrolabe was
 * built with the CUDA toolkit (STARPU_USE_CUDA), unless the program defines
 * STARPU_DONT_INCLUDE_CUDA_HEADERS.
 */
#ifndef __STARPU_CUBLAS_V2_H__
#define __STARPU_CUBLAS_V2_H__

#include <starpu_config.h>

#if defined STARPU_USE_CUDA && !defined STARPU_DONT_INCLUDE_CUDA_HEADERS
#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
   The cuBLAS handle of the calling CUDA worker, created by
   starpu_cublas_init() and bound to starpu_cuda_get_local_stream(). NULL
   outside a CUDA worker or without starpu_cublas_init().
*/
cublasHandle_t starpu_cublas_get_local_handle(void);

#ifdef __cplusplus
}
#endif

#endif
#endif /* __STARPU_CUBLAS_V2_H__ */
