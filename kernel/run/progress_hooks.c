/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Progression and idle hooks (starpu_expert.h): functions the program has the
 * workers call on their threads, so that something outside the runtime (a
 * communication library polling its requests) makes progress there. A worker
 * calls the progression hooks at each round of its scheduling loop, busy or
 * idle, and the idle hooks at each round that found no task. A hook's result
 * says whether the workers may sleep: one that returns 0 keeps the idle ones
 * polling instead of sleeping until woken.
 *
 * With no hook, a round pays one load and a branch that always goes the same
 * way (worker_loop.c). A table is read under a read lock while its hooks
 * run, so that once a deregistration returns, no worker calls that hook any
 * more.
 */
#include "run/run.h"

#define MAX_HOOKS 16

struct hook
{
	unsigned (*func)(void *arg);         /* NULL: the slot is free */
	void *arg;
};

struct hook_table
{
	const char *kind;                    /* "progression" or "idle", for the messages */
	const char *a_kind;                  /* the same with its article */
	unsigned *nhooks;                    /* how many are registered (atomic), read by worker_loop.c */
	starpu_pthread_rwlock_t lock;
	struct hook hooks[MAX_HOOKS];
};

unsigned _astro_progression_nhooks;
unsigned _astro_idle_nhooks;
static struct hook_table progression = { "progression", "a progression", &_astro_progression_nhooks, STARPU_PTHREAD_RWLOCK_INITIALIZER, { { 0 } } };
static struct hook_table idle = { "idle", "an idle", &_astro_idle_nhooks, STARPU_PTHREAD_RWLOCK_INITIALIZER, { { 0 } } };
/* The table whose hooks this thread runs: a hook (de)registering there must not wait for the lock it holds. */
static _ASTRO_TLS const struct hook_table *running;

static unsigned hooks_run(struct hook_table *t)
{
	unsigned may_block = 1;
	starpu_pthread_rwlock_rdlock(&t->lock);
	const struct hook_table *outer = running;
	running = t;
	for (unsigned i = 0; i < MAX_HOOKS; i++) {
		unsigned (*func)(void *) = __atomic_load_n(&t->hooks[i].func, __ATOMIC_ACQUIRE);
		if (func && !func(t->hooks[i].arg))
			may_block = 0;
	}
	running = outer;
	starpu_pthread_rwlock_unlock(&t->lock);
	return may_block;
}

unsigned _astro_progression_hooks_run(void)
{
	return hooks_run(&progression);
}

unsigned _astro_idle_hooks_run(void)
{
	return hooks_run(&idle);
}

static int hook_register(struct hook_table *t, unsigned (*func)(void *arg), void *arg)
{
	if (!func) {
		_astro_error("starpu_%s_hook_register: NULL function: give the function the workers should call", t->kind);
		return -EINVAL;
	}
	if (running == t) {
		_astro_error("starpu_%s_hook_register: called from %s hook, which would wait for itself: "
			     "register it from outside the hooks", t->kind, t->a_kind);
		return -EDEADLK;
	}
	starpu_pthread_rwlock_wrlock(&t->lock);
	int id = -1;
	for (unsigned i = 0; i < MAX_HOOKS && id < 0; i++)
		if (!t->hooks[i].func) {
			t->hooks[i].arg = arg;
			__atomic_store_n(&t->hooks[i].func, func, __ATOMIC_RELEASE);
			__atomic_add_fetch(t->nhooks, 1, __ATOMIC_RELEASE);
			id = (int)i;
		}
	starpu_pthread_rwlock_unlock(&t->lock);
	if (id < 0) {
		_astro_error("starpu_%s_hook_register: all %d %s hooks are taken: deregister one first",
			     t->kind, MAX_HOOKS, t->kind);
		return -1;
	}
	/* Sleeping workers call no hook: wake them so that they start (and ask whether they may sleep). */
	starpu_wake_all_blocked_workers();
	return id;
}

static void hook_deregister(struct hook_table *t, int hook_id)
{
	if (hook_id < 0 || hook_id >= MAX_HOOKS) {
		_astro_error("starpu_%s_hook_deregister: no %s hook %d (ids go from 0 to %d): nothing done; "
			     "give what starpu_%s_hook_register() returned", t->kind, t->kind, hook_id, MAX_HOOKS - 1, t->kind);
		return;
	}
	/* From a hook of this table, this thread holds the read lock: clear the slot without waiting
	 * (other workers may be finishing a call of it now). Otherwise wait until no worker runs it. */
	bool locked = running != t;
	if (locked)
		starpu_pthread_rwlock_wrlock(&t->lock);
	unsigned (*func)(void *) = __atomic_exchange_n(&t->hooks[hook_id].func, NULL, __ATOMIC_ACQ_REL);
	if (func)
		__atomic_sub_fetch(t->nhooks, 1, __ATOMIC_RELEASE);
	if (locked)
		starpu_pthread_rwlock_unlock(&t->lock);
	if (!func)
		_astro_error("starpu_%s_hook_deregister: %s hook %d is not registered (never, or already "
			     "deregistered): nothing done", t->kind, t->kind, hook_id);
}

int starpu_progression_hook_register(unsigned (*func)(void *arg), void *arg)
{
	return hook_register(&progression, func, arg);
}

void starpu_progression_hook_deregister(int hook_id)
{
	hook_deregister(&progression, hook_id);
}

int starpu_idle_hook_register(unsigned (*func)(void *arg), void *arg)
{
	return hook_register(&idle, func, arg);
}

void starpu_idle_hook_deregister(int hook_id)
{
	hook_deregister(&idle, hook_id);
}
