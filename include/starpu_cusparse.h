/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * cuSPARSE on the CUDA workers, as StarPU. starpu_cusparse_init() and
 * _shutdown() are in every build and do nothing without CUDA worker (no
 * toolkit, no device, STARPU_NCUDA=0); the handle getter needs the toolkit
 * (STARPU_USE_CUDA).
 */
#ifndef __STARPU_CUSPARSE_H__
#define __STARPU_CUSPARSE_H__

#include <starpu_config.h>

#if defined STARPU_USE_CUDA && !defined STARPU_DONT_INCLUDE_CUDA_HEADERS
#include <cusparse.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
   Creates a cuSPARSE handle on every CUDA worker of the running runtime,
   bound to the worker's stream; returns when all are ready. A second call
   keeps the handles there. A cuSPARSE library that cannot be loaded is
   said once, and the handles stay NULL.
*/
void starpu_cusparse_init(void);

/** Destroys the handles starpu_cusparse_init() created (before starpu_shutdown()). */
void starpu_cusparse_shutdown(void);

#if defined STARPU_USE_CUDA && !defined STARPU_DONT_INCLUDE_CUDA_HEADERS
/** The calling CUDA worker's handle; NULL outside a CUDA worker or without starpu_cusparse_init(). */
cusparseHandle_t starpu_cusparse_get_local_handle(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_CUSPARSE_H__ */
