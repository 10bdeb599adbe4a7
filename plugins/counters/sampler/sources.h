/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sampler's components: where raw values come from.
 */
#ifndef __ASTRO_SAMPLER_SOURCES_H__
#define __ASTRO_SAMPLER_SOURCES_H__

#include "apapi.h"

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
/** Stops and frees the PAPI event sets (the sampler stopped). */
void apapi_papi_clear(void);

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
