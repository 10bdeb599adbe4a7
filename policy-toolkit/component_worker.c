/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Worker components, the leaves of a modular scheduler: the tasks decided
 * for one worker, what the worker predicts it has left to do, and the
 * pop_task of a modular policy (the worker takes from its component, then
 * pulls from the components above). Their push_task, which the generic
 * component code recognises them by, is in component_leaves.c.
 */
#include <math.h>
#include <stdlib.h>
#include "component_leaves.h"

/* Nothing below a worker pulls from it. */
static struct starpu_task *worker_pull_task(struct starpu_sched_component *from, struct starpu_sched_component *to)
{
	(void)from;
	(void)to;
	return NULL;
}

static int worker_can_pull(struct starpu_sched_component *component)
{
	struct _astro_worker_leaf *data = component->data;

	if (!astro_sched_workers_claim(&data->ctx->workers, data->workerid))
		return 0;
	astro_sched_wake(data->workerid, 0);
	return 1;
}

static double worker_estimated_end(struct starpu_sched_component *component)
{
	struct _astro_worker_leaf *data = component->data;
	double now = starpu_timing_now();
	double running_end = _astro_leaf_load_double(&data->started_at) + _astro_leaf_load_double(&data->running_len);

	return (running_end > now ? running_end : now) + _astro_leaf_load_double(&data->queued_len);
}

static double worker_estimated_load(struct starpu_sched_component *component)
{
	struct _astro_worker_leaf *data = component->data;

	return astro_sched_queue_ntasks(&data->queue) / _astro_component_speed(component);
}

static void worker_deinit_data(struct starpu_sched_component *component)
{
	struct _astro_worker_leaf *data = component->data;
	unsigned left = astro_sched_queue_ntasks(&data->queue);

	if (left)
		astro_log_error("sched_component", "%u tasks were still queued for worker %d at shutdown", left, data->workerid);
	astro_sched_queue_fini(&data->queue);
	free(data);
}

/* ------------------------------------------------------ combined workers */

/* A member pulls through it: what it takes from above is launched on the combined worker (the member meets its part
 * in its own queue); only a task the kernel refuses comes back to the member, which runs it alone. */
static struct starpu_task *combined_pull_task(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	struct starpu_task *task = starpu_sched_component_parents_pull_task(component, to);

	if (task && _astro_leaf_combined_push_task(component, task) == 0)
		return NULL;
	return task;
}

static double combined_estimated_end(struct starpu_sched_component *component)
{
	struct _astro_combined_leaf *data = component->data;
	double end = starpu_timing_now();

	for (int i = 0; i < data->size; i++)
	{
		struct starpu_sched_component *member = starpu_sched_component_worker_get(component->tree->sched_ctx_id, data->members[i]);
		double member_end = member ? member->estimated_end(member) : end;

		end = member_end > end ? member_end : end;
	}
	return end;
}

static double combined_estimated_load(struct starpu_sched_component *component)
{
	struct _astro_combined_leaf *data = component->data;
	double load = 0.0;

	for (int i = 0; i < data->size; i++)
	{
		struct starpu_sched_component *member = starpu_sched_component_worker_get(component->tree->sched_ctx_id, data->members[i]);

		load += member ? member->estimated_load(member) : 0.0;
	}
	return load;
}

/* Decisions count it in the context when all its members are (its id is no worker of the context). */
static void combined_notify_change_workers(struct starpu_sched_component *component)
{
	struct _astro_combined_leaf *data = component->data;
	struct starpu_sched_tree *tree = component->tree;
	int in = 1;

	for (int i = 0; i < data->size && in; i++)
		in = starpu_bitmap_get(tree->workers, data->members[i]);
	if (in)
		starpu_bitmap_set(component->workers_in_ctx, data->id);
	else
		starpu_bitmap_unset(component->workers_in_ctx, data->id);
}

/* The component of combined worker id in the context's tree, made on first use; NULL with a message. */
static struct starpu_sched_component *combined_get(struct _astro_modular_ctx *ctx, unsigned sched_ctx, int id)
{
	unsigned slot = (unsigned)id - starpu_worker_get_count();
	struct starpu_sched_component *component;
	struct _astro_combined_leaf *data;

	if (ctx->combined[slot])
		return ctx->combined[slot];
	if (!ctx->tree)
	{
		astro_log_error("sched_component", "the component of combined worker %d: context %u has no tree yet (starpu_sched_tree_create)", id,
				sched_ctx);
		return NULL;
	}
	component = _astro_component_create_with_data(ctx->tree, "combined_worker", sizeof(*data));
	if (!component)
		return NULL;
	data = component->data;
	data->id = id;
	if (starpu_combined_worker_get_description(id, &data->size, (int **)&data->members) != 0)
	{
		starpu_sched_component_destroy(component);
		return NULL;
	}
	component->push_task = _astro_leaf_combined_push_task;
	/* can_pull stays the default: a task above it wakes a member, which pulls. */
	component->pull_task = combined_pull_task;
	component->estimated_end = combined_estimated_end;
	component->estimated_load = combined_estimated_load;
	component->notify_change_workers = combined_notify_change_workers;
	component->properties = STARPU_SCHED_COMPONENT_HOMOGENEOUS | STARPU_SCHED_COMPONENT_SINGLE_MEMORY_NODE;
	starpu_bitmap_set(component->workers, id);
	ctx->combined[slot] = component;
	for (int i = 0; i < data->size; i++)
		starpu_sched_component_connect(component, starpu_sched_component_worker_get(sched_ctx, data->members[i]));
	combined_notify_change_workers(component);
	return component;
}

struct starpu_sched_component *starpu_sched_component_parallel_worker_create(struct starpu_sched_tree *tree, unsigned nworkers, unsigned *workers)
{
	int ids[STARPU_MAXCPUS];
	struct _astro_modular_ctx *ctx;

	if (!tree || !workers || nworkers < 1 || nworkers > STARPU_MAXCPUS)
	{
		astro_log_error("sched_component", "starpu_sched_component_parallel_worker_create: give a tree and 1 to %d CPU workers (%s, %u workers)",
				STARPU_MAXCPUS, tree ? "a tree" : "no tree", workers ? nworkers : 0);
		return NULL;
	}
	if (!(ctx = _astro_modular_ctx(tree->sched_ctx_id)))
		return NULL;
	for (unsigned i = 0; i < nworkers; i++)
		ids[i] = (int)workers[i];
	/* The combined worker of these workers, made if none exists (the kernel says what is wrong with them). */
	int id = starpu_combined_worker_assign_workerid((int)nworkers, ids);
	return id < 0 ? NULL : combined_get(ctx, tree->sched_ctx_id, id);
}

int starpu_sched_component_worker_get_workerid(struct starpu_sched_component *worker_component)
{
	if (starpu_sched_component_is_combined_worker(worker_component))
		return ((struct _astro_combined_leaf *)worker_component->data)->id;
	return starpu_sched_component_is_simple_worker(worker_component) ? ((struct _astro_worker_leaf *)worker_component->data)->workerid : -1;
}

struct starpu_sched_component *starpu_sched_component_worker_new(unsigned sched_ctx, int workerid)
{
	return starpu_sched_component_worker_get(sched_ctx, workerid);
}

struct starpu_sched_component *starpu_sched_component_worker_get(unsigned sched_ctx, int workerid)
{
	struct _astro_modular_ctx *ctx = _astro_modular_ctx(sched_ctx);
	struct starpu_sched_component *component;
	struct _astro_worker_leaf *data;
	int min_priority, max_priority;

	if (!ctx)
		return NULL;
	if (workerid >= 0 && (unsigned)workerid >= starpu_worker_get_count()
	    && (unsigned)workerid < starpu_worker_get_count() + starpu_combined_worker_get_count())
		return combined_get(ctx, sched_ctx, workerid);
	if (workerid < 0 || workerid >= STARPU_NMAXWORKERS || (unsigned)workerid >= starpu_worker_get_count())
	{
		astro_log_error("sched_component", "starpu_sched_component_worker_get: no worker %d (%u workers, %u combined workers)", workerid,
				starpu_worker_get_count(), starpu_combined_worker_get_count());
		return NULL;
	}
	if (ctx->worker[workerid])
		return ctx->worker[workerid];
	component = starpu_sched_component_create(ctx->tree, "worker");
	data = calloc(1, sizeof(*data));
	if (!component || !data)
		goto nomem;
	data->workerid = workerid;
	data->ctx = ctx;
	min_priority = starpu_sched_ctx_get_min_priority(sched_ctx);
	max_priority = starpu_sched_ctx_get_max_priority(sched_ctx);
	if (astro_sched_queue_init(&data->queue, min_priority, max_priority))
		goto nomem;
	astro_lock_init(&data->lock);
	component->data = data;
	component->push_task = _astro_leaf_worker_push_task;
	component->pull_task = worker_pull_task;
	component->can_pull = worker_can_pull;
	component->estimated_end = worker_estimated_end;
	component->estimated_load = worker_estimated_load;
	component->deinit_data = worker_deinit_data;
	component->properties = STARPU_SCHED_COMPONENT_HOMOGENEOUS | STARPU_SCHED_COMPONENT_SINGLE_MEMORY_NODE;
	starpu_bitmap_set(component->workers, workerid);
	starpu_bitmap_set(component->workers_in_ctx, workerid);
	ctx->worker[workerid] = component;
	_astro_component_report_new(component, workerid);
	return component;
nomem:
	astro_log_error("sched_component", "cannot allocate the component of worker %d", workerid);
	free(data);
	if (component)
		component->deinit_data = NULL, free(component->name), starpu_bitmap_destroy(component->workers),
			starpu_bitmap_destroy(component->workers_in_ctx), free(component);
	return NULL;
}

/* The worker's next task from its own queue. The components above pushed there only tasks this
 * worker can run (as in StarPU, where that is the contract of a worker component; the kernel gives
 * back a misrouted task with a message), and a disabled worker still runs what was queued to it. */
static struct starpu_task *worker_take_own(struct _astro_worker_leaf *data)
{
	struct starpu_task *task;

	if (!astro_sched_queue_ntasks(&data->queue))
		return NULL;
	astro_lock_acquire(&data->lock);
	task = astro_sched_queue_take_head(&data->queue);
	if (task && isfinite(task->predicted) && task->predicted > 0.0)
		_astro_leaf_store_double(&data->queued_len, fmax(0.0, _astro_leaf_load_double(&data->queued_len) - task->predicted));
	astro_lock_release(&data->lock);
	return task;
}

static struct starpu_task *worker_take(void *policy_data, int workerid)
{
	struct starpu_sched_component *component = policy_data;
	struct _astro_worker_leaf *data = component->data;
	struct starpu_task *task = worker_take_own(data);

	(void)workerid;
	if (task)
		return task;
	/* A decision component answers a pull by pushing down: its first task for this worker comes back in _astro_leaf_handed. */
	_astro_leaf_pulling = component;
	for (unsigned i = 0; i < component->nparents && !task; i++)
		task = starpu_sched_component_pull_task(component->parents[i], component);
	_astro_leaf_pulling = NULL;
	if (_astro_leaf_handed)
	{
		struct starpu_task *first = _astro_leaf_handed;

		_astro_leaf_handed = NULL;
		if (!task)
			return first;
		_astro_leaf_worker_push_task(component, task);
		return first;
	}
	return task ? task : worker_take_own(data);
}

struct starpu_task *starpu_sched_tree_pop_task(unsigned sched_ctx)
{
	struct _astro_modular_ctx *ctx = _astro_modular_ctx_find(sched_ctx);
	int workerid = starpu_worker_get_id();

	if (!ctx || workerid < 0 || workerid >= STARPU_NMAXWORKERS || !ctx->worker[workerid])
		return NULL;
	return astro_sched_pop_task(&ctx->workers, workerid, ctx->worker[workerid], worker_take);
}

/* A task without a prediction adds nothing to its worker's expected end (nor its start): the hooks leave
 * running_len at 0, where the post-execution hook of the worker's previous task left it. */
static int predicted(const struct starpu_task *task)
{
	return isfinite(task->predicted) && task->predicted > 0.0;
}

/* The data of the worker component of the calling worker in the context, NULL when it has none. */
static struct _astro_worker_leaf *own_leaf(unsigned sched_ctx_id)
{
	struct _astro_modular_ctx *ctx = _astro_modular_ctx_find(sched_ctx_id);
	int workerid = starpu_worker_get_id();

	if (!ctx || workerid < 0 || workerid >= STARPU_NMAXWORKERS || !ctx->worker[workerid])
		return NULL;
	return ctx->worker[workerid]->data;
}

void starpu_sched_component_worker_pre_exec_hook(struct starpu_task *task, unsigned sched_ctx_id)
{
	struct _astro_worker_leaf *data = predicted(task) ? own_leaf(sched_ctx_id) : NULL;

	if (!data)
		return;
	_astro_leaf_store_double(&data->started_at, starpu_timing_now());
	_astro_leaf_store_double(&data->running_len, task->predicted);
}

void starpu_sched_component_worker_post_exec_hook(struct starpu_task *task, unsigned sched_ctx_id)
{
	struct _astro_worker_leaf *data = predicted(task) ? own_leaf(sched_ctx_id) : NULL;

	if (data)
		_astro_leaf_store_double(&data->running_len, 0.0);
}
