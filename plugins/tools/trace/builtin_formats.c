/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The list of the trace formats built into the converter. It is the one
 * file that names them all: the dispatcher (formats.c) knows formats only
 * through the registry, as it knows the plugins' formats, and the converter
 * registers these before it selects (trace_convert_main).
 */
#include <glib.h>
#include "builtin_formats.h"

static const struct astro_trace_format *const builtin[] = {
	&trace_json_format, &trace_tasks_rec_format, &trace_data_rec_format, &trace_distrib_format,
	&trace_trace_rec_format, &trace_dag_format, &trace_paje_format, &trace_sched_tasks_rec_format,
	&trace_papi_rec_format, &trace_comms_rec_format, &trace_activity_format, &trace_html_format,
};

void trace_builtin_formats_register(void)
{
	for (size_t i = 0; i < G_N_ELEMENTS(builtin); i++)
		astro_trace_format_register(builtin[i]);
}
