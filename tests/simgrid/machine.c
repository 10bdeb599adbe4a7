/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A StarPU program run on the simulated machines of tests/test_simgrid.cc
 * (tests/data/simgrid): unchanged StarPU code, whose main() the simulation
 * build runs as an actor. argv[1] names the scenario; it prints the virtual
 * durations it measured with starpu_timing_now(), one "name=value" per line.
 *
 *   tasks N       N tasks of 1000 us on the CPU only (run with STARPU_NCUDA=0)
 *   both N        N tasks that the CPU runs in 1000 us and the GPU in 250 us
 *   transfer      one GPU task reading and writing a vector of 1,000,000 bytes
 *   evict         three GPU tasks each writing its own vector of 1,000,000 bytes
 *   uncalibrated  one task whose history-based model has no measurement
 *   threads       the thread calls of starpu_thread.h: try-locks on a read-write
 *                 lock (prints trylocks=ok, or the step that failed), and a
 *                 wait woken by a thread that signals its queue after 500 us
 *                 (prints waited_us)
 */
#include <errno.h>
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void kernel(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
	/* Never called in a simulation: the task lasts what the model says. */
	abort();
}

/* The CPU takes 1000 us, the GPU 250 us, whatever the data. */
static double length(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	(void)task;
	(void)nimpl;
	return arch->devices[0].type == STARPU_CPU_WORKER ? 1000.0 : 250.0;
}

static struct starpu_perfmodel per_arch = { .type = STARPU_PER_ARCH, .arch_cost_function = length, .symbol = "sim_per_arch" };
static struct starpu_perfmodel history = { .type = STARPU_HISTORY_BASED, .symbol = "sim_never_measured" };

static struct starpu_codelet on_both = {
	.cpu_funcs = { kernel },
	.cuda_funcs = { (starpu_cuda_func_t)1 },	/* StarPU's placeholder for a simulated implementation */
	.nbuffers = 0,
	.model = &per_arch,
	.name = "on_both",
};

static struct starpu_codelet on_gpu = {
	.cuda_funcs = { (starpu_cuda_func_t)1 },
	.nbuffers = 1,
	.modes = { STARPU_RW },
	.model = &per_arch,
	.name = "on_gpu",
};

static struct starpu_codelet never_measured = {
	.cpu_funcs = { kernel },
	.nbuffers = 0,
	.model = &history,
	.name = "never_measured",
};

static void submit_all(struct starpu_codelet *cl, int n)
{
	for (int i = 0; i < n; i++) {
		int ret = starpu_task_insert(cl, 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	}
}

static int with_vectors(int n)
{
	static char vectors[3][1000000];
	starpu_data_handle_t handles[3];
	double start = starpu_timing_now();
	for (int i = 0; i < n; i++) {
		starpu_vector_data_register(&handles[i], STARPU_MAIN_RAM, (uintptr_t)vectors[i], sizeof(vectors[i]), 1);
		int ret = starpu_task_insert(&on_gpu, STARPU_RW, handles[i], 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	}
	starpu_task_wait_for_all();
	printf("tasks_us=%.3f\n", starpu_timing_now() - start);
	for (int i = 0; i < n; i++)
		starpu_data_unregister(handles[i]);
	printf("with_unregister_us=%.3f\n", starpu_timing_now() - start);
	return 0;
}

/* The try-locks' answers in each state of a read-write lock; 0 when all are right, else the failing step. */
static int try_rwlock(void)
{
	starpu_pthread_rwlock_t rw;
	starpu_pthread_rwlock_init(&rw, NULL);
	starpu_pthread_rwlock_wrlock(&rw);
	if (starpu_pthread_rwlock_tryrdlock(&rw) != EBUSY)
		return 1;
	if (starpu_pthread_rwlock_trywrlock(&rw) != EBUSY)
		return 2;
	starpu_pthread_rwlock_unlock(&rw);
	if (starpu_pthread_rwlock_tryrdlock(&rw) != 0 || starpu_pthread_rwlock_tryrdlock(&rw) != 0)
		return 3;
	if (starpu_pthread_rwlock_trywrlock(&rw) != EBUSY)
		return 4;
	starpu_pthread_rwlock_unlock(&rw);
	starpu_pthread_rwlock_unlock(&rw);
	if (starpu_pthread_rwlock_trywrlock(&rw) != 0)
		return 5;
	starpu_pthread_rwlock_unlock(&rw);
	return starpu_pthread_rwlock_destroy(&rw) == 0 ? 0 : 6;
}

static starpu_pthread_queue_t producer_queue;

static void *produce_later(void *arg)
{
	(void)arg;
	starpu_usleep(500);
	starpu_pthread_queue_signal(&producer_queue);
	return NULL;
}

/* Waits for a thread that signals its queue after 500 us of virtual time; prints how long it waited. */
static void wait_for_producer(void)
{
	starpu_pthread_wait_t w;
	starpu_pthread_t producer;
	starpu_pthread_queue_init(&producer_queue);
	starpu_pthread_wait_init(&w);
	starpu_pthread_queue_register(&w, &producer_queue);
	starpu_pthread_wait_reset(&w);
	double start = starpu_timing_now();
	starpu_pthread_create(&producer, NULL, produce_later, NULL);
	starpu_pthread_wait_wait(&w);
	printf("waited_us=%.3f\n", starpu_timing_now() - start);
	starpu_pthread_join(producer, NULL);
	starpu_pthread_queue_unregister(&w, &producer_queue);
	starpu_pthread_wait_destroy(&w);
	starpu_pthread_queue_destroy(&producer_queue);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s tasks|both|transfer|evict|uncalibrated|threads [N]\n", argv[0]);
		return 2;
	}
	int n = argc > 2 ? atoi(argv[2]) : 5;
	int ret = starpu_init(NULL);
	if (ret != 0) {
		fprintf(stderr, "starpu_init: %d\n", ret);
		return 1;
	}
	printf("workers=%u\ncpu=%u\ncuda=%u\nopencl=%u\n", starpu_worker_get_count(), starpu_cpu_worker_get_count(), starpu_cuda_worker_get_count(),
	       starpu_opencl_worker_get_count());
	double start = starpu_timing_now();
	if (strcmp(argv[1], "tasks") == 0 || strcmp(argv[1], "both") == 0)
		submit_all(&on_both, n);
	else if (strcmp(argv[1], "transfer") == 0)
		with_vectors(1);
	else if (strcmp(argv[1], "evict") == 0)
		with_vectors(3);
	else if (strcmp(argv[1], "uncalibrated") == 0)
		submit_all(&never_measured, 1);
	else if (strcmp(argv[1], "threads") == 0) {
		int failed = try_rwlock();
		if (failed)
			printf("trylocks=failed at step %d\n", failed);
		else
			printf("trylocks=ok\n");
		wait_for_producer();
	}
	starpu_task_wait_for_all();
	printf("makespan_us=%.3f\n", starpu_timing_now() - start);
	starpu_shutdown();
	return 0;
}
