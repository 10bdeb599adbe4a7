/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the components of policy-toolkit/ share and an out-of-tree component does not
 * see: the per-context state of a modular scheduler (its tree, its worker
 * components, which workers are hungry).
 */
#ifndef __ASTROLABE_SCHED_COMPONENT_H__
#define __ASTROLABE_SCHED_COMPONENT_H__

#include <astrolabe/sched.h>
#include <starpu_sched_component.h>

struct _astro_modular_ctx
{
	struct starpu_sched_tree *tree;
	/** The workers of the context and their hunger: a component that queued a task wakes one (can_pull). */
	struct astro_sched_workers workers;
	struct starpu_sched_component *worker[STARPU_NMAXWORKERS];
	/** The components of combined workers, by id - starpu_worker_get_count(). */
	struct starpu_sched_component *combined[STARPU_NMAX_COMBINEDWORKERS];
};

/** The context's modular state, made on first use (NULL only for a bad id, with a message). */
struct _astro_modular_ctx *_astro_modular_ctx(unsigned sched_ctx_id);

/** The context's modular state if it has one, NULL otherwise (no lock: for the task path). */
struct _astro_modular_ctx *_astro_modular_ctx_find(unsigned sched_ctx_id);

/* The leaves (component_leaves.c): what the generic code asks of the worker components. */

/** 1 once the pull that started a pump on this thread is answered: a task was pushed to the worker
 * component whose worker pulls (it takes that task straight away), or the limited queue that took a
 * task for a pull and asked for a refill is full again. A component pumping tasks down may stop there. */
int _astro_component_puller_served(void);

/** 1 once the limited queue that asked this thread's pump for a refill is full again (component_queue.c). */
int _astro_component_queue_refilled(void);

/** 1 when component is a combined worker's, all its members in the context, and they can run task together. */
int _astro_component_combined_can_execute(struct starpu_sched_component *component, struct starpu_task *task);

/** The first worker of a combined worker's component. */
int _astro_component_combined_first(struct starpu_sched_component *component);

/** The relative speed of a combined worker's component: its members', summed. */
double _astro_component_combined_speed(struct starpu_sched_component *component);

/** The relative speed of the workers of component (in context), summed; at least 1e-9. */
double _astro_component_speed(struct starpu_sched_component *component);

/** A component named name with size bytes of zeroed data (freed by the default deinit_data); NULL with a message when memory is short. */
struct starpu_sched_component *_astro_component_create_with_data(struct starpu_sched_tree *tree, const char *name, size_t size);

/** Appends c to a component's array of n links (children or parents); -ENOMEM with a message. */
int _astro_component_links_add(struct starpu_sched_component ***array, unsigned *n, struct starpu_sched_component *c);

/** Removes c from a component's array of n links, keeping their order (nothing when absent). */
void _astro_component_links_drop(struct starpu_sched_component **array, unsigned *n, struct starpu_sched_component *c);

/** Reports the new component to the observers of ASTRO_MOMENT_COMPONENT_NEW (with its worker, or -1). */
void _astro_component_report_new(struct starpu_sched_component *component, int workerid);

/** The weights of an mct decision: given, or StarPU's defaults and env vars (STARPU_SCHED_ALPHA...) when given is NULL. */
void _astro_component_mct_params(struct starpu_sched_component_mct_data *to, const struct starpu_sched_component_mct_data *given);

/** The child of component where task completes first, weighing transfers by params (-1: none can run it);
 * sets task->predicted and predicted_transfer for that child. */
int _astro_component_mct_choose(struct starpu_sched_component *component, const struct starpu_sched_component_mct_data *params,
				struct starpu_task *task);

/** Priority range for the queue components of tree's context. */
void _astro_component_priorities(struct starpu_sched_tree *tree, int *min_priority, int *max_priority);

#endif /* __ASTROLABE_SCHED_COMPONENT_H__ */
