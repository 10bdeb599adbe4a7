/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the converter keeps while it reads an archive (converter.h): the
 * tasks submitted and not ended (their records are written when they end),
 * the handles registered (written when unregistered), the last ENDED_KEEP
 * tasks that ended (for the flows of dependencies declared after their
 * end), the archive's definitions; and what is left at the archive's end.
 */
#include <string.h>
#include "converter.h"

/* The task of job, made at its first mention. */
struct task *convert_task(struct converter *c, uint64_t job)
{
	struct task *t = g_hash_table_lookup(c->tasks, &job);
	if (t)
		return t;
	t = g_new0(struct task, 1);
	t->job = job;
	t->worker = -1;
	t->iteration = t->subiteration = -1;
	g_hash_table_insert(c->tasks, &t->job, t);
	return t;
}

static void free_task(gpointer p)
{
	struct task *t = p;
	if (t->handles)
		g_array_free(t->handles, TRUE);
	if (t->numa_nodes)
		g_array_free(t->numa_nodes, TRUE);
	if (t->deps)
		g_array_free(t->deps, TRUE);
	if (t->succs)
		g_array_free(t->succs, TRUE);
	g_free(t);
}

/* Task t ended: the flows to its successors that have not started start here; its records are written and it is forgotten. */
void convert_task_done(struct converter *c, struct task *t)
{
	for (guint i = 0; i < LEN(t->succs); i++) {
		uint64_t job = g_array_index(t->succs, uint64_t, i);
		struct task *succ = g_hash_table_lookup(c->tasks, &job);
		if (!succ || succ->executed)
			continue;
		for (guint k = 0; k < LEN(succ->deps); k++) {
			struct dep *d = &g_array_index(succ->deps, struct dep, k);
			if (d->pred == t->job && !d->flow) {
				d->flow = ++c->nflows;
				convert_emit_dependency(c, 1, t->job, job, d->kind, d->flow, t->end_ts, t->start_location);
				break;
			}
		}
	}
	convert_emit_task(c, t);
	if (t->executed) {
		struct ended *e = &c->ended_ring[c->ended_next];
		if (g_hash_table_lookup(c->ended, &e->job) == e) /* the oldest one leaves */
			g_hash_table_remove(c->ended, &e->job);
		*e = (struct ended){ t->job, t->end_ts, t->start_location };
		g_hash_table_replace(c->ended, &e->job, e);
		c->ended_next = (c->ended_next + 1) % ENDED_KEEP;
	}
	g_hash_table_remove(c->tasks, &t->job); /* frees t */
}

/* The record of handle, unregistered: written, forgotten. */
void convert_data_done(struct converter *c, uint64_t handle)
{
	struct data *d = g_hash_table_lookup(c->data, &handle);
	if (!d)
		return;
	convert_emit_data(c, d);
	g_hash_table_remove(c->data, &handle); /* frees d */
}

struct data *convert_data_new(struct converter *c, uint64_t handle)
{
	convert_data_done(c, handle); /* registered again without its unregistration in the trace */
	struct data *d = g_new0(struct data, 1);
	d->seq = c->ndata++;
	d->handle = handle;
	g_hash_table_insert(c->data, &d->handle, d);
	return d;
}

/* The values of a table, in a new array. */
static GPtrArray *values_of(GHashTable *table)
{
	GPtrArray *values = g_ptr_array_sized_new(g_hash_table_size(table));
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, table);
	while (g_hash_table_iter_next(&it, &k, &v))
		g_ptr_array_add(values, v);
	return values;
}

static gint by_job(gconstpointer a, gconstpointer b)
{
	const struct task *x = *(struct task *const *)a, *y = *(struct task *const *)b;
	return (x->job > y->job) - (x->job < y->job);
}

static gint by_seq(gconstpointer a, gconstpointer b)
{
	const struct data *x = *(struct data *const *)a, *y = *(struct data *const *)b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The end of an archive: the records of the tasks that did not end (by job) and of the handles still registered (by registration). */
void convert_write_remaining(struct converter *c)
{
	GPtrArray *tasks = values_of(c->tasks);
	g_ptr_array_sort(tasks, by_job);
	for (guint i = 0; i < tasks->len; i++) {
		const struct task *t = g_ptr_array_index(tasks, i);
		if (!t->submitted && !t->executed)
			continue; /* only named as a predecessor: submitted before the trace started, or ended before that */
		convert_emit_task(c, t);
	}
	g_ptr_array_free(tasks, TRUE);
	GPtrArray *data = values_of(c->data);
	g_ptr_array_sort(data, by_seq);
	for (guint i = 0; i < data->len; i++)
		convert_emit_data(c, g_ptr_array_index(data, i));
	g_ptr_array_free(data, TRUE);
}

static gint by_id(gconstpointer a, gconstpointer b)
{
	const struct location *x = *(struct location *const *)a, *y = *(struct location *const *)b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The locations by id: workers first, in worker order, then application threads. */
GPtrArray *convert_sorted_locations(struct converter *c)
{
	GPtrArray *locs = g_ptr_array_new();
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, c->locations);
	while (g_hash_table_iter_next(&it, &k, &v))
		g_ptr_array_add(locs, v);
	g_ptr_array_sort(locs, by_id);
	return locs;
}

static void free_data(gpointer p)
{
	struct data *d = p;
	g_free(d->description);
	g_free(d->name);
	g_free(d->coordinates);
	g_free(d);
}

static void free_region(gpointer p)
{
	struct region *r = p;
	g_free(r->name);
	g_free(r);
}

static void free_location(gpointer p)
{
	struct location *l = p;
	g_free(l->name);
	g_free(l);
}

void convert_tables_new(struct converter *c)
{
	memset(c->param_map, -1, sizeof(c->param_map));
	memset(c->attr_map, -1, sizeof(c->attr_map));
	c->strings = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	c->regions = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_region);
	c->locations = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, free_location);
	c->tasks = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, free_task);
	c->data = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, free_data);
	c->metric_members = g_hash_table_new(g_direct_hash, g_direct_equal);
	c->value_names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	c->ended = g_hash_table_new(g_int64_hash, g_int64_equal);
	c->runtime_jobs = g_hash_table_new(g_direct_hash, g_direct_equal);
	c->ended_ring = g_new0(struct ended, ENDED_KEEP);
	c->ended_next = 0;
	c->metric_classes = g_hash_table_new(g_direct_hash, g_direct_equal);
	c->ndata = 0;
	c->nsubmitted = c->nready = 0;
	memset(c->node_used, 0, sizeof(c->node_used));
	gflops_init(&c->gflops, !c->opt.no_smooth);
	c->incomplete = false;
	c->mpi = false;
	c->last_ts = 0;
}

void convert_tables_free(struct converter *c)
{
	gflops_fini(&c->gflops);
	g_hash_table_destroy(c->tasks);
	g_hash_table_destroy(c->data);
	g_hash_table_destroy(c->metric_members);
	g_hash_table_destroy(c->value_names);
	g_hash_table_destroy(c->ended);
	g_hash_table_destroy(c->runtime_jobs);
	g_free(c->ended_ring);
	g_hash_table_destroy(c->metric_classes);
	g_hash_table_destroy(c->locations);
	g_hash_table_destroy(c->regions);
	g_hash_table_destroy(c->strings);
}
