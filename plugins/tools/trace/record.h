/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trace recorder's parts, shared by its files (STARPU_FXT_TRACE=1),
 * lowest first:
 *   record_names.c    the archive's definitions: the names the run meets
 *                     (strings, regions, sampled counters) numbered under a
 *                     lock, written at shutdown with the locations
 *   record_moments.c  the task path: each moment the observation hub
 *                     reports, encoded as raw records in its thread's buffer
 *                     (raw.h); the threads' locations; the subscription
 *   record_archive.c  the OTF2 archive: its folder, OTF2's callbacks, the
 *                     replay of the records at shutdown, the rename into
 *                     place
 *   trace.c           the plugin: its settings (the environment), init and
 *                     fini, the conversion at shutdown
 * No file calls one above it.
 */
#ifndef __ASTRO_TRACE_RECORD_H__
#define __ASTRO_TRACE_RECORD_H__

#include <otf2/otf2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "raw.h"

#define WHAT "trace"
#define MAX_DEPTH 16
#define CACHE_SIZE 64
#define MAX_PENDING_TAG_DEPS 4

/* STARPU_FXT_EVENTS categories; META is always recorded. */
enum category
{
	C_META = 1, C_TASK = 2, C_SCHED = 4, C_WORKER = 8, C_DATA = 16, C_USER = 32, C_EVENT = 64,
	/* Not recorded unless named: they double the events of a task (ready, completed, fetching input; scheduling). */
	C_TASK_VERBOSE = 128, C_WORKER_VERBOSE = 256,
	C_MPI = 512,
	/* TASK_VERBOSE_EXTRA: TASK_VERBOSE and, for each handle of a task that starts, the NUMA nodes holding it. */
	C_TASK_VERBOSE_EXTRA = 1024,
};
#define C_DEFAULT (C_META | C_TASK | C_SCHED | C_WORKER | C_DATA | C_USER | C_EVENT | C_MPI)

/* One per thread that reported a moment in this session; only that thread writes it until shutdown. */
struct location
{
	struct raw_writer raw;      /* this thread's events until shutdown (raw.h) */
	uint64_t id;
	uint64_t nevents;           /* counted when replayed into OTF2 */
	uint64_t last_ts;
	uint64_t first_ts;
	unsigned depth;
	uint32_t stack[MAX_DEPTH];
	/* The shortcuts of schema.h: what the reader also knows from this location's previous events. */
	uint64_t last_pop;          /* job of the last pop recorded here (valid when popped) */
	bool popped;
	bool submitted;             /* prev_name/prev_model are those of a submit recorded here */
	const char *prev_name, *prev_model;
	bool in_task;               /* task_region is open: the task whose end comes next */
	uint32_t task_region;
	/* Tag dependencies not written yet: the next submit may be their tag's task (schema.h). */
	unsigned npending;
	struct pending_tag_dep { uint64_t ts, child, father; } pending[MAX_PENDING_TAG_DEPS];
	struct cache_entry { const char *key; uint32_t value; } caches[4][CACHE_SIZE];
	char name[64];
	long tid;                   /* the thread's OS id (gettid) */
	int bindid;                 /* a worker's logical CPU (starpu_worker_get_bindid), -1 for the others */
	struct location *next;
};

/* record_names.c: the names of the archive's definitions, numbered in the order met. */
/* The kinds of names a thread keeps in its caches (struct location's caches[kind]). */
enum record_name_kind { NAME_STRING, NAME_TASK_REGION, NAME_USER_STATE_REGION, NAME_METRIC };
/* Makes the tables; the runtime's states take the first regions, in schema order (schema.h). */
void record_names_new(void);
void record_names_free(void);
/* The number of string s. */
uint32_t record_intern(const char *s);
/* The number of name s of kind: a string, a task's or an application state's region, a sampled counter's metric (its
 * unit looked up in the counters' registry). What a thread's cache asks when it does not know s. */
uint32_t record_name(enum record_name_kind kind, const char *s);
/* Writes the definitions: the clock (the locations' first and last dates), the strings (with the marks of an
 * incomplete archive and of a StarPU-MPI process, when given: NULL when not), the parameters and attributes of
 * schema.h, the locations with their properties, the regions and the metrics. */
void record_names_write(OTF2_GlobalDefWriter *defs, const struct location *locations, bool incomplete, const char *mpi_mark);

/* record_moments.c: the moments recorded. */
/* Subscribes to the observation hub for the moments of categories (all of them when autostart, else META's until
 * starpu_fxt_start_profiling()), each thread's records in a buffer of buffer_bytes spilling to <spill_dir>/raw.<location>;
 * papi_names (NULL-ended, kept until record_moments_free()): the PAPI events whose values tasks carry. 0, or the
 * subscription's error. */
int record_moments_start(unsigned categories, char **papi_names, size_t buffer_bytes, const char *spill_dir, bool autostart);
/* Unsubscribes (the workers have stopped) and writes what each location holds back (tag dependencies). */
void record_moments_stop(void);
/* The locations of the session (a list, through next). */
struct location *record_locations(void);
/* StarPU-MPI's rank, size and clock offset to rank 0's (ASTRO_MOMENT_MPI_INIT): false when not an MPI process. */
bool record_mpi(int *rank, int *size, int64_t *offset_ns);
/* Frees the locations (their records not replayed are dropped) and the PAPI names. */
void record_moments_free(void);

/* record_archive.c: the OTF2 archive. */
/* Makes the archive's temporary folder under STARPU_FXT_PREFIX and opens the OTF2 archive there, its event buffers
 * keeping buffer_mib MiB (at least 2 chunks). 0, or -1 (told: no trace is recorded). */
int record_archive_open(unsigned buffer_mib);
/* The temporary folder the archive is built in (the threads' spill files go there too). */
const char *record_archive_dir(void);
/* The folder the archive goes to (STARPU_FXT_PREFIX, else TMPDIR, else /tmp). */
const char *record_archive_prefix(void);
/* Closes the archive and removes its folder (the recording could not start). */
void record_archive_discard(void);
/* Replays each location's records into the archive, writes the definitions, closes it and renames its folder into
 * place (replacing an older one); tells a failure. Returns the archive's folder when it is there, else NULL. */
const char *record_archive_close(void);

#endif
