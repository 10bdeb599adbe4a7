/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Trees of the machine's topology, as in StarPU's starpu_tree.h: the tree
 * starpu_workers_get_tree() gives (processing units at the leaves), and the
 * functions that build and walk one. The visited and present arrays the walks
 * take are indexed by worker id (STARPU_NMAXWORKERS entries). */
#ifndef __STARPU_TREE_H__
#define __STARPU_TREE_H__

#ifdef __cplusplus
extern "C" {
#endif

/** A node: its children (an array of arity nodes, NULL for a leaf), its parent (NULL for the
 * root), the hwloc logical index of its object (id), its depth in hwloc's tree (level), and
 * whether it is a processing unit (is_pu: then id is the bindid workers are bound to). */
struct starpu_tree
{
	struct starpu_tree *nodes;
	struct starpu_tree *father;
	int arity;
	int id;
	int level;
	int is_pu;
};

/** Clears visited[] for every worker bound to a processing unit under tree. */
void starpu_tree_reset_visited(struct starpu_tree *tree, char *visited);
/** Gives father arity children (zeroed, their father set; free them with starpu_tree_free()). */
void starpu_tree_prepare_children(unsigned arity, struct starpu_tree *father);
/** Fills node tree: its id, level, whether it is a processing unit, its arity and its father
 * (its children are given by starpu_tree_prepare_children()). */
void starpu_tree_insert(struct starpu_tree *tree, int id, int level, int is_pu, int arity, struct starpu_tree *father);
/** The processing unit of id id under tree, NULL when there is none. */
struct starpu_tree *starpu_tree_get(struct starpu_tree *tree, int id);
/** The processing unit nearest to node (NULL: from the root) under tree, node's siblings first
 * (the ones after it, then the ones before), then its parent's, and so on up, that a worker is
 * bound to with present[worker] set and visited[worker] clear; NULL when there is none. */
struct starpu_tree *starpu_tree_get_neighbour(struct starpu_tree *tree, struct starpu_tree *node, char *visited, char *present);
/** Frees the children of tree, and theirs (not tree itself): tree becomes a leaf. */
void starpu_tree_free(struct starpu_tree *tree);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_TREE_H__ */
