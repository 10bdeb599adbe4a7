/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Predictions over a scheduling context: what the performance models
 * (models/) predict for a task on each of the context's workers, averaged
 * as StarPU does.
 */
#include "sched/sched.h"
#include <math.h>

/* StarPU's average: the harmonic mean, over the context's workers that can run task, of each one's best
 * implementation (its throughput averaged); workers without a prediction are left out (NaN when none has one). */
static double average_prediction(struct starpu_task *task, bool energy, unsigned sched_ctx_id)
{
	if (!task || !task->cl)
		return 0.0;
	int *workers = NULL;
	unsigned nworkers_ctx = starpu_sched_ctx_get_workers_list(sched_ctx_id, &workers), n = 0;
	double harmonic = 0.0;
	for (unsigned i = 0; i < nworkers_ctx; i++) {
		unsigned mask = 0;
		if (!starpu_worker_can_execute_task_impl((unsigned)workers[i], task, &mask))
			continue;
		double best = INFINITY;
		for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++)
			if (mask & (1u << impl)) {
				double v = energy ? starpu_task_worker_expected_energy(task, (unsigned)workers[i], sched_ctx_id, impl)
					 : starpu_task_worker_expected_length(task, (unsigned)workers[i], sched_ctx_id, impl);
				if (v < best)
					best = v;
			}
		if (isinf(best))
			continue;
		harmonic += 1.0 / best;
		n++;
	}
	free(workers);
	return n ? n / harmonic : NAN;
}

double starpu_task_expected_length_average(struct starpu_task *task, unsigned sched_ctx_id)
{
	return average_prediction(task, false, sched_ctx_id);
}

double starpu_task_expected_energy_average(struct starpu_task *task, unsigned sched_ctx_id)
{
	return average_prediction(task, true, sched_ctx_id);
}
