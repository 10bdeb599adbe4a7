/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * heteroprio's automatic mode (see auto.h): one bucket per codelet, ordered
 * per architecture from measured execution times. The statistics kept per
 * codelet and per architecture, their running means (capped at RELEVANT_LIFE
 * samples), the scores of the ordering policies and the data file follow
 * StarPU 1.4's autoheteroprio.
 *
 * Astrolabe keeps no graph of the submitted tasks, so the statistics StarPU
 * draws from a task's successors (its NOD, its URT per architecture, the best
 * times of its successors) are recorded as 0, as StarPU records them for a
 * task outside its graph: the ordering policies built on them then rank the
 * buckets by the difference between architectures' times.
 */
#define _GNU_SOURCE
#include <astrolabe/env.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <astrolabe/sched.h>
#include "auto.h"

#define NB STARPU_HETEROPRIO_MAX_PRIO
#define NAME_LEN 32
#define NO_NAME "NO_NAME"
/* Samples beyond which older ones weigh less. */
#define RELEVANT_LIFE 256
/* Below this many execution times on an architecture, a bucket is put first there, to be measured. */
#define RELEVANT_SAMPLES 16
#define EXTREMELY_LONG_TIME 999999999999999.0
#define LONG_TIME 100000000.0
#define FAIR_TIME 1000.0
/* Busy and free times are scaled down at shutdown so that none exceeds this (us). */
#define MAX_PROFILING_TIME 1000000000.0

enum grouping
{
	BY_PERF_MODEL_OR_NAME = 0,
	BY_NAME_ONLY = 1
};

struct hp_auto
{
	enum grouping grouping;
	unsigned ordering;
	int interval;
	int since_ordering;
	int freeze;
	int print_after_ordering;
	int print_on_update;
	unsigned time_policy;
	int reported_full;
	int reported_nowhere;
	char path[PATH_MAX];

	/* The ordering policies' parameters. */
	double nt_nod, nt_exp, bn_exp, urt_urt, urt2_urt, urt2_prop;
	double and2, and3, and4, and5x, and5y, and9x, and9y, and10x, and10y, and11x, and11y;
	double ant_nod, ant_exp;

	/* Busy and free times of each architecture: this run's, and those kept in the file. */
	double busy_now[STARPU_NARCH], free_now[STARPU_NARCH];
	double avg_busy[STARPU_NARCH], avg_free[STARPU_NARCH];
	double last_hook[STARPU_NMAXWORKERS];

	/* The codelets, by bucket, and how many each architecture can run. */
	unsigned ncodelets;
	char names[NB][NAME_LEN + 1];
	unsigned ncodelets_on[STARPU_NARCH];

	double nod[NB];
	unsigned nod_count[NB];
	double urt[STARPU_NARCH][NB];
	unsigned urt_count[NB];
	double time[STARPU_NARCH][NB];
	unsigned time_count[STARPU_NARCH][NB];
	unsigned char has_time[STARPU_NARCH][NB];
	double proportion[NB];
	unsigned proportion_count[NB];
	double arch_proportion[STARPU_NARCH][NB];
	unsigned arch_proportion_count[NB];
	double succ_best[NB];
	unsigned succ_best_count[NB];
	double best[NB];
	unsigned best_count[NB];
};

static const char what[] = "heteroprio";

static int can_run(const struct astro_heteroprio_setup *layout, unsigned b, unsigned arch)
{
	return (layout->buckets[b].archs >> arch) & 1;
}

/* ------------------------------------------------------------ codelets */

/* The name task's codelet is grouped by, at most NAME_LEN characters, blanks replaced (the file separates fields by blanks). */
static void codelet_name(const struct hp_auto *a, const struct starpu_codelet *cl, char name[NAME_LEN + 1])
{
	const char *n = NULL;

	if (a->grouping == BY_PERF_MODEL_OR_NAME && cl->model && cl->model->symbol && cl->model->symbol[0])
		n = cl->model->symbol;
	else if (cl->name && cl->name[0])
		n = cl->name;
	snprintf(name, NAME_LEN + 1, "%s", n ? n : NO_NAME);
	for (char *c = name; *c; c++)
		if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r')
			*c = '_';
}

/* The architectures (1 << arch) task's codelet has an implementation for, within its where. */
static unsigned codelet_archs(const struct starpu_task *task)
{
	const struct starpu_codelet *cl = task->cl;
	uint64_t where = cl->where ? cl->where : ~(uint64_t)STARPU_NOWHERE;
	unsigned archs = 0;

	if (task->where != -1 && task->where != 0)
		where &= (uint64_t)task->where;
	if ((where & STARPU_CPU) && (cl->cpu_funcs[0] || cl->cpu_funcs_name[0]))
		archs |= 1u << STARPU_CPU_WORKER;
	if ((where & STARPU_CUDA) && cl->cuda_funcs[0])
		archs |= 1u << STARPU_CUDA_WORKER;
	if ((where & STARPU_OPENCL) && cl->opencl_funcs[0])
		archs |= 1u << STARPU_OPENCL_WORKER;
	if ((where & STARPU_MAX_FPGA) && cl->max_fpga_funcs[0])
		archs |= 1u << STARPU_MAX_FPGA_WORKER;
	if ((where & STARPU_HIP) && cl->hip_funcs[0])
		archs |= 1u << STARPU_HIP_WORKER;
	return archs;
}

/* Gives a new codelet the next bucket, at the end of the list of each architecture that can run it. */
static unsigned add_codelet(struct hp_auto *a, struct astro_heteroprio_setup *layout, const char *name, unsigned archs)
{
	unsigned b = a->ncodelets++;

	snprintf(a->names[b], sizeof(a->names[b]), "%s", name);
	layout->buckets[b].archs = archs;
	layout->buckets[b].faster_arch = STARPU_CPU_WORKER;
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
	{
		layout->buckets[b].slow_factor[arch] = arch == STARPU_CPU_WORKER ? 0.0f : 1.0f;
		if (!((archs >> arch) & 1))
			continue;
		layout->mapping[arch][a->ncodelets_on[arch]] = b;
		layout->mapped[arch][a->ncodelets_on[arch]] = 1;
		layout->nb_prios[arch] = ++a->ncodelets_on[arch];
	}
	return b;
}

static int find_codelet(const struct hp_auto *a, const struct astro_heteroprio_setup *layout, const char *name, unsigned archs)
{
	for (unsigned b = 0; b < a->ncodelets; b++)
		if (layout->buckets[b].archs == archs && strcmp(a->names[b], name) == 0)
			return (int)b;
	return -1;
}

/* --------------------------------------------------------- statistics */

/* A running mean of count samples at most RELEVANT_LIFE, given one more. */
static void add_sample(double *mean, unsigned *count, double value)
{
	if (*count < RELEVANT_LIFE)
		(*count)++;
	*mean = *mean * (double)(*count - 1) / (double)*count + value / (double)*count;
}

static double estimated_time(const struct hp_auto *a, const struct astro_heteroprio_setup *layout, unsigned b, unsigned arch)
{
	if (a->has_time[arch][b])
		return a->time[arch][b];
	if (can_run(layout, b, arch))
		return FAIR_TIME;
	if (a->time_policy == 0)
		return LONG_TIME;
	/* As fast as on the fastest architecture that can run it. */
	double best = EXTREMELY_LONG_TIME;
	for (unsigned other = 0; other < STARPU_NARCH; other++)
		if (other != arch && can_run(layout, b, other))
			best = fmin(best, estimated_time(a, layout, b, other));
	return best;
}

static double best_time(const struct hp_auto *a, const struct astro_heteroprio_setup *layout, unsigned b)
{
	double best = EXTREMELY_LONG_TIME;

	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		if (can_run(layout, b, arch))
			best = fmin(best, estimated_time(a, layout, b, arch));
	return best;
}

/* The time of b on arch, in units of the mean best time of the tasks submitted. */
static double normalized_time(const struct hp_auto *a, const struct astro_heteroprio_setup *layout, unsigned b, unsigned arch)
{
	double sum = 0.0;

	for (unsigned p = 0; p < a->ncodelets; p++)
		if (a->proportion_count[p])
			sum += a->proportion[p] * best_time(a, layout, p);
	return sum <= 0.0 ? 1.0 : estimated_time(a, layout, b, arch) / sum;
}

static double busy_proportion(const struct hp_auto *a, unsigned arch)
{
	double total = a->avg_busy[arch] + a->avg_free[arch];

	return total <= 0.0 ? 0.0 : a->avg_busy[arch] / total;
}

static double arch_proportion(const struct hp_auto *a, unsigned b, unsigned arch)
{
	return a->arch_proportion_count[b] ? a->arch_proportion[arch][b] : 0.0;
}

static double nod_of(const struct hp_auto *a, unsigned b)
{
	return a->nod_count[b] ? a->nod[b] : 1.0;
}

static double urt_of(const struct hp_auto *a, unsigned b, unsigned arch)
{
	return a->urt_count[b] ? a->urt[arch][b] : FAIR_TIME;
}

static double succ_best_of(const struct hp_auto *a, unsigned b)
{
	return a->succ_best_count[b] ? a->succ_best[b] : FAIR_TIME;
}

/* One more task of b submitted: the proportions of the codelets among the submitted tasks. */
static void add_submitted(struct hp_auto *a, unsigned b)
{
	unsigned total = 0;
	double sum = 0.0;

	if (a->proportion_count[b] < RELEVANT_LIFE)
		a->proportion_count[b]++;
	for (unsigned p = 0; p < a->ncodelets; p++)
		total += a->proportion_count[p];
	a->proportion[b] += 1.0 / (double)total;
	for (unsigned p = 0; p < a->ncodelets; p++)
		sum += a->proportion[p];
	for (unsigned p = 0; p < a->ncodelets; p++)
		a->proportion[p] /= sum;
}

/* One more task of b ran on arch: the proportions of the architectures that ran b's tasks. */
static void add_ran_on(struct hp_auto *a, unsigned b, unsigned arch)
{
	unsigned count;
	double sum = 0.0;

	if (a->arch_proportion_count[b] < RELEVANT_LIFE)
		a->arch_proportion_count[b]++;
	count = a->arch_proportion_count[b];
	a->arch_proportion[arch][b] += 1.0 / (double)(count >= 2 ? count - 1 : count);
	for (unsigned x = 0; x < STARPU_NARCH; x++)
		sum += a->arch_proportion[x][b];
	for (unsigned x = 0; x < STARPU_NARCH; x++)
		a->arch_proportion[x][b] /= sum;
}

/* Each bucket's fastest architecture and the others' slow factors, from the estimated times. */
static void update_slowdowns(const struct hp_auto *a, struct astro_heteroprio_setup *layout)
{
	for (unsigned b = 0; b < a->ncodelets; b++)
	{
		struct astro_heteroprio_bucket_setup *bucket = &layout->buckets[b];
		double times[STARPU_NARCH];
		int fastest = -1;

		for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		{
			if (!can_run(layout, b, arch))
				continue;
			times[arch] = estimated_time(a, layout, b, arch);
			if (fastest < 0 || times[arch] < times[fastest])
				fastest = (int)arch;
		}
		if (fastest < 0)
			continue;
		bucket->faster_arch = fastest;
		bucket->slow_factor[fastest] = 0.0f;
		for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
			if ((int)arch != fastest && can_run(layout, b, arch))
				bucket->slow_factor[arch] = times[fastest] > 0.0 ? (float)(times[arch] / times[fastest]) : 1.0f;
	}
}

/* ----------------------------------------------------------- ordering */

struct score
{
	unsigned bucket;
	double score;
};

/* Highest score first. */
static int by_score(const void *x, const void *y)
{
	const struct score *s = x, *t = y;

	return (s->score < t->score) - (s->score > t->score);
}

static double relu(double x)
{
	return x < 0.0 ? 0.0 : x;
}

static double rpg(double x)
{
	return x > 1.0 ? 1.0 : sqrt(x) * sqrt(2.0 - x);
}

/* The score of the ordering policy for bucket b on an architecture, from what it is compared with. */
static double policy_score(const struct hp_auto *a, unsigned b, double own_time, double other_time, double urt,
			   double own_proportion, double other_proportion, double need_diff)
{
	double diff = other_time - own_time;
	double rel_diff = other_time / own_time;
	double nod = nod_of(a, b);
	double sum = succ_best_of(a, b);
	double rel = rel_diff > 1.0 ? rel_diff : 1.0 / rel_diff;
	double m;

	switch (a->ordering)
	{
	case STARPU_HETEROPRIO_NOD_TIME_COMBINATION:
		return diff + a->nt_nod * exp(-a->nt_exp * (rel - 1) * (rel - 1)) * nod;
	case STARPU_HETEROPRIO_BEST_NODS_SCORE:
	case STARPU_HETEROPRIO_BEST_NODS:
		m = diff > 0.0 ? 1.0 : exp(-a->bn_exp * diff * diff);
		return (2.0 * m - 1.0) * nod;
	case STARPU_HETEROPRIO_URT_PURE:
		return urt;
	case STARPU_HETEROPRIO_URT:
		return a->urt_urt * urt + diff;
	case STARPU_HETEROPRIO_URT_2:
		return a->urt2_urt * urt + diff + a->urt2_prop * relu(own_proportion * other_proportion * need_diff);
	case STARPU_HETEROPRIO_URT_DOT_DIFF_PURE:
		return urt * diff;
	case STARPU_HETEROPRIO_URT_DOT_DIFF_PURE_2:
		return (1.0 + urt) * diff;
	case STARPU_HETEROPRIO_URT_DOT_REL_DIFF_PURE:
		return urt * rel_diff;
	case STARPU_HETEROPRIO_URT_DOT_REL_DIFF_PURE_2:
		return (1.0 + urt) * rel_diff;
	case STARPU_HETEROPRIO_URT_DOT_DIFF_2:
		return (1.0 + urt) * diff + a->and2 * own_time * need_diff;
	case STARPU_HETEROPRIO_URT_DOT_DIFF_3:
		return (1.0 + urt) * diff + a->and3 * own_time * relu(need_diff);
	case STARPU_HETEROPRIO_URT_DOT_DIFF_4:
		return (1.0 + urt) * diff - a->and4 * own_time * relu(-need_diff);
	case STARPU_HETEROPRIO_URT_DOT_DIFF_5:
		return (a->and5x + urt) * (a->and5y + diff);
	case STARPU_HETEROPRIO_URT_DOT_DIFF_6:
		return (1.0 + urt) * log1p(exp(diff));
	case STARPU_HETEROPRIO_URT_DOT_DIFF_7:
		return rpg(urt) * (1 + urt) * (1 + diff) + (1 - rpg(urt)) * (-log1p(exp(-diff)));
	case STARPU_HETEROPRIO_URT_DOT_DIFF_8:
		return (1 / (1 + exp(-urt)) - 0.5) * (1 + urt) * (1 + diff) + (1 / (1 + exp(-1 / urt)) - 0.5) * (-exp(-diff));
	case STARPU_HETEROPRIO_URT_DOT_DIFF_9:
		return log(a->and9x + urt) * atan(diff + a->and9y * urt);
	case STARPU_HETEROPRIO_URT_DOT_DIFF_10:
		return (a->and10x + urt) * atan(diff) + a->and10y * urt;
	case STARPU_HETEROPRIO_URT_DOT_DIFF_11:
		return (a->and11x + urt) * (diff + a->and11y * urt);
	case STARPU_HETEROPRIO_URTS_PER_SECONDS:
		return urt / own_time;
	case STARPU_HETEROPRIO_URTS_PER_SECONDS_2:
		return (urt + diff) / own_time;
	case STARPU_HETEROPRIO_URTS_PER_SECONDS_DIFF:
		return urt / own_time + diff;
	case STARPU_HETEROPRIO_URTS_TIME_RELEASED_DIFF:
		return urt * (sum + diff) / own_time;
	case STARPU_HETEROPRIO_URTS_TIME_COMBINATION:
		return diff + a->ant_nod * exp(-a->ant_exp * (rel - 1) * (rel - 1)) * urt;
	case STARPU_HETEROPRIO_NODS_PER_SECOND:
		return nod / own_time;
	case STARPU_HETEROPRIO_NODS_TIME_RELEASED:
		return nod * sum / own_time;
	default: /* STARPU_HETEROPRIO_NODS_TIME_RELEASED_DIFF: the value was checked at open */
		return nod * (sum + diff) / own_time;
	}
}

/*
 * Sorts, for each architecture, the buckets it looks at by score: each
 * architecture is compared with the slowest one that can run the bucket
 * (the slowest with the second slowest).
 */
static void order(const struct hp_auto *a, struct astro_heteroprio_setup *layout)
{
	struct score scores[STARPU_NARCH][NB];
	unsigned n[STARPU_NARCH] = { 0 };

	for (unsigned b = 0; b < a->ncodelets; b++)
	{
		int worst = -1, second = -1;
		double worst_time = -1.0, second_time = -1.0;

		for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		{
			double t;

			if (!can_run(layout, b, arch))
				continue;
			t = normalized_time(a, layout, b, arch);
			if (worst_time < t)
			{
				second = worst;
				second_time = worst_time;
				worst = (int)arch;
				worst_time = t;
			}
			else if (second_time < t)
			{
				second = (int)arch;
				second_time = t;
			}
		}
		if (worst < 0)
			continue;

		double worst_prop = arch_proportion(a, b, (unsigned)worst), worst_urt = urt_of(a, b, (unsigned)worst);
		double second_prop = 0.0, second_urt = 0.0;

		if (second < 0)
			second_time = EXTREMELY_LONG_TIME;
		else
		{
			second_prop = arch_proportion(a, b, (unsigned)second);
			second_urt = urt_of(a, b, (unsigned)second);
		}
		for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		{
			int is_worst = (int)arch == worst;
			double other_time = is_worst ? second_time : worst_time;
			double other_urt = is_worst ? second_urt : worst_urt;
			double other_prop = is_worst ? second_prop : worst_prop;
			double need_other = 1.0 - other_prop;
			double need_own = 1.0 - busy_proportion(a, arch);
			struct score *s;

			if (!can_run(layout, b, arch))
				continue;
			s = &scores[arch][n[arch]++];
			s->bucket = b;
			s->score = policy_score(a, b, normalized_time(a, layout, b, arch), other_time,
						urt_of(a, b, arch) * need_own + other_urt * need_other,
						arch_proportion(a, b, arch), other_prop, need_own - need_other);
			/* Too few times measured there: first in line, to be measured. */
			if (!a->freeze && a->time_count[arch][b] < RELEVANT_SAMPLES)
				s->score += 99999999.0;
		}
	}
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
	{
		qsort(scores[arch], n[arch], sizeof(scores[arch][0]), by_score);
		for (unsigned i = 0; i < n[arch]; i++)
			layout->mapping[arch][i] = scores[arch][i].bucket;
	}
}

static void print_order(const struct hp_auto *a, const struct astro_heteroprio_setup *layout)
{
	fprintf(stderr, "[AUTOHETEROPRIO] Updated task priorities:\n");
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
	{
		if (!a->ncodelets_on[arch])
			continue;
		fprintf(stderr, "\t%s:", starpu_worker_get_type_as_string((enum starpu_worker_archtype)arch));
		for (unsigned i = 0; i < a->ncodelets_on[arch]; i++)
			fprintf(stderr, " %s", a->names[layout->mapping[arch][i]]);
		fprintf(stderr, "\n");
	}
}

static void print_data(const struct hp_auto *a, const struct astro_heteroprio_setup *layout)
{
	fprintf(stderr, "[AUTOHETEROPRIO] Updated values:\n\tbusy proportion:");
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		if (a->ncodelets_on[arch])
			fprintf(stderr, " %s %f", starpu_worker_get_type_as_string((enum starpu_worker_archtype)arch), busy_proportion(a, arch));
	fprintf(stderr, "\n");
	for (unsigned b = 0; b < a->ncodelets; b++)
	{
		fprintf(stderr, "\tcodelet %s: NOD %f, proportion %f, successors' best time %f\n", a->names[b], nod_of(a, b), a->proportion[b], succ_best_of(a, b));
		for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
			if (can_run(layout, b, arch))
				fprintf(stderr, "\t\t%s: URT %f, estimated time %f, normalized time %f, share %f\n",
					starpu_worker_get_type_as_string((enum starpu_worker_archtype)arch), urt_of(a, b, arch),
					estimated_time(a, layout, b, arch), normalized_time(a, layout, b, arch), arch_proportion(a, b, arch));
	}
}

/* ---------------------------------------------------------- data file */

/* Skips comment lines (#...) and empty lines. */
static void skip_comments(FILE *f)
{
	int c;

	while ((c = getc(f)) != EOF)
	{
		if (c == '#')
		{
			while ((c = getc(f)) != EOF && c != '\n')
				;
		}
		else if (c != '\n')
		{
			ungetc(c, f);
			return;
		}
	}
}

/* Reads the file path, fields in StarPU's order. Returns NULL, or why it stopped (what was read stays). */
static const char *read_file(struct hp_auto *a, struct astro_heteroprio_setup *layout, FILE *f)
{
	unsigned narchs, ids[64], ignored;

	skip_comments(f);
	if (fscanf(f, "%u", &narchs) != 1 || narchs > 64)
		return "no number of architectures";
	for (unsigned i = 0; i < narchs; i++)
		if (fscanf(f, "%u", &ids[i]) != 1)
			return "an architecture id is missing";
	if (getc(f) != '\n')
		return "the line of architecture ids does not end after them";
	skip_comments(f);
	for (unsigned i = 0; i < narchs; i++)
	{
		double busy, idle;

		if (fscanf(f, "%lf %lf", &busy, &idle) != 2)
			return "the busy and free times of an architecture are missing";
		if (ids[i] < STARPU_NARCH)
		{
			a->avg_busy[ids[i]] = busy;
			a->avg_free[ids[i]] = idle;
		}
	}
	if (getc(f) != '\n')
		return "the line of busy and free times does not end after them";
	skip_comments(f);

	char name[NAME_LEN + 1];
	while (fscanf(f, "%32s", name) == 1)
	{
		unsigned can[64], archs = 0;
		unsigned b = a->ncodelets;

		ignored = 0;
		for (unsigned i = 0; i < narchs; i++)
		{
			if (fscanf(f, "%u", &can[i]) != 1)
				return "a codelet's line lacks an architecture";
			if (can[i] && ids[i] < STARPU_NARCH)
				archs |= 1u << ids[i];
			else if (can[i])
				ignored++;
		}
		if (!archs)
			return "a codelet runs on no architecture known here";
		if (b >= NB)
			return "it names more codelets than there are buckets";
		if (find_codelet(a, layout, name, archs) >= 0)
			return "it names a codelet twice";
		if (fscanf(f, "%lf %u %u %lf %u %u %lf %u %lf %u", &a->nod[b], &a->nod_count[b], &a->urt_count[b], &a->proportion[b],
			   &a->proportion_count[b], &a->arch_proportion_count[b], &a->succ_best[b], &a->succ_best_count[b],
			   &a->best[b], &a->best_count[b]) != 10)
			return "a codelet's statistics line is incomplete";
		for (unsigned i = 0; i < narchs; i++)
		{
			unsigned arch = ids[i];

			if (!can[i] || arch >= STARPU_NARCH)
				continue;
			if (fscanf(f, "%lf %lf %u %lf", &a->urt[arch][b], &a->time[arch][b], &a->time_count[arch][b], &a->arch_proportion[arch][b]) != 4)
				return "a codelet's line for an architecture is incomplete";
			a->has_time[arch][b] = a->time_count[arch][b] > 0;
		}
		/* Lines of architectures this build does not know: skipped, after the end of the line read last. */
		if (ignored)
		{
			int c;

			while ((c = getc(f)) != EOF && c != '\n')
				;
			for (; ignored && c != EOF; ignored--)
				while ((c = getc(f)) != EOF && c != '\n')
					;
		}
		add_codelet(a, layout, name, archs);
		skip_comments(f);
	}
	if (!feof(f))
		return "a codelet's name is missing";
	return NULL;
}

static void load(struct hp_auto *a, struct astro_heteroprio_setup *layout)
{
	FILE *f = fopen(a->path, "r");
	const char *why;

	if (!f)
	{
		if (errno != ENOENT)
			astro_log_error(what, "automatic mode: cannot read its data file %s (%s); it starts without what earlier runs measured",
					a->path, strerror(errno));
		return;
	}
	flock(fileno(f), LOCK_SH);
	why = read_file(a, layout, f);
	flock(fileno(f), LOCK_UN);
	fclose(f);
	if (why)
		astro_log_error(what, "automatic mode: its data file %s is damaged (%s); it keeps the %u codelets read before that. "
				"Remove the file (or set STARPU_HETEROPRIO_DATA_FILE to another one): it is written anew at shutdown",
				a->path, why, a->ncodelets);
}

static void save(const struct hp_auto *a, const struct astro_heteroprio_setup *layout)
{
	FILE *f = fopen(a->path, "a+");

	if (!f)
	{
		astro_log_error(what, "automatic mode: cannot write its data file %s (%s): what this run measured is lost; "
				"set STARPU_HETEROPRIO_DATA_DIR or STARPU_HETEROPRIO_DATA_FILE to a place that can be written",
				a->path, strerror(errno));
		return;
	}
	flock(fileno(f), LOCK_EX);
	if (ftruncate(fileno(f), 0) != 0)
		astro_log_error(what, "automatic mode: cannot empty its data file %s (%s)", a->path, strerror(errno));
	fseek(f, 0, SEEK_SET);

	unsigned narchs = 0;
	fprintf(f, "##################\n# Known architectures\n# number_of_archs arch_ids (");
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		if (a->ncodelets_on[arch])
		{
			narchs++;
			fprintf(f, "%s - %u, ", starpu_worker_get_type_as_string((enum starpu_worker_archtype)arch), arch);
		}
	fprintf(f, ")\n%u", narchs);
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		if (a->ncodelets_on[arch])
			fprintf(f, " %u", arch);
	fprintf(f, "\n##################\n# Busy/Free proportion per architecture\n"
		"# ARCH1_busy_time ARCH1_free_time ... ARCHn_busy_time ARCHn_free_time\n");
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		if (a->ncodelets_on[arch])
			fprintf(f, " %lf %lf", a->avg_busy[arch], a->avg_free[arch]);
	fprintf(f, "\n##################\n# Codelets specific data\n# codelet_name arch_1_can_exec ... arch_n_can_exec\n"
		"# average_NOD average_NOD_count average_URT_count overall_proportion overall_proportion_count arch_proportion_count "
		"avg_best_successor_time avg_best_successor_time_count prio_average_best prio_average_best_count\n"
		"# for each arch which can exec: average_URT_ARCH average_time_ARCH average_time_ARCH_count ARCH_proportion\n##########\n");
	for (unsigned b = 0; b < a->ncodelets; b++)
	{
		fprintf(f, "%s", a->names[b]);
		for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
			if (a->ncodelets_on[arch])
				fprintf(f, " %u", can_run(layout, b, arch));
		fprintf(f, "\n%lf %u %u %lf %u %u %lf %u %lf %u\n", a->nod[b], a->nod_count[b], a->urt_count[b], a->proportion[b],
			a->proportion_count[b], a->arch_proportion_count[b], a->succ_best[b], a->succ_best_count[b], a->best[b], a->best_count[b]);
		for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
			if (a->ncodelets_on[arch] && can_run(layout, b, arch))
				fprintf(f, "%lf %lf %u %lf\n", a->urt[arch][b], a->time[arch][b], a->time_count[arch][b], a->arch_proportion[arch][b]);
		fprintf(f, "#####\n");
	}
	fflush(f);
	flock(fileno(f), LOCK_UN);
	if (fclose(f) != 0)
		astro_log_error(what, "automatic mode: writing its data file %s failed (%s)", a->path, strerror(errno));
}

/* Creates dir and its parents. */
static int make_dirs(const char *dir)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/')
		{
			*p = '\0';
			if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* STARPU_HETEROPRIO_DATA_FILE, else <STARPU_HETEROPRIO_DATA_DIR, else the sampling directory's heteroprio/>/<program>.data. */
static void data_path(struct hp_auto *a)
{
	const char *file = astro_env_string("STARPU_HETEROPRIO_DATA_FILE", ASTRO_ENV_PATH_MAX, NULL);
	const char *dir = astro_env_string("STARPU_HETEROPRIO_DATA_DIR", ASTRO_ENV_PATH_MAX, NULL);
	char d[PATH_MAX];

	if (file && file[0])
	{
		snprintf(a->path, sizeof(a->path), "%s", file);
		return;
	}
	if (dir && dir[0])
		snprintf(d, sizeof(d), "%s", dir);
	else
	{
		astro_sched_sampling_dir(d, sizeof(d));
		strncat(d, "/heteroprio", sizeof(d) - strlen(d) - 1);
	}
	if (make_dirs(d) != 0)
		astro_log_error(what, "automatic mode: cannot create the directory %s for its data file (%s); "
				"set STARPU_HETEROPRIO_DATA_DIR or STARPU_HETEROPRIO_DATA_FILE", d, strerror(errno));
	snprintf(a->path, sizeof(a->path), "%s/%s.data", d, program_invocation_short_name);
}

/* ------------------------------------------------------------- entries */

struct hp_auto *hp_auto_open(struct astro_heteroprio_setup *layout)
{
	struct hp_auto *a;

	if (astro_env_int("STARPU_HETEROPRIO_USE_AUTO_CALIBRATION", 0, 1, 0, NULL) <= 0)
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
	{
		astro_log_error(what, "automatic mode: out of memory; heteroprio runs with the buckets of the policy's callback");
		return NULL;
	}
	a->grouping = (enum grouping)astro_env_int("STARPU_HETEROPRIO_CODELET_GROUPING_STRATEGY", 0, 1, BY_PERF_MODEL_OR_NAME, NULL);
	/* enum starpu_autoheteroprio_priority_ordering_policy: 0..27 */
	a->ordering = (unsigned)astro_env_int("STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY", 0,
					      STARPU_AUTOHETEROPRIO_PRIORITY_ORDERING_POLICY_COUNT - 1,
					      STARPU_HETEROPRIO_URT_DOT_DIFF_4, NULL);
	a->interval = astro_env_int("STARPU_AUTOHETEROPRIO_ORDERING_INTERVAL", 0, 1000000, 32, "pushed tasks");
	a->freeze = astro_env_int("STARPU_AUTOHETEROPRIO_FREEZE_GATHERING", 0, 1, 0, NULL) > 0;
	a->print_after_ordering = astro_env_int("STARPU_AUTOHETEROPRIO_PRINT_AFTER_ORDERING", 0, 1, 0, NULL) > 0;
	a->print_on_update = astro_env_int("STARPU_AUTOHETEROPRIO_PRINT_DATA_ON_UPDATE", 0, 1, 0, NULL) > 0;
	a->time_policy = (unsigned)astro_env_int("STARPU_AUTOHETEROPRIO_TIME_ESTIMATION_POLICY", 0, 1, 0, NULL);
	a->nt_nod = astro_env_float("STARPU_HETEROPRIO_NOD_TIME_COMBINATION_NOD_MULTIPLIER", 0.0f, 1000.0f, 0.3f, NULL);
	a->nt_exp = astro_env_float("STARPU_HETEROPRIO_NOD_TIME_COMBINATION_EXP_SELECTIVITY", 0.0f, 1000.0f, 0.5f, NULL);
	a->bn_exp = astro_env_float("STARPU_HETEROPRIO_BEST_NODS_SCORE_EXP_SELECTIVITY", 0.0f, 1000.0f, 0.5f, NULL);
	a->urt_urt = astro_env_float("STARPU_HETEROPRIO_URT_URT_MULTIPLIER", 0.0f, 1000.0f, 0.5f, NULL);
	a->urt2_urt = astro_env_float("STARPU_HETEROPRIO_URT_2_URT_MULTIPLIER", 0.0f, 1000.0f, 0.5f, NULL);
	a->urt2_prop = astro_env_float("STARPU_HETEROPRIO_URT_2_ARCH_NEED_MULTIPLIER", 0.0f, 1000.0f, 2.0f, NULL);
	a->and2 = astro_env_float("STARPU_HETEROPRIO_URT_DOT_DIFF_2_ARCH_NEED_MULTIPLIER", 0.0f, 1000.0f, 1.0f, NULL);
	a->and3 = astro_env_float("STARPU_HETEROPRIO_URT_DOT_DIFF_3_ARCH_NEED_MULTIPLIER", 0.0f, 1000.0f, 1.0f, NULL);
	a->and4 = astro_env_float("STARPU_HETEROPRIO_URT_DOT_DIFF_4_ARCH_NEED_MULTIPLIER", 0.0f, 1000.0f, 1.0f, NULL);
	a->and5x = astro_env_float("STARPU_HETEROPRIO_URT_DOT_DIFF_5_NOD_OFFSET", 0.0f, 1000.0f, 1.3f, NULL);
	a->and5y = astro_env_float("STARPU_HETEROPRIO_URT_DOT_DIFF_5_ARCH_DIFF_OFFSET", 0.0f, 1000.0f, 1.0f, NULL);
	a->and9x = astro_env_float("STARPU_HETEROPRIO_URT_DOT_DIFF_9_NOD_OFFSET", 0.0f, 1000.0f, 1.3f, NULL);
	a->and9y = astro_env_float("STARPU_HETEROPRIO_URT_DOT_DIFF_9_ARCH_DIFF_OFFSET", 0.0f, 1000.0f, 1.0f, NULL);
	/* StarPU 1.4 spells this one with AURT. */
	a->and10x = astro_env_float("STARPU_HETEROPRIO_AURT_DOT_DIFF_10_NOD_OFFSET", 0.0f, 1000.0f, 1.3f, NULL);
	a->and10y = astro_env_float("STARPU_HETEROPRIO_URT_DOT_DIFF_10_ARCH_DIFF_OFFSET", 0.0f, 1000.0f, 1.0f, NULL);
	a->and11x = astro_env_float("STARPU_HETEROPRIO_URT_DOT_DIFF_11_NOD_OFFSET", 0.0f, 1000.0f, 1.3f, NULL);
	a->and11y = astro_env_float("STARPU_HETEROPRIO_URT_DOT_DIFF_11_ARCH_DIFF_OFFSET", 0.0f, 1000.0f, 1.0f, NULL);
	a->ant_nod = astro_env_float("STARPU_HETEROPRIO_URTS_TIME_COMBINATION_NOD_MULTIPLIER", 0.0f, 1000.0f, 0.3f, NULL);
	a->ant_exp = astro_env_float("STARPU_HETEROPRIO_URTS_TIME_COMBINATION_EXP_SELECTIVITY", 0.0f, 1000.0f, 0.5f, NULL);

	memset(layout, 0, sizeof(*layout));
	for (unsigned b = 0; b < NB; b++)
		layout->buckets[b].faster_arch = ASTRO_HETEROPRIO_NO_FASTER_ARCH;
	data_path(a);
	load(a, layout);
	update_slowdowns(a, layout);
	return a;
}

void hp_auto_close(struct hp_auto *a, const struct astro_heteroprio_setup *layout)
{
	if (!a)
		return;
	if (!a->freeze)
	{
		for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		{
			double busy = a->avg_busy[arch] + a->busy_now[arch];
			double idle = a->avg_free[arch] + a->free_now[arch];
			double most = fmax(busy, idle);
			double scale = most > MAX_PROFILING_TIME ? MAX_PROFILING_TIME / most : 1.0;

			a->avg_busy[arch] = busy * scale;
			a->avg_free[arch] = idle * scale;
		}
		save(a, layout);
	}
	free(a);
}

int hp_auto_push(struct hp_auto *a, struct astro_heteroprio_setup *layout, const struct starpu_task *task)
{
	char name[NAME_LEN + 1];
	unsigned archs = codelet_archs(task);
	int b;

	codelet_name(a, task->cl, name);
	if (!archs)
	{
		if (!a->reported_nowhere)
			astro_log_error(what, "automatic mode: codelet %s has an implementation for no architecture its task allows; "
					"give it one (cpu_funcs, opencl_funcs...) within its where", name);
		a->reported_nowhere = 1;
		return -1;
	}
	b = find_codelet(a, layout, name, archs);
	if (b < 0)
	{
		if (a->ncodelets >= NB)
		{
			if (!a->reported_full)
				astro_log_error(what, "automatic mode: codelet %s would need a bucket of its own, but the %u buckets are taken by other codelets; "
						"group codelets under fewer performance models or names (STARPU_HETEROPRIO_CODELET_GROUPING_STRATEGY)", name, NB);
			a->reported_full = 1;
			return -1;
		}
		b = (int)add_codelet(a, layout, name, archs);
	}

	if (!a->freeze && a->since_ordering >= a->interval)
		a->since_ordering = 0;
	if (a->since_ordering == 0)
	{
		order(a, layout);
		if (a->print_after_ordering)
			print_order(a, layout);
		update_slowdowns(a, layout);
	}
	a->since_ordering++;
	if (!a->freeze)
	{
		add_submitted(a, (unsigned)b);
		/* No task graph: no successors to draw NOD, URT and their best times from (see the top of this file). */
		add_sample(&a->nod[b], &a->nod_count[b], 0.0);
		if (a->urt_count[b] < RELEVANT_LIFE)
			a->urt_count[b]++;
		for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
			a->urt[arch][b] *= (double)(a->urt_count[b] - 1) / (double)a->urt_count[b];
		add_sample(&a->succ_best[b], &a->succ_best_count[b], 0.0);
		add_sample(&a->best[b], &a->best_count[b], best_time(a, layout, (unsigned)b));
		update_slowdowns(a, layout);
		if (a->print_on_update)
			print_data(a, layout);
	}
	return b;
}

void hp_auto_worker_added(struct hp_auto *a, int workerid, double now)
{
	a->last_hook[workerid] = now;
}

void hp_auto_task_started(struct hp_auto *a, int workerid, int arch, double now)
{
	if (a->freeze)
		return;
	a->free_now[arch] += now - a->last_hook[workerid];
	a->last_hook[workerid] = now;
}

void hp_auto_task_ended(struct hp_auto *a, const struct astro_heteroprio_setup *layout, const struct starpu_task *task, int workerid, int arch, double now)
{
	double busy = now - a->last_hook[workerid];
	char name[NAME_LEN + 1];
	int b;

	if (a->freeze)
		return;
	a->last_hook[workerid] = now;
	a->busy_now[arch] += busy;
	if (!task->cl)
		return;
	codelet_name(a, task->cl, name);
	if ((b = find_codelet(a, layout, name, codelet_archs(task))) < 0)
		return;
	add_ran_on(a, (unsigned)b, (unsigned)arch);
	add_sample(&a->time[arch][b], &a->time_count[arch][b], busy);
	a->has_time[arch][b] = 1;
}
