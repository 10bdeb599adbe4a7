/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Checked wrappers over the thread calls: abort with a message on failure. */
#ifndef __STARPU_THREAD_UTIL_H__
#define __STARPU_THREAD_UTIL_H__

#include <starpu_util.h>
#include <starpu_thread.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define _STARPU_PTHREAD_CHECK(call, what) do { int _p_ret = (call); if (STARPU_UNLIKELY(_p_ret != 0)) { \
	fprintf(stderr, "[starpu] %s failed in %s (%s:%d): %s\n", what, __func__, __FILE__, __LINE__, strerror(_p_ret)); \
	STARPU_ABORT(); } } while (0)
/* The same, saying the failure without aborting (the thread-specific data calls, as in StarPU). */
#define _STARPU_PTHREAD_SAY(call, what) do { int _p_ret = (call); if (STARPU_UNLIKELY(_p_ret != 0)) \
	fprintf(stderr, "[starpu] %s failed in %s (%s:%d): %s\n", what, __func__, __FILE__, __LINE__, strerror(_p_ret)); } while (0)

#define STARPU_PTHREAD_CREATE(thread, attr, routine, arg) _STARPU_PTHREAD_CHECK(starpu_pthread_create(thread, attr, routine, arg), "pthread_create")
#define STARPU_PTHREAD_CREATE_ON(name, thread, attr, routine, arg, where) \
	_STARPU_PTHREAD_CHECK(starpu_pthread_create_on(name, thread, attr, routine, arg, where), "pthread_create_on")
#define STARPU_PTHREAD_JOIN(thread, retval) _STARPU_PTHREAD_CHECK(starpu_pthread_join(thread, retval), "pthread_join")
#define STARPU_PTHREAD_MUTEX_INIT(mutex, attr) _STARPU_PTHREAD_CHECK(starpu_pthread_mutex_init(mutex, attr), "pthread_mutex_init")
#define STARPU_PTHREAD_MUTEX_INIT0(mutex, attr) STARPU_PTHREAD_MUTEX_INIT(mutex, attr)
#define STARPU_PTHREAD_MUTEX_DESTROY(mutex) _STARPU_PTHREAD_CHECK(starpu_pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
#define STARPU_PTHREAD_MUTEX_LOCK(mutex) _STARPU_PTHREAD_CHECK(starpu_pthread_mutex_lock(mutex), "pthread_mutex_lock")
#define STARPU_PTHREAD_MUTEX_UNLOCK(mutex) _STARPU_PTHREAD_CHECK(starpu_pthread_mutex_unlock(mutex), "pthread_mutex_unlock")
#define STARPU_PTHREAD_MUTEX_LOCK_SCHED(mutex) _STARPU_PTHREAD_CHECK(starpu_pthread_mutex_lock_sched(mutex), "pthread_mutex_lock_sched")
#define STARPU_PTHREAD_MUTEX_UNLOCK_SCHED(mutex) _STARPU_PTHREAD_CHECK(starpu_pthread_mutex_unlock_sched(mutex), "pthread_mutex_unlock_sched")

/** What the try-macros below give: ret when 0 or EBUSY; any other error (an invalid lock) is said, naming file:line, and aborts. */
static inline int _starpu_pthread_try_checked(int ret, const char *what, const char *file, int line)
{
	if (STARPU_UNLIKELY(ret != 0 && ret != EBUSY)) {
		fprintf(stderr, "[starpu] %s failed (%s:%d): %s\n", what, file, line, strerror(ret));
		STARPU_ABORT();
	}
	return ret;
}
#define STARPU_PTHREAD_MUTEX_TRYLOCK(mutex) \
	_starpu_pthread_try_checked(starpu_pthread_mutex_trylock(mutex), "pthread_mutex_trylock", __FILE__, __LINE__)
#define STARPU_PTHREAD_MUTEX_TRYLOCK_SCHED(mutex) \
	_starpu_pthread_try_checked(starpu_pthread_mutex_trylock_sched(mutex), "pthread_mutex_trylock_sched", __FILE__, __LINE__)
#define STARPU_PTHREAD_RWLOCK_TRYRDLOCK(rw) \
	_starpu_pthread_try_checked(starpu_pthread_rwlock_tryrdlock(rw), "pthread_rwlock_tryrdlock", __FILE__, __LINE__)
#define STARPU_PTHREAD_RWLOCK_TRYWRLOCK(rw) \
	_starpu_pthread_try_checked(starpu_pthread_rwlock_trywrlock(rw), "pthread_rwlock_trywrlock", __FILE__, __LINE__)

#define STARPU_PTHREAD_COND_INIT(cond, attr) _STARPU_PTHREAD_CHECK(starpu_pthread_cond_init(cond, attr), "pthread_cond_init")
#define STARPU_PTHREAD_COND_INIT0(cond, attr) STARPU_PTHREAD_COND_INIT(cond, attr)
#define STARPU_PTHREAD_COND_DESTROY(cond) _STARPU_PTHREAD_CHECK(starpu_pthread_cond_destroy(cond), "pthread_cond_destroy")
#define STARPU_PTHREAD_COND_SIGNAL(cond) _STARPU_PTHREAD_CHECK(starpu_pthread_cond_signal(cond), "pthread_cond_signal")
#define STARPU_PTHREAD_COND_BROADCAST(cond) _STARPU_PTHREAD_CHECK(starpu_pthread_cond_broadcast(cond), "pthread_cond_broadcast")
#define STARPU_PTHREAD_COND_WAIT(cond, mutex) _STARPU_PTHREAD_CHECK(starpu_pthread_cond_wait(cond, mutex), "pthread_cond_wait")

/** What STARPU_PTHREAD_COND_TIMEDWAIT gives: ret when 0 or ETIMEDOUT (abstime passed); any other error is said and aborts. */
static inline int _starpu_pthread_timedwait_checked(int ret, const char *file, int line)
{
	if (STARPU_UNLIKELY(ret != 0 && ret != ETIMEDOUT)) {
		fprintf(stderr, "[starpu] pthread_cond_timedwait failed (%s:%d): %s\n", file, line, strerror(ret));
		STARPU_ABORT();
	}
	return ret;
}
#define STARPU_PTHREAD_COND_TIMEDWAIT(cond, mutex, abstime) \
	_starpu_pthread_timedwait_checked(starpu_pthread_cond_timedwait(cond, mutex, abstime), __FILE__, __LINE__)

#define STARPU_PTHREAD_RWLOCK_INIT(rw, attr) _STARPU_PTHREAD_CHECK(starpu_pthread_rwlock_init(rw, attr), "pthread_rwlock_init")
#define STARPU_PTHREAD_RWLOCK_INIT0(rw, attr) STARPU_PTHREAD_RWLOCK_INIT(rw, attr)
#define STARPU_PTHREAD_RWLOCK_DESTROY(rw) _STARPU_PTHREAD_CHECK(starpu_pthread_rwlock_destroy(rw), "pthread_rwlock_destroy")
#define STARPU_PTHREAD_RWLOCK_RDLOCK(rw) _STARPU_PTHREAD_CHECK(starpu_pthread_rwlock_rdlock(rw), "pthread_rwlock_rdlock")
#define STARPU_PTHREAD_RWLOCK_WRLOCK(rw) _STARPU_PTHREAD_CHECK(starpu_pthread_rwlock_wrlock(rw), "pthread_rwlock_wrlock")
#define STARPU_PTHREAD_RWLOCK_UNLOCK(rw) _STARPU_PTHREAD_CHECK(starpu_pthread_rwlock_unlock(rw), "pthread_rwlock_unlock")
#define STARPU_PTHREAD_KEY_CREATE(key, destr) _STARPU_PTHREAD_SAY(starpu_pthread_key_create(key, destr), "pthread_key_create")
#define STARPU_PTHREAD_KEY_DELETE(key) _STARPU_PTHREAD_SAY(starpu_pthread_key_delete(key), "pthread_key_delete")
#define STARPU_PTHREAD_SETSPECIFIC(key, ptr) _STARPU_PTHREAD_SAY(starpu_pthread_setspecific(key, ptr), "pthread_setspecific")
#define STARPU_PTHREAD_GETSPECIFIC(key) starpu_pthread_getspecific(key)
#define STARPU_PTHREAD_BARRIER_INIT(b, attr, count) _STARPU_PTHREAD_CHECK(starpu_pthread_barrier_init(b, attr, count), "pthread_barrier_init")
#define STARPU_PTHREAD_BARRIER_DESTROY(b) _STARPU_PTHREAD_CHECK(starpu_pthread_barrier_destroy(b), "pthread_barrier_destroy")
#define STARPU_PTHREAD_BARRIER_WAIT(b) do { int _b_ret = starpu_pthread_barrier_wait(b); \
	if (_b_ret != 0 && _b_ret != STARPU_PTHREAD_BARRIER_SERIAL_THREAD) _STARPU_PTHREAD_CHECK(_b_ret, "pthread_barrier_wait"); } while (0)
#define STARPU_PTHREAD_SPIN_INIT(l, s) _STARPU_PTHREAD_CHECK(starpu_pthread_spin_init(l, s), "pthread_spin_init")
#define STARPU_PTHREAD_SPIN_DESTROY(l) _STARPU_PTHREAD_CHECK(starpu_pthread_spin_destroy(l), "pthread_spin_destroy")
#define STARPU_PTHREAD_SPIN_LOCK(l) _STARPU_PTHREAD_CHECK(starpu_pthread_spin_lock(l), "pthread_spin_lock")
#define STARPU_PTHREAD_SPIN_UNLOCK(l) _STARPU_PTHREAD_CHECK(starpu_pthread_spin_unlock(l), "pthread_spin_unlock")

#endif /* __STARPU_THREAD_UTIL_H__ */
