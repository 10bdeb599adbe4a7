/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * papi.rec: StarPU's record of the PAPI counters each task counted (GNU
 * recutils, one record per task and PAPI event: job id, event, value),
 * written through the trace format API (astrolabe/trace_format.h) from the
 * converter's PAPI events. As StarPU, only a run that counted some has one:
 * the file is made at the first value, and an older one in the output folder
 * (trace_output_dir, not the hidden folder it writes in) is removed at the
 * start. Built into the converter.
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include "builtin_formats.h"
#include "format_common.h"

struct papi_rec
{
	char *path;
	FILE *f;      /* made at the first value */
	int error;    /* the errno of a failed fopen (the values are lost: told at the end) */
	char *prefix; /* the archive's "<rank>_" before job ids ("" for one archive) */
};

static void *papi_rec_begin(const struct astro_trace_format_options *options)
{
	char *older = g_build_filename(trace_output_dir, "papi.rec", NULL);
	int err = unlink(older) < 0 && errno != ENOENT ? errno : 0; /* an older one would not belong to this trace */
	g_free(older);
	if (err) {
		errno = err;
		return NULL;
	}
	struct papi_rec *r = g_new0(struct papi_rec, 1);
	r->path = g_build_filename(options->dir, "papi.rec", NULL);
	r->prefix = g_strdup("");
	return r;
}

static void papi_rec_process(void *state, const struct astro_trace_process *p)
{
	struct papi_rec *r = state;
	g_free(r->prefix);
	r->prefix = g_strdup(p->prefix);
}

static void papi_rec_event(void *state, const struct astro_trace_event *e)
{
	struct papi_rec *r = state;
	if (e->kind != ASTRO_TRACE_EVENT_PAPI || r->error)
		return;
	if (!r->f && !(r->f = fopen(r->path, "w"))) {
		r->error = errno;
		return;
	}
	fprintf(r->f, "JobId: %s%" PRIu64 "\nEvent: %s\nValue: %lld\n\n", r->prefix, e->job, e->name, (long long)e->value);
}

static int papi_rec_end(void *state)
{
	struct papi_rec *r = state;
	int ret = r->error ? -r->error : r->f ? trace_format_close(r->f) : 0;
	g_free(r->path);
	g_free(r->prefix);
	g_free(r);
	return ret;
}

const struct astro_trace_format trace_papi_rec_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "papi_rec",
	.description = "papi.rec: the PAPI counters of each task (recutils), when the run counted some",
	.begin = papi_rec_begin,
	.process = papi_rec_process,
	.event = papi_rec_event,
	.end = papi_rec_end,
};
