/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The public struct starpu_task as every room reads it (common/common.h):
 * its initial value, its name, the task the calling thread runs. Only the
 * public fields: a task's job and its life are the tasks room's.
 */
#include "common/common.h"

void starpu_task_init(struct starpu_task *task)
{
	static const struct starpu_task initializer = STARPU_TASK_INITIALIZER;
	STARPU_ASSERT_MSG(task, "starpu_task_init: NULL task");
	*task = initializer;
}

struct starpu_task *starpu_task_get_current(void)
{
	return _astro_current_task;
}

const char *starpu_task_get_name(struct starpu_task *task)
{
	if (!task)
		return NULL;
	if (task->name)
		return task->name;
	if (task->cl && task->cl->name)
		return task->cl->name;
	if (task->cl && task->cl->model && task->cl->model->symbol)
		return task->cl->model->symbol;
	return NULL;
}

const char *starpu_task_get_model_name(struct starpu_task *task)
{
	if (task && task->cl && task->cl->model && task->cl->model->symbol)
		return task->cl->model->symbol;
	return NULL;
}
