/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the fuzz targets: the input as a NUL-terminated string (the
 * parsers read C strings; an embedded NUL ends the text as it would in an
 * environment variable). */
#ifndef ASTRO_FUZZ_H
#define ASTRO_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "envparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A broken invariant is a finding: abort() makes libFuzzer save the input. */
#define FUZZ_CHECK(cond) do { if (!(cond)) abort(); } while (0)

#endif
