/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* <starpu_sink.h>, a header StarPU 1.4 installs, compiles alone (issue 40). */
#include <starpu_sink.h>

#include "alone_headers.h"

/* Something to compile besides the header. */
typedef int astro_alone_sink_compiled;
