/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recorder's task path: each moment the observation hub reports
 * (astrolabe/observe.h) is encoded as a few raw records appended to its
 * thread's own buffer (raw.h): no lock and no OTF2 call once the thread has
 * its location, made at its first moment (one lock then). The names a
 * thread meets are numbered once (record_names.c) and kept in its caches.
 * schema.h says what each moment becomes, and which shortcuts leave out
 * what the converter can tell from a location's previous events. At
 * shutdown record_archive.c replays the records into OTF2.
 */
#define _GNU_SOURCE
#include <astrolabe/observe.h>
#include <starpu_profiling.h>
#include <glib.h>
#include <limits.h>
#include <astrolabe/thread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "record.h"
#include "schema.h"

static struct
{
	starpu_pthread_mutex_t lock;            /* the location list */
	struct location *locations;
	unsigned napp_threads;
	uint64_t full_mask, meta_mask;
	unsigned categories;
	int mpi_rank, mpi_size;           /* StarPU-MPI's (ASTRO_MOMENT_MPI_INIT); mpi_size 0: not an MPI process */
	int64_t mpi_offset_ns;
	size_t raw_buffer_bytes;          /* STARPU_TRACE_BUFFER_SIZE */
	char spill_dir[PATH_MAX];         /* where the threads' spill files go: the archive's temporary folder */
} rec = { .lock = STARPU_PTHREAD_MUTEX_INITIALIZER };

/* starpu_iteration_push/pop: the two levels tasks submitted meanwhile carry (-1: none). */
static long iterations[2] = { -1, -1 };
static int iteration_depth;

/* STARPU_PROF_PAPI_EVENTS (counted by counters_papi_task into each task's profiling info): their names, for papi.rec. */
static char **papi_names;
static unsigned npapi;

static unsigned generation;           /* bumped at each session, so a thread's location of an earlier session is not reused */

/* initial-exec: the recorder's per-event look-up is one load, not a __tls_get_addr call (glibc keeps room for a loaded module's few bytes). */
static ASTRO_THREAD_LOCAL_IE struct
{
	struct location *location;
	unsigned generation; /* location belongs to this session: an older one was freed */
} self;

/* ------------------------------------------------------------ locations */

/* Names seen by this thread, by pointer, without the lock of record_names.c. */
static uint32_t cached(struct location *l, enum record_name_kind cache, const char *s)
{
	unsigned slot = (unsigned)(((uintptr_t)s >> 3) % CACHE_SIZE);
	struct cache_entry *c = &l->caches[cache][slot];
	if (c->key == s)
		return c->value;
	uint32_t v = record_name(cache, s);
	c->key = s;
	c->value = v;
	return v;
}

static struct location *location_new(int workerid)
{
	struct location *l = calloc(1, sizeof(*l));
	l->first_ts = UINT64_MAX;
	l->tid = astro_thread_tid();
	l->bindid = workerid >= 0 ? starpu_worker_get_bindid(workerid) : -1;
	starpu_pthread_mutex_lock(&rec.lock);
	if (workerid >= 0) {
		l->id = (uint64_t)workerid;
		snprintf(l->name, sizeof(l->name), "%s%d", starpu_worker_get_type_as_string(starpu_worker_get_type(workerid)),
			 starpu_worker_get_devid(workerid));
	} else {
		l->id = TRACE_APP_LOCATION_BASE + rec.napp_threads++;
		snprintf(l->name, sizeof(l->name), "UserThread%ld", l->tid);
	}
	l->next = rec.locations;
	rec.locations = l;
	starpu_pthread_mutex_unlock(&rec.lock);
	char spill[PATH_MAX + 32];
	snprintf(spill, sizeof(spill), "%s/raw.%llu", rec.spill_dir, (unsigned long long)l->id);
	raw_init(&l->raw, rec.raw_buffer_bytes, spill);
	return l;
}

static inline uint64_t ns_of(double time_us)
{
	return (uint64_t)(int64_t)(time_us * 1000.0); /* one conversion instruction (times are positive) */
}

/* This thread's location; made at its first event, whose date is the location's first. */
static inline struct location *here(const struct astro_event *e)
{
	if (__builtin_expect(self.generation != generation, 0)) { /* 0 (no location yet) is no session's */
		self.location = location_new(e->workerid);
		self.location->first_ts = self.location->last_ts = ns_of(e->time_us);
		self.generation = generation;
	}
	return self.location;
}

static inline uint64_t stamp(struct location *l, double time_us)
{
	uint64_t ts = ns_of(time_us);
	if (ts < l->last_ts)
		ts = l->last_ts; /* OTF2 wants each location's events in order */
	l->last_ts = ts;
	return ts;
}

/* ------------------------------------------------------------- recording */

/* A task's moment, or a state's entry or exit: inlined where it is written (a task's moment in its observer, which the
 * hub calls straight, below). */
#define MOMENT inline __attribute__((always_inline))

/* Each event is appended to the thread's raw buffer with the attributes ADD_* gave it (raw.h); OTF2 encodes them at shutdown. */
static MOMENT void enter(struct location *l, uint64_t ts, uint32_t region)
{
	if (l->depth < MAX_DEPTH)
		l->stack[l->depth] = region;
	l->depth++;
	raw_event(&l->raw, RAW_ENTER, region, ts, 0);
}

/* Leaves region if it is the innermost open one (a moment seen after recording started may end a region never entered). */
static MOMENT void leave(struct location *l, uint64_t ts, uint32_t region)
{
	if (!l->depth || (l->depth <= MAX_DEPTH && l->stack[l->depth - 1] != region)) {
		raw_attr_clear(&l->raw);
		return;
	}
	l->depth--;
	raw_event(&l->raw, RAW_LEAVE, region, ts, 0);
}

static void param(struct location *l, uint64_t ts, enum trace_parameter p, uint64_t value)
{
	raw_event(&l->raw, RAW_PARAM, p, ts, value);
}

static void param_string(struct location *l, uint64_t ts, enum trace_parameter p, const char *s)
{
	raw_event(&l->raw, RAW_PARAM_STRING, p, ts, record_intern(s));
}

/* A sampled counter's value (an OTF2 metric event of the counter's class). */
static void metric(struct location *l, uint64_t ts, uint32_t metric, double value)
{
	raw_event(&l->raw, RAW_METRIC, metric, ts, raw_double_bits(value));
}

/* The attributes of the next event (schema.h's types). */
#define ADD_U64(l, a, v) raw_attr(&(l)->raw, (a), OTF2_TYPE_UINT64, (uint64_t)(v))
#define ADD_U32(l, a, v) raw_attr(&(l)->raw, (a), OTF2_TYPE_UINT32, (uint32_t)(v))
#define ADD_I32(l, a, v) raw_attr(&(l)->raw, (a), OTF2_TYPE_INT32, (uint32_t)(int32_t)(v))
#define ADD_STR(l, a, v) raw_attr(&(l)->raw, (a), OTF2_TYPE_STRING, (uint32_t)(v))
#define ADD_U8(l, a, v) raw_attr(&(l)->raw, (a), OTF2_TYPE_UINT8, (uint8_t)(v))
#define ADD_I64(l, a, v) raw_attr(&(l)->raw, (a), OTF2_TYPE_INT64, (uint64_t)(int64_t)(v))
#define ADD_DOUBLE(l, a, v) raw_attr(&(l)->raw, (a), OTF2_TYPE_DOUBLE, raw_double_bits(v))

/* The NUMA nodes (bit n: the RAM node of NUMA id n) holding a valid copy of h; -1 when none does (only on a device). */
static int64_t numa_nodes_of(starpu_data_handle_t h)
{
	int64_t bits = 0;
	unsigned nodes = starpu_memory_nodes_get_count();
	for (unsigned m = 0; m < nodes; m++) {
		if (starpu_node_get_kind(m) != STARPU_CPU_RAM || !starpu_data_is_on_node(h, m))
			continue;
		int id = starpu_memory_node_get_devid(m);
		if (id >= 0 && id < 63)
			bits |= INT64_C(1) << id;
	}
	return bits ? bits : -1;
}

static MOMENT void task_started(struct location *l, uint64_t ts, const struct astro_event *e)
{
	/* Its data is there: FetchingInput ends. The kernel reports DATA_FETCHED just before STARTED, at the same instant,
	 * so the recorder does not take that moment (a hub call fewer per task). */
	if (rec.categories & (C_TASK_VERBOSE | C_WORKER))
		leave(l, ts, S_FETCHING_INPUT);
	if (!(rec.categories & C_TASK))
		return;
	struct starpu_task *task = e->task;
	const char *name = starpu_task_get_name(task);
	uint32_t region = cached(l, NAME_TASK_REGION, name ? name : "unknown");
	unsigned n = STARPU_TASK_GET_NBUFFERS(task);
	size_t total = 0;
	for (unsigned i = 0; i < n; i++)
		total += starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, i));
	/* Attributes cost bytes and time in every event: only those that are not zero or known. */
	if (!l->popped || l->last_pop != e->job_id)
		ADD_U64(l, A_JOB_ID, e->job_id);
	l->popped = false;
	l->in_task = true;
	l->task_region = region;
	if (n) {
		ADD_U32(l, A_FOOTPRINT, starpu_task_data_footprint(task));
		ADD_U64(l, A_SIZE, total);
	}
	if (task->flops != 0.0)
		ADD_DOUBLE(l, A_FLOPS, task->flops);
	/* Resolved at submission (starpu_sched_ctx_set_context's default included) and kept until the end. */
	if (STARPU_UNLIKELY(task->sched_ctx != 0))
		ADD_U32(l, A_SCHED_CTX, task->sched_ctx);
	enter(l, ts, region);
	for (unsigned i = 0; i < n; i++) {
		raw_check_room(&l->raw);
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
		ADD_U32(l, A_MODE, (uint32_t)STARPU_TASK_GET_MODE(task, i));
		ADD_U64(l, A_SIZE, starpu_data_get_size(h));
		if (STARPU_UNLIKELY(rec.categories & C_TASK_VERBOSE_EXTRA))
			ADD_I64(l, A_NUMA_NODES, numa_nodes_of(h));
		param(l, ts, P_HANDLE, (uint64_t)(uintptr_t)h);
	}
}

/* Writes the tag dependencies held back, in full: what follows is not their task's submission. now: the date of the
 * moment that writes them, which may write more after them (room made again for it: raw.h). */
static void tag_deps_flush(struct location *l, uint64_t now)
{
	for (unsigned i = 0; i < l->npending; i++) {
		raw_check_room(&l->raw);
		ADD_U64(l, A_JOB_ID, l->pending[i].child);
		/* At its own date, before the moment's that writes it. */
		raw_event_dated(&l->raw, RAW_PARAM, P_TAG_DEPENDENCY, l->pending[i].ts, l->pending[i].father);
	}
	l->npending = 0;
	raw_make_room(&l->raw, now);
}

static void tag_dep_hold(struct location *l, uint64_t ts, uint64_t child, uint64_t father)
{
	if (l->npending == MAX_PENDING_TAG_DEPS || (l->npending && l->pending[0].child != child))
		tag_deps_flush(l, ts);
	l->pending[l->npending++] = (struct pending_tag_dep){ ts, child, father };
}

static MOMENT void task_submitted(struct location *l, uint64_t ts, const struct astro_event *e)
{
	struct starpu_task *task = e->task;
	bool tag_deps = l->npending && task->use_tag && task->tag_id == l->pending[0].child;
	if (l->npending && !tag_deps)
		tag_deps_flush(l, ts);
	const char *name = starpu_task_get_name(task);
	const char *model = starpu_task_get_model_name(task);
	if (!l->submitted || name != l->prev_name || model != l->prev_model) {
		/* "" says "no name" to a reader that would otherwise take the previous submit's. */
		ADD_STR(l, A_NAME, cached(l, NAME_STRING, name ? name : ""));
		if (model && model != name)
			ADD_STR(l, A_MODEL, cached(l, NAME_STRING, model));
		l->submitted = true;
		l->prev_name = name;
		l->prev_model = model;
	}
	if (task->priority)
		ADD_I32(l, A_PRIORITY, task->priority);
	long it = __atomic_load_n(&iterations[0], __ATOMIC_RELAXED);
	if (it >= 0) {
		ADD_I64(l, A_ITERATION, it);
		long sub = __atomic_load_n(&iterations[1], __ATOMIC_RELAXED);
		if (sub >= 0)
			ADD_I64(l, A_SUBITERATION, sub);
	}
	unsigned color = task->color ? task->color : (task->cl ? task->cl->color : 0);
	if (color)
		ADD_U32(l, A_COLOR, color);
	param(l, ts, P_SUBMIT, e->job_id);
	/* A tag for dependencies (use_tag), or one only naming the task (STARPU_TAG_ONLY): both are the task's Tag. */
	if (task->use_tag || task->tag_id)
		param(l, ts, P_TASK_TAG, task->tag_id); /* at the submit's date: no new timestamp */
	if (tag_deps) {
		/* At the submit's date: OTF2 writes no new timestamp. */
		for (unsigned i = 0; i < l->npending; i++)
			param(l, ts, P_TAG_DEPENDENCY, l->pending[i].father);
		l->npending = 0;
	}
}

static void data_coordinates(struct location *l, uint64_t ts, starpu_data_handle_t h)
{
	int dims[8];
	unsigned n = starpu_data_get_coordinates_array(h, 8, dims);
	char buf[128] = "";
	size_t len = 0;
	for (unsigned i = 0; i < n && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, i ? " %d" : "%d", dims[i]);
	ADD_U64(l, A_HANDLE, (uint64_t)(uintptr_t)h);
	param_string(l, ts, P_DATA_COORDINATES, buf);
}

static void data_registered(struct location *l, uint64_t ts, const struct astro_event *e)
{
	starpu_data_handle_t h = (starpu_data_handle_t)e->object;
	char desc[128] = "";
	struct starpu_data_interface_ops *ops = starpu_data_get_interface_ops(h);
	if (ops && ops->describe)
		ops->describe(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM), desc, sizeof(desc));
	ADD_U64(l, A_SIZE, e->bytes);
	ADD_I32(l, A_HOME_NODE, (int32_t)e->dst_node);
	ADD_STR(l, A_DESCRIPTION, record_intern(desc));
	param(l, ts, P_REGISTER, (uint64_t)(uintptr_t)h);
}

/* starpu_fxt_start_profiling() / stop (the subscriptions are below). */
static void profiling_switch(int on);

static void trace_mark(struct location *l, uint64_t ts, const struct astro_event *e)
{
	switch ((enum astro_trace_mark)e->nimpl) {
	case ASTRO_TRACE_USER_CODE:
		if (rec.categories & C_USER)
			param(l, ts, P_USER_EVENT, e->other_id);
		return;
	case ASTRO_TRACE_USER_STRING:
		if (!(rec.categories & C_EVENT))
			return;
		break;
	case ASTRO_TRACE_META_STRING:
		break;
	case ASTRO_TRACE_START_PROFILING:
		profiling_switch(1);
		break;
	case ASTRO_TRACE_STOP_PROFILING:
		profiling_switch(0);
		break;
	case ASTRO_TRACE_ITERATION_PUSH:
	case ASTRO_TRACE_ITERATION_POP:
		/* Not an event of its own: the submitted tasks carry it. */
		if (e->nimpl == ASTRO_TRACE_ITERATION_POP) {
			if (iteration_depth > 0 && --iteration_depth < 2)
				__atomic_store_n(&iterations[iteration_depth], -1, __ATOMIC_RELAXED);
		} else if (iteration_depth++ < 2) {
			__atomic_store_n(&iterations[iteration_depth - 1], (long)e->other_id, __ATOMIC_RELAXED);
		}
		return;
	}
	param_string(l, ts, P_STRING_EVENT, e->label ? e->label : "");
}

/* The PAPI counters of a task that ran, once counters_papi_task read them (TASK_ENDED): one event each. */
static void papi_values(struct location *l, uint64_t ts, const struct astro_event *e)
{
#ifdef STARPU_PAPI
	const struct starpu_profiling_task_info *info = e->task->profiling_info;
	if (!info || info->papi_event_set == PAPI_NULL)
		return;
	for (unsigned i = 0; i < npapi && i < PAPI_MAX_HWCTRS; i++) {
		raw_check_room(&l->raw);
		ADD_U64(l, A_JOB_ID, e->job_id);
		ADD_STR(l, A_NAME, cached(l, NAME_STRING, papi_names[i]));
		param(l, ts, P_PAPI, (uint64_t)info->papi_values[i]);
	}
#else
	(void)l;
	(void)ts;
	(void)e;
#endif
}

/* The coherency of handles' copies (starpu_fxt_tool -memory-states) and the runtime's own jobs (dag.dot's acquisitions). */
static void coherency_moment(struct location *l, uint64_t ts, const struct astro_event *e)
{
	uint64_t handle = (uint64_t)(uintptr_t)e->object;
	switch (e->moment) {
	case ASTRO_MOMENT_DATA_STATE:
		ADD_U32(l, A_DST_NODE, e->dst_node);
		if (e->nimpl)
			ADD_U32(l, A_COHERENCY, e->nimpl);
		param(l, ts, P_DATA_STATE, handle);
		break;
	case ASTRO_MOMENT_DATA_WONT_USE: param(l, ts, P_WONT_USE, handle); break;
	case ASTRO_MOMENT_DATA_REQUEST:
		ADD_U64(l, A_HANDLE, handle);
		ADD_U32(l, A_SRC_NODE, e->src_node);
		ADD_U32(l, A_DST_NODE, e->dst_node);
		if (e->nimpl)
			ADD_U32(l, A_PREFETCH, e->nimpl);
		param(l, ts, P_DATA_REQUEST, e->other_id);
		break;
	case ASTRO_MOMENT_RUNTIME_JOB:
		ADD_STR(l, A_NAME, cached(l, NAME_STRING, e->label ? e->label : "runtime"));
		ADD_U64(l, A_HANDLE, handle);
		if (e->nimpl)
			ADD_U32(l, A_ACQUIRE, 1);
		param(l, ts, P_RUNTIME_JOB, e->job_id);
		break;
	default: break;
	}
}

/* A worker popped job_id: SCHED's pop (the next task start may leave its JobId out), then FetchingInput until its data
 * is there (a worker state, recorded by default as StarPU does: WORKER, or TASK_VERBOSE as before). */
static MOMENT void task_popped(struct location *l, uint64_t ts, const struct astro_event *e)
{
	if (rec.categories & C_SCHED) {
		param(l, ts, P_POP, e->job_id);
		l->last_pop = e->job_id;
		l->popped = true;
	}
	if (rec.categories & (C_TASK_VERBOSE | C_WORKER))
		enter(l, ts, S_FETCHING_INPUT);
}

static MOMENT void task_ended(struct location *l, uint64_t ts, const struct astro_event *e)
{
	/* Its start was not recorded when recording started meanwhile. */
	if (l->in_task) {
		l->in_task = false;
		leave(l, ts, l->task_region);
	}
	/* Until its data is released (TASK_DATA_RELEASED, only for a task with buffers). */
	if ((rec.categories & C_TASK_VERBOSE) && STARPU_TASK_GET_NBUFFERS(e->task))
		enter(l, ts, S_PUSHING_OUTPUT);
}

static MOMENT void task_completed(struct location *l, uint64_t ts, const struct astro_event *e)
{
	if (rec.categories & C_TASK_VERBOSE)
		param(l, ts, P_COMPLETED, e->job_id);
	if (npapi)
		papi_values(l, ts, e);
}

/* Job job_id waits for job other_id, or for tag other_id (held back: the next submit may be its tag's task). */
static MOMENT void task_dependency(struct location *l, uint64_t ts, const struct astro_event *e)
{
	if (e->nimpl == ASTRO_DEP_TAG) {
		tag_dep_hold(l, ts, e->job_id, e->other_id);
		return;
	}
	if (l->npending)
		tag_deps_flush(l, ts);
	ADD_U64(l, A_JOB_ID, e->job_id);
	if (e->nimpl)
		ADD_U8(l, A_DEP_KIND, e->nimpl);
	param(l, ts, P_DEPENDENCY, e->other_id);
}

/* A transfer between memory nodes, a memory manager's state, an allocation: their node(s), bytes and handle. */
static void memory_moment(struct location *l, uint64_t ts, const struct astro_event *e)
{
	switch (e->moment) {
	case ASTRO_MOMENT_TRANSFER_BEGIN:
	case ASTRO_MOMENT_TRANSFER_END:
		ADD_U32(l, A_SRC_NODE, e->src_node);
		ADD_U32(l, A_DST_NODE, e->dst_node);
		if (e->object)
			ADD_U64(l, A_HANDLE, (uint64_t)(uintptr_t)e->object);
		param(l, ts, e->moment == ASTRO_MOMENT_TRANSFER_BEGIN ? P_TRANSFER_BEGIN : P_TRANSFER_END, e->bytes);
		break;
	case ASTRO_MOMENT_MEMORY_STATE_BEGIN:
	case ASTRO_MOMENT_MEMORY_STATE_END:
		ADD_U32(l, A_DST_NODE, e->dst_node);
		if (e->nimpl)
			ADD_U8(l, A_MEMORY_STATE, e->nimpl);
		if (e->object)
			ADD_U64(l, A_HANDLE, (uint64_t)(uintptr_t)e->object);
		param(l, ts, e->moment == ASTRO_MOMENT_MEMORY_STATE_BEGIN ? P_MEMORY_STATE_BEGIN : P_MEMORY_STATE_END, e->bytes);
		break;
	default: /* ASTRO_MOMENT_DATA_ALLOCATED */
		ADD_U32(l, A_DST_NODE, e->dst_node);
		param(l, ts, P_ALLOCATION, e->bytes);
		break;
	}
}

/* A handle's name (label), or its coordinates. */
static void data_described(struct location *l, uint64_t ts, const struct astro_event *e)
{
	if (e->label) {
		ADD_U64(l, A_HANDLE, (uint64_t)(uintptr_t)e->object);
		param_string(l, ts, P_DATA_NAME, e->label);
	} else {
		data_coordinates(l, ts, (starpu_data_handle_t)e->object);
	}
}

/* A scheduling component made or connected, or job job_id moved from one component to another: into object for a
 * push, out of object for a pull. */
static void component_moment(struct location *l, uint64_t ts, const struct astro_event *e)
{
	switch (e->moment) {
	case ASTRO_MOMENT_COMPONENT_NEW:
		ADD_STR(l, A_NAME, record_intern(e->label ? e->label : "component"));
		if (e->nimpl)
			ADD_I32(l, A_WORKER, (int32_t)e->nimpl - 1);
		param(l, ts, P_COMPONENT_NEW, (uint64_t)(uintptr_t)e->object);
		break;
	case ASTRO_MOMENT_COMPONENT_CONNECT:
		ADD_U64(l, A_COMPONENT, (uint64_t)(uintptr_t)e->object);
		param(l, ts, P_COMPONENT_CONNECT, e->other_id);
		break;
	case ASTRO_MOMENT_COMPONENT_PUSH:
		if (e->object) /* else a refusal: back to the policy */
			ADD_U64(l, A_COMPONENT, (uint64_t)(uintptr_t)e->object);
		if (e->other_id)
			ADD_U64(l, A_FROM_COMPONENT, e->other_id);
		param(l, ts, P_COMPONENT_PUSH, e->job_id);
		break;
	default: /* ASTRO_MOMENT_COMPONENT_PULL */
		ADD_U64(l, A_COMPONENT, e->other_id);
		ADD_U64(l, A_FROM_COMPONENT, (uint64_t)(uintptr_t)e->object);
		param(l, ts, P_COMPONENT_PULL, e->job_id);
		break;
	}
}

/* StarPU-MPI's start (kept for the definitions: the archive is then named by the rank, starpu_profiling_set_id), and
 * its messages sent and received. */
static void mpi_moment(struct location *l, uint64_t ts, const struct astro_event *e)
{
	if (e->moment == ASTRO_MOMENT_MPI_INIT) {
		__atomic_store_n(&rec.mpi_rank, (int)e->nimpl, __ATOMIC_RELAXED);
		__atomic_store_n(&rec.mpi_size, (int)e->bytes, __ATOMIC_RELAXED);
		__atomic_store_n(&rec.mpi_offset_ns, (int64_t)e->other_id, __ATOMIC_RELAXED);
		return;
	}
	bool send = e->moment == ASTRO_MOMENT_MPI_SEND;
	ADD_I32(l, A_PEER, (int32_t)(send ? e->dst_node : e->src_node));
	ADD_U64(l, A_TAG, e->other_id);
	ADD_U64(l, A_HANDLE, (uint64_t)(uintptr_t)e->object);
	param(l, ts, send ? P_MPI_SEND : P_MPI_RECV, e->bytes);
}

/* A burst of <astrolabe/instrument.h> (its key, its value while it lasts), or a counter the sampler read. */
static void value_moment(struct location *l, uint64_t ts, const struct astro_event *e)
{
	if (e->moment == ASTRO_MOMENT_COUNTER_SAMPLED) {
		if (e->label) {
			double value;
			memcpy(&value, &e->other_id, sizeof(value));
			metric(l, ts, cached(l, NAME_METRIC, e->label), value);
		}
		return;
	}
	ADD_STR(l, A_NAME, cached(l, NAME_STRING, e->label));
	param(l, ts, e->moment == ASTRO_MOMENT_BURST_BEGIN ? P_BURST_BEGIN : P_BURST_END,
	      e->moment == ASTRO_MOMENT_BURST_BEGIN ? e->other_id : 0);
}

/* Each other moment to its thread's records (a task's are in task_moments below). The states (enter, leave) are
 * written here; a moment with attributes or a choice has its function above. */
static void any_moment(struct location *l, uint64_t ts, const struct astro_event *e)
{
	switch (e->moment) {
	case ASTRO_MOMENT_TASK_CALLBACK_BEGIN: enter(l, ts, S_CALLBACK); break;
	case ASTRO_MOMENT_TASK_CALLBACK_END: leave(l, ts, S_CALLBACK); break;
	case ASTRO_MOMENT_WORKER_INIT_BEGIN: enter(l, ts, S_INITIALIZING); break;
	case ASTRO_MOMENT_WORKER_INIT_END: leave(l, ts, S_INITIALIZING); break;
	case ASTRO_MOMENT_WORKER_DEINIT_BEGIN: enter(l, ts, S_DEINITIALIZING); break;
	case ASTRO_MOMENT_WORKER_DEINIT_END: leave(l, ts, S_DEINITIALIZING); break;
	case ASTRO_MOMENT_WORKER_SCHED_BEGIN: enter(l, ts, S_SCHEDULING); break;
	case ASTRO_MOMENT_WORKER_SCHED_END: leave(l, ts, S_SCHEDULING); break;
	case ASTRO_MOMENT_WORKER_IDLE_BEGIN: enter(l, ts, S_IDLE); break;
	case ASTRO_MOMENT_WORKER_IDLE_END: leave(l, ts, S_IDLE); break;
	case ASTRO_MOMENT_WORKER_SLEEP_BEGIN: enter(l, ts, S_SLEEPING); break;
	case ASTRO_MOMENT_WORKER_SLEEP_END: leave(l, ts, S_SLEEPING); break;
	case ASTRO_MOMENT_APP_WAIT_BEGIN: enter(l, ts, e->task ? S_WAITING_TASK : S_WAITING); break;
	case ASTRO_MOMENT_APP_WAIT_END: leave(l, ts, e->task ? S_WAITING_TASK : S_WAITING); break;
	case ASTRO_MOMENT_SUBMIT_STAGE_BEGIN: enter(l, ts, e->nimpl == ASTRO_SUBMIT_BUILDING ? S_BUILDING : S_SUBMITTING); break;
	case ASTRO_MOMENT_SUBMIT_STAGE_END: leave(l, ts, e->nimpl == ASTRO_SUBMIT_BUILDING ? S_BUILDING : S_SUBMITTING); break;
	case ASTRO_MOMENT_SUBMIT_THROTTLE_BEGIN: enter(l, ts, S_THROTTLING); break;
	case ASTRO_MOMENT_SUBMIT_THROTTLE_END: leave(l, ts, S_THROTTLING); break;
	case ASTRO_MOMENT_TRANSFER_BEGIN:
	case ASTRO_MOMENT_TRANSFER_END:
	case ASTRO_MOMENT_MEMORY_STATE_BEGIN:
	case ASTRO_MOMENT_MEMORY_STATE_END:
	case ASTRO_MOMENT_DATA_ALLOCATED: memory_moment(l, ts, e); break;
	case ASTRO_MOMENT_DATA_REGISTERED: data_registered(l, ts, e); break;
	case ASTRO_MOMENT_DATA_UNREGISTERED: param(l, ts, P_UNREGISTER, (uint64_t)(uintptr_t)e->object); break;
	case ASTRO_MOMENT_DATA_DESCRIBED: data_described(l, ts, e); break;
	case ASTRO_MOMENT_DATA_STATE:
	case ASTRO_MOMENT_DATA_WONT_USE:
	case ASTRO_MOMENT_DATA_REQUEST:
	case ASTRO_MOMENT_RUNTIME_JOB: coherency_moment(l, ts, e); break;
	case ASTRO_MOMENT_TRACE_MARK: trace_mark(l, ts, e); break;
	case ASTRO_MOMENT_STATE_BEGIN: enter(l, ts, cached(l, NAME_USER_STATE_REGION, e->label)); break;
	case ASTRO_MOMENT_STATE_END: leave(l, ts, cached(l, NAME_USER_STATE_REGION, e->label)); break;
	case ASTRO_MOMENT_BURST_BEGIN:
	case ASTRO_MOMENT_BURST_END:
	case ASTRO_MOMENT_COUNTER_SAMPLED: value_moment(l, ts, e); break;
	case ASTRO_MOMENT_COMPONENT_NEW:
	case ASTRO_MOMENT_COMPONENT_CONNECT:
	case ASTRO_MOMENT_COMPONENT_PUSH:
	case ASTRO_MOMENT_COMPONENT_PULL: component_moment(l, ts, e); break;
	case ASTRO_MOMENT_MPI_INIT:
	case ASTRO_MOMENT_MPI_SEND:
	case ASTRO_MOMENT_MPI_RECV: mpi_moment(l, ts, e); break;
	default: break;
	}
}

/* The moments of every task, each its own function. */
typedef void moment_fn(struct location *l, uint64_t ts, const struct astro_event *e);

static MOMENT void task_ready(struct location *l, uint64_t ts, const struct astro_event *e)
{
	param(l, ts, P_READY, e->job_id);
}

/* The priority of a push or pop is the task's, recorded at submission. */
static MOMENT void task_pushed(struct location *l, uint64_t ts, const struct astro_event *e)
{
	param(l, ts, P_PUSH, e->job_id);
}

static MOMENT void task_released(struct location *l, uint64_t ts, const struct astro_event *e)
{
	(void)e;
	leave(l, ts, S_PUSHING_OUTPUT);
}

/* X(moment, its function), for each moment of a task: each has a subscription of its own (task_observers below). */
#define TASK_MOMENTS(X) \
	X(TASK_SUBMITTED, task_submitted) X(TASK_DEPENDENCY, task_dependency) X(TASK_READY, task_ready) \
	X(TASK_PUSHED, task_pushed) X(TASK_POPPED, task_popped) X(TASK_STARTED, task_started) X(TASK_ENDED, task_ended) \
	X(TASK_DATA_RELEASED, task_released) X(TASK_COMPLETED, task_completed)

static moment_fn *const task_moments[ASTRO_NMOMENTS] = {
#define X(m, fn) [ASTRO_MOMENT_##m] = fn,
	TASK_MOMENTS(X)
#undef X
};

static inline void record(struct location *l, uint64_t ts, const struct astro_event *e)
{
	moment_fn *fn = (unsigned)e->moment < ASTRO_NMOMENTS ? task_moments[e->moment] : NULL;
	(fn ? fn : any_moment)(l, ts, e);
}

/* Tag dependencies held back that this moment does not take: they are written first. */
static inline bool flushes_tag_deps(const struct location *l, enum astro_moment moment)
{
	return l->npending != 0 && moment != ASTRO_MOMENT_TASK_SUBMITTED && moment != ASTRO_MOMENT_TASK_DEPENDENCY;
}

/* A thread's first moment (its location is made), one after tag dependencies held back that it does not take (they
 * are written first), or one that needs room made (raw.h). */
static __attribute__((noinline)) void observe_slow(const struct astro_event *e)
{
	struct location *l = here(e);
	uint64_t ts = stamp(l, e->time_us);
	if (flushes_tag_deps(l, e->moment))
		tag_deps_flush(l, ts);
	raw_make_room(&l->raw, ts);
	record(l, ts, e);
}

/* The usual case: this thread's location is made, nothing is held back, the buffer has room. Then *lp and *tsp are
 * the location and the moment's date, and the moment's writers check nothing. moment: e's, a constant where known. */
static inline __attribute__((always_inline)) bool usual(const struct astro_event *e, enum astro_moment moment, struct location **lp,
							 uint64_t *tsp)
{
	if (__builtin_expect(self.generation != generation, 0)) /* 0 (no location yet) is no session's */
		return false;
	struct location *l = self.location;
	uint64_t ts = stamp(l, e->time_us); /* again in observe_slow: the same date */
	if (__builtin_expect(raw_needs_room(&l->raw, ts) | flushes_tag_deps(l, moment), 0))
		return false;
	*lp = l;
	*tsp = ts;
	return true;
}

/* The observer of the moments that are not a task's. */
static void observe(const struct astro_event *e, void *arg)
{
	(void)arg;
	struct location *l;
	uint64_t ts;
	if (usual(e, e->moment, &l, &ts))
		any_moment(l, ts, e);
	else
		observe_slow(e);
}

/* The observer of each moment of a task: the hub calls it straight, and its function is inlined (no dispatch, no
 * call: the moment is a constant in it). */
#define X(m, fn) \
	static void observe_##fn(const struct astro_event *e, void *arg) \
	{ \
		(void)arg; \
		struct location *l; \
		uint64_t ts; \
		if (usual(e, ASTRO_MOMENT_##m, &l, &ts)) \
			fn(l, ts, e); \
		else \
			observe_slow(e); \
	}
TASK_MOMENTS(X)
#undef X

/* The subscriptions: 0 for observe(), then one per moment of a task, with the moments of the mask each takes. */
static const struct
{
	astro_observer_fn fn;
	uint64_t moments;
} task_observers[] = {
	{ observe, 0 },
#define X(m, fn) { observe_##fn, ASTRO_MOMENT_BIT(ASTRO_MOMENT_##m) },
	TASK_MOMENTS(X)
#undef X
};
#define NSUBSCRIPTIONS (sizeof(task_observers) / sizeof(task_observers[0]))
static int subscriptions[NSUBSCRIPTIONS];

/* The moments of mask that subscription i takes. */
static uint64_t moments_of_subscription(unsigned i, uint64_t mask)
{
	uint64_t task_moments_mask = 0;
	for (unsigned j = 1; j < NSUBSCRIPTIONS; j++)
		task_moments_mask |= task_observers[j].moments;
	return mask & (i ? task_observers[i].moments : ~task_moments_mask);
}

static void profiling_switch(int on)
{
	/* Stopped: only META moments reach the recorder, so nothing else costs anything. */
	for (unsigned i = 0; i < NSUBSCRIPTIONS; i++)
		astro_observe_set_mask(subscriptions[i], moments_of_subscription(i, on ? rec.full_mask : rec.meta_mask));
}

/* ---------------------------------------------------------- configuration */

static uint64_t moments_of(unsigned categories)
{
#define B(m) ASTRO_MOMENT_BIT(ASTRO_MOMENT_##m)
	uint64_t mask = B(DATA_REGISTERED) | B(DATA_UNREGISTERED) | B(DATA_DESCRIBED) | B(TRACE_MARK) | B(WORKER_INIT_BEGIN) | B(MPI_INIT) |
			B(STATE_BEGIN) | B(STATE_END) | B(BURST_BEGIN) | B(BURST_END) |
			B(WORKER_INIT_END) | B(WORKER_DEINIT_BEGIN) | B(WORKER_DEINIT_END) | B(COMPONENT_NEW) | B(COMPONENT_CONNECT);
	if (categories & C_TASK)
		mask |= B(TASK_SUBMITTED) | B(TASK_STARTED) | B(TASK_ENDED) | B(TASK_DEPENDENCY) | B(RUNTIME_JOB);
	if (categories & C_TASK) /* StarPU's TASK category holds the throttling state */
		mask |= B(SUBMIT_THROTTLE_BEGIN) | B(SUBMIT_THROTTLE_END);
	if (categories & C_TASK_VERBOSE) /* and the submitting thread's stages, as StarPU */
		mask |= B(TASK_READY) | B(TASK_POPPED) | B(TASK_STARTED) | B(TASK_COMPLETED) | B(TASK_DATA_RELEASED) |
			B(SUBMIT_STAGE_BEGIN) | B(SUBMIT_STAGE_END);
	if (categories & C_SCHED)
		mask |= B(TASK_PUSHED) | B(TASK_POPPED) | B(COMPONENT_PUSH) | B(COMPONENT_PULL); /* the components': modular policies only */
	if (categories & C_WORKER) /* FetchingInput: from the pop to the data's arrival (the task's start) */
		mask |= B(TASK_POPPED) | B(TASK_STARTED) | B(WORKER_SLEEP_BEGIN) | B(WORKER_SLEEP_END) | B(TASK_CALLBACK_BEGIN) | B(TASK_CALLBACK_END) | B(APP_WAIT_BEGIN) |
			B(APP_WAIT_END) | B(WORKER_IDLE_BEGIN) | B(WORKER_IDLE_END); /* Idle: polling for work, not runtime overhead */
	if (categories & C_WORKER_VERBOSE)
		mask |= B(WORKER_SCHED_BEGIN) | B(WORKER_SCHED_END);
	if (categories & C_DATA)
		mask |= B(TRANSFER_BEGIN) | B(TRANSFER_END) | B(DATA_ALLOCATED) | B(MEMORY_STATE_BEGIN) | B(MEMORY_STATE_END) |
			B(DATA_STATE) | B(DATA_WONT_USE) | B(DATA_REQUEST);
	if (categories & C_MPI)
		mask |= B(MPI_SEND) | B(MPI_RECV);
	if (categories & C_EVENT)
		mask |= B(COUNTER_SAMPLED); /* the sampler's (ASTROLABE_SAMPLER=1): a few values every interval */
	return mask;
#undef B
}

int record_moments_start(unsigned categories, char **papi, size_t buffer_bytes, const char *spill_dir, bool autostart)
{
	rec.raw_buffer_bytes = buffer_bytes;
	raw_helper_start();
	snprintf(rec.spill_dir, sizeof(rec.spill_dir), "%s", spill_dir);
	rec.mpi_size = 0; /* a later session may not use MPI */
	generation++;
	iterations[0] = iterations[1] = -1;
	iteration_depth = 0;
	rec.categories = categories;
	rec.full_mask = moments_of(categories);
	papi_names = papi;
	npapi = papi ? g_strv_length(papi) : 0;
	/* Counted only while profiling is on, as counters_papi_task does. */
	if (npapi && (categories & C_TASK))
		rec.full_mask |= ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_COMPLETED);
	rec.meta_mask = moments_of(C_META);
	for (unsigned i = 0; i < NSUBSCRIPTIONS; i++) {
		subscriptions[i] = astro_observe_subscribe(moments_of_subscription(i, autostart ? rec.full_mask : rec.meta_mask),
							   task_observers[i].fn, NULL);
		if (subscriptions[i] < 0) {
			int err = subscriptions[i];
			while (i--)
				astro_observe_unsubscribe(subscriptions[i]);
			return err;
		}
	}
	return 0;
}

void record_moments_stop(void)
{
	for (unsigned i = 0; i < NSUBSCRIPTIONS; i++) {
		astro_observe_unsubscribe(subscriptions[i]);
		subscriptions[i] = -1;
	}
	for (struct location *l = rec.locations; l; l = l->next) {
		tag_deps_flush(l, l->last_ts);
		raw_finish(&l->raw);
	}
}

struct location *record_locations(void)
{
	return rec.locations;
}

bool record_mpi(int *rank, int *size, int64_t *offset_ns)
{
	*rank = rec.mpi_rank;
	*size = rec.mpi_size;
	*offset_ns = rec.mpi_offset_ns;
	return rec.mpi_size > 0;
}

void record_moments_free(void)
{
	g_strfreev(papi_names);
	papi_names = NULL;
	npapi = 0;
	for (struct location *l = rec.locations, *next; l; l = next) {
		next = l->next;
		raw_discard(&l->raw);
		free(l);
	}
	rec.locations = NULL;
	rec.napp_threads = 0;
	raw_helper_stop();
}
