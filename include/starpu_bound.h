/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The theoretical lower bound on execution time (StarPU 1.4's starpu_bound.h).
 *
 * The tasks submitted between starpu_bound_start() and starpu_bound_stop() are
 * recorded with their codelets' performance-model predictions on every worker.
 * They become a linear program whose optimum is the shortest execution time an
 * ideal schedule could reach; GLPK solves it (starpu_bound_compute), or it is
 * written out for an external solver (LP and MPS files, read by glpsol).
 */
#ifndef __STARPU_BOUND_H__
#define __STARPU_BOUND_H__

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Starts recording the submitted tasks, forgetting what an earlier recording
 * held. \p deps: also record the dependencies between them (task, implicit
 * data and tag dependencies), so that the program gives each task a start and
 * an end time (its size grows with the square of the number of tasks).
 * \p prio: with \p deps, a task of higher priority starts no later than a task
 * of lower priority that does not depend on it, as a priority scheduler would.
 */
void starpu_bound_start(int deps, int prio);

/** Stops recording. The outputs below describe the tasks recorded until then. */
void starpu_bound_stop(void);

/** Writes the recorded tasks and their dependencies to \p output as a DOT graph. */
void starpu_bound_print_dot(FILE *output);

/**
 * Solves the program with GLPK: \p res gets the bound of the relaxed program
 * (continuous variables), in ms; when \p integer is nonzero, \p integer_res
 * gets the bound with integer variables (whole tasks on one worker: tighter,
 * longer to solve). Both are 0 when some recorded task has no prediction (the
 * codelets concerned are named), or when Astrolabe was built without GLPK.
 */
void starpu_bound_compute(double *res, double *integer_res, int integer);

/** Writes the linear program to \p output in the CPLEX LP format (glpsol --lp). */
void starpu_bound_print_lp(FILE *output);

/** Writes the linear program to \p output in the free MPS format (glpsol --freemps). */
void starpu_bound_print_mps(FILE *output);

/**
 * Writes to \p output the bound (solved as starpu_bound_compute() would, with
 * integer variables when \p integer is nonzero) next to the actual execution:
 * per kind of task, how many tasks each kind of worker ran and how many the
 * optimal schedule gives it.
 */
void starpu_bound_print(FILE *output, int integer);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_BOUND_H__ */
