/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Scheduling policies of the StarPU API. */
#ifndef __STARPU_SCHEDULER_H__
#define __STARPU_SCHEDULER_H__

#include <starpu_config.h>
#include <starpu_worker.h>
#include <starpu_task.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A scheduling policy. The runtime calls push_task when a task becomes ready
 * and pop_task from each worker looking for work; a policy that queues a task
 * for a sleeping worker wakes it (starpu_wake_worker_relax_light()).
 */
struct starpu_sched_policy
{
	/** Sets up the policy for context sched_ctx_id. */
	void (*init_sched)(unsigned sched_ctx_id);
	/** Tears it down. */
	void (*deinit_sched)(unsigned sched_ctx_id);
	/** Takes a ready task. Returns 0; an error (-ENODEV...) means it was not queued, and the runtime gives it to a worker that can run it. */
	int (*push_task)(struct starpu_task *);
	double (*simulate_push_task)(struct starpu_task *);
	/** Told when a task was pushed directly to a worker. */
	void (*push_task_notify)(struct starpu_task *, int workerid, int perf_workerid, unsigned sched_ctx_id);
	/** Gives the calling worker a task, or NULL. */
	struct starpu_task *(*pop_task)(unsigned sched_ctx_id);
	/** Called at submission, before dependencies are resolved. */
	void (*submit_hook)(struct starpu_task *task);
	/** Called by the worker before running a task. */
	void (*pre_exec_hook)(struct starpu_task *, unsigned sched_ctx_id);
	/** Called by the worker after running a task. */
	void (*post_exec_hook)(struct starpu_task *, unsigned sched_ctx_id);
	/** Pushes out tasks the policy held back (starpu_do_schedule()). */
	void (*do_schedule)(unsigned sched_ctx_id);
	/** Workers join / leave the context. */
	void (*add_workers)(unsigned sched_ctx_id, int *workerids, unsigned nworkers);
	void (*remove_workers)(unsigned sched_ctx_id, int *workerids, unsigned nworkers);
	void (*reset_scheduler)(unsigned sched_ctx_id);
	/** 1 when the policy prefetches data itself. */
	int prefetches;
	/** Name used by STARPU_SCHED. */
	const char *policy_name;
	/** One-line description shown by STARPU_SCHED=help. */
	const char *policy_description;
	enum starpu_worker_collection_type worker_type;
	/**
	 * StarPU's "remove every available task" method (the tasks chained
	 * through starpu_task::prev and next). StarPU 1.4 documents it as
	 * unused: it never calls it, and neither does Astrolabe; a policy may
	 * set it (for StarPU's sources) and it is ignored. It takes a reserved
	 * slot at the tail, so policies built against older headers keep
	 * their layout.
	 */
	struct starpu_task *(*pop_every_task)(unsigned sched_ctx_id);
	/** Room for growth. */
	void *reserved[3];
};

/** The policies this build knows, NULL-terminated. */
struct starpu_sched_policy **starpu_sched_get_predefined_policies(void);
/** The policy in use for context sched_ctx_id. */
struct starpu_sched_policy *starpu_sched_get_sched_policy_in_ctx(unsigned sched_ctx_id);
/** The policy of the global context. */
struct starpu_sched_policy *starpu_sched_get_sched_policy(void);

/** Priority range of the global context. */
int starpu_sched_get_min_priority(void);
/** Highest task priority of the global context. */
int starpu_sched_get_max_priority(void);
/** Sets the lowest task priority of the global context (for policies, from their init). */
int starpu_sched_set_min_priority(int min_prio);
/** Sets the highest task priority of the global context (for policies, from their init). */
int starpu_sched_set_max_priority(int max_prio);

/** 1 when workerid has an implementation of task (nimpl) it may run. */
int starpu_worker_can_execute_task(unsigned workerid, struct starpu_task *task, unsigned nimpl);
/** Returns 1 if workerid can run task; *impl_mask (if not NULL) gets one bit per implementation it can run. */
int starpu_worker_can_execute_task_impl(unsigned workerid, struct starpu_task *task, unsigned *impl_mask);
/** Returns 1 if workerid can run task; *nimpl (if not NULL) gets the first implementation it can run. */
int starpu_worker_can_execute_task_first_impl(unsigned workerid, struct starpu_task *task, unsigned *nimpl);
/** 1 when workerid (a worker or a combined worker: a parallel codelet within max_parallelism) can run task. */
int starpu_combined_worker_can_execute_task(unsigned workerid, struct starpu_task *task, unsigned nimpl);
/** Makes the default combined workers: the CPU workers in aligned groups of 2, 4, 8... and all of them. */
void starpu_sched_find_all_worker_combinations(void);

/** Queues task on workerid's local queue (front unless back). */
int starpu_push_local_task(int workerid, struct starpu_task *task, int back);
/** Called by a policy in push_task, before the task becomes visible to workers (afterwards a worker may run and free it). */
int starpu_push_task_end(struct starpu_task *task);
/** A policy calls it once it has decided where task goes: when STARPU_TASK_BREAK_ON_SCHED names
 * the task's job id (starpu_task_get_job_id()), it raises SIGTRAP, stopping the program in a debugger
 * there (without one, the program ends). The variable is read at the first call after starpu_init(). */
void starpu_sched_task_break(struct starpu_task *task);
/** A policy's add_workers says workerid takes tasks from lists it shares with other workers of
 * sched_ctx_id. Every worker here asks the pop_task of each context it belongs to, whatever lists the
 * policy keeps, so nothing more is arranged; a worker or context that does not exist is said. */
void starpu_sched_ctx_worker_shares_tasks_lists(int workerid, int sched_ctx_id);
/** What starpu_task_notify_ready_soon_register() calls: task will be ready in about delay microseconds. */
typedef void (*starpu_notify_ready_soon_func)(void *data, struct starpu_task *task, double delay);
/** Registers f, called with data when a task is found to become ready in a known time: the last task
 * it waits for has just started and its duration is predicted (starpu_task::predicted, set by the
 * policies that use performance models): f(data, task, that duration). One function per run (a
 * policy registers it from its init_sched; starpu_init() forgets it); NULL unregisters it, and
 * another function while one is registered is refused with a message. */
void starpu_task_notify_ready_soon_register(starpu_notify_ready_soon_func f, void *data);

/** Wakes workerid if it sleeps. Returns 1 if it was woken. */
int starpu_wake_worker(int workerid);
/** Wakes workerid if it sleeps, the caller holding its scheduling mutex; returns 1 if it was sleeping. */
int starpu_wake_worker_locked(int workerid);
/** Wakes workerid if it sleeps; returns 1 if it was sleeping. */
int starpu_wake_worker_no_relax(int workerid);
/** Wakes workerid if it sleeps; returns 1 if it was sleeping. */
int starpu_wake_worker_relax(int workerid);
/** Wakes workerid if it sleeps; returns 1 if it was sleeping. */
int starpu_wake_worker_relax_light(int workerid);
/** Wakes every sleeping worker of the context. */
void starpu_wake_all_blocked_workers(void);

/** Returns 1 when policies should prefetch task data (STARPU_PREFETCH, default 1). */
int starpu_get_prefetch_flag(void);
/** Starts moving the data task reads to node, without waiting; the requests are served
 * by priority prio (highest first), after those of higher priority already queued. */
int starpu_prefetch_task_input_on_node_prio(struct starpu_task *task, unsigned node, int prio);
/** starpu_prefetch_task_input_on_node_prio() at the task's priority. */
int starpu_prefetch_task_input_on_node(struct starpu_task *task, unsigned node);
/** As starpu_prefetch_task_input_on_node_prio(), for a prefetch meant to use idle bus
 * time: served after every other prefetch request. */
int starpu_idle_prefetch_task_input_on_node_prio(struct starpu_task *task, unsigned node, int prio);
/** starpu_idle_prefetch_task_input_on_node_prio() at the task's priority. */
int starpu_idle_prefetch_task_input_on_node(struct starpu_task *task, unsigned node);
/** starpu_prefetch_task_input_on_node_prio() to the memory node of worker. */
int starpu_prefetch_task_input_for_prio(struct starpu_task *task, unsigned worker, int prio);
/** Starts moving the data task reads to the memory node of worker, at the task's priority. */
int starpu_prefetch_task_input_for(struct starpu_task *task, unsigned worker);
/** starpu_idle_prefetch_task_input_on_node_prio() to the memory node of worker. */
int starpu_idle_prefetch_task_input_for_prio(struct starpu_task *task, unsigned worker, int prio);
/** As starpu_prefetch_task_input_for(), for a prefetch meant to use idle bus time. */
int starpu_idle_prefetch_task_input_for(struct starpu_task *task, unsigned worker);

/** Hash of the task's data sizes: CRC32C of each buffer's footprint, buffers with STARPU_NOFOOTPRINT left out. */
uint32_t starpu_task_data_footprint(struct starpu_task *task);
/** The footprint model files key task's measurements by: model->footprint, else a size_base, else the data footprint. */
uint32_t starpu_task_footprint(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** Expected duration of task (µs) on arch: 0.0 without a model, NaN while the model is not calibrated for it. */
double starpu_task_expected_length(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** As starpu_task_expected_length() on workerid's architecture (the only way to a STARPU_PER_WORKER model). */
double starpu_task_worker_expected_length(struct starpu_task *task, unsigned workerid, unsigned sched_ctx_id, unsigned nimpl);
/** How much faster than one CPU core arch is (StarPU's driver factors). */
double starpu_worker_get_relative_speedup(struct starpu_perfmodel_arch *perf_arch);
/** Expected time (µs) to bring the data task reads to memory_node: the sum of starpu_data_expected_transfer_time() over its buffers. */
double starpu_task_expected_data_transfer_time(unsigned memory_node, struct starpu_task *task);
/** As starpu_task_expected_data_transfer_time(), to the memory node of worker. */
double starpu_task_expected_data_transfer_time_for(struct starpu_task *task, unsigned worker);
/** Expected time (µs) to make handle valid on memory_node for an access in mode: 0 when mode does not read, or the data is there. */
double starpu_data_expected_transfer_time(starpu_data_handle_t handle, unsigned memory_node, enum starpu_data_access_mode mode);
/** Expected time (µs) converting task's multiformat data for arch (0: no multiformat data here). */
double starpu_task_expected_conversion_time(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** Harmonic mean, over the workers of the context that can run task, of the expected length of each one's best implementation (NaN when none predicts). */
double starpu_task_expected_length_average(struct starpu_task *task, unsigned sched_ctx_id);
/** Expected energy (J) from codelet->energy_model, with the rules of starpu_task_expected_length(). */
double starpu_task_expected_energy(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl);
/** Energy the codelet's energy model predicts for task on workerid with implementation nimpl, NaN without a prediction. */
double starpu_task_worker_expected_energy(struct starpu_task *task, unsigned workerid, unsigned sched_ctx_id, unsigned nimpl);
/** As starpu_task_expected_length_average(), for the energy model. */
double starpu_task_expected_energy_average(struct starpu_task *task, unsigned sched_ctx_id);

/** Entry points of a library named by STARPU_SCHED_LIB. */
struct starpu_sched_policy *starpu_get_sched_lib_policy(const char *name);
/** Provided by a library named in STARPU_SCHED_LIB: its policies, NULL-terminated. */
struct starpu_sched_policy **starpu_get_sched_lib_policies(void);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_SCHEDULER_H__ */
