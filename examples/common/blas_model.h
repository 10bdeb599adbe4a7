/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Performance models of GEMM tasks estimated by the application itself
 * (seed 003 section 3.3: STARPU_COMMON with a cost_function): the cost
 * follows from the matrices' dimensions, the same on every architecture up
 * to its relative speed. The history-based models beside them measure
 * instead. StarPU's examples/common/blas_model.h names.
 */
#ifndef __BLAS_MODEL_H__
#define __BLAS_MODEL_H__

#include <starpu.h>

/** Expected length (µs) of a GEMM task C = A B on its three matrix handles (A, B, C), at a nominal 1 GFlop/s. */
double gemm_cost(struct starpu_task *task, unsigned nimpl);

static struct starpu_perfmodel starpu_sgemm_model STARPU_ATTRIBUTE_UNUSED = { .type = STARPU_HISTORY_BASED, .symbol = "sgemm" };
static struct starpu_perfmodel starpu_sgemm_model_common STARPU_ATTRIBUTE_UNUSED = { .type = STARPU_COMMON, .cost_function = gemm_cost };
static struct starpu_perfmodel starpu_dgemm_model STARPU_ATTRIBUTE_UNUSED = { .type = STARPU_HISTORY_BASED, .symbol = "dgemm" };
static struct starpu_perfmodel starpu_dgemm_model_common STARPU_ATTRIBUTE_UNUSED = { .type = STARPU_COMMON, .cost_function = gemm_cost };

#endif
