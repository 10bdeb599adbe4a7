/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * counters_sampler: the APAPI sampler inside the runtime. With
 * ASTROLABE_SAMPLER=1, a timer thread samples, from starpu_init() to
 * starpu_shutdown(), the events of the components of APAPI_CMPLIST: PAPI
 * components, and "astrolabe", the runtime's own counters (global ones, and
 * per-worker ones summed over the workers) named astrolabe:::<counter>.
 * At shutdown it prints the statistics as a table on stderr, and as CSV into
 * ASTROLABE_SAMPLER_CSV when set. Intervals per component come from
 * ASTROLABE_SAMPLER_INTERVALS ("astrolabe:10000000:rapl:100000000", ns);
 * ASTROLABE_SAMPLER_PRIORITY ("fifo", "rr:N", "nice:N") raises the timer
 * thread's scheduling so that it keeps its cadence on a loaded machine.
 *
 * The statistics of the events that the event lists name are also counters,
 * "starpu.sampler.g_astrolabe.starpu.task.g_total_submitted.value0_acc"
 * (the event's name, ':' as '.'; value0/value1; min/max/avg/acc,
 * printed units: value / factor): they are registered at starpu_init(),
 * before the runtime's counters can be looked up, hence only for listed
 * events.
 */
#include "apapi_model.h"
#include "sampler_plugin.h"

#include <astrolabe/counters.h>
#include <astrolabe/observe.h>
#include <astrolabe/plugin.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODULE "counters_sampler"

/* A statistic exported as a counter. */
struct stat_counter
{
	char *event;
	int value, stat;       /* value0/value1; bit of the APAPI_STAT_* flag */
	int id;
	const struct apapi_event *ev; /* found once sampling starts */
};

static struct apapi_config cfg;
static struct apapi_sampler sampler;
static struct stat_counter *stat_counters;
static unsigned nstat_counters;
static int sampling;

static int env_on(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

static void update_global(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	(void)context;
	(void)arg;
	starpu_pthread_mutex_lock(&sampler.lock);
	for (unsigned i = 0; i < nstat_counters; i++) {
		const struct stat_counter *sc = &stat_counters[i];
		if (astro_counter_sample_wants(sample, sc->id))
			astro_counter_sample_set_double(sample, sc->id, sc->ev ? apapi_stat_printed(sc->ev, sc->value, sc->stat) : 0.0);
	}
	starpu_pthread_mutex_unlock(&sampler.lock);
}

static const char *const stat_names[] = { "min", "max", "avg", "acc" };

/* The counter of a statistic: "starpu.sampler.g_<event>.value0_min", the
 * event's ':' runs as '.', other characters a counter name cannot hold as '_'. */
static void stat_counter_name(char *out, size_t size, const char *event, int value, int stat)
{
	int len = snprintf(out, size, "starpu.sampler.g_");
	for (const char *p = event; *p && (size_t)len + 1 < size; p++) {
		if (*p == ':') {
			while (p[1] == ':')
				p++;
			out[len++] = '.';
		} else {
			out[len++] = isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-' ? *p : '_';
		}
	}
	snprintf(out + len, size - (size_t)len, ".value%d_%s", value, stat_names[stat]);
}

/* Registers the statistics of the listed events as counters (from init: the only time counters can be registered). */
static int register_stat_counters(void)
{
	int any = 0;
	for (unsigned c = 0; c < cfg.ncomponents; c++) {
		const char **names;
		unsigned n = apapi_config_events(&cfg, cfg.components[c], &names);
		for (unsigned e = 0; e < n; e++) {
			struct apapi_eventop op;
			apapi_config_op(&cfg, names[e], 1, "", &op);
			for (int v = 0; v < 2; v++)
				for (int k = 0; k < 4; k++) {
					if (!(op.stats[v] & (1u << k)))
						continue;
					char name[512], help[700];
					stat_counter_name(name, sizeof(name), names[e], v, k);
					snprintf(help, sizeof(help), "%s of %s's value%d (%s) over the sampled run", stat_names[k], names[e], v, op.type[v]);
					int id = astro_counter_register(MODULE, starpu_perf_counter_scope_global, name,
									starpu_perf_counter_type_double, ASTRO_COUNTER_INSTANT, op.unit[v], help);
					if (id < 0)
						continue;
					struct stat_counter *grown = realloc(stat_counters, (nstat_counters + 1) * sizeof(*grown));
					if (!grown)
						continue;
					stat_counters = grown;
					stat_counters[nstat_counters++] = (struct stat_counter){ strdup(names[e]), v, k, id, NULL };
					any = 1;
				}
			apapi_eventop_clear(&op);
		}
		free(names);
	}
	return any ? astro_counter_register_updater(MODULE, starpu_perf_counter_scope_global, update_global, NULL) : 0;
}

static void link_stat_counters(void)
{
	starpu_pthread_mutex_lock(&sampler.lock);
	for (unsigned i = 0; i < nstat_counters; i++)
		for (unsigned c = 0; c < sampler.ncomponents; c++)
			for (unsigned e = 0; e < sampler.components[c]->nevents; e++)
				if (strcmp(sampler.components[c]->events[e].op.name, stat_counters[i].event) == 0)
					stat_counters[i].ev = &sampler.components[c]->events[e];
	starpu_pthread_mutex_unlock(&sampler.lock);
}

static void start_sampling(void)
{
	const char *intervals = getenv("ASTROLABE_SAMPLER_INTERVALS");
	apapi_sources_add(&sampler, &cfg, intervals, apapi_own_add);
	link_stat_counters();
	unsigned nevents = 0;
	for (unsigned c = 0; c < sampler.ncomponents; c++)
		nevents += sampler.components[c]->nevents;
	if (!nevents) {
		astro_log_error(MODULE, "no event to sample in components %s: check APAPI_CMPLIST and APAPI_EVENTLIST",
				getenv("APAPI_CMPLIST") ? getenv("APAPI_CMPLIST") : APAPI_DEFAULT_CMPLIST);
		return;
	}
	if (apapi_sampler_start(&sampler) == 0)
		sampling = 1;
}

static void write_csv(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		astro_log_error(MODULE, "cannot write %s: %s (check ASTROLABE_SAMPLER_CSV)", tmp, strerror(errno));
		return;
	}
	int ret = apapi_sampler_write_csv(&sampler, f);
	if (fclose(f) || ret || rename(tmp, path)) {
		astro_log_error(MODULE, "cannot write %s: %s (check ASTROLABE_SAMPLER_CSV)", path, strerror(errno ? errno : EIO));
		unlink(tmp);
	}
}

static void stop_sampling(void)
{
	if (!sampling)
		return;
	apapi_sampler_stop(&sampler);
	sampling = 0;
	fprintf(stderr, "[astrolabe] sampler: statistics of %.3f s\n", (double)(sampler.stop_ns - sampler.start_ns) / 1e9);
	apapi_sampler_print_table(&sampler, stderr);
	const char *csv = getenv("ASTROLABE_SAMPLER_CSV");
	if (csv && *csv)
		write_csv(csv);
}

static void on_event(const struct astro_event *ev, void *arg)
{
	(void)arg;
	if (ev->moment == ASTRO_MOMENT_RUNTIME_INIT_END)
		start_sampling();
	else if (ev->moment == ASTRO_MOMENT_RUNTIME_TERMINATE)
		stop_sampling();
}

static int init(void)
{
	if (!env_on("ASTROLABE_SAMPLER"))
		return ASTRO_PLUGIN_DECLINE;
	const char *intervals = getenv("ASTROLABE_SAMPLER_INTERVALS");
	if (intervals && *intervals && apapi_intervals_check(intervals))
		return -EINVAL;
	apapi_sampler_init(&sampler);
	if (apapi_priority_parse(getenv(APAPI_PRIORITY_ENV), &sampler.priority))
		return -EINVAL;
	if (apapi_config_load(&cfg, SAMPLER_DATADIR) < 0)
		return -ENOENT;
	int ret = register_stat_counters();
	if (ret < 0)
		return ret;
	int sub = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_RUNTIME_INIT_END) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_RUNTIME_TERMINATE),
				  on_event, NULL);
	return sub < 0 ? sub : 0;
}

static void fini(void)
{
	/* The kernel drops the subscription itself after RUNTIME_TERMINATE. */
	stop_sampling();
	apapi_sampler_clear(&sampler);
	apapi_papi_clear();
	apapi_own_clear();
	apapi_config_clear(&cfg);
	for (unsigned i = 0; i < nstat_counters; i++)
		free(stat_counters[i].event);
	free(stat_counters);
	stat_counters = NULL;
	nstat_counters = 0;
}

ASTRO_PLUGIN_DEFINE(counters_sampler, ASTRO_PLUGIN_COUNTERS, "APAPI sampler: periodic counter samples and their statistics (ASTROLABE_SAMPLER=1)",
		    init, fini);
