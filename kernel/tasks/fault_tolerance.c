/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Retrying failed tasks (StarPU's fault tolerance). starpu_task_ft_prologue(),
 * a task's prologue callback, turns the task into a meta task: it keeps its
 * accesses (so its successors wait for it) but runs nothing (where =
 * STARPU_NOWHERE), one end dependency holds its end, and a try-task, a copy
 * submitted without data dependencies (the meta task holds the data), does
 * the computation. At the end of each try, its callback (check_ft) either
 * declares success, releasing the meta task's end, or submits another try.
 * A try can be repeated only if it left its input intact, hence the R or W
 * accesses only. The task path pays nothing for this: the prologue is a
 * callback, the meta task a STARPU_NOWHERE task, the try a nodeps submission.
 */
#include "tasks/tasks.h"
#include <string.h>

/* Whether every access of task is STARPU_R or STARPU_W (caller: the function named in messages). */
static bool retriable(const struct starpu_task *task, const char *caller)
{
	if (!task->cl)
		return true;
	unsigned n = _astro_task_nbuffers(task);
	for (unsigned i = 0; i < n; i++) {
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i) & ~STARPU_COMMUTE;
		if (mode != STARPU_R && mode != STARPU_W) {
			_astro_error("%s: task '%s' accesses its buffer %u in mode 0x%x: only tasks whose accesses are STARPU_R or STARPU_W "
				     "can be retried (a failed try must leave its input intact); split the STARPU_RW access into an input and an output",
				     caller, starpu_task_get_name((struct starpu_task *)task) ? starpu_task_get_name((struct starpu_task *)task) : "(unnamed)",
				     i, (unsigned)mode);
			return false;
		}
	}
	return true;
}

/* Copies n elements of size bytes each from src into a new array (NULL when src is or on failure). */
static void *dup_array(const void *src, unsigned n, size_t size)
{
	if (!src || n == 0)
		return NULL;
	void *copy = malloc(n * size);
	if (copy)
		memcpy(copy, src, n * size);
	return copy;
}

struct starpu_task *starpu_task_ft_create_retry(const struct starpu_task *meta_task, const struct starpu_task *template_task,
						void (*check_ft)(void *))
{
	if (!meta_task || !template_task) {
		_astro_error("starpu_task_ft_create_retry: NULL %s: pass the meta task and the task to copy (the meta task, or the try-task that just ended)",
			     !meta_task ? "meta task" : "template task");
		return NULL;
	}
	struct starpu_task *task = starpu_task_create();
	if (!task) {
		_astro_error("starpu_task_ft_create_retry: out of memory creating a try-task");
		return NULL;
	}
	void *job = task->starpu_private; /* the new task's own job, embedded with it */
	*task = *template_task;
	task->starpu_private = job;
	/* The try computes; what belongs to the meta task's life stays with it. */
	task->prologue_callback_func = NULL;
	task->prologue_callback_arg = NULL;
	task->prologue_callback_arg_free = 0;
	task->prologue_callback_pop_arg_free = 0;
	task->epilogue_callback_func = NULL;
	task->epilogue_callback_arg = NULL;
	task->epilogue_callback_arg_free = 0;
	task->callback_func = check_ft;
	task->callback_arg = (void *)meta_task;
	task->callback_arg_free = 0;
	/* The meta task owns cl_arg and ends after its last try: the tries share it. */
	task->cl_arg_free = 0;
	task->cl_ret_free = 0;
	/* Arrays a task frees are the try's own. */
	unsigned n = template_task->cl ? _astro_task_nbuffers(template_task) : 0;
	task->dyn_handles = dup_array(template_task->dyn_handles, n, sizeof(starpu_data_handle_t));
	task->dyn_modes = dup_array(template_task->dyn_modes, n, sizeof(enum starpu_data_access_mode));
	task->dyn_interfaces = NULL;
	if ((template_task->dyn_handles && !task->dyn_handles) || (template_task->dyn_modes && !task->dyn_modes)) {
		_astro_error("starpu_task_ft_create_retry: out of memory copying the %u buffers of task '%s'", n,
			     starpu_task_get_name((struct starpu_task *)template_task) ? starpu_task_get_name((struct starpu_task *)template_task) : "(unnamed)");
		task->destroy = 0;
		starpu_task_destroy(task);
		return NULL;
	}
	/* Its transaction access is in the copied buffers already. */
	task->transaction = NULL;
	task->trs_epoch = NULL;
	task->use_tag = 0;
	task->synchronous = 0;
	task->detach = 1;
	task->destroy = 1;
	task->regenerate = 0;
	task->no_submitorder = 1;
	task->failed = 0;
	task->scheduled = 0;
	task->prefetched = 0;
	task->bundle = NULL;
	task->status = STARPU_TASK_INIT;
	task->profiling_info = NULL;
	task->prev = task->next = NULL;
	task->omp_task = NULL;
	return task;
}

/* The check_ft used when the prologue is given none: retry until a try does not fail. */
static void retry_until_success(void *arg)
{
	struct starpu_task *meta_task = arg;
	struct starpu_task *try_task = starpu_task_get_current();
	if (!try_task->failed) {
		starpu_task_ft_success(meta_task);
		return;
	}
	struct starpu_task *next = starpu_task_ft_create_retry(meta_task, try_task, retry_until_success);
	if (!next || starpu_task_submit_nodeps(next) != 0) {
		_astro_error("starpu_task_ft_prologue: task '%s' could not be tried again: it ends failed",
			     starpu_task_get_name(meta_task) ? starpu_task_get_name(meta_task) : "(unnamed)");
		if (next) {
			next->destroy = 0;
			starpu_task_destroy(next);
		}
		starpu_task_ft_success(meta_task);
	}
}

void starpu_task_ft_prologue(void *check_ft)
{
	struct starpu_task *meta_task = starpu_task_get_current();
	if (!meta_task) {
		_astro_error("starpu_task_ft_prologue: called outside a task's prologue: set it as the task's prologue_callback_func "
			     "(STARPU_PROLOGUE_CALLBACK), its check function as the prologue argument");
		return;
	}
	if (!retriable(meta_task, "starpu_task_ft_prologue"))
		return; /* it runs once, as a plain task */
	void (*check)(void *) = check_ft ? (void (*)(void *))check_ft : retry_until_success;
	struct starpu_task *try_task = starpu_task_ft_create_retry(meta_task, meta_task, check);
	if (!try_task)
		return;
	/* Before the try is submitted: it may succeed, and release the meta task, at once. */
	int32_t where = meta_task->where;
	starpu_task_end_dep_add(meta_task, 1);
	meta_task->where = (int32_t)STARPU_NOWHERE;
	int ret = starpu_task_submit_nodeps(try_task);
	if (ret != 0) {
		_astro_error("starpu_task_ft_prologue: the try-task of '%s' was refused (%d): the task runs once, without retries",
			     starpu_task_get_name(meta_task) ? starpu_task_get_name(meta_task) : "(unnamed)", ret);
		meta_task->where = where;
		try_task->destroy = 0;
		starpu_task_destroy(try_task);
		starpu_task_end_dep_release(meta_task);
	}
}

void starpu_task_ft_failed(struct starpu_task *task)
{
	if (!task) {
		_astro_error("starpu_task_ft_failed: NULL task: pass the task that failed (starpu_task_get_current() in its implementation)");
		return;
	}
	if (!retriable(task, "starpu_task_ft_failed"))
		return;
	task->failed = 1;
}

void starpu_task_ft_success(struct starpu_task *meta_task)
{
	if (!meta_task) {
		_astro_error("starpu_task_ft_success: NULL meta task: pass the argument the check function received");
		return;
	}
	starpu_task_end_dep_release(meta_task);
}
