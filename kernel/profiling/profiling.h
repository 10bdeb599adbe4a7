/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The profiling room: observers of the hub above everything they observe:
 * on-line performance feedback (profiling.c) and the profiling-tool
 * dispatcher (prof_tool.c).
 */
#ifndef __ASTRO_PROFILING_H__
#define __ASTRO_PROFILING_H__

#include "run/run.h"

/* On-line feedback (profiling.c): subscribes to the moments at init, prints the summaries at shutdown. */
void _astro_profiling_init(void);
/* STARPU_MEMORY_STATS: handles registered meanwhile get per-node access counts, listed by starpu_data_display_memory_stats(). */
extern bool _astro_memory_stats_enabled;


/* Profiling tools (prof_tool.c): loaded after the plugins, unloaded once the workers stopped. */
void _astro_prof_tool_load(void);
void _astro_prof_tool_unload(void);


/* ------------------------------------------ between the feedback's files */

/* profiling.c: the readers' lock (never on the task path); nanoseconds since starpu_init() and
 * their timespec; a summary's stream (stderr, or the file the variable names), closed with the check of
 * its writes; is a variable set to a positive number? */
extern starpu_pthread_mutex_t _astro_prof_reader_lock;
int64_t _astro_prof_now_ns(void);
struct timespec _astro_prof_timespec_of(int64_t ns);
FILE *_astro_prof_summary_open(const char *file_env);
void _astro_prof_summary_close(FILE *f, const char *file_env);
bool _astro_prof_env_positive(const char *name);
/* buses.c: the buses forgotten (a new run), one transfer counted, their summary. */
void _astro_prof_buses_reset(void);
/* Profiling (re)starts at now: what each bus moved so far is its base. */
void _astro_prof_buses_rebase(int64_t now);
void _astro_prof_bus_transfer(unsigned src, unsigned dst, size_t bytes);
void _astro_prof_bus_summary(FILE *out);
/* data_stats.c: the counts forgotten (a new run); an allocation on node; a handle's access counts
 * made and freed (STARPU_MEMORY_STATS); a task's data fetched (transfers into its node since its
 * pop: _astro_prof_fetch_transfers); the displays. */
void _astro_prof_data_reset(void);
void _astro_prof_alloc_counted(unsigned node);
void _astro_prof_memory_stats_register(starpu_data_handle_t handle);
void _astro_prof_memory_stats_unregister(starpu_data_handle_t handle);
extern _ASTRO_TLS unsigned _astro_prof_fetch_transfers;
void _astro_prof_data_fetched(const struct astro_event *ev);
void _astro_prof_msi_display(FILE *out);
void _astro_prof_alloc_display(FILE *out);
void _astro_prof_memory_stats_display(FILE *out);

#endif /* __ASTRO_PROFILING_H__ */
