/* SPDX-License-Identifier: LGPL-2.1-or-later */
// Tests of modular schedulers (starpu_sched_component.h): a policy made of the tree its init builds.
#ifndef ASTRO_TEST_TREE_POLICY_H
#define ASTRO_TEST_TREE_POLICY_H

#include <starpu_sched_component.h>

// A policy ident named name: init builds its tree, the tree's functions do the rest.
#define TREE_POLICY(ident, name, init) \
	static struct starpu_sched_policy ident = { \
		.init_sched = init, \
		.deinit_sched = starpu_sched_tree_deinitialize, \
		.push_task = starpu_sched_tree_push_task, \
		.pop_task = starpu_sched_tree_pop_task, \
		.pre_exec_hook = starpu_sched_component_worker_pre_exec_hook, \
		.post_exec_hook = starpu_sched_component_worker_post_exec_hook, \
		.add_workers = starpu_sched_tree_add_workers, \
		.remove_workers = starpu_sched_tree_remove_workers, \
		.policy_name = name, \
		.policy_description = name, \
		.worker_type = STARPU_WORKER_LIST, \
	}

#endif
