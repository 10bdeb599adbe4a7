/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether counting OpenCL devices is worth loading the platforms: asking the
 * ICD loader for its platforms loads every vendor library it lists, and
 * PoCL's pulls in LLVM (about 20 ms, more than the rest of starpu_init()).
 * By default only GPUs and accelerators are taken (opencl_api.c), which PoCL
 * gives only through its device drivers for GPUs or remote machines. So when
 * the loader would list PoCL alone, and PoCL has only its CPU drivers
 * installed, no device of the wanted types can come out: the platforms stay
 * unloaded. Anything not known for sure (another vendor, a loader setting
 * naming libraries, PoCL built with its drivers inside) counts as "may".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "opencl_devices.h"
#define ASTRO_CL_NO_REDIRECT /* only the loaded table's address is read here */
#include "opencl_loader.h"
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool ends_with(const char *text, const char *end)
{
	size_t n = strlen(text), m = strlen(end);
	return n >= m && strcmp(text + n - m, end) == 0;
}

/* Is driver (the part of libpocl-devices-NAME.so) one of PoCL's CPU drivers (devices of type CPU)? */
static bool pocl_cpu_driver(const char *name, size_t len)
{
	static const char *const cpu[] = { "pthread", "basic", "tbb", "cpu", "cpu-minimal", "cpu-tbb" };
	for (size_t i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
		if (strlen(cpu[i]) == len && strncmp(cpu[i], name, len) == 0)
			return true;
	return false;
}

/* Is library (an ICD file's line) PoCL with CPU drivers only? Its drivers are the
 * modules of the pocl folder beside it; a bare name is looked for beside the ICD loader. */
static bool pocl_cpu_only(const char *library)
{
	const char *slash = strrchr(library, '/'), *base = slash ? slash + 1 : library;
	if (strncmp(base, "libpocl.", 8) != 0)
		return false;
	char folder[PATH_MAX];
	if (slash) {
		snprintf(folder, sizeof(folder), "%.*s", (int)(slash - library), library);
	} else {
		Dl_info info;
		const char *loader_slash;
		/* The folder of the ICD loader (loading it costs little: the platforms load at clGetPlatformIDs()). */
		if (!_astro_cl_load() || !dladdr((void *)_astro_cl.clGetPlatformIDs, &info) || !info.dli_fname ||
		    !(loader_slash = strrchr(info.dli_fname, '/')))
			return false;
		snprintf(folder, sizeof(folder), "%.*s", (int)(loader_slash - info.dli_fname), info.dli_fname);
	}
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", folder, base) >= (int)sizeof(path) || access(path, F_OK) != 0)
		return false;
	if (snprintf(path, sizeof(path), "%s/pocl", folder) >= (int)sizeof(path))
		return false;
	DIR *dir = opendir(path);
	if (!dir)
		return false;	/* drivers built into the library: not known */
	bool cpu_only = true;
	static const char prefix[] = "libpocl-devices-";
	for (struct dirent *e; cpu_only && (e = readdir(dir)) != NULL;) {
		if (strncmp(e->d_name, prefix, sizeof(prefix) - 1) != 0 || !ends_with(e->d_name, ".so"))
			continue;
		const char *name = e->d_name + sizeof(prefix) - 1;
		cpu_only = pocl_cpu_driver(name, strlen(name) - 3);
	}
	closedir(dir);
	return cpu_only;
}

/* The first line of an ICD file, trimmed, into line; false when unreadable. */
static bool icd_library(const char *folder, const char *file, char *line, size_t size)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", folder, file) >= (int)sizeof(path))
		return false;
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fgets(line, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	size_t n = strcspn(line, "\r\n");
	while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	line[n] = '\0';
	return n > 0;
}

bool astro_opencl_platforms_may_offer(cl_device_type types)
{
	if (types & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_CUSTOM))
		return true;
	/* The loaders' settings (ocl-icd and Khronos'): libraries named directly, or another folder. */
	if (getenv("OCL_ICD_FILENAMES"))
		return true;
	const char *folder = getenv("OCL_ICD_VENDORS");
	if (!folder)
		folder = getenv("OPENCL_VENDOR_PATH");
	struct stat st;
	if (folder && (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode)))
		return true;
	if (!folder)
		folder = "/etc/OpenCL/vendors";
	DIR *dir = opendir(folder);
	if (!dir)
		return true;
	bool may = false;
	for (struct dirent *e; !may && (e = readdir(dir)) != NULL;) {
		if (e->d_name[0] == '.' || !ends_with(e->d_name, ".icd"))
			continue;
		char library[PATH_MAX];
		may = !icd_library(folder, e->d_name, library, sizeof(library)) || !pocl_cpu_only(library);
	}
	closedir(dir);
	return may;
}
