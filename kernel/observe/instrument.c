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
 *
 * The delayed event list (seed 001's third part of the context): after
 * astro_instr_task_leave_cpu() the task is off its CPU, and the states and
 * bursts its thread raises for it until it is back are held in its context,
 * checked against what it will have open, and emitted when a thread comes
 * back to it (astro_instr_task_enter_cpu(), its callback, its next run):
 * after what it left open, in the order raised, dated then (Nanos++'s
 * deferred events carry no date: they are stamped when they are emitted,
 * which keeps each thread's timeline in order). A task freed with some still
 * held flushes them on the freeing thread: opened and closed there, balanced.
 *
 * The replay (astro_instr_context_set()): entries a task gets back may be
 * hidden, kept on the stack but not shown to the observers: a hidden state
 * shows once the states above it close, a hidden burst once the later
 * burst of its key closes.
 *
 * The event-key dictionary is a registry (a mutex, a hash table by name),
 * off the task path: named at init, read by the tools and the recorder.
 *
 * Built with ASTRO_DISABLE_INSTRUMENTATION, the kernel's calls vanish and
 * the states and bursts answer -ENOSYS (the dictionary still works).
 */
#include "observe/observe.h"
#include <astrolabe/instrument.h>
#include <inttypes.h>

struct state_stack
{
	const char *states[ASTRO_INSTR_MAX_DEPTH];
	const struct starpu_task *state_owner[ASTRO_INSTR_MAX_DEPTH]; /* the task running when it was opened (NULL: none) */
	bool state_hidden[ASTRO_INSTR_MAX_DEPTH];                     /* kept, not shown (a replay of only the last state) */
	unsigned depth;
	/* What the observers saw: emitted[0..nemitted). */
	const char *emitted[ASTRO_INSTR_MAX_DEPTH];
	unsigned nemitted;
	const char *bursts[ASTRO_INSTR_MAX_DEPTH];
	uint64_t burst_value[ASTRO_INSTR_MAX_DEPTH];
	const struct starpu_task *burst_owner[ASTRO_INSTR_MAX_DEPTH];
	bool burst_hidden[ASTRO_INSTR_MAX_DEPTH]; /* kept, not shown (a replay of only the last burst of each key) */
	unsigned nbursts;
};

static _ASTRO_TLS struct state_stack stack;
static int states_off; /* atomic */
static int replay = ASTRO_INSTR_CONTEXT_STACKED_STATES_AND_BURSTS; /* atomic */

#ifdef ASTRO_DISABLE_INSTRUMENTATION
#define COMPILED_OUT(fn, ret)                                                                                                          \
	do {                                                                                                                           \
		_astro_error(fn ": Astrolabe was configured with --disable-instrumentation: reconfigure without it to instrument"); \
		return ret;                                                                                                            \
	} while (0)
#else
#define COMPILED_OUT(fn, ret) (void)0
#endif

_ASTRO_TLS unsigned _astro_instr_task_open;

/* The delayed event list: what a thread raises for the task it runs while that task is off its CPU. */
enum delayed_kind
{
	DELAYED_STATE_OPEN,
	DELAYED_STATE_CLOSE,
	DELAYED_BURST_OPEN,
	DELAYED_BURST_CLOSE
};
static _ASTRO_TLS struct starpu_task *away_task; /* the task this thread runs, off its CPU (NULL: none) */
static _ASTRO_TLS bool *away_flag;               /* ... its saved flag, the key of its context */
static int delay(enum delayed_kind kind, const char *label, uint64_t value);

/* One event raised for a task off its CPU. */
struct delayed_event
{
	enum delayed_kind kind;
	const char *label; /* the state or the burst's key (NULL: a state close) */
	uint64_t value;
};
/* Most events a task off its CPU holds: more is surely a loop that forgot astro_instr_task_enter_cpu(). */
#define MAX_DELAYED 65536
/* What a task left open: its states (bottom first) and bursts, until a thread comes back to it;
 * and what was raised for it since, while it is off its CPU. */
struct saved_context
{
	unsigned nstates, nbursts;
	const char *states[ASTRO_INSTR_MAX_DEPTH];
	const char *bursts[ASTRO_INSTR_MAX_DEPTH];
	uint64_t burst_value[ASTRO_INSTR_MAX_DEPTH];
	GArray *delayed; /* struct delayed_event, in the order raised (NULL: none yet) */
	/* What it will have open once the delayed events apply: how many states, which burst keys. */
	unsigned after_nstates, after_nbursts;
	const char *after_bursts[ASTRO_INSTR_MAX_DEPTH];
};

static starpu_pthread_mutex_t saved_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *saved; /* a job's saved flag -> struct saved_context, for the flags set */

static void context_free(void *p)
{
	struct saved_context *ctx = p;
	if (ctx->delayed)
		g_array_free(ctx->delayed, TRUE);
	free(ctx);
}

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
	const char *shown[ASTRO_INSTR_MAX_DEPTH];
	unsigned nshown = 0, common = 0;
	for (unsigned i = 0; i < stack.depth; i++)
		if (!stack.state_hidden[i])
			shown[nshown++] = stack.states[i];
	while (common < stack.nemitted && common < nshown && stack.emitted[common] == shown[common])
		common++;
	while (stack.nemitted > common) {
		stack.nemitted--;
		emit(ASTRO_MOMENT_STATE_END, stack.emitted[stack.nemitted], 0);
	}
	for (; stack.nemitted < nshown; stack.nemitted++) {
		stack.emitted[stack.nemitted] = shown[stack.nemitted];
		emit(ASTRO_MOMENT_STATE_BEGIN, shown[stack.nemitted], 0);
	}
}

/* Under saved_lock: the context kept under saved_flag (NULL: none), the table made at first use. */
static struct saved_context *saved_lookup(bool *saved_flag)
{
	if (!saved)
		saved = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, context_free);
	return g_hash_table_lookup(saved, saved_flag);
}

/* The calling thread runs a task that is off its CPU: what it raises is held for the task. */
static inline bool raised_while_away(void)
{
	return STARPU_UNLIKELY(away_task != NULL) && away_task == _astro_current_task;
}

static void state_push(const char *state, const struct starpu_task *owner)
{
	stack.state_owner[stack.depth] = owner;
	stack.state_hidden[stack.depth] = false;
	stack.states[stack.depth++] = state;
	if (owner)
		_astro_instr_task_open++;
	catch_up();
}

static void state_pop(void)
{
	stack.depth--;
	if (stack.state_owner[stack.depth] && _astro_instr_task_open)
		_astro_instr_task_open--;
	if (stack.depth)
		stack.state_hidden[stack.depth - 1] = false; /* the state below is current again */
	catch_up();
}

int astro_instr_state_open(const char *state)
{
	COMPILED_OUT("astro_instr_state_open", -ENOSYS);
	if (!state) {
		_astro_error("astro_instr_state_open: NULL state: give the state's name");
		return -EINVAL;
	}
	if (raised_while_away())
		return delay(DELAYED_STATE_OPEN, state, 0);
	if (stack.depth == ASTRO_INSTR_MAX_DEPTH) {
		_astro_error("astro_instr_state_open(\"%s\"): %d states are open on this thread already: close some first",
			     state, ASTRO_INSTR_MAX_DEPTH);
		return -ENOSPC;
	}
	state_push(state, _astro_current_task);
	return 0;
}

int astro_instr_state_close(void)
{
	COMPILED_OUT("astro_instr_state_close", -ENOSYS);
	if (raised_while_away())
		return delay(DELAYED_STATE_CLOSE, NULL, 0);
	if (!stack.depth) {
		_astro_error("astro_instr_state_close: no state is open on this thread: open one with astro_instr_state_open");
		return -EINVAL;
	}
	state_pop();
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
	memmove(&stack.burst_hidden[i], &stack.burst_hidden[i + 1], after * sizeof(stack.burst_hidden[0]));
	stack.nbursts--;
}

static bool same_key(const char *a, const char *b)
{
	return a == b || strcmp(a, b) == 0;
}

static void burst_push(const char *key, uint64_t value, const struct starpu_task *owner)
{
	stack.burst_owner[stack.nbursts] = owner;
	stack.burst_value[stack.nbursts] = value;
	stack.burst_hidden[stack.nbursts] = false;
	stack.bursts[stack.nbursts++] = key;
	if (owner)
		_astro_instr_task_open++;
	emit(ASTRO_MOMENT_BURST_BEGIN, key, value);
}

/* Ends the last burst of key (of owner's only, unless any): false when there is none. */
static bool burst_pop(const char *key, const struct starpu_task *owner, bool any)
{
	for (unsigned i = stack.nbursts; key && i-- > 0;) {
		if (same_key(stack.bursts[i], key) && (any || stack.burst_owner[i] == owner)) {
			if (stack.burst_owner[i] && _astro_instr_task_open)
				_astro_instr_task_open--;
			remove_burst(i);
			emit(ASTRO_MOMENT_BURST_END, key, 0);
			/* A hidden older burst of the key shows again. */
			for (unsigned j = i; j-- > 0;) {
				if (!same_key(stack.bursts[j], key))
					continue;
				if (stack.burst_hidden[j]) {
					stack.burst_hidden[j] = false;
					emit(ASTRO_MOMENT_BURST_BEGIN, stack.bursts[j], stack.burst_value[j]);
				}
				break;
			}
			return true;
		}
	}
	return false;
}

int astro_instr_burst_open(const char *key, uint64_t value)
{
	COMPILED_OUT("astro_instr_burst_open", -ENOSYS);
	if (!key) {
		_astro_error("astro_instr_burst_open: NULL key: give the burst's name");
		return -EINVAL;
	}
	if (raised_while_away())
		return delay(DELAYED_BURST_OPEN, key, value);
	if (stack.nbursts == ASTRO_INSTR_MAX_DEPTH) {
		_astro_error("astro_instr_burst_open(\"%s\"): %d bursts are open on this thread already: close some first",
			     key, ASTRO_INSTR_MAX_DEPTH);
		return -ENOSPC;
	}
	burst_push(key, value, _astro_current_task);
	return 0;
}

int astro_instr_burst_close(const char *key)
{
	COMPILED_OUT("astro_instr_burst_close", -ENOSYS);
	if (key && raised_while_away())
		return delay(DELAYED_BURST_CLOSE, key, 0);
	if (burst_pop(key, NULL, true))
		return 0;
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
	COMPILED_OUT("astro_instr_state_disable", );
	__atomic_store_n(&states_off, 1, __ATOMIC_RELAXED);
}

void astro_instr_state_enable(void)
{
	COMPILED_OUT("astro_instr_state_enable", );
	__atomic_store_n(&states_off, 0, __ATOMIC_RELAXED);
	catch_up();
}

/* ------------------------------------------------------ per-task context */

int astro_instr_context_set(enum astro_instr_context context)
{
	if ((unsigned)context > ASTRO_INSTR_CONTEXT_STACKED_STATES_AND_BURSTS) {
		_astro_error("astro_instr_context_set(%d): no such replay: give one of enum astro_instr_context", (int)context);
		return -EINVAL;
	}
	__atomic_store_n(&replay, (int)context, __ATOMIC_RELAXED);
	return 0;
}

enum astro_instr_context astro_instr_context_get(void)
{
	return (enum astro_instr_context)__atomic_load_n(&replay, __ATOMIC_RELAXED);
}

/* The thread is back with the task it ran off its CPU, or leaves it for good: it is no longer away. */
static void come_back(bool *saved_flag)
{
	if (away_flag != saved_flag)
		return;
	away_task = NULL;
	away_flag = NULL;
	if (_astro_instr_task_open)
		_astro_instr_task_open--; /* the count astro_instr_task_leave_cpu() took, so that the kernel's leave comes here */
}

/* Adds what leaving left open to older: on top of its states and bursts, or after its delayed events. */
static void merge_left(struct saved_context *older, const struct saved_context *left)
{
	bool after_delayed = older->delayed && older->delayed->len;
	for (unsigned i = 0; i < left->nstates && older->after_nstates < ASTRO_INSTR_MAX_DEPTH; i++) {
		if (after_delayed)
			g_array_append_val(older->delayed, ((struct delayed_event){ DELAYED_STATE_OPEN, left->states[i], 0 }));
		else
			older->states[older->nstates++] = left->states[i];
		older->after_nstates++;
	}
	for (unsigned i = 0; i < left->nbursts && older->after_nbursts < ASTRO_INSTR_MAX_DEPTH; i++) {
		if (after_delayed) {
			g_array_append_val(older->delayed, ((struct delayed_event){ DELAYED_BURST_OPEN, left->bursts[i], left->burst_value[i] }));
		} else {
			older->bursts[older->nbursts] = left->bursts[i];
			older->burst_value[older->nbursts++] = left->burst_value[i];
		}
		older->after_bursts[older->after_nbursts++] = left->bursts[i];
	}
}

void _astro_instr_task_leave(struct starpu_task *task, bool *saved_flag)
{
	come_back(saved_flag); /* its run or its callback ends off its CPU: what it raised meanwhile waits for its next entry or its end */
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
		if (!stack.burst_hidden[i])
			emit(ASTRO_MOMENT_BURST_END, stack.bursts[i], 0);
		remove_burst(i);
	}
	starpu_pthread_mutex_lock(&saved_lock);
	struct saved_context *older = saved_lookup(saved_flag);
	if (older) {
		/* Left twice without coming back: what it opened since goes on top. */
		merge_left(older, &local);
	} else if ((ctx = malloc(sizeof(*ctx)))) {
		*ctx = local;
		ctx->after_nstates = local.nstates;
		ctx->after_nbursts = local.nbursts;
		memcpy(ctx->after_bursts, local.bursts, sizeof(local.bursts));
		g_hash_table_replace(saved, saved_flag, ctx);
	}
	if (older || ctx)
		__atomic_store_n(saved_flag, true, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&saved_lock);
	if (!older && !ctx)
		_astro_error("out of memory keeping the instrumentation states of task '%s': they are not opened again", starpu_task_get_name(task));
}

/* Applies the events raised for task while it was off its CPU, in order, as if raised now; counts what does not fit. */
static unsigned apply_delayed(struct starpu_task *task, const GArray *delayed)
{
	unsigned dropped = 0, lost_states = 0; /* opens that did not fit: their closes go too */
	for (unsigned i = 0; i < delayed->len; i++) {
		const struct delayed_event *e = &g_array_index(delayed, struct delayed_event, i);
		switch (e->kind) {
		case DELAYED_STATE_OPEN:
			if (stack.depth < ASTRO_INSTR_MAX_DEPTH)
				state_push(e->label, task);
			else
				dropped++, lost_states++;
			break;
		case DELAYED_STATE_CLOSE:
			if (lost_states)
				dropped++, lost_states--;
			else if (stack.depth && stack.state_owner[stack.depth - 1] == task)
				state_pop();
			else
				dropped++;
			break;
		case DELAYED_BURST_OPEN:
			if (stack.nbursts < ASTRO_INSTR_MAX_DEPTH)
				burst_push(e->label, e->value, task);
			else
				dropped++;
			break;
		case DELAYED_BURST_CLOSE: dropped += !burst_pop(e->label, task, false); break;
		}
	}
	return dropped;
}

void _astro_instr_task_enter(struct starpu_task *task, bool *saved_flag)
{
	come_back(saved_flag);
	starpu_pthread_mutex_lock(&saved_lock);
	struct saved_context *ctx = saved ? g_hash_table_lookup(saved, saved_flag) : NULL;
	if (ctx)
		g_hash_table_steal(saved, saved_flag);
	__atomic_store_n(saved_flag, false, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&saved_lock);
	if (!ctx)
		return;
	int how = __atomic_load_n(&replay, __ATOMIC_RELAXED);
	/* Room is checked as at an open: what does not fit is dropped with one message. */
	unsigned n = MIN(ctx->nstates, ASTRO_INSTR_MAX_DEPTH - stack.depth);
	for (unsigned i = 0; i < n; i++) {
		stack.state_owner[stack.depth] = task;
		stack.state_hidden[stack.depth] = !(how & ASTRO_INSTR_CONTEXT_STACKED_STATES) && i + 1 < n;
		stack.states[stack.depth++] = ctx->states[i];
	}
	_astro_instr_task_open += n;
	catch_up();
	unsigned nb = MIN(ctx->nbursts, ASTRO_INSTR_MAX_DEPTH - stack.nbursts);
	for (unsigned i = 0; i < nb; i++) {
		bool hidden = false;
		for (unsigned j = i + 1; j < nb && !(how & ASTRO_INSTR_CONTEXT_STACKED_BURSTS) && !hidden; j++)
			hidden = same_key(ctx->bursts[j], ctx->bursts[i]);
		stack.burst_owner[stack.nbursts] = task;
		stack.burst_value[stack.nbursts] = ctx->burst_value[i];
		stack.burst_hidden[stack.nbursts] = hidden;
		stack.bursts[stack.nbursts++] = ctx->bursts[i];
		_astro_instr_task_open++;
		if (!hidden)
			emit(ASTRO_MOMENT_BURST_BEGIN, ctx->bursts[i], ctx->burst_value[i]);
	}
	/* Then what was raised for it while it was off its CPU, dated now. */
	unsigned dropped = ctx->nstates - n + ctx->nbursts - nb + (ctx->delayed ? apply_delayed(task, ctx->delayed) : 0);
	if (dropped)
		_astro_error("task '%s': %u of its instrumentation states and bursts (or the events raised while it was off its CPU) "
			     "do not fit on this thread's stack (%d each): they are dropped",
			     starpu_task_get_name(task), dropped, ASTRO_INSTR_MAX_DEPTH);
	context_free(ctx);
}

void _astro_instr_task_away(struct starpu_task *task, bool *saved_flag)
{
	if (away_flag == saved_flag)
		return; /* off its CPU already */
	_astro_instr_task_leave(task, saved_flag);
	/* It has a context now, even with nothing left open: the events raised for it until it is back go there. */
	starpu_pthread_mutex_lock(&saved_lock);
	struct saved_context *ctx = saved_lookup(saved_flag);
	if (!ctx && (ctx = calloc(1, sizeof(*ctx))))
		g_hash_table_replace(saved, saved_flag, ctx);
	if (ctx)
		__atomic_store_n(saved_flag, true, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&saved_lock);
	if (!ctx) {
		_astro_error("out of memory keeping the instrumentation context of task '%s': what it raises off its CPU is emitted at once",
			     starpu_task_get_name(task));
		return;
	}
	if (!away_flag)
		_astro_instr_task_open++; /* so that the kernel's leave of the task (its return) sees it is away */
	away_task = task;
	away_flag = saved_flag;
}

/* An event raised for away_task: checked against what it will have open, then held in its context. */
static int delay(enum delayed_kind kind, const char *label, uint64_t value)
{
	static const char *const fns[] = { "astro_instr_state_open", "astro_instr_state_close", "astro_instr_burst_open",
					   "astro_instr_burst_close" };
	const char *problem = NULL;
	int ret = 0;
	starpu_pthread_mutex_lock(&saved_lock);
	struct saved_context *ctx = saved ? g_hash_table_lookup(saved, away_flag) : NULL;
	if (!ctx) {
		problem = "its context is gone (freed?)";
		ret = -EINVAL;
	} else if (ctx->delayed && ctx->delayed->len >= MAX_DELAYED) {
		problem = "it holds " G_STRINGIFY(MAX_DELAYED) " events already: call astro_instr_task_enter_cpu() to emit them";
		ret = -ENOSPC;
	} else if (kind == DELAYED_STATE_OPEN && ctx->after_nstates == ASTRO_INSTR_MAX_DEPTH) {
		problem = "it has " G_STRINGIFY(ASTRO_INSTR_MAX_DEPTH) " states open already: close some first";
		ret = -ENOSPC;
	} else if (kind == DELAYED_STATE_CLOSE && !ctx->after_nstates) {
		problem = "it has no state open: open one with astro_instr_state_open";
		ret = -EINVAL;
	} else if (kind == DELAYED_BURST_OPEN && ctx->after_nbursts == ASTRO_INSTR_MAX_DEPTH) {
		problem = "it has " G_STRINGIFY(ASTRO_INSTR_MAX_DEPTH) " bursts open already: close some first";
		ret = -ENOSPC;
	} else if (kind == DELAYED_BURST_CLOSE) {
		unsigned i = ctx->after_nbursts;
		while (i > 0 && !same_key(ctx->after_bursts[i - 1], label))
			i--;
		if (i) {
			memmove(&ctx->after_bursts[i - 1], &ctx->after_bursts[i], (ctx->after_nbursts - i) * sizeof(ctx->after_bursts[0]));
			ctx->after_nbursts--;
		} else {
			problem = "it has no such burst open: raise it with astro_instr_burst_open";
			ret = -EINVAL;
		}
	} else if (kind == DELAYED_STATE_OPEN) {
		ctx->after_nstates++;
	} else if (kind == DELAYED_STATE_CLOSE) {
		ctx->after_nstates--;
	} else {
		ctx->after_bursts[ctx->after_nbursts++] = label;
	}
	if (!ret) {
		if (!ctx->delayed)
			ctx->delayed = g_array_new(FALSE, FALSE, sizeof(struct delayed_event));
		g_array_append_val(ctx->delayed, ((struct delayed_event){ kind, label, value }));
	}
	starpu_pthread_mutex_unlock(&saved_lock);
	if (ret)
		_astro_error("%s(%s%s%s): task '%s' is off its CPU (astro_instr_task_leave_cpu) and %s", fns[kind], label ? "\"" : "",
			     label ? label : "", label ? "\"" : "", starpu_task_get_name(away_task), problem);
	return ret;
}

/* A task freed with events still held (it ended off its CPU): they are emitted here, and what they opened
 * closes at once; a close of what it had open when it left is already in the trace (it ended then). */
static void flush_delayed(const GArray *delayed)
{
	const char *states[ASTRO_INSTR_MAX_DEPTH], *bursts[ASTRO_INSTR_MAX_DEPTH];
	unsigned nstates = 0, nbursts = 0;
	bool show_states = !__atomic_load_n(&states_off, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < delayed->len; i++) {
		const struct delayed_event *e = &g_array_index(delayed, struct delayed_event, i);
		switch (e->kind) {
		case DELAYED_STATE_OPEN:
			if (nstates == ASTRO_INSTR_MAX_DEPTH)
				break;
			states[nstates++] = e->label;
			if (show_states)
				emit(ASTRO_MOMENT_STATE_BEGIN, e->label, 0);
			break;
		case DELAYED_STATE_CLOSE:
			if (nstates && show_states)
				emit(ASTRO_MOMENT_STATE_END, states[nstates - 1], 0);
			nstates -= nstates > 0;
			break;
		case DELAYED_BURST_OPEN:
			if (nbursts == ASTRO_INSTR_MAX_DEPTH)
				break;
			bursts[nbursts++] = e->label;
			emit(ASTRO_MOMENT_BURST_BEGIN, e->label, e->value);
			break;
		case DELAYED_BURST_CLOSE:
			for (unsigned j = nbursts; j-- > 0;) {
				if (same_key(bursts[j], e->label)) {
					emit(ASTRO_MOMENT_BURST_END, bursts[j], 0);
					memmove(&bursts[j], &bursts[j + 1], (--nbursts - j) * sizeof(bursts[0]));
					break;
				}
			}
			break;
		}
	}
	while (nbursts)
		emit(ASTRO_MOMENT_BURST_END, bursts[--nbursts], 0);
	while (nstates) {
		nstates--;
		if (show_states)
			emit(ASTRO_MOMENT_STATE_END, states[nstates], 0);
	}
}

void _astro_instr_forget(bool *saved_flag)
{
	come_back(saved_flag);
	starpu_pthread_mutex_lock(&saved_lock);
	struct saved_context *ctx = saved ? g_hash_table_lookup(saved, saved_flag) : NULL;
	if (ctx)
		g_hash_table_steal(saved, saved_flag);
	__atomic_store_n(saved_flag, false, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&saved_lock);
	if (!ctx)
		return;
	if (ctx->delayed)
		flush_delayed(ctx->delayed);
	context_free(ctx);
}

/* ------------------------------------------------------ event-key dictionary */

struct named_value
{
	uint64_t value;
	char *name;
};

struct key
{
	unsigned id;
	char *name, *description;
	GArray *values; /* struct named_value, in the order of registration */
};

static starpu_pthread_mutex_t keys_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *keys_by_name; /* name -> struct key */
static GPtrArray *keys;          /* id - 1 -> struct key */

static struct key *key_locked(const char *name)
{
	return keys_by_name && name ? g_hash_table_lookup(keys_by_name, name) : NULL;
}

int astro_instr_key_register(const char *name, const char *description)
{
	if (!name || !*name) {
		_astro_error("astro_instr_key_register: NULL or empty key name: give the key's name");
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&keys_lock);
	struct key *k = key_locked(name);
	int ret;
	if (k) {
		ret = !description || strcmp(description, k->description) == 0 ? (int)k->id : -EEXIST;
	} else {
		if (!keys) {
			keys_by_name = g_hash_table_new(g_str_hash, g_str_equal);
			keys = g_ptr_array_new();
		}
		k = g_new0(struct key, 1);
		k->id = keys->len + 1;
		k->name = g_strdup(name);
		k->description = g_strdup(description ? description : "");
		k->values = g_array_new(FALSE, FALSE, sizeof(struct named_value));
		g_ptr_array_add(keys, k);
		g_hash_table_insert(keys_by_name, k->name, k);
		ret = (int)k->id;
	}
	starpu_pthread_mutex_unlock(&keys_lock);
	if (ret == -EEXIST)
		_astro_error("astro_instr_key_register(\"%s\"): the key is registered with another description (\"%s\"): give the same one or NULL",
			     name, k->description);
	return ret;
}

int astro_instr_key_lookup(const char *name)
{
	starpu_pthread_mutex_lock(&keys_lock);
	struct key *k = key_locked(name);
	int ret = k ? (int)k->id : -ENOENT;
	starpu_pthread_mutex_unlock(&keys_lock);
	return ret;
}

static struct named_value *value_locked(struct key *k, const char *name, uint64_t value)
{
	for (unsigned i = 0; i < k->values->len; i++) {
		struct named_value *v = &g_array_index(k->values, struct named_value, i);
		if (name ? strcmp(v->name, name) == 0 : v->value == value)
			return v;
	}
	return NULL;
}

int astro_instr_value_register(const char *key, uint64_t value, const char *name)
{
	if (!name || !*name) {
		_astro_error("astro_instr_value_register(\"%s\", %" PRIu64 "): NULL or empty name: give the value's name", key ? key : "(null)",
			     value);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&keys_lock);
	struct key *k = key_locked(key);
	struct named_value *by_value = k ? value_locked(k, NULL, value) : NULL, *by_name = k ? value_locked(k, name, 0) : NULL;
	int ret = 0;
	if (!k)
		ret = -ENOENT;
	else if (by_value != by_name)
		ret = -EEXIST;
	else if (!by_value)
		g_array_append_val(k->values, ((struct named_value){ value, g_strdup(name) }));
	starpu_pthread_mutex_unlock(&keys_lock);
	if (ret == -ENOENT)
		_astro_error("astro_instr_value_register(\"%s\", %" PRIu64 ", \"%s\"): no such key: register it with astro_instr_key_register first",
			     key ? key : "(null)", value, name);
	else if (ret == -EEXIST)
		_astro_error("astro_instr_value_register(\"%s\", %" PRIu64 ", \"%s\"): the value or the name is taken already (\"%s\" = %" PRIu64
			     "): one name per value",
			     key, value, name, by_value ? by_value->name : by_name->name, by_value ? by_value->value : by_name->value);
	return ret;
}

int astro_instr_value_lookup(const char *key, const char *name, uint64_t *value)
{
	starpu_pthread_mutex_lock(&keys_lock);
	struct key *k = key_locked(key);
	struct named_value *v = k && name ? value_locked(k, name, 0) : NULL;
	if (v && value)
		*value = v->value;
	starpu_pthread_mutex_unlock(&keys_lock);
	return v ? 0 : -ENOENT;
}

const char *astro_instr_value_name(const char *key, uint64_t value)
{
	starpu_pthread_mutex_lock(&keys_lock);
	struct key *k = key_locked(key);
	struct named_value *v = k ? value_locked(k, NULL, value) : NULL;
	starpu_pthread_mutex_unlock(&keys_lock);
	return v ? v->name : NULL; /* never freed: lives as long as the process */
}

unsigned astro_instr_key_count(void)
{
	starpu_pthread_mutex_lock(&keys_lock);
	unsigned n = keys ? keys->len : 0;
	starpu_pthread_mutex_unlock(&keys_lock);
	return n;
}

static struct key *key_by_id_locked(unsigned id)
{
	return keys && id >= 1 && id <= keys->len ? g_ptr_array_index(keys, id - 1) : NULL;
}

int astro_instr_key_get(unsigned id, struct astro_instr_key_info *info)
{
	starpu_pthread_mutex_lock(&keys_lock);
	struct key *k = key_by_id_locked(id);
	if (k && info)
		*info = (struct astro_instr_key_info){ .id = k->id, .name = k->name, .description = k->description, .nvalues = k->values->len };
	starpu_pthread_mutex_unlock(&keys_lock);
	if (!k || !info) {
		_astro_error("astro_instr_key_get(%u): %s: ids go from 1 to astro_instr_key_count()", id, info ? "no such key" : "NULL info");
		return -EINVAL;
	}
	return 0;
}

int astro_instr_value_get(unsigned id, unsigned index, uint64_t *value, const char **name)
{
	starpu_pthread_mutex_lock(&keys_lock);
	struct key *k = key_by_id_locked(id);
	struct named_value *v = k && index < k->values->len ? &g_array_index(k->values, struct named_value, index) : NULL;
	if (v) {
		if (value)
			*value = v->value;
		if (name)
			*name = v->name;
	}
	starpu_pthread_mutex_unlock(&keys_lock);
	if (!v) {
		_astro_error("astro_instr_value_get(%u, %u): no such key or value: indexes go below the key's nvalues", id, index);
		return -EINVAL;
	}
	return 0;
}
