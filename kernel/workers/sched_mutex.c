/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_pthread_mutex_check_sched() (starpu_thread.h): a worker that locks
 * its own scheduling mutex with the plain calls, where the _sched ones are
 * expected, is told so. StarPU's checked macros call it in debugging builds.
 */
#include "workers/workers.h"

void starpu_pthread_mutex_check_sched(starpu_pthread_mutex_t *mutex, char *file, int line)
{
	int id = starpu_worker_get_id();
	if (id < 0 || !mutex || (unsigned)id >= _astro_rt.nworkers || !_astro_rt.workers[id])
		return;
	if (mutex == &_astro_rt.workers[id]->sched_mutex)
		_astro_error("%s:%d locks or unlocks the scheduling mutex of worker %d with the plain mutex calls: "
			     "use starpu_pthread_mutex_lock_sched() / _unlock_sched() (STARPU_PTHREAD_MUTEX_LOCK_SCHED) on it",
			     file ? file : "?", line, id);
}
