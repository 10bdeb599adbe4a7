/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starpu_get_env_float_default(): _astro_parse_float(). A success is never
 * NaN and survives a round trip through text (but for subnormals, which
 * may underflow); a failure leaves the output alone. astro_env_float():
 * _astro_parse_float_in() with each bounded variable's range (bounds.h): it
 * agrees with _astro_parse_float(), and the value used is always in range. */
#include "fuzz.h"
#include "bounds.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);
	float v = 0.5f, again = 0;
	int ret = _astro_parse_float(text, &v);

	FUZZ_CHECK(ret == 0 || ret == -EINVAL);
	if (ret == 0) {
		char buf[64];
		FUZZ_CHECK(!isnan(v));
		/* Hexadecimal is exact; a subnormal may still be refused as an underflow. */
		snprintf(buf, sizeof(buf), "%a", (double)v);
		if (_astro_parse_float(buf, &again) == 0)
			FUZZ_CHECK(again == v);
		else
			FUZZ_CHECK(fpclassify(v) == FP_SUBNORMAL);
	} else {
		FUZZ_CHECK(v == 0.5f);
	}
	for (size_t i = 0; i < FUZZ_COUNT(fuzz_float_bounds); i++) {
		const struct fuzz_float_bound *b = &fuzz_float_bounds[i];
		float in = 0.25f;
		int r = _astro_parse_float_in(text, b->min, b->max, &in);
		FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
		FUZZ_CHECK(r == -EINVAL ? ret != 0 : ret == 0);
		FUZZ_CHECK(r == -ERANGE ? !(v >= b->min && v <= b->max) : true);
		FUZZ_CHECK(r == 0 ? in == v : in == 0.25f);
		float used = r == 0 ? in : b->def;
		FUZZ_CHECK(!isnan(used) && used >= b->min && used <= b->max);
	}
	free(text);
	return 0;
}
