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
#include <math.h>
#include <stdio.h>
#include <string.h>

void knobs_text(FILE *out);
void knobs_json(FILE *out);

static const enum starpu_perf_knob_scope knob_scopes[] = {
	starpu_perf_knob_scope_global, starpu_perf_knob_scope_per_worker, starpu_perf_knob_scope_per_scheduler,
};
#define NKNOB_SCOPES (sizeof(knob_scopes) / sizeof(knob_scopes[0]))
#define MAX_SHOWN_POLICIES 32

/* ------------------------------------------------------------- values */

static void value_print(FILE *out, enum starpu_perf_knob_type type, union astro_knob_value v, int json)
{
	switch (type) {
	case starpu_perf_knob_type_int32: fprintf(out, "%" PRId32, v.int32_val); break;
	case starpu_perf_knob_type_int64: fprintf(out, "%" PRId64, v.int64_val); break;
	case starpu_perf_knob_type_float:
		if (json && !isfinite(v.float_val))
			fputs("null", out);
		else
			fprintf(out, "%.9g", (double)v.float_val);
		break;
	default:
		if (json && !isfinite(v.double_val))
			fputs("null", out);
		else
			fprintf(out, "%.17g", v.double_val);
		break;
	}
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

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(out, "\\u%04x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
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
		value_print(out, d->type, d->min, 0);
		fputs(", ", out);
		value_print(out, d->type, d->max, 0);
		fputc(']', out);
		break;
	case ASTRO_KNOB_CHECK_SET:
		fputs("one of ", out);
		for (unsigned i = 0; i < d->nvalues; i++) {
			fputs(i ? ", " : "", out);
			value_print(out, d->type, d->values[i], 0);
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
				value_print(out, info.decl.type, info.decl.default_value, 0);
			}
			fprintf(out, "%s] (%s)\n      %s\n      value:", info.read_only ? ", read-only" : "", info.module,
				info.decl.help);
			if (scope == starpu_perf_knob_scope_global) {
				fputc(' ', out);
				value_print(out, info.decl.type, value_of(&info, 0, NULL), 0);
			} else if (scope == starpu_perf_knob_scope_per_worker) {
				for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
					fprintf(out, "%s worker %u: ", w ? "," : "", w);
					value_print(out, info.decl.type, value_of(&info, w, NULL), 0);
				}
			} else {
				const char *shown[MAX_SHOWN_POLICIES + 1];
				const char *const *policies = shown_policies(&info, shown);
				for (unsigned p = 0; policies[p]; p++) {
					fprintf(out, "%s %s: ", p ? "," : "", policies[p]);
					value_print(out, info.decl.type, value_of(&info, 0, policies[p]), 0);
				}
			}
			fputc('\n', out);
		}
	}
}

/* --------------------------------------------------------------- JSON */

void knobs_json(FILE *out)
{
	const char *sep = "";
	fputc('[', out);
	for (size_t s = 0; s < NKNOB_SCOPES; s++) {
		enum starpu_perf_knob_scope scope = knob_scopes[s];
		int n = starpu_perf_knob_nb(scope);
		for (int i = 0; i < n; i++) {
			struct astro_knob_info info;
			if (astro_knob_get_info(starpu_perf_knob_nth_to_id(scope, i), &info) != 0)
				continue;
			const struct astro_knob_decl *d = &info.decl;
			fprintf(out, "%s\n    {\"id\": %d, \"name\": ", sep, info.id);
			json_string(out, d->name);
			fputs(", \"scope\": ", out);
			json_string(out, starpu_perf_knob_scope_id_to_name(scope));
			fputs(", \"type\": ", out);
			json_string(out, starpu_perf_knob_type_id_to_name(d->type));
			fputs(", \"module\": ", out);
			json_string(out, info.module);
			fputs(", \"help\": ", out);
			json_string(out, d->help);
			fprintf(out, ", \"read_only\": %s, \"check\": ", info.read_only ? "true" : "false");
			json_string(out, check_name(d->check));
			if (d->check == ASTRO_KNOB_CHECK_RANGE) {
				fputs(", \"min\": ", out);
				value_print(out, d->type, d->min, 1);
				fputs(", \"max\": ", out);
				value_print(out, d->type, d->max, 1);
			} else if (d->check == ASTRO_KNOB_CHECK_SET) {
				fputs(", \"values\": [", out);
				for (unsigned v = 0; v < d->nvalues; v++) {
					fputs(v ? ", " : "", out);
					value_print(out, d->type, d->values[v], 1);
				}
				fputc(']', out);
			}
			fputs(", \"default\": ", out);
			if (d->has_default)
				value_print(out, d->type, d->default_value, 1);
			else
				fputs("null", out);
			fputs(", \"value\": ", out);
			if (scope == starpu_perf_knob_scope_global) {
				value_print(out, d->type, value_of(&info, 0, NULL), 1);
			} else if (scope == starpu_perf_knob_scope_per_worker) {
				fputc('[', out);
				for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
					fprintf(out, "%s{\"worker\": %u, \"value\": ", w ? ", " : "", w);
					value_print(out, d->type, value_of(&info, w, NULL), 1);
					fputc('}', out);
				}
				fputc(']', out);
			} else {
				const char *shown[MAX_SHOWN_POLICIES + 1];
				const char *const *policies = shown_policies(&info, shown);
				fputc('[', out);
				for (unsigned p = 0; policies[p]; p++) {
					fputs(p ? ", {\"policy\": " : "{\"policy\": ", out);
					json_string(out, policies[p]);
					fputs(", \"value\": ", out);
					value_print(out, d->type, value_of(&info, 0, policies[p]), 1);
					fputc('}', out);
				}
				fputc(']', out);
			}
			fputc('}', out);
			sep = ",";
		}
	}
	fputs(*sep ? "\n  ]" : "]", out);
}
