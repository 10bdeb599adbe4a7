/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A plugin calling a function no library provides. It is linked with
 * -z now, so dlopen() itself fails with "undefined symbol": the loader must
 * report that (and what to do) and carry on.
 */
#include <astrolabe/plugin.h>

/* Provided by nothing: the symbol stays undefined. */
extern int astro_test_function_nobody_defines(void);

static int init(void)
{
	return astro_test_function_nobody_defines();
}

ASTRO_PLUGIN_DEFINE(sched_unresolved, ASTRO_PLUGIN_SCHED, "needs a symbol nobody defines", init, NULL);
