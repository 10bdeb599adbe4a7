/* starpu_get_env_float_default(): _astro_parse_float(). A success is never
 * NaN and survives a round trip through text (but for subnormals, which
 * may underflow); a failure leaves the output alone. */
#include "fuzz.h"

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
	free(text);
	return 0;
}
