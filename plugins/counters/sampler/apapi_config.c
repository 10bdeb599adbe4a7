/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sampler's configuration: environment variables and event files, as
 * APAPI has them (see apapi_model.h).
 */
#include "apapi_model.h"

#include <astrolabe/plugin.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "sampler"

static int env_flag(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

/* Reads the default file name of datadir (a missing default file is said once, in verbose mode). */
static void read_default(const struct apapi_config *cfg, const char *datadir, const char *name,
			 int (*read)(const char *, void *), void *into)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", datadir, name);
	FILE *f = fopen(path, "r");
	if (!f) {
		if (cfg->verbose)
			astro_log_error(WHAT, "no default file %s: install Astrolabe, or set ASTROLABE_SAMPLER_DATADIR", path);
		return;
	}
	fclose(f);
	read(path, into);
}

static int read_list(const char *path, void *into)
{
	return apapi_eventlist_read(path, into);
}

static int read_ops(const char *path, void *into)
{
	return apapi_eventops_read(path, into);
}

int apapi_config_load(struct apapi_config *cfg, const char *datadir)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->verbose = env_flag("APAPI_VERBOSE");
	cfg->softfail = env_flag("APAPI_SOFTFAIL");
	const char *dir = getenv("ASTROLABE_SAMPLER_DATADIR");
	if (dir && *dir)
		datadir = dir;
	read_default(cfg, datadir, "default_eventlist.txt", read_list, &cfg->default_list);
	read_default(cfg, datadir, "default_eventops.txt", read_ops, &cfg->ops);
	int ret = 0;
	const char *path = getenv("APAPI_EVENTLIST");
	if (path && *path && apapi_eventlist_read(path, &cfg->user_list) < 0)
		ret = -ENOENT;
	path = getenv("APAPI_EVENTOPS");
	if (path && *path && apapi_eventops_read(path, &cfg->ops) < 0)
		ret = -ENOENT;
	const char *cmplist = getenv("APAPI_CMPLIST");
	cfg->default_components = !(cmplist && *cmplist);
	char *copy = strdup(cmplist && *cmplist ? cmplist : APAPI_DEFAULT_CMPLIST), *save = NULL;
	for (char *c = copy ? strtok_r(copy, ":", &save) : NULL; c; c = strtok_r(NULL, ":", &save)) {
		char **grown = realloc(cfg->components, (cfg->ncomponents + 1) * sizeof(*grown));
		if (!grown)
			break;
		cfg->components = grown;
		cfg->components[cfg->ncomponents++] = strdup(c);
	}
	free(copy);
	return ret;
}

void apapi_config_clear(struct apapi_config *cfg)
{
	apapi_eventlist_clear(&cfg->user_list);
	apapi_eventlist_clear(&cfg->default_list);
	apapi_eventops_clear(&cfg->ops);
	for (unsigned i = 0; i < cfg->ncomponents; i++)
		free(cfg->components[i]);
	free(cfg->components);
	memset(cfg, 0, sizeof(*cfg));
}

static unsigned events_of(const struct apapi_eventlist *list, const char *cmp, const char ***names)
{
	unsigned n = 0;
	*names = NULL;
	for (unsigned i = 0; i < list->n; i++) {
		if (!apapi_event_in_component(list->names[i], cmp))
			continue;
		const char **grown = realloc(*names, (n + 1) * sizeof(*grown));
		if (!grown)
			break;
		*names = grown;
		(*names)[n++] = list->names[i];
	}
	return n;
}

unsigned apapi_config_events(const struct apapi_config *cfg, const char *cmp, const char ***names)
{
	unsigned n = events_of(&cfg->user_list, cmp, names);
	if (n)
		return n;
	free(*names);
	n = events_of(&cfg->default_list, cmp, names);
	if (!n) {
		free(*names);
		*names = NULL;
	}
	return n;
}

void apapi_config_op(const struct apapi_config *cfg, const char *name, uint64_t max_raw, const char *unit,
		     struct apapi_eventop *op)
{
	const struct apapi_eventop *defined = apapi_eventops_find(&cfg->ops, name);
	if (defined) {
		apapi_eventop_copy(op, defined);
		return;
	}
	char rate_unit[128];
	snprintf(rate_unit, sizeof(rate_unit), "%s/s", unit && *unit ? unit : "1");
	struct apapi_eventop fallback = {
		.name = (char *)name,
		.op1 = max_raw ? APAPI_OP1_DIV_DIFF_TIME : APAPI_OP1_SAMPLE_DIFF,
		.stats = { APAPI_STAT_ALL, APAPI_STAT_ALL },
		.max_raw = max_raw,
		.type = { (char *)(max_raw ? "count" : "value"), (char *)(max_raw ? "rate" : "change") },
		.unit = { (char *)(unit ? unit : ""), max_raw ? rate_unit : (char *)(unit ? unit : "") },
		/* value1 of a rate is per nanosecond: printed per second. */
		.factor = { 1.0, max_raw ? 1e-9 : 1.0 },
	};
	apapi_eventop_copy(op, &fallback);
}
