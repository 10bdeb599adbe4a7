/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The workers room: the workers as every room above sees them (the table in
 * the shared state, each worker's struct), which may run what
 * (can_execute.c), the sleep and wake-up protocol (worker.c), combined
 * workers (combined.c), the drivers' registry (drivers.c), binding
 * (binding.c) and per-codelet execution counts (codelet_stats.c). The loop
 * a worker runs is the run room's.
 */
#ifndef __ASTRO_WORKERS_H__
#define __ASTRO_WORKERS_H__

#include "common/common.h"
#include "memory/memory.h"
#include <stddef.h>

struct _astro_participation;

/* A codelet a worker ran, and where its executions are counted: its own
 * per_worker_stats, or the runtime's record of a codelet in read-only memory. */
#define _ASTRO_CODELET_SLOTS 8
struct _astro_codelet_slot
{
	const struct starpu_codelet *cl;
	unsigned long *stats;
};
/* Resolves cl into slot: the counts, NULL when they cannot be kept (out of memory). */
unsigned long *_astro_codelet_slot_fill(struct _astro_codelet_slot *slot, struct starpu_codelet *cl);

/* Largest pipeline of a device worker (STARPU_*_PIPELINE). */
#define _ASTRO_PIPELINE_MAX 64

struct _astro_worker
{
	int id;
	int devid;
	int bindid;                          /* processing unit (hwloc logical index), -1 unbound */
	enum starpu_worker_archtype arch;
	const struct astro_driver *driver;
	unsigned memory_node;
	int enabled;                         /* atomic; read by every submission (can_execute.c): kept off the lines the loop writes */
	char name[48];
	starpu_pthread_t thread;
	pid_t tid;
	/* Sleeping: a waker sets wake_pending then wakes its futex if sleeping (see worker.c). The
	 * mutex and condition are StarPU's (starpu_worker_lock, starpu_worker_get_sched_condition). */
	starpu_pthread_mutex_t sched_mutex;
	starpu_pthread_cond_t sched_cond;
	/* Written by its wakers as well as by the worker: a line of their own, so that a wake-up
	 * moves one line between the cores, and none that the worker writes as it runs tasks. */
	int sleeping __attribute__((aligned(_ASTRO_CACHELINE)));
	int wake_pending;
	int work_queued;                     /* a task was queued for this worker alone: stop pausing (astro_worker_wake_for_queued) */
	unsigned relax __attribute__((aligned(_ASTRO_CACHELINE))); /* nested starpu_worker_relax_on() sections */
	struct starpu_task *current_task;
	const struct _astro_foreign_call *site; /* the foreign code it runs at the top of its loop (_astro_worker_site_enter) */
	unsigned pipeline;                   /* tasks it holds at once, their data asked for ahead (worker.c) */
	/* starpu_push_local_task() queue */
	starpu_pthread_mutex_t local_lock;
	struct starpu_task_list local_tasks;
	int nlocal;
	unsigned orders_done;                /* tasks with a workerorder it popped, under local_lock */
	unsigned long executed;
	struct _astro_participation *parallel_head, *parallel_tail; /* parts in parallel tasks, under local_lock, counted in nlocal */
	struct _astro_participation *parallel; /* the parallel task it runs as rank 0 (parallel.c) */
	uint32_t ctx_mask;                   /* atomic: the contexts other than 0 it belongs to (bit = id) */
	unsigned ctx_turn;                   /* the context it served last, to take them in turn */
	/* Per context: starpu_sched_ctx_set_priority()'s order and the tasks policies counted for it
	 * (starpu_sched_ctx_list_task_counters_*): a worker in several contexts serves first the one of
	 * highest priority that has tasks counted for it (ctx_pop in sched.c). Atomic. */
	unsigned ctx_priority[STARPU_NMAX_SCHED_CTXS];
	int ctx_ntasks[STARPU_NMAX_SCHED_CTXS];
	uint32_t master_of;                  /* atomic: the nested contexts it is the master of (bit = id) */
	uint32_t hands_down;                 /* atomic: the nested contexts it gives what it takes from their parent (bit = id) */
	struct _astro_codelet_slot codelet_slots[_ASTRO_CODELET_SLOTS]; /* where the codelets it ran count (codelet_stats.c) */
	struct _astro_foreign_call codelet_site; /* entered while it runs a codelet: a crash there names it, its task and this worker */
} __attribute__((aligned(_ASTRO_CACHELINE)));
/* A worker's call into foreign code at the top of its loop, for the signal handler (common/common.h). */
static inline __attribute__((always_inline)) void _astro_worker_site_enter(struct _astro_worker *w,
									  const struct _astro_foreign_call *site)
{
	w->site = site;
}

static inline __attribute__((always_inline)) void _astro_worker_site_leave(struct _astro_worker *w)
{
	w->site = NULL;
}

/* _astro_worker_id() (common/common.h) reads the id as the struct's first field. */
_Static_assert(offsetof(struct _astro_worker, id) == 0, "a worker's id must be its first field");

/* ------------------------------------------------- sleep and wake-up (worker.c) */

/* Wakes w if it sleeps; the next round of its loop looks again at its queues otherwise. */
void _astro_worker_wake(struct _astro_worker *w);
/* Sleeps until woken; returns at once if a wake-up is already pending. Inline: a sleeping
 * worker's round trip (woken for each task) pays no call. It sleeps on the futex of wake_pending,
 * without a lock: a waker's store of 1 either comes before the futex wait looks at it (which then
 * returns at once) or wakes it, and no woken worker has to take back a mutex its waker holds. */
static inline __attribute__((always_inline)) void _astro_worker_sleep(struct _astro_worker *w)
{
	__atomic_store_n(&w->sleeping, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&w->wake_pending, __ATOMIC_SEQ_CST) && __atomic_load_n(&_astro_rt.running, __ATOMIC_SEQ_CST)) {
		/* starpu_conf's, or set since by starpu_worker_set_*_callback() (worker.c). */
		void (*going_to_sleep)(unsigned) = __atomic_load_n(&_astro_rt.conf.callback_worker_going_to_sleep, __ATOMIC_ACQUIRE);
		if (going_to_sleep)
			going_to_sleep(w->id);
		_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_SLEEP_BEGIN, .workerid = w->id);
		while (!__atomic_load_n(&w->wake_pending, __ATOMIC_SEQ_CST) && __atomic_load_n(&_astro_rt.running, __ATOMIC_SEQ_CST))
			astro_futex_wait(&w->wake_pending, 0);
		_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_SLEEP_END, .workerid = w->id);
		void (*waking_up)(unsigned) = __atomic_load_n(&_astro_rt.conf.callback_worker_waking_up, __ATOMIC_ACQUIRE);
		if (waking_up)
			waking_up(w->id);
	}
	__atomic_store_n(&w->sleeping, 0, __ATOMIC_SEQ_CST);
}

/* The tasks the workers executed, all together (progress, as the watchdog sees it). */
unsigned long _astro_workers_executed(void);

/* ---------------------------------------------------- can execute (can_execute.c) */

/* Where task may run on a worker of driver d (0: nowhere). */
static inline uint32_t _astro_task_where(const struct starpu_task *task, const struct astro_driver *d)
{
	uint32_t where = task->cl->where ? task->cl->where : d->where;
	if (task->where != -1 && task->where != 0)
		where &= (uint32_t)task->where;
	return where & d->where;
}

/* The implementation workerid runs task with (the first its driver has and the codelet's can_execute allows), -1 when none. */
int _astro_worker_impl_for(int workerid, struct starpu_task *task);
/* starpu_worker_can_execute_task() but for task->workerids; and whether task->workerids allows worker or combined worker id. */
int _astro_worker_can_execute(unsigned workerid, struct starpu_task *task, unsigned nimpl);
int _astro_task_allows_worker(const struct starpu_task *task, unsigned id);

/* ------------------------------------------------------- combined workers (combined.c) */

struct _astro_combined
{
	int size;
	int ids[STARPU_MAXCPUS];
};
/* Combined worker id (numbered after the workers), NULL when there is none of that id. */
const struct _astro_combined *_astro_combined_get(int id);
bool _astro_is_combined_worker(int id);
void _astro_combined_workers_reset(void);
/* The part of a parallel task the calling worker runs (sched/parallel.c sets it); size 0 outside one. */
struct _astro_combined_part
{
	int combined, size, rank;
};
extern _ASTRO_TLS struct _astro_combined_part _astro_combined_current;

/* ------------------------------------------------------------ drivers (drivers.c) */

unsigned _astro_driver_count(void);
const struct astro_driver *_astro_driver_nth(unsigned i);
/* At shutdown: the drivers registered are forgotten (their plugins are unloaded). */
void _astro_drivers_clear(void);

/* --------------------------------------------------------------------- the rest */

/* Forgets which threads of the program hold which units (binding.c), and the machine's tree and
 * the workers of each unit (tree.c), at shutdown. */
void _astro_binding_reset(void);
void _astro_worker_tree_reset(void);

/* One more execution of cl on w (STARPU_CODELET_PROFILING). */
static inline void _astro_codelet_count(struct _astro_worker *w, struct starpu_codelet *cl)
{
	struct _astro_codelet_slot *slot = &w->codelet_slots[((uintptr_t)cl >> 8) % _ASTRO_CODELET_SLOTS];
	unsigned long *stats = STARPU_LIKELY(slot->cl == cl) ? slot->stats : _astro_codelet_slot_fill(slot, cl);
	/* w is the only writer of its count: no locked instruction. */
	if (STARPU_LIKELY(stats != NULL))
		__atomic_store_n(&stats[w->id], __atomic_load_n(&stats[w->id], __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

#endif /* __ASTRO_WORKERS_H__ */
