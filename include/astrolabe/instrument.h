/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Instrumentation states and bursts (the model of Nanos++'s instrumentation):
 * a thread is in a stack of named states (opened and closed in order), and a
 * burst gives a key a value for a while (an allocation's size, a phase's
 * number). Both reach every observer of the hub (STATE_*, BURST_* moments):
 * the trace recorder writes them as OTF2 regions and parameters, which
 * starpu_fxt_tool turns into Paje states and Perfetto slices and counters.
 *
 * State instrumentation can be switched off and on: meanwhile nothing is
 * emitted, but the thread's state stack keeps changing (the substate
 * history); when it is switched on again each thread emits the difference
 * between what observers last saw and its current stack at its next state
 * call, so the trace ends up in the right state.
 *
 * States and bursts opened while a task runs belong to the task (the
 * per-task instrumentation context): when the thread leaves the task (its
 * implementation or its callback returns) with some still open, they end for
 * the observers and are kept with the task; when a thread comes back to it
 * (its callback, the next run of a regenerated task) they are opened again,
 * in the same order and with the same values.
 *
 * Costs nothing but a branch when nobody observes the moments.
 */
#ifndef __ASTROLABE_INSTRUMENT_H__
#define __ASTROLABE_INSTRUMENT_H__

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Deepest state stack a thread keeps; deeper opens are refused. */
#define ASTRO_INSTR_MAX_DEPTH 32

/** Opens state (a string that outlives the trace, usually a literal) on the calling thread. Returns 0, -EINVAL (NULL) or -ENOSPC (too deep). */
int astro_instr_state_open(const char *state);
/** Closes the state opened last on the calling thread. Returns 0, or -EINVAL when none is open. */
int astro_instr_state_close(void);
/** The calling thread's current state (NULL: none), whether or not state instrumentation is on. */
const char *astro_instr_state_current(void);
/** Raises burst key (a string that outlives the trace) with value, until astro_instr_burst_close(key). Returns 0 or -EINVAL. */
int astro_instr_burst_open(const char *key, uint64_t value);
/** Ends the burst of key the calling thread raised last. Returns 0, or -EINVAL when none is open. */
int astro_instr_burst_close(const char *key);
/** Opens state and raises burst key with value in one call (Nanos++'s raiseOpenStateAndBurst). */
int astro_instr_state_and_burst_open(const char *state, const char *key, uint64_t value);
/** Closes both (Nanos++'s raiseCloseStateAndBurst). */
int astro_instr_state_and_burst_close(const char *key);
/** Stops emitting state changes (all threads); the state stacks keep their history. */
void astro_instr_state_disable(void);
/** Emits state changes again; each thread first catches up with its current stack. */
void astro_instr_state_enable(void);

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_INSTRUMENT_H__ */
