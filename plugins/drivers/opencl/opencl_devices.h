/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OpenCL devices the runtime uses, shared by the driver plugin (workers,
 * memory nodes) and the starpu_opencl_* helpers in libastrolabe. Private to
 * this folder: the astro_opencl_* names are exported only so that the
 * loadable driver reaches the table in libastrolabe.
 */
#ifndef __ASTRO_OPENCL_DEVICES_H__
#define __ASTRO_OPENCL_DEVICES_H__

#include <starpu.h>
#include <starpu_opencl.h>
#include <stdbool.h>

struct astro_opencl_device
{
	cl_device_id device;
	cl_context context;
	cl_command_queue queue;              /* the worker's kernels */
	cl_command_queue transfer_queue;     /* the kernel's copies, from any thread */
	size_t memory;                       /* CL_DEVICE_GLOBAL_MEM_SIZE */
};

/* Picks the devices this starpu_init() may use (STARPU_OPENCL_ON_CPUS,
 * STARPU_OPENCL_ONLY_ON_CPUS) and opens a context and queues on each; returns
 * how many (0 without platform). Cheap once done: the same table until
 * astro_opencl_devices_close(). quick: an empty table, without loading any
 * platform, when astro_opencl_platforms_may_offer() says none can give one. */
int astro_opencl_devices_open(bool quick);
/* Can an installed platform give a device of these types? false only when sure
 * that none can, found without loading them (opencl_icd.c). */
bool astro_opencl_platforms_may_offer(cl_device_type types);
void astro_opencl_devices_close(void);
int astro_opencl_device_count(void);
/* Device devid of the table, NULL when out of range. */
const struct astro_opencl_device *astro_opencl_device_get(int devid);

#endif /* __ASTRO_OPENCL_DEVICES_H__ */
