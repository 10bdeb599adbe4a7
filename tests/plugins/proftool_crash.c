/*
 * A profiling tool whose register function crashes: the runtime's signal
 * handler must name the tool's file and starpu_prof_tool_library_register.
 */
#include <starpu_profiling_tool.h>
#include <signal.h>

__attribute__((visibility("default"))) void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg,
									    starpu_prof_tool_entry_register_func unreg)
{
	(void)reg;
	(void)unreg;
	/* What a bad memory access does; a real one would be stopped first by UBSan in sanitizer builds. */
	raise(SIGSEGV);
}
