/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reductions across ranks: starpu_mpi_redux_data() and the STARPU_REDUX /
 * STARPU_MPI_REDUX accesses of starpu_mpi_task_insert().
 *
 * A task accessing a data in a reduction mode runs where the node selection
 * puts it (STARPU_EXECUTE_ON_NODE, typically), not necessarily on the data's
 * owner. A rank other than the owner then contributes: its copy starts at
 * the neutral value (the init codelet of starpu_data_set_reduction_methods()),
 * its tasks accumulate into it (STARPU_REDUX: in the runtime's per-worker
 * buffers, combined locally; STARPU_MPI_REDUX: in its one copy, as
 * STARPU_RW|STARPU_COMMUTE), and starpu_mpi_redux_data() brings the
 * contributions to the owner, which folds each into its value with the
 * reduction codelet. Every rank records the same contributors from the same
 * submissions, so all agree on who sends what without talking. A task that
 * accesses the data in another mode first completes the pending reduction.
 */
#include "mpi_private.h"

#include <astrolabe/task_build.h>
#include <errno.h>
#include <stdlib.h>

/* The codelets of handle's reduction; false (said) when they are not set. */
static bool methods(starpu_data_handle_t handle, struct starpu_codelet **redux_cl, struct starpu_codelet **init_cl, const char *fn)
{
	astro_data_get_reduction_methods(handle, redux_cl, init_cl);
	if (*redux_cl && *init_cl)
		return true;
	_astro_mpi_error("%s: data %p is accessed in a reduction mode across ranks but has no reduction methods: "
			 "call starpu_data_set_reduction_methods(handle, redux_cl, init_cl) on every rank first",
			 fn, (void *)handle);
	return false;
}

int _astro_mpi_redux_access(starpu_data_handle_t handle, enum starpu_data_access_mode mode, int owner, int xrank, int me, const char *fn)
{
	struct starpu_codelet *redux_cl, *init_cl;
	if (!methods(handle, &redux_cl, &init_cl, fn))
		return -EINVAL;
	if (xrank == owner || owner == STARPU_MPI_PER_NODE)
		return 0; /* the owner works on its own value */
	int first = _astro_mpi_redux_contribute(handle, xrank);
	if (first < 0) {
		_astro_mpi_error("%s: out of memory for the contributors of a reduction", fn);
		return first;
	}
	if (!first || me != xrank)
		return 0;
	/* This rank's first contribution: its copy starts neutral, whatever it held. */
	if (mode & STARPU_REDUX) {
		starpu_data_invalidate_submit(handle); /* the runtime's reduction starts from the init codelet */
		return 0;
	}
	return starpu_task_insert(init_cl, STARPU_W, handle, STARPU_NAME, "mpi_redux_init", 0);
}

static void unregister_part(void *part)
{
	starpu_data_unregister_submit(part);
}

/* from's contribution goes to head, which folds it into its value. */
static int fold(MPI_Comm comm, starpu_data_handle_t handle, starpu_mpi_tag_t tag, int head, int from, int me, int prio,
		struct starpu_codelet *redux_cl, const char *fn)
{
	int ret = 0;
	if (me == from) {
		ret = _astro_mpi_post(_ASTRO_MPI_SEND, handle, head, tag, comm, false, true, 1, NULL, NULL, NULL, fn);
		/* Sent: this copy is no longer a contribution, nor the value. */
		starpu_data_invalidate_submit(handle);
	} else if (me == head) {
		starpu_data_handle_t part = NULL;
		starpu_data_register_same(&part, handle);
		if (!part)
			return -ENOMEM;
		ret = _astro_mpi_post(_ASTRO_MPI_RECV, part, from, tag, comm, false, true, 1, NULL, NULL, NULL, fn);
		/* part goes once folded (its receive, which releases it through the API, is over by then). */
		if (ret == 0)
			ret = starpu_task_insert(redux_cl, STARPU_RW | STARPU_COMMUTE, handle, STARPU_R, part, STARPU_PRIORITY, prio,
						 STARPU_NAME, "mpi_redux", STARPU_CALLBACK_WITH_ARG_NFREE, unregister_part, part, 0);
		if (ret)
			starpu_data_unregister_submit(part);
	}
	return ret;
}

int starpu_mpi_redux_data_prio_tree(MPI_Comm comm, starpu_data_handle_t data_handle, int prio, int arity)
{
	static const char fn[] = "starpu_mpi_redux_data";
	int me, size, owner;
	starpu_mpi_tag_t tag;
	struct starpu_codelet *redux_cl, *init_cl;

	if (!_astro_mpi_running(fn) || _astro_mpi_comm_info(comm, &me, &size, fn) ||
	    !_astro_mpi_data_owner(data_handle, comm, &owner, &tag, fn))
		return -EINVAL;
	if (owner == STARPU_MPI_PER_NODE) {
		_astro_mpi_error("%s: data %p is per-process (STARPU_MPI_PER_NODE): it has no owner to reduce into; give it one with starpu_mpi_data_register()",
				 fn, (void *)data_handle);
		return -EINVAL;
	}
	int *contributors;
	int n = _astro_mpi_redux_take(data_handle, &contributors);
	if (n == 0)
		return 0; /* nothing contributed elsewhere: the owner's value is the result */
	if (!methods(data_handle, &redux_cl, &init_cl, fn)) {
		free(contributors);
		return -EINVAL;
	}
	/* The owner first, then the contributors in the order they came; groups of
	 * `arity` fold into their first member, level after level (flat below 2). */
	int *parts = malloc((size_t)(n + 1) * sizeof(*parts));
	if (!parts) {
		free(contributors);
		_astro_mpi_error("%s: out of memory", fn);
		return -ENOMEM;
	}
	parts[0] = owner;
	for (int i = 0; i < n; i++)
		parts[i + 1] = contributors[i];
	free(contributors);
	int count = n + 1, width = arity >= 2 ? arity : count, ret = 0;
	while (count > 1) {
		int heads = 0;
		for (int g = 0; g < count; g += width) {
			for (int k = g + 1; k < count && k < g + width; k++) {
				int r = fold(comm, data_handle, tag, parts[g], parts[k], me, prio, redux_cl, fn);
				if (r && !ret)
					ret = r;
			}
			parts[heads++] = parts[g];
		}
		count = heads;
	}
	free(parts);
	_astro_mpi_cache_written(data_handle);
	return ret;
}

int starpu_mpi_redux_data_prio(MPI_Comm comm, starpu_data_handle_t data_handle, int prio)
{
	return starpu_mpi_redux_data_prio_tree(comm, data_handle, prio, 0);
}

int starpu_mpi_redux_data_tree(MPI_Comm comm, starpu_data_handle_t data_handle, int arity)
{
	return starpu_mpi_redux_data_prio_tree(comm, data_handle, STARPU_DEFAULT_PRIO, arity);
}

int starpu_mpi_redux_data(MPI_Comm comm, starpu_data_handle_t data_handle)
{
	return starpu_mpi_redux_data_prio_tree(comm, data_handle, STARPU_DEFAULT_PRIO, 0);
}
