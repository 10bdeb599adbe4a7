/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The observation path: the moments of a task's and a worker's life, defined
 * once in the kernel. Counters, tools, profiling feedback, traces and model
 * calibration all subscribe here. A moment nobody subscribed to costs one
 * predictable branch on the enable mask.
 */
#ifndef __ASTROLABE_OBSERVE_H__
#define __ASTROLABE_OBSERVE_H__

#include <stdint.h>
#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The moments. Only ever appended to. */
enum astro_moment
{
	ASTRO_MOMENT_RUNTIME_INIT_BEGIN = 0, /**< starpu_init() starts (before plugins load) */
	ASTRO_MOMENT_RUNTIME_INIT_END,       /**< starpu_init() is about to return */
	ASTRO_MOMENT_RUNTIME_TERMINATE,      /**< starpu_shutdown() starts */
	ASTRO_MOMENT_WORKER_INIT_BEGIN,      /**< a worker thread starts (workerid) */
	ASTRO_MOMENT_WORKER_INIT_END,        /**< the worker is ready to run tasks */
	ASTRO_MOMENT_WORKER_DEINIT_BEGIN,    /**< the worker stops */
	ASTRO_MOMENT_WORKER_DEINIT_END,
	ASTRO_MOMENT_TASK_SUBMITTED,         /**< starpu_task_submit() accepted the task */
	ASTRO_MOMENT_TASK_READY,             /**< its dependencies are released */
	ASTRO_MOMENT_TASK_PUSHED,            /**< the policy took it */
	ASTRO_MOMENT_TASK_POPPED,            /**< a worker got it */
	ASTRO_MOMENT_TASK_DATA_FETCHED,      /**< its data is on the worker's node */
	ASTRO_MOMENT_TASK_STARTED,           /**< the implementation is about to run (fun_ptr) */
	ASTRO_MOMENT_TASK_ENDED,             /**< the implementation returned */
	ASTRO_MOMENT_TASK_CALLBACK_BEGIN,    /**< only for a task with a callback to run (codelet's, task's or epilogue) */
	ASTRO_MOMENT_TASK_CALLBACK_END,
	ASTRO_MOMENT_TASK_COMPLETED,         /**< dependencies released, waiters may return */
	ASTRO_MOMENT_WORKER_SLEEP_BEGIN,     /**< the worker found no work and sleeps */
	ASTRO_MOMENT_WORKER_SLEEP_END,
	ASTRO_MOMENT_WORKER_SCHED_BEGIN,     /**< the worker asks the policy for work (an idle worker's repeated empty polls: only the first) */
	ASTRO_MOMENT_WORKER_SCHED_END,       /**< the policy answered (task set, or NULL); also ends a run of unreported empty polls */
	ASTRO_MOMENT_TRANSFER_BEGIN,         /**< a data transfer between memory nodes */
	ASTRO_MOMENT_TRANSFER_END,
	ASTRO_MOMENT_USER_BEGIN,             /**< application marks */
	ASTRO_MOMENT_USER_END,
	ASTRO_MOMENT_APP_WAIT_BEGIN,         /**< the application blocks: task/tag wait, wait_for_all, acquire (task set for task waits) */
	ASTRO_MOMENT_APP_WAIT_END,
	ASTRO_MOMENT_DATA_ALLOCATED,         /**< the runtime allocated a data buffer (dst_node, bytes) */
	ASTRO_MOMENT_TASK_DATA_RELEASED,     /**< the ended task released its data (only for a task with buffers), before its successors run */
	ASTRO_MOMENT_TASK_DEPENDENCY,        /**< task (job_id) now waits for job other_id; nimpl: an astro_dep_kind */
	ASTRO_MOMENT_DATA_REGISTERED,        /**< handle object registered (bytes, home node in dst_node) */
	ASTRO_MOMENT_DATA_UNREGISTERED,      /**< handle object is about to be freed */
	ASTRO_MOMENT_DATA_DESCRIBED,         /**< starpu_data_set_name (label) or starpu_data_set_coordinates (label NULL) on handle object */
	ASTRO_MOMENT_TRACE_MARK,             /**< starpu_fxt_* marks: nimpl is an astro_trace_mark, label the string, other_id the code */
	ASTRO_MOMENT_STATE_BEGIN,            /**< astro_instr_state_open(label) (astrolabe/instrument.h) */
	ASTRO_MOMENT_STATE_END,              /**< the thread's state label ends */
	ASTRO_MOMENT_BURST_BEGIN,            /**< astro_instr_burst_open(label, other_id) */
	ASTRO_MOMENT_BURST_END,              /**< astro_instr_burst_close(label) */
	/* The scheduling components (starpu_sched_component.h), reported through astro_observe_report(): */
	ASTRO_MOMENT_COMPONENT_NEW,          /**< component object was made (label: its name; nimpl: 1 + the worker of a worker component, else 0) */
	ASTRO_MOMENT_COMPONENT_CONNECT,      /**< component other_id (a pointer) is now a child of component object */
	ASTRO_MOMENT_COMPONENT_PUSH,         /**< job job_id goes from component other_id (0: from the policy) into component object; nimpl 1: object refused it, it went back */
	ASTRO_MOMENT_COMPONENT_PULL,         /**< job job_id was pulled out of component object by component other_id */
	/* StarPU-MPI (mpi/), reported through astro_observe_report(): */
	ASTRO_MOMENT_MPI_INIT,               /**< StarPU-MPI started: this process is rank nimpl of bytes ranks (MPI_COMM_WORLD); other_id is an int64_t,
					          rank 0's clock minus this one's in ns, measured then if someone observes this moment (0 on rank 0);
					          src_node 1 when measured by the synchronized exchange, 0 by one plain barrier (STARPU_MPI_TRACE_SYNC_CLOCKS=0) */
	ASTRO_MOMENT_MPI_SEND,               /**< a message leaves (posted to MPI): to rank dst_node from this rank src_node, bytes, other_id the data tag, object the handle */
	ASTRO_MOMENT_MPI_RECV,               /**< a message arrived (received): from rank src_node to this rank dst_node, bytes, other_id the data tag, object the handle */
	ASTRO_MOMENT_PROFILING_STATUS,       /**< starpu_profiling_status_set() turned profiling on or off (nimpl: the new status) */
	/* The counters sampler (plugins/counters/sampler), through astro_observe_report(): */
	ASTRO_MOMENT_COUNTER_SAMPLED,        /**< the sampler read counter label (its APAPI name, component, three colons, event); other_id holds the value
					          read, a double's bits (memcpy them back) */
	/* The submitting thread's side (StarPU's TASK_VERBOSE states of a user thread): */
	ASTRO_MOMENT_SUBMIT_STAGE_BEGIN,     /**< a stage of a submission starts (nimpl: an astro_submit_stage; task set) */
	ASTRO_MOMENT_SUBMIT_STAGE_END,       /**< that stage ends (same nimpl; no task: a submitted one may be complete and freed already) */
	/* A memory node's manager (StarPU's memory-manager states): */
	ASTRO_MOMENT_MEMORY_STATE_BEGIN,     /**< nimpl (an astro_memory_state) starts on node dst_node for bytes of handle object (NULL: none) */
	ASTRO_MOMENT_MEMORY_STATE_END,       /**< it ends (same fields) */
	/* Submission throttling (STARPU_LIMIT_MAX_SUBMITTED_TASKS): StarPU's "Throttling task submission" state: */
	ASTRO_MOMENT_SUBMIT_THROTTLE_BEGIN,  /**< starpu_task_submit() holds the application's thread: the limit is reached */
	ASTRO_MOMENT_SUBMIT_THROTTLE_END,    /**< it lets it go on (the count is down to the minimum, or nothing can complete) */
	/* Data coherency (recorded with STARPU_FXT_EVENTS' DATA; the -memory-states details of starpu_fxt_tool). */
	ASTRO_MOMENT_DATA_STATE,             /**< the copy of handle object on node dst_node is now in MSI state nimpl (an astro_data_state) */
	ASTRO_MOMENT_DATA_WONT_USE,          /**< starpu_data_wont_use(object) */
	ASTRO_MOMENT_DATA_REQUEST,           /**< a copy of handle object from node src_node to node dst_node was asked: other_id the
					      *   request's number (from 1), nimpl its kind (StarPU's enum starpu_is_prefetch: 0 fetch,
					      *   1 task prefetch, 2 prefetch, 3 idle fetch) */
	ASTRO_MOMENT_RUNTIME_JOB,            /**< job job_id is the runtime's own, no task (task NULL): nimpl 1 an application's
					      *   acquisition of handle object (starpu_data_acquire*), 0 internal (starpu_data_unregister_submit,
					      *   a prefetch, starpu_data_wont_use...); label what it is for. Reported before its dependencies */
	/* An idle worker's search for work, between its first empty poll and the task it finds or its sleep: */
	ASTRO_MOMENT_WORKER_IDLE_BEGIN,      /**< the worker's first poll found nothing: it keeps polling (not when it sleeps at once) */
	ASTRO_MOMENT_WORKER_IDLE_END,        /**< it found a task (before TASK_POPPED), or stops polling to sleep (before SLEEP_BEGIN) */
	ASTRO_NMOMENTS
};

#define ASTRO_MOMENT_BIT(m) (UINT64_C(1) << (m))

/** Or'ed into a subscription's mask: this observer never reads event->time_us,
 * so its moments need not read the clock (time_us is then 0 unless another
 * observer of the same moment wants it). */
#define ASTRO_OBSERVE_UNTIMED (UINT64_C(1) << 63)

/** What an observer is told. Fields that do not apply to the moment are zero. */
struct astro_event
{
	enum astro_moment moment;
	/** starpu_timing_now() at the moment (0 for observers subscribed with ASTRO_OBSERVE_UNTIMED). */
	double time_us;
	/** The worker concerned (-1: the application's thread). */
	int workerid;
	struct starpu_task *task;
	unsigned long job_id;
	/** For TASK_STARTED / TASK_ENDED: the implementation run, and its index. */
	void *fun_ptr;
	unsigned nimpl;
	/** For transfers. */
	unsigned src_node;
	unsigned dst_node;
	size_t bytes;
	/** For USER_BEGIN / USER_END: the application's label (may be NULL). */
	const char *label;
	/** For DATA_* moments: the handle. */
	const void *object;
	/** For TASK_DEPENDENCY: the predecessor's job id; for TRACE_MARK: the user code. */
	unsigned long other_id;
	/** Room for growth. */
	void *reserved[1];
};

/** TASK_DEPENDENCY's kinds (event->nimpl). */
enum astro_dep_kind
{
	ASTRO_DEP_TASK = 0,   /**< declared with starpu_task_declare_deps */
	ASTRO_DEP_DATA = 1,   /**< implicit, through data accesses */
	ASTRO_DEP_TAG = 2,    /**< starpu_tag_declare_deps: tag job_id waits for tag other_id (task is NULL) */
};

/** TRACE_MARK's kinds (event->nimpl). */
enum astro_trace_mark
{
	ASTRO_TRACE_USER_CODE = 0,     /**< starpu_fxt_trace_user_event(other_id) */
	ASTRO_TRACE_USER_STRING,       /**< starpu_fxt_trace_user_event_string(label) */
	ASTRO_TRACE_META_STRING,       /**< starpu_fxt_trace_user_meta_string(label) */
	ASTRO_TRACE_START_PROFILING,   /**< starpu_fxt_start_profiling() */
	ASTRO_TRACE_STOP_PROFILING,    /**< starpu_fxt_stop_profiling() */
	ASTRO_TRACE_ITERATION_PUSH,    /**< starpu_iteration_push(other_id) */
	ASTRO_TRACE_ITERATION_POP,     /**< starpu_iteration_pop() */
};

/** SUBMIT_STAGE_*'s stages (event->nimpl). */
enum astro_submit_stage
{
	ASTRO_SUBMIT_SUBMITTING = 0,  /**< starpu_task_submit() (StarPU's "Submitting task"), up to a synchronous task's wait */
	ASTRO_SUBMIT_BUILDING,        /**< starpu_task_insert() reads its arguments into the task ("Building task") */
};

/** MEMORY_STATE_*'s states (event->nimpl). */
enum astro_memory_state
{
	ASTRO_MEMORY_ALLOCATING = 0,  /**< a data buffer is allocated (DATA_ALLOCATED follows when it succeeded) */
	ASTRO_MEMORY_FREEING,         /**< a data buffer is freed */
	ASTRO_MEMORY_WRITING_BACK,    /**< an evicted copy, the only valid one, is written back to main memory first */
	ASTRO_MEMORY_RECLAIMING,      /**< the node is full: cached buffers or copies are freed to make room */
};

/** DATA_STATE's states (event->nimpl): a copy is invalid, valid with others (shared) or the only valid one (owner). */
enum astro_data_state
{
	ASTRO_DATA_INVALID = 0,
	ASTRO_DATA_SHARED,
	ASTRO_DATA_OWNER,
};

/** What starpu_fxt_autostart_profiling() last chose (1 unless it was called with 0). */
int astro_trace_autostart(void);
/** The id starpu_profiling_set_id() gave this process (0 by default): the suffix of its trace's name. */
int astro_trace_file_id(void);

typedef void (*astro_observer_fn)(const struct astro_event *event, void *arg);

/** The moments someone observes now (read-only: it changes with the subscriptions).
 * Code outside the kernel that reports moments (the scheduling components) tests
 * ASTRO_OBSERVED(m) before building its event, so that a moment nobody observes
 * costs one load and a predictable branch. */
extern uint64_t astro_observed_moments;
#define ASTRO_OBSERVED(m) __builtin_expect(!!(__atomic_load_n(&astro_observed_moments, __ATOMIC_RELAXED) & ASTRO_MOMENT_BIT(m)), 0)
/** Calls the observers of event->moment with event, stamping time_us first when one of them wants it. */
void astro_observe_report(struct astro_event *event);

/** Calls fn(event, arg) at every moment whose bit is in mask (plus ASTRO_OBSERVE_UNTIMED, optionally). Returns an id >= 0, or -ENOSPC / -EINVAL.
 * A moment whose only observer is one subscription is delivered inline at its site (a few loads and the call); an
 * observer on the task path may subscribe once per moment, with a function each, so that no dispatch on
 * event->moment is left (the trace recorder does). There are 64 subscriptions in all. */
int astro_observe_subscribe(uint64_t mask, astro_observer_fn fn, void *arg);
/** Stops the calls of subscription id. Returns 0 or -EINVAL. */
int astro_observe_unsubscribe(int id);
/** Changes the moments subscription id receives (and whether it is untimed). */
int astro_observe_set_mask(int id, uint64_t mask);

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_OBSERVE_H__ */
