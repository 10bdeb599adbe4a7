/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The leaves of a modular scheduler, shared by the file that knows what they
 * are (component_leaves.c) and the file that makes them and runs their
 * workers' pops (component_worker.c). The other component files see only
 * what component.h declares.
 */
#ifndef __ASTROLABE_SCHED_COMPONENT_LEAVES_H__
#define __ASTROLABE_SCHED_COMPONENT_LEAVES_H__

#include "component.h"
#include <astrolabe/thread.h>

/* Predictions are written by one thread and read by deciders without the lock. */
static inline double _astro_leaf_load_double(double *p)
{
	double v;

	__atomic_load(p, &v, __ATOMIC_RELAXED);
	return v;
}

static inline void _astro_leaf_store_double(double *p, double v)
{
	__atomic_store(p, &v, __ATOMIC_RELAXED);
}

/* A worker's component. */
struct _astro_worker_leaf
{
	int workerid;
	struct _astro_modular_ctx *ctx;
	astro_lock_t lock;
	/** Tasks pushed to this worker, by priority. */
	struct astro_sched_queue queue;
	/** Predicted work (µs) queued here; when the running task started and how long it should take. */
	double queued_len;
	double started_at;
	double running_len;
};

/* A combined worker's component: a leaf of the decisions (the kernel runs what it is given on all its members at
 * once), made the parent of its members' components, as in StarPU. */
struct _astro_combined_leaf
{
	int id;
	int size;
	const int *members;
};

/* The worker component whose worker is pulling on this thread, and the task a decision pushed to
 * it during that pull: handed straight back to the worker, without a round trip through its queue. */
extern ASTRO_THREAD_LOCAL_IE struct starpu_sched_component *_astro_leaf_pulling;
extern ASTRO_THREAD_LOCAL_IE struct starpu_task *_astro_leaf_handed;

/* The push_task of a worker's component and of a combined worker's: what makes a component one of them. */
int _astro_leaf_worker_push_task(struct starpu_sched_component *component, struct starpu_task *task);
int _astro_leaf_combined_push_task(struct starpu_sched_component *component, struct starpu_task *task);

#endif /* __ASTROLABE_SCHED_COMPONENT_LEAVES_H__ */
