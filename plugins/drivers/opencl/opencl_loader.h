/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OpenCL functions libastrolabe's half of the OpenCL driver calls (the
 * device table and the starpu_opencl_* helpers, opencl_api.c), taken from the
 * ICD loader (libOpenCL.so.1) at their first use instead of linked: the core
 * library, and its package, need no OpenCL; the driver plugin, which links the
 * loader, loads it for them. Included after <CL/cl.h> by opencl_api.c only:
 * each clX() there calls the loaded function.
 */
#ifndef __ASTRO_OPENCL_LOADER_H__
#define __ASTRO_OPENCL_LOADER_H__

#include <CL/cl.h>
#include <stdbool.h>

#define ASTRO_CL_FUNCTIONS(F) \
	F(clBuildProgram) F(clCreateBuffer) F(clCreateCommandQueue) F(clCreateContext) F(clCreateKernel) \
	F(clCreateProgramWithBinary) F(clCreateProgramWithSource) F(clEnqueueCopyBuffer) F(clEnqueueReadBuffer) \
	F(clEnqueueWriteBuffer) F(clFinish) F(clGetDeviceIDs) F(clGetDeviceInfo) F(clGetEventInfo) F(clGetPlatformIDs) \
	F(clGetProgramBuildInfo) F(clGetProgramInfo) F(clReleaseCommandQueue) F(clReleaseContext) F(clReleaseKernel) \
	F(clReleaseProgram) F(clSetKernelArg)

#define ASTRO_CL_POINTER(f) __typeof__(f) *f;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* clCreateCommandQueue: OpenCL 1.2's, as StarPU 1.4 calls it */
struct astro_cl
{
	ASTRO_CL_FUNCTIONS(ASTRO_CL_POINTER)
};
#pragma GCC diagnostic pop
#undef ASTRO_CL_POINTER

/* Loads the ICD loader once; false when it cannot be (said once, naming the
 * library and the package to install): then there is no OpenCL device. */
bool _astro_cl_load(void);
/* The loaded functions. Only reached with an OpenCL object in hand (a device
 * of the table, a program, kernel, buffer or event), which the loader made. */
extern struct astro_cl _astro_cl;

#ifndef ASTRO_CL_NO_REDIRECT
#define clBuildProgram (_astro_cl.clBuildProgram)
#define clCreateBuffer (_astro_cl.clCreateBuffer)
#define clCreateCommandQueue (_astro_cl.clCreateCommandQueue)
#define clCreateContext (_astro_cl.clCreateContext)
#define clCreateKernel (_astro_cl.clCreateKernel)
#define clCreateProgramWithBinary (_astro_cl.clCreateProgramWithBinary)
#define clCreateProgramWithSource (_astro_cl.clCreateProgramWithSource)
#define clEnqueueCopyBuffer (_astro_cl.clEnqueueCopyBuffer)
#define clEnqueueReadBuffer (_astro_cl.clEnqueueReadBuffer)
#define clEnqueueWriteBuffer (_astro_cl.clEnqueueWriteBuffer)
#define clFinish (_astro_cl.clFinish)
#define clGetDeviceIDs (_astro_cl.clGetDeviceIDs)
#define clGetDeviceInfo (_astro_cl.clGetDeviceInfo)
#define clGetEventInfo (_astro_cl.clGetEventInfo)
#define clGetPlatformIDs (_astro_cl.clGetPlatformIDs)
#define clGetProgramBuildInfo (_astro_cl.clGetProgramBuildInfo)
#define clGetProgramInfo (_astro_cl.clGetProgramInfo)
#define clReleaseCommandQueue (_astro_cl.clReleaseCommandQueue)
#define clReleaseContext (_astro_cl.clReleaseContext)
#define clReleaseKernel (_astro_cl.clReleaseKernel)
#define clReleaseProgram (_astro_cl.clReleaseProgram)
#define clSetKernelArg (_astro_cl.clSetKernelArg)
#endif

#endif /* __ASTRO_OPENCL_LOADER_H__ */
