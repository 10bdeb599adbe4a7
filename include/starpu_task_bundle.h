/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Task bundles, as StarPU 1.4: a set of tasks a program says belong
 * together (they work on the same data). A policy that weighs costs may
 * place a bundle's tasks as one: starpu_task_bundle_expected_length() and
 * the two others sum over the tasks still in the bundle. Elsewhere they are
 * plain tasks. A task leaves its bundle when starpu_task_bundle_remove()
 * takes it out or the task is destroyed or cleaned; a closed bundle is
 * freed once it is empty.
 */
#ifndef __STARPU_TASK_BUNDLE_H__
#define __STARPU_TASK_BUNDLE_H__

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_task;
struct starpu_perfmodel_arch;

/** A bundle of tasks. */
typedef struct _starpu_task_bundle *starpu_task_bundle_t;

/** Creates an empty, open bundle in *bundle (NULL and one message when bundle is NULL or memory is short). */
void starpu_task_bundle_create(starpu_task_bundle_t *bundle);

/**
   Puts task in bundle. Returns 0; -EPERM when the bundle is closed or the
   task was submitted already; -EINVAL when bundle or task is NULL, or the
   task is in a bundle already (one message each).
*/
int starpu_task_bundle_insert(starpu_task_bundle_t bundle, struct starpu_task *task);

/**
   Takes task out of bundle (and frees a closed bundle left empty).
   Returns 0, -ENOENT when the task is not in it, -EINVAL on NULL.
*/
int starpu_task_bundle_remove(starpu_task_bundle_t bundle, struct starpu_task *task);

/**
   Says no task will be inserted any more: the bundle is freed once its
   last task left it (at once when it is empty). Do not use the bundle
   after this call.
*/
void starpu_task_bundle_close(starpu_task_bundle_t bundle);

/** Sum of starpu_task_expected_length() over the bundle's tasks on arch (µs); NAN when one has no estimate. */
double starpu_task_bundle_expected_length(starpu_task_bundle_t bundle, struct starpu_perfmodel_arch *arch, unsigned nimpl);

/** Sum of starpu_task_expected_energy() over the bundle's tasks on arch (J); NAN when one has no estimate. */
double starpu_task_bundle_expected_energy(starpu_task_bundle_t bundle, struct starpu_perfmodel_arch *arch, unsigned nimpl);

/** Expected time (µs) to bring the data the bundle's tasks use to memory_node, each handle counted once with the union of its modes. */
double starpu_task_bundle_expected_data_transfer_time(starpu_task_bundle_t bundle, unsigned memory_node);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_TASK_BUNDLE_H__ */
