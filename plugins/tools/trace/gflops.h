/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_fxt_tool's GFlop/s variables (gflops.c), as StarPU computes them: a
 * worker's gf is the flops of the task it runs over the task's duration, held
 * from the task's start to its end and 0 in the gaps; unless -no-smooth, a
 * gap shorter than twice the previous task is averaged in (the rate starts at
 * the previous task's end). gft, the scheduler's, is the sum of the workers'.
 * A worker's value is only known at its task's end, with an earlier date: the
 * sum's changes wait until no worker can still change the past.
 */
#ifndef __ASTRO_TRACE_GFLOPS_H__
#define __ASTRO_TRACE_GFLOPS_H__

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* One worker's. */
struct gflops_worker
{
	uint64_t prev_end, prev_duration; /* its previous task's (has_prev) */
	bool has_prev, running;
	uint64_t begin;                   /* of the task it runs (running) */
};

/* The sum over the workers of one archive. */
struct gflops
{
	bool smooth;
	GArray *pending;    /* struct gflops_delta by date: the sum's changes not written yet */
	double total;       /* the sum as last written */
};

typedef void (*gflops_emit_fn)(void *arg, uint64_t ts, double total);

void gflops_init(struct gflops *g, bool smooth);
void gflops_fini(struct gflops *g);
void gflops_task_start(struct gflops_worker *w, uint64_t begin);
/** w's task ended at end after flops: *from and *rate (GFlop/s) are its gf from *from to end.
 * Returns false when there is nothing to write: no flops (the worker's gf is 0 between tasks already). */
bool gflops_task_end(struct gflops *g, struct gflops_worker *w, uint64_t end, double flops, uint64_t *from, double *rate);
/** The earliest date w may still change the sum at, now being the date read so far. */
uint64_t gflops_floor(const struct gflops *g, const struct gflops_worker *w, uint64_t now);
/** Emits the sum at each change dated up to horizon (UINT64_MAX: all). */
void gflops_flush(struct gflops *g, uint64_t horizon, gflops_emit_fn emit, void *arg);
/** Whether changes wait to be written. */
static inline bool gflops_pending(const struct gflops *g)
{
	return g->pending && g->pending->len;
}

#endif
