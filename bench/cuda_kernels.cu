/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel of bench/cuda: one that does nothing, so that a task costs its launch. */
#include <cuda_runtime.h>

__global__ static void nothing(int *never)
{
	if (never)
		*never = 0;
}

extern "C" void bench_cuda_nothing(cudaStream_t stream)
{
	nothing<<<1, 32, 0, stream>>>(nullptr);
}
