/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace.json: the Chrome / Perfetto trace-event format (open it at
 * https://ui.perfetto.dev or chrome://tracing), written through the trace
 * format API (astrolabe/trace_format.h) like a plugin's format. It is built
 * into the converter rather than a plugin of its own: it is always there
 * (a static build too).
 *
 * Every string is made valid UTF-8 and quoted by json-glib (a name the
 * program gave in another encoding would otherwise break json.load), once
 * per distinct string: names repeat, and building each event with json-glib
 * doubled the conversion's time. Numbers are integers or finite decimals
 * (%.3f: the microsecond with its nanoseconds); a value the program gave
 * that is not finite (a counter's, a task's flops) is null.
 *
 * One process per archive (pid: its rank), one track per location (tid: its
 * id), tasks and states as X slices, counters as C events, dependencies as
 * flows (s at the end of the predecessor, f with bp e at the start of the
 * successor), user and program events as instants.
 */
#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include "builtin_formats.h"
#include "format_common.h"

struct json
{
	FILE *f;
	bool first;          /* no event written yet: no comma before the next */
	int rank;            /* the pid of the events of the archive being read */
	GHashTable *quoted;  /* string -> its JSON text, quotes included */
};

/* Distinct strings kept quoted: names repeat, but a program may give every user event a name of its own. */
#define QUOTED_MAX 65536

/* Writes s as a JSON string: json-glib's text of it, made once per distinct string (the first QUOTED_MAX). */
static void string(struct json *j, const char *s)
{
	if (!s)
		s = "";
	const char *text = g_hash_table_lookup(j->quoted, s);
	if (text) {
		fputs(text, j->f);
		return;
	}
	char *made = trace_json_quote(s);
	fputs(made, j->f);
	if (g_hash_table_size(j->quoted) < QUOTED_MAX)
		g_hash_table_insert(j->quoted, g_strdup(s), made);
	else
		g_free(made);
}

/* Writes a value the program gave (a counter's, a task's flops): JSON has no NaN nor infinity. */
static void number(FILE *f, const char *format, double v)
{
	if (isfinite(v))
		fprintf(f, format, v);
	else
		fputs("null", f);
}

/* Microseconds, the format's unit, from the converter's nanoseconds. */
static double us(uint64_t date)
{
	return (double)date / 1e3;
}

/* Starts an event of the traceEvents list. */
static FILE *event(struct json *j)
{
	fputs(j->first ? "\n" : ",\n", j->f);
	j->first = false;
	return j->f;
}

static void *json_begin(const struct astro_trace_format_options *options)
{
	FILE *f = trace_format_open(options, "trace.json");
	if (!f)
		return NULL;
	struct json *j = g_new0(struct json, 1);
	j->f = f;
	j->first = true;
	j->quoted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"Astrolabe starpu_fxt_tool\"},\"traceEvents\":[", f);
	return j;
}

static void json_process(void *state, const struct astro_trace_process *p)
{
	struct json *j = state;
	j->rank = p->rank;
	FILE *f = event(j);
	fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":", j->rank);
	string(j, p->multi ? p->input : "StarPU program");
	fputs("}}", f);
}

static void json_location(void *state, const struct astro_trace_location *l)
{
	struct json *j = state;
	FILE *f = event(j);
	fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu64 ",\"args\":{\"name\":", j->rank, l->id);
	string(j, l->name);
	fputs("}}", f);
	f = event(j);
	fprintf(f, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu64 ",\"args\":{\"sort_index\":%" PRIu64 "}}",
		j->rank, l->id, l->id);
}

/* A task's execution or a state, as a slice when it is left. */
static void json_state(void *state, const struct astro_trace_state *s)
{
	struct json *j = state;
	if (!s->left)
		return;
	FILE *f = event(j);
	fputs("{\"name\":", f);
	string(j, s->name);
	fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%" PRIu64, s->is_task ? "task" : "state",
		us(s->begin), (double)(s->end - s->begin) / 1e3, j->rank, s->location->id);
	const struct astro_trace_task *t = s->task;
	if (t) {
		fprintf(f, ",\"args\":{\"JobId\":%" PRIu64 ",\"Footprint\":\"%08x\",\"Tag\":\"%" PRIx64 "\",\"Size\":%" PRIu64
			   ",\"Priority\":%d,\"GFlop\":",
			t->job, t->footprint, t->tag, t->size, t->priority);
		number(f, "%.9g", t->flops / 1e9);
		fprintf(f, ",\"WorkerId\":%d", t->worker);
		if (t->model) {
			fputs(",\"Model\":", f);
			string(j, t->model);
		}
		fputs("}", f);
	}
	fputs("}", f);
}

/* A value of a counter track (one track per name and process); a burst's key is a track of its own category, a
 * named value of it also an instant. */
static void json_counter(void *state, const struct astro_trace_counter *c)
{
	struct json *j = state;
	FILE *f = event(j);
	fputs("{\"name\":", f);
	string(j, c->name);
	if (c->kind == ASTRO_TRACE_COUNTER_BURST) {
		fprintf(f, ",\"cat\":\"burst\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%d,\"args\":{\"value\":%" PRIu64 "}}", us(c->date), j->rank,
			c->raw);
		if (c->label) { /* the value's name (the event-key dictionary): an instant named by it */
			f = event(j);
			fputs("{\"name\":", f);
			trace_json_string(f, c->label);
			fprintf(f, ",\"cat\":\"burst\",\"ph\":\"i\",\"s\":\"g\",\"ts\":%.3f,\"pid\":%d,\"tid\":0,\"args\":{\"key\":", us(c->date),
				j->rank);
			trace_json_string(f, c->name);
			fprintf(f, ",\"value\":%" PRIu64 "}}", c->raw);
		}
		return;
	}
	fprintf(f, ",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%d,\"args\":{", us(c->date), j->rank);
	string(j, c->name);
	fputc(':', f);
	number(f, "%.17g", c->value);
	fputs("}}", f);
}

/* A dependency flow: s just before the end of the predecessor, f (bp e) at the start of the successor. */
static void json_dependency(void *state, const struct astro_trace_dependency *d)
{
	struct json *j = state;
	if (d->phase != 1 && d->phase != 2)
		return;
	const char *ph = d->phase == 1 ? "s" : "f";
	double ts = d->phase == 1 ? us(d->date) - 0.001 : us(d->date);
	fprintf(event(j), "{\"name\":\"dependency\",\"cat\":\"dep\",\"ph\":\"%s\",%s\"id\":%u,\"ts\":%.3f,\"pid\":%d,\"tid\":%" PRIu64 "}",
		ph, d->phase == 2 ? "\"bp\":\"e\"," : "", d->flow, ts, j->rank, d->location);
}

/* A user event (scope thread) or a program event (scope global). */
static void json_instant(void *state, const struct astro_trace_instant *i)
{
	struct json *j = state;
	FILE *f = event(j);
	fputs("{\"name\":", f);
	string(j, i->name);
	fprintf(f, ",\"cat\":\"event\",\"ph\":\"i\",\"s\":\"%s\",\"ts\":%.3f,\"pid\":%d,\"tid\":%" PRIu64 "}", i->kind == 0 ? "t" : "g",
		us(i->date), j->rank, i->location ? i->location->id : 0);
}

static int json_end(void *state)
{
	struct json *j = state;
	fputs("\n]}\n", j->f);
	int ret = trace_format_close(j->f);
	g_hash_table_destroy(j->quoted);
	g_free(j);
	return ret;
}

const struct astro_trace_format trace_json_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "json",
	.description = "trace.json: Chrome / Perfetto trace events (tasks, states, counters, dependencies, events)",
	.begin = json_begin,
	.process = json_process,
	.location = json_location,
	.state = json_state,
	.counter = json_counter,
	.dependency = json_dependency,
	.instant = json_instant,
	.end = json_end,
};
