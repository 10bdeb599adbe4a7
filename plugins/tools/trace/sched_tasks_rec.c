/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sched_tasks.rec: StarPU's record of the scheduler's pushes and pops (GNU
 * recutils, one record per push or pop: type, date in ms, priority, job id),
 * written through the trace format API (astrolabe/trace_format.h) from the
 * converter's push and pop events, as they happen. Built into the converter.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include "builtin_formats.h"
#include "format_common.h"

struct sched_tasks_rec
{
	FILE *f;
	char prefix[16]; /* before job ids: "" for one archive, else "<rank>_", the rank not padded (StarPU's) */
};

static void *sched_tasks_rec_begin(const struct astro_trace_format_options *options)
{
	FILE *f = trace_format_open(options, "sched_tasks.rec");
	if (!f)
		return NULL;
	struct sched_tasks_rec *r = g_new0(struct sched_tasks_rec, 1);
	r->f = f;
	return r;
}

static void sched_tasks_rec_process(void *state, const struct astro_trace_process *p)
{
	struct sched_tasks_rec *r = state;
	if (p->multi)
		snprintf(r->prefix, sizeof(r->prefix), "%d_", p->rank);
	else
		r->prefix[0] = '\0';
}

static void sched_tasks_rec_event(void *state, const struct astro_trace_event *e)
{
	struct sched_tasks_rec *r = state;
	if (e->kind != ASTRO_TRACE_EVENT_PUSH && e->kind != ASTRO_TRACE_EVENT_POP)
		return;
	fprintf(r->f, "Type: %s\nTime: %.9f\nPriority: %d\nJobId: %s%" PRIu64 "\n\n", e->kind == ASTRO_TRACE_EVENT_PUSH ? "push" : "pop",
		(double)e->date / 1e6, e->priority, r->prefix, e->job);
}

static int sched_tasks_rec_end(void *state)
{
	struct sched_tasks_rec *r = state;
	int ret = trace_format_close(r->f);
	g_free(r);
	return ret;
}

const struct astro_trace_format trace_sched_tasks_rec_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "sched_tasks_rec",
	.description = "sched_tasks.rec: StarPU's record of each push and pop of the scheduler (recutils)",
	.begin = sched_tasks_rec_begin,
	.process = sched_tasks_rec_process,
	.event = sched_tasks_rec_event,
	.end = sched_tasks_rec_end,
};
