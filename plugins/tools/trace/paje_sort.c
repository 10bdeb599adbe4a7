/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sorting a paje.trace's timed events (paje_sort.h). */
#include <errno.h>
#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "paje_sort.h"

struct timed
{
	double t;
	guint order; /* of writing: equal times keep it */
	const char *line;
};

static gint by_time(gconstpointer a, gconstpointer b)
{
	const struct timed *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

int paje_sort_file(const char *path, const char *to, bool sort)
{
	gchar *text = NULL;
	gsize size = 0;
	if (!g_file_get_contents(path, &text, &size, NULL)) {
		errno = EIO;
		return -1;
	}
	/* The header says which events are timed: those whose first field is Time. */
	bool timed_id[256] = { false };
	GArray *timed = g_array_new(FALSE, FALSE, sizeof(struct timed));
	GPtrArray *untimed = g_ptr_array_new();
	int defining = -1;
	bool first_field = false;
	for (char *line = sort ? text : NULL, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (line[0] == '%') {
			int id;
			if (sscanf(line, "%%EventDef %*s %d", &id) == 1) {
				defining = id >= 0 && id < 256 ? id : -1;
				first_field = true;
			} else if (defining >= 0 && first_field && line[1] == '\t') {
				timed_id[defining] = strncmp(line + 2, "Time\t", 5) == 0;
				first_field = false;
			}
			g_ptr_array_add(untimed, line);
			continue;
		}
		char *end;
		long id = strtol(line, &end, 10);
		if (end != line && *end == '\t' && id >= 0 && id < 256 && timed_id[id]) {
			struct timed e = { strtod(end + 1, NULL), timed->len, line };
			g_array_append_val(timed, e);
		} else {
			g_ptr_array_add(untimed, line);
		}
	}
	g_array_sort(timed, by_time);

	/* In place: through a file beside it, renamed over it. Elsewhere (a pipe such as /dev/stdout): written into. */
	gchar *tmp = to ? g_strdup(to) : g_strconcat(path, ".sorting", NULL);
	FILE *f = fopen(tmp, "w");
	int ret = f ? 0 : -1;
	if (f && !sort) {
		if (size && fwrite(text, 1, size, f) != size)
			ret = -1;
	} else {
		for (guint i = 0; f && i < untimed->len; i++)
			fprintf(f, "%s\n", (const char *)g_ptr_array_index(untimed, i));
		for (guint i = 0; f && i < timed->len; i++)
			fprintf(f, "%s\n", g_array_index(timed, struct timed, i).line);
	}
	if (f && (ferror(f) | (fclose(f) != 0)))
		ret = -1;
	if (ret == 0 && !to && rename(tmp, path) != 0)
		ret = -1;
	if (ret != 0 && !to) {
		int saved = errno;
		unlink(tmp);
		errno = saved;
	}
	if (ret == 0 && to)
		unlink(path);
	g_free(tmp);
	g_ptr_array_free(untimed, TRUE);
	g_array_free(timed, TRUE);
	g_free(text);
	return ret;
}
