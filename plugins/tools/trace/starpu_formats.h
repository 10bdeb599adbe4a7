/* StarPU's outputs written as trace formats built into the converter (astrolabe/trace_format.h): one file each. */
#ifndef __ASTRO_TRACE_STARPU_FORMATS_H__
#define __ASTRO_TRACE_STARPU_FORMATS_H__

#include <astrolabe/trace_format.h>

extern const struct astro_trace_format trace_tasks_rec_format; /* tasks.rec (tasks_rec.c) */
extern const struct astro_trace_format trace_data_rec_format;  /* data.rec (data_rec.c) */
extern const struct astro_trace_format trace_distrib_format;   /* distrib.data (distrib.c) */
extern const struct astro_trace_format trace_trace_rec_format; /* trace.rec (trace_rec.c) */
extern const struct astro_trace_format trace_dag_format;       /* dag.dot (dag.c) */
extern const struct astro_trace_format trace_sched_tasks_rec_format; /* sched_tasks.rec (sched_tasks_rec.c) */
extern const struct astro_trace_format trace_papi_rec_format;  /* papi.rec (papi_rec.c) */
extern const struct astro_trace_format trace_comms_rec_format; /* comms.rec (comms_rec.c) */
extern const struct astro_trace_format trace_activity_format;  /* activity.data (activity.c) */
extern const struct astro_trace_format trace_html_format;      /* trace.html (trace_html.c) */

/* StarPU's Paje alias of a runtime state (Sleeping: "Sl"...), and its trace.rec category in *category (convert.c). */
const char *trace_state_alias(const char *name, const char **category);
/* StarPU's colour of a name (-c: paje.trace's task values, dag.dot's nodes), its red, green and blue summing to 1 (convert.c). */
void trace_hashed_color(const char *name, double rgb[3]);

#endif
