/*
 * A plugin whose init crashes: the runtime's signal handler must say that it
 * happened in this plugin's init, with its file and symbol.
 */
#include <astrolabe/plugin.h>

static int init(void)
{
	*(volatile int *)NULL = 1;
	return 0;
}

ASTRO_PLUGIN_DEFINE(sched_crash, ASTRO_PLUGIN_SCHED, "crashes in its init", init, NULL);
