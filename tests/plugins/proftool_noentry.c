/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A shared library named as a tool that exports no
 * starpu_prof_tool_library_register(): the runtime must say so and go on.
 */
__attribute__((visibility("default"))) int proftool_noentry_answer(void);

int proftool_noentry_answer(void)
{
	return 42;
}
