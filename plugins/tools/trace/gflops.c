/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The GFlop/s variables of paje.trace and trace.json (gflops.h).
 */
#include "gflops.h"

struct gflops_delta
{
	uint64_t ts;
	double delta;
};

void gflops_init(struct gflops *g, bool smooth)
{
	g->smooth = smooth;
	g->pending = g_array_new(FALSE, FALSE, sizeof(struct gflops_delta));
	g->total = 0.0;
}

void gflops_fini(struct gflops *g)
{
	if (g->pending)
		g_array_free(g->pending, TRUE);
	g->pending = NULL;
}

void gflops_task_start(struct gflops_worker *w, uint64_t begin)
{
	w->running = true;
	w->begin = begin;
}

/* Adds delta at ts, keeping the changes by date (few wait: at most a couple per worker). */
static void add_delta(struct gflops *g, uint64_t ts, double delta)
{
	guint i = g->pending->len;
	while (i > 0 && g_array_index(g->pending, struct gflops_delta, i - 1).ts > ts)
		i--;
	struct gflops_delta d = { ts, delta };
	g_array_insert_val(g->pending, i, d);
}

/* Where a task of w starting at begin has its gf from: begin, or the previous end when the gap is short (smoothing). */
static uint64_t start_of(const struct gflops *g, const struct gflops_worker *w, uint64_t begin)
{
	if (g->smooth && w->has_prev && begin >= w->prev_end && begin - w->prev_end < 2 * w->prev_duration)
		return w->prev_end;
	return begin;
}

bool gflops_task_end(struct gflops *g, struct gflops_worker *w, uint64_t end, double flops, uint64_t *from, double *rate)
{
	uint64_t begin = w->running ? w->begin : end;
	w->running = false;
	uint64_t start = start_of(g, w, begin);
	w->has_prev = true;
	w->prev_end = end;
	w->prev_duration = end - begin;
	if (flops <= 0.0)
		return false;
	/* flops per ns are GFlop/s. */
	double r = end > start ? flops / (double)(end - start) : 0.0;
	*from = start;
	*rate = r;
	if (r != 0.0) {
		add_delta(g, start, r);
		add_delta(g, end, -r);
	}
	return true;
}

uint64_t gflops_floor(const struct gflops *g, const struct gflops_worker *w, uint64_t now)
{
	/* Its running task's start is known; a task it has not started yet starts at now or later. */
	return start_of(g, w, w->running ? w->begin : now);
}

void gflops_flush(struct gflops *g, uint64_t horizon, gflops_emit_fn emit, void *arg)
{
	guint n = 0;
	while (n < g->pending->len) {
		uint64_t ts = g_array_index(g->pending, struct gflops_delta, n).ts;
		if (ts > horizon)
			break;
		double total = g->total;
		for (; n < g->pending->len && g_array_index(g->pending, struct gflops_delta, n).ts == ts; n++)
			total += g_array_index(g->pending, struct gflops_delta, n).delta;
		if (total < 1e-12)
			total = 0.0; /* what the additions leave of a zero */
		g->total = total;
		emit(arg, ts, total);
	}
	g_array_remove_range(g->pending, 0, n);
}
