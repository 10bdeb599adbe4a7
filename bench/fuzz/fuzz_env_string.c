/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* astro_env_string() and astro_env_names(): _astro_check_length() and
 * _astro_check_list_names() with each bounded string variable's limit
 * (bounds.h). A string is accepted exactly when it is short enough; a list
 * exactly when each of its names is, and a refusal points at a name of the
 * list that is too long. _astro_env_shown() always gives a short line. */
#include "fuzz.h"
#include "bounds.h"

#include <errno.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);
	size_t len = strlen(text);

	for (size_t i = 0; i < FUZZ_COUNT(fuzz_string_bounds); i++) {
		const struct fuzz_string_bound *b = &fuzz_string_bounds[i];
		if (!b->separators) {
			int r = _astro_check_length(text, b->max);
			FUZZ_CHECK(r == (len > b->max ? -ENAMETOOLONG : 0));
			continue;
		}
		struct _astro_parse_error err = { 0, 0, NULL };
		int r = _astro_check_list_names(text, b->separators, b->max, &err);
		size_t longest = 0, run = 0;
		for (size_t k = 0; k <= len; k++) {
			if (k == len || strchr(b->separators, text[k])) {
				longest = run > longest ? run : longest;
				run = 0;
			} else {
				run++;
			}
		}
		FUZZ_CHECK(r == (longest > b->max ? -ENAMETOOLONG : 0));
		if (r) {
			FUZZ_CHECK(err.at + err.len <= len && err.len > b->max && err.why);
			FUZZ_CHECK(strcspn(text + err.at, b->separators) == err.len);
			FUZZ_CHECK(err.at == 0 || strchr(b->separators, text[err.at - 1]));
		}
	}
	char shown[96];
	_astro_env_shown(text, shown, sizeof(shown));
	FUZZ_CHECK(strlen(shown) < sizeof(shown));
	free(text);
	return 0;
}
