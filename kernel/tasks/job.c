/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A task's job and its dependencies: the job that follows a task through
 * its life (made with the task by starpu_task_create(), or on demand), the
 * runtime's own jobs (acquires), successors (implicit data dependencies,
 * end dependencies) and the dependencies declared with
 * starpu_task_declare_deps() (deps.c), which persist, as in StarPU: each
 * declaration is a group that counts its predecessors' completions and
 * re-arms once all have completed; a submission of the successor uses up one
 * completion of every group (or waits for it). So a graph of static tasks
 * submitted again and again keeps its order. The life of a task is task.c's.
 */
#include "tasks/tasks.h"
#include <stdarg.h>

unsigned long _astro_next_job_id;

/* ---------------------------------------------------------------- jobs */

static struct _astro_job *job_alloc(void)
{
	struct _astro_job *job = malloc(sizeof(*job));
	if (!job) {
		_astro_error("out of memory allocating a job");
		abort();
	}
	_astro_job_init(job);
	return job;
}

struct _astro_job *_astro_job_get(struct starpu_task *task)
{
	struct _astro_job *job = task->starpu_private;
	if (!job) {
		job = job_alloc();
		job->task = task;
		task->starpu_private = job;
	}
	return job;
}

struct _astro_job *_astro_job_new_internal(void)
{
	return job_alloc();
}

/* ------------------------------------------------ declared dependencies */

starpu_pthread_mutex_t _astro_dep_graph_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* One submission of job uses one completion of each of its groups (job->lock held). A
 * regenerated task thus runs once per round of its predecessors, however far ahead they run. */
static void groups_consume(struct _astro_job *job)
{
	for (unsigned i = 0; i < job->ngroups; i++)
		if (--job->groups[i]->banked == 0)
			job->ngroups_ready--;
}

/* One predecessor of g completed. Called with that predecessor's lock held
 * (so g cannot be freed meanwhile); returns the successor to release, if any. */
struct _astro_job *_astro_group_notify(struct _astro_dep_group *g)
{
	struct _astro_job *succ = g->succ, *release = NULL;
	astro_lock_acquire(&succ->lock);
	if (--g->remaining == 0) {
		g->remaining = g->ndeps;
		if (g->banked++ == 0)
			succ->ngroups_ready++;
		if (succ->waiting_groups && succ->ngroups_ready == succ->ngroups) {
			succ->waiting_groups = false;
			groups_consume(succ);
			release = succ;
		}
	}
	astro_lock_release(&succ->lock);
	return release;
}

/* At submission: use one completion of every group, or wait for them. */
void _astro_groups_claim(struct _astro_job *job)
{
	astro_lock_acquire(&job->lock);
	if (job->ngroups_ready == job->ngroups) {
		groups_consume(job);
	} else {
		job->waiting_groups = true;
		__atomic_add_fetch(&job->pending, 1, __ATOMIC_ACQ_REL);
	}
	astro_lock_release(&job->lock);
}

static __attribute__((noinline, cold)) void groups_forget(struct _astro_job *job)
{
	starpu_pthread_mutex_lock(&_astro_dep_graph_lock);
	for (unsigned i = 0; i < job->ngroups; i++) {
		struct _astro_dep_group *g = job->groups[i];
		for (unsigned k = 0; k < g->ndeps; k++) {
			struct _astro_job *pred = g->preds[k];
			if (!pred)
				continue;
			astro_lock_acquire(&pred->lock);
			for (unsigned j = 0; j < pred->npred_of; j++)
				if (pred->pred_of[j] == g) {
					pred->pred_of[j] = pred->pred_of[--pred->npred_of];
					break;
				}
			astro_lock_release(&pred->lock);
		}
		free(g->preds);
		free(g);
	}
	astro_lock_acquire(&job->lock);
	for (unsigned i = 0; i < job->npred_of; i++) {
		struct _astro_dep_group *g = job->pred_of[i];
		for (unsigned k = 0; k < g->ndeps; k++)
			if (g->preds[k] == job)
				g->preds[k] = NULL;
	}
	astro_lock_release(&job->lock);
	starpu_pthread_mutex_unlock(&_astro_dep_graph_lock);
	free(job->groups);
	free(job->pred_of);
}

void _astro_job_free(struct _astro_job *job)
{
	if (!job)
		return;
	if (job->groups || job->pred_of)
		groups_forget(job);
	_ASTRO_INSTR_JOB_FORGET(job);
	if (job->succs)
		free(job->succs);
	if (job->links && job->links != job->inline_links)
		free(job->links);
	if (!job->embedded)
		free(job);
}

void _astro_job_for_each_waiter(struct _astro_job *pred, void (*fn)(struct _astro_job *waiter, bool is_end, void *arg), void *arg)
{
	astro_lock_acquire(&pred->lock);
	for (unsigned i = 0; i < pred->nsuccs; i++) {
		uintptr_t entry = (uintptr_t)pred->succs[i];
		fn((struct _astro_job *)(entry & ~_ASTRO_END_DEP_BIT), (entry & _ASTRO_END_DEP_BIT) != 0, arg);
	}
	for (unsigned i = 0; i < pred->npred_of; i++)
		fn(pred->pred_of[i]->succ, false, arg);
	astro_lock_release(&pred->lock);
}

int _astro_job_add_succ_entry(struct _astro_job *pred, void *entry)
{
	bool closed = _astro_job_link(pred);
	astro_lock_acquire(&pred->lock);
	if (closed || __atomic_load_n(&pred->terminated, __ATOMIC_ACQUIRE)) {
		astro_lock_release(&pred->lock);
		return 0;
	}
	if (pred->nsuccs == pred->succs_cap) {
		pred->succs_cap = pred->succs_cap ? 2 * pred->succs_cap : 4;
		pred->succs = realloc(pred->succs, pred->succs_cap * sizeof(*pred->succs));
	}
	pred->succs[pred->nsuccs++] = entry;
	astro_lock_release(&pred->lock);
	return 1;
}

int _astro_job_add_succ(struct _astro_job *pred, struct _astro_job *succ)
{
	if (pred == succ)
		return 0;
	/* Count the dependency first: pred may terminate as soon as it is listed. */
	__atomic_add_fetch(&succ->pending, 1, __ATOMIC_ACQ_REL);
	if (_astro_job_add_succ_entry(pred, succ))
		return 1;
	__atomic_sub_fetch(&succ->pending, 1, __ATOMIC_ACQ_REL);
	return 0;
}
