/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_tasks_rec_complete: adds to the task records of a tasks.rec (written
 * by starpu_fxt_tool) what the performance models of this machine predict:
 * at the end of each record with a Model: and a Footprint: and no
 * EstimatedTime:, a line "EstimatedTime: <t0> <t1> ..." with the history-based
 * mean (µs, %e) for the record's footprint on each worker of the current
 * configuration, "inf" when the model has no trusted entry for it.
 *
 * It starts the runtime (tracing off) to know the workers and find the model
 * files, so run it with the STARPU_HOME / STARPU_PERF_MODEL_DIR /
 * STARPU_HOSTNAME and worker settings of the traced run. Unlike StarPU's, a
 * symbol without model file is reported once and its records are copied
 * unchanged, instead of stopping the tool.
 */
#include <starpu.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "starpu_tasks_rec_complete"

struct model_slot {
	char *symbol;
	struct starpu_perfmodel model;
	int loaded;
};

/* Each slot is allocated alone: the runtime keeps the address of a loaded model. */
static struct model_slot **models;
static size_t nmodels;

static void usage(FILE *out)
{
	fprintf(out, "Usage: %s [ input-file [ output-file ] ]\n\n"
		"Completes the task records of a tasks.rec with the performance-model\n"
		"predictions (EstimatedTime: one value per worker, in µs) of this machine.\n"
		"Input and output default to stdin and stdout ('-' names them too).\n"
		"Run it with the STARPU_HOME / STARPU_PERF_MODEL_DIR / STARPU_HOSTNAME and\n"
		"worker settings of the traced execution.\n\n"
		"  -h, --help          display this help and exit\n"
		"  -v, --version       output version information and exit\n", PROG);
}

/* The model of symbol, loaded on first use; NULL (said once) when it has no file. */
static struct starpu_perfmodel *model_of(const char *symbol)
{
	for (size_t i = 0; i < nmodels; i++)
		if (strcmp(models[i]->symbol, symbol) == 0)
			return models[i]->loaded ? &models[i]->model : NULL;
	struct model_slot **grown = realloc(models, (nmodels + 1) * sizeof(*models));
	if (!grown)
		return NULL;
	models = grown;
	struct model_slot *s = calloc(1, sizeof(*s));
	if (!s || !(s->symbol = strdup(symbol))) {
		free(s);
		return NULL;
	}
	models[nmodels++] = s;
	char path[4096];
	starpu_perfmodel_get_model_path(symbol, path, sizeof(path));
	s->loaded = path[0] && starpu_perfmodel_load_symbol(symbol, &s->model) == 0;
	if (!s->loaded)
		fprintf(stderr, "%s: no performance model file for '%s' (looked for in STARPU_PERF_MODEL_DIR and $STARPU_HOME/.starpu/sampling): its records are "
			"left without EstimatedTime; run with the STARPU_HOME/STARPU_HOSTNAME of the traced execution\n",
			PROG, symbol);
	return s->loaded ? &s->model : NULL;
}

/* The value of field in the record's lines, or NULL. */
static const char *field(char **lines, size_t n, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < n; i++)
		if (strncmp(lines[i], name, len) == 0 && lines[i][len] == ':') {
			const char *v = lines[i] + len + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			return v;
		}
	return NULL;
}

/* Writes one record, completed when it has what is needed. Returns 0, or -1 for a bad Footprint. */
static int flush_record(FILE *out, char **lines, size_t n, const char *in_name, long line_no)
{
	for (size_t i = 0; i < n; i++)
		fputs(lines[i], out);
	const char *symbol = field(lines, n, "Model");
	const char *fp = field(lines, n, "Footprint");
	if (!symbol || !fp || field(lines, n, "EstimatedTime"))
		return 0;
	char *end;
	errno = 0;
	unsigned long footprint = strtoul(fp, &end, 16);
	if (errno || end == fp || (*end && *end != '\n' && *end != ' ') || footprint > UINT32_MAX) {
		fprintf(stderr, "%s: %s: the record ending at line %ld has a bad Footprint '%.*s'\n", PROG, in_name,
			line_no, (int)strcspn(fp, "\n"), fp);
		return -1;
	}
	char sym[256];
	snprintf(sym, sizeof(sym), "%.*s", (int)strcspn(symbol, "\n"), symbol);
	struct starpu_perfmodel *model = model_of(sym);
	if (!model)
		return 0;
	fputs("EstimatedTime:", out);
	for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
		struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype((int)w, 0);
		double t = arch ? starpu_perfmodel_history_based_expected_perf(model, arch, (uint32_t)footprint) : NAN;
		if (isfinite(t))
			fprintf(out, " %e", t);
		else
			fputs(" inf", out);
	}
	fputc('\n', out);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
		printf("%s (astrolabe) StarPU API %d.%d.%d\n", PROG, STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION,
		       STARPU_RELEASE_VERSION);
		return 0;
	}
	if (argc > 3 || (argc > 1 && argv[1][0] == '-' && argv[1][1])) {
		usage(stderr);
		return 2;
	}
	const char *in_name = argc > 1 ? argv[1] : "-";
	const char *out_name = argc > 2 ? argv[2] : "-";
	FILE *in = strcmp(in_name, "-") ? fopen(in_name, "r") : stdin;
	if (!in) {
		fprintf(stderr, "%s: cannot read '%s': %s\n", PROG, in_name, strerror(errno));
		return 1;
	}
	/* Only the models and the workers are needed: no trace of this run. */
	setenv("STARPU_FXT_TRACE", "0", 1);
	int ret = starpu_init(NULL);
	if (ret != 0) {
		fprintf(stderr, "%s: the runtime did not start (%s): see the messages above\n", PROG, strerror(-ret));
		return 1;
	}
	FILE *out = strcmp(out_name, "-") ? fopen(out_name, "w") : stdout;
	if (!out) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, out_name, strerror(errno));
		starpu_shutdown();
		return 1;
	}

	char **lines = NULL;
	size_t n = 0, cap = 0;
	char *buf = NULL;
	size_t bufsize = 0;
	long line_no = 0, fields = 0;
	int status = 0;
	for (;;) {
		ssize_t len = getline(&buf, &bufsize, in);
		if (len >= 0)
			line_no++;
		int blank = len < 0 || strspn(buf, " \t\r\n") == (size_t)len;
		if (len >= 0 && !blank) {
			if (buf[0] != '#' && buf[0] != '+' && !strchr(buf, ':')) {
				fprintf(stderr, "%s: %s:%ld: not a recutils 'Field: value' line: is this a tasks.rec?\n", PROG,
					in_name, line_no);
				status = 1;
				break;
			}
			if (n == cap) {
				cap = cap ? 2 * cap : 32;
				char **grown = realloc(lines, cap * sizeof(*lines));
				if (!grown) {
					status = 1;
					break;
				}
				lines = grown;
			}
			/* A last line without newline still ends with one in the output. */
			if (buf[len - 1] != '\n') {
				lines[n] = malloc((size_t)len + 2);
				if (lines[n])
					snprintf(lines[n], (size_t)len + 2, "%s\n", buf);
			} else {
				lines[n] = strdup(buf);
			}
			if (!lines[n]) {
				status = 1;
				break;
			}
			n++;
			fields++;
			continue;
		}
		if (n && flush_record(out, lines, n, in_name, line_no) != 0)
			status = 1;
		for (size_t i = 0; i < n; i++)
			free(lines[i]);
		n = 0;
		if (len < 0 || status)
			break;
		fputs(buf, out);
	}
	if (!status && ferror(in)) {
		fprintf(stderr, "%s: error while reading '%s': %s\n", PROG, in_name, strerror(errno));
		status = 1;
	}
	if (!status && fields == 0) {
		fprintf(stderr, "%s: '%s' is empty: give the tasks.rec written by starpu_fxt_tool\n", PROG, in_name);
		status = 1;
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	free(buf);
	for (size_t i = 0; i < nmodels; i++) {
		if (models[i]->loaded)
			starpu_perfmodel_unload_model(&models[i]->model);
		free(models[i]->symbol);
		free(models[i]);
	}
	free(models);
	starpu_shutdown();
	if (in != stdin)
		fclose(in);
	if (out != stdout && fclose(out) != 0 && !status) {
		fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, out_name, strerror(errno));
		status = 1;
	}
	return status;
}
