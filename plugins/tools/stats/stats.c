/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stats tool (STARPU_PROF_TOOL=stats): counts the profiling-tool events
 * per type and per worker, sums the execution time of each codelet, and
 * prints both tables on stderr at the terminate event.
 *
 * Each worker updates only its own row and its own codelet table, so the
 * execution path takes no lock; the application's threads share one row,
 * updated with atomics. The tables are read at terminate, once the workers
 * have stopped.
 */
#include <astrolabe/prof_tool.h>
#include <stdio.h>
#include <string.h>

#define NEVENTS (starpu_prof_tool_event_user_end + 1)
#define APP_ROW STARPU_NMAXWORKERS
/* Distinct codelets one worker tracks; later ones are counted as "(other codelets)". */
#define MAX_CODELETS 64

static const char *const event_names[NEVENTS] = {
	"none", "init", "terminate", "init_begin", "init_end",
	"driver_init", "driver_deinit", "driver_init_start", "driver_init_end",
	"start_cpu_exec", "end_cpu_exec", "start_gpu_exec", "end_gpu_exec",
	"start_transfer", "end_transfer", "user_start", "user_end",
};

/* Rows in the order of a run's life, not of the enum. */
static const enum starpu_prof_tool_event row_order[] = {
	starpu_prof_tool_event_init_begin, starpu_prof_tool_event_init,
	starpu_prof_tool_event_driver_init, starpu_prof_tool_event_driver_init_start, starpu_prof_tool_event_driver_init_end,
	starpu_prof_tool_event_init_end,
	starpu_prof_tool_event_start_cpu_exec, starpu_prof_tool_event_end_cpu_exec,
	starpu_prof_tool_event_start_gpu_exec, starpu_prof_tool_event_end_gpu_exec,
	starpu_prof_tool_event_start_transfer, starpu_prof_tool_event_end_transfer,
	starpu_prof_tool_event_user_start, starpu_prof_tool_event_user_end,
	starpu_prof_tool_event_driver_deinit, starpu_prof_tool_event_terminate,
};

struct codelet_stat
{
	const void *key;                     /* the codelet */
	const char *name;
	unsigned long runs;
	double total_us;
};

struct worker_stats
{
	unsigned long events[NEVENTS];
	double start_us;                     /* of the implementation running now */
	unsigned last;                       /* index of the last codelet seen: runs of one codelet come in series */
	unsigned ncodelets;
	struct codelet_stat codelets[MAX_CODELETS];
	struct codelet_stat other;
} __attribute__((aligned(64)));

static struct worker_stats rows[STARPU_NMAXWORKERS + 1];

static struct codelet_stat *codelet_of(struct worker_stats *w, const struct starpu_task *task, const char *name)
{
	const void *key = task ? (const void *)task->cl : NULL;
	if (w->last < w->ncodelets && w->codelets[w->last].key == key)
		return &w->codelets[w->last];
	for (unsigned i = 0; i < w->ncodelets; i++) {
		if (w->codelets[i].key == key) {
			w->last = i;
			return &w->codelets[i];
		}
	}
	if (w->ncodelets == MAX_CODELETS) {
		w->other.name = "(other codelets)";
		return &w->other;
	}
	struct codelet_stat *c = &w->codelets[w->ncodelets];
	c->key = key;
	c->name = name ? name : "(unnamed)";
	w->last = w->ncodelets++;
	return c;
}

static void count_event(struct starpu_prof_tool_info *info, union starpu_prof_tool_event_info *event,
			struct starpu_prof_tool_api_info *api)
{
	(void)api;
	enum starpu_prof_tool_event type = info->event_type;
	if (type == starpu_prof_tool_event_init_begin)
		memset(rows, 0, sizeof(rows));
	if (info->worker_id < 0 || info->worker_id >= STARPU_NMAXWORKERS) {
		__atomic_add_fetch(&rows[APP_ROW].events[type], 1, __ATOMIC_RELAXED);
		return;
	}
	struct worker_stats *w = &rows[info->worker_id];
	/* Relaxed atomics only so the app thread may read a live count; no other thread writes this row. */
	__atomic_store_n(&w->events[type], w->events[type] + 1, __ATOMIC_RELAXED);
	const struct astro_prof_tool_event_ext *x = &event->astro;
	if (type == starpu_prof_tool_event_start_cpu_exec || type == starpu_prof_tool_event_start_gpu_exec) {
		w->start_us = x->time_us;
	} else if (type == starpu_prof_tool_event_end_cpu_exec || type == starpu_prof_tool_event_end_gpu_exec) {
		struct codelet_stat *c = codelet_of(w, x->task, x->codelet_name ? x->codelet_name : info->task_name);
		c->runs++;
		c->total_us += x->time_us - w->start_us;
	}
}

static void add_codelet(struct codelet_stat *merged, unsigned *n, const struct codelet_stat *c)
{
	for (unsigned i = 0; i < *n; i++) {
		if (merged[i].key == c->key && strcmp(merged[i].name, c->name) == 0) {
			merged[i].runs += c->runs;
			merged[i].total_us += c->total_us;
			return;
		}
	}
	merged[(*n)++] = *c;
}

static void print_summary(void)
{
	int nworkers = 0;
	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
		for (int e = 0; e < NEVENTS; e++)
			if (rows[i].events[e])
				nworkers = i + 1;

	fprintf(stderr, "[stats] %-18s %9s", "event", "total");
	for (int i = 0; i < nworkers; i++)
		fprintf(stderr, " %8s%-3d", "worker ", i);
	fprintf(stderr, " %9s\n", "app");
	for (unsigned k = 0; k < sizeof(row_order) / sizeof(row_order[0]); k++) {
		enum starpu_prof_tool_event e = row_order[k];
		unsigned long total = rows[APP_ROW].events[e];
		for (int i = 0; i < nworkers; i++)
			total += rows[i].events[e];
		if (!total)
			continue;
		fprintf(stderr, "[stats] %-18s %9lu", event_names[e], total);
		for (int i = 0; i < nworkers; i++)
			fprintf(stderr, " %11lu", rows[i].events[e]);
		fprintf(stderr, " %9lu\n", rows[APP_ROW].events[e]);
	}

	static struct codelet_stat merged[STARPU_NMAXWORKERS * (MAX_CODELETS + 1)];
	unsigned n = 0;
	for (int i = 0; i < nworkers; i++) {
		for (unsigned c = 0; c < rows[i].ncodelets; c++)
			add_codelet(merged, &n, &rows[i].codelets[c]);
		if (rows[i].other.runs)
			add_codelet(merged, &n, &rows[i].other);
	}
	if (!n)
		return;
	fprintf(stderr, "[stats] %-24s %9s %14s %12s\n", "codelet", "runs", "total (us)", "mean (us)");
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, "[stats] %-24s %9lu %14.3f %12.3f\n", merged[i].name, merged[i].runs, merged[i].total_us,
			merged[i].total_us / (double)merged[i].runs);
}

static void on_terminate(struct starpu_prof_tool_info *info, union starpu_prof_tool_event_info *event,
			 struct starpu_prof_tool_api_info *api)
{
	count_event(info, event, api);
	print_summary();
}

static void stats_register(starpu_prof_tool_entry_register_func reg, starpu_prof_tool_entry_register_func unreg)
{
	(void)unreg;
	for (int e = starpu_prof_tool_event_init; e <= starpu_prof_tool_event_user_end; e++)
		reg((enum starpu_prof_tool_event)e, e == starpu_prof_tool_event_terminate ? on_terminate : count_event,
		    starpu_prof_tool_command_reg);
}

static const struct astro_prof_tool stats_tool = {
	.name = "stats",
	.description = "counts events per type and worker, sums execution time per codelet",
	.library_register = stats_register,
};

static int init(void)
{
	return astro_prof_tool_provide(&stats_tool);
}

ASTRO_PLUGIN_DEFINE(tool_stats, ASTRO_PLUGIN_TOOL, "event counts and time per codelet, printed at shutdown (STARPU_PROF_TOOL=stats)", init, NULL);
