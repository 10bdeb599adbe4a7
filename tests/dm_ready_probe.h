/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See dm_ready_probe.c. */
#ifndef ASTRO_TESTS_DM_READY_PROBE_H
#define ASTRO_TESTS_DM_READY_PROBE_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Queues n tasks (priorities 0..9), task i missing missing[i] bytes, then pops them all
 * with the first-ready rule: order[] receives the indices in pop order. Returns 0 or -ENOMEM. */
int astro_test_dm_ready_order(const size_t *missing, const int *priorities, int n, int *order);
#ifdef __cplusplus
}
#endif
#endif
