/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A recording tool for the tests, built three times (proftool_a with
 * PROFTOOL_ID=0, proftool_b with PROFTOOL_ID=1, and proftool_plain with
 * PROFTOOL_ID=2 and PROFTOOL_NO_HANDSHAKE, a plain StarPU tool that exports no
 * handshake). proftool_a and _b answer the handshake. Each registers a first
 * callback on every event and a second one on the execution and user events,
 * and appends every call to the test program's proftool_shared_log.
 */
#define _GNU_SOURCE
#include "proftool_log.h"
#include <dlfcn.h>

#ifndef PROFTOOL_ID
#error "build with -DPROFTOOL_ID=n"
#endif

static struct proftool_log *log_of_test(void)
{
	static struct proftool_log *log;
	if (!log)
		log = (struct proftool_log *)dlsym(RTLD_DEFAULT, "proftool_shared_log");
	return log;
}

static void record(int callback, int event, struct starpu_prof_tool_info *info,
		   union starpu_prof_tool_event_info *event_info, struct starpu_prof_tool_api_info *api_info)
{
	struct proftool_log *log = log_of_test();
	if (!log)
		return;
	int i = __atomic_fetch_add(&log->n, 1, __ATOMIC_RELAXED);
	if (i >= PROFTOOL_LOG_CAPACITY)
		return;
	struct proftool_record *r = &log->records[i];
	r->tool = PROFTOOL_ID;
	r->callback = callback;
	r->event = event;
	if (info)
		r->info = *info;
	if (event_info) {
		r->ext = event_info->astro;
		r->event_info_type = event_info->event_type;
	}
	r->api_info_null = api_info == NULL;
}

static void record_first(struct starpu_prof_tool_info *info, union starpu_prof_tool_event_info *event_info,
			 struct starpu_prof_tool_api_info *api_info)
{
	record(0, info->event_type, info, event_info, api_info);
}

static void record_second(struct starpu_prof_tool_info *info, union starpu_prof_tool_event_info *event_info,
			  struct starpu_prof_tool_api_info *api_info)
{
	record(1, info->event_type, info, event_info, api_info);
}

#ifndef PROFTOOL_NO_HANDSHAKE
int astro_prof_tool_handshake(unsigned interface_version)
{
	struct proftool_log *log = log_of_test();
	if (log) {
		log->handshake_version[PROFTOOL_ID] = interface_version;
		log->handshakes[PROFTOOL_ID]++;
	}
	return interface_version == ASTRO_PROF_TOOL_INTERFACE_VERSION ? ASTRO_PROF_TOOL_ACCEPT : ASTRO_PROF_TOOL_DECLINE;
}
#endif

void astro_prof_tool_finalize(void)
{
	struct proftool_log *log = log_of_test();
	if (log)
		log->finalized[PROFTOOL_ID]++;
	record(0, PROFTOOL_FINALIZE, NULL, NULL, NULL);
}

void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg, starpu_prof_tool_entry_register_func unreg)
{
	struct proftool_log *log = log_of_test();
	if (log) {
		log->reg[PROFTOOL_ID] = reg;
		log->unreg[PROFTOOL_ID] = unreg;
		log->callbacks[PROFTOOL_ID][0] = record_first;
		log->callbacks[PROFTOOL_ID][1] = record_second;
		log->registered[PROFTOOL_ID]++;
	}
	for (int e = starpu_prof_tool_event_init; e <= starpu_prof_tool_event_user_end; e++)
		reg((enum starpu_prof_tool_event)e, record_first, starpu_prof_tool_command_reg);
	reg(starpu_prof_tool_event_start_cpu_exec, record_second, starpu_prof_tool_command_reg);
	reg(starpu_prof_tool_event_end_cpu_exec, record_second, starpu_prof_tool_command_reg);
	reg(starpu_prof_tool_event_user_start, record_second, starpu_prof_tool_command_reg);
	reg(starpu_prof_tool_event_user_end, record_second, starpu_prof_tool_command_reg);
}
