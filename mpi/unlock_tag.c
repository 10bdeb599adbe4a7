/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The requests that notify a task tag when they finish (StarPU-MPI's
 * *_unlock_tag functions, one handle or an array), detached requests of
 * comm.c with a callback of their own.
 */
#include "mpi_private.h"

#include <errno.h>
#include <stdlib.h>

static void unlock_tag(void *arg)
{
	starpu_tag_notify_from_apps((starpu_tag_t)(uintptr_t)arg);
}

int starpu_mpi_isend_detached_unlock_tag(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm, starpu_tag_t tag)
{
	return _astro_mpi_post(_ASTRO_MPI_SEND, data_handle, dest, data_tag, comm, false, true, 1, unlock_tag, (void *)(uintptr_t)tag, NULL,
			       "starpu_mpi_isend_detached_unlock_tag");
}

int starpu_mpi_isend_detached_unlock_tag_prio(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm, starpu_tag_t tag)
{
	(void)prio;
	return starpu_mpi_isend_detached_unlock_tag(data_handle, dest, data_tag, comm, tag);
}

int starpu_mpi_irecv_detached_unlock_tag(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, MPI_Comm comm, starpu_tag_t tag)
{
	return _astro_mpi_post(_ASTRO_MPI_RECV, data_handle, source, data_tag, comm, false, true, 1, unlock_tag, (void *)(uintptr_t)tag, NULL,
			       "starpu_mpi_irecv_detached_unlock_tag");
}

/* The array forms: one detached request per entry, the tag notified when the last has finished (not at all when
 * some could not be posted: the caller had the error). */
struct array_unlock
{
	unsigned left;
	bool failed;
	starpu_tag_t tag;
};

static void array_unlock_one(void *arg)
{
	struct array_unlock *a = arg;
	if (__atomic_sub_fetch(&a->left, 1, __ATOMIC_ACQ_REL))
		return;
	if (!a->failed)
		starpu_tag_notify_from_apps(a->tag);
	free(a);
}

static int post_array(enum _astro_mpi_req_kind kind, unsigned n, starpu_data_handle_t *handles, int *peers, starpu_mpi_tag_t *tags,
		      MPI_Comm *comms, starpu_tag_t tag, const char *fn)
{
	if (n == 0)
		return 0; /* as StarPU's: nothing posted, the tag left alone */
	if (!handles || !peers || !tags || !comms) {
		_astro_mpi_error("%s: NULL array: give %u handles, %s, tags and communicators", fn, n,
				 kind == _ASTRO_MPI_SEND ? "destinations" : "sources");
		return -EINVAL;
	}
	struct array_unlock *a = malloc(sizeof(*a));
	if (!a) {
		_astro_mpi_error("%s: out of memory", fn);
		return -ENOMEM;
	}
	a->left = n;
	a->failed = false;
	a->tag = tag;
	for (unsigned i = 0; i < n; i++) {
		int ret = _astro_mpi_post(kind, handles[i], peers[i], tags[i], comms[i], false, true, 1, array_unlock_one, a, NULL, fn);
		if (ret) {
			/* Entries i.. never call back: count them out (the last finished request frees a). */
			a->failed = true;
			if (__atomic_sub_fetch(&a->left, n - i, __ATOMIC_ACQ_REL) == 0)
				free(a);
			return ret;
		}
	}
	return 0;
}

int starpu_mpi_isend_array_detached_unlock_tag(unsigned array_size, starpu_data_handle_t *data_handle, int *dest, starpu_mpi_tag_t *data_tag,
						MPI_Comm *comm, starpu_tag_t tag)
{
	return post_array(_ASTRO_MPI_SEND, array_size, data_handle, dest, data_tag, comm, tag, "starpu_mpi_isend_array_detached_unlock_tag");
}

int starpu_mpi_isend_array_detached_unlock_tag_prio(unsigned array_size, starpu_data_handle_t *data_handle, int *dest,
						     starpu_mpi_tag_t *data_tag, int *prio, MPI_Comm *comm, starpu_tag_t tag)
{
	(void)prio;
	return post_array(_ASTRO_MPI_SEND, array_size, data_handle, dest, data_tag, comm, tag,
			  "starpu_mpi_isend_array_detached_unlock_tag_prio");
}

int starpu_mpi_irecv_array_detached_unlock_tag(unsigned array_size, starpu_data_handle_t *data_handle, int *source, starpu_mpi_tag_t *data_tag,
						MPI_Comm *comm, starpu_tag_t tag)
{
	return post_array(_ASTRO_MPI_RECV, array_size, data_handle, source, data_tag, comm, tag, "starpu_mpi_irecv_array_detached_unlock_tag");
}
