/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * distrib.data: what starpu_codelet_profile plots, one line per task
 * execution (name, worker, data size, footprint, duration in ms), written
 * through the trace format API (astrolabe/trace_format.h) when a worker
 * leaves a task. Built into the converter.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include "builtin_formats.h"
#include "format_common.h"

struct distrib
{
	FILE *f;
	char *prefix; /* the archive's "<rank>_" before worker ids ("" for one archive) */
};

static void *distrib_begin(const struct astro_trace_format_options *options)
{
	FILE *f = trace_format_open(options, "distrib.data");
	if (!f)
		return NULL;
	struct distrib *r = g_new0(struct distrib, 1);
	r->f = f;
	r->prefix = g_strdup("");
	return r;
}

static void distrib_process(void *state, const struct astro_trace_process *p)
{
	struct distrib *r = state;
	g_free(r->prefix);
	r->prefix = g_strdup(p->prefix);
}

static void distrib_state(void *state, const struct astro_trace_state *s)
{
	struct distrib *r = state;
	const struct astro_trace_task *t = s->task;
	if (!s->left || !s->is_task || !t)
		return;
	fprintf(r->f, "%s\t%s%d\t%" PRIu64 "\t%08x\t%.9f\n", trace_format_task_name(t), r->prefix, s->location->workerid, t->size,
		t->footprint, (double)(s->end - s->begin) / 1e6);
}

static int distrib_end(void *state)
{
	struct distrib *r = state;
	int ret = trace_format_close(r->f);
	g_free(r->prefix);
	g_free(r);
	return ret;
}

const struct astro_trace_format trace_distrib_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "distrib",
	.description = "distrib.data: one line per task execution, for starpu_codelet_profile",
	.begin = distrib_begin,
	.process = distrib_process,
	.state = distrib_state,
	.end = distrib_end,
};
