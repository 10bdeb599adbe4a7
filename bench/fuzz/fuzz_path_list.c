/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* STARPU_PLUGIN_PATH and STARPU_PROF_TOOL: _astro_parse_path_list(), with
 * and without stripping blanks (the first byte chooses). Every entry is
 * non-empty, holds no colon, appears in the text in order, and the entries
 * are exactly the non-empty (stripped) pieces between colons. */
#include "fuzz.h"

#include <ctype.h>
#include <glib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	bool strip = data[0] & 1;
	char *text = fuzz_string(data + 1, size - 1);
	char **entries = _astro_parse_path_list(text, strip);
	const char *p = text;

	FUZZ_CHECK(entries != NULL);
	for (char **e = entries; *e; e++) {
		size_t len = strlen(*e);
		FUZZ_CHECK(len > 0 && !strchr(*e, ':'));
		if (strip)
			FUZZ_CHECK(!isspace((unsigned char)(*e)[0]) && !isspace((unsigned char)(*e)[len - 1]));
		const char *found = strstr(p, *e);
		FUZZ_CHECK(found != NULL);
		p = found + len;
	}
	/* The entry count is the count of pieces with something kept in them. */
	unsigned pieces = 0, n = g_strv_length(entries);
	for (const char *s = text;;) {
		const char *colon = strchr(s, ':');
		const char *end = colon ? colon : s + strlen(s);
		const char *a = s, *b = end;
		if (strip) {
			while (a < b && isspace((unsigned char)*a))
				a++;
			while (b > a && isspace((unsigned char)b[-1]))
				b--;
		}
		pieces += b > a;
		if (!colon)
			break;
		s = colon + 1;
	}
	FUZZ_CHECK(pieces == n);
	g_strfreev(entries);
	free(text);
	return 0;
}
