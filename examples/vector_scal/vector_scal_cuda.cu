/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CUDA implementation of vector_scal: its kernel queued on the worker's
 * stream (the codelet says STARPU_CUDA_ASYNC: the runtime waits for it). */
#include <starpu.h>

static __global__ void vector_mult_cuda(unsigned n, float *v, float factor)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		v[i] *= factor;
}

extern "C" void scal_cuda_func(void *buffers[], void *cl_arg)
{
	float factor = *(float *)cl_arg;
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	float *v = (float *)STARPU_VECTOR_GET_PTR(buffers[0]);
	unsigned threads = 64, blocks = (n + threads - 1) / threads;
	vector_mult_cuda<<<blocks, threads, 0, starpu_cuda_get_local_stream()>>>(n, v, factor);
	cudaError_t status = cudaGetLastError();
	if (status != cudaSuccess)
		STARPU_CUDA_REPORT_ERROR(status);
}
