/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * A simulation build (STARPU_SIMGRID) runs the program's main() as a SimGrid
 * actor: starpu.h includes this header, which renames the main() defined in
 * the including file to starpu_main(); libastrolabe's own main() loads the
 * simulated machine (STARPU_HOSTNAME's platform file in the sampling folder)
 * and runs starpu_main() in it. So a StarPU program needs no change: it
 * includes <starpu.h> in the file that defines main(), as StarPU asks.
 */
#ifndef __STARPU_SIMGRID_WRAP_H__
#define __STARPU_SIMGRID_WRAP_H__

#include <starpu_config.h>

#if defined(STARPU_SIMGRID) && !defined(main) && !defined(ASTRO_NO_MAIN_WRAP)
#define main starpu_main
#endif

#endif /* __STARPU_SIMGRID_WRAP_H__ */
