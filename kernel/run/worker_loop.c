/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The worker loop: each worker's thread (or an application thread running a
 * worker, run/driver_api.c) pops a task, takes it, brings its data, runs
 * the driver's implementation and terminates it; an idle worker spins
 * briefly (bounded, backing off) and then sleeps (workers/worker.c). Also
 * the workers' start and stop, and pausing.
 */
#include "run/run.h"
#include <hwloc.h>
#include <unistd.h>
#include <limits.h>

/* An idle worker polls for SPIN_POLLS rounds before sleeping, backing off
 * with pause instructions; when threads outnumber cores (the workers' and the
 * application's), the polls after the first SPIN_YIELD_AFTER yield the core,
 * so that a spinning worker never keeps the submitting thread (or another
 * worker) from running. With a core for each thread, only one in
 * SPIN_YIELD_EVERY of them does: a yield at every poll flipped a worker that
 * keeps pace with the submitter into sleeping and being woken every few
 * tasks, four times slower (bench/README, steadiness), but none at all let a
 * worker that shares its core with a waiting thread anyway (another
 * program's load moved it there) spin some 200 µs before that thread ran:
 * synchronous round trips of 60 to 200 µs instead of about 10 on a loaded
 * machine. Tunable for experiments (ASTRO_SPIN_*). */
#define SPIN_YIELD_EVERY 4
static unsigned spin_polls = 64, spin_backoff_max = 64, spin_yield_after = 8, spin_yield_every = 1;

/* Only a worker's last look before it sleeps announces its hunger (astro_worker_last_look(),
 * plugin.h): while it spins it finds its work by looking, so the thread that queues a task does not
 * claim and wake it. A worker keeping pace with the submitting thread used to be hungry between
 * any two tasks, and each push took its hunger and set its wake-up lines, passing four cache lines
 * back and forth per task: sync with 2 workers took 1.40 us against 1.12 now, async with 2 workers
 * under eager or dmda 0.87x (bench/README.md). */
struct astro_worker_look astro_worker_looks[STARPU_NMAXWORKERS];

/* Says whether w's next look is its last before sleeping (always, when it never spins). */
static inline void say_last_look(struct _astro_worker *w, int last)
{
	__atomic_store_n(&astro_worker_looks[w->id].last, last, __ATOMIC_RELAXED);
}
/* ------------------------------------------------------------ running */

/* The function a worker of this kind runs for implementation nimpl (for observers). */
static void *impl_pointer(const struct _astro_worker *w, const struct starpu_codelet *cl, unsigned nimpl)
{
	switch (w->arch) {
	case STARPU_CPU_WORKER: return (void *)cl->cpu_funcs[nimpl];
	case STARPU_CUDA_WORKER: return (void *)cl->cuda_funcs[nimpl];
	case STARPU_OPENCL_WORKER: return (void *)cl->opencl_funcs[nimpl];
	case STARPU_HIP_WORKER: return (void *)cl->hip_funcs[nimpl];
	default: return NULL;
	}
}

/* The worker took task: the implementation it will run, -1 when it gave the task back. */
static inline __attribute__((always_inline)) int worker_take(struct _astro_worker *w, struct starpu_task *task)
{
	struct _astro_job *job = _astro_job_of(task);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_POPPED, .workerid = w->id, .task = task, .job_id = job->id);
	if (task->prologue_callback_pop_func) {
		/* As in StarPU, the task is the current one for its pop prologue (a parallel worker's create function reads it). */
		struct starpu_task *previous = _astro_current_task;
		_astro_current_task = task;
		task->prologue_callback_pop_func(task->prologue_callback_pop_arg);
		_astro_current_task = previous;
	}

	int nimpl = -1;
	if (STARPU_UNLIKELY(job->impl_chosen)) {
		/* The policy chose the implementation (dmda: the fastest on this worker); honoured when this worker has it. */
		job->impl_chosen = false;
		if (w->driver->has_impl(task->cl, job->nimpl) && _astro_task_where(task, w->driver)
		    && (!task->cl->can_execute || task->cl->can_execute((unsigned)w->id, task, job->nimpl)))
			nimpl = (int)job->nimpl;
	}
	/* Implementation 0 when the policy saw that w can run it (as _astro_worker_impl_for() would find, asked again). */
	if (nimpl < 0)
		nimpl = __atomic_load_n(&job->runnable_on, __ATOMIC_RELAXED) == w->id + 1 ? 0 : _astro_worker_impl_for(w->id, task);
	if (nimpl < 0) {
		/* A policy handed over a task this worker cannot run: give it back rather than run it wrong. */
		_astro_error("policy '%s' gave task '%s' to %s, which cannot run it: pushing it again",
			     _astro_ctxs[task->sched_ctx].policy->policy_name, starpu_task_get_name(task), w->name);
		_astro_sched_push(task);
		return -1;
	}
	return nimpl;
}

/* After task ran on w (or could not): the policy's post-execution hook, then the job's termination. */
static inline __attribute__((always_inline)) void worker_done(struct _astro_worker *w, struct starpu_task *task, struct _astro_job *job)
{
	if (STARPU_UNLIKELY(task->sched_ctx != 0))
		_astro_ctx_exec_hook(task, true);
	else if (_astro_ctxs[0].policy->post_exec_hook) {
		_astro_worker_site_enter(w, _ASTRO_HOOK_SITE(&_astro_ctxs[0], POST_EXEC));
		_astro_ctxs[0].policy->post_exec_hook(task, 0);
		_astro_worker_site_leave(w);
	}
	__atomic_store_n(&w->current_task, NULL, __ATOMIC_RELAXED);
	_astro_current_task = NULL;
	_astro_job_terminate(job, w->id);
}

/* The data of task, which w took, could not be brought to its memory node (told, nothing left pinned):
 * the task does not run; it fails (STARPU_TASK_STOPPED, which its callback sees) and terminates, its
 * successors run, the program goes on. buffers: an array to free, or NULL. */
static __attribute__((noinline, cold)) void worker_skip(struct _astro_worker *w, struct starpu_task *task, void **buffers)
{
	struct _astro_job *job = _astro_job_of(task);
	free(buffers);
	task->status = STARPU_TASK_STOPPED;
	worker_done(w, task, job);
}

static void worker_wait_unpaused(void)
{
	starpu_pthread_mutex_lock(&_astro_rt.pause_lock);
	while (_astro_rt.paused && __atomic_load_n(&_astro_rt.running, __ATOMIC_SEQ_CST))
		starpu_pthread_cond_wait(&_astro_rt.pause_cond, &_astro_rt.pause_lock);
	starpu_pthread_mutex_unlock(&_astro_rt.pause_lock);
}

/* A task popped just as starpu_pause() began (the worker had looked at the flag before it was set, the task
 * was pushed after) runs only after starpu_resume(): the queue's lock orders the flag before the pop. */
static inline __attribute__((always_inline)) void worker_hold_if_paused(void)
{
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_rt.paused, __ATOMIC_RELAXED)))
		worker_wait_unpaused();
}

/* Starts implementation nimpl of task; fetch_started: its data was asked for ahead (the pipeline).
 * With request (a pipelined worker whose driver has execute_async), the driver may leave the
 * task's work under way: *request then holds what worker_finish waits for. Returns the task's
 * number of buffers, for worker_finish, or -1 when it could not run (its data could not be
 * brought: it is done, failed). */
static inline __attribute__((always_inline)) int worker_launch(struct _astro_worker *w, struct starpu_task *task, int nimpl,
							       bool fetch_started, void **request, bool *parallel_run)
{
	struct _astro_job *job = _astro_job_of(task);
	void *buffers_inline[STARPU_NMAXBUFS];
	void **buffers = buffers_inline;
	unsigned nbuffers = _astro_task_nbuffers(task);

	job->nimpl = (unsigned)nimpl;
	job->workerid = w->id;
	task->status = STARPU_TASK_RUNNING;
	__atomic_store_n(&w->current_task, task, __ATOMIC_RELAXED); /* the watchdog reads it */
	_astro_current_task = task;
	if (STARPU_UNLIKELY(task->sched_ctx != 0))
		_astro_ctx_exec_hook(task, false);
	else if (_astro_ctxs[0].policy->pre_exec_hook) {
		_astro_worker_site_enter(w, _ASTRO_HOOK_SITE(&_astro_ctxs[0], PRE_EXEC));
		_astro_ctxs[0].policy->pre_exec_hook(task, 0);
		_astro_worker_site_leave(w);
	}

	if (nbuffers > STARPU_NMAXBUFS)
		buffers = malloc(nbuffers * sizeof(void *));
	/* A task without data has nothing to fetch: no call. */
	int fetched = nbuffers == 0 ? 0
		      : fetch_started ? _astro_data_fetch_arrived(job, task, w->memory_node, buffers)
				      : _astro_data_fetch(job, task, w->memory_node, buffers);
	if (STARPU_UNLIKELY(fetched != 0)) {
		worker_skip(w, task, buffers != buffers_inline ? buffers : NULL);
		return -1;
	}
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_DATA_FETCHED, .workerid = w->id, .task = task, .job_id = job->id);

	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_STARTED, .workerid = w->id, .task = task, .job_id = job->id,
		       .fun_ptr = impl_pointer(w, task->cl, (unsigned)nimpl), .nimpl = (unsigned)nimpl);
	_ASTRO_INSTR_TASK_ENTER(job); /* what it left open at its last run */
	bool parallel = *parallel_run = STARPU_UNLIKELY(w->parallel != NULL);
	_astro_worker_site_enter(w, &w->codelet_site);
	if (STARPU_UNLIKELY(task->transaction != NULL) && _astro_transaction_cancelled(task))
		; /* its transaction epoch was cancelled: it ends without running */
	else if (parallel)
		_astro_parallel_execute(w, task, buffers, (unsigned)nimpl);
	else if (request)
		*request = w->driver->execute_async(w->id, task, buffers, (unsigned)nimpl);
	else
		w->driver->execute(w->id, task, buffers, (unsigned)nimpl);
	_astro_worker_site_leave(w);
	_ASTRO_INSTR_TASK_LEAVE(job); /* its states and bursts still open end before it, kept for its callback or next run */
	if (buffers != buffers_inline)
		free(buffers);
	return (int)nbuffers;
}

/* Ends task, whose work is done: observed, its data released, then terminated. */
static inline __attribute__((always_inline)) void worker_finish(struct _astro_worker *w, struct starpu_task *task, int nimpl,
								 unsigned nbuffers, bool parallel)
{
	struct _astro_job *job = _astro_job_of(task);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_ENDED, .workerid = w->id, .task = task, .job_id = job->id,
		       .fun_ptr = impl_pointer(w, task->cl, (unsigned)nimpl), .nimpl = (unsigned)nimpl);
	/* Its observers saw the combined worker it ran as (the models calibrate that architecture). */
	if (STARPU_UNLIKELY(parallel))
		_astro_parallel_ended();

	if (nbuffers) /* a task without data has nothing to unpin: no call */
		_astro_data_executed(job, task, w->memory_node);
	if (_astro_rt.codelet_profiling)
		_astro_codelet_count(w, task->cl);
	/* Its only writer: no locked instruction. */
	__atomic_store_n(&w->executed, w->executed + 1, __ATOMIC_RELAXED);
	worker_done(w, task, job);
}

/* Inlined into each copy of the loop (worker_round), as when the loop was its only caller. */
static inline __attribute__((always_inline)) void worker_execute(struct _astro_worker *w, struct starpu_task *task)
{
	int nimpl = worker_take(w, task), nbuffers;
	bool parallel;
	if (nimpl >= 0 && (nbuffers = worker_launch(w, task, nimpl, false, NULL, &parallel)) >= 0)
		worker_finish(w, task, nimpl, (unsigned)nbuffers, parallel);
}

/* A device worker's pipeline (the driver's pipeline variable, STARPU_CUDA_PIPELINE
 * or STARPU_OPENCL_PIPELINE): it takes up to w->pipeline tasks and asks for
 * their data as soon as it takes them, so that the transfers of the next
 * ones run while the one before them executes; with a driver's execute_async,
 * an asynchronous codelet's work runs on while the worker starts the next
 * task, and the tasks end in the order they started, each when its work is
 * done. Returns when it has ended all it took and finds no more. */
static void worker_execute_pipelined(struct _astro_worker *w, struct starpu_task *task)
{
	struct
	{
		struct starpu_task *task;
		int nimpl;
		int nbuffers;  /* once started; -1: it could not run, already ended */
		bool started;  /* its data asked for ahead */
		bool parallel; /* run as a combined worker */
		void *request; /* its work under way */
	} ring[_ASTRO_PIPELINE_MAX];
	unsigned head = 0, count = 0, launched = 0;
	bool async = w->driver->execute_async && w->driver->execute_done;
	for (;;) {
		if (task) {
			int nimpl = worker_take(w, task);
			if (nimpl >= 0) {
				/* Behind a task that fetches when it runs, none asks ahead: what it pinned
				 * could leave that task no room on the device. */
				bool ahead = count == 0 || ring[(head + count - 1) % _ASTRO_PIPELINE_MAX].started;
				unsigned slot = (head + count++) % _ASTRO_PIPELINE_MAX;
				ring[slot].task = task;
				ring[slot].nimpl = nimpl;
				ring[slot].request = NULL;
				ring[slot].started = ahead && _astro_data_fetch_start(_astro_job_of(task), task, w->memory_node);
			}
			task = NULL;
		}
		/* End, in order, the started tasks whose work is done. */
		while (launched && (!ring[head].request || w->driver->execute_done(w->id, ring[head].task, ring[head].request, 0))) {
			if (ring[head].nbuffers >= 0)
				worker_finish(w, ring[head].task, ring[head].nimpl, (unsigned)ring[head].nbuffers, ring[head].parallel);
			head = (head + 1) % _ASTRO_PIPELINE_MAX;
			count--;
			if (--launched) /* the oldest still under way is the one the watchdog names */
				__atomic_store_n(&w->current_task, ring[head].task, __ATOMIC_RELAXED);
		}
		if (count < w->pipeline && __atomic_load_n(&_astro_rt.running, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&_astro_rt.paused, __ATOMIC_RELAXED) && (task = _astro_sched_pop(w, false)) != NULL) {
			worker_hold_if_paused();
			continue;
		}
		if (count == 0)
			return;
		if (launched < count) {
			unsigned slot = (head + launched++) % _ASTRO_PIPELINE_MAX;
			ring[slot].nbuffers = worker_launch(w, ring[slot].task, ring[slot].nimpl, ring[slot].started,
							    async ? &ring[slot].request : NULL, &ring[slot].parallel);
		} else if (w->driver->execute_done(w->id, ring[head].task, ring[head].request, 1)) {
			/* Every task taken is under way: the oldest is waited for. */
			ring[head].request = NULL;
		}
	}
}

/* How many tasks a worker of driver d holds (1: one at a time, fetched when it runs). */
static unsigned pipeline_depth(const struct astro_driver *d)
{
	const struct astro_node_ops *ops = d->node_ops;
	if (!ops || !ops->copy_wait || !d->pipeline_env)
		return 1;
	int depth = _astro_env_int_in(d->pipeline_env, 0, _ASTRO_PIPELINE_MAX, 2);
	return depth > 1 ? (unsigned)depth : 1;
}

static void bind_worker(struct _astro_worker *w)
{
	if (w->bindid < 0)
		return;
	hwloc_topology_t topo = _astro_rt.topology;
	hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)w->bindid);
	if (!pu || hwloc_set_cpubind(topo, pu->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
		_astro_warn("%s could not be bound to processing unit %d: it runs unbound (set STARPU_WORKERS_NOBIND=1 to silence this)",
			    w->name, w->bindid);
		w->bindid = -1;
	}
}

/* The workers' start: each waits at the gate until every thread was created (the barrier then counts the
 * threads made, fewer when one could not be), then at the barrier for the others. */
static starpu_pthread_barrier_t start_barrier;
static starpu_pthread_mutex_t start_gate_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_cond_t start_gate_cond = STARPU_PTHREAD_COND_INITIALIZER;
static bool start_gate_open;

/* One round of the scheduling loop: runs what it pops, or takes one idle
 * step (a pause, a yield, or a sleep until woken). idle: the rounds found
 * idle in a row and the current pause length, kept between rounds. */
static inline __attribute__((always_inline)) void worker_round(struct _astro_worker *w, bool pipelined, unsigned idle[2])
{
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_rt.paused, __ATOMIC_RELAXED))) {
		worker_wait_unpaused();
		return;
	}
	/* The program's progression hooks (progress_hooks.c): none, one branch. */
	unsigned may_block = 1;
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_progression_nhooks, __ATOMIC_RELAXED)))
		may_block = _astro_progression_hooks_run();
	/* The wake-ups received so far are answered by the look below. Cleared only when set: a
	 * waker writes these lines, and a worker kept busy by the same thread would otherwise take
	 * them back at every round. No wake-up is lost: a task the look misses was queued before
	 * its waker set wake_pending, which _astro_worker_sleep() reads after saying it sleeps. */
	if (__atomic_load_n(&w->wake_pending, __ATOMIC_RELAXED))
		__atomic_exchange_n(&w->wake_pending, 0, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&w->work_queued, __ATOMIC_RELAXED))
		__atomic_store_n(&w->work_queued, 0, __ATOMIC_RELAXED);
	struct starpu_task *task = _astro_sched_pop(w, idle[0] > 0);
	if (task) {
		worker_hold_if_paused();
		if (STARPU_UNLIKELY(idle[0] != 0)) {
			_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_IDLE_END, .workerid = w->id, .task = task);
			if (idle[0] >= spin_polls && spin_polls) /* found at its last look */
				say_last_look(w, 0);
		}
		idle[0] = 0;
		idle[1] = 1;
		if (pipelined)
			worker_execute_pipelined(w, task);
		else
			worker_execute(w, task);
		return;
	}
	/* The program's idle hooks: none, one branch. */
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_idle_nhooks, __ATOMIC_RELAXED)) && !_astro_idle_hooks_run())
		may_block = 0;
	if (idle[0]++ < spin_polls) {
		if (idle[0] == 1)
			_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_IDLE_BEGIN, .workerid = w->id);
		if (idle[0] == spin_polls)
			say_last_look(w, 1);
		if (idle[0] > spin_yield_after && (idle[0] - spin_yield_after) % spin_yield_every == 0) {
			astro_thread_yield();
			return;
		}
		/* A task queued for this worker alone (astro_worker_wake_for_queued) ends the pause;
		 * a wake-up that only offers work others may take too does not, so the worker that
		 * queued it keeps its chance to take it first. */
		for (unsigned i = 0; i < idle[1] && !__atomic_load_n(&w->work_queued, __ATOMIC_RELAXED); i++)
			astro_cpu_relax();
		if (idle[1] < spin_backoff_max)
			idle[1] *= 2;
		return;
	}
	if (STARPU_UNLIKELY(!may_block)) {
		/* A hook asked the workers to keep polling: no sleep, but the core is not held either. */
		astro_thread_yield();
		return;
	}
	if (spin_polls)
		_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_IDLE_END, .workerid = w->id);
	_astro_worker_sleep(w);
	idle[0] = 0;
	idle[1] = 1;
	if (spin_polls)
		say_last_look(w, 0);
}

/* The scheduling loop, one copy per kind of worker (pipelined: a device worker's, see worker_execute_pipelined). */
static inline __attribute__((always_inline)) void worker_loop(struct _astro_worker *w, bool pipelined)
{
	unsigned idle[2] = { 0, 1 };
	while (__atomic_load_n(&_astro_rt.running, __ATOMIC_RELAXED))
		worker_round(w, pipelined, idle);
	if (idle[0])	/* stopped while polling for work */
		_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_IDLE_END, .workerid = w->id);
}

void _astro_worker_round(struct _astro_worker *w, unsigned idle[2])
{
	if (w->pipeline > 1)
		worker_round(w, true, idle);
	else
		worker_round(w, false, idle);
}

void _astro_worker_thread_begin(struct _astro_worker *w)
{
	_astro_self = w;
	w->tid = (pid_t)astro_thread_tid();
	_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_INIT_BEGIN, .workerid = w->id);
	bind_worker(w);
	if (w->driver->worker_init && w->driver->worker_init(w->id, w->devid) != 0)
		_astro_error("%s: driver %s failed to initialise the worker", w->name, w->driver->name);
	_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_INIT_END, .workerid = w->id);
}

void _astro_worker_thread_end(struct _astro_worker *w)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_DEINIT_BEGIN, .workerid = w->id);
	if (w->driver->worker_deinit)
		w->driver->worker_deinit(w->id, w->devid);
	_ASTRO_OBSERVE(ASTRO_MOMENT_WORKER_DEINIT_END, .workerid = w->id);
	_astro_self = NULL;
}

static void *worker_main(void *arg)
{
	struct _astro_worker *w = arg;
	/* Named as the worker ("CPU 0"), as StarPU's threads are: top, perf and gdb show it (16 bytes at most). */
	char thread_name[16];
	size_t length = strnlen(w->name, sizeof(thread_name) - 1);
	memcpy(thread_name, w->name, length);
	thread_name[length] = '\0';
	astro_thread_set_name(thread_name);
	_astro_worker_thread_begin(w);
	starpu_pthread_mutex_lock(&start_gate_lock);
	while (!start_gate_open)
		starpu_pthread_cond_wait(&start_gate_cond, &start_gate_lock);
	starpu_pthread_mutex_unlock(&start_gate_lock);
	starpu_pthread_barrier_wait(&start_barrier);

	if (w->pipeline > 1)
		worker_loop(w, true);
	else
		worker_loop(w, false);

	_astro_worker_thread_end(w);
	return NULL;
}
/* ----------------------------------------------------------- start/stop */

/* Is text unset, or a count _astro_conf_int_in() takes as it is? */
static bool plain_count(const char *text)
{
	if (!text)
		return true;
	while (*text == ' ')
		text++;
	return *text && text[strspn(text, "0123456789")] == '\0';
}

/* STARPU_MAIN_THREAD_CPUID or _COREID set; STARPU_MAIN_THREAD_BIND=1 (the application thread, below). */
static bool main_named, main_bind;

/* The cores the default placement gives the workers, in order (read_cores(), below); nwork of them
 * take CPU workers by default, the others are reserved. */
static unsigned *place_core, nplace, nwork;

/* Workers of the devices' drivers this starpu_init() starts: each drives its
 * device from a core of its own, which the CPU workers leave it by default (as StarPU). */
static unsigned device_workers;

/* The count of workers a driver starts when none is given: a CPU worker on each core the default
 * placement may use (the process's binding, less the reserved cores and one per device worker);
 * a device driver's own count. */
static int default_count(const struct astro_driver *d)
{
	int n = d->default_count();
#ifndef STARPU_SIMGRID
	if (d->archtype == STARPU_CPU_WORKER && nplace)
		n = MIN(n, nwork > device_workers ? (int)(nwork - device_workers) : 0);
#endif
	return n;
}

static int driver_worker_count(const struct astro_driver *d)
{
	int conf_value = -1;
	if (d->conf_count_offset)
		memcpy(&conf_value, (const char *)&_astro_rt.conf + d->conf_count_offset, sizeof(int));
	int n = conf_value;
	if (d->count_env) {
		/* A bad count is said, naming the default used instead: only then is it computed here. */
		int fallback = conf_value;
		if (fallback < 0 && (!plain_count(starpu_getenv(d->count_env)) ||
				     (d->count_env_alias && !plain_count(starpu_getenv(d->count_env_alias)))))
			fallback = default_count(d);
		n = _astro_conf_int_in(d->count_env, d->count_env_alias, conf_value, 0, INT_MAX, fallback);
	}
	/* Probing devices costs (an OpenCL platform starts its threads, may install
	 * signal handlers): only when no count is given, or to check a non-zero one. */
	if (n < 0) {
		n = default_count(d);
		/* STARPU_MAIN_THREAD_BIND reserves a core for the application thread, as StarPU. */
		if (main_bind && d->archtype == STARPU_CPU_WORKER && n > 1)
			n--;
	}
	int max = d->max_count && n > 0 ? d->max_count() : n;
	if (n > max) {
		_astro_warn("%s asks for %d %s workers but only %d can run here: starting %d",
			    d->count_env ? d->count_env : "the configuration", n, d->name, max, max);
		n = max;
	}
	return n;
}

/* ------------------------------------------------------- explicit binding */

/* Processing unit of a core: its first one (hwloc logical indexes). */
static int core_first_pu(unsigned core)
{
	hwloc_obj_t obj = hwloc_get_obj_by_type(_astro_rt.topology, HWLOC_OBJ_CORE, core % _astro_rt.ncores);
	hwloc_obj_t pu = obj ? hwloc_get_obj_inside_cpuset_by_type(_astro_rt.topology, obj->cpuset, HWLOC_OBJ_PU, 0) : NULL;
	return pu ? (int)pu->logical_index : (int)(core % _astro_rt.npus);
}

/* ------------------------------------------------- the application thread */

/* The thread that calls starpu_init(): the unit it is on (hwloc logical index,
 * -1: unknown) and its core. STARPU_MAIN_THREAD_CPUID or STARPU_MAIN_THREAD_COREID
 * name that unit (main_named: the thread is bound there once the runtime runs),
 * otherwise it is where the thread runs at starpu_init(). STARPU_MAIN_THREAD_BIND=1
 * binds it to a unit of its own (the named one, or a free one), a core fewer
 * going to the CPU workers by default. */
static int main_pu = -1, main_core = -1;

static int current_pu(void)
{
	hwloc_topology_t topo = _astro_rt.topology;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int pu = -1;
	if (set && hwloc_get_last_cpu_location(topo, set, HWLOC_CPUBIND_THREAD) == 0) {
		int os = hwloc_bitmap_first(set);
		hwloc_obj_t obj = os >= 0 ? hwloc_get_pu_obj_by_os_index(topo, (unsigned)os) : NULL;
		pu = obj ? (int)obj->logical_index : -1;
	}
	hwloc_bitmap_free(set);
	return pu;
}

static void read_main_thread(void)
{
	int npus = (int)_astro_rt.npus, ncores = (int)_astro_rt.ncores;
	main_bind = _astro_env_int_in("STARPU_MAIN_THREAD_BIND", 0, 1, 0) > 0;
	int cpuid = _astro_env_int_in("STARPU_MAIN_THREAD_CPUID", -1, npus - 1, -1);
	int coreid = _astro_env_int_in("STARPU_MAIN_THREAD_COREID", -1, ncores - 1, -1);
	if (cpuid >= 0 && coreid >= 0)
		_astro_warn("STARPU_MAIN_THREAD_CPUID and STARPU_MAIN_THREAD_COREID are both set: STARPU_MAIN_THREAD_COREID is ignored");
	main_named = cpuid >= 0 || coreid >= 0;
	main_pu = cpuid >= 0 ? cpuid : coreid >= 0 ? core_first_pu((unsigned)coreid) : current_pu();
	main_core = -1;
	hwloc_obj_t pu = main_pu >= 0 ? hwloc_get_obj_by_type(_astro_rt.topology, HWLOC_OBJ_PU, (unsigned)main_pu) : NULL;
	hwloc_obj_t core = pu ? hwloc_get_ancestor_obj_by_type(_astro_rt.topology, HWLOC_OBJ_CORE, pu) : NULL;
	if (core)
		main_core = (int)core->logical_index;
}

void _astro_main_thread_bind(void)
{
	if (!main_named && !main_bind)
		return;
	int pu = main_pu;
	if (!main_named) {
		/* Where it runs now, unless a worker took that unit: then the unit starpu_get_next_bindid() gives. */
		unsigned here = main_pu >= 0 ? (unsigned)main_pu : 0;
		pu = (int)starpu_get_next_bindid(STARPU_THREAD_ACTIVE, &here, main_pu >= 0 ? 1 : 0);
	}
	starpu_bind_thread_on(pu, main_bind ? STARPU_THREAD_ACTIVE : 0, "main");
}

/* The cores the workers take by default, as StarPU: those the process may run
 * on (STARPU_WORKERS_GETBIND=1, the default: taskset, a batch scheduler or an
 * MPI launcher says how many and which), or every core of the machine (0), in
 * order; the last STARPU_RESERVE_NCPU of them (starpu_conf.reserve_ncpus, when
 * no CPU worker count is given) are left to the program's own threads
 * (starpu_get_next_bindid()). A simulation's cores are the simulated machine's:
 * all of them. */
static void read_cores(void)
{
	hwloc_topology_t topo = _astro_rt.topology;
	unsigned n = _astro_rt.ncores ? _astro_rt.ncores : 1;
	unsigned *cores = realloc(place_core, n * sizeof(*cores));
	nplace = nwork = 0;
	if (!cores)
		return;	/* as if every core: default_pu() cycles over the machine */
	place_core = cores;
	hwloc_bitmap_t allowed = NULL;
#ifndef STARPU_SIMGRID
	if (_astro_env_int_in("STARPU_WORKERS_GETBIND", 0, 1, 1)) {
		allowed = hwloc_bitmap_alloc();
		if (allowed && (hwloc_get_cpubind(topo, allowed, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(allowed))) {
			hwloc_bitmap_free(allowed);
			allowed = NULL;
		}
	}
#endif
	for (unsigned c = 0; c < n; c++) {
		hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, c);
		if (!obj)
			obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, c);
		if (!allowed || !obj || hwloc_bitmap_intersects(obj->cpuset, allowed))
			cores[nplace++] = c;
	}
	hwloc_bitmap_free(allowed);
	nwork = nplace;
#ifndef STARPU_SIMGRID
	int reserve = _astro_conf_int_in("STARPU_RESERVE_NCPU", NULL, _astro_rt.conf.reserve_ncpus, 0, INT_MAX, 0);
	/* As StarPU, a CPU worker count given (conf or environment) overrides the reservation. */
	if (reserve > 0 && (_astro_rt.conf.ncpus >= 0 || starpu_getenv("STARPU_NCPU") || starpu_getenv("STARPU_NCPUS")))
		reserve = 0;
	if (reserve >= (int)nplace) {
		_astro_warn("STARPU_RESERVE_NCPU=%d reserves every core this process may use (%u): no CPU worker starts by default; "
			    "reserve fewer cores", reserve, nplace);
		nwork = 0;
	} else if (reserve > 0) {
		nwork = nplace - (unsigned)reserve;
	}
#endif
}

/* When the workers leave a core free, the application thread's core goes last
 * (among the reserved ones, if any), so that the thread keeps a core of its own
 * wherever the OS started it. */
static void keep_main_core(unsigned nworkers)
{
	if (nworkers >= nplace || main_core < 0)
		return;
	for (unsigned i = 0; i + 1 < nplace; i++)
		if (place_core[i] == (unsigned)main_core) {
			memmove(&place_core[i], &place_core[i + 1], (nplace - i - 1) * sizeof(*place_core));
			place_core[nplace - 1] = (unsigned)main_core;
			break;
		}
}

/* The default placement: worker id on the id-th core of place_core (past the
 * unreserved cores, the order starts again). */
static int default_pu(unsigned id)
{
	unsigned n = nwork ? nwork : nplace;
	return n ? core_first_pu(place_core[id % n]) : core_first_pu(id);
}

/* The processing units STARPU_WORKERS_CPUID or STARPU_WORKERS_COREID give to
 * the workers in order, when env_bindid_set. */
static int env_bindid[STARPU_NMAXWORKERS];
static bool env_bindid_set;

/* Reads the worker lists of the environment: like StarPU, they replace
 * conf.workers_bindid (unless the conf takes precedence), CPUID wins over
 * COREID, and a list shorter than the workers is repeated. */
static void read_env_bindids(void)
{
	const char *cpuid = getenv("STARPU_WORKERS_CPUID"), *coreid = getenv("STARPU_WORKERS_COREID");
	const struct starpu_conf *conf = &_astro_rt.conf;

	env_bindid_set = false;
	if (!cpuid && !coreid)
		return;
	if (conf->use_explicit_workers_bindid && conf->precedence_over_environment_variables)
		return;
	if (cpuid && coreid)
		_astro_warn("STARPU_WORKERS_CPUID and STARPU_WORKERS_COREID are both set: STARPU_WORKERS_COREID is ignored");
	bool cores = !cpuid;
	const char *var = cores ? "STARPU_WORKERS_COREID" : "STARPU_WORKERS_CPUID", *text = cores ? coreid : cpuid;
	const char *what = cores ? "core" : "processing unit";
	unsigned limit = cores ? _astro_rt.ncores : _astro_rt.npus;
	unsigned ids[STARPU_NMAXWORKERS];
	struct _astro_parse_error err;
	int n = _astro_parse_id_list(text, limit, ids, STARPU_NMAXWORKERS, &err);
	if (n < 0) {
		_astro_error("%s: '%.*s' %s: the variable is ignored (give %s ids from 0 to %u separated by blanks, "
			     "or ranges like 0-3 and 2-)", var, (int)MIN(err.len, 64), text + err.at, err.why, what, limit - 1);
		return;
	}
	if (n == 0)
		return;	/* blanks only: as if unset */
	for (unsigned i = 0; i < STARPU_NMAXWORKERS; i++)
		env_bindid[i] = cores ? core_first_pu(ids[i % (unsigned)n]) : (int)ids[i % (unsigned)n];
	env_bindid_set = true;
}

/* sub: the worker's rank among those of its device (-1: the device's only one). */
static struct _astro_worker *worker_new(const struct astro_driver *d, int devid, int sub, unsigned memory_node)
{
	struct _astro_worker *w;
	if (posix_memalign((void **)&w, _ASTRO_CACHELINE, sizeof(*w)) != 0)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->id = (int)_astro_rt.nworkers;
	w->devid = devid;
	w->arch = d->archtype;
	w->driver = d;
	w->memory_node = memory_node;
	w->enabled = 1;
	if (sub < 0)
		snprintf(w->name, sizeof(w->name), "%s %d", starpu_worker_get_type_as_string(d->archtype), devid);
	else
		snprintf(w->name, sizeof(w->name), "%s %d.%d", starpu_worker_get_type_as_string(d->archtype), devid, sub);
	w->codelet_site = (struct _astro_foreign_call){ .what = w->name, .kind = _ASTRO_SITE_CODELET };
	_astro_worker_site_offset = offsetof(struct _astro_worker, site);
	starpu_pthread_mutex_init(&w->sched_mutex, NULL);
	starpu_pthread_cond_init(&w->sched_cond, NULL);
	starpu_pthread_mutex_init(&w->local_lock, NULL);
	starpu_task_list_init(&w->local_tasks);
	if (_astro_rt.nobind) {
		w->bindid = -1;
	} else if (env_bindid_set) {
		w->bindid = env_bindid[w->id];
	} else if (_astro_rt.conf.use_explicit_workers_bindid) {
		w->bindid = (int)(_astro_rt.conf.workers_bindid[w->id] % _astro_rt.npus);
	} else {
		w->bindid = default_pu((unsigned)w->id);
	}
	return w;
}

static void worker_free(struct _astro_worker *w)
{
	starpu_pthread_mutex_destroy(&w->sched_mutex);
	starpu_pthread_cond_destroy(&w->sched_cond);
	starpu_pthread_mutex_destroy(&w->local_lock);
	free(w);
}

/* Workers of a kind the configuration asks for (starpu_conf, the variable
 * unset or overridden) where no driver of that kind registered: no device,
 * or a build without its toolkit. Said once; a driver that did register
 * says itself when it has fewer devices than asked (driver_worker_count). */
static void say_unserved_counts(void)
{
	static const struct
	{
		enum starpu_worker_archtype arch;
		size_t offset;
		const char *field, *env, *kind;
	} counts[] = {
		{ STARPU_CUDA_WORKER, offsetof(struct starpu_conf, ncuda), "ncuda", "STARPU_NCUDA", "CUDA" },
		{ STARPU_OPENCL_WORKER, offsetof(struct starpu_conf, nopencl), "nopencl", "STARPU_NOPENCL", "OpenCL" },
		{ STARPU_HIP_WORKER, offsetof(struct starpu_conf, nhip), "nhip", "STARPU_NHIP", "HIP" },
		{ STARPU_MAX_FPGA_WORKER, offsetof(struct starpu_conf, nmax_fpga), "nmax_fpga", "STARPU_NMAX_FPGA", "Maxeler FPGA" },
		{ STARPU_MPI_MS_WORKER, offsetof(struct starpu_conf, nmpi_ms), "nmpi_ms", "STARPU_NMPI_MS", "MPI master-slave" },
		{ STARPU_TCPIP_MS_WORKER, offsetof(struct starpu_conf, ntcpip_ms), "ntcpip_ms", "STARPU_NTCPIP_MS", "TCP/IP master-slave" },
	};
	for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		int asked;
		memcpy(&asked, (const char *)&_astro_rt.conf + counts[c].offset, sizeof(asked));
		if (asked <= 0 || (starpu_getenv(counts[c].env) && !_astro_rt.conf.precedence_over_environment_variables))
			continue;
		bool served = false;
		for (unsigned i = 0; i < _astro_driver_count() && !served; i++)
			served = _astro_driver_nth(i)->archtype == counts[c].arch;
		if (!served)
			_astro_warn("starpu_conf.%s = %d asks for %s workers, but no %s device is usable here (none found, "
				    "or Astrolabe was built without its toolkit): no %s worker starts; set %s to -1 or 0",
				    counts[c].field, asked, counts[c].kind, counts[c].kind, counts[c].kind, counts[c].field);
	}
}

/* The thread of worker failed could not be made (err): the made threads before it, started with running 0,
 * are joined, the workers freed; starpu_init() fails with -EAGAIN. */
static __attribute__((cold)) int workers_start_failed(struct _astro_worker *failed, int err, unsigned made)
{
	_astro_error("cannot create the thread of %s (%s): starpu_init() fails with -EAGAIN; lower STARPU_NCPU, or raise the "
		     "limits on threads and memory of the process (ulimit -u, ulimit -v)", failed->name, strerror(err));
	for (unsigned i = 0; i < _astro_rt.nworkers && made; i++) {
		if (_astro_rt.workers[i] == failed)
			break;
		if (!_astro_driver_not_launched((int)i)) {
			starpu_pthread_join(_astro_rt.workers[i]->thread, NULL);
			made--;
		}
	}
	starpu_pthread_barrier_destroy(&start_barrier);
	_astro_sched_deinit();
	_astro_workers_free();
	return -EAGAIN;
}

/* Starts the workers' threads (not those of starpu_conf.not_launched_drivers) and waits until each
 * has begun; a thread that cannot be made fails the start (workers_start_failed). */
static int launch_threads(void)
{
	/* The workers of starpu_conf.not_launched_drivers run on the application's threads (driver_api.c). */
	unsigned napp = (unsigned)_astro_drivers_mark_not_launched();
	__atomic_store_n(&_astro_rt.running, 1, __ATOMIC_SEQ_CST);
	starpu_pthread_mutex_init(&_astro_rt.pause_lock, NULL);
	starpu_pthread_cond_init(&_astro_rt.pause_cond, NULL);
	start_gate_open = false;
	unsigned made = 0;
	int err = 0;
	struct _astro_worker *failed = NULL;
	for (unsigned i = 0; i < _astro_rt.nworkers && !err; i++) {
		struct _astro_worker *w = _astro_rt.workers[i];
		if (napp && _astro_driver_not_launched(w->id))
			continue;
		err = starpu_pthread_create(&w->thread, NULL, worker_main, w);
		if (err)
			failed = w;
		else
			made++;
	}
	/* The threads made start; when one could not be made, they end at once (running is 0) and are joined. */
	if (err)
		__atomic_store_n(&_astro_rt.running, 0, __ATOMIC_SEQ_CST);
	starpu_pthread_barrier_init(&start_barrier, NULL, made + 1);
	starpu_pthread_mutex_lock(&start_gate_lock);
	start_gate_open = true;
	starpu_pthread_cond_broadcast(&start_gate_cond);
	starpu_pthread_mutex_unlock(&start_gate_lock);
	/* Destroyed once the workers are joined: glibc's last waiter may still touch it after we return. */
	starpu_pthread_barrier_wait(&start_barrier);
	if (STARPU_UNLIKELY(err))
		return workers_start_failed(failed, err, made);
	return 0;
}

int _astro_workers_start(void)
{
#ifdef STARPU_SIMGRID
	/* Nothing changes while an actor spins (the others run only when it waits): an idle worker sleeps at once. */
	spin_polls = 0;
#else
	spin_polls = (unsigned)_astro_env_int_in("ASTRO_SPIN_POLLS", 0, INT_MAX, 64);
#endif
	spin_backoff_max = (unsigned)_astro_env_int_in("ASTRO_SPIN_BACKOFF", 0, INT_MAX, 64);
	for (unsigned i = 0; i < STARPU_NMAXWORKERS; i++)
		astro_worker_looks[i].last = spin_polls == 0;
	read_env_bindids();
	read_main_thread();
	read_cores();
	_astro_rt.nworkers = 0;
	_astro_rt.where_mask = 0;
	_astro_rt.nactive_drivers = 0;
	memset(_astro_rt.nworkers_by_arch, 0, sizeof(_astro_rt.nworkers_by_arch));
	_astro_memory_nodes_init();
	say_unserved_counts();
	/* The counts first: the default placement depends on how many workers there are. */
	unsigned ndrivers = _astro_driver_count(), total = 0;
	int *counts = calloc(ndrivers ? ndrivers : 1, sizeof(*counts)), *per_devices = calloc(ndrivers ? ndrivers : 1, sizeof(*per_devices));
	if (!counts || !per_devices) {
		free(counts);
		free(per_devices);
		return -ENOMEM;
	}
	/* The devices' drivers first: the CPU workers' default count leaves their workers a core each. */
	device_workers = 0;
	for (int devices = 1; devices >= 0; devices--)
		for (unsigned i = 0; i < ndrivers; i++) {
			const struct astro_driver *d = _astro_driver_nth(i);
			if ((d->node_ops != NULL) != devices)
				continue;
			counts[i] = driver_worker_count(d);
			per_devices[i] = counts[i] > 0 && d->workers_per_device_env ? _astro_env_int_in(d->workers_per_device_env, 1, STARPU_NMAXWORKERS, 1) : 1;
			unsigned workers = counts[i] > 0 ? (unsigned)counts[i] * (unsigned)per_devices[i] : 0;
			total += workers;
			if (devices)
				device_workers += workers;
		}
	keep_main_core(total);
	/* A core for every thread (the workers' and the application's): spinning keeps nobody from running. */
	bool core_each = total + 1 <= (nplace ? nplace : _astro_rt.ncores);
	spin_yield_after = (unsigned)_astro_env_int_in("ASTRO_SPIN_YIELD_AFTER", 0, INT_MAX, 8);
	spin_yield_every = (unsigned)_astro_env_int_in("ASTRO_SPIN_YIELD_EVERY", 1, INT_MAX, core_each ? SPIN_YIELD_EVERY : 1);
	for (unsigned i = 0; i < ndrivers; i++) {
		const struct astro_driver *d = _astro_driver_nth(i);
		int n = counts[i], per_device = per_devices[i];
		unsigned pipeline = n > 0 ? pipeline_depth(d) : 1;
		for (int dev = 0; dev < n; dev++) {
			if (_astro_rt.nworkers + (unsigned)per_device > STARPU_NMAXWORKERS) {
				_astro_warn("more than %d workers asked: the extra ones are not started", STARPU_NMAXWORKERS);
				n = dev;
				break;
			}
			/* A device's workers work in the device's memory: a node of its own;
			 * the others in the RAM node of where they are bound. */
			int node = d->node_ops ? _astro_memory_node_add(d, dev) : STARPU_MAIN_RAM;
			if (node < 0) {
				n = dev;
				break;
			}
			for (int sub = 0; sub < per_device; sub++) {
				struct _astro_worker *w = worker_new(d, dev, per_device > 1 ? sub : -1, (unsigned)node);
				if (!w) {
					free(counts);
					free(per_devices);
					return -ENOMEM;
				}
				w->pipeline = pipeline;
				if (!d->node_ops)
					w->memory_node = _astro_numa_node_of_pu(w->bindid);
				_astro_rt.workers[_astro_rt.nworkers++] = w;
				_astro_rt.nworkers_by_arch[d->archtype]++;
				_astro_rt.where_mask |= d->where;
			}
		}
		if (n > 0 && _astro_rt.nactive_drivers < STARPU_NARCH)
			_astro_rt.active_drivers[_astro_rt.nactive_drivers++] = d;
	}
	free(counts);
	free(per_devices);

	int ret = _astro_sched_select();
	if (ret) {
		for (unsigned i = 0; i < _astro_rt.nworkers; i++)
			worker_free(_astro_rt.workers[i]);
		_astro_rt.nworkers = 0;
		return ret;
	}
	if (_astro_rt.nworkers == 0) {
		/* As StarPU: a program gets -ENODEV, unless it asked for no worker itself (starpu_conf_noworker()). */
		if (_astro_rt.conf.ncpus != 0) {
			_astro_error("no worker could start (STARPU_NCPU=0, or no driver plugin found): starpu_init() returns -ENODEV; "
				     "a program that means to run without workers says so with starpu_conf_noworker()");
			_astro_sched_deinit();
			return -ENODEV;
		}
		_astro_warn("no worker started (the configuration asks for none): tasks with a codelet will be refused with -ENODEV");
	}

	return launch_threads();
}

void _astro_workers_stop(void)
{
	__atomic_store_n(&_astro_rt.running, 0, __ATOMIC_SEQ_CST);
	starpu_pthread_mutex_lock(&_astro_rt.pause_lock);
	starpu_pthread_cond_broadcast(&_astro_rt.pause_cond);
	starpu_pthread_mutex_unlock(&_astro_rt.pause_lock);
	/* A pending wake-up also stops a worker that looked at running just before it changed. */
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		_astro_worker_wake(_astro_rt.workers[i]);
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		if (!_astro_driver_not_launched((int)i))
			starpu_pthread_join(_astro_rt.workers[i]->thread, NULL);
	_astro_drivers_wait_out();
	starpu_pthread_barrier_destroy(&start_barrier);
}

void _astro_workers_free(void)
{
	_astro_binding_reset();
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		worker_free(_astro_rt.workers[i]);
	_astro_rt.nworkers = 0;
	starpu_pthread_mutex_destroy(&_astro_rt.pause_lock);
	starpu_pthread_cond_destroy(&_astro_rt.pause_cond);
}

/* -------------------------------------------------------------- pause */

void starpu_pause(void)
{
	if (_astro_forbid_blocking("starpu_pause", "pause from the application's own code; the call is ignored"))
		return;
	starpu_pthread_mutex_lock(&_astro_rt.pause_lock);
	__atomic_store_n(&_astro_rt.paused, 1, __ATOMIC_SEQ_CST);
	starpu_pthread_mutex_unlock(&_astro_rt.pause_lock);
}

void starpu_resume(void)
{
	starpu_pthread_mutex_lock(&_astro_rt.pause_lock);
	__atomic_store_n(&_astro_rt.paused, 0, __ATOMIC_SEQ_CST);
	starpu_pthread_cond_broadcast(&_astro_rt.pause_cond);
	starpu_pthread_mutex_unlock(&_astro_rt.pause_lock);
}

int starpu_is_paused(void)
{
	return __atomic_load_n(&_astro_rt.paused, __ATOMIC_RELAXED);
}
