/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals of the performance-monitoring framework, shared by its files,
 * lowest first (each uses only those before it):
 *   registry.c       the registry of counters and updaters (filled during
 *                    starpu_init(), then frozen), scopes, types, names and
 *                    ids, the metadata API, errors reported once, whether
 *                    collection is on (astro_counters_active)
 *   samples.c        samples: their lock, their refresh (the updaters, then
 *                    the listener), the typed getters and setters, direct reads
 *   sets.c           counter sets and listener handles
 *   task_counters.c  the runtime's own counters, fed by the observation path
 *   mpi_counters.c   StarPU-MPI's message counters, fed the same way
 *   perf_counters.c  the framework's life (the kernel hooks), collection,
 *                    listeners set on samples, per-codelet monitors
 * A framework below the kernel's rooms: it uses the public headers and the
 * kernel's common room only (common/common.h: a listener runs in the call
 * context _ASTRO_CTX_LISTENER, so that the kernel refuses blocking calls from
 * there); the kernel reaches it through the three hooks below.
 *
 * Locks, in the order they may be taken:
 *   attach_lock    which sample each listener is set on (perf_counters.c)
 *   sample->busy   one sample: held while it is refreshed and its listener runs
 *   handles_lock   the live sets and listeners, their references (sets.c)
 *   registry_lock  the registry (counters, updaters) and metadata look-ups (registry.c)
 *   collect_lock   the collection state (perf_counters.c)
 *   report_lock    which errors were already reported (registry.c)
 * A listener callback runs under its sample's lock. It may look metadata up
 * and change sets, but attaching or detaching listeners from a callback is
 * refused, so no lock cycle can form; refreshes triggered from inside a
 * callback (a task submitted by it) are skipped rather than nested.
 *
 * While the runtime runs, the registry does not change: samples and the
 * typed getters index its frozen arrays without taking a lock.
 */
#ifndef __ASTRO_COUNTERS_FRAMEWORK_H__
#define __ASTRO_COUNTERS_FRAMEWORK_H__

#include <stdbool.h>
#include <starpu.h>
#include <astrolabe/counters.h>
#include <astrolabe/observe.h>
#include <astrolabe/plugin.h>
#include "common/common.h"

/* ----------------------------------------------------- kernel hooks */

/* starpu_init(), before the plugins load: opens registration, registers the runtime's counters. */
void _astro_counters_init(void);
/* starpu_init(), once the workers run: closes registration, makes the samples, applies conf. */
void _astro_counters_start(int start_collection);
/* starpu_shutdown(), once the workers stopped: detaches listeners, drops the registry. */
void _astro_counters_shutdown(void);

/* ------------------------------------- framework -> counter modules */

/* Refresh a sample (updaters, then its listener) if a listener is attached. */
void _astro_counters_refresh_global(void);
void _astro_counters_refresh_worker(int workerid);
void _astro_counters_refresh_codelet(struct starpu_codelet *cl);

/* When collection starts, in starpu_timing_now() microseconds: moments
 * stamped earlier belong to an earlier collection period. */
extern double _astro_counters_since;

/* -------------------------------------- task_counters.c -> framework */

/* Registers the runtime's own counters and updaters (module "kernel"). */
void _astro_task_counters_register(void);
/* Follows the observation path while collection is on, and only then. */
void _astro_task_counters_collect(bool on);
/* Forgets the observation subscription (the kernel drops them all at shutdown). */
void _astro_task_counters_shutdown(void);

/* --------------------------------------- mpi_counters.c -> framework */

/* StarPU-MPI's message counters (module "mpi"): registered, switched and
 * forgotten with the runtime's own, at the same moments. */
void _astro_mpi_counters_register(void);
void _astro_mpi_counters_collect(bool on);
void _astro_mpi_counters_shutdown(void);

/* What one worker executed of one codelet: written by that worker only, summed when read. */
struct astro_cl_worker_values
{
	int64_t total_executed;
	double cumul_execution_time;
} __attribute__((aligned(64)));

/*
 * What the runtime counts for one codelet, reached from the codelet by
 * cl->perf_counter_values while a per-codelet listener is set. The gauges
 * share one cache line (a task that becomes ready on one worker and starts
 * on another moves one line); what workers execute is counted per worker,
 * without locked instructions.
 */
struct starpu_perf_counter_sample_cl_values
{
	int64_t total_submitted __attribute__((aligned(64)));
	int64_t current_submitted;
	int64_t peak_submitted;
	int64_t current_ready;
	int64_t peak_ready;
	struct astro_cl_worker_values executed[STARPU_NMAXWORKERS];
};

/* ------------------------------------------ between the framework's files */

/* Below, names the framework's files share: hidden, so that they reach each
 * other as directly as a static (no GOT, no PLT). */
#pragma GCC visibility push(hidden)

#define NSCOPES 3
/* A counter's id: (its index in its scope << ID_SCOPE_BITS) | its scope. */
#define ID_SCOPE_BITS 4
#define ID_SCOPE_MASK ((1 << ID_SCOPE_BITS) - 1)

/* A live sample's magic; DEAD_MAGIC marks a freed sample, set or listener. */
#define SAMPLE_MAGIC 0x5a3b1e00u
#define DEAD_MAGIC 0xdeadc0deu

#define SCOPE_ENUM_HINT "starpu_perf_counter_scope_global, _per_worker or _per_codelet"

struct counter
{
	int id;
	int index;
	enum starpu_perf_counter_scope scope;
	enum starpu_perf_counter_type type;
	enum astro_counter_kind kind;
	char *name;
	char *unit;
	char *help;
	char *module;
	int updater;                 /* index of its module's updater in the scope, -1: none (frozen) */
};

struct updater
{
	char *module;
	astro_counter_updater_fn fn;
	void *arg;
};

struct starpu_perf_counter_set
{
	unsigned magic;
	enum starpu_perf_counter_scope scope;
	int n;
	unsigned generation;         /* the starpu_init() it was made under */
	int refs;                    /* the application's, plus one per listener */
	unsigned char *enabled;      /* n flags, read without lock by refreshes */
};

struct starpu_perf_counter_listener
{
	unsigned magic;
	struct starpu_perf_counter_set *set;
	void (*callback)(struct starpu_perf_counter_listener *listener, struct starpu_perf_counter_sample *sample, void *context);
	void *user_arg;
	int nattached;               /* samples it is set on */
};

struct starpu_perf_counter_sample
{
	unsigned magic;
	enum starpu_perf_counter_scope scope;
	bool busy;                   /* the sample's lock (sample_lock) */
	struct starpu_perf_counter_listener *listener; /* written under busy, read first without */
	void *context;
	int n;
	union astro_counter_value *values;
	unsigned char *enabled;      /* the listener's set, copied at each refresh */
	/* Filled on demand (sample_fill): refresh number r copies the set at the
	 * first read and runs the updater of a counter's module at the first read
	 * of one of its counters, so a callback pays only for what it reads. */
	uint64_t refresh;
	uint64_t enabled_refresh;
	uint64_t *updated_refresh;   /* by updater index */
} __attribute__((aligned(64)));	/* what a refresh writes and reads on one line, shared with no other sample */

enum registry_state { REGISTRY_CLOSED, REGISTRY_OPEN, REGISTRY_RUNNING };

/* registry.c: the registry (its state read atomically; the frozen arrays
 * without lock while the runtime runs). */
extern struct counter **_astro_counters_frozen[NSCOPES];
extern int _astro_counters_nfrozen[NSCOPES];
extern struct updater **_astro_counters_frozen_updaters[NSCOPES];
extern int _astro_counters_nfrozen_updaters[NSCOPES];

/* 0, 1, 2 for the global, per-worker and per-codelet scopes; -1 for no scope. */
static inline int _astro_counters_scope_index(int scope)
{
	switch (scope) {
	case starpu_perf_counter_scope_global: return 0;
	case starpu_perf_counter_scope_per_worker: return 1;
	case starpu_perf_counter_scope_per_codelet: return 2;
	default: return -1;
	}
}

/* The counter of id while running (no lock: the registry is frozen), or NULL. */
static inline struct counter *_astro_counters_frozen_counter(int id)
{
	if (id < 0)
		return NULL;
	int si = _astro_counters_scope_index(id & ID_SCOPE_MASK);
	int index = id >> ID_SCOPE_BITS;
	if (si < 0 || !_astro_counters_frozen[si] || index >= _astro_counters_nfrozen[si])
		return NULL;
	return _astro_counters_frozen[si][index];
}

/* The names of a scope and of a type, NULL for none. */
const char *_astro_counters_scope_name(int scope);
const char *_astro_counters_type_name(int type);
/* The state of the registry, and the number of the starpu_init() it serves. */
enum registry_state _astro_counters_state(void);
unsigned _astro_counters_generation(void);
/* The same, with the size of scope index si, read together (for a new set). */
enum registry_state _astro_counters_scope_state(int si, int *n, unsigned *generation);
/* The counter of id in the registry, or NULL (takes registry_lock). */
struct counter *_astro_counters_lookup(int id);
/* Prints the message once for key during this starpu_init(); errors inside
 * listener callbacks would otherwise repeat for every task. */
void _astro_counters_report_once(const char *what, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The registry's life: opened at starpu_init() (registrations come), frozen
 * once the plugins are in (updaters matched to counters), running once the
 * samples exist, closed first at starpu_shutdown(), then dropped. */
void _astro_counters_registry_open(void);
void _astro_counters_registry_freeze(void);
void _astro_counters_registry_run(void);
void _astro_counters_registry_close(void);
void _astro_counters_registry_drop(void);

/* samples.c: the global and per-worker samples (made at start, attach_lock). */
extern struct starpu_perf_counter_sample _astro_counters_global_sample;
extern struct starpu_perf_counter_sample _astro_counters_worker_samples[STARPU_NMAXWORKERS];
extern unsigned _astro_counters_nworker_samples;
/* A sample of scope with n counters, reporting context: 0, or -ENOMEM. */
int _astro_counters_sample_init(struct starpu_perf_counter_sample *s, enum starpu_perf_counter_scope scope, int n, void *context);
void _astro_counters_sample_fini(struct starpu_perf_counter_sample *s);
/* Gives sample to listener (NULL: detaches); attach_lock held. Waits for a running callback. */
void _astro_counters_sample_attach(struct starpu_perf_counter_sample *s, struct starpu_perf_counter_listener *listener);
/* Makes the global sample and those of nworkers workers, or drops them (detached first). */
void _astro_counters_samples_make(unsigned nworkers);
void _astro_counters_samples_drop(void);
/* Is this thread running a callback of listener? Is it running one at all
 * (then said, naming what the caller is not allowed to do)? */
bool _astro_counters_listener_running(const struct starpu_perf_counter_listener *listener);
bool _astro_counters_in_callback(const char *what);

/* sets.c: can listener be used (said when not; takes handles_lock)? Frees it
 * (an exited listener: its handle is remembered as freed). */
bool _astro_counters_listener_usable(const char *what, const struct starpu_perf_counter_listener *listener);
void _astro_counters_listener_free(struct starpu_perf_counter_listener *listener);

#pragma GCC visibility pop

#endif /* __ASTRO_COUNTERS_FRAMEWORK_H__ */
