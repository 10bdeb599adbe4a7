/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers of the text users give the runtime (environment variables): pure
 * functions of their input, with no global state and no message, so that the
 * runtime and the fuzz targets in bench/fuzz/ call the same code. The caller
 * reports a failure (it knows the variable's name).
 */
#ifndef __ASTRO_ENVPARSE_H__
#define __ASTRO_ENVPARSE_H__

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A decimal int, blanks around it allowed: 0, or -EINVAL (not a number, junk
 * after it, out of the int range); *out is set only on success. */
int _astro_parse_int(const char *text, int *out);

/* A float as strtof() reads it, blanks after it allowed; NaN is refused. */
int _astro_parse_float(const char *text, float *out);

/* A size in bytes: a non-negative decimal number with an optional suffix B, K,
 * KB, M, MB, G, GB, T or TB (any case, powers of 1024), blanks allowed. */
int _astro_parse_size(const char *text, int64_t *out);

/* Where and why a list was refused: the bad token is text[at, at + len). */
struct _astro_parse_error
{
	size_t at, len;
	const char *why;	/* static text, e.g. "is not an id or a range" */
};

/*
 * The int and float parsers, bounded: 0 with *out set when text is a number
 * within [min, max]; -EINVAL when it is not a number (*out untouched);
 * -ERANGE when it is one but out of the range (*out untouched). Every numeric
 * variable the runtime reads has such a range, documented in doc/environment.md.
 */
int _astro_parse_int_in(const char *text, int min, int max, int *out);
int _astro_parse_float_in(const char *text, float min, float max, float *out);

/* 0 when text (NULL counts as empty) is at most max_len characters long, else
 * -ENAMETOOLONG: every string variable has such a limit. */
int _astro_check_length(const char *text, size_t max_len);

/* A list of names (STARPU_PROF_PAPI_EVENTS) separated by any of separators:
 * 0 when each name is at most max_len characters, else -ENAMETOOLONG with
 * *err naming the first longer one. */
int _astro_check_list_names(const char *text, const char *separators, size_t max_len,
			    struct _astro_parse_error *err);

/* value as a message shows it, between quotes, in buf (len >= 64): whole when
 * it is short, else its first characters and how many there are in all, so
 * that a 10,000-character value gives a readable line. Returns buf. */
char *_astro_env_shown(const char *value, char *buf, size_t len);

/* Splits a colon-separated list (STARPU_PLUGIN_PATH, STARPU_PROF_TOOL),
 * dropping empty entries, and with strip_blanks the blanks around each entry.
 * Returns a NULL-terminated GLib string vector (g_strfreev() it), never NULL;
 * text NULL gives an empty vector. */
char **_astro_parse_path_list(const char *text, bool strip_blanks);

/*
 * A list of ids (STARPU_WORKERS_CPUID, STARPU_WORKERS_COREID): ids and ranges
 * separated by blanks or commas, "3", "0-3", and "2-" for 2 up to limit - 1.
 * Each id must be below limit. The ids are stored in order into ids[], up to
 * max_ids of them (the rest is checked, not stored). Returns how many were
 * stored (0 for a list with no entry), or -EINVAL with *err set.
 */
int _astro_parse_id_list(const char *text, unsigned limit, unsigned *ids, unsigned max_ids,
			 struct _astro_parse_error *err);

#endif /* __ASTRO_ENVPARSE_H__ */
