/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_machine_display: starts the runtime and shows what it found, with
 * StarPU's options and output: the hostname, the workers of each kind, the
 * topology they are bound to (hwloc logical indexes), and the bandwidth and
 * latency between the memory nodes.
 *
 * Only the memory nodes this build drives appear; on a main-memory-only
 * build that is the single NUMA 0 node, with no bus to measure.
 */
#include <astrolabe/env.h>
#include <starpu.h>
#include <hwloc.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kinds of workers, in the order starpu_machine_display lists them. */
static const enum starpu_worker_archtype kinds[] = {
	STARPU_CPU_WORKER, STARPU_CUDA_WORKER, STARPU_OPENCL_WORKER, STARPU_MAX_FPGA_WORKER,
	STARPU_MPI_MS_WORKER, STARPU_TCPIP_MS_WORKER, STARPU_HIP_WORKER,
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static void usage(FILE *out, const char *argv0)
{
	fprintf(out, "Usage: %s [OPTION]\n"
		"Show the processing units the runtime can use, and the bandwidth and latency between the memory nodes.\n\n"
		"  -h, --help          display this help and exit\n"
		"  -v, --version       output version information and exit\n"
		"  -i, --info          display the name of the files holding the bus measurements\n"
		"  -f, --force         measure the buses again and show the measures (as starpu_calibrate_bus)\n"
		"  -w, --worker TYPE   only show workers of TYPE (CPU, CUDA, OpenCL, FPGA, MPI_MS, TCPIP_MS, HIP)\n"
		"  -c, --count         only display the number of workers\n"
		"  -n, --notopology    do not display the topology, bandwidth and latency\n", argv0);
}

/* The hostname models and bus files are filed under: STARPU_HOSTNAME, or the host name up to its first dot. */
static void hostnames(char *real, char *starpu_name, size_t size)
{
	if (gethostname(real, size) != 0)
		snprintf(real, size, "unknown");
	real[size - 1] = '\0';
	const char *forced = astro_env_string("STARPU_HOSTNAME", ASTRO_ENV_NAME_MAX, NULL);
	if (forced && *forced) {
		snprintf(starpu_name, size, "%s", forced);
		return;
	}
	snprintf(starpu_name, size, "%s", real);
	char *dot = strchr(starpu_name, '.');
	if (dot)
		*dot = '\0';
}

/* Names of the workers bound to processing unit pu (hwloc logical index), each padded as a column. */
static void print_workers_on(unsigned pu)
{
	for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
		if (starpu_worker_get_bindid((int)w) != (int)pu)
			continue;
		char name[64];
		starpu_worker_get_name((int)w, name, sizeof(name));
		printf("%-11s", name);
	}
}

/* One line per processing unit: NUMA node, package and core when they change, then the workers bound there. */
static void print_topology(void)
{
	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
		fprintf(stderr, "starpu_machine_display: hwloc could not read the topology: skipping it\n");
		return;
	}
	printf("topology ... (hwloc logical indexes)\n");
	int npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	int last_numa = -1, last_pack = -1, last_core = -1;
	for (int i = 0; i < npus; i++) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
		hwloc_obj_t pack = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
		hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
		/* NUMA nodes are memory children in hwloc 2: find the one whose cpuset holds this PU. */
		hwloc_obj_t numa = NULL;
		for (hwloc_obj_t n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, NULL); n;
		     n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n))
			if (n->cpuset && hwloc_bitmap_isset(n->cpuset, pu->os_index)) {
				numa = n;
				break;
			}
		int numa_idx = numa ? (int)numa->logical_index : 0;
		int pack_idx = pack ? (int)pack->logical_index : 0;
		int core_idx = core ? (int)core->logical_index : i;
		if (numa_idx != last_numa)
			printf("numa %2d", numa_idx);
		printf("\t");
		if (pack_idx != last_pack || numa_idx != last_numa)
			printf("pack %2d", pack_idx);
		printf("\t");
		if (core_idx != last_core)
			printf("core %-6d", core_idx);
		else
			printf("%-11s", "");
		printf("PU %-6d", i);
		print_workers_on((unsigned)i);
		printf("\n");
		last_numa = numa_idx;
		last_pack = pack_idx;
		last_core = core_idx;
	}
	hwloc_topology_destroy(topo);
}

/* MB/s and us between two nodes, as the runtime's transfer model has them: a copy within a node is free. */
static double bandwidth(unsigned src, unsigned dst)
{
	return src == dst ? 0.0 : starpu_transfer_bandwidth(src, dst);
}

static double latency(unsigned src, unsigned dst)
{
	return src == dst ? 0.0 : starpu_transfer_latency(src, dst);
}

static void print_bus_table(double (*value)(unsigned, unsigned), int header)
{
	unsigned nnodes = starpu_memory_nodes_get_count();
	char name[64];
	if (header) {
		printf("from/to\t");
		for (unsigned dst = 0; dst < nnodes; dst++) {
			starpu_memory_node_get_name(dst, name, sizeof(name));
			printf("%s\t", name);
		}
		printf("\n");
	}
	for (unsigned src = 0; src < nnodes; src++) {
		starpu_memory_node_get_name(src, name, sizeof(name));
		printf("%s\t", name);
		for (unsigned dst = 0; dst < nnodes; dst++)
			printf("%.0f\t", value(src, dst));
		printf("\n");
	}
}

static void print_buses(void)
{
	printf("bandwidth (MB/s) and latency (us)...\n");
	print_bus_table(bandwidth, 1);
	printf("\n");
	print_bus_table(latency, 0);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },       { "version", no_argument, NULL, 'v' },
		{ "info", no_argument, NULL, 'i' },       { "force", no_argument, NULL, 'f' },
		{ "worker", required_argument, NULL, 'w' }, { "count", no_argument, NULL, 'c' },
		{ "notopology", no_argument, NULL, 'n' }, { NULL, 0, NULL, 0 },
	};
	int info = 0, force = 0, count = 0, notopology = 0, opt;
	enum starpu_worker_archtype only = STARPU_ANY_WORKER;
	while ((opt = getopt_long(argc, argv, "hvifw:cn", options, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout, "starpu_machine_display");
			return EXIT_SUCCESS;
		case 'v':
			printf("%s (Astrolabe, StarPU %d.%d.%d API)\n", "starpu_machine_display", STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
			return EXIT_SUCCESS;
		case 'i': info = 1; break;
		case 'f': force = 1; break;
		case 'c': count = 1; break;
		case 'n': notopology = 1; break;
		case 'w':
			only = starpu_worker_get_type_from_string(optarg);
			if (only == STARPU_UNKNOWN_WORKER) {
				fprintf(stderr, "%s: unknown worker type '%s': use CPU, CUDA, OpenCL, FPGA, MPI_MS, TCPIP_MS or HIP\n", argv[0], optarg);
				return EXIT_FAILURE;
			}
			break;
		default:
			usage(stderr, argv[0]);
			return EXIT_FAILURE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", argv[0], argv[optind]);
		return EXIT_FAILURE;
	}

	struct starpu_conf conf;
	starpu_conf_init(&conf);
	if (force)
		conf.bus_calibrate = 1;
	int ret = starpu_init(&conf);
	if (ret != 0) {
		fprintf(stderr, "%s: starpu_init failed (%s): check STARPU_PLUGIN_PATH and the worker settings\n", argv[0], strerror(-ret));
		return EXIT_FAILURE;
	}

	if (count) {
		printf("%d\n", starpu_worker_get_count_by_type(only));
		starpu_shutdown();
		return EXIT_SUCCESS;
	}

	char real[256], starpu_name[256];
	hostnames(real, starpu_name, sizeof(real));
	printf("Real hostname: %s (StarPU hostname: %s)\n", real, starpu_name);
	if (info)
		starpu_bus_print_filenames(stdout);
	if (force && starpu_memory_nodes_get_count() <= 1)
		printf("no bus to measure: main memory is the only memory node (set STARPU_USE_NUMA=1 on a NUMA machine)\n");

	printf("StarPU has found :\n");
	for (size_t k = 0; k < NKINDS; k++)
		if (only == STARPU_ANY_WORKER || only == kinds[k])
			starpu_worker_display_names(stdout, kinds[k]);

	if (!notopology) {
		printf("\n");
		print_topology();
		printf("\n");
		print_buses();
	}
	starpu_shutdown();
	return EXIT_SUCCESS;
}
