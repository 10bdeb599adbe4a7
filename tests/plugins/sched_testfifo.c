/*
 * A good out-of-tree scheduler: policy "testfifo", one central FIFO queue.
 * It counts the tasks pushed to it and prints "testfifo: N tasks" on stderr
 * when the policy is torn down, so a test can see it was really used.
 */
#include <astrolabe/plugin.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct starpu_task_list queue;
static unsigned long npushed;

static void fifo_init(unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	pthread_mutex_lock(&queue_lock);
	starpu_task_list_init(&queue);
	npushed = 0;
	pthread_mutex_unlock(&queue_lock);
}

static void fifo_deinit(unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	fprintf(stderr, "testfifo: %lu tasks\n", npushed);
}

static int fifo_push(struct starpu_task *task)
{
	pthread_mutex_lock(&queue_lock);
	starpu_task_list_push_back(&queue, task);
	npushed++;
	pthread_mutex_unlock(&queue_lock);
	starpu_wake_all_blocked_workers();
	return 0;
}

/* The oldest task the calling worker can run. */
static struct starpu_task *fifo_pop(unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	int workerid = starpu_worker_get_id();
	struct starpu_task *task;
	pthread_mutex_lock(&queue_lock);
	for (task = starpu_task_list_begin(&queue); task; task = starpu_task_list_next(task))
		if (starpu_worker_can_execute_task_first_impl((unsigned)workerid, task, NULL)) {
			starpu_task_list_erase(&queue, task);
			break;
		}
	pthread_mutex_unlock(&queue_lock);
	return task;
}

static struct starpu_sched_policy testfifo_policy = {
	.init_sched = fifo_init,
	.deinit_sched = fifo_deinit,
	.push_task = fifo_push,
	.pop_task = fifo_pop,
	.policy_name = "testfifo",
	.policy_description = "test policy: one central FIFO that counts its tasks",
	.worker_type = STARPU_WORKER_LIST,
};

static int init(void)
{
	return astro_sched_policy_register(&testfifo_policy);
}

ASTRO_PLUGIN_DEFINE(sched_testfifo, ASTRO_PLUGIN_SCHED, "test policy: a central FIFO", init, NULL);
