/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Performance monitoring counters (StarPU 1.4 API).
 *
 * A counter is a named, typed value kept by the runtime or a plugin, in one
 * of three scopes: global, per worker, or per codelet. A tool picks counters
 * of one scope into a set, wraps the set in a listener with a callback, and
 * attaches the listener: the global sample is refreshed at each submission
 * and at the end of each blocking wait, a worker's sample between two task
 * executions on that worker, a codelet's sample at each submission and after
 * each execution of one of its tasks. Each refresh calls the callback with
 * the sample, locked with the sample's own lock for the length of the call.
 *
 * Counters are registered during starpu_init(): the lists and ids are only
 * meaningful between starpu_init() and starpu_shutdown(). Values are counted
 * while collection is on: starpu_conf.start_perf_counter_collection, or
 * starpu_perf_counter_collection_start(). A program that never asks for
 * collection either way gets it started when it sets its first listener.
 *
 * Bad calls never abort: each prints one line on stderr ("[astrolabe] error:
 * ...") naming the counter and the right call, and returns the documented
 * error value. See also <astrolabe/counters.h> for the plugin side.
 */
#ifndef __STARPU_PERF_MONITORING_H__
#define __STARPU_PERF_MONITORING_H__

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_codelet;

/** What a counter is computed over. The values are those of StarPU 1.4. */
enum starpu_perf_counter_scope
{
	starpu_perf_counter_scope_undefined = 0,   /**< not a scope */
	starpu_perf_counter_scope_global = 2,      /**< the whole runtime instance */
	starpu_perf_counter_scope_per_worker = 4,  /**< one worker thread */
	starpu_perf_counter_scope_per_codelet = 6  /**< the tasks of one codelet */
};

/** The type of a counter's value. */
enum starpu_perf_counter_type
{
	starpu_perf_counter_type_undefined = 0, /**< not a type */
	starpu_perf_counter_type_int32 = 1,     /**< int32_t */
	starpu_perf_counter_type_int64 = 2,     /**< int64_t */
	starpu_perf_counter_type_float = 3,     /**< float */
	starpu_perf_counter_type_double = 4     /**< double */
};

/** A listener: a callback, the set it reports, the argument given at init. Opaque. */
struct starpu_perf_counter_listener;
/** The values of one refresh of a set, valid only inside the listener's callback. Opaque. */
struct starpu_perf_counter_sample;
/** Counters of one scope, each enabled or not. Opaque. */
struct starpu_perf_counter_set;

/**
 * Starts counting (or undoes one starpu_perf_counter_collection_stop()).
 * Calls nest as in StarPU: collection is on while the starts outnumber the
 * stops (plus one when starpu_conf.start_perf_counter_collection is 0).
 * Outside starpu_init()/starpu_shutdown() it prints an error and does nothing.
 */
void starpu_perf_counter_collection_start(void);
/** Stops counting: values keep what they had; listeners are not called until collection starts again. */
void starpu_perf_counter_collection_stop(void);

/** Scope id of "global", "per_worker" or "per_codelet"; -1 (and an error line) for any other name. */
int starpu_perf_counter_scope_name_to_id(const char *name);
/** Name of a scope id; NULL (and an error line) for an unknown one. */
const char *starpu_perf_counter_scope_id_to_name(enum starpu_perf_counter_scope scope);

/** Type id of "int32", "int64", "float" or "double"; -1 (and an error line) for any other name. */
int starpu_perf_counter_type_name_to_id(const char *name);
/** Name of a type id; NULL (and an error line) for an unknown one. */
const char *starpu_perf_counter_type_id_to_name(enum starpu_perf_counter_type type);

/** Number of counters in scope; -1 (and an error line) for an unknown scope, 0 before starpu_init(). */
int starpu_perf_counter_nb(enum starpu_perf_counter_scope scope);
/**
 * Id of the counter called name in scope. -1 with an error line when there
 * is none (the line says when the name belongs to another scope).
 */
int starpu_perf_counter_name_to_id(enum starpu_perf_counter_scope scope, const char *name);
/** Id of the nth (from 0) counter of scope; -1 with an error line when out of range. */
int starpu_perf_counter_nth_to_id(enum starpu_perf_counter_scope scope, int nth);
/** Name of counter id; NULL with an error line for an invalid id. */
const char *starpu_perf_counter_id_to_name(int id);
/** Type (enum starpu_perf_counter_type) of counter id; -1 with an error line for an invalid id. */
int starpu_perf_counter_get_type_id(int id);
/** One-line description of counter id; NULL with an error line for an invalid id. */
const char *starpu_perf_counter_get_help_string(int id);

/** Prints the counters of scope on stdout, one line each: "0x<id>:<name> [<type>] - <help>". */
void starpu_perf_counter_list_avail(enum starpu_perf_counter_scope scope);
/** Prints every scope ("scope: <name>") followed by its counters, as starpu_perf_counter_list_avail(). */
void starpu_perf_counter_list_all_avail(void);

/** A new set of scope with every counter disabled; NULL with an error line for a bad scope or before starpu_init(). */
struct starpu_perf_counter_set *starpu_perf_counter_set_alloc(enum starpu_perf_counter_scope scope);
/**
 * Frees set. Listeners made from it keep working until they are exited; any
 * other later use of set is reported as an error. NULL is ignored.
 */
void starpu_perf_counter_set_free(struct starpu_perf_counter_set *set);

/** Enables counter id in set. An id of another scope, an invalid id or a freed set: error line, set unchanged. */
void starpu_perf_counter_set_enable_id(struct starpu_perf_counter_set *set, int id);
/** Disables counter id in set, with the same checks. */
void starpu_perf_counter_set_disable_id(struct starpu_perf_counter_set *set, int id);

/**
 * A listener reporting set to callback. It does nothing until it is set on
 * the global sample, on workers or on codelets. user_arg is kept in the
 * listener (see astro_perf_counter_listener_get_user_arg()). Returns NULL with
 * an error line for a freed or unknown set, or a NULL callback.
 *
 * The callback receives the listener, the sample (read it with
 * starpu_perf_counter_sample_get_*_value(), only during the call) and a
 * context: NULL for the global scope, a pointer to an int holding the worker
 * id for the per-worker scope, the struct starpu_codelet for the per-codelet
 * scope. A callback must not set, unset or exit listeners.
 */
struct starpu_perf_counter_listener *starpu_perf_counter_listener_init(struct starpu_perf_counter_set *set,
	void (*callback)(struct starpu_perf_counter_listener *listener, struct starpu_perf_counter_sample *sample, void *context),
	void *user_arg);
/** Frees listener; it is first unset from every sample that still uses it (with a warning). NULL is ignored. */
void starpu_perf_counter_listener_exit(struct starpu_perf_counter_listener *listener);

/** Attaches listener (of a global set) to the global sample; replaces the previous one. */
void starpu_perf_counter_set_global_listener(struct starpu_perf_counter_listener *listener);
/** Attaches listener (of a per-worker set) to worker workerid; replaces the previous one. */
void starpu_perf_counter_set_per_worker_listener(unsigned workerid, struct starpu_perf_counter_listener *listener);
/** Attaches listener to every worker. */
void starpu_perf_counter_set_all_per_worker_listeners(struct starpu_perf_counter_listener *listener);
/**
 * Attaches listener (of a per-codelet set) to cl, and starts counting cl's
 * tasks (the per-codelet values count from here). Uses cl->perf_counter_sample
 * and cl->perf_counter_values.
 */
void starpu_perf_counter_set_per_codelet_listener(struct starpu_codelet *cl, struct starpu_perf_counter_listener *listener);

/** Detaches the global listener; waits for a callback in progress. */
void starpu_perf_counter_unset_global_listener(void);
/** Detaches the listener of worker workerid; waits for a callback in progress. */
void starpu_perf_counter_unset_per_worker_listener(unsigned workerid);
/** Detaches the listeners of every worker. */
void starpu_perf_counter_unset_all_per_worker_listeners(void);
/** Detaches cl's listener and stops counting cl's tasks; cl->perf_counter_sample and cl->perf_counter_values become NULL. */
void starpu_perf_counter_unset_per_codelet_listener(struct starpu_codelet *cl);

/**
 * The value of counter id in sample, read from within the listener's callback.
 * Errors print one line per counter and getter for each starpu_init() and
 * return -1 (int getters) or NaN (float getters): a sample read outside its
 * callback, an id of another scope, an invalid id, a counter not enabled in
 * the listener's set. A getter of the other width of the same family (an
 * int64 counter read with the int32 getter, as the handbook's example reads
 * starpu.task.w_total_executed, or a float read as double) returns the value
 * silently when it converts exactly, and prints that line with the error
 * value when it does not fit. A getter of the other family (an integer read
 * as double) prints the line, and returns the value converted when the
 * conversion is exact, otherwise the error value.
 */
int32_t starpu_perf_counter_sample_get_int32_value(struct starpu_perf_counter_sample *sample, const int counter_id);
/** As starpu_perf_counter_sample_get_int32_value(), for int64 counters. */
int64_t starpu_perf_counter_sample_get_int64_value(struct starpu_perf_counter_sample *sample, const int counter_id);
/** As starpu_perf_counter_sample_get_int32_value(), for float counters. */
float starpu_perf_counter_sample_get_float_value(struct starpu_perf_counter_sample *sample, const int counter_id);
/** As starpu_perf_counter_sample_get_int32_value(), for double counters. */
double starpu_perf_counter_sample_get_double_value(struct starpu_perf_counter_sample *sample, const int counter_id);

/* ------------------------------------------------- Astrolabe extensions */

/** The user_arg given to starpu_perf_counter_listener_init() (StarPU keeps it out of reach); NULL with an error line for an invalid listener. */
void *astro_perf_counter_listener_get_user_arg(const struct starpu_perf_counter_listener *listener);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_PERF_MONITORING_H__ */
