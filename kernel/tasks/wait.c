/*
 * Waiting for tasks: one task (starpu_task_wait, a futex on its job), the
 * tasks of a context, or the count of submitted tasks not complete falling
 * to n (starpu_task_wait_for_all and the others), which completions signal
 * (_astro_task_completed_count, task.c).
 */
#include "tasks/tasks.h"

/* Polls of a waiting application thread before it sleeps (see _astro_relax). */
#define WAIT_SPINS 256

/* Neither submitted, nor terminating (its termination may be resubmitting it: a
 * regenerated task), nor complete: starpu_task_create() embeds the job, so only
 * its state tells a fresh task from a submitted one. */
static bool job_never_submitted(struct _astro_job *job)
{
	if (__atomic_load_n(&job->done, __ATOMIC_ACQUIRE) == JOB_DONE || __atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE))
		return false;
	starpu_pthread_mutex_lock(&job->lock);
	bool terminating = __atomic_load_n(&job->terminated, __ATOMIC_ACQUIRE);
	starpu_pthread_mutex_unlock(&job->lock);
	return !terminating && !__atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) != JOB_DONE;
}

int starpu_task_finished(struct starpu_task *task)
{
	if (!task) {
		_astro_error("starpu_task_finished: NULL task");
		return 0;
	}
	struct _astro_job *job = task->starpu_private;
	return job && __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) == JOB_DONE && !__atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE);
}

int starpu_task_wait(struct starpu_task *task)
{
	if (!task) {
		_astro_error("starpu_task_wait: NULL task");
		return -EINVAL;
	}
	struct _astro_job *job = task->starpu_private;
	if (task->detach) {
		_astro_error("starpu_task_wait: task '%s' is detached: set task->detach = 0 before submitting it to wait for it",
			     starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)");
		return -EINVAL;
	}
	if (!job || job_never_submitted(job)) {
		_astro_error("starpu_task_wait: task '%s' was never submitted, waiting for it would never return: submit it first (starpu_task_submit)",
			     starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)");
		return -EINVAL;
	}
	int ret = _astro_forbid_blocking("starpu_task_wait", NULL);
	if (ret)
		return ret;
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_BEGIN, .workerid = -1, .task = task, .job_id = job->id);
	/* Short tasks complete within microseconds: look a while before paying for a futex sleep and wake. */
	for (unsigned i = 0; i < WAIT_SPINS && __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) != JOB_DONE; i++)
		_astro_relax(i);
	int expected = JOB_RUNNING;
	__atomic_compare_exchange_n(&job->done, &expected, JOB_WAITED, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	while (__atomic_load_n(&job->done, __ATOMIC_ACQUIRE) != JOB_DONE)
		astro_futex_wait(&job->done, JOB_WAITED);
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_END, .workerid = -1, .task = task, .job_id = job->id);
	if (task->destroy)
		starpu_task_destroy(task);
	return 0;
}

int starpu_task_wait_array(struct starpu_task **tasks, unsigned nb_tasks)
{
	for (unsigned i = 0; i < nb_tasks; i++) {
		int ret = starpu_task_wait(tasks[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* How often _astro_task_wait_for_n_unless() looks at its give_up(). */
#define GIVE_UP_POLL_NS 10000000L

void _astro_task_wait_for_n_unless(unsigned n, bool (*give_up)(void))
{
	starpu_pthread_mutex_lock(&_astro_rt.wait_lock);
	/* Set before the count is read (both seq_cst): a completer either sees us or we see its decrement. */
	if ((long)n > __atomic_load_n(&_astro_rt.wait_threshold, __ATOMIC_SEQ_CST))
		__atomic_store_n(&_astro_rt.wait_threshold, (long)n, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&_astro_rt.all_waiters, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&_astro_rt.nsubmitted, __ATOMIC_SEQ_CST) > (long)n) {
		if (!give_up) {
			starpu_pthread_cond_wait(&_astro_rt.wait_cond, &_astro_rt.wait_lock);
			continue;
		}
		if (give_up())
			break;
		astro_cond_wait_for(&_astro_rt.wait_cond, &_astro_rt.wait_lock, GIVE_UP_POLL_NS);
	}
	if (__atomic_sub_fetch(&_astro_rt.all_waiters, 1, __ATOMIC_SEQ_CST) == 0)
		__atomic_store_n(&_astro_rt.wait_threshold, 0, __ATOMIC_SEQ_CST);
	starpu_pthread_mutex_unlock(&_astro_rt.wait_lock);
}

/* Waits until at most n submitted tasks are not complete. */
void _astro_task_wait_for_n(unsigned n)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_BEGIN, .workerid = -1);
	_astro_task_wait_for_n_unless(n, NULL);
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_END, .workerid = -1);
}

int starpu_task_wait_for_n_submitted(unsigned n)
{
	int ret = _astro_forbid_blocking("starpu_task_wait_for_n_submitted", NULL);
	if (ret)
		return ret;
	_astro_task_wait_for_n(n);
	return 0;
}

static int wait_for_all(const char *call)
{
	int ret = _astro_forbid_blocking(call, NULL);
	if (ret)
		return ret;
	starpu_do_schedule();
	_astro_task_wait_for_n(0);
	return 0;
}

int starpu_task_wait_for_all(void)
{
	return wait_for_all("starpu_task_wait_for_all");
}

int starpu_task_wait_for_no_ready(void)
{
	return wait_for_all("starpu_task_wait_for_no_ready");
}

int starpu_task_nsubmitted(void)
{
	return (int)__atomic_load_n(&_astro_rt.nsubmitted, __ATOMIC_RELAXED);
}

int starpu_task_nready(void)
{
	return (int)__atomic_load_n(&_astro_rt.nready, __ATOMIC_RELAXED);
}

int starpu_task_wait_for_all_in_ctx(unsigned sched_ctx_id)
{
	struct _astro_sched_ctx *c = _astro_ctx_get(sched_ctx_id, __func__);
	if (!c)
		return -EINVAL;
	int ret = _astro_forbid_blocking("starpu_task_wait_for_all_in_ctx", NULL);
	if (ret)
		return ret;
	starpu_do_schedule();
	/* The global context's tasks are not counted apart (the task path stays as it was): all of them. */
	if (c == &_astro_ctxs[0]) {
		_astro_task_wait_for_n(0);
		return 0;
	}
	_astro_ctx_wait_tasks(c);
	/* Its masters hand tasks down to its nested contexts: those are its tasks too. */
	uint32_t children = __atomic_load_n(&c->children, __ATOMIC_SEQ_CST);
	for (unsigned id = 1; id < STARPU_NMAX_SCHED_CTXS; id++)
		if (children & (1u << id))
			starpu_task_wait_for_all_in_ctx(id);
	return 0;
}
