/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_fxt_tool: converts the recorder's OTF2 archive into StarPU's trace
 * files, with StarPU's field names, order and number formats (see
 * ../shared/notes/traces.md in the project's notes). It writes
 * number_events.data (-number-events) itself, and hands the decoded stream
 * to the trace formats (formats.c, astrolabe/trace_format.h), which write
 * the others: StarPU's paje.trace (paje.c), tasks.rec (tasks_rec.c),
 * data.rec (data_rec.c), distrib.data (distrib.c), trace.rec (trace_rec.c),
 * dag.dot (dag.c), sched_tasks.rec (sched_tasks_rec.c), papi.rec when the
 * run counted PAPI events (papi_rec.c), comms.rec (comms_rec.c),
 * activity.data (activity.c), trace.html (trace_html.c), the
 * Chrome/Perfetto trace.json (json.c), and the format plugins' outputs.
 *
 * OTF2's global reader hands the events over in time order, merged across
 * locations, so every file is written as the events come: the time-ordered
 * ones (the formats' states, counters, instants and events)
 * event by event, dag.dot's edges when a dependency is declared, a task's
 * tasks.rec record, dag.dot node and flow starts when it ends (its flow ends
 * when its successors start), a handle's data.rec record when it is
 * unregistered, the end of each archive (the formats' ARCHIVE_END event).
 * What stays in memory is what is still to come: the tasks submitted and
 * not ended yet, the handles registered, the dependencies between live
 * tasks; and the StarPU-MPI messages (a send meets its receive only once
 * every archive was read: the formats' message, comms.rec, and paje.trace's
 * links, at the end).
 *
 * This file runs a conversion: the command line (convert_options.c), the
 * formats (builtin_formats.c, then formats.c loads the plugins' and
 * dispatches), each archive in rank order (convert_mpi.c) read with OTF2:
 * its definitions (convert_defs.c), then its events (convert_events.c) into
 * the formats' stream (convert_stream.c) through what stays in memory
 * (convert_tables.c); converter.h lists the files and what each offers.
 *
 * The outputs are written into a hidden folder beside their place and moved
 * there only once the whole conversion succeeded: a truncated or corrupt
 * archive never leaves a partial file under an output's name, nor replaces
 * the outputs of an earlier conversion. What a failed conversion wrote after
 * it read events is kept as NAME.incomplete (said).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "builtin_formats.h"
#include "convert.h"
#include "converter.h"
#include "format_common.h"

/* Where output name goes: in the -d directory, else here (to be g_free()d). */
static char *output_path(const struct converter *c, const char *name)
{
	return c->opt.dir ? g_build_filename(c->opt.dir, name, NULL) : g_strdup(name);
}

static FILE *open_output(struct converter *c, const char *name)
{
	char *path = output_path(c, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		convert_error("cannot write %s (%s): check the -d directory", path, strerror(errno));
		c->failed = true;
		f = fopen("/dev/null", "w");
	}
	g_free(path);
	return f;
}

static void close_output(struct converter *c, FILE *f, const char *name)
{
	if (ferror(f) | (fclose(f) != 0)) {
		convert_error("writing %s%s%s failed (disk full?)", c->opt.dir ? c->opt.dir : "", c->opt.dir ? "/" : "", name);
		c->failed = true;
	}
}

/* The definitions of the archive reader opened (strings, regions, locations...). OTF2_SUCCESS or its error. */
static OTF2_ErrorCode read_definitions(struct converter *c, OTF2_Reader *reader)
{
	OTF2_GlobalDefReader *defs = OTF2_Reader_GetGlobalDefReader(reader);
	if (!defs)
		return OTF2_ERROR_FILE_INTERACTION;
	OTF2_GlobalDefReaderCallbacks *dcb = OTF2_GlobalDefReaderCallbacks_New();
	convert_definitions_callbacks(dcb);
	OTF2_Reader_RegisterGlobalDefCallbacks(reader, defs, dcb, c);
	OTF2_GlobalDefReaderCallbacks_Delete(dcb);
	uint64_t ndefs = 0;
	OTF2_ErrorCode status = OTF2_Reader_ReadAllGlobalDefinitions(reader, defs, &ndefs);
	OTF2_Reader_CloseGlobalDefReader(reader, defs);
	return status;
}

/* Opens the event files of every location the definitions named. */
static OTF2_ErrorCode open_event_files(struct converter *c, OTF2_Reader *reader)
{
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, c->locations);
	while (g_hash_table_iter_next(&it, &k, &v))
		OTF2_Reader_SelectLocation(reader, ((struct location *)v)->id);
	OTF2_ErrorCode status = OTF2_Reader_OpenEvtFiles(reader);
	if (status != OTF2_SUCCESS)
		return status;
	g_hash_table_iter_init(&it, c->locations);
	while (g_hash_table_iter_next(&it, &k, &v))
		OTF2_Reader_GetEvtReader(reader, ((struct location *)v)->id);
	return OTF2_SUCCESS;
}

/* The archive and its locations, to the formats, before its events. */
static void begin_process(struct converter *c)
{
	struct astro_trace_process process = { .rank = c->rank, .input = c->input, .prefix = c->pre, .multi = c->multi, .mpi = c->mpi };
	trace_formats_process(&c->opt.formats, &process);
	GPtrArray *locs = convert_sorted_locations(c);
	for (guint i = 0; i < locs->len; i++) {
		struct location *l = g_ptr_array_index(locs, i);
		struct astro_trace_location where = convert_public_location(l);
		trace_formats_location(&c->opt.formats, &where);
	}
	g_ptr_array_free(locs, TRUE);
}

/* Every event of the archive, in time order across its locations, into the formats' stream. */
static OTF2_ErrorCode read_events(struct converter *c, OTF2_Reader *reader)
{
	OTF2_GlobalEvtReader *events = OTF2_Reader_GetGlobalEvtReader(reader);
	if (!events)
		return OTF2_ERROR_FILE_INTERACTION;
	OTF2_GlobalEvtReaderCallbacks *ecb = OTF2_GlobalEvtReaderCallbacks_New();
	convert_events_callbacks(ecb);
	OTF2_Reader_RegisterGlobalEvtCallbacks(reader, events, ecb, c);
	OTF2_GlobalEvtReaderCallbacks_Delete(ecb);
	uint64_t nevents = 0;
	OTF2_ErrorCode status = OTF2_Reader_ReadAllGlobalEvents(reader, events, &nevents);
	OTF2_Reader_CloseGlobalEvtReader(reader, events);
	return status;
}

/* Converts the archive c->input: 0, or 1 (told). */
static int convert_archive(struct converter *c)
{
	if (convert_check_input(c->input))
		return 1;
	char *anchor = convert_anchor(c->input);
	OTF2_Reader *reader = OTF2_Reader_Open(anchor);
	if (!reader) {
		convert_error("%s: cannot open the OTF2 archive: it is truncated or corrupt (%s)", anchor, convert_otf2_error());
		g_free(anchor);
		return 1;
	}
	OTF2_Reader_SetSerialCollectiveCallbacks(reader);
	OTF2_ErrorCode status;
	uint64_t nlocations = 0;
	if ((status = OTF2_Reader_GetNumberOfLocations(reader, &nlocations)) != OTF2_SUCCESS)
		goto corrupt;
	if ((status = read_definitions(c, reader)) != OTF2_SUCCESS)
		goto corrupt;
	if (c->incomplete)
		fprintf(stderr, "[astrolabe] %s: warning: %s is marked incomplete (a flush failed while recording): events are missing\n",
			convert_program, anchor);
	if ((status = open_event_files(c, reader)) != OTF2_SUCCESS)
		goto corrupt;
	begin_process(c);
	c->began = true;
	status = read_events(c, reader);
	if (c->failed) {
		OTF2_Reader_Close(reader);
		g_free(anchor);
		return 1;
	}
	if (status != OTF2_SUCCESS)
		goto corrupt;
	convert_events_end(c);
	OTF2_Reader_CloseEvtFiles(reader);
	OTF2_Reader_Close(reader);
	g_free(anchor);
	return 0;

corrupt:
	convert_error("%s: the OTF2 archive is truncated or corrupt (%s%s%s)", anchor, OTF2_Error_GetDescription(status),
		      convert_otf2_error()[0] ? ": " : "", convert_otf2_error());
	OTF2_Reader_Close(reader);
	g_free(anchor);
	return 1;
}

/* Each archive in rank order, with its prefix and its clock on rank 0's, into the formats begun; then the StarPU-MPI
 * messages matched across them. 0, or 1 (told). */
static int convert_archives(struct converter *c, const GArray *ranked)
{
	guint n = ranked->len;
	int width = snprintf(NULL, 0, "%d", g_array_index(ranked, struct ranked, n - 1).rank);
	OTF2_ErrorCallback previous = convert_otf2_errors_kept();
	GArray *clocks = g_array_sized_new(FALSE, TRUE, sizeof(struct clock_info), n);
	g_array_set_size(clocks, n);
	if (c->multi)
		convert_mpi_origin(c, clocks);
	c->sends = g_array_new(FALSE, FALSE, sizeof(struct message));
	c->recvs = g_array_new(FALSE, FALSE, sizeof(struct message));
	c->message_names = g_string_chunk_new(256);
	int ret = 0;
	for (guint i = 0; i < n && ret == 0; i++) {
		const struct ranked *r = &g_array_index(ranked, struct ranked, i);
		c->input = r->input;
		c->rank = c->multi ? r->rank : 0;
		if (c->multi) {
			snprintf(c->pre, sizeof(c->pre), "%0*d_", width, r->rank);
			/* This archive's clock on rank 0's: its events shift by the offset StarPU-MPI measured. */
			guint input = 0;
			while (input < n && g_ptr_array_index(c->opt.inputs, input) != r->input)
				input++;
			int64_t offset = input < n ? g_array_index(clocks, struct clock_info, input).offset_ns : 0;
			c->origin = (uint64_t)((int64_t)c->common_origin - offset);
		}
		convert_tables_new(c);
		ret = convert_archive(c);
		if (ret == 0)
			convert_write_remaining(c);
		convert_tables_free(c);
	}
	OTF2_Error_RegisterCallback(previous, NULL);
	if (ret == 0 && c->multi)
		convert_mpi_messages(c);
	g_array_free(c->sends, TRUE);
	g_array_free(c->recvs, TRUE);
	g_string_chunk_free(c->message_names);
	g_array_free(clocks, TRUE);
	return ret;
}

/* The hidden folder the outputs are written into, in dir (made; NULL when it cannot be: told). */
static char *work_dir_make(const char *dir)
{
	char *work = g_build_filename(dir, ".starpu_fxt_tool.XXXXXX", NULL);
	if (!g_mkdtemp(work)) {
		convert_error("cannot create a folder in %s (%s): check that it is writable", dir, strerror(errno));
		g_free(work);
		return NULL;
	}
	return work;
}

/* Moves each output of work into dir: under its name when complete (an earlier NAME.incomplete goes), else as
 * NAME.incomplete when keep, else nowhere; then removes work. false when one could not be moved (told). */
static bool work_dir_publish(const char *work, const char *dir, bool complete, bool keep)
{
	bool ok = true;
	GDir *d = g_dir_open(work, 0, NULL);
	const char *name;
	while (d && (name = g_dir_read_name(d))) {
		char *from = g_build_filename(work, name, NULL);
		char *incomplete = g_strconcat(dir, G_DIR_SEPARATOR_S, name, ".incomplete", NULL);
		char *to = complete ? g_build_filename(dir, name, NULL) : g_strdup(incomplete);
		if ((complete || keep) && rename(from, to) != 0) {
			convert_error("cannot move %s to %s (%s)", from, to, strerror(errno));
			ok = false;
		}
		if (complete)
			unlink(incomplete);
		unlink(from);
		g_free(to);
		g_free(incomplete);
		g_free(from);
	}
	if (d)
		g_dir_close(d);
	if (rmdir(work) != 0) {
		convert_error("cannot remove the folder %s (%s): remove it by hand", work, strerror(errno));
		ok = false;
	}
	return ok;
}

/* What the formats know of the conversion (astrolabe/trace_format.h), for n archives. */
static struct astro_trace_format_options format_options(const struct options *o, guint n)
{
	return (struct astro_trace_format_options){
		.dir = o->dir ? o->dir : "", .nprocesses = (int)n, .colors = o->colors, .no_events = o->no_events,
		.no_counter = o->no_counter, .no_bus = o->no_bus, .no_flops = o->no_flops, .label_deps = o->label_deps,
		.no_smooth = o->no_smooth, .memory_states = o->memory_states, .no_acquire = o->no_acquire,
		.internal = o->internal, .use_task_color = o->use_task_color, .number_events = o->number_events, .paje = o->paje,
	};
}

/* starpu_fxt_tool's command line (format NULL), or the archives inputs[0..ninputs-1] converted by format alone. */
static int convert_command(int argc, char **argv, const char *const *inputs, unsigned ninputs, const char *format)
{
	struct converter c;
	memset(&c, 0, sizeof(c));
	int ret = 0;
	if (format) {
		c.opt.inputs = g_ptr_array_new();
		for (unsigned i = 0; i < ninputs; i++)
			g_ptr_array_add(c.opt.inputs, (gpointer)inputs[i]);
		c.opt.paje = "paje.trace";
		c.opt.formats.only = format;
	} else {
		ret = convert_options_parse(&c.opt, argc, argv);
	}
	if (!ret)
		trace_builtin_formats_register(); /* first: the plugins' formats come after them (trace_formats_select) */
	if (ret || (ret = trace_formats_select(&c.opt.formats)) != 0) {
		convert_options_free(&c.opt);
		return ret < 0 ? 0 : 1;
	}
	if (c.opt.formats.list) {
		trace_formats_print(&c.opt.formats, stdout);
		convert_options_free(&c.opt);
		return 0;
	}
	/* Every input checked before any output is created: a wrong name leaves nothing behind. */
	for (guint i = 0; i < c.opt.inputs->len; i++)
		if (convert_check_input(g_ptr_array_index(c.opt.inputs, i))) {
			convert_options_free(&c.opt);
			return 1;
		}
	if (c.opt.dir && g_mkdir_with_parents(c.opt.dir, 0777) < 0) {
		convert_options_free(&c.opt);
		return convert_error("cannot create the output directory %s (%s)", c.opt.dir, strerror(errno));
	}
	/* starpu_fxt_tool's outputs go through a hidden folder; a format run alone writes where it said (starpu_fxt_stats). */
	const char *final_dir = c.opt.dir;
	char *work = NULL;
	if (!format) {
		if (!(work = work_dir_make(final_dir ? final_dir : "."))) {
			convert_options_free(&c.opt);
			return 1;
		}
		c.opt.dir = work;
	}
	trace_output_dir = final_dir ? final_dir : "";
	/* Several archives: sorted by rank (their <id>, else their order), each prefixed "<rank>_" (zero-padded as StarPU does). */
	GArray *ranked = convert_mpi_ranks(c.opt.inputs);
	c.multi = ranked->len > 1;
	if (c.opt.number_events)
		number_events_init(&c.nevents);
	struct astro_trace_format_options options = format_options(&c.opt, ranked->len);
	trace_formats_begin(&c.opt.formats, &options);
	ret = convert_archives(&c, ranked);
	bool whole = ret == 0; /* every archive read: the outputs are complete, even those a format failed to write are told */
	trace_formats_end(&c.opt.formats);
	if (c.opt.formats.failed)
		c.failed = true;
	if (c.opt.number_events) {
		/* Written last, from what was read: a failed conversion leaves none. */
		if (ret == 0) {
			FILE *f = open_output(&c, "number_events.data");
			number_events_write(&c.nevents, f);
			close_output(&c, f, "number_events.data");
		}
		number_events_fini(&c.nevents);
	}
	if (c.failed)
		ret = 1;
	c.opt.dir = final_dir;
	const char *dir = final_dir ? final_dir : ".";
	if (work && !work_dir_publish(work, dir, whole, c.began))
		ret = 1;
	else if (work && !whole && c.began)
		convert_error("the conversion failed: the outputs of what was read are %s/*.incomplete (the files of an earlier "
			      "conversion, if any, are untouched)", dir);
	g_free(work);
	g_array_free(ranked, TRUE);
	convert_options_free(&c.opt);
	return ret;
}

int trace_convert_main(int argc, char **argv)
{
	return convert_command(argc, argv, NULL, 0, NULL);
}

int trace_convert_one_format(const char *program, const char *const *inputs, unsigned ninputs, const char *format)
{
	convert_program = program;
	return convert_command(0, NULL, inputs, ninputs, format);
}
