/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Energy zones: Linux powercap (RAPL) zones read through sysfs,
 * <root>/class/powercap/intel-rapl:<N>[:<M>]/{name,energy_uj,max_energy_range_uj}
 * (root is "/sys" unless ASTROLABE_SYSFS_ROOT names another tree: a
 * synthetic one for tests and diagnosis, as HWLOC_FSROOT does for hwloc),
 * or, where none can be read, the energy events of PAPI's rapl component.
 */
#ifndef __ASTRO_POWERCAP_H__
#define __ASTRO_POWERCAP_H__

#include <astrolabe/energy.h>
#include <stddef.h>
#include <stdint.h>

struct powercap_zone
{
	char name[96];      /* "package-0", "package-0.dram", "psys" */
	int package;        /* the CPU package it belongs to, -1: none (psys) */
	int in_package;     /* 1: part of its package's energy (the package zone and its DRAM; core/uncore are within the package's) */
	int fd;             /* energy_uj, kept open; -1: PAPI event papi_index */
	int papi_index;
	uint64_t range;     /* raw values wrap there (max_energy_range_uj; 0: unknown or never) */
	double per_joule;   /* raw units per Joule (µJ for powercap: 1e6; nJ for PAPI's rapl: 1e9) */
};

struct powercap
{
	struct powercap_zone zones[ASTRO_ENERGY_MAX_ZONES];
	unsigned nzones;
};

/** The sysfs root: ASTROLABE_SYSFS_ROOT, else "/sys". */
const char *powercap_sysfs_root(void);

/**
 * Opens the zones under root whose energy_uj reads. Returns how many (0:
 * none, with why saying what was found: no powercap, unreadable files...).
 */
unsigned powercap_open(struct powercap *pc, const char *root, char *why, size_t whylen);
void powercap_close(struct powercap *pc);

/** Reads zone z's raw value: 0 or a negative errno. */
int powercap_read(const struct powercap *pc, unsigned z, uint64_t *raw);

/**
 * Adds the package and DRAM energy events of PAPI's rapl component as zones
 * and starts counting them. Returns how many (0: none, with why).
 */
unsigned papi_rapl_open(struct powercap *pc, char *why, size_t whylen);
/**
 * The same from PAPI component component: its events named
 * <prefix>PACKAGE_ENERGY:PACKAGE<k> and <prefix>DRAM_ENERGY:PACKAGE<k>, in nJ
 * (papi_rapl_open() is it for "rapl", after checking the msr device).
 * One component at a time.
 */
unsigned papi_energy_open(struct powercap *pc, const char *component, char *why, size_t whylen);
/** The current value of PAPI rapl event index: 0 or a negative errno. */
int papi_rapl_read(int index, uint64_t *raw);
void papi_rapl_close(void);

/** The package of logical CPU cpu (its physical_package_id under root), -1 when unknown. */
int powercap_cpu_package(const char *root, int cpu);

#endif /* __ASTRO_POWERCAP_H__ */
