/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A profiling tool that counts every event it gets, one callback on every
 * event, for the stress test and benchmark (tests/stress.h). The counts are
 * reset when the tool registers (at each starpu_init()) and read through
 * proftool_count_events, found with dlsym() on the loaded library.
 */
#include <starpu.h>
#include <starpu_profiling_tool.h>

#define PROFTOOL_COUNT_NEVENTS (starpu_prof_tool_event_user_end + 1)

__attribute__((visibility("default"))) unsigned long proftool_count_events[PROFTOOL_COUNT_NEVENTS];

static void count_event(struct starpu_prof_tool_info *info, union starpu_prof_tool_event_info *event_info,
			struct starpu_prof_tool_api_info *api_info)
{
	(void)event_info;
	(void)api_info;
	if (info && (unsigned)info->event_type < PROFTOOL_COUNT_NEVENTS)
		__atomic_add_fetch(&proftool_count_events[info->event_type], 1, __ATOMIC_RELAXED);
}

void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg, starpu_prof_tool_entry_register_func unreg)
{
	(void)unreg;
	for (int e = 0; e < PROFTOOL_COUNT_NEVENTS; e++)
		__atomic_store_n(&proftool_count_events[e], 0, __ATOMIC_RELAXED);
	for (int e = starpu_prof_tool_event_init; e <= starpu_prof_tool_event_user_end; e++)
		reg((enum starpu_prof_tool_event)e, count_event, starpu_prof_tool_command_reg);
}
