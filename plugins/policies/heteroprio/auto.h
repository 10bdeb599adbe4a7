/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * heteroprio's automatic mode (StarPU 1.4's STARPU_HETEROPRIO_USE_AUTO_CALIBRATION):
 * each codelet (its performance model's symbol, or its name) gets a bucket of
 * its own, the first time one of its tasks is pushed or when the data file of
 * an earlier run names it; task priorities are ignored. From the execution
 * times measured on each architecture, the mode keeps each bucket's fastest
 * architecture and slow factors up to date and, every
 * STARPU_AUTOHETEROPRIO_ORDERING_INTERVAL pushed tasks, sorts the buckets each
 * architecture looks at by the score of the chosen ordering policy. What it
 * measured is written at shutdown into the data file (StarPU's format) and
 * read back by the next run.
 *
 * The policy (heteroprio.c) calls these functions with its lock held; the
 * layout they change is the one its workers take tasks by.
 */
#ifndef __ASTRO_HETEROPRIO_AUTO_H__
#define __ASTRO_HETEROPRIO_AUTO_H__

#include <astrolabe/heteroprio.h>

struct hp_auto;

/*
 * The automatic mode of a starting policy when STARPU_HETEROPRIO_USE_AUTO_CALIBRATION
 * asks for it, else NULL. It empties layout (no architecture looks at any
 * bucket) and fills it with the codelets of the data file, if there is one.
 */
struct hp_auto *hp_auto_open(struct astro_heteroprio_setup *layout);

/* Writes the data file (unless STARPU_AUTOHETEROPRIO_FREEZE_GATHERING) and frees a. */
void hp_auto_close(struct hp_auto *a, const struct astro_heteroprio_setup *layout);

/*
 * The bucket of task: its codelet's, given one (and added to layout) the
 * first time; records the push and, when due, orders layout again. -1 when
 * task can run on no architecture or every bucket is taken (error printed).
 */
int hp_auto_push(struct hp_auto *a, struct astro_heteroprio_setup *layout, const struct starpu_task *task);

/* A worker of architecture arch joined the policy at time now (us). */
void hp_auto_worker_added(struct hp_auto *a, int workerid, double now);

/* Worker workerid, of architecture arch, starts a task: the time since its last task counts as free. */
void hp_auto_task_started(struct hp_auto *a, int workerid, int arch, double now);

/* Worker workerid, of architecture arch, ran task: its time counts as busy and as an execution time of its codelet there. */
void hp_auto_task_ended(struct hp_auto *a, const struct astro_heteroprio_setup *layout, const struct starpu_task *task, int workerid, int arch, double now);

#endif /* __ASTRO_HETEROPRIO_AUTO_H__ */
