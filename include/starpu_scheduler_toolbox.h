/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The scheduler toolbox of StarPU 1.4 (its schedulers/starpu_scheduler_toolbox.h):
 * two task queues a scheduling policy may keep its tasks in, and a few
 * helpers about priorities and data readiness. Programs include it as
 * `starpu_scheduler_toolbox.h` or `schedulers/starpu_scheduler_toolbox.h`;
 * starpu.h does not include it (StarPU's does not either).
 *
 * - The FIFO task queue (starpu_st_fifo_taskq_t): a list of tasks, oldest
 *   first, where a task of priority above 0 is inserted behind the tasks of
 *   the same or higher priority; it carries the counters and expected dates
 *   a policy of the dm family keeps per worker (ntasks, nprocessed,
 *   exp_start, exp_end, exp_len, pipeline_len).
 * - The priority deque (struct starpu_st_prio_deque): tasks ordered by
 *   priority, highest first, and by age among equal priorities; tasks can be
 *   added and taken at both ends. It is Astrolabe's policy-toolkit queue
 *   (astro_sched_queue, astrolabe/sched.h), which widens its range of
 *   priorities when a task falls outside it, so every int priority keeps its
 *   exact place.
 *
 * StarPU keeps both structures private; Astrolabe defines them here so that a
 * policy may embed them in its own data (then it calls the _init function
 * on them), but a policy written for StarPU only needs the functions.
 * Neither queue locks anything: the policy holds its own lock (or the
 * worker's, starpu_worker_lock()) around every call.
 *
 * A NULL queue or task is refused with one message on stderr naming the
 * function: functions returning int give -EINVAL, those returning a task give
 * NULL, the getters give 0 (NAN for dates and lengths).
 */
#ifndef __STARPU_SCHEDULER_TOOLBOX_H__
#define __STARPU_SCHEDULER_TOOLBOX_H__

#include <stddef.h>
#include <starpu.h>
#include <starpu_scheduler.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------- FIFO task queue */

/** A FIFO task queue and the figures a policy keeps with it. */
struct starpu_st_fifo_taskq
{
	/** The queued tasks, the next to pop first. */
	struct starpu_task_list taskq;
	/** How many tasks the queue holds. */
	unsigned ntasks;
	/** How many tasks were already handed to the worker (the policy counts them). */
	unsigned pipeline_ntasks;
	/** Per priority level, the policy's count of queued tasks: an array the policy allocates and frees, NULL when unused. */
	unsigned *ntasks_per_priority;
	/** How many tasks were pushed (starpu_st_fifo_taskq_push_task() counts them). */
	unsigned nprocessed;
	/** When the next queued task is expected to start (µs, starpu_timing_now()'s clock). */
	double exp_start;
	/** When the last queued task is expected to end (µs). */
	double exp_end;
	/** The expected duration of the queued tasks (µs). */
	double exp_len;
	/** Per priority level, the expected duration of the queued tasks: an array the policy allocates and frees, NULL when unused. */
	double *exp_len_per_priority;
	/** The expected duration of what was already handed to the worker (µs). */
	double pipeline_len;
};

/** A FIFO task queue, as StarPU's functions take it. */
typedef struct starpu_st_fifo_taskq *starpu_st_fifo_taskq_t;

/** A new empty queue (starpu_st_fifo_taskq_init()), to free with starpu_st_fifo_taskq_destroy(); NULL when out of memory. */
starpu_st_fifo_taskq_t starpu_st_fifo_taskq_create(void) STARPU_ATTRIBUTE_MALLOC;
/** Makes fifo an empty queue: no task, counters at 0, exp_start and exp_end now, the lengths 0, the per-priority arrays NULL. */
void starpu_st_fifo_taskq_init(starpu_st_fifo_taskq_t fifo);
/** Frees a queue from starpu_st_fifo_taskq_create() (not the tasks still in it, nor the per-priority arrays). */
void starpu_st_fifo_taskq_destroy(starpu_st_fifo_taskq_t fifo);
/** 1 when fifo holds no task, 0 otherwise. */
int starpu_st_fifo_taskq_empty(starpu_st_fifo_taskq_t fifo);
/**
 * What would be ahead of task were it pushed with
 * starpu_st_fifo_taskq_push_sorted_task(): returns the expected duration of
 * that work (µs) on workerid's architecture with implementation nimpl, and
 * puts in *fifo_ntasks (may be NULL) how many tasks that is. Behind every
 * queued task, it is exp_len and ntasks + pipeline_ntasks; ahead of some, the
 * pipeline's length plus the expected lengths of the tasks ahead (NAN when
 * one has no estimate), and pipeline_ntasks plus their number; ahead of all,
 * pipeline_len and pipeline_ntasks.
 */
double starpu_st_fifo_taskq_get_exp_len_prev_task_list(starpu_st_fifo_taskq_t fifo_queue, struct starpu_task *task, int workerid, int nimpl, int *fifo_ntasks);

/** The number of tasks in the queue. */
unsigned starpu_st_fifo_ntasks_get(starpu_st_fifo_taskq_t fifo);
/** Adds n (may be negative) to the number of tasks in the queue. */
void starpu_st_fifo_ntasks_inc(starpu_st_fifo_taskq_t fifo, int n);
/** The per-priority task counts (ntasks_per_priority), NULL unless the policy set them. */
unsigned *starpu_st_fifo_ntasks_per_priority_get(starpu_st_fifo_taskq_t fifo);
/** The number of tasks pushed so far. */
unsigned starpu_st_fifo_nprocessed_get(starpu_st_fifo_taskq_t fifo);
/** Adds n (may be negative) to the number of tasks pushed. */
void starpu_st_fifo_nprocessed_inc(starpu_st_fifo_taskq_t fifo, int n);
/** When the next queued task is expected to start (meaningful when one worker uses the queue; the policy updates it as tasks start). */
double starpu_st_fifo_exp_start_get(starpu_st_fifo_taskq_t fifo);
/** Sets when the next queued task is expected to start. */
void starpu_st_fifo_exp_start_set(starpu_st_fifo_taskq_t fifo, double exp_start);
/** When the last queued task is expected to end. */
double starpu_st_fifo_exp_end_get(starpu_st_fifo_taskq_t fifo);
/** Sets when the last queued task is expected to end. */
void starpu_st_fifo_exp_end_set(starpu_st_fifo_taskq_t fifo, double exp_end);
/** The expected duration of the queued tasks. */
double starpu_st_fifo_exp_len_get(starpu_st_fifo_taskq_t fifo);
/** Sets the expected duration of the queued tasks. */
void starpu_st_fifo_exp_len_set(starpu_st_fifo_taskq_t fifo, double exp_len);
/** Adds exp_len (may be negative) to the expected duration of the queued tasks. */
void starpu_st_fifo_exp_len_inc(starpu_st_fifo_taskq_t fifo, double exp_len);
/** The per-priority expected durations (exp_len_per_priority), NULL unless the policy set them. */
double *starpu_st_fifo_exp_len_per_priority_get(starpu_st_fifo_taskq_t fifo);
/** The expected duration of what was already handed to the worker. */
double starpu_st_fifo_pipeline_len_get(starpu_st_fifo_taskq_t fifo);
/** Sets the expected duration of what was already handed to the worker. */
void starpu_st_fifo_pipeline_len_set(starpu_st_fifo_taskq_t fifo, double pipeline_len);
/** Adds pipeline_len (may be negative) to the expected duration of what was handed to the worker. */
void starpu_st_fifo_pipeline_len_inc(starpu_st_fifo_taskq_t fifo, double pipeline_len);

/**
 * Inserts task behind the queued tasks of the same or higher priority and
 * ahead of the first of lower priority; counts it in ntasks and nprocessed.
 * Returns 0.
 */
int starpu_st_fifo_taskq_push_sorted_task(starpu_st_fifo_taskq_t fifo_queue, struct starpu_task *task);
/**
 * Queues a new task: a task of priority above 0 goes to its place by
 * priority (starpu_st_fifo_taskq_push_sorted_task()), any other at the back.
 * Counts it in ntasks and nprocessed. Returns 0.
 */
int starpu_st_fifo_taskq_push_task(starpu_st_fifo_taskq_t fifo, struct starpu_task *task);
/**
 * Gives back a task taken from the queue: a task of priority above 0 goes to
 * its place by priority, any other to the front, to be popped next. Counts
 * it in ntasks only (a task of priority above 0 in nprocessed too, as
 * StarPU does). Returns 0.
 */
int starpu_st_fifo_taskq_push_back_task(starpu_st_fifo_taskq_t fifo_queue, struct starpu_task *task);

/**
 * Removes task, which must be in the queue, when workerid may run it (or
 * when workerid is negative), after setting the implementation it will run
 * (the first workerid can; 0 for a negative workerid). Returns 1 when it was
 * removed, 0 when workerid cannot run it.
 */
int starpu_st_fifo_taskq_pop_this_task(starpu_st_fifo_taskq_t fifo_queue, int workerid, struct starpu_task *task);
/** Removes and returns the first task, from the front, that workerid may run (any when workerid is negative), its implementation set; NULL if none. */
struct starpu_task *starpu_st_fifo_taskq_pop_task(starpu_st_fifo_taskq_t fifo, int workerid);
/** Removes and returns the task at the front, without asking whether a worker can run it (the policy knows); NULL when empty. */
struct starpu_task *starpu_st_fifo_taskq_pop_local_task(starpu_st_fifo_taskq_t fifo);
/**
 * Removes and returns, among the tasks workerid may run whose priority is at
 * least that of the first of them (from the front), the one whose data is the
 * most ready on workerid's memory node: the fewest bytes to read that are not
 * there (starpu_st_non_ready_buffers_size()), then the fewest of those not
 * already on their way, then the fewest bytes not allocated there; the first
 * such task on a tie. Its implementation is set. When num_priorities is not
 * -1 and ntasks_per_priority is set, the entries 0 to the task's level
 * (starpu_st_normalize_prio()) are decremented. NULL when workerid may run
 * no queued task.
 */
struct starpu_task *starpu_st_fifo_taskq_pop_first_ready_task(starpu_st_fifo_taskq_t fifo_queue, unsigned workerid, int num_priorities);
/**
 * As starpu_st_fifo_taskq_pop_first_ready_task(), but readiness first: among
 * all the tasks workerid may run, whatever their priority, the most ready
 * one, the higher priority on a tie.
 */
struct starpu_task *starpu_st_fifo_taskq_pop_first_ready_task_ready_first(struct starpu_st_fifo_taskq *fifo_queue, unsigned workerid, int num_priorities);

/* ---------------------------------------------------------- priority deque */

struct astro_sched_queue;

/** A deque of tasks ordered by priority. All zero bytes is an empty deque (so is one starpu_st_prio_deque_init() made). */
struct starpu_st_prio_deque
{
	/** The tasks, in the policy toolkit's priority queue (allocated at the first push, freed by starpu_st_prio_deque_destroy()). */
	struct astro_sched_queue *queue;
	/** How many tasks the deque holds. */
	unsigned ntasks;
	/** The policy's count of processed tasks (the functions leave it alone). */
	unsigned nprocessed;
	/** The policy's expected start of the first task (the functions leave it alone). */
	double exp_start;
	/** The policy's expected end of the last task (the functions leave it alone). */
	double exp_end;
	/** The policy's expected duration of the tasks (the functions leave it alone). */
	double exp_len;
};

/** A priority deque, as StarPU's functions take it. */
typedef struct starpu_st_prio_deque *starpu_st_prio_deque_t;

/** Makes pdeque an empty deque, every field 0. */
void starpu_st_prio_deque_init(starpu_st_prio_deque_t pdeque);
/** Frees what the deque allocated (not the tasks still in it, which it forgets); pdeque is then an empty deque again. */
void starpu_st_prio_deque_destroy(starpu_st_prio_deque_t pdeque);
/** 1 when pdeque holds no task, 0 otherwise. */
int starpu_st_prio_deque_is_empty(starpu_st_prio_deque_t pdeque);

/** Queues task behind the tasks of the same or higher priority. Returns 0, or -ENOMEM when the deque cannot grow. */
int starpu_st_prio_deque_push_back_task(starpu_st_prio_deque_t pdeque, struct starpu_task *task);
/** Queues task ahead of the tasks of the same or lower priority. Returns 0, or -ENOMEM when the deque cannot grow. */
int starpu_st_prio_deque_push_front_task(starpu_st_prio_deque_t pdeque, struct starpu_task *task);

/**
 * Removes and returns the first task workerid may run, from the front:
 * highest priority first, oldest first among equal priorities; its
 * implementation is set (the first workerid can run). *skipped (when
 * skipped is not NULL) gets the last task passed over because workerid
 * cannot run it, NULL when none was. NULL when workerid may run no task, or
 * is not a worker (with a message).
 */
struct starpu_task *starpu_st_prio_deque_pop_task_for_worker(starpu_st_prio_deque_t pdeque, int workerid, struct starpu_task **skipped);
/** As starpu_st_prio_deque_pop_task_for_worker(), from the back of each priority: highest priority first, newest first among equal priorities (what a thief takes). */
struct starpu_task *starpu_st_prio_deque_deque_task_for_worker(starpu_st_prio_deque_t pdeque, int workerid, struct starpu_task **skipped);
/**
 * Removes and returns, among the tasks workerid may run of the highest
 * priority it may run, the one whose data is the most ready on its memory
 * node (the rules of starpu_st_fifo_taskq_pop_first_ready_task()), its
 * implementation set; NULL if none.
 */
struct starpu_task *starpu_st_prio_deque_deque_first_ready_task(starpu_st_prio_deque_t pdeque, unsigned workerid);

/** Removes and returns the task of highest priority, the oldest among equals, whoever may run it; NULL when empty. */
struct starpu_task *starpu_st_prio_deque_pop_task(starpu_st_prio_deque_t pdeque);
/** The task starpu_st_prio_deque_pop_task() would return, left in the deque; NULL when empty. */
struct starpu_task *starpu_st_prio_deque_highest_task(starpu_st_prio_deque_t pdeque);
/** Removes and returns the task of lowest priority, the newest among equals, whoever may run it; NULL when empty. */
struct starpu_task *starpu_st_prio_deque_pop_back_task(starpu_st_prio_deque_t pdeque);
/** As starpu_st_fifo_taskq_pop_this_task(), for a task in the deque. */
int starpu_st_prio_deque_pop_this_task(starpu_st_prio_deque_t pdeque, int workerid, struct starpu_task *task);

/** Removes task, which must be in the deque, whoever may run it (ntasks counts it out). */
void starpu_st_prio_deque_erase(starpu_st_prio_deque_t pdeque, struct starpu_task *task);

/* --------------------------------------------------------------- helpers */

/**
 * The level, 0 to num_priorities-1, of priority among num_priorities levels
 * spread evenly over the priorities of the context sched_ctx_id
 * (starpu_sched_ctx_get_min_priority() to
 * starpu_sched_ctx_get_max_priority()); a priority outside them gets the
 * nearest level, and a context of a single priority puts everything at 0.
 */
int starpu_st_normalize_prio(int priority, int num_priorities, unsigned sched_ctx_id);
/** How many of task's buffers have no valid copy on worker's memory node (scratch and reduction buffers aside). */
int starpu_st_non_ready_buffers_count(struct starpu_task *task, unsigned worker);
/**
 * The bytes of task's buffers that are missing on worker's memory node
 * (scratch and reduction buffers aside): *non_readyp those it reads that have
 * no valid copy there, *non_loadingp those of them with no copy on the way,
 * *non_allocatedp those with no room allocated there.
 */
void starpu_st_non_ready_buffers_size(struct starpu_task *task, unsigned worker, size_t *non_readyp, size_t *non_loadingp, size_t *non_allocatedp);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_SCHEDULER_TOOLBOX_H__ */
