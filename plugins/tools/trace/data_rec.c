/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * data.rec: StarPU's record of each data handle (GNU recutils: handle, home
 * node, name, size, description, coordinates), written through the trace
 * format API (astrolabe/trace_format.h) when the converter hands a handle
 * over: at its unregistration, or at the end of its archive for one still
 * registered. Built into the converter.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include "builtin_formats.h"
#include "format_common.h"

struct data_rec
{
	FILE *f;
	int rank;   /* the archive's rank */
	bool multi; /* several archives: each record says its MPIRank */
};

static void *data_rec_begin(const struct astro_trace_format_options *options)
{
	FILE *f = trace_format_open(options, "data.rec");
	if (!f)
		return NULL;
	struct data_rec *r = g_new0(struct data_rec, 1);
	r->f = f;
	return r;
}

static void data_rec_process(void *state, const struct astro_trace_process *p)
{
	struct data_rec *r = state;
	r->rank = p->rank;
	r->multi = p->multi;
}

static void data_rec_data(void *state, const struct astro_trace_data *d)
{
	struct data_rec *r = state;
	FILE *f = r->f;
	fprintf(f, "Handle: %" PRIx64 "\nHomeNode: %d\n", d->handle, d->home_node);
	if (r->multi)
		fprintf(f, "MPIRank: %d\n", r->rank);
	if (d->name)
		fprintf(f, "Name: %s\n", d->name);
	fprintf(f, "Size: %" PRIu64 "\n", d->size);
	if (d->description)
		fprintf(f, "Description: %s\n", d->description);
	if (d->coordinates)
		fprintf(f, "Coordinates: %s\n", d->coordinates);
	fputc('\n', f);
}

static int data_rec_end(void *state)
{
	struct data_rec *r = state;
	int ret = trace_format_close(r->f);
	g_free(r);
	return ret;
}

const struct astro_trace_format trace_data_rec_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "data_rec",
	.description = "data.rec: StarPU's record of each data handle (recutils)",
	.begin = data_rec_begin,
	.process = data_rec_process,
	.data = data_rec_data,
	.end = data_rec_end,
};
