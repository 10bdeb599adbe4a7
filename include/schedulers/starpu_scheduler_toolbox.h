/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * StarPU's programs include the scheduler toolbox from this folder: see starpu_scheduler_toolbox.h. */
#include <starpu_scheduler_toolbox.h>
