/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tasks made for the program that run nothing: the empty codelet, tasks
 * that only carry dependencies (on tags, on a handle's accesses) or a
 * callback, and the names of the task states.
 */
#include "tasks/tasks.h"

static void nop_func(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

struct starpu_codelet starpu_codelet_nop = {
	.where = STARPU_NOWHERE,
	.cpu_funcs = { nop_func },
	.nbuffers = 0,
	.name = "starpu_codelet_nop",
};

void starpu_codelet_init(struct starpu_codelet *cl)
{
	memset(cl, 0, sizeof(*cl));
}

/* What a task made by starpu_task_create_sync() runs: nothing, anywhere. */
static struct starpu_codelet sync_codelet = {
	.where = STARPU_NOWHERE,
	.cpu_funcs = { nop_func },
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.name = "starpu_task_create_sync",
};

struct starpu_task *starpu_task_create_sync(starpu_data_handle_t handle, enum starpu_data_access_mode mode)
{
	if (!handle) {
		_astro_error("starpu_task_create_sync: NULL handle: give a registered data handle");
		return NULL;
	}
	if (_astro_data_check_mode(mode) != 0 || !(mode & STARPU_RW) || (mode & (STARPU_SCRATCH | STARPU_REDUX))) {
		_astro_error("starpu_task_create_sync: invalid access mode 0x%x: use STARPU_R, STARPU_W or STARPU_RW", (unsigned)mode);
		return NULL;
	}
	struct starpu_task *task = starpu_task_create();
	task->cl = &sync_codelet;
	task->nbuffers = 1;
	task->handles[0] = handle;
	task->modes[0] = mode;
	task->name = "starpu_task_create_sync";
	return task;
}

void starpu_create_callback_task(void (*callback)(void *), void *callback_arg)
{
	struct starpu_task *task = starpu_task_create();
	task->cl = NULL;
	task->callback_func = callback;
	task->callback_arg = callback_arg;
	task->name = "starpu_create_callback_task";
	int ret = starpu_task_submit(task);
	if (ret) {
		_astro_error("starpu_create_callback_task: the task was not submitted (%s): its callback does not run", strerror(-ret));
		starpu_task_destroy(task);
	}
}

char *starpu_task_status_get_as_string(enum starpu_task_status status)
{
	switch (status) {
	case STARPU_TASK_INIT: return (char *)"STARPU_TASK_INIT";
	case STARPU_TASK_BLOCKED: return (char *)"STARPU_TASK_BLOCKED";
	case STARPU_TASK_READY: return (char *)"STARPU_TASK_READY";
	case STARPU_TASK_RUNNING: return (char *)"STARPU_TASK_RUNNING";
	case STARPU_TASK_FINISHED: return (char *)"STARPU_TASK_FINISHED";
	case STARPU_TASK_BLOCKED_ON_TAG: return (char *)"STARPU_TASK_BLOCKED_ON_TAG";
	case STARPU_TASK_BLOCKED_ON_TASK: return (char *)"STARPU_TASK_BLOCKED_ON_TASK";
	case STARPU_TASK_BLOCKED_ON_DATA: return (char *)"STARPU_TASK_BLOCKED_ON_DATA";
	case STARPU_TASK_STOPPED: return (char *)"STARPU_TASK_STOPPED";
	}
	return (char *)"STARPU_TASK_unknown_status";
}

/* void as in StarPU 1.4: what goes wrong is said, and the tag is then never done by this task. */
void starpu_create_sync_task(starpu_tag_t sync_tag, unsigned ndeps, starpu_tag_t *deps, void (*callback)(void *), void *callback_arg)
{
	unsigned long long tag = (unsigned long long)sync_tag;
	if (!starpu_is_initialized()) {
		_astro_error("starpu_create_sync_task: the runtime is not running: no task was made for tag %llu; "
			     "call starpu_init() first", tag);
		return;
	}
	/* The tags room checks the dependencies (and says what is wrong): refused, no task is made. */
	if (_astro_tag_declare_deps("starpu_create_sync_task", sync_tag, ndeps, deps) != 0)
		return;
	struct starpu_task *task = starpu_task_create();
	task->cl = NULL;
	task->use_tag = 1;
	task->tag_id = sync_tag;
	task->callback_func = callback;
	task->callback_arg = callback_arg;
	task->name = "starpu_create_sync_task";
	int ret = starpu_task_submit(task);
	if (ret) {
		_astro_error("starpu_create_sync_task: the task of tag %llu was not submitted (%s): the tag is not done by it, "
			     "and its callback does not run", tag, strerror(-ret));
		starpu_task_destroy(task);
	}
}
