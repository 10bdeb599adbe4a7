/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PAPI's rapl component as energy zones, where Linux powercap cannot be
 * read (PAPI reads the RAPL registers through /dev/cpu/N/msr): the
 * PACKAGE_ENERGY and DRAM_ENERGY events of each package, in nJ, which PAPI
 * accumulates on 64 bits (no wrap-around to correct). The events are
 * package-wide: one event set, started at init and read under a lock by
 * whichever thread measures. (PAPI's powercap component reads the same
 * sysfs files as powercap.c: where it works, powercap.c does.)
 *
 * Any PAPI component whose events end in PACKAGE_ENERGY:PACKAGE<k> or
 * DRAM_ENERGY:PACKAGE<k> reads the same way (papi_energy_open()): the tests
 * run this path on PAPI's sde component, with events of their own, where no
 * RAPL register can be read.
 */
#include "powercap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_PAPI
#include <papi.h>
#include <astrolabe/thread.h>

static int set = PAPI_NULL;
static int nevents;
static long long values[ASTRO_ENERGY_MAX_ZONES];
static starpu_pthread_mutex_t lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* "PACKAGE_ENERGY:PACKAGE<k>" (dram 0) or "DRAM_ENERGY:PACKAGE<k>" (dram 1) after the component's
 * prefix ("rapl:::", "sde:::LIB::"): its package; -1 otherwise. */
static int energy_event(const char *name, int *dram)
{
	const char *event = name;
	for (const char *p = strstr(name, "::"); p; p = strstr(p + 1, "::"))
		event = p + 2;
	int package, end = 0;
	*dram = strncmp(event, "DRAM_ENERGY:", 12) == 0;
	const char *pattern = *dram ? "DRAM_ENERGY:PACKAGE%d%n" : "PACKAGE_ENERGY:PACKAGE%d%n";
	if (sscanf(event, pattern, &package, &end) == 1 && event[end] == '\0')
		return package;
	return -1;
}

unsigned papi_rapl_open(struct powercap *pc, char *why, size_t whylen)
{
	/* PAPI's rapl component reads the registers through these: without them, no need to start PAPI. */
	if (access("/dev/cpu/0/msr", R_OK) != 0 && access("/dev/cpu/0/msr_safe", R_OK) != 0) {
		snprintf(why, whylen, "/dev/cpu/0/msr cannot be read either (PAPI's rapl component needs it)");
		return 0;
	}
	return papi_energy_open(pc, "rapl", why, whylen);
}

unsigned papi_energy_open(struct powercap *pc, const char *component, char *why, size_t whylen)
{
	starpu_pthread_mutex_lock(&lock);
	int open = set != PAPI_NULL;
	starpu_pthread_mutex_unlock(&lock);
	if (open) {
		snprintf(why, whylen, "PAPI energy events are already read (one event set at a time)");
		return 0;
	}
	/* Initialised as counters_papi_task does: event sets in several threads. */
	if (!PAPI_is_initialized() &&
	    (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT || PAPI_thread_init(astro_thread_id) != PAPI_OK)) {
		snprintf(why, whylen, "PAPI could not be initialised");
		return 0;
	}
	int cid = PAPI_get_component_index(component);
	const PAPI_component_info_t *info = cid >= 0 ? PAPI_get_component_info(cid) : NULL;
	if (!info) {
		snprintf(why, whylen, "this PAPI has no %s component", component);
		return 0;
	}
	if (info->disabled) {
		snprintf(why, whylen, "PAPI's %s component is disabled (%s)", component, info->disabled_reason);
		return 0;
	}
	/* Made aside, published under the lock once it counts. */
	int es = PAPI_NULL, n = 0;
	if (PAPI_create_eventset(&es) != PAPI_OK) {
		snprintf(why, whylen, "PAPI cannot make an event set for its %s component", component);
		return 0;
	}
	int code = PAPI_NATIVE_MASK;
	for (int ret = PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cid); ret == PAPI_OK && pc->nzones < ASTRO_ENERGY_MAX_ZONES;
	     ret = PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cid)) {
		char name[PAPI_MAX_STR_LEN];
		int dram;
		if (PAPI_event_code_to_name(code, name) != PAPI_OK)
			continue;
		int package = energy_event(name, &dram);
		if (package < 0 || PAPI_add_event(es, code) != PAPI_OK)
			continue;
		struct powercap_zone *z = &pc->zones[pc->nzones++];
		memset(z, 0, sizeof(*z));
		snprintf(z->name, sizeof(z->name), dram ? "package-%d.dram" : "package-%d", package);
		z->package = package;
		z->in_package = 1;
		z->fd = -1;
		z->papi_index = n++;
		z->per_joule = 1e9;
	}
	if (!n || PAPI_start(es) != PAPI_OK) {
		if (n)
			snprintf(why, whylen, "PAPI cannot start its %s component's energy events", component);
		else
			snprintf(why, whylen, "PAPI's %s component has no package energy event (PACKAGE_ENERGY:PACKAGE<k>)", component);
		pc->nzones -= (unsigned)n;
		PAPI_cleanup_eventset(es);
		PAPI_destroy_eventset(&es);
		return 0;
	}
	starpu_pthread_mutex_lock(&lock);
	set = es;
	nevents = n;
	starpu_pthread_mutex_unlock(&lock);
	return (unsigned)n;
}

int papi_rapl_read(int index, uint64_t *raw)
{
	starpu_pthread_mutex_lock(&lock);
	int ret = set != PAPI_NULL && index >= 0 && index < nevents && PAPI_read(set, values) == PAPI_OK ? 0 : -EIO;
	if (!ret)
		*raw = (uint64_t)values[index];
	starpu_pthread_mutex_unlock(&lock);
	return ret;
}

void papi_rapl_close(void)
{
	starpu_pthread_mutex_lock(&lock);
	if (set != PAPI_NULL) {
		long long ignored[ASTRO_ENERGY_MAX_ZONES];
		PAPI_stop(set, ignored);
		PAPI_cleanup_eventset(set);
		PAPI_destroy_eventset(&set);
		set = PAPI_NULL;
	}
	nevents = 0;
	starpu_pthread_mutex_unlock(&lock);
}

#else /* !HAVE_PAPI */

unsigned papi_rapl_open(struct powercap *pc, char *why, size_t whylen)
{
	return papi_energy_open(pc, "rapl", why, whylen);
}

unsigned papi_energy_open(struct powercap *pc, const char *component, char *why, size_t whylen)
{
	(void)pc;
	snprintf(why, whylen, "built without PAPI (libpapi-dev) for its %s component", component);
	return 0;
}

int papi_rapl_read(int index, uint64_t *raw)
{
	(void)index, (void)raw;
	return -ENODEV;
}

void papi_rapl_close(void)
{
}

#endif /* HAVE_PAPI */
