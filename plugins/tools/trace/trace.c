/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trace recorder (STARPU_FXT_TRACE=1): an observer of the kernel's
 * observation hub that writes an OTF2 archive, the FxT-free counterpart of
 * StarPU's prof_file. Each thread that reports a moment gets its own OTF2
 * location and raw buffer the first time (one lock then); afterwards an
 * event is appended to that buffer as a compact record, without any lock
 * and without OTF2 (record_moments.c, raw.h); a full buffer is written to
 * the thread's spill file. At shutdown each thread's records are replayed
 * into its OTF2 event writer, the definitions (strings, regions per task
 * name, locations: record_names.c) are written and the archive's folder is
 * renamed into place (record_archive.c), so a reader never sees a half
 * archive under the final name. record.h lists the recorder's files.
 *
 * This file is the plugin: its settings (STARPU_FXT_TRACE,
 * STARPU_TRACE_BUFFER_SIZE, STARPU_FXT_EVENTS, STARPU_PROF_PAPI_EVENTS), its
 * init and fini, and the conversion at shutdown (STARPU_GENERATE_TRACE=1:
 * starpu_fxt_tool's, convert.c). schema.h says what the archive holds.
 */
#include <astrolabe/plugin.h>
#include <astrolabe/observe.h>
#include <astrolabe/env.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include "convert.h"
#include "record.h"

static bool recording; /* init started a recording, which fini ends */

/* STARPU_FXT_EVENTS: StarPU's category names, separated by ',' or '|'; unknown ones are reported and skipped.
 * Unset: every category but the verbose ones (TASK_VERBOSE: ready, completed, PushingOutput, submission stages;
 * WORKER_VERBOSE: Scheduling), which would double the cost of a task. FetchingInput, the state of a worker waiting
 * for its task's data, comes with WORKER (recorded by default, as in StarPU) or TASK_VERBOSE. */
static unsigned parse_categories(const char *s)
{
	static const struct { const char *name; unsigned cat; } names[] = {
		{ "USER", C_USER }, { "TASK", C_TASK }, { "TASK_VERBOSE", C_TASK_VERBOSE }, { "TASK_VERBOSE_EXTRA", C_TASK_VERBOSE | C_TASK_VERBOSE_EXTRA },
		{ "DATA", C_DATA }, { "DATA_VERBOSE", C_DATA }, { "WORKER", C_WORKER }, { "WORKER_VERBOSE", C_WORKER_VERBOSE },
		{ "DSM", C_DATA }, { "DSM_VERBOSE", C_DATA }, { "SCHED", C_SCHED }, { "SCHED_VERBOSE", C_SCHED },
		{ "LOCK", 0 }, { "LOCK_VERBOSE", 0 }, { "EVENT", C_EVENT }, { "EVENT_VERBOSE", C_EVENT }, { "MPI", C_MPI },
		{ "MPI_VERBOSE", C_MPI }, { "MPI_VERBOSE_EXTRA", C_MPI }, { "HYP", 0 }, { "HYP_VERBOSE", 0 }, { "META", 0 },
	};
	if (!s || !*s)
		return C_DEFAULT;
	unsigned cats = C_META;
	char **parts = g_strsplit_set(s, ",|", -1);
	for (char **p = parts; *p; p++) {
		char *word = g_strstrip(*p);
		if (!*word)
			continue;
		unsigned i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (g_ascii_strcasecmp(word, names[i].name) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			astro_log_error(WHAT, "STARPU_FXT_EVENTS: unknown category '%s' ignored: use USER, TASK, DATA, WORKER, SCHED, EVENT, ...", word);
		else
			cats |= names[i].cat;
	}
	g_strfreev(parts);
	return cats;
}

/* The longest PAPI event name counters_papi_task accepts: PAPI_MAX_STR_LEN - 1 (papi.h, not included here). */
#define TRACE_PAPI_NAME_MAX 127

/* STARPU_PROF_PAPI_EVENTS, separated by blanks or commas as counters_papi_task reads them: the events whose values the
 * tasks carry (NULL-ended; NULL without PAPI). */
static char **papi_events(void)
{
#ifdef STARPU_PAPI
	const char *papi = getenv("STARPU_PROF_PAPI_EVENTS");
	char **names = g_strsplit_set(papi ? papi : "", " ,\t", -1);
	unsigned n = 0;
	bool too_long = false;
	for (char **p = names; *p; p++) {
		too_long |= strlen(*p) > TRACE_PAPI_NAME_MAX;
		if (**p)
			names[n++] = *p;
		else
			g_free(*p);
	}
	names[n] = NULL;
	if (too_long) {	/* counters_papi_task refuses the whole list (and says so): no task counts them */
		for (unsigned i = 0; i < n; i++)
			g_free(names[i]);
		names[0] = NULL;
	}
	return names;
#else
	return NULL;
#endif
}

static int init(void)
{
	if (astro_env_int("STARPU_FXT_TRACE", 0, 1, 0, NULL) == 0)
		return ASTRO_PLUGIN_DECLINE;
	/* STARPU_TRACE_BUFFER_SIZE: MiB of events each thread keeps before writing them to its spill file (default 8,
	 * 1..1024: each thread has two such buffers, one filling while the other is written); OTF2's buffers of the replay keep
	 * as much (at least 2 chunks). */
	unsigned mib = (unsigned)astro_env_int("STARPU_TRACE_BUFFER_SIZE", 1, 1024, 8, "MiB");
	if (record_archive_open(mib) < 0)
		return ASTRO_PLUGIN_DECLINE;
	record_names_new();
	const char *events = astro_env_string("STARPU_FXT_EVENTS", 4096, NULL);
	int ret = record_moments_start(parse_categories(events), papi_events(), (size_t)mib << 20,
				       record_archive_dir(), astro_trace_autostart());
	if (ret < 0) {
		record_archive_discard();
		record_names_free();
		record_moments_free();
		return ret;
	}
	recording = true;
	return 0;
}

/* STARPU_GENERATE_TRACE=1: starpu_fxt_tool's conversion of the archive in dir, with STARPU_GENERATE_TRACE_OPTIONS,
 * into STARPU_FXT_PREFIX when it is set, else into the current directory (as the handbook says: the raw archive
 * goes to the temporary folder by default, the files made from it where the application runs). */
static void generate_trace(const char *dir)
{
	const char *options = astro_env_string("STARPU_GENERATE_TRACE_OPTIONS", 4096, NULL);
	const char *prefix = astro_env_string("STARPU_FXT_PREFIX", ASTRO_ENV_PATH_MAX, NULL);
	char **argv = NULL;
	char *out = g_shell_quote(prefix && *prefix ? record_archive_prefix() : ".");
	char *in = g_shell_quote(dir);
	char *line = g_strdup_printf("starpu_fxt_tool -d %s %s -i %s", out, options ? options : "", in);
	g_free(out);
	g_free(in);
	gint argc = 0;
	if (!g_shell_parse_argv(line, &argc, &argv, NULL)) {
		astro_log_error(WHAT, "STARPU_GENERATE_TRACE_OPTIONS='%s' cannot be parsed: the trace is not converted", options);
	} else if (trace_convert_main(argc, argv) != 0) {
		astro_log_error(WHAT, "STARPU_GENERATE_TRACE: the conversion of %s failed (see above)", dir);
	}
	g_strfreev(argv);
	g_free(line);
}

static void fini(void)
{
	if (!recording)
		return;
	recording = false;
	record_moments_stop();
	const char *dir = record_archive_close();
	record_names_free();
	record_moments_free();
	if (dir && astro_env_int("STARPU_GENERATE_TRACE", 0, 1, 0, NULL) > 0)
		generate_trace(dir);
}

ASTRO_PLUGIN_DEFINE(tool_trace, ASTRO_PLUGIN_TOOL, "records an OTF2 execution trace (STARPU_FXT_TRACE=1; starpu_fxt_tool converts it)", init, fini);
