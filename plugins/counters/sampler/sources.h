/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sampler's components: where raw values come from.
 */
#ifndef __ASTRO_SAMPLER_SOURCES_H__
#define __ASTRO_SAMPLER_SOURCES_H__

#include "apapi_model.h"

/**
 * Adds PAPI component cmp to s with its events (those the configuration
 * lists, else all of the component); an event PAPI cannot count is said and
 * left out (unless APAPI_SOFTFAIL). Returns the number of events added, or
 * -ENODEV with *why (static text) when PAPI has no such enabled component.
 */
int apapi_papi_add(struct apapi_sampler *s, const struct apapi_config *cfg, const char *cmp, uint64_t interval_ns,
		   const char **why);
/**
 * Whether PAPI has component cmp enabled: its index, or -ENODEV with *why
 * (static text; verbose: PAPI's reason for a disabled one said too).
 */
int apapi_papi_available(const char *cmp, int verbose, const char **why);
/** Stops and frees the PAPI event sets of apapi_papi_add() (the sampler stopped). */
void apapi_papi_clear(void);

/**
 * A component named name (of no sampler yet: apapi_sampler_attach()) reading
 * a PAPI event set of PAPI component cidx that holds the n events of names,
 * or with names NULL those the configuration lists for name, else every
 * event of cidx. An event's definition is prefer's (may be NULL), else the
 * configuration's. An event PAPI cannot count is said and left out (unless
 * APAPI_SOFTFAIL). The set is not started (apapi_papi_run()). NULL with
 * *why (static text) when PAPI refuses the set or memory runs out.
 */
struct apapi_component *apapi_papi_component(const struct apapi_config *cfg, int cidx, const char *name, uint64_t interval_ns,
					     const char *const *names, unsigned n, const struct apapi_eventops *prefer,
					     const char **why);
/** The PAPI event set c reads (PAPI_NULL, -1, when c does not read one). */
int apapi_papi_eventset(const struct apapi_component *c);
/** Starts (on) or stops counting the events of c when it reads a PAPI event set. Returns 0 or -EIO (said). */
int apapi_papi_run(struct apapi_component *c, int on);
/** Frees c and the PAPI event set it reads (stopped first). */
void apapi_papi_component_free(struct apapi_component *c);
/**
 * A PAPI event set of component cidx in *eventset with the n events of
 * names (NULL: every event of the component); *added of them PAPI took (the
 * others said). Returns 0, or a negative value (said) when the component is
 * not usable or PAPI refuses the set.
 */
int apapi_papi_eventset_new(int cidx, const char *const *names, unsigned n, int *eventset, int *added);
/** Initialises PAPI: PAPI_VER_CURRENT, or a negative value (said). */
int apapi_papi_init(void);
/** Frees apapi_papi_add()'s event sets and shuts PAPI down. */
void apapi_papi_shutdown(void);
/** The name of PAPI component cidx, or NULL with *why (static text) when PAPI lacks it or has it disabled
 *  (verbose: PAPI's reason said). */
const char *apapi_papi_component_name(int cidx, int verbose, const char **why);

/**
 * Adds every component of the configuration to s (intervals from spec, as
 * atime's -t): "astrolabe" through add_own (NULL: left to the runtime), the others
 * through PAPI. Components that are not here are named in one line (unless
 * APAPI_SOFTFAIL). Returns the number of events added.
 */
unsigned apapi_sources_add(struct apapi_sampler *s, const struct apapi_config *cfg, const char *spec,
			   int (*add_own)(struct apapi_sampler *s, const struct apapi_config *cfg, uint64_t interval_ns));

/** The component of the runtime's own counters. */
#define APAPI_OWN_COMPONENT "astrolabe"

#endif /* __ASTRO_SAMPLER_SOURCES_H__ */
