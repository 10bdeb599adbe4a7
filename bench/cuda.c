/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CUDA workers against the raw CUDA calls, in the same run, on the first
 * CUDA device (a machine with a GPU; elsewhere it says so and exits 2):
 *
 *   cuda.tasks     µs per independent task that launches an empty kernel
 *                  (STARPU_CUDA_ASYNC: the worker starts the next one while it
 *                  runs, STARPU_CUDA_PIPELINE), against a raw loop launching
 *                  the kernel and recording an event, two in flight;
 *   cuda.transfer  GB/s of 256 MiB of starpu_malloc()ed (pinned) memory
 *                  brought back from the device by starpu_data_acquire(),
 *                  against cudaMemcpy of the same pinned buffer.
 *
 *   cuda [-r REPETITIONS] [-n TASKS]   (one CPU worker unless -w says)
 * Prints bench.h's result lines for each side, then the ratio of the medians
 * (tasks: runtime/raw time; transfer: raw/runtime GB/s; 1 is parity).
 */
#include "bench.h"
#ifdef STARPU_USE_CUDA
#include <cuda_runtime.h>

void bench_cuda_nothing(cudaStream_t stream);

static void launch(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
	bench_cuda_nothing(starpu_cuda_get_local_stream());
}

static struct starpu_codelet launch_cl = {
	.where = STARPU_CUDA,
	.cuda_funcs = { launch },
	.cuda_flags = { STARPU_CUDA_ASYNC },
	.nbuffers = 0,
	.name = "cuda_launch",
};

static void touch(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

static struct starpu_codelet touch_cl = {
	.where = STARPU_CUDA,
	.cuda_funcs = { touch },
	.nbuffers = 1,
	.modes = { STARPU_RW },
	.name = "cuda_touch",
};

static double runtime_tasks(long n)
{
	double start = bench_now_us();
	for (long i = 0; i < n; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &launch_cl;
		if (starpu_task_submit(t) != 0)
			bench_die("starpu_task_submit failed");
	}
	starpu_task_wait_for_all();
	return (bench_now_us() - start) / (double)n;
}

static double raw_tasks(cudaStream_t stream, long n)
{
	cudaEvent_t events[2];
	for (int i = 0; i < 2; i++)
		if (cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming) != cudaSuccess)
			bench_die("cudaEventCreate failed");
	double start = bench_now_us();
	for (long i = 0; i < n; i++) {
		bench_cuda_nothing(stream);
		cudaEventRecord(events[i & 1], stream);
		if (i)
			cudaEventSynchronize(events[(i + 1) & 1]);
	}
	cudaStreamSynchronize(stream);
	double us = (bench_now_us() - start) / (double)n;
	cudaEventDestroy(events[0]);
	cudaEventDestroy(events[1]);
	return us;
}

int main(int argc, char **argv)
{
	struct bench_options o;
	const char *ncuda = getenv("STARPU_NCUDA");
	bench_parse(argc, argv, &o, 20000, 5, 0, NULL);
	/* bench_parse() asks for no CUDA worker: this one wants the devices found. */
	if (!ncuda)
		unsetenv("STARPU_NCUDA");
	setenv("STARPU_NCPU", "1", 0);
	if (starpu_init(NULL) != 0)
		bench_die("starpu_init failed");
	if (starpu_cuda_worker_get_count() == 0) {
		fprintf(stderr, "cuda: no CUDA worker here (no device, or STARPU_NCUDA=0): nothing to measure\n");
		starpu_shutdown();
		return 2;
	}
	cudaSetDevice(starpu_worker_get_devid(starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0)));
	cudaStream_t stream;
	if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
		bench_die("cudaStreamCreate failed");

	const size_t bytes = (size_t)256 << 20;
	char *host;
	void *device;
	if (starpu_malloc((void **)&host, bytes) != 0 || cudaMalloc(&device, bytes) != cudaSuccess)
		bench_die("cannot allocate 256 MiB on each side");
	memset(host, 1, bytes);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)host, bytes, 1);

	double rt[BENCH_MAX_SAMPLES], raw[BENCH_MAX_SAMPLES], rt_gbs[BENCH_MAX_SAMPLES], raw_gbs[BENCH_MAX_SAMPLES];
	runtime_tasks(o.ntasks / 10 + 1); /* warm-up: the kernel's first launch loads it */
	raw_tasks(stream, o.ntasks / 10 + 1);
	for (int r = 0; r < o.reps; r++) {
		rt[r] = runtime_tasks(o.ntasks);
		raw[r] = raw_tasks(stream, o.ntasks);
		/* Written on the device, then read back by the program. */
		if (starpu_task_insert(&touch_cl, STARPU_RW, h, 0) != 0)
			bench_die("starpu_task_insert failed");
		starpu_task_wait_for_all();
		double start = bench_now_us();
		if (starpu_data_acquire(h, STARPU_R) != 0)
			bench_die("starpu_data_acquire failed");
		rt_gbs[r] = (double)bytes / (bench_now_us() - start) / 1e3;
		starpu_data_release(h);
		start = bench_now_us();
		if (cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
			bench_die("cudaMemcpy failed");
		raw_gbs[r] = (double)bytes / (bench_now_us() - start) / 1e3;
	}
	bench_report("cuda.tasks.runtime", "us/task", rt, o.reps);
	bench_report("cuda.tasks.raw", "us/task", raw, o.reps);
	bench_report("cuda.transfer.runtime", "GB/s", rt_gbs, o.reps);
	bench_report("cuda.transfer.raw", "GB/s", raw_gbs, o.reps);
	printf("cuda.tasks ratio %.3f (STARPU_CUDA_PIPELINE=%s)\ncuda.transfer ratio %.3f\n",
	       bench_median(rt, o.reps) / bench_median(raw, o.reps),
	       getenv("STARPU_CUDA_PIPELINE") ? getenv("STARPU_CUDA_PIPELINE") : "2",
	       bench_median(raw_gbs, o.reps) / bench_median(rt_gbs, o.reps));
	starpu_data_unregister(h);
	starpu_free_noflag(host, bytes);
	cudaFree(device);
	cudaStreamDestroy(stream);
	starpu_shutdown();
	return 0;
}
#else
int main(void)
{
	fprintf(stderr, "cuda: Astrolabe was built without the CUDA toolkit: nothing to measure\n");
	return 2;
}
#endif
