/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_fxt_generate_trace() and its options (starpu_fxt.h): the traces a
 * run with STARPU_FXT_TRACE=1 left are converted by starpu_fxt_tool, the
 * converter of the trace recorder (plugins/tools/trace), run as a program:
 * it is there with or without a running runtime, as the call may be made
 * without one (a tool converting traces).
 */
#include "observe/observe.h"

void starpu_fxt_options_init(struct starpu_fxt_options *options)
{
	if (!options) {
		_astro_error("starpu_fxt_options_init: NULL options: give the struct starpu_fxt_options to fill");
		return;
	}
	/* The names starpu_fxt_tool gives its files. */
	static const struct { size_t offset; const char *name; } outputs[] = {
		{ offsetof(struct starpu_fxt_options, out_paje_path), "paje.trace" },
		{ offsetof(struct starpu_fxt_options, distrib_time_path), "distrib.data" },
		{ offsetof(struct starpu_fxt_options, activity_path), "activity.data" },
		{ offsetof(struct starpu_fxt_options, sched_tasks_path), "sched_tasks.rec" },
		{ offsetof(struct starpu_fxt_options, dag_path), "dag.dot" },
		{ offsetof(struct starpu_fxt_options, tasks_path), "tasks.rec" },
		{ offsetof(struct starpu_fxt_options, data_path), "data.rec" },
		{ offsetof(struct starpu_fxt_options, papi_path), "papi.rec" },
		{ offsetof(struct starpu_fxt_options, comms_path), "comms.rec" },
		{ offsetof(struct starpu_fxt_options, number_events_path), "number_events.data" },
		{ offsetof(struct starpu_fxt_options, anim_path), "trace.html" },
		{ offsetof(struct starpu_fxt_options, states_path), "trace.rec" },
	};
	memset(options, 0, sizeof(*options));
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++)
		*(const char **)((char *)options + outputs[i].offset) = outputs[i].name;
	options->file_rank = -1;
}

void starpu_fxt_options_shutdown(struct starpu_fxt_options *options)
{
	if (!options)
		return;
	for (long i = 0; options->dumped_codelets && i < options->dumped_codelets_count; i++)
		free(options->dumped_codelets[i]);
	free(options->dumped_codelets);
	options->dumped_codelets = NULL;
	options->dumped_codelets_count = 0;
}

int starpu_fxt_is_enabled(void)
{
	return astro_env_int("STARPU_FXT_TRACE", 0, 1, 0, NULL) == 1;
}

void starpu_fxt_write_data_trace_in_dir(char *filename_in, char *dir)
{
	_astro_warn("starpu_fxt_write_data_trace_in_dir: not available here: run starpu_fxt_tool -d %s -i %s, then starpu_fxt_data_trace",
		    dir ? dir : ".", filename_in ? filename_in : "<archive>");
}

/* starpu_fxt_tool's command line for options. */
static GPtrArray *tool_argv(const struct starpu_fxt_options *options)
{
	static const struct { size_t offset; const char *flag; } switches[] = {
		{ offsetof(struct starpu_fxt_options, per_task_colour), "-c" },
		{ offsetof(struct starpu_fxt_options, no_events), "-no-events" },
		{ offsetof(struct starpu_fxt_options, no_counter), "-no-counter" },
		{ offsetof(struct starpu_fxt_options, no_bus), "-no-bus" },
		{ offsetof(struct starpu_fxt_options, no_flops), "-no-flops" },
		{ offsetof(struct starpu_fxt_options, no_smooth), "-no-smooth" },
		{ offsetof(struct starpu_fxt_options, no_acquire), "-no-acquire" },
		{ offsetof(struct starpu_fxt_options, memory_states), "-memory-states" },
		{ offsetof(struct starpu_fxt_options, internal), "-internal" },
		{ offsetof(struct starpu_fxt_options, label_deps), "-label-deps" },
	};
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(argv, g_strdup("starpu_fxt_tool"));
	g_ptr_array_add(argv, g_strdup("-d"));
	g_ptr_array_add(argv, g_strdup(options->dir ? options->dir : "."));
	for (size_t i = 0; i < sizeof(switches) / sizeof(switches[0]); i++)
		if (*(const unsigned *)((const char *)options + switches[i].offset))
			g_ptr_array_add(argv, g_strdup(switches[i].flag));
	for (unsigned i = 0; i < options->ninputfiles; i++) {
		g_ptr_array_add(argv, g_strdup("-i"));
		g_ptr_array_add(argv, g_strdup(options->filenames[i]));
	}
	g_ptr_array_add(argv, NULL);
	return argv;
}

void starpu_fxt_generate_trace(struct starpu_fxt_options *options)
{
	if (!options || options->ninputfiles == 0 || options->ninputfiles > STARPU_FXT_MAX_FILES) {
		_astro_error("starpu_fxt_generate_trace: %s: name the traces to convert in options->filenames and their number in "
			     "options->ninputfiles (1 to %d)", !options ? "NULL options" : "no trace given", STARPU_FXT_MAX_FILES);
		return;
	}
	for (unsigned i = 0; i < options->ninputfiles; i++)
		if (!options->filenames[i]) {
			_astro_error("starpu_fxt_generate_trace: options->filenames[%u] is NULL: give the trace's path", i);
			return;
		}
	GPtrArray *argv = tool_argv(options);
	gint status = 0;
	GError *error = NULL;
	gboolean ran = g_spawn_sync(NULL, (gchar **)argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, &status, &error);
	if (!ran)
		_astro_error("starpu_fxt_generate_trace: starpu_fxt_tool cannot be run (%s): add the folder it is installed in to PATH",
			     error ? error->message : "unknown error");
	else if (!g_spawn_check_wait_status(status, NULL))
		_astro_error("starpu_fxt_generate_trace: starpu_fxt_tool failed converting %s (see its message above)", options->filenames[0]);
	g_clear_error(&error);
	g_ptr_array_free(argv, TRUE);
}
