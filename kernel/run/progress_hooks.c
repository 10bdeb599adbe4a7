/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Progression hooks (starpu_expert.h): functions the program has every
 * worker call at each round of its scheduling loop, busy or idle, so that
 * something outside the runtime (a communication library polling its
 * requests) makes progress on the workers' threads. A hook's result says
 * whether the workers may sleep: one that returns 0 keeps the idle ones
 * polling instead of sleeping until woken.
 *
 * With no hook, a round pays one load and a branch that always goes the same
 * way (worker_loop.c). The table is read under a read lock while the hooks
 * run, so that once starpu_progression_hook_deregister() returns, no worker
 * calls that hook any more.
 */
#include "run/run.h"

#define MAX_HOOKS 16

struct hook
{
	unsigned (*func)(void *arg);         /* NULL: the slot is free */
	void *arg;
};

static struct hook hooks[MAX_HOOKS];
static starpu_pthread_rwlock_t hooks_lock = STARPU_PTHREAD_RWLOCK_INITIALIZER;
unsigned _astro_progression_nhooks;
/* Set while this thread runs the hooks: a hook (de)registering must not wait for the lock it holds. */
static _ASTRO_TLS bool in_hooks;

unsigned _astro_progression_hooks_run(void)
{
	unsigned may_block = 1;
	starpu_pthread_rwlock_rdlock(&hooks_lock);
	in_hooks = true;
	for (unsigned i = 0; i < MAX_HOOKS; i++) {
		unsigned (*func)(void *) = __atomic_load_n(&hooks[i].func, __ATOMIC_ACQUIRE);
		if (func && !func(hooks[i].arg))
			may_block = 0;
	}
	in_hooks = false;
	starpu_pthread_rwlock_unlock(&hooks_lock);
	return may_block;
}

int starpu_progression_hook_register(unsigned (*func)(void *arg), void *arg)
{
	if (!func) {
		_astro_error("starpu_progression_hook_register: NULL function: give the function the workers should call");
		return -EINVAL;
	}
	if (in_hooks) {
		_astro_error("starpu_progression_hook_register: called from a progression hook, which would wait for itself: "
			     "register it from outside the hooks");
		return -EDEADLK;
	}
	starpu_pthread_rwlock_wrlock(&hooks_lock);
	int id = -1;
	for (unsigned i = 0; i < MAX_HOOKS && id < 0; i++)
		if (!hooks[i].func) {
			hooks[i].arg = arg;
			__atomic_store_n(&hooks[i].func, func, __ATOMIC_RELEASE);
			__atomic_add_fetch(&_astro_progression_nhooks, 1, __ATOMIC_RELEASE);
			id = (int)i;
		}
	starpu_pthread_rwlock_unlock(&hooks_lock);
	if (id < 0) {
		_astro_error("starpu_progression_hook_register: all %d progression hooks are taken: deregister one first",
			     MAX_HOOKS);
		return -1;
	}
	/* Sleeping workers call no hook: wake them so that they start (and ask whether they may sleep). */
	starpu_wake_all_blocked_workers();
	return id;
}

void starpu_progression_hook_deregister(int hook_id)
{
	if (hook_id < 0 || hook_id >= MAX_HOOKS) {
		_astro_error("starpu_progression_hook_deregister: no progression hook %d (ids go from 0 to %d): nothing done; "
			     "give what starpu_progression_hook_register() returned", hook_id, MAX_HOOKS - 1);
		return;
	}
	/* From a hook, this thread holds the read lock: clear the slot without waiting (other
	 * workers may be finishing a call of it now). Otherwise wait until no worker runs it. */
	bool locked = !in_hooks;
	if (locked)
		starpu_pthread_rwlock_wrlock(&hooks_lock);
	unsigned (*func)(void *) = __atomic_exchange_n(&hooks[hook_id].func, NULL, __ATOMIC_ACQ_REL);
	if (func)
		__atomic_sub_fetch(&_astro_progression_nhooks, 1, __ATOMIC_RELEASE);
	if (locked)
		starpu_pthread_rwlock_unlock(&hooks_lock);
	if (!func)
		_astro_error("starpu_progression_hook_deregister: progression hook %d is not registered (never, or already "
			     "deregistered): nothing done", hook_id);
}
