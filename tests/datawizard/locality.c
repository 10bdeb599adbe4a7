/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Performance models the application gives explicitly, per architecture
 * (STARPU_PER_ARCH, seed 003 section 3.3): one codelet's model has an
 * arch_cost_function (one function for every architecture, told which), the
 * other's per-architecture cost_function set for the CPU architecture
 * (starpu_perfmodel_set_per_devices_cost_function, StarPU 1.4's way to fill
 * per_arch[arch][nimpl].cost_function). Tasks of both touch a few vectors in
 * turn under the policy of STARPU_SCHED (dmda schedules by these
 * predictions and by where the data is); each prediction the runtime makes
 * is checked against the function's value.
 *
 * Prints "<codelet> <bytes>: expected X us" per size and "N tasks run";
 * exit status 0 when every prediction is the function's, 1 otherwise.
 */
#include <starpu.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NVECTORS 4
#define NTASKS 24

/* 1 µs per KiB on a CPU, 8 times faster elsewhere. */
static double arch_cost(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	(void)nimpl;
	double kib = starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, 0)) / 1024.0;
	return arch->devices[0].type == STARPU_CPU_WORKER ? kib : kib / 8;
}

/* The CPU architecture's own function: 2 µs per KiB plus 5. */
static double cpu_cost(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	(void)arch, (void)nimpl;
	return 5 + 2 * starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, 0)) / 1024.0;
}

static void touch(void *buffers[], void *arg)
{
	(void)arg;
	char *v = (char *)STARPU_VECTOR_GET_PTR(buffers[0]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	for (unsigned i = 0; i < n; i++)
		v[i]++;
}

static struct starpu_perfmodel arch_model = { .type = STARPU_PER_ARCH, .arch_cost_function = arch_cost };
static struct starpu_perfmodel per_arch_model = { .type = STARPU_PER_ARCH };

static struct starpu_codelet arch_cl = {
	.cpu_funcs = { touch }, .cpu_funcs_name = { "touch" }, .nbuffers = 1, .modes = { STARPU_RW }, .model = &arch_model, .name = "arch_cost",
};
static struct starpu_codelet per_arch_cl = {
	.cpu_funcs = { touch }, .cpu_funcs_name = { "touch" }, .nbuffers = 1, .modes = { STARPU_RW }, .model = &per_arch_model, .name = "per_arch_cost",
};

static int wrong;

/* The runtime's prediction for a task of cl on h, on the first CPU worker's architecture, against want. */
static void check(struct starpu_codelet *cl, starpu_data_handle_t h, double (*want)(struct starpu_task *, struct starpu_perfmodel_arch *, unsigned))
{
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(starpu_worker_get_by_type(STARPU_CPU_WORKER, 0), 0);
	struct starpu_task *task = starpu_task_create();
	task->cl = cl;
	task->handles[0] = h;
	double got = starpu_task_expected_length(task, arch, 0), expected = want(task, arch, 0);
	printf("%s %zu: expected %.3f us\n", cl->name, starpu_data_get_size(h), got);
	if (!(fabs(got - expected) <= 1e-9 * expected)) {
		fprintf(stderr, "locality: %s predicts %f us, its cost function %f us\n", cl->name, got, expected);
		wrong = 1;
	}
	starpu_task_destroy(task);
}

int main(void)
{
	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	if (starpu_cpu_worker_get_count() == 0) {
		starpu_shutdown();
		return 77;
	}
	ret = starpu_perfmodel_set_per_devices_cost_function(&per_arch_model, 0, cpu_cost, STARPU_CPU_WORKER, 0, 1, -1);
	if (ret) {
		fprintf(stderr, "locality: starpu_perfmodel_set_per_devices_cost_function: %s\n", strerror(-ret));
		starpu_shutdown();
		return 1;
	}

	static char data[NVECTORS][4096 << NVECTORS];
	starpu_data_handle_t h[NVECTORS];
	for (int v = 0; v < NVECTORS; v++)
		starpu_vector_data_register(&h[v], STARPU_MAIN_RAM, (uintptr_t)data[v], 4096u << v, 1);
	for (int v = 0; v < NVECTORS; v++) {
		check(&arch_cl, h[v], arch_cost);
		check(&per_arch_cl, h[v], cpu_cost);
	}
	int status = 0;
	for (int t = 0; t < NTASKS && status == 0; t++) {
		ret = starpu_task_insert(t % 2 ? &per_arch_cl : &arch_cl, STARPU_RW, h[t % NVECTORS], 0);
		if (ret) {
			fprintf(stderr, "locality: a task could not be submitted: %s\n", strerror(-ret));
			status = ret == -ENODEV ? 77 : 1;
		}
	}
	starpu_task_wait_for_all();
	for (int v = 0; v < NVECTORS; v++)
		starpu_data_unregister(h[v]);
	starpu_shutdown();
	/* Every vector was touched NTASKS / NVECTORS times. */
	for (int v = 0; status == 0 && v < NVECTORS; v++)
		if (data[v][0] != NTASKS / NVECTORS) {
			fprintf(stderr, "locality: vector %d was touched %d times, not %d\n", v, data[v][0], NTASKS / NVECTORS);
			status = 1;
		}
	if (status == 0)
		printf("%d tasks run\n", NTASKS);
	return status ? status : wrong;
}
