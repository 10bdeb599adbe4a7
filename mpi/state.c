/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * StarPU-MPI's shared state, at the bottom of mpi/ (it calls no other file
 * of it): whether StarPU-MPI runs, the thread level MPI gave (and the lock
 * that serialises MPI calls below MPI_THREAD_MULTIPLE), MPI's largest tag,
 * and the communicators' ranks and sizes (asked once, then remembered).
 * init.c sets it at starpu_mpi_init*() and clears it at starpu_mpi_shutdown().
 */
#include "mpi_private.h"

#include <errno.h>
#include <stdint.h>

static bool running;		/* atomic reads */

/* Below MPI_THREAD_MULTIPLE, one MPI call at a time: the progression thread's and the application thread's. */
static bool serialize;
static starpu_pthread_mutex_t mpi_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
int _astro_mpi_tag_ub = 32767;	/* the smallest MPI_TAG_UB the standard allows */

/* The communicators asked about: few, so a small table (state per communicator, none per rank).
 * Entries are only added while StarPU-MPI runs (under comms_lock), each published by
 * the release store of ncomms: every message looks its communicator up without a lock. */
#define MAX_COMMS 64
static struct
{
	MPI_Comm comm;
	int rank, size;
} comms[MAX_COMMS];
static int ncomms;	/* atomic reads */
static starpu_pthread_mutex_t comms_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

bool _astro_mpi_running(const char *fn)
{
	if (__atomic_load_n(&running, __ATOMIC_ACQUIRE))
		return true;
	_astro_mpi_error("%s: StarPU-MPI is not initialised: call starpu_mpi_init_conf() (or starpu_mpi_init()) first", fn);
	return false;
}

bool _astro_mpi_is_running(void)
{
	return __atomic_load_n(&running, __ATOMIC_RELAXED);
}

void _astro_mpi_set_running(bool on)
{
	__atomic_store_n(&running, on, __ATOMIC_RELEASE);
}

bool _astro_mpi_thread_multiple(void)
{
	return !serialize;
}

void _astro_mpi_lock(void)
{
	if (serialize)
		starpu_pthread_mutex_lock(&mpi_lock);
}

void _astro_mpi_unlock(void)
{
	if (serialize)
		starpu_pthread_mutex_unlock(&mpi_lock);
}

static const char *thread_level_name(int level)
{
	switch (level) {
	case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
	case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
	case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
	default: return "MPI_THREAD_MULTIPLE";
	}
}

/* StarPU-MPI calls MPI from its progression thread: with MPI_THREAD_MULTIPLE
 * freely, below it one call at a time. Below MPI_THREAD_SERIALIZED that is
 * all it can do, and it says so. */
void _astro_mpi_use_thread_level(int provided)
{
	serialize = provided < MPI_THREAD_MULTIPLE || _astro_mpi_smpi();
	/* Under SMPI the rank's own actor makes every MPI call (_astro_mpi_on_rank): any level does. */
	if (_astro_mpi_smpi())
		return;
	if (provided < MPI_THREAD_SERIALIZED)
		_astro_mpi_error("warning: MPI was initialised with %s, but StarPU-MPI calls MPI from its progression thread; "
				 "it serialises its calls, which works with Open MPI: to be safe, initialise MPI with "
				 "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) or let starpu_mpi_init*() do it (initialize_mpi = 1)",
				 thread_level_name(provided));
}

bool _astro_mpi_smpi(void)
{
#ifdef STARPU_SIMGRID
	return astro_sim_smpi();
#else
	return false;
#endif
}

void _astro_mpi_on_rank(void (*fn)(void *), void *arg)
{
#ifdef STARPU_SIMGRID
	astro_sim_rank_call(fn, arg);
#else
	fn(arg);
#endif
}

struct mpi_state
{
	int initialized, finalized;
};

static void ask_state(void *arg)
{
	struct mpi_state *st = arg;
	MPI_Initialized(&st->initialized);
	MPI_Finalized(&st->finalized);
}

static bool mpi_usable(const char *fn)
{
	struct mpi_state st = { 0, 0 };
	_astro_mpi_on_rank(ask_state, &st);
	int initialized = st.initialized, finalized = st.finalized;
	if (!initialized || finalized) {
		_astro_mpi_error("%s: MPI is %s: call it between starpu_mpi_init_conf() (or MPI_Init_thread()) and starpu_mpi_shutdown()",
				 fn, finalized ? "finalised already" : "not initialised");
		return false;
	}
	return true;
}

struct comm_ask
{
	MPI_Comm comm;
	int *rank, *size, err;
};

static void ask_comm(void *arg)
{
	struct comm_ask *q = arg;
	_astro_mpi_lock();
	q->err = MPI_Comm_rank(q->comm, q->rank);
	if (q->err == MPI_SUCCESS)
		q->err = MPI_Comm_size(q->comm, q->size);
	_astro_mpi_unlock();
}

/* A communicator met for the first time (or MPI_COMM_NULL): asked to MPI, then listed. */
static __attribute__((noinline)) int comm_info_ask(MPI_Comm comm, int *rank, int *size, const char *fn)
{
	if (comm == MPI_COMM_NULL) {
		_astro_mpi_error("%s: the communicator is MPI_COMM_NULL: pass MPI_COMM_WORLD or a communicator of this process", fn);
		return -EINVAL;
	}
	if (!mpi_usable(fn))
		return -EINVAL;
	struct comm_ask q = { comm, rank, size, MPI_SUCCESS };
	_astro_mpi_on_rank(ask_comm, &q);
	int err = q.err;
	if (err != MPI_SUCCESS) {
		_astro_mpi_error("%s: MPI does not know the communicator (error %d): pass MPI_COMM_WORLD or a communicator of this process", fn, err);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&comms_lock);
	bool listed = false;
	for (int i = 0; i < ncomms; i++)
		listed = listed || comms[i].comm == comm;
	if (!listed && ncomms < MAX_COMMS) {
		comms[ncomms].comm = comm;
		comms[ncomms].rank = *rank;
		comms[ncomms].size = *size;
		__atomic_store_n(&ncomms, ncomms + 1, __ATOMIC_RELEASE);
	}
	starpu_pthread_mutex_unlock(&comms_lock);
	return 0;
}

/* Every message asks: a listed communicator is found without a call. */
int _astro_mpi_comm_info(MPI_Comm comm, int *rank, int *size, const char *fn)
{
	int known = __atomic_load_n(&ncomms, __ATOMIC_ACQUIRE);
	for (int i = 0; i < known; i++) {
		if (comms[i].comm == comm) { /* MPI_COMM_NULL is never listed */
			*rank = comms[i].rank;
			*size = comms[i].size;
			return 0;
		}
	}
	return comm_info_ask(comm, rank, size, fn);
}

void _astro_mpi_comms_forget(void)
{
	starpu_pthread_mutex_lock(&comms_lock);
	__atomic_store_n(&ncomms, 0, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&comms_lock);
}

int starpu_mpi_comm_rank(MPI_Comm comm, int *rank)
{
	int size;
	if (!rank) {
		_astro_mpi_error("starpu_mpi_comm_rank: NULL rank: pass where to write it");
		return -EINVAL;
	}
	return _astro_mpi_comm_info(comm, rank, &size, "starpu_mpi_comm_rank");
}

int starpu_mpi_comm_size(MPI_Comm comm, int *size)
{
	int rank;
	if (!size) {
		_astro_mpi_error("starpu_mpi_comm_size: NULL size: pass where to write it");
		return -EINVAL;
	}
	return _astro_mpi_comm_info(comm, &rank, size, "starpu_mpi_comm_size");
}

int starpu_mpi_world_rank(void)
{
	int rank, size;
	return _astro_mpi_comm_info(MPI_COMM_WORLD, &rank, &size, "starpu_mpi_world_rank") ? -1 : rank;
}

int starpu_mpi_world_size(void)
{
	int rank, size;
	return _astro_mpi_comm_info(MPI_COMM_WORLD, &rank, &size, "starpu_mpi_world_size") ? -1 : size;
}

/* As MPI_Comm_get_attr(), and as StarPU-MPI: *attribute_val receives a pointer
 * to the value; a key without attribute gives *flag = 0, which is no error. */
int starpu_mpi_comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
	static const int64_t tag_ub = INT64_MAX; /* tags beyond MPI's travel in envelopes (envelope.c) */
	(void)comm;
	if (!flag) {
		_astro_mpi_error("starpu_mpi_comm_get_attr: NULL flag: pass where to write it");
		return -EINVAL;
	}
	*flag = 0;
	if (keyval != STARPU_MPI_TAG_UB)
		return 0;
	if (!attribute_val) {
		_astro_mpi_error("starpu_mpi_comm_get_attr: NULL attribute_val: pass the address of an int64_t * to receive the value");
		return -EINVAL;
	}
	*(const int64_t **)attribute_val = &tag_ub;
	*flag = 1;
	return 0;
}

/* The processing unit the progression thread was bound to (STARPU_MPI_THREAD_CPUID), -1 when none. */
static int thread_cpuid = -1;

void _astro_mpi_set_thread_cpuid(int cpuid)
{
	__atomic_store_n(&thread_cpuid, cpuid, __ATOMIC_RELEASE);
}

int starpu_mpi_get_thread_cpuid(void)
{
	return __atomic_load_n(&thread_cpuid, __ATOMIC_ACQUIRE);
}

int starpu_mpi_comm_register(MPI_Comm comm)
{
	int rank, size;
	return _astro_mpi_comm_info(comm, &rank, &size, "starpu_mpi_comm_register");
}
