/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bus performance between main memory and each device: measured once per
 * machine and configuration of memory nodes, and kept, like StarPU, in the
 * sampling directory: bus/<host>.bandwidth (MB/s) and bus/<host>.latency
 * (µs), one row per source node and one column per destination, and
 * bus/<host>.config, the configuration they were measured on. A later run
 * with the same configuration reads them back; STARPU_BUS_CALIBRATE=1 (or
 * conf.bus_calibrate) measures again.
 */
#include "memory/memory.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <unistd.h>

static double bus_bandwidth[STARPU_MAXNODES][STARPU_MAXNODES];
static double bus_latency[STARPU_MAXNODES][STARPU_MAXNODES];
static bool bus_known;

static void bus_path(char *path, size_t len, const char *suffix)
{
	char dir[PATH_MAX - 300], host[256];
	_astro_sampling_dir(dir, sizeof(dir));
	_astro_host_name(host, sizeof(host));
	snprintf(path, len, "%s/bus/%s.%s", dir, host, suffix);
}

#ifndef STARPU_SIMGRID
/* The configuration the figures hold for: one line per memory node. */
static void describe_config(GString *out)
{
	g_string_append(out, "# Memory nodes the bus figures were measured on\n");
	for (unsigned node = 0; node < _astro_rt.nmemory_nodes; node++) {
		char name[32];
		starpu_memory_node_get_name(node, name, sizeof(name));
		g_string_append_printf(out, "%u\t%s\n", node, name);
	}
}

/* ---------------------------------------------------------- measuring */

/* µs per copy of size bytes between main memory and node, each way, averaged over reps. */
static bool measure_pair(unsigned node, size_t size, unsigned reps, double *to_device, double *from_device)
{
	const struct _astro_memory_node *n = &_astro_nodes[node];
	uintptr_t buffer = n->ops->allocate(n->devid, size);
	void *host = NULL; /* pinned, as starpu_malloc() gives the program (and StarPU measures) */
	bool ok = buffer && starpu_malloc_flags(&host, size, STARPU_MALLOC_PINNED) == 0;
	if (ok) {
		memset(host, 0, size);
		double start = starpu_timing_now();
		for (unsigned i = 0; i < reps && ok; i++)
			ok = n->ops->copy_from_ram(n->devid, host, buffer, 0, size, NULL) == 0;
		double mid = starpu_timing_now();
		for (unsigned i = 0; i < reps && ok; i++)
			ok = n->ops->copy_to_ram(n->devid, buffer, 0, host, size, NULL) == 0;
		*to_device = (mid - start) / reps;
		*from_device = (starpu_timing_now() - mid) / reps;
	}
	if (buffer)
		n->ops->free(n->devid, buffer, size);
	starpu_free_flags(host, size, STARPU_MALLOC_PINNED);
	return ok;
}

static void calibrate(void)
{
	memset(bus_bandwidth, 0, sizeof(bus_bandwidth));
	memset(bus_latency, 0, sizeof(bus_latency));
	for (unsigned node = 1; node < _astro_rt.nmemory_nodes; node++) {
		double small_to, small_from, big_to, big_from;
		if (!_astro_nodes[node].ops)
			continue; /* another NUMA node's RAM: predicted with the default figures */
		const size_t big = 4 << 20;
		if (!measure_pair(node, 4, 20, &small_to, &small_from) || !measure_pair(node, big, 4, &big_to, &big_from)) {
			_astro_warn("measuring the bus to memory node %u failed: transfer predictions use default figures", node);
			return;
		}
		bus_latency[STARPU_MAIN_RAM][node] = small_to;
		bus_latency[node][STARPU_MAIN_RAM] = small_from;
		bus_bandwidth[STARPU_MAIN_RAM][node] = big / fmax(big_to - small_to, 1e-3);
		bus_bandwidth[node][STARPU_MAIN_RAM] = big / fmax(big_from - small_from, 1e-3);
	}
	bus_known = true;
}

/* ------------------------------------------------------------- files */

static void append_matrix(GString *out, double m[STARPU_MAXNODES][STARPU_MAXNODES])
{
	g_string_append(out, "# ");
	for (unsigned dst = 0; dst < _astro_rt.nmemory_nodes; dst++)
		g_string_append_printf(out, "to %u\t\t", dst);
	g_string_append(out, "\n");
	for (unsigned src = 0; src < _astro_rt.nmemory_nodes; src++) {
		for (unsigned dst = 0; dst < _astro_rt.nmemory_nodes; dst++)
			g_string_append_printf(out, "%f\t", m[src][dst]);
		g_string_append(out, "\n");
	}
}

/* Writes text to path through a temporary file renamed over it: never half a file. */
static bool write_atomically(const char *path, const GString *text)
{
	GError *err = NULL;
	bool ok = g_file_set_contents(path, text->str, (gssize)text->len, &err);
	if (!ok) {
		_astro_warn("cannot write the bus figures to %s (%s): they will be measured again next time; check STARPU_HOME",
			    path, err->message);
		g_error_free(err);
	}
	return ok;
}

static void save(void)
{
	char path[PATH_MAX];
	bus_path(path, sizeof(path), "config");
	char *dir = g_path_get_dirname(path);
	int made = g_mkdir_with_parents(dir, 0700);
	g_free(dir);
	if (made != 0) {
		_astro_warn("cannot create the directory of %s (%s): the bus figures are not kept", path, strerror(errno));
		return;
	}
	GString *text = g_string_new(NULL);
	append_matrix(text, bus_bandwidth);
	bus_path(path, sizeof(path), "bandwidth");
	bool ok = write_atomically(path, text);
	g_string_truncate(text, 0);
	append_matrix(text, bus_latency);
	bus_path(path, sizeof(path), "latency");
	ok = ok && write_atomically(path, text);
	/* The configuration last: it validates the two others. */
	g_string_truncate(text, 0);
	describe_config(text);
	bus_path(path, sizeof(path), "config");
	if (ok)
		write_atomically(path, text);
	g_string_free(text, TRUE);
}

/* A bus file is a few lines of figures: more than this is not one. */
#define BUS_FILE_MAX ((size_t)1 << 20)

/* The text of the bus file at path (free() it), or NULL: missing (nothing said), or refused (a FIFO, a device,
 * a huge file: said once, the bus is measured again). */
static char *read_bus_file(const char *path)
{
	char why[256];
	char *text = astro_file_read_regular(path, BUS_FILE_MAX, NULL, why, sizeof(why));
	if (!text && errno != ENOENT)
		_astro_warn("the bus file %s cannot be read (%s): the bus is measured again", path, why);
	return text;
}

static bool read_matrix(const char *suffix, double m[STARPU_MAXNODES][STARPU_MAXNODES])
{
	char path[PATH_MAX];
	bus_path(path, sizeof(path), suffix);
	char *text = read_bus_file(path);
	if (!text)
		return false;
	unsigned src = 0;
	bool ok = true;
	gchar **lines = g_strsplit(text, "\n", -1);
	for (gchar **line = lines; *line && ok; line++) {
		if ((*line)[0] == '#' || (*line)[0] == '\0')
			continue;
		char *p = *line, *end;
		for (unsigned dst = 0; dst < _astro_rt.nmemory_nodes && ok; dst++, p = end) {
			double v = strtod(p, &end);
			ok = end != p && src < _astro_rt.nmemory_nodes && v >= 0 && isfinite(v);
			if (ok)
				m[src][dst] = v;
		}
		src++;
	}
	g_strfreev(lines);
	free(text);
	if (!ok || src != _astro_rt.nmemory_nodes) {
		_astro_warn("the bus file %s does not parse: the bus is measured again", path);
		return false;
	}
	return true;
}

/* The figures of the files, when they were measured on this configuration. */
static bool load(void)
{
	char path[PATH_MAX];
	bus_path(path, sizeof(path), "config");
	char *config = read_bus_file(path);
	if (!config)
		return false;
	GString *ours = g_string_new(NULL);
	describe_config(ours);
	bool same = strcmp(config, ours->str) == 0;
	g_string_free(ours, TRUE);
	free(config);
	return same && read_matrix("bandwidth", bus_bandwidth) && read_matrix("latency", bus_latency);
}

#endif

#ifdef STARPU_SIMGRID
/* A simulation's figures are its machine's routes between the nodes' hosts. */
static void load_simulated(void)
{
	for (unsigned src = 0; src < _astro_rt.nmemory_nodes; src++) {
		for (unsigned dst = 0; dst < _astro_rt.nmemory_nodes; dst++) {
			char from[32], to[32];
			double bandwidth, latency;
			if (src == dst || !_astro_memory_node_host(src, from, sizeof(from)) || !_astro_memory_node_host(dst, to, sizeof(to)) ||
			    strcmp(from, to) == 0 || !_astro_sim_route(from, to, &bandwidth, &latency))
				continue;
			bus_bandwidth[src][dst] = bandwidth / 1e6;	/* MB/s */
			bus_latency[src][dst] = latency * 1e6;		/* µs */
		}
	}
	bus_known = true;
}

#else
/* This machine as a SimGrid platform, beside the figures: written with them, or when missing. */
static void save_platform(bool measured)
{
	char path[PATH_MAX];
	bus_path(path, sizeof(path), "platform.xml");
	if (measured || access(path, F_OK) != 0)
		_astro_platform_save(path);
}

static void measure_or_load(void)
{
	int force = _astro_conf_int_in("STARPU_BUS_CALIBRATE", NULL, _astro_rt.conf.bus_calibrate, 0, 1, 0);
	if (force <= 0 && load()) {
		bus_known = true;
		save_platform(false);
		return;
	}
	_astro_verbose("measuring the bus between main memory and the devices (once per configuration)");
	calibrate();
	if (bus_known)
		save();
	save_platform(bus_known);
}
#endif

void _astro_bus_init(void)
{
	bus_known = false;
#ifdef STARPU_SIMGRID
	if (_astro_rt.nmemory_nodes > 1)
		load_simulated();
#else
	if (_astro_rt.nmemory_nodes > 1)
		measure_or_load();
	else
		save_platform(false);
#endif
}

bool _astro_bus_figures(unsigned src, unsigned dst, double *bandwidth, double *latency)
{
	if (!bus_known || src >= _astro_rt.nmemory_nodes || dst >= _astro_rt.nmemory_nodes || !bus_bandwidth[src][dst])
		return false;
	*bandwidth = bus_bandwidth[src][dst];
	*latency = bus_latency[src][dst];
	return true;
}

void starpu_bus_print_filenames(FILE *f)
{
	static const char *const kinds[] = { "bandwidth", "latency", "config" };
	if (!f)
		return;
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char path[PATH_MAX];
		bus_path(path, sizeof(path), kinds[i]);
		fprintf(f, "%9s: %s\n", kinds[i], path);
	}
}

/* One row per source node, one column per destination: the figure of each pair, "-" unknown or to itself. */
static void print_matrix(FILE *f, const char *what, double (*figures)[STARPU_MAXNODES])
{
	unsigned n = starpu_memory_nodes_get_count();
	fprintf(f, "# %s\n%-12s", what, "from/to");
	for (unsigned dst = 0; dst < n; dst++) {
		char name[32];
		starpu_memory_node_get_name(dst, name, sizeof(name));
		fprintf(f, "\t%-10s", name);
	}
	fputc('\n', f);
	for (unsigned src = 0; src < n; src++) {
		char name[32];
		starpu_memory_node_get_name(src, name, sizeof(name));
		fprintf(f, "%-12s", name);
		for (unsigned dst = 0; dst < n; dst++) {
			if (bus_known && src != dst && figures[src][dst] > 0)
				fprintf(f, "\t%-10.0f", figures[src][dst]);
			else
				fprintf(f, "\t%-10s", "-");
		}
		fputc('\n', f);
	}
}

/* The bus figures exist from starpu_init() on: printing them before, or on no stream, is refused. */
static bool print_refused(FILE *f, const char *fn)
{
	if (!f)
		_astro_error("%s: NULL stream: give the FILE to print on", fn);
	else if (!_astro_running())
		_astro_error("%s: StarPU is not initialised: call it after starpu_init()", fn);
	return !f || !_astro_running();
}

void starpu_bus_print_bandwidth(FILE *f)
{
	if (print_refused(f, "starpu_bus_print_bandwidth"))
		return;
	print_matrix(f, "bandwidth (MB/s)", bus_bandwidth);
	print_matrix(f, "latency (us)", bus_latency);
}

/* For each device, the RAM nodes from the best connected to it (highest measured bandwidth both ways)
 * to the worst: the order a device's data is best placed in when it lives in main memory. */
void starpu_bus_print_affinity(FILE *f)
{
	if (print_refused(f, "starpu_bus_print_affinity"))
		return;
	unsigned n = starpu_memory_nodes_get_count(), ram[STARPU_MAXNODES], nram = 0;
	for (unsigned node = 0; node < n; node++)
		if (starpu_node_get_kind(node) == STARPU_CPU_RAM)
			ram[nram++] = node;
	fprintf(f, "# device\tRAM nodes, best connected first\n");
	for (unsigned dev = 0; dev < n; dev++) {
		if (starpu_node_get_kind(dev) == STARPU_CPU_RAM || starpu_node_get_kind(dev) == STARPU_DISK_RAM)
			continue;
		unsigned order[STARPU_MAXNODES];
		memcpy(order, ram, nram * sizeof(*ram));
		/* Insertion sort: a handful of NUMA nodes. */
		for (unsigned i = 1; i < nram; i++)
			for (unsigned j = i; j > 0; j--) {
				unsigned a = order[j - 1], b = order[j];
				if (bus_bandwidth[a][dev] + bus_bandwidth[dev][a] >= bus_bandwidth[b][dev] + bus_bandwidth[dev][b])
					break;
				order[j - 1] = b;
				order[j] = a;
			}
		char name[32];
		starpu_memory_node_get_name(dev, name, sizeof(name));
		fprintf(f, "%s\t", name);
		for (unsigned i = 0; i < nram; i++)
			fprintf(f, "%s%u", i ? " " : "", order[i]);
		fputc('\n', f);
	}
}
