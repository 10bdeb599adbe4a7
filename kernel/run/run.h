/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The run room: the worker loop (worker_loop.c), the workers' start and
 * stop, the driver API (application threads running a worker), running a
 * function on workers, parallel code on a context's workers, parallel workers.
 */
#ifndef __ASTRO_RUN_H__
#define __ASTRO_RUN_H__

#include "access/access.h"

int _astro_workers_start(void);
void _astro_workers_stop(void);
void _astro_workers_free(void);
/* Binds the thread that called starpu_init() as STARPU_MAIN_THREAD_CPUID, _COREID
 * or _BIND ask (nothing when none is set); called once the runtime runs. */
void _astro_main_thread_bind(void);
/* The calling thread becomes w's (its id, binding, the driver's set-up), and stops being it. */
void _astro_worker_thread_begin(struct _astro_worker *w);
void _astro_worker_thread_end(struct _astro_worker *w);
/* One round of w's scheduling loop; idle: its idle counts between rounds, { 0, 1 } at first. */
void _astro_worker_round(struct _astro_worker *w, unsigned idle[2]);

/* Progression hooks (progress_hooks.c): how many the program registered (atomic), and running
 * them, each worker at each round when there are some: 0 when one says the workers must not sleep. */
extern unsigned _astro_progression_nhooks;
unsigned _astro_progression_hooks_run(void);
/* Idle hooks (progress_hooks.c too): run at each round that found no task, when there are some. */
extern unsigned _astro_idle_nhooks;
unsigned _astro_idle_hooks_run(void);

/* The driver API (driver_api.c): marks the workers starpu_conf.not_launched_drivers names
 * (before their threads start; returns how many), tells one, and waits at shutdown
 * (running is 0) for the application's threads to leave their loops. */
int _astro_drivers_mark_not_launched(void);
bool _astro_driver_not_launched(int workerid);
void _astro_drivers_wait_out(void);
/* Does an OpenCL driver name the worker of OpenCL device devid? The OpenCL API half
 * (plugins/drivers/opencl/opencl_api.c) sets this when it opens its devices: the kernel
 * names no OpenCL function, and without it no OpenCL driver names a worker. */
void _astro_driver_api_set_opencl_matcher(bool (*names)(const struct starpu_driver *driver, int devid));


#endif /* __ASTRO_RUN_H__ */
