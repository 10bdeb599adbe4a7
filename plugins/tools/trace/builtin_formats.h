/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The trace formats built into the converter (astrolabe/trace_format.h), one file each, and their list
 * (builtin_formats.c), which the converter registers before the format plugins'. */
#ifndef __ASTRO_TRACE_BUILTIN_FORMATS_H__
#define __ASTRO_TRACE_BUILTIN_FORMATS_H__

#include <astrolabe/trace_format.h>

extern const struct astro_trace_format trace_json_format;      /* trace.json (json.c) */
extern const struct astro_trace_format trace_tasks_rec_format; /* tasks.rec (tasks_rec.c) */
extern const struct astro_trace_format trace_data_rec_format;  /* data.rec (data_rec.c) */
extern const struct astro_trace_format trace_distrib_format;   /* distrib.data (distrib.c) */
extern const struct astro_trace_format trace_trace_rec_format; /* trace.rec (trace_rec.c) */
extern const struct astro_trace_format trace_dag_format;       /* dag.dot (dag.c) */
extern const struct astro_trace_format trace_paje_format;      /* paje.trace, -o NAME (paje.c) */
extern const struct astro_trace_format trace_sched_tasks_rec_format; /* sched_tasks.rec (sched_tasks_rec.c) */
extern const struct astro_trace_format trace_papi_rec_format;  /* papi.rec (papi_rec.c) */
extern const struct astro_trace_format trace_comms_rec_format; /* comms.rec (comms_rec.c) */
extern const struct astro_trace_format trace_activity_format;  /* activity.data (activity.c) */
extern const struct astro_trace_format trace_html_format;      /* trace.html (trace_html.c) */

/* Registers each built-in format (astro_trace_format_register()), in the order -formats lists them; again at each
 * conversion costs nothing. */
void trace_builtin_formats_register(void);

#endif
