/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Submits 100 tasks and checks that they all ran. Run it with the example
 * policy: STARPU_PLUGIN_PATH=$PWD STARPU_SCHED=example-fifo ./main
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <starpu.h>

#define NTASKS 100

static atomic_int ntasks_run;

static void count_run(void *buffers[], void *cl_arg)
{
	(void)buffers;
	(void)cl_arg;
	atomic_fetch_add(&ntasks_run, 1);
}

static struct starpu_codelet count_cl =
{
	.cpu_funcs = { count_run },
	.nbuffers = 0,
	.name = "count_run",
};

int main(void)
{
	int ret = starpu_init(NULL);

	if (ret == -ENODEV)
	{
		fprintf(stderr, "main: no worker available\n");
		return 77;
	}
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");

	for (int i = 0; i < NTASKS; i++)
	{
		ret = starpu_task_insert(&count_cl, 0);
		STARPU_CHECK_RETURN_VALUE(ret, "starpu_task_insert");
	}
	starpu_task_wait_for_all();
	printf("main: %d of %d tasks ran\n", atomic_load(&ntasks_run), NTASKS);
	fflush(stdout);
	/* The policy reports how many tasks it scheduled from here. */
	starpu_shutdown();
	return atomic_load(&ntasks_run) == NTASKS ? 0 : 1;
}
