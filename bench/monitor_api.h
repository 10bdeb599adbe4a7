/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which monitoring APIs the StarPU headers in use provide, decided from the
 * headers alone (no configure test), so the same sources build against
 * Astrolabe, StarPU 1.4 and StarPU 1.3 (which has neither API).
 *   BENCH_HAVE_PERF_MONITORING: starpu_perf_counter_* (StarPU >= 1.4)
 *   BENCH_HAVE_PROF_TOOL: starpu_prof_tool_* (StarPU >= 1.4)
 * Define BENCH_NO_PERF_MONITORING / BENCH_NO_PROF_TOOL to leave one out.
 */
#ifndef BENCH_MONITOR_API_H
#define BENCH_MONITOR_API_H

#include <starpu.h>

/* StarPU 1.4's starpu.h includes both headers; elsewhere they may exist on their own. */
#if defined(__has_include)
#  if !defined(BENCH_NO_PERF_MONITORING) && __has_include(<starpu_perf_monitoring.h>)
#    include <starpu_perf_monitoring.h>
#    define BENCH_HAVE_PERF_MONITORING 1
#  endif
#  if !defined(BENCH_NO_PROF_TOOL) && __has_include(<starpu_profiling_tool.h>)
#    include <starpu_profiling_tool.h>
#    define BENCH_HAVE_PROF_TOOL 1
#  endif
#endif
#if !defined(BENCH_HAVE_PERF_MONITORING) && !defined(BENCH_NO_PERF_MONITORING) && defined(__STARPU_PERF_MONITORING_H__)
#  define BENCH_HAVE_PERF_MONITORING 1
#endif
#if !defined(BENCH_HAVE_PROF_TOOL) && !defined(BENCH_NO_PROF_TOOL) && defined(__STARPU_PROFILING_TOOL_H__)
#  define BENCH_HAVE_PROF_TOOL 1
#endif

#ifdef BENCH_HAVE_PERF_MONITORING
/*
 * Weak references: a library whose headers declare the API but which does
 * not provide it (yet) leaves these NULL, and the settings that need them
 * are skipped instead of the program failing to link.
 */
#pragma weak starpu_perf_counter_collection_start
#pragma weak starpu_perf_counter_collection_stop
#pragma weak starpu_perf_counter_scope_id_to_name
#pragma weak starpu_perf_counter_nb
#pragma weak starpu_perf_counter_nth_to_id
#pragma weak starpu_perf_counter_set_alloc
#pragma weak starpu_perf_counter_set_free
#pragma weak starpu_perf_counter_set_enable_id
#pragma weak starpu_perf_counter_listener_init
#pragma weak starpu_perf_counter_listener_exit
#pragma weak starpu_perf_counter_set_global_listener
#pragma weak starpu_perf_counter_set_all_per_worker_listeners
#pragma weak starpu_perf_counter_set_per_codelet_listener
#pragma weak starpu_perf_counter_unset_global_listener
#pragma weak starpu_perf_counter_unset_all_per_worker_listeners
#pragma weak starpu_perf_counter_unset_per_codelet_listener

/** The library provides counter collection. */
static inline int bench_have_counters(void)
{
	return starpu_perf_counter_collection_start && starpu_perf_counter_collection_stop;
}

/** The library provides everything the listeners setting calls. */
static inline int bench_have_listeners(void)
{
	return bench_have_counters() && starpu_perf_counter_scope_id_to_name && starpu_perf_counter_nb
		&& starpu_perf_counter_nth_to_id && starpu_perf_counter_set_alloc && starpu_perf_counter_set_free
		&& starpu_perf_counter_set_enable_id && starpu_perf_counter_listener_init
		&& starpu_perf_counter_listener_exit && starpu_perf_counter_set_global_listener
		&& starpu_perf_counter_set_all_per_worker_listeners && starpu_perf_counter_set_per_codelet_listener
		&& starpu_perf_counter_unset_global_listener && starpu_perf_counter_unset_all_per_worker_listeners
		&& starpu_perf_counter_unset_per_codelet_listener;
}
#else
static inline int bench_have_counters(void) { return 0; }
static inline int bench_have_listeners(void) { return 0; }
#endif

#endif /* BENCH_MONITOR_API_H */
