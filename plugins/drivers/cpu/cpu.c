/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CPU driver: one worker per core, running the codelet's cpu_funcs. */
#include <astrolabe/plugin.h>
#include <hwloc.h>
#include <stddef.h>

static int ncores = -1;

static int count_cores(void)
{
	if (ncores < 0) {
		hwloc_topology_t topo;
		hwloc_topology_init(&topo);
		hwloc_topology_load(topo);
		int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
		if (n <= 0)
			n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
		hwloc_topology_destroy(topo);
		ncores = n > 0 ? n : 1;
	}
	return ncores;
}

static int max_workers(void)
{
	return STARPU_MAXCPUS;
}

static int has_impl(const struct starpu_codelet *cl, unsigned nimpl)
{
	return nimpl < STARPU_MAXIMPLEMENTATIONS && cl->cpu_funcs[nimpl] != NULL;
}

static void execute(int workerid, struct starpu_task *task, void **buffers, unsigned nimpl)
{
	(void)workerid;
	task->cl->cpu_funcs[nimpl](buffers, task->cl_arg);
}

static const struct astro_driver cpu_driver = {
	.name = "cpu",
	.archtype = STARPU_CPU_WORKER,
	.where = STARPU_CPU,
	.count_env = "STARPU_NCPU",
	.count_env_alias = "STARPU_NCPUS",
	.conf_count_offset = offsetof(struct starpu_conf, ncpus),
	.default_count = count_cores,
	.max_count = max_workers,
	.has_impl = has_impl,
	.execute = execute,
};

static int init(void)
{
	return astro_driver_register(&cpu_driver);
}

ASTRO_PLUGIN_DEFINE(driver_cpu, ASTRO_PLUGIN_DRIVER, "CPU workers, one per core (STARPU_NCPU)", init, NULL);
