/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The core room: starpu_init() and starpu_shutdown() (init.c), which start
 * and stop every room and framework in order, and the plugin loader
 * (plugin.c). Nothing is above it.
 */
#ifndef __ASTRO_CORE_H__
#define __ASTRO_CORE_H__

#include "profiling/profiling.h"

/* The plugin loader (plugin.c): loads the plugins at init (the built-in ones, the directories), unloads them at shutdown. */
int _astro_plugins_load(void);
/* The scheduling-policy plugins alone (sched_*), as _astro_plugins_load() finds them: for the list
 * of policies before starpu_init() (init.c), unloaded with _astro_plugins_unload(). */
int _astro_policy_plugins_load(void);
void _astro_plugins_unload(void);
/* Trace-format plugins (format_*), loaded by astro_trace_formats_load() (the trace converter), not by starpu_init(). */
void _astro_format_plugins_load(void);

/* counters/: registration opens before the plugins load (the runtime's own
 * counters first, ids as StarPU's), closes once the workers run; shutdown
 * after the workers stopped. */
void _astro_counters_init(void);
void _astro_counters_start(int start_collection);
void _astro_counters_shutdown(void);


/* --------------------------------------------------------------- models */

/* models/: performance models. Init once the workers exist (their
 * architectures); shutdown saves calibrated models, before the workers go. */
void _astro_models_init(void);
void _astro_models_shutdown(void);
/* The theoretical lower bound (models/bound.c): forgets its recording and its subscription. */
void _astro_bound_init(void);
void _astro_bound_shutdown(void);
/* _astro_rt.calibrate changed (the knob): models start or stop measuring. */
void _astro_models_calibrate_changed(void);

/* knobs/: the steering framework's registry, open from starpu_init() (policy_exists checks the
 * policy a per-scheduler knob names) to starpu_shutdown(); the kernel's own knobs (knobs.c),
 * declared before the plugins' (ids as StarPU's). */
void _astro_knob_registry_open(bool (*policy_exists)(const char *policy));
void _astro_knob_registry_close(void);
void _astro_knobs_init(void);
void _astro_knobs_shutdown(void);

#endif /* __ASTRO_CORE_H__ */
