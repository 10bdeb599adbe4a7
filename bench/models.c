/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * models: what performance models cost and how well they predict.
 *
 * -p overhead (the default; -n 20000 tasks; per round, each setting in a fresh process, the same N empty
 *    tasks submitted then waited for, each preceded by
 *    starpu_task_expected_length() as a model-based scheduler asks):
 *      models.overhead.none        no model                            µs/task
 *      models.overhead.calibrating a history model, STARPU_CALIBRATE=1:
 *                                  a lookup and an update per task     µs/task
 *      models.overhead.calibrated  the same model, calibrated, STARPU_CALIBRATE=0:
 *                                  a lookup per task                   µs/task
 *      models.overhead.*.added     the setting minus none, same round  µs/task
 *      models.overhead.*.cpu[.added]  the same in CPU time of all the process's
 *                                  threads (less sensitive to a loaded machine;
 *                                  includes the idle worker's polling)
 *      models.overhead.direct      a prediction and an update_history() called
 *                                  directly by one thread, no task: its CPU
 *                                  time                                µs/task
 * -p error: busy-wait tasks of 20..320 µs; per round, one process calibrates
 *    (STARPU_CALIBRATE=2, -n tasks of each length, default 200), a second one predicts each
 *    task and measures it (inside the codelet):
 *      models.error.history        median |predicted - measured| / measured, %
 *      models.error.regression     the same for a·size^b, at the calibrated
 *                                  lengths and at lengths between them, %
 * -p fit: 1M samples (-n) over 1000 sizes fed with starpu_perfmodel_update_history():
 *      models.fit.regression.feed  µs per sample (alpha, beta refitted online)
 *      models.fit.nl.save          ms to save the non-linear model (a·n^b + c
 *                                  fitted over the 1000 entries, file written)
 * Model files go to a temporary STARPU_HOME, removed at the end.
 */
#include "bench.h"
#include <math.h>
#include <stdbool.h>

#define NLENGTHS 5
static const double calib_us[NLENGTHS] = { 20, 40, 80, 160, 320 };
static const double between_us[NLENGTHS - 1] = { 30, 60, 120, 240 };

struct busy_arg
{
	double length_us;
	double measured_us;
};

static void busy_func(void *buffers[], void *cl_arg)
{
	(void) buffers;
	struct busy_arg *a = cl_arg;
	double t0 = bench_now_us(), end = t0 + a->length_us;
	double t;
	while ((t = bench_now_us()) < end)
		;
	a->measured_us = t - t0;
}

/* The size models see: proportional to the task's length. */
static size_t busy_size(struct starpu_task *task, unsigned nimpl)
{
	(void) nimpl;
	return (size_t) (((struct busy_arg *) task->cl_arg)->length_us * 100);
}

static struct starpu_perfmodel history_model = { .type = STARPU_HISTORY_BASED, .symbol = "bench_models_history", .size_base = busy_size };
static struct starpu_perfmodel regression_model = { .type = STARPU_REGRESSION_BASED, .symbol = "bench_models_regression", .size_base = busy_size };
static struct starpu_codelet history_cl = { .where = STARPU_CPU, .cpu_funcs = { busy_func }, .model = &history_model, .name = "bench_models_history" };
static struct starpu_codelet regression_cl = { .where = STARPU_CPU, .cpu_funcs = { busy_func }, .model = &regression_model, .name = "bench_models_regression" };

/* ------------------------------------------------------------ overhead */

static struct starpu_perfmodel empty_model = { .type = STARPU_HISTORY_BASED, .symbol = "bench_models_empty" };
static struct starpu_codelet empty_model_cl = { .where = STARPU_CPU, .cpu_funcs = { bench_empty_func }, .model = &empty_model, .name = "bench_models_empty" };

struct overhead_setting
{
	const struct bench_options *o;
	int with_model;
	const char *calibrate;
};

/* CPU time of the whole process (all threads), µs. */
static double process_cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static double run_async_predicting(struct starpu_codelet *cl, long n)
{
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, 0);
	double sink = 0;
	double t0 = bench_now_us();
	for (long i = 0; i < n; i++)
	{
		struct starpu_task *task = bench_empty_task();
		task->cl = cl;
		sink += starpu_task_expected_length(task, arch, 0);
		bench_check_submit(starpu_task_submit(task));
	}
	starpu_task_wait_for_all();
	double t = (bench_now_us() - t0) / n;
	if (isnan(sink) && cl->model && getenv("STARPU_CALIBRATE") && !strcmp(getenv("STARPU_CALIBRATE"), "0"))
		bench_die("the calibrated model predicted NaN");
	return t;
}

static void overhead_child(void *arg, int fd)
{
	const struct overhead_setting *s = arg;
	setenv("STARPU_CALIBRATE", s->calibrate, 1);
	bench_starpu_init();
	struct starpu_codelet *cl = s->with_model ? &empty_model_cl : &bench_empty_cl;
	run_async_predicting(cl, s->o->ntasks);	/* warm-up */
	double t[3], cpu[3];
	for (int i = 0; i < 3; i++)
	{
		double c0 = process_cpu_us();
		t[i] = run_async_predicting(cl, s->o->ntasks);
		cpu[i] = (process_cpu_us() - c0) / s->o->ntasks;
	}
	double med[2] = { bench_median(t, 3), bench_median(cpu, 3) };
	starpu_shutdown();
	bench_write_all(fd, med, sizeof(med));
}

/* CPU time of the calling thread: on a loaded machine, wall time counts the
 * time other processes hold the core. */
static double thread_cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* The model's own work for one task, without the runtime around it: a
 * prediction and a recorded measurement, called directly by one thread
 * (its CPU time). */
static void direct_child(void *arg, int fd)
{
	const struct bench_options *o = arg;
	setenv("STARPU_CALIBRATE", "0", 1);
	bench_starpu_init();
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, 0);
	struct starpu_task *task = starpu_task_create();
	task->cl = &empty_model_cl;
	task->destroy = 0;
	double sink = 0, t[3];
	for (int r = 0; r < 4; r++)
	{
		double t0 = thread_cpu_us();
		for (long i = 0; i < o->ntasks; i++)
		{
			sink += starpu_task_expected_length(task, arch, 0);
			starpu_perfmodel_update_history(&empty_model, task, arch, 0, 0, 1.0 + 0.01 * (double) (i % 7));
		}
		if (r > 0)
			t[r - 1] = (thread_cpu_us() - t0) / o->ntasks;
	}
	starpu_task_destroy(task);
	double med = bench_median(t, 3) + 0 * sink;
	starpu_shutdown();
	bench_write_all(fd, &med, sizeof(med));
}

static void overhead(const struct bench_options *o)
{
	double direct[BENCH_MAX_SAMPLES];
	struct overhead_setting settings[] = { { o, 0, "0" }, { o, 1, "1" }, { o, 1, "0" } };
	static const char *const names[] = { "none", "calibrating", "calibrated" };
	double v[3][BENCH_MAX_SAMPLES], added[3][BENCH_MAX_SAMPLES], cpu[3][BENCH_MAX_SAMPLES], cpu_added[3][BENCH_MAX_SAMPLES];
	for (int r = 0; r < o->reps; r++)
		for (int s = 0; s < 3; s++)
		{
			double got[2];
			if (bench_in_child(overhead_child, &settings[s], got, sizeof(got)) != sizeof(got))
				bench_die("the %s setting failed", names[s]);
			v[s][r] = got[0];
			cpu[s][r] = got[1];
			added[s][r] = v[s][r] - v[0][r];
			cpu_added[s][r] = cpu[s][r] - cpu[0][r];
		}
	for (int r = 0; r < o->reps; r++)
		if (bench_in_child(direct_child, (void *) o, &direct[r], sizeof(double)) != sizeof(double))
			bench_die("the direct setting failed");
	bench_report("models.overhead.direct", "us/task", direct, o->reps);
	char metric[64];
	for (int s = 0; s < 3; s++)
	{
		snprintf(metric, sizeof(metric), "models.overhead.%s", names[s]);
		bench_report(metric, "us/task", v[s], o->reps);
	}
	for (int s = 1; s < 3; s++)
	{
		snprintf(metric, sizeof(metric), "models.overhead.%s.added", names[s]);
		bench_report(metric, "us/task", added[s], o->reps);
	}
	for (int s = 0; s < 3; s++)
	{
		snprintf(metric, sizeof(metric), "models.overhead.%s.cpu", names[s]);
		bench_report(metric, "us/task", cpu[s], o->reps);
	}
	for (int s = 1; s < 3; s++)
	{
		snprintf(metric, sizeof(metric), "models.overhead.%s.cpu.added", names[s]);
		bench_report(metric, "us/task", cpu_added[s], o->reps);
	}
}

/* -------------------------------------------------------------- error */

static void run_busy(struct starpu_codelet *cl, struct busy_arg *args, long n)
{
	for (long i = 0; i < n; i++)
	{
		struct starpu_task *task = starpu_task_create();
		task->cl = cl;
		task->cl_arg = &args[i];
		bench_check_submit(starpu_task_submit(task));
	}
	starpu_task_wait_for_all();
}

static void calibrate_child(void *arg, int fd)
{
	const struct bench_options *o = arg;
	setenv("STARPU_CALIBRATE", "2", 1);	/* each round calibrates from scratch */
	bench_starpu_init();
	long n = o->ntasks * NLENGTHS;
	struct busy_arg *args = calloc((size_t) n, sizeof(*args));
	for (long i = 0; i < n; i++)
		args[i].length_us = calib_us[i % NLENGTHS];
	run_busy(&history_cl, args, n);
	run_busy(&regression_cl, args, n);
	free(args);
	starpu_shutdown();
	char ok = 1;
	bench_write_all(fd, &ok, 1);
}

struct error_result
{
	double history, regression;
};

/* Predicts then runs n tasks of each length; returns the median relative error in %. */
static double measure_error(struct starpu_codelet *cl, const double *lengths, int nlengths, long n)
{
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, 0);
	long total = n * nlengths;
	struct busy_arg *args = calloc((size_t) total, sizeof(*args));
	struct starpu_task **tasks = calloc((size_t) total, sizeof(*tasks));
	double *predicted = calloc((size_t) total, sizeof(double)), *error = calloc((size_t) total, sizeof(double));
	for (long i = 0; i < total; i++)
	{
		args[i].length_us = lengths[i % nlengths];
		tasks[i] = starpu_task_create();
		tasks[i]->cl = cl;
		tasks[i]->cl_arg = &args[i];
		predicted[i] = starpu_task_expected_length(tasks[i], arch, 0);
		if (isnan(predicted[i]))
			bench_die("model %s predicts nothing for %.0f us tasks after calibration", cl->model->symbol, args[i].length_us);
	}
	for (long i = 0; i < total; i++)
		bench_check_submit(starpu_task_submit(tasks[i]));
	starpu_task_wait_for_all();
	for (long i = 0; i < total; i++)
		error[i] = 100 * fabs(predicted[i] - args[i].measured_us) / args[i].measured_us;
	qsort(error, (size_t) total, sizeof(double), bench_compare_double);
	double med = total % 2 ? error[total / 2] : (error[total / 2 - 1] + error[total / 2]) / 2;
	free(args);
	free(tasks);
	free(predicted);
	free(error);
	return med;
}

static void error_child(void *arg, int fd)
{
	const struct bench_options *o = arg;
	setenv("STARPU_CALIBRATE", "0", 1);
	bench_starpu_init();
	struct error_result r;
	r.history = measure_error(&history_cl, calib_us, NLENGTHS, o->ntasks);
	double lengths[2 * NLENGTHS - 1];
	for (int i = 0; i < NLENGTHS; i++)
		lengths[i] = calib_us[i];
	for (int i = 0; i < NLENGTHS - 1; i++)
		lengths[NLENGTHS + i] = between_us[i];
	r.regression = measure_error(&regression_cl, lengths, 2 * NLENGTHS - 1, o->ntasks);
	starpu_shutdown();
	bench_write_all(fd, &r, sizeof(r));
}

static void error(const struct bench_options *o)
{
	double h[BENCH_MAX_SAMPLES], g[BENCH_MAX_SAMPLES];
	char ok;
	for (int r = 0; r < o->reps; r++)
	{
		if (bench_in_child(calibrate_child, (void *) o, &ok, 1) != 1)
			bench_die("the calibration run failed");
		struct error_result res;
		if (bench_in_child(error_child, (void *) o, &res, sizeof(res)) != sizeof(res))
			bench_die("the prediction run failed");
		h[r] = res.history;
		g[r] = res.regression;
	}
	bench_report("models.error.history", "%", h, o->reps);
	bench_report("models.error.regression", "%", g, o->reps);
}

/* ---------------------------------------------------------------- fit */

static size_t fit_size;
static size_t fit_size_base(struct starpu_task *task, unsigned nimpl)
{
	(void) task;
	(void) nimpl;
	return fit_size;
}

static struct starpu_perfmodel fit_reg = { .type = STARPU_REGRESSION_BASED, .symbol = "bench_models_fit_reg", .size_base = fit_size_base };
static struct starpu_perfmodel fit_nl = { .type = STARPU_NL_REGRESSION_BASED, .symbol = "bench_models_fit_nl", .size_base = fit_size_base };

struct fit_result
{
	double feed_us, save_ms;
};

/* Feeds n samples of 3e-3·size^1.2 + 15 (µs, ±1% deterministic noise) over 1000 sizes into model. */
static double feed(struct starpu_perfmodel *model, long n)
{
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, 0);
	struct starpu_task task = { .cl = &bench_empty_cl };
	double t0 = bench_now_us();
	for (long i = 0; i < n; i++)
	{
		fit_size = 1000 + (size_t) (i % 1000) * 997;
		double v = 3e-3 * pow((double) fit_size, 1.2) + 15;
		v *= 1 + 0.01 * (double) ((i * 7919) % 201 - 100) / 100;
		starpu_perfmodel_update_history(model, &task, arch, 0, 0, v);
	}
	return (bench_now_us() - t0) / n;
}

static void fit_child(void *arg, int fd)
{
	const struct bench_options *o = arg;
	setenv("STARPU_CALIBRATE", "0", 1);
	bench_starpu_init();
	struct fit_result r;
	r.feed_us = feed(&fit_reg, o->ntasks);
	feed(&fit_nl, o->ntasks);
	double t0 = bench_now_us();
	starpu_save_history_based_model(&fit_nl);
	r.save_ms = (bench_now_us() - t0) / 1000;
	starpu_shutdown();
	bench_write_all(fd, &r, sizeof(r));
}

static void fit(const struct bench_options *o)
{
	double feed_us[BENCH_MAX_SAMPLES], save_ms[BENCH_MAX_SAMPLES];
	for (int r = 0; r < o->reps; r++)
	{
		struct fit_result res;
		if (bench_in_child(fit_child, (void *) o, &res, sizeof(res)) != sizeof(res))
			bench_die("the fitting run failed");
		feed_us[r] = res.feed_us;
		save_ms[r] = res.save_ms;
	}
	bench_report("models.fit.regression.feed", "us/samp", feed_us, o->reps);
	bench_report("models.fit.nl.save", "ms", save_ms, o->reps);
}

/* ---------------------------------------------------------------- main */

static char home[] = "/tmp/bench-models-XXXXXX";

static void remove_home(void)
{
	char cmd[sizeof(home) + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", home);
}

int main(int argc, char **argv)
{
	struct bench_options o;
	bench_parse(argc, argv, &o, 20000, 3, 'p', " [-p overhead|error|fit]");
	const char *part = o.extra ? o.extra : "overhead";
	/* -n defaults per part: tasks per setting, tasks per length, samples. */
	bool n_given = false;
	for (int i = 1; i < argc; i++)
		n_given |= !strncmp(argv[i], "-n", 2);
	if (!n_given)
		o.ntasks = !strcmp(part, "error") ? 200 : !strcmp(part, "fit") ? 1000000 : 20000;
	if (!mkdtemp(home))
		bench_die("mkdtemp: %s", strerror(errno));
	atexit(remove_home);
	setenv("STARPU_HOME", home, 1);
	unsetenv("XDG_CACHE_HOME");
	setenv("STARPU_HOSTNAME", "bench", 1);
	printf("# models %s | %s | policy %s | -n %ld x %d rounds\n", part, bench_runtime_name(),
	       getenv("STARPU_SCHED") ? getenv("STARPU_SCHED") : "(default)", o.ntasks, o.reps);
	if (!strcmp(part, "overhead"))
		overhead(&o);
	else if (!strcmp(part, "error"))
		error(&o);
	else if (!strcmp(part, "fit"))
		fit(&o);
	else
		bench_die("-p %s: give overhead, error or fit", part);
	return 0;
}
