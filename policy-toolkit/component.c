/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Modular schedulers (starpu_sched_component.h): the generic component and
 * its default methods, trees and their policy entry points.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "component.h"
#include <astrolabe/observe.h>

/* ------------------------------------------------------- per context */

static struct _astro_modular_ctx *modular_ctxs[STARPU_NMAX_SCHED_CTXS];
static starpu_pthread_mutex_t modular_ctxs_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

struct _astro_modular_ctx *_astro_modular_ctx(unsigned sched_ctx_id)
{
	struct _astro_modular_ctx *ctx;

	if (sched_ctx_id >= STARPU_NMAX_SCHED_CTXS)
	{
		astro_log_error("sched_component", "scheduling context %u does not exist (at most %d)", sched_ctx_id, STARPU_NMAX_SCHED_CTXS);
		return NULL;
	}
	STARPU_PTHREAD_MUTEX_LOCK(&modular_ctxs_lock);
	ctx = modular_ctxs[sched_ctx_id];
	if (!ctx)
	{
		ctx = astro_sched_alloc_policy_data("sched_component", sizeof(*ctx));
		astro_sched_workers_init(&ctx->workers);
		__atomic_store_n(&modular_ctxs[sched_ctx_id], ctx, __ATOMIC_RELEASE);
	}
	STARPU_PTHREAD_MUTEX_UNLOCK(&modular_ctxs_lock);
	return ctx;
}

struct _astro_modular_ctx *_astro_modular_ctx_find(unsigned sched_ctx_id)
{
	if (sched_ctx_id >= STARPU_NMAX_SCHED_CTXS)
		sched_ctx_id = STARPU_GLOBAL_SCHED_CTX;
	return __atomic_load_n(&modular_ctxs[sched_ctx_id], __ATOMIC_ACQUIRE);
}

static void modular_ctx_free(unsigned sched_ctx_id)
{
	STARPU_PTHREAD_MUTEX_LOCK(&modular_ctxs_lock);
	free(modular_ctxs[sched_ctx_id]);
	__atomic_store_n(&modular_ctxs[sched_ctx_id], NULL, __ATOMIC_RELEASE);
	STARPU_PTHREAD_MUTEX_UNLOCK(&modular_ctxs_lock);
}

void _astro_component_priorities(struct starpu_sched_tree *tree, int *min_priority, int *max_priority)
{
	*min_priority = starpu_sched_ctx_get_min_priority(tree->sched_ctx_id);
	*max_priority = starpu_sched_ctx_get_max_priority(tree->sched_ctx_id);
}

double _astro_component_speed(struct starpu_sched_component *component)
{
	double sum = 0.0;

	if (starpu_sched_component_is_combined_worker(component))
		return _astro_component_combined_speed(component);
	for (int w = starpu_bitmap_first(component->workers_in_ctx); w >= 0; w = starpu_bitmap_next(component->workers_in_ctx, w))
		sum += starpu_worker_get_relative_speedup(starpu_worker_get_perf_archtype(w, component->tree->sched_ctx_id));
	return sum > 1e-9 ? sum : 1e-9;
}

/* --------------------------------------------------- default methods */

struct starpu_task *starpu_sched_component_parents_pull_task(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	(void)to;
	for (unsigned i = 0; i < component->nparents; i++)
	{
		struct starpu_task *task = starpu_sched_component_pull_task(component->parents[i], component);

		if (task)
			return task;
	}
	return NULL;
}

int starpu_sched_component_can_push(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	(void)to;
	return starpu_sched_component_send_can_push_to_parents(component);
}

int starpu_sched_component_send_can_push_to_parents(struct starpu_sched_component *component)
{
	for (unsigned i = 0; i < component->nparents; i++)
	{
		struct starpu_sched_component *parent = component->parents[i];

		if (parent->can_push && parent->can_push(parent, component))
			return 1;
	}
	return 0;
}

int starpu_sched_component_can_pull(struct starpu_sched_component *component)
{
	/* Only a hungry worker needs telling; the others look again before they sleep. The caller queued its
	 * task first, and announcing hunger is sequentially consistent too (astro_sched_pop_task()), so a
	 * worker that turns hungry after this look finds the task. */
	struct _astro_modular_ctx *ctx = component->tree ? _astro_modular_ctx_find(component->tree->sched_ctx_id) : NULL;

	if (ctx && !atomic_load(&ctx->workers.nhungry))
		return 0;
	for (unsigned i = 0; i < component->nchildren; i++)
	{
		struct starpu_sched_component *child = component->children[i];

		if (child->can_pull && child->can_pull(child))
			return 1;
	}
	return 0;
}

int starpu_sched_component_can_pull_all(struct starpu_sched_component *component)
{
	int woke = 0;

	for (unsigned i = 0; i < component->nchildren; i++)
	{
		struct starpu_sched_component *child = component->children[i];

		if (child->can_pull)
			woke |= child->can_pull(child);
	}
	return woke;
}

double starpu_sched_component_estimated_load(struct starpu_sched_component *component)
{
	double load = 0.0;

	for (unsigned i = 0; i < component->nchildren; i++)
		load += component->children[i]->estimated_load(component->children[i]);
	return load;
}

double starpu_sched_component_estimated_end_min(struct starpu_sched_component *component)
{
	double end = INFINITY;

	for (unsigned i = 0; i < component->nchildren; i++)
	{
		double child_end = component->children[i]->estimated_end(component->children[i]);

		if (child_end < end)
			end = child_end;
	}
	return component->nchildren ? end : starpu_timing_now();
}

double starpu_sched_component_estimated_end_min_add(struct starpu_sched_component *component, double exp_len)
{
	int nworkers = starpu_bitmap_cardinal(component->workers_in_ctx);

	return starpu_sched_component_estimated_end_min(component) + (nworkers ? exp_len / nworkers : exp_len);
}

double starpu_sched_component_estimated_end_average(struct starpu_sched_component *component)
{
	double sum = 0.0;

	if (!component->nchildren)
		return starpu_timing_now();
	for (unsigned i = 0; i < component->nchildren; i++)
		sum += component->children[i]->estimated_end(component->children[i]);
	return sum / component->nchildren;
}

static int default_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	/* A component with one child and no decision of its own passes tasks on. */
	if (component->nchildren == 1)
		return starpu_sched_component_push_task(component, component->children[0], task);
	astro_log_error("sched_component", "component '%s' has %u children and no push_task method: it cannot choose where task '%s' goes",
			component->name, component->nchildren, starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)");
	return -ENODEV;
}

static void no_deinit_data(struct starpu_sched_component *component)
{
	(void)component;
}

static void free_data(struct starpu_sched_component *component)
{
	free(component->data);
}

static void no_notify_change_workers(struct starpu_sched_component *component)
{
	(void)component;
}

int _astro_component_links_add(struct starpu_sched_component ***array, unsigned *n, struct starpu_sched_component *c)
{
	struct starpu_sched_component **bigger = realloc(*array, (*n + 1) * sizeof(**array));

	if (!bigger)
	{
		astro_log_error("sched_component", "cannot allocate a link to component '%s'", c->name);
		return -ENOMEM;
	}
	bigger[(*n)++] = c;
	*array = bigger;
	return 0;
}

void _astro_component_links_drop(struct starpu_sched_component **array, unsigned *n, struct starpu_sched_component *c)
{
	for (unsigned i = 0; i < *n; i++)
		if (array[i] == c)
		{
			memmove(&array[i], &array[i + 1], (*n - i - 1) * sizeof(*array));
			(*n)--;
			return;
		}
}

void starpu_sched_component_add_child(struct starpu_sched_component *component, struct starpu_sched_component *child)
{
	for (unsigned i = 0; i < component->nchildren; i++)
		if (component->children[i] == child)
			return;
	_astro_component_links_add(&component->children, &component->nchildren, child);
}

static void default_remove_child(struct starpu_sched_component *component, struct starpu_sched_component *child)
{
	_astro_component_links_drop(component->children, &component->nchildren, child);
}

static void default_add_parent(struct starpu_sched_component *component, struct starpu_sched_component *parent)
{
	for (unsigned i = 0; i < component->nparents; i++)
		if (component->parents[i] == parent)
			return;
	_astro_component_links_add(&component->parents, &component->nparents, parent);
}

static void default_remove_parent(struct starpu_sched_component *component, struct starpu_sched_component *parent)
{
	_astro_component_links_drop(component->parents, &component->nparents, parent);
}

/* The components' moments, for the trace's animation of the task flow (trace.html): reported
 * only when observed (the callers test ASTRO_OBSERVED first). */
static void report(enum astro_moment moment, const struct starpu_sched_component *component, const void *other,
		   struct starpu_task *task, unsigned nimpl)
{
	struct astro_event e = { .moment = moment, .workerid = starpu_worker_get_id(), .task = task,
				 .job_id = task ? starpu_task_get_job_id(task) : 0, .nimpl = nimpl,
				 .label = moment == ASTRO_MOMENT_COMPONENT_NEW ? component->name : NULL, .object = component,
				 .other_id = (unsigned long)(uintptr_t)other };
	astro_observe_report(&e);
}

void _astro_component_report_new(struct starpu_sched_component *component, int workerid)
{
	if (ASTRO_OBSERVED(ASTRO_MOMENT_COMPONENT_NEW))
		report(ASTRO_MOMENT_COMPONENT_NEW, component, NULL, NULL, workerid >= 0 ? (unsigned)workerid + 1 : 0);
}

struct starpu_sched_component *starpu_sched_component_create(struct starpu_sched_tree *tree, const char *name)
{
	struct starpu_sched_component *component = calloc(1, sizeof(*component));

	if (!component || !(component->name = strdup(name ? name : "component"))
	    || !(component->workers = starpu_bitmap_create()) || !(component->workers_in_ctx = starpu_bitmap_create()))
	{
		astro_log_error("sched_component", "cannot allocate component '%s'", name ? name : "component");
		if (component)
		{
			starpu_bitmap_destroy(component->workers);
			free(component->name);
			free(component);
		}
		return NULL;
	}
	component->tree = tree;
	component->add_child = starpu_sched_component_add_child;
	component->remove_child = default_remove_child;
	component->add_parent = default_add_parent;
	component->remove_parent = default_remove_parent;
	component->push_task = default_push_task;
	component->pull_task = starpu_sched_component_parents_pull_task;
	component->can_push = starpu_sched_component_can_push;
	component->can_pull = starpu_sched_component_can_pull;
	component->estimated_load = starpu_sched_component_estimated_load;
	component->estimated_end = starpu_sched_component_estimated_end_min;
	component->deinit_data = no_deinit_data;
	component->notify_change_workers = no_notify_change_workers;
	_astro_component_report_new(component, -1);
	return component;
}

struct starpu_sched_component *_astro_component_create_with_data(struct starpu_sched_tree *tree, const char *name, size_t size)
{
	struct starpu_sched_component *component = starpu_sched_component_create(tree, name);

	if (component && !(component->data = calloc(1, size)))
	{
		astro_log_error("sched_component", "cannot allocate the data of a %s component", name);
		starpu_sched_component_destroy(component);
		return NULL;
	}
	if (component)
		component->deinit_data = free_data;
	return component;
}

void starpu_sched_component_destroy(struct starpu_sched_component *component)
{
	if (!component)
		return;
	while (component->nchildren)
	{
		struct starpu_sched_component *child = component->children[0];

		component->remove_child(component, child);
		child->remove_parent(child, component);
	}
	while (component->nparents)
	{
		struct starpu_sched_component *parent = component->parents[0];

		component->remove_parent(component, parent);
		parent->remove_child(parent, component);
	}
	component->deinit_data(component);
	free(component->children);
	free(component->parents);
	starpu_bitmap_destroy(component->workers);
	starpu_bitmap_destroy(component->workers_in_ctx);
	free(component->name);
	free(component);
}

/* The components reachable from root, each once (a tree may share children). */
static void collect(struct starpu_sched_component *c, struct starpu_sched_component ***all, unsigned *n)
{
	for (unsigned i = 0; i < *n; i++)
		if ((*all)[i] == c)
			return;
	if (_astro_component_links_add(all, n, c))
		return;
	for (unsigned i = 0; i < c->nchildren; i++)
		collect(c->children[i], all, n);
}

void starpu_sched_component_destroy_rec(struct starpu_sched_component *component)
{
	struct starpu_sched_component **all = NULL;
	unsigned n = 0;

	if (!component)
		return;
	collect(component, &all, &n);
	for (unsigned i = 0; i < n; i++)
		if (!starpu_sched_component_is_worker(all[i]))
			starpu_sched_component_destroy(all[i]);
	free(all);
}

void starpu_sched_component_connect(struct starpu_sched_component *parent, struct starpu_sched_component *child)
{
	if (!parent || !child)
	{
		astro_log_error("sched_component", "starpu_sched_component_connect: %s component is NULL", parent ? "the child" : "the parent");
		return;
	}
	parent->add_child(parent, child);
	child->add_parent(child, parent);
	if (ASTRO_OBSERVED(ASTRO_MOMENT_COMPONENT_CONNECT))
		report(ASTRO_MOMENT_COMPONENT_CONNECT, parent, child, NULL, 0);
}

/* Observed: reported before, since once to has the task a worker may run it (and free it) at
 * once; a refusal is reported as the way back. Out of line, so that the unobserved push stays
 * a jump to the component's method. */
static __attribute__((noinline)) int push_observed(struct starpu_sched_component *from, struct starpu_sched_component *to,
						   struct starpu_task *task)
{
	report(ASTRO_MOMENT_COMPONENT_PUSH, to, from, task, 0);
	unsigned long job = starpu_task_get_job_id(task);
	int ret = to->push_task(to, task);
	if (ret)
	{
		struct astro_event e = { .moment = ASTRO_MOMENT_COMPONENT_PUSH, .workerid = starpu_worker_get_id(), .job_id = job,
					 .nimpl = 1, .object = from, .other_id = (unsigned long)(uintptr_t)to };
		astro_observe_report(&e);
	}
	return ret;
}

int starpu_sched_component_push_task(struct starpu_sched_component *from, struct starpu_sched_component *to, struct starpu_task *task)
{
	if (ASTRO_OBSERVED(ASTRO_MOMENT_COMPONENT_PUSH))
		return push_observed(from, to, task);
	return to->push_task(to, task);
}

/* Observed: the puller holds the task, alive until it pushes it on or its worker runs it. */
static __attribute__((noinline)) struct starpu_task *pull_observed(struct starpu_sched_component *from, struct starpu_sched_component *to)
{
	struct starpu_task *task = from->pull_task(from, to);
	if (task)
		report(ASTRO_MOMENT_COMPONENT_PULL, from, to, task, 0);
	return task;
}

struct starpu_task *starpu_sched_component_pull_task(struct starpu_sched_component *from, struct starpu_sched_component *to)
{
	if (ASTRO_OBSERVED(ASTRO_MOMENT_COMPONENT_PULL))
		return pull_observed(from, to);
	return from->pull_task(from, to);
}

struct starpu_task *starpu_sched_component_pump_to(struct starpu_sched_component *component, struct starpu_sched_component *to, int *success)
{
	struct starpu_task *task;

	while ((task = component->pull_task(component, to)))
	{
		if (starpu_sched_component_push_task(component, to, task))
			return task;
		if (success)
			*success = 1;
	}
	return NULL;
}

struct starpu_task *starpu_sched_component_pump_downstream(struct starpu_sched_component *component, int *success)
{
	for (unsigned i = 0; i < component->nchildren; i++)
	{
		struct starpu_task *task = starpu_sched_component_pump_to(component, component->children[i], success);

		if (task)
			return task;
	}
	return NULL;
}

int starpu_sched_component_can_execute_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	int bound = astro_sched_task_bound_worker(task);

	if (bound >= 0)
		return starpu_bitmap_get(component->workers_in_ctx, bound) && astro_sched_task_allowed_on(task, bound);
	for (int w = starpu_bitmap_first(component->workers_in_ctx); w >= 0; w = starpu_bitmap_next(component->workers_in_ctx, w))
		if (starpu_worker_can_execute_task((unsigned)w, task, 0) || starpu_worker_can_execute_task_first_impl((unsigned)w, task, NULL))
			return 1;
	/* A combined worker's id is no worker's: the kernel says whether its members can run task together. */
	return _astro_component_combined_can_execute(component, task);
}

int starpu_sched_component_execute_preds(struct starpu_sched_component *component, struct starpu_task *task, double *length)
{
	int can = 0;
	double best = INFINITY;

	for (int w = starpu_bitmap_first(component->workers_in_ctx); w >= 0; w = starpu_bitmap_next(component->workers_in_ctx, w))
		for (unsigned nimpl = 0; nimpl < STARPU_MAXIMPLEMENTATIONS; nimpl++)
		{
			/* w may be a combined worker's id (its component's): the kernel says whether its members can run task together. */
			if (!starpu_worker_can_execute_task((unsigned)w, task, nimpl)
			    && !((unsigned)w >= starpu_worker_get_count() && starpu_combined_worker_can_execute_task((unsigned)w, task, nimpl)))
				continue;
			double len = starpu_task_worker_expected_length(task, (unsigned)w, component->tree->sched_ctx_id, nimpl);

			can = 1;
			if (isnan(len))
			{
				/* A model to calibrate here: that is the prediction. */
				best = NAN;
				goto done;
			}
			if (len < best)
				best = len;
		}
done:
	if (length)
		*length = can ? (isinf(best) ? 0.0 : best) : INFINITY;
	return can;
}

double starpu_sched_component_transfer_length(struct starpu_sched_component *component, struct starpu_task *task)
{
	double sum = 0.0;
	int n = 0;

	if (!STARPU_TASK_GET_NBUFFERS(task))
		return 0.0;
	/* A combined worker's data goes where its members work. */
	if (starpu_sched_component_is_combined_worker(component))
		return starpu_task_expected_data_transfer_time(starpu_worker_get_memory_node((unsigned)_astro_component_combined_first(component)), task);
	for (int w = starpu_bitmap_first(component->workers_in_ctx); w >= 0; w = starpu_bitmap_next(component->workers_in_ctx, w), n++)
		sum += starpu_task_expected_data_transfer_time_for(task, (unsigned)w);
	return n ? sum / n : 0.0;
}

void starpu_sched_component_prefetch_on_node(struct starpu_sched_component *component, struct starpu_task *task)
{
	int first;

	/* With one memory node the data is where every worker runs. */
	if (starpu_memory_nodes_get_count() <= 1 || (first = starpu_bitmap_first(component->workers_in_ctx)) < 0 || !starpu_get_prefetch_flag())
		return;
	unsigned node = starpu_worker_get_memory_node((unsigned)first);
	for (int w = first; w >= 0; w = starpu_bitmap_next(component->workers_in_ctx, w))
		if (starpu_worker_get_memory_node((unsigned)w) != node)
			return;
	starpu_prefetch_task_input_on_node(task, node);
}

/* ------------------------------------------------------------- trees */

struct starpu_sched_tree *starpu_sched_tree_create(unsigned sched_ctx_id)
{
	struct _astro_modular_ctx *ctx = _astro_modular_ctx(sched_ctx_id);
	struct starpu_sched_tree *tree;

	if (!ctx)
		return NULL;
	if (ctx->tree)
	{
		astro_log_error("sched_component", "scheduling context %u already has a tree: destroy it first (starpu_sched_tree_destroy)", sched_ctx_id);
		return NULL;
	}
	tree = calloc(1, sizeof(*tree));
	if (!tree || !(tree->workers = starpu_bitmap_create()))
	{
		astro_log_error("sched_component", "cannot allocate the scheduling tree of context %u", sched_ctx_id);
		free(tree);
		return NULL;
	}
	tree->sched_ctx_id = sched_ctx_id;
	STARPU_PTHREAD_MUTEX_INIT(&tree->lock, NULL);
	ctx->tree = tree;
	return tree;
}

void starpu_sched_tree_destroy(struct starpu_sched_tree *tree)
{
	struct _astro_modular_ctx *ctx;

	if (!tree)
		return;
	ctx = _astro_modular_ctx(tree->sched_ctx_id);
	starpu_sched_component_destroy_rec(tree->root);
	for (int c = 0; c < STARPU_NMAX_COMBINEDWORKERS; c++)
		starpu_sched_component_destroy(ctx->combined[c]);
	for (int w = 0; w < STARPU_NMAXWORKERS; w++)
		starpu_sched_component_destroy(ctx->worker[w]);
	STARPU_PTHREAD_MUTEX_DESTROY(&tree->lock);
	starpu_bitmap_destroy(tree->workers);
	modular_ctx_free(tree->sched_ctx_id);
	free(tree);
}

void starpu_sched_tree_deinitialize(unsigned sched_ctx_id)
{
	starpu_sched_tree_destroy(starpu_sched_tree_get(sched_ctx_id));
	starpu_sched_ctx_set_policy_data(sched_ctx_id, NULL);
}

struct starpu_sched_tree *starpu_sched_tree_get(unsigned sched_ctx_id)
{
	struct _astro_modular_ctx *ctx = sched_ctx_id < STARPU_NMAX_SCHED_CTXS ? _astro_modular_ctx_find(sched_ctx_id) : NULL;

	return ctx ? ctx->tree : NULL;
}

/* Children first: a component's workers are its children's (a worker component's are set at its creation). */
static void update_workers(struct starpu_sched_component *c)
{
	if (starpu_sched_component_is_worker(c))
		return;
	starpu_bitmap_unset_all(c->workers);
	for (unsigned i = 0; i < c->nchildren; i++)
	{
		update_workers(c->children[i]);
		starpu_bitmap_or(c->workers, c->children[i]->workers);
	}
}

static void update_workers_in_ctx(struct starpu_sched_component *c, struct starpu_bitmap *in_ctx)
{
	for (unsigned i = 0; i < c->nchildren; i++)
		update_workers_in_ctx(c->children[i], in_ctx);
	starpu_bitmap_unset_and(c->workers_in_ctx, c->workers, in_ctx);
	c->notify_change_workers(c);
}

void starpu_sched_tree_update_workers(struct starpu_sched_tree *t)
{
	if (t && t->root)
		update_workers(t->root);
}

void starpu_sched_tree_update_workers_in_ctx(struct starpu_sched_tree *t)
{
	if (t && t->root)
		update_workers_in_ctx(t->root, t->workers);
}

void starpu_sched_tree_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct _astro_modular_ctx *ctx = _astro_modular_ctx(sched_ctx_id);
	struct starpu_sched_tree *tree = ctx ? ctx->tree : NULL;

	if (!tree)
	{
		astro_log_error("sched_component", "context %u has no scheduling tree: its init_sched must build one", sched_ctx_id);
		return;
	}
	STARPU_PTHREAD_MUTEX_LOCK(&tree->lock);
	for (unsigned i = 0; i < nworkers; i++)
		starpu_bitmap_set(tree->workers, workerids[i]);
	astro_sched_workers_add(&ctx->workers, workerids, nworkers);
	starpu_sched_tree_update_workers_in_ctx(tree);
	STARPU_PTHREAD_MUTEX_UNLOCK(&tree->lock);
}

void starpu_sched_tree_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct _astro_modular_ctx *ctx = _astro_modular_ctx(sched_ctx_id);
	struct starpu_sched_tree *tree = ctx ? ctx->tree : NULL;

	if (!tree)
		return;
	STARPU_PTHREAD_MUTEX_LOCK(&tree->lock);
	for (unsigned i = 0; i < nworkers; i++)
		starpu_bitmap_unset(tree->workers, workerids[i]);
	astro_sched_workers_remove(&ctx->workers, workerids, nworkers);
	starpu_sched_tree_update_workers_in_ctx(tree);
	STARPU_PTHREAD_MUTEX_UNLOCK(&tree->lock);
}

int starpu_sched_tree_push_task(struct starpu_task *task)
{
	unsigned sched_ctx_id = astro_sched_task_ctx(task);
	struct _astro_modular_ctx *ctx = _astro_modular_ctx_find(sched_ctx_id);
	int bound = astro_sched_task_bound_worker(task);
	int ret;

	if (!ctx || !ctx->tree || !ctx->tree->root)
	{
		astro_log_error("sched_component", "context %u has no scheduling tree with a root: task not pushed", sched_ctx_id);
		return -ENODEV;
	}
	starpu_push_task_end(task);
	/* A task bound to a worker needs no decision. */
	if (bound >= 0 && astro_sched_workers_contains(&ctx->workers, bound) && ctx->worker[bound])
		ret = starpu_sched_component_push_task(NULL, ctx->worker[bound], task);
	else if (bound >= 0 && (unsigned)bound >= starpu_worker_get_count() && (unsigned)bound - starpu_worker_get_count() < STARPU_NMAX_COMBINEDWORKERS
		 && ctx->combined[bound - starpu_worker_get_count()])
		/* Bound to a combined worker of the tree. */
		ret = starpu_sched_component_push_task(NULL, ctx->combined[bound - starpu_worker_get_count()], task);
	else
		ret = starpu_sched_component_push_task(NULL, ctx->tree->root, task);
	return ret ? -EAGAIN : 0;
}
