/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One central FIFO queue, for the test policies (sched_testfifo.c,
 * schedlib_test.c): push appends and wakes the workers, pop takes the oldest
 * task the calling worker can run. npushed counts the pushes since fifo_init.
 */
#ifndef ASTRO_TEST_CENTRAL_FIFO_H
#define ASTRO_TEST_CENTRAL_FIFO_H

#include <starpu.h>
#include <pthread.h>

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct starpu_task_list queue;
static unsigned long npushed;

static void fifo_init(unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	pthread_mutex_lock(&queue_lock);
	starpu_task_list_init(&queue);
	npushed = 0;
	pthread_mutex_unlock(&queue_lock);
}

static int fifo_push(struct starpu_task *task)
{
	pthread_mutex_lock(&queue_lock);
	starpu_task_list_push_back(&queue, task);
	npushed++;
	pthread_mutex_unlock(&queue_lock);
	starpu_wake_all_blocked_workers();
	return 0;
}

/* The oldest task the calling worker can run. */
static struct starpu_task *fifo_pop(unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	int workerid = starpu_worker_get_id();
	struct starpu_task *task;
	pthread_mutex_lock(&queue_lock);
	for (task = starpu_task_list_begin(&queue); task; task = starpu_task_list_next(task))
		if (starpu_worker_can_execute_task_first_impl((unsigned)workerid, task, NULL)) {
			starpu_task_list_erase(&queue, task);
			break;
		}
	pthread_mutex_unlock(&queue_lock);
	return task;
}

#endif
