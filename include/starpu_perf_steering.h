/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Performance steering knobs of the StarPU API: settings a tool or the
 * application discovers by name at run time and reads or changes while tasks
 * run. Every knob has a scope (global, per worker, per scheduling policy
 * instance) and a type; its id is stable for a given build and registration
 * order. Knobs exist between starpu_init() and starpu_shutdown().
 *
 * Errors (an unknown id, a getter or setter of the wrong type or scope, a
 * value outside the knob's range, an unknown worker or policy) print one line
 * on stderr and leave the knob unchanged; getters then return 0.
 */
#ifndef __STARPU_PERF_STEERING_H__
#define __STARPU_PERF_STEERING_H__

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a knob's value applies to. */
enum starpu_perf_knob_scope
{
	starpu_perf_knob_scope_undefined = 0,
	starpu_perf_knob_scope_global = 1,        /**< the whole runtime instance */
	starpu_perf_knob_scope_per_worker = 3,    /**< one value per worker thread */
	starpu_perf_knob_scope_per_scheduler = 5  /**< one value per scheduling policy instance */
};

/** The type of a knob's value. On/off knobs are int32: 0 is off, any other value on. */
enum starpu_perf_knob_type
{
	starpu_perf_knob_type_undefined = 0,
	starpu_perf_knob_type_int32 = 1,
	starpu_perf_knob_type_int64 = 2,
	starpu_perf_knob_type_float = 3,
	starpu_perf_knob_type_double = 4
};

/** Scope id of "global", "per_worker" or "per_scheduler"; -1 for another name. */
int starpu_perf_knob_scope_name_to_id(const char *name);
/** Name of a scope id; NULL for an unknown id. */
const char *starpu_perf_knob_scope_id_to_name(enum starpu_perf_knob_scope scope);

/** Type id of "int32", "int64", "float" or "double"; -1 for another name. */
int starpu_perf_knob_type_name_to_id(const char *name);
/** Name of a type id; NULL for an unknown id. */
const char *starpu_perf_knob_type_id_to_name(enum starpu_perf_knob_type type);

/** Number of knobs registered in scope. */
int starpu_perf_knob_nb(enum starpu_perf_knob_scope scope);
/** Id of the knob called name in scope; -1 when there is none. */
int starpu_perf_knob_name_to_id(enum starpu_perf_knob_scope scope, const char *name);
/** Id of the nth knob (from 0) of scope; -1 when nth is out of range. */
int starpu_perf_knob_nth_to_id(enum starpu_perf_knob_scope scope, int nth);
/** Name of knob id; NULL for an unknown id. */
const char *starpu_perf_knob_id_to_name(int id);
/** Type (enum starpu_perf_knob_type) of knob id; -1 for an unknown id. */
int starpu_perf_knob_get_type_id(int id);
/** One-line description of knob id; NULL for an unknown id. */
const char *starpu_perf_knob_get_help_string(int id);

/** Prints the knobs of scope on stdout, one per line: "0x<id>:<name> [<type>] - <help>". */
void starpu_perf_knob_list_avail(enum starpu_perf_knob_scope scope);
/** Prints the knobs of every scope, each list after a "scope: <name>" line. */
void starpu_perf_knob_list_all_avail(void);

/** Value of global knob knob_id, which must be an int32 knob. */
int32_t starpu_perf_knob_get_global_int32_value(const int knob_id);
/** Value of global knob knob_id, which must be an int64 knob. */
int64_t starpu_perf_knob_get_global_int64_value(const int knob_id);
/** Value of global knob knob_id, which must be a float knob. */
float starpu_perf_knob_get_global_float_value(const int knob_id);
/** Value of global knob knob_id, which must be a double knob. */
double starpu_perf_knob_get_global_double_value(const int knob_id);

/** Sets global int32 knob knob_id; takes effect at once (its result may show with some latency). */
void starpu_perf_knob_set_global_int32_value(const int knob_id, int32_t new_value);
/** Sets global int64 knob knob_id. */
void starpu_perf_knob_set_global_int64_value(const int knob_id, int64_t new_value);
/** Sets global float knob knob_id. */
void starpu_perf_knob_set_global_float_value(const int knob_id, float new_value);
/** Sets global double knob knob_id. */
void starpu_perf_knob_set_global_double_value(const int knob_id, double new_value);

/** Value of per-worker int32 knob knob_id for worker workerid. */
int32_t starpu_perf_knob_get_per_worker_int32_value(const int knob_id, unsigned workerid);
/** Value of per-worker int64 knob knob_id for worker workerid. */
int64_t starpu_perf_knob_get_per_worker_int64_value(const int knob_id, unsigned workerid);
/** Value of per-worker float knob knob_id for worker workerid. */
float starpu_perf_knob_get_per_worker_float_value(const int knob_id, unsigned workerid);
/** Value of per-worker double knob knob_id for worker workerid. */
double starpu_perf_knob_get_per_worker_double_value(const int knob_id, unsigned workerid);

/** Sets per-worker int32 knob knob_id of worker workerid. */
void starpu_perf_knob_set_per_worker_int32_value(const int knob_id, unsigned workerid, int32_t new_value);
/** Sets per-worker int64 knob knob_id of worker workerid. */
void starpu_perf_knob_set_per_worker_int64_value(const int knob_id, unsigned workerid, int64_t new_value);
/** Sets per-worker float knob knob_id of worker workerid. */
void starpu_perf_knob_set_per_worker_float_value(const int knob_id, unsigned workerid, float new_value);
/** Sets per-worker double knob knob_id of worker workerid. */
void starpu_perf_knob_set_per_worker_double_value(const int knob_id, unsigned workerid, double new_value);

/** Value of per-scheduler int32 knob knob_id for the policy named sched_policy_name. */
int32_t starpu_perf_knob_get_per_scheduler_int32_value(const int knob_id, const char *sched_policy_name);
/** Value of per-scheduler int64 knob knob_id for the policy named sched_policy_name. */
int64_t starpu_perf_knob_get_per_scheduler_int64_value(const int knob_id, const char *sched_policy_name);
/** Value of per-scheduler float knob knob_id for the policy named sched_policy_name. */
float starpu_perf_knob_get_per_scheduler_float_value(const int knob_id, const char *sched_policy_name);
/** Value of per-scheduler double knob knob_id for the policy named sched_policy_name. */
double starpu_perf_knob_get_per_scheduler_double_value(const int knob_id, const char *sched_policy_name);

/** Sets per-scheduler int32 knob knob_id of the policy named sched_policy_name. */
void starpu_perf_knob_set_per_scheduler_int32_value(const int knob_id, const char *sched_policy_name, int32_t new_value);
/** Sets per-scheduler int64 knob knob_id of the policy named sched_policy_name. */
void starpu_perf_knob_set_per_scheduler_int64_value(const int knob_id, const char *sched_policy_name, int64_t new_value);
/** Sets per-scheduler float knob knob_id of the policy named sched_policy_name. */
void starpu_perf_knob_set_per_scheduler_float_value(const int knob_id, const char *sched_policy_name, float new_value);
/** Sets per-scheduler double knob knob_id of the policy named sched_policy_name. */
void starpu_perf_knob_set_per_scheduler_double_value(const int knob_id, const char *sched_policy_name, double new_value);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_PERF_STEERING_H__ */
