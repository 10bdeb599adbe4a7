/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the plugin adds to the sampler's model: the runtime's own counters
 * as a component.
 */
#ifndef __ASTRO_SAMPLER_PLUGIN_H__
#define __ASTRO_SAMPLER_PLUGIN_H__

#include "sources.h"

/** Adds the "astrolabe" component (its listed counters, else all) to s. Returns the number of events. */
int apapi_own_add(struct apapi_sampler *s, const struct apapi_config *cfg, uint64_t interval_ns);
void apapi_own_clear(void);

#endif
