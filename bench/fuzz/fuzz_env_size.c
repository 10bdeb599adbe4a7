/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starpu_get_env_size_default(): _astro_parse_size(). A success is a
 * non-negative byte count, a multiple of its suffix's unit, equal to the
 * number itself without a suffix. */
#include "fuzz.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);
	int64_t v = -1;
	int ret = _astro_parse_size(text, &v);

	FUZZ_CHECK(ret == 0 || ret == -EINVAL);
	if (ret == 0) {
		char *end;
		long long number = strtoll(text, &end, 10);
		while (isspace((unsigned char)*end))
			end++;
		FUZZ_CHECK(v >= 0 && number >= 0);
		if (*end == '\0')
			FUZZ_CHECK(v == number);
		else
			FUZZ_CHECK(number == 0 ? v == 0 : v >= number && v % number == 0);
	} else {
		FUZZ_CHECK(v == -1);
	}
	free(text);
	return 0;
}
