/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Astrolabe demo: a tiled Cholesky factorization (examples/linalg) under
 * the dmda scheduler, run twice. dmda places each task where its performance
 * model says it ends first; the models start empty, so the first pass
 * calibrates them (every task is measured) and the second uses them.
 * Profiling and tracing are on: the demo prints, for each pass, the check
 * against LAPACK, the GFlop/s and the time split of each worker, then how far
 * the models' predictions were from the measured lengths, and where the
 * trace and the files drawn from it are (Perfetto's trace.json, the HTML
 * report and summary, the activity picture), with how to open them.
 *
 *   demo [-size N] [-nblocks K] [-no-prio]     (outputs in $ASTRO_DEMO_DIR, default ./astrolabe-demo)
 *
 * The models matter where workers differ: with an OpenCL device the updates
 * run there too (examples/linalg/opencl.c), and on a machine without one
 *   STARPU_NCPU=1 STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1 POCL_MAX_PTHREAD_COUNT=1 demo
 * puts PoCL's CPU device, on one thread, beside one CPU worker. After both
 * passes the demo measures them against the bound of pass 2's tasks.
 *
 * Everything it sets up goes through StarPU's environment variables (set
 * here unless already set): STARPU_SCHED=dmda, STARPU_CALIBRATE=2 (models
 * from empty), STARPU_PERF_MODEL_DIR, STARPU_FXT_TRACE, STARPU_FXT_PREFIX,
 * STARPU_GENERATE_TRACE (starpu_fxt_tool's conversion at shutdown).
 */
#include "linalg/linalg.h"

#include <lapacke.h>
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the models predicted against what the tasks took, per kernel, for the pass running. */
static struct starpu_codelet *const kernels[] = { &linalg_potrf_cl, &linalg_trsm_rlt_cl, &linalg_syrk_cl, &linalg_gemm_nt_cl };
#define NKERNELS (sizeof(kernels) / sizeof(kernels[0]))
static struct
{
	unsigned tasks, predicted;	/* all, and those dmda had a prediction for */
	double measured_us;	/* over the predicted ones */
	double *errors;	/* |predicted - measured| / measured of each predicted one */
	double *lengths, *predictions;	/* the measured length (us) and the prediction of each predicted one */
} accuracy[NKERNELS];
static pthread_mutex_t accuracy_lock = PTHREAD_MUTEX_INITIALIZER;

/* Each task's callback: its measured length (profiling) against dmda's prediction. */
static void task_done(void *arg)
{
	(void)arg;
	struct starpu_task *task = starpu_task_get_current();
	struct starpu_profiling_task_info *info = task->profiling_info;
	double measured = info ? starpu_timing_timespec_delay_us(&info->start_time, &info->end_time) : 0;
	double predicted = task->predicted;
	for (unsigned k = 0; k < NKERNELS; k++) {
		if (task->cl != kernels[k])
			continue;
		pthread_mutex_lock(&accuracy_lock);
		accuracy[k].tasks++;
		if (isfinite(predicted) && predicted > 0 && measured > 0) {
			unsigned i = accuracy[k].predicted++;
			accuracy[k].errors[i] = fabs(predicted - measured) / measured;
			accuracy[k].lengths[i] = measured;
			accuracy[k].predictions[i] = predicted;
			accuracy[k].measured_us += measured;
		}
		pthread_mutex_unlock(&accuracy_lock);
	}
}

/* Per worker: tasks run and how its time split since the last call (which resets it). */
static void print_time_split(void)
{
	for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
		struct starpu_profiling_worker_info info;
		char name[64];
		if (starpu_profiling_worker_get_info((int)w, &info) != 0)
			continue;
		starpu_worker_get_name((int)w, name, sizeof(name));
		double total = starpu_timing_timespec_to_us(&info.total_time) / 1000;
		double exec = starpu_timing_timespec_to_us(&info.executing_time) / 1000;
		double sleep = starpu_timing_timespec_to_us(&info.sleeping_time) / 1000;
		double other = fmax(total - exec - sleep, 0);
		if (total <= 0)
			total = 1;
		printf("    %-8s %4d tasks  executing %7.1f ms (%4.1f%%)  sleeping %6.1f ms (%4.1f%%)  runtime %6.1f ms (%4.1f%%)\n",
		       name, info.executed_tasks, exec, 100 * exec / total, sleep, 100 * sleep / total, other, 100 * other / total);
	}
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Medians, side by side: on a loaded machine a task preempted midway takes several times its
 * length, a tail that a mean would show as if the models were wrong. The tail is said apart.
 * Returns whether every task of the pass had a prediction. */
static bool print_accuracy(void)
{
	bool all = true;
	printf("    %-10s %6s %10s %14s %18s %13s\n", "kernel", "tasks", "predicted", "median length", "median prediction",
	       "median error");
	for (unsigned k = 0; k < NKERNELS; k++) {
		unsigned p = accuracy[k].predicted;
		if (!accuracy[k].tasks)
			continue;
		printf("    %-10s %6u %10u", kernels[k]->name, accuracy[k].tasks, p);
		if (p) {
			qsort(accuracy[k].errors, p, sizeof(double), by_value);
			qsort(accuracy[k].lengths, p, sizeof(double), by_value);
			qsort(accuracy[k].predictions, p, sizeof(double), by_value);
			double median = accuracy[k].lengths[p / 2], longest = accuracy[k].lengths[p - 1];
			unsigned tail = 0;
			for (unsigned i = 0; i < p; i++)
				tail += accuracy[k].lengths[i] > 4 * median;
			printf(" %11.3f ms %15.3f ms %12.1f%%", median / 1000, accuracy[k].predictions[p / 2] / 1000,
			       100 * accuracy[k].errors[p / 2]);
			if (tail)
				printf("  (a tail: %u task%s over 4x the median length, up to %.3f ms, which makes the mean %.3f ms: "
				       "the machine's load, not the model)",
				       tail, tail == 1 ? "" : "s", longest / 1000, accuracy[k].measured_us / p / 1000);
			printf("\n");
		} else
			printf("   (no prediction: the model was calibrating)\n");
		all &= p == accuracy[k].tasks;
		accuracy[k].tasks = accuracy[k].predicted = 0;
		accuracy[k].measured_us = 0;
	}
	return all;
}

/* The tasks of a Cholesky factorization of nb x nb tiles. */
static unsigned cholesky_tasks(unsigned nb)
{
	return nb * (nb + 1) * (nb + 2) / 6;
}

/* One factorization of the original matrix: 0 when LAPACK agrees; *elapsed_ms gets its length, *predicted whether
 * dmda had a prediction for each of its tasks. Pass 2 is recorded for the bound (print_bound). */
static int run_pass(int pass, real *a, const real *orig, const real *ref, const struct linalg_options *opt,
		    double *elapsed_ms, bool *predicted)
{
	const unsigned n = opt->size;
	struct linalg_tiles tiles;

	memcpy(a, orig, (size_t)n * n * sizeof(real));
	int ret = linalg_tiles_register(&tiles, a, n, opt->nblocks);
	if (ret)
		return ret;
	if (pass == 2)
		starpu_bound_start(0, 0);
	double start = starpu_timing_now();
	ret = linalg_cholesky_submit(&tiles, opt->no_prio, task_done);
	starpu_task_wait_for_all();
	double elapsed = starpu_timing_now() - start;
	if (pass == 2)
		starpu_bound_stop();
	*elapsed_ms = elapsed / 1000;
	linalg_tiles_unregister(&tiles);
	if (ret) {
		fprintf(stderr, "demo: a task could not be submitted: %s\n", strerror(-ret));
		return ret;
	}
	unsigned nb = opt->nblocks;
	printf("\npass %d (%s): %u tasks in %.1f ms, %.1f GFlop/s\n", pass,
	       pass == 1 ? "the models calibrate" : "dmda uses the models", cholesky_tasks(nb), elapsed / 1000,
	       (double)n * n * n / 3.0 / elapsed / 1000);
	printf("  ");
	ret = linalg_compare(a, ref, n, 'L');
	printf("  time split per worker:\n");
	print_time_split();
	printf("  the models' predictions against the measured task lengths:\n");
	*predicted = print_accuracy();
	return ret;
}

/* What the models can buy on these workers: no schedule of pass 2's tasks ends before the bound (the models' predictions
 * shared out at best between the workers, dependencies left out: GLPK solves it), against which both passes are
 * measured. Where workers differ, a task's place decides its length and pass 1 places its first tasks blind; on
 * identical cores any balanced placement comes near the bound, and the models have little to buy. */
static void print_bound(const double pass_ms[2], unsigned ntasks, bool predicted)
{
	double bound = 0;
	if (!predicted) {
		printf("\nthe bound: not computed, some tasks of pass 2 had no prediction (a kernel with fewer samples than\n"
		       "  STARPU_CALIBRATE_MINIMUM, 10 by default, is still calibrating: factorize more tiles, -nblocks)\n");
		return;
	}
	starpu_bound_compute(&bound, NULL, 0);
	if (bound <= 0) {
		printf("\nthe bound: not solved (said above why)\n");
		return;
	}
	printf("\nwhat the models can buy: no schedule of these %u tasks on these %u workers ends before %.1f ms\n"
	       "  (starpu_bound_compute: the models' predictions shared out at best, dependencies left out);\n"
	       "  pass 1 took %.2fx the bound, pass 2 %.2fx\n",
	       ntasks, starpu_worker_get_count(), bound, pass_ms[0] / bound, pass_ms[1] / bound);
}

/* Runs `tool args` in dir when the tool is in PATH; 0 when it ran and wrote `made`. */
static int run_tool(const char *dir, const char *tool, const char *args, const char *made)
{
	char cmd[3 * PATH_MAX], path[2 * PATH_MAX];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	if (system(cmd) != 0) {
		printf("  (%s not found in PATH: %s is not drawn)\n", tool, made);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "cd '%s' && %s %s > %s.log 2>&1", dir, tool, args, tool);
	snprintf(path, sizeof(path), "%s/%s", dir, made);
	if (system(cmd) != 0 || access(path, R_OK) != 0) {
		printf("  (%s failed: see %s/%s.log)\n", tool, dir, tool);
		return -1;
	}
	return 0;
}

/* The last date of activity.data's worker lines (ms), for a window spanning the whole run:
 * a run shorter than two of the converter's periods has one line per worker,
 * whose dates alone make an empty window. */
static double activity_end_ms(const char *dir)
{
	char path[PATH_MAX + 16], line[256];
	double end = 0, date;
	int worker;
	snprintf(path, sizeof(path), "%s/activity.data", dir);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%d\t%lf", &worker, &date) == 2 && date > end)
			end = date;
	if (f)
		fclose(f);
	return end;
}

static void print_outputs(const char *dir)
{
	char path[PATH_MAX + 16];
	printf("\nOutputs, in %s:\n", dir);
	snprintf(path, sizeof(path), "%s/paje.trace", dir);
	if (access(path, R_OK) != 0) {
		printf("  no trace: this build has no trace recorder (install libotf2-trace-dev, then configure again)\n");
		return;
	}
	char window[64];
	snprintf(window, sizeof(window), "activity.data 0 %.6f", activity_end_ms(dir));
	int activity = run_tool(dir, "starpu_workers_activity", window, "activity.png");
	int summary = run_tool(dir, "starpu_paje_summary", "paje.trace", "summary.html");
	int report = run_tool(dir, "astrolabe-trace-report", ".", "report.html");
	printf("  %-20s %-34s %s\n", "trace_0", "the trace (OTF2, in .trace_0/)", "otf2-print .trace_0/traces.otf2 | less");
	printf("  %-20s %-34s %s\n", "trace.json", "the trace for Perfetto", "open https://ui.perfetto.dev, drop the file on it");
	if (report == 0)
		printf("  %-20s %-34s %s\n", "report.html", "HTML report: Gantt, activity, DAG", "open it in a web browser");
	if (summary == 0)
		printf("  %-20s %-34s %s\n", "summary.html", "HTML summary: Gantt chart, states", "open it in a web browser");
	if (activity == 0)
		printf("  %-20s %-34s %s\n", "activity.png", "the workers' activity over time", "open it in an image viewer");
	printf("  %-20s %-34s %s\n", "paje.trace", "Gantt chart (Paje)", "vite paje.trace (or pj_dump paje.trace)");
	printf("  %-20s %-34s %s\n", "tasks.rec, dag.dot", "the tasks, their dependencies", "recsel tasks.rec | less; dot -Tsvg dag.dot > dag.svg");
	printf("  %-20s %-34s %s\n", "models/", "the performance models", "STARPU_PERF_MODEL_DIR=models starpu_perfmodel_display -s dgemm_nt");
}

int main(int argc, char **argv)
{
	struct linalg_options opt = { .size = 1920, .nblocks = 12, .iter = 1 };
	int ret = linalg_parse_options(argc, argv, &opt, LINALG_OPT_PRIO);
	if (ret)
		return ret > 0 ? 0 : 2;

	char dir[PATH_MAX], models[PATH_MAX + 16];
	const char *out = getenv("ASTRO_DEMO_DIR");
	out = out && *out ? out : "astrolabe-demo";
	if ((mkdir(out, 0777) != 0 && errno != EEXIST) || !realpath(out, dir)) {
		fprintf(stderr, "demo: cannot create the output folder %s (%s): set ASTRO_DEMO_DIR to a writable folder\n", out,
			strerror(errno));
		return 1;
	}
	snprintf(models, sizeof(models), "%s/models", dir);
	setenv("STARPU_SCHED", "dmda", 0);
	setenv("STARPU_CALIBRATE", "2", 0);
	setenv("STARPU_PERF_MODEL_DIR", models, 0);
	setenv("STARPU_FXT_TRACE", "1", 0);
	setenv("STARPU_FXT_PREFIX", dir, 0);
	setenv("STARPU_FXT_SUFFIX", "trace", 0);
	setenv("STARPU_GENERATE_TRACE", "1", 0);

	/* The matrix, and LAPACK's factorization of it to check against. */
	const unsigned n = opt.size, nb = opt.nblocks;
	real *ref = NULL, *orig = linalg_matrix(n, linalg_fill_spd, &ref), *a = linalg_alloc(n);
	if (!orig || !a) {
		linalg_free(orig);
		linalg_free(ref);
		linalg_free(a);
		return 1;
	}
	LAPACK(potrf)(LAPACK_COL_MAJOR, 'L', n, ref, n);

	ret = linalg_init();
	if (ret == -ENODEV) {
		fprintf(stderr, "demo: no worker available: nothing to demonstrate\n");
		return 77;
	}
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);

	/* Room for the figures of every task of a pass (nb^3 bounds their number). */
	for (unsigned k = 0; k < NKERNELS; k++) {
		size_t room = (size_t)nb * nb * nb + 1;
		accuracy[k].errors = calloc(room, sizeof(double));
		accuracy[k].lengths = calloc(room, sizeof(double));
		accuracy[k].predictions = calloc(room, sizeof(double));
		if (!accuracy[k].errors || !accuracy[k].lengths || !accuracy[k].predictions) {
			fprintf(stderr, "demo: out of memory for the models' figures: use a smaller -nblocks\n");
			linalg_shutdown();
			return 1;
		}
	}

	printf("Astrolabe demo: tiled Cholesky factorization A = L L^T of a %u x %u matrix, %u x %u tiles of %u\n", n, n, nb, nb,
	       n / nb);
	unsigned ncl = starpu_opencl_worker_get_count();
	printf("  policy %s on %u workers", starpu_sched_get_sched_policy()->policy_name, starpu_worker_get_count());
	if (ncl)
		printf(" (%u CPU, %u OpenCL)", starpu_cpu_worker_get_count(), ncl);
	printf("; tile kernels from OpenBLAS%s; profiling and tracing on\n", ncl ? " and OpenCL (dpotrf on the CPUs only)" : "");

	double pass_ms[2];
	bool predicted;
	int wrong = run_pass(1, a, orig, ref, &opt, &pass_ms[0], &predicted);
	wrong |= run_pass(2, a, orig, ref, &opt, &pass_ms[1], &predicted);
	print_bound(pass_ms, cholesky_tasks(nb), predicted);

	printf("\nWriting the trace and converting it (starpu_fxt_tool)...\n");
	fflush(stdout);
	linalg_shutdown();
	print_outputs(dir);
	printf("\n%s\n", wrong ? "result WRONG" : "result correct: both passes agree with LAPACK");

	for (unsigned k = 0; k < NKERNELS; k++) {
		free(accuracy[k].errors);
		free(accuracy[k].lengths);
		free(accuracy[k].predictions);
	}
	linalg_free(orig);
	linalg_free(a);
	linalg_free(ref);
	return wrong ? 1 : 0;
}
