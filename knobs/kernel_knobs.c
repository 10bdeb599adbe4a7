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
 * This file is the one part of knobs/ that acts on kernel state, as the
 * kernel's knob module (it is linked into libastrolabe with the kernel).
 */
#include "kernel.h"
#include "knobs_internal.h"
#include <hwloc.h>
#include <limits.h>

#define MODULE "kernel"

enum { G_CALIBRATE, G_CATCH_SIGNALS };
enum { W_BIND_TO_PU, W_ENABLE_WORKER };
enum { S_MAX_PRIORITY_CAP, S_MIN_PRIORITY_CAP };

bool _astro_knob_policy_exists(const char *name)
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
static starpu_pthread_mutex_t rebind_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* Binds the thread of w to processing unit pu (hwloc logical index) from the calling thread. */
static int worker_rebind(struct _astro_worker *w, int pu, const struct astro_knob_context *ctx)
{
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

/* The caps of one policy instance, kept once a cap was set for it. */
struct policy_caps
{
	char *policy;
	int32_t max_cap;
	int32_t min_cap;
};

static starpu_pthread_mutex_t caps_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GPtrArray *caps;                  /* struct policy_caps */
static int32_t default_max_cap, default_min_cap;

static void policy_caps_free(gpointer data)
{
	struct policy_caps *c = data;
	g_free(c->policy);
	g_free(c);
}

/* Caller holds caps_lock. */
static struct policy_caps *policy_caps_find(const char *policy, bool create)
{
	for (guint i = 0; i < caps->len; i++) {
		struct policy_caps *c = g_ptr_array_index(caps, i);
		if (strcmp(c->policy, policy) == 0)
			return c;
	}
	if (!create)
		return NULL;
	struct policy_caps *c = g_new0(struct policy_caps, 1);
	c->policy = g_strdup(policy);
	c->max_cap = default_max_cap;
	c->min_cap = default_min_cap;
	g_ptr_array_add(caps, c);
	return c;
}

static int sched_get(const struct astro_knob_context *ctx, union astro_knob_value *value, void *arg)
{
	starpu_pthread_mutex_lock(&caps_lock);
	struct policy_caps *c = policy_caps_find(ctx->sched_policy_name, false);
	if (ctx->index == S_MAX_PRIORITY_CAP)
		value->int32_val = c ? c->max_cap : default_max_cap;
	else
		value->int32_val = c ? c->min_cap : default_min_cap;
	starpu_pthread_mutex_unlock(&caps_lock);
	return 0;
}

static int sched_set(const struct astro_knob_context *ctx, const union astro_knob_value *value, void *arg)
{
	const char *policy = ctx->sched_policy_name;
	int32_t cap = value->int32_val;
	starpu_pthread_mutex_lock(&caps_lock);
	struct policy_caps *c = policy_caps_find(policy, true);
	if (ctx->index == S_MAX_PRIORITY_CAP && cap < c->min_cap) {
		int32_t other = c->min_cap;
		starpu_pthread_mutex_unlock(&caps_lock);
		astro_log_error(ctx->knob_name, "%d is below the minimum priority cap %d of policy '%s': lower "
				"starpu.task.s_min_priority_cap_knob first; the cap is unchanged", cap, other, policy);
		return -EINVAL;
	}
	if (ctx->index == S_MIN_PRIORITY_CAP && cap > c->max_cap) {
		int32_t other = c->max_cap;
		starpu_pthread_mutex_unlock(&caps_lock);
		astro_log_error(ctx->knob_name, "%d is above the maximum priority cap %d of policy '%s': raise "
				"starpu.task.s_max_priority_cap_knob first; the cap is unchanged", cap, other, policy);
		return -EINVAL;
	}
	if (ctx->index == S_MAX_PRIORITY_CAP)
		c->max_cap = cap;
	else
		c->min_cap = cap;
	/* StarPU names a policy, not a context: every context running it takes its caps. */
	bool applies = false;
	for (unsigned i = 0; i < STARPU_NMAX_SCHED_CTXS; i++) {
		struct _astro_sched_ctx *x = &_astro_ctxs[i];
		if (__atomic_load_n(&x->state, __ATOMIC_ACQUIRE) == _ASTRO_CTX_FREE || !x->policy
		    || strcmp(x->policy->policy_name, policy) != 0)
			continue;
		__atomic_store_n(&x->prio_cap_max, c->max_cap, __ATOMIC_RELAXED);
		__atomic_store_n(&x->prio_cap_min, c->min_cap, __ATOMIC_RELAXED);
		applies = true;
	}
	if (applies)
		__atomic_store_n(&_astro_rt.prio_capped, 1, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&caps_lock);
	if (!applies)
		_astro_warn("%s: no scheduling context runs policy '%s': its cap is kept for the contexts created with it later",
			    ctx->knob_name, policy);
	return 0;
}

void _astro_ctx_caps_setup(struct _astro_sched_ctx *c)
{
	starpu_pthread_mutex_lock(&caps_lock);
	struct policy_caps *pc = caps && c->policy ? policy_caps_find(c->policy->policy_name, false) : NULL;
	__atomic_store_n(&c->prio_cap_max, pc ? pc->max_cap : INT_MAX, __ATOMIC_RELAXED);
	__atomic_store_n(&c->prio_cap_min, pc ? pc->min_cap : INT_MIN, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&caps_lock);
}

void _astro_task_cap_priority(struct starpu_task *task)
{
	/* task->sched_ctx is the task's context here (submission resolved it). */
	const struct _astro_sched_ctx *c = &_astro_ctxs[task->sched_ctx];
	int max = __atomic_load_n(&c->prio_cap_max, __ATOMIC_RELAXED);
	int min = __atomic_load_n(&c->prio_cap_min, __ATOMIC_RELAXED);
	if (task->priority > max)
		task->priority = max;
	else if (task->priority < min)
		task->priority = min;
}

/* ---------------------------------------------------------- declaration */

static void declare(int group, const struct astro_knob_decl *decl)
{
	if (group < 0 || astro_knob_declare(group, decl) < 0)
		_astro_error("the kernel could not declare knob %s: it is not available", decl->name);
}

void _astro_knobs_init(void)
{
	_astro_knob_registry_open();

	starpu_pthread_mutex_lock(&caps_lock);
	if (!caps)
		caps = g_ptr_array_new_with_free_func(policy_caps_free);
	default_max_cap = _astro_ctxs[0].max_prio;
	default_min_cap = _astro_ctxs[0].min_prio;
	__atomic_store_n(&_astro_rt.prio_capped, 0, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&caps_lock);

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
	starpu_pthread_mutex_lock(&caps_lock);
	if (caps)
		g_ptr_array_free(caps, TRUE);
	caps = NULL;
	__atomic_store_n(&_astro_rt.prio_capped, 0, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&caps_lock);
}
