/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Energy meters as a plugin service: a plugin that can read the energy the
 * machine's CPU packages consumed (Linux powercap, PAPI's powercap or rapl
 * component) registers one meter from its init; the runtime then measures
 * with it: starpu_energy_start() / starpu_energy_stop() (energy models fed
 * with measured values), and the plugin itself fills the profiling info's
 * energy_consumed around each task, and adds it to the task's worker's
 * (astro_energy_worker_add()).
 *
 * Meters count in raw units that wrap around: a reading is a stamp of every
 * zone's raw value, and the meter alone turns two stamps into Joules (it
 * knows each zone's range and unit). Without a meter, energy measurement
 * says once that nothing measures energy here and returns -ENODEV.
 */
#ifndef __ASTROLABE_ENERGY_H__
#define __ASTROLABE_ENERGY_H__

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most zones (packages and their sub-zones) a meter reads. */
#define ASTRO_ENERGY_MAX_ZONES 32

/** The raw values of a meter's zones at one moment. */
struct astro_energy_stamp
{
	uint64_t raw[ASTRO_ENERGY_MAX_ZONES];
};

/** An energy meter. Its functions may be called from any thread at once. */
struct astro_energy_meter
{
	/** What reads the energy ("powercap", "papi-rapl"): named in messages. */
	const char *name;
	/**
	 * Reads, into stamp, the zones that make up the energy of CPU package
	 * package (-1: of every package): the package and its DRAM.
	 * Returns 0 or a negative errno.
	 */
	int (*read)(int package, struct astro_energy_stamp *stamp);
	/** The Joules package (as given to read) consumed from stamp a to stamp b, each zone's wrap-around corrected. */
	double (*joules)(int package, const struct astro_energy_stamp *a, const struct astro_energy_stamp *b);
	/** The package the CPU worker workerid runs on, -1 when not known (then all are read). */
	int (*worker_package)(int workerid);
	/** Room for growth: zero. */
	void *reserved[4];
};

/**
 * Registers the runtime's energy meter (from a plugin's init; the meter
 * must outlive starpu_shutdown()'s plugin fini, where it is dropped with
 * astro_energy_meter_register(NULL)). Returns 0, or -EEXIST when another
 * meter is registered, with an error line.
 */
int astro_energy_meter_register(const struct astro_energy_meter *meter);

/** The registered meter, NULL when nothing measures energy here. */
const struct astro_energy_meter *astro_energy_meter_get(void);

/**
 * Adds joules, the energy a task consumed while worker workerid executed it,
 * to that worker's starpu_profiling_worker_info energy_consumed (which
 * starpu_profiling_worker_get_info() reports and resets as its other
 * figures). Called by the meter's plugin on the worker's own thread at the
 * task's end, while profiling is on; ignored for a bad workerid or a
 * non-positive amount.
 */
void astro_energy_worker_add(int workerid, double joules);

/**
 * The wrap-corrected difference b - a of a raw counter that counts from 0
 * to range and then starts again from 0 (range 0: unknown, a counter that
 * went down counts from 0).
 */
static inline uint64_t astro_energy_raw_delta(uint64_t a, uint64_t b, uint64_t range)
{
	if (b >= a)
		return b - a;
	return range >= a ? range - a + b : b;
}

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_ENERGY_H__ */
