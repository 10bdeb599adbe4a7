/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The machine as a SimGrid platform: bus/<host>.platform.xml in the sampling
 * directory, which a simulation build reads to simulate this machine (see
 * doc/simulation.md). A native run writes it beside the bus figures: hosts
 * CPU0... for the cores, CUDA0.../OpenCL0... for the devices (with their
 * memory size), RAM for main memory, and a link each way between RAM and
 * every device with the bandwidth and latency measured; device-to-device
 * transfers go through RAM, as the runtime's copies do.
 */
#include "memory/memory.h"
#include <errno.h>
#include <limits.h>

bool _astro_memory_node_host(unsigned node, char *host, size_t len)
{
	int devid = starpu_memory_node_get_devid(node);
	switch (starpu_node_get_kind(node)) {
	case STARPU_CPU_RAM:
		snprintf(host, len, "RAM");
		return true;
	case STARPU_CUDA_RAM:
		snprintf(host, len, "CUDA%d", devid);
		return true;
	case STARPU_OPENCL_RAM:
		snprintf(host, len, "OpenCL%d", devid);
		return true;
	default:
		return false;
	}
}

#ifndef STARPU_SIMGRID

static void append_hosts(GString *out)
{
	g_string_append(out, "    <host id=\"MAIN\" speed=\"1f\"/>\n");
	for (unsigned cpu = 0; cpu < (_astro_rt.ncores ? _astro_rt.ncores : 1); cpu++)
		g_string_append_printf(out, "    <host id=\"CPU%u\" speed=\"1Gf\"/>\n", cpu);
	for (unsigned node = 1; node < _astro_rt.nmemory_nodes; node++) {
		char host[32];
		if (!_astro_memory_node_host(node, host, sizeof(host)) || starpu_node_get_kind(node) == STARPU_CPU_RAM)
			continue;
		g_string_append_printf(out, "    <host id=\"%s\" speed=\"1Gf\">\n", host);
		starpu_ssize_t size = starpu_memory_get_total(node);
		if (size > 0)
			g_string_append_printf(out, "      <prop id=\"memsize\" value=\"%zd\"/>\n", (ssize_t)size);
		g_string_append(out, "    </host>\n");
	}
	g_string_append(out, "    <host id=\"RAM\" speed=\"1f\"/>\n");
}

/* Links and routes between RAM and each device whose bus was measured, both ways. */
static void append_links(GString *out)
{
	GString *routes = g_string_new(NULL);
	for (unsigned node = 1; node < _astro_rt.nmemory_nodes; node++) {
		char host[32];
		if (starpu_node_get_kind(node) == STARPU_CPU_RAM || !_astro_memory_node_host(node, host, sizeof(host)))
			continue;
		for (int way = 0; way < 2; way++) {
			unsigned src = way ? node : STARPU_MAIN_RAM, dst = way ? STARPU_MAIN_RAM : node;
			double bandwidth, latency;
			if (!_astro_bus_figures(src, dst, &bandwidth, &latency))
				continue;
			const char *from = way ? host : "RAM", *to = way ? "RAM" : host;
			g_string_append_printf(out, "    <link id=\"%s-%s\" bandwidth=\"%.0fBps\" latency=\"%.9fs\"/>\n",
					       from, to, bandwidth * 1e6, latency * 1e-6);
			g_string_append_printf(routes, "    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\"><link_ctn id=\"%s-%s\"/></route>\n",
					       from, to, from, to);
		}
	}
	g_string_append(out, routes->str);
	g_string_free(routes, TRUE);
}

void _astro_platform_save(const char *path)
{
	GString *out = g_string_new(NULL);
	g_string_append(out, "<?xml version='1.0'?>\n"
			      "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
			      "<!-- This machine as a SimGrid platform, written by Astrolabe with its bus figures:\n"
			      "     what a simulation build of Astrolabe simulates for this STARPU_HOSTNAME. -->\n"
			      "<platform version=\"4.1\">\n"
			      "  <config id=\"General\">\n"
			      "    <prop id=\"network/TCP-gamma\" value=\"-1\"/>\n"
			      "    <prop id=\"network/latency-factor\" value=\"1\"/>\n"
			      "    <prop id=\"network/bandwidth-factor\" value=\"1\"/>\n"
			      "    <prop id=\"network/weight-S\" value=\"0.0\"/>\n"
			      "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n"
			      "  </config>\n"
			      "  <zone id=\"AS0\" routing=\"Full\">\n");
	append_hosts(out);
	append_links(out);
	g_string_append(out, "  </zone>\n</platform>\n");
	char *dir = g_path_get_dirname(path);
	GError *err = NULL;
	if (g_mkdir_with_parents(dir, 0700) != 0 || !g_file_set_contents(path, out->str, (gssize)out->len, &err))
		_astro_warn("cannot write this machine's platform to %s (%s): a simulation cannot simulate it; check STARPU_HOME",
			    path, err ? err->message : strerror(errno));
	if (err)
		g_error_free(err);
	g_free(dir);
	g_string_free(out, TRUE);
}

#endif
