/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* <starpu_helper.h> alone (issue 40): its macros and helpers are there. */
#include <starpu_helper.h>

#include "alone_headers.h"

int astro_alone_helper_max(void)
{
	return STARPU_MAX(3, 4) + (starpu_timing_now() < 0.0);
}
