/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What performance models hold, below prediction and calibration: the
 * architecture combinations and the workers' ones, each model's state (one
 * block per combination and implementation), per-device cost functions.
 * Loading a model's file is file.c's; predicting, predict.c's; calibrating,
 * calibrate.c's.
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
	return astro_env_int(var, 0, 1, type == STARPU_CPU_WORKER, NULL) != 0;
}

void _astro_pm_workers_describe(void)
{
	nworkers = starpu_worker_get_count();
	for (unsigned w = 0; w < nworkers; w++) {
		struct starpu_perfmodel_device d = { .type = starpu_worker_get_type((int)w), .ncores = 1 };
		d.devid = homogeneous(d.type) ? 0 : (d.type == STARPU_CPU_WORKER ? (int)w : starpu_worker_get_devid((int)w));
		worker_comb[w] = starpu_perfmodel_arch_comb_add(1, &d);
	}
}

/* The architecture of size CPU cores together (a combined worker's, as StarPU's), NULL said when none is left. */
struct starpu_perfmodel_arch *_astro_pm_cores_arch(int size)
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
		return _astro_pm_cores_arch(size);
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

void _astro_pm_state_free(struct starpu_perfmodel *model)
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
	_astro_pm_state_free(model);
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
		_astro_pm_state_free(g_ptr_array_index(models, i));
	starpu_pthread_mutex_unlock(&models_lock);
	if (models)
		g_ptr_array_free(models, TRUE);
}

GPtrArray *_astro_pm_registered_take(void)
{
	starpu_pthread_mutex_lock(&models_lock);
	GPtrArray *models = registered;
	registered = NULL;
	starpu_pthread_mutex_unlock(&models_lock);
	return models;
}
