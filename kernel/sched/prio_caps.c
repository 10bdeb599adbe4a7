/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Priority caps (the knobs starpu.task.s_max_priority_cap_knob and
 * s_min_priority_cap_knob, declared by core/knobs.c): per policy, as StarPU
 * names them, the range submissions to the contexts running that policy
 * clamp priorities to.
 */
#include "sched/sched.h"
#include <limits.h>

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

int32_t _astro_prio_cap_get(const char *policy, bool max)
{
	starpu_pthread_mutex_lock(&caps_lock);
	struct policy_caps *c = caps ? policy_caps_find(policy, false) : NULL;
	int32_t cap = max ? (c ? c->max_cap : default_max_cap) : (c ? c->min_cap : default_min_cap);
	starpu_pthread_mutex_unlock(&caps_lock);
	return cap;
}

int _astro_prio_cap_set(const char *policy, bool max, int32_t cap, const char *knob_name)
{
	starpu_pthread_mutex_lock(&caps_lock);
	struct policy_caps *c = policy_caps_find(policy, true);
	if (max && cap < c->min_cap) {
		int32_t other = c->min_cap;
		starpu_pthread_mutex_unlock(&caps_lock);
		astro_log_error(knob_name, "%d is below the minimum priority cap %d of policy '%s': lower "
				"starpu.task.s_min_priority_cap_knob first; the cap is unchanged", cap, other, policy);
		return -EINVAL;
	}
	if (!max && cap > c->max_cap) {
		int32_t other = c->max_cap;
		starpu_pthread_mutex_unlock(&caps_lock);
		astro_log_error(knob_name, "%d is above the maximum priority cap %d of policy '%s': raise "
				"starpu.task.s_max_priority_cap_knob first; the cap is unchanged", cap, other, policy);
		return -EINVAL;
	}
	if (max)
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
			    knob_name, policy);
	return 0;
}

void _astro_prio_caps_open(int32_t *min, int32_t *max)
{
	starpu_pthread_mutex_lock(&caps_lock);
	if (!caps)
		caps = g_ptr_array_new_with_free_func(policy_caps_free);
	default_max_cap = _astro_ctxs[0].max_prio;
	default_min_cap = _astro_ctxs[0].min_prio;
	*min = default_min_cap;
	*max = default_max_cap;
	__atomic_store_n(&_astro_rt.prio_capped, 0, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&caps_lock);
}

void _astro_prio_caps_close(void)
{
	starpu_pthread_mutex_lock(&caps_lock);
	if (caps)
		g_ptr_array_free(caps, TRUE);
	caps = NULL;
	__atomic_store_n(&_astro_rt.prio_capped, 0, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&caps_lock);
}
