/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Data arbiters (starpu_arbiter_create, starpu_data_assign_arbiter).
 *
 * The accesses that exclude each other as they run (STARPU_COMMUTE writes,
 * accesses without sequential consistency) take each handle's execution lock
 * (data.c). By default a task takes them one by one in handle address order,
 * which cannot deadlock but may leave a task holding some handles while it
 * waits for another, and the tasks behind it idle. The handles given to an
 * arbiter are taken all at once, under the arbiter's lock, when all of a
 * task's are free: the classic central answer to the dining philosophers,
 * more parallel when many tasks share many handles. A task with handles of
 * several arbiters takes them arbiter by arbiter, in address order, before
 * the handles of none. */
#include "tasks/tasks.h"

#include <stdlib.h>

struct starpu_arbiter
{
	starpu_pthread_mutex_t lock;
	starpu_pthread_cond_t cond;      /* an execution lock of one of its handles was released */
	unsigned nhandles;        /* handles assigned to it and still registered */
};

starpu_arbiter_t starpu_arbiter_create(void)
{
	struct starpu_arbiter *arbiter = calloc(1, sizeof(*arbiter));
	if (!arbiter) {
		_astro_error("starpu_arbiter_create: out of memory");
		return NULL;
	}
	starpu_pthread_mutex_init(&arbiter->lock, NULL);
	starpu_pthread_cond_init(&arbiter->cond, NULL);
	return arbiter;
}

void starpu_arbiter_destroy(starpu_arbiter_t arbiter)
{
	if (!arbiter) {
		_astro_error("starpu_arbiter_destroy: NULL arbiter");
		return;
	}
	starpu_pthread_mutex_lock(&arbiter->lock);
	unsigned left = arbiter->nhandles;
	starpu_pthread_mutex_unlock(&arbiter->lock);
	if (left) {
		_astro_error("starpu_arbiter_destroy: %u handle(s) assigned to the arbiter are still registered: unregister them first (the arbiter is kept)",
			     left);
		return;
	}
	starpu_pthread_cond_destroy(&arbiter->cond);
	starpu_pthread_mutex_destroy(&arbiter->lock);
	free(arbiter);
}

void starpu_data_assign_arbiter(starpu_data_handle_t handle, starpu_arbiter_t arbiter)
{
	if (!_astro_data_live(handle, "starpu_data_assign_arbiter"))
		return;
	starpu_pthread_mutex_lock(&handle->lock);
	struct starpu_arbiter *old = handle->arbiter;
	const char *why = NULL;
	if (handle->busy)
		why = "tasks or acquires are using the handle: assign the arbiter right after registering it";
	else if (old && arbiter && old != arbiter)
		why = "the handle already has an arbiter: a handle has one arbiter (pass NULL first to take it off)";
	else
		handle->arbiter = arbiter;
	starpu_pthread_mutex_unlock(&handle->lock);
	if (why) {
		_astro_error("starpu_data_assign_arbiter: %s", why);
		return;
	}
	if (old == arbiter)
		return;
	if (old) {
		starpu_pthread_mutex_lock(&old->lock);
		old->nhandles--;
		starpu_pthread_mutex_unlock(&old->lock);
	}
	if (arbiter) {
		starpu_pthread_mutex_lock(&arbiter->lock);
		arbiter->nhandles++;
		starpu_pthread_mutex_unlock(&arbiter->lock);
	}
}

void _astro_arbiter_lock(struct starpu_arbiter *arbiter, struct _astro_data_link **links, unsigned n)
{
	/* Only this lock takes its handles' execution locks, and releases only free
	 * them: all free when checked, they are still free when taken. */
	starpu_pthread_mutex_lock(&arbiter->lock);
	for (;;) {
		unsigned i = 0;
		while (i < n && _astro_data_exec_try(links[i], false))
			i++;
		if (i == n)
			break;
		starpu_pthread_cond_wait(&arbiter->cond, &arbiter->lock);
	}
	for (unsigned i = 0; i < n; i++)
		_astro_data_exec_try(links[i], true);
	starpu_pthread_mutex_unlock(&arbiter->lock);
}

void _astro_arbiter_wake(struct starpu_arbiter *arbiter)
{
	starpu_pthread_mutex_lock(&arbiter->lock);
	starpu_pthread_cond_broadcast(&arbiter->cond);
	starpu_pthread_mutex_unlock(&arbiter->lock);
}

void _astro_arbiter_forget(starpu_data_handle_t handle)
{
	struct starpu_arbiter *arbiter = handle->arbiter;
	if (!arbiter)
		return;
	handle->arbiter = NULL;
	starpu_pthread_mutex_lock(&arbiter->lock);
	arbiter->nhandles--;
	starpu_pthread_mutex_unlock(&arbiter->lock);
}
