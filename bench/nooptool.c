/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A profiling tool (STARPU_PROF_TOOL=libbench_nooptool.so) that registers a
 * callback that does nothing on every event: what the monitor benchmark
 * measures is the runtime's cost of calling tools, not the tool's work.
 * Without the profiling-tool API (StarPU 1.3) it builds to an empty library.
 */
#include "monitor_api.h"

/** Set when the runtime has called the registration function (monitor checks it). */
int bench_nooptool_registered;

#ifdef BENCH_HAVE_PROF_TOOL

static void noop_callback(struct starpu_prof_tool_info *info, union starpu_prof_tool_event_info *event,
			  struct starpu_prof_tool_api_info *api)
{
	(void) info;
	(void) event;
	(void) api;
}

void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg,
				       starpu_prof_tool_entry_register_func unreg);

void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg,
				       starpu_prof_tool_entry_register_func unreg)
{
	(void) unreg;
	for (int event = starpu_prof_tool_event_none + 1; event <= starpu_prof_tool_event_user_end; event++)
		reg((enum starpu_prof_tool_event) event, noop_callback, starpu_prof_tool_command_reg);
	bench_nooptool_registered = 1;
}

#endif
