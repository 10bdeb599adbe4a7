/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OpenCL kernel of vector_scal: v[i] *= factor. */
__kernel void vector_mult_opencl(unsigned n, __global float *v, float factor)
{
	const size_t i = get_global_id(0);
	if (i < n)
		v[i] *= factor;
}
