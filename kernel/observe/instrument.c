/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Instrumentation states and bursts (astrolabe/instrument.h): each thread
 * keeps its state stack and how much of it the observers were told; while
 * state instrumentation is off only the stack changes, and the next state
 * call after it is on again tells the observers the difference.
 *
 * The per-task context (seed 001's InstrumentationContext): a state or burst
 * opened while a task runs belongs to that task. When the thread leaves the
 * task (its implementation returns, its callback returns) with some still
 * open, they are closed for the observers and kept with the task; when a
 * thread comes back to the task (its callback, the next run of a
 * regenerated task) they are opened again, in the same order, with the same
 * values: the worker's own states never carry a task's, and a task finds its
 * history where it left it. Free on the task path: a flag of the job and a
 * count of this thread's task-owned entries, both tested by the kernel.
 */
#include "observe/observe.h"
#include <astrolabe/instrument.h>

struct state_stack
{
	const char *states[ASTRO_INSTR_MAX_DEPTH];
	const struct starpu_task *state_owner[ASTRO_INSTR_MAX_DEPTH]; /* the task running when it was opened (NULL: none) */
	unsigned depth;
	/* What the observers saw: emitted[0..nemitted). */
	const char *emitted[ASTRO_INSTR_MAX_DEPTH];
	unsigned nemitted;
	const char *bursts[ASTRO_INSTR_MAX_DEPTH];
	uint64_t burst_value[ASTRO_INSTR_MAX_DEPTH];
	const struct starpu_task *burst_owner[ASTRO_INSTR_MAX_DEPTH];
	unsigned nbursts;
};

static _ASTRO_TLS struct state_stack stack;
static int states_off; /* atomic */

_ASTRO_TLS unsigned _astro_instr_task_open;

/* What a task left open: its states (bottom first) and bursts, until a thread comes back to it. */
struct saved_context
{
	unsigned nstates, nbursts;
	const char *states[ASTRO_INSTR_MAX_DEPTH];
	const char *bursts[ASTRO_INSTR_MAX_DEPTH];
	uint64_t burst_value[ASTRO_INSTR_MAX_DEPTH];
};

static starpu_pthread_mutex_t saved_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *saved; /* a job's saved flag -> struct saved_context, for the flags set */

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
	stack.state_owner[stack.depth] = _astro_current_task;
	stack.states[stack.depth++] = state;
	if (_astro_current_task)
		_astro_instr_task_open++;
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
	if (stack.state_owner[stack.depth] && _astro_instr_task_open)
		_astro_instr_task_open--;
	catch_up();
	return 0;
}

const char *astro_instr_state_current(void)
{
	return stack.depth ? stack.states[stack.depth - 1] : NULL;
}

static void remove_burst(unsigned i)
{
	unsigned after = stack.nbursts - i - 1;
	memmove(&stack.bursts[i], &stack.bursts[i + 1], after * sizeof(stack.bursts[0]));
	memmove(&stack.burst_value[i], &stack.burst_value[i + 1], after * sizeof(stack.burst_value[0]));
	memmove(&stack.burst_owner[i], &stack.burst_owner[i + 1], after * sizeof(stack.burst_owner[0]));
	stack.nbursts--;
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
	stack.burst_owner[stack.nbursts] = _astro_current_task;
	stack.burst_value[stack.nbursts] = value;
	stack.bursts[stack.nbursts++] = key;
	if (_astro_current_task)
		_astro_instr_task_open++;
	emit(ASTRO_MOMENT_BURST_BEGIN, key, value);
	return 0;
}

int astro_instr_burst_close(const char *key)
{
	for (unsigned i = stack.nbursts; key && i-- > 0;) {
		if (stack.bursts[i] == key || strcmp(stack.bursts[i], key) == 0) {
			if (stack.burst_owner[i] && _astro_instr_task_open)
				_astro_instr_task_open--;
			remove_burst(i);
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

/* ------------------------------------------------------ per-task context */

void _astro_instr_task_leave(struct starpu_task *task, bool *saved_flag)
{
	/* The task's states are the top of the stack (opened while it ran); its bursts may be anywhere. */
	unsigned first = stack.depth, owned_bursts = 0;
	while (first > 0 && stack.state_owner[first - 1] == task)
		first--;
	for (unsigned i = 0; i < stack.nbursts; i++)
		owned_bursts += stack.burst_owner[i] == task;
	if (first == stack.depth && !owned_bursts)
		return; /* what is open here belongs to another task (a parallel task's other member), whose end comes elsewhere */
	struct saved_context local = { 0 }, *ctx = &local;
	for (unsigned i = first; i < stack.depth; i++)
		ctx->states[ctx->nstates++] = stack.states[i];
	_astro_instr_task_open -= stack.depth - first;
	stack.depth = first;
	catch_up();
	for (unsigned i = 0; i < stack.nbursts;) {
		if (stack.burst_owner[i] != task) {
			i++;
			continue;
		}
		ctx->bursts[ctx->nbursts] = stack.bursts[i];
		ctx->burst_value[ctx->nbursts++] = stack.burst_value[i];
		_astro_instr_task_open--;
		emit(ASTRO_MOMENT_BURST_END, stack.bursts[i], 0);
		remove_burst(i);
	}
	ctx = malloc(sizeof(*ctx));
	if (!ctx) {
		_astro_error("out of memory keeping the instrumentation states of task '%s': they are not opened again", starpu_task_get_name(task));
		return;
	}
	*ctx = local;
	starpu_pthread_mutex_lock(&saved_lock);
	if (!saved)
		saved = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free);
	g_hash_table_replace(saved, saved_flag, ctx);
	__atomic_store_n(saved_flag, true, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&saved_lock);
}

void _astro_instr_task_enter(struct starpu_task *task, bool *saved_flag)
{
	starpu_pthread_mutex_lock(&saved_lock);
	struct saved_context *ctx = saved ? g_hash_table_lookup(saved, saved_flag) : NULL;
	if (ctx)
		g_hash_table_steal(saved, saved_flag);
	__atomic_store_n(saved_flag, false, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&saved_lock);
	if (!ctx)
		return;
	/* Room is checked as at an open: what does not fit is dropped with one message. */
	unsigned n = MIN(ctx->nstates, ASTRO_INSTR_MAX_DEPTH - stack.depth);
	for (unsigned i = 0; i < n; i++) {
		stack.state_owner[stack.depth] = task;
		stack.states[stack.depth++] = ctx->states[i];
	}
	_astro_instr_task_open += n;
	catch_up();
	unsigned nb = MIN(ctx->nbursts, ASTRO_INSTR_MAX_DEPTH - stack.nbursts);
	for (unsigned i = 0; i < nb; i++) {
		stack.burst_owner[stack.nbursts] = task;
		stack.burst_value[stack.nbursts] = ctx->burst_value[i];
		stack.bursts[stack.nbursts++] = ctx->bursts[i];
		_astro_instr_task_open++;
		emit(ASTRO_MOMENT_BURST_BEGIN, ctx->bursts[i], ctx->burst_value[i]);
	}
	if (n < ctx->nstates || nb < ctx->nbursts)
		_astro_error("task '%s': %u of its instrumentation states and bursts do not fit on this thread's stack (%d each): they are dropped",
			     starpu_task_get_name(task), ctx->nstates - n + ctx->nbursts - nb, ASTRO_INSTR_MAX_DEPTH);
	free(ctx);
}

void _astro_instr_forget(bool *saved_flag)
{
	starpu_pthread_mutex_lock(&saved_lock);
	if (saved)
		g_hash_table_remove(saved, saved_flag);
	__atomic_store_n(saved_flag, false, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&saved_lock);
}
