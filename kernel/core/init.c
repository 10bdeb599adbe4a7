/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starpu_init() / starpu_shutdown(): configuration, plugins, policy, workers. */
#include "core/core.h"
#include <hwloc.h>

static starpu_pthread_mutex_t init_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_cond_t init_cond = STARPU_PTHREAD_COND_INITIALIZER;
static int init_refcount;

int starpu_conf_init(struct starpu_conf *conf)
{
	if (!conf) {
		_astro_error("starpu_conf_init: NULL conf: pass the address of a struct starpu_conf");
		return -EINVAL;
	}
	memset(conf, 0, sizeof(*conf));
	conf->magic = STARPU_CONF_MAGIC;
	conf->ncpus = -1;
	conf->reserve_ncpus = -1;
	conf->ncuda = -1;
	conf->nopencl = -1;
	conf->nmax_fpga = -1;
	conf->nmpi_ms = -1;
	conf->ntcpip_ms = -1;
	conf->nhip = -1;
	conf->bus_calibrate = -1;
	conf->calibrate = -1;
	conf->single_combined_worker = -1;
	conf->disable_asynchronous_copy = -1;
	conf->disable_asynchronous_cuda_copy = -1;
	conf->disable_asynchronous_hip_copy = -1;
	conf->disable_asynchronous_opencl_copy = -1;
	conf->disable_asynchronous_mpi_ms_copy = -1;
	conf->disable_asynchronous_tcpip_ms_copy = -1;
	conf->disable_asynchronous_max_fpga_copy = -1;
	conf->enable_map = -1;
	conf->data_locality_enforce = -1;
	conf->cuda_only_fast_alloc_other_memnodes = -1;
	conf->catch_signals = -1;
	conf->global_sched_ctx_min_priority = -1;
	conf->global_sched_ctx_max_priority = -1;
	conf->driver_spinning_backoff_min = -1;
	conf->driver_spinning_backoff_max = -1;
	return 0;
}

int starpu_conf_noworker(struct starpu_conf *conf)
{
	conf->ncpus = 0;
	conf->ncuda = 0;
	conf->nopencl = 0;
	conf->nmax_fpga = 0;
	conf->nmpi_ms = 0;
	conf->ntcpip_ms = 0;
	conf->nhip = 0;
	return 0;
}

static void topology_load(void)
{
	hwloc_topology_t topo;
	hwloc_topology_init(&topo);
	hwloc_topology_load(topo);
	_astro_rt.topology = topo;
	int npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	_astro_rt.npus = npus > 0 ? (unsigned)npus : 1;
	_astro_rt.ncores = ncores > 0 ? (unsigned)ncores : _astro_rt.npus;
}

static void topology_unload(void)
{
	if (_astro_rt.topology)
		hwloc_topology_destroy((hwloc_topology_t)_astro_rt.topology);
	_astro_rt.topology = NULL;
}

static void read_priorities(void)
{
	const struct starpu_conf *conf = &_astro_rt.conf;
	int min = conf->global_sched_ctx_min_priority, max = conf->global_sched_ctx_max_priority;
	/* -1 is a legal priority, so conf values count only when both differ from the default pair. */
	bool conf_set = !(min == -1 && max == -1);
	const char *emin = getenv("STARPU_MIN_PRIO"), *emax = getenv("STARPU_MAX_PRIO");
	_astro_ctxs[0].min_prio = STARPU_MIN_PRIO;
	_astro_ctxs[0].max_prio = STARPU_MAX_PRIO;
	_astro_ctxs[0].min_prio_set = _astro_ctxs[0].max_prio_set = false;
	if (conf_set) {
		_astro_ctxs[0].min_prio = min;
		_astro_ctxs[0].max_prio = max;
		_astro_ctxs[0].min_prio_set = _astro_ctxs[0].max_prio_set = true;
	}
	if (!(conf_set && conf->precedence_over_environment_variables)) {
		if (emin) {
			_astro_ctxs[0].min_prio = astro_env_int("STARPU_MIN_PRIO", -ASTRO_ENV_PRIO_BOUND, ASTRO_ENV_PRIO_BOUND, _astro_ctxs[0].min_prio, NULL);
			_astro_ctxs[0].min_prio_set = true;
		}
		if (emax) {
			_astro_ctxs[0].max_prio = astro_env_int("STARPU_MAX_PRIO", -ASTRO_ENV_PRIO_BOUND, ASTRO_ENV_PRIO_BOUND, _astro_ctxs[0].max_prio, NULL);
			_astro_ctxs[0].max_prio_set = true;
		}
	}
	if (_astro_ctxs[0].min_prio > _astro_ctxs[0].max_prio) {
		_astro_warn("minimum priority %d exceeds maximum priority %d: using [%d, %d]",
			    _astro_ctxs[0].min_prio, _astro_ctxs[0].max_prio, STARPU_MIN_PRIO, STARPU_MAX_PRIO);
		_astro_ctxs[0].min_prio = STARPU_MIN_PRIO;
		_astro_ctxs[0].max_prio = STARPU_MAX_PRIO;
	}
}

/* A STARPU_DISABLE_ASYNCHRONOUS_<kind>_COPY switch: the general one turns every kind's on. */
static int copy_switch(const char *env, int conf_value, int general)
{
	return general || _astro_conf_int_in(env, NULL, conf_value, 0, 1, 0);
}

/* The copy switches, resolved once (starpu_asynchronous_*_copy_disabled() read them). */
static void resolve_copy_switches(struct starpu_conf *conf)
{
	int all = _astro_conf_int_in("STARPU_DISABLE_ASYNCHRONOUS_COPY", NULL, conf->disable_asynchronous_copy, 0, 1, 0);
	conf->disable_asynchronous_copy = all;
	conf->disable_asynchronous_cuda_copy = copy_switch("STARPU_DISABLE_ASYNCHRONOUS_CUDA_COPY", conf->disable_asynchronous_cuda_copy, all);
	conf->disable_asynchronous_hip_copy = copy_switch("STARPU_DISABLE_ASYNCHRONOUS_HIP_COPY", conf->disable_asynchronous_hip_copy, all);
	conf->disable_asynchronous_opencl_copy = copy_switch("STARPU_DISABLE_ASYNCHRONOUS_OPENCL_COPY",
							     conf->disable_asynchronous_opencl_copy, all);
	conf->disable_asynchronous_mpi_ms_copy = copy_switch("STARPU_DISABLE_ASYNCHRONOUS_MPI_MS_COPY",
							     conf->disable_asynchronous_mpi_ms_copy, all);
	conf->disable_asynchronous_tcpip_ms_copy = copy_switch("STARPU_DISABLE_ASYNCHRONOUS_TCPIP_MS_COPY",
							       conf->disable_asynchronous_tcpip_ms_copy, all);
	conf->disable_asynchronous_max_fpga_copy = copy_switch("STARPU_DISABLE_ASYNCHRONOUS_MAX_FPGA_COPY",
							       conf->disable_asynchronous_max_fpga_copy, all);
}

/* StarPU configuration this runtime cannot honour: each asked-for one is said, and left aside. */
static void say_unsupported_conf(struct starpu_conf *conf)
{
#define EXPLICIT_IDS "starpu_conf.use_explicit_workers_%s_gpuid: choosing devices by number is not supported: the devices are " \
		     "used in their order; limit how many with STARPU_N%s"
	if (conf->use_explicit_workers_cuda_gpuid)
		_astro_warn(EXPLICIT_IDS, "cuda", "CUDA");
	if (conf->use_explicit_workers_opencl_gpuid)
		_astro_warn(EXPLICIT_IDS, "opencl", "OPENCL");
#undef EXPLICIT_IDS
	if (conf->use_explicit_workers_hip_gpuid || conf->use_explicit_workers_max_fpga_deviceid || conf->use_explicit_workers_mpi_ms_deviceid)
		_astro_warn("starpu_conf.use_explicit_workers_{hip_gpuid,max_fpga_deviceid,mpi_ms_deviceid}: this build has no HIP, "
			    "Maxeler FPGA or MPI master-slave driver: the device numbers are not used");
	if (conf->max_fpga_load)
		_astro_warn("starpu_conf.max_fpga_load: this build has no Maxeler FPGA driver: nothing is loaded");
	if (conf->n_cuda_opengl_interoperability)
		_astro_warn("starpu_conf.cuda_opengl_interoperability: CUDA/OpenGL interoperability is not supported: the CUDA "
			    "devices are set up without it");
	conf->enable_map = _astro_conf_int_in("STARPU_ENABLE_MAP", NULL, conf->enable_map, 0, 1, 0);
	if (conf->enable_map)
		_astro_warn("STARPU_ENABLE_MAP (starpu_conf.enable_map): mapping memory between nodes is not supported: data is "
			    "copied between nodes, and starpu_map_enabled() returns 0");
	conf->data_locality_enforce = _astro_conf_int_in("STARPU_DATA_LOCALITY_ENFORCE", NULL, conf->data_locality_enforce, 0, 1, 0);
	if (conf->data_locality_enforce)
		_astro_warn("STARPU_DATA_LOCALITY_ENFORCE (starpu_conf.data_locality_enforce): not supported: the policy places "
			    "tasks as it does without it");
	conf->cuda_only_fast_alloc_other_memnodes = _astro_conf_int_in("STARPU_CUDA_ONLY_FAST_ALLOC_OTHER_MEMNODES", NULL,
								       conf->cuda_only_fast_alloc_other_memnodes, 0, 1, 0);
	if (conf->cuda_only_fast_alloc_other_memnodes)
		_astro_warn("STARPU_CUDA_ONLY_FAST_ALLOC_OTHER_MEMNODES (starpu_conf.cuda_only_fast_alloc_other_memnodes): not "
			    "supported: CUDA workers allocate on other nodes as the other workers do");
}

static int runtime_start(struct starpu_conf *user_conf)
{
	int ret;
	_astro_log_session_begin();
	if (user_conf) {
		if (user_conf->magic != STARPU_CONF_MAGIC) {
			_astro_error("starpu_init: the conf was not initialised: call starpu_conf_init() on it first");
			return -EINVAL;
		}
		_astro_rt.conf = *user_conf;
	} else {
		starpu_conf_init(&_astro_rt.conf);
	}
	_astro_verbose_level = astro_env_int("STARPU_PLUGIN_VERBOSE", 0, 1, 0, NULL) > 0;
	_astro_rt.nobind = astro_env_int("STARPU_WORKERS_NOBIND", 0, 1, 0, NULL) > 0;
	_astro_rt.codelet_profiling = astro_env_int("STARPU_CODELET_PROFILING", 0, 1, 1, NULL) != 0;
	_astro_rt.calibrate = _astro_conf_int_in("STARPU_CALIBRATE", NULL, CLAMP(_astro_rt.conf.calibrate, -1, 2), 0, 2, 0);
#ifdef STARPU_SIMGRID
	/* A simulation's workers are actors, not threads on this machine's cores; its tasks last what the
	 * models predict, which it must not record as new samples of the machine it simulates. */
	_astro_rt.nobind = true;
	_astro_rt.calibrate = 0;
#endif
	_astro_rt.start_time = starpu_timing_now();
	/* The count of submitted tasks is 0 here (shutdown waited for it) but for refused submissions
	 * backing out: its sums are not reset. Nothing is ready. */
	_astro_rt.nready_added = _astro_rt.nready_done = 0;
	_astro_rt.paused = 0;
	read_priorities();
	resolve_copy_switches(&_astro_rt.conf);
	say_unsupported_conf(&_astro_rt.conf);
	_astro_throttle_init();
	_astro_task_break_init();
	_astro_ready_soon_reset();
	/* Before anything fires a moment: profiling watches the workers from their start. */
	_astro_profiling_init();
	_ASTRO_OBSERVE(ASTRO_MOMENT_RUNTIME_INIT_BEGIN, .workerid = -1);

	topology_load();
	_astro_lru_init();
	_astro_tags_init();
	_astro_signals_init();
	_astro_knobs_init();
	_astro_counters_init();
	ret = _astro_plugins_load();
	if (ret)
		goto fail_plugins;
	_astro_prof_tool_load();
	ret = _astro_workers_start();
	if (ret)
		goto fail_workers;
	_astro_disk_swap_init();
	_astro_bus_init();
	_astro_transfers_start();
	_astro_models_init();
	_astro_bound_init();
	_astro_counters_start(_astro_rt.conf.start_perf_counter_collection);
	_astro_watchdog_start();
	return 0;

fail_workers:
	_astro_memory_nodes_shutdown();
	_astro_prof_tool_unload();
	_astro_plugins_unload();
fail_plugins:
	_astro_counters_shutdown();
	_astro_knobs_shutdown();
	_astro_signals_shutdown();
	_astro_tags_shutdown();
	topology_unload();
	return ret;
}

static int state_get(void)
{
	return __atomic_load_n(&_astro_rt.initialized, __ATOMIC_SEQ_CST);
}

/* Seq_cst: a submission reads it right after counting itself (task.c, submit_enter). */
static void state_set(enum _astro_state state)
{
	__atomic_store_n(&_astro_rt.initialized, state, __ATOMIC_SEQ_CST);
}

int starpu_init(struct starpu_conf *user_conf)
{
#ifdef STARPU_SIMGRID
	if (!_astro_sim_inside()) {
		_astro_error("starpu_init: this is a simulation build, and the caller is not part of the simulation: "
			     "include <starpu.h> in the file that defines main() (it then runs in the simulation), "
			     "or link the program with a native build of Astrolabe");
		return -ENODEV;
	}
#endif
	starpu_pthread_mutex_lock(&init_lock);
	/* Another thread starts or stops the runtime: wait for it to finish. */
	while (state_get() != _ASTRO_STOPPED && state_get() != _ASTRO_RUNNING)
		starpu_pthread_cond_wait(&init_cond, &init_lock);
	if (init_refcount > 0) {
		/* Nested init: reference-counted, the first configuration stays. */
		init_refcount++;
		starpu_pthread_mutex_unlock(&init_lock);
		return 0;
	}
	state_set(_ASTRO_STARTING);
	starpu_pthread_mutex_unlock(&init_lock);

	int ret = runtime_start(user_conf);
	if (ret)
		_astro_log_session_end();

	starpu_pthread_mutex_lock(&init_lock);
	if (ret == 0) {
		init_refcount = 1;
		state_set(_ASTRO_RUNNING);
	} else {
		state_set(_ASTRO_STOPPED);
	}
	starpu_pthread_cond_broadcast(&init_cond);
	starpu_pthread_mutex_unlock(&init_lock);
	if (ret == 0) {
		_astro_main_thread_bind();
		_ASTRO_OBSERVE(ASTRO_MOMENT_RUNTIME_INIT_END, .workerid = -1);
		if (_astro_rt.conf.start_on_pause)
			starpu_pause();
	}
	return ret;
}

int starpu_initialize(struct starpu_conf *user_conf, int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return starpu_init(user_conf);
}

void starpu_wait_initialized(void)
{
	starpu_pthread_mutex_lock(&init_lock);
	while (state_get() != _ASTRO_RUNNING)
		starpu_pthread_cond_wait(&init_cond, &init_lock);
	starpu_pthread_mutex_unlock(&init_lock);
}

/* The workers the runtime starts have all passed their start barrier when starpu_init() returns
 * (run/worker_loop.c): waiting for a starpu_init() under way is waiting for them. */
void starpu_worker_wait_for_initialisation(void)
{
	starpu_pthread_mutex_lock(&init_lock);
	if (state_get() == _ASTRO_STOPPED) {
		starpu_pthread_mutex_unlock(&init_lock);
		_astro_error("starpu_worker_wait_for_initialisation: StarPU is not initialised: call it after starpu_init()");
		return;
	}
	while (state_get() == _ASTRO_STARTING)
		starpu_pthread_cond_wait(&init_cond, &init_lock);
	starpu_pthread_mutex_unlock(&init_lock);
}

void starpu_shutdown(void)
{
	if (_astro_forbid_blocking("starpu_shutdown", "call it from the application's own code once its work is submitted; the call is ignored"))
		return;
	starpu_pthread_mutex_lock(&init_lock);
	if (init_refcount == 0) {
		starpu_pthread_mutex_unlock(&init_lock);
		_astro_error("starpu_shutdown called without a matching starpu_init: ignored");
		return;
	}
	if (--init_refcount > 0) {
		starpu_pthread_mutex_unlock(&init_lock);
		return;
	}
	/* From here on, application threads' submissions are refused; tasks and
	 * callbacks may still submit while we drain. */
	state_set(_ASTRO_DRAINING);
	starpu_pthread_mutex_unlock(&init_lock);

	if (_astro_rt.paused)
		starpu_resume();
	starpu_do_schedule();
	_astro_task_wait_for_n("starpu_shutdown", 0);
	/* Then nobody may submit: wait for what a worker accepted after the count first reached zero. */
	state_set(_ASTRO_STOPPING);
	if (_astro_nsubmitted() != 0)
		_astro_task_wait_for_n("starpu_shutdown", 0);
	_astro_watchdog_stop();
	_ASTRO_OBSERVE(ASTRO_MOMENT_RUNTIME_TERMINATE, .workerid = -1);
	_astro_bound_shutdown();
	_astro_models_shutdown();
	_astro_transfers_stop();
	_astro_workers_stop();
	_astro_prof_tool_unload();
	_astro_sched_deinit();
	_astro_combined_workers_reset();
	_astro_workers_free();
	_astro_data_leave_devices();
	if (_astro_disk_count)
		_astro_disks_shutdown();
	_astro_memory_nodes_shutdown();
	_astro_plugins_unload();
	_astro_counters_shutdown();
	_astro_knobs_shutdown();
	_astro_signals_shutdown();
	_astro_tags_shutdown();
	topology_unload();
	_astro_observe_reset();
	_astro_log_session_end();

	starpu_pthread_mutex_lock(&init_lock);
	state_set(_ASTRO_STOPPED);
	starpu_pthread_cond_broadcast(&init_cond);
	starpu_pthread_mutex_unlock(&init_lock);
}

void starpu_get_version(int *major, int *minor, int *release)
{
	*major = STARPU_MAJOR_VERSION;
	*minor = STARPU_MINOR_VERSION;
	*release = STARPU_RELEASE_VERSION;
}

void starpu_topology_print(FILE *output)
{
	fprintf(output, "machine: %u cores, %u processing units\n", _astro_rt.ncores, _astro_rt.npus);
	starpu_worker_display_all(output);
}

/* ------------------------------------------- the policies before starpu_init */

/* The policies are plugins registered at init. Before it, as StarPU gives its static list, the
 * policy plugins are loaded once, as init finds them, and unloaded again (the same steps as an
 * init that fails after loading them): their libraries stay mapped, so the list stays valid and
 * names the very policies init registers again (conf.sched_policy may be set to one of them). */
static struct starpu_sched_policy *policies_before_init[64];
static bool policies_listed;

struct starpu_sched_policy **starpu_sched_get_predefined_policies(void)
{
	static struct starpu_sched_policy *list[64];
	starpu_pthread_mutex_lock(&init_lock);
	/* Running, or being started or stopped (a plugin's or a policy's call): the registry. */
	if (state_get() != _ASTRO_STOPPED || init_refcount > 0) {
		_astro_policies_list(list, 64);
		starpu_pthread_mutex_unlock(&init_lock);
		return list;
	}
	if (!policies_listed) {
		_astro_verbose_level = astro_env_int("STARPU_PLUGIN_VERBOSE", 0, 1, 0, NULL) > 0;
		/* The registries a policy plugin's init declares its counters and knobs in. */
		_astro_knob_registry_open(NULL);
		_astro_counters_init();
		if (_astro_policy_plugins_load() == 0)
			_astro_policies_list(policies_before_init, 64);
		_astro_plugins_unload();
		_astro_counters_shutdown();
		_astro_knob_registry_close();
		policies_listed = true;
	}
	starpu_pthread_mutex_unlock(&init_lock);
	return policies_before_init;
}
