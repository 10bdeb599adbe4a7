/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OpenCL implementations of the Cholesky's update kernels (gemm_nt, syrk,
 * trsm_rlt), so that an OpenCL device (a GPU, or PoCL's CPU device with
 * STARPU_OPENCL_ON_CPUS=1) works beside the CPU workers: workers that are
 * not equally fast at each kernel, where the placement the performance
 * models give matters (the demo measures it). dpotrf stays on the CPUs.
 *
 * The kernels are plain and portable, not tuned: each work-item of the
 * update computes a 4 x 4 block of C -= A B^T (syrk: B = A, the lower
 * triangle only); each work-item of the triangular solve one row of
 * X L^T = B. The program is built for every OpenCL device at
 * linalg_init() when StarPU has OpenCL workers, and released by
 * linalg_shutdown().
 */
#include "linalg.h"

#if defined(STARPU_USE_OPENCL) && !defined(STARPU_SIMGRID)
#include <stdio.h>

#ifdef LINALG_FLOAT
#define BUILD_OPTIONS "-DREAL=float -DREAL4=float4"
#define PRAGMA ""
#else
#define BUILD_OPTIONS "-DREAL=double -DREAL4=double4"
#define PRAGMA "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
#endif

#define STRINGIFY(...) #__VA_ARGS__

static const char source[] = PRAGMA STRINGIFY(
/* C -= A B^T on the m x n tile C (k the shared dimension); lower: only where row >= column. */
__kernel void update(unsigned m, unsigned n, unsigned k, __global const REAL *a, unsigned aoff, unsigned lda,
		     __global const REAL *b, unsigned boff, unsigned ldb, __global REAL *c, unsigned coff, unsigned ldc,
		     unsigned lower)
{
	a += aoff;
	b += boff;
	c += coff;
	unsigned i0 = get_global_id(0) * 4, j0 = get_global_id(1) * 4;
	if (i0 >= m || j0 >= n || (lower && i0 + 3 < j0))
		return;
	if (i0 + 4 <= m && j0 + 4 <= n) {
		REAL4 s0 = 0, s1 = 0, s2 = 0, s3 = 0;
		for (unsigned l = 0; l < k; l++) {
			REAL4 x = vload4(0, a + i0 + l * lda);
			__global const REAL *y = b + j0 + l * ldb;
			s0 += x * y[0];
			s1 += x * y[1];
			s2 += x * y[2];
			s3 += x * y[3];
		}
		__global REAL *z = c + i0 + j0 * ldc;
		if (!lower || i0 >= j0 + 3) {
			vstore4(vload4(0, z) - s0, 0, z);
			vstore4(vload4(0, z + ldc) - s1, 0, z + ldc);
			vstore4(vload4(0, z + 2 * ldc) - s2, 0, z + 2 * ldc);
			vstore4(vload4(0, z + 3 * ldc) - s3, 0, z + 3 * ldc);
			return;
		}
		REAL s[4][4] = { { s0.s0, s0.s1, s0.s2, s0.s3 }, { s1.s0, s1.s1, s1.s2, s1.s3 },
				 { s2.s0, s2.s1, s2.s2, s2.s3 }, { s3.s0, s3.s1, s3.s2, s3.s3 } };
		for (unsigned j = 0; j < 4; j++)
			for (unsigned i = 0; i < 4; i++)
				if (i0 + i >= j0 + j)
					z[i + j * ldc] -= s[j][i];
		return;
	}
	for (unsigned j = j0; j < n && j < j0 + 4; j++)
		for (unsigned i = i0; i < m && i < i0 + 4; i++) {
			if (lower && i < j)
				continue;
			REAL s = 0;
			for (unsigned l = 0; l < k; l++)
				s += a[i + l * lda] * b[j + l * ldb];
			c[i + j * ldc] -= s;
		}
}

/* X L^T = B on the m x n tile B, in place, L the n x n lower tile: one row of X per work-item. */
__kernel void trsm_rlt(unsigned m, unsigned n, __global const REAL *l, unsigned loff, unsigned ldl, __global REAL *b,
		       unsigned boff, unsigned ldb)
{
	l += loff;
	b += boff;
	unsigned i = get_global_id(0);
	if (i >= m)
		return;
	for (unsigned j = 0; j < n; j++) {
		REAL s = b[i + j * ldb];
		for (unsigned p = 0; p < j; p++)
			s -= b[i + p * ldb] * l[j + p * ldl];
		b[i + j * ldb] = s / l[j + j * ldl];
	}
}
);

static struct starpu_opencl_program program;
static int loaded;

int linalg_opencl_load(void)
{
	if (loaded || starpu_opencl_worker_get_count() == 0)
		return 0;
	int ret = starpu_opencl_load_opencl_from_string(source, &program, BUILD_OPTIONS);
	if (ret) {
		fprintf(stderr, "linalg: the OpenCL kernels do not build for the OpenCL workers (%d): run without them "
			"(STARPU_NOPENCL=0)\n", ret);
		return ret;
	}
	loaded = 1;
	return 0;
}

void linalg_opencl_unload(void)
{
	if (loaded)
		starpu_opencl_unload_opencl(&program);
	loaded = 0;
}

/* Runs kernel name over global work-items with the arguments given as (size, pointer) pairs, and waits for it. */
static void run(const char *name, unsigned dims, const size_t *global, unsigned nargs, const size_t *sizes,
		const void *const *args)
{
	cl_kernel kernel;
	cl_command_queue queue;
	int devid = starpu_worker_get_devid(starpu_worker_get_id());
	cl_int err = starpu_opencl_load_kernel(&kernel, &queue, &program, name, devid);
	if (err != CL_SUCCESS)
		STARPU_OPENCL_REPORT_ERROR(err);
	for (unsigned i = 0; i < nargs; i++) {
		err = clSetKernelArg(kernel, i, sizes[i], args[i]);
		if (err != CL_SUCCESS)
			STARPU_OPENCL_REPORT_ERROR(err);
	}
	err = clEnqueueNDRangeKernel(queue, kernel, dims, NULL, global, NULL, 0, NULL, NULL);
	if (err == CL_SUCCESS)
		err = clFinish(queue);
	if (err != CL_SUCCESS)
		STARPU_OPENCL_REPORT_ERROR(err);
	starpu_opencl_release_kernel(kernel);
}

/* A tile on the device: its buffer, and where it starts in it, in elements. */
struct tile
{
	cl_mem mem;
	unsigned offset, nx, ny, ld;
};

static struct tile tile_of(void *buffer)
{
	return (struct tile){ .mem = (cl_mem)STARPU_MATRIX_GET_DEV_HANDLE(buffer),
			      .offset = (unsigned)(STARPU_MATRIX_GET_OFFSET(buffer) / sizeof(real)),
			      .nx = STARPU_MATRIX_GET_NX(buffer), .ny = STARPU_MATRIX_GET_NY(buffer),
			      .ld = STARPU_MATRIX_GET_LD(buffer) };
}

/* C -= A B^T (lower: only C's lower triangle). */
static void update(struct tile a, struct tile b, struct tile c, unsigned lower)
{
	size_t global[2] = { (c.nx + 3) / 4, (c.ny + 3) / 4 };
	const size_t u = sizeof(unsigned), m = sizeof(cl_mem);
	const size_t sizes[] = { u, u, u, m, u, u, m, u, u, m, u, u, u };
	const void *const args[] = { &c.nx, &c.ny, &a.ny, &a.mem, &a.offset, &a.ld, &b.mem, &b.offset, &b.ld,
				     &c.mem, &c.offset, &c.ld, &lower };
	run("update", 2, global, 13, sizes, args);
}

void linalg_gemm_nt_opencl(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	update(tile_of(buffers[0]), tile_of(buffers[1]), tile_of(buffers[2]), 0);
}

void linalg_syrk_opencl(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	update(tile_of(buffers[0]), tile_of(buffers[0]), tile_of(buffers[1]), 1);
}

void linalg_trsm_rlt_opencl(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	struct tile l = tile_of(buffers[0]), b = tile_of(buffers[1]);
	size_t global[1] = { b.nx };
	const size_t u = sizeof(unsigned), m = sizeof(cl_mem);
	const size_t sizes[] = { u, u, m, u, u, m, u, u };
	const void *const args[] = { &b.nx, &b.ny, &l.mem, &l.offset, &l.ld, &b.mem, &b.offset, &b.ld };
	run("trsm_rlt", 1, global, 8, sizes, args);
}
#endif
