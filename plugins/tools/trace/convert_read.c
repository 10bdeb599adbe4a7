/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the converter's files read with (converter.h): an input's anchor
 * file and the check of the files libotf2 will read (regular files, through
 * astro_file_open_regular(): a FIFO would hang it), OTF2's first error, the archive's strings and an event's
 * attributes, and the converter's messages. It calls none of them.
 */
#include <astrolabe/plugin.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "converter.h"

const char *convert_program = TOOL;

int convert_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "[astrolabe] %s: ", convert_program);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 1;
}

const char *convert_string(struct converter *c, OTF2_StringRef ref)
{
	const char *s = g_hash_table_lookup(c->strings, GUINT_TO_POINTER(ref));
	return s ? s : "";
}

void convert_attrs(struct converter *c, OTF2_AttributeList *list, struct attrs *a)
{
	memset(a->has, 0, sizeof(a->has));
	if (!list)
		return;
	uint32_t n = OTF2_AttributeList_GetNumberOfElements(list);
	for (uint32_t i = 0; i < n; i++) {
		OTF2_AttributeRef ref;
		OTF2_Type type;
		OTF2_AttributeValue value;
		if (OTF2_AttributeList_GetAttributeByIndex(list, i, &ref, &type, &value) != OTF2_SUCCESS || ref >= 256)
			continue;
		int id = c->attr_map[ref];
		if (id < 0)
			continue;
		a->has[id] = true;
		a->v[id] = value;
	}
}

GArray *convert_append(GArray *array, const void *element, guint size)
{
	if (!array)
		array = g_array_new(FALSE, FALSE, size);
	return g_array_append_vals(array, element, 1);
}

char *convert_anchor(const char *input)
{
	struct stat st;
	if (stat(input, &st) < 0)
		return NULL;
	if (S_ISDIR(st.st_mode))
		return g_build_filename(input, "traces.otf2", NULL);
	/* The link the recorder names as StarPU's trace (prof_file_<user>_<id>): libotf2 finds the archive's other files
	 * from the anchor's own path. */
	char *real = realpath(input, NULL);
	char *anchor = g_strdup(real ? real : input);
	free(real);
	return anchor;
}

/* OTF2 prints each error itself, several lines per problem: keep the first, say it once. */
static char otf2_first_error[256];

static OTF2_ErrorCode otf2_error(void *user, const char *file, uint64_t line, const char *function, OTF2_ErrorCode code,
				 const char *fmt, va_list va)
{
	(void)user;
	(void)file;
	(void)line;
	(void)function;
	if (!otf2_first_error[0])
		vsnprintf(otf2_first_error, sizeof(otf2_first_error), fmt, va);
	return code;
}

OTF2_ErrorCallback convert_otf2_errors_kept(void)
{
	otf2_first_error[0] = '\0';
	return OTF2_Error_RegisterCallback(otf2_error, NULL);
}

const char *convert_otf2_error(void)
{
	return otf2_first_error;
}

/* One file of an archive: a regular file, or 1 with one message (a FIFO would hang libotf2, a device flood it). */
static int check_archive_file(const char *path, bool optional)
{
	char why[256];
	int fd = astro_file_open_regular(path, 0, why, sizeof(why));
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd == -ENOENT && optional)
		return 0;
	return convert_error("%s: %s: this is not a trace archive STARPU_FXT_TRACE=1 left", path, why);
}

/* What libotf2 reads of the archive whose anchor is anchor (traces.otf2): the anchor, the global definitions
 * (traces.def) and the files of its locations (traces/N.evt, traces/N.def). 0, or 1 (told). */
static int check_archive_files(const char *anchor)
{
	if (check_archive_file(anchor, false))
		return 1;
	char *stem = g_str_has_suffix(anchor, ".otf2") ? g_strndup(anchor, strlen(anchor) - 5) : g_strdup(anchor);
	char *defs = g_strconcat(stem, ".def", NULL);
	int ret = check_archive_file(defs, true);
	g_free(defs);
	GDir *dir = ret ? NULL : g_dir_open(stem, 0, NULL);
	for (const char *name; dir && !ret && (name = g_dir_read_name(dir));) {
		if (!g_str_has_suffix(name, ".evt") && !g_str_has_suffix(name, ".def"))
			continue;
		char *path = g_build_filename(stem, name, NULL);
		ret = check_archive_file(path, true);
		g_free(path);
	}
	if (dir)
		g_dir_close(dir);
	g_free(stem);
	return ret;
}

int convert_check_input(const char *input)
{
	char *anchor = convert_anchor(input);
	if (!anchor)
		return convert_error("%s: no such file or directory: give the trace STARPU_FXT_TRACE=1 left (STARPU_FXT_PREFIX/prof_file_<user>_0)",
				     input);
	struct stat st;
	int ret = 0;
	if (stat(anchor, &st) < 0)
		ret = convert_error("%s: not a trace archive (no %s): give the trace STARPU_FXT_TRACE=1 left", input, anchor);
	else
		ret = check_archive_files(anchor);
	g_free(anchor);
	return ret;
}
