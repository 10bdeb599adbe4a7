/*
 * starpu_fxt_tool: converts the recorder's OTF2 archive into StarPU's trace
 * files, with StarPU's field names, order and number formats (see
 * ../shared/notes/traces.md in the project's notes). It writes
 * number_events.data (-number-events) itself, and hands the decoded stream
 * to the trace formats (formats.c, astrolabe/trace_format.h), which write
 * the others: StarPU's paje.trace (paje.c), tasks.rec (tasks_rec.c),
 * data.rec (data_rec.c), distrib.data (distrib.c), trace.rec (trace_rec.c),
 * dag.dot (dag.c), sched_tasks.rec (sched_tasks_rec.c), papi.rec when the
 * run counted PAPI events (papi_rec.c), comms.rec (comms_rec.c),
 * activity.data (activity.c), trace.html (trace_html.c), the
 * Chrome/Perfetto trace.json (json.c), and the format plugins' outputs.
 *
 * OTF2's global reader hands the events over in time order, merged across
 * locations, so every file is written as the events come: the time-ordered
 * ones (the formats' states, counters, instants and events)
 * event by event, dag.dot's edges when a dependency is declared, a task's
 * tasks.rec record, dag.dot node and flow starts when it ends (its flow ends
 * when its successors start), a handle's data.rec record when it is
 * unregistered, the end of each archive (the formats' ARCHIVE_END event).
 * What stays in memory is what is still to come: the tasks submitted and
 * not ended yet, the handles registered, the dependencies between live
 * tasks; and the StarPU-MPI messages (a send meets its receive only once
 * every archive was read: the formats' message, comms.rec, and paje.trace's
 * links, at the end).
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <otf2/otf2.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "builtin_formats.h"
#include "convert.h"
#include "formats.h"
#include "gflops.h"
#include "number_events.h"
#include "schema.h"

#define TOOL "starpu_fxt_tool"
/* Tasks that ended and are still remembered for the flows of dependencies declared after their end (a successor
 * submitted while its predecessor's data is released): the last ENDED_KEEP of them. */
#define ENDED_KEEP 4096

struct options
{
	bool colors, no_events, no_counter, no_bus, no_flops, no_smooth, label_deps, number_events;
	bool memory_states, no_acquire, internal; /* StarPU's -memory-states, -no-acquire, -internal */
	bool use_task_color;   /* -use-task-color: the Ctx values in the task's colour (ctxstates.c) */
	const char *paje, *dir;
	GPtrArray *inputs;
	struct trace_formats formats; /* -formats, -no-format, -format: trace.json and the plugins' (formats.c) */
};

struct handle_ref
{
	uint64_t handle;
	uint32_t mode;
	uint64_t size;
};

struct dep
{
	uint64_t pred;
	uint8_t kind;
	unsigned flow;       /* the formats' flow the predecessor started at its end (0: none) */
};

/* A StarPU-MPI message seen by one side: for the formats' messages (comms.rec, paje.trace's links), where both sides meet. */
struct message
{
	int self, peer;          /* the ranks of the archive and of the other side */
	uint64_t tag, handle, size;
	uint64_t date;           /* ns from the origin, on the common time base */
	const char *name;        /* the handle's name (starpu_data_set_name; in message_names), NULL when none */
};

struct task
{
	uint64_t job;
	const char *name, *model; /* in the archive's strings or regions: not copied per task */
	uint64_t tag;
	bool has_tag, submitted, executed;
	int32_t priority;
	uint32_t color, footprint;
	double flops;
	uint64_t size;
	uint64_t submit_ts, start_ts, end_ts;
	int worker;
	uint64_t start_location;
	int64_t iteration, subiteration; /* -1: none */
	unsigned sched_ctx;  /* the scheduling context it ran in (0: the default one, or unknown) */
	GArray *handles;  /* struct handle_ref; NULL until the first (most tasks of a long trace have none of either) */
	GArray *deps;     /* struct dep; NULL until the first */
	GArray *succs;    /* uint64_t: the jobs declared to wait for this one while it ran or waited; NULL until the first */
};

/* What a flow needs of a task that ended (its record is written and forgotten). */
struct ended
{
	uint64_t job, end_ts, location;
};

struct data
{
	uint64_t seq;     /* registration order, for the handles still registered at the end */
	uint64_t handle;
	int32_t home;
	uint64_t size;
	char *description, *name, *coordinates;
};

/* What one location (worker or application thread) is doing: its nested regions, the task it runs. */
struct location
{
	uint64_t id;
	char *name;
	bool worker;
	int workerid;
	long tid;              /* its OS thread id (0: older archive, unknown) */
	int bindid;            /* a worker's logical CPU (-1: unknown) */
	unsigned depth;
	uint32_t stack[32];
	uint64_t enter_ts[32];
	uint64_t task_job;     /* the task running, for its Leave */
	/* schema.h's shortcuts: the last pop here, the name and model of the last submit here */
	uint64_t last_pop;
	bool popped, submitted;
	const char *prev_name, *prev_model;
	bool prev_has_tag;
	uint64_t prev_tag;     /* the Tag of the last submit here */
	uint64_t prev_job;     /* the job of the last submit here, whose tag a task_tag event gives */
	bool task_pending;     /* its state's enter waits for its "handle" events (same date) */
	const struct region *task_region; /* the region of that task */
	uint64_t task_ts;
	struct gflops_worker gf; /* its GFlop/s variable (gflops.h) */
};

struct converter
{
	struct options opt;
	const char *input;
	/* definitions, by the archive's ids */
	GHashTable *strings;     /* id -> char* */
	GHashTable *regions;     /* id -> struct region */
	GHashTable *locations;   /* id -> struct location */
	int param_map[256], attr_map[256];
	uint64_t origin;
	bool incomplete;
	/* tables */
	GHashTable *tasks;       /* job -> struct task, until its record is written (it ended) */
	GHashTable *data;        /* handle -> struct data, until its record is written (unregistered) */
	GHashTable *ended;       /* job -> its struct ended in ended_ring */
	GHashTable *runtime_jobs; /* job of the runtime's own (runtime_job) -> 1 + 1 for an acquisition: hidden from dag.dot or not */
	struct ended *ended_ring;
	unsigned ended_next;
	uint64_t ndata;
	GHashTable *metric_members; /* the archive's metric member -> its name */
	GHashTable *metric_classes; /* the archive's metric class -> its first member + 1 */
	long nsubmitted, nready;
	uint64_t node_used[64];  /* bytes allocated on each memory node */
	struct gflops gflops;    /* the archive's GFlop/s sum (gft) */
	uint64_t last_ts;
	unsigned nflows;
	bool failed;           /* a corrupt archive was reported: stop reading */
	/* Several processes' archives: each gets its rank's prefix on containers and job ids, one time base. */
	bool multi;
	bool mpi;                /* this archive is a StarPU-MPI process's (TRACE_MPI_MARK): it has an MPI communication container */
	int rank;
	uint64_t common_origin;  /* the earliest first event, on rank 0's clock */
	GArray *sends, *recvs;   /* struct message, every archive's StarPU-MPI messages */
	GStringChunk *message_names; /* their handles' names, kept past their archive's tables */
	char pre[16];          /* "" for one archive, else the zero-padded rank and '_' */
	struct number_events nevents; /* -number-events, over every archive */
};

struct region
{
	char *name;
	bool task, user;        /* a task; a state of astro_instr_state_open() */
};

static int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static FILE *open_output(struct converter *c, const char *name);
static int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "[astrolabe] " TOOL ": ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 1;
}

/* ------------------------------------------------------------------ helpers */

static const char *string_of(struct converter *c, OTF2_StringRef ref)
{
	const char *s = g_hash_table_lookup(c->strings, GUINT_TO_POINTER(ref));
	return s ? s : "";
}

/* The attribute values of one event, by schema id. */
struct attrs
{
	bool has[TRACE_NATTRIBUTES];
	OTF2_AttributeValue v[TRACE_NATTRIBUTES];
};

static void read_attrs(struct converter *c, OTF2_AttributeList *list, struct attrs *a)
{
	memset(a->has, 0, sizeof(a->has));
	if (!list)
		return;
	uint32_t n = OTF2_AttributeList_GetNumberOfElements(list);
	for (uint32_t i = 0; i < n; i++) {
		OTF2_AttributeRef ref;
		OTF2_Type type;
		OTF2_AttributeValue value;
		if (OTF2_AttributeList_GetAttributeByIndex(list, i, &ref, &type, &value) != OTF2_SUCCESS || ref >= 256)
			continue;
		int id = c->attr_map[ref];
		if (id < 0)
			continue;
		a->has[id] = true;
		a->v[id] = value;
	}
}

/* The length of a task's handles or deps, NULL when it has none. */
#define LEN(array) ((array) ? (array)->len : 0u)

/* Appends one element of size bytes to array, made at the first. */
static GArray *append(GArray *array, const void *element, guint size)
{
	if (!array)
		array = g_array_new(FALSE, FALSE, size);
	return g_array_append_vals(array, element, 1);
}

static struct task *task_of(struct converter *c, uint64_t job)
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

/* ------------------------------------------------ the formats' stream (formats.h) */

/* A date as the formats have it: ns from the origin. */
static uint64_t since_origin(const struct converter *c, uint64_t ts)
{
	return ts >= c->origin ? ts - c->origin : 0;
}

static struct astro_trace_location public_location(const struct location *l)
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
		.executed = t->executed, .submit_date = since_origin(c, t->submit_ts), .start_date = since_origin(c, t->start_ts),
		.end_date = since_origin(c, t->end_ts), .worker = t->worker, .location = t->start_location, .iteration = t->iteration,
		.subiteration = t->subiteration, .nhandles = LEN(t->handles),
		.handles = t->handles ? (const struct astro_trace_handle *)(const void *)t->handles->data : NULL,
		.sched_ctx = t->sched_ctx,
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

/* Task t's life, with its dependencies, to the formats that take tasks. */
static void emit_task(struct converter *c, const struct task *t)
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

/* Location l enters region r at begin, or leaves it (left) at end; t: the task it runs, at a task's enter and leave. */
static void emit_state(struct converter *c, const struct location *l, const struct region *r, uint64_t begin, bool left, uint64_t end,
		       const struct task *t)
{
	struct astro_trace_location where = public_location(l);
	struct astro_trace_task task;
	struct handles_info info;
	if (t) {
		task = public_task(c, t);
		handles_info_fill(c, t, &info);
		task.descriptions = info.descriptions;
		task.coordinates = info.coordinates;
	}
	struct astro_trace_state e = { .location = &where, .name = r->name, .is_task = r->task, .is_user = r->user, .left = left,
				       .begin = since_origin(c, begin), .end = left ? since_origin(c, end) : 0, .task = t ? &task : NULL };
	trace_formats_state(&c->opt.formats, &e);
	if (t)
		handles_info_free(&info);
}

static void emit_counter(struct converter *c, enum astro_trace_counter_kind kind, const char *name, uint64_t ts, double value)
{
	struct astro_trace_counter e = { .kind = kind, .name = name, .date = since_origin(c, ts), .value = value };
	trace_formats_counter(&c->opt.formats, &e);
}

/* A dependency of succ on pred: declared (phase 0), leaving pred at its end (1) or reaching succ at its start (2). */
static void emit_dependency(struct converter *c, int phase, uint64_t pred, uint64_t succ, int kind, unsigned flow, uint64_t ts,
			    uint64_t location)
{
	struct astro_trace_dependency e = { .phase = phase, .pred = pred, .succ = succ, .kind = kind, .flow = flow,
					    .date = since_origin(c, ts), .location = location };
	trace_formats_dependency(&c->opt.formats, &e);
}

static void emit_instant(struct converter *c, const struct location *l, int kind, const char *name, uint64_t value, uint64_t ts)
{
	struct astro_trace_location where = public_location(l);
	struct astro_trace_instant e = { .kind = kind, .name = name, .value = value, .date = since_origin(c, ts), .location = &where };
	trace_formats_instant(&c->opt.formats, &e);
}

static void emit_data(struct converter *c, const struct data *d)
{
	struct astro_trace_data e = { .handle = d->handle, .home_node = d->home, .size = d->size, .description = d->description,
				      .name = d->name, .coordinates = d->coordinates };
	trace_formats_data(&c->opt.formats, &e);
}

/* One of the runtime's other events (push, pop, transfer...), kind and date filled in; e's other fields as its kind wants. */
static void emit_event(struct converter *c, const struct location *l, enum astro_trace_event_kind kind, uint64_t ts,
		       struct astro_trace_event *e)
{
	struct astro_trace_location where = public_location(l);
	e->kind = kind;
	e->date = since_origin(c, ts);
	e->location = &where;
	trace_formats_event(&c->opt.formats, e);
}

static gint by_id(gconstpointer a, gconstpointer b)
{
	const struct location *x = *(struct location *const *)a, *y = *(struct location *const *)b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The locations by id: workers first, in worker order, then application threads. */
static GPtrArray *sorted_locations(struct converter *c)
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

/* The bytes allocated on node change by delta at ts (an allocation, or a free at the end of its Freeing state): the
 * formats' event, with the node's bytes now, and the node's Used (MB) counter. */
static void node_used(struct converter *c, const struct location *l, unsigned node, int64_t delta, uint64_t ts)
{
	uint64_t *used = node < 64 ? &c->node_used[node] : NULL;
	if (used)
		*used = delta < 0 && (uint64_t)-delta > *used ? 0 : *used + (uint64_t)delta;
	emit_event(c, l, ASTRO_TRACE_EVENT_ALLOCATION, ts,
		   &(struct astro_trace_event){ .node = (int)node, .value = delta, .size = used ? *used : 0 });
	if (!used)
		return;
	char track[64];
	snprintf(track, sizeof(track), "MEMMANAGER%u Used (MB)", node);
	emit_counter(c, ASTRO_TRACE_COUNTER_MEMORY, track, ts, (double)c->node_used[node] / (1 << 20));
}

/* A job of the runtime's own, not a task: hidden from dag.dot when it is internal (unless -internal) or an
 * acquisition with -no-acquire. */
static bool dag_hidden(struct converter *c, uint64_t job)
{
	gpointer kind = g_hash_table_lookup(c->runtime_jobs, GSIZE_TO_POINTER(job));
	if (!kind)
		return false;
	return GPOINTER_TO_UINT(kind) == 2 ? c->opt.no_acquire : !c->opt.internal;
}

/* The coherency of the handles' copies, the data requests and the runtime's own jobs. */
static void coherency_param(struct converter *c, const struct location *l, int p, uint64_t value, const struct attrs *a, uint64_t ts)
{
	unsigned src = a->has[A_SRC_NODE] ? a->v[A_SRC_NODE].uint32 : 0, dst = a->has[A_DST_NODE] ? a->v[A_DST_NODE].uint32 : 0;
	if (p == P_RUNTIME_JOB) {
		bool acquire = a->has[A_ACQUIRE] && a->v[A_ACQUIRE].uint32;
		g_hash_table_insert(c->runtime_jobs, GSIZE_TO_POINTER(value), GUINT_TO_POINTER(1 + acquire));
		if (dag_hidden(c, value))
			return;
		struct astro_trace_job e = { .job = value, .name = a->has[A_NAME] ? string_of(c, a->v[A_NAME].stringRef) : "runtime",
					     .acquire = acquire, .date = since_origin(c, ts) };
		trace_formats_job(&c->opt.formats, &e);
		return;
	}
	struct astro_trace_event e = { .src_node = (int)src, .node = (int)dst };
	if (p == P_DATA_STATE) {
		e.handle = value;
		e.value = a->has[A_COHERENCY] ? a->v[A_COHERENCY].uint32 : 0;
		emit_event(c, l, ASTRO_TRACE_EVENT_DATA_STATE, ts, &e);
	} else if (p == P_WONT_USE) {
		e.handle = value;
		emit_event(c, l, ASTRO_TRACE_EVENT_WONT_USE, ts, &e);
	} else {
		e.value = (int64_t)value;
		e.handle = a->has[A_HANDLE] ? a->v[A_HANDLE].uint64 : 0;
		e.prefetch = a->has[A_PREFETCH] ? (int)a->v[A_PREFETCH].uint32 : 0;
		emit_event(c, l, ASTRO_TRACE_EVENT_DATA_REQUEST, ts, &e);
	}
}

/* --------------------------------------------------------------- events */

static struct location *location_of(struct converter *c, OTF2_LocationRef id)
{
	struct location *l = g_hash_table_lookup(c->locations, &id);
	if (!l) {
		error("%s: events of location %" PRIu64 ", which the archive does not define: the archive is corrupt", c->input, (uint64_t)id);
		c->failed = true;
	}
	return l;
}

static void task_done(struct converter *c, struct task *t);

/* Enters the state of the task l runs, now that its handles are known. */
static void flush_pending(struct converter *c, struct location *l)
{
	if (!l->task_pending)
		return;
	l->task_pending = false;
	emit_state(c, l, l->task_region, l->task_ts, false, 0, task_of(c, l->task_job));
}

static void counter(struct converter *c, const char *name, long *value, long delta, uint64_t ts)
{
	*value += delta;
	if (*value < 0)
		*value = 0;
	if (c->opt.no_counter)
		return;
	emit_counter(c, ASTRO_TRACE_COUNTER_RUNTIME, name, ts, (double)*value);
}

/* The scheduler's gft at ts (gflops_flush's writer). */
static void gft_emit(void *arg, uint64_t ts, double total)
{
	struct converter *c = arg;
	emit_counter(c, ASTRO_TRACE_COUNTER_GFLOPS, "GFlop/s", ts, total);
}

/* Worker l's task ended at end after flops: its GFlop/s from the task's start (or the previous end, smoothed) to end,
 * then the changes of the sum no worker can still precede (both dated back, as StarPU's). */
static void task_gflops(struct converter *c, struct location *l, uint64_t end, double flops)
{
	uint64_t from;
	double rate;
	if (!gflops_task_end(&c->gflops, &l->gf, end, flops, &from, &rate))
		return;
	char track[96];
	snprintf(track, sizeof(track), "GFlop/s %s", l->name);
	emit_counter(c, ASTRO_TRACE_COUNTER_GFLOPS, track, from, rate);
	emit_counter(c, ASTRO_TRACE_COUNTER_GFLOPS, track, end, 0.0);
	uint64_t horizon = end;
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, c->locations);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		const struct location *w = v;
		if (w->worker)
			horizon = MIN(horizon, gflops_floor(&c->gflops, &w->gf, end));
	}
	gflops_flush(&c->gflops, horizon, gft_emit, c);
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef loc, OTF2_TimeStamp ts, void *arg, OTF2_AttributeList *list, OTF2_RegionRef ref)
{
	struct converter *c = arg;
	struct location *l = location_of(c, loc);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	const struct region *r = g_hash_table_lookup(c->regions, GUINT_TO_POINTER(ref));
	if (!r) {
		error("%s: an event refers to region %u, which the archive does not define: the archive is corrupt", c->input, ref);
		c->failed = true;
		return OTF2_CALLBACK_INTERRUPT;
	}
	if (c->opt.number_events)
		number_events_region(&c->nevents, r->name, r->task, r->user, false);
	flush_pending(c, l);
	c->last_ts = ts;
	if (l->depth < G_N_ELEMENTS(l->stack)) {
		l->stack[l->depth] = ref;
		l->enter_ts[l->depth] = ts;
	}
	l->depth++;
	if (r->task) {
		struct attrs a;
		read_attrs(c, list, &a);
		uint64_t job = a.has[A_JOB_ID] ? a.v[A_JOB_ID].uint64 : l->popped ? l->last_pop : 0;
		l->popped = false;
		struct task *t = task_of(c, job);
		if (!t->name)
			t->name = r->name;
		t->executed = true;
		t->start_ts = ts;
		t->worker = l->workerid;
		t->start_location = l->id;
		gflops_task_start(&l->gf, ts);
		for (guint k = 0; k < LEN(t->deps); k++) {
			const struct dep *d = &g_array_index(t->deps, struct dep, k);
			if (d->flow)
				emit_dependency(c, 2, d->pred, job, d->kind, d->flow, ts, l->id);
		}
		if (a.has[A_FOOTPRINT])
			t->footprint = a.v[A_FOOTPRINT].uint32;
		if (a.has[A_SIZE])
			t->size = a.v[A_SIZE].uint64;
		if (a.has[A_FLOPS])
			t->flops = a.v[A_FLOPS].float64;
		t->sched_ctx = a.has[A_SCHED_CTX] ? a.v[A_SCHED_CTX].uint32 : 0;
		l->task_job = job;
		/* The handles follow as "handle" events at the same date: its state waits for the next other event. */
		if (t->handles)
			g_array_set_size(t->handles, 0);
		l->task_pending = true;
		l->task_ts = ts;
		l->task_region = r;
		return OTF2_CALLBACK_SUCCESS;
	}
	emit_state(c, l, r, ts, false, 0, NULL);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_leave(OTF2_LocationRef loc, OTF2_TimeStamp ts, void *arg, OTF2_AttributeList *list, OTF2_RegionRef ref)
{
	(void)list;
	struct converter *c = arg;
	struct location *l = location_of(c, loc);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	const struct region *r = g_hash_table_lookup(c->regions, GUINT_TO_POINTER(ref));
	if (!r || !l->depth) {
		error("%s: a Leave event without its Enter on %s: the archive is corrupt", c->input, l->name);
		c->failed = true;
		return OTF2_CALLBACK_INTERRUPT;
	}
	if (c->opt.number_events)
		number_events_region(&c->nevents, r->name, r->task, r->user, true);
	flush_pending(c, l);
	c->last_ts = ts;
	l->depth--;
	uint64_t begin = l->depth < G_N_ELEMENTS(l->stack) ? l->enter_ts[l->depth] : ts;
	struct task *t = NULL;
	if (r->task) {
		t = task_of(c, l->task_job);
		t->end_ts = ts;
		if (l->worker && !c->opt.no_flops)
			task_gflops(c, l, ts, t->flops);
	}
	emit_state(c, l, r, begin, true, ts, t);
	if (t)
		task_done(c, t);
	return OTF2_CALLBACK_SUCCESS;
}

/* A component's address, told apart from the same address in another process's archive. */
static uint64_t component_key(const struct converter *c, uint64_t address)
{
	return address ? address ^ ((uint64_t)(unsigned)c->rank << 56) : 0; /* 0: the policy */
}

/* The record of handle, unregistered: written, forgotten. */
static void data_done(struct converter *c, uint64_t handle)
{
	struct data *d = g_hash_table_lookup(c->data, &handle);
	if (!d)
		return;
	emit_data(c, d);
	g_hash_table_remove(c->data, &handle); /* frees d */
}

static struct data *data_new(struct converter *c, uint64_t handle)
{
	data_done(c, handle); /* registered again without its unregistration in the trace */
	struct data *d = g_new0(struct data, 1);
	d->seq = c->ndata++;
	d->handle = handle;
	g_hash_table_insert(c->data, &d->handle, d);
	return d;
}

static OTF2_CallbackCode on_param(OTF2_LocationRef loc, OTF2_TimeStamp ts, void *arg, OTF2_AttributeList *list,
				  OTF2_ParameterRef ref, uint64_t value)
{
	struct converter *c = arg;
	struct location *l = location_of(c, loc);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	int p = ref < 256 ? c->param_map[ref] : -1;
	struct attrs a;
	read_attrs(c, list, &a);
	if (c->opt.number_events)
		number_events_param(&c->nevents, p, a.has[A_DEP_KIND] ? a.v[A_DEP_KIND].uint8 : a.has[A_MEMORY_STATE] ? a.v[A_MEMORY_STATE].uint8 :
						    a.has[A_COHERENCY] ? (uint8_t)a.v[A_COHERENCY].uint32 : 0);
	if (p != P_HANDLE)
		flush_pending(c, l);
	c->last_ts = ts;
	switch (p) {
	case P_SUBMIT: {
		struct task *t = task_of(c, value);
		t->submitted = true;
		t->submit_ts = ts;
		if (a.has[A_NAME]) {
			/* The recorder leaves Model out when it is the name (a codelet without performance model); "": no name. */
			const char *name = string_of(c, a.v[A_NAME].stringRef);
			l->prev_name = *name ? name : NULL;
			l->prev_model = a.has[A_MODEL] ? string_of(c, a.v[A_MODEL].stringRef) : l->prev_name;
			l->submitted = true;
		}
		/* Neither: those of the previous submit here. */
		if (l->submitted) {
			if (!t->name)
				t->name = l->prev_name;
			t->model = l->prev_model;
		}
		if (a.has[A_TAG]) {
			t->has_tag = true;
			t->tag = a.v[A_TAG].uint64;
		}
		l->prev_has_tag = t->has_tag;
		l->prev_tag = t->tag;
		l->prev_job = value;
		if (a.has[A_PRIORITY])
			t->priority = a.v[A_PRIORITY].int32;
		if (a.has[A_COLOR])
			t->color = a.v[A_COLOR].uint32;
		if (a.has[A_ITERATION])
			t->iteration = a.v[A_ITERATION].int64;
		if (a.has[A_SUBITERATION])
			t->subiteration = a.v[A_SUBITERATION].int64;
		counter(c, "nsubmitted", &c->nsubmitted, 1, ts);
		break;
	}
	case P_TASK_TAG: {
		/* Written right after its submit, at the same date: that task has not ended yet. */
		struct task *t = g_hash_table_lookup(c->tasks, &l->prev_job);
		if (t) {
			t->has_tag = true;
			t->tag = value;
		}
		l->prev_has_tag = true;
		l->prev_tag = value;
		break;
	}
	case P_READY:
		break;
	case P_PUSH:
	case P_POP: {
		if (p == P_POP) {
			l->last_pop = value;
			l->popped = true;
		}
		struct task *t = g_hash_table_lookup(c->tasks, &value);
		int32_t prio = a.has[A_PRIORITY] ? a.v[A_PRIORITY].int32 : (t ? t->priority : 0);
		emit_event(c, l, p == P_PUSH ? ASTRO_TRACE_EVENT_PUSH : ASTRO_TRACE_EVENT_POP, ts,
			   &(struct astro_trace_event){ .job = value, .priority = prio, .worker = l->worker ? l->workerid : -1 });
		counter(c, "nready", &c->nready, p == P_PUSH ? 1 : -1, ts);
		if (p == P_POP)
			counter(c, "nsubmitted", &c->nsubmitted, -1, ts);
		break;
	}
	case P_DEPENDENCY:
	case P_TAG_DEPENDENCY: {
		if (p == P_TAG_DEPENDENCY && !a.has[A_JOB_ID] && l->prev_has_tag) {
			a.has[A_JOB_ID] = true; /* the Tag of the submit just before */
			a.v[A_JOB_ID].uint64 = l->prev_tag;
		}
		if (!a.has[A_JOB_ID])
			break;
		if (p == P_TAG_DEPENDENCY || (a.has[A_DEP_KIND] && a.v[A_DEP_KIND].uint8 == 2)) {
			/* Tags: declared only (drawn in dag.dot). */
			emit_dependency(c, 0, value, a.v[A_JOB_ID].uint64, 2, 0, ts, l->id);
			break;
		}
		if (dag_hidden(c, value) || dag_hidden(c, a.v[A_JOB_ID].uint64))
			break; /* drawn only when both ends are (-no-acquire, -internal) */
		struct task *t = task_of(c, a.v[A_JOB_ID].uint64);
		struct dep d = { value, a.has[A_DEP_KIND] ? a.v[A_DEP_KIND].uint8 : 0, 0 };
		emit_dependency(c, 0, value, t->job, d.kind, 0, ts, l->id);
		/* The flow starts when the predecessor ends: now if it has ended already (remembered); else at its end. One
		 * not seen yet is made (declared before its submission); one that ended and was forgotten comes back empty:
		 * no record is written for it (write_remaining). */
		const struct ended *e = g_hash_table_contains(c->tasks, &value) ? NULL : g_hash_table_lookup(c->ended, &value);
		if (e && !t->executed) {
			d.flow = ++c->nflows;
			emit_dependency(c, 1, value, t->job, d.kind, d.flow, e->end_ts, e->location);
		} else if (!e) {
			struct task *pred = task_of(c, value);
			pred->succs = append(pred->succs, &t->job, sizeof(t->job));
		}
		t->deps = append(t->deps, &d, sizeof(d));
		break;
	}
	case P_HANDLE: {
		struct task *t = task_of(c, l->task_job);
		struct handle_ref h = { value, a.has[A_MODE] ? a.v[A_MODE].uint32 : 0, a.has[A_SIZE] ? a.v[A_SIZE].uint64 : 0 };
		t->handles = append(t->handles, &h, sizeof(h));
		break;
	}
	case P_REGISTER: {
		struct data *d = data_new(c, value);
		d->size = a.has[A_SIZE] ? a.v[A_SIZE].uint64 : 0;
		d->home = a.has[A_HOME_NODE] ? a.v[A_HOME_NODE].int32 : 0;
		d->description = g_strdup(a.has[A_DESCRIPTION] ? string_of(c, a.v[A_DESCRIPTION].stringRef) : "");
		emit_event(c, l, ASTRO_TRACE_EVENT_REGISTER, ts, &(struct astro_trace_event){ .handle = value, .size = d->size, .node = d->home });
		break;
	}
	case P_UNREGISTER:
		emit_event(c, l, ASTRO_TRACE_EVENT_UNREGISTER, ts, &(struct astro_trace_event){ .handle = value });
		data_done(c, value); /* the address may be registered again */
		break;
	case P_BURST_BEGIN:
	case P_BURST_END:
		if (a.has[A_NAME]) {
			const char *key = string_of(c, a.v[A_NAME].stringRef);
			/* The value while the burst lasts, 0 after. */
			struct astro_trace_counter e = { .kind = ASTRO_TRACE_COUNTER_BURST, .name = key, .date = since_origin(c, ts),
							 .value = p == P_BURST_BEGIN ? (double)value : 0.0, .raw = p == P_BURST_BEGIN ? value : 0 };
			trace_formats_counter(&c->opt.formats, &e);
		}
		break;
	case P_COMPONENT_CONNECT:
		if (a.has[A_COMPONENT])
			emit_event(c, l, ASTRO_TRACE_EVENT_COMPONENT_CONNECT, ts,
				   &(struct astro_trace_event){ .component = component_key(c, value),
								.from = component_key(c, a.v[A_COMPONENT].uint64) });
		break;
	case P_COMPONENT_PUSH:
	case P_COMPONENT_PULL:
		emit_event(c, l, p == P_COMPONENT_PUSH ? ASTRO_TRACE_EVENT_COMPONENT_PUSH : ASTRO_TRACE_EVENT_COMPONENT_PULL, ts,
			   &(struct astro_trace_event){
				   .job = value,
				   .from = a.has[A_FROM_COMPONENT] ? component_key(c, a.v[A_FROM_COMPONENT].uint64) : 0,
				   .component = a.has[A_COMPONENT] ? component_key(c, a.v[A_COMPONENT].uint64) : 0 });
		break;
	case P_COMPONENT_NEW:
		if (a.has[A_NAME])
			emit_event(c, l, ASTRO_TRACE_EVENT_COMPONENT_NEW, ts,
				   &(struct astro_trace_event){ .component = component_key(c, value), .name = string_of(c, a.v[A_NAME].stringRef),
								.worker = a.has[A_WORKER] ? a.v[A_WORKER].int32 : -1 });
		break;
	case P_MPI_SEND:
	case P_MPI_RECV:
		if (a.has[A_PEER] && a.has[A_TAG]) {
			struct message m = { c->rank, a.v[A_PEER].int32, a.v[A_TAG].uint64, a.has[A_HANDLE] ? a.v[A_HANDLE].uint64 : 0, value,
					     since_origin(c, ts), NULL };
			const struct data *d = m.handle ? g_hash_table_lookup(c->data, &m.handle) : NULL;
			if (d && d->name && *d->name)
				m.name = g_string_chunk_insert_const(c->message_names, d->name);
			g_array_append_val(p == P_MPI_SEND ? c->sends : c->recvs, m);
		}
		break;
	case P_PAPI:
		if (a.has[A_JOB_ID] && a.has[A_NAME])
			emit_event(c, l, ASTRO_TRACE_EVENT_PAPI, ts,
				   &(struct astro_trace_event){ .job = a.v[A_JOB_ID].uint64, .name = string_of(c, a.v[A_NAME].stringRef),
								.value = (int64_t)value });
		break;
	case P_USER_EVENT:
		if (!c->opt.no_events) {
			char buf[32];
			snprintf(buf, sizeof(buf), "%" PRIu64, value);
			emit_instant(c, l, 0, buf, value, ts);
		}
		break;
	case P_ALLOCATION:
		node_used(c, l, a.has[A_DST_NODE] ? a.v[A_DST_NODE].uint32 : 0, (int64_t)value, ts);
		break;
	case P_MEMORY_STATE_BEGIN:
	case P_MEMORY_STATE_END: {
		static const char *const aliases[] = TRACE_MEMORY_STATES;
		unsigned node = a.has[A_DST_NODE] ? a.v[A_DST_NODE].uint32 : 0;
		unsigned state = a.has[A_MEMORY_STATE] ? a.v[A_MEMORY_STATE].uint8 : 0;
		if (state >= G_N_ELEMENTS(aliases))
			break; /* a newer recorder's */
		if (p == P_MEMORY_STATE_END && aliases[state][0] == 'F')
			node_used(c, l, node, -(int64_t)value, ts);
		emit_event(c, l, p == P_MEMORY_STATE_BEGIN ? ASTRO_TRACE_EVENT_MEMORY_STATE_BEGIN : ASTRO_TRACE_EVENT_MEMORY_STATE_END, ts,
			   &(struct astro_trace_event){ .node = (int)node, .name = aliases[state], .size = value,
							.handle = a.has[A_HANDLE] ? a.v[A_HANDLE].uint64 : 0 });
		break;
	}
	case P_TRANSFER_BEGIN:
	case P_TRANSFER_END: {
		unsigned src = a.has[A_SRC_NODE] ? a.v[A_SRC_NODE].uint32 : 0, dst = a.has[A_DST_NODE] ? a.v[A_DST_NODE].uint32 : 0;
		emit_event(c, l, p == P_TRANSFER_BEGIN ? ASTRO_TRACE_EVENT_TRANSFER_BEGIN : ASTRO_TRACE_EVENT_TRANSFER_END, ts,
			   &(struct astro_trace_event){ .handle = a.has[A_HANDLE] ? a.v[A_HANDLE].uint64 : 0, .size = value,
							.src_node = (int)src, .node = (int)dst });
		break;
	}
	case P_DATA_STATE:
	case P_WONT_USE:
	case P_DATA_REQUEST:
	case P_RUNTIME_JOB:
		coherency_param(c, l, p, value, &a, ts);
		break;
	default:
		break;
	}
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_param_string(OTF2_LocationRef loc, OTF2_TimeStamp ts, void *arg, OTF2_AttributeList *list,
					 OTF2_ParameterRef ref, OTF2_StringRef sref)
{
	struct converter *c = arg;
	struct location *l = location_of(c, loc);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	flush_pending(c, l);
	int p = ref < 256 ? c->param_map[ref] : -1;
	struct attrs a;
	read_attrs(c, list, &a);
	const char *s = string_of(c, sref);
	c->last_ts = ts;
	if (c->opt.number_events)
		number_events_param(&c->nevents, p, 0);
	if (p == P_STRING_EVENT) {
		emit_instant(c, l, 1, s, 0, ts);
	} else if ((p == P_DATA_NAME || p == P_DATA_COORDINATES) && a.has[A_HANDLE]) {
		uint64_t h = a.v[A_HANDLE].uint64;
		struct data *d = g_hash_table_lookup(c->data, &h);
		if (!d)
			d = data_new(c, h);
		char **field = p == P_DATA_NAME ? &d->name : &d->coordinates;
		g_free(*field);
		*field = g_strdup(s);
	}
	return OTF2_CALLBACK_SUCCESS;
}

/* A counter the sampler read (a metric of one member): a counter of the formats. */
static OTF2_CallbackCode on_metric(OTF2_LocationRef loc, OTF2_TimeStamp ts, void *arg, OTF2_AttributeList *list, OTF2_MetricRef metric,
				   uint8_t n, const OTF2_Type *types, const OTF2_MetricValue *values)
{
	(void)list;
	struct converter *c = arg;
	struct location *l = location_of(c, loc);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	flush_pending(c, l);
	c->last_ts = ts;
	if (c->opt.number_events)
		number_events_counter(&c->nevents);
	guint member = GPOINTER_TO_UINT(g_hash_table_lookup(c->metric_classes, GUINT_TO_POINTER(metric)));
	const char *name = member ? g_hash_table_lookup(c->metric_members, GUINT_TO_POINTER(member - 1)) : NULL;
	if (!name || n < 1 || c->opt.no_counter)
		return OTF2_CALLBACK_SUCCESS;
	double value = types[0] == OTF2_TYPE_DOUBLE ? values[0].floating_point
		     : types[0] == OTF2_TYPE_INT64 ? (double)values[0].signed_int : (double)values[0].unsigned_int;
	emit_counter(c, ASTRO_TRACE_COUNTER_SAMPLED, name, ts, value);
	return OTF2_CALLBACK_SUCCESS;
}

/* ---------------------------------------------------------- final files */

static void free_task(gpointer p)
{
	struct task *t = p;
	if (t->handles)
		g_array_free(t->handles, TRUE);
	if (t->deps)
		g_array_free(t->deps, TRUE);
	if (t->succs)
		g_array_free(t->succs, TRUE);
	g_free(t);
}

/* Task t ended: the flows to its successors that have not started start here; its records are written and it is forgotten. */
static void task_done(struct converter *c, struct task *t)
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
				emit_dependency(c, 1, t->job, job, d->kind, d->flow, t->end_ts, t->start_location);
				break;
			}
		}
	}
	emit_task(c, t);
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
static void write_remaining(struct converter *c)
{
	GPtrArray *tasks = values_of(c->tasks);
	g_ptr_array_sort(tasks, by_job);
	for (guint i = 0; i < tasks->len; i++) {
		const struct task *t = g_ptr_array_index(tasks, i);
		if (!t->submitted && !t->executed)
			continue; /* only named as a predecessor: submitted before the trace started, or ended before that */
		emit_task(c, t);
	}
	g_ptr_array_free(tasks, TRUE);
	GPtrArray *data = values_of(c->data);
	g_ptr_array_sort(data, by_seq);
	for (guint i = 0; i < data->len; i++)
		emit_data(c, g_ptr_array_index(data, i));
	g_ptr_array_free(data, TRUE);
}

/* ------------------------------------------------------------ reading */

static OTF2_CallbackCode def_string(void *arg, OTF2_StringRef self, const char *s)
{
	struct converter *c = arg;
	g_hash_table_insert(c->strings, GUINT_TO_POINTER(self), g_strdup(s));
	if (strcmp(s, TRACE_INCOMPLETE_MARK) == 0)
		c->incomplete = true;
	if (strncmp(s, TRACE_MPI_MARK, strlen(TRACE_MPI_MARK)) == 0)
		c->mpi = true;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_clock(void *arg, uint64_t resolution, uint64_t offset, uint64_t length, uint64_t realtime)
{
	(void)resolution;
	(void)length;
	(void)realtime;
	struct converter *c = arg;
	if (!c->multi)
		c->origin = offset; /* several archives: the earliest of them, found first */
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_region(void *arg, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canonical,
				    OTF2_StringRef description, OTF2_RegionRole role, OTF2_Paradigm paradigm, OTF2_RegionFlag flags,
				    OTF2_StringRef file, uint32_t begin, uint32_t end)
{
	(void)canonical;
	(void)role;
	(void)paradigm;
	(void)flags;
	(void)file;
	(void)begin;
	(void)end;
	struct converter *c = arg;
	struct region *r = g_new0(struct region, 1);
	r->name = g_strdup(string_of(c, name));
	r->task = strcmp(string_of(c, description), TRACE_DESC_TASK) == 0;
	r->user = strcmp(string_of(c, description), TRACE_DESC_USER_STATE) == 0;
	g_hash_table_insert(c->regions, GUINT_TO_POINTER(self), r);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_location(void *arg, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
				      uint64_t nevents, OTF2_LocationGroupRef group)
{
	(void)type;
	(void)nevents;
	(void)group;
	struct converter *c = arg;
	struct location *l = g_new0(struct location, 1);
	l->id = self;
	l->name = g_strdup(string_of(c, name));
	l->worker = self < TRACE_APP_LOCATION_BASE;
	l->workerid = l->worker ? (int)self : -1;
	l->bindid = -1;
	g_hash_table_insert(c->locations, &l->id, l);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_location_property(void *arg, OTF2_LocationRef location, OTF2_StringRef name, OTF2_Type type,
					       OTF2_AttributeValue value)
{
	struct converter *c = arg;
	struct location *l = g_hash_table_lookup(c->locations, &location);
	const char *property = string_of(c, name);
	if (!l)
		return OTF2_CALLBACK_SUCCESS;
	if (type == OTF2_TYPE_INT64 && strcmp(property, TRACE_PROPERTY_TID) == 0)
		l->tid = (long)value.int64;
	else if (type == OTF2_TYPE_INT32 && strcmp(property, TRACE_PROPERTY_BINDID) == 0)
		l->bindid = value.int32;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_parameter(void *arg, OTF2_ParameterRef self, OTF2_StringRef name, OTF2_ParameterType type)
{
	(void)type;
	struct converter *c = arg;
	static const char *const names[] = {
#define PNAME(id, name, type) name,
		TRACE_PARAMETERS(PNAME)
#undef PNAME
	};
	if (self >= 256)
		return OTF2_CALLBACK_SUCCESS;
	for (int i = 0; i < TRACE_NPARAMETERS; i++)
		if (strcmp(names[i], string_of(c, name)) == 0)
			c->param_map[self] = i;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_attribute(void *arg, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef description, OTF2_Type type)
{
	(void)description;
	(void)type;
	struct converter *c = arg;
	static const char *const names[] = {
#define ANAME(id, name, type) name,
		TRACE_ATTRIBUTES(ANAME)
#undef ANAME
	};
	if (self >= 256)
		return OTF2_CALLBACK_SUCCESS;
	for (int i = 0; i < TRACE_NATTRIBUTES; i++)
		if (strcmp(names[i], string_of(c, name)) == 0)
			c->attr_map[self] = i;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_metric_member(void *arg, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef description,
					   OTF2_MetricType type, OTF2_MetricMode mode, OTF2_Type value_type, OTF2_Base base, int64_t exponent,
					   OTF2_StringRef unit)
{
	(void)description, (void)type, (void)mode, (void)value_type, (void)base, (void)exponent, (void)unit;
	struct converter *c = arg;
	g_hash_table_insert(c->metric_members, GUINT_TO_POINTER(self), (gpointer)string_of(c, name));
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_metric_class(void *arg, OTF2_MetricRef self, uint8_t n, const OTF2_MetricMemberRef *members,
					  OTF2_MetricOccurrence occurrence, OTF2_RecorderKind kind)
{
	(void)occurrence, (void)kind;
	struct converter *c = arg;
	if (n)
		g_hash_table_insert(c->metric_classes, GUINT_TO_POINTER(self), GUINT_TO_POINTER(members[0] + 1));
	return OTF2_CALLBACK_SUCCESS;
}

/* -i accepts the archive's folder, its traces.otf2, or any anchor file. */
static char *anchor_of(const char *input)
{
	struct stat st;
	if (stat(input, &st) < 0)
		return NULL;
	if (S_ISDIR(st.st_mode))
		return g_build_filename(input, "traces.otf2", NULL);
	return g_strdup(input);
}

/* Where output name goes: in the -d directory, else here (to be g_free()d). */
static char *output_path(const struct converter *c, const char *name)
{
	return c->opt.dir ? g_build_filename(c->opt.dir, name, NULL) : g_strdup(name);
}

static FILE *open_output(struct converter *c, const char *name)
{
	char *path = output_path(c, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		error("cannot write %s (%s): check the -d directory", path, strerror(errno));
		c->failed = true;
		f = fopen("/dev/null", "w");
	}
	g_free(path);
	return f;
}

static void close_output(struct converter *c, FILE *f, const char *name)
{
	if (ferror(f) | (fclose(f) != 0)) {
		error("writing %s%s%s failed (disk full?)", c->opt.dir ? c->opt.dir : "", c->opt.dir ? "/" : "", name);
		c->failed = true;
	}
}

/* OTF2 prints each error itself, several lines per problem: keep the first, say it once. */
static char otf2_first_error[256];

static OTF2_ErrorCode otf2_error(void *user, const char *file, uint64_t line, const char *function, OTF2_ErrorCode code,
				 const char *fmt, va_list va)
{
	(void)user;
	(void)file;
	(void)line;
	(void)function;
	if (!otf2_first_error[0])
		vsnprintf(otf2_first_error, sizeof(otf2_first_error), fmt, va);
	return code;
}

/* 0 when input is a trace folder with its anchor file, else 1 and one message. */
static int check_input(const char *input)
{
	char *anchor = anchor_of(input);
	if (!anchor)
		return error("%s: no such file or directory: give the trace folder STARPU_FXT_TRACE=1 left (STARPU_FXT_PREFIX/prof_file_<user>_0)",
			     input);
	struct stat st;
	int ret = 0;
	if (stat(anchor, &st) < 0)
		ret = error("%s: not a trace archive (no %s): give the folder STARPU_FXT_TRACE=1 left", input, anchor);
	g_free(anchor);
	return ret;
}

static int convert(struct converter *c)
{
	if (check_input(c->input))
		return 1;
	char *anchor = anchor_of(c->input);
	OTF2_Reader *reader = OTF2_Reader_Open(anchor);
	if (!reader) {
		error("%s: cannot open the OTF2 archive: it is truncated or corrupt (%s)", anchor, otf2_first_error);
		g_free(anchor);
		return 1;
	}
	OTF2_Reader_SetSerialCollectiveCallbacks(reader);
	OTF2_ErrorCode status;
	uint64_t nlocations = 0;
	if ((status = OTF2_Reader_GetNumberOfLocations(reader, &nlocations)) != OTF2_SUCCESS)
		goto corrupt;

	OTF2_GlobalDefReader *defs = OTF2_Reader_GetGlobalDefReader(reader);
	if (!defs) {
		status = OTF2_ERROR_FILE_INTERACTION;
		goto corrupt;
	}
	OTF2_GlobalDefReaderCallbacks *dcb = OTF2_GlobalDefReaderCallbacks_New();
	OTF2_GlobalDefReaderCallbacks_SetStringCallback(dcb, def_string);
	OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(dcb, def_clock);
	OTF2_GlobalDefReaderCallbacks_SetRegionCallback(dcb, def_region);
	OTF2_GlobalDefReaderCallbacks_SetLocationCallback(dcb, def_location);
	OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(dcb, def_location_property);
	OTF2_GlobalDefReaderCallbacks_SetParameterCallback(dcb, def_parameter);
	OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(dcb, def_attribute);
	OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(dcb, def_metric_member);
	OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(dcb, def_metric_class);
	OTF2_Reader_RegisterGlobalDefCallbacks(reader, defs, dcb, c);
	OTF2_GlobalDefReaderCallbacks_Delete(dcb);
	uint64_t ndefs = 0;
	status = OTF2_Reader_ReadAllGlobalDefinitions(reader, defs, &ndefs);
	OTF2_Reader_CloseGlobalDefReader(reader, defs);
	if (status != OTF2_SUCCESS)
		goto corrupt;
	if (c->incomplete)
		fprintf(stderr, "[astrolabe] " TOOL ": warning: %s is marked incomplete (a flush failed while recording): events are missing\n",
			anchor);

	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, c->locations);
	while (g_hash_table_iter_next(&it, &k, &v))
		OTF2_Reader_SelectLocation(reader, ((struct location *)v)->id);
	if ((status = OTF2_Reader_OpenEvtFiles(reader)) != OTF2_SUCCESS)
		goto corrupt;
	g_hash_table_iter_init(&it, c->locations);
	while (g_hash_table_iter_next(&it, &k, &v))
		OTF2_Reader_GetEvtReader(reader, ((struct location *)v)->id);

	struct astro_trace_process process = { .rank = c->rank, .input = c->input, .prefix = c->pre, .multi = c->multi, .mpi = c->mpi };
	trace_formats_process(&c->opt.formats, &process);
	GPtrArray *locs = sorted_locations(c);
	for (guint i = 0; i < locs->len; i++) {
		struct location *l = g_ptr_array_index(locs, i);
		struct astro_trace_location where = public_location(l);
		trace_formats_location(&c->opt.formats, &where);
	}
	g_ptr_array_free(locs, TRUE);

	OTF2_GlobalEvtReader *events = OTF2_Reader_GetGlobalEvtReader(reader);
	if (!events) {
		status = OTF2_ERROR_FILE_INTERACTION;
		goto corrupt;
	}
	OTF2_GlobalEvtReaderCallbacks *ecb = OTF2_GlobalEvtReaderCallbacks_New();
	OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(ecb, on_enter);
	OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(ecb, on_leave);
	OTF2_GlobalEvtReaderCallbacks_SetParameterUnsignedIntCallback(ecb, on_param);
	OTF2_GlobalEvtReaderCallbacks_SetParameterStringCallback(ecb, on_param_string);
	OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(ecb, on_metric);
	OTF2_Reader_RegisterGlobalEvtCallbacks(reader, events, ecb, c);
	OTF2_GlobalEvtReaderCallbacks_Delete(ecb);
	uint64_t nevents = 0;
	status = OTF2_Reader_ReadAllGlobalEvents(reader, events, &nevents);
	OTF2_Reader_CloseGlobalEvtReader(reader, events);
	if (c->failed) {
		OTF2_Reader_Close(reader);
		g_free(anchor);
		return 1;
	}
	if (status != OTF2_SUCCESS)
		goto corrupt;
	g_hash_table_iter_init(&it, c->locations);
	while (g_hash_table_iter_next(&it, &k, &v))
		flush_pending(c, v);
	if (gflops_pending(&c->gflops))
		gflops_flush(&c->gflops, UINT64_MAX, gft_emit, c);
	/* Each location's end, in the order of the table (activity.data's last periods keep it). */
	g_hash_table_iter_init(&it, c->locations);
	while (g_hash_table_iter_next(&it, &k, &v))
		emit_event(c, v, ASTRO_TRACE_EVENT_ARCHIVE_END, c->last_ts, &(struct astro_trace_event){ 0 });
	OTF2_Reader_CloseEvtFiles(reader);
	OTF2_Reader_Close(reader);
	g_free(anchor);
	return 0;

corrupt:
	error("%s: the OTF2 archive is truncated or corrupt (%s%s%s)", anchor, OTF2_Error_GetDescription(status),
	      otf2_first_error[0] ? ": " : "", otf2_first_error);
	OTF2_Reader_Close(reader);
	g_free(anchor);
	return 1;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: " TOOL " [-c] [-no-events] [-no-counter] [-no-bus] [-no-flops] [-no-smooth] [-label-deps] [-number-events] [-memory-states] [-no-acquire] [-internal] [-use-task-color] [-no-format NAME] [-format NAME] [-o paje.trace] [-d dir] -i trace...\n"
		   "       " TOOL " -formats\n"
		   "Converts the OTF2 trace a run with STARPU_FXT_TRACE=1 left (the folder STARPU_FXT_PREFIX/prof_file_<user>_0)\n"
		   "into paje.trace, dag.dot, tasks.rec, sched_tasks.rec, trace.rec, data.rec, activity.data, comms.rec,\n"
		   "trace.html (the task flow between the components of a modular-* scheduler, for a browser), papi.rec\n"
		   "(when the run counted STARPU_PROF_PAPI_EVENTS) and\n"
		   "trace.json (Chrome/Perfetto trace events).\n"
		   "  -i FILE...     trace folders or their traces.otf2; several (one per process, named <...>_<rank>)\n"
		   "                 are merged on one time base, each rank's containers and jobs prefixed '<rank>_'\n"
		   "  -o FILE        name of the Paje file (default paje.trace)\n"
		   "  -d DIR         write every output in DIR (created if needed)\n"
		   "  -c             one colour per task name (hashed) instead of green\n"
		   "  -no-events     no push/pop, register/unregister, user or program events in paje.trace\n"
		   "  -no-counter    no nsubmitted/nready counters and push/pop events\n"
		   "  -no-bus        no transfer links nor memory-manager variables\n"
		   "  -no-flops      no GFlop/s variables (gf of each worker, gft of the scheduler)\n"
		   "  -no-smooth     GFlop/s of each task alone, without the short idle gap before it\n"
		   "  -label-deps    label the dag.dot edges with the kind of dependency\n"
		   "  -number-events write number_events.data: how many events of each kind (read it with\n"
		   "                 starpu_fxt_number_events_to_names.py; STARPU_FXT_EVENTS records fewer)\n"
		   "  -memory-states the memory managers' details in paje.trace: the MSI states of the data's copies,\n"
		   "                 starpu_data_wont_use, memory requests, allocations, frees, write-backs, copies\n"
		   "  -no-acquire    leave the data acquisitions (starpu_data_acquire*) out of dag.dot\n"
		   "  -internal      also draw the runtime's internal jobs in dag.dot (unregister_submit, prefetches...)\n"
		   "  -formats       list the trace formats (the built-in ones and the format_* plugins'), on or off, and exit\n"
		   "  -no-format NAME  do not write trace format NAME (json: no trace.json, paje: no paje.trace)\n"
		   "  -format NAME   write trace format NAME, which its plugin leaves off by default\n"
		   "  -use-task-color the scheduling contexts' task states (InCtx1..InCtx9) in the task's colour instead of\n"
		   "                 one colour per context\n"
		   "  -h, --help     display this help and exit\n");
}

static int parse(struct options *o, int argc, char **argv)
{
	o->inputs = g_ptr_array_new();
	o->paje = "paje.trace";
	int taken;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-i") == 0) {
			while (i + 1 < argc && argv[i + 1][0] != '-')
				g_ptr_array_add(o->inputs, argv[++i]);
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "-d") == 0) {
			if (i + 1 == argc)
				return error("%s needs a value: see -h", a);
			if (a[1] == 'o')
				o->paje = argv[++i];
			else
				o->dir = argv[++i];
		} else if (strcmp(a, "-c") == 0) {
			o->colors = true;
		} else if (strcmp(a, "-no-events") == 0) {
			o->no_events = true;
		} else if (strcmp(a, "-no-counter") == 0) {
			o->no_counter = true;
		} else if (strcmp(a, "-no-bus") == 0) {
			o->no_bus = true;
		} else if (strcmp(a, "-no-flops") == 0) {
			o->no_flops = true;
		} else if (strcmp(a, "-no-smooth") == 0) {
			o->no_smooth = true;
		} else if (strcmp(a, "-label-deps") == 0) {
			o->label_deps = true;
		} else if (strcmp(a, "-number-events") == 0) {
			o->number_events = true;
		} else if (strcmp(a, "-memory-states") == 0) {
			o->memory_states = true;
		} else if (strcmp(a, "-no-acquire") == 0) {
			o->no_acquire = true;
		} else if (strcmp(a, "-internal") == 0) {
			o->internal = true;
		} else if (strcmp(a, "-use-task-color") == 0) {
			o->use_task_color = true;
		} else if ((taken = trace_formats_option(&o->formats, argc, argv, &i)) != 0) {
			if (taken < 0)
				return 1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "-help") == 0) {
			usage(stdout);
			return -1;
		} else if (a[0] != '-') {
			g_ptr_array_add(o->inputs, argv[i]);
		} else {
			usage(stderr);
			return error("unknown option '%s'", a);
		}
	}
	if (!o->inputs->len && !o->formats.list) {
		usage(stderr);
		return error("no trace given: use -i <folder STARPU_FXT_TRACE=1 left>");
	}
	return 0;
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

/* The rank of an archive: the <id> that ends its folder's name (prof_file_<user>_<id>), else -1. */
static int rank_of(const char *input)
{
	char *path = g_strdup(input);
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	if (g_str_has_suffix(path, "/traces.otf2"))
		path[n - strlen("/traces.otf2")] = '\0';
	char *base = g_path_get_basename(path);
	const char *underscore = strrchr(base, '_');
	int rank = -1;
	if (underscore && underscore[1] && strspn(underscore + 1, "0123456789") == strlen(underscore + 1))
		rank = atoi(underscore + 1);
	g_free(base);
	g_free(path);
	return rank;
}

/* What the first look at an archive finds: its first event, and its clock's offset to rank 0's (StarPU-MPI). */
struct clock_info
{
	uint64_t first;
	int64_t offset_ns;
};

static OTF2_CallbackCode origin_clock(void *arg, uint64_t resolution, uint64_t offset, uint64_t length, uint64_t realtime)
{
	(void)resolution;
	(void)length;
	(void)realtime;
	((struct clock_info *)arg)->first = offset;
	return OTF2_CALLBACK_SUCCESS;
}

/* TRACE_MPI_MARK's offset, 0 when absent (not an MPI process, or one machine's clock). */
static int64_t mpi_offset_of(const char *s)
{
	int rank, size;
	long long offset;
	if (strncmp(s, TRACE_MPI_MARK, strlen(TRACE_MPI_MARK)) == 0 && sscanf(s + strlen(TRACE_MPI_MARK), "%d %d %lld", &rank, &size, &offset) == 3)
		return offset;
	return 0;
}

static OTF2_CallbackCode origin_string(void *arg, OTF2_StringRef self, const char *s)
{
	(void)self;
	int64_t offset = mpi_offset_of(s);
	if (offset)
		((struct clock_info *)arg)->offset_ns = offset;
	return OTF2_CALLBACK_SUCCESS;
}

/* The clock of each archive, and the earliest first event on rank 0's clock: the common time base. */
static void common_origin(struct converter *c, GArray *clocks)
{
	uint64_t origin = UINT64_MAX;
	for (guint i = 0; i < c->opt.inputs->len; i++) {
		struct clock_info *info = &g_array_index(clocks, struct clock_info, i);
		char *anchor = anchor_of(g_ptr_array_index(c->opt.inputs, i));
		OTF2_Reader *reader = anchor ? OTF2_Reader_Open(anchor) : NULL;
		g_free(anchor);
		if (!reader)
			continue; /* reported when its turn comes */
		OTF2_Reader_SetSerialCollectiveCallbacks(reader);
		OTF2_GlobalDefReader *defs = OTF2_Reader_GetGlobalDefReader(reader);
		if (defs) {
			OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
			OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, origin_clock);
			OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, origin_string);
			OTF2_Reader_RegisterGlobalDefCallbacks(reader, defs, cb, info);
			OTF2_GlobalDefReaderCallbacks_Delete(cb);
			uint64_t n;
			OTF2_Reader_ReadAllGlobalDefinitions(reader, defs, &n);
			OTF2_Reader_CloseGlobalDefReader(reader, defs);
		}
		OTF2_Reader_Close(reader);
		uint64_t first = (uint64_t)((int64_t)info->first + info->offset_ns);
		if (first < origin)
			origin = first;
	}
	c->common_origin = origin == UINT64_MAX ? 0 : origin;
}

static gint by_time(gconstpointer a, gconstpointer b)
{
	const struct message *x = a, *y = b;
	return (x->date > y->date) - (x->date < y->date);
}

/* The StarPU-MPI messages, to the formats (comms.rec: comms_rec.c, paje.trace's links: paje.c): each receive meets
 * the oldest send of the same source, destination and tag (MPI keeps their order). */
static void emit_messages(struct converter *c)
{
	g_array_sort(c->sends, by_time);
	g_array_sort(c->recvs, by_time);
	GHashTable *queues = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_queue_free);
	for (guint i = 0; i < c->sends->len; i++) {
		const struct message *m = &g_array_index(c->sends, struct message, i);
		char *key = g_strdup_printf("%d %d %" PRIu64, m->self, m->peer, m->tag);
		GQueue *q = g_hash_table_lookup(queues, key);
		if (!q) {
			q = g_queue_new();
			g_hash_table_insert(queues, key, q);
		} else {
			g_free(key);
		}
		g_queue_push_tail(q, (gpointer)m);
	}
	for (guint i = 0; i < c->recvs->len; i++) {
		const struct message *r = &g_array_index(c->recvs, struct message, i);
		char key[64];
		snprintf(key, sizeof(key), "%d %d %" PRIu64, r->peer, r->self, r->tag);
		GQueue *q = g_hash_table_lookup(queues, key);
		const struct message *m = q ? g_queue_pop_head(q) : NULL;
		if (!m)
			continue; /* its sender's archive was not given */
		struct astro_trace_message e = { .src = m->self, .dst = r->self, .tag = r->tag, .send_date = m->date,
						 .recv_date = MAX(r->date, m->date), .send_handle = m->handle, .recv_handle = r->handle,
						 .size = r->size, .name = m->name, .recorded_recv_date = r->date };
		trace_formats_message(&c->opt.formats, &e);
	}
	g_hash_table_destroy(queues);
}

static void tables_new(struct converter *c)
{
	memset(c->param_map, -1, sizeof(c->param_map));
	memset(c->attr_map, -1, sizeof(c->attr_map));
	c->strings = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	c->regions = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_region);
	c->locations = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, free_location);
	c->tasks = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, free_task);
	c->data = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, free_data);
	c->metric_members = g_hash_table_new(g_direct_hash, g_direct_equal);
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

static void tables_free(struct converter *c)
{
	gflops_fini(&c->gflops);
	g_hash_table_destroy(c->tasks);
	g_hash_table_destroy(c->data);
	g_hash_table_destroy(c->metric_members);
	g_hash_table_destroy(c->ended);
	g_hash_table_destroy(c->runtime_jobs);
	g_free(c->ended_ring);
	g_hash_table_destroy(c->metric_classes);
	g_hash_table_destroy(c->locations);
	g_hash_table_destroy(c->regions);
	g_hash_table_destroy(c->strings);
}

struct ranked
{
	int rank;
	char *input;
};

static gint by_rank(gconstpointer a, gconstpointer b)
{
	const struct ranked *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static void options_free(struct options *o)
{
	g_ptr_array_free(o->inputs, TRUE);
	trace_formats_free(&o->formats);
}

int trace_convert_main(int argc, char **argv)
{
	struct converter c;
	memset(&c, 0, sizeof(c));
	int ret = parse(&c.opt, argc, argv);
	if (!ret)
		trace_builtin_formats_register();
	if (ret || (ret = trace_formats_select(&c.opt.formats)) != 0) {
		options_free(&c.opt);
		return ret < 0 ? 0 : 1;
	}
	if (c.opt.formats.list) {
		trace_formats_print(&c.opt.formats, stdout);
		options_free(&c.opt);
		return 0;
	}
	/* Every input checked before any output is created: a wrong name leaves nothing behind. */
	for (guint i = 0; i < c.opt.inputs->len; i++)
		if (check_input(g_ptr_array_index(c.opt.inputs, i))) {
			options_free(&c.opt);
			return 1;
		}
	if (c.opt.dir && g_mkdir_with_parents(c.opt.dir, 0777) < 0) {
		options_free(&c.opt);
		return error("cannot create the output directory %s (%s)", c.opt.dir, strerror(errno));
	}
	/* Several archives: sorted by rank (their <id>, else their order), each prefixed "<rank>_" (zero-padded as StarPU does). */
	guint n = c.opt.inputs->len;
	GArray *ranked = g_array_new(FALSE, FALSE, sizeof(struct ranked));
	bool ids_usable = true;
	for (guint i = 0; i < n; i++) {
		struct ranked r = { rank_of(g_ptr_array_index(c.opt.inputs, i)), g_ptr_array_index(c.opt.inputs, i) };
		for (guint k = 0; k < ranked->len; k++)
			if (g_array_index(ranked, struct ranked, k).rank == r.rank)
				ids_usable = false;
		if (r.rank < 0)
			ids_usable = false;
		g_array_append_val(ranked, r);
	}
	for (guint i = 0; i < n && !ids_usable; i++)
		g_array_index(ranked, struct ranked, i).rank = (int)i;
	g_array_sort(ranked, by_rank);
	int width = snprintf(NULL, 0, "%d", g_array_index(ranked, struct ranked, n - 1).rank);
	c.multi = n > 1;

	otf2_first_error[0] = '\0';
	OTF2_ErrorCallback previous = OTF2_Error_RegisterCallback(otf2_error, NULL);
	GArray *clocks = g_array_sized_new(FALSE, TRUE, sizeof(struct clock_info), n);
	g_array_set_size(clocks, n);
	if (c.multi)
		common_origin(&c, clocks);
	c.sends = g_array_new(FALSE, FALSE, sizeof(struct message));
	c.recvs = g_array_new(FALSE, FALSE, sizeof(struct message));
	c.message_names = g_string_chunk_new(256);

	if (c.opt.number_events)
		number_events_init(&c.nevents);
	struct astro_trace_format_options format_options = {
		.dir = c.opt.dir ? c.opt.dir : "", .nprocesses = (int)n, .colors = c.opt.colors, .no_events = c.opt.no_events,
		.no_counter = c.opt.no_counter, .no_bus = c.opt.no_bus, .no_flops = c.opt.no_flops, .label_deps = c.opt.label_deps,
		.no_smooth = c.opt.no_smooth, .memory_states = c.opt.memory_states, .no_acquire = c.opt.no_acquire,
		.internal = c.opt.internal, .use_task_color = c.opt.use_task_color, .number_events = c.opt.number_events, .paje = c.opt.paje,
	};
	trace_formats_begin(&c.opt.formats, &format_options);

	for (guint i = 0; i < n && ret == 0; i++) {
		const struct ranked *r = &g_array_index(ranked, struct ranked, i);
		c.input = r->input;
		c.rank = c.multi ? r->rank : 0;
		if (c.multi) {
			snprintf(c.pre, sizeof(c.pre), "%0*d_", width, r->rank);
			/* This archive's clock on rank 0's: its events shift by the offset StarPU-MPI measured. */
			guint input = 0;
			while (input < n && g_ptr_array_index(c.opt.inputs, input) != r->input)
				input++;
			int64_t offset = input < n ? g_array_index(clocks, struct clock_info, input).offset_ns : 0;
			c.origin = (uint64_t)((int64_t)c.common_origin - offset);
		}
		tables_new(&c);
		ret = convert(&c);
		if (ret == 0)
			write_remaining(&c);
		tables_free(&c);
	}
	OTF2_Error_RegisterCallback(previous, NULL);
	if (ret == 0 && c.multi)
		emit_messages(&c);
	g_array_free(c.sends, TRUE);
	g_array_free(c.recvs, TRUE);
	g_string_chunk_free(c.message_names);
	g_array_free(clocks, TRUE);

	trace_formats_end(&c.opt.formats);
	if (c.opt.formats.failed)
		c.failed = true;
	if (c.opt.number_events) {
		/* Written last, from what was read: a failed conversion leaves none. */
		if (ret == 0) {
			FILE *f = open_output(&c, "number_events.data");
			number_events_write(&c.nevents, f);
			close_output(&c, f, "number_events.data");
		}
		number_events_fini(&c.nevents);
	}
	if (c.failed)
		ret = 1;
	g_array_free(ranked, TRUE);
	options_free(&c.opt);
	return ret;
}
