/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The observation hub. Subscribers live in a fixed table so firing never
 * takes a lock: a slot is published with its mask last and retired by
 * clearing the mask; slots are reused only after starpu_shutdown(). Each
 * moment lists the slots that ever asked for it, in the order they first did;
 * a list is only appended to, so a firing thread walks just the observers of
 * its moment (checking each one's current mask) and never misses one that
 * was already there. A moment reads the clock only when one of its observers
 * is not ASTRO_OBSERVE_UNTIMED. The common firing (one observer, the clock
 * calibrated) is inline at each site: _astro_observe_fire() in observe.h reads
 * the moment's sole observer, which each change of the masks recomputes.
 */
#include "observe/observe.h"

#define MAX_OBSERVERS _ASTRO_MAX_OBSERVERS
#define MOMENTS (ASTRO_MOMENT_BIT(ASTRO_NMOMENTS) - 1)

uint64_t _astro_observe_mask;
uint64_t _astro_observe_timed_mask;
uint64_t astro_observed_moments;	/* _astro_observe_mask, exported for the reports of astro_observe_report() */
struct _astro_observer _astro_observers[MAX_OBSERVERS];
struct _astro_moment_list _astro_moment_lists[ASTRO_NMOMENTS];
static uint64_t listed[MAX_OBSERVERS];	/* the moments whose list has the slot (under observers_lock) */
static int nobservers;			/* under observers_lock */
static starpu_pthread_mutex_t observers_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* Publishes slot id's mask, adding the slot to the lists of the moments it observes for the first time. */
static void publish_mask(int id, uint64_t mask)
{
	mask &= MOMENTS | ASTRO_OBSERVE_UNTIMED;
	for (uint64_t fresh = mask & MOMENTS & ~listed[id]; fresh; fresh &= fresh - 1) {
		struct _astro_moment_list *l = &_astro_moment_lists[__builtin_ctzll(fresh)];
		l->slots[l->n] = (unsigned char)id;
		__atomic_store_n(&l->n, l->n + 1, __ATOMIC_RELEASE);
	}
	listed[id] |= mask & MOMENTS;
	__atomic_store_n(&_astro_observers[id].mask, mask, __ATOMIC_RELEASE);
}

static void recompute_mask(void)
{
	uint64_t mask = 0, timed = 0, several = 0;
	for (int i = 0; i < nobservers; i++) {
		uint64_t m = __atomic_load_n(&_astro_observers[i].mask, __ATOMIC_RELAXED);
		several |= mask & m & MOMENTS;
		mask |= m & MOMENTS;
		if (!(m & ASTRO_OBSERVE_UNTIMED))
			timed |= m & MOMENTS;
	}
	/* Each moment's sole observer, after the masks it is read with. */
	for (unsigned moment = 0; moment < ASTRO_NMOMENTS; moment++) {
		const struct _astro_observer *sole = NULL;
		uint64_t bit = ASTRO_MOMENT_BIT(moment);
		for (int i = 0; i < nobservers && (mask & bit) && !(several & bit) && !sole; i++)
			if (__atomic_load_n(&_astro_observers[i].mask, __ATOMIC_RELAXED) & bit)
				sole = &_astro_observers[i];
		__atomic_store_n(&_astro_moment_lists[moment].sole, sole, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&_astro_observe_timed_mask, timed, __ATOMIC_RELAXED);
	__atomic_store_n(&_astro_observe_mask, mask, __ATOMIC_RELEASE);
	__atomic_store_n(&astro_observed_moments, mask, __ATOMIC_RELEASE);
}

int astro_observe_subscribe(uint64_t mask, astro_observer_fn fn, void *arg)
{
	if (!fn) {
		_astro_error("astro_observe_subscribe: NULL callback: pass the function to call");
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&observers_lock);
	if (nobservers == MAX_OBSERVERS) {
		starpu_pthread_mutex_unlock(&observers_lock);
		_astro_error("astro_observe_subscribe: all %d observer slots are taken: unsubscribe unused observers", MAX_OBSERVERS);
		return -ENOSPC;
	}
	int id = nobservers;
	_astro_observers[id].fn = fn;
	_astro_observers[id].arg = arg;
	nobservers++;
	publish_mask(id, mask);
	recompute_mask();
	starpu_pthread_mutex_unlock(&observers_lock);
	return id;
}

int astro_observe_set_mask(int id, uint64_t mask)
{
	starpu_pthread_mutex_lock(&observers_lock);
	if (id < 0 || id >= nobservers) {
		starpu_pthread_mutex_unlock(&observers_lock);
		_astro_error("astro_observe: unknown subscription id %d: use the id astro_observe_subscribe() returned", id);
		return -EINVAL;
	}
	publish_mask(id, mask);
	recompute_mask();
	starpu_pthread_mutex_unlock(&observers_lock);
	return 0;
}

int astro_observe_unsubscribe(int id)
{
	return astro_observe_set_mask(id, 0);
}

/* _astro_observe_fire() (observe.h) when the clock is not calibrated yet or the
 * moment has several observers (or none left): stamps the event if needed, calls each
 * observer that still observes the moment. */
void _astro_observe_fire_slow(struct astro_event *event)
{
	uint64_t bit = ASTRO_MOMENT_BIT(event->moment);
	const struct _astro_moment_list *l = &_astro_moment_lists[event->moment];
	if (event->time_us == 0.0 && (__atomic_load_n(&_astro_observe_timed_mask, __ATOMIC_RELAXED) & bit))
		event->time_us = _astro_now();
	unsigned n = __atomic_load_n(&l->n, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++) {
		const struct _astro_observer *o = &_astro_observers[l->slots[i]];
		if (__atomic_load_n(&o->mask, __ATOMIC_ACQUIRE) & bit)
			o->fn(event, o->arg);
	}
}

void astro_observe_report(struct astro_event *event)
{
	if ((unsigned)event->moment >= ASTRO_NMOMENTS) {
		_astro_error("astro_observe_report: moment %d does not exist: use an enum astro_moment", (int)event->moment);
		return;
	}
	if (__atomic_load_n(&_astro_observe_mask, __ATOMIC_RELAXED) & ASTRO_MOMENT_BIT(event->moment))
		_astro_observe_fire_slow(event);
}

void _astro_observe_reset(void)
{
	starpu_pthread_mutex_lock(&observers_lock);
	for (int i = 0; i < nobservers; i++) {
		__atomic_store_n(&_astro_observers[i].mask, 0, __ATOMIC_RELEASE);
		listed[i] = 0;
	}
	for (unsigned m = 0; m < ASTRO_NMOMENTS; m++)
		__atomic_store_n(&_astro_moment_lists[m].n, 0, __ATOMIC_RELEASE);
	nobservers = 0;
	recompute_mask();
	starpu_pthread_mutex_unlock(&observers_lock);
}
