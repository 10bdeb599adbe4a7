/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Iterations (starpu_iteration_push/pop): they label the tasks submitted
 * meanwhile in the calling thread's context (task->iterations, two levels
 * kept, deeper ones counted) and the traces: the recorder keeps the current ones.
 */
#include "sched/sched.h"

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
		task->iterations[i] = i < level ? ctx->iterations[i] : -1;
}
