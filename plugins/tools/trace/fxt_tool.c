/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starpu_fxt_tool: StarPU's trace converter, reading the OTF2 archive the trace recorder writes (convert.c). */
#include "convert.h"

int main(int argc, char **argv)
{
	return trace_convert_main(argc, argv);
}
