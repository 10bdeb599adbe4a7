/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decision components: each chooses the child a task goes to (eager, eager
 * calibration, random, work stealing, mct, heft) or prepares it on its way
 * (best implementation, perfmodel select).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "component.h"

/* ------------------------------------------------------------- eager */

struct eager_data
{
	atomic_uint cursor;
	int calibration;
};

/* 1 when a worker below child still calibrates task's model. */
static int needs_calibration(struct starpu_sched_component *child, struct starpu_task *task)
{
	double length;

	return task->cl && task->cl->model && starpu_sched_component_execute_preds(child, task, &length) && isnan(length);
}

static int eager_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	struct eager_data *data = component->data;
	unsigned n = component->nchildren, start, can = 0;

	if (!n)
		return -ENODEV;
	start = atomic_fetch_add_explicit(&data->cursor, 1, memory_order_relaxed) % n;
	/* eager calibration: first the children that still need to measure this task. */
	for (int pass = data->calibration ? 0 : 1; pass < 2; pass++)
		for (unsigned i = 0; i < n; i++)
		{
			struct starpu_sched_component *child = component->children[(start + i) % n];

			if (!starpu_sched_component_can_execute_task(child, task) || (pass == 0 && !needs_calibration(child, task)))
				continue;
			can = 1;
			if (starpu_sched_component_push_task(component, child, task) == 0)
				return 0;
		}
	return can ? 1 : -ENODEV;
}

static struct starpu_sched_component *eager_create(struct starpu_sched_tree *tree, const char *name, int calibration)
{
	struct starpu_sched_component *component = _astro_component_create_with_data(tree, name, sizeof(struct eager_data));

	if (!component)
		return NULL;
	((struct eager_data *)component->data)->calibration = calibration;
	component->push_task = eager_push_task;
	/* pull_task stays the default: a worker takes from above whatever it can run. */
	return component;
}

struct starpu_sched_component *starpu_sched_component_eager_create(struct starpu_sched_tree *tree, void *arg)
{
	(void)arg;
	return eager_create(tree, "eager", 0);
}

struct starpu_sched_component *starpu_sched_component_eager_calibration_create(struct starpu_sched_tree *tree, void *arg)
{
	(void)arg;
	return eager_create(tree, "eager_calibration", 1);
}

int starpu_sched_component_is_eager(struct starpu_sched_component *component)
{
	return component && component->push_task == eager_push_task && !((struct eager_data *)component->data)->calibration;
}

int starpu_sched_component_is_eager_calibration(struct starpu_sched_component *component)
{
	return component && component->push_task == eager_push_task && ((struct eager_data *)component->data)->calibration;
}

/* A component that decides on push answers a pull by asking above for tasks to decide (they come back down as pushes). */
static struct starpu_task *decide_on_push_pull_task(struct starpu_sched_component *from, struct starpu_sched_component *to)
{
	(void)to;
	starpu_sched_component_send_can_push_to_parents(from);
	return NULL;
}

/* ------------------------------------------------------------ random */

/* The children's speeds, kept from the last change of workers (they are constant in between). */
struct random_speeds
{
	double *speed;
	unsigned n;
};

static void random_notify_change_workers(struct starpu_sched_component *component)
{
	struct random_speeds *data = component->data;
	double *speed = realloc(data->speed, (component->nchildren ? component->nchildren : 1) * sizeof(*speed));

	if (!speed)
	{
		astro_log_error("sched_component", "cannot allocate the speeds of a random component");
		return;
	}
	for (unsigned i = 0; i < component->nchildren; i++)
		speed[i] = _astro_component_speed(component->children[i]);
	data->speed = speed;
	data->n = component->nchildren;
}

static int random_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	struct random_speeds *data = component->data;
	double speed[component->nchildren ? component->nchildren : 1], sum = 0.0;
	unsigned ncapable = 0, capable = 0;

	/* One child: it has all the workers below, one of which can run task (what a push promises). */
	if (component->nchildren == 1)
		return starpu_sched_component_push_task(component, component->children[0], task);

	for (unsigned i = 0; i < component->nchildren; i++)
	{
		speed[i] = 0.0;
		if (starpu_sched_component_can_execute_task(component->children[i], task))
		{
			speed[i] = i < data->n ? data->speed[i] : _astro_component_speed(component->children[i]);
			ncapable++;
			capable = i;
		}
		sum += speed[i];
	}
	if (sum <= 0.0)
		return -ENODEV;
	/* One child can run it: nothing to draw. */
	if (ncapable == 1)
		return starpu_sched_component_push_task(component, component->children[capable], task);
	double draw = starpu_drand48() * sum;
	unsigned chosen = 0;
	while (chosen + 1 < component->nchildren && (speed[chosen] == 0.0 || draw >= speed[chosen]))
		draw -= speed[chosen++];
	return starpu_sched_component_push_task(component, component->children[chosen], task);
}

static void random_deinit_data(struct starpu_sched_component *component)
{
	struct random_speeds *data = component->data;

	free(data->speed);
	free(data);
}

struct starpu_sched_component *starpu_sched_component_random_create(struct starpu_sched_tree *tree, void *arg)
{
	struct starpu_sched_component *component = _astro_component_create_with_data(tree, "random", sizeof(struct random_speeds));

	(void)arg;
	if (!component)
		return NULL;
	component->push_task = random_push_task;
	component->pull_task = decide_on_push_pull_task;
	component->notify_change_workers = random_notify_change_workers;
	component->deinit_data = random_deinit_data;
	return component;
}

int starpu_sched_component_is_random(struct starpu_sched_component *component)
{
	return component && component->push_task == random_push_task;
}

/* ------------------------------------------------------ work stealing */

struct ws_data
{
	struct astro_sched_local_queue *queues;	/* one per child */
	unsigned nqueues;
	atomic_uint cursor;
};

static int ws_child_of_worker(struct starpu_sched_component *component, int workerid)
{
	for (unsigned i = 0; i < component->nchildren; i++)
		if (starpu_bitmap_get(component->children[i]->workers_in_ctx, workerid))
			return (int)i;
	return -1;
}

static int ws_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	struct ws_data *data = component->data;
	unsigned n = component->nchildren < data->nqueues ? component->nchildren : data->nqueues;
	int child = ws_child_of_worker(component, starpu_worker_get_id());

	if (!n)
		return -ENODEV;
	/* A task a worker releases stays with it (its data is likely near); others go round-robin. */
	if (child < 0 || !starpu_sched_component_can_execute_task(component->children[child], task))
	{
		unsigned start = atomic_fetch_add_explicit(&data->cursor, 1, memory_order_relaxed) % n;

		child = -1;
		for (unsigned i = 0; i < n && child < 0; i++)
			if (starpu_sched_component_can_execute_task(component->children[(start + i) % n], task))
				child = (int)((start + i) % n);
		if (child < 0)
			return -ENODEV;
	}
	astro_lock_acquire(&data->queues[child].lock);
	astro_sched_queue_push(&data->queues[child].tasks, task);
	astro_lock_release(&data->queues[child].lock);
	/* Its own workers first, then any that may steal it. */
	if (!component->children[child]->can_pull(component->children[child]))
		starpu_sched_component_can_pull(component);
	return 0;
}

static struct starpu_task *ws_take(struct astro_sched_local_queue *queue, int workerid, int steal)
{
	struct starpu_task *task;

	if (!astro_sched_queue_ntasks(&queue->tasks))
		return NULL;
	astro_lock_acquire(&queue->lock);
	task = steal ? astro_sched_queue_take_last(&queue->tasks, workerid) : astro_sched_queue_take_first(&queue->tasks, workerid);
	astro_lock_release(&queue->lock);
	return task;
}

static struct starpu_task *ws_pull_task(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	struct ws_data *data = component->data;
	int workerid = starpu_worker_get_id();
	unsigned n = component->nchildren < data->nqueues ? component->nchildren : data->nqueues;
	int own = -1;
	struct starpu_task *task;

	if (workerid < 0)
		return NULL;
	for (unsigned i = 0; i < n && own < 0; i++)
		if (component->children[i] == to)
			own = (int)i;
	if (own >= 0 && (task = ws_take(&data->queues[own], workerid, 0)))
		return task;
	/* Steal the victim's least needed task, from the next child on. */
	for (unsigned i = 1; i <= n; i++)
	{
		unsigned victim = (unsigned)(own < 0 ? 0 : own) + i;

		if ((int)(victim % n) != own && (task = ws_take(&data->queues[victim % n], workerid, 1)))
			return task;
	}
	return starpu_sched_component_parents_pull_task(component, to);
}

static void ws_notify_change_workers(struct starpu_sched_component *component)
{
	struct ws_data *data = component->data;

	if (component->nchildren <= data->nqueues)
		return;
	/* Children were connected after creation: grow (before tasks flow, from add_workers). */
	struct astro_sched_local_queue *queues = aligned_alloc(ASTRO_SCHED_CACHE_LINE, component->nchildren * sizeof(*queues));
	if (!queues)
	{
		astro_log_error("sched_component", "cannot allocate the queues of a work stealing component");
		return;
	}
	if (data->nqueues)
		memcpy(queues, data->queues, data->nqueues * sizeof(*queues));
	for (unsigned i = data->nqueues; i < component->nchildren; i++)
	{
		astro_lock_init(&queues[i].lock);
		int min_priority, max_priority;
		_astro_component_priorities(component->tree, &min_priority, &max_priority);
		if (astro_sched_queue_init(&queues[i].tasks, min_priority, max_priority))
			astro_log_error("sched_component", "cannot allocate the queues of a work stealing component");
	}
	free(data->queues);
	data->queues = queues;
	data->nqueues = component->nchildren;
}

static void ws_deinit_data(struct starpu_sched_component *component)
{
	struct ws_data *data = component->data;
	unsigned left = 0;

	for (unsigned i = 0; i < data->nqueues; i++)
	{
		left += astro_sched_queue_ntasks(&data->queues[i].tasks);
		astro_sched_queue_fini(&data->queues[i].tasks);
	}
	if (left)
		astro_log_error("sched_component", "%u tasks were still queued in a work stealing component at shutdown", left);
	free(data->queues);
	free(data);
}

struct starpu_sched_component *starpu_sched_component_work_stealing_create(struct starpu_sched_tree *tree, void *arg)
{
	struct starpu_sched_component *component = _astro_component_create_with_data(tree, "work_stealing", sizeof(struct ws_data));

	(void)arg;
	if (!component)
		return NULL;
	component->push_task = ws_push_task;
	component->pull_task = ws_pull_task;
	component->notify_change_workers = ws_notify_change_workers;
	component->deinit_data = ws_deinit_data;
	return component;
}

int starpu_sched_component_is_work_stealing(struct starpu_sched_component *component)
{
	return component && component->push_task == ws_push_task;
}

int starpu_sched_tree_work_stealing_push_task(struct starpu_task *task)
{
	/* The work stealing component itself keeps a worker's task in that worker's queue. */
	return starpu_sched_tree_push_task(task);
}

/* ---------------------------------------------------------- mct, heft */

void _astro_component_mct_params(struct starpu_sched_component_mct_data *to, const struct starpu_sched_component_mct_data *given)
{
	if (given)
	{
		*to = *given;
		return;
	}
	to->alpha = starpu_get_env_float_default("STARPU_SCHED_ALPHA", 1.0);
	to->beta = starpu_get_env_float_default("STARPU_SCHED_BETA", 1.0);
	to->_gamma = starpu_get_env_float_default("STARPU_SCHED_GAMMA", 1000.0);
	to->idle_power = starpu_get_env_float_default("STARPU_IDLE_POWER", 0.0);
}

struct mct_data
{
	struct starpu_sched_component_mct_data params;
	/* heft: the tasks waiting for a decision, by priority. */
	astro_lock_t lock;
	struct astro_sched_queue window;
	int heft;
};

int _astro_component_mct_choose(struct starpu_sched_component *component, const struct starpu_sched_component_mct_data *params,
				struct starpu_task *task)
{
	double end[component->nchildren ? component->nchildren : 1], len[component->nchildren ? component->nchildren : 1];
	double transfer[component->nchildren ? component->nchildren : 1], min_end = INFINITY, best_fitness = INFINITY;
	int best = -1;

	/* A task without a model and one child: the child, which has all the workers below, one of which can run the task
	 * (what a push promises); with nothing to compare, when the child would finish needs no estimate. */
	if (component->nchildren == 1 && !task->cl->model)
	{
		task->predicted = 0.0;
		task->predicted_transfer = starpu_sched_component_transfer_length(component->children[0], task);
		return 0;
	}
	for (unsigned i = 0; i < component->nchildren; i++)
	{
		struct starpu_sched_component *child = component->children[i];

		end[i] = INFINITY;
		/* Without a model every length is 0: whether the child can run it is enough (execute_preds asks every implementation). */
		if (!task->cl->model ? (len[i] = 0.0, !starpu_sched_component_can_execute_task(child, task))
				     : !starpu_sched_component_execute_preds(child, task, &len[i]))
			continue;
		if (isnan(len[i]))
			len[i] = 0.0;
		transfer[i] = starpu_sched_component_transfer_length(child, task);
		end[i] = child->estimated_end(child) + transfer[i] + len[i];
		if (end[i] < min_end)
			min_end = end[i];
	}
	for (unsigned i = 0; i < component->nchildren; i++)
	{
		if (isinf(end[i]))
			continue;
		double fitness = params->alpha * (end[i] - min_end) + params->beta * transfer[i];

		if (fitness < best_fitness)
		{
			best_fitness = fitness;
			best = (int)i;
		}
	}
	if (best >= 0)
	{
		task->predicted = len[best];
		task->predicted_transfer = transfer[best];
	}
	return best;
}

static int mct_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	int best = _astro_component_mct_choose(component, &((struct mct_data *)component->data)->params, task);

	if (best < 0)
		return -ENODEV;
	return starpu_sched_component_push_task(component, component->children[best], task);
}

/* heft: decides the window's tasks, highest priority first, while the children take them. */
static int heft_pump(struct starpu_sched_component *component)
{
	struct mct_data *data = component->data;
	int pushed = 0;

	while (astro_sched_queue_ntasks(&data->window))
	{
		astro_lock_acquire(&data->lock);
		struct starpu_task *task = astro_sched_queue_take_head(&data->window);
		astro_lock_release(&data->lock);
		if (!task)
			break;
		if (mct_push_task(component, task))
		{
			astro_lock_acquire(&data->lock);
			astro_sched_queue_push_front(&data->window, task);
			astro_lock_release(&data->lock);
			break;
		}
		pushed = 1;
		if (_astro_component_puller_served())
			break;
	}
	return pushed;
}

static int heft_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	struct mct_data *data = component->data;

	if (!starpu_sched_component_can_execute_task(component, task))
		return -ENODEV;
	astro_lock_acquire(&data->lock);
	astro_sched_queue_push(&data->window, task);
	astro_lock_release(&data->lock);
	heft_pump(component);
	return 0;
}

static int heft_can_push(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	(void)to;
	return heft_pump(component) || starpu_sched_component_send_can_push_to_parents(component);
}

static struct starpu_task *heft_pull_task(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	heft_can_push(component, to);
	return NULL;
}

static void mct_deinit_data(struct starpu_sched_component *component)
{
	struct mct_data *data = component->data;

	if (data->heft)
	{
		if (astro_sched_queue_ntasks(&data->window))
			astro_log_error("sched_component", "%u tasks were still waiting in a heft component at shutdown", astro_sched_queue_ntasks(&data->window));
		astro_sched_queue_fini(&data->window);
	}
	free(data);
}

static struct starpu_sched_component *mct_create(struct starpu_sched_tree *tree, struct starpu_sched_component_mct_data *params, int heft)
{
	struct starpu_sched_component *component = _astro_component_create_with_data(tree, heft ? "heft" : "mct", sizeof(struct mct_data));
	struct mct_data *data = component ? component->data : NULL;
	int min_priority = 0, max_priority = 0;

	if (tree)
		_astro_component_priorities(tree, &min_priority, &max_priority);
	if (!component)
		return NULL;
	if (heft && astro_sched_queue_init(&data->window, min_priority, max_priority))
	{
		astro_log_error("sched_component", "cannot allocate the window of a heft component");
		starpu_sched_component_destroy(component);
		return NULL;
	}
	_astro_component_mct_params(&data->params, params);
	data->heft = heft;
	if (heft)
		astro_lock_init(&data->lock);
	component->push_task = heft ? heft_push_task : mct_push_task;
	component->pull_task = heft ? heft_pull_task : decide_on_push_pull_task;
	if (heft)
		component->can_push = heft_can_push;
	component->deinit_data = mct_deinit_data;
	return component;
}

struct starpu_sched_component *starpu_sched_component_mct_create(struct starpu_sched_tree *tree, struct starpu_sched_component_mct_data *mct_data)
{
	return mct_create(tree, mct_data, 0);
}

struct starpu_sched_component *starpu_sched_component_heft_create(struct starpu_sched_tree *tree, struct starpu_sched_component_mct_data *mct_data)
{
	return mct_create(tree, mct_data, 1);
}

int starpu_sched_component_is_mct(struct starpu_sched_component *component)
{
	return component && component->push_task == mct_push_task;
}

int starpu_sched_component_is_heft(struct starpu_sched_component *component)
{
	return component && component->push_task == heft_push_task;
}

/* ------------------------------------------------ best implementation */

static int best_impl_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	int chosen = -1;
	double best = INFINITY;

	if (component->nchildren != 1)
	{
		astro_log_error("sched_component", "a best_implementation component needs exactly one child (it has %u)", component->nchildren);
		return -ENODEV;
	}
	/* Without a model there is nothing to compare: the worker runs the first implementation it has. */
	if (!task->cl || !task->cl->model)
		return starpu_sched_component_push_task(component, component->children[0], task);
	for (int w = starpu_bitmap_first(component->workers_in_ctx); w >= 0 && chosen < 0; w = starpu_bitmap_next(component->workers_in_ctx, w))
	{
		for (unsigned nimpl = 0; nimpl < STARPU_MAXIMPLEMENTATIONS; nimpl++)
		{
			if (!starpu_worker_can_execute_task((unsigned)w, task, nimpl))
				continue;
			double len = task->cl && task->cl->model ? starpu_task_worker_expected_length(task, (unsigned)w, component->tree->sched_ctx_id, nimpl) : 0.0;

			if (isnan(len))
			{
				/* Calibrate this one first. */
				chosen = (int)nimpl;
				best = NAN;
				break;
			}
			if (chosen < 0 || len < best)
			{
				chosen = (int)nimpl;
				best = len;
			}
		}
		if (chosen >= 0)
		{
			starpu_task_set_implementation(task, (unsigned)chosen);
			task->predicted = best;
			task->predicted_transfer = starpu_task_expected_data_transfer_time_for(task, (unsigned)w);
		}
	}
	return starpu_sched_component_push_task(component, component->children[0], task);
}

struct starpu_sched_component *starpu_sched_component_best_implementation_create(struct starpu_sched_tree *tree, void *arg)
{
	struct starpu_sched_component *component = starpu_sched_component_create(tree, "best_implementation");

	(void)arg;
	if (component)
		component->push_task = best_impl_push_task;
	return component;
}

/* -------------------------------------------------- perfmodel select */

static int perfmodel_select_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	struct starpu_sched_component_perfmodel_select_data *data = component->data;
	struct starpu_sched_component *to = data->no_perfmodel_component;
	double length;

	if (task->cl && task->cl->model && starpu_sched_component_execute_preds(component, task, &length))
		to = isnan(length) ? data->calibrator_component : length > 0.0 ? data->perfmodel_component : data->no_perfmodel_component;
	if (!to)
	{
		astro_log_error("sched_component", "perfmodel_select: no component set for this kind of task");
		return -ENODEV;
	}
	return starpu_sched_component_push_task(component, to, task);
}

struct starpu_sched_component *starpu_sched_component_perfmodel_select_create(struct starpu_sched_tree *tree, struct starpu_sched_component_perfmodel_select_data *params)
{
	struct starpu_sched_component *component;

	if (!params)
	{
		astro_log_error("sched_component", "starpu_sched_component_perfmodel_select_create: the three components are needed (params is NULL)");
		return NULL;
	}
	component = _astro_component_create_with_data(tree, "perfmodel_select", sizeof(*params));
	if (!component)
		return NULL;
	*(struct starpu_sched_component_perfmodel_select_data *)component->data = *params;
	component->push_task = perfmodel_select_push_task;
	component->pull_task = decide_on_push_pull_task;
	return component;
}

int starpu_sched_component_is_perfmodel_select(struct starpu_sched_component *component)
{
	return component && component->push_task == perfmodel_select_push_task;
}
