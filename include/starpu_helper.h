/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Miscellaneous helpers, the header StarPU 1.4 installs for them: STARPU_MIN and
 * STARPU_MAX, the environment readers (starpu_getenv(), starpu_get_env_number()...),
 * starpu_execute_on_each_worker() and its forms, starpu_timing_now(),
 * starpu_data_cpy(), starpu_display_bindings(), starpu_get_pu_os_index() and
 * starpu_get_hwloc_topology(). They are declared in starpu_util.h and
 * starpu_data.h here, which this header brings. */
#ifndef __STARPU_HELPER_H__
#define __STARPU_HELPER_H__

#include <starpu_util.h>
#include <starpu_data.h>

#endif /* __STARPU_HELPER_H__ */
