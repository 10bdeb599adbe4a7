/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The drivers' registry: each driver plugin registers its kind of worker
 * (astro_driver_register, astrolabe/plugin.h) from its init; the workers'
 * start (run/worker_loop.c) asks each for its workers.
 */
#include "workers/workers.h"

static starpu_pthread_mutex_t drivers_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GPtrArray *drivers;                   /* const struct astro_driver, registration order */

int astro_driver_register(const struct astro_driver *driver)
{
	if (!driver || !driver->name || !driver->execute || !driver->has_impl || !driver->default_count) {
		_astro_error("astro_driver_register: a driver needs name, execute, has_impl and default_count");
		return -EINVAL;
	}
	const struct astro_node_ops *node = driver->node_ops;
	if (node && (!node->kind || node->kind == STARPU_CPU_RAM || !node->allocate || !node->free || !node->copy_from_ram || !node->copy_to_ram)) {
		_astro_error("astro_driver_register: driver '%s' has node ops without a device kind, allocate, free, copy_from_ram or copy_to_ram",
			     driver->name);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&drivers_lock);
	if (!drivers)
		drivers = g_ptr_array_new();
	for (guint i = 0; i < drivers->len; i++) {
		const struct astro_driver *d = g_ptr_array_index(drivers, i);
		if (strcmp(d->name, driver->name) == 0 || d->archtype == driver->archtype) {
			starpu_pthread_mutex_unlock(&drivers_lock);
			_astro_error("driver '%s' conflicts with the already registered driver '%s': only one driver per worker type",
				     driver->name, d->name);
			return -EEXIST;
		}
	}
	g_ptr_array_add(drivers, (gpointer)driver);
	starpu_pthread_mutex_unlock(&drivers_lock);
	_astro_verbose("  driver %s", driver->name);
	return 0;
}

unsigned _astro_driver_count(void)
{
	return drivers ? drivers->len : 0;
}

const struct astro_driver *_astro_driver_nth(unsigned i)
{
	return g_ptr_array_index(drivers, i);
}

void _astro_drivers_clear(void)
{
	starpu_pthread_mutex_lock(&drivers_lock);
	if (drivers)
		g_ptr_array_free(drivers, TRUE);
	drivers = NULL;
	starpu_pthread_mutex_unlock(&drivers_lock);
}
