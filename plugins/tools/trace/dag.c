/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dag.dot: StarPU's task graph for Graphviz (one node per task that ran,
 * coloured by worker, by the task's colour or, with -c, by its name; an
 * edge per dependency, dashed through the tags; the runtime's own jobs in
 * grey), written through the trace format API (astrolabe/trace_format.h):
 * an edge when a dependency is declared, a node when a task is handed over
 * (at its end) or a runtime job submitted. Built into the converter.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include "builtin_formats.h"
#include "format_common.h"

struct dag
{
	FILE *f;
	char *prefix;    /* the archive's "<rank>_" before job ids and tags ("" for one archive) */
	bool colors;     /* -c: one colour per task name */
	bool label_deps; /* -label-deps: edges labelled with their kind */
};

static void *dag_begin(const struct astro_trace_format_options *options)
{
	FILE *f = trace_format_open(options, "dag.dot");
	if (!f)
		return NULL;
	struct dag *d = g_new0(struct dag, 1);
	d->f = f;
	d->prefix = g_strdup("");
	d->colors = options->colors;
	d->label_deps = options->label_deps;
	fprintf(f, "digraph G {\n\tcolor=white\n\trankdir=LR;\nsubgraph cluster_0 {\n\tcolor=black;\n");
	return d;
}

static void dag_process(void *state, const struct astro_trace_process *p)
{
	struct dag *d = state;
	g_free(d->prefix);
	d->prefix = g_strdup(p->prefix);
}

/* A node's label: name, its quotes escaped. */
static void label(FILE *f, const char *name)
{
	for (const char *s = name; *s; s++)
		fprintf(f, *s == '"' ? "\\%c" : "%c", *s);
}

/* A task's fill and font colours: its own colour, else its name's (-c), else its worker's green, else grey. */
static void colors_of(const struct dag *d, const struct astro_trace_task *t, char *fill, size_t n, const char **font)
{
	static const int greens[] = { 7, 6, 5, 4, 9, 3, 2, 1 };
	*font = "white";
	if (t->color) {
		snprintf(fill, n, "#%06x", t->color & 0xffffff);
		unsigned r = (t->color >> 16) & 0xff, g = (t->color >> 8) & 0xff, b = t->color & 0xff;
		if ((r + g + b) / 256 >= 2)
			*font = "black";
	} else if (d->colors) {
		double rgb[3];
		trace_hashed_color(trace_format_task_name(t), rgb);
		snprintf(fill, n, "#%02x%02x%02x", (unsigned)(rgb[0] * 255), (unsigned)(rgb[1] * 255), (unsigned)(rgb[2] * 255));
	} else if (t->worker >= 0) {
		snprintf(fill, n, "/greens9/%d", greens[t->worker % 8]);
	} else {
		snprintf(fill, n, "#aaaaaa");
	}
}

/* A task's tag and, when it ran, its node. */
static void dag_task(void *state, const struct astro_trace_task *t)
{
	struct dag *d = state;
	FILE *f = d->f;
	const char *p = d->prefix;
	if (t->has_tag)
		fprintf(f, "\t \"tag_%s%" PRIx64 "\"->\"task_%s%" PRIu64 "\"->\"tag_%s%" PRIx64 "\" [style=dashed]%s\n", p, t->tag, p, t->job, p,
			t->tag, d->label_deps ? " [label=\"tag\"]" : "");
	if (t->executed) {
		char fill[32];
		const char *font;
		colors_of(d, t, fill, sizeof(fill), &font);
		fprintf(f, "\t \"task_%s%" PRIu64 "\" [ style=filled, label=\"", p, t->job);
		label(f, trace_format_task_name(t));
		fprintf(f, "\", fillcolor=\"%s\", fontcolor=\"%s\"]\n", fill, font);
	}
}

/* An edge, when a dependency is declared: between tags (in hexadecimal) or jobs. */
static void dag_dependency(void *state, const struct astro_trace_dependency *dep)
{
	struct dag *d = state;
	if (dep->phase != 0)
		return;
	const char *p = d->prefix;
	bool tag = dep->kind == 2;
	const char *lbl = d->label_deps ? (tag ? " [label=\"tag\"]" : " [label=\"task\"]") : "";
	if (tag)
		fprintf(d->f, "\t \"tag_%s%" PRIx64 "\"->\"tag_%s%" PRIx64 "\"%s\n", p, dep->pred, p, dep->succ, lbl);
	else
		fprintf(d->f, "\t \"task_%s%" PRIu64 "\"->\"task_%s%" PRIu64 "\"%s\n", p, dep->pred, p, dep->succ, lbl);
}

/* A runtime job, as StarPU draws its acquisitions and internal jobs: grey, named. */
static void dag_job(void *state, const struct astro_trace_job *j)
{
	struct dag *d = state;
	fprintf(d->f, "\t \"task_%s%" PRIu64 "\" [ style=filled, label=\"", d->prefix, j->job);
	label(d->f, j->name);
	fprintf(d->f, "\", fillcolor=\"#aaaaaa\", fontcolor=\"white\"]\n");
}

static int dag_end(void *state)
{
	struct dag *d = state;
	fprintf(d->f, "}\n}\n");
	int ret = trace_format_close(d->f);
	g_free(d->prefix);
	g_free(d);
	return ret;
}

const struct astro_trace_format trace_dag_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "dag",
	.description = "dag.dot: StarPU's task graph (Graphviz)",
	.begin = dag_begin,
	.process = dag_process,
	.dependency = dag_dependency,
	.task = dag_task,
	.end = dag_end,
	.job = dag_job,
};
