/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OpenCL device table and the starpu_opencl_* helpers programs call
 * (linked into libastrolabe). The driver plugin (opencl.c) opens the table
 * at starpu_init() and closes it at starpu_shutdown(). Opening it also tells
 * the kernel's driver API how to match an OpenCL driver
 * (starpu_conf.not_launched_drivers) with a worker, so that the kernel calls
 * no OpenCL function.
 */
#include "opencl_devices.h"
#include "opencl_loader.h"
#include <astrolabe/plugin.h>
#include <astrolabe/env.h>
#include <errno.h>
#include <astrolabe/thread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static starpu_pthread_mutex_t table_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static struct astro_opencl_device devices[STARPU_MAXOPENCLDEVS];
static int ndevices = -1; /* -1: not open */

static bool env_set(const char *name)
{
	return astro_env_int(name, 0, 1, 0, NULL) > 0;
}

/* Which device types this starpu_init() takes, as StarPU: GPUs and accelerators, CPU devices only when asked. */
static cl_device_type wanted_types(void)
{
	if (env_set("STARPU_OPENCL_ONLY_ON_CPUS"))
		return CL_DEVICE_TYPE_CPU;
	cl_device_type types = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR;
	if (env_set("STARPU_OPENCL_ON_CPUS"))
		types |= CL_DEVICE_TYPE_CPU;
	return types;
}

/* The signal dispositions of the process, kept across the probing of the OpenCL platforms. */
struct dispositions
{
	struct sigaction action[NSIG];
	bool saved[NSIG];
};

/* Whether probing may keep what it made of signal sig: SIGFPE, which PoCL's CPU device catches so that a kernel's
 * integer division by zero does not kill the process (its handler passes the others on). SIGKILL and SIGSTOP
 * cannot be caught. */
static bool probing_may_change(int sig)
{
	return sig == SIGFPE || sig == SIGKILL || sig == SIGSTOP;
}

static void dispositions_save(struct dispositions *d)
{
	for (int sig = 1; sig < NSIG; sig++)
		d->saved[sig] = !probing_may_change(sig) && sigaction(sig, NULL, &d->action[sig]) == 0;
}

/* Loading a platform can replace the process's signal handlers: PoCL loads LLVM, which installs its crash reporter
 * on SIGSEGV, SIGINT, SIGTERM and a dozen more; it then swallows a raise(SIGSEGV) (the program goes on) and stands
 * before the runtime's own handlers (STARPU_CATCH_SIGNALS). Puts back every handler that probing changed. */
static void dispositions_restore(const struct dispositions *d)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction now;
		if (!d->saved[sig] || sigaction(sig, NULL, &now) != 0)
			continue;
		const struct sigaction *was = &d->action[sig];
		bool info = was->sa_flags & SA_SIGINFO;
		if ((now.sa_flags & SA_SIGINFO) != (was->sa_flags & SA_SIGINFO) ||
		    (info ? (void *)now.sa_sigaction != (void *)was->sa_sigaction : now.sa_handler != was->sa_handler))
			sigaction(sig, was, NULL);
	}
}

static bool device_open(struct astro_opencl_device *d, cl_device_id id)
{
	cl_int err;
	memset(d, 0, sizeof(*d));
	d->device = id;
	d->context = clCreateContext(NULL, 1, &id, NULL, NULL, &err);
	if (err != CL_SUCCESS)
		goto fail;
	d->queue = clCreateCommandQueue(d->context, id, 0, &err);
	if (err != CL_SUCCESS)
		goto fail_context;
	d->transfer_queue = clCreateCommandQueue(d->context, id, 0, &err);
	if (err != CL_SUCCESS)
		goto fail_queue;
	cl_ulong memory = 0;
	clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(memory), &memory, NULL);
	d->memory = (size_t)memory;
	return true;

fail_queue:
	clReleaseCommandQueue(d->queue);
fail_context:
	clReleaseContext(d->context);
fail:
	astro_log_error("opencl", "a device could not be opened (%s): it is not used", starpu_opencl_error_string(err));
	return false;
}

/* Defined by the kernel's driver API (kernel/driver_api.c; declared in kernel/kernel.h, which
 * this folder does not include): libapi.la is linked into libastrolabe with it. */
void _astro_driver_api_set_opencl_matcher(bool (*names)(const struct starpu_driver *driver, int devid));

/* Does OpenCL driver d name the worker of device devid? */
static bool driver_names_device(const struct starpu_driver *d, int devid)
{
	const struct astro_opencl_device *device = astro_opencl_device_get(devid);
	return device && device->device == d->id.opencl_id;
}

int astro_opencl_devices_open(bool quick)
{
	_astro_driver_api_set_opencl_matcher(driver_names_device);
	starpu_pthread_mutex_lock(&table_lock);
	if (ndevices >= 0) {
		starpu_pthread_mutex_unlock(&table_lock);
		return ndevices;
	}
	ndevices = 0;
	cl_device_type types = wanted_types();
	cl_platform_id platforms[8];
	cl_uint nplatforms = 0;
	struct dispositions before;
	dispositions_save(&before);
	if ((quick && !astro_opencl_platforms_may_offer(types)) || !_astro_cl_load() ||
	    clGetPlatformIDs(8, platforms, &nplatforms) != CL_SUCCESS)
		nplatforms = 0;
	for (cl_uint p = 0; p < nplatforms && p < 8; p++) {
		cl_device_id ids[STARPU_MAXOPENCLDEVS];
		cl_uint nids = 0;
		if (clGetDeviceIDs(platforms[p], types, STARPU_MAXOPENCLDEVS, ids, &nids) != CL_SUCCESS)
			continue;
		for (cl_uint i = 0; i < nids && i < STARPU_MAXOPENCLDEVS && ndevices < STARPU_MAXOPENCLDEVS; i++)
			if (device_open(&devices[ndevices], ids[i]))
				ndevices++;
	}
	dispositions_restore(&before);
	int n = ndevices;
	starpu_pthread_mutex_unlock(&table_lock);
	return n;
}

void astro_opencl_devices_close(void)
{
	starpu_pthread_mutex_lock(&table_lock);
	for (int i = 0; i < ndevices; i++) {
		clReleaseCommandQueue(devices[i].transfer_queue);
		clReleaseCommandQueue(devices[i].queue);
		clReleaseContext(devices[i].context);
	}
	memset(devices, 0, sizeof(devices));
	ndevices = -1;
	starpu_pthread_mutex_unlock(&table_lock);
}

int astro_opencl_device_count(void)
{
	return __atomic_load_n(&ndevices, __ATOMIC_ACQUIRE) > 0 ? ndevices : 0;
}

const struct astro_opencl_device *astro_opencl_device_get(int devid)
{
	return devid >= 0 && devid < astro_opencl_device_count() ? &devices[devid] : NULL;
}

/* The device of devid, or a message naming the call and NULL. */
static const struct astro_opencl_device *device_of(int devid, const char *fn)
{
	const struct astro_opencl_device *d = astro_opencl_device_get(devid);
	if (!d)
		astro_log_error(fn, "no OpenCL device %d (the runtime uses %d): use the worker's starpu_worker_get_devid()",
				devid, astro_opencl_device_count());
	return d;
}

/* ---------------------------------------------------------------- errors */

const char *starpu_opencl_error_string(cl_int status)
{
	switch (status) {
#define CASE(s) case s: return #s;
	CASE(CL_SUCCESS) CASE(CL_DEVICE_NOT_FOUND) CASE(CL_DEVICE_NOT_AVAILABLE) CASE(CL_COMPILER_NOT_AVAILABLE)
	CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE) CASE(CL_OUT_OF_RESOURCES) CASE(CL_OUT_OF_HOST_MEMORY)
	CASE(CL_PROFILING_INFO_NOT_AVAILABLE) CASE(CL_MEM_COPY_OVERLAP) CASE(CL_BUILD_PROGRAM_FAILURE)
	CASE(CL_MAP_FAILURE) CASE(CL_INVALID_VALUE) CASE(CL_INVALID_DEVICE_TYPE) CASE(CL_INVALID_PLATFORM)
	CASE(CL_INVALID_DEVICE) CASE(CL_INVALID_CONTEXT) CASE(CL_INVALID_QUEUE_PROPERTIES) CASE(CL_INVALID_COMMAND_QUEUE)
	CASE(CL_INVALID_HOST_PTR) CASE(CL_INVALID_MEM_OBJECT) CASE(CL_INVALID_BINARY) CASE(CL_INVALID_BUILD_OPTIONS)
	CASE(CL_INVALID_PROGRAM) CASE(CL_INVALID_PROGRAM_EXECUTABLE) CASE(CL_INVALID_KERNEL_NAME)
	CASE(CL_INVALID_KERNEL_DEFINITION) CASE(CL_INVALID_KERNEL) CASE(CL_INVALID_ARG_INDEX) CASE(CL_INVALID_ARG_VALUE)
	CASE(CL_INVALID_ARG_SIZE) CASE(CL_INVALID_KERNEL_ARGS) CASE(CL_INVALID_WORK_DIMENSION)
	CASE(CL_INVALID_WORK_GROUP_SIZE) CASE(CL_INVALID_WORK_ITEM_SIZE) CASE(CL_INVALID_GLOBAL_OFFSET)
	CASE(CL_INVALID_EVENT_WAIT_LIST) CASE(CL_INVALID_EVENT) CASE(CL_INVALID_OPERATION) CASE(CL_INVALID_BUFFER_SIZE)
	CASE(CL_INVALID_GLOBAL_WORK_SIZE)
#undef CASE
	default: return "unknown OpenCL error";
	}
}

void starpu_opencl_display_error(const char *func, const char *file, int line, const char *msg, cl_int status)
{
	astro_log_error("opencl", "%s (%s:%d): %s%s%s (%d)", func ? func : "?", file ? file : "?", line,
			msg ? msg : "", msg ? ": " : "", starpu_opencl_error_string(status), (int)status);
}

void starpu_opencl_report_error(const char *func, const char *file, int line, const char *msg, cl_int status)
{
	starpu_opencl_display_error(func, file, line, msg, status);
	abort();
}

/* -------------------------------------------------------------- programs */

static void print_build_log(cl_program program, cl_device_id device)
{
	size_t len = 0;
	clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
	char *log = malloc(len + 1);
	if (!log)
		return;
	clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
	log[len] = 0;
	fprintf(stderr, "%s\n", log);
	free(log);
}

int starpu_opencl_load_opencl_from_string(const char *opencl_program_source, struct starpu_opencl_program *opencl_programs,
					  const char *build_options)
{
	if (!opencl_program_source || !opencl_programs) {
		astro_log_error("starpu_opencl_load_opencl_from_string", "NULL source or program");
		return -EINVAL;
	}
	memset(opencl_programs, 0, sizeof(*opencl_programs));
	for (int dev = 0; dev < astro_opencl_device_count(); dev++) {
		const struct astro_opencl_device *d = &devices[dev];
		cl_int err;
		cl_program program = clCreateProgramWithSource(d->context, 1, &opencl_program_source, NULL, &err);
		if (err != CL_SUCCESS) {
			starpu_opencl_display_error(__func__, __FILE__, __LINE__, "creating the program", err);
			starpu_opencl_unload_opencl(opencl_programs);
			return err;
		}
		err = clBuildProgram(program, 1, &d->device, build_options, NULL, NULL);
		if (err != CL_SUCCESS) {
			astro_log_error("starpu_opencl_load_opencl_from_string", "the program does not build on OpenCL device %d (%s); build log:",
					dev, starpu_opencl_error_string(err));
			print_build_log(program, d->device);
			clReleaseProgram(program);
			starpu_opencl_unload_opencl(opencl_programs);
			return err;
		}
		opencl_programs->programs[dev] = program;
	}
	return CL_SUCCESS;
}

static char *read_file(const char *path, size_t *len_out)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *text = NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long len = ftell(f);
		if (len >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)len + 1))) {
			size_t got = fread(text, 1, (size_t)len, f);
			text[got] = 0;
			if (len_out)
				*len_out = got;
		}
	}
	fclose(f);
	return text;
}

/* Reads source_file_name as given, else in $STARPU_OPENCL_PROGRAM_DIR; *located (malloc'd): the path read.
 * NULL, errno set, when neither can be read. */
static char *locate_and_read(const char *source_file_name, char **located)
{
	*located = NULL;
	char *source = read_file(source_file_name, NULL);
	if (source) {
		*located = strdup(source_file_name);
		return source;
	}
	int err = errno;
	const char *dir = astro_env_string("STARPU_OPENCL_PROGRAM_DIR", ASTRO_ENV_PATH_MAX, NULL);
	if (dir) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, source_file_name);
		source = read_file(path, NULL);
		if (source) {
			*located = strdup(path);
			return source;
		}
	}
	errno = err;
	return NULL;
}

/* The folder part of path, with its final slash ("" for a bare name). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) + 1 : 0;
	char *dir = malloc(len + 1);
	if (dir) {
		memcpy(dir, path, len);
		dir[len] = 0;
	}
	return dir;
}

/* The source of source_file_name and where it was found (malloc'd), all NULL when it cannot be read (said, as fn). */
static void load_program_source(const char *fn, const char *source_file_name, char **located_file_name, char **located_dir_name,
				char **opencl_program_source)
{
	if (located_file_name)
		*located_file_name = NULL;
	if (located_dir_name)
		*located_dir_name = NULL;
	if (opencl_program_source)
		*opencl_program_source = NULL;
	if (!source_file_name || !located_file_name || !located_dir_name || !opencl_program_source) {
		astro_log_error(fn, "NULL file name or result pointer");
		return;
	}
	char *located;
	char *source = locate_and_read(source_file_name, &located);
	if (!source) {
		astro_log_error(fn, "cannot read '%s' (%s): give its path, or set STARPU_OPENCL_PROGRAM_DIR to its folder; the results are empty",
				source_file_name, strerror(errno));
		return;
	}
	*located_dir_name = located ? dir_of(located) : NULL;
	*located_file_name = located;
	*opencl_program_source = source;
}

void starpu_opencl_load_program_source_malloc(const char *source_file_name, char **located_file_name, char **located_dir_name,
					      char **opencl_program_source)
{
	load_program_source("starpu_opencl_load_program_source_malloc", source_file_name, located_file_name, located_dir_name,
			    opencl_program_source);
}

/* As StarPU, the caller's buffers are large enough (the names: a path; the source: the whole file). */
void starpu_opencl_load_program_source(const char *source_file_name, char *located_file_name, char *located_dir_name,
				       char *opencl_program_source)
{
	char *located = NULL, *dir = NULL, *source = NULL;
	if (!located_file_name || !located_dir_name || !opencl_program_source) {
		astro_log_error("starpu_opencl_load_program_source", "NULL result buffer: give three buffers");
		return;
	}
	load_program_source("starpu_opencl_load_program_source", source_file_name, &located, &dir, &source);
	strcpy(located_file_name, located ? located : "");
	strcpy(located_dir_name, dir ? dir : "");
	strcpy(opencl_program_source, source ? source : "");
	free(located);
	free(dir);
	free(source);
}

/* Build options with "-I folder" first when the source was found in a folder (its includes). */
static char *options_with_dir(const char *located, const char *build_options)
{
	char *dir = dir_of(located);
	const char *opts = build_options ? build_options : "";
	size_t len = (dir ? strlen(dir) : 0) + strlen(opts) + 8;
	char *all = malloc(len);
	if (all) {
		if (dir && *dir)
			snprintf(all, len, "-I %s %s", dir, opts);
		else
			snprintf(all, len, "%s", opts);
	}
	free(dir);
	return all;
}

int starpu_opencl_load_opencl_from_file(const char *source_file_name, struct starpu_opencl_program *opencl_programs,
					const char *build_options)
{
	if (!source_file_name || !opencl_programs) {
		astro_log_error("starpu_opencl_load_opencl_from_file", "NULL file name or program");
		return -EINVAL;
	}
	char *located;
	char *source = locate_and_read(source_file_name, &located);
	if (!source) {
		astro_log_error("starpu_opencl_load_opencl_from_file", "cannot read '%s' (%s): give its path, or set STARPU_OPENCL_PROGRAM_DIR to its folder",
				source_file_name, strerror(errno));
		return -ENOENT;
	}
	char *options = options_with_dir(located, build_options);
	int ret = starpu_opencl_load_opencl_from_string(source, opencl_programs, options ? options : build_options);
	free(options);
	free(located);
	free(source);
	return ret;
}

/* ------------------------------------------------------ compiled binaries */

/* $STARPU_HOME/.starpu/opencl (HOME when STARPU_HOME is unset), made if missing, into path; 0 or -errno. */
static int binary_dir(char *path, size_t size, const char *fn)
{
	const char *home = astro_env_string("STARPU_HOME", ASTRO_ENV_PATH_MAX, NULL);
	if (!home)
		home = getenv("HOME");
	if (!home) {
		astro_log_error(fn, "neither STARPU_HOME nor HOME is set: set STARPU_HOME to where .starpu/opencl may be written");
		return -ENOENT;
	}
	snprintf(path, size, "%s/.starpu", home);
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		goto fail;
	snprintf(path, size, "%s/.starpu/opencl", home);
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		goto fail;
	return 0;
fail:
	astro_log_error(fn, "cannot make '%s' (%s): set STARPU_HOME to a folder you may write", path, strerror(errno));
	return -errno;
}

/* The binary of kernel_id (a file name: its folders and ".cl" dropped) for device dev, as StarPU names it. */
static int binary_name(char *out, size_t size, const char *kernel_id, int dev, const char *fn)
{
	char dir[4096];
	int ret = binary_dir(dir, sizeof(dir), fn);
	if (ret)
		return ret;
	const struct astro_opencl_device *d = astro_opencl_device_get(dev);
	cl_uint vendor = 0;
	cl_device_type type = 0;
	clGetDeviceInfo(d->device, CL_DEVICE_VENDOR_ID, sizeof(vendor), &vendor, NULL);
	clGetDeviceInfo(d->device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
	const char *type_name = (type & CL_DEVICE_TYPE_GPU) ? "gpu" : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "acc" : (type & CL_DEVICE_TYPE_CPU) ? "cpu" : "unk";
	const char *base = strrchr(kernel_id, '/');
	base = base ? base + 1 : kernel_id;
	const char *ext = strstr(base, ".cl");
	int base_len = ext ? (int)(ext - base) : (int)strlen(base);
	int n = snprintf(out, size, "%s/%.*s.%s.vendor_id_%u_device_id_%d", dir, base_len, base, type_name, (unsigned)vendor, dev);
	if (n < 0 || (size_t)n >= size) {
		astro_log_error(fn, "the binary's path for '%s' is too long: give a shorter name or STARPU_HOME", kernel_id);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* Writes the binary of program (built for device dev) to path, atomically (a temporary, then a rename). */
static int write_binary(cl_program program, const char *path, const char *fn)
{
	size_t len = 0;
	cl_int err = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(len), &len, NULL);
	unsigned char *binary = err == CL_SUCCESS && len ? malloc(len) : NULL;
	if (!binary) {
		astro_log_error(fn, "OpenCL gave no binary for the program (%s)", starpu_opencl_error_string(err));
		return err != CL_SUCCESS ? err : -EIO;
	}
	err = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(binary), &binary, NULL);
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	FILE *f = err == CL_SUCCESS ? fopen(tmp, "wb") : NULL;
	bool ok = f && fwrite(binary, 1, len, f) == len;
	if (f)
		ok = (fclose(f) == 0) && ok;
	ok = ok && rename(tmp, path) == 0;
	free(binary);
	if (!ok) {
		astro_log_error(fn, "cannot write '%s' (%s)", path, err != CL_SUCCESS ? starpu_opencl_error_string(err) : strerror(errno));
		remove(tmp);
		return -EIO;
	}
	return 0;
}

int starpu_opencl_compile_opencl_from_string(const char *opencl_program_source, const char *file_name, const char *build_options)
{
	const char *fn = "starpu_opencl_compile_opencl_from_string";
	if (!opencl_program_source || !file_name) {
		astro_log_error(fn, "NULL source or file name");
		return -EINVAL;
	}
	struct starpu_opencl_program programs;
	int ret = starpu_opencl_load_opencl_from_string(opencl_program_source, &programs, build_options);
	if (ret != CL_SUCCESS)
		return ret;
	for (int dev = 0; dev < astro_opencl_device_count() && ret == 0; dev++) {
		char path[4096];
		ret = binary_name(path, sizeof(path), file_name, dev, fn);
		if (ret == 0)
			ret = write_binary(programs.programs[dev], path, fn);
	}
	starpu_opencl_unload_opencl(&programs);
	return ret;
}

int starpu_opencl_compile_opencl_from_file(const char *source_file_name, const char *build_options)
{
	const char *fn = "starpu_opencl_compile_opencl_from_file";
	if (!source_file_name) {
		astro_log_error(fn, "NULL file name");
		return -EINVAL;
	}
	char *located;
	char *source = locate_and_read(source_file_name, &located);
	if (!source) {
		astro_log_error(fn, "cannot read '%s' (%s): give its path, or set STARPU_OPENCL_PROGRAM_DIR to its folder", source_file_name,
				strerror(errno));
		return -ENOENT;
	}
	char *options = options_with_dir(located, build_options);
	int ret = starpu_opencl_compile_opencl_from_string(source, source_file_name, options ? options : build_options);
	free(options);
	free(located);
	free(source);
	return ret;
}

int starpu_opencl_load_binary_opencl(const char *kernel_id, struct starpu_opencl_program *opencl_programs)
{
	const char *fn = "starpu_opencl_load_binary_opencl";
	if (!kernel_id || !opencl_programs) {
		astro_log_error(fn, "NULL kernel id or program");
		return -EINVAL;
	}
	memset(opencl_programs, 0, sizeof(*opencl_programs));
	for (int dev = 0; dev < astro_opencl_device_count(); dev++) {
		char path[4096];
		int ret = binary_name(path, sizeof(path), kernel_id, dev, fn);
		size_t len = 0;
		unsigned char *binary = ret == 0 ? (unsigned char *)read_file(path, &len) : NULL;
		if (!binary) {
			if (ret == 0)
				astro_log_error(fn, "no binary '%s' for OpenCL device %d (%s): compile it first with starpu_opencl_compile_opencl_from_file/_string",
						path, dev, strerror(errno));
			starpu_opencl_unload_opencl(opencl_programs);
			return ret ? ret : -ENOENT;
		}
		const struct astro_opencl_device *d = astro_opencl_device_get(dev);
		cl_int status = CL_SUCCESS, err;
		cl_program program = clCreateProgramWithBinary(d->context, 1, &d->device, &len, (const unsigned char **)&binary, &status, &err);
		free(binary);
		if (err == CL_SUCCESS)
			err = status;
		if (err == CL_SUCCESS)
			err = clBuildProgram(program, 1, &d->device, NULL, NULL, NULL);
		if (err != CL_SUCCESS) {
			astro_log_error(fn, "the binary '%s' does not load on OpenCL device %d (%s): compile it again", path, dev,
					starpu_opencl_error_string(err));
			if (program)
				clReleaseProgram(program);
			starpu_opencl_unload_opencl(opencl_programs);
			return err;
		}
		opencl_programs->programs[dev] = program;
	}
	return CL_SUCCESS;
}

int starpu_opencl_unload_opencl(struct starpu_opencl_program *opencl_programs)
{
	if (!opencl_programs)
		return -EINVAL;
	for (int dev = 0; dev < STARPU_MAXOPENCLDEVS; dev++)
		if (opencl_programs->programs[dev]) {
			clReleaseProgram(opencl_programs->programs[dev]);
			opencl_programs->programs[dev] = NULL;
		}
	return 0;
}

int starpu_opencl_load_kernel(cl_kernel *kernel, cl_command_queue *queue, struct starpu_opencl_program *opencl_programs,
			      const char *kernel_name, int devid)
{
	const struct astro_opencl_device *d = device_of(devid, "starpu_opencl_load_kernel");
	if (!d || !kernel || !opencl_programs || !kernel_name)
		return CL_INVALID_VALUE;
	if (!opencl_programs->programs[devid]) {
		astro_log_error("starpu_opencl_load_kernel", "no program built for OpenCL device %d: call starpu_opencl_load_opencl_from_string/_file after starpu_init()",
				devid);
		return CL_INVALID_PROGRAM;
	}
	cl_int err;
	*kernel = clCreateKernel(opencl_programs->programs[devid], kernel_name, &err);
	if (err != CL_SUCCESS) {
		astro_log_error("starpu_opencl_load_kernel", "no kernel '%s' in the program (%s)", kernel_name, starpu_opencl_error_string(err));
		return err;
	}
	if (queue)
		*queue = d->queue;
	return CL_SUCCESS;
}

int starpu_opencl_release_kernel(cl_kernel kernel)
{
	return kernel ? clReleaseKernel(kernel) : CL_INVALID_KERNEL;
}

/* ------------------------------------------------------ devices, queues */

void starpu_opencl_get_context(int devid, cl_context *context)
{
	const struct astro_opencl_device *d = device_of(devid, "starpu_opencl_get_context");
	*context = d ? d->context : NULL;
}

void starpu_opencl_get_device(int devid, cl_device_id *device)
{
	const struct astro_opencl_device *d = device_of(devid, "starpu_opencl_get_device");
	*device = d ? d->device : NULL;
}

void starpu_opencl_get_queue(int devid, cl_command_queue *queue)
{
	const struct astro_opencl_device *d = device_of(devid, "starpu_opencl_get_queue");
	*queue = d ? d->queue : NULL;
}

/* The device of the calling worker, when it is an OpenCL worker. */
static int current_devid(const char *fn)
{
	int worker = starpu_worker_get_id();
	if (worker < 0 || starpu_worker_get_type(worker) != STARPU_OPENCL_WORKER) {
		astro_log_error(fn, "called outside an OpenCL worker: call it from an opencl_funcs implementation");
		return -1;
	}
	return starpu_worker_get_devid(worker);
}

void starpu_opencl_get_current_context(cl_context *context)
{
	int devid = current_devid("starpu_opencl_get_current_context");
	if (devid < 0)
		*context = NULL;
	else
		starpu_opencl_get_context(devid, context);
}

void starpu_opencl_get_current_queue(cl_command_queue *queue)
{
	int devid = current_devid("starpu_opencl_get_current_queue");
	if (devid < 0)
		*queue = NULL;
	else
		starpu_opencl_get_queue(devid, queue);
}

int starpu_opencl_collect_stats(cl_event event)
{
	/* The task's time is measured around its implementation; the event must at least be a real one. */
	cl_int status;
	return clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL);
}

int starpu_opencl_set_kernel_args(cl_int *err, cl_kernel *kernel, ...)
{
	va_list ap;
	va_start(ap, kernel);
	int n = 0;
	cl_int ret = CL_SUCCESS;
	for (;;) {
		size_t size = va_arg(ap, size_t);
		if (size == 0)
			break;
		void *ptr = va_arg(ap, void *);
		ret = clSetKernelArg(*kernel, (cl_uint)n, size, ptr);
		if (ret != CL_SUCCESS)
			break;
		n++;
	}
	va_end(ap);
	if (err)
		*err = ret;
	return n;
}

/* ---------------------------------------------------------------- memory */

cl_int starpu_opencl_allocate_memory(int devid, cl_mem *addr, size_t size, cl_mem_flags flags)
{
	const struct astro_opencl_device *d = device_of(devid, "starpu_opencl_allocate_memory");
	if (!d || !addr)
		return CL_INVALID_VALUE;
	cl_int err;
	*addr = clCreateBuffer(d->context, flags, size, NULL, &err);
	return err;
}

/* The device of a memory node, for the copy helpers. */
static const struct astro_opencl_device *node_device(unsigned node, const char *fn)
{
	if (starpu_node_get_kind(node) != STARPU_OPENCL_RAM) {
		astro_log_error(fn, "memory node %u is not an OpenCL device's", node);
		return NULL;
	}
	return device_of(starpu_memory_node_get_devid(node), fn);
}

cl_int starpu_opencl_copy_ram_to_opencl(void *ptr, unsigned src_node, cl_mem buffer, unsigned dst_node, size_t size,
					size_t offset, cl_event *event, int *ret)
{
	(void)src_node;
	const struct astro_opencl_device *d = node_device(dst_node, "starpu_opencl_copy_ram_to_opencl");
	if (!d)
		return CL_INVALID_VALUE;
	cl_int err = clEnqueueWriteBuffer(d->transfer_queue, buffer, event ? CL_FALSE : CL_TRUE, offset, size, ptr, 0, NULL, event);
	if (ret)
		*ret = err != CL_SUCCESS ? -EIO : event ? -EAGAIN : 0;
	return err;
}

cl_int starpu_opencl_copy_opencl_to_ram(cl_mem buffer, unsigned src_node, void *ptr, unsigned dst_node, size_t size,
					size_t offset, cl_event *event, int *ret)
{
	(void)dst_node;
	const struct astro_opencl_device *d = node_device(src_node, "starpu_opencl_copy_opencl_to_ram");
	if (!d)
		return CL_INVALID_VALUE;
	cl_int err = clEnqueueReadBuffer(d->transfer_queue, buffer, event ? CL_FALSE : CL_TRUE, offset, size, ptr, 0, NULL, event);
	if (ret)
		*ret = err != CL_SUCCESS ? -EIO : event ? -EAGAIN : 0;
	return err;
}

cl_int starpu_opencl_copy_opencl_to_opencl(cl_mem src, unsigned src_node, size_t src_offset, cl_mem dst, unsigned dst_node,
					   size_t dst_offset, size_t size, cl_event *event, int *ret)
{
	const struct astro_opencl_device *s = node_device(src_node, "starpu_opencl_copy_opencl_to_opencl");
	const struct astro_opencl_device *d = s ? node_device(dst_node, "starpu_opencl_copy_opencl_to_opencl") : NULL;
	if (!d) {
		if (ret)
			*ret = -EINVAL;
		return CL_INVALID_VALUE;
	}
	if (s != d) {
		/* Each device has a context of its own here: a buffer of one is unknown to the other. */
		astro_log_error("starpu_opencl_copy_opencl_to_opencl", "memory nodes %u and %u are two OpenCL devices, with no direct "
				"path between them: copy through main memory", src_node, dst_node);
		if (ret)
			*ret = -ENODEV;
		return CL_INVALID_CONTEXT;
	}
	cl_int err = clEnqueueCopyBuffer(d->transfer_queue, src, dst, src_offset, dst_offset, size, 0, NULL, event);
	if (err == CL_SUCCESS && !event)
		err = clFinish(d->transfer_queue);
	if (ret)
		*ret = err != CL_SUCCESS ? -EIO : event ? -EAGAIN : 0;
	return err;
}

cl_int starpu_opencl_copy_async_sync(uintptr_t src, size_t src_offset, unsigned src_node, uintptr_t dst, size_t dst_offset,
				     unsigned dst_node, size_t size, cl_event *event)
{
	enum starpu_node_kind sk = starpu_node_get_kind(src_node), dk = starpu_node_get_kind(dst_node);
	int ret = 0;
	cl_int err;
	if (sk == STARPU_OPENCL_RAM && dk == STARPU_OPENCL_RAM)
		err = starpu_opencl_copy_opencl_to_opencl((cl_mem)src, src_node, src_offset, (cl_mem)dst, dst_node, dst_offset, size, event, &ret);
	else if (sk == STARPU_CPU_RAM && dk == STARPU_OPENCL_RAM)
		err = starpu_opencl_copy_ram_to_opencl((char *)src + src_offset, src_node, (cl_mem)dst, dst_node, size, dst_offset, event, &ret);
	else if (sk == STARPU_OPENCL_RAM && dk == STARPU_CPU_RAM)
		err = starpu_opencl_copy_opencl_to_ram((cl_mem)src, src_node, (char *)dst + dst_offset, dst_node, size, src_offset, event, &ret);
	else {
		astro_log_error("starpu_opencl_copy_async_sync", "no OpenCL copy from memory node %u to %u: one of them must be an "
				"OpenCL device's, the other main memory or the same device", src_node, dst_node);
		return CL_INVALID_VALUE;
	}
	return err == CL_SUCCESS ? ret : err;
}
