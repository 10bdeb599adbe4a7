/*
 * Small pieces of the StarPU API that belong to no other kernel file.
 */
#include "kernel.h"

int starpu_task_get_current_data_node(unsigned i)
{
	struct starpu_task *task = starpu_task_get_current();
	if (!task || i >= STARPU_TASK_GET_NBUFFERS(task))
		return -1;
	/* Every buffer a task sees lives on its worker's memory node. */
	return (int)starpu_worker_get_local_memory_node();
}

/* ------------------------------------------------------------------ FxT */

/* No FxT here: the calls become TRACE_MARK moments of the observation path,
 * which the trace recorder (plugins/tools/trace) turns into its archive. */
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

/* Iterations only label the tasks in traces: the recorder keeps the current ones. */
void starpu_iteration_push(unsigned long iteration)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRACE_MARK, .workerid = _astro_worker_id(), .nimpl = ASTRO_TRACE_ITERATION_PUSH,
		       .other_id = iteration);
}

void starpu_iteration_pop(void)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRACE_MARK, .workerid = _astro_worker_id(), .nimpl = ASTRO_TRACE_ITERATION_POP);
}
