/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Dependencies the application declares between tasks: starpu_task_declare_deps
 * (groups that persist, job.c), end dependencies (a task ends only once
 * others did), and the successors a task has.
 */
#include "tasks/tasks.h"
#include <stdarg.h>

#if defined(__SANITIZE_ADDRESS__)
#define ASTRO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASTRO_ASAN 1
#endif
#endif
#ifdef ASTRO_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Without AddressSanitizer a freed task's block stays the runtime's (recycled,
 * recycle.c) and keeps the freed mark until it is reused; with it, blocks go
 * back to malloc and the sanitizer's shadow tells, without reading the block.
 * The mark is read in a block another thread may be freeing: what ThreadSanitizer
 * would call a race is the point of the check. */
__attribute__((no_sanitize("thread"))) bool _astro_task_was_freed(const struct starpu_task *task)
{
#ifdef ASTRO_ASAN
	if (__asan_address_is_poisoned(&task->magic))
		return true;
#endif
	return __atomic_load_n(&task->magic, __ATOMIC_RELAXED) == _ASTRO_TASK_FREED_MAGIC;
}

/* Dependency i of a declaration by caller: NULL, the task itself or a freed task is said, and ignored. */
static bool dependency_usable(const char *caller, struct starpu_task *task, unsigned i, struct starpu_task *dep)
{
	if (dep && dep != task && !_astro_task_was_freed(dep))
		return true;
	const char *name = starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)";
	if (dep && dep != task)
		_astro_error("%s: dependency %u of task '%s' was already freed (a task with destroy=1, starpu_task_create()'s default, "
			     "is freed once it completed): ignored; declare the dependency before that task completes, "
			     "or set its destroy to 0 and starpu_task_destroy() it yourself", caller, i, name);
	else
		_astro_error("%s: dependency %u of task '%s' is %s: ignored", caller, i, name, dep ? "the task itself" : "NULL");
	return false;
}

void starpu_task_declare_deps_array(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[])
{
	if (!task || (ndeps && !task_array)) {
		_astro_error("starpu_task_declare_deps_array: NULL task or dependency array");
		return;
	}
	struct _astro_job *job = _astro_job_get(task);
	if (job->submitted && __atomic_load_n(&job->pending, __ATOMIC_ACQUIRE) == 0) {
		_astro_error("starpu_task_declare_deps: task '%s' is already ready, the dependencies are ignored: declare them before submitting it",
			     starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)");
		return;
	}
	struct _astro_dep_group *g = calloc(1, sizeof(*g));
	g->succ = job;
	g->preds = calloc(ndeps ? ndeps : 1, sizeof(*g->preds));
	for (unsigned i = 0; i < ndeps; i++) {
		if (dependency_usable("starpu_task_declare_deps_array", task, i, task_array[i])) {
			g->preds[g->ndeps] = _astro_job_get(task_array[i]);
			_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_DEPENDENCY, .workerid = _astro_worker_id(), .task = task, .job_id = job->id,
				       .other_id = g->preds[g->ndeps]->id, .nimpl = ASTRO_DEP_TASK);
			g->ndeps++;
		}
	}
	if (g->ndeps == 0) {
		free(g->preds);
		free(g);
		return;
	}
	g->remaining = g->ndeps;
	starpu_pthread_mutex_lock(&_astro_dep_graph_lock);
	astro_lock_acquire(&job->lock);
	job->groups = realloc(job->groups, (job->ngroups + 1) * sizeof(*job->groups));
	job->groups[job->ngroups++] = g;
	astro_lock_release(&job->lock);
	struct _astro_job *release = NULL;
	for (unsigned k = 0; k < g->ndeps; k++) {
		struct _astro_job *pred = g->preds[k];
		bool closed = _astro_job_link(pred);
		astro_lock_acquire(&pred->lock);
		if (pred->npred_of == pred->pred_of_cap) {
			pred->pred_of_cap = pred->pred_of_cap ? 2 * pred->pred_of_cap : 2;
			pred->pred_of = realloc(pred->pred_of, pred->pred_of_cap * sizeof(*pred->pred_of));
		}
		pred->pred_of[pred->npred_of++] = g;
		/* A predecessor that already completed counts as one completion now. */
		if (closed || __atomic_load_n(&pred->terminated, __ATOMIC_ACQUIRE)) {
			struct _astro_job *r = _astro_group_notify(g);
			if (r)
				release = r;
		}
		astro_lock_release(&pred->lock);
	}
	starpu_pthread_mutex_unlock(&_astro_dep_graph_lock);
	if (release)
		_astro_job_release(release);
}

/* The variadic forms: collect the ndeps tasks that follow ndeps, then call the array form. */
#define CALL_WITH_TASK_VARARGS(array_fn, task, ndeps) do { \
	struct starpu_task *deps_[(ndeps) ? (ndeps) : 1]; \
	va_list ap_; \
	va_start(ap_, ndeps); \
	for (unsigned i_ = 0; i_ < (ndeps); i_++) \
		deps_[i_] = va_arg(ap_, struct starpu_task *); \
	va_end(ap_); \
	array_fn(task, ndeps, deps_); \
} while (0)

void starpu_task_declare_deps(struct starpu_task *task, unsigned ndeps, ...)
{
	CALL_WITH_TASK_VARARGS(starpu_task_declare_deps_array, task, ndeps);
}

void starpu_task_end_dep_add(struct starpu_task *t, int nb_deps)
{
	__atomic_add_fetch(&_astro_job_get(t)->end_pending, nb_deps, __ATOMIC_ACQ_REL);
}

void starpu_task_end_dep_release(struct starpu_task *t)
{
	_astro_job_terminate(_astro_job_get(t), -1);
}

void starpu_task_declare_end_deps_array(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[])
{
	struct _astro_job *job = _astro_job_get(task);
	for (unsigned i = 0; i < ndeps; i++) {
		if (!dependency_usable("starpu_task_declare_end_deps_array", task, i, task_array[i]))
			continue;
		__atomic_add_fetch(&job->end_pending, 1, __ATOMIC_ACQ_REL);
		if (!_astro_job_add_succ_entry(_astro_job_get(task_array[i]), (void *)((uintptr_t)job | _ASTRO_END_DEP_BIT)))
			__atomic_sub_fetch(&job->end_pending, 1, __ATOMIC_ACQ_REL);
	}
}

void starpu_task_declare_end_deps(struct starpu_task *task, unsigned ndeps, ...)
{
	CALL_WITH_TASK_VARARGS(starpu_task_declare_end_deps_array, task, ndeps);
}

int starpu_task_get_task_succs(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[])
{
	struct _astro_job *job = _astro_job_get(task);
	unsigned n = 0;
	astro_lock_acquire(&job->lock);
	for (unsigned i = 0; i < job->nsuccs + job->npred_of; i++) {
		struct _astro_job *succ = i < job->nsuccs ? (struct _astro_job *)((uintptr_t)job->succs[i] & ~_ASTRO_END_DEP_BIT)
							  : job->pred_of[i - job->nsuccs]->succ;
		if (!succ->task)
			continue;
		if (n < ndeps)
			task_array[n] = succ->task;
		n++;
	}
	astro_lock_release(&job->lock);
	return (int)n;
}

int starpu_task_get_task_scheduled_succs(struct starpu_task *task, unsigned ndeps, struct starpu_task *task_array[])
{
	return starpu_task_get_task_succs(task, ndeps, task_array);
}
