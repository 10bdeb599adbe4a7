/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workers as the other rooms see them: the table and its queries, and the
 * sleep and wake-up protocol. A worker whose loop (run/worker_loop.c) finds
 * nothing sleeps on the futex of its wake_pending; wakers set wake_pending
 * before looking at sleeping, the sleeper sets sleeping before looking at
 * wake_pending, so one of them always sees the other (no lost wake-up, no
 * lock on either side).
 */
#include "workers/workers.h"

/* ------------------------------------------------------------- waking */

/* Wakes w if it sleeps: whether it slept. */
static inline bool worker_wake(struct _astro_worker *w)
{
	__atomic_store_n(&w->wake_pending, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&w->sleeping, __ATOMIC_SEQ_CST))
		return false;
	astro_futex_wake_all(&w->wake_pending);
	return true;
}

void _astro_worker_wake(struct _astro_worker *w)
{
	worker_wake(w);
}

/* The worker's lock plays no part in its sleep: the _locked variant is the same call. */
static int wake_checked(int workerid)
{
	if (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers)
		return 0;
	return worker_wake(_astro_rt.workers[workerid]);
}

int starpu_wake_worker(int workerid) { return wake_checked(workerid); }
int starpu_wake_worker_locked(int workerid) { return wake_checked(workerid); }
int starpu_wake_worker_no_relax(int workerid) { return wake_checked(workerid); }
int starpu_wake_worker_relax(int workerid) { return wake_checked(workerid); }
int starpu_wake_worker_relax_light(int workerid) { return wake_checked(workerid); }

int astro_worker_wake_for_queued(int workerid)
{
	if (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers)
		return 0;
	__atomic_store_n(&_astro_rt.workers[workerid]->work_queued, 1, __ATOMIC_RELAXED);
	return wake_checked(workerid);
}

void starpu_wake_all_blocked_workers(void)
{
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		wake_checked(i);
}

int starpu_worker_is_sleeping(int workerid)
{
	if (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers)
		return 0;
	return __atomic_load_n(&_astro_rt.workers[workerid]->sleeping, __ATOMIC_RELAXED);
}

unsigned long _astro_workers_executed(void)
{
	unsigned long n = 0;
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		n += __atomic_load_n(&_astro_rt.workers[i]->executed, __ATOMIC_RELAXED);
	return n;
}

/* ------------------------------------------------------------ queries */

static bool valid_worker(int id)
{
	return id >= 0 && (unsigned)id < _astro_rt.nworkers;
}

unsigned starpu_worker_get_count(void) { return _astro_rt.nworkers; }
unsigned starpu_cpu_worker_get_count(void) { return _astro_rt.nworkers_by_arch[STARPU_CPU_WORKER]; }
unsigned starpu_cuda_worker_get_count(void) { return _astro_rt.nworkers_by_arch[STARPU_CUDA_WORKER]; }
unsigned starpu_opencl_worker_get_count(void) { return _astro_rt.nworkers_by_arch[STARPU_OPENCL_WORKER]; }
unsigned starpu_hip_worker_get_count(void) { return _astro_rt.nworkers_by_arch[STARPU_HIP_WORKER]; }
unsigned starpu_max_fpga_worker_get_count(void) { return _astro_rt.nworkers_by_arch[STARPU_MAX_FPGA_WORKER]; }
unsigned starpu_mpi_ms_worker_get_count(void) { return _astro_rt.nworkers_by_arch[STARPU_MPI_MS_WORKER]; }
unsigned starpu_tcpip_ms_worker_get_count(void) { return _astro_rt.nworkers_by_arch[STARPU_TCPIP_MS_WORKER]; }

int starpu_worker_get_count_by_type(enum starpu_worker_archtype type)
{
	if (type == STARPU_ANY_WORKER)
		return (int)_astro_rt.nworkers;
	if ((unsigned)type >= STARPU_NARCH)
		return -EINVAL;
	return (int)_astro_rt.nworkers_by_arch[type];
}

int starpu_worker_get_id(void)
{
	return _astro_worker_id();
}

unsigned starpu_worker_get_id_check(void)
{
	int id = starpu_worker_get_id();
	STARPU_ASSERT_MSG(id >= 0, "starpu_worker_get_id_check() must be called from a worker");
	return (unsigned)id;
}


unsigned starpu_worker_get_ids_by_type(enum starpu_worker_archtype type, int *workerids, unsigned maxsize)
{
	unsigned n = 0;
	for (unsigned i = 0; i < _astro_rt.nworkers && n < maxsize; i++)
		if (type == STARPU_ANY_WORKER || _astro_rt.workers[i]->arch == type)
			workerids[n++] = (int)i;
	return n;
}

int starpu_worker_get_by_type(enum starpu_worker_archtype type, int num)
{
	int seen = 0;
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		if (type == STARPU_ANY_WORKER || _astro_rt.workers[i]->arch == type)
			if (seen++ == num)
				return (int)i;
	return -1;
}

int starpu_worker_get_by_devid(enum starpu_worker_archtype type, int devid)
{
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		if (_astro_rt.workers[i]->arch == type && _astro_rt.workers[i]->devid == devid)
			return (int)i;
	return -1;
}

enum starpu_worker_archtype starpu_worker_get_type(int id)
{
	return valid_worker(id) ? _astro_rt.workers[id]->arch : STARPU_UNKNOWN_WORKER;
}

void starpu_worker_get_name(int id, char *dst, size_t maxlen)
{
	if (!dst || !maxlen)
		return;
	snprintf(dst, maxlen, "%s", valid_worker(id) ? _astro_rt.workers[id]->name : "(invalid worker)");
}

int starpu_worker_get_devid(int id)
{
	return valid_worker(id) ? _astro_rt.workers[id]->devid : -1;
}

unsigned starpu_worker_get_memory_node(unsigned workerid)
{
	return valid_worker((int)workerid) ? _astro_rt.workers[workerid]->memory_node : STARPU_MAIN_RAM;
}

unsigned starpu_worker_get_local_memory_node(void)
{
	return _astro_self ? _astro_self->memory_node : STARPU_MAIN_RAM;
}

int starpu_worker_get_devids(enum starpu_worker_archtype type, int *devids, int num)
{
	if (!devids || num < 0) {
		_astro_error("starpu_worker_get_devids: %s: give an array of num entries", !devids ? "NULL devids" : "negative num");
		return -EINVAL;
	}
	int n = 0;
	for (unsigned i = 0; i < _astro_rt.nworkers && n < num; i++) {
		if (_astro_rt.workers[i]->arch != type)
			continue;
		int devid = _astro_rt.workers[i]->devid;
		bool seen = false;
		for (int k = 0; k < n && !seen; k++)
			seen = devids[k] == devid;
		if (!seen)
			devids[n++] = devid;
	}
	return n;
}

int starpu_worker_get_bindid(int workerid)
{
	return valid_worker(workerid) ? _astro_rt.workers[workerid]->bindid : -1;
}

static const char *const arch_names[STARPU_NARCH] = {
	[STARPU_CPU_WORKER] = "CPU", [STARPU_CUDA_WORKER] = "CUDA", [STARPU_OPENCL_WORKER] = "OpenCL",
	[STARPU_MAX_FPGA_WORKER] = "FPGA", [STARPU_MPI_MS_WORKER] = "MPI_MS",
	[STARPU_TCPIP_MS_WORKER] = "TCPIP_MS", [STARPU_HIP_WORKER] = "HIP",
};

const char *starpu_worker_get_type_as_string(enum starpu_worker_archtype type)
{
	if ((unsigned)type < STARPU_NARCH && arch_names[type])
		return arch_names[type];
	return type == STARPU_ANY_WORKER ? "ANY" : "unknown";
}

enum starpu_worker_archtype starpu_worker_get_type_from_string(const char *type)
{
	for (unsigned i = 0; type && i < STARPU_NARCH; i++)
		if (arch_names[i] && strcmp(arch_names[i], type) == 0)
			return (enum starpu_worker_archtype)i;
	return STARPU_UNKNOWN_WORKER;
}

/* The spelling of a worker type in environment variable names (STARPU_NCPU, STARPU_NOPENCL...), as StarPU's. */
const char *starpu_worker_get_type_as_env_var(enum starpu_worker_archtype type)
{
	switch (type) {
	case STARPU_CPU_WORKER: return "CPU";
	case STARPU_CUDA_WORKER: return "CUDA";
	case STARPU_OPENCL_WORKER: return "OPENCL";
	case STARPU_HIP_WORKER: return "HIP";
	case STARPU_MAX_FPGA_WORKER: return "MAX_FPGA";
	case STARPU_MPI_MS_WORKER: return "MPI_MS";
	case STARPU_TCPIP_MS_WORKER: return "TCPIP_MS";
	default: return NULL;
	}
}

unsigned starpu_worker_archtype_is_valid(enum starpu_worker_archtype type)
{
	return (unsigned)type < STARPU_NARCH && arch_names[type] != NULL;
}

enum starpu_worker_archtype starpu_arch_mask_to_worker_archtype(unsigned mask)
{
	for (unsigned t = 0; t < STARPU_NARCH; t++)
		if (arch_names[t] && mask == STARPU_WORKER_TO_MASK(t))
			return (enum starpu_worker_archtype)t;
	_astro_error("starpu_arch_mask_to_worker_archtype: mask 0x%x does not name exactly one worker type: give one of "
		     "STARPU_CPU, STARPU_CUDA, STARPU_OPENCL...", mask);
	return STARPU_UNKNOWN_WORKER;
}

/* The worker of the same type and device that comes first in the table. */
static bool first_on_its_device(int i)
{
	const struct _astro_worker *w = _astro_rt.workers[i];
	for (int j = 0; j < i; j++)
		if (_astro_rt.workers[j]->arch == w->arch && _astro_rt.workers[j]->devid == w->devid)
			return false;
	return true;
}

int starpu_worker_get_devnum(int id)
{
	if (!valid_worker(id))
		return -1;
	const struct _astro_worker *w = _astro_rt.workers[id];
	int devnum = 0;
	for (int i = 0; i < id; i++)
		devnum += _astro_rt.workers[i]->arch == w->arch && _astro_rt.workers[i]->devid != w->devid && first_on_its_device(i);
	return devnum;
}

int starpu_worker_get_subworkerid(int id)
{
	if (!valid_worker(id))
		return -1;
	const struct _astro_worker *w = _astro_rt.workers[id];
	int sub = 0;
	for (int i = 0; i < id; i++)
		sub += _astro_rt.workers[i]->arch == w->arch && _astro_rt.workers[i]->devid == w->devid;
	return sub;
}

int starpu_worker_get_stream_workerids(unsigned devid, int *workerids, enum starpu_worker_archtype type)
{
	if (!workerids) {
		_astro_error("starpu_worker_get_stream_workerids: NULL workerids: give an array of STARPU_NMAXWORKERS entries");
		return -EINVAL;
	}
	int n = 0;
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		if (_astro_rt.workers[i]->arch == type && _astro_rt.workers[i]->devid == (int)devid)
			workerids[n++] = (int)i;
	return n;
}

int starpu_worker_is_enabled(int workerid)
{
	return valid_worker(workerid) && __atomic_load_n(&_astro_rt.workers[workerid]->enabled, __ATOMIC_RELAXED);
}

void starpu_worker_display_names(FILE *output, enum starpu_worker_archtype type)
{
	int n = starpu_worker_get_count_by_type(type);
	if (n <= 0) {
		fprintf(output, "No %s worker\n", starpu_worker_get_type_as_string(type));
		return;
	}
	fprintf(output, "%d %s worker%s:\n", n, starpu_worker_get_type_as_string(type), n > 1 ? "s" : "");
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		if (_astro_rt.workers[i]->arch == type)
			fprintf(output, "\t%s\n", _astro_rt.workers[i]->name);
}

void starpu_worker_display_count(FILE *output, enum starpu_worker_archtype type)
{
	int n = starpu_worker_get_count_by_type(type);
	if (n < 0) {
		_astro_error("starpu_worker_display_count: %d is not a worker type: give one of enum starpu_worker_archtype", (int)type);
		return;
	}
	fprintf(output, "%d %s worker%s\n", n, starpu_worker_get_type_as_string(type), n == 1 ? "" : "s");
}

void starpu_worker_display_all(FILE *output)
{
	for (unsigned t = 0; t < STARPU_NARCH; t++)
		if (arch_names[t] && _astro_rt.nworkers_by_arch[t])
			starpu_worker_display_names(output, (enum starpu_worker_archtype)t);
}

unsigned starpu_worker_is_blocked_in_parallel(int workerid) { (void)workerid; return 0; }
unsigned starpu_worker_is_slave_somewhere(int workerid) { (void)workerid; return 0; }

/* As in StarPU, a worker holding another worker's scheduling mutex is relaxed (may be observed)
 * from the moment it asks for it until it releases it. */
static bool other_worker(int workerid)
{
	return _astro_self && _astro_self->id != workerid;
}

void starpu_worker_lock(int workerid)
{
	STARPU_ASSERT_MSG(valid_worker(workerid), "starpu_worker_lock: invalid worker id %d", workerid);
	if (other_worker(workerid))
		starpu_worker_relax_on();
	starpu_pthread_mutex_lock(&_astro_rt.workers[workerid]->sched_mutex);
}

int starpu_worker_trylock(int workerid)
{
	if (!valid_worker(workerid))
		return EINVAL;
	int ret = starpu_pthread_mutex_trylock(&_astro_rt.workers[workerid]->sched_mutex);
	if (ret == 0 && other_worker(workerid))
		starpu_worker_relax_on();
	return ret;
}

void starpu_worker_unlock(int workerid)
{
	STARPU_ASSERT_MSG(valid_worker(workerid), "starpu_worker_unlock: invalid worker id %d", workerid);
	starpu_pthread_mutex_unlock(&_astro_rt.workers[workerid]->sched_mutex);
	if (other_worker(workerid))
		starpu_worker_relax_off();
}

void starpu_worker_lock_self(void) { starpu_worker_lock(starpu_worker_get_id_check()); }
void starpu_worker_unlock_self(void) { starpu_worker_unlock(starpu_worker_get_id_check()); }

/* The relaxed sections are counted in the worker's struct, read by starpu_worker_get_relax_state()
 * (sched/sched.c, which knows whether the worker is in a scheduling operation). */
void starpu_worker_relax_on(void)
{
	if (_astro_self)
		_astro_self->relax++;
}

void starpu_worker_relax_off(void)
{
	if (!_astro_self)
		return;
	if (_astro_self->relax == 0) {
		_astro_error("starpu_worker_relax_off: worker %d is in no relaxed section: pair each call with an earlier "
			     "starpu_worker_relax_on()", _astro_self->id);
		return;
	}
	_astro_self->relax--;
}

/* Worker callbacks (STARPU_WORKER_CALLBACKS): the ones _astro_worker_sleep() calls (workers.h). */
static void set_worker_callback(void (**slot)(unsigned), void (*callback)(unsigned), const char *call, const char *field)
{
	if (!_astro_running()) {
		_astro_error("%s: StarPU is not initialised: call it after starpu_init(), or set starpu_conf.%s before", call, field);
		return;
	}
	__atomic_store_n(slot, callback, __ATOMIC_RELEASE);
}

void starpu_worker_set_going_to_sleep_callback(void (*callback)(unsigned workerid))
{
	set_worker_callback(&_astro_rt.conf.callback_worker_going_to_sleep, callback, "starpu_worker_set_going_to_sleep_callback",
			    "callback_worker_going_to_sleep");
}

void starpu_worker_set_waking_up_callback(void (*callback)(unsigned workerid))
{
	set_worker_callback(&_astro_rt.conf.callback_worker_waking_up, callback, "starpu_worker_set_waking_up_callback",
			    "callback_worker_waking_up");
}

void starpu_worker_get_sched_condition(int workerid, starpu_pthread_mutex_t **sched_mutex, starpu_pthread_cond_t **sched_cond)
{
	STARPU_ASSERT_MSG(valid_worker(workerid), "starpu_worker_get_sched_condition: invalid worker id %d", workerid);
	*sched_mutex = &_astro_rt.workers[workerid]->sched_mutex;
	*sched_cond = &_astro_rt.workers[workerid]->sched_cond;
}

int starpu_task_get_current_data_node(unsigned i)
{
	struct starpu_task *task = starpu_task_get_current();
	if (!task || i >= STARPU_TASK_GET_NBUFFERS(task))
		return -1;
	/* Every buffer a task sees lives on its worker's memory node. */
	return (int)starpu_worker_get_local_memory_node();
}

/* hipBLAS (starpu_hipblas.h): no driver of this build serves it. Without HIP
 * workers, the usual case, there is nothing to set up; a HIP driver plugin
 * bringing workers without hipBLAS is said once. */
static void hipblas_on_workers(const char *fn)
{
	static int said;
	if (starpu_hip_worker_get_count() != 0 && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		_astro_warn("%s: %u HIP workers, but no driver of this build serves hipBLAS: hipBLAS calls in their codelets have no handle",
			    fn, starpu_hip_worker_get_count());
}

void starpu_hipblas_init(void)
{
	hipblas_on_workers("starpu_hipblas_init");
}

void starpu_hipblas_shutdown(void)
{
	hipblas_on_workers("starpu_hipblas_shutdown");
}
