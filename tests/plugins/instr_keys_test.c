/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tool plugin that names its instrumentation at init, for test_instrument:
 * an event key with two named values and a key without values in the
 * event-key dictionary, and the plain replay of tasks' states and bursts.
 */
#include <astrolabe/instrument.h>
#include <astrolabe/plugin.h>

static int init(void)
{
	if (astro_instr_key_register("test-phase", "the phase the test application is in") < 1 ||
	    astro_instr_value_register("test-phase", 1, "setup") || astro_instr_value_register("test-phase", 2, "solve") ||
	    astro_instr_key_register("test-bytes", "bytes moved") < 1 || astro_instr_context_set(ASTRO_INSTR_CONTEXT_PLAIN))
		return -1;
	return 0;
}

ASTRO_PLUGIN_DEFINE(instr_keys_test, ASTRO_PLUGIN_TOOL, "instrumentation keys and a replay, for test_instrument", init, NULL);
