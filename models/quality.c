/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Model quality, beyond StarPU: per-codelet counters (module "models") saying
 * how well the codelet's time model predicts its executions, so a tool can
 * watch the models while the program runs:
 *
 *   starpu.model.c_samples                 int64   samples the model recorded in this process
 *   starpu.model.c_predicted               int64   measured executions that had a prediction
 *   starpu.model.c_calibrated              int32   1 when the last measured execution had one
 *   starpu.model.c_last_relative_error     double  |measured - predicted| / measured, last one (NaN: none yet)
 *   starpu.model.c_mean_relative_error     double  the mean of those errors (NaN: none yet)
 *
 * Per-codelet values are only readable while a listener is set on the codelet
 * (or through astro_counter_read()): the first read turns the comparison on,
 * from then on each measured execution of a task whose codelet has a model
 * is compared with the model's prediction for its worker, before the
 * execution is recorded. Tasks without a model pay nothing more.
 * The listener's refresh that follows an execution may come before the
 * execution is compared (when the counters followed executions before the
 * models did): it then sees the values one execution late; reads through
 * astro_counter_read() and later refreshes are exact.
 */
#include "models.h"
#include <astrolabe/counters.h>
#include <math.h>

#define MODULE "models"

static int id_samples = -1, id_predicted = -1, id_calibrated = -1, id_last_error = -1, id_mean_error = -1;
static int wanted;	/* a tool read the counters: compare executions with predictions */

bool _astro_pm_quality_wanted(void)
{
	return __atomic_load_n(&wanted, __ATOMIC_RELAXED) != 0;
}

void _astro_pm_quality_observe(struct starpu_perfmodel *model, double predicted, double measured)
{
	struct _astro_pm_quality *q = &model->state->quality;
	bool calibrated = !isnan(predicted) && measured > 0;
	__atomic_store_n(&q->calibrated, calibrated ? 1 : 0, __ATOMIC_RELAXED);
	if (!calibrated)
		return;
	double error = fabs(measured - predicted) / measured;
	/* Under the state lock: the mean's sum and count move together. */
	starpu_pthread_mutex_lock(&model->state->lock);
	astro_counter_store_double(&q->last_error, error);
	astro_counter_store_double(&q->sum_error, q->sum_error + error);
	__atomic_store_n(&q->predicted, q->predicted + 1, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&model->state->lock);
}

void _astro_pm_quality_sampled(struct starpu_perfmodel *model, unsigned number)
{
	__atomic_fetch_add(&model->state->quality.samples, (int64_t)number, __ATOMIC_RELAXED);
}

static void update_codelet(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	(void)arg;
	if (!__atomic_load_n(&wanted, __ATOMIC_RELAXED)) {
		__atomic_store_n(&wanted, 1, __ATOMIC_RELAXED);
		_astro_pm_follow();
	}
	const struct starpu_codelet *cl = context;
	struct starpu_perfmodel *model = cl ? cl->model : NULL;
	struct _starpu_perfmodel_state *s = model ? __atomic_load_n(&model->state, __ATOMIC_ACQUIRE) : NULL;
	struct _astro_pm_quality none = { .last_error = NAN }, *q = s ? &s->quality : &none;
	int64_t predicted = __atomic_load_n(&q->predicted, __ATOMIC_RELAXED);
	astro_counter_sample_set_int64(sample, id_samples, __atomic_load_n(&q->samples, __ATOMIC_RELAXED));
	astro_counter_sample_set_int64(sample, id_predicted, predicted);
	astro_counter_sample_set_int32(sample, id_calibrated, __atomic_load_n(&q->calibrated, __ATOMIC_RELAXED));
	astro_counter_sample_set_double(sample, id_last_error, predicted ? astro_counter_load_double(&q->last_error) : NAN);
	astro_counter_sample_set_double(sample, id_mean_error, predicted ? astro_counter_load_double(&q->sum_error) / (double)predicted : NAN);
}

void _astro_pm_quality_register(void)
{
	__atomic_store_n(&wanted, 0, __ATOMIC_RELAXED);
	const enum starpu_perf_counter_scope scope = starpu_perf_counter_scope_per_codelet;
	id_samples = astro_counter_register(MODULE, scope, "starpu.model.c_samples", starpu_perf_counter_type_int64,
					    ASTRO_COUNTER_MONOTONIC, "samples", "samples the codelet's time model recorded in this process");
	id_predicted = astro_counter_register(MODULE, scope, "starpu.model.c_predicted", starpu_perf_counter_type_int64,
					      ASTRO_COUNTER_MONOTONIC, "tasks", "measured executions the model had a prediction for");
	id_calibrated = astro_counter_register(MODULE, scope, "starpu.model.c_calibrated", starpu_perf_counter_type_int32,
					       ASTRO_COUNTER_INSTANT, NULL, "1 when the model predicted the last measured execution, else 0");
	id_last_error = astro_counter_register(MODULE, scope, "starpu.model.c_last_relative_error", starpu_perf_counter_type_double,
					       ASTRO_COUNTER_INSTANT, NULL, "|measured - predicted| / measured of the last predicted execution (NaN: none)");
	id_mean_error = astro_counter_register(MODULE, scope, "starpu.model.c_mean_relative_error", starpu_perf_counter_type_double,
					       ASTRO_COUNTER_INSTANT, NULL, "mean relative prediction error of the predicted executions (NaN: none)");
	astro_counter_register_updater(MODULE, scope, update_codelet, NULL);
}
