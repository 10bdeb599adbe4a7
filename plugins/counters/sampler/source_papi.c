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
	int read_failed;         /* said once */
	struct papi_set *next;
};

/* The sets of apapi_papi_add(), freed by apapi_papi_clear(). */
static struct papi_set *sets;

static int read_set(struct apapi_component *c, union apapi_raw *raw)
{
	struct papi_set *ps = c->arg;
	int ret = PAPI_read(ps->set, ps->values);
	if (ret != PAPI_OK) {
		if (!ps->read_failed++)
			astro_log_error(WHAT, "PAPI cannot read the events of %s (%s): its samples are left out (is its event set started?)",
					c->name, PAPI_strerror(ret));
		return -EIO;
	}
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

/* Adds name to PAPI event set set and to component c (c NULL: to the set alone), defined by prefer's
 * definition, else the configuration's; 1 when added. cfg NULL: messages said, no configuration. */
static int add_event(struct apapi_component *c, int set, const struct apapi_config *cfg,
		     const struct apapi_eventops *prefer, const char *name)
{
	int code;
	PAPI_event_info_t info;
	int tells = !cfg || apapi_config_tells(cfg);
	if (PAPI_event_name_to_code(name, &code) != PAPI_OK || PAPI_get_event_info(code, &info) != PAPI_OK) {
		if (tells)
			astro_log_error(WHAT, "PAPI knows no event %s: it is not sampled (papi_native_avail lists the events)", name);
		return 0;
	}
	int ret = PAPI_add_event(set, code);
	if (ret != PAPI_OK) {
		if (tells)
			astro_log_error(WHAT, "PAPI cannot count %s here (%s): it is not sampled", name, PAPI_strerror(ret));
		return 0;
	}
	if (!c)
		return 1;
	int accumulating = info.timescope != PAPI_TIMESCOPE_POINT && info.value_type != PAPI_VALUETYPE_ABSOLUTE;
	struct apapi_eventop op;
	const struct apapi_eventop *preferred = prefer ? apapi_eventops_find(prefer, name) : NULL;
	if (preferred || !cfg)
		apapi_eventop_copy(&op, preferred ? preferred : &(struct apapi_eventop){ .name = (char *)name, .factor = { 1, 1 } });
	else
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
	if (cidx < 0) {
		*why = "not in this PAPI";
		return -ENODEV;
	}
	return apapi_papi_component_name(cidx, verbose, why) ? cidx : -ENODEV;
}

/* Adds to set (and c, when not NULL) the n events of names, or with names NULL those cfg (when not NULL) lists for
 * cidx's component, else every event of cidx. Returns how many were added. */
static int add_events(struct apapi_component *c, int set, const struct apapi_config *cfg, const struct apapi_eventops *prefer,
		      int cidx, const char *const *names, unsigned n)
{
	const char **listed = NULL;
	int added = 0;
	const PAPI_component_info_t *info = PAPI_get_component_info(cidx);
	if (!names && cfg && info)
		n = apapi_config_events(cfg, info->name, &listed);
	if (n) {
		for (unsigned i = 0; i < n; i++)
			added += add_event(c, set, cfg, prefer, names ? names[i] : listed[i]);
	} else if (!names) {
		char event[PAPI_MAX_STR_LEN];
		int code = PAPI_NATIVE_MASK;
		for (int r = PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cidx); r == PAPI_OK;
		     r = PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cidx))
			if (PAPI_event_code_to_name(code, event) == PAPI_OK)
				added += add_event(c, set, cfg, prefer, event);
	}
	free(listed);
	return added;
}

int apapi_papi_eventset_new(int cidx, const char *const *names, unsigned n, int *eventset, int *added)
{
	const char *why;
	*added = 0;
	*eventset = PAPI_NULL;
	if (apapi_papi_component_name(cidx, 0, &why) == NULL) {
		astro_log_error(WHAT, "no event set of PAPI component %d: %s (PAPI_get_component_index() gives a component's number)", cidx, why);
		return -ENODEV;
	}
	int ret = PAPI_create_eventset(eventset);
	if (ret == PAPI_OK && (ret = PAPI_assign_eventset_component(*eventset, cidx)) != PAPI_OK)
		PAPI_destroy_eventset(eventset);
	if (ret != PAPI_OK) {
		astro_log_error(WHAT, "PAPI refuses an event set of component %d: %s", cidx, PAPI_strerror(ret));
		*eventset = PAPI_NULL;
		return ret;
	}
	*added = add_events(NULL, *eventset, NULL, NULL, cidx, names, n);
	return 0;
}

int apapi_papi_init(void)
{
	if (PAPI_is_initialized())
		return PAPI_VER_CURRENT;
	int ret = PAPI_library_init(PAPI_VER_CURRENT);
	if (ret != PAPI_VER_CURRENT)
		astro_log_error(WHAT, "PAPI could not be initialised (%s): no event of a component can be read (timers without an event set still work)",
				ret < 0 ? PAPI_strerror(ret) : "another PAPI version");
	return ret == PAPI_VER_CURRENT || ret < 0 ? ret : PAPI_EINVAL;
}

/* PAPI itself stays initialised for the life of the process, as the other
 * plugins leave it: libpapi 7.0 crashes in PAPI_library_init() after a
 * PAPI_shutdown() on some processors (a virtual "Intel Xeon Processor"
 * here), which an APAPI_init() after APAPI_destroy() would do. */
void apapi_papi_shutdown(void)
{
	apapi_papi_clear();
}

const char *apapi_papi_component_name(int cidx, int verbose, const char **why)
{
	if (papi_ready(why))
		return NULL;
	const PAPI_component_info_t *info = cidx >= 0 && cidx < PAPI_num_components() ? PAPI_get_component_info(cidx) : NULL;
	if (!info) {
		*why = "not in this PAPI";
		return NULL;
	}
	if (info->disabled) {
		*why = "disabled in this PAPI";
		if (verbose)
			astro_log_error(WHAT, "PAPI component %s is disabled: %s", info->name, info->disabled_reason);
		return NULL;
	}
	/* Its name, as PAPI_get_component_index() and APAPI_CMPLIST know it ("perf_event", whose short name is "perf"). */
	return info->name;
}

static void set_free(struct papi_set *ps)
{
	if (ps->set != PAPI_NULL) {
		int state = 0;
		if (PAPI_state(ps->set, &state) == PAPI_OK && (state & PAPI_RUNNING))
			PAPI_stop(ps->set, ps->values);
		PAPI_cleanup_eventset(ps->set);
		PAPI_destroy_eventset(&ps->set);
	}
	free(ps->values);
	free(ps);
}

struct apapi_component *apapi_papi_component(const struct apapi_config *cfg, int cidx, const char *name, uint64_t interval_ns,
					     const char *const *names, unsigned n, const struct apapi_eventops *prefer,
					     const char **why)
{
	struct papi_set *ps = calloc(1, sizeof(*ps));
	struct apapi_component *c = ps ? apapi_component_new(name, interval_ns, read_set, ps) : NULL;
	if (!c) {
		free(ps);
		*why = "out of memory";
		return NULL;
	}
	ps->set = PAPI_NULL;
	if (PAPI_create_eventset(&ps->set) != PAPI_OK || PAPI_assign_eventset_component(ps->set, cidx) != PAPI_OK) {
		*why = "PAPI refused an event set";
		goto fail;
	}
	add_events(c, ps->set, cfg, prefer, cidx, names, n);
	ps->values = calloc(c->nevents ? c->nevents : 1, sizeof(long long));
	if (!ps->values) {
		*why = "out of memory";
		goto fail;
	}
	return c;
fail:
	set_free(ps);
	c->arg = NULL;
	apapi_component_free(c);
	return NULL;
}

int apapi_papi_eventset(const struct apapi_component *c)
{
	return c->read == read_set ? ((struct papi_set *)c->arg)->set : PAPI_NULL;
}

int apapi_papi_run(struct apapi_component *c, int on)
{
	if (c->read != read_set || !c->nevents)
		return 0;
	struct papi_set *ps = c->arg;
	int state = 0;
	if (PAPI_state(ps->set, &state) != PAPI_OK)
		state = 0;
	if (!!(state & PAPI_RUNNING) == !!on)
		return 0;
	int ret = on ? PAPI_start(ps->set) : PAPI_stop(ps->set, ps->values);
	if (ret == PAPI_OK) {
		ps->read_failed = 0;
		return 0;
	}
	astro_log_error(WHAT, "PAPI cannot %s the events of %s: %s", on ? "start" : "stop", c->name, PAPI_strerror(ret));
	return -EIO;
}

void apapi_papi_component_free(struct apapi_component *c)
{
	if (!c)
		return;
	if (c->read == read_set)
		set_free(c->arg);
	apapi_component_free(c);
}

int apapi_papi_add(struct apapi_sampler *s, const struct apapi_config *cfg, const char *cmp, uint64_t interval_ns,
		   const char **why)
{
	int cidx = apapi_papi_available(cmp, cfg->verbose, why);
	if (cidx < 0)
		return -ENODEV;
	struct apapi_component *c = apapi_papi_component(cfg, cidx, cmp, interval_ns, NULL, 0, NULL, why);
	if (!c)
		return -ENODEV;
	if (apapi_sampler_attach(s, c)) {
		apapi_papi_component_free(c);
		*why = "out of memory";
		return -ENOMEM;
	}
	struct papi_set *ps = c->arg;
	ps->next = sets;
	sets = ps;
	if (apapi_papi_run(c, 1)) {
		for (unsigned e = 0; e < c->nevents; e++)
			apapi_event_clear(&c->events[e]);
		c->nevents = 0;
		return 0;
	}
	return (int)c->nevents;
}

void apapi_papi_clear(void)
{
	while (sets) {
		struct papi_set *ps = sets;
		sets = ps->next;
		set_free(ps);
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

struct apapi_component *apapi_papi_component(const struct apapi_config *cfg, int cidx, const char *name, uint64_t interval_ns,
					     const char *const *names, unsigned n, const struct apapi_eventops *prefer,
					     const char **why)
{
	(void)cfg, (void)cidx, (void)name, (void)interval_ns, (void)names, (void)n, (void)prefer;
	apapi_papi_available(name, 0, why);
	return NULL;
}

int apapi_papi_eventset(const struct apapi_component *c)
{
	(void)c;
	return -1;
}

int apapi_papi_eventset_new(int cidx, const char *const *names, unsigned n, int *eventset, int *added)
{
	(void)cidx, (void)names, (void)n;
	*eventset = -1;
	*added = 0;
	astro_log_error(WHAT, "no PAPI event set: Astrolabe was built without PAPI (install libpapi-dev and configure again)");
	return -ENODEV;
}

int apapi_papi_init(void)
{
	astro_log_error(WHAT, "Astrolabe was built without PAPI (install libpapi-dev and configure again): no event of a component "
			"can be read (timers without an event set still work)");
	return -ENODEV;
}

void apapi_papi_shutdown(void)
{
}

const char *apapi_papi_component_name(int cidx, int verbose, const char **why)
{
	(void)cidx, (void)verbose;
	apapi_papi_available("", 0, why);
	return NULL;
}

int apapi_papi_run(struct apapi_component *c, int on)
{
	(void)c, (void)on;
	return 0;
}

void apapi_papi_component_free(struct apapi_component *c)
{
	apapi_component_free(c);
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
