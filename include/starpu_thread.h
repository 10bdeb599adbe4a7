/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Thread types of the StarPU API: plain POSIX threads in a native build; in a
 * simulation build (STARPU_SIMGRID), threads are SimGrid actors and locks,
 * conditions, barriers and semaphores wait in virtual time. */
#ifndef __STARPU_THREAD_H__
#define __STARPU_THREAD_H__

#include <starpu_config.h>
#include <pthread.h>
#include <semaphore.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef STARPU_SIMGRID

typedef pthread_t starpu_pthread_t;
typedef pthread_attr_t starpu_pthread_attr_t;
typedef pthread_mutex_t starpu_pthread_mutex_t;
typedef pthread_mutexattr_t starpu_pthread_mutexattr_t;
typedef pthread_cond_t starpu_pthread_cond_t;
typedef pthread_condattr_t starpu_pthread_condattr_t;
typedef pthread_rwlock_t starpu_pthread_rwlock_t;
typedef pthread_rwlockattr_t starpu_pthread_rwlockattr_t;
typedef pthread_key_t starpu_pthread_key_t;
typedef pthread_once_t starpu_pthread_once_t;
typedef pthread_barrier_t starpu_pthread_barrier_t;
typedef pthread_spinlock_t starpu_pthread_spinlock_t;
typedef sem_t starpu_sem_t;
typedef pthread_barrierattr_t starpu_pthread_barrierattr_t;

#define STARPU_PTHREAD_MUTEX_INITIALIZER PTHREAD_MUTEX_INITIALIZER
#define STARPU_PTHREAD_COND_INITIALIZER PTHREAD_COND_INITIALIZER
#define STARPU_PTHREAD_RWLOCK_INITIALIZER PTHREAD_RWLOCK_INITIALIZER
#define STARPU_PTHREAD_ONCE_INIT PTHREAD_ONCE_INIT
/** What starpu_pthread_barrier_wait() returns to one of the threads it releases (0 to the others). */
#define STARPU_PTHREAD_BARRIER_SERIAL_THREAD PTHREAD_BARRIER_SERIAL_THREAD

#define starpu_pthread_create pthread_create
/** Creates a thread like starpu_pthread_create(): outside a simulation, name and where (the simulated host) are not used. */
#define starpu_pthread_create_on(name, thread, attr, routine, arg, where) starpu_pthread_create(thread, attr, routine, arg)
#define starpu_pthread_join pthread_join
#define starpu_pthread_exit pthread_exit
#define starpu_pthread_self pthread_self
#define starpu_pthread_equal pthread_equal
#define starpu_pthread_attr_init pthread_attr_init
#define starpu_pthread_attr_destroy pthread_attr_destroy
#define starpu_pthread_attr_setdetachstate pthread_attr_setdetachstate
#define starpu_pthread_mutex_init pthread_mutex_init
#define starpu_pthread_mutex_destroy pthread_mutex_destroy
#define starpu_pthread_mutex_lock pthread_mutex_lock
#define starpu_pthread_mutex_unlock pthread_mutex_unlock
#define starpu_pthread_mutex_trylock pthread_mutex_trylock
#define starpu_pthread_mutexattr_init pthread_mutexattr_init
#define starpu_pthread_mutexattr_destroy pthread_mutexattr_destroy
#define starpu_pthread_mutexattr_settype pthread_mutexattr_settype
#define starpu_pthread_mutexattr_gettype pthread_mutexattr_gettype
#define starpu_pthread_cond_init pthread_cond_init
#define starpu_pthread_cond_destroy pthread_cond_destroy
#define starpu_pthread_cond_signal pthread_cond_signal
#define starpu_pthread_cond_broadcast pthread_cond_broadcast
#define starpu_pthread_cond_wait pthread_cond_wait
#define starpu_pthread_cond_timedwait pthread_cond_timedwait
#define starpu_pthread_rwlock_init pthread_rwlock_init
#define starpu_pthread_rwlock_destroy pthread_rwlock_destroy
#define starpu_pthread_rwlock_rdlock pthread_rwlock_rdlock
#define starpu_pthread_rwlock_wrlock pthread_rwlock_wrlock
#define starpu_pthread_rwlock_tryrdlock pthread_rwlock_tryrdlock
#define starpu_pthread_rwlock_trywrlock pthread_rwlock_trywrlock
#define starpu_pthread_rwlock_unlock pthread_rwlock_unlock
#define starpu_pthread_key_create pthread_key_create
#define starpu_pthread_key_delete pthread_key_delete
#define starpu_pthread_setspecific pthread_setspecific
#define starpu_pthread_getspecific pthread_getspecific
#define starpu_pthread_once pthread_once
#define starpu_pthread_barrier_init pthread_barrier_init
#define starpu_pthread_barrier_destroy pthread_barrier_destroy
#define starpu_pthread_barrier_wait pthread_barrier_wait
#define starpu_pthread_spin_init pthread_spin_init
#define starpu_pthread_spin_destroy pthread_spin_destroy
#define starpu_pthread_spin_lock pthread_spin_lock
#define starpu_pthread_spin_trylock pthread_spin_trylock
#define starpu_pthread_spin_unlock pthread_spin_unlock
#define starpu_sem_init sem_init
#define starpu_sem_destroy sem_destroy
#define starpu_sem_post sem_post
/** Waits for the semaphore, again when a signal interrupts the wait: 0, or -1 with errno set (EINVAL). */
int starpu_sem_wait(starpu_sem_t *sem);
/** Takes the semaphore if it can at once, again when a signal interrupts: 0, or -1 with errno EAGAIN. */
int starpu_sem_trywait(starpu_sem_t *sem);
#define starpu_sem_getvalue sem_getvalue

#else /* STARPU_SIMGRID */

/*
 * The simulation's threads: each is a SimGrid actor (its own system thread,
 * only one running at a time). A lock taken and given back without waiting
 * costs no simulation call; a thread that must wait blocks in virtual time.
 * Thread-specific data, once-controls, spin locks and attributes stay POSIX.
 */
struct _starpu_sim_waiter;
typedef struct _starpu_sim_thread *starpu_pthread_t;
typedef pthread_attr_t starpu_pthread_attr_t;
typedef pthread_mutexattr_t starpu_pthread_mutexattr_t;
typedef pthread_condattr_t starpu_pthread_condattr_t;
typedef pthread_rwlockattr_t starpu_pthread_rwlockattr_t;
typedef pthread_key_t starpu_pthread_key_t;
typedef pthread_once_t starpu_pthread_once_t;
typedef pthread_spinlock_t starpu_pthread_spinlock_t;
typedef struct { struct _starpu_sim_waiter *owner, *first, *last; unsigned depth; int type; } starpu_pthread_mutex_t;
typedef struct { struct _starpu_sim_waiter *first, *last; } starpu_pthread_cond_t;
typedef struct { struct _starpu_sim_waiter *writer, *first, *last; unsigned readers; } starpu_pthread_rwlock_t;
typedef struct { starpu_pthread_mutex_t mutex; starpu_pthread_cond_t cond; unsigned count, arrived, generation; } starpu_pthread_barrier_t;
typedef struct { struct _starpu_sim_waiter *first, *last; int value; } starpu_sem_t;
typedef pthread_barrierattr_t starpu_pthread_barrierattr_t;

#define STARPU_PTHREAD_MUTEX_INITIALIZER { 0, 0, 0, 0, 0 }
#define STARPU_PTHREAD_COND_INITIALIZER { 0, 0 }
#define STARPU_PTHREAD_RWLOCK_INITIALIZER { 0, 0, 0, 0 }
#define STARPU_PTHREAD_ONCE_INIT PTHREAD_ONCE_INIT
#define STARPU_PTHREAD_BARRIER_SERIAL_THREAD PTHREAD_BARRIER_SERIAL_THREAD

/** A host of the simulated machine (an sg_host_t; astro_sim_host() of astrolabe/thread.h finds one by name). */
typedef void *starpu_sg_host_t;

int starpu_pthread_create(starpu_pthread_t *thread, const starpu_pthread_attr_t *attr, void *(*start_routine)(void *), void *arg);
/** Creates a simulated thread; name and where (the host it runs on) are not used: it runs like those of starpu_pthread_create(). */
#define starpu_pthread_create_on(name, thread, attr, routine, arg, where) starpu_pthread_create(thread, attr, routine, arg)
int starpu_pthread_join(starpu_pthread_t thread, void **retval);
void starpu_pthread_exit(void *retval) __attribute__((noreturn));
starpu_pthread_t starpu_pthread_self(void);
int starpu_pthread_equal(starpu_pthread_t t1, starpu_pthread_t t2);
#define starpu_pthread_attr_init pthread_attr_init
#define starpu_pthread_attr_destroy pthread_attr_destroy
#define starpu_pthread_attr_setdetachstate pthread_attr_setdetachstate
int starpu_pthread_mutex_init(starpu_pthread_mutex_t *mutex, const starpu_pthread_mutexattr_t *attr);
int starpu_pthread_mutex_destroy(starpu_pthread_mutex_t *mutex);
int starpu_pthread_mutex_lock(starpu_pthread_mutex_t *mutex);
int starpu_pthread_mutex_unlock(starpu_pthread_mutex_t *mutex);
int starpu_pthread_mutex_trylock(starpu_pthread_mutex_t *mutex);
#define starpu_pthread_mutexattr_init pthread_mutexattr_init
#define starpu_pthread_mutexattr_destroy pthread_mutexattr_destroy
#define starpu_pthread_mutexattr_settype pthread_mutexattr_settype
#define starpu_pthread_mutexattr_gettype pthread_mutexattr_gettype
int starpu_pthread_cond_init(starpu_pthread_cond_t *cond, const starpu_pthread_condattr_t *attr);
int starpu_pthread_cond_destroy(starpu_pthread_cond_t *cond);
int starpu_pthread_cond_signal(starpu_pthread_cond_t *cond);
int starpu_pthread_cond_broadcast(starpu_pthread_cond_t *cond);
int starpu_pthread_cond_wait(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex);
/** abstime: a date of the simulation's clock (starpu_timing_now() / 1e6, as a timespec). */
int starpu_pthread_cond_timedwait(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex, const struct timespec *abstime);
int starpu_pthread_rwlock_init(starpu_pthread_rwlock_t *rwlock, const starpu_pthread_rwlockattr_t *attr);
int starpu_pthread_rwlock_destroy(starpu_pthread_rwlock_t *rwlock);
int starpu_pthread_rwlock_rdlock(starpu_pthread_rwlock_t *rwlock);
int starpu_pthread_rwlock_wrlock(starpu_pthread_rwlock_t *rwlock);
/** Takes the lock for reading if no writer holds or waits for it; EBUSY otherwise. */
int starpu_pthread_rwlock_tryrdlock(starpu_pthread_rwlock_t *rwlock);
/** Takes the lock for writing if nobody holds or waits for it; EBUSY otherwise. */
int starpu_pthread_rwlock_trywrlock(starpu_pthread_rwlock_t *rwlock);
int starpu_pthread_rwlock_unlock(starpu_pthread_rwlock_t *rwlock);
#define starpu_pthread_key_create pthread_key_create
#define starpu_pthread_key_delete pthread_key_delete
#define starpu_pthread_setspecific pthread_setspecific
#define starpu_pthread_getspecific pthread_getspecific
#define starpu_pthread_once pthread_once
int starpu_pthread_barrier_init(starpu_pthread_barrier_t *barrier, const starpu_pthread_barrierattr_t *attr, unsigned count);
int starpu_pthread_barrier_destroy(starpu_pthread_barrier_t *barrier);
int starpu_pthread_barrier_wait(starpu_pthread_barrier_t *barrier);
#define starpu_pthread_spin_init pthread_spin_init
#define starpu_pthread_spin_destroy pthread_spin_destroy
#define starpu_pthread_spin_lock pthread_spin_lock
#define starpu_pthread_spin_trylock pthread_spin_trylock
#define starpu_pthread_spin_unlock pthread_spin_unlock
int starpu_sem_init(starpu_sem_t *sem, int pshared, unsigned value);
int starpu_sem_destroy(starpu_sem_t *sem);
int starpu_sem_post(starpu_sem_t *sem);
int starpu_sem_wait(starpu_sem_t *sem);
int starpu_sem_trywait(starpu_sem_t *sem);
int starpu_sem_getvalue(starpu_sem_t *sem, int *sval);

#endif /* STARPU_SIMGRID */

/**
 * A consumer's side of the queue and wait synchronisation (StarPU declares it
 * in a simulation build; it works in both here): a consumer registers its
 * wait on the producers' queues, then in its loop calls
 * starpu_pthread_wait_reset(), looks for work at each producer, and when none
 * has any, starpu_pthread_wait_wait() returns once a producer signalled a
 * queue the wait is registered on, since the reset. Unregister from every
 * queue before starpu_pthread_wait_destroy().
 */
typedef struct
{
	starpu_pthread_mutex_t mutex;
	starpu_pthread_cond_t cond;
	unsigned block;                      /**< 1 until a producer signals, after each reset */
} starpu_pthread_wait_t;

/** A producer's side: the waits registered on it, woken by its signals. */
typedef struct
{
	starpu_pthread_mutex_t mutex;
	starpu_pthread_wait_t **queue;       /**< the registered waits */
	unsigned allocqueue;                 /**< room in queue */
	unsigned nqueue;                     /**< waits registered */
} starpu_pthread_queue_t;

/** An empty queue. Returns 0. */
int starpu_pthread_queue_init(starpu_pthread_queue_t *q);
/** Wakes one registered wait that blocks (none when none blocks). Returns 0. */
int starpu_pthread_queue_signal(starpu_pthread_queue_t *q);
/** Wakes every registered wait. Returns 0. */
int starpu_pthread_queue_broadcast(starpu_pthread_queue_t *q);
/** Frees the queue: EBUSY, said, while waits are still registered on it. */
int starpu_pthread_queue_destroy(starpu_pthread_queue_t *q);

/** A wait that blocks until signalled. Returns 0. */
int starpu_pthread_wait_init(starpu_pthread_wait_t *w);
/** Registers w on q, whose signals will wake it. Returns 0, or ENOMEM said. */
int starpu_pthread_queue_register(starpu_pthread_wait_t *w, starpu_pthread_queue_t *q);
/** Unregisters w from q. Returns 0, or EINVAL said when w is not registered there. */
int starpu_pthread_queue_unregister(starpu_pthread_wait_t *w, starpu_pthread_queue_t *q);
/** Forgets the signals received so far: the next wait blocks until a new one. Returns 0. */
int starpu_pthread_wait_reset(starpu_pthread_wait_t *w);
/** Blocks until a queue w is registered on was signalled since the last reset. Returns 0. */
int starpu_pthread_wait_wait(starpu_pthread_wait_t *w);
/** The same, giving up at abstime (CLOCK_REALTIME; the simulation's clock in a simulation): 0, or ETIMEDOUT. */
int starpu_pthread_wait_timedwait(starpu_pthread_wait_t *w, const struct timespec *abstime);
/** Frees w's lock and condition. Returns 0. */
int starpu_pthread_wait_destroy(starpu_pthread_wait_t *w);

/**
 * Names the calling thread as top and debuggers show it; the system keeps the
 * first 15 characters. Returns 0, or EINVAL (said on stderr) for a NULL name.
 */
int starpu_pthread_setname(const char *name);

/**
 * Locks a worker's scheduling mutex (starpu_worker_get_sched_condition()),
 * the one a scheduling policy takes to hand a task to a sleeping worker; the
 * _sched functions are those to use on it, the plain ones on any other mutex.
 * Return what starpu_pthread_mutex_lock(), _unlock() and _trylock() return.
 */
int starpu_pthread_mutex_lock_sched(starpu_pthread_mutex_t *mutex);
/** Unlocks a worker's scheduling mutex locked with starpu_pthread_mutex_lock_sched(). */
int starpu_pthread_mutex_unlock_sched(starpu_pthread_mutex_t *mutex);
/** Locks a worker's scheduling mutex if it is free: 0, or EBUSY. */
int starpu_pthread_mutex_trylock_sched(starpu_pthread_mutex_t *mutex);
/**
 * Checks that mutex, which the caller at file:line is about to lock or unlock
 * with the plain functions, is not the calling worker's scheduling mutex; if it
 * is, says so on stderr (naming file and line, and the _sched function to use).
 */
void starpu_pthread_mutex_check_sched(starpu_pthread_mutex_t *mutex, char *file, int line);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_THREAD_H__ */
