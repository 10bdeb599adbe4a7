/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The data-transfer latency between two memory nodes (StarPU's benchmark of
 * the same name): a small vector is acquired in read-write mode on one node,
 * then on the other, back and forth; each acquisition moves the only valid
 * copy across, so the mean time of one is the latency of a transfer.
 *
 *   local_pingpong [-i iterations] [-s bytes] [-h]
 *
 * The nodes are the first two CUDA memory nodes, as in StarPU; without two,
 * the first two device memory nodes of any kind (CUDA, OpenCL, HIP...); with
 * one device only, main memory and that device. Without any device there is
 * nothing to measure: the program says so and exits with 77 (skipped).
 */
#include <starpu.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIPPED 77

static unsigned long parse_count(const char *prog, char opt, const char *value, unsigned long max, int *bad)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = value ? strtoul(value, &end, 10) : 0;
	if (!value || errno || end == value || *end || value[0] == '-' || v == 0 || v > max) {
		fprintf(stderr, "%s: -%c takes an integer from 1 to %lu, not '%s'\n", prog, opt, max, value ? value : "");
		*bad = 1;
	}
	return v;
}

/* The two nodes of the ping-pong; -1 when the machine has no device memory. */
static int pick_nodes(unsigned *a, unsigned *b)
{
	unsigned cuda[2], device[2], ncuda = 0, ndevice = 0;
	for (unsigned node = 0; node < starpu_memory_nodes_get_count(); node++) {
		enum starpu_node_kind kind = starpu_node_get_kind(node);
		if (kind == STARPU_CPU_RAM)
			continue;
		if (kind == STARPU_CUDA_RAM && ncuda < 2)
			cuda[ncuda++] = node;
		if (kind != STARPU_DISK_RAM && ndevice < 2)
			device[ndevice++] = node;
	}
	if (ncuda == 2) {
		*a = cuda[0];
		*b = cuda[1];
	} else if (ndevice == 2) {
		*a = device[0];
		*b = device[1];
	} else if (ndevice == 1) {
		*a = STARPU_MAIN_RAM;
		*b = device[0];
	} else {
		return -1;
	}
	return 0;
}

static int acquire_on(starpu_data_handle_t handle, unsigned node)
{
	int ret = starpu_data_acquire_on_node(handle, (int)node, STARPU_RW);
	if (ret == 0)
		starpu_data_release_on_node(handle, (int)node);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned long niter = 1000, size = 4;
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "-i")) {
			niter = parse_count(argv[0], 'i', value, 100000000UL, &bad);
			i++;
		} else if (!strcmp(argv[i], "-s")) {
			size = parse_count(argv[0], 's', value, 1UL << 30, &bad);
			i++;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("Usage: %s [-i iterations] [-s bytes]\n"
			       "Ping-pong of a vector of bytes (default 4) between the first two CUDA memory nodes\n"
			       "(else two device nodes, else main memory and the device), iterations round trips\n"
			       "(default 1000); prints the mean latency of one transfer.\n", argv[0]);
			return 0;
		} else {
			fprintf(stderr, "%s: unknown option '%s' (-h lists them)\n", argv[0], argv[i]);
			bad = 1;
		}
		if (bad)
			return 1;
	}

	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return SKIPPED;
	if (ret) {
		fprintf(stderr, "%s: starpu_init failed: %s\n", argv[0], strerror(-ret));
		return 1;
	}
	unsigned a, b;
	if (pick_nodes(&a, &b) < 0) {
		fprintf(stderr, "%s: no device memory node (CUDA, OpenCL...) to exchange data with: nothing to measure\n", argv[0]);
		starpu_shutdown();
		return SKIPPED;
	}
	char *buffer = calloc(size, 1);
	if (!buffer) {
		fprintf(stderr, "%s: cannot allocate %lu bytes\n", argv[0], size);
		starpu_shutdown();
		return 1;
	}
	starpu_data_handle_t handle;
	starpu_vector_data_register(&handle, STARPU_MAIN_RAM, (uintptr_t)buffer, (uint32_t)size, 1);

	/* One round first: the buffers are allocated on both nodes before the clock starts. */
	ret = acquire_on(handle, a);
	if (ret == 0)
		ret = acquire_on(handle, b);
	double start = starpu_timing_now();
	for (unsigned long k = 0; ret == 0 && k < niter; k++) {
		ret = acquire_on(handle, a);
		if (ret == 0)
			ret = acquire_on(handle, b);
	}
	double elapsed = starpu_timing_now() - start;

	char name_a[64], name_b[64];
	starpu_memory_node_get_name(a, name_a, sizeof(name_a));
	starpu_memory_node_get_name(b, name_b, sizeof(name_b));
	if (ret == 0) {
		printf("Ping-pong between %s and %s: %lu round trips of %lu bytes\n", name_a, name_b, niter, size);
		printf("Latency: %.3f us per transfer\n", elapsed / (2.0 * (double)niter));
	} else {
		fprintf(stderr, "%s: acquiring the data on %s or %s failed: %s\n", argv[0], name_a, name_b, strerror(-ret));
	}
	starpu_data_unregister(handle);
	free(buffer);
	starpu_shutdown();
	return ret == 0 ? 0 : 1;
}
