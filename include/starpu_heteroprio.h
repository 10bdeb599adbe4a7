/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The heteroprio scheduling policy's set-up (StarPU 1.4's starpu_heteroprio.h).
 *
 * heteroprio keeps its ready tasks in buckets: a task goes to the bucket
 * numbered by its priority (clamped to 0..STARPU_HETEROPRIO_MAX_PRIO-1). Each
 * kind of worker (an architecture: STARPU_CPU_WORKER, STARPU_OPENCL_WORKER...)
 * looks at its own list of buckets, in its own order: its first bucket, then
 * its second... A bucket may name the architecture that runs its tasks
 * fastest and how much slower the others are: a slower worker then takes a
 * task of the bucket only when there are at least that many tasks per worker
 * of the fastest kind waiting in it.
 *
 * The functions below are called from the policy's callback, which the
 * application gives with starpu_conf::sched_policy_callback (the global
 * context) or STARPU_SCHED_CTX_POLICY_INIT (starpu_sched_ctx_create()); the
 * policy calls it while it starts. Without a callback every architecture
 * looks at every bucket, bucket 0 first. A call outside the callback, or with
 * a bad argument, prints one error and changes nothing.
 */
#ifndef __STARPU_SCHEDULER_HETEROPRIO_H__
#define __STARPU_SCHEDULER_HETEROPRIO_H__

#include <stdio.h>
#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Tasks a worker takes from the buckets at once (it runs the first, another worker of its kind may take the others). */
#define STARPU_HETEROPRIO_MAX_PREFETCH 2

/** Number of buckets: task priorities 0..STARPU_HETEROPRIO_MAX_PRIO-1. */
#define STARPU_HETEROPRIO_MAX_PRIO 100

/** Number of orderings of the automatic mode (STARPU_HETEROPRIO_USE_AUTO_CALIBRATION=1; see the handbook, doc/scheduling.md). */
#define STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY_COUNT 28

/** The orderings of StarPU 1.4's automatic mode, by the value STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY takes. */
enum starpu_autoheteroprio_priority_ordering_policy
{
	STARPU_HETEROPRIO_NOD_TIME_COMBINATION,
	STARPU_HETEROPRIO_BEST_NODS_SCORE,
	STARPU_HETEROPRIO_BEST_NODS,
	STARPU_HETEROPRIO_URT_PURE,
	STARPU_HETEROPRIO_URT,
	STARPU_HETEROPRIO_URT_2,
	STARPU_HETEROPRIO_URT_DOT_DIFF_PURE,
	STARPU_HETEROPRIO_URT_DOT_DIFF_PURE_2,
	STARPU_HETEROPRIO_URT_DOT_REL_DIFF_PURE,
	STARPU_HETEROPRIO_URT_DOT_REL_DIFF_PURE_2,
	STARPU_HETEROPRIO_URT_DOT_DIFF_2,
	STARPU_HETEROPRIO_URT_DOT_DIFF_3,
	STARPU_HETEROPRIO_URT_DOT_DIFF_4,
	STARPU_HETEROPRIO_URT_DOT_DIFF_5,
	STARPU_HETEROPRIO_URT_DOT_DIFF_6,
	STARPU_HETEROPRIO_URT_DOT_DIFF_7,
	STARPU_HETEROPRIO_URT_DOT_DIFF_8,
	STARPU_HETEROPRIO_URT_DOT_DIFF_9,
	STARPU_HETEROPRIO_URT_DOT_DIFF_10,
	STARPU_HETEROPRIO_URT_DOT_DIFF_11,
	STARPU_HETEROPRIO_URTS_PER_SECONDS,
	STARPU_HETEROPRIO_URTS_PER_SECONDS_2,
	STARPU_HETEROPRIO_URTS_PER_SECONDS_DIFF,
	STARPU_HETEROPRIO_URTS_TIME_RELEASED_DIFF,
	STARPU_HETEROPRIO_URTS_TIME_COMBINATION,
	STARPU_HETEROPRIO_NODS_PER_SECOND,
	STARPU_HETEROPRIO_NODS_TIME_RELEASED,
	STARPU_HETEROPRIO_NODS_TIME_RELEASED_DIFF
};

/** The names of the orderings above, indexed by their value. */
static const char starpu_autoheteroprio_priority_ordering_policy_names[STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY_COUNT][64] __attribute__((unused)) =
{
	"STARPU_HETEROPRIO_NOD_TIME_COMBINATION", "STARPU_HETEROPRIO_BEST_NODS_SCORE", "STARPU_HETEROPRIO_BEST_NODS",
	"STARPU_HETEROPRIO_URT_PURE", "STARPU_HETEROPRIO_URT", "STARPU_HETEROPRIO_URT_2",
	"STARPU_HETEROPRIO_URT_DOT_DIFF_PURE", "STARPU_HETEROPRIO_URT_DOT_DIFF_PURE_2",
	"STARPU_HETEROPRIO_URT_DOT_REL_DIFF_PURE", "STARPU_HETEROPRIO_URT_DOT_REL_DIFF_PURE_2",
	"STARPU_HETEROPRIO_URT_DOT_DIFF_2", "STARPU_HETEROPRIO_URT_DOT_DIFF_3", "STARPU_HETEROPRIO_URT_DOT_DIFF_4",
	"STARPU_HETEROPRIO_URT_DOT_DIFF_5", "STARPU_HETEROPRIO_URT_DOT_DIFF_6", "STARPU_HETEROPRIO_URT_DOT_DIFF_7",
	"STARPU_HETEROPRIO_URT_DOT_DIFF_8", "STARPU_HETEROPRIO_URT_DOT_DIFF_9", "STARPU_HETEROPRIO_URT_DOT_DIFF_10",
	"STARPU_HETEROPRIO_URT_DOT_DIFF_11", "STARPU_HETEROPRIO_URTS_PER_SECONDS", "STARPU_HETEROPRIO_URTS_PER_SECONDS_2",
	"STARPU_HETEROPRIO_URTS_PER_SECONDS_DIFF", "STARPU_HETEROPRIO_URTS_TIME_RELEASED_DIFF",
	"STARPU_HETEROPRIO_URTS_TIME_COMBINATION", "STARPU_HETEROPRIO_NODS_PER_SECOND",
	"STARPU_HETEROPRIO_NODS_TIME_RELEASED", "STARPU_HETEROPRIO_NODS_TIME_RELEASED_DIFF",
};

/**
 * Data locality mode (1) or not (0, the default; STARPU_HETEROPRIO_USE_LA=1
 * also turns it on): the workers of each memory node form a group, each
 * bucket keeps a task list per group, a task goes to the list of the group
 * its data are closest to and workers take from their own group's lists
 * first. Another value is refused with an error.
 */
void starpu_heteroprio_set_use_locality(unsigned sched_ctx_id, unsigned use_locality);

/** Workers of kind arch look at max_prio buckets (0..STARPU_HETEROPRIO_MAX_PRIO), given by starpu_heteroprio_set_mapping(). */
void starpu_heteroprio_set_nb_prios(unsigned sched_ctx_id, enum starpu_worker_archtype arch, unsigned max_prio);

/** The source_prio-th bucket workers of kind arch look at (0: the first) is dest_bucket_id. */
void starpu_heteroprio_set_mapping(unsigned sched_ctx_id, enum starpu_worker_archtype arch, unsigned source_prio, unsigned dest_bucket_id);

/** Workers of kind arch run the tasks of bucket bucket_id fastest (its slow factor is 0). */
void starpu_heteroprio_set_faster_arch(unsigned sched_ctx_id, enum starpu_worker_archtype arch, unsigned bucket_id);

/**
 * Workers of kind arch run the tasks of bucket bucket_id slow_factor times
 * slower than the fastest kind (starpu_heteroprio_set_faster_arch()): they
 * take one only while the bucket holds at least slow_factor tasks per worker
 * of the fastest kind. slow_factor is a number, 0 or more.
 */
void starpu_heteroprio_set_arch_slow_factor(unsigned sched_ctx_id, enum starpu_worker_archtype arch, unsigned bucket_id, float slow_factor);

/** Worker groups per memory node, for the data locality mode: call it in the callback after starpu_heteroprio_set_use_locality(ctx, 1) (the policy maps the groups as it starts); with the mode off, an error. */
void starpu_heteroprio_map_wgroup_memory_nodes(unsigned sched_ctx_id);

/** Prints on stream the worker groups of ctx's data locality mode and each group's access order; an error when ctx does not run the mode. */
void starpu_heteroprio_print_wgroups(FILE *stream, unsigned sched_ctx_id);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_SCHEDULER_HETEROPRIO_H__ */
