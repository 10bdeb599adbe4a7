/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The converter's output formats (astrolabe/trace_format.h): which are on, and the dispatch of the stream to them (formats.c).
 * The formats themselves include format_common.h, never this. */
#ifndef __ASTRO_TRACE_FORMATS_H__
#define __ASTRO_TRACE_FORMATS_H__

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <astrolabe/trace_format.h>

/* The callbacks of the stream, for struct trace_formats' with[]. */
enum trace_format_callback
{
	TRACE_FORMAT_PROCESS,
	TRACE_FORMAT_LOCATION,
	TRACE_FORMAT_STATE,
	TRACE_FORMAT_COUNTER,
	TRACE_FORMAT_DEPENDENCY,
	TRACE_FORMAT_INSTANT,
	TRACE_FORMAT_TASK,
	TRACE_FORMAT_DATA,
	TRACE_FORMAT_JOB,
	TRACE_FORMAT_EVENT,
	TRACE_FORMAT_MESSAGE,
	TRACE_FORMAT_NCALLBACKS
};

struct trace_formats
{
	GPtrArray *names_off, *names_on; /* -no-format, -format: names as given */
	bool list;                       /* -formats */
	const char *only;                /* a program of one format (starpu_fxt_stats): it alone is on, -format or not */
	GPtrArray *on;                   /* const struct astro_trace_format *, those writing this conversion */
	GPtrArray *states;               /* what each one's begin returned (NULL: it failed and was told) */
	bool failed;                     /* a format could not begin or end */
	/* For each callback, the formats that began and have it (struct trace_format_call): the stream goes to those only. */
	GArray *with[TRACE_FORMAT_NCALLBACKS];
};

/* Takes argv[*i] when it is -formats, -no-format NAME or -format NAME (moving *i past NAME): 1; -1 when NAME is
 * missing (told); 0 when it is another option. */
int trace_formats_option(struct trace_formats *f, int argc, char **argv, int *i);
/* Loads the format plugins, then chooses among the formats registered (the built-in ones first: the caller registered
 * them) as the command line says: 0, or 1 for an unknown name (told). */
int trace_formats_select(struct trace_formats *f);
/* -formats: every format, on or off, and where it comes from. */
void trace_formats_print(const struct trace_formats *f, FILE *out);
/* Begins each format on; one that cannot is told and left out (failed). */
void trace_formats_begin(struct trace_formats *f, const struct astro_trace_format_options *options);
void trace_formats_process(struct trace_formats *f, const struct astro_trace_process *p);
void trace_formats_location(struct trace_formats *f, const struct astro_trace_location *l);
void trace_formats_state(struct trace_formats *f, const struct astro_trace_state *s);
void trace_formats_counter(struct trace_formats *f, const struct astro_trace_counter *c);
void trace_formats_dependency(struct trace_formats *f, const struct astro_trace_dependency *d);
void trace_formats_instant(struct trace_formats *f, const struct astro_trace_instant *i);
void trace_formats_task(struct trace_formats *f, const struct astro_trace_task *t);
void trace_formats_data(struct trace_formats *f, const struct astro_trace_data *d);
void trace_formats_job(struct trace_formats *f, const struct astro_trace_job *j);
void trace_formats_event(struct trace_formats *f, const struct astro_trace_event *e);
void trace_formats_message(struct trace_formats *f, const struct astro_trace_message *m);
/* Whether some format on takes tasks (their record is then built). */
bool trace_formats_want_tasks(const struct trace_formats *f);
/* Ends each format that began: one whose output is incomplete is told (failed). */
void trace_formats_end(struct trace_formats *f);
void trace_formats_free(struct trace_formats *f);

#endif
