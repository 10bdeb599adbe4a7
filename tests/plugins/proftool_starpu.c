/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A profiling tool written for StarPU 1.4, using nothing but StarPU's API,
 * as a StarPU user would write it: it proves Astrolabe builds and runs such
 * a tool unchanged. One callback counts every event, checks that execution
 * events come in start/end pairs on each worker and carry the function, and
 * prints the counts when the runtime terminates.
 *
 * The tests load it with STARPU_PROF_TOOL, with LD_PRELOAD, and linked into a
 * program (prof_tool_linked).
 */
#include <starpu.h>
#include <starpu_profiling_tool.h>
#include <stdio.h>

#define NB_EVENTS (starpu_prof_tool_event_user_end + 1)

static const char *event_name[NB_EVENTS] = {
	"none", "init", "terminate", "init_begin", "init_end",
	"driver_init", "driver_deinit", "driver_init_start", "driver_init_end",
	"start_cpu_exec", "end_cpu_exec", "start_gpu_exec", "end_gpu_exec",
	"start_transfer", "end_transfer", "user_start", "user_end",
};

static unsigned long counts[NB_EVENTS];
static int running[STARPU_NMAXWORKERS];
static unsigned long unpaired, null_function, bad_worker;
static unsigned version[3];

static void print_counts(void)
{
	int e;
	fprintf(stderr, "proftool_starpu: version %u.%u.%u\n", version[0], version[1], version[2]);
	for (e = 1; e < NB_EVENTS; e++)
		fprintf(stderr, "proftool_starpu: %s %lu\n", event_name[e], counts[e]);
	fprintf(stderr, "proftool_starpu: unpaired %lu\n", unpaired);
	fprintf(stderr, "proftool_starpu: null_function %lu\n", null_function);
	fprintf(stderr, "proftool_starpu: bad_worker %lu\n", bad_worker);
}

void myfunction_cb(struct starpu_prof_tool_info *prof_info, union starpu_prof_tool_event_info *event_info,
		   struct starpu_prof_tool_api_info *api_info)
{
	(void)event_info;
	(void)api_info;
	if (prof_info == NULL)
		return;
	if (prof_info->event_type <= starpu_prof_tool_event_none || prof_info->event_type >= NB_EVENTS)
		return;
	__sync_fetch_and_add(&counts[prof_info->event_type], 1);

	switch (prof_info->event_type)
	{
	case starpu_prof_tool_event_init_begin:
		version[0] = prof_info->starpu_version[0];
		version[1] = prof_info->starpu_version[1];
		version[2] = prof_info->starpu_version[2];
		break;
	case starpu_prof_tool_event_start_cpu_exec:
	case starpu_prof_tool_event_end_cpu_exec:
		if (prof_info->worker_id < 0 || prof_info->worker_id >= STARPU_NMAXWORKERS)
		{
			__sync_fetch_and_add(&bad_worker, 1);
			break;
		}
		if (prof_info->fun_ptr == NULL)
			__sync_fetch_and_add(&null_function, 1);
		if ((prof_info->event_type == starpu_prof_tool_event_start_cpu_exec) == (running[prof_info->worker_id] != 0))
			__sync_fetch_and_add(&unpaired, 1);
		running[prof_info->worker_id] = prof_info->event_type == starpu_prof_tool_event_start_cpu_exec;
		break;
	case starpu_prof_tool_event_end_transfer:
		if (prof_info->bytes_transfered != prof_info->bytes_to_transfer)
			__sync_fetch_and_add(&unpaired, 1);
		break;
	case starpu_prof_tool_event_terminate:
		print_counts();
		break;
	default:
		break;
	}
}

/* Mandatory */
void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg, starpu_prof_tool_entry_register_func unreg)
{
	enum starpu_prof_tool_command info = 0;
	int e;
	(void)unreg;
	for (e = 0; e < NB_EVENTS; e++)
		counts[e] = 0;
	unpaired = null_function = bad_worker = 0;
	for (e = starpu_prof_tool_event_init; e <= starpu_prof_tool_event_user_end; e++)
		reg((enum starpu_prof_tool_event)e, &myfunction_cb, info);
}
