/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's own knobs, declared at every starpu_init() before any plugin
 * declares its own, so that their ids are the ones StarPU 1.4 gives them:
 *
 *   global         starpu.global.g_calibrate_knob            0x00000001
 *                  starpu.global.g_enable_catch_signal_knob  0x00000011
 *   per_worker     starpu.worker.w_bind_to_pu_knob           0x00000003
 *                  starpu.worker.w_enable_worker_knob        0x00000013
 *   per_scheduler  starpu.task.s_max_priority_cap_knob       0x00000005
 *                  starpu.task.s_min_priority_cap_knob       0x00000015
 *
 * The kernel declares them through the steering framework's API, as a plugin
 * declares its own (astrolabe/knobs.h); their callbacks act on the rooms
 * below: the models' calibration, signals, workers, the priority caps
 * (sched/prio_caps.c).
 */
#include "core/core.h"
#include <astrolabe/knobs.h>
#include <hwloc.h>
#include <limits.h>

#define MODULE "kernel"

enum { G_CALIBRATE, G_CATCH_SIGNALS };
enum { W_BIND_TO_PU, W_ENABLE_WORKER };
enum { S_MAX_PRIORITY_CAP, S_MIN_PRIORITY_CAP };

/* Does a policy of that name exist? (The framework checks a per-scheduler knob's scope with it.) */
static bool policy_exists(const char *name)
{
	return name && _astro_policy_lookup(name) != NULL;
}

/* --------------------------------------------------------------- global */

static int global_get(const struct astro_knob_context *ctx, union astro_knob_value *value, void *arg)
{
	switch (ctx->index) {
	case G_CALIBRATE:
		value->int32_val = __atomic_load_n(&_astro_rt.calibrate, __ATOMIC_RELAXED);
		return 0;
	case G_CATCH_SIGNALS:
		value->int32_val = _astro_signals_caught();
		return 0;
	}
	return -EINVAL;
}

static int global_set(const struct astro_knob_context *ctx, const union astro_knob_value *value, void *arg)
{
	switch (ctx->index) {
	case G_CALIBRATE:
		__atomic_store_n(&_astro_rt.calibrate, value->int32_val, __ATOMIC_RELAXED);
		_astro_models_calibrate_changed();
		return 0;
	case G_CATCH_SIGNALS:
		return _astro_signals_catch(value->int32_val != 0);
	}
	return -EINVAL;
}

/* ----------------------------------------------------------- per worker */

/* Rebinds are serialised so that the binding and the recorded bindid agree. */
#ifndef STARPU_SIMGRID
static starpu_pthread_mutex_t rebind_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
#endif

/* Binds the thread of w to processing unit pu (hwloc logical index) from the calling thread. */
static int worker_rebind(struct _astro_worker *w, int pu, const struct astro_knob_context *ctx)
{
#ifdef STARPU_SIMGRID
	astro_log_error(ctx->knob_name, "a simulated worker is an actor, not a thread on this machine's cores: %s is not rebound", w->name);
	return -ENOTSUP;
#else
	hwloc_topology_t topology = _astro_rt.topology;
	hwloc_obj_t obj = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PU, (unsigned)pu);
	if (!obj) {
		astro_log_error(ctx->knob_name, "processing unit %d does not exist (%u here): %s keeps its binding", pu, _astro_rt.npus, w->name);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&rebind_lock);
	int ret = hwloc_set_thread_cpubind(topology, w->thread, obj->cpuset, 0);
	int err = errno;
	if (ret == 0)
		__atomic_store_n(&w->bindid, pu, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&rebind_lock);
	if (ret != 0) {
		astro_log_error(ctx->knob_name, "%s cannot be bound to processing unit %d (%s): it keeps its binding", w->name, pu, strerror(err));
		return -err;
	}
	return 0;
#endif
}

static int worker_get(const struct astro_knob_context *ctx, union astro_knob_value *value, void *arg)
{
	struct _astro_worker *w = _astro_worker(ctx->workerid);
	switch (ctx->index) {
	case W_BIND_TO_PU:
		value->int32_val = __atomic_load_n(&w->bindid, __ATOMIC_RELAXED);
		return 0;
	case W_ENABLE_WORKER:
		value->int32_val = __atomic_load_n(&w->enabled, __ATOMIC_RELAXED);
		return 0;
	}
	return -EINVAL;
}

static int worker_set(const struct astro_knob_context *ctx, const union astro_knob_value *value, void *arg)
{
	struct _astro_worker *w = _astro_worker(ctx->workerid);
	switch (ctx->index) {
	case W_BIND_TO_PU:
		return worker_rebind(w, value->int32_val, ctx);
	case W_ENABLE_WORKER:
		/* Policies see it through starpu_worker_can_execute_task(); a re-enabled worker may be asleep
		 * while work waits in a shared queue: wake it so that it looks. */
		__atomic_store_n(&w->enabled, value->int32_val, __ATOMIC_SEQ_CST);
		if (value->int32_val)
			_astro_worker_wake(w);
		return 0;
	}
	return -EINVAL;
}

/* -------------------------------------------------------- per scheduler */

/* -------------------------------------------------------- per scheduler */

static int sched_get(const struct astro_knob_context *ctx, union astro_knob_value *value, void *arg)
{
	value->int32_val = _astro_prio_cap_get(ctx->sched_policy_name, ctx->index == S_MAX_PRIORITY_CAP);
	return 0;
}

static int sched_set(const struct astro_knob_context *ctx, const union astro_knob_value *value, void *arg)
{
	return _astro_prio_cap_set(ctx->sched_policy_name, ctx->index == S_MAX_PRIORITY_CAP, value->int32_val, ctx->knob_name);
}

/* ---------------------------------------------------------- declaration */

static void declare(int group, const struct astro_knob_decl *decl)
{
	if (group < 0 || astro_knob_declare(group, decl) < 0)
		_astro_error("the kernel could not declare knob %s: it is not available", decl->name);
}

void _astro_knobs_init(void)
{
	_astro_knob_registry_open(policy_exists);
	int32_t default_min_cap, default_max_cap;
	_astro_prio_caps_open(&default_min_cap, &default_max_cap);

	static const union astro_knob_value calibrate_values[] = { { .int32_val = 0 }, { .int32_val = 1 }, { .int32_val = 2 } };
	int global = astro_knob_group_declare(&(struct astro_knob_group_decl){
		.module = MODULE, .scope = starpu_perf_knob_scope_global, .get = global_get, .set = global_set });
	declare(global, &(struct astro_knob_decl){
		.name = "starpu.global.g_calibrate_knob", .type = starpu_perf_knob_type_int32,
		.help = "performance model calibration: 0 off, 1 on, 2 on and forgetting earlier measurements (STARPU_CALIBRATE)",
		.has_default = 1, .default_value.int32_val = _astro_rt.calibrate,
		.check = ASTRO_KNOB_CHECK_SET, .values = calibrate_values, .nvalues = 3 });
	declare(global, &(struct astro_knob_decl){
		.name = "starpu.global.g_enable_catch_signal_knob", .type = starpu_perf_knob_type_int32,
		.help = "catch SIGINT, SIGSEGV and SIGTRAP: say which arrived, then pass it to the previous handler (STARPU_CATCH_SIGNALS)",
		.has_default = 1, .default_value.int32_val = _astro_signals_caught(), .check = ASTRO_KNOB_CHECK_ONOFF });

	int worker = astro_knob_group_declare(&(struct astro_knob_group_decl){
		.module = MODULE, .scope = starpu_perf_knob_scope_per_worker, .get = worker_get, .set = worker_set });
	declare(worker, &(struct astro_knob_decl){
		.name = "starpu.worker.w_bind_to_pu_knob", .type = starpu_perf_knob_type_int32,
		.help = "processing unit (hwloc logical index) the worker thread is bound to, -1 when unbound; setting it moves the thread",
		.check = ASTRO_KNOB_CHECK_RANGE, .min.int32_val = 0, .max.int32_val = (int32_t)_astro_rt.npus - 1 });
	declare(worker, &(struct astro_knob_decl){
		.name = "starpu.worker.w_enable_worker_knob", .type = starpu_perf_knob_type_int32,
		.help = "0 keeps new tasks away from the worker (it still runs those already queued to it), 1 lets them come again",
		.has_default = 1, .default_value.int32_val = 1, .check = ASTRO_KNOB_CHECK_ONOFF });

	int sched = astro_knob_group_declare(&(struct astro_knob_group_decl){
		.module = MODULE, .scope = starpu_perf_knob_scope_per_scheduler, .get = sched_get, .set = sched_set });
	declare(sched, &(struct astro_knob_decl){
		.name = "starpu.task.s_max_priority_cap_knob", .type = starpu_perf_knob_type_int32,
		.help = "tasks submitted from now on to the contexts running the policy get at most this priority",
		.has_default = 1, .default_value.int32_val = default_max_cap,
		.check = ASTRO_KNOB_CHECK_RANGE, .min.int32_val = default_min_cap, .max.int32_val = default_max_cap });
	declare(sched, &(struct astro_knob_decl){
		.name = "starpu.task.s_min_priority_cap_knob", .type = starpu_perf_knob_type_int32,
		.help = "tasks submitted from now on to the contexts running the policy get at least this priority",
		.has_default = 1, .default_value.int32_val = default_min_cap,
		.check = ASTRO_KNOB_CHECK_RANGE, .min.int32_val = default_min_cap, .max.int32_val = default_max_cap });
}

void _astro_knobs_shutdown(void)
{
	_astro_knob_registry_close();
	_astro_prio_caps_close();
}
