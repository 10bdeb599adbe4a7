/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace.rec: StarPU's time-ordered record of the workers' states
 * (SetState), the application threads' states (PushState, PopState) and the
 * program events (ProgEvent), written through the trace format API
 * (astrolabe/trace_format.h) as the converter hands the states and instants
 * over. Built into the converter.
 *
 * A worker is in one state at a time: entering a state sets it, leaving one
 * sets the state it was in (the enclosing one, else Overhead), so the format
 * keeps each location's stack of states.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "builtin_formats.h"
#include "format_common.h"

/* As deep as the converter follows a location's nesting. */
#define DEPTH 32

struct rec_state
{
	const char *name, *category;
};

struct rec_location
{
	unsigned depth;
	struct rec_state stack[DEPTH];
};

struct trace_rec
{
	FILE *f;
	GHashTable *locations; /* the archive's location id -> struct rec_location */
	GStringChunk *names;   /* the states' names, kept for the stacks */
};

static void *trace_rec_begin(const struct astro_trace_format_options *options)
{
	FILE *f = trace_format_open(options, "trace.rec");
	if (!f)
		return NULL;
	struct trace_rec *r = g_new0(struct trace_rec, 1);
	r->f = f;
	r->locations = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	r->names = g_string_chunk_new(4096);
	fputs("#\n# E: Event type\n# N: Event name\n# C: Event category\n# W: Worker ID\n# T: Thread ID\n# S: Start time\n#\n\n", f);
	return r;
}

/* A new archive: its location ids are its own. */
static void trace_rec_process(void *state, const struct astro_trace_process *p)
{
	(void)p;
	g_hash_table_remove_all(((struct trace_rec *)state)->locations);
}

static struct rec_location *location_of(struct trace_rec *r, uint64_t id)
{
	struct rec_location *l = g_hash_table_lookup(r->locations, &id);
	if (!l) {
		uint64_t *key = g_new(uint64_t, 1);
		*key = id;
		l = g_new0(struct rec_location, 1);
		g_hash_table_insert(r->locations, key, l);
	}
	return l;
}

static void record(struct trace_rec *r, const char *kind, const char *name, const char *category, int worker, long thread,
		   uint64_t date)
{
	FILE *f = r->f;
	fprintf(f, "E: %s\n", kind);
	if (name) {
		fprintf(f, "N: %s\n", name);
		fprintf(f, "C: %s\n", category);
	}
	fprintf(f, "W: %d\nT: %ld\nS: %f\n\n", worker, thread, (double)date / 1e6);
}

/* An application thread's number, from its name UserThread<n>. */
static long thread_of(const struct astro_trace_location *l)
{
	return l->workerid >= 0 ? -1 : strtol(l->name + strlen("UserThread"), NULL, 10);
}

static void trace_rec_state(void *state, const struct astro_trace_state *s)
{
	struct trace_rec *r = state;
	const struct astro_trace_location *where = s->location;
	bool worker = where->workerid >= 0;
	struct rec_location *l = location_of(r, where->id);
	if (!s->left) {
		const char *category = s->is_user ? "User" : "Task";
		if (!s->is_task && !s->is_user)
			trace_state_alias(s->name, &category);
		if (l->depth < DEPTH)
			l->stack[l->depth] = (struct rec_state){ g_string_chunk_insert_const(r->names, s->name), category };
		l->depth++;
		if (s->is_task)
			record(r, "SetState", trace_format_task_name(s->task), "Task", where->workerid, -1, s->begin);
		else if (worker)
			record(r, "SetState", s->name, category, where->workerid, -1, s->begin);
		else
			record(r, "PushState", s->name, "User", -1, thread_of(where), s->begin);
		return;
	}
	if (!l->depth)
		return;
	l->depth--;
	if (!worker) {
		record(r, "PopState", NULL, NULL, -1, thread_of(where), s->end);
		return;
	}
	const struct rec_state *parent = l->depth && l->depth <= DEPTH ? &l->stack[l->depth - 1] : NULL;
	if (parent)
		record(r, "SetState", parent->name, parent->category, where->workerid, -1, s->end);
	else
		record(r, "SetState", "Overhead", s->is_task ? "Other" : "Runtime", where->workerid, -1, s->end);
}

/* Program events (starpu_fxt_trace_user_event_string()), with or without -no-events. */
static void trace_rec_instant(void *state, const struct astro_trace_instant *i)
{
	struct trace_rec *r = state;
	if (i->kind == 1)
		fprintf(r->f, "E: ProgEvent\nN: %s\nC: Program\nW: -1\nT: 0\nS: %f\n\n", i->name, (double)i->date / 1e6);
}

static int trace_rec_end(void *state)
{
	struct trace_rec *r = state;
	int ret = trace_format_close(r->f);
	g_hash_table_destroy(r->locations);
	g_string_chunk_free(r->names);
	g_free(r);
	return ret;
}

const struct astro_trace_format trace_trace_rec_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "trace_rec",
	.description = "trace.rec: StarPU's record of the workers' and threads' states and the program events (recutils)",
	.begin = trace_rec_begin,
	.process = trace_rec_process,
	.state = trace_rec_state,
	.instant = trace_rec_instant,
	.end = trace_rec_end,
};
