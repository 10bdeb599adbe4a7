/*
 * The observation hub. Subscribers live in a fixed table so firing never
 * takes a lock: a slot is published with its mask last and retired by
 * clearing the mask; slots are reused only after starpu_shutdown(). A moment
 * reads the clock only when one of its observers is not ASTRO_OBSERVE_UNTIMED.
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

uint64_t _astro_observe_mask;
static uint64_t timed_mask;	/* the moments an observer wants stamped */
static struct observer observers[MAX_OBSERVERS];
static int nobservers;
static pthread_mutex_t observers_lock = PTHREAD_MUTEX_INITIALIZER;

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
	__atomic_store_n(&observers[id].mask, mask & (MOMENTS | ASTRO_OBSERVE_UNTIMED), __ATOMIC_RELEASE);
	__atomic_store_n(&nobservers, nobservers + 1, __ATOMIC_RELEASE);
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
	__atomic_store_n(&observers[id].mask, mask & (MOMENTS | ASTRO_OBSERVE_UNTIMED), __ATOMIC_RELEASE);
	recompute_mask();
	pthread_mutex_unlock(&observers_lock);
	return 0;
}

int astro_observe_unsubscribe(int id)
{
	return astro_observe_set_mask(id, 0);
}

void _astro_observe_fire(struct astro_event *event)
{
	uint64_t bit = ASTRO_MOMENT_BIT(event->moment);
	int n = __atomic_load_n(&nobservers, __ATOMIC_ACQUIRE);
	if (event->time_us == 0.0 && (__atomic_load_n(&timed_mask, __ATOMIC_RELAXED) & bit))
		event->time_us = starpu_timing_now();
	for (int i = 0; i < n; i++)
		if (__atomic_load_n(&observers[i].mask, __ATOMIC_ACQUIRE) & bit)
			observers[i].fn(event, observers[i].arg);
}

void _astro_observe_reset(void)
{
	pthread_mutex_lock(&observers_lock);
	for (int i = 0; i < nobservers; i++)
		__atomic_store_n(&observers[i].mask, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&nobservers, 0, __ATOMIC_RELEASE);
	recompute_mask();
	pthread_mutex_unlock(&observers_lock);
}
