/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A crash on purpose, for the tests of the signal handler's messages: a
 * write through a null pointer, or, in a sanitizer build (the sanitizer
 * owns real faults and reports them its own way), raise(SIGSEGV).
 */
#ifndef ASTRO_TEST_CRASH_H
#define ASTRO_TEST_CRASH_H
#include <signal.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ASTRO_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ASTRO_TEST_SANITIZED 1
#endif
#endif

static inline void astro_test_crash(void)
{
#ifdef ASTRO_TEST_SANITIZED
	raise(SIGSEGV);
#else
	/* volatile: the compiler can neither see the null pointer (and make the write a trap) nor drop the write. */
	volatile int *volatile nowhere = NULL;
	*nowhere = 1;
#endif
}

#endif
