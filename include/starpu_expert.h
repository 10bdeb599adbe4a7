/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Expert mode, the header StarPU 1.4 installs for it: starpu_wake_all_blocked_workers(),
 * declared in starpu_scheduler.h here, which this header brings. (StarPU's progression
 * hooks, starpu_progression_hook_register() and _deregister(), are not provided.) */
#ifndef __STARPU_EXPERT_H__
#define __STARPU_EXPERT_H__

#include <starpu_scheduler.h>

#endif /* __STARPU_EXPERT_H__ */
