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

/* A parallel execution of task by size members (combined worker combined, -1: none named), its
 * parts ranked, in *out; -EINVAL or -ENOMEM, said, when the task cannot run so (call names the caller). */
static int parallel_new(struct starpu_task *task, int combined, int size, const char *call, struct _astro_parallel **out)
{
	if (size > 1 && (!task->cl || task->cl->type == STARPU_SEQ)) {
		_astro_error("%s: task '%s' is given to %d workers but its codelet is sequential: set cl->type to STARPU_SPMD or "
			     "STARPU_FORKJOIN", call, starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)", size);
		return -EINVAL;
	}
	struct _astro_parallel *p = calloc(1, sizeof(*p) + (size_t)size * sizeof(p->parts[0]));
	if (!p) {
		_astro_error("%s: out of memory for a parallel task", call);
		return -ENOMEM;
	}
	p->task = task;
	p->combined = combined;
	p->size = size;
	p->refs = size;
	for (int r = 0; r < size; r++) {
		p->parts[r].p = p;
		p->parts[r].rank = r;
	}
	*out = p;
	return 0;
}

int _astro_parallel_push(int combined_id, struct starpu_task *task)
{
	const struct _astro_combined *c = _astro_combined_get(combined_id);
	struct _astro_parallel *p;
	int ret = parallel_new(task, combined_id, c->size, "starpu_push_local_task", &p);
	if (ret)
		return ret;
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_PUSHED, .workerid = c->ids[0], .task = task, .job_id = _astro_job_id_of(task));
	starpu_pthread_mutex_lock(&launch_lock);
	for (int r = 0; r < c->size; r++) {
		struct _astro_worker *w = _astro_rt.workers[c->ids[r]];
		struct _astro_participation *part = &p->parts[r];
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

/* ------------------------------------------------ StarPU's way: copies of the task */

/* A policy written for StarPU prepares a task (starpu_parallel_task_barrier_init()) and gives one
 * copy of it (starpu_task_dup(), which shares the task's job: _astro_parallel_alias_job()) to each
 * member. The prepared executions wait here, by job, until their last copy is taken; a copy popped
 * by a worker takes the next rank, the last one rank 0 (_astro_parallel_alias_take()). */
struct alias_group
{
	const void *job;
	struct _astro_parallel *p;
	int taken;                           /* copies popped */
};
static struct
{
	starpu_pthread_mutex_t lock;
	struct alias_group *groups;
	unsigned n, cap;
	unsigned live;                       /* atomic: n, read without the lock by starpu_task_dup() */
} aliases = { .lock = STARPU_PTHREAD_MUTEX_INITIALIZER };

/* Under aliases.lock. */
static struct alias_group *alias_group_of(const void *job)
{
	for (unsigned i = 0; i < aliases.n; i++)
		if (aliases.groups[i].job == job)
			return &aliases.groups[i];
	return NULL;
}

static void barrier_init(struct starpu_task *task, int combined, int size, const char *call)
{
	/* A task a policy is given is ready (sched.c), and stays so until a worker runs it. */
	if (!task || !task->starpu_private || task->status != STARPU_TASK_READY) {
		_astro_error("%s: %s: give it a task the policy was pushed", call,
			     !task ? "the task is NULL" : "the task was not submitted, or is not ready");
		return;
	}
	struct _astro_parallel *p;
	if (parallel_new(task, combined, size, call, &p))
		return;
	starpu_pthread_mutex_lock(&aliases.lock);
	struct alias_group *g = alias_group_of(task->starpu_private);
	if (g) {
		_astro_error("%s: task '%s' is already prepared for %d workers and not all its copies ran: it stays so", call,
			     starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)", g->p->size);
		starpu_pthread_mutex_unlock(&aliases.lock);
		free(p);
		return;
	}
	if (aliases.n == aliases.cap) {
		unsigned cap = aliases.cap ? 2 * aliases.cap : 8;
		struct alias_group *grown = realloc(aliases.groups, cap * sizeof(*grown));
		if (!grown) {
			starpu_pthread_mutex_unlock(&aliases.lock);
			free(p);
			_astro_error("%s: out of memory", call);
			return;
		}
		aliases.groups = grown;
		aliases.cap = cap;
	}
	aliases.groups[aliases.n++] = (struct alias_group){ .job = task->starpu_private, .p = p };
	__atomic_store_n(&aliases.live, aliases.n, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&aliases.lock);
}

void starpu_parallel_task_barrier_init(struct starpu_task *task, int workerid)
{
	const struct _astro_combined *c = _astro_combined_get(workerid);
	if (!c && (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers)) {
		_astro_error("starpu_parallel_task_barrier_init: no worker or combined worker %d (%u workers, %u combined workers): "
			     "give one a policy chose", workerid, _astro_rt.nworkers, starpu_combined_worker_get_count());
		return;
	}
	barrier_init(task, workerid, c ? c->size : 1, "starpu_parallel_task_barrier_init");
}

void starpu_parallel_task_barrier_init_n(struct starpu_task *task, int worker_size)
{
	if (worker_size < 1 || (unsigned)worker_size > _astro_rt.nworkers) {
		_astro_error("starpu_parallel_task_barrier_init_n: %d workers asked for, there are %u: give 1 to the number of workers",
			     worker_size, _astro_rt.nworkers);
		return;
	}
	barrier_init(task, -1, worker_size, "starpu_parallel_task_barrier_init_n");
}

void *_astro_parallel_alias_job(const struct starpu_task *task)
{
	if (STARPU_LIKELY(__atomic_load_n(&aliases.live, __ATOMIC_ACQUIRE) == 0) || !task->starpu_private)
		return NULL;
	starpu_pthread_mutex_lock(&aliases.lock);
	struct alias_group *g = alias_group_of(task->starpu_private);
	starpu_pthread_mutex_unlock(&aliases.lock);
	return g ? task->starpu_private : NULL;
}

struct starpu_task *_astro_parallel_alias_take(struct _astro_worker *w, struct starpu_task *alias)
{
	const void *job = alias->starpu_private;
	starpu_pthread_mutex_lock(&aliases.lock);
	struct alias_group *g = alias_group_of(job);
	struct _astro_parallel *p = g ? g->p : NULL;
	/* The last copy taken runs the task itself (rank 0), the others are members. A policy makes
	 * each copy (starpu_task_dup(), reading the whole task) before giving it away, so once the
	 * last is taken no copy is being made any more: rank 0 may then write the task (its status,
	 * its buffers) while no starpu_task_dup() reads it. */
	int rank = -1;
	if (g)
		rank = ++g->taken == p->size ? 0 : g->taken;
	if (g && g->taken == p->size) {
		*g = aliases.groups[--aliases.n]; /* its last copy: the group is done */
		__atomic_store_n(&aliases.live, aliases.n, __ATOMIC_RELEASE);
	}
	starpu_pthread_mutex_unlock(&aliases.lock);
	/* The copy is the runtime's (the policy gave it away): what starpu_task_dup() gave it is freed,
	 * the shared job is not touched. */
	if (alias->cl_arg_free)
		free(alias->cl_arg);
	free(alias->dyn_handles);
	free(alias->dyn_modes);
	free(alias);
	if (!p) {
		_astro_error("%s was given more copies of a parallel task than starpu_parallel_task_barrier_init() prepared: "
			     "the extra copy is dropped", w->name);
		return NULL;
	}
	if (rank == 0) {
		w->parallel = &p->parts[0];
		return p->task;
	}
	member_run(w, &p->parts[rank]);
	return NULL;
}
