/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Counters as a plugin service: how a plugin (or a part of the runtime)
 * exports performance counters that tools then read with the StarPU API of
 * <starpu_perf_monitoring.h>, and the atomic helpers to keep them.
 *
 * From its init, a plugin registers each counter (name, scope, type, kind,
 * unit, help) and one updater per scope it exports counters in:
 *
 *     static int64_t pushed[STARPU_NMAXWORKERS];
 *     static int id_pushed;
 *
 *     static void update_worker(struct starpu_perf_counter_sample *sample, void *context, void *arg)
 *     {
 *             int workerid = astro_counter_context_worker(context);
 *             astro_counter_sample_set_int64(sample, id_pushed, astro_counter_load_int64(&pushed[workerid]));
 *     }
 *
 *     static int init(void)
 *     {
 *             id_pushed = astro_counter_register("sched_mine", starpu_perf_counter_scope_per_worker,
 *                     "starpu.sched.mine.w_total_pushed", starpu_perf_counter_type_int64,
 *                     ASTRO_COUNTER_MONOTONIC, "tasks", "tasks pushed to this worker's queue");
 *             if (id_pushed < 0)
 *                     return id_pushed;
 *             return astro_counter_register_updater("sched_mine", starpu_perf_counter_scope_per_worker,
 *                     update_worker, NULL);
 *     }
 *
 * and keeps the value up to date on its own path, cheaply, only while
 * astro_counter_collecting() says so:
 *
 *     if (astro_counter_collecting())
 *             astro_counter_add_int64(&pushed[workerid], 1);
 *
 * The updater only copies current values into the sample: it is called when
 * a listener of that scope first reads one of the module's counters during
 * its callback (once per callback; the context says which worker or codelet),
 * or when a tool reads a value with astro_counter_read().
 * Names follow StarPU's scheme: "<module>.<g|w|c>_<what>" (starpu.task.
 * g_total_submitted). Registration is open during starpu_init() only: the
 * list is fixed while the runtime runs.
 */
#ifndef __ASTROLABE_COUNTERS_H__
#define __ASTROLABE_COUNTERS_H__

#include <stdint.h>
#include <string.h>
#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How a counter's value moves, for tools that aggregate or plot it. */
enum astro_counter_kind
{
	ASTRO_COUNTER_MONOTONIC = 1, /**< only grows: totals, cumulated times, peaks */
	ASTRO_COUNTER_INSTANT = 2    /**< goes up and down: a current length, a gauge */
};

/** A counter value of any type; the member is the counter's type. */
union astro_counter_value
{
	int32_t int32_val;
	int64_t int64_val;
	float float_val;
	double double_val;
};

/**
 * Fills the enabled counters of sample with their current values (with the
 * astro_counter_sample_set_*() calls). context is the listener's context: NULL
 * (global), a pointer to the worker id (per worker, see
 * astro_counter_context_worker()), the struct starpu_codelet (per codelet).
 * arg is what was given at registration. Called with the sample locked: keep
 * it short, take no lock a worker may hold while running a task.
 */
typedef void (*astro_counter_updater_fn)(struct starpu_perf_counter_sample *sample, void *context, void *arg);

/**
 * Registers a counter of module (the plugin's name, e.g. "sched_lws"; shown
 * by astrolabe-perf-list). name, unit and help are copied. unit may be NULL
 * (dimensionless). Returns the counter's id (>= 0), or -EINVAL (bad scope,
 * type, kind or empty name), -EEXIST (name taken), -EBUSY (called outside
 * starpu_init(): register from the plugin's init), each with an error line.
 */
int astro_counter_register(const char *module, enum starpu_perf_counter_scope scope, const char *name,
			   enum starpu_perf_counter_type type, enum astro_counter_kind kind,
			   const char *unit, const char *help);

/**
 * Registers module's updater for scope: one per module and scope. Returns 0,
 * or -EINVAL, -EEXIST (module already has one for scope), -EBUSY (outside
 * starpu_init()), each with an error line.
 */
int astro_counter_register_updater(const char *module, enum starpu_perf_counter_scope scope,
				   astro_counter_updater_fn updater, void *arg);

/** 1 when the listener reading sample enabled counter id (worth computing), else 0. */
int astro_counter_sample_wants(const struct starpu_perf_counter_sample *sample, int id);
/**
 * Stores value for counter id in sample when it is enabled there (from an
 * updater). Returns 0; -EINVAL with an error line when id is invalid, of
 * another scope or of another type.
 */
int astro_counter_sample_set_int32(struct starpu_perf_counter_sample *sample, int id, int32_t value);
/** As astro_counter_sample_set_int32(), for int64 counters. */
int astro_counter_sample_set_int64(struct starpu_perf_counter_sample *sample, int id, int64_t value);
/** As astro_counter_sample_set_int32(), for float counters. */
int astro_counter_sample_set_float(struct starpu_perf_counter_sample *sample, int id, float value);
/** As astro_counter_sample_set_int32(), for double counters. */
int astro_counter_sample_set_double(struct starpu_perf_counter_sample *sample, int id, double value);

/**
 * Reads the current value of counter id outside any listener: runs the
 * updater of its module into a private sample. context is as for updaters:
 * NULL (global), the worker id as (const int *) (per worker), the codelet
 * (per codelet). Returns 0; -ENODATA, silently, for a codelet without a
 * listener (it has no values); -EINVAL (invalid id, bad worker or codelet,
 * NULL value) or -ESRCH (runtime not running) with an error line.
 */
int astro_counter_read(int id, const void *context, union astro_counter_value *value);

/**
 * Calls fn(cl, arg) for each codelet that has a per-codelet listener now, and
 * returns how many (or -EINVAL for a NULL fn). fn must not set or unset
 * listeners; it may call astro_counter_read().
 */
int astro_counter_foreach_codelet(void (*fn)(struct starpu_codelet *cl, void *arg), void *arg);

/** Kind of counter id, or -1 with an error line for an invalid id. */
int astro_counter_get_kind(int id);
/**
 * Id of the counter named name, whatever its scope (stored in *scope when
 * scope is not NULL), or -1 without a message when there is none (or name is
 * NULL): for callers that try names, where starpu_perf_counter_name_to_id()
 * would report each miss.
 */
int astro_counter_find(const char *name, enum starpu_perf_counter_scope *scope);
/** Unit of counter id ("" when dimensionless), or NULL with an error line for an invalid id. */
const char *astro_counter_get_unit(int id);
/** Module that registered counter id ("kernel" for the runtime's own), or NULL with an error line. */
const char *astro_counter_get_module(int id);
/** "monotonic" or "instant"; NULL for anything else. */
const char *astro_counter_kind_name(enum astro_counter_kind kind);

/** The worker id a per-worker context stands for (-1 for NULL). */
static inline int astro_counter_context_worker(const void *context)
{
	return context ? *(const int *)context : -1;
}

/* ------------------------------------------------------------ collection */

/** Non-zero while counters are collected; read it with astro_counter_collecting(). */
extern int astro_counters_active;

/** 1 while counters are collected: a plugin updates its counters only then (one predictable branch when off). */
static inline int astro_counter_collecting(void)
{
	return __atomic_load_n(&astro_counters_active, __ATOMIC_RELAXED) != 0;
}

/* ------------------------------------------------------ atomic helpers */

/*
 * Lock-free updates of counter storage, safe under any number of concurrent
 * writers (unless "single writer" is said) and readers. Keep storage that
 * several threads write on its own cache line.
 */

/** *p += v. */
static inline void astro_counter_add_int64(int64_t *p, int64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/** *p += v; returns the new value. */
static inline int64_t astro_counter_add_fetch_int64(int64_t *p, int64_t v)
{
	return __atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

/** *p += v. */
static inline void astro_counter_add_int32(int32_t *p, int32_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/** *p += v when only the calling thread ever writes *p (a worker's own slot): no locked instruction. */
static inline void astro_counter_local_add_int64(int64_t *p, int64_t v)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

/** Decrements *p unless it is 0 or less (a gauge never goes negative); returns 1 if it decremented. */
static inline int astro_counter_dec_positive_int64(int64_t *p)
{
	int64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (old > 0)
		if (__atomic_compare_exchange_n(p, &old, old - 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return 1;
	return 0;
}

/** Reads a 64-bit integer counter slot atomically (relaxed), for updaters and listeners. */
static inline int64_t astro_counter_load_int64(const int64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/** Reads a 32-bit integer counter slot atomically (relaxed). */
static inline int32_t astro_counter_load_int32(const int32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/** Reads a double counter slot atomically (relaxed); also any double one thread writes while others read it, such as a policy's estimates. */
static inline double astro_counter_load_double(const double *p)
{
	double v;
	__atomic_load(p, &v, __ATOMIC_RELAXED);
	return v;
}

/** Reads a float counter slot atomically (relaxed). */
static inline float astro_counter_load_float(const float *p)
{
	float v;
	__atomic_load(p, &v, __ATOMIC_RELAXED);
	return v;
}

/** Writes a double counter slot atomically (relaxed). */
static inline void astro_counter_store_double(double *p, double v)
{
	__atomic_store(p, &v, __ATOMIC_RELAXED);
}

/*
 * max/min: the stored value only moves toward v, so a peak kept this way is
 * the true peak of all the values offered, whatever the interleaving.
 */
#define ASTRO_COUNTER_DEFINE_EXTREMUM(NAME, TYPE, BETTER)                               \
	static inline void NAME(TYPE *p, TYPE v)                                          \
	{                                                                                 \
		TYPE old;                                                                 \
		__atomic_load(p, &old, __ATOMIC_RELAXED);                                 \
		while (v BETTER old)                                                      \
			if (__atomic_compare_exchange(p, &old, &v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) \
				break;                                                    \
	}

/** *p = max(*p, v). */
ASTRO_COUNTER_DEFINE_EXTREMUM(astro_counter_max_int32, int32_t, >)
/** *p = max(*p, v). */
ASTRO_COUNTER_DEFINE_EXTREMUM(astro_counter_max_int64, int64_t, >)
/** *p = max(*p, v); a NaN v leaves *p alone. */
ASTRO_COUNTER_DEFINE_EXTREMUM(astro_counter_max_float, float, >)
/** *p = max(*p, v); a NaN v leaves *p alone. */
ASTRO_COUNTER_DEFINE_EXTREMUM(astro_counter_max_double, double, >)
/** *p = min(*p, v). */
ASTRO_COUNTER_DEFINE_EXTREMUM(astro_counter_min_int32, int32_t, <)
/** *p = min(*p, v). */
ASTRO_COUNTER_DEFINE_EXTREMUM(astro_counter_min_int64, int64_t, <)
/** *p = min(*p, v); a NaN v leaves *p alone. */
ASTRO_COUNTER_DEFINE_EXTREMUM(astro_counter_min_float, float, <)
/** *p = min(*p, v); a NaN v leaves *p alone. */
ASTRO_COUNTER_DEFINE_EXTREMUM(astro_counter_min_double, double, <)

#undef ASTRO_COUNTER_DEFINE_EXTREMUM

/** *p += v for a double: no atomic floating-point add exists, so a compare-and-swap loop. */
static inline void astro_counter_add_double(double *p, double v)
{
	double old, sum;
	__atomic_load(p, &old, __ATOMIC_RELAXED);
	do
		sum = old + v;
	while (!__atomic_compare_exchange(p, &old, &sum, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/** *p += v for a float. */
static inline void astro_counter_add_float(float *p, float v)
{
	float old, sum;
	__atomic_load(p, &old, __ATOMIC_RELAXED);
	do
		sum = old + v;
	while (!__atomic_compare_exchange(p, &old, &sum, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/** *p += v when only the calling thread ever writes *p. */
static inline void astro_counter_local_add_double(double *p, double v)
{
	astro_counter_store_double(p, astro_counter_load_double(p) + v);
}

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_COUNTERS_H__ */
