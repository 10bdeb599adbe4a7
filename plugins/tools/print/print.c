/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The print tool: one line on stderr for every profiling-tool event, the
 * smallest complete example of a tool. It is an ordinary StarPU tool (a
 * callback and a register function) plus the few lines that make it an
 * Astrolabe plugin; it stays silent unless enabled with STARPU_PROF_TOOL=print.
 */
#include <astrolabe/prof_tool.h>
#include <stdio.h>

static const char *const event_names[] = {
	"none", "init", "terminate", "init_begin", "init_end",
	"driver_init", "driver_deinit", "driver_init_start", "driver_init_end",
	"start_cpu_exec", "end_cpu_exec", "start_gpu_exec", "end_gpu_exec",
	"start_transfer", "end_transfer", "user_start", "user_end",
};

/* Times are printed from the first event of the run. */
static double origin_us;

static void print_event(struct starpu_prof_tool_info *info, union starpu_prof_tool_event_info *event,
			struct starpu_prof_tool_api_info *api)
{
	(void)api;
	const struct astro_prof_tool_event_ext *x = &event->astro;
	if (info->event_type == starpu_prof_tool_event_init_begin)
		origin_us = x->time_us;
	char who[24] = "app       ";
	if (info->worker_id >= 0)
		snprintf(who, sizeof(who), "worker %-3d", info->worker_id);
	char head[96];
	snprintf(head, sizeof(head), "[print] %12.3f us  %-17s %s thread %d", x->time_us - origin_us,
		 event_names[info->event_type], who, info->thread_id);

	switch (info->event_type) {
	case starpu_prof_tool_event_start_cpu_exec:
	case starpu_prof_tool_event_end_cpu_exec:
	case starpu_prof_tool_event_start_gpu_exec:
	case starpu_prof_tool_event_end_gpu_exec:
		fprintf(stderr, "%s  job %lu  task %s  function %p  %u buffers, %zu bytes\n", head, x->job_id,
			info->task_name ? info->task_name : "(unnamed)", info->fun_ptr, x->nbuffers, x->data_size);
		break;
	case starpu_prof_tool_event_start_transfer:
	case starpu_prof_tool_event_end_transfer:
		fprintf(stderr, "%s  node %u -> %u  %zu bytes\n", head, x->src_node, x->dst_node, x->bytes);
		break;
	case starpu_prof_tool_event_user_start:
	case starpu_prof_tool_event_user_end:
		fprintf(stderr, "%s  '%s'\n", head, x->user_label ? x->user_label : "");
		break;
	case starpu_prof_tool_event_driver_init:
	case starpu_prof_tool_event_driver_init_start:
	case starpu_prof_tool_event_driver_init_end:
	case starpu_prof_tool_event_driver_deinit:
		fprintf(stderr, "%s  device %d\n", head, info->device_number);
		break;
	default:
		fprintf(stderr, "%s  StarPU %u.%u.%u\n", head, info->starpu_version[0], info->starpu_version[1],
			info->starpu_version[2]);
		break;
	}
}

/* What a StarPU tool library would export as starpu_prof_tool_library_register(). */
static void print_register(starpu_prof_tool_entry_register_func reg, starpu_prof_tool_entry_register_func unreg)
{
	(void)unreg;
	for (int e = starpu_prof_tool_event_init; e <= starpu_prof_tool_event_user_end; e++)
		reg((enum starpu_prof_tool_event)e, print_event, starpu_prof_tool_command_reg);
}

static const struct astro_prof_tool print_tool = {
	.name = "print",
	.description = "prints every profiling-tool event on stderr",
	.library_register = print_register,
};

static int init(void)
{
	return astro_prof_tool_provide(&print_tool);
}

ASTRO_PLUGIN_DEFINE(tool_print, ASTRO_PLUGIN_TOOL, "prints every profiling-tool event (STARPU_PROF_TOOL=print)", init, NULL);
