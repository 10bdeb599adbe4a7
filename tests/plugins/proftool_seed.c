/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A profiling tool written the way the StarPU profiling-interface document
 * writes its examples: callbacks declared with the bare type names of its
 * sections 4.1 and 4.2.1 (starpu_prof_tool_info, starpu_event_tool_info,
 * starpu_api_tool_info), and registered under the event names of its
 * section 6.1 step 1 (starpu_prof_tool_event_driver_start_cpu_exec, ...).
 * It compiles as C, which is the point; at run time it counts the events
 * and prints the counts when the runtime terminates, for test_prof_tool.
 */
#include <starpu.h>
#include <starpu_profiling_tool.h>
#include <stdio.h>

static unsigned long driver_inits, init_starts, init_ends, starts, ends, no_function;

void driver_init_cb(starpu_prof_tool_info *prof_info, starpu_event_tool_info *event_info, starpu_api_tool_info *api_info)
{
	(void)event_info;
	(void)api_info;
	if (prof_info != NULL && prof_info->event_type == starpu_prof_tool_event_driver_init)
		__sync_fetch_and_add(&driver_inits, 1);
}

void driver_init_start_cb(starpu_prof_tool_info *prof_info, starpu_event_tool_info *event_info, starpu_api_tool_info *api_info)
{
	(void)event_info;
	(void)api_info;
	if (prof_info != NULL && prof_info->event_type == starpu_prof_tool_event_driver_init_start)
		__sync_fetch_and_add(&init_starts, 1);
}

void driver_init_end_cb(struct starpu_prof_tool_info *prof_info, union starpu_prof_tool_event_info *event_info,
			struct starpu_prof_tool_api_info *api_info)
{
	(void)event_info;
	(void)api_info;
	if (prof_info != NULL && prof_info->event_type == starpu_prof_tool_event_driver_init_end)
		__sync_fetch_and_add(&init_ends, 1);
}

void myFunction_cb(starpu_prof_tool_info *prof_info, starpu_prof_tool_event_info *event_info, starpu_prof_tool_api_info *api_info)
{
	(void)api_info;
	if (prof_info == NULL || event_info->event_type != prof_info->event_type)
		return;
	switch (prof_info->event_type) {
	case starpu_prof_tool_event_start_cpu_exec:
		__sync_fetch_and_add(&starts, 1);
		break;
	case starpu_prof_tool_event_end_cpu_exec:
		__sync_fetch_and_add(&ends, 1);
		break;
	default:
		return;
	}
	if (prof_info->fun_ptr == NULL)
		__sync_fetch_and_add(&no_function, 1);
}

static void terminate_cb(starpu_prof_tool_info *prof_info, starpu_event_tool_info *event_info, starpu_api_tool_info *api_info)
{
	(void)prof_info;
	(void)event_info;
	(void)api_info;
	fprintf(stderr, "proftool_seed: driver_init %lu init_start %lu init_end %lu start %lu end %lu no_function %lu\n",
		driver_inits, init_starts, init_ends, starts, ends, no_function);
}

void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg, starpu_prof_tool_entry_unregister_func unreg)
{
	enum starpu_prof_tool_command info = 0;
	(void)unreg;
	driver_inits = init_starts = init_ends = starts = ends = no_function = 0;
	reg(starpu_prof_tool_event_driver_init, &driver_init_cb, info);
	reg(starpu_prof_tool_event_driver_init_start, &driver_init_start_cb, info);
	reg(starpu_prof_tool_event_driver_init_end, &driver_init_end_cb, info);
	reg(starpu_prof_tool_event_driver_start_cpu_exec, &myFunction_cb, info);
	reg(starpu_prof_tool_event_driver_end_cpu_exec, &myFunction_cb, info);
	reg(starpu_prof_tool_event_terminate, &terminate_cb, info);
}
