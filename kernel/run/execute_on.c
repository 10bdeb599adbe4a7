/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Running a function on chosen workers (starpu_execute_on_specific_workers,
 * starpu_execute_on_each_worker): one task each, pinned to its worker, waited for.
 */
#include "run/run.h"
/* Runs func on each worker of where, through tasks pinned to them. */
static void run_on_worker(void *buffers[], void *arg)
{
	(void)buffers;
	void **pair = arg;
	((void (*)(void *))pair[0])(pair[1]);
}

void starpu_execute_on_specific_workers(void (*func)(void *), void *arg, unsigned num_workers, unsigned *workers, const char *name)
{
	static struct starpu_codelet cl;
	cl.where = STARPU_CPU | STARPU_CUDA | STARPU_OPENCL | STARPU_HIP;
	cl.cpu_funcs[0] = run_on_worker;
	cl.cuda_funcs[0] = run_on_worker;
	cl.nbuffers = 0;
	cl.name = "execute_on_worker";
	void *pair[2] = { (void *)func, arg };
	struct starpu_task *tasks[STARPU_NMAXWORKERS];
	unsigned n = 0;
	for (unsigned i = 0; i < num_workers; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = &cl;
		t->cl_arg = pair;
		t->name = name;
		t->execute_on_a_specific_worker = 1;
		t->workerid = workers[i];
		t->detach = 0;
		t->destroy = 0;
		if (starpu_task_submit(t) == 0)
			tasks[n++] = t;
		else
			starpu_task_destroy(t);
	}
	for (unsigned i = 0; i < n; i++) {
		if (starpu_task_wait(tasks[i]) != 0)
			_astro_error("starpu_execute_on_specific_workers: waiting for a task failed");
		starpu_task_destroy(tasks[i]);
	}
}

void starpu_execute_on_each_worker_ex(void (*func)(void *), void *arg, uint32_t where, const char *name)
{
	unsigned ids[STARPU_NMAXWORKERS], n = 0;
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		if (where & _astro_rt.workers[i]->driver->where)
			ids[n++] = i;
	starpu_execute_on_specific_workers(func, arg, n, ids, name);
}

void starpu_execute_on_each_worker(void (*func)(void *), void *arg, uint32_t where)
{
	starpu_execute_on_each_worker_ex(func, arg, where, "execute_on_each_worker");
}
