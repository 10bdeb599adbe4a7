/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A trace format plugin whose format takes the built-in json's name: refused with one message (test_trace.cc). */
#include <stddef.h>
#include <astrolabe/plugin.h>
#include <astrolabe/trace_format.h>

static void *begin(const struct astro_trace_format_options *options)
{
	return (void *)options;
}

static int end(void *state)
{
	(void)state;
	return 0;
}

static const struct astro_trace_format json_again = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "json",
	.description = "a second json (refused)",
	.begin = begin,
	.end = end,
};

static int init(void)
{
	return astro_trace_format_register(&json_again);
}

ASTRO_PLUGIN_DEFINE(format_twice, ASTRO_PLUGIN_TRACE_FORMAT, "a format named as the built-in one (refused)", init, NULL);
