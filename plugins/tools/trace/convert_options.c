/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_fxt_tool's command line: StarPU's options, and the formats' own
 * (-formats, -no-format NAME, -format NAME: formats.c).
 */
#include <starpu_config.h>
#include <stdio.h>
#include <string.h>
#include "converter.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: " TOOL " [-c] [-no-events] [-no-counter] [-no-bus] [-no-flops] [-no-smooth] [-label-deps] [-number-events] [-memory-states] [-no-acquire] [-internal] [-use-task-color] [-no-format NAME] [-format NAME] [-o paje.trace] [-d dir] -i trace...\n"
		   "  or:  " TOOL " -formats\n"
		   "Converts the OTF2 trace a run with STARPU_FXT_TRACE=1 left (STARPU_FXT_PREFIX/prof_file_<user>_0, a link to\n"
		   "its archive .prof_file_<user>_0/traces.otf2)\n"
		   "into paje.trace, dag.dot, tasks.rec, sched_tasks.rec, trace.rec, data.rec, activity.data, comms.rec,\n"
		   "trace.html (the task flow between the components of a modular-* scheduler, for a browser), papi.rec\n"
		   "(when the run counted STARPU_PROF_PAPI_EVENTS) and\n"
		   "trace.json (Chrome/Perfetto trace events).\n"
		   "  -i FILE...        traces (prof_file_<user>_<id>), their folders or their traces.otf2; several (one per\n"
		   "                    process, named <...>_<rank>; -i may be repeated)\n"
		   "                    are merged on one time base, each rank's containers and jobs prefixed '<rank>_'\n"
		   "  -o FILE           name of the Paje file (default paje.trace; an absolute path, e.g. /dev/stdout, is\n"
		   "                    written as it is, not in -d's folder)\n"
		   "  -d DIR            write every output in DIR (created if needed)\n"
		   "  -c                one colour per task name (hashed) instead of green\n"
		   "  -no-events        no push/pop, register/unregister, user or program events in paje.trace\n"
		   "  -no-counter       no nsubmitted/nready counters and push/pop events\n"
		   "  -no-bus           no transfer links nor memory-manager variables\n"
		   "  -no-flops         no GFlop/s variables (gf of each worker, gft of the scheduler)\n"
		   "  -no-smooth        GFlop/s of each task alone, without the short idle gap before it\n"
		   "  -label-deps       label the dag.dot edges with the kind of dependency\n"
		   "  -number-events    write number_events.data: how many events of each kind (read it with\n"
		   "                    starpu_fxt_number_events_to_names.py; STARPU_FXT_EVENTS records fewer)\n"
		   "  -memory-states    the memory managers' details in paje.trace: the MSI states of the data's copies,\n"
		   "                    starpu_data_wont_use, memory requests, allocations, frees, write-backs, copies\n"
		   "  -no-acquire       leave the data acquisitions (starpu_data_acquire*) out of dag.dot\n"
		   "  -internal         also draw the runtime's internal jobs in dag.dot (unregister_submit, prefetches...)\n"
		   "  -formats          list the trace formats (the built-in ones and the format_* plugins'), on or off, and exit\n"
		   "  -no-format NAME   do not write trace format NAME (json: no trace.json, paje: no paje.trace)\n"
		   "  -format NAME      write trace format NAME, which its plugin leaves off by default\n"
		   "  -use-task-color   the scheduling contexts' task states (InCtx1..InCtx9) in the task's colour instead of\n"
		   "                    one colour per context\n"
		   "  -h, --help        display this help and exit\n"
		   "  -v, --version     output version information and exit\n");
}

int convert_options_parse(struct options *o, int argc, char **argv)
{
	o->inputs = g_ptr_array_new();
	o->paje = "paje.trace";
	int taken;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-i") == 0) {
			while (i + 1 < argc && argv[i + 1][0] != '-')
				g_ptr_array_add(o->inputs, argv[++i]);
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "-d") == 0) {
			if (i + 1 == argc)
				return convert_error("%s needs a value: see -h", a);
			if (a[1] == 'o')
				o->paje = argv[++i];
			else
				o->dir = argv[++i];
		} else if (strcmp(a, "-c") == 0) {
			o->colors = true;
		} else if (strcmp(a, "-no-events") == 0) {
			o->no_events = true;
		} else if (strcmp(a, "-no-counter") == 0) {
			o->no_counter = true;
		} else if (strcmp(a, "-no-bus") == 0) {
			o->no_bus = true;
		} else if (strcmp(a, "-no-flops") == 0) {
			o->no_flops = true;
		} else if (strcmp(a, "-no-smooth") == 0) {
			o->no_smooth = true;
		} else if (strcmp(a, "-label-deps") == 0) {
			o->label_deps = true;
		} else if (strcmp(a, "-number-events") == 0) {
			o->number_events = true;
		} else if (strcmp(a, "-memory-states") == 0) {
			o->memory_states = true;
		} else if (strcmp(a, "-no-acquire") == 0) {
			o->no_acquire = true;
		} else if (strcmp(a, "-internal") == 0) {
			o->internal = true;
		} else if (strcmp(a, "-use-task-color") == 0) {
			o->use_task_color = true;
		} else if ((taken = trace_formats_option(&o->formats, argc, argv, &i)) != 0) {
			if (taken < 0)
				return 1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "-help") == 0) {
			usage(stdout);
			return -1;
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0 || strcmp(a, "-version") == 0) {
			printf(TOOL " (Astrolabe, StarPU %d.%d.%d API)\n", STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
			return -1;
		} else if (a[0] != '-') {
			g_ptr_array_add(o->inputs, argv[i]);
		} else {
			usage(stderr);
			return convert_error("unknown option '%s'", a);
		}
	}
	if (!o->inputs->len && !o->formats.list) {
		usage(stderr);
		return convert_error("no trace given: use -i <folder STARPU_FXT_TRACE=1 left>");
	}
	return 0;
}

void convert_options_free(struct options *o)
{
	g_ptr_array_free(o->inputs, TRUE);
	trace_formats_free(&o->formats);
}
