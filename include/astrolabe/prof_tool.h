/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Profiling tools shipped as Astrolabe plugins (plugins/tools/). A tool
 * plugin offers a StarPU-style tool under a name; the tool stays inactive
 * unless STARPU_PROF_TOOL names it (STARPU_PROF_TOOL=stats, or a list such as
 * STARPU_PROF_TOOL=print:./libmine.so), so installing a tool plugin never
 * changes what a program prints.
 *
 *     static void tool_register(starpu_prof_tool_entry_register_func reg,
 *                               starpu_prof_tool_entry_register_func unreg)
 *     {
 *             reg(starpu_prof_tool_event_start_cpu_exec, my_cb, starpu_prof_tool_command_reg);
 *     }
 *     static const struct astro_prof_tool my_tool = {
 *             .name = "mine", .library_register = tool_register,
 *     };
 *     static int init(void) { return astro_prof_tool_provide(&my_tool); }
 *     ASTRO_PLUGIN_DEFINE(tool_mine, ASTRO_PLUGIN_TOOL, "my tool (STARPU_PROF_TOOL=mine)", init, NULL);
 */
#ifndef __ASTROLABE_PROF_TOOL_H__
#define __ASTROLABE_PROF_TOOL_H__

#include <astrolabe/plugin.h>
#include <starpu_profiling_tool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A tool offered by a plugin. Fields are only ever added at the tail, in the reserved room. */
struct astro_prof_tool
{
	/** The name STARPU_PROF_TOOL uses to enable it ("print"); letters, digits, '_' and '-'. */
	const char *name;
	/** One line for listings. */
	const char *description;
	/** Called at starpu_init() when the tool is enabled, exactly like a library's starpu_prof_tool_library_register(). */
	starpu_prof_tool_entry_func library_register;
	/** Called at starpu_shutdown() after the terminate event; may be NULL. */
	astro_prof_tool_finalize_func finalize;
	/** Room for growth: zero. */
	void *reserved[6];
};

/**
 * Offers tool under tool->name for this runtime session (call it from the
 * plugin's init). The struct must outlive the session. Returns 0, -EINVAL for
 * a tool without a valid name or library_register, -EEXIST when the name is
 * taken.
 */
int astro_prof_tool_provide(const struct astro_prof_tool *tool);

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_PROF_TOOL_H__ */
