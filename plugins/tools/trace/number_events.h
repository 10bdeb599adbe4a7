/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_fxt_tool -number-events: counts the archive's events per kind and
 * writes number_events.data as StarPU 1.4 does (number_events.c).
 */
#ifndef __ASTRO_TRACE_NUMBER_EVENTS_H__
#define __ASTRO_TRACE_NUMBER_EVENTS_H__

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct number_events
{
	uint64_t *count; /* one per kind of number_events.c's table */
};

void number_events_init(struct number_events *n);
void number_events_fini(struct number_events *n);
/** An instant event: param is a TRACE_PARAMETERS id (-1: unknown); kind the DepKind attribute of a dependency, the MemoryState of a memory state. */
void number_events_param(struct number_events *n, int param, uint8_t kind);
/** Counts a sampled counter's value (an OTF2 metric event). */
void number_events_counter(struct number_events *n);
/** An Enter (leave false) or a Leave of a region: a task, a user state, or a worker state named as in TRACE_STATES. */
void number_events_region(struct number_events *n, const char *name, bool task, bool user, bool leave);
/** Writes the header line, then '0x<key>\t<count>\t<name>' per kind seen, by key. */
void number_events_write(const struct number_events *n, FILE *f);

#endif
