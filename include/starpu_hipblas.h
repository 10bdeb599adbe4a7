/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * hipBLAS on the HIP workers, as StarPU. This build has no HIP driver (the
 * runtime starts no HIP worker): the calls act on none and return, as the
 * cuBLAS ones do without a CUDA worker, so a program written for HIP
 * machines builds and runs on its other implementations.
 */
#ifndef __STARPU_HIPBLAS_H__
#define __STARPU_HIPBLAS_H__

#ifdef __cplusplus
extern "C" {
#endif

/** Initialises hipBLAS on every HIP worker of the running runtime (none in this build); returns when all are ready. */
void starpu_hipblas_init(void);

/** Releases what starpu_hipblas_init() set up on the HIP workers (before starpu_shutdown()). */
void starpu_hipblas_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_HIPBLAS_H__ */
