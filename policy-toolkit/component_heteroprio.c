/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The heteroprio component (starpu_sched_component_heteroprio_create): it
 * sorts the tasks it is given by acceleration factor, the ratio of their
 * predicted length on the slowest and on the fastest worker below, into
 * buckets of similar factors (within 10 %), most accelerated first. Then it
 * hands them down: accelerators (CUDA, OpenCL) take from the most
 * accelerated bucket, CPUs from the least accelerated one, each task going to
 * the child where it completes first (the mct decision) when that child has a
 * worker of the kind that took it. Tasks that some worker cannot run, or that
 * have no prediction, skip the buckets and go by the mct decision alone.
 * Within a bucket, higher priorities go first. With batch set (the default),
 * the tasks of its buckets go down with the context's highest priority, so that the
 * queues below keep the order it chose.
 *
 * This component is the toolkit's; the heteroprio policy (the plugin
 * sched_heteroprio) and its starpu_heteroprio_* API are in
 * plugins/policies/heteroprio, which shares no code with it.
 */
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "component.h"

/* Tasks whose acceleration factors differ by less than this share a bucket. */
#define SIMILAR 0.10

struct bucket
{
	double accel;
	struct astro_sched_queue tasks;
};

struct heteroprio_data
{
	struct starpu_sched_component_mct_data params;
	unsigned batch;
	astro_lock_t lock;
	/* By decreasing acceleration factor; grown as new factors appear. */
	struct bucket *buckets;
	unsigned nbuckets;
	/* Tasks that not every worker can run, or without a prediction: by the mct decision alone. */
	struct astro_sched_queue no_accel;
	/* Tasks in the buckets (read without the lock, to skip them when empty). */
	atomic_uint nbucketed;
	int min_priority, max_priority;
	/* The kinds of worker below (bit per starpu_worker_archtype), from the last change of workers. */
	unsigned archs;
	/* How many times the children announced room (can_push, or a pull), and that count when a task was
	 * last refused: while they are equal every child that refused is still full, and a push only queues
	 * its task instead of trying the same refusal again. */
	atomic_uint room, refused_at;
};

/* The acceleration factor of task among the workers below: NAN when one of them cannot run it or has no prediction. */
static double acceleration_of(struct starpu_sched_component *component, struct starpu_task *task)
{
	double fastest = INFINITY, slowest = 0.0;
	int any = 0;

	if (!task->cl->model)
		return NAN;

	for (int w = starpu_bitmap_first(component->workers_in_ctx); w >= 0; w = starpu_bitmap_next(component->workers_in_ctx, w))
	{
		unsigned mask = 0;
		double best = INFINITY;

		if (!starpu_worker_can_execute_task_impl((unsigned)w, task, &mask))
			return NAN;
		struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(w, component->tree->sched_ctx_id);
		for (unsigned nimpl = 0; nimpl < STARPU_MAXIMPLEMENTATIONS; nimpl++)
		{
			if (!(mask & (1u << nimpl)))
				continue;
			double len = starpu_task_expected_length(task, arch, nimpl);

			if (isnan(len) || len <= 0.0)
				return NAN;
			if (len < best)
				best = len;
		}
		if (isinf(best))
			return NAN;
		fastest = best < fastest ? best : fastest;
		slowest = best > slowest ? best : slowest;
		any = 1;
	}
	return any ? slowest / fastest : NAN;
}

/* The bucket of factor accel, made (in its place by decreasing factor) when none is close enough; -1 when memory is short. Under lock. */
static int bucket_for(struct heteroprio_data *data, double accel)
{
	unsigned i;

	for (i = 0; i < data->nbuckets; i++)
		if (accel >= data->buckets[i].accel * (1.0 - SIMILAR) && accel <= data->buckets[i].accel * (1.0 + SIMILAR))
			return (int)i;
	struct bucket *buckets = realloc(data->buckets, (data->nbuckets + 1) * sizeof(*buckets));
	if (!buckets)
		return -1;
	data->buckets = buckets;
	for (i = 0; i < data->nbuckets && buckets[i].accel > accel; i++)
		;
	struct bucket fresh = { .accel = accel };
	if (astro_sched_queue_init(&fresh.tasks, data->min_priority, data->max_priority))
		return -1;
	memmove(&buckets[i + 1], &buckets[i], (data->nbuckets - i) * sizeof(*buckets));
	buckets[i] = fresh;
	data->nbuckets++;
	return (int)i;
}

/* Sends task to the child where it completes first, if that child has a worker of kind arch (-1: any kind); a task
 * of a bucket in batch mode goes with the highest priority. 0 when it went; a child that refused it (full) is
 * noted with room, the room count before the attempt. */
static int send_down(struct starpu_sched_component *component, struct heteroprio_data *data, struct starpu_task *task, int arch, int bucket,
		     unsigned room)
{
	int best = _astro_component_mct_choose(component, &data->params, task);

	if (best < 0)
		return 1;
	struct starpu_sched_component *child = component->children[best];
	if (arch >= 0)
	{
		int w;

		for (w = starpu_bitmap_first(child->workers_in_ctx); w >= 0; w = starpu_bitmap_next(child->workers_in_ctx, w))
			if ((int)starpu_worker_get_type(w) == arch)
				break;
		if (w < 0)
			return 1;
	}
	int priority = task->priority;
	/* The queues below keep the order chosen here. */
	if (bucket && data->batch)
		task->priority = data->max_priority;
	if (starpu_sched_component_push_task(component, child, task) == 0)
		return 0;
	task->priority = priority;
	atomic_store(&data->refused_at, room);
	return 1;
}

/* Workers of kind arch take a task from the most accelerated bucket (front) or the least (back). 0 when one went down. */
static int progress_accel(struct starpu_sched_component *component, struct heteroprio_data *data, int arch, int front, unsigned room)
{
	struct starpu_task *task = NULL;
	double accel = 0.0;

	if (!atomic_load(&data->nbucketed))
		return 1;
	astro_lock_acquire(&data->lock);
	for (unsigned n = 0; n < data->nbuckets && !task; n++)
	{
		struct bucket *b = &data->buckets[front ? n : data->nbuckets - 1 - n];

		if (astro_sched_queue_ntasks(&b->tasks))
		{
			task = astro_sched_queue_take_head(&b->tasks);
			accel = b->accel;
			atomic_fetch_sub(&data->nbucketed, 1);
		}
	}
	astro_lock_release(&data->lock);
	if (!task)
		return 1;
	if (send_down(component, data, task, arch, 1, room) == 0)
		return 0;
	/* Back where it was, first of its bucket (buckets only ever grow: it is still there). */
	astro_lock_acquire(&data->lock);
	for (unsigned n = 0; n < data->nbuckets; n++)
		if (data->buckets[n].accel == accel)
		{
			astro_sched_queue_push_front(&data->buckets[n].tasks, task);
			atomic_fetch_add(&data->nbucketed, 1);
			break;
		}
	astro_lock_release(&data->lock);
	return 1;
}

/* Moves one task down if it can; 0 when one went. room: the room count before the attempt. */
static int progress_one(struct starpu_sched_component *component, struct heteroprio_data *data, unsigned room)
{
	/* Accelerators first, taking the most accelerated tasks; CPUs last, the least accelerated. */
	static const struct { int arch, front; } order[] =
	{
		{ STARPU_CUDA_WORKER, 1 }, { STARPU_OPENCL_WORKER, 1 }, { STARPU_MPI_MS_WORKER, 0 }, { STARPU_CPU_WORKER, 0 },
	};

	if (astro_sched_queue_ntasks(&data->no_accel))
	{
		astro_lock_acquire(&data->lock);
		struct starpu_task *task = astro_sched_queue_take_head(&data->no_accel);
		astro_lock_release(&data->lock);
		if (task)
		{
			if (send_down(component, data, task, -1, 0, room) == 0)
				return 0;
			astro_lock_acquire(&data->lock);
			astro_sched_queue_push_front(&data->no_accel, task);
			astro_lock_release(&data->lock);
		}
	}
	unsigned known = 0, archs = __atomic_load_n(&data->archs, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++)
	{
		known |= 1u << order[i].arch;
		if ((archs & (1u << order[i].arch)) && progress_accel(component, data, order[i].arch, order[i].front, room) == 0)
			return 0;
	}
	/* Workers of another kind take what the decision gives them. */
	if ((archs & ~known) && progress_accel(component, data, -1, 0, room) == 0)
		return 0;
	return 1;
}

/* Moves tasks down while the children take them; 1 when at least one went. */
static int progress(struct starpu_sched_component *component)
{
	struct heteroprio_data *data = component->data;
	int moved = 0;

	while (progress_one(component, data, atomic_load(&data->room)) == 0)
	{
		moved = 1;
		/* The worker that pulls has its task: the rest waits here for the next pull. */
		if (_astro_component_puller_served())
			break;
	}
	return moved;
}

static int heteroprio_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	struct heteroprio_data *data = component->data;
	double accel;
	int ret = 0;

	if (!starpu_sched_component_can_execute_task(component, task))
		return -ENODEV;
	accel = acceleration_of(component, task);
	astro_lock_acquire(&data->lock);
	int bucket = isnan(accel) ? -1 : bucket_for(data, accel);
	if (bucket >= 0)
	{
		astro_sched_queue_push(&data->buckets[bucket].tasks, task);
		atomic_fetch_add(&data->nbucketed, 1);
	}
	else if (isnan(accel))
		astro_sched_queue_push(&data->no_accel, task);
	else
		ret = -ENOMEM;
	astro_lock_release(&data->lock);
	if (ret)
	{
		astro_log_error("sched_component", "cannot allocate a bucket of a heteroprio component: task '%s' is refused",
				starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)");
		return ret;
	}
	if (atomic_load(&data->refused_at) != atomic_load(&data->room))
		progress(component);
	return 0;
}

static int heteroprio_can_push(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	(void)to;
	atomic_fetch_add(&((struct heteroprio_data *)component->data)->room, 1);
	return progress(component) || starpu_sched_component_send_can_push_to_parents(component);
}

/* A pull is answered by pushing down (the first task for the puller comes back to it). */
static struct starpu_task *heteroprio_pull_task(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	heteroprio_can_push(component, to);
	return NULL;
}

static void heteroprio_notify_change_workers(struct starpu_sched_component *component)
{
	struct heteroprio_data *data = component->data;
	unsigned archs = 0;

	for (int w = starpu_bitmap_first(component->workers_in_ctx); w >= 0; w = starpu_bitmap_next(component->workers_in_ctx, w))
		archs |= 1u << starpu_worker_get_type(w);
	/* Read by the deciders without the lock. */
	__atomic_store_n(&data->archs, archs, __ATOMIC_RELAXED);
}

static void heteroprio_deinit_data(struct starpu_sched_component *component)
{
	struct heteroprio_data *data = component->data;
	unsigned left = astro_sched_queue_ntasks(&data->no_accel);

	for (unsigned i = 0; i < data->nbuckets; i++)
	{
		left += astro_sched_queue_ntasks(&data->buckets[i].tasks);
		astro_sched_queue_fini(&data->buckets[i].tasks);
	}
	if (left)
		astro_log_error("sched_component", "%u tasks were still waiting in a heteroprio component at shutdown", left);
	astro_sched_queue_fini(&data->no_accel);
	free(data->buckets);
	free(data);
}

struct starpu_sched_component *starpu_sched_component_heteroprio_create(struct starpu_sched_tree *tree, struct starpu_sched_component_heteroprio_data *params)
{
	struct starpu_sched_component *component = _astro_component_create_with_data(tree, "heteroprio", sizeof(struct heteroprio_data));
	struct heteroprio_data *data = component ? component->data : NULL;

	if (!component)
		return NULL;
	if (tree)
		_astro_component_priorities(tree, &data->min_priority, &data->max_priority);
	if (astro_sched_queue_init(&data->no_accel, data->min_priority, data->max_priority))
	{
		astro_log_error("sched_component", "cannot allocate the queue of a heteroprio component");
		starpu_sched_component_destroy(component);
		return NULL;
	}
	_astro_component_mct_params(&data->params, params ? params->mct : NULL);
	data->batch = params ? params->batch : 1;
	atomic_store(&data->refused_at, UINT_MAX);
	astro_lock_init(&data->lock);
	component->push_task = heteroprio_push_task;
	component->pull_task = heteroprio_pull_task;
	component->can_push = heteroprio_can_push;
	component->notify_change_workers = heteroprio_notify_change_workers;
	component->deinit_data = heteroprio_deinit_data;
	return component;
}

int starpu_sched_component_is_heteroprio(struct starpu_sched_component *component)
{
	return component && component->push_task == heteroprio_push_task;
}
