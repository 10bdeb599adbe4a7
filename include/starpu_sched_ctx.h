/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Scheduling contexts of the StarPU API: sets of workers, each running its own instance of a policy. */
#ifndef __STARPU_SCHED_CTX_H__
#define __STARPU_SCHED_CTX_H__

#include <starpu_config.h>
#include <starpu_worker.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Options of starpu_sched_ctx_create(), each followed by its value; the list ends with 0. */
/**
 * A policy name (const char *); "" or NULL: the global context's policy.
 * Without this option nor STARPU_SCHED_CTX_POLICY_STRUCT, the context has no
 * scheduler (as in StarPU 1.4): its master, its lowest worker, runs its tasks.
 */
#define STARPU_SCHED_CTX_POLICY_NAME (1 << 16)
/** A policy (struct starpu_sched_policy *). */
#define STARPU_SCHED_CTX_POLICY_STRUCT (2 << 16)
/** The context's priority range (int each). */
#define STARPU_SCHED_CTX_POLICY_MIN_PRIO (3 << 16)
#define STARPU_SCHED_CTX_POLICY_MAX_PRIO (4 << 16)
/** A level (unsigned), returned by starpu_sched_ctx_get_hierarchy_level(); a nested context's defaults to its parent's plus 1. */
#define STARPU_SCHED_CTX_HIERARCHY_LEVEL (5 << 16)
/**
 * The context to nest in (unsigned), whose workers the new one takes some of.
 * The new context's master (its lowest worker) hands the tasks it takes from
 * the parent down to it. Without a policy option, the nested context has no
 * scheduler: its master runs its tasks, and its other workers are kept for
 * the master (what the parent's policy gives them goes to the master) unless
 * STARPU_SCHED_CTX_AWAKE_WORKERS.
 */
#define STARPU_SCHED_CTX_NESTED (6 << 16)
/** No value: the workers of a nested context without a policy keep taking the parent's tasks. */
#define STARPU_SCHED_CTX_AWAKE_WORKERS (7 << 16)
/** A function void (*)(unsigned sched_ctx_id), called once the policy is set up, before the workers join. */
#define STARPU_SCHED_CTX_POLICY_INIT (8 << 16)
/** A pointer returned by starpu_sched_ctx_get_user_data(). */
#define STARPU_SCHED_CTX_USER_DATA (9 << 16)
/** GPU multiprocessor partitions (int): refused here with an error (no GPU is partitioned). */
#define STARPU_SCHED_CTX_CUDA_NSMS (10 << 16)
/**
 * Sub-contexts: an int * array of existing context ids, then their number
 * (int). They are recorded for starpu_sched_ctx_get_sub_ctxs(), as StarPU
 * does; no scheduling follows from them (StarPU pairs them with GPU
 * multiprocessor partitions, which are not supported here).
 */
#define STARPU_SCHED_CTX_SUB_CTXS (11 << 16)

/**
 * Creates a context of the nworkers_ctx workers in workerids_ctx (NULL or -1:
 * every worker), named sched_ctx_name, with the options that follow (ended by
 * 0). Returns its id, or STARPU_NMAX_SCHED_CTXS with a message on bad input.
 * The workers stay in the global context too.
 */
unsigned starpu_sched_ctx_create(int *workerids_ctx, int nworkers_ctx, const char *sched_ctx_name, ...);
/** Creates a context of at most max_ncpus CPU and max_ngpus other workers (at least the minimums); without allow_overlap, of workers in no other context but the global one. */
unsigned starpu_sched_ctx_create_inside_interval(const char *policy_name, const char *sched_ctx_name, int min_ncpus, int max_ncpus,
						 int min_ngpus, int max_ngpus, unsigned allow_overlap);
/** Adds workers to a context (not the global one, which has them all). */
void starpu_sched_ctx_add_workers(int *workerids_ctx, unsigned nworkers_ctx, unsigned sched_ctx_id);
/** Removes workers from a context; the tasks queued for them go to the workers that stay. */
void starpu_sched_ctx_remove_workers(int *workerids_ctx, unsigned nworkers_ctx, unsigned sched_ctx_id);
/** Waits for the context's tasks, deletes it, and gives its workers to its inheritor if any. */
void starpu_sched_ctx_delete(unsigned sched_ctx_id);
/** The context that gets sched_ctx_id's workers when it is deleted. */
void starpu_sched_ctx_set_inheritor(unsigned sched_ctx_id, unsigned inheritor);
/** The context that gets the workers of sched_ctx_id when it is deleted (STARPU_NMAX_SCHED_CTXS if none). */
unsigned starpu_sched_ctx_get_inheritor(unsigned sched_ctx_id);
/** The hierarchy level recorded for sched_ctx_id (0 unless set at creation). */
unsigned starpu_sched_ctx_get_hierarchy_level(unsigned sched_ctx_id);
/** The application submits no more tasks to the context. */
void starpu_sched_ctx_finished_submit(unsigned sched_ctx_id);
/** Name given at creation ("global" for context 0). */
const char *starpu_sched_ctx_get_name(unsigned sched_ctx_id);
/** Workers both contexts have. */
unsigned starpu_sched_ctx_get_nshared_workers(unsigned sched_ctx_id, unsigned sched_ctx_id2);
/** 1 when the context has a worker of kind arch. */
unsigned starpu_sched_ctx_contains_type_of_worker(enum starpu_worker_archtype arch, unsigned sched_ctx_id);
/** The calling worker's id when it belongs to the context, (unsigned)-1 otherwise. */
unsigned starpu_sched_ctx_worker_get_id(unsigned sched_ctx_id);
/** 1 when the worker belongs to a context besides the global one. */
unsigned starpu_sched_ctx_overlapping_ctxs_on_worker(int workerid);
/** The context task goes to. */
unsigned starpu_sched_ctx_get_ctx_for_task(struct starpu_task *task);
/** Prints the context's workers on f. */
void starpu_sched_ctx_display_workers(unsigned sched_ctx_id, FILE *f);
/** The pointer given with STARPU_SCHED_CTX_USER_DATA. */
void *starpu_sched_ctx_get_user_data(unsigned sched_ctx_id);
/** Attaches an application pointer to context sched_ctx_id. */
void starpu_sched_ctx_set_user_data(unsigned sched_ctx_id, void *user_data);
/** The function given with STARPU_SCHED_CTX_POLICY_INIT. */
void (*starpu_sched_ctx_get_sched_policy_init(unsigned sched_ctx_id))(unsigned);
/** StarPU 1.4's name of starpu_sched_ctx_get_sched_policy_init(): the policy's callback (starpu_conf::sched_policy_callback for the global context). */
void (*starpu_sched_ctx_get_sched_policy_callback(unsigned sched_ctx_id))(unsigned);
/** The context's worker collection (the kernel keeps one list per context, whatever the type). */
struct starpu_worker_collection *starpu_sched_ctx_create_worker_collection(unsigned sched_ctx_id, enum starpu_worker_collection_type type);
/** Accepted for StarPU compatibility: the kernel's worker collection is freed with the context. */
void starpu_sched_ctx_delete_worker_collection(unsigned sched_ctx_id);

/** Policy-private data of context sched_ctx_id (STARPU_NMAX_SCHED_CTXS, no context, has a slot of its own). */
void *starpu_sched_ctx_get_policy_data(unsigned sched_ctx_id);
/** Stores the policy's private data in context sched_ctx_id. */
void starpu_sched_ctx_set_policy_data(unsigned sched_ctx_id, void *policy_data);
/** Workers of context sched_ctx_id. */
struct starpu_worker_collection *starpu_sched_ctx_get_worker_collection(unsigned sched_ctx_id);
/** Policy of context sched_ctx_id. */
struct starpu_sched_policy *starpu_sched_ctx_get_sched_policy(unsigned sched_ctx_id);
/** Number of workers in context sched_ctx_id. */
unsigned starpu_sched_ctx_get_nworkers(unsigned sched_ctx_id);
/** Fills *workerids (allocated) with the workers of the context; returns their count. */
unsigned starpu_sched_ctx_get_workers_list(unsigned sched_ctx_id, int **workerids);
/** Points *workerids at the context's own array of worker ids (not a copy) and returns its length. */
unsigned starpu_sched_ctx_get_workers_list_raw(unsigned sched_ctx_id, int **workerids);
/** 1 when workerid belongs to context sched_ctx_id. */
unsigned starpu_sched_ctx_contains_worker(int workerid, unsigned sched_ctx_id);
/** The context the calling thread chose with starpu_sched_ctx_set_context(), STARPU_NMAX_SCHED_CTXS if none (its tasks then go to the global context). */
unsigned starpu_sched_ctx_get_context(void);
/** Makes *sched_ctx_id the calling thread's context for the tasks it submits (STARPU_NMAX_SCHED_CTXS: back to the global context). */
void starpu_sched_ctx_set_context(unsigned *sched_ctx_id);
/** Priority range of a context. */
int starpu_sched_ctx_get_min_priority(unsigned sched_ctx_id);
/** Highest task priority of context sched_ctx_id. */
int starpu_sched_ctx_get_max_priority(unsigned sched_ctx_id);
/** Sets the lowest task priority of context sched_ctx_id. */
int starpu_sched_ctx_set_min_priority(unsigned sched_ctx_id, int min_prio);
/** Sets the highest task priority of context sched_ctx_id. */
int starpu_sched_ctx_set_max_priority(unsigned sched_ctx_id, int max_prio);
/** Returns 1 if the lowest priority of sched_ctx_id was set explicitly. */
int starpu_sched_ctx_min_priority_is_set(unsigned sched_ctx_id);
/** Returns 1 if the highest priority of sched_ctx_id was set explicitly. */
int starpu_sched_ctx_max_priority_is_set(unsigned sched_ctx_id);
/** Name of the policy of context sched_ctx_id. */
const char *starpu_sched_ctx_get_sched_policy_name(unsigned sched_ctx_id);
/**
 * Copies into ctxs (room for STARPU_NMAX_SCHED_CTXS ints) the sub-contexts
 * given to sched_ctx with STARPU_SCHED_CTX_SUB_CTXS, in their order; returns
 * their number, or -EINVAL said for an unknown context. (StarPU exports it
 * without declaring it.)
 */
int starpu_sched_ctx_get_sub_ctxs(unsigned sched_ctx, int *ctxs);
/** Multiprocessors of a GPU given to sched_ctx: always 0 here (no GPU is partitioned); -EINVAL said for an unknown context. */
int starpu_sched_ctx_get_nsms(unsigned sched_ctx);
/** The first worker of context sub_ctx (its stream worker in StarPU's GPU partitions); -1 when it has none or does not exist. */
int starpu_sched_ctx_get_stream_worker(unsigned sub_ctx);
/** The multiprocessor interval of a GPU stream worker: no worker has one here, so an error is said and both are set to 0. */
void starpu_sched_ctx_get_sms_interval(int stream_workerid, int *start, int *end);
/* Nested contexts (STARPU_SCHED_CTX_NESTED). */
/** The first context nested in sched_ctx_id whose master is workerid, STARPU_NMAX_SCHED_CTXS if none. */
unsigned starpu_sched_ctx_worker_is_master_for_child_ctx(int workerid, unsigned sched_ctx_id);
/** The nested context whose master is masterid, STARPU_NMAX_SCHED_CTXS if none. */
unsigned starpu_sched_ctx_master_get_context(int masterid);
/** The calling worker's rank in the context's workers, -1 when it is not one of them. */
int starpu_sched_ctx_get_worker_rank(unsigned sched_ctx_id);
/** 1 when the context has a policy (0: nested without one); *awake_workers (if not NULL) tells STARPU_SCHED_CTX_AWAKE_WORKERS. */
unsigned starpu_sched_ctx_has_starpu_scheduler(unsigned sched_ctx_id, unsigned *awake_workers);
/**
 * Fills *cpuids (allocated, to free) with the processing units (hwloc logical
 * indexes) the caller may use in the context: all of its workers' for its
 * master or a thread that is no worker, the calling worker's own otherwise.
 */
void starpu_sched_ctx_get_available_cpuids(unsigned sched_ctx_id, int **cpuids, int *ncpuids);
/** Binds the calling thread to processing unit cpuid (hwloc logical index). */
void starpu_sched_ctx_bind_current_thread_to_cpuid(unsigned cpuid);
/**
 * Runs func(param) in the calling (application) thread while every CPU worker
 * of the context holds its core, once it ended the task it runs; returns
 * what func returned (NULL with a message on bad input).
 */
void *starpu_sched_ctx_exec_parallel_code(void *(*func)(void *), void *param, unsigned sched_ctx_id);

/* Tasks of a context. */
/**
 * Calls close_callback(sched_ctx_id, args) once the application said it submits
 * no more to the context (starpu_sched_ctx_finished_submit()) and its last task
 * ended, in the thread that ended it (as a task callback: no blocking call);
 * the context's workers then join its inheritor, if it has one.
 */
void starpu_sched_ctx_register_close_callback(unsigned sched_ctx_id, void (*close_callback)(unsigned sched_ctx_id, void *args), void *args);
/**
 * Tasks pushed to a context without workers wait in it until workers are added
 * (starpu_sched_ctx_add_workers); after this call, the next addition to each
 * context pushes only the tasks that waited before it, the others wait for
 * the following one.
 */
void starpu_sched_ctx_stop_task_submission(void);
/** Tasks of the context ready (dependencies met) and not completed yet. */
int starpu_sched_ctx_get_nready_tasks(unsigned sched_ctx_id);
/** The flops (starpu_task::flops) of those tasks; the global context does not count them (0 with a message). */
double starpu_sched_ctx_get_nready_flops(unsigned sched_ctx_id);
/**
 * Counts the ready task in context sched_ctx and makes it its context; with
 * with_repush, pushes it to that context's policy (which must not be the one
 * it is in). The former context still counts it: see starpu_sched_ctx_revert_task_counters_ctx_locked().
 */
void starpu_sched_ctx_move_task_to_ctx_locked(struct starpu_task *task, unsigned sched_ctx, unsigned with_repush);
/** Removes a ready task of flops from the counts of sched_ctx_id (its tasks and ready tasks). */
void starpu_sched_ctx_revert_task_counters_ctx_locked(unsigned sched_ctx_id, double flops);

/* The order a worker in several contexts serves them in. */
/**
 * Sets the priority of context sched_ctx_id for the nworkers workers (-1: none):
 * a worker serves first, among its contexts whose policy counted tasks for it
 * (starpu_sched_ctx_list_task_counters_*), the one of highest priority; then
 * all of them in turn.
 */
void starpu_sched_ctx_set_priority(int *workers, int nworkers, unsigned sched_ctx_id, unsigned priority);
/** The priority of the context for the worker (0 unless set). */
unsigned starpu_sched_ctx_get_priority(int worker, unsigned sched_ctx_id);
/** One more task of the context waits for workerid (a policy counts what it queues). */
void starpu_sched_ctx_list_task_counters_increment(unsigned sched_ctx_id, int workerid);
/** One task fewer of the context waits for workerid (never below 0). */
void starpu_sched_ctx_list_task_counters_decrement(unsigned sched_ctx_id, int workerid);
/** No task of the context waits for workerid. */
void starpu_sched_ctx_list_task_counters_reset(unsigned sched_ctx_id, int workerid);
/** Counts task for every worker of the context that can run it (called from its policy's hooks). */
void starpu_sched_ctx_list_task_counters_increment_all_ctx_locked(struct starpu_task *task, unsigned sched_ctx_id);
/** Uncounts task for every worker of the context that can run it. */
void starpu_sched_ctx_list_task_counters_decrement_all_ctx_locked(struct starpu_task *task, unsigned sched_ctx_id);
/** Resets the counts of every worker of the context that can run task. */
void starpu_sched_ctx_list_task_counters_reset_all(struct starpu_task *task, unsigned sched_ctx_id);

/* Booking workers. */
/**
 * Books the nworkers CPU workers for a task: each but the master ends the task
 * it runs, then holds its core until starpu_sched_ctx_unbook_workers_for_task();
 * returns once they all do. The master is the calling worker when it is one of
 * them, else the lowest of them; returns its id, or a negative error code said.
 */
int starpu_sched_ctx_book_workers_for_task(unsigned sched_ctx_id, int *workerids, int nworkers);
/** Lets the workers booked for master go back to their tasks. */
void starpu_sched_ctx_unbook_workers_for_task(unsigned sched_ctx_id, int master);

/** Id of the global context. */
#define STARPU_GLOBAL_SCHED_CTX 0

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_SCHED_CTX_H__ */
