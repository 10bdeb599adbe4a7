/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Random numbers of the StarPU API: the drand48 family, under the names StarPU programs use. */
#ifndef __STARPU_RAND_H__
#define __STARPU_RAND_H__

#include <stdlib.h>
#include <starpu_config.h>
#include <starpu_util.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The seed a program should use: STARPU_RAND_SEED when set, else seed. */
#define starpu_seed(seed) starpu_get_env_number_default("STARPU_RAND_SEED", (seed))
/** Seeds starpu_drand48() and starpu_lrand48() with starpu_seed(seed). */
#define starpu_srand48(seed) srand48(starpu_seed(seed))
/** Uniform double in [0, 1). */
#define starpu_drand48() drand48()
/** Uniform non-negative long in [0, 2^31). */
#define starpu_lrand48() lrand48()
/** As starpu_drand48(), with the caller's state xsubi (unsigned short[3]). */
#define starpu_erand48(xsubi) erand48(xsubi)

/** Per-thread state of the reentrant variants. */
typedef struct drand48_data starpu_drand48_data;
/** Seeds the reentrant state buffer with starpu_seed(seed). */
#define starpu_srand48_r(seed, buffer) srand48_r(starpu_seed(seed), buffer)
/** Reentrant starpu_drand48(): stores the number in *result. */
#define starpu_drand48_r(buffer, result) drand48_r(buffer, result)
#define starpu_lrand48_r(buffer, result) lrand48_r(buffer, result)
/** Reentrant starpu_erand48(). */
#define starpu_erand48_r(xsubi, buffer, result) erand48_r(xsubi, buffer, result)

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_RAND_H__ */
