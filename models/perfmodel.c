/*
 * Performance models: architecture combinations, footprints and sizes,
 * predictions, and calibration from the observation path.
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

/* ------------------------------------------------------- combinations */

static struct
{
	struct starpu_perfmodel_arch arch;
	struct starpu_perfmodel_device devices[_ASTRO_PM_MAX_DEVICES];
} combs[_ASTRO_PM_MAX_COMBS];
static int ncombs;				/* atomic for readers; grows under combs_lock */
static starpu_pthread_mutex_t combs_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

static bool devices_match(int n, const struct starpu_perfmodel_device *a, const struct starpu_perfmodel_device *b)
{
	for (int i = 0; i < n; i++)
		if (a[i].type != b[i].type || a[i].devid != b[i].devid || a[i].ncores != b[i].ncores)
			return false;
	return true;
}

static bool devices_valid(int ndevices, const struct starpu_perfmodel_device *devices)
{
	if (ndevices < 1 || ndevices > _ASTRO_PM_MAX_DEVICES || !devices)
		return false;
	for (int i = 0; i < ndevices; i++)
		if ((unsigned)devices[i].type >= STARPU_NARCH || devices[i].devid < 0 || devices[i].ncores < 1)
			return false;
	return true;
}

int starpu_perfmodel_arch_comb_get(int ndevices, struct starpu_perfmodel_device *devices)
{
	int n = __atomic_load_n(&ncombs, __ATOMIC_ACQUIRE);
	for (int c = 0; c < n; c++)
		if (combs[c].arch.ndevices == ndevices && devices_match(ndevices, combs[c].devices, devices))
			return c;
	return -1;
}

int starpu_perfmodel_arch_comb_add(int ndevices, struct starpu_perfmodel_device *devices)
{
	if (!devices_valid(ndevices, devices)) {
		_astro_error("starpu_perfmodel_arch_comb_add: %d device(s) with an unknown type, a negative id or no core: "
			     "give 1 to %d devices of a worker type, devid >= 0, ncores >= 1", ndevices, _ASTRO_PM_MAX_DEVICES);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&combs_lock);
	int c = starpu_perfmodel_arch_comb_get(ndevices, devices);
	if (c < 0) {
		if (ncombs == _ASTRO_PM_MAX_COMBS) {
			starpu_pthread_mutex_unlock(&combs_lock);
			_astro_error("starpu_perfmodel_arch_comb_add: all %d architecture combinations are used: "
				     "models cannot describe more kinds of devices in one process", _ASTRO_PM_MAX_COMBS);
			return -ENOSPC;
		}
		c = ncombs;
		memcpy(combs[c].devices, devices, (size_t)ndevices * sizeof(*devices));
		combs[c].arch.ndevices = ndevices;
		combs[c].arch.devices = combs[c].devices;
		__atomic_store_n(&ncombs, c + 1, __ATOMIC_RELEASE);
	}
	starpu_pthread_mutex_unlock(&combs_lock);
	return c;
}

int starpu_perfmodel_get_narch_combs(void)
{
	return __atomic_load_n(&ncombs, __ATOMIC_ACQUIRE);
}

struct starpu_perfmodel_arch *starpu_perfmodel_arch_comb_fetch(int comb)
{
	return comb >= 0 && comb < starpu_perfmodel_get_narch_combs() ? &combs[comb].arch : NULL;
}

int _astro_pm_comb_of(const struct starpu_perfmodel_arch *arch)
{
	if (!arch)
		return -1;
	/* The table's own archs (every worker's) resolve without a search. */
	if (arch >= &combs[0].arch && (const void *)arch < (const void *)&combs[_ASTRO_PM_MAX_COMBS])
		return (int)(((const char *)arch - (const char *)&combs[0]) / sizeof(combs[0]));
	int c = starpu_perfmodel_arch_comb_get(arch->ndevices, arch->devices);
	return c >= 0 ? c : starpu_perfmodel_arch_comb_add(arch->ndevices, arch->devices);
}

/* --------------------------------------------------------- the workers */

static int worker_comb[STARPU_NMAXWORKERS];
static unsigned nworkers;

/* StarPU's STARPU_PERF_MODEL_HOMOGENEOUS_<ARCH>: CPUs share one model by default, each other device has its own. */
static bool homogeneous(enum starpu_worker_archtype type)
{
	static const char *const names[STARPU_NARCH] = {
		[STARPU_CPU_WORKER] = "CPU", [STARPU_CUDA_WORKER] = "CUDA", [STARPU_OPENCL_WORKER] = "OPENCL",
		[STARPU_MAX_FPGA_WORKER] = "FPGA", [STARPU_MPI_MS_WORKER] = "MPI_MS", [STARPU_TCPIP_MS_WORKER] = "TCPIP_MS",
		[STARPU_HIP_WORKER] = "HIP",
	};
	char var[64];
	snprintf(var, sizeof(var), "STARPU_PERF_MODEL_HOMOGENEOUS_%s", names[type] ? names[type] : "OTHER");
	return starpu_get_env_number_default(var, type == STARPU_CPU_WORKER) != 0;
}

static void workers_describe(void)
{
	nworkers = starpu_worker_get_count();
	for (unsigned w = 0; w < nworkers; w++) {
		struct starpu_perfmodel_device d = { .type = starpu_worker_get_type((int)w), .ncores = 1 };
		d.devid = homogeneous(d.type) ? 0 : (d.type == STARPU_CPU_WORKER ? (int)w : starpu_worker_get_devid((int)w));
		worker_comb[w] = starpu_perfmodel_arch_comb_add(1, &d);
	}
}

/* The architecture of size CPU cores together (a combined worker's, as StarPU's), NULL said when none is left. */
static struct starpu_perfmodel_arch *cores_arch(int size)
{
	struct starpu_perfmodel_device cores = { .type = STARPU_CPU_WORKER, .devid = 0, .ncores = size };
	int c = starpu_perfmodel_arch_comb_add(1, &cores);
	return c >= 0 ? &combs[c].arch : NULL;
}

struct starpu_perfmodel_arch *starpu_worker_get_perf_archtype(int workerid, unsigned sched_ctx_id)
{
	(void)sched_ctx_id;
	int size;
	/* A combined worker: its CPU cores together. */
	if (workerid >= 0 && (unsigned)workerid >= nworkers && _astro_is_combined_worker(workerid) &&
	    starpu_combined_worker_get_description(workerid, &size, NULL) == 0)
		return cores_arch(size);
	if (workerid < 0 || (unsigned)workerid >= nworkers || worker_comb[workerid] < 0)
		return NULL;
	return &combs[worker_comb[workerid]].arch;
}

/* ---------------------------------------------------------------- names */

void starpu_perfmodel_get_arch_name(struct starpu_perfmodel_arch *arch, char *archname, size_t maxlen, unsigned nimpl)
{
	_astro_pm_arch_name(arch, _astro_pm_comb_of(arch), nimpl, archname, maxlen);
}

/* --------------------------------------------------- models and state */

static GPtrArray *registered;			/* models with a state, under models_lock */
static starpu_pthread_mutex_t models_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_mutex_t load_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;	/* serialises first loads */

bool _astro_pm_is_history_type(enum starpu_perfmodel_type type)
{
	return type == STARPU_HISTORY_BASED || type == STARPU_REGRESSION_BASED || type == STARPU_NL_REGRESSION_BASED ||
	       type == STARPU_MULTIPLE_REGRESSION_BASED;
}

void starpu_perfmodel_init(struct starpu_perfmodel *model)
{
	if (!model || __atomic_load_n(&model->is_init, __ATOMIC_ACQUIRE))
		return;
	starpu_pthread_mutex_lock(&models_lock);
	if (!model->is_init) {
		struct _starpu_perfmodel_state *s = calloc(1, sizeof(*s));
		if (!s) {
			starpu_pthread_mutex_unlock(&models_lock);
			_astro_error("starpu_perfmodel_init: out of memory for model %s", model->symbol ? model->symbol : "(no symbol)");
			return;
		}
		starpu_pthread_mutex_init(&s->lock, NULL);
		for (int c = 0; c < _ASTRO_PM_MAX_COMBS; c++)
			s->local_of[c] = -1;
		__atomic_store_n(&model->state, s, __ATOMIC_RELEASE);	/* read unlocked by the quality counters */
		if (!registered)
			registered = g_ptr_array_new();
		g_ptr_array_add(registered, model);
		__atomic_store_n(&model->is_init, 1, __ATOMIC_RELEASE);
	}
	starpu_pthread_mutex_unlock(&models_lock);
}

static void state_free(struct starpu_perfmodel *model)
{
	struct _starpu_perfmodel_state *s = model->state;
	if (!s)
		return;
	_astro_pm_data_clear(&s->data);
	starpu_pthread_mutex_destroy(&s->lock);
	__atomic_store_n(&model->state, NULL, __ATOMIC_RELEASE);
	free(s);
	free(model->path);
	model->path = NULL;
	model->is_loaded = 0;
	model->benchmarking = 0;
	__atomic_store_n(&model->is_init, 0, __ATOMIC_RELEASE);
}

int starpu_perfmodel_deinit(struct starpu_perfmodel *model)
{
	if (!model)
		return 0;
	starpu_pthread_mutex_lock(&models_lock);
	if (registered)
		g_ptr_array_remove(registered, model);
	state_free(model);
	starpu_pthread_mutex_unlock(&models_lock);
	return 0;
}

struct _astro_pm_block *_astro_pm_block_of(struct starpu_perfmodel *model, int comb, unsigned impl, bool create)
{
	struct _starpu_perfmodel_state *s = model->state;
	if (comb < 0 || comb >= _ASTRO_PM_MAX_COMBS || impl >= STARPU_MAXIMPLEMENTATIONS)
		return NULL;
	int local = s->local_of[comb];
	if (local < 0) {
		if (!create || s->data.ncombs == _ASTRO_PM_MAX_COMBS)
			return NULL;
		struct _astro_pm_comb *c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		const struct starpu_perfmodel_arch *arch = &combs[comb].arch;
		c->ndevices = arch->ndevices;
		memcpy(c->devices, arch->devices, (size_t)arch->ndevices * sizeof(*arch->devices));
		c->global = comb;
		local = (int)s->data.ncombs;
		s->data.combs[s->data.ncombs++] = c;
		s->local_of[comb] = local;
	}
	struct _astro_pm_comb *c = s->data.combs[local];
	if (!c->impl[impl] && create)
		c->impl[impl] = _astro_pm_block_new();
	if (c->impl[impl] && impl + 1 > c->nimpls)
		c->nimpls = impl + 1;
	return c->impl[impl];
}

void _astro_pm_adopt(struct starpu_perfmodel *model, struct _astro_pm_data *parsed)
{
	struct _starpu_perfmodel_state *s = model->state;
	for (unsigned i = 0; i < parsed->ncombs; i++) {
		struct _astro_pm_comb *pc = parsed->combs[i];
		struct starpu_perfmodel_arch arch = { .ndevices = pc->ndevices, .devices = pc->devices };
		int comb = _astro_pm_comb_of(&arch);
		if (comb < 0)
			continue;
		for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++) {
			struct _astro_pm_block *pb = pc->impl[impl];
			if (!pb)
				continue;
			if (!_astro_pm_block_of(model, comb, impl, true))
				continue;
			struct _astro_pm_comb *mc = s->data.combs[s->local_of[comb]];
			struct _astro_pm_block *old = mc->impl[impl];
			/* Keep the functions set through starpu_perfmodel_set_per_devices_*(). */
			pb->pub.cost_function = old->pub.cost_function;
			pb->pub.size_base = old->pub.size_base;
			_astro_pm_block_free(old);
			mc->impl[impl] = pb;
			pc->impl[impl] = NULL;
		}
		/* A file may write empty blocks below nimpls: keep the count it had. */
		struct _astro_pm_comb *mc = s->local_of[comb] >= 0 ? s->data.combs[s->local_of[comb]] : NULL;
		if (mc && pc->nimpls > mc->nimpls)
			mc->nimpls = pc->nimpls;
	}
}

/* Loads model on first use: its file, and whether it records (STARPU_CALIBRATE at load time). */
static void model_ensure_loaded(struct starpu_perfmodel *model)
{
	if (STARPU_LIKELY(__atomic_load_n(&model->is_loaded, __ATOMIC_ACQUIRE)))
		return;
	starpu_perfmodel_init(model);
	if (!model->state)
		return;
	starpu_pthread_mutex_lock(&load_lock);
	if (!model->is_loaded) {
		int calibrate = __atomic_load_n(&_astro_rt.calibrate, __ATOMIC_RELAXED);
		if (_astro_pm_is_history_type(model->type)) {
			if (!model->symbol || !model->symbol[0])
				_astro_error("performance model of type %d has no symbol: it cannot be calibrated nor saved; "
					     "set model->symbol (history and regression models need one)", (int)model->type);
			else if (calibrate != 2)
				_astro_pm_load(model);
		}
		model->benchmarking = (unsigned)calibrate;
		__atomic_store_n(&model->is_loaded, 1, __ATOMIC_RELEASE);
	}
	starpu_pthread_mutex_unlock(&load_lock);
	if (model->type == STARPU_MULTIPLE_REGRESSION_BASED)
		_astro_pm_mlr_usable(model);
}

void _astro_pm_ensure_loaded(struct starpu_perfmodel *model)
{
	model_ensure_loaded(model);
}

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
		bool in_range = size >= 0.9 * (double)r->minx && size <= 1.1 * (double)r->maxx;
		if (model->type == STARPU_REGRESSION_BASED)
			return r->valid && in_range ? r->alpha * pow(size, r->beta) : NAN;
		if (r->nl_valid && in_range)
			return r->a * pow(size, r->b) + r->c;
	}
	struct _astro_pm_entry *e = _astro_pm_block_find(b, footprint_locked(model, task, arch, nimpl));
	return e && e->h.nsample >= minimum ? e->h.mean : NAN;
}

/* What model predicts for task on arch (workerid: -1, or the worker for PER_WORKER models). quiet: for the
 * runtime's own look (model quality), which neither forces calibration nor reports a model that cannot predict. */
static double model_prediction(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch,
			       int workerid, unsigned nimpl, bool quiet)
{
	if (!model)
		return 0.0;
	model_ensure_loaded(model);
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
		double v = data_prediction(model, task, arch, comb, nimpl);
		bool force = isnan(v) && !model->benchmarking && model->symbol && !quiet;
		bool warn = force && !s->warned_uncalibrated;
		if (force) {
			s->warned_uncalibrated = true;
			model->benchmarking = 1;
		}
		starpu_pthread_mutex_unlock(&s->lock);
		if (warn) {
			char name[128];
			_astro_pm_arch_name(arch, comb, nimpl, name, sizeof(name));
			_astro_warn("model %s is not calibrated enough for %s: forcing calibration for this run "
				    "(run with STARPU_CALIBRATE=1 until it is)", model->symbol, name);
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
	model_ensure_loaded(model);
	if (!model->state)
		return NAN;
	starpu_pthread_mutex_lock(&model->state->lock);
	struct _astro_pm_block *b = existing_block(model, _astro_pm_comb_of(arch), 0);
	struct _astro_pm_entry *e = b ? _astro_pm_block_find(b, footprint) : NULL;
	double v = e && e->h.nsample >= _astro_pm_calibrate_minimum() ? e->h.mean : NAN;
	starpu_pthread_mutex_unlock(&model->state->lock);
	return v;
}

/* -------------------------------------------------------- per devices */

/* Reads (type, devid, ncores) triples up to -1 into devices; returns how many, or -1 when malformed. */
static int devices_from_va(va_list ap, struct starpu_perfmodel_device *devices)
{
	int n = 0;
	for (;;) {
		int type = va_arg(ap, int);
		if (type == -1)
			break;
		if (n == _ASTRO_PM_MAX_DEVICES)
			return -1;
		devices[n].type = (enum starpu_worker_archtype)type;
		devices[n].devid = va_arg(ap, int);
		devices[n].ncores = va_arg(ap, int);
		n++;
	}
	return devices_valid(n, devices) ? n : -1;
}

static struct starpu_perfmodel_per_arch *per_devices(const char *fn, struct starpu_perfmodel *model, int impl, va_list ap)
{
	struct starpu_perfmodel_device devices[_ASTRO_PM_MAX_DEVICES];
	int n = devices_from_va(ap, devices);
	if (!model || n < 0 || impl < 0 || impl >= STARPU_MAXIMPLEMENTATIONS) {
		_astro_error("%s: bad arguments (model %p, impl %d): give (type, devid, ncores) triples ended by -1, "
			     "impl below %d, after starpu_perfmodel_init()", fn, (void *)model, impl, STARPU_MAXIMPLEMENTATIONS);
		return NULL;
	}
	struct starpu_perfmodel_arch arch = { .ndevices = n, .devices = devices };
	return starpu_perfmodel_get_model_per_arch(model, &arch, (unsigned)impl);
}

struct starpu_perfmodel_per_arch *starpu_perfmodel_get_model_per_arch(struct starpu_perfmodel *model, struct starpu_perfmodel_arch *arch, unsigned impl)
{
	if (!model || !arch || impl >= STARPU_MAXIMPLEMENTATIONS)
		return NULL;
	int comb = _astro_pm_comb_of(arch);
	if (comb < 0)
		return NULL;
	starpu_perfmodel_init(model);
	if (!model->state)
		return NULL;
	starpu_pthread_mutex_lock(&model->state->lock);
	struct _astro_pm_block *b = _astro_pm_block_of(model, comb, impl, true);
	starpu_pthread_mutex_unlock(&model->state->lock);
	return b ? &b->pub : NULL;
}

struct starpu_perfmodel_per_arch *starpu_perfmodel_get_model_per_devices(struct starpu_perfmodel *model, int impl, ...)
{
	va_list ap;
	va_start(ap, impl);
	struct starpu_perfmodel_per_arch *pa = per_devices(__func__, model, impl, ap);
	va_end(ap);
	return pa;
}

int starpu_perfmodel_set_per_devices_cost_function(struct starpu_perfmodel *model, int impl, starpu_perfmodel_per_arch_cost_function func, ...)
{
	va_list ap;
	va_start(ap, func);
	struct starpu_perfmodel_per_arch *pa = per_devices(__func__, model, impl, ap);
	va_end(ap);
	if (!pa)
		return -EINVAL;
	pa->cost_function = func;
	return 0;
}

int starpu_perfmodel_set_per_devices_size_base(struct starpu_perfmodel *model, int impl, starpu_perfmodel_per_arch_size_base func, ...)
{
	va_list ap;
	va_start(ap, func);
	struct starpu_perfmodel_per_arch *pa = per_devices(__func__, model, impl, ap);
	va_end(ap);
	if (!pa)
		return -EINVAL;
	pa->size_base = func;
	return 0;
}

static double nop_cost(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	(void)task;
	(void)arch;
	(void)nimpl;
	return 1e-6;
}

struct starpu_perfmodel starpu_perfmodel_nop = { .type = STARPU_PER_ARCH, .arch_cost_function = nop_cost };

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
	model_ensure_loaded(model);
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
	uint32_t footprint = footprint_locked(model, task, arch, nimpl);
	size_t size = task_size(model, task, arch, comb, nimpl);
	struct _astro_pm_block *b = _astro_pm_block_of(model, comb, nimpl, true);
	if (b) {
		_astro_pm_record(model, b, footprint, size, task->flops, average_measured, number, arch, comb, nimpl);
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
	return size > 1 ? cores_arch(size) : starpu_worker_get_perf_archtype((int)w, 0);
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
			model_ensure_loaded(energy);
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
		model_ensure_loaded(model);
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
	struct starpu_perfmodel_arch *arch = executing_arch(w);
	if (!arch)
		return;
	/* Compared before it is recorded: the prediction this execution would have been scheduled with. */
	if (_astro_pm_quality_wanted() && model->state)
		_astro_pm_quality_observe(model, model_prediction(model, task, arch, (int)w, ev->nimpl, true), end - measuring[w].start);
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

/* ------------------------------------------------------------ runtime */

void starpu_perfmodel_initialize(void)
{
	/* Everything a tool needs without starpu_init() (combinations, files, loading) is ready from the start. */
}

/* Frees the data of every model (loaded by a tool, or initialised by the application), without saving. */
void starpu_perfmodel_free_sampling(void)
{
	starpu_pthread_mutex_lock(&models_lock);
	GPtrArray *models = registered;
	registered = NULL;
	for (unsigned i = 0; models && i < models->len; i++)
		state_free(g_ptr_array_index(models, i));
	starpu_pthread_mutex_unlock(&models_lock);
	if (models)
		g_ptr_array_free(models, TRUE);
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
	workers_describe();
	_astro_pm_quality_register();
	_astro_pm_follow();
	_astro_bound_init();
}

void _astro_models_shutdown(void)
{
	_astro_bound_shutdown();
	if (subscription >= 0)
		astro_observe_set_mask(subscription, 0);
	starpu_pthread_mutex_lock(&models_lock);
	GPtrArray *models = registered;
	registered = NULL;
	starpu_pthread_mutex_unlock(&models_lock);
	if (!models)
		return;
	bool save = __atomic_load_n(&_astro_rt.calibrate, __ATOMIC_RELAXED) != 0;
	for (unsigned i = 0; i < models->len; i++) {
		struct starpu_perfmodel *model = g_ptr_array_index(models, i);
		if (save && model->state && model->state->dirty && _astro_pm_is_history_type(model->type) && model->symbol)
			_astro_pm_save(model);
		state_free(model);
	}
	g_ptr_array_free(models, TRUE);
}
