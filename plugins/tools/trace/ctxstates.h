/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* paje.trace's scheduling-context states (ctxstates.c): StarPU's Ctx1..Ctx9 on the workers. */
#ifndef __ASTRO_TRACE_CTXSTATES_H__
#define __ASTRO_TRACE_CTXSTATES_H__

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <starpu_config.h>

/* The contexts with states: all but the default one (0). */
#define CTXSTATES_N (STARPU_NMAX_SCHED_CTXS - 1)

/** paje.trace's header: the state types Ctx1..Ctx9 ("InCtx1".."InCtx9") of the workers (W). */
void ctxstates_types(FILE *f);
/** paje.trace's header: the values of a worker state (alias, name, colour as in the header) for Ctx1..Ctx9, when
 * StarPU declares that state for them (the submitting side's Bu, Su, Th it does not). */
void ctxstates_state_values(FILE *f, const char *alias, const char *name, const char *colour);
/** The values of task name for Ctx1..Ctx9 (aliases <name>_<k>), written with its WS value: StarPU's palette, one
 * colour per context, or the task's colour rgb with -use-task-color (use_task_color). */
void ctxstates_task_values(FILE *f, const char *name, const double rgb[3], bool use_task_color);
/** A task of scheduling context ctx (1..9) starts on worker container alias at date_ms: its Ctx<ctx> state, plain
 * (event 10) then semi-extended (21: size, params, footprint, tag, job and submit order, the latter two as
 * paje.trace writes them, with the rank's prefix). */
void ctxstates_task_begin(FILE *f, double date_ms, const char *alias, unsigned ctx, const char *name, uint64_t size,
			  const char *params, uint32_t footprint, uint64_t tag, const char *job);

#endif
