/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulated workers of a simulation build (configure --enable-simgrid):
 * CPU, CUDA and OpenCL workers of the machine the platform file describes
 * (its hosts CPU0..., CUDA0..., OpenCL0...), without the hardware.
 *
 * A codelet does not run: its task lasts, in virtual time, what the
 * codelet's performance model predicts for the worker's architecture; a task
 * whose model has no prediction there ends the simulation with a message
 * naming the codelet, the architecture and the footprint (calibrate it
 * natively first). A codelet flagged STARPU_CODELET_SIMGRID_EXECUTE runs for
 * real on a simulated CPU worker, in no virtual time.
 *
 * A device's memory is an address range that is never touched: allocations
 * count against the host's "memsize" (eviction happens as on the machine),
 * and a copy takes the time SimGrid gives a message of its size on the
 * route between the host "RAM" and the device's, shared links included.
 */
#include <astrolabe/plugin.h>
#include <astrolabe/thread.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <simgrid/host.h>
#include <unistd.h>

/* ---------------------------------------------------------------- hosts */

/* Hosts prefix0, prefix1... of the platform: how many in a row. */
static int count_hosts(const char *prefix)
{
	int n = 0;
	char name[64];
	for (;; n++) {
		snprintf(name, sizeof(name), "%s%d", prefix, n);
		if (!astro_sim_host(name))
			return n;
	}
}

static int count_cpus(void) { return count_hosts("CPU"); }
static int count_cuda(void) { int n = count_hosts("CUDA"); return n < STARPU_MAXCUDADEVS ? n : STARPU_MAXCUDADEVS; }
static int count_opencl(void) { int n = count_hosts("OpenCL"); return n < STARPU_MAXOPENCLDEVS ? n : STARPU_MAXOPENCLDEVS; }
static int max_cpus(void) { return STARPU_MAXCPUS; }

/* ------------------------------------------------------------ execution */

static __attribute__((noreturn)) void uncalibrated(int workerid, struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	const struct starpu_codelet *cl = task->cl;
	char archname[128], worker[64];
	starpu_perfmodel_get_arch_name(arch, archname, sizeof(archname), nimpl);
	starpu_worker_get_name(workerid, worker, sizeof(worker));
	const char *name = cl->name ? cl->name : cl->model && cl->model->symbol ? cl->model->symbol : "(unnamed)";
	if (!cl->model)
		astro_log_error("simulation", "codelet %s has no performance model, so its task (job %lu) has no length on %s: "
				"give the codelet a model and calibrate it natively (STARPU_CALIBRATE=1) before simulating",
				name, starpu_task_get_job_id(task), worker);
	else
		astro_log_error("simulation", "codelet %s (model %s) has no calibrated length for %s (footprint %08x), "
				"so its task (job %lu) cannot run on %s: calibrate it natively on the machine simulated "
				"(STARPU_CALIBRATE=1, same STARPU_HOSTNAME) before simulating",
				name, cl->model->symbol ? cl->model->symbol : "(no symbol)", archname,
				starpu_task_footprint(cl->model, task, arch, nimpl), starpu_task_get_job_id(task), worker);
	fflush(NULL);
	_exit(1);
}

static void simulate(int workerid, struct starpu_task *task, void **buffers, unsigned nimpl)
{
	const struct starpu_codelet *cl = task->cl;
	if ((cl->flags & (STARPU_CODELET_SIMGRID_EXECUTE | STARPU_CODELET_SIMGRID_EXECUTE_AND_INJECT)) &&
	    starpu_worker_get_type(workerid) == STARPU_CPU_WORKER && cl->cpu_funcs[nimpl]) {
		cl->cpu_funcs[nimpl](buffers, task->cl_arg);
		return;
	}
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(workerid, task->sched_ctx);
	double us = cl->model ? starpu_task_expected_length(task, arch, nimpl) : NAN;
	if (!(us >= 0) || isinf(us))
		uncalibrated(workerid, task, arch, nimpl);
	astro_sleep_ns((uint64_t)llround(us * 1e3));
}

static int cpu_impl(const struct starpu_codelet *cl, unsigned nimpl)
{
	return nimpl < STARPU_MAXIMPLEMENTATIONS && cl->cpu_funcs[nimpl] != NULL;
}

/* A program declares the device implementations a simulated worker may take with any non-NULL
 * pointer, as StarPU's do under STARPU_SIMGRID: .cuda_funcs = {(void *)1}. */
static int cuda_impl(const struct starpu_codelet *cl, unsigned nimpl)
{
	return nimpl < STARPU_MAXIMPLEMENTATIONS && cl->cuda_funcs[nimpl] != NULL;
}

static int opencl_impl(const struct starpu_codelet *cl, unsigned nimpl)
{
	return nimpl < STARPU_MAXIMPLEMENTATIONS && cl->opencl_funcs[nimpl] != NULL;
}

/* --------------------------------------------------------- device memory */

struct device
{
	char name[16];		/* its host's ("CUDA0"); empty until first used */
	size_t size, used;
	uintptr_t next;		/* the next address handed out: never touched, never reused */
};

static struct device devices[2][STARPU_MAXCUDADEVS > STARPU_MAXOPENCLDEVS ? STARPU_MAXCUDADEVS : STARPU_MAXOPENCLDEVS];
static starpu_pthread_mutex_t devices_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
enum { CUDA, OPENCL };
static const char *const prefixes[2] = { "CUDA", "OpenCL" };

static struct device *device(int kind, int devid)
{
	struct device *d = &devices[kind][devid];
	if (!d->name[0]) {
		snprintf(d->name, sizeof(d->name), "%s%d", prefixes[kind], devid);
		sg_host_t host = astro_sim_host(d->name);
		const char *memsize = host ? sg_host_get_property_value(host, "memsize") : NULL;
		d->size = memsize ? strtoull(memsize, NULL, 10) : 0;
		d->next = 0x100000;
	}
	return d;
}

static uintptr_t allocate(int kind, int devid, size_t size)
{
	starpu_pthread_mutex_lock(&devices_lock);
	struct device *d = device(kind, devid);
	uintptr_t addr = 0;
	if (!d->size || d->used + size <= d->size) {
		d->used += size;
		addr = d->next;
		d->next += (size + 255) & ~(uintptr_t)255;
	}
	starpu_pthread_mutex_unlock(&devices_lock);
	return addr;
}

static void release(int kind, int devid, size_t size)
{
	starpu_pthread_mutex_lock(&devices_lock);
	struct device *d = device(kind, devid);
	d->used -= size < d->used ? size : d->used;
	starpu_pthread_mutex_unlock(&devices_lock);
}

/* A copy lasts what the machine's route between the two hosts gives size bytes. */
static int transfer(int kind, int devid, bool to_device, size_t size, void **request)
{
	const char *dev = device(kind, devid)->name;
	if (request)
		*request = NULL;
	return astro_sim_sendto(to_device ? "RAM" : dev, to_device ? dev : "RAM", (double)size);
}

static uintptr_t cuda_allocate(int devid, size_t size) { return allocate(CUDA, devid, size); }
static void cuda_free(int devid, uintptr_t addr, size_t size) { (void)addr; release(CUDA, devid, size); }
static int cuda_from_ram(int devid, const void *src, uintptr_t dst, size_t off, size_t size, void **request)
{
	(void)src; (void)dst; (void)off;
	return transfer(CUDA, devid, true, size, request);
}
static int cuda_to_ram(int devid, uintptr_t src, size_t off, void *dst, size_t size, void **request)
{
	(void)src; (void)dst; (void)off;
	return transfer(CUDA, devid, false, size, request);
}
static size_t cuda_size(int devid) { return device(CUDA, devid)->size; }

static uintptr_t opencl_allocate(int devid, size_t size) { return allocate(OPENCL, devid, size); }
static void opencl_free(int devid, uintptr_t addr, size_t size) { (void)addr; release(OPENCL, devid, size); }
static int opencl_from_ram(int devid, const void *src, uintptr_t dst, size_t off, size_t size, void **request)
{
	(void)src; (void)dst; (void)off;
	return transfer(OPENCL, devid, true, size, request);
}
static int opencl_to_ram(int devid, uintptr_t src, size_t off, void *dst, size_t size, void **request)
{
	(void)src; (void)dst; (void)off;
	return transfer(OPENCL, devid, false, size, request);
}
static size_t opencl_size(int devid) { return device(OPENCL, devid)->size; }

static const struct astro_node_ops cuda_nodes = {
	.kind = STARPU_CUDA_RAM,
	.allocate = cuda_allocate,
	.free = cuda_free,
	.copy_from_ram = cuda_from_ram,
	.copy_to_ram = cuda_to_ram,
	.memory_size = cuda_size,
};

static const struct astro_node_ops opencl_nodes = {
	.kind = STARPU_OPENCL_RAM,
	.allocate = opencl_allocate,
	.free = opencl_free,
	.copy_from_ram = opencl_from_ram,
	.copy_to_ram = opencl_to_ram,
	.memory_size = opencl_size,
};

/* -------------------------------------------------------------- drivers */

static const struct astro_driver drivers[] = {
	{
		.name = "cpu",
		.archtype = STARPU_CPU_WORKER,
		.where = STARPU_CPU,
		.count_env = "STARPU_NCPU",
		.count_env_alias = "STARPU_NCPUS",
		.conf_count_offset = offsetof(struct starpu_conf, ncpus),
		.default_count = count_cpus,
		.max_count = max_cpus,
		.has_impl = cpu_impl,
		.execute = simulate,
	},
	{
		.name = "cuda",
		.archtype = STARPU_CUDA_WORKER,
		.where = STARPU_CUDA,
		.count_env = "STARPU_NCUDA",
		.conf_count_offset = offsetof(struct starpu_conf, ncuda),
		.default_count = count_cuda,
		.max_count = count_cuda,
		.has_impl = cuda_impl,
		.execute = simulate,
		.node_ops = &cuda_nodes,
	},
	{
		.name = "opencl",
		.archtype = STARPU_OPENCL_WORKER,
		.where = STARPU_OPENCL,
		.count_env = "STARPU_NOPENCL",
		.conf_count_offset = offsetof(struct starpu_conf, nopencl),
		.default_count = count_opencl,
		.max_count = count_opencl,
		.has_impl = opencl_impl,
		.execute = simulate,
		.node_ops = &opencl_nodes,
	},
};

static int init(void)
{
	for (unsigned i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
		int ret = astro_driver_register(&drivers[i]);
		if (ret)
			return ret;
	}
	return 0;
}

ASTRO_PLUGIN_DEFINE(driver_simgrid, ASTRO_PLUGIN_DRIVER, "simulated CPU, CUDA and OpenCL workers (SimGrid)", init, NULL);
