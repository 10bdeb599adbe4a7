/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_perfmodel_plot: writes a gnuplot script drawing a performance model
 * (its regression curves and the mean and deviation of each measured size),
 * with StarPU 1.4's options and files:
 *   <dir>/starpu_<symbol>.gp          (starpu_gflops_<symbol>.gp with -f,
 *                                      starpu_power_<symbol>.gp with -se)
 *   <dir>/starpu_<symbol>_avg.data    size, then mean and deviation per
 *                                      architecture and implementation
 *   <dir>/starpu_<symbol>.data        with -i: one line per execution of the
 *                                      model's tasks in the traces, "<arch>
 *                                      <size> <length in ms>", one block
 *                                      (two blank lines apart) per architecture
 * Running the script (`gnuplot starpu_<symbol>.gp`) renders <base>.eps and
 * <base>.png. Times are plotted in ms, energies in J.
 */
#include <astrolabe/env.h>
#include <starpu.h>
#ifdef ASTRO_PLOT_READS_TRACES
#include <astrolabe/trace_format.h>
#include "../plugins/tools/trace/convert.h"
#endif
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SERIES 64
#define MAX_SELECTED 64
#define MAX_INPUTS 256

static const char *argv0;

enum unit { TIME, ENERGY, GFLOPS, GFLOPS_PER_WATT, POWER };

struct series
{
	int comb;
	unsigned impl;
	struct starpu_perfmodel_arch *arch;
	struct starpu_perfmodel_per_arch *pa, *energy;	/* energy: the -se energy model's block */
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: %s [OPTION]\n"
		"Write a gnuplot script (and its data) drawing a performance model; run it with gnuplot to get\n"
		"starpu_<symbol>.png and .eps.\n\n"
		"  -s <symbol>        the model to draw\n"
		"  -se <time> <energy>  draw the power (W) of two models: a time model and an energy model\n"
		"  -e                 the model is an energy model: plot Joules\n"
		"  -f                 plot GFlop/s (GFlop/s/W with -e) from the tasks' flops; no regression curves\n"
		"  -c <comb>          only this architecture combination (repeat for more; see -lc)\n"
		"  -lc                list the combinations of the model\n"
		"  -o <dir>           write the files in dir (default: the current directory)\n"
		"  -i <traces>        add the length of each execution of the model's tasks the traces recorded\n"
		"                     (STARPU_FXT_TRACE=1: prof_file_<user>_<id>, their folders or their traces.otf2;\n"
		"                     several traces of one run are merged, as starpu_fxt_tool -i does)\n"
		"  -l                 list the model files\n"
		"  -d                 display the directories searched for model files\n"
		"  -h                 display this help and exit\n"
		"  -v                 output version information and exit\n", argv0);
}

static void host_name(char *host, size_t len)
{
	const char *v = astro_env_string("STARPU_HOSTNAME", ASTRO_ENV_NAME_MAX, NULL);
	if (v && v[0]) {
		snprintf(host, len, "%s", v);
		return;
	}
	if (gethostname(host, len) != 0)
		snprintf(host, len, "unknown");
	host[len - 1] = '\0';
	host[strcspn(host, ".")] = '\0';
}

/* Gnuplot's enhanced text reads '_' as a subscript. */
static void dashes(char *s)
{
	for (; *s; s++)
		if (*s == '_')
			*s = '-';
}

static bool has_data(const struct starpu_perfmodel_per_arch *pa)
{
	return pa && (pa->list || pa->regression.nsample || pa->regression.valid || pa->regression.nl_valid);
}

static const struct starpu_perfmodel_history_entry *entry_of_size(const struct starpu_perfmodel_per_arch *pa, size_t size)
{
	for (const struct starpu_perfmodel_history_list *l = pa ? pa->list : NULL; l; l = l->next)
		if (l->entry->size == size && l->entry->nsample)
			return l->entry;
	return NULL;
}

/* The plotted value (and its deviation) of the series at size; false when there is none. */
static bool value_at(const struct series *s, size_t size, enum unit unit, double *v, double *dev)
{
	const struct starpu_perfmodel_history_entry *e = entry_of_size(s->pa, size);
	if (!e || !(e->mean > 0))
		return false;
	switch (unit) {
	case TIME:
		*v = 0.001 * e->mean, *dev = 0.001 * e->deviation;
		return true;
	case ENERGY:
		*v = e->mean, *dev = e->deviation;
		return true;
	case GFLOPS:
	case GFLOPS_PER_WATT:
		if (!(e->flops > 0))
			return false;
		/* flops per µs / 1000 = GFlop/s; flops per J / 1e9 = GFlop/s/W */
		*v = unit == GFLOPS ? e->flops / (e->mean * 1000) : e->flops / (e->mean * 1e9);
		*dev = *v * e->deviation / e->mean;
		return true;
	case POWER: {
		const struct starpu_perfmodel_history_entry *j = entry_of_size(s->energy, size);
		if (!j || !(j->mean > 0))
			return false;
		*v = j->mean / (e->mean * 1e-6);
		*dev = *v * sqrt(pow(j->deviation / j->mean, 2) + pow(e->deviation / e->mean, 2));
		return true;
	}
	}
	return false;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* Writes the sizes and values of every series; returns how many values, or -1. */
static int write_data(const char *path, const struct series *series, int n, enum unit unit)
{
	size_t *sizes = NULL;
	unsigned nsizes = 0, cap = 0;
	for (int i = 0; i < n; i++)
		for (const struct starpu_perfmodel_history_list *l = series[i].pa->list; l; l = l->next) {
			bool seen = false;
			for (unsigned k = 0; k < nsizes && !seen; k++)
				seen = sizes[k] == l->entry->size;
			if (seen)
				continue;
			if (nsizes == cap) {
				cap = cap ? 2 * cap : 16;
				size_t *bigger = realloc(sizes, cap * sizeof(*sizes));
				if (!bigger) {
					free(sizes);
					return -1;
				}
				sizes = bigger;
			}
			sizes[nsizes++] = l->entry->size;
		}
	qsort(sizes, nsizes, sizeof(*sizes), cmp_size);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "%s: cannot write %s (%s)\n", argv0, path, strerror(errno));
		free(sizes);
		return -1;
	}
	int nvalues = 0;
	for (unsigned k = 0; k < nsizes; k++) {
		fprintf(f, "%-15lu", (unsigned long)sizes[k]);
		for (int i = 0; i < n; i++) {
			double v, dev;
			if (value_at(&series[i], sizes[k], unit, &v, &dev)) {
				fprintf(f, "\t%-15e\t%-15e", v, dev);
				nvalues++;
			} else {
				fprintf(f, "\t\"\"\t\"\"");
			}
		}
		fprintf(f, "\n");
	}
	free(sizes);
	int ret = fclose(f) == 0 ? nvalues : -1;
	if (ret < 0)
		fprintf(stderr, "%s: cannot write %s (%s)\n", argv0, path, strerror(errno));
	return ret;
}

static void separator(FILE *f, bool *first)
{
	fprintf(f, "%s", *first ? "plot\t" : ",\\\n\t");
	*first = false;
}

/* The regression curves of s, in the plot's unit (time in ms, energy in J). */
static void curves(FILE *f, const struct series *s, enum unit unit, bool *first)
{
	const struct starpu_perfmodel_regression_model *r = &s->pa->regression;
	const char *scale = unit == TIME ? "0.001 * " : "";
	double k = unit == TIME ? 0.001 : 1;
	char name[256];
	starpu_perfmodel_get_arch_name(s->arch, name, sizeof(name), s->impl);
	if (r->valid && !r->nl_valid) {
		fprintf(stderr, "\tLinear: y = alpha size ^ beta\n\t\talpha = %e\n\t\tbeta = %e\n", r->alpha * k, r->beta);
		separator(f, first);
		fprintf(f, "%s%g * x ** %g title \"Linear Regression %s\"", scale, r->alpha, r->beta, name);
	}
	if (r->nl_valid) {
		fprintf(stderr, "\tNon-Linear: y = a size ^b + c\n\t\ta = %e\n\t\tb = %e\n\t\tc = %e\n", r->a * k, r->b, r->c * k);
		separator(f, first);
		fprintf(f, "%s%g * x ** %g + %s%g title \"Non-Linear Regression %s\"", scale, r->a, r->b, scale, r->c, name);
	}
}

struct options
{
	const char *symbol, *energy_symbol, *dir;
	int selected[MAX_SELECTED], nselected;
	const char *inputs[MAX_INPUTS];
	unsigned ninputs;
	bool energy, gflops, list_combs;
};

/* ------------------------------------------------- -i: points from traces */

/* One execution of a task of the model, read from a trace. */
struct point
{
	char arch[64];	/* the worker's architecture, as in the model's names: cpu0, cuda1... */
	double size;	/* the model's size of the task's data */
	double ms;	/* its length */
};

struct points
{
	struct point *v;
	size_t n, cap;
	bool failed;	/* out of memory */
};

#ifdef ASTRO_PLOT_READS_TRACES
/* What the trace format below reads into: set before the conversion. */
static struct
{
	const char *symbol;
	struct starpu_perfmodel *model;
	struct points *points;
} reading;

/* The size the model gave the data of footprint (size_base and all): that of
 * its history entry of this footprint, the trace's bytes when it has none. */
static double model_size(struct starpu_perfmodel *model, uint32_t footprint, uint64_t bytes)
{
	int ncombs = starpu_perfmodel_get_narch_combs();
	for (int c = 0; c < ncombs; c++)
		for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++) {
			struct starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(model, starpu_perfmodel_arch_comb_fetch(c), impl);
			for (const struct starpu_perfmodel_history_list *l = pa ? pa->list : NULL; l; l = l->next)
				if (l->entry->footprint == footprint)
					return (double)l->entry->size;
		}
	return (double)bytes;
}

/* "CPU3" -> "cpu0" (every CPU worker shares the cpu0 architecture), "CUDA1" -> "cuda1": the
 * names the model gives the architectures, without the implementation the trace does not tell. */
static void arch_of_location(const char *location, char *arch, size_t len)
{
	char type[32];
	size_t n = strcspn(location, "0123456789");
	snprintf(type, sizeof(type), "%.*s", (int)(n < sizeof(type) ? n : sizeof(type) - 1), location);
	int devid = atoi(location + n);
	enum starpu_worker_archtype t = starpu_worker_get_type_from_string(type);
	const char *name = t == STARPU_ANY_WORKER ? NULL : starpu_perfmodel_get_archtype_name(t);
	if (!name)
		snprintf(arch, len, "%s", location);
	else
		snprintf(arch, len, "%s%d", name, t == STARPU_CPU_WORKER ? 0 : devid);
}

static void *points_begin(const struct astro_trace_format_options *options)
{
	(void)options;
	return &reading;
}

/* The symbol, with or without the ".<host>" StarPU's files may add to it. */
static bool same_model(const char *model, const char *symbol)
{
	size_t n = strlen(model);
	return !strcmp(model, symbol) || (!strncmp(model, symbol, n) && symbol[n] == '.');
}

static void points_state(void *state, const struct astro_trace_state *s)
{
	(void)state;
	const struct astro_trace_task *t = s->task;
	if (!s->left || !s->is_task || !t || s->end < s->begin)
		return;
	const char *model = t->model ? t->model : t->name;
	if (!model || !same_model(model, reading.symbol))
		return;
	struct points *p = reading.points;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;
		struct point *bigger = realloc(p->v, cap * sizeof(*bigger));
		if (!bigger) {
			p->failed = true;
			return;
		}
		p->v = bigger, p->cap = cap;
	}
	struct point *pt = &p->v[p->n++];
	arch_of_location(s->location->name, pt->arch, sizeof(pt->arch));
	pt->size = model_size(reading.model, t->footprint, t->size);
	pt->ms = (double)(s->end - s->begin) / 1e6;
}

static int points_end(void *state)
{
	(void)state;
	return 0;
}

static const struct astro_trace_format points_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "perfmodel_plot",
	.description = "starpu_<symbol>.data: the executions of a model's tasks, for starpu_perfmodel_plot -i",
	.begin = points_begin,
	.state = points_state,
	.end = points_end,
};

/* Reads the executions of model's tasks in the o->ninputs traces into points: 0, or -1 (said). */
static int read_traces(const struct options *o, struct starpu_perfmodel *model, struct points *points)
{
	reading.symbol = o->symbol;
	reading.model = model;
	reading.points = points;
	if (astro_trace_format_register(&points_format) != 0 || trace_convert_one_format(argv0, o->inputs, o->ninputs, points_format.name) != 0)
		return -1;
	if (points->failed) {
		fprintf(stderr, "%s: out of memory reading the traces\n", argv0);
		return -1;
	}
	return 0;
}
#else
static int read_traces(const struct options *o, struct starpu_perfmodel *model, struct points *points)
{
	(void)o, (void)model, (void)points;
	fprintf(stderr, "%s: -i cannot read traces: this build has no trace converter (configure found no OTF2: "
		"install libotf2-trace-dev and configure again)\n", argv0);
	return -1;
}
#endif

/* Writes the points, grouped by architecture in the order first met, to path; the
 * architectures (at most MAX_SERIES) in archs: how many, or -1 (said). */
static int write_points(const char *path, const struct points *p, char archs[MAX_SERIES][64])
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "%s: cannot write %s (%s)\n", argv0, path, strerror(errno));
		return -1;
	}
	int narchs = 0;
	for (size_t i = 0; i < p->n; i++) {
		bool seen = false;
		for (int a = 0; a < narchs && !seen; a++)
			seen = !strcmp(archs[a], p->v[i].arch);
		if (!seen && narchs < MAX_SERIES)
			snprintf(archs[narchs++], 64, "%s", p->v[i].arch);
	}
	for (int a = 0; a < narchs; a++) {
		if (a)
			fprintf(f, "\n\n");
		for (size_t i = 0; i < p->n; i++)
			if (!strcmp(archs[a], p->v[i].arch))
				fprintf(f, "%s\t%.0f\t%f\n", p->v[i].arch, p->v[i].size, p->v[i].ms);
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "%s: cannot write %s (%s)\n", argv0, path, strerror(errno));
		return -1;
	}
	return narchs;
}

/* Reads the command line into o: -1 to go on, else the exit status (an
 * option that does all there is to do, like -l or -h, or a bad one, said). */
static int parse_options(int argc, char **argv, struct options *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;
		if (!strcmp(a, "-s") && more) {
			o->symbol = argv[++i];
		} else if (!strcmp(a, "-se") && i + 2 < argc) {
			o->symbol = argv[++i];
			o->energy_symbol = argv[++i];
		} else if (!strcmp(a, "-e")) {
			o->energy = true;
		} else if (!strcmp(a, "-f")) {
			o->gflops = true;
		} else if (!strcmp(a, "-lc")) {
			o->list_combs = true;
		} else if (!strcmp(a, "-c") && more) {
			char *end;
			long c = strtol(argv[++i], &end, 10);
			if (*end || end == argv[i] || c < 0 || o->nselected == MAX_SELECTED) {
				fprintf(stderr, "%s: -c %s is not a combination number (see -lc)\n", argv0, argv[i]);
				return EXIT_FAILURE;
			}
			o->selected[o->nselected++] = (int)c;
		} else if (!strcmp(a, "-o") && more) {
			o->dir = argv[++i];
		} else if (!strcmp(a, "-i") && more) {
			/* StarPU's "-i trace_*": every argument up to the next option. */
			while (i + 1 < argc && argv[i + 1][0] != '-') {
				if (o->ninputs == MAX_INPUTS) {
					fprintf(stderr, "%s: -i takes at most %d traces\n", argv0, MAX_INPUTS);
					return EXIT_FAILURE;
				}
				o->inputs[o->ninputs++] = argv[++i];
			}
			if (!o->ninputs) {
				fprintf(stderr, "%s: option -i needs a trace (see -h)\n", argv0);
				return EXIT_FAILURE;
			}
		} else if (!strcmp(a, "-l")) {
			return starpu_perfmodel_list(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
		} else if (!strcmp(a, "-d")) {
			starpu_perfmodel_directory(stdout);
			return EXIT_SUCCESS;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return EXIT_SUCCESS;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--version")) {
			printf("%s (Astrolabe, StarPU %d.%d.%d API)\n", argv0, STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
			return EXIT_SUCCESS;
		} else if (!strcmp(a, "-s") || !strcmp(a, "-se") || !strcmp(a, "-c") || !strcmp(a, "-o") || !strcmp(a, "-i")) {
			fprintf(stderr, "%s: option %s needs %s (see -h)\n", argv0, a, !strcmp(a, "-se") ? "two symbols" : !strcmp(a, "-i") ? "a trace" : "a value");
			return EXIT_FAILURE;
		} else {
			fprintf(stderr, "%s: unknown option %s (see -h)\n", argv0, a);
			return EXIT_FAILURE;
		}
	}
	if (!o->symbol) {
		fprintf(stderr, "%s: give -s <symbol> (or -se <time> <energy>, -l, -d; see -h)\n", argv0);
		return EXIT_FAILURE;
	}
	if (o->ninputs && (o->energy || o->gflops || o->energy_symbol)) {
		fprintf(stderr, "%s: -i adds the measured lengths of the tasks, which only a time plot shows: "
			"leave out -e, -f and -se, or -i\n", argv0);
		return EXIT_FAILURE;
	}
	return -1;
}

/* Every (combination, implementation) model has data for, among those chosen
 * with -c, in combination order, with emodel's block of the same (-se):
 * how many, in series. */
static int collect_series(struct starpu_perfmodel *model, struct starpu_perfmodel *emodel, const struct options *o,
			  struct series series[MAX_SERIES])
{
	int n = 0, ncombs = starpu_perfmodel_get_narch_combs();
	for (int c = 0; c < ncombs; c++) {
		bool keep = o->nselected == 0;
		for (int k = 0; k < o->nselected; k++)
			keep |= o->selected[k] == c;
		struct starpu_perfmodel_arch *arch = starpu_perfmodel_arch_comb_fetch(c);
		for (unsigned impl = 0; keep && impl < STARPU_MAXIMPLEMENTATIONS && n < MAX_SERIES; impl++) {
			struct starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(model, arch, impl);
			if (!has_data(pa))
				continue;
			series[n] = (struct series){ .comb = c, .impl = impl, .arch = arch, .pa = pa };
			if (o->energy_symbol)
				series[n].energy = starpu_perfmodel_get_model_per_arch(emodel, arch, impl);
			n++;
		}
	}
	return n;
}

/* The traces' points of -i: their file and its blocks, one per architecture. */
struct traced
{
	const char *data;
	char (*archs)[64];
	int narchs;
};

/* Writes the gnuplot script at path: the points of the traces (-i), the
 * regression curves of the n series (time and energy), then the averages of
 * the nmeasured measured ones read from data (when it has nvalues),
 * rendering base.eps and base.png. 0, or -1 (said). */
static int write_script(const char *path, const char *base, const char *data, const char *symbol, enum unit unit,
			const struct series *series, int n, const struct series *measured, int nmeasured, int nvalues,
			const struct traced *traced)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "%s: cannot write %s (%s)\n", argv0, path, strerror(errno));
		return -1;
	}
	static const char *const ylabel[] = { [TIME] = "Time (ms)", [ENERGY] = "Energy (J)", [GFLOPS] = "GFlop/s",
					      [GFLOPS_PER_WATT] = "GFlop/s/W", [POWER] = "Power (W)" };
	char host[256], title[512];
	host_name(host, sizeof(host));
	snprintf(title, sizeof(title), "%s", symbol);
	dashes(title);
	fprintf(f, "#!/usr/bin/gnuplot -persist\n\n");
	fprintf(f, "set term postscript eps enhanced color\n");
	fprintf(f, "set output \"%s.eps\"\n", base);
	fprintf(f, "set title \"Model for codelet %s on %s\"\n", title, host);
	fprintf(f, "set xlabel \"Total data size\"\n");
	fprintf(f, "set ylabel \"%s\"\n\n", ylabel[unit]);
	fprintf(f, "set key top left\n");
	fprintf(f, "set logscale x\nset logscale y\n\n");
	fprintf(f, "set xrange [1 < * < 10**9 : 1 < * < 10**9]\n\n");
	bool first = true;
	for (int a = 0; a < traced->narchs; a++) {
		char name[64];
		snprintf(name, sizeof(name), "%s", traced->archs[a]);
		dashes(name);
		separator(f, &first);
		fprintf(f, "\"%s\" index %d using 2:3 with points title \"Profiling %s\"", traced->data, a, name);
	}
	if (unit == TIME || unit == ENERGY)
		for (int i = 0; i < n; i++)
			curves(f, &series[i], unit, &first);
	for (int i = 0; i < nmeasured && nvalues; i++) {
		char name[256];
		starpu_perfmodel_get_arch_name(measured[i].arch, name, sizeof(name), measured[i].impl);
		dashes(name);
		separator(f, &first);
		fprintf(f, "\"%s\" using 1:%d:%d with errorlines title \"Average %s\"", data, 2 + 2 * i, 3 + 2 * i, name);
	}
	if (first) {
		fclose(f);
		unlink(path);
		fprintf(stderr, "%s: model %s has neither a valid regression nor measured sizes to plot: calibrate it further\n", argv0, symbol);
		return -1;
	}
	fprintf(f, "\n\nset term png\n");
	fprintf(f, "set output \"%s.png\"\n", base);
	fprintf(f, "replot\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "%s: cannot write %s (%s)\n", argv0, path, strerror(errno));
		return -1;
	}
	chmod(path, 0755);
	return 0;
}

int main(int argc, char **argv)
{
	argv0 = "starpu_perfmodel_plot";
	struct options o = { 0 };
	int done = parse_options(argc, argv, &o);
	if (done >= 0)
		return done;
	const char *symbol = o.symbol, *energy_symbol = o.energy_symbol, *dir = o.dir;
	struct starpu_perfmodel model = { .type = STARPU_PERFMODEL_INVALID }, emodel = { .type = STARPU_PERFMODEL_INVALID };
	if (starpu_perfmodel_load_symbol(symbol, &model) != 0)
		return EXIT_FAILURE;
	if (energy_symbol && starpu_perfmodel_load_symbol(energy_symbol, &emodel) != 0) {
		starpu_perfmodel_unload_model(&model);
		return EXIT_FAILURE;
	}
	int status = EXIT_FAILURE;
	if (o.list_combs) {
		status = starpu_perfmodel_list_combs(stdout, &model) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
		goto out;
	}
	enum unit unit = energy_symbol ? POWER : o.gflops ? (o.energy ? GFLOPS_PER_WATT : GFLOPS) : o.energy ? ENERGY : TIME;

	struct series series[MAX_SERIES];
	int n = collect_series(&model, &emodel, &o, series);
	if (n == 0) {
		fprintf(stderr, "%s: model %s has no data%s: calibrate it first (STARPU_CALIBRATE=1)\n", argv0, symbol,
			o.nselected ? " for the chosen combinations (see -lc)" : "");
		goto out;
	}

	/* The measured sizes: the series with history entries, in the data file's column order. */
	struct series measured[MAX_SERIES];
	int nmeasured = 0;
	for (int i = 0; i < n; i++)
		if (series[i].pa->list)
			measured[nmeasured++] = series[i];

	char base[2048], prefix[1024], path[4096], data[4096];
	snprintf(prefix, sizeof(prefix), "%s%s", dir ? dir : "", dir ? "/" : "");
	if (dir && mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: cannot create %s (%s)\n", argv0, dir, strerror(errno));
		goto out;
	}
	snprintf(base, sizeof(base), "%sstarpu_%s%s", prefix, energy_symbol ? "power_" : o.gflops ? "gflops_" : "", symbol);
	snprintf(data, sizeof(data), "%sstarpu_%s_avg.data", prefix, symbol);
	int nvalues = nmeasured ? write_data(data, measured, nmeasured, unit) : 0;
	if (nvalues < 0)
		goto out;
	if (nvalues == 0 && (unit == GFLOPS || unit == GFLOPS_PER_WATT || unit == POWER)) {
		fprintf(stderr, "%s: model %s has no %s to plot: %s\n", argv0, symbol, unit == POWER ? "size measured by both models" : "flops",
			unit == POWER ? "calibrate the time and the energy model on the same tasks" : "give the tasks' flops (task->flops, STARPU_FLOPS)");
		goto out;
	}
	char archs[MAX_SERIES][64], points_data[4096];
	struct traced traced = { .data = points_data, .archs = archs };
	if (o.ninputs) {
		struct points points = { 0 };
		snprintf(points_data, sizeof(points_data), "%sstarpu_%s.data", prefix, symbol);
		bool read = read_traces(&o, &model, &points) == 0;
		if (read && points.n == 0)
			fprintf(stderr, "%s: the traces hold no execution of a task of model %s: give the traces of a run that used it\n",
				argv0, symbol);
		traced.narchs = read && points.n ? write_points(points_data, &points, archs) : -1;
		free(points.v);
		if (traced.narchs < 0)
			goto out;
	}
	snprintf(path, sizeof(path), "%s.gp", base);
	if (write_script(path, base, data, symbol, unit, series, n, measured, nmeasured, nvalues, &traced) == 0)
		status = EXIT_SUCCESS;
out:
	starpu_perfmodel_unload_model(&model);
	if (energy_symbol)
		starpu_perfmodel_unload_model(&emodel);
	return status;
}
