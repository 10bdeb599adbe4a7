/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy toolkit (astrolabe/sched.h): policy data and queue locks.
 */
#define _GNU_SOURCE /* glibc's adaptive mutexes */
#include <astrolabe/thread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/sched.h>

/* The kernel's job head (kernel/common/common.h) asserts the same offset. */
_Static_assert(offsetof(struct astro_sched_job_head, policy_data) == sizeof(void *) + sizeof(unsigned long), "the policies' word sits after the job's id");

/** Policy data that must exist: aborts with a message naming the policy otherwise. */
void *astro_sched_alloc_policy_data(const char *policy_name, size_t size)
{
	void *data = NULL;

	/* Rounded up: aligned_alloc wants a multiple of the alignment. */
	size = (size + ASTRO_SCHED_CACHE_LINE - 1) / ASTRO_SCHED_CACHE_LINE * ASTRO_SCHED_CACHE_LINE;
	data = aligned_alloc(ASTRO_SCHED_CACHE_LINE, size);
	if (!data)
	{
		astro_log_error(policy_name, "cannot allocate %zu bytes for the policy state", size);
		abort();
	}
	memset(data, 0, size);
	return data;
}

/**
 * Initialises a queue lock. Queue locks are held for a few instructions while
 * the submitting thread and the workers push and pop, so a contender spins
 * briefly before it sleeps (glibc's adaptive mutex, where available) instead
 * of paying two system calls.
 */
void astro_sched_lock_init(starpu_pthread_mutex_t *lock)
{
	_STARPU_PTHREAD_CHECK(astro_mutex_init_adaptive(lock), "pthread_mutex_init");
}
