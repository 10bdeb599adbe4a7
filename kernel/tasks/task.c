/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tasks and jobs: the life of a task from submission to completion.
 *
 * A job's pending count holds its unreleased dependencies plus one guard
 * while it is not yet (completely) submitted; the release that brings it to
 * zero makes the task ready. Successors are kept in the predecessor; a
 * terminating job runs the epilogue callback, releases them, then runs the
 * callback, then lets waiters return.
 *
 * Dependencies declared with starpu_task_declare_deps() persist, as in
 * StarPU: each declaration is a group that counts its predecessors'
 * completions and re-arms once all have completed; a submission of the
 * successor uses up one completion of every group (or waits for it). So a
 * graph of static tasks submitted again and again keeps its order.
 */
#include "tasks/tasks.h"
#include <sched.h>
#include <stdarg.h>

/* Jobs that became ready without a codelet are completed by the outermost
 * release on this thread, so long chains of such tasks do not recurse. */
static _ASTRO_TLS struct _astro_job *deferred_head, *deferred_tail;
static _ASTRO_TLS bool draining;

/* The job whose termination (tag, callbacks) this thread is running, and
 * whether that code submitted it again: StarPU allows resubmitting a task as
 * soon as its termination has begun, e.g. from its own callback. */
static _ASTRO_TLS struct _astro_job *finishing_job;
static _ASTRO_TLS bool finishing_resubmitted;

static void job_finish(struct _astro_job *job);

/* ------------------------------------------------------------ readiness */

/* task->where may say STARPU_NOWHERE too: a fault-tolerance meta task (fault_tolerance.c). */
static bool runs_nothing(const struct starpu_task *task)
{
	return !task->cl || task->cl->where == STARPU_NOWHERE || task->where == (int32_t)STARPU_NOWHERE;
}

static void drain_deferred(void)
{
	draining = true;
	while (deferred_head) {
		struct _astro_job *job = deferred_head;
		deferred_head = job->next_free;
		if (!deferred_head)
			deferred_tail = NULL;
		job->next_free = NULL;
		_astro_job_terminate(job, -1);
	}
	draining = false;
}

static void job_ready(struct _astro_job *job)
{
	if (!job->task) {
		/* An acquire: the data is now accessible, once brought where it is wanted. */
		int ready = 1;
		if (STARPU_UNLIKELY(_astro_rt.nmemory_nodes > 1 || __atomic_load_n(&_astro_unallocated_handles, __ATOMIC_RELAXED) ||
				    (job->nbuffers && __atomic_load_n(&job->links[0].handle->redux, __ATOMIC_RELAXED))))
			if (job->nbuffers && _astro_coherency_acquired(job->links[0].handle, job->links[0].mode, job->acquire_node,
								       job->acquire_evict) != 0)
				ready = 2; /* granted, its data not there: a blocking acquire fails */
		if (job->acquire_callback) {
			/* Read first: once granted, any starpu_data_release of the handle (another holder's) may end and free it. */
			void (*callback)(void *) = job->acquire_callback;
			void *arg = job->acquire_arg;
			__atomic_store_n(&job->acquire_ready, 1, __ATOMIC_RELEASE); /* granted: starpu_data_release may end it */
			enum _astro_call_context previous = _astro_context_enter(_ASTRO_CTX_CALLBACK);
			callback(arg);
			_astro_context_leave(previous);
		} else {
			__atomic_store_n(&job->acquire_ready, ready, __ATOMIC_RELEASE);
			astro_futex_wake_all(&job->acquire_ready);
		}
		return;
	}
	struct starpu_task *task = job->task;
	__atomic_add_fetch(&_astro_rt.nready_added, 1, __ATOMIC_RELAXED);
	if (STARPU_UNLIKELY(task->sched_ctx != 0))
		_astro_ctx_ready(task->sched_ctx, task, 1);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_READY, .workerid = _astro_worker_id(), .task = task, .job_id = job->id);
	if (task->prologue_callback_func) {
		/* The task is the current one for its prologue (starpu_task_ft_prologue() reads it). */
		struct starpu_task *previous_task = _astro_current_task;
		_astro_current_task = task;
		enum _astro_call_context previous = _astro_context_enter(_ASTRO_CTX_CALLBACK);
		task->prologue_callback_func(task->prologue_callback_arg);
		_astro_context_leave(previous);
		_astro_current_task = previous_task;
	}
	if (!runs_nothing(task)) {
		_astro_sched_push(task);
		return;
	}
	task->status = STARPU_TASK_READY;
	/* A partition's switch task: the children are views into the parent's main-memory copy. */
	if (STARPU_UNLIKELY(_astro_rt.nmemory_nodes > 1))
		_astro_coherency_task_in_ram(task);
	/* Nothing will pop it: its pop prologue runs here, as StarPU does for codelet-less tasks. */
	if (task->prologue_callback_pop_func) {
		struct starpu_task *previous_task = _astro_current_task;
		_astro_current_task = task;
		enum _astro_call_context previous = _astro_context_enter(_ASTRO_CTX_CALLBACK);
		task->prologue_callback_pop_func(task->prologue_callback_pop_arg);
		_astro_context_leave(previous);
		_astro_current_task = previous_task;
	}
	if (deferred_tail)
		deferred_tail->next_free = job;
	else
		deferred_head = job;
	deferred_tail = job;
	if (!draining)
		drain_deferred();
}

void _astro_job_release(struct _astro_job *job)
{
	if (__atomic_sub_fetch(&job->pending, 1, __ATOMIC_ACQ_REL) == 0)
		job_ready(job);
}

/* ------------------------------------------------------------ termination */

void _astro_job_terminate(struct _astro_job *job, int workerid)
{
	(void)workerid;
	if (__atomic_sub_fetch(&job->end_pending, 1, __ATOMIC_ACQ_REL) == 0)
		job_finish(job);
}

void _astro_task_completed_count(void)
{
	_astro_count_done(1);
}

/* The successors listed on job (it is linked): under its lock, as a listing may be under way. */
static __attribute__((noinline)) void release_listed(struct _astro_job *job)
{
	struct _astro_job *group_releases_inline[8], **group_releases = group_releases_inline;
	unsigned nreleases = 0;
	astro_lock_acquire(&job->lock);
	__atomic_store_n(&job->terminated, true, __ATOMIC_RELEASE);
	struct _astro_job **succs = job->succs;
	unsigned n = job->nsuccs;
	job->succs = NULL;
	job->nsuccs = job->succs_cap = 0;
	if (job->npred_of > 8)
		group_releases = malloc(job->npred_of * sizeof(*group_releases));
	for (unsigned i = 0; i < job->npred_of; i++) {
		struct _astro_job *release = _astro_group_notify(job->pred_of[i]);
		if (release)
			group_releases[nreleases++] = release;
	}
	astro_lock_release(&job->lock);
	for (unsigned i = 0; i < nreleases; i++)
		_astro_job_release(group_releases[i]);
	if (group_releases != group_releases_inline)
		free(group_releases);
	for (unsigned i = 0; i < n; i++) {
		uintptr_t entry = (uintptr_t)succs[i];
		if (entry & _ASTRO_END_DEP_BIT)
			_astro_job_terminate((struct _astro_job *)(entry & ~_ASTRO_END_DEP_BIT), -1);
		else
			_astro_job_release((struct _astro_job *)entry);
	}
	if (succs)
		free(succs);
}

/* Most jobs never had a successor listed: closing them (one exchange) keeps any from being listed
 * from now on, without the lock. */
static inline __attribute__((always_inline)) void release_successors(struct _astro_job *job)
{
	unsigned char unlinked = JOB_UNLINKED;
	if (STARPU_LIKELY(__atomic_compare_exchange_n(&job->link_state, &unlinked, JOB_CLOSED, false, __ATOMIC_ACQ_REL,
						      __ATOMIC_ACQUIRE)))
		__atomic_store_n(&job->terminated, true, __ATOMIC_RELEASE);
	else
		release_listed(job);
}

static inline __attribute__((always_inline)) int submit_enter(void);
static int task_submit_prepared(struct starpu_task *task, struct _astro_job *job);
static void task_free_owned(struct starpu_task *task);
static void task_delete(struct starpu_task *task);

/* The task's epilogue callback (epilogue) or its codelet's and its own callbacks, as the task
 * being run, in the callback context, seen by observers. */
static void run_callbacks(struct _astro_job *job, bool epilogue)
{
	struct starpu_task *task = job->task;
	struct starpu_task *previous = _astro_current_task;
	_astro_current_task = task;
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_CALLBACK_BEGIN, .workerid = _astro_worker_id(), .task = task, .job_id = job->id);
	_ASTRO_INSTR_TASK_ENTER(job);
	enum _astro_call_context previous_context = _astro_context_enter(_ASTRO_CTX_CALLBACK);
	if (epilogue) {
		task->epilogue_callback_func(task->epilogue_callback_arg);
	} else {
		if (task->cl && task->cl->callback_func)
			task->cl->callback_func(task->callback_arg);
		if (task->callback_func)
			task->callback_func(task->callback_arg);
	}
	_astro_context_leave(previous_context);
	_ASTRO_INSTR_TASK_LEAVE(job);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_CALLBACK_END, .workerid = _astro_worker_id(), .task = task, .job_id = job->id);
	_astro_current_task = previous;
}

/* The epilogue callback, run as the finishing job's (a submission from it is a resubmission, returned). */
static bool run_epilogue(struct _astro_job *job)
{
	struct _astro_job *previous_finishing = finishing_job;
	bool previous_resubmitted = finishing_resubmitted;
	finishing_job = job;
	finishing_resubmitted = false;
	run_callbacks(job, true);
	bool resubmitted = finishing_resubmitted;
	finishing_job = previous_finishing;
	finishing_resubmitted = previous_resubmitted;
	return resubmitted;
}

/* A task with callbacks keeps its handles held while they run (they may submit more tasks
 * on them, which synchronous unregistration waits for too, as StarPU does). */
#define HELD_INLINE 8
static inline bool holds_for_callbacks(struct _astro_job *job)
{
	struct starpu_task *task = job->task;
	return task && job->nbuffers && (task->callback_func || task->epilogue_callback_func || (task->cl && task->cl->callback_func));
}

static void held_done(starpu_data_handle_t *held, unsigned nheld, starpu_data_handle_t *inline_room)
{
	for (unsigned i = 0; i < nheld; i++)
		_astro_data_callback_done(held[i]);
	if (held != inline_room)
		free(held);
}

/* A job's end; held (room for its handles) when holds_for_callbacks(), NULL otherwise (the common case, compiled apart). */
static inline __attribute__((always_inline)) void job_finish_body(struct _astro_job *job, starpu_data_handle_t *held,
								   starpu_data_handle_t *held_inline)
{
	struct starpu_task *task = job->task;
	/* Read before the callback, which may move the task to another context for its next submission. */
	unsigned ctx = task ? task->sched_ctx : 0;
	/* Ready no more in its context (before a callback changes its flops for a next submission). */
	if (STARPU_UNLIKELY(ctx != 0))
		_astro_ctx_ready(ctx, task, -1);
	if (STARPU_UNLIKELY(job->watched))
		_astro_watchdog_untrack(job);
	unsigned nheld = job->nbuffers ? _astro_data_release_accesses(job, held) : 0;
	if (task && job->nbuffers)
		_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_DATA_RELEASED, .workerid = _astro_worker_id(), .task = task, .job_id = job->id);
	/* Back to the unsubmitted state before the termination becomes visible: the task may be
	 * submitted again from here on, and dependencies declared before that add to these guards. */
	if (task) {
		__atomic_store_n(&job->pending, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&job->end_pending, 1, __ATOMIC_RELEASE);
	}
	/* As in StarPU: the epilogue callback runs before the successors are released (none of them can be
	 * running yet), the other callbacks after. */
	bool epilogue_resubmitted = false;
	if (task && STARPU_UNLIKELY(task->epilogue_callback_func != NULL))
		epilogue_resubmitted = run_epilogue(job);
	release_successors(job);
	if (!task)
		return; /* acquire jobs are freed by their releaser */
	struct _astro_job *previous_finishing = finishing_job;
	bool previous_resubmitted = finishing_resubmitted;
	finishing_job = job;
	finishing_resubmitted = epilogue_resubmitted;
	if (job->tag)
		_astro_tag_job_done(job->tag, job);

	if ((task->cl && task->cl->callback_func) || task->callback_func)
		run_callbacks(job, false);
	if (held)
		held_done(held, nheld, held_inline);
	bool resubmitted = finishing_resubmitted;
	finishing_job = previous_finishing;
	finishing_resubmitted = previous_resubmitted;
	if (resubmitted) {
		/* The new submission owns the job (it may even be running): only this instance's counts are left. */
		__atomic_add_fetch(&_astro_rt.nready_done, 1, __ATOMIC_RELAXED);
		_astro_task_completed_count();
		if (STARPU_UNLIKELY(ctx != 0))
			_astro_ctx_task_done(ctx);
		return;
	}

	/* A task whose data found no room did not run (run/worker_loop.c): it stays STARPU_TASK_STOPPED. */
	if (STARPU_LIKELY(task->status != STARPU_TASK_STOPPED))
		task->status = STARPU_TASK_FINISHED;
	__atomic_add_fetch(&_astro_rt.nready_done, 1, __ATOMIC_RELAXED);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_COMPLETED, .workerid = _astro_worker_id(), .task = task, .job_id = job->id);

	if (task->regenerate && submit_enter() == 0) {
		/* Submitted again before it counts as complete, so wait_for_all never sees a gap. */
		__atomic_store_n(&job->submitted, false, __ATOMIC_RELAXED);
		if (task_submit_prepared(task, job) == 0) {
			_astro_count_done(2); /* this instance, and the submission */
			if (STARPU_UNLIKELY(ctx != 0))
				_astro_ctx_task_done(ctx);
			return;
		}
		_astro_count_done(2); /* the refused resubmission's counts */
	}
	__atomic_store_n(&job->submitted, false, __ATOMIC_RELEASE);
	bool detach = task->detach;
	bool destroy = detach ? task->destroy : __atomic_load_n(&job->destroy_requested, __ATOMIC_ACQUIRE);
	if (destroy) {
		task_delete(task);
	} else if (!detach) {
		/* After this exchange the waiter may free the task: touch nothing but the futex. */
		if (__atomic_exchange_n(&job->done, JOB_DONE, __ATOMIC_ACQ_REL) == JOB_WAITED)
			astro_futex_wake_all(&job->done);
	} else if (__atomic_exchange_n(&job->done, JOB_DONE, __ATOMIC_ACQ_REL) == JOB_DESTROY) {
		task_delete(task); /* starpu_task_destroy() was called while it ran */
	}
	_astro_task_completed_count();
	if (STARPU_UNLIKELY(ctx != 0))
		_astro_ctx_task_done(ctx);
}

static __attribute__((noinline)) void job_finish_holding(struct _astro_job *job)
{
	starpu_data_handle_t held_inline[HELD_INLINE];
	starpu_data_handle_t *held = job->nbuffers <= HELD_INLINE ? held_inline : malloc(job->nbuffers * sizeof(*held));
	job_finish_body(job, held, held_inline);
}

static void job_finish(struct _astro_job *job)
{
	if (STARPU_UNLIKELY(holds_for_callbacks(job)))
		job_finish_holding(job);
	else
		job_finish_body(job, NULL, NULL);
}

/* ------------------------------------------------------------ submission */

/* The task's name in a message: its name, or "(unnamed)" (looked up only when a message is said). */
static const char *task_label(struct starpu_task *task)
{
	const char *name = starpu_task_get_name(task);
	return name ? name : "(unnamed)";
}

static int check_handles(struct starpu_task *task, unsigned nbuffers)
{
	if (nbuffers > STARPU_NMAXBUFS && !task->dyn_handles) {
		_astro_error("task '%s' has %u buffers but at most %d fit in task->handles: use task->dyn_handles and dyn_modes",
			     task_label(task), nbuffers, STARPU_NMAXBUFS);
		return -EINVAL;
	}
	for (unsigned i = 0; i < nbuffers; i++) {
		starpu_data_handle_t handle = STARPU_TASK_GET_HANDLE(task, i);
		if (!handle) {
			_astro_error("task '%s': buffer %u has a NULL handle: register the data (starpu_*_data_register) and set the handle",
				     task_label(task), i);
			return -EINVAL;
		}
		/* Relaxed: unregistration clears it with an atomic store. */
		if (STARPU_UNLIKELY(__atomic_load_n(&handle->magic, __ATOMIC_RELAXED) != _ASTRO_HANDLE_MAGIC)) {
			_astro_error("task '%s': buffer %u: handle %p is not registered (already unregistered?): register the data again to use it",
				     task_label(task), i, (void *)handle);
			return -EINVAL;
		}
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		if (_astro_data_check_mode(mode) != 0) {
			_astro_error("task '%s': buffer %u has the invalid access mode 0x%x: use STARPU_R, STARPU_W, STARPU_RW, "
				     "STARPU_SCRATCH or STARPU_REDUX, optionally with STARPU_COMMUTE",
				     task_label(task), i, (unsigned)mode);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_runnable(struct starpu_task *task)
{
	if (task->execute_on_a_specific_worker) {
		if (task->workerid >= _astro_rt.nworkers && _astro_is_combined_worker((int)task->workerid)) {
			if (!starpu_combined_worker_can_execute_task(task->workerid, task, 0)) {
				_astro_error("task '%s' asks for combined worker %u, which cannot run it: its codelet must be STARPU_SPMD or "
					     "STARPU_FORKJOIN with max_parallelism at least the combined worker's size, and run on its workers",
					     task_label(task), task->workerid);
				return -ENODEV;
			}
			return 0;
		}
		if (task->workerid >= _astro_rt.nworkers) {
			_astro_error("task '%s' asks for worker %u but there are only %u workers: fix task->workerid",
				     task_label(task), task->workerid, _astro_rt.nworkers);
			return -EINVAL;
		}
		if (_astro_worker_impl_for((int)task->workerid, task) < 0) {
			_astro_error("task '%s' asks for worker %u, which has no implementation of it",
				     task_label(task), task->workerid);
			return -ENODEV;
		}
		return 0;
	}
	if (task->cl->can_execute) {
		for (unsigned w = 0; w < _astro_rt.nworkers; w++)
			if (_astro_worker_impl_for((int)w, task) >= 0)
				return 0;
		return -ENODEV;
	}
	/* Without a can_execute filter, all workers of a driver are alike: ask each driver once. */
	for (unsigned i = 0; i < _astro_rt.nactive_drivers; i++) {
		const struct astro_driver *d = _astro_rt.active_drivers[i];
		if (!_astro_task_where(task, d))
			continue;
		for (unsigned nimpl = 0; nimpl < STARPU_MAXIMPLEMENTATIONS; nimpl++)
			if (d->has_impl(task->cl, nimpl))
				return 0;
	}
	return -ENODEV;
}

/* Counts a submission in nsubmitted, then reads the runtime's state (both
 * seq_cst): shutdown changes the state before it waits for nsubmitted to drop
 * to zero, so either it waits for this task or this sees the state and backs
 * out. Two counts: the task's, and one the submitting thread holds until it
 * leaves the runtime (the end of starpu_task_submit), since the task may complete before the
 * push has returned (waking a worker reads the worker shutdown frees).
 * Returns 0, or -ESHUTDOWN / -ESRCH with the counts given back. */
static inline __attribute__((always_inline)) int submit_enter(void)
{
	__atomic_add_fetch(&_astro_rt.nsubmitted_added, 2, __ATOMIC_SEQ_CST);
	int state = __atomic_load_n(&_astro_rt.initialized, __ATOMIC_SEQ_CST);
	if (STARPU_LIKELY(state == _ASTRO_RUNNING))
		return 0;
	/* Draining: tasks and callbacks may still submit (they are counted, shutdown waits for them); others may not. */
	if (state == _ASTRO_DRAINING && _astro_called_back())
		return 0;
	_astro_count_given_back(2);
	return state == _ASTRO_DRAINING || state == _ASTRO_STOPPING ? -ESHUTDOWN : -ESRCH;
}

static int task_check_object(struct starpu_task *task)
{
	if (!task) {
		_astro_error("starpu_task_submit: NULL task: create it with starpu_task_create()");
		return -EINVAL;
	}
	if (task->magic != 42) {
		_astro_error("starpu_task_submit: the task was not initialised: use starpu_task_create() or starpu_task_init()");
		return -EINVAL;
	}
	return 0;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/* A codelet written for StarPU 1.0 (cpu_func, cuda_func, opencl_func) gets its function into
 * the arrays, once: the field then says STARPU_MULTIPLE_*_IMPLEMENTATIONS, as StarPU does. */
#define MOVE_DEPRECATED_FUNC(cl, single, array, multiple)                                                                    \
	do {                                                                                                                 \
		__typeof__((cl)->single) f = __atomic_load_n(&(cl)->single, __ATOMIC_ACQUIRE);                                   \
		if (f && f != (multiple)) {                                                                                  \
			__typeof__((cl)->single) none = NULL;                                                                    \
			if (!__atomic_compare_exchange_n(&(cl)->array[0], &none, f, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&   \
			    none != f)                                                                                       \
				_astro_warn("codelet '%s' gives both " #single " and " #array ": " #array " is used (" #single \
					    " is deprecated: drop it)", (cl)->name ? (cl)->name : "(unnamed)");                     \
			__atomic_store_n(&(cl)->single, (multiple), __ATOMIC_RELEASE);                                          \
		}                                                                                                            \
	} while (0)

static void codelet_deprecated_fields(struct starpu_codelet *cl)
{
	MOVE_DEPRECATED_FUNC(cl, cpu_func, cpu_funcs, STARPU_MULTIPLE_CPU_IMPLEMENTATIONS);
	MOVE_DEPRECATED_FUNC(cl, cuda_func, cuda_funcs, STARPU_MULTIPLE_CUDA_IMPLEMENTATIONS);
	MOVE_DEPRECATED_FUNC(cl, opencl_func, opencl_funcs, STARPU_MULTIPLE_OPENCL_IMPLEMENTATIONS);
}

/* Read only: a codelet may be const, in read-only memory (a flag written at the first submission would fault). */
static inline bool codelet_has_deprecated_fields(const struct starpu_codelet *cl)
{
	return ((uintptr_t)__atomic_load_n(&cl->cpu_func, __ATOMIC_RELAXED) | (uintptr_t)__atomic_load_n(&cl->cuda_func, __ATOMIC_RELAXED) |
		(uintptr_t)__atomic_load_n(&cl->opencl_func, __ATOMIC_RELAXED)) != 0;
}

#pragma GCC diagnostic pop

/* Called counted in nsubmitted (submit_enter): the runtime stays up meanwhile. */
static int task_validate(struct starpu_task *task)
{
	struct _astro_job *job = task->starpu_private;
	if (job && __atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE) && job != finishing_job) {
		/* Terminating elsewhere (its tag is done, its callback runs): StarPU accepts it, let that end first. */
		while (__atomic_load_n(&job->terminated, __ATOMIC_ACQUIRE) && __atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE))
			astro_thread_yield();
		if (__atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE)) {
			_astro_error("starpu_task_submit: task '%s' is already submitted and not complete: wait for it or create another task",
				     task_label(task));
			return -EINVAL;
		}
	}
	if (task->synchronous) {
		int ret = _astro_forbid_blocking("starpu_task_submit of a synchronous task", "submit it asynchronously (task->synchronous = 0)");
		if (ret)
			return ret;
	}
	if (!task->cl)
		return 0;
	if (STARPU_UNLIKELY(codelet_has_deprecated_fields(task->cl)))
		codelet_deprecated_fields(task->cl);
	int nbuffers = task->cl->nbuffers == STARPU_VARIABLE_NBUFFERS ? task->nbuffers : task->cl->nbuffers;
	if (nbuffers < 0) {
		_astro_error("starpu_task_submit: codelet '%s' has a negative buffer count: set cl->nbuffers (or task->nbuffers with STARPU_VARIABLE_NBUFFERS)",
			     task->cl->name ? task->cl->name : "(unnamed)");
		return -EINVAL;
	}
	int ret = check_handles(task, (unsigned)nbuffers);
	if (ret)
		return ret;
	if (runs_nothing(task))
		return 0;
	ret = check_runnable(task);
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_multiformat_handles, __ATOMIC_RELAXED)) && ret == 0 && _astro_rt.nmemory_nodes > 1)
		ret = _astro_multiformat_check_task(task);
	return ret;
}

/* Called counted in nsubmitted (submit_enter); the caller gives the count back when this refuses. */
static int task_submit_prepared(struct starpu_task *task, struct _astro_job *job)
{
	if (task->sched_ctx == STARPU_NMAX_SCHED_CTXS)
		task->sched_ctx = _astro_ctx_current;
	/* First, so that a context or a tag that cannot take the task refuses it before anything changed. */
	struct starpu_sched_policy *policy = _astro_ctxs[0].policy;
	if (STARPU_UNLIKELY(task->sched_ctx != 0)) {
		int ret = _astro_ctx_task_submitted(task->sched_ctx, task);
		if (ret)
			return ret;
		policy = _astro_ctxs[task->sched_ctx].policy;
	}
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_iterations_open, __ATOMIC_RELAXED)))
		_astro_iteration_stamp(task);
	job->tag = NULL;
	if (task->use_tag) {
		int ret = _astro_tag_attach_job(job, task->tag_id);
		if (ret) {
			if (task->sched_ctx != 0)
				_astro_ctx_task_done(task->sched_ctx);
			return ret;
		}
	}
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_watchdog_tracking, __ATOMIC_RELAXED)))
		_astro_watchdog_track(job);
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_rt.prio_capped, __ATOMIC_ACQUIRE)))
		_astro_task_cap_priority(task);
	/* Relaxed atomic stores (plain moves): starpu_task_wait() may look at a regenerated task meanwhile. */
	__atomic_store_n(&job->submitted, true, __ATOMIC_RELAXED);
	__atomic_store_n(&job->terminated, false, __ATOMIC_RELEASE); /* after submitted: see job_never_submitted() */
	unsigned char closed = JOB_CLOSED; /* open for successors again (a linked job stays linked) */
	if (__atomic_load_n(&job->link_state, __ATOMIC_RELAXED) == JOB_CLOSED)
		__atomic_compare_exchange_n(&job->link_state, &closed, JOB_UNLINKED, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	/* A regenerated round keeps JOB_WAITED: a waiter asleep on it is woken by the last round. */
	if (__atomic_load_n(&job->done, __ATOMIC_RELAXED) == JOB_DONE)
		__atomic_store_n(&job->done, JOB_RUNNING, __ATOMIC_RELAXED);
	job->profiling_pending = false; /* set by profiling at TASK_SUBMITTED */
	__atomic_store_n(&job->runnable_on, 0, __ATOMIC_RELAXED); /* what the policy finds out for this submission */
	task->status = STARPU_TASK_BLOCKED;
	if (policy->submit_hook) {
		_astro_site_enter_top(_ASTRO_HOOK_SITE(&_astro_ctxs[task->sched_ctx], SUBMIT));
		policy->submit_hook(task);
		_astro_site_leave_top();
	}
	if (job->ngroups)
		_astro_groups_claim(job);
	/* A task without data (and not submitted by starpu_task_submit_nodeps) has no access to register: no call. */
	if (STARPU_LIKELY(!job->nodeps) && _astro_task_nbuffers(task) == 0)
		job->nbuffers = 0;
	else
		_astro_data_submit_accesses(job, task);
	_ASTRO_OBSERVE(ASTRO_MOMENT_TASK_SUBMITTED, .workerid = _astro_worker_id(), .task = task, .job_id = job->id);
	_astro_job_release(job);
	return 0;
}

/* starpu_task_submit() up to a synchronous task's wait (the Submitting stage); *synchronous: whether it is one. */
static int task_submit(struct starpu_task *task, bool *synchronous)
{
	int ret = submit_enter();
	if (STARPU_UNLIKELY(ret)) {
		if (ret == -ESHUTDOWN)
			_astro_error("starpu_task_submit: task '%s' is refused: starpu_shutdown() is under way, only tasks and callbacks may still submit; "
				     "submit before calling starpu_shutdown()",
				     task_label(task));
		else
			_astro_error("starpu_task_submit: the runtime is not running: call starpu_init() first");
		return ret;
	}
	ret = task_validate(task);
	if (ret) {
		_astro_count_given_back(2);
		if (ret == -ENODEV)
			_astro_error("starpu_task_submit: no worker can run task '%s' (codelet where=0x%x, no matching implementation among %u workers): "
				     "add an implementation or start the matching workers",
				     task_label(task),
				     task->cl ? task->cl->where : 0, _astro_rt.nworkers);
		return ret;
	}
	if (STARPU_UNLIKELY(task->transaction != NULL)) {
		ret = _astro_transaction_task_submitted(task);
		if (ret) {
			_astro_count_given_back(2);
			return ret;
		}
	}
	/* The partition switches its accesses need go first. */
	if (STARPU_UNLIKELY(__atomic_load_n(&_astro_plans, __ATOMIC_ACQUIRE)) && task->cl)
		_astro_plans_task_switch(task);
	struct _astro_job *job = _astro_job_get(task);
	*synchronous = task->synchronous;
	if (*synchronous)
		task->detach = 0;
	ret = task_submit_prepared(task, job);
	if (ret) {
		_astro_count_given_back(2);
		return ret;
	}
	if (job == finishing_job)
		finishing_resubmitted = true;
	_astro_count_given_back(1); /* the submission's own count: it leaves the runtime */
	return 0;
}

/* The Submitting stage's begin (task) or end (NULL), for its observers (the trace's TASK_VERBOSE). */
static __attribute__((noinline)) void submit_stage(struct starpu_task *task)
{
	if (task)
		_ASTRO_OBSERVE(ASTRO_MOMENT_SUBMIT_STAGE_BEGIN, .workerid = _astro_worker_id(), .task = task, .nimpl = ASTRO_SUBMIT_SUBMITTING);
	else
		_ASTRO_OBSERVE(ASTRO_MOMENT_SUBMIT_STAGE_END, .workerid = _astro_worker_id(), .nimpl = ASTRO_SUBMIT_SUBMITTING);
}

int starpu_task_submit(struct starpu_task *task)
{
	int ret = task_check_object(task);
	if (ret)
		return ret;
	if (STARPU_UNLIKELY(_astro_throttling))
		_astro_throttle();
	/* Unobserved, the stage costs one test of the mask and one of this flag. */
	bool observed = STARPU_UNLIKELY(__atomic_load_n(&_astro_observe_mask, __ATOMIC_RELAXED) & ASTRO_MOMENT_BIT(ASTRO_MOMENT_SUBMIT_STAGE_BEGIN));
	if (observed)
		submit_stage(task);
	bool synchronous = false;
	ret = task_submit(task, &synchronous);
	if (observed)
		submit_stage(NULL);
	if (ret || !synchronous)
		return ret;
	return starpu_task_wait(task);
}

int starpu_task_submit_to_ctx(struct starpu_task *task, unsigned sched_ctx_id)
{
	if (!task) {
		_astro_error("starpu_task_submit_to_ctx: NULL task");
		return -EINVAL;
	}
	/* The context is checked at submission (_astro_ctx_task_submitted). */
	task->sched_ctx = sched_ctx_id;
	return starpu_task_submit(task);
}

int _astro_task_submit_internally(struct starpu_task *task)
{
	_astro_submit_internal_depth++;
	int ret = starpu_task_submit(task);
	_astro_submit_internal_depth--;
	return ret;
}

int starpu_task_submit_nodeps(struct starpu_task *task)
{
	int ret = task_check_object(task);
	if (ret)
		return ret;
	/* Read (and cleared) by _astro_data_submit_accesses(): the task may be gone when this returns. */
	_astro_job_get(task)->nodeps = true;
	return starpu_task_submit(task);
}

/* ------------------------------------------------------- waiting for one */

/* Polls of a waiting application thread before it sleeps (see _astro_relax). */
#define WAIT_SPINS 256

/* Neither submitted, nor terminating (its termination may be resubmitting it: a
 * regenerated task), nor complete: starpu_task_create() embeds the job, so only
 * its state tells a fresh task from a submitted one. */
static bool job_never_submitted(struct _astro_job *job)
{
	if (__atomic_load_n(&job->done, __ATOMIC_ACQUIRE) == JOB_DONE || __atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE))
		return false;
	astro_lock_acquire(&job->lock);
	bool terminating = __atomic_load_n(&job->terminated, __ATOMIC_ACQUIRE);
	astro_lock_release(&job->lock);
	return !terminating && !__atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) != JOB_DONE;
}

int starpu_task_finished(struct starpu_task *task)
{
	if (!task) {
		_astro_error("starpu_task_finished: NULL task");
		return 0;
	}
	struct _astro_job *job = task->starpu_private;
	return job && __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) == JOB_DONE && !__atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE);
}

int starpu_task_wait(struct starpu_task *task)
{
	if (!task) {
		_astro_error("starpu_task_wait: NULL task");
		return -EINVAL;
	}
	struct _astro_job *job = task->starpu_private;
	if (task->detach) {
		_astro_error("starpu_task_wait: task '%s' is detached: set task->detach = 0 before submitting it to wait for it",
			     task_label(task));
		return -EINVAL;
	}
	if (!job || job_never_submitted(job)) {
		_astro_error("starpu_task_wait: task '%s' was never submitted, waiting for it would never return: submit it first (starpu_task_submit)",
			     task_label(task));
		return -EINVAL;
	}
	int ret = _astro_forbid_blocking("starpu_task_wait", NULL);
	if (ret)
		return ret;
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_BEGIN, .workerid = -1, .task = task, .job_id = job->id);
	/* Short tasks complete within microseconds: look a while before paying for a futex sleep and wake. */
	for (unsigned i = 0; i < WAIT_SPINS && __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) != JOB_DONE; i++)
		_astro_relax(i);
	if (__atomic_load_n(&job->done, __ATOMIC_ACQUIRE) != JOB_DONE)
		_astro_wait_say_paused("starpu_task_wait");
	int expected = JOB_RUNNING;
	__atomic_compare_exchange_n(&job->done, &expected, JOB_WAITED, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&job->done, __ATOMIC_ACQUIRE) != JOB_DONE) {
		struct _astro_idle_watch watch;
		_astro_idle_watch_begin(&watch, "starpu_task_wait", job, NULL, NULL);
		for (;;) {
			astro_futex_wait_for(&job->done, JOB_WAITED, _astro_idle_watch_sleep_ns(&watch));
			if (__atomic_load_n(&job->done, __ATOMIC_ACQUIRE) == JOB_DONE)
				break; /* woken by the completion: nothing to look at */
			_astro_idle_watch_look(&watch);
		}
	}
	_ASTRO_OBSERVE(ASTRO_MOMENT_APP_WAIT_END, .workerid = -1, .task = task, .job_id = job->id);
	if (task->destroy)
		starpu_task_destroy(task);
	return 0;
}

int starpu_task_wait_array(struct starpu_task **tasks, unsigned nb_tasks)
{
	for (unsigned i = 0; i < nb_tasks; i++) {
		int ret = starpu_task_wait(tasks[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* ------------------------------------------------------------ task objects */

/* Frees task->profiling_info, giving a pooled one (profiling/profiling.c) back to its pool. */
static void profiling_info_free(struct starpu_task *task)
{
	struct _astro_job *job = task->starpu_private;
	if (job && job->profiling_info_pooled) {
		if (task->profiling_info == job->profiling_info_pooled)
			task->profiling_info = NULL;
		_astro_recycled_free(_ASTRO_RECYCLED_PROFILING_INFO, job->profiling_info_pooled);
		job->profiling_info_pooled = NULL;
	}
	/* Anything else was handed over by the application (STARPU_TASK_PROFILING_INFO), as in StarPU. */
	if (task->profiling_info) {
		free(task->profiling_info);
		task->profiling_info = NULL;
	}
}

/* Frees a task the runtime owns, and its block: recycled if starpu_task_create() made it. */
static void task_delete(struct starpu_task *task)
{
	struct _astro_job *job = task->starpu_private;
	bool made_here = job && job->embedded;
	task_free_owned(task);
	__atomic_store_n(&task->magic, _ASTRO_TASK_FREED_MAGIC, __ATOMIC_RELAXED); /* read by _astro_task_was_freed() */
	if (made_here)
		_astro_recycled_free(_ASTRO_RECYCLED_TASK, task);
	else
		free(task);
}

struct starpu_task *starpu_task_create(void)
{
	struct _astro_task_with_job *both = _astro_recycled_alloc(_ASTRO_RECYCLED_TASK, sizeof(struct _astro_task_with_job));
	if (!both)
		return NULL;
	struct starpu_task *task = &both->task;
	starpu_task_init(task);
	task->destroy = 1;
	_astro_job_init(&both->job);
	both->job.task = task;
	both->job.embedded = true;
	task->starpu_private = &both->job;
	return task;
}

/* Frees what the runtime or the user handed over to the task, not the task itself. */
static void task_free_owned(struct starpu_task *task)
{
	if (STARPU_UNLIKELY(task->bundle != NULL))
		_astro_bundle_forget(task);
	if (task->cl_arg_free) {
		free(task->cl_arg);
		task->cl_arg = NULL;
	}
	if (task->callback_arg_free) {
		free(task->callback_arg);
		task->callback_arg = NULL;
	}
	if (task->prologue_callback_arg_free) {
		free(task->prologue_callback_arg);
		task->prologue_callback_arg = NULL;
	}
	if (task->prologue_callback_pop_arg_free) {
		free(task->prologue_callback_pop_arg);
		task->prologue_callback_pop_arg = NULL;
	}
	/* Rarely set: tested together, so that a task without them calls nothing. */
	if (STARPU_UNLIKELY(((uintptr_t)task->dyn_handles | (uintptr_t)task->dyn_interfaces | (uintptr_t)task->dyn_modes) != 0)) {
		free(task->dyn_handles);
		free(task->dyn_interfaces);
		free(task->dyn_modes);
		task->dyn_handles = NULL;
		task->dyn_interfaces = NULL;
		task->dyn_modes = NULL;
	}
	profiling_info_free(task);
	if (task->use_tag)
		_astro_tag_forget_task(task->starpu_private, task);
	_astro_job_free(task->starpu_private);
	task->starpu_private = NULL;
}

void starpu_task_clean(struct starpu_task *task)
{
	if (!task)
		return;
	struct _astro_job *job = task->starpu_private;
	if (job && job->submitted) {
		_astro_error("starpu_task_clean: task '%s' is still running: wait for it first",
			     task_label(task));
		return;
	}
	task_free_owned(task);
}

void starpu_task_destroy(struct starpu_task *task)
{
	if (!task)
		return;
	struct _astro_job *job = task->starpu_private;
	if (job && task->detach) {
		/* Submitted and not complete: its completion frees it (the exchange there sees JOB_DESTROY);
		 * complete (JOB_DONE) or never submitted: it is ours to free. */
		int running = JOB_RUNNING;
		if (!job_never_submitted(job) &&
		    (__atomic_compare_exchange_n(&job->done, &running, JOB_DESTROY, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
		     running == JOB_DESTROY))
			return;
	} else if (job && __atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE) &&
		   __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) != JOB_DONE) {
		/* Still running: it is freed when it completes. */
		__atomic_store_n(&job->destroy_requested, true, __ATOMIC_RELEASE);
		return;
	}
	task_delete(task);
}

void starpu_task_free(struct starpu_task *task)
{
	starpu_task_destroy(task);
}

struct starpu_task *starpu_task_dup(struct starpu_task *task)
{
	struct starpu_task *copy = malloc(sizeof(*copy));
	*copy = *task;
	/* A copy for a member of a parallel task (starpu_parallel_task_barrier_init()) shares its job;
	 * the runtime frees it when a worker takes it (sched/parallel.c frees what is given here). */
	copy->starpu_private = _astro_parallel_alias_job(task);
	copy->prev = copy->next = NULL;
	copy->bundle = NULL; /* the copy is in no bundle */
	copy->status = STARPU_TASK_INIT;
	copy->profiling_info = NULL;
	copy->destroy = 1;
	if (task->cl_arg_free && task->cl_arg) {
		copy->cl_arg = malloc(task->cl_arg_size);
		memcpy(copy->cl_arg, task->cl_arg, task->cl_arg_size);
	}
	copy->callback_arg_free = 0;
	copy->prologue_callback_arg_free = 0;
	copy->prologue_callback_pop_arg_free = 0;
	unsigned n = _astro_task_nbuffers(task);
	if (task->dyn_handles) {
		copy->dyn_handles = malloc(n * sizeof(starpu_data_handle_t));
		memcpy(copy->dyn_handles, task->dyn_handles, n * sizeof(starpu_data_handle_t));
		copy->dyn_interfaces = NULL;
	}
	if (task->dyn_modes) {
		copy->dyn_modes = malloc(n * sizeof(enum starpu_data_access_mode));
		memcpy(copy->dyn_modes, task->dyn_modes, n * sizeof(enum starpu_data_access_mode));
	}
	return copy;
}

void starpu_task_set_implementation(struct starpu_task *task, unsigned impl)
{
	struct _astro_job *job = _astro_job_get(task);
	job->nimpl = impl;
	job->impl_chosen = impl < STARPU_MAXIMPLEMENTATIONS;
}

unsigned starpu_task_get_implementation(struct starpu_task *task)
{
	return _astro_job_get(task)->nimpl;
}

unsigned long starpu_task_get_job_id(struct starpu_task *task)
{
	return task ? _astro_job_get(task)->id : 0;
}

enum starpu_task_status starpu_task_get_status(struct starpu_task *task)
{
	return task->status;
}

void starpu_task_print(struct starpu_task *task)
{
	if (!task) {
		fprintf(stderr, "NULL task\n");
		return;
	}
	fprintf(stderr, "task %p: name '%s', job %lu, status %d, priority %d, %u buffers, detach %u, destroy %u\n",
		(void *)task, starpu_task_get_name(task) ? starpu_task_get_name(task) : "", starpu_task_get_job_id(task),
		task->status, task->priority, _astro_task_nbuffers(task), task->detach, task->destroy);
}

void starpu_task_set_destroy(struct starpu_task *task)
{
	if (!task) {
		_astro_error("starpu_task_set_destroy: NULL task");
		return;
	}
	struct _astro_job *job = task->starpu_private;
	if (!job || job_never_submitted(job))
		task->destroy = 1;
	else
		starpu_task_destroy(task); /* running: freed when it completes; complete: now */
}
