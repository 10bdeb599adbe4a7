/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The dispatcher of the converter's output formats (astrolabe/trace_format.h):
 * it knows formats only through the registry (astro_trace_format_nth()), the
 * built-in ones (builtin_formats.c, registered by the converter first) as
 * those of the format_* plugins, which the kernel's loader finds in the
 * plugin directories (the built-in one, STARPU_PLUGIN_PATH) when the
 * converter starts, in starpu_fxt_tool as in starpu_shutdown()
 * (STARPU_GENERATE_TRACE=1). Each format on gets the converter's stream
 * through one call per event; a format that fails is told, by name, and the
 * others go on.
 */
#include <errno.h>
#include <string.h>
#include <astrolabe/plugin.h>
#include "format_common.h"
#include "formats.h"

#define TOOL "starpu_fxt_tool"

int trace_formats_option(struct trace_formats *f, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	if (strcmp(a, "-formats") == 0) {
		f->list = true;
		return 1;
	}
	if (strcmp(a, "-no-format") != 0 && strcmp(a, "-format") != 0)
		return 0;
	if (*i + 1 == argc) {
		astro_log_error(TOOL, "%s needs a format's name (starpu_fxt_tool -formats lists them)", a);
		return -1;
	}
	GPtrArray **names = a[1] == 'n' ? &f->names_off : &f->names_on;
	if (!*names)
		*names = g_ptr_array_new();
	g_ptr_array_add(*names, argv[++*i]);
	return 1;
}

static bool named(const GPtrArray *names, const char *name)
{
	for (guint i = 0; names && i < names->len; i++)
		if (strcmp(g_ptr_array_index(names, i), name) == 0)
			return true;
	return false;
}

/* 0 when every name given is a format's, else 1 (told, with the names there are). */
static int check_names(const GPtrArray *names, const char *option)
{
	for (guint i = 0; names && i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		bool known = false;
		for (unsigned n = 0; !known && astro_trace_format_nth(n); n++)
			known = strcmp(astro_trace_format_nth(n)->name, name) == 0;
		if (known)
			continue;
		GString *all = g_string_new(NULL);
		for (unsigned n = 0; astro_trace_format_nth(n); n++)
			g_string_append_printf(all, "%s%s", n ? ", " : "", astro_trace_format_nth(n)->name);
		astro_log_error(TOOL, "%s %s: no such format (the formats are %s)", option, name, all->str);
		g_string_free(all, TRUE);
		return 1;
	}
	return 0;
}

int trace_formats_select(struct trace_formats *f)
{
	astro_trace_formats_load();
	if (check_names(f->names_off, "-no-format") || check_names(f->names_on, "-format"))
		return 1;
	f->on = g_ptr_array_new();
	for (unsigned n = 0; astro_trace_format_nth(n); n++) {
		const struct astro_trace_format *format = astro_trace_format_nth(n);
		bool on = named(f->names_on, format->name) || !(format->flags & ASTRO_TRACE_FORMAT_OFF_BY_DEFAULT);
		if (f->only ? strcmp(format->name, f->only) == 0 : on && !named(f->names_off, format->name))
			g_ptr_array_add(f->on, (gpointer)format);
	}
	if (f->only && !f->on->len) {
		astro_log_error(TOOL, "no trace format is named %s: register it before converting", f->only);
		return 1;
	}
	return 0;
}

void trace_formats_print(const struct trace_formats *f, FILE *out)
{
	fprintf(out, "The trace formats of this converter (-no-format NAME turns one off, -format NAME one that is off on):\n");
	for (unsigned n = 0; astro_trace_format_nth(n); n++) {
		const struct astro_trace_format *format = astro_trace_format_nth(n);
		bool on = f->on && g_ptr_array_find(f->on, format, NULL);
		fprintf(out, "%-16s %-3s %s (%s)\n", format->name, on ? "on" : "off", format->description ? format->description : "",
			astro_trace_format_origin(n));
	}
}

/* Where format comes from: "built in" or its plugin's file. */
static const char *origin_of(const struct astro_trace_format *format)
{
	for (unsigned n = 0; astro_trace_format_nth(n); n++)
		if (astro_trace_format_nth(n) == format)
			return astro_trace_format_origin(n);
	return "built in";
}

/* A format that began, and its state: one entry of struct trace_formats' with[]. */
struct trace_format_call
{
	const struct astro_trace_format *format;
	void *state;
};

/* Adds format (its state) to the list of callback cb when it has it. */
static void with_callback(struct trace_formats *f, enum trace_format_callback cb, bool has, const struct astro_trace_format *format,
			  void *state)
{
	if (!f->with[cb])
		f->with[cb] = g_array_new(FALSE, FALSE, sizeof(struct trace_format_call));
	if (has)
		g_array_append_val(f->with[cb], ((struct trace_format_call){ format, state }));
}

void trace_formats_begin(struct trace_formats *f, const struct astro_trace_format_options *options)
{
	f->states = g_ptr_array_new();
	for (guint i = 0; i < f->on->len; i++) {
		const struct astro_trace_format *format = g_ptr_array_index(f->on, i);
		errno = 0;
		void *state = format->begin(options);
		if (!state) {
			int err = errno;
			astro_log_error(TOOL, "trace format '%s' (%s) cannot write in %s (%s): it is left out, the other outputs are written",
					format->name, origin_of(format), *trace_output_dir ? trace_output_dir : "the current folder",
					err ? strerror(err) : "its begin failed");
			f->failed = true;
		}
		g_ptr_array_add(f->states, state);
		if (!state)
			continue;
		with_callback(f, TRACE_FORMAT_PROCESS, format->process, format, state);
		with_callback(f, TRACE_FORMAT_LOCATION, format->location, format, state);
		with_callback(f, TRACE_FORMAT_STATE, format->state, format, state);
		with_callback(f, TRACE_FORMAT_COUNTER, format->counter, format, state);
		with_callback(f, TRACE_FORMAT_DEPENDENCY, format->dependency, format, state);
		with_callback(f, TRACE_FORMAT_INSTANT, format->instant, format, state);
		with_callback(f, TRACE_FORMAT_TASK, format->task, format, state);
		with_callback(f, TRACE_FORMAT_DATA, format->data, format, state);
		with_callback(f, TRACE_FORMAT_JOB, format->job, format, state);
		with_callback(f, TRACE_FORMAT_EVENT, format->event, format, state);
		with_callback(f, TRACE_FORMAT_MESSAGE, format->message, format, state);
	}
}

/* Calls callback cb (CB in with[]) of each format that began and has it, with arg. */
#define EACH(f, cb, CB, arg)                                                                           \
	{                                                                                              \
		const GArray *with_ = (f)->with[CB];                                                   \
		for (guint i_ = 0; with_ && i_ < with_->len; i_++) {                                   \
			const struct trace_format_call *call_ = &g_array_index(with_, struct trace_format_call, i_); \
			call_->format->cb(call_->state, arg);                                          \
		}                                                                                      \
	}

void trace_formats_process(struct trace_formats *f, const struct astro_trace_process *p) EACH(f, process, TRACE_FORMAT_PROCESS, p)
void trace_formats_location(struct trace_formats *f, const struct astro_trace_location *l) EACH(f, location, TRACE_FORMAT_LOCATION, l)
void trace_formats_state(struct trace_formats *f, const struct astro_trace_state *s) EACH(f, state, TRACE_FORMAT_STATE, s)
void trace_formats_counter(struct trace_formats *f, const struct astro_trace_counter *c) EACH(f, counter, TRACE_FORMAT_COUNTER, c)
void trace_formats_dependency(struct trace_formats *f, const struct astro_trace_dependency *d)
	EACH(f, dependency, TRACE_FORMAT_DEPENDENCY, d)
void trace_formats_instant(struct trace_formats *f, const struct astro_trace_instant *i) EACH(f, instant, TRACE_FORMAT_INSTANT, i)
void trace_formats_task(struct trace_formats *f, const struct astro_trace_task *t) EACH(f, task, TRACE_FORMAT_TASK, t)
void trace_formats_data(struct trace_formats *f, const struct astro_trace_data *d) EACH(f, data, TRACE_FORMAT_DATA, d)
void trace_formats_job(struct trace_formats *f, const struct astro_trace_job *j) EACH(f, job, TRACE_FORMAT_JOB, j)
void trace_formats_event(struct trace_formats *f, const struct astro_trace_event *e) EACH(f, event, TRACE_FORMAT_EVENT, e)
void trace_formats_message(struct trace_formats *f, const struct astro_trace_message *m) EACH(f, message, TRACE_FORMAT_MESSAGE, m)

bool trace_formats_want_tasks(const struct trace_formats *f)
{
	return f->with[TRACE_FORMAT_TASK] && f->with[TRACE_FORMAT_TASK]->len;
}

void trace_formats_end(struct trace_formats *f)
{
	for (guint i = 0; i < f->on->len; i++) {
		const struct astro_trace_format *format = g_ptr_array_index(f->on, i);
		void *state = g_ptr_array_index(f->states, i);
		int ret = state ? format->end(state) : 0;
		if (ret < 0) {
			astro_log_error(TOOL, "writing trace format '%s' (%s) failed (%s): its output is incomplete (disk full?)", format->name,
					origin_of(format), strerror(-ret));
			f->failed = true;
		}
	}
}

void trace_formats_free(struct trace_formats *f)
{
	if (f->names_off)
		g_ptr_array_free(f->names_off, TRUE);
	if (f->names_on)
		g_ptr_array_free(f->names_on, TRUE);
	if (f->on)
		g_ptr_array_free(f->on, TRUE);
	if (f->states)
		g_ptr_array_free(f->states, TRUE);
	for (int cb = 0; cb < TRACE_FORMAT_NCALLBACKS; cb++)
		if (f->with[cb])
			g_array_free(f->with[cb], TRUE);
	memset(f, 0, sizeof(*f));
}
