/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A plugin whose init crashes: the runtime's signal handler must say that it
 * happened in this plugin's init, with its file and symbol.
 */
#include <astrolabe/plugin.h>
#include <signal.h>

static int init(void)
{
	/* What a bad memory access does; a real one would be stopped first by UBSan in sanitizer builds. */
	raise(SIGSEGV);
	return 0;
}

ASTRO_PLUGIN_DEFINE(sched_crash, ASTRO_PLUGIN_SCHED, "crashes in its init", init, NULL);
