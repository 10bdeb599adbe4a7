/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_apapi_prog.c: a C program written against <apapi.h> alone, driven by
 * test_apapi.cc.
 */
#ifndef TEST_APAPI_PROG_H
#define TEST_APAPI_PROG_H

#include <apapi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the program saw of its timer. */
struct apapi_prog_result
{
	int calls;            /**< callback calls */
	int lasts;            /**< of them, with last_measurement 1 */
	int last_was_final;   /**< the call with 1 was the last call */
	int step;             /**< 0, or the number of the APAPI call that failed */
	enum APAPI_timer_state state_after; /**< the timer's state once stopped */
	int destroyed_null;   /**< APAPI_destroy_timer set the pointer to NULL */
};

/**
 * Creates a timer of interval_ns over set (may be NULL), starts it, works
 * in the calling thread until the callback ran min_calls times (at most 20
 * s), stops it (APAPI_callstop_timer, APAPI_join_timer) and destroys it.
 */
void apapi_prog_run(struct apapi_eventset *set, long interval_ns, int min_calls, struct apapi_prog_result *r);

#ifdef __cplusplus
}
#endif

#endif /* TEST_APAPI_PROG_H */
