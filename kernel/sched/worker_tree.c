/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starpu_worker_tree: the worker collection that walks workers in the
 * machine's topology order (hwloc's tree, depth first), so that workers
 * sharing a core, a cache or a socket come one after another. It is the list
 * collection (starpu_worker_list, sched_ctx.c) kept sorted by the processing
 * unit each worker is bound to (its bindid, a logical index of hwloc's
 * tree), workers bound nowhere last, ties by worker id. */
#include "sched/sched.h"

static long tree_rank(int worker)
{
	int bindid = starpu_worker_get_bindid(worker);
	return (bindid < 0 ? (long)STARPU_NMAXWORKERS * 1024 : (long)bindid * STARPU_NMAXWORKERS) + worker;
}

static int tree_add(struct starpu_worker_collection *workers, int worker)
{
	if (starpu_worker_list.add(workers, worker) < 0)
		return -1;
	/* Appended: move it back to its place. */
	int *ids = workers->workerids;
	long rank = tree_rank(worker);
	unsigned i = workers->nworkers - 1;
	for (; i > 0 && tree_rank(ids[i - 1]) > rank; i--)
		ids[i] = ids[i - 1];
	ids[i] = worker;
	return worker;
}

static void tree_init(struct starpu_worker_collection *workers)
{
	starpu_worker_list.init(workers);
	workers->type = STARPU_WORKER_TREE;
}

static void tree_init_iterator(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it)
{
	starpu_worker_list.init_iterator(workers, it);
}

static unsigned tree_has_next(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it)
{
	return starpu_worker_list.has_next(workers, it);
}

static int tree_get_next(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it)
{
	return starpu_worker_list.get_next(workers, it);
}

static int tree_remove(struct starpu_worker_collection *workers, int worker)
{
	return starpu_worker_list.remove(workers, worker);
}

static void tree_deinit(struct starpu_worker_collection *workers)
{
	starpu_worker_list.deinit(workers);
}

static void tree_init_iterator_for_parallel_tasks(struct starpu_worker_collection *workers, struct starpu_sched_ctx_iterator *it,
						  struct starpu_task *task)
{
	starpu_worker_list.init_iterator_for_parallel_tasks(workers, it, task);
}

struct starpu_worker_collection starpu_worker_tree = {
	.type = STARPU_WORKER_TREE, .has_next = tree_has_next, .get_next = tree_get_next, .add = tree_add,
	.remove = tree_remove, .init = tree_init, .deinit = tree_deinit, .init_iterator = tree_init_iterator,
	.init_iterator_for_parallel_tasks = tree_init_iterator_for_parallel_tasks,
};
