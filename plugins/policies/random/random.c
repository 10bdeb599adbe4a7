/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * random: each task goes to a worker drawn uniformly among those that can
 * run it, into that worker's own queue (ordered by priority); workers only
 * pop their own queue. No shared state on the task path but the draw.
 */
#include <stdint.h>
#include <astrolabe/sched.h>
#include <astrolabe/thread.h>

/* Draws a first guess at random this many times before counting the capable workers. */
#define RANDOM_GUESSES 8

/* One generator per pushing thread, so draws need no lock. */
static ASTRO_THREAD_LOCAL uint64_t random_state;
static atomic_uint_fast64_t random_seed_counter;

/* splitmix64 seeds each thread; xorshift64* draws. */
static uint64_t random_next(void)
{
	uint64_t x = random_state;

	if (x == 0)
	{
		x = atomic_fetch_add_explicit(&random_seed_counter, 1, memory_order_relaxed) + 0x9e3779b97f4a7c15ULL;
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
		x ^= x >> 31;
		if (x == 0)
			x = 1;
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	random_state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/*
 * A worker drawn uniformly among those that may run task, -1 if none.
 * Guessing and retrying is uniform among the capable workers and O(1) when
 * most workers are capable; counting them first is the exact fallback.
 */
static int random_pick_worker(struct astro_sched_workers *ws, struct starpu_task *task)
{
	unsigned count = ws->count;
	unsigned ncapable = 0;

	if (count == 0)
		return -1;
	for (int guess = 0; guess < RANDOM_GUESSES; guess++)
	{
		int workerid = ws->ids[random_next() % count];

		if (astro_sched_task_allowed_on(task, workerid))
			return workerid;
	}
	for (unsigned i = 0; i < count; i++)
		ncapable += astro_sched_task_allowed_on(task, ws->ids[i]);
	if (ncapable == 0)
		return -1;
	uint64_t chosen = random_next() % ncapable;
	for (unsigned i = 0; i < count; i++)
		if (astro_sched_task_allowed_on(task, ws->ids[i]) && chosen-- == 0)
			return ws->ids[i];
	return -1;
}

static void random_init_sched(unsigned sched_ctx_id)
{
	astro_sched_local_init(sched_ctx_id, "random", starpu_sched_ctx_get_min_priority(sched_ctx_id), starpu_sched_ctx_get_max_priority(sched_ctx_id));
}

static int random_push_task(struct starpu_task *task)
{
	struct astro_sched_local *local = starpu_sched_ctx_get_policy_data(astro_sched_task_ctx(task));
	int workerid = astro_sched_task_bound_worker(task);

	if (workerid < 0)
		workerid = random_pick_worker(&local->workers, task);
	else if (!astro_sched_workers_contains(&local->workers, workerid))
		return -EINVAL;
	if (workerid < 0)
		return -ENODEV;
	astro_sched_local_push(local, workerid, task, 0);
	return 0;
}

static struct starpu_task *random_take(void *policy_data, int workerid)
{
	return astro_sched_local_take_own(policy_data, workerid);
}

static struct starpu_task *random_pop_task(unsigned sched_ctx_id)
{
	struct astro_sched_local *local = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	return astro_sched_pop_task(&local->workers, starpu_worker_get_id(), local, random_take);
}

static struct starpu_sched_policy random_policy =
{
	.init_sched = random_init_sched,
	.deinit_sched = astro_sched_local_deinit,
	.add_workers = astro_sched_local_add_workers,
	.remove_workers = astro_sched_local_remove_workers,
	.push_task = random_push_task,
	.pop_task = random_pop_task,
	.policy_name = "random",
	.policy_description = "random: each task goes to a worker drawn uniformly among those that can run it",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	return astro_sched_policy_register(&random_policy);
}

ASTRO_PLUGIN_DEFINE(sched_random, ASTRO_PLUGIN_SCHED, "random: per-worker queues, uniform random placement", init, NULL);
