/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scheduling policies' registry: the policies plugins register
 * (astro_sched_policy_register, astrolabe/plugin.h) and those of the library
 * STARPU_SCHED_LIB names (opened by the loader, core/plugin.c), looked up by
 * name when a context is created (STARPU_SCHED, starpu_sched_ctx_create).
 */
#include "sched/sched.h"

static starpu_pthread_mutex_t registry_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *policies_by_name;         /* name -> struct starpu_sched_policy */
static GPtrArray *policies;                  /* registration order */
/* STARPU_SCHED_LIB's entry points, NULL when none. */
static struct
{
	struct starpu_sched_policy *(*get)(const char *name);
	struct starpu_sched_policy **(*all)(void);
	char *from;                          /* "STARPU_SCHED_LIB=path", for the messages */
	GPtrArray *refused;                  /* its policies that failed _astro_policy_check() */
} sched_lib;

/* The one check of a scheduling policy, wherever it comes from (a plugin's
 * registration, STARPU_SCHED_LIB): from says where, for the message. */
int _astro_policy_check(const struct starpu_sched_policy *policy, const char *from)
{
	const char *missing = !policy ? "a policy (NULL)"
		: !policy->policy_name ? "policy_name"
		: !policy->push_task ? "push_task"
		: !policy->pop_task ? "pop_task" : NULL;
	if (!missing)
		return 0;
	_astro_error("scheduling policy %s%s%s(%s) has no %s: a policy needs policy_name, push_task and pop_task; it is ignored",
		     policy && policy->policy_name ? "'" : "", policy && policy->policy_name ? policy->policy_name : "",
		     policy && policy->policy_name ? "' " : "", from, missing);
	return -EINVAL;
}

int astro_sched_policy_register(struct starpu_sched_policy *policy)
{
	char *from = _astro_registrant ? g_strdup_printf("plugin %s, %s", _astro_registrant->name, _astro_registrant->path)
				       : g_strdup("astro_sched_policy_register()");
	int ret = _astro_policy_check(policy, from);
	g_free(from);
	if (ret) {
		if (_astro_registrant)
			_astro_registrant->refused = true;
		return ret;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	if (!policies_by_name) {
		policies_by_name = g_hash_table_new(g_str_hash, g_str_equal);
		policies = g_ptr_array_new();
	}
	if (g_hash_table_contains(policies_by_name, policy->policy_name)) {
		starpu_pthread_mutex_unlock(&registry_lock);
		_astro_error("scheduling policy '%s' is registered twice: the second one is ignored; rename one of them",
			     policy->policy_name);
		return -EEXIST;
	}
	g_hash_table_insert(policies_by_name, (gpointer)policy->policy_name, policy);
	g_ptr_array_add(policies, policy);
	starpu_pthread_mutex_unlock(&registry_lock);
	_astro_verbose("  policy %s: %s", policy->policy_name,
		       policy->policy_description ? policy->policy_description : "");
	return 0;
}

struct starpu_sched_policy *_astro_policy_lookup(const char *name)
{
	struct starpu_sched_policy *policy = NULL;
	starpu_pthread_mutex_lock(&registry_lock);
	if (policies_by_name)
		policy = g_hash_table_lookup(policies_by_name, name);
	starpu_pthread_mutex_unlock(&registry_lock);
	if (!policy && sched_lib.get) {
		struct starpu_sched_policy *(*get)(const char *) = sched_lib.get;
		{
			struct _astro_foreign_call call = {
				.what = "STARPU_SCHED_LIB's starpu_get_sched_lib_policy()",
				.file = sched_lib.from, .symbol = "starpu_get_sched_lib_policy",
				.advice = "the library crashed; fix it or unset STARPU_SCHED_LIB",
			};
			_astro_foreign_enter(&call);
			policy = get(name);
			_astro_foreign_leave(&call);
		}
		/* Checked at load when the library lists its policies; otherwise here, at its first use. */
		if (policy && (g_ptr_array_find(sched_lib.refused, policy, NULL) || _astro_policy_check(policy, sched_lib.from)))
			policy = NULL;
	}
	return policy;
}

/* The policies STARPU_SCHED_LIB lists (starpu_get_sched_lib_policies()), NULL when it lists none. */
static struct starpu_sched_policy **sched_lib_policies(void)
{
	struct starpu_sched_policy **(*all)(void) = sched_lib.all;
	if (!all)
		return NULL;
	struct _astro_foreign_call call = {
		.what = "STARPU_SCHED_LIB's starpu_get_sched_lib_policies()",
		.file = sched_lib.from, .symbol = "starpu_get_sched_lib_policies",
		.advice = "the library crashed; fix it or unset STARPU_SCHED_LIB",
	};
	_astro_foreign_enter(&call);
	struct starpu_sched_policy **list = all();
	_astro_foreign_leave(&call);
	return list;
}

void _astro_policies_print(FILE *out)
{
	fprintf(out, "\nThe variable STARPU_SCHED can be set to one of the following strings:\n");
	starpu_pthread_mutex_lock(&registry_lock);
	for (guint i = 0; policies && i < policies->len; i++) {
		struct starpu_sched_policy *p = g_ptr_array_index(policies, i);
		fprintf(out, "%-10s\t-> %s\n", p->policy_name, p->policy_description ? p->policy_description : "");
	}
	starpu_pthread_mutex_unlock(&registry_lock);
	if (sched_lib.get) {
		for (struct starpu_sched_policy **p = sched_lib_policies(); p && *p; p++)
			if (!g_ptr_array_find(sched_lib.refused, *p, NULL))
				fprintf(out, "%-10s\t-> %s\n", (*p)->policy_name,
					(*p)->policy_description ? (*p)->policy_description : "");
	}
	fprintf(out, "\n");
}

unsigned _astro_policies_list(struct starpu_sched_policy **list, unsigned max)
{
	unsigned n = 0;
	starpu_pthread_mutex_lock(&registry_lock);
	for (guint i = 0; policies && i < policies->len && n + 1 < max; i++)
		list[n++] = g_ptr_array_index(policies, i);
	starpu_pthread_mutex_unlock(&registry_lock);
	list[n] = NULL;
	return n;
}

void _astro_policy_library_set(const char *from, struct starpu_sched_policy *(*get)(const char *name),
			       struct starpu_sched_policy **(*all)(void))
{
	sched_lib.get = get;
	sched_lib.all = all;
	sched_lib.from = g_strdup(from);
	sched_lib.refused = g_ptr_array_new();
	/* Checked now, like a plugin's policies at their registration. */
	for (struct starpu_sched_policy **p = sched_lib_policies(); p && *p; p++)
		if (_astro_policy_check(*p, sched_lib.from))
			g_ptr_array_add(sched_lib.refused, *p);
}

void _astro_policies_clear(void)
{
	starpu_pthread_mutex_lock(&registry_lock);
	if (policies_by_name)
		g_hash_table_destroy(policies_by_name);
	policies_by_name = NULL;
	if (policies)
		g_ptr_array_free(policies, TRUE);
	policies = NULL;
	starpu_pthread_mutex_unlock(&registry_lock);
	sched_lib.get = NULL;
	sched_lib.all = NULL;
	g_free(sched_lib.from);
	sched_lib.from = NULL;
	if (sched_lib.refused)
		g_ptr_array_free(sched_lib.refused, TRUE);
	sched_lib.refused = NULL;
}

#define DEFAULT_POLICY "lws"

/* The runtime's policy: the conf's, STARPU_SCHED's, or the default (lws); NULL when none is available. */
struct starpu_sched_policy *_astro_policy_choose(void)
{
	const struct starpu_conf *conf = &_astro_rt.conf;
	if (conf->sched_policy && _astro_policy_check(conf->sched_policy, "conf.sched_policy") == 0)
		return conf->sched_policy;
	const char *name = NULL;
	const char *env = astro_env_string("STARPU_SCHED", ASTRO_ENV_NAME_MAX, NULL);
	if (conf->sched_policy_name && (conf->precedence_over_environment_variables || !env))
		name = conf->sched_policy_name;
	else if (env && *env)
		name = env;

	if (name && strcmp(name, "help") == 0) {
		_astro_policies_print(stderr);
		name = NULL;
	}
	if (name) {
		struct starpu_sched_policy *p = _astro_policy_lookup(name);
		if (p)
			return p;
		_astro_warn("scheduling policy '%s' was not found (STARPU_SCHED=help lists them): using '%s'",
			    name, DEFAULT_POLICY);
	}
	struct starpu_sched_policy *p = _astro_policy_lookup(DEFAULT_POLICY);
	if (!p) {
		struct starpu_sched_policy *all[2];
		_astro_policies_list(all, 2);
		p = all[0];
		if (p)
			_astro_warn("default policy '%s' is not available in this build: using '%s'", DEFAULT_POLICY, p->policy_name);
	}
	return p;
}
