/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CUDA driver: one worker per CUDA device (STARPU_NCUDA; several with
 * STARPU_NWORKER_PER_CUDA, sharing the device's memory), running the
 * codelet's cuda_funcs with a stream of its own (starpu_cuda_get_local_stream()),
 * and the device's memory as a memory node whose copies are asynchronous on
 * a transfer stream, completed by an event. Without a usable device (no
 * driver, cudaGetDeviceCount() failing or finding none) it declines quietly,
 * saying so only when STARPU_NCUDA asks for CUDA workers.
 *
 * cuBLAS and cuSOLVER are loaded when the program calls starpu_cublas_init()
 * or starpu_cusolver_init() or starpu_cusparse_init() (dlopen by the toolkit's soname: a program that
 * links them gets the same library), so that every other program does not
 * load hundreds of MiB at each starpu_init().
 *
 * Main memory pinned for the devices (starpu_malloc(), starpu_memory_pin())
 * is registered with cudaHostRegister, portable to every device: without it
 * CUDA stages each copy through a buffer of its own (on an H200: 12 GB/s
 * instead of the bus's speed) and a copy to main memory does not overlap.
 * What is still registered at fini is unregistered there.
 */
#include "cuda_services.h"
#include <astrolabe/plugin.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusolverSp.h>
#include <cusolverRf.h>
#include <cusparse.h>
#ifdef STARPU_HAVE_LIBCUBLASLT
#include <cublasLt.h>
#endif
#include <dlfcn.h>
#include <errno.h>
#include <glib.h>
#include <astrolabe/thread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

struct device
{
	cudaStream_t transfer_stream; /* the kernel's copies, from any thread */
	size_t memory;                /* totalGlobalMem */
	struct cudaDeviceProp prop;   /* starpu_cuda_get_device_properties() */
};

/* What each CUDA worker has of its own (its thread makes and uses it). */
struct worker
{
	cudaStream_t stream;          /* its kernels */
	cublasHandle_t cublas;
	cusolverDnHandle_t cusolver_dn;
	cusolverSpHandle_t cusolver_sp;
	cusolverRfHandle_t cusolver_rf;   /* refactorisation: no stream of its own in cuSOLVER */
	cusparseHandle_t cusparse;
	void *cublaslt;               /* a cublasLtHandle_t */
	cudaEvent_t events[8];        /* those of its asynchronous tasks that ended, for the next ones */
	unsigned nevents;
};

static starpu_pthread_mutex_t table_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static struct device devices[STARPU_MAXCUDADEVS];
static int ndevices = -1; /* -1: not open */
static struct worker workers[STARPU_NMAXWORKERS];

/* One line naming the call that failed and CUDA's reason; returns -EIO. */
static int cuda_failed(const char *what, cudaError_t err)
{
	astro_log_error("cuda", "%s failed: %s", what, cudaGetErrorString(err));
	return -EIO;
}

/* Is CUDA's driver library there? The runtime needs it for any device, and
 * looks for it itself at its first call, after setting itself up: without it,
 * the count is 0 at the cost of a look-up. Left loaded for the runtime. */
static bool driver_library_present(void)
{
	static void *driver;
	if (!driver)
		driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_GLOBAL);
	return driver != NULL;
}

static int usable_devices(cudaError_t *err)
{
	int n = 0;
	if (!driver_library_present()) {
		*err = cudaErrorInsufficientDriver;
		return 0;
	}
	*err = cudaGetDeviceCount(&n);
	if (*err != cudaSuccess)
		return 0;
	return n < STARPU_MAXCUDADEVS ? n : STARPU_MAXCUDADEVS;
}

static bool device_open(int devid, struct device *d)
{
	struct cudaDeviceProp *prop = &d->prop;
	cudaError_t err = cudaSetDevice(devid);
	if (err == cudaSuccess)
		err = cudaGetDeviceProperties(prop, devid);
	if (err == cudaSuccess)
		err = cudaStreamCreateWithFlags(&d->transfer_stream, cudaStreamNonBlocking);
	if (err != cudaSuccess) {
		astro_log_error("cuda", "device %d could not be opened (%s): it is not used", devid, cudaGetErrorString(err));
		return false;
	}
	d->memory = prop->totalGlobalMem;
	return true;
}

/* Opens the devices of this starpu_init() (the kernel asks only when CUDA
 * workers may be wanted); the same table until fini. */
static int devices_open(void)
{
	starpu_pthread_mutex_lock(&table_lock);
	if (ndevices < 0) {
		cudaError_t err;
		int n = usable_devices(&err);
		ndevices = 0;
		/* Device ids are CUDA's: a device that fails ends the table. */
		while (ndevices < n && device_open(ndevices, &devices[ndevices]))
			ndevices++;
	}
	int n = ndevices;
	starpu_pthread_mutex_unlock(&table_lock);
	return n;
}

static void devices_close(void)
{
	starpu_pthread_mutex_lock(&table_lock);
	for (int i = 0; i < ndevices; i++) {
		cudaSetDevice(i);
		cudaStreamDestroy(devices[i].transfer_stream);
		devices[i] = (struct device){ 0 };
	}
	ndevices = -1;
	starpu_pthread_mutex_unlock(&table_lock);
}

static struct device *device_get(int devid)
{
	return devid >= 0 && devid < __atomic_load_n(&ndevices, __ATOMIC_ACQUIRE) ? &devices[devid] : NULL;
}

/* The calling CUDA worker's own, NULL from any other thread. */
static struct worker *local_worker(void)
{
	int workerid = starpu_worker_get_id();
	if (workerid < 0 || starpu_worker_get_type(workerid) != STARPU_CUDA_WORKER)
		return NULL;
	return &workers[workerid];
}

/* ---------------------------------------------------------------- worker */

static int has_impl(const struct starpu_codelet *cl, unsigned nimpl)
{
	return nimpl < STARPU_MAXIMPLEMENTATIONS && cl->cuda_funcs[nimpl] != NULL;
}

static int worker_init(int workerid, int devid)
{
	struct worker *w = &workers[workerid];
	*w = (struct worker){ 0 };
	cudaError_t err = cudaSetDevice(devid);
	if (err != cudaSuccess)
		return cuda_failed("cudaSetDevice", err);
	err = cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking);
	return err == cudaSuccess ? 0 : cuda_failed("creating the worker's stream", err);
}

static void worker_deinit(int workerid, int devid)
{
	(void)devid;
	while (workers[workerid].nevents)
		cudaEventDestroy(workers[workerid].events[--workers[workerid].nevents]);
	if (workers[workerid].stream)
		cudaStreamDestroy(workers[workerid].stream);
	workers[workerid] = (struct worker){ 0 };
}

static void work_failed(struct starpu_task *task, cudaError_t err)
{
	astro_log_error("cuda", "task %s: its CUDA work failed: %s", starpu_task_get_name(task), cudaGetErrorString(err));
}

/* The task's work is done when the worker's stream is empty. */
static void stream_wait(struct starpu_task *task, cudaStream_t stream)
{
	cudaError_t err = stream ? cudaStreamSynchronize(stream) : cudaSuccess;
	if (err != cudaSuccess)
		work_failed(task, err);
}

static void execute(int workerid, struct starpu_task *task, void **buffers, unsigned nimpl)
{
	task->cl->cuda_funcs[nimpl](buffers, task->cl_arg);
	/* Whether the implementation is STARPU_CUDA_ASYNC or not. */
	stream_wait(task, workers[workerid].stream);
}

/* A STARPU_CUDA_ASYNC implementation's work is left on the worker's stream:
 * an event recorded after it says when it is done, and the worker starts its
 * next task meanwhile (its pipeline). */
static void *execute_async(int workerid, struct starpu_task *task, void **buffers, unsigned nimpl)
{
	cudaStream_t stream = workers[workerid].stream;
	if (!stream || !(task->cl->cuda_flags[nimpl] & STARPU_CUDA_ASYNC)) {
		execute(workerid, task, buffers, nimpl);
		return NULL;
	}
	task->cl->cuda_funcs[nimpl](buffers, task->cl_arg);
	struct worker *w = &workers[workerid];
	cudaEvent_t event;
	cudaError_t err = cudaSuccess;
	if (w->nevents)
		event = w->events[--w->nevents];
	else
		err = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
	if (err == cudaSuccess && (err = cudaEventRecord(event, stream)) != cudaSuccess)
		cudaEventDestroy(event);
	if (err == cudaSuccess)
		return event;
	/* No event to wait on: the task ends when its stream is empty. */
	cudaGetLastError();
	stream_wait(task, stream);
	return NULL;
}

static int execute_done(int workerid, struct starpu_task *task, void *request, int wait)
{
	struct worker *w = &workers[workerid];
	cudaEvent_t event = request;
	cudaError_t err = wait ? cudaEventSynchronize(event) : cudaEventQuery(event);
	if (err == cudaErrorNotReady)
		return 0;
	if (err != cudaSuccess)
		work_failed(task, err);
	if (err == cudaSuccess && w->nevents < sizeof(w->events) / sizeof(w->events[0]))
		w->events[w->nevents++] = event; /* reused: no creation per task */
	else
		cudaEventDestroy(event);
	return 1;
}

/* ------------------------------------------------------------ node ops */

static uintptr_t node_allocate(int devid, size_t size)
{
	void *ptr = NULL;
	if (cudaSetDevice(devid) != cudaSuccess || cudaMalloc(&ptr, size) != cudaSuccess) {
		cudaGetLastError(); /* out of memory is not sticky: the kernel evicts and tries again */
		return 0;
	}
	return (uintptr_t)ptr;
}

static void node_free(int devid, uintptr_t addr, size_t size)
{
	cudaSetDevice(devid);
	cudaFree((void *)addr);
}

/* Queues rows of width bytes (height 1: one run), spitch / dpitch bytes apart, on stream. */
static cudaError_t queue_copy(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
			      enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return height == 1 ? cudaMemcpyAsync(dst, src, width, kind, stream)
			   : cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream);
}

/* Copies on the device's transfer stream; with request, returns at once and
 * sets *request to an event recorded after the copy. */
static int copy(int devid, void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
		enum cudaMemcpyKind kind, void **request)
{
	struct device *d = device_get(devid);
	if (!d)
		return -ENODEV;
	cudaError_t err = cudaSetDevice(devid);
	if (err != cudaSuccess)
		return cuda_failed("cudaSetDevice", err);
	if (request)
		*request = NULL;
	if (!request || starpu_asynchronous_cuda_copy_disabled()) {
		err = queue_copy(dst, dpitch, src, spitch, width, height, kind, d->transfer_stream);
		if (err == cudaSuccess)
			err = cudaStreamSynchronize(d->transfer_stream);
		return err == cudaSuccess ? 0 : cuda_failed("a copy", err);
	}
	cudaEvent_t event;
	err = queue_copy(dst, dpitch, src, spitch, width, height, kind, d->transfer_stream);
	if (err != cudaSuccess)
		return cuda_failed(height == 1 ? "cudaMemcpyAsync" : "cudaMemcpy2DAsync", err);
	err = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
	if (err == cudaSuccess && (err = cudaEventRecord(event, d->transfer_stream)) != cudaSuccess)
		cudaEventDestroy(event);
	if (err != cudaSuccess) {
		/* No event to wait on: complete the copy here. */
		cudaStreamSynchronize(d->transfer_stream);
		return cuda_failed("recording a copy's completion", err);
	}
	*request = event;
	return 0;
}

static int copy_from_ram(int devid, const void *src, uintptr_t dst, size_t dst_offset, size_t size, void **request)
{
	return copy(devid, (char *)dst + dst_offset, size, src, size, size, 1, cudaMemcpyHostToDevice, request);
}

static int copy_to_ram(int devid, uintptr_t src, size_t src_offset, void *dst, size_t size, void **request)
{
	return copy(devid, dst, size, (const char *)src + src_offset, size, size, 1, cudaMemcpyDeviceToHost, request);
}

static int copy2d_from_ram(int devid, const void *src, size_t ld_src, uintptr_t dst, size_t dst_offset, size_t ld_dst,
			   size_t blocksize, size_t numblocks, void **request)
{
	return copy(devid, (char *)dst + dst_offset, ld_dst, src, ld_src, blocksize, numblocks, cudaMemcpyHostToDevice, request);
}

static int copy2d_to_ram(int devid, uintptr_t src, size_t src_offset, size_t ld_src, void *dst, size_t ld_dst,
			 size_t blocksize, size_t numblocks, void **request)
{
	return copy(devid, dst, ld_dst, (const char *)src + src_offset, ld_src, blocksize, numblocks, cudaMemcpyDeviceToHost,
		    request);
}

static int copy_test(int devid, void *request)
{
	/* Anything but "not ready" completes it: copy_wait says an error. */
	return !request || cudaEventQuery((cudaEvent_t)request) != cudaErrorNotReady;
}

static int copy_wait(int devid, void *request)
{
	if (!request)
		return 0;
	cudaError_t err = cudaEventSynchronize((cudaEvent_t)request);
	cudaEventDestroy((cudaEvent_t)request);
	return err == cudaSuccess ? 0 : cuda_failed("a copy", err);
}

static size_t memory_size(int devid)
{
	struct device *d = device_get(devid);
	return d ? d->memory : 0;
}

/* ----------------------------------------------------- pinned memory */

static GHashTable *registered; /* address -> itself: what host_register registered (table_lock) */

static int host_register(void *addr, size_t size)
{
	cudaError_t err = cudaHostRegister(addr, size, cudaHostRegisterPortable);
	if (err != cudaSuccess) {
		cudaGetLastError(); /* not sticky: the memory stays usable, unpinned */
		static bool said;
		if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
			astro_log_error("cuda", "cannot pin %zu bytes of main memory for the devices (%s): copies of "
					"unpinned memory are staged and slower; raise the locked-memory limit (ulimit -l) or pin less",
					size, cudaGetErrorString(err));
		return -ENOMEM;
	}
	starpu_pthread_mutex_lock(&table_lock);
	if (!registered)
		registered = g_hash_table_new(NULL, NULL);
	g_hash_table_add(registered, addr);
	starpu_pthread_mutex_unlock(&table_lock);
	return 0;
}

static void host_unregister(void *addr)
{
	starpu_pthread_mutex_lock(&table_lock);
	bool ours = registered && g_hash_table_remove(registered, addr);
	starpu_pthread_mutex_unlock(&table_lock);
	if (ours && cudaHostUnregister(addr) != cudaSuccess)
		cudaGetLastError();
}

static void host_unregister_all(void)
{
	starpu_pthread_mutex_lock(&table_lock);
	GHashTable *left = registered;
	registered = NULL;
	starpu_pthread_mutex_unlock(&table_lock);
	if (!left)
		return;
	GHashTableIter it;
	gpointer addr;
	g_hash_table_iter_init(&it, left);
	while (g_hash_table_iter_next(&it, &addr, NULL))
		if (cudaHostUnregister(addr) != cudaSuccess)
			cudaGetLastError();
	g_hash_table_destroy(left);
}

static const struct astro_node_ops cuda_node_ops = {
	.kind = STARPU_CUDA_RAM,
	.allocate = node_allocate,
	.free = node_free,
	.copy_from_ram = copy_from_ram,
	.copy_to_ram = copy_to_ram,
	.copy2d_from_ram = copy2d_from_ram,
	.copy2d_to_ram = copy2d_to_ram,
	.copy_test = copy_test,
	.copy_wait = copy_wait,
	.memory_size = memory_size,
	.host_register = host_register,
	.host_unregister = host_unregister,
};

static const struct astro_driver cuda_driver = {
	.name = "cuda",
	.archtype = STARPU_CUDA_WORKER,
	.where = STARPU_CUDA,
	.count_env = "STARPU_NCUDA",
	.conf_count_offset = offsetof(struct starpu_conf, ncuda),
	.default_count = devices_open,
	.max_count = devices_open,
	.worker_init = worker_init,
	.worker_deinit = worker_deinit,
	.has_impl = has_impl,
	.execute = execute,
	.pipeline_env = "STARPU_CUDA_PIPELINE",
	.workers_per_device_env = "STARPU_NWORKER_PER_CUDA",
	.node_ops = &cuda_node_ops,
	.execute_async = execute_async,
	.execute_done = execute_done,
};

/* ------------------------------------------------- cuBLAS and cuSOLVER */

/* Loads a library of the toolkit once per process; says once when it cannot. */
static void *library(const char *soname, void **handle, bool *tried)
{
	starpu_pthread_mutex_lock(&table_lock);
	if (!*tried) {
		*tried = true;
		*handle = dlopen(soname, RTLD_NOW | RTLD_GLOBAL);
		if (!*handle)
			astro_log_error("cuda", "cannot load %s (%s): its handles stay NULL; install the CUDA toolkit's "
					"library or add its folder to LD_LIBRARY_PATH", soname, dlerror());
	}
	starpu_pthread_mutex_unlock(&table_lock);
	return *handle;
}

#define LOAD(lib, sym) ((lib) ? (__typeof__(sym) *)dlsym(lib, #sym) : NULL)

static void *cublas_lib, *cusolver_lib, *cusparse_lib;
static bool cublas_tried, cusolver_tried, cusparse_tried;

static void *cublas(void)
{
	return library("libcublas.so." STR(CUBLAS_VER_MAJOR), &cublas_lib, &cublas_tried);
}

static void *cusolver(void)
{
	return library("libcusolver.so." STR(CUSOLVER_VER_MAJOR), &cusolver_lib, &cusolver_tried);
}

static void *cusparse(void)
{
	return library("libcusparse.so." STR(CUSPARSE_VER_MAJOR), &cusparse_lib, &cusparse_tried);
}

/* Each runs in every CUDA worker's thread (starpu_execute_on_each_worker). */
static void cublas_create_here(void *arg)
{
	struct worker *w = local_worker();
	__typeof__(cublasCreate_v2) *create = LOAD(cublas(), cublasCreate_v2);
	__typeof__(cublasSetStream_v2) *set_stream = LOAD(cublas(), cublasSetStream_v2);
	if (!w || w->cublas || !create || !set_stream)
		return;
	cublasStatus_t status = create(&w->cublas);
	if (status == CUBLAS_STATUS_SUCCESS)
		status = set_stream(w->cublas, w->stream);
	if (status != CUBLAS_STATUS_SUCCESS)
		astro_log_error("starpu_cublas_init", "cuBLAS error %d on device %d: its handle is not usable", (int)status,
				starpu_worker_get_devid(starpu_worker_get_id()));
}

static void cublas_destroy_here(void *arg)
{
	struct worker *w = local_worker();
	__typeof__(cublasDestroy_v2) *destroy = LOAD(cublas_lib, cublasDestroy_v2);
	if (w && w->cublas && destroy)
		destroy(w->cublas);
	if (w)
		w->cublas = NULL;
}

/* cublas.h (the v1 API) cannot be included with cublas_v2.h. */
typedef int cublas_set_kernel_stream_fn(cudaStream_t stream);

static void serve_cublas_set_stream(void)
{
	struct worker *w = local_worker();
	cublas_set_kernel_stream_fn *set = cublas_lib ? (cublas_set_kernel_stream_fn *)dlsym(cublas_lib, "cublasSetKernelStream") : NULL;
	if (w && set)
		set(w->stream);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* cuSOLVER Sp, which StarPU serves */
static void cusolver_create_here(void *arg)
{
	struct worker *w = local_worker();
	void *lib = cusolver();
	__typeof__(cusolverDnCreate) *dn_create = LOAD(lib, cusolverDnCreate);
	__typeof__(cusolverDnSetStream) *dn_stream = LOAD(lib, cusolverDnSetStream);
	__typeof__(cusolverSpCreate) *sp_create = LOAD(lib, cusolverSpCreate);
	__typeof__(cusolverSpSetStream) *sp_stream = LOAD(lib, cusolverSpSetStream);
	__typeof__(cusolverRfCreate) *rf_create = LOAD(lib, cusolverRfCreate);
	if (!w || !dn_create || !dn_stream || !sp_create || !sp_stream || !rf_create)
		return;
	cusolverStatus_t status = CUSOLVER_STATUS_SUCCESS;
	if (!w->cusolver_dn && (status = dn_create(&w->cusolver_dn)) == CUSOLVER_STATUS_SUCCESS)
		status = dn_stream(w->cusolver_dn, w->stream);
	if (status == CUSOLVER_STATUS_SUCCESS && !w->cusolver_sp && (status = sp_create(&w->cusolver_sp)) == CUSOLVER_STATUS_SUCCESS)
		status = sp_stream(w->cusolver_sp, w->stream);
	if (status == CUSOLVER_STATUS_SUCCESS && !w->cusolver_rf)
		status = rf_create(&w->cusolver_rf);
	if (status != CUSOLVER_STATUS_SUCCESS)
		astro_log_error("starpu_cusolver_init", "cuSOLVER error %d on device %d: its handles are not usable", (int)status,
				starpu_worker_get_devid(starpu_worker_get_id()));
}

static void cusolver_destroy_here(void *arg)
{
	struct worker *w = local_worker();
	__typeof__(cusolverDnDestroy) *dn_destroy = LOAD(cusolver_lib, cusolverDnDestroy);
	__typeof__(cusolverSpDestroy) *sp_destroy = LOAD(cusolver_lib, cusolverSpDestroy);
	__typeof__(cusolverRfDestroy) *rf_destroy = LOAD(cusolver_lib, cusolverRfDestroy);
	if (!w)
		return;
	if (w->cusolver_dn && dn_destroy)
		dn_destroy(w->cusolver_dn);
	if (w->cusolver_sp && sp_destroy)
		sp_destroy(w->cusolver_sp);
	if (w->cusolver_rf && rf_destroy)
		rf_destroy(w->cusolver_rf);
	w->cusolver_dn = NULL;
	w->cusolver_sp = NULL;
	w->cusolver_rf = NULL;
}
#pragma GCC diagnostic pop

static void cusparse_create_here(void *arg)
{
	struct worker *w = local_worker();
	__typeof__(cusparseCreate) *create = LOAD(cusparse(), cusparseCreate);
	__typeof__(cusparseSetStream) *set_stream = LOAD(cusparse(), cusparseSetStream);
	if (!w || w->cusparse || !create || !set_stream)
		return;
	cusparseStatus_t status = create(&w->cusparse);
	if (status == CUSPARSE_STATUS_SUCCESS)
		status = set_stream(w->cusparse, w->stream);
	if (status != CUSPARSE_STATUS_SUCCESS)
		astro_log_error("starpu_cusparse_init", "cuSPARSE error %d on device %d: its handle is not usable", (int)status,
				starpu_worker_get_devid(starpu_worker_get_id()));
}

static void cusparse_destroy_here(void *arg)
{
	struct worker *w = local_worker();
	__typeof__(cusparseDestroy) *destroy = LOAD(cusparse_lib, cusparseDestroy);
	if (w && w->cusparse && destroy)
		destroy(w->cusparse);
	if (w)
		w->cusparse = NULL;
}

#ifdef STARPU_HAVE_LIBCUBLASLT
static void *cublaslt_lib;
static bool cublaslt_tried;

static void cublaslt_create_here(void *arg)
{
	(void)arg;
	struct worker *w = local_worker();
	__typeof__(cublasLtCreate) *create =
		LOAD(library("libcublasLt.so." STR(CUBLAS_VER_MAJOR), &cublaslt_lib, &cublaslt_tried), cublasLtCreate);
	if (!w || w->cublaslt || !create)
		return;
	cublasLtHandle_t handle = NULL;
	cublasStatus_t status = create(&handle);
	if (status != CUBLAS_STATUS_SUCCESS)
		astro_log_error("starpu_cublasLt_init", "cuBLASLt error %d on device %d: its handle is not usable", (int)status,
				starpu_worker_get_devid(starpu_worker_get_id()));
	else
		w->cublaslt = handle;
}

static void cublaslt_destroy_here(void *arg)
{
	(void)arg;
	struct worker *w = local_worker();
	__typeof__(cublasLtDestroy) *destroy = LOAD(cublaslt_lib, cublasLtDestroy);
	if (w && w->cublaslt && destroy)
		destroy((cublasLtHandle_t)w->cublaslt);
	if (w)
		w->cublaslt = NULL;
}
#endif

/* On every CUDA worker; nothing when there is none (STARPU_NCUDA=0). */
static void on_cuda_workers(void (*fn)(void *), const char *name)
{
	if (starpu_cuda_worker_get_count() > 0)
		starpu_execute_on_each_worker_ex(fn, NULL, STARPU_CUDA, name);
}

static void serve_cublas_init(void)
{
	on_cuda_workers(cublas_create_here, "starpu_cublas_init");
}

static void serve_cublas_shutdown(void)
{
	on_cuda_workers(cublas_destroy_here, "starpu_cublas_shutdown");
}

static void serve_cusolver_init(void)
{
	on_cuda_workers(cusolver_create_here, "starpu_cusolver_init");
}

static void serve_cusolver_shutdown(void)
{
	on_cuda_workers(cusolver_destroy_here, "starpu_cusolver_shutdown");
}

static void serve_cusparse_init(void)
{
	on_cuda_workers(cusparse_create_here, "starpu_cusparse_init");
}

static void serve_cusparse_shutdown(void)
{
	on_cuda_workers(cusparse_destroy_here, "starpu_cusparse_shutdown");
}

static void *local_cusparse(void)
{
	struct worker *w = local_worker();
	return w ? w->cusparse : NULL;
}

static void serve_cublaslt_init(void)
{
#ifdef STARPU_HAVE_LIBCUBLASLT
	on_cuda_workers(cublaslt_create_here, "starpu_cublasLt_init");
#else
	if (starpu_cuda_worker_get_count() > 0)
		astro_log_error("starpu_cublasLt_init", "the CUDA toolkit of this build has no cublasLt.h: no cuBLASLt handle is made");
#endif
}

static void serve_cublaslt_shutdown(void)
{
#ifdef STARPU_HAVE_LIBCUBLASLT
	on_cuda_workers(cublaslt_destroy_here, "starpu_cublasLt_shutdown");
#endif
}

static void *local_cublaslt(void)
{
	struct worker *w = local_worker();
	return w ? w->cublaslt : NULL;
}

static void *local_stream(void)
{
	struct worker *w = local_worker();
	return w ? w->stream : NULL;
}

static void *local_cublas(void)
{
	struct worker *w = local_worker();
	return w ? w->cublas : NULL;
}

static void *local_cusolver_dn(void)
{
	struct worker *w = local_worker();
	return w ? w->cusolver_dn : NULL;
}

static void *local_cusolver_sp(void)
{
	struct worker *w = local_worker();
	return w ? w->cusolver_sp : NULL;
}

static void *local_cusolver_rf(void)
{
	struct worker *w = local_worker();
	return w ? w->cusolver_rf : NULL;
}

static const char *error_string(int status)
{
	return cudaGetErrorString((cudaError_t)status);
}

/* starpu_cuda_copy*_async_sync(): queued on stream while CUDA takes the
 * launches, synchronously from the first one it refuses (after what was
 * queued, so that the pieces land in order). */
static int serve_copy(const char *src, char *dst, size_t blocksize, size_t n1, size_t ld1_src, size_t ld1_dst,
		      size_t n2, size_t ld2_src, size_t ld2_dst, void *stream_arg, int kind_arg)
{
	cudaStream_t stream = stream_arg;
	enum cudaMemcpyKind kind = (enum cudaMemcpyKind)kind_arg;
	for (size_t group = 0; group < n2; group++) {
		const char *s = src + group * ld2_src;
		char *d = dst + group * ld2_dst;
		cudaError_t err;
		if (stream) {
			err = n1 == 1 ? cudaMemcpyAsync(d, s, blocksize, kind, stream)
				      : cudaMemcpy2DAsync(d, ld1_dst, s, ld1_src, blocksize, n1, kind, stream);
			if (err == cudaSuccess)
				continue;
			cudaGetLastError();
			cudaStreamSynchronize(stream);
			stream = NULL;
		}
		err = n1 == 1 ? cudaMemcpy(d, s, blocksize, kind) : cudaMemcpy2D(d, ld1_dst, s, ld1_src, blocksize, n1, kind);
		if (err != cudaSuccess)
			return cuda_failed("a starpu_cuda_copy*_async_sync copy", err);
	}
	return stream ? -EAGAIN : 0;
}

static void serve_set_device(unsigned devid)
{
	cudaError_t err = cudaSetDevice((int)devid);
	if (err != cudaSuccess)
		cuda_failed("starpu_cuda_set_device", err);
}

static const void *device_properties(int devid)
{
	struct device *d = device_get(devid);
	return d ? &d->prop : NULL;
}

static const struct astro_cuda_services services = {
	.cublas_init = serve_cublas_init,
	.cublas_set_stream = serve_cublas_set_stream,
	.cublas_shutdown = serve_cublas_shutdown,
	.cusolver_init = serve_cusolver_init,
	.cusolver_shutdown = serve_cusolver_shutdown,
	.cusparse_init = serve_cusparse_init,
	.cusparse_shutdown = serve_cusparse_shutdown,
	.local_cusparse = local_cusparse,
	.device_properties = device_properties,
	.cublaslt_init = serve_cublaslt_init,
	.cublaslt_shutdown = serve_cublaslt_shutdown,
	.local_cublaslt = local_cublaslt,
	.local_cusolver_rf = local_cusolver_rf,
	.local_stream = local_stream,
	.local_cublas = local_cublas,
	.local_cusolver_dn = local_cusolver_dn,
	.local_cusolver_sp = local_cusolver_sp,
	.error_string = error_string,
	.copy = serve_copy,
	.set_device = serve_set_device,
};

/* ----------------------------------------------------------------- plugin */

static int init(void)
{
	/* STARPU_NCUDA=0: not even a probe (it starts the CUDA driver). */
	const char *asked = starpu_getenv("STARPU_NCUDA");
	if (asked && strspn(asked, " 0") == strlen(asked) && *asked)
		return ASTRO_PLUGIN_DECLINE;
	cudaError_t err;
	if (usable_devices(&err) == 0) {
		/* Quiet unless CUDA workers were asked for by name. */
		if (asked && atoi(asked) > 0)
			astro_log_error("cuda", "STARPU_NCUDA=%s but no CUDA device is usable here (%s): no CUDA worker",
					asked, err == cudaSuccess ? "none found" : cudaGetErrorString(err));
		return ASTRO_PLUGIN_DECLINE;
	}
	int ret = astro_driver_register(&cuda_driver);
	if (ret == 0)
		astro_cuda_services_set(&services);
	return ret;
}

static void fini(void)
{
	astro_cuda_services_set(NULL);
	host_unregister_all();
	devices_close();
}

ASTRO_PLUGIN_DEFINE(driver_cuda, ASTRO_PLUGIN_DRIVER, "CUDA workers, one per device (STARPU_NCUDA)", init, fini);
