/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A measuring program as an APAPI user writes it: only <apapi.h>, a timer,
 * a callback, work while it samples, then the stop.
 */
#include "test_apapi_prog.h"

#include <string.h>
#include <time.h>

static void measure(void **arg, int last_measurement)
{
	struct apapi_prog_result *r = (struct apapi_prog_result *)arg;
	/* The timer thread writes, the program polls. */
	__atomic_add_fetch(&r->calls, 1, __ATOMIC_SEQ_CST);
	if (last_measurement) {
		__atomic_add_fetch(&r->lasts, 1, __ATOMIC_SEQ_CST);
		r->last_was_final = 1;
	} else {
		r->last_was_final = 0;
	}
}

void apapi_prog_run(struct apapi_eventset *set, long interval_ns, int min_calls, struct apapi_prog_result *r)
{
	struct apapi_timer *timer = NULL;
	memset(r, 0, sizeof(*r));
	if (APAPI_create_timer(&timer, interval_ns / 1000000000L, interval_ns % 1000000000L, measure, (void **)r, set) != 0) {
		r->step = 1;
		return;
	}
	if (APAPI_initstart_timer(timer) != 0 || APAPI_start_timer(timer) != 0) {
		r->step = 2;
		APAPI_destroy_timer(&timer);
		return;
	}
	/* Work to count: the thread that started the set is the one measured. */
	volatile double x = 0;
	time_t give_up = time(NULL) + 20;
	while (__atomic_load_n(&r->calls, __ATOMIC_SEQ_CST) < min_calls && time(NULL) < give_up)
		for (int i = 0; i < 100000; i++)
			x += i * 0.5;
	if (APAPI_callstop_timer(timer) != 0 || APAPI_join_timer(timer) != 0)
		r->step = 3;
	r->state_after = timer->state;
	APAPI_destroy_timer(&timer);
	r->destroyed_null = timer == NULL;
}
