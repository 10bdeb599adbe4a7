/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Queues and waits of starpu_thread.h: a consumer waits for any of several
 * producers at once. A wait is a flag under its own lock: reset raises it, a
 * producer's signal lowers it and wakes the consumer. A queue is the list of
 * the waits registered on it, under the queue's lock; a signal takes the
 * queue's lock, then each wait's, always in that order.
 */
#include "common/common.h"

int starpu_pthread_queue_init(starpu_pthread_queue_t *q)
{
	starpu_pthread_mutex_init(&q->mutex, NULL);
	q->queue = NULL;
	q->allocqueue = 0;
	q->nqueue = 0;
	return 0;
}

/* Lowers w's flag and wakes it; returns whether it was blocking (not yet signalled since its reset). */
static bool wake(starpu_pthread_wait_t *w)
{
	starpu_pthread_mutex_lock(&w->mutex);
	bool was_blocking = w->block;
	w->block = 0;
	starpu_pthread_cond_broadcast(&w->cond);
	starpu_pthread_mutex_unlock(&w->mutex);
	return was_blocking;
}

int starpu_pthread_queue_signal(starpu_pthread_queue_t *q)
{
	starpu_pthread_mutex_lock(&q->mutex);
	/* The first that was blocking: one already signalled since its reset needs nothing more. */
	for (unsigned i = 0; i < q->nqueue; i++)
		if (wake(q->queue[i]))
			break;
	starpu_pthread_mutex_unlock(&q->mutex);
	return 0;
}

int starpu_pthread_queue_broadcast(starpu_pthread_queue_t *q)
{
	starpu_pthread_mutex_lock(&q->mutex);
	for (unsigned i = 0; i < q->nqueue; i++)
		(void)wake(q->queue[i]);
	starpu_pthread_mutex_unlock(&q->mutex);
	return 0;
}

int starpu_pthread_queue_destroy(starpu_pthread_queue_t *q)
{
	if (q->nqueue) {
		_astro_error("starpu_pthread_queue_destroy: %u waits are still registered on the queue: "
			     "starpu_pthread_queue_unregister() them first", q->nqueue);
		return EBUSY;
	}
	free(q->queue);
	q->queue = NULL;
	q->allocqueue = 0;
	starpu_pthread_mutex_destroy(&q->mutex);
	return 0;
}

int starpu_pthread_wait_init(starpu_pthread_wait_t *w)
{
	starpu_pthread_mutex_init(&w->mutex, NULL);
	starpu_pthread_cond_init(&w->cond, NULL);
	w->block = 1;
	return 0;
}

int starpu_pthread_queue_register(starpu_pthread_wait_t *w, starpu_pthread_queue_t *q)
{
	starpu_pthread_mutex_lock(&q->mutex);
	if (q->nqueue == q->allocqueue) {
		unsigned alloc = q->allocqueue ? 2 * q->allocqueue : 4;
		starpu_pthread_wait_t **grown = realloc(q->queue, alloc * sizeof(*grown));
		if (!grown) {
			starpu_pthread_mutex_unlock(&q->mutex);
			_astro_error("starpu_pthread_queue_register: out of memory for %u waits on one queue", alloc);
			return ENOMEM;
		}
		q->queue = grown;
		q->allocqueue = alloc;
	}
	q->queue[q->nqueue++] = w;
	starpu_pthread_mutex_unlock(&q->mutex);
	return 0;
}

int starpu_pthread_queue_unregister(starpu_pthread_wait_t *w, starpu_pthread_queue_t *q)
{
	starpu_pthread_mutex_lock(&q->mutex);
	for (unsigned i = 0; i < q->nqueue; i++)
		if (q->queue[i] == w) {
			q->queue[i] = q->queue[--q->nqueue];
			starpu_pthread_mutex_unlock(&q->mutex);
			return 0;
		}
	starpu_pthread_mutex_unlock(&q->mutex);
	_astro_error("starpu_pthread_queue_unregister: the wait is not registered on this queue: nothing done");
	return EINVAL;
}

int starpu_pthread_wait_reset(starpu_pthread_wait_t *w)
{
	starpu_pthread_mutex_lock(&w->mutex);
	w->block = 1;
	starpu_pthread_mutex_unlock(&w->mutex);
	return 0;
}

int starpu_pthread_wait_wait(starpu_pthread_wait_t *w)
{
	starpu_pthread_mutex_lock(&w->mutex);
	while (w->block)
		starpu_pthread_cond_wait(&w->cond, &w->mutex);
	starpu_pthread_mutex_unlock(&w->mutex);
	return 0;
}

int starpu_pthread_wait_timedwait(starpu_pthread_wait_t *w, const struct timespec *abstime)
{
	int ret = 0;
	starpu_pthread_mutex_lock(&w->mutex);
	while (w->block && ret != ETIMEDOUT)
		ret = starpu_pthread_cond_timedwait(&w->cond, &w->mutex, abstime);
	if (!w->block)
		ret = 0;
	starpu_pthread_mutex_unlock(&w->mutex);
	return ret;
}

int starpu_pthread_wait_destroy(starpu_pthread_wait_t *w)
{
	starpu_pthread_cond_destroy(&w->cond);
	starpu_pthread_mutex_destroy(&w->mutex);
	return 0;
}
