/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Energy measurement: StarPU's starpu_energy_start() / starpu_energy_stop()
 * with the meter a plugin registers (energy_meter.c), which measure a
 * batch of tasks and record energy / ntasks, ntasks times, into an energy
 * model. As in StarPU, CPU energy is the CPU packages' (and their DRAM's),
 * for every CPU worker at once: workerid must be -1. Without a meter, or for
 * other workers, they say so in one line and return -ENODEV.
 */
#include "models.h"

#include <astrolabe/energy.h>
#include <errno.h>
#include <string.h>

static starpu_pthread_mutex_t batch_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static struct astro_energy_stamp batch_start;	/* under batch_lock */
static const struct astro_energy_meter *batch_meter;	/* the meter that read batch_start, NULL: no batch started */

/* The meter for archi's workers in *m: 0, or -ENODEV / -EINVAL after one line saying why. */
static int meter_for(const char *fn, int workerid, enum starpu_worker_archtype archi, const struct astro_energy_meter **out)
{
	const struct astro_energy_meter *m = astro_energy_meter_get();
	*out = m;
	if (!m) {
		_astro_error("%s: no energy counter here (no readable /sys/class/powercap zone, no working PAPI rapl component): "
			     "feed energy models with starpu_perfmodel_update_history()", fn);
		return -ENODEV;
	}
	if (archi != STARPU_CPU_WORKER) {
		_astro_error("%s: the energy of %s workers cannot be measured here (%s measures the CPU packages only)", fn,
			     starpu_worker_get_type_as_string(archi), m->name);
		return -ENODEV;
	}
	if (workerid != -1) {
		_astro_error("%s: worker %d: CPU energy is the packages' and cannot be told apart per worker: give workerid -1 "
			     "(all CPU workers)", fn, workerid);
		return -EINVAL;
	}
	return 0;
}

int starpu_energy_start(int workerid, enum starpu_worker_archtype archi)
{
	const struct astro_energy_meter *m;
	int ret = meter_for(__func__, workerid, archi, &m);
	if (ret)
		return ret;
	starpu_pthread_mutex_lock(&batch_lock);
	ret = m->read(-1, &batch_start);
	batch_meter = ret == 0 ? m : NULL;
	starpu_pthread_mutex_unlock(&batch_lock);
	if (ret)
		_astro_error("%s: %s cannot read the energy (%s): nothing is measured", __func__, m->name, strerror(-ret));
	return ret;
}

int starpu_energy_stop(struct starpu_perfmodel *model, struct starpu_task *task, unsigned nimpl, unsigned ntasks, int workerid,
		       enum starpu_worker_archtype archi)
{
	const struct astro_energy_meter *m;
	int ret = meter_for(__func__, workerid, archi, &m);
	if (ret)
		return ret;
	if (!model || !task || !ntasks) {
		_astro_error("%s: %s is missing: give the energy model, a specimen task and the number of tasks measured (> 0)",
			     __func__, !model ? "the model" : !task ? "the task" : "ntasks");
		return -EINVAL;
	}
	struct astro_energy_stamp end;
	ret = m->read(-1, &end);
	starpu_pthread_mutex_lock(&batch_lock);
	/* A batch started with a meter since unregistered (its plugin gone) is not one. */
	bool started = batch_meter == m;
	struct astro_energy_stamp start = batch_start;
	batch_meter = NULL;
	starpu_pthread_mutex_unlock(&batch_lock);
	if (!started) {
		_astro_error("%s: no measurement was started: call starpu_energy_start() before the tasks", __func__);
		return -EINVAL;
	}
	if (ret) {
		_astro_error("%s: %s cannot read the energy (%s): nothing is recorded", __func__, m->name, strerror(-ret));
		return ret;
	}
	int worker = starpu_worker_get_by_type(archi, 0);
	struct starpu_perfmodel_arch *arch = worker >= 0 ? starpu_worker_get_perf_archtype(worker, 0) : NULL;
	if (!arch) {
		_astro_error("%s: there is no CPU worker to record the energy for", __func__);
		return -ENODEV;
	}
	double joules = m->joules(-1, &start, &end);
	starpu_perfmodel_update_history_n(model, task, arch, 0, nimpl, joules / ntasks, ntasks);
	return 0;
}
