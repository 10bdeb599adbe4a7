/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Memory nodes by kind: finding a kind's nodes, and which kind of memory
 * each kind of worker computes in (starpu_worker.h). A kind and a worker
 * type name the same device families, so the two tables below are one.
 */
#include "memory/memory.h"

static const struct
{
	enum starpu_node_kind kind;
	enum starpu_worker_archtype arch;
} kind_arch[] = {
	{STARPU_CPU_RAM, STARPU_CPU_WORKER},           {STARPU_CUDA_RAM, STARPU_CUDA_WORKER},
	{STARPU_OPENCL_RAM, STARPU_OPENCL_WORKER},     {STARPU_HIP_RAM, STARPU_HIP_WORKER},
	{STARPU_MAX_FPGA_RAM, STARPU_MAX_FPGA_WORKER}, {STARPU_MPI_MS_RAM, STARPU_MPI_MS_WORKER},
	{STARPU_TCPIP_MS_RAM, STARPU_TCPIP_MS_WORKER},
	/* CPU workers are the ones that read and write disk nodes. */
	{STARPU_DISK_RAM, STARPU_CPU_WORKER},
};

#define NKINDS (sizeof(kind_arch) / sizeof(kind_arch[0]))

enum starpu_worker_archtype starpu_memory_node_get_worker_archtype(enum starpu_node_kind node_kind)
{
	for (unsigned i = 0; i < NKINDS; i++)
		if (kind_arch[i].kind == node_kind)
			return kind_arch[i].arch;
	_astro_error("starpu_memory_node_get_worker_archtype: %d is not a memory node kind: give one of enum starpu_node_kind "
		     "(STARPU_CPU_RAM, STARPU_CUDA_RAM...)", (int)node_kind);
	return STARPU_UNKNOWN_WORKER;
}

enum starpu_node_kind starpu_worker_get_memory_node_kind(enum starpu_worker_archtype type)
{
	/* The first entry of a type is its own memory (a CPU worker's is main memory, not a disk). */
	for (unsigned i = 0; i < NKINDS; i++)
		if (kind_arch[i].arch == type)
			return kind_arch[i].kind;
	_astro_error("starpu_worker_get_memory_node_kind: %d is not a worker type: give one of enum starpu_worker_archtype "
		     "(STARPU_CPU_WORKER, STARPU_CUDA_WORKER...)", (int)type);
	return STARPU_UNUSED;
}

unsigned starpu_memory_devid_find_node(int devid, enum starpu_node_kind kind)
{
	for (unsigned node = 0; node < starpu_memory_nodes_get_count(); node++)
		if (starpu_node_get_kind(node) == kind && starpu_memory_node_get_devid(node) == devid)
			return node;
	return (unsigned)-1;
}

unsigned starpu_memory_node_get_ids_by_type(enum starpu_node_kind kind, unsigned *memory_nodes_ids, unsigned maxsize)
{
	if (!memory_nodes_ids && maxsize) {
		_astro_error("starpu_memory_node_get_ids_by_type: NULL memory_nodes_ids: give an array of maxsize entries");
		return (unsigned)-EINVAL;
	}
	unsigned n = 0;
	for (unsigned node = 0; node < starpu_memory_nodes_get_count(); node++) {
		if (starpu_node_get_kind(node) != kind)
			continue;
		if (n == maxsize)
			return (unsigned)-ERANGE;
		memory_nodes_ids[n++] = node;
	}
	return n;
}

int starpu_node_needs_offset(unsigned node)
{
	return starpu_node_get_kind(node) == STARPU_OPENCL_RAM;
}
