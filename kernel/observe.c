/*
 * The observation hub. Subscribers live in a fixed table so firing never
 * takes a lock: a slot is published with its mask last and retired by
 * clearing the mask; slots are reused only after starpu_shutdown(). Each
 * moment lists the slots that ever asked for it, in the order they first did;
 * a list is only appended to, so a firing thread walks just the observers of
 * its moment (checking each one's current mask) and never misses one that
 * was already there. A moment reads the clock only when one of its observers
 * is not ASTRO_OBSERVE_UNTIMED.
 */
#include "kernel.h"

#define MAX_OBSERVERS 64
#define MOMENTS (ASTRO_MOMENT_BIT(ASTRO_NMOMENTS) - 1)

struct observer
{
	uint64_t mask;
	astro_observer_fn fn;
	void *arg;
};

/* The slots that ever observed one moment: entries below n are final. */
struct moment_list
{
	unsigned n;	/* atomic */
	unsigned char slots[MAX_OBSERVERS];
};

uint64_t _astro_observe_mask;
static uint64_t timed_mask;	/* the moments an observer wants stamped */
static struct observer observers[MAX_OBSERVERS];
static uint64_t listed[MAX_OBSERVERS];	/* the moments whose list has the slot (under observers_lock) */
static struct moment_list lists[ASTRO_NMOMENTS];
static int nobservers;			/* under observers_lock */
static pthread_mutex_t observers_lock = PTHREAD_MUTEX_INITIALIZER;

/* Publishes slot id's mask, adding the slot to the lists of the moments it observes for the first time. */
static void publish_mask(int id, uint64_t mask)
{
	mask &= MOMENTS | ASTRO_OBSERVE_UNTIMED;
	for (uint64_t fresh = mask & MOMENTS & ~listed[id]; fresh; fresh &= fresh - 1) {
		struct moment_list *l = &lists[__builtin_ctzll(fresh)];
		l->slots[l->n] = (unsigned char)id;
		__atomic_store_n(&l->n, l->n + 1, __ATOMIC_RELEASE);
	}
	listed[id] |= mask & MOMENTS;
	__atomic_store_n(&observers[id].mask, mask, __ATOMIC_RELEASE);
}

static void recompute_mask(void)
{
	uint64_t mask = 0, timed = 0;
	for (int i = 0; i < nobservers; i++) {
		uint64_t m = __atomic_load_n(&observers[i].mask, __ATOMIC_RELAXED);
		mask |= m & MOMENTS;
		if (!(m & ASTRO_OBSERVE_UNTIMED))
			timed |= m & MOMENTS;
	}
	__atomic_store_n(&timed_mask, timed, __ATOMIC_RELAXED);
	__atomic_store_n(&_astro_observe_mask, mask, __ATOMIC_RELEASE);
}

int astro_observe_subscribe(uint64_t mask, astro_observer_fn fn, void *arg)
{
	if (!fn) {
		_astro_error("astro_observe_subscribe: NULL callback: pass the function to call");
		return -EINVAL;
	}
	pthread_mutex_lock(&observers_lock);
	if (nobservers == MAX_OBSERVERS) {
		pthread_mutex_unlock(&observers_lock);
		_astro_error("astro_observe_subscribe: all %d observer slots are taken: unsubscribe unused observers", MAX_OBSERVERS);
		return -ENOSPC;
	}
	int id = nobservers;
	observers[id].fn = fn;
	observers[id].arg = arg;
	nobservers++;
	publish_mask(id, mask);
	recompute_mask();
	pthread_mutex_unlock(&observers_lock);
	return id;
}

int astro_observe_set_mask(int id, uint64_t mask)
{
	pthread_mutex_lock(&observers_lock);
	if (id < 0 || id >= nobservers) {
		pthread_mutex_unlock(&observers_lock);
		_astro_error("astro_observe: unknown subscription id %d: use the id astro_observe_subscribe() returned", id);
		return -EINVAL;
	}
	publish_mask(id, mask);
	recompute_mask();
	pthread_mutex_unlock(&observers_lock);
	return 0;
}

int astro_observe_unsubscribe(int id)
{
	return astro_observe_set_mask(id, 0);
}

/* Calls the n observers listed in l that still observe the moment (bit). */
static void __attribute__((noinline)) fire_each(struct astro_event *event, const struct moment_list *l, unsigned n, uint64_t bit)
{
	for (unsigned i = 0; i < n; i++) {
		const struct observer *o = &observers[l->slots[i]];
		if (__atomic_load_n(&o->mask, __ATOMIC_ACQUIRE) & bit)
			o->fn(event, o->arg);
	}
}

/* Calls the observers of the event's moment (bit). */
static inline void dispatch(struct astro_event *event, uint64_t bit)
{
	const struct moment_list *l = &lists[event->moment];
	unsigned n = __atomic_load_n(&l->n, __ATOMIC_ACQUIRE);
	if (n != 1) {
		fire_each(event, l, n, bit);
		return;
	}
	/* The common case, one observer: a tail call, with nothing to keep across it. */
	const struct observer *o = &observers[l->slots[0]];
	if (__atomic_load_n(&o->mask, __ATOMIC_ACQUIRE) & bit)
		o->fn(event, o->arg);
}

/* Stamps the event with the clock not yet calibrated (or not inline), then dispatches it. */
static void __attribute__((noinline)) stamp_slow_and_dispatch(struct astro_event *event, uint64_t bit)
{
	event->time_us = _astro_timing_slow();
	dispatch(event, bit);
}

void _astro_observe_fire(struct astro_event *event)
{
	uint64_t bit = ASTRO_MOMENT_BIT(event->moment);
	if (event->time_us == 0.0 && (__atomic_load_n(&timed_mask, __ATOMIC_RELAXED) & bit)) {
		if (STARPU_UNLIKELY(!_astro_clock_is_tsc())) {
			stamp_slow_and_dispatch(event, bit);
			return;
		}
		event->time_us = _astro_tsc_now();
	}
	dispatch(event, bit);
}

void _astro_observe_reset(void)
{
	pthread_mutex_lock(&observers_lock);
	for (int i = 0; i < nobservers; i++) {
		__atomic_store_n(&observers[i].mask, 0, __ATOMIC_RELEASE);
		listed[i] = 0;
	}
	for (unsigned m = 0; m < ASTRO_NMOMENTS; m++)
		__atomic_store_n(&lists[m].n, 0, __ATOMIC_RELEASE);
	nobservers = 0;
	recompute_mask();
	pthread_mutex_unlock(&observers_lock);
}
