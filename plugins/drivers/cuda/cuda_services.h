/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the CUDA driver plugin serves to the starpu_cuda_*, starpu_cublas_*,
 * starpu_cusolver_* and starpu_cusparse_* entry points of libastrolabe (cuda_api.c), which
 * exist in every build and do nothing while no driver serves them (no
 * toolkit, no device: no CUDA worker, as StarPU). Private to this folder:
 * astro_cuda_services_set() is exported only so that the loadable driver
 * reaches libastrolabe.
 */
#ifndef __ASTRO_CUDA_SERVICES_H__
#define __ASTRO_CUDA_SERVICES_H__

#include <stddef.h>

struct astro_cuda_services
{
	/* starpu_cublas_init() and the others, on every CUDA worker. */
	void (*cublas_init)(void);
	void (*cublas_set_stream)(void);
	void (*cublas_shutdown)(void);
	void (*cusolver_init)(void);
	void (*cusolver_shutdown)(void);
	/* The calling worker's stream and handles (a cudaStream_t, a
	 * cublasHandle_t...): NULL outside a CUDA worker or before the init. */
	void *(*local_stream)(void);
	void *(*local_cublas)(void);
	void *(*local_cusolver_dn)(void);
	void *(*local_cusolver_sp)(void);
	/* cudaGetErrorString(). */
	const char *(*error_string)(int status);
	/* Copies n2 groups (ld2 bytes apart) of n1 blocks (ld1 bytes apart) of
	 * blocksize bytes, of CUDA memcpy kind kind, queued on stream (a
	 * cudaStream_t) when not NULL: -EAGAIN when left under way there, 0 when
	 * complete, a negative errno said. */
	int (*copy)(const char *src, char *dst, size_t blocksize, size_t n1, size_t ld1_src, size_t ld1_dst,
		    size_t n2, size_t ld2_src, size_t ld2_dst, void *stream, int kind);
	/* cudaSetDevice(devid), saying a failure. */
	void (*set_device)(unsigned devid);
	/* starpu_cusparse_init() and _shutdown(), on every CUDA worker; the calling worker's cusparseHandle_t. */
	void (*cusparse_init)(void);
	void (*cusparse_shutdown)(void);
	void *(*local_cusparse)(void);
	/* The struct cudaDeviceProp of CUDA device devid, NULL when it is not open. */
	const void *(*device_properties)(int devid);
	/* starpu_cublasLt_init() and _shutdown(), on every CUDA worker; the calling worker's cublasLtHandle_t. */
	void (*cublaslt_init)(void);
	void (*cublaslt_shutdown)(void);
	void *(*local_cublaslt)(void);
	/* The calling worker's cusolverRfHandle_t (made by starpu_cusolver_init() with the others). */
	void *(*local_cusolver_rf)(void);
};

/* Served from the driver's init to its fini; NULL withdraws them. */
void astro_cuda_services_set(const struct astro_cuda_services *services);

#endif /* __ASTRO_CUDA_SERVICES_H__ */
