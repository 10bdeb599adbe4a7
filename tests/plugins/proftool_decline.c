/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tool that refuses every runtime in its handshake: the runtime must say
 * so and never call its register function.
 */
#define _GNU_SOURCE
#include "proftool_log.h"
#include <dlfcn.h>

int astro_prof_tool_handshake(unsigned interface_version)
{
	(void)interface_version;
	return ASTRO_PROF_TOOL_DECLINE;
}

void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg, starpu_prof_tool_entry_register_func unreg)
{
	(void)reg;
	(void)unreg;
	struct proftool_log *log = (struct proftool_log *)dlsym(RTLD_DEFAULT, "proftool_shared_log");
	if (log)
		log->decline_registered = 1;
}
