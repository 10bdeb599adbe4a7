/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Moving data values between ranks outside tasks: scatter and gather of
 * data handles by ownership (starpu_mpi_scatter_detached,
 * starpu_mpi_gather_detached): the root sends each data to its owner, or
 * each owner sends its data to the root, with detached requests, one
 * callback per rank once all of its own are done; and the transfer of a
 * data's value to given ranks (starpu_mpi_get_data_on_node*,
 * starpu_mpi_data_migrate, which the load balancer uses).
 */
#include "mpi_private.h"

#include <errno.h>
#include <stdlib.h>

/* Calls callback(arg) when the last of `left` requests is done. */
struct countdown
{
	int left;
	void (*callback)(void *);
	void *arg;
};

static void count_one(void *p)
{
	struct countdown *c = p;
	if (__atomic_sub_fetch(&c->left, 1, __ATOMIC_ACQ_REL) == 0) {
		c->callback(c->arg);
		free(c);
	}
}

/* to_owners: the root sends to the owners (scatter), else the owners send to the root (gather). */
static int by_ownership(starpu_data_handle_t *handles, int count, int root, MPI_Comm comm, bool to_owners,
			void (*root_cb)(void *), void *root_arg, void (*other_cb)(void *), void *other_arg, const char *fn)
{
	int me, size;
	if (!_astro_mpi_running(fn) || _astro_mpi_comm_info(comm, &me, &size, fn))
		return -EINVAL;
	if ((!handles && count > 0) || count < 0) {
		_astro_mpi_error("%s: %s: pass an array of count data handles", fn, count < 0 ? "negative count" : "NULL array");
		return -EINVAL;
	}
	if (root < 0 || root >= size) {
		_astro_mpi_error("%s: root %d is not a rank of the communicator (0 to %d)", fn, root, size - 1);
		return -EINVAL;
	}
	/* Check every data first: nothing is posted for a bad array. */
	int mine = 0;
	for (int i = 0; i < count; i++) {
		int owner;
		starpu_mpi_tag_t tag;
		if (!handles[i])
			continue;
		if (!_astro_mpi_data_owner(handles[i], comm, &owner, &tag, fn))
			return -EINVAL;
		if (owner != root && owner != STARPU_MPI_PER_NODE && (me == root || me == owner))
			mine++;
	}
	void (*cb)(void *) = me == root ? root_cb : other_cb;
	void *cb_arg = me == root ? root_arg : other_arg;
	struct countdown *c = NULL;
	if (cb && mine == 0) {
		cb(cb_arg);
		return 0;
	}
	if (cb) {
		c = malloc(sizeof(*c));
		if (!c) {
			_astro_mpi_error("%s: out of memory", fn);
			return -ENOMEM;
		}
		*c = (struct countdown){ mine, cb, cb_arg };
	}
	int ret = 0;
	for (int i = 0; i < count; i++) {
		int owner;
		starpu_mpi_tag_t tag;
		if (!handles[i] || !_astro_mpi_data_owner(handles[i], comm, &owner, &tag, fn) || owner == root || owner == STARPU_MPI_PER_NODE)
			continue;
		int r = 0;
		bool sends = to_owners ? me == root : me == owner;
		if (me == root || me == owner)
			r = _astro_mpi_post(sends ? _ASTRO_MPI_SEND : _ASTRO_MPI_RECV, handles[i], me == root ? owner : root, tag, comm, false, true, 1,
					    c ? count_one : NULL, c, NULL, fn);
		if (r) {
			if (!ret)
				ret = r;
			if (c)
				count_one(c); /* never done: counted now so that the callback still comes */
		}
	}
	return ret;
}

int starpu_mpi_scatter_detached(starpu_data_handle_t *data_handles, int count, int root, MPI_Comm comm, void (*scallback)(void *), void *sarg,
				void (*rcallback)(void *), void *rarg)
{
	return by_ownership(data_handles, count, root, comm, true, scallback, sarg, rcallback, rarg, "starpu_mpi_scatter_detached");
}

int starpu_mpi_gather_detached(starpu_data_handle_t *data_handles, int count, int root, MPI_Comm comm, void (*scallback)(void *), void *sarg,
			       void (*rcallback)(void *), void *rarg)
{
	return by_ownership(data_handles, count, root, comm, false, rcallback, rarg, scallback, sarg, "starpu_mpi_gather_detached");
}

/* ------------------------------------------------ moving a value to a rank */

/* Posts the transfer of handle's value from its owner to node; on node, *req (or callback when detached). */
static int get_on_node(MPI_Comm comm, starpu_data_handle_t handle, int node, bool detached, void (*callback)(void *), void *arg,
		       starpu_mpi_req *req, const char *fn)
{
	int me, size, owner;
	starpu_mpi_tag_t tag;
	if (!_astro_mpi_running(fn) || _astro_mpi_comm_info(comm, &me, &size, fn))
		return -EINVAL;
	if (node < 0 || node >= size) {
		_astro_mpi_error("%s: rank %d is not in the communicator (ranks 0 to %d)", fn, node, size - 1);
		return -EINVAL;
	}
	if (!_astro_mpi_data_owner(handle, comm, &owner, &tag, fn))
		return -EINVAL;
	if (_astro_mpi_redux_pending(handle)) {
		int ret = starpu_mpi_redux_data(comm, handle);
		if (ret)
			return ret;
	}
	if (owner == node || owner == STARPU_MPI_PER_NODE) {
		if (me == node && callback)
			callback(arg);
		return 0;
	}
	int ret = 0;
	if (me == node) {
		ret = _astro_mpi_post(_ASTRO_MPI_RECV, handle, owner, tag, comm, false, detached, 1, callback, arg, req, fn);
		_astro_mpi_cache_received(handle);
	} else if (me == owner) {
		ret = _astro_mpi_post(_ASTRO_MPI_SEND, handle, node, tag, comm, false, true, 1, NULL, NULL, NULL, fn);
		_astro_mpi_cache_sent(handle, node);
	}
	return ret;
}

void starpu_mpi_get_data_on_node_detached(MPI_Comm comm, starpu_data_handle_t data_handle, int node, void (*callback)(void *), void *arg)
{
	get_on_node(comm, data_handle, node, true, callback, arg, NULL, "starpu_mpi_get_data_on_node_detached");
}

void starpu_mpi_get_data_on_node(MPI_Comm comm, starpu_data_handle_t data_handle, int node)
{
	starpu_mpi_req req = NULL;
	if (get_on_node(comm, data_handle, node, false, NULL, NULL, &req, "starpu_mpi_get_data_on_node") == 0 && req)
		starpu_mpi_wait(&req, MPI_STATUS_IGNORE);
}

void starpu_mpi_get_data_on_all_nodes_detached(MPI_Comm comm, starpu_data_handle_t data_handle)
{
	int me, size;
	if (!_astro_mpi_running("starpu_mpi_get_data_on_all_nodes_detached") ||
	    _astro_mpi_comm_info(comm, &me, &size, "starpu_mpi_get_data_on_all_nodes_detached"))
		return;
	for (int node = 0; node < size; node++)
		if (get_on_node(comm, data_handle, node, true, NULL, NULL, NULL, "starpu_mpi_get_data_on_all_nodes_detached"))
			return;
}

void starpu_mpi_data_migrate(MPI_Comm comm, starpu_data_handle_t handle, int new_rank)
{
	int owner;
	starpu_mpi_tag_t tag;
	if (!_astro_mpi_running("starpu_mpi_data_migrate") || !_astro_mpi_data_owner(handle, comm, &owner, &tag, "starpu_mpi_data_migrate"))
		return;
	if (owner == new_rank)
		return;
	if (get_on_node(comm, handle, new_rank, true, NULL, NULL, NULL, "starpu_mpi_data_migrate"))
		return;
	starpu_mpi_data_set_rank_comm(handle, new_rank, comm);
}
