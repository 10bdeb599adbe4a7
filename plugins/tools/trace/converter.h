/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The converter's state, shared by its files (starpu_fxt_tool, convert.h),
 * lowest first:
 *   convert_read.c     what the others read with: an input's anchor file,
 *                      OTF2's first error, the archive's strings, an event's
 *                      attributes, the messages
 *   convert_stream.c   the stream to the formats (formats.h): the decoded
 *                      tasks, states, counters, events... as the formats
 *                      have them
 *   convert_tables.c   what stays in memory: the tasks not ended, the
 *                      handles registered, the tasks that ended lately
 *   convert_defs.c     an archive's definitions (strings, regions,
 *                      locations, parameters, attributes, metrics)
 *   convert_events.c   an archive's events (regions entered and left,
 *                      parameters, metrics), decoded into the stream
 *   convert_mpi.c      several archives: their ranks, their common time
 *                      base, the StarPU-MPI messages matched across them
 *   convert_options.c  the command line
 *   convert.c          the conversion: the options, the formats, each
 *                      archive read, the end
 * No file calls one above it, and no format calls any of them.
 */
#ifndef __ASTRO_TRACE_CONVERTER_H__
#define __ASTRO_TRACE_CONVERTER_H__

#include <glib.h>
#include <otf2/otf2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "formats.h"
#include "gflops.h"
#include "number_events.h"
#include "schema.h"

#define TOOL "starpu_fxt_tool"
/* The program whose messages these are: TOOL, or the one trace_convert_one_format() was given. */
extern const char *convert_program;
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
	GArray *numa_nodes; /* int64_t per handle (NumaNodes, TASK_VERBOSE_EXTRA); NULL when none was recorded */
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
	GHashTable *value_names;    /* "<value> <key>" of the event-key dictionary -> the value's name (copies) */
	GHashTable *metric_classes; /* the archive's metric class -> its first member + 1 */
	long nsubmitted, nready;
	uint64_t node_used[64];  /* bytes allocated on each memory node */
	struct gflops gflops;    /* the archive's GFlop/s sum (gft) */
	uint64_t last_ts;
	unsigned nflows;
	bool failed;           /* a corrupt archive was reported: stop reading */
	bool began;              /* events were read: a failed conversion keeps its outputs as NAME.incomplete */
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

/* The attribute values of one event, by schema id. */
struct attrs
{
	bool has[TRACE_NATTRIBUTES];
	OTF2_AttributeValue v[TRACE_NATTRIBUTES];
};

/* The length of a task's handles or deps, NULL when it has none. */
#define LEN(array) ((array) ? (array)->len : 0u)

/* A date as the formats have it: ns from the origin. */
static inline uint64_t convert_since_origin(const struct converter *c, uint64_t ts)
{
	return ts >= c->origin ? ts - c->origin : 0;
}

/* convert_read.c */
/* Prints "[astrolabe] starpu_fxt_tool: " and the message on stderr; returns 1 (the exit status). */
int convert_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The archive's string ref ("" when it has none). */
const char *convert_string(struct converter *c, OTF2_StringRef ref);
/* The attributes of an event, by schema id. */
void convert_attrs(struct converter *c, OTF2_AttributeList *list, struct attrs *a);
/* Appends one element of size bytes to array, made at the first. */
GArray *convert_append(GArray *array, const void *element, guint size);
/* The anchor file of input (-i: the archive's folder, its traces.otf2 or any anchor file, or the link to it named
 * prof_file_<user>_<id>, resolved), NULL when it does not exist. */
char *convert_anchor(const char *input);
/* 0 when input is a trace folder with its anchor file, else 1 and one message. */
int convert_check_input(const char *input);
/* Keeps OTF2's first error message from now on (OTF2 prints each error itself, several lines per problem); returns
 * the callback it replaces, to register again at the end. */
OTF2_ErrorCallback convert_otf2_errors_kept(void);
/* The first error OTF2 reported since ("" when none). */
const char *convert_otf2_error(void);

/* convert_stream.c: the decoded stream to the formats on (formats.h). */
struct astro_trace_location convert_public_location(const struct location *l);
/* Task t's life, with its dependencies, to the formats that take tasks. */
void convert_emit_task(struct converter *c, const struct task *t);
/* Location l enters region r at begin, or leaves it (left) at end; t: the task it runs, at a task's enter and leave. */
void convert_emit_state(struct converter *c, const struct location *l, const struct region *r, uint64_t begin, bool left, uint64_t end,
			const struct task *t);
void convert_emit_counter(struct converter *c, enum astro_trace_counter_kind kind, const char *name, uint64_t ts, double value);
/* A dependency of succ on pred: declared (phase 0), leaving pred at its end (1) or reaching succ at its start (2). */
void convert_emit_dependency(struct converter *c, int phase, uint64_t pred, uint64_t succ, int kind, unsigned flow, uint64_t ts,
			     uint64_t location);
void convert_emit_instant(struct converter *c, const struct location *l, int kind, const char *name, uint64_t value, uint64_t ts);
void convert_emit_data(struct converter *c, const struct data *d);
/* One of the runtime's other events (push, pop, transfer...), kind and date filled in; e's other fields as its kind wants. */
void convert_emit_event(struct converter *c, const struct location *l, enum astro_trace_event_kind kind, uint64_t ts,
			struct astro_trace_event *e);

/* convert_tables.c: what stays in memory while an archive is read. */
void convert_tables_new(struct converter *c);
void convert_tables_free(struct converter *c);
/* The task of job, made at its first mention. */
struct task *convert_task(struct converter *c, uint64_t job);
/* Task t ended: the flows to its successors that have not started start here; its records are written and it is forgotten. */
void convert_task_done(struct converter *c, struct task *t);
/* The record of handle, made at its registration (one registered again without its unregistration is written first). */
struct data *convert_data_new(struct converter *c, uint64_t handle);
/* The record of handle, unregistered: written, forgotten. */
void convert_data_done(struct converter *c, uint64_t handle);
/* The end of an archive: the records of the tasks that did not end (by job) and of the handles still registered (by registration). */
void convert_write_remaining(struct converter *c);
/* The locations by id: workers first, in worker order, then application threads (a new array). */
GPtrArray *convert_sorted_locations(struct converter *c);

/* convert_defs.c: the callbacks of an archive's definitions (their argument: the converter). */
void convert_definitions_callbacks(OTF2_GlobalDefReaderCallbacks *callbacks);

/* convert_events.c: the callbacks of an archive's events (their argument: the converter). */
void convert_events_callbacks(OTF2_GlobalEvtReaderCallbacks *callbacks);
/* Every event read: the task states still waiting for their handles, the GFlop/s sums held back, each location's end. */
void convert_events_end(struct converter *c);

/* convert_mpi.c: several archives, one per process of a run. */
/* An archive and its rank. */
struct ranked
{
	int rank;
	char *input;
};

/* The inputs sorted by rank: their <id> (prof_file_<user>_<id>), else their order (struct ranked; a new array). */
GArray *convert_mpi_ranks(const GPtrArray *inputs);
/* What the first look at an archive finds: its first event, and its clock's offset to rank 0's (StarPU-MPI). */
struct clock_info
{
	uint64_t first;
	int64_t offset_ns;
};

/* The clock of each input (clocks: struct clock_info, one per input), and the earliest first event on rank 0's clock: the
 * common time base. */
void convert_mpi_origin(struct converter *c, GArray *clocks);
/* The StarPU-MPI messages, to the formats: each receive meets the oldest send of the same source, destination and tag. */
void convert_mpi_messages(struct converter *c);

/* convert_options.c: the command line into o; 0, 1 (a mistake, told) or -1 (-h: done). */
int convert_options_parse(struct options *o, int argc, char **argv);
void convert_options_free(struct options *o);

#endif
