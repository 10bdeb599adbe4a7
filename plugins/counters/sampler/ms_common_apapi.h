/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libms_common_apapi's inside, shared with its tests: the resources and how
 * the sampler's statistics become libmeasure's results.
 */
#ifndef __ASTRO_MS_COMMON_APAPI_H__
#define __ASTRO_MS_COMMON_APAPI_H__

#include "apapi_model.h"
#include "ms_measurement.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The resources: CPU, GPU, FPGA, SYSTEM, MIC. */
#define MS_APAPI_NRESOURCES 5

/** The resource flag measured by PAPI component cmp (rapl: CPU, nvml: GPU, maxeler: FPGA, ipmi: SYSTEM, micknc: MIC), or 0. */
int ms_apapi_resource_of(const char *cmp);
/**
 * Writes the statistics of s's components (named by their PAPI component)
 * into the measurements of list (energies, powers), and the time s ran into
 * every measurement's runtime. The intervals are kept; the rest is reset.
 */
void ms_apapi_fill(struct apapi_sampler *s, MS_LIST *list);

#ifdef __cplusplus
}
#endif

#endif /* __ASTRO_MS_COMMON_APAPI_H__ */
