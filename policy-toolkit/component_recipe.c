/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Trees from a specification (starpu_sched_component_make_scheduler): a
 * recipe is a list of component constructors, each instance placed under the
 * previous one; the specification gives a recipe per level of the machine.
 *
 *   machine recipe (the root, required)
 *   [memory node recipe, one instance per RAM node of the workers]
 *   [socket recipe, one instance per package (hwloc) of the CPU workers' processing units]
 *   [cache recipe, one instance per last-level cache of those]
 *   [worker recipe, one instance above each worker]
 *   worker components
 *
 * Workers of different kinds get separate memory-node instances unless
 * mix_heterogeneous_workers is set. A level without a recipe is left out, its
 * workers going under the level above; so are the socket and cache levels
 * for the workers without a processing unit (devices, unbound CPU workers).
 *
 * A composed component (a recipe of several steps as one component) is made
 * here too.
 */
#include <stdlib.h>
#include "component.h"

struct recipe_step
{
	starpu_sched_component_create_t create;
	void *arg;
};

struct starpu_sched_component_composed_recipe
{
	unsigned nsteps;
	struct recipe_step *steps;
};

struct starpu_sched_component_composed_recipe *starpu_sched_component_composed_recipe_create(void)
{
	struct starpu_sched_component_composed_recipe *recipe = calloc(1, sizeof(*recipe));

	if (!recipe)
		astro_log_error("sched_component", "out of memory making a component recipe");
	return recipe;
}

struct starpu_sched_component_composed_recipe *starpu_sched_component_composed_recipe_create_singleton(starpu_sched_component_create_t create_component, void *arg)
{
	struct starpu_sched_component_composed_recipe *recipe = starpu_sched_component_composed_recipe_create();

	if (recipe)
		starpu_sched_component_composed_recipe_add(recipe, create_component, arg);
	return recipe;
}

void starpu_sched_component_composed_recipe_add(struct starpu_sched_component_composed_recipe *recipe, starpu_sched_component_create_t create_component, void *arg)
{
	struct recipe_step *steps;

	if (!recipe || !create_component)
	{
		astro_log_error("sched_component", "starpu_sched_component_composed_recipe_add: %s is NULL, nothing added",
				recipe ? "create_component" : "recipe");
		return;
	}
	steps = realloc(recipe->steps, (recipe->nsteps + 1) * sizeof(*steps));
	if (!steps)
	{
		astro_log_error("sched_component", "out of memory adding a step to a component recipe, nothing added");
		return;
	}
	steps[recipe->nsteps++] = (struct recipe_step){ create_component, arg };
	recipe->steps = steps;
}

void starpu_sched_component_composed_recipe_destroy(struct starpu_sched_component_composed_recipe *recipe)
{
	if (!recipe)
		return;
	free(recipe->steps);
	free(recipe);
}

/* ------------------------------------------------- composed component */

/* A recipe of several steps as one component: its parents push into the chain's top and the top
 * pulls from them; the chain's bottom pushes to its children, which pull from it. The chain's
 * components are reached through the composed one only (the tree's walks stop there). */
struct composed
{
	struct starpu_sched_component *top, *bottom;
};

static int composed_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	struct composed *c = component->data;

	return starpu_sched_component_push_task(component, c->top, task);
}

static struct starpu_task *composed_pull_task(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	struct composed *c = component->data;

	return starpu_sched_component_pull_task(c->bottom, to);
}

static int composed_can_push(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
	struct composed *c = component->data;

	return c->bottom->can_push(c->bottom, to);
}

static int composed_can_pull(struct starpu_sched_component *component)
{
	struct composed *c = component->data;

	return c->top->can_pull(c->top);
}

static double composed_estimated_end(struct starpu_sched_component *component)
{
	struct composed *c = component->data;

	return c->top->estimated_end(c->top);
}

static double composed_estimated_load(struct starpu_sched_component *component)
{
	struct composed *c = component->data;

	return c->top->estimated_load(c->top);
}

static void composed_add_child(struct starpu_sched_component *component, struct starpu_sched_component *child)
{
	struct composed *c = component->data;

	starpu_sched_component_add_child(component, child);
	c->bottom->add_child(c->bottom, child);
}

static void composed_remove_child(struct starpu_sched_component *component, struct starpu_sched_component *child)
{
	struct composed *c = component->data;

	c->bottom->remove_child(c->bottom, child);
	_astro_component_links_drop(component->children, &component->nchildren, child);
}

static void composed_add_parent(struct starpu_sched_component *component, struct starpu_sched_component *parent)
{
	struct composed *c = component->data;

	for (unsigned i = 0; i < component->nparents; i++)
		if (component->parents[i] == parent)
			return;
	if (_astro_component_links_add(&component->parents, &component->nparents, parent) == 0)
		c->top->add_parent(c->top, parent);
}

static void composed_remove_parent(struct starpu_sched_component *component, struct starpu_sched_component *parent)
{
	struct composed *c = component->data;

	c->top->remove_parent(c->top, parent);
	_astro_component_links_drop(component->parents, &component->nparents, parent);
}

/* The chain serves the composed component's workers, bottom first (children before parents). */
static void composed_notify_change_workers(struct starpu_sched_component *component)
{
	struct composed *c = component->data;
	struct starpu_sched_component *chain[64];
	unsigned n = 0;

	for (struct starpu_sched_component *step = c->top; step && n < 64; step = step == c->bottom ? NULL : step->children[0])
		chain[n++] = step;
	while (n--)
	{
		starpu_bitmap_unset_all(chain[n]->workers);
		starpu_bitmap_or(chain[n]->workers, component->workers);
		starpu_bitmap_unset_and(chain[n]->workers_in_ctx, component->workers, component->workers_in_ctx);
		chain[n]->notify_change_workers(chain[n]);
	}
}

/* Unlinks the chain from the composed component's neighbours (they do not know it), then destroys it. */
static void composed_deinit_data(struct starpu_sched_component *component)
{
	struct composed *c = component->data;
	struct starpu_sched_component *step = c->top;

	c->bottom->nchildren = 0;
	c->top->nparents = 0;
	while (step)
	{
		struct starpu_sched_component *next = step == c->bottom ? NULL : step->children[0];

		starpu_sched_component_destroy(step);
		step = next;
	}
	free(c);
}

struct starpu_sched_component *starpu_sched_component_composed_component_create(struct starpu_sched_tree *tree, struct starpu_sched_component_composed_recipe *recipe)
{
	struct starpu_sched_component *component, *top = NULL, *bottom = NULL;
	struct composed *c;

	if (!recipe || !recipe->nsteps)
	{
		astro_log_error("sched_component", "starpu_sched_component_composed_component_create: %s: add components to it first",
				recipe ? "the recipe is empty" : "recipe is NULL");
		return NULL;
	}
	if (recipe->nsteps == 1)
		return recipe->steps[0].create(tree, recipe->steps[0].arg);
	if (recipe->nsteps > 64)
	{
		astro_log_error("sched_component", "starpu_sched_component_composed_component_create: a recipe of %u steps is too long (at most 64)", recipe->nsteps);
		return NULL;
	}
	for (unsigned i = 0; i < recipe->nsteps; i++)
	{
		struct starpu_sched_component *step = recipe->steps[i].create(tree, recipe->steps[i].arg);

		if (!step)
		{
			astro_log_error("sched_component", "starpu_sched_component_composed_component_create: step %u of the recipe could not be made", i);
			goto fail;
		}
		if (bottom)
			starpu_sched_component_connect(bottom, step);
		else
			top = step;
		bottom = step;
	}
	component = _astro_component_create_with_data(tree, "composed", sizeof(*c));
	if (!component)
		goto fail;
	c = component->data;
	c->top = top;
	c->bottom = bottom;
	component->push_task = composed_push_task;
	component->pull_task = composed_pull_task;
	component->can_push = composed_can_push;
	component->can_pull = composed_can_pull;
	component->estimated_end = composed_estimated_end;
	component->estimated_load = composed_estimated_load;
	component->add_child = composed_add_child;
	component->remove_child = composed_remove_child;
	component->add_parent = composed_add_parent;
	component->remove_parent = composed_remove_parent;
	component->notify_change_workers = composed_notify_change_workers;
	component->deinit_data = composed_deinit_data;
	component->properties = top->properties & bottom->properties;
	return component;
fail:
	starpu_sched_component_destroy_rec(top);
	return NULL;
}

/* Makes recipe's components under parent (the tree's root when parent is NULL), each under the previous one; returns the lowest, NULL with a message on failure. */
static struct starpu_sched_component *instantiate(struct starpu_sched_tree *tree, struct starpu_sched_component *parent,
						  const struct starpu_sched_component_composed_recipe *recipe, const char *level)
{
	if (!recipe->nsteps)
	{
		astro_log_error("sched_component", "starpu_sched_component_make_scheduler: the %s recipe is empty: add components to it or leave it NULL", level);
		return NULL;
	}
	for (unsigned i = 0; i < recipe->nsteps; i++)
	{
		struct starpu_sched_component *component = recipe->steps[i].create(tree, recipe->steps[i].arg);

		if (!component)
		{
			astro_log_error("sched_component", "starpu_sched_component_make_scheduler: component %u of the %s recipe could not be made", i, level);
			return NULL;
		}
		if (parent)
			starpu_sched_component_connect(parent, component);
		else
			tree->root = component;
		parent = component;
	}
	return parent;
}

/* The memory-node group of a worker: its RAM node (main RAM for a device), and its kind unless kinds mix. */
static int group_of(int workerid, int mix)
{
	unsigned node = starpu_worker_get_memory_node((unsigned)workerid);
	int ram = starpu_node_get_kind(node) == STARPU_CPU_RAM ? (int)node : STARPU_MAIN_RAM;

	return mix ? ram : ram * STARPU_NARCH + (int)starpu_worker_get_type(workerid);
}

/* Puts above workerid the instance of its kind's worker recipe (if any) and connects the whole under parent. */
static int attach_worker(struct starpu_sched_tree *tree, struct starpu_sched_component *parent, int workerid,
			 const struct starpu_sched_component_specs *s)
{
	struct starpu_sched_component *worker = starpu_sched_component_worker_get(tree->sched_ctx_id, workerid);
	struct starpu_sched_component_composed_recipe *recipe =
		s->worker_composed_sched_component ? s->worker_composed_sched_component(starpu_worker_get_type(workerid)) : NULL;

	if (!worker)
		return -1;
	if (recipe)
	{
		parent = instantiate(tree, parent, recipe, "worker");
		starpu_sched_component_composed_recipe_destroy(recipe);
		if (!parent)
			return -1;
	}
	starpu_sched_component_connect(parent, worker);
	return 0;
}

/* The levels of the machine under its root, outermost first, each made only when its recipe is given. */
enum level
{
	LEVEL_MEMORY_NODE,
	LEVEL_SOCKET,
	LEVEL_CACHE,
	NLEVELS
};

static const char *const level_names[NLEVELS] = { "memory node", "socket", "cache" };

/* The hwloc object of the processing unit of a CPU worker; NULL for a device or an unbound worker. */
static hwloc_obj_t pu_of(int workerid)
{
	hwloc_topology_t topo = starpu_get_hwloc_topology();
	int bindid = starpu_worker_get_bindid(workerid);

	if (!topo || bindid < 0 || starpu_worker_get_type(workerid) != STARPU_CPU_WORKER)
		return NULL;
	return hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)bindid);
}

/* Equal for the workers that share an instance of level, -1 for a worker that level skips (it goes on under the level above). */
static long long key_of(enum level level, int workerid, int mix)
{
	hwloc_obj_t obj, last_cache = NULL;

	switch (level)
	{
	case LEVEL_MEMORY_NODE:
		return group_of(workerid, mix);
	case LEVEL_SOCKET:
		obj = pu_of(workerid);
		obj = obj ? hwloc_get_ancestor_obj_by_type(starpu_get_hwloc_topology(), HWLOC_OBJ_PACKAGE, obj) : NULL;
		return obj ? (long long)obj->logical_index : -1;
	default:
		/* The outermost cache above the worker's processing unit: its last-level cache. */
		for (obj = pu_of(workerid); obj; obj = obj->parent)
			if (hwloc_obj_type_is_cache(obj->type))
				last_cache = obj;
		return last_cache ? (long long)last_cache->gp_index : -1;
	}
}

/* Builds the levels from level down for the n workers members under parent: one instance of the
 * level's recipe per group of workers, the workers the level skips straight under parent. */
static int build_level(struct starpu_sched_tree *tree, struct starpu_sched_component *parent, unsigned level, const int *members,
		       unsigned n, const struct starpu_sched_component_specs *s, struct starpu_sched_component_composed_recipe *const *recipes)
{
	if (level == NLEVELS)
	{
		for (unsigned i = 0; i < n; i++)
			if (attach_worker(tree, parent, members[i], s) < 0)
				return -1;
		return 0;
	}
	if (!recipes[level])
		return build_level(tree, parent, level + 1, members, n, s, recipes);

	long long key[n];
	int group[n];
	unsigned nskipped = 0;

	for (unsigned i = 0; i < n; i++)
		if ((key[i] = key_of((enum level)level, members[i], s->mix_heterogeneous_workers)) < 0)
			group[nskipped++] = members[i];
	if (nskipped && build_level(tree, parent, level + 1, group, nskipped, s, recipes) < 0)
		return -1;
	for (unsigned i = 0; i < n; i++)
	{
		unsigned ngroup = 0;
		long long k = key[i];

		if (k < 0)
			continue;
		for (unsigned j = i; j < n; j++)
			if (key[j] == k)
			{
				group[ngroup++] = members[j];
				key[j] = -1;
			}
		struct starpu_sched_component *instance = instantiate(tree, parent, recipes[level], level_names[level]);
		if (!instance || build_level(tree, instance, level + 1, group, ngroup, s, recipes) < 0)
			return -1;
	}
	return 0;
}

static int build(struct starpu_sched_tree *tree, const struct starpu_sched_component_specs *s)
{
	struct starpu_sched_component *machine = instantiate(tree, NULL, s->hwloc_machine_composed_sched_component, "machine");
	struct starpu_sched_component_composed_recipe *const recipes[NLEVELS] =
	{
		s->hwloc_component_composed_sched_component, s->hwloc_socket_composed_sched_component, s->hwloc_cache_composed_sched_component,
	};
	unsigned nworkers = starpu_worker_get_count() < STARPU_NMAXWORKERS ? starpu_worker_get_count() : STARPU_NMAXWORKERS;
	int members[STARPU_NMAXWORKERS];

	if (!machine)
		return -1;
	for (unsigned w = 0; w < nworkers; w++)
		members[w] = (int)w;
	if (build_level(tree, machine, 0, members, nworkers, s, recipes) < 0)
		return -1;
	starpu_sched_tree_update_workers(tree);
	return 0;
}

struct starpu_sched_tree *starpu_sched_component_make_scheduler(unsigned sched_ctx_id, struct starpu_sched_component_specs s)
{
	struct starpu_sched_tree *tree;

	if (!s.hwloc_machine_composed_sched_component)
	{
		astro_log_error("sched_component", "starpu_sched_component_make_scheduler: hwloc_machine_composed_sched_component is NULL; it is the root of the tree and must be given");
		return NULL;
	}
	tree = starpu_sched_tree_create(sched_ctx_id);
	if (!tree)
		return NULL;
	if (build(tree, &s) < 0)
	{
		starpu_sched_tree_destroy(tree);
		return NULL;
	}
	return tree;
}
