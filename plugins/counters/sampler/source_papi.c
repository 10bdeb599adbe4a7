/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PAPI components as sampler components: one event set per component,
 * started when added and read by the timer thread.
 */
#include "sources.h"

#include <astrolabe/plugin.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_PAPI
#include <papi.h>
#endif

#define WHAT "sampler"

#ifdef HAVE_PAPI

struct papi_set
{
	int set;
	long long *values;
	struct papi_set *next;
};

static struct papi_set *sets;

static int read_set(struct apapi_component *c, union apapi_raw *raw)
{
	struct papi_set *ps = c->arg;
	if (PAPI_read(ps->set, ps->values) != PAPI_OK)
		return -EIO;
	for (unsigned i = 0; i < c->nevents; i++) {
		if (c->events[i].floating)
			memcpy(&raw[i].d, &ps->values[i], sizeof(double));
		else
			raw[i].u = (uint64_t)ps->values[i];
	}
	return 0;
}

static int papi_ready(const char **why)
{
	if (PAPI_is_initialized())
		return 0;
	if (PAPI_library_init(PAPI_VER_CURRENT) == PAPI_VER_CURRENT)
		return 0;
	*why = "PAPI could not be initialised";
	return -ENODEV;
}

/* Adds name to the set and the component; 1 when added. */
static int add_event(struct apapi_component *c, struct papi_set *ps, const struct apapi_config *cfg, const char *name)
{
	int code;
	PAPI_event_info_t info;
	if (PAPI_event_name_to_code(name, &code) != PAPI_OK || PAPI_get_event_info(code, &info) != PAPI_OK) {
		if (apapi_config_tells(cfg))
			astro_log_error(WHAT, "PAPI knows no event %s: it is not sampled (papi_native_avail lists the events)", name);
		return 0;
	}
	int ret = PAPI_add_event(ps->set, code);
	if (ret != PAPI_OK) {
		if (apapi_config_tells(cfg))
			astro_log_error(WHAT, "PAPI cannot count %s here (%s): it is not sampled", name, PAPI_strerror(ret));
		return 0;
	}
	int accumulating = info.timescope != PAPI_TIMESCOPE_POINT && info.value_type != PAPI_VALUETYPE_ABSOLUTE;
	struct apapi_eventop op;
	apapi_config_op(cfg, name, accumulating ? INT64_MAX : 0, info.units, &op);
	ret = apapi_component_add_event(c, &op, info.data_type == PAPI_DATATYPE_FP64);
	apapi_eventop_clear(&op);
	return ret == 0;
}

int apapi_papi_available(const char *cmp, int verbose, const char **why)
{
	if (papi_ready(why))
		return -ENODEV;
	int cidx = PAPI_get_component_index(cmp);
	const PAPI_component_info_t *info = cidx >= 0 ? PAPI_get_component_info(cidx) : NULL;
	if (!info) {
		*why = "not in this PAPI";
		return -ENODEV;
	}
	if (info->disabled) {
		*why = "disabled in this PAPI";
		if (verbose)
			astro_log_error(WHAT, "PAPI component %s is disabled: %s", cmp, info->disabled_reason);
		return -ENODEV;
	}
	return cidx;
}

int apapi_papi_add(struct apapi_sampler *s, const struct apapi_config *cfg, const char *cmp, uint64_t interval_ns,
		   const char **why)
{
	int cidx = apapi_papi_available(cmp, cfg->verbose, why);
	if (cidx < 0)
		return -ENODEV;
	struct papi_set *ps = calloc(1, sizeof(*ps));
	struct apapi_component *c = ps ? apapi_sampler_add(s, cmp, interval_ns, read_set, ps) : NULL;
	if (!c) {
		free(ps);
		*why = "out of memory";
		return -ENOMEM;
	}
	ps->set = PAPI_NULL;
	ps->next = sets;
	sets = ps;
	if (PAPI_create_eventset(&ps->set) != PAPI_OK || PAPI_assign_eventset_component(ps->set, cidx) != PAPI_OK) {
		*why = "PAPI refused an event set";
		return -ENODEV;
	}
	const char **names;
	unsigned n = apapi_config_events(cfg, cmp, &names);
	int added = 0;
	if (n) {
		for (unsigned i = 0; i < n; i++)
			added += add_event(c, ps, cfg, names[i]);
	} else {
		char name[PAPI_MAX_STR_LEN];
		int code = PAPI_NATIVE_MASK;
		for (int r = PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cidx); r == PAPI_OK;
		     r = PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cidx))
			if (PAPI_event_code_to_name(code, name) == PAPI_OK)
				added += add_event(c, ps, cfg, name);
	}
	free(names);
	ps->values = calloc(c->nevents ? c->nevents : 1, sizeof(long long));
	if (!ps->values || (added && PAPI_start(ps->set) != PAPI_OK)) {
		astro_log_error(WHAT, "PAPI cannot start the events of %s: they are not sampled", cmp);
		for (unsigned e = 0; e < c->nevents; e++)
			apapi_event_clear(&c->events[e]);
		c->nevents = 0;
		return 0;
	}
	return added;
}

void apapi_papi_clear(void)
{
	while (sets) {
		struct papi_set *ps = sets;
		sets = ps->next;
		if (ps->set != PAPI_NULL) {
			long long *ignored = ps->values;
			int state = 0;
			if (PAPI_state(ps->set, &state) == PAPI_OK && (state & PAPI_RUNNING))
				PAPI_stop(ps->set, ignored);
			PAPI_cleanup_eventset(ps->set);
			PAPI_destroy_eventset(&ps->set);
		}
		free(ps->values);
		free(ps);
	}
}

#else /* !HAVE_PAPI */

int apapi_papi_available(const char *cmp, int verbose, const char **why)
{
	(void)cmp;
	(void)verbose;
	*why = "Astrolabe was built without PAPI (install libpapi-dev and configure again)";
	return -ENODEV;
}

int apapi_papi_add(struct apapi_sampler *s, const struct apapi_config *cfg, const char *cmp, uint64_t interval_ns,
		   const char **why)
{
	(void)s;
	(void)cfg;
	(void)interval_ns;
	return apapi_papi_available(cmp, 0, why);
}

void apapi_papi_clear(void)
{
}

#endif

/* Whether c samples an energy: a PAPI energy component's, or the runtime's energy counters (counters_energy). */
static int measures_energy(const struct apapi_component *c)
{
	for (unsigned e = 0; e < c->nevents; e++)
		if (strstr(c->events[e].op.name, "ENERGY") || strstr(c->events[e].op.name, ".energy.g_"))
			return 1;
	return 0;
}

unsigned apapi_sources_add(struct apapi_sampler *s, const struct apapi_config *cfg, const char *spec,
			   int (*add_own)(struct apapi_sampler *s, const struct apapi_config *cfg, uint64_t interval_ns))
{
	char skipped[1024] = "";
	unsigned total = 0;
	int energy_asked = 0, energy_found = 0;
	for (unsigned i = 0; i < cfg->ncomponents; i++) {
		const char *cmp = cfg->components[i];
		uint64_t interval = apapi_interval_for(spec, cmp, APAPI_DEFAULT_INTERVAL_NS, NULL);
		const char *why = "not available here";
		int n = strcmp(cmp, APAPI_OWN_COMPONENT) == 0 ? (add_own ? add_own(s, cfg, interval) : 0)
							       : apapi_papi_add(s, cfg, cmp, interval, &why);
		int energy = strcmp(cmp, "rapl") == 0 || strcmp(cmp, "powercap") == 0;
		energy_asked |= energy;
		if (n >= 0) {
			energy_found |= (energy || strcmp(cmp, APAPI_OWN_COMPONENT) == 0) && n > 0 && measures_energy(s->components[s->ncomponents - 1]);
			total += (unsigned)n;
			continue;
		}
		size_t len = strlen(skipped);
		snprintf(skipped + len, sizeof(skipped) - len, "%s%s (%s)", len ? ", " : "", cmp, why);
	}
	if (!*skipped || !apapi_config_tells(cfg))
		return total;
	if (!cfg->default_components) {
		astro_log_error(WHAT, "components skipped: %s%s; APAPI_CMPLIST chooses the components, APAPI_SOFTFAIL=1 hides this line",
				skipped, energy_asked && !energy_found ? "; so no energy is measured here (no PAPI RAPL or powercap counter, no readable Linux powercap zone)" : "");
		return total;
	}
	/* The default list names every component APAPI knows: those this machine lacks are no mistake. Only the
	 * energy missing is worth a word; APAPI_VERBOSE=1 names them all. */
	if (cfg->verbose)
		fprintf(stderr, "[astrolabe] note: " WHAT ": components not available here: %s\n", skipped);
	else if (energy_asked && !energy_found)
		fprintf(stderr, "[astrolabe] note: " WHAT ": no energy counter on this machine: energy is not measured\n");
	return total;
}
