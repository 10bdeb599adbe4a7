/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The actors of a simulation build: every thread of the runtime and of the
 * program, and the program's main, is a SimGrid actor. SimGrid runs them one
 * at a time on one system thread and switches from one to another only inside
 * its own calls, which are all here: a wait, a hand-over, a sleep, a
 * transfer, an actor's start.
 *
 * Thread-locals (ASTRO_THREAD_LOCAL, astrolabe/thread.h) are plain variables
 * in each module's section "astro_actor_locals" in such a build. When a call
 * returns to an actor other than the one whose values the sections hold, that
 * one's values are put aside and the returning actor's put back (and errno
 * with them): each actor keeps its own, at the cost of a copy of a few
 * kilobytes per switch between actors, and no system thread per actor.
 */
#include "common/simgrid.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>

/* ------------------------------------------------------ thread-locals */

#define MAX_SECTIONS 64

/* The sections of the modules loaded, with the values they started with. */
static struct section
{
	char *start;
	size_t size;
	char *initial;
} sections[MAX_SECTIONS];
static unsigned nsections;

/* An actor: how it waits, its thread (NULL for main), its thread-locals while another runs. */
struct sim_actor
{
	struct _starpu_sim_waiter waiter;
	struct _starpu_sim_thread *thread;
	char *locals[MAX_SECTIONS];	/* NULL: it never ran since the section came, it has its initial values */
	int err;
};

/* The actor whose values the sections hold (NULL: none yet, or it ended). */
static struct sim_actor *holder;

void astro_sim_locals_register(char *start, char *stop)
{
	if (!start || stop <= start)
		return;
	for (unsigned i = 0; i < nsections; i++)
		if (sections[i].start == start)
			return;
	unsigned i = 0;
	while (i < nsections && sections[i].start)
		i++;
	if (i == MAX_SECTIONS) {
		fprintf(stderr, "[astrolabe] simulation: more than %d modules with thread-local variables: raise MAX_SECTIONS "
			"in kernel/common/simgrid_actors.c\n", MAX_SECTIONS);
		abort();
	}
	size_t size = (size_t)(stop - start);
	char *initial = malloc(size);
	if (!initial)
		abort();
	memcpy(initial, start, size);
	sections[i] = (struct section){ start, size, initial };
	if (i == nsections)
		nsections++;
}

void astro_sim_locals_unregister(char *start)
{
	for (unsigned i = 0; i < nsections; i++)
		if (sections[i].start == start) {
			free(sections[i].initial);
			sections[i] = (struct section){ NULL, 0, NULL };
		}
}

static void put_aside(struct sim_actor *a)
{
	for (unsigned i = 0; i < nsections; i++) {
		if (!sections[i].start)
			continue;
		if (!a->locals[i] && !(a->locals[i] = malloc(sections[i].size)))
			abort();
		memcpy(a->locals[i], sections[i].start, sections[i].size);
	}
	a->err = errno;
}

static void put_back(struct sim_actor *a)
{
	for (unsigned i = 0; i < nsections; i++)
		if (sections[i].start)
			memcpy(sections[i].start, a->locals[i] ? a->locals[i] : sections[i].initial, sections[i].size);
	errno = a->err;
}

static struct sim_actor *self(void)
{
	return sg_actor_self() ? sg_actor_self_get_data() : NULL;
}

/* After every SimGrid call that may have run other actors: the caller's thread-locals in place. */
static void resumed(void)
{
	struct sim_actor *me = self();
	if (!me || me == holder)
		return;
	if (holder)
		put_aside(holder);
	put_back(me);
	holder = me;
}

static void forget(struct sim_actor *a)
{
	if (holder == a)
		holder = NULL;
	for (unsigned i = 0; i < MAX_SECTIONS; i++)
		free(a->locals[i]);
}

/* ----------------------------------------------------------- waiting */

static __attribute__((noreturn)) void outside_simulation(const char *what)
{
	fprintf(stderr, "[astrolabe] simulation: %s from code that is not part of the simulation: in a simulation build, "
		"make threads with starpu_pthread_create() and include <starpu.h> in the file that defines main()\n", what);
	abort();
}

/* Code outside the simulation (before it runs) takes locks as one thread, which never waits. */
static struct _starpu_sim_waiter outside;

struct _starpu_sim_waiter *_astro_sim_waiter(void)
{
	struct sim_actor *me = self();
	return me ? &me->waiter : &outside;
}

struct _starpu_sim_waiter *_astro_sim_ready_to_wait(const char *what)
{
	struct sim_actor *me = self();
	if (!me)
		outside_simulation(what);
	if (!me->waiter.sem)
		me->waiter.sem = sg_sem_init(0);
	me->waiter.next = NULL;
	return &me->waiter;
}

void _astro_sim_block(struct _starpu_sim_waiter *w)
{
	sg_sem_acquire(w->sem);
	resumed();
}

bool _astro_sim_block_until(struct _starpu_sim_waiter *w, double deadline)
{
	double left = deadline - simgrid_get_clock();
	if (left <= 0)
		return true;
	bool timed_out = sg_sem_acquire_timeout(w->sem, left) != 0;
	resumed();
	return timed_out;
}

void _astro_sim_hand_over(struct _starpu_sim_waiter *w)
{
	sg_sem_release(w->sem);
	resumed();
}

/* ------------------------------------------------ time, sleeps, transfers */

uint64_t astro_sim_clock_ns(void)
{
	return (uint64_t)llround(simgrid_get_clock() * 1e9);
}

void astro_sim_sleep_ns(uint64_t ns)
{
	if (!self())
		outside_simulation("a sleep");
	sg_actor_sleep_for((double)ns * 1e-9);
	resumed();
}

void astro_sim_yield(void)
{
	if (!self())
		return;
	sg_actor_yield();
	resumed();
}

/* Under SMPI (smpirun), the rank's own machine: its hosts are "<rank>-CPU0"... (simgrid/smpi-platform). */
static char host_prefix[16];

void *astro_sim_host(const char *name)
{
	if (!host_prefix[0])
		return sg_host_by_name(name);
	char full[128];
	snprintf(full, sizeof(full), "%s%s", host_prefix, name);
	return sg_host_by_name(full);
}

int astro_sim_sendto(const char *from, const char *to, double bytes)
{
	sg_host_t src = astro_sim_host(from), dst = astro_sim_host(to);
	if (!src || !dst)
		return -ENODEV;
	if (!self())
		outside_simulation("a transfer");
	sg_host_sendto(src, dst, bytes);
	resumed();
	return 0;
}

long astro_sim_thread_tid(void)
{
	return self() ? (long)sg_actor_self_get_pid() : (long)getpid();
}

bool _astro_sim_inside(void)
{
	return self() != NULL;
}

bool _astro_sim_route(const char *from, const char *to, double *bandwidth, double *latency)
{
	sg_host_t src = astro_sim_host(from), dst = astro_sim_host(to);
	if (!src || !dst)
		return false;
	*bandwidth = sg_host_get_route_bandwidth(src, dst);
	*latency = sg_host_get_route_latency(src, dst);
	return isfinite(*bandwidth) && *bandwidth > 0;
}

/* ---------------------------------------------------------------- threads */

/* SimGrid's SMPI (libsimgrid): lets an actor a rank made call MPI's local functions (ranks, sizes, types). */
void SMPI_thread_create(void);

/* A thread: its actor and what it runs. */
struct _starpu_sim_thread
{
	struct sim_actor actor;
	void *(*routine)(void *);
	void *arg, *retval;
	bool done, detached;
	starpu_pthread_mutex_t lock;
	starpu_pthread_cond_t ended;
};

static void thread_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	resumed();
	struct _starpu_sim_thread *t = self()->thread;
	/* The simulation ends with the program's main, whatever its threads still wait for. */
	sg_actor_daemonize(sg_actor_self());
	resumed();
	if (astro_sim_smpi())
		SMPI_thread_create();
	starpu_pthread_exit(t->routine(t->arg));
}

static void start_actor(const char *name, struct sim_actor *a, void (*code)(int, char **), sg_host_t host)
{
	sg_actor_t actor = sg_actor_init(name, host);
	sg_actor_set_data(actor, a);
	sg_actor_start(actor, code, 0, NULL);
	resumed();
}

int starpu_pthread_create(starpu_pthread_t *thread, const starpu_pthread_attr_t *attr, void *(*routine)(void *), void *arg)
{
	static unsigned count;
	if (!self())
		outside_simulation("starpu_pthread_create()");
	struct _starpu_sim_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return ENOMEM;
	int state = PTHREAD_CREATE_JOINABLE;
	if (attr)
		pthread_attr_getdetachstate(attr, &state);
	t->actor.thread = t;
	t->routine = routine;
	t->arg = arg;
	t->detached = state == PTHREAD_CREATE_DETACHED;
	*thread = t;
	char name[32];
	snprintf(name, sizeof(name), "thread %u", ++count);
	start_actor(name, &t->actor, thread_main, sg_host_self());
	return 0;
}

void starpu_pthread_exit(void *retval)
{
	struct sim_actor *me = self();
	struct _starpu_sim_thread *t = me ? me->thread : NULL;
	if (t) {
		starpu_pthread_mutex_lock(&t->lock);
		t->retval = retval;
		t->done = true;
		starpu_pthread_cond_broadcast(&t->ended);
		bool detached = t->detached;
		starpu_pthread_mutex_unlock(&t->lock);
		forget(&t->actor);
		if (detached)
			free(t);
	}
	sg_actor_exit();
}

int starpu_pthread_join(starpu_pthread_t thread, void **retval)
{
	if (!thread || thread->detached)
		return EINVAL;
	if (thread == starpu_pthread_self())
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
	struct sim_actor *me = self();
	return me ? me->thread : NULL;
}

int starpu_pthread_equal(starpu_pthread_t t1, starpu_pthread_t t2)
{
	return t1 == t2;
}

/* ------------------------------------------------------------------ main */

static struct
{
	struct sim_actor actor;
	int (*fn)(int, char **);
	int argc;
	char **argv;
	int ret;
	bool done;
} main_call;

static void rank_main_ended(void);

static void main_actor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	resumed();
	if (astro_sim_smpi())
		SMPI_thread_create();
	main_call.ret = main_call.fn(main_call.argc, main_call.argv);
	main_call.done = true;
	rank_main_ended();
	forget(&main_call.actor);
}

int _astro_sim_run_main(int (*fn)(int, char **), int argc, char **argv, const char *where)
{
	main_call.fn = fn;
	main_call.argc = argc;
	main_call.argv = argv;
	sg_host_t host = sg_host_by_name(where);
	if (!host) {
		sg_host_t *hosts = sg_host_list();
		host = hosts[0];
		free(hosts);
	}
	sg_actor_t actor = sg_actor_init("main", host);
	sg_actor_set_data(actor, &main_call.actor);
	sg_actor_start(actor, main_actor, 0, NULL);
	simgrid_run();
	return main_call.ret;
}

/* -------------------------------------------------------- SMPI ranks */

/*
 * Under smpirun every rank's main() is a SimGrid actor that SMPI made, and
 * only that actor can exchange MPI messages: SMPI delivers what is sent to a
 * rank in the mailbox of the rank's first actor. So the program's main runs
 * in an actor of its own ("main", on the rank's host), and the rank's actor
 * stays to make the MPI calls others hand it (astro_sim_rank_call), StarPU-MPI's
 * progression loop among them, until the program's main returns.
 */
struct rank_call
{
	struct rank_call *next;
	void (*fn)(void *);
	void *arg;
	bool done;
};

static struct
{
	bool on;			/* this process is an SMPI rank */
	struct sim_actor actor;		/* the rank's own actor */
	starpu_pthread_mutex_t lock;
	starpu_pthread_cond_t wake, done;	/* wake: a call or main's end for the rank's actor; done: a call ran */
	struct rank_call *head, *tail;
	void (*waker)(void);		/* what wakes a long call that serves the others (astro_sim_rank_serve) */
} rank;

static bool on_rank_actor(void)
{
	return self() == &rank.actor;
}

static void rank_main_ended(void)
{
	if (!rank.on)
		return;
	starpu_pthread_mutex_lock(&rank.lock);
	starpu_pthread_cond_signal(&rank.wake);
	starpu_pthread_mutex_unlock(&rank.lock);
}

bool astro_sim_smpi(void)
{
	return rank.on;
}

void astro_sim_rank_serve(void)
{
	if (!rank.on || !on_rank_actor())
		return;
	starpu_pthread_mutex_lock(&rank.lock);
	while (rank.head) {
		struct rank_call *c = rank.head;
		rank.head = c->next;
		if (!rank.head)
			rank.tail = NULL;
		starpu_pthread_mutex_unlock(&rank.lock);
		c->fn(c->arg);
		starpu_pthread_mutex_lock(&rank.lock);
		c->done = true;
		starpu_pthread_cond_broadcast(&rank.done);
	}
	starpu_pthread_mutex_unlock(&rank.lock);
}

void astro_sim_rank_waker(void (*wake)(void))
{
	rank.waker = wake;
}

void astro_sim_rank_call(void (*fn)(void *), void *arg)
{
	if (!rank.on || on_rank_actor() || !self()) {
		fn(arg);
		return;
	}
	struct rank_call c = { NULL, fn, arg, false };
	starpu_pthread_mutex_lock(&rank.lock);
	if (rank.tail)
		rank.tail->next = &c;
	else
		rank.head = &c;
	rank.tail = &c;
	starpu_pthread_cond_signal(&rank.wake);
	void (*waker)(void) = rank.waker;
	starpu_pthread_mutex_unlock(&rank.lock);
	if (waker)
		waker();
	starpu_pthread_mutex_lock(&rank.lock);
	while (!c.done)
		starpu_pthread_cond_wait(&rank.done, &rank.lock);
	starpu_pthread_mutex_unlock(&rank.lock);
}

int _astro_sim_run_rank(int (*fn)(int, char **), int argc, char **argv)
{
	const char *name = sg_actor_self_get_name();
	rank.on = true;
	snprintf(host_prefix, sizeof(host_prefix), "%s-", name ? name : "0");
	if (!astro_sim_host("CPU0")) {
		fprintf(stderr, "[astrolabe] simulation: SMPI rank %s has no machine: the platform has no host '%sCPU0' (nor its "
			"'%sRAM', '%sCUDA0'...): make the platform with simgrid/smpi-platform NODES MACHINE, which gives each "
			"rank r its machine's hosts named r-CPU0...\n", name, host_prefix, host_prefix, host_prefix);
		return 1;
	}
	sg_actor_set_data(sg_actor_self(), &rank.actor);
	resumed();
	main_call.fn = fn;
	main_call.argc = argc;
	main_call.argv = argv;
	sg_actor_t actor = sg_actor_init("main", sg_host_self());
	sg_actor_set_data(actor, &main_call.actor);
	sg_actor_start(actor, main_actor, 0, NULL);
	resumed();
	starpu_pthread_mutex_lock(&rank.lock);
	while (!main_call.done) {
		if (rank.head) {
			starpu_pthread_mutex_unlock(&rank.lock);
			astro_sim_rank_serve();
			starpu_pthread_mutex_lock(&rank.lock);
			continue;
		}
		starpu_pthread_cond_wait(&rank.wake, &rank.lock);
	}
	starpu_pthread_mutex_unlock(&rank.lock);
	forget(&rank.actor);
	return main_call.ret;
}
