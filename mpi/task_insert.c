/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_mpi_task_insert() and its halves, with StarPU's owner-computes
 * rule.
 *
 * Every rank calls these with the same arguments and takes the same
 * decisions from the same ownership tables: which rank runs the task, who
 * sends what to whom, what the cache holds. Nothing is exchanged to agree.
 *
 * As in StarPU-MPI, a rank may pass NULL for a data it does not hold: it
 * takes no part in that data's moves. When the task writes such a data and
 * no STARPU_EXECUTE_ON_* names the rank, this rank cannot tell who runs the
 * task, and needs not: it is not the writer's owner, so it has nothing to do
 * as long as it owns nothing the task reads (StarPU-MPI returns -EINVAL
 * there, unsaid; we return 0, the rank having done its part). The rank that
 * runs the task needs every data.
 */
#include "mpi_private.h"

#include <astrolabe/task_build.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

struct access
{
	starpu_data_handle_t handle;
	enum starpu_data_access_mode mode;
	enum starpu_data_access_mode own_mode;	/* this buffer's mode (mode: all of the handle's, on its first access) */
	int rank;
	starpu_mpi_tag_t tag;
	bool first;	/* the handle's first access in the task (the one that moves it) */
};

#define REDUX_MODES (STARPU_REDUX | STARPU_MPI_REDUX)
#define WRITE_MODES (STARPU_W | REDUX_MODES)

struct plan
{
	struct starpu_task *task;	/* built here; NULL once submitted or given away */
	bool borrowed;			/* task is the caller's (the exchange functions): never destroyed here */
	int me;
	int xrank;			/* the rank that runs the task; every rank when per_node; -1: not known here, not this one */
	bool per_node;
	unsigned n;
	struct access *acc;
};

static void plan_free(struct plan *p)
{
	if (p->task && !p->borrowed) {
		/* Never submitted: the arguments the application passed stay its own. */
		p->task->callback_arg_free = 0;
		p->task->prologue_callback_arg_free = 0;
		p->task->prologue_callback_pop_arg_free = 0;
		p->task->destroy = 0;
		starpu_task_destroy(p->task);
		p->task = NULL;
	}
	free(p->acc);
	p->acc = NULL;
}

static bool executes(const struct plan *p)
{
	return p->per_node || p->xrank == p->me;
}

/* The node-selection policy's choice, given the task's data (each once, with all its modes). */
static int select_node(const struct plan *p, int policy, int size, const char *fn)
{
	struct starpu_data_descr *descr = malloc((p->n ? p->n : 1) * sizeof(*descr));
	if (!descr) {
		_astro_mpi_error("%s: out of memory", fn);
		return -ENOMEM;
	}
	int nb = 0;
	for (unsigned i = 0; i < p->n; i++)
		if (p->acc[i].first)
			descr[nb++] = (struct starpu_data_descr){ .handle = p->acc[i].handle, .mode = p->acc[i].mode };
	int rank = _astro_mpi_select_node(policy, p->me, size, descr, nb, fn);
	free(descr);
	return rank;
}

static const char *codelet_name(const struct starpu_codelet *cl)
{
	return cl && cl->name ? cl->name : "(unnamed)";
}

/* The rank that runs the task needs every data: none may be NULL there. */
static int plan_check_held(struct plan *p, struct starpu_codelet *cl, const char *fn)
{
	if (!executes(p))
		return 0;
	for (unsigned i = 0; i < p->n; i++)
		if (!p->acc[i].handle) {
			_astro_mpi_error("%s: buffer %u of codelet '%s' is a NULL handle on rank %d, which runs the task: "
					 "register the data on this rank too (home node -1 when it holds no value) with starpu_mpi_data_register()",
					 fn, i, codelet_name(cl), p->me);
			plan_free(p);
			return -EINVAL;
		}
	return 0;
}

/* This rank passed NULL for buffer missing, which the task writes: it does
 * not own it, so it does not run the task and has nothing to do, unless it
 * owns data the task reads or takes part in a reduction (it would have to
 * know who runs the task). */
static int plan_not_involved(struct plan *p, unsigned missing, struct starpu_codelet *cl, const char *fn)
{
	for (unsigned i = 0; i < p->n; i++) {
		const struct access *a = &p->acc[i];
		if (a->handle && (a->rank == p->me || (a->mode & REDUX_MODES))) {
			_astro_mpi_error("%s: buffer %u of codelet '%s' is written by the task but is a NULL handle on rank %d, which %s buffer %u: "
					 "this rank cannot tell which rank runs the task; register the written data here too, or name the rank with STARPU_EXECUTE_ON_NODE",
					 fn, missing, codelet_name(cl), p->me, a->rank == p->me ? "owns" : "reduces into", i);
			plan_free(p);
			return -EINVAL;
		}
	}
	p->xrank = -1;
	return 0;
}

/* The accesses of p->task (its first p->n buffers): their handles, modes
 * (as the task gives them), owners and tags; each handle's first access
 * holds all its modes. */
static int plan_accesses(struct plan *p, MPI_Comm comm, const struct starpu_data_descr *descrs, const char *fn)
{
	p->acc = calloc(p->n ? p->n : 1, sizeof(*p->acc));
	if (!p->acc) {
		_astro_mpi_error("%s: out of memory", fn);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < p->n; i++) {
		struct access *a = &p->acc[i];
		if (descrs) {
			a->handle = descrs[i].handle;
			a->mode = descrs[i].mode;
		} else {
			a->handle = STARPU_TASK_GET_HANDLE(p->task, i);
			/* The mode the argument list gave (the codelet's own may differ: it is what runs locally). */
			enum starpu_data_access_mode *given = p->task->dyn_modes ? &p->task->dyn_modes[i] : &p->task->modes[i];
			a->mode = *given ? *given : STARPU_TASK_GET_MODE(p->task, i);
			/* Within a rank, an STARPU_MPI_REDUX contribution accumulates into the rank's one copy. */
			if (*given & STARPU_MPI_REDUX)
				*given = STARPU_RW | STARPU_COMMUTE;
		}
		a->own_mode = a->mode;
		if (!a->handle) {
			/* Not held here: no part in its moves (first stays false). */
			a->rank = -1;
			continue;
		}
		a->first = true;
		for (unsigned j = 0; j < i; j++)
			if (p->acc[j].handle == a->handle) {
				a->first = false;
				p->acc[j].mode |= a->mode;
			}
		if (!_astro_mpi_data_owner_untagged(a->handle, comm, &a->rank, &a->tag, fn))
			return -EINVAL;
	}
	return 0;
}

/* The first buffer that is a NULL handle here (written ones only with writes), or -1. */
static int first_missing(const struct plan *p, bool writes)
{
	for (unsigned i = 0; i < p->n; i++)
		if (!p->acc[i].handle && (!writes || (p->acc[i].mode & WRITE_MODES)))
			return (int)i;
	return -1;
}

/* Who runs the task: the rank named, the owner of the data named, else the owner of what it writes. */
static int plan_choose(struct plan *p, MPI_Comm comm, struct starpu_codelet *cl, const struct astro_mpi_task_args *args, int size, const char *fn)
{
	if (args->execute_on_node != -1) {
		if (args->execute_on_node < 0 || args->execute_on_node >= size) {
			_astro_mpi_error("%s: STARPU_EXECUTE_ON_NODE %d is not a rank of the communicator (0 to %d)", fn, args->execute_on_node, size - 1);
			plan_free(p);
			return -EINVAL;
		}
		p->xrank = args->execute_on_node;
		return plan_check_held(p, cl, fn);
	}
	if (args->execute_on_data) {
		starpu_mpi_tag_t tag;
		if (!_astro_mpi_data_owner(args->execute_on_data, comm, &p->xrank, &tag, fn)) {
			plan_free(p);
			return -EINVAL;
		}
		p->per_node = p->xrank == STARPU_MPI_PER_NODE;
		return plan_check_held(p, cl, fn);
	}
	int missing_write = first_missing(p, true), missing = first_missing(p, false);
	if (missing_write >= 0)
		return plan_not_involved(p, (unsigned)missing_write, cl, fn);
	int writer = -1;
	bool disagree = false;
	for (unsigned i = 0; i < p->n; i++) {
		const struct access *a = &p->acc[i];
		if (!(a->mode & WRITE_MODES))
			continue;
		if (a->rank == STARPU_MPI_PER_NODE)
			p->per_node = true;
		else if (writer == -1)
			writer = a->rank;
		else if (writer != a->rank)
			disagree = true;
	}
	if (writer != -1 && !disagree) {
		p->xrank = writer;
		return plan_check_held(p, cl, fn);
	}
	if (missing >= 0 && !p->per_node) {
		/* The policy would see other data here than on the ranks that hold them: they could disagree. */
		_astro_mpi_error("%s: buffer %u of codelet '%s' is a NULL handle on rank %d, but the rank that runs the task is left to the node-selection policy, "
				 "which must see the same data on every rank: register the data here too, or name the rank with STARPU_EXECUTE_ON_NODE",
				 fn, (unsigned)missing, codelet_name(cl), p->me);
		plan_free(p);
		return -EINVAL;
	}
	p->xrank = select_node(p, args->node_selection_policy, size, fn);
	if (p->xrank < 0) {
		int ret = p->xrank;
		plan_free(p);
		return ret;
	}
	return plan_check_held(p, cl, fn);
}

/* The plan of task (built by the caller, or here): its accesses, then who runs it. */
static int plan_of_task(struct plan *p, MPI_Comm comm, const struct astro_mpi_task_args *args, const char *fn)
{
	int size;
	int ret = _astro_mpi_comm_info(comm, &p->me, &size, fn);
	if (ret == 0) {
		/* A task without codelet (a callback, say) takes no data. */
		p->n = p->task->cl ? STARPU_TASK_GET_NBUFFERS(p->task) : 0;
		ret = plan_accesses(p, comm, NULL, fn);
	}
	if (ret) {
		plan_free(p);
		return ret;
	}
	return plan_choose(p, comm, p->task->cl, args, size, fn);
}

static int plan_make(struct plan *p, MPI_Comm comm, struct starpu_codelet *cl, const char *fn, va_list ap)
{
	struct astro_mpi_task_args args;

	*p = (struct plan){ 0 };
	if (!_astro_mpi_running(fn))
		return -EINVAL;
	p->task = astro_task_build_v(fn, cl, &args, ap);
	if (!p->task)
		return -EINVAL;
	return plan_of_task(p, comm, &args, fn);
}

/* A data without tag stays where it is (StarPU's temporary data): moving it is an error. */
static bool can_travel(const struct access *a, int to, const char *fn)
{
	if (a->tag != -1)
		return true;
	_astro_mpi_error("%s: data %p (owned by rank %d) must travel to rank %d but has no tag: give it one with starpu_mpi_data_register(handle, tag, rank)",
			 fn, (void *)a->handle, a->rank, to);
	return false;
}

/* Before the task: a reduction in progress is recorded, or completed if the
 * task accesses its data otherwise; its readers' data travel from their
 * owners to the rank that runs it. */
static int plan_before(struct plan *p, MPI_Comm comm, const char *fn)
{
	for (unsigned i = 0; i < p->n; i++) {
		const struct access *a = &p->acc[i];
		int ret = 0;
		if (!a->first)
			continue;
		if (a->mode & REDUX_MODES)
			ret = p->per_node ? 0 : _astro_mpi_redux_access(a->handle, a->mode, a->rank, p->xrank, p->me, fn);
		else if (_astro_mpi_redux_pending(a->handle))
			ret = starpu_mpi_redux_data(comm, a->handle);
		if (ret)
			return ret;
	}
	if (p->per_node || p->xrank < 0)
		return 0;
	for (unsigned i = 0; i < p->n; i++) {
		const struct access *a = &p->acc[i];
		int ret = 0;
		if (!a->first || !(a->mode & STARPU_R) || a->rank == STARPU_MPI_PER_NODE || a->rank == p->xrank)
			continue;
		if ((p->me == p->xrank || p->me == a->rank) && !can_travel(a, p->xrank, fn))
			return -EINVAL;
		if (p->me == p->xrank && !_astro_mpi_cache_received(a->handle))
			ret = _astro_mpi_post(_ASTRO_MPI_RECV, a->handle, a->rank, a->tag, comm, false, true, 1, NULL, NULL, NULL, fn);
		else if (p->me == a->rank && !_astro_mpi_cache_sent(a->handle, p->xrank))
			ret = _astro_mpi_post(_ASTRO_MPI_SEND, a->handle, p->xrank, a->tag, comm, (a->mode & STARPU_SSEND) != 0, true, 1, NULL, NULL, NULL, fn);
		if (ret)
			return ret;
	}
	return 0;
}

/* After the task: its written data go back to their owners (a contribution
 * to a reduction waits for starpu_mpi_redux_data()); the copies elsewhere are stale. */
static int plan_after(struct plan *p, MPI_Comm comm, const char *fn)
{
	int ret = 0;
	for (unsigned i = 0; i < p->n; i++) {
		const struct access *a = &p->acc[i];
		if (!a->first || !(a->mode & WRITE_MODES) || a->rank == STARPU_MPI_PER_NODE)
			continue;
		if (!p->per_node && p->xrank >= 0 && a->rank != p->xrank && !(a->mode & REDUX_MODES)) {
			int r = 0;
			if ((p->me == p->xrank || p->me == a->rank) && !can_travel(a, a->rank, fn))
				r = -EINVAL;
			else if (p->me == p->xrank)
				r = _astro_mpi_post(_ASTRO_MPI_SEND, a->handle, a->rank, a->tag, comm, (a->mode & STARPU_SSEND) != 0, true, 1, NULL, NULL, NULL, fn);
			else if (p->me == a->rank)
				r = _astro_mpi_post(_ASTRO_MPI_RECV, a->handle, p->xrank, a->tag, comm, false, true, 1, NULL, NULL, NULL, fn);
			if (r && !ret)
				ret = r;
		}
		_astro_mpi_cache_written(a->handle);
	}
	return ret;
}

/* starpu_mpi_pre_submit_hook_register(): called with each task starpu_mpi_task_insert() submits on this rank. */
static void (*pre_submit_hook)(struct starpu_task *task);

int starpu_mpi_pre_submit_hook_register(void (*f)(struct starpu_task *))
{
	if (!f) {
		_astro_mpi_error("starpu_mpi_pre_submit_hook_register: NULL function: use starpu_mpi_pre_submit_hook_unregister() to remove the hook");
		return -EINVAL;
	}
	if (__atomic_exchange_n(&pre_submit_hook, f, __ATOMIC_ACQ_REL))
		_astro_mpi_error("starpu_mpi_pre_submit_hook_register: a hook was registered already: it is replaced");
	return 0;
}

int starpu_mpi_pre_submit_hook_unregister(void)
{
	__atomic_store_n(&pre_submit_hook, NULL, __ATOMIC_RELEASE);
	return 0;
}

static int task_insert_v(MPI_Comm comm, struct starpu_codelet *codelet, const char *fn, va_list ap)
{
	struct plan p;
	int ret = plan_make(&p, comm, codelet, fn, ap);
	if (ret)
		return ret;
	starpu_tag_t number = p.task->tag_id;	/* the load balancer's phases (lb.c) */
	bool local = executes(&p);
	ret = plan_before(&p, comm, fn);
	if (ret == 0 && local) {
		struct starpu_task *task = p.task;
		p.task = NULL;
		void (*hook)(struct starpu_task *) = __atomic_load_n(&pre_submit_hook, __ATOMIC_ACQUIRE);
		if (hook)
			hook(task);
		ret = starpu_task_submit(task);
		if (ret) {
			p.task = task;
			plan_free(&p);
			return ret;
		}
	}
	if (ret == 0)
		ret = plan_after(&p, comm, fn);
	plan_free(&p);
	if (ret == 0)
		_astro_mpi_lb_inserted(number, local);
	return ret;
}

int starpu_mpi_task_insert(MPI_Comm comm, struct starpu_codelet *codelet, ...)
{
	va_list ap;
	va_start(ap, codelet);
	int ret = task_insert_v(comm, codelet, "starpu_mpi_task_insert", ap);
	va_end(ap);
	return ret;
}

int starpu_mpi_insert_task(MPI_Comm comm, struct starpu_codelet *codelet, ...)
{
	va_list ap;
	va_start(ap, codelet);
	int ret = task_insert_v(comm, codelet, "starpu_mpi_insert_task", ap);
	va_end(ap);
	return ret;
}

struct starpu_task *starpu_mpi_task_build(MPI_Comm comm, struct starpu_codelet *codelet, ...)
{
	struct plan p;
	struct starpu_task *task = NULL;
	va_list ap;
	va_start(ap, codelet);
	int ret = plan_make(&p, comm, codelet, "starpu_mpi_task_build", ap);
	va_end(ap);
	if (ret)
		return NULL;
	if (plan_before(&p, comm, "starpu_mpi_task_build") == 0 && executes(&p)) {
		task = p.task;
		p.task = NULL;
	}
	plan_free(&p);
	return task;
}

int starpu_mpi_task_post_build(MPI_Comm comm, struct starpu_codelet *codelet, ...)
{
	struct plan p;
	va_list ap;
	va_start(ap, codelet);
	int ret = plan_make(&p, comm, codelet, "starpu_mpi_task_post_build", ap);
	va_end(ap);
	if (ret)
		return ret;
	ret = plan_after(&p, comm, "starpu_mpi_task_post_build");
	plan_free(&p);
	return ret;
}

/* -------------------------------------------------- the pieces, for programs */

/* starpu_mpi_task_exchange_data_before_execution(): the plan of a task the
 * program built (no STARPU_EXECUTE_ON_*: the owner of what it writes, else
 * the current policy), the data moved before it, the plan handed back in
 * descrs and params for the after half. */
int starpu_mpi_task_exchange_data_before_execution(MPI_Comm comm, struct starpu_task *task, struct starpu_data_descr *descrs,
						   struct starpu_mpi_task_exchange_params *params)
{
	static const char fn[] = "starpu_mpi_task_exchange_data_before_execution";
	const struct astro_mpi_task_args args = { .execute_on_node = -1, .execute_on_data = NULL, .node_selection_policy = -1 };
	struct plan p = { .task = task, .borrowed = true };

	if (!_astro_mpi_running(fn))
		return -EINVAL;
	if (!task || !params) {
		_astro_mpi_error("%s: NULL %s: pass the task the program built and where to write the exchange parameters", fn, task ? "params" : "task");
		return -EINVAL;
	}
	if (task->cl && STARPU_TASK_GET_NBUFFERS(task) > 0 && !descrs) {
		_astro_mpi_error("%s: NULL descrs: pass an array of %d struct starpu_data_descr (one per buffer of the task)", fn, STARPU_TASK_GET_NBUFFERS(task));
		return -EINVAL;
	}
	int ret = plan_of_task(&p, comm, &args, fn);
	if (ret)
		return ret;
	ret = plan_before(&p, comm, fn);
	for (unsigned i = 0; i < p.n; i++)
		descrs[i] = (struct starpu_data_descr){ .handle = p.acc[i].handle, .mode = p.acc[i].own_mode };
	*params = (struct starpu_mpi_task_exchange_params){
		.do_execute = executes(&p),
		.xrank = p.per_node ? STARPU_MPI_PER_NODE : p.xrank,
		.priority = task->priority,
	};
	plan_free(&p);
	return ret;
}

/* The other half: the plan again from descrs and params, and the written data sent back to their owners. */
int starpu_mpi_task_exchange_data_after_execution(MPI_Comm comm, struct starpu_data_descr *descrs, unsigned nb_data,
						  struct starpu_mpi_task_exchange_params params)
{
	static const char fn[] = "starpu_mpi_task_exchange_data_after_execution";
	struct plan p = { .n = nb_data, .xrank = params.xrank, .per_node = params.xrank == STARPU_MPI_PER_NODE };
	int size;

	if (!_astro_mpi_running(fn))
		return -EINVAL;
	if (nb_data > 0 && !descrs) {
		_astro_mpi_error("%s: NULL descrs with %u data: pass the array starpu_mpi_task_exchange_data_before_execution() filled", fn, nb_data);
		return -EINVAL;
	}
	int ret = _astro_mpi_comm_info(comm, &p.me, &size, fn);
	if (ret)
		return ret;
	if (!p.per_node && (params.xrank < -1 || params.xrank >= size)) {
		_astro_mpi_error("%s: params.xrank %d is not a rank of the communicator (0 to %d, STARPU_MPI_PER_NODE, or -1): "
				 "pass the params starpu_mpi_task_exchange_data_before_execution() filled", fn, params.xrank, size - 1);
		return -EINVAL;
	}
	if ((params.do_execute != 0) != executes(&p)) {
		_astro_mpi_error("%s: params.do_execute %d disagrees with params.xrank %d on rank %d: "
				 "pass the params starpu_mpi_task_exchange_data_before_execution() filled", fn, params.do_execute, params.xrank, p.me);
		return -EINVAL;
	}
	ret = plan_accesses(&p, comm, descrs, fn);
	if (ret == 0)
		ret = plan_after(&p, comm, fn);
	plan_free(&p);
	return ret;
}
