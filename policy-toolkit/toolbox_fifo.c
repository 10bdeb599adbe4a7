/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * StarPU's scheduler toolbox (starpu_scheduler_toolbox.h), first half: the
 * FIFO task queue, a starpu_task_list with the counters and expected dates of
 * a dm-like policy, and the helpers about priorities and data readiness that
 * both halves use (toolbox.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/plugin.h>
#include "toolbox.h"

/* The refusal of a NULL queue. */
#define FIFO_OR(fifo, ret) _ASTRO_ST_OR(fifo, "the queue", ret)

int _astro_st_null(const void *pointer, const char *fn, const char *what)
{
	if (pointer)
		return 0;
	astro_log_error(fn, "%s is NULL: pass a queue made by its _create or _init function and a task", what);
	return 1;
}

int _astro_st_claim(struct starpu_task *task, int workerid)
{
	unsigned nimpl = 0;

	if (workerid >= 0 && !starpu_worker_can_execute_task_first_impl((unsigned)workerid, task, &nimpl))
		return 0;
	starpu_task_set_implementation(task, nimpl);
	return 1;
}

/* ------------------------------------------------------------- the queue */

void starpu_st_fifo_taskq_init(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, );
	memset(fifo, 0, sizeof(*fifo));
	starpu_task_list_init(&fifo->taskq);
	fifo->exp_start = starpu_timing_now();
	fifo->exp_end = fifo->exp_start;
}

struct starpu_st_fifo_taskq *starpu_st_fifo_taskq_create(void)
{
	struct starpu_st_fifo_taskq *fifo = malloc(sizeof(*fifo));

	if (!fifo)
	{
		astro_log_error(__func__, "out of memory for a queue of %zu bytes", sizeof(*fifo));
		return NULL;
	}
	starpu_st_fifo_taskq_init(fifo);
	return fifo;
}

void starpu_st_fifo_taskq_destroy(struct starpu_st_fifo_taskq *fifo)
{
	free(fifo);
}

int starpu_st_fifo_taskq_empty(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, 1);
	return fifo->ntasks == 0;
}

/* ------------------------------------------------- counters and dates */

unsigned starpu_st_fifo_ntasks_get(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, 0);
	return fifo->ntasks;
}

void starpu_st_fifo_ntasks_inc(struct starpu_st_fifo_taskq *fifo, int n)
{
	FIFO_OR(fifo, );
	fifo->ntasks += (unsigned)n;
}

unsigned *starpu_st_fifo_ntasks_per_priority_get(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, NULL);
	return fifo->ntasks_per_priority;
}

unsigned starpu_st_fifo_nprocessed_get(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, 0);
	return fifo->nprocessed;
}

void starpu_st_fifo_nprocessed_inc(struct starpu_st_fifo_taskq *fifo, int n)
{
	FIFO_OR(fifo, );
	fifo->nprocessed += (unsigned)n;
}

double starpu_st_fifo_exp_start_get(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, NAN);
	return fifo->exp_start;
}

void starpu_st_fifo_exp_start_set(struct starpu_st_fifo_taskq *fifo, double exp_start)
{
	FIFO_OR(fifo, );
	fifo->exp_start = exp_start;
}

double starpu_st_fifo_exp_end_get(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, NAN);
	return fifo->exp_end;
}

void starpu_st_fifo_exp_end_set(struct starpu_st_fifo_taskq *fifo, double exp_end)
{
	FIFO_OR(fifo, );
	fifo->exp_end = exp_end;
}

double starpu_st_fifo_exp_len_get(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, NAN);
	return fifo->exp_len;
}

void starpu_st_fifo_exp_len_set(struct starpu_st_fifo_taskq *fifo, double exp_len)
{
	FIFO_OR(fifo, );
	fifo->exp_len = exp_len;
}

void starpu_st_fifo_exp_len_inc(struct starpu_st_fifo_taskq *fifo, double exp_len)
{
	FIFO_OR(fifo, );
	fifo->exp_len += exp_len;
}

double *starpu_st_fifo_exp_len_per_priority_get(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, NULL);
	return fifo->exp_len_per_priority;
}

double starpu_st_fifo_pipeline_len_get(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, NAN);
	return fifo->pipeline_len;
}

void starpu_st_fifo_pipeline_len_set(struct starpu_st_fifo_taskq *fifo, double pipeline_len)
{
	FIFO_OR(fifo, );
	fifo->pipeline_len = pipeline_len;
}

void starpu_st_fifo_pipeline_len_inc(struct starpu_st_fifo_taskq *fifo, double pipeline_len)
{
	FIFO_OR(fifo, );
	fifo->pipeline_len += pipeline_len;
}

/* ------------------------------------------------------------- pushing */

/* The first queued task of lower priority than priority (NULL: none, the place is at the back). */
static struct starpu_task *first_below(struct starpu_task_list *list, int priority)
{
	struct starpu_task *head = list->head;

	/* All of one priority, the task's own: straight to the back. */
	if (!head || (head->priority == priority && list->tail->priority == priority))
		return NULL;
	for (struct starpu_task *task = head; task; task = task->next)
		if (task->priority < priority)
			return task;
	return NULL;
}

int starpu_st_fifo_taskq_push_sorted_task(struct starpu_st_fifo_taskq *fifo_queue, struct starpu_task *task)
{
	FIFO_OR(fifo_queue, -EINVAL);
	_ASTRO_ST_TASK_OR(task, -EINVAL);
	struct starpu_task *before = first_below(&fifo_queue->taskq, task->priority);

	if (!before)
		starpu_task_list_push_back(&fifo_queue->taskq, task);
	else if (!before->prev)
		starpu_task_list_push_front(&fifo_queue->taskq, task);
	else
	{
		task->prev = before->prev;
		task->next = before;
		before->prev->next = task;
		before->prev = task;
	}
	fifo_queue->ntasks++;
	fifo_queue->nprocessed++;
	return 0;
}

int starpu_st_fifo_taskq_push_task(struct starpu_st_fifo_taskq *fifo, struct starpu_task *task)
{
	FIFO_OR(fifo, -EINVAL);
	_ASTRO_ST_TASK_OR(task, -EINVAL);
	if (task->priority > 0)
		return starpu_st_fifo_taskq_push_sorted_task(fifo, task);
	starpu_task_list_push_back(&fifo->taskq, task);
	fifo->ntasks++;
	fifo->nprocessed++;
	return 0;
}

int starpu_st_fifo_taskq_push_back_task(struct starpu_st_fifo_taskq *fifo_queue, struct starpu_task *task)
{
	FIFO_OR(fifo_queue, -EINVAL);
	_ASTRO_ST_TASK_OR(task, -EINVAL);
	if (task->priority > 0)
		return starpu_st_fifo_taskq_push_sorted_task(fifo_queue, task);
	starpu_task_list_push_front(&fifo_queue->taskq, task);
	fifo_queue->ntasks++;
	return 0;
}

double starpu_st_fifo_taskq_get_exp_len_prev_task_list(struct starpu_st_fifo_taskq *fifo_queue, struct starpu_task *task, int workerid, int nimpl,
						       int *fifo_ntasks)
{
	FIFO_OR(fifo_queue, NAN);
	_ASTRO_ST_TASK_OR(task, NAN);
	struct starpu_task_list *list = &fifo_queue->taskq;
	struct starpu_task *before = first_below(list, task->priority);
	double len = fifo_queue->pipeline_len;
	int ntasks = (int)fifo_queue->pipeline_ntasks;

	if (list->head && !before)
	{
		len = fifo_queue->exp_len;
		ntasks += (int)fifo_queue->ntasks;
	}
	else if (before && before != list->head)
	{
		struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(workerid, task->sched_ctx);
		for (struct starpu_task *ahead = list->head; ahead != before; ahead = ahead->next, ntasks++)
			len += starpu_task_expected_length(ahead, arch, (unsigned)nimpl);
	}
	if (fifo_ntasks)
		*fifo_ntasks = ntasks;
	return len;
}

/* ------------------------------------------------------------- popping */

int starpu_st_fifo_taskq_pop_this_task(struct starpu_st_fifo_taskq *fifo_queue, int workerid, struct starpu_task *task)
{
	FIFO_OR(fifo_queue, -EINVAL);
	_ASTRO_ST_TASK_OR(task, -EINVAL);
	if (!_astro_st_claim(task, workerid))
		return 0;
	starpu_task_list_erase(&fifo_queue->taskq, task);
	fifo_queue->ntasks--;
	return 1;
}

struct starpu_task *starpu_st_fifo_taskq_pop_task(struct starpu_st_fifo_taskq *fifo, int workerid)
{
	FIFO_OR(fifo, NULL);
	for (struct starpu_task *task = fifo->taskq.head; task; task = task->next)
		if (starpu_st_fifo_taskq_pop_this_task(fifo, workerid, task))
			return task;
	return NULL;
}

struct starpu_task *starpu_st_fifo_taskq_pop_local_task(struct starpu_st_fifo_taskq *fifo)
{
	FIFO_OR(fifo, NULL);
	if (starpu_task_list_empty(&fifo->taskq))
		return NULL;
	fifo->ntasks--;
	return starpu_task_list_pop_front(&fifo->taskq);
}

/* The task pop_first_ready_task (ready_first 0) or its ready-first variant (1) takes; NULL if workerid may run none. */
static struct starpu_task *most_ready(struct starpu_st_fifo_taskq *fifo, unsigned workerid, int ready_first)
{
	struct starpu_task *best = NULL;
	struct _astro_st_readiness best_r = {0, 0, 0};
	int first_priority = 0;

	for (struct starpu_task *task = fifo->taskq.head; task; task = task->next)
	{
		struct _astro_st_readiness r;

		if (!_astro_st_runnable(task, workerid))
			continue;
		if (!best)
		{
			best = task;
			first_priority = task->priority;
			_astro_st_readiness_of(task, workerid, &best_r);
		}
		else if (ready_first || task->priority >= first_priority)
		{
			_astro_st_readiness_of(task, workerid, &r);
			int tie = !_astro_st_more_ready(&best_r, &r);
			if (_astro_st_more_ready(&r, &best_r) || (ready_first && tie && task->priority > best->priority))
			{
				best = task;
				best_r = r;
			}
		}
		if (!ready_first && _astro_st_fully_ready(&best_r))
			break;
	}
	return best;
}

/* The pop of the ready-first variants. */
static struct starpu_task *pop_ready(struct starpu_st_fifo_taskq *fifo, unsigned workerid, int num_priorities, int ready_first)
{
	struct starpu_task *task = most_ready(fifo, workerid, ready_first);

	if (!task)
		return NULL;
	_astro_st_claim(task, (int)workerid);
	starpu_task_list_erase(&fifo->taskq, task);
	fifo->ntasks--;
	if (num_priorities != -1 && fifo->ntasks_per_priority)
	{
		unsigned ctx = task->sched_ctx < STARPU_NMAX_SCHED_CTXS ? task->sched_ctx : STARPU_GLOBAL_SCHED_CTX;
		int level = starpu_st_normalize_prio(task->priority, num_priorities, ctx);
		for (int i = 0; i <= level; i++)
			fifo->ntasks_per_priority[i]--;
	}
	return task;
}

struct starpu_task *starpu_st_fifo_taskq_pop_first_ready_task(struct starpu_st_fifo_taskq *fifo_queue, unsigned workerid, int num_priorities)
{
	FIFO_OR(fifo_queue, NULL);
	return pop_ready(fifo_queue, workerid, num_priorities, 0);
}

struct starpu_task *starpu_st_fifo_taskq_pop_first_ready_task_ready_first(struct starpu_st_fifo_taskq *fifo_queue, unsigned workerid, int num_priorities)
{
	FIFO_OR(fifo_queue, NULL);
	return pop_ready(fifo_queue, workerid, num_priorities, 1);
}

/* ------------------------------------------------------------- helpers */

int starpu_st_normalize_prio(int priority, int num_priorities, unsigned sched_ctx_id)
{
	long long min = starpu_sched_ctx_get_min_priority(sched_ctx_id);
	long long max = starpu_sched_ctx_get_max_priority(sched_ctx_id);

	if (num_priorities <= 1 || max <= min || priority <= min)
		return 0;
	if (priority >= max)
		return num_priorities - 1;
	return (int)(((long long)num_priorities - 1) * (priority - min) / (max - min));
}

/* 1 when buffer i of task counts for readiness (scratch and reduction buffers have nothing to bring). */
static int counted_buffer(struct starpu_task *task, unsigned i)
{
	return !(STARPU_TASK_GET_MODE(task, i) & (STARPU_SCRATCH | STARPU_REDUX));
}

static unsigned nbuffers_of(struct starpu_task *task)
{
	return task->cl ? STARPU_TASK_GET_NBUFFERS(task) : 0;
}

void _astro_st_readiness_of(struct starpu_task *task, unsigned workerid, struct _astro_st_readiness *r)
{
	int node = (int)starpu_worker_get_memory_node(workerid);

	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < nbuffers_of(task); i++)
	{
		starpu_data_handle_t handle = STARPU_TASK_GET_HANDLE(task, i);
		int allocated, valid, loading;

		if (!counted_buffer(task, i))
			continue;
		starpu_data_query_status2(handle, node, &allocated, &valid, &loading, NULL);
		size_t size = starpu_data_get_size(handle);
		if (!allocated)
			r->non_allocated += size;
		if ((STARPU_TASK_GET_MODE(task, i) & STARPU_R) && !valid)
		{
			r->non_ready += size;
			if (!loading)
				r->non_loading += size;
		}
	}
}

/* 1 (after a message) when task is NULL or worker is no worker. */
static int bad_task_or_worker(struct starpu_task *task, unsigned worker, const char *fn)
{
	if (_astro_st_null(task, fn, "the task"))
		return 1;
	if (worker < starpu_worker_get_count())
		return 0;
	astro_log_error(fn, "worker %u does not exist (%u workers): pass a worker id", worker, starpu_worker_get_count());
	return 1;
}

void starpu_st_non_ready_buffers_size(struct starpu_task *task, unsigned worker, size_t *non_readyp, size_t *non_loadingp, size_t *non_allocatedp)
{
	struct _astro_st_readiness r = {0, 0, 0};

	if (!bad_task_or_worker(task, worker, __func__))
		_astro_st_readiness_of(task, worker, &r);
	if (non_readyp)
		*non_readyp = r.non_ready;
	if (non_loadingp)
		*non_loadingp = r.non_loading;
	if (non_allocatedp)
		*non_allocatedp = r.non_allocated;
}

int starpu_st_non_ready_buffers_count(struct starpu_task *task, unsigned worker)
{
	int count = 0;

	if (bad_task_or_worker(task, worker, __func__))
		return -EINVAL;
	int node = (int)starpu_worker_get_memory_node(worker);
	for (unsigned i = 0; i < nbuffers_of(task); i++)
	{
		int valid;

		if (!counted_buffer(task, i))
			continue;
		starpu_data_query_status(STARPU_TASK_GET_HANDLE(task, i), node, NULL, &valid, NULL);
		count += !valid;
	}
	return count;
}
