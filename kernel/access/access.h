/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The access room: accesses to handles outside the task path (acquire.c:
 * acquires, releases, prefetches, invalidation, unregistration), partition
 * plans and partitioning, starpu_data_cpy.
 */
#ifndef __ASTRO_ACCESS_H__
#define __ASTRO_ACCESS_H__

#include "tasks/tasks.h"

/* Partition plans (partition_plans.c). While some exist (_astro_plans, tasks/tasks.h), a
 * submission's accesses switch the plans they need first (_astro_plans_task_switch). */
int _astro_plans_task_access(struct starpu_task *task);
/* An access in mode to handle outside a task (an acquire): the plans it needs. */
void _astro_plans_access(starpu_data_handle_t handle, enum starpu_data_access_mode mode);
/* handle goes: its plans are gathered first (unregister), its own plan forgets it (free). */
void _astro_plans_gather(starpu_data_handle_t handle);
void _astro_plans_forget(starpu_data_handle_t handle);


#endif /* __ASTRO_ACCESS_H__ */
