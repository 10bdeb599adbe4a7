/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starpu_get_env_number(): _astro_parse_int(). On success the value printed
 * back parses to itself; on failure the output is untouched. astro_env_int():
 * _astro_parse_int_in() with each bounded variable's range (bounds.h): it
 * agrees with _astro_parse_int(), and the value used is always in range. */
#include "fuzz.h"
#include "bounds.h"

#include <errno.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);
	int v = 12345, again = 0;
	int ret = _astro_parse_int(text, &v);

	FUZZ_CHECK(ret == 0 || ret == -EINVAL);
	if (ret == 0) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%d", v);
		FUZZ_CHECK(_astro_parse_int(buf, &again) == 0 && again == v);
	} else {
		FUZZ_CHECK(v == 12345);
	}
	for (size_t i = 0; i < FUZZ_COUNT(fuzz_int_bounds); i++) {
		const struct fuzz_int_bound *b = &fuzz_int_bounds[i];
		int in = 54321;
		int r = _astro_parse_int_in(text, b->min, b->max, &in);
		FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
		FUZZ_CHECK(r == -EINVAL ? ret != 0 : ret == 0);	/* unparsable exactly when not an int */
		FUZZ_CHECK(r == -ERANGE ? v < b->min || v > b->max : true);
		FUZZ_CHECK(r == 0 ? in == v : in == 54321);
		int used = r == 0 ? in : b->def;
		FUZZ_CHECK(used >= b->min && used <= b->max);
	}
	free(text);
	return 0;
}
