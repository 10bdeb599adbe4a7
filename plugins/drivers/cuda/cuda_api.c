/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
#include <starpu_cusparse.h>
#include <starpu_cublasLt.h>
#ifdef STARPU_USE_CUDA
#include <starpu_cublas_v2.h>
#endif
#include <astrolabe/plugin.h>
#include <errno.h>
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

void starpu_cusparse_init(void)
{
	SERVE(cusparse_init);
}

void starpu_cusparse_shutdown(void)
{
	SERVE(cusparse_shutdown);
}

void starpu_cublasLt_init(void)
{
	SERVE(cublaslt_init);
}

void starpu_cublasLt_shutdown(void)
{
	SERVE(cublaslt_shutdown);
}

#ifdef STARPU_USE_CUDA

#ifdef STARPU_HAVE_LIBCUBLASLT
cublasLtHandle_t starpu_cublasLt_get_local_handle(void)
{
	return (cublasLtHandle_t)SERVED(local_cublaslt);
}
#endif

cusparseHandle_t starpu_cusparse_get_local_handle(void)
{
	return (cusparseHandle_t)SERVED(local_cusparse);
}

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

cusolverRfHandle_t starpu_cusolverRf_get_local_handle(void)
{
	return (cusolverRfHandle_t)SERVED(local_cusolver_rf);
}

/* What every copy checks before the driver copies: 0, or a negative errno said. */
static int copy_checks(const char *call, const void *src, unsigned src_node, const void *dst, unsigned dst_node, size_t bytes,
		       size_t blocksize, size_t numblocks, size_t ld_src, size_t ld_dst, enum cudaMemcpyKind kind)
{
	if (bytes && (!src || !dst)) {
		astro_log_error(call, "the %s pointer is NULL: nothing copied", !src ? "source" : "destination");
		return -EINVAL;
	}
	if (numblocks > 1 && (ld_src < blocksize || ld_dst < blocksize)) {
		astro_log_error(call, "blocks of %zu bytes but %zu bytes apart in the %s: they would overlap; give a larger ld",
				blocksize, ld_src < blocksize ? ld_src : ld_dst, ld_src < blocksize ? "source" : "destination");
		return -EINVAL;
	}
	if ((int)kind < (int)cudaMemcpyHostToHost || (int)kind > (int)cudaMemcpyDefault) {
		astro_log_error(call, "%d is not a cudaMemcpyKind: nothing copied", (int)kind);
		return -EINVAL;
	}
	const struct astro_cuda_services *s = services();
	if (!s || !s->copy) {
		astro_log_error(call, "no CUDA worker runs (no CUDA device here, STARPU_NCUDA=0, or outside starpu_init() "
				"and starpu_shutdown()): nothing copied");
		return -ENODEV;
	}
	unsigned nodes = starpu_memory_nodes_get_count();
	if (src_node >= nodes || dst_node >= nodes) {
		astro_log_error(call, "there is no memory node %u (there are %u): nothing copied", src_node >= nodes ? src_node : dst_node, nodes);
		return -EINVAL;
	}
	return 0;
}

int starpu_cuda_copy_async_sync(void *src_ptr, unsigned src_node, void *dst_ptr, unsigned dst_node, size_t ssize, cudaStream_t stream,
				enum cudaMemcpyKind kind)
{
	int ret = copy_checks("starpu_cuda_copy_async_sync", src_ptr, src_node, dst_ptr, dst_node, ssize, ssize, 1, ssize, ssize, kind);
	if (ret || !ssize)
		return ret;
	return services()->copy(src_ptr, dst_ptr, ssize, 1, ssize, ssize, 1, ssize, ssize, stream, (int)kind);
}

int starpu_cuda_copy2d_async_sync(void *src_ptr, unsigned src_node, void *dst_ptr, unsigned dst_node, size_t blocksize, size_t numblocks,
				  size_t ld_src, size_t ld_dst, cudaStream_t stream, enum cudaMemcpyKind kind)
{
	int ret = copy_checks("starpu_cuda_copy2d_async_sync", src_ptr, src_node, dst_ptr, dst_node, blocksize * numblocks, blocksize,
			      numblocks, ld_src, ld_dst, kind);
	if (ret || !blocksize || !numblocks)
		return ret;
	return services()->copy(src_ptr, dst_ptr, blocksize, numblocks, ld_src, ld_dst, 1, 0, 0, stream, (int)kind);
}

int starpu_cuda_copy3d_async_sync(void *src_ptr, unsigned src_node, void *dst_ptr, unsigned dst_node, size_t blocksize,
				  size_t numblocks_1, size_t ld1_src, size_t ld1_dst, size_t numblocks_2, size_t ld2_src, size_t ld2_dst,
				  cudaStream_t stream, enum cudaMemcpyKind kind)
{
	const char *call = "starpu_cuda_copy3d_async_sync";
	size_t span_src = numblocks_1 ? ld1_src * (numblocks_1 - 1) + blocksize : 0;
	size_t span_dst = numblocks_1 ? ld1_dst * (numblocks_1 - 1) + blocksize : 0;
	if (numblocks_2 > 1 && (ld2_src < span_src || ld2_dst < span_dst)) {
		astro_log_error(call, "groups of %zu blocks span %zu bytes but are %zu bytes apart in the %s: they would overlap; "
				"give a larger ld2", numblocks_1, ld2_src < span_src ? span_src : span_dst, ld2_src < span_src ? ld2_src : ld2_dst,
				ld2_src < span_src ? "source" : "destination");
		return -EINVAL;
	}
	int ret = copy_checks(call, src_ptr, src_node, dst_ptr, dst_node, blocksize * numblocks_1 * numblocks_2, blocksize, numblocks_1,
			      ld1_src, ld1_dst, kind);
	if (ret || !blocksize || !numblocks_1 || !numblocks_2)
		return ret;
	return services()->copy(src_ptr, dst_ptr, blocksize, numblocks_1, ld1_src, ld1_dst, numblocks_2, ld2_src, ld2_dst, stream, (int)kind);
}

const struct cudaDeviceProp *starpu_cuda_get_device_properties(unsigned workerid)
{
	const char *fn = "starpu_cuda_get_device_properties";
	const struct astro_cuda_services *s = services();
	if (!s || !s->device_properties) {
		astro_log_error(fn, "no CUDA worker runs (no CUDA device here, STARPU_NCUDA=0, or outside starpu_init() and "
				"starpu_shutdown()): worker %u has no CUDA device", workerid);
		return NULL;
	}
	if (workerid >= starpu_worker_get_count()) {
		astro_log_error(fn, "no worker %u (there are %u)", workerid, starpu_worker_get_count());
		return NULL;
	}
	if (starpu_worker_get_type((int)workerid) != STARPU_CUDA_WORKER) {
		char name[64];
		starpu_worker_get_name((int)workerid, name, sizeof(name));
		astro_log_error(fn, "worker %u (%s) is not a CUDA worker: give the id of one (starpu_worker_get_ids_by_type)", workerid,
				name);
		return NULL;
	}
	return (const struct cudaDeviceProp *)s->device_properties(starpu_worker_get_devid((int)workerid));
}

void starpu_cuda_set_device(unsigned devid)
{
	const struct astro_cuda_services *s = services();
	if (!s || !s->set_device) {
		astro_log_error("starpu_cuda_set_device", "no CUDA worker runs (no CUDA device here, STARPU_NCUDA=0, or outside "
				"starpu_init() and starpu_shutdown()): device %u is not made current", devid);
		return;
	}
	s->set_device(devid);
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

void starpu_cusolver_report_error(const char *func, const char *file, int line, cusolverStatus_t status)
{
	astro_log_error("cuSOLVER", "%s (%s:%d): error %d (cusolverStatus_t)", func, file, line, (int)status);
	abort();
}

#endif /* STARPU_USE_CUDA */
