/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The driver API (starpu_driver.h): workers named in
 * starpu_conf.not_launched_drivers get no thread of the runtime; the
 * application runs their scheduling loop on a thread of its own, with
 * starpu_driver_run() or round by round with starpu_driver_run_once().
 *
 * Each such worker has a state here. The runtime's own workers never look
 * at it: the task path is the same loop (worker.c's round), entered from
 * the application's thread. Shutdown waits for a loop in progress to leave
 * before it frees the worker (_astro_drivers_wait_out).
 */
#include "run/run.h"
#include <starpu_driver.h>

enum app_state
{
	APP_NONE = 0,    /* the runtime runs the worker (or no such worker) */
	APP_DOWN,        /* the application runs it; not initialised */
	APP_READY,       /* starpu_driver_init() done */
	APP_IN_ROUND,    /* a thread is in starpu_driver_run_once() */
};

static struct
{
	int state;                           /* atomic: an enum app_state */
	int in_run;                          /* atomic: inside starpu_driver_run() */
	unsigned idle[2];                    /* the loop's idle counts, kept between rounds */
} app[STARPU_NMAXWORKERS];

static int terminate_requested;          /* atomic: starpu_drivers_request_termination() */
static bool (*opencl_names)(const struct starpu_driver *driver, int devid); /* atomic */

void _astro_driver_api_set_opencl_matcher(bool (*names)(const struct starpu_driver *driver, int devid))
{
	__atomic_store_n(&opencl_names, names, __ATOMIC_RELEASE);
}

static const char *kind_name(enum starpu_worker_archtype type)
{
	return starpu_worker_get_type_as_string(type);
}

/* Does driver d name worker w? */
static bool names_worker(const struct starpu_driver *d, const struct _astro_worker *w)
{
	if (d->type != w->arch)
		return false;
	switch (d->type) {
	case STARPU_CPU_WORKER:
		return w->devid == (int)d->id.cpu_id;
	case STARPU_CUDA_WORKER:
		return w->devid == (int)d->id.cuda_id;
	case STARPU_OPENCL_WORKER: {
		bool (*names)(const struct starpu_driver *, int) = __atomic_load_n(&opencl_names, __ATOMIC_ACQUIRE);
		return names && names(d, w->devid);
	}
	default:
		return false;
	}
}

static bool supported_kind(enum starpu_worker_archtype type)
{
	return type == STARPU_CPU_WORKER || type == STARPU_CUDA_WORKER
#ifdef STARPU_USE_OPENCL
	       || type == STARPU_OPENCL_WORKER
#endif
		;
}

/* How driver d appears in messages. */
static void describe(const struct starpu_driver *d, char *buf, size_t size)
{
	if (d->type == STARPU_OPENCL_WORKER)
		snprintf(buf, size, "the OpenCL driver of the given cl_device_id");
	else
		snprintf(buf, size, "the %s driver %u", kind_name(d->type), d->id.cpu_id);
}

int _astro_drivers_mark_not_launched(void)
{
	const struct starpu_conf *conf = &_astro_rt.conf;
	int n = 0;

	__atomic_store_n(&terminate_requested, 0, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < STARPU_NMAXWORKERS; i++) {
		app[i].state = APP_NONE;
		app[i].in_run = 0;
	}
	if (conf->n_not_launched_drivers == 0)
		return 0;
	if (!conf->not_launched_drivers) {
		_astro_error("starpu_conf.n_not_launched_drivers is %u but not_launched_drivers is NULL: every worker runs "
			     "on a thread of the runtime; give an array of that many struct starpu_driver",
			     conf->n_not_launched_drivers);
		return 0;
	}
	for (unsigned k = 0; k < conf->n_not_launched_drivers; k++) {
		const struct starpu_driver *d = &conf->not_launched_drivers[k];
		char what[80];
		describe(d, what, sizeof(what));
		if (!supported_kind(d->type)) {
			_astro_error("starpu_conf.not_launched_drivers[%u]: kind %d cannot be run by the application "
				     "(CPU, CUDA or OpenCL): ignored", k, (int)d->type);
			continue;
		}
		bool found = false;
		for (unsigned i = 0; i < _astro_rt.nworkers && !found; i++) {
			if (!names_worker(d, _astro_rt.workers[i]))
				continue;
			found = true;
			if (app[i].state == APP_NONE) {
				app[i].state = APP_DOWN;
				n++;
			}
		}
		if (!found)
			_astro_warn("starpu_conf.not_launched_drivers[%u] names %s, but no such worker starts: ignored", k, what);
	}
	return n;
}

bool _astro_driver_not_launched(int workerid)
{
	return __atomic_load_n(&app[workerid].state, __ATOMIC_SEQ_CST) != APP_NONE;
}

void _astro_drivers_wait_out(void)
{
	for (unsigned i = 0; i < _astro_rt.nworkers; i++) {
		if (__atomic_load_n(&app[i].state, __ATOMIC_SEQ_CST) == APP_NONE)
			continue;
		/* running is 0 now: a loop ends after its round; a sleeping one was woken. */
		for (unsigned round = 0; __atomic_load_n(&app[i].in_run, __ATOMIC_SEQ_CST) ||
					 __atomic_load_n(&app[i].state, __ATOMIC_SEQ_CST) == APP_IN_ROUND; round++) {
			_astro_worker_wake(_astro_rt.workers[i]);
			_astro_relax(round);
		}
	}
}

/* The worker d names, run by the application, in state want (else -EINVAL and one message). */
static int find(const char *call, const struct starpu_driver *d, int want, struct _astro_worker **out)
{
	if (!d) {
		_astro_error("%s: the driver is NULL: give the struct starpu_driver named in starpu_conf.not_launched_drivers", call);
		return -EINVAL;
	}
	if (!_astro_running()) {
		_astro_error("%s: StarPU is not initialised: call starpu_init() first, with the driver in "
			     "starpu_conf.not_launched_drivers", call);
		return -EINVAL;
	}
	char what[80];
	describe(d, what, sizeof(what));
	if (!supported_kind(d->type)) {
		_astro_error("%s: kind %d cannot be run by the application (STARPU_CPU_WORKER, STARPU_CUDA_WORKER or "
			     "STARPU_OPENCL_WORKER)", call, (int)d->type);
		return -EINVAL;
	}
	for (unsigned i = 0; i < _astro_rt.nworkers; i++) {
		struct _astro_worker *w = _astro_rt.workers[i];
		if (!names_worker(d, w))
			continue;
		int state = __atomic_load_n(&app[i].state, __ATOMIC_SEQ_CST);
		if (state == APP_NONE) {
			_astro_error("%s: %s (%s) runs on a thread of the runtime: name it in starpu_conf.not_launched_drivers "
				     "to run it yourself", call, what, w->name);
			return -EINVAL;
		}
		if (state != want) {
			_astro_error("%s: %s (%s) is %s", call, what, w->name,
				     state == APP_DOWN ? "not initialised: call starpu_driver_init() first"
				     : state == APP_READY ? "initialised already: call starpu_driver_deinit() before initialising it again"
				     : "in starpu_driver_run_once() on another thread: one thread runs a worker at a time");
			return -EINVAL;
		}
		*out = w;
		return 0;
	}
	_astro_error("%s: %s names no worker of this run (it has %d %s workers): check its id", call, what,
		     starpu_worker_get_count_by_type(d->type), kind_name(d->type));
	return -EINVAL;
}

int starpu_driver_init(struct starpu_driver *d)
{
	struct _astro_worker *w;
	int ret = _astro_forbid_blocking("starpu_driver_init", "run a driver from a thread of the application");
	if (ret)
		return ret;
	if ((ret = find("starpu_driver_init", d, APP_DOWN, &w)) != 0)
		return ret;
	app[w->id].idle[0] = 0;
	app[w->id].idle[1] = 1;
	_astro_worker_thread_begin(w);
	_astro_self = NULL;
	__atomic_store_n(&app[w->id].state, APP_READY, __ATOMIC_SEQ_CST);
	return 0;
}

int starpu_driver_run_once(struct starpu_driver *d)
{
	struct _astro_worker *w;
	int ret = _astro_forbid_blocking("starpu_driver_run_once", "run a driver from a thread of the application");
	if (ret)
		return ret;
	if ((ret = find("starpu_driver_run_once", d, APP_READY, &w)) != 0)
		return ret;
	int ready = APP_READY;
	if (!__atomic_compare_exchange_n(&app[w->id].state, &ready, APP_IN_ROUND, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		_astro_error("starpu_driver_run_once: %s is in starpu_driver_run_once() on another thread: one thread runs a "
			     "worker at a time", w->name);
		return -EINVAL;
	}
	_astro_self = w;
	_astro_worker_round(w, app[w->id].idle);
	_astro_self = NULL;
	__atomic_store_n(&app[w->id].state, APP_READY, __ATOMIC_SEQ_CST);
	return 0;
}

int starpu_driver_deinit(struct starpu_driver *d)
{
	struct _astro_worker *w;
	int ret = find("starpu_driver_deinit", d, APP_READY, &w);
	if (ret)
		return ret;
	_astro_self = w;
	_astro_worker_thread_end(w);
	__atomic_store_n(&app[w->id].state, APP_DOWN, __ATOMIC_SEQ_CST);
	return 0;
}

int starpu_driver_run(struct starpu_driver *d)
{
	int ret = starpu_driver_init(d);
	if (ret)
		return ret;
	struct _astro_worker *w = NULL;
	for (unsigned i = 0; i < _astro_rt.nworkers && !w; i++)
		if (names_worker(d, _astro_rt.workers[i]))
			w = _astro_rt.workers[i];
	__atomic_store_n(&app[w->id].in_run, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&_astro_rt.running, __ATOMIC_SEQ_CST)) {
		if (__atomic_load_n(&terminate_requested, __ATOMIC_SEQ_CST)) {
			if (starpu_task_nsubmitted() == 0)
				break;
			/* Tasks are left: serve them without sleeping, since no wake-up comes when the last ends elsewhere. */
			app[w->id].idle[0] = 0;
		}
		/* The checks of find() were made: run the round directly. */
		int ready = APP_READY;
		if (!__atomic_compare_exchange_n(&app[w->id].state, &ready, APP_IN_ROUND, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			break;
		_astro_self = w;
		_astro_worker_round(w, app[w->id].idle);
		_astro_self = NULL;
		__atomic_store_n(&app[w->id].state, APP_READY, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&terminate_requested, __ATOMIC_SEQ_CST))
			_astro_relax(8);
	}
	_astro_self = w;
	_astro_worker_thread_end(w);
	__atomic_store_n(&app[w->id].state, APP_DOWN, __ATOMIC_SEQ_CST);
	__atomic_store_n(&app[w->id].in_run, 0, __ATOMIC_SEQ_CST);
	return 0;
}

void starpu_drivers_request_termination(void)
{
	__atomic_store_n(&terminate_requested, 1, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		if (__atomic_load_n(&app[i].state, __ATOMIC_SEQ_CST) != APP_NONE)
			_astro_worker_wake(_astro_rt.workers[i]);
}
