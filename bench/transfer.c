/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transfer ping-pong between main memory and the first OpenCL device: the
 * runtime's transfers (a handle made valid on the device, then in main
 * memory, through starpu_data_acquire_on_node / starpu_data_acquire) against
 * the raw OpenCL calls (blocking clEnqueueWriteBuffer / clEnqueueReadBuffer on
 * a buffer of the same size) in the same run. Prints, per size, the time of
 * one transfer (µs) and the bandwidth (MB/s) of each, and their ratio.
 *
 * Then tasks on the OpenCL worker that each read 1 MiB of their own and
 * compute as long as one transfer takes: µs per task, and its share of
 * compute + transfer (1 without overlap, nearer 0.5 with the worker's pipeline).
 *
 *   transfer [-r REPETITIONS] [-n ROUND_TRIPS]   (sets STARPU_OPENCL_ON_CPUS=1 unless given)
 */
#include "bench.h"
#ifdef STARPU_USE_OPENCL

static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* µs per transfer of size bytes through the runtime: trips round trips, two transfers each. */
static double runtime_pingpong(starpu_data_handle_t h, unsigned node, long trips)
{
	double start = bench_now_us();
	for (long i = 0; i < trips; i++) {
		/* Written on the device: main memory's copy becomes invalid, the data moves there. */
		if (starpu_data_acquire_on_node(h, (int)node, STARPU_RW) != 0)
			bench_die("acquire on the device failed");
		starpu_data_release_on_node(h, (int)node);
		/* Written in main memory: the data comes back. */
		if (starpu_data_acquire(h, STARPU_RW) != 0)
			bench_die("acquire in main memory failed");
		starpu_data_release(h);
	}
	return (bench_now_us() - start) / (2.0 * trips);
}

static double raw_pingpong(cl_command_queue queue, cl_mem buffer, void *host, size_t size, long trips)
{
	double start = bench_now_us();
	for (long i = 0; i < trips; i++) {
		if (clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, size, host, 0, NULL, NULL) != CL_SUCCESS ||
		    clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, size, host, 0, NULL, NULL) != CL_SUCCESS)
			bench_die("raw OpenCL copy failed");
	}
	return (bench_now_us() - start) / (2.0 * trips);
}

/* A task computing for *(double *)arg µs (busy: the worker's thread is taken). */
static void compute_opencl(void *buffers[], void *arg)
{
	(void)buffers;
	double until = bench_now_us() + *(double *)arg;
	while (bench_now_us() < until)
		;
}

/* µs per task for ntasks tasks on the OpenCL worker, each reading a vector
 * of size bytes of its own (one transfer each) and computing compute_us:
 * with a pipeline (STARPU_OPENCL_PIPELINE, 2 by default) the next task's
 * transfer runs while the task before it computes. */
static double tasks_run(int worker, size_t size, long ntasks, double compute_us)
{
	static struct starpu_codelet cl;
	static double compute;
	compute = compute_us;
	starpu_codelet_init(&cl);
	cl.opencl_funcs[0] = compute_opencl;
	cl.nbuffers = 1;
	cl.modes[0] = STARPU_R;
	cl.name = "compute";
	char *data;
	if (starpu_malloc((void **)&data, size * (size_t)ntasks) != 0)
		bench_die("starpu_malloc(%zu) failed", size * (size_t)ntasks);
	memset(data, 1, size * (size_t)ntasks);
	starpu_data_handle_t *h = malloc(sizeof(*h) * (size_t)ntasks);
	for (long i = 0; i < ntasks; i++)
		starpu_vector_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)(data + (size_t)i * size), (uint32_t)size, 1);
	double start = bench_now_us();
	for (long i = 0; i < ntasks; i++) {
		struct starpu_task *task = starpu_task_create();
		task->cl = &cl;
		task->handles[0] = h[i];
		task->cl_arg = &compute;
		task->execute_on_a_specific_worker = 1;
		task->workerid = (unsigned)worker;
		if (starpu_task_submit(task) != 0)
			bench_die("submitting a task failed");
	}
	starpu_task_wait_for_all();
	double us = (bench_now_us() - start) / (double)ntasks;
	for (long i = 0; i < ntasks; i++)
		starpu_data_unregister(h[i]);
	free(h);
	starpu_free_noflag(data, size * (size_t)ntasks);
	return us;
}

int main(int argc, char **argv)
{
	struct bench_options o;
	const char *nopencl = getenv("STARPU_NOPENCL");
	bench_parse(argc, argv, &o, 1000, 5, 0, NULL);
	/* bench_parse() asks for no OpenCL worker: this one wants the devices found, CPU ones (PoCL) too. */
	if (!nopencl)
		unsetenv("STARPU_NOPENCL");
	setenv("STARPU_OPENCL_ON_CPUS", "1", 0);
	setenv("STARPU_NCPU", "1", 0);
	if (starpu_init(NULL) != 0)
		bench_die("starpu_init failed");
	int worker = starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0);
	if (worker < 0) {
		printf("# transfer: no OpenCL worker (set STARPU_OPENCL_ON_CPUS=1 for a CPU device such as PoCL)\n");
		starpu_shutdown();
		return 0;
	}
	unsigned node = starpu_worker_get_memory_node((unsigned)worker);
	int devid = starpu_worker_get_devid(worker);
	cl_context context;
	cl_command_queue queue;
	starpu_opencl_get_context(devid, &context);
	/* The raw calls get their own queue, as the runtime has its transfer queue. */
	cl_device_id device;
	starpu_opencl_get_device(devid, &device);
	cl_int err;
	queue = clCreateCommandQueue(context, device, 0, &err);
	printf("# transfer: main memory <-> OpenCL 0, runtime against raw OpenCL calls, %d repetitions\n", o.reps);
	const size_t sizes[] = { 4, 4096, 1 << 20, 64 << 20 };
	double one_mib_us = 0;
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t size = sizes[s];
		long trips = size >= (64 << 20) ? 4 : size >= (1 << 20) ? 50 : o.ntasks;
		char *data;
		if (starpu_malloc((void **)&data, size) != 0)
			bench_die("starpu_malloc(%zu) failed", size);
		memset(data, 1, size);
		starpu_data_handle_t h;
		starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)data, (uint32_t)size, 1);
		char *host;
		if (starpu_malloc((void **)&host, size) != 0)
			bench_die("starpu_malloc(%zu) failed", size);
		memset(host, 1, size);
		cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, size, NULL, &err);
		if (err != CL_SUCCESS)
			bench_die("clCreateBuffer(%zu) failed", size);
		runtime_pingpong(h, node, 1); /* warm-up: allocations */
		raw_pingpong(queue, buffer, host, size, 1);
		double rt[BENCH_MAX_SAMPLES], raw[BENCH_MAX_SAMPLES];
		for (int r = 0; r < o.reps; r++) {
			/* Alternate, so that the machine's drifts hit both alike. */
			rt[r] = runtime_pingpong(h, node, trips);
			raw[r] = raw_pingpong(queue, buffer, host, size, trips);
		}
		double t = median(rt, o.reps), t_raw = median(raw, o.reps);
		if (size == 1 << 20)
			one_mib_us = t;
		printf("transfer.%-9zu runtime %10.2f us %10.1f MB/s | raw %10.2f us %10.1f MB/s | time ratio %.2f, bandwidth %.0f%% of raw\n",
		       size, t, size / t, t_raw, size / t_raw, t / t_raw, 100.0 * t_raw / t);
		clReleaseMemObject(buffer);
		starpu_data_unregister(h);
		starpu_free_noflag(data, size);
		starpu_free_noflag(host, size);
	}
	/* Tasks that compute about as long as their 1 MiB input takes to come: without
	 * overlap each costs the sum, with it the larger of the two. */
	const size_t task_size = 1 << 20;
	char *data = NULL;
	if (starpu_malloc((void **)&data, task_size) != 0)
		bench_die("starpu_malloc(%zu) failed", task_size);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)data, (uint32_t)task_size, 1);
	runtime_pingpong(h, node, 1);
	double transfer_us = runtime_pingpong(h, node, 20);
	starpu_data_unregister(h);
	starpu_free_noflag(data, task_size);
	const char *pipeline = getenv("STARPU_OPENCL_PIPELINE");
	transfer_us = one_mib_us > 0 ? one_mib_us : transfer_us;
	long ntasks = 64;
	tasks_run(worker, task_size, 8, transfer_us); /* warm-up */
	double per_task[BENCH_MAX_SAMPLES];
	for (int r = 0; r < o.reps; r++)
		per_task[r] = tasks_run(worker, task_size, ntasks, transfer_us);
	double t = median(per_task, o.reps);
	printf("transfer.tasks    %ld tasks reading 1 MiB each, computing %.1f us (one transfer's time), STARPU_OPENCL_PIPELINE=%s: "
	       "%10.2f us/task | %.2f of compute + transfer (1: no overlap, 0.5: all of it)\n",
	       ntasks, transfer_us, pipeline ? pipeline : "(default 2)", t, t / (2 * transfer_us));
	clReleaseCommandQueue(queue);
	starpu_shutdown();
	return 0;
}

#else
int main(void)
{
	printf("# transfer: built without OpenCL\n");
	return 0;
}
#endif
