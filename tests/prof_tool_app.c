/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small StarPU program for test_prof_tool: runs argv[1] empty tasks on the
 * workers STARPU_NCPU asks for, between a starpu_prof_tool_user_start/_end
 * pair. The test runs it with a tool in LD_PRELOAD; linked with
 * plugins/proftool_starpu.c it is prof_tool_linked, a program with a tool
 * linked in.
 */
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>

static void nothing(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

int main(int argc, char **argv)
{
	int ntasks = argc > 1 ? atoi(argv[1]) : 10;
	struct starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cpu_funcs[0] = nothing;
	cl.name = "nothing";
	if (starpu_init(NULL) != 0) {
		fprintf(stderr, "prof_tool_app: starpu_init failed\n");
		return 1;
	}
	starpu_prof_tool_user_start("tasks");
	for (int i = 0; i < ntasks; i++) {
		struct starpu_task *task = starpu_task_create();
		task->cl = &cl;
		if (starpu_task_submit(task) != 0) {
			fprintf(stderr, "prof_tool_app: submission failed\n");
			return 1;
		}
	}
	starpu_task_wait_for_all();
	starpu_prof_tool_user_end("tasks");
	starpu_shutdown();
	fprintf(stderr, "prof_tool_app: %d tasks done\n", ntasks);
	return 0;
}
