/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Submission throttling (StarPU's STARPU_LIMIT_MAX_SUBMITTED_TASKS and
 * STARPU_LIMIT_MIN_SUBMITTED_TASKS): when the submitted tasks not yet
 * complete reach the maximum, starpu_task_submit() holds the application's
 * thread until they are down to the minimum, so that a program submitting a
 * large graph does not hold all of it (its tasks, their data) at once.
 *
 * As in StarPU, both variables must be set, and the submissions the runtime
 * makes for itself are never held. Where StarPU would hang or abort, the
 * submission goes on instead, over the limit:
 * - from a task, a callback or a worker thread (StarPU asserts there): the
 *   thread that completes tasks must not wait for completions;
 * - when nothing can complete without the application: no submitted task is
 *   ready (they all wait for a tag, a data the application holds, a task not
 *   yet submitted), or the runtime is paused (starpu_pause). The wait also
 *   ends when this becomes true during it.
 * StarPU holds a submission when the count is above the maximum; as its
 * documentation says, here a submission is held when the count has reached
 * it, so that one submitting thread never has more in flight (several threads
 * checking at once may each pass it by one task).
 *
 * Unset, the task path pays one predictable branch (starpu_task_submit reads
 * _astro_throttling).
 */
#include "tasks/tasks.h"

bool _astro_throttling;

/* Hold submissions when the count reaches max; release them at resume_at (below max). */
static long limit_max, resume_at;

/* Submissions the runtime makes from inside another one (partition switches): never held. */
_ASTRO_TLS unsigned _astro_submit_internal_depth;

static int read_limit(const char *name, int *out)
{
	/* -1 is StarPU's "unset" (what its getter returns for an absent variable). */
	int v;
	int ret = _astro_env_int(name, -1, INT_MAX, NULL, &v);
	if (ret != 1 || v == -1)
		return ret;
	*out = v;
	return 1;
}

/* The limits set by the environment at init or by the program since (-1: unset). */
static int wanted_max = -1, wanted_min = -1;

/* Throttles with the limits wanted, once both are set and make sense (else said, as fn, and not throttled). */
static void apply_limits(const char *fn)
{
	__atomic_store_n(&_astro_throttling, false, __ATOMIC_RELAXED);
	if (wanted_max < 0 || wanted_min < 0)
		return;
	if (wanted_max == 0 || wanted_min > wanted_max) {
		_astro_error("%s: maximum %d and minimum %d of submitted tasks: submission is not throttled; the maximum "
			     "must be at least 1 and the minimum at most the maximum", fn, wanted_max, wanted_min);
		return;
	}
	limit_max = wanted_max;
	resume_at = wanted_min < wanted_max ? wanted_min : wanted_max - 1;
	__atomic_store_n(&_astro_throttling, true, __ATOMIC_RELAXED);
}

/* As in StarPU, the program sets them after starpu_init() (which reads the environment); one set alone does not throttle. */
void starpu_set_limit_max_submitted_tasks(int limit_max_)
{
	wanted_max = limit_max_ < 0 ? -1 : limit_max_;
	apply_limits("starpu_set_limit_max_submitted_tasks");
}

void starpu_set_limit_min_submitted_tasks(int limit_min)
{
	wanted_min = limit_min < 0 ? -1 : limit_min;
	apply_limits("starpu_set_limit_min_submitted_tasks");
}

void _astro_throttle_init(void)
{
	int max = -1, min = -1;
	wanted_max = wanted_min = -1;
	int got_max = read_limit("STARPU_LIMIT_MAX_SUBMITTED_TASKS", &max);
	int got_min = read_limit("STARPU_LIMIT_MIN_SUBMITTED_TASKS", &min);
	_astro_throttling = false;
	if (got_max < 0 || got_min < 0)
		return; /* already reported */
	/* One alone is kept: the program may set the other (starpu_set_limit_*_submitted_tasks). */
	wanted_max = got_max ? max : -1;
	wanted_min = got_min ? min : -1;
	if (got_max != got_min) {
		_astro_error("%s is set but not %s: task submission is throttled only when both are, as in StarPU; "
			     "set %s too (the count submission resumes at, below the maximum)",
			     got_max ? "STARPU_LIMIT_MAX_SUBMITTED_TASKS" : "STARPU_LIMIT_MIN_SUBMITTED_TASKS",
			     got_max ? "STARPU_LIMIT_MIN_SUBMITTED_TASKS" : "STARPU_LIMIT_MAX_SUBMITTED_TASKS",
			     got_max ? "STARPU_LIMIT_MIN_SUBMITTED_TASKS" : "STARPU_LIMIT_MAX_SUBMITTED_TASKS");
		return;
	}
	if (!got_max)
		return;
	if (max == 0 || min > max) {
		_astro_error("STARPU_LIMIT_MAX_SUBMITTED_TASKS=%d and STARPU_LIMIT_MIN_SUBMITTED_TASKS=%d: ignored, submission is not throttled; "
			     "the maximum must be at least 1 and the minimum at most the maximum", max, min);
		wanted_max = wanted_min = -1;
		return;
	}
	apply_limits("starpu_init");
}

/* Whether submitted tasks can complete without the application doing something first. */
static bool stuck(void)
{
	return _astro_nready() <= 0 || __atomic_load_n(&_astro_rt.paused, __ATOMIC_RELAXED);
}

void _astro_throttle(void)
{
	if (_astro_submit_internal_depth || _astro_called_back())
		return;
	if (_astro_nsubmitted() < limit_max || stuck())
		return;
	/* Policies that hold tasks back until asked (do_schedule) must let them go, or the wait never ends. */
	starpu_do_schedule();
	_ASTRO_OBSERVE(ASTRO_MOMENT_SUBMIT_THROTTLE_BEGIN, .workerid = -1);
	_astro_task_wait_for_n_unless("starpu_task_submit (STARPU_LIMIT_MAX_SUBMITTED_TASKS)", (unsigned)resume_at, stuck);
	_ASTRO_OBSERVE(ASTRO_MOMENT_SUBMIT_THROTTLE_END, .workerid = -1);
}
