/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Declaring performance steering knobs (starpu_perf_knob_*) from a plugin.
 *
 * A knob group is one getter/setter pair serving several knobs of one scope;
 * the framework checks every call (knob id, scope, type, worker or policy,
 * the value against the declared range or set) before the group sees it, so
 * a group only implements the effect. Declare groups and knobs from the
 * plugin's init: they are dropped at starpu_shutdown() and declared again at
 * the next starpu_init().
 *
 *     static int get(const struct astro_knob_context *ctx, union astro_knob_value *v, void *arg)
 *     {
 *             v->double_val = my_factor;
 *             return 0;
 *     }
 *     static int set(const struct astro_knob_context *ctx, const union astro_knob_value *v, void *arg)
 *     {
 *             my_factor = v->double_val;
 *             return 0;
 *     }
 *     static int init(void)
 *     {
 *             struct astro_knob_group_decl group = { .module = "mine", .scope = starpu_perf_knob_scope_global,
 *                                                    .get = get, .set = set };
 *             struct astro_knob_decl knob = {
 *                     .name = "mine.global.g_factor_knob", .type = starpu_perf_knob_type_double,
 *                     .help = "scales my heuristic", .has_default = 1, .default_value.double_val = 1.0,
 *                     .check = ASTRO_KNOB_CHECK_RANGE, .min.double_val = 0.1, .max.double_val = 10.0,
 *             };
 *             int g = astro_knob_group_declare(&group);
 *             return g >= 0 && astro_knob_declare(g, &knob) >= 0 ? 0 : -EINVAL;
 *     }
 */
#ifndef __ASTROLABE_KNOBS_H__
#define __ASTROLABE_KNOBS_H__

#include <stdint.h>
#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A knob's value: the member named after the knob's type is the meaningful one. */
union astro_knob_value
{
	int32_t int32_val;
	int64_t int64_val;
	float float_val;
	double double_val;
};

/** What the framework checks a new value against before calling the setter. */
enum astro_knob_check
{
	/** Any value (NaN and infinities are always refused for float and double knobs). */
	ASTRO_KNOB_CHECK_NONE = 0,
	/** An on/off int32 knob: 0 is off, any other value is on and reaches the setter as 1. */
	ASTRO_KNOB_CHECK_ONOFF = 1,
	/** min <= value <= max. */
	ASTRO_KNOB_CHECK_RANGE = 2,
	/** One of values[0 .. nvalues-1]. */
	ASTRO_KNOB_CHECK_SET = 3
};

/** One knob. The framework copies it (and its strings): it may live on the stack. */
struct astro_knob_decl
{
	/** Unique name, e.g. "starpu.worker.w_enable_worker_knob". */
	const char *name;
	enum starpu_perf_knob_type type;
	/** One line saying what the knob changes. */
	const char *help;
	/** Set when default_value is the value every instance starts with (shown by the listing tools). */
	int has_default;
	union astro_knob_value default_value;
	enum astro_knob_check check;
	/** ASTRO_KNOB_CHECK_RANGE: the bounds, both included. */
	union astro_knob_value min;
	union astro_knob_value max;
	/** ASTRO_KNOB_CHECK_SET: the allowed values. */
	const union astro_knob_value *values;
	unsigned nvalues;
	/** Room for growth: zero. */
	void *reserved[4];
};

/** What a getter or setter is asked about. */
struct astro_knob_context
{
	int knob_id;
	const char *knob_name;
	/** Position of the knob in its group, in declaration order (0 for the first). */
	unsigned index;
	/** per_worker knobs: the worker (checked to exist); -1 otherwise. */
	int workerid;
	/** per_scheduler knobs: the policy name (checked to be registered); NULL otherwise. */
	const char *sched_policy_name;
};

/**
 * Reads the knob described by ctx into value. Returns 0, or a negative errno
 * after printing one line with astro_log_error() (the caller then gets 0).
 */
typedef int (*astro_knob_get_fn)(const struct astro_knob_context *ctx, union astro_knob_value *value, void *arg);
/**
 * Applies a value that already passed the declared check. Returns 0, or a
 * negative errno after printing one line with astro_log_error(), the knob
 * keeping its old value.
 */
typedef int (*astro_knob_set_fn)(const struct astro_knob_context *ctx, const union astro_knob_value *value, void *arg);

/** A group: knobs of one scope served by one getter/setter pair. */
struct astro_knob_group_decl
{
	/** Who declares the group: the plugin's name (e.g. "sched_lws"), shown by the listing tools. */
	const char *module;
	enum starpu_perf_knob_scope scope;
	astro_knob_get_fn get;
	/** NULL makes the group's knobs read-only. */
	astro_knob_set_fn set;
	/** Passed to get and set. */
	void *arg;
	/** per_scheduler groups: NULL-terminated names of the policies the knobs exist for; NULL for every policy. */
	const char *const *policies;
	/** Room for growth: zero. */
	void *reserved[4];
};

/**
 * Declares a knob group; the framework copies decl. Returns the group's id
 * (>= 0, valid until starpu_shutdown()), or -EINVAL (a bad scope, no getter),
 * -EBUSY (before starpu_init() or after starpu_shutdown()) or -ENOSPC (65536
 * groups already) after printing one line.
 */
int astro_knob_group_declare(const struct astro_knob_group_decl *decl);

/**
 * Declares a knob of group (an id from astro_knob_group_declare()). Returns
 * the knob's id (>= 0), as starpu_perf_knob_name_to_id() will give it, or
 * -EINVAL (bad declaration, or a group of an earlier starpu_init()) / -EEXIST
 * (name taken) after printing one line.
 */
int astro_knob_declare(int group, const struct astro_knob_decl *decl);

/** Everything declared about a knob, for listing tools. */
struct astro_knob_info
{
	int id;
	enum starpu_perf_knob_scope scope;
	/** The module that declared the knob's group ("" when it gave none). */
	const char *module;
	/** 1 when the group has no setter. */
	int read_only;
	/** per_scheduler: the policies it exists for (NULL-terminated), NULL for every policy. */
	const char *const *policies;
	/** As declared; the strings and values stay valid until starpu_shutdown(). */
	struct astro_knob_decl decl;
};

/** Fills info about knob id. Returns 0, or -EINVAL for an unknown id (silently: it is a query). */
int astro_knob_get_info(int id, struct astro_knob_info *info);

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_KNOBS_H__ */
