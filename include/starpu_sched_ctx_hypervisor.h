/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The link between scheduling contexts and a hypervisor (StarPU 1.4's
 * starpu_sched_ctx_hypervisor.h): a resizing tool gives a context a set of
 * callbacks, and the runtime calls them as that context's tasks and workers
 * go through their lives. A context without counters costs nothing: the
 * runtime observes these moments only while some context has counters.
 */
#ifndef __STARPU_SCHED_CTX_HYPERVISOR_H__
#define __STARPU_SCHED_CTX_HYPERVISOR_H__

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_task;

/**
 * The callbacks a hypervisor gives a context (starpu_sched_ctx_set_perf_counters()).
 * Any of them may be NULL. They run on the thread where the moment happens
 * (the submitting thread, a worker): they must be quick and must not block.
 */
struct starpu_sched_ctx_performance_counters
{
	/** Worker, a member of context sched_ctx_id, was idle for idle_time microseconds (it slept, finding no work). */
	void (*notify_idle_cycle)(unsigned sched_ctx_id, int worker, double idle_time);
	/** Worker took a task of context sched_ctx_id. */
	void (*notify_poped_task)(unsigned sched_ctx_id, int worker);
	/** A task of context sched_ctx_id was queued for worker (a worker's local queue took it,
	 *  or the policy said so with starpu_sched_ctx_call_pushed_task_cb()). */
	void (*notify_pushed_task)(unsigned sched_ctx_id, int worker);
	/** Task (of the context, task->sched_ctx) just ran: the size of its data, the footprint of its
	 *  data (starpu_task_data_footprint()), its task->hypervisor_tag and its task->flops. */
	void (*notify_post_exec_task)(struct starpu_task *task, size_t data_size, uint32_t footprint, int hypervisor_tag, double flops);
	/** Task was submitted to the context: its data footprint and the size of its data. */
	void (*notify_submitted_job)(struct starpu_task *task, uint32_t footprint, size_t data_size);
	/** Task of context sched_ctx_id was pushed while the context has no worker: it waits for some. */
	void (*notify_empty_ctx)(unsigned sched_ctx_id, struct starpu_task *task);
	/** Context sched_ctx is being deleted (its tasks all ended); its counters are unset afterwards. */
	void (*notify_delete_context)(unsigned sched_ctx);
};

/**
 * Gives context sched_ctx_id the callbacks perf_counters (a struct
 * starpu_sched_ctx_performance_counters that must outlive the context or the
 * next call; NULL: none any more). An unknown context is an error (said, nothing set).
 */
void starpu_sched_ctx_set_perf_counters(unsigned sched_ctx_id, void *perf_counters);

/**
 * For a policy: tells the hypervisor of context sched_ctx_id that a task was
 * queued for worker workerid (notify_pushed_task, when the context has it).
 */
void starpu_sched_ctx_call_pushed_task_cb(int workerid, unsigned sched_ctx_id);

/** The hypervisor says it is running (starts every context's sample at the current time). */
void starpu_sched_ctx_notify_hypervisor_exists(void);

/** 1 once starpu_sched_ctx_notify_hypervisor_exists() was called (until starpu_shutdown()), else 0. */
unsigned starpu_sched_ctx_check_if_hypervisor_exists(void);

/**
 * Records start_sample (a starpu_timing_now() time, microseconds) as the
 * start of the current resizing sample of context sched_ctx_id, for the
 * hypervisor; an unknown context is an error (said).
 */
void starpu_sched_ctx_update_start_resizing_sample(unsigned sched_ctx_id, double start_sample);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_SCHED_CTX_HYPERVISOR_H__ */
