/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The calls of starpu_thread.h that are functions rather than the system's
 * own: naming the calling thread, and the _sched variants of the mutex calls,
 * which a scheduling policy uses on a worker's scheduling mutex. Those lock
 * like the plain calls (in a simulation, the simulated ones): having their own
 * names lets a program tell the scheduling mutexes from the others, which
 * starpu_pthread_mutex_check_sched() (workers/sched_mutex.c) verifies.
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
