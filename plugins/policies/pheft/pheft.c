/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pheft: HEFT for parallel tasks. A task goes where the performance models
 * say it ends first, among the workers of the context and, for a STARPU_SPMD
 * or STARPU_FORKJOIN codelet, the combined workers made of the context's
 * workers (at most max_parallelism of them), which start when the last of
 * their workers is expected free. A worker's choice waits in its own queue; a
 * combined worker's goes to the kernel, which queues it on all its workers at
 * once (kernel/parallel.c). The models predict a combined worker's length for
 * its number of cores, calibrated by its parallel executions.
 *
 * The candidates the model is not calibrated for yet come first (so that
 * every size gets measured), and without a model every candidate is one: the
 * least loaded of them, the larger on a tie. Each worker's expected end is a hint, read and
 * written with relaxed atomics: it is pushed back by each choice and brought
 * back to now when the worker ends a task with nothing left queued.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <astrolabe/sched.h>

static struct astro_sched_counters pheft_counters;

/* Per context (indexed by its id): the workers' expected ends and loads. */
struct pheft_state
{
	double exp_end[STARPU_NMAXWORKERS];
	int load[STARPU_NMAXWORKERS];        /* tasks queued or running */
};
static struct pheft_state pheft_states[STARPU_NMAX_SCHED_CTXS];

static void pheft_init_sched(unsigned sched_ctx_id)
{
	struct pheft_state *st = &pheft_states[sched_ctx_id];

	starpu_sched_find_all_worker_combinations();
	for (int w = 0; w < STARPU_NMAXWORKERS; w++)
	{
		astro_counter_store_double(&st->exp_end[w], 0.0);
		__atomic_store_n(&st->load[w], 0, __ATOMIC_RELAXED);
	}
	astro_sched_local_init(sched_ctx_id, "pheft", starpu_sched_ctx_get_min_priority(sched_ctx_id),
			       starpu_sched_ctx_get_max_priority(sched_ctx_id));
}

/* The least loaded of some candidates, the larger on a tie. */
struct pheft_least
{
	int id, load, size;
};

static void pheft_least_offer(struct pheft_least *l, int id, int load, int size)
{
	if (l->id < 0 || load < l->load || (load == l->load && size > l->size))
	{
		l->id = id;
		l->load = load;
		l->size = size;
	}
}

/* The best candidate so far, by kind of choice. */
struct pheft_choice
{
	struct pheft_least calibrate;        /* among those the model is not calibrated for */
	struct pheft_least greedy;           /* without a model */
	int best;                            /* the earliest predicted end */
	double best_end, best_length;
};

/* Weighs candidate id (a worker or a combined worker) made of members. */
static void pheft_consider(struct pheft_state *st, struct starpu_task *task, unsigned sched_ctx_id, int id,
			   const int *members, int n, unsigned impl, double now, struct pheft_choice *c)
{
	double start = now;
	int load = 0;

	for (int i = 0; i < n; i++)
	{
		start = fmax(start, astro_counter_load_double(&st->exp_end[members[i]]));
		int member_load = __atomic_load_n(&st->load[members[i]], __ATOMIC_RELAXED);

		load = member_load > load ? member_load : load;
	}
	double length = task->cl->model ? starpu_task_worker_expected_length(task, (unsigned)id, sched_ctx_id, impl) : 0.0;

	if (isnan(length))
		pheft_least_offer(&c->calibrate, id, load, n);
	else if (length <= 0.0)
		pheft_least_offer(&c->greedy, id, load, n);
	else if (c->best < 0 || start + length < c->best_end)
	{
		c->best = id;
		c->best_end = start + length;
		c->best_length = length;
	}
}

/* The worker or combined worker for task, -1 when none of the context may run it. */
static int pheft_decide(struct pheft_state *st, struct astro_sched_local *local, struct starpu_task *task,
			unsigned sched_ctx_id, double *predicted)
{
	struct pheft_choice c = { .calibrate = { .id = -1 }, .greedy = { .id = -1 }, .best = -1 };
	double now = task->cl->model ? starpu_timing_now() : 0.0;

	for (unsigned i = 0; i < local->workers.count; i++)
	{
		int w = local->workers.ids[i];
		unsigned impl;

		if (starpu_worker_can_execute_task_first_impl((unsigned)w, task, &impl))
			pheft_consider(st, task, sched_ctx_id, w, &w, 1, impl, now, &c);
	}
	if (task->cl->type != STARPU_SEQ)
	{
		int max = task->cl->max_parallelism > 0 ? task->cl->max_parallelism : INT_MAX;
		unsigned first = starpu_worker_get_count(), count = starpu_combined_worker_get_count();

		for (unsigned id = first; id < first + count; id++)
		{
			int size, *ids, inside = 1;

			if (starpu_combined_worker_get_description((int)id, &size, &ids) != 0 || size < 2 || size > max)
				continue;
			for (int i = 0; i < size && inside; i++)
				inside = astro_sched_workers_contains(&local->workers, ids[i]);
			if (inside && starpu_combined_worker_can_execute_task(id, task, 0))
				pheft_consider(st, task, sched_ctx_id, (int)id, ids, size, 0, now, &c);
		}
	}
	*predicted = 0.0;
	if (c.calibrate.id >= 0)
		return c.calibrate.id;
	if (c.best >= 0)
	{
		*predicted = c.best_length;
		return c.best;
	}
	return c.greedy.id;
}

/*
 * A task's charge, in its policy word (astro_sched_task_data()): the context whose state it loads and
 * its target + 1, marked as pheft's (another policy's word is never
 * read as one). A task may be pushed again before it ran: taken back from a
 * worker leaving the context, handed down to a nested context, moved to
 * another context; its former charge is released first, so that no worker
 * stays loaded by a task it will not run.
 */
#define PHEFT_MARK ((uintptr_t)0x9f5e << 32)
#define PHEFT_MARK_MASK ((uintptr_t)0xffff << 32)

static void *pheft_charge(unsigned sched_ctx_id, int target)
{
	return (void *)(PHEFT_MARK | (uintptr_t)sched_ctx_id << 24 | (uintptr_t)(target + 1));
}

/* Releases the charge task carries, if any: its workers are free of it (their expected end back to now when idle). */
static void pheft_release(struct starpu_task *task)
{
	uintptr_t charge = (uintptr_t)*astro_sched_task_data(task);

	if ((charge & PHEFT_MARK_MASK) != PHEFT_MARK)
		return;
	*astro_sched_task_data(task) = NULL;
	unsigned sched_ctx_id = (unsigned)(charge >> 24 & 0xff);
	int target = (int)(charge & 0xffffff) - 1, size = 1, *members = &target;

	if (sched_ctx_id >= STARPU_NMAX_SCHED_CTXS || target < 0)
		return;
	if (target >= (int)starpu_worker_get_count() && starpu_combined_worker_get_description(target, &size, &members) != 0)
		return;
	struct pheft_state *st = &pheft_states[sched_ctx_id];
	double now = starpu_timing_now();
	for (int i = 0; i < size; i++)
		if (__atomic_sub_fetch(&st->load[members[i]], 1, __ATOMIC_RELAXED) == 0)
			astro_counter_store_double(&st->exp_end[members[i]], now);
}

static int pheft_push_task(struct starpu_task *task)
{
	unsigned sched_ctx_id = astro_sched_task_ctx(task);
	struct astro_sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	struct pheft_state *st = &pheft_states[sched_ctx_id];
	double predicted;
	int target, size = 1, *members = &target, ret;

	if (!task->cl)
		return -ENODEV;
	/* Pushed again before it ran: the former choice does not hold any more. */
	pheft_release(task);
	target = pheft_decide(st, local, task, sched_ctx_id, &predicted);
	if (target < 0)
		return -ENODEV;
	if (target >= (int)starpu_worker_get_count())
		starpu_combined_worker_get_description(target, &size, &members);
	/* Counted before the task is visible: once queued, a worker may run it and end it. */
	double end = predicted;
	for (int i = 0; i < size; i++)
	{
		end = fmax(end, astro_counter_load_double(&st->exp_end[members[i]]) + predicted);
		__atomic_add_fetch(&st->load[members[i]], 1, __ATOMIC_RELAXED);
	}
	if (predicted > 0.0)
		for (int i = 0; i < size; i++)
			astro_counter_store_double(&st->exp_end[members[i]], fmax(end, starpu_timing_now() + predicted));
	/* The hook frees the workers of its choice. */
	*astro_sched_task_data(task) = pheft_charge(sched_ctx_id, target);
	if (size > 1)
	{
		ret = starpu_push_local_task(target, task, 1);
		if (ret)
		{
			*astro_sched_task_data(task) = NULL;
			for (int i = 0; i < size; i++)
				__atomic_sub_fetch(&st->load[members[i]], 1, __ATOMIC_RELAXED);
		}
	}
	else
	{
		astro_sched_local_push(local, target, task, 0);
		ret = 0;
	}
	if (ret == 0)
		astro_sched_counters_count_push(&pheft_counters);
	return ret;
}

static struct starpu_task *pheft_take(void *policy_data, int workerid)
{
	struct starpu_task *task = astro_sched_local_take_own(policy_data, workerid);

	if (task)
		astro_sched_counters_count_pop(&pheft_counters, 0);
	return task;
}

static struct starpu_task *pheft_pop_task(unsigned sched_ctx_id)
{
	struct astro_sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	return astro_sched_pop_task(&local->workers, starpu_worker_get_id(), local, pheft_take);
}

/* Run by the worker that ran task (rank 0 of a combined one): the workers of the choice are free again. */
static void pheft_post_exec_hook(struct starpu_task *task, unsigned sched_ctx_id)
{
	(void)sched_ctx_id; /* the charge names the context it was made in (the task may have moved since) */
	pheft_release(task);
}

static struct starpu_sched_policy pheft_policy =
{
	.init_sched = pheft_init_sched,
	.deinit_sched = astro_sched_local_deinit,
	.add_workers = astro_sched_local_add_workers,
	.remove_workers = astro_sched_local_remove_workers,
	.push_task = pheft_push_task,
	.pop_task = pheft_pop_task,
	.post_exec_hook = pheft_post_exec_hook,
	.policy_name = "pheft",
	.policy_description = "parallel HEFT: earliest predicted end among the workers and the combined workers",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	astro_sched_counters_register(&pheft_counters, "sched_pheft", "pheft", 0);
	return astro_sched_policy_register(&pheft_policy);
}

ASTRO_PLUGIN_DEFINE(sched_pheft, ASTRO_PLUGIN_SCHED, "pheft: parallel HEFT, tasks on workers or combined workers by the models", init, NULL);
