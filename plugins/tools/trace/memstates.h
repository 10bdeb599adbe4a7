/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starpu_fxt_tool -memory-states: StarPU's details of what happens to data on the memory managers (memstates.c). */
#ifndef __ASTRO_TRACE_MEMSTATES_H__
#define __ASTRO_TRACE_MEMSTATES_H__

#include <stdint.h>
#include <stdio.h>

/** paje.trace's header: the definition of event 22 (a memory manager's event with its details), in the form of
 *  paje.c's paje_defs (its name and number, then "Field type" entries, NULL-ended). */
extern const char *const memstates_event_def[];
/** paje.trace's header: the event types of the memory managers (Mm): MSI states, wont-use, the details of event 22. */
void memstates_event_types(FILE *f);
/** An event 22 on memory manager node (prefix pre): what (Al, AlE, Fe, FeE, Wb, WbE, DCo, DCoE, rc), its value,
 * handle, info and size as StarPU gives them, and the other memory manager concerned. */
void memstates_event(FILE *f, double date_ms, const char *pre, unsigned node, const char *what, uint64_t value,
		     uint64_t handle, uint64_t info, int64_t size, unsigned other);
/** handle's copy on memory node node is now in MSI state (0 invalid, 1 shared, 2 owner): StarPU's SI, SS, SO event. */
void memstates_data_state(FILE *f, double date_ms, const char *pre, unsigned node, unsigned state, uint64_t handle);
/** starpu_data_wont_use(handle): StarPU's WU event, on main memory's manager. */
void memstates_wont_use(FILE *f, double date_ms, const char *pre, uint64_t handle);

#endif
