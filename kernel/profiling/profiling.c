/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * On-line performance feedback (starpu_profiling.h): per-task timing,
 * per-worker time split, per-bus transfers, data statistics and the
 * summaries printed at shutdown.
 *
 * Everything here is one consumer of the observation path: it subscribes to
 * the kernel's moments, and only to those the enabled feedback needs, so
 * profiling "off" costs the task path nothing more than the enable mask.
 *
 * Per worker, a small state machine driven by the moments the worker fires on
 * its own thread (scheduling, sleeping, fetching, executing, callbacks,
 * transfers) accumulates both views of time. Only the worker writes its
 * record (a seqlock, no lock on the task path); readers take consistent
 * snapshots and keep their own baselines, so "reset" never writes the
 * worker's record. Enabling profiling starts a new epoch: each worker resets
 * its record at its next moment, crediting the time since the reset to the
 * state that moment ends (SLEEP_END: it was sleeping...).
 *
 * Per task, the starpu_profiling_task_info is a recycled block (recycle.c):
 * no malloc and no lock per task. The worker that pops a task makes its info
 * (the submission and push dates wait in the job): the block comes from the
 * worker's own cache, where it freed tasks of a moment ago, so the task's
 * dates are written to memory already in that core's cache, instead of a
 * block the submitting thread cleared long before, maybe on another core.
 */
#include "profiling/profiling.h"
#include <astrolabe/energy.h>
#include <math.h>

/* ------------------------------------------------------------- the clock */

static double init_us;        /* starpu_timing_now() at starpu_init() */

static int64_t ns_since_init(double time_us)
{
	/* Truncated: a cast, not llround(), on this per-moment path. */
	return (int64_t)((time_us - init_us) * 1e3);
}

static int64_t now_ns(void)
{
	return ns_since_init(_astro_now());
}

static struct timespec timespec_of(int64_t ns)
{
	if (ns < 0)
		ns = 0;
	struct timespec ts = { .tv_sec = (time_t)(ns / STARPU_NS_PER_S), .tv_nsec = (long)(ns % STARPU_NS_PER_S) };
	return ts;
}

int64_t _astro_prof_now_ns(void)
{
	return now_ns();
}

struct timespec _astro_prof_timespec_of(int64_t ns)
{
	return timespec_of(ns);
}

double starpu_timing_timespec_delay_us(struct timespec *start, struct timespec *end)
{
	if (!start || !end) {
		_astro_error("starpu_timing_timespec_delay_us: NULL timespec");
		return NAN;
	}
	return (double)(end->tv_sec - start->tv_sec) * 1e6 + (double)(end->tv_nsec - start->tv_nsec) * 1e-3;
}

double starpu_timing_timespec_to_us(struct timespec *ts)
{
	if (!ts) {
		_astro_error("starpu_timing_timespec_to_us: NULL timespec");
		return NAN;
	}
	return (double)ts->tv_sec * 1e6 + (double)ts->tv_nsec * 1e-3;
}

/* ---------------------------------------------------------------- status */

static int profiling_status;          /* atomic: STARPU_PROFILING_ENABLE / DISABLE */
static int profiling_id;
static int subscription = -1;         /* our observer while the runtime runs */
static unsigned epoch;                /* atomic: bumped at each enable */
/* Serialises the readers and the status changes (never taken on the task path). */
starpu_pthread_mutex_t _astro_prof_reader_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

static bool stats_enabled;            /* STARPU_ENABLE_STATS, unless STARPU_STATS=0 */
static bool bus_stats_wanted;         /* STARPU_BUS_STATS */
bool _astro_memory_stats_enabled;     /* STARPU_MEMORY_STATS */

static bool profiling_on(void)
{
	return __atomic_load_n(&profiling_status, __ATOMIC_RELAXED) == STARPU_PROFILING_ENABLE;
}

int starpu_profiling_status_get(void)
{
	return __atomic_load_n(&profiling_status, __ATOMIC_RELAXED);
}

void starpu_profiling_set_id(int new_id)
{
	__atomic_store_n(&profiling_id, new_id, __ATOMIC_RELAXED);
}

int astro_trace_file_id(void)
{
	return __atomic_load_n(&profiling_id, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------ task infos */

/* A zeroed info for the task submitted at submit_ns, reusing the one it already has. */
static struct starpu_profiling_task_info *task_info_attach(struct starpu_task *task, int64_t submit_ns)
{
	struct _astro_job *job = task->starpu_private;
	struct starpu_profiling_task_info *info = task->profiling_info;
	if (!info) {
		info = _astro_recycled_alloc(_ASTRO_RECYCLED_PROFILING_INFO, sizeof(struct starpu_profiling_task_info));
		if (!info)
			return NULL; /* out of memory: this task goes without feedback */
		job->profiling_info_pooled = info;
		task->profiling_info = info;
	}
	memset(info, 0, sizeof(*info));
	info->workerid = -1;
	info->submit_time = timespec_of(submit_ns);
	return info;
}

/* At submission. A task that will run on a worker and has no info yet gets
 * one when a worker pops it (task_info); the others get it now. */
static void task_submitted(struct starpu_task *task, int64_t now)
{
	struct _astro_job *job = task->starpu_private;
	job->profiling_pending = !task->profiling_info && task->cl && task->cl->where != STARPU_NOWHERE;
	if (job->profiling_pending) {
		job->profiling_submit_ns = now;
		job->profiling_push_ns = -1;
	} else {
		task_info_attach(task, now);
	}
}

/* The task's info, made from the dates kept in the job at its first moment on a worker. */
static struct starpu_profiling_task_info *task_info(struct starpu_task *task)
{
	struct starpu_profiling_task_info *info = task->profiling_info;
	struct _astro_job *job = task->starpu_private;
	if (info || !job->profiling_pending)
		return info;
	job->profiling_pending = false;
	info = task_info_attach(task, job->profiling_submit_ns);
	if (info && job->profiling_push_ns >= 0)
		info->push_start_time = info->push_end_time = timespec_of(job->profiling_push_ns);
	return info;
}

/* ------------------------------------------------------------ worker state */

enum worker_state
{
	STATE_EXECUTING,   /* split priority: the first set state wins */
	STATE_CALLBACK,
	STATE_WAITING,
	STATE_SLEEPING,
	STATE_SCHEDULING,
	NSTATES
};

struct times
{
	int64_t all[NSTATES];
	int64_t split[NSTATES];
	double flops;
	double energy;                 /* Joules of the tasks it ended (astro_energy_worker_add) */
};

#define S(state) (1u << (state))

/* Written by the worker's thread only; fields others read are atomics under seq. */
struct worker_record
{
	unsigned seq;                  /* odd while the worker updates */
	unsigned epoch;
	unsigned bits;                 /* S(state) for the states it is in */
	int64_t last_ns;               /* time of the last transition */
	struct times acc;              /* cumulated since the epoch started */
	int64_t exp_end_ns;            /* expected end of the running task, -1 when none */
	/* The worker's own view, never read by others: it waits while it fetches or transfers. */
	unsigned callback_depth;
	unsigned transfer_depth;
	bool fetching;
	int64_t sched_begin_ns;        /* start of the current pop attempt, -1 when none */
} __attribute__((aligned(_ASTRO_CACHELINE)));

/* What the readers keep per worker (under reader_lock). */
struct worker_reader
{
	int64_t start_ns;              /* start of the current measurement interval */
	int64_t reset_ns;              /* atomic: a worker adopting the epoch accounts from here */
	struct times base;             /* cumulated values at start_ns */
	unsigned long base_executed;
	bool frozen;                   /* profiling was disabled at frozen_ns: report frozen_times */
	int64_t frozen_ns;
	struct times frozen_times;
	unsigned long frozen_executed; /* the worker's executed count at frozen_ns */
} __attribute__((aligned(_ASTRO_CACHELINE)));

static struct worker_record records[STARPU_NMAXWORKERS];
static struct worker_reader readers[STARPU_NMAXWORKERS];

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

static void store_double(double *p, double v)
{
	__atomic_store(p, &v, __ATOMIC_RELAXED);
}

static double load_double(double *p)
{
	double v;
	__atomic_load(p, &v, __ATOMIC_RELAXED);
	return v;
}

/* Adds delta to the states in bits: each in the "all" view, the first one in the split view. */
static void times_add(struct times *t, unsigned bits, int64_t delta)
{
	if (!bits || delta <= 0)
		return;
	t->split[__builtin_ctz(bits)] += delta;
	for (unsigned s = 0; s < NSTATES; s++)
		if (bits & S(s))
			t->all[s] += delta;
}

static void record_begin(struct worker_record *r)
{
	STORE(&r->seq, r->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void record_end(struct worker_record *r)
{
	__atomic_store_n(&r->seq, r->seq + 1, __ATOMIC_RELEASE);
}

/* Credits the time since the last transition to the current states (inside begin/end). */
static void record_advance(struct worker_record *r, int64_t now)
{
	int64_t delta = now - r->last_ns;
	if (delta <= 0)
		return;
	unsigned bits = r->bits;
	if (bits) {
		unsigned first = (unsigned)__builtin_ctz(bits);
		STORE(&r->acc.split[first], r->acc.split[first] + delta);
		for (unsigned b = bits; b; b &= b - 1) {
			unsigned s = (unsigned)__builtin_ctz(b);
			STORE(&r->acc.all[s], r->acc.all[s] + delta);
		}
	}
	STORE(&r->last_ns, now);
}

/* First moment of this worker in a new epoch: start from zero at the reset time,
 * in the state this moment ends (the only thing known about what came before). */
static void record_adopt(struct worker_record *r, int workerid, unsigned current_epoch, enum astro_moment moment)
{
	r->callback_depth = moment == ASTRO_MOMENT_TASK_CALLBACK_END;
	r->transfer_depth = moment == ASTRO_MOMENT_TRANSFER_END;
	r->fetching = moment == ASTRO_MOMENT_TASK_DATA_FETCHED;
	unsigned bits = 0;
	if (moment == ASTRO_MOMENT_TASK_ENDED)
		bits |= S(STATE_EXECUTING);
	if (r->callback_depth)
		bits |= S(STATE_CALLBACK);
	if (r->fetching || r->transfer_depth)
		bits |= S(STATE_WAITING);
	/* A worker goes to sleep, or wakes, only for lack of work (its empty polls before are not observed). */
	if (moment == ASTRO_MOMENT_WORKER_SLEEP_END || moment == ASTRO_MOMENT_WORKER_SLEEP_BEGIN)
		bits |= S(STATE_SLEEPING);
	if (moment == ASTRO_MOMENT_WORKER_SCHED_END)
		bits |= S(STATE_SCHEDULING);
	r->sched_begin_ns = -1;
	/* Publish the epoch before reading the reset date; a reader resetting a stale
	 * record does the opposite, so one of the two always sees the other. */
	__atomic_store_n(&r->epoch, current_epoch, __ATOMIC_SEQ_CST);
	int64_t start = __atomic_load_n(&readers[workerid].reset_ns, __ATOMIC_SEQ_CST);
	for (unsigned s = 0; s < NSTATES; s++) {
		STORE(&r->acc.all[s], (int64_t)0);
		STORE(&r->acc.split[s], (int64_t)0);
	}
	store_double(&r->acc.flops, 0.0);
	store_double(&r->acc.energy, 0.0);
	STORE(&r->last_ns, start);
	STORE(&r->bits, bits);
	STORE(&r->exp_end_ns, (int64_t)-1);
}

/* One moment of workerid's life, on workerid's own thread. */
static void worker_moment(const struct astro_event *ev, int64_t now)
{
	int workerid = ev->workerid;
	struct worker_record *r = &records[workerid];
	record_begin(r);
	unsigned current_epoch = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
	if (r->epoch != current_epoch)
		record_adopt(r, workerid, current_epoch, ev->moment);
	record_advance(r, now);

	unsigned bits = r->bits;
	switch (ev->moment) {
	case ASTRO_MOMENT_WORKER_SCHED_BEGIN:
		bits = (bits & ~S(STATE_EXECUTING)) | S(STATE_SCHEDULING);
		r->fetching = false;
		r->sched_begin_ns = now;
		break;
	case ASTRO_MOMENT_WORKER_SCHED_END: {
		bits &= ~S(STATE_SCHEDULING);
		/* Without a task the worker lacks work until a pop succeeds: spinning and sleeping alike.
		 * With one, it fetches the task's data until the task starts. */
		struct starpu_profiling_task_info *info = ev->task ? task_info(ev->task) : NULL;
		r->fetching = ev->task != NULL;
		bits = ev->task ? bits & ~S(STATE_SLEEPING) : bits | S(STATE_SLEEPING);
		if (info) {
			info->pop_start_time = timespec_of(r->sched_begin_ns >= 0 ? r->sched_begin_ns : now);
			info->pop_end_time = info->acquire_data_start_time = timespec_of(now);
			info->workerid = workerid;
		}
		r->sched_begin_ns = -1;
		break;
	}
	case ASTRO_MOMENT_WORKER_SLEEP_BEGIN:
		bits |= S(STATE_SLEEPING);
		break;
	case ASTRO_MOMENT_WORKER_SLEEP_END:
		break; /* still without work until a pop succeeds */
	/* POPPED and DATA_FETCHED arrive only when another consumer (or the data statistics) asked
	 * for them: profiling alone does with SCHED_END and STARTED, two moments less per task. */
	case ASTRO_MOMENT_TASK_POPPED:
		bits &= ~(S(STATE_SLEEPING) | S(STATE_SCHEDULING));
		r->fetching = true;
		break;
	case ASTRO_MOMENT_TASK_DATA_FETCHED:
		r->fetching = false;
		break;
	case ASTRO_MOMENT_TASK_STARTED: {
		/* Also for a task popped from the worker's local queue, without a SCHED_END. */
		bits = (bits & ~(S(STATE_SLEEPING) | S(STATE_SCHEDULING))) | S(STATE_EXECUTING);
		r->fetching = false;
		double predicted = ev->task ? ev->task->predicted : NAN;
		STORE(&r->exp_end_ns, now + (isfinite(predicted) && predicted > 0 ? (int64_t)(predicted * 1e3) : 0));
		break;
	}
	case ASTRO_MOMENT_TASK_ENDED:
		bits &= ~S(STATE_EXECUTING);
		if (ev->task && ev->task->flops > 0)
			store_double(&r->acc.flops, r->acc.flops + ev->task->flops);
		STORE(&r->exp_end_ns, (int64_t)-1);
		break;
	case ASTRO_MOMENT_TASK_CALLBACK_BEGIN:
		r->callback_depth++;
		bits |= S(STATE_CALLBACK);
		break;
	case ASTRO_MOMENT_TASK_CALLBACK_END:
		if (r->callback_depth && !--r->callback_depth)
			bits &= ~S(STATE_CALLBACK);
		break;
	case ASTRO_MOMENT_TRANSFER_BEGIN:
		r->transfer_depth++;
		break;
	case ASTRO_MOMENT_TRANSFER_END:
		if (r->transfer_depth)
			r->transfer_depth--;
		break;
	default:
		break;
	}
	bits = r->fetching || r->transfer_depth ? bits | S(STATE_WAITING) : bits & ~S(STATE_WAITING);
	STORE(&r->bits, bits);
	record_end(r);
}

/* A consistent copy of workerid's cumulated times up to now (taken after the copy).
 * Returns false when the worker has not started the current epoch yet. */
static bool record_snapshot(int workerid, struct times *t, int64_t *now)
{
	struct worker_record *r = &records[workerid];
	unsigned seq, rec_epoch, bits;
	int64_t last;
	for (;;) {
		seq = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			astro_thread_yield();
			continue;
		}
		rec_epoch = __atomic_load_n(&r->epoch, __ATOMIC_SEQ_CST);
		bits = LOAD(&r->bits);
		last = LOAD(&r->last_ns);
		for (unsigned s = 0; s < NSTATES; s++) {
			t->all[s] = LOAD(&r->acc.all[s]);
			t->split[s] = LOAD(&r->acc.split[s]);
		}
		t->flops = load_double(&r->acc.flops);
		t->energy = load_double(&r->acc.energy);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LOAD(&r->seq) == seq)
			break;
	}
	*now = now_ns();
	if (rec_epoch != __atomic_load_n(&epoch, __ATOMIC_RELAXED)) {
		memset(t, 0, sizeof(*t));
		return false;
	}
	times_add(t, bits, *now - last);
	return true;
}

/* What a worker that has not started the epoch did since `since`: sleeping, if it sleeps. */
static void stale_guess(int workerid, int64_t since, int64_t now, struct times *t)
{
	memset(t, 0, sizeof(*t));
	if (starpu_worker_is_sleeping(workerid))
		times_add(t, S(STATE_SLEEPING), now - since);
}

/* Cumulated times of workerid now, and its new baseline (under reader_lock). */
static void worker_measure(int workerid, struct times *values, int64_t *now, struct times *new_base, bool *stale)
{
	struct worker_reader *rd = &readers[workerid];
	/* Announce the reset before looking at the epoch (see record_adopt). */
	int64_t reset = now_ns();
	__atomic_store_n(&rd->reset_ns, reset, __ATOMIC_SEQ_CST);
	if (record_snapshot(workerid, values, now)) {
		*new_base = *values;
		*stale = false;
		return;
	}
	/* The worker will account from `reset` on, starting from zero. */
	*now = reset;
	stale_guess(workerid, rd->start_ns, reset, values);
	memset(new_base, 0, sizeof(*new_base));
	*stale = true;
}

static void fill_worker_info(struct starpu_profiling_worker_info *info, const struct times *values,
			     const struct times *base, int64_t start, int64_t end, bool stale_interval)
{
	memset(info, 0, sizeof(*info));
	info->start_time = timespec_of(start);
	info->total_time = timespec_of(end - start);
	struct timespec *all[NSTATES] = { &info->all_executing_time, &info->all_callback_time, &info->all_waiting_time,
					  &info->all_sleeping_time, &info->all_scheduling_time };
	struct timespec *split[NSTATES] = { &info->executing_time, &info->callback_time, &info->waiting_time,
					    &info->sleeping_time, &info->scheduling_time };
	for (unsigned s = 0; s < NSTATES; s++) {
		/* Racing the worker by a few ns may make a difference slightly negative: never report that. */
		*all[s] = timespec_of(values->all[s] - (stale_interval ? 0 : base->all[s]));
		*split[s] = timespec_of(values->split[s] - (stale_interval ? 0 : base->split[s]));
	}
	double flops = values->flops - (stale_interval ? 0.0 : base->flops);
	info->flops = flops > 0 ? flops : 0.0;
	double energy = values->energy - (stale_interval ? 0.0 : base->energy);
	info->energy_consumed = energy > 0 ? energy : 0.0;
}

void astro_energy_worker_add(int workerid, double joules)
{
	if (workerid < 0 || workerid >= STARPU_NMAXWORKERS || !(joules > 0))
		return;
	struct worker_record *r = &records[workerid];
	/* Before its first moment of this epoch the worker has nothing to add to:
	 * it starts from zero when it adopts the epoch. */
	if (r->epoch != __atomic_load_n(&epoch, __ATOMIC_ACQUIRE))
		return;
	record_begin(r);
	store_double(&r->acc.energy, r->acc.energy + joules);
	record_end(r);
}

int starpu_profiling_worker_get_info(int workerid, struct starpu_profiling_worker_info *info)
{
	if (workerid < 0 || (unsigned)workerid >= starpu_worker_get_count()) {
		_astro_error("starpu_profiling_worker_get_info: unknown worker %d (%u workers): use an id below starpu_worker_get_count()",
			     workerid, starpu_worker_get_count());
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&_astro_prof_reader_lock);
	struct worker_reader *rd = &readers[workerid];
	struct times values, new_base;
	int64_t end;
	bool stale = false;
	if (profiling_on()) {
		worker_measure(workerid, &values, &end, &new_base, &stale);
	} else if (rd->frozen) {
		values = rd->frozen_times;
		new_base = values;
		end = rd->frozen_ns;
	} else {
		/* Never enabled: nothing was measured. */
		memset(&values, 0, sizeof(values));
		new_base = values;
		end = rd->start_ns;
	}
	/* Only the tasks run while profiling was on count, as in StarPU: none
	 * after a disable, none before the first enable. */
	unsigned long executed = rd->base_executed;
	if (profiling_on())
		executed = __atomic_load_n(&_astro_rt.workers[workerid]->executed, __ATOMIC_RELAXED);
	else if (rd->frozen)
		executed = rd->frozen_executed;
	if (info) {
		fill_worker_info(info, &values, &rd->base, rd->start_ns, end, stale);
		info->executed_tasks = (int)(executed - rd->base_executed);
	}
	rd->base = new_base;
	rd->base_executed = executed;
	rd->start_ns = end;
	starpu_pthread_mutex_unlock(&_astro_prof_reader_lock);
	return 0;
}

void starpu_worker_get_current_task_exp_end(unsigned workerid, struct timespec *date)
{
	if (!date) {
		_astro_error("starpu_worker_get_current_task_exp_end: NULL date");
		return;
	}
	if (workerid >= starpu_worker_get_count()) {
		_astro_error("starpu_worker_get_current_task_exp_end: unknown worker %u (%u workers)", workerid, starpu_worker_get_count());
		*date = timespec_of(0);
		return;
	}
	int64_t now = now_ns();
	int64_t exp_end = -1;
	if (profiling_on() && __atomic_load_n(&records[workerid].epoch, __ATOMIC_ACQUIRE) == __atomic_load_n(&epoch, __ATOMIC_RELAXED))
		exp_end = __atomic_load_n(&records[workerid].exp_end_ns, __ATOMIC_RELAXED);
	/* No running task known (or profiling off): nothing is expected to keep it busy beyond now. */
	*date = timespec_of(exp_end > now ? exp_end : now);
}

/* --------------------------------------------------------------- summaries */

/* The stream STARPU_*_STATS_FILE names, or stderr. */
FILE *_astro_prof_summary_open(const char *file_env)
{
	const char *path = astro_env_string(file_env, ASTRO_ENV_PATH_MAX, NULL);
	if (!path || !*path)
		return stderr;
	FILE *f = fopen(path, "w");
	if (!f) {
		_astro_error("cannot open %s='%s' (%s): printing to stderr instead; set %s to a writable file",
			     file_env, path, strerror(errno), file_env);
		return stderr;
	}
	return f;
}

/* Flushes and closes what _astro_prof_summary_open() gave; a failed write (a full disk,
 * /dev/full) is said once, naming the file and the reason. */
void _astro_prof_summary_close(FILE *f, const char *file_env)
{
	if (f == stderr) {
		fflush(f);
		return;
	}
	int err = 0;
	if (fflush(f) != 0)
		err = errno;
	else if (ferror(f))
		err = EIO; /* an earlier write failed, and its errno is gone */
	if (fclose(f) != 0 && !err)
		err = errno;
	if (err)
		_astro_error("cannot write the statistics to %s='%s' (%s): they are lost; give a file on a disk with room",
			     file_env, starpu_getenv(file_env), strerror(err));
}

bool _astro_prof_env_positive(const char *name)
{
	return astro_env_int(name, 0, 1, 0, NULL) > 0;
}

/* Bytes in the largest unit that keeps the value above 1 (as StarPU prints them). */
static double ms_of(struct timespec *ts)
{
	return starpu_timing_timespec_to_us(ts) * 1e-3;
}

static void display_worker_summary(FILE *out)
{
	bool profiling = profiling_on() || readers[0].frozen;
	double total_sum = 0, split_sum[NSTATES] = { 0 }, overall_ms = 0, energy_sum = 0;
	fprintf(out, "Worker stats:\n");
	for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
		struct starpu_profiling_worker_info info;
		/* Never profiled: the summary still says how many tasks each worker ran, as StarPU's does. */
		unsigned long ran = 0;
		if (!profiling) {
			starpu_pthread_mutex_lock(&_astro_prof_reader_lock);
			ran = __atomic_load_n(&_astro_rt.workers[w]->executed, __ATOMIC_RELAXED) - readers[w].base_executed;
			starpu_pthread_mutex_unlock(&_astro_prof_reader_lock);
		}
		starpu_profiling_worker_get_info((int)w, &info);
		if (!profiling)
			info.executed_tasks = (int)ran;
		char name[64];
		starpu_worker_get_name((int)w, name, sizeof(name));
		fprintf(out, "%s\n", name);
		fprintf(out, "\t%d task(s)\n", info.executed_tasks);
		energy_sum += info.energy_consumed;
		if (!profiling)
			continue;
		double total = ms_of(&info.total_time);
		double split[NSTATES] = { ms_of(&info.executing_time), ms_of(&info.callback_time), ms_of(&info.waiting_time),
					  ms_of(&info.sleeping_time), ms_of(&info.scheduling_time) };
		double overhead = total;
		for (unsigned s = 0; s < NSTATES; s++) {
			overhead -= split[s];
			split_sum[s] += split[s];
		}
		total_sum += total;
		if (total > overall_ms)
			overall_ms = total;
		fprintf(out, "\ttime split: total %.2f ms = executing: %.2f ms + callback: %.2f ms + waiting: %.2f ms + "
			"sleeping: %.2f ms + scheduling: %.2f ms + overhead %.2f ms\n",
			total, split[STATE_EXECUTING], split[STATE_CALLBACK], split[STATE_WAITING], split[STATE_SLEEPING],
			split[STATE_SCHEDULING], overhead);
		fprintf(out, "\tall time: executing: %.2f ms callback: %.2f ms waiting: %.2f ms sleeping: %.2f ms scheduling: %.2f ms\n",
			ms_of(&info.all_executing_time), ms_of(&info.all_callback_time), ms_of(&info.all_waiting_time),
			ms_of(&info.all_sleeping_time), ms_of(&info.all_scheduling_time));
		if (info.used_cycles || info.stall_cycles)
			fprintf(out, "\t%llu Mcy %llu Mcy stall\n", (unsigned long long)info.used_cycles / 1000000,
				(unsigned long long)info.stall_cycles / 1000000);
		if (info.energy_consumed)
			fprintf(out, "\t%f J consumed\n", info.energy_consumed);
		if (info.flops)
			fprintf(out, "\t%f GFlop/s\n", total > 0 ? info.flops / total / 1e6 : 0.0);
	}
	if (!profiling)
		return;
	double overhead = total_sum;
	for (unsigned s = 0; s < NSTATES; s++)
		overhead -= split_sum[s];
#define PCT(x) (total_sum > 0 ? 100.0 * (x) / total_sum : 0.0)
	fprintf(out, "Global time split: total %.2f ms = executing: %.2f ms (%.2f%%) + callback: %.2f ms (%.2f%%) + "
		"waiting: %.2f ms (%.2f%%) + sleeping: %.2f ms (%.2f%%) + scheduling: %.2f ms (%.2f%%) + overhead %.2f ms (%.2f%%)\n",
		total_sum, split_sum[STATE_EXECUTING], PCT(split_sum[STATE_EXECUTING]), split_sum[STATE_CALLBACK],
		PCT(split_sum[STATE_CALLBACK]), split_sum[STATE_WAITING], PCT(split_sum[STATE_WAITING]),
		split_sum[STATE_SLEEPING], PCT(split_sum[STATE_SLEEPING]), split_sum[STATE_SCHEDULING],
		PCT(split_sum[STATE_SCHEDULING]), overhead, PCT(overhead));
#undef PCT
	float idle_power = astro_env_float("STARPU_IDLE_POWER", 0.0f, ASTRO_ENV_POWER_MAX, NAN, "W");
	if (!isnan(idle_power)) {
		double idle_energy = idle_power * overall_ms / 1000.0;
		fprintf(out, "Idle energy: %.2f J\n", idle_energy);
		fprintf(out, "Total energy: %.2f J\n", energy_sum + idle_energy);
	}
}

void starpu_profiling_worker_helper_display_summary(void)
{
	if (!_astro_prof_env_positive("STARPU_WORKER_STATS"))
		return;
	FILE *out = _astro_prof_summary_open("STARPU_WORKER_STATS_FILE");
	display_worker_summary(out);
	_astro_prof_summary_close(out, "STARPU_WORKER_STATS_FILE");
}

void starpu_display_stats(void)
{
	starpu_profiling_bus_helper_display_summary();
	starpu_profiling_worker_helper_display_summary();
}

/* STARPU_ENABLE_STATS' execution block: how many tasks each worker ran since starpu_init(),
 * whether profiling was on or not (the runtime counts them all). */
static void display_execution_stats(FILE *out)
{
	unsigned nworkers = starpu_worker_get_count();
	unsigned long total = 0;
	for (unsigned w = 0; w < nworkers; w++)
		total += __atomic_load_n(&_astro_rt.workers[w]->executed, __ATOMIC_RELAXED);
	fprintf(out, "#-----\n");
	fprintf(out, "Execution stats :\n");
	fprintf(out, "TOTAL executed tasks %lu\n", total);
	for (unsigned w = 0; w < nworkers; w++) {
		unsigned long ran = __atomic_load_n(&_astro_rt.workers[w]->executed, __ATOMIC_RELAXED);
		char name[64];
		starpu_worker_get_name((int)w, name, sizeof(name));
		fprintf(out, "worker %s\t%lu task(s) (%2.2f %%)\n", name, ran, total ? 100.0 * ran / total : 0.0);
	}
	fprintf(out, "#-----\n");
}

/* starpu_shutdown(): every task completed, the workers still exist. */
static void runtime_terminate(void)
{
	if (stats_enabled) {
		display_execution_stats(stderr);
		_astro_prof_msi_display(stderr);
		_astro_prof_alloc_display(stderr);
		/* The transfer statistics, unless STARPU_BUS_STATS prints them below. */
		if (!_astro_prof_env_positive("STARPU_BUS_STATS"))
			_astro_prof_bus_summary(stderr);
		fflush(stderr);
	}
	starpu_profiling_bus_helper_display_summary();
	starpu_profiling_worker_helper_display_summary();
	if (_astro_memory_stats_enabled) {
		_astro_prof_memory_stats_display(stderr);
		fflush(stderr);
	}
	/* The kernel drops every subscription after this moment. */
	subscription = -1;
}

/* -------------------------------------------------------------- observing */

#define BIT ASTRO_MOMENT_BIT
/* The moments that move a worker's state; POPPED and DATA_FETCHED refine it when observed anyway. */
static const uint64_t worker_moments =
	BIT(ASTRO_MOMENT_WORKER_SCHED_BEGIN) | BIT(ASTRO_MOMENT_WORKER_SCHED_END) |
	BIT(ASTRO_MOMENT_WORKER_SLEEP_BEGIN) | BIT(ASTRO_MOMENT_WORKER_SLEEP_END) |
	BIT(ASTRO_MOMENT_TASK_POPPED) | BIT(ASTRO_MOMENT_TASK_DATA_FETCHED) |
	BIT(ASTRO_MOMENT_TASK_STARTED) | BIT(ASTRO_MOMENT_TASK_ENDED) |
	BIT(ASTRO_MOMENT_TASK_CALLBACK_BEGIN) | BIT(ASTRO_MOMENT_TASK_CALLBACK_END) |
	BIT(ASTRO_MOMENT_TRANSFER_BEGIN) | BIT(ASTRO_MOMENT_TRANSFER_END);

/* The moments the statistics (and the summaries at the end) follow, whether profiling is on or not. */
static const uint64_t statistics_moments =
	BIT(ASTRO_MOMENT_RUNTIME_TERMINATE) | BIT(ASTRO_MOMENT_DATA_ALLOCATED) |
	BIT(ASTRO_MOMENT_DATA_REGISTERED) | BIT(ASTRO_MOMENT_DATA_UNREGISTERED) |
	BIT(ASTRO_MOMENT_TASK_POPPED) | BIT(ASTRO_MOMENT_TASK_DATA_FETCHED) |
	BIT(ASTRO_MOMENT_TRANSFER_BEGIN) | BIT(ASTRO_MOMENT_TRANSFER_END);

static uint64_t wanted_moments(void)
{
	uint64_t mask = BIT(ASTRO_MOMENT_RUNTIME_TERMINATE);
	if (profiling_on())
		mask |= (worker_moments & ~(BIT(ASTRO_MOMENT_TASK_POPPED) | BIT(ASTRO_MOMENT_TASK_DATA_FETCHED))) |
			BIT(ASTRO_MOMENT_TASK_SUBMITTED) | BIT(ASTRO_MOMENT_TASK_PUSHED) | BIT(ASTRO_MOMENT_TASK_DATA_RELEASED);
	if (stats_enabled)
		mask |= BIT(ASTRO_MOMENT_TASK_POPPED) | BIT(ASTRO_MOMENT_TASK_DATA_FETCHED) | BIT(ASTRO_MOMENT_TRANSFER_BEGIN) |
			BIT(ASTRO_MOMENT_TRANSFER_END) | BIT(ASTRO_MOMENT_DATA_ALLOCATED);
	if (_astro_memory_stats_enabled)
		mask |= BIT(ASTRO_MOMENT_TASK_POPPED) | BIT(ASTRO_MOMENT_TASK_DATA_FETCHED) | BIT(ASTRO_MOMENT_TRANSFER_BEGIN) |
			BIT(ASTRO_MOMENT_DATA_REGISTERED) | BIT(ASTRO_MOMENT_DATA_UNREGISTERED);
	if (bus_stats_wanted)
		mask |= BIT(ASTRO_MOMENT_TRANSFER_END);
	return mask;
}
#undef BIT

/* Per-task timing (profiling on, the task has an info). */
static void task_moment(const struct astro_event *ev, int64_t now)
{
	struct starpu_task *task = ev->task;
	switch (ev->moment) {
	case ASTRO_MOMENT_TASK_SUBMITTED:
		task_submitted(task, now);
		return;
	case ASTRO_MOMENT_TASK_PUSHED: {
		/* Before any worker has it: into the job, unless it already has an info. */
		struct _astro_job *job = _astro_job_of(task);
		if (task->profiling_info)
			task->profiling_info->push_start_time = task->profiling_info->push_end_time = timespec_of(now);
		else if (job->profiling_pending)
			job->profiling_push_ns = now;
		return;
	}
	default:
		break;
	}
	struct starpu_profiling_task_info *info = task_info(task);
	if (!info)
		return;
	switch (ev->moment) {
	case ASTRO_MOMENT_TASK_POPPED:
		info->workerid = ev->workerid;
		if (!info->pop_end_time.tv_sec && !info->pop_end_time.tv_nsec)
			info->pop_start_time = info->pop_end_time = timespec_of(now); /* from the worker's local queue */
		info->acquire_data_start_time = timespec_of(now);
		break;
	case ASTRO_MOMENT_TASK_DATA_FETCHED:
		info->acquire_data_end_time = timespec_of(now);
		break;
	case ASTRO_MOMENT_TASK_STARTED: {
		struct timespec start = timespec_of(now);
		info->workerid = ev->workerid;
		/* Without POPPED (local queue) or DATA_FETCHED observed, those happened right before the start. */
		if (!info->pop_end_time.tv_sec && !info->pop_end_time.tv_nsec)
			info->pop_start_time = info->pop_end_time = info->acquire_data_start_time = start;
		if (!info->acquire_data_end_time.tv_sec && !info->acquire_data_end_time.tv_nsec)
			info->acquire_data_end_time = start;
		info->start_time = start;
		break;
	}
	case ASTRO_MOMENT_TASK_ENDED: {
		struct timespec end = timespec_of(now);
		info->end_time = info->release_data_start_time = end;
		/* A task without data has nothing to release (no DATA_RELEASED follows). */
		if (!_astro_job_of(task)->nbuffers)
			info->release_data_end_time = end;
		break;
	}
	case ASTRO_MOMENT_TASK_DATA_RELEASED:
		info->release_data_end_time = timespec_of(now);
		break;
	case ASTRO_MOMENT_TASK_CALLBACK_BEGIN:
		info->callback_start_time = timespec_of(now);
		break;
	case ASTRO_MOMENT_TASK_CALLBACK_END:
		info->callback_end_time = timespec_of(now);
		break;
	default:
		break; /* SCHED_END's dates are the worker's (worker_moment) */
	}
}

/* The statistics' moments (and the end of the run); true when the moment is not profiling's. */
static bool statistics_moment(const struct astro_event *ev, bool on)
{
	switch (ev->moment) {
	case ASTRO_MOMENT_RUNTIME_TERMINATE:
		runtime_terminate();
		return true;
	case ASTRO_MOMENT_DATA_ALLOCATED:
		_astro_prof_alloc_counted(ev->dst_node);
		return true;
	case ASTRO_MOMENT_DATA_REGISTERED:
		if (_astro_memory_stats_enabled)
			_astro_prof_memory_stats_register((starpu_data_handle_t)ev->object);
		return true;
	case ASTRO_MOMENT_DATA_UNREGISTERED:
		_astro_prof_memory_stats_unregister((starpu_data_handle_t)ev->object);
		return true;
	case ASTRO_MOMENT_TASK_POPPED:
		_astro_prof_fetch_transfers = 0;
		return false;
	case ASTRO_MOMENT_TASK_DATA_FETCHED:
		if (stats_enabled || _astro_memory_stats_enabled)
			_astro_prof_data_fetched(ev);
		return false;
	case ASTRO_MOMENT_TRANSFER_BEGIN:
		if (ev->workerid >= 0 && ev->dst_node == starpu_worker_get_memory_node((unsigned)ev->workerid))
			_astro_prof_fetch_transfers++;
		return false;
	case ASTRO_MOMENT_TRANSFER_END:
		if (on || stats_enabled || bus_stats_wanted)
			_astro_prof_bus_transfer(ev->src_node, ev->dst_node, ev->bytes);
		return false;
	default:
		return false;
	}
}

static void observe(const struct astro_event *ev, void *arg)
{
	(void)arg;
	bool on = profiling_on();
	if (STARPU_UNLIKELY(ASTRO_MOMENT_BIT(ev->moment) & statistics_moments) && statistics_moment(ev, on))
		return;
	if (!on)
		return;
	int64_t now = ns_since_init(ev->time_us);
	if (ev->task)
		task_moment(ev, now);
	/* Worker states come only from the worker's own thread: one writer per record. */
	if ((worker_moments & ASTRO_MOMENT_BIT(ev->moment)) && _astro_self && ev->workerid == _astro_self->id)
		worker_moment(ev, now);
}

/* -------------------------------------------------------- enable / disable */

/* Everything measured so far is forgotten; workers restart at their next moment (under reader_lock). */
static void feedback_reset(void)
{
	int64_t now = now_ns();
	for (unsigned w = 0; w < STARPU_NMAXWORKERS; w++) {
		struct worker_reader *rd = &readers[w];
		rd->start_ns = now;
		__atomic_store_n(&rd->reset_ns, now, __ATOMIC_SEQ_CST);
		memset(&rd->base, 0, sizeof(rd->base));
		rd->base_executed = w < _astro_rt.nworkers && _astro_rt.workers[w] ?
			__atomic_load_n(&_astro_rt.workers[w]->executed, __ATOMIC_RELAXED) : 0;
		rd->frozen = false;
	}
	_astro_prof_buses_rebase(now);
	__atomic_add_fetch(&epoch, 1, __ATOMIC_SEQ_CST);
}

/* Profiling stops: keep what was measured readable (under reader_lock). */
static void feedback_freeze(void)
{
	for (unsigned w = 0; w < _astro_rt.nworkers; w++) {
		struct worker_reader *rd = &readers[w];
		struct times values, new_base;
		int64_t end;
		bool stale;
		worker_measure((int)w, &values, &end, &new_base, &stale);
		if (stale) {
			/* Report the guess relative to a zero baseline. */
			memset(&rd->base, 0, sizeof(rd->base));
		}
		rd->frozen_times = values;
		rd->frozen_executed = _astro_rt.workers[w] ? __atomic_load_n(&_astro_rt.workers[w]->executed, __ATOMIC_RELAXED) : 0;
		rd->frozen_ns = end;
		rd->frozen = true;
	}
}

static void subscription_update(void)
{
	if (subscription >= 0)
		astro_observe_set_mask(subscription, wanted_moments());
}

int starpu_profiling_status_set(int status)
{
	if (status != STARPU_PROFILING_ENABLE && status != STARPU_PROFILING_DISABLE) {
		_astro_error("starpu_profiling_status_set: unknown status %d: use STARPU_PROFILING_ENABLE or STARPU_PROFILING_DISABLE", status);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&_astro_prof_reader_lock);
	int previous = __atomic_load_n(&profiling_status, __ATOMIC_RELAXED);
	if (status == STARPU_PROFILING_ENABLE) {
		feedback_reset();
		__atomic_store_n(&profiling_status, STARPU_PROFILING_ENABLE, __ATOMIC_SEQ_CST);
	} else if (previous == STARPU_PROFILING_ENABLE) {
		feedback_freeze();
		__atomic_store_n(&profiling_status, STARPU_PROFILING_DISABLE, __ATOMIC_SEQ_CST);
	}
	subscription_update();
	starpu_pthread_mutex_unlock(&_astro_prof_reader_lock);
	/* Observers that only matter with profiling on (counters_energy) follow it instead of watching every task. */
	if (previous != status)
		_ASTRO_OBSERVE(ASTRO_MOMENT_PROFILING_STATUS, .workerid = -1, .nimpl = (unsigned)status);
	return previous;
}

void starpu_profiling_init(void)
{
	starpu_pthread_mutex_lock(&_astro_prof_reader_lock);
	feedback_reset();
	starpu_pthread_mutex_unlock(&_astro_prof_reader_lock);
	if (_astro_prof_env_positive("STARPU_PROFILING"))
		starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
}

void _astro_profiling_init(void)
{
	init_us = _astro_rt.start_time;
	stats_enabled = starpu_getenv("STARPU_ENABLE_STATS") && astro_env_int("STARPU_STATS", 0, 1, 1, NULL) != 0;
	bus_stats_wanted = _astro_prof_env_positive("STARPU_BUS_STATS");
	_astro_memory_stats_enabled = _astro_prof_env_positive("STARPU_MEMORY_STATS");
	_astro_prof_data_reset();
	_astro_prof_buses_reset();
	starpu_pthread_mutex_lock(&_astro_prof_reader_lock);
	/* New workers: every record starts over (the status itself survives, as in StarPU). */
	memset(records, 0, sizeof(records));
	feedback_reset();
	starpu_pthread_mutex_unlock(&_astro_prof_reader_lock);
	/* A failed starpu_init() leaves our subscription in place: reuse it. */
	if (subscription >= 0)
		astro_observe_set_mask(subscription, wanted_moments());
	else
		subscription = astro_observe_subscribe(wanted_moments(), observe, NULL);
	if (_astro_prof_env_positive("STARPU_PROFILING"))
		starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
}
