/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Vector scaling, the first StarPU example, with one implementation per kind
 * of worker: CPU, OpenCL (the kernel loaded from vector_scal_opencl_kernel.cl)
 * and CUDA (vector_scal_cuda.cu, when built with the toolkit's nvcc). The
 * scheduler picks the worker; the program checks the result, whichever ran.
 *
 *     STARPU_OPENCL_ON_CPUS=1 ./vector_scal      # PoCL: an OpenCL CPU device
 */
#include <starpu.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NX 204800
#define FACTOR 3.14f

static void scal_cpu_func(void *buffers[], void *cl_arg)
{
	float factor = *(float *)cl_arg;
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	float *v = (float *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < n; i++)
		v[i] *= factor;
}

#ifdef STARPU_USE_OPENCL
static struct starpu_opencl_program opencl_program;

static void scal_opencl_func(void *buffers[], void *cl_arg)
{
	float factor = *(float *)cl_arg;
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	cl_mem v = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]);
	int devid = starpu_worker_get_devid(starpu_worker_get_id());
	cl_kernel kernel;
	cl_command_queue queue;
	cl_int err = starpu_opencl_load_kernel(&kernel, &queue, &opencl_program, "vector_mult_opencl", devid);
	if (err != CL_SUCCESS)
		STARPU_OPENCL_REPORT_ERROR(err);
	err = clSetKernelArg(kernel, 0, sizeof(n), &n);
	err |= clSetKernelArg(kernel, 1, sizeof(v), &v);
	err |= clSetKernelArg(kernel, 2, sizeof(factor), &factor);
	if (err != CL_SUCCESS)
		STARPU_OPENCL_REPORT_ERROR(err);
	size_t global = n;
	err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
	if (err != CL_SUCCESS)
		STARPU_OPENCL_REPORT_ERROR(err);
	clFinish(queue);
	starpu_opencl_release_kernel(kernel);
}
#endif

#ifdef ASTRO_EXAMPLE_CUDA
void scal_cuda_func(void *buffers[], void *cl_arg);
#endif

static struct starpu_perfmodel vector_scal_model = {
	.type = STARPU_HISTORY_BASED,
	.symbol = "vector_scal",
};

static struct starpu_codelet cl = {
	.cpu_funcs = { scal_cpu_func },
	.cpu_funcs_name = { "scal_cpu_func" },
#ifdef STARPU_USE_OPENCL
	.opencl_funcs = { scal_opencl_func },
#endif
#ifdef ASTRO_EXAMPLE_CUDA
	.cuda_funcs = { scal_cuda_func },
	.cuda_flags = { STARPU_CUDA_ASYNC },
#endif
	.nbuffers = 1,
	.modes = { STARPU_RW },
	.model = &vector_scal_model,
};

int main(void)
{
	float *vector;
	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	if (ret != 0) {
		fprintf(stderr, "starpu_init: %d\n", ret);
		return 1;
	}
	starpu_malloc((void **)&vector, NX * sizeof(vector[0]));
	for (unsigned i = 0; i < NX; i++)
		vector[i] = 1.0f + (float)i;

#ifdef STARPU_USE_OPENCL
	ret = starpu_opencl_load_opencl_from_file("vector_scal_opencl_kernel.cl", &opencl_program, NULL);
	if (ret != CL_SUCCESS) {
		fprintf(stderr, "cannot load vector_scal_opencl_kernel.cl: set STARPU_OPENCL_PROGRAM_DIR to its folder\n");
		return 1;
	}
#endif

	starpu_data_handle_t handle;
	starpu_vector_data_register(&handle, STARPU_MAIN_RAM, (uintptr_t)vector, NX, sizeof(vector[0]));
	float factor = FACTOR;
	struct starpu_task *task = starpu_task_create();
	task->synchronous = 1;
	task->cl = &cl;
	task->handles[0] = handle;
	task->cl_arg = &factor;
	task->cl_arg_size = sizeof(factor);
	ret = starpu_task_submit(task);
	starpu_data_unregister(handle);
	if (ret != 0) {
		fprintf(stderr, "starpu_task_submit: %d\n", ret);
		return 1;
	}

	unsigned wrong = 0;
	for (unsigned i = 0; i < NX; i++)
		if (fabsf(vector[i] - (1.0f + (float)i) * FACTOR) > 1e-3f * fabsf(vector[i]))
			wrong++;
	printf("vector_scal: %u elements scaled by %.2f on %u CPU, %u OpenCL and %u CUDA workers: %s\n", NX, (double)FACTOR,
	       starpu_cpu_worker_get_count(), starpu_opencl_worker_get_count(), starpu_cuda_worker_get_count(),
	       wrong ? "WRONG" : "correct");

	starpu_free_noflag(vector, NX * sizeof(vector[0]));
#ifdef STARPU_USE_OPENCL
	starpu_opencl_unload_opencl(&opencl_program);
#endif
	starpu_shutdown();
	return wrong ? 1 : 0;
}
