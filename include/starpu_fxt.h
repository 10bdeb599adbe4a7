/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * FxT tracing control of the StarPU API. Astrolabe records traces through its
 * observation path and tools (STARPU_PROF_TOOL), not FxT: these calls are
 * accepted so programs written for StarPU build and run unchanged. */
#ifndef __STARPU_FXT_H__
#define __STARPU_FXT_H__

#include <stddef.h>
#include <stdint.h>
#include <starpu_config.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Options of an offline FxT trace conversion (kept for source compatibility). */
struct starpu_fxt_codelet_event
{
	char symbol[256];
	int workerid;
	char perfmodel_archname[256];
	uint32_t hash;
	size_t size;
	float time;
};

/** Starts recording the FxT trace (StarPU's STARPU_FXT_START_PROFILING); no FxT trace is produced here. */
void starpu_fxt_start_profiling(void);
/** Stops recording the FxT trace; no FxT trace is produced here. */
void starpu_fxt_stop_profiling(void);
/** Chooses whether recording starts with starpu_init(); no FxT trace is produced here. */
void starpu_fxt_autostart_profiling(int autostart);
/** Writes the FxT trace recorded so far; nothing to write here. */
void starpu_fxt_write_data_trace(char *filename_in);
/** Adds an application event code to the trace; ignored without FxT. */
void starpu_fxt_trace_user_event(unsigned long code);
/** Adds an application event string to the trace; ignored without FxT. */
void starpu_fxt_trace_user_event_string(const char *s);
/** Adds an application meta-event string to the trace; ignored without FxT. */
void starpu_fxt_trace_user_meta_string(const char *s);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_FXT_H__ */
