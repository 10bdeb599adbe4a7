/* SPDX-License-Identifier: LGPL-2.1-or-later */
// Kernels of test_cuda, compiled by nvcc when the toolkit has it.
#include <cuda_runtime.h>
#include <stdio.h>

__global__ static void scale(float *v, unsigned n, float factor)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		v[i] *= factor;
}

extern "C" void astro_test_cuda_scale(float *v, unsigned n, float factor, cudaStream_t stream)
{
	scale<<<(n + 255) / 256, 256, 0, stream>>>(v, n, factor);
	cudaError_t err = cudaGetLastError();
	if (err != cudaSuccess) /* the test then sees the values unscaled */
		fprintf(stderr, "test_cuda: the scale kernel did not start: %s\n", cudaGetErrorString(err));
}
