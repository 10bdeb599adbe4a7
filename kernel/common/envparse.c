/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsers of environment variables' text (envparse.h): pure functions, also
 * built alone into the fuzz targets of bench/fuzz/, so this file needs only
 * libc and GLib. */
#include "envparse.h"

#include <ctype.h>
#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True when only blanks are left at s. */
static bool only_blanks(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

int _astro_parse_int(const char *text, int *out)
{
	char *end;
	long v;

	if (!text)
		return -EINVAL;
	errno = 0;
	v = strtol(text, &end, 10);
	if (end == text || !only_blanks(end) || errno == ERANGE || v < INT_MIN || v > INT_MAX)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int _astro_parse_float(const char *text, float *out)
{
	char *end;
	float v;

	if (!text)
		return -EINVAL;
	errno = 0;
	v = strtof(text, &end);
	if (end == text || !only_blanks(end) || errno == ERANGE || isnan(v))
		return -EINVAL;
	*out = v;
	return 0;
}

/* Multiplier of a size suffix (B, K, KB, M, MB, ... any case), 0 if unknown. */
static int64_t size_unit(const char *suffix)
{
	static const char units[] = "BKMGT";
	const char *u;
	size_t len = strlen(suffix);

	while (len && isspace((unsigned char)suffix[len - 1]))
		len--;
	if (len == 0)
		return 1;
	if (len > 2 || (len == 2 && toupper((unsigned char)suffix[1]) != 'B'))
		return 0;
	u = strchr(units, toupper((unsigned char)suffix[0]));
	if (!u || *u == '\0' || (len == 2 && *u == 'B'))
		return 0;
	return (int64_t)1 << (10 * (u - units));
}

int _astro_parse_size(const char *text, int64_t *out)
{
	char *end;
	long long v;
	int64_t unit;

	if (!text)
		return -EINVAL;
	errno = 0;
	v = strtoll(text, &end, 10);
	if (end == text || errno == ERANGE || v < 0)
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	unit = size_unit(end);
	if (unit == 0 || v > INT64_MAX / unit)
		return -EINVAL;
	*out = (int64_t)v * unit;
	return 0;
}

int _astro_parse_int_in(const char *text, int min, int max, int *out)
{
	int v;

	if (_astro_parse_int(text, &v) != 0)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int _astro_parse_float_in(const char *text, float min, float max, float *out)
{
	float v;

	if (_astro_parse_float(text, &v) != 0)
		return -EINVAL;
	if (!(v >= min && v <= max))	/* also refuses the infinities beyond the range */
		return -ERANGE;
	*out = v;
	return 0;
}

int _astro_check_length(const char *text, size_t max_len)
{
	return text && strnlen(text, max_len + 1) > max_len ? -ENAMETOOLONG : 0;
}

int _astro_check_list_names(const char *text, const char *separators, size_t max_len,
			    struct _astro_parse_error *err)
{
	const char *p = text ? text : "";

	for (;;) {
		p += strspn(p, separators);
		if (!*p)
			return 0;
		size_t len = strcspn(p, separators);
		if (len > max_len) {
			err->at = (size_t)(p - text);
			err->len = len;
			err->why = "is too long a name";
			return -ENAMETOOLONG;
		}
		p += len;
	}
}

char *_astro_env_shown(const char *value, char *buf, size_t len)
{
	size_t n = value ? strlen(value) : 0;

	if (!value)
		snprintf(buf, len, "(unset)");
	else if (n + 3 <= len && n <= 64)
		snprintf(buf, len, "'%s'", value);
	else
		snprintf(buf, len, "'%.32s...' (%zu characters)", value, n);
	return buf;
}

/* Removes the blanks around s in place. Not g_strstrip(): GLib's blanks
 * leave out the vertical tab, and every parser here means isspace(). */
static void strip(char *s)
{
	size_t len = strlen(s), start = 0;

	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	while (start < len && isspace((unsigned char)s[start]))
		start++;
	memmove(s, s + start, len - start);
	s[len - start] = '\0';
}

char **_astro_parse_path_list(const char *text, bool strip_blanks)
{
	char **entries = g_strsplit(text ? text : "", ":", -1);
	guint kept = 0;

	for (guint i = 0; entries[i]; i++) {
		if (strip_blanks)
			strip(entries[i]);
		if (entries[i][0])
			entries[kept++] = entries[i];
		else
			g_free(entries[i]);
	}
	entries[kept] = NULL;
	return entries;
}

static bool is_separator(char c)
{
	return c == ',' || isspace((unsigned char)c);
}

/* Reads the decimal id at *p (digits only, no sign) and moves *p past it;
 * an id too large for an unsigned reads as UINT_MAX (beyond any limit). */
static bool read_id(const char **p, unsigned *id)
{
	const char *s = *p;
	unsigned long long v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	for (; isdigit((unsigned char)*s); s++)
		if (v <= UINT_MAX)
			v = v * 10 + (unsigned)(*s - '0');
	*id = v > UINT_MAX ? UINT_MAX : (unsigned)v;
	*p = s;
	return true;
}

static int refuse(struct _astro_parse_error *err, const char *text, const char *start, const char *why)
{
	const char *end = start;
	while (*end && !is_separator(*end))
		end++;
	err->at = (size_t)(start - text);
	err->len = (size_t)(end - start);
	err->why = why;
	return -EINVAL;
}

int _astro_parse_id_list(const char *text, unsigned limit, unsigned *ids, unsigned max_ids,
			 struct _astro_parse_error *err)
{
	const char *p = text ? text : "";
	unsigned n = 0;

	for (;;) {
		while (is_separator(*p))
			p++;
		if (!*p)
			return (int)n;
		const char *start = p;
		unsigned first, last;
		if (!read_id(&p, &first))
			return refuse(err, text, start, "is not an id or a range of ids");
		last = first;
		if (*p == '-') {
			p++;
			if (!*p || is_separator(*p))
				last = limit ? limit - 1 : 0;	/* "2-": up to the last one */
			else if (!read_id(&p, &last))
				return refuse(err, text, start, "is not an id or a range of ids");
		}
		if (*p && !is_separator(*p))
			return refuse(err, text, start, "is not an id or a range of ids");
		if (first >= limit || last >= limit)
			return refuse(err, text, start, "is beyond the last one of this machine");
		if (last < first)
			return refuse(err, text, start, "is a range whose end comes before its start");
		for (unsigned id = first; n < max_ids; id++) {
			ids[n++] = id;
			if (id == last)
				break;
		}
	}
}
