/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where threads run, for the program (starpu.h, starpu_worker.h): the
 * processing units (hwloc logical indexes) the program's own threads may
 * take beside the workers (starpu_get_next_bindid, starpu_bind_thread_on,
 * starpu_bind_thread_on_cpu/_worker/_main),
 * and the workers' cpusets. A table per run says who holds each unit:
 * the workers (their bindid), and the threads bound through
 * starpu_bind_thread_on(); an active thread holds its unit alone.
 */
#include "workers/workers.h"
#include <hwloc.h>

static struct
{
	starpu_pthread_mutex_t lock;
	unsigned npus;
	bool *active;                        /* a unit taken by an active thread (or reserved for one) */
	char **names;                        /* the name of the thread bound there, NULL when none */
} units = { .lock = STARPU_PTHREAD_MUTEX_INITIALIZER };

static void units_reset(void)
{
	if (units.names)
		for (unsigned i = 0; i < units.npus; i++)
			free(units.names[i]);
	free(units.active);
	free(units.names);
	units.active = NULL;
	units.names = NULL;
	units.npus = 0;
}

/* The table for this run, made at the first call after starpu_init(). Under units.lock. */
static bool units_ready(const char *call)
{
	if (!_astro_running()) {
		_astro_error("%s: StarPU is not initialised: call starpu_init() first", call);
		return false;
	}
	if (units.npus != _astro_rt.npus || !units.active) {
		units_reset();
		units.active = calloc(_astro_rt.npus, sizeof(*units.active));
		units.names = calloc(_astro_rt.npus, sizeof(*units.names));
		if (!units.active || !units.names) {
			units_reset();
			_astro_error("%s: out of memory", call);
			return false;
		}
		units.npus = _astro_rt.npus;
	}
	return true;
}

void _astro_binding_reset(void)
{
	starpu_pthread_mutex_lock(&units.lock);
	units_reset();
	starpu_pthread_mutex_unlock(&units.lock);
	_astro_worker_tree_reset();
}

static bool worker_on(unsigned pu)
{
	for (unsigned i = 0; i < _astro_rt.nworkers; i++)
		if (_astro_rt.workers[i]->bindid == (int)pu)
			return true;
	return false;
}

unsigned starpu_get_next_bindid(unsigned flags, unsigned *preferred, unsigned npreferred)
{
	starpu_pthread_mutex_lock(&units.lock);
	if (!units_ready("starpu_get_next_bindid")) {
		starpu_pthread_mutex_unlock(&units.lock);
		return 0;
	}
	if (npreferred && !preferred) {
		_astro_error("starpu_get_next_bindid: npreferred is %u but preferred is NULL: the preferences are ignored", npreferred);
		npreferred = 0;
	}
	/* The preferred units first, then all in order: the first neither a worker's nor an
	 * active thread's; failing that, the first no active thread holds; failing that, the last. */
	unsigned choice = units.npus, fallback = units.npus;
	for (unsigned k = 0; k < npreferred + units.npus && choice == units.npus; k++) {
		unsigned pu = k < npreferred ? preferred[k] : k - npreferred;
		if (pu >= units.npus)
			continue;
		if (units.active[pu])
			continue;
		if (fallback == units.npus)
			fallback = pu;
		if (!worker_on(pu))
			choice = pu;
	}
	if (choice == units.npus)
		choice = fallback != units.npus ? fallback : units.npus - 1;
	if (flags & STARPU_THREAD_ACTIVE)
		units.active[choice] = true;
	starpu_pthread_mutex_unlock(&units.lock);
	return choice;
}

int starpu_bind_thread_on(int cpuid, unsigned flags, const char *name)
{
	if (!name)
		name = "(unnamed thread)";
	starpu_pthread_mutex_lock(&units.lock);
	if (!units_ready("starpu_bind_thread_on")) {
		starpu_pthread_mutex_unlock(&units.lock);
		return -1;
	}
	if (cpuid < 0 || (unsigned)cpuid >= units.npus) {
		starpu_pthread_mutex_unlock(&units.lock);
		_astro_error("starpu_bind_thread_on: %s: processing unit %d does not exist (0 to %u here): the thread is not bound",
			     name, cpuid, units.npus - 1);
		return -1;
	}
	int ret = 0;
	bool same = units.names[cpuid] && strcmp(units.names[cpuid], name) == 0;
	if (worker_on((unsigned)cpuid) && (flags & STARPU_THREAD_ACTIVE)) {
		_astro_warn("starpu_bind_thread_on: %s is bound on processing unit %d, where a worker runs: both share it "
			    "(reserve it with starpu_conf.reserve_ncpus, or take the unit starpu_get_next_bindid() gives)", name, cpuid);
		ret = -1;
	} else if (units.names[cpuid] && !same && ((flags & STARPU_THREAD_ACTIVE) || units.active[cpuid])) {
		_astro_warn("starpu_bind_thread_on: %s is bound on processing unit %d, which %s holds already: both share it "
			    "(take another unit from starpu_get_next_bindid())", name, cpuid, units.names[cpuid]);
		ret = -1;
	}
	if (!same) {
		free(units.names[cpuid]);
		units.names[cpuid] = strdup(name);
	}
	if (flags & STARPU_THREAD_ACTIVE)
		units.active[cpuid] = true;
	starpu_pthread_mutex_unlock(&units.lock);

	if (_astro_rt.nobind)
		return ret;
	hwloc_topology_t topo = _astro_rt.topology;
	hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)cpuid);
	if (!pu || hwloc_set_cpubind(topo, pu->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
		_astro_warn("starpu_bind_thread_on: %s could not be bound to processing unit %d: it runs unbound", name, cpuid);
		return -1;
	}
	return ret;
}

/* Binds the calling thread to set for fn (said when refused); set freed. */
static void bind_caller(hwloc_bitmap_t set, const char *fn)
{
	if (!set) {
		_astro_error("%s: out of memory: the thread is not bound", fn);
		return;
	}
	if (!_astro_rt.nobind && hwloc_set_cpubind(_astro_rt.topology, set, HWLOC_CPUBIND_THREAD) != 0)
		_astro_warn("%s: the system refused the binding: the thread runs where it ran", fn);
	hwloc_bitmap_free(set);
}

void starpu_bind_thread_on_cpu(int cpuid)
{
	if (!_astro_running()) {
		_astro_error("starpu_bind_thread_on_cpu: StarPU is not initialised: call starpu_init() first");
		return;
	}
	if (cpuid < 0 || (unsigned)cpuid >= _astro_rt.npus) {
		_astro_error("starpu_bind_thread_on_cpu: processing unit %d does not exist (0 to %u here): the thread is not bound",
			     cpuid, _astro_rt.npus - 1);
		return;
	}
	hwloc_obj_t pu = hwloc_get_obj_by_type(_astro_rt.topology, HWLOC_OBJ_PU, (unsigned)cpuid);
	bind_caller(pu ? hwloc_bitmap_dup(pu->cpuset) : NULL, "starpu_bind_thread_on_cpu");
}

void starpu_bind_thread_on_worker(unsigned workerid)
{
	if (!_astro_running() || workerid >= _astro_rt.nworkers) {
		_astro_error("starpu_bind_thread_on_worker: no worker %u (there are %u): the thread is not bound", workerid,
			     _astro_running() ? _astro_rt.nworkers : 0);
		return;
	}
	bind_caller(starpu_worker_get_hwloc_cpuset((int)workerid), "starpu_bind_thread_on_worker");
}

void starpu_bind_thread_on_main(void)
{
	if (!_astro_running()) {
		_astro_error("starpu_bind_thread_on_main: StarPU is not initialised: call starpu_init() first");
		return;
	}
	hwloc_bitmap_t set = hwloc_bitmap_dup(hwloc_get_root_obj(_astro_rt.topology)->cpuset);
	hwloc_bitmap_t free_units = set ? hwloc_bitmap_dup(set) : NULL;
	if (free_units) {
		for (unsigned i = 0; i < _astro_rt.nworkers; i++) {
			int bindid = _astro_rt.workers[i]->bindid;
			hwloc_obj_t pu = bindid >= 0 ? hwloc_get_obj_by_type(_astro_rt.topology, HWLOC_OBJ_PU, (unsigned)bindid) : NULL;
			if (pu)
				hwloc_bitmap_andnot(free_units, free_units, pu->cpuset);
		}
		if (!hwloc_bitmap_iszero(free_units))
			hwloc_bitmap_copy(set, free_units);
		hwloc_bitmap_free(free_units);
	}
	bind_caller(set, "starpu_bind_thread_on_main");
}

hwloc_obj_t starpu_worker_get_hwloc_obj(int workerid)
{
	if (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers || !_astro_running()) {
		_astro_error("starpu_worker_get_hwloc_obj: no worker %d (there are %u)", workerid, _astro_rt.nworkers);
		return NULL;
	}
	int bindid = _astro_rt.workers[workerid]->bindid;
	if (bindid < 0)
		return NULL;
	return hwloc_get_obj_by_type(_astro_rt.topology, HWLOC_OBJ_PU, (unsigned)bindid);
}

hwloc_cpuset_t starpu_worker_get_hwloc_cpuset(int workerid)
{
	if (workerid < 0 || (unsigned)workerid >= _astro_rt.nworkers || !_astro_running()) {
		_astro_error("starpu_worker_get_hwloc_cpuset: no worker %d (there are %u)", workerid, _astro_rt.nworkers);
		return NULL;
	}
	int bindid = _astro_rt.workers[workerid]->bindid;
	hwloc_obj_t where = bindid >= 0 ? hwloc_get_obj_by_type(_astro_rt.topology, HWLOC_OBJ_PU, (unsigned)bindid)
					: hwloc_get_root_obj(_astro_rt.topology);
	return hwloc_bitmap_dup(where->cpuset);
}

int starpu_get_pu_os_index(unsigned logical_index)
{
	if (!_astro_running()) {
		_astro_error("starpu_get_pu_os_index: StarPU is not initialised (the topology is not loaded): call starpu_init() first");
		return -1;
	}
	hwloc_obj_t pu = hwloc_get_obj_by_type(_astro_rt.topology, HWLOC_OBJ_PU, logical_index);
	if (!pu) {
		_astro_error("starpu_get_pu_os_index: no processing unit %u (there are %u)", logical_index, _astro_rt.npus);
		return -1;
	}
	return (int)pu->os_index;
}

/* StarPU runs hwloc-ps; here the runtime says what it bound itself: its workers, then the
 * program's threads bound through starpu_bind_thread_on(). */
void starpu_display_bindings(void)
{
	if (!_astro_running()) {
		_astro_error("starpu_display_bindings: StarPU is not initialised: call starpu_init() first");
		return;
	}
	for (unsigned i = 0; i < _astro_rt.nworkers; i++) {
		const struct _astro_worker *w = _astro_rt.workers[i];
		if (w->bindid < 0)
			printf("worker %u (%s): not bound\n", i, w->name);
		else
			printf("worker %u (%s): processing unit %d (OS index %d)\n", i, w->name, w->bindid,
			       starpu_get_pu_os_index((unsigned)w->bindid));
	}
	starpu_pthread_mutex_lock(&units.lock);
	for (unsigned pu = 0; pu < units.npus; pu++)
		if (units.names && units.names[pu])
			printf("thread %s: processing unit %u (OS index %d)\n", units.names[pu], pu, starpu_get_pu_os_index(pu));
	starpu_pthread_mutex_unlock(&units.lock);
	fflush(stdout);
}
