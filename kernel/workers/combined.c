/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Combined workers: sets of CPU workers that run one parallel task together
 * (STARPU_SPMD and STARPU_FORKJOIN codelets), numbered after the workers.
 * Running a task on one is the scheduling room's (sched/parallel.c).
 */
#include "workers/workers.h"

/* Combined workers, numbered after the workers; only added to while the runtime runs. */
static struct _astro_combined combined[STARPU_NMAX_COMBINEDWORKERS];
static unsigned ncombined;                   /* atomic */
static starpu_pthread_mutex_t combined_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

const struct _astro_combined *_astro_combined_get(int id)
{
	int index = id - (int)_astro_rt.nworkers;
	if (index < 0 || (unsigned)index >= __atomic_load_n(&ncombined, __ATOMIC_ACQUIRE))
		return NULL;
	return &combined[index];
}

bool _astro_is_combined_worker(int id)
{
	return _astro_combined_get(id) != NULL;
}

/* ----------------------------------------------------- combined workers */

/* Adds one; under combined_lock. Returns its id, or a negative errno said naming fn. */
static int combined_add(int n, const int *ids, const char *fn)
{
	if (n < 1 || n > STARPU_MAXCPUS || !ids) {
		_astro_error("%s: %d workers: a combined worker has 1 to %d CPU workers", fn, n, STARPU_MAXCPUS);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		if (ids[i] < 0 || (unsigned)ids[i] >= _astro_rt.nworkers || _astro_rt.workers[ids[i]]->arch != STARPU_CPU_WORKER) {
			_astro_error("%s: worker %d is not a CPU worker: combined workers are made of CPU workers (0 to %u here)",
				     fn, ids[i], _astro_rt.nworkers - 1);
			return -EINVAL;
		}
		for (int j = 0; j < i; j++)
			if (ids[j] == ids[i]) {
				_astro_error("%s: worker %d is given twice: give each worker once", fn, ids[i]);
				return -EINVAL;
			}
	}
	unsigned count = __atomic_load_n(&ncombined, __ATOMIC_RELAXED);
	for (unsigned c = 0; c < count; c++)
		if (combined[c].size == n && memcmp(combined[c].ids, ids, (size_t)n * sizeof(int)) == 0)
			return (int)(_astro_rt.nworkers + c); /* the same one exists */
	if (count == STARPU_NMAX_COMBINEDWORKERS) {
		_astro_error("%s: all %d combined workers are in use", fn, STARPU_NMAX_COMBINEDWORKERS);
		return -ENOMEM;
	}
	combined[count].size = n;
	memcpy(combined[count].ids, ids, (size_t)n * sizeof(int));
	__atomic_store_n(&ncombined, count + 1, __ATOMIC_RELEASE);
	return (int)(_astro_rt.nworkers + count);
}

int starpu_combined_worker_assign_workerid(int nworkers, int workerid_array[])
{
	/* A policy's init_sched (the runtime starting) may make some too. */
	if (!_astro_running() && __atomic_load_n(&_astro_rt.initialized, __ATOMIC_ACQUIRE) != _ASTRO_STARTING) {
		_astro_error("starpu_combined_worker_assign_workerid: the runtime is not running: call starpu_init() first");
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&combined_lock);
	int id = combined_add(nworkers, workerid_array, __func__);
	starpu_pthread_mutex_unlock(&combined_lock);
	return id;
}

int starpu_combined_worker_get_description(int workerid, int *worker_size, int **combined_workerid)
{
	const struct _astro_combined *c = _astro_combined_get(workerid);
	if (!c) {
		_astro_error("starpu_combined_worker_get_description: %d is no combined worker: their ids go from "
			     "starpu_worker_get_count() to that plus starpu_combined_worker_get_count() - 1", workerid);
		return -EINVAL;
	}
	if (worker_size)
		*worker_size = c->size;
	if (combined_workerid)
		*combined_workerid = (int *)c->ids;
	return 0;
}

unsigned starpu_combined_worker_get_count(void)
{
	return __atomic_load_n(&ncombined, __ATOMIC_ACQUIRE);
}

unsigned starpu_worker_is_combined_worker(int id)
{
	int first = (int)starpu_worker_get_count();
	return id >= first && id < first + (int)starpu_combined_worker_get_count();
}

/* The CPU workers in groups of 2, 4, 8... (aligned, in id order), and all of them. */
void starpu_sched_find_all_worker_combinations(void)
{
	int cpus[STARPU_MAXCPUS];
	int n = 0;
	for (unsigned w = 0; w < _astro_rt.nworkers && n < STARPU_MAXCPUS; w++)
		if (_astro_rt.workers[w]->arch == STARPU_CPU_WORKER)
			cpus[n++] = (int)w;
	starpu_pthread_mutex_lock(&combined_lock);
	for (int size = 2; size < n; size *= 2)
		for (int first = 0; first + size <= n; first += size)
			if (combined_add(size, cpus + first, __func__) < 0)
				goto out;
	if (n >= 2)
		combined_add(n, cpus, __func__);
out:
	starpu_pthread_mutex_unlock(&combined_lock);
}

void _astro_combined_workers_reset(void)
{
	__atomic_store_n(&ncombined, 0, __ATOMIC_RELEASE);
}

int starpu_combined_worker_can_execute_task(unsigned workerid, struct starpu_task *task, unsigned nimpl)
{
	if (workerid < _astro_rt.nworkers)
		return starpu_worker_can_execute_task(workerid, task, nimpl);
	const struct _astro_combined *c = _astro_combined_get((int)workerid);
	if (!c || !task || !task->cl || !_astro_task_allows_worker(task, workerid))
		return 0;
	/* A sequential codelet runs on one worker; a parallel one on at most max_parallelism. */
	if (c->size > 1 && (task->cl->type == STARPU_SEQ || (task->cl->max_parallelism > 0 && c->size > task->cl->max_parallelism)))
		return 0;
	/* task->workerids names the combined worker, not its members. */
	for (int i = 0; i < c->size; i++)
		if (!_astro_worker_can_execute((unsigned)c->ids[i], task, nimpl))
			return 0;
	return 1;
}

/* ------------------------------------------------- the calling worker's part */

_ASTRO_TLS struct _astro_combined_part _astro_combined_current;

int starpu_combined_worker_get_id(void)
{
	return _astro_combined_current.size ? _astro_combined_current.combined : starpu_worker_get_id();
}

int starpu_combined_worker_get_size(void)
{
	return _astro_combined_current.size ? _astro_combined_current.size : 1;
}

int starpu_combined_worker_get_rank(void)
{
	return _astro_combined_current.size ? _astro_combined_current.rank : 0;
}
