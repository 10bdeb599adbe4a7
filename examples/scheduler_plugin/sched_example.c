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
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <astrolabe/plugin.h>

/* What the policy keeps for a scheduling context. */
struct example_fifo
{
	starpu_pthread_mutex_t lock;	/* guards queue */
	struct starpu_task_list queue;	/* oldest task at the front */
	atomic_uint nqueued;		/* lets an idle worker skip the lock */
	atomic_ulong npushed;		/* reported at the end */
};

/* A task bound to one worker (execute_on_a_specific_worker) may only go there. */
static int may_run(int workerid, struct starpu_task *task)
{
	if (task->execute_on_a_specific_worker && (int)task->workerid != workerid)
		return 0;
	return starpu_worker_can_execute_task(workerid, task, 0);
}

static void example_init_sched(unsigned sched_ctx_id)
{
	struct example_fifo *fifo = calloc(1, sizeof(*fifo));

	if (!fifo)
		abort();
	STARPU_PTHREAD_MUTEX_INIT(&fifo->lock, NULL);
	starpu_task_list_init(&fifo->queue);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, fifo);
}

static void example_deinit_sched(unsigned sched_ctx_id)
{
	struct example_fifo *fifo = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	/* What a test looks for to tell that this policy did the scheduling. */
	printf("example-fifo: %lu tasks scheduled\n", atomic_load(&fifo->npushed));
	fflush(stdout);
	STARPU_PTHREAD_MUTEX_DESTROY(&fifo->lock);
	free(fifo);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, NULL);
}

static int example_push_task(struct starpu_task *task)
{
	unsigned sched_ctx_id = task->sched_ctx;
	struct example_fifo *fifo = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	struct starpu_worker_collection *workers = starpu_sched_ctx_get_worker_collection(sched_ctx_id);
	struct starpu_sched_ctx_iterator it;
	int candidates[STARPU_NMAXWORKERS];
	int ncandidates = 0;

	/*
	 * Once the task is in the queue a worker may run it and free it at any
	 * moment, so everything we need from it is read before: which workers
	 * could run it (to wake one), and the "pushed" notification.
	 */
	workers->init_iterator(workers, &it);
	while (workers->has_next(workers, &it))
	{
		int workerid = workers->get_next(workers, &it);

		if (may_run(workerid, task))
			candidates[ncandidates++] = workerid;
	}
	starpu_push_task_end(task);
	atomic_fetch_add(&fifo->npushed, 1);

	STARPU_PTHREAD_MUTEX_LOCK(&fifo->lock);
	starpu_task_list_push_back(&fifo->queue, task);
	atomic_fetch_add(&fifo->nqueued, 1);
	STARPU_PTHREAD_MUTEX_UNLOCK(&fifo->lock);

	/*
	 * Wake a sleeping worker that can run it. starpu_wake_worker_relax_light()
	 * returns 1 when it woke one; on an awake worker it is cheap and keeps it
	 * from falling asleep, so the task is never left behind sleepers.
	 */
	for (int i = 0; i < ncandidates; i++)
		if (starpu_wake_worker_relax_light(candidates[i]))
			break;
	return 0;
}

static struct starpu_task *example_pop_task(unsigned sched_ctx_id)
{
	struct example_fifo *fifo = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	int workerid = starpu_worker_get_id();
	struct starpu_task *task;

	/* Idle workers call pop_task in a loop: looking at an empty queue must be cheap. */
	if (atomic_load(&fifo->nqueued) == 0)
		return NULL;

	STARPU_PTHREAD_MUTEX_LOCK(&fifo->lock);
	/* The oldest task this worker may run; others stay for other workers. */
	for (task = starpu_task_list_begin(&fifo->queue);
	     task != starpu_task_list_end(&fifo->queue);
	     task = starpu_task_list_next(task))
		if (may_run(workerid, task))
		{
			starpu_task_list_erase(&fifo->queue, task);
			atomic_fetch_sub(&fifo->nqueued, 1);
			break;
		}
	STARPU_PTHREAD_MUTEX_UNLOCK(&fifo->lock);
	return task;
}

static struct starpu_sched_policy example_fifo_policy =
{
	.init_sched = example_init_sched,
	.deinit_sched = example_deinit_sched,
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
