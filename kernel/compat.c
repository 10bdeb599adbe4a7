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

/* No FxT here: traces come from the observation path and the tools. */
void starpu_fxt_start_profiling(void)
{
}

void starpu_fxt_stop_profiling(void)
{
}

void starpu_fxt_autostart_profiling(int autostart)
{
	(void)autostart;
}

void starpu_fxt_write_data_trace(char *filename_in)
{
	(void)filename_in;
}

void starpu_fxt_trace_user_event(unsigned long code)
{
	(void)code;
}

void starpu_fxt_trace_user_event_string(const char *s)
{
	(void)s;
}

void starpu_fxt_trace_user_meta_string(const char *s)
{
	(void)s;
}
