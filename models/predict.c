/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Predictions: a task's footprint and size, what its codelet's model predicts
 * for an architecture (history, regression, non-linear regression, multiple
 * regression, per-architecture cost functions), for a worker, and the
 * history-based expected performance. Models are loaded at their first
 * prediction (file.c).
 */
#include "models.h"
#include <astrolabe/energy.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------- footprints and size */

uint32_t starpu_task_data_footprint(struct starpu_task *task)
{
	uint32_t footprint = 0;
	unsigned n = task && task->cl ? (unsigned)STARPU_TASK_GET_NBUFFERS(task) : 0;
	for (unsigned i = 0; i < n; i++)
		if (!(STARPU_TASK_GET_MODE(task, i) & STARPU_NOFOOTPRINT))
			footprint = starpu_hash_crc32c_be(starpu_data_get_footprint(STARPU_TASK_GET_HANDLE(task, i)), footprint);
	return footprint;
}

static struct _astro_pm_block *existing_block(struct starpu_perfmodel *model, int comb, unsigned nimpl)
{
	return model->state ? _astro_pm_block_of(model, comb, nimpl, false) : NULL;
}

/* The task's footprint under model. Caller holds the model's state lock when it has a state. */
static uint32_t footprint_locked(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	if (model->footprint)
		return model->footprint(task);
	struct _astro_pm_block *b = existing_block(model, _astro_pm_comb_of(arch), nimpl);
	size_t size;
	if (b && b->pub.size_base)
		size = b->pub.size_base(task, arch, nimpl);
	else if (model->size_base)
		size = model->size_base(task, nimpl);
	else
		return starpu_task_data_footprint(task);
	return starpu_hash_crc32c_be_n(&size, sizeof(size), 0);
}

uint32_t starpu_task_footprint(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	if (!task)
		return 0;
	if (!model)
		return starpu_task_data_footprint(task);
	struct _starpu_perfmodel_state *s = model->state;
	if (!s)
		return footprint_locked(model, task, arch, nimpl);
	starpu_pthread_mutex_lock(&s->lock);
	uint32_t footprint = footprint_locked(model, task, arch, nimpl);
	starpu_pthread_mutex_unlock(&s->lock);
	return footprint;
}

static size_t task_size(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch, int comb, unsigned nimpl)
{
	struct _astro_pm_block *b = existing_block(model, comb, nimpl);
	if (b && b->pub.size_base)
		return b->pub.size_base(task, arch, nimpl);
	if (model->size_base)
		return model->size_base(task, nimpl);
	size_t size = 0;
	unsigned n = task->cl ? (unsigned)STARPU_TASK_GET_NBUFFERS(task) : 0;
	for (unsigned i = 0; i < n; i++)
		if (!(STARPU_TASK_GET_MODE(task, i) & STARPU_NOFOOTPRINT))
			size += starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, i));
	return size;
}

/* ---------------------------------------------------------- prediction */

double starpu_worker_get_relative_speedup(struct starpu_perfmodel_arch *perf_arch)
{
	static const double alpha[STARPU_NARCH] = {
		[STARPU_CPU_WORKER] = 0.5, [STARPU_CUDA_WORKER] = 13.33, [STARPU_OPENCL_WORKER] = 12.22,
		[STARPU_MAX_FPGA_WORKER] = 0.5, [STARPU_MPI_MS_WORKER] = 1.0, [STARPU_TCPIP_MS_WORKER] = 1.0,
		[STARPU_HIP_WORKER] = 13.33,
	};
	double speedup = 0;
	for (int i = 0; perf_arch && i < perf_arch->ndevices; i++)
		if ((unsigned)perf_arch->devices[i].type < STARPU_NARCH)
			speedup += alpha[perf_arch->devices[i].type] * perf_arch->devices[i].ncores;
	return speedup;
}

/* What the model's data predicts for task on comb (NaN when not trusted yet). Caller holds the state lock. */
static double data_prediction(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch,
			      int comb, unsigned nimpl)
{
	struct _astro_pm_block *b = existing_block(model, comb, nimpl);
	if (!b)
		return NAN;
	if (model->type == STARPU_MULTIPLE_REGRESSION_BASED)
		return _astro_pm_mlr_predict(model, b, task);
	unsigned minimum = _astro_pm_calibrate_minimum();
	const struct starpu_perfmodel_regression_model *r = &b->pub.regression;
	if (model->type == STARPU_REGRESSION_BASED || model->type == STARPU_NL_REGRESSION_BASED) {
		double size = (double)task_size(model, task, arch, comb, nimpl);
		if (model->type == STARPU_REGRESSION_BASED)
			return r->valid ? _astro_pm_regression_predict(r, false, size) : NAN;
		/* Out of its range, or a fit that gives nothing usable there: the history entry, if any. */
		double v = r->nl_valid ? _astro_pm_regression_predict(r, true, size) : NAN;
		if (!isnan(v))
			return v;
	}
	struct _astro_pm_entry *e = _astro_pm_block_find(b, footprint_locked(model, task, arch, nimpl));
	return e && e->h.nsample >= minimum ? e->h.mean : NAN;
}

/* v, when a policy may use it: finite and non-negative; NaN (no prediction) otherwise, said once per model. */
static double usable(struct starpu_perfmodel *model, double v, bool quiet)
{
	if (isnan(v) || (v >= 0 && !isinf(v)))
		return v;
	struct _starpu_perfmodel_state *s = model->state;
	bool warn = !quiet && s && !__atomic_exchange_n(&s->warned_value, true, __ATOMIC_RELAXED);
	if (warn)
		_astro_warn("performance model %s predicted %g: a duration or an energy is finite and non-negative; it is taken as "
			    "no prediction (check its cost function, or its file: starpu_perfmodel_display -s %s)",
			    model->symbol ? model->symbol : "(no symbol)", v, model->symbol ? model->symbol : "SYMBOL");
	return NAN;
}

/* What model predicts for task on arch (workerid: -1, or the worker for PER_WORKER models). quiet: for the
 * runtime's own look (model quality), which neither forces calibration nor reports a model that cannot predict. */
static double raw_prediction(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch,
			     int workerid, unsigned nimpl, bool quiet)
{
	if (!model)
		return 0.0;
	_astro_pm_ensure_loaded(model);
	struct _starpu_perfmodel_state *s = model->state;
	if (!s)
		return NAN;
	int comb = _astro_pm_comb_of(arch);
	switch (model->type) {
	case STARPU_PER_WORKER:
		if (workerid >= 0 && model->worker_cost_function)
			return model->worker_cost_function(task, (unsigned)workerid, nimpl);
		break;
	case STARPU_PER_ARCH:
		if (model->arch_cost_function)
			return model->arch_cost_function(task, arch, nimpl);
		else {
			starpu_pthread_mutex_lock(&s->lock);
			struct _astro_pm_block *b = existing_block(model, comb, nimpl);
			starpu_perfmodel_per_arch_cost_function f = b ? b->pub.cost_function : NULL;
			starpu_pthread_mutex_unlock(&s->lock);
			if (f)
				return f(task, arch, nimpl);
		}
		break;
	case STARPU_COMMON:
		if (model->cost_function)
			return model->cost_function(task, nimpl) / starpu_worker_get_relative_speedup(arch);
		break;
	case STARPU_HISTORY_BASED:
	case STARPU_REGRESSION_BASED:
	case STARPU_NL_REGRESSION_BASED:
	case STARPU_MULTIPLE_REGRESSION_BASED: {
		if (comb < 0 || (model->type == STARPU_MULTIPLE_REGRESSION_BASED && !_astro_pm_mlr_usable(model)))
			return NAN;
		starpu_pthread_mutex_lock(&s->lock);
		/* A value no policy can use is no prediction: the model calibrates again. */
		double v = usable(model, data_prediction(model, task, arch, comb, nimpl), quiet);
#ifdef STARPU_SIMGRID
		/* A simulation has nothing to calibrate with: the simulated worker that needs it says what is missing. */
		bool force = false;
#else
		bool force = isnan(v) && !model->benchmarking && model->symbol && !quiet;
#endif
		bool warn = force && !s->warned_uncalibrated;
		if (force) {
			s->warned_uncalibrated = true;
			model->benchmarking = 1;
		}
		starpu_pthread_mutex_unlock(&s->lock);
		if (warn) {
			char name[128];
			_astro_pm_arch_words(arch, name, sizeof(name));
			_astro_warn("model %s is not calibrated enough for %s (implementation %u): forcing calibration for this run "
				    "(run with STARPU_CALIBRATE=1 until it is)", model->symbol, name, nimpl);
		}
		if (force) {
			int zero = 0;
			__atomic_compare_exchange_n(&_astro_rt.calibrate, &zero, 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
			_astro_pm_follow();
		}
		return v;
	}
	default:
		break;
	}
	if (quiet)
		return NAN;
	starpu_pthread_mutex_lock(&s->lock);
	bool warn = !s->warned_type;
	s->warned_type = true;
	starpu_pthread_mutex_unlock(&s->lock);
	if (warn) {
		static const char *const needs[] = {
			[STARPU_PER_WORKER] = "worker_cost_function, and a prediction through starpu_task_worker_expected_length()",
			[STARPU_PER_ARCH] = "arch_cost_function or starpu_perfmodel_set_per_devices_cost_function() for this architecture",
			[STARPU_COMMON] = "cost_function",
		};
		_astro_error("performance model %s (type %d) cannot predict: %s", model->symbol ? model->symbol : "(no symbol)",
			     (int)model->type,
			     (unsigned)model->type <= STARPU_COMMON && needs[model->type] ? needs[model->type]
			     : "this type is not supported yet (use a history or regression model)");
	}
	return NAN;
}

/* What model predicts, when a policy may use it (NaN otherwise). */
static double model_prediction(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch,
			       int workerid, unsigned nimpl, bool quiet)
{
	double v = raw_prediction(model, task, arch, workerid, nimpl, quiet);
	return model ? usable(model, v, quiet) : v;
}

double starpu_task_expected_length(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	if (!task || !task->cl)
		return 0.0;
	return model_prediction(task->cl->model, task, arch, -1, nimpl, false);
}

double starpu_task_expected_energy(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	if (!task || !task->cl)
		return 0.0;
	return model_prediction(task->cl->energy_model, task, arch, -1, nimpl, false);
}

/* The prediction of the task's time (energy: its energy) model on workerid's architecture. */
static double worker_prediction(struct starpu_task *task, bool energy, unsigned workerid, unsigned sched_ctx_id, unsigned nimpl)
{
	if (!task || !task->cl)
		return 0.0;
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype((int)workerid, sched_ctx_id);
	return arch ? model_prediction(energy ? task->cl->energy_model : task->cl->model, task, arch, (int)workerid, nimpl, false) : NAN;
}

double starpu_task_worker_expected_length(struct starpu_task *task, unsigned workerid, unsigned sched_ctx_id, unsigned nimpl)
{
	return worker_prediction(task, false, workerid, sched_ctx_id, nimpl);
}

double _astro_pm_worker_predict(struct starpu_task *task, unsigned workerid, unsigned nimpl)
{
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype((int)workerid, task->sched_ctx);
	return arch && task->cl ? model_prediction(task->cl->model, task, arch, (int)workerid, nimpl, true) : NAN;
}

double starpu_task_worker_expected_energy(struct starpu_task *task, unsigned workerid, unsigned sched_ctx_id, unsigned nimpl)
{
	return worker_prediction(task, true, workerid, sched_ctx_id, nimpl);
}

double starpu_task_expected_conversion_time(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	/* Only multiformat data is converted, and only between a CPU and a device with another layout: no
	 * interface of this runtime is multiformat yet, so no task ever waits for a conversion. */
	(void)task, (void)arch, (void)nimpl;
	return 0.0;
}

double starpu_perfmodel_history_based_expected_perf(struct starpu_perfmodel *model, struct starpu_perfmodel_arch *arch, uint32_t footprint)
{
	if (!model)
		return NAN;
	_astro_pm_ensure_loaded(model);
	if (!model->state)
		return NAN;
	starpu_pthread_mutex_lock(&model->state->lock);
	struct _astro_pm_block *b = existing_block(model, _astro_pm_comb_of(arch), 0);
	struct _astro_pm_entry *e = b ? _astro_pm_block_find(b, footprint) : NULL;
	double v = e && e->h.nsample >= _astro_pm_calibrate_minimum() ? e->h.mean : NAN;
	starpu_pthread_mutex_unlock(&model->state->lock);
	return usable(model, v, false);
}

/* ------------------------------------------------- for calibration (calibrate.c) */

uint32_t _astro_pm_footprint_locked(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch,
				    unsigned nimpl)
{
	return footprint_locked(model, task, arch, nimpl);
}

size_t _astro_pm_task_size(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch, int comb,
			   unsigned nimpl)
{
	return task_size(model, task, arch, comb, nimpl);
}

double _astro_pm_model_prediction(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch,
				  int workerid, unsigned nimpl, bool quiet)
{
	return model_prediction(model, task, arch, workerid, nimpl, quiet);
}
