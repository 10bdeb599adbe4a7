/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_fxt_stats: StarPU's statistics of a raw trace, read from the OTF2
 * archive the recorder writes: the span of the trace, the bytes copied
 * between each pair of memory nodes and the number of tasks, in StarPU's
 * lines. A trace format of its own (fxt_stats, registered by this program
 * only) fed by the converter.
 */
#include <starpu.h>
#include <errno.h>
#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/trace_format.h>
#include "convert.h"

#define PROGNAME "starpu_fxt_stats"

struct pair_bytes
{
	int src, dst;
	uint64_t bytes;
	unsigned copies;
};

struct stats
{
	FILE *out;
	bool dated;            /* some event was read: first and last hold */
	uint64_t first, last;  /* ns from the trace's origin */
	GArray *pairs;         /* struct pair_bytes, in the order they were first seen */
	unsigned tasks;        /* tasks that ran */
};

static FILE *stats_output; /* -o's file or stdout, set before the conversion */

static void *stats_begin(const struct astro_trace_format_options *options)
{
	(void)options;
	struct stats *s = g_new0(struct stats, 1);
	s->out = stats_output;
	s->pairs = g_array_new(FALSE, FALSE, sizeof(struct pair_bytes));
	return s;
}

static void seen(struct stats *s, uint64_t date)
{
	if (!s->dated || date < s->first)
		s->first = date;
	if (!s->dated || date > s->last)
		s->last = date;
	s->dated = true;
}

static void stats_state(void *state, const struct astro_trace_state *st)
{
	seen(state, st->left ? st->end : st->begin);
}

static void stats_counter(void *state, const struct astro_trace_counter *c)
{
	seen(state, c->date);
}

static void stats_instant(void *state, const struct astro_trace_instant *i)
{
	seen(state, i->date);
}

static void stats_task(void *state, const struct astro_trace_task *t)
{
	struct stats *s = state;
	if (t->executed)
		s->tasks++;
}

static void stats_event(void *state, const struct astro_trace_event *e)
{
	struct stats *s = state;
	seen(s, e->date);
	if (e->kind != ASTRO_TRACE_EVENT_TRANSFER_END)
		return;
	for (guint i = 0; i < s->pairs->len; i++) {
		struct pair_bytes *p = &g_array_index(s->pairs, struct pair_bytes, i);
		if (p->src == e->src_node && p->dst == e->node) {
			p->bytes += e->size;
			p->copies++;
			return;
		}
	}
	struct pair_bytes p = { e->src_node, e->node, e->size, 1 };
	g_array_append_val(s->pairs, p);
}

static gint by_nodes(gconstpointer a, gconstpointer b)
{
	const struct pair_bytes *x = a, *y = b;
	return x->src != y->src ? x->src - y->src : x->dst - y->dst;
}

static int stats_end(void *state)
{
	struct stats *s = state;
	double first_ms = s->first / 1e6, last_ms = s->last / 1e6;
	fprintf(s->out, "Start : start time %e end time %e length %e\n", first_ms, last_ms, last_ms - first_ms);
	g_array_sort(s->pairs, by_nodes);
	for (guint i = 0; i < s->pairs->len; i++) {
		const struct pair_bytes *p = &g_array_index(s->pairs, struct pair_bytes, i);
		fprintf(s->out, "%d -> %d \t %.2f MB (%u transfers)\n", p->src, p->dst, p->bytes / (1024.0 * 1024.0), p->copies);
	}
	/* StarPU also counts work stealing; this trace does not record steals, so no figure is made up for them. */
	fprintf(s->out, "There was %u tasks\n", s->tasks);
	int ret = fflush(s->out) == 0 && !ferror(s->out) ? 0 : -EIO;
	g_array_free(s->pairs, TRUE);
	g_free(s);
	return ret;
}

static const struct astro_trace_format stats_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "fxt_stats",
	.description = "starpu_fxt_stats's statistics",
	.flags = ASTRO_TRACE_FORMAT_OFF_BY_DEFAULT,
	.begin = stats_begin,
	.state = stats_state,
	.counter = stats_counter,
	.instant = stats_instant,
	.task = stats_task,
	.end = stats_end,
	.event = stats_event,
};

static void usage(FILE *out)
{
	fprintf(out, "Parse the trace a run with STARPU_FXT_TRACE=1 left (its OTF2 archive) and print statistics:\n"
		     "the span of the trace (start, end and length, in ms), the bytes copied between each pair of\n"
		     "memory nodes (source -> destination) and the number of tasks run.\n\n"
		     "Usage: %s [ options ]\n\n"
		     "Options:\n"
		     "   -i <input file>     specify the input file: the trace (prof_file_<user>_<id>), its folder or its traces.otf2\n"
		     "   -o <output file>    specify the output file (default: the standard output)\n"
		     "   -h, --help          display this help and exit\n"
		     "   -v, --version       output version information and exit\n",
		PROGNAME);
}

int main(int argc, char **argv)
{
	const char *input = NULL, *output = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return EXIT_SUCCESS;
		}
		if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
			printf(PROGNAME " (Astrolabe, StarPU %d.%d.%d API)\n", STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
			return EXIT_SUCCESS;
		}
		if ((strcmp(a, "-i") == 0 || strcmp(a, "-o") == 0) && i + 1 < argc) {
			*(a[1] == 'i' ? &input : &output) = argv[++i];
			continue;
		}
		fprintf(stderr, "%s: %s '%s': see %s --help\n", PROGNAME,
			strcmp(a, "-i") == 0 || strcmp(a, "-o") == 0 ? "no file after" : "unknown argument", a, PROGNAME);
		return EXIT_FAILURE;
	}
	if (!input) {
		fprintf(stderr, "%s: no trace given: use -i <the folder STARPU_FXT_TRACE=1 left>\n", PROGNAME);
		return EXIT_FAILURE;
	}
	stats_output = stdout;
	if (output && !(stats_output = fopen(output, "w"))) {
		fprintf(stderr, "%s: cannot write %s (%s): check the -o path\n", PROGNAME, output, strerror(errno));
		return EXIT_FAILURE;
	}
	int ret = astro_trace_format_register(&stats_format) == 0 ? trace_convert_one_format(PROGNAME, &input, 1, stats_format.name) : 1;
	if (output && fclose(stats_output) != 0 && ret == 0) {
		fprintf(stderr, "%s: writing %s failed (disk full?)\n", PROGNAME, output);
		ret = 1;
	}
	return ret;
}
