/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Expert mode, the header StarPU 1.4 installs for it: starpu_wake_all_blocked_workers()
 * (declared in starpu_scheduler.h, which this header brings), the progression hooks and the idle hooks. */
#ifndef __STARPU_EXPERT_H__
#define __STARPU_EXPERT_H__

#include <starpu_scheduler.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Registers a progression hook: every worker calls func(arg) at each round of
 * its scheduling loop, between tasks and while idle, so that work outside the
 * runtime (polling a communication library) progresses on the workers'
 * threads. func returns whether the workers may sleep: while a hook returns
 * 0, idle workers keep polling (yielding their core) instead of sleeping
 * until woken. Sleeping workers are woken so that they start calling it.
 * Returns the hook's id (from 0), for starpu_progression_hook_deregister();
 * -1 when all 16 hooks are taken, -EINVAL for a NULL func, -EDEADLK when
 * called from a hook; each said in one line.
 */
int starpu_progression_hook_register(unsigned (*func)(void *arg), void *arg);

/**
 * Deregisters the progression hook hook_id: once this returns, no worker
 * calls it any more (from within a hook, other workers may still be finishing
 * a call). An id that is not registered is said, and nothing is done.
 */
void starpu_progression_hook_deregister(int hook_id);

/**
 * Registers an idle hook: a worker calls func(arg) at each round of its
 * scheduling loop that found no task to run, before pausing or sleeping.
 * func returns whether the workers may sleep, as a progression hook does.
 * Sleeping workers are woken so that they start calling it. Returns the
 * hook's id (from 0), for starpu_idle_hook_deregister(); -1 when all 16 idle
 * hooks are taken, -EINVAL for a NULL func, -EDEADLK when called from an idle
 * hook; each said in one line.
 */
int starpu_idle_hook_register(unsigned (*func)(void *arg), void *arg);

/**
 * Deregisters the idle hook hook_id: once this returns, no worker calls it
 * any more (from within an idle hook, other workers may still be finishing a
 * call). An id that is not registered is said, and nothing is done.
 */
void starpu_idle_hook_deregister(int hook_id);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_EXPERT_H__ */
