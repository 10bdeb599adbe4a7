/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The performance steering framework: the registry of knob groups and knobs,
 * the starpu_perf_knob_* API, and the checks every get and set goes through
 * before a group's getter or setter runs.
 *
 * A group id packs the registry's generation (one per starpu_init()) above
 * the group's index, so that a group id kept from an earlier starpu_init()
 * is refused rather than taken for another group.
 *
 * A knob id packs its index in its scope above the scope id, as StarPU does
 * ((index << 4) | scope): ids are the same as StarPU's for the same
 * registration order. The registry is guarded by one mutex, used to declare
 * and to resolve an id; getters and setters run outside it, each group
 * synchronising its own state (steering is never on the task path).
 */
#include "config.h"
#include <astrolabe/knobs.h>
#include <stdbool.h>
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <astrolabe/thread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <astrolabe/plugin.h>

#define ID_SCOPE_BITS 4
#define ID_SCOPE_MASK ((1 << ID_SCOPE_BITS) - 1)
#define NSCOPES 3
#define GROUP_INDEX_BITS 16

struct knob_group
{
	struct astro_knob_group_decl decl;   /* policies: an owned copy */
	unsigned nknobs;
};

struct knob
{
	int id;
	enum starpu_perf_knob_scope scope;
	struct knob_group *group;
	unsigned index;                      /* in its group */
	struct astro_knob_decl decl;         /* name, help, values: owned copies */
};

static starpu_pthread_mutex_t registry_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static bool registry_open;
static unsigned registry_generation;       /* bumped at each opening, kept in group ids */
static GPtrArray *knobs_of_scope[NSCOPES]; /* index in scope -> struct knob */
static GHashTable *knobs_by_name;          /* name -> struct knob, all scopes */
static GPtrArray *groups;                  /* struct knob_group */

/* ------------------------------------------------------------- naming */

static int scope_slot(int scope)
{
	switch (scope) {
	case starpu_perf_knob_scope_global: return 0;
	case starpu_perf_knob_scope_per_worker: return 1;
	case starpu_perf_knob_scope_per_scheduler: return 2;
	default: return -1;
	}
}

int starpu_perf_knob_scope_name_to_id(const char *name)
{
	if (name) {
		if (strcmp(name, "global") == 0)
			return starpu_perf_knob_scope_global;
		if (strcmp(name, "per_worker") == 0)
			return starpu_perf_knob_scope_per_worker;
		if (strcmp(name, "per_scheduler") == 0)
			return starpu_perf_knob_scope_per_scheduler;
	}
	astro_log_error("starpu_perf_knob_scope_name_to_id", "'%s' is not a knob scope: use \"global\", \"per_worker\" or \"per_scheduler\"",
			name ? name : "(null)");
	return -1;
}

static const char *scope_name(int scope)
{
	switch (scope) {
	case starpu_perf_knob_scope_global: return "global";
	case starpu_perf_knob_scope_per_worker: return "per_worker";
	case starpu_perf_knob_scope_per_scheduler: return "per_scheduler";
	default: return NULL;
	}
}

const char *starpu_perf_knob_scope_id_to_name(enum starpu_perf_knob_scope scope)
{
	const char *name = scope_name(scope);
	if (!name)
		astro_log_error("starpu_perf_knob_scope_id_to_name", "%d is not a knob scope id: use a starpu_perf_knob_scope_* constant",
				(int)scope);
	return name;
}

static const char *type_name(int type)
{
	switch (type) {
	case starpu_perf_knob_type_int32: return "int32";
	case starpu_perf_knob_type_int64: return "int64";
	case starpu_perf_knob_type_float: return "float";
	case starpu_perf_knob_type_double: return "double";
	default: return NULL;
	}
}

int starpu_perf_knob_type_name_to_id(const char *name)
{
	for (int type = starpu_perf_knob_type_int32; type <= starpu_perf_knob_type_double; type++)
		if (name && strcmp(name, type_name(type)) == 0)
			return type;
	astro_log_error("starpu_perf_knob_type_name_to_id", "'%s' is not a knob type: use \"int32\", \"int64\", \"float\" or \"double\"",
			name ? name : "(null)");
	return -1;
}

const char *starpu_perf_knob_type_id_to_name(enum starpu_perf_knob_type type)
{
	const char *name = type_name(type);
	if (!name)
		astro_log_error("starpu_perf_knob_type_id_to_name", "%d is not a knob type id: use a starpu_perf_knob_type_* constant",
				(int)type);
	return name;
}

/* ----------------------------------------------------------- registry */

static void knob_free(gpointer data)
{
	struct knob *k = data;
	g_free((char *)k->decl.name);
	g_free((char *)k->decl.help);
	g_free((void *)k->decl.values);
	g_free(k);
}

static void group_free(gpointer data)
{
	struct knob_group *g = data;
	g_free((char *)g->decl.module);
	g_strfreev((char **)g->decl.policies);
	g_free(g);
}

/* Does a policy of that name exist? Given by the kernel when it opens the registry. */
static bool (*policy_exists)(const char *name);

void _astro_knob_registry_open(bool (*exists)(const char *policy))
{
	starpu_pthread_mutex_lock(&registry_lock);
	policy_exists = exists;
	if (!groups) {
		groups = g_ptr_array_new_with_free_func(group_free);
		knobs_by_name = g_hash_table_new(g_str_hash, g_str_equal);
		for (int s = 0; s < NSCOPES; s++)
			knobs_of_scope[s] = g_ptr_array_new_with_free_func(knob_free);
	}
	registry_open = true;
	registry_generation = (registry_generation + 1) & 0x7fff;
	starpu_pthread_mutex_unlock(&registry_lock);
}

void _astro_knob_registry_close(void)
{
	starpu_pthread_mutex_lock(&registry_lock);
	registry_open = false;
	if (groups) {
		g_hash_table_destroy(knobs_by_name);
		knobs_by_name = NULL;
		for (int s = 0; s < NSCOPES; s++) {
			g_ptr_array_free(knobs_of_scope[s], TRUE);
			knobs_of_scope[s] = NULL;
		}
		g_ptr_array_free(groups, TRUE);
		groups = NULL;
	}
	starpu_pthread_mutex_unlock(&registry_lock);
}

int astro_knob_group_declare(const struct astro_knob_group_decl *decl)
{
	static const char *const fn = "astro_knob_group_declare";
	if (!decl || scope_slot(decl->scope) < 0 || !decl->get) {
		astro_log_error(fn, "a knob group needs a scope (starpu_perf_knob_scope_global, _per_worker or _per_scheduler) and a getter");
		return -EINVAL;
	}
	if (decl->policies && decl->scope != starpu_perf_knob_scope_per_scheduler) {
		astro_log_error(fn, "only per_scheduler groups name the policies they apply to: leave policies NULL");
		return -EINVAL;
	}
	struct knob_group *g = g_new0(struct knob_group, 1);
	g->decl = *decl;
	g->decl.module = g_strdup(decl->module ? decl->module : "");
	g->decl.policies = decl->policies ? (const char *const *)g_strdupv((char **)decl->policies) : NULL;
	starpu_pthread_mutex_lock(&registry_lock);
	if (!registry_open || groups->len >= (1u << GROUP_INDEX_BITS)) {
		bool open = registry_open;
		starpu_pthread_mutex_unlock(&registry_lock);
		group_free(g);
		if (open)
			astro_log_error(fn, "too many knob groups (%u): declare several knobs per group", 1u << GROUP_INDEX_BITS);
		else
			astro_log_error(fn, "knobs are declared from a plugin's init or while the runtime runs, not before starpu_init() or after starpu_shutdown()");
		return open ? -ENOSPC : -EBUSY;
	}
	int id = (int)(registry_generation << GROUP_INDEX_BITS | groups->len);
	g_ptr_array_add(groups, g);
	starpu_pthread_mutex_unlock(&registry_lock);
	return id;
}

/* Ordering of two values of type: <0, 0, >0. */
static int value_compare(int type, const union astro_knob_value *a, const union astro_knob_value *b)
{
	switch (type) {
	case starpu_perf_knob_type_int32: return (a->int32_val > b->int32_val) - (a->int32_val < b->int32_val);
	case starpu_perf_knob_type_int64: return (a->int64_val > b->int64_val) - (a->int64_val < b->int64_val);
	case starpu_perf_knob_type_float: return (a->float_val > b->float_val) - (a->float_val < b->float_val);
	default: return (a->double_val > b->double_val) - (a->double_val < b->double_val);
	}
}

static void value_format(int type, const union astro_knob_value *v, char *buf, size_t size)
{
	switch (type) {
	case starpu_perf_knob_type_int32: snprintf(buf, size, "%" PRId32, v->int32_val); break;
	case starpu_perf_knob_type_int64: snprintf(buf, size, "%" PRId64, v->int64_val); break;
	case starpu_perf_knob_type_float: snprintf(buf, size, "%g", (double)v->float_val); break;
	default: snprintf(buf, size, "%g", v->double_val); break;
	}
}

static bool value_is_finite(int type, const union astro_knob_value *v)
{
	if (type == starpu_perf_knob_type_float)
		return isfinite(v->float_val);
	if (type == starpu_perf_knob_type_double)
		return isfinite(v->double_val);
	return true;
}

/* Checks *v against the declaration d (normalising on/off values to 0/1); prints why not.
 * what names the value in the message, outcome says what follows from the refusal. */
static bool value_acceptable(const struct astro_knob_decl *d, union astro_knob_value *v, const char *fn, const char *what,
			     const char *outcome)
{
	char shown[64], lo[64], hi[64];
	value_format(d->type, v, shown, sizeof(shown));
	if (!value_is_finite(d->type, v)) {
		astro_log_error(fn, "%s %s for knob '%s' is not a finite number: %s", what, shown, d->name, outcome);
		return false;
	}
	switch (d->check) {
	case ASTRO_KNOB_CHECK_ONOFF:
		v->int32_val = v->int32_val != 0;
		return true;
	case ASTRO_KNOB_CHECK_RANGE:
		if (value_compare(d->type, v, &d->min) < 0 || value_compare(d->type, v, &d->max) > 0) {
			value_format(d->type, &d->min, lo, sizeof(lo));
			value_format(d->type, &d->max, hi, sizeof(hi));
			astro_log_error(fn, "%s %s is outside the range [%s, %s] of knob '%s': %s", what, shown, lo, hi, d->name, outcome);
			return false;
		}
		return true;
	case ASTRO_KNOB_CHECK_SET: {
		GString *allowed = g_string_new(NULL);
		for (unsigned i = 0; i < d->nvalues; i++) {
			if (value_compare(d->type, v, &d->values[i]) == 0) {
				g_string_free(allowed, TRUE);
				return true;
			}
			value_format(d->type, &d->values[i], lo, sizeof(lo));
			g_string_append_printf(allowed, "%s%s", i ? ", " : "", lo);
		}
		astro_log_error(fn, "%s %s is not one of the values of knob '%s' (%s): %s", what, shown, d->name, allowed->str, outcome);
		g_string_free(allowed, TRUE);
		return false;
	}
	default:
		return true;
	}
}

static bool decl_valid(const struct astro_knob_decl *d, const char *fn)
{
	if (!d || !d->name || !*d->name) {
		astro_log_error(fn, "a knob needs a name");
		return false;
	}
	if (!type_name(d->type)) {
		astro_log_error(fn, "knob '%s' has the type id %d: use a starpu_perf_knob_type_* constant", d->name, (int)d->type);
		return false;
	}
	switch (d->check) {
	case ASTRO_KNOB_CHECK_NONE:
		break;
	case ASTRO_KNOB_CHECK_ONOFF:
		if (d->type != starpu_perf_knob_type_int32) {
			astro_log_error(fn, "on/off knob '%s' must be of type int32", d->name);
			return false;
		}
		break;
	case ASTRO_KNOB_CHECK_RANGE:
		if (!value_is_finite(d->type, &d->min) || !value_is_finite(d->type, &d->max) ||
		    value_compare(d->type, &d->min, &d->max) > 0) {
			astro_log_error(fn, "knob '%s' declares an empty or non-finite range: set min <= max", d->name);
			return false;
		}
		break;
	case ASTRO_KNOB_CHECK_SET:
		if (!d->values || d->nvalues == 0) {
			astro_log_error(fn, "knob '%s' declares a set of allowed values but gives none: set values and nvalues", d->name);
			return false;
		}
		break;
	default:
		astro_log_error(fn, "knob '%s' has the check %d: use an ASTRO_KNOB_CHECK_* constant", d->name, (int)d->check);
		return false;
	}
	if (d->has_default) {
		union astro_knob_value v = d->default_value;
		if (!value_acceptable(d, &v, fn, "the default value", "fix the declaration"))
			return false;
	}
	return true;
}

int astro_knob_declare(int group_id, const struct astro_knob_decl *decl)
{
	static const char *const fn = "astro_knob_declare";
	if (!decl_valid(decl, fn))
		return -EINVAL;
	starpu_pthread_mutex_lock(&registry_lock);
	int ret;
	unsigned index = (unsigned)group_id & ((1u << GROUP_INDEX_BITS) - 1);
	if (!registry_open || group_id < 0 || (unsigned)group_id >> GROUP_INDEX_BITS != registry_generation || index >= groups->len) {
		astro_log_error(fn, "knob '%s' names no group declared since this starpu_init() (group id %d): declare its group first",
				decl->name, group_id);
		ret = -EINVAL;
		goto out;
	}
	struct knob_group *group = g_ptr_array_index(groups, index);
	if (g_hash_table_contains(knobs_by_name, decl->name)) {
		astro_log_error(fn, "a knob named '%s' already exists: knob names are unique, rename one", decl->name);
		ret = -EEXIST;
		goto out;
	}
	GPtrArray *scope_knobs = knobs_of_scope[scope_slot(group->decl.scope)];
	struct knob *k = g_new0(struct knob, 1);
	k->scope = group->decl.scope;
	k->id = (int)(scope_knobs->len << ID_SCOPE_BITS) | k->scope;
	k->group = group;
	k->index = group->nknobs++;
	k->decl = *decl;
	k->decl.name = g_strdup(decl->name);
	k->decl.help = g_strdup(decl->help ? decl->help : "");
	k->decl.values = NULL;
	k->decl.nvalues = 0;
	if (decl->check == ASTRO_KNOB_CHECK_SET) {
		union astro_knob_value *values = g_new(union astro_knob_value, decl->nvalues);
		memcpy(values, decl->values, decl->nvalues * sizeof(*values));
		k->decl.values = values;
		k->decl.nvalues = decl->nvalues;
	}
	if (decl->check == ASTRO_KNOB_CHECK_ONOFF && decl->has_default)
		k->decl.default_value.int32_val = decl->default_value.int32_val != 0;
	g_ptr_array_add(scope_knobs, k);
	g_hash_table_insert(knobs_by_name, (gpointer)k->decl.name, k);
	ret = k->id;
out:
	starpu_pthread_mutex_unlock(&registry_lock);
	return ret;
}

/* The knob of id, NULL when there is none. Knobs live until the registry closes. */
static struct knob *knob_lookup(int id)
{
	if (id < 0)
		return NULL;
	int slot = scope_slot(id & ID_SCOPE_MASK);
	unsigned index = (unsigned)id >> ID_SCOPE_BITS;
	struct knob *k = NULL;
	if (slot < 0)
		return NULL;
	starpu_pthread_mutex_lock(&registry_lock);
	if (knobs_of_scope[slot] && index < knobs_of_scope[slot]->len)
		k = g_ptr_array_index(knobs_of_scope[slot], index);
	starpu_pthread_mutex_unlock(&registry_lock);
	return k;
}

static struct knob *knob_lookup_or_complain(int id, const char *fn)
{
	struct knob *k = knob_lookup(id);
	if (!k)
		astro_log_error(fn, "%d (0x%08x) is not a knob id: get one from starpu_perf_knob_name_to_id() between starpu_init() and starpu_shutdown()",
				id, (unsigned)id);
	return k;
}

int astro_knob_get_info(int id, struct astro_knob_info *info)
{
	struct knob *k = knob_lookup(id);
	if (!k || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->id = k->id;
	info->scope = k->scope;
	info->module = k->group->decl.module;
	info->read_only = k->group->decl.set == NULL;
	info->policies = k->group->decl.policies;
	info->decl = k->decl;
	return 0;
}

/* -------------------------------------------------------- discovery */

int starpu_perf_knob_nb(enum starpu_perf_knob_scope scope)
{
	int slot = scope_slot(scope);
	if (slot < 0) {
		astro_log_error("starpu_perf_knob_nb", "%d is not a knob scope id: use a starpu_perf_knob_scope_* constant", (int)scope);
		return 0;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	int n = knobs_of_scope[slot] ? (int)knobs_of_scope[slot]->len : 0;
	starpu_pthread_mutex_unlock(&registry_lock);
	return n;
}

int starpu_perf_knob_name_to_id(enum starpu_perf_knob_scope scope, const char *name)
{
	static const char *const fn = "starpu_perf_knob_name_to_id";
	int slot = scope_slot(scope);
	if (slot < 0) {
		astro_log_error(fn, "%d is not a knob scope id: use a starpu_perf_knob_scope_* constant", (int)scope);
		return -1;
	}
	struct knob *k = NULL;
	starpu_pthread_mutex_lock(&registry_lock);
	if (knobs_by_name && name)
		k = g_hash_table_lookup(knobs_by_name, name);
	int id = k ? k->id : -1;
	int found_scope = k ? (int)k->scope : 0;
	starpu_pthread_mutex_unlock(&registry_lock);
	if (k && found_scope != (int)scope) {
		astro_log_error(fn, "knob '%s' is in scope %s, not %s: pass starpu_perf_knob_scope_%s", name, scope_name(found_scope),
				scope_name(scope), scope_name(found_scope));
		return -1;
	}
	if (!k)
		astro_log_error(fn, "there is no knob named '%s'%s: starpu_perf_knob_list_all_avail() lists them", name ? name : "(null)",
				starpu_is_initialized() ? "" : " (knobs exist only between starpu_init() and starpu_shutdown())");
	return id;
}

int starpu_perf_knob_nth_to_id(enum starpu_perf_knob_scope scope, int nth)
{
	int n = starpu_perf_knob_nb(scope);
	if (scope_slot(scope) < 0)
		return -1;
	if (nth < 0 || nth >= n) {
		astro_log_error("starpu_perf_knob_nth_to_id", "scope %s has %d knobs: %d is not a rank among them", scope_name(scope), n, nth);
		return -1;
	}
	return (nth << ID_SCOPE_BITS) | scope;
}

const char *starpu_perf_knob_id_to_name(int id)
{
	struct knob *k = knob_lookup_or_complain(id, "starpu_perf_knob_id_to_name");
	return k ? k->decl.name : NULL;
}

int starpu_perf_knob_get_type_id(int id)
{
	struct knob *k = knob_lookup_or_complain(id, "starpu_perf_knob_get_type_id");
	return k ? (int)k->decl.type : -1;
}

const char *starpu_perf_knob_get_help_string(int id)
{
	struct knob *k = knob_lookup_or_complain(id, "starpu_perf_knob_get_help_string");
	return k ? k->decl.help : NULL;
}

void starpu_perf_knob_list_avail(enum starpu_perf_knob_scope scope)
{
	int slot = scope_slot(scope);
	if (slot < 0) {
		astro_log_error("starpu_perf_knob_list_avail", "%d is not a knob scope id: use a starpu_perf_knob_scope_* constant", (int)scope);
		return;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	for (guint i = 0; knobs_of_scope[slot] && i < knobs_of_scope[slot]->len; i++) {
		struct knob *k = g_ptr_array_index(knobs_of_scope[slot], i);
		printf("0x%08x:%s [%s] - %s\n", (unsigned)k->id, k->decl.name, type_name(k->decl.type), k->decl.help);
	}
	starpu_pthread_mutex_unlock(&registry_lock);
}

void starpu_perf_knob_list_all_avail(void)
{
	static const enum starpu_perf_knob_scope all[] = {
		starpu_perf_knob_scope_global, starpu_perf_knob_scope_per_worker, starpu_perf_knob_scope_per_scheduler,
	};
	for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		printf("scope: %s\n", scope_name(all[i]));
		starpu_perf_knob_list_avail(all[i]);
	}
}

/* ------------------------------------------------------------ access */

/* The knob id names when accessed as scope/type, with ctx filled; NULL after printing why not. */
static struct knob *knob_resolve(int id, enum starpu_perf_knob_scope scope, enum starpu_perf_knob_type type, bool set,
				 unsigned workerid, const char *policy, struct astro_knob_context *ctx, const char *fn)
{
	struct knob *k = knob_lookup_or_complain(id, fn);
	if (!k)
		return NULL;
	const char *verb = set ? "set" : "get";
	if (k->scope != scope || k->decl.type != type) {
		astro_log_error(fn, "knob '%s' is a %s %s knob: use starpu_perf_knob_%s_%s_%s_value()%s", k->decl.name, scope_name(k->scope),
				type_name(k->decl.type), verb, scope_name(k->scope), type_name(k->decl.type), set ? "; it is unchanged" : "");
		return NULL;
	}
	if (set && !k->group->decl.set) {
		astro_log_error(fn, "knob '%s' is read-only: it is unchanged", k->decl.name);
		return NULL;
	}
	ctx->knob_id = k->id;
	ctx->knob_name = k->decl.name;
	ctx->index = k->index;
	ctx->workerid = -1;
	ctx->sched_policy_name = NULL;
	if (scope == starpu_perf_knob_scope_per_worker) {
		unsigned nworkers = starpu_worker_get_count();
		if (workerid >= nworkers) {
			astro_log_error(fn, "worker %u does not exist (there are %u workers): knob '%s' %s", workerid, nworkers, k->decl.name,
					set ? "is unchanged" : "has no value there");
			return NULL;
		}
		ctx->workerid = (int)workerid;
	} else if (scope == starpu_perf_knob_scope_per_scheduler) {
		if (!policy || !policy_exists || !policy_exists(policy)) {
			astro_log_error(fn, "there is no scheduling policy named '%s' (STARPU_SCHED=help lists them): knob '%s' %s",
					policy ? policy : "(null)", k->decl.name, set ? "is unchanged" : "has no value there");
			return NULL;
		}
		const char *const *only = k->group->decl.policies;
		if (only) {
			bool listed = false;
			for (const char *const *p = only; *p && !listed; p++)
				listed = strcmp(*p, policy) == 0;
			if (!listed) {
				char *names = g_strjoinv(", ", (char **)only);
				astro_log_error(fn, "knob '%s' exists for the policies %s, not for '%s'%s", k->decl.name, names, policy,
						set ? ": it is unchanged" : "");
				g_free(names);
				return NULL;
			}
		}
		ctx->sched_policy_name = policy;
	}
	return k;
}

static void knob_get(int id, enum starpu_perf_knob_scope scope, enum starpu_perf_knob_type type, unsigned workerid,
		     const char *policy, union astro_knob_value *value, const char *fn)
{
	struct astro_knob_context ctx;
	memset(value, 0, sizeof(*value));
	struct knob *k = knob_resolve(id, scope, type, false, workerid, policy, &ctx, fn);
	if (k && k->group->decl.get(&ctx, value, k->group->decl.arg) != 0)
		memset(value, 0, sizeof(*value));
}

static void knob_set(int id, enum starpu_perf_knob_scope scope, enum starpu_perf_knob_type type, unsigned workerid,
		     const char *policy, union astro_knob_value value, const char *fn)
{
	struct astro_knob_context ctx;
	struct knob *k = knob_resolve(id, scope, type, true, workerid, policy, &ctx, fn);
	if (k && value_acceptable(&k->decl, &value, fn, "value", "it is unchanged"))
		k->group->decl.set(&ctx, &value, k->group->decl.arg);
}

/* The 24 typed accessors: TYPE names the starpu_perf_knob_type, MEMBER the union member. */
#define KNOB_ACCESSORS(TYPE, CTYPE, MEMBER)                                                                                   \
	CTYPE starpu_perf_knob_get_global_##TYPE##_value(const int knob_id)                                                   \
	{                                                                                                                     \
		union astro_knob_value v;                                                                                     \
		knob_get(knob_id, starpu_perf_knob_scope_global, starpu_perf_knob_type_##TYPE, 0, NULL, &v, __func__);      \
		return v.MEMBER;                                                                                              \
	}                                                                                                                     \
	void starpu_perf_knob_set_global_##TYPE##_value(const int knob_id, CTYPE new_value)                                   \
	{                                                                                                                     \
		union astro_knob_value v = { .MEMBER = new_value };                                                           \
		knob_set(knob_id, starpu_perf_knob_scope_global, starpu_perf_knob_type_##TYPE, 0, NULL, v, __func__);       \
	}                                                                                                                     \
	CTYPE starpu_perf_knob_get_per_worker_##TYPE##_value(const int knob_id, unsigned workerid)                            \
	{                                                                                                                     \
		union astro_knob_value v;                                                                                     \
		knob_get(knob_id, starpu_perf_knob_scope_per_worker, starpu_perf_knob_type_##TYPE, workerid, NULL, &v,      \
			 __func__);                                                                                           \
		return v.MEMBER;                                                                                              \
	}                                                                                                                     \
	void starpu_perf_knob_set_per_worker_##TYPE##_value(const int knob_id, unsigned workerid, CTYPE new_value)            \
	{                                                                                                                     \
		union astro_knob_value v = { .MEMBER = new_value };                                                           \
		knob_set(knob_id, starpu_perf_knob_scope_per_worker, starpu_perf_knob_type_##TYPE, workerid, NULL, v,       \
			 __func__);                                                                                           \
	}                                                                                                                     \
	CTYPE starpu_perf_knob_get_per_scheduler_##TYPE##_value(const int knob_id, const char *sched_policy_name)             \
	{                                                                                                                     \
		union astro_knob_value v;                                                                                     \
		knob_get(knob_id, starpu_perf_knob_scope_per_scheduler, starpu_perf_knob_type_##TYPE, 0, sched_policy_name, \
			 &v, __func__);                                                                                       \
		return v.MEMBER;                                                                                              \
	}                                                                                                                     \
	void starpu_perf_knob_set_per_scheduler_##TYPE##_value(const int knob_id, const char *sched_policy_name,              \
								CTYPE new_value)                                              \
	{                                                                                                                     \
		union astro_knob_value v = { .MEMBER = new_value };                                                           \
		knob_set(knob_id, starpu_perf_knob_scope_per_scheduler, starpu_perf_knob_type_##TYPE, 0, sched_policy_name, \
			 v, __func__);                                                                                        \
	}

KNOB_ACCESSORS(int32, int32_t, int32_val)
KNOB_ACCESSORS(int64, int64_t, int64_val)
KNOB_ACCESSORS(float, float, float_val)
KNOB_ACCESSORS(double, double, double_val)
