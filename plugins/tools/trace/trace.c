/*
 * The trace recorder (STARPU_FXT_TRACE=1): an observer of the kernel's
 * observation hub that writes an OTF2 archive, the FxT-free counterpart of
 * StarPU's prof_file. Each thread that reports a moment gets its own OTF2
 * location and raw buffer the first time (one lock then); afterwards an
 * event is appended to that buffer as a fixed-layout record, without any
 * lock and without OTF2 (raw.h); a full buffer is written to the thread's
 * spill file. At shutdown each thread's records are replayed into its OTF2
 * event writer, the definitions (strings, regions per task name, locations)
 * are written and the archive's folder is renamed into place, so a reader
 * never sees a half archive under the final name.
 *
 * Layout: <STARPU_FXT_PREFIX>/<STARPU_FXT_SUFFIX or prof_file_<USER>>_<id>/traces.otf2
 * (+ traces.def and traces/). starpu_fxt_tool converts it (schema.h says what
 * it holds); STARPU_GENERATE_TRACE=1 converts it at shutdown.
 */
#define _GNU_SOURCE
#include <astrolabe/plugin.h>
#include <astrolabe/observe.h>
#include <astrolabe/counters.h>
#include <starpu_profiling.h>
#include <otf2/otf2.h>
#include <otf2/OTF2_Pthread_Locks.h>
#include <errno.h>
#include <ftw.h>
#include <glib.h>
#include <limits.h>
#include <astrolabe/thread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "schema.h"
#include "convert.h"
#include "raw.h"

#define WHAT "trace"
#define MAX_DEPTH 16
#define CACHE_SIZE 64
#define MAX_PENDING_TAG_DEPS 4

/* STARPU_FXT_EVENTS categories; META is always recorded. */
enum category
{
	C_META = 1, C_TASK = 2, C_SCHED = 4, C_WORKER = 8, C_DATA = 16, C_USER = 32, C_EVENT = 64,
	/* Not recorded unless named: they double the events of a task (ready, completed, fetching input; scheduling). */
	C_TASK_VERBOSE = 128, C_WORKER_VERBOSE = 256,
	C_MPI = 512,
};
#define C_DEFAULT (C_META | C_TASK | C_SCHED | C_WORKER | C_DATA | C_USER | C_EVENT | C_MPI)

/* One per thread that reported a moment in this session; only that thread writes it until shutdown. */
struct location
{
	struct raw_writer raw;      /* this thread's events until shutdown (raw.h) */
	uint64_t id;
	uint64_t nevents;           /* counted when replayed into OTF2 */
	uint64_t last_ts;
	uint64_t first_ts;
	unsigned depth;
	uint32_t stack[MAX_DEPTH];
	/* The shortcuts of schema.h: what the reader also knows from this location's previous events. */
	uint64_t last_pop;          /* job of the last pop recorded here (valid when popped) */
	bool popped;
	bool submitted;             /* prev_name/prev_model are those of a submit recorded here */
	const char *prev_name, *prev_model;
	bool in_task;               /* task_region is open: the task whose end comes next */
	uint32_t task_region;
	/* Tag dependencies not written yet: the next submit may be their tag's task (schema.h). */
	unsigned npending;
	struct pending_tag_dep { uint64_t ts, child, father; } pending[MAX_PENDING_TAG_DEPS];
	struct cache_entry { const char *key; uint32_t value; } caches[4][CACHE_SIZE];
	char name[64];
	long tid;                   /* the thread's OS id (gettid) */
	int bindid;                 /* a worker's logical CPU (starpu_worker_get_bindid), -1 for the others */
	struct location *next;
};

static struct
{
	OTF2_Archive *archive;
	starpu_pthread_mutex_t lock;            /* definitions and the location list */
	GHashTable *strings;             /* char* -> id + 1 */
	GPtrArray *string_list;          /* id -> char* */
	GHashTable *regions;             /* task name -> region + 1 */
	GArray *region_names;            /* region -> string id */
	GArray *region_kind;             /* region -> enum region_kind */
	GHashTable *metrics;             /* counter name -> metric (class and member) + 1 */
	GArray *metric_names;            /* metric -> string id */
	GArray *metric_units;            /* metric -> string id of its unit ("" when unknown or dimensionless) */
	struct location *locations;
	unsigned napp_threads;
	int subscription;
	uint64_t full_mask, meta_mask;
	unsigned categories;
	char final_dir[PATH_MAX];
	char tmp_dir[PATH_MAX];
	char prefix[PATH_MAX];
	int flush_failed;
	char first_error[256];
	int mpi_rank, mpi_size;           /* StarPU-MPI's (ASTRO_MOMENT_MPI_INIT); mpi_size 0: not an MPI process */
	int64_t mpi_offset_ns;
} rec = { .lock = STARPU_PTHREAD_MUTEX_INITIALIZER, .subscription = -1 };

/* starpu_iteration_push/pop: the two levels tasks submitted meanwhile carry (-1: none). */
static long iterations[2] = { -1, -1 };
static int iteration_depth;

/* STARPU_PROF_PAPI_EVENTS (counted by counters_papi_task into each task's profiling info): their names, for papi.rec. */
static char **papi_names;
static unsigned npapi;

static unsigned generation;           /* bumped at each session, so a thread's location of an earlier session is not reused */
/* initial-exec: the recorder's per-event look-up is one load, not a __tls_get_addr call (glibc keeps room for a loaded module's few bytes). */
static __thread struct
{
	struct location *location;
	unsigned generation; /* location belongs to this session: an older one was freed */
} self __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ definitions */

static uint32_t intern_locked(const char *s)
{
	gpointer v = g_hash_table_lookup(rec.strings, s);
	if (v)
		return GPOINTER_TO_UINT(v) - 1;
	char *copy = g_strdup(s);
	uint32_t id = rec.string_list->len;
	g_ptr_array_add(rec.string_list, copy);
	g_hash_table_insert(rec.strings, copy, GUINT_TO_POINTER(id + 1));
	return id;
}

static uint32_t intern(const char *s)
{
	starpu_pthread_mutex_lock(&rec.lock);
	uint32_t id = intern_locked(s);
	starpu_pthread_mutex_unlock(&rec.lock);
	return id;
}

/* Region kinds: the runtime's states, tasks, the application's states. */
enum region_kind { R_STATE, R_TASK, R_USER_STATE };

/* The number of key in ids, given at its first look-up in the order met; names gets name's string then. */
static uint32_t numbered_locked(GHashTable *ids, GArray *names, const char *key, const char *name, bool *fresh)
{
	gpointer v = g_hash_table_lookup(ids, key);
	if (fresh)
		*fresh = !v;
	if (v)
		return GPOINTER_TO_UINT(v) - 1;
	uint32_t id = names->len;
	uint32_t sid = intern_locked(name);
	g_array_append_val(names, sid);
	g_hash_table_insert(ids, g_strdup(key), GUINT_TO_POINTER(id + 1));
	return id;
}

static uint32_t region_locked(const char *name, enum region_kind kind)
{
	/* States and tasks share names only by accident: keep them apart. */
	char key[512];
	snprintf(key, sizeof(key), "%c%s", "STU"[kind], name);
	bool fresh;
	uint32_t id = numbered_locked(rec.regions, rec.region_names, key, name, &fresh);
	if (fresh)
		g_array_append_val(rec.region_kind, kind);
	return id;
}

/* The unit of a sampled counter: that of the runtime's counter which the sampler's own component reads as
 * "astrolabe:::<counter>"; "" for the others (PAPI's events) and for a dimensionless one. Looked up without a message. */
static const char *counter_unit(const char *event)
{
	const char *sep = strstr(event, ":::");
	if (!sep)
		return "";
	int id = astro_counter_find(sep + 3, NULL);
	const char *unit = id >= 0 ? astro_counter_get_unit(id) : NULL;
	return unit ? unit : "";
}

/* A sampled counter's OTF2 metric: one class of one member per counter name, in the order met. */
static uint32_t metric_locked(const char *name, const char *unit)
{
	bool fresh;
	uint32_t id = numbered_locked(rec.metrics, rec.metric_names, name, name, &fresh);
	if (fresh) {
		uint32_t sid = intern_locked(unit);
		g_array_append_val(rec.metric_units, sid);
	}
	return id;
}

/* Names seen by this thread, by pointer, without the global lock. cache: 0 strings, 1 task regions, 2 user-state regions, 3 metrics. */
static uint32_t cached(struct location *l, int cache, const char *s)
{
	unsigned slot = (unsigned)(((uintptr_t)s >> 3) % CACHE_SIZE);
	struct cache_entry *c = &l->caches[cache][slot];
	if (c->key == s)
		return c->value;
	const char *unit = cache == 3 ? counter_unit(s) : NULL; /* the counters' registry has its own lock: not under ours */
	starpu_pthread_mutex_lock(&rec.lock);
	uint32_t v = cache == 3 ? metric_locked(s, unit) : cache ? region_locked(s, cache == 1 ? R_TASK : R_USER_STATE) : intern_locked(s);
	starpu_pthread_mutex_unlock(&rec.lock);
	c->key = s;
	c->value = v;
	return v;
}

/* ------------------------------------------------------------ locations */

static size_t raw_buffer_bytes; /* STARPU_TRACE_BUFFER_SIZE */

static struct location *location_new(int workerid)
{
	struct location *l = calloc(1, sizeof(*l));
	l->first_ts = UINT64_MAX;
	l->tid = (long)syscall(SYS_gettid);
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
	snprintf(spill, sizeof(spill), "%s/raw.%llu", rec.tmp_dir, (unsigned long long)l->id);
	raw_init(&l->raw, raw_buffer_bytes, spill);
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

/* Each event is appended to the thread's raw buffer with the attributes ADD_* gave it (raw.h); OTF2 encodes them at shutdown. */
static void enter(struct location *l, uint64_t ts, uint32_t region)
{
	if (l->depth < MAX_DEPTH)
		l->stack[l->depth] = region;
	l->depth++;
	raw_event(&l->raw, RAW_ENTER, region, ts, 0);
}

/* Leaves region if it is the innermost open one (a moment seen after recording started may end a region never entered). */
static void leave(struct location *l, uint64_t ts, uint32_t region)
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
	raw_event(&l->raw, RAW_PARAM_STRING, p, ts, intern(s));
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

static void task_started(struct location *l, uint64_t ts, const struct astro_event *e)
{
	struct starpu_task *task = e->task;
	const char *name = starpu_task_get_name(task);
	uint32_t region = cached(l, 1, name ? name : "unknown");
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
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
		ADD_U32(l, A_MODE, (uint32_t)STARPU_TASK_GET_MODE(task, i));
		ADD_U64(l, A_SIZE, starpu_data_get_size(h));
		param(l, ts, P_HANDLE, (uint64_t)(uintptr_t)h);
	}
}

/* Writes the tag dependencies held back, in full: what follows is not their task's submission. */
static void tag_deps_flush(struct location *l)
{
	for (unsigned i = 0; i < l->npending; i++) {
		ADD_U64(l, A_JOB_ID, l->pending[i].child);
		param(l, l->pending[i].ts, P_TAG_DEPENDENCY, l->pending[i].father);
	}
	l->npending = 0;
}

static void tag_dep_hold(struct location *l, uint64_t ts, uint64_t child, uint64_t father)
{
	if (l->npending == MAX_PENDING_TAG_DEPS || (l->npending && l->pending[0].child != child))
		tag_deps_flush(l);
	l->pending[l->npending++] = (struct pending_tag_dep){ ts, child, father };
}

static void task_submitted(struct location *l, uint64_t ts, const struct astro_event *e)
{
	struct starpu_task *task = e->task;
	bool tag_deps = l->npending && task->use_tag && task->tag_id == l->pending[0].child;
	if (l->npending && !tag_deps)
		tag_deps_flush(l);
	const char *name = starpu_task_get_name(task);
	const char *model = starpu_task_get_model_name(task);
	if (!l->submitted || name != l->prev_name || model != l->prev_model) {
		/* "" says "no name" to a reader that would otherwise take the previous submit's. */
		ADD_STR(l, A_NAME, cached(l, 0, name ? name : ""));
		if (model && model != name)
			ADD_STR(l, A_MODEL, cached(l, 0, model));
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
	if (task->use_tag)
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
	ADD_STR(l, A_DESCRIPTION, intern(desc));
	param(l, ts, P_REGISTER, (uint64_t)(uintptr_t)h);
}

static void profiling_switch(int on)
{
	/* Stopped: only META moments reach the recorder, so nothing else costs anything. */
	astro_observe_set_mask(rec.subscription, on ? rec.full_mask : rec.meta_mask);
}

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
		ADD_U64(l, A_JOB_ID, e->job_id);
		ADD_STR(l, A_NAME, cached(l, 0, papi_names[i]));
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
		ADD_STR(l, A_NAME, cached(l, 0, e->label ? e->label : "runtime"));
		ADD_U64(l, A_HANDLE, handle);
		if (e->nimpl)
			ADD_U32(l, A_ACQUIRE, 1);
		param(l, ts, P_RUNTIME_JOB, e->job_id);
		break;
	default: break;
	}
}

static void observe(const struct astro_event *e, void *arg)
{
	(void)arg;
	struct location *l = here(e);
	uint64_t ts = stamp(l, e->time_us);
	if (__builtin_expect(l->npending != 0, 0) && e->moment != ASTRO_MOMENT_TASK_SUBMITTED && e->moment != ASTRO_MOMENT_TASK_DEPENDENCY)
		tag_deps_flush(l);
	switch (e->moment) {
	case ASTRO_MOMENT_TASK_SUBMITTED: task_submitted(l, ts, e); break;
	case ASTRO_MOMENT_TASK_READY: param(l, ts, P_READY, e->job_id); break;
	/* The priority of a push or pop is the task's, recorded at submission. */
	case ASTRO_MOMENT_TASK_PUSHED: param(l, ts, P_PUSH, e->job_id); break;
	case ASTRO_MOMENT_TASK_POPPED:
		if (rec.categories & C_SCHED) {
			param(l, ts, P_POP, e->job_id);
			l->last_pop = e->job_id;
			l->popped = true;
		}
		if (rec.categories & C_TASK_VERBOSE)
			enter(l, ts, S_FETCHING_INPUT);
		break;
	case ASTRO_MOMENT_TASK_DATA_FETCHED: leave(l, ts, S_FETCHING_INPUT); break;
	case ASTRO_MOMENT_TASK_STARTED: task_started(l, ts, e); break;
	case ASTRO_MOMENT_TASK_ENDED:
		/* Its start was not recorded when recording started meanwhile. */
		if (l->in_task) {
			l->in_task = false;
			leave(l, ts, l->task_region);
		}
		/* Until its data is released (TASK_DATA_RELEASED, only for a task with buffers). */
		if ((rec.categories & C_TASK_VERBOSE) && STARPU_TASK_GET_NBUFFERS(e->task))
			enter(l, ts, S_PUSHING_OUTPUT);
		break;
	case ASTRO_MOMENT_TASK_DATA_RELEASED: leave(l, ts, S_PUSHING_OUTPUT); break;
	case ASTRO_MOMENT_TASK_COMPLETED:
		if (rec.categories & C_TASK_VERBOSE)
			param(l, ts, P_COMPLETED, e->job_id);
		if (npapi)
			papi_values(l, ts, e);
		break;
	case ASTRO_MOMENT_TASK_CALLBACK_BEGIN: enter(l, ts, S_CALLBACK); break;
	case ASTRO_MOMENT_TASK_CALLBACK_END: leave(l, ts, S_CALLBACK); break;
	case ASTRO_MOMENT_TASK_DEPENDENCY:
		if (e->nimpl == ASTRO_DEP_TAG) {
			tag_dep_hold(l, ts, e->job_id, e->other_id);
			break;
		}
		if (l->npending)
			tag_deps_flush(l);
		ADD_U64(l, A_JOB_ID, e->job_id);
		if (e->nimpl)
			ADD_U8(l, A_DEP_KIND, e->nimpl);
		param(l, ts, P_DEPENDENCY, e->other_id);
		break;
	case ASTRO_MOMENT_WORKER_INIT_BEGIN: enter(l, ts, S_INITIALIZING); break;
	case ASTRO_MOMENT_WORKER_INIT_END: leave(l, ts, S_INITIALIZING); break;
	case ASTRO_MOMENT_WORKER_DEINIT_BEGIN: enter(l, ts, S_DEINITIALIZING); break;
	case ASTRO_MOMENT_WORKER_DEINIT_END: leave(l, ts, S_DEINITIALIZING); break;
	case ASTRO_MOMENT_WORKER_SCHED_BEGIN: enter(l, ts, S_SCHEDULING); break;
	case ASTRO_MOMENT_WORKER_SCHED_END: leave(l, ts, S_SCHEDULING); break;
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
	case ASTRO_MOMENT_DATA_ALLOCATED:
		ADD_U32(l, A_DST_NODE, e->dst_node);
		param(l, ts, P_ALLOCATION, e->bytes);
		break;
	case ASTRO_MOMENT_DATA_REGISTERED: data_registered(l, ts, e); break;
	case ASTRO_MOMENT_DATA_UNREGISTERED: param(l, ts, P_UNREGISTER, (uint64_t)(uintptr_t)e->object); break;
	case ASTRO_MOMENT_DATA_DESCRIBED:
		if (e->label) {
			ADD_U64(l, A_HANDLE, (uint64_t)(uintptr_t)e->object);
			param_string(l, ts, P_DATA_NAME, e->label);
		} else {
			data_coordinates(l, ts, (starpu_data_handle_t)e->object);
		}
		break;
	case ASTRO_MOMENT_TRACE_MARK: trace_mark(l, ts, e); break;
	case ASTRO_MOMENT_STATE_BEGIN: enter(l, ts, cached(l, 2, e->label)); break;
	case ASTRO_MOMENT_STATE_END: leave(l, ts, cached(l, 2, e->label)); break;
	case ASTRO_MOMENT_BURST_BEGIN:
	case ASTRO_MOMENT_BURST_END:
		ADD_STR(l, A_NAME, cached(l, 0, e->label));
		param(l, ts, e->moment == ASTRO_MOMENT_BURST_BEGIN ? P_BURST_BEGIN : P_BURST_END,
		      e->moment == ASTRO_MOMENT_BURST_BEGIN ? e->other_id : 0);
		break;
	case ASTRO_MOMENT_COMPONENT_NEW:
		ADD_STR(l, A_NAME, intern(e->label ? e->label : "component"));
		if (e->nimpl)
			ADD_I32(l, A_WORKER, (int32_t)e->nimpl - 1);
		param(l, ts, P_COMPONENT_NEW, (uint64_t)(uintptr_t)e->object);
		break;
	case ASTRO_MOMENT_COMPONENT_CONNECT:
		ADD_U64(l, A_COMPONENT, (uint64_t)(uintptr_t)e->object);
		param(l, ts, P_COMPONENT_CONNECT, e->other_id);
		break;
	/* Both move job job_id from one component to another: into object for a push, out of object for a pull. */
	case ASTRO_MOMENT_COMPONENT_PUSH:
		if (e->object) /* else a refusal: back to the policy */
			ADD_U64(l, A_COMPONENT, (uint64_t)(uintptr_t)e->object);
		if (e->other_id)
			ADD_U64(l, A_FROM_COMPONENT, e->other_id);
		param(l, ts, P_COMPONENT_PUSH, e->job_id);
		break;
	case ASTRO_MOMENT_COMPONENT_PULL:
		ADD_U64(l, A_COMPONENT, e->other_id);
		ADD_U64(l, A_FROM_COMPONENT, (uint64_t)(uintptr_t)e->object);
		param(l, ts, P_COMPONENT_PULL, e->job_id);
		break;
	case ASTRO_MOMENT_MPI_INIT:
		/* Written with the definitions; the archive is then named by the rank (starpu_profiling_set_id). */
		__atomic_store_n(&rec.mpi_rank, (int)e->nimpl, __ATOMIC_RELAXED);
		__atomic_store_n(&rec.mpi_size, (int)e->bytes, __ATOMIC_RELAXED);
		__atomic_store_n(&rec.mpi_offset_ns, (int64_t)e->other_id, __ATOMIC_RELAXED);
		break;
	case ASTRO_MOMENT_COUNTER_SAMPLED:
		if (e->label) {
			double value;
			memcpy(&value, &e->other_id, sizeof(value));
			metric(l, ts, cached(l, 3, e->label), value);
		}
		break;
	case ASTRO_MOMENT_MPI_SEND:
	case ASTRO_MOMENT_MPI_RECV: {
		bool send = e->moment == ASTRO_MOMENT_MPI_SEND;
		ADD_I32(l, A_PEER, (int32_t)(send ? e->dst_node : e->src_node));
		ADD_U64(l, A_TAG, e->other_id);
		ADD_U64(l, A_HANDLE, (uint64_t)(uintptr_t)e->object);
		param(l, ts, send ? P_MPI_SEND : P_MPI_RECV, e->bytes);
		break;
	}
	case ASTRO_MOMENT_DATA_STATE:
	case ASTRO_MOMENT_DATA_WONT_USE:
	case ASTRO_MOMENT_DATA_REQUEST:
	case ASTRO_MOMENT_RUNTIME_JOB: coherency_moment(l, ts, e); break;
	default: break;
	}
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
		mask |= B(TASK_READY) | B(TASK_POPPED) | B(TASK_DATA_FETCHED) | B(TASK_COMPLETED) | B(TASK_DATA_RELEASED) |
			B(SUBMIT_STAGE_BEGIN) | B(SUBMIT_STAGE_END);
	if (categories & C_SCHED)
		mask |= B(TASK_PUSHED) | B(TASK_POPPED) | B(COMPONENT_PUSH) | B(COMPONENT_PULL); /* the components': modular policies only */
	if (categories & C_WORKER)
		mask |= B(WORKER_SLEEP_BEGIN) | B(WORKER_SLEEP_END) | B(TASK_CALLBACK_BEGIN) | B(TASK_CALLBACK_END) | B(APP_WAIT_BEGIN) |
			B(APP_WAIT_END);
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

/* STARPU_FXT_EVENTS: StarPU's category names, separated by ',' or '|'; unknown ones are reported and skipped.
 * Unset: every category but the verbose ones (TASK_VERBOSE: ready, completed, FetchingInput, PushingOutput;
 * WORKER_VERBOSE: Scheduling), which would double the cost of a task. */
static unsigned parse_categories(const char *s)
{
	static const struct { const char *name; unsigned cat; } names[] = {
		{ "USER", C_USER }, { "TASK", C_TASK }, { "TASK_VERBOSE", C_TASK_VERBOSE }, { "TASK_VERBOSE_EXTRA", C_TASK_VERBOSE },
		{ "DATA", C_DATA }, { "DATA_VERBOSE", C_DATA }, { "WORKER", C_WORKER }, { "WORKER_VERBOSE", C_WORKER_VERBOSE },
		{ "DSM", C_DATA }, { "DSM_VERBOSE", C_DATA }, { "SCHED", C_SCHED }, { "SCHED_VERBOSE", C_SCHED },
		{ "LOCK", 0 }, { "LOCK_VERBOSE", 0 }, { "EVENT", C_EVENT }, { "EVENT_VERBOSE", C_EVENT }, { "MPI", C_MPI },
		{ "MPI_VERBOSE", C_MPI }, { "MPI_VERBOSE_EXTRA", C_MPI }, { "HYP", 0 }, { "HYP_VERBOSE", 0 }, { "META", 0 },
	};
	if (!s || !*s)
		return C_DEFAULT;
	unsigned cats = C_META;
	char **parts = g_strsplit_set(s, ",|", -1);
	for (char **p = parts; *p; p++) {
		char *word = g_strstrip(*p);
		if (!*word)
			continue;
		unsigned i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (g_ascii_strcasecmp(word, names[i].name) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			astro_log_error(WHAT, "STARPU_FXT_EVENTS: unknown category '%s' ignored: use USER, TASK, DATA, WORKER, SCHED, EVENT, ...", word);
		else
			cats |= names[i].cat;
	}
	g_strfreev(parts);
	return cats;
}

/* <STARPU_FXT_SUFFIX or prof_file_<USER>>_<id>, id from starpu_profiling_set_id(): one archive per process of a run. */
static void archive_name(char *name, size_t n)
{
	const char *suffix = getenv("STARPU_FXT_SUFFIX");
	if (suffix && *suffix)
		snprintf(name, n, "%s_%d", suffix, astro_trace_file_id());
	else
		snprintf(name, n, "prof_file_%s_%d", getenv("USER") ? getenv("USER") : "", astro_trace_file_id());
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0777) < 0 && errno != EEXIST)
		return -errno;
	struct stat st;
	if (stat(buf, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef location, void *callerData, bool final)
{
	(void)user;
	(void)type;
	(void)location;
	(void)callerData;
	(void)final;
	return OTF2_FLUSH;
}

/* OTF2 writes events at shutdown only, replaying each thread's records (raw.h): replay_clock is the date of the one
 * being written. A flush is dated by it, never after the events that follow. */
static uint64_t replay_clock;

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef location)
{
	(void)user;
	(void)type;
	(void)location;
	return replay_clock;
}

static OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush };

/* Each OTF2 buffer (one per thread, filled at shutdown by the replay) keeps at
 * most chunk_budget chunks: when they are used up, allocate() says no and OTF2
 * writes them to the file (pre_flush says yes), frees them all (kept for reuse)
 * and asks again. So the replay of a long run keeps a bounded memory. */
#define EVENT_CHUNK (1024 * 1024)
struct chunk_pool
{
	unsigned used, allocated;
	void *chunks[];
};
static unsigned chunk_budget;
static OTF2_ErrorCallback previous_error_callback;

static void *chunk_allocate(void *user, OTF2_FileType type, OTF2_LocationRef location, void **per_buffer, uint64_t size)
{
	(void)user;
	(void)location;
	/* Definition buffers are small and not bounded here. */
	unsigned budget = type == OTF2_FILETYPE_EVENTS ? chunk_budget : 1024;
	struct chunk_pool *pool = *per_buffer;
	if (!pool) {
		pool = calloc(1, sizeof(*pool) + budget * sizeof(void *));
		if (!pool)
			return NULL;
		*per_buffer = pool;
	}
	if (pool->used < pool->allocated)
		return pool->chunks[pool->used++];
	if (pool->allocated == budget)
		return NULL;
	void *chunk = malloc(size);
	if (!chunk)
		return NULL;
	pool->chunks[pool->allocated++] = chunk;
	pool->used++;
	return chunk;
}

static void chunk_free_all(void *user, OTF2_FileType type, OTF2_LocationRef location, void **per_buffer, bool final)
{
	(void)user;
	(void)type;
	(void)location;
	struct chunk_pool *pool = *per_buffer;
	if (!pool)
		return;
	if (!final) {
		pool->used = 0;
		return;
	}
	for (unsigned i = 0; i < pool->allocated; i++)
		free(pool->chunks[i]);
	free(pool);
	*per_buffer = NULL;
}

static OTF2_MemoryCallbacks memory_callbacks = { .otf2_allocate = chunk_allocate, .otf2_free_all = chunk_free_all };

/* OTF2 reports each failure on stderr by itself: the recorder says it once, at shutdown. */
static OTF2_ErrorCode otf2_failed(void *user, const char *file, uint64_t line, const char *function, OTF2_ErrorCode code,
				  const char *fmt, va_list va)
{
	(void)user;
	(void)file;
	(void)line;
	(void)function;
	if (!__atomic_exchange_n(&rec.flush_failed, 1, __ATOMIC_RELAXED))
		vsnprintf(rec.first_error, sizeof(rec.first_error), fmt, va);
	return code;
}

static void free_tables(void)
{
	g_strfreev(papi_names);
	papi_names = NULL;
	npapi = 0;
	if (rec.strings)
		g_hash_table_destroy(rec.strings);
	if (rec.string_list)
		g_ptr_array_free(rec.string_list, TRUE);
	if (rec.regions)
		g_hash_table_destroy(rec.regions);
	if (rec.region_names)
		g_array_free(rec.region_names, TRUE);
	if (rec.region_kind)
		g_array_free(rec.region_kind, TRUE);
	if (rec.metrics)
		g_hash_table_destroy(rec.metrics);
	if (rec.metric_names)
		g_array_free(rec.metric_names, TRUE);
	if (rec.metric_units)
		g_array_free(rec.metric_units, TRUE);
	rec.metrics = NULL;
	rec.metric_names = NULL;
	rec.metric_units = NULL;
	rec.strings = NULL;
	rec.string_list = NULL;
	rec.regions = NULL;
	rec.region_names = rec.region_kind = NULL;
	for (struct location *l = rec.locations, *next; l; l = next) {
		next = l->next;
		raw_discard(&l->raw);
		free(l);
	}
	rec.locations = NULL;
	rec.napp_threads = 0;
}

static int init(void)
{
	const char *on = getenv("STARPU_FXT_TRACE");
	if (!on || atoi(on) <= 0)
		return ASTRO_PLUGIN_DECLINE;
	const char *prefix = getenv("STARPU_FXT_PREFIX");
	if (!prefix || !*prefix)
		prefix = getenv("TMPDIR");
	if (!prefix || !*prefix)
		prefix = "/tmp";
	snprintf(rec.prefix, sizeof(rec.prefix), "%s", prefix);
	char name[PATH_MAX];
	archive_name(name, sizeof(name));
	int err = mkdir_p(prefix);
	if (err) {
		astro_log_error(WHAT, "STARPU_FXT_PREFIX=%s: cannot create the trace directory (%s): no trace is recorded; "
			       "point STARPU_FXT_PREFIX to a writable directory", prefix, strerror(-err));
		return ASTRO_PLUGIN_DECLINE;
	}
	if (snprintf(rec.final_dir, sizeof(rec.final_dir), "%s/%s", prefix, name) >= (int)sizeof(rec.final_dir) ||
	    snprintf(rec.tmp_dir, sizeof(rec.tmp_dir), "%s/.%s.tmp%ld", prefix, name, (long)getpid()) >= (int)sizeof(rec.tmp_dir)) {
		astro_log_error(WHAT, "STARPU_FXT_PREFIX=%s: the path is too long: no trace is recorded", prefix);
		return ASTRO_PLUGIN_DECLINE;
	}
	remove_tree(rec.tmp_dir);
	if (mkdir(rec.tmp_dir, 0777) < 0) {
		astro_log_error(WHAT, "STARPU_FXT_PREFIX=%s: cannot write in the trace directory (%s): no trace is recorded; "
			       "point STARPU_FXT_PREFIX to a writable directory", prefix, strerror(errno));
		return ASTRO_PLUGIN_DECLINE;
	}
	/* STARPU_TRACE_BUFFER_SIZE: MiB of events each thread keeps before writing them to its spill file (default 8,
	 * at least 1); OTF2's buffers of the replay keep as much (at least 2 chunks). */
	const char *size = getenv("STARPU_TRACE_BUFFER_SIZE");
	unsigned mib = size && atoi(size) > 0 ? (unsigned)atoi(size) : 8;
	raw_buffer_bytes = (size_t)mib << 20;
	chunk_budget = mib < 2 ? 2 : mib;
	rec.flush_failed = 0;
	rec.mpi_size = 0; /* a later session may not use MPI */
	rec.first_error[0] = '\0';
	previous_error_callback = OTF2_Error_RegisterCallback(otf2_failed, NULL);
	rec.archive = OTF2_Archive_Open(rec.tmp_dir, "traces", OTF2_FILEMODE_WRITE, EVENT_CHUNK, 4 * 1024 * 1024,
					OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!rec.archive) {
		astro_log_error(WHAT, "cannot create the OTF2 archive in %s: no trace is recorded", rec.tmp_dir);
		remove_tree(rec.tmp_dir);
		return ASTRO_PLUGIN_DECLINE;
	}
	OTF2_Archive_SetFlushCallbacks(rec.archive, &flush_callbacks, NULL);
	OTF2_Archive_SetMemoryCallbacks(rec.archive, &memory_callbacks, NULL);
	OTF2_Archive_SetSerialCollectiveCallbacks(rec.archive);
	OTF2_Pthread_Archive_SetLockingCallbacks(rec.archive, NULL);
	OTF2_Archive_SetCreator(rec.archive, "Astrolabe (StarPU 1.4 API) trace recorder");
	OTF2_Archive_OpenEvtFiles(rec.archive);

	rec.strings = g_hash_table_new(g_str_hash, g_str_equal);
	rec.string_list = g_ptr_array_new_with_free_func(g_free);
	rec.regions = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	rec.region_names = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	rec.region_kind = g_array_new(FALSE, FALSE, sizeof(enum region_kind));
	rec.metrics = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	rec.metric_names = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	rec.metric_units = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	generation++;
	iterations[0] = iterations[1] = -1;
	iteration_depth = 0;
	/* The state regions take the first ids, in schema order. */
#define STATE_REGION(id, name) region_locked(name, R_STATE);
	TRACE_STATES(STATE_REGION)
#undef STATE_REGION

	rec.categories = parse_categories(getenv("STARPU_FXT_EVENTS"));
	rec.full_mask = moments_of(rec.categories);
#ifdef STARPU_PAPI
	/* Counted only while profiling is on, as counters_papi_task does; separated by spaces or commas, as it reads them. */
	const char *papi = getenv("STARPU_PROF_PAPI_EVENTS");
	papi_names = g_strsplit_set(papi ? papi : "", " ,", -1);
	npapi = 0;
	for (char **p = papi_names; *p; p++)
		if (**p)
			papi_names[npapi++] = *p;
		else
			g_free(*p);
	papi_names[npapi] = NULL;
	if (npapi && (rec.categories & C_TASK))
		rec.full_mask |= ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_COMPLETED);
#endif
	rec.meta_mask = moments_of(C_META);
	rec.subscription = astro_observe_subscribe(astro_trace_autostart() ? rec.full_mask : rec.meta_mask, observe, NULL);
	if (rec.subscription < 0) {
		OTF2_Archive_Close(rec.archive);
		rec.archive = NULL;
		remove_tree(rec.tmp_dir);
		free_tables();
		return rec.subscription;
	}
	return 0;
}

/* ------------------------------------------------------------- shutdown */

static void write_definitions(void)
{
	OTF2_GlobalDefWriter *defs = OTF2_Archive_GetGlobalDefWriter(rec.archive);
	uint64_t first = UINT64_MAX, last = 0;
	for (struct location *l = rec.locations; l; l = l->next) {
		if (l->nevents && l->first_ts < first)
			first = l->first_ts;
		if (l->last_ts > last)
			last = l->last_ts;
	}
	if (first == UINT64_MAX)
		first = last = 0;
	OTF2_GlobalDefWriter_WriteClockProperties(defs, 1000000000, first, last - first, OTF2_UNDEFINED_TIMESTAMP);

	/* Names the writer needs besides those the run interned. */
	starpu_pthread_mutex_lock(&rec.lock);
	uint32_t s_machine = intern_locked("machine"), s_node = intern_locked("node"), s_process = intern_locked("StarPU program");
	uint32_t s_task = intern_locked(TRACE_DESC_TASK), s_state = intern_locked(TRACE_DESC_STATE), s_empty = intern_locked("");
	uint32_t s_user_state = intern_locked(TRACE_DESC_USER_STATE);
	/* The converter warns about a trace that lost events. */
	if (rec.flush_failed)
		intern_locked(TRACE_INCOMPLETE_MARK);
	if (rec.mpi_size > 0) {
		char mark[96];
		snprintf(mark, sizeof(mark), TRACE_MPI_MARK "%d %d %lld", rec.mpi_rank, rec.mpi_size, (long long)rec.mpi_offset_ns);
		intern_locked(mark);
	}
	uint32_t param_names[TRACE_NPARAMETERS], attr_names[TRACE_NATTRIBUTES];
	unsigned k = 0;
#define PNAME(id, name, type) param_names[k++] = intern_locked(name);
	TRACE_PARAMETERS(PNAME)
#undef PNAME
	k = 0;
#define ANAME(id, name, type) attr_names[k++] = intern_locked(name);
	TRACE_ATTRIBUTES(ANAME)
#undef ANAME
	for (struct location *l = rec.locations; l; l = l->next)
		intern_locked(l->name);
	uint32_t s_tid = intern_locked(TRACE_PROPERTY_TID), s_bindid = intern_locked(TRACE_PROPERTY_BINDID);

	for (unsigned i = 0; i < rec.string_list->len; i++)
		OTF2_GlobalDefWriter_WriteString(defs, i, g_ptr_array_index(rec.string_list, i));
	k = 0;
#define PDEF(id, name, type) OTF2_GlobalDefWriter_WriteParameter(defs, id, param_names[k++], OTF2_PARAMETER_TYPE_##type);
	TRACE_PARAMETERS(PDEF)
#undef PDEF
	k = 0;
#define ADEF(id, name, type) OTF2_GlobalDefWriter_WriteAttribute(defs, id, attr_names[k++], s_empty, OTF2_TYPE_##type);
	TRACE_ATTRIBUTES(ADEF)
#undef ADEF
	OTF2_GlobalDefWriter_WriteSystemTreeNode(defs, 0, s_machine, s_node, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
	OTF2_GlobalDefWriter_WriteLocationGroup(defs, 0, s_process, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
	for (struct location *l = rec.locations; l; l = l->next)
		OTF2_GlobalDefWriter_WriteLocation(defs, l->id, intern_locked(l->name), OTF2_LOCATION_TYPE_CPU_THREAD, l->nevents, 0);
	/* Each thread's OS id and a worker's CPU: the names of StarPU's thread containers. */
	for (struct location *l = rec.locations; l; l = l->next) {
		OTF2_AttributeValue v = { .int64 = l->tid };
		OTF2_GlobalDefWriter_WriteLocationProperty(defs, l->id, s_tid, OTF2_TYPE_INT64, v);
		if (l->bindid >= 0) {
			v.int32 = l->bindid;
			OTF2_GlobalDefWriter_WriteLocationProperty(defs, l->id, s_bindid, OTF2_TYPE_INT32, v);
		}
	}
	for (unsigned r = 0; r < rec.region_names->len; r++) {
		enum region_kind kind = g_array_index(rec.region_kind, enum region_kind, r);
		uint32_t n = g_array_index(rec.region_names, uint32_t, r);
		OTF2_GlobalDefWriter_WriteRegion(defs, r, n, n, kind == R_TASK ? s_task : kind == R_STATE ? s_state : s_user_state,
						 kind == R_TASK ? OTF2_REGION_ROLE_TASK : OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
						 OTF2_REGION_FLAG_NONE, s_empty, 0, 0);
	}
	/* Each sampled counter: a member (its name, double values, each a point in time, its unit) and a class of it alone. */
	for (uint32_t m = 0; m < rec.metric_names->len; m++) {
		OTF2_GlobalDefWriter_WriteMetricMember(defs, m, g_array_index(rec.metric_names, uint32_t, m), s_empty, OTF2_METRIC_TYPE_OTHER,
						       OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_DOUBLE, OTF2_BASE_DECIMAL, 0,
						       g_array_index(rec.metric_units, uint32_t, m));
		OTF2_GlobalDefWriter_WriteMetricClass(defs, m, 1, &m, OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_ABSTRACT);
	}
	starpu_pthread_mutex_unlock(&rec.lock);
	OTF2_Archive_CloseGlobalDefWriter(rec.archive, defs);
}

static void fini(void)
{
	if (!rec.archive)
		return;
	astro_observe_unsubscribe(rec.subscription);
	rec.subscription = -1;
	/* The workers have stopped: each location's records (its spill file, then its buffer) go into OTF2, one location
	 * at a time, so OTF2 keeps at most one location's chunk budget. */
	for (struct location *l = rec.locations; l; l = l->next) {
		tag_deps_flush(l);
		/* A spill that failed during the run comes first in the message. */
		if (l->raw.failed && !rec.flush_failed) {
			rec.flush_failed = 1;
			snprintf(rec.first_error, sizeof(rec.first_error), "writing %s: %s", l->raw.path, strerror(l->raw.error));
		}
	}
	OTF2_AttributeList *attrs = OTF2_AttributeList_New();
	for (struct location *l = rec.locations; l; l = l->next) {
		OTF2_EvtWriter *writer = OTF2_Archive_GetEvtWriter(rec.archive, l->id);
		l->nevents = 0;
		OTF2_ErrorCode status = raw_replay(&l->raw, writer, attrs, &replay_clock, &l->nevents);
		if (status != OTF2_SUCCESS && !__atomic_exchange_n(&rec.flush_failed, 1, __ATOMIC_RELAXED))
			snprintf(rec.first_error, sizeof(rec.first_error), "the events of %s: %s", l->name, OTF2_Error_GetDescription(status));
		if (OTF2_Archive_CloseEvtWriter(rec.archive, writer) != OTF2_SUCCESS)
			rec.flush_failed = 1;
	}
	OTF2_AttributeList_Delete(attrs);
	OTF2_Archive_CloseEvtFiles(rec.archive);
	OTF2_Archive_OpenDefFiles(rec.archive);
	for (struct location *l = rec.locations; l; l = l->next) {
		OTF2_DefWriter *w = OTF2_Archive_GetDefWriter(rec.archive, l->id);
		OTF2_Archive_CloseDefWriter(rec.archive, w);
	}
	OTF2_Archive_CloseDefFiles(rec.archive);
	write_definitions();
	OTF2_ErrorCode status = OTF2_Archive_Close(rec.archive);
	rec.archive = NULL;
	free_tables();
	OTF2_Error_RegisterCallback(previous_error_callback, NULL);
	if (status != OTF2_SUCCESS || rec.flush_failed) {
		/* Keep what was written: the converter reads it and says it is incomplete. */
		astro_log_error(WHAT, "writing the trace failed (%s): %s is incomplete (disk full?)",
				rec.first_error[0] ? rec.first_error : OTF2_Error_GetDescription(status), rec.final_dir);
	}
	/* The id may have been set since the start (StarPU-MPI sets the rank): the name follows it. */
	char name[PATH_MAX];
	archive_name(name, sizeof(name));
	if (snprintf(rec.final_dir, sizeof(rec.final_dir), "%s/%s", rec.prefix, name) >= (int)sizeof(rec.final_dir))
		astro_log_error(WHAT, "the trace's path %s/%s is too long: it is cut", rec.prefix, name);
	/* Replace an older trace of the same name in one step. */
	char old[PATH_MAX + 8];
	int had_old = snprintf(old, sizeof(old), "%s.old", rec.tmp_dir) < (int)sizeof(old) && rename(rec.final_dir, old) == 0;
	if (rename(rec.tmp_dir, rec.final_dir) < 0) {
		astro_log_error(WHAT, "cannot move the trace to %s (%s): it stays in %s", rec.final_dir, strerror(errno), rec.tmp_dir);
		return;
	}
	if (had_old)
		remove_tree(old);
	if (!rec.flush_failed && status == OTF2_SUCCESS)
		astro_log_info(WHAT, "trace written to %s", rec.final_dir);

	const char *generate = getenv("STARPU_GENERATE_TRACE");
	if (generate && atoi(generate) > 0) {
		const char *options = getenv("STARPU_GENERATE_TRACE_OPTIONS");
		char **argv = NULL;
		char *line = g_strdup_printf("starpu_fxt_tool -d %s %s -i %s", rec.prefix, options ? options : "", rec.final_dir);
		gint argc = 0;
		if (!g_shell_parse_argv(line, &argc, &argv, NULL)) {
			astro_log_error(WHAT, "STARPU_GENERATE_TRACE_OPTIONS='%s' cannot be parsed: the trace is not converted", options);
		} else if (trace_convert_main(argc, argv) != 0) {
			astro_log_error(WHAT, "STARPU_GENERATE_TRACE: the conversion of %s failed (see above)", rec.final_dir);
		}
		g_strfreev(argv);
		g_free(line);
	}
}

ASTRO_PLUGIN_DEFINE(tool_trace, ASTRO_PLUGIN_TOOL, "records an OTF2 execution trace (STARPU_FXT_TRACE=1; starpu_fxt_tool converts it)", init, fini);
