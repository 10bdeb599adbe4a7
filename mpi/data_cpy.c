/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_mpi_data_cpy(): the value of one registered data copied into
 * another, wherever their owners are. Every rank calls it at the same point
 * of its submissions: the owner of the source sends it to the owner of the
 * destination, which receives it into the destination (both owners the same:
 * starpu_data_cpy() there), and every rank forgets what its cache knew of
 * the destination, whose value changes.
 */
#include "mpi_private.h"

#include <errno.h>

static int check_registered(starpu_data_handle_t handle, const char *what, const char *fn)
{
	if (!handle) {
		_astro_mpi_error("%s: NULL %s handle", fn, what);
		return -EINVAL;
	}
	if (starpu_mpi_data_get_rank(handle) == -1) {
		_astro_mpi_error("%s: the %s has no owner: register it with starpu_mpi_data_register() on every rank first", fn, what);
		return -EINVAL;
	}
	return 0;
}

/* The destination's owner: receives the source's value into it, then calls callback. */
static int receive_copy(starpu_data_handle_t dst, int src_rank, starpu_mpi_tag_t tag, MPI_Comm comm, int asynchronous,
			void (*callback)(void *), void *arg)
{
	if (asynchronous)
		return starpu_mpi_irecv_detached(dst, src_rank, tag, comm, callback, arg);
	MPI_Status status;
	int ret = starpu_mpi_recv(dst, src_rank, tag, comm, &status);
	if (ret == 0 && callback)
		callback(arg);
	return ret;
}

int starpu_mpi_data_cpy_priority(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, MPI_Comm comm, int asynchronous,
				 void (*callback_func)(void *), void *callback_arg, int priority)
{
	static const char fn[] = "starpu_mpi_data_cpy";
	int me, size;
	if (!_astro_mpi_running(fn) || _astro_mpi_comm_info(comm, &me, &size, fn))
		return -EINVAL;
	int ret = check_registered(dst_handle, "destination", fn);
	if (!ret)
		ret = check_registered(src_handle, "source", fn);
	if (ret)
		return ret;
	int src_rank = starpu_mpi_data_get_rank(src_handle), dst_rank = starpu_mpi_data_get_rank(dst_handle);
	if ((src_rank == STARPU_MPI_PER_NODE) != (dst_rank == STARPU_MPI_PER_NODE)) {
		_astro_mpi_error("%s: one handle is per-node (STARPU_MPI_PER_NODE) and the other is owned by a rank: copy between "
				 "handles of the same kind", fn);
		return -EINVAL;
	}
	if (src_rank >= size || dst_rank >= size) {
		_astro_mpi_error("%s: the %s is owned by rank %d, and the communicator has %d ranks", fn,
				 src_rank >= size ? "source" : "destination", src_rank >= size ? src_rank : dst_rank, size);
		return -EINVAL;
	}
	/* The destination's value changes: what any rank sent or received of it is stale. */
	_astro_mpi_cache_written(dst_handle);
	starpu_mpi_tag_t tag = starpu_mpi_data_get_tag(dst_handle);
	/* Per-node data: each rank copies its own values. */
	if (src_rank == dst_rank)
		return me == dst_rank || dst_rank == STARPU_MPI_PER_NODE ? starpu_data_cpy_priority(dst_handle, src_handle, asynchronous, callback_func, callback_arg, priority) : 0;
	if (me == src_rank)
		return asynchronous ? starpu_mpi_isend_detached_prio(src_handle, dst_rank, tag, priority, comm, NULL, NULL)
				    : starpu_mpi_send_prio(src_handle, dst_rank, tag, priority, comm);
	if (me == dst_rank)
		return receive_copy(dst_handle, src_rank, tag, comm, asynchronous, callback_func, callback_arg);
	return 0;
}

int starpu_mpi_data_cpy(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, MPI_Comm comm, int asynchronous,
			void (*callback_func)(void *), void *callback_arg)
{
	return starpu_mpi_data_cpy_priority(dst_handle, src_handle, comm, asynchronous, callback_func, callback_arg, STARPU_DEFAULT_PRIO);
}
