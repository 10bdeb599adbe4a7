/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The energy meter a plugin registers (astrolabe/energy.h): one at a time,
 * read by calibration (energy models) and by starpu_energy_start/stop (energy.c).
 */
#include "models.h"

#include <astrolabe/energy.h>
#include <errno.h>

static const struct astro_energy_meter *meter;	/* atomic */

int astro_energy_meter_register(const struct astro_energy_meter *m)
{
	const struct astro_energy_meter *expected = NULL;
	if (!m) {
		__atomic_store_n(&meter, NULL, __ATOMIC_RELEASE);
		return 0;
	}
	if (!m->read || !m->joules || !m->worker_package) {
		_astro_error("energy meter %s: read, joules and worker_package are all needed: it is not registered",
			     m->name ? m->name : "(unnamed)");
		return -EINVAL;
	}
	if (!__atomic_compare_exchange_n(&meter, &expected, m, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		_astro_error("energy meter %s: %s already measures energy: only one meter at a time (disable one of the plugins)",
			     m->name ? m->name : "(unnamed)", expected->name ? expected->name : "another meter");
		return -EEXIST;
	}
	return 0;
}

const struct astro_energy_meter *astro_energy_meter_get(void)
{
	return __atomic_load_n(&meter, __ATOMIC_ACQUIRE);
}
