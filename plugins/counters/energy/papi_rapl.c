/*
 * PAPI's rapl component as energy zones, where Linux powercap cannot be
 * read (PAPI reads the RAPL registers through /dev/cpu/N/msr): the
 * PACKAGE_ENERGY and DRAM_ENERGY events of each package, in nJ, which PAPI
 * accumulates on 64 bits (no wrap-around to correct). The events are
 * package-wide: one event set, started at init and read under a lock by
 * whichever thread measures. (PAPI's powercap component reads the same
 * sysfs files as powercap.c: where it works, powercap.c does.)
 */
#include "powercap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_PAPI
#include <papi.h>
#include <pthread.h>

static int set = PAPI_NULL;
static int nevents;
static long long values[ASTRO_ENERGY_MAX_ZONES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* "PACKAGE_ENERGY:PACKAGE<k>" (dram 0) or "DRAM_ENERGY:PACKAGE<k>" (dram 1) after the component's prefix; -1 otherwise. */
static int energy_event(const char *name, int *dram)
{
	const char *event = strstr(name, ":::");
	event = event ? event + 3 : name;
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
	/* Initialised as counters_papi_task does: event sets in several threads. */
	if (!PAPI_is_initialized() &&
	    (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT || PAPI_thread_init(pthread_self) != PAPI_OK)) {
		snprintf(why, whylen, "PAPI could not be initialised");
		return 0;
	}
	int cid = PAPI_get_component_index("rapl");
	const PAPI_component_info_t *info = cid >= 0 ? PAPI_get_component_info(cid) : NULL;
	if (!info) {
		snprintf(why, whylen, "this PAPI has no rapl component");
		return 0;
	}
	if (info->disabled) {
		snprintf(why, whylen, "PAPI's rapl component is disabled (%s)", info->disabled_reason);
		return 0;
	}
	if (PAPI_create_eventset(&set) != PAPI_OK) {
		snprintf(why, whylen, "PAPI cannot make an event set for its rapl component");
		return 0;
	}
	nevents = 0;
	int code = PAPI_NATIVE_MASK;
	for (int ret = PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cid); ret == PAPI_OK && pc->nzones < ASTRO_ENERGY_MAX_ZONES;
	     ret = PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cid)) {
		char name[PAPI_MAX_STR_LEN];
		int dram;
		if (PAPI_event_code_to_name(code, name) != PAPI_OK)
			continue;
		int package = energy_event(name, &dram);
		if (package < 0 || PAPI_add_event(set, code) != PAPI_OK)
			continue;
		struct powercap_zone *z = &pc->zones[pc->nzones++];
		memset(z, 0, sizeof(*z));
		snprintf(z->name, sizeof(z->name), dram ? "package-%d.dram" : "package-%d", package);
		z->package = package;
		z->in_package = 1;
		z->fd = -1;
		z->papi_index = nevents++;
		z->per_joule = 1e9;
	}
	if (!nevents || PAPI_start(set) != PAPI_OK) {
		snprintf(why, whylen, nevents ? "PAPI cannot start its rapl events" : "PAPI's rapl component has no package energy event");
		pc->nzones -= (unsigned)nevents;
		papi_rapl_close();
		return 0;
	}
	return (unsigned)nevents;
}

int papi_rapl_read(int index, uint64_t *raw)
{
	pthread_mutex_lock(&lock);
	int ret = set != PAPI_NULL && index < nevents && PAPI_read(set, values) == PAPI_OK ? 0 : -EIO;
	if (!ret)
		*raw = (uint64_t)values[index];
	pthread_mutex_unlock(&lock);
	return ret;
}

void papi_rapl_close(void)
{
	pthread_mutex_lock(&lock);
	if (set != PAPI_NULL) {
		long long ignored[ASTRO_ENERGY_MAX_ZONES];
		PAPI_stop(set, ignored);
		PAPI_cleanup_eventset(set);
		PAPI_destroy_eventset(&set);
		set = PAPI_NULL;
	}
	nevents = 0;
	pthread_mutex_unlock(&lock);
}

#else /* !HAVE_PAPI */

unsigned papi_rapl_open(struct powercap *pc, char *why, size_t whylen)
{
	(void)pc;
	snprintf(why, whylen, "built without PAPI (libpapi-dev) for its rapl component");
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
