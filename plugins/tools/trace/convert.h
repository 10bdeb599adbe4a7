/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starpu_fxt_tool's conversion, shared by the program and STARPU_GENERATE_TRACE=1 (convert.c). */
#ifndef __ASTRO_TRACE_CONVERT_H__
#define __ASTRO_TRACE_CONVERT_H__

#include <stdio.h>

/** Runs starpu_fxt_tool with its command line (argv[0] is the program name); returns 0 or 1 (message printed). */
int trace_convert_main(int argc, char **argv);
/** Converts the ninputs archives (folders or traces.otf2) with the registered format named format alone, output in
 * the current folder: 0, or 1 (message printed, naming program). For the programs made of one format (starpu_fxt_stats). */
int trace_convert_one_format(const char *program, const char *const *inputs, unsigned ninputs, const char *format);

#endif
