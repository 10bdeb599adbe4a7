/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The command line of the small tools that take no argument: -h, -v and one
 * flag of their own, the errors said alike.
 */
#ifndef ASTRO_TOOL_OPTIONS_H
#define ASTRO_TOOL_OPTIONS_H

#include <starpu.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

/* Parses argv: -h (usage on stdout), -v, and -<letter>/--<name> setting *flag. Returns -1 to go on, else the
 * status to exit with (0 after -h or -v, 1 for a wrong option or an argument). */
static inline int tool_options(int argc, char **argv, const char *prog, void (*usage)(FILE *), char letter, const char *name, int *flag)
{
	const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ name, no_argument, NULL, letter },
		{ NULL, 0, NULL, 0 },
	};
	const char shorts[] = { 'h', 'v', letter, '\0' };
	int opt;
	*flag = 0;
	while ((opt = getopt_long(argc, argv, shorts, options, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return EXIT_SUCCESS;
		}
		if (opt == 'v') {
			printf("%s (Astrolabe, StarPU %d.%d.%d API)\n", prog, STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
			return EXIT_SUCCESS;
		}
		if (opt != letter) {
			fprintf(stderr, "%s: unknown option: see %s --help\n", prog, prog);
			return EXIT_FAILURE;
		}
		*flag = 1;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s': it takes none (see %s --help)\n", prog, argv[optind], prog);
		return EXIT_FAILURE;
	}
	return -1;
}

#endif
