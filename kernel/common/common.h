/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's common room: what every room shares and nothing else. It uses
 * only the public headers: messages, the clock and the kernel's side of the
 * thread layer, recycled blocks, the calling thread's context, the runtime's
 * shared state, environment values, paths, the checked reading of the files
 * a user may replace (files.c: astro_file_read_regular()), signals and the
 * record of calls into foreign code.
 */
#ifndef __ASTRO_COMMON_H__
#define __ASTRO_COMMON_H__

#include "config.h"
#include <starpu.h>
#include <astrolabe/plugin.h>
#include <astrolabe/observe.h>
#include <astrolabe/task_build.h>
#include <astrolabe/thread.h>
#include <astrolabe/env.h>
#include "common/envparse.h"
#include <glib.h>
#include <stdbool.h>

#define _ASTRO_CACHELINE 64
/* Thread-locals of the kernel: initial-exec, so an access is one instruction, not a __tls_get_addr call. */
#define _ASTRO_TLS ASTRO_THREAD_LOCAL_IE

/* ------------------------------------------------------------- logging */

/* Error and info messages: one line, naming the thing and the fix. */
void _astro_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void _astro_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only when STARPU_PLUGIN_VERBOSE=1 (plugin loading details). */
void _astro_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int _astro_verbose_level;
/* From starpu_init() to the end of starpu_shutdown(), an error or warning
 * already printed is counted instead; the end says the repeated ones. */
void _astro_log_session_begin(void);
void _astro_log_session_end(void);

/* --------------------------------------------------------------- clock */

/* starpu_timing_now() inlined on the task path (util.c): the time-stamp
 * counter, converted with the rate calibrated at start-up, once the clock is
 * decided; util.c before that, or where the counter is not trusted. */
/* A simulation's clock is virtual (the thread layer's astro_clock_monotonic_ns()): no counter there. */
#if (defined(__x86_64__) || defined(__i386__)) && !defined(STARPU_SIMGRID)
/* __builtin_ia32_rdtsc(): no header (x86intrin.h is some 60,000 lines every kernel file would parse). */
#define _ASTRO_HAVE_TSC 1
struct _astro_tsc_clock
{
	int state;		/* read without lock; the fields below are final once it is _ASTRO_CLOCK_TSC */
	double base_us;		/* a CLOCK_MONOTONIC reading ... */
	uint64_t base_tsc;	/* ... and the counter at that moment */
	double us_per_tick;
};
enum { _ASTRO_CLOCK_UNDECIDED, _ASTRO_CLOCK_CALIBRATING, _ASTRO_CLOCK_TSC, _ASTRO_CLOCK_GETTIME };
extern struct _astro_tsc_clock _astro_tsc_clock;
#endif
double _astro_timing_slow(void);

/* Is the inline clock (_astro_tsc_now()) the clock? */
static inline bool _astro_clock_is_tsc(void)
{
#ifdef _ASTRO_HAVE_TSC
	return __atomic_load_n(&_astro_tsc_clock.state, __ATOMIC_ACQUIRE) == _ASTRO_CLOCK_TSC;
#else
	return false;
#endif
}

#ifdef _ASTRO_HAVE_TSC
static inline double _astro_tsc_now(void)
{
	return _astro_tsc_clock.base_us + (double)(int64_t)(__builtin_ia32_rdtsc() - _astro_tsc_clock.base_tsc) * _astro_tsc_clock.us_per_tick;
}
#else
#define _astro_tsc_now() 0.0
#endif

static inline double _astro_now(void)
{
	return STARPU_LIKELY(_astro_clock_is_tsc()) ? _astro_tsc_now() : _astro_timing_slow();
}


#ifdef STARPU_SIMGRID
/* The simulated machine's route between two of its hosts ("RAM", "CUDA0"...):
 * bandwidth in bytes/s, latency in s; false when it has no such hosts (simgrid.c). */
bool _astro_sim_route(const char *from, const char *to, double *bandwidth, double *latency);
/* Is the calling thread one of the simulation's (an actor)? */
bool _astro_sim_inside(void);
#endif

/* ------------------------------------------------------------ recycling */

/* Memory that one thread allocates and another frees, at every task
 * (recycle.c): blocks of one fixed size per kind, recycled through per-thread
 * caches instead of malloc. */
enum _astro_recycled
{
	_ASTRO_RECYCLED_TASK,			/* struct _astro_task_with_job */
	_ASTRO_RECYCLED_PROFILING_INFO,		/* struct starpu_profiling_task_info */
	_ASTRO_RECYCLED_TAG,			/* struct _astro_tag (tasks/tags.c): a chain makes and removes one per task */
	_ASTRO_NRECYCLED
};
/* A block of size bytes (always the same for one kind: sizeof its struct). */
void *_astro_recycled_alloc(enum _astro_recycled what, size_t size);
void _astro_recycled_free(enum _astro_recycled what, void *block);


/* ------------------------------------------- the calling thread (context.c) */

/* What the calling thread runs for the runtime, besides tasks on workers
 * (_astro_self): set around the code the runtime calls back, which may run on
 * an application thread too (a prologue or a tool callback during a
 * submission), so that blocking or terminal calls made from there are refused
 * instead of deadlocking. */
enum _astro_call_context
{
	_ASTRO_CTX_APPLICATION = 0,
	_ASTRO_CTX_CALLBACK,                 /* a task's callback, prologue or epilogue */
	_ASTRO_CTX_TOOL,                     /* a profiling-tool callback */
	_ASTRO_CTX_LISTENER,                 /* a performance counter's listener (counters/) */
};
extern _ASTRO_TLS enum _astro_call_context _astro_call_context;
/* The worker the calling thread is (NULL: not a worker) and the task it runs. */
struct _astro_worker;
extern _ASTRO_TLS struct _astro_worker *_astro_self;
extern _ASTRO_TLS struct starpu_task *_astro_current_task;

/* starpu_worker_get_id(), inlined on the task path: a worker's id is the first
 * field of its struct (workers/workers.h checks it), so that every room may
 * name the calling worker in what it observes. */
static inline int _astro_worker_id(void)
{
	return _astro_self ? *(const int *)(const void *)_astro_self : -1;
}

static inline enum _astro_call_context _astro_context_enter(enum _astro_call_context context)
{
	enum _astro_call_context previous = _astro_call_context;
	_astro_call_context = context;
	return previous;
}

static inline void _astro_context_leave(enum _astro_call_context previous)
{
	_astro_call_context = previous;
}

/* Is the calling thread inside the runtime: a worker, a callback, a tool callback or a listener? */
bool _astro_called_back(void);

/* Returns 0 when the calling thread may block. From a task, a callback, a tool
 * callback or a counter listener, prints one line saying that call cannot be
 * made from there (hint: what to do instead, or NULL) and returns -EDEADLK.
 * Inline: the application's own thread (the blocking calls' usual caller, on
 * the synchronous task path) pays two thread-local loads, no call. */
int _astro_forbid_blocking_here(const char *call, const char *hint);
static inline int _astro_forbid_blocking(const char *call, const char *hint)
{
	if (STARPU_LIKELY(_astro_call_context == _ASTRO_CTX_APPLICATION && !_astro_self))
		return 0;
	return _astro_forbid_blocking_here(call, hint);
}


/* --------------------------------------------------- tasks' public fields */

/* What every room reads of a task's job (task->starpu_private, set by the tasks
 * room): struct _astro_job (tasks/tasks.h) begins with these fields, and checks it. */
struct _astro_job_head
{
	struct starpu_task *task;            /* NULL for the runtime's own jobs */
	unsigned long id;
	void *policy_data;                   /* the policies' word for the task (astro_sched_task_data(), astrolabe/sched.h) */
	int runnable_on;                     /* a worker id + 1 that can run implementation 0 (starpu_worker_can_execute_task()
					      * said so since the submission, which clears it); 0: none known */
};
/* astrolabe/sched.h reads policy_data at this offset (struct astro_sched_job_head). */
_Static_assert(offsetof(struct _astro_job_head, policy_data) == sizeof(void *) + sizeof(unsigned long), "the policies' word sits after the job's id");

/* The id of task's job, as the observation path names it (task submitted, or made by starpu_task_create()). */
static inline unsigned long _astro_job_id_of(const struct starpu_task *task)
{
	return ((const struct _astro_job_head *)task->starpu_private)->id;
}

/* The number of buffers of task (its codelet's, or its own for STARPU_VARIABLE_NBUFFERS); 0 without codelet. */
static inline unsigned _astro_task_nbuffers(const struct starpu_task *task)
{
	if (!task->cl)
		return 0;
	return task->cl->nbuffers == STARPU_VARIABLE_NBUFFERS ? (unsigned)task->nbuffers : (unsigned)task->cl->nbuffers;
}

/* The plugin whose init or fini is running (core/plugin.c sets it around the
 * call; NULL otherwise), so that what it registers is reported under its name. */
struct _astro_registrant
{
	const char *name, *path;
	bool refused;                        /* one of its registrations was refused, and said so */
};
extern struct _astro_registrant *_astro_registrant;
/* "plugin NAME (PATH)" while a plugin's init runs (g_free it), NULL otherwise; refused: this
 * registration is refused and says so (the init's failure then adds no message). */
char *_astro_plugin_initialising(bool refused);

/* ----------------------------------------------------- shared state (state.c) */

struct _astro_runtime
{
	struct starpu_conf conf;
	int initialized;                     /* atomic: an enum _astro_state */
	unsigned nworkers;
	struct _astro_worker *workers[STARPU_NMAXWORKERS];
	unsigned nworkers_by_arch[STARPU_NARCH];
	uint32_t where_mask;                 /* union of the drivers' where bits with workers */
	const struct astro_driver *active_drivers[STARPU_NARCH]; /* drivers that started workers */
	unsigned nactive_drivers;
	/* Written while tasks run: a cache line apart from the read-mostly fields above. */
	int running __attribute__((aligned(_ASTRO_CACHELINE))); /* workers keep looping */
	int paused;
	starpu_pthread_mutex_t pause_lock;
	starpu_pthread_cond_t pause_cond;
	/* Tasks submitted and not completed, and tasks ready and not completed: each the difference
	 * of two sums (_astro_nsubmitted(), _astro_nready()). Submissions and readiness add on one
	 * line (a submission also gives back there its count of being under way), completions on
	 * another, so that the thread that submits and the worker that completes do not pass a line
	 * to each other at every task. Atomic. */
	long nsubmitted_added __attribute__((aligned(_ASTRO_CACHELINE))); /* +2 per submission, -1 once it returns (task.c, submit_enter) */
	long nready_added;
	long nsubmitted_done __attribute__((aligned(_ASTRO_CACHELINE)));
	long nready_done;
	starpu_pthread_mutex_t wait_lock __attribute__((aligned(_ASTRO_CACHELINE))); /* wait_for_all */
	starpu_pthread_cond_t wait_cond;
	int all_waiters;                     /* threads in starpu_task_wait_for_n_submitted() */
	long wait_threshold;                 /* largest n they wait for: completions above it wake nobody */
	bool nobind;
	bool codelet_profiling;
	int calibrate;                       /* STARPU_CALIBRATE; starpu.global.g_calibrate_knob */
	int prio_capped;                     /* a priority cap knob was set: submissions clamp priorities to their context's caps */
	void *topology;                      /* hwloc_topology_t */
	unsigned npus;
	unsigned ncores;
	double start_time;
	unsigned nmemory_nodes;
};

extern struct _astro_runtime _astro_rt;

/* The runtime's life (core/init.c). starpu_shutdown() drains in two steps: while
 * DRAINING only the runtime's own threads and callbacks may still submit
 * (StarPU lets callbacks submit during the final wait); once STOPPING nobody
 * may, and the last tasks accepted are waited for before anything is torn
 * down. A submission counts itself in nsubmitted before it reads the state
 * (task.c, submit_enter): either shutdown's wait sees it or it sees the state. */
enum _astro_state
{
	_ASTRO_STOPPED = 0,
	_ASTRO_RUNNING = 1,
	_ASTRO_STARTING = -1,
	_ASTRO_DRAINING = 2,
	_ASTRO_STOPPING = 3,
};

static inline struct _astro_worker *_astro_worker(int id)
{
	return _astro_rt.workers[id];
}

/* added - done, done read first: done only grows, so the result is at least the count at the
 * second read. Read while tasks come and go, a count may be too high, never too low. */
static inline long _astro_count_difference(const long *added, const long *done)
{
	long d = __atomic_load_n(done, __ATOMIC_SEQ_CST);
	return __atomic_load_n(added, __ATOMIC_SEQ_CST) - d;
}

/* Tasks submitted and not completed (with the submissions under way). */
static inline long _astro_nsubmitted(void)
{
	return _astro_count_difference(&_astro_rt.nsubmitted_added, &_astro_rt.nsubmitted_done);
}

/* Tasks ready (all their dependencies met) and not completed. */
static inline long _astro_nready(void)
{
	return _astro_count_difference(&_astro_rt.nready_added, &_astro_rt.nready_done);
}

/* Running, or draining at shutdown: tasks still run. */
static inline bool _astro_running(void)
{
	int state = __atomic_load_n(&_astro_rt.initialized, __ATOMIC_ACQUIRE);
	return state == _ASTRO_RUNNING || state == _ASTRO_DRAINING;
}

/* One round of polite spinning: a waiting thread looks again after a pause of
 * round; it soon gives its core away, since the thread it waits for may share
 * that core (one pause costs from a few to some 25 ns, depending on the CPU). */
static inline void _astro_relax(unsigned round)
{
	if (round < 8) {
		for (unsigned i = 0; i < 8; i++)
			astro_cpu_relax();
	} else {
		astro_thread_yield();
	}
}



/* ------------------------------------------------ environment (state.c, util.c) */

/* Environment resolution honouring conf->precedence_over_environment_variables,
 * for a value that must lie in [min, max]: any other is said once and
 * replaced by conf_value, or fallback when the conf leaves it at -1. */
int _astro_conf_int_in(const char *env, const char *alias, int conf_value, int min, int max, int fallback);
/* Parses the integer variable name (util.c): 1 and *out when set to a number in
 * [min, max], 0 when unset, -1 when set to something else, which is said in
 * one line naming the variable, its value and what is used instead: *fallback,
 * or nothing (as if unset) when fallback is NULL. */
int _astro_env_int(const char *name, int min, int max, const int *fallback, int *out);
/* The variable's value when it lies in [min, max], fallback otherwise (saying why when it is set). */
int _astro_env_int_in(const char *name, int min, int max, int fallback);


/* ----------------------------------------------------------- paths (paths.c) */

/* The directory the models and the bus files are written to (STARPU_PERF_MODEL_DIR,
 * else $STARPU_HOME/.starpu/sampling), and the host name their files carry (STARPU_HOSTNAME). */
void _astro_sampling_dir(char *path, size_t len);
void _astro_host_name(char *host, size_t len);
/* The folder the runtime's files go under: $XDG_CACHE_HOME, $STARPU_HOME, $HOME, or a temporary folder. */
const char *_astro_home_dir(void);

/* ------------------------------------------------ signals (signals.c) */

/* signals.c: the runtime's handlers of SIGINT, SIGSEGV and SIGTRAP (STARPU_CATCH_SIGNALS). */
void _astro_signals_init(void);
void _astro_signals_shutdown(void);
int _astro_signals_catch(bool on);
int _astro_signals_caught(void);

/* A call into a plugin or a tool that is not on the task path (a plugin's
 * init and fini, a tool's register function, a policy's init_sched...),
 * recorded for the signal handler, which names the one that crashed. The
 * strings must outlive the call; calls nest (a tool's register function may
 * call into the runtime, which calls a plugin).
 *
 * On the task path (a policy's push_task, a tool's callback, a codelet) the
 * record is made once and shared by every call (_astro_site_enter()): a call
 * costs a load and two stores. */
enum _astro_site_kind
{
	_ASTRO_SITE_CALL = 0,                /* what, file, symbol and advice say it all */
	_ASTRO_SITE_CODELET,                 /* a worker's codelet: what is the worker's name, the task is _astro_current_task */
};
struct _astro_foreign_call
{
	const char *what;			/* "plugin sched_eager's init" */
	const char *file;			/* the library it lives in */
	const char *symbol;			/* the symbol it was found by */
	const char *advice;			/* "the plugin crashed; fix or remove it" */
	enum _astro_site_kind kind;
	const struct _astro_foreign_call *outer; /* _astro_foreign_enter()'s only: a shared site keeps it in its caller */
	char *owned_what;			/* what, when _astro_foreign_enter_fn() formatted it */
};
extern _ASTRO_TLS const struct _astro_foreign_call *_astro_foreign_call;
/* Sets call->file and call->symbol to where fn lives; symbol is fallback when fn is not exported. */
void _astro_foreign_locate(struct _astro_foreign_call *call, void *fn, const char *fallback);

/* Enters a call of fn, located with _astro_foreign_locate(), its what formatted
 * from fmt (freed by _astro_foreign_leave_fn()). */
void _astro_foreign_enter_fn(struct _astro_foreign_call *call, void *fn, const char *fallback, const char *advice,
			     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void _astro_foreign_leave_fn(struct _astro_foreign_call *call);

static inline void _astro_foreign_enter(struct _astro_foreign_call *call)
{
	call->outer = _astro_foreign_call;
	_astro_foreign_call = call;
	/* The handler runs on this thread: the compiler must not sink the store past the call. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void _astro_foreign_leave(struct _astro_foreign_call *call)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	_astro_foreign_call = call->outer;
}

/* A call on the task path into the foreign code site names, shared by all
 * threads: returns the site it nests in, for _astro_site_leave(). No branch,
 * no atomic, no lock, no fence: the call is opaque to the compiler (through
 * a pointer, or into another file), which therefore stores before it and
 * restores after it. */
static inline __attribute__((always_inline)) const struct _astro_foreign_call *
_astro_site_enter(const struct _astro_foreign_call *site)
{
	const struct _astro_foreign_call *outer = _astro_foreign_call;
	_astro_foreign_call = site;
	return outer;
}

static inline __attribute__((always_inline)) void _astro_site_leave(const struct _astro_foreign_call *outer)
{
	_astro_foreign_call = outer;
}

/* The same where the cheapest matters most (a push, a submission): the
 * site is cleared after the call rather than the outer one restored. A
 * call nested in another site (a task submitted from a tool's callback)
 * leaves the rest of that one unnamed, never wrongly named. */
static inline __attribute__((always_inline)) void _astro_site_enter_top(const struct _astro_foreign_call *site)
{
	_astro_foreign_call = site;
}

static inline __attribute__((always_inline)) void _astro_site_leave_top(void)
{
	_astro_foreign_call = NULL;
}

/* A worker's own calls at the top of its loop (its pops, its codelets, the
 * policy's exec hooks) record their site in the worker's struct, one store
 * each way (workers/workers.h: _astro_worker_site_enter()); the handler
 * reads it at this offset from _astro_self when the thread's chain above is
 * empty (a site entered in there, a task submitted from a codelet, nests
 * inside). 0 until the workers room sets it. */
extern size_t _astro_worker_site_offset;

/* Formats site (kept by its owner for as long as it may be entered) as a call of fn: what, from fmt, in
 * buf (size bytes, cut if longer), file and symbol as _astro_foreign_locate() finds them. */
void _astro_site_format(struct _astro_foreign_call *site, char *buf, size_t size, void *fn, const char *fallback,
			const char *advice, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

#endif /* __ASTRO_COMMON_H__ */
