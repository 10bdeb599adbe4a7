/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Performance-model files (StarPU's version-45 format): _astro_perfmodel_parse()
 * and _astro_perfmodel_write() of models/format.c. A refusal says which line;
 * an accepted file written out parses again, nothing set aside, and writing
 * that gives the same text (the writer's output is a fixed point of
 * parse-then-write). The values are checked, not only the syntax: after
 * parse, write and parse, every entry and regression hands the policies
 * predictions that are finite and non-negative (NaN: none), and one more
 * sample neither wraps a count nor overflows a sum. */
#include "fuzz.h"
#include "format.h"

#include <errno.h>
#include <math.h>

static bool usable(double v)
{
	return isnan(v) || (v >= 0 && isfinite(v));
}

static bool sane(double v)
{
	return v >= 0 && isfinite(v);
}

/* What the prediction code (models/predict.c) reads of entry h and regression r, and what a save computes. */
static void check_entry(const struct starpu_perfmodel_history_entry *h)
{
	FUZZ_CHECK(h->nsample <= _ASTRO_PM_MAX_COUNT);
	FUZZ_CHECK(sane(h->mean) && sane(h->deviation) && sane(h->sum) && sane(h->sum2));
	struct starpu_perfmodel_history_entry more = *h;
	_astro_pm_entry_refresh(&more);
	FUZZ_CHECK(sane(more.mean) && sane(more.deviation));
	_astro_pm_entry_add(&more, h->mean * 3, h->mean * h->mean * 3, 3);
	FUZZ_CHECK(more.nsample <= _ASTRO_PM_MAX_COUNT && more.nsample >= 3 && more.nsample >= h->nsample / 2);
	FUZZ_CHECK(sane(more.mean) && sane(more.deviation) && sane(more.sum) && sane(more.sum2));
}

static void check_values(const struct _astro_pm_data *d)
{
	for (unsigned c = 0; c < d->ncombs; c++)
		for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; i++) {
			const struct _astro_pm_block *b = d->combs[c]->impl[i];
			if (!b)
				continue;
			const struct starpu_perfmodel_regression_model *r = &b->pub.regression;
			FUZZ_CHECK(r->nsample <= _ASTRO_PM_MAX_COUNT);
			double sizes[] = { 0, (double)r->minx, (double)r->maxx, ((double)r->minx + (double)r->maxx) / 2 };
			for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
				FUZZ_CHECK(usable(_astro_pm_regression_predict(r, false, sizes[k])) &&
					   usable(_astro_pm_regression_predict(r, true, sizes[k])));
			for (unsigned e = 0; e < b->nentries; e++) {
				check_entry(&b->entries[e]->h);
				FUZZ_CHECK(usable(_astro_pm_regression_predict(r, true, (double)b->entries[e]->h.size)));
			}
		}
}

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
	FUZZ_CHECK(parsed.nbad == 0 || strncmp(parsed.bad, "line ", 5) == 0);
	check_values(&parsed);
	char *text1 = written(&parsed, &len1);
	_astro_pm_data_clear(&parsed);
	FUZZ_CHECK(_astro_perfmodel_parse(text1, len1, &again, err, sizeof(err)) == 0);
	FUZZ_CHECK(again.nbad == 0);
	check_values(&again);
	char *text2 = written(&again, &len2);
	_astro_pm_data_clear(&again);
	FUZZ_CHECK(len1 == len2 && memcmp(text1, text2, len1) == 0);
	free(text1);
	free(text2);
	return 0;
}
