/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the built-in trace formats share (format_common.c): their files, StarPU's names and colours, quoting. It calls
 * nothing of the converter: the formats sit on it, the converter above them. */
#ifndef __ASTRO_TRACE_FORMAT_COMMON_H__
#define __ASTRO_TRACE_FORMAT_COMMON_H__

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <astrolabe/trace_format.h>

/* The folder the outputs end in, as the converter names it ("" for the current one): the formats write into a hidden
 * folder in it (options->dir), which the converter empties into it once the whole trace was read (convert.c). */
extern const char *trace_output_dir;

/* File name of the output folder, opened for writing (NULL, errno set: the converter tells). */
FILE *trace_format_open(const struct astro_trace_format_options *options, const char *name);
/* Closes f: 0, or -EIO when a write failed (the converter tells). */
int trace_format_close(FILE *f);
/* A task's name as StarPU's outputs show it: its name, else its model's, else "unknown". */
const char *trace_format_task_name(const struct astro_trace_task *t);
/* StarPU's Paje alias of a runtime state (Sleeping: "Sl"...), and its trace.rec category in *category. */
const char *trace_state_alias(const char *name, const char **category);
/* StarPU's colour of a name (-c: paje.trace's task values, dag.dot's nodes), its red, green and blue summing to 1. */
void trace_hashed_color(const char *name, double rgb[3]);
/* Writes s as one word of paje.trace: quoted when empty or holding a space, a TAB or a quote (then made '). */
void paje_word(FILE *f, const char *s);
/* s as a JSON string, quotes included, written by json-glib (g_free() it): made valid UTF-8 first, each invalid byte
 * becoming U+FFFD (JSON is UTF-8: a name the program gave in another encoding would break json.load); "" for NULL. */
char *trace_json_quote(const char *s);
/* Writes s as trace_json_quote() does, '<' escaped too, so that it may sit in an HTML script. */
void trace_json_string(FILE *f, const char *s);

#endif
