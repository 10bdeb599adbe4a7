/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A running task gives its thread away and comes back (astrolabe/instrument.h,
 * seed 001's wdLeaveCPU / wdEnterCPU): the task's open states and bursts end
 * for the observers and open again, as when the kernel leaves and enters the
 * task around its implementation and callbacks (observe/instrument.c keeps
 * them); what it raises meanwhile is held and emitted when it is back.
 * Compiled out with ASTRO_DISABLE_INSTRUMENTATION.
 */
#include "tasks/tasks.h"
#include <astrolabe/instrument.h>

/* The job of task, when it is the task this thread runs; else NULL, said. */
static struct _astro_job *instr_cpu_job(const char *fn, struct starpu_task *task)
{
	if (!task || task != _astro_current_task || !_astro_job_of(task)) {
		_astro_error("%s: %s: pass the task this thread runs (starpu_task_get_current() in its implementation or callback)", fn,
			     task ? "not the task this thread runs" : "NULL task");
		return NULL;
	}
	return _astro_job_of(task);
}

int astro_instr_task_leave_cpu(struct starpu_task *task)
{
#ifdef ASTRO_DISABLE_INSTRUMENTATION
	(void)task;
	_astro_error("astro_instr_task_leave_cpu: Astrolabe was configured with --disable-instrumentation: reconfigure without it to instrument");
	return -ENOSYS;
#else
	struct _astro_job *job = instr_cpu_job("astro_instr_task_leave_cpu", task);
	if (!job)
		return -EINVAL;
	_astro_instr_task_away(task, &job->instr_saved); /* what it raises until it is back is held for it */
	return 0;
#endif
}

int astro_instr_task_enter_cpu(struct starpu_task *task)
{
#ifdef ASTRO_DISABLE_INSTRUMENTATION
	(void)task;
	_astro_error("astro_instr_task_enter_cpu: Astrolabe was configured with --disable-instrumentation: reconfigure without it to instrument");
	return -ENOSYS;
#else
	struct _astro_job *job = instr_cpu_job("astro_instr_task_enter_cpu", task);
	if (!job)
		return -EINVAL;
	_ASTRO_INSTR_TASK_ENTER(job);
	return 0;
#endif
}
