/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stress: the large stress run of issue 13 (tests/stress.h; its small
 * version is tests/test_stress in make check). For each policy, SUBMITTERS
 * threads submit N tasks in all with every kind of monitoring on
 * (STARPU_PROFILING=1, a listener on every counter of every scope, a tool
 * counting every event), then every count is checked exactly. Prints the
 * time per task (first submission to the end of the final wait) and the
 * check result; exits 1 when a check failed. Astrolabe only (it reads
 * counters with astro_counter_read()).
 *
 *   stress [-n TASKS] [-p SUBMITTERS] [-w WORKERS] [-s POLICY[,POLICY...]] [-t TOOL.so]
 *   defaults: -n 1M -p 4 -w 2 -s eager,prio,random,ws,lws -t .libs/libbench_counttool.so next to the program
 */
#define _GNU_SOURCE
#include "stress.h"
#include <libgen.h>
#include <limits.h>
#include <unistd.h>

static long parse_count(const char *text)
{
	char *end;
	double v = strtod(text, &end);
	if (*end == 'k' || *end == 'K')
		v *= 1e3, end++;
	else if (*end == 'M' || *end == 'm')
		v *= 1e6, end++;
	if (*end || v < 1) {
		fprintf(stderr, "stress: bad count '%s'\n", text);
		exit(2);
	}
	return (long)v;
}

int main(int argc, char **argv)
{
	long ntasks = 1000000;
	int nsubmitters = 4, nworkers = 2, opt;
	char policies[256] = "eager,prio,random,ws,lws";
	char tool[PATH_MAX] = "";

	while ((opt = getopt(argc, argv, "n:p:w:s:t:h")) != -1) {
		switch (opt) {
		case 'n': ntasks = parse_count(optarg); break;
		case 'p': nsubmitters = atoi(optarg); break;
		case 'w': nworkers = atoi(optarg); break;
		case 's': snprintf(policies, sizeof(policies), "%s", optarg); break;
		case 't': snprintf(tool, sizeof(tool), "%s", optarg); break;
		default:
			fprintf(stderr, "usage: %s [-n TASKS] [-p SUBMITTERS] [-w WORKERS] [-s POLICY,...] [-t TOOL.so]\n", argv[0]);
			return 2;
		}
	}
	if (nsubmitters < 1 || nsubmitters > 64 || nworkers < 1) {
		fprintf(stderr, "stress: -p takes 1..64 submitters, -w at least 1 worker\n");
		return 2;
	}
	if (!*tool) {
		char self[PATH_MAX];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (len <= 0) {
			fprintf(stderr, "stress: cannot find the program's folder: give the tool with -t\n");
			return 2;
		}
		self[len] = '\0';
		/* A libtool wrapper runs .libs/lt-stress or .libs/stress: the tool sits in that .libs. */
		char *dir = dirname(self);
		snprintf(tool, sizeof(tool), "%s/%slibbench_counttool.so", dir,
			 strcmp(basename(dir), ".libs") == 0 ? "" : ".libs/");
	}
	if (access(tool, R_OK) != 0) {
		fprintf(stderr, "stress: the counting tool %s is missing: build it with 'make bench' or give it with -t\n", tool);
		return 2;
	}

	printf("# stress: %ld tasks, %d submitters, %d workers, profiling + counters + listeners on every counter + a tool on every event\n",
	       ntasks / nsubmitters * nsubmitters, nsubmitters, nworkers);
	int failed = 0;
	for (char *save = NULL, *policy = strtok_r(policies, ",", &save); policy; policy = strtok_r(NULL, ",", &save)) {
		struct stress_config config = { policy, nworkers, nsubmitters, ntasks, tool };
		struct stress_result result;
		int nerrors = stress_run(&config, &result);
		long n = ntasks / nsubmitters * nsubmitters;
		printf("stress.%-8s us/task %8.3f  tasks %ld  seconds %.2f  listener calls %ld/%ld/%ld  check %s\n", policy,
		       result.seconds * 1e6 / n, n, result.seconds, result.listener_calls[0], result.listener_calls[1],
		       result.listener_calls[2], nerrors ? "FAILED" : "OK");
		if (nerrors) {
			printf("%s", result.errors);
			failed = 1;
		}
		fflush(stdout);
	}
	return failed;
}
