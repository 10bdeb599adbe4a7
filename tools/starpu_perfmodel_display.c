/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_perfmodel_display: shows the performance models saved under
 * $STARPU_HOME/.starpu/sampling/codelets/45/ with StarPU 1.4's options and
 * output (starpu_perfmodel_list, _directory, _print_all, _dump_xml). Needs no
 * runtime: it reads the files only.
 */
#include <starpu.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <unistd.h>

static const char prog[] = "starpu_perfmodel_display";

static void usage(FILE *out, const char *argv0)
{
	fprintf(out, "Usage: %s [OPTION]\n"
		"Display a performance model saved by calibration (STARPU_CALIBRATE=1).\n\n"
		"  -l                 list the model files of every sampling directory\n"
		"  -d                 display the directories searched for model files\n"
		"  -s <symbol>        display the model of symbol (a file name with a dot is used as is)\n"
		"  -x                 with -s: print the model as XML\n"
		"  -p <parameter>     with -s: only this value: a, b, c (non-linear regression), alpha, beta\n"
		"                     (regression), mean, stddev (history), path-file-debug\n"
		"  -a <arch>          with -s: only this architecture: cpu, cpu:K (K combined cores), cuda, cudaN, cuda_N,\n"
		"                     opencl, openclN, hip, ...\n"
		"  -f <footprint>     with -s: only the entries of this footprint (hexadecimal)\n"
		"  -h, --help         display this help and exit\n"
		"  -v, --version      output version information and exit\n\n"
		"Files are looked for in STARPU_PERF_MODEL_DIR, $STARPU_HOME/.starpu/sampling and STARPU_PERF_MODEL_PATH,\n"
		"under the host name of STARPU_HOSTNAME.\n", argv0);
}

/* What fn prints, as a string to free; NULL when fn or the memory failed. */
static char *printed_by(int (*fn)(FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	int ret = fn(f);
	if (fclose(f) != 0 || ret != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static int print_directories(FILE *f)
{
	starpu_perfmodel_directory(f);
	return 0;
}

/* -l: the model files of each sampling folder; none at all is said, with the folders searched. */
static int list_models(void)
{
	char *list = printed_by(starpu_perfmodel_list);
	if (!list) {
		fprintf(stderr, "%s: out of memory listing the models\n", prog);
		return EXIT_FAILURE;
	}
	if (strstr(list, "file: <")) {
		fputs(list, stdout);
		free(list);
		return EXIT_SUCCESS;
	}
	free(list);
	char *dirs = printed_by(print_directories);
	fprintf(stderr, "%s: no performance model found in ", prog);
	const char *sep = "";
	for (char *line = dirs ? strstr(dirs, "directory: <") : NULL; line; line = strstr(line, "directory: <")) {
		line += strlen("directory: <");
		size_t len = strcspn(line, ">\n");
		fprintf(stderr, "%s%.*s", sep, (int)len, line);
		sep = ", ";
	}
	if (!*sep)
		fprintf(stderr, "any folder (none is set: see -d)");
	fprintf(stderr, " (a run with STARPU_CALIBRATE=1 records them there)\n");
	free(dirs);
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	const char *symbol = NULL;
	char *arch = NULL, *parameter = NULL;
	uint32_t footprint = 0;
	int list = 0, dirs = 0, xml = 0, has_footprint = 0, opt;
	opterr = 0;
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'v' }, { NULL, 0, NULL, 0 },
	};
	while ((opt = getopt_long(argc, argv, "dls:p:a:f:hxv", options, NULL)) != -1) {
		switch (opt) {
		case 'd': dirs = 1; break;
		case 'l': list = 1; break;
		case 's': symbol = optarg; break;
		case 'p': parameter = optarg; break;
		case 'a': arch = optarg; break;
		case 'x': xml = 1; break;
		case 'f': {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 16);
			if (errno || end == optarg || *end || v > UINT32_MAX) {
				fprintf(stderr, "%s: -f %s is not a footprint: give 8 hexadecimal digits, e.g. -f d0c0d6c6\n", prog, optarg);
				return EXIT_FAILURE;
			}
			footprint = (uint32_t)v;
			has_footprint = 1;
			break;
		}
		case 'h':
			usage(stdout, prog);
			return EXIT_SUCCESS;
		case 'v':
			printf("%s (Astrolabe, StarPU %d.%d.%d API)\n", prog, STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
			return EXIT_SUCCESS;
		default:
			if (optopt && strchr("spaf", optopt))
				fprintf(stderr, "%s: option -%c needs a value (see -h)\n", prog, optopt);
			else
				fprintf(stderr, "%s: unknown option -%c (see -h)\n", prog, optopt ? optopt : '?');
			return EXIT_FAILURE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see -h)\n", prog, argv[optind]);
		return EXIT_FAILURE;
	}
	if (list)
		return list_models();
	if (dirs) {
		starpu_perfmodel_directory(stdout);
		return EXIT_SUCCESS;
	}
	if (!symbol) {
		fprintf(stderr, "%s: give -s <symbol>, -l or -d (see -h)\n", prog);
		return EXIT_FAILURE;
	}
	struct starpu_perfmodel model = { .type = STARPU_PERFMODEL_INVALID };
	/* load_symbol says which symbol has no file, and where it looked. */
	if (starpu_perfmodel_load_symbol(symbol, &model) != 0)
		return EXIT_FAILURE;
	int ret = 0;
	if (xml)
		starpu_perfmodel_dump_xml(stdout, &model);
	else
		ret = starpu_perfmodel_print_all(&model, arch, parameter, has_footprint ? &footprint : NULL, stdout);
	starpu_perfmodel_unload_model(&model);
	return ret == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
