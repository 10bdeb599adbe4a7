/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * atime [-t intervals] program [args]: runs program and prints, when it
 * ends, the statistics of the events sampled while it ran (APAPI's tool).
 *
 * atime samples the PAPI components of APAPI_CMPLIST itself (they measure
 * the machine: energy, power, devices). The runtime's own counters
 * ("astrolabe" component) can only be read inside the program: atime turns
 * the sampler plugin on in the program's environment (ASTROLABE_SAMPLER=1,
 * ASTROLABE_SAMPLER_INTERVALS from -t), so an Astrolabe program prints its
 * own table at its starpu_shutdown(); any other program is measured by
 * atime alone. Nothing is preloaded or linked into the program.
 */
#include "sources.h"

#include <astrolabe/plugin.h>
#include <starpu_config.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out, "Usage: atime [-t intervals] program [args]\n"
		     "Runs program and prints the statistics of the events sampled while it ran.\n"
		     "  -t intervals  sampling interval in nanoseconds: one for every component (e.g.\n"
		     "                100000000), or per component, e.g. \"rapl:100000000:astrolabe:10000000\"\n"
		     "                (default %u ns)\n"
		     "  -h, --help    display this help and exit\n"
		     "  -v, --version output version information and exit\n"
		     "Environment: APAPI_CMPLIST, APAPI_EVENTLIST, APAPI_EVENTOPS, APAPI_VERBOSE, APAPI_SOFTFAIL,\n"
		     "  " APAPI_PRIORITY_ENV " (fifo[:1..99], rr[:1..99] or nice:-20..19: the timer thread's\n"
		     "  scheduling, so that it keeps its cadence on a loaded machine).\n",
		APAPI_DEFAULT_INTERVAL_NS);
}

int main(int argc, char **argv)
{
	const char *intervals = NULL;
	int first = 1;
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
		printf("atime (Astrolabe, StarPU %d.%d.%d API)\n", STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "-t") == 0) {
		if (argc < 3) {
			fprintf(stderr, "atime: -t needs the intervals, e.g. -t astrolabe:10000000\n");
			return 2;
		}
		intervals = argv[2];
		first = 3;
		if (apapi_intervals_check(intervals))
			return 2;
	}
	if (first >= argc) {
		usage(stderr);
		return 2;
	}

	struct apapi_priority priority;
	if (apapi_priority_parse(getenv(APAPI_PRIORITY_ENV), &priority))
		return 2;
	struct apapi_config cfg;
	if (apapi_config_load(&cfg, SAMPLER_DATADIR) < 0)
		return 2;
	struct apapi_sampler sampler;
	apapi_sampler_init(&sampler);
	sampler.priority = priority;
	unsigned nevents = apapi_sources_add(&sampler, &cfg, intervals, NULL);
	/* The program samples only the runtime's counters: atime samples the rest. */
	for (unsigned i = 0; i < cfg.ncomponents; i++)
		if (strcmp(cfg.components[i], APAPI_OWN_COMPONENT) == 0) {
			setenv("ASTROLABE_SAMPLER", "1", 0);
			setenv("APAPI_CMPLIST", APAPI_OWN_COMPONENT, 1);
			if (intervals)
				setenv("ASTROLABE_SAMPLER_INTERVALS", intervals, 1);
		}
	fflush(NULL);
	if (apapi_sampler_start(&sampler))
		return 2;

	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "atime: cannot start %s: %s\n", argv[first], strerror(errno));
		return 2;
	}
	if (pid == 0) {
		execvp(argv[first], argv + first);
		fprintf(stderr, "atime: cannot run %s: %s\n", argv[first], strerror(errno));
		_exit(127);
	}
	/* Like time(1): the program gets the terminal's signals, atime waits for it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	apapi_sampler_stop(&sampler);

	fprintf(stderr, "atime: %s ran %.3f s", argv[first], (double)(sampler.stop_ns - sampler.start_ns) / 1e9);
	if (WIFEXITED(status))
		fprintf(stderr, ", exit status %d\n", WEXITSTATUS(status));
	else
		fprintf(stderr, ", killed by signal %d\n", WTERMSIG(status));
	/* Nothing of the machine to sample (said at the start): no empty table. */
	if (nevents)
		apapi_sampler_print_table(&sampler, stderr);
	apapi_sampler_clear(&sampler);
	apapi_papi_clear();
	apapi_config_clear(&cfg);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
