/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The converter's stream to the formats on (formats.h): the decoded tasks,
 * states, counters, dependencies, instants, handles and other events as the
 * formats have them (astrolabe/trace_format.h: dates in ns from the origin,
 * the public structs).
 */
#include <string.h>
#include "converter.h"

struct astro_trace_location convert_public_location(const struct location *l)
{
	return (struct astro_trace_location){ .id = l->id, .name = l->name, .workerid = l->worker ? l->workerid : -1, .tid = l->tid,
					      .bindid = l->bindid };
}

/* The converter's handle_ref is the formats' astro_trace_handle. */
G_STATIC_ASSERT(sizeof(struct handle_ref) == sizeof(struct astro_trace_handle) &&
		G_STRUCT_OFFSET(struct handle_ref, mode) == G_STRUCT_OFFSET(struct astro_trace_handle, mode) &&
		G_STRUCT_OFFSET(struct handle_ref, size) == G_STRUCT_OFFSET(struct astro_trace_handle, size));

/* Task t as the formats have it, without its dependencies. */
static struct astro_trace_task public_task(const struct converter *c, const struct task *t)
{
	return (struct astro_trace_task){
		.job = t->job, .name = t->name, .model = t->model, .has_tag = t->has_tag, .tag = t->tag, .priority = t->priority,
		.color = t->color, .footprint = t->footprint, .flops = t->flops, .size = t->size, .submitted = t->submitted,
		.executed = t->executed, .submit_date = convert_since_origin(c, t->submit_ts), .start_date = convert_since_origin(c, t->start_ts),
		.end_date = convert_since_origin(c, t->end_ts), .worker = t->worker, .location = t->start_location, .iteration = t->iteration,
		.subiteration = t->subiteration, .nhandles = LEN(t->handles),
		.handles = t->handles ? (const struct astro_trace_handle *)(const void *)t->handles->data : NULL,
		.sched_ctx = t->sched_ctx,
		.numa_nodes = t->numa_nodes && LEN(t->numa_nodes) == LEN(t->handles) ? (const int64_t *)(const void *)t->numa_nodes->data : NULL,
	};
}

/* The descriptions and coordinates of a task's handles, as their records have them now (on the stack for most tasks). */
struct handles_info
{
	const char **descriptions, **coordinates;
	const char *here[32];
};

static void handles_info_fill(const struct converter *c, const struct task *t, struct handles_info *h)
{
	guint n = LEN(t->handles);
	h->descriptions = 2 * n <= G_N_ELEMENTS(h->here) ? h->here : g_new(const char *, 2 * n);
	h->coordinates = h->descriptions + n;
	for (guint k = 0; k < n; k++) {
		const struct data *d = g_hash_table_lookup(c->data, &g_array_index(t->handles, struct handle_ref, k).handle);
		h->descriptions[k] = d ? d->description : NULL;
		h->coordinates[k] = d ? d->coordinates : NULL;
	}
}

static void handles_info_free(struct handles_info *h)
{
	if (h->descriptions != h->here)
		g_free(h->descriptions);
}

void convert_emit_task(struct converter *c, const struct task *t)
{
	if (!trace_formats_want_tasks(&c->opt.formats))
		return;
	struct astro_trace_task e = public_task(c, t);
	/* Its dependencies and its handles' descriptions, on the stack for most tasks. */
	uint64_t deps_here[16];
	uint64_t *deps = LEN(t->deps) <= G_N_ELEMENTS(deps_here) ? deps_here : g_new(uint64_t, LEN(t->deps));
	for (guint k = 0; k < LEN(t->deps); k++)
		deps[k] = g_array_index(t->deps, struct dep, k).pred;
	struct handles_info info;
	handles_info_fill(c, t, &info);
	e.ndeps = LEN(t->deps);
	e.deps = deps;
	e.descriptions = info.descriptions;
	e.coordinates = info.coordinates;
	trace_formats_task(&c->opt.formats, &e);
	if (deps != deps_here)
		g_free(deps);
	handles_info_free(&info);
}

void convert_emit_state(struct converter *c, const struct location *l, const struct region *r, uint64_t begin, bool left, uint64_t end,
			const struct task *t)
{
	struct astro_trace_location where = convert_public_location(l);
	struct astro_trace_task task;
	struct handles_info info;
	if (t) {
		task = public_task(c, t);
		handles_info_fill(c, t, &info);
		task.descriptions = info.descriptions;
		task.coordinates = info.coordinates;
	}
	struct astro_trace_state e = { .location = &where, .name = r->name, .is_task = r->task, .is_user = r->user, .left = left,
				       .begin = convert_since_origin(c, begin), .end = left ? convert_since_origin(c, end) : 0, .task = t ? &task : NULL };
	trace_formats_state(&c->opt.formats, &e);
	if (t)
		handles_info_free(&info);
}

void convert_emit_counter(struct converter *c, enum astro_trace_counter_kind kind, const char *name, uint64_t ts, double value)
{
	struct astro_trace_counter e = { .kind = kind, .name = name, .date = convert_since_origin(c, ts), .value = value };
	trace_formats_counter(&c->opt.formats, &e);
}

void convert_emit_dependency(struct converter *c, int phase, uint64_t pred, uint64_t succ, int kind, unsigned flow, uint64_t ts,
			     uint64_t location)
{
	struct astro_trace_dependency e = { .phase = phase, .pred = pred, .succ = succ, .kind = kind, .flow = flow,
					    .date = convert_since_origin(c, ts), .location = location };
	trace_formats_dependency(&c->opt.formats, &e);
}

void convert_emit_instant(struct converter *c, const struct location *l, int kind, const char *name, uint64_t value, uint64_t ts)
{
	struct astro_trace_location where = convert_public_location(l);
	struct astro_trace_instant e = { .kind = kind, .name = name, .value = value, .date = convert_since_origin(c, ts), .location = &where };
	trace_formats_instant(&c->opt.formats, &e);
}

void convert_emit_data(struct converter *c, const struct data *d)
{
	struct astro_trace_data e = { .handle = d->handle, .home_node = d->home, .size = d->size, .description = d->description,
				      .name = d->name, .coordinates = d->coordinates };
	trace_formats_data(&c->opt.formats, &e);
}

void convert_emit_event(struct converter *c, const struct location *l, enum astro_trace_event_kind kind, uint64_t ts,
			struct astro_trace_event *e)
{
	struct astro_trace_location where = convert_public_location(l);
	e->kind = kind;
	e->date = convert_since_origin(c, ts);
	e->location = &where;
	trace_formats_event(&c->opt.formats, e);
}
