/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * startup: what starpu_init() + starpu_shutdown() cost in a fresh process,
 * with the default device probing against STARPU_NOPENCL=0 STARPU_NCUDA=0
 * (CPU workers only). Each round runs both settings, alternating, each in a
 * forked child that had not loaded the runtime's plugins yet. Prints
 * startup.default and startup.cpu_only (ms) and startup.ratio, the ratio of
 * their medians (goal of issue 41: at most 1.3).
 */
#include "bench.h"

static void one_start(void *arg, int fd)
{
	if (arg) {
		setenv("STARPU_NOPENCL", "0", 1);
		setenv("STARPU_NCUDA", "0", 1);
	}
	double t0 = bench_now_us();
	if (starpu_init(NULL) != 0)
		bench_die("starpu_init failed");
	starpu_shutdown();
	double ms = (bench_now_us() - t0) / 1000.0;
	bench_write_all(fd, &ms, sizeof(ms));
}

int main(int argc, char **argv)
{
	/* bench_parse sets the device counts to 0 unless given: the default setting must probe. */
	char *ncuda = getenv("STARPU_NCUDA"), *nopencl = getenv("STARPU_NOPENCL");
	ncuda = ncuda ? strdup(ncuda) : NULL;
	nopencl = nopencl ? strdup(nopencl) : NULL;
	struct bench_options o;
	bench_parse(argc, argv, &o, 1, 9, 0, NULL);
	if (ncuda) setenv("STARPU_NCUDA", ncuda, 1); else unsetenv("STARPU_NCUDA");
	if (nopencl) setenv("STARPU_NOPENCL", nopencl, 1); else unsetenv("STARPU_NOPENCL");
	printf("# startup: starpu_init() + starpu_shutdown() in a fresh process, %d rounds (STARPU_NCUDA=%s STARPU_NOPENCL=%s by default)\n",
	       o.reps, ncuda ? ncuda : "unset", nopencl ? nopencl : "unset");

	double def[BENCH_MAX_SAMPLES], cpu[BENCH_MAX_SAMPLES];
	/* One untimed start of each first: the files the runtime reads are in the page cache for all. */
	double ignored;
	bench_in_child(one_start, NULL, &ignored, sizeof(ignored));
	bench_in_child(one_start, "cpu", &ignored, sizeof(ignored));
	for (int r = 0; r < o.reps; r++) {
		if (bench_in_child(one_start, NULL, &def[r], sizeof(def[r])) != sizeof(def[r]) ||
		    bench_in_child(one_start, "cpu", &cpu[r], sizeof(cpu[r])) != sizeof(cpu[r]))
			bench_die("a child failed to start the runtime");
	}
	bench_report("startup.default", "ms", def, o.reps);
	bench_report("startup.cpu_only", "ms", cpu, o.reps);
	double ratio = bench_median(def, o.reps) / bench_median(cpu, o.reps);
	bench_report("startup.ratio", "x", &ratio, 1);
	free(ncuda);
	free(nopencl);
	return 0;
}
