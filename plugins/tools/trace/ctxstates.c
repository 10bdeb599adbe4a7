/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * paje.trace's scheduling-context states, as StarPU 1.4 writes them (the
 * project's notes on traces, 1.5): a state type Ctx<k> ("InCtx<k>") on the
 * workers for each context k other than the default one (STARPU_NMAX_SCHED_CTXS
 * - 1 of them), declared with the values of the worker states and, for each
 * task name, one value <name>_<k> per context, in a fixed palette (or the
 * task's colour with -use-task-color). A task that runs in context k != 0 sets
 * its worker's Ctx<k> state to its name, with event 10 then 21 at its start.
 * Like StarPU, nothing else sets a Ctx state: it shows the last task the worker
 * ran in that context until the next one (or the end of the trace).
 */
#include <glib.h>
#include <inttypes.h>
#include <string.h>
#include "format_common.h"
#include "ctxstates.h"

void ctxstates_types(FILE *f)
{
	for (unsigned k = 1; k <= CTXSTATES_N; k++)
		fprintf(f, "3\tCtx%u\tW\t\"InCtx%u\"\n", k, k);
}

void ctxstates_state_values(FILE *f, const char *alias, const char *name, const char *colour)
{
	static const char *const not_in_ctx[] = { "Bu", "Su", "Th" };
	for (size_t i = 0; i < sizeof(not_in_ctx) / sizeof(not_in_ctx[0]); i++)
		if (strcmp(alias, not_in_ctx[i]) == 0)
			return;
	for (unsigned k = 1; k <= CTXSTATES_N; k++)
		fprintf(f, "6\t%s\tCtx%u\t\"%s\"\t\"%s\"\n", alias, k, name, colour);
}

void ctxstates_task_values(FILE *f, const char *name, const double rgb[3], bool use_task_color)
{
	/* StarPU's colours of contexts 1..10, in its own spelling. */
	static const char *const palette[] = { "1.0 0.39 1.0", ".0 1.0 .0", "0.87 0.87 .0", ".0 0.95 1.0", ".0 .0 .0",
					       ".0 .0 0.5", "0.41 0.41 0.41", "1.0 .0 1.0", ".0 .0 1.0", "0.6 0.80 0.19" };
	for (unsigned k = 1; k <= CTXSTATES_N; k++) {
		char *alias = g_strdup_printf("%s_%u", name, k);
		fputs("6\t", f);
		paje_word(f, alias);
		fprintf(f, "\tCtx%u\t", k);
		paje_word(f, name);
		if (use_task_color)
			fprintf(f, "\t\"%f %f %f\"\n", rgb[0], rgb[1], rgb[2]);
		else
			fprintf(f, "\t\"%s\"\n", palette[(k - 1) % (sizeof(palette) / sizeof(palette[0]))]);
		g_free(alias);
	}
}

void ctxstates_task_begin(FILE *f, double date_ms, const char *alias, unsigned ctx, const char *name, uint64_t size,
			  const char *params, uint32_t footprint, uint64_t tag, const char *job)
{
	fprintf(f, "10\t%.9f\t%s\tCtx%u\t", date_ms, alias, ctx);
	paje_word(f, name);
	fprintf(f, "\n21\t%.9f\t%s\tCtx%u\t", date_ms, alias, ctx);
	paje_word(f, name);
	fprintf(f, "\t%" PRIu64 "\t", size);
	paje_word(f, params);
	fprintf(f, "\t%08x\t%016" PRIx64 "\t%s\t%s\n", footprint, tag, job, job);
}
