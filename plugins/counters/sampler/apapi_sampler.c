/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The timer thread: samples each component at its own interval, a first
 * sample at start and a last one at stop; and the statistics printed as a
 * table or as CSV. Deadlines are absolute (start + k * interval on
 * CLOCK_MONOTONIC, waited for with an absolute timed wait, as
 * clock_nanosleep(TIMER_ABSTIME) would, but which stop can interrupt), so
 * late wake-ups never accumulate into drift; deadlines a loaded machine made
 * the thread miss are skipped (counted in nmissed), not bunched. The thread
 * asks for the finest timer slack, so that its waits end at their deadline,
 * not up to 50 us after. On a loaded machine, wake-ups are late by the
 * scheduler's latency, not by the wait: when the process's own threads load
 * the cores, the woken thread runs at once (its fair share is barely used);
 * when other sessions do (each an autogroup), it waits for its process's
 * turn, ticks later. ASTROLABE_SAMPLER_PRIORITY gives the thread a
 * real-time policy or a lower nice value, so that it runs as soon as its
 * deadline comes; when the system refuses it (no CAP_SYS_NICE, no
 * RLIMIT_RTPRIO/RLIMIT_NICE), one message says so and how to allow it, and
 * the thread samples as before.
 */
#define _GNU_SOURCE
#include "apapi_model.h"

#include <astrolabe/observe.h>
#include <astrolabe/plugin.h>
#include <astrolabe/thread.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define WHAT "sampler"

uint64_t apapi_now_ns(void)
{
	return astro_clock_monotonic_ns();
}

void apapi_sampler_init(struct apapi_sampler *s)
{
	memset(s, 0, sizeof(*s));
	s->timer_slack_ns = 1;
	starpu_pthread_mutex_init(&s->lock, NULL);
	astro_cond_init_monotonic(&s->cond);
}

struct apapi_component *apapi_component_new(const char *name, uint64_t interval_ns, apapi_read_fn read, void *arg)
{
	struct apapi_component *c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(name))) {
		free(c);
		return NULL;
	}
	c->interval_ns = interval_ns ? interval_ns : 1;
	c->read = read;
	c->arg = arg;
	return c;
}

void apapi_component_free(struct apapi_component *c)
{
	if (!c)
		return;
	for (unsigned e = 0; e < c->nevents; e++)
		apapi_event_clear(&c->events[e]);
	free(c->events);
	free(c->scratch);
	free(c->name);
	free(c);
}

int apapi_sampler_attach(struct apapi_sampler *s, struct apapi_component *c)
{
	struct apapi_component **grown = realloc(s->components, (s->ncomponents + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	s->components = grown;
	s->components[s->ncomponents++] = c;
	return 0;
}

struct apapi_component *apapi_sampler_add(struct apapi_sampler *s, const char *name, uint64_t interval_ns,
					  apapi_read_fn read, void *arg)
{
	struct apapi_component *c = apapi_component_new(name, interval_ns, read, arg);
	if (c && apapi_sampler_attach(s, c)) {
		apapi_component_free(c);
		return NULL;
	}
	return c;
}

int apapi_component_add_event(struct apapi_component *c, const struct apapi_eventop *op, int floating)
{
	struct apapi_event *grown = realloc(c->events, (c->nevents + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	c->events = grown;
	union apapi_raw *scratch = realloc(c->scratch, (c->nevents + 1) * sizeof(*scratch));
	if (!scratch)
		return -ENOMEM;
	c->scratch = scratch;
	apapi_event_init(&c->events[c->nevents++], op, floating);
	return 0;
}

/* Timer thread, lock not held: reads c, then takes the values in under the lock; then tells c's sampled()
 * (last: the stop's sample). */
static void sample(struct apapi_sampler *s, struct apapi_component *c, int last)
{
	if (!c->nevents) {
		if (c->sampled) {
			starpu_pthread_mutex_lock(&s->lock);
			c->nsamples++;
			starpu_pthread_mutex_unlock(&s->lock);
			c->sampled(c, last, c->sampled_arg);
		}
		return;
	}
	int ret = c->read(c, c->scratch);
	uint64_t now = apapi_now_ns();
	if (ret)
		return;
	starpu_pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < c->nevents; i++)
		apapi_event_sample(&c->events[i], c->scratch[i], now);
	c->nsamples++;
	starpu_pthread_mutex_unlock(&s->lock);
	if (c->sampled)
		c->sampled(c, last, c->sampled_arg);
	/* Each value read, to whoever observes it (the trace recorder: a sampled series per counter). */
	if (ASTRO_OBSERVED(ASTRO_MOMENT_COUNTER_SAMPLED))
		for (unsigned i = 0; i < c->nevents; i++) {
			double value = c->events[i].floating ? c->scratch[i].d : (double)(int64_t)c->scratch[i].u;
			struct astro_event ev = { .moment = ASTRO_MOMENT_COUNTER_SAMPLED, .workerid = -1, .label = c->events[i].op.name };
			memcpy(&ev.other_id, &value, sizeof(value));
			astro_observe_report(&ev);
		}
}

/* ----------------------------------------------------------- priority */

int apapi_priority_parse(const char *spec, struct apapi_priority *p)
{
	memset(p, 0, sizeof(*p));
	if (!spec || !*spec || strcmp(spec, "default") == 0)
		return 0;
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	long min = 1, max = 99, level = 1;
	if (len == 4 && strncmp(spec, "fifo", 4) == 0) {
		p->policy = SCHED_FIFO;
	} else if (len == 2 && strncmp(spec, "rr", 2) == 0) {
		p->policy = SCHED_RR;
	} else if (len == 4 && strncmp(spec, "nice", 4) == 0 && colon) {
		p->policy = SCHED_OTHER;
		min = -20;
		max = 19;
	} else {
		goto bad;
	}
	if (colon) {
		char *end;
		errno = 0;
		level = strtol(colon + 1, &end, 10);
		if (errno || end == colon + 1 || *end || level < min || level > max)
			goto bad;
	}
	p->asked = 1;
	p->level = (int)level;
	return 0;
bad:
	memset(p, 0, sizeof(*p));
	astro_log_error(WHAT, "%s '%s' is malformed: give fifo[:1..99], rr[:1..99] (real-time, default priority 1) or nice:-20..19 (e.g. \"fifo\")",
			APAPI_PRIORITY_ENV, spec);
	return -EINVAL;
}

/* Timer thread: gives itself the scheduling asked for; says once why not. */
static int raise_priority(const struct apapi_priority *p)
{
	if (!p->asked)
		return 0;
	int err = astro_thread_set_priority(p->policy, p->level);
	if (!err)
		return 0;
	if (p->policy == SCHED_OTHER)
		astro_log_error(WHAT, "cannot give the timer thread the nice value %d (%s=nice:%d): %s; it samples at normal priority, "
				"late when the machine is loaded. Run with CAP_SYS_NICE or an RLIMIT_NICE of at least %d (ulimit -e, "
				"nice in limits.conf), or unset %s",
				p->level, APAPI_PRIORITY_ENV, p->level, strerror(err), 20 - p->level, APAPI_PRIORITY_ENV);
	else
		astro_log_error(WHAT, "cannot give the timer thread the real-time policy %s priority %d (%s=%s:%d): %s; it samples "
				"at normal priority, late when the machine is loaded. Run with CAP_SYS_NICE or an RLIMIT_RTPRIO of at "
				"least %d (ulimit -r, rtprio in limits.conf), or unset %s",
				p->policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR", p->level, APAPI_PRIORITY_ENV,
				p->policy == SCHED_FIFO ? "fifo" : "rr", p->level, strerror(err), p->level, APAPI_PRIORITY_ENV);
	return err;
}

uint64_t apapi_schedule_advance(uint64_t *next, uint64_t interval, uint64_t now, uint64_t *missed)
{
	uint64_t skipped = (now - *next) / interval;
	uint64_t answered = *next + skipped * interval;
	*missed += skipped;
	*next = answered + interval;
	return answered;
}

static void *timer_thread(void *arg)
{
	struct apapi_sampler *s = arg;
	uint64_t now;
	astro_thread_set_name(APAPI_THREAD_NAME);
	/* Not worth a message: without it, the waits end up to 50 us late. */
	if (s->timer_slack_ns)
		prctl(PR_SET_TIMERSLACK, s->timer_slack_ns, 0, 0, 0);
	int err = raise_priority(&s->priority);
	starpu_pthread_mutex_lock(&s->lock);
	s->priority_error = err;
	s->thread_id = (pid_t)astro_thread_tid();
	s->thread_ready = 1;
	starpu_pthread_cond_broadcast(&s->cond);
	while (!s->stopping) {
		uint64_t earliest = UINT64_MAX;
		for (unsigned i = 0; i < s->ncomponents; i++)
			if (s->components[i]->next_ns < earliest)
				earliest = s->components[i]->next_ns;
		now = apapi_now_ns();
		if (now < earliest) {
			if (earliest == UINT64_MAX) {
				starpu_pthread_cond_wait(&s->cond, &s->lock);
			} else {
				astro_cond_wait_until(&s->cond, &s->lock, earliest);
			}
			continue;
		}
		starpu_pthread_mutex_unlock(&s->lock);
		for (unsigned i = 0; i < s->ncomponents; i++) {
			struct apapi_component *c = s->components[i];
			if (c->next_ns > now)
				continue;
			starpu_pthread_mutex_lock(&s->lock);
			c->deadline_ns = apapi_schedule_advance(&c->next_ns, c->interval_ns, now, &c->nmissed);
			c->nscheduled++;
			c->nlate += now - c->deadline_ns > c->interval_ns / 10;
			starpu_pthread_mutex_unlock(&s->lock);
			sample(s, c, 0);
		}
		starpu_pthread_mutex_lock(&s->lock);
	}
	int skip_last = s->skip_last;
	starpu_pthread_mutex_unlock(&s->lock);
	for (unsigned i = 0; i < s->ncomponents && !skip_last; i++) {
		s->components[i]->deadline_ns = 0;
		sample(s, s->components[i], 1);
	}
	s->stop_ns = apapi_now_ns();
	return NULL;
}

int apapi_sampler_start(struct apapi_sampler *s)
{
	if (s->running)
		return 0;
	s->stopping = 0;
	s->thread_ready = 0;
	/* The first sample before returning: whatever happens next is counted. */
	uint64_t now = apapi_now_ns();
	s->start_ns = now;
	for (unsigned i = 0; i < s->ncomponents; i++) {
		s->components[i]->deadline_ns = now;
		sample(s, s->components[i], 0);
		s->components[i]->next_ns = now + s->components[i]->interval_ns;
	}
	int ret = starpu_pthread_create(&s->thread, NULL, timer_thread, s);
	if (ret) {
		astro_log_error(WHAT, "cannot start the timer thread: %s (nothing is sampled)", strerror(ret));
		return -ret;
	}
	s->running = 1;
	/* Its priority settled (and said when refused) before sampling goes on. */
	starpu_pthread_mutex_lock(&s->lock);
	while (!s->thread_ready)
		starpu_pthread_cond_wait(&s->cond, &s->lock);
	starpu_pthread_mutex_unlock(&s->lock);
	return 0;
}

void apapi_sampler_request_stop(struct apapi_sampler *s)
{
	if (!s->running)
		return;
	starpu_pthread_mutex_lock(&s->lock);
	s->stopping = 1;
	starpu_pthread_cond_broadcast(&s->cond);
	starpu_pthread_mutex_unlock(&s->lock);
}

void apapi_sampler_join(struct apapi_sampler *s)
{
	if (!s->running)
		return;
	apapi_sampler_request_stop(s);
	starpu_pthread_join(s->thread, NULL);
	s->running = 0;
}

void apapi_sampler_stop(struct apapi_sampler *s)
{
	apapi_sampler_join(s);
}

void apapi_sampler_clear(struct apapi_sampler *s)
{
	apapi_sampler_stop(s);
	for (unsigned i = 0; i < s->ncomponents; i++)
		apapi_component_free(s->components[i]);
	free(s->components);
	s->components = NULL;
	s->ncomponents = 0;
}

/* ---------------------------------------------------------- intervals */

/* Walks "cmp:ns:cmp:ns...", or a bare "ns" for every component: returns the interval of cmp (0: not given);
 * -1 when malformed. */
static int64_t interval_lookup(const char *spec, const char *cmp)
{
	int64_t found = 0;
	const char *p = spec;
	if (*spec >= '0' && *spec <= '9' && spec[strspn(spec, "0123456789")] == '\0') {
		errno = 0;
		unsigned long long ns = strtoull(spec, NULL, 10);
		return errno || ns == 0 || ns > INT64_MAX ? -1 : (int64_t)ns;
	}
	while (*p) {
		const char *colon = strchr(p, ':');
		if (!colon || colon == p)
			return -1;
		char *end;
		errno = 0;
		if (colon[1] < '0' || colon[1] > '9')
			return -1;
		unsigned long long ns = strtoull(colon + 1, &end, 10);
		if (errno || ns == 0 || (*end && *end != ':'))
			return -1;
		if ((size_t)(colon - p) == strlen(cmp) && strncmp(p, cmp, (size_t)(colon - p)) == 0)
			found = (int64_t)ns;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return -1;
	}
	return found;
}

uint64_t apapi_interval_for(const char *spec, const char *cmp, uint64_t fallback, int *bad)
{
	int64_t ns = spec ? interval_lookup(spec, cmp) : 0;
	if (bad)
		*bad = ns < 0;
	return ns > 0 ? (uint64_t)ns : fallback;
}

int apapi_intervals_check(const char *spec)
{
	if (interval_lookup(spec, "") >= 0)
		return 0;
	astro_log_error(WHAT, "intervals '%s' are malformed: give nanoseconds for every component (e.g. 100000000) or "
			"component:nanoseconds pairs (e.g. \"rapl:100000000:astrolabe:10000000\")", spec);
	return -EINVAL;
}

/* ------------------------------------------------------------- output */

static const char *const stat_columns[] = { "min", "max", "avg", "acc" };

int apapi_stat_shown(const struct apapi_event *ev, int value, int stat)
{
	return ev->op.stats[value] & (1u << stat) && ev->stats[value].count;
}

double apapi_stat_printed(const struct apapi_event *ev, int value, int stat)
{
	const struct apapi_stats *st = &ev->stats[value];
	if (!st->count)
		return 0.0;
	double v = stat == 0 ? st->min : stat == 1 ? st->max : stat == 2 ? apapi_stats_avg(st) : st->acc;
	return v / ev->op.factor[value];
}

/* Calls row() for each value of each event that has statistics, the lock held. */
static void for_each_row(struct apapi_sampler *s, FILE *out,
			 void (*row)(FILE *out, const struct apapi_component *c, const struct apapi_event *ev, int value))
{
	for (unsigned i = 0; i < s->ncomponents; i++) {
		const struct apapi_component *c = s->components[i];
		for (unsigned e = 0; e < c->nevents; e++)
			for (int v = 0; v < 2; v++)
				if (c->events[e].op.stats[v])
					row(out, c, &c->events[e], v);
	}
}

static void table_row(FILE *out, const struct apapi_component *c, const struct apapi_event *ev, int v)
{
	(void)c;
	fprintf(out, "%-48s %-7s %-16s %-8s %8llu", ev->op.name, v ? "value1" : "value0", ev->op.type[v],
		ev->op.unit[v], (unsigned long long)ev->stats[v].count);
	for (int k = 0; k < 4; k++) {
		if (apapi_stat_shown(ev, v, k))
			fprintf(out, " %14.6g", apapi_stat_printed(ev, v, k));
		else
			fprintf(out, " %14s", "-");
	}
	fputc('\n', out);
}

void apapi_sampler_print_table(struct apapi_sampler *s, FILE *out)
{
	starpu_pthread_mutex_lock(&s->lock);
	unsigned nevents = 0;
	for (unsigned i = 0; i < s->ncomponents; i++)
		nevents += s->components[i]->nevents;
	if (nevents) {
		fprintf(out, "%-48s %-7s %-16s %-8s %8s %14s %14s %14s %14s\n", "event", "value", "type", "unit", "samples",
			stat_columns[0], stat_columns[1], stat_columns[2], stat_columns[3]);
		for_each_row(s, out, table_row);
	} else {
		fprintf(out, "(no event was sampled)\n");
	}
	uint64_t deadlines = 0, late = 0;
	for (unsigned i = 0; i < s->ncomponents; i++) {
		deadlines += s->components[i]->nscheduled + s->components[i]->nmissed;
		late += s->components[i]->nlate + s->components[i]->nmissed;
	}
	if (deadlines) {
		double share = 100.0 * (double)(deadlines - late) / (double)deadlines;
		fprintf(out, "timer: %llu of %llu deadlines sampled within 10%% of their interval (%.1f%%)%s\n",
			(unsigned long long)(deadlines - late), (unsigned long long)deadlines, share,
			share < 90.0 && !s->priority.asked ? "; the others late or skipped, the machine being loaded: " APAPI_PRIORITY_ENV
							     "=fifo keeps the cadence" : "");
	}
	starpu_pthread_mutex_unlock(&s->lock);
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void csv_field(FILE *out, const char *text)
{
	if (!strpbrk(text, ",\"\n\r")) {
		fputs(text, out);
		return;
	}
	fputc('"', out);
	for (; *text; text++) {
		if (*text == '"')
			fputc('"', out);
		fputc(*text, out);
	}
	fputc('"', out);
}

static void csv_row(FILE *out, const struct apapi_component *c, const struct apapi_event *ev, int v)
{
	csv_field(out, c->name);
	fputc(',', out);
	csv_field(out, ev->op.name);
	fprintf(out, ",%s,", v ? "value1" : "value0");
	csv_field(out, ev->op.type[v]);
	fputc(',', out);
	csv_field(out, ev->op.unit[v]);
	fprintf(out, ",%llu", (unsigned long long)ev->stats[v].count);
	for (int k = 0; k < 4; k++) {
		if (apapi_stat_shown(ev, v, k))
			fprintf(out, ",%.17g", apapi_stat_printed(ev, v, k));
		else
			fputc(',', out);
	}
	fputc('\n', out);
}

int apapi_sampler_write_csv(struct apapi_sampler *s, FILE *out)
{
	starpu_pthread_mutex_lock(&s->lock);
	fputs("component,event,value,type,unit,samples,min,max,avg,acc\n", out);
	for_each_row(s, out, csv_row);
	starpu_pthread_mutex_unlock(&s->lock);
	return ferror(out) ? -EIO : 0;
}
