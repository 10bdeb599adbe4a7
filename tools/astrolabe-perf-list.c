/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * astrolabe-perf-list: starts the runtime and lists what this build offers
 * to performance tools, with the plugins found by the usual rules
 * (STARPU_PLUGIN_PATH...): every performance counter with its scope, type,
 * kind, unit, module and help, and every steering knob with its type,
 * accepted values, default and current value, and the instrumentation's
 * event-key dictionary (keys, descriptions, named values) with the replay
 * chosen for tasks, as text or as JSON (--json).
 *
 * Each kind of thing listed is one section of the table below; a section
 * prints itself as text and as JSON (the value of its key).
 */
#include <starpu.h>
#include <astrolabe/counters.h>
#include <astrolabe/instrument.h>
#include <inttypes.h>
#include <errno.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const enum starpu_perf_counter_scope counter_scopes[] = {
	starpu_perf_counter_scope_global, starpu_perf_counter_scope_per_worker, starpu_perf_counter_scope_per_codelet,
};
#define NCOUNTER_SCOPES (sizeof(counter_scopes) / sizeof(counter_scopes[0]))

/* ----------------------------------------------------------- counters */

static int counters_total(void)
{
	int total = 0;
	for (size_t s = 0; s < NCOUNTER_SCOPES; s++)
		total += starpu_perf_counter_nb(counter_scopes[s]);
	return total;
}

static void counters_text(FILE *out)
{
	fprintf(out, "counters: %d\n", counters_total());
	for (size_t s = 0; s < NCOUNTER_SCOPES; s++) {
		enum starpu_perf_counter_scope scope = counter_scopes[s];
		int n = starpu_perf_counter_nb(scope);
		fprintf(out, "\nscope %s: %d counter%s\n", starpu_perf_counter_scope_id_to_name(scope), n, n == 1 ? "" : "s");
		for (int i = 0; i < n; i++) {
			int id = starpu_perf_counter_nth_to_id(scope, i);
			const char *unit = astro_counter_get_unit(id);
			fprintf(out, "  %s  [%s, %s%s%s] (%s)\n      %s\n", starpu_perf_counter_id_to_name(id),
				starpu_perf_counter_type_id_to_name(starpu_perf_counter_get_type_id(id)),
				astro_counter_kind_name(astro_counter_get_kind(id)),
				unit && *unit ? ", " : "", unit ? unit : "", astro_counter_get_module(id),
				starpu_perf_counter_get_help_string(id));
		}
	}
}

/* Sets member name of the object being built to the string s (made valid UTF-8: a plugin may name things in any
 * encoding, JSON is UTF-8). Shared with perf-list-knobs.c. */
void perf_list_member_string(JsonBuilder *b, const char *name, const char *s)
{
	json_builder_set_member_name(b, name);
	if (!s) {
		json_builder_add_null_value(b);
		return;
	}
	char *valid = g_utf8_make_valid(s, -1);
	json_builder_add_string_value(b, valid);
	g_free(valid);
}

static void counters_json(JsonBuilder *b)
{
	json_builder_begin_array(b);
	for (size_t s = 0; s < NCOUNTER_SCOPES; s++) {
		enum starpu_perf_counter_scope scope = counter_scopes[s];
		int n = starpu_perf_counter_nb(scope);
		for (int i = 0; i < n; i++) {
			int id = starpu_perf_counter_nth_to_id(scope, i);
			json_builder_begin_object(b);
			json_builder_set_member_name(b, "id");
			json_builder_add_int_value(b, id);
			perf_list_member_string(b, "name", starpu_perf_counter_id_to_name(id));
			perf_list_member_string(b, "scope", starpu_perf_counter_scope_id_to_name(scope));
			perf_list_member_string(b, "type", starpu_perf_counter_type_id_to_name(starpu_perf_counter_get_type_id(id)));
			perf_list_member_string(b, "kind", astro_counter_kind_name(astro_counter_get_kind(id)));
			perf_list_member_string(b, "unit", astro_counter_get_unit(id) ? astro_counter_get_unit(id) : "");
			perf_list_member_string(b, "module", astro_counter_get_module(id));
			perf_list_member_string(b, "help", starpu_perf_counter_get_help_string(id));
			json_builder_end_object(b);
		}
	}
	json_builder_end_array(b);
}

/* ------------------------------------------------------ instrumentation */

static const char *const replay_names[] = { "plain", "stacked states", "stacked bursts", "stacked states and bursts" };

static void instrumentation_text(FILE *out)
{
	unsigned n = astro_instr_key_count();
	fprintf(out, "instrumentation: task replay %s, event keys: %u\n", replay_names[astro_instr_context_get() & 3], n);
	for (unsigned id = 1; id <= n; id++) {
		struct astro_instr_key_info key;
		if (astro_instr_key_get(id, &key))
			continue;
		fprintf(out, "  %-32s %s\n", key.name, key.description);
		for (unsigned i = 0; i < key.nvalues; i++) {
			uint64_t value;
			const char *name;
			if (astro_instr_value_get(id, i, &value, &name) == 0)
				fprintf(out, "    %20" PRIu64 "  %s\n", value, name);
		}
	}
}

static void instrumentation_json(JsonBuilder *b)
{
	json_builder_begin_object(b);
	perf_list_member_string(b, "replay", replay_names[astro_instr_context_get() & 3]);
	json_builder_set_member_name(b, "keys");
	json_builder_begin_array(b);
	for (unsigned id = 1, n = astro_instr_key_count(); id <= n; id++) {
		struct astro_instr_key_info key;
		if (astro_instr_key_get(id, &key))
			continue;
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "id");
		json_builder_add_int_value(b, key.id);
		perf_list_member_string(b, "name", key.name);
		perf_list_member_string(b, "description", key.description);
		json_builder_set_member_name(b, "values");
		json_builder_begin_array(b);
		for (unsigned i = 0; i < key.nvalues; i++) {
			uint64_t value;
			const char *name;
			if (astro_instr_value_get(id, i, &value, &name))
				continue;
			json_builder_begin_object(b);
			json_builder_set_member_name(b, "value");
			json_builder_add_int_value(b, (gint64)value);
			perf_list_member_string(b, "name", name);
			json_builder_end_object(b);
		}
		json_builder_end_array(b);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_end_object(b);
}

/* ----------------------------------------------------------- sections */

struct section
{
	const char *key;                 /* JSON key */
	void (*text)(FILE *out);         /* human-readable listing */
	void (*json)(JsonBuilder *b);    /* adds a JSON value (an array, or the instrumentation's object) */
};

/* The steering knobs, with their values (perf-list-knobs.c). */
void knobs_text(FILE *out);
void knobs_json(JsonBuilder *b);

/* Everything listed, in order. A new kind of thing (knobs) is one more line. */
static const struct section sections[] = {
	{ "counters", counters_text, counters_json },
	{ "knobs", knobs_text, knobs_json },
	{ "instrumentation", instrumentation_text, instrumentation_json },
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: astrolabe-perf-list [--json]\n"
		"Starts the Astrolabe runtime and lists the performance counters of this\n"
		"build and of the plugins it loads, with scope, type, kind, unit and help,\n"
		"and its steering knobs with type, accepted values, default and current value,\n"
		"and the instrumentation's event keys with their named values.\n"
		"  --json     print JSON instead of text\n"
		"  -h, --help print this help\n"
		"  -v, --version  print the version and exit\n"
		"The usual variables apply (STARPU_PLUGIN_PATH, STARPU_NCPU, STARPU_SCHED...).\n");
}

int main(int argc, char **argv)
{
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = 1;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--version") == 0) {
			printf("astrolabe-perf-list (Astrolabe, StarPU %d.%d.%d API)\n", STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION,
			       STARPU_RELEASE_VERSION);
			return 0;
		} else {
			fprintf(stderr, "astrolabe-perf-list: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}

	/* One worker is enough to list: STARPU_NCPU still wins when set. */
	struct starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncpus = 1;
	int ret = starpu_init(&conf);
	if (ret != 0) {
		fprintf(stderr, "astrolabe-perf-list: the runtime did not start (%s): see the messages above\n", strerror(-ret));
		return 1;
	}

	int major, minor, release;
	starpu_get_version(&major, &minor, &release);
	if (json) {
		JsonBuilder *b = json_builder_new();
		json_builder_begin_object(b);
		perf_list_member_string(b, "runtime", "astrolabe");
		char *api = g_strdup_printf("%d.%d.%d", major, minor, release);
		perf_list_member_string(b, "starpu_api", api);
		g_free(api);
		json_builder_set_member_name(b, "workers");
		json_builder_add_int_value(b, starpu_worker_get_count());
		for (size_t s = 0; s < NSECTIONS; s++) {
			json_builder_set_member_name(b, sections[s].key);
			sections[s].json(b);
		}
		json_builder_end_object(b);
		JsonNode *root = json_builder_get_root(b);
		JsonGenerator *generator = json_generator_new();
		json_generator_set_pretty(generator, TRUE);
		json_generator_set_indent(generator, 2);
		json_generator_set_root(generator, root);
		char *text = json_generator_to_data(generator, NULL);
		printf("%s\n", text);
		g_free(text);
		g_object_unref(generator);
		json_node_unref(root);
		g_object_unref(b);
	} else {
		printf("Astrolabe (StarPU %d.%d.%d API), %u worker%s\n", major, minor, release, starpu_worker_get_count(),
		       starpu_worker_get_count() == 1 ? "" : "s");
		for (size_t s = 0; s < NSECTIONS; s++) {
			printf("\n");
			sections[s].text(stdout);
		}
	}
	fflush(stdout);
	starpu_shutdown();
	return ferror(stdout) ? 1 : 0;
}
