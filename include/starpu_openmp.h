/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The OpenMP runtime support (starpu_omp_*), the header StarPU 1.4 installs whatever
 * the build: as in StarPU, its declarations exist only where starpu_config.h defines
 * STARPU_OPENMP, which no build of this runtime does (it does not implement an
 * OpenMP runtime); a program tests that macro before using them. */
#ifndef __STARPU_OPENMP_H__
#define __STARPU_OPENMP_H__

#include <starpu_config.h>

#endif /* __STARPU_OPENMP_H__ */
