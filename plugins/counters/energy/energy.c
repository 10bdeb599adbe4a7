/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * counters_energy: the energy the CPU packages consume, read from Linux
 * powercap (RAPL) zones in sysfs, where they exist and can be read, else
 * from PAPI's rapl component where PAPI has it working. It then
 *   - registers the runtime's energy meter (astrolabe/energy.h):
 *     starpu_energy_start() / starpu_energy_stop() measure with it;
 *   - fills each task's profiling info energy_consumed (watching tasks only
 *     while profiling is on): the
 *     energy of its worker's package and DRAM over the task's execution, as
 *     StarPU fills it from a device-wide counter, so tasks running at once
 *     on one package each count the package's whole energy; energy models
 *     that calibrate are fed from it; and the sum over a worker's tasks
 *     goes to that worker's starpu_profiling_worker_info energy_consumed;
 *   - exports one counter per zone, starpu.energy.g_<zone> (Joules since
 *     starpu_init(), wrap-arounds corrected), which the sampler samples.
 * Where no zone can be read (no powercap, or energy_uj readable by root
 * only), it steps aside quietly: what wanted energy says so in one line.
 *
 * ASTROLABE_SYSFS_ROOT reads another sysfs tree than /sys (a synthetic
 * one, for tests and diagnosis).
 */
#include "powercap.h"

#include <astrolabe/counters.h>
#include <astrolabe/energy.h>
#include <astrolabe/observe.h>
#include <astrolabe/plugin.h>
#include <errno.h>
#include <astrolabe/thread.h>
#include <stdio.h>
#include <string.h>

#define MODULE "counters_energy"

static struct powercap pc;
static const char *root;
static int single_package;                     /* the only package, -1: several */

/* The package of each worker, found at its first task: -2 not yet. */
static int worker_packages[STARPU_NMAXWORKERS];

/* A task's start, kept by its worker (only that worker's thread touches it). */
static struct
{
	unsigned long job_id;
	int package;
	struct astro_energy_stamp stamp;
} __attribute__((aligned(64))) started[STARPU_NMAXWORKERS];

/* The zones' counters: Joules since starpu_init(), under counters_lock. */
static int counter_ids[ASTRO_ENERGY_MAX_ZONES];
static uint64_t last_raw[ASTRO_ENERGY_MAX_ZONES], total_raw[ASTRO_ENERGY_MAX_ZONES];
static starpu_pthread_mutex_t counters_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

static int zone_counts(unsigned z, int package)
{
	return pc.zones[z].in_package && (package < 0 || pc.zones[z].package == package);
}

static int meter_read(int package, struct astro_energy_stamp *stamp)
{
	for (unsigned z = 0; z < pc.nzones; z++)
		if (zone_counts(z, package)) {
			int ret = powercap_read(&pc, z, &stamp->raw[z]);
			if (ret)
				return ret;
		}
	return 0;
}

static double meter_joules(int package, const struct astro_energy_stamp *a, const struct astro_energy_stamp *b)
{
	double joules = 0;
	for (unsigned z = 0; z < pc.nzones; z++)
		if (zone_counts(z, package))
			joules += (double)astro_energy_raw_delta(a->raw[z], b->raw[z], pc.zones[z].range) / pc.zones[z].per_joule;
	return joules;
}

static int meter_worker_package(int workerid)
{
	if (single_package >= 0 || workerid < 0 || workerid >= STARPU_NMAXWORKERS)
		return single_package;
	int package = __atomic_load_n(&worker_packages[workerid], __ATOMIC_RELAXED);
	if (package != -2)
		return package;
	package = powercap_cpu_package(root, starpu_worker_get_bindid(workerid));
	int known = 0;
	for (unsigned z = 0; z < pc.nzones; z++)
		known |= pc.zones[z].in_package && pc.zones[z].package == package;
	package = known ? package : -1;
	__atomic_store_n(&worker_packages[workerid], package, __ATOMIC_RELAXED);
	return package;
}

static struct astro_energy_meter meter = {
	.name = "Linux powercap",
	.read = meter_read,
	.joules = meter_joules,
	.worker_package = meter_worker_package,
};

/* --------------------------------------------------------------- per task */

static int subscription = -1;

#define TASK_MOMENTS (ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED))
#define STATUS_MOMENTS \
	(ASTRO_OBSERVE_UNTIMED | ASTRO_MOMENT_BIT(ASTRO_MOMENT_RUNTIME_INIT_END) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_PROFILING_STATUS))

/* Tasks are watched only while profiling is on (they have no info to fill otherwise): off, it costs them nothing. */
static void follow_profiling(void)
{
	astro_observe_set_mask(subscription, STATUS_MOMENTS | (starpu_profiling_status_get() == STARPU_PROFILING_ENABLE ? TASK_MOMENTS : 0));
}

static void on_event(const struct astro_event *ev, void *arg)
{
	(void)arg;
	if (ev->moment == ASTRO_MOMENT_RUNTIME_INIT_END || ev->moment == ASTRO_MOMENT_PROFILING_STATUS) {
		follow_profiling();
		return;
	}
	struct starpu_profiling_task_info *info = ev->task ? ev->task->profiling_info : NULL;
	if (!info || ev->workerid < 0 || ev->workerid >= STARPU_NMAXWORKERS ||
	    starpu_worker_get_type(ev->workerid) != STARPU_CPU_WORKER)
		return;
	__typeof__(started[0]) *s = &started[ev->workerid];
	if (ev->moment == ASTRO_MOMENT_TASK_STARTED) {
		s->package = meter_worker_package(ev->workerid);
		s->job_id = meter_read(s->package, &s->stamp) == 0 ? ev->job_id : 0;
		return;
	}
	struct astro_energy_stamp end;
	if (s->job_id == ev->job_id && meter_read(s->package, &end) == 0) {
		info->energy_consumed = meter_joules(s->package, &s->stamp, &end);
		astro_energy_worker_add(ev->workerid, info->energy_consumed);
	}
	s->job_id = 0;
}

/* --------------------------------------------------------------- counters */

static void update_global(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	(void)context;
	(void)arg;
	starpu_pthread_mutex_lock(&counters_lock);
	for (unsigned z = 0; z < pc.nzones; z++) {
		if (!astro_counter_sample_wants(sample, counter_ids[z]))
			continue;
		uint64_t raw;
		if (powercap_read(&pc, z, &raw) == 0) {
			total_raw[z] += astro_energy_raw_delta(last_raw[z], raw, pc.zones[z].range);
			last_raw[z] = raw;
		}
		astro_counter_sample_set_double(sample, counter_ids[z], (double)total_raw[z] / pc.zones[z].per_joule);
	}
	starpu_pthread_mutex_unlock(&counters_lock);
}

static int register_counters(void)
{
	for (unsigned z = 0; z < pc.nzones; z++) {
		char name[160], help[200];
		snprintf(name, sizeof(name), "starpu.energy.g_%s", pc.zones[z].name);
		snprintf(help, sizeof(help), "energy consumed by powercap zone %s since starpu_init()", pc.zones[z].name);
		counter_ids[z] = astro_counter_register(MODULE, starpu_perf_counter_scope_global, name, starpu_perf_counter_type_double,
							ASTRO_COUNTER_MONOTONIC, "J", help);
		if (counter_ids[z] < 0)
			return counter_ids[z];
		if (powercap_read(&pc, z, &last_raw[z]))
			last_raw[z] = 0;
		total_raw[z] = 0;
	}
	return astro_counter_register_updater(MODULE, starpu_perf_counter_scope_global, update_global, NULL);
}

/* ------------------------------------------------------------------ plugin */

static int init(void)
{
	char why[4400], why_papi[400];
	root = powercap_sysfs_root();
	if (!powercap_open(&pc, root, why, sizeof(why)) && !papi_rapl_open(&pc, why_papi, sizeof(why_papi))) {
		astro_log_info(MODULE, "no energy is measured: %s; %s", why, why_papi);
		return ASTRO_PLUGIN_DECLINE;
	}
	/* With one package (the common case), every worker is on it: no topology to read. */
	meter.name = pc.zones[0].fd < 0 ? "PAPI's rapl component" : "Linux powercap";
	single_package = -2;
	for (unsigned z = 0; z < pc.nzones; z++)
		if (pc.zones[z].in_package)
			single_package = single_package == -2 || single_package == pc.zones[z].package ? pc.zones[z].package : -1;
	if (single_package == -2)
		single_package = -1;
	for (int w = 0; w < STARPU_NMAXWORKERS; w++)
		worker_packages[w] = -2;
	memset(started, 0, sizeof(started));
	int ret = register_counters();
	if (ret == 0)
		ret = astro_energy_meter_register(&meter);
	if (ret == 0) {
		subscription = astro_observe_subscribe(STATUS_MOMENTS, on_event, NULL);
		ret = subscription < 0 ? subscription : 0;
	}
	if (ret) {
		astro_energy_meter_register(NULL);
		powercap_close(&pc);
	}
	return ret;
}

static void fini(void)
{
	/* The kernel drops the subscription itself at shutdown. */
	if (astro_energy_meter_get() == &meter)
		astro_energy_meter_register(NULL);
	powercap_close(&pc);
}

ASTRO_PLUGIN_DEFINE(counters_energy, ASTRO_PLUGIN_COUNTERS, "CPU packages' energy from Linux powercap: starpu_energy_*, energy_consumed, counters",
		    init, fini);
