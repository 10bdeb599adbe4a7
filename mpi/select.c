/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Node-selection policies: where starpu_mpi_task_insert() runs a task when
 * the owner-computes rule cannot say (the data it writes have different
 * owners, or it writes none). Policy 0 (STARPU_MPI_NODE_SELECTION_MOST_R_DATA)
 * is built in; applications register theirs, and pick one for all tasks
 * (starpu_mpi_node_selection_set_current_policy) or for one
 * (STARPU_NODE_SELECTION_POLICY). Every rank must register the same ones in
 * the same order, so that a policy id means the same everywhere.
 */
#include "mpi_private.h"

#include <errno.h>

#define MAX_POLICIES 24

static int most_r_data(int me, int nb_nodes, struct starpu_data_descr *descr, int nb_data);

static starpu_pthread_mutex_t policies_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_mpi_select_node_policy_func_t policies[MAX_POLICIES] = { most_r_data };
static int current;

/* The rank owning the most bytes the task accesses, counted as StarPU does:
 * a data read counts its size, a data written its size again (it would
 * travel back); the lowest rank on a tie; rank 0 when it accesses none. */
static size_t access_bytes(const struct starpu_data_descr *d)
{
	size_t size = starpu_data_get_size(d->handle);
	return ((d->mode & STARPU_R) ? size : 0) + ((d->mode & STARPU_W) ? size : 0);
}

static int most_r_data(int me, int nb_nodes, struct starpu_data_descr *descr, int nb_data)
{
	(void)me;
	(void)nb_nodes;
	int best = -1;
	size_t best_bytes = 0;
	for (int i = 0; i < nb_data; i++) {
		int rank = starpu_mpi_data_get_rank(descr[i].handle);
		if (!(descr[i].mode & STARPU_RW) || rank < 0)
			continue;
		size_t bytes = 0;
		for (int j = 0; j < nb_data; j++)
			if (starpu_mpi_data_get_rank(descr[j].handle) == rank)
				bytes += access_bytes(&descr[j]);
		if (best < 0 || bytes > best_bytes || (bytes == best_bytes && rank < best)) {
			best = rank;
			best_bytes = bytes;
		}
	}
	return best < 0 ? 0 : best;
}

int starpu_mpi_node_selection_register_policy(starpu_mpi_select_node_policy_func_t policy_func)
{
	if (!policy_func) {
		_astro_mpi_error("starpu_mpi_node_selection_register_policy: NULL policy function");
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&policies_lock);
	for (int id = 1; id < MAX_POLICIES; id++) {
		if (!policies[id]) {
			policies[id] = policy_func;
			starpu_pthread_mutex_unlock(&policies_lock);
			return id;
		}
	}
	starpu_pthread_mutex_unlock(&policies_lock);
	_astro_mpi_error("starpu_mpi_node_selection_register_policy: the %d policy slots are taken: unregister one first", MAX_POLICIES - 1);
	return -ENOSPC;
}

int starpu_mpi_node_selection_unregister_policy(int policy)
{
	starpu_pthread_mutex_lock(&policies_lock);
	bool known = policy > 0 && policy < MAX_POLICIES && policies[policy];
	if (known) {
		policies[policy] = NULL;
		if (current == policy)
			current = STARPU_MPI_NODE_SELECTION_MOST_R_DATA;
	}
	starpu_pthread_mutex_unlock(&policies_lock);
	if (!known) {
		_astro_mpi_error("starpu_mpi_node_selection_unregister_policy: %d is not a registered policy%s", policy,
				 policy == STARPU_MPI_NODE_SELECTION_MOST_R_DATA ? " (the built-in one stays)" : "");
		return -EINVAL;
	}
	return 0;
}

int starpu_mpi_node_selection_get_current_policy(void)
{
	starpu_pthread_mutex_lock(&policies_lock);
	int policy = current;
	starpu_pthread_mutex_unlock(&policies_lock);
	return policy;
}

int starpu_mpi_node_selection_set_current_policy(int policy)
{
	starpu_pthread_mutex_lock(&policies_lock);
	bool known = policy >= 0 && policy < MAX_POLICIES && policies[policy];
	if (known)
		current = policy;
	starpu_pthread_mutex_unlock(&policies_lock);
	if (!known) {
		_astro_mpi_error("starpu_mpi_node_selection_set_current_policy: %d is not a registered policy: register it first", policy);
		return -EINVAL;
	}
	return 0;
}

int _astro_mpi_select_node(int policy, int me, int nb_nodes, struct starpu_data_descr *descr, int nb_data, const char *fn)
{
	starpu_pthread_mutex_lock(&policies_lock);
	if (policy == STARPU_MPI_NODE_SELECTION_CURRENT_POLICY)
		policy = current;
	starpu_mpi_select_node_policy_func_t f = policy >= 0 && policy < MAX_POLICIES ? policies[policy] : NULL;
	starpu_pthread_mutex_unlock(&policies_lock);
	if (!f) {
		_astro_mpi_error("%s: STARPU_NODE_SELECTION_POLICY %d is not a registered policy: register it with starpu_mpi_node_selection_register_policy()",
				 fn, policy);
		return -EINVAL;
	}
	int rank = f(me, nb_nodes, descr, nb_data);
	if (rank < 0 || rank >= nb_nodes) {
		_astro_mpi_error("%s: node-selection policy %d chose rank %d, which is not in the communicator (0 to %d): fix the policy",
				 fn, policy, rank, nb_nodes - 1);
		return -EINVAL;
	}
	return rank;
}
