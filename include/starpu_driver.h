/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Running a worker's loop on a thread of the application, as StarPU 1.4.
 * A worker named in starpu_conf.not_launched_drivers gets no thread of the
 * runtime: the application runs its loop with starpu_driver_run(), or step
 * by step with starpu_driver_init(), starpu_driver_run_once() and
 * starpu_driver_deinit(). Every call returns -EINVAL, with one message,
 * when the driver names no such worker or the worker is not in that state.
 */
#ifndef __STARPU_DRIVER_H__
#define __STARPU_DRIVER_H__

#include <starpu_config.h>
#include <starpu_worker.h>
#if defined(STARPU_USE_OPENCL) && !defined(__CUDACC__)
#include <starpu_opencl.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** A worker, named by its kind and its device: the CPU worker of devid
 * cpu_id (0 for the first CPU worker), the CUDA worker of device cuda_id,
 * the OpenCL worker of device opencl_id. */
struct starpu_driver
{
	/** STARPU_CPU_WORKER, STARPU_CUDA_WORKER or STARPU_OPENCL_WORKER. */
	enum starpu_worker_archtype type;
	/** Which worker of that kind. */
	union
	{
		unsigned cpu_id;
		unsigned cuda_id;
#if defined(STARPU_USE_OPENCL) && !defined(__CUDACC__)
		cl_device_id opencl_id;
#endif
		/* The size of a cl_device_id in every build: a program built without
		 * OpenCL passes the same struct to a runtime built with it. */
		void *reserved_opencl_id;
	} id;
};

/**
   Runs the loop of worker d on the calling thread: starpu_driver_init(),
   starpu_driver_run_once() until starpu_drivers_request_termination() was
   called and no submitted task is left (or starpu_shutdown() began), then
   starpu_driver_deinit(). Returns 0, or -EINVAL when d is NULL, of another
   kind, names no worker, or a worker the runtime runs itself.
*/
int starpu_driver_run(struct starpu_driver *d);

/**
   Asks every loop started by starpu_driver_run() to end, once the tasks
   submitted so far are done. Cleared at the next starpu_init().
*/
void starpu_drivers_request_termination(void);

/**
   Makes the calling thread the thread of worker d: binds it where the
   worker is bound (unless STARPU_WORKERS_NOBIND) and initialises the
   worker's device. Returns 0, or -EINVAL (as starpu_driver_run(), or the
   worker is initialised already).
*/
int starpu_driver_init(struct starpu_driver *d);

/**
   One round of the loop of worker d: runs a task it takes, if any; else
   waits a little for one (it may sleep until one is pushed to it).
   Returns 0, or -EINVAL when d was not initialised with
   starpu_driver_init() or another thread is in its loop.
*/
int starpu_driver_run_once(struct starpu_driver *d);

/**
   Ends what starpu_driver_init() began (the worker's device is released).
   Returns 0, or -EINVAL when d was not initialised.
*/
int starpu_driver_deinit(struct starpu_driver *d);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_DRIVER_H__ */
