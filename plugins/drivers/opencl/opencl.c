/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OpenCL driver: one worker per OpenCL device (STARPU_NOPENCL), running
 * the codelet's opencl_funcs, and the device's memory as a memory node:
 * buffers are cl_mem, copies go through the device's transfer queue.
 * Devices of type CPU (PoCL) only with STARPU_OPENCL_ON_CPUS=1 or
 * STARPU_OPENCL_ONLY_ON_CPUS=1, as StarPU.
 */
#include "opencl_devices.h"
#include <astrolabe/plugin.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Devices of this starpu_init(): opened when first counted (the kernel does
 * not ask when no OpenCL worker is wanted, e.g. STARPU_NOPENCL=0). Counted by
 * default (STARPU_NOPENCL unset), the platforms are loaded only when one may
 * give a device of the wanted types; asked for workers, always. */
static int default_device_count(void)
{
	return astro_opencl_devices_open(true);
}

static int device_count(void)
{
	return astro_opencl_devices_open(false);
}

static int has_impl(const struct starpu_codelet *cl, unsigned nimpl)
{
	return nimpl < STARPU_MAXIMPLEMENTATIONS && cl->opencl_funcs[nimpl] != NULL;
}

static void execute(int workerid, struct starpu_task *task, void **buffers, unsigned nimpl)
{
	const struct astro_opencl_device *d = astro_opencl_device_get(starpu_worker_get_devid(workerid));
	task->cl->opencl_funcs[nimpl](buffers, task->cl_arg);
	/* The implementation may leave its kernels queued (STARPU_OPENCL_ASYNC): the task ends when they do. */
	if (d)
		clFinish(d->queue);
}

/* A STARPU_OPENCL_ASYNC implementation's kernels are left in the device's
 * queue: a marker queued after them says when they are done, and the worker
 * starts its next task meanwhile (its pipeline). */
static void *execute_async(int workerid, struct starpu_task *task, void **buffers, unsigned nimpl)
{
	const struct astro_opencl_device *d = astro_opencl_device_get(starpu_worker_get_devid(workerid));
	if (!d || !(task->cl->opencl_flags[nimpl] & STARPU_OPENCL_ASYNC)) {
		execute(workerid, task, buffers, nimpl);
		return NULL;
	}
	task->cl->opencl_funcs[nimpl](buffers, task->cl_arg);
	cl_event marker;
	if (clEnqueueMarkerWithWaitList(d->queue, 0, NULL, &marker) == CL_SUCCESS) {
		clFlush(d->queue);
		return marker;
	}
	clFinish(d->queue); /* no marker to wait on: the task ends when its queue is empty */
	return NULL;
}

static int execute_done(int workerid, struct starpu_task *task, void *request, int wait)
{
	(void)workerid;
	cl_event marker = request;
	cl_int status = CL_COMPLETE;
	cl_int err = wait ? clWaitForEvents(1, &marker)
			  : clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL);
	if (err == CL_SUCCESS && status > CL_COMPLETE)
		return 0;
	if (err != CL_SUCCESS || status < 0)
		astro_log_error("opencl", "task %s: its OpenCL kernels failed: %s", starpu_task_get_name(task),
				starpu_opencl_error_string(err != CL_SUCCESS ? err : status));
	clReleaseEvent(marker);
	return 1;
}

/* ------------------------------------------------------------ node ops */

static uintptr_t node_allocate(int devid, size_t size)
{
	const struct astro_opencl_device *d = astro_opencl_device_get(devid);
	if (!d)
		return 0;
	cl_int err;
	cl_mem buffer = clCreateBuffer(d->context, CL_MEM_READ_WRITE, size, NULL, &err);
	return err == CL_SUCCESS ? (uintptr_t)buffer : 0;
}

static void node_free(int devid, uintptr_t addr, size_t size)
{
	(void)devid;
	(void)size;
	clReleaseMemObject((cl_mem)addr);
}

static int copy_result(cl_int err, const char *what)
{
	if (err == CL_SUCCESS)
		return 0;
	astro_log_error("opencl", "%s failed: %s", what, starpu_opencl_error_string(err));
	return -EIO;
}

/* A copy was queued (event: left under way): sent to the device at once, so that it runs while the worker computes. */
static int started(const struct astro_opencl_device *d, cl_int err, cl_event *event, const char *what)
{
	if (err == CL_SUCCESS && event)
		clFlush(d->transfer_queue);
	return copy_result(err, what);
}

/* The device of a copy, and its event: where the copy is left under way (request given, asynchronous copies not
 * disabled by STARPU_DISABLE_ASYNCHRONOUS_OPENCL_COPY), NULL for a copy done when the call returns. */
static const struct astro_opencl_device *copy_start(int devid, void **request, cl_event **event)
{
	*event = request && !starpu_asynchronous_opencl_copy_disabled() ? (cl_event *)request : NULL;
	if (request)
		*request = NULL;
	return astro_opencl_device_get(devid);
}

static int copy_from_ram(int devid, const void *src, uintptr_t dst, size_t dst_offset, size_t size, void **request)
{
	cl_event *event;
	const struct astro_opencl_device *d = copy_start(devid, request, &event);
	if (!d)
		return -ENODEV;
	return started(d, clEnqueueWriteBuffer(d->transfer_queue, (cl_mem)dst, event ? CL_FALSE : CL_TRUE, dst_offset, size, src,
						0, NULL, event), event, "writing to the device");
}

static int copy_to_ram(int devid, uintptr_t src, size_t src_offset, void *dst, size_t size, void **request)
{
	cl_event *event;
	const struct astro_opencl_device *d = copy_start(devid, request, &event);
	if (!d)
		return -ENODEV;
	return started(d, clEnqueueReadBuffer(d->transfer_queue, (cl_mem)src, event ? CL_FALSE : CL_TRUE, src_offset, size, dst,
					      0, NULL, event), event, "reading from the device");
}

/* Blocks ld bytes apart, rows of blocksize bytes, between main memory and the device's buffer: one rectangle
 * command (OpenCL 1.1), written to the device or read from it. */
static int copy_rect(int devid, bool to_device, cl_mem buffer, size_t buffer_offset, size_t buffer_ld, void *host,
		     size_t host_ld, size_t blocksize, size_t numblocks, void **request)
{
	cl_event *event;
	const struct astro_opencl_device *d = copy_start(devid, request, &event);
	if (!d)
		return -ENODEV;
	const size_t buffer_origin[3] = { buffer_offset, 0, 0 }, host_origin[3] = { 0, 0, 0 }, region[3] = { blocksize, numblocks, 1 };
	cl_bool blocking = event ? CL_FALSE : CL_TRUE;
	if (to_device)
		return started(d, clEnqueueWriteBufferRect(d->transfer_queue, buffer, blocking, buffer_origin, host_origin, region,
							    buffer_ld, 0, host_ld, 0, host, 0, NULL, event),
			       event, "writing a rectangle to the device");
	return started(d, clEnqueueReadBufferRect(d->transfer_queue, buffer, blocking, buffer_origin, host_origin, region, buffer_ld,
						   0, host_ld, 0, host, 0, NULL, event),
		       event, "reading a rectangle from the device");
}

static int copy2d_from_ram(int devid, const void *src, size_t ld_src, uintptr_t dst, size_t dst_offset, size_t ld_dst,
			   size_t blocksize, size_t numblocks, void **request)
{
	return copy_rect(devid, true, (cl_mem)dst, dst_offset, ld_dst, (void *)src, ld_src, blocksize, numblocks, request);
}

static int copy2d_to_ram(int devid, uintptr_t src, size_t src_offset, size_t ld_src, void *dst, size_t ld_dst,
			 size_t blocksize, size_t numblocks, void **request)
{
	return copy_rect(devid, false, (cl_mem)src, src_offset, ld_src, dst, ld_dst, blocksize, numblocks, request);
}

static int copy_test(int devid, void *request)
{
	(void)devid;
	cl_int status = CL_COMPLETE;
	if (request && clGetEventInfo((cl_event)request, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL) != CL_SUCCESS)
		return 1;
	return status == CL_COMPLETE || status < 0;
}

static int copy_wait(int devid, void *request)
{
	(void)devid;
	if (!request)
		return 0;
	cl_event event = request;
	int ret = copy_result(clWaitForEvents(1, &event), "waiting for a copy");
	clReleaseEvent(event);
	return ret;
}

static size_t memory_size(int devid)
{
	const struct astro_opencl_device *d = astro_opencl_device_get(devid);
	return d ? d->memory : 0;
}

static const struct astro_node_ops opencl_node_ops = {
	.kind = STARPU_OPENCL_RAM,
	.allocate = node_allocate,
	.free = node_free,
	.copy_from_ram = copy_from_ram,
	.copy_to_ram = copy_to_ram,
	.copy2d_from_ram = copy2d_from_ram,
	.copy2d_to_ram = copy2d_to_ram,
	.copy_test = copy_test,
	.copy_wait = copy_wait,
	.memory_size = memory_size,
};

static const struct astro_driver opencl_driver = {
	.name = "opencl",
	.archtype = STARPU_OPENCL_WORKER,
	.where = STARPU_OPENCL,
	.count_env = "STARPU_NOPENCL",
	.conf_count_offset = offsetof(struct starpu_conf, nopencl),
	.default_count = default_device_count,
	.max_count = device_count,
	.has_impl = has_impl,
	.execute = execute,
	.pipeline_env = "STARPU_OPENCL_PIPELINE",
	.node_ops = &opencl_node_ops,
	.execute_async = execute_async,
	.execute_done = execute_done,
};

static int init(void)
{
	return astro_driver_register(&opencl_driver);
}

static void fini(void)
{
	astro_opencl_devices_close();
}

ASTRO_PLUGIN_DEFINE(driver_opencl, ASTRO_PLUGIN_DRIVER,
		    "OpenCL workers, one per device (STARPU_NOPENCL; CPU devices with STARPU_OPENCL_ON_CPUS=1)", init, fini);
