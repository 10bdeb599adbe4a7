/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A program that includes only <starpu_data_interfaces.h> copies with
 * starpu_interface_copy() and its 2d, 3d and 4d forms, declared there as in
 * StarPU 1.4 (issue 40): this file compiling is half the check, test_data_api.cc
 * runs the rest. */
#include <starpu_data_interfaces.h>

#include "alone_headers.h"

/* Copies the 2 x 2 x 2 x 2 ints of src (contiguous) into dst with each form: 0 when all said 0. */
int astro_alone_interface_copies(int *src, int *dst1, int *dst2, int *dst3, int *dst4)
{
	const size_t e = sizeof(int);
	int ret = starpu_interface_copy((uintptr_t)src, 0, STARPU_MAIN_RAM, (uintptr_t)dst1, 0, STARPU_MAIN_RAM, 16 * e, NULL);
	/* Rows of 2 ints, 8 of them, 2 ints apart: one contiguous block. */
	ret |= starpu_interface_copy2d((uintptr_t)src, 0, STARPU_MAIN_RAM, (uintptr_t)dst2, 0, STARPU_MAIN_RAM, 2 * e, 8, 2 * e,
				       2 * e, NULL);
	ret |= starpu_interface_copy3d((uintptr_t)src, 0, STARPU_MAIN_RAM, (uintptr_t)dst3, 0, STARPU_MAIN_RAM, 2 * e, 2, 2 * e,
				       2 * e, 4, 4 * e, 4 * e, NULL);
	ret |= starpu_interface_copy4d((uintptr_t)src, 0, STARPU_MAIN_RAM, (uintptr_t)dst4, 0, STARPU_MAIN_RAM, 2 * e, 2, 2 * e,
				       2 * e, 2, 4 * e, 4 * e, 2, 8 * e, 8 * e, NULL);
	return ret;
}
