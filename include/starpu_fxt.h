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
#include <starpu_perfmodel.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Options of an offline FxT trace conversion (kept for source compatibility). */
struct starpu_fxt_codelet_event
{
	char symbol[2048];
	int workerid;
	char perfmodel_archname[256];
	uint32_t hash;
	size_t size;
	float time;
};

#ifndef STARPU_FXT_MAX_FILES
/** How many trace files starpu_fxt_options::filenames holds. */
#define STARPU_FXT_MAX_FILES 64
#endif

/** Clock synchronisation of a rank's trace: the offsets to apply to its times (kept for source compatibility). */
struct starpu_fxt_mpi_offset
{
	uint64_t local_time_start;
	int64_t offset_start;
	uint64_t local_time_end;
	int64_t offset_end;
	int nb_barriers;
};

/** What starpu_fxt_generate_trace() converts, and how (starpu_fxt_tool's options). */
struct starpu_fxt_options
{
	unsigned per_task_colour;
	unsigned no_events;
	unsigned no_counter;
	unsigned no_bus;
	unsigned no_flops;
	unsigned ninputfiles;
	unsigned no_smooth;
	unsigned no_acquire;
	unsigned memory_states;
	unsigned internal;
	unsigned label_deps;
	char *filenames[STARPU_FXT_MAX_FILES];
	char *out_paje_path;
	char *distrib_time_path;
	char *activity_path;
	char *sched_tasks_path;
	char *dag_path;
	char *tasks_path;
	char *data_path;
	char *papi_path;
	char *comms_path;
	char *number_events_path;
	char *anim_path;
	char *states_path;
	char *dir;
	char worker_names[STARPU_NMAXWORKERS][256];
	int nworkers;
	struct starpu_perfmodel_arch worker_archtypes[STARPU_NMAXWORKERS];
	char *file_prefix;
	struct starpu_fxt_mpi_offset file_offset;
	int file_rank;
	struct starpu_fxt_codelet_event **dumped_codelets;
	long dumped_codelets_count;
};

/** Fills options with the defaults: no input file, every output on, the files named as
 * starpu_fxt_tool names them (paje.trace, dag.dot, tasks.rec...) in the current folder. */
void starpu_fxt_options_init(struct starpu_fxt_options *options);
/** Frees what starpu_fxt_generate_trace() left in options (the dumped codelets). */
void starpu_fxt_options_shutdown(struct starpu_fxt_options *options);
/** Converts the traces named in options->filenames (the archives a run with STARPU_FXT_TRACE=1
 * left) by running starpu_fxt_tool, found in PATH, into options->dir (the current folder when
 * NULL); the output files take starpu_fxt_tool's names, and options->no_events... its switches. A
 * missing input, a missing starpu_fxt_tool or a failed conversion is said. */
void starpu_fxt_generate_trace(struct starpu_fxt_options *options);
/** 1 when STARPU_FXT_TRACE asks for a trace (the trace recorder then records one), 0 otherwise. */
int starpu_fxt_is_enabled(void);
/** As starpu_fxt_write_data_trace(), for the conversion's files in dir; not available here (said). */
void starpu_fxt_write_data_trace_in_dir(char *filename_in, char *dir);

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
