/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting and stopping StarPU-MPI, at the top of mpi/: starpu_mpi_init*()
 * sets the shared state (state.c) and starts the other files' parts (clock
 * report, data, statistics, the progression thread); starpu_mpi_shutdown()
 * stops them in the reverse order. Nothing in mpi/ calls this file.
 */
#include "mpi_private.h"

#include <errno.h>

static starpu_pthread_mutex_t init_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static bool initialized_mpi;	/* starpu_mpi_init*() called MPI_Init_thread: shutdown finalises */
static bool initialized_starpu;	/* starpu_mpi_init_conf() started the runtime: shutdown stops it */

struct init_call
{
	int *argc;
	char ***argv;
	int initialize_mpi;
	MPI_Comm comm;
	int ret;
};

/* starpu_mpi_init_comm()'s work, where MPI calls may be made (the rank's actor under SMPI). */
static void initialize(void *arg)
{
	struct init_call *c = arg;
	int *argc = c->argc;
	char ***argv = c->argv;
	int initialize_mpi = c->initialize_mpi;
	MPI_Comm comm = c->comm;
	int ret = -EINVAL, provided = MPI_THREAD_SINGLE, initialized = 0, finalized = 0;

	if (_astro_mpi_is_running()) {
		_astro_mpi_error("starpu_mpi_init: StarPU-MPI is already initialised: call starpu_mpi_shutdown() first");
		ret = -EBUSY;
		goto out;
	}
	if (!starpu_is_initialized()) {
		_astro_mpi_error("starpu_mpi_init: the runtime is not started: call starpu_init() first, or use starpu_mpi_init_conf()");
		goto out;
	}
	MPI_Initialized(&initialized);
	MPI_Finalized(&finalized);
	if (finalized) {
		_astro_mpi_error("starpu_mpi_init: MPI was finalised already: MPI cannot start twice in a process");
		goto out;
	}
	if (!initialized && !initialize_mpi) {
		_astro_mpi_error("starpu_mpi_init: MPI is not initialised: pass initialize_mpi = 1, or call MPI_Init_thread() first");
		goto out;
	}
	if (!initialized) {
		if (comm != MPI_COMM_WORLD) {
			_astro_mpi_error("starpu_mpi_init: asked to initialise MPI with a communicator other than MPI_COMM_WORLD, which cannot exist before: initialise MPI first");
			goto out;
		}
		if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
			_astro_mpi_error("starpu_mpi_init: MPI_Init_thread failed: is the program run by mpirun?");
			ret = -EIO;
			goto out;
		}
		initialized_mpi = true;
	} else {
		MPI_Query_thread(&provided);
	}
	_astro_mpi_use_thread_level(provided);
	/* Errors come back as codes, which StarPU-MPI reports, instead of aborting the job. */
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	int *tag_ub = NULL, flag = 0;
	if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag) == MPI_SUCCESS && flag && tag_ub)
		_astro_mpi_tag_ub = *tag_ub;
	_astro_mpi_communication_tag_check();
	int rank, size;
	ret = _astro_mpi_comm_info(comm, &rank, &size, "starpu_mpi_init");
	if (ret == 0) {
		/* As StarPU: the rank names this process's trace (prof_file_<user>_<rank>), and its clock is set against rank 0's. */
		int world_rank = 0;
		MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
		starpu_profiling_set_id(world_rank);
		_astro_mpi_clock_report();
		ret = _astro_mpi_data_init();
	}
	if (ret == 0)
		_astro_mpi_stats_init();
	if (ret == 0) {
		ret = _astro_mpi_progress_start();
		if (ret)
			_astro_mpi_data_shutdown();
	}
	if (ret) {
		if (initialized_mpi)
			MPI_Finalize();
		initialized_mpi = false;
		goto out;
	}
	_astro_mpi_set_running(true);
out:
	c->ret = ret;
}

int starpu_mpi_init_comm(int *argc, char ***argv, int initialize_mpi, MPI_Comm comm)
{
	struct init_call c = { argc, argv, initialize_mpi, comm, -EINVAL };
	starpu_pthread_mutex_lock(&init_lock);
	_astro_mpi_on_rank(initialize, &c);
	starpu_pthread_mutex_unlock(&init_lock);
	return c.ret;
}

int starpu_mpi_init(int *argc, char ***argv, int initialize_mpi)
{
	return starpu_mpi_init_comm(argc, argv, initialize_mpi, MPI_COMM_WORLD);
}

/* The deprecated entry points of StarPU-MPI 1.0: starpu_mpi_init() with MPI started by the
 * program, or by StarPU-MPI with the rank and size given back. */
int starpu_mpi_initialize(void)
{
	return starpu_mpi_init(NULL, NULL, 0);
}

int starpu_mpi_initialize_extended(int *rank, int *world_size)
{
	int ret = starpu_mpi_init(NULL, NULL, 1);
	if (ret == 0 && rank)
		ret = starpu_mpi_comm_rank(MPI_COMM_WORLD, rank);
	if (ret == 0 && world_size)
		ret = starpu_mpi_comm_size(MPI_COMM_WORLD, world_size);
	return ret;
}

int starpu_mpi_init_conf(int *argc, char ***argv, int initialize_mpi, MPI_Comm comm, struct starpu_conf *conf)
{
	if (conf)
		conf->will_use_mpi = 1;
	int ret = starpu_init(conf);
	if (ret)
		return ret;
	ret = starpu_mpi_init_comm(argc, argv, initialize_mpi, comm);
	if (ret) {
		starpu_shutdown();
		return ret;
	}
	initialized_starpu = true;
	return 0;
}

static void finalize(void *unused)
{
	(void)unused;
	MPI_Finalize();
}

/* starpu_mpi_shutdown_comm(): comm is where the ranks meet before StarPU-MPI stops (fn names the caller). */
static int shutdown_comm(MPI_Comm comm, const char *fn)
{
	if (!_astro_mpi_running(fn))
		return -EINVAL;
	/* Nothing may be in flight when MPI goes: every rank finishes, then all meet. */
	int ret = starpu_mpi_wait_for_all(comm);
	if (ret == -EINVAL && comm != MPI_COMM_WORLD)
		return ret;	/* a communicator MPI does not know: said, and StarPU-MPI keeps running */
	starpu_pthread_mutex_lock(&init_lock);
	_astro_mpi_set_running(false);
	_astro_mpi_progress_stop();
	_astro_mpi_data_shutdown();
	_astro_mpi_datatype_shutdown();
	_astro_mpi_stats_shutdown(starpu_mpi_world_rank());
	_astro_mpi_comms_forget();
	_astro_mpi_set_thread_cpuid(-1);
	if (initialized_mpi)
		_astro_mpi_on_rank(finalize, NULL);
	initialized_mpi = false;
	bool stop_runtime = initialized_starpu;
	initialized_starpu = false;
	starpu_pthread_mutex_unlock(&init_lock);
	if (stop_runtime)
		starpu_shutdown();
	return ret;
}

int starpu_mpi_shutdown(void)
{
	return shutdown_comm(MPI_COMM_WORLD, "starpu_mpi_shutdown");
}

int starpu_mpi_shutdown_comm(MPI_Comm comm)
{
	return shutdown_comm(comm, "starpu_mpi_shutdown_comm");
}
