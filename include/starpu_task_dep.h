/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Explicit dependencies, the header StarPU 1.4 installs for them: between tasks
 * (starpu_task_declare_deps(), starpu_task_declare_end_deps(), end dependencies,
 * successors) and between tags (starpu_tag_t, starpu_tag_declare_deps(),
 * starpu_tag_wait(), starpu_tag_notify_from_apps(), ...). They are declared in
 * starpu_task.h here, which this header brings. */
#ifndef __STARPU_TASK_DEP_H__
#define __STARPU_TASK_DEP_H__

#include <starpu_task.h>

#endif /* __STARPU_TASK_DEP_H__ */
