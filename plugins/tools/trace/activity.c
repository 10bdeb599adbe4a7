/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * activity.data: what starpu_workers_activity plots, as StarPU writes it:
 * each worker's name, then as they happen the nsubmitted / nready counters
 * (cnt_submitted, cnt_ready), starpu_fxt_start/stop_profiling()
 * (set_profiling), and each worker's activity per period of at least 75 ms
 * (its id, the period's end and length, the time it executed tasks and
 * slept in it, ms), its last period at the end of its archive. Written
 * through the trace format API (astrolabe/trace_format.h): locations,
 * counters, program events, states left, and the archive's end (an event).
 * Built into the converter.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "builtin_formats.h"
#include "format_common.h"

#define ACTIVITY_PERIOD_NS 75000000 /* 75 ms */

/* A worker's period so far, ns. */
struct period
{
	bool started;
	uint64_t last, exec, sleep;
};

struct activity
{
	FILE *f;
	GHashTable *workers; /* worker id + 1 -> struct period, of the archive being read */
};

static void *activity_begin(const struct astro_trace_format_options *options)
{
	FILE *f = trace_format_open(options, "activity.data");
	if (!f)
		return NULL;
	struct activity *a = g_new0(struct activity, 1);
	a->f = f;
	a->workers = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	return a;
}

static void activity_process(void *state, const struct astro_trace_process *p)
{
	(void)p;
	g_hash_table_remove_all(((struct activity *)state)->workers);
}

static void activity_location(void *state, const struct astro_trace_location *l)
{
	struct activity *a = state;
	if (l->workerid < 0)
		return;
	/* StarPU's worker names there are "<KIND> <devid>". */
	size_t kind = strcspn(l->name, "0123456789"), digits = strspn(l->name + kind, "0123456789");
	fprintf(a->f, "name\t%d\t%.*s %.*s\n", l->workerid, (int)kind, l->name, (int)digits, l->name + kind);
	g_hash_table_insert(a->workers, GINT_TO_POINTER(l->workerid + 1), g_new0(struct period, 1));
}

static void activity_counter(void *state, const struct astro_trace_counter *c)
{
	struct activity *a = state;
	if (c->kind != ASTRO_TRACE_COUNTER_RUNTIME)
		return;
	fprintf(a->f, "cnt_%s\t%.9f\t%ld\n", strcmp(c->name, "nsubmitted") == 0 ? "submitted" : "ready", (double)c->date / 1e6,
		(long)c->value);
}

static void activity_instant(void *state, const struct astro_trace_instant *i)
{
	struct activity *a = state;
	if (i->kind == 1 && (strcmp(i->name, "start_profiling") == 0 || strcmp(i->name, "stop_profiling") == 0))
		fprintf(a->f, "set_profiling\t%.9f\t%d\n", (double)i->date / 1e6, i->name[2] == 'a');
}

/* Worker's period ending at date. */
static void write_period(struct activity *a, int worker, const struct period *p, uint64_t date)
{
	fprintf(a->f, "%d\t%.9f\t%.9f\t%.9f\t%.9f\n", worker, (double)date / 1e6, (double)(date - p->last) / 1e6, (double)p->exec / 1e6,
		(double)p->sleep / 1e6);
}

static void activity_state(void *state, const struct astro_trace_state *s)
{
	struct activity *a = state;
	/* Polling for work (Idle) is time without work, as sleeping is (StarPU's sleeping time counts both). */
	bool sleeping = !s->is_task && (strcmp(s->name, "Sleeping") == 0 || strcmp(s->name, "Idle") == 0);
	if (!s->left || s->location->workerid < 0 || !(s->is_task || sleeping))
		return;
	struct period *p = g_hash_table_lookup(a->workers, GINT_TO_POINTER(s->location->workerid + 1));
	if (!p)
		return;
	/* A worker's first period starts with its first task or sleep, which it holds: executing and sleeping are then
	 * shares of the period's length, that add up to 100% at most (the rest is the runtime's). */
	if (!p->started) {
		p->started = true;
		p->last = s->begin;
	}
	*(s->is_task ? &p->exec : &p->sleep) += s->end - s->begin;
	/* A period ends at the first task or sleep that ends 75 ms or more after its start. */
	if (s->end - p->last >= ACTIVITY_PERIOD_NS) {
		write_period(a, s->location->workerid, p, s->end);
		p->last = s->end;
		p->exec = p->sleep = 0;
	}
}

/* The archive ended: each worker's last period, however short, so that a short run still has its activity. */
static void activity_event(void *state, const struct astro_trace_event *e)
{
	struct activity *a = state;
	if (e->kind != ASTRO_TRACE_EVENT_ARCHIVE_END || e->location->workerid < 0)
		return;
	const struct period *p = g_hash_table_lookup(a->workers, GINT_TO_POINTER(e->location->workerid + 1));
	if (p && p->started && e->date > p->last)
		write_period(a, e->location->workerid, p, e->date);
}

static int activity_end(void *state)
{
	struct activity *a = state;
	int ret = trace_format_close(a->f);
	g_hash_table_destroy(a->workers);
	g_free(a);
	return ret;
}

const struct astro_trace_format trace_activity_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "activity",
	.description = "activity.data: each worker's activity per period, for starpu_workers_activity",
	.begin = activity_begin,
	.process = activity_process,
	.location = activity_location,
	.state = activity_state,
	.counter = activity_counter,
	.instant = activity_instant,
	.event = activity_event,
	.end = activity_end,
};
