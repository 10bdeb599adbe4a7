/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The knobs section of astrolabe-perf-list: every performance steering knob
 * with its scope, type, module, help, what values it takes, its default and
 * its current value (per worker for per_worker knobs, per policy for
 * per_scheduler ones: the running policy, or the policies the knob exists
 * for), as text or as a JSON array.
 */
#include <starpu.h>
#include <astrolabe/knobs.h>
#include <inttypes.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void knobs_text(FILE *out);
void knobs_json(JsonBuilder *b);
/* In astrolabe-perf-list.c. */
void perf_list_member_string(JsonBuilder *b, const char *name, const char *s);

static const enum starpu_perf_knob_scope knob_scopes[] = {
	starpu_perf_knob_scope_global, starpu_perf_knob_scope_per_worker, starpu_perf_knob_scope_per_scheduler,
};
#define NKNOB_SCOPES (sizeof(knob_scopes) / sizeof(knob_scopes[0]))
#define MAX_SHOWN_POLICIES 32

/* ------------------------------------------------------------- values */

static void value_print(FILE *out, enum starpu_perf_knob_type type, union astro_knob_value v)
{
	switch (type) {
	case starpu_perf_knob_type_int32: fprintf(out, "%" PRId32, v.int32_val); break;
	case starpu_perf_knob_type_int64: fprintf(out, "%" PRId64, v.int64_val); break;
	case starpu_perf_knob_type_float: fprintf(out, "%.9g", (double)v.float_val); break;
	default: fprintf(out, "%.17g", v.double_val); break;
	}
}

/* Adds v as a JSON number (null when not finite: JSON has no NaN); a float as its shortest decimal (1.1, not
 * 1.10000002384). */
static void value_add(JsonBuilder *b, enum starpu_perf_knob_type type, union astro_knob_value v)
{
	double d;
	switch (type) {
	case starpu_perf_knob_type_int32: json_builder_add_int_value(b, v.int32_val); return;
	case starpu_perf_knob_type_int64: json_builder_add_int_value(b, v.int64_val); return;
	case starpu_perf_knob_type_float: {
		char text[32];
		snprintf(text, sizeof(text), "%.9g", (double)v.float_val);
		d = strtod(text, NULL);
		break;
	}
	default: d = v.double_val; break;
	}
	if (isfinite(d))
		json_builder_add_double_value(b, d);
	else
		json_builder_add_null_value(b);
}

static void member_value(JsonBuilder *b, const char *name, enum starpu_perf_knob_type type, union astro_knob_value v)
{
	json_builder_set_member_name(b, name);
	value_add(b, type, v);
}

static union astro_knob_value value_of(const struct astro_knob_info *info, unsigned workerid, const char *policy)
{
	union astro_knob_value v;
	memset(&v, 0, sizeof(v));
	int id = info->id;
	switch (info->scope) {
	case starpu_perf_knob_scope_global:
		switch (info->decl.type) {
		case starpu_perf_knob_type_int32: v.int32_val = starpu_perf_knob_get_global_int32_value(id); break;
		case starpu_perf_knob_type_int64: v.int64_val = starpu_perf_knob_get_global_int64_value(id); break;
		case starpu_perf_knob_type_float: v.float_val = starpu_perf_knob_get_global_float_value(id); break;
		default: v.double_val = starpu_perf_knob_get_global_double_value(id); break;
		}
		break;
	case starpu_perf_knob_scope_per_worker:
		switch (info->decl.type) {
		case starpu_perf_knob_type_int32: v.int32_val = starpu_perf_knob_get_per_worker_int32_value(id, workerid); break;
		case starpu_perf_knob_type_int64: v.int64_val = starpu_perf_knob_get_per_worker_int64_value(id, workerid); break;
		case starpu_perf_knob_type_float: v.float_val = starpu_perf_knob_get_per_worker_float_value(id, workerid); break;
		default: v.double_val = starpu_perf_knob_get_per_worker_double_value(id, workerid); break;
		}
		break;
	default:
		switch (info->decl.type) {
		case starpu_perf_knob_type_int32: v.int32_val = starpu_perf_knob_get_per_scheduler_int32_value(id, policy); break;
		case starpu_perf_knob_type_int64: v.int64_val = starpu_perf_knob_get_per_scheduler_int64_value(id, policy); break;
		case starpu_perf_knob_type_float: v.float_val = starpu_perf_knob_get_per_scheduler_float_value(id, policy); break;
		default: v.double_val = starpu_perf_knob_get_per_scheduler_double_value(id, policy); break;
		}
		break;
	}
	return v;
}

static int policy_registered(const char *name)
{
	for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; p++)
		if ((*p)->policy_name && strcmp((*p)->policy_name, name) == 0)
			return 1;
	return 0;
}

/* The policies a per_scheduler knob is shown for: those of this build it exists for, else the
 * running one. shown has room for MAX_SHOWN_POLICIES names and the NULL. */
static const char *const *shown_policies(const struct astro_knob_info *info, const char **shown)
{
	unsigned n = 0;
	if (info->policies) {
		for (const char *const *p = info->policies; *p && n < MAX_SHOWN_POLICIES; p++)
			if (policy_registered(*p))
				shown[n++] = *p;
	} else {
		struct starpu_sched_policy *policy = starpu_sched_get_sched_policy();
		if (policy && policy->policy_name)
			shown[n++] = policy->policy_name;
	}
	shown[n] = NULL;
	return shown;
}

static const char *check_name(enum astro_knob_check check)
{
	switch (check) {
	case ASTRO_KNOB_CHECK_ONOFF: return "onoff";
	case ASTRO_KNOB_CHECK_RANGE: return "range";
	case ASTRO_KNOB_CHECK_SET: return "set";
	default: return "any";
	}
}

/* --------------------------------------------------------------- text */

static void accepted_text(FILE *out, const struct astro_knob_decl *d)
{
	switch (d->check) {
	case ASTRO_KNOB_CHECK_ONOFF:
		fputs("on/off", out);
		break;
	case ASTRO_KNOB_CHECK_RANGE:
		fputs("in [", out);
		value_print(out, d->type, d->min);
		fputs(", ", out);
		value_print(out, d->type, d->max);
		fputc(']', out);
		break;
	case ASTRO_KNOB_CHECK_SET:
		fputs("one of ", out);
		for (unsigned i = 0; i < d->nvalues; i++) {
			fputs(i ? ", " : "", out);
			value_print(out, d->type, d->values[i]);
		}
		break;
	default:
		fputs("any value", out);
	}
}

void knobs_text(FILE *out)
{
	int total = 0;
	for (size_t s = 0; s < NKNOB_SCOPES; s++)
		total += starpu_perf_knob_nb(knob_scopes[s]);
	fprintf(out, "knobs: %d\n", total);
	for (size_t s = 0; s < NKNOB_SCOPES; s++) {
		enum starpu_perf_knob_scope scope = knob_scopes[s];
		int n = starpu_perf_knob_nb(scope);
		fprintf(out, "\nscope %s: %d knob%s\n", starpu_perf_knob_scope_id_to_name(scope), n, n == 1 ? "" : "s");
		for (int i = 0; i < n; i++) {
			struct astro_knob_info info;
			if (astro_knob_get_info(starpu_perf_knob_nth_to_id(scope, i), &info) != 0)
				continue;
			fprintf(out, "  %s  [%s, ", info.decl.name, starpu_perf_knob_type_id_to_name(info.decl.type));
			accepted_text(out, &info.decl);
			if (info.decl.has_default) {
				fputs(", default ", out);
				value_print(out, info.decl.type, info.decl.default_value);
			}
			fprintf(out, "%s] (%s)\n      %s\n      value:", info.read_only ? ", read-only" : "", info.module,
				info.decl.help);
			if (scope == starpu_perf_knob_scope_global) {
				fputc(' ', out);
				value_print(out, info.decl.type, value_of(&info, 0, NULL));
			} else if (scope == starpu_perf_knob_scope_per_worker) {
				for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
					fprintf(out, "%s worker %u: ", w ? "," : "", w);
					value_print(out, info.decl.type, value_of(&info, w, NULL));
				}
			} else {
				const char *shown[MAX_SHOWN_POLICIES + 1];
				const char *const *policies = shown_policies(&info, shown);
				for (unsigned p = 0; policies[p]; p++) {
					fprintf(out, "%s %s: ", p ? "," : "", policies[p]);
					value_print(out, info.decl.type, value_of(&info, 0, policies[p]));
				}
			}
			fputc('\n', out);
		}
	}
}

/* --------------------------------------------------------------- JSON */

void knobs_json(JsonBuilder *b)
{
	json_builder_begin_array(b);
	for (size_t s = 0; s < NKNOB_SCOPES; s++) {
		enum starpu_perf_knob_scope scope = knob_scopes[s];
		int n = starpu_perf_knob_nb(scope);
		for (int i = 0; i < n; i++) {
			struct astro_knob_info info;
			if (astro_knob_get_info(starpu_perf_knob_nth_to_id(scope, i), &info) != 0)
				continue;
			const struct astro_knob_decl *d = &info.decl;
			json_builder_begin_object(b);
			json_builder_set_member_name(b, "id");
			json_builder_add_int_value(b, info.id);
			perf_list_member_string(b, "name", d->name);
			perf_list_member_string(b, "scope", starpu_perf_knob_scope_id_to_name(scope));
			perf_list_member_string(b, "type", starpu_perf_knob_type_id_to_name(d->type));
			perf_list_member_string(b, "module", info.module);
			perf_list_member_string(b, "help", d->help);
			json_builder_set_member_name(b, "read_only");
			json_builder_add_boolean_value(b, info.read_only);
			perf_list_member_string(b, "check", check_name(d->check));
			if (d->check == ASTRO_KNOB_CHECK_RANGE) {
				member_value(b, "min", d->type, d->min);
				member_value(b, "max", d->type, d->max);
			} else if (d->check == ASTRO_KNOB_CHECK_SET) {
				json_builder_set_member_name(b, "values");
				json_builder_begin_array(b);
				for (unsigned v = 0; v < d->nvalues; v++)
					value_add(b, d->type, d->values[v]);
				json_builder_end_array(b);
			}
			if (d->has_default) {
				member_value(b, "default", d->type, d->default_value);
			} else {
				json_builder_set_member_name(b, "default");
				json_builder_add_null_value(b);
			}
			json_builder_set_member_name(b, "value");
			if (scope == starpu_perf_knob_scope_global) {
				value_add(b, d->type, value_of(&info, 0, NULL));
			} else if (scope == starpu_perf_knob_scope_per_worker) {
				json_builder_begin_array(b);
				for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
					json_builder_begin_object(b);
					json_builder_set_member_name(b, "worker");
					json_builder_add_int_value(b, w);
					member_value(b, "value", d->type, value_of(&info, w, NULL));
					json_builder_end_object(b);
				}
				json_builder_end_array(b);
			} else {
				const char *shown[MAX_SHOWN_POLICIES + 1];
				const char *const *policies = shown_policies(&info, shown);
				json_builder_begin_array(b);
				for (unsigned p = 0; policies[p]; p++) {
					json_builder_begin_object(b);
					perf_list_member_string(b, "policy", policies[p]);
					member_value(b, "value", d->type, value_of(&info, 0, policies[p]));
					json_builder_end_object(b);
				}
				json_builder_end_array(b);
			}
			json_builder_end_object(b);
		}
	}
	json_builder_end_array(b);
}
