/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An archive's events, decoded into the formats' stream (convert_stream.c)
 * as OTF2's global reader hands them over, in time order across locations:
 * the regions entered and left (the runtime's states, the tasks, the
 * application's states), the parameter events (submissions, dependencies,
 * pushes and pops, handles, transfers, memory states, components, messages,
 * user events...), the sampled counters (metrics). schema.h says what the
 * recorder writes and which shortcuts it takes: a location's previous events
 * tell what an event leaves out.
 */
#include <inttypes.h>
#include <string.h>
#include "converter.h"

static struct location *location_of(struct converter *c, OTF2_LocationRef id)
{
	struct location *l = g_hash_table_lookup(c->locations, &id);
	if (!l) {
		convert_error("%s: events of location %" PRIu64 ", which the archive does not define: the archive is corrupt", c->input, (uint64_t)id);
		c->failed = true;
	}
	return l;
}

/* Enters the state of the task l runs, now that its handles are known. */
static void flush_pending(struct converter *c, struct location *l)
{
	if (!l->task_pending)
		return;
	l->task_pending = false;
	convert_emit_state(c, l, l->task_region, l->task_ts, false, 0, convert_task(c, l->task_job));
}

static void counter(struct converter *c, const char *name, long *value, long delta, uint64_t ts)
{
	*value += delta;
	if (*value < 0)
		*value = 0;
	if (c->opt.no_counter)
		return;
	convert_emit_counter(c, ASTRO_TRACE_COUNTER_RUNTIME, name, ts, (double)*value);
}

/* The scheduler's gft at ts (gflops_flush's writer). */
static void gft_emit(void *arg, uint64_t ts, double total)
{
	struct converter *c = arg;
	convert_emit_counter(c, ASTRO_TRACE_COUNTER_GFLOPS, "GFlop/s", ts, total);
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
	convert_emit_counter(c, ASTRO_TRACE_COUNTER_GFLOPS, track, from, rate);
	convert_emit_counter(c, ASTRO_TRACE_COUNTER_GFLOPS, track, end, 0.0);
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
		convert_error("%s: an event refers to region %u, which the archive does not define: the archive is corrupt", c->input, ref);
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
		convert_attrs(c, list, &a);
		uint64_t job = a.has[A_JOB_ID] ? a.v[A_JOB_ID].uint64 : l->popped ? l->last_pop : 0;
		l->popped = false;
		struct task *t = convert_task(c, job);
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
				convert_emit_dependency(c, 2, d->pred, job, d->kind, d->flow, ts, l->id);
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
		if (t->numa_nodes)
			g_array_set_size(t->numa_nodes, 0);
		l->task_pending = true;
		l->task_ts = ts;
		l->task_region = r;
		return OTF2_CALLBACK_SUCCESS;
	}
	convert_emit_state(c, l, r, ts, false, 0, NULL);
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
		convert_error("%s: a Leave event without its Enter on %s: the archive is corrupt", c->input, l->name);
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
		t = convert_task(c, l->task_job);
		t->end_ts = ts;
		if (l->worker && !c->opt.no_flops)
			task_gflops(c, l, ts, t->flops);
	}
	convert_emit_state(c, l, r, begin, true, ts, t);
	if (t)
		convert_task_done(c, t);
	return OTF2_CALLBACK_SUCCESS;
}

/* A component's address, told apart from the same address in another process's archive. */
static uint64_t component_key(const struct converter *c, uint64_t address)
{
	return address ? address ^ ((uint64_t)(unsigned)c->rank << 56) : 0; /* 0: the policy */
}

/* The bytes allocated on node change by delta at ts (an allocation, or a free at the end of its Freeing state): the
 * formats' event, with the node's bytes now, and the node's Used (MB) counter. */
static void node_used(struct converter *c, const struct location *l, unsigned node, int64_t delta, uint64_t ts)
{
	uint64_t *used = node < 64 ? &c->node_used[node] : NULL;
	if (used)
		*used = delta < 0 && (uint64_t)-delta > *used ? 0 : *used + (uint64_t)delta;
	convert_emit_event(c, l, ASTRO_TRACE_EVENT_ALLOCATION, ts,
			   &(struct astro_trace_event){ .node = (int)node, .value = delta, .size = used ? *used : 0 });
	if (!used)
		return;
	char track[64];
	snprintf(track, sizeof(track), "MEMMANAGER%u Used (MB)", node);
	convert_emit_counter(c, ASTRO_TRACE_COUNTER_MEMORY, track, ts, (double)c->node_used[node] / (1 << 20));
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
		struct astro_trace_job e = { .job = value, .name = a->has[A_NAME] ? convert_string(c, a->v[A_NAME].stringRef) : "runtime",
					     .acquire = acquire, .date = convert_since_origin(c, ts) };
		trace_formats_job(&c->opt.formats, &e);
		return;
	}
	struct astro_trace_event e = { .src_node = (int)src, .node = (int)dst };
	if (p == P_DATA_STATE) {
		e.handle = value;
		e.value = a->has[A_COHERENCY] ? a->v[A_COHERENCY].uint32 : 0;
		convert_emit_event(c, l, ASTRO_TRACE_EVENT_DATA_STATE, ts, &e);
	} else if (p == P_WONT_USE) {
		e.handle = value;
		convert_emit_event(c, l, ASTRO_TRACE_EVENT_WONT_USE, ts, &e);
	} else {
		e.value = (int64_t)value;
		e.handle = a->has[A_HANDLE] ? a->v[A_HANDLE].uint64 : 0;
		e.prefetch = a->has[A_PREFETCH] ? (int)a->v[A_PREFETCH].uint32 : 0;
		convert_emit_event(c, l, ASTRO_TRACE_EVENT_DATA_REQUEST, ts, &e);
	}
}

/* A task submitted (value: its job), with its attributes, or with those of the previous submit here when it has none
 * (schema.h's shortcuts). */
static void task_submitted(struct converter *c, struct location *l, uint64_t value, const struct attrs *a, uint64_t ts)
{
	struct task *t = convert_task(c, value);
	t->submitted = true;
	t->submit_ts = ts;
	if (a->has[A_NAME]) {
		/* The recorder leaves Model out when it is the name (a codelet without performance model); "": no name. */
		const char *name = convert_string(c, a->v[A_NAME].stringRef);
		l->prev_name = *name ? name : NULL;
		l->prev_model = a->has[A_MODEL] ? convert_string(c, a->v[A_MODEL].stringRef) : l->prev_name;
		l->submitted = true;
	}
	/* Neither: those of the previous submit here. */
	if (l->submitted) {
		if (!t->name)
			t->name = l->prev_name;
		t->model = l->prev_model;
	}
	if (a->has[A_TAG]) {
		t->has_tag = true;
		t->tag = a->v[A_TAG].uint64;
	}
	l->prev_has_tag = t->has_tag;
	l->prev_tag = t->tag;
	l->prev_job = value;
	if (a->has[A_PRIORITY])
		t->priority = a->v[A_PRIORITY].int32;
	if (a->has[A_COLOR])
		t->color = a->v[A_COLOR].uint32;
	if (a->has[A_ITERATION])
		t->iteration = a->v[A_ITERATION].int64;
	if (a->has[A_SUBITERATION])
		t->subiteration = a->v[A_SUBITERATION].int64;
	counter(c, "nsubmitted", &c->nsubmitted, 1, ts);
}

/* The tag (value) of the task submitted last here. */
static void task_tagged(struct converter *c, struct location *l, uint64_t value)
{
	/* Written right after its submit, at the same date: that task has not ended yet. */
	struct task *t = g_hash_table_lookup(c->tasks, &l->prev_job);
	if (t) {
		t->has_tag = true;
		t->tag = value;
	}
	l->prev_has_tag = true;
	l->prev_tag = value;
}

/* Job value pushed to the scheduler or popped by a worker: the formats' event, the nready and nsubmitted counters. */
static void task_pushed_or_popped(struct converter *c, struct location *l, int p, uint64_t value, const struct attrs *a, uint64_t ts)
{
	if (p == P_POP) {
		l->last_pop = value;
		l->popped = true;
	}
	struct task *t = g_hash_table_lookup(c->tasks, &value);
	int32_t prio = a->has[A_PRIORITY] ? a->v[A_PRIORITY].int32 : (t ? t->priority : 0);
	convert_emit_event(c, l, p == P_PUSH ? ASTRO_TRACE_EVENT_PUSH : ASTRO_TRACE_EVENT_POP, ts,
			   &(struct astro_trace_event){ .job = value, .priority = prio, .worker = l->worker ? l->workerid : -1 });
	counter(c, "nready", &c->nready, p == P_PUSH ? 1 : -1, ts);
	if (p == P_POP)
		counter(c, "nsubmitted", &c->nsubmitted, -1, ts);
}

/* A task (JobId) waits for job value (P_DEPENDENCY) or for tag value (P_TAG_DEPENDENCY; JobId is the tag of the
 * submit just before when it is not given). */
static void task_dependency(struct converter *c, struct location *l, int p, uint64_t value, struct attrs *a, uint64_t ts)
{
	if (p == P_TAG_DEPENDENCY && !a->has[A_JOB_ID] && l->prev_has_tag) {
		a->has[A_JOB_ID] = true; /* the Tag of the submit just before */
		a->v[A_JOB_ID].uint64 = l->prev_tag;
	}
	if (!a->has[A_JOB_ID])
		return;
	if (p == P_TAG_DEPENDENCY || (a->has[A_DEP_KIND] && a->v[A_DEP_KIND].uint8 == 2)) {
		/* Tags: declared only (drawn in dag.dot). */
		convert_emit_dependency(c, 0, value, a->v[A_JOB_ID].uint64, 2, 0, ts, l->id);
		return;
	}
	if (dag_hidden(c, value) || dag_hidden(c, a->v[A_JOB_ID].uint64))
		return; /* drawn only when both ends are (-no-acquire, -internal) */
	struct task *t = convert_task(c, a->v[A_JOB_ID].uint64);
	struct dep d = { value, a->has[A_DEP_KIND] ? a->v[A_DEP_KIND].uint8 : 0, 0 };
	convert_emit_dependency(c, 0, value, t->job, d.kind, 0, ts, l->id);
	/* The flow starts when the predecessor ends: now if it has ended already (remembered); else at its end. One
	 * not seen yet is made (declared before its submission); one that ended and was forgotten comes back empty:
	 * no record is written for it (convert_write_remaining). */
	const struct ended *e = g_hash_table_contains(c->tasks, &value) ? NULL : g_hash_table_lookup(c->ended, &value);
	if (e && !t->executed) {
		d.flow = ++c->nflows;
		convert_emit_dependency(c, 1, value, t->job, d.kind, d.flow, e->end_ts, e->location);
	} else if (!e) {
		struct task *pred = convert_task(c, value);
		pred->succs = convert_append(pred->succs, &t->job, sizeof(t->job));
	}
	t->deps = convert_append(t->deps, &d, sizeof(d));
}

/* A handle (value) of the task starting here, with its mode and size. */
static void task_handle(struct converter *c, struct location *l, uint64_t value, const struct attrs *a)
{
	struct task *t = convert_task(c, l->task_job);
	struct handle_ref h = { value, a->has[A_MODE] ? a->v[A_MODE].uint32 : 0, a->has[A_SIZE] ? a->v[A_SIZE].uint64 : 0 };
	t->handles = convert_append(t->handles, &h, sizeof(h));
	/* NumaNodes, kept beside the handles once one has them (-1 for those without). */
	if (a->has[A_NUMA_NODES] || t->numa_nodes) {
		int64_t none = -1;
		while (LEN(t->numa_nodes) + 1 < LEN(t->handles))
			t->numa_nodes = convert_append(t->numa_nodes, &none, sizeof(none));
		int64_t bits = a->has[A_NUMA_NODES] ? a->v[A_NUMA_NODES].int64 : -1;
		t->numa_nodes = convert_append(t->numa_nodes, &bits, sizeof(bits));
	}
}

/* A handle registered (value): its record, and the formats' event. */
static void data_registered(struct converter *c, struct location *l, uint64_t value, const struct attrs *a, uint64_t ts)
{
	struct data *d = convert_data_new(c, value);
	d->size = a->has[A_SIZE] ? a->v[A_SIZE].uint64 : 0;
	d->home = a->has[A_HOME_NODE] ? a->v[A_HOME_NODE].int32 : 0;
	d->description = g_strdup(a->has[A_DESCRIPTION] ? convert_string(c, a->v[A_DESCRIPTION].stringRef) : "");
	convert_emit_event(c, l, ASTRO_TRACE_EVENT_REGISTER, ts, &(struct astro_trace_event){ .handle = value, .size = d->size, .node = d->home });
}

/* A memory manager's state begins or ends on a node (value: the bytes); the end of a free gives its bytes back. */
static void memory_state(struct converter *c, struct location *l, int p, uint64_t value, const struct attrs *a, uint64_t ts)
{
	static const char *const aliases[] = TRACE_MEMORY_STATES;
	unsigned node = a->has[A_DST_NODE] ? a->v[A_DST_NODE].uint32 : 0;
	unsigned state = a->has[A_MEMORY_STATE] ? a->v[A_MEMORY_STATE].uint8 : 0;
	if (state >= G_N_ELEMENTS(aliases))
		return; /* a newer recorder's */
	if (p == P_MEMORY_STATE_END && aliases[state][0] == 'F')
		node_used(c, l, node, -(int64_t)value, ts);
	convert_emit_event(c, l, p == P_MEMORY_STATE_BEGIN ? ASTRO_TRACE_EVENT_MEMORY_STATE_BEGIN : ASTRO_TRACE_EVENT_MEMORY_STATE_END, ts,
			   &(struct astro_trace_event){ .node = (int)node, .name = aliases[state], .size = value,
							.handle = a->has[A_HANDLE] ? a->v[A_HANDLE].uint64 : 0 });
}

/* A transfer between memory nodes begins or ends (value: the bytes). */
static void transfer(struct converter *c, struct location *l, int p, uint64_t value, const struct attrs *a, uint64_t ts)
{
	unsigned src = a->has[A_SRC_NODE] ? a->v[A_SRC_NODE].uint32 : 0, dst = a->has[A_DST_NODE] ? a->v[A_DST_NODE].uint32 : 0;
	convert_emit_event(c, l, p == P_TRANSFER_BEGIN ? ASTRO_TRACE_EVENT_TRANSFER_BEGIN : ASTRO_TRACE_EVENT_TRANSFER_END, ts,
			   &(struct astro_trace_event){ .handle = a->has[A_HANDLE] ? a->v[A_HANDLE].uint64 : 0, .size = value,
							.src_node = (int)src, .node = (int)dst });
}

/* A scheduling component made (value: its address) or connected, or a task (value: its job) pushed into or pulled out
 * of one (trace.html). */
static void component_param(struct converter *c, struct location *l, int p, uint64_t value, const struct attrs *a, uint64_t ts)
{
	if (p == P_COMPONENT_NEW) {
		if (a->has[A_NAME])
			convert_emit_event(c, l, ASTRO_TRACE_EVENT_COMPONENT_NEW, ts,
					   &(struct astro_trace_event){ .component = component_key(c, value), .name = convert_string(c, a->v[A_NAME].stringRef),
									.worker = a->has[A_WORKER] ? a->v[A_WORKER].int32 : -1 });
	} else if (p == P_COMPONENT_CONNECT) {
		if (a->has[A_COMPONENT])
			convert_emit_event(c, l, ASTRO_TRACE_EVENT_COMPONENT_CONNECT, ts,
					   &(struct astro_trace_event){ .component = component_key(c, value),
									.from = component_key(c, a->v[A_COMPONENT].uint64) });
	} else {
		convert_emit_event(c, l, p == P_COMPONENT_PUSH ? ASTRO_TRACE_EVENT_COMPONENT_PUSH : ASTRO_TRACE_EVENT_COMPONENT_PULL, ts,
				   &(struct astro_trace_event){
					   .job = value,
					   .from = a->has[A_FROM_COMPONENT] ? component_key(c, a->v[A_FROM_COMPONENT].uint64) : 0,
					   .component = a->has[A_COMPONENT] ? component_key(c, a->v[A_COMPONENT].uint64) : 0 });
	}
}

/* A StarPU-MPI message sent or received (value: its bytes), kept until every archive is read (convert_mpi.c). */
static void mpi_message(struct converter *c, int p, uint64_t value, const struct attrs *a, uint64_t ts)
{
	if (a->has[A_PEER] && a->has[A_TAG]) {
		struct message m = { c->rank, a->v[A_PEER].int32, a->v[A_TAG].uint64, a->has[A_HANDLE] ? a->v[A_HANDLE].uint64 : 0, value,
				     convert_since_origin(c, ts), NULL };
		const struct data *d = m.handle ? g_hash_table_lookup(c->data, &m.handle) : NULL;
		if (d && d->name && *d->name)
			m.name = g_string_chunk_insert_const(c->message_names, d->name);
		g_array_append_val(p == P_MPI_SEND ? c->sends : c->recvs, m);
	}
}

/* A burst begins (value: its value) or ends: a counter of the formats, named by the burst's key, labelled by its value's name. */
static void burst(struct converter *c, int p, uint64_t value, const struct attrs *a, uint64_t ts)
{
	if (a->has[A_NAME]) {
		const char *key = convert_string(c, a->v[A_NAME].stringRef);
		/* The value while the burst lasts, 0 after. */
		const char *label = NULL;
		if (p == P_BURST_BEGIN && g_hash_table_size(c->value_names)) {
			char *k = g_strdup_printf("%" G_GUINT64_FORMAT " %s", value, key);
			label = g_hash_table_lookup(c->value_names, k);
			g_free(k);
		}
		struct astro_trace_counter e = { .kind = ASTRO_TRACE_COUNTER_BURST, .name = key, .date = convert_since_origin(c, ts),
						 .value = p == P_BURST_BEGIN ? (double)value : 0.0, .raw = p == P_BURST_BEGIN ? value : 0,
						 .label = label };
		trace_formats_counter(&c->opt.formats, &e);
	}
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
	convert_attrs(c, list, &a);
	if (c->opt.number_events)
		number_events_param(&c->nevents, p, a.has[A_DEP_KIND] ? a.v[A_DEP_KIND].uint8 : a.has[A_MEMORY_STATE] ? a.v[A_MEMORY_STATE].uint8 :
						    a.has[A_COHERENCY] ? (uint8_t)a.v[A_COHERENCY].uint32 : 0);
	if (p != P_HANDLE)
		flush_pending(c, l);
	c->last_ts = ts;
	switch (p) {
	case P_SUBMIT: task_submitted(c, l, value, &a, ts); break;
	case P_TASK_TAG: task_tagged(c, l, value); break;
	case P_PUSH:
	case P_POP: task_pushed_or_popped(c, l, p, value, &a, ts); break;
	case P_DEPENDENCY:
	case P_TAG_DEPENDENCY: task_dependency(c, l, p, value, &a, ts); break;
	case P_HANDLE: task_handle(c, l, value, &a); break;
	case P_REGISTER: data_registered(c, l, value, &a, ts); break;
	case P_UNREGISTER:
		convert_emit_event(c, l, ASTRO_TRACE_EVENT_UNREGISTER, ts, &(struct astro_trace_event){ .handle = value });
		convert_data_done(c, value); /* the address may be registered again */
		break;
	case P_ALLOCATION: node_used(c, l, a.has[A_DST_NODE] ? a.v[A_DST_NODE].uint32 : 0, (int64_t)value, ts); break;
	case P_MEMORY_STATE_BEGIN:
	case P_MEMORY_STATE_END: memory_state(c, l, p, value, &a, ts); break;
	case P_TRANSFER_BEGIN:
	case P_TRANSFER_END: transfer(c, l, p, value, &a, ts); break;
	case P_DATA_STATE:
	case P_WONT_USE:
	case P_DATA_REQUEST:
	case P_RUNTIME_JOB: coherency_param(c, l, p, value, &a, ts); break;
	case P_BURST_BEGIN:
	case P_BURST_END: burst(c, p, value, &a, ts); break;
	case P_COMPONENT_NEW:
	case P_COMPONENT_CONNECT:
	case P_COMPONENT_PUSH:
	case P_COMPONENT_PULL: component_param(c, l, p, value, &a, ts); break;
	case P_MPI_SEND:
	case P_MPI_RECV: mpi_message(c, p, value, &a, ts); break;
	case P_PAPI:
		if (a.has[A_JOB_ID] && a.has[A_NAME])
			convert_emit_event(c, l, ASTRO_TRACE_EVENT_PAPI, ts,
					   &(struct astro_trace_event){ .job = a.v[A_JOB_ID].uint64, .name = convert_string(c, a.v[A_NAME].stringRef),
									.value = (int64_t)value });
		break;
	case P_USER_EVENT:
		if (!c->opt.no_events) {
			char buf[32];
			snprintf(buf, sizeof(buf), "%" PRIu64, value);
			convert_emit_instant(c, l, 0, buf, value, ts);
		}
		break;
	default: /* P_READY and a newer recorder's */
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
	convert_attrs(c, list, &a);
	const char *s = convert_string(c, sref);
	c->last_ts = ts;
	if (c->opt.number_events)
		number_events_param(&c->nevents, p, 0);
	if (p == P_STRING_EVENT) {
		convert_emit_instant(c, l, 1, s, 0, ts);
	} else if ((p == P_DATA_NAME || p == P_DATA_COORDINATES) && a.has[A_HANDLE]) {
		uint64_t h = a.v[A_HANDLE].uint64;
		struct data *d = g_hash_table_lookup(c->data, &h);
		if (!d)
			d = convert_data_new(c, h);
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
	convert_emit_counter(c, ASTRO_TRACE_COUNTER_SAMPLED, name, ts, value);
	return OTF2_CALLBACK_SUCCESS;
}

void convert_events_callbacks(OTF2_GlobalEvtReaderCallbacks *callbacks)
{
	OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(callbacks, on_enter);
	OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(callbacks, on_leave);
	OTF2_GlobalEvtReaderCallbacks_SetParameterUnsignedIntCallback(callbacks, on_param);
	OTF2_GlobalEvtReaderCallbacks_SetParameterStringCallback(callbacks, on_param_string);
	OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(callbacks, on_metric);
}

void convert_events_end(struct converter *c)
{
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, c->locations);
	while (g_hash_table_iter_next(&it, &k, &v))
		flush_pending(c, v);
	if (gflops_pending(&c->gflops))
		gflops_flush(&c->gflops, UINT64_MAX, gft_emit, c);
	/* Each location's end, in the order of the table (activity.data's last periods keep it). */
	g_hash_table_iter_init(&it, c->locations);
	while (g_hash_table_iter_next(&it, &k, &v))
		convert_emit_event(c, v, ASTRO_TRACE_EVENT_ARCHIVE_END, c->last_ts, &(struct astro_trace_event){ 0 });
}
