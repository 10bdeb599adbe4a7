/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * heteroprio's data locality mode (StarPU 1.4's laheteroprio,
 * STARPU_HETEROPRIO_USE_LA or starpu_heteroprio_set_use_locality()): the
 * workers of a memory node form a group, each bucket keeps one list of tasks
 * per group, a task is pushed into the list of the group its data is closest
 * to (STARPU_LAHETEROPRIO_PUSH), and a worker takes from the lists in the
 * access order of its group: its own group first, then the closest ones
 * (STARPU_LAHETEROPRIO_S_<ARCH>, STARPU_LAHETEROPRIO_PRIO_STEP_<ARCH>).
 * Workers keep no queue of their own in this mode.
 */
#ifndef __ASTRO_HETEROPRIO_LA_H__
#define __ASTRO_HETEROPRIO_LA_H__

#include <astrolabe/heteroprio.h>

/* Memory nodes (worker groups) the mode handles at most, as StarPU. */
#define HP_LA_MAX_GROUPS 10
/* The push strategies AUTO chooses among. */
#define HP_LA_NAUTO 4

struct hp_la;

/* One step of a group's access order: the prio_idx-th bucket of the group's architecture, in the list of group. */
struct hp_la_access
{
	unsigned short prio_idx;
	unsigned short group;
};

/* The locality mode of a starting policy with layout, when asked for; NULL otherwise or when it cannot run (error printed). */
struct hp_la *hp_la_open(unsigned sched_ctx_id, const struct astro_heteroprio_setup *layout);

void hp_la_close(struct hp_la *la, unsigned sched_ctx_id);

/* The group whose list task goes to; auto_groups: what each strategy AUTO learns from chose (kept in the task). */
unsigned hp_la_push_group(struct hp_la *la, struct starpu_task *task, unsigned auto_groups[HP_LA_NAUTO]);

/* The access order of workerid's group, n steps. */
const struct hp_la_access *hp_la_order(const struct hp_la *la, int workerid, unsigned *n);

/* task was taken: AUTO scores the strategies whose group at push is still the best one. */
void hp_la_taken(struct hp_la *la, struct starpu_task *task, const unsigned auto_groups[HP_LA_NAUTO]);

#endif /* __ASTRO_HETEROPRIO_LA_H__ */
