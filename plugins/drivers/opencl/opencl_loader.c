/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ICD loader's functions for opencl_api.c, loaded at the first need (opencl_loader.h). */
#include <CL/cl.h>
#include <astrolabe/plugin.h>
#include <astrolabe/thread.h>
#include <stdbool.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define ASTRO_CL_NO_REDIRECT /* the real names, to look them up */
#include "opencl_loader.h"

#define ASTRO_OPENCL_SONAME "libOpenCL.so.1"

struct astro_cl _astro_cl;
static bool loaded;
static starpu_pthread_once_t once = STARPU_PTHREAD_ONCE_INIT;

static void load(void)
{
	void *lib = dlopen(ASTRO_OPENCL_SONAME, RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		astro_log_error("opencl", "cannot load %s (%s): no OpenCL device is used; install the OpenCL ICD loader "
				"(Debian: ocl-icd-libopencl1) and a platform", ASTRO_OPENCL_SONAME, dlerror());
		return;
	}
	struct astro_cl table;
#define ASTRO_CL_LOAD(f)                                                                                                     \
	{                                                                                                                    \
		void *sym = dlsym(lib, #f);                                                                                  \
		if (!sym) {                                                                                                  \
			astro_log_error("opencl", "%s has no %s: no OpenCL device is used; install a complete OpenCL ICD "  \
					"loader", ASTRO_OPENCL_SONAME, #f);                                                  \
			return;                                                                                              \
		}                                                                                                            \
		memcpy(&table.f, &sym, sizeof(sym));                                                                         \
	}
	ASTRO_CL_FUNCTIONS(ASTRO_CL_LOAD)
#undef ASTRO_CL_LOAD
	_astro_cl = table;
	loaded = true;
}

bool _astro_cl_load(void)
{
	starpu_pthread_once(&once, load);
	return loaded;
}
