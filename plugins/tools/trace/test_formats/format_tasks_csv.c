/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A trace format plugin for the tests (test_trace.cc), and the example of
 * doc/writing-a-trace-format.md: tasks.csv, one line per task that ran, with
 * the JobId, name and dates tasks.rec gives it; and data.csv, off unless
 * `-format data_csv` asks for it. Its last line counts what each callback
 * received, so that the test sees the whole stream arrive.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/plugin.h>
#include <astrolabe/trace_format.h>

struct csv
{
	FILE *f;
	char prefix[32];     /* the archive's "<rank>_" before each job */
	unsigned long processes, locations, entered, left, counters, dependencies, instants, tasks, data;
};

static void *open_csv(const struct astro_trace_format_options *options, const char *name, const char *header)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%s%s", options->dir, *options->dir ? "/" : "", name);
	struct csv *csv = calloc(1, sizeof(*csv));
	if (!csv)
		return NULL;
	csv->f = fopen(path, "w");
	if (!csv->f) {
		int err = errno;
		free(csv);
		errno = err; /* the converter names it */
		return NULL;
	}
	fputs(header, csv->f);
	return csv;
}

static void *tasks_begin(const struct astro_trace_format_options *options)
{
	return open_csv(options, "tasks.csv", "JobId,Name,WorkerId,SubmitTime,StartTime,EndTime,Handles,DependsOn\n");
}

static void on_process(void *state, const struct astro_trace_process *p)
{
	struct csv *csv = state;
	snprintf(csv->prefix, sizeof(csv->prefix), "%s", p->prefix);
	csv->processes++;
}

static void on_location(void *state, const struct astro_trace_location *l)
{
	(void)l;
	((struct csv *)state)->locations++;
}

static void on_state(void *state, const struct astro_trace_state *s)
{
	struct csv *csv = state;
	if (s->left)
		csv->left++;
	else
		csv->entered++;
}

static void on_counter(void *state, const struct astro_trace_counter *c)
{
	(void)c;
	((struct csv *)state)->counters++;
}

static void on_dependency(void *state, const struct astro_trace_dependency *d)
{
	(void)d;
	((struct csv *)state)->dependencies++;
}

static void on_instant(void *state, const struct astro_trace_instant *i)
{
	(void)i;
	((struct csv *)state)->instants++;
}

/* Dates in ms with %f, as tasks.rec writes them. */
static void on_task(void *state, const struct astro_trace_task *t)
{
	struct csv *csv = state;
	csv->tasks++;
	if (!t->executed)
		return;
	fprintf(csv->f, "%s%" PRIu64 ",%s,%d,%f,%f,%f,%u,", csv->prefix, t->job, t->name ? t->name : "", t->worker,
		(double)t->submit_date / 1e6, (double)t->start_date / 1e6, (double)t->end_date / 1e6, t->nhandles);
	for (unsigned k = 0; k < t->ndeps; k++)
		fprintf(csv->f, "%s%s%" PRIu64, k ? " " : "", csv->prefix, t->deps[k]);
	fputc('\n', csv->f);
}

static void on_data(void *state, const struct astro_trace_data *d)
{
	((struct csv *)state)->data++;
	(void)d;
}

static int tasks_end(void *state)
{
	struct csv *csv = state;
	fprintf(csv->f, "# processes %lu locations %lu entered %lu left %lu counters %lu dependencies %lu instants %lu tasks %lu data %lu\n",
		csv->processes, csv->locations, csv->entered, csv->left, csv->counters, csv->dependencies, csv->instants, csv->tasks,
		csv->data);
	int ret = (ferror(csv->f) | (fclose(csv->f) != 0)) ? -EIO : 0;
	free(csv);
	return ret;
}

static const struct astro_trace_format tasks_csv = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "tasks_csv",
	.description = "tasks.csv: one line per task that ran (the test's)",
	.begin = tasks_begin,
	.process = on_process,
	.location = on_location,
	.state = on_state,
	.counter = on_counter,
	.dependency = on_dependency,
	.instant = on_instant,
	.task = on_task,
	.data = on_data,
	.end = tasks_end,
};

static void *data_begin(const struct astro_trace_format_options *options)
{
	return open_csv(options, "data.csv", "Handle,Name,Size\n");
}

static void data_line(void *state, const struct astro_trace_data *d)
{
	fprintf(((struct csv *)state)->f, "%" PRIx64 ",%s,%" PRIu64 "\n", d->handle, d->name ? d->name : "", d->size);
}

static int data_end(void *state)
{
	struct csv *csv = state;
	int ret = (ferror(csv->f) | (fclose(csv->f) != 0)) ? -EIO : 0;
	free(csv);
	return ret;
}

static const struct astro_trace_format data_csv = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "data_csv",
	.description = "data.csv: one line per data handle (the test's)",
	.flags = ASTRO_TRACE_FORMAT_OFF_BY_DEFAULT,
	.begin = data_begin,
	.data = data_line,
	.end = data_end,
};

static int init(void)
{
	int ret = astro_trace_format_register(&tasks_csv);
	return ret ? ret : astro_trace_format_register(&data_csv);
}

ASTRO_PLUGIN_DEFINE(format_tasks_csv, ASTRO_PLUGIN_TRACE_FORMAT, "tasks and data as CSV (a test of the trace format API)", init, NULL);
