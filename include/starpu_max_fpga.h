/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Maxeler FPGA extensions, the header StarPU 1.4 installs whatever the build: as in
 * StarPU, its declarations exist only where starpu_config.h defines
 * STARPU_USE_MAX_FPGA, which no build of this runtime does (there is no FPGA
 * driver); a program tests that macro before using them. */
#ifndef __STARPU_MAX_FPGA_H__
#define __STARPU_MAX_FPGA_H__

#include <starpu_config.h>

#endif /* __STARPU_MAX_FPGA_H__ */
