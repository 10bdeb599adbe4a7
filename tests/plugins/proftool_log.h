/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The log the recording test tools (proftool_record.c, built twice as
 * proftool_a and proftool_b) write into. test_prof_tool defines one instance,
 * proftool_shared_log, exported from the test program; the tools find it with
 * dlsym(), so records of several tools land in one sequence whose order the
 * test checks.
 */
#ifndef PROFTOOL_LOG_H
#define PROFTOOL_LOG_H

#include <starpu.h>
#include <starpu_profiling_tool.h>

#define PROFTOOL_LOG_CAPACITY 65536
#define PROFTOOL_MAX_TOOLS 4
/* The pseudo-event a tool records when its astro_prof_tool_finalize() runs. */
#define PROFTOOL_FINALIZE (-1)

struct proftool_record
{
	int tool;                            /* PROFTOOL_ID of the tool */
	int callback;                        /* 0: its first callback, 1: its second */
	int event;                           /* enum starpu_prof_tool_event, or PROFTOOL_FINALIZE */
	struct starpu_prof_tool_info info;
	/* A copy of event_info->astro, with the strings it points to kept valid by the test. */
	struct astro_prof_tool_event_ext ext;
	int event_info_type;                 /* event_info->event_type as StarPU tools read it */
	int api_info_null;
};

struct proftool_log
{
	int n;                               /* atomic: records written */
	struct proftool_record records[PROFTOOL_LOG_CAPACITY];
	/* What each tool got, filled by its register function and handshake. */
	starpu_prof_tool_entry_register_func reg[PROFTOOL_MAX_TOOLS];
	starpu_prof_tool_entry_register_func unreg[PROFTOOL_MAX_TOOLS];
	starpu_prof_tool_cb_func callbacks[PROFTOOL_MAX_TOOLS][2];
	int registered[PROFTOOL_MAX_TOOLS];
	unsigned handshake_version[PROFTOOL_MAX_TOOLS];
	int handshakes[PROFTOOL_MAX_TOOLS];
	int finalized[PROFTOOL_MAX_TOOLS];
	/* Set by proftool_decline if its register function ever runs (it must not). */
	int decline_registered;
};

#endif /* PROFTOOL_LOG_H */
