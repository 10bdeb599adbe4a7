/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transactions, their tasks' side (the transaction's own tasks and its
 * life are the access room's, access/transaction.c): a task submitted in a
 * transaction joins its current epoch and reads the transaction's handle,
 * which orders it after the epoch's decision and before the next one's; a
 * task of a cancelled epoch is fetched and ends as usual, its implementation
 * is not called (run/worker_loop.c asks _astro_transaction_cancelled()).
 */
#include "tasks/tasks.h"
#include <string.h>

/* Appends the transaction's handle, read, to task's buffers (nbuffers is task->nbuffers). */
static int append_access(struct starpu_task *task, starpu_data_handle_t handle)
{
	int n = task->nbuffers < 0 ? 0 : task->nbuffers;
	if (!task->dyn_handles && n < STARPU_NMAXBUFS) {
		task->handles[n] = handle;
		task->modes[n] = STARPU_R;
		task->nbuffers = n + 1;
		return 0;
	}
	starpu_data_handle_t *handles = malloc((size_t)(n + 1) * sizeof(*handles));
	enum starpu_data_access_mode *modes = malloc((size_t)(n + 1) * sizeof(*modes));
	if (!handles || !modes) {
		free(handles);
		free(modes);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		handles[i] = STARPU_TASK_GET_HANDLE(task, i);
		modes[i] = STARPU_TASK_GET_MODE(task, i);
	}
	handles[n] = handle;
	modes[n] = STARPU_R;
	free(task->dyn_handles);
	free(task->dyn_modes);
	free(task->dyn_interfaces);
	task->dyn_handles = handles;
	task->dyn_modes = modes;
	task->dyn_interfaces = NULL; /* made at the fetch, of the new size */
	task->nbuffers = n + 1;
	return 0;
}

int _astro_transaction_task_submitted(struct starpu_task *task)
{
	struct starpu_transaction *trs = task->transaction;
	const char *name = starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)";
	if (!task->cl || task->cl->nbuffers != STARPU_VARIABLE_NBUFFERS) {
		_astro_error("starpu_task_submit: task '%s' is in a transaction, its codelet must set nbuffers to STARPU_VARIABLE_NBUFFERS "
			     "(the transaction adds an access of its own) and the task its nbuffers", name);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&trs->lock);
	bool closed = trs->closed;
	struct _starpu_trs_epoch *epoch = trs->last;
	starpu_pthread_mutex_unlock(&trs->lock);
	if (closed) {
		_astro_error("starpu_task_submit: task '%s' is in a transaction that is closed: submit it before starpu_transaction_close()", name);
		return -EINVAL;
	}
	if (append_access(task, trs->handle)) {
		_astro_error("starpu_task_submit: out of memory adding the transaction's access to task '%s'", name);
		return -ENOMEM;
	}
	task->trs_epoch = epoch;
	return 0;
}

bool _astro_transaction_cancelled(const struct starpu_task *task)
{
	return task->trs_epoch && __atomic_load_n(&task->trs_epoch->state, __ATOMIC_ACQUIRE) == _ASTRO_EPOCH_CANCELLED;
}
