/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * User MPI datatypes (starpu_mpi_datatype_register,
 * starpu_mpi_interface_datatype_register, and their _node_ forms, whose
 * function is told the memory node of the buffer): a data whose interface has one
 * travels straight from and to its buffer with that datatype, instead of
 * being packed into bytes by the interface's pack method. The table is
 * small (one entry per interface given a datatype) and read on every
 * message only once one was registered.
 */
#include "mpi_private.h"

#include <errno.h>
#include <glib.h>
#include <stdlib.h>

struct datatype_funcs
{
	starpu_mpi_datatype_allocate_func_t allocate;		/* one of these two */
	starpu_mpi_datatype_node_allocate_func_t node_allocate;
	starpu_mpi_datatype_free_func_t free;
};

static starpu_pthread_mutex_t types_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *types;	/* interface id -> struct datatype_funcs (owned) */
static int ntypes;		/* atomic reads: 0 skips the look-up */

static int interface_register(enum starpu_data_interface_id id, struct datatype_funcs funcs, const char *fn)
{
	if ((!funcs.allocate && !funcs.node_allocate) || !funcs.free) {
		_astro_mpi_error("%s: NULL %s function: pass both", fn, funcs.free ? "allocate" : "free");
		return -EINVAL;
	}
	struct datatype_funcs *f = malloc(sizeof(*f));
	if (!f) {
		_astro_mpi_error("%s: out of memory", fn);
		return -ENOMEM;
	}
	*f = funcs;
	starpu_pthread_mutex_lock(&types_lock);
	if (!types)
		types = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free);
	g_hash_table_insert(types, GINT_TO_POINTER(id), f);
	__atomic_store_n(&ntypes, (int)g_hash_table_size(types), __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&types_lock);
	return 0;
}

int starpu_mpi_interface_datatype_register(enum starpu_data_interface_id id, starpu_mpi_datatype_allocate_func_t allocate_datatype_func,
					   starpu_mpi_datatype_free_func_t free_datatype_func)
{
	struct datatype_funcs f = { .allocate = allocate_datatype_func, .free = free_datatype_func };
	return interface_register(id, f, "starpu_mpi_datatype_register");
}

int starpu_mpi_interface_datatype_node_register(enum starpu_data_interface_id id, starpu_mpi_datatype_node_allocate_func_t allocate_datatype_node_func,
						starpu_mpi_datatype_free_func_t free_datatype_func)
{
	struct datatype_funcs f = { .node_allocate = allocate_datatype_node_func, .free = free_datatype_func };
	return interface_register(id, f, "starpu_mpi_datatype_node_register");
}

int starpu_mpi_interface_datatype_unregister(enum starpu_data_interface_id id)
{
	starpu_pthread_mutex_lock(&types_lock);
	bool known = types && g_hash_table_remove(types, GINT_TO_POINTER(id));
	if (types)
		__atomic_store_n(&ntypes, (int)g_hash_table_size(types), __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&types_lock);
	if (!known) {
		_astro_mpi_error("starpu_mpi_datatype_unregister: interface %d has no datatype registered", (int)id);
		return -EINVAL;
	}
	return 0;
}

/* The interface of handle, or -1 (said: fn names the caller) for a NULL handle. */
static int interface_of(starpu_data_handle_t handle, const char *fn)
{
	if (!handle) {
		_astro_mpi_error("%s: NULL data handle", fn);
		return -1;
	}
	return (int)starpu_data_get_interface_id(handle);
}

int starpu_mpi_datatype_register(starpu_data_handle_t handle, starpu_mpi_datatype_allocate_func_t allocate_datatype_func,
				 starpu_mpi_datatype_free_func_t free_datatype_func)
{
	int id = interface_of(handle, "starpu_mpi_datatype_register");
	return id < 0 ? -EINVAL : starpu_mpi_interface_datatype_register((enum starpu_data_interface_id)id, allocate_datatype_func, free_datatype_func);
}

int starpu_mpi_datatype_node_register(starpu_data_handle_t handle, starpu_mpi_datatype_node_allocate_func_t allocate_datatype_node_func,
				      starpu_mpi_datatype_free_func_t free_datatype_func)
{
	int id = interface_of(handle, "starpu_mpi_datatype_node_register");
	return id < 0 ? -EINVAL : starpu_mpi_interface_datatype_node_register((enum starpu_data_interface_id)id, allocate_datatype_node_func, free_datatype_func);
}

int starpu_mpi_datatype_unregister(starpu_data_handle_t handle)
{
	int id = interface_of(handle, "starpu_mpi_datatype_unregister");
	return id < 0 ? -EINVAL : starpu_mpi_interface_datatype_unregister((enum starpu_data_interface_id)id);
}

bool _astro_mpi_datatype_of(starpu_data_handle_t handle, MPI_Datatype *type, starpu_mpi_datatype_free_func_t *free_func)
{
	if (__atomic_load_n(&ntypes, __ATOMIC_ACQUIRE) == 0)
		return false;
	struct datatype_funcs f = { 0 };
	starpu_pthread_mutex_lock(&types_lock);
	struct datatype_funcs *found = types ? g_hash_table_lookup(types, GINT_TO_POINTER(starpu_data_get_interface_id(handle))) : NULL;
	if (found)
		f = *found;
	starpu_pthread_mutex_unlock(&types_lock);
	if (!f.allocate && !f.node_allocate)
		return false;
	*type = MPI_DATATYPE_NULL;
	_astro_mpi_lock();
	/* Messages leave from and arrive in the copy in main memory (comm.c). */
	int ret = f.node_allocate ? f.node_allocate(handle, STARPU_MAIN_RAM, type) : f.allocate(handle, type);
	_astro_mpi_unlock();
	if (ret != 0 || *type == MPI_DATATYPE_NULL) {
		_astro_mpi_error("the datatype function registered for interface %d failed (%d): the data is packed instead",
				 starpu_data_get_interface_id(handle), ret);
		return false;
	}
	*free_func = f.free;
	return true;
}

void _astro_mpi_datatype_shutdown(void)
{
	starpu_pthread_mutex_lock(&types_lock);
	if (types)
		g_hash_table_destroy(types);
	types = NULL;
	__atomic_store_n(&ntypes, 0, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&types_lock);
}
