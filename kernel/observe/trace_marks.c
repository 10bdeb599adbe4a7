/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * StarPU's FxT calls (starpu_fxt_*): no FxT here, the calls become
 * TRACE_MARK moments of the observation path, which the trace recorder
 * (plugins/tools/trace) turns into its archive.
 */
#include "observe/observe.h"

static int autostart = 1;

int astro_trace_autostart(void)
{
	return __atomic_load_n(&autostart, __ATOMIC_RELAXED);
}

void starpu_fxt_start_profiling(void)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRACE_MARK, .workerid = _astro_worker_id(), .nimpl = ASTRO_TRACE_START_PROFILING,
		       .label = "start_profiling");
}

void starpu_fxt_stop_profiling(void)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRACE_MARK, .workerid = _astro_worker_id(), .nimpl = ASTRO_TRACE_STOP_PROFILING,
		       .label = "stop_profiling");
}

void starpu_fxt_autostart_profiling(int start)
{
	__atomic_store_n(&autostart, start != 0, __ATOMIC_RELAXED);
}

void starpu_fxt_write_data_trace(char *filename_in)
{
	(void)filename_in;
	_astro_warn("starpu_fxt_write_data_trace: not available here: run starpu_fxt_tool -i %s, then starpu_fxt_data_trace",
		    filename_in ? filename_in : "<archive>");
}

void starpu_fxt_trace_user_event(unsigned long code)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRACE_MARK, .workerid = _astro_worker_id(), .nimpl = ASTRO_TRACE_USER_CODE, .other_id = code);
}

void starpu_fxt_trace_user_event_string(const char *s)
{
	if (s)
		_ASTRO_OBSERVE(ASTRO_MOMENT_TRACE_MARK, .workerid = _astro_worker_id(), .nimpl = ASTRO_TRACE_USER_STRING, .label = s);
}

void starpu_fxt_trace_user_meta_string(const char *s)
{
	if (s)
		_ASTRO_OBSERVE(ASTRO_MOMENT_TRACE_MARK, .workerid = _astro_worker_id(), .nimpl = ASTRO_TRACE_META_STRING, .label = s);
}
