/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "astrolabe" component: the runtime's own counters, read as a tool
 * reads them (astro_counter_read()). Global counters as they are, per-worker
 * ones summed over the workers; per-codelet ones have no value outside a
 * listener and are not sampled. Monotonic counters are accumulating events.
 */
#include "sampler_plugin.h"

#include <astrolabe/counters.h>
#include <astrolabe/plugin.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "sampler"
#define PREFIX APAPI_OWN_COMPONENT ":::"

struct own_counter
{
	int id;
	int per_worker;
	enum starpu_perf_counter_type type;
};

static struct own_counter *own;
static unsigned nown;

static int is_floating(enum starpu_perf_counter_type type)
{
	return type == starpu_perf_counter_type_float || type == starpu_perf_counter_type_double;
}

static union apapi_raw raw_of(enum starpu_perf_counter_type type, union astro_counter_value v)
{
	union apapi_raw raw;
	switch (type) {
	case starpu_perf_counter_type_int32: raw.u = (uint64_t)(int64_t)v.int32_val; break;
	case starpu_perf_counter_type_int64: raw.u = (uint64_t)v.int64_val; break;
	case starpu_perf_counter_type_float: raw.d = v.float_val; break;
	default: raw.d = v.double_val; break;
	}
	return raw;
}

static int read_own(struct apapi_component *c, union apapi_raw *raw)
{
	struct own_counter *oc = c->arg;
	union astro_counter_value v;
	for (unsigned i = 0; i < c->nevents; i++) {
		if (!oc[i].per_worker) {
			if (astro_counter_read(oc[i].id, NULL, &v))
				return -EIO;
			raw[i] = raw_of(oc[i].type, v);
			continue;
		}
		union apapi_raw sum = { 0 };
		for (int w = 0; w < (int)starpu_worker_get_count(); w++) {
			if (astro_counter_read(oc[i].id, &w, &v))
				return -EIO;
			union apapi_raw one = raw_of(oc[i].type, v);
			if (is_floating(oc[i].type))
				sum.d += one.d;
			else
				sum.u += one.u;
		}
		raw[i] = sum;
	}
	return 0;
}

/* Adds the counter named name (without prefix) to c; 1 when added. */
static int add_counter(struct apapi_component *c, const struct apapi_config *cfg, const char *name)
{
	enum starpu_perf_counter_scope scope;
	int id = astro_counter_find(name, &scope);
	if (id >= 0 && scope != starpu_perf_counter_scope_global && scope != starpu_perf_counter_scope_per_worker)
		id = -1;
	int per_worker = scope == starpu_perf_counter_scope_per_worker;
	if (id < 0) {
		if (apapi_config_tells(cfg))
			astro_log_error(WHAT, "%s%s: no such global or per-worker counter: it is not sampled (astrolabe-perf-list lists them)",
					PREFIX, name);
		return 0;
	}
	struct own_counter *grown = realloc(own, (nown + 1) * sizeof(*grown));
	if (!grown)
		return 0;
	own = grown;
	own[nown] = (struct own_counter){ id, per_worker, starpu_perf_counter_get_type_id(id) };
	char full[512];
	snprintf(full, sizeof(full), "%s%s", PREFIX, name);
	struct apapi_eventop op;
	apapi_config_op(cfg, full, astro_counter_get_kind(id) == ASTRO_COUNTER_MONOTONIC ? INT64_MAX : 0,
			astro_counter_get_unit(id), &op);
	int ret = apapi_component_add_event(c, &op, is_floating(own[nown].type));
	apapi_eventop_clear(&op);
	if (ret)
		return 0;
	nown++;
	return 1;
}

int apapi_own_add(struct apapi_sampler *s, const struct apapi_config *cfg, uint64_t interval_ns)
{
	struct apapi_component *c = apapi_sampler_add(s, APAPI_OWN_COMPONENT, interval_ns, read_own, NULL);
	if (!c)
		return -ENOMEM;
	const char **names;
	unsigned n = apapi_config_events(cfg, APAPI_OWN_COMPONENT, &names);
	int added = 0;
	if (n) {
		for (unsigned i = 0; i < n; i++)
			added += add_counter(c, cfg, names[i] + strlen(PREFIX));
	} else {
		static const enum starpu_perf_counter_scope scopes[] = { starpu_perf_counter_scope_global, starpu_perf_counter_scope_per_worker };
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < starpu_perf_counter_nb(scopes[k]); i++) {
				const char *name = starpu_perf_counter_id_to_name(starpu_perf_counter_nth_to_id(scopes[k], i));
				/* Not the sampler's own statistics. */
				if (name && strncmp(name, "starpu.sampler.", 15) != 0)
					added += add_counter(c, cfg, name);
			}
	}
	free(names);
	/* The array may have moved while growing: bind it once complete. */
	c->arg = own;
	if (added)
		starpu_perf_counter_collection_start();
	return added;
}

void apapi_own_clear(void)
{
	free(own);
	own = NULL;
	nown = 0;
}
