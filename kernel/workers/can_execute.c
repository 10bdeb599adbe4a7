/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which worker may run which task, and with which implementation: the
 * driver's where bits and implementations, the codelet's can_execute, a task
 * pinned to a worker or restricted to some (task->workerids), a worker the
 * enable knob took out. Policies ask it for every decision.
 */
#include "workers/workers.h"

int _astro_worker_impl_for(int workerid, struct starpu_task *task)
{
	struct _astro_worker *w = _astro_rt.workers[workerid];
	struct starpu_codelet *cl = task->cl;
	if (!_astro_task_where(task, w->driver))
		return -1;
	/* A task given to a combined worker runs on its members (the kernel gives it to them only). */
	if (task->execute_on_a_specific_worker && task->workerid != (unsigned)workerid && task->workerid < _astro_rt.nworkers)
		return -1;
	for (unsigned nimpl = 0; nimpl < STARPU_MAXIMPLEMENTATIONS; nimpl++) {
		if (!w->driver->has_impl(cl, nimpl))
			continue;
		if (cl->can_execute && !cl->can_execute((unsigned)workerid, task, nimpl))
			continue;
		return (int)nimpl;
	}
	return -1;
}

/* A pinned task may run on workerid only when pinned there, or to a combined worker (it runs on its members). */
static bool __attribute__((noinline, cold)) pinned_elsewhere(const struct starpu_task *task, unsigned workerid)
{
	return task->workerid != workerid && task->workerid < _astro_rt.nworkers;
}

/* task->workerids (a bitmap of workerids_len words, NULL: any) allows id. */
static bool __attribute__((noinline, cold)) allowed_by_workerids(const struct starpu_task *task, unsigned id)
{
	return id / 32 < task->workerids_len && ((task->workerids[id / 32] >> (id % 32)) & 1);
}

/* Whether worker workerid could run task, task->workerids aside (a combined worker's members run it when it allows the combined worker).
 * Inlined into starpu_worker_can_execute_task(), which policies call at every push and pop. */
static inline __attribute__((always_inline)) int can_execute(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
	if (workerid >= _astro_rt.nworkers || !task || !task->cl)
		return 0;
	struct _astro_worker *w = _astro_rt.workers[workerid];
	struct starpu_codelet *cl = task->cl;
	/* Disabled by starpu.worker.w_enable_worker_knob: no policy hands it new tasks. */
	if (STARPU_UNLIKELY(!__atomic_load_n(&w->enabled, __ATOMIC_RELAXED)))
		return 0;
	if (!_astro_task_where(task, w->driver) || nimpl >= STARPU_MAXIMPLEMENTATIONS || !w->driver->has_impl(cl, nimpl))
		return 0;
	if (STARPU_UNLIKELY(task->execute_on_a_specific_worker) && pinned_elsewhere(task, workerid))
		return 0;
	return !cl->can_execute || cl->can_execute(workerid, task, nimpl);
}

int _astro_worker_can_execute(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
	return can_execute(workerid, task, nimpl);
}

/* Asked again, while task is queued, about the worker a policy found for it at its push (the pop
 * after the push): only the enable knob may have changed, unless the codelet filters by itself. */
static inline __attribute__((always_inline)) bool known_runnable(unsigned workerid, const struct starpu_task *task)
{
	const struct _astro_job_head *head = task->starpu_private;
	return head && __atomic_load_n(&head->runnable_on, __ATOMIC_RELAXED) == (int)workerid + 1 &&
	       task->status == STARPU_TASK_READY && !task->execute_on_a_specific_worker && task->cl && !task->cl->can_execute &&
	       __atomic_load_n(&_astro_rt.workers[workerid]->enabled, __ATOMIC_RELAXED);
}

int starpu_worker_can_execute_task(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
	if (STARPU_UNLIKELY(task && task->workerids) && !allowed_by_workerids(task, workerid))
		return 0;
	if (nimpl == 0 && task && known_runnable(workerid, task))
		return 1;
	if (!can_execute(workerid, task, nimpl))
		return 0;
	/* A policy asks before it hands the task over: the worker it hands it to need not ask again. */
	if (nimpl == 0 && task->starpu_private)
		__atomic_store_n(&((struct _astro_job_head *)task->starpu_private)->runnable_on, (int)workerid + 1, __ATOMIC_RELAXED);
	return 1;
}

int _astro_task_allows_worker(const struct starpu_task *task, unsigned id)
{
	return !task->workerids || allowed_by_workerids(task, id);
}

int starpu_worker_can_execute_task_impl(unsigned workerid, struct starpu_task *task, unsigned *impl_mask)
{
	unsigned mask = 0;
	for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; i++)
		if (starpu_worker_can_execute_task(workerid, task, i))
			mask |= 1u << i;
	if (impl_mask)
		*impl_mask = mask;
	return mask != 0;
}

int starpu_worker_can_execute_task_first_impl(unsigned workerid, struct starpu_task *task, unsigned *nimpl)
{
	for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; i++)
		if (starpu_worker_can_execute_task(workerid, task, i)) {
			if (nimpl)
				*nimpl = i;
			return 1;
		}
	return 0;
}

/* Whether cl has an implementation for workers of type, from its fields: for types no driver of this build serves. */
static bool codelet_has_impl_for(const struct starpu_codelet *cl, enum starpu_worker_archtype type)
{
	for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; i++) {
		switch (type) {
		case STARPU_CPU_WORKER: if (cl->cpu_funcs[i]) return true; break;
		case STARPU_CUDA_WORKER: if (cl->cuda_funcs[i]) return true; break;
		case STARPU_OPENCL_WORKER: if (cl->opencl_funcs[i]) return true; break;
		case STARPU_HIP_WORKER: if (cl->hip_funcs[i]) return true; break;
		case STARPU_MAX_FPGA_WORKER: if (cl->max_fpga_funcs[i]) return true; break;
		/* Master-slave workers run CPU functions they look up by name. */
		case STARPU_MPI_MS_WORKER:
		case STARPU_TCPIP_MS_WORKER: if (cl->cpu_funcs_name[i]) return true; break;
		default: return false;
		}
	}
	return false;
}

unsigned starpu_worker_type_can_execute_task(enum starpu_worker_archtype worker_type, const struct starpu_task *task)
{
	if (!task || !starpu_worker_archtype_is_valid(worker_type)) {
		_astro_error("starpu_worker_type_can_execute_task: %s: give a task and one of enum starpu_worker_archtype",
			     !task ? "NULL task" : "not a worker type");
		return 0;
	}
	const struct starpu_codelet *cl = task->cl;
	if (!cl)
		return 1;
	for (unsigned i = 0; i < _astro_driver_count(); i++) {
		const struct astro_driver *d = _astro_driver_nth(i);
		if (d->archtype != worker_type)
			continue;
		if (!_astro_task_where(task, d))
			return 0;
		for (unsigned nimpl = 0; nimpl < STARPU_MAXIMPLEMENTATIONS; nimpl++)
			if (d->has_impl(cl, nimpl))
				return 1;
		return 0;
	}
	uint64_t mask = STARPU_WORKER_TO_MASK(worker_type);
	if (cl->where && !(cl->where & mask))
		return 0;
	if (task->where != -1 && task->where != 0 && !((uint64_t)(uint32_t)task->where & mask))
		return 0;
	return codelet_has_impl_for(cl, worker_type);
}
