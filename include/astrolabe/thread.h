/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The thread layer: every lock, condition, futex wait, thread, sleep and
 * clock read of Astrolabe, of its plugins and of StarPU-MPI goes through it.
 *
 * Locks, conditions, threads and once-controls are StarPU's own names
 * (<starpu_thread.h>: starpu_pthread_mutex_lock(), starpu_pthread_create()...);
 * this header adds what the StarPU API has no name for: futex waits, polite
 * spinning, thread names, conditions on the monotonic clock, timed waits,
 * sleeps and clock reads. In a native build all of it is inline over
 * pthreads and Linux futexes, at no cost; it is the one seam a simulated run
 * replaces (every wait and every date then belongs to the simulator).
 *
 * Header only: it adds no symbol to the plugin ABI.
 */
#ifndef __ASTROLABE_THREAD_H__
#define __ASTROLABE_THREAD_H__

#include <starpu_thread.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Thread-local variables: ASTRO_THREAD_LOCAL int x; (ASTRO_THREAD_LOCAL_IE in
 * code linked into libastrolabe: the initial-exec model, one load per access).
 * In a simulation build every actor runs on the same system thread: these
 * variables are then plain ones in the section "astro_actor_locals", which
 * the layer saves and restores whenever the running actor changes, so each
 * actor still has its own (every module's section registers itself when
 * loaded, by the constructor below).
 */
#ifdef STARPU_SIMGRID
#define ASTRO_THREAD_LOCAL __attribute__((section("astro_actor_locals")))
#define ASTRO_THREAD_LOCAL_IE ASTRO_THREAD_LOCAL
void astro_sim_locals_register(char *start, char *stop);
extern char __start_astro_actor_locals[] __attribute__((weak, visibility("hidden")));
extern char __stop_astro_actor_locals[] __attribute__((weak, visibility("hidden")));
void astro_sim_locals_unregister(char *start);
static void __attribute__((constructor, used)) _astro_sim_locals_register_module(void)
{
	if (__start_astro_actor_locals)
		astro_sim_locals_register(__start_astro_actor_locals, __stop_astro_actor_locals);
}
static void __attribute__((destructor, used)) _astro_sim_locals_unregister_module(void)
{
	if (__start_astro_actor_locals)
		astro_sim_locals_unregister(__start_astro_actor_locals);
}
#else
#define ASTRO_THREAD_LOCAL __thread
#define ASTRO_THREAD_LOCAL_IE __thread __attribute__((tls_model("initial-exec")))
#endif

#ifdef STARPU_SIMGRID
/* The simulation's side of the layer (libastrolabe's kernel/common/simgrid.c):
 * waits and sleeps block the calling actor in virtual time. */
/** Sends bytes between two hosts of the simulated machine ("RAM", "CUDA0"...): returns when they arrived; -ENODEV without such hosts. */
int astro_sim_sendto(const char *from, const char *to, double bytes);
void astro_sim_futex_wait(int *addr, int val);
void astro_sim_futex_wake_all(int *addr);
void astro_sim_yield(void);
void astro_sim_sleep_ns(uint64_t ns);
/** The simulation's clock, in nanoseconds of virtual time. */
uint64_t astro_sim_clock_ns(void);
int astro_sim_cond_wait_until(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex, uint64_t deadline_ns);
/** A host of the simulated machine by name ("CPU0", "RAM"...), as an sg_host_t; under SMPI the rank's own ("<rank>-CPU0"). NULL: none. */
void *astro_sim_host(const char *name);
/** Whether the program runs under SimGrid's SMPI (smpirun), as one of its ranks. */
bool astro_sim_smpi(void);
/** Under SMPI: runs fn(arg) on the rank's own actor, the only one that can exchange MPI messages, and
 * returns when it ran; elsewhere (or called from that actor), runs it at once. */
void astro_sim_rank_call(void (*fn)(void *), void *arg);
/** Runs the calls handed to the rank's actor meanwhile: for a call that runs long there (a progression loop). */
void astro_sim_rank_serve(void);
/** What astro_sim_rank_call() calls after handing over a call, to wake that long call (NULL: nothing). */
void astro_sim_rank_waker(void (*wake)(void));
#endif

/* ---------------------------------------------------------------- futexes */

/** Sleeps while *addr equals val (a wake-up, a signal or a changed value ends it: look again). */
static inline void astro_futex_wait(int *addr, int val)
{
#ifdef STARPU_SIMGRID
	astro_sim_futex_wait(addr, val);
	return;
#endif
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/** Wakes every thread waiting on addr. */
static inline void astro_futex_wake_all(int *addr)
{
#ifdef STARPU_SIMGRID
	astro_sim_futex_wake_all(addr);
	return;
#endif
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/** Wakes one thread waiting on addr (every one, in a simulation). */
static inline void astro_futex_wake_one(int *addr)
{
#ifdef STARPU_SIMGRID
	astro_sim_futex_wake_all(addr);
	return;
#endif
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* ------------------------------------------------------------- spinning */

/** One pause of a spinning thread (a few to some 25 ns, depending on the CPU). */
static inline void astro_cpu_relax(void)
{
#if defined(STARPU_SIMGRID)
	/* Nobody else runs while an actor spins: a pause only costs real time. */
	__asm__ __volatile__("" ::: "memory");
#elif defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/**
 * Asks the processor for the size bytes at p, to be written (a hint: it never
 * faults): on x86, PREFETCHW, which brings each line exclusive, ready for the
 * write, from memory or from the core that wrote it last (a no-op on a
 * processor without it).
 */
static inline void astro_prefetch_for_writing(const void *p, size_t size)
{
	for (uintptr_t line = (uintptr_t)p & ~(uintptr_t)63; line < (uintptr_t)p + size; line += 64)
#if defined(__x86_64__) || defined(__i386__)
		__asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)line));
#else
		__builtin_prefetch((const void *)line, 1, 3);
#endif
}

/** Gives the calling thread's core to another thread that is ready to run. */
static inline void astro_thread_yield(void)
{
#ifdef STARPU_SIMGRID
	astro_sim_yield();
	return;
#endif
	sched_yield();
}

/* ------------------------------------------------------------ short locks */

/**
 * A lock held for a few instructions at a time (a policy's task queue): a
 * free one is taken and given back with one atomic operation each, inline,
 * where a mutex costs two calls into the C library. A contender spins a
 * little, then sleeps on the lock's futex. Not recursive; zero (or
 * ASTRO_LOCK_INITIALIZER) is a free lock, and there is nothing to destroy.
 */
typedef struct
{
	/** 0: free; 1: held; 2: held, and someone may sleep on it. */
	int state;
} astro_lock_t;

/** A free lock, for static initialisation. */
#define ASTRO_LOCK_INITIALIZER { 0 }

/** Polls of a contender before it sleeps on the lock. */
#define ASTRO_LOCK_SPINS 100

/** Makes lock free. */
static inline void astro_lock_init(astro_lock_t *lock)
{
	__atomic_store_n(&lock->state, 0, __ATOMIC_RELAXED);
}

/** astro_lock_acquire() found lock held: spins a little (not in a simulation, where the holder runs
 * only when this actor blocks), then marks it contended and sleeps until it is given back. */
static __attribute__((noinline, cold, unused)) void astro_lock_contended(astro_lock_t *lock)
{
#ifndef STARPU_SIMGRID
	for (int i = 0; i < ASTRO_LOCK_SPINS; i++) {
		int expected = 0;
		astro_cpu_relax();
		if (__atomic_load_n(&lock->state, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&lock->state, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
	}
#endif
	while (__atomic_exchange_n(&lock->state, 2, __ATOMIC_ACQUIRE) != 0)
		astro_futex_wait(&lock->state, 2);
}

/** Takes lock, waiting while another thread holds it. */
static inline void astro_lock_acquire(astro_lock_t *lock)
{
	int expected = 0;
	if (__builtin_expect(!__atomic_compare_exchange_n(&lock->state, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED), 0))
		astro_lock_contended(lock);
}

/** Gives lock back (the caller holds it), waking a thread asleep on it. */
static inline void astro_lock_release(astro_lock_t *lock)
{
	if (__builtin_expect(__atomic_exchange_n(&lock->state, 0, __ATOMIC_RELEASE) == 2, 0))
		astro_futex_wake_one(&lock->state);
}

/* ---------------------------------------------------------------- threads */

#ifdef STARPU_SIMGRID
/** The calling actor's number in the simulation (its SimGrid pid). */
long astro_sim_thread_tid(void);
#endif

/** The calling thread's number, as the system names it (gettid; a simulated thread's, in a simulation). */
static inline long astro_thread_tid(void)
{
#ifdef STARPU_SIMGRID
	return astro_sim_thread_tid();
#else
	return (long)syscall(SYS_gettid);
#endif
}

/** A number that tells the calling thread from the others (PAPI_thread_init() takes this function). */
static inline unsigned long astro_thread_id(void)
{
	return (unsigned long)astro_thread_tid();
}

/** Names the calling thread (at most 15 characters are kept), as top and debuggers show it. */
static inline void astro_thread_set_name(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

/**
 * Gives the calling thread a scheduling priority: with SCHED_OTHER, level is its
 * nice value; with a real-time policy (SCHED_FIFO, SCHED_RR), its priority.
 * Returns 0, or the errno the system gave (EPERM without CAP_SYS_NICE...).
 */
static inline int astro_thread_set_priority(int policy, int level)
{
	if (policy == SCHED_OTHER)
		return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), level) ? errno : 0;
	struct sched_param param = { .sched_priority = level };
	return pthread_setschedparam(pthread_self(), policy, &param);
}

/** Initialises a read-write lock that lets a waiting writer in before new readers. */
static inline int astro_rwlock_init_writer_preferred(starpu_pthread_rwlock_t *rwlock)
{
#ifdef STARPU_SIMGRID
	/* The simulation's read-write locks serve waiters in arrival order. */
	return starpu_pthread_rwlock_init(rwlock, NULL);
#endif
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_init(&attr);
#ifdef __GLIBC__
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
	int ret = starpu_pthread_rwlock_init(rwlock, &attr);
	pthread_rwlockattr_destroy(&attr);
	return ret;
}

/** Initialises a mutex that spins a little before sleeping, where the C library has such mutexes. */
static inline int astro_mutex_init_adaptive(starpu_pthread_mutex_t *mutex)
{
#ifdef STARPU_SIMGRID
	return starpu_pthread_mutex_init(mutex, NULL);
#endif
	starpu_pthread_mutexattr_t attr;
	starpu_pthread_mutexattr_init(&attr);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
	starpu_pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	int ret = starpu_pthread_mutex_init(mutex, &attr);
	starpu_pthread_mutexattr_destroy(&attr);
	return ret;
}

/* ----------------------------------------------------------------- clocks */

/** Nanoseconds on the monotonic clock (from an unspecified origin; the virtual time in a simulation). */
static inline uint64_t astro_clock_monotonic_ns(void)
{
#ifdef STARPU_SIMGRID
	return astro_sim_clock_ns();
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** Nanoseconds since the Epoch (wall-clock time, for dates shown to people). */
static inline uint64_t astro_clock_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** The timespec of ns nanoseconds (a date of one of the clocks above, or a duration). */
static inline struct timespec astro_timespec_of_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	return ts;
}

/**
 * Sleeps while *addr equals val, ns nanoseconds at most (0: no limit; a
 * simulation build has no limit). As astro_futex_wait(), a return says
 * nothing: look again.
 */
static inline void astro_futex_wait_for(int *addr, int val, uint64_t ns)
{
#ifdef STARPU_SIMGRID
	(void)ns; /* a simulation's futex waits have no timeout: it waits until woken */
	astro_sim_futex_wait(addr, val);
	return;
#endif
	struct timespec ts = astro_timespec_of_ns(ns);
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, ns ? &ts : NULL, NULL, 0);
}

/* ------------------------------------------------------------- conditions */

/** Initialises a condition whose timed waits (astro_cond_wait_until()) count on the monotonic clock. */
static inline int astro_cond_init_monotonic(starpu_pthread_cond_t *cond)
{
#ifdef STARPU_SIMGRID
	return starpu_pthread_cond_init(cond, NULL);
#endif
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	int ret = starpu_pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
	return ret;
}

/**
 * Waits on a condition made by astro_cond_init_monotonic() until it is
 * signalled or the monotonic clock reaches deadline_ns. Returns 0, or
 * ETIMEDOUT once the deadline passed.
 */
static inline int astro_cond_wait_until(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex, uint64_t deadline_ns)
{
#ifdef STARPU_SIMGRID
	return astro_sim_cond_wait_until(cond, mutex, deadline_ns);
#endif
	struct timespec ts = astro_timespec_of_ns(deadline_ns);
	return starpu_pthread_cond_timedwait(cond, mutex, &ts);
}

/**
 * Waits on a condition initialised with the default attributes until it is
 * signalled or ns nanoseconds passed. Returns 0, or ETIMEDOUT.
 */
static inline int astro_cond_wait_for(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex, uint64_t ns)
{
#ifdef STARPU_SIMGRID
	return astro_sim_cond_wait_until(cond, mutex, astro_sim_clock_ns() + ns);
#endif
	struct timespec ts = astro_timespec_of_ns(astro_clock_realtime_ns() + ns);
	return starpu_pthread_cond_timedwait(cond, mutex, &ts);
}

/* ----------------------------------------------------------------- sleeps */

/** Sleeps ns nanoseconds (the whole time, a signal caught meanwhile or not). */
static inline void astro_sleep_ns(uint64_t ns)
{
#ifdef STARPU_SIMGRID
	astro_sim_sleep_ns(ns);
	return;
#endif
	struct timespec req = astro_timespec_of_ns(ns), rem;
	while (nanosleep(&req, &rem) == -1 && errno == EINTR)
		req = rem;
}

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_THREAD_H__ */
