/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Samples: what a listener receives, one per scope's context (the global
 * sample, one per worker, one per monitored codelet). Their lock, their
 * refresh on the task path (the updaters fill a sample lazily, as the
 * callback reads it, then the listener runs), the typed getters a callback
 * reads it with, the setters updaters fill it with, and direct reads of a
 * counter outside any listener (astro_counter_read). Uses registry.c.
 */
#include "framework.h"
#include <errno.h>
#include <float.h>
#include <math.h>
#include <astrolabe/thread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TLS ASTRO_THREAD_LOCAL_IE

/* The global and per-worker samples (attach_lock, perf_counters.c) */
struct starpu_perf_counter_sample _astro_counters_global_sample;
struct starpu_perf_counter_sample _astro_counters_worker_samples[STARPU_NMAXWORKERS];
static int worker_ids[STARPU_NMAXWORKERS];
unsigned _astro_counters_nworker_samples;

/* The sample whose listener this thread is running, if any. */
static TLS struct starpu_perf_counter_sample *current_sample;

bool _astro_counters_in_callback(const char *what)
{
	if (!current_sample)
		return false;
	astro_log_error(what, "called from a listener callback, which runs with its sample locked: call it outside the callback");
	return true;
}

bool _astro_counters_listener_running(const struct starpu_perf_counter_listener *listener)
{
	return listener && current_sample && current_sample->listener == listener;
}

/* ----------------------------------------------------------- samples */

int _astro_counters_sample_init(struct starpu_perf_counter_sample *s, enum starpu_perf_counter_scope scope, int n, void *context)
{
	s->magic = SAMPLE_MAGIC;
	s->scope = scope;
	s->listener = NULL;
	s->context = context;
	s->n = n;
	s->values = calloc(n > 0 ? n : 1, sizeof(*s->values));
	s->enabled = calloc(n > 0 ? n : 1, 1);
	int nupdaters = _astro_counters_nfrozen_updaters[_astro_counters_scope_index(scope)];
	s->updated_refresh = calloc(nupdaters > 0 ? nupdaters : 1, sizeof(*s->updated_refresh));
	s->refresh = s->enabled_refresh = 0;
	s->busy = false;
	return s->values && s->enabled && s->updated_refresh ? 0 : -ENOMEM;
}

void _astro_counters_sample_fini(struct starpu_perf_counter_sample *s)
{
	if (s->magic != SAMPLE_MAGIC)
		return;
	free(s->values);
	free(s->enabled);
	free(s->updated_refresh);
	s->values = NULL;
	s->enabled = NULL;
	s->updated_refresh = NULL;
	s->magic = DEAD_MAGIC;
}

/* A sample's lock, taken at every refresh: one atomic exchange to take it and
 * a store to give it back, where a mutex costs two atomic operations and two
 * calls. Held for one listener callback: a thread that finds it taken spins
 * a little (sample_wait), then yields until it is free. */
static void __attribute__((noinline)) sample_wait(struct starpu_perf_counter_sample *s)
{
	unsigned spins = 0;
	do {
		while (__atomic_load_n(&s->busy, __ATOMIC_RELAXED)) {
			if (spins++ < 64) {
#if defined(__x86_64__) || defined(__i386__)
				__builtin_ia32_pause();
#endif
			} else {
				astro_thread_yield();
			}
		}
	} while (__atomic_exchange_n(&s->busy, true, __ATOMIC_ACQUIRE));
}

static inline void sample_lock(struct starpu_perf_counter_sample *s)
{
	if (STARPU_UNLIKELY(__atomic_exchange_n(&s->busy, true, __ATOMIC_ACQUIRE)))
		sample_wait(s);
}

static void sample_unlock(struct starpu_perf_counter_sample *s)
{
	__atomic_store_n(&s->busy, false, __ATOMIC_RELEASE);
}

void _astro_counters_sample_attach(struct starpu_perf_counter_sample *s, struct starpu_perf_counter_listener *listener)
{
	sample_lock(s);
	struct starpu_perf_counter_listener *old = s->listener;
	__atomic_store_n(&s->listener, listener, __ATOMIC_RELEASE);
	sample_unlock(s);
	if (old)
		old->nattached--;
	if (listener)
		listener->nattached++;
}

/* Makes c's value in s current for this refresh (s->busy held): the updaters
 * fill the sample lazily, as the callback reads it. Each counter has at most
 * one updater, its module's ("one updater per module and scope"). */
static void sample_fill(struct starpu_perf_counter_sample *s, const struct counter *c)
{
	if (s->enabled_refresh != s->refresh) {
		const unsigned char *enabled = s->listener->set->enabled;
		for (int i = 0; i < s->n; i++)
			s->enabled[i] = __atomic_load_n(&enabled[i], __ATOMIC_RELAXED);
		s->enabled_refresh = s->refresh;
	}
	if (c->updater >= 0 && s->updated_refresh[c->updater] != s->refresh) {
		s->updated_refresh[c->updater] = s->refresh;
		const struct updater *u = _astro_counters_frozen_updaters[_astro_counters_scope_index(s->scope)][c->updater];
		u->fn(s, s->context, u->arg);
	}
}

/* Calls the listener of s, if it has one, with a fresh sample. The path of every refresh. */
static void sample_refresh(struct starpu_perf_counter_sample *s)
{
	if (!__atomic_load_n(&s->listener, __ATOMIC_ACQUIRE) || current_sample)
		return;
	sample_lock(s);
	struct starpu_perf_counter_listener *listener = s->listener;
	if (listener) {
		s->refresh++;
		current_sample = s;
		/* The kernel refuses blocking calls from a listener (common/context.c). */
		enum _astro_call_context previous = _astro_context_enter(_ASTRO_CTX_LISTENER);
		listener->callback(listener, s, s->context);
		_astro_context_leave(previous);
		current_sample = NULL;
	}
	sample_unlock(s);
}

void _astro_counters_refresh_global(void)
{
	sample_refresh(&_astro_counters_global_sample);
}

void _astro_counters_refresh_worker(int workerid)
{
	if (workerid >= 0 && (unsigned)workerid < _astro_counters_nworker_samples)
		sample_refresh(&_astro_counters_worker_samples[workerid]);
}

void _astro_counters_refresh_codelet(struct starpu_codelet *cl)
{
	struct starpu_perf_counter_sample *s = __atomic_load_n(&cl->perf_counter_sample, __ATOMIC_ACQUIRE);
	if (s)
		sample_refresh(s);
}

void _astro_counters_samples_make(unsigned nworkers)
{
	_astro_counters_sample_init(&_astro_counters_global_sample, starpu_perf_counter_scope_global, _astro_counters_nfrozen[0], NULL);
	_astro_counters_nworker_samples = nworkers;
	for (unsigned w = 0; w < nworkers; w++) {
		worker_ids[w] = (int)w;
		_astro_counters_sample_init(&_astro_counters_worker_samples[w], starpu_perf_counter_scope_per_worker, _astro_counters_nfrozen[1], &worker_ids[w]);
	}
}

void _astro_counters_samples_drop(void)
{
	if (_astro_counters_global_sample.magic == SAMPLE_MAGIC) {
		_astro_counters_sample_attach(&_astro_counters_global_sample, NULL);
		_astro_counters_sample_fini(&_astro_counters_global_sample);
	}
	for (unsigned w = 0; w < _astro_counters_nworker_samples; w++) {
		_astro_counters_sample_attach(&_astro_counters_worker_samples[w], NULL);
		_astro_counters_sample_fini(&_astro_counters_worker_samples[w]);
	}
	_astro_counters_nworker_samples = 0;
}

/* ------------------------------------------------------ sample values */

enum getter { GET_INT32, GET_INT64, GET_FLOAT, GET_DOUBLE };

static const enum starpu_perf_counter_type getter_type[] = {
	starpu_perf_counter_type_int32, starpu_perf_counter_type_int64, starpu_perf_counter_type_float, starpu_perf_counter_type_double,
};

static const char *const getter_names[] = {
	"starpu_perf_counter_sample_get_int32_value", "starpu_perf_counter_sample_get_int64_value",
	"starpu_perf_counter_sample_get_float_value", "starpu_perf_counter_sample_get_double_value",
};

/* Converts v from one counter type to another when no information is lost.
 * Integers are handled as int64, floating values as double: each holds
 * every value of its family exactly. */
static bool convert_exact(enum starpu_perf_counter_type from, union astro_counter_value v, enum starpu_perf_counter_type to,
			  union astro_counter_value *out)
{
	bool from_int = from == starpu_perf_counter_type_int32 || from == starpu_perf_counter_type_int64;
	int64_t i = from == starpu_perf_counter_type_int32 ? v.int32_val : v.int64_val;
	double d = from == starpu_perf_counter_type_float ? v.float_val : v.double_val;
	switch (to) {
	case starpu_perf_counter_type_int32:
		if (from_int) {
			if (i < INT32_MIN || i > INT32_MAX)
				return false;
			out->int32_val = (int32_t)i;
			return true;
		}
		if (isnan(d) || d != floor(d) || d < INT32_MIN || d > INT32_MAX)
			return false;
		out->int32_val = (int32_t)d;
		return true;
	case starpu_perf_counter_type_int64:
		if (from_int) {
			out->int64_val = i;
			return true;
		}
		if (isnan(d) || d != floor(d) || fabs(d) >= 9223372036854775808.0)
			return false;
		out->int64_val = (int64_t)d;
		return true;
	case starpu_perf_counter_type_float:
		if (from_int) {
			if (i < -(INT64_C(1) << 24) || i > (INT64_C(1) << 24))
				return false;
			out->float_val = (float)i;
			return true;
		}
		if (!isnan(d) && (fabs(d) > FLT_MAX || (double)(float)d != d))
			return false;
		out->float_val = (float)d;
		return true;
	default:
		if (from_int) {
			if (i < -(INT64_C(1) << 53) || i > (INT64_C(1) << 53))
				return false;
			out->double_val = (double)i;
			return true;
		}
		out->double_val = d;
		return true;
	}
}

/* Reads counter_id from sample for getter into *out; false (error reported) when it cannot. */
static bool sample_read(struct starpu_perf_counter_sample *sample, int counter_id, enum getter getter, union astro_counter_value *out)
{
	const char *what = getter_names[getter];
	char key[64];
	if (!sample || sample != current_sample) {
		snprintf(key, sizeof(key), "outside:%d:%d", counter_id, (int)getter);
		_astro_counters_report_once(what, key, "sample %p is not being reported on this thread: read a sample only inside the listener callback that received it",
			    (void *)sample);
		return false;
	}
	struct counter *c = _astro_counters_frozen_counter(counter_id);
	if (!c) {
		snprintf(key, sizeof(key), "id:%d:%d", counter_id, (int)getter);
		_astro_counters_report_once(what, key, "%d is not a counter id: get ids with starpu_perf_counter_name_to_id()", counter_id);
		return false;
	}
	if (c->scope != sample->scope) {
		snprintf(key, sizeof(key), "scope:%d:%d", counter_id, (int)getter);
		_astro_counters_report_once(what, key, "counter '%s' belongs to scope %s but the sample is of scope %s: read counters of the listener's scope",
			    c->name, _astro_counters_scope_name(c->scope), _astro_counters_scope_name(sample->scope));
		return false;
	}
	sample_fill(sample, c);
	if (!sample->enabled[c->index]) {
		snprintf(key, sizeof(key), "disabled:%d:%d", counter_id, (int)getter);
		_astro_counters_report_once(what, key, "counter '%s' is not enabled in the listener's set: enable it with starpu_perf_counter_set_enable_id()",
			    c->name);
		return false;
	}
	union astro_counter_value v = sample->values[c->index];
	if (c->type == getter_type[getter]) {
		*out = v;
		return true;
	}
	bool converted = convert_exact(c->type, v, getter_type[getter], out);
	/* Within a family (int32/int64, float/double) an exact conversion is
	 * what the caller meant: StarPU's getters read the value through the
	 * union without a word, and the handbook's example reads the int64
	 * counter starpu.task.w_total_executed with the int32 getter. */
	bool int_getter = getter_type[getter] == starpu_perf_counter_type_int32 || getter_type[getter] == starpu_perf_counter_type_int64;
	bool int_counter = c->type == starpu_perf_counter_type_int32 || c->type == starpu_perf_counter_type_int64;
	if (converted && int_getter == int_counter)
		return true;
	snprintf(key, sizeof(key), "type:%d:%d", counter_id, (int)getter);
	_astro_counters_report_once(what, key, "counter '%s' is of type %s: read it with starpu_perf_counter_sample_get_%s_value()%s",
		    c->name, _astro_counters_type_name(c->type), _astro_counters_type_name(c->type),
		    converted ? " (its value is returned converted while it converts exactly)" : "");
	return converted;
}

int32_t starpu_perf_counter_sample_get_int32_value(struct starpu_perf_counter_sample *sample, const int counter_id)
{
	union astro_counter_value v;
	return sample_read(sample, counter_id, GET_INT32, &v) ? v.int32_val : -1;
}

int64_t starpu_perf_counter_sample_get_int64_value(struct starpu_perf_counter_sample *sample, const int counter_id)
{
	union astro_counter_value v;
	return sample_read(sample, counter_id, GET_INT64, &v) ? v.int64_val : -1;
}

float starpu_perf_counter_sample_get_float_value(struct starpu_perf_counter_sample *sample, const int counter_id)
{
	union astro_counter_value v;
	return sample_read(sample, counter_id, GET_FLOAT, &v) ? v.float_val : NAN;
}

double starpu_perf_counter_sample_get_double_value(struct starpu_perf_counter_sample *sample, const int counter_id)
{
	union astro_counter_value v;
	return sample_read(sample, counter_id, GET_DOUBLE, &v) ? v.double_val : NAN;
}

/* The slot of counter id in sample for an updater, NULL when not enabled or invalid (reported). */
static union astro_counter_value *sample_slot(struct starpu_perf_counter_sample *sample, int id, enum starpu_perf_counter_type type,
					      const char *what)
{
	struct counter *c = _astro_counters_frozen_counter(id);
	char key[64];
	if (!sample || !c || c->scope != sample->scope || c->type != type) {
		snprintf(key, sizeof(key), "set:%d:%d", id, (int)type);
		if (!sample)
			_astro_counters_report_once(what, key, "NULL sample: pass the sample the updater received");
		else if (!c)
			_astro_counters_report_once(what, key, "%d is not a counter id: use the id astro_counter_register() returned", id);
		else if (c->scope != sample->scope)
			_astro_counters_report_once(what, key, "counter '%s' belongs to scope %s, the sample to scope %s: set counters from the updater of their scope",
				    c->name, _astro_counters_scope_name(c->scope), _astro_counters_scope_name(sample->scope));
		else
			_astro_counters_report_once(what, key, "counter '%s' is of type %s: set it with astro_counter_sample_set_%s()",
				    c->name, _astro_counters_type_name(c->type), _astro_counters_type_name(c->type));
		return NULL;
	}
	return sample->enabled[c->index] ? &sample->values[c->index] : NULL;
}

int astro_counter_sample_wants(const struct starpu_perf_counter_sample *sample, int id)
{
	struct counter *c = _astro_counters_frozen_counter(id);
	return sample && c && c->scope == sample->scope && sample->enabled[c->index];
}

#define DEFINE_SETTER(NAME, CTYPE, TYPE, MEMBER)                                              \
	int NAME(struct starpu_perf_counter_sample *sample, int id, CTYPE value)              \
	{                                                                                     \
		struct counter *c = _astro_counters_frozen_counter(id);                                       \
		/* Fast path: the counter exists, matches and is wanted. */                   \
		if (sample && c && c->scope == sample->scope && c->type == TYPE) {            \
			if (sample->enabled[c->index])                                        \
				sample->values[c->index].MEMBER = value;                      \
			return 0;                                                             \
		}                                                                             \
		union astro_counter_value *slot = sample_slot(sample, id, TYPE, #NAME);       \
		if (!slot)                                                                    \
			return -EINVAL;                                                       \
		slot->MEMBER = value;                                                         \
		return 0;                                                                     \
	}

DEFINE_SETTER(astro_counter_sample_set_int32, int32_t, starpu_perf_counter_type_int32, int32_val)
DEFINE_SETTER(astro_counter_sample_set_int64, int64_t, starpu_perf_counter_type_int64, int64_val)
DEFINE_SETTER(astro_counter_sample_set_float, float, starpu_perf_counter_type_float, float_val)
DEFINE_SETTER(astro_counter_sample_set_double, double, starpu_perf_counter_type_double, double_val)

/* ------------------------------------------------------------ reading */

int astro_counter_read(int id, const void *context, union astro_counter_value *value)
{
	const char *what = "astro_counter_read";
	if (!value) {
		astro_log_error(what, "NULL value: pass where to store the value");
		return -EINVAL;
	}
	if (_astro_counters_state() != REGISTRY_RUNNING) {
		astro_log_error(what, "counter id %d: the runtime is not running: read counters between starpu_init() and starpu_shutdown()", id);
		return -ESRCH;
	}
	struct counter *c = _astro_counters_frozen_counter(id);
	if (!c) {
		astro_log_error(what, "%d is not a counter id: get ids with starpu_perf_counter_name_to_id()", id);
		return -EINVAL;
	}
	void *ctx = NULL;
	if (c->scope == starpu_perf_counter_scope_per_worker) {
		int workerid = astro_counter_context_worker(context);
		if (workerid < 0 || (unsigned)workerid >= _astro_counters_nworker_samples) {
			astro_log_error(what, "counter '%s' is per worker: pass a pointer to a worker id from 0 to %u", c->name,
					_astro_counters_nworker_samples ? _astro_counters_nworker_samples - 1 : 0);
			return -EINVAL;
		}
		ctx = &worker_ids[workerid];
	} else if (c->scope == starpu_perf_counter_scope_per_codelet) {
		struct starpu_codelet *cl = (struct starpu_codelet *)context;
		if (!cl) {
			astro_log_error(what, "counter '%s' is per codelet: pass the codelet", c->name);
			return -EINVAL;
		}
		if (!__atomic_load_n(&cl->perf_counter_values, __ATOMIC_ACQUIRE))
			return -ENODATA;
		ctx = cl;
	}
	int si = _astro_counters_scope_index(c->scope);
	struct starpu_perf_counter_sample sample;
	if (_astro_counters_sample_init(&sample, c->scope, _astro_counters_nfrozen[si], ctx) != 0) {
		_astro_counters_sample_fini(&sample);
		astro_log_error(what, "out of memory");
		return -ENOMEM;
	}
	sample.enabled[c->index] = 1;
	if (c->updater >= 0)
		_astro_counters_frozen_updaters[si][c->updater]->fn(&sample, ctx, _astro_counters_frozen_updaters[si][c->updater]->arg);
	*value = sample.values[c->index];
	_astro_counters_sample_fini(&sample);
	return 0;
}
