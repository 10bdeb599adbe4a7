/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A profiling tool that crashes: in its register function, or, with
 * PROFTOOL_CRASH_IN=start_cpu_exec, in its start_cpu_exec callback. The
 * runtime's signal handler must name the tool's file and the function.
 */
#include <starpu_profiling_tool.h>
#include <stdlib.h>
#include <string.h>
#include "crash.h"

__attribute__((visibility("default"))) void crashing_start_cpu_exec(struct starpu_prof_tool_info *info,
								    union starpu_prof_tool_event_info *event_info,
								    struct starpu_prof_tool_api_info *api_info)
{
	(void)info;
	(void)event_info;
	(void)api_info;
	astro_test_crash();
}

__attribute__((visibility("default"))) void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg,
									    starpu_prof_tool_entry_register_func unreg)
{
	(void)unreg;
	const char *where = getenv("PROFTOOL_CRASH_IN");
	if (where && strcmp(where, "start_cpu_exec") == 0) {
		reg(starpu_prof_tool_event_start_cpu_exec, crashing_start_cpu_exec, starpu_prof_tool_command_reg);
		return;
	}
	/* What a bad memory access does; a real one would be stopped first by UBSan in sanitizer builds. */
	raise(SIGSEGV);
}
