/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OpenCL driver's platform pre-check (plugins/drivers/opencl/opencl_icd.c),
 * built into test_opencl_icd with the ICD loader's table it reads: libastrolabe does not export them. */
#define _GNU_SOURCE /* dladdr(), before any system header */
#include <starpu.h>
#ifdef STARPU_USE_OPENCL
#include "../plugins/drivers/opencl/opencl_loader.c"
#include "../plugins/drivers/opencl/opencl_icd.c"
#endif
