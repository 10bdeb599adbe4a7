/*
 * The load balancer (starpu_mpi_lb.h): chooses the policy by name
 * (STARPU_MPI_LB overrides the program's), makes sure every rank agrees
 * before any starts, and hands the policy each task starpu_mpi_task_insert()
 * inserts, on every rank. Its messages travel on a communicator of its own,
 * so they never meet the application's data tags. The policies live in
 * lb_*.c.
 */
#include "lb_policy.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

static const struct _astro_mpi_lb_policy *const policies[] = { &_astro_mpi_lb_heat, NULL };

/* The running policy (read at each insertion: one load when none runs). */
static const struct _astro_mpi_lb_policy *active;
static MPI_Comm lb_comm = MPI_COMM_NULL;

int _astro_mpi_lb_wait(MPI_Request *reqs, int n, const char *fn)
{
	int err = MPI_SUCCESS;
	if (_astro_mpi_thread_multiple())
		err = MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
	else
		/* Serialised MPI: never block under the lock the progression thread needs. */
		for (int done = 0; err == MPI_SUCCESS && !done; ) {
			_astro_mpi_lock();
			err = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
			_astro_mpi_unlock();
			if (!done)
				sched_yield();
		}
	if (err != MPI_SUCCESS) {
		_astro_mpi_error("%s: an MPI exchange of the load balancer failed (error %d): check the MPI library and the network", fn, err);
		return -EIO;
	}
	return 0;
}

int _astro_mpi_lb_agree_min(MPI_Comm comm, int v, const char *fn)
{
	int all = v;
	MPI_Request req;
	_astro_mpi_lock();
	int err = MPI_Iallreduce(&v, &all, 1, MPI_INT, MPI_MIN, comm, &req);
	_astro_mpi_unlock();
	if (err != MPI_SUCCESS || _astro_mpi_lb_wait(&req, 1, fn))
		return -EIO;
	return all;
}

static const struct _astro_mpi_lb_policy *policy_named(const char *name)
{
	for (const struct _astro_mpi_lb_policy *const *p = policies; *p; p++)
		if (strcmp((*p)->name, name) == 0)
			return *p;
	return NULL;
}

static void policy_names(char *buf, size_t len)
{
	buf[0] = 0;
	for (const struct _astro_mpi_lb_policy *const *p = policies; *p; p++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", p == policies ? "" : ", ", (*p)->name);
}

int starpu_mpi_lb_init(const char *lb_policy_name, struct starpu_mpi_lb_conf *conf)
{
	static const char fn[] = "starpu_mpi_lb_init";
	if (!_astro_mpi_running(fn))
		return -EINVAL;
	if (__atomic_load_n(&active, __ATOMIC_ACQUIRE)) {
		_astro_mpi_error("%s: the %s load balancer already runs: call starpu_mpi_lb_shutdown() first", fn, active->name);
		return -EBUSY;
	}
	char names[128];
	policy_names(names, sizeof(names));
	const char *env = getenv("STARPU_MPI_LB");
	const char *name = env && *env ? env : lb_policy_name;
	if (name && strcmp(name, "help") == 0) {
		_astro_mpi_error("STARPU_MPI_LB=help: the load balancing policies are: %s; balancing stays off for this run", names);
		return 0;
	}
	const struct _astro_mpi_lb_policy *policy = name ? policy_named(name) : NULL;
	int ret = policy ? 0 : name ? -ENOENT : -EINVAL;

	/* A rank that starts alone would wait for the others at the first phase: all or none. */
	MPI_Request req;
	_astro_mpi_lock();
	int err = MPI_Comm_idup(MPI_COMM_WORLD, &lb_comm, &req);
	_astro_mpi_unlock();
	if (err != MPI_SUCCESS || _astro_mpi_lb_wait(&req, 1, fn)) {
		_astro_mpi_error("%s: MPI could not give the load balancer its communicator (error %d); balancing stays off", fn, err);
		return -EIO;
	}
	int agreed = _astro_mpi_lb_agree_min(lb_comm, ret, fn);
	if (ret == -ENOENT)
		_astro_mpi_error("%s: no load balancing policy is named '%s'%s: the policies are: %s; balancing stays off",
				 fn, name, env && *env ? " (by STARPU_MPI_LB)" : "", names);
	else if (ret == -EINVAL)
		_astro_mpi_error("%s: no policy named: pass one (%s) or set STARPU_MPI_LB; balancing stays off", fn, names);
	else if (agreed < 0)
		_astro_mpi_error("%s: another rank could not start the '%s' policy (see its message); balancing stays off on every rank", fn, name);
	if (agreed == 0)
		agreed = policy->init(conf, lb_comm);
	if (agreed < 0) {
		_astro_mpi_lock();
		MPI_Comm_free(&lb_comm);
		_astro_mpi_unlock();
		return ret ? ret : agreed;
	}
	__atomic_store_n(&active, policy, __ATOMIC_RELEASE);
	return 0;
}

void _astro_mpi_lb_inserted(starpu_tag_t tag, bool local)
{
	const struct _astro_mpi_lb_policy *policy = __atomic_load_n(&active, __ATOMIC_ACQUIRE);
	if (policy)
		policy->inserted(tag, local);
}

int starpu_mpi_lb_shutdown(void)
{
	const struct _astro_mpi_lb_policy *policy = __atomic_exchange_n(&active, NULL, __ATOMIC_ACQ_REL);
	if (!policy)
		return 0;
	policy->shutdown();
	_astro_mpi_lock();
	MPI_Comm_free(&lb_comm);
	_astro_mpi_unlock();
	return 0;
}
