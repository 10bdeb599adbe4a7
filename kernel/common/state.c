/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime's shared state (common/state.h): the configuration, the
 * workers' table, the counts every room reads, and where the runtime is in
 * its life. starpu_init() fills it (core/init.c); every room reads it.
 */
#include "common/common.h"
#include <hwloc.h>
#include <starpu_sched_component.h> /* starpu_get_hwloc_topology */

struct _astro_runtime _astro_rt;

int _astro_conf_int_in(const char *env, const char *alias, int conf_value, int min, int max, int fallback)
{
	bool conf_wins = _astro_rt.conf.precedence_over_environment_variables && conf_value != -1;
	if (conf_wins)
		return conf_value;
	int instead = conf_value != -1 ? conf_value : fallback, v;
	if (_astro_env_int(env, min, max, &instead, &v) == 1)
		return v;
	if (alias && !starpu_getenv(env) && _astro_env_int(alias, min, max, &instead, &v) == 1)
		return v;
	return instead;
}

hwloc_topology_t starpu_get_hwloc_topology(void)
{
	return (hwloc_topology_t)_astro_rt.topology;
}

int starpu_is_initialized(void)
{
	return _astro_running();
}

/* starpu_init() resolved the switches from the conf and the STARPU_DISABLE_ASYNCHRONOUS_* variables (core/init.c). */
int starpu_asynchronous_copy_disabled(void)
{
	return _astro_rt.conf.disable_asynchronous_copy > 0;
}

int starpu_asynchronous_cuda_copy_disabled(void)
{
	return _astro_rt.conf.disable_asynchronous_cuda_copy > 0;
}

int starpu_asynchronous_hip_copy_disabled(void)
{
	return _astro_rt.conf.disable_asynchronous_hip_copy > 0;
}

int starpu_asynchronous_opencl_copy_disabled(void)
{
	return _astro_rt.conf.disable_asynchronous_opencl_copy > 0;
}

int starpu_asynchronous_max_fpga_copy_disabled(void)
{
	return _astro_rt.conf.disable_asynchronous_max_fpga_copy > 0;
}

int starpu_asynchronous_mpi_ms_copy_disabled(void)
{
	return _astro_rt.conf.disable_asynchronous_mpi_ms_copy > 0;
}

int starpu_asynchronous_tcpip_ms_copy_disabled(void)
{
	return _astro_rt.conf.disable_asynchronous_tcpip_ms_copy > 0;
}

int starpu_asynchronous_copy_disabled_for(enum starpu_node_kind kind)
{
	switch (kind) {
	case STARPU_CPU_RAM:
	case STARPU_DISK_RAM: return starpu_asynchronous_copy_disabled();
	case STARPU_CUDA_RAM: return starpu_asynchronous_cuda_copy_disabled();
	case STARPU_OPENCL_RAM: return starpu_asynchronous_opencl_copy_disabled();
	case STARPU_HIP_RAM: return starpu_asynchronous_hip_copy_disabled();
	case STARPU_MAX_FPGA_RAM: return starpu_asynchronous_max_fpga_copy_disabled();
	case STARPU_MPI_MS_RAM: return starpu_asynchronous_mpi_ms_copy_disabled();
	case STARPU_TCPIP_MS_RAM: return starpu_asynchronous_tcpip_ms_copy_disabled();
	default:
		_astro_error("starpu_asynchronous_copy_disabled_for: %d is not a memory node kind: give one of enum starpu_node_kind "
			     "(STARPU_CPU_RAM, STARPU_CUDA_RAM...)", (int)kind);
		return -EINVAL;
	}
}

/* Data always moves between nodes by copies here: no interface's map_data is ever used. */
int starpu_map_enabled(void)
{
	return 0;
}
