/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The framework's life and the StarPU 1.4 calls that act on it: the kernel
 * hooks (starpu_init() opens the registry and lets the runtime's counter
 * modules register, then makes the samples; starpu_shutdown() takes it all
 * down), collection start and stop, listeners set on and unset from the
 * samples, and the per-codelet monitors behind cl->perf_counter_sample.
 * The top of the framework: it uses the others (framework.h says their
 * order) and nothing of it calls this file but the kernel.
 */
#include "framework.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The per-codelet state behind cl->perf_counter_sample / cl->perf_counter_values.
 * Kept until starpu_shutdown() once detached, since a worker may still hold it;
 * kept across runs while a codelet still points at it. */
struct codelet_monitor
{
	struct starpu_perf_counter_sample_cl_values values; /* first: cache-line aligned */
	struct starpu_perf_counter_sample sample;
	struct starpu_codelet *cl;
	bool attached;
	struct codelet_monitor *next;
};


static starpu_pthread_mutex_t attach_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_mutex_t collect_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* per-codelet monitors (attach_lock) */
static struct codelet_monitor *monitors;

/* collection (collect_lock; astro_counters_active and _astro_counters_since
 * are in registry.c, read by the modules and the plugins) */
static int collect_depth = 1;
static bool collect_explicit;

/* ------------------------------------------------------- kernel hooks */

void _astro_counters_init(void)
{
	_astro_counters_registry_open();

	starpu_pthread_mutex_lock(&collect_lock);
	collect_depth = 1;
	collect_explicit = false;
	__atomic_store_n(&astro_counters_active, 0, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&collect_lock);

	_astro_task_counters_register();
	_astro_mpi_counters_register();
}

static void collect_apply_locked(void)
{
	bool on = collect_depth <= 0 && _astro_counters_state() == REGISTRY_RUNNING;
	if (on == (__atomic_load_n(&astro_counters_active, __ATOMIC_RELAXED) != 0))
		return;
	if (on)
		astro_counter_store_double(&_astro_counters_since, starpu_timing_now());
	__atomic_store_n(&astro_counters_active, on, __ATOMIC_RELEASE);
	_astro_task_counters_collect(on);
	_astro_mpi_counters_collect(on);
}

void _astro_counters_start(int start_collection)
{
	_astro_counters_registry_freeze();

	starpu_pthread_mutex_lock(&attach_lock);
	_astro_counters_samples_make(starpu_worker_get_count());
	/* Codelets still pointing at a monitor from an earlier run: fresh values, this run's counters. */
	for (struct codelet_monitor *m = monitors; m; m = m->next) {
		_astro_counters_sample_fini(&m->sample);
		_astro_counters_sample_init(&m->sample, starpu_perf_counter_scope_per_codelet, _astro_counters_nfrozen[2], m->cl);
		memset(&m->values, 0, sizeof(m->values));
	}
	starpu_pthread_mutex_unlock(&attach_lock);

	_astro_counters_registry_run();

	starpu_pthread_mutex_lock(&collect_lock);
	if (start_collection) {
		collect_depth--;
		collect_explicit = true;
	}
	collect_apply_locked();
	starpu_pthread_mutex_unlock(&collect_lock);
}

void _astro_counters_shutdown(void)
{
	/* Closed first: calls racing with the teardown are refused rather than served half. */
	_astro_counters_registry_close();

	starpu_pthread_mutex_lock(&collect_lock);
	if (__atomic_load_n(&astro_counters_active, __ATOMIC_RELAXED)) {
		_astro_task_counters_collect(false);
		_astro_mpi_counters_collect(false);
	}
	__atomic_store_n(&astro_counters_active, 0, __ATOMIC_RELEASE);
	_astro_task_counters_shutdown();
	_astro_mpi_counters_shutdown();
	starpu_pthread_mutex_unlock(&collect_lock);

	starpu_pthread_mutex_lock(&attach_lock);
	_astro_counters_samples_drop();
	struct codelet_monitor **link = &monitors;
	while (*link) {
		struct codelet_monitor *m = *link;
		if (m->sample.magic == SAMPLE_MAGIC)
			_astro_counters_sample_attach(&m->sample, NULL);
		if (m->attached) {
			link = &m->next;
			continue;
		}
		*link = m->next;
		_astro_counters_sample_fini(&m->sample);
		free(m);
	}
	starpu_pthread_mutex_unlock(&attach_lock);

	_astro_counters_registry_drop();
}

/* --------------------------------------------------------- collection */

static bool collection_call_allowed(const char *what)
{
	enum registry_state state = _astro_counters_state();
	if (state == REGISTRY_CLOSED) {
		astro_log_error(what, "the runtime is not running: call it between starpu_init() and starpu_shutdown() "
				"(or set starpu_conf.start_perf_counter_collection)");
		return false;
	}
	return true;
}

void starpu_perf_counter_collection_start(void)
{
	if (!collection_call_allowed("starpu_perf_counter_collection_start"))
		return;
	starpu_pthread_mutex_lock(&collect_lock);
	collect_depth--;
	collect_explicit = true;
	collect_apply_locked();
	starpu_pthread_mutex_unlock(&collect_lock);
}

void starpu_perf_counter_collection_stop(void)
{
	if (!collection_call_allowed("starpu_perf_counter_collection_stop"))
		return;
	starpu_pthread_mutex_lock(&collect_lock);
	collect_depth++;
	collect_explicit = true;
	collect_apply_locked();
	starpu_pthread_mutex_unlock(&collect_lock);
}

/* Setting a listener in a program that never asked for collection starts it:
 * the seeds promise reports once a listener is set. */
static void collection_start_implicitly(void)
{
	starpu_pthread_mutex_lock(&collect_lock);
	if (!collect_explicit) {
		collect_explicit = true;
		collect_depth--;
		collect_apply_locked();
	}
	starpu_pthread_mutex_unlock(&collect_lock);
}

/* attach_lock held: detaches listener from every sample that uses it. */
static void listener_detach_everywhere(struct starpu_perf_counter_listener *listener)
{
	if (_astro_counters_global_sample.magic == SAMPLE_MAGIC && _astro_counters_global_sample.listener == listener)
		_astro_counters_sample_attach(&_astro_counters_global_sample, NULL);
	for (unsigned w = 0; w < _astro_counters_nworker_samples; w++)
		if (_astro_counters_worker_samples[w].listener == listener)
			_astro_counters_sample_attach(&_astro_counters_worker_samples[w], NULL);
	for (struct codelet_monitor *m = monitors; m; m = m->next)
		if (m->sample.magic == SAMPLE_MAGIC && m->sample.listener == listener)
			_astro_counters_sample_attach(&m->sample, NULL);
	listener->nattached = 0;
}

void starpu_perf_counter_listener_exit(struct starpu_perf_counter_listener *listener)
{
	const char *what = "starpu_perf_counter_listener_exit";
	if (!listener || _astro_counters_in_callback(what))
		return;
	/* attach_lock keeps it alive meanwhile: every exit and attach takes it. */
	starpu_pthread_mutex_lock(&attach_lock);
	if (_astro_counters_listener_usable(what, listener)) {
		if (listener->nattached > 0) {
			astro_log_error(what, "listener %p is still set on %d sample(s): unsetting it there first (unset listeners before exiting them)",
					(void *)listener, listener->nattached);
			listener_detach_everywhere(listener);
		}
		_astro_counters_listener_free(listener);
	}
	starpu_pthread_mutex_unlock(&attach_lock);
}

/* attach_lock held: checks listener may go on a sample of scope. */
static const char *right_call_for(enum starpu_perf_counter_scope scope);

static bool attach_allowed(const char *what, struct starpu_perf_counter_listener *listener, enum starpu_perf_counter_scope scope)
{
	if (_astro_counters_state() != REGISTRY_RUNNING) {
		astro_log_error(what, "the runtime is not running: set listeners between starpu_init() and starpu_shutdown()");
		return false;
	}
	if (!_astro_counters_listener_usable(what, listener))
		return false;
	if (listener->set->scope != scope) {
		astro_log_error(what, "listener %p reports a set of scope %s, not %s: use %s",
				(void *)listener, _astro_counters_scope_name(listener->set->scope), _astro_counters_scope_name(scope), right_call_for(listener->set->scope));
		return false;
	}
	if (listener->set->generation != _astro_counters_generation()) {
		astro_log_error(what, "listener %p was made before the last starpu_shutdown(): make a new set and listener", (void *)listener);
		return false;
	}
	return true;
}

static const char *right_call_for(enum starpu_perf_counter_scope scope)
{
	switch (scope) {
	case starpu_perf_counter_scope_global: return "starpu_perf_counter_set_global_listener()";
	case starpu_perf_counter_scope_per_worker: return "starpu_perf_counter_set_per_worker_listener()";
	default: return "starpu_perf_counter_set_per_codelet_listener()";
	}
}

void starpu_perf_counter_set_global_listener(struct starpu_perf_counter_listener *listener)
{
	const char *what = "starpu_perf_counter_set_global_listener";
	if (_astro_counters_in_callback(what))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	bool ok = attach_allowed(what, listener, starpu_perf_counter_scope_global);
	if (ok)
		_astro_counters_sample_attach(&_astro_counters_global_sample, listener);
	starpu_pthread_mutex_unlock(&attach_lock);
	if (ok)
		collection_start_implicitly();
}

static bool worker_in_range(const char *what, unsigned workerid)
{
	if (workerid < _astro_counters_nworker_samples)
		return true;
	astro_log_error(what, "worker %u does not exist: worker ids go from 0 to %u (starpu_worker_get_count() - 1)",
			workerid, _astro_counters_nworker_samples ? _astro_counters_nworker_samples - 1 : 0);
	return false;
}

void starpu_perf_counter_set_per_worker_listener(unsigned workerid, struct starpu_perf_counter_listener *listener)
{
	const char *what = "starpu_perf_counter_set_per_worker_listener";
	if (_astro_counters_in_callback(what))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	bool ok = attach_allowed(what, listener, starpu_perf_counter_scope_per_worker)
		  && worker_in_range(what, workerid);
	if (ok)
		_astro_counters_sample_attach(&_astro_counters_worker_samples[workerid], listener);
	starpu_pthread_mutex_unlock(&attach_lock);
	if (ok)
		collection_start_implicitly();
}

void starpu_perf_counter_set_all_per_worker_listeners(struct starpu_perf_counter_listener *listener)
{
	const char *what = "starpu_perf_counter_set_all_per_worker_listeners";
	if (_astro_counters_in_callback(what))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	bool ok = attach_allowed(what, listener, starpu_perf_counter_scope_per_worker);
	if (ok)
		for (unsigned w = 0; w < _astro_counters_nworker_samples; w++)
			_astro_counters_sample_attach(&_astro_counters_worker_samples[w], listener);
	starpu_pthread_mutex_unlock(&attach_lock);
	if (ok)
		collection_start_implicitly();
}

/* attach_lock held: cl's monitor from this runtime, or NULL. */
static struct codelet_monitor *monitor_of(struct starpu_codelet *cl)
{
	struct starpu_perf_counter_sample *s = __atomic_load_n(&cl->perf_counter_sample, __ATOMIC_ACQUIRE);
	if (!s)
		return NULL;
	for (struct codelet_monitor *m = monitors; m; m = m->next)
		if (&m->sample == s && m->cl == cl && m->attached)
			return m;
	return NULL;
}

static const char *codelet_label(const struct starpu_codelet *cl)
{
	return cl->name ? cl->name : "(unnamed)";
}

void starpu_perf_counter_set_per_codelet_listener(struct starpu_codelet *cl, struct starpu_perf_counter_listener *listener)
{
	const char *what = "starpu_perf_counter_set_per_codelet_listener";
	if (_astro_counters_in_callback(what))
		return;
	if (!cl) {
		astro_log_error(what, "NULL codelet: pass the codelet whose tasks to monitor");
		return;
	}
	starpu_pthread_mutex_lock(&attach_lock);
	bool ok = attach_allowed(what, listener, starpu_perf_counter_scope_per_codelet);
	if (!ok)
		goto out;
	struct codelet_monitor *m = monitor_of(cl);
	if (!m) {
		/* Pointers we did not make (a copied codelet) are replaced, never followed. */
		size_t size = (sizeof(*m) + 63) / 64 * 64;
		m = aligned_alloc(64, size);
		if (!m) {
			astro_log_error(what, "out of memory");
			ok = false;
			goto out;
		}
		memset(m, 0, sizeof(*m));
		_astro_counters_sample_init(&m->sample, starpu_perf_counter_scope_per_codelet, _astro_counters_nfrozen[2], cl);
		m->cl = cl;
		m->attached = true;
		m->next = monitors;
		monitors = m;
		_astro_counters_sample_attach(&m->sample, listener);
		__atomic_store_n(&cl->perf_counter_sample, &m->sample, __ATOMIC_RELEASE);
		__atomic_store_n(&cl->perf_counter_values, &m->values, __ATOMIC_RELEASE);
	} else {
		_astro_counters_sample_attach(&m->sample, listener);
	}
out:
	starpu_pthread_mutex_unlock(&attach_lock);
	if (ok)
		collection_start_implicitly();
}

void starpu_perf_counter_unset_global_listener(void)
{
	const char *what = "starpu_perf_counter_unset_global_listener";
	if (_astro_counters_in_callback(what))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	if (_astro_counters_global_sample.magic != SAMPLE_MAGIC)
		astro_log_error(what, "the runtime is not running: nothing to unset");
	else if (!_astro_counters_global_sample.listener)
		astro_log_error(what, "no listener is set on the global sample: nothing to unset");
	else
		_astro_counters_sample_attach(&_astro_counters_global_sample, NULL);
	starpu_pthread_mutex_unlock(&attach_lock);
}

void starpu_perf_counter_unset_per_worker_listener(unsigned workerid)
{
	const char *what = "starpu_perf_counter_unset_per_worker_listener";
	if (_astro_counters_in_callback(what))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	if (worker_in_range(what, workerid)) {
		if (!_astro_counters_worker_samples[workerid].listener)
			astro_log_error(what, "no listener is set on worker %u: nothing to unset", workerid);
		else
			_astro_counters_sample_attach(&_astro_counters_worker_samples[workerid], NULL);
	}
	starpu_pthread_mutex_unlock(&attach_lock);
}

void starpu_perf_counter_unset_all_per_worker_listeners(void)
{
	if (_astro_counters_in_callback("starpu_perf_counter_unset_all_per_worker_listeners"))
		return;
	starpu_pthread_mutex_lock(&attach_lock);
	for (unsigned w = 0; w < _astro_counters_nworker_samples; w++)
		if (_astro_counters_worker_samples[w].listener)
			_astro_counters_sample_attach(&_astro_counters_worker_samples[w], NULL);
	starpu_pthread_mutex_unlock(&attach_lock);
}

void starpu_perf_counter_unset_per_codelet_listener(struct starpu_codelet *cl)
{
	const char *what = "starpu_perf_counter_unset_per_codelet_listener";
	if (_astro_counters_in_callback(what))
		return;
	if (!cl) {
		astro_log_error(what, "NULL codelet: pass the codelet given to starpu_perf_counter_set_per_codelet_listener()");
		return;
	}
	starpu_pthread_mutex_lock(&attach_lock);
	struct codelet_monitor *m = monitor_of(cl);
	if (!m) {
		astro_log_error(what, "codelet '%s' has no listener: nothing to unset", codelet_label(cl));
	} else {
		_astro_counters_sample_attach(&m->sample, NULL);
		__atomic_store_n(&cl->perf_counter_values, NULL, __ATOMIC_RELEASE);
		__atomic_store_n(&cl->perf_counter_sample, NULL, __ATOMIC_RELEASE);
		m->attached = false;
	}
	starpu_pthread_mutex_unlock(&attach_lock);
}

int astro_counter_foreach_codelet(void (*fn)(struct starpu_codelet *cl, void *arg), void *arg)
{
	if (!fn) {
		astro_log_error("astro_counter_foreach_codelet", "NULL function: pass the function to call for each codelet");
		return -EINVAL;
	}
	if (_astro_counters_in_callback("astro_counter_foreach_codelet"))
		return -EDEADLK;
	int n = 0;
	starpu_pthread_mutex_lock(&attach_lock);
	for (struct codelet_monitor *m = monitors; m; m = m->next)
		if (m->attached) {
			fn(m->cl, arg);
			n++;
		}
	starpu_pthread_mutex_unlock(&attach_lock);
	return n;
}
