/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the two halves of StarPU's scheduler toolbox share (toolbox_fifo.c,
 * the FIFO task queue and the helpers; toolbox_prio.c, the priority deque):
 * refusing a NULL argument, claiming a task for a worker, and comparing how
 * ready two tasks' data are.
 */
#ifndef __ASTROLABE_POLICY_TOOLBOX_H__
#define __ASTROLABE_POLICY_TOOLBOX_H__

#include <stddef.h>
#include <starpu_scheduler_toolbox.h>

/* 1 (after one message naming fn and what) when pointer is NULL. */
int _astro_st_null(const void *pointer, const char *fn, const char *what);

/* Returns ret from the calling function (after the message) when pointer, which is what, is NULL. */
#define _ASTRO_ST_OR(pointer, what, ret) \
	do { \
		if (_astro_st_null(pointer, __func__, what)) \
			return ret; \
	} while (0)
#define _ASTRO_ST_TASK_OR(task, ret) _ASTRO_ST_OR(task, "the task", ret)

/* 1 when workerid may run task (any worker when negative): the implementation it runs is then set. */
int _astro_st_claim(struct starpu_task *task, int workerid);

/* 1 when workerid may run task (no side effect). */
static inline int _astro_st_runnable(struct starpu_task *task, unsigned workerid)
{
	return starpu_worker_can_execute_task_first_impl(workerid, task, NULL);
}

/* The bytes of a task's data missing on a worker's node (starpu_st_non_ready_buffers_size()). */
struct _astro_st_readiness
{
	size_t non_ready;
	size_t non_loading;
	size_t non_allocated;
};

void _astro_st_readiness_of(struct starpu_task *task, unsigned workerid, struct _astro_st_readiness *r);

/* 1 when a is strictly more ready than b: fewer bytes to read, then fewer not on their way, then fewer not allocated. */
static inline int _astro_st_more_ready(const struct _astro_st_readiness *a, const struct _astro_st_readiness *b)
{
	if (a->non_ready != b->non_ready)
		return a->non_ready < b->non_ready;
	if (a->non_loading != b->non_loading)
		return a->non_loading < b->non_loading;
	return a->non_allocated < b->non_allocated;
}

static inline int _astro_st_fully_ready(const struct _astro_st_readiness *r)
{
	return r->non_ready == 0 && r->non_allocated == 0;
}

#endif /* __ASTROLABE_POLICY_TOOLBOX_H__ */
