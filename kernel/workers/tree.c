/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The machine as a tree of the units workers are bound to (starpu_tree.h,
 * starpu_workers_get_tree) and the workers bound to each unit
 * (starpu_bindid_get_workerids). Both are made from hwloc's topology at the
 * first call of a run, under one lock, and kept until shutdown
 * (_astro_worker_tree_reset): workers never move during a run.
 */
#include "workers/workers.h"
#include <hwloc.h>

static struct
{
	starpu_pthread_mutex_t lock;
	bool made;
	unsigned npus;
	int *ids;                            /* every worker bound to a unit, unit by unit */
	unsigned *first;                     /* npus + 1 entries: unit u's workers are ids[first[u]] to ids[first[u + 1] - 1] */
	struct starpu_tree root;
} tree_state = { .lock = STARPU_PTHREAD_MUTEX_INITIALIZER };

static int no_worker[1];

/* ------------------------------------------------------------ the tree functions */

void starpu_tree_prepare_children(unsigned arity, struct starpu_tree *father)
{
	if (!father) {
		_astro_error("starpu_tree_prepare_children: father is NULL: give the node the children belong to");
		return;
	}
	father->nodes = NULL;
	father->arity = 0;
	if (arity == 0)
		return;
	father->nodes = calloc(arity, sizeof(*father->nodes));
	if (!father->nodes) {
		_astro_error("starpu_tree_prepare_children: out of memory for %u children", arity);
		return;
	}
	father->arity = (int)arity;
	for (unsigned i = 0; i < arity; i++)
		father->nodes[i].father = father;
}

void starpu_tree_insert(struct starpu_tree *tree, int id, int level, int is_pu, int arity, struct starpu_tree *father)
{
	if (!tree) {
		_astro_error("starpu_tree_insert: tree is NULL: give the node to fill");
		return;
	}
	if (arity < 0) {
		_astro_error("starpu_tree_insert: arity %d is negative: give the number of children (0 for a leaf)", arity);
		return;
	}
	tree->id = id;
	tree->level = level;
	tree->is_pu = is_pu;
	tree->arity = arity;
	tree->father = father;
	tree->nodes = NULL; /* starpu_tree_prepare_children() gives them */
}

/* The children of t one may walk: none while starpu_tree_prepare_children() did not give them. */
static int children_of(const struct starpu_tree *t)
{
	return t->nodes ? t->arity : 0;
}

struct starpu_tree *starpu_tree_get(struct starpu_tree *tree, int id)
{
	if (!tree)
		return NULL;
	if (children_of(tree) == 0)
		return tree->is_pu && tree->id == id ? tree : NULL;
	for (int i = 0; i < tree->arity; i++) {
		struct starpu_tree *found = starpu_tree_get(&tree->nodes[i], id);
		if (found)
			return found;
	}
	return NULL;
}

void starpu_tree_free(struct starpu_tree *tree)
{
	if (!tree)
		return;
	for (int i = 0; i < children_of(tree); i++)
		starpu_tree_free(&tree->nodes[i]);
	free(tree->nodes);
	tree->nodes = NULL;
	tree->arity = 0;
}

/* The table of this run, for a walk of a tree (the runtime's, or one the program made). */
static bool made(const char *call);
static void table_for_walk(void)
{
	if (__atomic_load_n(&tree_state.made, __ATOMIC_ACQUIRE) || !_astro_running())
		return;
	starpu_pthread_mutex_lock(&tree_state.lock);
	made("starpu_tree_get_neighbour");
	starpu_pthread_mutex_unlock(&tree_state.lock);
}

/* The workers bound to unit bindid (none before the table is made). */
static unsigned unit_workers(int bindid, int **ids)
{
	if (bindid < 0 || (unsigned)bindid >= tree_state.npus || !tree_state.first) {
		*ids = no_worker;
		return 0;
	}
	*ids = &tree_state.ids[tree_state.first[bindid]];
	return tree_state.first[bindid + 1] - tree_state.first[bindid];
}

/* A leaf with a worker bound to it that is present and not visited. */
static bool leaf_free(const struct starpu_tree *leaf, const char *visited, const char *present)
{
	if (!leaf->is_pu)
		return false;
	int *ids;
	unsigned n = unit_workers(leaf->id, &ids);
	for (unsigned i = 0; i < n; i++)
		if (present[ids[i]] && !visited[ids[i]])
			return true;
	return false;
}

/* The first free leaf under t, depth first. */
static struct starpu_tree *first_free_leaf(struct starpu_tree *t, const char *visited, const char *present)
{
	if (children_of(t) == 0)
		return leaf_free(t, visited, present) ? t : NULL;
	for (int i = 0; i < t->arity; i++) {
		struct starpu_tree *found = first_free_leaf(&t->nodes[i], visited, present);
		if (found)
			return found;
	}
	return NULL;
}

struct starpu_tree *starpu_tree_get_neighbour(struct starpu_tree *tree, struct starpu_tree *node, char *visited, char *present)
{
	if (!tree || !visited || !present) {
		_astro_error("starpu_tree_get_neighbour: %s is NULL: give the tree and two arrays of STARPU_NMAXWORKERS flags "
			     "indexed by worker id", !tree ? "tree" : !visited ? "visited" : "present");
		return NULL;
	}
	table_for_walk();
	if (!node)
		return first_free_leaf(tree, visited, present);
	/* From node's place among its siblings, the ones after it, then before; then one level up. */
	for (struct starpu_tree *child = node; child != tree && child->father; child = child->father) {
		struct starpu_tree *father = child->father;
		int n = children_of(father);
		int at = (int)(child - father->nodes);
		if (at < 0 || at >= n) {
			_astro_error("starpu_tree_get_neighbour: node is not among its father's children: give a node of tree");
			return NULL;
		}
		for (int k = 1; k < n; k++) {
			struct starpu_tree *found = first_free_leaf(&father->nodes[(at + k) % n], visited, present);
			if (found)
				return found;
		}
	}
	return NULL;
}

void starpu_tree_reset_visited(struct starpu_tree *tree, char *visited)
{
	if (!tree || !visited) {
		_astro_error("starpu_tree_reset_visited: %s is NULL: give the tree and the array of STARPU_NMAXWORKERS flags",
			     !tree ? "tree" : "visited");
		return;
	}
	table_for_walk();
	if (children_of(tree) == 0) {
		int *ids;
		unsigned n = tree->is_pu ? unit_workers(tree->id, &ids) : 0;
		for (unsigned i = 0; i < n; i++)
			visited[ids[i]] = 0;
		return;
	}
	for (int i = 0; i < tree->arity; i++)
		starpu_tree_reset_visited(&tree->nodes[i], visited);
}

/* ------------------------------------------------------------ the machine's tree */

/* Fills node from obj, skipping the levels where hwloc has a single child. */
static void fill(struct starpu_tree *node, hwloc_obj_t obj, struct starpu_tree *father)
{
	while (obj->arity == 1)
		obj = obj->children[0];
	starpu_tree_insert(node, (int)obj->logical_index, (int)obj->depth, obj->type == HWLOC_OBJ_PU, (int)obj->arity, father);
	if (obj->arity == 0)
		return;
	starpu_tree_prepare_children(obj->arity, node);
	for (int i = 0; i < node->arity; i++)
		fill(&node->nodes[i], obj->children[i], node);
}

/* Makes the table and the tree of this run. Under tree_state.lock. */
static bool made(const char *call)
{
	if (!_astro_running()) {
		_astro_error("%s: StarPU is not initialised: call starpu_init() first", call);
		return false;
	}
	if (tree_state.made)
		return true;
	unsigned npus = _astro_rt.npus, nworkers = _astro_rt.nworkers;
	unsigned *first = calloc(npus + 1, sizeof(*first));
	int *ids = malloc((nworkers ? nworkers : 1) * sizeof(*ids));
	unsigned *next = calloc(npus ? npus : 1, sizeof(*next));
	if (!first || !ids || !next) {
		free(first);
		free(ids);
		free(next);
		_astro_error("%s: out of memory", call);
		return false;
	}
	/* Counted per unit, then placed, in worker order. */
	for (unsigned w = 0; w < nworkers; w++) {
		int b = _astro_rt.workers[w]->bindid;
		if (b >= 0 && (unsigned)b < npus)
			first[b + 1]++;
	}
	for (unsigned u = 0; u < npus; u++)
		first[u + 1] += first[u];
	for (unsigned w = 0; w < nworkers; w++) {
		int b = _astro_rt.workers[w]->bindid;
		if (b >= 0 && (unsigned)b < npus)
			ids[first[b] + next[b]++] = (int)w;
	}
	free(next);
	tree_state.first = first;
	tree_state.ids = ids;
	tree_state.npus = npus;
	memset(&tree_state.root, 0, sizeof(tree_state.root));
	fill(&tree_state.root, hwloc_get_root_obj((hwloc_topology_t)_astro_rt.topology), NULL);
	__atomic_store_n(&tree_state.made, true, __ATOMIC_RELEASE);
	return true;
}

int starpu_bindid_get_workerids(int bindid, int **workerids)
{
	if (!workerids || bindid < 0) {
		_astro_error("starpu_bindid_get_workerids: %s: give a processing unit (starpu_worker_get_bindid()) and where to "
			     "put the array", !workerids ? "workerids is NULL" : "the bindid is negative");
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&tree_state.lock);
	bool ok = made("starpu_bindid_get_workerids");
	int n = ok ? (int)unit_workers(bindid, workerids) : -EINVAL;
	starpu_pthread_mutex_unlock(&tree_state.lock);
	return n;
}

struct starpu_tree *starpu_workers_get_tree(void)
{
	starpu_pthread_mutex_lock(&tree_state.lock);
	bool ok = made("starpu_workers_get_tree");
	starpu_pthread_mutex_unlock(&tree_state.lock);
	return ok ? &tree_state.root : NULL;
}

void _astro_worker_tree_reset(void)
{
	starpu_pthread_mutex_lock(&tree_state.lock);
	if (tree_state.made)
		starpu_tree_free(&tree_state.root);
	free(tree_state.first);
	free(tree_state.ids);
	tree_state.first = NULL;
	tree_state.ids = NULL;
	tree_state.npus = 0;
	tree_state.made = false;
	starpu_pthread_mutex_unlock(&tree_state.lock);
}
