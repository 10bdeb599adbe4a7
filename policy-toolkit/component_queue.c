/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Queue components (fifo, prio): they store what is pushed to them, up to a
 * limit, and give it to the components below that pull, or push it down
 * when one of them has room again (can_push). fifo is prio with one level.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "component.h"
#include <astrolabe/thread.h>

struct queue_data
{
	astro_lock_t lock;
	struct astro_sched_queue queue;
	/** Predicted work queued (µs), written under lock. */
	double exp_len;
	unsigned ntasks_threshold;
	double exp_len_threshold;
	int ready;
	/** The one worker below (in the context), -1 when several or none: what is queued here is its to run
	 * (some worker below can run a task pushed here), so it takes the head without asking again.
	 * Read without the lock. */
	int sole_worker;
};

static inline double load_double(double *p)
{
	double v;

	__atomic_load(p, &v, __ATOMIC_RELAXED);
	return v;
}

static double predicted_of(struct starpu_task *task)
{
	return isfinite(task->predicted) && task->predicted > 0.0 ? task->predicted : 0.0;
}

static void account(struct queue_data *data, struct starpu_task *task, int sign)
{
	double predicted = predicted_of(task);

	if (predicted == 0.0)
		return;
	double len = load_double(&data->exp_len) + sign * predicted;

	len = len > 0.0 ? len : 0.0;
	__atomic_store(&data->exp_len, &len, __ATOMIC_RELAXED);
}

/* The limited queue that, on this thread, took a task for a pull and asked the components above to
 * refill it; set once it is full again, when the one pumping for it may stop. */
static ASTRO_THREAD_LOCAL_IE struct starpu_sched_component *refilling;
static ASTRO_THREAD_LOCAL_IE int refilled;

int _astro_component_queue_refilled(void)
{
	return refilled;
}

/* Under lock: no room for another task. */
static int full(struct queue_data *data)
{
	return (data->ntasks_threshold && astro_sched_queue_ntasks(&data->queue) >= data->ntasks_threshold)
	       || (data->exp_len_threshold > 0.0 && data->exp_len >= data->exp_len_threshold);
}

static int queue_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	struct queue_data *data = component->data;

	astro_lock_acquire(&data->lock);
	if (full(data))
	{
		astro_lock_release(&data->lock);
		return 1;
	}
	/* A queue that schedules ahead brings the data while the task waits (before it is visible: then it may run and be freed). */
	if (data->ntasks_threshold && starpu_memory_nodes_get_count() > 1)
		starpu_sched_component_prefetch_on_node(component, task);
	astro_sched_queue_push(&data->queue, task);
	account(data, task, +1);
	int refill = component == refilling;
	if (refill && full(data))
		refilled = 1;
	astro_lock_release(&data->lock);
	/* Refilled for the pull of its one worker, which is not waiting: nobody to tell. */
	if (!(refill && __atomic_load_n(&data->sole_worker, __ATOMIC_RELAXED) >= 0))
		component->can_pull(component);
	return 0;
}

static int below_can_run(struct starpu_task *task, void *to)
{
	return starpu_sched_component_can_execute_task(to, task);
}

/* Among the tasks of the head's priority, the first whose data is all on node (and that workerid may run, unless sole). */
static struct starpu_task *take_ready(struct astro_sched_queue *q, int workerid, int sole)
{
	struct starpu_task *head = q->buckets[q->highest].head;
	int priority = astro_sched_queue_priority_of(q, head);
	int node = -1;

	for (struct starpu_task *task = head; task && astro_sched_queue_priority_of(q, task) == priority; task = task->next)
	{
		int missing = 0;

		if (node < 0 && STARPU_TASK_GET_NBUFFERS(task))
			node = (int)starpu_worker_get_memory_node((unsigned)workerid);
		for (unsigned i = 0; i < STARPU_TASK_GET_NBUFFERS(task) && !missing; i++)
			missing = !starpu_data_is_on_node(STARPU_TASK_GET_HANDLE(task, i), (unsigned)node);
		if (!missing && (sole || astro_sched_task_allowed_on(task, workerid)))
		{
			astro_sched_queue_erase(q, q->highest, task);
			return task;
		}
	}
	return sole ? astro_sched_queue_take_head(q) : astro_sched_queue_take_first(q, workerid);
}

/* What to takes: the pulling worker's next task when it is below to, else one some worker below to can run. */
static struct starpu_task *take_for(struct queue_data *data, struct starpu_sched_component *to)
{
	int workerid = starpu_worker_get_id();

	if (workerid >= 0 && workerid == __atomic_load_n(&data->sole_worker, __ATOMIC_RELAXED))
		return data->ready && astro_sched_queue_ntasks(&data->queue) ? take_ready(&data->queue, workerid, 1)
									       : astro_sched_queue_take_head(&data->queue);
	if (workerid >= 0 && starpu_bitmap_get(to->workers_in_ctx, workerid))
		return data->ready && astro_sched_queue_ntasks(&data->queue) ? take_ready(&data->queue, workerid, 0)
									       : astro_sched_queue_take_first(&data->queue, workerid);
	return astro_sched_queue_take_first_if(&data->queue, below_can_run, to);
}

static struct starpu_task *queue_pull_task(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	struct queue_data *data = component->data;
	struct starpu_task *task = NULL;

	if (astro_sched_queue_ntasks(&data->queue))
	{
		astro_lock_acquire(&data->lock);
		task = take_for(data, to);
		if (task)
			account(data, task, -1);
		astro_lock_release(&data->lock);
	}
	if (task)
	{
		/* Room again: the components above may push more, until this queue is full again (no push
		 * refused, sent back up and queued again there for each task taken). */
		if (data->ntasks_threshold || data->exp_len_threshold > 0.0)
		{
			struct starpu_sched_component *outer = refilling;
			int outer_refilled = refilled;

			refilling = component;
			refilled = 0;
			starpu_sched_component_send_can_push_to_parents(component);
			refilling = outer;
			refilled = outer_refilled;
		}
		return task;
	}
	return starpu_sched_component_parents_pull_task(component, to);
}

/* A child has room: push it what it can take, keep the task it refuses. */
static int queue_can_push(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	struct queue_data *data = component->data;
	int pushed = 0;

	while (astro_sched_queue_ntasks(&data->queue))
	{
		struct starpu_task *task;

		astro_lock_acquire(&data->lock);
		task = astro_sched_queue_take_first_if(&data->queue, below_can_run, to);
		if (task)
			account(data, task, -1);
		astro_lock_release(&data->lock);
		if (!task)
			break;
		if (starpu_sched_component_push_task(component, to, task))
		{
			astro_lock_acquire(&data->lock);
			astro_sched_queue_push_front(&data->queue, task);
			account(data, task, +1);
			astro_lock_release(&data->lock);
			break;
		}
		pushed = 1;
		/* The queue that asked for a refill is full, or the worker that pulls has its task: the rest
		 * waits here for the next pull. */
		if (refilled || _astro_component_puller_served())
			break;
	}
	/* Nothing left here: those above may have some. */
	return pushed || starpu_sched_component_send_can_push_to_parents(component);
}

static double queue_estimated_end(struct starpu_sched_component *component)
{
	struct queue_data *data = component->data;

	return starpu_sched_component_estimated_end_min_add(component, load_double(&data->exp_len));
}

static double queue_estimated_load(struct starpu_sched_component *component)
{
	struct queue_data *data = component->data;

	return astro_sched_queue_ntasks(&data->queue) / _astro_component_speed(component) + starpu_sched_component_estimated_load(component);
}

static void queue_notify_change_workers(struct starpu_sched_component *component)
{
	struct queue_data *data = component->data;
	int first = starpu_bitmap_first(component->workers_in_ctx);
	int sole = first >= 0 && (unsigned)first < starpu_worker_get_count() && starpu_bitmap_next(component->workers_in_ctx, first) < 0 ? first : -1;

	__atomic_store_n(&data->sole_worker, sole, __ATOMIC_RELAXED);
}

static void queue_deinit_data(struct starpu_sched_component *component)
{
	struct queue_data *data = component->data;
	unsigned left = astro_sched_queue_ntasks(&data->queue);

	if (left)
		astro_log_error("sched_component", "%u tasks were still queued in component '%s' at shutdown", left, component->name);
	astro_sched_queue_fini(&data->queue);
	free(data);
}

static struct starpu_sched_component *queue_create(struct starpu_sched_tree *tree, const char *name, int prio,
						   unsigned ntasks_threshold, double exp_len_threshold, int ready)
{
	struct starpu_sched_component *component = _astro_component_create_with_data(tree, name, sizeof(struct queue_data));
	struct queue_data *data = component ? component->data : NULL;
	int min_priority = 0, max_priority = 0;

	if (prio && tree)
		_astro_component_priorities(tree, &min_priority, &max_priority);
	if (!component)
		return NULL;
	if (astro_sched_queue_init(&data->queue, min_priority, max_priority))
	{
		astro_log_error("sched_component", "cannot allocate the queue of a %s component", name);
		starpu_sched_component_destroy(component);
		return NULL;
	}
	astro_lock_init(&data->lock);
	data->ntasks_threshold = ntasks_threshold;
	data->exp_len_threshold = exp_len_threshold;
	data->ready = ready;
	data->sole_worker = -1;
	component->push_task = queue_push_task;
	component->pull_task = queue_pull_task;
	component->can_push = queue_can_push;
	component->estimated_end = queue_estimated_end;
	component->estimated_load = queue_estimated_load;
	component->deinit_data = queue_deinit_data;
	component->notify_change_workers = queue_notify_change_workers;
	return component;
}

struct starpu_sched_component *starpu_sched_component_fifo_create(struct starpu_sched_tree *tree, struct starpu_sched_component_fifo_data *d)
{
	return queue_create(tree, "fifo", 0, d ? d->ntasks_threshold : 0, d ? d->exp_len_threshold : 0.0, d ? d->ready : 0);
}

struct starpu_sched_component *starpu_sched_component_prio_create(struct starpu_sched_tree *tree, struct starpu_sched_component_prio_data *d)
{
	return queue_create(tree, "prio", 1, d ? d->ntasks_threshold : 0, d ? d->exp_len_threshold : 0.0, d ? d->ready : 0);
}

int starpu_sched_component_is_fifo(struct starpu_sched_component *component)
{
	return component && component->push_task == queue_push_task && !strcmp(component->name, "fifo");
}

int starpu_sched_component_is_prio(struct starpu_sched_component *component)
{
	return component && component->push_task == queue_push_task && !strcmp(component->name, "prio");
}
