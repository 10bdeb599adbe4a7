/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * cuSOLVER on the CUDA workers, as StarPU. starpu_cusolver_init() and
 * _shutdown() are in every build and do nothing without CUDA worker; the
 * handle getters need the toolkit (STARPU_USE_CUDA).
 */
#ifndef __STARPU_CUSOLVER_H__
#define __STARPU_CUSOLVER_H__

#include <starpu_config.h>

#if defined STARPU_USE_CUDA && !defined STARPU_DONT_INCLUDE_CUDA_HEADERS
#include <cusolverDn.h>
#include <cusolverSp.h>
#include <cusolverRf.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
   Creates the cuSOLVER dense and sparse handles on every CUDA worker of the
   running runtime, bound to the worker's stream; returns when all are ready.
   A cuSOLVER library that cannot be loaded is said once, and the handles
   stay NULL.
*/
void starpu_cusolver_init(void);

/** Destroys the handles starpu_cusolver_init() created. */
void starpu_cusolver_shutdown(void);

#if defined STARPU_USE_CUDA && !defined STARPU_DONT_INCLUDE_CUDA_HEADERS
/** The calling CUDA worker's dense handle; NULL outside a CUDA worker or without starpu_cusolver_init(). */
cusolverDnHandle_t starpu_cusolverDn_get_local_handle(void);
/** The calling CUDA worker's sparse handle; NULL likewise. */
cusolverSpHandle_t starpu_cusolverSp_get_local_handle(void);
/** The calling CUDA worker's refactorisation handle; NULL likewise. */
cusolverRfHandle_t starpu_cusolverRf_get_local_handle(void);
/** Says the cuSOLVER error status of the call at func (file:line) on stderr, then aborts. */
void starpu_cusolver_report_error(const char *func, const char *file, int line, cusolverStatus_t status);
/** starpu_cusolver_report_error() at the calling function and line. */
#define STARPU_CUSOLVER_REPORT_ERROR(status) starpu_cusolver_report_error(__func__, __FILE__, __LINE__, status)
#endif

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_CUSOLVER_H__ */
