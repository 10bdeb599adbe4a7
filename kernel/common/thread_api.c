/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The calls of starpu_thread.h that are functions rather than the system's
 * own: naming the calling thread, and the _sched variants of the mutex calls,
 * which a scheduling policy uses on a worker's scheduling mutex. Those lock
 * like the plain calls (in a simulation, the simulated ones): having their own
 * names lets a program tell the scheduling mutexes from the others, which
 * starpu_pthread_mutex_check_sched() (workers/sched_mutex.c) verifies.
 * Outside a simulation, the semaphore waits go on when a signal interrupts
 * them, as StarPU's do (kernel/common/simgrid.c has the simulation's).
 */
#include "common/common.h"

int starpu_pthread_setname(const char *name)
{
	if (!name) {
		_astro_error("starpu_pthread_setname: NULL name: give the name the thread should show");
		return EINVAL;
	}
	astro_thread_set_name(name);
	return 0;
}

int starpu_pthread_mutex_lock_sched(starpu_pthread_mutex_t *mutex)
{
	return starpu_pthread_mutex_lock(mutex);
}

int starpu_pthread_mutex_unlock_sched(starpu_pthread_mutex_t *mutex)
{
	return starpu_pthread_mutex_unlock(mutex);
}

int starpu_pthread_mutex_trylock_sched(starpu_pthread_mutex_t *mutex)
{
	return starpu_pthread_mutex_trylock(mutex);
}

#ifndef STARPU_SIMGRID
int starpu_sem_wait(starpu_sem_t *sem)
{
	int ret;
	while ((ret = sem_wait(sem)) == -1 && errno == EINTR)
		;
	return ret;
}

int starpu_sem_trywait(starpu_sem_t *sem)
{
	int ret;
	while ((ret = sem_trywait(sem)) == -1 && errno == EINTR)
		;
	return ret;
}
#endif
