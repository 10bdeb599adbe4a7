/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a worker component is, for every file of the modular schedulers:
 * the push_task of the two kinds of leaves (a worker's component, a combined
 * worker's), which tells them apart from the other components, and what the
 * generic component code asks of a combined worker (its first member, its
 * speed, whether its members can run a task). component.c and
 * component_worker.c both use this file and it uses neither, so the generic
 * code never calls the file that makes the worker components.
 */
#include <math.h>
#include "component_leaves.h"

ASTRO_THREAD_LOCAL_IE struct starpu_sched_component *_astro_leaf_pulling;
ASTRO_THREAD_LOCAL_IE struct starpu_task *_astro_leaf_handed;

int _astro_leaf_worker_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	struct _astro_worker_leaf *data = component->data;
	int wake;

	if (_astro_leaf_pulling == component && !_astro_leaf_handed)
	{
		_astro_leaf_handed = task;
		return 0;
	}
	astro_lock_acquire(&data->lock);
	astro_sched_queue_push(&data->queue, task);
	if (isfinite(task->predicted) && task->predicted > 0.0)
		_astro_leaf_store_double(&data->queued_len, _astro_leaf_load_double(&data->queued_len) + task->predicted);
	wake = astro_sched_workers_claim(&data->ctx->workers, data->workerid);
	astro_lock_release(&data->lock);
	if (wake)
		astro_sched_wake(data->workerid, 1);
	return 0;
}

int _astro_leaf_combined_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	struct _astro_combined_leaf *data = component->data;

	/* The kernel queues one part per member and wakes them (a sequential codelet is refused, with a message). */
	return starpu_push_local_task(data->id, task, 1) ? 1 : 0;
}

int _astro_component_puller_served(void)
{
	return _astro_leaf_handed != NULL || _astro_component_queue_refilled();
}

int starpu_sched_component_is_worker(struct starpu_sched_component *component)
{
	return component && (component->push_task == _astro_leaf_worker_push_task || component->push_task == _astro_leaf_combined_push_task);
}

int starpu_sched_component_is_simple_worker(struct starpu_sched_component *component)
{
	return component && component->push_task == _astro_leaf_worker_push_task;
}

int starpu_sched_component_is_combined_worker(struct starpu_sched_component *component)
{
	return component && component->push_task == _astro_leaf_combined_push_task;
}

int _astro_component_combined_can_execute(struct starpu_sched_component *component, struct starpu_task *task)
{
	if (!starpu_sched_component_is_combined_worker(component) || !starpu_bitmap_cardinal(component->workers_in_ctx))
		return 0;
	for (unsigned nimpl = 0; nimpl < STARPU_MAXIMPLEMENTATIONS; nimpl++)
		if (starpu_combined_worker_can_execute_task((unsigned)((struct _astro_combined_leaf *)component->data)->id, task, nimpl))
			return 1;
	return 0;
}

int _astro_component_combined_first(struct starpu_sched_component *component)
{
	return ((struct _astro_combined_leaf *)component->data)->members[0];
}

double _astro_component_combined_speed(struct starpu_sched_component *component)
{
	struct _astro_combined_leaf *data = component->data;
	double sum = 0.0;

	for (int i = 0; i < data->size; i++)
		sum += starpu_worker_get_relative_speedup(starpu_worker_get_perf_archtype(data->members[i], component->tree->sched_ctx_id));
	return sum > 1e-9 ? sum : 1e-9;
}
