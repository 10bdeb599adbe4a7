/*
 * Instrumentation states and bursts (astrolabe/instrument.h): each thread
 * keeps its state stack and how much of it the observers were told; while
 * state instrumentation is off only the stack changes, and the next state
 * call after it is on again tells the observers the difference.
 */
#include "kernel.h"
#include <astrolabe/instrument.h>

struct state_stack
{
	const char *states[ASTRO_INSTR_MAX_DEPTH];
	unsigned depth;
	/* What the observers saw: emitted[0..nemitted). */
	const char *emitted[ASTRO_INSTR_MAX_DEPTH];
	unsigned nemitted;
	const char *bursts[ASTRO_INSTR_MAX_DEPTH];
	unsigned nbursts;
};

static __thread struct state_stack stack;
static int states_off; /* atomic */

static void emit(enum astro_moment moment, const char *label, uint64_t value)
{
	switch (moment) {
	case ASTRO_MOMENT_STATE_BEGIN: _ASTRO_OBSERVE(ASTRO_MOMENT_STATE_BEGIN, .workerid = _astro_worker_id(), .label = label); break;
	case ASTRO_MOMENT_STATE_END: _ASTRO_OBSERVE(ASTRO_MOMENT_STATE_END, .workerid = _astro_worker_id(), .label = label); break;
	case ASTRO_MOMENT_BURST_BEGIN:
		_ASTRO_OBSERVE(ASTRO_MOMENT_BURST_BEGIN, .workerid = _astro_worker_id(), .label = label, .other_id = value);
		break;
	default: _ASTRO_OBSERVE(ASTRO_MOMENT_BURST_END, .workerid = _astro_worker_id(), .label = label); break;
	}
}

/* Brings what the observers saw in line with the stack: closes down to the common part, opens the rest. */
static void catch_up(void)
{
	if (__atomic_load_n(&states_off, __ATOMIC_RELAXED))
		return;
	unsigned common = 0;
	while (common < stack.nemitted && common < stack.depth && stack.emitted[common] == stack.states[common])
		common++;
	while (stack.nemitted > common) {
		stack.nemitted--;
		emit(ASTRO_MOMENT_STATE_END, stack.emitted[stack.nemitted], 0);
	}
	for (; stack.nemitted < stack.depth; stack.nemitted++) {
		stack.emitted[stack.nemitted] = stack.states[stack.nemitted];
		emit(ASTRO_MOMENT_STATE_BEGIN, stack.states[stack.nemitted], 0);
	}
}

int astro_instr_state_open(const char *state)
{
	if (!state) {
		_astro_error("astro_instr_state_open: NULL state: give the state's name");
		return -EINVAL;
	}
	if (stack.depth == ASTRO_INSTR_MAX_DEPTH) {
		_astro_error("astro_instr_state_open(\"%s\"): %d states are open on this thread already: close some first",
			     state, ASTRO_INSTR_MAX_DEPTH);
		return -ENOSPC;
	}
	stack.states[stack.depth++] = state;
	catch_up();
	return 0;
}

int astro_instr_state_close(void)
{
	if (!stack.depth) {
		_astro_error("astro_instr_state_close: no state is open on this thread: open one with astro_instr_state_open");
		return -EINVAL;
	}
	stack.depth--;
	catch_up();
	return 0;
}

const char *astro_instr_state_current(void)
{
	return stack.depth ? stack.states[stack.depth - 1] : NULL;
}

int astro_instr_burst_open(const char *key, uint64_t value)
{
	if (!key) {
		_astro_error("astro_instr_burst_open: NULL key: give the burst's name");
		return -EINVAL;
	}
	if (stack.nbursts == ASTRO_INSTR_MAX_DEPTH) {
		_astro_error("astro_instr_burst_open(\"%s\"): %d bursts are open on this thread already: close some first",
			     key, ASTRO_INSTR_MAX_DEPTH);
		return -ENOSPC;
	}
	stack.bursts[stack.nbursts++] = key;
	emit(ASTRO_MOMENT_BURST_BEGIN, key, value);
	return 0;
}

int astro_instr_burst_close(const char *key)
{
	for (unsigned i = stack.nbursts; key && i-- > 0;) {
		if (stack.bursts[i] == key || strcmp(stack.bursts[i], key) == 0) {
			memmove(&stack.bursts[i], &stack.bursts[i + 1], (stack.nbursts - i - 1) * sizeof(stack.bursts[0]));
			stack.nbursts--;
			emit(ASTRO_MOMENT_BURST_END, key, 0);
			return 0;
		}
	}
	_astro_error("astro_instr_burst_close(\"%s\"): no such burst is open on this thread: raise it with astro_instr_burst_open",
		     key ? key : "(null)");
	return -EINVAL;
}

int astro_instr_state_and_burst_open(const char *state, const char *key, uint64_t value)
{
	int ret = astro_instr_state_open(state);
	if (ret)
		return ret;
	ret = astro_instr_burst_open(key, value);
	if (ret)
		astro_instr_state_close();
	return ret;
}

int astro_instr_state_and_burst_close(const char *key)
{
	int ret = astro_instr_burst_close(key);
	int ret2 = astro_instr_state_close();
	return ret ? ret : ret2;
}

void astro_instr_state_disable(void)
{
	__atomic_store_n(&states_off, 1, __ATOMIC_RELAXED);
}

void astro_instr_state_enable(void)
{
	__atomic_store_n(&states_off, 0, __ATOMIC_RELAXED);
	catch_up();
}
