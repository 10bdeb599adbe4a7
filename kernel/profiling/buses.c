/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-bus transfer statistics (starpu_bus_*, STARPU_BUS_STATS): what the
 * transfers observed moved between each pair of memory nodes, and its summary.
 */
#include "profiling/profiling.h"

struct bus
{
	int src, dst;
	int direct, ngpus;
	unsigned long long bytes;      /* atomics: cumulated */
	unsigned long count;
	/* readers (under reader_lock) */
	int64_t start_ns;
	unsigned long long base_bytes;
	unsigned long base_count;
};

static struct bus buses[STARPU_MAXNODES * STARPU_MAXNODES];
static int bus_ids[STARPU_MAXNODES][STARPU_MAXNODES]; /* atomics: -1 when none */
static int nbuses;                                    /* atomic */
static starpu_pthread_mutex_t bus_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

void _astro_prof_buses_reset(void)
{
	starpu_pthread_mutex_lock(&bus_lock);
	for (unsigned s = 0; s < STARPU_MAXNODES; s++)
		for (unsigned d = 0; d < STARPU_MAXNODES; d++)
			__atomic_store_n(&bus_ids[s][d], -1, __ATOMIC_RELAXED);
	memset(buses, 0, sizeof(buses));
	__atomic_store_n(&nbuses, 0, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&bus_lock);
}

/* A bus exists once something went over it. */
static int bus_register(unsigned src, unsigned dst)
{
	starpu_pthread_mutex_lock(&bus_lock);
	int id = __atomic_load_n(&bus_ids[src][dst], __ATOMIC_RELAXED);
	if (id < 0) {
		id = __atomic_load_n(&nbuses, __ATOMIC_RELAXED);
		buses[id].src = (int)src;
		buses[id].dst = (int)dst;
		buses[id].start_ns = _astro_prof_now_ns();
		__atomic_store_n(&nbuses, id + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&bus_ids[src][dst], id, __ATOMIC_RELEASE);
	}
	starpu_pthread_mutex_unlock(&bus_lock);
	return id;
}

void _astro_prof_bus_transfer(unsigned src, unsigned dst, size_t bytes)
{
	if (src == dst || src >= STARPU_MAXNODES || dst >= STARPU_MAXNODES)
		return;
	int id = __atomic_load_n(&bus_ids[src][dst], __ATOMIC_ACQUIRE);
	if (id < 0)
		id = bus_register(src, dst);
	__atomic_add_fetch(&buses[id].bytes, (unsigned long long)bytes, __ATOMIC_RELAXED);
	__atomic_add_fetch(&buses[id].count, 1, __ATOMIC_RELAXED);
}

static bool valid_bus(int busid, const char *fn)
{
	if (busid >= 0 && busid < __atomic_load_n(&nbuses, __ATOMIC_ACQUIRE))
		return true;
	_astro_error("%s: unknown bus %d (%d buses): use an id below starpu_bus_get_count()", fn, busid, starpu_bus_get_count());
	return false;
}

int starpu_bus_get_count(void)
{
	return __atomic_load_n(&nbuses, __ATOMIC_ACQUIRE);
}

int starpu_bus_get_id(int src, int dst)
{
	if (src < 0 || dst < 0 || src >= STARPU_MAXNODES || dst >= STARPU_MAXNODES)
		return -1;
	return __atomic_load_n(&bus_ids[src][dst], __ATOMIC_ACQUIRE);
}

int starpu_bus_get_src(int busid)
{
	return valid_bus(busid, "starpu_bus_get_src") ? buses[busid].src : -1;
}

int starpu_bus_get_dst(int busid)
{
	return valid_bus(busid, "starpu_bus_get_dst") ? buses[busid].dst : -1;
}

void starpu_bus_set_direct(int busid, int direct)
{
	if (valid_bus(busid, "starpu_bus_set_direct"))
		buses[busid].direct = direct;
}

int starpu_bus_get_direct(int busid)
{
	return valid_bus(busid, "starpu_bus_get_direct") ? buses[busid].direct : 0;
}

void starpu_bus_set_ngpus(int busid, int ngpus)
{
	if (valid_bus(busid, "starpu_bus_set_ngpus"))
		buses[busid].ngpus = ngpus;
}

int starpu_bus_get_ngpus(int busid)
{
	if (!valid_bus(busid, "starpu_bus_get_ngpus"))
		return 0;
	if (buses[busid].ngpus)
		return buses[busid].ngpus;
	/* Unknown: assume every GPU shares it. */
	return (int)(starpu_cuda_worker_get_count() + starpu_opencl_worker_get_count() + starpu_hip_worker_get_count());
}

int starpu_bus_get_profiling_info(int busid, struct starpu_profiling_bus_info *bus_info)
{
	if (!valid_bus(busid, "starpu_bus_get_profiling_info"))
		return -EINVAL;
	starpu_pthread_mutex_lock(&_astro_prof_reader_lock);
	struct bus *b = &buses[busid];
	int64_t now = _astro_prof_now_ns();
	unsigned long long bytes = __atomic_load_n(&b->bytes, __ATOMIC_RELAXED);
	unsigned long count = __atomic_load_n(&b->count, __ATOMIC_RELAXED);
	if (bus_info) {
		memset(bus_info, 0, sizeof(*bus_info));
		bus_info->start_time = _astro_prof_timespec_of(b->start_ns);
		bus_info->total_time = _astro_prof_timespec_of(now - b->start_ns);
		bus_info->transferred_bytes = (long long)(bytes - b->base_bytes);
		bus_info->transfer_count = (int)(count - b->base_count);
	}
	b->base_bytes = bytes;
	b->base_count = count;
	b->start_ns = now;
	starpu_pthread_mutex_unlock(&_astro_prof_reader_lock);
	return 0;
}

static double byte_units(double bytes, const char **unit)
{
	static const char *const units[] = { "B", "KB", "MB", "GB", "TB" };
	unsigned u = 0;
	while (bytes > 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		bytes /= 1024;
		u++;
	}
	*unit = units[u];
	return bytes;
}

void _astro_prof_bus_summary(FILE *out)
{
	long long total = 0;
	fprintf(out, "Data transfer stats:\n");
	for (int busid = 0; busid < starpu_bus_get_count(); busid++) {
		struct starpu_profiling_bus_info info;
		if (starpu_bus_get_profiling_info(busid, &info) != 0)
			continue;
		char src[64], dst[64];
		starpu_memory_node_get_name((unsigned)buses[busid].src, src, sizeof(src));
		starpu_memory_node_get_name((unsigned)buses[busid].dst, dst, sizeof(dst));
		const char *unit;
		double amount = byte_units((double)info.transferred_bytes, &unit);
		double seconds = starpu_timing_timespec_to_us(&info.total_time) * 1e-6;
		fprintf(out, "\t%s -> %s\t%.2f %s\t%.2f %s/s\t(transfers : %d - avg %.2f %s)\n", src, dst, amount, unit,
			seconds > 0 ? amount / seconds : 0.0, unit, info.transfer_count,
			info.transfer_count ? amount / info.transfer_count : 0.0, unit);
		total += info.transferred_bytes;
	}
	const char *unit;
	double amount = byte_units((double)total, &unit);
	fprintf(out, "Total transfers: %.2f %s\n", amount, unit);
}

void starpu_profiling_bus_helper_display_summary(void)
{
	if (!_astro_prof_env_positive("STARPU_BUS_STATS"))
		return;
	FILE *out = _astro_prof_summary_open("STARPU_BUS_STATS_FILE");
	_astro_prof_bus_summary(out);
	_astro_prof_summary_close(out, "STARPU_BUS_STATS_FILE");
}

void _astro_prof_buses_rebase(int64_t now)
{
	for (int b = 0; b < __atomic_load_n(&nbuses, __ATOMIC_ACQUIRE); b++) {
		buses[b].base_bytes = __atomic_load_n(&buses[b].bytes, __ATOMIC_RELAXED);
		buses[b].base_count = __atomic_load_n(&buses[b].count, __ATOMIC_RELAXED);
		buses[b].start_ns = now;
	}
}
