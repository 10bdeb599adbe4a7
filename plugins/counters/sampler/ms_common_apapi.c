/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libms_common_apapi: libmeasure's libms_common interface (ms_measurement.h)
 * measured with APAPI. Each resource is one PAPI component sampled by the
 * APAPI timer thread; at ms_join_measurement() the statistics of its events
 * are written into the resource's structure: an event whose value (value0
 * or value1, in its event operation's unit) is an energy gives the
 * accumulated energy, one that is a power gives the time-weighted average
 * power (and, without an energy, the energy as that average over the time
 * sampled). So default_eventops.txt's rapl energies (Ws, their rate in W)
 * and nvml powers (W, their integral in Ws) are mapped, and so is an event
 * without a definition whose PAPI unit is nJ, uJ, mJ, J or mW, W.
 */
#include "ms_common_apapi.h"
#include "sources.h"

#include <astrolabe/plugin.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "libms_common_apapi"

/* The resources in libmeasure's order and the PAPI component measuring each (APAPI's mapping). */
static const struct
{
	int flag;
	const char *cmp;
	const char *name;
} resources[MS_APAPI_NRESOURCES] = {
	{ CPU, "rapl", "CPU" }, { GPU, "nvml", "GPU" }, { FPGA, "maxeler", "FPGA" },
	{ SYSTEM, "ipmi", "SYSTEM" }, { MIC, "micknc", "MIC" },
};

enum state
{
	STATE_IDLE,      /* no measurement prepared */
	STATE_READY,     /* ms_init_measurement() */
	STATE_RUNNING,   /* ms_start_measurement() */
	STATE_STOPPING,  /* ms_stop_measurement() */
	STATE_DONE       /* ms_join_measurement(): results in the list */
};

struct mgmt
{
	MS_CONFIG config;
	int verbose, softfail;
	struct apapi_config cfg;     /* the components of the resources enabled */
	struct apapi_sampler sampler;
	MS_LIST *list;
	enum state state;
};

static int resource_index(int flag)
{
	for (int i = 0; i < MS_APAPI_NRESOURCES; i++)
		if (resources[i].flag == flag)
			return i;
	return -1;
}

int ms_apapi_resource_of(const char *cmp)
{
	for (int i = 0; i < MS_APAPI_NRESOURCES; i++)
		if (strcmp(resources[i].cmp, cmp) == 0)
			return resources[i].flag;
	return 0;
}

static int32_t *enabled_flag(MS_CONFIG *config, int flag)
{
	switch (flag) {
	case CPU: return &config->cpu_enabled;
	case GPU: return &config->gpu_enabled;
	case FPGA: return &config->fpga_enabled;
	case SYSTEM: return &config->sys_enabled;
	default: return &config->mic_enabled;
	}
}

/* ---------------------------------------------------------------- list */

static size_t measurement_size(int id)
{
	switch (id) {
	case CPU: return sizeof(MS_MEASUREMENT_CPU);
	case GPU: return sizeof(MS_MEASUREMENT_GPU);
	case FPGA: return sizeof(MS_MEASUREMENT_FPGA);
	case SYSTEM: return sizeof(MS_MEASUREMENT_SYS);
	case MIC: return sizeof(MS_MEASUREMENT_MIC);
	default: return 0;
	}
}

/* The interval of a measurement: each structure starts with its struct timespec *_time_wait. */
static struct timespec *time_wait(void *measurement)
{
	return measurement;
}

void appendList(MS_LIST **ms_list, int id)
{
	if (!ms_list || !measurement_size(id)) {
		astro_log_error("appendList", "%s: give the address of a list and one of CPU, GPU, FPGA, SYSTEM, MIC",
				ms_list ? "unknown resource" : "NULL list");
		return;
	}
	if (getMeasurement(ms_list, id))
		return;
	MS_LIST *node = calloc(1, sizeof(*node));
	void *m = calloc(1, measurement_size(id));
	if (!node || !m) {
		free(node);
		free(m);
		astro_log_error("appendList", "out of memory");
		return;
	}
	time_wait(m)->tv_nsec = APAPI_DEFAULT_INTERVAL_NS;
	node->resource_id = id;
	node->ms_measurement = m;
	MS_LIST **end = ms_list;
	while (*end)
		end = &(*end)->next;
	*end = node;
}

void *getMeasurement(MS_LIST **ms_list, int id)
{
	for (MS_LIST *n = ms_list ? *ms_list : NULL; n; n = n->next)
		if (n->resource_id == id)
			return n->ms_measurement;
	return NULL;
}

void deleteList(MS_LIST **ms_list)
{
	if (!ms_list)
		return;
	while (*ms_list) {
		MS_LIST *n = *ms_list;
		*ms_list = n->next;
		free(n->ms_measurement);
		free(n);
	}
}

/* -------------------------------------------------------------- system */

static void say_machine_settings(enum cpu_governor cpu_gov, uint64_t cpu_freq_min, uint64_t cpu_freq_max,
				 enum gpu_frequency gpu_freq)
{
	if (cpu_gov != CPU_GOVERNOR_ONDEMAND || cpu_freq_min || cpu_freq_max || gpu_freq != GPU_FREQUENCY_CUR)
		astro_log_error(WHAT, "it only measures: the CPU governor and frequencies and the GPU frequency asked for are left "
				"as the machine has them (set them with cpupower and nvidia-smi; pass CPU_GOVERNOR_ONDEMAND, 0, 0, "
				"GPU_FREQUENCY_CUR to ms_init() to leave them)");
}

/* Keeps the components of cfg that measure a resource; says the others once. */
static void keep_resource_components(struct apapi_config *cfg)
{
	if (cfg->default_components) {
		for (unsigned i = 0; i < cfg->ncomponents; i++)
			free(cfg->components[i]);
		cfg->ncomponents = 0;
		char **list = realloc(cfg->components, MS_APAPI_NRESOURCES * sizeof(*list));
		if (!list)
			return;
		cfg->components = list;
		for (int i = 0; i < MS_APAPI_NRESOURCES; i++)
			if ((list[cfg->ncomponents] = strdup(resources[i].cmp)))
				cfg->ncomponents++;
		return;
	}
	char dropped[512] = "";
	unsigned kept = 0;
	for (unsigned i = 0; i < cfg->ncomponents; i++) {
		if (ms_apapi_resource_of(cfg->components[i])) {
			cfg->components[kept++] = cfg->components[i];
			continue;
		}
		size_t len = strlen(dropped);
		snprintf(dropped + len, sizeof(dropped) - len, "%s%s", len ? ", " : "", cfg->components[i]);
		free(cfg->components[i]);
	}
	cfg->ncomponents = kept;
	if (*dropped)
		astro_log_error(WHAT, "APAPI_CMPLIST names %s: libms_common measures only the components rapl, nvml, maxeler, "
				"ipmi, micknc (CPU, GPU, FPGA, SYSTEM, MIC); the others are left out (atime samples any component)",
				dropped);
}

MS_SYSTEM *ms_init(MS_VERSION *version, enum cpu_governor cpu_gov, uint64_t cpu_freq_min, uint64_t cpu_freq_max,
		   enum gpu_frequency gpu_freq, enum ipmi_timeout_setting timeout_setting, enum skip_ms_rate skip_ms,
		   enum lib_variant variant)
{
	if (!version || version->major != MS_MAJOR_VERSION || version->minor != MS_MINOR_VERSION) {
		if (version)
			astro_log_error("ms_init", "the program was built for libmeasure %u.%u.%u, this library offers %s: build it "
					"again with this ms_measurement.h", version->major, version->minor, version->revision, MS_VERSION_STRING);
		else
			astro_log_error("ms_init", "NULL version: pass { MS_MAJOR_VERSION, MS_MINOR_VERSION, MS_REVISION_VERSION }");
		return NULL;
	}
	if ((unsigned)timeout_setting >= IPMI_TIMEOUT_SETTINGS || (unsigned)skip_ms >= SKIP_MS_RATES || (unsigned)variant >= VARIANTS ||
	    (unsigned)cpu_gov >= CPU_GOVERNORS || (unsigned)gpu_freq >= GPU_FREQUENCIES) {
		astro_log_error("ms_init", "a setting is out of its enum (cpu_governor, gpu_frequency, ipmi_timeout_setting, "
				"skip_ms_rate, lib_variant): pass one of their values");
		return NULL;
	}
	say_machine_settings(cpu_gov, cpu_freq_min, cpu_freq_max, gpu_freq);
	MS_SYSTEM *ms = calloc(1, sizeof(*ms));
	struct mgmt *mgmt = calloc(1, sizeof(*mgmt));
	if (!ms || !mgmt) {
		free(ms);
		free(mgmt);
		astro_log_error("ms_init", "out of memory");
		return NULL;
	}
	ms->mgmt = mgmt;
	ms->config = &mgmt->config;
	if (apapi_config_load(&mgmt->cfg, SAMPLER_DATADIR) < 0) {
		apapi_config_clear(&mgmt->cfg);
		free(mgmt);
		free(ms);
		return NULL;
	}
	mgmt->verbose = mgmt->cfg.verbose;
	mgmt->softfail = mgmt->cfg.softfail;
	keep_resource_components(&mgmt->cfg);

	/* Which resources this machine measures; the components it lacks are left out. */
	char skipped[512] = "";
	unsigned kept = 0;
	for (unsigned i = 0; i < mgmt->cfg.ncomponents; i++) {
		const char *cmp = mgmt->cfg.components[i], *why = "";
		if (apapi_papi_available(cmp, mgmt->verbose, &why) >= 0) {
			*enabled_flag(&mgmt->config, ms_apapi_resource_of(cmp)) = 1;
			mgmt->cfg.components[kept++] = mgmt->cfg.components[i];
			continue;
		}
		size_t len = strlen(skipped);
		snprintf(skipped + len, sizeof(skipped) - len, "%s%s (%s)", len ? ", " : "", cmp, why);
		free(mgmt->cfg.components[i]);
	}
	mgmt->cfg.ncomponents = kept;
	if (*skipped && !mgmt->softfail) {
		if (!kept)
			fprintf(stderr, "[astrolabe] note: " WHAT ": no energy counter on this machine: only the time is measured\n");
		if (mgmt->verbose || (kept && !mgmt->cfg.default_components))
			fprintf(stderr, "[astrolabe] note: " WHAT ": components not available here: %s\n", skipped);
	}
	return ms;
}

static struct mgmt *mgmt_of(const char *what, MS_SYSTEM *ms_system)
{
	if (!ms_system || !ms_system->mgmt) {
		astro_log_error(what, "NULL measuring system: pass what ms_init() returned");
		return NULL;
	}
	return ms_system->mgmt;
}

void ms_fini(MS_SYSTEM *ms_system)
{
	struct mgmt *mgmt = mgmt_of("ms_fini", ms_system);
	if (!mgmt)
		return;
	if (mgmt->state != STATE_IDLE)
		ms_fini_measurement(ms_system);
	apapi_config_clear(&mgmt->cfg);
	free(mgmt);
	free(ms_system);
}

MS_LIST *ms_alloc_measurement(MS_SYSTEM *ms_system)
{
	if (!mgmt_of("ms_alloc_measurement", ms_system))
		return NULL;
	MS_LIST *list = NULL;
	for (int i = 0; i < MS_APAPI_NRESOURCES; i++)
		appendList(&list, resources[i].flag);
	return list;
}

void ms_free_measurement(MS_LIST *ms_list)
{
	deleteList(&ms_list);
}

void ms_set_timer(MS_LIST *ms_list, int flag, uint64_t sec, uint64_t nsec, uint32_t check_for_exit_interrupts)
{
	(void)check_for_exit_interrupts;
	void *m = getMeasurement(&ms_list, flag);
	if (!m) {
		astro_log_error("ms_set_timer", "%s: pass what ms_alloc_measurement() returned and one of CPU, GPU, FPGA, SYSTEM, MIC",
				ms_list ? "unknown resource flag" : "NULL list");
		return;
	}
	if (sec == 0 && nsec == 0) {
		astro_log_error("ms_set_timer", "an interval of 0 for %s: give at least 1 ns (the default is 100 ms)",
				resources[resource_index(flag)].name);
		return;
	}
	time_wait(m)->tv_sec = (time_t)(sec + nsec / 1000000000u);
	time_wait(m)->tv_nsec = (long)(nsec % 1000000000u);
}

/* "cmp:ns:cmp:ns", atime's -t, from the list's intervals. */
static void intervals_of(const struct mgmt *mgmt, MS_LIST *list, char *spec, size_t size)
{
	*spec = '\0';
	for (unsigned i = 0; i < mgmt->cfg.ncomponents; i++) {
		const char *cmp = mgmt->cfg.components[i];
		const struct timespec *t = time_wait(getMeasurement(&list, ms_apapi_resource_of(cmp)));
		size_t len = strlen(spec);
		snprintf(spec + len, size - len, "%s%s:%llu", len ? ":" : "", cmp,
			 (unsigned long long)t->tv_sec * 1000000000ull + (unsigned long long)t->tv_nsec);
	}
}

void ms_init_measurement(MS_SYSTEM *ms_system, MS_LIST *ms_list, int flags)
{
	const char *what = "ms_init_measurement";
	struct mgmt *mgmt = mgmt_of(what, ms_system);
	if (!mgmt)
		return;
	if (!ms_list || (flags & ~ALL) || !flags) {
		astro_log_error(what, "%s: pass what ms_alloc_measurement() returned and flags of CPU, GPU, FPGA, SYSTEM, MIC (or ALL)",
				ms_list ? "bad flags" : "NULL list");
		return;
	}
	if (mgmt->state != STATE_IDLE) {
		astro_log_error(what, "a measurement is already prepared: call ms_fini_measurement() first");
		return;
	}
	/* Only the components of the resources asked for. */
	struct apapi_config cfg = mgmt->cfg;
	char *asked[MS_APAPI_NRESOURCES];
	cfg.components = asked;
	cfg.ncomponents = 0;
	for (unsigned i = 0; i < mgmt->cfg.ncomponents; i++)
		if (flags & ms_apapi_resource_of(mgmt->cfg.components[i]))
			asked[cfg.ncomponents++] = mgmt->cfg.components[i];
	char spec[512];
	intervals_of(mgmt, ms_list, spec, sizeof(spec));
	apapi_sampler_init(&mgmt->sampler);
	apapi_sources_add(&mgmt->sampler, &cfg, spec, NULL);
	mgmt->list = ms_list;
	mgmt->state = STATE_READY;
}

void ms_fini_measurement(MS_SYSTEM *ms_system)
{
	struct mgmt *mgmt = mgmt_of("ms_fini_measurement", ms_system);
	if (!mgmt)
		return;
	if (mgmt->state == STATE_IDLE) {
		astro_log_error("ms_fini_measurement", "no measurement is prepared: call ms_init_measurement() first");
		return;
	}
	apapi_sampler_clear(&mgmt->sampler);
	starpu_pthread_mutex_destroy(&mgmt->sampler.lock);
	starpu_pthread_cond_destroy(&mgmt->sampler.cond);
	apapi_papi_clear();
	mgmt->list = NULL;
	mgmt->state = STATE_IDLE;
}

static int in_state(const char *what, struct mgmt *mgmt, enum state state, const char *call_first)
{
	if (!mgmt)
		return 0;
	if (mgmt->state == state)
		return 1;
	astro_log_error(what, "called out of order: call %s first", call_first);
	return 0;
}

void ms_start_measurement(MS_SYSTEM *ms_system)
{
	const char *what = "ms_start_measurement";
	struct mgmt *mgmt = mgmt_of(what, ms_system);
	if (!in_state(what, mgmt, STATE_READY, "ms_init_measurement() (once per measurement)"))
		return;
	/* The runtimes count from here even when no component is sampled. */
	if (apapi_sampler_start(&mgmt->sampler) == 0)
		mgmt->state = STATE_RUNNING;
}

void ms_stop_measurement(MS_SYSTEM *ms_system)
{
	const char *what = "ms_stop_measurement";
	struct mgmt *mgmt = mgmt_of(what, ms_system);
	if (!in_state(what, mgmt, STATE_RUNNING, "ms_start_measurement()"))
		return;
	apapi_sampler_request_stop(&mgmt->sampler);
	mgmt->state = STATE_STOPPING;
}

void ms_join_measurement(MS_SYSTEM *ms_system)
{
	const char *what = "ms_join_measurement";
	struct mgmt *mgmt = mgmt_of(what, ms_system);
	if (!in_state(what, mgmt, STATE_STOPPING, "ms_stop_measurement()"))
		return;
	apapi_sampler_join(&mgmt->sampler);
	ms_apapi_fill(&mgmt->sampler, mgmt->list);
	mgmt->state = STATE_DONE;
}

/* ------------------------------------------------------------- results */

/* The scale of unit to Ws (energy, 1) or W (power, 2); 0 for neither. */
static int unit_kind(const char *unit, double *scale)
{
	static const struct
	{
		const char *unit;
		double scale;
		int kind;
	} units[] = {
		{ "Ws", 1, 1 }, { "J", 1, 1 }, { "mWs", 1e-3, 1 }, { "mJ", 1e-3, 1 }, { "uJ", 1e-6, 1 }, { "nJ", 1e-9, 1 },
		{ "W", 1, 2 }, { "mW", 1e-3, 2 }, { "uW", 1e-6, 2 },
		/* A rate of an energy is a power. */
		{ "Ws/s", 1, 2 }, { "J/s", 1, 2 }, { "mJ/s", 1e-3, 2 }, { "uJ/s", 1e-6, 2 }, { "nJ/s", 1e-9, 2 },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (unit && strcmp(unit, units[i].unit) == 0) {
			*scale = units[i].scale;
			return units[i].kind;
		}
	return 0;
}

/* The energy (Ws) and average and last power (W) ev measured; 0 when it measures none. */
static int event_energy(const struct apapi_event *ev, double *energy, double *power_avg, double *power_cur)
{
	int found = 0;
	double covered_s = 0;
	*energy = *power_avg = *power_cur = 0;
	for (int v = 0; v < 2; v++) {
		double scale;
		int kind = unit_kind(ev->op.unit[v], &scale);
		if (kind == 1 && apapi_stat_shown(ev, v, 3)) {
			*energy = apapi_stat_printed(ev, v, 3) * scale;
			found |= 1;
		} else if (kind == 2 && apapi_stat_shown(ev, v, 2)) {
			*power_avg = apapi_stat_printed(ev, v, 2) * scale;
			double last = v ? ev->value1 : ev->value0[1];
			*power_cur = last / ev->op.factor[v] * scale;
			covered_s = ev->stats[v].period / 1e9;
			found |= 2;
		}
	}
	if (found == 2)
		*energy = *power_avg * covered_s;
	return found != 0;
}

/* The CPU domain (PKG, PP0, DRAM) and package of a rapl event, or -1. */
static int cpu_slot(const char *name, int *package)
{
	static const char *const domains[] = { "PACKAGE_ENERGY", "PP0_ENERGY", "DRAM_ENERGY" };
	const char *p = strrchr(name, ':');
	if (!p || sscanf(p, ":PACKAGE%d", package) != 1 || *package < 0 || *package >= CPUS)
		return -1;
	for (int d = 0; d < 3; d++) {
		size_t len = strlen(domains[d]);
		const char *at = strstr(name, domains[d]);
		if (at && at[len] == ':')
			return d;
	}
	return -1;
}

static void fill_component(const struct apapi_component *c, void *m)
{
	int flag = ms_apapi_resource_of(c->name);
	double e_sum = 0, p_sum = 0, cur_sum = 0;
	for (unsigned i = 0; i < c->nevents; i++) {
		double e, p, cur;
		const struct apapi_event *ev = &c->events[i];
		if (!event_energy(ev, &e, &p, &cur))
			continue;
		if (flag == CPU) {
			int package, d = cpu_slot(ev->op.name, &package);
			MS_MEASUREMENT_CPU *cpu = m;
			if (d < 0)
				continue;
			cpu->msr_energy_acc[package][d] += e * 1e3;
			cpu->msr_power_avg[package][d] += p * 1e3;
			cpu->msr_power_cur[package][d] += cur * 1e3;
		}
		e_sum += e;
		p_sum += p;
		cur_sum += cur;
	}
	switch (flag) {
	case GPU: {
		MS_MEASUREMENT_GPU *gpu = m;
		gpu->nvml_energy_acc = e_sum * 1e3;
		gpu->nvml_power_avg = p_sum * 1e3;
		gpu->nvml_power_cur = (uint32_t)(cur_sum * 1e3);
		break;
	}
	case FPGA: {
		MS_MEASUREMENT_FPGA *fpga = m;
		fpga->maxeler_energy_acc[POWER] = e_sum * 1e3;
		fpga->maxeler_power_avg[POWER] = p_sum * 1e3;
		fpga->maxeler_power_cur[POWER] = cur_sum * 1e3;
		break;
	}
	case SYSTEM: {
		MS_MEASUREMENT_SYS *sys = m;
		/* libmeasure keeps the server's energy in Ws and its power in W. */
		sys->ipmi_energy_server_acc = (uint32_t)e_sum;
		sys->ipmi_power_server_avg = p_sum;
		sys->ipmi_power_server_cur = (uint32_t)cur_sum;
		break;
	}
	case MIC: {
		MS_MEASUREMENT_MIC *mic = m;
		mic->mic_energy_acc[MIC_POWER] = e_sum * 1e3;
		mic->mic_power_avg[MIC_POWER] = p_sum * 1e3;
		mic->mic_power_cur[MIC_POWER] = (uint32_t)(cur_sum * 1e3);
		break;
	}
	}
}

void ms_apapi_fill(struct apapi_sampler *s, MS_LIST *list)
{
	double runtime = (double)(s->stop_ns - s->start_ns) / 1e9;
	for (MS_LIST *n = list; n; n = n->next) {
		/* Fresh results, the interval kept. */
		struct timespec wait = *time_wait(n->ms_measurement);
		memset(n->ms_measurement, 0, measurement_size(n->resource_id));
		*time_wait(n->ms_measurement) = wait;
	}
	starpu_pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->ncomponents; i++) {
		void *m = getMeasurement(&list, ms_apapi_resource_of(s->components[i]->name));
		if (m)
			fill_component(s->components[i], m);
	}
	starpu_pthread_mutex_unlock(&s->lock);
	/* The time is measured for every resource, sampled or not. */
	for (int i = 0; i < MS_APAPI_NRESOURCES; i++) {
		void *m = getMeasurement(&list, resources[i].flag);
		if (!m)
			continue;
		switch (resources[i].flag) {
		case CPU: ((MS_MEASUREMENT_CPU *)m)->msr_time_runtime = runtime; break;
		case GPU: ((MS_MEASUREMENT_GPU *)m)->nvml_time_runtime = runtime; break;
		case FPGA: ((MS_MEASUREMENT_FPGA *)m)->maxeler_time_runtime = runtime; break;
		case SYSTEM: ((MS_MEASUREMENT_SYS *)m)->ipmi_time_runtime = runtime; break;
		default: ((MS_MEASUREMENT_MIC *)m)->mic_time_runtime = runtime; break;
		}
	}
}

/* ------------------------------------------------------ query functions */

static void *measurement(MS_LIST *ms_list, int id, const char *what)
{
	void *m = getMeasurement(&ms_list, id);
	if (!m)
		astro_log_error(what, "the list has no %s measurement: pass what ms_alloc_measurement() returned",
				resources[resource_index(id)].name);
	return m;
}

static const MS_MEASUREMENT_CPU *cpu_of(MS_LIST *ms_list, int cpu, const char *what)
{
	if (cpu < 0 || cpu >= CPUS) {
		astro_log_error(what, "CPU package %d does not exist: give 0 to %d (CPUS - 1)", cpu, CPUS - 1);
		return NULL;
	}
	return measurement(ms_list, CPU, what);
}

#define CPU_QUERY(fn, field, domain, scale)                                \
	double fn(MS_LIST *ms_list, int cpu)                               \
	{                                                                  \
		const MS_MEASUREMENT_CPU *m = cpu_of(ms_list, cpu, #fn);   \
		return m ? m->field[cpu][domain] * (scale) : 0.0;          \
	}
CPU_QUERY(cpu_energy_total_pkg, msr_energy_acc, PKG, 1e-3)
CPU_QUERY(cpu_energy_total_pp0, msr_energy_acc, PP0, 1e-3)
CPU_QUERY(cpu_energy_total_dram, msr_energy_acc, DRAM, 1e-3)
CPU_QUERY(cpu_power_avg_pkg, msr_power_avg, PKG, 1e-3)
CPU_QUERY(cpu_power_avg_pp0, msr_power_avg, PP0, 1e-3)
CPU_QUERY(cpu_power_avg_dram, msr_power_avg, DRAM, 1e-3)

#define QUERY(fn, id, type, expr)                                          \
	double fn(MS_LIST *ms_list)                                        \
	{                                                                  \
		const type *m = measurement(ms_list, id, #fn);             \
		return m ? (double)(expr) : 0.0;                           \
	}
QUERY(cpu_time_total, CPU, MS_MEASUREMENT_CPU, m->msr_time_runtime)
QUERY(gpu_time_total, GPU, MS_MEASUREMENT_GPU, m->nvml_time_runtime)
QUERY(gpu_energy_total, GPU, MS_MEASUREMENT_GPU, m->nvml_energy_acc * 1e-3)
QUERY(gpu_power_avg, GPU, MS_MEASUREMENT_GPU, m->nvml_power_avg * 1e-3)
QUERY(fpga_time_total, FPGA, MS_MEASUREMENT_FPGA, m->maxeler_time_runtime)
QUERY(fpga_energy_total_power_usage, FPGA, MS_MEASUREMENT_FPGA, m->maxeler_energy_acc[POWER] * 1e-3)
QUERY(fpga_power_avg_power_usage, FPGA, MS_MEASUREMENT_FPGA, m->maxeler_power_avg[POWER] * 1e-3)
QUERY(mic_time_total, MIC, MS_MEASUREMENT_MIC, m->mic_time_runtime)
QUERY(mic_energy_total_power_usage, MIC, MS_MEASUREMENT_MIC, m->mic_energy_acc[MIC_POWER] * 1e-3)
QUERY(mic_power_avg_power_usage, MIC, MS_MEASUREMENT_MIC, m->mic_power_avg[MIC_POWER] * 1e-3)
QUERY(system_time_total, SYSTEM, MS_MEASUREMENT_SYS, m->ipmi_time_runtime)
QUERY(system_energy_total, SYSTEM, MS_MEASUREMENT_SYS, m->ipmi_energy_server_acc)
QUERY(system_power_avg, SYSTEM, MS_MEASUREMENT_SYS, m->ipmi_power_server_avg)
