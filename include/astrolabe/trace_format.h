/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Astrolabe trace formats: what an output of the trace converter
 * (starpu_fxt_tool, STARPU_GENERATE_TRACE=1) implements to be written from
 * the recorded trace, built in or as a plugin.
 *
 * The converter reads the OTF2 archive once, in time order, and hands every
 * format it has the same decoded stream: the output folder and options
 * (begin), each archive (process) and its locations, then as they happen the
 * states entered and left on each location (task executions included),
 * counter values, dependencies, instant events, and, when they are complete,
 * each task's life (at its end) and each data handle (at its
 * unregistration), the runtime's own jobs (at their submission) and its
 * other events (pushes, pops, transfers...: event), then the StarPU-MPI
 * messages whose two ends were read (message), then end. Every callback may be NULL; every date is in
 * nanoseconds from the trace's origin (the earliest first event of the
 * archives converted together), per location in time order.
 *
 * A format plugin is a libtool module named format_NAME (see
 * astrolabe/plugin.h) whose init registers its formats:
 *
 *     static const struct astro_trace_format csv = {
 *         .abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
 *         .name = "tasks_csv", .description = "tasks.csv: one line per task",
 *         .begin = csv_begin, .task = csv_task, .end = csv_end,
 *     };
 *     static int init(void) { return astro_trace_format_register(&csv); }
 *     ASTRO_PLUGIN_DEFINE(format_tasks_csv, ASTRO_PLUGIN_TRACE_FORMAT, "tasks as CSV", init, NULL);
 *
 * The converter loads the format_* modules of the plugin directories (the
 * built-in one, then STARPU_PLUGIN_PATH) when it starts; starpu_init() does
 * not load them. `starpu_fxt_tool -formats` lists the formats, `-no-format
 * NAME` turns one off, `-format NAME` turns on one that is off by default.
 */
#ifndef __ASTROLABE_TRACE_FORMAT_H__
#define __ASTROLABE_TRACE_FORMAT_H__

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ABI version of struct astro_trace_format and of the structs it receives. */
#define ASTRO_TRACE_FORMAT_ABI_VERSION 1

/** struct astro_trace_format's flags: the format writes nothing unless `-format NAME` asks for it. */
#define ASTRO_TRACE_FORMAT_OFF_BY_DEFAULT 1u

/** What a format is given at begin: where to write and the converter's options. */
struct astro_trace_format_options
{
	/** The output folder (-d; STARPU_FXT_PREFIX under STARPU_GENERATE_TRACE), "" for the current one. */
	const char *dir;
	/** How many archives (processes) are converted together: each gets a process callback. */
	int nprocesses;
	/** -c: one colour per task name. */
	int colors;
	/** -no-events: no push/pop, register/unregister, user or program events. */
	int no_events;
	/** -no-counter: no nsubmitted/nready counters. */
	int no_counter;
	/** -no-bus: no transfers nor memory-manager variables. */
	int no_bus;
	/** -no-flops: no GFlop/s counters. */
	int no_flops;
	/** -label-deps: label dependencies with their kind. */
	int label_deps;
	/** -no-smooth: GFlop/s not smoothed. */
	int no_smooth;
	/** -memory-states: the memory managers' detailed states (data requests, MSI states...). */
	int memory_states;
	/** -no-acquire: data acquisitions left out of the graph. */
	int no_acquire;
	/** -internal: the runtime's own jobs drawn in the graph. */
	int internal;
	/** -use-task-color: the scheduling contexts' values in the task's colour. */
	int use_task_color;
	/** -number-events: count the events of each kind. */
	int number_events;
	/** -o: the Paje file's name ("paje.trace"). */
	const char *paje;
	/** Room for growth: zero. */
	void *reserved[4];
};

/** One archive, i.e. one process of the run (a StarPU-MPI rank). */
struct astro_trace_process
{
	/** Its rank (0 for a single archive). */
	int rank;
	/** The archive's path as given to the converter. */
	const char *input;
	/** The prefix StarPU puts on its containers and job ids: "" for one archive, else "<rank>_". */
	const char *prefix;
	/** 1 when several archives are converted together. */
	int multi;
	/**
	 * 1 when the archive is a StarPU-MPI process's (it has an MPI
	 * communication thread: its messages' ends). Added in place of a
	 * reserved pointer: same ABI version; 0 from a converter older than it.
	 */
	int mpi;
	void *reserved[3];
};

/** A location: a worker or an application thread. */
struct astro_trace_location
{
	/** The archive's id of the location (worker id, 1000 + n for the n-th application thread). */
	uint64_t id;
	/** "CPU0", "UserThread0"... */
	const char *name;
	/** Its worker id, -1 for an application thread. */
	int workerid;
	/** Its OS thread id (0: unknown). */
	long tid;
	/** A worker's logical CPU (-1: unknown). */
	int bindid;
	void *reserved[4];
};

/** A data handle a task accesses. */
struct astro_trace_handle
{
	uint64_t handle;
	/** enum starpu_data_access_mode bits (STARPU_R 1, STARPU_W 2, ...). */
	uint32_t mode;
	uint64_t size;
};

/** A task's life, as tasks.rec tells it: given once, when it ended (or at the end of its archive when it never ran). */
struct astro_trace_task
{
	uint64_t job;
	/** Its name and performance model's symbol; NULL when none. */
	const char *name, *model;
	/** has_tag: the task has a tag (tag). */
	int has_tag;
	uint64_t tag;
	int32_t priority;
	/** starpu_task's color (0: none) and the footprint of its data. */
	uint32_t color, footprint;
	double flops;
	/** Bytes of its data. */
	uint64_t size;
	/** Whether it was submitted, whether it ran (start, end, worker, location are then set). */
	int submitted, executed;
	uint64_t submit_date, start_date, end_date;
	int worker;
	uint64_t location;
	/** starpu_iteration_push()'s iteration and subiteration, -1 when none. */
	int64_t iteration, subiteration;
	unsigned nhandles;
	const struct astro_trace_handle *handles;
	/** The jobs it depended on. */
	unsigned ndeps;
	const uint64_t *deps;
	/**
	 * The interface's description of each of its handles (as struct
	 * astro_trace_data's) when the task was handed over, nhandles of them;
	 * an entry is NULL when the handle's is unknown. Added in place of a
	 * reserved pointer: same ABI version; NULL from a converter older than it.
	 */
	const char *const *descriptions;
	/**
	 * The coordinates (starpu_data_set_coordinates(), as struct
	 * astro_trace_data's) of each of its handles when the task was handed
	 * over, nhandles of them; an entry is NULL when the handle has none.
	 * Added in place of a reserved pointer, as descriptions.
	 */
	const char *const *coordinates;
	/** The scheduling context it ran in (0: the default one, or unknown). In place of a reserved pointer, as descriptions. */
	unsigned sched_ctx;
	/**
	 * For each of its handles (nhandles of them), the NUMA nodes holding a
	 * valid copy when it started: bit n for NUMA node n, -1 for none. NULL
	 * unless recorded (STARPU_FXT_EVENTS with TASK_VERBOSE_EXTRA). In place
	 * of the last reserved pointer, as descriptions.
	 */
	const int64_t *numa_nodes;
};

/** A state of a location: a task's execution or a runtime or application state (Sleeping, Callback...). */
struct astro_trace_state
{
	const struct astro_trace_location *location;
	const char *name;
	/** 1 for a task's execution (task is set), 0 for a state. */
	int is_task;
	/** 1 for a state the application opened (astro_instr_state_open()). */
	int is_user;
	/** 0 when entered, 1 when left. */
	int left;
	/** The date it was entered; end: the date it was left (at the leave). */
	uint64_t begin, end;
	/**
	 * The task run, at the enter and the leave of a task (its enter is
	 * given once its handles are known, at the same date, with their
	 * descriptions and coordinates as they are then), else NULL; its
	 * record comes later, in task.
	 */
	const struct astro_trace_task *task;
	void *reserved[4];
};

/** What a counter value measures. */
enum astro_trace_counter_kind
{
	/** The scheduler's nsubmitted and nready. */
	ASTRO_TRACE_COUNTER_RUNTIME = 0,
	/** GFlop/s: of all workers ("GFlop/s") or of one ("GFlop/s CPU0"). */
	ASTRO_TRACE_COUNTER_GFLOPS = 1,
	/** A memory node's allocated MB ("MEMMANAGER0 Used (MB)"). */
	ASTRO_TRACE_COUNTER_MEMORY = 2,
	/** A counter the counters sampler read, named by its PAPI-style event name. */
	ASTRO_TRACE_COUNTER_SAMPLED = 3,
	/** A burst's value while it lasts, 0 after (astro_instr_burst_open()); raw holds the value. */
	ASTRO_TRACE_COUNTER_BURST = 4
};

/** One value of a counter series. */
struct astro_trace_counter
{
	/** What it measures. */
	enum astro_trace_counter_kind kind;
	/** The series: "nsubmitted", "GFlop/s CPU0", a burst's key... */
	const char *name;
	/** When it took this value. */
	uint64_t date;
	/** The value. */
	double value;
	/** A burst's integer value (value is the same as a double); 0 for the other kinds. */
	uint64_t raw;
	/**
	 * A burst's value's name in the event-key dictionary
	 * (astro_instr_value_register()), else NULL. In place of a reserved
	 * pointer: same ABI version; NULL from a converter older than it.
	 */
	const char *label;
	void *reserved[3];
};

/** A dependency between two tasks, or two tags. */
struct astro_trace_dependency
{
	/** 0: declared (succ waits for pred); 1: pred ended, the arrow leaves it (date, location); 2: succ started, the arrow arrives (date, location). */
	int phase;
	/** The jobs, or the tags for a tag dependency. */
	uint64_t pred, succ;
	/** The recorder's DepKind: 0 data-induced, 1 explicit (starpu_task_declare_deps), 2 tags. */
	int kind;
	/** Pairs phase 1 with phase 2 of the same arrow (1, 2, ...); 0 at phase 0. */
	unsigned flow;
	uint64_t date;
	/** Where the arrow leaves (phase 1) or arrives (phase 2). */
	uint64_t location;
	void *reserved[4];
};

/** An instant event. */
struct astro_trace_instant
{
	/** 0: starpu_fxt_trace_user_event() (value); 1: a program event or mark, starpu_fxt_trace_user_event_string() (name). */
	int kind;
	/** The user event's value in decimal, or the program event's string. */
	const char *name;
	uint64_t value;
	uint64_t date;
	/** Where it happened; NULL when unknown. */
	const struct astro_trace_location *location;
	void *reserved[4];
};

/**
 * A job of the runtime's own, not a task of the application: a data
 * acquisition (starpu_data_acquire*) or an internal job (unregister_submit,
 * a prefetch...), given when it is submitted. Those that -no-acquire
 * (acquisitions) or the default (internal jobs, unless -internal) leave out
 * of the graph are not given, nor are their dependencies.
 */
struct astro_trace_job
{
	/** Its job id, as the dependencies name it. */
	uint64_t job;
	/** What it is ("acquire", "unregister_submit"...); "runtime" when unknown. */
	const char *name;
	/** 1 for a data acquisition, 0 for an internal job. */
	int acquire;
	/** When it was submitted. */
	uint64_t date;
	/** Room for growth: zero. */
	void *reserved[4];
};

/** A data handle, given once, when it was unregistered (or at the end of its archive). */
struct astro_trace_data
{
	/** The handle's address in the run, as tasks' handles give it. */
	uint64_t handle;
	/** Its home memory node. */
	int home_node;
	/** Its bytes. */
	uint64_t size;
	/** Its interface's description, starpu_data_set_name()'s name, starpu_data_set_coordinates()'s; NULL when none. */
	const char *description, *name, *coordinates;
	void *reserved[4];
};

/** What a struct astro_trace_event tells; kinds are only ever added at the tail. */
enum astro_trace_event_kind
{
	/** A task pushed to the scheduler (job, priority, worker: the pusher's, -1 for an application thread). */
	ASTRO_TRACE_EVENT_PUSH = 0,
	/** A task popped from the scheduler (job, priority, worker: the popper's, -1 for an application thread). */
	ASTRO_TRACE_EVENT_POP = 1,
	/** A data handle registered (handle, size, node: its home). */
	ASTRO_TRACE_EVENT_REGISTER = 2,
	/** A data handle unregistered (handle). */
	ASTRO_TRACE_EVENT_UNREGISTER = 3,
	/** A copy between memory nodes began (handle, size, src_node, node: the destination). */
	ASTRO_TRACE_EVENT_TRANSFER_BEGIN = 4,
	/** A copy between memory nodes ended (handle, size, src_node, node: the destination). */
	ASTRO_TRACE_EVENT_TRANSFER_END = 5,
	/** Bytes allocated on a memory node (node, value: bytes, negative when freed: at the end of a Freeing state, "F"; size: the node's bytes allocated after it). */
	ASTRO_TRACE_EVENT_ALLOCATION = 6,
	/** A memory manager entered a state (node, name: the state's Paje alias, "A" allocating, "F" freeing, "W" writing back, "R" reclaiming; handle, size). */
	ASTRO_TRACE_EVENT_MEMORY_STATE_BEGIN = 7,
	/** A memory manager left a state (node, name, handle, size). */
	ASTRO_TRACE_EVENT_MEMORY_STATE_END = 8,
	/** A scheduler component created (component, name, worker: a worker component's, else -1). */
	ASTRO_TRACE_EVENT_COMPONENT_NEW = 9,
	/** A scheduler component connected to its parent (component: the child, from: the parent). */
	ASTRO_TRACE_EVENT_COMPONENT_CONNECT = 10,
	/** A task pushed from a component to another (job, from, component: the one it went to). */
	ASTRO_TRACE_EVENT_COMPONENT_PUSH = 11,
	/** A task pulled from a component by another (job, from, component). */
	ASTRO_TRACE_EVENT_COMPONENT_PULL = 12,
	/** A PAPI counter's value for a task (job, name: the PAPI event, value). */
	ASTRO_TRACE_EVENT_PAPI = 13,
	/** A handle's copy on a memory node changed its MSI state (handle, node, value: 0 invalid, 1 shared, 2 owner; src_node). */
	ASTRO_TRACE_EVENT_DATA_STATE = 14,
	/** starpu_data_wont_use() on a handle (handle; src_node, node as recorded, 0 when not). */
	ASTRO_TRACE_EVENT_WONT_USE = 15,
	/** A data request created (value: its number, handle, src_node, node: the destination, prefetch). */
	ASTRO_TRACE_EVENT_DATA_REQUEST = 16,
	/**
	 * The archive's events are over: given for each location of the
	 * archive (location), after every other event of the archive and
	 * before the tasks that never ended (task); date: the archive's last
	 * event's.
	 */
	ASTRO_TRACE_EVENT_ARCHIVE_END = 17
};

/**
 * One of the runtime's events that the other callbacks do not tell: the
 * scheduler's pushes and pops, data registrations, transfers, allocations,
 * memory managers' states, the coherency of the handles' copies and the
 * data requests, scheduler components, PAPI values; as it
 * happens, in time order. A field its kind does not name is zero (NULL).
 */
struct astro_trace_event
{
	enum astro_trace_event_kind kind;
	/** When it happened. */
	uint64_t date;
	/** Where it was recorded; NULL when unknown. */
	const struct astro_trace_location *location;
	/** A task's job. */
	uint64_t job;
	/** The task's priority. */
	int32_t priority;
	/** A data handle's address, as tasks' handles give it. */
	uint64_t handle;
	/** Bytes. */
	uint64_t size;
	/** A value: bytes allocated, a counter's. */
	int64_t value;
	/** Memory nodes: a transfer's source and node (its destination, the node of an allocation or state). */
	int src_node, node;
	/** A name: a PAPI event's, a state's alias, a component's. */
	const char *name;
	/** Scheduler components, by their address in the run told apart per process (0: the policy itself). */
	uint64_t component, from;
	/** A worker's id (-1: an application thread's, no worker's). */
	int worker;
	/** A data request's kind, StarPU's enum starpu_is_prefetch: 0 fetch, 1 task prefetch, 2 prefetch, 3 idle fetch. */
	int prefetch;
	/** Room for growth: zero. */
	void *reserved[7];
};

/**
 * A StarPU-MPI message, given once both of its ends were read: after every
 * archive, at the end, in the order of their receptions.
 */
struct astro_trace_message
{
	/** The ranks of the sender and of the receiver. */
	int src, dst;
	/** Its MPI tag. */
	uint64_t tag;
	/** When it was sent and when it was received (never before it was sent). */
	uint64_t send_date, recv_date;
	/** The data handles sent and received into. */
	uint64_t send_handle, recv_handle;
	/** Bytes. */
	uint64_t size;
	/** The sent handle's name (starpu_data_set_name()), NULL when none. */
	const char *name;
	/**
	 * When the receive was recorded, on the common time base: recv_date
	 * before it is held at send_date, so earlier than send_date when the
	 * clock offsets StarPU-MPI measured at init were off (comms.rec shows
	 * it so). In place of a reserved pointer.
	 */
	uint64_t recorded_recv_date;
	/** Room for growth: zero. */
	void *reserved[3];
};

/**
 * An output format of the trace converter. begin returns the format's state
 * (any non-NULL pointer), given back to every other callback; NULL means it
 * cannot write (it printed nothing: the converter says so, naming the format
 * and errno, and goes on with the others). end returns 0, or a negative errno
 * when its output is incomplete (a write failed). Fields are only ever added
 * at the tail.
 */
struct astro_trace_format
{
	/** ASTRO_TRACE_FORMAT_ABI_VERSION the format was built with: any other is refused. */
	unsigned abi_version;
	/** Its name, for -formats, -no-format and -format: letters, digits, '_' and '-'. */
	const char *name;
	/** One line for -formats: what it writes. */
	const char *description;
	/** ASTRO_TRACE_FORMAT_OFF_BY_DEFAULT or 0. */
	unsigned flags;
	void *(*begin)(const struct astro_trace_format_options *options);
	void (*process)(void *state, const struct astro_trace_process *process);
	void (*location)(void *state, const struct astro_trace_location *location);
	void (*state)(void *state, const struct astro_trace_state *s);
	void (*counter)(void *state, const struct astro_trace_counter *counter);
	void (*dependency)(void *state, const struct astro_trace_dependency *dependency);
	void (*instant)(void *state, const struct astro_trace_instant *instant);
	void (*task)(void *state, const struct astro_trace_task *task);
	void (*data)(void *state, const struct astro_trace_data *data);
	int (*end)(void *state);
	/**
	 * A job of the runtime's own (struct astro_trace_job), when it is
	 * submitted. Added in place of a reserved pointer: same ABI version; a
	 * format built before it has it NULL.
	 */
	void (*job)(void *state, const struct astro_trace_job *job);
	/** Another event of the runtime (struct astro_trace_event), as it happens. In place of a reserved pointer, as job. */
	void (*event)(void *state, const struct astro_trace_event *event);
	/** A StarPU-MPI message (struct astro_trace_message), at the end. In place of a reserved pointer, as job. */
	void (*message)(void *state, const struct astro_trace_message *message);
	/** Room for growth: zero. */
	void *reserved[5];
};

/**
 * Makes format available to the trace converter. Call it from a format
 * plugin's init; format must outlive the process (a static const). Returns
 * 0; -EINVAL (one message naming the plugin) for a format of another ABI
 * version, without a name, with a name of other characters than letters,
 * digits, '_' and '-', or without begin and end; -EEXIST when a format of
 * that name is registered already (the first one stays).
 */
int astro_trace_format_register(const struct astro_trace_format *format);

/**
 * Loads the format plugins (format_*.so) of the plugin directories not
 * loaded yet (the built-in one or ASTROLABE_PLUGIN_DIR, then
 * STARPU_PLUGIN_PATH), running their init; works without starpu_init(). A
 * bad plugin gets one message and is skipped. Returns how many formats are
 * registered.
 */
int astro_trace_formats_load(void);

/** The n-th registered format in registration order (n from 0), NULL past the last. */
const struct astro_trace_format *astro_trace_format_nth(unsigned n);

/** Where the n-th format comes from: the plugin's file, or "built in". NULL past the last. */
const char *astro_trace_format_origin(unsigned n);

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_TRACE_FORMAT_H__ */
