/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parallel workers (starpu_parallel_worker.h): the CPU workers grouped by the
 * hwloc objects of a level, each group split into parallel workers. Every
 * parallel worker is a context nested, without a policy, in a context of all
 * the workers (sched_ctx_nested.c): a task submitted to the latter runs on a
 * parallel worker's master, which has the parallel worker's cores for a
 * thread team.
 */
#include "run/run.h"
#include <dlfcn.h>
#include <hwloc.h>
#include <stdarg.h>

/* Room for groups given options of their own (STARPU_PARALLEL_WORKER_PARTITION_ONE). */
#define MAX_GROUPS 64
/* Parallel workers: each is a context, besides the global one and the whole machine's. */
#define MAX_PARALLEL_WORKERS (STARPU_NMAX_SCHED_CTXS - 2)

struct params
{
	int min_nb, max_nb, nb;
	int prefere_min, keep_homogeneous;
	const char *policy_name;
	struct starpu_sched_policy *policy;
	void (*create_func)(void *);
	void *create_func_arg;
	unsigned awake_workers;
};

struct parallel_worker
{
	struct params params;
	unsigned ncores;
	unsigned ctx;                        /* STARPU_NMAX_SCHED_CTXS until created */
	int workers[STARPU_MAXCPUS];
};

struct group
{
	struct params params;
	unsigned npresets;                   /* made with STARPU_PARALLEL_WORKER_NEW */
	struct parallel_worker presets[MAX_PARALLEL_WORKERS];
};

struct starpu_parallel_worker_config
{
	struct params params;
	unsigned ngroups;
	struct group *groups[MAX_GROUPS];
	unsigned main_ctx;                   /* the context of all the workers */
	unsigned n;
	struct parallel_worker made[MAX_PARALLEL_WORKERS];
};

static const char fn_init[] = "starpu_parallel_worker_init";

/* ----------------------------------------------------------- options */

static struct group *group_new(struct starpu_parallel_worker_config *cfg)
{
	if (cfg->ngroups == MAX_GROUPS) {
		_astro_error("%s: more than %d groups have options of their own: give fewer STARPU_PARALLEL_WORKER_PARTITION_ONE",
			     fn_init, MAX_GROUPS);
		return NULL;
	}
	struct group *g = calloc(1, sizeof(*g));
	if (!g) {
		_astro_error("%s: out of memory", fn_init);
		return NULL;
	}
	g->params = cfg->params;
	cfg->groups[cfg->ngroups++] = g;
	return g;
}

static int positive(int value, const char *option)
{
	if (value > 0)
		return 0;
	_astro_error("%s: %s is %d: give a number of parallel workers of at least 1", fn_init, option, value);
	return -EINVAL;
}

/* Reads the options into cfg: 0, or -EINVAL said. */
static int read_options(va_list ap, struct starpu_parallel_worker_config *cfg)
{
	struct params *p = &cfg->params;
	int arg;
	while ((arg = va_arg(ap, int)) != 0) {
		switch (arg) {
		case STARPU_PARALLEL_WORKER_MIN_NB:
			p->min_nb = va_arg(ap, int);
			if (positive(p->min_nb, "STARPU_PARALLEL_WORKER_MIN_NB"))
				return -EINVAL;
			break;
		case STARPU_PARALLEL_WORKER_MAX_NB:
			p->max_nb = va_arg(ap, int);
			if (positive(p->max_nb, "STARPU_PARALLEL_WORKER_MAX_NB"))
				return -EINVAL;
			break;
		case STARPU_PARALLEL_WORKER_NB:
			p->nb = va_arg(ap, int);
			if (positive(p->nb, "STARPU_PARALLEL_WORKER_NB"))
				return -EINVAL;
			break;
		case STARPU_PARALLEL_WORKER_PREFERE_MIN:
			p->prefere_min = va_arg(ap, int) != 0;
			break;
		case STARPU_PARALLEL_WORKER_KEEP_HOMOGENEOUS:
			p->keep_homogeneous = va_arg(ap, int) != 0;
			break;
		case STARPU_PARALLEL_WORKER_POLICY_NAME:
			p->policy_name = va_arg(ap, const char *);
			break;
		case STARPU_PARALLEL_WORKER_POLICY_STRUCT:
			p->policy = va_arg(ap, struct starpu_sched_policy *);
			break;
		case STARPU_PARALLEL_WORKER_CREATE_FUNC:
			p->create_func = va_arg(ap, void (*)(void *));
			break;
		case STARPU_PARALLEL_WORKER_CREATE_FUNC_ARG:
			p->create_func_arg = va_arg(ap, void *);
			break;
		case STARPU_PARALLEL_WORKER_TYPE: {
			int type = va_arg(ap, int);
			/* Both teams are OpenMP ones, made by the same prologue. */
			if (type != STARPU_PARALLEL_WORKER_OPENMP && type != STARPU_PARALLEL_WORKER_INTEL_OPENMP_MKL) {
				_astro_error("%s: STARPU_PARALLEL_WORKER_TYPE %d is unknown: give STARPU_PARALLEL_WORKER_OPENMP or "
					     "STARPU_PARALLEL_WORKER_INTEL_OPENMP_MKL", fn_init, type);
				return -EINVAL;
			}
			break;
		}
		case STARPU_PARALLEL_WORKER_AWAKE_WORKERS:
			p->awake_workers = va_arg(ap, unsigned);
			break;
		case STARPU_PARALLEL_WORKER_PARTITION_ONE: {
			struct group *g = group_new(cfg);
			if (!g)
				return -EINVAL;
			p = &g->params;
			break;
		}
		case STARPU_PARALLEL_WORKER_NEW: {
			struct group *g = cfg->ngroups ? cfg->groups[cfg->ngroups - 1] : group_new(cfg);
			if (!g)
				return -EINVAL;
			if (g->npresets == MAX_PARALLEL_WORKERS) {
				_astro_error("%s: more than %d STARPU_PARALLEL_WORKER_NEW in one group: each parallel worker is a "
					     "scheduling context, and there are %d", fn_init, MAX_PARALLEL_WORKERS, STARPU_NMAX_SCHED_CTXS);
				return -EINVAL;
			}
			struct parallel_worker *pw = &g->presets[g->npresets++];
			pw->params = g->params;
			p = &pw->params;
			break;
		}
		case STARPU_PARALLEL_WORKER_NCORES: {
			unsigned ncores = va_arg(ap, unsigned);
			struct group *g = cfg->ngroups ? cfg->groups[cfg->ngroups - 1] : NULL;
			if (!g || !g->npresets) {
				_astro_error("%s: STARPU_PARALLEL_WORKER_NCORES sizes the parallel worker of the "
					     "STARPU_PARALLEL_WORKER_NEW before it: give that first", fn_init);
				return -EINVAL;
			}
			g->presets[g->npresets - 1].ncores = ncores;
			break;
		}
		default:
			_astro_error("%s: unknown option %d (0x%x): the options are the STARPU_PARALLEL_WORKER_* constants, each "
				     "followed by its value (but _PARTITION_ONE and _NEW), and the list ends with 0", fn_init, arg, (unsigned)arg);
			return -EINVAL;
		}
		if (p->min_nb && p->max_nb && p->min_nb > p->max_nb) {
			_astro_error("%s: STARPU_PARALLEL_WORKER_MIN_NB %d exceeds STARPU_PARALLEL_WORKER_MAX_NB %d: give min <= max",
				     fn_init, p->min_nb, p->max_nb);
			return -EINVAL;
		}
	}
	return 0;
}

/* ------------------------------------------------------ the partition */

/* How many parallel workers automatic ones share navail cores, as the options say. */
static int how_many(const struct params *p, int navail)
{
	if (p->nb)
		return MIN(p->nb, navail);
	if (!p->min_nb || !p->max_nb)
		return 1;
	if (!p->keep_homogeneous)
		return MIN(p->prefere_min ? p->min_nb : p->max_nb, navail);
	/* The first count from the preferred end that splits the cores evenly, else the one that loses fewest. */
	int step = p->prefere_min ? 1 : -1, best = 0, least_loss = INT_MAX;
	for (int n = p->prefere_min ? p->min_nb : p->max_nb; n >= p->min_nb && n <= p->max_nb; n += step) {
		if (navail % n == 0)
			return MIN(n, navail);
		if (navail % n < least_loss) {
			least_loss = navail % n;
			best = n;
		}
	}
	return MIN(best, navail);
}

/* Adds a parallel worker of ncores workers from ids to cfg: 0, or -ENOSPC said. */
static int add_parallel_worker(struct starpu_parallel_worker_config *cfg, const struct params *p, const int *ids, unsigned ncores)
{
	if (cfg->n == MAX_PARALLEL_WORKERS) {
		_astro_error("%s: more than %d parallel workers: each is a scheduling context, and there are %d; ask for fewer "
			     "(STARPU_PARALLEL_WORKER_NB) or at a higher level", fn_init, MAX_PARALLEL_WORKERS, STARPU_NMAX_SCHED_CTXS);
		return -ENOSPC;
	}
	struct parallel_worker *pw = &cfg->made[cfg->n++];
	pw->params = *p;
	pw->ncores = ncores;
	pw->ctx = STARPU_NMAX_SCHED_CTXS;
	memcpy(pw->workers, ids, ncores * sizeof(int));
	return 0;
}

/* Splits the workers ids (n of them) of one hwloc object as group g (NULL: the machine's options) says. */
static int split_group(struct starpu_parallel_worker_config *cfg, const struct group *g, const int *ids, int n)
{
	const struct params *p = g ? &g->params : &cfg->params;
	int used = 0;
	for (unsigned i = 0; g && i < g->npresets && used < n; i++) {
		unsigned ncores = MIN(g->presets[i].ncores, (unsigned)(n - used));
		if (ncores == 0)
			continue;
		if (add_parallel_worker(cfg, &g->presets[i].params, ids + used, ncores))
			return -ENOSPC;
		used += (int)ncores;
	}
	int count = how_many(p, n - used);
	for (int i = 0; i < count && used < n; i++) {
		unsigned ncores = (unsigned)((n - used) / (count - i));
		if (add_parallel_worker(cfg, p, ids + used, ncores))
			return -ENOSPC;
		used += (int)ncores;
	}
	return 0;
}

static int by_bindid(const void *a, const void *b)
{
	return _astro_rt.workers[*(const int *)a]->bindid - _astro_rt.workers[*(const int *)b]->bindid;
}

/* Groups the bound CPU workers by the objects of type level: 0, or a negative errno said. */
static int partition(struct starpu_parallel_worker_config *cfg, hwloc_obj_type_t level)
{
	hwloc_topology_t topo = (hwloc_topology_t)_astro_rt.topology;
	int nobjs = topo ? hwloc_get_nbobjs_by_type(topo, level) : 0;
	if (nobjs <= 0) {
		_astro_error("%s: this machine has no hwloc object of type %s: give another level (lstopo shows them)", fn_init,
			     hwloc_obj_type_string(level));
		return -ENODEV;
	}
	unsigned ncpus = 0;
	for (int o = 0; o < nobjs; o++) {
		hwloc_obj_t obj = hwloc_get_obj_by_type(topo, level, (unsigned)o);
		int ids[STARPU_MAXCPUS];
		int n = 0;
		for (unsigned w = 0; w < _astro_rt.nworkers && n < STARPU_MAXCPUS; w++) {
			const struct _astro_worker *worker = _astro_rt.workers[w];
			if (worker->arch != STARPU_CPU_WORKER || worker->bindid < 0)
				continue;
			hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)worker->bindid);
			if (pu && obj->cpuset && hwloc_bitmap_isincluded(pu->cpuset, obj->cpuset))
				ids[n++] = (int)w;
		}
		if (n == 0)
			continue;
		qsort(ids, (size_t)n, sizeof(int), by_bindid);
		ncpus += (unsigned)n;
		int ret = split_group(cfg, (unsigned)o < cfg->ngroups ? cfg->groups[o] : NULL, ids, n);
		if (ret)
			return ret;
	}
	if (ncpus == 0) {
		_astro_error("%s: no CPU worker is bound to a processing unit: parallel workers are made of bound CPU workers "
			     "(STARPU_NCPU > 0, STARPU_WORKERS_NOBIND unset)", fn_init);
		return -ENODEV;
	}
	return 0;
}

/* ------------------------------------------------------------ contexts */

static void nothing(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

/* The task that runs a parallel worker's creation prologue on its master. */
static struct starpu_codelet create_cl = {
	.cpu_funcs = { nothing },
	.nbuffers = 0,
	.name = "parallel_worker_create",
};

static int create_contexts(struct starpu_parallel_worker_config *cfg)
{
	const struct params *p = &cfg->params;
	if (p->policy)
		cfg->main_ctx = starpu_sched_ctx_create(NULL, -1, "parallel_workers", STARPU_SCHED_CTX_POLICY_STRUCT, p->policy, 0);
	else if (p->policy_name)
		cfg->main_ctx = starpu_sched_ctx_create(NULL, -1, "parallel_workers", STARPU_SCHED_CTX_POLICY_NAME, p->policy_name, 0);
	else
		cfg->main_ctx = starpu_sched_ctx_create(NULL, -1, "parallel_workers", 0);
	if (cfg->main_ctx == STARPU_NMAX_SCHED_CTXS)
		return -EINVAL; /* said */
	for (unsigned i = 0; i < cfg->n; i++) {
		struct parallel_worker *pw = &cfg->made[i];
		if (pw->params.awake_workers)
			pw->ctx = starpu_sched_ctx_create(pw->workers, (int)pw->ncores, "parallel_worker", STARPU_SCHED_CTX_NESTED,
							  cfg->main_ctx, STARPU_SCHED_CTX_AWAKE_WORKERS, 0);
		else
			pw->ctx = starpu_sched_ctx_create(pw->workers, (int)pw->ncores, "parallel_worker", STARPU_SCHED_CTX_NESTED,
							  cfg->main_ctx, 0);
		if (pw->ctx == STARPU_NMAX_SCHED_CTXS)
			return -EINVAL; /* said */
	}
	/* A parallel worker whose workers are kept for its master gets its thread team ready there. */
	for (unsigned i = 0; i < cfg->n; i++) {
		struct parallel_worker *pw = &cfg->made[i];
		if (pw->params.awake_workers)
			continue;
		struct starpu_task *task = starpu_task_create();
		task->cl = &create_cl;
		task->possibly_parallel = 1;
		task->prologue_callback_pop_func = pw->params.create_func ? pw->params.create_func : starpu_openmp_prologue;
		task->prologue_callback_pop_arg = pw->params.create_func ? pw->params.create_func_arg : NULL;
		int ret = starpu_task_submit_to_ctx(task, pw->ctx);
		if (ret) {
			starpu_task_destroy(task);
			return ret;
		}
	}
	for (unsigned i = 0; i < cfg->n; i++)
		starpu_task_wait_for_all_in_ctx(cfg->made[i].ctx);
	return 0;
}

static void config_free(struct starpu_parallel_worker_config *cfg)
{
	for (unsigned i = 0; i < cfg->ngroups; i++)
		free(cfg->groups[i]);
	free(cfg);
}

static struct starpu_parallel_worker_config *init_with_options(hwloc_obj_type_t parallel_worker_level, va_list ap)
{
	if (!_astro_running()) {
		_astro_error("%s: the runtime is not running: call starpu_init() first", fn_init);
		return NULL;
	}
	switch (parallel_worker_level) {
	case HWLOC_OBJ_MISC:
	case HWLOC_OBJ_BRIDGE:
	case HWLOC_OBJ_PCI_DEVICE:
	case HWLOC_OBJ_OS_DEVICE:
		_astro_error("%s: parallel workers cannot group workers by %s objects: give a level of the CPU hierarchy "
			     "(HWLOC_OBJ_PACKAGE, HWLOC_OBJ_NUMANODE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_CORE...)", fn_init,
			     hwloc_obj_type_string(parallel_worker_level));
		return NULL;
	default:
		break;
	}
	struct starpu_parallel_worker_config *cfg = calloc(1, sizeof(*cfg));
	if (!cfg) {
		_astro_error("%s: out of memory", fn_init);
		return NULL;
	}
	cfg->main_ctx = STARPU_NMAX_SCHED_CTXS;
	int ret = read_options(ap, cfg);
	if (ret == 0)
		ret = partition(cfg, parallel_worker_level);
	if (ret == 0)
		ret = create_contexts(cfg);
	if (ret) {
		starpu_parallel_worker_shutdown(cfg);
		return NULL;
	}
	starpu_sched_ctx_set_context(&cfg->main_ctx);
	return cfg;
}

struct starpu_parallel_worker_config *starpu_parallel_worker_init(hwloc_obj_type_t parallel_worker_level, ...)
{
	va_list ap;
	va_start(ap, parallel_worker_level);
	struct starpu_parallel_worker_config *cfg = init_with_options(parallel_worker_level, ap);
	va_end(ap);
	return cfg;
}

/* StarPU 1.3's names, which StarPU 1.4 keeps: a machine's clusters are its parallel workers. */
struct starpu_cluster_machine *starpu_cluster_machine(hwloc_obj_type_t cluster_level, ...)
{
	va_list ap;
	va_start(ap, cluster_level);
	struct starpu_parallel_worker_config *cfg = init_with_options(cluster_level, ap);
	va_end(ap);
	return (struct starpu_cluster_machine *)cfg;
}

int starpu_uncluster_machine(struct starpu_cluster_machine *clusters)
{
	return starpu_parallel_worker_shutdown((struct starpu_parallel_worker_config *)clusters);
}

int starpu_cluster_print(struct starpu_cluster_machine *clusters)
{
	return starpu_parallel_worker_print((struct starpu_parallel_worker_config *)clusters);
}

int starpu_parallel_worker_shutdown(struct starpu_parallel_worker_config *parallel_workers)
{
	if (!parallel_workers)
		return -1;
	for (unsigned i = 0; i < parallel_workers->n; i++)
		if (parallel_workers->made[i].ctx != STARPU_NMAX_SCHED_CTXS)
			starpu_sched_ctx_delete(parallel_workers->made[i].ctx);
	if (parallel_workers->main_ctx != STARPU_NMAX_SCHED_CTXS)
		starpu_sched_ctx_delete(parallel_workers->main_ctx);
	config_free(parallel_workers);
	unsigned global = STARPU_GLOBAL_SCHED_CTX;
	starpu_sched_ctx_set_context(&global);
	return 0;
}

int starpu_parallel_worker_print(struct starpu_parallel_worker_config *parallel_workers)
{
	if (!parallel_workers)
		return -1;
	printf("%u parallel workers in context %u\n", parallel_workers->n, parallel_workers->main_ctx);
	for (unsigned i = 0; i < parallel_workers->n; i++) {
		const struct parallel_worker *pw = &parallel_workers->made[i];
		printf("parallel worker %u (context %u), processing units:", i, pw->ctx);
		for (unsigned c = 0; c < pw->ncores; c++)
			printf(" %d", _astro_rt.workers[pw->workers[c]]->bindid);
		printf("\n");
	}
	return 0;
}

/* --------------------------------------------------------- the prologue */

void starpu_openmp_prologue(void *arg)
{
	(void)arg;
	struct starpu_task *task = starpu_task_get_current();
	int self = _astro_worker_id();
	hwloc_topology_t topo = (hwloc_topology_t)_astro_rt.topology;
	if (!task || self < 0 || _astro_rt.workers[self]->arch != STARPU_CPU_WORKER || !topo)
		return;
	int *cpuids, ncpuids;
	starpu_sched_ctx_get_available_cpuids(task->sched_ctx, &cpuids, &ncpuids);
	/* A task that is not possibly parallel runs alone, on the master's own core. */
	if (!task->possibly_parallel && _astro_rt.workers[self]->bindid >= 0) {
		cpuids[0] = _astro_rt.workers[self]->bindid;
		ncpuids = 1;
	}
	/* The team's threads inherit the master's binding: all the cores it may use. */
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	for (int i = 0; i < ncpuids; i++) {
		hwloc_obj_t pu = cpuids[i] >= 0 ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)cpuids[i]) : NULL;
		if (pu)
			hwloc_bitmap_or(set, set, pu->cpuset);
	}
	if (!hwloc_bitmap_iszero(set) && hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD) != 0)
		_astro_warn("starpu_openmp_prologue: worker %d could not be bound to its parallel worker's %d cores (%s)", self,
			    ncpuids, strerror(errno));
	hwloc_bitmap_free(set);
	/* The OpenMP runtime is the program's, when it links one. */
	void (*set_num_threads)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
	if (set_num_threads && ncpuids > 0)
		set_num_threads(ncpuids);
	free(cpuids);
}
