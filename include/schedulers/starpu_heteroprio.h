/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * StarPU's programs include the heteroprio header from this folder too: see starpu_heteroprio.h. */
#include <starpu_heteroprio.h>
