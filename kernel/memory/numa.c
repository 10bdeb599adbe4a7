/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Main memory per NUMA node (STARPU_USE_NUMA=1, as StarPU 1.4): one RAM
 * memory node per NUMA node hwloc reports, in its logical order (node 0,
 * STARPU_MAIN_RAM, is the first), at most STARPU_MAXNUMANODES; a CPU worker
 * works in the node of the processing unit it is bound to, and the copies
 * another node's worker needs move there like a device's. Without the
 * variable (the default), one RAM node for the whole machine.
 */
#include "memory/memory.h"
#include <hwloc.h>

static hwloc_obj_t numa_objs[STARPU_MAXNUMANODES];
static unsigned nnuma = 1;

static hwloc_topology_t topology(void)
{
	return (hwloc_topology_t)_astro_rt.topology;
}

unsigned _astro_numa_nodes_init(void)
{
	memset(numa_objs, 0, sizeof(numa_objs));
	nnuma = 1;
	if (_astro_env_int_in("STARPU_USE_NUMA", 0, 1, 0) == 0 || !topology())
		return nnuma;
	int found = hwloc_get_nbobjs_by_type(topology(), HWLOC_OBJ_NUMANODE);
	if (found > STARPU_MAXNUMANODES)
		_astro_warn("STARPU_USE_NUMA: %d NUMA nodes but this build handles %d (STARPU_MAXNUMANODES): the others' memory is "
			    "reached through node %d", found, STARPU_MAXNUMANODES, STARPU_MAXNUMANODES - 1);
	nnuma = found < 1 ? 1 : found > STARPU_MAXNUMANODES ? STARPU_MAXNUMANODES : (unsigned)found;
	for (unsigned i = 0; i < nnuma; i++)
		numa_objs[i] = hwloc_get_obj_by_type(topology(), HWLOC_OBJ_NUMANODE, i);
	return nnuma;
}

unsigned starpu_memory_nodes_get_numa_count(void)
{
	return nnuma;
}

unsigned _astro_numa_node_of_pu(int pu)
{
	if (nnuma <= 1 || pu < 0)
		return STARPU_MAIN_RAM;
	hwloc_obj_t obj = hwloc_get_obj_by_type(topology(), HWLOC_OBJ_PU, (unsigned)pu);
	for (unsigned i = 0; obj && i < nnuma; i++)
		if (numa_objs[i] && hwloc_bitmap_isincluded(obj->cpuset, numa_objs[i]->cpuset))
			return i;
	/* Beyond the nodes handled: the last one stands for them. */
	return obj ? nnuma - 1 : STARPU_MAIN_RAM;
}

void _astro_numa_bind_area(unsigned node, void *addr, size_t size)
{
	/* Best effort: pages stay where they are when the system refuses. */
	if (node < nnuma && numa_objs[node] && addr && size)
		(void)hwloc_set_area_membind(topology(), addr, size, numa_objs[node]->nodeset, HWLOC_MEMBIND_BIND,
					     HWLOC_MEMBIND_BYNODESET);
}

size_t _astro_numa_memory(unsigned node)
{
	return node < nnuma && numa_objs[node] ? (size_t)numa_objs[node]->attr->numanode.local_memory : 0;
}

/* Memory node of the NUMA node the system numbers osid, -1 when none. */
int starpu_memory_nodes_numa_id_to_devid(int osid)
{
	for (unsigned i = 0; i < nnuma; i++)
		if (numa_objs[i] ? (int)numa_objs[i]->os_index == osid : osid == 0)
			return (int)i;
	return -1;
}

/* The system's number of the NUMA node of memory node id, -1 when it is none. */
int starpu_memory_nodes_numa_devid_to_id(unsigned id)
{
	if (id >= nnuma)
		return -1;
	return numa_objs[id] ? (int)numa_objs[id]->os_index : 0;
}

int starpu_memory_nodes_numa_id_to_hwloclogid(unsigned id)
{
	if (id >= nnuma)
		return -1;
	return numa_objs[id] ? (int)numa_objs[id]->logical_index : 0;
}

int starpu_memory_nodes_numa_hwloclogid_to_id(int logid)
{
	for (unsigned i = 0; i < nnuma; i++)
		if (numa_objs[i] ? (int)numa_objs[i]->logical_index == logid : logid == 0)
			return (int)i;
	return -1;
}
