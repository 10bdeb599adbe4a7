/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The thread layer of a simulation build (configure --enable-simgrid): locks,
 * conditions, read-write locks, barriers, semaphores and futex waits, in
 * virtual time.
 *
 * SimGrid runs one actor at a time and switches only inside its own calls. So
 * a lock taken and given back without waiting needs no SimGrid call at all; a
 * thread that must wait puts itself in the object's queue and blocks on its
 * own SimGrid semaphore, which whoever gives it the object (the lock, the
 * signal, the token) releases. Queues are served in arrival order, which
 * keeps runs deterministic. The actors themselves are simgrid_actors.c's.
 */
#include "common/simgrid.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void enqueue(struct _starpu_sim_waiter **first, struct _starpu_sim_waiter **last, struct _starpu_sim_waiter *w)
{
	w->next = NULL;
	if (*last)
		(*last)->next = w;
	else
		*first = w;
	*last = w;
}

static struct _starpu_sim_waiter *dequeue(struct _starpu_sim_waiter **first, struct _starpu_sim_waiter **last)
{
	struct _starpu_sim_waiter *w = *first;
	if (w) {
		*first = w->next;
		if (!*first)
			*last = NULL;
		w->next = NULL;
	}
	return w;
}

/* Takes w out of the queue; false when it was not there (already handed what it waited for). */
static bool unqueue(struct _starpu_sim_waiter **first, struct _starpu_sim_waiter **last, struct _starpu_sim_waiter *w)
{
	struct _starpu_sim_waiter *prev = NULL;
	for (struct _starpu_sim_waiter *it = *first; it; prev = it, it = it->next) {
		if (it != w)
			continue;
		if (prev)
			prev->next = it->next;
		else
			*first = it->next;
		if (*last == it)
			*last = prev;
		it->next = NULL;
		return true;
	}
	return false;
}

/* ------------------------------------------------------------- mutexes */

int starpu_pthread_mutex_init(starpu_pthread_mutex_t *mutex, const starpu_pthread_mutexattr_t *attr)
{
	memset(mutex, 0, sizeof(*mutex));
	if (attr)
		pthread_mutexattr_gettype(attr, &mutex->type);
	return 0;
}

int starpu_pthread_mutex_destroy(starpu_pthread_mutex_t *mutex)
{
	return mutex->owner || mutex->first ? EBUSY : 0;
}

int starpu_pthread_mutex_trylock(starpu_pthread_mutex_t *mutex)
{
	struct _starpu_sim_waiter *w = _astro_sim_waiter();
	if (!mutex->owner) {
		mutex->owner = w;
		return 0;
	}
	if (mutex->owner == w && mutex->type == PTHREAD_MUTEX_RECURSIVE) {
		mutex->depth++;
		return 0;
	}
	return EBUSY;
}

int starpu_pthread_mutex_lock(starpu_pthread_mutex_t *mutex)
{
	int ret = starpu_pthread_mutex_trylock(mutex);
	if (STARPU_LIKELY(ret == 0))
		return 0;
	if (mutex->owner == _astro_sim_waiter()) {
		fprintf(stderr, "[astrolabe] simulation: a thread locks a mutex it already holds: it would wait forever "
			"(make the mutex PTHREAD_MUTEX_RECURSIVE, or unlock it first)\n");
		return EDEADLK;
	}
	struct _starpu_sim_waiter *w = _astro_sim_ready_to_wait("starpu_pthread_mutex_lock() waits");
	enqueue(&mutex->first, &mutex->last, w);
	_astro_sim_block(w);	/* the unlock made us the owner */
	return 0;
}

int starpu_pthread_mutex_unlock(starpu_pthread_mutex_t *mutex)
{
	if (mutex->owner != _astro_sim_waiter())
		return EPERM;
	if (mutex->depth) {
		mutex->depth--;
		return 0;
	}
	struct _starpu_sim_waiter *next = dequeue(&mutex->first, &mutex->last);
	mutex->owner = next;
	if (next)
		_astro_sim_hand_over(next);
	return 0;
}

/* ----------------------------------------------------------- conditions */

int starpu_pthread_cond_init(starpu_pthread_cond_t *cond, const starpu_pthread_condattr_t *attr)
{
	(void)attr;
	memset(cond, 0, sizeof(*cond));
	return 0;
}

int starpu_pthread_cond_destroy(starpu_pthread_cond_t *cond)
{
	return cond->first ? EBUSY : 0;
}

int starpu_pthread_cond_signal(starpu_pthread_cond_t *cond)
{
	struct _starpu_sim_waiter *w = dequeue(&cond->first, &cond->last);
	if (w)
		_astro_sim_hand_over(w);
	return 0;
}

int starpu_pthread_cond_broadcast(starpu_pthread_cond_t *cond)
{
	struct _starpu_sim_waiter *w;
	while ((w = dequeue(&cond->first, &cond->last)))
		_astro_sim_hand_over(w);
	return 0;
}

/* deadline: a virtual date in seconds, or a negative value for none. */
static int cond_wait(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex, double deadline)
{
	struct _starpu_sim_waiter *w = _astro_sim_ready_to_wait("starpu_pthread_cond_wait() waits");
	enqueue(&cond->first, &cond->last, w);
	starpu_pthread_mutex_unlock(mutex);
	bool timed_out = false;
	if (deadline < 0)
		_astro_sim_block(w);
	else if (_astro_sim_block_until(w, deadline)) {
		timed_out = unqueue(&cond->first, &cond->last, w);
		if (!timed_out)
			_astro_sim_block(w);	/* signalled at the deadline: take what was handed */
	}
	starpu_pthread_mutex_lock(mutex);
	return timed_out ? ETIMEDOUT : 0;
}

int starpu_pthread_cond_wait(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex)
{
	return cond_wait(cond, mutex, -1);
}

int starpu_pthread_cond_timedwait(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex, const struct timespec *abstime)
{
	return cond_wait(cond, mutex, (double)abstime->tv_sec + (double)abstime->tv_nsec * 1e-9);
}

int astro_sim_cond_wait_until(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex, uint64_t deadline_ns)
{
	return cond_wait(cond, mutex, (double)deadline_ns * 1e-9);
}

/* ------------------------------------------------------ read-write locks */

int starpu_pthread_rwlock_init(starpu_pthread_rwlock_t *rwlock, const starpu_pthread_rwlockattr_t *attr)
{
	(void)attr;
	memset(rwlock, 0, sizeof(*rwlock));
	return 0;
}

int starpu_pthread_rwlock_destroy(starpu_pthread_rwlock_t *rwlock)
{
	return rwlock->writer || rwlock->readers || rwlock->first ? EBUSY : 0;
}

int starpu_pthread_rwlock_rdlock(starpu_pthread_rwlock_t *rwlock)
{
	if (!rwlock->writer && !rwlock->first) {
		rwlock->readers++;
		return 0;
	}
	struct _starpu_sim_waiter *w = _astro_sim_ready_to_wait("starpu_pthread_rwlock_rdlock() waits");
	w->writer = false;
	enqueue(&rwlock->first, &rwlock->last, w);
	_astro_sim_block(w);	/* the unlock counted us among the readers */
	return 0;
}

int starpu_pthread_rwlock_wrlock(starpu_pthread_rwlock_t *rwlock)
{
	struct _starpu_sim_waiter *self = _astro_sim_waiter();
	if (!rwlock->writer && !rwlock->readers && !rwlock->first) {
		rwlock->writer = self;
		return 0;
	}
	struct _starpu_sim_waiter *w = _astro_sim_ready_to_wait("starpu_pthread_rwlock_wrlock() waits");
	w->writer = true;
	enqueue(&rwlock->first, &rwlock->last, w);
	_astro_sim_block(w);	/* the unlock made us the writer */
	return 0;
}

int starpu_pthread_rwlock_tryrdlock(starpu_pthread_rwlock_t *rwlock)
{
	if (rwlock->writer || rwlock->first)
		return EBUSY;
	rwlock->readers++;
	return 0;
}

int starpu_pthread_rwlock_trywrlock(starpu_pthread_rwlock_t *rwlock)
{
	if (rwlock->writer || rwlock->readers || rwlock->first)
		return EBUSY;
	rwlock->writer = _astro_sim_waiter();
	return 0;
}

int starpu_pthread_rwlock_unlock(starpu_pthread_rwlock_t *rwlock)
{
	if (rwlock->writer && rwlock->writer == _astro_sim_waiter())
		rwlock->writer = NULL;
	else if (rwlock->readers)
		rwlock->readers--;
	else
		return EPERM;
	if (rwlock->writer || rwlock->readers || !rwlock->first)
		return 0;
	/* Free: the next writer alone, or every reader up to the next writer. */
	if (rwlock->first->writer) {
		struct _starpu_sim_waiter *w = dequeue(&rwlock->first, &rwlock->last);
		rwlock->writer = w;
		_astro_sim_hand_over(w);
		return 0;
	}
	while (rwlock->first && !rwlock->first->writer) {
		rwlock->readers++;
		_astro_sim_hand_over(dequeue(&rwlock->first, &rwlock->last));
	}
	return 0;
}

/* ------------------------------------------------- barriers, semaphores */

int starpu_pthread_barrier_init(starpu_pthread_barrier_t *barrier, const starpu_pthread_barrierattr_t *attr, unsigned count)
{
	(void)attr;
	if (count == 0)
		return EINVAL;
	memset(barrier, 0, sizeof(*barrier));
	barrier->count = count;
	return 0;
}

int starpu_pthread_barrier_destroy(starpu_pthread_barrier_t *barrier)
{
	return barrier->arrived ? EBUSY : 0;
}

int starpu_pthread_barrier_wait(starpu_pthread_barrier_t *barrier)
{
	starpu_pthread_mutex_lock(&barrier->mutex);
	unsigned generation = barrier->generation;
	if (++barrier->arrived == barrier->count) {
		barrier->arrived = 0;
		barrier->generation++;
		starpu_pthread_cond_broadcast(&barrier->cond);
		starpu_pthread_mutex_unlock(&barrier->mutex);
		return PTHREAD_BARRIER_SERIAL_THREAD;
	}
	while (generation == barrier->generation)
		starpu_pthread_cond_wait(&barrier->cond, &barrier->mutex);
	starpu_pthread_mutex_unlock(&barrier->mutex);
	return 0;
}

int starpu_sem_init(starpu_sem_t *sem, int pshared, unsigned value)
{
	(void)pshared;
	if (value > INT_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(sem, 0, sizeof(*sem));
	sem->value = (int)value;
	return 0;
}

int starpu_sem_destroy(starpu_sem_t *sem)
{
	(void)sem;
	return 0;
}

int starpu_sem_post(starpu_sem_t *sem)
{
	struct _starpu_sim_waiter *w = dequeue(&sem->first, &sem->last);
	if (w)
		_astro_sim_hand_over(w);	/* the token goes straight to the first waiter */
	else
		sem->value++;
	return 0;
}

int starpu_sem_trywait(starpu_sem_t *sem)
{
	if (sem->value > 0) {
		sem->value--;
		return 0;
	}
	errno = EAGAIN;
	return -1;
}

int starpu_sem_wait(starpu_sem_t *sem)
{
	if (starpu_sem_trywait(sem) == 0)
		return 0;
	struct _starpu_sim_waiter *w = _astro_sim_ready_to_wait("starpu_sem_wait() waits");
	enqueue(&sem->first, &sem->last, w);
	_astro_sim_block(w);
	return 0;
}

int starpu_sem_getvalue(starpu_sem_t *sem, int *sval)
{
	*sval = sem->value;
	return 0;
}

/* ---------------------------------------------------------------- futexes */

static struct _starpu_sim_waiter *futex_first, *futex_last;

void astro_sim_futex_wait(int *addr, int val)
{
	if (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != val)
		return;
	struct _starpu_sim_waiter *w = _astro_sim_ready_to_wait("a futex wait");
	w->futex = addr;
	enqueue(&futex_first, &futex_last, w);
	_astro_sim_block(w);
}

void astro_sim_futex_wake_all(int *addr)
{
	struct _starpu_sim_waiter *it = futex_first, *next;
	for (; it; it = next) {
		next = it->next;
		if (it->futex == addr && unqueue(&futex_first, &futex_last, it)) {
			it->futex = NULL;
			_astro_sim_hand_over(it);
		}
	}
}
