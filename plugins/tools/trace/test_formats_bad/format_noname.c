/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A trace format plugin whose format has no name: refused with one message naming the plugin (test_trace.cc). */
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

static const struct astro_trace_format nameless = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = NULL,
	.begin = begin,
	.end = end,
};

static int init(void)
{
	return astro_trace_format_register(&nameless);
}

ASTRO_PLUGIN_DEFINE(format_noname, ASTRO_PLUGIN_TRACE_FORMAT, "a format without a name (refused)", init, NULL);
