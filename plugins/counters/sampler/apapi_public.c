/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libapapi's public interface (apapi.h) over the sampler's model: an event
 * set is a sampler of one component (source_papi.c's PAPI event set), whose
 * events keep value0, value1 and the statistics (apapi_model.c); a timer
 * starts that sampler's timer thread (apapi_sampler.c) at its interval and
 * calls its callback after each sample, the event set's public fields
 * refreshed first. A timer without an event set runs a sampler of its own
 * whose component reads nothing.
 */
#include "apapi.h"
#include "sources.h"

#include <astrolabe/plugin.h>
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "apapi"

char *APAPI_default_components[] = { "rapl", "powercap", "nvml", "maxeler", "micknc", "ipmi", NULL };

/* APAPI_VERBOSE, APAPI_SOFTFAIL, the lists and definitions: read by APAPI_init(). */
static struct apapi_config config;
static int configured;

/* An event set: what the caller sees first, then the sampler holding its one component. */
struct eventset
{
	struct apapi_eventset pub;
	struct apapi_sampler sampler;
	struct apapi_component *c;
	struct apapi_timer *timer;       /* the timer using it, or NULL */
	long long *counts;               /* the pub arrays of long long, in one block */
	double *stats;                   /* values0, values1, in one block */
};

/* A timer: what the caller sees first, then the sampler that runs it when it has no event set. */
struct timer
{
	struct apapi_timer pub;
	struct apapi_sampler own;
	struct apapi_sampler *running;   /* the sampler started: the set's, or own */
};

#define SET(p) ((struct eventset *)(p))
#define TIMER(p) ((struct timer *)(p))

int APAPI_init(void)
{
	if (!configured) {
		/* An unreadable APAPI_EVENTOPS / APAPI_EVENTLIST is said; the defaults still hold. */
		apapi_config_load(&config, SAMPLER_DATADIR);
		configured = 1;
	}
	return apapi_papi_init();
}

void APAPI_destroy(void)
{
	if (configured)
		apapi_config_clear(&config);
	configured = 0;
	apapi_papi_shutdown();
}

static unsigned count_names(char **names)
{
	unsigned n = 0;
	while (names && names[n])
		n++;
	return n;
}

int APAPI_create_eventset_list(char **events, int cidx, int *EventSet, int *num_events)
{
	if (!events || !EventSet || !num_events) {
		astro_log_error(WHAT, "APAPI_create_eventset_list: give a NULL-terminated list of event names, and where to write the event set and its number of events");
		return -1;
	}
	return apapi_papi_eventset_new(cidx, (const char *const *)events, count_names(events), EventSet, num_events) ? -1 : 0;
}

int APAPI_create_eventset_cmp_all(int cidx, int *EventSet, int *num_events)
{
	if (!EventSet || !num_events) {
		astro_log_error(WHAT, "APAPI_create_eventset_cmp_all: give where to write the event set and its number of events");
		return -1;
	}
	return apapi_papi_eventset_new(cidx, NULL, 0, EventSet, num_events) ? -1 : 0;
}

/* ---------------------------------------------------------- event sets */

/* The public view of op: its strings are op's. */
static void public_op(struct apapi_event_ops *out, const struct apapi_eventop *op)
{
	out->event_name = op->name;
	out->op1 = op->op1;
	out->value0 = (enum APAPI_stats)op->stats[0];
	out->value1 = (enum APAPI_stats)op->stats[1];
	out->max_sample = (long long)op->max_raw;
	out->value0_type = op->type[0];
	out->value0_unit = op->unit[0];
	out->value0_prefix = op->factor[0];
	out->value1_type = op->type[1];
	out->value1_unit = op->unit[1];
	out->value1_prefix = op->factor[1];
}

/* The caller's definitions (NULL-terminated by event_name) as the model's. */
static int model_ops(const struct apapi_event_ops *defs, struct apapi_eventops *ops)
{
	memset(ops, 0, sizeof(*ops));
	for (unsigned i = 0; defs && defs[i].event_name; i++) {
		const struct apapi_event_ops *d = &defs[i];
		struct apapi_eventop op = {
			.name = d->event_name, .op1 = d->op1, .stats = { (unsigned)d->value0, (unsigned)d->value1 },
			.max_raw = d->max_sample > 0 ? (uint64_t)d->max_sample : 0,
			.type = { d->value0_type, d->value1_type }, .unit = { d->value0_unit, d->value1_unit },
			/* A factor divides the value shown: 0 would show nothing. */
			.factor = { d->value0_prefix != 0 ? d->value0_prefix : 1, d->value1_prefix != 0 ? d->value1_prefix : 1 },
		};
		struct apapi_eventop *grown = realloc(ops->ops, (ops->n + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		ops->ops = grown;
		apapi_eventop_copy(&ops->ops[ops->n++], &op);
	}
	return 0;
}

/* Copies the model's values of es into its public fields; es's lock held. */
static void mirror(struct eventset *es)
{
	struct apapi_eventset *p = &es->pub;
	const struct apapi_component *c = es->c;
	for (unsigned i = 0; i < c->nevents; i++) {
		const struct apapi_event *ev = &c->events[i];
		p->current_counters[i] = (long long)ev->raw[1].u;
		p->previous_counters[i] = (long long)ev->raw[0].u;
		p->current_samples[i] = (long long)ev->value0[1];
		p->previous_samples[i] = (long long)ev->value0[0];
		p->last_values1[i] = ev->value1;
		for (int v = 0; v < 2; v++) {
			double *st = (v ? p->values1 : p->values0) + (size_t)i * APAPI_FIELDS;
			const struct apapi_stats *s = &ev->stats[v];
			st[APAPI_MIN] = s->count ? s->min : DBL_MAX;
			st[APAPI_MAX] = s->count ? s->max : 0;
			st[APAPI_AVG] = apapi_stats_avg(s);
			st[APAPI_ACC] = s->acc;
		}
	}
	p->count = (long long)c->nsamples;
	if (c->nsamples) {
		p->previous_time = c->nevents ? (long long)c->events[0].raw_time[0] : p->current_time;
		p->current_time = c->nevents ? (long long)c->events[0].raw_time[1] : (long long)apapi_now_ns();
		p->first_time = (long long)es->sampler.start_ns;
		p->last_time = p->current_time;
	} else {
		p->current_time = p->previous_time = p->first_time = p->last_time = 0;
	}
}

/* Forgets the values of es's events: its next sample is a first one. */
static void restart(struct eventset *es)
{
	starpu_pthread_mutex_lock(&es->sampler.lock);
	for (unsigned i = 0; i < es->c->nevents; i++)
		apapi_event_restart(&es->c->events[i]);
	es->c->nsamples = es->c->nscheduled = es->c->nlate = es->c->nmissed = 0;
	mirror(es);
	starpu_pthread_mutex_unlock(&es->sampler.lock);
}

static int fill_public(struct eventset *es)
{
	struct apapi_eventset *p = &es->pub;
	size_t n = es->c->nevents ? es->c->nevents : 1;
	es->counts = calloc(5 * n, sizeof(long long));
	es->stats = calloc(2 * APAPI_FIELDS * n, sizeof(double));
	p->last_values1 = calloc(n, sizeof(double));
	p->values_op1 = calloc(n, sizeof(enum APAPI_op1));
	p->values0_stats = calloc(2 * n, sizeof(enum APAPI_stats));
	p->event_ops = calloc(n, sizeof(struct apapi_event_ops));
	if (!es->counts || !es->stats || !p->last_values1 || !p->values_op1 || !p->values0_stats || !p->event_ops)
		return -ENOMEM;
	p->EventSet = apapi_papi_eventset(es->c);
	p->cmp_name = es->c->name;
	p->num_events = (int)es->c->nevents;
	p->current_counters = es->counts;
	p->previous_counters = es->counts + n;
	p->max_counters = es->counts + 2 * n;
	p->current_samples = es->counts + 3 * n;
	p->previous_samples = es->counts + 4 * n;
	p->values0 = es->stats;
	p->values1 = es->stats + APAPI_FIELDS * n;
	p->values1_stats = p->values0_stats + n;
	for (unsigned i = 0; i < es->c->nevents; i++) {
		public_op(&p->event_ops[i], &es->c->events[i].op);
		p->values_op1[i] = p->event_ops[i].op1;
		p->values0_stats[i] = p->event_ops[i].value0;
		p->values1_stats[i] = p->event_ops[i].value1;
		p->max_counters[i] = p->event_ops[i].max_sample;
	}
	restart(es);
	return 0;
}

static void eventset_free(struct eventset *es)
{
	struct apapi_eventset *p = &es->pub;
	apapi_sampler_stop(&es->sampler);
	apapi_papi_component_free(es->c);
	free(es->sampler.components);
	free(es->counts);
	free(es->stats);
	free(p->last_values1);
	free(p->values_op1);
	free(p->values0_stats);
	free(p->event_ops);
	free(es);
}

int APAPI_init_apapi_eventset_cmp(struct apapi_eventset **set, int cidx, char **names, struct apapi_event_ops *event_defaults)
{
	if (!set) {
		astro_log_error(WHAT, "APAPI_init_apapi_eventset_cmp: set is NULL: give the address of a struct apapi_eventset pointer");
		return -1;
	}
	*set = NULL;
	if (!configured) {
		astro_log_error(WHAT, "APAPI_init_apapi_eventset_cmp before APAPI_init: call APAPI_init() first");
		return -1;
	}
	const char *why;
	const char *cmp = apapi_papi_component_name(cidx, config.verbose, &why);
	if (!cmp) {
		astro_log_error(WHAT, "no event set of PAPI component %d: %s (a negative number is PAPI_get_component_index()'s answer "
				"for a component PAPI lacks; papi_component_avail lists those it has)", cidx, why);
		return -1;
	}
	struct apapi_eventops prefer;
	struct eventset *es = calloc(1, sizeof(*es));
	if (!es || model_ops(event_defaults, &prefer)) {
		free(es);
		astro_log_error(WHAT, "APAPI_init_apapi_eventset_cmp: out of memory");
		return -1;
	}
	/* No names, or none: the lists (APAPI_EVENTLIST, the default one), else every event. */
	unsigned n = count_names(names);
	es->c = apapi_papi_component(&config, cidx, cmp, APAPI_DEFAULT_INTERVAL_NS, n ? (const char *const *)names : NULL, n,
				     &prefer, &why);
	apapi_eventops_clear(&prefer);
	apapi_sampler_init(&es->sampler);
	if (!es->c) {
		astro_log_error(WHAT, "no event set of PAPI component %s: %s", cmp, why);
		free(es);
		return -1;
	}
	if (apapi_sampler_attach(&es->sampler, es->c) || fill_public(es)) {
		astro_log_error(WHAT, "APAPI_init_apapi_eventset_cmp: out of memory");
		eventset_free(es);
		return -1;
	}
	if (config.verbose)
		fprintf(stderr, "[astrolabe] " WHAT ": event set of component %s (%d): %u events\n", cmp, cidx, es->c->nevents);
	*set = &es->pub;
	return 0;
}

int APAPI_destroy_apapi_eventset(struct apapi_eventset **set)
{
	if (!set || !*set) {
		astro_log_error(WHAT, "APAPI_destroy_apapi_eventset: no event set given");
		return -1;
	}
	struct eventset *es = SET(*set);
	if (es->timer) {
		astro_log_error(WHAT, "APAPI_destroy_apapi_eventset: a timer still uses the event set of %s: APAPI_destroy_timer() it first",
				es->pub.cmp_name);
		return -1;
	}
	eventset_free(es);
	*set = NULL;
	return 0;
}

void APAPI_print_apapi_eventset(struct apapi_eventset *set)
{
	if (!set) {
		astro_log_error(WHAT, "APAPI_print_apapi_eventset: no event set given");
		return;
	}
	struct eventset *es = SET(set);
	printf("%s: %d events, %lld readings\n", set->cmp_name, set->num_events, set->count);
	apapi_sampler_print_table(&es->sampler, stdout);
	fflush(stdout);
}

int APAPI_apapi_eventset_find_event(struct apapi_eventset *set, char *name)
{
	for (int i = 0; set && name && i < set->num_events; i++)
		if (strcmp(set->event_ops[i].event_name, name) == 0)
			return i;
	return -1;
}

/* --------------------------------------------------------------- timers */

static int valid_interval(const char *fn, time_t tv_sec, long tv_nsec)
{
	if (tv_sec >= 0 && tv_nsec >= 0 && tv_nsec < 1000000000L && (tv_sec > 0 || tv_nsec > 0))
		return 1;
	astro_log_error(WHAT, "%s: interval %lld s %ld ns is not positive: give tv_sec >= 0 and 0 <= tv_nsec < 1000000000, not both 0",
			fn, (long long)tv_sec, tv_nsec);
	return 0;
}

static const char *state_name(enum APAPI_timer_state state)
{
	return state == APAPI_TIMER_STATE_READY ? "READY" : state == APAPI_TIMER_STATE_STARTED ? "STARTED" : "DONE";
}

/* Whether t is in state; else says what fn needs. */
static int in_state(const char *fn, struct apapi_timer *t, enum APAPI_timer_state state, const char *fix)
{
	if (!t) {
		astro_log_error(WHAT, "%s: no timer given", fn);
		return 0;
	}
	if (t->state == state)
		return 1;
	astro_log_error(WHAT, "%s: the timer is %s, not %s (%s)", fn, state_name(t->state), state_name(state), fix);
	return 0;
}

/* Sets t's parameters (t READY or DONE): the set's statistics start again. */
static int configure_timer(const char *fn, struct apapi_timer *t, time_t tv_sec, long tv_nsec, void(measure)(void **, int),
			   void **measure_arg, struct apapi_eventset *set)
{
	if (!valid_interval(fn, tv_sec, tv_nsec))
		return -1;
	if (set && SET(set)->timer && SET(set)->timer != t) {
		astro_log_error(WHAT, "%s: another timer uses the event set of %s: one timer per event set", fn, set->cmp_name);
		return -1;
	}
	if (t->set && t->set != set)
		SET(t->set)->timer = NULL;
	t->interval.tv_sec = tv_sec;
	t->interval.tv_nsec = tv_nsec;
	t->measure = measure;
	t->measure_arg = measure_arg;
	t->set = set;
	t->interrupt = 0;
	if (set) {
		SET(set)->timer = t;
		restart(SET(set));
	}
	t->state = APAPI_TIMER_STATE_READY;
	return 0;
}

int APAPI_create_timer(struct apapi_timer **timer, time_t tv_sec, long tv_nsec, void(measure)(void **, int), void **measure_arg,
		       struct apapi_eventset *set)
{
	if (!timer) {
		astro_log_error(WHAT, "APAPI_create_timer: timer is NULL: give the address of a struct apapi_timer pointer");
		return -1;
	}
	*timer = NULL;
	struct timer *t = calloc(1, sizeof(*t));
	if (!t) {
		astro_log_error(WHAT, "APAPI_create_timer: out of memory");
		return -1;
	}
	/* t->pub.mutex, zeroed, is left alone: the sampler's lock guards what the timer thread shares. */
	apapi_sampler_init(&t->own);
	if (!apapi_sampler_add(&t->own, "timer", APAPI_DEFAULT_INTERVAL_NS, NULL, NULL)) {
		astro_log_error(WHAT, "APAPI_create_timer: out of memory");
		free(t);
		return -1;
	}
	if (configure_timer("APAPI_create_timer", &t->pub, tv_sec, tv_nsec, measure, measure_arg, set)) {
		apapi_sampler_clear(&t->own);
		free(t);
		return -1;
	}
	*timer = &t->pub;
	return 0;
}

int APAPI_change_timer(struct apapi_timer *timer, time_t tv_sec, long tv_nsec, void(measure)(void **, int), void **measure_arg,
		       struct apapi_eventset *set)
{
	if (!in_state("APAPI_change_timer", timer, APAPI_TIMER_STATE_READY, "a stopped timer is changed by APAPI_reset_timer"))
		return -1;
	return configure_timer("APAPI_change_timer", timer, tv_sec, tv_nsec, measure, measure_arg, set);
}

int APAPI_reset_timer(struct apapi_timer *timer, time_t tv_sec, long tv_nsec, void(measure)(void **, int), void **measure_arg,
		      struct apapi_eventset *set)
{
	if (!in_state("APAPI_reset_timer", timer, APAPI_TIMER_STATE_DONE, "stop it first; a READY timer is changed by APAPI_change_timer"))
		return -1;
	return configure_timer("APAPI_reset_timer", timer, tv_sec, tv_nsec, measure, measure_arg, set);
}

int APAPI_initstart_timer(struct apapi_timer *timer)
{
	if (!in_state("APAPI_initstart_timer", timer, APAPI_TIMER_STATE_READY, "create or reset it first"))
		return -1;
	return timer->set && apapi_papi_run(SET(timer->set)->c, 1) ? -1 : 0;
}

/* After each sample: the set's public fields, then the callback. */
static void sampled(struct apapi_component *c, int last, void *arg)
{
	(void)c;
	struct apapi_timer *t = arg;
	if (t->set) {
		struct eventset *es = SET(t->set);
		starpu_pthread_mutex_lock(&es->sampler.lock);
		mirror(es);
		starpu_pthread_mutex_unlock(&es->sampler.lock);
	}
	if (t->measure)
		t->measure(t->measure_arg, last);
}

int APAPI_start_timer(struct apapi_timer *timer)
{
	if (!in_state("APAPI_start_timer", timer, APAPI_TIMER_STATE_READY, "create or reset it first"))
		return -1;
	struct timer *t = TIMER(timer);
	t->running = timer->set ? &SET(timer->set)->sampler : &t->own;
	struct apapi_component *c = t->running->components[0];
	/* Counting, if APAPI_initstart_timer() was not called. */
	if (timer->set && apapi_papi_run(c, 1))
		return -1;
	c->interval_ns = (uint64_t)timer->interval.tv_sec * 1000000000u + (uint64_t)timer->interval.tv_nsec;
	c->sampled = sampled;
	c->sampled_arg = timer;
	t->running->skip_last = 0;
	if (apapi_sampler_start(t->running))
		return -1;
	timer->state = APAPI_TIMER_STATE_STARTED;
#ifndef STARPU_SIMGRID
	timer->thread = t->running->thread;
#endif
	return 0;
}

int APAPI_callstop_timer(struct apapi_timer *timer)
{
	if (!in_state("APAPI_callstop_timer", timer, APAPI_TIMER_STATE_STARTED, "start it first"))
		return -1;
	apapi_sampler_request_stop(TIMER(timer)->running);
	return 0;
}

int APAPI_join_timer(struct apapi_timer *timer)
{
	if (!in_state("APAPI_join_timer", timer, APAPI_TIMER_STATE_STARTED, "start it first"))
		return -1;
	struct timer *t = TIMER(timer);
	apapi_sampler_join(t->running);
	timer->state = APAPI_TIMER_STATE_DONE;
	t->running->components[0]->sampled = NULL;
	return timer->set && apapi_papi_run(SET(timer->set)->c, 0) ? -1 : 0;
}

int APAPI_stop_timer(struct apapi_timer *timer)
{
	if (APAPI_callstop_timer(timer))
		return -1;
	return APAPI_join_timer(timer);
}

int APAPI_destroy_timer(struct apapi_timer **timer)
{
	if (!timer || !*timer) {
		astro_log_error(WHAT, "APAPI_destroy_timer: no timer given");
		return -1;
	}
	struct timer *t = TIMER(*timer);
	if (t->pub.state == APAPI_TIMER_STATE_STARTED) {
		/* Stopped without a last sample. */
		t->pub.interrupt = 1;
		starpu_pthread_mutex_lock(&t->running->lock);
		t->running->skip_last = 1;
		starpu_pthread_mutex_unlock(&t->running->lock);
		apapi_sampler_join(t->running);
		t->running->components[0]->sampled = NULL;
		if (t->pub.set)
			apapi_papi_run(SET(t->pub.set)->c, 0);
	}
	if (t->pub.set)
		SET(t->pub.set)->timer = NULL;
	apapi_sampler_clear(&t->own);
	free(t);
	*timer = NULL;
	return 0;
}

/* -------------------------------------------------------------- files */

struct parsed
{
	char delimiter;
	struct apapi_event_ops *out;
	int n;
};

static int take_definition(char *line, const char *origin, unsigned lineno, void *arg)
{
	struct parsed *p = arg;
	struct apapi_eventop op;
	if (apapi_eventop_parse(line, p->delimiter, origin, lineno, &op))
		return 1;
	public_op(&p->out[p->n++], &op);
	return 0;
}

/* APAPI_read_event_ops_csv(), origin naming the input in messages. */
static int read_definitions(char *input, char delimiter, const char *origin, struct apapi_event_ops **events_out, int *num_events_out)
{
	if (!events_out || !num_events_out) {
		astro_log_error(WHAT, "APAPI_read_event_ops_csv: give where to write the definitions and their number");
		return -1;
	}
	*events_out = NULL;
	*num_events_out = 0;
	if (!input || !*input) {
		astro_log_error(WHAT, "%s: no event definition (the input is %s): give lines name,operation,stats0,stats1,max,type0,unit0,"
				"factor0,type1,unit1,factor1", origin, input ? "empty" : "NULL");
		return -1;
	}
	unsigned lines = 1;
	for (const char *c = input; *c; c++)
		lines += *c == '\n';
	struct parsed p = { .delimiter = delimiter, .out = calloc(lines + 1, sizeof(struct apapi_event_ops)) };
	if (!p.out) {
		astro_log_error(WHAT, "%s: out of memory", origin);
		return -1;
	}
	int bad = apapi_for_each_line(input, origin, take_definition, &p);
	if (bad) {
		astro_log_error(WHAT, "%s: %d malformed line%s: no definition read", origin, bad, bad > 1 ? "s" : "");
		free(p.out);
		return -1;
	}
	*events_out = p.out;
	*num_events_out = p.n;
	return 0;
}

int APAPI_read_event_ops_csv(char *input, char delimiter, struct apapi_event_ops **events_out, int *num_events_out)
{
	return read_definitions(input, delimiter, "event definitions", events_out, num_events_out);
}

/* The file the environment variable name gives, or NULL (said when verbose). */
static const char *env_file(const char *name)
{
	const char *path = getenv(name);
	if (path && *path)
		return path;
	if (config.verbose)
		fprintf(stderr, "[astrolabe] " WHAT ": %s is not set\n", name);
	return NULL;
}

int APAPI_read_env_eventops(char **buffer, struct apapi_event_ops **events_out, int *num_events_out)
{
	if (!buffer || !events_out || !num_events_out) {
		astro_log_error(WHAT, "APAPI_read_env_eventops: give where to write the file's text, the definitions and their number");
		return -1;
	}
	*buffer = NULL;
	*events_out = NULL;
	*num_events_out = 0;
	const char *path = env_file("APAPI_EVENTOPS");
	char *text = path ? apapi_read_text(path, NULL) : NULL;
	if (!text)
		return -1;
	if (read_definitions(text, ',', path, events_out, num_events_out)) {
		free(text);
		return -1;
	}
	*buffer = text;
	return 0;
}

int APAPI_read_env_eventlist(char **cmp_list, char **buffer, char ****sorted_list, char ***used_cmp)
{
	if (!cmp_list || !buffer || !sorted_list || !used_cmp) {
		astro_log_error(WHAT, "APAPI_read_env_eventlist: give a NULL-terminated list of components, and where to write the "
				"file's text, the sorted lists and the components used");
		return -1;
	}
	*buffer = NULL;
	*sorted_list = NULL;
	*used_cmp = NULL;
	const char *path = env_file("APAPI_EVENTLIST");
	struct apapi_eventlist list = { 0 };
	if (!path || apapi_eventlist_read(path, &list) < 0) {
		apapi_eventlist_clear(&list);
		return -1;
	}
	/* The names, one after the other in *buffer: the lists point into it. */
	size_t size = 1;
	for (unsigned i = 0; i < list.n; i++)
		size += strlen(list.names[i]) + 1;
	unsigned ncmp = count_names(cmp_list);
	char **where = calloc(list.n + 1, sizeof(*where));
	*buffer = malloc(size);
	*sorted_list = calloc(ncmp + 1, sizeof(**sorted_list));
	*used_cmp = calloc(ncmp + 1, sizeof(**used_cmp));
	int ret = where && *buffer && *sorted_list && *used_cmp ? 0 : -1;
	char *at = *buffer;
	for (unsigned i = 0; !ret && i < list.n; i++) {
		where[i] = strcpy(at, list.names[i]);
		at += strlen(at) + 1;
	}
	unsigned used = 0;
	for (unsigned k = 0; !ret && k < ncmp; k++) {
		char **events = calloc(list.n + 1, sizeof(*events));
		unsigned n = 0;
		for (unsigned i = 0; events && i < list.n; i++)
			if (apapi_event_in_component(where[i], cmp_list[k]))
				events[n++] = where[i];
		if (!events) {
			ret = -1;
		} else if (!n) {
			free(events);
		} else {
			(*sorted_list)[used] = events;
			(*used_cmp)[used++] = cmp_list[k];
		}
	}
	free(where);
	apapi_eventlist_clear(&list);
	if (ret) {
		astro_log_error(WHAT, "APAPI_read_env_eventlist: out of memory");
		for (unsigned k = 0; *sorted_list && (*sorted_list)[k]; k++)
			free((*sorted_list)[k]);
		free(*sorted_list);
		free(*used_cmp);
		free(*buffer);
		*buffer = NULL;
		*sorted_list = NULL;
		*used_cmp = NULL;
	}
	return ret;
}

int APAPI_read_env_cmplist(char **buffer, char ***cmplist)
{
	if (!buffer || !cmplist) {
		astro_log_error(WHAT, "APAPI_read_env_cmplist: give where to write the list's text and its components");
		return -1;
	}
	*buffer = NULL;
	*cmplist = NULL;
	const char *list = env_file("APAPI_CMPLIST");
	if (!list)
		return -1;
	size_t n = 2;
	for (const char *c = list; *c; c++)
		n += *c == ':';
	*buffer = strdup(list);
	*cmplist = calloc(n, sizeof(**cmplist));
	if (!*buffer || !*cmplist) {
		astro_log_error(WHAT, "APAPI_read_env_cmplist: out of memory");
		free(*buffer);
		free(*cmplist);
		*buffer = NULL;
		*cmplist = NULL;
		return -1;
	}
	/* "a::b:" gives a and b: empty names are no components. */
	unsigned k = 0;
	for (char *name = *buffer; name;) {
		char *colon = strchr(name, ':');
		if (colon)
			*colon++ = '\0';
		if (*name)
			(*cmplist)[k++] = name;
		name = colon;
	}
	return 0;
}

int APAPI_cmp_cmplist_index(const char *cmp, char **cmplist)
{
	for (int i = 0; cmp && cmplist && cmplist[i]; i++)
		if (strcmp(cmplist[i], cmp) == 0)
			return i;
	return -1;
}
