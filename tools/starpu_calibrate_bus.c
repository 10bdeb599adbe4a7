/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_calibrate_bus: measures the bandwidth and latency between main
 * memory and each device again (conf.bus_calibrate = 1, as
 * STARPU_BUS_CALIBRATE=1 does) and keeps them in the sampling directory for
 * the next runs. Like StarPU's, silent when it worked; it says so when this
 * machine has no bus to measure, and -i names the files.
 */
#include <starpu.h>
#include "tool_options.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGNAME "starpu_calibrate_bus"

static void usage(FILE *out)
{
	fprintf(out, "Force a bus calibration: measure the bandwidth and latency between main memory and each device\n"
		     "and keep them for the next runs (in $STARPU_HOME/.starpu/sampling/bus).\n\n"
		     "Usage: %s [OPTION]\n\n"
		     "Options:\n"
		     "  -h, --help       display this help and exit\n"
		     "  -v, --version    output version information and exit\n"
		     "  -i, --info       also display the name of the files holding the measures\n",
		PROGNAME);
}

int main(int argc, char **argv)
{
	int info;
	int status = tool_options(argc, argv, PROGNAME, usage, 'i', "info", &info);
	if (status >= 0)
		return status;

	struct starpu_conf conf;
	starpu_conf_init(&conf);
	conf.bus_calibrate = 1;
	int ret = starpu_init(&conf);
	if (ret != 0) {
		fprintf(stderr, "%s: starpu_init failed (%s): check STARPU_PLUGIN_PATH and the worker settings\n", PROGNAME, strerror(-ret));
		return EXIT_FAILURE;
	}
	if (starpu_memory_nodes_get_count() <= 1)
		printf("no bus to measure: main memory is the only memory node (set STARPU_USE_NUMA=1 on a NUMA machine)\n");
	if (info)
		starpu_bus_print_filenames(stdout);
	starpu_shutdown();
	return EXIT_SUCCESS;
}
