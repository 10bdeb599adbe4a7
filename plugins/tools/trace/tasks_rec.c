/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tasks.rec: StarPU's record of each task (GNU recutils, one record per
 * task: name, job id, dependencies, worker, dates, footprint, handles...),
 * written through the trace format API (astrolabe/trace_format.h) when the
 * converter hands a task over: at its end, or at the end of its archive for
 * one that never ran. Built into the converter.
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include "builtin_formats.h"
#include "format_common.h"

struct tasks_rec
{
	FILE *f;
	char *prefix; /* the archive's "<rank>_" before job ids ("" for one archive) */
	int mpi_rank; /* MPIRank: the rank when several archives are converted together, else -1 */
};

static void *tasks_rec_begin(const struct astro_trace_format_options *options)
{
	FILE *f = trace_format_open(options, "tasks.rec");
	if (!f)
		return NULL;
	struct tasks_rec *r = g_new0(struct tasks_rec, 1);
	r->f = f;
	r->prefix = g_strdup("");
	r->mpi_rank = -1;
	return r;
}

static void tasks_rec_process(void *state, const struct astro_trace_process *p)
{
	struct tasks_rec *r = state;
	g_free(r->prefix);
	r->prefix = g_strdup(p->prefix);
	r->mpi_rank = p->multi ? p->rank : -1;
}

/* StarPU's letters of an access mode: R, W, S(cratch), X (redux), C(ommute). */
static const char *mode_string(uint32_t mode, char buf[8])
{
	size_t n = 0;
	if (mode & 1) /* STARPU_R */
		buf[n++] = 'R';
	if (mode & 2) /* STARPU_W */
		buf[n++] = 'W';
	if (mode & 4) /* STARPU_SCRATCH */
		buf[n++] = 'S';
	if (mode & 8) /* STARPU_REDUX */
		buf[n++] = 'X';
	if (mode & 16) /* STARPU_COMMUTE */
		buf[n++] = 'C';
	buf[n] = '\0';
	return buf;
}

static void tasks_rec_task(void *state, const struct astro_trace_task *t)
{
	struct tasks_rec *r = state;
	FILE *f = r->f;
	if (t->name)
		fprintf(f, "Name: %s\n", t->name);
	if (t->model)
		fprintf(f, "Model: %s\n", t->model);
	fprintf(f, "JobId: %s%" PRIu64 "\n", r->prefix, t->job);
	if (t->submitted)
		fprintf(f, "SubmitOrder: %" PRIu64 "\n", t->job);
	fprintf(f, "Priority: %d\n", t->priority);
	if (t->ndeps) {
		fputs("DependsOn:", f);
		for (unsigned k = 0; k < t->ndeps; k++)
			fprintf(f, " %s%" PRIu64, r->prefix, t->deps[k]);
		fputs("\nDepLabels:", f);
		for (unsigned k = 0; k < t->ndeps; k++)
			fputs(" task", f);
		fputc('\n', f);
	}
	fprintf(f, "Tag: %" PRIx64 "\n", t->tag);
	if (t->executed) {
		fprintf(f, "WorkerId: %d\n", t->worker);
		fprintf(f, "MemoryNode: 0\n");
	}
	if (t->submitted)
		fprintf(f, "SubmitTime: %f\n", (double)t->submit_date / 1e6);
	if (t->executed) {
		fprintf(f, "StartTime: %f\n", (double)t->start_date / 1e6);
		fprintf(f, "EndTime: %f\n", (double)t->end_date / 1e6);
	}
	fprintf(f, "Footprint: %x\n", t->footprint);
	if (t->flops >= 1e3)
		fprintf(f, "GFlop: %f\n", (double)(uint64_t)(t->flops / 1e3) / 1e6);
	if (t->iteration >= 0) {
		fprintf(f, "Iteration: %" PRId64, t->iteration);
		if (t->subiteration >= 0)
			fprintf(f, " %" PRId64, t->subiteration);
		fputc('\n', f);
	}
	if (t->executed) {
		/* Parameters: the descriptions of its first 8 handles, "nodata" when it has none. */
		fputs("Parameters: ", f);
		if (!t->nhandles)
			fputs("nodata", f);
		for (unsigned k = 0; k < t->nhandles && k < 8; k++) {
			const char *desc = t->descriptions && t->descriptions[k] && *t->descriptions[k] ? t->descriptions[k] : "0";
			fprintf(f, "%s%s", k ? " " : "", desc);
		}
		fputc('\n', f);
		if (t->nhandles) {
			char buf[8];
			fputs("Handles:", f);
			for (unsigned k = 0; k < t->nhandles; k++)
				fprintf(f, " %" PRIx64, t->handles[k].handle);
			fputs("\nModes:", f);
			for (unsigned k = 0; k < t->nhandles; k++)
				fprintf(f, " %s", mode_string(t->handles[k].mode, buf));
			fputs("\nSizes:", f);
			for (unsigned k = 0; k < t->nhandles; k++)
				fprintf(f, " %" PRIu64, t->handles[k].size);
			/* Each handle's NUMA nodes, separated by commas; -1 when not recorded (TASK_VERBOSE_EXTRA) or none. */
			fputs("\nNumaNodes:", f);
			for (unsigned k = 0; k < t->nhandles; k++) {
				int64_t bits = t->numa_nodes ? t->numa_nodes[k] : -1;
				if (bits <= 0) {
					fputs(" -1", f);
					continue;
				}
				const char *sep = " ";
				for (int n = 0; n < 63; n++)
					if (bits & (INT64_C(1) << n)) {
						fprintf(f, "%s%d", sep, n);
						sep = ",";
					}
			}
			fputc('\n', f);
		}
	}
	fprintf(f, "MPIRank: %d\n\n", r->mpi_rank);
}

static int tasks_rec_end(void *state)
{
	struct tasks_rec *r = state;
	int ret = trace_format_close(r->f);
	g_free(r->prefix);
	g_free(r);
	return ret;
}

const struct astro_trace_format trace_tasks_rec_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "tasks_rec",
	.description = "tasks.rec: StarPU's record of each task (recutils)",
	.begin = tasks_rec_begin,
	.process = tasks_rec_process,
	.task = tasks_rec_task,
	.end = tasks_rec_end,
};
