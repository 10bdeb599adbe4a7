/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The thread layer of a simulation build (configure --enable-simgrid): every
 * thread of the runtime and of the program is a SimGrid actor, and every wait
 * blocks in virtual time.
 *
 * SimGrid runs one actor at a time, each on a system thread of its own (the
 * "thread" context factory: the kernel's thread-locals stay per thread), and
 * switches only inside its own calls. So a lock taken and given back without
 * waiting needs no SimGrid call at all; a thread that must wait puts itself in
 * the object's queue and blocks on its own SimGrid semaphore, which whoever
 * gives it the object (the lock, the signal, the token) releases. Queues are
 * served in arrival order, which keeps runs deterministic.
 *
 * The program's main() that runs the program in the simulation is
 * simgrid_main.c's.
 */
#include "common/common.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>
#include <unistd.h>

/* A thread that waits, in the queue of what it waits for. */
struct _starpu_sim_waiter
{
	struct _starpu_sim_waiter *next;
	sg_sem_t sem;		/* released once by whoever hands it what it waits for */
	int *futex;		/* the address it waits on, in the futex queue */
	bool writer;		/* in a read-write lock's queue: waits to write */
};

/* A thread: the actor and what it runs. */
struct _starpu_sim_thread
{
	void *(*routine)(void *);
	void *arg, *retval;
	bool done, detached;
	starpu_pthread_mutex_t lock;
	starpu_pthread_cond_t ended;
};

static _ASTRO_TLS struct _starpu_sim_waiter *self_waiter;
static _ASTRO_TLS struct _starpu_sim_thread *self_thread;

static __attribute__((noreturn)) void outside_simulation(const char *what)
{
	fprintf(stderr, "[astrolabe] simulation: %s from a thread that is not a simulated one: in a simulation build, "
		"make threads with starpu_pthread_create() and include <starpu.h> in the file that defines main()\n", what);
	abort();
}

static struct _starpu_sim_waiter *me(void)
{
	struct _starpu_sim_waiter *w = self_waiter;
	if (STARPU_UNLIKELY(!w)) {
		w = calloc(1, sizeof(*w));
		if (!w)
			outside_simulation("out of memory for a waiting thread");
		self_waiter = w;
	}
	return w;
}

/* Before queueing w: it needs its semaphore, which only an actor may make. */
static struct _starpu_sim_waiter *ready_to_wait(const char *what)
{
	struct _starpu_sim_waiter *w = me();
	if (!w->sem) {
		if (!sg_actor_self())
			outside_simulation(what);
		w->sem = sg_sem_init(0);
	}
	w->next = NULL;
	return w;
}

static void enqueue(struct _starpu_sim_waiter **first, struct _starpu_sim_waiter **last, struct _starpu_sim_waiter *w)
{
	w->next = NULL;
	if (*last)
		(*last)->next = w;
	else
		*first = w;
	*last = w;
}

static struct _starpu_sim_waiter *dequeue(struct _starpu_sim_waiter **first, struct _starpu_sim_waiter **last)
{
	struct _starpu_sim_waiter *w = *first;
	if (w) {
		*first = w->next;
		if (!*first)
			*last = NULL;
		w->next = NULL;
	}
	return w;
}

/* Takes w out of the queue; false when it was not there (already handed what it waited for). */
static bool unqueue(struct _starpu_sim_waiter **first, struct _starpu_sim_waiter **last, struct _starpu_sim_waiter *w)
{
	struct _starpu_sim_waiter *prev = NULL;
	for (struct _starpu_sim_waiter *it = *first; it; prev = it, it = it->next) {
		if (it != w)
			continue;
		if (prev)
			prev->next = it->next;
		else
			*first = it->next;
		if (*last == it)
			*last = prev;
		it->next = NULL;
		return true;
	}
	return false;
}

static void block(struct _starpu_sim_waiter *w)
{
	sg_sem_acquire(w->sem);
}

/* Blocks until handed what it waits for or the virtual date deadline (seconds); true when the date came first. */
static bool block_until(struct _starpu_sim_waiter *w, double deadline)
{
	double left = deadline - simgrid_get_clock();
	if (left <= 0)
		return true;
	return sg_sem_acquire_timeout(w->sem, left) != 0;
}

static void hand_over(struct _starpu_sim_waiter *w)
{
	sg_sem_release(w->sem);
}

/* ------------------------------------------------------------- mutexes */

int starpu_pthread_mutex_init(starpu_pthread_mutex_t *mutex, const starpu_pthread_mutexattr_t *attr)
{
	memset(mutex, 0, sizeof(*mutex));
	if (attr)
		pthread_mutexattr_gettype(attr, &mutex->type);
	return 0;
}

int starpu_pthread_mutex_destroy(starpu_pthread_mutex_t *mutex)
{
	return mutex->owner || mutex->first ? EBUSY : 0;
}

int starpu_pthread_mutex_trylock(starpu_pthread_mutex_t *mutex)
{
	struct _starpu_sim_waiter *w = me();
	if (!mutex->owner) {
		mutex->owner = w;
		return 0;
	}
	if (mutex->owner == w && mutex->type == PTHREAD_MUTEX_RECURSIVE) {
		mutex->depth++;
		return 0;
	}
	return EBUSY;
}

int starpu_pthread_mutex_lock(starpu_pthread_mutex_t *mutex)
{
	int ret = starpu_pthread_mutex_trylock(mutex);
	if (STARPU_LIKELY(ret == 0))
		return 0;
	if (mutex->owner == me()) {
		fprintf(stderr, "[astrolabe] simulation: a thread locks a mutex it already holds: it would wait forever "
			"(make the mutex PTHREAD_MUTEX_RECURSIVE, or unlock it first)\n");
		return EDEADLK;
	}
	struct _starpu_sim_waiter *w = ready_to_wait("starpu_pthread_mutex_lock() waits");
	enqueue(&mutex->first, &mutex->last, w);
	block(w);	/* the unlock made us the owner */
	return 0;
}

int starpu_pthread_mutex_unlock(starpu_pthread_mutex_t *mutex)
{
	if (mutex->owner != me())
		return EPERM;
	if (mutex->depth) {
		mutex->depth--;
		return 0;
	}
	struct _starpu_sim_waiter *next = dequeue(&mutex->first, &mutex->last);
	mutex->owner = next;
	if (next)
		hand_over(next);
	return 0;
}

/* ----------------------------------------------------------- conditions */

int starpu_pthread_cond_init(starpu_pthread_cond_t *cond, const starpu_pthread_condattr_t *attr)
{
	(void)attr;
	memset(cond, 0, sizeof(*cond));
	return 0;
}

int starpu_pthread_cond_destroy(starpu_pthread_cond_t *cond)
{
	return cond->first ? EBUSY : 0;
}

int starpu_pthread_cond_signal(starpu_pthread_cond_t *cond)
{
	struct _starpu_sim_waiter *w = dequeue(&cond->first, &cond->last);
	if (w)
		hand_over(w);
	return 0;
}

int starpu_pthread_cond_broadcast(starpu_pthread_cond_t *cond)
{
	struct _starpu_sim_waiter *w;
	while ((w = dequeue(&cond->first, &cond->last)))
		hand_over(w);
	return 0;
}

/* deadline: a virtual date in seconds, or a negative value for none. */
static int cond_wait(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex, double deadline)
{
	struct _starpu_sim_waiter *w = ready_to_wait("starpu_pthread_cond_wait() waits");
	enqueue(&cond->first, &cond->last, w);
	starpu_pthread_mutex_unlock(mutex);
	bool timed_out = false;
	if (deadline < 0)
		block(w);
	else if (block_until(w, deadline)) {
		timed_out = unqueue(&cond->first, &cond->last, w);
		if (!timed_out)
			block(w);	/* signalled at the deadline: take what was handed */
	}
	starpu_pthread_mutex_lock(mutex);
	return timed_out ? ETIMEDOUT : 0;
}

int starpu_pthread_cond_wait(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex)
{
	return cond_wait(cond, mutex, -1);
}

int starpu_pthread_cond_timedwait(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex, const struct timespec *abstime)
{
	return cond_wait(cond, mutex, (double)abstime->tv_sec + (double)abstime->tv_nsec * 1e-9);
}

int astro_sim_cond_wait_until(starpu_pthread_cond_t *cond, starpu_pthread_mutex_t *mutex, uint64_t deadline_ns)
{
	return cond_wait(cond, mutex, (double)deadline_ns * 1e-9);
}

/* ------------------------------------------------------ read-write locks */

int starpu_pthread_rwlock_init(starpu_pthread_rwlock_t *rwlock, const starpu_pthread_rwlockattr_t *attr)
{
	(void)attr;
	memset(rwlock, 0, sizeof(*rwlock));
	return 0;
}

int starpu_pthread_rwlock_destroy(starpu_pthread_rwlock_t *rwlock)
{
	return rwlock->writer || rwlock->readers || rwlock->first ? EBUSY : 0;
}

int starpu_pthread_rwlock_rdlock(starpu_pthread_rwlock_t *rwlock)
{
	if (!rwlock->writer && !rwlock->first) {
		rwlock->readers++;
		return 0;
	}
	struct _starpu_sim_waiter *w = ready_to_wait("starpu_pthread_rwlock_rdlock() waits");
	w->writer = false;
	enqueue(&rwlock->first, &rwlock->last, w);
	block(w);	/* the unlock counted us among the readers */
	return 0;
}

int starpu_pthread_rwlock_wrlock(starpu_pthread_rwlock_t *rwlock)
{
	struct _starpu_sim_waiter *self = me();
	if (!rwlock->writer && !rwlock->readers && !rwlock->first) {
		rwlock->writer = self;
		return 0;
	}
	struct _starpu_sim_waiter *w = ready_to_wait("starpu_pthread_rwlock_wrlock() waits");
	w->writer = true;
	enqueue(&rwlock->first, &rwlock->last, w);
	block(w);	/* the unlock made us the writer */
	return 0;
}

int starpu_pthread_rwlock_unlock(starpu_pthread_rwlock_t *rwlock)
{
	if (rwlock->writer && rwlock->writer == me())
		rwlock->writer = NULL;
	else if (rwlock->readers)
		rwlock->readers--;
	else
		return EPERM;
	if (rwlock->writer || rwlock->readers || !rwlock->first)
		return 0;
	/* Free: the next writer alone, or every reader up to the next writer. */
	if (rwlock->first->writer) {
		struct _starpu_sim_waiter *w = dequeue(&rwlock->first, &rwlock->last);
		rwlock->writer = w;
		hand_over(w);
		return 0;
	}
	while (rwlock->first && !rwlock->first->writer) {
		rwlock->readers++;
		hand_over(dequeue(&rwlock->first, &rwlock->last));
	}
	return 0;
}

/* ------------------------------------------------- barriers, semaphores */

int starpu_pthread_barrier_init(starpu_pthread_barrier_t *barrier, const starpu_pthread_barrierattr_t *attr, unsigned count)
{
	(void)attr;
	if (count == 0)
		return EINVAL;
	memset(barrier, 0, sizeof(*barrier));
	barrier->count = count;
	return 0;
}

int starpu_pthread_barrier_destroy(starpu_pthread_barrier_t *barrier)
{
	return barrier->arrived ? EBUSY : 0;
}

int starpu_pthread_barrier_wait(starpu_pthread_barrier_t *barrier)
{
	starpu_pthread_mutex_lock(&barrier->mutex);
	unsigned generation = barrier->generation;
	if (++barrier->arrived == barrier->count) {
		barrier->arrived = 0;
		barrier->generation++;
		starpu_pthread_cond_broadcast(&barrier->cond);
		starpu_pthread_mutex_unlock(&barrier->mutex);
		return PTHREAD_BARRIER_SERIAL_THREAD;
	}
	while (generation == barrier->generation)
		starpu_pthread_cond_wait(&barrier->cond, &barrier->mutex);
	starpu_pthread_mutex_unlock(&barrier->mutex);
	return 0;
}

int starpu_sem_init(starpu_sem_t *sem, int pshared, unsigned value)
{
	(void)pshared;
	if (value > INT_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(sem, 0, sizeof(*sem));
	sem->value = (int)value;
	return 0;
}

int starpu_sem_destroy(starpu_sem_t *sem)
{
	(void)sem;
	return 0;
}

int starpu_sem_post(starpu_sem_t *sem)
{
	struct _starpu_sim_waiter *w = dequeue(&sem->first, &sem->last);
	if (w)
		hand_over(w);	/* the token goes straight to the first waiter */
	else
		sem->value++;
	return 0;
}

int starpu_sem_trywait(starpu_sem_t *sem)
{
	if (sem->value > 0) {
		sem->value--;
		return 0;
	}
	errno = EAGAIN;
	return -1;
}

int starpu_sem_wait(starpu_sem_t *sem)
{
	if (starpu_sem_trywait(sem) == 0)
		return 0;
	struct _starpu_sim_waiter *w = ready_to_wait("starpu_sem_wait() waits");
	enqueue(&sem->first, &sem->last, w);
	block(w);
	return 0;
}

int starpu_sem_getvalue(starpu_sem_t *sem, int *sval)
{
	*sval = sem->value;
	return 0;
}

/* ---------------------------------------------------------------- futexes */

static struct _starpu_sim_waiter *futex_first, *futex_last;

void astro_sim_futex_wait(int *addr, int val)
{
	if (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != val)
		return;
	struct _starpu_sim_waiter *w = ready_to_wait("a futex wait");
	w->futex = addr;
	enqueue(&futex_first, &futex_last, w);
	block(w);
}

void astro_sim_futex_wake_all(int *addr)
{
	struct _starpu_sim_waiter *it = futex_first, *next;
	for (; it; it = next) {
		next = it->next;
		if (it->futex == addr && unqueue(&futex_first, &futex_last, it)) {
			it->futex = NULL;
			hand_over(it);
		}
	}
}

/* ------------------------------------------------ time, sleeps, yields */

uint64_t astro_sim_clock_ns(void)
{
	return (uint64_t)llround(simgrid_get_clock() * 1e9);
}

void astro_sim_sleep_ns(uint64_t ns)
{
	if (!sg_actor_self())
		outside_simulation("a sleep");
	sg_actor_sleep_for((double)ns * 1e-9);
}

void astro_sim_yield(void)
{
	if (sg_actor_self())
		sg_actor_yield();
}

/* ---------------------------------------------------------------- threads */

static void thread_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct _starpu_sim_thread *t = sg_actor_self_get_data();
	/* The simulation ends with the program's main, whatever its threads still wait for. */
	sg_actor_daemonize(sg_actor_self());
	self_thread = t;
	void *retval = t->routine(t->arg);
	starpu_pthread_exit(retval);
}

int starpu_pthread_create(starpu_pthread_t *thread, const starpu_pthread_attr_t *attr, void *(*routine)(void *), void *arg)
{
	static unsigned count;
	if (!sg_actor_self())
		outside_simulation("starpu_pthread_create()");
	struct _starpu_sim_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return ENOMEM;
	int state = PTHREAD_CREATE_JOINABLE;
	if (attr)
		pthread_attr_getdetachstate(attr, &state);
	t->routine = routine;
	t->arg = arg;
	t->detached = state == PTHREAD_CREATE_DETACHED;
	char name[32];
	snprintf(name, sizeof(name), "thread %u", ++count);
	sg_actor_t actor = sg_actor_init(name, sg_host_self());
	sg_actor_set_data(actor, t);
	sg_actor_start(actor, thread_main, 0, NULL);
	*thread = t;
	return 0;
}

void starpu_pthread_exit(void *retval)
{
	struct _starpu_sim_thread *t = self_thread;
	if (t) {
		starpu_pthread_mutex_lock(&t->lock);
		t->retval = retval;
		t->done = true;
		starpu_pthread_cond_broadcast(&t->ended);
		bool detached = t->detached;
		starpu_pthread_mutex_unlock(&t->lock);
		if (detached)
			free(t);
	}
	free(self_waiter);
	self_waiter = NULL;
	sg_actor_exit();
}

int starpu_pthread_join(starpu_pthread_t thread, void **retval)
{
	if (!thread || thread->detached)
		return EINVAL;
	if (thread == self_thread)
		return EDEADLK;
	starpu_pthread_mutex_lock(&thread->lock);
	while (!thread->done)
		starpu_pthread_cond_wait(&thread->ended, &thread->lock);
	starpu_pthread_mutex_unlock(&thread->lock);
	if (retval)
		*retval = thread->retval;
	free(thread);
	return 0;
}

starpu_pthread_t starpu_pthread_self(void)
{
	return self_thread;
}

int starpu_pthread_equal(starpu_pthread_t t1, starpu_pthread_t t2)
{
	return t1 == t2;
}

/* ---------------------------------------------------------- the machine */

bool _astro_sim_inside(void)
{
	return sg_actor_self() != NULL;
}

bool _astro_sim_route(const char *from, const char *to, double *bandwidth, double *latency)
{
	sg_host_t src = sg_host_by_name(from), dst = sg_host_by_name(to);
	if (!src || !dst)
		return false;
	*bandwidth = sg_host_get_route_bandwidth(src, dst);
	*latency = sg_host_get_route_latency(src, dst);
	return isfinite(*bandwidth) && *bandwidth > 0;
}
