/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The modular-* policies: trees of scheduling components
 * (starpu_sched_component.h, components in libastrolabe), shaped as StarPU
 * 1.4 shapes them. Each policy is its tree; pushing, popping and the workers
 * are the tree's.
 */
#include <starpu_sched_component.h>
#include <astrolabe/plugin.h>

/* Tasks go down a queue above the decision, into the workers' (or limited queues' below, whose data is prefetched). */
#define ABOVE STARPU_SCHED_SIMPLE_FIFO_ABOVE
#define ABOVE_PRIO (STARPU_SCHED_SIMPLE_FIFO_ABOVE | STARPU_SCHED_SIMPLE_FIFO_ABOVE_PRIO)
#define BELOW (STARPU_SCHED_SIMPLE_FIFOS_BELOW | STARPU_SCHED_SIMPLE_FIFOS_BELOW_READY)
#define BELOW_PRIO (BELOW | STARPU_SCHED_SIMPLE_FIFOS_BELOW_PRIO)
#define WORKERS (STARPU_SCHED_SIMPLE_DECIDE_WORKERS | STARPU_SCHED_SIMPLE_IMPL)
#define MODELS (STARPU_SCHED_SIMPLE_PERFMODEL | ABOVE_PRIO | BELOW_PRIO | STARPU_SCHED_SIMPLE_IMPL)

static void eager_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_eager_create, NULL, WORKERS | ABOVE, ctx);
}

static void eager_prefetching_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_eager_create, NULL, WORKERS | ABOVE | BELOW, ctx);
}

static void prio_prefetching_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_eager_create, NULL, WORKERS | ABOVE_PRIO | BELOW_PRIO, ctx);
}

static void random_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_random_create, NULL, WORKERS | ABOVE, ctx);
}

static void random_prio_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_random_create, NULL, WORKERS | ABOVE_PRIO, ctx);
}

static void ws_init(unsigned ctx)
{
	struct starpu_sched_tree *t = starpu_sched_tree_create(ctx);

	if (!t || !(t->root = starpu_sched_component_work_stealing_create(t, NULL)))
		return;
	for (unsigned w = 0; w < starpu_worker_get_count(); w++)
		starpu_sched_component_connect(t->root, starpu_sched_component_worker_get(ctx, (int)w));
	starpu_sched_tree_update_workers(t);
	starpu_sched_ctx_set_policy_data(ctx, t);
}

static void heft_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler((starpu_sched_component_create_t)starpu_sched_component_mct_create, NULL,
							   STARPU_SCHED_SIMPLE_DECIDE_WORKERS | MODELS, ctx);
}

/* One decision per memory node, the node's workers sharing its queue; with one node, modular-prio. */
static void heft_prio_init(unsigned ctx)
{
	if (starpu_memory_nodes_get_count() <= 1)
		starpu_initialize_prio_center_policy(ctx);
	else
		starpu_sched_component_initialize_simple_scheduler((starpu_sched_component_create_t)starpu_sched_component_mct_create, NULL,
								   STARPU_SCHED_SIMPLE_DECIDE_MEMNODES | MODELS, ctx);
}

static void heft2_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler((starpu_sched_component_create_t)starpu_sched_component_heft_create, NULL,
							   STARPU_SCHED_SIMPLE_DECIDE_WORKERS | MODELS, ctx);
}

static void heteroprio_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler((starpu_sched_component_create_t)starpu_sched_component_heteroprio_create, NULL,
							   STARPU_SCHED_SIMPLE_DECIDE_WORKERS | MODELS, ctx);
}

/* Two decisions, heteroprio (the default) and heft: a task's sched_data (STARPU_TASK_SCHED_DATA) chooses, 1 for heft. */
static void heteroprio_heft_init(unsigned ctx)
{
	struct starpu_sched_component_heteroprio_data heteroprio = { .mct = NULL, .batch = 1 };

	starpu_sched_component_initialize_simple_schedulers(ctx, 2,
							    (starpu_sched_component_create_t)starpu_sched_component_heteroprio_create, &heteroprio,
							    STARPU_SCHED_SIMPLE_DECIDE_WORKERS | BELOW | STARPU_SCHED_SIMPLE_IMPL,
							    (starpu_sched_component_create_t)starpu_sched_component_heft_create, NULL,
							    STARPU_SCHED_SIMPLE_DECIDE_WORKERS | ABOVE_PRIO | BELOW_PRIO | STARPU_SCHED_SIMPLE_IMPL);
}

/* Random among the workers and the combined workers: a parallel task may get several cores at once. */
static void prandom_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_random_create, NULL,
							   WORKERS | STARPU_SCHED_SIMPLE_COMBINED_WORKERS | ABOVE | STARPU_SCHED_SIMPLE_FIFOS_BELOW, ctx);
}

static void prandom_prio_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_random_create, NULL,
							   WORKERS | STARPU_SCHED_SIMPLE_COMBINED_WORKERS | ABOVE | STARPU_SCHED_SIMPLE_FIFOS_BELOW
							   | STARPU_SCHED_SIMPLE_FIFOS_BELOW_PRIO, ctx);
}

/* modular-heft's tree, the combined workers among the choices. */
static void pheft_init(unsigned ctx)
{
	starpu_sched_component_initialize_simple_scheduler((starpu_sched_component_create_t)starpu_sched_component_mct_create, NULL,
							   STARPU_SCHED_SIMPLE_DECIDE_WORKERS | STARPU_SCHED_SIMPLE_COMBINED_WORKERS | MODELS, ctx);
}

#define MODULAR_POLICY(ident, name, init, push, description) \
	static struct starpu_sched_policy ident = \
	{ \
		.init_sched = init, \
		.deinit_sched = starpu_sched_tree_deinitialize, \
		.add_workers = starpu_sched_tree_add_workers, \
		.remove_workers = starpu_sched_tree_remove_workers, \
		.push_task = push, \
		.pop_task = starpu_sched_tree_pop_task, \
		.pre_exec_hook = starpu_sched_component_worker_pre_exec_hook, \
		.post_exec_hook = starpu_sched_component_worker_post_exec_hook, \
		.policy_name = name, \
		.policy_description = description, \
		.worker_type = STARPU_WORKER_LIST, \
	}

MODULAR_POLICY(modular_eager, "modular-eager", eager_init, starpu_sched_tree_push_task, "eager modular policy");
MODULAR_POLICY(modular_eager_prefetching, "modular-eager-prefetching", eager_prefetching_init, starpu_sched_tree_push_task,
	       "eager with prefetching modular policy");
MODULAR_POLICY(modular_prio, "modular-prio", starpu_initialize_prio_center_policy, starpu_sched_tree_push_task, "prio modular policy");
MODULAR_POLICY(modular_prio_prefetching, "modular-prio-prefetching", prio_prefetching_init, starpu_sched_tree_push_task,
	       "prio prefetching modular policy");
MODULAR_POLICY(modular_random, "modular-random", random_init, starpu_sched_tree_push_task, "random modular policy");
MODULAR_POLICY(modular_random_prio, "modular-random-prio", random_prio_init, starpu_sched_tree_push_task, "random-prio modular policy");
MODULAR_POLICY(modular_ws, "modular-ws", ws_init, starpu_sched_tree_work_stealing_push_task, "work stealing modular policy");
MODULAR_POLICY(modular_heft, "modular-heft", heft_init, starpu_sched_tree_push_task, "heft modular policy");
MODULAR_POLICY(modular_heft_prio, "modular-heft-prio", heft_prio_init, starpu_sched_tree_push_task, "heft+prio modular policy");
MODULAR_POLICY(modular_heft2, "modular-heft2", heft2_init, starpu_sched_tree_push_task, "heft modular2 policy");
MODULAR_POLICY(modular_heteroprio, "modular-heteroprio", heteroprio_init, starpu_sched_tree_push_task, "heteroprio modular policy");
MODULAR_POLICY(modular_heteroprio_heft, "modular-heteroprio-heft", heteroprio_heft_init, starpu_sched_tree_push_task,
	       "heteroprio+heft modular policy");
MODULAR_POLICY(modular_pheft, "modular-pheft", pheft_init, starpu_sched_tree_push_task, "parallel heft modular policy");
MODULAR_POLICY(modular_prandom, "modular-prandom", prandom_init, starpu_sched_tree_push_task, "prandom modular policy");
MODULAR_POLICY(modular_prandom_prio, "modular-prandom-prio", prandom_prio_init, starpu_sched_tree_push_task, "prandom-prio modular policy");

static struct starpu_sched_policy *modular_policies[] =
{
	&modular_eager, &modular_eager_prefetching, &modular_prio, &modular_prio_prefetching, &modular_random,
	&modular_random_prio, &modular_ws, &modular_heft, &modular_heft_prio, &modular_heft2, &modular_heteroprio,
	&modular_heteroprio_heft, &modular_prandom, &modular_prandom_prio, &modular_pheft,
};

static int init(void)
{
	for (unsigned i = 0; i < sizeof(modular_policies) / sizeof(modular_policies[0]); i++)
	{
		int ret = astro_sched_policy_register(modular_policies[i]);

		if (ret)
			return ret;
	}
	return 0;
}

ASTRO_PLUGIN_DEFINE(sched_modular, ASTRO_PLUGIN_SCHED, "modular-*: policies made of scheduling components", init, NULL);
