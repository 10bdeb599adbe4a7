/*
 * Not a plugin: a plain library for STARPU_SCHED_LIB, exporting the two
 * StarPU entry points starpu_get_sched_lib_policy() and
 * starpu_get_sched_lib_policies(). Its one policy, "libfifo", is a central
 * FIFO queue.
 */
#include <starpu.h>
#include <pthread.h>
#include <string.h>

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct starpu_task_list queue;

static void fifo_init(unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	pthread_mutex_lock(&queue_lock);
	starpu_task_list_init(&queue);
	pthread_mutex_unlock(&queue_lock);
}

static int fifo_push(struct starpu_task *task)
{
	pthread_mutex_lock(&queue_lock);
	starpu_task_list_push_back(&queue, task);
	pthread_mutex_unlock(&queue_lock);
	starpu_wake_all_blocked_workers();
	return 0;
}

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

static struct starpu_sched_policy libfifo_policy = {
	.init_sched = fifo_init,
	.push_task = fifo_push,
	.pop_task = fifo_pop,
	.policy_name = "libfifo",
	.policy_description = "STARPU_SCHED_LIB test policy: a central FIFO",
	.worker_type = STARPU_WORKER_LIST,
};

static struct starpu_sched_policy *policies[] = { &libfifo_policy, NULL };

__attribute__((visibility("default"))) struct starpu_sched_policy *starpu_get_sched_lib_policy(const char *name)
{
	return name && strcmp(name, libfifo_policy.policy_name) == 0 ? &libfifo_policy : NULL;
}

__attribute__((visibility("default"))) struct starpu_sched_policy **starpu_get_sched_lib_policies(void)
{
	return policies;
}
