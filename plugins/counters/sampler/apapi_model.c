/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The APAPI model: value0, value1 and statistics of one event, and the
 * event-list and event-operation files (see apapi_model.h).
 */
#include "apapi_model.h"

#include <astrolabe/plugin.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WHAT "sampler"

/* Indexed by enum APAPI_op1. */
static const char *const op1_names[] = {
	"APAPI_OP1_NOP", "APAPI_OP1_SAMPLE_DIFF", "APAPI_OP1_DIV_DIFF_TIME",
	"APAPI_OP1_SAMPLE1_MUL_DIFF_TIME", "APAPI_OP1_AVG_SAMPLE_MUL_DIFF_TIME",
};

static const struct
{
	const char *name;
	unsigned flag;          /* APAPI_STAT_ALL (-1) is every bit */
} stat_names[] = {
	{ "APAPI_STAT_NO", APAPI_STAT_NO }, { "APAPI_STAT_MIN", APAPI_STAT_MIN }, { "APAPI_STAT_MAX", APAPI_STAT_MAX },
	{ "APAPI_STAT_AVG", APAPI_STAT_AVG }, { "APAPI_STAT_ACC", APAPI_STAT_ACC }, { "APAPI_STAT_ALL", APAPI_STAT_ALL },
};

const char *apapi_op1_name(enum APAPI_op1 op)
{
	return (unsigned)op < sizeof(op1_names) / sizeof(op1_names[0]) ? op1_names[op] : NULL;
}

/* ------------------------------------------------------------- values */

uint64_t apapi_raw_diff(uint64_t previous, uint64_t last, uint64_t max_raw)
{
	if (last >= previous)
		return last - previous;
	/* The counter went past max_raw and restarted at 0. */
	return (max_raw - previous) + last + 1;
}

double apapi_stats_avg(const struct apapi_stats *s)
{
	if (s->period > 0)
		return s->weighted / s->period;
	return s->count ? s->acc / (double)s->count : 0.0;
}

static void stats_add(struct apapi_stats *s, double v, uint64_t period)
{
	if (s->count == 0 || v < s->min)
		s->min = v;
	if (s->count == 0 || v > s->max)
		s->max = v;
	s->acc += v;
	s->weighted += v * (double)period;
	s->period += (double)period;
	s->count++;
}

void apapi_event_init(struct apapi_event *e, const struct apapi_eventop *op, int floating)
{
	memset(e, 0, sizeof(*e));
	apapi_eventop_copy(&e->op, op);
	e->floating = floating;
}

void apapi_event_clear(struct apapi_event *e)
{
	apapi_eventop_clear(&e->op);
}

static double value1_of(enum APAPI_op1 op, double sample0, double sample1, uint64_t time0, uint64_t time1)
{
	double dt = (double)(time1 - time0);
	switch (op) {
	case APAPI_OP1_SAMPLE_DIFF: return sample1 - sample0;
	case APAPI_OP1_SAMPLE1_MUL_DIFF_TIME: return sample1 * dt;
	case APAPI_OP1_AVG_SAMPLE_MUL_DIFF_TIME: return (sample0 + sample1) / 2.0 * dt;
	default: return dt > 0 ? sample1 / dt : 0.0;
	}
}

void apapi_event_sample(struct apapi_event *e, union apapi_raw raw, uint64_t time_ns)
{
	e->raw[0] = e->raw[1];
	e->raw_time[0] = e->raw_time[1];
	e->raw[1] = raw;
	e->raw_time[1] = time_ns;
	if (e->nraw < 2)
		e->nraw++;
	/* The first raw value starts the first period: nothing to weigh yet. */
	if (e->nraw < 2)
		return;
	/* A 63/64-bit counter does not wrap in a run's lifetime: going down, it restarted from 0 (a reset, its source stopped). */
	int wide = e->op.max_raw >= (uint64_t)INT64_MAX;
	double value0;
	if (!e->op.max_raw)
		value0 = e->floating ? raw.d : (double)(int64_t)raw.u;
	else if (e->floating)
		value0 = e->raw[1].d >= e->raw[0].d ? e->raw[1].d - e->raw[0].d
		       : wide ? e->raw[1].d : ((double)e->op.max_raw - e->raw[0].d) + e->raw[1].d;
	else if (e->raw[1].u < e->raw[0].u && wide)
		value0 = (double)e->raw[1].u;
	else
		value0 = (double)apapi_raw_diff(e->raw[0].u, e->raw[1].u, e->op.max_raw);
	e->value0[0] = e->value0[1];
	e->value0_time[0] = e->value0_time[1];
	e->value0[1] = value0;
	e->value0_time[1] = time_ns;
	if (e->nvalue0 < 2)
		e->nvalue0++;
	stats_add(&e->stats[0], value0, e->raw_time[1] - e->raw_time[0]);
	if (e->nvalue0 < 2 || e->op.op1 == APAPI_OP1_NOP)
		return;
	e->value1 = value1_of(e->op.op1, e->value0[0], e->value0[1], e->value0_time[0], e->value0_time[1]);
	stats_add(&e->stats[1], e->value1, e->value0_time[1] - e->value0_time[0]);
}

void apapi_event_restart(struct apapi_event *e)
{
	struct apapi_eventop op = e->op;
	int floating = e->floating;
	memset(e, 0, sizeof(*e));
	e->op = op;
	e->floating = floating;
}

/* -------------------------------------------------------------- files */

void apapi_eventop_copy(struct apapi_eventop *dst, const struct apapi_eventop *src)
{
	*dst = *src;
	dst->name = strdup(src->name ? src->name : "");
	for (int i = 0; i < 2; i++) {
		dst->type[i] = strdup(src->type[i] ? src->type[i] : "");
		dst->unit[i] = strdup(src->unit[i] ? src->unit[i] : "");
	}
}

void apapi_eventop_clear(struct apapi_eventop *op)
{
	free(op->name);
	for (int i = 0; i < 2; i++) {
		free(op->type[i]);
		free(op->unit[i]);
	}
	memset(op, 0, sizeof(*op));
}

const struct apapi_eventop *apapi_eventops_find(const struct apapi_eventops *ops, const char *name)
{
	for (unsigned i = 0; i < ops->n; i++)
		if (strcmp(ops->ops[i].name, name) == 0)
			return &ops->ops[i];
	return NULL;
}

void apapi_eventops_clear(struct apapi_eventops *ops)
{
	for (unsigned i = 0; i < ops->n; i++)
		apapi_eventop_clear(&ops->ops[i]);
	free(ops->ops);
	ops->ops = NULL;
	ops->n = 0;
}

char *apapi_read_text(const char *path, size_t *size)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;
	if (f) {
		/* A stream into a growing buffer: no size to trust beforehand (a pipe, /proc). */
		FILE *mem = open_memstream(&text, &len);
		char chunk[4096];
		size_t n;
		while (mem && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			fwrite(chunk, 1, n, mem);
		int failed = ferror(f) || !mem;
		if (mem)
			fclose(mem);
		fclose(f);
		if (failed) {
			free(text);
			text = NULL;
			errno = EIO;
		}
	}
	if (!text) {
		int err = errno;
		astro_log_error(WHAT, "cannot read %s: %s (check the path given in APAPI_EVENTLIST / APAPI_EVENTOPS)", path, strerror(err));
		errno = err;
		return NULL;
	}
	if (size)
		*size = len;
	return text;
}

int apapi_for_each_line(char *text, const char *origin, int (*take)(char *line, const char *origin, unsigned lineno, void *arg),
			void *arg)
{
	unsigned lineno = 0;
	int bad = 0;
	for (char *line = text; line && *line;) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		size_t len = strlen(line);
		while (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (len && line[0] != '#')
			bad += take(line, origin, lineno, arg);
		line = next;
	}
	return bad;
}

/* Reads path and calls take() on each line (apapi_for_each_line()). */
static int for_each_line(const char *path, int (*take)(char *line, const char *path, unsigned lineno, void *arg), void *arg)
{
	char *text = apapi_read_text(path, NULL);
	if (!text)
		return -errno;
	int bad = apapi_for_each_line(text, path, take, arg);
	free(text);
	return bad;
}

static int has_space(const char *s)
{
	for (; *s; s++)
		if (isspace((unsigned char)*s))
			return 1;
	return 0;
}

static int parse_stats(const char *field, unsigned *flags)
{
	*flags = 0;
	char *copy = strdup(field), *save = NULL;
	int ok = copy && *field;
	for (char *term = ok ? strtok_r(copy, "|", &save) : NULL; term && ok; term = strtok_r(NULL, "|", &save)) {
		size_t i;
		for (i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++)
			if (strcmp(term, stat_names[i].name) == 0)
				break;
		if (i == sizeof(stat_names) / sizeof(stat_names[0]))
			ok = 0;
		else
			*flags |= stat_names[i].flag;
	}
	free(copy);
	return ok ? 0 : -1;
}

static int parse_factor(const char *field, double *factor)
{
	char *end;
	errno = 0;
	*factor = strtod(field, &end);
	return *field && !*end && !errno && *factor != 0 && isfinite(*factor) ? 0 : -1;
}

/* name, op1, stats0, stats1, max, type0, unit0, factor0, type1, unit1, factor1 (the seed's example has 11). */
#define NFIELDS 11

int apapi_eventop_parse(char *line, char delimiter, const char *origin, unsigned lineno, struct apapi_eventop *op)
{
	char *f[NFIELDS];
	unsigned n = 0;
	for (char *p = line;; p++) {
		if (n < NFIELDS)
			f[n] = p;
		n++;
		p = strchr(p, delimiter);
		if (!p)
			break;
		*p = '\0';
	}
	if (n != NFIELDS) {
		astro_log_error(WHAT, "%s:%u: %u fields where an event definition has %d: name,operation,stats0,stats1,max,type0,unit0,factor0,type1,unit1,factor1 (line ignored)",
				origin, lineno, n, NFIELDS);
		return -1;
	}
	memset(op, 0, sizeof(*op));
	const char *problem = NULL;
	unsigned i;
	for (i = 0; i < sizeof(op1_names) / sizeof(op1_names[0]); i++)
		if (strcmp(f[1], op1_names[i]) == 0)
			break;
	char *end = NULL;
	if (!*f[0] || has_space(f[0]))
		problem = "the event name is empty or holds whitespace";
	else if (i == sizeof(op1_names) / sizeof(op1_names[0]))
		problem = "the operation is not APAPI_OP1_NOP, APAPI_OP1_SAMPLE_DIFF, APAPI_OP1_DIV_DIFF_TIME, APAPI_OP1_SAMPLE1_MUL_DIFF_TIME or APAPI_OP1_AVG_SAMPLE_MUL_DIFF_TIME";
	else if (parse_stats(f[2], &op->stats[0]) || parse_stats(f[3], &op->stats[1]))
		problem = "a statistics field is not APAPI_STAT_NO, _MIN, _MAX, _AVG, _ACC, _ALL or a '|' list of them";
	else if (!isdigit((unsigned char)f[4][0]) || (errno = 0, op->max_raw = strtoull(f[4], &end, 0), *end || errno))
		problem = "the maximal raw value is not an unsigned integer (0 for a non-accumulating event)";
	else if (parse_factor(f[7], &op->factor[0]) || parse_factor(f[10], &op->factor[1]))
		problem = "a factor is not a non-zero number";
	if (problem) {
		astro_log_error(WHAT, "%s:%u: %s (line ignored)", origin, lineno, problem);
		return -1;
	}
	op->op1 = (enum APAPI_op1)i;
	op->name = f[0];
	op->type[0] = f[5];
	op->unit[0] = f[6];
	op->type[1] = f[8];
	op->unit[1] = f[9];
	return 0;
}

static int take_eventop(char *line, const char *path, unsigned lineno, void *arg)
{
	struct apapi_eventops *ops = arg;
	struct apapi_eventop op;
	if (apapi_eventop_parse(line, ',', path, lineno, &op))
		return 1;
	struct apapi_eventop *slot = (struct apapi_eventop *)apapi_eventops_find(ops, op.name);
	if (slot) {
		apapi_eventop_clear(slot);
	} else {
		struct apapi_eventop *grown = realloc(ops->ops, (ops->n + 1) * sizeof(*grown));
		if (!grown)
			return 1;
		ops->ops = grown;
		slot = &ops->ops[ops->n++];
	}
	apapi_eventop_copy(slot, &op);
	return 0;
}

int apapi_eventops_read(const char *path, struct apapi_eventops *ops)
{
	return for_each_line(path, take_eventop, ops);
}

int apapi_event_in_component(const char *name, const char *cmp)
{
	size_t len = strlen(cmp);
	/* PAPI's presets and perf:: events name no component: they are the CPU's. */
	if (!strstr(name, ":::"))
		return strcmp(cmp, APAPI_CPU_COMPONENT) == 0;
	return strncmp(name, cmp, len) == 0 && strncmp(name + len, ":::", 3) == 0;
}

static int take_event(char *line, const char *path, unsigned lineno, void *arg)
{
	struct apapi_eventlist *list = arg;
	if (has_space(line)) {
		astro_log_error(WHAT, "%s:%u: '%s' is not an event name: write one event name (component:::event) per line, without spaces (line ignored)",
				path, lineno, line);
		return 1;
	}
	for (unsigned i = 0; i < list->n; i++)
		if (strcmp(list->names[i], line) == 0)
			return 0;
	char **grown = realloc(list->names, (list->n + 1) * sizeof(*grown));
	if (!grown)
		return 1;
	list->names = grown;
	list->names[list->n] = strdup(line);
	if (list->names[list->n])
		list->n++;
	return 0;
}

int apapi_eventlist_read(const char *path, struct apapi_eventlist *list)
{
	return for_each_line(path, take_event, list);
}

void apapi_eventlist_clear(struct apapi_eventlist *list)
{
	for (unsigned i = 0; i < list->n; i++)
		free(list->names[i]);
	free(list->names);
	list->names = NULL;
	list->n = 0;
}
