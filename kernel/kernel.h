/*
 * Every room of the kernel, for the files not yet moved to their room's
 * header: each room's header includes the rooms below it (core/core.h all of them).
 */
#ifndef __ASTRO_KERNEL_H__
#define __ASTRO_KERNEL_H__

#include "core/core.h"

#endif /* __ASTRO_KERNEL_H__ */
