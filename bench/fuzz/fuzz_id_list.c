/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* STARPU_WORKERS_CPUID and STARPU_WORKERS_COREID: _astro_parse_id_list().
 * The first two bytes give the limit (number of PUs or cores) and the room
 * in the output. Every stored id is below the limit; a refusal points at a
 * token inside the text, with a reason. */
#include "fuzz.h"

#include <errno.h>

#define ROOM 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned limit = data[0] == 255 ? 0xFFFFFFFFu : data[0] * 17u;
	unsigned room = data[1] % (ROOM + 1);
	char *text = fuzz_string(data + 2, size - 2);
	size_t len = strlen(text);
	unsigned ids[ROOM + 1];
	struct _astro_parse_error err = { (size_t)-1, (size_t)-1, NULL };

	ids[room] = 0xDEADBEEF;
	int n = _astro_parse_id_list(text, limit, ids, room, &err);
	FUZZ_CHECK(ids[room] == 0xDEADBEEF);	/* never writes past the room */
	if (n >= 0) {
		FUZZ_CHECK((unsigned)n <= room);
		for (int i = 0; i < n; i++)
			FUZZ_CHECK(ids[i] < limit);
	} else {
		FUZZ_CHECK(n == -EINVAL && err.why != NULL);
		FUZZ_CHECK(err.at < len && err.len > 0 && err.at + err.len <= len);
	}
	free(text);
	return 0;
}
