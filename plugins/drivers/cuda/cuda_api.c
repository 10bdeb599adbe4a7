/*
 * The CUDA entry points programs call, in libastrolabe in every build as in
 * StarPU: starpu_cublas_init() and the others act on the CUDA workers of the
 * running runtime, through what the CUDA driver plugin serves, and do
 * nothing when there is none (a build without the toolkit, a machine
 * without device, STARPU_NCUDA=0). The getters of the calling worker's
 * stream and handles exist in builds with the toolkit (STARPU_USE_CUDA),
 * whose headers give their types.
 */
#include "cuda_services.h"
#include <starpu.h>
#include <starpu_cublas.h>
#include <starpu_cusolver.h>
#ifdef STARPU_USE_CUDA
#include <starpu_cublas_v2.h>
#endif
#include <astrolabe/plugin.h>
#include <stddef.h>
#include <stdlib.h>

static const struct astro_cuda_services *served;

void astro_cuda_services_set(const struct astro_cuda_services *services)
{
	__atomic_store_n(&served, services, __ATOMIC_RELEASE);
}

static const struct astro_cuda_services *services(void)
{
	return __atomic_load_n(&served, __ATOMIC_ACQUIRE);
}

/* Calls service fn when a driver serves it. */
#define SERVE(fn) do { const struct astro_cuda_services *s = services(); if (s && s->fn) s->fn(); } while (0)
/* Its result, NULL when none. */
#define SERVED(fn) (services() && services()->fn ? services()->fn() : NULL)

void starpu_cublas_init(void)
{
	SERVE(cublas_init);
}

void starpu_cublas_set_stream(void)
{
	SERVE(cublas_set_stream);
}

void starpu_cublas_shutdown(void)
{
	SERVE(cublas_shutdown);
}

void starpu_cusolver_init(void)
{
	SERVE(cusolver_init);
}

void starpu_cusolver_shutdown(void)
{
	SERVE(cusolver_shutdown);
}

#ifdef STARPU_USE_CUDA

cudaStream_t starpu_cuda_get_local_stream(void)
{
	return (cudaStream_t)SERVED(local_stream);
}

cublasHandle_t starpu_cublas_get_local_handle(void)
{
	return (cublasHandle_t)SERVED(local_cublas);
}

cusolverDnHandle_t starpu_cusolverDn_get_local_handle(void)
{
	return (cusolverDnHandle_t)SERVED(local_cusolver_dn);
}

cusolverSpHandle_t starpu_cusolverSp_get_local_handle(void)
{
	return (cusolverSpHandle_t)SERVED(local_cusolver_sp);
}

void starpu_cuda_report_error(const char *func, const char *file, int line, cudaError_t status)
{
	const struct astro_cuda_services *s = services();
	const char *what = s && s->error_string ? s->error_string((int)status) : NULL;
	if (what)
		astro_log_error("CUDA", "%s (%s:%d): error %d: %s", func, file, line, (int)status, what);
	else
		astro_log_error("CUDA", "%s (%s:%d): error %d", func, file, line, (int)status);
	abort();
}

void starpu_cublas_report_error(const char *func, const char *file, int line, int status)
{
	astro_log_error("cuBLAS", "%s (%s:%d): error %d (cublasStatus_t)", func, file, line, status);
	abort();
}

#endif /* STARPU_USE_CUDA */
