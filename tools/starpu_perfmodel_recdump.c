/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_perfmodel_recdump [tasks.rec] [-o output]: the performance models as
 * GNU recutils records, as StarPU 1.4's tool prints them for starpu_replay.
 *
 * Without input: one "%rec: timing" record per history entry of every model
 * file found (implementation 0, single-device combinations). With a tasks.rec
 * (e.g. from starpu_fxt_tool): the workers of each architecture
 * ("%rec: worker_count"), the memory nodes ("%rec: memory_workers"), then the
 * timing records of the (Model, Footprint) pairs the tasks use only.
 */
#include <starpu.h>
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *argv0;

struct wanted
{
	char *model;
	uint32_t footprint;
};

static struct wanted *wanted;
static size_t nwanted, capwanted;

static bool is_wanted(const char *model, uint32_t footprint)
{
	for (size_t i = 0; i < nwanted; i++)
		if (wanted[i].footprint == footprint && !strcmp(wanted[i].model, model))
			return true;
	return false;
}

static int want(const char *model, uint32_t footprint)
{
	if (is_wanted(model, footprint))
		return 0;
	if (nwanted == capwanted) {
		size_t cap = capwanted ? 2 * capwanted : 16;
		struct wanted *bigger = realloc(wanted, cap * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		wanted = bigger;
		capwanted = cap;
	}
	wanted[nwanted].model = strdup(model);
	wanted[nwanted].footprint = footprint;
	return wanted[nwanted++].model ? 0 : -ENOMEM;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

/* Collects the (Model, Footprint) pairs of the task records of path. */
static int read_tasks(const char *path)
{
	FILE *in = fopen(path, "r");
	if (!in) {
		fprintf(stderr, "%s: cannot read %s (%s)\n", argv0, path, strerror(errno));
		return -1;
	}
	char line[4096], model[1024] = "";
	unsigned long footprint = 0;
	bool has_footprint = false;
	int ret = 0;
	for (bool more = true; more && ret == 0;) {
		more = fgets(line, sizeof(line), in) != NULL;
		char *t = more ? trim(line) : "";
		if (!*t) {	/* end of a record */
			if (model[0] && has_footprint)
				ret = want(model, (uint32_t)footprint);
			model[0] = '\0';
			has_footprint = false;
		} else if (!strncmp(t, "Model:", 6)) {
			snprintf(model, sizeof(model), "%s", trim(t + 6));
		} else if (!strncmp(t, "Footprint:", 10)) {
			char *end;
			footprint = strtoul(trim(t + 10), &end, 16);
			has_footprint = *end == '\0';
		}
	}
	fclose(in);
	return ret;
}

static void print_timing(FILE *out, struct starpu_perfmodel *model, const char *symbol, bool filtered)
{
	int ncombs = starpu_perfmodel_get_narch_combs();
	for (int c = 0; c < ncombs; c++) {
		struct starpu_perfmodel_arch *arch = starpu_perfmodel_arch_comb_fetch(c);
		if (!arch || arch->ndevices != 1)
			continue;
		struct starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(model, arch, 0);
		for (struct starpu_perfmodel_history_list *l = pa ? pa->list : NULL; l; l = l->next) {
			const struct starpu_perfmodel_history_entry *e = l->entry;
			if (filtered && !is_wanted(symbol, e->footprint))
				continue;
			fprintf(out, "Model: %s\n", symbol);
			fprintf(out, "Architecture: %s%d\n", starpu_perfmodel_get_archtype_name(arch->devices[0].type), arch->devices[0].devid);
			fprintf(out, "Footprint: %08x\n", e->footprint);
			fprintf(out, "Size: %lu\n", (unsigned long)e->size);
			if (!isnan(e->flops))
				fprintf(out, "Flops: %f\n", e->flops);
			fprintf(out, "Mean: %f\n", e->mean);
			fprintf(out, "Stddev: %f\n", e->deviation);
			fprintf(out, "Samples: %u\n\n", e->nsample);
		}
	}
}

/* The symbols of the model files (starpu_perfmodel_list's "file: <name>" lines, the last ".suffix" dropped), each once. */
static char **model_symbols(size_t *n)
{
	char *text = NULL, **symbols = NULL;
	size_t len = 0;
	*n = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem)
		return NULL;
	starpu_perfmodel_list(mem);
	fclose(mem);
	size_t cap = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "file: <", 7))
			continue;
		char *name = line + 7;
		name[strcspn(name, ">")] = '\0';
		char *dot = strrchr(name, '.');
		if (dot)
			*dot = '\0';
		bool seen = false;
		for (size_t i = 0; i < *n && !seen; i++)
			seen = !strcmp(symbols[i], name);
		if (seen || !name[0])
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			char **bigger = realloc(symbols, cap * sizeof(*bigger));
			if (!bigger)
				break;
			symbols = bigger;
		}
		symbols[(*n)++] = strdup(name);
	}
	free(text);
	return symbols;
}

static void print_machine(FILE *out)
{
	unsigned nworkers = starpu_worker_get_count();
	fprintf(out, "%%rec: worker_count\n\n");
	int ncombs = starpu_perfmodel_get_narch_combs();
	for (int c = 0; c < ncombs; c++) {
		unsigned count = 0;
		for (unsigned w = 0; w < nworkers; w++)
			count += starpu_worker_get_perf_archtype((int)w, 0) == starpu_perfmodel_arch_comb_fetch(c);
		struct starpu_perfmodel_arch *arch = starpu_perfmodel_arch_comb_fetch(c);
		if (!count || arch->ndevices != 1)
			continue;
		fprintf(out, "Architecture: %s%d\nNbWorkers: %u\n\n", starpu_perfmodel_get_archtype_name(arch->devices[0].type),
			arch->devices[0].devid, count);
	}
	fprintf(out, "%%rec: memory_workers\n\n");
	for (unsigned node = 0; node < starpu_memory_nodes_get_count(); node++) {
		char name[64];
		starpu_memory_node_get_name(node, name, sizeof(name));
		fprintf(out, "MemoryNode: %u\nName: %s\nSize: %ld\nWorkers:", node, name, (long)starpu_memory_get_total(node));
		for (unsigned w = 0; w < nworkers; w++)
			if (starpu_worker_get_memory_node(w) == node)
				fprintf(out, " %u", w);
		fprintf(out, "\n\n");
	}
}

int main(int argc, char **argv)
{
	argv0 = "starpu_perfmodel_recdump";
	const char *input = NULL, *output = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o")) {
			if (i + 1 == argc) {
				fprintf(stderr, "%s: option -o needs a file name (see -h)\n", argv0);
				return EXIT_FAILURE;
			}
			output = argv[++i];
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("Usage: %s [tasks.rec] [-o output]\n"
			       "Print the performance models as recutils records (%%rec: timing): every model file, or only\n"
			       "the models and footprints the tasks of tasks.rec use (with the workers and memory nodes).\n\n"
			       "  -o output    write to output instead of stdout\n"
			       "  -h, --help     display this help and exit\n"
			       "  -v, --version  output version information and exit\n", argv0);
			return EXIT_SUCCESS;
		} else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--version")) {
			printf("%s (Astrolabe, StarPU %d.%d.%d API)\n", argv0, STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
			return EXIT_SUCCESS;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s: unknown option %s (see -h)\n", argv0, argv[i]);
			return EXIT_FAILURE;
		} else if (input) {
			fprintf(stderr, "%s: one input file only ('%s' and '%s' given)\n", argv0, input, argv[i]);
			return EXIT_FAILURE;
		} else {
			input = argv[i];
		}
	}
	if (input && read_tasks(input) != 0)
		return EXIT_FAILURE;
	FILE *out = stdout;
	if (output && !(out = fopen(output, "w"))) {
		fprintf(stderr, "%s: cannot write %s (%s)\n", argv0, output, strerror(errno));
		return EXIT_FAILURE;
	}
	int status = EXIT_SUCCESS;
	if (input) {
		/* The machine's description needs the workers. */
		int ret = starpu_init(NULL);
		if (ret != 0) {
			fprintf(stderr, "%s: starpu_init failed (%s): check STARPU_PLUGIN_PATH and the worker settings\n", argv0,
				strerror(-ret));
			status = EXIT_FAILURE;
			goto out;
		}
		print_machine(out);
	}
	fprintf(out, "%%rec: timing\n\n");
	size_t n;
	char **symbols = input ? NULL : model_symbols(&n);
	if (input) {
		n = 0;
		for (size_t i = 0; i < nwanted; i++) {
			bool seen = false;
			for (size_t k = 0; k < i && !seen; k++)
				seen = !strcmp(wanted[k].model, wanted[i].model);
			if (seen)
				continue;
			struct starpu_perfmodel model = { .type = STARPU_PERFMODEL_INVALID };
			if (starpu_perfmodel_load_symbol(wanted[i].model, &model) == 0) {
				print_timing(out, &model, wanted[i].model, true);
				starpu_perfmodel_unload_model(&model);
			}
		}
	}
	for (size_t i = 0; symbols && i < n; i++) {
		struct starpu_perfmodel model = { .type = STARPU_PERFMODEL_INVALID };
		if (starpu_perfmodel_load_symbol(symbols[i], &model) == 0) {
			print_timing(out, &model, symbols[i], false);
			starpu_perfmodel_unload_model(&model);
		}
		free(symbols[i]);
	}
	free(symbols);
	if (input)
		starpu_shutdown();
out:
	if (out != stdout && fclose(out) != 0) {
		fprintf(stderr, "%s: cannot write %s (%s)\n", argv0, output, strerror(errno));
		status = EXIT_FAILURE;
	}
	for (size_t i = 0; i < nwanted; i++)
		free(wanted[i].model);
	free(wanted);
	return status;
}
