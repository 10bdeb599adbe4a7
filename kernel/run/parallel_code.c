/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parallel code on a context's cores (starpu_sched_ctx_exec_parallel_code)
 * and bookings of workers for a task (starpu_sched_ctx_book_workers_for_task):
 * CPU workers held on their cores, each by a task pinned to it, while
 * someone else uses those cores.
 */
#include "run/run.h"

/* CPU workers held on their cores, each by a task pinned to it, while someone
 * else uses those cores (parallel code, a booking). */
struct hold
{
	int started;                         /* futex word: workers holding */
	int release;                         /* futex word: 1 once they may go */
	int left;                            /* futex word: workers still reading this */
};

static void wait_until_at_least(int *word, int target)
{
	int v;
	while ((v = __atomic_load_n(word, __ATOMIC_ACQUIRE)) < target)
		astro_futex_wait(word, v);
}

static void hold_worker(void *buffers[], void *arg)
{
	(void)buffers;
	struct hold *h = arg;
	__atomic_add_fetch(&h->started, 1, __ATOMIC_ACQ_REL);
	astro_futex_wake_all(&h->started);
	wait_until_at_least(&h->release, 1);
	/* The last touch of h: the releaser frees it once every worker is past it. */
	__atomic_sub_fetch(&h->left, 1, __ATOMIC_ACQ_REL);
	astro_futex_wake_all(&h->left);
}

static struct starpu_codelet hold_cl = {
	.cpu_funcs = { hold_worker },
	.nbuffers = 0,
	.name = "parallel_code_hold",
};

/* Holds the CPU workers of ids but skip: each ends the task it runs, then holds its core. Returns once they all do. */
static struct hold *hold_workers(const int *ids, unsigned n, int skip)
{
	struct hold *h = calloc(1, sizeof(*h));
	int held = 0;
	for (unsigned i = 0; i < n; i++) {
		if (ids[i] == skip || _astro_rt.workers[ids[i]]->arch != STARPU_CPU_WORKER)
			continue;
		struct starpu_task *task = starpu_task_create();
		task->cl = &hold_cl;
		task->cl_arg = h;
		task->sched_ctx = STARPU_GLOBAL_SCHED_CTX;
		task->execute_on_a_specific_worker = 1;
		task->workerid = (unsigned)ids[i];
		__atomic_add_fetch(&h->left, 1, __ATOMIC_RELAXED);
		if (starpu_task_submit(task) != 0) {
			__atomic_sub_fetch(&h->left, 1, __ATOMIC_RELAXED);
			starpu_task_destroy(task);
			continue;
		}
		held++;
	}
	wait_until_at_least(&h->started, held);
	return h;
}

/* Lets the workers of h go, and frees it once none reads it. */
static void release_hold(struct hold *h)
{
	__atomic_store_n(&h->release, 1, __ATOMIC_RELEASE);
	astro_futex_wake_all(&h->release);
	int v;
	while ((v = __atomic_load_n(&h->left, __ATOMIC_ACQUIRE)) > 0)
		astro_futex_wait(&h->left, v);
	free(h);
}

void *starpu_sched_ctx_exec_parallel_code(void *(*func)(void *), void *param, unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return NULL;
	if (!func) {
		_astro_error("starpu_sched_ctx_exec_parallel_code: no function: give the code to run on the context's cores");
		return NULL;
	}
	if (_astro_forbid_blocking("starpu_sched_ctx_exec_parallel_code", "call it from the application thread") != 0)
		return NULL;
	int *ids;
	unsigned n = starpu_sched_ctx_get_workers_list(sched_ctx_id, &ids);
	/* Each CPU worker of the context ends what it runs, then holds its core until func returns. */
	struct hold *h = hold_workers(ids, n, -1);
	free(ids);
	void *ret = func(param);
	release_hold(h);
	return ret;
}

/* ---------------------------------------------------------- bookings */

/* starpu_sched_ctx_book_workers_for_task(): per context and master, the workers held for it. */
static struct hold *booked[STARPU_NMAX_SCHED_CTXS][STARPU_NMAXWORKERS];
static starpu_pthread_mutex_t booked_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static struct hold booking_coming;      /* a booking whose workers are not all held yet */

int starpu_sched_ctx_book_workers_for_task(unsigned sched_ctx_id, int *workerids, int nworkers)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return -EINVAL;
	if (nworkers <= 0 || !workerids || nworkers > STARPU_NMAXWORKERS) {
		_astro_error("%s: %d workers: give an array of worker ids and its length (1 to %d)", __func__, nworkers, STARPU_NMAXWORKERS);
		return -EINVAL;
	}
	int self = _astro_worker_id(), master = -1;
	for (int i = 0; i < nworkers; i++) {
		if (workerids[i] < 0 || (unsigned)workerids[i] >= _astro_rt.nworkers) {
			_astro_error("%s: worker id %d does not exist: ids go from 0 to %u", __func__, workerids[i], _astro_rt.nworkers - 1);
			return -EINVAL;
		}
		if (master < 0 || workerids[i] < master)
			master = workerids[i];
	}
	/* The calling worker, when it is one of them, is their master: it cannot hold itself. */
	for (int i = 0; i < nworkers; i++)
		if (workerids[i] == self)
			master = self;
	unsigned id = sched_ctx_id == STARPU_NMAX_SCHED_CTXS ? 0 : sched_ctx_id;
	starpu_pthread_mutex_lock(&booked_lock);
	if (booked[id][master]) {
		starpu_pthread_mutex_unlock(&booked_lock);
		_astro_error("%s: worker %d already has workers booked in context %u: unbook them first "
			     "(starpu_sched_ctx_unbook_workers_for_task)", __func__, master, id);
		return -EBUSY;
	}
	/* Taken while its workers come (another booking of them may hold them until it is unbooked). */
	booked[id][master] = &booking_coming;
	starpu_pthread_mutex_unlock(&booked_lock);
	struct hold *h = hold_workers(workerids, (unsigned)nworkers, master);
	starpu_pthread_mutex_lock(&booked_lock);
	booked[id][master] = h;
	starpu_pthread_mutex_unlock(&booked_lock);
	return master;
}

void starpu_sched_ctx_unbook_workers_for_task(unsigned sched_ctx_id, int master)
{
	if (!_astro_ctx_get(sched_ctx_id, __func__))
		return;
	unsigned id = sched_ctx_id == STARPU_NMAX_SCHED_CTXS ? 0 : sched_ctx_id;
	struct hold *h = NULL;
	starpu_pthread_mutex_lock(&booked_lock);
	if (master >= 0 && master < STARPU_NMAXWORKERS && booked[id][master] && booked[id][master] != &booking_coming) {
		h = booked[id][master];
		booked[id][master] = NULL;
	}
	starpu_pthread_mutex_unlock(&booked_lock);
	if (!h) {
		_astro_error("%s: worker %d has no workers booked in context %u: give the master "
			     "starpu_sched_ctx_book_workers_for_task() returned", __func__, master, id);
		return;
	}
	release_hold(h);
}
