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
 * How a task's states and bursts come back (astro_instr_context_set()) is
 * a plugin's or a tool's choice, made at its init: the whole stacked
 * sequence (the default), or only the last state and, for each key, the
 * last burst (seed 001's four InstrumentationContext behaviours). A task
 * that gives its thread away while it runs (a yield) says so with
 * astro_instr_task_leave_cpu() and astro_instr_task_enter_cpu(); what is
 * raised for it in between is held and emitted when it is back (the
 * delayed event list).
 *
 * The event-key dictionary names burst keys and their values
 * (astro_instr_key_register(), astro_instr_value_register()): the trace
 * recorder writes it into the OTF2 definitions and starpu_fxt_tool shows
 * the value names in Paje and Perfetto; astrolabe-perf-list lists it.
 *
 * Instrumentation compiles out: wrap instrumentation code in
 * ASTRO_INSTRUMENT(...) (or NANOS_INSTRUMENT(...)); with
 * ASTRO_DISABLE_INSTRUMENTATION defined (configure
 * --disable-instrumentation defines it in starpu_config.h, or define it
 * before including this header) the wrapped code vanishes, and so do the
 * kernel's own calls on the task path.
 *
 * Costs nothing but a branch when nobody observes the moments.
 */
#ifndef __ASTROLABE_INSTRUMENT_H__
#define __ASTROLABE_INSTRUMENT_H__

#include <stdint.h>
#include <starpu_config.h>

#ifdef ASTRO_DISABLE_INSTRUMENTATION
/** Instrumentation code (statements or declarations): vanishes when ASTRO_DISABLE_INSTRUMENTATION is defined. */
#define ASTRO_INSTRUMENT(...)
#else
/** Instrumentation code (statements or declarations): kept as written; vanishes when ASTRO_DISABLE_INSTRUMENTATION is defined. */
#define ASTRO_INSTRUMENT(...) __VA_ARGS__
#endif
#ifndef NANOS_INSTRUMENT
/** Nanos++'s name of ASTRO_INSTRUMENT(). */
#define NANOS_INSTRUMENT(...) ASTRO_INSTRUMENT(__VA_ARGS__)
#endif

struct starpu_task;

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

/**
 * How the states and bursts a task left open come back when a thread comes
 * back to it (its callback, its next run, astro_instr_task_enter_cpu()).
 * The two bits are independent: STATES re-opens the task's whole state
 * stack, bottom first, else only its last state (the ones below it are
 * opened again as the states above them close); BURSTS raises every burst
 * again in its order, else only the last one of each key (an older one of
 * the same key comes back when it closes).
 */
enum astro_instr_context
{
	/** Only the last state and the last burst of each key (Nanos++'s InstrumentationContext). */
	ASTRO_INSTR_CONTEXT_PLAIN = 0,
	/** Every state, the last burst of each key (InstrumentationContextStackedStates). */
	ASTRO_INSTR_CONTEXT_STACKED_STATES = 1,
	/** The last state, every burst (InstrumentationContextStackedBursts). */
	ASTRO_INSTR_CONTEXT_STACKED_BURSTS = 2,
	/** Every state and every burst: the default (InstrumentationContextStackedStatesAndBursts). */
	ASTRO_INSTR_CONTEXT_STACKED_STATES_AND_BURSTS = 3
};
/** Chooses the replay of every task from now on (a plugin or a tool calls it at its init). Returns 0 or -EINVAL. */
int astro_instr_context_set(enum astro_instr_context context);
/** The replay chosen (ASTRO_INSTR_CONTEXT_STACKED_STATES_AND_BURSTS unless changed). */
enum astro_instr_context astro_instr_context_get(void);

/**
 * The running task task gives its thread away (Nanos++'s wdLeaveCPU): the
 * states and bursts it opened end for the observers and are kept with it.
 * Until it is back (astro_instr_task_enter_cpu(), its callback, its next
 * run) it is off its CPU: the states and bursts this thread raises for it
 * are the delayed event list: checked against what the task has open (a
 * close finds only its states and bursts; the calls return their usual
 * errors, with a message naming the task) and emitted only when it is back, after
 * what it left open, in the order raised, dated then. A task freed while
 * some are held emits them then, each opened one closed at once. Calling it
 * again while the task is off its CPU does nothing. Returns 0, or -EINVAL
 * when task is NULL or not the task this thread runs.
 */
int astro_instr_task_leave_cpu(struct starpu_task *task);
/** The task comes back (wdEnterCPU): what it left open opens again, as astro_instr_context_set() says. Returns 0 or -EINVAL as above. */
int astro_instr_task_enter_cpu(struct starpu_task *task);

/* ---------------------------------------------------- event-key dictionary */

/** A key of the dictionary. */
struct astro_instr_key_info
{
	/** Its number, from 1, in the order of registration. */
	unsigned id;
	/** Its name (a copy that lives as long as the process: a burst key astro_instr_burst_open() takes). */
	const char *name;
	/** What it measures. */
	const char *description;
	/** How many of its values have names. */
	unsigned nvalues;
};
/**
 * Registers key name with description (Nanos++'s registerEventKey).
 * Returns its id (at least 1; the same id when name is registered again
 * with the same or a NULL description), -EINVAL (NULL or empty name) or
 * -EEXIST (registered with another description).
 */
int astro_instr_key_register(const char *name, const char *description);
/** The id of key name (Nanos++'s getEventKey), or -ENOENT when it is not registered. */
int astro_instr_key_lookup(const char *name);
/**
 * Names value of key (registerEventValue): a trace viewer shows name for it.
 * Returns 0 (also when it has this name already), -EINVAL (NULL or empty
 * name), -ENOENT (key not registered) or -EEXIST (value has another name,
 * or name is another value's).
 */
int astro_instr_value_register(const char *key, uint64_t value, const char *name);
/** Sets *value to the value of key named name (getEventValue). Returns 0, or -ENOENT. */
int astro_instr_value_lookup(const char *key, const char *name, uint64_t *value);
/** The name of value of key, or NULL when it has none. */
const char *astro_instr_value_name(const char *key, uint64_t value);
/** How many keys are registered: their ids are 1 to this. */
unsigned astro_instr_key_count(void);
/** Fills *info with key id. Returns 0, or -EINVAL for an id not registered or a NULL info. */
int astro_instr_key_get(unsigned id, struct astro_instr_key_info *info);
/** The index-th named value of key id (in the order of registration): its value and name. Returns 0 or -EINVAL. */
int astro_instr_value_get(unsigned id, unsigned index, uint64_t *value, const char **name);

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_INSTRUMENT_H__ */
