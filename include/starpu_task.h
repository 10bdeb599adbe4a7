/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Codelets and tasks of the StarPU API. */
#ifndef __STARPU_TASK_H__
#define __STARPU_TASK_H__

#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <assert.h>
#include <starpu_config.h>
#include <starpu_util.h>
#include <starpu_data.h>
#include <starpu_perfmodel.h>
#include <starpu_profiling.h>
#include <starpu_task_bundle.h>
#include <starpu_worker.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a codelet may run (codelet and task "where" field). */
#define STARPU_NOWHERE ((1ULL) << 0)
/** The "where" bit of a worker type (enum starpu_worker_archtype): STARPU_CPU is STARPU_WORKER_TO_MASK(STARPU_CPU_WORKER). */
#define STARPU_WORKER_TO_MASK(worker_archtype) (1ULL << ((worker_archtype) + 1))
#define STARPU_CPU STARPU_WORKER_TO_MASK(STARPU_CPU_WORKER)
#define STARPU_CUDA STARPU_WORKER_TO_MASK(STARPU_CUDA_WORKER)
#define STARPU_HIP STARPU_WORKER_TO_MASK(STARPU_HIP_WORKER)
#define STARPU_OPENCL STARPU_WORKER_TO_MASK(STARPU_OPENCL_WORKER)
#define STARPU_MAX_FPGA STARPU_WORKER_TO_MASK(STARPU_MAX_FPGA_WORKER)
#define STARPU_MPI_MS STARPU_WORKER_TO_MASK(STARPU_MPI_MS_WORKER)
#define STARPU_TCPIP_MS STARPU_WORKER_TO_MASK(STARPU_TCPIP_MS_WORKER)

/** Codelet flags. */
#define STARPU_CODELET_SIMGRID_EXECUTE (1 << 0)
#define STARPU_CODELET_SIMGRID_EXECUTE_AND_INJECT (1 << 1)
#define STARPU_CODELET_NOPLANS (1 << 2)
/** cuda_flags: the CUDA function is asynchronous. */
#define STARPU_CUDA_ASYNC (1 << 0)
#define STARPU_OPENCL_ASYNC (1 << 0)
/** hip_flags: the HIP function is asynchronous (this build has no HIP driver). */
#define STARPU_HIP_ASYNC (1 << 0)

/** nbuffers value of a codelet whose tasks give their own buffer count. */
#define STARPU_VARIABLE_NBUFFERS (-1)
/** specific_nodes values. */
#define STARPU_SPECIFIC_NODE_LOCAL (-1)
#define STARPU_SPECIFIC_NODE_CPU (-2)
#define STARPU_SPECIFIC_NODE_SLOW (-3)
#define STARPU_SPECIFIC_NODE_FAST (-4)
#define STARPU_SPECIFIC_NODE_LOCAL_OR_CPU (-5)
#define STARPU_SPECIFIC_NODE_NONE (-6)

/** Task priorities: the runtime's default range is [STARPU_MIN_PRIO, STARPU_MAX_PRIO]. */
#define STARPU_MIN_PRIO (-5)
#define STARPU_MAX_PRIO 5
#define STARPU_DEFAULT_PRIO 0

/** How many workers may run one task. */
enum starpu_codelet_type
{
	STARPU_SEQ = 0,
	STARPU_SPMD,
	STARPU_FORKJOIN
};

/** Life cycle of a task. */
enum starpu_task_status
{
	STARPU_TASK_INIT,
	STARPU_TASK_BLOCKED,
	STARPU_TASK_READY,
	STARPU_TASK_RUNNING,
	STARPU_TASK_FINISHED,
	STARPU_TASK_BLOCKED_ON_TAG,
	STARPU_TASK_BLOCKED_ON_TASK,
	STARPU_TASK_BLOCKED_ON_DATA,
	STARPU_TASK_STOPPED
};

typedef uint64_t starpu_tag_t;

/** A CPU implementation: buffers[i] is the interface of the i-th handle, cl_arg the task's argument. */
typedef void (*starpu_cpu_func_t)(void **, void *);
typedef void (*starpu_cuda_func_t)(void **, void *);
typedef void (*starpu_opencl_func_t)(void **, void *);
typedef void (*starpu_hip_func_t)(void **, void *);
typedef void (*starpu_max_fpga_func_t)(void **, void *);

struct starpu_task;

/** Hierarchical DAGs ("bubbles"): whether task should be turned into a graph of smaller tasks
 * (1) or run whole (0), given arg. StarPU calls it only when built with --enable-bubble
 * (STARPU_BUBBLE), which this runtime is not: it never calls it, and such a task runs whole. */
typedef int (*starpu_bubble_func_t)(struct starpu_task *t, void *arg);
/** Hierarchical DAGs: submits the graph that replaces task, given arg. Never called here (see starpu_bubble_func_t). */
typedef void (*starpu_bubble_gen_dag_func_t)(struct starpu_task *t, void *arg);

/** The computation a task runs, with one implementation per kind of worker. */
/** @deprecated The value of starpu_codelet::cpu_func telling that the implementations are in cpu_funcs. */
#define STARPU_MULTIPLE_CPU_IMPLEMENTATIONS ((starpu_cpu_func_t)-1)
/** @deprecated The same for starpu_codelet::cuda_func and cuda_funcs. */
#define STARPU_MULTIPLE_CUDA_IMPLEMENTATIONS ((starpu_cuda_func_t)-1)
/** @deprecated The same for starpu_codelet::opencl_func and opencl_funcs. */
#define STARPU_MULTIPLE_OPENCL_IMPLEMENTATIONS ((starpu_opencl_func_t)-1)
/** @deprecated The same for starpu_codelet::hip_func and hip_funcs. */
#define STARPU_MULTIPLE_HIP_IMPLEMENTATIONS ((starpu_hip_func_t)-1)

struct starpu_codelet
{
	/** Where it may run (STARPU_CPU|...); 0 means "wherever an implementation exists". */
	uint32_t where;
	/** Optional filter: returns 1 when workerid may run implementation nimpl of task. */
	int (*can_execute)(unsigned workerid, struct starpu_task *task, unsigned nimpl);
	enum starpu_codelet_type type;
	int max_parallelism;
	/** @deprecated The one CPU implementation of StarPU 1.0's codelets: use
	 * cpu_funcs. Given without cpu_funcs, it becomes cpu_funcs[0] at the first
	 * submission (and this field STARPU_MULTIPLE_CPU_IMPLEMENTATIONS). */
	starpu_cpu_func_t cpu_func STARPU_DEPRECATED;
	/** @deprecated As cpu_func, for cuda_funcs. */
	starpu_cuda_func_t cuda_func STARPU_DEPRECATED;
	/** @deprecated As cpu_func, for opencl_funcs. */
	starpu_opencl_func_t opencl_func STARPU_DEPRECATED;
	/** CPU implementations, NULL-terminated. */
	starpu_cpu_func_t cpu_funcs[STARPU_MAXIMPLEMENTATIONS];
	/** CUDA implementations, NULL-terminated. */
	starpu_cuda_func_t cuda_funcs[STARPU_MAXIMPLEMENTATIONS];
	char cuda_flags[STARPU_MAXIMPLEMENTATIONS];
	starpu_opencl_func_t opencl_funcs[STARPU_MAXIMPLEMENTATIONS];
	char opencl_flags[STARPU_MAXIMPLEMENTATIONS];
	starpu_max_fpga_func_t max_fpga_funcs[STARPU_MAXIMPLEMENTATIONS];
	starpu_hip_func_t hip_funcs[STARPU_MAXIMPLEMENTATIONS];
	char hip_flags[STARPU_MAXIMPLEMENTATIONS];
	/** Names of the CPU implementations (for master-slave builds), NULL-terminated. */
	const char *cpu_funcs_name[STARPU_MAXIMPLEMENTATIONS];
	/** Hierarchical DAGs: the decision and graph functions of StarPU's --enable-bubble builds;
	 * never called here (see starpu_bubble_func_t), the tasks run whole. */
	starpu_bubble_func_t bubble_func;
	starpu_bubble_gen_dag_func_t bubble_gen_dag_func;
	/** Number of data buffers, or STARPU_VARIABLE_NBUFFERS. */
	int nbuffers;
	/** Access mode of each buffer. */
	enum starpu_data_access_mode modes[STARPU_NMAXBUFS];
	/** Access modes when nbuffers exceeds STARPU_NMAXBUFS. */
	enum starpu_data_access_mode *dyn_modes;
	unsigned specific_nodes;
	int nodes[STARPU_NMAXBUFS];
	int *dyn_nodes;
	/** Performance model, or NULL. */
	struct starpu_perfmodel *model;
	struct starpu_perfmodel *energy_model;
	/** Executions per worker, counted unless STARPU_CODELET_PROFILING=0. */
	unsigned long per_worker_stats[STARPU_NMAXWORKERS];
	/** Name shown in traces and statistics. */
	const char *name;
	unsigned color;
	/** Called after every task of this codelet, before the task's own callback. */
	void (*callback_func)(void *);
	/** STARPU_CODELET_* flags. */
	int flags;
	struct starpu_perf_counter_sample *perf_counter_sample;
	struct starpu_perf_counter_sample_cl_values *perf_counter_values;
	int checked;
	/** Room for growth. */
	void *reserved[4];
};

struct starpu_transaction;
struct _starpu_trs_epoch;
/** An epoch of a transaction (opaque). */
typedef struct _starpu_trs_epoch *starpu_trs_epoch_t;

/** One instance of a codelet with its data. */
struct starpu_task
{
	/* StarPU's fields, in another order: what submitting, scheduling, running and ending any task
	 * reads comes first (176 bytes, three or four cache lines), what only some features read
	 * after. The thread that submits and the worker that runs a task pass fewer lines to each
	 * other (bench/README.md). */
	/** The codelet; NULL makes a synchronisation-only task. */
	struct starpu_codelet *cl;
	/** Argument passed to the implementation. */
	void *cl_arg;
	/** Runtime's private part (the job). */
	void *starpu_private;
	/** Called once the task has run. */
	void (*callback_func)(void *);
	void *callback_arg;
	/** Links for starpu_task_list. */
	struct starpu_task *prev;
	struct starpu_task *next;
	/** Timing, filled when profiling is enabled. */
	struct starpu_profiling_task_info *profiling_info;
	/** Called when the task becomes ready, before it is pushed. */
	void (*prologue_callback_func)(void *);
	/** Called when a worker pops the task, before it runs. */
	void (*prologue_callback_pop_func)(void *);
	void (*epilogue_callback_func)(void *);
	/** The bundle the task is in (starpu_task_bundle_insert()), NULL when none. */
	starpu_task_bundle_t bundle;
	uint32_t *workerids;
	/** The transaction the task belongs to (starpu_transaction_open()), NULL when none; STARPU_TRANSACTION with starpu_task_insert(). */
	struct starpu_transaction *transaction;
	/** Free cl_arg / callback_arg / prologue args when the task is destroyed. */
	unsigned cl_arg_free:1;
	unsigned cl_ret_free:1;
	unsigned callback_arg_free:1;
	unsigned epilogue_callback_arg_free:1;
	unsigned prologue_callback_arg_free:1;
	unsigned prologue_callback_pop_arg_free:1;
	unsigned use_tag:1;
	/** Implicit data dependencies for this task (default 1). */
	unsigned sequential_consistency:1;
	/** starpu_task_submit() waits for the task to complete. */
	unsigned synchronous:1;
	/** Run on workerid only. */
	unsigned execute_on_a_specific_worker:1;
	/** The task is not waited for with starpu_task_wait() (default 1). */
	unsigned detach:1;
	/** Free the task after completion (set by starpu_task_create()). */
	unsigned destroy:1;
	/** Submit the task again after each completion. */
	unsigned regenerate:1;
	unsigned mf_skip:1;
	unsigned no_submitorder:1;
	unsigned scheduled:1;
	unsigned prefetched:1;
	/** Set by starpu_task_ft_failed(): this execution failed and should be retried (its duration is not recorded in performance models). */
	unsigned failed:1;
	/** Restricts cl->where for this task (-1: no restriction). */
	int32_t where;
	/** Number of buffers when cl->nbuffers is STARPU_VARIABLE_NBUFFERS. */
	int nbuffers;
	/** Priority between starpu_sched_get_min_priority() and starpu_sched_get_max_priority(). */
	int priority;
	/** Where the task stands in its life cycle. */
	enum starpu_task_status status;
	int magic;
	/** Scheduling context. */
	unsigned sched_ctx;
	/** Worker chosen with execute_on_a_specific_worker. */
	unsigned workerid;
	unsigned workerorder;
	unsigned workerids_len;
	unsigned possibly_parallel;
	size_t cl_arg_size;
	/** Tag of the task, when use_tag is set. */
	starpu_tag_t tag_id;
	/** Name shown in traces; defaults to the codelet's name. */
	const char *name;
	const char *file;
	int line;
	starpu_data_handle_t handles[STARPU_NMAXBUFS];
	void *interfaces[STARPU_NMAXBUFS];
	/** Access modes when cl->nbuffers is STARPU_VARIABLE_NBUFFERS. */
	enum starpu_data_access_mode modes[STARPU_NMAXBUFS];
	/** One flag per buffer, replacing its handle's sequential-consistency flag for this task (NULL: the handles' flags). */
	unsigned char *handles_sequential_consistency;
	/** Handles, interfaces and modes beyond STARPU_NMAXBUFS. */
	starpu_data_handle_t *dyn_handles;
	void **dyn_interfaces;
	enum starpu_data_access_mode *dyn_modes;
	void *cl_ret;
	size_t cl_ret_size;
	void *epilogue_callback_arg;
	void *prologue_callback_arg;
	void *prologue_callback_pop_arg;
	/** The transaction epoch the task belongs to, set at submission. */
	starpu_trs_epoch_t trs_epoch;
	unsigned type;
	unsigned color;
	int hypervisor_tag;
	/** Flops performed, for GFlop/s figures. */
	double flops;
	double predicted;
	double predicted_transfer;
	double predicted_start;
	/** The application's, set with STARPU_TASK_SCHED_DATA: the
	 * modular-heteroprio-heft policy reads it (1 chooses heft); no policy
	 * writes it, Astrolabe's keep their state for the task in its job. */
	void *sched_data;
	void *omp_task;
	/** Hierarchical DAGs (StarPU's --enable-bubble builds): the job id of the task whose graph this
	 * task belongs to, and the task's own decision and graph functions with their arguments (they
	 * take precedence over the codelet's). Kept as given; never called here (see starpu_bubble_func_t). */
	unsigned long bubble_parent;
	starpu_bubble_func_t bubble_func;
	void *bubble_func_arg;
	starpu_bubble_gen_dag_func_t bubble_gen_dag_func;
	void *bubble_gen_dag_func_arg;
	unsigned nb_termination_call_required;
	long iterations[2];
	/** Room for growth. */
	void *reserved[4];
};

#define STARPU_TASK_INVALID 0
#define STARPU_TASK_TYPE_NORMAL 0
#define STARPU_TASK_TYPE_INTERNAL (1 << 0)
#define STARPU_TASK_TYPE_DATA_ACQUIRE (1 << 1)

/** Static initialiser equivalent to starpu_task_init(). */
#define STARPU_TASK_INITIALIZER \
{ \
	.cl = NULL, .cl_arg = NULL, .starpu_private = NULL, .callback_func = NULL, .callback_arg = NULL, \
	.profiling_info = NULL, .use_tag = 0, .sequential_consistency = 1, .synchronous = 0, \
	.execute_on_a_specific_worker = 0, .detach = 1, .destroy = 0, .regenerate = 0, .where = -1, \
	.nbuffers = 0, .priority = STARPU_DEFAULT_PRIO, .status = STARPU_TASK_INIT, .magic = 42, \
	.sched_ctx = STARPU_NMAX_SCHED_CTXS, .cl_arg_size = 0, .name = NULL, .hypervisor_tag = 0, \
	.flops = 0.0, .predicted = NAN, .predicted_transfer = NAN, .predicted_start = NAN, \
	.iterations = { -1, -1 } \
}

/** Number of buffers of task. */
#define STARPU_TASK_GET_NBUFFERS(task) \
	((unsigned)((task)->cl->nbuffers == STARPU_VARIABLE_NBUFFERS ? ((task)->nbuffers) : ((task)->cl->nbuffers)))
/** i-th handle of task. */
#define STARPU_TASK_GET_HANDLE(task, i) \
	(((task)->dyn_handles) ? (task)->dyn_handles[i] : (task)->handles[i])
#define STARPU_TASK_GET_HANDLES(task) \
	(((task)->dyn_handles) ? (task)->dyn_handles : (task)->handles)
#define STARPU_TASK_SET_HANDLE(task, handle, i) do { \
	if ((task)->dyn_handles) (task)->dyn_handles[i] = handle; else (task)->handles[i] = handle; } while (0)
/** Access mode of the i-th buffer of codelet. */
#define STARPU_CODELET_GET_MODE(codelet, i) \
	(((codelet)->dyn_modes) ? (codelet)->dyn_modes[i] : (assert(i < STARPU_NMAXBUFS), (codelet)->modes[i]))
#define STARPU_CODELET_SET_MODE(codelet, mode, i) do { \
	if ((codelet)->dyn_modes) (codelet)->dyn_modes[i] = mode; else (codelet)->modes[i] = mode; } while (0)
/** Access mode of the i-th buffer of task. */
#define STARPU_TASK_GET_MODE(task, i) \
	((task)->cl->nbuffers == STARPU_VARIABLE_NBUFFERS || (task)->dyn_modes ? \
	 (((task)->dyn_modes) ? (task)->dyn_modes[i] : (task)->modes[i]) : \
	 STARPU_CODELET_GET_MODE((task)->cl, i))
#define STARPU_TASK_SET_MODE(task, mode, i) do { \
	if ((task)->cl->nbuffers == STARPU_VARIABLE_NBUFFERS || (task)->cl->nbuffers > STARPU_NMAXBUFS) { \
		if ((task)->dyn_modes) (task)->dyn_modes[i] = mode; else (task)->modes[i] = mode; \
	} else STARPU_CODELET_SET_MODE((task)->cl, mode, i); } while (0)
/** Target node (starpu_codelet::nodes, or dyn_nodes) of the i-th buffer of codelet. */
#define STARPU_CODELET_GET_NODE(codelet, i) (((codelet)->dyn_nodes) ? (codelet)->dyn_nodes[i] : (codelet)->nodes[i])
#define STARPU_CODELET_SET_NODE(codelet, __node, i) do { \
	if ((codelet)->dyn_nodes) (codelet)->dyn_nodes[i] = __node; else (codelet)->nodes[i] = __node; } while (0)

/** Initialises codelet to zero. */
void starpu_codelet_init(struct starpu_codelet *cl);
/** A codelet that runs nothing anywhere, for tasks that only carry dependencies. */
extern struct starpu_codelet starpu_codelet_nop;
/** Prints the per-worker statistics of cl. */
void starpu_codelet_display_stats(struct starpu_codelet *cl);

/** Initialises task with the defaults (detach=1, destroy=0). */
void starpu_task_init(struct starpu_task *task);
/** Releases what the runtime allocated for task, keeping the user fields: it may be submitted again. */
void starpu_task_clean(struct starpu_task *task);
/** Allocates and initialises a task that is freed after completion (destroy=1). */
struct starpu_task *starpu_task_create(void) STARPU_ATTRIBUTE_MALLOC;
/** Frees a task from starpu_task_create() (or marks a running one for destruction). */
void starpu_task_destroy(struct starpu_task *task);
/** Frees task once it is complete, as if task->destroy had been set before its submission;
 * callable after the submission (at once when it is complete already). */
void starpu_task_set_destroy(struct starpu_task *task);
/** A new task (not submitted) that runs nothing and accesses handle with mode: submitted, it
 * takes its place among the accesses to handle (sequential consistency), so that
 * dependencies (starpu_task_declare_deps(), starpu_task_end_dep_add()) on it order tasks
 * against the data's graph. NULL, said, for a bad handle or mode. */
struct starpu_task *starpu_task_create_sync(starpu_data_handle_t handle, enum starpu_data_access_mode mode);
/** Submits a task that runs nothing but callback(callback_arg) once it is scheduled. */
void starpu_create_callback_task(void (*callback)(void *), void *callback_arg);
/** The name of status ("STARPU_TASK_READY"...), "STARPU_TASK_unknown_status" for another value. */
char *starpu_task_status_get_as_string(enum starpu_task_status status);
/** Sets the maximum number of submitted tasks not complete: with a minimum set too (here or by
 * STARPU_LIMIT_MIN_SUBMITTED_TASKS), starpu_task_submit() holds the application thread at the
 * maximum until they are down to the minimum. A negative value unsets it (no throttling). */
void starpu_set_limit_max_submitted_tasks(int limit_max);
/** Sets the minimum of that throttling (see starpu_set_limit_max_submitted_tasks()). */
void starpu_set_limit_min_submitted_tasks(int limit_min);
/** Frees task right away (it must not be running). */
void starpu_task_free(struct starpu_task *task);
/** Submits task. Returns 0, -ENODEV when no worker can run it, -EINVAL for an
 * invalid task (or one naming an unregistered handle), -ESRCH when the runtime
 * is not running, -ESHUTDOWN once starpu_shutdown() has begun (tasks and
 * callbacks may still submit while it drains), -EDEADLK for a synchronous task
 * from a task, a callback, a tool callback or a counter listener. A task whose
 * submission returned 0 runs before starpu_shutdown() returns. */
int starpu_task_submit(struct starpu_task *task) STARPU_WARN_UNUSED_RESULT;
/** Submits task to the scheduling context sched_ctx_id. */
int starpu_task_submit_to_ctx(struct starpu_task *task, unsigned sched_ctx_id);
/** Submits task without data dependencies, as StarPU: its accesses are fetched for it but
 * neither wait for earlier accesses nor order later ones (the caller guarantees the data is
 * not being modified meanwhile, e.g. a fault-tolerance try-task whose meta task holds it);
 * tag and task dependencies still apply. */
int starpu_task_submit_nodeps(struct starpu_task *task);
/** Returns 1 once task completed (its callback ran), 0 while it is submitted and
 * not complete, or was never submitted. Does not wait: see starpu_task_wait(). */
int starpu_task_finished(struct starpu_task *task);
/** Waits for a non-detached task. Returns 0, or -EINVAL if task is detached. */
int starpu_task_wait(struct starpu_task *task) STARPU_WARN_UNUSED_RESULT;
/** Waits for n non-detached tasks. */
int starpu_task_wait_array(struct starpu_task **tasks, unsigned nb_tasks) STARPU_WARN_UNUSED_RESULT;
/** Waits until every submitted task has completed. Returns 0, or -EDEADLK from a
 * task, a callback, a tool callback or a counter listener (as every waiting call). */
int starpu_task_wait_for_all(void);
/** Waits until every task submitted to context sched_ctx_id has completed. */
int starpu_task_wait_for_all_in_ctx(unsigned sched_ctx_id);
/** Waits until at most n tasks are still submitted. */
int starpu_task_wait_for_n_submitted(unsigned n);
/** Waits until at most n tasks submitted to context sched_ctx_id are not complete; 0, or -EINVAL said. */
int starpu_task_wait_for_n_submitted_in_ctx(unsigned sched_ctx_id, unsigned n);
/** Waits until no task is submitted (same as wait_for_all here). */
int starpu_task_wait_for_no_ready(void);
/** Number of submitted, not yet completed tasks. */
int starpu_task_nsubmitted(void);
/** Number of ready tasks (dependencies released, not yet completed). */
int starpu_task_nready(void);
/** The task the calling worker runs, NULL outside a task. */
struct starpu_task *starpu_task_get_current(void);
/** Memory node on which buffer i of the current task is accessed, -1 outside a task. */
int starpu_task_get_current_data_node(unsigned i);
/** Name of task (its own, else its codelet's, else its model's symbol). */
const char *starpu_task_get_name(struct starpu_task *task);
/** The symbol of the performance model of task's codelet, NULL if it has none. */
const char *starpu_task_get_model_name(struct starpu_task *task);
/** Tasks submitted from now on belong to iteration it (shown in traces); two levels nest: iteration, subiteration. */
void starpu_iteration_push(unsigned long iteration);
/** Ends the iteration starpu_iteration_push() opened last. */
void starpu_iteration_pop(void);
/** Makes a copy of task with the same codelet and arguments. */
struct starpu_task *starpu_task_dup(struct starpu_task *task);
/** Sets the implementation the task will run. */
void starpu_task_set_implementation(struct starpu_task *task, unsigned impl);
/** The implementation chosen for task (valid once it is scheduled). */
unsigned starpu_task_get_implementation(struct starpu_task *task);
/** Lets the scheduler push out the tasks it holds. */
void starpu_do_schedule(void);
/** Calls the reset_scheduler method of the policy of every scheduling context that has one (for
 * instance between two iterations of a program that re-runs its graph), with the context's id. */
void starpu_reset_scheduler(void);
/** Unique id of the job behind task. */
unsigned long starpu_task_get_job_id(struct starpu_task *task);
/** Status of task. */
enum starpu_task_status starpu_task_get_status(struct starpu_task *task);
/** Prints the fields of task. */
void starpu_task_print(struct starpu_task *task);
/** Delays the end of task until starpu_task_end_dep_release() has been called nb_deps more times. */
void starpu_task_end_dep_add(struct starpu_task *t, int nb_deps);
/** Releases one end dependency added by starpu_task_end_dep_add(). */
void starpu_task_end_dep_release(struct starpu_task *t);
/** Calls hook(hook_arg) instead of printing when the watchdog (STARPU_WATCHDOG_TIMEOUT) finds no task ending. */
void starpu_task_watchdog_set_hook(void (*hook)(void *), void *hook_arg);

/** Submits a task that runs nothing, of tag sync_tag, done (callback run) once the ndeps tags of
 * deps are: void as in StarPU 1.4, what fails is said (bad deps, runtime not running, refused task). */
void starpu_create_sync_task(starpu_tag_t sync_tag, unsigned ndeps, starpu_tag_t *deps, void (*callback)(void *), void *callback_arg);

/* ------------------------------------------------------------ dependencies */

/** Tag id depends on the ndeps following tags. */
void starpu_tag_declare_deps(starpu_tag_t id, unsigned ndeps, ...);
/** Tag id depends on the ndeps tags of array. */
void starpu_tag_declare_deps_array(starpu_tag_t id, unsigned ndeps, starpu_tag_t *array);
/** Waits for tag id to complete. Returns 0, -EINVAL for an unknown tag. */
int starpu_tag_wait(starpu_tag_t id);
/** Waits for the ntags tags of id. */
int starpu_tag_wait_array(unsigned ntags, starpu_tag_t *id);
/** Marks tag id complete, releasing what depends on it. */
void starpu_tag_notify_from_apps(starpu_tag_t id);
/** As starpu_tag_notify_from_apps(), then starpu_tag_restart() so the tag can be reused. */
void starpu_tag_notify_restart_from_apps(starpu_tag_t id);
/** Makes tag id reusable after it completed. */
void starpu_tag_restart(starpu_tag_t id);
/** Frees tag id. */
void starpu_tag_remove(starpu_tag_t id);
/** Task associated with tag id, NULL if none. */
struct starpu_task *starpu_tag_get_task(starpu_tag_t id);

/** task depends on the ndeps tasks of task_array (they may be submitted before or after, not completed-and-freed). */
void starpu_task_declare_deps_array(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[]);
/** As starpu_task_declare_deps_array(), with the tasks as arguments. */
void starpu_task_declare_deps(struct starpu_task *task, unsigned ndeps, ...);
/** task's termination waits for the given tasks to complete. */
void starpu_task_declare_end_deps_array(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[]);
/** Makes task end only after the ndeps tasks given as arguments have ended. */
void starpu_task_declare_end_deps(struct starpu_task *task, unsigned ndeps, ...);
/** Fills task_array with up to ndeps tasks that depend on task; returns their count. */
int starpu_task_get_task_succs(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[]);
/** As starpu_task_get_task_succs(). */
int starpu_task_get_task_scheduled_succs(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[]);


/**
 * @name Fault tolerance
 * A task whose prologue callback is starpu_task_ft_prologue() becomes a meta
 * task: it runs nothing itself, and try-tasks (copies of it, submitted
 * without dependencies) compute until one succeeds; its successors wait for
 * that success. Only tasks whose accesses are STARPU_R or STARPU_W can be
 * retried (a failed try must leave its input intact).
 * @{
 */
/** Prologue callback making the task a meta task; check_ft, when not NULL, is the
 * `void (*)(void *)` called at the end of each try-task with the meta task as argument
 * (NULL: retry until a try does not fail). */
void starpu_task_ft_prologue(void *check_ft);
/** A new try-task for meta_task, copied from template_task (the meta task for the first,
 * the previous try-task after), whose callback is check_ft with the meta task as argument;
 * the caller may change it, then submits it with starpu_task_submit_nodeps(). NULL (with a
 * message) on bad input. */
struct starpu_task *starpu_task_ft_create_retry(const struct starpu_task *meta_task, const struct starpu_task *template_task, void (*check_ft)(void *));
/** Records that this execution of task failed (usually called by its implementation):
 * task->failed is set and the duration is not recorded in performance models. */
void starpu_task_ft_failed(struct starpu_task *task);
/** A try-task succeeded: meta_task may end and release its successors. */
void starpu_task_ft_success(struct starpu_task *meta_task);
/** @} */

/**
 * @name Transactions
 * Tasks submitted in a transaction (starpu_task::transaction, STARPU_TRANSACTION)
 * belong to its current epoch; when an epoch starts, the transaction's start
 * function decides whether it proceeds: the implementations of the tasks of a
 * cancelled epoch are not run, their dependencies are still honoured. Their
 * codelets set nbuffers to STARPU_VARIABLE_NBUFFERS (the transaction adds one
 * access of its own).
 * @{
 */
/** Opens a transaction and starts its first epoch; do_start_func (NULL: always
 * proceed) is called with NULL and do_start_arg when the epoch starts, and returns
 * nonzero for the epoch to proceed, 0 to cancel it. NULL if no worker can run the
 * transaction's own tasks (they need a CPU worker). */
struct starpu_transaction *starpu_transaction_open(int (*do_start_func)(void *buffer, void *arg), void *do_start_arg);
/** Ends the current epoch and starts the next one, do_start_func being called with do_start_arg. */
void starpu_transaction_next_epoch(struct starpu_transaction *p_trs, void *do_start_arg);
/** Ends the last epoch; the transaction is freed once the tasks submitted in it have ended. */
void starpu_transaction_close(struct starpu_transaction *p_trs);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_TASK_H__ */
