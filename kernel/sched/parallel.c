/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parallel tasks: combined workers (sets of CPU workers that run one task
 * together) and the execution of STARPU_SPMD and STARPU_FORKJOIN codelets on
 * them. A task given to a combined worker (starpu_push_local_task() or
 * task->workerid naming it) becomes one participation per member, queued
 * before anything else each member has; the first member (rank 0) runs the
 * task's whole life (data, hooks, termination), the others join it: in SPMD
 * every member calls the implementation with its rank, in fork-join the
 * others only hold their core while rank 0 runs it.
 *
 * The participations of one task are queued on all its members at once,
 * under one lock, so every worker meets them in the same order: a member
 * waiting for the others of a task never waits for one stuck in a later task.
 */
#include "sched/sched.h"

struct _astro_parallel;

/* One member's part in a parallel execution (an entry of its worker's list). */
struct _astro_participation
{
	struct _astro_parallel *p;
	int rank;
	struct _astro_participation *next;
};

struct _astro_parallel
{
	struct starpu_task *task;
	int combined;                        /* its combined worker id */
	int size;
	int arrived;                         /* futex word: members (rank > 0) ready */
	int go;                              /* futex word: rank 0 has the data, they may start */
	int finished;                        /* futex word: members (rank > 0) done */
	int refs;                            /* atomic: who still touches it */
	void **buffers;
	unsigned nimpl;
	struct _astro_participation parts[];
};

/* Queues the participations of one task on all its members at once (see above). */
static starpu_pthread_mutex_t launch_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;


static void current_set(const struct _astro_participation *part)
{
	_astro_combined_current.combined = part->p->combined;
	_astro_combined_current.size = part->p->size;
	_astro_combined_current.rank = part->rank;
}

/* ------------------------------------------------------------ execution */

static void parallel_unref(struct _astro_parallel *p)
{
	if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(p);
}

/* Waits until *word reaches at least target (futex, after a short spin). */
static void wait_at_least(int *word, int target)
{
	unsigned round = 0;
	int v;
	while ((v = __atomic_load_n(word, __ATOMIC_ACQUIRE)) < target) {
		if (round < 64)
			_astro_relax(round++);
		else
			astro_futex_wait(word, v);
	}
}

static void bump(int *word)
{
	__atomic_add_fetch(word, 1, __ATOMIC_ACQ_REL);
	astro_futex_wake_all(word);
}

int _astro_parallel_push(int combined_id, struct starpu_task *task)
{
	const struct _astro_combined *c = _astro_combined_get(combined_id);
	if (!task->cl || task->cl->type == STARPU_SEQ) {
		if (c->size > 1) {
			_astro_error("task '%s' is given to combined worker %d but its codelet is sequential: set cl->type to STARPU_SPMD or "
				     "STARPU_FORKJOIN", starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)", combined_id);
			return -EINVAL;
		}
	}
	struct _astro_parallel *p = calloc(1, sizeof(*p) + (size_t)c->size * sizeof(p->parts[0]));
	if (!p) {
		_astro_error("out of memory for a parallel task");
		return -ENOMEM;
	}
	p->task = task;
	p->combined = combined_id;
	p->size = c->size;
	p->refs = c->size;
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_PUSHED, .workerid = c->ids[0], .task = task, .job_id = _astro_job_id_of(task));
	starpu_pthread_mutex_lock(&launch_lock);
	for (int r = 0; r < c->size; r++) {
		struct _astro_worker *w = _astro_rt.workers[c->ids[r]];
		struct _astro_participation *part = &p->parts[r];
		part->p = p;
		part->rank = r;
		starpu_pthread_mutex_lock(&w->local_lock);
		if (w->parallel_tail)
			w->parallel_tail->next = part;
		else
			w->parallel_head = part;
		w->parallel_tail = part;
		__atomic_add_fetch(&w->nlocal, 1, __ATOMIC_RELAXED);
		starpu_pthread_mutex_unlock(&w->local_lock);
	}
	starpu_pthread_mutex_unlock(&launch_lock);
	for (int r = 0; r < c->size; r++)
		_astro_worker_wake(_astro_rt.workers[c->ids[r]]);
	return 0;
}

/* A member's part (rank > 0), run by its worker from its queue. */
static void member_run(struct _astro_worker *w, struct _astro_participation *part)
{
	struct _astro_parallel *p = part->p;
	struct starpu_task *task = p->task;
	bool spmd = task->cl->type == STARPU_SPMD;
	/* Read before arriving: once all arrived, rank 0 may run and end the task. */
	bump(&p->arrived);
	wait_at_least(&p->go, 1);
	if (spmd) {
		__atomic_store_n(&w->current_task, task, __ATOMIC_RELAXED);
		_astro_current_task = task;
		current_set(part);
		_astro_worker_site_enter(w, &w->codelet_site);
		w->driver->execute(w->id, task, p->buffers, p->nimpl);
		_astro_worker_site_leave(w);
		_astro_combined_current.size = 0;
		_astro_current_task = NULL;
		__atomic_store_n(&w->current_task, NULL, __ATOMIC_RELAXED);
	}
	/* Fork-join: the core stays held until rank 0 returns. */
	bump(&p->finished);
	if (!spmd)
		wait_at_least(&p->go, 2);
	parallel_unref(p);
}

/* In _astro_sched_pop, under w->local_lock with a participation queued: rank
 * 0 gets the task back (to run as usual, see _astro_parallel_execute);
 * another rank runs its part here and gets NULL. */
struct starpu_task *_astro_parallel_take(struct _astro_worker *w)
{
	struct _astro_participation *part = w->parallel_head;
	w->parallel_head = part->next;
	if (!w->parallel_head)
		w->parallel_tail = NULL;
	__atomic_sub_fetch(&w->nlocal, 1, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&w->local_lock);
	if (part->rank == 0) {
		w->parallel = part;
		return part->p->task;
	}
	member_run(w, part);
	return NULL;
}

/* Rank 0's execution of a parallel task, where a sequential task is executed. */
void _astro_parallel_execute(struct _astro_worker *w, struct starpu_task *task, void **buffers, unsigned nimpl)
{
	struct _astro_participation *part = w->parallel;
	struct _astro_parallel *p = part->p;
	w->parallel = NULL;
	p->buffers = buffers;
	p->nimpl = nimpl;
	wait_at_least(&p->arrived, p->size - 1);
	bump(&p->go);
	current_set(part);
	w->driver->execute(w->id, task, buffers, nimpl);
	/* current stays until the end is observed (_astro_parallel_ended). */
	if (task->cl->type == STARPU_SPMD) {
		wait_at_least(&p->finished, p->size - 1);
	} else {
		wait_at_least(&p->finished, p->size - 1);
		bump(&p->go); /* the fork-join members may go */
	}
	parallel_unref(p);
}

void _astro_parallel_ended(void)
{
	_astro_combined_current.size = 0;
}
