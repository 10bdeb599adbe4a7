/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filling a task's handles one by one, as a program building its own
 * starpu_task_insert() does (StarPU's starpu_task_insert_data_* helpers,
 * Chameleon's): room beyond STARPU_NMAXBUFS is taken in task->dyn_handles
 * (and task->dyn_modes for a codelet of STARPU_VARIABLE_NBUFFERS), which the
 * task owns and frees with itself. The caller sets task->nbuffers at the end.
 */
#include "tasks/tasks.h"
#include <stdlib.h>
#include <string.h>

/* Grows the arrays that hold n handles (and modes when variable); 0, or -ENOMEM said (as fn). */
static int grow(const char *fn, struct starpu_task *task, bool variable, int *allocated, int current, int n)
{
	starpu_data_handle_t *handles = realloc(task->dyn_handles, (size_t)n * sizeof(*handles));
	if (!handles)
		goto fail;
	if (!task->dyn_handles)
		memcpy(handles, task->handles, (size_t)current * sizeof(*handles));
	task->dyn_handles = handles;
	if (variable) {
		enum starpu_data_access_mode *modes = realloc(task->dyn_modes, (size_t)n * sizeof(*modes));
		if (!modes)
			goto fail;
		if (!task->dyn_modes)
			memcpy(modes, task->modes, (size_t)current * sizeof(*modes));
		task->dyn_modes = modes;
	}
	*allocated = n;
	return 0;
fail:
	_astro_error("%s: out of memory for %d handles: they are not stored", fn, n);
	return -ENOMEM;
}

/* Makes room for room more handles after the first current; 0, or -EINVAL / -ENOMEM said (as fn). */
static int make_room(const char *fn, struct starpu_codelet *cl, struct starpu_task *task, int *allocated, int current, int room)
{
	if (!task || !allocated || current < 0 || room < 0) {
		_astro_error("%s: give a task, the allocated count and a current buffer and room of 0 or more", fn);
		return -EINVAL;
	}
	int need = current + room;
	if (need <= STARPU_NMAXBUFS && !task->dyn_handles)
		return 0;
	if (need <= *allocated && task->dyn_handles)
		return 0;
	if (!cl)
		cl = task->cl;
	return grow(fn, task, cl && cl->nbuffers == STARPU_VARIABLE_NBUFFERS, allocated, current, 2 * need);
}

void starpu_task_insert_data_make_room(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers, int current_buffer,
				       int room)
{
	make_room("starpu_task_insert_data_make_room", cl, task, allocated_buffers, current_buffer, room);
}

/* Stores handle with mode at buffer i: the task's mode for a codelet of variable buffers, else the
 * codelet's own (which must agree). 0, or -EINVAL said. */
static int store(const char *fn, struct starpu_codelet *cl, struct starpu_task *task, int i, starpu_data_handle_t handle,
		 enum starpu_data_access_mode mode)
{
	if (!handle) {
		_astro_error("%s: buffer %d is a NULL handle: it is not stored", fn, i);
		return -EINVAL;
	}
	bool variable = cl && cl->nbuffers == STARPU_VARIABLE_NBUFFERS;
	if (cl && !variable) {
		const enum starpu_data_access_mode *slot = _astro_codelet_mode_slot(cl, (unsigned)i);
		enum starpu_data_access_mode declared = slot ? *slot : STARPU_NONE;
		if (declared == STARPU_NONE || (mode != STARPU_NONE && declared != (mode & ~STARPU_SSEND))) {
			_astro_error("%s: codelet '%s' declares %s access mode for buffer %d: make them match, or give the codelet "
				     "nbuffers = STARPU_VARIABLE_NBUFFERS", fn, cl->name ? cl->name : "?",
				     declared == STARPU_NONE ? "no" : "another", i);
			return -EINVAL;
		}
	}
	STARPU_TASK_SET_HANDLE(task, handle, i);
	if (variable) {
		if (task->dyn_modes)
			task->dyn_modes[i] = mode & ~STARPU_SSEND;
		else
			task->modes[i] = mode & ~STARPU_SSEND;
	}
	return 0;
}

void starpu_task_insert_data_process_arg(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers, int *current_buffer,
					 int arg_type, starpu_data_handle_t handle)
{
	static const char fn[] = "starpu_task_insert_data_process_arg";
	if (!current_buffer || make_room(fn, cl, task, allocated_buffers, *current_buffer, 1))
		return;
	if (store(fn, cl, task, *current_buffer, handle, (enum starpu_data_access_mode)arg_type) == 0)
		(*current_buffer)++;
}

void starpu_task_insert_data_process_array_arg(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers,
					       int *current_buffer, int nb_handles, starpu_data_handle_t *handles)
{
	static const char fn[] = "starpu_task_insert_data_process_array_arg";
	if (!current_buffer || (nb_handles > 0 && !handles) || make_room(fn, cl, task, allocated_buffers, *current_buffer, nb_handles))
		return;
	for (int i = 0; i < nb_handles; i++) {
		/* The modes are the codelet's (STARPU_DATA_ARRAY). */
		const enum starpu_data_access_mode *slot = cl ? _astro_codelet_mode_slot(cl, (unsigned)*current_buffer) : NULL;
		if (!slot || *slot == STARPU_NONE) {
			_astro_error("%s: the modes come from the codelet, which gives none for buffer %d: set cl->modes (or cl->dyn_modes) "
				     "or use starpu_task_insert_data_process_mode_array_arg()", fn, *current_buffer);
			return;
		}
		if (store(fn, cl, task, *current_buffer, handles[i], *slot))
			return;
		(*current_buffer)++;
	}
}

void starpu_task_insert_data_process_mode_array_arg(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers,
						    int *current_buffer, int nb_descrs, struct starpu_data_descr *descrs)
{
	static const char fn[] = "starpu_task_insert_data_process_mode_array_arg";
	if (!current_buffer || (nb_descrs > 0 && !descrs) || make_room(fn, cl, task, allocated_buffers, *current_buffer, nb_descrs))
		return;
	for (int i = 0; i < nb_descrs; i++) {
		if (store(fn, cl, task, *current_buffer, descrs[i].handle, descrs[i].mode))
			return;
		(*current_buffer)++;
	}
}
