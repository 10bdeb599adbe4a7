/* Between the steering framework (knobs.c) and the kernel's own knob groups (kernel_knobs.c). */
#ifndef __ASTRO_KNOBS_INTERNAL_H__
#define __ASTRO_KNOBS_INTERNAL_H__

#include <stdbool.h>
#include <astrolabe/knobs.h>

/* Accepts declarations from now on (starpu_init() begins). */
void _astro_knob_registry_open(void);
/* Drops every group and knob and refuses declarations (starpu_shutdown()). */
void _astro_knob_registry_close(void);

/* 1 when a policy of that name can be selected (registered, or from STARPU_SCHED_LIB). */
bool _astro_knob_policy_exists(const char *name);

#endif /* __ASTRO_KNOBS_INTERNAL_H__ */
