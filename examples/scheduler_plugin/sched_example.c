/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An out-of-tree scheduling policy for Astrolabe: "example-fifo", one
 * central first-in first-out queue that every worker takes from.
 *
 * A policy is a struct starpu_sched_policy (starpu_scheduler.h): the
 * runtime calls push_task when a task is ready to run, and pop_task from each
 * worker looking for work. A plugin is a shared object named KIND_NAME.so
 * (here sched_example.so) that exports one descriptor, astrolabe_plugin_KIND_NAME,
 * made by ASTRO_PLUGIN_DEFINE; its init registers the policy, which
 * STARPU_SCHED=example-fifo then selects.
 *
 * The queue, the list of workers and the wake-up protocol come from the
 * policy toolkit (astrolabe/sched.h), the same building blocks the policies
 * shipped with Astrolabe are made of: what is left here is the policy.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <astrolabe/sched.h>

/* What the policy keeps for a scheduling context. */
struct example_fifo
{
	starpu_pthread_mutex_t lock;		/* guards queue */
	struct astro_sched_queue queue;		/* one priority level: a FIFO */
	struct astro_sched_workers workers;	/* who is in the context, who is hungry */
	atomic_ulong npushed;			/* reported at the end */
};

static void example_init_sched(unsigned sched_ctx_id)
{
	struct example_fifo *fifo = astro_sched_alloc_policy_data("example-fifo", sizeof(*fifo));

	/* With one priority level the queue is a plain FIFO. */
	if (astro_sched_queue_init(&fifo->queue, 0, 0) != 0)
		abort();
	astro_sched_lock_init(&fifo->lock);
	astro_sched_workers_init(&fifo->workers);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, fifo);
}

static void example_deinit_sched(unsigned sched_ctx_id)
{
	struct example_fifo *fifo = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	/* What a test looks for to tell that this policy did the scheduling. */
	printf("example-fifo: %lu tasks scheduled\n", atomic_load(&fifo->npushed));
	fflush(stdout);
	astro_sched_queue_fini(&fifo->queue);
	STARPU_PTHREAD_MUTEX_DESTROY(&fifo->lock);
	free(fifo);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, NULL);
}

/* The kernel tells the policy which workers the context has, before tasks flow. */
static void example_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct example_fifo *fifo = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	astro_sched_workers_add(&fifo->workers, workerids, nworkers);
}

static void example_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct example_fifo *fifo = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	astro_sched_workers_remove(&fifo->workers, workerids, nworkers);
}

static int example_push_task(struct starpu_task *task)
{
	struct example_fifo *fifo = starpu_sched_ctx_get_policy_data(astro_sched_task_ctx(task));
	int wake;

	/*
	 * Once the task is in the queue a worker may run it and free it at any
	 * moment: the "pushed" notification comes first, and the worker to wake
	 * is chosen while the lock keeps the task in the queue.
	 */
	starpu_push_task_end(task);
	atomic_fetch_add(&fifo->npushed, 1);
	STARPU_PTHREAD_MUTEX_LOCK(&fifo->lock);
	astro_sched_queue_push(&fifo->queue, task);
	wake = astro_sched_workers_claim_one_for(&fifo->workers, task, -1);
	STARPU_PTHREAD_MUTEX_UNLOCK(&fifo->lock);
	/* A hungry worker that may run the task, if any: it may be asleep. */
	astro_sched_wake(wake, 0);
	return 0;
}

/* The oldest task workerid may run (a bound task only to its worker), or NULL. */
static struct starpu_task *example_take(void *policy_data, int workerid)
{
	struct example_fifo *fifo = policy_data;
	struct starpu_task *task;

	/* Idle workers call pop_task in a loop: looking at an empty queue must be cheap. */
	if (!astro_sched_queue_ntasks(&fifo->queue))
		return NULL;
	STARPU_PTHREAD_MUTEX_LOCK(&fifo->lock);
	task = astro_sched_queue_take_first(&fifo->queue, workerid);
	STARPU_PTHREAD_MUTEX_UNLOCK(&fifo->lock);
	return task;
}

static struct starpu_task *example_pop_task(unsigned sched_ctx_id)
{
	struct example_fifo *fifo = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	/* Looks, announces the worker's hunger, looks again: a push never misses it. */
	return astro_sched_pop_task(&fifo->workers, starpu_worker_get_id(), fifo, example_take);
}

static struct starpu_sched_policy example_fifo_policy =
{
	.init_sched = example_init_sched,
	.deinit_sched = example_deinit_sched,
	.add_workers = example_add_workers,
	.remove_workers = example_remove_workers,
	.push_task = example_push_task,
	.pop_task = example_pop_task,
	.policy_name = "example-fifo",
	.policy_description = "example out-of-tree policy: one central FIFO queue",
	.worker_type = STARPU_WORKER_LIST,
};

/* Called when the runtime loads the plugin, at starpu_init(). */
static int example_plugin_init(void)
{
	return astro_sched_policy_register(&example_fifo_policy);
}

/* The descriptor the runtime looks for: its name must match the file name (sched_example.so). */
ASTRO_PLUGIN_DEFINE(sched_example, ASTRO_PLUGIN_SCHED, "example-fifo: an out-of-tree central FIFO policy",
		    example_plugin_init, NULL);
