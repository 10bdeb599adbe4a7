/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A trace format plugin that cannot create its file: one message naming it, the other outputs written (test_trace.cc). */
#include <errno.h>
#include <stdio.h>
#include <astrolabe/plugin.h>
#include <astrolabe/trace_format.h>

static void *begin(const struct astro_trace_format_options *options)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%sno-such-folder/unwritable.out", options->dir, *options->dir ? "/" : "");
	FILE *f = fopen(path, "w"); /* fails: ENOENT */
	return f;
}

static int end(void *state)
{
	return fclose(state) == 0 ? 0 : -errno;
}

static const struct astro_trace_format unwritable = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "unwritable",
	.description = "a format that cannot create its file",
	.begin = begin,
	.end = end,
};

static int init(void)
{
	return astro_trace_format_register(&unwritable);
}

ASTRO_PLUGIN_DEFINE(format_unwritable, ASTRO_PLUGIN_TRACE_FORMAT, "a format whose file cannot be created", init, NULL);
