/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Simple modular schedulers (starpu_sched_component_initialize_simple_scheduler):
 * a tree built around decision components from STARPU_SCHED_SIMPLE_* flags.
 *
 *   [userchoice: with several decisions, the task's sched_data chooses]
 *   [fifo or prio above]                         STARPU_SCHED_SIMPLE_FIFO_ABOVE(_PRIO)
 *   [perfmodel_select -> decision | eager calibration | eager]    ..._PERFMODEL
 *   decision component(s), one choice per worker, memory node or architecture
 *   [fifo or prio below each choice, limited]    ..._FIFOS_BELOW(_PRIO, _READY)
 *   [work stealing, or eager, among a choice's workers]   ..._WS_BELOW
 *   [stage: with several decisions, where theirs meet for each choice]
 *   [best_implementation above each worker]      ..._IMPL
 *   worker components
 */
#include <stdarg.h>
#include <stdlib.h>
#include "component.h"

#define NTASKS_THRESHOLD_DEFAULT 30
#define EXP_LEN_THRESHOLD_DEFAULT 1000000000.0

struct decision
{
	starpu_sched_component_create_t create;
	void *data;
	unsigned flags;
};

/* The choice a worker belongs to, as the decision flags group workers (a combined worker: as its first member, unless it is a choice itself). */
static int choice_of(unsigned flags, int workerid)
{
	if ((unsigned)workerid >= starpu_worker_get_count() && (flags & STARPU_SCHED_SIMPLE_DECIDE_MASK) != STARPU_SCHED_SIMPLE_DECIDE_WORKERS)
	{
		int size, *members;

		if (starpu_combined_worker_get_description(workerid, &size, &members) == 0)
			workerid = members[0];
	}
	switch (flags & STARPU_SCHED_SIMPLE_DECIDE_MASK)
	{
	case STARPU_SCHED_SIMPLE_DECIDE_MEMNODES:
		return (int)starpu_worker_get_memory_node((unsigned)workerid);
	case STARPU_SCHED_SIMPLE_DECIDE_ARCHS:
		return (int)starpu_worker_get_type(workerid);
	default:
		return workerid;
	}
}

/* What sits above a worker: its best_implementation component (IMPL) or the worker itself. */
static struct starpu_sched_component *worker_top(struct starpu_sched_tree *t, unsigned flags, int workerid,
						 struct starpu_sched_component **impl)
{
	struct starpu_sched_component *worker = starpu_sched_component_worker_get(t->sched_ctx_id, workerid);

	/* The implementation of a parallel task is the kernel's choice, on its combined worker. */
	if (!worker || !(flags & STARPU_SCHED_SIMPLE_IMPL) || (unsigned)workerid >= starpu_worker_get_count())
		return worker;
	if (!impl[workerid] && (impl[workerid] = starpu_sched_component_best_implementation_create(t, NULL)))
		starpu_sched_component_connect(impl[workerid], worker);
	return impl[workerid];
}

static struct starpu_sched_component *queue_create(struct starpu_sched_tree *t, int prio, unsigned ntasks, double exp_len, int ready)
{
	struct starpu_sched_component_prio_data d = { .ntasks_threshold = ntasks, .exp_len_threshold = exp_len, .ready = ready };

	return prio ? starpu_sched_component_prio_create(t, &d)
		    : starpu_sched_component_fifo_create(t, (struct starpu_sched_component_fifo_data *)&d);
}

/* Connects decision to one component per choice, each over the workers of that choice (and the combined workers, with
 * STARPU_SCHED_SIMPLE_COMBINED_WORKERS: ids from starpu_worker_get_count() on). */
static void connect_choices(struct starpu_sched_tree *t, struct starpu_sched_component *decision, unsigned flags,
			    struct starpu_sched_component **impl, struct starpu_sched_component **stage)
{
	unsigned nworkers = starpu_worker_get_count() < STARPU_NMAXWORKERS ? starpu_worker_get_count() : STARPU_NMAXWORKERS;
	int done[STARPU_NMAXWORKERS + STARPU_NMAX_COMBINEDWORKERS] = { 0 };
	unsigned ntasks = (unsigned)starpu_get_env_number_default("STARPU_NTASKS_THRESHOLD", NTASKS_THRESHOLD_DEFAULT);
	double exp_len = starpu_get_env_float_default("STARPU_EXP_LEN_THRESHOLD", EXP_LEN_THRESHOLD_DEFAULT);

	if (flags & STARPU_SCHED_SIMPLE_COMBINED_WORKERS)
		nworkers += starpu_combined_worker_get_count();
	for (unsigned w = 0; w < nworkers; w++)
	{
		int choice = choice_of(flags, (int)w);
		struct starpu_sched_component *top = decision;

		if (done[w])
			continue;
		/* A combined worker takes a task at once, as StarPU's: no queue in front of it. */
		if ((flags & STARPU_SCHED_SIMPLE_FIFOS_BELOW) && !((flags & STARPU_SCHED_SIMPLE_DECIDE_MASK) == STARPU_SCHED_SIMPLE_DECIDE_WORKERS
								   && w >= starpu_worker_get_count()))
		{
			struct starpu_sched_component *below = queue_create(t, flags & STARPU_SCHED_SIMPLE_FIFOS_BELOW_PRIO, ntasks, exp_len,
									   flags & STARPU_SCHED_SIMPLE_FIFOS_BELOW_READY);
			if (!below)
				return;
			starpu_sched_component_connect(top, below);
			top = below;
		}
		/* Several workers behind one choice share it through work stealing or eagerly. */
		int shared = 0;
		for (unsigned v = w + 1; v < nworkers; v++)
			shared |= choice_of(flags, (int)v) == choice;
		if (shared)
		{
			struct starpu_sched_component *spread = flags & STARPU_SCHED_SIMPLE_WS_BELOW ? starpu_sched_component_work_stealing_create(t, NULL)
												    : starpu_sched_component_eager_create(t, NULL);
			if (!spread)
				return;
			starpu_sched_component_connect(top, spread);
			top = spread;
		}
		/* With several decisions, theirs meet at the choice's stage, above its workers. */
		if (stage)
		{
			int made = stage[w] != NULL;

			/* A stage takes from its parents in their order and gives to a worker below that can run the task: eager does both. */
			if (!made && !(stage[w] = starpu_sched_component_eager_create(t, NULL)))
				return;
			starpu_sched_component_connect(top, stage[w]);
			if (made)
			{
				for (unsigned v = w; v < nworkers; v++)
					done[v] |= choice_of(flags, (int)v) == choice;
				continue;
			}
			top = stage[w];
		}
		for (unsigned v = w; v < nworkers; v++)
			if (choice_of(flags, (int)v) == choice)
			{
				struct starpu_sched_component *leaf = worker_top(t, flags, (int)v, impl);

				if (leaf)
					starpu_sched_component_connect(top, leaf);
				done[v] = 1;
			}
	}
}

/* ------------------------------------------------------------- userchoice */

/* The root of a tree of several decisions: a task goes to the decision its sched_data names (0 by default). */
static int userchoice_push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
	uintptr_t target = (uintptr_t)task->sched_data;

	if (target >= component->nchildren)
	{
		astro_log_error("sched_component", "task '%s' asks (sched_data) for decision %lu of %u: it goes to decision 0 (set STARPU_TASK_SCHED_DATA "
				"to 0..%u)", starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)", (unsigned long)target,
				component->nchildren, component->nchildren - 1);
		target = 0;
	}
	return starpu_sched_component_push_task(component, component->children[target], task);
}

/* The flags that shape what lies under the decisions: they must agree among several decisions. */
#define SHARED_FLAGS (STARPU_SCHED_SIMPLE_DECIDE_MASK | STARPU_SCHED_SIMPLE_COMBINED_WORKERS | STARPU_SCHED_SIMPLE_IMPL)

/* Puts above decision its calibration: perfmodel_select sends tasks whose model calibrates, or that have none, to
 * eager components over the workers (their implementation chosen). Returns the entry, NULL when it cannot be made. */
static struct starpu_sched_component *with_perfmodel(struct starpu_sched_tree *t, struct starpu_sched_component *decision,
						     struct starpu_sched_component **impl, unsigned flags)
{
	struct starpu_sched_component_perfmodel_select_data d =
	{
		.calibrator_component = starpu_sched_component_eager_calibration_create(t, NULL),
		.no_perfmodel_component = starpu_sched_component_eager_create(t, NULL),
		.perfmodel_component = decision,
	};
	struct starpu_sched_component *entry = starpu_sched_component_perfmodel_select_create(t, &d);

	if (!entry || !d.calibrator_component || !d.no_perfmodel_component)
		return NULL;
	starpu_sched_component_connect(entry, d.perfmodel_component);
	starpu_sched_component_connect(entry, d.calibrator_component);
	starpu_sched_component_connect(entry, d.no_perfmodel_component);
	for (unsigned w = 0; w < starpu_worker_get_count() && w < STARPU_NMAXWORKERS; w++)
	{
		struct starpu_sched_component *leaf = worker_top(t, STARPU_SCHED_SIMPLE_IMPL, (int)w, impl);

		starpu_sched_component_connect(d.calibrator_component, leaf);
		starpu_sched_component_connect(d.no_perfmodel_component, leaf);
	}
	/* And to the combined workers, as StarPU: a parallel task may get several cores whatever its model. */
	for (unsigned c = 0; (flags & STARPU_SCHED_SIMPLE_COMBINED_WORKERS) && c < starpu_combined_worker_get_count(); c++)
	{
		struct starpu_sched_component *leaf = starpu_sched_component_worker_get(t->sched_ctx_id, (int)(starpu_worker_get_count() + c));

		starpu_sched_component_connect(d.calibrator_component, leaf);
		starpu_sched_component_connect(d.no_perfmodel_component, leaf);
	}
	return entry;
}

static void build(unsigned sched_ctx_id, unsigned ndecisions, struct decision *decisions)
{
	struct starpu_sched_tree *t;
	struct starpu_sched_component *impl[STARPU_NMAXWORKERS] = { NULL };
	struct starpu_sched_component *stages[STARPU_NMAXWORKERS + STARPU_NMAX_COMBINEDWORKERS] = { NULL };

	for (unsigned i = 1; i < ndecisions; i++)
		if ((decisions[i].flags & SHARED_FLAGS) != (decisions[0].flags & SHARED_FLAGS))
		{
			astro_log_error("sched_component", "starpu_sched_component_initialize_simple_schedulers: decision %u has flags %#x, decision 0 %#x: "
					"they must agree on what they decide, STARPU_SCHED_SIMPLE_COMBINED_WORKERS and STARPU_SCHED_SIMPLE_IMPL",
					i, decisions[i].flags, decisions[0].flags);
			return;
		}
	for (unsigned i = 0; i < ndecisions; i++)
		if (ndecisions > 1 && (decisions[i].flags & STARPU_SCHED_SIMPLE_PERFMODEL))
		{
			astro_log_error("sched_component", "STARPU_SCHED_SIMPLE_PERFMODEL is not supported with several decision components (decision %u)", i);
			return;
		}
	/* StarPU's default combined workers (groups of CPU workers), which the decisions choose among besides the workers. */
	if (decisions[0].flags & STARPU_SCHED_SIMPLE_COMBINED_WORKERS)
		starpu_sched_find_all_worker_combinations();
	t = starpu_sched_tree_create(sched_ctx_id);
	if (!t)
		return;
	/* Several decisions: the task's sched_data chooses one, and their choices meet at stages above the workers. */
	if (ndecisions > 1)
	{
		t->root = starpu_sched_component_create(t, "userchoice");
		if (!t->root)
			return;
		t->root->push_task = userchoice_push_task;
	}
	for (unsigned i = 0; i < ndecisions; i++)
	{
		unsigned flags = decisions[i].flags;
		struct starpu_sched_component *decision = decisions[i].create(t, decisions[i].data);
		struct starpu_sched_component *entry = decision, *above = NULL;

		if (!decision)
		{
			astro_log_error("sched_component", "the decision component of context %u could not be made", sched_ctx_id);
			return;
		}
		if ((flags & STARPU_SCHED_SIMPLE_FIFO_ABOVE) && !(above = queue_create(t, flags & STARPU_SCHED_SIMPLE_FIFO_ABOVE_PRIO, 0, 0.0, 0)))
			return;
		if ((flags & STARPU_SCHED_SIMPLE_PERFMODEL) && !(entry = with_perfmodel(t, decision, impl, flags)))
			return;
		if (above)
			starpu_sched_component_connect(above, entry), entry = above;
		if (t->root)
			starpu_sched_component_connect(t->root, entry);
		else
			t->root = entry;
		connect_choices(t, decision, flags | (flags & STARPU_SCHED_SIMPLE_PERFMODEL ? STARPU_SCHED_SIMPLE_IMPL : 0), impl,
				ndecisions > 1 ? stages : NULL);
	}
	starpu_sched_tree_update_workers(t);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, t);
}

void starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_create_t create_decision_component, void *data, unsigned flags, unsigned sched_ctx_id)
{
	struct decision d = { create_decision_component, data, flags };

	if (!create_decision_component)
	{
		astro_log_error("sched_component", "starpu_sched_component_initialize_simple_scheduler: create_decision_component is NULL");
		return;
	}
	build(sched_ctx_id, 1, &d);
}

void starpu_sched_component_initialize_simple_schedulers(unsigned sched_ctx_id, unsigned ndecisions, ...)
{
	struct decision d[ndecisions ? ndecisions : 1];
	va_list ap;

	if (!ndecisions)
	{
		astro_log_error("sched_component", "starpu_sched_component_initialize_simple_schedulers: no decision component given");
		return;
	}
	va_start(ap, ndecisions);
	for (unsigned i = 0; i < ndecisions; i++)
	{
		d[i].create = va_arg(ap, starpu_sched_component_create_t);
		d[i].data = va_arg(ap, void *);
		d[i].flags = va_arg(ap, unsigned);
	}
	va_end(ap);
	build(sched_ctx_id, ndecisions, d);
}

void starpu_initialize_prio_center_policy(unsigned sched_ctx_id)
{
	starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_eager_create, NULL,
							   STARPU_SCHED_SIMPLE_DECIDE_WORKERS | STARPU_SCHED_SIMPLE_FIFO_ABOVE
							   | STARPU_SCHED_SIMPLE_FIFO_ABOVE_PRIO | STARPU_SCHED_SIMPLE_IMPL, sched_ctx_id);
}
