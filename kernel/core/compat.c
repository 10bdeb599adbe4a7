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

/* Iterations label the tasks submitted meanwhile in the calling thread's
 * context (task->iterations, two levels kept, deeper ones counted) and the
 * traces: the recorder keeps the current ones. */
unsigned _astro_iterations_open;

void starpu_iteration_push(unsigned long iteration)
{
	struct _astro_sched_ctx *ctx = &_astro_ctxs[_astro_ctx_current];
	unsigned level = ctx->iteration_level;
	if (level < sizeof(ctx->iterations) / sizeof(ctx->iterations[0]))
		ctx->iterations[level] = (long)iteration;
	__atomic_store_n(&ctx->iteration_level, level + 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&_astro_iterations_open, 1, __ATOMIC_RELAXED);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRACE_MARK, .workerid = _astro_worker_id(), .nimpl = ASTRO_TRACE_ITERATION_PUSH,
		       .other_id = iteration);
}

void starpu_iteration_pop(void)
{
	struct _astro_sched_ctx *ctx = &_astro_ctxs[_astro_ctx_current];
	if (ctx->iteration_level == 0) {
		_astro_error("starpu_iteration_pop: no iteration is open in this context: each call must match a starpu_iteration_push");
		return;
	}
	unsigned level = ctx->iteration_level - 1;
	if (level < sizeof(ctx->iterations) / sizeof(ctx->iterations[0]))
		ctx->iterations[level] = -1;
	__atomic_store_n(&ctx->iteration_level, level, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&_astro_iterations_open, 1, __ATOMIC_RELAXED);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TRACE_MARK, .workerid = _astro_worker_id(), .nimpl = ASTRO_TRACE_ITERATION_POP);
}

void _astro_iteration_stamp(struct starpu_task *task)
{
	const struct _astro_sched_ctx *ctx = &_astro_ctxs[task->sched_ctx];
	unsigned level = __atomic_load_n(&ctx->iteration_level, __ATOMIC_ACQUIRE);
	if (level == 0)
		return;
	for (unsigned i = 0; i < sizeof(task->iterations) / sizeof(task->iterations[0]); i++)
		task->iterations[i] = i < level ? (int)ctx->iterations[i] : -1;
}
