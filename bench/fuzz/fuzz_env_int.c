/* starpu_get_env_number(): _astro_parse_int(). On success the value printed
 * back parses to itself; on failure the output is untouched. */
#include "fuzz.h"

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
	free(text);
	return 0;
}
