/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The observation room: the hub every consumer of the runtime's moments
 * subscribes to (astrolabe/observe.h), fired inline on the task path, and
 * the instrumentation states and bursts of seed 001 (astrolabe/instrument.h).
 */
#ifndef __ASTRO_OBSERVE_H__
#define __ASTRO_OBSERVE_H__

#include "common/common.h"

/* The hub's tables (observe.c): the inline firing below reads them. */
#define _ASTRO_MAX_OBSERVERS 64
struct _astro_observer
{
	uint64_t mask;
	astro_observer_fn fn;
	void *arg;
};
/* The slots that ever observed one moment: entries below n are final. sole is the moment's only observer
 * now (NULL when it has none or several), so that the common firing reads one pointer. */
struct _astro_moment_list
{
	const struct _astro_observer *sole;	/* atomic */
	unsigned n;	/* atomic */
	unsigned char slots[_ASTRO_MAX_OBSERVERS];
};
extern uint64_t _astro_observe_mask;		/* the moments someone observes */
extern uint64_t _astro_observe_timed_mask;	/* the moments an observer wants stamped */
extern struct _astro_observer _astro_observers[_ASTRO_MAX_OBSERVERS];
extern struct _astro_moment_list _astro_moment_lists[ASTRO_NMOMENTS];
void _astro_observe_fire_slow(struct astro_event *event);
void _astro_observe_reset(void);

/* Stamps the event if its observer wants it and calls it. Inline, so that
 * the moment is a constant at each site: the common case, one observer and
 * the clock calibrated, is a few loads and the call. */
static inline void _astro_observe_fire(struct astro_event *event)
{
	const struct _astro_observer *o = __atomic_load_n(&_astro_moment_lists[event->moment].sole, __ATOMIC_ACQUIRE);
	if (STARPU_UNLIKELY(!o || !_astro_clock_is_tsc())) {
		_astro_observe_fire_slow(event);
		return;
	}
	const uint64_t mask = __atomic_load_n(&o->mask, __ATOMIC_ACQUIRE);
	if (STARPU_UNLIKELY(!(mask & ASTRO_MOMENT_BIT(event->moment))))
		return; /* it stopped observing the moment just now */
	if (!(mask & ASTRO_OBSERVE_UNTIMED))
		event->time_us = _astro_tsc_now();
	o->fn(event, o->arg);
}

/* One predictable branch when nobody observes moment m. */
#define _ASTRO_OBSERVE(m, ...) do { \
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_observe_mask, __ATOMIC_RELAXED) & ASTRO_MOMENT_BIT(m))) { \
		struct astro_event _ev = { .moment = (m), __VA_ARGS__ }; \
		_astro_observe_fire(&_ev); \
	} } while (0)

/* The per-task instrumentation context (instrument.c): how many of this thread's open states
 * and bursts belong to a task (+1 while the task it runs is off its CPU). A thread leaving task
 * with some keeps them, *saved_flag set; a thread coming back to a task whose flag is set opens
 * them again, then emits what was raised for it while it was off its CPU; a task freed forgets
 * them and flushes what is still held. _astro_instr_task_away(): astro_instr_task_leave_cpu(). */
extern _ASTRO_TLS unsigned _astro_instr_task_open;
void _astro_instr_task_leave(struct starpu_task *task, bool *saved_flag);
void _astro_instr_task_enter(struct starpu_task *task, bool *saved_flag);
void _astro_instr_task_away(struct starpu_task *task, bool *saved_flag);
void _astro_instr_forget(bool *saved_flag);

#endif /* __ASTRO_OBSERVE_H__ */
