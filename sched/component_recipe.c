/*
 * Trees from a specification (starpu_sched_component_make_scheduler): a
 * recipe is a list of component constructors, each instance placed under the
 * previous one; the specification gives a recipe per level of the machine.
 *
 *   machine recipe (the root, required)
 *   [memory node recipe, one instance per RAM node of the workers]
 *   [worker recipe, one instance above each worker]
 *   worker components
 *
 * Workers of different kinds get separate memory-node instances unless
 * mix_heterogeneous_workers is set. The socket and cache levels are refused
 * with a message: the tree groups workers by memory node only.
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

struct starpu_sched_component *starpu_sched_component_composed_component_create(struct starpu_sched_tree *tree, struct starpu_sched_component_composed_recipe *recipe)
{
	if (!recipe || recipe->nsteps != 1)
	{
		astro_log_error("sched_component", "starpu_sched_component_composed_component_create: only a recipe of one component is supported (this one has %u); "
				"connect the components yourself (starpu_sched_component_connect) or build the tree with starpu_sched_component_make_scheduler",
				recipe ? recipe->nsteps : 0);
		return NULL;
	}
	return recipe->steps[0].create(tree, recipe->steps[0].arg);
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

static int build(struct starpu_sched_tree *tree, const struct starpu_sched_component_specs *s)
{
	struct starpu_sched_component *machine = instantiate(tree, NULL, s->hwloc_machine_composed_sched_component, "machine");
	unsigned nworkers = starpu_worker_get_count();
	int done[STARPU_NMAXWORKERS] = { 0 };

	if (!machine)
		return -1;
	for (unsigned w = 0; w < nworkers && w < STARPU_NMAXWORKERS; w++)
	{
		struct starpu_sched_component *parent = machine;
		int group = group_of((int)w, s->mix_heterogeneous_workers);

		if (done[w])
			continue;
		if (s->hwloc_component_composed_sched_component
		    && !(parent = instantiate(tree, machine, s->hwloc_component_composed_sched_component, "memory node")))
			return -1;
		/* Without a memory-node level, every worker goes under the machine: one group. */
		for (unsigned v = w; v < nworkers; v++)
			if (!s->hwloc_component_composed_sched_component || group_of((int)v, s->mix_heterogeneous_workers) == group)
			{
				if (attach_worker(tree, parent, (int)v, s) < 0)
					return -1;
				done[v] = 1;
			}
	}
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
	if (s.hwloc_socket_composed_sched_component || s.hwloc_cache_composed_sched_component)
	{
		astro_log_error("sched_component", "starpu_sched_component_make_scheduler: socket and cache levels are not supported (workers are grouped by memory node only); "
				"set hwloc_socket_composed_sched_component and hwloc_cache_composed_sched_component to NULL");
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
