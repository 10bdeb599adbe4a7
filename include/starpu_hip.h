/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * HIP extensions, the header StarPU 1.4 installs whatever the build: as in StarPU,
 * its declarations exist only where starpu_config.h defines STARPU_USE_HIP, which
 * no build of this runtime does (there is no HIP driver); a program tests that macro
 * before using them. */
#ifndef __STARPU_HIP_H__
#define __STARPU_HIP_H__

#include <starpu_config.h>

#endif /* __STARPU_HIP_H__ */
