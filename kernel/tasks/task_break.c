/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_sched_task_break(): policies call it when they have decided where a
 * task goes; with STARPU_TASK_BREAK_ON_SCHED naming that task's job id, it
 * raises SIGTRAP, which stops the program in a debugger right there. The
 * variable is read at the first call of each run (starpu_init() forgets it),
 * so that a call costs one test when it is unset.
 */
#include "tasks/tasks.h"

#include <signal.h>

#define BREAK_UNREAD (-2)

static long break_on_sched = BREAK_UNREAD;

void _astro_task_break_init(void)
{
	__atomic_store_n(&break_on_sched, BREAK_UNREAD, __ATOMIC_RELAXED);
}

static long __attribute__((noinline, cold)) read_break_on_sched(void)
{
	long job = astro_env_int("STARPU_TASK_BREAK_ON_SCHED", 0, INT_MAX, -1, NULL);
	__atomic_store_n(&break_on_sched, job, __ATOMIC_RELAXED);
	return job;
}

void starpu_sched_task_break(struct starpu_task *task)
{
	long job = __atomic_load_n(&break_on_sched, __ATOMIC_RELAXED);
	if (STARPU_LIKELY(job == -1) || !task)
		return;
	if (job == BREAK_UNREAD && (job = read_break_on_sched()) < 0)
		return;
	if (starpu_task_get_job_id(task) != (unsigned long)job)
		return;
	_astro_warn("STARPU_TASK_BREAK_ON_SCHED: the policy has scheduled task '%s' (job %ld): raising SIGTRAP for the debugger "
		    "(without one, the program stops here)", starpu_task_get_name(task) ? starpu_task_get_name(task) : "", job);
	raise(SIGTRAP);
}
