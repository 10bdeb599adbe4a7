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


#endif /* __ASTRO_PROFILING_H__ */
