/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The load balancer (starpu_mpi_lb.h): chooses the policy by name
 * (STARPU_MPI_LB overrides the program's), makes sure every rank agrees
 * before any starts, and hands the policy each task starpu_mpi_task_insert()
 * inserts, on every rank. Its messages travel on a communicator of its own,
 * so they never meet the application's data tags, and are made by the
 * progression thread like every other MPI call. The policies live in
 * lb_*.c.
 */
#include "lb_policy.h"

#include <errno.h>
#include <string.h>

static const struct _astro_mpi_lb_policy *const policies[] = { &_astro_mpi_lb_heat, NULL };

/* The running policy (read at each insertion: one load when none runs). */
static const struct _astro_mpi_lb_policy *active;
static MPI_Comm lb_comm = MPI_COMM_NULL;

int _astro_mpi_lb_run(const struct _astro_mpi_lb_call *calls, int n, const char *fn)
{
	starpu_mpi_req reqs[n > 0 ? n : 1];
	int posted = 0, ret = 0;
	while (posted < n && ret == 0)
		if ((ret = _astro_mpi_call(calls[posted].start, calls[posted].arg, MPI_COMM_WORLD, &reqs[posted])) == 0)
			posted++;
	for (int i = 0; i < posted; i++) {
		int r = starpu_mpi_wait(&reqs[i], MPI_STATUS_IGNORE);
		ret = ret ? ret : r;
	}
	if (ret) {
		_astro_mpi_error("%s: an MPI exchange of the load balancer failed (%s): check the MPI library and the network", fn, strerror(-ret));
		return -EIO;
	}
	return 0;
}

struct agree
{
	int v, all;
	MPI_Comm comm;
};

static int agree_start(void *arg, MPI_Request *req)
{
	struct agree *a = arg;
	return MPI_Iallreduce(&a->v, &a->all, 1, MPI_INT, MPI_MIN, a->comm, req);
}

int _astro_mpi_lb_agree_min(MPI_Comm comm, int v, const char *fn)
{
	struct agree a = { v, v, comm };
	struct _astro_mpi_lb_call call = { agree_start, &a };
	return _astro_mpi_lb_run(&call, 1, fn) ? -EIO : a.all;
}

/* The balancer's communicator: made once per process, at the first starpu_mpi_lb_init(). */
static int dup_start(void *arg, MPI_Request *req)
{
	return MPI_Comm_idup(MPI_COMM_WORLD, arg, req);
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
	if (lb_comm == MPI_COMM_NULL) {
		struct _astro_mpi_lb_call call = { dup_start, &lb_comm };
		if (_astro_mpi_lb_run(&call, 1, fn)) {
			lb_comm = MPI_COMM_NULL;
			return -EIO;
		}
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
	if (agreed < 0)
		return ret ? ret : agreed;
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
	return 0;
}
