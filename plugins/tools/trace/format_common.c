/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the built-in trace formats share: opening and closing their files, a
 * task's name as StarPU's outputs show it, StarPU's aliases of the runtime's
 * states and its colours hashed from a name, a word of paje.trace and a JSON
 * string. It sits below the formats and calls nothing of the converter, so
 * that the formats never call back into the decoder or the dispatcher.
 */
#include <errno.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "format_common.h"

const char *trace_output_dir = "";

FILE *trace_format_open(const struct astro_trace_format_options *options, const char *name)
{
	char *path = g_build_filename(options->dir, name, NULL);
	FILE *f = fopen(path, "w");
	g_free(path);
	return f;
}

int trace_format_close(FILE *f)
{
	return (ferror(f) | (fclose(f) != 0)) ? -EIO : 0;
}

const char *trace_format_task_name(const struct astro_trace_task *t)
{
	return t->name ? t->name : (t->model ? t->model : "unknown");
}

const char *trace_state_alias(const char *name, const char **category)
{
	static const struct { const char *name, *alias, *category; } states[] = {
		{ "Initializing", "In", "Runtime" }, { "Deinitializing", "D", "Runtime" }, { "Scheduling", "Sc", "Runtime" },
		{ "Sleeping", "Sl", "Other" }, { "Idle", "I", "Other" }, { "FetchingInput", "Fi", "Runtime" }, { "Callback", "C", "Runtime" },
		{ "PushingOutput", "Po", "Runtime" },
		{ "Waiting all tasks", "WA", "User" }, { "Waiting task", "W", "User" }, { "Overhead", "B", "Runtime" },
		{ "Submitting task", "Su", "User" }, { "Building task", "Bu", "User" },
		{ "Throttling task submission", "Th", "User" },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(states); i++)
		if (strcmp(states[i].name, name) == 0) {
			*category = states[i].category;
			return states[i].alias;
		}
	*category = "Runtime";
	return "B";
}

/* crc32 of a name, for -c colours (as StarPU hashes names into r, g, b). */
static uint32_t crc32_str(const char *s, uint32_t crc)
{
	crc = ~crc;
	for (; *s; s++) {
		crc ^= (unsigned char)*s;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

void trace_hashed_color(const char *name, double rgb[3])
{
	static const char *const salt[3] = { "red", "green", "blue" };
	double sum = 0;
	for (int i = 0; i < 3; i++) {
		rgb[i] = (double)(crc32_str(name, crc32_str(salt[i], 0)) % 1024);
		sum += rgb[i];
	}
	for (int i = 0; i < 3; i++)
		rgb[i] = sum > 0 ? rgb[i] / sum : 1.0 / 3;
}

void paje_word(FILE *f, const char *s)
{
	if (*s && !strpbrk(s, " \t\"")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++)
		fputc(*s == '"' ? '\'' : *s, f);
	fputc('"', f);
}

char *trace_json_quote(const char *s)
{
	char *copy = NULL;
	if (!s)
		s = "";
	else if (!g_utf8_validate(s, -1, NULL))
		s = copy = g_utf8_make_valid(s, -1);
	JsonNode *node = json_node_init_string(json_node_alloc(), s);
	JsonGenerator *generator = json_generator_new();
	json_generator_set_root(generator, node);
	char *text = json_generator_to_data(generator, NULL);
	g_object_unref(generator);
	json_node_unref(node);
	g_free(copy);
	return text;
}

void trace_json_string(FILE *f, const char *s)
{
	char *text = trace_json_quote(s);
	for (const char *c = text; *c; c++)
		if (*c == '<')
			fputs("\\u003c", f);
		else
			fputc(*c, f);
	g_free(text);
}
