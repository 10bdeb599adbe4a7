/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calibration from the observation path: starpu_perfmodel_update_history and
 * the execution observer, the models' start and stop with the runtime.
 *
 * Calibration observes TASK_STARTED / TASK_ENDED, untimed: the observer reads
 * the clock itself, and only for a task whose codelet has a model that
 * records. It is subscribed only while something calibrates (STARPU_CALIBRATE,
 * the knob, or a model forced into calibration by a NaN prediction), so a
 * run without models pays nothing, not even a branch more than the hub's.
 * Models are loaded at their first prediction or first measured execution.
 */
#include "models.h"
#include <astrolabe/energy.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- recording */

/* A multiple-regression sample: the task's parameters and its duration (no footprint, no outlier test, as StarPU). */
static void mlr_update(struct starpu_perfmodel *model, struct starpu_task *task, int comb, unsigned nimpl, double measured, unsigned number)
{
	if (!_astro_pm_mlr_usable(model))
		return;
	double local[16];
	unsigned width = model->nparameters + 1;
	double *row = width <= 16 ? local : malloc(width * sizeof(double));
	if (!row)
		return;
	_astro_pm_mlr_task_row(model, task, measured, row);	/* the user's function, outside the lock */
	starpu_pthread_mutex_lock(&model->state->lock);
	struct _astro_pm_block *b = _astro_pm_block_of(model, comb, nimpl, true);
	if (b) {
		_astro_pm_mlr_record(b, row, width, number);
		model->state->dirty = true;
	}
	_astro_pm_quality_sampled(model, number);
	starpu_pthread_mutex_unlock(&model->state->lock);
	if (row != local)
		free(row);
	int zero = 0;
	__atomic_compare_exchange_n(&_astro_rt.calibrate, &zero, 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void starpu_perfmodel_update_history_n(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch,
				       unsigned cpuid, unsigned nimpl, double average_measured, unsigned number)
{
	(void)cpuid;
	if (!model || !task || !arch || nimpl >= STARPU_MAXIMPLEMENTATIONS || number == 0) {
		_astro_error("starpu_perfmodel_update_history: bad arguments (model %p, task %p, arch %p, impl %u, %u samples): "
			     "give a model, a task, an architecture, impl below %d and at least one sample",
			     (void *)model, (void *)task, (void *)arch, nimpl, number, STARPU_MAXIMPLEMENTATIONS);
		return;
	}
	_astro_pm_ensure_loaded(model);
	if (!model->state || !_astro_pm_is_history_type(model->type))
		return;
	int comb = _astro_pm_comb_of(arch);
	if (comb < 0)
		return;
	if (model->type == STARPU_MULTIPLE_REGRESSION_BASED) {
		mlr_update(model, task, comb, nimpl, average_measured, number);
		return;
	}
	starpu_pthread_mutex_lock(&model->state->lock);
	uint32_t footprint = _astro_pm_footprint_locked(model, task, arch, nimpl);
	size_t size = _astro_pm_task_size(model, task, arch, comb, nimpl);
	struct _astro_pm_block *b = _astro_pm_block_of(model, comb, nimpl, true);
	if (b) {
		_astro_pm_record(model, b, footprint, size, task->flops, average_measured, number, arch, nimpl);
		model->state->dirty = true;
	}
	_astro_pm_quality_sampled(model, number);
	starpu_pthread_mutex_unlock(&model->state->lock);
	/* As StarPU: a fed model is saved at shutdown. Read first: no write to the shared flag per sample. */
	int zero = 0;
	if (!__atomic_load_n(&_astro_rt.calibrate, __ATOMIC_RELAXED))
		__atomic_compare_exchange_n(&_astro_rt.calibrate, &zero, 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void starpu_perfmodel_update_history(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch,
				     unsigned cpuid, unsigned nimpl, double measured)
{
	starpu_perfmodel_update_history_n(model, task, arch, cpuid, nimpl, measured, 1);
}

/* ------------------------------------------------ execution observer */

static struct
{
	double start;
	unsigned long job_id;				/* the task being timed, 0: none */
	unsigned long energy_job_id;			/* the task whose energy is read when it completes, 0: none */
	unsigned energy_nimpl;
} __attribute__((aligned(_ASTRO_CACHELINE))) measuring[STARPU_NMAXWORKERS];

static int subscription = -1;
static int follow_energy;			/* an energy model records: read profiling infos at completion */
static starpu_pthread_mutex_t follow_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

static bool records(const struct starpu_perfmodel *model)
{
	return model->benchmarking && _astro_pm_is_history_type(model->type);
}

/* The task's energy, read at its completion: a measuring plugin fills profiling_info->energy_consumed by its
 * end, whatever the order in which observers were subscribed. */
static void on_completed(const struct astro_event *ev, unsigned w)
{
	if (measuring[w].energy_job_id != ev->job_id)
		return;
	measuring[w].energy_job_id = 0;
	struct starpu_profiling_task_info *info = ev->task->profiling_info;
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype((int)w, 0);
	if (info && info->energy_consumed != 0.0 && arch)
		starpu_perfmodel_update_history(ev->task->cl->energy_model, ev->task, arch, w, measuring[w].energy_nimpl,
						info->energy_consumed);
}

/* The architecture worker w runs as: inside a parallel task, its combined worker's. */
static struct starpu_perfmodel_arch *executing_arch(unsigned w)
{
	int size = starpu_combined_worker_get_size();
	return size > 1 ? _astro_pm_cores_arch(size) : starpu_worker_get_perf_archtype((int)w, 0);
}

static void on_execution(const struct astro_event *ev, void *arg)
{
	(void)arg;
	struct starpu_task *task = ev->task;
	const struct starpu_codelet *cl = task->cl;
	if (!cl || ev->workerid < 0)
		return;
	unsigned w = (unsigned)ev->workerid;
	struct starpu_perfmodel *model = cl->model, *energy = cl->energy_model;
	switch (ev->moment) {
	case ASTRO_MOMENT_TASK_STARTED:
		if (STARPU_UNLIKELY(energy != NULL)) {
			_astro_pm_ensure_loaded(energy);
			if (records(energy) && !__atomic_load_n(&follow_energy, __ATOMIC_RELAXED)) {
				__atomic_store_n(&follow_energy, 1, __ATOMIC_RELAXED);
				if (!astro_energy_meter_get())
					_astro_warn("energy model %s calibrates, but there is no energy counter here (no readable "
						    "/sys/class/powercap zone, no working PAPI rapl component): feed it with "
						    "starpu_perfmodel_update_history()", energy->symbol ? energy->symbol : "(unnamed)");
				_astro_pm_follow();
			}
		}
		if (!model)
			return;
		_astro_pm_ensure_loaded(model);
		if (!records(model) && !_astro_pm_quality_wanted())
			return;
		measuring[w].job_id = ev->job_id;
		measuring[w].start = ev->time_us != 0.0 ? ev->time_us : _astro_now();
		return;
	case ASTRO_MOMENT_TASK_ENDED:
		break;
	case ASTRO_MOMENT_TASK_COMPLETED:
		if (energy)
			on_completed(ev, w);
		return;
	default:
		return;
	}
	if (energy && records(energy)) {
		measuring[w].energy_job_id = ev->job_id;
		measuring[w].energy_nimpl = ev->nimpl;
	}
	if (measuring[w].job_id != ev->job_id)
		return;
	double end = ev->time_us != 0.0 ? ev->time_us : _astro_now();
	measuring[w].job_id = 0;
	if (STARPU_UNLIKELY(task->failed))
		return; /* starpu_task_ft_failed(): not a duration to learn from */
	struct starpu_perfmodel_arch *arch = executing_arch(w);
	if (!arch)
		return;
	/* Compared before it is recorded: the prediction this execution would have been scheduled with. */
	if (_astro_pm_quality_wanted() && model->state)
		_astro_pm_quality_observe(model, _astro_pm_model_prediction(model, task, arch, (int)w, ev->nimpl, true), end - measuring[w].start);
	if (records(model))
		starpu_perfmodel_update_history(model, task, arch, w, ev->nimpl, end - measuring[w].start);
}

void _astro_pm_follow(void)
{
	bool on = __atomic_load_n(&_astro_rt.calibrate, __ATOMIC_RELAXED) != 0 || _astro_pm_quality_wanted();
	uint64_t mask = on ? ASTRO_OBSERVE_UNTIMED | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED) : 0;
	if (on && __atomic_load_n(&follow_energy, __ATOMIC_RELAXED))
		mask |= ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_COMPLETED);
	starpu_pthread_mutex_lock(&follow_lock);
	if (on && subscription < 0) {
		subscription = astro_observe_subscribe(mask, on_execution, NULL);
		if (subscription < 0)
			_astro_error("performance models cannot follow task executions (%d): models will not calibrate", subscription);
	} else if (subscription >= 0) {
		astro_observe_set_mask(subscription, mask);
	}
	starpu_pthread_mutex_unlock(&follow_lock);
}

void _astro_models_calibrate_changed(void)
{
	_astro_pm_follow();
}

void _astro_models_init(void)
{
	subscription = -1;	/* the hub's slots were reset by the previous shutdown */
	follow_energy = 0;
	memset(measuring, 0, sizeof(measuring));
	_astro_pm_env_read();
	_astro_pm_workers_describe();
	_astro_pm_quality_register();
	_astro_pm_follow();
}

void _astro_models_shutdown(void)
{
	if (subscription >= 0)
		astro_observe_set_mask(subscription, 0);
	GPtrArray *models = _astro_pm_registered_take();
	if (!models)
		return;
#ifdef STARPU_SIMGRID
	/* A simulation's lengths are the models' own predictions: they are not news about the machine. */
	bool save = false;
#else
	bool save = __atomic_load_n(&_astro_rt.calibrate, __ATOMIC_RELAXED) != 0;
#endif
	for (unsigned i = 0; i < models->len; i++) {
		struct starpu_perfmodel *model = g_ptr_array_index(models, i);
		if (save && model->state && model->state->dirty && _astro_pm_is_history_type(model->type) && model->symbol)
			_astro_pm_save(model);
		_astro_pm_state_free(model);
	}
	g_ptr_array_free(models, TRUE);
}
