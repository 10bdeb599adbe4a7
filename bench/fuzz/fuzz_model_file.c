/* Performance-model files (StarPU's version-45 format): _astro_perfmodel_parse()
 * and _astro_perfmodel_write() of models/format.c. A refusal says which line;
 * an accepted file written out parses again, and writing that gives the same
 * text (the writer's output is a fixed point of parse-then-write). */
#include "fuzz.h"
#include "format.h"

#include <errno.h>

/* The writer's output for d, as a malloc'ed string. */
static char *written(const struct _astro_pm_data *d, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(_astro_perfmodel_write(f, d) == 0);
	FUZZ_CHECK(fclose(f) == 0);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct _astro_pm_data parsed, again;
	char err[256];

	int ret = _astro_perfmodel_parse((const char *)data, size, &parsed, err, sizeof(err));
	if (ret != 0) {
		FUZZ_CHECK(ret == -EINVAL && strncmp(err, "line ", 5) == 0);
		FUZZ_CHECK(parsed.ncombs == 0);
		return 0;
	}
	size_t len1, len2;
	char *text1 = written(&parsed, &len1);
	_astro_pm_data_clear(&parsed);
	FUZZ_CHECK(_astro_perfmodel_parse(text1, len1, &again, err, sizeof(err)) == 0);
	char *text2 = written(&again, &len2);
	_astro_pm_data_clear(&again);
	FUZZ_CHECK(len1 == len2 && memcmp(text1, text2, len1) == 0);
	free(text1);
	free(text2);
	return 0;
}
